//! Stats and summary arithmetic: defaults, UTC day and hour edges, dense buckets, source
//! order, every refused parameter, and the summary's rounding and trend edges.

use serde_json::json;
use sluice_model::Level;
use sluice_model::calendar::{MS_PER_DAY, MS_PER_HOUR};
use sluice_query::stats::{
    Bucket, Counts, GroupBy, LevelCount, StatsRequest, change_percent, summary, summary_range_ms, trend,
};

/// 2026-03-10 00:00:00 UTC.
const MARCH_10: i64 = 1_773_100_800_000;

fn hour(at: i64, level: Level, count: u64) -> LevelCount {
    LevelCount { bucket: Bucket::Hour(at), level, count }
}

fn source(name: &str, level: Level, count: u64) -> LevelCount {
    LevelCount { bucket: Bucket::Source(name.to_owned()), level, count }
}

fn refused(from: Option<&str>, to: Option<&str>, group_by: Option<&str>) -> Vec<(String, String)> {
    StatsRequest::parse(from, to, group_by, MARCH_10 + 12 * MS_PER_HOUR)
        .expect_err("refused")
        .into_iter()
        .map(|issue| (serde_json::to_value(&issue.path).expect("valid").to_string(), issue.message))
        .collect()
}

#[test]
fn defaults_are_the_last_eight_days_by_day() {
    let request = StatsRequest::parse(None, None, None, MARCH_10 + 12 * MS_PER_HOUR).expect("valid");
    assert_eq!(request.group_by, GroupBy::Day);
    let stats = request.answer(&[]);
    let dates: Vec<_> =
        stats.stats.iter().map(|record| serde_json::to_value(record).expect("valid")["date"].clone()).collect();
    assert_eq!(dates.len(), 8);
    assert_eq!(dates[0], "2026-03-03");
    assert_eq!(dates[7], "2026-03-10");
    assert_eq!(
        serde_json::to_value(&stats.period).expect("valid"),
        json!({"from": "2026-03-03", "to": "2026-03-10", "groupBy": "day"})
    );
    assert_eq!(request.range_ms(), (MARCH_10 - 7 * MS_PER_DAY, MARCH_10 + MS_PER_DAY));
}

#[test]
fn a_lone_to_counts_back_seven_days_and_a_lone_from_runs_to_today() {
    let now = MARCH_10 + 12 * MS_PER_HOUR;
    let request = StatsRequest::parse(None, Some("2026-01-31"), None, now).expect("valid");
    assert_eq!(request.answer(&[]).period.from, "2026-01-24");
    let request = StatsRequest::parse(Some("2026-03-01"), None, None, now).expect("valid");
    assert_eq!(request.answer(&[]).period.to, "2026-03-10");
}

#[test]
fn day_buckets_hold_their_hours_exactly_at_utc_midnight() {
    let request = StatsRequest::parse(Some("2026-03-09"), Some("2026-03-10"), Some("day"), MARCH_10).expect("valid");
    let counts = [
        hour(MARCH_10 - MS_PER_DAY - MS_PER_HOUR, Level::Info, 100), // 2026-03-08 23:00: outside
        hour(MARCH_10 - MS_PER_DAY, Level::Info, 1),                 // 2026-03-09 00:00
        hour(MARCH_10 - MS_PER_HOUR, Level::Error, 2),               // 2026-03-09 23:00
        hour(MARCH_10, Level::Warn, 3),                              // 2026-03-10 00:00
        hour(MARCH_10 + 23 * MS_PER_HOUR, Level::Debug, 4),          // 2026-03-10 23:00
        hour(MARCH_10 + MS_PER_DAY, Level::Info, 100),               // 2026-03-11 00:00: outside
    ];
    let stats = request.answer(&counts);
    assert_eq!(
        serde_json::to_value(&stats.stats).expect("valid"),
        json!([
            {"date": "2026-03-09", "debug": 0, "info": 1, "warn": 0, "error": 2, "total": 3},
            {"date": "2026-03-10", "debug": 4, "info": 0, "warn": 3, "error": 0, "total": 7},
        ])
    );
    assert_eq!(stats.totals, Counts { debug: 4, info: 1, warn: 3, error: 2, total: 10 });
}

