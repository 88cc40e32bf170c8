//! The counters of logs per hour and per day (rollups): kept in the transactions that insert
//! and delete logs, and summed for `level_counts` without reading the logs.

use diesel::prelude::*;
use diesel::result::Error as DieselError;
use diesel::sql_types::{BigInt, Binary, Nullable, Text};
use sluice_model::WorkspaceId;
use sluice_query::stats::{Bucket, CountBy, LevelCount, MS_PER_DAY, RollupFilter, day_start_ms};
use sluice_store::StoreError;

use crate::connection::{SqliteStore, backend, from_diesel};
use crate::rows::RollupKey;

/// The counter tables: name, time column, and whether they keep environment and dataset.
const ROLLUP_TABLES: [(&str, &str, bool); 3] =
    [("log_rollups", "hour", true), ("log_rollups_daily", "day", true), ("log_rollups_daily_sources", "day", false)];

/// Adds `delta` (negative on delete) to every counter of `key` (hourly, daily, daily without
/// environment and dataset), removing a counter that reaches 0.
pub(crate) fn add_to_rollup(connection: &mut SqliteConnection, key: &RollupKey, delta: i64) -> Result<(), DieselError> {
    for (table, at, scoped) in ROLLUP_TABLES {
        let start = if at == "hour" { key.hour } else { day_start_ms(key.hour) };
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
        .bind::<Binary, _>(&key.workspace_id)
        .bind::<BigInt, _>(start)
        .bind::<Text, _>(key.source.as_str())
        .bind::<Text, _>(&key.environment)
        .bind::<Text, _>(key.dataset.as_str())
        .bind::<Text, _>(&key.level)
        .bind::<BigInt, _>(delta)
        .execute(connection)?;
        if delta < 0 {
            diesel::sql_query(format!(
                "DELETE FROM {table} WHERE workspace_id = ?1 AND {at} = ?2 AND source = ?3 {scope} \
                 AND level = ?6 AND count <= 0"
            ))
            .bind::<Binary, _>(&key.workspace_id)
            .bind::<BigInt, _>(start)
            .bind::<Text, _>(key.source.as_str())
            .bind::<Text, _>(&key.environment)
            .bind::<Text, _>(key.dataset.as_str())
            .bind::<Text, _>(&key.level)
            .execute(connection)?;
        }
    }
    Ok(())
}

/// One summed rollup counter, as `level_counts` reads it.
#[derive(QueryableByName)]
struct CountRow {
    #[diesel(sql_type = BigInt)]
    hour: i64,
    #[diesel(sql_type = Text)]
    source: String,
    #[diesel(sql_type = Text)]
    level: String,
    #[diesel(sql_type = BigInt)]
    total: i64,
}

/// The rollup query of one grouping: `{table}`/`{at}` name the hourly or daily counters,
/// `{group}` the bucket expression, `{source}` the source column or `''` and `{scope}` the
/// environment and dataset conditions. Each filter applies only when bound non-null, so one
/// statement serves every combination.
const COUNTS_SQL: &str = "SELECT {group} AS hour, {source} AS source, level, SUM(count) AS total \
     FROM {table} WHERE workspace_id = ?1 AND {at} >= ?2 AND {at} < ?3 \
     AND (?4 IS NULL OR source = ?4) AND {scope} \
     GROUP BY 1, 2, level";

/// `{scope}` for the tables that keep environment and dataset.
const SCOPE_FILTERS: &str = "(?5 IS NULL OR environment = ?5) AND (?6 IS NULL OR dataset = ?6)";

/// The midnight at or before a Unix ms, in SQL (also before 1970).
const DAY_OF_HOUR: &str = "(hour - (((hour % 86400000) + 86400000) % 86400000))";

/// The statement for `by` over `from_ms..to_ms`: whole UTC days read the daily counters (the
/// ones without environment and dataset when `narrow`, i.e. neither is filtered on), anything
/// else the hourly ones.
pub(crate) fn counts_sql(by: CountBy, from_ms: i64, to_ms: i64, narrow: bool) -> String {
    let whole_days = from_ms.rem_euclid(MS_PER_DAY) == 0 && to_ms.rem_euclid(MS_PER_DAY) == 0;
    let (table, at, scope) = match (whole_days && by != CountBy::Hour, narrow) {
        // The narrow table has neither column; both parameters are bound as NULL.
        (true, true) => ("log_rollups_daily_sources", "day", "?5 IS NULL AND ?6 IS NULL"),
        (true, false) => ("log_rollups_daily", "day", SCOPE_FILTERS),
        (false, _) => ("log_rollups", "hour", SCOPE_FILTERS),
    };
    let (group, source) = match by {
        CountBy::Hour => ("hour", "''"),
        CountBy::Day if whole_days => ("day", "''"),
        CountBy::Day => (DAY_OF_HOUR, "''"),
        CountBy::Source => ("0", "source"),
    };
    COUNTS_SQL
        .replace("{table}", table)
        .replace("{at}", at)
        .replace("{group}", group)
        .replace("{source}", source)
        .replace("{scope}", scope)
}

impl SqliteStore {
    /// What [`sluice_store::LogStore::level_counts`] answers.
    pub(crate) async fn count_levels(
        &self,
        workspace: WorkspaceId,
        from_ms: i64,
        to_ms: i64,
        filter: &RollupFilter,
        by: CountBy,
    ) -> Result<Vec<LevelCount>, StoreError> {
        let filter = filter.clone();
        self.with_connection(move |connection| {
            let rows: Vec<CountRow> = diesel::sql_query(counts_sql(
                by,
                from_ms,
                to_ms,
                filter.environment.is_none() && filter.dataset.is_none(),
            ))
            .bind::<Binary, _>(workspace.as_bytes().to_vec())
            .bind::<BigInt, _>(from_ms)
            .bind::<BigInt, _>(to_ms)
            .bind::<Nullable<Text>, _>(filter.source)
            .bind::<Nullable<Text>, _>(filter.environment.map(|environment| environment.as_str()))
            .bind::<Nullable<Text>, _>(filter.dataset)
            .load(connection)
            .map_err(from_diesel)?;
            rows.into_iter()
                .map(|row| {
                    let level = row.level.parse().map_err(|_| backend("corrupt rollup level in the database"))?;
                    let bucket = match by {
                        CountBy::Hour => Bucket::Hour(row.hour),
                        CountBy::Day => Bucket::Day(row.hour),
                        CountBy::Source => Bucket::Source(row.source),
                    };
                    Ok(LevelCount { bucket, level, count: u64::try_from(row.total).unwrap_or_default() })
                })
                .collect()
        })
        .await
    }
}
