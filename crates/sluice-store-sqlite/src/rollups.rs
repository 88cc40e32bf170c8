//! The counters of logs per hour and per day (rollups): kept in the transactions that insert
//! and delete logs, and summed for `level_counts` without reading the logs.

use async_trait::async_trait;
use diesel::prelude::*;
use diesel::result::Error as DieselError;
use diesel::sql_types::{BigInt, Binary, Nullable, Text};
use sluice_model::WorkspaceId;
use sluice_query::stats::LevelCount;
use sluice_store::rollups::{Counter, CounterTable, CountsDialect, CountsSource, RollupDeltas, level_count};
use sluice_store::{CountsRead, LogCounts, StoreError};

use sluice_store_diesel::raw::CountRow;

use crate::connection::SqliteStore;
use crate::error::from_diesel;

/// Adds every count of `deltas` (negative on delete) to the workspace's counter of its table
/// (hourly, daily, daily without environment and dataset), removing a counter that reaches 0.
pub(crate) fn apply_rollup_deltas(
    connection: &mut SqliteConnection,
    workspace: &WorkspaceId,
    deltas: &RollupDeltas,
) -> Result<(), DieselError> {
    for (counter, delta) in deltas.counters() {
        add_to_counter(connection, workspace.as_bytes(), &counter, delta)?;
    }
    Ok(())
}

/// Adds `delta` to one counter, removing it when a negative `delta` takes it to 0.
fn add_to_counter(
    connection: &mut SqliteConnection,
    workspace: &[u8],
    counter: &Counter<'_>,
    delta: i64,
) -> Result<(), DieselError> {
    let CounterTable { name: table, at, scoped } = counter.table;
    // Numbered parameters: every statement binds the same values; a table without
    // environment and dataset leaves ?4 and ?5 unused.
    let (columns, values) = if scoped {
        (format!("workspace_id, {at}, source, environment, dataset, level"), "?1, ?2, ?3, ?4, ?5, ?6")
    } else {
        (format!("workspace_id, {at}, source, level"), "?1, ?2, ?3, ?6")
    };
    let scope = if scoped { "AND environment = ?4 AND dataset = ?5" } else { "" };
    diesel::sql_query(format!(
        "INSERT INTO {table} ({columns}, count) VALUES ({values}, ?7) \
         ON CONFLICT ({columns}) DO UPDATE SET count = count + excluded.count"
    ))
    .bind::<Binary, _>(workspace)
    .bind::<BigInt, _>(counter.start)
    .bind::<Text, _>(counter.source)
    .bind::<Text, _>(counter.environment)
    .bind::<Text, _>(counter.dataset)
    .bind::<Text, _>(counter.level)
    .bind::<BigInt, _>(delta)
    .execute(connection)?;
    if delta < 0 {
        diesel::sql_query(format!(
            "DELETE FROM {table} WHERE workspace_id = ?1 AND {at} = ?2 AND source = ?3 {scope} \
             AND level = ?6 AND count <= 0"
        ))
        .bind::<Binary, _>(workspace)
        .bind::<BigInt, _>(counter.start)
        .bind::<Text, _>(counter.source)
        .bind::<Text, _>(counter.environment)
        .bind::<Text, _>(counter.dataset)
        .bind::<Text, _>(counter.level)
        .execute(connection)?;
    }
    Ok(())
}

/// The counts statement in SQLite's words: numbered `?n` parameters, so every statement binds
/// the same values.
const COUNTS: CountsDialect = CountsDialect {
    template: "SELECT {group} AS hour, {source} AS source, level, SUM(count) AS total \
     FROM {table} WHERE workspace_id = ?1 AND {at} >= ?2 AND {at} < ?3 \
     AND (?4 IS NULL OR source = ?4) AND {scope} \
     GROUP BY 1, 2, level",
    scope_filters: "(?5 IS NULL OR environment = ?5) AND (?6 IS NULL OR dataset = ?6)",
    unscoped: "?5 IS NULL AND ?6 IS NULL",
    no_time: "0",
};

#[async_trait]
impl LogCounts for SqliteStore {
    async fn level_counts(&self, workspace: WorkspaceId, read: CountsRead<'_>) -> Result<Vec<LevelCount>, StoreError> {
        let CountsRead { from_ms, to_ms, filter, by } = read;
        let filter = filter.clone();
        self.with_connection(move |connection| {
            let rows: Vec<CountRow> = diesel::sql_query(
                CountsSource::choose(by, from_ms, to_ms, filter.environment.is_none() && filter.dataset.is_none())
                    .sql(&COUNTS),
            )
            .bind::<Binary, _>(workspace.as_bytes().to_vec())
            .bind::<BigInt, _>(from_ms)
            .bind::<BigInt, _>(to_ms)
            .bind::<Nullable<Text>, _>(filter.source)
            .bind::<Nullable<Text>, _>(filter.environment.map(|environment| environment.as_str()))
            .bind::<Nullable<Text>, _>(filter.dataset)
            .load(connection)
            .map_err(from_diesel)?;
            rows.into_iter().map(|row| level_count(by, row.hour, row.source, &row.level, row.total)).collect()
        })
        .await
    }
}

#[cfg(test)]
mod tests {
    use diesel::sql_types::{BigInt, Binary, Nullable, Text};
    use diesel_migrations::MigrationHarness;
    use sluice_model::calendar::{MS_PER_DAY, MS_PER_HOUR};
    use sluice_query::stats::CountBy;

    use super::*;
    use crate::connection::MIGRATIONS;

    #[derive(QueryableByName)]
    struct PlanStep {
        #[diesel(sql_type = Text)]
        detail: String,
    }

    fn migrated() -> SqliteConnection {
        let mut connection = SqliteConnection::establish(":memory:").expect("a database");
        connection.run_pending_migrations(MIGRATIONS).expect("migrations");
        connection
    }

    /// Counts read a range of one counter table's primary key, never the logs: the daily
    /// counters for whole days (without environment and dataset when neither is filtered on),
    /// the hourly ones otherwise.
    #[test]
    fn counts_read_a_range_of_rollups() {
        let mut connection = migrated();
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
            let steps: Vec<String> = diesel::sql_query(format!(
                "EXPLAIN QUERY PLAN {}",
                CountsSource::choose(by, from, to, narrow).sql(&COUNTS)
            ))
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
}
