//! Group commit: concurrent `POST /v1/logs` batches written together, one transaction (and
//! one fsync) for many requests, each request answered only after the commit that holds it.
//!
//! Requests queue their batch and wait. A writer task takes the first queued batch, then
//! every batch already queued behind it up to [`GroupOptions::max_rows`] logs, waiting up to
//! [`GroupOptions::linger`] for more while the group is short, and hands the group to
//! [`LogWrites::insert_group`](crate::LogWrites::insert_group). While it writes, new batches queue and make the next group, so
//! under load each transaction carries what arrived during the previous one, and an idle
//! service writes a lone batch at once. With several writers ([`GroupOptions::writers`]),
//! groups are written side by side (PostgreSQL, three); SQLite has one writer, as it has one
//! write lock.
//!
//! A group that fails as a whole for any reason but an unavailable database is written again
//! batch by batch, so one batch the database refuses cannot fail the requests beside it. A
//! batch whose caller stopped waiting (the client hung up) before a writer took it is dropped
//! unanswered, so the client's retry cannot store it twice; one already taken is written.
//!
//! The queue is bounded ([`GroupOptions::max_queued_logs`], [`GroupOptions::max_wait`]): a
//! batch that would pass the bound is refused at once, and one no writer took within its wait
//! is withdrawn and refused, both with [`StoreError::Overloaded`] and nothing stored. Whether a
//! waiting batch is withdrawn or taken is decided once, under one compare-and-swap, so a refused
//! batch is never written and a taken one is always answered with its commit.

use std::sync::Arc;
use std::sync::atomic::{AtomicU8, Ordering};
use std::time::{Duration, Instant};

use sluice_model::{Log, WorkspaceId};
use tokio::sync::{Mutex, OwnedSemaphorePermit, Semaphore, mpsc, oneshot};

use crate::{GroupOptions, LogStore, StoreError, WriteBatch};

/// What a group committer writes to: a store (any `Arc` of a [`LogStore`]), or a benchmark's
/// stand-in (the HTTP ceiling that discards, a naive table).
#[async_trait::async_trait]
pub trait GroupWriter: Send + Sync {
    /// Writes a group as [`LogWrites::insert_group`](crate::LogWrites::insert_group) does.
    async fn write_group(&self, group: &[WriteBatch]) -> Result<Vec<Result<(), StoreError>>, StoreError>;
}

#[async_trait::async_trait]
impl<S: LogStore + ?Sized> GroupWriter for Arc<S> {
    async fn write_group(&self, group: &[WriteBatch]) -> Result<Vec<Result<(), StoreError>>, StoreError> {
        self.insert_group(group).await
    }
}

/// A batch waiting for its group's commit, and where its answer goes.
struct Pending {
    batch: WriteBatch,
    answer: oneshot::Sender<Result<(), StoreError>>,
    /// [`WAITING`], then [`TAKEN`] by a writer or [`WITHDRAWN`] by its caller, once.
    state: Arc<AtomicU8>,
    /// Its logs' room in the queue, given back when the batch is answered or dropped.
    room: OwnedSemaphorePermit,
    /// When it was queued (for [`GroupCommit::waited`]).
    queued_at: Instant,
}

/// A batch in the queue that no writer has taken.
const WAITING: u8 = 0;
/// A writer took the batch: it will be written and answered.
const TAKEN: u8 = 1;
/// Its caller gave up before a writer took it: it is never written.
const WITHDRAWN: u8 = 2;

impl Pending {
    /// Whether a writer may take it (and now has): its caller still waits and did not withdraw.
    fn take(&self) -> bool {
        !self.answer.is_closed()
            && self.state.compare_exchange(WAITING, TAKEN, Ordering::AcqRel, Ordering::Acquire).is_ok()
    }
}

/// What the queue carries: batches, and the end of the writers' work.
enum Message {
    WriteBatch(Pending),
    /// One writer stops after writing what was queued before it.
    Stop,
}

/// One group written ([`GroupCommitter::observe`]): what `/metrics` shows of the committer.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct GroupCommit {
    /// Batches (requests) in the group.
    pub batches: usize,
    /// Logs in the group.
    pub logs: usize,
    /// How long its oldest batch waited in the queue before a writer took the group.
    pub waited: Duration,
    /// How long the store took to write it.
    pub took: Duration,
}

/// Told of every group a committer writes.
pub type CommitObserver = Arc<dyn Fn(&GroupCommit) + Send + Sync>;

