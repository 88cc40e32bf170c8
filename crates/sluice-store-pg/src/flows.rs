//! Flows: the counters of each flow (`flows`, `flow_steps`, `flow_scopes`), kept in the
//! transactions that insert and delete logs, and the list and timeline read from them
//! (`sluice_store::flows`; a timeline's logs from the blocks). Flow ids, names and sources are
//! stored encoded (`crate::text`), as PostgreSQL's text can hold them; ties order by their
//! bytes (`COLLATE "C"`), as SQLite orders them.

use async_trait::async_trait;
use diesel::prelude::*;
use diesel::result::Error as DieselError;
use diesel::sql_types::{Array, BigInt, Bool, Integer, Nullable, Text};
use diesel_async::{AsyncPgConnection, RunQueryDsl};
use sluice_model::{Log, WorkspaceId};
use sluice_store::blockstore::{HeadCache, Reader};
use sluice_store::flows::{
    FLOW_COLUMNS, FlowDeltas, FlowPage, FlowSummary, FlowTimeline, FlowsRead, NewFlow, missing_and_duplicate_steps,
    summaries, timeline_logs,
};
use sluice_store::{LogFlows, StoreError};
use uuid::Uuid;

use crate::PgStore;
use sluice_store_diesel::raw::{FlowRow, SourceRow, StepRow};

use crate::error::from_diesel;
use crate::source::PgBlocks;
use crate::text::{decode, encode};

