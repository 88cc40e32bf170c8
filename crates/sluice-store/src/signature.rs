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

use crate::grams::signature_keys;

/// Bits set per key. With a full signature's 17 or 18 bits a key, a needle of one key (an
/// order number's digits) is falsely found in about 0.05 % of chunks; three bits a key in half
/// the bits gave 1.5 % (measured: 580 false chunks of 39,000 at 10M logs, each read whole).
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
}

impl Default for Signature {
    fn default() -> Self {
        Self::new()
    }
}

impl Signature {
    /// An empty signature.
    pub fn new() -> Self {
        Self { words: vec![0; SIGNATURE_BITS as usize / 64] }
    }

    /// Adds one key.
    pub fn insert(&mut self, key: u64) {
        for position in positions(key) {
            self.words[position as usize / 64] |= 1 << (position % 64);
        }
    }

    /// Adds the keys of a folded text ([`signature_keys`]).
    pub fn insert_text(&mut self, folded: &str) {
        signature_keys(folded, |key| self.insert(key));
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
        let mut words = self.words.clone();
        let min_words = MIN_SIGNATURE_BYTES / 8;
        while words.len() / 2 >= min_words && (words.len() / 2) as f64 >= wanted {
            let half = words.len() / 2;
            let (low, high) = words.split_at_mut(half);
            for (word, twin) in low.iter_mut().zip(high.iter()) {
                *word |= twin;
            }
            words.truncate(half);
        }
        words.iter().flat_map(|word| word.to_le_bytes()).collect()
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

/// A block: the signatures of up to [`BLOCK_CHUNKS`] chunks, bit-sliced.
pub struct Block {
    /// The positions of its slices: the largest signature's bits (the others are repeated to
    /// this size, as a folded signature is read).
    pub bits: u32,
    /// Its chunks, by slot.
    pub slots: usize,
    /// Its slices, in order of position, each [`Block::slice_bytes`] long (bit `s` of a slice
    /// is slot `s`), in one buffer: read a band at a time ([`Block::band`],
    /// [`Block::stored_bands`]).
    ///
    /// One allocation, not one per band: a block's 65,536 bands of 512 bytes, made on one
    /// thread and freed on another, were spread over the allocator's small pages among
    /// objects that live on, which then kept the pages from going back to the kernel
    /// (`cargo xtask bench soak` on PostgreSQL: the server's RSS climbing by up to 100 MB in
    /// some runs). A buffer this size is mapped on its own and returned whole.
    slices: Vec<u8>,
}

/// The transpose of an 8x8 bit matrix held a row a byte (row `r` is byte `r`, column `c` its
/// bit `c`): bit `r` of byte `c` of the answer is bit `c` of byte `r` (Hacker's Delight, 7-3).
fn transpose8(mut matrix: u64) -> u64 {
    let mut swap = (matrix ^ (matrix >> 7)) & 0x00aa_00aa_00aa_00aa;
    matrix ^= swap ^ (swap << 7);
    swap = (matrix ^ (matrix >> 14)) & 0x0000_cccc_0000_cccc;
    matrix ^= swap ^ (swap << 14);
    swap = (matrix ^ (matrix >> 28)) & 0x0000_0000_f0f0_f0f0;
    matrix ^= swap ^ (swap << 28);
    matrix
}

impl Block {
    /// The bytes of one slice of a block of `slots` chunks.
    pub fn slice_bytes(slots: usize) -> usize {
        slots.div_ceil(8)
    }

    /// Gathers stored signatures, slot by slot, into a block. At most [`BLOCK_CHUNKS`]; more
    /// are left out.
    pub fn build(signatures: &[&[u8]]) -> Block {
        let signatures = &signatures[..signatures.len().min(BLOCK_CHUNKS)];
        let largest = signatures.iter().map(|signature| signature.len()).max().unwrap_or(0);
        let bits = u32::try_from(largest * 8).unwrap_or(SIGNATURE_BITS).clamp(1, SIGNATURE_BITS);
        let slice = Self::slice_bytes(signatures.len());
        // Written in order of position, at its final size from the start (a block's 32 MiB
        // grown by doubling held up to half as much again at the sealer's peak).
        let mut slices: Vec<u8> = Vec::with_capacity(bits as usize * slice);
        let mut out = vec![0_u8; 8 * slice];
        // Eight slots at a time: a byte of each of their signatures is an 8x8 bit matrix,
        // whose transpose is the byte of those slots in each of eight positions' slices. The
        // slices are written in order (a block's 32 MB one bit at a time took the sealer about
        // a second, a seventh of the server's CPU under sustained ingest).
        for byte_at in 0..bits as usize / 8 {
            out.fill(0);
            for (group, slots) in signatures.chunks(8).enumerate() {
                let mut matrix = 0_u64;
                for (row, signature) in slots.iter().enumerate() {
                    // A folded signature's byte for this position: its own, repeated.
                    let len = signature.len();
                    let byte = match len {
                        0 => 0,
                        _ if len.is_power_of_two() => signature[byte_at & (len - 1)],
                        _ => signature[byte_at % len],
                    };
                    matrix |= u64::from(byte) << (8 * row);
                }
                if matrix == 0 {
                    continue;
                }
                let transposed = transpose8(matrix);
                for (bit, slice_bytes) in out.chunks_exact_mut(slice).enumerate() {
                    slice_bytes[group] = (transposed >> (8 * bit)) as u8;
                }
            }
            slices.extend_from_slice(&out);
        }
        // The positions past the last whole byte (only a block of empty signatures, one bit
        // wide, has any): empty slices.
        slices.resize(bits as usize * slice, 0);
        Block { bits, slots: signatures.len(), slices }
    }

    /// The bytes of a band of this block: [`band_positions`] slices (the last band may hold
    /// fewer).
    fn band_bytes(&self) -> usize {
        (band_positions(self.slots) as usize * Self::slice_bytes(self.slots)).max(1)
    }

    /// How many bands the block has, stored or not.
    pub fn band_count(&self) -> usize {
        self.slices.len().div_ceil(self.band_bytes())
    }

    /// Band `band`: the slices of positions `band × band_positions(slots)` onwards; `None`
    /// past the last band, or when all its slices are empty (such a band need not be stored).
    pub fn band(&self, band: u32) -> Option<&[u8]> {
        let bytes = self.band_bytes();
        let start = (band as usize).checked_mul(bytes)?;
        let slices = self.slices.get(start..self.slices.len().min(start.saturating_add(bytes)))?;
        (!slices.is_empty() && slices.iter().any(|byte| *byte != 0)).then_some(slices)
    }

    /// The bands a store keeps, in order, with their numbers: those with a slice not empty.
    pub fn stored_bands(&self) -> impl Iterator<Item = (u32, &[u8])> {
        self.slices
            .chunks(self.band_bytes())
            .enumerate()
            .filter(|(_, slices)| slices.iter().any(|byte| *byte != 0))
            .filter_map(|(band, slices)| Some((u32::try_from(band).ok()?, slices)))
    }

    /// The band and the offset in it of `position` of a full signature, in a block of `bits`
    /// positions and `slots` chunks.
    pub fn locate(bits: u32, slots: usize, position: u32) -> (u32, usize) {
        let at = position % bits.max(1);
        let per_band = band_positions(slots);
        (at / per_band, (at % per_band) as usize * Self::slice_bytes(slots))
    }

    /// The bands a search of `positions` reads in a block of `bits` positions and `slots`
    /// chunks.
    pub fn bands_for(bits: u32, slots: usize, positions: &[u32]) -> Vec<u32> {
        let mut bands: Vec<u32> = positions.iter().map(|position| Self::locate(bits, slots, *position).0).collect();
        bands.sort_unstable();
        bands.dedup();
        bands
    }

    /// The slots of a block (of `bits` positions and `slots` chunks) whose chunks may hold a
    /// needle of `positions` (not empty), given its stored bands (`band` gives one, or
    /// `None` when it is not stored: all its slices are empty).
    pub fn candidates<'a>(
        bits: u32,
        slots: usize,
        positions: &[u32],
        band: impl Fn(u32) -> Option<&'a [u8]>,
    ) -> Vec<usize> {
        let mut all = Self::all_slots(slots);
        Self::narrow(bits, slots, positions, band, &mut all);
        Self::slots_of(slots, &all)
    }

    /// A mask of every slot of a block of `slots` chunks, for [`Block::narrow`].
    pub fn all_slots(slots: usize) -> Vec<u8> {
        vec![0xff; Self::slice_bytes(slots)]
    }

    /// Keeps in `mask` the slots whose chunks have every one of `positions` set, given the
    /// block's bands as [`Block::candidates`] takes them; returns whether any is left. A search
    /// narrows in rounds of a few positions, and reads the next round's bands only of the
    /// blocks with a slot left: after one key's positions, most blocks have none.
    pub fn narrow<'a>(
        bits: u32,
        slots: usize,
        positions: &[u32],
        band: impl Fn(u32) -> Option<&'a [u8]>,
        mask: &mut [u8],
    ) -> bool {
        let slice = Self::slice_bytes(slots);
        for position in positions {
            let (index, offset) = Self::locate(bits, slots, *position);
            match band(index).and_then(|band| band.get(offset..offset + slice)) {
                Some(bits) => mask.iter_mut().zip(bits).for_each(|(mask, bits)| *mask &= bits),
                None => mask.fill(0),
            }
        }
        mask.iter().any(|byte| *byte != 0)
    }

