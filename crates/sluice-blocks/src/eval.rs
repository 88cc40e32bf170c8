//! Every list filter and search, evaluated against blocks: which blocks may hold a match (from
//! their summaries), which granules (from the index), which rows (from the columns, the
//! cheap ones first, the searched text last and only for rows the filters kept), and the
//! newest-first page across blocks ([`PageCollector`]).

use std::collections::BinaryHeap;

use sluice_model::{Environment, Level, LogId};
use sluice_query::{Clause, Query};

use crate::DecodeError;
use crate::block::{Column, GranuleInfo, Head, Summary, environment_code, level_code};
use crate::bloom::{positions, slice_bits};
use crate::granule::Granule;
use crate::keys::{FieldKey, field_key, needle_keys_of};
use crate::search::Search;

/// Filters of `GET /v1/logs` (and of a search); every field set must match.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct LogFilter {
    /// Exact level.
    pub level: Option<Level>,
    /// Exact source.
    pub source: Option<String>,
    /// Exact environment.
    pub environment: Option<Environment>,
    /// Exact dataset.
    pub dataset: Option<String>,
    /// Exact `userId`.
    pub user_id: Option<String>,
    /// Exact `sessionId`.
    pub session_id: Option<String>,
    /// Exact `flowId`.
    pub flow_id: Option<String>,
    /// Unix ms, inclusive.
    pub from: Option<i64>,
    /// Unix ms, inclusive.
    pub to: Option<i64>,
}

/// A row a read kept: where it is and what orders it.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub struct Hit {
    /// Unix ms.
    pub timestamp: i64,
    /// The log's id.
    pub id: LogId,
    /// Its granule in the block.
    pub granule: usize,
    /// Its row in the granule.
    pub row: usize,
}

/// A list filter and an optional search, ready to evaluate against blocks.
#[derive(Debug, Clone)]
pub struct Matcher<'a> {
    filter: &'a LogFilter,
    search: Option<&'a Search>,
    /// Keys every matching granule holds (the filters' exact values).
    required: Vec<u64>,
    /// For each clause the index can use: its alternatives, each the keys of one needle; for
    /// each format version, whose indexes hold different keys (`[0]` version 1, `[1]` the
    /// later ones).
    groups: [Vec<Vec<Vec<u64>>>; 2],
}

impl<'a> Matcher<'a> {
    /// What `filter` and `search` (when given) ask of a block.
    pub fn new(filter: &'a LogFilter, search: Option<&'a Search>) -> Self {
        let mut required = Vec::new();
        // Identifiers first: the probe takes the first, and a source or dataset is mostly
        // settled by the block's summary already.
        let exact = [
            (FieldKey::UserId, &filter.user_id),
            (FieldKey::SessionId, &filter.session_id),
            (FieldKey::FlowId, &filter.flow_id),
            (FieldKey::Source, &filter.source),
            (FieldKey::Dataset, &filter.dataset),
        ];
        for (field, value) in exact {
            if let Some(value) = value {
                required.push(field_key(field, value));
            }
        }
        let groups = [1, crate::FORMAT_VERSION]
            .map(|version| search.map_or_else(Vec::new, |search| index_groups(&search.query, version)));
        Matcher { filter, search, required, groups }
    }

    fn groups_of(&self, version: u8) -> &[Vec<Vec<u64>>] {
        &self.groups[usize::from(version >= 2)]
    }

    /// Whether the index narrows this read of a block of format `version` (a filter of exact
    /// values, or a needle with keys): otherwise every granule in the time range is a candidate.
    pub fn uses_index(&self, version: u8) -> bool {
        !self.required.is_empty() || !self.groups_of(version).is_empty()
    }

    /// Whether a block with this summary may hold a match.
    pub fn block_may_match(&self, summary: &Summary) -> bool {
        let filter = self.filter;
        let named = |values: &[(String, u32)], complete: bool, wanted: &Option<String>| match wanted {
            Some(wanted) => !complete || values.iter().any(|(value, count)| value == wanted && *count > 0),
            None => true,
        };
        in_range(summary.timestamps, filter)
            && filter.level.is_none_or(|level| summary.levels[usize::from(level_code(level))] > 0)
            && filter
                .environment
                .is_none_or(|environment| summary.environments[usize::from(environment_code(environment))] > 0)
            && named(&summary.sources, summary.sources_complete, &filter.source)
            && named(&summary.datasets, summary.datasets_complete, &filter.dataset)
    }

    /// Every index position this read looks up in the block of this head.
    pub fn positions(&self, head: &Head) -> Vec<u64> {
        let mut all: Vec<u64> = self
            .required
            .iter()
            .chain(self.groups_of(head.version).iter().flatten().flatten())
            .flat_map(|key| positions(*key, head.index_bits))
            .collect();
        all.sort_unstable();
        all.dedup();
        all
    }

