//! Live tail (`GET /v1/logs/tail`, docs/API.md "Live tail"): each server's hub of open tails,
//! and the Server-Sent Events stream one tail reads.
//!
//! Ingest hands each committed batch to [`TailHub::publish`] after its `200` is decided (and,
//! on a database other servers share, announces it to them: [`TailHub::connect`]), and
//! the hub puts each matching log in the tail's own bounded queue without waiting: a tail
//! whose queue is full loses the log and counts it, and its stream says so with one
//! `event: dropped` once it has caught up. A slow reader thus costs at most its queue, never
//! the server's memory and never ingest's speed; actix stops reading a stream while the
//! client's socket is full, so nothing else piles up. A tail holds its workspace's slot (at
//! most [`MAX_TAILS_PER_WORKSPACE`]) until its stream is dropped, which a heartbeat written to
//! a closed connection brings about within one heartbeat.

use std::collections::{HashMap, HashSet, VecDeque};
use std::pin::Pin;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex, PoisonError};
use std::task::{Context, Poll};
use std::time::Duration;

use actix_web::web::{Bytes, BytesMut};
use sluice_model::{Log, LogId, WorkspaceId};
use sluice_store::{Announced, Deliver, LogFilter, Search, Store, Watched};
use tokio::sync::mpsc;

/// The most tails one workspace may have open at once (the 21st gets 429).
pub const MAX_TAILS_PER_WORKSPACE: usize = 20;

/// Events a tail's queue holds before it drops: a second of a busy workspace.
pub const TAIL_QUEUE_EVENTS: usize = 1_024;

/// The most bytes of events one chunk of a tail's stream gathers from its queue.
const CHUNK_BYTES: usize = 64 * 1024;

/// How often a tail writes a comment line by default, so proxies keep it open.
pub const DEFAULT_HEARTBEAT: Duration = Duration::from_secs(15);

/// A log and what it is to a tail: its event, encoded once for every tail that shows it.
struct Published {
    id: LogId,
    event: Bytes,
}

/// One open tail, as the hub sees it.
struct Subscriber {
    id: u64,
    filter: LogFilter,
    search: Option<Search>,
    sender: mpsc::Sender<Arc<Published>>,
    dropped: Arc<AtomicU64>,
}

/// Whether a tail with `filter` and `search` shows `log`: every filter of the list, and the
/// search when given (the replay is filtered the same way).
pub(crate) fn admits(filter: &LogFilter, search: Option<&Search>, log: &Log) -> bool {
    let entry = &log.entry;
    let same = |wanted: &Option<String>, value: Option<&str>| wanted.as_deref().is_none_or(|w| Some(w) == value);
    filter.level.is_none_or(|level| level == entry.level)
        && filter.environment.is_none_or(|environment| environment == entry.environment)
        && same(&filter.source, Some(&entry.source))
        && same(&filter.dataset, Some(&entry.dataset))
        && same(&filter.user_id, entry.user_id.as_deref())
        && same(&filter.session_id, entry.session_id.as_deref())
        && same(&filter.flow_id, entry.flow_id.as_deref())
        && filter.from.is_none_or(|from| entry.timestamp >= from)
        && filter.to.is_none_or(|to| entry.timestamp <= to)
        && search.is_none_or(|search| {
            let data = entry.data.as_ref().map(|data| data.as_str());
            search.matches(&entry.message, entry.error_name.as_deref(), entry.error_stack.as_deref(), data)
        })
}

#[derive(Default)]
struct Hub {
    next_id: u64,
    workspaces: HashMap<WorkspaceId, Vec<Subscriber>>,
    closed: bool,
    /// The queue of committed batches to announce to the other servers sharing the database,
    /// when there are any to tell ([`TailHub::connect`]).
    announcer: Option<mpsc::Sender<Announced>>,
    /// Tells the store's listener to stop (at [`TailHub::close`]).
    stop: Option<tokio::sync::watch::Sender<bool>>,
}

/// The tails open on this server, by workspace. Cheap to clone (shared).
#[derive(Clone, Default)]
pub struct TailHub {
    hub: Arc<Mutex<Hub>>,
}

/// Committed batches waiting to be announced before new ones are dropped (with a warning:
/// the other servers' tails then miss them).
const ANNOUNCE_QUEUE: usize = 4_096;

/// The most batches one announcement statement carries.
const ANNOUNCE_BATCHES: usize = 256;

