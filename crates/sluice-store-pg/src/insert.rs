//! Writing logs: a group of batches in one transaction, each workspace's logs as one block
//! (`crate::blocks`), with their counters, their flows and their workspaces' monthly usage,
//! checked against the quota.

use std::collections::BTreeMap;
use std::sync::{Mutex, PoisonError};
use std::time::{Duration, Instant};

use async_trait::async_trait;
use diesel::result::Error as DieselError;
use diesel::sql_types::BigInt;
use diesel_async::{AsyncConnection, AsyncPgConnection, RunQueryDsl};
use sluice_model::{Log, WorkspaceId};
use sluice_store::blockstore::BlockRows;
use sluice_store::flows::FlowDeltas;
use sluice_store::rollups::{BatchCounts, RollupDeltas};
use sluice_store::{GroupOptions, LogWrites, StoreError, WriteBatch};
use uuid::Uuid;

use crate::PgStore;
use crate::blocks::{encode_off_runtime, write_blocks};
use crate::error::{conflicted, from_diesel};
use crate::flows::apply_flow_deltas;
use crate::rollups::apply_deltas;
use crate::text::encode;
use sluice_store_diesel::raw::Total;

/// A group commit that takes this long is told at debug level, with the time of each of its
/// phases (`SLUICE_LOG=sluice_store_pg::insert=debug`): what a slow minute of ingest waited on.
const SLOW_GROUP: Duration = Duration::from_millis(100);

/// SQL functions of the migrations (their own module: `Uuid` here is the SQL type).
mod functions {
    use diesel::sql_types::{BigInt, SmallInt, Uuid};

    diesel::define_sql_function! {
        /// The quota check (migrations `plans`, `group_commit` and `counter_slots`): counts `n`
        /// logs in the workspace's usage of `in_month`, in `in_slot` when it has no quota;
        /// false, with nothing counted, when that passes its quota. A function call is a
        /// cached prepared statement, one round trip, planned once a session.
        fn sluice_count_usage(ws: Uuid, in_month: BigInt, n: BigInt, in_slot: SmallInt) -> Bool;
    }
}

use functions::sluice_count_usage;

/// How many times a group commit PostgreSQL rolled back to break a deadlock is tried again
/// before its callers are answered with the error.
const CONFLICT_RETRIES: u32 = 3;

/// Counts a batch's logs in its workspace's usage of each month (`sluice_count_usage`); false,
/// with nothing counted, when that would pass the quota. A batch of one month (nearly all) is
/// one call that counts nothing when it refuses; one that spans months counts them inside a
/// savepoint, undone when a later month refuses.
async fn count_usage(
    connection: &mut AsyncPgConnection,
    workspace: Uuid,
    months: &[(i64, i64)],
    slot: i16,
) -> Result<bool, DieselError> {
    if let [(month, count)] = months {
        return diesel::select(sluice_count_usage(workspace, *month, *count, slot)).get_result(connection).await;
    }
    let counted = connection
        .transaction::<_, DieselError, _>(async move |connection: &mut AsyncPgConnection| {
            for (month, count) in months {
                let within: bool =
                    diesel::select(sluice_count_usage(workspace, *month, *count, slot)).get_result(connection).await?;
                if !within {
                    return Err(DieselError::RollbackTransaction);
                }
            }
            Ok(())
        })
        .await;
    match counted {
        Ok(()) => Ok(true),
        Err(DieselError::RollbackTransaction) => Ok(false),
        Err(error) => Err(error),
    }
}

/// A row of [`count_usages`]' statement: a batch's place in the order (from 1) and whether
/// it was counted.
#[derive(diesel::QueryableByName)]
struct Counted {
    #[diesel(sql_type = BigInt)]
    position: i64,
    #[diesel(sql_type = diesel::sql_types::Bool)]
    within: bool,
}

