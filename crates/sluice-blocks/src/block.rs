//! Encoding logs into a block, and reading a block's head.
//!
//! A block is one workspace's logs in ascending id order (ids are UUID v7, so the order they
//! were accepted in), cut into **granules** of [`GRANULE_ROWS`] logs, the unit a read decodes.
//! It is written as three byte strings, which a store may keep in one row's columns:
//! - the **head** ([`Head`]): the format version, the block's summary (rows, time and id
//!   ranges, counts by level, source, environment and dataset: enough to skip a block and to
//!   count a page's offset past it without decoding), the index's width, and for each granule
//!   its rows, time and id ranges, counts by level, the length of each column and a checksum;
//! - the **index** ([`crate::bloom`]): one Bloom filter a granule, bit-sliced;
//! - the **body**: each granule's columns ([`Column`], in that order), each a section
//!   ([`crate::codec::put_section`]) compressed with zstd.

use std::ops::Range;

use sluice_model::{Environment, Level, Log, LogId};
use xxhash_rust::xxh3::xxh3_64;

use crate::bloom::{IndexBuilder, KeySet};
use crate::codec::{Reader, put_bytes, put_section, put_signed, put_varint};
use crate::column::{encode_ids, encode_ints, encode_text};
use crate::keys::{FieldKey, TextIndexer, field_key};
use crate::{DecodeError, EncodeError, FORMAT_VERSION};

/// The first bytes of every head.
pub const MAGIC: &[u8; 4] = b"SLBK";
/// Logs in a granule (the last granule of a block may hold fewer).
pub const GRANULE_ROWS: usize = 512;
/// The most logs a block holds.
pub const MAX_BLOCK_ROWS: usize = 64 * GRANULE_ROWS;
/// The most distinct values of a dimension a summary names; past it, the summary says it is
/// incomplete and names the first in order (a block of thousands of sources is read, not
/// skipped).
pub const MAX_SUMMARY_VALUES: usize = 256;

/// A block's columns, in the order a granule stores them.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
#[repr(usize)]
pub enum Column {
    /// Ids.
    Id,
    /// Timestamps.
    Timestamp,
    /// Levels, a byte each.
    Level,
    /// `source`.
    Source,
    /// `environment`, a byte each.
    Environment,
    /// `dataset`.
    Dataset,
    /// `version`.
    Version,
    /// `userId`.
    UserId,
    /// `sessionId`.
    SessionId,
    /// `requestId`.
    RequestId,
    /// `message`.
    Message,
    /// `data`, as its JSON text.
    Data,
    /// `errorName`.
    ErrorName,
    /// `errorStack`.
    ErrorStack,
    /// `tags`, as a JSON array.
    Tags,
    /// `flowId`.
    FlowId,
    /// `stepIndex`.
    StepIndex,
    /// `country`.
    Country,
    /// `ipAddress`.
    IpAddress,
}

/// Columns in a granule.
pub const COLUMNS: usize = 19;

/// A block as written: see the module's documentation.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct EncodedBlock {
    /// Version, summary, index width, granule directory.
    pub head: Vec<u8>,
    /// The granules' Bloom filters, bit-sliced.
    pub index: Vec<u8>,
    /// The granules' compressed columns.
    pub body: Vec<u8>,
}

/// What a block holds, in sums: what lets a read skip it or count past it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Summary {
    /// Logs in the block.
    pub rows: u32,
    /// The earliest and latest timestamp.
    pub timestamps: (i64, i64),
    /// The least and greatest id.
    pub ids: (LogId, LogId),
    /// Logs a level, in [`Level::ALL`]'s order.
    pub levels: [u32; 4],
    /// Logs an environment, in [`Environment::ALL`]'s order.
    pub environments: [u32; 3],
    /// Logs a source, by source; complete unless `sources_complete` is false.
    pub sources: Vec<(String, u32)>,
    /// Whether `sources` names every source of the block.
    pub sources_complete: bool,
    /// Logs a dataset, by dataset; complete unless `datasets_complete` is false.
    pub datasets: Vec<(String, u32)>,
    /// Whether `datasets` names every dataset of the block.
    pub datasets_complete: bool,
}

