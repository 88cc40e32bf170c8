//! The group committer's failure paths against a real store, whose writes the caller's
//! [`Stall`] holds still (each backend its own way) until the [`Release`] it gives runs: a group
//! that fails as a whole is written again batch by batch, a batch whose caller hung up before a
//! writer took it is never written, and a shutdown with a full queue writes every batch it
//! queued and refuses those after it. A write dropped by its caller while stalled leaves the
//! store answering and is stored whole or not at all. Nothing waits on a clock: each step waits until the
//! committer's queue shows what the test queued ([`GroupCommitter::queued_logs`]).

use std::future::Future;
use std::pin::Pin;
use std::sync::Arc;
use std::time::Duration;

use sluice_model::{Log, WorkspaceId};

use super::{EVERYTHING, T0, log, messages, new_workspace};
use crate::group::GroupCommitter;
use crate::{GroupOptions, LogFilter, Store, StoreError};

/// Lets a stalled store's writes go on.
pub type Release = Pin<Box<dyn Future<Output = ()> + Send>>;

/// Holds a store's writes still (reads go on), once its test has made what it needs first.
pub type Stall = Box<dyn FnOnce() -> Pin<Box<dyn Future<Output = Release> + Send>> + Send>;

/// A committer of one writer over `store`, with room for `room` logs, that lets a batch wait as
/// long as the test needs.
fn committer(store: &Arc<dyn Store>, room: usize) -> GroupCommitter {
    let options = GroupOptions {
        writers: 1,
        max_rows: 10_000,
        linger: Duration::ZERO,
        max_queued_logs: room,
        max_wait: Duration::from_secs(60),
    };
    GroupCommitter::start(Arc::new(store.clone()), options)
}

/// Waits until `logs` logs are queued or being written.
async fn until_queued(committer: &GroupCommitter, logs: usize) {
    while committer.queued_logs() != logs {
        tokio::time::sleep(Duration::from_millis(2)).await;
    }
}

/// `count` logs named `{name} {i}`.
fn batch(name: &str, count: usize) -> Vec<Log> {
    (0..count).map(|i| log(&format!("{name} {i}"), T0 + i as i64)).collect()
}

/// Queues `logs` on a task of its own; its handle answers the committer's answer.
fn send(
    committer: &GroupCommitter,
    workspace: WorkspaceId,
    logs: Vec<Log>,
) -> tokio::task::JoinHandle<Result<(), StoreError>> {
    let committer = committer.clone();
    tokio::spawn(async move { committer.insert(workspace, logs).await })
}

/// Checks that a batch's task ended with its batch stored.
fn answered(answer: Result<Result<(), StoreError>, tokio::task::JoinError>, what: &str) {
    match answer {
        Ok(Ok(())) => {}
        other => panic!("{what}: {other:?}"),
    }
}

/// The messages stored in `workspace`, sorted.
async fn stored(store: &Arc<dyn Store>, workspace: WorkspaceId) -> Vec<String> {
    let page = store.list_logs(workspace, &LogFilter::default(), EVERYTHING).await.expect("list");
    let mut stored: Vec<String> = messages(&page.logs).into_iter().map(str::to_owned).collect();
    stored.sort();
    stored
}

/// Batches queued behind a stalled write make one group; one of them holds the same id twice,
/// so the group fails as a whole. It is written again batch by batch: the others are stored and
/// answered, the bad one refused with nothing of it stored.
pub async fn a_failed_group_is_written_again_batch_by_batch(store: Arc<dyn Store>, stall: Stall) {
    let workspace = new_workspace(store.as_ref(), "regroup").await;
    let release = stall().await;
    let committer = committer(&store, 1_000);
    let first = send(&committer, workspace, batch("first", 2));
    until_queued(&committer, 2).await;
    let good = send(&committer, workspace, batch("good", 3));
    until_queued(&committer, 5).await;
    let mut twice = batch("twice", 2);
    twice[1].id = twice[0].id;
    twice[1].entry.timestamp = twice[0].entry.timestamp;
    let bad = send(&committer, workspace, twice);
    until_queued(&committer, 7).await;
    let also_good = send(&committer, workspace, batch("also good", 1));
    until_queued(&committer, 8).await;
    release.await;
    answered(first.await, "first");
    answered(good.await, "good");
    assert!(bad.await.expect("task").is_err(), "a batch holding one id twice is refused");
    answered(also_good.await, "also_good");
    assert_eq!(stored(&store, workspace).await, ["also good 0", "first 0", "first 1", "good 0", "good 1", "good 2"]);
    committer.shutdown().await;
}

