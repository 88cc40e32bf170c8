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
//! the ids and its keys' slices ([`SLICES_SQL`]), then only the logs they let through, by id.
//!
//! Chunks are written in the transaction that writes their logs, so a committed log is always
//! findable (docs/API.md: read-after-write). [`index_unchunked`] indexes the logs stored before
//! the chunk index existed.

use diesel::prelude::*;
use diesel::result::Error as DieselError;
use diesel::sql_types::{Array, BigInt, Binary, Integer, Text, Uuid as SqlUuid};
use diesel_async::{AsyncConnection, AsyncPgConnection, RunQueryDsl};
use sluice_store::log_keys::LogKeys;
use sluice_store::signature::Signature;
use uuid::Uuid;

/// A chunk's per-log key filters ([`sluice_store::log_keys`]) get about this many bits per key
/// its logs hold on average, four times SQLite's: a search reads the logs they let through
/// one by one here, each likely on a heap page of its own, where SQLite reads a chunk's rows
/// in one range. A needle is looked up by up to four keys (`search::slot_groups`).
pub(crate) const SLOT_BITS_PER_KEY: usize = 8;

/// Bytes of a log's id in a chunk's `slots`.
pub(crate) const ID_BYTES: usize = 16;

/// A chunk's `slots` as stored: one byte, the base-2 logarithm of its logs' filters' bytes;
/// the id of each of its logs, slot by slot (16 bytes each); then their key filters
/// bit-sliced ([`LogKeys::sliced_at`] at [`SLOT_BITS_PER_KEY`]), so a search reads the ids and
/// the few slices of its needle's bits as ranges of the value ([`SLICES_SQL`]): PostgreSQL
/// fetches only the parts of an uncompressed out-of-line value a `substring` covers.
fn slots_stored(ids: &[u8], keys: &LogKeys) -> Vec<u8> {
    let sliced = keys.sliced_at(SLOT_BITS_PER_KEY);
    let mut stored = Vec::with_capacity(ids.len() + sliced.len());
    stored.extend_from_slice(&sliced[..1]);
    stored.extend_from_slice(ids);
    stored.extend_from_slice(&sliced[1..]);
    stored
}

/// For the chunks `$2` of workspace `$1` whose `slots` ([`slots_stored`]) hold at least the
/// narrowest filters: their id, logs, the length of their `slots`, the ids in it, and the
/// slices of the filter bits `$3` (at the widest width: a chunk's bit is that modulo its
/// width, worked out from the value's length, which PostgreSQL knows without fetching it), in
/// that order. Only those ranges are fetched.
pub(crate) const SLICES_SQL: &str = "SELECT c.id, c.logs, octet_length(c.slots) AS length, \
       substring(c.slots FROM 2 FOR 16 * c.logs) AS ids, \
       ARRAY(SELECT substring(c.slots FROM 2 + 16 * c.logs + (b.bit % w.bits) * ((c.logs + 7) / 8) \
                              FOR (c.logs + 7) / 8) \
             FROM unnest($3::int4[]) WITH ORDINALITY AS b(bit, n) ORDER BY b.n) AS slices \
     FROM log_chunks c \
     CROSS JOIN LATERAL (SELECT (octet_length(c.slots) - 1 - 16 * c.logs) / ((c.logs + 7) / 8) AS bits) w \
     WHERE c.workspace_id = $1 AND c.id = ANY($2) AND c.logs > 0 \
       AND octet_length(c.slots) >= 1 + 16 * c.logs + 64 * ((c.logs + 7) / 8)";

/// A chunk's part of [`SLICES_SQL`]'s answer.
#[derive(QueryableByName)]
pub(crate) struct Slices {
    #[diesel(sql_type = BigInt)]
    pub(crate) id: i64,
    #[diesel(sql_type = Integer)]
    pub(crate) logs: i32,
    #[diesel(sql_type = Integer)]
    pub(crate) length: i32,
    #[diesel(sql_type = Binary)]
    pub(crate) ids: Vec<u8>,
    #[diesel(sql_type = Array<Binary>)]
    pub(crate) slices: Vec<Vec<u8>>,
}