/// The workspace has [`MAX_TAILS_PER_WORKSPACE`] tails open already, or the server is
/// shutting down.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Refused {
    /// 429 `Too many live tails`.
    TooMany,
    /// The server is stopping: 503.
    Closed,
}

impl TailHub {
    fn locked(&self) -> std::sync::MutexGuard<'_, Hub> {
        self.hub.lock().unwrap_or_else(PoisonError::into_inner)
    }

    /// Whether any tail of `workspace` is open (ingest copies a batch for the hub only then).
    pub fn watches(&self, workspace: WorkspaceId) -> bool {
        self.locked().workspaces.contains_key(&workspace)
    }

    /// Tails open on this server now, in every workspace (`/metrics`).
    pub fn open_total(&self) -> usize {
        self.locked().workspaces.values().map(Vec::len).sum()
    }

    /// Tails open on `workspace` now.
    pub fn open_tails(&self, workspace: WorkspaceId) -> usize {
        self.locked().workspaces.get(&workspace).map_or(0, Vec::len)
    }

    /// Hands committed logs to the workspace's tails, never waiting: a full queue drops the log
    /// and counts it for its tail's `dropped` event.
    pub fn publish(&self, workspace: WorkspaceId, logs: &[Log]) {
        let hub = self.locked();
        let Some(subscribers) = hub.workspaces.get(&workspace) else { return };
        for log in logs {
            let mut published: Option<Arc<Published>> = None;
            for subscriber in
                subscribers.iter().filter(|subscriber| admits(&subscriber.filter, subscriber.search.as_ref(), log))
            {
                let event = published.get_or_insert_with(|| Arc::new(Published { id: log.id, event: event_of(log) }));
                if subscriber.sender.try_send(event.clone()).is_err() {
                    subscriber.dropped.fetch_add(1, Ordering::Relaxed);
                }
            }
        }
    }

    /// Opens a tail of `workspace` showing what `filter` and `search` admit.
    pub(crate) fn subscribe(
        &self,
        workspace: WorkspaceId,
        filter: LogFilter,
        search: Option<Search>,
    ) -> Result<Subscription, Refused> {
        let mut hub = self.locked();
        if hub.closed {
            return Err(Refused::Closed);
        }
        let id = hub.next_id;
        let open = hub.workspaces.entry(workspace).or_default();
        if open.len() >= MAX_TAILS_PER_WORKSPACE {
            return Err(Refused::TooMany);
        }
        let (sender, receiver) = mpsc::channel(TAIL_QUEUE_EVENTS);
        let dropped = Arc::new(AtomicU64::new(0));
        open.push(Subscriber { id, filter, search, sender, dropped: dropped.clone() });
        hub.next_id += 1;
        Ok(Subscription { hub: self.clone(), workspace, id, receiver, dropped })
    }

    /// Ends every tail (their streams finish once they have sent what they hold) and refuses
    /// new ones: the server is shutting down. The store's listener and the announcer stop.
    pub fn close(&self) {
        let mut hub = self.locked();
        hub.closed = true;
        hub.workspaces.clear();
        hub.announcer = None;
        if let Some(stop) = hub.stop.take() {
            let _ = stop.send(true);
        }
    }

    /// A hub whose tails also show what the other servers sharing `store`'s database commit:
    /// the store follows their announcements ([`Store::follow`]), and batches committed here
    /// are announced to them by a task of their own, a statement at a time for all that
    /// waited ([`TailHub::announce`]). A store no other server shares gives a plain hub.
    /// Must be called inside a Tokio runtime.
    pub fn connect(store: Arc<dyn Store>) -> Self {
        let tails = TailHub::default();
        let (stop, stopped) = tokio::sync::watch::channel(false);
        let (watching, delivering) = (tails.clone(), tails.clone());
        let watched: Watched = Arc::new(move |workspace| watching.watches(workspace));
        let deliver: Deliver = Arc::new(move |workspace, logs: Vec<Log>| delivering.publish(workspace, &logs));
        if !store.follow(watched, deliver, stopped) {
            return tails;
        }
        let (sender, mut receiver) = mpsc::channel::<Announced>(ANNOUNCE_QUEUE);
        tokio::spawn(async move {
            let mut batches = Vec::new();
            while receiver.recv_many(&mut batches, ANNOUNCE_BATCHES).await > 0 {
                if let Err(error) = store.announce(&batches).await {
                    tracing::warn!(%error, batches = batches.len(), "live tail: cannot announce batches to the other servers");
                }
                batches.clear();
            }
        });
        let mut hub = tails.locked();
        hub.announcer = Some(sender);
        hub.stop = Some(stop);
        drop(hub);
        tails
    }

    /// Whether committed batches are announced to other servers (ingest collects their ids
    /// only then).
    pub fn announces(&self) -> bool {
        self.locked().announcer.is_some()
    }

    /// Queues a committed batch's announcement to the other servers, never waiting.
    pub fn announce(&self, workspace: WorkspaceId, logs: Vec<(LogId, i64)>) {
        let hub = self.locked();
        if let Some(announcer) = &hub.announcer
            && announcer.try_send(Announced { workspace, logs }).is_err()
        {
            tracing::warn!("live tail: the announcement queue is full; other servers' tails miss a batch");
        }
    }
}

