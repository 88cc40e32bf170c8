//! The level counters both stores keep beside their logs, apart from SQL: which counters a
//! batch of logs moves and by how much ([`RollupDeltas`]), and which counters a stats request
//! reads ([`CountsSource`]). Every store keeps three tables: per hour (`log_rollups`), per UTC
//! day (`log_rollups_daily`), and per UTC day without environment and dataset
//! (`log_rollups_daily_sources`, the usual stats request filters on neither).

use std::collections::BTreeMap;

use sluice_model::Log;
use sluice_model::calendar::{MS_PER_DAY, day_start_ms, hour_start};
use sluice_query::stats::{Bucket, CountBy, LevelCount};

use crate::rows::parse_column;
use crate::{StoreError, WriteBatch};

/// A counter table: its name, its time column, and whether it keeps environment and dataset.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct CounterTable {
    /// The table.
    pub name: &'static str,
    /// Its time column: `hour` or `day`.
    pub at: &'static str,
    /// Whether it keeps environment and dataset.
    pub scoped: bool,
}

/// The hourly counters.
pub const HOURLY: CounterTable = CounterTable { name: "log_rollups", at: "hour", scoped: true };
/// The daily counters.
pub const DAILY: CounterTable = CounterTable { name: "log_rollups_daily", at: "day", scoped: true };
/// The daily counters without environment and dataset.
pub const DAILY_SOURCES: CounterTable = CounterTable { name: "log_rollups_daily_sources", at: "day", scoped: false };

/// One counter a delta applies to: its table, its hour or day, and what it counts
/// (environment and dataset are empty in a table that keeps neither).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Counter<'a> {
    /// Its table.
    pub table: CounterTable,
    /// The hour or day it counts, as the Unix ms it starts at.
    pub start: i64,
    /// `source`.
    pub source: &'a str,
    /// `environment`, or empty.
    pub environment: &'a str,
    /// `dataset`, or empty.
    pub dataset: &'a str,
    /// `level`.
    pub level: &'a str,
}

/// What a counter counts, apart from its time: source, environment, dataset and level, as the
/// store writes them.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord)]
pub struct Scope {
    /// `source`.
    pub source: String,
    /// `environment`.
    pub environment: String,
    /// `dataset`.
    pub dataset: String,
    /// `level`.
    pub level: String,
}

/// How many logs each counter of each table gains (or, negative, loses). Keys are sorted, so
/// concurrent writers take counter rows' locks in one order.
#[derive(Debug, Default, Clone, PartialEq, Eq)]
pub struct RollupDeltas {
    /// `log_rollups`: by the hour's start and scope.
    pub hourly: BTreeMap<(i64, Scope), i64>,
    /// `log_rollups_daily`: by the UTC day's start and scope.
    pub daily: BTreeMap<(i64, Scope), i64>,
    /// `log_rollups_daily_sources`: by the UTC day's start, source and level.
    pub daily_sources: BTreeMap<(i64, String, String), i64>,
}

impl RollupDeltas {
    /// Adds `sign` (1 or -1) for a log at `ts` under `scope`.
    pub fn add(&mut self, ts: i64, scope: Scope, sign: i64) {
        let day = day_start_ms(ts);
        *self.daily_sources.entry((day, scope.source.clone(), scope.level.clone())).or_insert(0) += sign;
        *self.daily.entry((day, scope.clone())).or_insert(0) += sign;
        *self.hourly.entry((hour_start(ts), scope)).or_insert(0) += sign;
    }

    /// Adds `other`'s deltas to these (several batches of one workspace, applied at once so
    /// their counter rows are locked in key order).
    pub fn absorb(&mut self, other: &RollupDeltas) {
        for (key, count) in &other.hourly {
            *self.hourly.entry(key.clone()).or_insert(0) += count;
        }
        for (key, count) in &other.daily {
            *self.daily.entry(key.clone()).or_insert(0) += count;
        }
        for (key, count) in &other.daily_sources {
            *self.daily_sources.entry(key.clone()).or_insert(0) += count;
        }
    }

    /// Every counter these deltas change and by how much: the hourly ones, then the daily ones,
    /// then the daily ones by source, each in key order.
    pub fn counters(&self) -> impl Iterator<Item = (Counter<'_>, i64)> {
        self.hourly
            .iter()
            .map(|entry| scoped_counter(HOURLY, entry))
            .chain(self.daily.iter().map(|entry| scoped_counter(DAILY, entry)))
            .chain(self.daily_sources.iter().map(source_counter))
    }