/// Adds each flow's deltas to its counters, one statement a table for every flow of the
/// workspace (keys in order, so concurrent writers lock flows in one order): gained logs
/// create or grow flows; lost ones (retention) shrink them, and then their first and last
/// times are read again from the logs left, and a flow left without logs goes, unless it was
/// made by `POST /v1/flows`.
pub(crate) async fn apply_flow_deltas(
    connection: &mut AsyncPgConnection,
    heads: &HeadCache,
    workspace: Uuid,
    deltas: &FlowDeltas,
) -> Result<(), DieselError> {
    if deltas.is_empty() {
        return Ok(());
    }
    let removing = deltas.flows.values().any(|delta| delta.logs() < 0);
    let ids: Vec<&str> = deltas.flows.keys().map(String::as_str).collect();
    let level = |n: usize| deltas.flows.values().map(|delta| delta.levels[n]).collect::<Vec<i64>>();
    let firsts: Vec<i64> = deltas.flows.values().map(|delta| delta.first_ts).collect();
    let lasts: Vec<i64> = deltas.flows.values().map(|delta| delta.last_ts).collect();
    diesel::sql_query(
        "INSERT INTO flows AS f (workspace_id, flow_id, debug, info, warn, error, first_ts, last_ts, active_ts) \
         SELECT $1, u.*, u.l FROM unnest($2::text[], $3::int8[], $4::int8[], $5::int8[], $6::int8[], \
         $7::int8[], $8::int8[]) AS u(id, d, i, w, e, f, l) \
         ON CONFLICT (workspace_id, flow_id) DO UPDATE SET \
         debug = f.debug + excluded.debug, info = f.info + excluded.info, warn = f.warn + excluded.warn, \
         error = f.error + excluded.error, \
         first_ts = CASE WHEN $9 THEN f.first_ts ELSE LEAST(f.first_ts, excluded.first_ts) END, \
         last_ts = CASE WHEN $9 THEN f.last_ts ELSE GREATEST(f.last_ts, excluded.last_ts) END, \
         active_ts = CASE WHEN $9 THEN f.active_ts ELSE GREATEST(f.last_ts, excluded.last_ts) END",
    )
    .bind::<diesel::sql_types::Uuid, _>(workspace)
    .bind::<Array<Text>, _>(&ids)
    .bind::<Array<BigInt>, _>(level(0))
    .bind::<Array<BigInt>, _>(level(1))
    .bind::<Array<BigInt>, _>(level(2))
    .bind::<Array<BigInt>, _>(level(3))
    .bind::<Array<BigInt>, _>(&firsts)
    .bind::<Array<BigInt>, _>(&lasts)
    .bind::<Bool, _>(removing)
    .execute(connection)
    .await?;

    let (mut step_flows, mut steps, mut step_logs) = (Vec::new(), Vec::new(), Vec::new());
    let (mut scope_flows, mut sources, mut environments, mut scope_logs) =
        (Vec::new(), Vec::new(), Vec::new(), Vec::new());
    for (flow_id, delta) in &deltas.flows {
        for (step, count) in &delta.steps {
            step_flows.push(flow_id.as_str());
            steps.push(*step);
            step_logs.push(*count);
        }
        for ((source, environment), count) in &delta.scopes {
            scope_flows.push(flow_id.as_str());
            sources.push(source.as_str());
            environments.push(environment.as_str());
            scope_logs.push(*count);
        }
    }
    if !steps.is_empty() {
        diesel::sql_query(
            "INSERT INTO flow_steps AS s (workspace_id, flow_id, step_index, logs) \
             SELECT $1, * FROM unnest($2::text[], $3::int4[], $4::int8[]) \
             ON CONFLICT (workspace_id, flow_id, step_index) DO UPDATE SET logs = s.logs + excluded.logs",
        )
        .bind::<diesel::sql_types::Uuid, _>(workspace)
        .bind::<Array<Text>, _>(&step_flows)
        .bind::<Array<Integer>, _>(&steps)
        .bind::<Array<BigInt>, _>(&step_logs)
        .execute(connection)
        .await?;
    }
    diesel::sql_query(
        "INSERT INTO flow_scopes AS s (workspace_id, flow_id, source, environment, logs) \
         SELECT $1, * FROM unnest($2::text[], $3::text[], $4::text[], $5::int8[]) \
         ON CONFLICT (workspace_id, flow_id, source, environment) DO UPDATE SET logs = s.logs + excluded.logs",
    )
    .bind::<diesel::sql_types::Uuid, _>(workspace)
    .bind::<Array<Text>, _>(&scope_flows)
    .bind::<Array<Text>, _>(&sources)
    .bind::<Array<Text>, _>(&environments)
    .bind::<Array<BigInt>, _>(&scope_logs)
    .execute(connection)
    .await?;
    if removing {
        for table in ["flow_steps", "flow_scopes"] {
            diesel::sql_query(format!(
                "DELETE FROM {table} WHERE workspace_id = $1 AND flow_id = ANY($2) AND logs <= 0"
            ))
            .bind::<diesel::sql_types::Uuid, _>(workspace)
            .bind::<Array<Text>, _>(&ids)
            .execute(connection)
            .await?;
        }
    }
    if !steps.is_empty() {
        step_flows.dedup();
        diesel::sql_query(
            "UPDATE flows AS f SET steps = (SELECT count(*) FROM flow_steps AS s \
             WHERE s.workspace_id = $1 AND s.flow_id = f.flow_id) \
             WHERE f.workspace_id = $1 AND f.flow_id = ANY($2)",
        )
        .bind::<diesel::sql_types::Uuid, _>(workspace)
        .bind::<Array<Text>, _>(&step_flows)
        .execute(connection)
        .await?;
    }
    if removing {
        settle(connection, heads, workspace, &ids).await?;
    }
    Ok(())
}

