//! The storage contract of sluice: traits every backend implements, the filter and page types
//! they take, and (feature `conformance`) the one test suite every backend must pass.
//!
//! Architecture invariant: this crate knows no SQL and no driver (`cargo xtask ci` checks its
//! dependencies). Backends live in their own crates (`sluice-store-sqlite`, `sluice-store-pg`)
//! and the HTTP layer only sees `dyn Store`. What both backends need that does not depend on
//! the database is here, once: the clock, row <-> model mapping, rollup and flow deltas,
//! group commit, and the block store's layout and reads (`blockstore`).

use async_trait::async_trait;
use sluice_model::calendar::month_start_ms;
use sluice_model::{ApiKeyRecord, KeyId, Limits, Log, LogId, Plan, Workspace, WorkspaceId};
use sluice_query::stats::{CountBy, LevelCount, RollupFilter};

pub mod accounts;
#[cfg(feature = "bench")]
pub mod bench;
pub mod blockstore;
pub mod clock;
#[cfg(feature = "conformance")]
pub mod conformance;
pub use clock::{Clock, system_clock, unix_now_ms};
pub mod flows;
pub mod full;
pub mod group;
pub mod retention;
pub mod rollups;
pub mod rows;
pub mod upgrade;

/// Why a store call failed.
#[derive(Debug, Clone, thiserror::Error)]
pub enum StoreError {
    /// The database cannot be reached or is overloaded; a retry may succeed.
    #[error("database unavailable: {0}")]
    Unavailable(String),
    /// The thing the call names does not exist.
    #[error("{0} not found")]
    NotFound(&'static str),
    /// The batch would take the workspace past its monthly log quota; nothing was stored.
    #[error("monthly log quota exceeded")]
    QuotaExceeded,
    /// Anything else the backend reported.
    #[error("database error: {0}")]
    Backend(String),
    /// The call's deadline passed before it was done (its statement interrupted, its
    /// connection free again); the database is slow or the call too large.
    #[error("database call past its deadline: {0}")]
    Timeout(String),
    /// The write queue is full, or the batch waited in it past its time ([`GroupOptions`]):
    /// nothing was stored; a retry after a second may succeed.
    #[error("the write queue is full")]
    Overloaded,
    /// The change conflicts with what is stored (a taken email, an existing member, the last
    /// owner); the text says which, in words a client can be shown.
    #[error("{0}")]
    Conflict(&'static str),
    /// The database cannot write for lack of space (SQLite's "database or disk is full",
    /// PostgreSQL's `53100 disk_full`): nothing of the call was stored. The text is the
    /// database's own ([`full::FullState`] says where).
    #[error("storage is full: {0}")]
    StorageFull(String),
}

/// The UTC month a log was accepted in, as the Unix ms it starts at: its id is a UUID v7,
/// stamped at ingest, so this is the month its quota counts in.
pub fn accepted_month(log: &Log) -> i64 {
    let seconds = log.id.as_uuid().get_timestamp().map_or(0, |stamp| stamp.to_unix().0);
    month_start_ms(i64::try_from(seconds).unwrap_or(i64::MAX / 1000).saturating_mul(1000))
}

/// How many logs of a batch each UTC month (of acceptance) gets, oldest month first.
pub fn logs_per_month(batch: &[Log]) -> Vec<(i64, i64)> {
    let mut months: Vec<(i64, i64)> = Vec::new();
    for log in batch {
        let month = accepted_month(log);
        match months.iter_mut().find(|(known, _)| *known == month) {
            Some((_, count)) => *count += 1,
            None => months.push((month, 1)),
        }
    }
    months.sort_unstable();
    months
}

/// One request's logs, all for one workspace: the unit a group commit acknowledges.
#[derive(Debug, Clone, PartialEq)]
pub struct WriteBatch {
    /// Whose logs they are.
    pub workspace: WorkspaceId,
    /// The logs, stored all or none.
    pub logs: Vec<Log>,
}

/// How a store's writes are grouped ([`group::GroupCommitter`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct GroupOptions {
    /// Groups written at the same time (each its own transaction).
    pub writers: usize,
    /// The most logs waiting to be written; a batch that would pass it is refused at once
    /// ([`StoreError::Overloaded`]), so memory stays flat however long an overload lasts.
    pub max_queued_logs: usize,
    /// How long a batch may wait for a writer to take it before it is refused
    /// ([`StoreError::Overloaded`]); once taken, it is written and answered.
    pub max_wait: std::time::Duration,
    /// A group takes no more batches once it holds this many logs (one batch may pass it).
    pub max_rows: usize,
    /// How long a writer that found one batch waits for more before it writes; zero writes
    /// what is queued at once (the batches that arrive meanwhile make the next group).
    pub linger: std::time::Duration,
}

impl Default for GroupOptions {
    fn default() -> Self {
        Self {
            writers: 1,
            max_rows: 10_000,
            linger: std::time::Duration::ZERO,
            max_queued_logs: DEFAULT_MAX_QUEUED_LOGS,
            max_wait: DEFAULT_MAX_WAIT,
        }
    }
}

/// The default of [`GroupOptions::max_queued_logs`] (`SLUICE_WRITE_QUEUE_LOGS`): 100,000 logs,
/// ten of the largest groups, a few hundred MB at most.
pub const DEFAULT_MAX_QUEUED_LOGS: usize = 100_000;

/// The default of [`GroupOptions::max_wait`] (`SLUICE_WRITE_QUEUE_WAIT_MS`): 800 ms, so an
/// overloaded service refuses within a second, where a group commit takes milliseconds.
pub const DEFAULT_MAX_WAIT: std::time::Duration = std::time::Duration::from_millis(800);

/// Writes a group batch by batch, each with its own answer, in order: a group without a
/// shared transaction.
pub async fn one_by_one<'a, Write, Written>(group: &'a [WriteBatch], mut write: Write) -> Vec<Result<(), StoreError>>
where
    Write: FnMut(&'a WriteBatch) -> Written,
    Written: Future<Output = Result<(), StoreError>>,
{
    let mut answers = Vec::with_capacity(group.len());
    for batch in group {
        answers.push(write(batch).await);
    }
    answers
}

/// The answer of a group of one batch ([`LogWrites::insert_group`]).
pub fn only_answer(mut answers: Vec<Result<(), StoreError>>) -> Result<(), StoreError> {
    answers.pop().unwrap_or_else(|| Err(StoreError::Backend("the store gave no answer".into())))
}

/// The list filters and the search, as the block format evaluates them (one definition, in
/// the pure crate both stores call).
pub use sluice_blocks::{LogFilter, Search};

/// Which slice of the ordered results to return.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Page {
    /// Items to return, at least 1.
    pub limit: u32,
    /// Items to skip.
    pub offset: u64,
}

