//! Bloom-filter signatures of chunks, and blocks of them stored bit-sliced: how a store finds
//! the few chunks that hold a rare identifier among tens of thousands, at a write cost of a
//! few bits per key.
//!
//! A chunk's **signature** is a Bloom filter of the keys [`crate::grams::signature_keys`]
//! gives its logs' text: the runs holding a digit, their starts and their long grams. Those
//! keys are mostly found in one chunk only (an order number, a request id), which is what a
//! full-text index pays the most for (a term of its own, sorted and merged again and again);
//! setting [`HASHES`] bits of a filter costs next to nothing. A signature is built at
//! [`SIGNATURE_BITS`] and stored **folded** ([`Signature::folded`]) to the smallest power of
//! two that keeps [`BITS_PER_KEY`] bits per key it holds, so a chunk of one log stores 64
//! bytes, a full one at most 32 KiB. A position `p` of the full filter is bit
//! `p % (8 × length)` of a folded one.
//!
//! Testing every chunk's signature would read all of them for each search. So a store gathers
//! a workspace's signatures, once up to [`BLOCK_CHUNKS`] of them are written, into a **block**
//! ([`Block::build`]), stored **bit-sliced**: for each position of the filter, one bit per
//! chunk of the block (its *slot*), so the positions a needle's keys hash to are a few short
//! rows, and their AND is the block's candidate chunks ([`Block::candidates`]). The slices are
//! stored in **bands** of [`BAND_BYTES`] a row ([`band_positions`] positions each): a search
//! reads, per block, one band per position it tests, in rounds ([`Narrowing`]), however many
//! chunks the block holds. The chunks not yet in a block are tested one signature at a time
//! ([`holds`]), kept in memory ([`SignatureCache`]).
//!
//! A Bloom filter has no false negatives: a chunk whose logs hold a needle has every key the
//! needle is looked up by (`grams` proptests), so every bit of them. False positives cost a
//! chunk read that the exact check empties.

mod block;
pub use block::{Block, Narrowing, StoredBlock};

/// Bits set per key. With a full signature's 17 or 18 bits a key, a needle of one key (an
/// order number's digits) would be falsely found in about 0.05 % of chunks; measured at 10M
/// logs, three order numbers were falsely found in 0.14, 0.16 and 0.33 % of 45,921 chunks
/// (65 to 152 false chunks, each read whole: docs/PERFORMANCE.md, issue 24), so the chunks
/// hold more keys than that estimate counts. Three bits a key in half the bits gave 1.5 %
/// (580 false chunks of 39,000).
pub const HASHES: usize = 6;

/// The bits of a full signature: 262,144, which hold the fifteen thousand or so distinct keys
/// of a chunk of 256 logs that carry identifiers (a needle of several keys compounds the false
/// positives of each).
pub const SIGNATURE_BITS: u32 = 1 << 18;

/// The bits a stored signature keeps per key it holds, at least: with [`HASHES`] bits each,
/// about 0.1 % of false positives per key, no more than a full one's.
pub const BITS_PER_KEY: f64 = 16.0;

/// The most positions a lookup tests ([`needle_positions`]): those of two keys, whose false
/// positives together are nil (a chunk holds a false key's six bits about once in two thousand
/// times), and each a band read per block the first key leaves a slot in. Four keys read half
/// as much again (measured at 10M logs: 16 ms for the signatures of a UUID, 8 for an order
/// number's one key).
pub const MAX_LOOKUP_POSITIONS: usize = 2 * HASHES;

/// The smallest stored signature.
pub const MIN_SIGNATURE_BYTES: usize = 64;

/// The most chunks a block gathers: its slots, one bit each in every position's slice. A store
/// chooses how many of its own (SQLite 1,024, PostgreSQL 256): a lookup reads a band per
/// position and block, so the fewer blocks the better, while the chunks not in a block yet
/// are tested one signature each.
pub const BLOCK_CHUNKS: usize = 1_024;

/// The bytes of a band, the row a block's slices are stored in: SQLite keeps a row of 512
/// bytes inside a page of its table (a kilobyte spilled each row to an overflow page of its
/// own: measured, 1,401 bytes on disk a log instead of about 900).
pub const BAND_BYTES: usize = 512;

