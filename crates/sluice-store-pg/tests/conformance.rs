//! The shared store conformance suite, run against a real PostgreSQL server
//! (`SLUICE_TEST_PG`): each test in a database of its own, cloned from the migrated
//! template and dropped afterwards, so tests run in parallel.

use std::ops::Deref;

use sluice_store_pg::testing::TestDatabase;
use sluice_store_pg::{PgOptions, PgStore};

/// A store in its own database, dropped when the test ends (after the store's pool).
struct Fixture {
    store: PgStore,
    _database: TestDatabase,
}

impl Deref for Fixture {
    type Target = PgStore;

    fn deref(&self) -> &PgStore {
        &self.store
    }
}

async fn open(options: PgOptions) -> Fixture {
    let database = TestDatabase::new("sluice_conformance").await;
    let store = PgStore::connect(database.url(), &options).await.expect("connect");
    Fixture { store, _database: database }
}

async fn fresh() -> Fixture {
    open(PgOptions { pool_size: 4, ..PgOptions::default() }).await
}

sluice_store::conformance_suite!(fresh);

/// The same contract with search's thresholds at their smallest, so every search takes the
/// walk of the newest logs first and, when that is not conclusive, reads every candidate;
/// and with the index's chunks of two logs, so a batch spans several.
mod dense_search {
    use super::*;

    async fn fresh() -> Fixture {
        open(PgOptions {
            pool_size: 4,
            search_dense_hits: 1,
            search_walk_rows: 3,
            index_chunk_rows: 2,
            ..PgOptions::default()
        })
        .await
    }

    sluice_store::conformance_suite!(fresh);
}