/// One page of logs, newest first (`timestamp` desc, then `id` desc).
#[derive(Debug, Clone, PartialEq)]
pub struct LogPage {
    /// The logs of this page.
    pub logs: Vec<Log>,
    /// True exactly when at least one more matching log follows this page.
    pub has_more: bool,
}

/// A key to store: its record and the BLAKE3 hash of its secret text.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct NewApiKey {
    /// Everything but the secret.
    pub record: ApiKeyRecord,
    /// BLAKE3 of the key text; the text itself is never stored.
    pub hash: [u8; 32],
}

/// Writing logs: a batch or a group of them, and the quota they count against. Every call is
/// scoped to one workspace.
#[async_trait]
pub trait LogWrites: Send + Sync {
    /// Stores every log of the batch, or none of them. When this returns `Ok`, the logs are
    /// durable and visible to every read. In the same transaction the logs are counted in the
    /// workspace's usage of the month they are accepted in ([`accepted_month`]); a batch that
    /// would take that past the workspace's `logs_per_month`, as stored when the transaction
    /// runs, is refused whole with [`StoreError::QuotaExceeded`].
    async fn insert_logs(&self, workspace: WorkspaceId, logs: &[Log]) -> Result<(), StoreError>;

    /// Stores several batches in one transaction (a group commit). Each batch is counted
    /// against its own workspace's quota as [`LogWrites::insert_logs`] counts one: a refused
    /// batch gets [`StoreError::QuotaExceeded`] in its place of the answer and stores nothing,
    /// while the others are stored. `Ok` means every batch answered `Ok` is durable and
    /// visible; `Err` means none of the group was stored. By default each batch is written by
    /// its own `insert_logs`, which keeps the answers but not the single transaction.
    async fn insert_group(&self, group: &[WriteBatch]) -> Result<Vec<Result<(), StoreError>>, StoreError> {
        Ok(one_by_one(group, |batch| self.insert_logs(batch.workspace, &batch.logs)).await)
    }