    /// The deltas of a batch being inserted; `stored` turns a source or dataset into the text
    /// the store writes (the PostgreSQL store escapes U+0000).
    pub fn of(logs: &[Log], stored: impl Fn(&str) -> String) -> Self {
        Self::counted(logs, stored, 1)
    }

    /// The deltas of deleting `logs` (retention): [`RollupDeltas::of`] negated.
    pub fn removed(logs: &[Log], stored: impl Fn(&str) -> String) -> Self {
        Self::counted(logs, stored, -1)
    }

    fn counted(logs: &[Log], stored: impl Fn(&str) -> String, sign: i64) -> Self {
        let mut deltas = RollupDeltas::default();
        for log in logs {
            let entry = &log.entry;
            let scope = Scope {
                source: stored(&entry.source),
                environment: entry.environment.as_str().to_owned(),
                dataset: stored(&entry.dataset),
                level: entry.level.as_str().to_owned(),
            };
            deltas.add(entry.timestamp, scope, sign);
        }
        deltas
    }
}

/// A counter of an hourly or daily table and its delta, from a key of [`RollupDeltas`].
fn scoped_counter<'a>(table: CounterTable, ((start, scope), delta): (&'a (i64, Scope), &'a i64)) -> (Counter<'a>, i64) {
    let (source, environment, dataset, level) = (&scope.source, &scope.environment, &scope.dataset, &scope.level);
    (Counter { table, start: *start, source, environment, dataset, level }, *delta)
}

/// A counter of the daily table by source and its delta, from a key of [`RollupDeltas`].
fn source_counter<'a>(((start, source, level), delta): (&'a (i64, String, String), &'a i64)) -> (Counter<'a>, i64) {
    (Counter { table: DAILY_SOURCES, start: *start, source, environment: "", dataset: "", level }, *delta)
}

/// What an insert counts for one batch, worked out before its transaction starts: the
/// counters it moves and its logs per UTC month of acceptance (the quota's usage).
#[derive(Debug, Clone)]
pub struct BatchCounts {
    /// The counter changes of the batch's logs.
    pub deltas: RollupDeltas,
    /// Logs per month, oldest first ([`crate::logs_per_month`]).
    pub months: Vec<(i64, i64)>,
    /// The flow counters of the batch's logs that name a flow ([`crate::flows`]).
    pub flows: crate::flows::FlowDeltas,
}

impl BatchCounts {
    /// The counts of `batch`; `stored` turns a source, dataset or flow id into the text the
    /// store writes.
    pub fn of(batch: &WriteBatch, stored: impl Fn(&str) -> String) -> Self {
        BatchCounts {
            deltas: RollupDeltas::of(&batch.logs, &stored),
            months: crate::logs_per_month(&batch.logs),
            flows: crate::flows::FlowDeltas::of(&batch.logs, &stored),
        }
    }
}

/// What a count is grouped by, in the table a [`CountsSource`] names.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum CountsGroup {
    /// The table's `hour` column.
    Hour,
    /// The daily table's `day` column.
    Day,
    /// The UTC day of the hourly table's `hour` column (a range not on day edges).
    DayOfHour,
    /// The `source` column, all times together.
    Source,
}

/// The counter table a stats request reads, and how its rows are grouped.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct CountsSource {
    /// The table.
    pub table: &'static str,
    /// Its time column: `hour` or `day`.
    pub at: &'static str,
    /// Whether it keeps environment and dataset (so they can be filtered on).
    pub scoped: bool,
    /// The grouping.
    pub group: CountsGroup,
}

impl CountsSource {
    /// The counters for `by` over `from_ms..to_ms`: whole UTC days read a daily table (the one
    /// without environment and dataset when `narrow`, i.e. neither is filtered on), anything
    /// else the hourly one.
    pub fn choose(by: CountBy, from_ms: i64, to_ms: i64, narrow: bool) -> Self {
        let whole_days = from_ms.rem_euclid(MS_PER_DAY) == 0 && to_ms.rem_euclid(MS_PER_DAY) == 0;
        let counters = match (whole_days && by != CountBy::Hour, narrow) {
            (true, true) => DAILY_SOURCES,
            (true, false) => DAILY,
            (false, _) => HOURLY,
        };
        let CounterTable { name: table, at, scoped } = counters;
        let group = match by {
            CountBy::Hour => CountsGroup::Hour,
            CountBy::Day if whole_days => CountsGroup::Day,
            CountBy::Day => CountsGroup::DayOfHour,
            CountBy::Source => CountsGroup::Source,
        };
        CountsSource { table, at, scoped, group }
    }
}

