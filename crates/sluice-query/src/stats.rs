//! `GET /v1/stats` and `GET /v1/stats/summary` without a database: the parameters and their
//! checks, the dense buckets and their order, and the summary's arithmetic, all over the
//! per-hour level counts a store reads from its rollups ([`LevelCount`]).
//!
//! Days are UTC calendar days; a period runs from the start of `from` to the end of `to`.
//!
//! ```
//! use sluice_model::Level;
//! use sluice_query::stats::{Bucket, LevelCount, StatsRequest};
//! let now = 1_767_225_600_000 + 5 * 3_600_000; // 2026-01-01 05:00 UTC
//! let request = StatsRequest::parse(Some("2025-12-31"), None, Some("day"), now).unwrap();
//! let (start, _) = request.range_ms();
//! let counts = [LevelCount { bucket: Bucket::Hour(start + 3_600_000), level: Level::Warn, count: 2 }];
//! let stats = request.answer(&counts);
//! assert_eq!(stats.stats.len(), 2, "one record per day, zero days included");
//! assert_eq!(stats.totals.warn, 2);
//! ```

pub use sluice_api::{Comparison, Counts, Period, Stats, StatsRecord, Summary};
use sluice_model::calendar::MS_PER_DAY;
use sluice_model::{Environment, Issue, Level, UnknownValue};
use time::macros::format_description;
use time::{Date, Duration, OffsetDateTime};

/// The longest period, in days counted inclusively (docs/API.md, GET /v1/stats).
pub const MAX_SPAN_DAYS: i64 = 366;
/// The longest period grouped by hour, in days counted inclusively (docs/API.md, GET /v1/stats).
pub const MAX_HOUR_SPAN_DAYS: i64 = 92;
/// How many days before `to` the default `from` is (8 daily buckets).
pub const DEFAULT_DAYS_BACK: i64 = 7;

const DATE: &[time::format_description::BorrowedFormatItem<'static>] = format_description!("[year]-[month]-[day]");

/// How `GET /v1/stats` groups its records.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum GroupBy {
    /// One record per UTC hour of every day of the period.
    Hour,
    /// One record per UTC day of the period.
    Day,
    /// One record per source with logs in the period.
    Source,
}

impl GroupBy {
    /// The wire spelling.
    pub const fn as_str(self) -> &'static str {
        match self {
            GroupBy::Hour => "hour",
            GroupBy::Day => "day",
            GroupBy::Source => "source",
        }
    }
}

impl std::str::FromStr for GroupBy {
    type Err = UnknownValue;

    fn from_str(text: &str) -> Result<Self, UnknownValue> {
        match text {
            "hour" => Ok(GroupBy::Hour),
            "day" => Ok(GroupBy::Day),
            "source" => Ok(GroupBy::Source),
            other => Err(UnknownValue::new("'hour' | 'day' | 'source'", other)),
        }
    }
}

/// Which logs a count covers, besides its time range; every field set must match.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct RollupFilter {
    /// Exact source.
    pub source: Option<String>,
    /// Exact environment.
    pub environment: Option<Environment>,
    /// Exact dataset.
    pub dataset: Option<String>,
}

/// How a store groups the counts it returns.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum CountBy {
    /// By UTC hour.
    Hour,
    /// By UTC day.
    Day,
    /// By source.
    Source,
}

/// What one count is of.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord)]
pub enum Bucket {
    /// The UTC hour starting at this Unix ms.
    Hour(i64),
    /// The UTC day starting at this Unix ms.
    Day(i64),
    /// A source.
    Source(String),
}

/// The number of logs of one level in one bucket, as a store reads it from its rollups.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct LevelCount {
    /// The hour or source.
    pub bucket: Bucket,
    /// The level.
    pub level: Level,
    /// How many logs.
    pub count: u64,
}

/// The UTC day of a Unix ms; out-of-range instants are clamped to time's calendar.
fn day_of(timestamp_ms: i64) -> Date {
    let seconds = timestamp_ms.div_euclid(1000);
    OffsetDateTime::from_unix_timestamp(seconds).map_or(Date::MAX, OffsetDateTime::date)
}

/// Unix ms at the start of a UTC day.
fn day_start(day: Date) -> i64 {
    day.midnight().assume_utc().unix_timestamp() * 1000
}

