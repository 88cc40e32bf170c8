//! The search index: one `log_chunks` row per chunk of logs, holding a Bloom filter of their
//! trigrams, instead of a GIN entry per trigram of every log.
//!
//! A chunk is a run of up to [`crate::PgOptions::index_chunk_rows`] logs of one workspace
//! written in one transaction; its logs carry its id (`logs.chunk_id`). Its `bloom` is a
//! [`BLOOM_BYTES`] filter of the distinct trigrams of their search text
//! ([`sluice_query::trigram_codes`]), each set at [`BLOOM_HASHES`] bits. Keeping a GIN index
//! (per log with pg_trgm, or per chunk over its trigram codes) was most of the database's work
//! per log (measured in docs/PERFORMANCE.md, issue 7); a filter is one value written with its
//! chunk, built in Rust. A search tests the filters of the workspace's chunks with `get_bit`
//! (no false negatives: a log holding a needle puts every trigram of it in its chunk's
//! filter), then reads the logs of the chunks that pass by `(workspace_id, chunk_id)` and
//! checks them exactly.
//!
//! Chunks are written in the transaction that writes their logs, so a committed log is always
//! findable (DECISIONS: read-after-write). [`index_unchunked`] indexes the logs stored before
//! the chunk index existed.

use diesel::prelude::*;
use diesel::result::Error as DieselError;
use diesel::sql_types::{Array, BigInt, Binary, Integer, Text, Uuid as SqlUuid};
use diesel_async::{AsyncConnection, AsyncPgConnection, RunQueryDsl};
use sluice_query::trigram_codes;
use uuid::Uuid;

/// The size of a chunk's filter: 32,768 bits, which hold a chunk's few thousand distinct
/// trigrams with a few per cent of false positives per trigram (a needle of several trigrams
/// compounds them), and keep a row in one page.
pub(crate) const BLOOM_BYTES: usize = 4_096;

/// Bits set per trigram.
pub(crate) const BLOOM_HASHES: usize = 3;

/// The filter's bits for a trigram code: slices of a 64-bit mix of it (splitmix64's
/// finalizer). Stored filters depend on it: it must never change.
pub(crate) fn bloom_bits(code: u64) -> [u32; BLOOM_HASHES] {
    let mut mixed = code;
    mixed = (mixed ^ (mixed >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
    mixed = (mixed ^ (mixed >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
    mixed ^= mixed >> 31;
    let mask = (BLOOM_BYTES * 8 - 1) as u64;
    [(mixed & mask) as u32, ((mixed >> 21) & mask) as u32, ((mixed >> 42) & mask) as u32]
}

/// One chunk as it is built.
pub(crate) struct Chunk {
    workspace: Uuid,
    min_ts: i64,
    max_ts: i64,
    logs: i32,
    bloom: Vec<u8>,
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
            self.chunks.push(Chunk { workspace, min_ts: ts, max_ts: ts, logs: 0, bloom: vec![0; BLOOM_BYTES] });
        }
        let index = self.chunks.len() - 1;
        let chunk = &mut self.chunks[index];
        chunk.logs += 1;
        chunk.min_ts = chunk.min_ts.min(ts);
        chunk.max_ts = chunk.max_ts.max(ts);
        trigram_codes(search_text, |code| {
            // As PostgreSQL's get_bit numbers them: bit n is bit n % 8 of byte n / 8.
            for bit in bloom_bits(code) {
                chunk.bloom[bit as usize / 8] |= 1 << (bit % 8);
            }
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
        diesel::sql_query(
            "INSERT INTO log_chunks (id, workspace_id, min_ts, max_ts, logs, bloom) \
             SELECT * FROM unnest($1::int8[], $2::uuid[], $3::int8[], $4::int8[], $5::int4[], $6::bytea[])",
        )
        .bind::<Array<BigInt>, _>(&ids)
        .bind::<Array<SqlUuid>, _>(self.chunks.iter().map(|chunk| chunk.workspace).collect::<Vec<_>>())
        .bind::<Array<BigInt>, _>(self.chunks.iter().map(|chunk| chunk.min_ts).collect::<Vec<_>>())
        .bind::<Array<BigInt>, _>(self.chunks.iter().map(|chunk| chunk.max_ts).collect::<Vec<_>>())
        .bind::<Array<Integer>, _>(self.chunks.iter().map(|chunk| chunk.logs).collect::<Vec<_>>())
        .bind::<Array<Binary>, _>(self.chunks.iter().map(|chunk| chunk.bloom.as_slice()).collect::<Vec<_>>())
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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn chunks_follow_workspaces_and_their_cap() {
        let (a, b) = (Uuid::from_u128(1), Uuid::from_u128(2));
        let mut chunker = Chunker::new(2);
        for (workspace, ts) in [(a, 5), (a, 3), (a, 9), (b, 1)] {
            chunker.add(workspace, ts, "text");
        }
        assert_eq!(chunker.chunk_of_rows(), [0, 0, 1, 2]);
        let spans: Vec<(Uuid, i64, i64, i32)> =
            chunker.chunks.iter().map(|chunk| (chunk.workspace, chunk.min_ts, chunk.max_ts, chunk.logs)).collect();
        assert_eq!(spans, [(a, 3, 5, 2), (a, 9, 9, 1), (b, 1, 1, 1)]);
    }

    /// Stored filters were built with these bits: the mix must never change.
    #[test]
    fn bloom_bits_are_stable_and_in_range() {
        let code = sluice_query::trigram_code(['a', 'b', 'c']);
        assert_eq!(bloom_bits(code), bloom_bits(code));
        assert_eq!(bloom_bits(0), [0, 0, 0]);
        assert_eq!(bloom_bits(1), [1_509, 26_752, 9_349]);
        for code in [1, code, u64::MAX >> 1] {
            assert!(bloom_bits(code).iter().all(|&bit| (bit as usize) < BLOOM_BYTES * 8));
        }
    }

    /// A chunk's filter holds every bit of every trigram of its logs' text.
    #[test]
    fn a_chunk_filter_holds_each_trigram_of_its_logs() {
        let mut chunker = Chunker::new(10);
        chunker.add(Uuid::nil(), 0, "connection refused");
        chunker.add(Uuid::nil(), 1, "disk full");
        let bloom = &chunker.chunks[0].bloom;
        let set = |bit: u32| bloom[bit as usize / 8] & (1 << (bit % 8)) != 0;
        for needle in ["refused", "disk full", "con"] {
            assert!(sluice_query::needle_trigrams(needle).into_iter().flat_map(bloom_bits).all(set), "{needle}");
        }
        let ones: u32 = bloom.iter().map(|byte| byte.count_ones()).sum();
        assert!(ones <= 3 * 23, "{ones} bits for at most 23 trigrams");
    }
}
