//! Per-log key filters: which logs of a chunk may hold a needle, so a search reads those rows
//! of the chunks its signatures allow ([`crate::signature`]), not all of them.
//!
//! A chunk's signature tells whether a chunk may hold a needle; a rare identifier's page of 50
//! then read about 51 chunks of 256 logs each, 13,000 rows checked for one match a chunk
//! (measured on PostgreSQL at 10M logs: two thirds of a search's 37 ms). So each chunk also
//! keeps, for every log in its order (its *slot*), a small Bloom filter of that log's
//! signature keys ([`crate::grams::signature_keys`]) at one bit a key: [`LogKeys`] builds them,
//! [`LogKeys::stored`] writes them at a width chosen for the chunk, and [`slots`] gives the
//! slots whose filters hold a needle's keys ([`needle_keys`]). A store reads only those logs,
//! for needles with few candidate chunks: SQLite's search by `seq`, the PostgreSQL store's by
//! the log ids each chunk keeps in slot order beside its filters, stored wider and bit-sliced
//! ([`LogKeys::sliced_at`], read by [`sliced_slots`]), so a search fetches only its needle's
//! slices (an index entry a log for `(chunk, slot)` was measured costlier than reading the
//! chunk: docs/PERFORMANCE.md, issue 24).
//!
//! No false negatives: a log's text holding a needle holds every key the needle is looked up
//! by (`grams` proptests), so its filter has every bit of them. A needle without keys (a word
//! found by trigrams) narrows nothing: every slot of an allowed chunk is read.
//!
//! Stored form: one byte, the base-2 logarithm of a filter's bytes (3 to 7: 8 to 128 bytes,
//! 64 to 1,024 bits), then the filters slot by slot. Bit `b` of a filter of `w` bits is bit
//! `b % 8` of its byte `b / 8`; a key sets bit [`key_bit`]` % w`, so filters are built at
//! [`MAX_BITS`] and folded (each half OR'ed into the other) to the chunk's width.

use crate::grams::{needle_signature_keys, needle_start_keys};

/// The widest filter: 1,024 bits.
pub const MAX_BITS: usize = 1_024;

/// The narrowest filter: 64 bits.
pub const MIN_BITS: usize = 64;

/// A chunk's filters get about this many bits per key its logs hold on average (the largest
/// power of two at most this many times the mean): with one bit a key, a one-key needle is
/// falsely found in about two fifths of a chunk's logs, a two-key needle in a sixth, a
/// three-key one in a fifteenth. Four bits a key measured a rare identifier at 13-14 ms
/// instead of 15 at 10M logs, for 14 more bytes a log (docs/PERFORMANCE.md, issue 24).
pub const BITS_PER_KEY: usize = 2;

const WORDS: usize = MAX_BITS / 64;

/// The bit of a filter of [`MAX_BITS`] a key sets (its bit in a narrower one is this modulo its
/// width). Stored filters depend on it: it must never change.
pub fn key_bit(key: u64) -> usize {
    let mut mixed = key ^ 0x2545_f491_4f6c_dd1d;
    mixed = (mixed ^ (mixed >> 33)).wrapping_mul(0xff51_afd7_ed55_8ccd);
    mixed = (mixed ^ (mixed >> 33)).wrapping_mul(0xc4ce_b9fe_1a85_ec53);
    (mixed ^ (mixed >> 33)) as usize % MAX_BITS
}

/// The filters of one chunk's logs as they are built, at [`MAX_BITS`] each.
#[derive(Default)]
pub struct LogKeys {
    filters: Vec<[u64; WORDS]>,
}

impl LogKeys {
    /// No logs yet.
    pub fn new() -> Self {
        Self::default()
    }

    /// Starts the next log's filter (its slot is the number of logs before it).
    pub fn start_log(&mut self) {
        self.filters.push([0; WORDS]);
    }

    /// Adds a key to the last log started (none started: nothing).
    pub fn insert(&mut self, key: u64) {
        if let Some(filter) = self.filters.last_mut() {
            let bit = key_bit(key);
            filter[bit / 64] |= 1 << (bit % 64);
        }
    }

    /// The stored form (module docs): filters of the largest power of two of bits at most
    /// [`BITS_PER_KEY`] times the mean keys a log holds, within [`MIN_BITS`]..=[`MAX_BITS`].
    pub fn stored(&self) -> Vec<u8> {
        self.stored_at(BITS_PER_KEY)
    }

    /// The number of logs started.
    pub fn logs(&self) -> usize {
        self.filters.len()
    }

    /// Forgets every log, for the next chunk (the buffer is kept).
    pub fn clear(&mut self) {
        self.filters.clear();
    }

