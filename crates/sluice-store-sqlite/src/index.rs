//! The search index: one FTS5 document per chunk of logs, not per log.
//!
//! A chunk is a run of consecutive logs (by `seq`) of one workspace, written in one
//! transaction, at most [`crate::SqliteOptions::index_chunk_rows`] of them. Its document holds
//! each distinct key of the folded text of its logs' searchable fields once
//! ([`sluice_store::grams`]): trigrams as hex tokens, runs as `r` tokens and the winnowed
//! six-grams of long runs as `g` tokens; a needle is looked up by its runs and long grams, or,
//! when it has none, by its trigrams (a rare identifier's trigrams are common; its runs and
//! six-grams are not). The document is one column of a `detail=none` table: a key costs a
//! chunk about two bytes (no positions, no columns); the fields a search names are checked
//! exactly, as every candidate is. Logs repeat their words, so a chunk of a few
//! hundred logs has a few thousand distinct trigrams where its logs have tens of thousands:
//! the index costs FTS5 a fraction of what a document per log cost (measured in
//! docs/PERFORMANCE.md, issue 7), and its lookups name chunks, whose logs a search then reads
//! by `seq` range and checks exactly.
//!
//! Chunks are written after their logs, off the request's path: [`index_tail`] indexes the logs
//! past the last chunk (the unindexed tail) in rounds of a few thousand, a few times a second
//! (`SqliteOptions::index_every`), and once when the store opens (logs of an older release, or
//! of a crash between a commit and its round). One FTS5 segment then holds many chunks instead
//! of one group commit's few: measured in docs/PERFORMANCE.md (issue 7). A search reads the
//! tail whole besides the chunks it finds, so a committed log is always findable (docs/API.md:
//! read-after-write).

use std::sync::Mutex;

use diesel::prelude::*;
use diesel::result::Error as DieselError;
use diesel::sql_types::{BigInt, Binary, Nullable, Text};

use crate::chunks::{Chunker, Indexed, write};
use crate::schema::log_chunks;

/// A log as [`index_tail`] reads it.
#[derive(QueryableByName)]
struct UnindexedRow {
    #[diesel(sql_type = BigInt)]
    seq: i64,
    #[diesel(sql_type = Binary)]
    workspace_id: Vec<u8>,
    #[diesel(sql_type = BigInt)]
    ts: i64,
    #[diesel(sql_type = Text)]
    message: String,
    #[diesel(sql_type = Nullable<Text>)]
    error_name: Option<String>,
    #[diesel(sql_type = Nullable<Text>)]
    error_stack: Option<String>,
    #[diesel(sql_type = Nullable<Text>)]
    data: Option<String>,
}

/// The most logs one round of [`index_tail`] reads at a time.
const TAIL_STEP: i64 = 2_048;

/// The most chunks [`index_tail`] writes in one transaction.
const CHUNKS_PER_WRITE: usize = 8;

/// The seq after every chunk's last log: the insert path numbers new logs from past both this
/// and the last log, so no chunk ever covers a log it was not built from. The logs past it
/// are the unindexed tail, which a search reads whole.
///
/// Chunks cover disjoint seq ranges and are keyed by their first, so the last chunk by key
/// ends last: one step down the primary key, where `max(last_seq)` read every chunk (this runs
/// in every insert, search and index round).
pub(crate) fn indexed_through(connection: &mut SqliteConnection) -> Result<i64, DieselError> {
    let last: Option<i64> =
        log_chunks::table.order(log_chunks::id.desc()).select(log_chunks::last_seq).first(connection).optional()?;
    Ok(last.unwrap_or(0))
}

/// Indexes the unindexed tail: the logs past the last chunk, [`TAIL_STEP`] at a time. Each
/// step reads and cuts its logs into chunks without the write lock (readers hold nobody
/// back in WAL mode), then takes `write_lock` and SQLite's for just the two statements that
/// write them. Stops when the tail is indexed or once `limit` logs are. Returns how many
/// logs it indexed.
pub(crate) fn index_tail(
    connection: &mut SqliteConnection,
    write_lock: &Mutex<()>,
    shape: &Shape,
    limit: u64,
) -> Result<u64, DieselError> {
    index_tail_hooked(connection, write_lock, shape, limit, &mut || {})
}

