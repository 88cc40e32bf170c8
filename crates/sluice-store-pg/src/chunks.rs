//! The search index: one `log_chunks` row per chunk of logs, with a signature of their text,
//! instead of a GIN entry per trigram of every log.
//!
//! A chunk is a run of up to [`crate::PgOptions::index_chunk_rows`] logs of one workspace
//! written in one transaction; its logs carry its id (`logs.chunk_id`). Its signature
//! ([`sluice_store::signature`], in `log_chunk_signatures` until it joins a block:
//! [`crate::signatures`]) is a Bloom filter of the trigrams inside the runs of their search
//! text ([`sluice_store::grams::run_trigram_codes`]) and of the runs holding a digit, their
//! starts and long grams ([`sluice_store::grams::signature_keys`]). Keeping a GIN index (per
//! log with pg_trgm, or per chunk over its trigram codes) was most of the database's work per
//! log (measured in docs/PERFORMANCE.md, issue 7); a signature is one value written with its
//! chunk, built in Rust. A search finds the chunks whose signatures may hold its needles (no
//! false negatives), then reads their logs by `(workspace_id, chunk_id)` and checks them
//! exactly.
//!
//! A chunk's `facets` is a smaller filter ([`FACET_BYTES`]) of the values its logs hold in the
//! fields lists filter on most (level, environment, source, dataset, user id: [`Facets`]).
//! Those filters have no index entry per log: a filtered list reads the chunks whose facets
//! may hold the value, newest first, and the logs of each by `(workspace_id, chunk_id,
//! user_id)`. A B-tree entry per log in each of five indexes was most of the database's work
//! per log (measured in docs/PERFORMANCE.md, issue 7).
//!
//! A chunk's `slots` holds its logs' ids in slot order and a Bloom filter per log of its
//! signature keys, bit-sliced ([`sluice_store::log_keys`]): a search for a rare needle reads
//! the ids and its keys' slices ([`crate::chunk_slots`]), then only the logs they let through,
//! by id.
//!
//! Chunks are written in the transaction that writes their logs, so a committed log is always
//! findable (docs/API.md: read-after-write). [`index_unchunked`] indexes the logs stored before
//! the chunk index existed.

use diesel::prelude::*;
use diesel::result::Error as DieselError;
use diesel::sql_types::{Array, BigInt, Binary, Integer, Text, Uuid as SqlUuid};
use diesel_async::{AsyncConnection, AsyncPgConnection, RunQueryDsl};
use sluice_store::StoreError;
use sluice_store::log_keys::LogKeys;

use crate::chunk_slots::{ID_BYTES, slots_stored};
use crate::connection::Deadline;
use sluice_store::signature::Signature;
use uuid::Uuid;

/// Bits set per facet value.
pub(crate) const BLOOM_HASHES: usize = 3;

/// The smallest stored filter. A chunk's filters are built at full size ([`BLOOM_BYTES`],
/// [`FACET_BYTES`]), then stored folded ([`folded`]) to the smallest power of two of at least
/// [`BITS_PER_ITEM`] bits per distinct trigram or value they hold, so a chunk of one short log
/// stores 64-byte filters, not 4.5 KiB of them.
const MIN_FILTER_BYTES: usize = 64;

/// The bits a stored filter keeps per distinct item: at least 16, with three bits each, about
/// 0.5 % of false positives per item, under a full chunk's rate.
const BITS_PER_ITEM: f64 = 16.0;

/// The size of a chunk's facet filter: 4,096 bits, for the few hundred distinct values a
/// chunk's logs hold in the five facet fields at most, with about one per cent of false
/// positives for the most distinct (a user id per log of a chunk of 256).
pub(crate) const FACET_BYTES: usize = 512;

/// The filterable fields a chunk's facet filter holds, each tagged so equal text in two fields
/// sets different bits. Stored filters depend on the tags: they must never change.
#[derive(Clone, Copy)]
pub(crate) enum Facet {
    Level = 1,
    Environment = 2,
    Source = 3,
    Dataset = 4,
    User = 5,
}

/// The values of one log in the facet fields, as stored ([`crate::text`]).
pub(crate) struct Facets<'a> {
    pub(crate) level: &'a str,
    pub(crate) environment: &'a str,
    pub(crate) source: &'a str,
    pub(crate) dataset: &'a str,
    pub(crate) user_id: Option<&'a str>,
}