/// Counts the batches of `group` named by `order`, in that order ([`count_usage`] each), and
/// returns those refused, in that order. When every batch is of one month (nearly always), in
/// one statement: `sluice_count_usage` called row by row over the batches as `unnest` gives
/// them, which is the order a call a batch would take, in one round trip instead of one a
/// batch (a group of 5,000 logs is 50 batches of 100, and PostgreSQL waited for the next
/// call more often than for anything else in the group's transaction: docs/PERFORMANCE.md,
/// issue 24).
async fn count_usages(
    connection: &mut AsyncPgConnection,
    group: &[WriteBatch],
    prepared: &[BatchCounts],
    order: &[usize],
    slot: i16,
) -> Result<Vec<usize>, DieselError> {
    use diesel::sql_types::{Array, SmallInt, Uuid as SqlUuid};

    let mut refusals = Vec::new();
    let one_month: Option<Vec<(Uuid, i64, i64)>> = order
        .iter()
        .map(|&index| match prepared[index].months.as_slice() {
            [(month, count)] => Some((*group[index].workspace.as_uuid(), *month, *count)),
            _ => None,
        })
        .collect();
    match one_month {
        Some(batches) if batches.len() > 1 => {
            let workspaces: Vec<Uuid> = batches.iter().map(|batch| batch.0).collect();
            let months: Vec<i64> = batches.iter().map(|batch| batch.1).collect();
            let counts: Vec<i64> = batches.iter().map(|batch| batch.2).collect();
            let mut counted: Vec<Counted> = diesel::sql_query(
                "SELECT u.i AS position, sluice_count_usage(u.w, u.m, u.n, $4) AS within \
                 FROM unnest($1::uuid[], $2::int8[], $3::int8[]) WITH ORDINALITY AS u(w, m, n, i)",
            )
            .bind::<Array<SqlUuid>, _>(workspaces)
            .bind::<Array<BigInt>, _>(months)
            .bind::<Array<BigInt>, _>(counts)
            .bind::<SmallInt, _>(slot)
            .load(connection)
            .await?;
            counted.sort_by_key(|row| row.position);
            if counted.len() != order.len() {
                return Err(DieselError::DeserializationError(
                    format!("the usage count answered {} rows for {} batches", counted.len(), order.len()).into(),
                ));
            }
            for (row, &index) in counted.iter().zip(order) {
                if !row.within {
                    refusals.push(index);
                }
            }
        }
        _ => {
            for &index in order {
                if !count_usage(connection, *group[index].workspace.as_uuid(), &prepared[index].months, slot).await? {
                    refusals.push(index);
                }
            }
        }
    }
    Ok(refusals)
}

/// Each workspace's logs of the batches `kept` of `group`, encoded into blocks off the
/// runtime's threads.
async fn encode_blocks(group: &[WriteBatch], kept: &[usize]) -> Result<Vec<(Uuid, Vec<BlockRows>)>, StoreError> {
    let mut by_workspace: BTreeMap<Uuid, Vec<Log>> = BTreeMap::new();
    for &index in kept {
        by_workspace.entry(*group[index].workspace.as_uuid()).or_default().extend(group[index].logs.iter().cloned());
    }
    encode_off_runtime("encoding a group's blocks", move || {
        by_workspace
            .into_iter()
            .filter(|(_, logs)| !logs.is_empty())
            .map(|(workspace, logs)| Ok((workspace, BlockRows::encode(&logs)?)))
            .collect()
    })
    .await
}

impl PgStore {
    /// One try at writing a group, less the batches marked `refused`, in one transaction.
    /// An empty answer: committed. Otherwise the batches that would pass their workspace's
    /// quota (every one of them: each check that refuses counts nothing, so the rest are
    /// checked as they would be without it), and the transaction was rolled back, nothing
    /// stored.
    ///
    /// The blocks go in first; the rows every group of a workspace updates (its monthly usage,
    /// its counters) are touched last, in one order for every writer (workspace id, then the
    /// counters' keys), so concurrent groups hold those locks only around their commit and
    /// never wait on each other in a cycle. Counting first would hold the usage row for the
    /// whole insert and let one writer of a workspace run at a time.
    async fn insert_group_once(
        &self,
        group: &[WriteBatch],
        prepared: &[BatchCounts],
        refused: &[bool],
        slot: i16,
    ) -> Result<Vec<usize>, Failed> {
        // Each workspace's block, worked out before a connection is taken.
        let started = Instant::now();
        let mut kept: Vec<usize> = (0..group.len()).filter(|&index| !refused[index]).collect();
        kept.sort_by_key(|&index| group[index].workspace);
        let blocks = encode_blocks(group, &kept).await.map_err(Failed::Store)?;
        let prepared_at = Instant::now();
        let mut connection = self.connection().await.map_err(Failed::Store)?;
        let connected_at = Instant::now();
        let over = Mutex::new(Vec::new());
        let over_quota = &over;
        let now_ms = self.clock.now_ms();
        let heads = &self.heads;
        let written = (*connection)
            .transaction::<_, DieselError, _>(async move |connection: &mut AsyncPgConnection| {
                for (workspace, blocks) in &blocks {
                    write_blocks(connection, *workspace, blocks, now_ms).await?;
                }
                let inserted = Instant::now();
                let order = kept;
                let refusals = count_usages(connection, group, prepared, &order, slot).await?;
                if !refusals.is_empty() {
                    *over_quota.lock().unwrap_or_else(PoisonError::into_inner) = refusals;
                    return Err(DieselError::RollbackTransaction);
                }
                let mut deltas: BTreeMap<Uuid, RollupDeltas> = BTreeMap::new();
                for &index in &order {
                    deltas.entry(*group[index].workspace.as_uuid()).or_default().absorb(&prepared[index].deltas);
                }
                for (workspace, deltas) in &deltas {
                    apply_deltas(connection, *workspace, deltas, false, slot).await?;
                }
                // The flows the logs name, last: every writer locks flow rows after its
                // counters, in one order (workspace, then flow id).
                let mut flows: BTreeMap<Uuid, FlowDeltas> = BTreeMap::new();
                for &index in &order {
                    if !prepared[index].flows.is_empty() {
                        flows.entry(*group[index].workspace.as_uuid()).or_default().absorb(&prepared[index].flows);
                    }
                }
                for (workspace, flows) in &flows {
                    apply_flow_deltas(connection, heads, *workspace, flows).await?;
                }
                Ok([inserted, Instant::now()])
            })
            .await;
        let finished = Instant::now();
        if finished - started >= SLOW_GROUP {
            let ms = |from: Instant, to: Instant| to.saturating_duration_since(from).as_secs_f64() * 1e3;
            let logs = group.iter().map(|batch| batch.logs.len()).sum::<usize>();
            let (encode_ms, connection_ms) = (ms(started, prepared_at), ms(prepared_at, connected_at));
            match &written {
                Ok([inserted, counted]) => tracing::debug!(
                    logs,
                    encode_ms,
                    connection_ms,
                    blocks_ms = ms(connected_at, *inserted),
                    counters_ms = ms(*inserted, *counted),
                    commit_ms = ms(*counted, finished),
                    ok = true,
                    "a slow group commit"
                ),
                Err(_) => tracing::debug!(
                    logs,
                    encode_ms,
                    connection_ms,
                    transaction_ms = ms(connected_at, finished),
                    ok = false,
                    "a slow group commit"
                ),
            }
        }
        let over = over.into_inner().unwrap_or_else(PoisonError::into_inner);
        match written {
            Ok(_) => Ok(Vec::new()),
            Err(DieselError::RollbackTransaction) if !over.is_empty() => Ok(over),
            Err(error) => Err(Failed::Database(error)),
        }
    }
}

