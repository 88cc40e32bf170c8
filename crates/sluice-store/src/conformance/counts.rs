//! Conformance: level counts from the rollups (by hour, day and source, with filters), and
//! rollups equal to the rows after random ingests and deletes.

use super::*;
use crate::CountsRead;

fn sorted(mut counts: Vec<LevelCount>) -> Vec<(Bucket, Level, u64)> {
    counts.sort_by(|a, b| (&a.bucket, a.level).cmp(&(&b.bucket, b.level)));
    counts.into_iter().filter(|count| count.count > 0).map(|count| (count.bucket, count.level, count.count)).collect()
}

/// Counts by hour (hour edges exact, the end exclusive) and by source, with each filter.
pub async fn level_counts_group_by_hour_and_source_with_filters(store: &dyn Store) {
    let workspace = new_workspace(store, "w").await;
    let hour = hour_start(T0);
    let at = |message: &str, timestamp: i64, level: Level, source: &str| {
        let mut entry = log(message, timestamp);
        entry.entry.level = level;
        entry.entry.source = source.into();
        entry
    };
    let mut staging = at("s", hour + 10, Level::Warn, "api");
    staging.entry.environment = Environment::Staging;
    let mut audit = at("d", hour + 20, Level::Warn, "api");
    audit.entry.dataset = "audit".into();
    let logs = vec![
        at("before", hour - 1, Level::Info, "api"),
        at("first ms", hour, Level::Info, "api"),
        at("last ms", hour + MS_PER_HOUR - 1, Level::Error, "web"),
        at("next hour", hour + MS_PER_HOUR, Level::Info, "web"),
        at("end", hour + 2 * MS_PER_HOUR, Level::Debug, "web"),
        staging,
        audit,
    ];
    store.insert_logs(workspace, &logs).await.expect("insert");
    let counts = |filter: RollupFilter, by: CountBy| async move {
        sorted(
            store
                .level_counts(
                    workspace,
                    CountsRead { from_ms: hour, to_ms: hour + 2 * MS_PER_HOUR, filter: &filter, by },
                )
                .await
                .expect("counts"),
        )
    };
    assert_eq!(
        counts(RollupFilter::default(), CountBy::Hour).await,
        [
            (Bucket::Hour(hour), Level::Info, 1),
            (Bucket::Hour(hour), Level::Warn, 2),
            (Bucket::Hour(hour), Level::Error, 1),
            (Bucket::Hour(hour + MS_PER_HOUR), Level::Info, 1),
        ]
    );
    assert_eq!(
        counts(RollupFilter::default(), CountBy::Source).await,
        [
            (Bucket::Source("api".into()), Level::Info, 1),
            (Bucket::Source("api".into()), Level::Warn, 2),
            (Bucket::Source("web".into()), Level::Info, 1),
            (Bucket::Source("web".into()), Level::Error, 1),
        ]
    );
    let web = RollupFilter { source: Some("web".into()), ..RollupFilter::default() };
    assert_eq!(
        counts(web, CountBy::Hour).await,
        [(Bucket::Hour(hour), Level::Error, 1), (Bucket::Hour(hour + MS_PER_HOUR), Level::Info, 1)]
    );
    let staging = RollupFilter { environment: Some(Environment::Staging), ..RollupFilter::default() };
    assert_eq!(counts(staging, CountBy::Source).await, [(Bucket::Source("api".into()), Level::Warn, 1)]);
    let audit = RollupFilter { dataset: Some("audit".into()), ..RollupFilter::default() };
    assert_eq!(counts(audit, CountBy::Hour).await, [(Bucket::Hour(hour), Level::Warn, 1)]);

    // By day, over whole days and over a range of hours: the same day buckets.
    let day = day_start_ms(hour);
    let by_day = |from: i64, to: i64| async move {
        sorted(
            store
                .level_counts(
                    workspace,
                    CountsRead { from_ms: from, to_ms: to, filter: &RollupFilter::default(), by: CountBy::Day },
                )
                .await
                .expect("counts"),
        )
    };
    let whole = by_day(day - MS_PER_DAY, day + 2 * MS_PER_DAY).await;
    let mut expected = vec![];
    for (timestamp, level) in [(hour - 1, Level::Info), (hour, Level::Info), (hour + MS_PER_HOUR - 1, Level::Error)]
        .into_iter()
        .chain([(hour + MS_PER_HOUR, Level::Info), (hour + 2 * MS_PER_HOUR, Level::Debug)])
        .chain([(hour + 10, Level::Warn), (hour + 20, Level::Warn)])
    {
        expected.push((Bucket::Day(day_start_ms(timestamp)), level));
    }
    let mut tally: std::collections::BTreeMap<(Bucket, Level), u64> = std::collections::BTreeMap::new();
    for key in expected {
        *tally.entry(key).or_default() += 1;
    }
    let tally: Vec<(Bucket, Level, u64)> =
        tally.into_iter().map(|((bucket, level), count)| (bucket, level, count)).collect();
    assert_eq!(whole, tally);
    let hours_only = by_day(hour, hour + MS_PER_HOUR).await;
    assert_eq!(
        hours_only,
        [(Bucket::Day(day), Level::Info, 1), (Bucket::Day(day), Level::Warn, 2), (Bucket::Day(day), Level::Error, 1)]
    );
}

