//! The first start of this build on a database that kept logs as rows (`logs`): a task of the
//! store's own moves them into blocks, a block of one workspace's oldest rows at a time, each
//! move one transaction that deletes its rows and writes the block, so a kill at any point
//! loses and doubles nothing and the next start goes on where it stopped. Servers sharing the
//! database may all convert: a move whose rows another took meanwhile deletes fewer than it
//! read and is rolled back. Their counters (rollups, usage, flows) already count them.

use std::time::Duration;

use diesel::prelude::*;
use diesel::result::Error as DieselError;
use diesel::sql_types::{Array, BigInt, Uuid as SqlUuid};
use diesel_async::{AsyncConnection, AsyncPgConnection, RunQueryDsl};
use sluice_blocks::MAX_BLOCK_ROWS;
use sluice_model::Log;
use sluice_store::StoreError;
use sluice_store::blockstore::BlockRows;
use sluice_store::upgrade::{Progress, Upgrade};
use sluice_store_diesel::raw::{LEGACY_LOG_COLUMNS, LegacyLogRow, Total, WorkspaceRow};
use tokio::sync::watch;
use uuid::Uuid;

use crate::PgStore;
use crate::blocks::{encode_off_runtime, write_blocks};
use crate::error::from_diesel;
use crate::prepared::prepared;
use crate::text::decode;

/// Logs still kept as rows.
async fn rows_left(connection: &mut AsyncPgConnection) -> Result<u64, StoreError> {
    let total: Total =
        prepared("SELECT count(*)::int8 AS total FROM logs").get_result(connection).await.map_err(from_diesel)?;
    Ok(total.total.map_or(0, |total| u64::try_from(total).unwrap_or(0)))
}

impl PgStore {
    /// Starts converting the rows left, when there are any, in a task that ends with the
    /// conversion or when `stop` is dropped; the receiver follows its progress.
    pub(crate) async fn start_upgrade(
        &self,
        mut stop: watch::Receiver<()>,
    ) -> Result<Option<watch::Receiver<Progress>>, StoreError> {
        let total = {
            let mut connection = self.connection().await?;
            self.with_deadline(rows_left(&mut connection)).await?
        };
        if total == 0 {
            return Ok(None);
        }
        tracing::info!(logs = total, "converting the logs kept as rows into blocks; /readyz answers 503 until done");
        let (upgrade, progress) = Upgrade::start(total);
        let store = self.clone();
        tokio::spawn(async move {
            let started = std::time::Instant::now();
            loop {
                let step = tokio::select! {
                    step = store.with_deadline(store.convert_some()) => step,
                    _ = stop.changed() => {
                        // The store is gone: the next start goes on from here.
                        std::mem::forget(upgrade);
                        return;
                    }
                };
                match step {
                    Ok(None) => break,
                    Ok(Some(moved)) => upgrade.advance(moved),
                    Err(error) => {
                        tracing::warn!(%error, "converting logs into blocks failed; retrying in a second");
                        tokio::select! {
                            () = tokio::time::sleep(Duration::from_secs(1)) => {}
                            _ = stop.changed() => {
                                std::mem::forget(upgrade);
                                return;
                            }
                        }
                    }
                }
            }
            upgrade.finish();
            tracing::info!(logs = total, took = ?started.elapsed(), "the logs kept as rows are now in blocks");
        });
        Ok(Some(progress))
    }

    /// Moves up to a block's worth of one workspace's oldest rows into a block; returns how
    /// many (0 when another server took some of them first), or `None` when no row is left.
    async fn convert_some(&self) -> Result<Option<u64>, StoreError> {
        let mut connection = self.connection().await?;
        let Some(workspace) = prepared("SELECT workspace_id AS id FROM logs LIMIT 1")
            .get_result::<WorkspaceRow>(&mut *connection)
            .await
            .optional()
            .map_err(from_diesel)?
        else {
            return Ok(None);
        };
        let workspace = workspace.id.0;
        let rows: Vec<LegacyLogRow> = diesel::sql_query(format!(
            "SELECT {LEGACY_LOG_COLUMNS} FROM logs WHERE workspace_id = $1 ORDER BY ts, id LIMIT $2"
        ))
        .bind::<SqlUuid, _>(workspace)
        .bind::<BigInt, _>(MAX_BLOCK_ROWS as i64)
        .load(&mut *connection)
        .await
        .map_err(from_diesel)?;
        let keys: (Vec<i64>, Vec<Uuid>) = rows.iter().map(|row| (row.ts, row.id.0)).unzip();
        let logs: Vec<Log> = rows.into_iter().map(|row| row.into_log(decode)).collect::<Result<_, _>>()?;
        let count = logs.len() as u64;
        let encoded = encode_off_runtime("encoding converted logs", move || BlockRows::encode(&logs)).await?;
        let now_ms = self.clock.now_ms();
        let moved = (*connection)
            .transaction::<_, DieselError, _>(async move |connection: &mut AsyncPgConnection| {
                let deleted = prepared(
                    "DELETE FROM logs WHERE workspace_id = $1 AND (ts, id) IN \
                     (SELECT * FROM unnest($2::int8[], $3::uuid[]))",
                )
                .bind::<SqlUuid, _>(workspace)
                .bind::<Array<BigInt>, _>(&keys.0)
                .bind::<Array<SqlUuid>, _>(&keys.1)
                .execute(connection)
                .await?;
                if deleted as u64 != count {
                    return Err(DieselError::RollbackTransaction);
                }
                write_blocks(connection, workspace, &encoded, now_ms).await
            })
            .await;
        match moved {
            Ok(()) => Ok(Some(count)),
            // Another server moved some of these rows meanwhile: read again.
            Err(DieselError::RollbackTransaction) => Ok(Some(0)),
            Err(error) => Err(from_diesel(error)),
        }
    }
}
