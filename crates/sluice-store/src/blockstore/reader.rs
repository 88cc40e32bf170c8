//! The reads of one workspace's blocks ([`Reader`]): pages, gets, tail replays, searches and
//! flows, through a store's [`BlockSource`]; and a block's logs read whole ([`block_logs`]).

use std::collections::{BTreeMap, HashMap};
use std::sync::Arc;

use sluice_blocks::{DecodeError, Granule, Head, Matcher, PageCollector};
use sluice_model::{Log, LogId, WorkspaceId};

use super::{BAND_BYTES, BlockSource, BlockWalk, HeadCache, corrupt};
use crate::{LogPage, Page, StoreError};

/// The most bytes of granules a page keeps while it reads (those holding its hits so far).
const MAX_KEPT_BYTES: usize = 64 << 20;

/// Blocks whose heads a read asks for at a time.
const BLOCKS_A_ROUND: usize = 32;

/// Where a hit is: block, granule, row.
type Place = (i64, usize, usize);

/// What a page keeps of a hit: its log, or (deep pages) where it is.
enum Kept {
    Log(Box<Log>),
    At(Place),
}

/// The most logs a page decodes as it finds them ([`Reader::page`]).
const EAGER_LOGS: usize = 2_048;

/// The reads of one workspace's blocks through a store's [`BlockSource`].
pub struct Reader<'a, S: BlockSource> {
    source: &'a mut S,
    cache: &'a HeadCache,
    workspace: WorkspaceId,
}

impl<'a, S: BlockSource> Reader<'a, S> {
    /// Reads `workspace`'s blocks from `source`, keeping heads in `cache`.
    pub fn new(source: &'a mut S, cache: &'a HeadCache, workspace: WorkspaceId) -> Self {
        Reader { source, cache, workspace }
    }

    /// The heads of `blocks`, from the cache or the store; a block gone meanwhile is left out.
    async fn heads(&mut self, blocks: &[i64]) -> Result<HashMap<i64, Arc<Head>>, StoreError> {
        let mut heads = HashMap::with_capacity(blocks.len());
        let mut missing = Vec::new();
        for block in blocks {
            match self.cache.get(&(self.workspace, *block)) {
                Some(head) => {
                    heads.insert(*block, head);
                }
                None => missing.push(*block),
            }
        }
        if !missing.is_empty() {
            for (block, bytes) in self.source.heads(&missing).await? {
                let head = Arc::new(Head::decode(&bytes).map_err(corrupt)?);
                self.cache.insert((self.workspace, block), head.clone());
                heads.insert(block, head);
            }
        }
        Ok(heads)
    }

    /// The granules of each block that may hold a match, by its index where the matcher uses one.
    /// A first round reads each block's bands of the probe (a key or two): most blocks of a
    /// rare or absent needle are ruled out there, and only the others read every key's bands.
    async fn candidates(
        &mut self,
        matcher: &Matcher<'_>,
        blocks: &[(i64, Arc<Head>)],
    ) -> Result<Vec<(i64, usize)>, StoreError> {
        let mut bands: HashMap<(i64, u32), Vec<u8>> = HashMap::new();
        let probes: Vec<(i64, &Head, Vec<u64>)> =
            blocks.iter().map(|(block, head)| (*block, head.as_ref(), matcher.probe_positions(head))).collect();
        self.fetch_bands(&probes, &mut bands).await?;
        let mut kept: Vec<(i64, &Head, Vec<u64>)> = Vec::new();
        for (block, head, probe) in &probes {
            let slices = slices(&bands, *block, head, probe)?;
            if matcher.probe_may_match(head, |position| slice_of(&slices, position)).map_err(corrupt)? {
                kept.push((*block, *head, matcher.positions(head)));
            }
        }
        self.fetch_bands(&kept, &mut bands).await?;
        let mut candidates = Vec::new();
        for (block, head, positions) in &kept {
            let slices = slices(&bands, *block, head, positions)?;
            let granules = matcher.granules(head, |position| slice_of(&slices, position)).map_err(corrupt)?;
            candidates.extend(granules.into_iter().map(|granule| (*block, granule)));
        }
        Ok(candidates)
    }