fn format_date(day: Date) -> String {
    day.format(DATE).unwrap_or_default()
}

/// A checked `GET /v1/stats` request.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct StatsRequest {
    /// First day, inclusive.
    pub from: Date,
    /// Last day, inclusive.
    pub to: Date,
    /// How records are grouped.
    pub group_by: GroupBy,
}

impl StatsRequest {
    /// Checks the parameters (absent ones take their defaults). `now_ms` decides "today".
    /// Every problem found is one issue: a malformed date, an unknown `groupBy`, `from`
    /// after `to`, or a period over 366 days (92 grouped by hour), days counted inclusively.
    pub fn parse(
        from: Option<&str>,
        to: Option<&str>,
        group_by: Option<&str>,
        now_ms: i64,
    ) -> Result<StatsRequest, Vec<Issue>> {
        let mut issues = Vec::new();
        let mut date = |name: &str, text: Option<&str>| {
            let text = text?;
            // Exactly `YYYY-MM-DD` (no sign, no short fields), then a real calendar day.
            let shaped = text.len() == 10
                && text
                    .bytes()
                    .enumerate()
                    .all(|(at, byte)| if at == 4 || at == 7 { byte == b'-' } else { byte.is_ascii_digit() });
            match Date::parse(text, DATE).ok().filter(|_| shaped) {
                Some(day) => Some(day),
                None => {
                    issues.push(Issue::at(name, format!("Invalid date '{text}', expected YYYY-MM-DD")));
                    None
                }
            }
        };
        let from_day = date("from", from);
        let to_day = date("to", to);
        let group_by = match group_by.map(str::parse::<GroupBy>).transpose() {
            Ok(group_by) => group_by.unwrap_or(GroupBy::Day),
            Err(unknown) => {
                issues.push(Issue::at("groupBy", unknown.to_string()));
                GroupBy::Day
            }
        };
        if !issues.is_empty() {
            return Err(issues);
        }
        let to = to_day.unwrap_or_else(|| day_of(now_ms));
        let from = from_day.unwrap_or_else(|| to.checked_sub(Duration::days(DEFAULT_DAYS_BACK)).unwrap_or(Date::MIN));
        let days = (to - from).whole_days() + 1;
        let limit = if group_by == GroupBy::Hour { MAX_HOUR_SPAN_DAYS } else { MAX_SPAN_DAYS };
        if from > to {
            issues.push(Issue::at("from", "from must not be after to"));
        } else if days > limit {
            let grouped = if group_by == GroupBy::Hour { " grouped by hour" } else { "" };
            issues.push(Issue::at("from", format!("The period must span at most {limit} days{grouped}")));
        }
        if issues.is_empty() { Ok(StatsRequest { from, to, group_by }) } else { Err(issues) }
    }

    /// The period in Unix ms: the start of `from`, and the start of the day after `to`
    /// (exclusive).
    pub fn range_ms(&self) -> (i64, i64) {
        (day_start(self.from), day_start(self.to) + MS_PER_DAY)
    }

    /// How the store should group counts for this request.
    pub fn count_by(&self) -> CountBy {
        match self.group_by {
            GroupBy::Hour => CountBy::Hour,
            GroupBy::Day => CountBy::Day,
            GroupBy::Source => CountBy::Source,
        }
    }

