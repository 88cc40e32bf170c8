//! The embedded SQLite store: sluice's default, one file, no server to run.
//!
//! Diesel over a bundled SQLite in WAL mode, so readers never wait for the writer and several
//! processes (a server and the admin CLI) can share the file. Connections live in a deadpool
//! pool; each call runs on a blocking thread so the async runtime never stalls on disk.
//! Writes take `BEGIN IMMEDIATE` and `synchronous = FULL`, so a returned `Ok` is on disk.

mod index;
pub mod naive;
mod rows;
mod schema;

use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex, PoisonError};
use std::time::Duration;

use async_trait::async_trait;
use deadpool_diesel::sqlite::{Hook, HookError, Manager, Pool, Runtime};
use diesel::connection::{DefaultLoadingMode, SimpleConnection};
use diesel::prelude::*;
use diesel::result::{DatabaseErrorKind, Error as DieselError};
use diesel::sql_types::{BigInt, Binary, Nullable, Text};
use diesel::sqlite::Sqlite;
use diesel_migrations::{EmbeddedMigrations, MigrationHarness, embed_migrations};
use sluice_model::{ApiKeyRecord, KeyId, Limits, Log, LogId, Plan, Workspace, WorkspaceId};
use sluice_query::stats::{Bucket, CountBy, LevelCount, MS_PER_DAY, RollupFilter, day_start_ms};
use sluice_store::{Batch, LogFilter, LogPage, LogStore, NewApiKey, Page, Search, Store, StoreError, TenantStore};

use crate::rows::{KeyRow, LogRow, NewKeyRow, NewLogRow, PlanChange, RollupKey, WorkspaceRow, rollup_deltas};
use crate::schema::{api_keys, logs, usage_monthly, workspaces};

const MIGRATIONS: EmbeddedMigrations = embed_migrations!("../../migrations/sqlite");

/// Rows per multi-row `INSERT`: 20 bound values each keeps a statement well under SQLite's
/// limit of 32,766 variables, whatever the batch size.
const ROWS_PER_INSERT: usize = 500;

/// Logs deleted per retention transaction: bounded, so a large sweep never holds the write
/// lock for long, and well under SQLite's bound-variable limit.
const DELETE_BATCH: i64 = 5_000;

/// The workspace's logs matching `filter`, as a query still open to more conditions.
fn filtered(workspace: &WorkspaceId, filter: &LogFilter) -> logs::BoxedQuery<'static, Sqlite> {
    let mut query = logs::table.filter(logs::workspace_id.eq(workspace.as_bytes().to_vec())).into_boxed();
    if let Some(level) = filter.level {
        query = query.filter(logs::level.eq(level.as_str()));
    }
    if let Some(environment) = filter.environment {
        query = query.filter(logs::environment.eq(environment.as_str()));
    }
    if let Some(source) = filter.source.clone() {
        query = query.filter(logs::source.eq(source));
    }
    if let Some(dataset) = filter.dataset.clone() {
        query = query.filter(logs::dataset.eq(dataset));
    }
    if let Some(user_id) = filter.user_id.clone() {
        query = query.filter(logs::user_id.eq(user_id));
    }
    if let Some(session_id) = filter.session_id.clone() {
        query = query.filter(logs::session_id.eq(session_id));
    }
    if let Some(flow_id) = filter.flow_id.clone() {
        query = query.filter(logs::flow_id.eq(flow_id));
    }
    if let Some(from) = filter.from {
        query = query.filter(logs::ts.ge(from));
    }
    if let Some(to) = filter.to {
        query = query.filter(logs::ts.le(to));
    }
    query
}

/// The columns a search reads of each log.
const LOG_COLUMNS: &str = "logs.id, logs.ts, logs.level, logs.environment, logs.source, logs.dataset, \
     logs.message, logs.version, logs.user_id, logs.session_id, logs.request_id, logs.data, logs.error_name, \
     logs.error_stack, logs.tags, logs.flow_id, logs.step_index, logs.country, logs.ip_address";

/// The filters of a search, bound as `?2` (workspace) to `?8`; a filter bound as NULL does
/// not apply. Then the exact check ([`SearchScope`]), so only matches are sorted. The
/// unary `+` keeps SQLite from reading the workspace's index instead of the chunks' ranges.
const SEARCH_FILTERS: &str = "+logs.workspace_id = ?2 AND (?3 IS NULL OR logs.level = ?3) \
     AND (?4 IS NULL OR logs.source = ?4) AND (?5 IS NULL OR logs.environment = ?5) \
     AND (?6 IS NULL OR logs.dataset = ?6) AND (?7 IS NULL OR logs.ts >= ?7) AND (?8 IS NULL OR logs.ts <= ?8) \
     AND sluice_matches(logs.message, logs.error_name, logs.error_stack, logs.data)";

/// The candidate chunks of a search (`?1`, an FTS5 query) in the workspace (`?2`) whose time
/// span meets the filter's (`?3`, `?4`), up to seq `?5`: the index's hits drive (`CROSS JOIN`).
/// The search reads the logs past `?5`, the unindexed tail when it started, whole; chunks
/// written since are left out, their logs being in that tail.
const CHUNK_HITS_SQL: &str = "SELECT chunk.id AS first, chunk.last_seq AS last \
     FROM (SELECT rowid AS hit FROM log_chunks_fts WHERE log_chunks_fts MATCH ?1) AS hits \
     CROSS JOIN log_chunks AS chunk ON chunk.id = hits.hit \
     WHERE chunk.workspace_id = ?2 AND chunk.last_seq <= ?5 \
     AND (?3 IS NULL OR chunk.max_ts >= ?3) AND (?4 IS NULL OR chunk.min_ts <= ?4)";

/// The matching logs of given chunks (`?1`, a JSON array of `[first, last]` seqs), each
/// chunk read as a range of `seq`, newest first.
fn chunk_logs_sql() -> String {
    format!(
        "SELECT {LOG_COLUMNS} FROM json_each(?1) AS chunk \
         CROSS JOIN logs ON logs.seq BETWEEN chunk.value ->> 0 AND chunk.value ->> 1 \
         WHERE {SEARCH_FILTERS} ORDER BY logs.ts DESC, logs.id DESC"
    )
}

/// The matching logs of every candidate chunk of `?1` up to seq `?9`, and of the logs past it
/// (the unindexed tail), newest first.
fn all_candidates_sql() -> String {
    format!(
        "SELECT {LOG_COLUMNS} FROM ( \
           SELECT chunk.id AS first, chunk.last_seq AS last \
           FROM (SELECT rowid AS hit FROM log_chunks_fts WHERE log_chunks_fts MATCH ?1) AS hits \
           CROSS JOIN log_chunks AS chunk ON chunk.id = hits.hit \
           WHERE chunk.workspace_id = ?2 AND chunk.last_seq <= ?9 \
           UNION ALL SELECT ?9 + 1, {TAIL_END}) AS ranges \
         CROSS JOIN logs ON logs.seq BETWEEN ranges.first AND ranges.last \
         WHERE {SEARCH_FILTERS} ORDER BY logs.ts DESC, logs.id DESC"
    )
}

