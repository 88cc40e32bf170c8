//! The shared store conformance suite, run against a real PostgreSQL server
//! (`SLUICE_TEST_PG`): each test in a database of its own, cloned from the migrated
//! template and dropped afterwards, so tests run in parallel.

use sluice_store_pg::testing::TestDatabase;
use sluice_store_pg::{PgOptions, PgStore};

/// A store in its own database, dropped when the test ends (after the store's pool).
type Fixture = sluice_store::conformance::Fixture<PgStore, TestDatabase>;

async fn open(options: PgOptions) -> Fixture {
    let database = TestDatabase::new("sluice_conformance").await;
    let store = PgStore::connect(database.url(), &options).await.expect("connect");
    Fixture::new(store, database)
}

async fn fresh() -> Fixture {
    open(PgOptions { pool_size: 4, ..PgOptions::default() }).await
}

sluice_store::conformance_suite!(fresh);

/// The same contract with every insert merging its workspace's small blocks before it answers
/// (a clock that moves on by the merge's wait at each reading makes every block due), so reads
/// find logs in merged blocks and in the new small ones beside them.
mod merged {
    use super::*;
    use std::sync::Arc;
    use std::sync::atomic::{AtomicI64, Ordering};

    use sluice_store::blockstore::MERGE_AFTER_MS;

    async fn fresh() -> Fixture {
        let now = Arc::new(AtomicI64::new(1_700_000_000_000));
        let clock: sluice_store::Clock =
            sluice_store::Clock::new(move || now.fetch_add(MERGE_AFTER_MS, Ordering::Relaxed));
        open(PgOptions { pool_size: 4, merge_in_insert: true, clock, ..PgOptions::default() }).await
    }

    sluice_store::conformance_suite!(fresh);
}