    /// How this store's writes are best grouped; one writer and no lingering by default.
    fn group_options(&self) -> GroupOptions {
        GroupOptions::default()
    }

    /// Logs the workspace was sent in the UTC month starting at `month_ms`
    /// ([`sluice_model::calendar::month_start_ms`]).
    async fn monthly_usage(&self, workspace: WorkspaceId, month_ms: i64) -> Result<u64, StoreError>;
}

/// What a page read asks for: the logs `filter` keeps, and of those the ones `search`
/// matches when there is a search.
#[derive(Debug, Clone, Copy)]
pub struct PageRead<'a> {
    /// The filter every log on the page meets.
    pub filter: &'a LogFilter,
    /// The search every log on the page matches, if any.
    pub search: Option<&'a Search>,
    /// Where the page starts and how long it is.
    pub page: Page,
}

/// Reading logs: pages of a filtered list or of a search, and single logs.
#[async_trait]
pub trait LogReads: Send + Sync {
    /// One page of the workspace's logs that `read` keeps, newest first: what
    /// [`LogReads::list_logs`] and [`LogSearch::search_logs`] answer. With a search, an index
    /// may propose candidates; only logs for which [`Search::matches`] holds are returned, and a
    /// query with an indexable needle ([`sluice_query::Query::index_groups`]) must not scan the
    /// workspace's logs.
    async fn read_page(&self, workspace: WorkspaceId, read: PageRead<'_>) -> Result<LogPage, StoreError>;

    /// One page of the workspace's logs matching `filter`, newest first.
    async fn list_logs(&self, workspace: WorkspaceId, filter: &LogFilter, page: Page) -> Result<LogPage, StoreError> {
        self.read_page(workspace, PageRead { filter, search: None, page }).await
    }

    /// One log of the workspace; `None` when it does not exist or belongs to another one.
    async fn get_log(&self, workspace: WorkspaceId, id: LogId) -> Result<Option<Log>, StoreError>;

    /// The workspace's logs stored after `after` (ids are UUID v7, so in the order they were
    /// accepted), the latest `limit` of them, oldest first: a live tail's replay.
    async fn logs_after(&self, workspace: WorkspaceId, after: LogId, limit: u32) -> Result<Vec<Log>, StoreError>;
}

/// Searching logs with the query language: every store that reads pages
/// ([`LogReads::read_page`]) searches them.
#[async_trait]
pub trait LogSearch: Send + Sync {
    /// One page of the workspace's logs matching `search` and `filter`, newest first.
    async fn search_logs(
        &self,
        workspace: WorkspaceId,
        search: &Search,
        filter: &LogFilter,
        page: Page,
    ) -> Result<LogPage, StoreError>;
}

#[async_trait]
impl<T: LogReads> LogSearch for T {
    async fn search_logs(
        &self,
        workspace: WorkspaceId,
        search: &Search,
        filter: &LogFilter,
        page: Page,
    ) -> Result<LogPage, StoreError> {
        self.read_page(workspace, PageRead { filter, search: Some(search), page }).await
    }
}

/// Counting logs per level, from the rollup counters.
#[async_trait]
pub trait LogCounts: Send + Sync {
    /// Logs per level of the workspace whose timestamp is in `from_ms..to_ms` (whole UTC
    /// hours), matching `filter`, grouped by hour or by source. Read from rollup counters
    /// kept in the same transaction as every insert and delete, so the cost follows the
    /// number of buckets, not of logs. Buckets with no logs may be left out.
    async fn level_counts(&self, workspace: WorkspaceId, read: CountsRead<'_>) -> Result<Vec<LevelCount>, StoreError>;
}

/// What a count read asks for: the logs in `from_ms..to_ms` (whole UTC hours) that `filter`
/// keeps, grouped `by` hour, day or source.
#[derive(Debug, Clone, Copy)]
pub struct CountsRead<'a> {
    /// Start of the range, Unix ms, inclusive.
    pub from_ms: i64,
    /// End of the range, Unix ms, exclusive.
    pub to_ms: i64,
    /// The exact fields every counted log has.
    pub filter: &'a RollupFilter,
    /// How the counts are grouped.
    pub by: CountBy,
}

/// Retention: deleting logs past a cutoff.
#[async_trait]
pub trait LogRetention: Send + Sync {
    /// Deletes the workspace's logs with a timestamp before `cutoff_ms` (retention), in
    /// bounded transactions that keep the search index and the rollups in step; returns how
    /// many were deleted.
    async fn delete_logs_before(&self, workspace: WorkspaceId, cutoff_ms: i64) -> Result<u64, StoreError>;

