//! The chunks a search's needles allow, by their signatures ([`sluice_store::signature`]),
//! decided as a walk needs them: the chunks outside a block are tested up front, the blocks
//! are narrowed ([`Narrowing`]) only when the walk reaches one of their chunks, so a common
//! word answered from the newest chunks reads the bands of the newest blocks and no others,
//! however large the workspace.
//!
//! A rare needle's few chunks are named to the database ([`crate::list`]), and the blocks
//! are narrowed newest first (by the newest log their chunks hold), as far as the walk's page
//! reaches ([`Allowed::narrow_newest`]): a page of 50 of an identifier in 100 logs spread over
//! 10M has its logs in 23 blocks of 45, and its search narrows 24 to 30 of them, not all.
//!
//! Narrowing every block up front made each search of a common word cost time in proportion
//! to the store: measured in `cargo xtask bench soak` on PostgreSQL, 0.2 ms at 5 blocks and
//! 10 ms at 190 (and as much again to gather every allowed chunk's id into a set), the soak's
//! reads p99 +54 % over ten minutes; narrowed as the walk reaches them, -8.6 %
//! (docs/PERFORMANCE.md, issue 25).

use std::sync::Arc;

use diesel::result::Error as DieselError;
use diesel::sql_types::{Array, BigInt, Binary, Integer, Uuid as SqlUuid};
use diesel_async::{AsyncPgConnection, RunQueryDsl};
use foldhash::{HashMap, HashSet};
use sluice_store::signature::{BlockCache, Narrowing, StoredBlock, holds};
use uuid::Uuid;

use crate::signatures::{KeptSignatures, Signed};

/// The blocks narrowed before a search chooses how to read the chunks: the newest, whose
/// share of allowed chunks (with the chunks outside a block) estimates the workspace's.
const SAMPLED_BLOCKS: usize = 2;

/// A chunk not in a block, as a search reads it: without its signature, then with it when
/// the one kept in memory is not this one.
#[derive(diesel::QueryableByName)]
struct UnsealedDigest {
    #[diesel(sql_type = BigInt)]
    chunk_id: i64,
    #[diesel(sql_type = BigInt)]
    digest: i64,
}

#[derive(diesel::QueryableByName)]
struct UnsealedSigned {
    #[diesel(sql_type = BigInt)]
    chunk_id: i64,
    #[diesel(sql_type = BigInt)]
    digest: i64,
    #[diesel(sql_type = Binary)]
    signature: Vec<u8>,
}

/// A block's id, and the time of the newest log of its chunks (unknown for a block sealed
/// while the column did not exist and not filled by its migration).
#[derive(diesel::QueryableByName)]
struct BlockId {
    #[diesel(sql_type = BigInt)]
    id: i64,
    #[diesel(sql_type = diesel::sql_types::Nullable<BigInt>)]
    max_ts: Option<i64>,
}

/// A block's header, as a search reads it.
#[derive(diesel::QueryableByName)]
struct BlockRow {
    #[diesel(sql_type = BigInt)]
    id: i64,
    #[diesel(sql_type = Integer)]
    bits: i32,
    #[diesel(sql_type = Array<BigInt>)]
    chunks: Vec<i64>,
}

/// A band of a block, as a search reads it.
#[derive(diesel::QueryableByName)]
struct BandRow {
    #[diesel(sql_type = BigInt)]
    block_id: i64,
    #[diesel(sql_type = Integer)]
    band: i32,
    #[diesel(sql_type = Binary)]
    slices: Vec<u8>,
}

