//! Blocks of logs as SQLite keeps them (`sluice_store::blockstore`): the reads' SQL
//! ([`SqliteBlocks`]), a block's rows written and deleted, and the merges of each workspace's
//! small blocks that the store's own thread runs ([`merge_due`]).

use diesel::prelude::*;
use diesel::result::Error as DieselError;
use diesel::sql_types::{BigInt, Binary, Text};
use sluice_model::{Log, LogId, WorkspaceId};
use sluice_store::StoreError;
use sluice_store::blockstore::{
    BlockRef, BlockRows, BlockSource, BlockWalk, Mergeable, SMALL_BLOCK_ROWS, merge_plan, now,
};

use sluice_store_diesel::raw::{PartRow, RefRow};

use crate::deadline;
use crate::error::{Failed, from_diesel, write_transaction};
use crate::lock::WriteLock;
use crate::schema::{block_bands, block_granules, blocks};

/// Rows per multi-row `INSERT` of bands or granules: 4 bound values each, far under SQLite's
/// limit on variables.
const ROWS_PER_INSERT: usize = 500;

/// A workspace's blocks whose time range meets `?2..=?3`, newest first after `(?4, ?5)`: a
/// backwards walk of `blocks_recent`.
pub(crate) const BLOCKS_SQL: &str = "SELECT id, max_ts, max_id FROM blocks \
     WHERE workspace_id = ?1 AND max_ts >= ?2 AND min_ts <= ?3 AND (max_ts, id) < (?4, ?5) \
     ORDER BY max_ts DESC, id DESC LIMIT ?6";

/// A workspace's blocks holding an id past `?2`: a range of `blocks_ids`.
pub(crate) const AFTER_SQL: &str = "SELECT id, max_ts, max_id FROM blocks WHERE workspace_id = ?1 AND max_id > ?2";

/// Index bands by `[block, band]` pairs: `CROSS JOIN` keeps the pairs the outer loop, each a
/// lookup of the primary key (a plain join let SQLite walk the workspace's every band).
pub(crate) const BANDS_SQL: &str = "SELECT b.block_id AS block, b.band AS part, b.bytes AS bytes \
     FROM json_each(?2) AS wanted CROSS JOIN block_bands AS b \
     ON b.workspace_id = ?1 AND b.block_id = wanted.value ->> 0 AND b.band = wanted.value ->> 1";

/// Granules by `[block, granule]` pairs, the same way.
pub(crate) const GRANULES_SQL: &str = "SELECT g.block_id AS block, g.granule AS part, g.bytes AS bytes \
     FROM json_each(?2) AS wanted CROSS JOIN block_granules AS g \
     ON g.workspace_id = ?1 AND g.block_id = wanted.value ->> 0 AND g.granule = wanted.value ->> 1";

/// One workspace's blocks, read through one connection (one snapshot when the caller holds a
/// read transaction).
pub(crate) struct SqliteBlocks<'c> {
    pub(crate) connection: &'c mut SqliteConnection,
    pub(crate) workspace: Vec<u8>,
}

impl<'c> SqliteBlocks<'c> {
    pub(crate) fn new(connection: &'c mut SqliteConnection, workspace: &WorkspaceId) -> Self {
        SqliteBlocks { connection, workspace: workspace.as_bytes().to_vec() }
    }
}

fn pairs(wanted: &[(i64, u32)]) -> String {
    serde_json::to_string(wanted).unwrap_or_else(|_| "[]".to_owned())
}