    /// The width of the filters as stored at `bits_per_key`: the largest power of two of bits
    /// at most `bits_per_key` times the mean keys a log holds, within [`MIN_BITS`]..=[`MAX_BITS`].
    fn width(&self, bits_per_key: usize) -> usize {
        let set: u64 = self.filters.iter().flatten().map(|word| u64::from(word.count_ones())).sum();
        let mean = set as usize / self.filters.len().max(1);
        let wanted = (mean * bits_per_key).max(1);
        let mut bits = MAX_BITS;
        while bits / 2 >= MIN_BITS && bits > wanted {
            bits /= 2;
        }
        bits
    }

    /// The filters bit-sliced, at `bits_per_key` ([`LogKeys::width`]): one byte, the base-2
    /// logarithm of the filters' bytes (3 to 7), then one *slice* per bit of a filter, of
    /// `ceil(logs / 8)` bytes: bit `s` of slice `b` (bit `s % 8` of its byte `s / 8`) is bit
    /// `b` of slot `s`'s filter. A needle's few bits are then a few short ranges of the
    /// stored form, which a store can read without the rest ([`sliced_slots`]).
    pub fn sliced_at(&self, bits_per_key: usize) -> Vec<u8> {
        let bits = self.width(bits_per_key);
        let slice = self.filters.len().div_ceil(8);
        let mut stored = vec![0_u8; 1 + bits * slice];
        stored[0] = (bits / 8).trailing_zeros() as u8;
        let slices = &mut stored[1..];
        for (slot, filter) in self.filters.iter().enumerate() {
            for (index, word) in filter.iter().enumerate() {
                let mut word = *word;
                while word != 0 {
                    let bit = (index * 64 + word.trailing_zeros() as usize) % bits;
                    slices[bit * slice + slot / 8] |= 1 << (slot % 8);
                    word &= word - 1;
                }
            }
        }
        stored
    }

    /// [`LogKeys::stored`] at `bits_per_key` times the mean keys a log holds instead of
    /// [`BITS_PER_KEY`] (read the same way: the width is stored).
    pub fn stored_at(&self, bits_per_key: usize) -> Vec<u8> {
        let bits = self.width(bits_per_key);
        let words = bits / 64;
        let mut stored = Vec::with_capacity(1 + self.filters.len() * bits / 8);
        stored.push((bits / 8).trailing_zeros() as u8);
        for filter in &self.filters {
            let mut folded = [0_u64; WORDS];
            for (index, word) in filter.iter().enumerate() {
                folded[index % words] |= word;
            }
            for word in &folded[..words] {
                stored.extend_from_slice(&word.to_le_bytes());
            }
        }
        stored
    }
}

/// The keys a folded needle is looked up by in a log's filter: its [`needle_signature_keys`],
/// then the starts of its runs ([`needle_start_keys`]; every text holding the needle holds them
/// all), the first `most` of them. An order number has one signature key, which lets through
/// about two fifths of a chunk's logs at [`BITS_PER_KEY`] and a sixth at PostgreSQL's wider
/// filters; with its run's two shorter starts, a fifteenth and under one log in a hundred
/// (docs/PERFORMANCE.md, issue 24). Empty for a needle without a run holding a digit.
///
/// ```
/// use sluice_store::log_keys::needle_log_keys;
/// assert_eq!(needle_log_keys("ord-4821937", usize::MAX).len(), 3);
/// assert_eq!(needle_log_keys("ord-4821937", 2).len(), 2);
/// assert!(needle_log_keys("failover to replica", usize::MAX).is_empty());
/// ```
pub fn needle_log_keys(folded: &str, most: usize) -> Vec<u64> {
    let mut keys = needle_signature_keys(folded);
    for key in needle_start_keys(folded) {
        if !keys.contains(&key) {
            keys.push(key);
        }
    }
    keys.truncate(most);
    keys
}

/// The keys each needle of each index group is looked up by in a log's filter: for every
/// group, each needle's [`needle_log_keys`], at most `most` (as
/// [`sluice_query::Query::index_groups`] gives the needle, folded, in the text a store keys).
/// A group with a needle without keys is `None`: it narrows nothing.
pub fn needle_keys<'a>(groups: impl IntoIterator<Item = Vec<&'a str>>, most: usize) -> Vec<Option<Vec<Vec<u64>>>> {
    groups
        .into_iter()
        .map(|group| {
            group
                .into_iter()
                .map(|needle| Some(needle_log_keys(needle, most)).filter(|keys| !keys.is_empty()))
                .collect::<Option<Vec<Vec<u64>>>>()
        })
        .collect()
}

/// Whether `groups` ([`needle_keys`]) narrow anything: some group has keys for every needle.
pub fn narrows(groups: &[Option<Vec<Vec<u64>>>]) -> bool {
    groups.iter().any(Option::is_some)
}