/// One granule's entry in a head.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct GranuleInfo {
    /// Logs in it.
    pub rows: u32,
    /// The earliest and latest timestamp.
    pub timestamps: (i64, i64),
    /// Its first and last id.
    pub ids: (LogId, LogId),
    /// Logs a level, in [`Level::ALL`]'s order.
    pub levels: [u32; 4],
    /// Its bytes in the body.
    pub range: Range<usize>,
    /// Each column's bytes, from the granule's start.
    pub columns: [Range<usize>; COLUMNS],
    /// xxh3 of its bytes.
    pub checksum: u64,
}

/// A block's head, decoded.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Head {
    /// The format version it was written in.
    pub version: u8,
    /// Its sums.
    pub summary: Summary,
    /// Bits of each granule's Bloom filter.
    pub index_bits: u64,
    /// Its granules, in id order.
    pub granules: Vec<GranuleInfo>,
}

impl Head {
    /// The index's length in bytes.
    pub fn index_len(&self) -> usize {
        crate::bloom::index_len(self.index_bits, self.granules.len())
    }

    /// The body's length in bytes.
    pub fn body_len(&self) -> usize {
        self.granules.last().map_or(0, |granule| granule.range.end)
    }

    /// The granule that holds `id` if any does.
    pub fn granule_of(&self, id: LogId) -> Option<usize> {
        let after = self.granules.partition_point(|granule| granule.ids.1 < id);
        self.granules.get(after).filter(|granule| granule.ids.0 <= id).map(|_| after)
    }

    /// Reads a head written by [`encode`].
    pub fn decode(bytes: &[u8]) -> Result<Head, DecodeError> {
        // The last 8 bytes are the xxh3 of the rest: a damaged head is refused, not misread.
        let (bytes, checksum) = bytes.split_last_chunk::<8>().ok_or(DecodeError::Truncated)?;
        if bytes.get(..4).is_some_and(|magic| magic == MAGIC)
            && cfg!(not(fuzzing))
            && xxh3_64(bytes) != u64::from_le_bytes(*checksum)
        {
            return Err(DecodeError::Corrupt("head checksum"));
        }
        let mut reader = Reader::new(bytes);
        if reader.take(4)? != MAGIC {
            return Err(DecodeError::NotABlock);
        }
        let version = reader.byte()?;
        // Version 2 differs only in the keys its index holds (`keys`: number pairs).
        if !(1..=FORMAT_VERSION).contains(&version) {
            return Err(DecodeError::UnknownVersion(version));
        }
        let rows = reader.count(MAX_BLOCK_ROWS)? as u32;
        let timestamps = (reader.signed()?, reader.signed()?);
        let ids = (read_id(&mut reader)?, read_id(&mut reader)?);
        let levels = counts::<4>(&mut reader)?;
        let environments = counts::<3>(&mut reader)?;
        let (sources, sources_complete) = named_counts(&mut reader)?;
        let (datasets, datasets_complete) = named_counts(&mut reader)?;
        let index_bits = reader.varint()?;
        let granule_count = reader.count(MAX_BLOCK_ROWS.div_ceil(GRANULE_ROWS))?;
        let mut granules = Vec::with_capacity(granule_count);
        let mut at = 0_usize;
        for _ in 0..granule_count {
            let rows = reader.count(GRANULE_ROWS)? as u32;
            let first = reader.signed()?;
            let timestamps = (first, first.checked_add(reader.signed()?).ok_or(DecodeError::Corrupt("time range"))?);
            let ids = (read_id(&mut reader)?, read_id(&mut reader)?);
            let levels = counts::<4>(&mut reader)?;
            let mut columns: [Range<usize>; COLUMNS] = std::array::from_fn(|_| 0..0);
            let mut offset = 0_usize;
            for column in &mut columns {
                let length = reader.count(crate::codec::MAX_SECTION_BYTES)?;
                *column = offset..offset + length;
                offset += length;
            }
            let checksum = u64::from_le_bytes(reader.array::<8>()?);
            granules.push(GranuleInfo { rows, timestamps, ids, levels, range: at..at + offset, columns, checksum });
            at += offset;
        }
        if !reader.is_empty() {
            return Err(DecodeError::Corrupt("bytes after the head"));
        }
        let index_bits = (crate::bloom::MIN_BITS..=crate::bloom::MAX_BITS)
            .contains(&index_bits)
            .then_some(index_bits)
            .ok_or(DecodeError::Corrupt("index width"))?;
        let summary = Summary {
            rows,
            timestamps,
            ids,
            levels,
            environments,
            sources,
            sources_complete,
            datasets,
            datasets_complete,
        };
        if granules.iter().map(|granule| granule.rows).sum::<u32>() != rows {
            return Err(DecodeError::Corrupt("granule rows do not sum to the block's"));
        }
        Ok(Head { version, summary, index_bits, granules })
    }
}

