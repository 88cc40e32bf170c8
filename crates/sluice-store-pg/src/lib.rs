//! The PostgreSQL store of sluice: diesel-async over tokio-postgres (no libpq), pooled by
//! deadpool, migrations from `migrations/postgres` embedded and applied on connect.
//!
//! The schema is laid out for a database that will outgrow one machine: every key of a
//! workspace's rows leads with `workspace_id`, and `logs` is range-partitioned by timestamp
//! ([`partitions`]), so retention drops whole days. Search finds candidate chunks of logs by
//! the trigrams of their folded text ([`chunks`]) and checks their logs exactly, like the
//! SQLite store; filters by level, environment, source, dataset and user walk the chunks too,
//! by a second filter of theirs, instead of an index per field. Stats read counters kept in
//! the insert and delete transactions, a row per writer's slot so writers never wait for
//! each other's.

mod chunks;
pub mod naive;
mod partitions;
mod rows;
mod schema;
mod text;

use std::collections::{BTreeMap, BTreeSet};
use std::sync::{Arc, Mutex, PoisonError};
use std::time::Duration;

use async_trait::async_trait;
use deadpool::Runtime;
use deadpool::managed::QueueMode;
use diesel::connection::SimpleConnection;
use diesel::pg::Pg;
use diesel::prelude::*;
use diesel::result::{DatabaseErrorKind, Error as DieselError};
use diesel::sql_types::{Array, BigInt, Bool, Nullable, SmallInt, Text};
use diesel_async::async_connection_wrapper::AsyncConnectionWrapper;
use diesel_async::pooled_connection::deadpool::{Object, Pool, PoolError};
use diesel_async::pooled_connection::{AsyncDieselConnectionManager, ManagerConfig, PoolError as ConnectError};
use diesel_async::{AsyncConnection, AsyncPgConnection, RunQueryDsl, SimpleAsyncConnection};
use diesel_migrations::{EmbeddedMigrations, MigrationHarness, embed_migrations};
use sluice_model::{ApiKeyRecord, KeyId, Limits, Log, LogId, Plan, Workspace, WorkspaceId};
use sluice_query::stats::{Bucket, CountBy, LevelCount, MS_PER_DAY, RollupFilter};
use sluice_store::{
    Batch, GroupOptions, LogFilter, LogPage, LogStore, NewApiKey, Page, Search, Store, StoreError, TenantStore,
};
use uuid::Uuid;

pub use crate::partitions::{COARSE_DAYS, DAILY_AHEAD, DAILY_BEHIND};
use crate::partitions::{Partitions, day_of, parse_bounds};
use crate::rows::{KeyRow, LogRow, NewKeyRow, NewLogRow, PlanChange, RollupDeltas, Scope, WorkspaceRow, insert_rows};
use crate::schema::{api_keys, log_chunks, logs, workspaces};

#[cfg(feature = "testing")]
pub mod cluster;
#[cfg(feature = "testing")]
pub mod testing;

/// The schema, applied in order on connect.
pub const MIGRATIONS: EmbeddedMigrations = embed_migrations!("../../migrations/postgres");

/// Advisory lock held while migrating.
const MIGRATION_LOCK: i64 = 7_355_908;
/// Advisory lock held while creating or dropping partitions (one process at a time).
const PARTITION_LOCK: i64 = 7_355_910;

/// Logs deleted per retention transaction.
const DELETE_BATCH: i64 = 5_000;

/// Rows read per step of a newest-first walk.
const WALK_STEP: i64 = 500;

/// How the store behaves.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PgOptions {
    /// Connections in the pool.
    pub pool_size: usize,
    /// How long a call waits for a free connection before it fails as unavailable.
    pub wait_timeout: Duration,
    /// How long opening a new connection may take.
    pub create_timeout: Duration,
    /// How long checking an idle connection before reuse may take.
    pub recycle_timeout: Duration,
    /// How long one call of the store (a request's reads or its insert; one batch of a
    /// retention sweep) may take, waiting for a connection included, before it fails as
    /// unavailable. Also the server's `statement_timeout` and the sockets' TCP user timeout,
    /// so a network that stops answering without a reset cannot hold a request.
    pub call_timeout: Duration,
    /// A search whose index proposes chunks holding more logs than this (in the workspace)
    /// first walks the workspace's newest logs instead, as the SQLite store does.
    pub search_dense_hits: u32,
    /// How many logs such a walk reads at most before it reads every candidate instead.
    pub search_walk_rows: u32,
    /// How concurrent inserts are grouped into transactions.
    pub group: GroupOptions,
    /// The most logs one chunk of the search index covers ([`chunks`]): more make ingest
    /// cheaper (fewer distinct trigrams per log) and a rare needle's search read more logs.
    pub index_chunk_rows: usize,
}

impl Default for PgOptions {
    fn default() -> Self {
        PgOptions {
            pool_size: 16,
            wait_timeout: Duration::from_secs(5),
            create_timeout: Duration::from_secs(5),
            recycle_timeout: Duration::from_secs(2),
            call_timeout: Duration::from_secs(10),
            search_dense_hits: 50_000,
            search_walk_rows: 100_000,
            index_chunk_rows: 256,
            // Three writers: one PostgreSQL backend runs one transaction on one core, so
            // concurrent groups use both (measured with `cargo xtask bench ingest`: 1 writer
            // 8.4k, 2 13.8k, 3 16.8k, 4 15.2-16.3k logs/s). They hold the rows every group
            // touches only around their commits (see `insert_group_once`).
            group: GroupOptions { writers: 3, max_rows: 5_000, linger: Duration::ZERO },
        }
    }
}

/// A pool of connections to one PostgreSQL database whose schema is current.
#[derive(Clone)]
pub struct PgStore {
    pool: Pool<AsyncPgConnection>,
    /// The partitions of `logs` this process knows of (reloaded under the partition lock
    /// before any change, and whenever an insert finds one missing).
    partitions: Arc<Mutex<Partitions>>,
    dense_hits: i64,
    walk_rows: i64,
    call_timeout: Duration,
    group: GroupOptions,
    chunk_rows: usize,
    slots: Arc<Slots>,
}

/// Counter slots: the rows of each counter an insert transaction adds to (migration
/// `counter_slots`). Concurrent transactions of this process take different slots, so they
/// never wait for each other's counter rows (another process's may share one, and then waits,
/// as any writer did before slots).
const COUNTER_SLOTS: u32 = 8;

/// The slots this process's insert transactions hold.
struct Slots {
    /// Bit `n`: slot `n` is held.
    held: Mutex<u8>,
    /// Where this process starts looking, so processes sharing a database spread out.
    first: u32,
}

impl Slots {
    fn new() -> Self {
        Slots { held: Mutex::new(0), first: std::process::id() % COUNTER_SLOTS }
    }

    /// A slot no other transaction of this process holds (when all are held, a held one:
    /// waiting on a counter row is slower, never wrong), given back when dropped.
    fn take(&self) -> Slot<'_> {
        let mut held = self.held.lock().unwrap_or_else(PoisonError::into_inner);
        let free = (0..COUNTER_SLOTS).map(|n| (self.first + n) % COUNTER_SLOTS).find(|&n| *held & (1 << n) == 0);
        let number = free.unwrap_or(self.first);
        if free.is_some() {
            *held |= 1 << number;
        }
        Slot { slots: self, number, owned: free.is_some() }
    }
}

/// A slot taken from [`Slots`].
struct Slot<'a> {
    slots: &'a Slots,
    number: u32,
    owned: bool,
}

impl Slot<'_> {
    fn number(&self) -> i16 {
        i16::try_from(self.number).unwrap_or(0)
    }
}

impl Drop for Slot<'_> {
    fn drop(&mut self) {
        if self.owned {
            *self.slots.held.lock().unwrap_or_else(PoisonError::into_inner) &= !(1 << self.number);
        }
    }
}

impl std::fmt::Debug for PgStore {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("PgStore").field("pool", &self.pool.status()).finish()
    }
}

fn unavailable(error: impl std::fmt::Display) -> StoreError {
    StoreError::Unavailable(error.to_string())
}

fn backend(error: impl std::fmt::Display) -> StoreError {
    StoreError::Backend(error.to_string())
}

/// A pool error as the store's: anything about reaching the server is "unavailable".
fn from_pool(error: PoolError) -> StoreError {
    match error {
        PoolError::Backend(ConnectError::QueryError(error)) => from_diesel(error),
        other => unavailable(other),
    }
}