/// The distinct bits of a filter of [`MAX_BITS`] that `groups` ([`needle_keys`]) look up, in
/// the order [`sliced_slots`] takes their slices: bit `b` of a filter of `w` bits is `b % w`.
pub fn needle_bits(groups: &[Option<Vec<Vec<u64>>>]) -> Vec<u32> {
    let mut bits: Vec<u32> = Vec::new();
    for key in groups.iter().flatten().flatten().flatten() {
        let bit = key_bit(*key) as u32;
        if !bits.contains(&bit) {
            bits.push(bit);
        }
    }
    bits
}

/// [`slots`] from a bit-sliced stored form ([`LogKeys::sliced_at`]) of `logs` logs, given only
/// the slices of [`needle_bits`]`(groups)`, in that order (each `ceil(logs / 8)` bytes, taken
/// at the stored width). `None` when they are not that many of that size.
pub fn sliced_slots(slices: &[Vec<u8>], logs: usize, groups: &[Option<Vec<Vec<u64>>>]) -> Option<Vec<u16>> {
    let bits = needle_bits(groups);
    let size = logs.div_ceil(8);
    if slices.len() != bits.len() || slices.iter().any(|slice| slice.len() != size) || logs > usize::from(u16::MAX) + 1
    {
        return None;
    }
    let slice_of = |key: &u64| {
        let bit = key_bit(*key) as u32;
        bits.iter().position(|wanted| *wanted == bit).and_then(|index| slices.get(index))
    };
    let mut found = vec![u8::MAX; size];
    for needles in groups.iter().flatten() {
        let mut group = vec![0_u8; size];
        for keys in needles {
            let mut needle = vec![u8::MAX; size];
            for key in keys {
                for (byte, sliced) in needle.iter_mut().zip(slice_of(key)?) {
                    *byte &= sliced;
                }
            }
            for (byte, held) in group.iter_mut().zip(&needle) {
                *byte |= held;
            }
        }
        for (byte, held) in found.iter_mut().zip(&group) {
            *byte &= held;
        }
    }
    Some(
        (0..logs)
            .filter(|slot| found[slot / 8] & (1 << (slot % 8)) != 0)
            .filter_map(|slot| u16::try_from(slot).ok())
            .collect(),
    )
}

/// The slots of a chunk of `logs` logs whose stored filters may hold, for every group with
/// keys, every key of one of its needles; `None` when `stored` is not a stored form of `logs`
/// filters (read the chunk whole).
pub fn slots(stored: &[u8], logs: usize, groups: &[Option<Vec<Vec<u64>>>]) -> Option<Vec<u16>> {
    let (&exponent, filters) = stored.split_first()?;
    if !(3..=7).contains(&exponent) {
        return None;
    }
    let bytes = 1_usize << exponent;
    if filters.len() != logs.checked_mul(bytes)? || logs > usize::from(u16::MAX) + 1 {
        return None;
    }
    let bits = bytes * 8;
    // Each needle's bits at this width, computed once.
    let wanted: Vec<Vec<Vec<usize>>> = groups
        .iter()
        .flatten()
        .map(|needles| needles.iter().map(|keys| keys.iter().map(|key| key_bit(*key) % bits).collect()).collect())
        .collect();
    let has = |filter: &[u8], bit: usize| filter[bit / 8] & (1 << (bit % 8)) != 0;
    Some(
        filters
            .chunks_exact(bytes)
            .enumerate()
            .filter(|(_, filter)| {
                wanted.iter().all(|needles| needles.iter().any(|bits| bits.iter().all(|bit| has(filter, *bit))))
            })
            .filter_map(|(slot, _)| u16::try_from(slot).ok())
            .collect(),
    )
}

#[cfg(test)]
mod tests {
    use proptest::prelude::*;
    use sluice_query::fold;

    use super::*;
    use crate::grams::signature_keys;

    fn chunk(texts: &[&str]) -> Vec<u8> {
        let mut keys = LogKeys::new();
        for text in texts {
            keys.start_log();
            signature_keys(&fold(text), |key| keys.insert(key));
        }
        keys.stored()
    }

    #[test]
    fn a_needle_picks_the_logs_that_hold_it() {
        let texts: Vec<String> =
            (0..200).map(|n| format!("order ord-{:07} req={:016x} done", n * 7919, n * 104_729)).collect();
        let views: Vec<&str> = texts.iter().map(String::as_str).collect();
        let stored = chunk(&views);
        let groups = needle_keys([vec!["ord-0791900"]], usize::MAX);
        assert!(narrows(&groups));
        let found = slots(&stored, texts.len(), &groups).unwrap();
        assert!(found.contains(&100), "{found:?}");
        assert!(found.len() < 100, "an order number is found in {} of 200 logs", found.len());
        // A word without keys narrows nothing.
        let words = needle_keys([vec!["order"]], usize::MAX);
        assert!(!narrows(&words));
        assert_eq!(slots(&stored, texts.len(), &words).unwrap().len(), 200);
    }

