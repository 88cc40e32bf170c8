//! The insert path: a group of batches in one write transaction, each batch's quota checked
//! first, each workspace's accepted logs written as one block (`crate::blocks`), and their
//! counters and flows kept with them.

use std::collections::BTreeMap;

use async_trait::async_trait;

use diesel::prelude::*;
use sluice_model::{Log, WorkspaceId};
use sluice_store::blockstore::BlockRows;
use sluice_store::flows::FlowDeltas;
use sluice_store::rollups::{BatchCounts, RollupDeltas};
use sluice_store::{LogWrites, StoreError, WriteBatch};

use crate::blocks::{merge_due, write_block};
use crate::connection::SqliteStore;
use crate::error::{from_diesel, write_transaction};
use crate::flows::apply_flow_deltas;
use crate::quota::count_usage;
use crate::rollups::apply_rollup_deltas;
use crate::schema::usage_monthly;

impl SqliteStore {
    /// [`LogStore::insert_group`](sluice_store::LogStore::insert_group) of a group the call owns
    /// (its work runs on a blocking thread).
    pub(crate) async fn insert_owned(&self, group: Vec<WriteBatch>) -> Result<Vec<Result<(), StoreError>>, StoreError> {
        let (write_lock, clock, heads) = (self.write_lock.clone(), self.clock.clone(), self.heads.clone());
        let merge_now = self.merge_every.is_none();
        let written = self
            .with_connection(move |connection| {
                // What each batch counts, and each workspace's block, worked out before the
                // write lock is taken (a workspace with a batch refused by its quota has its
                // block encoded again without it).
                let prepared: Vec<BatchCounts> =
                    group.iter().map(|batch| BatchCounts::of(batch, str::to_owned)).collect();
                let mut by_workspace: BTreeMap<WorkspaceId, Vec<usize>> = BTreeMap::new();
                for (index, batch) in group.iter().enumerate() {
                    by_workspace.entry(batch.workspace).or_default().push(index);
                }
                let logs_of = |indexes: &[usize]| -> Vec<&Log> {
                    indexes.iter().flat_map(|index| group[*index].logs.iter()).collect()
                };
                let mut encoded: BTreeMap<WorkspaceId, Vec<BlockRows>> = BTreeMap::new();
                for (workspace, indexes) in &by_workspace {
                    let logs = logs_of(indexes);
                    if !logs.is_empty() {
                        encoded.insert(*workspace, BlockRows::encode_refs(logs)?);
                    }
                }
                let now = clock.now_ms();
                let waited = std::time::Instant::now();
                let lock = write_lock.blocking_lock();
                let (waited, writing) = (waited.elapsed(), std::time::Instant::now());
                let answers = write_transaction(connection, |connection| {
                    let mut answers: Vec<Result<(), StoreError>> = vec![Ok(()); group.len()];
                    let mut prepared: Vec<Option<BatchCounts>> = prepared.into_iter().map(Some).collect();
                    for (workspace, indexes) in &by_workspace {
                        // Counter changes of the workspace's batches, applied once for all.
                        let (mut deltas, mut flows) = (RollupDeltas::default(), FlowDeltas::default());
                        let mut accepted = Vec::with_capacity(indexes.len());
                        for index in indexes {
                            let Some(prepared) = prepared[*index].take() else { continue };
                            // The quota first: a refused batch writes nothing.
                            if !count_usage(connection, workspace, &prepared.months)? {
                                answers[*index] = Err(StoreError::QuotaExceeded);
                                continue;
                            }
                            accepted.push(*index);
                            flows.absorb(&prepared.flows);
                            deltas.absorb(&prepared.deltas);
                        }
                        let blocks = if accepted.len() == indexes.len() {
                            encoded.remove(workspace).unwrap_or_default()
                        } else {
                            let logs = logs_of(&accepted);
                            if logs.is_empty() { Vec::new() } else { BlockRows::encode_refs(logs)? }
                        };
                        for block in &blocks {
                            write_block(connection, workspace.as_bytes(), block, now)?;
                        }
                        apply_rollup_deltas(connection, workspace, &deltas)?;
                        apply_flow_deltas(connection, &heads, workspace.as_bytes(), &flows)?;
                    }
                    Ok(answers)
                })?;
                drop(lock);
                let writing = writing.elapsed();
                if waited + writing > std::time::Duration::from_millis(100) {
                    tracing::debug!(?waited, ?writing, batches = group.len(), "a slow group");
                }
                // The logs are committed: whatever happens here, the answer stands.
                if merge_now && let Err(error) = merge_due(connection, &write_lock, clock.now_ms()) {
                    tracing::warn!(%error, "merging small blocks failed; the next insert retries");
                }
                Ok(answers)
            })
            .await;
        self.full.note(&written);
        written
    }
}

#[async_trait]
impl LogWrites for SqliteStore {
    async fn insert_logs(&self, workspace: WorkspaceId, batch: &[Log]) -> Result<(), StoreError> {
        let group = vec![WriteBatch { workspace, logs: batch.to_vec() }];
        sluice_store::only_answer(self.insert_owned(group).await?)
    }

    async fn insert_group(&self, group: &[WriteBatch]) -> Result<Vec<Result<(), StoreError>>, StoreError> {
        self.insert_owned(group.to_vec()).await
    }

    /// Read from the counter the quota check of every insert keeps (`quota`).
    async fn monthly_usage(&self, workspace: WorkspaceId, month_ms: i64) -> Result<u64, StoreError> {
        self.with_connection(move |connection| {
            let logs: Option<i64> = usage_monthly::table
                .find((workspace.as_bytes().to_vec(), month_ms))
                .select(usage_monthly::logs)
                .first(connection)
                .optional()
                .map_err(from_diesel)?;
            Ok(logs.map_or(0, |logs| u64::try_from(logs).unwrap_or(0)))
        })
        .await
    }
}
