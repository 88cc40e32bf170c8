//! The first start of this build on a database that kept logs as rows (`logs`): a thread of
//! the store's own moves them into blocks, a block of one workspace's oldest rows at a time,
//! each move one transaction that writes the block and deletes its rows, so a kill at any
//! point loses and doubles nothing and the next start goes on where it stopped. Their
//! counters (rollups, usage, flows) already count them and stay as they are.

use std::sync::mpsc::Receiver;
use std::time::Duration;

use diesel::prelude::*;
use diesel::result::Error as DieselError;
use diesel::sql_types::{BigInt, Text};
use sluice_blocks::MAX_BLOCK_ROWS;
use sluice_model::Log;
use sluice_store::blockstore::BlockRows;
use sluice_store::upgrade::{Progress, Upgrade};
use sluice_store::{Clock, StoreError};
use sluice_store_diesel::Id;
use sluice_store_diesel::raw::{LEGACY_LOG_COLUMNS, LegacyLogRow, Total, WorkspaceRow};
use tokio::sync::watch;

use crate::blocks::write_block;
use crate::error::{backend, from_diesel, write_transaction};
use crate::lock::WriteLock;

/// Logs still kept as rows.
pub(crate) fn rows_left(connection: &mut SqliteConnection) -> Result<u64, StoreError> {
    let count: Total =
        diesel::sql_query("SELECT count(*) AS total FROM logs").get_result(connection).map_err(from_diesel)?;
    Ok(count.total.map_or(0, |total| u64::try_from(total).unwrap_or(0)))
}

/// Starts converting the rows left, when there are any, on a thread of its own that stops when
/// `stop` hangs up; the receiver follows its progress.
pub(crate) fn start(
    mut connection: SqliteConnection,
    write_lock: std::sync::Arc<WriteLock>,
    clock: Clock,
    stop: Receiver<()>,
) -> Result<Option<watch::Receiver<Progress>>, StoreError> {
    let total = rows_left(&mut connection)?;
    if total == 0 {
        return Ok(None);
    }
    tracing::info!(logs = total, "converting the logs kept as rows into blocks; /readyz answers 503 until done");
    let (upgrade, progress) = Upgrade::start(total);
    std::thread::Builder::new()
        .name("sluice-sqlite-upgrade".into())
        .spawn(move || {
            let started = std::time::Instant::now();
            loop {
                if !matches!(stop.try_recv(), Err(std::sync::mpsc::TryRecvError::Empty)) {
                    // The store is gone: the next start goes on from here, so the upgrade is
                    // left unfinished.
                    std::mem::forget(upgrade);
                    return;
                }
                match convert_some(&mut connection, &write_lock, clock.now_ms()) {
                    Ok(0) => break,
                    Ok(moved) => upgrade.advance(moved),
                    Err(error) => {
                        tracing::warn!(%error, "converting logs into blocks failed; retrying in a second");
                        if stop.recv_timeout(Duration::from_secs(1)).is_ok() {
                            std::mem::forget(upgrade);
                            return;
                        }
                    }
                }
            }
            upgrade.finish();
            tracing::info!(logs = total, took = ?started.elapsed(), "the logs kept as rows are now in blocks");
        })
        .map_err(|error| backend(format!("cannot start the upgrade thread: {error}")))?;
    Ok(Some(progress))
}

/// Moves up to a block's worth of one workspace's oldest rows into a block; returns how many.
pub(crate) fn convert_some(
    connection: &mut SqliteConnection,
    write_lock: &WriteLock,
    now_ms: i64,
) -> Result<u64, StoreError> {
    let Some(workspace) = diesel::sql_query("SELECT workspace_id AS id FROM logs LIMIT 1")
        .get_result::<WorkspaceRow>(connection)
        .optional()
        .map_err(from_diesel)?
    else {
        return Ok(0);
    };
    let workspace = workspace.id;
    let rows: Vec<RowOfLogs> = diesel::sql_query(format!(
        "SELECT seq, {LEGACY_LOG_COLUMNS} FROM logs WHERE workspace_id = ?1 ORDER BY ts, id LIMIT ?2"
    ))
    .bind::<Id, _>(workspace)
    .bind::<BigInt, _>(MAX_BLOCK_ROWS as i64)
    .load(connection)
    .map_err(from_diesel)?;
    let seqs: Vec<i64> = rows.iter().map(|row| row.seq).collect();
    let seq_list = serde_json::to_string(&seqs).map_err(|error| backend(format!("listing moved rows: {error}")))?;
    let logs: Vec<Log> = rows.into_iter().map(|row| row.log.into_log(|text| text)).collect::<Result<_, _>>()?;
    let logs_moved = logs.len();
    let encoded = BlockRows::encode(&logs)?;
    let _lock = write_lock.blocking_lock();
    write_transaction(connection, |connection| {
        // Another process sharing the file (the admin CLI) may have moved some of these rows
        // meanwhile: then this move is undone and the next one reads again.
        let deleted = diesel::sql_query("DELETE FROM logs WHERE seq IN (SELECT value FROM json_each(?1))")
            .bind::<Text, _>(seq_list)
            .execute(connection)?;
        if deleted != logs_moved {
            return Err(DieselError::RollbackTransaction.into());
        }
        for block in &encoded {
            write_block(connection, workspace.0.as_bytes(), block, now_ms)?;
        }
        Ok(logs_moved as u64)
    })
}

/// A row of `logs` and its place in the table.
#[derive(QueryableByName)]
struct RowOfLogs {
    #[diesel(sql_type = BigInt)]
    seq: i64,
    #[diesel(embed)]
    log: LegacyLogRow,
}
