//! Retention: deleting a workspace's logs older than a cutoff, in bounded transactions, with
//! their counters and the search index's emptied chunks.

use std::sync::PoisonError;

use async_trait::async_trait;

use diesel::prelude::*;
use diesel::result::Error as DieselError;
use sluice_model::WorkspaceId;
use sluice_store::rollups::{RollupDeltas, Scope};
use sluice_store::{LogRetention, StoreError};

use crate::connection::{SqliteStore, from_diesel};
use crate::index;
use crate::rollups::apply_rollup_deltas;
use crate::schema::logs;

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
        let (write_lock, shape) = (self.write_lock.clone(), self.index_shape);
        self.with_connection(move |connection| {
            index::index_tail(connection, &write_lock, shape, u64::MAX).map_err(from_diesel)
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
                            let victims: Vec<(i64, i64, String, String, String, String)> = logs::table
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
                                ))
                                .limit(DELETE_BATCH)
                                .load(connection)?;
                            let seqs: Vec<i64> = victims.iter().map(|victim| victim.0).collect();
                            diesel::delete(logs::table.filter(logs::seq.eq_any(&seqs))).execute(connection)?;
                            let mut deltas = RollupDeltas::default();
                            for (_, ts, source, environment, dataset, level) in victims {
                                deltas.add(ts, Scope { source, environment, dataset, level }, -1);
                            }
                            apply_rollup_deltas(connection, &workspace, &deltas)?;
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
                .immediate_transaction(|connection| index::drop_emptied(connection, workspace.as_bytes(), cutoff_ms))
                .map_err(from_diesel)
        })
        .await?;
        Ok(deleted)
    }
}