/// The last seq of the unindexed tail's range: past any log.
const TAIL_END: i64 = i64::MAX;

/// One candidate chunk: its first and last seq.
#[derive(QueryableByName)]
struct ChunkHit {
    #[diesel(sql_type = BigInt)]
    first: i64,
    #[diesel(sql_type = BigInt)]
    last: i64,
}

/// The page of `rows` (newest first) that `search` accepts: skips `offset` matches, keeps
/// `limit`, and stops at the first match after them (`has_more`). Also returns how many rows
/// were read.
fn collect_page(
    rows: impl Iterator<Item = Result<LogRow, DieselError>>,
    search: &Search,
    page: Page,
) -> Result<(LogPage, usize), StoreError> {
    let mut skipped = 0;
    let mut read = 0;
    let mut logs = Vec::new();
    let mut has_more = false;
    for row in rows {
        let row = row.map_err(from_diesel)?;
        read += 1;
        if !row.matches(search) {
            continue;
        }
        if skipped < page.offset {
            skipped += 1;
        } else if logs.len() == page.limit as usize {
            has_more = true;
            break;
        } else {
            logs.push(Log::try_from(row)?);
        }
    }
    Ok((LogPage { logs, has_more }, read))
}

/// One summed rollup counter, as `level_counts` reads it.
#[derive(QueryableByName)]
struct CountRow {
    #[diesel(sql_type = BigInt)]
    hour: i64,
    #[diesel(sql_type = Text)]
    source: String,
    #[diesel(sql_type = Text)]
    level: String,
    #[diesel(sql_type = BigInt)]
    total: i64,
}

/// The rollup query of one grouping: `{table}`/`{at}` name the hourly or daily counters,
/// `{group}` the bucket expression, `{source}` the source column or `''` and `{scope}` the
/// environment and dataset conditions. Each filter applies only when bound non-null, so one
/// statement serves every combination.
const COUNTS_SQL: &str = "SELECT {group} AS hour, {source} AS source, level, SUM(count) AS total \
     FROM {table} WHERE workspace_id = ?1 AND {at} >= ?2 AND {at} < ?3 \
     AND (?4 IS NULL OR source = ?4) AND {scope} \
     GROUP BY 1, 2, level";

/// `{scope}` for the tables that keep environment and dataset.
const SCOPE_FILTERS: &str = "(?5 IS NULL OR environment = ?5) AND (?6 IS NULL OR dataset = ?6)";

/// The midnight at or before a Unix ms, in SQL (also before 1970).
const DAY_OF_HOUR: &str = "(hour - (((hour % 86400000) + 86400000) % 86400000))";

/// The statement for `by` over `from_ms..to_ms`: whole UTC days read the daily counters (the
/// ones without environment and dataset when `narrow`, i.e. neither is filtered on), anything
/// else the hourly ones.
fn counts_sql(by: CountBy, from_ms: i64, to_ms: i64, narrow: bool) -> String {
    let whole_days = from_ms.rem_euclid(MS_PER_DAY) == 0 && to_ms.rem_euclid(MS_PER_DAY) == 0;
    let (table, at, scope) = match (whole_days && by != CountBy::Hour, narrow) {
        // The narrow table has neither column; both parameters are bound as NULL.
        (true, true) => ("log_rollups_daily_sources", "day", "?5 IS NULL AND ?6 IS NULL"),
        (true, false) => ("log_rollups_daily", "day", SCOPE_FILTERS),
        (false, _) => ("log_rollups", "hour", SCOPE_FILTERS),
    };
    let (group, source) = match by {
        CountBy::Hour => ("hour", "''"),
        CountBy::Day if whole_days => ("day", "''"),
        CountBy::Day => (DAY_OF_HOUR, "''"),
        CountBy::Source => ("0", "source"),
    };
    COUNTS_SQL
        .replace("{table}", table)
        .replace("{at}", at)
        .replace("{group}", group)
        .replace("{source}", source)
        .replace("{scope}", scope)
}

/// The counter tables: name, time column, and whether they keep environment and dataset.
const ROLLUP_TABLES: [(&str, &str, bool); 3] =
    [("log_rollups", "hour", true), ("log_rollups_daily", "day", true), ("log_rollups_daily_sources", "day", false)];

/// Adds `delta` (negative on delete) to every counter of `key` (hourly, daily, daily without
/// environment and dataset), removing a counter that reaches 0.
fn add_to_rollup(connection: &mut SqliteConnection, key: &RollupKey, delta: i64) -> Result<(), DieselError> {
    for (table, at, scoped) in ROLLUP_TABLES {
        let start = if at == "hour" { key.hour } else { day_start_ms(key.hour) };
        // Numbered parameters: every statement binds the same values; a table without
        // environment and dataset leaves ?4 and ?5 unused.
        let (columns, values) = if scoped {
            (format!("workspace_id, {at}, source, environment, dataset, level"), "?1, ?2, ?3, ?4, ?5, ?6")
        } else {
            (format!("workspace_id, {at}, source, level"), "?1, ?2, ?3, ?6")
        };
        let scope = if scoped { "AND environment = ?4 AND dataset = ?5" } else { "" };
        diesel::sql_query(format!(
            "INSERT INTO {table} ({columns}, count) VALUES ({values}, ?7) \
             ON CONFLICT ({columns}) DO UPDATE SET count = count + excluded.count"
        ))
        .bind::<Binary, _>(&key.workspace_id)
        .bind::<BigInt, _>(start)
        .bind::<Text, _>(key.source.as_str())
        .bind::<Text, _>(&key.environment)
        .bind::<Text, _>(key.dataset.as_str())
        .bind::<Text, _>(&key.level)
        .bind::<BigInt, _>(delta)
        .execute(connection)?;
        if delta < 0 {
            diesel::sql_query(format!(
                "DELETE FROM {table} WHERE workspace_id = ?1 AND {at} = ?2 AND source = ?3 {scope} \
                 AND level = ?6 AND count <= 0"
            ))
            .bind::<Binary, _>(&key.workspace_id)
            .bind::<BigInt, _>(start)
            .bind::<Text, _>(key.source.as_str())
            .bind::<Text, _>(&key.environment)
            .bind::<Text, _>(key.dataset.as_str())
            .bind::<Text, _>(&key.level)
            .execute(connection)?;
        }
    }
    Ok(())
}

/// Tuning of the SQLite store.
#[derive(Debug, Clone)]
pub struct SqliteOptions {
    /// Connections in the pool (readers run in parallel; writers queue on SQLite's lock).
    pub pool_size: usize,
    /// How long a writer waits for another's lock before the call fails as unavailable.
    pub busy_timeout: Duration,
    /// How long a call waits for a free connection.
    pub wait_timeout: Duration,
    /// A search whose index lookup finds chunks holding more than this many logs (in the
    /// workspace) first walks the workspace's newest logs instead: a common needle fills a
    /// page within a few thousand logs, while reading every candidate would cost them all.
    pub search_dense_hits: u32,
    /// How many logs such a walk reads at most before it falls back to the index's
    /// candidates, so a needle common elsewhere but rare here never walks the whole workspace.
    pub search_walk_rows: u32,
    /// The most logs one document of the search index covers ([`index`]): more make ingest
    /// cheaper (fewer distinct trigrams per log) and a rare needle's search read more logs.
    pub index_chunk_rows: usize,
    /// How often a thread of the store's own indexes the logs committed since its last round
    /// ([`index`]), off the writes' path; searches read those logs whole meanwhile. `None`:
    /// each insert indexes its own logs after its commit, before it returns (tests use it to
    /// reach the chunk paths at once).
    pub index_every: Option<Duration>,
}