/// The sizes the index is cut into: logs a chunk, chunks a block; and whether [`index_tail`]
/// seals the blocks due itself (when each insert indexes its own logs; else the background's
/// sealer does, on a thread of its own, so the index's rounds never wait for a block), with
/// the store's signature cache, which forgets the chunks it seals.
#[derive(Clone)]
pub(crate) struct Shape {
    pub(crate) chunk_rows: usize,
    pub(crate) block_chunks: usize,
    pub(crate) seal: bool,
    pub(crate) signatures: sluice_store::signature::SignatureCache,
}

impl Shape {
    pub(crate) fn of(options: &crate::SqliteOptions, signatures: &sluice_store::signature::SignatureCache) -> Self {
        Self {
            chunk_rows: options.index_chunk_rows,
            block_chunks: options.index_block_chunks,
            seal: options.index_every.is_none(),
            signatures: signatures.clone(),
        }
    }
}

/// [`index_tail`], calling `after_read` between each step's read and its writes: the one
/// window in which another round (or retention) can change the chunks under this one, which
/// a test uses to make that happen every time.
fn index_tail_hooked(
    connection: &mut SqliteConnection,
    write_lock: &Mutex<()>,
    shape: &Shape,
    limit: u64,
    after_read: &mut dyn FnMut(),
) -> Result<u64, DieselError> {
    let mut indexed = 0_u64;
    let mut written: Vec<Vec<u8>> = Vec::new();
    let result = index_steps(connection, write_lock, shape.chunk_rows, limit, after_read, &mut indexed, &mut written);
    if shape.seal {
        written.sort_unstable();
        written.dedup();
        crate::blocks::seal_blocks(connection, write_lock, &written, shape.block_chunks, &shape.signatures)?;
    }
    result.map(|()| indexed)
}

/// The steps of [`index_tail_hooked`]: adds the logs it indexes to `indexed` and the
/// workspaces it writes chunks of to `written`.
fn index_steps(
    connection: &mut SqliteConnection,
    write_lock: &Mutex<()>,
    chunk_rows: usize,
    limit: u64,
    after_read: &mut dyn FnMut(),
    indexed: &mut u64,
    written_for: &mut Vec<Vec<u8>>,
) -> Result<(), DieselError> {
    'steps: loop {
        let (after, rows) = connection.transaction(|connection| {
            let after = indexed_through(connection)?;
            let rows: Vec<UnindexedRow> = diesel::sql_query(
                "SELECT seq, workspace_id, ts, message, error_name, error_stack, data FROM logs \
                 WHERE seq > ?1 ORDER BY seq LIMIT ?2",
            )
            .bind::<BigInt, _>(after)
            .bind::<BigInt, _>(TAIL_STEP)
            .load(connection)?;
            Ok::<_, DieselError>((after, rows))
        })?;
        if rows.is_empty() {
            return Ok(());
        }
        after_read();
        let mut chunker = Chunker::new(chunk_rows);
        for row in &rows {
            chunker.add(&Indexed {
                seq: row.seq,
                workspace: &row.workspace_id,
                ts: row.ts,
                fields: [
                    Some(row.message.as_str()),
                    row.error_name.as_deref(),
                    row.error_stack.as_deref(),
                    row.data.as_deref(),
                ],
            });
        }
        let written = chunker.written();
        // A few chunks a transaction, so the inserts waiting behind each wait a few ms.
        let mut expected = after;
        for part in written.chunks(CHUNKS_PER_WRITE) {
            let wrote = {
                let _lock = write_lock.lock().unwrap_or_else(std::sync::PoisonError::into_inner);
                connection.immediate_transaction(|connection| {
                    // Retention may have dropped the last chunk meanwhile: read again next round.
                    if indexed_through(connection)? != expected {
                        return Ok(false);
                    }
                    write(connection, part)?;
                    Ok::<_, DieselError>(true)
                })?
            };
            if !wrote {
                // Another round (the store's thread, or a sweep's) wrote chunks meanwhile, or
                // retention dropped the last one: start again from the chunks as they are now.
                // Returning here would leave the tail unindexed for a caller that needs all of
                // it (retention deletes only indexed logs, so it would delete too few).
                *indexed += rows.partition_point(|row| row.seq <= expected) as u64;
                continue 'steps;
            }
            expected = part.last().map_or(expected, |chunk| chunk.last_seq());
            written_for.extend(part.iter().map(|chunk| chunk.workspace().to_vec()));
            // Let an insert waiting for the lock have it before the next part.
            std::thread::yield_now();
        }
        *indexed += rows.len() as u64;
        if (rows.len() as i64) < TAIL_STEP || *indexed >= limit {
            return Ok(());
        }
    }
}