/// Diesel's error in our terms: a lost connection or a server shutting down or starting is
/// "unavailable" (a retry may work); anything else is a backend error.
fn from_diesel(error: DieselError) -> StoreError {
    const GONE: [&str; 6] = [
        "terminating connection",
        "shutting down",
        "starting up",
        "connection closed",
        "in recovery mode",
        "statement timeout",
    ];
    match &error {
        DieselError::DatabaseError(DatabaseErrorKind::ClosedConnection | DatabaseErrorKind::UnableToSendCommand, _) => {
            unavailable(error)
        }
        DieselError::DatabaseError(_, info) if GONE.iter().any(|gone| info.message().contains(gone)) => {
            unavailable(error)
        }
        _ => backend(error),
    }
}

/// Whether an insert failed for want of a partition (another process dropped one we knew).
fn missing_partition(error: &DieselError) -> bool {
    matches!(error, DieselError::DatabaseError(_, info) if info.message().contains("no partition of relation"))
}

/// The day today is, by the clock.
fn today() -> i64 {
    let now = std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).unwrap_or_default();
    day_of(i64::try_from(now.as_millis()).unwrap_or(i64::MAX))
}

/// A needle as a `LIKE` pattern matching it anywhere (`\`, `%` and `_` escaped).
fn like_anywhere(needle: &str) -> String {
    let mut pattern = String::with_capacity(needle.len() + 2);
    pattern.push('%');
    for character in needle.chars() {
        if matches!(character, '\\' | '%' | '_') {
            pattern.push('\\');
        }
        pattern.push(character);
    }
    pattern.push('%');
    pattern
}

/// A condition on rows of table `T`, built at run time.
type Boxed<T> = Box<dyn BoxableExpression<T, Pg, SqlType = Bool>>;
type Condition = Boxed<logs::table>;
type ChunkCondition = Boxed<log_chunks::table>;

/// Every one of `conditions` (`None` when there are none).
fn all_of<T: 'static>(conditions: impl IntoIterator<Item = Boxed<T>>) -> Option<Boxed<T>>
where
    diesel::dsl::And<Boxed<T>, Boxed<T>>: BoxableExpression<T, Pg, SqlType = Bool>,
{
    conditions.into_iter().reduce(|before, next| Box::new(before.and(next)))
}

/// Any one of `conditions` (`None` when there are none).
fn any_of<T: 'static>(conditions: impl IntoIterator<Item = Boxed<T>>) -> Option<Boxed<T>>
where
    diesel::dsl::Or<Boxed<T>, Boxed<T>>: BoxableExpression<T, Pg, SqlType = Bool>,
{
    conditions.into_iter().reduce(|before, next| Box::new(before.or(next)))
}

/// What the search text can narrow `search` to: for every index group, one of its needles
/// in the folded text. `None` when the query gives the index nothing.
fn index_condition(search: &Search) -> Option<Condition> {
    all_of(search.query.index_groups().into_iter().filter_map(|group| {
        any_of(
            group
                .into_iter()
                .map(|needle| -> Condition { Box::new(logs::search_text.like(like_anywhere(&text::encode(needle)))) }),
        )
    }))
}

diesel::define_sql_function! {
    /// PostgreSQL's `get_bit`: bit `n` of `bytes` (bit `n % 8` of byte `n / 8`).
    fn get_bit(bytes: diesel::sql_types::Binary, n: diesel::sql_types::Integer) -> diesel::sql_types::Integer;
}

diesel::define_sql_function! {
    /// PostgreSQL's `octet_length` of a `bytea`.
    fn octet_length(bytes: diesel::sql_types::Binary) -> diesel::sql_types::Integer;
}

diesel::define_sql_function! {
    /// PostgreSQL's `mod`: the remainder of `a / b`.
    #[sql_name = "mod"]
    fn modulo(a: diesel::sql_types::Integer, b: diesel::sql_types::Integer) -> diesel::sql_types::Integer;
}

/// A chunk whose filter `column` may hold, for each of `groups`, every bit of one of its
/// alternatives (bits of the full-size filter; an alternative without bits and a group without
/// alternatives ask nothing). `None` when nothing is asked.
///
/// Filters are stored folded to a power of two of bytes ([`chunks::folded`]), where bit n is
/// n % bits: `has(n)` tests `get_bit(filter, mod(n, octet_length(filter) * 8)) = 1`.
fn filter_condition(groups: &[Vec<Vec<u32>>], has: impl Fn(i32) -> ChunkCondition) -> Option<ChunkCondition> {
    all_of(groups.iter().filter_map(|alternatives| {
        any_of(alternatives.iter().filter_map(|bits| {
            let mut bits = bits.clone();
            bits.sort_unstable();
            bits.dedup();
            all_of(bits.into_iter().map(|bit| has(i32::try_from(bit).unwrap_or_default())))
        }))
    }))
}

/// What the chunk index can narrow `search` to: for every index group, a chunk whose filter
/// may hold all the trigrams of one of its needles (as stored: [`text`]). `None` when the
/// query gives the index nothing.
fn chunk_condition(search: &Search) -> Option<ChunkCondition> {
    let groups: Vec<Vec<Vec<u32>>> = search
        .query
        .index_groups()
        .into_iter()
        .map(|group| {
            group
                .into_iter()
                .map(|needle| {
                    sluice_query::needle_trigrams(&text::encode(needle))
                        .into_iter()
                        .flat_map(chunks::bloom_bits)
                        .collect()
                })
                .collect()
        })
        .collect();
    filter_condition(&groups, |bit| {
        Box::new(get_bit(log_chunks::bloom, modulo(bit, octet_length(log_chunks::bloom) * 8)).eq(1))
    })
}

/// What the chunks' facet filters can narrow `filter` to: chunks whose filter may hold each of
/// its level, environment, source, dataset and user id (as stored). `None` when it filters on
/// none of them.
fn facet_condition(filter: &LogFilter) -> Option<ChunkCondition> {
    use chunks::Facet;
    let values = [
        (Facet::Level, filter.level.map(|level| level.as_str().to_owned())),
        (Facet::Environment, filter.environment.map(|environment| environment.as_str().to_owned())),
        (Facet::Source, stored(&filter.source)),
        (Facet::Dataset, stored(&filter.dataset)),
        (Facet::User, stored(&filter.user_id)),
    ];
    let bits: Vec<u32> = values
        .into_iter()
        .filter_map(|(facet, value)| value.map(|value| chunks::facet_bits(facet, &value)))
        .flatten()
        .collect();
    filter_condition(&[vec![bits]], |bit| {
        Box::new(get_bit(log_chunks::facets, modulo(bit, octet_length(log_chunks::facets) * 8)).eq(1))
    })
}

/// The rows, newest first, that decide `page`: those it skips, those it holds and one more,
/// which tells whether more follow.
fn rows_needed(page: Page) -> usize {
    usize::try_from(page.offset).unwrap_or(usize::MAX).saturating_add(page.limit as usize).saturating_add(1)
}

/// Chunks read by the first step of a [`PgStore::chunk_walk`]; each next step reads
/// [`CHUNK_WALK_GROWTH`] times as many, up to [`CHUNK_WALK_MAX`].
const CHUNK_WALK_FIRST: i64 = 16;
const CHUNK_WALK_GROWTH: i64 = 4;
const CHUNK_WALK_MAX: i64 = 512;

/// An exact-match filter's text as stored ([`text`]).
fn stored(value: &Option<String>) -> Option<String> {
    value.as_deref().map(|value| text::encode(value).into_owned())
}

/// The workspace's chunks whose time span meets `filter`'s, as a query still open to more
/// conditions.
fn chunks_in_span(workspace: &WorkspaceId, filter: &LogFilter) -> log_chunks::BoxedQuery<'static, Pg> {
    let mut query = log_chunks::table.filter(log_chunks::workspace_id.eq(*workspace.as_uuid())).into_boxed();
    if let Some(from) = filter.from {
        query = query.filter(log_chunks::max_ts.ge(from));
    }
    if let Some(to) = filter.to {
        query = query.filter(log_chunks::min_ts.le(to));
    }
    query
}