    /// An order number's run starts narrow a chunk's logs far more than its one signature key:
    /// at the stored width about two fifths of the logs hold any one key.
    #[test]
    fn an_order_number_is_looked_up_by_its_starts_too() {
        let texts: Vec<String> = (0..256_u64)
            .map(|n| {
                let id = n.wrapping_mul(0x9e37_79b9_7f4a_7c15);
                format!(
                    "order=ord-{:07} req={id:016x} kappa{:03} east{:06}",
                    (n * 7_654_321) % 10_000_000,
                    n % 1_000,
                    id % 1_000_000
                )
            })
            .collect();
        let views: Vec<&str> = texts.iter().map(String::as_str).collect();
        let stored = chunk(&views);
        let needle = fold(&format!("ORD-{:07}", (100 * 7_654_321) % 10_000_000));
        assert_eq!(needle_log_keys(&needle, usize::MAX).len(), 3, "the start of seven digits, then of six and five");
        let one_key = slots(&stored, texts.len(), &needle_keys([vec![needle.as_str()]], 1)).unwrap();
        let every_key = slots(&stored, texts.len(), &needle_keys([vec![needle.as_str()]], usize::MAX)).unwrap();
        assert!(one_key.contains(&100) && every_key.contains(&100));
        assert!(every_key.iter().all(|slot| one_key.contains(slot)));
        assert!(
            every_key.len() * 4 <= one_key.len(),
            "{} logs by every key, {} by one",
            every_key.len(),
            one_key.len()
        );
    }

    #[test]
    fn a_malformed_stored_form_reads_the_chunk_whole() {
        let stored = chunk(&["ord-1234567", "ord-7654321"]);
        let groups = needle_keys([vec!["1234567"]], usize::MAX);
        assert_eq!(slots(&stored, 3, &groups), None);
        assert_eq!(slots(&[], 0, &groups), None);
        assert_eq!(slots(&[9, 0, 0], 1, &groups), None);
        assert!(slots(&stored, 2, &groups).unwrap().contains(&0));
    }

    /// The slices of `bits` of a bit-sliced stored form, as a store reads them.
    fn slices_of(sliced: &[u8], logs: usize, bits: &[u32]) -> Vec<Vec<u8>> {
        let width = 8 << sliced[0];
        let size = logs.div_ceil(8);
        bits.iter().map(|bit| sliced[1 + (*bit as usize % width) * size..][..size].to_vec()).collect()
    }

    proptest! {
        /// The bit-sliced form gives the slots the plain one gives, for any logs and needles.
        #[test]
        fn sliced_filters_pick_the_slots_plain_ones_pick(
            texts in proptest::collection::vec("[a-f0-9 =-]{0,60}", 1..300),
            needles in proptest::collection::vec("[a-f0-9-]{3,12}", 1..4),
            bits_per_key in 1_usize..12,
        ) {
            let mut keys = LogKeys::new();
            for text in &texts {
                keys.start_log();
                signature_keys(&fold(text), |key| keys.insert(key));
            }
            let groups = needle_keys(needles.iter().map(|needle| vec![needle.as_str()]), usize::MAX);
            let plain = keys.stored_at(bits_per_key);
            let sliced = keys.sliced_at(bits_per_key);
            prop_assert_eq!(plain[0], sliced[0]);
            prop_assert_eq!(sliced.len(), 1 + (8 << sliced[0]) * texts.len().div_ceil(8));
            let slices = slices_of(&sliced, texts.len(), &needle_bits(&groups));
            prop_assert_eq!(sliced_slots(&slices, texts.len(), &groups), slots(&plain, texts.len(), &groups));
            if !slices.is_empty() {
                prop_assert_eq!(sliced_slots(&slices[1..], texts.len(), &groups), None);
            }
        }

        /// No false negatives: a log holding a needle is always among the slots, whatever the
        /// width its chunk's filters were stored at.
        #[test]
        fn a_log_holding_the_needle_is_never_missed(
            texts in proptest::collection::vec("[a-f0-9 =-]{0,60}", 1..40),
            pick in any::<prop::sample::Index>(),
            start in 0_usize..60,
            len in 3_usize..24,
        ) {
            let views: Vec<&str> = texts.iter().map(String::as_str).collect();
            let stored = chunk(&views);
            let slot = pick.index(texts.len());
            let text = &texts[slot];
            let start = start.min(text.len());
            let needle = &text[start..(start + len).min(text.len())];
            let folded = fold(needle);
            let groups = needle_keys([vec![folded.as_str()]], usize::MAX);
            let found = slots(&stored, texts.len(), &groups).unwrap();
            prop_assert!(found.contains(&u16::try_from(slot).unwrap()));
        }
    }
}