    /// The slots a mask keeps.
    pub fn slots_of(slots: usize, mask: &[u8]) -> Vec<usize> {
        (0..slots).filter(|slot| mask.get(slot / 8).is_some_and(|byte| byte & (1 << (slot % 8)) != 0)).collect()
    }
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

/// A stored block, as a search reads it: its first chunk's id, its width, its chunk ids by slot.
pub struct StoredBlock {
    /// Its id: its first chunk's.
    pub id: i64,
    /// Its positions ([`Block::bits`]).
    pub bits: u32,
    /// Its chunks' ids, by slot.
    pub chunks: Vec<i64>,
}

/// A search of stored blocks for a needle's positions, in rounds of one key's worth
/// ([`HASHES`]): each round asks the store for the bands it needs of the blocks with a slot
/// left ([`Narrowing::next_round`]), then narrows them ([`Narrowing::apply`]). After one key,
/// most blocks have no slot left and are not read again: a rare needle reads about one band
/// per position of its first key and block, where all positions at once read four times as
/// many (measured at 10M logs: 21 ms for an absent term, each band its own page).
pub struct Narrowing<'a> {
    alive: Vec<(&'a StoredBlock, Vec<u8>)>,
    rounds: std::slice::Chunks<'a, u32>,
    round: &'a [u32],
}

impl<'a> Narrowing<'a> {
    /// A search of `blocks` for a needle of `positions` (not empty).
    pub fn new(blocks: impl IntoIterator<Item = &'a StoredBlock>, positions: &'a [u32]) -> Self {
        let alive = blocks.into_iter().map(|block| (block, Block::all_slots(block.chunks.len()))).collect();
        Self { alive, rounds: positions.chunks(HASHES), round: &[] }
    }