/// The facet filter's bits for `value` of `facet`: slices of the first 64 bits of the BLAKE3
/// hash of the tag and the value. Stored filters depend on it: it must never change.
pub(crate) fn facet_bits(facet: Facet, value: &str) -> [u32; BLOOM_HASHES] {
    let mut hasher = blake3::Hasher::new();
    hasher.update(&[facet as u8]);
    hasher.update(value.as_bytes());
    let hash = hasher.finalize();
    let mut first = [0_u8; 8];
    first.copy_from_slice(&hash.as_bytes()[..8]);
    let mixed = u64::from_le_bytes(first);
    let mask = (FACET_BYTES * 8 - 1) as u64;
    [(mixed & mask) as u32, ((mixed >> 21) & mask) as u32, ((mixed >> 42) & mask) as u32]
}

/// `filter` as stored: folded in halves, each byte OR'ed with its twin, down to the smallest
/// power of two of bytes, at least [`MIN_FILTER_BYTES`], that keeps [`BITS_PER_ITEM`] bits per
/// item it holds (estimated from its set bits). Bit `n` of the full filter is bit `n % bits` of
/// the folded one, so a search tests `get_bit(filter, n % (octet_length(filter) * 8))`, right
/// for every size (and for the full-size filters stored before filters were folded).
pub(crate) fn folded(filter: &[u8]) -> Vec<u8> {
    let bits = (filter.len() * 8) as f64;
    let set: u32 = filter.iter().map(|byte| byte.count_ones()).sum();
    // The expected set bits of n items at k bits each: m (1 - e^(-kn/m)); solved for n.
    let fraction = (f64::from(set) / bits).min(1.0 - 1.0 / bits);
    let items = -bits / BLOOM_HASHES as f64 * (1.0 - fraction).ln();
    let wanted = (items * BITS_PER_ITEM / 8.0).ceil();
    let mut folded = filter.to_vec();
    let mut len = folded.len();
    while len / 2 >= MIN_FILTER_BYTES && (len / 2) as f64 >= wanted {
        len /= 2;
        let (low, high) = folded.split_at_mut(len);
        for (byte, twin) in low.iter_mut().zip(high.iter()) {
            *byte |= twin;
        }
        folded.truncate(len);
    }
    folded
}

/// Sets `bits` in `filter`, as PostgreSQL's get_bit numbers them: bit n is bit n % 8 of byte
/// n / 8.
fn set_bits(filter: &mut [u8], bits: [u32; BLOOM_HASHES]) {
    for bit in bits {
        filter[bit as usize / 8] |= 1 << (bit % 8);
    }
}

/// One chunk as it is built.
pub(crate) struct Chunk {
    workspace: Uuid,
    min_ts: i64,
    max_ts: i64,
    logs: i32,
    /// The signature as stored ([`Signature::folded`]), once the chunk is complete (the last
    /// chunk's is [`Chunker::signature`] until it is written).
    signature: Vec<u8>,
    /// Its logs' ids, slot by slot, then (once complete) their key filters:
    /// [`crate::chunk_slots`].
    slots: Vec<u8>,
    facets: Vec<u8>,
    /// The facet values already in `facets`, so a value repeated through the chunk (its
    /// level, its source) is hashed once.
    seen: [foldhash::HashSet<String>; 5],
}

/// Cuts rows, given workspace by workspace, into chunks, and numbers each row's chunk.
pub(crate) struct Chunker {
    max_rows: i32,
    chunks: Vec<Chunk>,
    /// For each row added, the index of its chunk in `chunks`.
    of_row: Vec<usize>,
    /// The last chunk's signature as it is built, at full size: one for every chunk in turn,
    /// so its 64 KiB are allocated once, not for each chunk (fresh ones were page faults: a
    /// few per cent of the machine under ingest, docs/PERFORMANCE.md, issue 24).
    signature: Signature,
    /// The last chunk's per-log key filters as they are built, kept as `signature` is.
    log_keys: LogKeys,
}

impl Chunker {
    pub(crate) fn new(max_rows: usize) -> Self {
        Self {
            max_rows: i32::try_from(max_rows.max(1)).unwrap_or(i32::MAX),
            chunks: Vec::new(),
            of_row: Vec::new(),
            signature: Signature::new(),
            log_keys: LogKeys::new(),
        }
    }

