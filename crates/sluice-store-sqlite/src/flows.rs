//! Flows: the counters of each flow (`flows`, `flow_steps`, `flow_scopes`), kept in the
//! transactions that insert and delete logs, and the list and timeline read from them
//! (`sluice_store::flows`).

use async_trait::async_trait;
use diesel::prelude::*;
use diesel::result::Error as DieselError;
use diesel::sql_types::{BigInt, Binary, Integer, Nullable, Text};
use sluice_model::{Log, WorkspaceId};
use sluice_store::blockstore::{HeadCache, Reader, now};
use sluice_store::flows::{
    FLOW_COLUMNS, FlowDeltas, FlowPage, FlowSummary, FlowTimeline, FlowsRead, NewFlow, missing_and_duplicate_steps,
    summaries, timeline_logs,
};
use sluice_store::{LogFlows, StoreError};

use sluice_store_diesel::raw::{FlowRow, SourceRow, StepRow};

use crate::blocks::SqliteBlocks;
use crate::connection::SqliteStore;
use crate::error::{Failed, from_diesel};

/// Adds each flow's deltas to its counters: gained logs create or grow the flow; lost ones
/// (retention) shrink it, and then its first and last times are read again from the logs left,
/// and a flow left without logs goes, unless it was made by `POST /v1/flows`.
pub(crate) fn apply_flow_deltas(
    connection: &mut SqliteConnection,
    heads: &HeadCache,
    workspace: &[u8],
    deltas: &FlowDeltas,
) -> Result<(), Failed> {
    for (flow_id, delta) in &deltas.flows {
        let removing = delta.logs() < 0;
        let [debug, info, warn, error] = delta.levels;
        let statement = if removing {
            "UPDATE flows SET debug = debug + ?3, info = info + ?4, warn = warn + ?5, error = error + ?6 \
             WHERE workspace_id = ?1 AND flow_id = ?2"
        } else {
            "INSERT INTO flows (workspace_id, flow_id, debug, info, warn, error, first_ts, last_ts, active_ts) \
             VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?8) \
             ON CONFLICT (workspace_id, flow_id) DO UPDATE SET \
             debug = debug + excluded.debug, info = info + excluded.info, warn = warn + excluded.warn, \
             error = error + excluded.error, first_ts = min(coalesce(first_ts, excluded.first_ts), excluded.first_ts), \
             last_ts = max(coalesce(last_ts, excluded.last_ts), excluded.last_ts), \
             active_ts = max(coalesce(last_ts, excluded.last_ts), excluded.last_ts)"
        };
        let query = diesel::sql_query(statement)
            .bind::<Binary, _>(workspace)
            .bind::<Text, _>(flow_id)
            .bind::<BigInt, _>(debug)
            .bind::<BigInt, _>(info)
            .bind::<BigInt, _>(warn)
            .bind::<BigInt, _>(error);
        if removing {
            query.execute(connection)?;
        } else {
            query.bind::<BigInt, _>(delta.first_ts).bind::<BigInt, _>(delta.last_ts).execute(connection)?;
        }
        for (step, count) in &delta.steps {
            diesel::sql_query(
                "INSERT INTO flow_steps (workspace_id, flow_id, step_index, logs) VALUES (?1, ?2, ?3, ?4) \
                 ON CONFLICT (workspace_id, flow_id, step_index) DO UPDATE SET logs = logs + excluded.logs",
            )
            .bind::<Binary, _>(workspace)
            .bind::<Text, _>(flow_id)
            .bind::<Integer, _>(*step)
            .bind::<BigInt, _>(*count)
            .execute(connection)?;
        }
        for ((source, environment), count) in &delta.scopes {
            diesel::sql_query(
                "INSERT INTO flow_scopes (workspace_id, flow_id, source, environment, logs) \
                 VALUES (?1, ?2, ?3, ?4, ?5) ON CONFLICT (workspace_id, flow_id, source, environment) \
                 DO UPDATE SET logs = logs + excluded.logs",
            )
            .bind::<Binary, _>(workspace)
            .bind::<Text, _>(flow_id)
            .bind::<Text, _>(source)
            .bind::<Text, _>(environment)
            .bind::<BigInt, _>(*count)
            .execute(connection)?;
        }
        if removing {
            for table in ["flow_steps", "flow_scopes"] {
                diesel::sql_query(format!(
                    "DELETE FROM {table} WHERE workspace_id = ?1 AND flow_id = ?2 AND logs <= 0"
                ))
                .bind::<Binary, _>(workspace)
                .bind::<Text, _>(flow_id)
                .execute(connection)?;
            }
        }
        if !delta.steps.is_empty() {
            diesel::sql_query(
                "UPDATE flows SET steps = (SELECT count(*) FROM flow_steps AS s \
                 WHERE s.workspace_id = ?1 AND s.flow_id = ?2) WHERE workspace_id = ?1 AND flow_id = ?2",
            )
            .bind::<Binary, _>(workspace)
            .bind::<Text, _>(flow_id)
            .execute(connection)?;
        }
        if removing {
            settle(connection, heads, workspace, flow_id)?;
        }
    }
    Ok(())
}

