//! Retention: a workspace's blocks that hold logs older than a cutoff are dropped, or, holding
//! newer ones too, written again without the old ones, a few blocks a transaction, with their
//! counters and flows kept in step (`crate::blocks::swap_blocks`).

use async_trait::async_trait;
use diesel::sql_types::{BigInt, Uuid as SqlUuid};
use diesel_async::RunQueryDsl;
use sluice_model::{Log, WorkspaceId};
use sluice_store::blockstore::BlockRows;
use sluice_store::flows::FlowDeltas;
use sluice_store::rollups::RollupDeltas;
use sluice_store::{LogRetention, StoreError};

use crate::PgStore;
use crate::blocks::{Removed, encode_off_runtime, swap_blocks};
use crate::error::from_diesel;
use crate::prepared::prepared;
use crate::source::block_logs;
use crate::text::encode;

/// Blocks a retention transaction rewrites or drops: bounded, so each stays well within the
/// call timeout.
const BLOCKS_A_TRANSACTION: i64 = 4;

#[derive(diesel::QueryableByName)]
struct Due {
    #[diesel(sql_type = BigInt)]
    id: i64,
}

impl PgStore {
    /// One round of retention for `workspace`: how many logs it deleted, or `None` when no
    /// block holds logs older than the cutoff.
    async fn retain_some(&self, workspace: WorkspaceId, cutoff_ms: i64) -> Result<Option<u64>, StoreError> {
        let uuid = *workspace.as_uuid();
        let mut connection = self.connection().await?;
        let due: Vec<Due> =
            prepared("SELECT id FROM blocks WHERE workspace_id = $1 AND min_ts < $2 ORDER BY id LIMIT $3")
                .bind::<SqlUuid, _>(uuid)
                .bind::<BigInt, _>(cutoff_ms)
                .bind::<BigInt, _>(BLOCKS_A_TRANSACTION)
                .load(&mut *connection)
                .await
                .map_err(from_diesel)?;
        if due.is_empty() {
            return Ok(None);
        }
        let due: Vec<i64> = due.into_iter().map(|row| row.id).collect();
        let (mut kept, mut expired): (Vec<Log>, Vec<Log>) = (Vec::new(), Vec::new());
        for id in &due {
            let (old, new): (Vec<Log>, Vec<Log>) = block_logs(&mut connection, uuid, *id)
                .await?
                .into_iter()
                .partition(|log| log.entry.timestamp < cutoff_ms);
            expired.extend(old);
            kept.extend(new);
        }
        // Counters keep source and dataset encoded (`crate::text`).
        let stored = |text: &str| encode(text).into_owned();
        let removed =
            Removed { rollups: RollupDeltas::removed(&expired, stored), flows: FlowDeltas::removed(&expired, stored) };
        let rewritten = encode_off_runtime("encoding a block retention rewrote", move || {
            if kept.is_empty() { Ok(Vec::new()) } else { BlockRows::encode(&kept) }
        })
        .await?;
        // Nothing when a merge replaced one of the blocks meanwhile: the next round reads again.
        let swapped = swap_blocks(self, &mut connection, uuid, &due, &rewritten, &removed).await?;
        Ok(Some(if swapped { expired.len() as u64 } else { 0 }))
    }
}

#[async_trait]
impl LogRetention for PgStore {
    async fn delete_logs_before(&self, workspace: WorkspaceId, cutoff_ms: i64) -> Result<u64, StoreError> {
        let mut deleted = 0;
        while let Some(count) = self.with_deadline(self.retain_some(workspace, cutoff_ms)).await? {
            deleted += count;
        }
        Ok(deleted)
    }
}
