//! The shared store conformance suite, run against a real SQLite file per test.

use std::ops::Deref;

use sluice_store_sqlite::SqliteStore;
use tempfile::TempDir;

/// A store in its own temporary directory, removed when the test ends.
struct Fixture {
    store: SqliteStore,
    _dir: TempDir,
}

impl Deref for Fixture {
    type Target = SqliteStore;

    fn deref(&self) -> &SqliteStore {
        &self.store
    }
}

async fn fresh() -> Fixture {
    let dir = tempfile::tempdir().expect("temp dir");
    let store = SqliteStore::open(&dir.path().join("nested/dir/sluice.db")).expect("open store");
    Fixture { store, _dir: dir }
}

sluice_store::conformance_suite!(fresh);