/// After a flow lost logs: its times from the logs left (read from its blocks), or, with none
/// left, the flow goes (or, made by `POST /v1/flows`, is as it was made).
fn settle(connection: &mut SqliteConnection, heads: &HeadCache, workspace: &[u8], flow_id: &str) -> Result<(), Failed> {
    for statement in [
        "DELETE FROM flows WHERE workspace_id = ?1 AND flow_id = ?2 \
         AND debug + info + warn + error <= 0 AND created_at IS NULL",
        "UPDATE flows SET debug = 0, info = 0, warn = 0, error = 0, steps = 0, first_ts = NULL, \
         last_ts = NULL, active_ts = created_at \
         WHERE workspace_id = ?1 AND flow_id = ?2 AND debug + info + warn + error <= 0",
    ] {
        diesel::sql_query(statement).bind::<Binary, _>(workspace).bind::<Text, _>(flow_id).execute(connection)?;
    }
    let logs = flow_logs(connection, heads, workspace, flow_id)?;
    let first = logs.iter().map(|log| log.entry.timestamp).min();
    let last = logs.iter().map(|log| log.entry.timestamp).max();
    diesel::sql_query(
        "UPDATE flows SET first_ts = ?3, last_ts = ?4, active_ts = ?4 \
         WHERE workspace_id = ?1 AND flow_id = ?2 AND debug + info + warn + error > 0",
    )
    .bind::<Binary, _>(workspace)
    .bind::<Text, _>(flow_id)
    .bind::<Nullable<BigInt>, _>(first)
    .bind::<Nullable<BigInt>, _>(last)
    .execute(connection)?;
    Ok(())
}

/// The logs of a flow, found through its blocks' index ([`Reader::flow_logs`]).
fn flow_logs(
    connection: &mut SqliteConnection,
    heads: &HeadCache,
    workspace: &[u8],
    flow_id: &str,
) -> Result<Vec<Log>, StoreError> {
    let workspace =
        WorkspaceId::from_slice(workspace).ok_or_else(|| StoreError::Backend("not a workspace id".into()))?;
    let mut source = SqliteBlocks::new(connection, &workspace);
    now(Reader::new(&mut source, heads, workspace).flow_logs(flow_id))
}

/// The flows' summaries with their sources (alphabetical, at most [`MAX_LISTED_SOURCES`]).
fn with_sources(
    connection: &mut SqliteConnection,
    workspace: &[u8],
    rows: Vec<FlowRow>,
) -> Result<Vec<FlowSummary>, DieselError> {
    let ids: Vec<&str> = rows.iter().map(|row| row.flow_id.as_str()).collect();
    let sources: Vec<SourceRow> = diesel::sql_query(
        "SELECT DISTINCT flow_id, source FROM flow_scopes WHERE workspace_id = ?1 \
         AND flow_id IN (SELECT value FROM json_each(?2)) ORDER BY flow_id, source",
    )
    .bind::<Binary, _>(workspace)
    .bind::<Text, _>(serde_json::to_string(&ids).unwrap_or_else(|_| "[]".to_owned()))
    .load(connection)?;
    let sources: Vec<(String, String)> = sources.into_iter().map(|row| (row.flow_id, row.source)).collect();
    Ok(summaries(rows.into_iter().map(|row| row.columns(|text| text)).collect(), &sources))
}

#[async_trait]
impl LogFlows for SqliteStore {
    async fn create_flow(&self, workspace: WorkspaceId, flow: &NewFlow) -> Result<(), StoreError> {
        let (flow, write_lock) = (flow.clone(), self.write_lock.clone());
        self.with_connection(move |connection| {
            let _lock = write_lock.blocking_lock();
            diesel::sql_query(
                "INSERT INTO flows (workspace_id, flow_id, name, created_at, active_ts) VALUES (?1, ?2, ?3, ?4, ?4) \
                 ON CONFLICT (workspace_id, flow_id) DO UPDATE SET name = excluded.name, created_at = excluded.created_at",
            )
            .bind::<Binary, _>(workspace.as_bytes().as_slice())
            .bind::<Text, _>(&flow.flow_id)
            .bind::<Nullable<Text>, _>(flow.name.as_deref())
            .bind::<BigInt, _>(flow.created_at)
            .execute(connection)
            .map_err(from_diesel)?;
            Ok(())
        })
        .await
    }