/// The queue in front of a store's writes. Cloning shares it.
#[derive(Clone)]
pub struct GroupCommitter {
    queue: mpsc::UnboundedSender<Message>,
    writers: Arc<std::sync::Mutex<Vec<tokio::task::JoinHandle<()>>>>,
    /// Room for [`GroupOptions::max_queued_logs`] logs waiting or being written.
    room: Arc<Semaphore>,
    max_queued_logs: usize,
    max_wait: Duration,
    /// Told of each group written, once set ([`GroupCommitter::observe`]).
    observer: Arc<std::sync::OnceLock<CommitObserver>>,
}

impl std::fmt::Debug for GroupCommitter {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("GroupCommitter").finish_non_exhaustive()
    }
}

impl GroupCommitter {
    /// Starts `options.writers` writer tasks on the current Tokio runtime. They stop at
    /// [`GroupCommitter::shutdown`], or when the last clone is dropped and the queue is empty.
    pub fn start(store: Arc<dyn GroupWriter>, options: GroupOptions) -> Self {
        let (queue, receiver) = mpsc::unbounded_channel();
        let receiver = Arc::new(Mutex::new(receiver));
        let observer = Arc::new(std::sync::OnceLock::new());
        let writers = (0..options.writers.max(1))
            .map(|_| tokio::spawn(write_groups(store.clone(), receiver.clone(), options, observer.clone())))
            .collect();
        let max_queued_logs = options.max_queued_logs.clamp(1, Semaphore::MAX_PERMITS);
        Self {
            queue,
            writers: Arc::new(std::sync::Mutex::new(writers)),
            room: Arc::new(Semaphore::new(max_queued_logs)),
            max_queued_logs,
            max_wait: options.max_wait,
            observer,
        }
    }

    /// Has `observer` told of every group written from now on (the first observer set stays).
    pub fn observe(&self, observer: CommitObserver) {
        let _ = self.observer.set(observer);
    }

    /// The logs queued or being written now (what [`GroupOptions::max_queued_logs`] bounds).
    pub fn queued_logs(&self) -> usize {
        self.max_queued_logs.saturating_sub(self.room.available_permits())
    }

    /// Writes every batch queued so far, then stops the writers and waits for them, so the
    /// store they hold is released while the runtime still runs (a server calls this after
    /// its last request). Batches queued afterwards are refused as unavailable.
    pub async fn shutdown(&self) {
        let writers = {
            let mut writers = self.writers.lock().unwrap_or_else(std::sync::PoisonError::into_inner);
            for _ in writers.iter() {
                let _ = self.queue.send(Message::Stop);
            }
            std::mem::take(&mut *writers)
        };
        for writer in writers {
            let _ = writer.await;
        }
    }

    /// Stores one batch with whatever else is being written, all or nothing; returns once the
    /// group holding it has committed (or failed), with the answer [`LogWrites::insert_logs`](crate::LogWrites::insert_logs)
    /// would give. If the caller stops waiting before a writer takes the batch, it is not
    /// written; once taken, it is. [`StoreError::Overloaded`], with nothing stored, when the
    /// queue has no room for the batch or no writer takes it within [`GroupOptions::max_wait`].
    pub async fn insert(&self, workspace: WorkspaceId, logs: Vec<Log>) -> Result<(), StoreError> {
        let stopped = || StoreError::Unavailable("the writer has stopped".into());
        // A batch larger than the whole queue takes all of it: let in only when the queue is empty.
        let wanted = u32::try_from(logs.len().clamp(1, self.max_queued_logs)).unwrap_or(u32::MAX);
        let room = self.room.clone().try_acquire_many_owned(wanted).map_err(|_| StoreError::Overloaded)?;
        let state = Arc::new(AtomicU8::new(WAITING));
        let (answer, mut answered) = oneshot::channel();
        {
            // Queued under the lock `shutdown` takes, so a batch is either ahead of the stop
            // messages (and written) or refused here, never left with no writer.
            let writers = self.writers.lock().unwrap_or_else(std::sync::PoisonError::into_inner);
            if writers.is_empty() {
                return Err(stopped());
            }
            let batch = WriteBatch { workspace, logs };
            let pending = Pending { batch, answer, state: state.clone(), room, queued_at: Instant::now() };
            self.queue.send(Message::WriteBatch(pending)).map_err(|_| stopped())?;
        }
        match tokio::time::timeout(self.max_wait, &mut answered).await {
            Ok(answer) => answer.map_err(|_| stopped())?,
            // No answer in time: withdrawn unless a writer took it meanwhile, in which case
            // its commit decides the answer.
            Err(_) => match state.compare_exchange(WAITING, WITHDRAWN, Ordering::AcqRel, Ordering::Acquire) {
                Ok(_) => Err(StoreError::Overloaded),
                Err(_) => answered.await.map_err(|_| stopped())?,
            },
        }
    }
}

