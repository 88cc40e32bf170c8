//! Live tail (`GET /v1/logs/tail`, docs/API.md "Live tail"): each server's hub of open tails,
//! and the Server-Sent Events stream one tail reads.
//!
//! Ingest encodes a batch's events once, before its commit ([`TailHub::prepare`]: one buffer
//! for the whole batch, and which of its logs each open tail shows), and hands the batch to
//! the tails after its `200` is decided ([`Prepared::publish`]; on a database other servers
//! share it also announces it to them: [`TailHub::connect`]). Each tail gets the batch as one
//! item of its own bounded queue without waiting: a tail that shows every log shares the
//! batch's buffer (no copy, one queue operation a batch however many tails are open); a
//! filtered tail gets its logs' events copied out. A tail whose queue is full loses the batch
//! and counts its logs, and its stream says so with one `event: dropped` once it has caught
//! up. A slow reader thus costs at most its queue, never the server's memory and never
//! ingest's speed; actix stops reading a stream while the client's socket is full, so nothing
//! else piles up. A tail holds its workspace's slot (at most [`MAX_TAILS_PER_WORKSPACE`])
//! until its stream is dropped, which a heartbeat written to a closed connection brings about
//! within one heartbeat.

use std::collections::{HashMap, HashSet, VecDeque};
use std::pin::Pin;
use std::sync::atomic::{AtomicU64, AtomicUsize, Ordering};
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

/// How often a tail writes a comment line by default, so proxies keep it open.
pub const DEFAULT_HEARTBEAT: Duration = Duration::from_secs(15);

/// Events for one tail: Server-Sent Events back to back, and each one's log id and end offset
/// in `bytes` (a live event whose log the replay already sent is skipped by id).
#[derive(Clone)]
struct Events {
    bytes: Bytes,
    ends: Arc<[(LogId, usize)]>,
}

impl Events {
    /// Encodes `logs` as one buffer of events.
    fn encode<'a>(logs: impl Iterator<Item = &'a Log>) -> Self {
        let mut bytes = Vec::new();
        let ends = logs
            .map(|log| {
                write_event(&mut bytes, log);
                (log.id, bytes.len())
            })
            .collect();
        Events { bytes: Bytes::from(bytes), ends }
    }

    fn len(&self) -> usize {
        self.ends.len()
    }

    /// The events whose index `keep` admits, copied into a buffer of their own (only asked for
    /// a strict part: a tail that shows the whole batch shares it instead).
    fn select(&self, keep: impl Fn(usize, LogId) -> bool) -> Events {
        let mut bytes = BytesMut::new();
        let mut ends = Vec::new();
        let mut start = 0;
        for (index, &(id, end)) in self.ends.iter().enumerate() {
            if keep(index, id) {
                bytes.extend_from_slice(&self.bytes[start..end]);
                ends.push((id, bytes.len()));
            }
            start = end;
        }
        Events { bytes: bytes.freeze(), ends: ends.into() }
    }
}

/// One open tail, as the hub sees it.
struct Subscriber {
    id: u64,
    filter: LogFilter,
    search: Option<Search>,
    /// Whether the tail shows every log (no filter, no search): it shares a batch's buffer.
    shows_all: bool,
    sender: mpsc::Sender<Events>,
    /// Events in the queue now; a batch that would take it past [`TAIL_QUEUE_EVENTS`] is
    /// dropped whole.
    queued: Arc<AtomicUsize>,
    dropped: Arc<AtomicU64>,
}

impl Subscriber {
    /// Queues `events` without waiting, or counts them as dropped when the queue is full.
    fn offer(&self, events: Events) {
        let count = events.len();
        let fits = self
            .queued
            .fetch_update(Ordering::AcqRel, Ordering::Acquire, |queued| {
                (queued + count <= TAIL_QUEUE_EVENTS).then_some(queued + count)
            })
            .is_ok();
        if !fits {
            self.dropped.fetch_add(count as u64, Ordering::Relaxed);
        } else if self.sender.try_send(events).is_err() {
            self.queued.fetch_sub(count, Ordering::AcqRel);
            self.dropped.fetch_add(count as u64, Ordering::Relaxed);
        }
    }
}

/// A batch encoded for the tails open when it was prepared, waiting for its commit: the
/// events once, and which of them each tail shows. A tail opened after the batch was prepared
/// does not get it (as one opened while no tail was open and the batch was not prepared).
pub struct Prepared {
    hub: TailHub,
    workspace: WorkspaceId,
    events: Events,
    /// The tails that show some of the batch, and the indexes they show (`None`: all).
    tails: Vec<(u64, Option<Vec<u32>>)>,
}

