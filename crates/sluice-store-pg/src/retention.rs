//! Retention: deleting a workspace's logs older than its cutoff, with their counters, flows
//! and chunks, and dropping the partitions every workspace's retention has passed.

use std::collections::{BTreeMap, BTreeSet};
use std::sync::PoisonError;

use async_trait::async_trait;
use diesel::prelude::*;
use diesel::result::Error as DieselError;
use diesel::sql_types::{BigInt, Text};
use diesel_async::{AsyncConnection, AsyncPgConnection, RunQueryDsl, SimpleAsyncConnection};
use sluice_model::WorkspaceId;
use sluice_store::flows::{FlowDeltas, FlowShare};
use sluice_store::rollups::{RollupDeltas, Scope};
use sluice_store::{LogRetention, StoreError, TenantStore};

use crate::PgStore;
use crate::error::from_diesel;
use crate::flows::apply_flow_deltas;
use crate::partitions::{PartitionRow, lock_partitions};
use crate::rollups::apply_deltas;
use crate::rows::Total;

/// Logs deleted per retention transaction.
const DELETE_BATCH: i64 = 5_000;

/// One log removed by retention, for the counters.
#[derive(QueryableByName)]
struct Removed {
    #[diesel(sql_type = BigInt)]
    ts: i64,
    #[diesel(sql_type = Text)]
    source: String,
    #[diesel(sql_type = Text)]
    environment: String,
    #[diesel(sql_type = Text)]
    dataset: String,
    #[diesel(sql_type = Text)]
    level: String,
    #[diesel(sql_type = diesel::sql_types::Nullable<Text>)]
    flow_id: Option<String>,
    #[diesel(sql_type = diesel::sql_types::Nullable<diesel::sql_types::Integer>)]
    step_index: Option<i32>,
}

/// The logs of a flow in a partition about to be dropped, by what its counters keep.
#[derive(QueryableByName)]
struct FlowLogs {
    #[diesel(sql_type = diesel::sql_types::Uuid)]
    workspace_id: uuid::Uuid,
    #[diesel(sql_type = Text)]
    flow_id: String,
    #[diesel(sql_type = diesel::sql_types::Nullable<diesel::sql_types::Integer>)]
    step_index: Option<i32>,
    #[diesel(sql_type = Text)]
    level: String,
    #[diesel(sql_type = Text)]
    source: String,
    #[diesel(sql_type = Text)]
    environment: String,
    #[diesel(sql_type = BigInt)]
    ts: i64,
    #[diesel(sql_type = BigInt)]
    logs: i64,
}

impl PgStore {
    /// Drops the partitions whose every log is older than `cutoff_ms`, with their counters;
    /// returns how many logs they held.
    async fn drop_partitions_before(&self, cutoff_ms: i64) -> Result<u64, StoreError> {
        self.with_deadline(async move {
            let mut connection = self.connection().await?;
            let (dropped, partitions) = (*connection)
                .transaction::<_, DieselError, _>(async move |connection: &mut AsyncPgConnection| {
                    let mut partitions = lock_partitions(connection).await?;
                    let mut dropped = 0_u64;
                    let mut dropped_before = i64::MIN;
                    let mut flows: BTreeMap<uuid::Uuid, FlowDeltas> = BTreeMap::new();
                    for range in partitions.before(cutoff_ms) {
                        let (first, end) = (range.first_ms(), range.end_ms());
                        // The hourly counters of the range are exactly its logs: every
                        // workspace's logs of those hours are in this partition.
                        let total: Vec<Total> = diesel::sql_query(
                            "SELECT SUM(count)::int8 AS total FROM log_rollups WHERE hour >= $1 AND hour < $2",
                        )
                        .bind::<BigInt, _>(first)
                        .bind::<BigInt, _>(end)
                        .load(connection)
                        .await?;
                        dropped +=
                            total.as_slice().first().and_then(|row| row.total).map_or(0, |total| total.max(0) as u64);
                        for (table, at) in [
                            ("log_rollups", "hour"),
                            ("log_rollups_daily", "day"),
                            ("log_rollups_daily_sources", "day"),
                        ] {
                            diesel::sql_query(format!("DELETE FROM {table} WHERE {at} >= $1 AND {at} < $2"))
                                .bind::<BigInt, _>(first)
                                .bind::<BigInt, _>(end)
                                .execute(connection)
                                .await?;
                        }
                        let name: Vec<PartitionRow> = diesel::sql_query(
                            "SELECT c.relname::text AS bound FROM pg_inherits i JOIN pg_class c ON c.oid = i.inhrelid \
                                 WHERE i.inhparent = 'logs'::regclass AND pg_get_expr(c.relpartbound, c.oid) = $1",
                        )
                        .bind::<Text, _>(format!(
                            "FOR VALUES FROM ('{}') TO ('{}')",
                            range.lower_sql(),
                            range.upper_sql()
                        ))
                        .load(connection)
                        .await?;
                        for table in name {
                            // What the partition's logs count in their flows, taken off below.
                            let flow_logs: Vec<FlowLogs> = diesel::sql_query(format!(
                                "SELECT workspace_id, flow_id, step_index, level, source, environment, \
                                 min(ts)::int8 AS ts, count(*)::int8 AS logs FROM \"{}\" \
                                 WHERE flow_id IS NOT NULL GROUP BY 1, 2, 3, 4, 5, 6",
                                table.bound
                            ))
                            .load(connection)
                            .await?;
                            for row in &flow_logs {
                                let share = FlowShare {
                                    flow_id: &row.flow_id,
                                    step_index: row.step_index,
                                    level: &row.level,
                                    source: &row.source,
                                    environment: &row.environment,
                                    ts: row.ts,
                                };
                                flows.entry(row.workspace_id).or_default().add(share, -row.logs);
                            }
                            connection.batch_execute(&format!("DROP TABLE \"{}\"", table.bound)).await?;
                        }
                        dropped_before = dropped_before.max(end);
                        partitions.remove(range);
                    }
                    for (workspace, flows) in &flows {
                        apply_flow_deltas(connection, *workspace, flows).await?;
                    }
                    // Chunks whose every log was in the dropped days.
                    if dropped_before > i64::MIN {
                        diesel::sql_query("DELETE FROM log_chunks WHERE max_ts < $1")
                            .bind::<BigInt, _>(dropped_before)
                            .execute(connection)
                            .await?;
                        crate::signatures::drop_orphans(connection, None).await?;
                    }
                    Ok((dropped, partitions))
                })
                .await
                .map_err(from_diesel)?;
            *self.partitions.lock().unwrap_or_else(PoisonError::into_inner) = partitions;
            Ok(dropped)
        })
        .await
    }
}