/// A batch whose caller stopped waiting (its client hung up) before a writer took it is not
/// written, so the client's retry cannot store it twice; the batches around it are.
pub async fn a_batch_whose_caller_hung_up_is_never_written(store: Arc<dyn Store>, stall: Stall) {
    let workspace = new_workspace(store.as_ref(), "hung-up").await;
    let release = stall().await;
    let committer = committer(&store, 1_000);
    let first = send(&committer, workspace, batch("first", 1));
    until_queued(&committer, 1).await;
    let gone = send(&committer, workspace, batch("hung up", 4));
    until_queued(&committer, 5).await;
    gone.abort();
    assert!(gone.await.is_err_and(|error| error.is_cancelled()), "the caller is gone");
    let after = send(&committer, workspace, batch("after", 1));
    release.await;
    answered(first.await, "first");
    answered(after.await, "after");
    assert_eq!(stored(&store, workspace).await, ["after 0", "first 0"]);
    assert_eq!(committer.queued_logs(), 0, "the hung-up batch's room is given back");
    committer.shutdown().await;
}

/// A shutdown while the queue is full writes every batch queued before it and answers each;
/// one past the queue's room is refused as overloaded, and one after the shutdown as
/// unavailable; nothing of either is stored.
pub async fn a_shutdown_with_a_full_queue_writes_what_it_queued(store: Arc<dyn Store>, stall: Stall) {
    let workspace = new_workspace(store.as_ref(), "shutdown").await;
    let release = stall().await;
    let committer = committer(&store, 40);
    let mut queued = vec![send(&committer, workspace, batch("batch 0", 10))];
    until_queued(&committer, 10).await;
    for n in 1..4 {
        queued.push(send(&committer, workspace, batch(&format!("batch {n}"), 10)));
        until_queued(&committer, 10 * (n + 1)).await;
    }
    let refused = committer.insert(workspace, batch("no room", 1)).await;
    assert!(matches!(refused, Err(StoreError::Overloaded)), "{refused:?}");
    let shutdown = {
        let committer = committer.clone();
        tokio::spawn(async move { committer.shutdown().await })
    };
    release.await;
    shutdown.await.expect("shutdown");
    for (n, answer) in queued.into_iter().enumerate() {
        answered(answer.await, &format!("batch {n}"));
    }
    let late = committer.insert(workspace, batch("late", 1)).await;
    assert!(matches!(late, Err(StoreError::Unavailable(_))), "{late:?}");
    let stored = stored(&store, workspace).await;
    assert_eq!(stored.len(), 40);
    assert!(stored.iter().all(|message| message.starts_with("batch ")), "{stored:?}");
}

/// A write whose caller stops waiting while the stall holds it (a client gone mid-request)
/// ends on its own: the next calls get an answer while it waits, and once the stall lets go
/// it is stored whole or not at all, beside the writes after it.
pub async fn a_write_whose_caller_stopped_waiting_leaves_the_store_usable(store: Arc<dyn Store>, stall: Stall) {
    let workspace = new_workspace(store.as_ref(), "stopped").await;
    assert!(stored(&store, workspace).await.is_empty(), "a new workspace holds nothing");
    let release = stall().await;
    let dropped = batch("dropped", 3);
    let mut write = Box::pin(store.insert_logs(workspace, &dropped));
    let polled = tokio::time::timeout(Duration::ZERO, &mut write).await;
    assert!(polled.is_err(), "the stalled write answered at once: {polled:?}");
    drop(write);
    assert!(stored(&store, workspace).await.is_empty(), "nothing is stored while the stall holds");
    release.await;
    store.insert_logs(workspace, &batch("after", 2)).await.expect("a write after the stall");
    let stored = stored(&store, workspace).await;
    let dropped = stored.iter().filter(|message| message.starts_with("dropped ")).count();
    assert!(dropped == 0 || dropped == 3, "the dropped write is stored whole or not at all: {stored:?}");
    assert_eq!(stored.len() - dropped, 2, "{stored:?}");
}