/// What a search's needles allow of one workspace's chunks: for every index group, the chunks
/// whose signatures may hold one of its needles.
///
/// The workspace's blocks and its chunks outside a block are read in one snapshot, so a block
/// sealed meanwhile is seen once, either way. A block never changes once sealed, so its bands
/// may be read later, outside the snapshot. A chunk in neither (written after the snapshot, or
/// whose waiting signature PostgreSQL dropped in a crash: [`Allowed::intact`]) is allowed: the
/// exact check of its logs decides.
pub(crate) struct Allowed {
    workspace: Uuid,
    /// For every index group, each needle's signature positions.
    groups: Vec<Vec<Vec<u32>>>,
    blocks_cache: BlockCache,
    /// The workspace's blocks at the snapshot, by id (their first chunk's), each with the
    /// greatest chunk id of it and of every block before it (`reach`), so a chunk's block is
    /// found going back from the last block starting at or before it.
    blocks: Vec<(Arc<StoredBlock>, i64)>,
    /// For each block, the newest log time its chunks hold (`i64::MAX` when unknown).
    newest: Vec<i64>,
    narrowed: Vec<bool>,
    /// The chunks allowed in the blocks narrowed so far.
    block_allowed: usize,
    /// The chunks outside a block at the snapshot.
    unsealed: HashSet<i64>,
    /// The allowed chunks among those decided: outside a block, or in a narrowed block.
    allowed: HashSet<i64>,
    /// How many chunks are decided, and how many there are in all.
    decided: usize,
    total: usize,
    /// Whether every chunk was in a block or had its signature at the snapshot: not after a
    /// crash of PostgreSQL emptied the unlogged waiting signatures, until they are signed
    /// again ([`crate::lost::unsign_lost`]).
    intact: bool,
    /// What narrowing took so far (for a debug line): blocks narrowed, bands read from the
    /// database, statements.
    pub(crate) work: Work,
}

/// What an [`Allowed`] has read so far.
#[derive(Debug, Default, Clone, Copy)]
pub(crate) struct Work {
    pub(crate) blocks: usize,
    pub(crate) bands_read: usize,
    pub(crate) statements: usize,
}

impl Allowed {
    /// Reads the workspace's blocks and its chunks outside a block (their signatures from
    /// `signatures` where kept) in one snapshot, and tests the latter.
    pub(crate) async fn read(
        connection: &mut AsyncPgConnection,
        workspace: Uuid,
        groups: Vec<Vec<Vec<u32>>>,
        signatures: &KeptSignatures,
        blocks_cache: &BlockCache,
    ) -> Result<Allowed, DieselError> {
        let (signatures, cache) = (signatures.clone(), blocks_cache.clone());
        // Before the snapshot (`KeptSignatures::keep_read`).
        let seals = signatures.seals();
        let (mut stored, unsealed, intact) = connection
            .build_transaction()
            .repeatable_read()
            .read_only()
            .run(async move |connection: &mut AsyncPgConnection| {
                let stored = headers(connection, workspace, &cache).await?;
                let (unsealed, intact) = unsealed_signatures(connection, workspace, &signatures, seals).await?;
                Ok::<_, DieselError>((stored, unsealed, intact))
            })
            .await?;
        stored.sort_unstable_by_key(|(block, _)| block.id);
        let newest: Vec<i64> = stored.iter().map(|&(_, newest)| newest).collect();
        let mut blocks: Vec<(Arc<StoredBlock>, i64)> = stored.into_iter().map(|(block, _)| (block, 0)).collect();
        let mut reach = i64::MIN;
        for (block, block_reach) in &mut blocks {
            reach = reach.max(block.chunks.iter().copied().max().unwrap_or(block.id));
            *block_reach = reach;
        }
        let allowed: HashSet<i64> = unsealed
            .iter()
            .filter(|(_, signature)| {
                groups.iter().all(|group| group.iter().any(|positions| holds(&signature.1, positions)))
            })
            .map(|(id, _)| *id)
            .collect();
        let total = unsealed.len() + blocks.iter().map(|(block, _)| block.chunks.len()).sum::<usize>();
        Ok(Allowed {
            workspace,
            groups,
            blocks_cache: blocks_cache.clone(),
            narrowed: vec![false; blocks.len()],
            blocks,
            newest,
            block_allowed: 0,
            decided: unsealed.len(),
            unsealed: unsealed.into_iter().map(|(id, _)| id).collect(),
            allowed,
            total,
            intact,
            work: Work::default(),
        })
    }

    /// Narrows the newest blocks ([`SAMPLED_BLOCKS`]), then estimates how many chunks are
    /// allowed in all; exact once every block is narrowed.
    pub(crate) async fn estimate(&mut self, connection: &mut AsyncPgConnection) -> Result<usize, DieselError> {
        let newest: Vec<usize> = (0..self.blocks.len()).rev().take(SAMPLED_BLOCKS).collect();
        self.narrow(connection, &newest, false).await?;
        Ok(if self.decided == self.total {
            self.allowed.len()
        } else {
            self.allowed.len().saturating_mul(self.total) / self.decided.max(1)
        })
    }

