//! The block layout on a real PostgreSQL (`sluice_store::conformance::blocks`): merges,
//! retention's rewrites, and the upgrade of a database that kept its logs as rows.

use async_trait::async_trait;
use sluice_model::{Log, WorkspaceId};
use sluice_store::Clock;
use sluice_store::conformance::blocks::BlockFixture;
use sluice_store_pg::testing::{TestDatabase, block_sizes, rows_database, stored_logs};
use sluice_store_pg::{PgOptions, PgStore};

#[async_trait]
impl BlockFixture for Database {
    type Store = PgStore;

    async fn open(&self, merge_now: bool, clock: Clock) -> PgStore {
        let options = PgOptions { pool_size: 4, merge_in_insert: merge_now, clock, ..PgOptions::default() };
        PgStore::connect(self.0.url(), &options).await.expect("connect")
    }

    async fn block_sizes(&self) -> Vec<u32> {
        block_sizes(self.0.url()).await
    }

    async fn rows_database(&self, logs: &[(WorkspaceId, Log)]) {
        rows_database(self.0.url(), logs).await;
    }

    async fn stored_logs(&self) -> (u64, u64) {
        stored_logs(self.0.url()).await
    }
}

/// A test's own database, dropped when the test ends.
struct Database(TestDatabase);

async fn database() -> Database {
    Database(TestDatabase::new("sluice_blocks").await)
}

sluice_store::block_suite!(database);