/// The workspace's logs matching `filter`, as a query still open to more conditions.
fn filtered(workspace: &WorkspaceId, filter: &LogFilter) -> logs::BoxedQuery<'static, Pg> {
    let mut query = logs::table.filter(logs::workspace_id.eq(*workspace.as_uuid())).into_boxed();
    if let Some(level) = filter.level {
        query = query.filter(logs::level.eq(level.as_str()));
    }
    if let Some(environment) = filter.environment {
        query = query.filter(logs::environment.eq(environment.as_str()));
    }
    // Text is compared as stored (`stored`).
    if let Some(source) = stored(&filter.source) {
        query = query.filter(logs::source.eq(source));
    }
    if let Some(dataset) = stored(&filter.dataset) {
        query = query.filter(logs::dataset.eq(dataset));
    }
    if let Some(user_id) = stored(&filter.user_id) {
        query = query.filter(logs::user_id.eq(user_id));
    }
    if let Some(session_id) = stored(&filter.session_id) {
        query = query.filter(logs::session_id.eq(session_id));
    }
    if let Some(flow_id) = stored(&filter.flow_id) {
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

/// Collects the page of `search` from rows given newest first: skips `offset` matches, keeps
/// `limit`, and notes a match after them (`has_more`).
struct PageBuilder<'a> {
    search: &'a Search,
    page: Page,
    skipped: u64,
    logs: Vec<Log>,
    has_more: bool,
}

impl<'a> PageBuilder<'a> {
    fn new(search: &'a Search, page: Page) -> Self {
        PageBuilder { search, page, skipped: 0, logs: Vec::new(), has_more: false }
    }

    /// Takes rows; false once the page is decided (full and one more match seen).
    fn take(&mut self, rows: Vec<LogRow>) -> Result<bool, StoreError> {
        for row in rows {
            if !row.matches(self.search) {
                continue;
            }
            if self.skipped < self.page.offset {
                self.skipped += 1;
            } else if self.logs.len() == self.page.limit as usize {
                self.has_more = true;
                return Ok(false);
            } else {
                self.logs.push(Log::try_from(row)?);
            }
        }
        Ok(true)
    }

    fn finish(self) -> LogPage {
        LogPage { logs: self.logs, has_more: self.has_more }
    }
}

/// One summed counter, as `level_counts` reads it.
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

/// The counters query of one grouping, as the SQLite store's: `{table}`/`{at}` name the
/// hourly or daily counters, `{group}` the bucket, `{source}` the source column or `''`,
/// `{scope}` the environment and dataset conditions. A filter bound as NULL does not apply.
const COUNTS_SQL: &str = "SELECT {group} AS hour, {source} AS source, level, SUM(count)::int8 AS total \
     FROM {table} WHERE workspace_id = $1 AND {at} >= $2 AND {at} < $3 \
     AND ($4::text IS NULL OR source = $4) AND {scope} \
     GROUP BY 1, 2, level";

const SCOPE_FILTERS: &str = "($5::text IS NULL OR environment = $5) AND ($6::text IS NULL OR dataset = $6)";

/// The midnight at or before an hour, in SQL.
const DAY_OF_HOUR: &str = "(hour - (((hour % 86400000) + 86400000) % 86400000))";

/// The statement for `by` over `from_ms..to_ms`: whole UTC days read the daily counters (the
/// narrow ones when neither environment nor dataset is filtered on), anything else the hourly.
fn counts_sql(by: CountBy, from_ms: i64, to_ms: i64, narrow: bool) -> String {
    let whole_days = from_ms.rem_euclid(MS_PER_DAY) == 0 && to_ms.rem_euclid(MS_PER_DAY) == 0;
    let (table, at, scope) = match (whole_days && by != CountBy::Hour, narrow) {
        (true, true) => ("log_rollups_daily_sources", "day", "$5::text IS NULL AND $6::text IS NULL"),
        (true, false) => ("log_rollups_daily", "day", SCOPE_FILTERS),
        (false, _) => ("log_rollups", "hour", SCOPE_FILTERS),
    };
    let (group, source) = match by {
        CountBy::Hour => ("hour", "''"),
        CountBy::Day if whole_days => ("day", "''"),
        CountBy::Day => (DAY_OF_HOUR, "''"),
        CountBy::Source => ("0::int8", "source"),
    };
    COUNTS_SQL
        .replace("{table}", table)
        .replace("{at}", at)
        .replace("{group}", group)
        .replace("{source}", source)
        .replace("{scope}", scope)
}

/// Adds the deltas to the three counter tables' rows of `slot` (one statement each, keys in
/// order), then, when subtracting, removes the counters whose slots sum to 0.
async fn apply_deltas(
    connection: &mut AsyncPgConnection,
    workspace: Uuid,
    deltas: &RollupDeltas,
    subtract: bool,
    slot: i16,
) -> Result<(), DieselError> {
    let scoped = [("log_rollups", "hour", &deltas.hourly), ("log_rollups_daily", "day", &deltas.daily)];
    for (table, at, counts) in scoped {
        if counts.is_empty() {
            continue;
        }
        let times: Vec<i64> = counts.keys().map(|(at, _)| *at).collect();
        let column =
            |get: fn(&Scope) -> &String| counts.keys().map(|(_, scope)| get(scope).clone()).collect::<Vec<_>>();
        let (sources, environments) = (column(|scope| &scope.source), column(|scope| &scope.environment));
        let (datasets, levels) = (column(|scope| &scope.dataset), column(|scope| &scope.level));
        let values: Vec<i64> = counts.values().copied().collect();
        diesel::sql_query(format!(
            "INSERT INTO {table} (workspace_id, slot, {at}, source, environment, dataset, level, count) \
             SELECT $1, $8, * FROM unnest($2::int8[], $3::text[], $4::text[], $5::text[], $6::text[], $7::int8[]) \
             ON CONFLICT (workspace_id, {at}, source, environment, dataset, level, slot) \
             DO UPDATE SET count = {table}.count + excluded.count"
        ))
        .bind::<diesel::sql_types::Uuid, _>(workspace)
        .bind::<Array<BigInt>, _>(&times)
        .bind::<Array<Text>, _>(&sources)
        .bind::<Array<Text>, _>(&environments)
        .bind::<Array<Text>, _>(&datasets)
        .bind::<Array<Text>, _>(&levels)
        .bind::<Array<BigInt>, _>(&values)
        .bind::<SmallInt, _>(slot)
        .execute(connection)
        .await?;
        if subtract {
            diesel::sql_query(format!(
                "DELETE FROM {table} AS r USING unnest($2::int8[], $3::text[], $4::text[], $5::text[], $6::text[]) \
                 AS k(at, source, environment, dataset, level) \
                 WHERE r.workspace_id = $1 AND r.{at} = k.at AND r.source = k.source \
                 AND r.environment = k.environment AND r.dataset = k.dataset AND r.level = k.level \
                 AND (SELECT sum(s.count) FROM {table} AS s WHERE s.workspace_id = $1 AND s.{at} = k.at \
                      AND s.source = k.source AND s.environment = k.environment AND s.dataset = k.dataset \
                      AND s.level = k.level) <= 0"
            ))
            .bind::<diesel::sql_types::Uuid, _>(workspace)
            .bind::<Array<BigInt>, _>(&times)
            .bind::<Array<Text>, _>(&sources)
            .bind::<Array<Text>, _>(&environments)
            .bind::<Array<Text>, _>(&datasets)
            .bind::<Array<Text>, _>(&levels)
            .execute(connection)
            .await?;
        }
    }
    if !deltas.daily_sources.is_empty() {
        let days: Vec<i64> = deltas.daily_sources.keys().map(|(day, _, _)| *day).collect();
        let sources: Vec<String> = deltas.daily_sources.keys().map(|(_, source, _)| source.clone()).collect();
        let levels: Vec<String> = deltas.daily_sources.keys().map(|(_, _, level)| level.clone()).collect();
        let values: Vec<i64> = deltas.daily_sources.values().copied().collect();
        diesel::sql_query(
            "INSERT INTO log_rollups_daily_sources (workspace_id, slot, day, source, level, count) \
             SELECT $1, $6, * FROM unnest($2::int8[], $3::text[], $4::text[], $5::int8[]) \
             ON CONFLICT (workspace_id, day, source, level, slot) \
             DO UPDATE SET count = log_rollups_daily_sources.count + excluded.count",
        )
        .bind::<diesel::sql_types::Uuid, _>(workspace)
        .bind::<Array<BigInt>, _>(&days)
        .bind::<Array<Text>, _>(&sources)
        .bind::<Array<Text>, _>(&levels)
        .bind::<Array<BigInt>, _>(&values)
        .bind::<SmallInt, _>(slot)
        .execute(connection)
        .await?;
        if subtract {
            diesel::sql_query(
                "DELETE FROM log_rollups_daily_sources AS r USING unnest($2::int8[], $3::text[], $4::text[]) \
                 AS k(day, source, level) \
                 WHERE r.workspace_id = $1 AND r.day = k.day AND r.source = k.source AND r.level = k.level \
                 AND (SELECT sum(s.count) FROM log_rollups_daily_sources AS s WHERE s.workspace_id = $1 \
                      AND s.day = k.day AND s.source = k.source AND s.level = k.level) <= 0",
            )
            .bind::<diesel::sql_types::Uuid, _>(workspace)
            .bind::<Array<BigInt>, _>(&days)
            .bind::<Array<Text>, _>(&sources)
            .bind::<Array<Text>, _>(&levels)
            .execute(connection)
            .await?;
        }
    }
    Ok(())
}

