//! Blocks of logs as PostgreSQL keeps them (`sluice_store::blockstore`): a block's rows written
//! and deleted, the swap of blocks for others (merges, retention) and the merges of each
//! workspace's small blocks ([`PgStore::merge_due`]). Their reads are `source.rs`.
//!
//! Every statement names one workspace, and every key it reads by leads with `workspace_id`.

use std::sync::atomic::Ordering;

use diesel::prelude::*;
use diesel::result::Error as DieselError;
use diesel::sql_types::{Array, BigInt, Bytea, Integer, Uuid as SqlUuid};
use diesel_async::{AsyncConnection, AsyncPgConnection, RunQueryDsl, SimpleAsyncConnection};
use sluice_store::StoreError;
use sluice_store::blockstore::{BlockRows, Mergeable, merge_plan};
use sluice_store::flows::FlowDeltas;
use sluice_store::rollups::RollupDeltas;
use uuid::Uuid;

use crate::PgStore;
use sluice_store_diesel::raw::IdRow;

use crate::error::from_diesel;
use crate::prepared::prepared;
use crate::source::block_logs;

/// Writes the blocks of `workspace` (inside the caller's transaction): three statements a
/// block, its head, its bands and its granules.
pub(crate) async fn write_blocks(
    connection: &mut AsyncPgConnection,
    workspace: Uuid,
    blocks: &[BlockRows],
    now_ms: i64,
) -> Result<(), DieselError> {
    for block in blocks {
        let id: IdRow = prepared(
            "INSERT INTO blocks (workspace_id, rows, min_ts, max_ts, min_id, max_id, created_at, head) \
             VALUES ($1, $2, $3, $4, $5, $6, $7, $8) RETURNING id",
        )
        .bind::<SqlUuid, _>(workspace)
        .bind::<Integer, _>(i32::try_from(block.rows).unwrap_or(i32::MAX))
        .bind::<BigInt, _>(block.timestamps.0)
        .bind::<BigInt, _>(block.timestamps.1)
        .bind::<SqlUuid, _>(*block.ids.0.as_uuid())
        .bind::<SqlUuid, _>(*block.ids.1.as_uuid())
        .bind::<BigInt, _>(now_ms)
        .bind::<Bytea, _>(block.head.as_slice())
        .get_result(connection)
        .await?;
        for (sql, parts) in [
            (
                "INSERT INTO block_bands (workspace_id, block_id, band, bytes) \
                 SELECT $1, $2, p.n - 1, p.bytes FROM unnest($3::bytea[]) WITH ORDINALITY AS p(bytes, n)",
                &block.bands,
            ),
            (
                "INSERT INTO block_granules (workspace_id, block_id, granule, bytes) \
                 SELECT $1, $2, p.n - 1, p.bytes FROM unnest($3::bytea[]) WITH ORDINALITY AS p(bytes, n)",
                &block.granules,
            ),
        ] {
            if parts.is_empty() {
                continue;
            }
            prepared(sql)
                .bind::<SqlUuid, _>(workspace)
                .bind::<BigInt, _>(id.id)
                .bind::<Array<Bytea>, _>(parts)
                .execute(connection)
                .await?;
        }
    }
    Ok(())
}

/// Deletes blocks of `workspace` with their bands and granules.
pub(crate) async fn delete_blocks(
    connection: &mut AsyncPgConnection,
    workspace: Uuid,
    ids: &[i64],
) -> Result<(), DieselError> {
    for sql in [
        "DELETE FROM block_bands WHERE workspace_id = $1 AND block_id = ANY($2)",
        "DELETE FROM block_granules WHERE workspace_id = $1 AND block_id = ANY($2)",
        "DELETE FROM blocks WHERE workspace_id = $1 AND id = ANY($2)",
    ] {
        prepared(sql).bind::<SqlUuid, _>(workspace).bind::<Array<BigInt>, _>(ids).execute(connection).await?;
    }
    Ok(())
}

/// Encodes logs into blocks on a blocking thread (their compression is the heaviest work of a
/// write, kept off the runtime's threads); `what` names the work in an error.
pub(crate) async fn encode_off_runtime<T: Send + 'static>(
    what: &'static str,
    encode: impl FnOnce() -> Result<T, StoreError> + Send + 'static,
) -> Result<T, StoreError> {
    tokio::task::spawn_blocking(encode).await.map_err(|error| StoreError::Backend(format!("{what}: {error}")))?
}

/// The counters of the logs a swap removes, taken off in its transaction.
#[derive(Default)]
pub(crate) struct Removed {
    pub(crate) rollups: RollupDeltas,
    pub(crate) flows: FlowDeltas,
}

/// Puts `new` in the place of the blocks `old` of `workspace` and takes `removed` off the
/// counters, in one transaction; does nothing and answers false when any of `old` went
/// meanwhile (a merge or retention of this process or another came first: the rows are
/// locked, so of two swaps of the same block one waits and then finds it gone).
pub(crate) async fn swap_blocks(
    store: &PgStore,
    connection: &mut AsyncPgConnection,
    workspace: Uuid,
    old: &[i64],
    new: &[BlockRows],
    removed: &Removed,
) -> Result<bool, StoreError> {
    let now_ms = store.clock.now_ms();
    let heads = &store.heads;
    let swapped = connection
        .transaction::<_, DieselError, _>(async move |connection: &mut AsyncPgConnection| {
            let present: Vec<IdRow> =
                prepared("SELECT id FROM blocks WHERE workspace_id = $1 AND id = ANY($2) ORDER BY id FOR UPDATE")
                    .bind::<SqlUuid, _>(workspace)
                    .bind::<Array<BigInt>, _>(old)
                    .load(connection)
                    .await?;
            if present.len() != old.len() {
                return Ok(false);
            }
            write_blocks(connection, workspace, new, now_ms).await?;
            delete_blocks(connection, workspace, old).await?;
            crate::rollups::apply_deltas(connection, workspace, &removed.rollups, true, 0).await?;
            crate::flows::apply_flow_deltas(connection, heads, workspace, &removed.flows).await?;
            Ok(true)
        })
        .await;
    swapped.map_err(from_diesel)
}

