//! The insert path: a group of batches in one write transaction, each batch's quota checked
//! first, its logs given consecutive seqs, and its counters and flows kept with it.

use std::collections::BTreeMap;
use std::collections::btree_map::Entry;
use std::sync::PoisonError;

use async_trait::async_trait;

use diesel::prelude::*;
use diesel::result::Error as DieselError;
use sluice_model::{Log, WorkspaceId};
use sluice_store::flows::FlowDeltas;
use sluice_store::rollups::{BatchCounts, RollupDeltas};
use sluice_store::{LogWrites, StoreError, WriteBatch};

use crate::connection::{SqliteStore, from_diesel};
use crate::flows::apply_flow_deltas;
use crate::index;
use crate::quota::count_usage;
use crate::rollups::apply_rollup_deltas;
use crate::rows::NewLogRow;
use crate::schema::{logs, usage_monthly};

/// Rows per multi-row `INSERT`: 20 bound values each keeps a statement well under SQLite's
/// limit of 32,766 variables, whatever the batch size.
const ROWS_PER_INSERT: usize = 500;

/// The unindexed tail past which an insert indexes it itself after its commit: when ingest
/// outruns the background, the tail every search reads stays bounded, and ingest slows to
/// what the index keeps up with.
const MAX_TAIL: i64 = 20_000;

impl SqliteStore {
    /// [`LogStore::insert_group`](sluice_store::LogStore::insert_group) of a group the call owns
    /// (its work runs on a blocking thread).
    pub(crate) async fn insert_owned(&self, group: Vec<WriteBatch>) -> Result<Vec<Result<(), StoreError>>, StoreError> {
        let (write_lock, shape, index_now) =
            (self.write_lock.clone(), self.index_shape.clone(), self.index_every.is_none());
        let written = self
            .with_connection(move |connection| {
                // Counting happens before the write lock is taken.
                // What each batch counts, worked out before the write lock is taken.
                let prepared: Vec<BatchCounts> =
                    group.iter().map(|batch| BatchCounts::of(batch, str::to_owned)).collect();
                let waited = std::time::Instant::now();
                let lock = write_lock.lock().unwrap_or_else(PoisonError::into_inner);
                let (waited, writing) = (waited.elapsed(), std::time::Instant::now());
                let answers = connection
                    .immediate_transaction(|connection| {
                        let mut answers: Vec<Result<(), StoreError>> = vec![Ok(()); group.len()];
                        // Counter changes per workspace, applied once for all its batches.
                        let mut deltas: BTreeMap<WorkspaceId, RollupDeltas> = BTreeMap::new();
                        // The same for the flows their logs name.
                        let mut flows: BTreeMap<WorkspaceId, FlowDeltas> = BTreeMap::new();
                        // Under the write lock nobody else inserts: the next seqs are ours. They
                        // start past every log and every chunk of the index, so a chunk never covers
                        // a log it was not built from.
                        let last: Option<i64> = logs::table.select(diesel::dsl::max(logs::seq)).first(connection)?;
                        let indexed = index::indexed_through(connection)?;
                        let mut next = last.unwrap_or(0).max(indexed) + 1;
                        let mut rows: Vec<NewLogRow<'_>> = Vec::new();
                        // Each workspace's logs take consecutive seqs, so they make whole chunks.
                        let mut order: Vec<usize> = (0..group.len()).collect();
                        order.sort_by_key(|&index| group[index].workspace);
                        let mut prepared: Vec<Option<BatchCounts>> = prepared.into_iter().map(Some).collect();
                        for index in order {
                            let (batch, Some(prepared)) = (&group[index], prepared[index].take()) else { continue };
                            // The quota first: a refused batch writes nothing.
                            if !count_usage(connection, &batch.workspace, &prepared.months)? {
                                answers[index] = Err(StoreError::QuotaExceeded);
                                continue;
                            }
                            for log in &batch.logs {
                                rows.push(NewLogRow::new(next, &batch.workspace, log));
                                next += 1;
                            }
                            if !prepared.flows.is_empty() {
                                flows.entry(batch.workspace).or_default().absorb(&prepared.flows);
                            }
                            match deltas.entry(batch.workspace) {
                                Entry::Vacant(slot) => {
                                    slot.insert(prepared.deltas);
                                }
                                Entry::Occupied(mut slot) => slot.get_mut().absorb(&prepared.deltas),
                            }
                        }
                        for part in rows.chunks(ROWS_PER_INSERT) {
                            diesel::insert_into(logs::table).values(part).execute(connection)?;
                        }
                        for (workspace, deltas) in &deltas {
                            apply_rollup_deltas(connection, workspace, deltas)?;
                        }
                        for (workspace, flows) in &flows {
                            apply_flow_deltas(connection, workspace.as_bytes(), flows)?;
                        }
                        Ok::<_, DieselError>((answers, next - 1 - indexed))
                    })
                    .map_err(from_diesel)?;
                drop(lock);
                let writing = writing.elapsed();
                if waited + writing > std::time::Duration::from_millis(100) {
                    tracing::debug!(?waited, ?writing, batches = group.len(), "a slow group");
                }
                let (answers, tail) = answers;
                // The logs are committed: whatever happens here, the answer stands, and a search
                // reads logs the index does not cover yet.
                if index_now || tail > MAX_TAIL {
                    let started = std::time::Instant::now();
                    match index::index_tail(connection, &write_lock, &shape, u64::MAX) {
                        Ok(indexed) => {
                            tracing::debug!(tail, indexed, took = ?started.elapsed(), "an insert indexed the tail")
                        }
                        Err(error) => tracing::warn!(%error, "indexing new logs failed; the next insert retries"),
                    }
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
