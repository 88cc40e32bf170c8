//! The store's own threads, off the writes' path: one merges each workspace's small blocks
//! ([`crate::blocks::merge_due`]), one checkpoints the WAL, and, on the first start after an
//! upgrade, one converts the logs kept as rows into blocks ([`crate::upgrade`]).

use std::sync::Arc;
use std::time::Duration;

use diesel::connection::SimpleConnection;
use diesel::prelude::*;
use diesel::result::Error as DieselError;
use sluice_store::{Clock, StoreError};

use crate::error::backend;
use crate::lock::WriteLock;

/// How often the checkpointer runs.
const CHECKPOINT_EVERY: Duration = Duration::from_millis(200);

/// The store's threads; each stops, after a last round (the checkpointer with a full
/// checkpoint), when the store is dropped.
///
/// Checkpoints: SQLite's default has the connection that commits past 1,000 WAL pages copy
/// the log into the database file inside that commit, which put about a tenth of the write
/// path's time and its slowest commits on the one writer. Here no connection checkpoints at
/// commit (`wal_autocheckpoint = 0`); the checkpointer runs a passive checkpoint each round.
pub(crate) struct Background {
    /// Dropped with the store, which tells the threads to finish.
    _running: std::sync::mpsc::Sender<()>,
    _merging: std::sync::mpsc::Sender<()>,
    _upgrading: std::sync::mpsc::Sender<()>,
}

impl Background {
    pub(crate) fn start(
        mut connection: SqliteConnection,
        merger: Option<(SqliteConnection, Duration)>,
        write_lock: Arc<WriteLock>,
        clock: Clock,
        upgrading: std::sync::mpsc::Sender<()>,
    ) -> Result<Self, StoreError> {
        let (merging, stop_merging) = std::sync::mpsc::channel::<()>();
        if let Some((mut merger, every)) = merger {
            let write_lock = write_lock.clone();
            std::thread::Builder::new()
                .name("sluice-sqlite-merger".into())
                .spawn(move || {
                    while let Err(std::sync::mpsc::RecvTimeoutError::Timeout) = stop_merging.recv_timeout(every) {
                        if let Err(error) = crate::blocks::merge_due(&mut merger, &write_lock, clock.now_ms()) {
                            tracing::warn!(%error, "merging small blocks failed; the next round retries");
                        }
                    }
                })
                .map_err(|error| backend(format!("cannot start the merger thread: {error}")))?;
        }
        // A restart checkpoint holds new writers back while it waits for readers: it waits
        // 50 ms at most, then gives up until the next round, so a long search cannot stall
        // the writer behind it.
        connection.batch_execute("PRAGMA busy_timeout = 50;").map_err(backend)?;
        let (running, stopped) = std::sync::mpsc::channel::<()>();
        std::thread::Builder::new()
            .name("sluice-sqlite-checkpointer".into())
            .spawn(move || {
                let mut previous = None;
                while let Err(std::sync::mpsc::RecvTimeoutError::Timeout) = stopped.recv_timeout(CHECKPOINT_EVERY) {
                    match checkpoint(&mut connection, &write_lock, previous) {
                        Ok(frames) => previous = frames,
                        Err(error) => tracing::warn!(%error, "WAL checkpoint failed; the next one retries"),
                    }
                }
                let _ = connection.batch_execute("PRAGMA wal_checkpoint(TRUNCATE);");
            })
            .map_err(|error| backend(format!("cannot start the checkpointer thread: {error}")))?;
        Ok(Self { _running: running, _merging: merging, _upgrading: upgrading })
    }
}

/// Frames (pages) the log may hold before a checkpoint holds writers back to start it over:
/// 16 MB of 4 KiB pages. A log started over often is written over in place; one let grow made
/// every commit slower (`cargo xtask bench ingest`'s JSON at 15k logs/s offered on a file of
/// 6M logs, p99: 82–86 ms at 16 MB, 96–100 ms at 64 MB, 481 ms at 1 GB).
const WAL_RESTART_FRAMES: i64 = 4_096;

/// The answer of `PRAGMA wal_checkpoint`: frames in the log, and how many are copied.
#[derive(QueryableByName)]
struct CheckpointResult {
    #[diesel(sql_type = diesel::sql_types::Integer)]
    #[diesel(column_name = log)]
    log_frames: i32,
    #[diesel(sql_type = diesel::sql_types::Integer)]
    checkpointed: i32,
}

/// One checkpoint. A passive one copies what it can without waiting for anybody; under steady
/// writes it never copies the very last frames, so the writer never starts the log over and it
/// would grow without end. Past [`WAL_RESTART_FRAMES`] a second passive one runs holding the
/// ingest path's `write_lock`: with no commit under way it copies the rest (what came in
/// during the first), and the next commit starts the log over. SQLite's own way, a restart
/// checkpoint, blocks writers for as long through SQLite's busy handler, which wakes them up
/// to 100 ms late: measured, it made the slowest commits under load.
///
/// A log copied whole that took no frame since the round before (`previous`, the frames it
/// held then) is truncated: an idle store keeps no log on disk. Returns the frames the log
/// holds now.
fn checkpoint(
    connection: &mut SqliteConnection,
    write_lock: &WriteLock,
    previous: Option<i32>,
) -> Result<Option<i32>, DieselError> {
    let passive = || diesel::sql_query("PRAGMA wal_checkpoint(PASSIVE)");
    let mut result: Option<CheckpointResult> = passive().load(connection)?.pop();
    if let Some(done) = &result
        && done.log_frames > 0
        && done.log_frames == done.checkpointed
        && previous == Some(done.log_frames)
    {
        let _lock = write_lock.blocking_lock();
        diesel::sql_query("PRAGMA wal_checkpoint(TRUNCATE)").execute(connection)?;
        return Ok(Some(0));
    }
    // Each pass copies what came in during the last; a few make the rest short.
    for _ in 0..3 {
        match &result {
            Some(done) if done.log_frames - done.checkpointed > 1_024 => result = passive().load(connection)?.pop(),
            _ => break,
        }
    }
    if result.as_ref().is_some_and(|result| i64::from(result.log_frames) > WAL_RESTART_FRAMES) {
        let _lock = write_lock.blocking_lock();
        passive().execute(connection)?;
    }
    Ok(result.map(|result| result.log_frames))
}
