//! Search: the index's candidate chunks read by `seq` range, the unindexed tail read whole,
//! and the exact check run inside SQLite (`sluice_matches`) so only matches are sorted.

use async_trait::async_trait;
use diesel::connection::DefaultLoadingMode;
use diesel::prelude::*;
use diesel::result::Error as DieselError;
use diesel::sql_types::{BigInt, Binary, Nullable, Text};
use sluice_model::WorkspaceId;
use sluice_store::page::{Newest, PageCollector};
use sluice_store::{LogFilter, LogPage, LogSearch, Page, Search, StoreError};

use crate::connection::{SqliteStore, backend, from_diesel};
use crate::deadline::Verdict;
use foldhash::HashSet;

use crate::index;
use crate::lookup::NeedleLookup;
use crate::read::filtered;
use crate::rows::LogRow;
use crate::schema::logs;

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
/// span meets the filter's (`?3`, `?4`), up to seq `?5`, at most `?6` of them: the index's hits
/// drive (`CROSS JOIN`). The search reads the logs past `?5`, the unindexed tail when it
/// started, whole; chunks written since are left out, their logs being in that tail.
pub(crate) const CHUNK_HITS_SQL: &str = "SELECT chunk.id AS first, chunk.last_seq AS last, chunk.max_ts AS max_ts \
     FROM (SELECT rowid AS hit FROM log_chunks_fts WHERE log_chunks_fts MATCH ?1) AS hits \
     CROSS JOIN log_chunks AS chunk ON chunk.id = hits.hit \
     WHERE chunk.workspace_id = ?2 AND chunk.last_seq <= ?5 \
     AND (?3 IS NULL OR chunk.max_ts >= ?3) AND (?4 IS NULL OR chunk.min_ts <= ?4) LIMIT ?6";

/// The workspace's (`?1`) chunks up to seq `?4` whose time span meets the filter's (`?2`, `?3`),
/// newest first (by their last log's time) after the chunk (`?5` max_ts, `?6` id) read last,
/// `?7` of them.
pub(crate) const CHUNKS_BY_RECENCY_SQL: &str = "SELECT id AS first, last_seq AS last, max_ts FROM log_chunks \
     WHERE workspace_id = ?1 AND last_seq <= ?4 \
     AND (?2 IS NULL OR max_ts >= ?2) AND (?3 IS NULL OR min_ts <= ?3) \
     AND (max_ts < ?5 OR (max_ts = ?5 AND id < ?6)) \
     ORDER BY max_ts DESC, id DESC LIMIT ?7";

/// The given chunks (`?1`, a JSON array of ids) of the workspace (`?2`) whose time span meets
/// the filter's (`?3`, `?4`), up to seq `?5`.
pub(crate) const CHUNKS_LISTED_SQL: &str = "SELECT chunk.id AS first, chunk.last_seq AS last, chunk.max_ts AS max_ts \
     FROM json_each(?1) AS listed CROSS JOIN log_chunks AS chunk ON chunk.id = listed.value \
     WHERE chunk.workspace_id = ?2 AND chunk.last_seq <= ?5 \
     AND (?3 IS NULL OR chunk.max_ts >= ?3) AND (?4 IS NULL OR chunk.min_ts <= ?4)";

/// Every chunk the full-text index says may hold the needles (`?1`).
pub(crate) const ALL_HITS_SQL: &str = "SELECT rowid AS hit FROM log_chunks_fts WHERE log_chunks_fts MATCH ?1";

/// The chunks from seq `?2` to `?3` that the index says may hold the needles (`?1`).
pub(crate) const HITS_IN_RANGE_SQL: &str =
    "SELECT rowid AS hit FROM log_chunks_fts WHERE log_chunks_fts MATCH ?1 AND rowid BETWEEN ?2 AND ?3";

/// The matching logs of given chunks (`?1`, a JSON array of `[first, last]` seqs), each
/// chunk read as a range of `seq`.
pub(crate) fn chunk_logs_sql() -> String {
    format!(
        "SELECT {LOG_COLUMNS} FROM json_each(?1) AS chunk \
         CROSS JOIN logs ON logs.seq BETWEEN chunk.value ->> 0 AND chunk.value ->> 1 \
         WHERE {SEARCH_FILTERS}"
    )
}

/// The matching logs of given seqs (`?1`, a JSON array): those of chunks whose per-log filters
/// may hold the needles ([`sluice_store::log_keys`]).
pub(crate) fn seq_logs_sql() -> String {
    format!(
        "SELECT {LOG_COLUMNS} FROM json_each(?1) AS slot \
         CROSS JOIN logs ON logs.seq = slot.value \
         WHERE {SEARCH_FILTERS}"
    )
}