impl Default for SqliteOptions {
    fn default() -> Self {
        Self {
            pool_size: 8,
            busy_timeout: Duration::from_secs(5),
            wait_timeout: Duration::from_secs(5),
            search_dense_hits: 50_000,
            search_walk_rows: 100_000,
            index_chunk_rows: 256,
            index_every: Some(Duration::from_millis(200)),
        }
    }
}

/// The SQLite file a `sqlite://` URL names: `sqlite://rel/path.db` is relative to the working
/// directory, `sqlite:///abs/path.db` absolute. `None` for any other scheme.
pub fn path_from_url(url: &str) -> Option<PathBuf> {
    let rest = url.strip_prefix("sqlite://")?;
    (!rest.is_empty()).then(|| PathBuf::from(rest))
}

/// A store in one SQLite file.
#[derive(Clone)]
pub struct SqliteStore {
    pool: Pool,
    dense_hits: u32,
    walk_rows: u32,
    chunk_rows: usize,
    /// `None` when each insert indexes its own logs ([`SqliteOptions::index_every`]).
    index_every: Option<Duration>,
    /// Held by whoever takes SQLite's write lock in this process for logs (inserts, the
    /// index's rounds, retention, and the checkpoint that starts the log over), so they hand
    /// it to each other at once instead of through SQLite's busy handler, which sleeps in
    /// steps of up to 100 ms.
    write_lock: Arc<Mutex<()>>,
    /// Runs while any clone of the store lives.
    _background: Arc<Background>,
}

impl std::fmt::Debug for SqliteStore {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("SqliteStore").field("pool", &self.pool.status()).finish()
    }
}

fn backend(error: impl std::fmt::Display) -> StoreError {
    StoreError::Backend(error.to_string())
}

/// Diesel's error in our terms: a busy or locked database is "unavailable", a retry may work.
fn from_diesel(error: DieselError) -> StoreError {
    match &error {
        DieselError::DatabaseError(DatabaseErrorKind::Unknown, info)
            if info.message().contains("locked") || info.message().contains("busy") =>
        {
            StoreError::Unavailable(error.to_string())
        }
        _ => backend(error),
    }
}

/// Counts `?3` logs in the workspace's usage of month `?2`, unless that would pass its quota
/// (as stored now; no workspace row means no quota): then nothing is counted and no row comes
/// back. Run under the write lock, so batches are counted one after another. Public for the
/// benchmark of what the check costs an insert.
pub const COUNT_USAGE: &str = "INSERT INTO usage_monthly AS u (workspace_id, month, logs) \
     SELECT ?1, ?2, ?3 FROM (SELECT (SELECT monthly_quota FROM workspaces WHERE id = ?1) AS q) AS quota \
     WHERE q IS NULL OR ?3 <= q \
     ON CONFLICT (workspace_id, month) DO UPDATE SET logs = u.logs + excluded.logs \
     WHERE (SELECT monthly_quota FROM workspaces WHERE id = ?1) IS NULL \
     OR u.logs + excluded.logs <= (SELECT monthly_quota FROM workspaces WHERE id = ?1) \
     RETURNING logs";

/// A row of [`COUNT_USAGE`]'s answer.
#[derive(QueryableByName)]
struct Counted {
    #[diesel(sql_type = BigInt)]
    #[diesel(column_name = logs)]
    _logs: i64,
}

/// Counts a batch's logs in its workspace's usage of each month (see [`COUNT_USAGE`]); false,
/// with nothing counted, when that would pass the quota. A batch of one month (nearly all) is
/// one statement that changes nothing when refused; one that spans months counts them inside a
/// savepoint, undone when a later month refuses.
fn count_usage(
    connection: &mut SqliteConnection,
    workspace: &WorkspaceId,
    months: &[(i64, i64)],
) -> Result<bool, DieselError> {
    let count = |connection: &mut SqliteConnection| -> Result<bool, DieselError> {
        for (month, count) in months {
            let counted: Vec<Counted> = diesel::sql_query(COUNT_USAGE)
                .bind::<Binary, _>(workspace.as_bytes().as_slice())
                .bind::<BigInt, _>(*month)
                .bind::<BigInt, _>(*count)
                .load(connection)?;
            if counted.is_empty() {
                return Ok(false);
            }
        }
        Ok(true)
    };
    if months.len() <= 1 {
        return count(connection);
    }
    match connection
        .transaction(|connection| if count(connection)? { Ok(()) } else { Err(DieselError::RollbackTransaction) })
    {
        Ok(()) => Ok(true),
        Err(DieselError::RollbackTransaction) => Ok(false),
        Err(error) => Err(error),
    }
}

/// What a batch needs under the write lock, worked out before it is taken: its counter
/// changes and its logs per month.
struct PreparedBatch {
    deltas: std::collections::BTreeMap<RollupKey, i64>,
    months: Vec<(i64, i64)>,
}

impl PreparedBatch {
    fn new(batch: &Batch) -> Self {
        Self {
            deltas: rollup_deltas(batch.logs.iter().map(|log| RollupKey::of(&batch.workspace, log))),
            months: sluice_store::logs_per_month(&batch.logs),
        }
    }
}

/// SQL functions written in Rust, registered on every connection.
mod functions {
    use diesel::sql_types::{Nullable, Text};

    diesel::define_sql_function! {
        /// The exact check of the search under way on this thread ([`super::SearchScope`]) on a
        /// log's searchable fields.
        fn sluice_matches(message: Text, error_name: Nullable<Text>, error_stack: Nullable<Text>, data: Nullable<Text>) -> Bool;
    }
}

thread_local! {
    /// The search whose statement runs on this thread: SQLite calls `sluice_matches` on the
    /// thread that steps the statement, the one the connection is lent to.
    static CURRENT_SEARCH: std::cell::RefCell<Option<Search>> = const { std::cell::RefCell::new(None) };
}

/// Makes `sluice_matches` the exact check of a search on this thread until dropped, so a
/// statement drops the logs that fail it before it sorts (a candidate chunk holds hundreds of
/// logs for each that matches). The function is registered once per connection: registering
/// it again would make SQLite discard every statement the connection has prepared.
struct SearchScope;

impl SearchScope {
    fn enter(search: &Search) -> Self {
        CURRENT_SEARCH.with(|current| *current.borrow_mut() = Some(search.clone()));
        SearchScope
    }
}

impl Drop for SearchScope {
    fn drop(&mut self) {
        CURRENT_SEARCH.with(|current| *current.borrow_mut() = None);
    }
}