impl BlockSource for SqliteBlocks<'_> {
    async fn blocks(&mut self, walk: BlockWalk) -> Result<Vec<BlockRef>, StoreError> {
        deadline::check()?;
        // Numbered parameters ?2..?6, in the order `BlockWalk::parameters` gives them.
        let mut query = diesel::sql_query(BLOCKS_SQL).bind::<Binary, _>(&self.workspace).into_boxed();
        for parameter in walk.parameters() {
            query = query.bind::<BigInt, _>(parameter);
        }
        let rows: Vec<RefRow> = query.load(self.connection).map_err(from_diesel)?;
        Ok(rows.into_iter().map(BlockRef::from).collect())
    }

    async fn blocks_holding(&mut self, id: LogId) -> Result<Vec<i64>, StoreError> {
        deadline::check()?;
        blocks::table
            .filter(blocks::workspace_id.eq(&self.workspace))
            .filter(blocks::max_id.ge(id.as_bytes().to_vec()))
            .filter(blocks::min_id.le(id.as_bytes().to_vec()))
            .select(blocks::id)
            .load(self.connection)
            .map_err(from_diesel)
    }

    async fn blocks_after(&mut self, after: LogId) -> Result<Vec<BlockRef>, StoreError> {
        deadline::check()?;
        let rows: Vec<RefRow> = diesel::sql_query(AFTER_SQL)
            .bind::<Binary, _>(&self.workspace)
            .bind::<Binary, _>(after.as_bytes().as_slice())
            .load(self.connection)
            .map_err(from_diesel)?;
        Ok(rows.into_iter().map(BlockRef::from).collect())
    }

    async fn heads(&mut self, ids: &[i64]) -> Result<Vec<(i64, Vec<u8>)>, StoreError> {
        deadline::check()?;
        blocks::table
            .filter(blocks::workspace_id.eq(&self.workspace))
            .filter(blocks::id.eq_any(ids))
            .select((blocks::id, blocks::head))
            .load(self.connection)
            .map_err(from_diesel)
    }

    async fn bands(&mut self, wanted: &[(i64, u32)]) -> Result<Vec<(i64, u32, Vec<u8>)>, StoreError> {
        deadline::check()?;
        let rows: Vec<PartRow> = diesel::sql_query(BANDS_SQL)
            .bind::<Binary, _>(&self.workspace)
            .bind::<Text, _>(pairs(wanted))
            .load(self.connection)
            .map_err(from_diesel)?;
        Ok(rows.into_iter().map(PartRow::into_part).collect())
    }

    async fn granules(&mut self, wanted: &[(i64, u32)]) -> Result<Vec<(i64, u32, Vec<u8>)>, StoreError> {
        deadline::check()?;
        let rows: Vec<PartRow> = diesel::sql_query(GRANULES_SQL)
            .bind::<Binary, _>(&self.workspace)
            .bind::<Text, _>(pairs(wanted))
            .load(self.connection)
            .map_err(from_diesel)?;
        Ok(rows.into_iter().map(PartRow::into_part).collect())
    }
}

/// Writes a block of `workspace` (inside the caller's write transaction); returns its number.
pub(crate) fn write_block(
    connection: &mut SqliteConnection,
    workspace: &[u8],
    block: &BlockRows,
    now_ms: i64,
) -> Result<i64, DieselError> {
    diesel::insert_into(blocks::table)
        .values((
            blocks::workspace_id.eq(workspace),
            blocks::rows.eq(i32::try_from(block.rows).unwrap_or(i32::MAX)),
            blocks::min_ts.eq(block.timestamps.0),
            blocks::max_ts.eq(block.timestamps.1),
            blocks::min_id.eq(block.ids.0.as_bytes().as_slice()),
            blocks::max_id.eq(block.ids.1.as_bytes().as_slice()),
            blocks::created_at.eq(now_ms),
            blocks::head.eq(&block.head),
        ))
        .execute(connection)?;
    let id: i64 = diesel::select(diesel::dsl::sql::<BigInt>("last_insert_rowid()")).get_result(connection)?;
    let bands: Vec<_> = block
        .bands
        .iter()
        .enumerate()
        .map(|(band, bytes)| {
            (
                block_bands::workspace_id.eq(workspace),
                block_bands::block_id.eq(id),
                block_bands::band.eq(band as i32),
                block_bands::bytes.eq(bytes.as_slice()),
            )
        })
        .collect();
    for part in bands.chunks(ROWS_PER_INSERT) {
        diesel::insert_into(block_bands::table).values(part).execute(connection)?;
    }
    let granules: Vec<_> = block
        .granules
        .iter()
        .enumerate()
        .map(|(granule, bytes)| {
            (
                block_granules::workspace_id.eq(workspace),
                block_granules::block_id.eq(id),
                block_granules::granule.eq(granule as i32),
                block_granules::bytes.eq(bytes.as_slice()),
            )
        })
        .collect();
    for part in granules.chunks(ROWS_PER_INSERT) {
        diesel::insert_into(block_granules::table).values(part).execute(connection)?;
    }
    Ok(id)
}