/// SQL functions of the migrations (their own module: `Uuid` here is the SQL type).
mod functions {
    use diesel::sql_types::{BigInt, SmallInt, Uuid};

    diesel::define_sql_function! {
        /// The quota check (migrations `plans`, `group_commit` and `counter_slots`): counts `n`
        /// logs in the workspace's usage of `in_month`, in `in_slot` when it has no quota;
        /// false, with nothing counted, when that passes its quota. A function call is a
        /// cached prepared statement, one round trip, planned once a session.
        fn sluice_count_usage(ws: Uuid, in_month: BigInt, n: BigInt, in_slot: SmallInt) -> Bool;
    }
}

use functions::sluice_count_usage;

/// One row of a partition listing.
#[derive(QueryableByName)]
struct PartitionRow {
    #[diesel(sql_type = Text)]
    bound: String,
}

/// Counts a batch's logs in its workspace's usage of each month (`sluice_count_usage`); false,
/// with nothing counted, when that would pass the quota. A batch of one month (nearly all) is
/// one call that counts nothing when it refuses; one that spans months counts them inside a
/// savepoint, undone when a later month refuses.
async fn count_usage(
    connection: &mut AsyncPgConnection,
    workspace: Uuid,
    months: &[(i64, i64)],
    slot: i16,
) -> Result<bool, DieselError> {
    if let [(month, count)] = months {
        return diesel::select(sluice_count_usage(workspace, *month, *count, slot)).get_result(connection).await;
    }
    let counted = connection
        .transaction::<_, DieselError, _>(async move |connection: &mut AsyncPgConnection| {
            for (month, count) in months {
                let within: bool =
                    diesel::select(sluice_count_usage(workspace, *month, *count, slot)).get_result(connection).await?;
                if !within {
                    return Err(DieselError::RollbackTransaction);
                }
            }
            Ok(())
        })
        .await;
    match counted {
        Ok(()) => Ok(true),
        Err(DieselError::RollbackTransaction) => Ok(false),
        Err(error) => Err(error),
    }
}

/// What a batch needs in the transaction, worked out before it starts: its counter changes
/// and its logs per month.
struct PreparedBatch {
    deltas: RollupDeltas,
    months: Vec<(i64, i64)>,
}

impl PreparedBatch {
    fn new(batch: &Batch) -> Self {
        Self { deltas: RollupDeltas::of(&batch.logs), months: sluice_store::logs_per_month(&batch.logs) }
    }
}

/// One log removed by retention, for the counters.
#[derive(QueryableByName)]
struct Removed {
    #[diesel(sql_type = BigInt)]
    ts: i64,
    #[diesel(sql_type = Text)]
    source: String,
    #[diesel(sql_type = Text)]
    environment: String,
    #[diesel(sql_type = Text)]
    dataset: String,
    #[diesel(sql_type = Text)]
    level: String,
}

#[derive(QueryableByName)]
struct Total {
    #[diesel(sql_type = Nullable<BigInt>)]
    total: Option<i64>,
}

/// The partitions `logs` has now.
async fn load_partitions(connection: &mut AsyncPgConnection) -> Result<Partitions, DieselError> {
    let rows: Vec<PartitionRow> = diesel::sql_query(
        "SELECT pg_get_expr(c.relpartbound, c.oid) AS bound FROM pg_inherits i \
         JOIN pg_class c ON c.oid = i.inhrelid WHERE i.inhparent = 'logs'::regclass",
    )
    .load(connection)
    .await?;
    Ok(Partitions::new(rows.iter().filter_map(|row| parse_bounds(&row.bound))))
}

/// Idle time before a connection's first TCP keepalive probe, the time between probes, and
/// how many may go unanswered: a peer that vanished is noticed within a minute.
const KEEPALIVE: (Duration, Duration, u32) = (Duration::from_secs(30), Duration::from_secs(10), 3);

/// How long `migrate` may take to connect.
const MIGRATE_CONNECT_TIMEOUT: Duration = Duration::from_secs(10);

/// How the pool opens a connection: the URL's settings, plus bounds for a network that stops
/// answering (where the URL sets none): a connect timeout, TCP keepalives, a TCP user timeout
/// and the server-side `statement_timeout`, so the server also stops a query its client gave
/// up on. A URL's own `options` come after ours and so win.
fn connection_config(url: &str, options: &PgOptions) -> Result<tokio_postgres::Config, StoreError> {
    let mut config: tokio_postgres::Config =
        url.parse().map_err(|error| backend(format!("the database URL: {error}")))?;
    if config.get_connect_timeout().is_none() {
        config.connect_timeout(options.create_timeout);
    }
    if config.get_tcp_user_timeout().is_none() {
        config.tcp_user_timeout(options.call_timeout);
    }
    let (idle, interval, retries) = KEEPALIVE;
    if config.get_keepalives_idle() > idle {
        config.keepalives_idle(idle);
    }
    if config.get_keepalives_interval().is_none() {
        config.keepalives_interval(interval);
    }
    if config.get_keepalives_retries().is_none() {
        config.keepalives_retries(retries);
    }
    let ours = format!("-c statement_timeout={}", options.call_timeout.as_millis());
    let merged = match config.get_options() {
        Some(theirs) if !theirs.trim().is_empty() => format!("{ours} {theirs}"),
        _ => ours,
    };
    config.options(merged);
    Ok(config)
}

impl PgStore {
    /// Applies the pending migrations to the database at `url`
    /// (`postgres://user:password@host:port/database`), opens the pool and creates the
    /// partitions of the days around today.
    pub async fn connect(url: &str, options: &PgOptions) -> Result<PgStore, StoreError> {
        let config = Arc::new(connection_config(url, options)?);
        migrate(url).await?;
        let mut manager_config = ManagerConfig::default();
        manager_config.custom_setup = Box::new(move |_url| {
            let config = Arc::clone(&config);
            Box::pin(async move {
                let (client, connection) = config
                    .connect(tokio_postgres::NoTls)
                    .await
                    .map_err(|error| ConnectionError::BadConnection(error.to_string()))?;
                AsyncPgConnection::try_from_client_and_connection(client, connection).await
            })
        });
        let manager = AsyncDieselConnectionManager::<AsyncPgConnection>::new_with_config(url, manager_config);
        // Last in, first out: the writers take back the connections they just returned. Each
        // connection keeps its send buffer at the size of the largest group it has sent (a few
        // MB); handed out in turn (first in, first out), all sixteen grew to that, and the
        // server's peak RSS crept up 20-40 MB over a full bench run (docs/PERFORMANCE.md).
        let pool = Pool::builder(manager)
            .queue_mode(QueueMode::Lifo)
            .max_size(options.pool_size)
            .wait_timeout(Some(options.wait_timeout))
            .create_timeout(Some(options.create_timeout))
            .recycle_timeout(Some(options.recycle_timeout))
            .runtime(Runtime::Tokio1)
            .build()
            .map_err(backend)?;
        let store = PgStore {
            pool,
            partitions: Arc::new(Mutex::new(Partitions::default())),
            dense_hits: i64::from(options.search_dense_hits),
            walk_rows: i64::from(options.search_walk_rows),
            call_timeout: options.call_timeout,
            group: options.group,
            chunk_rows: options.index_chunk_rows,
            slots: Arc::new(Slots::new()),
        };
        store.create_partitions_ahead().await?;
        // Logs stored before the chunk index existed get theirs.
        let mut connection = store.connection().await?;
        let indexed = chunks::index_unchunked(&mut connection, store.chunk_rows).await.map_err(from_diesel)?;
        if indexed > 0 {
            tracing::info!(logs = indexed, "indexed logs the search index did not cover");
        }
        drop(connection);
        Ok(store)
    }

    /// `call`, failed as unavailable when it takes longer than the call timeout. Dropping it
    /// mid-transaction leaves its connection marked broken, so the pool discards it.
    async fn within<T>(&self, call: impl Future<Output = Result<T, StoreError>>) -> Result<T, StoreError> {
        tokio::time::timeout(self.call_timeout, call).await.unwrap_or_else(|_| {
            Err(unavailable(format!("no answer from PostgreSQL within {} ms", self.call_timeout.as_millis())))
        })
    }

