//! The counters stats read (`log_rollups`, hourly; `log_rollups_daily`; and
//! `log_rollups_daily_sources`, daily without environment and dataset): the deltas insert and
//! retention transactions apply to them, and the query that sums them.

use async_trait::async_trait;
use diesel::result::Error as DieselError;
use diesel::sql_types::{Array, BigInt, Nullable, SmallInt, Text};
use diesel_async::{AsyncPgConnection, RunQueryDsl};
use sluice_model::WorkspaceId;
use sluice_query::stats::LevelCount;
use sluice_store::rollups::{
    CounterTable, CountsDialect, CountsSource, DAILY, HOURLY, RollupDeltas, Scope, level_count,
};
use sluice_store::{CountsRead, LogCounts, StoreError};
use uuid::Uuid;

use sluice_store_diesel::raw::CountRow;

use crate::PgStore;
use crate::error::from_diesel;
use crate::text;

/// The counts statement in PostgreSQL's words: `$n` parameters, typed where a NULL is bound,
/// sums as `int8`.
const COUNTS: CountsDialect = CountsDialect {
    template: "SELECT {group} AS hour, {source} AS source, level, SUM(count)::int8 AS total \
     FROM {table} WHERE workspace_id = $1 AND {at} >= $2 AND {at} < $3 \
     AND ($4::text IS NULL OR source = $4) AND {scope} \
     GROUP BY 1, 2, level",
    scope_filters: "($5::text IS NULL OR environment = $5) AND ($6::text IS NULL OR dataset = $6)",
    unscoped: "$5::text IS NULL AND $6::text IS NULL",
    no_time: "0::int8",
};