    /// Reads the bands holding these positions of each block into `bands`, but those already there.
    async fn fetch_bands(
        &mut self,
        wanted: &[(i64, &Head, Vec<u64>)],
        bands: &mut HashMap<(i64, u32), Vec<u8>>,
    ) -> Result<(), StoreError> {
        let mut keys: Vec<(i64, u32)> = Vec::new();
        for (block, head, positions) in wanted {
            let count = head.granules.len();
            for position in positions {
                let range = sluice_blocks::bloom::slice_range(*position, count);
                for band in range.start / BAND_BYTES..=(range.end.max(1) - 1) / BAND_BYTES {
                    let key = (*block, band as u32);
                    if !bands.contains_key(&key) {
                        keys.push(key);
                    }
                }
            }
        }
        keys.sort_unstable();
        keys.dedup();
        if !keys.is_empty() {
            for (block, band, bytes) in self.source.bands(&keys).await? {
                bands.insert((block, band), bytes);
            }
        }
        Ok(())
    }

    /// The bytes of these granules, by block and granule.
    async fn granules(&mut self, wanted: &[(i64, usize)]) -> Result<HashMap<(i64, usize), Vec<u8>>, StoreError> {
        if wanted.is_empty() {
            return Ok(HashMap::new());
        }
        let keys: Vec<(i64, u32)> = wanted.iter().map(|(block, granule)| (*block, *granule as u32)).collect();
        Ok(self
            .source
            .granules(&keys)
            .await?
            .into_iter()
            .map(|(block, granule, bytes)| ((block, granule as usize), bytes))
            .collect())
    }