    /// A connection from the pool.
    async fn connection(&self) -> Result<Object<AsyncPgConnection>, StoreError> {
        self.pool.get().await.map_err(from_pool)
    }

    /// Whether the database answers (readiness).
    pub async fn ping(&self) -> Result<(), StoreError> {
        self.within(async {
            let mut connection = self.connection().await?;
            connection.batch_execute("SELECT 1").await.map_err(from_diesel)
        })
        .await
    }

    /// Creates the partitions of yesterday, today and the next [`DAILY_AHEAD`] days where
    /// missing, so logs of the present never wait for one. Run at start and by the
    /// retention sweep.
    pub async fn create_partitions_ahead(&self) -> Result<(), StoreError> {
        self.within(async move {
            let today = today();
            self.ensure_partitions((today - 1..=today + DAILY_AHEAD).collect(), today).await
        })
        .await
    }

    /// Every partition of `logs`, oldest first, as the Unix ms ranges they hold.
    pub async fn partitions(&self) -> Result<Vec<(i64, i64)>, StoreError> {
        self.within(async move {
            let mut connection = self.connection().await?;
            let partitions = load_partitions(&mut connection).await.map_err(from_diesel)?;
            Ok(partitions.iter().map(|range| (range.first_ms(), range.end_ms())).collect())
        })
        .await
    }

    /// Makes sure a partition holds each of `days`, creating what is missing under the
    /// partition lock (after reading the catalogue again, since another process may have
    /// made some).
    async fn ensure_partitions(&self, days: BTreeSet<i64>, today: i64) -> Result<(), StoreError> {
        let missing = {
            let known = self.partitions.lock().unwrap_or_else(PoisonError::into_inner);
            days.iter().any(|day| !known.covers(*day))
        };
        if !missing {
            return Ok(());
        }
        let mut connection = self.connection().await?;
        let partitions = (*connection)
            .transaction::<_, DieselError, _>(async move |connection: &mut AsyncPgConnection| {
                diesel::sql_query("SELECT pg_advisory_xact_lock($1)")
                    .bind::<BigInt, _>(PARTITION_LOCK)
                    .execute(connection)
                    .await?;
                let mut partitions = load_partitions(connection).await?;
                for day in days {
                    if let Some(range) = partitions.needed(day, today) {
                        connection
                            .batch_execute(&format!(
                                "CREATE TABLE IF NOT EXISTS {} PARTITION OF logs FOR VALUES FROM ({}) TO ({})",
                                range.table_name(),
                                range.lower_sql(),
                                range.upper_sql()
                            ))
                            .await?;
                        partitions.insert(range);
                    }
                }
                Ok(partitions)
            })
            .await
            .map_err(from_diesel)?;
        *self.partitions.lock().unwrap_or_else(PoisonError::into_inner) = partitions;
        Ok(())
    }

    /// Forgets what this process knows of the partitions (after an insert found one gone).
    fn forget_partitions(&self) {
        *self.partitions.lock().unwrap_or_else(PoisonError::into_inner) = Partitions::default();
    }

    /// One insert transaction: the rows, the counters, the monthly usage.
    /// One try at writing a group, less the batches marked `refused`, in one transaction.
    /// An empty answer: committed. Otherwise the batches that would pass their workspace's
    /// quota (every one of them: each check that refuses counts nothing, so the rest are
    /// checked as they would be without it), and the transaction was rolled back, nothing
    /// stored.
    ///
    /// The rows go in first; the rows every group of a workspace updates (its monthly usage,
    /// its counters) are touched last, in one order for every writer (workspace id, then the
    /// counters' keys), so concurrent groups hold those locks only around their commit and
    /// never wait on each other in a cycle. Counting first would hold the usage row for the
    /// whole insert and let one writer of a workspace run at a time.
    async fn insert_group_once(
        &self,
        group: &[Batch],
        prepared: &[PreparedBatch],
        refused: &[bool],
        slot: i16,
    ) -> Result<Vec<usize>, DieselError> {
        // The rows, each workspace's together, and their chunks of the search index: worked
        // out before a connection is taken.
        let mut kept: Vec<usize> = (0..group.len()).filter(|&index| !refused[index]).collect();
        kept.sort_by_key(|&index| group[index].workspace);
        let mut rows: Vec<NewLogRow<'_>> = kept
            .iter()
            .flat_map(|&index| group[index].logs.iter().map(move |log| NewLogRow::new(&group[index].workspace, log)))
            .collect();
        let mut chunker = chunks::Chunker::new(self.chunk_rows);
        for row in &rows {
            let (workspace, ts, text, facets) = row.indexed();
            chunker.add(workspace, ts, text, &facets);
        }
        let mut connection = self.pool.get().await.map_err(|error| {
            DieselError::DatabaseError(DatabaseErrorKind::UnableToSendCommand, Box::new(error.to_string()))
        })?;
        let over = Mutex::new(Vec::new());
        let over_quota = &over;
        let written = (*connection)
            .transaction::<_, DieselError, _>(async move |connection: &mut AsyncPgConnection| {
                if !rows.is_empty() {
                    let ids = chunker.write(connection).await?;
                    for (row, &chunk) in rows.iter_mut().zip(chunker.chunk_of_rows()) {
                        row.chunk_id = ids[chunk];
                    }
                    insert_rows(connection, &rows).await?;
                }
                let order = kept;
                let mut refusals = Vec::new();
                for &index in &order {
                    if !count_usage(connection, *group[index].workspace.as_uuid(), &prepared[index].months, slot)
                        .await?
                    {
                        refusals.push(index);
                    }
                }
                if !refusals.is_empty() {
                    *over_quota.lock().unwrap_or_else(PoisonError::into_inner) = refusals;
                    return Err(DieselError::RollbackTransaction);
                }
                let mut deltas: BTreeMap<Uuid, RollupDeltas> = BTreeMap::new();
                for &index in &order {
                    deltas.entry(*group[index].workspace.as_uuid()).or_default().absorb(&prepared[index].deltas);
                }
                for (workspace, deltas) in &deltas {
                    apply_deltas(connection, *workspace, deltas, false, slot).await?;
                }
                Ok(())
            })
            .await;
        let over = over.into_inner().unwrap_or_else(PoisonError::into_inner);
        match written {
            Ok(()) => Ok(Vec::new()),
            Err(DieselError::RollbackTransaction) if !over.is_empty() => Ok(over),
            Err(error) => Err(error),
        }
    }

    /// Drops the partitions whose every log is older than `cutoff_ms`, with their counters;
    /// returns how many logs they held.
    async fn drop_partitions_before(&self, cutoff_ms: i64) -> Result<u64, StoreError> {
        self.within(async move {
            let mut connection = self.connection().await?;
            let (dropped, partitions) = (*connection)
                .transaction::<_, DieselError, _>(async move |connection: &mut AsyncPgConnection| {
                    diesel::sql_query("SELECT pg_advisory_xact_lock($1)")
                        .bind::<BigInt, _>(PARTITION_LOCK)
                        .execute(connection)
                        .await?;
                    let mut partitions = load_partitions(connection).await?;
                    let mut dropped = 0_u64;
                    let mut dropped_before = i64::MIN;
                    for range in partitions.before(cutoff_ms) {
                        let (first, end) = (range.first_ms(), range.end_ms());
                        // The hourly counters of the range are exactly its logs: every
                        // workspace's logs of those hours are in this partition.
                        let total: Vec<Total> = diesel::sql_query(
                            "SELECT SUM(count)::int8 AS total FROM log_rollups WHERE hour >= $1 AND hour < $2",
                        )
                        .bind::<BigInt, _>(first)
                        .bind::<BigInt, _>(end)
                        .load(connection)
                        .await?;
                        dropped +=
                            total.as_slice().first().and_then(|row| row.total).map_or(0, |total| total.max(0) as u64);
                        for (table, at) in [
                            ("log_rollups", "hour"),
                            ("log_rollups_daily", "day"),
                            ("log_rollups_daily_sources", "day"),
                        ] {
                            diesel::sql_query(format!("DELETE FROM {table} WHERE {at} >= $1 AND {at} < $2"))
                                .bind::<BigInt, _>(first)
                                .bind::<BigInt, _>(end)
                                .execute(connection)
                                .await?;
                        }
                        let name: Vec<PartitionRow> = diesel::sql_query(
                            "SELECT c.relname::text AS bound FROM pg_inherits i JOIN pg_class c ON c.oid = i.inhrelid \
                                 WHERE i.inhparent = 'logs'::regclass AND pg_get_expr(c.relpartbound, c.oid) = $1",
                        )
                        .bind::<Text, _>(format!(
                            "FOR VALUES FROM ('{}') TO ('{}')",
                            range.lower_sql(),
                            range.upper_sql()
                        ))
                        .load(connection)
                        .await?;
                        for table in name {
                            connection.batch_execute(&format!("DROP TABLE \"{}\"", table.bound)).await?;
                        }
                        dropped_before = dropped_before.max(end);
                        partitions.remove(range);
                    }
                    // Chunks whose every log was in the dropped days.
                    if dropped_before > i64::MIN {
                        diesel::sql_query("DELETE FROM log_chunks WHERE max_ts < $1")
                            .bind::<BigInt, _>(dropped_before)
                            .execute(connection)
                            .await?;
                    }
                    Ok((dropped, partitions))
                })
                .await
                .map_err(from_diesel)?;
            *self.partitions.lock().unwrap_or_else(PoisonError::into_inner) = partitions;
            Ok(dropped)
        })
        .await
    }

