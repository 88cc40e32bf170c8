//! Blocks of chunk signatures (`sluice_store::signature`) as SQLite keeps them: a chunk's
//! signature waits in `log_chunk_signatures` until its workspace has a block's worth, then a
//! sealer gathers them into a block (`log_blocks`) whose slices are stored a band a row
//! (`log_block_bands`), under a claim so two sealers never write one block; a search narrows
//! the blocks in rounds and tests the chunks outside one from signatures kept in memory.

use foldhash::HashSet;
use std::sync::Mutex;

use diesel::prelude::*;
use diesel::result::Error as DieselError;
use sluice_store::signature::{Block, Narrowing, StoredBlock};

use crate::schema::{log_block_bands, log_blocks, log_chunk_signatures};

/// A block's header, as a search reads it.
#[derive(Queryable)]
struct BlockHeader {
    id: i64,
    bits: i32,
    chunks: Vec<u8>,
}

/// A band of a block's slices, as a search reads it.
#[derive(Queryable)]
struct BandRow {
    band: i32,
    block_id: i64,
    slices: Vec<u8>,
}

/// The chunks of `workspace` whose signatures may hold a needle of `positions` (not empty):
/// those of its blocks, read a band of every block at a time, and those not in a block yet,
/// tested one by one. Chunks written past `through` (a search reads their logs as the
/// unindexed tail) may be among them. Read in one transaction: a block sealed meanwhile is
/// seen either as a block or as its chunks' signatures.
pub(crate) fn signature_candidates(
    connection: &mut SqliteConnection,
    workspace: &[u8],
    positions: &[u32],
    cache: &sluice_store::signature::SignatureCache,
) -> Result<HashSet<i64>, DieselError> {
    connection.transaction(|connection| {
        let mut found = HashSet::default();
        let blocks: Vec<BlockHeader> = log_blocks::table
            .filter(log_blocks::workspace_id.eq(workspace))
            .filter(log_blocks::claimed_at.is_null())
            .select((log_blocks::id, log_blocks::bits, log_blocks::chunks))
            .load(connection)?;
        // Narrowed in rounds of one key's worth of positions, each reading the round's bands
        // of the blocks with a slot left (one B-tree lookup a band and block).
        let stored: Vec<StoredBlock> = blocks
            .into_iter()
            .map(|block| StoredBlock {
                id: block.id,
                bits: u32::try_from(block.bits).unwrap_or(0),
                chunks: block
                    .chunks
                    .chunks_exact(8)
                    .map(|bytes| i64::from_le_bytes(bytes.try_into().unwrap_or([0; 8])))
                    .collect(),
            })
            .collect();
        let mut narrowing = Narrowing::new(&stored, positions);
        while let Some((ids, bands)) = narrowing.next_round() {
            let bands: Vec<i32> = bands.iter().map(|band| i32::try_from(*band).unwrap_or(i32::MAX)).collect();
            let rows: Vec<BandRow> = log_block_bands::table
                .filter(log_block_bands::workspace_id.eq(workspace))
                .filter(log_block_bands::block_id.eq_any(&ids))
                .filter(log_block_bands::band.eq_any(&bands))
                .select((log_block_bands::band, log_block_bands::block_id, log_block_bands::slices))
                .load(connection)?;
            narrowing.apply(
                rows.into_iter()
                    .map(|row| (row.block_id, u32::try_from(row.band).unwrap_or(u32::MAX), row.slices))
                    .collect(),
            );
        }
        found.extend(narrowing.chunks());
        // The chunks not in a block: their digests (read without the signatures' overflow
        // pages), the signatures from memory, those not there read once.
        let unsealed: Vec<(i64, i64)> = log_chunk_signatures::table
            .filter(log_chunk_signatures::workspace_id.eq(workspace))
            .select((log_chunk_signatures::chunk_id, log_chunk_signatures::digest))
            .load(connection)?;
        let mut missing = Vec::new();
        for (chunk, digest) in unsealed {
            match cache.get(&chunk) {
                Some(kept) if kept.0 == digest => {
                    if sluice_store::signature::holds(&kept.1, positions) {
                        found.insert(chunk);
                    }
                }
                _ => missing.push(chunk),
            }
        }
        for part in missing.chunks(500) {
            let rows: Vec<(i64, i64, Vec<u8>)> = log_chunk_signatures::table
                .filter(log_chunk_signatures::chunk_id.eq_any(part))
                .select((log_chunk_signatures::chunk_id, log_chunk_signatures::digest, log_chunk_signatures::signature))
                .load(connection)?;
            for (chunk, digest, signature) in rows {
                if sluice_store::signature::holds(&signature, positions) {
                    found.insert(chunk);
                }
                cache.insert(chunk, std::sync::Arc::new((digest, signature)));
            }
        }
        Ok(found)
    })
}