    /// Narrows every block not narrowed yet: the allowed chunks are then all known.
    pub(crate) async fn narrow_all(&mut self, connection: &mut AsyncPgConnection) -> Result<(), DieselError> {
        let due: Vec<usize> = (0..self.blocks.len()).filter(|&index| !self.narrowed[index]).collect();
        self.narrow(connection, &due, false).await.map(drop)
    }

    /// The newest log time a block not narrowed yet may hold (`None` once every block is):
    /// a chunk it allows may come before any chunk older than that.
    pub(crate) fn pending_newest(&self) -> Option<i64> {
        (0..self.blocks.len()).filter(|&index| !self.narrowed[index]).map(|index| self.newest[index]).max()
    }

    /// Narrows the newest blocks not narrowed yet (by the newest log they hold), of those
    /// holding a log at `since` or later (a search's span), expected to allow `wanted` more
    /// chunks, as many a block as those narrowed so far allowed (every one left when those
    /// allowed none), at least one. Returns the chunks they allow.
    pub(crate) async fn narrow_newest(
        &mut self,
        connection: &mut AsyncPgConnection,
        since: Option<i64>,
        wanted: usize,
    ) -> Result<Vec<i64>, DieselError> {
        let mut pending: Vec<usize> = (0..self.blocks.len())
            .filter(|&index| !self.narrowed[index] && since.is_none_or(|since| self.newest[index] >= since))
            .collect();
        pending.sort_unstable_by_key(|&index| std::cmp::Reverse((self.newest[index], index)));
        let narrowed = self.narrowed.iter().filter(|&&narrowed| narrowed).count();
        let count = if self.block_allowed == 0 {
            pending.len()
        } else {
            wanted.saturating_mul(narrowed).div_ceil(self.block_allowed)
        };
        let mut due: Vec<usize> = pending.into_iter().take(count.max(1)).collect();
        due.sort_unstable();
        // Blocks narrowed so far allowed a chunk each or more (a rare identifier's, spread over
        // time): the next ones are likely to as well, so their every position is read in one
        // statement. Fewer (a needle in a few chunks, or none yet), and most blocks are left
        // without a slot by the first key, whose bands alone are read first.
        let at_once = narrowed > 0 && self.block_allowed >= narrowed;
        self.narrow(connection, &due, at_once).await
    }

    /// Whether every chunk of the snapshot is in a block or has its signature, so that the
    /// chunks [`Allowed::known`] tells of are all a needle's. When not (PostgreSQL emptied the
    /// unlogged waiting signatures, and they are not all signed again yet), a chunk in neither
    /// may hold the needle: [`Allowed::keep`] allows it, and only a walk of every chunk finds it.
    pub(crate) fn intact(&self) -> bool {
        self.intact
    }

    /// The allowed chunks decided so far: outside a block, or in a block narrowed (all of
    /// them once every block is: [`Allowed::narrow_all`]).
    pub(crate) fn known(&self) -> &HashSet<i64> {
        &self.allowed
    }

    /// Which of `chunks` are allowed, narrowing the blocks they are in first.
    pub(crate) async fn keep(
        &mut self,
        connection: &mut AsyncPgConnection,
        chunks: &[i64],
    ) -> Result<Vec<bool>, DieselError> {
        let mut due: Vec<usize> = chunks
            .iter()
            .filter(|chunk| !self.unsealed.contains(chunk))
            .filter_map(|&chunk| self.block_of(chunk))
            .filter(|&index| !self.narrowed[index])
            .collect();
        due.sort_unstable();
        due.dedup();
        self.narrow(connection, &due, false).await?;
        Ok(chunks
            .iter()
            .map(|chunk| {
                let known = self.unsealed.contains(chunk) || self.block_of(*chunk).is_some();
                !known || self.allowed.contains(chunk)
            })
            .collect())
    }

    /// The index of the block holding `chunk`, if any (a block's chunks are in id order).
    fn block_of(&self, chunk: i64) -> Option<usize> {
        let mut index = self.blocks.partition_point(|(block, _)| block.id <= chunk);
        while index > 0 {
            index -= 1;
            let (block, reach) = &self.blocks[index];
            if *reach < chunk {
                return None;
            }
            if block.chunks.binary_search(&chunk).is_ok() {
                return Some(index);
            }
        }
        None
    }