fn read_id(reader: &mut Reader<'_>) -> Result<LogId, DecodeError> {
    LogId::from_slice(&reader.array::<16>()?).ok_or(DecodeError::Corrupt("id"))
}

fn counts<const N: usize>(reader: &mut Reader<'_>) -> Result<[u32; N], DecodeError> {
    let mut counts = [0; N];
    for count in &mut counts {
        *count = reader.count(MAX_BLOCK_ROWS)? as u32;
    }
    Ok(counts)
}

fn named_counts(reader: &mut Reader<'_>) -> Result<(Vec<(String, u32)>, bool), DecodeError> {
    let complete = reader.byte()? == 1;
    let count = reader.count(MAX_SUMMARY_VALUES)?;
    let mut named = Vec::with_capacity(count);
    for _ in 0..count {
        named.push((reader.text()?.to_owned(), reader.count(MAX_BLOCK_ROWS)? as u32));
    }
    Ok((named, complete))
}

fn put_named_counts(out: &mut Vec<u8>, values: impl Iterator<Item = String>) {
    let mut counted: Vec<(String, u32)> = Vec::new();
    let mut lookup: std::collections::HashMap<String, usize, xxhash_rust::xxh3::Xxh3DefaultBuilder> =
        std::collections::HashMap::with_hasher(xxhash_rust::xxh3::Xxh3DefaultBuilder);
    for value in values {
        match lookup.get(&value) {
            Some(index) => counted[*index].1 += 1,
            None => {
                lookup.insert(value.clone(), counted.len());
                counted.push((value, 1));
            }
        }
    }
    counted.sort();
    let complete = counted.len() <= MAX_SUMMARY_VALUES;
    counted.truncate(MAX_SUMMARY_VALUES);
    out.push(u8::from(complete));
    put_varint(out, counted.len() as u64);
    for (value, count) in counted {
        put_bytes(out, value.as_bytes());
        put_varint(out, u64::from(count));
    }
}

/// A level's code: its place in [`Level::ALL`].
pub fn level_code(level: Level) -> u8 {
    Level::ALL.iter().position(|known| *known == level).unwrap_or(0) as u8
}

/// An environment's code: its place in [`Environment::ALL`].
pub fn environment_code(environment: Environment) -> u8 {
    Environment::ALL.iter().position(|known| *known == environment).unwrap_or(0) as u8
}

/// Encodes `logs` (any order; at most [`MAX_BLOCK_ROWS`], at least one, ids distinct) into a block.
pub fn encode(logs: &[Log]) -> Result<EncodedBlock, EncodeError> {
    encode_refs(logs.iter().collect())
}

