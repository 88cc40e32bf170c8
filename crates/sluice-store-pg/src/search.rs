//! Searching logs: what the needles ask of the chunks' signatures and of the folded text, and
//! the walk over the chunks they allow, newest first.

use async_trait::async_trait;
use diesel::pg::Pg;
use diesel::prelude::*;
use diesel::sql_types::Bool;
use sluice_model::WorkspaceId;
use sluice_store::page::{PageCollector, SearchableRow};
use sluice_store::{LogFilter, LogPage, LogSearch, Page, Search, StoreError};

use crate::PgStore;
use crate::allowed::Allowed;
use crate::chunks;
use crate::error::from_diesel;
use crate::list::{ChunkWalk, LISTED_BY_ID, stored};
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

/// An expression of type `S` (a condition when `Bool`) on rows of table `T`, built at run time.
pub(crate) type Boxed<T, S = Bool> = Box<dyn BoxableExpression<T, Pg, SqlType = S>>;
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

/// The shortest [`literal_run`] worth a test of its own.
const LITERAL_RUN_MIN: usize = 3;

/// The longest run of `needle` (as stored) of ASCII characters other than letters, when it has
/// one of [`LITERAL_RUN_MIN`] or more: the digits of an order number, a UUID's longest group
/// without a letter. Folding leaves such characters as they are, so a text holding the needle
/// folded holds the run unfolded, in the same place ([`crate::rows::UNFOLDED_TEXT_SQL`]).
fn literal_run(needle: &str) -> Option<&str> {
    // Reversed, so the first of the longest is the last `max_by_key` sees, which it keeps.
    needle
        .split(|character: char| !character.is_ascii() || character.is_ascii_alphabetic())
        .rev()
        .max_by_key(|run| run.len())
        .filter(|run| run.len() >= LITERAL_RUN_MIN)
}

/// The candidate filter for one needle (folded): its stored form anywhere in the folded text,
/// tested after a cheaper condition where it has a [`literal_run`]: that run anywhere in the
/// unfolded text, by `strpos`, with no `lower` and no pattern. Most rows of a chunk a rare
/// needle's signature allows fail it, and folding each row's text for the `LIKE` was most of
/// reading the chunks (measured at 10M logs: 36 ms for the 52 chunks of an order number's
/// page, 16 with the run first, 10 reading their rows with no condition; docs/PERFORMANCE.md,
/// issue 24). A needle that is all one run needs no `LIKE` (folding changes none of its
/// characters).
///
/// `cached`: written with [`crate::prepared::fixed`], so the statement holding it may be
/// prepared once per connection; only for a query of one needle, since a statement is cached
/// by its text and the text of a query of many follows their number and kinds, which a client
/// chooses: cached, they would pile up on every connection with nothing to bound them.
fn needle_condition(needle: &str, cached: bool) -> Condition {
    use crate::prepared::fixed;
    use diesel::sql_types::Text;
    let text_of = |sql: &'static str| -> Boxed<logs::table, Text> {
        match cached {
            true => Box::new(fixed::<Text>(sql)),
            false => Box::new(diesel::dsl::sql::<Text>(sql)),
        }
    };
    let stored = text::encode(needle);
    let like = || -> Condition { Box::new(text_of(crate::rows::SEARCH_TEXT_SQL).like(like_anywhere(&stored))) };
    let Some(run) = literal_run(&stored) else {
        return like();
    };
    let unfolded = text_of(crate::rows::UNFOLDED_TEXT_SQL);
    // Written first, and no costlier to the planner than the `LIKE` (one function each on the
    // concatenation, which `lower` adds to), so it is tested first.
    let found: Condition = Box::new(strpos(unfolded, run.to_owned()).gt(0));
    if run.len() == stored.len() { found } else { Box::new(found.and(like())) }
}

diesel::define_sql_function! {
    /// PostgreSQL's `strpos`: where `needle` first is in `text`, from 1; 0 when nowhere.
    fn strpos(text: diesel::sql_types::Text, needle: diesel::sql_types::Text) -> diesel::sql_types::Integer;
}

