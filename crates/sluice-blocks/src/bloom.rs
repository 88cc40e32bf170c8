//! A block's index: one Bloom filter a granule, all of the block's filters of one width and
//! stored **bit-sliced** (for each bit position, one bit a granule, the positions' slices one
//! after another in a bit array), so a lookup reads only the positions of the needle's keys, at
//! most nine bytes each, whatever the block's size. A block has at most 64 granules, so a
//! position's slice is a `u64` of granules.
//!
//! A filter has [`BITS_PER_KEY`] bits for each distinct key of the granule that holds the most,
//! and each key sets [`HASHES`] positions (Kirsch and Mitzenmacher's double hashing of the key's
//! 64 bits, reduced to the width by Lemire's multiply-shift). A needle is looked up by several
//! keys, each of which must be held, so few bits a key keep false candidates rare.

use std::collections::HashSet;
use std::hash::{BuildHasherDefault, Hasher};
use std::ops::Range;

/// Bits of a granule's filter for each distinct key of the fullest granule.
pub const BITS_PER_KEY: u64 = 6;
/// Positions a key sets.
pub const HASHES: u64 = 2;
/// The narrowest filter, in bits.
pub const MIN_BITS: u64 = 64;
/// The widest filter, in bits (8 MiB a granule): a granule whose keys need more is refused
/// ([`crate::EncodeError::TooLarge`]) and its logs go into smaller blocks.
pub const MAX_BITS: u64 = 64 << 20;

/// The positions `key` sets in a filter of `bits` bits.
pub fn positions(key: u64, bits: u64) -> [u64; HASHES as usize] {
    // Keys are hashes already, but a filter field's or a test's may not spread over 64 bits:
    // one round of a 64-bit finalizer (SplitMix64's) spreads any key.
    let key = {
        let key = (key ^ (key >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
        let key = (key ^ (key >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
        key ^ (key >> 31)
    };
    let step = key.rotate_left(32) | 1;
    std::array::from_fn(|index| {
        let hash = key.wrapping_add((index as u64).wrapping_mul(step));
        ((u128::from(hash) * u128::from(bits)) >> 64) as u64
    })
}

/// Bytes of an index of `granules` filters of `bits` bits.
pub const fn index_len(bits: u64, granules: usize) -> usize {
    (bits as usize * granules).div_ceil(8)
}

/// The bytes of an index of `granules` granules that hold position `position`'s slice.
pub fn slice_range(position: u64, granules: usize) -> Range<usize> {
    let first = position as usize * granules;
    first / 8..(first + granules).div_ceil(8)
}

/// Position `position`'s slice (bit `g` for granule `g`), from the bytes of its
/// [`slice_range`]; `None` when they are not as many.
pub fn slice_bits(bytes: &[u8], position: u64, granules: usize) -> Option<u64> {
    if bytes.len() != slice_range(position, granules).len() || granules > 64 {
        return None;
    }
    let shift = (position as usize * granules) % 8;
    let mut word = 0_u128;
    for (at, byte) in bytes.iter().enumerate() {
        word |= u128::from(*byte) << (8 * at);
    }
    let mask = if granules == 64 { u64::MAX } else { (1_u64 << granules) - 1 };
    Some((word >> shift) as u64 & mask)
}

/// A hasher for keys that are hashes already: it keeps the key.
#[derive(Default)]
pub struct KeyHasher(u64);

impl Hasher for KeyHasher {
    fn finish(&self) -> u64 {
        self.0
    }

    fn write(&mut self, bytes: &[u8]) {
        for byte in bytes {
            self.0 = self.0.rotate_left(8) ^ u64::from(*byte);
        }
    }

    fn write_u64(&mut self, key: u64) {
        self.0 = key;
    }
}

/// A set of keys hashed by themselves.
pub type KeySet = HashSet<u64, BuildHasherDefault<KeyHasher>>;

/// The distinct keys of each granule of a block, as they are gathered.
#[derive(Debug, Default)]
pub struct IndexBuilder {
    granules: Vec<KeySet>,
}

impl IndexBuilder {
    /// The keys of a new granule, to fill.
    pub fn granule(&mut self) -> &mut KeySet {
        // Sized for a granule of varied text at once: growing it was 4 % of ingest.
        self.granules.push(KeySet::with_capacity_and_hasher(8_192, Default::default()));
        let last = self.granules.len() - 1;
        &mut self.granules[last]
    }

    /// The filters' width and their bit-sliced bytes.
    pub fn finish(self) -> (u64, Vec<u8>) {
        let most = self.granules.iter().map(HashSet::len).max().unwrap_or(0) as u64;
        let bits = (most * BITS_PER_KEY).max(MIN_BITS);
        let count = self.granules.len();
        let mut bytes = vec![0_u8; index_len(bits, count)];
        for (granule, keys) in self.granules.iter().enumerate() {
            for key in keys {
                for position in positions(*key, bits) {
                    let bit = position as usize * count + granule;
                    bytes[bit / 8] |= 1 << (bit % 8);
                }
            }
        }
        (bits, bytes)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_key_put_in_a_granule_is_found_there() {
        let mut builder = IndexBuilder::default();
        for granule in 0..11_u64 {
            builder.granule().extend((0..500).map(|key| key * 7919 + granule));
        }
        let (bits, bytes) = builder.finish();
        assert_eq!(bytes.len(), (bits as usize * 11).div_ceil(8));
        let mut found = 0;
        for granule in 0..11_u64 {
            for key in (0..500).map(|key| key * 7919 + granule) {
                let mut held = u64::MAX;
                for position in positions(key, bits) {
                    held &= slice_bits(&bytes[slice_range(position, 11)], position, 11).unwrap();
                }
                assert!(held & (1 << granule) != 0);
                found += held.count_ones();
            }
        }
        // Six bits and two positions a key: about 8 % of the other granules hold a key falsely.
        let false_rate = f64::from(found - 11 * 500) / (11.0 * 500.0 * 10.0);
        assert!(false_rate < 0.12, "{false_rate}");
    }

    #[test]
    fn positions_stay_inside_the_filter() {
        for bits in [64, 65, 1000, 1 << 20] {
            for key in [0, 1, u64::MAX, 0x8000_0000_0000_0000, 12_345_678_901] {
                assert!(positions(key, bits).iter().all(|position| *position < bits));
            }
        }
    }
}