/// Registers [`functions`] on a connection.
fn register_functions(connection: &mut SqliteConnection) -> QueryResult<()> {
    functions::sluice_matches_utils::register_impl(
        connection,
        |message: String, error_name: Option<String>, error_stack: Option<String>, data: Option<String>| {
            // Outside a search scope nothing is filtered; every path checks again in Rust.
            CURRENT_SEARCH.with(|current| {
                current.borrow().as_ref().is_none_or(|search| {
                    search.matches(&message, error_name.as_deref(), error_stack.as_deref(), data.as_deref())
                })
            })
        },
    )
}

/// How often the background thread checkpoints when it does not index ([`SqliteOptions::index_every`]).
const CHECKPOINT_EVERY: Duration = Duration::from_millis(200);

/// The store's own thread, off the writes' path, on the other core: each round it indexes
/// the logs committed since the last ([`index::index_tail`]), then checkpoints.
///
/// Checkpoints: SQLite's default has the connection that commits past 1,000 WAL pages copy
/// the log into the database file inside that commit, which put about a tenth of the write
/// path's time and its slowest commits on the one writer. Here no connection checkpoints at
/// commit (`wal_autocheckpoint = 0`); this thread runs a passive checkpoint each round.
/// It stops, after a last round and a full checkpoint, when the store is dropped.
struct Background {
    /// Dropped with the store, which tells the thread to finish.
    _running: std::sync::mpsc::Sender<()>,
}

impl Background {
    fn start(
        mut connection: SqliteConnection,
        write_lock: Arc<Mutex<()>>,
        options: &SqliteOptions,
    ) -> Result<Self, StoreError> {
        // A restart checkpoint holds new writers back while it waits for readers: it waits
        // 50 ms at most, then gives up until the next round, so a long search cannot stall
        // the writer behind it.
        connection.batch_execute("PRAGMA busy_timeout = 50;").map_err(backend)?;
        let (running, stopped) = std::sync::mpsc::channel::<()>();
        let (index_every, chunk_rows) = (options.index_every, options.index_chunk_rows);
        // A round indexes at most ROUND_LOGS, so checkpoints keep their pace while ingest
        // outruns the index; it answers whether the tail had more, and the next starts at once.
        let round = move |connection: &mut SqliteConnection| {
            let mut more = false;
            if index_every.is_some() {
                match index::index_tail(connection, &write_lock, chunk_rows, ROUND_LOGS) {
                    Ok(indexed) => more = indexed >= ROUND_LOGS,
                    Err(error) => tracing::warn!(%error, "indexing new logs failed; the next round retries"),
                }
            }
            if let Err(error) = checkpoint(connection, &write_lock) {
                tracing::warn!(%error, "WAL checkpoint failed; the next one retries");
            }
            more
        };
        std::thread::Builder::new()
            .name("sluice-sqlite-background".into())
            .spawn(move || {
                let every = index_every.unwrap_or(CHECKPOINT_EVERY);
                let mut wait = every;
                while let Err(std::sync::mpsc::RecvTimeoutError::Timeout) = stopped.recv_timeout(wait) {
                    wait = if round(&mut connection) { Duration::ZERO } else { every };
                }
                round(&mut connection);
                let _ = connection.batch_execute("PRAGMA wal_checkpoint(TRUNCATE);");
            })
            .map_err(|error| backend(format!("cannot start the background thread: {error}")))?;
        Ok(Self { _running: running })
    }
}

/// The most logs one round of the background thread indexes before it checkpoints.
const ROUND_LOGS: u64 = 16_384;

/// The unindexed tail past which an insert indexes it itself after its commit: when ingest
/// outruns the background, the tail every search reads stays bounded, and ingest slows to
/// what the index keeps up with.
const MAX_TAIL: i64 = 20_000;

/// Frames (pages) the log may hold before a checkpoint holds writers back to start it over:
/// 16 MB of 4 KiB pages. A log started over often is written over in place; one let grow made
/// every commit slower (`cargo xtask bench ingest`'s JSON at 15k logs/s offered on a file of
/// 6M logs, p99: 82–86 ms at 16 MB, 96–100 ms at 64 MB, 481 ms at 1 GB).
const WAL_RESTART_FRAMES: i64 = 4_096;

/// The answer of `PRAGMA wal_checkpoint`: frames in the log, and how many are copied.
#[derive(QueryableByName)]
struct CheckpointResult {
    #[diesel(sql_type = diesel::sql_types::Integer)]
    #[diesel(column_name = log)]
    log_frames: i32,
    #[diesel(sql_type = diesel::sql_types::Integer)]
    checkpointed: i32,
}

/// One checkpoint. A passive one copies what it can without waiting for anybody; under steady
/// writes it never copies the very last frames, so the writer never starts the log over and it
/// would grow without end. Past [`WAL_RESTART_FRAMES`] a second passive one runs holding the
/// ingest path's `write_lock`: with no commit under way it copies the rest (what came in
/// during the first), and the next commit starts the log over. SQLite's own way, a restart
/// checkpoint, blocks writers for as long through SQLite's busy handler, which wakes them up
/// to 100 ms late: measured, it made the slowest commits under load.
fn checkpoint(connection: &mut SqliteConnection, write_lock: &Mutex<()>) -> Result<(), DieselError> {
    let passive = || diesel::sql_query("PRAGMA wal_checkpoint(PASSIVE)");
    let mut result: Option<CheckpointResult> = passive().load(connection)?.pop();
    // Each pass copies what came in during the last; a few make the rest short.
    for _ in 0..3 {
        match &result {
            Some(done) if done.log_frames - done.checkpointed > 1_024 => result = passive().load(connection)?.pop(),
            _ => break,
        }
    }
    if result.is_some_and(|result| i64::from(result.log_frames) > WAL_RESTART_FRAMES) {
        let _lock = write_lock.lock().unwrap_or_else(PoisonError::into_inner);
        passive().execute(connection)?;
    }
    Ok(())
}

/// Settings every connection gets when the pool opens it. Each connection keeps its own page
/// cache, and over time the pool hands every one of them to the writer: 2 MB each (not SQLite's
/// default 8 MB here before) kept the server's peak RSS under sustained ingest from 233 MB to
/// about 150 MB at the same rate; the operating system's cache holds the file besides.
fn connection_pragmas(busy_timeout: Duration) -> String {
    format!(
        "PRAGMA busy_timeout = {}; PRAGMA synchronous = FULL; PRAGMA foreign_keys = ON; \
         PRAGMA cache_size = -2000; PRAGMA temp_store = MEMORY; PRAGMA wal_autocheckpoint = 0; \
         PRAGMA journal_size_limit = 67108864;",
        busy_timeout.as_millis()
    )
}

impl SqliteStore {
    /// Opens (creating when missing) the database at `path` with default options, and applies
    /// pending migrations. Must be called inside a Tokio runtime.
    pub fn open(path: &Path) -> Result<Self, StoreError> {
        Self::open_with(path, &SqliteOptions::default())
    }