/// How long a claim on a block holds before another sealer may take it over (one that
/// crashed, or stopped, while writing the block's bands).
const CLAIM_HOLDS_MS: i64 = 60_000;

/// Gathers the signatures of each workspace that has `block_chunks` of them outside a block into
/// blocks ([`seal_blocks`]).
pub(crate) fn seal_due(
    connection: &mut SqliteConnection,
    write_lock: &Mutex<()>,
    block_chunks: usize,
    signatures: &sluice_store::signature::SignatureCache,
) -> Result<(), DieselError> {
    let block_chunks = block_chunks.clamp(1, sluice_store::signature::BLOCK_CHUNKS);
    let workspaces: Vec<Vec<u8>> = log_chunk_signatures::table
        .group_by(log_chunk_signatures::workspace_id)
        .having(diesel::dsl::count_star().ge(i64::try_from(block_chunks).unwrap_or(i64::MAX)))
        .select(log_chunk_signatures::workspace_id)
        .load(connection)?;
    seal_blocks(connection, write_lock, &workspaces, block_chunks, signatures)
}

/// Gathers the signatures of each of `workspaces` into blocks of `block_chunks` while it has
/// that many outside one, oldest first. A block is built without the write lock, then
/// claimed (its header written, not searched yet; a block another sealer claimed less than
/// [`CLAIM_HOLDS_MS`] ago is left to it), its bands written a few thousand a transaction (so
/// inserts wait a few ms at a time), and released with its signatures' removal in one
/// transaction, unless a signature went meanwhile (retention dropped its chunk): then the
/// block and its bands go, and the next round tries again.
pub(crate) fn seal_blocks(
    connection: &mut SqliteConnection,
    write_lock: &Mutex<()>,
    workspaces: &[Vec<u8>],
    block_chunks: usize,
    signatures: &sluice_store::signature::SignatureCache,
) -> Result<(), DieselError> {
    let block_chunks = block_chunks.clamp(1, sluice_store::signature::BLOCK_CHUNKS);
    let wanted = i64::try_from(block_chunks).unwrap_or(i64::MAX);
    let locked = || write_lock.lock().unwrap_or_else(std::sync::PoisonError::into_inner);
    for workspace in workspaces {
        loop {
            let waiting: i64 = log_chunk_signatures::table
                .filter(log_chunk_signatures::workspace_id.eq(workspace))
                .count()
                .get_result(connection)?;
            if waiting < wanted {
                break;
            }
            let rows: Vec<(i64, Vec<u8>)> = log_chunk_signatures::table
                .filter(log_chunk_signatures::workspace_id.eq(workspace))
                .order(log_chunk_signatures::chunk_id)
                .select((log_chunk_signatures::chunk_id, log_chunk_signatures::signature))
                .limit(wanted)
                .load(connection)?;
            let Some(&(first, _)) = rows.first() else { break };
            let views: Vec<&[u8]> = rows.iter().map(|(_, signature)| signature.as_slice()).collect();
            let block = Block::build(&views);
            let chunks: Vec<u8> = rows.iter().flat_map(|(id, _)| id.to_le_bytes()).collect();
            let ids: Vec<i64> = rows.iter().map(|(id, _)| *id).collect();
            drop(rows);
            let bands: Vec<(i32, &[u8])> =
                block.stored_bands().filter_map(|(band, slices)| Some((i32::try_from(band).ok()?, slices))).collect();
            let drop_block = |connection: &mut SqliteConnection| -> Result<(), DieselError> {
                diesel::delete(
                    log_block_bands::table
                        .filter(log_block_bands::workspace_id.eq(workspace))
                        .filter(log_block_bands::block_id.eq(first)),
                )
                .execute(connection)?;
                diesel::delete(log_blocks::table.filter(log_blocks::id.eq(first))).execute(connection)?;
                Ok(())
            };
            // The claim: a header not searched yet, or one left by a sealer that stopped.
            let now = std::time::SystemTime::now()
                .duration_since(std::time::UNIX_EPOCH)
                .map_or(0, |since| i64::try_from(since.as_millis()).unwrap_or(i64::MAX));
            let claimed = {
                let _lock = locked();
                connection.immediate_transaction(|connection| {
                    let held: Option<Option<i64>> = log_blocks::table
                        .filter(log_blocks::id.eq(first))
                        .select(log_blocks::claimed_at)
                        .first(connection)
                        .optional()?;
                    match held {
                        // Sealed already, or claimed by a sealer still at it.
                        Some(None) => return Ok(false),
                        Some(Some(at)) if now - at < CLAIM_HOLDS_MS => return Ok(false),
                        Some(Some(_)) => drop_block(connection)?,
                        None => {}
                    }
                    diesel::insert_into(log_blocks::table)
                        .values((
                            log_blocks::id.eq(first),
                            log_blocks::workspace_id.eq(workspace),
                            log_blocks::bits.eq(i32::try_from(block.bits).unwrap_or(i32::MAX)),
                            log_blocks::chunks.eq(&chunks),
                            log_blocks::claimed_at.eq(Some(now)),
                        ))
                        .execute(connection)?;
                    Ok::<_, DieselError>(true)
                })?
            };
            if !claimed {
                break;
            }
            // Four values a row: well under SQLite's limit of bound values a statement.
            for part in bands.chunks(4_096) {
                let rows: Vec<_> = part
                    .iter()
                    .map(|(band, slices)| {
                        (
                            log_block_bands::workspace_id.eq(workspace),
                            log_block_bands::band.eq(*band),
                            log_block_bands::block_id.eq(first),
                            log_block_bands::slices.eq(slices),
                        )
                    })
                    .collect();
                let _lock = locked();
                connection.immediate_transaction(|connection| {
                    diesel::insert_into(log_block_bands::table).values(rows).execute(connection)
                })?;
            }
            let released = {
                let _lock = locked();
                connection.immediate_transaction(|connection| {
                    let removed =
                        diesel::delete(log_chunk_signatures::table.filter(log_chunk_signatures::chunk_id.eq_any(&ids)))
                            .execute(connection)?;
                    if removed != ids.len() {
                        // Retention dropped a chunk meanwhile: the signatures stay, the block goes.
                        return Err(DieselError::RollbackTransaction);
                    }
                    diesel::update(log_blocks::table.filter(log_blocks::id.eq(first)))
                        .set(log_blocks::claimed_at.eq(None::<i64>))
                        .execute(connection)?;
                    Ok::<_, DieselError>(())
                })
            };
            match released {
                // A search reads a sealed chunk's bands, never its signature again: kept, it
                // would only crowd the cache until evicted.
                Ok(()) => ids.iter().for_each(|id| signatures.invalidate(id)),
                Err(DieselError::RollbackTransaction) => {
                    let _lock = locked();
                    connection.immediate_transaction(drop_block)?;
                    break;
                }
                Err(error) => return Err(error),
            }
        }
    }
    Ok(())
}
