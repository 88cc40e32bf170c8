//! sluice's storage format and query execution: logs encoded into immutable blocks of
//! compressed columns ([`block`]), each with a summary and a Bloom filter index a granule
//! ([`bloom`], [`keys`]), and every list filter and search evaluated against them ([`eval`]):
//! the format both stores write and read their logs in, so that what differs between them is
//! only where the bytes are kept.
//!
//! Invariant: pure (no database driver, no async runtime, no HTTP; checked by `cargo xtask
//! ci`), and the format is versioned ([`FORMAT_VERSION`], pinned by the golden files of
//! `tests/golden`): a build reads every version it ever wrote. Decoding any bytes gives a
//! block or a [`DecodeError`], never a panic, and allocates no more than the bytes declare
//! within [`codec::MAX_SECTION_BYTES`] a section (the `block` fuzz target).
//!
//! ```
//! use sluice_blocks::{Block, LogFilter, Matcher, Search, encode};
//! # let log = |n: u128, message: &str| sluice_model::Log {
//! #     id: sluice_model::LogId::from_slice(&(0x0190_0000_0000_7000_8000_0000_0000_0000 + n).to_be_bytes()).unwrap(),
//! #     entry: sluice_model::LogEntry { timestamp: 1_700_000_000_000 + n as i64, level: sluice_model::Level::Info,
//! #         message: message.into(), source: "api".into(), environment: sluice_model::Environment::Production,
//! #         dataset: "default".into(), version: None, user_id: None, session_id: None, request_id: None, data: None,
//! #         error_name: None, error_stack: None, tags: None, flow_id: None, step_index: None },
//! #     country: None, ip_address: None };
//! let logs = vec![log(1, "order ORD-4821937 paid"), log(2, "connection reset by peer")];
//! let encoded = encode(&logs).unwrap();
//! let block = Block::open(&encoded.head, &encoded.index, &encoded.body).unwrap();
//! let search = Search { query: sluice_query::Query::parse("4821937").unwrap(), fields: vec![sluice_query::SearchField::Message] };
//! let filter = LogFilter::default();
//! let hits = block.hits(&Matcher::new(&filter, Some(&search))).unwrap();
//! assert_eq!(block.logs(&hits).unwrap(), vec![logs[0].clone()]);
//! ```

pub mod block;
pub mod bloom;
pub mod codec;
pub mod column;
pub mod eval;
pub mod granule;
pub mod keys;
mod matching;
pub mod search;

pub use block::{EncodedBlock, GRANULE_ROWS, Head, MAX_BLOCK_ROWS, Summary, encode, encode_refs};
pub use eval::{Hit, LogFilter, Matcher, PageCollector};
pub use granule::Granule;
pub use search::Search;

use sluice_model::{Log, LogId};

/// The format version this build writes: 2, whose index holds number pairs (`keys`); it reads
/// version 1 too.
pub const FORMAT_VERSION: u8 = 2;

/// Why bytes could not be read as a block.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum DecodeError {
    /// The bytes end before what they declare.
    #[error("block truncated")]
    Truncated,
    /// The bytes are not a block's head.
    #[error("not a block")]
    NotABlock,
    /// A block of a version this build does not know.
    #[error("unknown block format version {0}")]
    UnknownVersion(u8),
    /// The bytes contradict themselves.
    #[error("corrupt block: {0}")]
    Corrupt(&'static str),
}

/// Why logs could not be encoded into a block.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum EncodeError {
    /// No logs.
    #[error("a block holds at least one log")]
    Empty,
    /// Over [`MAX_BLOCK_ROWS`].
    #[error("a block holds at most {MAX_BLOCK_ROWS} logs, not {0}")]
    TooManyLogs(usize),
    /// Two logs share an id.
    #[error("two logs share an id")]
    DuplicateId,
    /// A granule would pass a limit its decoder refuses: its logs belong in smaller blocks.
    #[error("block too large: {0}")]
    TooLarge(&'static str),
}

/// A whole block in memory: its head decoded, its index and body as stored.
#[derive(Debug, Clone)]
pub struct Block<'a> {
    /// The head.
    pub head: Head,
    index: &'a [u8],
    body: &'a [u8],
}

impl<'a> Block<'a> {
    /// Reads a block's three parts, checking that they agree in length.
    pub fn open(head: &[u8], index: &'a [u8], body: &'a [u8]) -> Result<Self, DecodeError> {
        let head = Head::decode(head)?;
        if index.len() != head.index_len() || body.len() != head.body_len() {
            return Err(DecodeError::Truncated);
        }
        Ok(Block { head, index, body })
    }

    /// Granule `number`, its bytes checked.
    pub fn granule(&self, number: usize) -> Result<Granule<'_>, DecodeError> {
        Granule::of_body(&self.head, number, self.body)
    }

    /// Every row of the block that `matcher` keeps, in id order.
    pub fn hits(&self, matcher: &Matcher<'_>) -> Result<Vec<Hit>, DecodeError> {
        if !matcher.block_may_match(&self.head.summary) {
            return Ok(Vec::new());
        }
        let count = self.head.granules.len();
        let index = self.index;
        let slice = |position| index.get(bloom::slice_range(position, count)).ok_or(DecodeError::Truncated);
        // As a store reads: the probe first, every key only for a block it keeps.
        if !matcher.probe_may_match(&self.head, slice)? {
            return Ok(Vec::new());
        }
        let granules = matcher.granules(&self.head, slice)?;
        let mut hits = Vec::new();
        for number in granules {
            hits.extend(matcher.rows(&self.granule(number)?, number)?);
        }
        Ok(hits)
    }

    /// The logs of `hits` (of this block), in the order given.
    pub fn logs(&self, hits: &[Hit]) -> Result<Vec<Log>, DecodeError> {
        let mut logs: Vec<Option<Log>> = vec![None; hits.len()];
        let mut granules: Vec<usize> = hits.iter().map(|hit| hit.granule).collect();
        granules.sort_unstable();
        granules.dedup();
        for number in granules {
            let places: Vec<usize> = (0..hits.len()).filter(|place| hits[*place].granule == number).collect();
            let rows: Vec<usize> = places.iter().map(|place| hits[*place].row).collect();
            for (place, log) in places.into_iter().zip(self.granule(number)?.logs(&rows)?) {
                logs[place] = Some(log);
            }
        }
        logs.into_iter().map(|log| log.ok_or(DecodeError::Corrupt("a hit outside the block"))).collect()
    }

    /// The log with this id, if the block holds it.
    pub fn get(&self, id: LogId) -> Result<Option<Log>, DecodeError> {
        let Some(number) = self.head.granule_of(id) else { return Ok(None) };
        let granule = self.granule(number)?;
        let Some(row) = granule.ids()?.binary_search(&id).ok() else { return Ok(None) };
        Ok(granule.logs(&[row])?.pop())
    }

    /// Every log of the block, in id order.
    pub fn all_logs(&self) -> Result<Vec<Log>, DecodeError> {
        let mut logs = Vec::with_capacity((self.head.summary.rows as usize).min(self.body.len()));
        for number in 0..self.head.granules.len() {
            logs.extend(self.granule(number)?.all_logs()?);
        }
        Ok(logs)
    }
}