/// The midnight at or before an `hour` column's value, in SQL both stores speak (also before
/// 1970).
pub const DAY_OF_HOUR_SQL: &str = "(hour - (((hour % 86400000) + 86400000) % 86400000))";

/// One row of a counts statement as a [`LevelCount`]: `hour` is the bucket's time (or the
/// constant of a source grouping), `source` the source as sent, `level` as stored.
pub fn level_count(by: CountBy, hour: i64, source: String, level: &str, total: i64) -> Result<LevelCount, StoreError> {
    let bucket = match by {
        CountBy::Hour => Bucket::Hour(hour),
        CountBy::Day => Bucket::Day(hour),
        CountBy::Source => Bucket::Source(source),
    };
    Ok(LevelCount {
        bucket,
        level: parse_column(level, "rollup level")?,
        count: u64::try_from(total).unwrap_or_default(),
    })
}

/// How one store's SQL spells the counts statement.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct CountsDialect {
    /// The statement, with `{table}` and `{at}` (the counters and their time column), `{group}`
    /// (the bucket), `{source}` (the source column or `''`) and `{scope}` (the environment and
    /// dataset conditions) to fill in.
    pub template: &'static str,
    /// `{scope}` of a table that keeps environment and dataset: each condition applies only
    /// when its parameter is bound non-null.
    pub scope_filters: &'static str,
    /// `{scope}` of the narrow table, which keeps neither (both parameters are bound as NULL).
    pub unscoped: &'static str,
    /// `{group}` when grouping by source: one constant bucket, in the time column's type.
    pub no_time: &'static str,
}

impl CountsSource {
    /// The statement that reads these counters, in `dialect`.
    pub fn sql(&self, dialect: &CountsDialect) -> String {
        let scope = if self.scoped { dialect.scope_filters } else { dialect.unscoped };
        let (group, source) = match self.group {
            CountsGroup::Hour => ("hour", "''"),
            CountsGroup::Day => ("day", "''"),
            CountsGroup::DayOfHour => (DAY_OF_HOUR_SQL, "''"),
            CountsGroup::Source => (dialect.no_time, "source"),
        };
        dialect
            .template
            .replace("{table}", self.table)
            .replace("{at}", self.at)
            .replace("{group}", group)
            .replace("{source}", source)
            .replace("{scope}", scope)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const DAY: i64 = MS_PER_DAY;

    #[test]
    fn whole_days_read_a_daily_table_and_other_ranges_the_hourly_one() {
        let source = CountsSource::choose(CountBy::Day, 10 * DAY, 12 * DAY, true);
        assert_eq!(
            (source.table, source.at, source.scoped, source.group),
            ("log_rollups_daily_sources", "day", false, CountsGroup::Day)
        );
        let source = CountsSource::choose(CountBy::Source, 10 * DAY, 12 * DAY, false);
        assert_eq!((source.table, source.scoped, source.group), ("log_rollups_daily", true, CountsGroup::Source));
        let source = CountsSource::choose(CountBy::Day, 10 * DAY + 1, 12 * DAY, true);
        assert_eq!((source.table, source.at, source.group), ("log_rollups", "hour", CountsGroup::DayOfHour));
        let source = CountsSource::choose(CountBy::Hour, 10 * DAY, 12 * DAY, true);
        assert_eq!((source.table, source.group), ("log_rollups", CountsGroup::Hour));
    }

    #[test]
    fn deltas_count_each_table_and_cancel() {
        let scope = |level: &str| Scope {
            source: "s".into(),
            environment: "production".into(),
            dataset: "d".into(),
            level: level.into(),
        };
        let mut deltas = RollupDeltas::default();
        deltas.add(DAY + 5, scope("info"), 1);
        deltas.add(DAY + 3_600_000, scope("info"), 1);
        assert_eq!(deltas.hourly.len(), 2);
        assert_eq!(deltas.daily.get(&(DAY, scope("info"))), Some(&2));
        assert_eq!(deltas.daily_sources.get(&(DAY, "s".to_owned(), "info".to_owned())), Some(&2));
        let mut undo = RollupDeltas::default();
        undo.add(DAY + 5, scope("info"), -1);
        deltas.absorb(&undo);
        assert_eq!(deltas.daily.get(&(DAY, scope("info"))), Some(&1));
        assert_eq!(deltas.hourly.get(&(DAY, scope("info"))), Some(&0));
    }
}
