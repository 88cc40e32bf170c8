//! Logs kept as blocks ([`sluice_blocks`]) in a database, laid out and read the same way by
//! both stores.
//!
//! A block is stored as rows keyed by workspace and block: one row of its **head** (with its
//! time and id ranges as columns, to find it), its **index** cut into bands of [`BAND_BYTES`]
//! a row, and its **granules** a row each ([`BlockRows`]). A read fetches the heads of the
//! blocks its time range meets, newest first ([`BlockSource::blocks`]), then only the index
//! bands that hold its needle's positions, then only the granules those allow, and stops once
//! no older block can change its page. A store implements [`BlockSource`] with its SQL, inside
//! one read transaction (async, so a store of an async driver awaits its queries; a blocking
//! one answers at once and reads through [`now`]), and calls [`Reader`]'s [`page`](Reader::page), [`get`](Reader::get),
//! [`after`](Reader::after) and [`matching`](Reader::matching).
//!
//! Writes make small blocks (one a workspace for each committed group); [`merge_plan`] says
//! which of a workspace's small blocks a background round merges into one.

mod merge;
mod reader;

use std::sync::Arc;

use sluice_blocks::{DecodeError, EncodeError, GRANULE_ROWS, Head, MAX_BLOCK_ROWS};
use sluice_model::{Log, LogId, WorkspaceId};

pub use merge::{MERGE_AFTER_MS, Mergeable, SMALL_BLOCK_ROWS, merge_plan};
pub use reader::{FLOW_MAX_READ, Reader, block_logs};

use crate::StoreError;

/// Bytes of an index band row: a needle's position is a few bytes of one band (or two), and
/// two bands with their keys fill a 4 KiB database page (bands of 2,048 bytes took a page each,
/// half of it unused: 24 B a log at 10M logs with entropy).
pub const BAND_BYTES: usize = 1_984;

/// A block as rows to write: its key columns, head, index bands and granules.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct BlockRows {
    /// Logs in it.
    pub rows: u32,
    /// Its earliest and latest timestamp.
    pub timestamps: (i64, i64),
    /// Its least and greatest id.
    pub ids: (LogId, LogId),
    /// The head as encoded.
    pub head: Vec<u8>,
    /// The index, [`BAND_BYTES`] a band (the last shorter).
    pub bands: Vec<Vec<u8>>,
    /// Each granule's bytes, in order.
    pub granules: Vec<Vec<u8>>,
}

fn corrupt(error: DecodeError) -> StoreError {
    StoreError::Backend(format!("a stored block cannot be read: {error}"))
}

impl BlockRows {
    /// Encodes `logs` (any order, ids distinct, at least one) into as few blocks as the format
    /// allows, each of consecutive ids.
    pub fn encode(logs: &[Log]) -> Result<Vec<BlockRows>, StoreError> {
        Self::encode_refs(logs.iter().collect())
    }

    /// [`BlockRows::encode`] of logs held elsewhere (a group's batches), without copying them.
    pub fn encode_refs(mut sorted: Vec<&Log>) -> Result<Vec<BlockRows>, StoreError> {
        sorted.sort_unstable_by_key(|log| log.id);
        let mut blocks = Vec::new();
        let mut pending: Vec<&[&Log]> = sorted.chunks(MAX_BLOCK_ROWS).rev().collect();
        while let Some(part) = pending.pop() {
            match sluice_blocks::encode_refs(part.to_vec()) {
                Ok(encoded) => blocks.push(Self::of(encoded)?),
                // Keys too many for one filter width: the logs go into two smaller blocks.
                Err(EncodeError::TooLarge(_)) if part.len() > GRANULE_ROWS => {
                    let (older, newer) = part.split_at(part.len() / 2);
                    pending.push(newer);
                    pending.push(older);
                }
                Err(error) => return Err(StoreError::Backend(format!("logs cannot be encoded: {error}"))),
            }
        }
        Ok(blocks)
    }