    /// Reads, newest first, the rows of `query` in steps (keyset paging on `(ts, id)`), with
    /// bitmap scans off so each step walks the ordered index, handing them to `page` until it
    /// has decided or `max_rows` were read. Returns how many rows were read.
    async fn walk(
        &self,
        workspace: WorkspaceId,
        filter: &LogFilter,
        page: &mut PageBuilder<'_>,
        max_rows: Option<i64>,
    ) -> Result<i64, StoreError> {
        let mut connection = self.connection().await?;
        let mut read = 0_i64;
        let mut after: Option<(i64, Uuid)> = None;
        loop {
            let step = max_rows.map_or(WALK_STEP, |max| WALK_STEP.min(max - read));
            if step <= 0 {
                return Ok(read);
            }
            let mut query = filtered(&workspace, filter);
            if let Some((ts, id)) = after {
                query = query.filter(logs::ts.lt(ts).or(logs::ts.eq(ts).and(logs::id.lt(id))));
            }
            let query = query.order((logs::ts.desc(), logs::id.desc())).limit(step).select(LogRow::as_select());
            let rows: Vec<LogRow> = (*connection)
                .transaction::<_, DieselError, _>(async move |connection: &mut AsyncPgConnection| {
                    connection.batch_execute("SET LOCAL enable_bitmapscan = off").await?;
                    query.load(connection).await
                })
                .await
                .map_err(from_diesel)?;
            let got = rows.len() as i64;
            read += got;
            after = rows.last().map(|row| (row.ts, row.id));
            if !page.take(rows)? || got < step {
                return Ok(read);
            }
        }
    }

    /// Reads the workspace's chunks that pass `chunk_condition` newest first (by their last
    /// log's time), a step of chunks at a time, and their logs that `filter` (and
    /// `row_condition`) selects and `keep` accepts, until `need` of those are known to be the
    /// newest: every chunk not read yet ends before them. Returns the rows read, newest first:
    /// the first `need` of the workspace's, or all of them when there are fewer.
    async fn chunk_walk(
        &self,
        workspace: WorkspaceId,
        filter: &LogFilter,
        chunk_condition: &(dyn Fn() -> Option<ChunkCondition> + Sync),
        row_condition: &(dyn Fn() -> Option<Condition> + Sync),
        keep: &(dyn Fn(&LogRow) -> bool + Sync),
        need: usize,
    ) -> Result<Vec<LogRow>, StoreError> {
        let mut connection = self.connection().await?;
        let mut rows: Vec<LogRow> = Vec::new();
        let mut after: Option<(i64, i64)> = None;
        let mut step = CHUNK_WALK_FIRST;
        loop {
            let mut query = chunks_in_span(&workspace, filter);
            if let Some(condition) = chunk_condition() {
                query = query.filter(condition);
            }
            if let Some((max_ts, id)) = after {
                query = query
                    .filter(log_chunks::max_ts.lt(max_ts).or(log_chunks::max_ts.eq(max_ts).and(log_chunks::id.lt(id))));
            }
            let chunks: Vec<(i64, i64, i64)> = query
                .order((log_chunks::max_ts.desc(), log_chunks::id.desc()))
                .limit(step)
                .select((log_chunks::id, log_chunks::min_ts, log_chunks::max_ts))
                .load(&mut connection)
                .await
                .map_err(from_diesel)?;
            let (Some(&(_, _, high)), Some(&(last, _, bound))) = (<[_]>::first(&chunks), <[_]>::last(&chunks)) else {
                break;
            };
            let low = chunks.iter().map(|&(_, min_ts, _)| min_ts).min().unwrap_or(i64::MIN);
            let ids: Vec<i64> = chunks.iter().map(|&(id, _, _)| id).collect();
            // The chunks' time span lets PostgreSQL skip the partitions they are not in.
            let mut query =
                filtered(&workspace, filter).filter(logs::chunk_id.eq_any(ids)).filter(logs::ts.between(low, high));
            if let Some(condition) = row_condition() {
                query = query.filter(condition);
            }
            let read: Vec<LogRow> =
                query.select(LogRow::as_select()).load(&mut connection).await.map_err(from_diesel)?;
            rows.extend(read.into_iter().filter(|row| keep(row)));
            after = Some((bound, last));
            // Unread chunks end at `bound` or before: the rows after it are final.
            if (chunks.len() as i64) < step || rows.iter().filter(|row| row.ts > bound).count() >= need {
                break;
            }
            step = (step * CHUNK_WALK_GROWTH).min(CHUNK_WALK_MAX);
        }
        rows.sort_by_key(|row| std::cmp::Reverse((row.ts, row.id)));
        Ok(rows)
    }

    /// The candidate chunks of `search` in the workspace whose time span meets the filter's
    /// (their filters tested in place): their ids and how many logs they hold.
    async fn candidate_chunks(
        &self,
        workspace: WorkspaceId,
        search: &Search,
        filter: &LogFilter,
    ) -> Result<Vec<(i64, i32)>, StoreError> {
        let Some(condition) = chunk_condition(search) else { return Ok(Vec::new()) };
        let query = chunks_in_span(&workspace, filter).filter(condition).select((log_chunks::id, log_chunks::logs));
        let mut connection = self.connection().await?;
        query.load(&mut connection).await.map_err(from_diesel)
    }

    /// The logs of `chunks` that the index's needles are in (a `LIKE` on the search text, so
    /// few rows leave the server), filtered, newest first.
    async fn chunk_logs(
        &self,
        workspace: WorkspaceId,
        search: &Search,
        filter: &LogFilter,
        chunks: Vec<i64>,
    ) -> Result<Vec<LogRow>, StoreError> {
        let Some(condition) = index_condition(search) else { return Ok(Vec::new()) };
        if chunks.is_empty() {
            return Ok(Vec::new());
        }
        let query = filtered(&workspace, filter)
            .filter(logs::chunk_id.eq_any(chunks))
            .filter(condition)
            .select(LogRow::as_select());
        let mut connection = self.connection().await?;
        let mut rows: Vec<LogRow> = query.load(&mut connection).await.map_err(from_diesel)?;
        rows.sort_by_key(|row| std::cmp::Reverse((row.ts, row.id)));
        Ok(rows)
    }
}

#[async_trait]
impl LogStore for PgStore {
    async fn insert_logs(&self, workspace: WorkspaceId, batch: &[Log]) -> Result<(), StoreError> {
        let group = [Batch { workspace, logs: batch.to_vec() }];
        sluice_store::only_answer(self.insert_group(&group).await?)
    }

    async fn insert_group(&self, group: &[Batch]) -> Result<Vec<Result<(), StoreError>>, StoreError> {
        self.within(async move {
            let today = today();
            let days: BTreeSet<i64> =
                group.iter().flat_map(|batch| &batch.logs).map(|log| day_of(log.entry.timestamp)).collect();
            let prepared: Vec<PreparedBatch> = group.iter().map(PreparedBatch::new).collect();
            self.ensure_partitions(days.clone(), today).await?;
            // Each try either commits or finds the batches over their quota (rarely: a
            // workspace at the end of its quota), which the next try leaves out: two tries,
            // unless another writer used up a quota in between.
            let mut refused = vec![false; group.len()];
            let mut relearned = false;
            let slot = self.slots.take();
            loop {
                match self.insert_group_once(group, &prepared, &refused, slot.number()).await {
                    Ok(over) if over.is_empty() => break,
                    Ok(over) => over.into_iter().for_each(|index| refused[index] = true),
                    // Another process dropped a partition this one knew: learn again, retry once.
                    Err(error) if missing_partition(&error) && !relearned => {
                        relearned = true;
                        self.forget_partitions();
                        self.ensure_partitions(days.clone(), today).await?;
                    }
                    Err(error) => return Err(from_diesel(error)),
                }
            }
            Ok(refused.iter().map(|&refused| if refused { Err(StoreError::QuotaExceeded) } else { Ok(()) }).collect())
        })
        .await
    }