    /// The blocks and bands the next round reads (a row per block and band, those not stored
    /// being empty); `None` once every round is done or no block has a slot left.
    pub fn next_round(&mut self) -> Option<(Vec<i64>, Vec<u32>)> {
        if self.alive.is_empty() {
            return None;
        }
        self.round = self.rounds.next()?;
        let mut bands: Vec<u32> = self
            .alive
            .iter()
            .flat_map(|(block, _)| Block::bands_for(block.bits, block.chunks.len(), self.round))
            .collect();
        bands.sort_unstable();
        bands.dedup();
        Some((self.alive.iter().map(|(block, _)| block.id).collect(), bands))
    }

    /// Narrows the blocks by the round's bands, as read: `(block id, band, slices)`.
    pub fn apply<S: AsRef<[u8]>>(&mut self, rows: Vec<(i64, u32, S)>) {
        let mut by_block: std::collections::HashMap<i64, Vec<(u32, S)>> = std::collections::HashMap::new();
        for (block, band, slices) in rows {
            by_block.entry(block).or_default().push((band, slices));
        }
        let round = self.round;
        self.alive.retain_mut(|(block, mask)| {
            let bands = by_block.get(&block.id).map_or(&[][..], Vec::as_slice);
            let band = |wanted: u32| bands.iter().find(|(band, _)| *band == wanted).map(|(_, slices)| slices.as_ref());
            Block::narrow(block.bits, block.chunks.len(), round, band, mask)
        });
    }

    /// The chunks left once every round is done.
    pub fn chunks(self) -> Vec<i64> {
        let mut found = Vec::new();
        for (block, mask) in self.alive {
            found.extend(
                Block::slots_of(block.chunks.len(), &mask).into_iter().filter_map(|slot| block.chunks.get(slot)),
            );
        }
        found
    }
}

#[cfg(test)]
mod tests {
    use proptest::prelude::*;

    use super::*;