    /// Cuts an encoded block into its rows.
    pub fn of(encoded: sluice_blocks::EncodedBlock) -> Result<BlockRows, StoreError> {
        let head = Head::decode(&encoded.head).map_err(corrupt)?;
        let granules = head
            .granules
            .iter()
            .map(|granule| encoded.body.get(granule.range.clone()).map(<[u8]>::to_vec).ok_or(DecodeError::Truncated))
            .collect::<Result<Vec<_>, _>>()
            .map_err(corrupt)?;
        Ok(BlockRows {
            rows: head.summary.rows,
            timestamps: head.summary.timestamps,
            ids: head.summary.ids,
            head: encoded.head,
            bands: encoded.index.chunks(BAND_BYTES).map(<[u8]>::to_vec).collect(),
            granules,
        })
    }
}

/// A stored block as its head row's key columns give it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct BlockRef {
    /// Its number, unique in the store and never reused.
    pub id: i64,
    /// Its latest timestamp.
    pub max_ts: i64,
    /// Its greatest id.
    pub max_id: LogId,
}

/// One step of a walk back through a workspace's blocks: those whose time range meets
/// `from..=to`, ordered by latest timestamp then number, descending, strictly after `before`
/// in that order when given; at most `limit`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct BlockWalk {
    /// The earliest time wanted, if any.
    pub from: Option<i64>,
    /// The latest time wanted, if any.
    pub to: Option<i64>,
    /// `(max_ts, id)` of the last block the walk has seen.
    pub before: Option<(i64, i64)>,
    /// The most blocks a step answers.
    pub limit: usize,
}

impl BlockWalk {
    /// The step as its statement's parameters: `from`, `to`, the `(max_ts, id)` to stay
    /// before and the limit, open ends as the widest values.
    pub fn parameters(&self) -> [i64; 5] {
        let (before_ts, before_id) = self.before.unwrap_or((i64::MAX, i64::MAX));
        let limit = i64::try_from(self.limit).unwrap_or(i64::MAX);
        [self.from.unwrap_or(i64::MIN), self.to.unwrap_or(i64::MAX), before_ts, before_id, limit]
    }
}

/// The SQL of one store, reading one workspace's blocks inside one read transaction.
pub trait BlockSource: Send {
    /// The blocks of one step of `walk`.
    fn blocks(&mut self, walk: BlockWalk) -> impl Future<Output = Result<Vec<BlockRef>, StoreError>> + Send;

    /// The numbers of the blocks whose id range holds `id`.
    fn blocks_holding(&mut self, id: LogId) -> impl Future<Output = Result<Vec<i64>, StoreError>> + Send;

    /// The blocks holding an id greater than `after`.
    fn blocks_after(&mut self, after: LogId) -> impl Future<Output = Result<Vec<BlockRef>, StoreError>> + Send;

    /// The heads of these blocks (any order; a block gone meanwhile is left out).
    fn heads(&mut self, blocks: &[i64]) -> impl Future<Output = Result<Vec<(i64, Vec<u8>)>, StoreError>> + Send;

    /// These index bands, each `(block, band)`.
    fn bands(
        &mut self,
        wanted: &[(i64, u32)],
    ) -> impl Future<Output = Result<Vec<(i64, u32, Vec<u8>)>, StoreError>> + Send;

    /// These granules, each `(block, granule)`.
    fn granules(
        &mut self,
        wanted: &[(i64, u32)],
    ) -> impl Future<Output = Result<Vec<(i64, u32, Vec<u8>)>, StoreError>> + Send;
}

/// The outcome of a read whose source answers at once (one that blocks its thread, as SQLite's
/// does): its future is polled once, and one that would wait is a bug, told as an error.
pub fn now<T>(read: impl Future<Output = Result<T, StoreError>>) -> Result<T, StoreError> {
    let mut read = std::pin::pin!(read);
    match read.as_mut().poll(&mut std::task::Context::from_waker(std::task::Waker::noop())) {
        std::task::Poll::Ready(outcome) => outcome,
        std::task::Poll::Pending => Err(StoreError::Backend("a blocking read of blocks would have waited".into())),
    }
}

/// Decoded heads kept between reads, by workspace and block (a block never changes, and its
/// number is never reused).
pub type HeadCache = moka::sync::Cache<(WorkspaceId, i64), Arc<Head>>;

/// A [`HeadCache`] of about 64 MiB of heads.
pub fn head_cache() -> HeadCache {
    moka::sync::Cache::builder()
        .weigher(|_, head: &Arc<Head>| u32::try_from(256 + head.granules.len() * 256).unwrap_or(u32::MAX))
        .max_capacity(64 << 20)
        .build()
}