/// After flows lost logs: their times from the logs left (read from the blocks, as this
/// transaction left them), or, with none left, the flow goes (or, made by `POST /v1/flows`,
/// is as it was made).
async fn settle(
    connection: &mut AsyncPgConnection,
    heads: &HeadCache,
    workspace: Uuid,
    ids: &[&str],
) -> Result<(), DieselError> {
    for statement in [
        "DELETE FROM flows WHERE workspace_id = $1 AND flow_id = ANY($2) \
         AND debug + info + warn + error <= 0 AND created_at IS NULL",
        "UPDATE flows SET debug = 0, info = 0, warn = 0, error = 0, steps = 0, first_ts = NULL, \
         last_ts = NULL, active_ts = created_at \
         WHERE workspace_id = $1 AND flow_id = ANY($2) AND debug + info + warn + error <= 0",
    ] {
        diesel::sql_query(statement)
            .bind::<diesel::sql_types::Uuid, _>(workspace)
            .bind::<Array<Text>, _>(ids)
            .execute(connection)
            .await?;
    }
    for id in ids {
        let logs = flow_logs(connection, heads, workspace, &decode((*id).to_owned()))
            .await
            .map_err(|error| DieselError::QueryBuilderError(error.to_string().into()))?;
        let first = logs.iter().map(|log| log.entry.timestamp).min();
        let last = logs.iter().map(|log| log.entry.timestamp).max();
        diesel::sql_query(
            "UPDATE flows SET first_ts = $3, last_ts = $4, active_ts = $4 \
             WHERE workspace_id = $1 AND flow_id = $2 AND debug + info + warn + error > 0",
        )
        .bind::<diesel::sql_types::Uuid, _>(workspace)
        .bind::<Text, _>(*id)
        .bind::<Nullable<BigInt>, _>(first)
        .bind::<Nullable<BigInt>, _>(last)
        .execute(connection)
        .await?;
    }
    Ok(())
}

/// The logs of a flow, found through its blocks' index ([`Reader::flow_logs`]).
async fn flow_logs(
    connection: &mut AsyncPgConnection,
    heads: &HeadCache,
    workspace: Uuid,
    flow_id: &str,
) -> Result<Vec<Log>, StoreError> {
    let mut source = PgBlocks { connection, workspace };
    Reader::new(&mut source, heads, WorkspaceId::from_uuid(workspace)).flow_logs(flow_id).await
}

/// The flows' summaries with their sources (by their bytes, at most [`MAX_LISTED_SOURCES`]).
async fn with_sources(
    connection: &mut AsyncPgConnection,
    workspace: Uuid,
    rows: Vec<FlowRow>,
) -> Result<Vec<FlowSummary>, DieselError> {
    let ids: Vec<&str> = rows.iter().map(|row| row.flow_id.as_str()).collect();
    let sources: Vec<SourceRow> = diesel::sql_query(
        "SELECT DISTINCT flow_id, source COLLATE \"C\" AS source FROM flow_scopes \
         WHERE workspace_id = $1 AND flow_id = ANY($2) ORDER BY flow_id, source",
    )
    .bind::<diesel::sql_types::Uuid, _>(workspace)
    .bind::<Array<Text>, _>(&ids)
    .load(connection)
    .await?;
    let sources: Vec<(String, String)> =
        sources.into_iter().map(|row| (decode(row.flow_id), decode(row.source))).collect();
    Ok(summaries(rows.into_iter().map(|row| row.columns(decode)).collect(), &sources))
}

#[async_trait]
impl LogFlows for PgStore {
    async fn create_flow(&self, workspace: WorkspaceId, flow: &NewFlow) -> Result<(), StoreError> {
        self.with_deadline(async move {
            let mut connection = self.connection().await?;
            diesel::sql_query(
                "INSERT INTO flows AS f (workspace_id, flow_id, name, created_at, active_ts) VALUES ($1, $2, $3, $4, $4) \
                 ON CONFLICT (workspace_id, flow_id) DO UPDATE SET name = excluded.name, created_at = excluded.created_at",
            )
            .bind::<diesel::sql_types::Uuid, _>(*workspace.as_uuid())
            .bind::<Text, _>(encode(&flow.flow_id))
            .bind::<Nullable<Text>, _>(flow.name.as_deref().map(encode))
            .bind::<BigInt, _>(flow.created_at)
            .execute(&mut connection)
            .await
            .map_err(from_diesel)?;
            Ok(())
        })
        .await
    }