/// How often merges vacuum the blocks' tables ([`PgStore::vacuum_if_due`]).
const VACUUM_EVERY: std::time::Duration = std::time::Duration::from_secs(5);

#[derive(QueryableByName)]
struct SmallRow {
    #[diesel(sql_type = BigInt)]
    id: i64,
    #[diesel(sql_type = Integer)]
    rows: i32,
    #[diesel(sql_type = BigInt)]
    created_at: i64,
}

#[derive(QueryableByName)]
struct WorkspaceRow {
    #[diesel(sql_type = SqlUuid)]
    workspace_id: Uuid,
}

impl PgStore {
    /// Merges, for each workspace whose small blocks are due ([`merge_plan`]), as long as any
    /// merge is due; each merge one transaction, each within the call timeout. Returns the
    /// blocks merged away.
    pub(crate) async fn merge_due(&self) -> Result<usize, StoreError> {
        let workspaces: Vec<WorkspaceRow> = self
            .with_deadline(async {
                let mut connection = self.connection().await?;
                prepared("SELECT DISTINCT workspace_id FROM blocks WHERE rows < 16384")
                    .load(&mut *connection)
                    .await
                    .map_err(from_diesel)
            })
            .await?;
        let mut merged = 0;
        for workspace in workspaces {
            while let Some(count) = self.with_deadline(self.merge_one(workspace.workspace_id)).await?
                && count > 0
            {
                merged += count;
                self.vacuum_if_due().await;
            }
        }
        Ok(merged)
    }

    /// Vacuums the blocks' tables when [`VACUUM_EVERY`] has passed since this process last
    /// did. A merge leaves the small blocks it replaced as dead rows, as large as the logs they
    /// held; PostgreSQL reuses their space only once a vacuum has marked it free, and
    /// autovacuum comes at most once a minute, so under ingest the tables grew by up to a
    /// minute of merged logs at a time (SQLite reuses freed pages at once). A vacuum that fails
    /// or is cut short by the statement timeout is left for the next one.
    async fn vacuum_if_due(&self) {
        {
            let mut last = self.vacuumed.lock().unwrap_or_else(std::sync::PoisonError::into_inner);
            if last.is_some_and(|at| at.elapsed() < VACUUM_EVERY) {
                return;
            }
            *last = Some(std::time::Instant::now());
        }
        let vacuumed = self
            .with_deadline(async {
                let mut connection = self.connection().await?;
                connection
                    .batch_execute("VACUUM (SKIP_LOCKED) blocks, block_bands, block_granules")
                    .await
                    .map_err(from_diesel)
            })
            .await;
        if let Err(error) = vacuumed {
            tracing::debug!(%error, "vacuuming the blocks' tables failed; the next merge retries");
        }
    }

    /// The first merge due among `workspace`'s small blocks, done: how many blocks it merged
    /// away (none if another merge or a retention changed them meanwhile); `None` when none is
    /// due.
    async fn merge_one(&self, workspace: Uuid) -> Result<Option<usize>, StoreError> {
        let mut connection = self.connection().await?;
        let small: Vec<SmallRow> =
            prepared("SELECT id, rows, created_at FROM blocks WHERE workspace_id = $1 AND rows < 16384 ORDER BY id")
                .bind::<SqlUuid, _>(workspace)
                .load(&mut *connection)
                .await
                .map_err(from_diesel)?;
        let small: Vec<Mergeable> = small
            .into_iter()
            .map(|row| Mergeable { id: row.id, rows: row.rows.max(0) as u32, created_at: row.created_at })
            .collect();
        let plan = merge_plan(&small, self.clock.now_ms());
        if plan.is_empty() {
            return Ok(None);
        }
        let mut logs = Vec::new();
        for id in &plan {
            logs.extend(block_logs(&mut connection, workspace, *id).await?);
        }
        let encoded = encode_off_runtime("encoding a merged block", move || BlockRows::encode(&logs)).await?;
        let swapped = swap_blocks(self, &mut connection, workspace, &plan, &encoded, &Removed::default()).await?;
        Ok(Some(if swapped { plan.len() } else { 0 }))
    }

    /// After an insert: merges due in a task of their own, unless one runs already (or, with
    /// [`crate::PgOptions::merge_in_insert`], here, before the insert answers).
    pub(crate) async fn after_insert(&self) {
        if self.merge_in_insert {
            if let Err(error) = self.merge_due().await {
                tracing::warn!(%error, "merging small blocks failed; the next insert retries");
            }
            return;
        }
        if self.merging.swap(true, Ordering::AcqRel) {
            return;
        }
        let store = self.clone();
        tokio::spawn(async move {
            if let Err(error) = store.merge_due().await {
                tracing::warn!(%error, "merging small blocks failed; the next insert or housekeeping retries");
            }
            store.merging.store(false, Ordering::Release);
        });
    }
}

#[cfg(test)]
mod tests {
    /// The statements (and the migration's partial index `blocks_small`) name the planner's
    /// bound of a small block as a number.
    #[test]
    fn the_small_block_bound_in_sql_is_the_planners() {
        assert_eq!(sluice_store::blockstore::SMALL_BLOCK_ROWS, 16_384);
    }
}
