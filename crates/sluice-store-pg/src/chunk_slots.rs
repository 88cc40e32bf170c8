//! A chunk's `slots` (`log_chunks.slots`): its logs' ids in slot order and their per-log key
//! filters bit-sliced ([`sluice_store::log_keys`]), as the [`crate::chunks::Chunker`] stores
//! them and as a search reads them: for a step's chunks, only the ids and the slices of its
//! needles' bits ([`SLICES_SQL`]), then only the logs those let through, by id.
//!
//! Invariant: no false negatives. A log holding a needle passes its chunk's filters for every
//! key the needle is looked up by; a chunk whose `slots` is missing or not of its logs' size
//! is read whole.

use diesel::prelude::*;
use diesel::sql_types::{Array, BigInt, Binary, Integer, Uuid as SqlUuid};
use diesel_async::{AsyncPgConnection, RunQueryDsl};
use sluice_model::WorkspaceId;
use sluice_store::StoreError;
use sluice_store::log_keys::LogKeys;
use uuid::Uuid;

use crate::error::from_diesel;

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
pub(crate) fn slots_stored(ids: &[u8], keys: &LogKeys) -> Vec<u8> {
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

/// The most logs of a chunk read by id ([`slot_logs`]): a chunk's 256 logs fill about 14 heap
/// pages, read in order when it is read whole; more logs than that, each an index probe and
/// likely a page of its own, cost more.
pub(crate) const BY_ID_PER_CHUNK: usize = 16;

/// The logs of `kept` chunks `(id, min_ts, max_ts)` whose key filters may hold `groups`: to
/// read by id, those of chunks that let at most [`BY_ID_PER_CHUNK`] through; to read with
/// their chunk, those of the others ([`SlotLogs::sifted`]); and the chunks without filters
/// (written before chunks kept them), to read whole. One statement, reading only the chunks'
/// ids and the slices of the needles' bits.
pub(crate) async fn slot_logs(
    connection: &mut AsyncPgConnection,
    workspace: WorkspaceId,
    kept: Vec<(i64, i64, i64)>,
    groups: &[Option<Vec<Vec<u64>>>],
) -> Result<SlotLogs, StoreError> {
    let ids: Vec<i64> = kept.iter().map(|&(id, _, _)| id).collect();
    let bits: Vec<i32> =
        sluice_store::log_keys::needle_bits(groups).into_iter().map(|bit| i32::try_from(bit).unwrap_or(0)).collect();
    let stored: Vec<Slices> = crate::prepared::prepared(SLICES_SQL)
        .bind::<SqlUuid, _>(*workspace.as_uuid())
        .bind::<Array<BigInt>, _>(ids)
        .bind::<Array<Integer>, _>(bits)
        .load(connection)
        .await
        .map_err(from_diesel)?;
    let mut stored: foldhash::HashMap<i64, Slices> = stored.into_iter().map(|chunk| (chunk.id, chunk)).collect();
    let mut found = SlotLogs::default();
    for chunk in kept {
        match stored.remove(&chunk.0).and_then(|stored| stored.slot_ids(groups)) {
            Some(ids) if ids.len() <= BY_ID_PER_CHUNK => {
                found.by_id.extend(ids.into_iter().map(|id| (id, chunk.1, chunk.2)));
            }
            Some(ids) => {
                found.sifted.push(chunk);
                found.sifted_ids.extend(ids);
            }
            None => found.whole.push(chunk),
        }
    }
    Ok(found)
}

/// [`slot_logs`]' answer.
#[derive(Default)]
pub(crate) struct SlotLogs {
    /// The logs to read by id, with their chunk's span.
    pub(crate) by_id: Vec<(Uuid, i64, i64)>,
    /// The chunks whose filters let more through, read with their chunk, only the logs of
    /// `sifted_ids` tested: the rows' text is most of reading a chunk (measured at 10M logs,
    /// a term in 0.1 % of the logs: its page's 49 chunks in 11.5 ms, 6.7 with the ids its
    /// filters let through first).
    pub(crate) sifted: Vec<(i64, i64, i64)>,
    pub(crate) sifted_ids: Vec<Uuid>,
    /// The chunks to read whole.
    pub(crate) whole: Vec<(i64, i64, i64)>,
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::chunks::Chunker;
    use crate::chunks::tests::FACETS;

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
        let built = chunker.finished_slots();
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
        let [first, second] = built[..] else { panic!("two chunks") };
        let in_first = found(first, 200, &format!("ord-{:07}", 150 * 7_919));
        assert!(in_first.contains(&ids[150]), "{in_first:?}");
        assert!(in_first.len() < 10, "{} of 200 logs let through", in_first.len());
        let in_second = found(second, 100, &format!("ord-{:07}", 250 * 7_919));
        assert!(in_second.contains(&ids[250]), "{in_second:?}");
        assert!(in_second.iter().all(|id| ids[200..].contains(id)));
        // Not what that many logs store: read the chunk whole.
        let needle = groups("ord-0000000");
        let slices = vec![vec![0xff_u8; 13]; needle_bits(&needle).len()];
        let ids = second[1..1 + 16 * 100].to_vec();
        let length = second.len() as i32;
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
}