/// Deletes blocks of `workspace` with their bands and granules; returns how many were there.
pub(crate) fn delete_blocks(
    connection: &mut SqliteConnection,
    workspace: &[u8],
    ids: &[i64],
) -> Result<usize, DieselError> {
    diesel::delete(
        block_bands::table.filter(block_bands::workspace_id.eq(workspace)).filter(block_bands::block_id.eq_any(ids)),
    )
    .execute(connection)?;
    diesel::delete(
        block_granules::table
            .filter(block_granules::workspace_id.eq(workspace))
            .filter(block_granules::block_id.eq_any(ids)),
    )
    .execute(connection)?;
    diesel::delete(blocks::table.filter(blocks::workspace_id.eq(workspace)).filter(blocks::id.eq_any(ids)))
        .execute(connection)
}

/// Every log of one block, in id order ([`sluice_store::blockstore::block_logs`]).
pub(crate) fn block_logs(connection: &mut SqliteConnection, workspace: &[u8], id: i64) -> Result<Vec<Log>, StoreError> {
    let workspace =
        WorkspaceId::from_slice(workspace).ok_or_else(|| StoreError::Backend("not a workspace id".into()))?;
    now(sluice_store::blockstore::block_logs(&mut SqliteBlocks::new(connection, &workspace), id))
}

/// One round of merges: for each workspace whose small blocks are due ([`merge_plan`]), reads
/// them, encodes their logs into one block, and swaps it in for them in one transaction (which
/// does nothing if any of them went meanwhile). Returns the blocks merged away.
pub(crate) fn merge_due(
    connection: &mut SqliteConnection,
    write_lock: &WriteLock,
    now_ms: i64,
) -> Result<usize, StoreError> {
    let workspaces: Vec<Vec<u8>> = blocks::table
        .filter(blocks::rows.lt(SMALL_BLOCK_ROWS as i32))
        .select(blocks::workspace_id)
        .distinct()
        .load(connection)
        .map_err(from_diesel)?;
    let mut merged = 0;
    for workspace in workspaces {
        // Merge after merge while any is due, so the merges keep up with ingest.
        // (A merge that found its blocks changed leaves the rest to the next round.)
        while let Some(count) = merge_one(connection, write_lock, &workspace, now_ms)?
            && count > 0
        {
            merged += count;
        }
    }
    Ok(merged)
}

/// The first merge due among `workspace`'s small blocks, done: how many blocks it merged away
/// (none if a retention or another process changed them meanwhile); `None` when none is due.
fn merge_one(
    connection: &mut SqliteConnection,
    write_lock: &WriteLock,
    workspace: &[u8],
    now_ms: i64,
) -> Result<Option<usize>, StoreError> {
    let small: Vec<(i64, i32, i64)> = blocks::table
        .filter(blocks::workspace_id.eq(workspace))
        .filter(blocks::rows.lt(SMALL_BLOCK_ROWS as i32))
        .order(blocks::id)
        .select((blocks::id, blocks::rows, blocks::created_at))
        .load(connection)
        .map_err(from_diesel)?;
    let small: Vec<Mergeable> = small
        .into_iter()
        .map(|(id, rows, created_at)| Mergeable { id, rows: rows.max(0) as u32, created_at })
        .collect();
    let plan = merge_plan(&small, now_ms);
    if plan.is_empty() {
        return Ok(None);
    }
    let mut logs = Vec::new();
    for id in &plan {
        logs.extend(block_logs(connection, workspace, *id)?);
    }
    let encoded = BlockRows::encode(&logs)?;
    let _lock = write_lock.blocking_lock();
    let swapped = swap_blocks(connection, workspace, &plan, &encoded, now_ms, |_| Ok(()))?;
    Ok(Some(if swapped { plan.len() } else { 0 }))
}

