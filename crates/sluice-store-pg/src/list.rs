//! Listing logs newest first: the filter as SQL, a keyset walk over the `(ts, id)` index, a
//! walk over the chunks whose facet filters may hold a filtered value, handing a search's
//! page its rows.

use async_trait::async_trait;
use diesel::pg::Pg;
use diesel::prelude::*;
use diesel::result::Error as DieselError;
use diesel_async::{AsyncConnection, AsyncPgConnection, RunQueryDsl, SimpleAsyncConnection};
use futures_util::future::{try_join, try_join4};
use sluice_model::{Log, LogId, WorkspaceId};
use sluice_store::page::{Newest, PageCollector};
use sluice_store::{LogFilter, LogPage, LogReads, Page, StoreError};
use uuid::Uuid;

use crate::PgStore;
use crate::allowed::Allowed;
use crate::chunk_slots;
use crate::error::from_diesel;
use crate::rows::LogRow;
use crate::schema::{log_chunks, logs};
use crate::search::{ChunkCondition, Condition, facet_condition};
use crate::text;

/// What a [`PgStore::chunk_walk`] reads: the chunks of `chunk_condition` (a condition built
/// anew for each statement), only those of `listed` when given (with those the blocks `allowed`
/// narrows newest first add to them), and their logs of `row_condition` that `keep` accepts:
/// with `slots`, only those their chunk's per-log key filters let through
/// ([`crate::search::slot_groups`], [`chunk_slots::slot_logs`]): from the first step when
/// `slots_from_start` (a listed needle's chunks, which hold it in a log or a few), else once
/// the chunks read whole held at most [`SPARSE_MATCHES`] matching logs each.
pub(crate) struct ChunkWalk<'a> {
    pub(crate) chunk_condition: &'a (dyn Fn() -> Option<ChunkCondition> + Sync),
    pub(crate) listed: Option<&'a [i64]>,
    pub(crate) slots: Option<&'a [Option<Vec<Vec<u64>>>]>,
    pub(crate) slots_from_start: bool,
    pub(crate) row_condition: &'a (dyn Fn() -> Option<Condition> + Sync),
    pub(crate) keep: &'a (dyn Fn(&LogRow) -> bool + Sync),
}

/// The most listed chunks a [`PgStore::chunk_walk`] reads by id up front ([`listed_chunks`]),
/// and the most chunks a rare needle's estimate may allow for its blocks to be narrowed as its
/// walk reaches them (the list they add to is bounded by
/// [`crate::PgOptions::search_listed_chunks`]);
/// more are found by walking the ordered index, as far as the page needs: a search for a term
/// in 0.1 % of 10M logs (up to 4,096 chunks listed) that read them all by id first took
/// 69.6 ms at p50, 55.9 with this bound (`cargo xtask bench search`).
pub(crate) const LISTED_BY_ID: usize = 256;

/// Rows read per step of a newest-first walk.
const WALK_STEP: i64 = 500;

/// Chunks read by the first step of a [`PgStore::chunk_walk`]; each next step reads
/// [`CHUNK_WALK_GROWTH`] times as many, up to [`CHUNK_WALK_MAX`].
const CHUNK_WALK_FIRST: i64 = 16;
const CHUNK_WALK_GROWTH: i64 = 4;
const CHUNK_WALK_MAX: i64 = 512;

/// The most matching logs a chunk read whole may hold, on average, for a walk's next steps to
/// read its chunks by their per-log key filters ([`ChunkWalk`]). A term in 0.1 % of 10M logs
/// (`kappaNNN` of the search benchmark) is in about one log of each chunk its signatures
/// allow, and its one key lets about a tenth of a chunk's logs through: tested first, they
/// spare the text of the others (measured, docs/PERFORMANCE.md, issue 24). A common word's
/// chunks hold tens each, and its page is most often decided by the first step.
const SPARSE_MATCHES: usize = 4;

diesel::define_sql_function! {
    /// PostgreSQL's `coalesce` of two booleans.
    fn coalesce(value: diesel::sql_types::Bool, otherwise: diesel::sql_types::Bool) -> diesel::sql_types::Bool;
}