/// An open tail: its queue, and its slot in the hub until dropped.
pub(crate) struct Subscription {
    hub: TailHub,
    workspace: WorkspaceId,
    id: u64,
    receiver: mpsc::Receiver<Arc<Published>>,
    dropped: Arc<AtomicU64>,
}

impl Drop for Subscription {
    fn drop(&mut self) {
        let mut hub = self.hub.locked();
        if let Some(open) = hub.workspaces.get_mut(&self.workspace) {
            open.retain(|subscriber| subscriber.id != self.id);
            if open.is_empty() {
                hub.workspaces.remove(&self.workspace);
            }
        }
    }
}

/// A log as one Server-Sent Event: `id`, `event: log`, and the log's JSON on one line.
fn event_of(log: &Log) -> Bytes {
    let json = serde_json::to_string(log).unwrap_or_else(|_| "{}".to_owned());
    Bytes::from(format!("id: {}\nevent: log\ndata: {json}\n\n", log.id))
}

/// The events of a tail: the replayed logs first, then each log as it is published, a
/// `dropped` event after logs were lost, and a comment line every heartbeat.
pub(crate) struct TailStream {
    replay: VecDeque<Bytes>,
    /// Replayed ids, which a live event does not repeat (a log may commit after the tail
    /// opened and before the replay was read).
    replayed: HashSet<LogId>,
    subscription: Subscription,
    heartbeat: tokio::time::Interval,
}

impl TailStream {
    pub(crate) fn new(subscription: Subscription, replay: Vec<Log>, heartbeat: Duration) -> Self {
        let start = tokio::time::Instant::now() + heartbeat;
        TailStream {
            replayed: replay.iter().map(|log| log.id).collect(),
            replay: replay.iter().map(event_of).collect(),
            subscription,
            heartbeat: tokio::time::interval_at(start, heartbeat),
        }
    }
}

impl futures_core::Stream for TailStream {
    type Item = Result<Bytes, actix_web::Error>;

    fn poll_next(self: Pin<&mut Self>, context: &mut Context<'_>) -> Poll<Option<Self::Item>> {
        let this = self.get_mut();
        if let Some(event) = this.replay.pop_front() {
            return Poll::Ready(Some(Ok(event)));
        }
        // What the queue holds goes out as one chunk (up to [`CHUNK_BYTES`]): under load a
        // tail then costs the server a write per many events, not one each.
        let mut chunk: Option<BytesMut> = None;
        loop {
            if chunk.as_ref().is_some_and(|chunk| chunk.len() >= CHUNK_BYTES) {
                break;
            }
            match this.subscription.receiver.poll_recv(context) {
                Poll::Ready(Some(published)) if this.replayed.contains(&published.id) => continue,
                Poll::Ready(Some(published)) => chunk
                    .get_or_insert_with(|| BytesMut::with_capacity(CHUNK_BYTES))
                    .extend_from_slice(&published.event),
                Poll::Ready(None) if chunk.is_none() => return Poll::Ready(None),
                Poll::Ready(None) | Poll::Pending => break,
            }
        }
        if let Some(chunk) = chunk {
            return Poll::Ready(Some(Ok(chunk.freeze())));
        }
        let dropped = this.subscription.dropped.swap(0, Ordering::Relaxed);
        if dropped > 0 {
            return Poll::Ready(Some(Ok(Bytes::from(format!("event: dropped\ndata: {{\"count\":{dropped}}}\n\n")))));
        }
        if this.heartbeat.poll_tick(context).is_ready() {
            return Poll::Ready(Some(Ok(Bytes::from_static(b": heartbeat\n\n"))));
        }
        Poll::Pending
    }
}
