//! Reading a granule: its bytes checked against the head's checksum, then each column
//! decompressed and decoded only when first asked for, its ids, timestamps and text kept for
//! the `Granule`'s life (a reader that keeps the `Granule` between matching and building its
//! hits decompresses `message` once), and the logs of the rows a read keeps rebuilt from them.

use std::borrow::Cow;
use std::cell::OnceCell;

use sluice_model::{Environment, JsonObject, Level, Log, LogEntry, LogId, SmolStr};
use xxhash_rust::xxh3::xxh3_64;

use crate::DecodeError;
use crate::block::{Column, GranuleInfo, Head};
use crate::codec::{Reader, read_section};
use crate::column::{TextColumn, decode_ids, decode_ints, decode_text};

/// One granule of a block, its bytes checked, its columns decoded as they are asked for.
#[derive(Debug, Clone)]
pub struct Granule<'a> {
    info: &'a GranuleInfo,
    bytes: &'a [u8],
    ids: OnceCell<Vec<LogId>>,
    timestamps: OnceCell<Vec<i64>>,
    texts: [OnceCell<TextColumn>; crate::block::COLUMNS],
}

impl<'a> Granule<'a> {
    /// Granule `number` of the block whose head is `head`, from `bytes`, its own bytes of the
    /// body (`head.granules[number].range`).
    pub fn open(head: &'a Head, number: usize, bytes: &'a [u8]) -> Result<Self, DecodeError> {
        let info = head.granules.get(number).ok_or(DecodeError::Corrupt("no such granule"))?;
        if bytes.len() != info.range.len() {
            return Err(DecodeError::Truncated);
        }
        // Fuzzing skips the check, so its inputs reach the column decoders behind it.
        if cfg!(not(fuzzing)) && xxh3_64(bytes) != info.checksum {
            return Err(DecodeError::Corrupt("granule checksum"));
        }
        Ok(Granule { info, bytes, ids: OnceCell::new(), timestamps: OnceCell::new(), texts: Default::default() })
    }

    /// Granule `number` of a block whose whole body is `body`.
    pub fn of_body(head: &'a Head, number: usize, body: &'a [u8]) -> Result<Self, DecodeError> {
        let info = head.granules.get(number).ok_or(DecodeError::Corrupt("no such granule"))?;
        let bytes = body.get(info.range.clone()).ok_or(DecodeError::Truncated)?;
        Granule::open(head, number, bytes)
    }

