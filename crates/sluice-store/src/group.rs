//! Group commit: concurrent `POST /v1/logs` batches written together, one transaction (and
//! one fsync) for many requests, each request answered only after the commit that holds it.
//!
//! Requests queue their batch and wait. A writer task takes the first queued batch, then
//! every batch already queued behind it up to [`GroupOptions::max_rows`] logs, waiting up to
//! [`GroupOptions::linger`] for more while the group is short, and hands the group to
//! [`LogStore::insert_group`]. While it writes, new batches queue and make the next group, so
//! under load each transaction carries what arrived during the previous one, and an idle
//! service writes a lone batch at once. With several writers ([`GroupOptions::writers`]),
//! groups are written side by side (PostgreSQL); SQLite has one writer, as it has one write
//! lock.
//!
//! A group that fails as a whole for any reason but an unavailable database is written again
//! batch by batch, so one batch the database refuses cannot fail the requests beside it.

use std::sync::Arc;
use std::time::Duration;

use sluice_model::{Log, WorkspaceId};
use tokio::sync::{Mutex, mpsc, oneshot};

use crate::{Batch, GroupOptions, LogStore, StoreError};

/// A batch waiting for its group's commit, and where its answer goes.
struct Pending {
    batch: Batch,
    answer: oneshot::Sender<Result<(), StoreError>>,
}

/// The queue in front of a store's writes. Cloning shares it.
#[derive(Clone)]
pub struct GroupCommitter {
    queue: mpsc::UnboundedSender<Pending>,
}

impl std::fmt::Debug for GroupCommitter {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("GroupCommitter").finish_non_exhaustive()
    }
}

impl GroupCommitter {
    /// Starts `options.writers` writer tasks on the current Tokio runtime. They stop when the
    /// last clone of the committer is dropped and the queue is empty.
    pub fn start(store: Arc<dyn LogStore>, options: GroupOptions) -> Self {
        let (queue, receiver) = mpsc::unbounded_channel();
        let receiver = Arc::new(Mutex::new(receiver));
        for _ in 0..options.writers.max(1) {
            tokio::spawn(write_groups(store.clone(), receiver.clone(), options));
        }
        Self { queue }
    }

    /// Stores one batch with whatever else is being written, all or nothing; returns once the
    /// group holding it has committed (or failed), with the answer [`LogStore::insert_logs`]
    /// would give. If the caller stops waiting, the batch is still written.
    pub async fn insert(&self, workspace: WorkspaceId, logs: Vec<Log>) -> Result<(), StoreError> {
        let (answer, answered) = oneshot::channel();
        self.queue
            .send(Pending { batch: Batch { workspace, logs }, answer })
            .map_err(|_| StoreError::Unavailable("the writer has stopped".into()))?;
        answered.await.map_err(|_| StoreError::Unavailable("the writer has stopped".into()))?
    }
}

/// One writer: takes a group off the queue, writes it, answers its batches; until the queue
/// closes.
async fn write_groups(
    store: Arc<dyn LogStore>,
    receiver: Arc<Mutex<mpsc::UnboundedReceiver<Pending>>>,
    options: GroupOptions,
) {
    loop {
        let group = {
            // One writer gathers at a time; the others wait here, not on the database.
            let mut receiver = receiver.lock().await;
            match gather(&mut receiver, options.max_rows, options.linger).await {
                Some(group) => group,
                None => return,
            }
        };
        commit(store.as_ref(), group).await;
    }
}

/// The next group: the first batch to arrive, then what is queued behind it (waiting up to
/// `linger` for more) until `max_rows`. `None` once the queue is closed and empty.
async fn gather(
    receiver: &mut mpsc::UnboundedReceiver<Pending>,
    max_rows: usize,
    linger: Duration,
) -> Option<Vec<Pending>> {
    let first = receiver.recv().await?;
    let mut rows = first.batch.logs.len();
    let mut group = vec![first];
    let deadline = tokio::time::Instant::now() + linger;
    while rows < max_rows {
        let next = match receiver.try_recv() {
            Ok(next) => next,
            Err(mpsc::error::TryRecvError::Disconnected) => break,
            Err(mpsc::error::TryRecvError::Empty) if linger.is_zero() => break,
            Err(mpsc::error::TryRecvError::Empty) => match tokio::time::timeout_at(deadline, receiver.recv()).await {
                Ok(Some(next)) => next,
                Ok(None) | Err(_) => break,
            },
        };
        rows += next.batch.logs.len();
        group.push(next);
    }
    Some(group)
}

/// Writes a group and answers each of its batches.
async fn commit(store: &dyn LogStore, group: Vec<Pending>) {
    let (batches, answers): (Vec<Batch>, Vec<_>) = group.into_iter().map(|pending| (pending.batch, pending.answer)).unzip();
    match store.insert_group(&batches).await {
        Ok(outcomes) => {
            for (answer, outcome) in answers.into_iter().zip(outcomes) {
                // A caller that stopped waiting no longer needs the answer.
                let _ = answer.send(outcome);
            }
        }
        // A failure that may belong to one batch: each alone, so the rest still commit.
        Err(error) if batches.len() > 1 && !matches!(error, StoreError::Unavailable(_)) => {
            tracing::warn!(%error, group.batches = batches.len(), "a group failed; writing its batches one by one");
            for (batch, answer) in batches.iter().zip(answers) {
                let outcome = store.insert_group(std::slice::from_ref(batch)).await.and_then(crate::only_answer);
                let _ = answer.send(outcome);
            }
        }
        Err(error) => {
            for answer in answers {
                let _ = answer.send(Err(error.clone()));
            }
        }
    }
}