    /// [`SqliteStore::open`] with explicit options.
    pub fn open_with(path: &Path, options: &SqliteOptions) -> Result<Self, StoreError> {
        if let Some(parent) = path.parent().filter(|parent| !parent.as_os_str().is_empty()) {
            std::fs::create_dir_all(parent)
                .map_err(|error| backend(format!("cannot create {}: {error}", parent.display())))?;
        }
        let url = path.to_str().ok_or_else(|| backend("the database path is not UTF-8"))?.to_owned();
        let pragmas = connection_pragmas(options.busy_timeout);

        let mut connection = SqliteConnection::establish(&url).map_err(backend)?;
        connection.batch_execute(&pragmas).map_err(backend)?;
        register_functions(&mut connection).map_err(backend)?;
        connection.batch_execute("PRAGMA journal_mode = WAL;").map_err(backend)?;
        connection.run_pending_migrations(MIGRATIONS).map_err(|error| backend(format!("migrations: {error}")))?;
        // Logs stored before the chunk index existed, or committed before a crash and not
        // yet indexed, get theirs.
        let write_lock = Arc::new(Mutex::new(()));
        let indexed =
            index::index_tail(&mut connection, &write_lock, options.index_chunk_rows, u64::MAX).map_err(from_diesel)?;
        if indexed > 0 {
            tracing::info!(logs = indexed, "indexed logs the search index did not cover");
        }
        let background = Arc::new(Background::start(connection, write_lock.clone(), options)?);

        let manager = Manager::new(url, Runtime::Tokio1);
        let pool = Pool::builder(manager)
            .max_size(options.pool_size)
            .runtime(Runtime::Tokio1)
            .wait_timeout(Some(options.wait_timeout))
            .create_timeout(Some(options.wait_timeout))
            .recycle_timeout(Some(options.wait_timeout))
            .post_create(Hook::async_fn(move |connection, _| {
                let pragmas = pragmas.clone();
                Box::pin(async move {
                    connection
                        .interact(move |connection| {
                            connection.batch_execute(&pragmas)?;
                            register_functions(connection)
                        })
                        .await
                        .map_err(|error| HookError::message(error.to_string()))?
                        .map_err(|error| HookError::message(error.to_string()))
                })
            }))
            .build()
            .map_err(backend)?;
        Ok(Self {
            pool,
            dense_hits: options.search_dense_hits,
            walk_rows: options.search_walk_rows,
            chunk_rows: options.index_chunk_rows,
            index_every: options.index_every,
            write_lock,
            _background: background,
        })
    }

    /// [`LogStore::insert_group`] of a group the call owns (its work runs on a blocking thread).
    async fn insert_owned(&self, group: Vec<Batch>) -> Result<Vec<Result<(), StoreError>>, StoreError> {
        let (write_lock, chunk_rows, index_now) =
            (self.write_lock.clone(), self.chunk_rows, self.index_every.is_none());
        self.with(move |connection| {
            // Counting happens before the write lock is taken.
            let prepared: Vec<PreparedBatch> = group.iter().map(PreparedBatch::new).collect();
            let lock = write_lock.lock().unwrap_or_else(PoisonError::into_inner);
            let answers = connection
                .immediate_transaction(|connection| {
                    let mut answers: Vec<Result<(), StoreError>> = vec![Ok(()); group.len()];
                    let mut deltas = std::collections::BTreeMap::new();
                    // Under the write lock nobody else inserts: the next seqs are ours. They
                    // start past every log and every chunk of the index, so a chunk never covers
                    // a log it was not built from.
                    let last: Option<i64> = logs::table.select(diesel::dsl::max(logs::seq)).first(connection)?;
                    let indexed = index::indexed_through(connection)?;
                    let mut next = last.unwrap_or(0).max(indexed) + 1;
                    let mut rows: Vec<NewLogRow<'_>> = Vec::new();
                    // Each workspace's logs take consecutive seqs, so they make whole chunks.
                    let mut order: Vec<usize> = (0..group.len()).collect();
                    order.sort_by_key(|&index| group[index].workspace);
                    let mut prepared: Vec<Option<PreparedBatch>> = prepared.into_iter().map(Some).collect();
                    for index in order {
                        let (batch, Some(prepared)) = (&group[index], prepared[index].take()) else { continue };
                        // The quota first: a refused batch writes nothing.
                        if !count_usage(connection, &batch.workspace, &prepared.months)? {
                            answers[index] = Err(StoreError::QuotaExceeded);
                            continue;
                        }
                        for log in &batch.logs {
                            rows.push(NewLogRow::new(next, &batch.workspace, log));
                            next += 1;
                        }
                        for (key, count) in prepared.deltas {
                            *deltas.entry(key).or_insert(0) += count;
                        }
                    }
                    for part in rows.chunks(ROWS_PER_INSERT) {
                        diesel::insert_into(logs::table).values(part).execute(connection)?;
                    }
                    for (key, count) in &deltas {
                        add_to_rollup(connection, key, *count)?;
                    }
                    Ok::<_, DieselError>((answers, next - 1 - indexed))
                })
                .map_err(from_diesel)?;
            drop(lock);
            let (answers, tail) = answers;
            // The logs are committed: whatever happens here, the answer stands, and a search
            // reads logs the index does not cover yet.
            if (index_now || tail > MAX_TAIL)
                && let Err(error) = index::index_tail(connection, &write_lock, chunk_rows, u64::MAX)
            {
                tracing::warn!(%error, "indexing new logs failed; the next insert retries");
            }
            Ok(answers)
        })
        .await
    }

    /// Runs `work` on a pooled connection, on a blocking thread.
    async fn with<R, F>(&self, work: F) -> Result<R, StoreError>
    where
        R: Send + 'static,
        F: FnOnce(&mut SqliteConnection) -> Result<R, StoreError> + Send + 'static,
    {
        let connection = self.pool.get().await.map_err(|error| StoreError::Unavailable(error.to_string()))?;
        connection.interact(work).await.map_err(backend)?
    }
}

#[async_trait]
impl LogStore for SqliteStore {
    async fn insert_logs(&self, workspace: WorkspaceId, batch: &[Log]) -> Result<(), StoreError> {
        let group = vec![Batch { workspace, logs: batch.to_vec() }];
        sluice_store::only_answer(self.insert_owned(group).await?)
    }

    async fn insert_group(&self, group: &[Batch]) -> Result<Vec<Result<(), StoreError>>, StoreError> {
        self.insert_owned(group.to_vec()).await
    }

    async fn monthly_usage(&self, workspace: WorkspaceId, month_ms: i64) -> Result<u64, StoreError> {
        self.with(move |connection| {
            let logs: Option<i64> = usage_monthly::table
                .find((workspace.as_bytes().to_vec(), month_ms))
                .select(usage_monthly::logs)
                .first(connection)
                .optional()
                .map_err(from_diesel)?;
            Ok(logs.map_or(0, |logs| u64::try_from(logs).unwrap_or(0)))
        })
        .await
    }

