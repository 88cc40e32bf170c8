//! Retention: deleting a workspace's logs older than a cutoff, in bounded transactions, with
//! their counters, their flows and the search index's emptied chunks.

use std::sync::PoisonError;

use async_trait::async_trait;

use diesel::prelude::*;
use diesel::result::Error as DieselError;
use diesel::sql_types::Text;
use sluice_model::WorkspaceId;
use sluice_store::flows::{FlowDeltas, FlowShare};
use sluice_store::rollups::{RollupDeltas, Scope};
use sluice_store::{LogRetention, StoreError};

use crate::connection::{SqliteStore, from_diesel};
use crate::flows::apply_flow_deltas;
use crate::index;
use crate::rollups::apply_rollup_deltas;
use crate::schema::{log_block_bands, log_blocks, log_chunk_keys, log_chunk_signatures, log_chunks, logs};

/// Logs deleted per retention transaction: bounded, so a large sweep never holds the write
/// lock for long, and well under SQLite's bound-variable limit.
const DELETE_BATCH: i64 = 5_000;

#[async_trait]
impl LogRetention for SqliteStore {
    async fn delete_logs_before(&self, workspace: WorkspaceId, cutoff_ms: i64) -> Result<u64, StoreError> {
        // Only indexed logs are deleted, so the index first covers every log stored so far.
        // Deleting a log of the unindexed tail could let an insert take its seq again after
        // a round read it and before that round wrote its chunk, which would then claim the
        // new log without its text.
        let (write_lock, shape) = (self.write_lock.clone(), self.index_shape.clone());
        self.with_connection(move |connection| {
            index::index_tail(connection, &write_lock, &shape, u64::MAX).map_err(from_diesel)
        })
        .await?;
        let mut deleted = 0;
        loop {
            let write_lock = self.write_lock.clone();
            let batch = self
                .with_connection(move |connection| {
                    let _lock = write_lock.lock().unwrap_or_else(PoisonError::into_inner);
                    connection
                        .immediate_transaction(|connection| {
                            let indexed = index::indexed_through(connection)?;
                            #[allow(clippy::type_complexity)]
                            let victims: Vec<(
                                i64,
                                i64,
                                String,
                                String,
                                String,
                                String,
                                Option<String>,
                                Option<i32>,
                            )> = logs::table
                                .filter(logs::workspace_id.eq(workspace.as_bytes().to_vec()))
                                .filter(logs::ts.lt(cutoff_ms))
                                .filter(logs::seq.le(indexed))
                                .select((
                                    logs::seq,
                                    logs::ts,
                                    logs::source,
                                    logs::environment,
                                    logs::dataset,
                                    logs::level,
                                    logs::flow_id,
                                    logs::step_index,
                                ))
                                .limit(DELETE_BATCH)
                                .load(connection)?;
                            let seqs: Vec<i64> = victims.iter().map(|victim| victim.0).collect();
                            diesel::delete(logs::table.filter(logs::seq.eq_any(&seqs))).execute(connection)?;
                            let (mut deltas, mut flows) = (RollupDeltas::default(), FlowDeltas::default());
                            for (_, ts, source, environment, dataset, level, flow_id, step_index) in victims {
                                if let Some(flow_id) = &flow_id {
                                    let (level, source, environment) = (&level, &source, &environment);
                                    let share = FlowShare { flow_id, step_index, level, source, environment, ts };
                                    flows.add(share, -1);
                                }
                                deltas.add(ts, Scope { source, environment, dataset, level }, -1);
                            }
                            apply_rollup_deltas(connection, &workspace, &deltas)?;
                            apply_flow_deltas(connection, workspace.as_bytes(), &flows)?;
                            Ok::<_, DieselError>(seqs.len() as u64)
                        })
                        .map_err(from_diesel)
                })
                .await?;
            deleted += batch;
            if batch < DELETE_BATCH as u64 {
                break;
            }
        }
        // The chunks of the search index left without a log, once for the whole sweep.
        let write_lock = self.write_lock.clone();
        self.with_connection(move |connection| {
            let _lock = write_lock.lock().unwrap_or_else(PoisonError::into_inner);
            connection
                .immediate_transaction(|connection| drop_emptied(connection, workspace.as_bytes(), cutoff_ms))
                .map_err(from_diesel)
        })
        .await?;
        Ok(deleted)
    }
}

/// After logs of `workspace` older than `cutoff_ms` were deleted: drops the chunks of the
/// workspace that no longer hold a log, rows and documents. A chunk that still holds some
/// stays whole (its document a superset of its logs' text, which the exact check allows).
fn drop_emptied(connection: &mut SqliteConnection, workspace: &[u8], cutoff_ms: i64) -> Result<(), DieselError> {
    let emptied: Vec<i64> = log_chunks::table
        .filter(log_chunks::workspace_id.eq(workspace))
        .filter(log_chunks::min_ts.lt(cutoff_ms))
        .filter(diesel::dsl::not(diesel::dsl::exists(
            logs::table.filter(logs::seq.between(log_chunks::id, log_chunks::last_seq)),
        )))
        .select(log_chunks::id)
        .load(connection)?;
    for part in emptied.chunks(5_000) {
        diesel::sql_query("DELETE FROM log_chunks_fts WHERE rowid IN (SELECT value FROM json_each(?1))")
            .bind::<Text, _>(serde_json::to_string(part).unwrap_or_else(|_| "[]".to_owned()))
            .execute(connection)?;
        diesel::delete(log_chunks::table.filter(log_chunks::id.eq_any(part))).execute(connection)?;
        diesel::delete(log_chunk_keys::table.filter(log_chunk_keys::chunk_id.eq_any(part))).execute(connection)?;
        diesel::delete(log_chunk_signatures::table.filter(log_chunk_signatures::chunk_id.eq_any(part)))
            .execute(connection)?;
    }

    // The blocks none of whose chunks is left, with their bands.
    if let Some(&last) = emptied.iter().max() {
        let blocks: Vec<(i64, Vec<u8>)> = log_blocks::table
            .filter(log_blocks::workspace_id.eq(workspace))
            .filter(log_blocks::id.le(last))
            .select((log_blocks::id, log_blocks::chunks))
            .load(connection)?;
        for (block, chunks) in blocks {
            let ids: Vec<i64> =
                chunks.chunks_exact(8).map(|bytes| i64::from_le_bytes(bytes.try_into().unwrap_or([0; 8]))).collect();
            let left: i64 = log_chunks::table.filter(log_chunks::id.eq_any(&ids)).count().get_result(connection)?;
            if left == 0 {
                diesel::delete(
                    log_block_bands::table
                        .filter(log_block_bands::workspace_id.eq(workspace))
                        .filter(log_block_bands::block_id.eq(block)),
                )
                .execute(connection)?;
                diesel::delete(log_blocks::table.filter(log_blocks::id.eq(block))).execute(connection)?;
            }
        }
    }
    Ok(())
}