#[cfg(test)]
mod tests {
    use std::time::Duration;

    use diesel::connection::SimpleConnection;
    use sluice_model::{Plan, Workspace};
    use sluice_query::SearchField;
    use sluice_store::prelude::*;
    use sluice_store::signature::signature_cache;
    use sluice_store::{LogFilter, Page, Search};

    use super::*;
    use crate::schema::{log_block_bands, log_blocks, log_chunk_signatures};
    use crate::{SqliteOptions, SqliteStore};

    /// Two sealers (as two processes would: each its own connection and lock) race for the same
    /// blocks: each block is written once, by the one that claimed it, and every chunk is found.
    #[test]
    fn sealers_racing_for_the_same_blocks_leave_every_chunk_findable() {
        const T0: i64 = 1_700_000_000_000;
        let runtime = tokio::runtime::Builder::new_current_thread().enable_all().build().expect("runtime");
        let _runtime = runtime.enter();
        let dir = tempfile::tempdir().expect("temp dir");
        let path = dir.path().join("race.db");
        // Each insert indexes its own logs; no block is due at its size.
        let options = SqliteOptions {
            index_chunk_rows: 2,
            index_block_chunks: sluice_store::signature::BLOCK_CHUNKS,
            index_every: None,
            ..SqliteOptions::default()
        };
        let store = SqliteStore::open_with(&path, &options).expect("open");
        let workspace = Workspace::new("w", Plan::Enterprise, T0);
        runtime.block_on(store.create_workspace(&workspace)).expect("workspace");
        let order = |n: i64| format!("ORD-{:07}", 3_000_000 + n * 7_919);
        let logs: Vec<_> =
            (0..48).map(|n| sluice_store::conformance::log(&format!("order {}", order(n)), T0 + n)).collect();
        runtime.block_on(store.insert_logs(workspace.id, &logs)).expect("insert");
        let connect = || {
            let mut connection = SqliteConnection::establish(path.to_str().expect("utf-8")).expect("connect");
            connection.batch_execute("PRAGMA busy_timeout = 5000;").expect("pragma");
            connection
        };
        // 24 chunks: six blocks of four, sealed by whichever sealer claims each first.
        std::thread::scope(|scope| {
            for _ in 0..2 {
                let mut connection = connect();
                scope.spawn(move || {
                    crate::blocks::seal_due(&mut connection, &Mutex::new(()), 4, &signature_cache()).expect("seal")
                });
            }
        });
        let mut connection = connect();
        crate::blocks::seal_due(&mut connection, &Mutex::new(()), 4, &signature_cache()).expect("seal what is left");
        let blocks: Vec<(i64, Option<i64>)> = log_blocks::table
            .order(log_blocks::id)
            .select((log_blocks::id, log_blocks::claimed_at))
            .load(&mut connection)
            .expect("blocks");
        assert_eq!(blocks.len(), 6, "{blocks:?}");
        assert!(blocks.iter().all(|(_, claimed)| claimed.is_none()), "{blocks:?}");
        let waiting: i64 = log_chunk_signatures::table.count().get_result(&mut connection).expect("count");
        assert_eq!(waiting, 0);
        let bands: i64 = log_block_bands::table.count().get_result(&mut connection).expect("count");
        let per_block: i64 = log_block_bands::table
            .filter(log_block_bands::block_id.eq(blocks[0].0))
            .count()
            .get_result(&mut connection)
            .expect("count");
        assert_eq!(bands, 6 * per_block, "every block's bands once");
        let search = |raw: &str| Search {
            query: sluice_query::Query::parse(raw).expect("query"),
            fields: vec![SearchField::Message],
        };
        for n in 0..48 {
            let page = runtime
                .block_on(store.search_logs(
                    workspace.id,
                    &search(&order(n)),
                    &LogFilter::default(),
                    Page { limit: 10, offset: 0 },
                ))
                .expect("search");
            assert_eq!(page.logs.len(), 1, "order {n}");
        }
    }