    /// One page of the logs `matcher` keeps, newest first (timestamp, then id, descending).
    pub async fn page(
        &mut self,
        matcher: &Matcher<'_>,
        from: Option<i64>,
        to: Option<i64>,
        page: Page,
    ) -> Result<LogPage, StoreError> {
        let skip = usize::try_from(page.offset).unwrap_or(usize::MAX);
        let wanted = skip.saturating_add(page.limit as usize).saturating_add(1);
        // A page near the newest decodes its logs as it finds them, from the columns the match
        // decoded already; a deep one keeps where they are and decodes only its own at the end.
        let eager = wanted <= EAGER_LOGS;
        let mut collector: PageCollector<Kept> = PageCollector::new(wanted);
        let mut kept: HashMap<(i64, usize), Vec<u8>> = HashMap::new();
        let mut kept_bytes = 0_usize;
        let mut heads: HashMap<i64, Arc<Head>> = HashMap::new();
        let mut before = None;
        loop {
            let blocks = self.source.blocks(BlockWalk { from, to, before, limit: BLOCKS_A_ROUND }).await?;
            let Some(last) = blocks.last() else { break };
            before = Some((last.max_ts, last.id));
            // Blocks come newest first: once the page is full and a block's latest log is
            // older than its oldest, no later block can change it.
            if collector.floor().is_some_and(|floor| blocks[0].max_ts < floor.0) {
                break;
            }
            let live: Vec<i64> =
                blocks.iter().filter(|block| !collector.can_skip((block.max_ts, block.max_id))).map(|b| b.id).collect();
            let round = self.heads(&live).await?;
            let mut matching: Vec<(i64, Arc<Head>)> = round
                .iter()
                .filter(|(_, head)| matcher.block_may_match(&head.summary))
                .map(|(block, head)| (*block, head.clone()))
                .collect();
            matching.sort_unstable_by_key(|(block, _)| *block);
            let mut candidates: Vec<(i64, usize, (i64, LogId))> = self
                .candidates(matcher, &matching)
                .await?
                .into_iter()
                .filter_map(|(block, granule)| {
                    let info = &round.get(&block)?.granules[granule];
                    Some((block, granule, (info.timestamps.1, info.ids.1)))
                })
                .collect();
            candidates.sort_unstable_by_key(|(_, _, newest)| std::cmp::Reverse(*newest));
            // Granules are fetched a few at a time, newest first, so a page that fills early
            // reads no more of them.
            let mut at = 0;
            let mut step = 4;
            while at < candidates.len() {
                let part: Vec<(i64, usize)> = candidates[at..(at + step).min(candidates.len())]
                    .iter()
                    .filter(|(_, _, newest)| !collector.can_skip(*newest))
                    .map(|(block, granule, _)| (*block, *granule))
                    .collect();
                at += step;
                step = (step * 2).min(64);
                for ((block, number), bytes) in self.granules(&part).await? {
                    let Some(head) = round.get(&block) else { continue };
                    let granule = Granule::open(head, number, &bytes).map_err(corrupt)?;
                    let mut hits = matcher.rows(&granule, number).map_err(corrupt)?;
                    hits.retain(|hit| !collector.can_skip((hit.timestamp, hit.id)));
                    if hits.is_empty() {
                        continue;
                    }
                    if eager {
                        let rows: Vec<usize> = hits.iter().map(|hit| hit.row).collect();
                        for (hit, log) in hits.iter().zip(granule.logs(&rows).map_err(corrupt)?) {
                            collector.offer(hit.timestamp, hit.id, Kept::Log(Box::new(log)));
                        }
                        continue;
                    }
                    for hit in &hits {
                        collector.offer(hit.timestamp, hit.id, Kept::At((block, number, hit.row)));
                    }
                    kept_bytes += bytes.len();
                    kept.insert((block, number), bytes);
                    // A deep page of a frequent needle would keep a granule for each hit:
                    // past the bound the bytes go, and the page's own granules are read again.
                    if kept_bytes > MAX_KEPT_BYTES {
                        kept.clear();
                        kept_bytes = 0;
                    }
                }
            }
            heads.extend(round);
            if blocks.len() < BLOCKS_A_ROUND {
                break;
            }
        }
        let sorted = collector.into_sorted();
        let has_more = sorted.len() > skip.saturating_add(page.limit as usize);
        let page: Vec<Kept> =
            sorted.into_iter().skip(skip).take(page.limit as usize).map(|(_, _, kept)| kept).collect();
        if eager {
            let logs = page.into_iter().filter_map(|kept| if let Kept::Log(log) = kept { Some(*log) } else { None });
            return Ok(LogPage { logs: logs.collect(), has_more });
        }
        let places: Vec<Place> =
            page.into_iter().filter_map(|kept| if let Kept::At(place) = kept { Some(place) } else { None }).collect();
        let mut missing: Vec<(i64, usize)> = places
            .iter()
            .map(|(block, granule, _)| (*block, *granule))
            .filter(|granule| !kept.contains_key(granule))
            .collect();
        missing.sort_unstable();
        missing.dedup();
        kept.extend(self.granules(&missing).await?);
        let logs = logs_at(&places, &heads, &kept)?;
        Ok(LogPage { logs, has_more })
    }

    /// The log with this id, if the workspace holds it.
    pub async fn get(&mut self, id: LogId) -> Result<Option<Log>, StoreError> {
        let blocks = self.source.blocks_holding(id).await?;
        let heads = self.heads(&blocks).await?;
        for block in blocks {
            let Some(head) = heads.get(&block) else { continue };
            let Some(number) = head.granule_of(id) else { continue };
            for (_, bytes) in self.granules(&[(block, number)]).await? {
                let granule = Granule::open(head, number, &bytes).map_err(corrupt)?;
                if let Ok(row) = granule.ids().map_err(corrupt)?.binary_search(&id) {
                    return Ok(granule.logs(&[row]).map_err(corrupt)?.pop());
                }
            }
        }
        Ok(None)
    }

