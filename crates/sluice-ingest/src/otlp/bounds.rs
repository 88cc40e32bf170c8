//! How much an OTLP body may make us hold, counted before it is decoded.
//!
//! A decoded message costs far more than its bytes (an empty `LogRecord` is 2 bytes on the
//! wire and about 200 in memory), so a 5 MiB body of empty messages would become a gigabyte.
//! Both encodings are walked once first, counting messages without building them: past
//! [`MAX_MESSAGES`] (or [`max records`](super::MAX_RECORDS)) the body is refused unread.

use std::fmt;

use prost::bytes::Buf;
use prost::encoding::{WireType, decode_key, decode_varint};
use serde::de::{self, DeserializeSeed, Deserializer, MapAccess, SeqAccess, Visitor};

/// The most messages one OTLP body may hold (in OTLP JSON, values of any kind): a full SDK
/// batch of 1,000 records with a dozen attributes each is about 30,000 messages (80,000 JSON
/// values); decoded, the cap costs at most ~20 MB.
pub const MAX_MESSAGES: usize = 100_000;
/// Deeper than this an attribute value is refused (prost's own limit is 100).
const MAX_DEPTH: usize = 64;
/// The deepest OTLP JSON read: an SDK's records with a key-value list attribute inside another
/// are 18 levels. serde buffers each flattened `AnyValue` it reads, once per level, so the
/// depth bounds how many copies of a value a body can make.
const MAX_JSON_DEPTH: usize = 24;

/// What a walk found: messages in all, and log records among them.
#[derive(Debug, Default, Clone, Copy, PartialEq, Eq)]
pub(crate) struct Counts {
    pub messages: usize,
    pub records: usize,
}

/// Why a walk stopped.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum Refusal {
    /// More messages than [`MAX_MESSAGES`].
    TooManyMessages,
    /// More log records than the caller allows.
    TooManyRecords,
    /// Not readable: the reason.
    Malformed(String),
}

/// The message types of `ExportLogsServiceRequest` that hold further messages.
#[derive(Debug, Clone, Copy)]
enum Kind {
    Request,
    ResourceLogs,
    Resource,
    ScopeLogs,
    Scope,
    Record,
    KeyValue,
    AnyValue,
    ArrayValue,
    KeyValueList,
    /// A message whose inside holds nothing we count (an entity reference).
    Leaf,
}

impl Kind {
    /// The kind of message field `tag` holds, or `None` for a scalar or bytes field.
    const fn child(self, tag: u32) -> Option<Kind> {
        match (self, tag) {
            (Kind::Request, 1) => Some(Kind::ResourceLogs),
            (Kind::ResourceLogs, 1) => Some(Kind::Resource),
            (Kind::ResourceLogs, 2) => Some(Kind::ScopeLogs),
            (Kind::Resource, 1) | (Kind::Scope, 3) | (Kind::Record, 6) | (Kind::KeyValueList, 1) => {
                Some(Kind::KeyValue)
            }
            (Kind::Resource, 3) => Some(Kind::Leaf),
            (Kind::ScopeLogs, 1) => Some(Kind::Scope),
            (Kind::ScopeLogs, 2) => Some(Kind::Record),
            (Kind::Record, 5) | (Kind::KeyValue, 2) | (Kind::ArrayValue, 1) => Some(Kind::AnyValue),
            (Kind::AnyValue, 5) => Some(Kind::ArrayValue),
            (Kind::AnyValue, 6) => Some(Kind::KeyValueList),
            _ => None,
        }
    }
}

/// Counts the messages of a protobuf `ExportLogsServiceRequest` without decoding it.
pub(crate) fn count_protobuf(body: &[u8], max_records: usize) -> Result<Counts, Refusal> {
    let mut counts = Counts::default();
    walk(body, Kind::Request, 0, &mut counts, max_records)?;
    Ok(counts)
}