/// [`encode`] of logs the caller holds elsewhere (a store's batches), without copying them.
pub fn encode_refs(logs: Vec<&Log>) -> Result<EncodedBlock, EncodeError> {
    if logs.is_empty() {
        return Err(EncodeError::Empty);
    }
    if logs.len() > MAX_BLOCK_ROWS {
        return Err(EncodeError::TooManyLogs(logs.len()));
    }
    let mut sorted: Vec<&Log> = logs;
    sorted.sort_unstable_by_key(|log| log.id);
    if sorted.windows(2).any(|pair| pair[0].id == pair[1].id) {
        return Err(EncodeError::DuplicateId);
    }
    let mut head = Vec::with_capacity(256 + sorted.len() / 8);
    head.extend_from_slice(MAGIC);
    head.push(FORMAT_VERSION);
    put_varint(&mut head, sorted.len() as u64);
    let (earliest, latest) = time_range(&sorted);
    put_signed(&mut head, earliest);
    put_signed(&mut head, latest);
    head.extend_from_slice(sorted[0].id.as_bytes());
    head.extend_from_slice(sorted[sorted.len() - 1].id.as_bytes());
    level_counts(&sorted).iter().for_each(|count| put_varint(&mut head, u64::from(*count)));
    let mut environments = [0_u32; 3];
    sorted.iter().for_each(|log| environments[usize::from(environment_code(log.entry.environment))] += 1);
    environments.iter().for_each(|count| put_varint(&mut head, u64::from(*count)));
    put_named_counts(&mut head, sorted.iter().map(|log| log.entry.source.to_string()));
    put_named_counts(&mut head, sorted.iter().map(|log| log.entry.dataset.to_string()));

    let mut index = IndexBuilder::default();
    let mut indexer = TextIndexer::default();
    let mut body = Vec::new();
    let mut directory = Vec::new();
    for granule in sorted.chunks(GRANULE_ROWS) {
        let start = body.len();
        let lengths = encode_granule(granule, &mut body)?;
        index_granule(granule, &mut indexer, index.granule());
        put_varint(&mut directory, granule.len() as u64);
        let (earliest, latest) = time_range(granule);
        put_signed(&mut directory, earliest);
        put_signed(&mut directory, latest - earliest);
        directory.extend_from_slice(granule[0].id.as_bytes());
        directory.extend_from_slice(granule[granule.len() - 1].id.as_bytes());
        level_counts(granule).iter().for_each(|count| put_varint(&mut directory, u64::from(*count)));
        lengths.iter().for_each(|length| put_varint(&mut directory, *length as u64));
        directory.extend_from_slice(&xxh3_64(&body[start..]).to_le_bytes());
    }
    let (bits, index) = index.finish();
    if bits > crate::bloom::MAX_BITS {
        return Err(EncodeError::TooLarge("a granule's keys need an index over 8 MiB"));
    }
    put_varint(&mut head, bits);
    put_varint(&mut head, sorted.len().div_ceil(GRANULE_ROWS) as u64);
    head.extend_from_slice(&directory);
    let checksum = xxh3_64(&head);
    head.extend_from_slice(&checksum.to_le_bytes());
    Ok(EncodedBlock { head, index, body })
}

fn time_range(logs: &[&Log]) -> (i64, i64) {
    let earliest = logs.iter().map(|log| log.entry.timestamp).min().unwrap_or(0);
    let latest = logs.iter().map(|log| log.entry.timestamp).max().unwrap_or(0);
    (earliest, latest)
}

fn level_counts(logs: &[&Log]) -> [u32; 4] {
    let mut counts = [0_u32; 4];
    logs.iter().for_each(|log| counts[usize::from(level_code(log.entry.level))] += 1);
    counts
}