    /// The response from the store's counts: hour or day buckets for `day` (buckets outside
    /// the period are ignored), hour buckets for `hour`, source buckets for `source`.
    pub fn answer(&self, counts: &[LevelCount]) -> Stats {
        let (start, end) = self.range_ms();
        let days = usize::try_from((end - start) / MS_PER_DAY).unwrap_or_default();
        let mut totals = Counts::default();
        let stats = match self.group_by {
            GroupBy::Day | GroupBy::Hour => {
                let per_day = if self.group_by == GroupBy::Hour { 24 } else { 1 };
                let width = MS_PER_DAY / per_day as i64;
                let mut buckets = vec![Counts::default(); days * per_day];
                for count in counts {
                    let at = match count.bucket {
                        Bucket::Hour(at) => at,
                        Bucket::Day(at) if self.group_by == GroupBy::Day => at,
                        _ => continue,
                    };
                    if !(start..end).contains(&at) {
                        continue;
                    }
                    let index = usize::try_from((at - start) / width).unwrap_or_default();
                    if let Some(bucket) = buckets.get_mut(index) {
                        bucket.add(count.level, count.count);
                        totals.add(count.level, count.count);
                    }
                }
                buckets
                    .into_iter()
                    .enumerate()
                    .map(|(index, counts)| {
                        let day = self.from + Duration::days((index / per_day) as i64);
                        let date = format_date(day);
                        if self.group_by == GroupBy::Hour {
                            StatsRecord { date: Some(date), hour: Some((index % per_day) as u8), source: None, counts }
                        } else {
                            StatsRecord { date: Some(date), hour: None, source: None, counts }
                        }
                    })
                    .collect()
            }
            GroupBy::Source => {
                let mut sources: std::collections::BTreeMap<&str, Counts> = std::collections::BTreeMap::new();
                for count in counts {
                    let Bucket::Source(source) = &count.bucket else { continue };
                    sources.entry(source).or_default().add(count.level, count.count);
                    totals.add(count.level, count.count);
                }
                let mut records: Vec<(&str, Counts)> = sources.into_iter().filter(|(_, c)| c.total > 0).collect();
                // By total, largest first; the BTreeMap already ordered equal totals by name.
                records.sort_by_key(|record| std::cmp::Reverse(record.1.total));
                records
                    .into_iter()
                    .map(|(source, counts)| StatsRecord {
                        date: None,
                        hour: None,
                        source: Some(source.to_owned()),
                        counts,
                    })
                    .collect()
            }
        };
        let period = Period {
            from: format_date(self.from),
            to: format_date(self.to),
            group_by: self.group_by.as_str().to_owned(),
        };
        Stats { stats, totals, period }
    }
}

/// The hours the summary needs, in Unix ms: the start of yesterday and the start of
/// tomorrow (exclusive), UTC.
pub fn summary_range_ms(now_ms: i64) -> (i64, i64) {
    let today = day_start(day_of(now_ms));
    (today - MS_PER_DAY, today + MS_PER_DAY)
}

/// The change in percent, rounded to one decimal (halves away from zero), computed in
/// integers so no binary fraction tips a half; 100 or 0 when yesterday had nothing
/// (docs/API.md, GET /v1/stats/summary).
pub fn change_percent(today: u64, yesterday: u64) -> f64 {
    if yesterday == 0 {
        return if today > 0 { 100.0 } else { 0.0 };
    }
    // Tenths of a percent: (today - yesterday) * 1000 / yesterday, rounded half away from zero.
    let numerator = (i128::from(today) - i128::from(yesterday)) * 1000;
    let denominator = i128::from(yesterday);
    let tenths = (numerator.abs() * 2 + denominator) / (denominator * 2) * numerator.signum();
    tenths as f64 / 10.0
}

/// `up` above +5 %, `down` below −5 %, else `stable`, on the rounded change.
pub fn trend(change_percent: f64) -> &'static str {
    if change_percent > 5.0 {
        "up"
    } else if change_percent < -5.0 {
        "down"
    } else {
        "stable"
    }
}

/// The summary from hour or day counts of at least yesterday and today (others are ignored).
pub fn summary(now_ms: i64, counts: &[LevelCount]) -> Summary {
    let (yesterday_start, end) = summary_range_ms(now_ms);
    let today_start = yesterday_start + MS_PER_DAY;
    let mut today = Counts::default();
    let mut yesterday = Counts::default();
    for count in counts {
        let (Bucket::Hour(at) | Bucket::Day(at)) = count.bucket else { continue };
        if (today_start..end).contains(&at) {
            today.add(count.level, count.count);
        } else if (yesterday_start..today_start).contains(&at) {
            yesterday.add(count.level, count.count);
        }
    }
    let change = change_percent(today.total, yesterday.total);
    // A whole number is written as one (`100`, not `100.0`).
    let number = if change.fract() == 0.0 && change.abs() < 9.0e15 {
        serde_json::Number::from(change as i64)
    } else {
        serde_json::Number::from_f64(change).unwrap_or_else(|| serde_json::Number::from(0))
    };
    Summary {
        today,
        comparison: Comparison {
            yesterday_total: yesterday.total,
            change_percent: number,
            trend: trend(change).to_owned(),
        },
    }
}