    /// Adds the next row (log `id`): it joins the last chunk when that is of its workspace and
    /// has room.
    pub(crate) fn add(&mut self, workspace: Uuid, ts: i64, id: Uuid, search_text: &str, facets: &Facets<'_>) {
        let joins = self.chunks.last().is_some_and(|chunk| chunk.workspace == workspace && chunk.logs < self.max_rows);
        if !joins {
            self.finish_last();
            self.chunks.push(Chunk {
                workspace,
                min_ts: ts,
                max_ts: ts,
                logs: 0,
                signature: Vec::new(),
                slots: Vec::with_capacity(usize::try_from(self.max_rows).unwrap_or(0).min(256) * ID_BYTES),
                facets: vec![0; FACET_BYTES],
                seen: Default::default(),
            });
        }
        let index = self.chunks.len() - 1;
        let chunk = &mut self.chunks[index];
        chunk.logs += 1;
        chunk.min_ts = chunk.min_ts.min(ts);
        chunk.max_ts = chunk.max_ts.max(ts);
        chunk.slots.extend_from_slice(id.as_bytes());
        let log_keys = &mut self.log_keys;
        log_keys.start_log();
        self.signature.add_text_with_trigrams_and_keys(search_text, |key| log_keys.insert(key));
        let values = [
            (Facet::Level, Some(facets.level)),
            (Facet::Environment, Some(facets.environment)),
            (Facet::Source, Some(facets.source)),
            (Facet::Dataset, Some(facets.dataset)),
            (Facet::User, facets.user_id),
        ];
        for (facet, value) in values {
            let Some(value) = value else { continue };
            let seen = &mut chunk.seen[facet as usize - 1];
            if !seen.contains(value) {
                set_bits(&mut chunk.facets, facet_bits(facet, value));
                seen.insert(value.to_owned());
            }
        }
        self.of_row.push(index);
    }

    /// Each chunk's `slots` as stored, the last chunk completed.
    #[cfg(test)]
    pub(crate) fn finished_slots(&mut self) -> Vec<&[u8]> {
        self.finish_last();
        self.chunks.iter().map(|chunk| chunk.slots.as_slice()).collect()
    }

    /// For each row added, in order, the index of its chunk in [`Chunker::write`]'s answer.
    pub(crate) fn chunk_of_rows(&self) -> &[usize] {
        &self.of_row
    }

    /// Completes the last chunk, if any and not complete yet: its signature and key filters
    /// as stored, the buffers they were built in emptied for the next.
    fn finish_last(&mut self) {
        if let Some(last) = self.chunks.last_mut()
            && self.log_keys.logs() > 0
        {
            last.signature = self.signature.folded();
            self.signature.clear();
            last.slots = slots_stored(&last.slots, &self.log_keys);
            self.log_keys.clear();
        }
    }

    /// The chunks' signatures as stored, in order.
    fn signatures(&mut self) -> Vec<Vec<u8>> {
        self.finish_last();
        self.chunks.iter_mut().map(|chunk| std::mem::take(&mut chunk.signature)).collect()
    }

