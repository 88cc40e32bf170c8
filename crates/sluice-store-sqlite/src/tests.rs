//! The query plans of the store's hand-written SQL: searches driven by the index and read by
//! `seq` range, counts read from a range of one counter table, never a walk of the logs.

use diesel::prelude::*;
use diesel::sql_types::{BigInt, Binary, Nullable, Text};
use diesel_migrations::MigrationHarness;
use sluice_model::calendar::{MS_PER_DAY, MS_PER_HOUR};
use sluice_query::stats::CountBy;

use crate::connection::MIGRATIONS;
use crate::rollups::counts_sql;
use crate::search::{CHUNK_HITS_SQL, CHUNKS_BY_RECENCY_SQL, HITS_IN_RANGE_SQL, chunk_logs_sql, register_functions};

#[derive(QueryableByName)]
struct PlanStep {
    #[diesel(sql_type = Text)]
    detail: String,
}

fn migrated() -> (tempfile::TempDir, SqliteConnection) {
    let dir = tempfile::tempdir().expect("temp dir");
    let path = dir.path().join("plan.db");
    let mut connection = SqliteConnection::establish(path.to_str().expect("utf-8")).expect("connect");
    connection.run_pending_migrations(MIGRATIONS).expect("migrations");
    (dir, connection)
}

fn plan(connection: &mut SqliteConnection, sql: &str, first: &str) -> Vec<String> {
    register_functions(connection).expect("register");
    diesel::sql_query(format!("EXPLAIN QUERY PLAN {sql}"))
        .bind::<Text, _>(first)
        .bind::<Binary, _>(vec![0_u8; 16])
        .bind::<Nullable<Text>, _>(Some("error"))
        .bind::<Nullable<Text>, _>(Some("api"))
        .bind::<Nullable<Text>, _>(None::<String>)
        .bind::<Nullable<Text>, _>(None::<String>)
        .bind::<Nullable<BigInt>, _>(Some(0_i64))
        .bind::<Nullable<BigInt>, _>(None::<i64>)
        .load::<PlanStep>(connection)
        .expect("plan")
        .into_iter()
        .map(|step| step.detail)
        .collect()
}

fn scans_logs(steps: &[String]) -> bool {
    steps.iter().any(|step| step == "SCAN logs" || step.starts_with("SCAN logs "))
}

/// The index's candidate chunks are found from its hits, each chunk by its primary key.
#[test]
fn candidate_chunks_are_driven_by_the_index() {
    let (_dir, mut connection) = migrated();
    let steps: Vec<String> = diesel::sql_query(format!("EXPLAIN QUERY PLAN {CHUNK_HITS_SQL}"))
        .bind::<Text, _>("{message} : (\"1\")")
        .bind::<Binary, _>(vec![0_u8; 16])
        .bind::<Nullable<BigInt>, _>(Some(0_i64))
        .bind::<Nullable<BigInt>, _>(None::<i64>)
        .load::<PlanStep>(&mut connection)
        .expect("plan")
        .into_iter()
        .map(|step| step.detail)
        .collect();
    assert!(steps.iter().any(|step| step.contains("VIRTUAL TABLE INDEX")), "{steps:?}");
    assert!(steps.iter().any(|step| step.starts_with("SEARCH chunk USING INTEGER PRIMARY KEY")), "{steps:?}");
}

/// A search whose needle many chunks may hold walks the workspace's chunks newest first by an
/// index (no sort), and asks the full-text index about a range of them.
#[test]
fn a_dense_search_walks_chunks_by_recency_and_asks_the_index_by_range() {
    let (_dir, mut connection) = migrated();
    let explain = |connection: &mut SqliteConnection, sql: &str| -> Vec<String> {
        diesel::sql_query(format!("EXPLAIN QUERY PLAN {sql}"))
            .load::<PlanStep>(connection)
            .expect("plan")
            .into_iter()
            .map(|step| step.detail)
            .collect()
    };
    let steps = explain(&mut connection, CHUNKS_BY_RECENCY_SQL);
    assert!(steps.iter().any(|step| step.contains("USING INDEX log_chunks_recent")), "{steps:?}");
    assert!(!steps.iter().any(|step| step.contains("TEMP B-TREE")), "{steps:?}");
    let steps = explain(&mut connection, HITS_IN_RANGE_SQL);
    assert!(steps.iter().any(|step| step.contains("VIRTUAL TABLE INDEX")), "{steps:?}");
}

/// Given chunks are read by seq range, driven by their list.
#[test]
fn search_by_chunks_reads_only_the_chunks() {
    let (_dir, mut connection) = migrated();
    let steps = plan(&mut connection, &chunk_logs_sql(), "[[1,3],[7,9]]");
    assert!(steps.iter().any(|step| step.starts_with("SCAN chunk VIRTUAL TABLE")), "{steps:?}");
    assert!(
        steps.iter().any(|step| step.starts_with("SEARCH logs USING INTEGER PRIMARY KEY (rowid>? AND rowid<?)")),
        "{steps:?}"
    );
    assert!(!scans_logs(&steps), "{steps:?}");
}

/// Counts read a range of one counter table's primary key, never the logs: the daily
/// counters for whole days (without environment and dataset when neither is filtered on),
/// the hourly ones otherwise.
#[test]
fn counts_read_a_range_of_rollups() {
    let (_dir, mut connection) = migrated();
    let day = 20_000 * MS_PER_DAY;
    let cases = [
        (CountBy::Hour, day, day + MS_PER_DAY, false, "log_rollups", "hour"),
        (CountBy::Hour, day, day + MS_PER_DAY, true, "log_rollups", "hour"),
        (CountBy::Day, day, day + MS_PER_DAY, false, "log_rollups_daily", "day"),
        (CountBy::Source, day, day + MS_PER_DAY, false, "log_rollups_daily", "day"),
        (CountBy::Day, day, day + MS_PER_DAY, true, "log_rollups_daily_sources", "day"),
        (CountBy::Source, day, day + MS_PER_DAY, true, "log_rollups_daily_sources", "day"),
        (CountBy::Day, day + MS_PER_HOUR, day + MS_PER_DAY, true, "log_rollups", "hour"),
        (CountBy::Source, day, day + MS_PER_HOUR, false, "log_rollups", "hour"),
    ];
    for (by, from, to, narrow, table, at) in cases {
        let steps: Vec<String> = diesel::sql_query(format!("EXPLAIN QUERY PLAN {}", counts_sql(by, from, to, narrow)))
            .bind::<Binary, _>(vec![0_u8; 16])
            .bind::<BigInt, _>(from)
            .bind::<BigInt, _>(to)
            .bind::<Nullable<Text>, _>(Some("api"))
            .bind::<Nullable<Text>, _>(None::<String>)
            .bind::<Nullable<Text>, _>(None::<String>)
            .load::<PlanStep>(&mut connection)
            .expect("plan")
            .into_iter()
            .map(|step| step.detail)
            .collect();
        let range = format!("SEARCH {table} USING PRIMARY KEY (workspace_id=? AND {at}>? AND {at}<?)");
        assert!(steps.iter().any(|step| step.starts_with(&range)), "{by:?}: {steps:?}");
        assert!(!steps.iter().any(|step| step.contains("logs ")), "{steps:?}");
    }
}