    async fn list_logs(&self, workspace: WorkspaceId, filter: &LogFilter, page: Page) -> Result<LogPage, StoreError> {
        let filter = filter.clone();
        self.with(move |connection| {
            let offset = i64::try_from(page.offset).unwrap_or(i64::MAX);
            let rows: Vec<LogRow> = filtered(&workspace, &filter)
                .order((logs::ts.desc(), logs::id.desc()))
                .limit(i64::from(page.limit) + 1)
                .offset(offset)
                .select(LogRow::as_select())
                .load(connection)
                .map_err(from_diesel)?;
            let has_more = rows.len() > page.limit as usize;
            let logs = rows.into_iter().take(page.limit as usize).map(Log::try_from).collect::<Result<_, _>>()?;
            Ok(LogPage { logs, has_more })
        })
        .await
    }

    async fn get_log(&self, workspace: WorkspaceId, id: LogId) -> Result<Option<Log>, StoreError> {
        self.with(move |connection| {
            logs::table
                .filter(logs::id.eq(id.as_bytes().to_vec()))
                .filter(logs::workspace_id.eq(workspace.as_bytes().to_vec()))
                .select(LogRow::as_select())
                .first(connection)
                .optional()
                .map_err(from_diesel)?
                .map(Log::try_from)
                .transpose()
        })
        .await
    }

    async fn search_logs(
        &self,
        workspace: WorkspaceId,
        search: &Search,
        filter: &LogFilter,
        page: Page,
    ) -> Result<LogPage, StoreError> {
        let search = search.clone();
        let filter = filter.clone();
        let (dense_hits, walk_rows) = (u64::from(self.dense_hits), i64::from(self.walk_rows));
        self.with(move |connection| {
            // Without an indexable needle: walk the filtered logs newest first.
            let Some(expression) = index::expression(&search) else {
                let rows = filtered(&workspace, &filter)
                    .order((logs::ts.desc(), logs::id.desc()))
                    .select(LogRow::as_select())
                    .load_iter::<LogRow, DefaultLoadingMode>(connection)
                    .map_err(from_diesel)?;
                return Ok(collect_page(rows, &search, page)?.0);
            };
            let _scope = SearchScope::enter(&search);
            // The unindexed tail (logs past the last chunk; those of every workspace, as few
            // as the background indexes a round) counts as candidates, read whole.
            let indexed = index::indexed_through(connection).map_err(from_diesel)?;
            let last: Option<i64> =
                logs::table.select(diesel::dsl::max(logs::seq)).first(connection).map_err(from_diesel)?;
            let mut chunks = vec![[indexed + 1, TAIL_END]];
            let mut candidates = u64::try_from(last.unwrap_or(0) - indexed).unwrap_or(0);
            // The candidate chunks, until their logs pass `dense_hits`. Fewer: read just their
            // logs, by seq range, whatever the workspace's size.
            for hit in diesel::sql_query(CHUNK_HITS_SQL)
                .bind::<Text, _>(&expression)
                .bind::<Binary, _>(workspace.as_bytes().to_vec())
                .bind::<Nullable<BigInt>, _>(filter.from)
                .bind::<Nullable<BigInt>, _>(filter.to)
                .bind::<BigInt, _>(indexed)
                .load_iter::<ChunkHit, DefaultLoadingMode>(connection)
                .map_err(from_diesel)?
            {
                let hit = hit.map_err(from_diesel)?;
                candidates += u64::try_from(hit.last - hit.first + 1).unwrap_or(0);
                if candidates > dense_hits {
                    break;
                }
                chunks.push([hit.first, hit.last]);
            }
            let bind_filters = |query: diesel::query_builder::SqlQuery, first: String| {
                query
                    .bind::<Text, _>(first)
                    .bind::<Binary, _>(workspace.as_bytes().to_vec())
                    .bind::<Nullable<Text>, _>(filter.level.map(|level| level.as_str()))
                    .bind::<Nullable<Text>, _>(filter.source.clone())
                    .bind::<Nullable<Text>, _>(filter.environment.map(|environment| environment.as_str()))
                    .bind::<Nullable<Text>, _>(filter.dataset.clone())
                    .bind::<Nullable<BigInt>, _>(filter.from)
                    .bind::<Nullable<BigInt>, _>(filter.to)
            };
            if candidates <= dense_hits {
                let ranges = serde_json::to_string(&chunks).map_err(backend)?;
                let rows = bind_filters(diesel::sql_query(chunk_logs_sql()), ranges)
                    .load_iter::<LogRow, DefaultLoadingMode>(connection)
                    .map_err(from_diesel)?;
                return Ok(collect_page(rows, &search, page)?.0);
            }
            // A common needle: look in the newest logs first, for a bounded number of rows.
            {
                let rows = filtered(&workspace, &filter)
                    .order((logs::ts.desc(), logs::id.desc()))
                    .limit(walk_rows)
                    .select(LogRow::as_select())
                    .load_iter::<LogRow, DefaultLoadingMode>(connection)
                    .map_err(from_diesel)?;
                let (found, walked) = collect_page(rows, &search, page)?;
                // Conclusive when the page is full and more follow, or when the walk saw
                // every filtered log.
                if found.has_more || walked < walk_rows as usize {
                    return Ok(found);
                }
            }
            // Common elsewhere, rare here: the logs of every candidate chunk.
            let rows = bind_filters(diesel::sql_query(all_candidates_sql()), expression)
                .bind::<BigInt, _>(indexed)
                .load_iter::<LogRow, DefaultLoadingMode>(connection)
                .map_err(from_diesel)?;
            Ok(collect_page(rows, &search, page)?.0)
        })
        .await
    }

    async fn level_counts(
        &self,
        workspace: WorkspaceId,
        from_ms: i64,
        to_ms: i64,
        filter: &RollupFilter,
        by: CountBy,
    ) -> Result<Vec<LevelCount>, StoreError> {
        let filter = filter.clone();
        self.with(move |connection| {
            let rows: Vec<CountRow> = diesel::sql_query(counts_sql(
                by,
                from_ms,
                to_ms,
                filter.environment.is_none() && filter.dataset.is_none(),
            ))
            .bind::<Binary, _>(workspace.as_bytes().to_vec())
            .bind::<BigInt, _>(from_ms)
            .bind::<BigInt, _>(to_ms)
            .bind::<Nullable<Text>, _>(filter.source)
            .bind::<Nullable<Text>, _>(filter.environment.map(|environment| environment.as_str()))
            .bind::<Nullable<Text>, _>(filter.dataset)
            .load(connection)
            .map_err(from_diesel)?;
            rows.into_iter()
                .map(|row| {
                    let level = row.level.parse().map_err(|_| backend("corrupt rollup level in the database"))?;
                    let bucket = match by {
                        CountBy::Hour => Bucket::Hour(row.hour),
                        CountBy::Day => Bucket::Day(row.hour),
                        CountBy::Source => Bucket::Source(row.source),
                    };
                    Ok(LevelCount { bucket, level, count: u64::try_from(row.total).unwrap_or_default() })
                })
                .collect()
        })
        .await
    }

