//! The search index: one `log_chunks` row per chunk of logs, not a GIN entry per trigram of
//! every log.
//!
//! A chunk is a run of up to [`crate::PgOptions::index_chunk_rows`] logs of one workspace
//! written in one transaction; its logs carry its id (`logs.chunk_id`), and its `trigrams`
//! hold each distinct trigram of their search text once ([`sluice_query::trigram_codes`]),
//! under a GIN index. Logs repeat their words, so a chunk of a few hundred logs has a few
//! thousand distinct trigrams where its logs have tens of thousands: the GIN index takes a
//! fraction of the entries a per-log trigram index took (measured in docs/PERFORMANCE.md,
//! issue 7). A search finds candidate chunks by their trigrams, then reads their logs by
//! `(workspace_id, chunk_id)` and checks them exactly.
//!
//! Chunks are written in the transaction that writes their logs, so a committed log is always
//! findable (DECISIONS: read-after-write). [`index_unchunked`] indexes the logs stored before
//! the chunk index existed.

use std::collections::HashSet;

use diesel::prelude::*;
use diesel::result::Error as DieselError;
use diesel::sql_types::{Array, BigInt, Integer, Text, Uuid as SqlUuid};
use diesel_async::{AsyncConnection, AsyncPgConnection, RunQueryDsl};
use sluice_query::trigram_codes;
use uuid::Uuid;

/// The distinct trigram codes of a chunk.
type Codes = HashSet<u64, foldhash::fast::RandomState>;

/// One chunk as it is built.
pub(crate) struct Chunk {
    workspace: Uuid,
    min_ts: i64,
    max_ts: i64,
    logs: i32,
    codes: Codes,
}

/// Cuts rows, given workspace by workspace, into chunks, and numbers each row's chunk.
pub(crate) struct Chunker {
    max_rows: i32,
    chunks: Vec<Chunk>,
    /// For each row added, the index of its chunk in `chunks`.
    of_row: Vec<usize>,
}

impl Chunker {
    pub(crate) fn new(max_rows: usize) -> Self {
        Self { max_rows: i32::try_from(max_rows.max(1)).unwrap_or(i32::MAX), chunks: Vec::new(), of_row: Vec::new() }
    }

    /// Adds the next row: it joins the last chunk when that is of its workspace and has room.
    pub(crate) fn add(&mut self, workspace: Uuid, ts: i64, search_text: &str) {
        let joins = self.chunks.last().is_some_and(|chunk| chunk.workspace == workspace && chunk.logs < self.max_rows);
        if !joins {
            self.chunks.push(Chunk { workspace, min_ts: ts, max_ts: ts, logs: 0, codes: Codes::default() });
        }
        let index = self.chunks.len() - 1;
        let chunk = &mut self.chunks[index];
        chunk.logs += 1;
        chunk.min_ts = chunk.min_ts.min(ts);
        chunk.max_ts = chunk.max_ts.max(ts);
        trigram_codes(search_text, |code| {
            chunk.codes.insert(code);
        });
        self.of_row.push(index);
    }

    /// For each row added, in order, the index of its chunk in [`Chunker::write`]'s answer.
    pub(crate) fn chunk_of_rows(&self) -> &[usize] {
        &self.of_row
    }