    /// Writes the chunks (once: their signatures are taken); returns their ids, in order.
    /// Their signatures are kept in `cache` when given, so a search need not read them back
    /// and a seal takes them from there (those of a transaction that rolls back are under ids
    /// never used again, and go as the cache fills); what is written of them is then folded
    /// once more ([`crate::signatures::insert`]).
    pub(crate) async fn write(
        &mut self,
        connection: &mut AsyncPgConnection,
        cache: Option<&sluice_store::signature::SignatureCache>,
    ) -> Result<Vec<i64>, DieselError> {
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
        let signatures = self.signatures();
        let facets: Vec<Vec<u8>> = self.chunks.iter().map(|chunk| folded(&chunk.facets)).collect();
        let workspaces: Vec<Uuid> = self.chunks.iter().map(|chunk| chunk.workspace).collect();
        // `bloom`, the trigram filter of the index before signatures, is left empty.
        diesel::sql_query(
            "INSERT INTO log_chunks (id, workspace_id, min_ts, max_ts, logs, bloom, facets, signed, slots) \
             SELECT id, workspace_id, min_ts, max_ts, logs, '', facets, true, slots \
             FROM unnest($1::int8[], $2::uuid[], $3::int8[], $4::int8[], $5::int4[], $6::bytea[], $7::bytea[]) \
             AS u(id, workspace_id, min_ts, max_ts, logs, facets, slots)",
        )
        .bind::<Array<BigInt>, _>(&ids)
        .bind::<Array<SqlUuid>, _>(&workspaces)
        .bind::<Array<BigInt>, _>(self.chunks.iter().map(|chunk| chunk.min_ts).collect::<Vec<_>>())
        .bind::<Array<BigInt>, _>(self.chunks.iter().map(|chunk| chunk.max_ts).collect::<Vec<_>>())
        .bind::<Array<Integer>, _>(self.chunks.iter().map(|chunk| chunk.logs).collect::<Vec<_>>())
        .bind::<Array<Binary>, _>(facets.iter().map(Vec::as_slice).collect::<Vec<_>>())
        .bind::<Array<Binary>, _>(self.chunks.iter().map(|chunk| chunk.slots.as_slice()).collect::<Vec<_>>())
        .execute(connection)
        .await?;
        let digests = crate::signatures::insert(connection, &ids, &workspaces, &signatures, cache.is_some()).await?;
        if let Some(cache) = cache {
            // The signature itself, under the digest of what was written (folded once more).
            for ((&id, digest), signature) in ids.iter().zip(digests).zip(signatures) {
                cache.insert(id, std::sync::Arc::new((digest, signature)));
            }
        }
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
    #[diesel(sql_type = Text)]
    level: String,
    #[diesel(sql_type = Text)]
    environment: String,
    #[diesel(sql_type = Text)]
    source: String,
    #[diesel(sql_type = Text)]
    dataset: String,
    #[diesel(sql_type = diesel::sql_types::Nullable<Text>)]
    user_id: Option<String>,
}

impl Unchunked {
    fn facets(&self) -> Facets<'_> {
        Facets {
            level: &self.level,
            environment: &self.environment,
            source: &self.source,
            dataset: &self.dataset,
            user_id: self.user_id.as_deref(),
        }
    }
}

/// Logs indexed per transaction by [`index_unchunked`].
const UNCHUNKED_STEP: i64 = 20_000;

/// Advisory lock held while indexing logs without a chunk (one process at a time).
const UNCHUNKED_LOCK: i64 = 7_355_911;

/// Takes [`UNCHUNKED_LOCK`] for the transaction under way.
pub(crate) async fn index_lock(connection: &mut AsyncPgConnection) -> Result<(), DieselError> {
    diesel::sql_query("SELECT pg_advisory_xact_lock($1)").bind::<BigInt, _>(UNCHUNKED_LOCK).execute(connection).await?;
    Ok(())
}

/// Indexes the logs without a chunk (stored before the chunk index existed; inserts chunk
/// their own), a transaction per [`UNCHUNKED_STEP`], each within `deadline`, under an advisory
/// lock so processes starting together do it once. Returns how many.
pub(crate) async fn index_unchunked(
    connection: &mut AsyncPgConnection,
    chunk_rows: usize,
    deadline: Deadline,
) -> Result<u64, StoreError> {
    let mut indexed = 0_u64;
    loop {
        let step = deadline
            .step(connection.transaction::<_, DieselError, _>(async move |connection: &mut AsyncPgConnection| {
                index_lock(connection).await?;
                let rows: Vec<Unchunked> = diesel::sql_query(format!(
                    "SELECT workspace_id, ts, id, {} AS search_text, level, environment, source, dataset, \
                         user_id FROM logs WHERE chunk_id IS NULL ORDER BY workspace_id, ts, id LIMIT $1",
                    crate::rows::SEARCH_TEXT_SQL
                ))
                .bind::<BigInt, _>(UNCHUNKED_STEP)
                .load(connection)
                .await?;
                let mut chunker = Chunker::new(chunk_rows);
                for row in &rows {
                    chunker.add(row.workspace_id, row.ts, row.id, &row.search_text, &row.facets());
                }
                let ids = chunker.write(connection, None).await?;
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
            }))
            .await?;
        indexed += step;
        if step < UNCHUNKED_STEP as u64 {
            return Ok(indexed);
        }
    }
}