/// An exact-match filter's text as stored ([`text`]).
pub(crate) fn stored(value: &Option<String>) -> Option<String> {
    value.as_deref().map(|value| text::encode(value).into_owned())
}

/// The workspace's chunks whose time span meets `filter`'s, as a query still open to more
/// conditions.
pub(crate) fn chunks_in_span(workspace: &WorkspaceId, filter: &LogFilter) -> log_chunks::BoxedQuery<'static, Pg> {
    let mut query = log_chunks::table.filter(log_chunks::workspace_id.eq(*workspace.as_uuid())).into_boxed();
    if let Some(from) = filter.from {
        query = query.filter(log_chunks::max_ts.ge(from));
    }
    if let Some(to) = filter.to {
        query = query.filter(log_chunks::min_ts.le(to));
    }
    query
}

/// The chunks of `ids` that are the workspace's, meet `filter`'s time span and pass
/// `condition`, newest first (by their last log's time, then id), as `(id, min_ts, max_ts)`.
/// Read by primary key in one statement and ordered here: the ids are few
/// ([`LISTED_BY_ID`] up front, a wave of narrowed blocks' later, up to
/// [`crate::PgOptions::search_listed_chunks`] in all), where walking the ordered index for them may read every chunk
/// of the workspace before the last (a rare identifier's, anywhere in time).
async fn listed_chunks(
    connection: &mut AsyncPgConnection,
    workspace: WorkspaceId,
    filter: &LogFilter,
    condition: &(dyn Fn() -> Option<ChunkCondition> + Sync),
    ids: &[i64],
) -> Result<Vec<(i64, i64, i64)>, StoreError> {
    let mut query = log_chunks::table.filter(log_chunks::id.eq_any(ids.to_vec())).into_boxed();
    if let Some(condition) = condition() {
        query = query.filter(condition);
    }
    let found: Vec<(i64, Uuid, i64, i64)> = query
        .select((log_chunks::id, log_chunks::workspace_id, log_chunks::min_ts, log_chunks::max_ts))
        .load(connection)
        .await
        .map_err(from_diesel)?;
    let mut chunks: Vec<(i64, i64, i64)> = found
        .into_iter()
        .filter(|&(_, owner, min_ts, max_ts)| {
            owner == *workspace.as_uuid()
                && filter.from.is_none_or(|from| max_ts >= from)
                && filter.to.is_none_or(|to| min_ts <= to)
        })
        .map(|(id, _, min_ts, max_ts)| (id, min_ts, max_ts))
        .collect();
    chunks.sort_unstable_by_key(|&(id, _, max_ts)| std::cmp::Reverse((max_ts, id)));
    Ok(chunks)
}

/// The workspace's logs matching `filter`, as a query still open to more conditions.
pub(crate) fn filtered(workspace: &WorkspaceId, filter: &LogFilter) -> logs::BoxedQuery<'static, Pg> {
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

/// `low..=high` widened to whole UTC days: the same partitions (their bounds are whole days,
/// `crate::partitions`), but a span the planner cannot take for nearly empty. A span of the
/// last minutes lies past what the newest partition's statistics have seen; PostgreSQL then
/// estimates it at one row and scans the primary key `(workspace_id, ts, id)` over it, every
/// log of those minutes, instead of the chunks' rows by `chunk_id` (measured at 10M logs: 579
/// ms against 22 for the 16 chunks of a rare phrase, docs/PERFORMANCE.md).
fn whole_days(low: i64, high: i64) -> (i64, i64) {
    use sluice_model::calendar::MS_PER_DAY;
    let start = low.div_euclid(MS_PER_DAY).saturating_mul(MS_PER_DAY).min(low);
    let end = high.div_euclid(MS_PER_DAY).saturating_add(1).saturating_mul(MS_PER_DAY).saturating_sub(1).max(high);
    (start, end)
}

