//! Searching logs: what the needles ask of the chunks' filters and of the folded text, the
//! candidate chunks, and the choice between reading them and walking the newest logs.

use async_trait::async_trait;
use diesel::pg::Pg;
use diesel::prelude::*;
use diesel::sql_types::Bool;
use diesel_async::RunQueryDsl;
use sluice_model::WorkspaceId;
use sluice_store::page::{PageCollector, SearchableRow};
use sluice_store::{LogFilter, LogPage, LogSearch, Page, Search, StoreError};

use crate::PgStore;
use crate::chunks;
use crate::error::from_diesel;
use crate::list::{chunks_in_span, filtered, rows_needed, stored};
use crate::rows::LogRow;
use crate::schema::{log_chunks, logs};
use crate::text;

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
pub(crate) type Boxed<T> = Box<dyn BoxableExpression<T, Pg, SqlType = Bool>>;
pub(crate) type Condition = Boxed<logs::table>;
pub(crate) type ChunkCondition = Boxed<log_chunks::table>;

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
                    sluice_store::grams::needle_trigrams(&text::encode(needle))
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
pub(crate) fn facet_condition(filter: &LogFilter) -> Option<ChunkCondition> {
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

impl PgStore {
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
impl LogSearch for PgStore {
    async fn search_logs(
        &self,
        workspace: WorkspaceId,
        search: &Search,
        filter: &LogFilter,
        page: Page,
    ) -> Result<LogPage, StoreError> {
        self.with_deadline(async move {
            let mut collector = PageCollector::new(search, page);
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
                collector.offer_all(rows)?;
                return Ok(collector.finish());
            }
            // Without an indexable needle: walk the filtered logs newest first.
            if index_condition(search).is_none() {
                self.walk(workspace, filter, &mut collector, None).await?;
                return Ok(collector.finish());
            }
            // Candidate chunks holding few logs: read just those, whatever the workspace's size.
            let chunks = self.candidate_chunks(workspace, search, filter).await?;
            let candidates: i64 = chunks.iter().map(|(_, logs)| i64::from(*logs)).sum();
            let ids: Vec<i64> = chunks.into_iter().map(|(id, _)| id).collect();
            if candidates <= self.dense_hits {
                collector.offer_all(self.chunk_logs(workspace, search, filter, ids).await?)?;
                return Ok(collector.finish());
            }
            // A common needle: look in the newest logs first, for a bounded number of rows
            // (while the page is open, every row read was offered: `read` counts them).
            let open = self.walk(workspace, filter, &mut collector, Some(self.walk_rows)).await?;
            if !open || (collector.read() as i64) < self.walk_rows {
                return Ok(collector.finish());
            }
            // Common, but not among the newest: every candidate chunk's logs, newest first.
            let mut collector = PageCollector::new(search, page);
            collector.offer_all(self.chunk_logs(workspace, search, filter, ids).await?)?;
            Ok(collector.finish())
        })
        .await
    }
}