/// Puts `new` in the place of the blocks `old` of `workspace`, and runs `also` (their counters),
/// in one write transaction, under the caller's write lock; does nothing and answers false when
/// any of `old` went meanwhile (a merge or retention, of this process or another, came first).
pub(crate) fn swap_blocks(
    connection: &mut SqliteConnection,
    workspace: &[u8],
    old: &[i64],
    new: &[BlockRows],
    now_ms: i64,
    also: impl FnOnce(&mut SqliteConnection) -> Result<(), Failed>,
) -> Result<bool, StoreError> {
    write_transaction(connection, |connection| {
        let present: i64 = blocks::table
            .filter(blocks::workspace_id.eq(workspace))
            .filter(blocks::id.eq_any(old))
            .count()
            .get_result(connection)?;
        if present != old.len() as i64 {
            return Ok(false);
        }
        for block in new {
            write_block(connection, workspace, block, now_ms)?;
        }
        delete_blocks(connection, workspace, old)?;
        also(connection)?;
        Ok(true)
    })
}

#[cfg(test)]
mod tests {
    use diesel::connection::SimpleConnection;
    use diesel_migrations::MigrationHarness;

    use super::*;

    #[derive(QueryableByName)]
    struct Step {
        #[diesel(sql_type = Text)]
        detail: String,
    }

    /// How SQLite runs `sql`: each step of its plan.
    fn plan(connection: &mut SqliteConnection, sql: &str) -> Vec<String> {
        let sql = sql.replace("?1", "x'00'").replace("?2", "'[[1,2]]'");
        let sql = sql.replace("?3", "1").replace("?4", "1").replace("?5", "1").replace("?6", "1");
        diesel::sql_query(format!("EXPLAIN QUERY PLAN {sql}"))
            .load::<Step>(connection)
            .expect("a plan")
            .into_iter()
            .map(|step| step.detail)
            .collect()
    }

    /// Every read of blocks is a walk or lookups of an index by its whole key, never a scan of
    /// a workspace's rows: the reads of a search stay the size of what it needs.
    #[test]
    fn reads_of_blocks_look_their_rows_up_by_key() {
        let mut connection = SqliteConnection::establish(":memory:").expect("a database");
        connection.run_pending_migrations(crate::connection::MIGRATIONS).expect("migrations");
        connection.batch_execute("ANALYZE;").expect("statistics");
        assert_eq!(
            plan(&mut connection, BLOCKS_SQL),
            ["SEARCH blocks USING INDEX blocks_recent (workspace_id=? AND max_ts>? AND max_ts<?)"]
        );
        assert_eq!(
            plan(&mut connection, AFTER_SQL),
            ["SEARCH blocks USING INDEX blocks_ids (workspace_id=? AND max_id>?)"]
        );
        for (sql, table) in [(BANDS_SQL, "block_bands AS b"), (GRANULES_SQL, "block_granules AS g")] {
            let steps = plan(&mut connection, sql);
            assert_eq!(steps.len(), 2, "{steps:?}");
            assert!(steps[0].starts_with("SCAN wanted VIRTUAL TABLE"), "{steps:?}");
            assert!(
                steps[1].starts_with(&format!("SEARCH {}", table.split(' ').next().unwrap_or_default()))
                    || steps[1].starts_with(&format!("SEARCH {}", table.rsplit(' ').next().unwrap_or_default())),
                "{steps:?}"
            );
            assert!(
                steps[1].ends_with("(workspace_id=? AND block_id=? AND granule=?)")
                    || steps[1].ends_with("(workspace_id=? AND block_id=? AND band=?)"),
                "{steps:?}"
            );
        }
    }
}