impl PgStore {
    /// Reads, newest first, the rows of `query` in steps (keyset paging on `(ts, id)`), with
    /// bitmap scans off so each step walks the ordered index, handing them to `page` until it
    /// has decided or `max_rows` were read. Returns false once the page is decided (as
    /// [`PageCollector::offer_all`]); until then every row read was offered to it.
    pub(crate) async fn walk(
        &self,
        workspace: WorkspaceId,
        filter: &LogFilter,
        page: &mut PageCollector<'_>,
        max_rows: Option<i64>,
    ) -> Result<bool, StoreError> {
        let mut connection = self.connection().await?;
        let mut read = 0_i64;
        let mut after: Option<(i64, Uuid)> = None;
        loop {
            let step = max_rows.map_or(WALK_STEP, |max| WALK_STEP.min(max - read));
            if step <= 0 {
                return Ok(true);
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
            if !page.offer_all(rows)? {
                return Ok(false);
            }
            if got < step {
                return Ok(true);
            }
        }
    }

    /// Reads the workspace's chunks that pass `chunk_condition` newest first (by their last
    /// log's time), a step of chunks at a time, and the logs of those `allowed` keeps (all,
    /// without it) that
    /// `filter` (and `row_condition`) selects and `keep` accepts, until the newest of those that
    /// decide `page` are known: every chunk not read yet ends before them. Returns the rows from
    /// the page's offset on, newest first: its `limit` and one more when there is one.
    ///
    /// Memory holds the page's rows, the keys of those it skips and one step's rows.
    pub(crate) async fn chunk_walk(
        &self,
        workspace: WorkspaceId,
        filter: &LogFilter,
        walk: &ChunkWalk<'_>,
        mut allowed: Option<&mut Allowed>,
        page: Page,
    ) -> Result<Vec<LogRow>, StoreError> {
        let ChunkWalk { chunk_condition, listed, slots, slots_from_start, row_condition, keep } = walk;
        let mut by_slots = *slots_from_start;
        // The chunks read whole without their key filters so far, and their logs `keep` accepted.
        let (mut whole_chunks, mut whole_matched) = (0_usize, 0_usize);
        let mut connection = self.connection().await?;
        let mut rows: Newest<LogRow> = Newest::new(page);
        let mut after: Option<(i64, i64)> = None;
        let mut step = CHUNK_WALK_FIRST;
        let mut examined = 0_i64;
        let (mut steps, mut rows_read) = (0_usize, 0_usize);
        // Where the walk's time went, for the debug line at the end.
        let (mut slots_time, mut read_time) = (std::time::Duration::ZERO, std::time::Duration::ZERO);
        let (mut read_by_id, mut read_whole) = (0_usize, 0_usize);
        // A few listed chunks are read once, by their ids, and walked here by recency; more
        // are found by the walk over the ordered index, which reads as far as the page needs.
        let (mut by_id, walked) = match listed {
            Some(ids) if ids.len() <= LISTED_BY_ID => {
                (Some(listed_chunks(&mut connection, workspace, filter, chunk_condition, ids).await?), None)
            }
            other => (None, *other),
        };
        loop {
            // Listed while `allowed` still has blocks to narrow (a rare needle's): the newest of
            // them are narrowed, and the chunks they allow join the list, until the chunks of
            // this step are all newer than any chunk of a block left (or every block left ends
            // before the span), so no chunk is taken before a newer one. Should they allow more
            // than a search names by id (the needle is common in older blocks), the walk goes on
            // over the ordered index from where it is, narrowing the rest as it reaches them.
            let wanted = usize::try_from(step).unwrap_or(usize::MAX);
            let mut too_many = false;
            if let (Some(sorted), Some(allowed)) = (by_id.as_mut(), allowed.as_deref_mut()) {
                let in_span = |newest: &i64| filter.from.is_none_or(|from| *newest >= from);
                while let Some(pending) = allowed.pending_newest().filter(in_span) {
                    let ready = sorted.iter().take_while(|&&(_, _, max_ts)| max_ts > pending).count();
                    if ready >= wanted {
                        break;
                    }
                    let more = allowed
                        .narrow_newest(&mut connection, filter.from, wanted - ready)
                        .await
                        .map_err(from_diesel)?;
                    if sorted.len() + more.len() > self.listed_chunks {
                        too_many = true;
                        break;
                    }
                    if !more.is_empty() {
                        sorted.extend(listed_chunks(&mut connection, workspace, filter, chunk_condition, &more).await?);
                        sorted.sort_unstable_by_key(|&(id, _, max_ts)| std::cmp::Reverse((max_ts, id)));
                    }
                }
            }
            if too_many {
                by_id = None;
            }
            let chunks: Vec<(i64, i64, i64)> = match by_id.as_mut() {
                Some(sorted) => {
                    let taken = sorted.len().min(wanted);
                    sorted.drain(..taken).collect()
                }
                None => {
                    let mut query = chunks_in_span(&workspace, filter);
                    if let Some(condition) = chunk_condition() {
                        query = query.filter(condition);
                    }
                    if let Some(ids) = walked {
                        query = query.filter(log_chunks::id.eq_any(ids.to_vec()));
                    }
                    if let Some((max_ts, id)) = after {
                        query = query.filter(
                            log_chunks::max_ts.lt(max_ts).or(log_chunks::max_ts.eq(max_ts).and(log_chunks::id.lt(id))),
                        );
                    }
                    let query = query.order((log_chunks::max_ts.desc(), log_chunks::id.desc())).limit(step).select((
                        log_chunks::id,
                        log_chunks::min_ts,
                        log_chunks::max_ts,
                    ));
                    // The ordered index, newest first, until `step` chunks pass: the planner
                    // cannot tell how many pass a facet's bits, takes them for almost none,
                    // and would rather gather and sort every chunk of the workspace (measured:
                    // 48-60 ms a step at 30k chunks, growing with the store); and in one
                    // process, where it planned two workers for the same walk at 50k chunks
                    // (6 ms of 8 starting them, for 16 chunks). Planned for the values, so a
                    // list of chunk ids is a constant the executor hashes (a generic plan
                    // tests every id of the list against each chunk: 68 ms at 4k of 30k).
                    (*connection)
                        .transaction::<_, DieselError, _>(async move |connection: &mut AsyncPgConnection| {
                            let (mut settings, mut load): (&AsyncPgConnection, &AsyncPgConnection) =
                                (connection, connection);
                            let set = settings.batch_execute(
                                "SET LOCAL enable_sort = off; SET LOCAL enable_bitmapscan = off; \
                                 SET LOCAL max_parallel_workers_per_gather = 0; \
                                 SET LOCAL plan_cache_mode = force_custom_plan",
                            );
                            let ((), chunks) = try_join(set, query.load(&mut load)).await?;
                            Ok(chunks)
                        })
                        .await
                        .map_err(from_diesel)?
                }
            };
            let (Some(&(_, _, high)), Some(&(last, _, bound))) = (<[_]>::first(&chunks), <[_]>::last(&chunks)) else {
                break;
            };
            let examined_now = chunks.len() as i64;
            steps += 1;
            examined += examined_now;
            let kept: Vec<(i64, i64, i64)> = match allowed.as_deref_mut() {
                Some(allowed) => {
                    let ids: Vec<i64> = chunks.iter().map(|&(id, _, _)| id).collect();
                    let keeps = allowed.keep(&mut connection, &ids).await.map_err(from_diesel)?;
                    chunks.into_iter().zip(keeps).filter_map(|(chunk, keep)| keep.then_some(chunk)).collect()
                }
                None => chunks,
            };
            if !kept.is_empty() {
                // With key filters, the chunks that have them give the ids of the logs to read,
                // by id or with their chunk (`chunk_slots::SlotLogs`); the others (written
                // before chunks kept them) are read whole.
                let found = match slots.filter(|_| by_slots) {
                    Some(groups) => {
                        let started = std::time::Instant::now();
                        let found = chunk_slots::slot_logs(&mut connection, workspace, kept, groups).await?;
                        slots_time += started.elapsed();
                        found
                    }
                    None => chunk_slots::SlotLogs { whole: kept, ..Default::default() },
                };
                let chunk_slots::SlotLogs { by_id: ids, sifted, sifted_ids, whole } = found;
                let whole_now = whole.len() + sifted.len();
                {
                    use std::sync::atomic::Ordering::Relaxed;
                    read_by_id += ids.len();
                    read_whole += whole_now;
                    self.walk_reads.logs_by_id.fetch_add(ids.len() as u64, Relaxed);
                    self.walk_reads.chunks_whole.fetch_add(whole.len() as u64, Relaxed);
                    self.walk_reads.chunks_sifted.fetch_add(sifted.len() as u64, Relaxed);
                }
                let by_id = (!ids.is_empty()).then(|| {
                    let low = ids.iter().map(|&(_, min_ts, _)| min_ts).min().unwrap_or(i64::MIN);
                    let high = ids.iter().map(|&(_, _, max_ts)| max_ts).max().unwrap_or(high);
                    let (low, high) = whole_days(low, high);
                    let ids: Vec<Uuid> = ids.into_iter().map(|(id, _, _)| id).collect();
                    let mut query =
                        filtered(&workspace, filter).filter(logs::id.eq_any(ids)).filter(logs::ts.between(low, high));
                    if let Some(condition) = row_condition() {
                        query = query.filter(condition);
                    }
                    query.select(LogRow::as_select())
                });
                let chunk_rows = |chunks: &[(i64, i64, i64)], only: Option<Vec<Uuid>>| {
                    let low = chunks.iter().map(|&(_, min_ts, _)| min_ts).min().unwrap_or(i64::MIN);
                    let high = chunks.iter().map(|&(_, _, max_ts)| max_ts).max().unwrap_or(high);
                    let (low, high) = whole_days(low, high);
                    let ids: Vec<i64> = chunks.iter().map(|&(id, _, _)| id).collect();
                    // The chunks' days let PostgreSQL skip the partitions they are not in.
                    let mut query = filtered(&workspace, filter)
                        .filter(logs::chunk_id.eq_any(ids))
                        .filter(logs::ts.between(low, high));
                    if let Some(only) = only {
                        // Tested on each row of the chunks (a hashed list, before the text),
                        // never as a lookup of the ids' index, which probes it once an id.
                        query = query.filter(coalesce(logs::id.eq_any(only), false));
                    }
                    if let Some(condition) = row_condition() {
                        query = query.filter(condition);
                    }
                    query.select(LogRow::as_select())
                };
                let by_sifted = (!sifted.is_empty()).then(|| chunk_rows(&sifted, Some(sifted_ids)));
                let by_chunk = (!whole.is_empty()).then(|| chunk_rows(&whole, None));
                // Planned for these values each time: a generic plan of a prepared statement
                // (the sixth run on) may take the time span as selective and walk the primary
                // key over it, every log of the span, as a plan without statistics does
                // (measured: 390 ms a step for 16 rare chunks at 1M logs). Read as a bitmap, each
                // heap page once in the file's order: a chunk's 256 logs fill some 14 pages, and
                // the chunk index, ordered by the facets before the row, sends a plain index
                // scan back and forth over them (measured at 10M logs, 26 chunks not in shared
                // buffers: 2,400 buffer visits and 8-11 ms, against 75 and 6 ms as a bitmap).
                let started = std::time::Instant::now();
                let read: Vec<LogRow> = (*connection)
                    .transaction::<_, DieselError, _>(async move |connection: &mut AsyncPgConnection| {
                        let shared: &AsyncPgConnection = connection;
                        let mut settings = shared;
                        let set = settings.batch_execute(
                            "SET LOCAL plan_cache_mode = force_custom_plan; SET LOCAL enable_indexscan = off",
                        );
                        let load = |query: Option<_>| async move {
                            let mut connection = shared;
                            match query {
                                Some(query) => RunQueryDsl::load(query, &mut connection).await,
                                None => Ok(Vec::new()),
                            }
                        };
                        let ((), mut read, sifted, whole) =
                            try_join4(set, load(by_id), load(by_sifted), load(by_chunk)).await?;
                        read.extend(sifted);
                        read.extend(whole);
                        Ok(read)
                    })
                    .await
                    .map_err(from_diesel)?;
                read_time += started.elapsed();
                rows_read += read.len();
                let matched: Vec<LogRow> = read.into_iter().filter(|row| keep(row)).collect();
                // Few matching logs a chunk read whole: the next steps sift by the key filters.
                if !by_slots {
                    whole_chunks += whole_now;
                    whole_matched += matched.len();
                    by_slots = whole_chunks > 0 && whole_matched <= whole_chunks * SPARSE_MATCHES;
                }
                rows.extend(matched);
            }
            after = Some((bound, last));
            // Unread chunks end at `bound` or before: the rows after it are final.
            if examined_now < step || rows.decided(bound) {
                break;
            }
            // Four times as many chunks, or as many as the rows still wanted took so far when
            // that is fewer (a rare needle finds about one a chunk: growing past what it needs
            // reads that many chunks' logs for nothing).
            let found = rows.len() as i64;
            let estimate = (rows.need() as i64 - found).saturating_mul(examined) / found.max(1) + 1;
            step = if found == 0 { step * CHUNK_WALK_GROWTH } else { estimate.min(step * CHUNK_WALK_GROWTH) }
                .clamp(CHUNK_WALK_FIRST, CHUNK_WALK_MAX);
        }
        tracing::debug!(
            steps,
            examined,
            rows_read,
            read_by_id,
            read_whole,
            slots_ms = slots_time.as_secs_f64() * 1e3,
            read_ms = read_time.as_secs_f64() * 1e3,
            "chunk walk"
        );
        // Rows pushed onto the page after they were held as keys are read again, by id.
        let page_rows = rows.into_page();
        let missing = page_rows.missing();
        let mut reread = std::collections::HashMap::new();
        if let (Some(low), Some(high)) = (missing.iter().map(|key| key.0).min(), missing.iter().map(|key| key.0).max())
        {
            let ids: Vec<Uuid> = missing.into_iter().map(|key| key.1).collect();
            let read: Vec<LogRow> = logs::table
                .filter(logs::workspace_id.eq(*workspace.as_uuid()))
                .filter(logs::id.eq_any(ids))
                .filter(logs::ts.between(low, high))
                .select(LogRow::as_select())
                .load(&mut connection)
                .await
                .map_err(from_diesel)?;
            reread.extend(read.into_iter().map(|row| (row.id, row)));
        }
        Ok(page_rows.fill(reread))
    }
}

#[async_trait]
impl LogReads for PgStore {
    async fn list_logs(&self, workspace: WorkspaceId, filter: &LogFilter, page: Page) -> Result<LogPage, StoreError> {
        self.with_deadline(async move {
            // A filter on a facet: the chunks that may hold its value, newest first.
            if facet_condition(filter).is_some() {
                let limit = page.limit as usize;
                let walk = ChunkWalk {
                    chunk_condition: &|| facet_condition(filter),
                    listed: None,
                    slots: None,
                    slots_from_start: false,
                    row_condition: &|| None,
                    keep: &|_| true,
                };
                let rows = self.chunk_walk(workspace, filter, &walk, None, page).await?;
                let has_more = rows.len() > limit;
                let logs = rows.into_iter().take(limit).map(Log::try_from).collect::<Result<_, _>>()?;
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
        self.with_deadline(async move {
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

    async fn logs_after(&self, workspace: WorkspaceId, after: LogId, limit: u32) -> Result<Vec<Log>, StoreError> {
        self.with_deadline(async move {
            let mut connection = self.connection().await?;
            let rows: Vec<LogRow> = logs::table
                .filter(logs::workspace_id.eq(*workspace.as_uuid()))
                .filter(logs::id.gt(*after.as_uuid()))
                .order(logs::id.desc())
                .limit(i64::from(limit))
                .select(LogRow::as_select())
                .load(&mut connection)
                .await
                .map_err(from_diesel)?;
            rows.into_iter().rev().map(Log::try_from).collect()
        })
        .await
    }
}

#[cfg(test)]
mod tests {
    use super::whole_days;
    use sluice_model::calendar::MS_PER_DAY;

    #[test]
    fn a_span_widens_to_the_whole_utc_days_it_touches_and_never_narrows() {
        let day = 20_000 * MS_PER_DAY;
        assert_eq!(whole_days(day + 5, day + 9), (day, day + MS_PER_DAY - 1));
        assert_eq!(whole_days(day, day + MS_PER_DAY - 1), (day, day + MS_PER_DAY - 1));
        assert_eq!(whole_days(day - 1, day), (day - MS_PER_DAY, day + MS_PER_DAY - 1));
        assert_eq!(whole_days(-1, 0), (-MS_PER_DAY, MS_PER_DAY - 1));
        assert_eq!(whole_days(i64::MIN, i64::MAX), (i64::MIN, i64::MAX));
    }
}