    /// The latest `limit` logs with an id greater than `after`, oldest first.
    pub async fn after(&mut self, after: LogId, limit: u32) -> Result<Vec<Log>, StoreError> {
        let blocks = self.source.blocks_after(after).await?;
        let ids: Vec<i64> = blocks.iter().map(|block| block.id).collect();
        let heads = self.heads(&ids).await?;
        // Ordered by id alone: the collector's timestamp is the same for every hit.
        let mut collector: PageCollector<Place> = PageCollector::new(limit as usize);
        let mut granules: Vec<(i64, usize, LogId)> = Vec::new();
        for (block, head) in &heads {
            for (number, info) in head.granules.iter().enumerate() {
                if info.ids.1 > after {
                    granules.push((*block, number, info.ids.1));
                }
            }
        }
        granules.sort_unstable_by_key(|(_, _, newest)| std::cmp::Reverse(*newest));
        let mut kept = HashMap::new();
        for chunk in granules.chunks(8) {
            let part: Vec<(i64, usize)> = chunk
                .iter()
                .filter(|(_, _, newest)| !collector.can_skip((0, *newest)))
                .map(|(block, number, _)| (*block, *number))
                .collect();
            for ((block, number), bytes) in self.granules(&part).await? {
                let Some(head) = heads.get(&block) else { continue };
                let granule = Granule::open(head, number, &bytes).map_err(corrupt)?;
                let mut any = false;
                for (row, id) in granule.ids().map_err(corrupt)?.iter().enumerate() {
                    if *id > after {
                        collector.offer(0, *id, (block, number, row));
                        any = true;
                    }
                }
                if any {
                    kept.insert((block, number), bytes);
                }
            }
        }
        let places: Vec<Place> = collector.into_sorted().into_iter().rev().map(|(_, _, place)| place).collect();
        logs_at(&places, &heads, &kept)
    }

    /// The logs of flow `flow_id` (at most [`FLOW_MAX_READ`]), found through the blocks'
    /// index, in no particular order.
    pub async fn flow_logs(&mut self, flow_id: &str) -> Result<Vec<Log>, StoreError> {
        let filter = crate::LogFilter { flow_id: Some(flow_id.to_owned()), ..Default::default() };
        self.matching(&Matcher::new(&filter, None), None, None, FLOW_MAX_READ).await
    }

    /// Every log `matcher` keeps in `from..=to`, at most `cap` of them (the newest blocks'
    /// first), in no particular order.
    pub async fn matching(
        &mut self,
        matcher: &Matcher<'_>,
        from: Option<i64>,
        to: Option<i64>,
        cap: usize,
    ) -> Result<Vec<Log>, StoreError> {
        let mut logs = Vec::new();
        let mut before = None;
        loop {
            let blocks = self.source.blocks(BlockWalk { from, to, before, limit: BLOCKS_A_ROUND }).await?;
            let Some(last) = blocks.last() else { break };
            before = Some((last.max_ts, last.id));
            let ids: Vec<i64> = blocks.iter().map(|block| block.id).collect();
            let heads = self.heads(&ids).await?;
            let mut matching: Vec<(i64, Arc<Head>)> = heads
                .iter()
                .filter(|(_, head)| matcher.block_may_match(&head.summary))
                .map(|(block, head)| (*block, head.clone()))
                .collect();
            matching.sort_unstable_by_key(|(block, _)| std::cmp::Reverse(*block));
            let candidates = self.candidates(matcher, &matching).await?;
            for part in candidates.chunks(16) {
                for ((block, number), bytes) in self.granules(part).await? {
                    let Some(head) = heads.get(&block) else { continue };
                    let granule = Granule::open(head, number, &bytes).map_err(corrupt)?;
                    let rows: Vec<usize> =
                        matcher.rows(&granule, number).map_err(corrupt)?.into_iter().map(|hit| hit.row).collect();
                    logs.extend(granule.logs(&rows).map_err(corrupt)?);
                    if logs.len() >= cap {
                        logs.truncate(cap);
                        return Ok(logs);
                    }
                }
            }
            if blocks.len() < BLOCKS_A_ROUND {
                break;
            }
        }
        Ok(logs)
    }
}