    fn signature(keys: impl IntoIterator<Item = u64>) -> Signature {
        let mut signature = Signature::new();
        for key in keys {
            signature.insert(key);
        }
        signature
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

    #[test]
    fn a_block_finds_the_chunks_whose_signatures_hold_a_needle() {
        // Chunks of different sizes (so differently folded), one per slot.
        let signatures: Vec<Vec<u8>> =
            (0..40_u64).map(|chunk| signature((0..(1 + chunk * 200)).map(|n| n * 1_000 + chunk)).folded()).collect();
        assert!(signatures.iter().map(Vec::len).collect::<std::collections::HashSet<_>>().len() > 2);
        let views: Vec<&[u8]> = signatures.iter().map(Vec::as_slice).collect();
        let block = Block::build(&views);
        assert_eq!(block.slots, 40);
        for (chunk, own) in signatures.iter().enumerate() {
            let needle = needle_positions(&[(chunk as u64 * 200) * 1_000 + chunk as u64]);
            let found = Block::candidates(block.bits, block.slots, &needle, |band| block.band(band));
            assert!(found.contains(&chunk), "chunk {chunk} holds its own key");
            for slot in &found {
                assert!(holds(&signatures[*slot], &needle), "a block's candidates are what the signatures say");
            }
            assert!(holds(own, &needle));
        }
    }

    /// The block of `signatures` as its definition says, one bit at a time: position `p`'s
    /// slice has slot `s` set when bit `p % (8 × len)` of signature `s` is.
    fn reference_slices(signatures: &[&[u8]], bits: usize) -> Vec<u8> {
        let slice = Block::slice_bytes(signatures.len());
        let mut slices = vec![0_u8; bits * slice];
        for (slot, signature) in signatures.iter().enumerate() {
            for position in 0..bits {
                if bit(signature, position as u32) {
                    slices[position * slice + slot / 8] |= 1 << (slot % 8);
                }
            }
        }
        slices
    }

    #[test]
    fn transposing_a_byte_matrix_moves_each_bit_across_the_diagonal() {
        for (row, column) in [(0, 0), (0, 7), (7, 0), (3, 5), (6, 2)] {
            let matrix = 1_u64 << (8 * row + column);
            assert_eq!(transpose8(matrix), 1 << (8 * column + row), "row {row} column {column}");
        }
        assert_eq!(transpose8(u64::MAX), u64::MAX);
    }

    proptest! {
        /// A block built eight slots at a time equals one built a bit at a time, for
        /// signatures of mixed sizes (empty, smaller and not a power of two included) and any
        /// count of slots.
        #[test]
        fn a_block_is_its_signatures_bit_sliced(
            signatures in proptest::collection::vec(
                prop_oneof![
                    Just(Vec::new()),
                    proptest::collection::vec(any::<u8>(), 64),
                    proptest::collection::vec(any::<u8>(), 128),
                    proptest::collection::vec(any::<u8>(), 1..100),
                ],
                1..30,
            )
        ) {
            let views: Vec<&[u8]> = signatures.iter().map(Vec::as_slice).collect();
            let block = Block::build(&views);
            let slice = Block::slice_bytes(views.len());
            let band_bytes = band_positions(views.len()) as usize * slice;
            let built: Vec<u8> = (0..block.band_count())
                .flat_map(|band| match block.band(band as u32) {
                    Some(slices) => slices.to_vec(),
                    None => vec![0; band_bytes],
                })
                .collect();
            prop_assert_eq!(
                block.stored_bands().map(|(band, _)| band).collect::<Vec<_>>(),
                (0..block.band_count() as u32).filter(|band| block.band(*band).is_some()).collect::<Vec<_>>()
            );
            let expected = reference_slices(&views, block.bits as usize);
            prop_assert_eq!(&built[..expected.len()], &expected[..]);
            prop_assert!(built[expected.len()..].iter().all(|byte| *byte == 0));
        }

        /// A block's candidates for a needle are exactly the chunks whose own signatures hold
        /// it: bit-slicing changes nothing.
        #[test]
        fn a_block_answers_as_its_signatures_do(
            chunks in proptest::collection::vec(proptest::collection::vec(0_u64..5_000, 0..300), 1..20),
            needle in proptest::collection::vec(0_u64..5_000, 1..4),
        ) {
            let signatures: Vec<Vec<u8>> = chunks.iter().map(|keys| signature(keys.iter().copied()).folded()).collect();
            let views: Vec<&[u8]> = signatures.iter().map(Vec::as_slice).collect();
            let block = Block::build(&views);
            let positions = needle_positions(&needle);
            let found = Block::candidates(block.bits, block.slots, &positions, |band| block.band(band));
            let expected: Vec<usize> = (0..signatures.len()).filter(|slot| holds(&signatures[*slot], &positions)).collect();
            prop_assert_eq!(&found, &expected);
            // The same, narrowed in rounds, as a store reads it.
            let stored = [StoredBlock { id: 7, bits: block.bits, chunks: (100..100 + block.slots as i64).collect() }];
            let mut narrowing = Narrowing::new(&stored, &positions);
            while let Some((ids, bands)) = narrowing.next_round() {
                prop_assert_eq!(&ids, &[7]);
                let rows = bands
                    .iter()
                    .filter_map(|band| Some((7, *band, block.band(*band)?.to_vec())))
                    .collect();
                narrowing.apply(rows);
            }
            let chunks: Vec<i64> = expected.iter().map(|slot| 100 + *slot as i64).collect();
            prop_assert_eq!(narrowing.chunks(), chunks);
        }
    }
}