    async fn delete_logs_before(&self, workspace: WorkspaceId, cutoff_ms: i64) -> Result<u64, StoreError> {
        // Only indexed logs are deleted, so the index first covers every log stored so far.
        // Deleting a log of the unindexed tail could let an insert take its seq again after
        // a round read it and before that round wrote its chunk, which would then claim the
        // new log without its text.
        let (write_lock, chunk_rows) = (self.write_lock.clone(), self.chunk_rows);
        self.with(move |connection| {
            index::index_tail(connection, &write_lock, chunk_rows, u64::MAX).map_err(from_diesel)
        })
        .await?;
        let mut deleted = 0;
        loop {
            let write_lock = self.write_lock.clone();
            let batch = self
                .with(move |connection| {
                    let _lock = write_lock.lock().unwrap_or_else(PoisonError::into_inner);
                    connection
                        .immediate_transaction(|connection| {
                            let indexed = index::indexed_through(connection)?;
                            let victims: Vec<(i64, i64, String, String, String, String)> = logs::table
                                .filter(logs::workspace_id.eq(workspace.as_bytes().to_vec()))
                                .filter(logs::ts.lt(cutoff_ms))
                                .filter(logs::seq.le(indexed))
                                .select((
                                    logs::seq,
                                    logs::ts,
                                    logs::source,
                                    logs::environment,
                                    logs::dataset,
                                    logs::level,
                                ))
                                .limit(DELETE_BATCH)
                                .load(connection)?;
                            let seqs: Vec<i64> = victims.iter().map(|victim| victim.0).collect();
                            diesel::delete(logs::table.filter(logs::seq.eq_any(&seqs))).execute(connection)?;
                            let keys =
                                victims.into_iter().map(|(_, ts, source, environment, dataset, level)| RollupKey {
                                    workspace_id: workspace.as_bytes().to_vec(),
                                    hour: sluice_query::stats::hour_start(ts),
                                    source: source.into(),
                                    environment,
                                    dataset: dataset.into(),
                                    level,
                                });
                            for (key, count) in rollup_deltas(keys) {
                                add_to_rollup(connection, &key, -count)?;
                            }
                            Ok::<_, DieselError>(seqs.len() as u64)
                        })
                        .map_err(from_diesel)
                })
                .await?;
            deleted += batch;
            if batch < DELETE_BATCH as u64 {
                break;
            }
        }
        // The chunks of the search index left without a log, once for the whole sweep.
        let write_lock = self.write_lock.clone();
        self.with(move |connection| {
            let _lock = write_lock.lock().unwrap_or_else(PoisonError::into_inner);
            connection
                .immediate_transaction(|connection| index::drop_emptied(connection, workspace.as_bytes(), cutoff_ms))
                .map_err(from_diesel)
        })
        .await?;
        Ok(deleted)
    }
}

#[async_trait]
impl TenantStore for SqliteStore {
    async fn create_workspace(&self, workspace: &Workspace) -> Result<(), StoreError> {
        let row = WorkspaceRow::from(workspace);
        self.with(move |connection| {
            diesel::insert_into(workspaces::table).values(&row).execute(connection).map_err(from_diesel)?;
            Ok(())
        })
        .await
    }

    async fn list_workspaces(&self) -> Result<Vec<Workspace>, StoreError> {
        self.with(|connection| {
            let rows: Vec<WorkspaceRow> = workspaces::table
                .order((workspaces::created_at.asc(), workspaces::id.asc()))
                .select(WorkspaceRow::as_select())
                .load(connection)
                .map_err(from_diesel)?;
            rows.into_iter().map(Workspace::try_from).collect()
        })
        .await
    }

    async fn get_workspace(&self, id: WorkspaceId) -> Result<Option<Workspace>, StoreError> {
        self.with(move |connection| {
            workspaces::table
                .find(id.as_bytes().to_vec())
                .select(WorkspaceRow::as_select())
                .first(connection)
                .optional()
                .map_err(from_diesel)?
                .map(Workspace::try_from)
                .transpose()
        })
        .await
    }

    async fn set_plan(&self, id: WorkspaceId, plan: Plan, limits: Limits) -> Result<(), StoreError> {
        let change = PlanChange::new(plan, &limits);
        self.with(move |connection| {
            let changed = diesel::update(workspaces::table.find(id.as_bytes().to_vec()))
                .set(change)
                .execute(connection)
                .map_err(from_diesel)?;
            if changed == 0 { Err(StoreError::NotFound("workspace")) } else { Ok(()) }
        })
        .await
    }

    async fn create_key(&self, key: &NewApiKey) -> Result<(), StoreError> {
        let row = NewKeyRow::from(key);
        self.with(move |connection| {
            diesel::insert_into(api_keys::table).values(&row).execute(connection).map_err(from_diesel)?;
            Ok(())
        })
        .await
    }

    async fn list_keys(&self, workspace: WorkspaceId) -> Result<Vec<ApiKeyRecord>, StoreError> {
        self.with(move |connection| {
            let rows: Vec<KeyRow> = api_keys::table
                .filter(api_keys::workspace_id.eq(workspace.as_bytes().to_vec()))
                .order((api_keys::created_at.asc(), api_keys::id.asc()))
                .select(KeyRow::as_select())
                .load(connection)
                .map_err(from_diesel)?;
            rows.into_iter().map(ApiKeyRecord::try_from).collect()
        })
        .await
    }

    async fn revoke_key(&self, id: KeyId, now_ms: i64) -> Result<(), StoreError> {
        self.with(move |connection| {
            let key = api_keys::table.find(id.as_bytes().to_vec());
            let exists: Option<Option<i64>> =
                key.clone().select(api_keys::revoked_at).first(connection).optional().map_err(from_diesel)?;
            match exists {
                None => Err(StoreError::NotFound("key")),
                Some(Some(_)) => Ok(()),
                Some(None) => {
                    diesel::update(key.filter(api_keys::revoked_at.is_null()))
                        .set(api_keys::revoked_at.eq(now_ms))
                        .execute(connection)
                        .map_err(from_diesel)?;
                    Ok(())
                }
            }
        })
        .await
    }

    async fn find_key(&self, hash: &[u8; 32]) -> Result<Option<(ApiKeyRecord, Workspace)>, StoreError> {
        let hash = hash.to_vec();
        self.with(move |connection| {
            let found: Option<(KeyRow, WorkspaceRow)> = api_keys::table
                .inner_join(workspaces::table)
                .filter(api_keys::hash.eq(hash))
                .select((KeyRow::as_select(), WorkspaceRow::as_select()))
                .first(connection)
                .optional()
                .map_err(from_diesel)?;
            found.map(|(key, workspace)| Ok((key.try_into()?, workspace.try_into()?))).transpose()
        })
        .await
    }

    async fn bootstrap(&self, workspace: &Workspace, key: &NewApiKey) -> Result<bool, StoreError> {
        let workspace = WorkspaceRow::from(workspace);
        let key = NewKeyRow::from(key);
        self.with(move |connection| {
            connection
                .immediate_transaction(|connection| {
                    let existing: i64 = workspaces::table.count().get_result(connection)?;
                    if existing > 0 {
                        return Ok(false);
                    }
                    diesel::insert_into(workspaces::table).values(&workspace).execute(connection)?;
                    diesel::insert_into(api_keys::table).values(&key).execute(connection)?;
                    Ok(true)
                })
                .map_err(from_diesel)
        })
        .await
    }
}