/// The positions of one band of a block of `slots` chunks: as many slices as fill
/// [`BAND_BYTES`] (16 for 256 chunks, 4 for 1,024), at least one.
pub fn band_positions(slots: usize) -> u32 {
    u32::try_from(BAND_BYTES / Block::slice_bytes(slots).max(1)).unwrap_or(1).max(1)
}

/// The positions of a key in a full signature: slices of a 64-bit mix of it. Stored
/// signatures depend on it: it must never change.
pub fn positions(key: u64) -> [u32; HASHES] {
    let mix = |mut mixed: u64| {
        mixed = (mixed ^ (mixed >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
        mixed = (mixed ^ (mixed >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
        mixed ^ (mixed >> 31)
    };
    let (low, high) = (mix(key ^ 0x9e37_79b9_7f4a_7c15), mix(key ^ 0x6a09_e667_f3bc_c908));
    let mask = u64::from(SIGNATURE_BITS - 1);
    [low, low >> 21, low >> 42, high, high >> 21, high >> 42].map(|bits| (bits & mask) as u32)
}

/// The positions a chunk must have set to hold a needle of `keys`: those of every key, or of
/// keys spread over the list up to [`MAX_LOOKUP_POSITIONS`].
pub fn needle_positions(keys: &[u64]) -> Vec<u32> {
    let most = MAX_LOOKUP_POSITIONS / HASHES;
    let chosen: Vec<u64> = if keys.len() <= most {
        keys.to_vec()
    } else {
        (0..most).map(|index| keys[index * keys.len() / most]).collect()
    };
    let mut all: Vec<u32> = chosen.iter().flat_map(|key| positions(*key)).collect();
    all.sort_unstable();
    all.dedup();
    all
}

/// A chunk's signature as it is built, at full size.
pub struct Signature {
    words: Vec<u64>,
    /// The trigram codes taken lately ([`Signature::add_text_with_trigrams`]), direct-mapped,
    /// each tagged with bit 63 (a code has 63 bits) so an empty slot (0) matches none; empty
    /// until the first trigram.
    seen_trigrams: Vec<u64>,
}

/// The slots of a signature's [`Signature::add_text_with_trigrams`] memory of trigram codes,
/// as a power of two: a chunk of loghub lines repeats its words' trigrams from log to log,
/// and one seen in its slot is not hashed and set again.
const SEEN_TRIGRAM_BITS: u32 = 12;

impl Default for Signature {
    fn default() -> Self {
        Self::new()
    }
}

impl Signature {
    /// An empty signature.
    pub fn new() -> Self {
        Self { words: vec![0; SIGNATURE_BITS as usize / 64], seen_trigrams: Vec::new() }
    }

    /// Adds a folded text's keys, its run trigrams included ([`crate::grams::chunk_keys`]):
    /// the signature of a store that has no full-text index beside its signatures (the
    /// PostgreSQL store's). A trigram repeated from a recent log of the chunk is not hashed
    /// and set again (setting it again would change nothing): measured on the search
    /// benchmark's logs, `cargo bench -p sluice-store --features bench --bench keys`
    /// (docs/PERFORMANCE.md, issue 24).
    pub fn add_text_with_trigrams(&mut self, folded: &str) {
        self.add_text_with_trigrams_and_keys(folded, |_| {});
    }

    /// [`Signature::add_text_with_trigrams`], also handing `each` every key it adds but the
    /// trigrams (those [`crate::grams::signature_keys`] gives): what a store keeps per log
    /// besides ([`crate::log_keys`]).
    pub fn add_text_with_trigrams_and_keys(&mut self, folded: &str, mut each: impl FnMut(u64)) {
        if self.seen_trigrams.is_empty() {
            self.seen_trigrams = vec![0; 1 << SEEN_TRIGRAM_BITS];
        }
        let Signature { words, seen_trigrams } = self;
        let words = std::cell::RefCell::new(words);
        crate::grams::chunk_keys(
            folded,
            |code| {
                let tagged = code | (1 << 63);
                let slot = (code.wrapping_mul(0x9e37_79b9_7f4a_7c15) >> (64 - SEEN_TRIGRAM_BITS)) as usize;
                if let Some(seen) = seen_trigrams.get_mut(slot) {
                    if *seen == tagged {
                        return;
                    }
                    *seen = tagged;
                }
                set_positions(&mut words.borrow_mut(), crate::grams::trigram_signature_key(code));
            },
            |key| {
                set_positions(&mut words.borrow_mut(), key);
                each(key);
            },
        );
    }

    /// Adds one key.
    pub fn insert(&mut self, key: u64) {
        set_positions(&mut self.words, key);
    }

    /// The signature as stored: folded in halves (each bit OR'ed with its twin) down to the
    /// smallest power of two of bytes, at least [`MIN_SIGNATURE_BYTES`], that keeps
    /// [`BITS_PER_KEY`] bits per key it holds (estimated from its set bits). Bit `n` is bit
    /// `n % 8` of byte `n / 8`.
    pub fn folded(&self) -> Vec<u8> {
        let bits = f64::from(SIGNATURE_BITS);
        let set: u32 = self.words.iter().map(|word| word.count_ones()).sum();
        // The expected set bits of n keys at k bits each: m (1 - e^(-kn/m)); solved for n.
        let fraction = (f64::from(set) / bits).min(1.0 - 1.0 / bits);
        let keys = -bits / HASHES as f64 * (1.0 - fraction).ln();
        let wanted = (keys * BITS_PER_KEY / 64.0).ceil();
        let min_words = MIN_SIGNATURE_BYTES / 8;
        let mut words = self.words.len();
        while words / 2 >= min_words && (words / 2) as f64 >= wanted {
            words /= 2;
        }
        // Folding in halves down to `words` ORs word `i` with every word `i + k × words`: done
        // in one pass into the stored size (a copy of the full 32 KiB for each chunk, freed
        // at once, was page faults under ingest).
        let mut stored = self.words.get(..words).unwrap_or(&self.words).to_vec();
        for part in self.words.chunks_exact(words.max(1)).skip(1) {
            for (word, twin) in stored.iter_mut().zip(part) {
                *word |= twin;
            }
        }
        stored.iter().flat_map(|word| word.to_le_bytes()).collect()
    }

    /// Empties the signature, for the next chunk: its buffers are kept (a chunker builds one
    /// signature after another, and fresh ones for each were page faults under ingest).
    pub fn clear(&mut self) {
        self.words.fill(0);
        self.seen_trigrams.fill(0);
    }
}

/// A stored signature ([`Signature::folded`]) folded once more, each half OR'ed onto the
/// other, unless it is [`MIN_SIGNATURE_BYTES`] already: about eight bits a key instead of
/// [`BITS_PER_KEY`], so about 1.5 % of false positives a key instead of 0.06 % for a full
/// chunk's. It holds every position the signature held (bit `p` of either is bit `p mod bits`
/// of the full one), and a block built from it repeats it ([`Block::build`]). What a store
/// writes of a chunk's signature that waits for its block while it keeps the signature itself
/// in memory for the seal and its searches: the PostgreSQL store, where the waiting signatures
/// are written, deleted and vacuumed for every chunk (docs/PERFORMANCE.md, issue 24).
///
/// ```
/// use sluice_store::signature::{Signature, folded_once_more, holds, positions};
/// let mut signature = Signature::new();
/// (0..5_000_u64).for_each(|key| signature.insert(key));
/// let stored = signature.folded();
/// let waiting = folded_once_more(&stored);
/// assert_eq!(waiting.len() * 2, stored.len());
/// assert!((0..5_000).all(|key| holds(&waiting, &positions(key))));
/// assert_eq!(folded_once_more(&Signature::new().folded()).len(), 64);
/// ```
pub fn folded_once_more(signature: &[u8]) -> Vec<u8> {
    if signature.len() <= MIN_SIGNATURE_BYTES || !signature.len().is_multiple_of(2) {
        return signature.to_vec();
    }
    let (low, high) = signature.split_at(signature.len() / 2);
    low.iter().zip(high).map(|(byte, twin)| byte | twin).collect()
}

/// Sets a key's [`positions`] in a full signature's words.
fn set_positions(words: &mut [u64], key: u64) {
    for position in positions(key) {
        if let Some(word) = words.get_mut(position as usize / 64) {
            *word |= 1 << (position % 64);
        }
    }
}

/// Bit `position` of a stored signature: bit `position % bits` of it, as folding keeps it.
fn bit(signature: &[u8], position: u32) -> bool {
    let bits = signature.len() as u64 * 8;
    if bits == 0 {
        return false;
    }
    let at = u64::from(position) % bits;
    signature[(at / 8) as usize] & (1 << (at % 8)) != 0
}

/// Whether a stored signature may hold a needle: every one of its positions is set. An empty
/// signature (a chunk without keys) holds nothing.
pub fn holds(signature: &[u8], positions: &[u32]) -> bool {
    positions.iter().all(|position| bit(signature, *position))
}

/// A digest of a stored signature: tells the signature a search keeps in memory from another
/// written under the same chunk id (after retention emptied the store). Only ever compared
/// with a digest read from the same row, so it need not be stable across releases.
pub fn digest(signature: &[u8]) -> i64 {
    let mut hash = 0xcbf2_9ce4_8422_2325_u64 ^ signature.len() as u64;
    for word in signature.chunks(8) {
        let mut bytes = [0_u8; 8];
        bytes[..word.len()].copy_from_slice(word);
        hash = (hash ^ u64::from_le_bytes(bytes)).wrapping_mul(0x0000_0100_0000_01b3).rotate_left(29);
    }
    hash as i64
}

/// The signatures of chunks not in a block yet, kept in memory by chunk id with their digest,
/// so a search tests them without reading them again (each is up to 32 KiB, and a workspace
/// has up to a block's worth).
pub type SignatureCache = moka::sync::Cache<i64, std::sync::Arc<(i64, Vec<u8>)>>;

/// A [`SignatureCache`] of at most 256 MiB.
pub fn signature_cache() -> SignatureCache {
    moka::sync::Cache::builder()
        .weigher(|_, value: &std::sync::Arc<(i64, Vec<u8>)>| u32::try_from(value.1.len()).unwrap_or(u32::MAX))
        .max_capacity(256 * 1024 * 1024)
        .build()
}

/// Sealed blocks as searches read them, kept in memory: headers by block id, bands by block
/// and band (`None`: not stored, so empty). Only for a store whose block ids are never reused
/// (PostgreSQL's are a chunk id, from a sequence): a block, once sealed, never changes, and one
/// dropped is never asked for again. Without it, every search reads every block's header and
/// its bands of each round again (measured at 9M logs: 12 of a common word's 21 ms).
#[derive(Clone)]
pub struct BlockCache {
    /// Headers by block id.
    pub headers: moka::sync::Cache<i64, std::sync::Arc<StoredBlock>>,
    /// Bands by `(block id, band)`.
    pub bands: moka::sync::Cache<(i64, u32), Option<std::sync::Arc<[u8]>>>,
}

impl BlockCache {
    /// A cache of at most 32 MiB of headers (about 16,000 blocks of 256 chunks) and 64 MiB of
    /// bands.
    pub fn new() -> Self {
        let headers = moka::sync::Cache::builder()
            .weigher(|_, block: &std::sync::Arc<StoredBlock>| {
                u32::try_from(block.chunks.len() * 8 + 64).unwrap_or(u32::MAX)
            })
            .max_capacity(32 * 1024 * 1024)
            .build();
        let bands = moka::sync::Cache::builder()
            .weigher(|_, slices: &Option<std::sync::Arc<[u8]>>| {
                u32::try_from(slices.as_ref().map_or(0, |slices| slices.len()) + 64).unwrap_or(u32::MAX)
            })
            .max_capacity(64 * 1024 * 1024)
            .build();
        Self { headers, bands }
    }
}

impl Default for BlockCache {
    fn default() -> Self {
        Self::new()
    }
}

#[cfg(test)]
pub(crate) mod tests {
    use super::*;

    pub(crate) fn signature(keys: impl IntoIterator<Item = u64>) -> Signature {
        let mut signature = Signature::new();
        for key in keys {
            signature.insert(key);
        }
        signature
    }

    /// Skipping a trigram seen lately changes nothing: the signature is the one of every key
    /// inserted, however the texts repeat (and collide in the memory's slots).
    #[test]
    fn a_text_with_trigrams_signs_every_key_whatever_it_skips() {
        let texts: Vec<String> = (0..600)
            .map(|n| format!("connection to node{} refused after {n} ms ord-{:07} été {}", n % 7, n * 7919, n % 13))
            .collect();
        let mut remembering = Signature::new();
        let (mut trigrams, mut keys) = (Vec::new(), Vec::new());
        for text in &texts {
            remembering.add_text_with_trigrams(text);
            crate::grams::chunk_keys(text, |code| trigrams.push(code), |key| keys.push(key));
        }
        keys.extend(trigrams.into_iter().map(crate::grams::trigram_signature_key));
        assert_eq!(remembering.words, signature(keys).words);
        assert!(remembering.words.iter().any(|word| *word != 0));
    }

    /// Stored signatures were folded in halves: folding in one pass must give the same bytes.
    #[test]
    fn a_signature_folds_to_what_halving_it_gave() {
        for count in [0, 1, 10, 300, 2_000, 20_000] {
            let full = signature((0..count).map(|key| key * 0x9e37_79b9));
            let stored = full.folded();
            let mut halved = full.words.clone();
            while halved.len() * 8 > stored.len() {
                let half = halved.len() / 2;
                let (low, high) = halved.split_at_mut(half);
                for (word, twin) in low.iter_mut().zip(high.iter()) {
                    *word |= twin;
                }
                halved.truncate(half);
            }
            let halved: Vec<u8> = halved.iter().flat_map(|word| word.to_le_bytes()).collect();
            assert_eq!(stored, halved, "{count} keys");
        }
    }

    /// A cleared signature signs the next chunk as a new one would.
    #[test]
    fn a_cleared_signature_is_a_new_one() {
        let mut reused = Signature::new();
        reused.add_text_with_trigrams("first chunk ord-4821937 abcdef");
        reused.clear();
        reused.add_text_with_trigrams("second chunk kappa042");
        let mut new = Signature::new();
        new.add_text_with_trigrams("second chunk kappa042");
        assert_eq!(reused.words, new.words);
        assert_eq!(reused.folded(), new.folded());
    }

    /// Folded once more, a full chunk's signature holds every key it held, at about eight bits
    /// a key: its false positives are those of one built at half the size.
    #[test]
    fn a_signature_folded_once_more_holds_its_keys_at_half_the_bytes() {
        let full = signature(0..15_000);
        let stored = full.folded();
        let waiting = folded_once_more(&stored);
        assert_eq!(waiting.len() * 2, stored.len());
        assert!((0..15_000).all(|key| holds(&waiting, &positions(key))));
        let block = Block::build(&[&stored, &waiting]);
        let found = |key| Block::candidates(block.bits, block.slots, &positions(key), |band| block.band(band));
        assert!((0..15_000).all(|key| found(key) == [0, 1]), "a block repeats it");
        let false_positives = (1_000_000..1_100_000).filter(|key| holds(&waiting, &positions(*key))).count();
        assert!((500..4_000).contains(&false_positives), "{false_positives} of 100,000");
        let small = signature(0..10).folded();
        assert_eq!(folded_once_more(&small), small, "the smallest is kept as it is");
    }

    #[test]
    fn a_folded_signature_holds_what_the_full_one_does_and_fits_its_keys() {
        let few = signature(0..10);
        let folded = few.folded();
        assert_eq!(folded.len(), MIN_SIGNATURE_BYTES);
        assert!((0..10).all(|key| holds(&folded, &positions(key))));
        let many = signature(0..10_000);
        let folded = many.folded();
        assert_eq!(folded.len() * 8, SIGNATURE_BITS as usize, "ten thousand keys keep the full size");
        assert!((0..10_000).all(|key| holds(&folded, &positions(key))));
        let false_positives = (1_000_000..1_100_000).filter(|key| holds(&folded, &positions(*key))).count();
        assert!(false_positives < 400, "{false_positives} of 100,000");
        assert!(!holds(&Signature::new().folded(), &positions(1)));
    }
}