    /// The keys of a condition every match meets, looked up first because it costs a band or
    /// two a block: an exact identifier (user, session, flow), else the most telling key of each
    /// needle of the first clause (a granule may match when it holds any of them), else the
    /// exact source or dataset.
    fn probe(&self, version: u8) -> Vec<u64> {
        let filter = self.filter;
        let identifier = filter.user_id.is_some() || filter.session_id.is_some() || filter.flow_id.is_some();
        if identifier && let Some(key) = self.required.first() {
            return vec![*key];
        }
        if let Some(needles) = self.groups_of(version).first() {
            return needles.iter().filter_map(|keys| keys.first().copied()).collect();
        }
        self.required.first().map_or_else(Vec::new, |key| vec![*key])
    }

    /// The index positions of the probe in the block of this head: a store reads these first,
    /// and the others ([`Matcher::positions`]) only for a block [`Matcher::probe_may_match`] keeps.
    pub fn probe_positions(&self, head: &Head) -> Vec<u64> {
        let mut all: Vec<u64> =
            self.probe(head.version).into_iter().flat_map(|key| positions(key, head.index_bits)).collect();
        all.sort_unstable();
        all.dedup();
        all
    }

    /// Whether a granule of the block in the time range, with the level, may hold a match by
    /// the probe's keys alone, as `slice` gives each of [`Matcher::probe_positions`]' slices.
    pub fn probe_may_match<'s>(
        &self,
        head: &Head,
        mut slice: impl FnMut(u64) -> Result<&'s [u8], DecodeError>,
    ) -> Result<bool, DecodeError> {
        let candidates = self.candidate_mask(head);
        if candidates == 0 || !self.uses_index(head.version) {
            return Ok(candidates != 0);
        }
        let mut any = 0;
        for key in self.probe(head.version) {
            any |= held(key, head, &mut slice)?;
        }
        Ok(candidates & any != 0)
    }

    /// The granules of the block that may hold a match, in order: in the time range, with the
    /// level, and holding every key the read needs, as `slice` gives each position's slice of
    /// the index (`bloom::slice_range` of the index, which a store may read piece by piece).
    pub fn granules<'s>(
        &self,
        head: &Head,
        mut slice: impl FnMut(u64) -> Result<&'s [u8], DecodeError>,
    ) -> Result<Vec<usize>, DecodeError> {
        let mut candidates = self.candidate_mask(head);
        if self.uses_index(head.version) && candidates != 0 {
            for key in &self.required {
                candidates &= held(*key, head, &mut slice)?;
            }
            for group in self.groups_of(head.version) {
                let mut any = 0;
                for needle in group {
                    let mut every = u64::MAX;
                    for key in needle {
                        every &= held(*key, head, &mut slice)?;
                    }
                    any |= every;
                }
                candidates &= any;
            }
        }
        Ok((0..head.granules.len()).filter(|granule| candidates & (1 << granule) != 0).collect())
    }

    /// A bit a granule in the time range and with the level.
    fn candidate_mask(&self, head: &Head) -> u64 {
        head.granules
            .iter()
            .enumerate()
            .filter(|(_, granule)| self.granule_may_match(granule))
            .fold(0, |mask, (number, _)| mask | 1 << number)
    }

    fn granule_may_match(&self, granule: &GranuleInfo) -> bool {
        in_range(granule.timestamps, self.filter)
            && self.filter.level.is_none_or(|level| granule.levels[usize::from(level_code(level))] > 0)
    }

    /// The rows of `granule` that match, each with what orders it.
    pub fn rows(&self, granule: &Granule<'_>, number: usize) -> Result<Vec<Hit>, DecodeError> {
        let filter = self.filter;
        let timestamps = granule.timestamps()?;
        let mut kept: Vec<usize> =
            (0..granule.rows()).filter(|row| in_range((timestamps[*row], timestamps[*row]), filter)).collect();
        if let Some(level) = filter.level {
            let levels = granule.levels()?;
            kept.retain(|row| levels[*row] == level);
        }
        if let Some(environment) = filter.environment {
            let environments = granule.environments()?;
            kept.retain(|row| environments[*row] == environment);
        }
        let exact = [
            (Column::Source, &filter.source),
            (Column::Dataset, &filter.dataset),
            (Column::UserId, &filter.user_id),
            (Column::SessionId, &filter.session_id),
            (Column::FlowId, &filter.flow_id),
        ];
        for (column, wanted) in exact {
            if let Some(wanted) = wanted
                && !kept.is_empty()
            {
                let values = granule.text(column)?;
                kept.retain(|row| values.get(*row) == Some(wanted.as_str()));
            }
        }
        if let Some(search) = self.search
            && !kept.is_empty()
        {
            kept = crate::matching::matching_rows(search, granule, &kept)?;
        }
        if kept.is_empty() {
            return Ok(Vec::new());
        }
        let ids = granule.ids()?;
        Ok(kept.into_iter().map(|row| Hit { timestamp: timestamps[row], id: ids[row], granule: number, row }).collect())
    }
}