fn walk(mut buf: &[u8], kind: Kind, depth: usize, counts: &mut Counts, max_records: usize) -> Result<(), Refusal> {
    let malformed = |error: prost::DecodeError| Refusal::Malformed(error.to_string());
    if depth > MAX_DEPTH {
        return Err(Refusal::Malformed("values nested too deeply".to_owned()));
    }
    while buf.has_remaining() {
        let (tag, wire_type) = decode_key(&mut buf).map_err(malformed)?;
        match wire_type {
            WireType::Varint => {
                decode_varint(&mut buf).map_err(malformed)?;
            }
            WireType::SixtyFourBit | WireType::ThirtyTwoBit => {
                let width = if wire_type == WireType::SixtyFourBit { 8 } else { 4 };
                if buf.remaining() < width {
                    return Err(Refusal::Malformed("buffer underflow".to_owned()));
                }
                buf.advance(width);
            }
            WireType::LengthDelimited => {
                let length = usize::try_from(decode_varint(&mut buf).map_err(malformed)?).unwrap_or(usize::MAX);
                if length > buf.remaining() {
                    return Err(Refusal::Malformed("buffer underflow".to_owned()));
                }
                let (inside, rest) = buf.split_at(length);
                buf = rest;
                // An entity reference's repeated strings (its id and description keys) are
                // counted like messages: each costs an allocation.
                if matches!(kind, Kind::Leaf) {
                    counts.messages += 1;
                    if counts.messages > MAX_MESSAGES {
                        return Err(Refusal::TooManyMessages);
                    }
                } else if let Some(child) = kind.child(tag) {
                    counts.messages += 1;
                    if counts.messages > MAX_MESSAGES {
                        return Err(Refusal::TooManyMessages);
                    }
                    if matches!(child, Kind::Record) {
                        counts.records += 1;
                        if counts.records > max_records {
                            return Err(Refusal::TooManyRecords);
                        }
                    }
                    walk(inside, child, depth + 1, counts, max_records)?;
                }
            }
            WireType::StartGroup | WireType::EndGroup => {
                return Err(Refusal::Malformed("groups are not used by OTLP".to_owned()));
            }
        }
    }
    Ok(())
}

/// Counts the values of an OTLP JSON body without building them; `Err` past [`MAX_MESSAGES`]
/// values or [`MAX_JSON_DEPTH`] levels, or when the body is no JSON at all (serde_json's own
/// message).
pub(crate) fn count_json(body: &[u8]) -> Result<usize, Refusal> {
    let mut deserializer = serde_json::Deserializer::from_slice(body);
    let mut values = 0;
    let walked =
        Counter { values: &mut values, depth: 0 }.deserialize(&mut deserializer).and_then(|()| deserializer.end());
    match walked {
        Ok(()) => Ok(values),
        Err(_) if values > MAX_MESSAGES => Err(Refusal::TooManyMessages),
        Err(error) => Err(Refusal::Malformed(error.to_string())),
    }
}

/// A visitor that reads any JSON value and counts its values, failing past the caps.
struct Counter<'a> {
    values: &'a mut usize,
    depth: usize,
}

impl Counter<'_> {
    /// Counts one value; an error past the cap.
    fn count<E: de::Error>(&mut self) -> Result<(), E> {
        *self.values += 1;
        if *self.values > MAX_MESSAGES {
            return Err(E::custom("too many values"));
        }
        Ok(())
    }

    /// The counter of a value one level down; an error past the depth.
    fn inner<E: de::Error>(&mut self) -> Result<Counter<'_>, E> {
        if self.depth >= MAX_JSON_DEPTH {
            return Err(E::custom(format!("nested deeper than {MAX_JSON_DEPTH} levels")));
        }
        Ok(Counter { values: &mut *self.values, depth: self.depth + 1 })
    }
}

impl<'de> DeserializeSeed<'de> for Counter<'_> {
    type Value = ();

    fn deserialize<D: Deserializer<'de>>(self, deserializer: D) -> Result<(), D::Error> {
        deserializer.deserialize_any(self)
    }
}