/// A chunk not signed yet, as [`sign_unsigned`] reads it.
#[derive(QueryableByName)]
struct UnsignedChunk {
    #[diesel(sql_type = BigInt)]
    id: i64,
    #[diesel(sql_type = SqlUuid)]
    workspace_id: Uuid,
}

/// A log's search text, as [`sign_unsigned`] reads it.
#[derive(QueryableByName)]
struct SearchText {
    #[diesel(sql_type = Text)]
    search_text: String,
}

/// Chunks signed per transaction by [`sign_unsigned`].
const UNSIGNED_STEP: i64 = 64;

/// Signs the chunks written before signatures existed (`signed` false): each one's signature
/// from its logs' search text, a transaction per [`UNSIGNED_STEP`] chunks, each within
/// `deadline`, under the advisory lock [`index_unchunked`] takes. Returns how many.
pub(crate) async fn sign_unsigned(connection: &mut AsyncPgConnection, deadline: Deadline) -> Result<u64, StoreError> {
    let mut signed = 0_u64;
    loop {
        let step = deadline
            .step(connection.transaction::<_, DieselError, _>(async move |connection: &mut AsyncPgConnection| {
                index_lock(connection).await?;
                let chunks: Vec<UnsignedChunk> = diesel::sql_query(
                    "SELECT id, workspace_id FROM log_chunks WHERE NOT signed ORDER BY workspace_id, id LIMIT $1",
                )
                .bind::<BigInt, _>(UNSIGNED_STEP)
                .load(connection)
                .await?;
                let mut signatures = Vec::with_capacity(chunks.len());
                for chunk in &chunks {
                    let texts: Vec<SearchText> = diesel::sql_query(format!(
                        "SELECT {} AS search_text FROM logs WHERE workspace_id = $1 AND chunk_id = $2",
                        crate::rows::SEARCH_TEXT_SQL
                    ))
                    .bind::<SqlUuid, _>(chunk.workspace_id)
                    .bind::<BigInt, _>(chunk.id)
                    .load(connection)
                    .await?;
                    let mut signature = Signature::new();
                    for text in &texts {
                        signature.add_text_with_trigrams(&text.search_text);
                    }
                    signatures.push(signature.folded());
                }
                let ids: Vec<i64> = chunks.iter().map(|chunk| chunk.id).collect();
                let workspaces: Vec<Uuid> = chunks.iter().map(|chunk| chunk.workspace_id).collect();
                crate::signatures::insert(connection, &ids, &workspaces, &signatures, false).await?;
                diesel::sql_query("UPDATE log_chunks SET signed = true WHERE id = ANY($1)")
                    .bind::<Array<BigInt>, _>(&ids)
                    .execute(connection)
                    .await?;
                Ok(chunks.len() as u64)
            }))
            .await?;
        signed += step;
        if step < UNSIGNED_STEP as u64 {
            return Ok(signed);
        }
    }
}

#[cfg(test)]
pub(crate) mod tests {
    use super::*;

    pub(crate) const FACETS: Facets<'static> =
        Facets { level: "info", environment: "production", source: "api", dataset: "default", user_id: None };

    #[test]
    fn chunks_follow_workspaces_and_their_cap() {
        let (a, b) = (Uuid::from_u128(1), Uuid::from_u128(2));
        let mut chunker = Chunker::new(2);
        for (workspace, ts) in [(a, 5), (a, 3), (a, 9), (b, 1)] {
            chunker.add(workspace, ts, Uuid::nil(), "text", &FACETS);
        }
        assert_eq!(chunker.chunk_of_rows(), [0, 0, 1, 2]);
        let spans: Vec<(Uuid, i64, i64, i32)> =
            chunker.chunks.iter().map(|chunk| (chunk.workspace, chunk.min_ts, chunk.max_ts, chunk.logs)).collect();
        assert_eq!(spans, [(a, 3, 5, 2), (a, 9, 9, 1), (b, 1, 1, 1)]);
    }