#[async_trait]
impl LogRetention for PgStore {
    async fn delete_logs_before(&self, workspace: WorkspaceId, cutoff_ms: i64) -> Result<u64, StoreError> {
        let mut deleted = 0;
        loop {
            let batch = self
                .with_deadline(async {
                    let mut connection = self.connection().await?;
                    (*connection)
                        .transaction::<_, DieselError, _>(async move |connection: &mut AsyncPgConnection| {
                            let removed: Vec<Removed> = diesel::sql_query(
                                "WITH victims AS (SELECT ts, id FROM logs WHERE workspace_id = $1 AND ts < $2 \
                             ORDER BY ts LIMIT $3) \
                             DELETE FROM logs USING victims \
                             WHERE logs.workspace_id = $1 AND logs.ts = victims.ts AND logs.id = victims.id \
                             RETURNING logs.ts, logs.source, logs.environment, logs.dataset, logs.level, \
                             logs.flow_id, logs.step_index",
                            )
                            .bind::<diesel::sql_types::Uuid, _>(*workspace.as_uuid())
                            .bind::<BigInt, _>(cutoff_ms)
                            .bind::<BigInt, _>(DELETE_BATCH)
                            .load(connection)
                            .await?;
                            let mut deltas = RollupDeltas::default();
                            let mut flows = FlowDeltas::default();
                            let count = removed.len() as u64;
                            for row in &removed {
                                if let Some(flow_id) = &row.flow_id {
                                    let share = FlowShare {
                                        flow_id,
                                        step_index: row.step_index,
                                        level: &row.level,
                                        source: &row.source,
                                        environment: &row.environment,
                                        ts: row.ts,
                                    };
                                    flows.add(share, -1);
                                }
                            }
                            for row in removed {
                                let scope = Scope {
                                    source: row.source,
                                    environment: row.environment,
                                    dataset: row.dataset,
                                    level: row.level,
                                };
                                deltas.add(row.ts, scope, -1);
                            }
                            apply_deltas(connection, *workspace.as_uuid(), &deltas, true, 0).await?;
                            apply_flow_deltas(connection, *workspace.as_uuid(), &flows).await?;
                            Ok(count)
                        })
                        .await
                        .map_err(from_diesel)
                })
                .await?;
            deleted += batch;
            if batch < DELETE_BATCH as u64 {
                break;
            }
        }
        // Chunks whose every log is now gone (checked: an insert of old logs may have come in
        // since). A chunk that keeps some logs stays whole: its filter, a superset of theirs,
        // only adds candidates the exact check drops.
        self.with_deadline(async {
            let mut connection = self.connection().await?;
            (*connection)
                .transaction::<_, DieselError, _>(async move |connection: &mut AsyncPgConnection| {
                    diesel::sql_query(
                        "DELETE FROM log_chunks WHERE workspace_id = $1 AND max_ts < $2 AND NOT EXISTS \
                         (SELECT 1 FROM logs WHERE logs.workspace_id = $1 AND logs.chunk_id = log_chunks.id)",
                    )
                    .bind::<diesel::sql_types::Uuid, _>(*workspace.as_uuid())
                    .bind::<BigInt, _>(cutoff_ms)
                    .execute(connection)
                    .await?;
                    // Their signatures, and the blocks none of whose chunks is left.
                    crate::signatures::drop_orphans(connection, Some(*workspace.as_uuid())).await
                })
                .await
                .map_err(from_diesel)
        })
        .await?;
        Ok(deleted)
    }

    async fn sweep(&self, cutoffs: &[(WorkspaceId, i64)]) -> Result<u64, StoreError> {
        // Whole partitions go when every workspace's retention has passed them; a workspace
        // without a cutoff here keeps everything, so nothing is dropped then.
        let everyone: BTreeSet<WorkspaceId> =
            self.list_workspaces().await?.iter().map(|workspace| workspace.id).collect();
        let named: BTreeSet<WorkspaceId> = cutoffs.iter().map(|(workspace, _)| *workspace).collect();
        let mut deleted = 0;
        if everyone.is_subset(&named)
            && let Some(oldest) = cutoffs.iter().map(|(_, cutoff)| *cutoff).min()
        {
            deleted += self.drop_partitions_before(oldest).await?;
        }
        for (workspace, cutoff) in cutoffs {
            deleted += self.delete_logs_before(*workspace, *cutoff).await?;
        }
        // The partitions this emptied go, and those that aged merge (`consolidate`).
        self.consolidate_partitions().await?;
        self.create_partitions_ahead().await?;
        Ok(deleted)
    }
}