#[test]
fn hour_buckets_cover_whole_days_zeros_and_future_hours_included() {
    let now = MARCH_10 + 5 * MS_PER_HOUR + 1;
    let request = StatsRequest::parse(Some("2026-03-09"), None, Some("hour"), now).expect("valid");
    let counts =
        [hour(MARCH_10 - MS_PER_HOUR, Level::Info, 1), hour(MARCH_10, Level::Info, 2), hour(MARCH_10, Level::Warn, 1)];
    let stats = request.answer(&counts);
    assert_eq!(stats.stats.len(), 48, "24 hours of each day, today's future hours included");
    let value = serde_json::to_value(&stats.stats).expect("valid");
    assert_eq!(
        value[0],
        json!({"date": "2026-03-09", "hour": 0, "debug": 0, "info": 0, "warn": 0, "error": 0, "total": 0})
    );
    assert_eq!(
        value[23],
        json!({"date": "2026-03-09", "hour": 23, "debug": 0, "info": 1, "warn": 0, "error": 0, "total": 1})
    );
    assert_eq!(
        value[24],
        json!({"date": "2026-03-10", "hour": 0, "debug": 0, "info": 2, "warn": 1, "error": 0, "total": 3})
    );
    assert_eq!(value[47]["hour"], 23);
    assert_eq!(serde_json::to_value(&stats.period).expect("valid")["groupBy"], "hour");
}

#[test]
fn sources_are_ordered_by_total_then_name() {
    let request = StatsRequest::parse(None, None, Some("source"), MARCH_10).expect("valid");
    let counts = [
        source("web", Level::Info, 2),
        source("api", Level::Error, 1),
        source("api", Level::Info, 1),
        source("batch", Level::Warn, 5),
        source("auth", Level::Debug, 2),
    ];
    let names: Vec<String> = request
        .answer(&counts)
        .stats
        .into_iter()
        .map(|record| record.source.clone().unwrap_or_else(|| panic!("not a source record: {record:?}")))
        .collect();
    assert_eq!(names, ["batch", "api", "auth", "web"]);
}

