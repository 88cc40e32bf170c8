//! The byte-level codecs every part of a block is written with: LEB128 varints, zigzag for
//! signed deltas, length-prefixed strings, and zstd frames with a bounded decompressed size,
//! read back through [`Reader`], which never reads past its input or allocates more than its
//! input declares within [`MAX_SECTION_BYTES`].

use crate::DecodeError;

/// The most bytes one decompressed section (a column of a granule, a head) may declare; a
/// decoder refuses more, so hostile bytes cannot make it allocate without bound.
pub const MAX_SECTION_BYTES: usize = 64 << 20;

/// The zstd level blocks are written with: level 3 (zstd's default) compresses a granule's
/// column at several hundred MB/s on one core, far above what ingest asks of it.
pub const ZSTD_LEVEL: i32 = 3;

/// Appends `value` as an unsigned LEB128 varint (7 bits a byte, low bits first).
pub fn put_varint(out: &mut Vec<u8>, mut value: u64) {
    while value >= 0x80 {
        out.push((value as u8) | 0x80);
        value >>= 7;
    }
    out.push(value as u8);
}

/// Maps a signed value to an unsigned one with small magnitudes small (0, -1, 1, -2 ... to 0, 1, 2, 3 ...).
pub const fn zigzag(value: i64) -> u64 {
    ((value << 1) ^ (value >> 63)) as u64
}

/// The inverse of [`zigzag`].
pub const fn unzigzag(value: u64) -> i64 {
    ((value >> 1) as i64) ^ -((value & 1) as i64)
}

/// Appends a signed value as a zigzag varint.
pub fn put_signed(out: &mut Vec<u8>, value: i64) {
    put_varint(out, zigzag(value));
}

/// Appends `bytes` preceded by their length as a varint.
pub fn put_bytes(out: &mut Vec<u8>, bytes: &[u8]) {
    put_varint(out, bytes.len() as u64);
    out.extend_from_slice(bytes);
}

/// A cursor over encoded bytes: every read checks what is left and fails with a
/// [`DecodeError`] instead of panicking or reading on.
#[derive(Debug, Clone)]
pub struct Reader<'a> {
    bytes: &'a [u8],
    at: usize,
}

impl<'a> Reader<'a> {
    /// Reads `bytes` from their start.
    pub const fn new(bytes: &'a [u8]) -> Self {
        Reader { bytes, at: 0 }
    }

    /// Bytes not read yet.
    pub fn remaining(&self) -> usize {
        self.bytes.len() - self.at
    }

    /// Whether everything was read.
    pub fn is_empty(&self) -> bool {
        self.remaining() == 0
    }

    /// The next `count` bytes.
    pub fn take(&mut self, count: usize) -> Result<&'a [u8], DecodeError> {
        let end = self.at.checked_add(count).filter(|end| *end <= self.bytes.len()).ok_or(DecodeError::Truncated)?;
        let taken = &self.bytes[self.at..end];
        self.at = end;
        Ok(taken)
    }

    /// The next byte.
    pub fn byte(&mut self) -> Result<u8, DecodeError> {
        Ok(self.take(1)?[0])
    }

    /// The next `N` bytes as an array.
    pub fn array<const N: usize>(&mut self) -> Result<[u8; N], DecodeError> {
        let mut array = [0; N];
        array.copy_from_slice(self.take(N)?);
        Ok(array)
    }

    /// An unsigned LEB128 varint of at most ten bytes.
    pub fn varint(&mut self) -> Result<u64, DecodeError> {
        let mut value = 0_u64;
        for shift in (0..64).step_by(7) {
            let byte = self.byte()?;
            let bits = u64::from(byte & 0x7f);
            if shift == 63 && bits > 1 {
                return Err(DecodeError::Corrupt("varint overflows 64 bits"));
            }
            value |= bits << shift;
            if byte & 0x80 == 0 {
                return Ok(value);
            }
        }
        Err(DecodeError::Corrupt("varint longer than ten bytes"))
    }

    /// A varint that counts or sizes something, at most `max`.
    pub fn count(&mut self, max: usize) -> Result<usize, DecodeError> {
        let value = self.varint()?;
        usize::try_from(value).ok().filter(|value| *value <= max).ok_or(DecodeError::Corrupt("count out of range"))
    }

    /// A zigzag varint.
    pub fn signed(&mut self) -> Result<i64, DecodeError> {
        Ok(unzigzag(self.varint()?))
    }

    /// Length-prefixed bytes.
    pub fn bytes(&mut self) -> Result<&'a [u8], DecodeError> {
        let length = self.count(self.remaining())?;
        self.take(length)
    }

    /// Length-prefixed UTF-8 text.
    pub fn text(&mut self) -> Result<&'a str, DecodeError> {
        std::str::from_utf8(self.bytes()?).map_err(|_| DecodeError::Corrupt("text is not UTF-8"))
    }
}

