//! The store's background thread: it indexes the logs committed since its last round and
//! checkpoints the WAL, off the writes' path.

use std::sync::{Arc, Mutex, PoisonError};
use std::time::Duration;

use diesel::connection::SimpleConnection;
use diesel::prelude::*;
use diesel::result::Error as DieselError;
use sluice_store::StoreError;

use crate::config::SqliteOptions;
use crate::connection::backend;
use crate::index;

/// How often the background thread checkpoints when it does not index ([`SqliteOptions::index_every`]).
const CHECKPOINT_EVERY: Duration = Duration::from_millis(200);

/// The store's own thread, off the writes' path, on the other core: each round it indexes
/// the logs committed since the last ([`index::index_tail`]), then checkpoints.
///
/// Checkpoints: SQLite's default has the connection that commits past 1,000 WAL pages copy
/// the log into the database file inside that commit, which put about a tenth of the write
/// path's time and its slowest commits on the one writer. Here no connection checkpoints at
/// commit (`wal_autocheckpoint = 0`); this thread runs a passive checkpoint each round.
/// It stops, after a last round and a full checkpoint, when the store is dropped.
pub(crate) struct Background {
    /// Dropped with the store, which tells the thread to finish.
    _running: std::sync::mpsc::Sender<()>,
    /// The same for the sealer's thread.
    _sealing: std::sync::mpsc::Sender<()>,
}

impl Background {
    pub(crate) fn start(
        mut connection: SqliteConnection,
        sealer: Option<SqliteConnection>,
        write_lock: Arc<Mutex<()>>,
        options: &SqliteOptions,
        signatures: &sluice_store::signature::SignatureCache,
    ) -> Result<Self, StoreError> {
        let (sealing, stop_sealing) = std::sync::mpsc::channel::<()>();
        if let Some(mut sealer) = sealer {
            let (write_lock, block_chunks, cache) =
                (write_lock.clone(), options.index_block_chunks, signatures.clone());
            std::thread::Builder::new()
                .name("sluice-sqlite-sealer".into())
                .spawn(move || {
                    while let Err(std::sync::mpsc::RecvTimeoutError::Timeout) = stop_sealing.recv_timeout(SEAL_EVERY) {
                        if let Err(error) = crate::blocks::seal_due(&mut sealer, &write_lock, block_chunks, &cache) {
                            tracing::warn!(%error, "sealing a block of chunk signatures failed; the next round retries");
                        }
                    }
                })
                .map_err(|error| backend(format!("cannot start the sealer thread: {error}")))?;
        }
        // A restart checkpoint holds new writers back while it waits for readers: it waits
        // 50 ms at most, then gives up until the next round, so a long search cannot stall
        // the writer behind it.
        connection.batch_execute("PRAGMA busy_timeout = 50;").map_err(backend)?;
        let (running, stopped) = std::sync::mpsc::channel::<()>();
        let (index_every, shape) = (options.index_every, index::Shape::of(options, signatures));
        // A round indexes at most ROUND_LOGS, so checkpoints keep their pace while ingest
        // outruns the index; it answers whether the tail had more, and the next starts at once.
        let round = move |connection: &mut SqliteConnection| {
            let mut more = false;
            let started = std::time::Instant::now();
            if index_every.is_some() {
                match index::index_tail(connection, &write_lock, &shape, ROUND_LOGS) {
                    Ok(indexed) => more = indexed >= ROUND_LOGS,
                    Err(error) => tracing::warn!(%error, "indexing new logs failed; the next round retries"),
                }
            }
            let indexing = started.elapsed();
            if let Err(error) = checkpoint(connection, &write_lock) {
                tracing::warn!(%error, "WAL checkpoint failed; the next one retries");
            }
            tracing::debug!(?indexing, checkpoint = ?started.elapsed().saturating_sub(indexing), "background round");
            more
        };
        std::thread::Builder::new()
            .name("sluice-sqlite-background".into())
            .spawn(move || {
                let every = index_every.unwrap_or(CHECKPOINT_EVERY);
                let mut wait = every;
                while let Err(std::sync::mpsc::RecvTimeoutError::Timeout) = stopped.recv_timeout(wait) {
                    wait = if round(&mut connection) { Duration::ZERO } else { every };
                }
                round(&mut connection);
                let _ = connection.batch_execute("PRAGMA wal_checkpoint(TRUNCATE);");
            })
            .map_err(|error| backend(format!("cannot start the background thread: {error}")))?;
        Ok(Self { _running: running, _sealing: sealing })
    }
}

/// How often the sealer gathers the signatures of chunks written since into blocks
/// ([`index::seal_due`]), on a thread and connection of its own: building a block of 1,024
/// chunks takes it a second or so, which held the index's rounds back when they did it, and
/// inserts then indexed the tail themselves and the write queue filled (measured at 10M logs:
/// 597 batches answered 503).
const SEAL_EVERY: Duration = Duration::from_millis(500);

/// The most logs one round of the background thread indexes before it checkpoints.
const ROUND_LOGS: u64 = 16_384;

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
fn checkpoint(connection: &mut SqliteConnection, write_lock: &Mutex<()>) -> Result<(), DieselError> {
    let passive = || diesel::sql_query("PRAGMA wal_checkpoint(PASSIVE)");
    let mut result: Option<CheckpointResult> = passive().load(connection)?.pop();
    // Each pass copies what came in during the last; a few make the rest short.
    for _ in 0..3 {
        match &result {
            Some(done) if done.log_frames - done.checkpointed > 1_024 => result = passive().load(connection)?.pop(),
            _ => break,
        }
    }
    if result.is_some_and(|result| i64::from(result.log_frames) > WAL_RESTART_FRAMES) {
        let _lock = write_lock.lock().unwrap_or_else(PoisonError::into_inner);
        passive().execute(connection)?;
    }
    Ok(())
}
