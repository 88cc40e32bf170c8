//! The reads of blocks from PostgreSQL: [`PgBlocks`], the `BlockSource` of one workspace
//! (`sluice_store::blockstore`), with its prepared SQL, and a block's logs read whole.
//!
//! Every statement names one workspace, and every key it reads by leads with `workspace_id`.

use diesel::sql_types::{Array, BigInt, Integer, Uuid as SqlUuid};
use diesel_async::{AsyncPgConnection, RunQueryDsl};
use sluice_model::{Log, LogId};
use sluice_store::StoreError;
use sluice_store::blockstore::{BlockRef, BlockSource, BlockWalk};
use uuid::Uuid;

use sluice_store_diesel::raw::{HeadRow, IdRow, PartRow, RefRow};

use crate::error::from_diesel;
use crate::prepared::prepared;

/// A workspace's blocks whose time range meets `$2..=$3`, newest first after `($4, $5)`: a
/// backwards walk of `blocks_recent`, which holds every column it reads.
pub(crate) const BLOCKS_SQL: &str = "SELECT id, max_ts, max_id FROM blocks \
     WHERE workspace_id = $1 AND max_ts >= $2 AND min_ts <= $3 AND (max_ts, id) < ($4, $5) \
     ORDER BY max_ts DESC, id DESC LIMIT $6";

/// A workspace's blocks holding an id past `$2`: a range of `blocks_ids`.
const AFTER_SQL: &str = "SELECT id, max_ts, max_id FROM blocks WHERE workspace_id = $1 AND max_id > $2";

/// The blocks whose id range holds `$2`.
const HOLDING_SQL: &str = "SELECT id FROM blocks WHERE workspace_id = $1 AND max_id >= $2 AND min_id <= $2";

const HEADS_SQL: &str = "SELECT id, head FROM blocks WHERE workspace_id = $1 AND id = ANY($2)";

/// Index bands by `(block, band)` pairs, each a lookup of the primary key.
pub(crate) const BANDS_SQL: &str = "SELECT b.block_id AS block, b.band AS part, b.bytes AS bytes \
     FROM unnest($2::int8[], $3::int4[]) AS w(block_id, part) JOIN block_bands AS b \
     ON b.workspace_id = $1 AND b.block_id = w.block_id AND b.band = w.part";

/// Granules by `(block, granule)` pairs, the same way.
pub(crate) const GRANULES_SQL: &str = "SELECT g.block_id AS block, g.granule AS part, g.bytes AS bytes \
     FROM unnest($2::int8[], $3::int4[]) AS w(block_id, part) JOIN block_granules AS g \
     ON g.workspace_id = $1 AND g.block_id = w.block_id AND g.granule = w.part";

/// One workspace's blocks, read through one connection (one snapshot when the caller holds a
/// repeatable-read transaction).
pub(crate) struct PgBlocks<'c> {
    pub(crate) connection: &'c mut AsyncPgConnection,
    pub(crate) workspace: Uuid,
}

fn split(wanted: &[(i64, u32)]) -> (Vec<i64>, Vec<i32>) {
    wanted.iter().map(|(block, part)| (*block, i32::try_from(*part).unwrap_or(i32::MAX))).unzip()
}

impl BlockSource for PgBlocks<'_> {
    async fn blocks(&mut self, walk: BlockWalk) -> Result<Vec<BlockRef>, StoreError> {
        let [from, to, before_ts, before_id, limit] = walk.parameters();
        let rows: Vec<RefRow> = prepared(BLOCKS_SQL)
            .bind::<SqlUuid, _>(self.workspace)
            .bind::<BigInt, _>(from)
            .bind::<BigInt, _>(to)
            .bind::<BigInt, _>(before_ts)
            .bind::<BigInt, _>(before_id)
            .bind::<BigInt, _>(limit)
            .load(self.connection)
            .await
            .map_err(from_diesel)?;
        Ok(rows.into_iter().map(BlockRef::from).collect())
    }

    async fn blocks_holding(&mut self, id: LogId) -> Result<Vec<i64>, StoreError> {
        let rows: Vec<IdRow> = prepared(HOLDING_SQL)
            .bind::<SqlUuid, _>(self.workspace)
            .bind::<SqlUuid, _>(*id.as_uuid())
            .load(self.connection)
            .await
            .map_err(from_diesel)?;
        Ok(rows.into_iter().map(|row| row.id).collect())
    }

    async fn blocks_after(&mut self, after: LogId) -> Result<Vec<BlockRef>, StoreError> {
        let rows: Vec<RefRow> = prepared(AFTER_SQL)
            .bind::<SqlUuid, _>(self.workspace)
            .bind::<SqlUuid, _>(*after.as_uuid())
            .load(self.connection)
            .await
            .map_err(from_diesel)?;
        Ok(rows.into_iter().map(BlockRef::from).collect())
    }

    async fn heads(&mut self, ids: &[i64]) -> Result<Vec<(i64, Vec<u8>)>, StoreError> {
        let rows: Vec<HeadRow> = prepared(HEADS_SQL)
            .bind::<SqlUuid, _>(self.workspace)
            .bind::<Array<BigInt>, _>(ids.to_vec())
            .load(self.connection)
            .await
            .map_err(from_diesel)?;
        Ok(rows.into_iter().map(|row| (row.id, row.head)).collect())
    }

    async fn bands(&mut self, wanted: &[(i64, u32)]) -> Result<Vec<(i64, u32, Vec<u8>)>, StoreError> {
        let (blocks, bands) = split(wanted);
        let rows: Vec<PartRow> = prepared(BANDS_SQL)
            .bind::<SqlUuid, _>(self.workspace)
            .bind::<Array<BigInt>, _>(blocks)
            .bind::<Array<Integer>, _>(bands)
            .load(self.connection)
            .await
            .map_err(from_diesel)?;
        Ok(rows.into_iter().map(PartRow::into_part).collect())
    }

    async fn granules(&mut self, wanted: &[(i64, u32)]) -> Result<Vec<(i64, u32, Vec<u8>)>, StoreError> {
        let (blocks, granules) = split(wanted);
        let rows: Vec<PartRow> = prepared(GRANULES_SQL)
            .bind::<SqlUuid, _>(self.workspace)
            .bind::<Array<BigInt>, _>(blocks)
            .bind::<Array<Integer>, _>(granules)
            .load(self.connection)
            .await
            .map_err(from_diesel)?;
        Ok(rows.into_iter().map(PartRow::into_part).collect())
    }
}

/// Every log of one block, in id order ([`sluice_store::blockstore::block_logs`]).
pub(crate) async fn block_logs(
    connection: &mut AsyncPgConnection,
    workspace: Uuid,
    id: i64,
) -> Result<Vec<Log>, StoreError> {
    sluice_store::blockstore::block_logs(&mut PgBlocks { connection, workspace }, id).await
}
