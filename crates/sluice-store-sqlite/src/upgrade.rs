//! The first start of this build on a database that kept logs as rows (`logs`): a thread of
//! the store's own moves them into blocks, a block of one workspace's oldest rows at a time,
//! each move one transaction that writes the block and deletes its rows, so a kill at any
//! point loses and doubles nothing and the next start goes on where it stopped. Their
//! counters (rollups, usage, flows) already count them and stay as they are.

use std::sync::mpsc::Receiver;
use std::time::Duration;

use diesel::prelude::*;
use diesel::result::Error as DieselError;
use sluice_blocks::MAX_BLOCK_ROWS;
use sluice_model::Log;
use sluice_store::blockstore::BlockRows;
use sluice_store::upgrade::{Progress, Upgrade};
use sluice_store::{Clock, StoreError};
use tokio::sync::watch;

use crate::blocks::write_block;
use crate::error::{backend, from_diesel, write_transaction};
use crate::lock::WriteLock;
use crate::rows::LogRow;
use crate::schema::logs;

/// Rows deleted per statement, under SQLite's limit on variables.
const SEQS_PER_DELETE: usize = 5_000;

/// Logs still kept as rows.
pub(crate) fn rows_left(connection: &mut SqliteConnection) -> Result<u64, StoreError> {
    let count: i64 = logs::table.count().get_result(connection).map_err(from_diesel)?;
    Ok(u64::try_from(count).unwrap_or(0))
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
                match convert_some(&mut connection, &write_lock, clock()) {
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
    let Some(workspace): Option<Vec<u8>> =
        logs::table.select(logs::workspace_id).first(connection).optional().map_err(from_diesel)?
    else {
        return Ok(0);
    };
    let rows: Vec<(i64, LogRow)> = logs::table
        .filter(logs::workspace_id.eq(&workspace))
        .order((logs::ts.asc(), logs::id.asc()))
        .limit(MAX_BLOCK_ROWS as i64)
        .select((logs::seq, LogRow::as_select()))
        .load(connection)
        .map_err(from_diesel)?;
    let seqs: Vec<i64> = rows.iter().map(|(seq, _)| *seq).collect();
    let logs: Vec<Log> = rows.into_iter().map(|(_, row)| Log::try_from(row)).collect::<Result<_, _>>()?;
    let encoded = BlockRows::encode(&logs)?;
    let _lock = write_lock.blocking_lock();
    write_transaction(connection, |connection| {
        // Another process sharing the file (the admin CLI) may have moved some of these rows
        // meanwhile: then this move is undone and the next one reads again.
        let mut deleted = 0;
        for part in seqs.chunks(SEQS_PER_DELETE) {
            deleted += diesel::delete(logs::table.filter(logs::seq.eq_any(part))).execute(connection)?;
        }
        if deleted != seqs.len() {
            return Err(DieselError::RollbackTransaction.into());
        }
        for block in &encoded {
            write_block(connection, &workspace, block, now_ms)?;
        }
        Ok(seqs.len() as u64)
    })
}