/// A chunk's per-log filters, as a walk reads them.
#[derive(QueryableByName)]
struct ChunkLogKeys {
    #[diesel(sql_type = BigInt)]
    chunk_id: i64,
    #[diesel(sql_type = Binary)]
    log_keys: Vec<u8>,
}

/// The chunks a walk reads first; each step reads [`STEP_GROWTH`] times more (or what the page
/// still needs, when fewer), up to [`STEP_MAX`]: a page of a common needle is decided in the
/// first chunk or two, a rare one's matches are one or two a chunk.
const STEP_FIRST: usize = 4;
const STEP_GROWTH: usize = 2;
const STEP_MAX: usize = 64;

/// The last seq of the unindexed tail's range: past any log.
const TAIL_END: i64 = i64::MAX;

/// One chunk: its first and last seq, and its newest log's time.
#[derive(QueryableByName, Clone, Copy)]
struct ChunkHit {
    #[diesel(sql_type = BigInt)]
    first: i64,
    #[diesel(sql_type = BigInt)]
    last: i64,
    #[diesel(sql_type = BigInt)]
    max_ts: i64,
}

/// A chunk id the index hit.
#[derive(QueryableByName)]
struct Hit {
    #[diesel(sql_type = BigInt)]
    hit: i64,
}

/// Offers `rows` (newest first, as a statement steps them) to the page of `search` until it
/// is decided; the collector also tells how many rows were read.
fn collect_page<'a>(
    rows: impl Iterator<Item = Result<LogRow, DieselError>>,
    search: &'a Search,
    page: Page,
) -> Result<PageCollector<'a>, StoreError> {
    let mut collector = PageCollector::new(search, page);
    for row in rows {
        if !collector.offer(row.map_err(from_diesel)?)? {
            break;
        }
    }
    Ok(collector)
}

/// SQL functions written in Rust, registered on every connection.
pub(crate) mod functions {
    use diesel::sql_types::{Nullable, Text};

    diesel::define_sql_function! {
        /// The exact check of the search under way on this thread ([`super::SearchScope`]) on a
        /// log's searchable fields; fails the statement past the call's deadline.
        fn sluice_matches(message: Text, error_name: Nullable<Text>, error_stack: Nullable<Text>, data: Nullable<Text>) -> Bool;
    }