impl Prepared {
    /// Hands the committed batch to its tails, never waiting.
    pub fn publish(self) {
        let hub = self.hub.locked();
        let Some(subscribers) = hub.workspaces.get(&self.workspace) else { return };
        for (id, shown) in &self.tails {
            let Some(subscriber) = subscribers.iter().find(|subscriber| subscriber.id == *id) else { continue };
            let events = match shown {
                None => self.events.clone(),
                Some(shown) => self.events.select(|index, _| shown.binary_search(&(index as u32)).is_ok()),
            };
            subscriber.offer(events);
        }
    }
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
    /// The store other servers share, told which workspaces this one tails ([`TailHub::watch`]).
    watcher: Option<Arc<dyn Store>>,
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

/// The shortest time between two rounds of announcements: under sustained ingest a round
/// carries the batches of many requests, and reads who watches once for them all (a round a
/// few requests was about 250 reads a second at 50k logs/s), for at most this much more delay
/// before another server's tail shows a log.
const ANNOUNCE_EVERY: Duration = Duration::from_millis(25);

/// How often the server tells the others again which workspaces it tails: a third of how long
/// they hold it ([`sluice_store::WATCH_SECONDS`]), so one late or failed round loses nothing.
const WATCH_REFRESH: Duration = Duration::from_secs(sluice_store::WATCH_SECONDS / 3);

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

    /// Encodes `logs` for the workspace's tails open now, before their commit; `None` when no
    /// tail of the workspace shows any of them. [`Prepared::publish`] hands them over.
    pub fn prepare(&self, workspace: WorkspaceId, logs: &[Log]) -> Option<Prepared> {
        let hub = self.locked();
        let subscribers = hub.workspaces.get(&workspace)?;
        let mut tails: Vec<(u64, Option<Vec<u32>>)> = subscribers
            .iter()
            .filter_map(|subscriber| {
                if subscriber.shows_all {
                    return Some((subscriber.id, None));
                }
                let shown: Vec<u32> = (0..logs.len() as u32)
                    .filter(|&index| admits(&subscriber.filter, subscriber.search.as_ref(), &logs[index as usize]))
                    .collect();
                match shown.len() {
                    0 => None,
                    n if n == logs.len() => Some((subscriber.id, None)),
                    _ => Some((subscriber.id, Some(shown))),
                }
            })
            .collect();
        drop(hub);
        if tails.is_empty() {
            return None;
        }
        // Only the logs some tail shows are encoded, and the filtered tails' indexes are then
        // counted among those.
        let events = if tails.iter().any(|(_, shown)| shown.is_none()) {
            Events::encode(logs.iter())
        } else {
            let mut wanted = vec![false; logs.len()];
            for index in tails.iter().filter_map(|(_, shown)| shown.as_ref()).flatten() {
                wanted[*index as usize] = true;
            }
            let mut position = Vec::with_capacity(logs.len());
            let mut next = 0u32;
            for &wanted in &wanted {
                position.push(next);
                next += u32::from(wanted);
            }
            for shown in tails.iter_mut().filter_map(|(_, shown)| shown.as_mut()) {
                shown.iter_mut().for_each(|index| *index = position[*index as usize]);
            }
            Events::encode(logs.iter().zip(&wanted).filter(|(_, wanted)| **wanted).map(|(log, _)| log))
        };
        Some(Prepared { hub: self.clone(), workspace, events, tails })
    }