    /// Writes the chunks; returns their ids, in order.
    pub(crate) async fn write(&self, connection: &mut AsyncPgConnection) -> Result<Vec<i64>, DieselError> {
        if self.chunks.is_empty() {
            return Ok(Vec::new());
        }
        let ids: Vec<Id> = diesel::sql_query("SELECT nextval('log_chunk_ids') AS id FROM generate_series(1, $1)")
            .bind::<Integer, _>(i32::try_from(self.chunks.len()).unwrap_or(i32::MAX))
            .load(connection)
            .await?;
        if ids.len() != self.chunks.len() {
            return Err(DieselError::QueryBuilderError("the chunk id sequence gave too few ids".into()));
        }
        let ids: Vec<i64> = ids.into_iter().map(|id| id.id).collect();
        // Every chunk's codes in one array; each chunk takes its slice `lo..=hi` (1-based).
        let mut codes = Vec::new();
        let (mut lo, mut hi) = (Vec::new(), Vec::new());
        for chunk in &self.chunks {
            lo.push(i32::try_from(codes.len() + 1).unwrap_or(i32::MAX));
            // Codes are at most 63 bits: they fit a BIGINT as they are.
            codes.extend(chunk.codes.iter().map(|&code| code as i64));
            hi.push(i32::try_from(codes.len()).unwrap_or(i32::MAX));
        }
        diesel::sql_query(
            "INSERT INTO log_chunks (id, workspace_id, min_ts, max_ts, logs, trigrams) \
             SELECT c.id, c.workspace_id, c.min_ts, c.max_ts, c.logs, ($8::int8[])[c.lo:c.hi] \
             FROM unnest($1::int8[], $2::uuid[], $3::int8[], $4::int8[], $5::int4[], $6::int4[], $7::int4[]) \
             AS c(id, workspace_id, min_ts, max_ts, logs, lo, hi)",
        )
        .bind::<Array<BigInt>, _>(&ids)
        .bind::<Array<SqlUuid>, _>(self.chunks.iter().map(|chunk| chunk.workspace).collect::<Vec<_>>())
        .bind::<Array<BigInt>, _>(self.chunks.iter().map(|chunk| chunk.min_ts).collect::<Vec<_>>())
        .bind::<Array<BigInt>, _>(self.chunks.iter().map(|chunk| chunk.max_ts).collect::<Vec<_>>())
        .bind::<Array<Integer>, _>(self.chunks.iter().map(|chunk| chunk.logs).collect::<Vec<_>>())
        .bind::<Array<Integer>, _>(lo)
        .bind::<Array<Integer>, _>(hi)
        .bind::<Array<BigInt>, _>(codes)
        .execute(connection)
        .await?;
        Ok(ids)
    }
}

#[derive(QueryableByName)]
struct Id {
    #[diesel(sql_type = BigInt)]
    id: i64,
}

/// A log without a chunk, as [`index_unchunked`] reads it.
#[derive(QueryableByName)]
struct Unchunked {
    #[diesel(sql_type = SqlUuid)]
    workspace_id: Uuid,
    #[diesel(sql_type = BigInt)]
    ts: i64,
    #[diesel(sql_type = SqlUuid)]
    id: Uuid,
    #[diesel(sql_type = Text)]
    search_text: String,
}

/// Logs indexed per transaction by [`index_unchunked`].
const UNCHUNKED_STEP: i64 = 20_000;

/// Advisory lock held while indexing logs without a chunk (one process at a time).
const UNCHUNKED_LOCK: i64 = 7_355_911;

/// Indexes the logs without a chunk (stored before the chunk index existed; inserts chunk
/// their own), a transaction per [`UNCHUNKED_STEP`], under an advisory lock so processes
/// starting together do it once. Returns how many.
pub(crate) async fn index_unchunked(connection: &mut AsyncPgConnection, chunk_rows: usize) -> Result<u64, DieselError> {
    let mut indexed = 0_u64;
    loop {
        let step = connection
            .transaction::<_, DieselError, _>(async move |connection: &mut AsyncPgConnection| {
                diesel::sql_query("SELECT pg_advisory_xact_lock($1)")
                    .bind::<BigInt, _>(UNCHUNKED_LOCK)
                    .execute(connection)
                    .await?;
                let rows: Vec<Unchunked> = diesel::sql_query(
                    "SELECT workspace_id, ts, id, search_text FROM logs WHERE chunk_id IS NULL \
                     ORDER BY workspace_id, ts, id LIMIT $1",
                )
                .bind::<BigInt, _>(UNCHUNKED_STEP)
                .load(connection)
                .await?;
                let mut chunker = Chunker::new(chunk_rows);
                for row in &rows {
                    chunker.add(row.workspace_id, row.ts, &row.search_text);
                }
                let ids = chunker.write(connection).await?;
                diesel::sql_query(
                    "UPDATE logs SET chunk_id = u.chunk_id \
                     FROM unnest($1::uuid[], $2::int8[], $3::uuid[], $4::int8[]) AS u(workspace_id, ts, id, chunk_id) \
                     WHERE logs.workspace_id = u.workspace_id AND logs.ts = u.ts AND logs.id = u.id",
                )
                .bind::<Array<SqlUuid>, _>(rows.iter().map(|row| row.workspace_id).collect::<Vec<_>>())
                .bind::<Array<BigInt>, _>(rows.iter().map(|row| row.ts).collect::<Vec<_>>())
                .bind::<Array<SqlUuid>, _>(rows.iter().map(|row| row.id).collect::<Vec<_>>())
                .bind::<Array<BigInt>, _>(chunker.chunk_of_rows().iter().map(|&chunk| ids[chunk]).collect::<Vec<_>>())
                .execute(connection)
                .await?;
                Ok(rows.len() as u64)
            })
            .await?;
        indexed += step;
        if step < UNCHUNKED_STEP as u64 {
            return Ok(indexed);
        }
    }
}