/// Each position's slice of a block's index, from the one or two bands that hold it.
fn slices(
    bands: &HashMap<(i64, u32), Vec<u8>>,
    block: i64,
    head: &Head,
    positions: &[u64],
) -> Result<HashMap<u64, Vec<u8>>, StoreError> {
    let count = head.granules.len();
    let mut slices = HashMap::with_capacity(positions.len());
    for position in positions {
        let range = sluice_blocks::bloom::slice_range(*position, count);
        let mut slice = Vec::with_capacity(range.len());
        for at in range {
            let byte = bands
                .get(&(block, (at / BAND_BYTES) as u32))
                .and_then(|band| band.get(at % BAND_BYTES))
                .ok_or_else(|| corrupt(DecodeError::Truncated))?;
            slice.push(*byte);
        }
        slices.insert(*position, slice);
    }
    Ok(slices)
}

/// One position's slice, as the matcher asks for it.
fn slice_of(slices: &HashMap<u64, Vec<u8>>, position: u64) -> Result<&[u8], DecodeError> {
    slices.get(&position).map(Vec::as_slice).ok_or(DecodeError::Truncated)
}

/// Every log of block `id`, in id order, read whole through `source` (a merge or a retention
/// rewriting it; no head is cached: the block is about to go).
pub async fn block_logs<S: BlockSource>(source: &mut S, id: i64) -> Result<Vec<Log>, StoreError> {
    let corrupt = |error: DecodeError| StoreError::Backend(format!("block {id} cannot be read: {error}"));
    let Some((_, head)) = source.heads(&[id]).await?.pop() else {
        return Err(StoreError::Backend(format!("block {id} is gone")));
    };
    let head = Head::decode(&head).map_err(corrupt)?;
    let wanted: Vec<(i64, u32)> = (0..head.granules.len()).map(|granule| (id, granule as u32)).collect();
    let mut granules = source.granules(&wanted).await?;
    if granules.len() != head.granules.len() {
        return Err(StoreError::Backend(format!("block {id} lacks granules")));
    }
    granules.sort_unstable_by_key(|(_, number, _)| *number);
    let mut logs = Vec::with_capacity(head.summary.rows as usize);
    for (_, number, bytes) in granules {
        let granule = Granule::open(&head, number as usize, &bytes).map_err(corrupt)?;
        logs.extend(granule.all_logs().map_err(corrupt)?);
    }
    Ok(logs)
}

/// The most logs of one flow a timeline or a retention's settling reads ([`Reader::flow_logs`]).
pub const FLOW_MAX_READ: usize = 100_000;

/// The logs at `places`, in that order, from the granules' bytes a read kept.
fn logs_at(
    places: &[Place],
    heads: &HashMap<i64, Arc<Head>>,
    kept: &HashMap<(i64, usize), Vec<u8>>,
) -> Result<Vec<Log>, StoreError> {
    let mut rows: BTreeMap<(i64, usize), Vec<(usize, usize)>> = BTreeMap::new();
    for (at, (block, granule, row)) in places.iter().enumerate() {
        rows.entry((*block, *granule)).or_default().push((at, *row));
    }
    let mut logs: Vec<Option<Log>> = vec![None; places.len()];
    for ((block, number), wanted) in rows {
        let missing = || StoreError::Backend("a block changed during a read".into());
        let head = heads.get(&block).ok_or_else(missing)?;
        let bytes = kept.get(&(block, number)).ok_or_else(missing)?;
        let granule = Granule::open(head, number, bytes).map_err(corrupt)?;
        let read: Vec<usize> = wanted.iter().map(|(_, row)| *row).collect();
        for ((at, _), log) in wanted.iter().zip(granule.logs(&read).map_err(corrupt)?) {
            logs[*at] = Some(log);
        }
    }
    Ok(logs.into_iter().flatten().collect())
}