#[async_trait]
impl Store for SqliteStore {
    async fn ping(&self) -> Result<(), StoreError> {
        // Readiness means "ingest would work": take the write lock and give it back, so a file
        // another process keeps locked fails the check instead of passing a trivial SELECT.
        self.with(|connection| connection.batch_execute("BEGIN IMMEDIATE; ROLLBACK;").map_err(from_diesel)).await
    }
}

#[cfg(test)]
mod tests {
    use sluice_query::stats::MS_PER_HOUR;

    use super::*;

    #[derive(QueryableByName)]
    struct PlanStep {
        #[diesel(sql_type = Text)]
        detail: String,
    }

    fn migrated() -> (tempfile::TempDir, SqliteConnection) {
        let dir = tempfile::tempdir().expect("temp dir");
        let path = dir.path().join("plan.db");
        let mut connection = SqliteConnection::establish(path.to_str().expect("utf-8")).expect("connect");
        connection.run_pending_migrations(MIGRATIONS).expect("migrations");
        (dir, connection)
    }

    fn plan(connection: &mut SqliteConnection, sql: &str, first: &str) -> Vec<String> {
        register_functions(connection).expect("register");
        diesel::sql_query(format!("EXPLAIN QUERY PLAN {sql}"))
            .bind::<Text, _>(first)
            .bind::<Binary, _>(vec![0_u8; 16])
            .bind::<Nullable<Text>, _>(Some("error"))
            .bind::<Nullable<Text>, _>(Some("api"))
            .bind::<Nullable<Text>, _>(None::<String>)
            .bind::<Nullable<Text>, _>(None::<String>)
            .bind::<Nullable<BigInt>, _>(Some(0_i64))
            .bind::<Nullable<BigInt>, _>(None::<i64>)
            .load::<PlanStep>(connection)
            .expect("plan")
            .into_iter()
            .map(|step| step.detail)
            .collect()
    }

    fn scans_logs(steps: &[String]) -> bool {
        steps.iter().any(|step| step == "SCAN logs" || step.starts_with("SCAN logs "))
    }

    /// The index's candidate chunks are found from its hits, each chunk by its primary key.
    #[test]
    fn candidate_chunks_are_driven_by_the_index() {
        let (_dir, mut connection) = migrated();
        let steps: Vec<String> = diesel::sql_query(format!("EXPLAIN QUERY PLAN {CHUNK_HITS_SQL}"))
            .bind::<Text, _>("{message} : (\"1\")")
            .bind::<Binary, _>(vec![0_u8; 16])
            .bind::<Nullable<BigInt>, _>(Some(0_i64))
            .bind::<Nullable<BigInt>, _>(None::<i64>)
            .load::<PlanStep>(&mut connection)
            .expect("plan")
            .into_iter()
            .map(|step| step.detail)
            .collect();
        assert!(steps.iter().any(|step| step.contains("VIRTUAL TABLE INDEX")), "{steps:?}");
        assert!(steps.iter().any(|step| step.starts_with("SEARCH chunk USING INTEGER PRIMARY KEY")), "{steps:?}");
    }

    /// An indexed search reads each candidate chunk's logs as a range of seq: it never walks a
    /// workspace's logs, with or without filters.
    #[test]
    fn indexed_search_is_driven_by_the_index() {
        let (_dir, mut connection) = migrated();
        let steps = plan(&mut connection, &all_candidates_sql(), "{message} : (\"1\")");
        assert!(steps.iter().any(|step| step.contains("VIRTUAL TABLE INDEX")), "{steps:?}");
        assert!(steps.iter().any(|step| step.starts_with("SEARCH chunk USING INTEGER PRIMARY KEY")), "{steps:?}");
        assert!(
            steps.iter().any(|step| step.starts_with("SEARCH logs USING INTEGER PRIMARY KEY (rowid>? AND rowid<?)")),
            "{steps:?}"
        );
        assert!(!scans_logs(&steps), "{steps:?}");
    }

    /// Given chunks are read by seq range, driven by their list.
    #[test]
    fn search_by_chunks_reads_only_the_chunks() {
        let (_dir, mut connection) = migrated();
        let steps = plan(&mut connection, &chunk_logs_sql(), "[[1,3],[7,9]]");
        assert!(steps.iter().any(|step| step.starts_with("SCAN chunk VIRTUAL TABLE")), "{steps:?}");
        assert!(
            steps.iter().any(|step| step.starts_with("SEARCH logs USING INTEGER PRIMARY KEY (rowid>? AND rowid<?)")),
            "{steps:?}"
        );
        assert!(!scans_logs(&steps), "{steps:?}");
    }

    /// Counts read a range of one counter table's primary key, never the logs: the daily
    /// counters for whole days (without environment and dataset when neither is filtered on),
    /// the hourly ones otherwise.
    #[test]
    fn counts_read_a_range_of_rollups() {
        let (_dir, mut connection) = migrated();
        let day = 20_000 * MS_PER_DAY;
        let cases = [
            (CountBy::Hour, day, day + MS_PER_DAY, false, "log_rollups", "hour"),
            (CountBy::Hour, day, day + MS_PER_DAY, true, "log_rollups", "hour"),
            (CountBy::Day, day, day + MS_PER_DAY, false, "log_rollups_daily", "day"),
            (CountBy::Source, day, day + MS_PER_DAY, false, "log_rollups_daily", "day"),
            (CountBy::Day, day, day + MS_PER_DAY, true, "log_rollups_daily_sources", "day"),
            (CountBy::Source, day, day + MS_PER_DAY, true, "log_rollups_daily_sources", "day"),
            (CountBy::Day, day + MS_PER_HOUR, day + MS_PER_DAY, true, "log_rollups", "hour"),
            (CountBy::Source, day, day + MS_PER_HOUR, false, "log_rollups", "hour"),
        ];
        for (by, from, to, narrow, table, at) in cases {
            let steps: Vec<String> =
                diesel::sql_query(format!("EXPLAIN QUERY PLAN {}", counts_sql(by, from, to, narrow)))
                    .bind::<Binary, _>(vec![0_u8; 16])
                    .bind::<BigInt, _>(from)
                    .bind::<BigInt, _>(to)
                    .bind::<Nullable<Text>, _>(Some("api"))
                    .bind::<Nullable<Text>, _>(None::<String>)
                    .bind::<Nullable<Text>, _>(None::<String>)
                    .load::<PlanStep>(&mut connection)
                    .expect("plan")
                    .into_iter()
                    .map(|step| step.detail)
                    .collect();
            let range = format!("SEARCH {table} USING PRIMARY KEY (workspace_id=? AND {at}>? AND {at}<?)");
            assert!(steps.iter().any(|step| step.starts_with(&range)), "{by:?}: {steps:?}");
            assert!(!steps.iter().any(|step| step.contains("logs ")), "{steps:?}");
        }
    }
}
