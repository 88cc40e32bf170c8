//! Search: the index's candidate chunks read by `seq` range, the unindexed tail read whole,
//! and the exact check run inside SQLite (`sluice_matches`) so only matches are sorted.

use async_trait::async_trait;
use diesel::connection::DefaultLoadingMode;
use diesel::prelude::*;
use diesel::result::Error as DieselError;
use diesel::sql_types::{BigInt, Binary, Nullable, Text};
use sluice_model::WorkspaceId;
use sluice_store::page::PageCollector;
use sluice_store::{LogFilter, LogPage, LogSearch, Page, Search, StoreError};

use crate::connection::{SqliteStore, backend, from_diesel};
use crate::index;
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
/// span meets the filter's (`?3`, `?4`), up to seq `?5`: the index's hits drive (`CROSS JOIN`).
/// The search reads the logs past `?5`, the unindexed tail when it started, whole; chunks
/// written since are left out, their logs being in that tail.
pub(crate) const CHUNK_HITS_SQL: &str = "SELECT chunk.id AS first, chunk.last_seq AS last \
     FROM (SELECT rowid AS hit FROM log_chunks_fts WHERE log_chunks_fts MATCH ?1) AS hits \
     CROSS JOIN log_chunks AS chunk ON chunk.id = hits.hit \
     WHERE chunk.workspace_id = ?2 AND chunk.last_seq <= ?5 \
     AND (?3 IS NULL OR chunk.max_ts >= ?3) AND (?4 IS NULL OR chunk.min_ts <= ?4)";

/// The matching logs of given chunks (`?1`, a JSON array of `[first, last]` seqs), each
/// chunk read as a range of `seq`, newest first.
pub(crate) fn chunk_logs_sql() -> String {
    format!(
        "SELECT {LOG_COLUMNS} FROM json_each(?1) AS chunk \
         CROSS JOIN logs ON logs.seq BETWEEN chunk.value ->> 0 AND chunk.value ->> 1 \
         WHERE {SEARCH_FILTERS} ORDER BY logs.ts DESC, logs.id DESC"
    )
}

/// The matching logs of every candidate chunk of `?1` up to seq `?9`, and of the logs past it
/// (the unindexed tail), newest first.
pub(crate) fn all_candidates_sql() -> String {
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
pub(crate) fn register_functions(connection: &mut SqliteConnection) -> QueryResult<()> {
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
        let (dense_hits, walk_rows) = (u64::from(self.dense_hits), i64::from(self.walk_rows));
        self.with_connection(move |connection| {
            // Without an indexable needle: walk the filtered logs newest first.
            let Some(expression) = index::expression(&search) else {
                let rows = filtered(&workspace, &filter)
                    .order((logs::ts.desc(), logs::id.desc()))
                    .select(LogRow::as_select())
                    .load_iter::<LogRow, DefaultLoadingMode>(connection)
                    .map_err(from_diesel)?;
                return Ok(collect_page(rows, &search, page)?.finish());
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
                return Ok(collect_page(rows, &search, page)?.finish());
            }
            // A common needle: look in the newest logs first, for a bounded number of rows.
            {
                let rows = filtered(&workspace, &filter)
                    .order((logs::ts.desc(), logs::id.desc()))
                    .limit(walk_rows)
                    .select(LogRow::as_select())
                    .load_iter::<LogRow, DefaultLoadingMode>(connection)
                    .map_err(from_diesel)?;
                let collector = collect_page(rows, &search, page)?;
                let walked = collector.read();
                let found = collector.finish();
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
            Ok(collect_page(rows, &search, page)?.finish())
        })
        .await
    }
}
