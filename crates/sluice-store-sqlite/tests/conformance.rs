//! The shared store conformance suite, run against a real SQLite file per test.

use sluice_store_sqlite::SqliteStore;
use tempfile::TempDir;

/// A store in its own temporary directory, removed when the test ends.
type Fixture = sluice_store::conformance::Fixture<SqliteStore, TempDir>;

async fn fresh() -> Fixture {
    let dir = tempfile::tempdir().expect("temp dir");
    let store = SqliteStore::open(&dir.path().join("nested/dir/sluice.db")).expect("open store");
    Fixture::new(store, dir)
}

sluice_store::conformance_suite!(fresh);

/// The same contract with every insert merging its workspace's small blocks at once (a clock
/// that moves on by the merge's wait at each reading makes every block due), so reads find
/// logs in merged blocks and in the new small ones beside them.
mod merged {
    use super::*;
    use std::sync::Arc;
    use std::sync::atomic::{AtomicI64, Ordering};

    use sluice_store::blockstore::MERGE_AFTER_MS;
    use sluice_store_sqlite::SqliteOptions;

    async fn fresh() -> Fixture {
        let dir = tempfile::tempdir().expect("temp dir");
        let now = Arc::new(AtomicI64::new(1_700_000_000_000));
        let clock: sluice_store::Clock =
            sluice_store::Clock::new(move || now.fetch_add(MERGE_AFTER_MS, Ordering::Relaxed));
        let options = SqliteOptions { merge_every: None, clock, ..SqliteOptions::default() };
        let store = SqliteStore::open_with(&dir.path().join("sluice.db"), &options).expect("open store");
        Fixture::new(store, dir)
    }

    sluice_store::conformance_suite!(fresh);
}