    /// Its entry in the head.
    pub fn info(&self) -> &'a GranuleInfo {
        self.info
    }

    /// Logs in it.
    pub fn rows(&self) -> usize {
        self.info.rows as usize
    }

    fn section(&self, column: Column) -> Result<Cow<'a, [u8]>, DecodeError> {
        let range = self.info.columns[column as usize].clone();
        let bytes = self.bytes.get(range).ok_or(DecodeError::Truncated)?;
        let mut reader = Reader::new(bytes);
        let payload = read_section(&mut reader)?;
        if !reader.is_empty() {
            return Err(DecodeError::Corrupt("bytes after a column"));
        }
        Ok(payload)
    }

    /// Its ids, ascending.
    pub fn ids(&self) -> Result<&[LogId], DecodeError> {
        cached(&self.ids, || {
            let payload = self.section(Column::Id)?;
            let mut reader = Reader::new(&payload);
            let ids = decode_ids(&mut reader, self.rows())?;
            finished(&reader, ids)
        })
        .map(Vec::as_slice)
    }

    /// Its timestamps, Unix ms.
    pub fn timestamps(&self) -> Result<&[i64], DecodeError> {
        cached(&self.timestamps, || {
            let payload = self.section(Column::Timestamp)?;
            let mut reader = Reader::new(&payload);
            let timestamps = decode_ints(&mut reader, self.rows())?;
            finished(&reader, timestamps)
        })
        .map(Vec::as_slice)
    }

    /// Its levels.
    pub fn levels(&self) -> Result<Vec<Level>, DecodeError> {
        self.codes(Column::Level, Level::ALL)
    }

    /// Its environments.
    pub fn environments(&self) -> Result<Vec<Environment>, DecodeError> {
        self.codes(Column::Environment, Environment::ALL)
    }

    fn codes<T: Copy>(&self, column: Column, all: &[T]) -> Result<Vec<T>, DecodeError> {
        let payload = self.section(column)?;
        if payload.len() != self.rows() {
            return Err(DecodeError::Corrupt("a byte column of another length"));
        }
        payload
            .iter()
            .map(|code| all.get(usize::from(*code)).copied().ok_or(DecodeError::Corrupt("unknown code")))
            .collect()
    }

    /// A column of text (`source`, `message`, `data`...).
    pub fn text(&self, column: Column) -> Result<&TextColumn, DecodeError> {
        cached(&self.texts[column as usize], || {
            let payload = self.section(column)?;
            let mut reader = Reader::new(&payload);
            let text = decode_text(&mut reader, self.rows())?;
            finished(&reader, text)
        })
    }

    /// Its step indexes.
    pub fn step_indexes(&self) -> Result<Vec<Option<u16>>, DecodeError> {
        let payload = self.section(Column::StepIndex)?;
        let mut reader = Reader::new(&payload);
        let values = decode_ints(&mut reader, self.rows())?;
        let steps = values
            .into_iter()
            .map(|value| match value {
                0 => Ok(None),
                _ => value
                    .checked_sub(1)
                    .and_then(|step| u16::try_from(step).ok())
                    .map(Some)
                    .ok_or(DecodeError::Corrupt("step index")),
            })
            .collect::<Result<Vec<_>, _>>()?;
        finished(&reader, steps)
    }

    /// The logs of `rows` (rows of this granule, in the order given).
    pub fn logs(&self, rows: &[usize]) -> Result<Vec<Log>, DecodeError> {
        if rows.is_empty() {
            return Ok(Vec::new());
        }
        let ids = self.ids()?;
        let timestamps = self.timestamps()?;
        let levels = self.levels()?;
        let environments = self.environments()?;
        let steps = self.step_indexes()?;
        let text = |column| self.text(column);
        let (source, dataset, version) = (text(Column::Source)?, text(Column::Dataset)?, text(Column::Version)?);
        let (user, session, request) = (text(Column::UserId)?, text(Column::SessionId)?, text(Column::RequestId)?);
        let (message, data, error_name) = (text(Column::Message)?, text(Column::Data)?, text(Column::ErrorName)?);
        let (error_stack, tags, flow) = (text(Column::ErrorStack)?, text(Column::Tags)?, text(Column::FlowId)?);
        let (country, address) = (text(Column::Country)?, text(Column::IpAddress)?);
        let owned = |column: &TextColumn, row: usize| column.get(row).map(str::to_owned);
        let (timestamps, levels, environments, steps) = (&timestamps, &levels, &environments, &steps);
        rows.iter()
            .map(|&row| {
                let id = *ids.get(row).ok_or(DecodeError::Corrupt("no such row"))?;
                let data = match data.get(row) {
                    Some(text) => Some(
                        JsonObject::from_text(text.to_owned())
                            .map_err(|_| DecodeError::Corrupt("data is not a JSON object"))?,
                    ),
                    None => None,
                };
                let tags = match tags.get(row) {
                    Some(text) => Some(serde_json::from_str(text).map_err(|_| DecodeError::Corrupt("tags"))?),
                    None => None,
                };
                Ok(Log {
                    id,
                    entry: LogEntry {
                        timestamp: timestamps[row],
                        level: levels[row],
                        message: message.get(row).unwrap_or_default().to_owned(),
                        source: SmolStr::new(source.get(row).unwrap_or_default()),
                        environment: environments[row],
                        dataset: SmolStr::new(dataset.get(row).unwrap_or_default()),
                        version: owned(version, row),
                        user_id: owned(user, row),
                        session_id: owned(session, row),
                        request_id: owned(request, row),
                        data,
                        error_name: owned(error_name, row),
                        error_stack: owned(error_stack, row),
                        tags,
                        flow_id: owned(flow, row),
                        step_index: steps[row],
                    },
                    country: owned(country, row),
                    ip_address: owned(address, row),
                })
            })
            .collect()
    }

    /// Every log of the granule, in id order.
    pub fn all_logs(&self) -> Result<Vec<Log>, DecodeError> {
        self.logs(&(0..self.rows()).collect::<Vec<_>>())
    }
}

/// The value `cell` holds, decoded by `decode` on first use.
fn cached<T>(cell: &OnceCell<T>, decode: impl FnOnce() -> Result<T, DecodeError>) -> Result<&T, DecodeError> {
    if let Some(value) = cell.get() {
        return Ok(value);
    }
    let value = decode()?;
    Ok(cell.get_or_init(|| value))
}

fn finished<T>(reader: &Reader<'_>, value: T) -> Result<T, DecodeError> {
    if reader.is_empty() { Ok(value) } else { Err(DecodeError::Corrupt("bytes after a column's values")) }
}