    async fn list_flows(&self, workspace: WorkspaceId, read: FlowsRead<'_>) -> Result<FlowPage, StoreError> {
        let FlowsRead { filter, page } = read;
        let filter = filter.clone();
        self.with_connection(move |connection| {
            let workspace = workspace.as_bytes().as_slice();
            // Every condition is in the statement, a parameter bound NULL making it true; the
            // time range bounds the index's range.
            let rows: Vec<FlowRow> = diesel::sql_query(format!(
                "SELECT {FLOW_COLUMNS} FROM flows WHERE workspace_id = ?1 \
                 AND active_ts BETWEEN ?2 AND ?3 AND (?4 = 0 OR error > 0) \
                 AND (?5 IS NULL OR EXISTS (SELECT 1 FROM flow_scopes AS s WHERE s.workspace_id = ?1 \
                      AND s.flow_id = flows.flow_id AND s.source = ?5)) \
                 AND (?6 IS NULL OR EXISTS (SELECT 1 FROM flow_scopes AS s WHERE s.workspace_id = ?1 \
                      AND s.flow_id = flows.flow_id AND s.environment = ?6)) \
                 ORDER BY active_ts DESC, flow_id DESC LIMIT ?7 OFFSET ?8"
            ))
            .bind::<Binary, _>(workspace)
            .bind::<BigInt, _>(filter.from.unwrap_or(i64::MIN))
            .bind::<BigInt, _>(filter.to.unwrap_or(i64::MAX))
            .bind::<Integer, _>(i32::from(filter.has_errors))
            .bind::<Nullable<Text>, _>(filter.source.as_deref())
            .bind::<Nullable<Text>, _>(filter.environment.map(|environment| environment.as_str()))
            .bind::<BigInt, _>(i64::from(page.limit) + 1)
            .bind::<BigInt, _>(i64::try_from(page.offset).unwrap_or(i64::MAX))
            .load(connection)
            .map_err(from_diesel)?;
            let has_more = rows.len() > page.limit as usize;
            let rows: Vec<FlowRow> = rows.into_iter().take(page.limit as usize).collect();
            let flows = with_sources(connection, workspace, rows).map_err(from_diesel)?;
            Ok(FlowPage { flows, has_more })
        })
        .await
    }

    async fn flow_timeline(&self, workspace: WorkspaceId, flow_id: &str) -> Result<Option<FlowTimeline>, StoreError> {
        let (flow_id, heads) = (flow_id.to_owned(), self.heads.clone());
        self.with_connection(move |connection| {
            connection
                .transaction::<_, Failed, _>(|connection| {
                    let bytes = workspace.as_bytes().as_slice();
                    let Some(row) = diesel::sql_query(format!(
                        "SELECT {FLOW_COLUMNS} FROM flows WHERE workspace_id = ?1 AND flow_id = ?2"
                    ))
                    .bind::<Binary, _>(bytes)
                    .bind::<Text, _>(&flow_id)
                    .get_result::<FlowRow>(connection)
                    .optional()?
                    else {
                        return Ok(None);
                    };
                    let summary = with_sources(connection, bytes, vec![row])?.pop();
                    let steps: Vec<StepRow> = diesel::sql_query(
                        "SELECT step_index, logs FROM flow_steps WHERE workspace_id = ?1 AND flow_id = ?2 \
                         ORDER BY step_index",
                    )
                    .bind::<Binary, _>(bytes)
                    .bind::<Text, _>(&flow_id)
                    .load(connection)?;
                    let steps: Vec<(i32, i64)> = steps.into_iter().map(|step| (step.step_index, step.logs)).collect();
                    let (missing_steps, duplicate_steps) = missing_and_duplicate_steps(&steps);
                    let logs = flow_logs(connection, &heads, bytes, &flow_id)?;
                    Ok(summary.map(|summary| (summary, missing_steps, duplicate_steps, logs)))
                })
                .map_err(|Failed(error)| error)?
                .map(|(summary, missing_steps, duplicate_steps, logs)| {
                    let (logs, truncated) = timeline_logs(logs);
                    Ok(FlowTimeline { summary, missing_steps, duplicate_steps, logs, truncated })
                })
                .transpose()
        })
        .await
    }
}
