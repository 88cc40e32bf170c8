//! The codecs of a granule's columns, before zstd ([`crate::codec::put_section`]): ids as
//! deltas of their high halves and (when smaller) of their low halves, integers as zigzag
//! deltas, and text as a dictionary of distinct values with an index a row when values
//! repeat (at most half the rows distinct), else as each row's length then all the bytes (lengths and text apart, which zstd
//! compresses better than interleaved).

use sluice_model::LogId;

use crate::DecodeError;
use crate::codec::{Reader, put_signed, put_varint};

const ALL_ABSENT: u8 = 0;
const DICTIONARY: u8 = 1;
const PLAIN: u8 = 2;

const LOW_RAW: u8 = 0;
const LOW_DELTAS: u8 = 1;

/// Ids, in the order given (a block's are ascending).
pub fn encode_ids(ids: &[LogId], out: &mut Vec<u8>) {
    let halves: Vec<(u64, u64)> = ids.iter().map(|id| halves(id.as_bytes())).collect();
    let mut previous = 0_u64;
    for (high, _) in &halves {
        put_signed(out, high.wrapping_sub(previous) as i64);
        previous = *high;
    }
    let mut deltas = Vec::new();
    let mut previous = 0_u64;
    for (_, low) in &halves {
        put_signed(&mut deltas, low.wrapping_sub(previous) as i64);
        previous = *low;
    }
    if deltas.len() < halves.len() * 8 {
        out.push(LOW_DELTAS);
        out.extend_from_slice(&deltas);
    } else {
        out.push(LOW_RAW);
        halves.iter().for_each(|(_, low)| out.extend_from_slice(&low.to_le_bytes()));
    }
}

fn halves(bytes: &[u8; 16]) -> (u64, u64) {
    let mut high = [0; 8];
    let mut low = [0; 8];
    high.copy_from_slice(&bytes[..8]);
    low.copy_from_slice(&bytes[8..]);
    (u64::from_be_bytes(high), u64::from_be_bytes(low))
}

/// Reads `rows` ids written by [`encode_ids`].
pub fn decode_ids(reader: &mut Reader<'_>, rows: usize) -> Result<Vec<LogId>, DecodeError> {
    let mut highs = Vec::with_capacity(rows.min(reader.remaining()));
    let mut previous = 0_u64;
    for _ in 0..rows {
        previous = previous.wrapping_add(reader.signed()? as u64);
        highs.push(previous);
    }
    let mut ids = Vec::with_capacity(highs.len());
    let raw = match reader.byte()? {
        LOW_RAW => true,
        LOW_DELTAS => false,
        _ => return Err(DecodeError::Corrupt("unknown id encoding")),
    };
    let mut previous = 0_u64;
    for high in highs {
        let low = if raw {
            u64::from_le_bytes(reader.array::<8>()?)
        } else {
            previous = previous.wrapping_add(reader.signed()? as u64);
            previous
        };
        let mut bytes = [0_u8; 16];
        bytes[..8].copy_from_slice(&high.to_be_bytes());
        bytes[8..].copy_from_slice(&low.to_be_bytes());
        ids.push(LogId::from_slice(&bytes).ok_or(DecodeError::Corrupt("id"))?);
    }
    Ok(ids)
}

/// Integers as zigzag deltas, each from the one before (the first from zero).
pub fn encode_ints(values: impl IntoIterator<Item = i64>, out: &mut Vec<u8>) {
    let mut previous = 0_i64;
    for value in values {
        put_signed(out, value.wrapping_sub(previous));
        previous = value;
    }
}

/// Reads `rows` integers written by [`encode_ints`].
pub fn decode_ints(reader: &mut Reader<'_>, rows: usize) -> Result<Vec<i64>, DecodeError> {
    let mut values = Vec::with_capacity(rows.min(reader.remaining()));
    let mut previous = 0_i64;
    for _ in 0..rows {
        previous = previous.wrapping_add(reader.signed()?);
        values.push(previous);
    }
    Ok(values)
}

/// A column of optional text, as decoded: one buffer, each distinct value's span in it, and
/// each row's value (0 for none, else a span's number plus one).
#[derive(Debug, Clone, Default)]
pub struct TextColumn {
    buffer: String,
    spans: Vec<(u32, u32)>,
    rows: Vec<u32>,
}

impl TextColumn {
    /// The value of `row`; `None` when it is unset or past the column's end.
    pub fn get(&self, row: usize) -> Option<&str> {
        let entry = *self.rows.get(row)?;
        let (start, end) = *self.spans.get(entry.checked_sub(1)? as usize)?;
        self.buffer.get(start as usize..end as usize)
    }

    /// Rows in the column.
    pub fn len(&self) -> usize {
        self.rows.len()
    }

    /// Whether it has no rows.
    pub fn is_empty(&self) -> bool {
        self.rows.is_empty()
    }
}