/// Writes a granule's columns to `body`; their lengths. A column over
/// [`crate::codec::MAX_SECTION_BYTES`] (which a decoder refuses) is refused here.
fn encode_granule(logs: &[&Log], body: &mut Vec<u8>) -> Result<[usize; COLUMNS], EncodeError> {
    let mut lengths = [0; COLUMNS];
    let mut payload = Vec::new();
    let tags: Vec<Option<String>> = logs
        .iter()
        .map(|log| log.entry.tags.as_ref().map(|tags| serde_json::Value::from(tags.clone()).to_string()))
        .collect();
    for (column, length) in lengths.iter_mut().enumerate() {
        payload.clear();
        let text = |field: fn(&Log) -> Option<&str>, payload: &mut Vec<u8>| {
            let values: Vec<Option<&str>> = logs.iter().map(|log| field(log)).collect();
            encode_text(&values, payload);
        };
        match column {
            c if c == Column::Id as usize => {
                encode_ids(&logs.iter().map(|log| log.id).collect::<Vec<_>>(), &mut payload);
            }
            c if c == Column::Timestamp as usize => {
                encode_ints(logs.iter().map(|log| log.entry.timestamp), &mut payload)
            }
            c if c == Column::Level as usize => payload.extend(logs.iter().map(|log| level_code(log.entry.level))),
            c if c == Column::Source as usize => text(|log| Some(&log.entry.source), &mut payload),
            c if c == Column::Environment as usize => {
                payload.extend(logs.iter().map(|log| environment_code(log.entry.environment)));
            }
            c if c == Column::Dataset as usize => text(|log| Some(&log.entry.dataset), &mut payload),
            c if c == Column::Version as usize => text(|log| log.entry.version.as_deref(), &mut payload),
            c if c == Column::UserId as usize => text(|log| log.entry.user_id.as_deref(), &mut payload),
            c if c == Column::SessionId as usize => text(|log| log.entry.session_id.as_deref(), &mut payload),
            c if c == Column::RequestId as usize => text(|log| log.entry.request_id.as_deref(), &mut payload),
            c if c == Column::Message as usize => text(|log| Some(&log.entry.message), &mut payload),
            c if c == Column::Data as usize => {
                text(|log| log.entry.data.as_ref().map(|data| data.as_str()), &mut payload)
            }
            c if c == Column::ErrorName as usize => text(|log| log.entry.error_name.as_deref(), &mut payload),
            c if c == Column::ErrorStack as usize => text(|log| log.entry.error_stack.as_deref(), &mut payload),
            c if c == Column::Tags as usize => {
                encode_text(&tags.iter().map(Option::as_deref).collect::<Vec<_>>(), &mut payload);
            }
            c if c == Column::FlowId as usize => text(|log| log.entry.flow_id.as_deref(), &mut payload),
            c if c == Column::StepIndex as usize => {
                encode_ints(
                    logs.iter().map(|log| log.entry.step_index.map_or(0, |step| i64::from(step) + 1)),
                    &mut payload,
                );
            }
            c if c == Column::Country as usize => text(|log| log.country.as_deref(), &mut payload),
            _ => text(|log| log.ip_address.as_deref(), &mut payload),
        }
        if payload.len() > crate::codec::MAX_SECTION_BYTES {
            return Err(EncodeError::TooLarge("a column of a granule over 64 MiB"));
        }
        let before = body.len();
        put_section(body, &payload);
        *length = body.len() - before;
    }
    Ok(lengths)
}

/// Puts the keys of a granule's logs into its key set: the searched fields' text
/// ([`text_keys`] of each folded) and the exact values of the filters that are keys.
fn index_granule(logs: &[&Log], indexer: &mut TextIndexer, keys: &mut KeySet) {
    indexer.clear();
    let mut folded = String::new();
    for log in logs {
        let entry = &log.entry;
        let texts = [
            Some(entry.message.as_str()),
            entry.error_name.as_deref(),
            entry.error_stack.as_deref(),
            entry.data.as_ref().map(|data| data.as_str()),
        ];
        for text in texts.into_iter().flatten() {
            let folded = if text.is_ascii() {
                folded.clear();
                folded.extend(text.bytes().map(|byte| char::from(byte.to_ascii_lowercase())));
                folded.as_str()
            } else {
                folded = sluice_query::fold(text);
                folded.as_str()
            };
            indexer.keys(folded, |key| {
                keys.insert(key);
            });
        }
        keys.insert(field_key(FieldKey::Source, &entry.source));
        keys.insert(field_key(FieldKey::Dataset, &entry.dataset));
        let optional = [
            (FieldKey::UserId, &entry.user_id),
            (FieldKey::SessionId, &entry.session_id),
            (FieldKey::FlowId, &entry.flow_id),
        ];
        for (field, value) in optional {
            if let Some(value) = value {
                keys.insert(field_key(field, value));
            }
        }
    }
}