    diesel::define_sql_function! {
        /// True, or (past the call's deadline) an error that ends the statement: in the filter
        /// of every statement that may step many rows (`crate::deadline`).
        fn sluice_alive() -> Bool;
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
pub(crate) fn register_functions(connection: &mut SqliteConnection) -> QueryResult<()> {
    functions::sluice_matches_utils::register_impl(
        connection,
        |message: String, error_name: Option<String>, error_stack: Option<String>, data: Option<String>| {
            Verdict::of(|| {
                // Outside a search scope nothing is filtered; every path checks again in Rust.
                CURRENT_SEARCH.with(|current| {
                    current.borrow().as_ref().is_none_or(|search| {
                        search.matches(&message, error_name.as_deref(), error_stack.as_deref(), data.as_deref())
                    })
                })
            })
        },
    )?;
    // Not deterministic: SQLite would otherwise call it once per statement, not once a row.
    functions::sluice_alive_utils::register_nondeterministic_impl(connection, || Verdict::of(|| true))
}

/// The filters of a search bound after its first parameter (`?1`, given), as
/// [`SEARCH_FILTERS`] numbers them.
fn bind_filters(
    query: diesel::query_builder::SqlQuery,
    first: String,
    workspace: &WorkspaceId,
    filter: &LogFilter,
) -> impl diesel::query_dsl::LoadQuery<'static, SqliteConnection, LogRow> {
    query
        .bind::<Text, _>(first)
        .bind::<Binary, _>(workspace.as_bytes().to_vec())
        .bind::<Nullable<Text>, _>(filter.level.map(|level| level.as_str()))
        .bind::<Nullable<Text>, _>(filter.source.clone())
        .bind::<Nullable<Text>, _>(filter.environment.map(|environment| environment.as_str()))
        .bind::<Nullable<Text>, _>(filter.dataset.clone())
        .bind::<Nullable<BigInt>, _>(filter.from)
        .bind::<Nullable<BigInt>, _>(filter.to)
}

/// The matching logs of `ranges` (`[first, last]` seqs), filtered.
fn read_ranges(
    connection: &mut SqliteConnection,
    ranges: &[[i64; 2]],
    workspace: &WorkspaceId,
    filter: &LogFilter,
) -> Result<Vec<LogRow>, StoreError> {
    let ranges = serde_json::to_string(ranges).map_err(backend)?;
    bind_filters(diesel::sql_query(chunk_logs_sql()), ranges, workspace, filter).load(connection).map_err(from_diesel)
}

/// One step of a walk: the chunks to read (those the index hits among the next ones by
/// recency), the time the step's last chunk ends at (every chunk left ends then or before), and
/// whether chunks are left.
struct Step {
    read: Vec<ChunkHit>,
    bound: i64,
    more: bool,
}

/// Gives a walk its next step of up to the given count of chunks; `None` once none are left.
type NextStep<'a> = dyn FnMut(&mut SqliteConnection, usize) -> Result<Option<Step>, StoreError> + 'a;

/// The matching logs of `chunks`: of those with per-log filters, the logs whose filters hold
/// `keys` ([`sluice_store::log_keys::slots`]), by seq; of the others (written before such
/// filters), every log.
fn read_chunks(
    connection: &mut SqliteConnection,
    chunks: &[ChunkHit],
    keys: Option<&[Option<Vec<Vec<u64>>>]>,
    workspace: &WorkspaceId,
    filter: &LogFilter,
) -> Result<Vec<LogRow>, StoreError> {
    let Some(keys) = keys else {
        let ranges: Vec<[i64; 2]> = chunks.iter().map(|chunk| [chunk.first, chunk.last]).collect();
        return read_ranges(connection, &ranges, workspace, filter);
    };
    let ids: Vec<i64> = chunks.iter().map(|chunk| chunk.first).collect();
    let mut stored: std::collections::HashMap<i64, Vec<u8>> = diesel::sql_query(
        "SELECT keys.chunk_id AS chunk_id, keys.log_keys AS log_keys \
         FROM json_each(?1) AS listed CROSS JOIN log_chunk_keys AS keys ON keys.chunk_id = listed.value",
    )
    .bind::<Text, _>(serde_json::to_string(&ids).map_err(backend)?)
    .load::<ChunkLogKeys>(connection)
    .map_err(from_diesel)?
    .into_iter()
    .map(|row| (row.chunk_id, row.log_keys))
    .collect();
    let (mut ranges, mut seqs) = (Vec::new(), Vec::new());
    for chunk in chunks {
        let logs = usize::try_from(chunk.last - chunk.first + 1).unwrap_or(0);
        match stored.remove(&chunk.first).and_then(|stored| sluice_store::log_keys::slots(&stored, logs, keys)) {
            Some(slots) => seqs.extend(slots.into_iter().map(|slot| chunk.first + i64::from(slot))),
            None => ranges.push([chunk.first, chunk.last]),
        }
    }
    let mut rows = if ranges.is_empty() { Vec::new() } else { read_ranges(connection, &ranges, workspace, filter)? };
    if !seqs.is_empty() {
        let seqs = serde_json::to_string(&seqs).map_err(backend)?;
        rows.extend(
            bind_filters(diesel::sql_query(seq_logs_sql()), seqs, workspace, filter)
                .load::<LogRow>(connection)
                .map_err(from_diesel)?,
        );
    }
    Ok(rows)
}

/// Reads the matching logs of the chunks `next` gives (newest first, by their last log's time,
/// a step of up to the given count at a time) into `newest`, until the page is decided: every
/// chunk left ends before `need` matches already found. With `keys`, only the logs of a chunk
/// whose own filters may hold them ([`read_chunks`]).
fn walk_chunks(
    connection: &mut SqliteConnection,
    next: &mut NextStep<'_>,
    keys: Option<&[Option<Vec<Vec<u64>>>]>,
    workspace: &WorkspaceId,
    filter: &LogFilter,
    newest: &mut Newest<LogRow>,
) -> Result<(), StoreError> {
    let (mut size, mut examined) = (STEP_FIRST, 0);
    while let Some(step) = next(connection, size)? {
        crate::deadline::check()?;
        examined += size;
        if !step.read.is_empty() {
            newest.extend(read_chunks(connection, &step.read, keys, workspace, filter)?);
        }
        if !step.more || newest.decided(step.bound) {
            break;
        }
        // Twice as many chunks, or as many as the matches still wanted took so far when that
        // is fewer: a rare needle finds about one match a chunk, and doubling past what it
        // needs would read up to twice the rows.
        let found = newest.len();
        let estimate = (newest.need() - found).saturating_mul(examined).div_ceil(found.max(1));
        size =
            if found == 0 { size * STEP_GROWTH } else { estimate.min(size * STEP_GROWTH) }.clamp(STEP_FIRST, STEP_MAX);
    }
    Ok(())
}

/// The chunks every signed group of a search allows (a group allows those any of its needles
/// may be in: by signature, or by the full-text index for a needle of trigrams only); `None`
/// without signed groups.
fn allowed_chunks(
    connection: &mut SqliteConnection,
    workspace: &[u8],
    groups: &[Vec<NeedleLookup>],
    cache: &sluice_store::signature::SignatureCache,
) -> Result<Option<HashSet<i64>>, StoreError> {
    let mut allowed: Option<HashSet<i64>> = None;
    for group in groups {
        let mut any = HashSet::default();
        for needle in group {
            match needle {
                NeedleLookup::Signature(positions) => {
                    let found = crate::blocks::signature_candidates(connection, workspace, positions, cache)
                        .map_err(from_diesel)?;
                    if any.is_empty() {
                        any = found;
                    } else {
                        any.extend(found);
                    }
                }
                NeedleLookup::Trigrams(expression) => any.extend(
                    diesel::sql_query(ALL_HITS_SQL)
                        .bind::<Text, _>(expression)
                        .load::<Hit>(connection)
                        .map_err(from_diesel)?
                        .into_iter()
                        .map(|hit| hit.hit),
                ),
            }
        }
        allowed = Some(match allowed {
            None => any,
            Some(allowed) => allowed.intersection(&any).copied().collect(),
        });
    }
    Ok(allowed)
}

#[async_trait]
impl LogSearch for SqliteStore {
    async fn search_logs(
        &self,
        workspace: WorkspaceId,
        search: &Search,
        filter: &LogFilter,
        page: Page,
    ) -> Result<LogPage, StoreError> {
        let search = search.clone();
        let filter = filter.clone();
        // The most candidate chunks loaded whole: `dense_hits` logs' worth.
        let signatures = self.signatures.clone();
        let most_hits = u64::from(self.dense_hits) / u64::try_from(self.chunk_rows.max(1)).unwrap_or(u64::MAX) + 1;
        self.with_connection(move |connection| {
            // Without an indexable needle: walk the filtered logs newest first.
            let Some(lookup) = crate::lookup::lookup(&search) else {
                let rows = filtered(&workspace, &filter)
                    .order((logs::ts.desc(), logs::id.desc()))
                    .select(LogRow::as_select())
                    .load_iter::<LogRow, DefaultLoadingMode>(connection)
                    .map_err(from_diesel)?;
                return Ok(collect_page(rows, &search, page)?.finish());
            };
            let _scope = SearchScope::enter(&search);
            let mut newest = Newest::new(page);
            // The unindexed tail (logs past the last chunk; those of every workspace, as few
            // as the background indexes a round) counts as candidates, read whole.
            let indexed = index::indexed_through(connection).map_err(from_diesel)?;
            newest.extend(read_ranges(connection, &[[indexed + 1, TAIL_END]], &workspace, &filter)?);
            // The chunks the signed groups allow: for each, those any of its needles may be in.
            let started = std::time::Instant::now();
            // Every key a needle has: a chunk's filters are read whole, so each costs nothing.
            let log_keys = Some(sluice_store::log_keys::needle_keys(search.query.index_groups(), usize::MAX))
                .filter(|keys| sluice_store::log_keys::narrows(keys));
            let allowed = allowed_chunks(connection, workspace.as_bytes(), &lookup.signed, &signatures)?;
            tracing::debug!(allowed = allowed.as_ref().map(|allowed| allowed.len()), took = ?started.elapsed(), "signatures");
            // The candidates, when few: those allowed, or else those the full-text index hits
            // (up to one more than few). `None`: many.
            let listed: Option<Vec<ChunkHit>> = match (&allowed, &lookup.trigrams) {
                (Some(allowed), _) if (allowed.len() as u64) <= most_hits => {
                    let ids: Vec<i64> = allowed.iter().copied().collect();
                    Some(
                        diesel::sql_query(CHUNKS_LISTED_SQL)
                            .bind::<Text, _>(serde_json::to_string(&ids).map_err(backend)?)
                            .bind::<Binary, _>(workspace.as_bytes().to_vec())
                            .bind::<Nullable<BigInt>, _>(filter.from)
                            .bind::<Nullable<BigInt>, _>(filter.to)
                            .bind::<BigInt, _>(indexed)
                            .load(connection)
                            .map_err(from_diesel)?,
                    )
                }
                (None, Some(expression)) => {
                    let hits: Vec<ChunkHit> = diesel::sql_query(CHUNK_HITS_SQL)
                        .bind::<Text, _>(expression)
                        .bind::<Binary, _>(workspace.as_bytes().to_vec())
                        .bind::<Nullable<BigInt>, _>(filter.from)
                        .bind::<Nullable<BigInt>, _>(filter.to)
                        .bind::<BigInt, _>(indexed)
                        .bind::<BigInt, _>(i64::try_from(most_hits + 1).unwrap_or(i64::MAX))
                        .load(connection)
                        .map_err(from_diesel)?;
                    ((hits.len() as u64) <= most_hits).then_some(hits)
                }
                _ => None,
            };
            if let Some(mut hits) = listed {
                // Few candidates: read by recency, as few as decide the page. Those the
                // signatures allow are not asked of the full-text index too: the exact check
                // reads them anyway.
                hits.sort_by_key(|hit| std::cmp::Reverse((hit.max_ts, hit.first)));
                let mut rest = hits.into_iter().peekable();
                walk_chunks(
                    connection,
                    &mut |_, size| {
                        let read: Vec<ChunkHit> = rest.by_ref().take(size).collect();
                        let Some(last) = read.last() else { return Ok(None) };
                        Ok(Some(Step { bound: last.max_ts, more: rest.peek().is_some(), read }))
                    },
                    log_keys.as_deref(),
                    &workspace,
                    &filter,
                    &mut newest,
                )?;
            } else {
                // Many candidates: the workspace's chunks newest first, a step at a time, each
                // step keeping those the signatures allow and the full-text index hits.
                let mut after = (i64::MAX, i64::MAX);
                walk_chunks(
                    connection,
                    &mut |connection, size| {
                        let chunks: Vec<ChunkHit> = diesel::sql_query(CHUNKS_BY_RECENCY_SQL)
                            .bind::<Binary, _>(workspace.as_bytes().to_vec())
                            .bind::<Nullable<BigInt>, _>(filter.from)
                            .bind::<Nullable<BigInt>, _>(filter.to)
                            .bind::<BigInt, _>(indexed)
                            .bind::<BigInt, _>(after.0)
                            .bind::<BigInt, _>(after.1)
                            .bind::<BigInt, _>(i64::try_from(size).unwrap_or(i64::MAX))
                            .load(connection)
                            .map_err(from_diesel)?;
                        let Some(&last) = chunks.last() else { return Ok(None) };
                        after = (last.max_ts, last.first);
                        let more = chunks.len() == size;
                        let mut read: Vec<ChunkHit> = chunks
                            .into_iter()
                            .filter(|chunk| allowed.as_ref().is_none_or(|allowed| allowed.contains(&chunk.first)))
                            .collect();
                        if let (Some(expression), false) = (&lookup.trigrams, read.is_empty()) {
                            let (low, high) = read.iter().fold((i64::MAX, i64::MIN), |(low, high), chunk| {
                                (low.min(chunk.first), high.max(chunk.first))
                            });
                            let hit: HashSet<i64> = diesel::sql_query(HITS_IN_RANGE_SQL)
                                .bind::<Text, _>(expression)
                                .bind::<BigInt, _>(low)
                                .bind::<BigInt, _>(high)
                                .load::<Hit>(connection)
                                .map_err(from_diesel)?
                                .into_iter()
                                .map(|hit| hit.hit)
                                .collect();
                            read.retain(|chunk| hit.contains(&chunk.first));
                        }
                        Ok(Some(Step { read, bound: last.max_ts, more }))
                    },
                    // A common needle: a chunk holds many of its logs, read whole in order.
                    None,
                    &workspace,
                    &filter,
                    &mut newest,
                )?;
            }
            tracing::debug!(took = ?started.elapsed(), "search");
            // The rows from the page's offset on; those held as keys are read again.
            let page_rows = newest.into_page();
            let missing: Vec<Vec<u8>> = page_rows.missing().into_iter().map(|(_, id)| id).collect();
            let reread: std::collections::HashMap<Vec<u8>, LogRow> = if missing.is_empty() {
                std::collections::HashMap::new()
            } else {
                logs::table
                    .filter(logs::workspace_id.eq(workspace.as_bytes().to_vec()))
                    .filter(logs::id.eq_any(missing))
                    .select(LogRow::as_select())
                    .load::<LogRow>(connection)
                    .map_err(from_diesel)?
                    .into_iter()
                    .map(|row| (row.sort_key().1.to_vec(), row))
                    .collect()
            };
            let from_offset = Page { offset: 0, ..page };
            Ok(collect_page(page_rows.fill(reread).into_iter().map(Ok), &search, from_offset)?.finish())
        })
        .await
    }
}