/// Optional text: a dictionary when at most half the rows hold a distinct value.
pub fn encode_text<'a>(values: &[Option<&'a str>], out: &mut Vec<u8>) {
    if values.iter().all(Option::is_none) {
        out.push(ALL_ABSENT);
        return;
    }
    let mut distinct: Vec<&'a str> = Vec::new();
    // xxh3, not SipHash: a granule's messages are long, and hashing them was a tenth of ingest.
    let mut lookup: std::collections::HashMap<&'a str, u32, xxhash_rust::xxh3::Xxh3DefaultBuilder> =
        std::collections::HashMap::with_capacity_and_hasher(values.len(), xxhash_rust::xxh3::Xxh3DefaultBuilder);
    let mut indexes = Vec::with_capacity(values.len());
    for value in values {
        indexes.push(match value {
            None => 0,
            Some(text) => *lookup.entry(text).or_insert_with(|| {
                distinct.push(text);
                distinct.len() as u32
            }),
        });
    }
    if distinct.len() * 2 <= values.len() {
        out.push(DICTIONARY);
        put_varint(out, distinct.len() as u64);
        distinct.iter().for_each(|text| put_varint(out, text.len() as u64));
        distinct.iter().for_each(|text| out.extend_from_slice(text.as_bytes()));
        indexes.iter().for_each(|index| put_varint(out, u64::from(*index)));
    } else {
        out.push(PLAIN);
        values.iter().for_each(|value| put_varint(out, value.map_or(0, |text| text.len() as u64 + 1)));
        values.iter().flatten().for_each(|text| out.extend_from_slice(text.as_bytes()));
    }
}

/// Reads `rows` values written by [`encode_text`].
pub fn decode_text(reader: &mut Reader<'_>, rows: usize) -> Result<TextColumn, DecodeError> {
    let mut column = TextColumn::default();
    let mut lengths = Vec::new();
    match reader.byte()? {
        ALL_ABSENT => column.rows = vec![0; rows],
        DICTIONARY => {
            // At most half the rows are distinct where the encoder chose a dictionary.
            let count = reader.count(rows)?;
            for _ in 0..count {
                lengths.push(reader.count(u32::MAX as usize)?);
            }
            column.buffer = take_text(reader, &lengths)?;
            column.spans = spans(&lengths);
            column.rows.reserve(rows.min(reader.remaining()));
            for _ in 0..rows {
                column.rows.push(reader.count(count)? as u32);
            }
        }
        PLAIN => {
            for _ in 0..rows {
                let length = reader.count(u32::MAX as usize)?;
                if length == 0 {
                    column.rows.push(0);
                } else {
                    lengths.push(length - 1);
                    column.rows.push(lengths.len() as u32);
                }
            }
            column.buffer = take_text(reader, &lengths)?;
            column.spans = spans(&lengths);
        }
        _ => return Err(DecodeError::Corrupt("unknown text encoding")),
    }
    Ok(column)
}

/// The bytes of values of `lengths`, checked to be UTF-8 and cut at character boundaries.
fn take_text(reader: &mut Reader<'_>, lengths: &[usize]) -> Result<String, DecodeError> {
    let total =
        lengths.iter().try_fold(0_usize, |sum, length| sum.checked_add(*length)).ok_or(DecodeError::Truncated)?;
    let text =
        String::from_utf8(reader.take(total)?.to_vec()).map_err(|_| DecodeError::Corrupt("text is not UTF-8"))?;
    let mut at = 0;
    for length in lengths {
        at += length;
        if !text.is_char_boundary(at) {
            return Err(DecodeError::Corrupt("a value splits a character"));
        }
    }
    if u32::try_from(text.len()).is_err() {
        return Err(DecodeError::Corrupt("text column over 4 GiB"));
    }
    Ok(text)
}

fn spans(lengths: &[usize]) -> Vec<(u32, u32)> {
    let mut at = 0_u32;
    lengths
        .iter()
        .map(|length| {
            let span = (at, at + *length as u32);
            at = span.1;
            span
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use proptest::prelude::*;

    use super::*;

    proptest! {
        #[test]
        fn text_round_trips(values in proptest::collection::vec(proptest::option::of(prop_oneof!["[a-c]{0,3}", ".{0,12}"]), 0..60)) {
            let borrowed: Vec<Option<&str>> = values.iter().map(Option::as_deref).collect();
            let mut out = Vec::new();
            encode_text(&borrowed, &mut out);
            let column = decode_text(&mut Reader::new(&out), values.len()).unwrap();
            for (row, value) in values.iter().enumerate() {
                prop_assert_eq!(column.get(row), value.as_deref());
            }
        }

        #[test]
        fn ids_and_ints_round_trip(raw in proptest::collection::vec(any::<u128>(), 0..40), ints in proptest::collection::vec(any::<i64>(), 0..40)) {
            let ids: Vec<LogId> = raw.iter().map(|value| LogId::from_slice(&value.to_be_bytes()).unwrap()).collect();
            let mut out = Vec::new();
            encode_ids(&ids, &mut out);
            encode_ints(ints.iter().copied(), &mut out);
            let mut reader = Reader::new(&out);
            prop_assert_eq!(decode_ids(&mut reader, ids.len()).unwrap(), ids);
            prop_assert_eq!(decode_ints(&mut reader, ints.len()).unwrap(), ints);
            prop_assert!(reader.is_empty());
        }
    }

    #[test]
    fn consecutive_ids_take_a_few_bytes_each() {
        let ids: Vec<LogId> = (0..1000_u128)
            .map(|n| LogId::from_slice(&(0x0190_0000_0000_7000_8000_0000_0000_0000_u128 + n).to_be_bytes()).unwrap())
            .collect();
        let mut out = Vec::new();
        encode_ids(&ids, &mut out);
        assert!(out.len() < 2 * ids.len() + 32, "{} bytes", out.len());
    }
}