/// What a try at a group failed on: the database (a deadlock is tried again), or the rest.
enum Failed {
    Database(DieselError),
    Store(StoreError),
}

#[async_trait]
impl LogWrites for PgStore {
    fn group_options(&self) -> GroupOptions {
        self.group
    }

    async fn insert_logs(&self, workspace: WorkspaceId, batch: &[Log]) -> Result<(), StoreError> {
        let group = [WriteBatch { workspace, logs: batch.to_vec() }];
        sluice_store::only_answer(self.insert_group(&group).await?)
    }

    async fn insert_group(&self, group: &[WriteBatch]) -> Result<Vec<Result<(), StoreError>>, StoreError> {
        let written = self
            .with_deadline(async move {
                // What each batch counts, worked out before the transaction starts. Counters keep
                // source and dataset encoded (`crate::text`), as stats filters compare them.
                let prepared: Vec<BatchCounts> =
                    group.iter().map(|batch| BatchCounts::of(batch, |text| encode(text).into_owned())).collect();
                // Each try either commits or finds the batches over their quota (rarely: a
                // workspace at the end of its quota), which the next try leaves out: two tries,
                // unless another writer used up a quota in between.
                let mut refused = vec![false; group.len()];
                let mut conflicts = 0;
                let slot = self.slots.take();
                loop {
                    match self.insert_group_once(group, &prepared, &refused, slot.number()).await {
                        Ok(over) if over.is_empty() => break,
                        Ok(over) => over.into_iter().for_each(|index| refused[index] = true),
                        // Rolled back to break a deadlock (or a serialization conflict): nothing
                        // was stored, so the same try again, a few times.
                        Err(Failed::Database(error)) if conflicted(&error) && conflicts < CONFLICT_RETRIES => {
                            conflicts += 1
                        }
                        Err(Failed::Database(error)) => return Err(from_diesel(error)),
                        Err(Failed::Store(error)) => return Err(error),
                    }
                }
                Ok(refused
                    .iter()
                    .map(|&refused| if refused { Err(StoreError::QuotaExceeded) } else { Ok(()) })
                    .collect())
            })
            .await;
        self.full.note(&written);
        if written.is_ok() {
            self.after_insert().await;
        }
        written
    }

    async fn monthly_usage(&self, workspace: WorkspaceId, month_ms: i64) -> Result<u64, StoreError> {
        self.with_deadline(async move {
            let mut connection = self.connection().await?;
            // The sum of the month's slots.
            let total: Vec<Total> = diesel::sql_query(
                "SELECT SUM(logs)::int8 AS total FROM usage_monthly WHERE workspace_id = $1 AND month = $2",
            )
            .bind::<diesel::sql_types::Uuid, _>(*workspace.as_uuid())
            .bind::<BigInt, _>(month_ms)
            .load(&mut connection)
            .await
            .map_err(from_diesel)?;
            let logs = total.into_iter().next().and_then(|row| row.total);
            Ok(logs.map_or(0, |logs| u64::try_from(logs).unwrap_or(0)))
        })
        .await
    }
}