/// One writer: takes a group off the queue, writes it, answers its batches; until it is told
/// to stop or the queue closes.
async fn write_groups(
    store: Arc<dyn GroupWriter>,
    receiver: Arc<Mutex<mpsc::UnboundedReceiver<Message>>>,
    options: GroupOptions,
    observer: Arc<std::sync::OnceLock<CommitObserver>>,
) {
    loop {
        let (group, go_on) = {
            // One writer gathers at a time; the others wait here, not on the database.
            let mut receiver = receiver.lock().await;
            gather(&mut receiver, options.max_rows, options.linger).await
        };
        if !group.is_empty() {
            let observed = observer.get().map(|observer| {
                let logs = group.iter().map(|pending| pending.batch.logs.len()).sum();
                let oldest = group.iter().map(|pending| pending.queued_at).min().unwrap_or_else(Instant::now);
                (observer, GroupCommit { batches: group.len(), logs, waited: oldest.elapsed(), took: Duration::ZERO })
            });
            commit(store.as_ref(), group, observed).await;
        }
        if !go_on {
            return;
        }
    }
}

/// The next group: the first batch to arrive, then what is queued behind it (waiting up to
/// `linger` for more) until `max_rows`; and whether this writer goes on afterwards (not after
/// a stop, or once the queue is closed).
async fn gather(
    receiver: &mut mpsc::UnboundedReceiver<Message>,
    max_rows: usize,
    linger: Duration,
) -> (Vec<Pending>, bool) {
    let first = loop {
        match receiver.recv().await {
            // A caller that stopped waiting (its client hung up, and may send again) gets
            // no answer: its batch is not written, so a retry cannot store it twice.
            // So does one withdrawn after waiting past its time.
            Some(Message::WriteBatch(first)) if !first.take() => continue,
            Some(Message::WriteBatch(first)) => break first,
            Some(Message::Stop) | None => return (Vec::new(), false),
        }
    };
    let mut rows = first.batch.logs.len();
    let mut group = vec![first];
    let deadline = tokio::time::Instant::now() + linger;
    while rows < max_rows {
        let next = match receiver.try_recv() {
            Ok(next) => next,
            Err(mpsc::error::TryRecvError::Disconnected) => return (group, false),
            Err(mpsc::error::TryRecvError::Empty) if linger.is_zero() => break,
            Err(mpsc::error::TryRecvError::Empty) => match tokio::time::timeout_at(deadline, receiver.recv()).await {
                Ok(Some(next)) => next,
                Ok(None) => return (group, false),
                Err(_) => break,
            },
        };
        match next {
            Message::WriteBatch(next) if !next.take() => {}
            Message::WriteBatch(next) => {
                rows += next.batch.logs.len();
                group.push(next);
            }
            Message::Stop => return (group, false),
        }
    }
    (group, true)
}

/// Writes a group and answers each of its batches; tells the observer of it first, so what it
/// counts is there by the time a caller hears its batch was written.
async fn commit(store: &dyn GroupWriter, group: Vec<Pending>, observed: Option<(&CommitObserver, GroupCommit)>) {
    // Each batch's room in the queue is given back once the group is answered.
    let mut rooms = Vec::with_capacity(group.len());
    let (batches, answers): (Vec<WriteBatch>, Vec<_>) = group
        .into_iter()
        .map(|pending| {
            rooms.push(pending.room);
            (pending.batch, pending.answer)
        })
        .unzip();
    let started = Instant::now();
    let written = store.write_group(&batches).await;
    // Only a group the store wrote as one is counted (its batches' own outcomes aside).
    if let (Some((observer, mut seen)), Ok(_)) = (observed, &written) {
        seen.took = started.elapsed();
        observer(&seen);
    }
    match written {
        // A store that answers for more or fewer batches than it was given is broken; what
        // it stored cannot be told, so nobody is told it was stored.
        Ok(outcomes) if outcomes.len() != answers.len() => {
            tracing::error!(
                group.batches = answers.len(),
                answers = outcomes.len(),
                "the store answered a group wrongly"
            );
            for answer in answers {
                let _ = answer.send(Err(StoreError::Backend("the store answered a group wrongly".into())));
            }
        }
        Ok(outcomes) => {
            for (answer, outcome) in answers.into_iter().zip(outcomes) {
                // A caller that stopped waiting no longer needs the answer.
                let _ = answer.send(outcome);
            }
        }
        // A failure that may belong to one batch: each alone, so the rest still commit.
        Err(error) if batches.len() > 1 && !matches!(error, StoreError::Unavailable(_) | StoreError::Timeout(_)) => {
            tracing::warn!(%error, group.batches = batches.len(), "a group failed; writing its batches one by one");
            for (batch, answer) in batches.iter().zip(answers) {
                let outcome = store.write_group(std::slice::from_ref(batch)).await.and_then(crate::only_answer);
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