    fn group_options(&self) -> GroupOptions {
        self.group
    }

    async fn list_logs(&self, workspace: WorkspaceId, filter: &LogFilter, page: Page) -> Result<LogPage, StoreError> {
        self.within(async move {
            // A filter on a facet: the chunks that may hold its value, newest first.
            if facet_condition(filter).is_some() {
                let (offset, limit) = (usize::try_from(page.offset).unwrap_or(usize::MAX), page.limit as usize);
                let need = rows_needed(page);
                let rows =
                    self.chunk_walk(workspace, filter, &|| facet_condition(filter), &|| None, &|_| true, need).await?;
                let has_more = rows.len() >= need;
                let logs = rows.into_iter().skip(offset).take(limit).map(Log::try_from).collect::<Result<_, _>>()?;
                return Ok(LogPage { logs, has_more });
            }
            let offset = i64::try_from(page.offset).unwrap_or(i64::MAX);
            let query = filtered(&workspace, filter)
                .order((logs::ts.desc(), logs::id.desc()))
                .limit(i64::from(page.limit) + 1)
                .offset(offset)
                .select(LogRow::as_select());
            let mut connection = self.connection().await?;
            let rows: Vec<LogRow> = query.load(&mut connection).await.map_err(from_diesel)?;
            let has_more = rows.len() > page.limit as usize;
            let logs = rows.into_iter().take(page.limit as usize).map(Log::try_from).collect::<Result<_, _>>()?;
            Ok(LogPage { logs, has_more })
        })
        .await
    }

    async fn get_log(&self, workspace: WorkspaceId, id: LogId) -> Result<Option<Log>, StoreError> {
        self.within(async move {
            let mut connection = self.connection().await?;
            logs::table
                .filter(logs::workspace_id.eq(*workspace.as_uuid()))
                .filter(logs::id.eq(*id.as_uuid()))
                .select(LogRow::as_select())
                .first(&mut connection)
                .await
                .optional()
                .map_err(from_diesel)?
                .map(Log::try_from)
                .transpose()
        })
        .await
    }