    /// Narrows the blocks at `indexes` by every needle, reading the bands not kept, a key's
    /// positions a round or all at once (`at_once`); returns the chunks they allow.
    async fn narrow(
        &mut self,
        connection: &mut AsyncPgConnection,
        indexes: &[usize],
        at_once: bool,
    ) -> Result<Vec<i64>, DieselError> {
        if indexes.is_empty() {
            return Ok(Vec::new());
        }
        let blocks: Vec<&StoredBlock> = indexes.iter().map(|&index| &*self.blocks[index].0).collect();
        let mut allowed: Option<HashSet<i64>> = None;
        for group in &self.groups {
            let mut any = HashSet::default();
            for positions in group {
                any.extend(
                    narrowed(
                        connection,
                        self.workspace,
                        &blocks,
                        positions,
                        at_once,
                        &self.blocks_cache,
                        &mut self.work,
                    )
                    .await?,
                );
            }
            allowed = Some(match allowed {
                None => any,
                Some(allowed) => allowed.intersection(&any).copied().collect(),
            });
        }
        let allowed: Vec<i64> = allowed.unwrap_or_default().into_iter().collect();
        self.allowed.extend(allowed.iter().copied());
        self.block_allowed += allowed.len();
        self.work.blocks += indexes.len();
        for &index in indexes {
            self.narrowed[index] = true;
            self.decided += self.blocks[index].0.chunks.len();
        }
        Ok(allowed)
    }
}

/// The workspace's blocks, each with the newest log time of its chunks (`i64::MAX` when
/// unknown): their ids, then the headers not kept yet.
async fn headers(
    connection: &mut AsyncPgConnection,
    workspace: Uuid,
    cache: &BlockCache,
) -> Result<Vec<(Arc<StoredBlock>, i64)>, DieselError> {
    let ids: Vec<BlockId> = crate::prepared::prepared("SELECT id, max_ts FROM log_blocks WHERE workspace_id = $1")
        .bind::<SqlUuid, _>(workspace)
        .load(connection)
        .await?;
    let newest: HashMap<i64, i64> = ids.iter().map(|row| (row.id, row.max_ts.unwrap_or(i64::MAX))).collect();
    let mut stored: Vec<Arc<StoredBlock>> = Vec::with_capacity(ids.len());
    let mut unknown = Vec::new();
    for BlockId { id, .. } in ids {
        match cache.headers.get(&id) {
            Some(block) => stored.push(block),
            None => unknown.push(id),
        }
    }
    if !unknown.is_empty() {
        let rows: Vec<BlockRow> = crate::prepared::prepared(
            "SELECT id, bits, chunks FROM log_blocks WHERE workspace_id = $1 AND id = ANY($2)",
        )
        .bind::<SqlUuid, _>(workspace)
        .bind::<Array<BigInt>, _>(&unknown)
        .load(connection)
        .await?;
        for row in rows {
            let block =
                Arc::new(StoredBlock { id: row.id, bits: u32::try_from(row.bits).unwrap_or(0), chunks: row.chunks });
            cache.headers.insert(row.id, block.clone());
            stored.push(block);
        }
    }
    Ok(stored
        .into_iter()
        .map(|block| {
            let newest = newest.get(&block.id).copied().unwrap_or(i64::MAX);
            (block, newest)
        })
        .collect())
}

/// The chunk id [`unsealed_signatures`]' first statement answers when
/// `log_chunk_signatures_intact` is empty (chunk ids come from a sequence starting at 1).
const LOST: i64 = -1;

