//! Retention: a workspace's blocks that hold logs older than a cutoff are dropped, or, holding
//! newer ones too, written again without the old ones, a few blocks a transaction, with their
//! counters and flows kept in step.

use async_trait::async_trait;

use diesel::prelude::*;
use sluice_model::{Log, WorkspaceId};
use sluice_store::blockstore::BlockRows;
use sluice_store::flows::FlowDeltas;
use sluice_store::rollups::RollupDeltas;
use sluice_store::{LogRetention, StoreError};

use crate::blocks::{block_logs, swap_blocks};
use crate::connection::SqliteStore;
use crate::error::from_diesel;
use crate::flows::apply_flow_deltas;
use crate::rollups::apply_rollup_deltas;
use crate::schema::blocks;

/// Blocks a retention transaction rewrites or drops: bounded, so a large sweep never holds the
/// write lock for long.
const BLOCKS_A_TRANSACTION: i64 = 4;

#[async_trait]
impl LogRetention for SqliteStore {
    async fn delete_logs_before(&self, workspace: WorkspaceId, cutoff_ms: i64) -> Result<u64, StoreError> {
        let mut deleted = 0;
        loop {
            let (write_lock, clock, heads) = (self.write_lock.clone(), self.clock.clone(), self.heads.clone());
            let round = self
                .with_connection(move |connection| {
                    let bytes = workspace.as_bytes().as_slice();
                    let due: Vec<i64> = blocks::table
                        .filter(blocks::workspace_id.eq(bytes))
                        .filter(blocks::min_ts.lt(cutoff_ms))
                        .order(blocks::id)
                        .select(blocks::id)
                        .limit(BLOCKS_A_TRANSACTION)
                        .load(connection)
                        .map_err(from_diesel)?;
                    if due.is_empty() {
                        return Ok(None);
                    }
                    // Read and encoded before the write lock is taken; the transaction does
                    // nothing if a merge replaced one of the blocks meanwhile.
                    let (mut kept, mut expired): (Vec<Log>, Vec<Log>) = (Vec::new(), Vec::new());
                    for id in &due {
                        let (old, new): (Vec<Log>, Vec<Log>) = block_logs(connection, bytes, *id)?
                            .into_iter()
                            .partition(|log| log.entry.timestamp < cutoff_ms);
                        expired.extend(old);
                        kept.extend(new);
                    }
                    let rewritten = if kept.is_empty() { Vec::new() } else { BlockRows::encode(&kept)? };
                    let deltas = RollupDeltas::removed(&expired, str::to_owned);
                    let flows = FlowDeltas::removed(&expired, str::to_owned);
                    let now = clock.now_ms();
                    let _lock = write_lock.blocking_lock();
                    let swapped = swap_blocks(connection, bytes, &due, &rewritten, now, |connection| {
                        apply_rollup_deltas(connection, &workspace, &deltas)?;
                        apply_flow_deltas(connection, &heads, bytes, &flows)?;
                        Ok(())
                    })?;
                    Ok(Some(if swapped { expired.len() as u64 } else { 0 }))
                })
                .await?;
            match round {
                Some(count) => deleted += count,
                None => break,
            }
        }
        Ok(deleted)
    }
}