thread_local! {
    /// Each thread's zstd contexts, made once: making one for each section cost more than
    /// decompressing most sections (a sixth of a search's time when each had its own).
    static COMPRESSOR: std::cell::RefCell<Option<zstd::bulk::Compressor<'static>>> =
        const { std::cell::RefCell::new(None) };
    static DECOMPRESSOR: std::cell::RefCell<Option<zstd::bulk::Decompressor<'static>>> =
        const { std::cell::RefCell::new(None) };
}

fn compress(payload: &[u8]) -> Option<Vec<u8>> {
    COMPRESSOR.with(|cell| {
        let mut cell = cell.try_borrow_mut().ok()?;
        if cell.is_none() {
            *cell = zstd::bulk::Compressor::new(ZSTD_LEVEL).ok();
        }
        cell.as_mut()?.compress(payload).ok()
    })
}

fn decompress(frame: &[u8], length: usize) -> Option<Vec<u8>> {
    DECOMPRESSOR.with(|cell| {
        let mut cell = cell.try_borrow_mut().ok()?;
        if cell.is_none() {
            *cell = zstd::bulk::Decompressor::new().ok();
        }
        cell.as_mut()?.decompress(frame, length).ok()
    })
}

/// How a section's payload is stored: as it is, or as one zstd frame.
const RAW: u8 = 0;
const ZSTD: u8 = 1;

/// Appends `payload` as a section: a byte saying how it is stored, then (compressed) its
/// decompressed length and the zstd frame, or (raw) the payload itself, preceded by the
/// section's length. Compressed only when that makes it smaller.
pub fn put_section(out: &mut Vec<u8>, payload: &[u8]) {
    let compressed = if payload.len() > 32 { compress(payload) } else { None };
    match compressed {
        Some(frame) if frame.len() + 4 < payload.len() => {
            let mut section = Vec::with_capacity(frame.len() + 6);
            section.push(ZSTD);
            put_varint(&mut section, payload.len() as u64);
            section.extend_from_slice(&frame);
            put_bytes(out, &section);
        }
        _ => {
            put_varint(out, payload.len() as u64 + 1);
            out.push(RAW);
            out.extend_from_slice(payload);
        }
    }
}

/// Reads a section written by [`put_section`] and returns its payload.
pub fn read_section<'a>(reader: &mut Reader<'a>) -> Result<std::borrow::Cow<'a, [u8]>, DecodeError> {
    let section = reader.bytes()?;
    let mut inner = Reader::new(section);
    match inner.byte()? {
        RAW => Ok(std::borrow::Cow::Borrowed(inner.take(inner.remaining())?)),
        ZSTD => {
            let length = inner.count(MAX_SECTION_BYTES)?;
            let frame = inner.take(inner.remaining())?;
            let payload = decompress(frame, length).ok_or(DecodeError::Corrupt("zstd frame"))?;
            if payload.len() != length {
                return Err(DecodeError::Corrupt("zstd frame of another length"));
            }
            Ok(std::borrow::Cow::Owned(payload))
        }
        _ => Err(DecodeError::Corrupt("unknown section encoding")),
    }
}

#[cfg(test)]
mod tests {
    use proptest::prelude::*;

    use super::*;

    proptest! {
        #[test]
        fn varints_and_zigzag_round_trip(values in proptest::collection::vec(any::<i64>(), 0..50)) {
            let mut out = Vec::new();
            for value in &values {
                put_signed(&mut out, *value);
                put_varint(&mut out, *value as u64);
            }
            let mut reader = Reader::new(&out);
            for value in &values {
                prop_assert_eq!(reader.signed().unwrap(), *value);
                prop_assert_eq!(reader.varint().unwrap(), *value as u64);
            }
            prop_assert!(reader.is_empty());
        }

        #[test]
        fn sections_round_trip(payload in proptest::collection::vec(0_u8..4, 0..3000)) {
            let mut out = Vec::new();
            put_section(&mut out, &payload);
            put_section(&mut out, b"tail");
            let mut reader = Reader::new(&out);
            prop_assert_eq!(&*read_section(&mut reader).unwrap(), &payload[..]);
            prop_assert_eq!(&*read_section(&mut reader).unwrap(), b"tail");
            prop_assert!(reader.is_empty());
        }
    }

    #[test]
    fn a_varint_past_64_bits_is_refused() {
        let mut reader = Reader::new(&[0xff; 11]);
        assert!(reader.varint().is_err());
        let mut reader = Reader::new(&[0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0x02]);
        assert!(reader.varint().is_err());
    }

    #[test]
    fn a_section_declaring_more_than_it_holds_is_refused() {
        let mut out = Vec::new();
        put_section(&mut out, &[7; 4096]);
        // Its declared length, two bytes after the section's own length and encoding byte.
        let mut forged = out.clone();
        forged[3] = forged[3].wrapping_add(1);
        assert!(read_section(&mut Reader::new(&forged)).is_err());
        assert!(read_section(&mut Reader::new(&out[..out.len() - 1])).is_err());
    }
}