/// The chunks not in a block, with their signatures: their digests read, the signatures kept
/// in memory used, those not there read once (and kept unless a block was sealed since
/// `seals`: [`KeptSignatures::keep_read`]); and whether `log_chunk_signatures_intact` holds
/// its row ([`Allowed::intact`]), asked in the same statement as the digests (a statement of
/// its own was a round trip more for every search: about a millisecond, measured on the
/// absent term at 10M logs, docs/PERFORMANCE.md, issue 24).
async fn unsealed_signatures(
    connection: &mut AsyncPgConnection,
    workspace: Uuid,
    kept: &KeptSignatures,
    seals: u64,
) -> Result<(Vec<Signed>, bool), DieselError> {
    let mut unsealed: Vec<UnsealedDigest> = crate::prepared::prepared(
        "SELECT chunk_id, digest FROM log_chunk_signatures WHERE workspace_id = $1 \
         UNION ALL SELECT $2, 0 WHERE NOT EXISTS (SELECT 1 FROM log_chunk_signatures_intact)",
    )
    .bind::<SqlUuid, _>(workspace)
    .bind::<BigInt, _>(LOST)
    .load(connection)
    .await?;
    let before = unsealed.len();
    unsealed.retain(|row| row.chunk_id != LOST);
    let intact = unsealed.len() == before;
    let mut signed = Vec::with_capacity(unsealed.len());
    let mut missing = Vec::new();
    for row in unsealed {
        match kept.kept(row.chunk_id, row.digest) {
            Some(signature) => signed.push((row.chunk_id, signature)),
            None => missing.push(row.chunk_id),
        }
    }
    for missing in missing.chunks(SIGNATURES_READ) {
        let rows: Vec<UnsealedSigned> = crate::prepared::prepared(
            "SELECT chunk_id, digest, signature FROM log_chunk_signatures \
             WHERE workspace_id = $1 AND chunk_id = ANY($2)",
        )
        .bind::<SqlUuid, _>(workspace)
        .bind::<Array<BigInt>, _>(missing)
        .load(connection)
        .await?;
        let read: Vec<Signed> =
            rows.into_iter().map(|row| (row.chunk_id, Arc::new((row.digest, row.signature)))).collect();
        kept.keep_read(&read, seals);
        signed.extend(read);
    }
    Ok((signed, intact))
}

/// The most signatures one statement of [`unsealed_signatures`] reads (up to 32 KiB each,
/// about 8 KiB on loghub lines: about 1 MiB). A pooled connection's read buffer grows, doubling,
/// to hold an answer the search has not taken yet, and keeps that size: a block's 1,024
/// signatures read in one answer would leave each connection that read one about 8 MB larger
/// for good.
const SIGNATURES_READ: usize = 128;

/// The chunks of `blocks` whose signatures may hold a needle of `positions` (not empty),
/// narrowed in rounds ([`Narrowing`]) of a key's positions (all of them in one when
/// `at_once`), each round's bands kept or read (with those not stored kept as such).
async fn narrowed(
    connection: &mut AsyncPgConnection,
    workspace: Uuid,
    blocks: &[&StoredBlock],
    positions: &[u32],
    at_once: bool,
    cache: &BlockCache,
    work: &mut Work,
) -> Result<Vec<i64>, DieselError> {
    let per_round = if at_once { positions.len() } else { sluice_store::signature::HASHES };
    let mut narrowing = Narrowing::in_rounds_of(blocks.iter().copied(), positions, per_round);
    while let Some((ids, bands)) = narrowing.next_round() {
        let mut rows: Vec<(i64, u32, Arc<[u8]>)> = Vec::new();
        let (mut missing_blocks, mut missing_bands) = (Vec::new(), Vec::new());
        for &id in &ids {
            for &band in &bands {
                match cache.bands.get(&(id, band)) {
                    Some(Some(slices)) => rows.push((id, band, slices)),
                    Some(None) => {}
                    None => {
                        missing_blocks.push(id);
                        missing_bands.push(band);
                    }
                }
            }
        }
        if !missing_blocks.is_empty() {
            missing_blocks.sort_unstable();
            missing_blocks.dedup();
            missing_bands.sort_unstable();
            missing_bands.dedup();
            let wanted: Vec<i32> = missing_bands.iter().map(|band| i32::try_from(*band).unwrap_or(i32::MAX)).collect();
            let read: Vec<BandRow> = crate::prepared::prepared(
                "SELECT block_id, band, slices FROM log_block_bands \
                 WHERE workspace_id = $1 AND block_id = ANY($2) AND band = ANY($3)",
            )
            .bind::<SqlUuid, _>(workspace)
            .bind::<Array<BigInt>, _>(&missing_blocks)
            .bind::<Array<Integer>, _>(&wanted)
            .load(connection)
            .await?;
            work.statements += 1;
            work.bands_read += read.len();
            let mut read: HashMap<(i64, u32), Arc<[u8]>> = read
                .into_iter()
                .map(|row| ((row.block_id, u32::try_from(row.band).unwrap_or(u32::MAX)), Arc::from(row.slices)))
                .collect();
            for &id in &missing_blocks {
                for &band in &missing_bands {
                    if cache.bands.contains_key(&(id, band)) {
                        continue;
                    }
                    let slices = read.remove(&(id, band));
                    cache.bands.insert((id, band), slices.clone());
                    if let Some(slices) = slices {
                        rows.push((id, band, slices));
                    }
                }
            }
        }
        narrowing.apply(rows);
    }
    Ok(narrowing.chunks())
}
