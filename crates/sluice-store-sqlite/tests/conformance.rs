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

/// The same contract with the index's chunks of two logs, written by each insert (the default
/// config's searches mostly read logs the background has not indexed yet), so a batch spans
/// several and every search reads the candidate chunks the index finds, newest first; their
/// signatures gathered into blocks of three.
mod chunked_search {
    use super::*;
    use sluice_store_sqlite::SqliteOptions;

    async fn fresh() -> Fixture {
        let dir = tempfile::tempdir().expect("temp dir");
        let options =
            SqliteOptions { index_chunk_rows: 2, index_block_chunks: 3, index_every: None, ..SqliteOptions::default() };
        let store = SqliteStore::open_with(&dir.path().join("sluice.db"), &options).expect("open store");
        Fixture { store, _dir: dir }
    }

    sluice_store::conformance_suite!(fresh);
}

/// The same contract with search's dense threshold at its smallest, so every search walks the
/// workspace's chunks newest first and asks the index a step at a time; chunks of two logs.
mod dense_search {
    use super::*;
    use sluice_store_sqlite::SqliteOptions;

    async fn fresh() -> Fixture {
        let dir = tempfile::tempdir().expect("temp dir");
        let options = SqliteOptions {
            search_dense_hits: 1,
            index_chunk_rows: 2,
            index_block_chunks: 3,
            index_every: None,
            ..SqliteOptions::default()
        };
        let store = SqliteStore::open_with(&dir.path().join("sluice.db"), &options).expect("open store");
        Fixture { store, _dir: dir }
    }

    sluice_store::conformance_suite!(fresh);
}