impl<'de> Visitor<'de> for Counter<'_> {
    type Value = ();

    fn expecting(&self, formatter: &mut fmt::Formatter<'_>) -> fmt::Result {
        formatter.write_str("any JSON value")
    }
    fn visit_map<A: MapAccess<'de>>(mut self, mut map: A) -> Result<(), A::Error> {
        self.count()?;
        while map.next_key::<de::IgnoredAny>()?.is_some() {
            map.next_value_seed(self.inner()?)?;
        }
        Ok(())
    }
    fn visit_seq<A: SeqAccess<'de>>(mut self, mut seq: A) -> Result<(), A::Error> {
        self.count()?;
        while seq.next_element_seed(self.inner()?)?.is_some() {}
        Ok(())
    }
    fn visit_bool<E: de::Error>(mut self, _: bool) -> Result<(), E> {
        self.count()
    }
    fn visit_i64<E: de::Error>(mut self, _: i64) -> Result<(), E> {
        self.count()
    }
    fn visit_u64<E: de::Error>(mut self, _: u64) -> Result<(), E> {
        self.count()
    }
    fn visit_f64<E: de::Error>(mut self, _: f64) -> Result<(), E> {
        self.count()
    }
    fn visit_str<E: de::Error>(mut self, _: &str) -> Result<(), E> {
        self.count()
    }
    fn visit_unit<E: de::Error>(mut self) -> Result<(), E> {
        self.count()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn empty_records_are_counted_before_they_cost_memory() {
        // ResourceLogs { ScopeLogs { LogRecord {} × n } }, each record two bytes.
        let records = 2_000;
        let mut scope = Vec::new();
        for _ in 0..records {
            scope.extend_from_slice(&[0x12, 0x00]);
        }
        let nest = |tag: u8, inside: &[u8]| {
            let mut out = vec![tag];
            prost::encoding::encode_varint(inside.len() as u64, &mut out);
            out.extend_from_slice(inside);
            out
        };
        let body = nest(0x0a, &nest(0x12, &scope));
        assert_eq!(count_protobuf(&body, 5_000).map(|counts| counts.records), Ok(records));
        assert_eq!(count_protobuf(&body, 1_000), Err(Refusal::TooManyRecords));
        assert!(matches!(count_protobuf(&body[..body.len() - 1], 5_000), Err(Refusal::Malformed(_))));
    }

    #[test]
    fn json_values_past_the_cap_or_the_depth_are_refused() {
        let body = format!("[{}]", vec!["0"; MAX_MESSAGES].join(","));
        assert_eq!(count_json(body.as_bytes()), Err(Refusal::TooManyMessages), "numbers count too");
        assert_eq!(count_json(br#"{"resourceLogs":[{"scopeLogs":[]}]}"#), Ok(4));
        assert!(matches!(count_json(b"{\"a\":"), Err(Refusal::Malformed(_))));
        let deep = format!("{}0{}", "[".repeat(MAX_JSON_DEPTH + 1), "]".repeat(MAX_JSON_DEPTH + 1));
        assert!(
            matches!(count_json(deep.as_bytes()), Err(Refusal::Malformed(reason)) if reason.contains("nested deeper"))
        );
        let fits = format!("{}0{}", "[".repeat(MAX_JSON_DEPTH), "]".repeat(MAX_JSON_DEPTH));
        assert!(count_json(fits.as_bytes()).is_ok());
    }

    #[test]
    fn an_entity_references_strings_are_counted() {
        // Resource { entity_refs: [EntityRef { id_keys: ["" × n] }] }.
        let strings = MAX_MESSAGES;
        let mut entity = Vec::new();
        for _ in 0..strings {
            entity.extend_from_slice(&[0x1a, 0x00]);
        }
        let nest = |tag: u8, inside: &[u8]| {
            let mut out = vec![tag];
            prost::encoding::encode_varint(inside.len() as u64, &mut out);
            out.extend_from_slice(inside);
            out
        };
        let body = nest(0x0a, &nest(0x0a, &nest(0x1a, &entity)));
        assert_eq!(count_protobuf(&body, 1_000), Err(Refusal::TooManyMessages));
    }
}
