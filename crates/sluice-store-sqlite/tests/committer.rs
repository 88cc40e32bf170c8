//! The group committer's failure paths (`sluice_store::conformance::committer`) against a real
//! SQLite file, stalled by another connection's `IMMEDIATE` transaction.

use std::sync::Arc;
use std::time::Duration;

use diesel::connection::SimpleConnection;
use diesel::{Connection, SqliteConnection};
use sluice_store::Store;
use sluice_store::conformance::committer::{self, Release, Stall};
use sluice_store_sqlite::{SqliteOptions, SqliteStore};

/// A store on a fresh file, and how to hold its writes: another connection's transaction.
fn stalled() -> (Arc<dyn Store>, Stall, tempfile::TempDir) {
    let dir = tempfile::tempdir().expect("temp dir");
    let path = dir.path().join("sluice.db");
    // The writer waits for the lock as long as the test holds it.
    let options = SqliteOptions { busy_timeout: Duration::from_secs(60), ..SqliteOptions::default() };
    let store = SqliteStore::open_with(&path, &options).expect("open store");
    #[expect(clippy::async_yields_async, reason = "a stall gives the future that releases it, by design")]
    let stall: Stall = Box::new(move || {
        Box::pin(async move {
            let mut blocker = SqliteConnection::establish(path.to_str().expect("utf-8")).expect("connect");
            blocker.batch_execute("BEGIN IMMEDIATE").expect("take the write lock");
            let release: Release = Box::pin(async move { blocker.batch_execute("ROLLBACK").expect("let the lock go") });
            release
        })
    });
    (Arc::new(store), stall, dir)
}

#[tokio::test]
async fn a_failed_group_is_written_again_batch_by_batch() {
    let (store, stall, _dir) = stalled();
    committer::a_failed_group_is_written_again_batch_by_batch(store, stall).await;
}

#[tokio::test]
async fn a_batch_whose_caller_hung_up_is_never_written() {
    let (store, stall, _dir) = stalled();
    committer::a_batch_whose_caller_hung_up_is_never_written(store, stall).await;
}

#[tokio::test]
async fn a_shutdown_with_a_full_queue_writes_what_it_queued() {
    let (store, stall, _dir) = stalled();
    committer::a_shutdown_with_a_full_queue_writes_what_it_queued(store, stall).await;
}

#[tokio::test]
async fn a_write_whose_caller_stopped_waiting_leaves_the_store_usable() {
    let (store, stall, _dir) = stalled();
    committer::a_write_whose_caller_stopped_waiting_leaves_the_store_usable(store, stall).await;
}