    /// Hands logs committed elsewhere (another server's, read back) to the workspace's tails.
    pub fn publish(&self, workspace: WorkspaceId, logs: &[Log]) {
        if let Some(prepared) = self.prepare(workspace, logs) {
            prepared.publish();
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
        let (queued, dropped) = (Arc::new(AtomicUsize::new(0)), Arc::new(AtomicU64::new(0)));
        let shows_all = filter == LogFilter::default() && search.is_none();
        open.push(Subscriber {
            id,
            filter,
            search,
            shows_all,
            sender,
            queued: queued.clone(),
            dropped: dropped.clone(),
        });
        hub.next_id += 1;
        Ok(Subscription { hub: self.clone(), workspace, id, receiver, queued, dropped })
    }

    /// Ends every tail (their streams finish once they have sent what they hold) and refuses
    /// new ones: the server is shutting down. The store's listener and the announcer stop.
    pub fn close(&self) {
        let mut hub = self.locked();
        hub.closed = true;
        hub.workspaces.clear();
        hub.announcer = None;
        hub.watcher = None;
        if let Some(stop) = hub.stop.take() {
            let _ = stop.send(true);
        }
    }

    /// A hub whose tails also show what the other servers sharing `store`'s database commit:
    /// the store follows their announcements ([`Store::follow`]), and batches committed here
    /// are announced to them by a task of their own, a statement at a time for all that
    /// waited ([`TailHub::announce`]), those of the workspaces another server tails. The
    /// workspaces tailed here are told to the others as a tail opens ([`TailHub::watch`]) and
    /// again every [`WATCH_REFRESH`] while any stays open, by a task of its own. A store no
    /// other server shares gives a plain hub. Must be called inside a Tokio runtime.
    pub fn connect(store: Arc<dyn Store>) -> Self {
        Self::connect_refreshing(store, WATCH_REFRESH)
    }

    /// [`TailHub::connect`], telling the store which workspaces are tailed here every
    /// `refresh` instead of [`WATCH_REFRESH`] (tests).
    pub fn connect_refreshing(store: Arc<dyn Store>, refresh: Duration) -> Self {
        let tails = TailHub::default();
        let (stop, stopped) = tokio::sync::watch::channel(false);
        let (watching, delivering) = (tails.clone(), tails.clone());
        let watched: Watched = Arc::new(move |workspace| watching.watches(workspace));
        let deliver: Deliver = Arc::new(move |workspace, logs: Vec<Log>| delivering.publish(workspace, &logs));
        if !store.follow(watched, deliver, stopped.clone()) {
            return tails;
        }
        tokio::spawn(refresh_watches(Arc::downgrade(&tails.hub), store.clone(), refresh, stopped));
        let store_watching = store.clone();
        let (sender, mut receiver) = mpsc::channel::<Announced>(ANNOUNCE_QUEUE);
        tokio::spawn(async move {
            let mut batches = Vec::new();
            while receiver.recv_many(&mut batches, ANNOUNCE_BATCHES).await > 0 {
                let round = tokio::time::Instant::now();
                if let Err(error) = store.announce(&batches).await {
                    tracing::warn!(%error, batches = batches.len(), "live tail: cannot announce batches to the other servers");
                }
                batches.clear();
                tokio::time::sleep_until(round + ANNOUNCE_EVERY).await;
            }
        });
        let mut hub = tails.locked();
        hub.announcer = Some(sender);
        hub.stop = Some(stop);
        hub.watcher = Some(store_watching);
        drop(hub);
        tails
    }

    /// Tells the other servers sharing the database, when there are any, that this one tails
    /// `workspace` ([`Store::watch`]): called once a tail is open and before its stream
    /// starts, so it shows what they commit from then on.
    pub async fn watch(&self, workspace: WorkspaceId) -> Result<(), sluice_store::StoreError> {
        let watcher = self.locked().watcher.clone();
        match watcher {
            Some(store) => store.watch(&[workspace]).await,
            None => Ok(()),
        }
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

/// Tells the store every `refresh` which workspaces the hub has tails of, until `stop` or the
/// hub is gone; a failed round is tried again at the next.
async fn refresh_watches(
    hub: std::sync::Weak<Mutex<Hub>>,
    store: Arc<dyn Store>,
    refresh: Duration,
    mut stop: tokio::sync::watch::Receiver<bool>,
) {
    let mut every = tokio::time::interval(refresh);
    every.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Delay);
    // The first tick is at once, when no tail is open yet.
    every.tick().await;
    loop {
        tokio::select! {
            _ = every.tick() => {}
            _ = stop.changed() => return,
        }
        let Some(hub) = hub.upgrade() else { return };
        let tailed: Vec<WorkspaceId> = TailHub { hub }.locked().workspaces.keys().copied().collect();
        if !tailed.is_empty()
            && let Err(error) = store.watch(&tailed).await
        {
            tracing::warn!(%error, workspaces = tailed.len(), "live tail: cannot tell the other servers which workspaces are tailed here");
        }
    }
}

/// An open tail: its queue, and its slot in the hub until dropped.
pub(crate) struct Subscription {
    hub: TailHub,
    workspace: WorkspaceId,
    id: u64,
    receiver: mpsc::Receiver<Events>,
    queued: Arc<AtomicUsize>,
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

/// Writes a log as one Server-Sent Event: `id`, `event: log`, and the log's JSON on one line.
fn write_event(out: &mut Vec<u8>, log: &Log) {
    use std::io::Write as _;
    let start = out.len();
    let written = write!(out, "id: {}\nevent: log\ndata: ", log.id)
        .map_err(serde_json::Error::io)
        .and_then(|()| serde_json::to_writer(&mut *out, log));
    if written.is_err() {
        // A log always serializes; were it not to, the event still keeps its id.
        out.truncate(start);
        let _ = write!(out, "id: {}\nevent: log\ndata: {{}}", log.id);
    }
    out.extend_from_slice(b"\n\n");
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
            replay: replay
                .iter()
                .map(|log| {
                    let mut event = Vec::new();
                    write_event(&mut event, log);
                    Bytes::from(event)
                })
                .collect(),
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
        // Each batch goes out as it was queued (shared with the other tails that show it all);
        // actix gathers what is ready into one write.
        loop {
            match this.subscription.receiver.poll_recv(context) {
                Poll::Ready(Some(events)) => {
                    this.subscription.queued.fetch_sub(events.len(), Ordering::AcqRel);
                    let replayed = &this.replayed;
                    let events = if replayed.is_empty() || !events.ends.iter().any(|(id, _)| replayed.contains(id)) {
                        events
                    } else {
                        events.select(|_, id| !replayed.contains(&id))
                    };
                    if events.len() > 0 {
                        return Poll::Ready(Some(Ok(events.bytes)));
                    }
                }
                Poll::Ready(None) => return Poll::Ready(None),
                Poll::Pending => break,
            }
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