/// What the search text can narrow `search` to: for every index group, one of its needles
/// in the folded text. `None` when the query gives the index nothing.
fn index_condition(search: &Search) -> Option<Condition> {
    let groups = search.query.index_groups();
    let cached = matches!(groups.as_slice(), [group] if group.len() == 1);
    all_of(
        groups.into_iter().filter_map(|group| any_of(group.into_iter().map(|needle| needle_condition(needle, cached)))),
    )
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

/// The most allowed chunks a search names to the database by default
/// ([`crate::PgOptions::search_listed_chunks`]); more are decided as the walk reads the
/// workspace's chunks by recency.
pub(crate) const LISTED_CHUNKS: usize = 4_096;

/// The signature positions the index looks `search` up by: for every index group whose
/// needles all have keys, each needle's positions (its signature keys, or else its run
/// trigrams: [`sluice_store::grams`]). A group with a needle without keys (`a-b`, `123`)
/// narrows nothing and is left out. Empty when the query gives the index nothing.
fn signature_groups(search: &Search) -> Vec<Vec<Vec<u32>>> {
    use sluice_store::grams::{
        needle_run_trigrams, needle_second_start_key, needle_signature_keys, trigram_signature_key,
    };
    let needle = |needle: &str| {
        let encoded = text::encode(needle);
        let mut keys = needle_signature_keys(&encoded);
        // A needle of one key (an order number) is looked up by a second too, its run's
        // shorter start: six positions more, read only for the blocks the first round leaves
        // a slot in, and about one in fifty of the false chunks the first key lets through
        // left, each of which the walk would read whole (docs/PERFORMANCE.md, issue 24).
        keys.extend(needle_second_start_key(&encoded));
        if keys.is_empty() {
            keys = needle_run_trigrams(&encoded).into_iter().map(trigram_signature_key).collect();
        }
        (!keys.is_empty()).then(|| sluice_store::signature::needle_positions(&keys))
    };
    search
        .query
        .index_groups()
        .into_iter()
        .filter_map(|group| group.into_iter().map(&needle).collect::<Option<Vec<Vec<u32>>>>())
        .collect()
}

/// The most keys a needle is looked up by in a chunk's per-log filters: each is a slice a
/// chunk to fetch, and at the filters' width (about a sixth of each filter's bits set on the
/// search benchmark's logs) three or four independent keys let through under one of a chunk's
/// other logs.
const SLOT_KEYS_PER_NEEDLE: usize = 4;

/// The keys the per-log filters of a chunk's `slots` ([`crate::chunk_slots::SLICES_SQL`]) are
/// looked up by for `search`: for every index group, each needle's
/// [`sluice_store::log_keys::needle_log_keys`] (in the text as stored), up to
/// [`SLOT_KEYS_PER_NEEDLE`]. An order number has one signature key, and one key let through
/// about a sixth of a chunk's logs, two (with the second start) 3.6 of 256 (measured on the
/// search benchmark's logs). A group with a needle without such keys (a word, found by its
/// trigrams) is `None`: it narrows nothing. `None` when no group narrows: the chunks are read
/// whole.
pub(crate) fn slot_groups(search: &Search) -> Option<Vec<Option<Vec<Vec<u64>>>>> {
    let encoded: Vec<Vec<std::borrow::Cow<'_, str>>> =
        search.query.index_groups().into_iter().map(|group| group.into_iter().map(text::encode).collect()).collect();
    let groups = sluice_store::log_keys::needle_keys(
        encoded.iter().map(|group| group.iter().map(|needle| needle.as_ref()).collect()),
        SLOT_KEYS_PER_NEEDLE,
    );
    sluice_store::log_keys::narrows(&groups).then_some(groups)
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
            // A chunk walk answers the rows from the page's offset on: they are offered to a
            // collector that skips none.
            let from_offset = PageCollector::new(search, Page { offset: 0, ..page });
            let groups = signature_groups(search);
            if groups.is_empty() {
                // Nothing the index can narrow: the chunks that may hold a filtered facet's
                // value, or else the filtered logs, newest first.
                if facet_condition(filter).is_some() {
                    let rows = self
                        .chunk_walk(
                            workspace,
                            filter,
                            &ChunkWalk {
                                chunk_condition: &|| facet_condition(filter),
                                listed: None,
                                slots: None,
                                slots_from_start: false,
                                row_condition: &|| index_condition(search),
                                keep: &|row| row.matches(search),
                            },
                            None,
                            page,
                        )
                        .await?;
                    collector = from_offset;
                    collector.offer_all(rows)?;
                } else {
                    self.walk(workspace, filter, &mut collector, None).await?;
                }
                return Ok(collector.finish());
            }
            // The chunks the signatures allow, newest first, until the page is decided; the
            // needles narrow the rows read (a `LIKE` on the search text, so few rows leave the
            // server), and each is checked exactly.
            let started = std::time::Instant::now();
            let mut connection = self.connection().await?;
            let mut allowed =
                Allowed::read(&mut connection, *workspace.as_uuid(), groups, &self.signatures, &self.blocks)
                    .await
                    .map_err(from_diesel)?;
            // A few (a rare needle): named to the database, which reads just those. Many (a
            // common needle, as the newest blocks tell): the workspace's chunks by recency,
            // each block narrowed once the walk reaches it, so a page decided in the newest
            // chunks costs neither the other blocks nor a list of every chunk.
            // Chunks in neither a block nor the waiting signatures (after a crash of
            // PostgreSQL, until signed again) are found only by the walk.
            let mut listed: Option<Vec<i64>> = None;
            if !allowed.intact() {
                self.sign_again_in_background();
            }
            let estimate = allowed.estimate(&mut connection).await.map_err(from_diesel)?;
            if allowed.intact() && (1..=self.listed_chunks.min(LISTED_BY_ID)).contains(&estimate) {
                // Few enough to read by id as they come: the walk narrows the other blocks
                // newest first, as far as its page reaches (`Allowed::narrow_newest`). None in
                // the newest blocks says nothing of the others: those are narrowed up front.
                listed = Some(allowed.known().iter().copied().collect());
            } else if allowed.intact() && estimate <= self.listed_chunks {
                allowed.narrow_all(&mut connection).await.map_err(from_diesel)?;
                if allowed.known().is_empty() {
                    return Ok(collector.finish());
                }
                listed =
                    (allowed.known().len() <= self.listed_chunks).then(|| allowed.known().iter().copied().collect());
            }
            drop(connection);
            let narrowed = started.elapsed();
            let chunks = || facet_condition(filter);
            // A listed needle's chunks hold it in one log or a few: those are read by id. A
            // common needle's hold tens each, and are read whole; one the walk finds in few
            // logs a chunk read whole is sifted by the chunks' key filters from then on.
            let slots = slot_groups(search);
            let rows = self
                .chunk_walk(
                    workspace,
                    filter,
                    &ChunkWalk {
                        chunk_condition: &chunks,
                        listed: listed.as_deref(),
                        slots: slots.as_deref(),
                        slots_from_start: listed.is_some(),
                        row_condition: &|| index_condition(search),
                        keep: &|row| row.matches(search),
                    },
                    Some(&mut allowed),
                    page,
                )
                .await?;
            tracing::debug!(
                listed = listed.as_ref().map(Vec::len),
                blocks = allowed.work.blocks,
                bands_read = allowed.work.bands_read,
                band_statements = allowed.work.statements,
                narrow_ms = narrowed.as_secs_f64() * 1e3,
                walk_ms = (started.elapsed() - narrowed).as_secs_f64() * 1e3,
                "search"
            );
            let mut collector = from_offset;
            collector.offer_all(rows)?;
            Ok(collector.finish())
        })
        .await
    }
}