    async fn monthly_usage(&self, workspace: WorkspaceId, month_ms: i64) -> Result<u64, StoreError> {
        self.within(async move {
            let mut connection = self.connection().await?;
            // The sum of the month's slots.
            let total: Vec<Total> = diesel::sql_query(
                "SELECT SUM(logs)::int8 AS total FROM usage_monthly WHERE workspace_id = $1 AND month = $2",
            )
            .bind::<diesel::sql_types::Uuid, _>(*workspace.as_uuid())
            .bind::<BigInt, _>(month_ms)
            .load(&mut connection)
            .await
            .map_err(from_diesel)?;
            let logs = total.into_iter().next().and_then(|row| row.total);
            Ok(logs.map_or(0, |logs| u64::try_from(logs).unwrap_or(0)))
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
        self.within(async move {
            let mut builder = PageBuilder::new(search, page);
            // A filter on a facet: the chunks that may hold its value (and the needles), newest
            // first; the needles narrow the rows read as in `chunk_logs`.
            if facet_condition(filter).is_some() {
                let need = rows_needed(page);
                let chunks = || all_of([chunk_condition(search), facet_condition(filter)].into_iter().flatten());
                let rows = self
                    .chunk_walk(
                        workspace,
                        filter,
                        &chunks,
                        &|| index_condition(search),
                        &|row| row.matches(search),
                        need,
                    )
                    .await?;
                builder.take(rows)?;
                return Ok(builder.finish());
            }
            // Without an indexable needle: walk the filtered logs newest first.
            if index_condition(search).is_none() {
                self.walk(workspace, filter, &mut builder, None).await?;
                return Ok(builder.finish());
            }
            // Candidate chunks holding few logs: read just those, whatever the workspace's size.
            let chunks = self.candidate_chunks(workspace, search, filter).await?;
            let candidates: i64 = chunks.iter().map(|(_, logs)| i64::from(*logs)).sum();
            let ids: Vec<i64> = chunks.into_iter().map(|(id, _)| id).collect();
            if candidates <= self.dense_hits {
                builder.take(self.chunk_logs(workspace, search, filter, ids).await?)?;
                return Ok(builder.finish());
            }
            // A common needle: look in the newest logs first, for a bounded number of rows.
            let walked = self.walk(workspace, filter, &mut builder, Some(self.walk_rows)).await?;
            if builder.has_more || walked < self.walk_rows {
                return Ok(builder.finish());
            }
            // Common, but not among the newest: every candidate chunk's logs, newest first.
            let mut builder = PageBuilder::new(search, page);
            builder.take(self.chunk_logs(workspace, search, filter, ids).await?)?;
            Ok(builder.finish())
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
        self.within(async move {
            let narrow = filter.environment.is_none() && filter.dataset.is_none();
            let mut connection = self.connection().await?;
            let rows: Vec<CountRow> = diesel::sql_query(counts_sql(by, from_ms, to_ms, narrow))
                .bind::<diesel::sql_types::Uuid, _>(*workspace.as_uuid())
                .bind::<BigInt, _>(from_ms)
                .bind::<BigInt, _>(to_ms)
                .bind::<Nullable<Text>, _>(filter.source.as_deref().map(|source| text::encode(source).into_owned()))
                .bind::<Nullable<Text>, _>(filter.environment.map(|environment| environment.as_str()))
                .bind::<Nullable<Text>, _>(filter.dataset.as_deref().map(|dataset| text::encode(dataset).into_owned()))
                .load(&mut connection)
                .await
                .map_err(from_diesel)?;
            rows.into_iter()
                .map(|row| {
                    let level = row.level.parse().map_err(|_| backend("corrupt rollup level in the database"))?;
                    let bucket = match by {
                        CountBy::Hour => Bucket::Hour(row.hour),
                        CountBy::Day => Bucket::Day(row.hour),
                        CountBy::Source => Bucket::Source(text::decode(row.source)),
                    };
                    Ok(LevelCount { bucket, level, count: u64::try_from(row.total).unwrap_or_default() })
                })
                .collect()
        })
        .await
    }

    async fn delete_logs_before(&self, workspace: WorkspaceId, cutoff_ms: i64) -> Result<u64, StoreError> {
        let mut deleted = 0;
        loop {
            let batch = self
                .within(async {
                    let mut connection = self.connection().await?;
                    (*connection)
                        .transaction::<_, DieselError, _>(async move |connection: &mut AsyncPgConnection| {
                            let removed: Vec<Removed> = diesel::sql_query(
                                "WITH victims AS (SELECT ts, id FROM logs WHERE workspace_id = $1 AND ts < $2 \
                             ORDER BY ts LIMIT $3) \
                             DELETE FROM logs USING victims \
                             WHERE logs.workspace_id = $1 AND logs.ts = victims.ts AND logs.id = victims.id \
                             RETURNING logs.ts, logs.source, logs.environment, logs.dataset, logs.level",
                            )
                            .bind::<diesel::sql_types::Uuid, _>(*workspace.as_uuid())
                            .bind::<BigInt, _>(cutoff_ms)
                            .bind::<BigInt, _>(DELETE_BATCH)
                            .load(connection)
                            .await?;
                            let mut deltas = RollupDeltas::default();
                            let count = removed.len() as u64;
                            for row in removed {
                                let scope = Scope {
                                    source: row.source,
                                    environment: row.environment,
                                    dataset: row.dataset,
                                    level: row.level,
                                };
                                deltas.add(row.ts, scope, -1);
                            }
                            apply_deltas(connection, *workspace.as_uuid(), &deltas, true, 0).await?;
                            Ok(count)
                        })
                        .await
                        .map_err(from_diesel)
                })
                .await?;
            deleted += batch;
            if batch < DELETE_BATCH as u64 {
                break;
            }
        }
        // Chunks whose every log is now gone (checked: an insert of old logs may have come in
        // since). A chunk that keeps some logs stays whole: its filter, a superset of theirs,
        // only adds candidates the exact check drops.
        self.within(async {
            let mut connection = self.connection().await?;
            diesel::sql_query(
                "DELETE FROM log_chunks WHERE workspace_id = $1 AND max_ts < $2 AND NOT EXISTS \
                 (SELECT 1 FROM logs WHERE logs.workspace_id = $1 AND logs.chunk_id = log_chunks.id)",
            )
            .bind::<diesel::sql_types::Uuid, _>(*workspace.as_uuid())
            .bind::<BigInt, _>(cutoff_ms)
            .execute(&mut connection)
            .await
            .map_err(from_diesel)
        })
        .await?;
        Ok(deleted)
    }

    async fn sweep(&self, cutoffs: &[(WorkspaceId, i64)]) -> Result<u64, StoreError> {
        // Whole partitions go when every workspace's retention has passed them; a workspace
        // without a cutoff here keeps everything, so nothing is dropped then.
        let everyone: BTreeSet<WorkspaceId> =
            self.list_workspaces().await?.iter().map(|workspace| workspace.id).collect();
        let named: BTreeSet<WorkspaceId> = cutoffs.iter().map(|(workspace, _)| *workspace).collect();
        let mut deleted = 0;
        if everyone.is_subset(&named)
            && let Some(oldest) = cutoffs.iter().map(|(_, cutoff)| *cutoff).min()
        {
            deleted += self.drop_partitions_before(oldest).await?;
        }
        for (workspace, cutoff) in cutoffs {
            deleted += self.delete_logs_before(*workspace, *cutoff).await?;
        }
        self.create_partitions_ahead().await?;
        Ok(deleted)
    }
}

#[async_trait]
impl TenantStore for PgStore {
    async fn create_workspace(&self, workspace: &Workspace) -> Result<(), StoreError> {
        self.within(async move {
            let mut connection = self.connection().await?;
            diesel::insert_into(workspaces::table)
                .values(&WorkspaceRow::from(workspace))
                .execute(&mut connection)
                .await
                .map_err(from_diesel)?;
            Ok(())
        })
        .await
    }

    async fn list_workspaces(&self) -> Result<Vec<Workspace>, StoreError> {
        self.within(async move {
            let mut connection = self.connection().await?;
            let rows: Vec<WorkspaceRow> = workspaces::table
                .order((workspaces::created_at.asc(), workspaces::id.asc()))
                .select(WorkspaceRow::as_select())
                .load(&mut connection)
                .await
                .map_err(from_diesel)?;
            rows.into_iter().map(Workspace::try_from).collect()
        })
        .await
    }

    async fn get_workspace(&self, id: WorkspaceId) -> Result<Option<Workspace>, StoreError> {
        self.within(async move {
            let mut connection = self.connection().await?;
            workspaces::table
                .find(*id.as_uuid())
                .select(WorkspaceRow::as_select())
                .first(&mut connection)
                .await
                .optional()
                .map_err(from_diesel)?
                .map(Workspace::try_from)
                .transpose()
        })
        .await
    }

    async fn set_plan(&self, id: WorkspaceId, plan: Plan, limits: Limits) -> Result<(), StoreError> {
        let row = PlanChange::new(plan, &limits);
        self.within(async move {
            let mut connection = self.connection().await?;
            let changed = diesel::update(workspaces::table.find(*id.as_uuid()))
                .set(row)
                .execute(&mut connection)
                .await
                .map_err(from_diesel)?;
            if changed == 0 { Err(StoreError::NotFound("workspace")) } else { Ok(()) }
        })
        .await
    }

    async fn create_key(&self, key: &NewApiKey) -> Result<(), StoreError> {
        self.within(async move {
            let mut connection = self.connection().await?;
            diesel::insert_into(api_keys::table)
                .values(&NewKeyRow::from(key))
                .execute(&mut connection)
                .await
                .map_err(from_diesel)?;
            Ok(())
        })
        .await
    }

    async fn list_keys(&self, workspace: WorkspaceId) -> Result<Vec<ApiKeyRecord>, StoreError> {
        self.within(async move {
            let mut connection = self.connection().await?;
            let rows: Vec<KeyRow> = api_keys::table
                .filter(api_keys::workspace_id.eq(*workspace.as_uuid()))
                .order((api_keys::created_at.asc(), api_keys::id.asc()))
                .select(KeyRow::as_select())
                .load(&mut connection)
                .await
                .map_err(from_diesel)?;
            rows.into_iter().map(ApiKeyRecord::try_from).collect()
        })
        .await
    }

    async fn revoke_key(&self, id: KeyId, now_ms: i64) -> Result<(), StoreError> {
        self.within(async move {
            let mut connection = self.connection().await?;
            // A key is found by id alone (the caller may not know its workspace).
            let existing: Option<Option<i64>> = api_keys::table
                .filter(api_keys::id.eq(*id.as_uuid()))
                .select(api_keys::revoked_at)
                .first(&mut connection)
                .await
                .optional()
                .map_err(from_diesel)?;
            match existing {
                None => Err(StoreError::NotFound("key")),
                Some(Some(_)) => Ok(()),
                Some(None) => {
                    diesel::update(
                        api_keys::table.filter(api_keys::id.eq(*id.as_uuid())).filter(api_keys::revoked_at.is_null()),
                    )
                    .set(api_keys::revoked_at.eq(now_ms))
                    .execute(&mut connection)
                    .await
                    .map_err(from_diesel)?;
                    Ok(())
                }
            }
        })
        .await
    }

    async fn find_key(&self, hash: &[u8; 32]) -> Result<Option<(ApiKeyRecord, Workspace)>, StoreError> {
        self.within(async move {
            let mut connection = self.connection().await?;
            let found: Option<(KeyRow, WorkspaceRow)> = api_keys::table
                .inner_join(workspaces::table)
                .filter(api_keys::hash.eq(hash.to_vec()))
                .select((KeyRow::as_select(), WorkspaceRow::as_select()))
                .first(&mut connection)
                .await
                .optional()
                .map_err(from_diesel)?;
            found.map(|(key, workspace)| Ok((key.try_into()?, workspace.try_into()?))).transpose()
        })
        .await
    }

    async fn bootstrap(&self, workspace: &Workspace, key: &NewApiKey) -> Result<bool, StoreError> {
        self.within(async move {
            let workspace = WorkspaceRow::from(workspace);
            let key = NewKeyRow::from(key);
            let mut connection = self.connection().await?;
            (*connection)
                .transaction::<_, DieselError, _>(async move |connection: &mut AsyncPgConnection| {
                    // Two servers starting together: the second waits here, then sees one.
                    diesel::sql_query("LOCK TABLE workspaces IN EXCLUSIVE MODE").execute(connection).await?;
                    let existing: i64 = workspaces::table.count().get_result(connection).await?;
                    if existing > 0 {
                        return Ok(false);
                    }
                    diesel::insert_into(workspaces::table).values(&workspace).execute(connection).await?;
                    diesel::insert_into(api_keys::table).values(&key).execute(connection).await?;
                    Ok(true)
                })
                .await
                .map_err(from_diesel)
        })
        .await
    }
}

#[async_trait]
impl Store for PgStore {
    async fn ping(&self) -> Result<(), StoreError> {
        PgStore::ping(self).await
    }

    async fn maintain(&self) -> Result<(), StoreError> {
        self.create_partitions_ahead().await?;
        // Logs a process of an older release stored without a chunk since this one connected
        // (a rolling upgrade) become searchable here; usually one probe of an empty index.
        self.within(async {
            let mut connection = self.connection().await?;
            chunks::index_unchunked(&mut connection, self.chunk_rows).await.map_err(from_diesel)
        })
        .await?;
        Ok(())
    }
}

/// Runs the pending migrations on a connection of their own, on a blocking thread (diesel's
/// migration harness is synchronous; the wrapper drives the async connection there).
pub async fn migrate(url: &str) -> Result<(), StoreError> {
    let connection = tokio::time::timeout(MIGRATE_CONNECT_TIMEOUT, AsyncPgConnection::establish(url))
        .await
        .map_err(|_| unavailable(format!("no answer from PostgreSQL within {MIGRATE_CONNECT_TIMEOUT:?}")))?
        .map_err(unavailable)?;
    tokio::task::spawn_blocking(move || {
        let mut connection: AsyncConnectionWrapper<AsyncPgConnection> = AsyncConnectionWrapper::from(connection);
        // One server at a time: two starting together must not both apply a migration.
        SimpleConnection::batch_execute(&mut connection, &format!("SELECT pg_advisory_lock({MIGRATION_LOCK})"))
            .map_err(backend)?;
        let applied = connection
            .run_pending_migrations(MIGRATIONS)
            .map(|_| ())
            .map_err(|error| backend(format!("migrations: {error}")));
        let unlocked =
            SimpleConnection::batch_execute(&mut connection, &format!("SELECT pg_advisory_unlock({MIGRATION_LOCK})"))
                .map_err(backend);
        applied.and(unlocked)
    })
    .await
    .map_err(backend)?
}