/// Adds the deltas to the three counter tables' rows of `slot` (one statement each, keys in
/// order), then, when subtracting, removes the counters whose slots sum to 0.
pub(crate) async fn apply_deltas(
    connection: &mut AsyncPgConnection,
    workspace: Uuid,
    deltas: &RollupDeltas,
    subtract: bool,
    slot: i16,
) -> Result<(), DieselError> {
    for (CounterTable { name: table, at, .. }, counts) in [(HOURLY, &deltas.hourly), (DAILY, &deltas.daily)] {
        if counts.is_empty() {
            continue;
        }
        let times: Vec<i64> = counts.keys().map(|(at, _)| *at).collect();
        let column =
            |get: fn(&Scope) -> &String| counts.keys().map(|(_, scope)| get(scope).clone()).collect::<Vec<_>>();
        let (sources, environments) = (column(|scope| &scope.source), column(|scope| &scope.environment));
        let (datasets, levels) = (column(|scope| &scope.dataset), column(|scope| &scope.level));
        let values: Vec<i64> = counts.values().copied().collect();
        diesel::sql_query(format!(
            "INSERT INTO {table} (workspace_id, slot, {at}, source, environment, dataset, level, count) \
             SELECT $1, $8, * FROM unnest($2::int8[], $3::text[], $4::text[], $5::text[], $6::text[], $7::int8[]) \
             ON CONFLICT (workspace_id, {at}, source, environment, dataset, level, slot) \
             DO UPDATE SET count = {table}.count + excluded.count"
        ))
        .bind::<diesel::sql_types::Uuid, _>(workspace)
        .bind::<Array<BigInt>, _>(&times)
        .bind::<Array<Text>, _>(&sources)
        .bind::<Array<Text>, _>(&environments)
        .bind::<Array<Text>, _>(&datasets)
        .bind::<Array<Text>, _>(&levels)
        .bind::<Array<BigInt>, _>(&values)
        .bind::<SmallInt, _>(slot)
        .execute(connection)
        .await?;
        if subtract {
            diesel::sql_query(format!(
                "DELETE FROM {table} AS r USING unnest($2::int8[], $3::text[], $4::text[], $5::text[], $6::text[]) \
                 AS k(at, source, environment, dataset, level) \
                 WHERE r.workspace_id = $1 AND r.{at} = k.at AND r.source = k.source \
                 AND r.environment = k.environment AND r.dataset = k.dataset AND r.level = k.level \
                 AND (SELECT sum(s.count) FROM {table} AS s WHERE s.workspace_id = $1 AND s.{at} = k.at \
                      AND s.source = k.source AND s.environment = k.environment AND s.dataset = k.dataset \
                      AND s.level = k.level) <= 0"
            ))
            .bind::<diesel::sql_types::Uuid, _>(workspace)
            .bind::<Array<BigInt>, _>(&times)
            .bind::<Array<Text>, _>(&sources)
            .bind::<Array<Text>, _>(&environments)
            .bind::<Array<Text>, _>(&datasets)
            .bind::<Array<Text>, _>(&levels)
            .execute(connection)
            .await?;
        }
    }
    if !deltas.daily_sources.is_empty() {
        let days: Vec<i64> = deltas.daily_sources.keys().map(|(day, _, _)| *day).collect();
        let sources: Vec<String> = deltas.daily_sources.keys().map(|(_, source, _)| source.clone()).collect();
        let levels: Vec<String> = deltas.daily_sources.keys().map(|(_, _, level)| level.clone()).collect();
        let values: Vec<i64> = deltas.daily_sources.values().copied().collect();
        diesel::sql_query(
            "INSERT INTO log_rollups_daily_sources (workspace_id, slot, day, source, level, count) \
             SELECT $1, $6, * FROM unnest($2::int8[], $3::text[], $4::text[], $5::int8[]) \
             ON CONFLICT (workspace_id, day, source, level, slot) \
             DO UPDATE SET count = log_rollups_daily_sources.count + excluded.count",
        )
        .bind::<diesel::sql_types::Uuid, _>(workspace)
        .bind::<Array<BigInt>, _>(&days)
        .bind::<Array<Text>, _>(&sources)
        .bind::<Array<Text>, _>(&levels)
        .bind::<Array<BigInt>, _>(&values)
        .bind::<SmallInt, _>(slot)
        .execute(connection)
        .await?;
        if subtract {
            diesel::sql_query(
                "DELETE FROM log_rollups_daily_sources AS r USING unnest($2::int8[], $3::text[], $4::text[]) \
                 AS k(day, source, level) \
                 WHERE r.workspace_id = $1 AND r.day = k.day AND r.source = k.source AND r.level = k.level \
                 AND (SELECT sum(s.count) FROM log_rollups_daily_sources AS s WHERE s.workspace_id = $1 \
                      AND s.day = k.day AND s.source = k.source AND s.level = k.level) <= 0",
            )
            .bind::<diesel::sql_types::Uuid, _>(workspace)
            .bind::<Array<BigInt>, _>(&days)
            .bind::<Array<Text>, _>(&sources)
            .bind::<Array<Text>, _>(&levels)
            .execute(connection)
            .await?;
        }
    }
    Ok(())
}

#[async_trait]
impl LogCounts for PgStore {
    async fn level_counts(&self, workspace: WorkspaceId, read: CountsRead<'_>) -> Result<Vec<LevelCount>, StoreError> {
        let CountsRead { from_ms, to_ms, filter, by } = read;
        self.with_deadline(async move {
            let narrow = filter.environment.is_none() && filter.dataset.is_none();
            let mut connection = self.connection().await?;
            let rows: Vec<CountRow> = diesel::sql_query(CountsSource::choose(by, from_ms, to_ms, narrow).sql(&COUNTS))
                .bind::<diesel::sql_types::Uuid, _>(*workspace.as_uuid())
                .bind::<BigInt, _>(from_ms)
                .bind::<BigInt, _>(to_ms)
                .bind::<Nullable<Text>, _>(filter.source.as_deref().map(|source| text::encode(source).into_owned()))
                .bind::<Nullable<Text>, _>(filter.environment.map(|environment| environment.as_str()))
                .bind::<Nullable<Text>, _>(filter.dataset.as_deref().map(|dataset| text::encode(dataset).into_owned()))
                .load(&mut connection)
                .await
                .map_err(from_diesel)?;
            rows.into_iter()
                .map(|row| level_count(by, row.hour, text::decode(row.source), &row.level, row.total))
                .collect()
        })
        .await
    }
}