#[cfg(test)]
mod tests {
    use sluice_query::{Query, SearchField};
    use sluice_store::Search;
    use sluice_store::signature::HASHES;

    use super::{literal_run, signature_groups};

    /// An order number (one key: its run's start) is looked up by its shorter start too; a
    /// needle of two keys or more keeps its own.
    #[test]
    fn a_needle_of_one_key_is_looked_up_by_its_shorter_start_too() {
        let positions = |raw: &str| {
            let search = Search { query: Query::parse(raw).expect("a query"), fields: vec![SearchField::Message] };
            signature_groups(&search).concat().concat().len()
        };
        assert!(positions("ORD-4821937") > HASHES, "two keys' positions");
        assert!(positions("ORD-48219") <= HASHES, "a start of five characters has no shorter one");
        assert!(positions("8f3a2b1c9d0e4f57") > HASHES);
    }

    /// A query of one needle is a statement prepared once per connection; one of more is
    /// parsed each time, since their number and kinds would make statements without bound.
    #[test]
    fn only_a_query_of_one_needle_is_cached() {
        use diesel::pg::Pg;
        use diesel::query_builder::QueryFragment;
        let cached = |raw: &str| {
            let search = Search { query: Query::parse(raw).expect("a query"), fields: vec![SearchField::Message] };
            let condition = super::index_condition(&search).expect("a condition");
            QueryFragment::<Pg>::is_safe_to_cache_prepared(&condition, &Pg).expect("a condition")
        };
        assert!(cached("ORD-4821937"));
        assert!(cached("timeout"));
        assert!(cached("\"failover to replica\""));
        assert!(cached("ORD-4821937 -lambda5"));
        assert!(!cached("ORD-4821937 timeout"));
        assert!(!cached("kappa151 lambda5 timeout"));
    }

    #[test]
    fn a_needle_is_tested_first_by_its_longest_run_without_letters() {
        assert_eq!(literal_run("ord-6543446"), Some("-6543446"));
        assert_eq!(literal_run("73f2a8a45057f30d"), Some("45057"));
        assert_eq!(literal_run("f00823c5-d6a4-4def-900c-08bb5b98bf56"), Some("00823"));
        assert_eq!(literal_run("failover to replica east669799"), Some("669799"));
        assert_eq!(literal_run("2026-11-28"), Some("2026-11-28"));
        // The first of two as long.
        assert_eq!(literal_run("a123b456"), Some("123"));
        // Too short, or none: the `LIKE` alone.
        assert_eq!(literal_run("lambda9"), None);
        assert_eq!(literal_run("a12b"), None);
        assert_eq!(literal_run("timeout"), None);
        assert_eq!(literal_run(""), None);
        // Letters outside ASCII end a run as ASCII letters do; the run is whole characters.
        assert_eq!(literal_run("été=1234é"), Some("=1234"));
        assert_eq!(literal_run("\u{10FFFF}0123"), Some("0123"));
    }
}