    /// A chunk's signature holds the trigrams and the identifiers of its logs' text.
    #[test]
    fn a_chunk_signature_holds_its_logs_trigrams_and_identifiers() {
        use sluice_store::grams::{needle_run_trigrams, needle_signature_keys, trigram_signature_key};
        use sluice_store::signature::{holds, needle_positions};
        let mut chunker = Chunker::new(10);
        chunker.add(Uuid::nil(), 0, Uuid::nil(), "connection refused", &FACETS);
        chunker.add(Uuid::nil(), 1, Uuid::nil(), "disk full on ord-4821937", &FACETS);
        let signature = chunker.signatures().swap_remove(0);
        assert_eq!(signature.len(), sluice_store::signature::MIN_SIGNATURE_BYTES);
        for needle in ["refused", "disk full", "con"] {
            let keys: Vec<u64> = needle_run_trigrams(needle).into_iter().map(trigram_signature_key).collect();
            assert!(holds(&signature, &needle_positions(&keys)), "{needle}");
        }
        assert!(holds(&signature, &needle_positions(&needle_signature_keys("ord-4821937"))));
    }

    /// Each chunk's signature is of its own logs only, though one signature is built for
    /// every chunk in turn.
    #[test]
    fn each_chunk_is_signed_with_its_own_logs() {
        let texts = ["ord-4821937 refused", "kappa042 timeout", "east414865 failover"];
        let mut chunker = Chunker::new(2);
        for (ts, text) in texts.iter().enumerate() {
            chunker.add(Uuid::nil(), ts as i64, Uuid::nil(), text, &FACETS);
        }
        let expected: Vec<Vec<u8>> = [&texts[..2], &texts[2..]]
            .iter()
            .map(|logs| {
                let mut signature = Signature::new();
                logs.iter().for_each(|text| signature.add_text_with_trigrams(text));
                signature.folded()
            })
            .collect();
        assert_eq!(chunker.signatures(), expected);
    }

    /// Facet filters are folded to fit what they hold.
    #[test]
    fn a_folded_facet_filter_fits_its_count() {
        let mut one = Chunker::new(1);
        one.add(Uuid::nil(), 0, Uuid::nil(), "x", &FACETS);
        let mut users = Chunker::new(300);
        let ids: Vec<String> = (0..300).map(|n| format!("user-{n}")).collect();
        for id in &ids {
            users.add(Uuid::nil(), 0, Uuid::nil(), "x", &Facets { user_id: Some(id), ..FACETS });
        }
        assert_eq!(folded(&users.chunks[0].facets).len(), FACET_BYTES);
        assert_eq!(folded(&one.chunks[0].facets).len(), MIN_FILTER_BYTES);
    }

    /// A chunk's facet filter holds each value of its logs, under its own field only.
    #[test]
    fn a_chunk_facet_filter_holds_each_value_of_its_logs() {
        let mut chunker = Chunker::new(10);
        chunker.add(Uuid::nil(), 0, Uuid::nil(), "a", &FACETS);
        let error = Facets { level: "error", user_id: Some("u-42"), ..FACETS };
        chunker.add(Uuid::nil(), 1, Uuid::nil(), "b", &error);
        let facets = &chunker.chunks[0].facets;
        let set = |bits: [u32; BLOOM_HASHES]| bits.iter().all(|&bit| facets[bit as usize / 8] & (1 << (bit % 8)) != 0);
        for (facet, value) in [
            (Facet::Level, "info"),
            (Facet::Level, "error"),
            (Facet::Environment, "production"),
            (Facet::Source, "api"),
            (Facet::Dataset, "default"),
            (Facet::User, "u-42"),
        ] {
            assert!(set(facet_bits(facet, value)), "{value}");
        }
        // Six distinct values, three bits each.
        let ones: u32 = facets.iter().map(|byte| byte.count_ones()).sum();
        assert!(ones <= 18, "{ones} bits");
        assert_ne!(facet_bits(Facet::Source, "api"), facet_bits(Facet::Dataset, "api"));
        assert!(!set(facet_bits(Facet::User, "u-43")) || !set(facet_bits(Facet::Level, "warn")));
    }

    /// Stored facet filters were built with these bits: the hash must never change.
    #[test]
    fn facet_bits_are_stable_and_in_range() {
        let bits = facet_bits(Facet::Level, "error");
        assert!(bits.iter().all(|&bit| (bit as usize) < FACET_BYTES * 8));
        assert_eq!(bits, facet_bits(Facet::Level, "error"));
    }
}