    /// Retention for every workspace at once: deletes each named workspace's logs older than
    /// its cutoff and returns how many went. A store may drop whole stretches of time (a
    /// partition) that every workspace's cutoff has passed; a workspace left out of
    /// `cutoffs` keeps all its logs. By default, [`LogRetention::delete_logs_before`] per workspace.
    async fn sweep(&self, cutoffs: &[(WorkspaceId, i64)]) -> Result<u64, StoreError> {
        let mut deleted = 0;
        for (workspace, cutoff) in cutoffs {
            deleted += self.delete_logs_before(*workspace, *cutoff).await?;
        }
        Ok(deleted)
    }
}

/// Flows: the logs that share a `flowId`, summed in counters every insert and delete keeps
/// ([`flows`]).
#[async_trait]
pub trait LogFlows: Send + Sync {
    /// Stores a flow made before its logs (`POST /v1/flows`). A flow id logs already name
    /// keeps its counters and takes the name and creation time.
    async fn create_flow(&self, workspace: WorkspaceId, flow: &flows::NewFlow) -> Result<(), StoreError>;

    /// One page of the workspace's flows matching `filter`, the most recently active first
    /// (last log's timestamp, or creation time while a flow has none; then flow id, descending).
    /// Read from the flow counters, so the cost follows the page, not the workspace.
    async fn list_flows(
        &self,
        workspace: WorkspaceId,
        read: flows::FlowsRead<'_>,
    ) -> Result<flows::FlowPage, StoreError>;

    /// One flow's summary, gaps, duplicates and up to [`flows::TIMELINE_MAX_LOGS`] logs;
    /// `None` when the workspace has no log naming it and made no such flow.
    async fn flow_timeline(
        &self,
        workspace: WorkspaceId,
        flow_id: &str,
    ) -> Result<Option<flows::FlowTimeline>, StoreError>;
}

/// Every log operation, one trait per concern so a store implements each in the module of
/// that concern. Implemented for every type that implements the six.
pub trait LogStore: LogWrites + LogReads + LogSearch + LogCounts + LogRetention + LogFlows {}

impl<T: LogWrites + LogReads + LogSearch + LogCounts + LogRetention + LogFlows + ?Sized> LogStore for T {}

/// The store traits, for code that calls their methods on a concrete store.
pub mod prelude {
    pub use crate::accounts::AccountStore;
    pub use crate::{LogCounts, LogFlows, LogReads, LogRetention, LogSearch, LogStore, LogWrites, Store, TenantStore};
}

/// Workspaces and API keys: what the admin CLI writes and authentication reads.
#[async_trait]
pub trait TenantStore: Send + Sync {
    /// Stores a new workspace.
    async fn create_workspace(&self, workspace: &Workspace) -> Result<(), StoreError>;

    /// Every workspace, oldest first.
    async fn list_workspaces(&self) -> Result<Vec<Workspace>, StoreError>;

    /// One workspace, if it exists.
    async fn get_workspace(&self, id: WorkspaceId) -> Result<Option<Workspace>, StoreError>;

    /// Puts a workspace on `plan` with `limits` in force; [`StoreError::NotFound`] when there
    /// is no such workspace.
    async fn set_plan(&self, id: WorkspaceId, plan: Plan, limits: Limits) -> Result<(), StoreError>;

    /// Stores a new key.
    async fn create_key(&self, key: &NewApiKey) -> Result<(), StoreError>;

    /// Every key of a workspace, oldest first.
    async fn list_keys(&self, workspace: WorkspaceId) -> Result<Vec<ApiKeyRecord>, StoreError>;