fn in_range((earliest, latest): (i64, i64), filter: &LogFilter) -> bool {
    filter.from.is_none_or(|from| latest >= from) && filter.to.is_none_or(|to| earliest <= to)
}

/// A bit a granule of the block whose Bloom filter may hold `key`.
fn held<'s>(
    key: u64,
    head: &Head,
    slice: &mut impl FnMut(u64) -> Result<&'s [u8], DecodeError>,
) -> Result<u64, DecodeError> {
    let count = head.granules.len();
    let mut held = u64::MAX;
    for position in positions(key, head.index_bits) {
        held &= slice_bits(slice(position)?, position, count).ok_or(DecodeError::Truncated)?;
    }
    Ok(held)
}

/// The clauses of `query` the index can narrow with: for each `Contains` and `AnyOf` whose
/// every needle has keys, the keys of each needle (exclusions narrow nothing).
/// The most keys a needle looks the index up by, its most telling first: each is a read of
/// its positions in every block the read meets, which at 10M logs (about 300 blocks) cost more
/// than the few false granules the other keys would have ruled out.
const INDEX_KEYS: usize = 6;

fn index_groups(query: &Query, version: u8) -> Vec<Vec<Vec<u64>>> {
    query
        .clauses()
        .iter()
        .filter_map(|clause| {
            let needles = match clause {
                Clause::Contains(needle) => std::slice::from_ref(needle),
                Clause::AnyOf(needles) => needles.as_slice(),
                Clause::Excludes(_) => return None,
            };
            let keys: Vec<Vec<u64>> = needles
                .iter()
                .map(|needle| needle_keys_of(&needle.folded, version).into_iter().take(INDEX_KEYS).collect())
                .collect();
            keys.iter().all(|keys| !keys.is_empty()).then_some(keys)
        })
        .collect()
}

/// The newest `wanted` hits across blocks (timestamp, then id, descending), gathered block by
/// block: once it holds `wanted`, a block whose newest log is older than the oldest kept
/// cannot change the page and is skipped ([`PageCollector::can_skip`]).
#[derive(Debug, Clone)]
pub struct PageCollector<T> {
    wanted: usize,
    kept: BinaryHeap<std::cmp::Reverse<(i64, LogId, Entry<T>)>>,
}

/// What a collector keeps beside a hit's order: the caller's own (which block).
#[derive(Debug, Clone)]
struct Entry<T>(T);

impl<T> PartialEq for Entry<T> {
    fn eq(&self, _: &Self) -> bool {
        true
    }
}
impl<T> Eq for Entry<T> {}
impl<T> PartialOrd for Entry<T> {
    fn partial_cmp(&self, other: &Self) -> Option<std::cmp::Ordering> {
        Some(self.cmp(other))
    }
}
impl<T> Ord for Entry<T> {
    fn cmp(&self, _: &Self) -> std::cmp::Ordering {
        std::cmp::Ordering::Equal
    }
}

impl<T> PageCollector<T> {
    /// Keeps the newest `wanted` (a page's offset, its limit, and one more to know whether
    /// more follow).
    pub fn new(wanted: usize) -> Self {
        PageCollector { wanted, kept: BinaryHeap::new() }
    }

    /// Whether a block whose newest log is `(timestamp, id)` at most can add nothing.
    pub fn can_skip(&self, newest: (i64, LogId)) -> bool {
        self.kept.len() >= self.wanted && self.kept.peek().is_some_and(|oldest| newest < (oldest.0.0, oldest.0.1))
    }

    /// The oldest hit kept once it holds `wanted`: a hit older than it cannot enter.
    pub fn floor(&self) -> Option<(i64, LogId)> {
        if self.kept.len() < self.wanted {
            return None;
        }
        self.kept.peek().map(|oldest| (oldest.0.0, oldest.0.1))
    }

    /// Offers a hit.
    pub fn offer(&mut self, timestamp: i64, id: LogId, value: T) {
        if self.wanted == 0 {
            return;
        }
        if self.kept.len() < self.wanted {
            self.kept.push(std::cmp::Reverse((timestamp, id, Entry(value))));
        } else if let Some(oldest) = self.kept.peek()
            && (timestamp, id) > (oldest.0.0, oldest.0.1)
        {
            self.kept.pop();
            self.kept.push(std::cmp::Reverse((timestamp, id, Entry(value))));
        }
    }

    /// What it kept, newest first.
    pub fn into_sorted(self) -> Vec<(i64, LogId, T)> {
        let mut kept: Vec<(i64, LogId, T)> = self
            .kept
            .into_iter()
            .map(|std::cmp::Reverse((timestamp, id, Entry(value)))| (timestamp, id, value))
            .collect();
        kept.sort_by_key(|(timestamp, id, _)| std::cmp::Reverse((*timestamp, *id)));
        kept
    }
}