#[test]
fn bad_parameters_are_each_named() {
    for bad in ["2026-3-01", "2026-02-30", "+2026-03-01", "2026-03-01T00:00", "yesterday", "20260301"] {
        assert_eq!(
            refused(Some(bad), None, None),
            [(r#"["from"]"#.to_owned(), format!("Invalid date '{bad}', expected YYYY-MM-DD"))],
            "{bad}"
        );
    }
    assert_eq!(
        refused(Some("x"), Some("y"), Some("week")),
        [
            (r#"["from"]"#.to_owned(), "Invalid date 'x', expected YYYY-MM-DD".to_owned()),
            (r#"["to"]"#.to_owned(), "Invalid date 'y', expected YYYY-MM-DD".to_owned()),
            (
                r#"["groupBy"]"#.to_owned(),
                "Invalid enum value. Expected 'hour' | 'day' | 'source', received 'week'".to_owned()
            ),
        ]
    );
    assert_eq!(
        refused(Some("2026-03-02"), Some("2026-03-01"), None),
        [(r#"["from"]"#.to_owned(), "from must not be after to".to_owned())]
    );
}

#[test]
fn spans_are_capped_counting_days_inclusively() {
    let now = MARCH_10;
    // 2024 is a leap year: 2024-01-01..2024-12-31 is 366 days.
    assert!(StatsRequest::parse(Some("2024-01-01"), Some("2024-12-31"), None, now).is_ok());
    assert_eq!(
        refused(Some("2024-01-01"), Some("2025-01-01"), Some("source")),
        [(r#"["from"]"#.to_owned(), "The period must span at most 366 days".to_owned())]
    );
    // 92 days by hour: 2026-01-01..2026-04-02.
    assert!(StatsRequest::parse(Some("2026-01-01"), Some("2026-04-02"), Some("hour"), now).is_ok());
    assert_eq!(
        refused(Some("2026-01-01"), Some("2026-04-03"), Some("hour")),
        [(r#"["from"]"#.to_owned(), "The period must span at most 92 days grouped by hour".to_owned())]
    );
    assert!(StatsRequest::parse(Some("2026-01-01"), Some("2026-04-03"), Some("day"), now).is_ok());
}

#[test]
fn change_percent_rounds_to_one_decimal_in_integers() {
    assert_eq!(change_percent(0, 0), 0.0);
    assert_eq!(change_percent(7, 0), 100.0);
    assert_eq!(change_percent(10, 10), 0.0);
    assert_eq!(change_percent(0, 10), -100.0);
    assert_eq!(change_percent(2101, 2000), 5.1, "5.05 rounds away from zero");
    assert_eq!(change_percent(1899, 2000), -5.1);
    assert_eq!(change_percent(1, 3), -66.7);
    assert_eq!(change_percent(4, 3), 33.3);
}

#[test]
fn trend_edges_are_strict() {
    assert_eq!(trend(change_percent(105, 100)), "stable");
    assert_eq!(trend(change_percent(95, 100)), "stable");
    assert_eq!(trend(change_percent(1051, 1000)), "up");
    assert_eq!(trend(change_percent(949, 1000)), "down");
    // 5.04 % rounds to 5.0: stable.
    assert_eq!(trend(change_percent(10504, 10000)), "stable");
}

#[test]
fn summary_compares_today_with_yesterday() {
    let now = MARCH_10 + 10 * MS_PER_HOUR;
    assert_eq!(summary_range_ms(now), (MARCH_10 - MS_PER_DAY, MARCH_10 + MS_PER_DAY));
    let counts = [
        hour(MARCH_10 - 2 * MS_PER_DAY, Level::Info, 50), // two days ago: ignored
        hour(MARCH_10 - MS_PER_DAY, Level::Info, 10),
        hour(MARCH_10 + MS_PER_HOUR, Level::Error, 3),
        hour(MARCH_10 + 23 * MS_PER_HOUR, Level::Info, 8),
    ];
    assert_eq!(
        serde_json::to_value(summary(now, &counts)).expect("valid"),
        json!({
            "today": {"debug": 0, "info": 8, "warn": 0, "error": 3, "total": 11},
            "comparison": {"yesterdayTotal": 10, "changePercent": 10, "trend": "up"}
        })
    );
    let first_day = summary(now, &[hour(MARCH_10, Level::Warn, 1)]);
    assert_eq!(
        serde_json::to_value(&first_day.comparison).expect("valid"),
        json!({"yesterdayTotal": 0, "changePercent": 100, "trend": "up"})
    );
    let quiet = summary(now, &[]);
    assert_eq!(
        serde_json::to_value(&quiet.comparison).expect("valid"),
        json!({"yesterdayTotal": 0, "changePercent": 0, "trend": "stable"})
    );
    let fractional = summary(now, &[hour(MARCH_10 - MS_PER_DAY, Level::Info, 3), hour(MARCH_10, Level::Info, 1)]);
    assert_eq!(serde_json::to_value(&fractional.comparison).expect("valid")["changePercent"], json!(-66.7));
}

#[test]
fn day_buckets_from_daily_counters_fill_the_same_records() {
    let request = StatsRequest::parse(Some("2026-03-09"), Some("2026-03-10"), Some("day"), MARCH_10).expect("valid");
    let from_days = request.answer(&[
        LevelCount { bucket: Bucket::Day(MARCH_10 - MS_PER_DAY), level: Level::Info, count: 3 },
        LevelCount { bucket: Bucket::Day(MARCH_10), level: Level::Error, count: 2 },
        LevelCount { bucket: Bucket::Day(MARCH_10 + MS_PER_DAY), level: Level::Error, count: 9 },
    ]);
    let from_hours = request.answer(&[
        hour(MARCH_10 - MS_PER_DAY + 5 * MS_PER_HOUR, Level::Info, 3),
        hour(MARCH_10 + 7 * MS_PER_HOUR, Level::Error, 2),
    ]);
    assert_eq!(from_days, from_hours);
    // Grouped by hour, day buckets cannot be placed and are not counted.
    let hours = StatsRequest::parse(Some("2026-03-10"), Some("2026-03-10"), Some("hour"), MARCH_10).expect("valid");
    let stats = hours.answer(&[LevelCount { bucket: Bucket::Day(MARCH_10), level: Level::Info, count: 1 }]);
    assert_eq!(stats.totals.total, 0);
    // The summary takes day buckets too.
    let summed = summary(
        MARCH_10 + MS_PER_HOUR,
        &[
            LevelCount { bucket: Bucket::Day(MARCH_10 - MS_PER_DAY), level: Level::Info, count: 20 },
            LevelCount { bucket: Bucket::Day(MARCH_10), level: Level::Warn, count: 21 },
        ],
    );
    assert_eq!(
        serde_json::to_value(&summed.comparison).expect("valid"),
        json!({"yesterdayTotal": 20, "changePercent": 5, "trend": "stable"})
    );
}
