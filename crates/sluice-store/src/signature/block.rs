//! Blocks: the signatures of up to [`BLOCK_CHUNKS`] chunks gathered and stored bit-sliced
//! (one slice of a bit per chunk for each position, in bands of [`super::BAND_BYTES`]), built by a
//! store's sealer ([`Block::build`]) and narrowed by a search in rounds ([`Narrowing`]).

use super::{BLOCK_CHUNKS, HASHES, SIGNATURE_BITS, band_positions};

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
    /// One allocation, not one per band: a block's 65,536 bands of 512 bytes were as many
    /// small buffers, made on one thread and freed on another. (Suspected of the PostgreSQL
    /// soak's climb in RSS, which went on without them: docs/PERFORMANCE.md, issue 25.)
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

/// Bytes `at..at + 8` of a folded signature as it is read (its own bytes, repeated), byte `k`
/// in bits `8k..8k + 8`; `at` is a multiple of eight.
fn eight_bytes(signature: &[u8], at: usize) -> u64 {
    let len = signature.len();
    if len == 0 {
        return 0;
    }
    // A stored signature's length is a power of two of 64 bytes or more: eight of its own
    // bytes, read as one word.
    if len.is_multiple_of(8) {
        let start = if len.is_power_of_two() { at & (len - 1) } else { at % len };
        if let Some(word) = signature.get(start..start + 8) {
            let mut bytes = [0_u8; 8];
            bytes.copy_from_slice(word);
            return u64::from_le_bytes(bytes);
        }
    }
    (0..8).fold(0, |word, k| word | u64::from(signature[(at + k) % len]) << (8 * k))
}

/// Transposes eight words as an 8x8 matrix of bytes (row `r` is word `r`, column `c` its byte
/// `c`): byte `r` of word `c` becomes byte `c` of word `r`. Three rounds swapping the blocks
/// across the diagonal, of 1, 2 and 4 bytes.
fn transpose_bytes(rows: &mut [u64; 8]) {
    for (distance, mask) in [(1, 0x00ff_00ff_00ff_00ff_u64), (2, 0x0000_ffff_0000_ffff), (4, 0x0000_0000_ffff_ffff)] {
        for i in (0..8).filter(|i| i & distance == 0) {
            let j = i + distance;
            let swap = ((rows[i] >> (8 * distance)) ^ rows[j]) & mask;
            rows[j] ^= swap;
            rows[i] ^= swap << (8 * distance);
        }
    }
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
        let bytes = bits as usize / 8;
        // Written in order of position, at its final size from the start (a block's 32 MiB
        // grown by doubling held up to half as much again at the sealer's peak).
        let mut slices: Vec<u8> = Vec::with_capacity(bits as usize * slice);
        // The slices of the 64 positions of eight bytes of the signatures.
        let mut out = vec![0_u8; 64 * slice];
        // Eight slots and eight bytes at a time: a byte of each of eight slots' signatures is
        // an 8x8 bit matrix, whose transpose is the byte of those slots in each of eight
        // positions' slices. The slices are written in order (a block's 32 MB one bit at a
        // time took the sealer about a second, a seventh of the server's CPU under sustained
        // ingest; a byte at a time, a tenth of the server's CPU under PostgreSQL ingest).
        for byte_at in (0..bytes).step_by(8) {
            let width = (bytes - byte_at).min(8);
            out.fill(0);
            for (group, slots) in signatures.chunks(8).enumerate() {
                // Row `r`: the eight bytes from `byte_at` of slot `r`'s signature.
                let mut rows = [0_u64; 8];
                for (row, signature) in rows.iter_mut().zip(slots) {
                    *row = eight_bytes(signature, byte_at);
                }
                if rows == [0; 8] {
                    continue;
                }
                // Now row `k` is byte `k` of each slot: the matrix of byte position `k`.
                transpose_bytes(&mut rows);
                for (k, matrix) in rows.iter().take(width).enumerate() {
                    if *matrix == 0 {
                        continue;
                    }
                    let transposed = transpose8(*matrix);
                    for bit in 0..8 {
                        out[(8 * k + bit) * slice + group] = (transposed >> (8 * bit)) as u8;
                    }
                }
            }
            slices.extend_from_slice(&out[..8 * width * slice]);
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
        (0..u32::try_from(self.band_count()).unwrap_or(u32::MAX)).filter_map(|band| Some((band, self.band(band)?)))
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
        Self::in_rounds_of(blocks, positions, HASHES)
    }

    /// [`Narrowing::new`] with `per_round` positions a round: all of them in one, for blocks
    /// expected to hold the needle (each would read its next key's bands in the next round
    /// anyway, a statement more for the same bands).
    pub fn in_rounds_of(
        blocks: impl IntoIterator<Item = &'a StoredBlock>,
        positions: &'a [u32],
        per_round: usize,
    ) -> Self {
        let alive = blocks.into_iter().map(|block| (block, Block::all_slots(block.chunks.len()))).collect();
        Self { alive, rounds: positions.chunks(per_round.max(1)), round: &[] }
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
    use crate::signature::tests::signature;
    use crate::signature::{bit, holds, needle_positions};

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

    #[test]
    fn transposing_eight_words_moves_each_byte_across_the_diagonal() {
        // Byte `c` of word `r` holds `16 r + c`, so each byte says where it came from.
        let mut rows: [u64; 8] = std::array::from_fn(|row| {
            (0..8).fold(0, |word, column| word | ((16 * row + column) as u64) << (8 * column))
        });
        transpose_bytes(&mut rows);
        for (row, word) in rows.iter().enumerate() {
            for column in 0..8 {
                assert_eq!((word >> (8 * column)) as u8, (16 * column + row) as u8, "row {row} column {column}");
            }
        }
    }

    #[test]
    fn eight_bytes_of_a_folded_signature_repeat_it() {
        let signature: Vec<u8> = (1..=64).collect();
        assert_eq!(eight_bytes(&signature, 8), u64::from_le_bytes([9, 10, 11, 12, 13, 14, 15, 16]));
        assert_eq!(eight_bytes(&signature, 64 + 56), u64::from_le_bytes([57, 58, 59, 60, 61, 62, 63, 64]));
        assert_eq!(eight_bytes(&[1, 2, 3], 0), u64::from_le_bytes([1, 2, 3, 1, 2, 3, 1, 2]));
        assert_eq!(eight_bytes(&[1, 2, 3], 8), u64::from_le_bytes([3, 1, 2, 3, 1, 2, 3, 1]));
        assert_eq!(eight_bytes(&[], 8), 0);
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
            // The same, narrowed in rounds, as a store reads it: a key's positions a round, one
            // position a round, or all in one.
            let stored = [StoredBlock { id: 7, bits: block.bits, chunks: (100..100 + block.slots as i64).collect() }];
            let chunks: Vec<i64> = expected.iter().map(|slot| 100 + *slot as i64).collect();
            for per_round in [HASHES, 1, positions.len()] {
                let mut narrowing = Narrowing::in_rounds_of(&stored, &positions, per_round);
                while let Some((ids, bands)) = narrowing.next_round() {
                    prop_assert_eq!(&ids, &[7]);
                    let rows = bands
                        .iter()
                        .filter_map(|band| Some((7, *band, block.band(*band)?.to_vec())))
                        .collect();
                    narrowing.apply(rows);
                }
                prop_assert_eq!(narrowing.chunks(), chunks.clone());
            }
        }
    }
}
