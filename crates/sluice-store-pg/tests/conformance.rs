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

/// The same contract with the index's chunks of two logs, so a batch spans several, and their
/// signatures gathered into blocks of three as soon as there are three, so searches read
/// blocks and the signatures outside one.
mod small_blocks {
    use super::*;

    async fn fresh() -> Fixture {
        open(PgOptions { pool_size: 4, index_chunk_rows: 2, index_block_chunks: 3, ..PgOptions::default() }).await
    }

    sluice_store::conformance_suite!(fresh);
}

/// The same contract with blocks of three and searches that name at most one chunk to the
/// database, so a needle found in more is walked newest first, each block narrowed when the
/// walk reaches it (`crate::allowed`).
mod walked_blocks {
    use super::*;

    async fn fresh() -> Fixture {
        open(PgOptions {
            pool_size: 4,
            index_chunk_rows: 2,
            index_block_chunks: 3,
            search_listed_chunks: 1,
            ..PgOptions::default()
        })
        .await
    }

    sluice_store::conformance_suite!(fresh);
}
