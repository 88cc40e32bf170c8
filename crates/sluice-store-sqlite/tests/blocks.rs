//! The block layout on a real SQLite file (`sluice_store::conformance::blocks`): merges,
//! retention's rewrites, and the upgrade of a database that kept its logs as rows.

use std::path::PathBuf;

use async_trait::async_trait;
use sluice_model::{Log, WorkspaceId};
use sluice_store::Clock;
use sluice_store::conformance::blocks::BlockFixture;
use sluice_store_sqlite::testing::{block_sizes, rows_database, stored_logs};
use sluice_store_sqlite::{SqliteOptions, SqliteStore};
use tempfile::TempDir;

/// A database file in a directory of its own, removed when the test ends.
struct File {
    path: PathBuf,
    _dir: TempDir,
}

#[async_trait]
impl BlockFixture for File {
    type Store = SqliteStore;

    async fn open(&self, merge_now: bool, clock: Clock) -> SqliteStore {
        let defaults = SqliteOptions::default();
        let merge_every = if merge_now { None } else { defaults.merge_every };
        SqliteStore::open_with(&self.path, &SqliteOptions { merge_every, clock, ..defaults }).expect("open")
    }

    async fn block_sizes(&self) -> Vec<u32> {
        block_sizes(&self.path).expect("blocks")
    }

    async fn rows_database(&self, logs: &[(WorkspaceId, Log)]) {
        rows_database(&self.path, logs).expect("a database of rows");
    }

    async fn stored_logs(&self) -> (u64, u64) {
        stored_logs(&self.path).expect("counted")
    }
}

async fn file() -> File {
    let dir = tempfile::tempdir().expect("temp dir");
    File { path: dir.path().join("sluice.db"), _dir: dir }
}

sluice_store::block_suite!(file);