    async fn list_flows(&self, workspace: WorkspaceId, read: FlowsRead<'_>) -> Result<FlowPage, StoreError> {
        let FlowsRead { filter, page } = read;
        self.with_deadline(async move {
            let mut connection = self.connection().await?;
            let workspace = *workspace.as_uuid();
            let rows: Vec<FlowRow> = diesel::sql_query(format!(
                "SELECT {FLOW_COLUMNS} FROM flows WHERE workspace_id = $1 \
                 AND active_ts BETWEEN $2 AND $3 AND (NOT $4 OR error > 0) \
                 AND ($5::text IS NULL OR EXISTS (SELECT 1 FROM flow_scopes AS s WHERE s.workspace_id = $1 \
                      AND s.flow_id = flows.flow_id AND s.source = $5)) \
                 AND ($6::text IS NULL OR EXISTS (SELECT 1 FROM flow_scopes AS s WHERE s.workspace_id = $1 \
                      AND s.flow_id = flows.flow_id AND s.environment = $6)) \
                 ORDER BY active_ts DESC, flow_id COLLATE \"C\" DESC LIMIT $7 OFFSET $8"
            ))
            .bind::<diesel::sql_types::Uuid, _>(workspace)
            .bind::<BigInt, _>(filter.from.unwrap_or(i64::MIN))
            .bind::<BigInt, _>(filter.to.unwrap_or(i64::MAX))
            .bind::<Bool, _>(filter.has_errors)
            .bind::<Nullable<Text>, _>(filter.source.as_deref().map(|source| encode(source).into_owned()))
            .bind::<Nullable<Text>, _>(filter.environment.map(|environment| environment.as_str()))
            .bind::<BigInt, _>(i64::from(page.limit) + 1)
            .bind::<BigInt, _>(i64::try_from(page.offset).unwrap_or(i64::MAX))
            .load(&mut connection)
            .await
            .map_err(from_diesel)?;
            let has_more = rows.len() > page.limit as usize;
            let rows: Vec<FlowRow> = rows.into_iter().take(page.limit as usize).collect();
            let flows = with_sources(&mut connection, workspace, rows).await.map_err(from_diesel)?;
            Ok(FlowPage { flows, has_more })
        })
        .await
    }

    async fn flow_timeline(&self, workspace: WorkspaceId, flow_id: &str) -> Result<Option<FlowTimeline>, StoreError> {
        let stored_id = encode(flow_id).into_owned();
        let flow_id = flow_id.to_owned();
        let heads = &self.heads;
        self.with_deadline(async move {
            let mut connection = self.connection().await?;
            let workspace = *workspace.as_uuid();
            let read = (*connection)
                .build_transaction()
                .repeatable_read()
                .read_only()
                .run::<_, DieselError, _>(async move |connection: &mut AsyncPgConnection| {
                    let Some(row) = diesel::sql_query(format!(
                        "SELECT {FLOW_COLUMNS} FROM flows WHERE workspace_id = $1 AND flow_id = $2"
                    ))
                    .bind::<diesel::sql_types::Uuid, _>(workspace)
                    .bind::<Text, _>(&stored_id)
                    .get_result::<FlowRow>(connection)
                    .await
                    .optional()?
                    else {
                        return Ok(None);
                    };
                    let has_logs = row.first_ts.is_some();
                    let summary = with_sources(connection, workspace, vec![row]).await?.pop();
                    let steps: Vec<StepRow> = diesel::sql_query(
                        "SELECT step_index, logs FROM flow_steps WHERE workspace_id = $1 AND flow_id = $2 \
                         ORDER BY step_index",
                    )
                    .bind::<diesel::sql_types::Uuid, _>(workspace)
                    .bind::<Text, _>(&stored_id)
                    .load(connection)
                    .await?;
                    let steps: Vec<(i32, i64)> = steps.into_iter().map(|step| (step.step_index, step.logs)).collect();
                    let logs = if has_logs {
                        flow_logs(connection, heads, workspace, &flow_id)
                            .await
                            .map_err(|error| DieselError::QueryBuilderError(error.to_string().into()))?
                    } else {
                        Vec::new()
                    };
                    Ok(summary.map(|summary| (summary, steps, logs)))
                })
                .await
                .map_err(from_diesel)?;
            let Some((summary, steps, logs)) = read else { return Ok(None) };
            let (missing_steps, duplicate_steps) = missing_and_duplicate_steps(&steps);
            let (logs, truncated) = timeline_logs(logs);
            Ok(Some(FlowTimeline { summary, missing_steps, duplicate_steps, logs, truncated }))
        })
        .await
    }
}