/// Counts never include another workspace's logs.
pub async fn level_counts_are_scoped_to_the_workspace(store: &dyn Store) {
    let mine = new_workspace(store, "mine").await;
    let theirs = new_workspace(store, "theirs").await;
    store.insert_logs(theirs, &[log("x", T0), log("y", T0)]).await.expect("insert");
    store.insert_logs(mine, &[log("z", T0)]).await.expect("insert");
    let hour = hour_start(T0);
    for by in [CountBy::Hour, CountBy::Source] {
        let counts = store
            .level_counts(
                mine,
                CountsRead { from_ms: hour, to_ms: hour + MS_PER_HOUR, filter: &RollupFilter::default(), by },
            )
            .await
            .expect("counts");
        assert_eq!(counts.iter().map(|count| count.count).sum::<u64>(), 1, "{by:?}");
    }
}

/// Random batches over a few hours, sources, environments, datasets and levels, and random
/// retention cutoffs: after every step the counters equal a count of the surviving rows,
/// per hour and per source.
pub async fn rollups_equal_the_rows_after_random_ingests_and_deletes(store: &dyn Store) {
    for seed in [1_u64, 7, 42, 1234] {
        let workspace = new_workspace(store, "w").await;
        let mut random = Random(seed.wrapping_mul(0x9E37_79B9_7F4A_7C15) | 1);
        let mut alive: Vec<Log> = Vec::new();
        // Eight hours across a UTC midnight (T0 is 22:13 UTC).
        let start = hour_start(T0) - 2 * MS_PER_HOUR;
        for step in 0..12 {
            if step % 4 == 3 {
                let cutoff = start + random.below(8 * MS_PER_HOUR as u64) as i64;
                let deleted = store.delete_logs_before(workspace, cutoff).await.expect("delete");
                let before = alive.len();
                alive.retain(|log| log.entry.timestamp >= cutoff);
                assert_eq!(deleted as usize, before - alive.len(), "seed {seed} step {step}");
            } else {
                let batch: Vec<Log> = (0..1 + random.below(60))
                    .map(|_| {
                        let mut entry = log("r", start + random.below(8 * MS_PER_HOUR as u64) as i64);
                        entry.entry.level = Level::ALL[random.below(4) as usize];
                        entry.entry.source = ["api", "web", "db"][random.below(3) as usize].into();
                        entry.entry.environment = Environment::ALL[random.below(3) as usize];
                        entry.entry.dataset = ["default", "audit"][random.below(2) as usize].into();
                        entry
                    })
                    .collect();
                store.insert_logs(workspace, &batch).await.expect("insert");
                alive.extend(batch);
            }
            let mut by_hour = std::collections::BTreeMap::new();
            let mut by_source = std::collections::BTreeMap::new();
            for log in &alive {
                *by_hour.entry((Bucket::Hour(hour_start(log.entry.timestamp)), log.entry.level)).or_insert(0) += 1;
                *by_source.entry((Bucket::Source(log.entry.source.to_string()), log.entry.level)).or_insert(0) += 1;
            }
            let range = (start - MS_PER_HOUR, start + 9 * MS_PER_HOUR);
            for (by, expected) in [(CountBy::Hour, by_hour), (CountBy::Source, by_source)] {
                let counts = store
                    .level_counts(
                        workspace,
                        CountsRead { from_ms: range.0, to_ms: range.1, filter: &RollupFilter::default(), by },
                    )
                    .await
                    .expect("counts");
                let expected: Vec<(Bucket, Level, u64)> =
                    expected.into_iter().map(|((bucket, level), count)| (bucket, level, count)).collect();
                assert_eq!(sorted(counts), expected, "seed {seed} step {step} {by:?}");
            }
            // Whole UTC days, which a store may answer from coarser counters: unfiltered, and
            // filtered on an environment.
            let days = (day_start_ms(start - MS_PER_HOUR), day_start_ms(start + 9 * MS_PER_HOUR) + MS_PER_DAY);
            let staging = RollupFilter { environment: Some(Environment::Staging), ..RollupFilter::default() };
            for (filter, by) in [
                (RollupFilter::default(), CountBy::Day),
                (RollupFilter::default(), CountBy::Source),
                (staging.clone(), CountBy::Day),
                (staging.clone(), CountBy::Source),
            ] {
                let mut expected = std::collections::BTreeMap::new();
                for log in
                    alive.iter().filter(|log| filter.environment.is_none_or(|wanted| log.entry.environment == wanted))
                {
                    let bucket = match by {
                        CountBy::Day => Bucket::Day(day_start_ms(log.entry.timestamp)),
                        _ => Bucket::Source(log.entry.source.to_string()),
                    };
                    *expected.entry((bucket, log.entry.level)).or_insert(0) += 1;
                }
                let counts = store
                    .level_counts(workspace, CountsRead { from_ms: days.0, to_ms: days.1, filter: &filter, by })
                    .await
                    .expect("counts");
                let expected: Vec<(Bucket, Level, u64)> =
                    expected.into_iter().map(|((bucket, level), count)| (bucket, level, count)).collect();
                assert_eq!(sorted(counts), expected, "seed {seed} step {step} {by:?} {filter:?}");
            }
        }
    }
}
