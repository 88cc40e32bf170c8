//! The PostgreSQL store's counters in slots (migration `counter_slots`), on a real server:
//! counts, usage and retention answer the sums of the slots whatever way a counter is spread
//! over them, and a quota stays exact when concurrent transactions of other slots count at once.

use std::collections::BTreeMap;

use diesel_async::{AsyncConnection, AsyncPgConnection, SimpleAsyncConnection};
use sluice_model::calendar::{MS_PER_DAY, month_start_ms};
use sluice_model::{Level, Limits, Log, Plan, Workspace};
use sluice_query::stats::{Bucket, CountBy, RollupFilter};
use sluice_store::conformance::log;
use sluice_store::prelude::*;
use sluice_store::{CountsRead, StoreError};
use sluice_store_pg::testing::TestDatabase;
use sluice_store_pg::{PgOptions, PgStore};

/// A UTC midnight.
const DAY0: i64 = 1_700_006_400_000;
const HOUR: i64 = 3_600_000;

/// 120 logs over six hours of two days, three sources, two levels.
fn logs() -> Vec<Log> {
    (0..120)
        .map(|n| {
            let mut log = log(&format!("entry {n}"), DAY0 - 3 * HOUR + (n % 6) * HOUR + n);
            log.entry.source = ["api", "web", "worker"][n as usize % 3].into();
            log.entry.level = if n % 4 == 0 { Level::Error } else { Level::Info };
            log
        })
        .collect()
}

/// The store's counts by `by` over the two days, as a map.
async fn counts(store: &PgStore, workspace: &Workspace, by: CountBy) -> BTreeMap<(String, Level), u64> {
    let rows = store
        .level_counts(
            workspace.id,
            CountsRead { from_ms: DAY0 - MS_PER_DAY, to_ms: DAY0 + MS_PER_DAY, filter: &RollupFilter::default(), by },
        )
        .await
        .expect("counts");
    rows.into_iter()
        .filter(|row| row.count > 0)
        .map(|row| {
            let bucket = match row.bucket {
                Bucket::Hour(at) | Bucket::Day(at) => at.to_string(),
                Bucket::Source(source) => source,
            };
            ((bucket, row.level), row.count)
        })
        .collect()
}

/// The same counts worked out from `logs`.
fn expected(logs: &[Log], by: CountBy) -> BTreeMap<(String, Level), u64> {
    let mut counts = BTreeMap::new();
    for log in logs {
        let at = log.entry.timestamp;
        let bucket = match by {
            CountBy::Hour => (at - at.rem_euclid(HOUR)).to_string(),
            CountBy::Day => (at - at.rem_euclid(MS_PER_DAY)).to_string(),
            CountBy::Source => log.entry.source.to_string(),
        };
        *counts.entry((bucket, log.entry.level)).or_insert(0) += 1;
    }
    counts
}

async fn check(store: &PgStore, workspace: &Workspace, logs: &[Log], when: &str) {
    for by in [CountBy::Hour, CountBy::Day, CountBy::Source] {
        assert_eq!(counts(store, workspace, by).await, expected(logs, by), "{when}, {by:?}");
    }
}

/// Spreads every counter over four slots, sums unchanged: it is folded into one sum, then
/// written as the sum less one in slot 0 (0 where it was 1), one in slot 7, two in slot 5 and
/// minus two in slot 6.
const SPREAD: &str = "
    CREATE TEMPORARY TABLE h AS SELECT workspace_id, hour, source, environment, dataset, level, sum(count)::int8 AS n
        FROM log_rollups GROUP BY 1, 2, 3, 4, 5, 6;
    DELETE FROM log_rollups;
    INSERT INTO log_rollups SELECT workspace_id, hour, source, environment, dataset, level, n - 1, 0 FROM h;
    INSERT INTO log_rollups SELECT workspace_id, hour, source, environment, dataset, level, 1, 7 FROM h;
    INSERT INTO log_rollups SELECT workspace_id, hour, source, environment, dataset, level, 2, 5 FROM h;
    INSERT INTO log_rollups SELECT workspace_id, hour, source, environment, dataset, level, -2, 6 FROM h;
    CREATE TEMPORARY TABLE d AS SELECT workspace_id, day, source, environment, dataset, level, sum(count)::int8 AS n
        FROM log_rollups_daily GROUP BY 1, 2, 3, 4, 5, 6;
    DELETE FROM log_rollups_daily;
    INSERT INTO log_rollups_daily SELECT workspace_id, day, source, environment, dataset, level, n - 1, 0 FROM d;
    INSERT INTO log_rollups_daily SELECT workspace_id, day, source, environment, dataset, level, 1, 7 FROM d;
    CREATE TEMPORARY TABLE s AS SELECT workspace_id, day, source, level, sum(count)::int8 AS n
        FROM log_rollups_daily_sources GROUP BY 1, 2, 3, 4;
    DELETE FROM log_rollups_daily_sources;
    INSERT INTO log_rollups_daily_sources SELECT workspace_id, day, source, level, n - 1, 0 FROM s;
    INSERT INTO log_rollups_daily_sources SELECT workspace_id, day, source, level, 1, 7 FROM s;
    CREATE TEMPORARY TABLE u AS SELECT workspace_id, month, sum(logs)::int8 AS n FROM usage_monthly GROUP BY 1, 2;
    DELETE FROM usage_monthly;
    INSERT INTO usage_monthly SELECT workspace_id, month, n - 3, 0 FROM u;
    INSERT INTO usage_monthly SELECT workspace_id, month, 3, 7 FROM u;