    /// Another round indexes the logs this one has read, between its read and its write, and
    /// more logs come in: this round starts again from the chunks as they are and indexes the
    /// new ones, so a caller that needs the whole tail indexed (retention) gets it.
    #[test]
    fn a_round_another_overtakes_starts_again_and_indexes_the_whole_tail() {
        const T0: i64 = 1_700_000_000_000;
        let runtime = tokio::runtime::Builder::new_current_thread().enable_all().build().expect("runtime");
        // The store's pooled connections are closed on the runtime, when it drops at the end.
        let _runtime = runtime.enter();
        let dir = tempfile::tempdir().expect("temp dir");
        let path = dir.path().join("race.db");
        // Nothing indexes but the test: inserts leave the tail alone below their bound, and the
        // background's first round is an hour away.
        let options = SqliteOptions {
            index_chunk_rows: 2,
            index_every: Some(Duration::from_secs(3600)),
            ..SqliteOptions::default()
        };
        let store = SqliteStore::open_with(&path, &options).expect("open");
        let workspace = Workspace::new("w", Plan::Enterprise, T0);
        runtime.block_on(store.create_workspace(&workspace)).expect("workspace");
        let insert = |from: i64, count: i64| {
            let logs: Vec<_> =
                (from..from + count).map(|n| sluice_store::conformance::log(&format!("number {n}"), T0 + n)).collect();
            runtime.block_on(store.insert_logs(workspace.id, &logs)).expect("insert");
        };
        let connect = || {
            let mut connection = SqliteConnection::establish(path.to_str().expect("utf-8")).expect("connect");
            connection.batch_execute("PRAGMA busy_timeout = 5000;").expect("pragma");
            connection
        };
        insert(0, 10);
        let (mut this, mut other) = (connect(), connect());
        let write_lock = Mutex::new(());
        let mut overtaken = false;
        let shape = Shape { chunk_rows: 2, block_chunks: 3, seal: true, signatures: signature_cache() };
        let indexed = index_tail_hooked(&mut this, &write_lock, &shape, u64::MAX, &mut || {
            if !overtaken {
                overtaken = true;
                assert_eq!(index_tail(&mut other, &write_lock, &shape, u64::MAX).expect("other round"), 10);
                insert(10, 6);
            }
        })
        .expect("this round");
        assert!(overtaken);
        assert_eq!(indexed, 6, "this round indexes the six logs that came in after the other round");
        assert_eq!(indexed_through(&mut this).expect("read"), 16, "no log left unindexed");
        // Disjoint chunks of two, one after another: five from the other round, three from this.
        let spans: Vec<(i64, i64)> = log_chunks::table
            .order(log_chunks::id)
            .select((log_chunks::id, log_chunks::last_seq))
            .load(&mut this)
            .expect("chunks");
        assert_eq!(spans, (0..8).map(|n| (2 * n + 1, 2 * n + 2)).collect::<Vec<_>>());
    }
}