impl Slices {
    /// The ids of the chunk's logs whose filters' slices (of `groups`'
    /// [`needle_bits`](sluice_store::log_keys::needle_bits), in that order) may hold `groups`.
    /// `None` when the chunk's `slots` is not what its logs store (read the chunk whole): its
    /// length must leave filters of a power of two of bits, 64 to 1,024.
    pub(crate) fn slot_ids(&self, groups: &[Option<Vec<Vec<u64>>>]) -> Option<Vec<Uuid>> {
        let logs = usize::try_from(self.logs).ok()?;
        let filters = usize::try_from(self.length).ok()?.checked_sub(1 + logs.checked_mul(ID_BYTES)?)?;
        let size = logs.div_ceil(8);
        let width = filters.checked_div(size)?;
        let fits = filters % size == 0
            && width.is_power_of_two()
            && (sluice_store::log_keys::MIN_BITS..=sluice_store::log_keys::MAX_BITS).contains(&width);
        if !fits || self.ids.len() != logs * ID_BYTES {
            return None;
        }
        slot_ids(&self.ids, &self.slices, logs, groups)
    }
}

/// The ids of `ids` (16 bytes each, in slot order) whose filters' `slices` may hold `groups`.
fn slot_ids(ids: &[u8], slices: &[Vec<u8>], logs: usize, groups: &[Option<Vec<Vec<u64>>>]) -> Option<Vec<Uuid>> {
    let slots = sluice_store::log_keys::sliced_slots(slices, logs, groups)?;
    slots
        .into_iter()
        .map(|slot| ids.get(usize::from(slot) * ID_BYTES..).and_then(|id| Uuid::from_slice(id.get(..ID_BYTES)?).ok()))
        .collect()
}

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
    /// Its logs' ids, slot by slot, then (once complete) their key filters: [`slots_stored`].
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
    /// (those of a transaction that rolls back are under ids never used again, and go as the
    /// cache fills).
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
        crate::signatures::insert(connection, &ids, &workspaces, &signatures).await?;
        if let Some(cache) = cache {
            for (&id, signature) in ids.iter().zip(signatures) {
                let digest = sluice_store::signature::digest(&signature);
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
async fn index_lock(connection: &mut AsyncPgConnection) -> Result<(), DieselError> {
    diesel::sql_query("SELECT pg_advisory_xact_lock($1)").bind::<BigInt, _>(UNCHUNKED_LOCK).execute(connection).await?;
    Ok(())
}

/// Indexes the logs without a chunk (stored before the chunk index existed; inserts chunk
/// their own), a transaction per [`UNCHUNKED_STEP`], under an advisory lock so processes
/// starting together do it once. Returns how many.
pub(crate) async fn index_unchunked(connection: &mut AsyncPgConnection, chunk_rows: usize) -> Result<u64, DieselError> {
    let mut indexed = 0_u64;
    loop {
        let step = connection
            .transaction::<_, DieselError, _>(async move |connection: &mut AsyncPgConnection| {
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
            })
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
/// from its logs' search text, a transaction per [`UNSIGNED_STEP`] chunks, under the advisory
/// lock [`index_unchunked`] takes. Returns how many.
pub(crate) async fn sign_unsigned(connection: &mut AsyncPgConnection) -> Result<u64, DieselError> {
    let mut signed = 0_u64;
    loop {
        let step = connection
            .transaction::<_, DieselError, _>(async move |connection: &mut AsyncPgConnection| {
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
                crate::signatures::insert(connection, &ids, &workspaces, &signatures).await?;
                diesel::sql_query("UPDATE log_chunks SET signed = true WHERE id = ANY($1)")
                    .bind::<Array<BigInt>, _>(&ids)
                    .execute(connection)
                    .await?;
                Ok(chunks.len() as u64)
            })
            .await?;
        signed += step;
        if step < UNSIGNED_STEP as u64 {
            return Ok(signed);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const FACETS: Facets<'static> =
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

    /// A chunk's `slots`, read by the ranges [`SLICES_SQL`] reads: the slices of a needle's
    /// bits give the slots that may hold it, and the ids there are theirs: each chunk its own,
    /// though one set of filters is built for every chunk in turn.
    #[test]
    fn a_chunks_slots_name_the_logs_that_may_hold_a_needle() {
        use sluice_store::log_keys::needle_bits;
        let ids: Vec<Uuid> = (0..300_u128).map(|n| Uuid::from_u128(n + 1)).collect();
        let mut chunker = Chunker::new(200);
        for (n, id) in ids.iter().enumerate() {
            let text = format!("order ord-{:07} req={:016x} done", n * 7_919, n * 104_729);
            chunker.add(Uuid::nil(), n as i64, *id, &text, &FACETS);
        }
        chunker.signatures();
        let groups = |needle: &str| {
            let mut keys = sluice_store::grams::needle_signature_keys(needle);
            keys.extend(sluice_store::grams::needle_second_start_key(needle));
            vec![Some(vec![keys])]
        };
        // As `SLICES_SQL` reads them (`substring` counts from 1; the width from the length).
        let found = |stored: &[u8], logs: usize, needle: &str| {
            let size = logs.div_ceil(8);
            let width = (stored.len() - 1 - 16 * logs) / size;
            assert_eq!(width, 8 << stored[0]);
            let groups = groups(needle);
            let slices: Vec<Vec<u8>> = needle_bits(&groups)
                .iter()
                .map(|bit| {
                    let from = 1 + 16 * logs + (*bit as usize % width) * size;
                    stored[from..from + size].to_vec()
                })
                .collect();
            let ids = stored[1..1 + 16 * logs].to_vec();
            Slices { id: 0, logs: logs as i32, length: stored.len() as i32, ids, slices }.slot_ids(&groups).unwrap()
        };
        let [first, second] = &chunker.chunks[..] else { panic!("two chunks") };
        let in_first = found(&first.slots, 200, &format!("ord-{:07}", 150 * 7_919));
        assert!(in_first.contains(&ids[150]), "{in_first:?}");
        assert!(in_first.len() < 10, "{} of 200 logs let through", in_first.len());
        let in_second = found(&second.slots, 100, &format!("ord-{:07}", 250 * 7_919));
        assert!(in_second.contains(&ids[250]), "{in_second:?}");
        assert!(in_second.iter().all(|id| ids[200..].contains(id)));
        // Not what that many logs store: read the chunk whole.
        let needle = groups("ord-0000000");
        let slices = vec![vec![0xff_u8; 13]; needle_bits(&needle).len()];
        let ids = second.slots[1..1 + 16 * 100].to_vec();
        let length = second.slots.len() as i32;
        let read = |logs: i32, length: i32, ids: &[u8], slices: &[Vec<u8>]| {
            Slices { id: 0, logs, length, ids: ids.to_vec(), slices: slices.to_vec() }.slot_ids(&needle)
        };
        assert_eq!(read(100, length, &ids, &slices).map(|found| found.len()), Some(100));
        assert_eq!(read(101, length, &ids, &slices), None);
        assert_eq!(read(100, length - 13, &ids, &slices), None, "a width not a power of two");
        assert_eq!(read(100, 1 + 1_600 + 13 * 2_048, &ids, &slices), None, "too wide");
        assert_eq!(read(100, length - 1, &ids, &slices), None);
        assert_eq!(read(100, length, &ids[1..], &slices), None);
        assert_eq!(read(100, length, &ids, &slices[1..]), None);
        assert_eq!(read(-1, length, &ids, &slices), None);
        assert_eq!(read(0, 1, &[], &[]), None);
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