";

#[tokio::test]
async fn counts_usage_and_retention_read_the_sum_of_the_slots() {
    let database = TestDatabase::new("sluice_slots").await;
    let store = PgStore::connect(database.url(), &PgOptions::default()).await.expect("connect");
    let workspace = Workspace::new("w", Plan::Enterprise, DAY0);
    store.create_workspace(&workspace).await.expect("workspace");
    let mut logs = logs();
    // Concurrent inserts, which take different slots.
    for inserted in insert_all(&store, &workspace, logs.chunks(20).map(<[Log]>::to_vec).collect()).await {
        inserted.expect("insert");
    }
    check(&store, &workspace, &logs, "as inserted").await;
    // Usage counts the month a log was accepted in: this one.
    let month = month_start_ms(sluice_store::unix_now_ms());
    let before = store.monthly_usage(workspace.id, month).await.expect("usage");
    assert_eq!(before, 120);

    let mut connection = AsyncPgConnection::establish(database.url()).await.expect("connect");
    connection.batch_execute(SPREAD).await.expect("spread the counters over slots");
    check(&store, &workspace, &logs, "spread").await;
    assert_eq!(store.monthly_usage(workspace.id, month).await.expect("usage"), before);

    // Retention of the first day's logs subtracts in slot 0: every counter of those hours is
    // gone, and the rest still sum right.
    let deleted = store.delete_logs_before(workspace.id, DAY0).await.expect("retention");
    logs.retain(|log| log.entry.timestamp >= DAY0);
    assert_eq!(deleted, 60);
    check(&store, &workspace, &logs, "after retention").await;
    for table in ["log_rollups", "log_rollups_daily", "log_rollups_daily_sources"] {
        let at = if table == "log_rollups" { "hour" } else { "day" };
        let left = diesel_async::RunQueryDsl::get_result::<Left>(
            diesel::sql_query(format!("SELECT count(*) AS rows FROM {table} WHERE {at} < {DAY0}")),
            &mut connection,
        )
        .await
        .expect("count");
        assert_eq!(left.rows, 0, "{table} keeps rows of the deleted day");
    }
    // Usage is never decremented by retention.
    assert_eq!(store.monthly_usage(workspace.id, month).await.expect("usage"), before);
}

#[derive(diesel::QueryableByName)]
struct Left {
    #[diesel(sql_type = diesel::sql_types::BigInt)]
    rows: i64,
}

/// Inserts each batch in a task of its own, all at once; their answers, in order.
async fn insert_all(store: &PgStore, workspace: &Workspace, batches: Vec<Vec<Log>>) -> Vec<Result<(), StoreError>> {
    let tasks: Vec<_> = batches
        .into_iter()
        .map(|batch| {
            let (store, workspace) = (store.clone(), workspace.id);
            tokio::spawn(async move { store.insert_logs(workspace, &batch).await })
        })
        .collect();
    let mut answers = Vec::new();
    for task in tasks {
        answers.push(task.await.expect("insert task"));
    }
    answers
}

#[tokio::test]
async fn a_quota_stays_exact_under_concurrent_writers() {
    let database = TestDatabase::new("sluice_slots").await;
    let store =
        PgStore::connect(database.url(), &PgOptions { pool_size: 8, ..PgOptions::default() }).await.expect("connect");
    let mut workspace = Workspace::new("metered", Plan::Enterprise, DAY0);
    workspace.limits = Limits { logs_per_month: Some(55), ..Plan::Enterprise.limits() };
    store.create_workspace(&workspace).await.expect("workspace");
    let batches: Vec<Vec<Log>> =
        (0..10).map(|b| (0..10).map(|n| log(&format!("{b} {n}"), DAY0 + n)).collect()).collect();
    let outcomes = insert_all(&store, &workspace, batches).await;
    let accepted = outcomes.iter().filter(|outcome| outcome.is_ok()).count();
    assert!(outcomes.iter().all(|outcome| matches!(outcome, Ok(()) | Err(StoreError::QuotaExceeded))), "{outcomes:?}");
    assert_eq!(accepted, 5, "five batches of ten fit a quota of 55");
    let month = month_start_ms(sluice_store::unix_now_ms());
    assert_eq!(store.monthly_usage(workspace.id, month).await.expect("usage"), 50);
}
