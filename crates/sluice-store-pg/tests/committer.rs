//! The group committer's failure paths (`sluice_store::conformance::committer`) against a real
//! PostgreSQL database of the test's own, stalled by a lock on `logs` that inserts wait for.

use std::sync::Arc;

use sluice_store::Store;
use sluice_store::conformance::committer::{self, Release, Stall};
use sluice_store_pg::testing::{TestDatabase, WriteStall};
use sluice_store_pg::{PgOptions, PgStore};

/// A store on a fresh database, and how to hold its writes; the database lives as long as the
/// returned guard.
async fn stalled() -> (Arc<dyn Store>, Stall, TestDatabase) {
    let database = TestDatabase::new("sluice_committer").await;
    let store =
        PgStore::connect(database.url(), &PgOptions { pool_size: 4, ..PgOptions::default() }).await.expect("connect");
    let url = database.url().to_owned();
    #[expect(clippy::async_yields_async, reason = "a stall gives the future that releases it, by design")]
    let stall: Stall = Box::new(move || {
        Box::pin(async move {
            let stall = WriteStall::take(&url).await;
            let release: Release = Box::pin(stall.release());
            release
        })
    });
    (Arc::new(store), stall, database)
}

#[tokio::test]
async fn a_failed_group_is_written_again_batch_by_batch() {
    let (store, stall, _database) = stalled().await;
    committer::a_failed_group_is_written_again_batch_by_batch(store, stall).await;
}

#[tokio::test]
async fn a_batch_whose_caller_hung_up_is_never_written() {
    let (store, stall, _database) = stalled().await;
    committer::a_batch_whose_caller_hung_up_is_never_written(store, stall).await;
}

#[tokio::test]
async fn a_shutdown_with_a_full_queue_writes_what_it_queued() {
    let (store, stall, _database) = stalled().await;
    committer::a_shutdown_with_a_full_queue_writes_what_it_queued(store, stall).await;
}

#[tokio::test]
async fn a_write_whose_caller_stopped_waiting_leaves_the_store_usable() {
    let (store, stall, _database) = stalled().await;
    committer::a_write_whose_caller_stopped_waiting_leaves_the_store_usable(store, stall).await;
}