    /// Marks a key revoked at `now_ms` (a second revoke keeps the first time);
    /// [`StoreError::NotFound`] when there is no such key.
    async fn revoke_key(&self, id: KeyId, now_ms: i64) -> Result<(), StoreError>;

    /// The key whose secret hashes to `hash`, with its workspace.
    async fn find_key(&self, hash: &[u8; 32]) -> Result<Option<(ApiKeyRecord, Workspace)>, StoreError>;

    /// Stores `workspace` and `key` only when the store holds no workspace yet, in one
    /// transaction, so two servers starting together bootstrap once. True when it stored them.
    async fn bootstrap(&self, workspace: &Workspace, key: &NewApiKey) -> Result<bool, StoreError>;
}

/// A complete backend.
#[async_trait]
pub trait Store: LogStore + TenantStore + accounts::AccountStore {
    /// Succeeds when the database would accept a write now (readiness).
    async fn ping(&self) -> Result<(), StoreError>;

    /// Housekeeping the server runs at start and every hour (PostgreSQL: creates the coming
    /// days' partitions). Nothing by default.
    async fn maintain(&self) -> Result<(), StoreError> {
        Ok(())
    }

    /// How far the conversion of stored logs into this build's layout is ([`upgrade`]), when
    /// this start found some to convert; `None` otherwise (by default).
    fn upgrade_progress(&self) -> Option<tokio::sync::watch::Receiver<upgrade::Progress>> {
        None
    }

    /// The connection pool's state now, for `/metrics`; `None` for a store without one.
    fn pool_status(&self) -> Option<PoolStatus> {
        None
    }

    /// Tells the other servers sharing this database that these batches were committed (each
    /// a workspace and its logs' ids and timestamps), for their live tails: those of the
    /// workspaces another server watches ([`Store::watch`]) when this reads who watches, after
    /// the batches' commit. Nothing by default: a store no other server shares.
    async fn announce(&self, _batches: &[Announced]) -> Result<(), StoreError> {
        Ok(())
    }

    /// Tells the other servers sharing this database that this one has a live tail of each of
    /// `workspaces` open, for [`WATCH_SECONDS`]: they announce their batches of those
    /// workspaces ([`Store::announce`]) from the moment this returns `Ok` until it lapses, and
    /// nothing of the workspaces no server watches. A server calls it before a tail's stream
    /// starts, and again for its open tails well within [`WATCH_SECONDS`]. Nothing by default:
    /// a store no other server shares.
    async fn watch(&self, _workspaces: &[WorkspaceId]) -> Result<(), StoreError> {
        Ok(())
    }

    /// Follows what other servers sharing this database announce ([`Store::announce`]) until
    /// `stop` turns true: each announced batch of a workspace `watched` accepts is read back
    /// and handed to `deliver`. False when there is no other server to follow (by default).
    fn follow(&self, _watched: Watched, _deliver: Deliver, _stop: tokio::sync::watch::Receiver<bool>) -> bool {
        false
    }
}

/// How long a [`Store::watch`] holds: another server announces a workspace's batches for this
/// long after a server last said it watches it.
pub const WATCH_SECONDS: u64 = 60;

/// A connection pool's state ([`Store::pool_status`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct PoolStatus {
    /// The most connections it opens.
    pub max: usize,
    /// Connections open now.
    pub open: usize,
    /// Of those, idle.
    pub idle: usize,
    /// Calls waiting for a connection.
    pub waiting: usize,
}

/// One committed batch as announced to other servers: its workspace, and its logs' ids and
/// timestamps (which bound the reads that fetch them back).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Announced {
    /// Whose logs.
    pub workspace: WorkspaceId,
    /// Each log's id and timestamp, in the batch's order.
    pub logs: Vec<(LogId, i64)>,
}

/// Whether this server has a live tail of a workspace ([`Store::follow`]).
pub type Watched = std::sync::Arc<dyn Fn(WorkspaceId) -> bool + Send + Sync>;

/// Where [`Store::follow`] hands another server's committed logs, in its batch's order.
pub type Deliver = std::sync::Arc<dyn Fn(WorkspaceId, Vec<Log>) + Send + Sync>;
