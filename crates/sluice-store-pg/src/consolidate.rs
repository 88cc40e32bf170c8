//! Housekeeping of `logs`' partitions, so their number stays bounded however long the store
//! runs: those retention emptied are dropped, and those that aged into a coarser tier are
//! merged, a block at a time (`partitions::Partitions::merges`).
//!
//! A merge copies the block's partitions into a new table made like `logs` (its indexes
//! included, so attaching builds none) while they are locked against writes only (`SHARE`:
//! reads go on), then, in the same transaction, drops them and attaches the new table with a
//! `CHECK` constraint that spares the attach its scan. Other processes see the old partitions
//! or the new one, never neither; an insert for those days waits for the commit, then goes to
//! the new partition. One merge is one transaction, its statements free of the call timeout
//! (a block of old logs can take minutes to copy), under the partition lock.

use std::collections::BTreeMap;
use std::sync::PoisonError;
use std::time::Duration;

use diesel::QueryableByName;
use diesel::result::Error as DieselError;
use diesel::sql_types::{Bool, Text};
use diesel_async::{AsyncConnection, AsyncPgConnection, RunQueryDsl, SimpleAsyncConnection};
use sluice_store::StoreError;

use crate::PgStore;
use crate::error::from_diesel;
use crate::partitions::{DayRange, Partitions, lock_partitions, parse_bounds};

/// How long one housekeeping pass may take in all.
const HOUSEKEEPING_TIMEOUT: Duration = Duration::from_secs(1_800);

/// A partition's table name and its bounds as PostgreSQL describes them.
#[derive(QueryableByName)]
struct Named {
    #[diesel(sql_type = Text)]
    name: String,
    #[diesel(sql_type = Text)]
    bound: String,
}

#[derive(QueryableByName)]
struct Found {
    #[diesel(sql_type = Bool)]
    found: bool,
}

/// Every partition's table name, by its first day.
async fn names(connection: &mut AsyncPgConnection) -> Result<BTreeMap<i64, String>, DieselError> {
    let rows: Vec<Named> = diesel::sql_query(
        "SELECT c.relname::text AS name, pg_get_expr(c.relpartbound, c.oid) AS bound FROM pg_inherits i \
         JOIN pg_class c ON c.oid = i.inhrelid WHERE i.inhparent = 'logs'::regclass",
    )
    .load(connection)
    .await?;
    Ok(rows.into_iter().filter_map(|row| Some((parse_bounds(&row.bound)?.first, row.name))).collect())
}

/// `ts` within `range`, as a `CHECK` (an open end, `MINVALUE`/`MAXVALUE`, checks nothing).
fn span_check(range: &DayRange) -> String {
    let mut conditions = Vec::new();
    if let Ok(first) = range.lower_sql().parse::<i64>() {
        conditions.push(format!("ts >= {first}"));
    }
    if let Ok(end) = range.upper_sql().parse::<i64>() {
        conditions.push(format!("ts < {end}"));
    }
    if conditions.is_empty() { "true".to_owned() } else { conditions.join(" AND ") }
}

/// Merges `parts` into one partition covering `target`, in the caller's transaction.
async fn merge(
    connection: &mut AsyncPgConnection,
    target: &DayRange,
    parts: &[DayRange],
    names: &BTreeMap<i64, String>,
) -> Result<(), DieselError> {
    let name = target.table_name();
    let building = format!("{name}_merging");
    connection
        .batch_execute(&format!(
            "CREATE TABLE \"{building}\" (LIKE logs INCLUDING DEFAULTS INCLUDING CONSTRAINTS INCLUDING INDEXES); \
             ALTER TABLE \"{building}\" ADD CONSTRAINT \"{building}_span\" CHECK ({})",
            span_check(target)
        ))
        .await?;
    for part in parts {
        let Some(part) = names.get(&part.first) else { continue };
        connection
            .batch_execute(&format!(
                "LOCK TABLE \"{part}\" IN SHARE MODE; INSERT INTO \"{building}\" SELECT * FROM \"{part}\""
            ))
            .await?;
    }
    for part in parts {
        if let Some(part) = names.get(&part.first) {
            connection.batch_execute(&format!("DROP TABLE \"{part}\"")).await?;
        }
    }
    connection
        .batch_execute(&format!(
            "ALTER TABLE logs ATTACH PARTITION \"{building}\" FOR VALUES FROM ({}) TO ({}); \
             ALTER TABLE \"{building}\" DROP CONSTRAINT \"{building}_span\"; \
             ALTER TABLE \"{building}\" RENAME TO \"{name}\"",
            target.lower_sql(),
            target.upper_sql()
        ))
        .await
}

impl PgStore {
    /// Drops the partitions retention emptied (but those of yesterday on, which the present
    /// writes to) and merges those that aged into a coarser tier, a block a transaction.
    /// Returns how many were dropped and how many merges were made. Run by the retention sweep.
    pub async fn consolidate_partitions(&self) -> Result<(usize, usize), StoreError> {
        let pass = async {
            let today = self.today();
            let dropped = self.drop_emptied(today).await?;
            let mut merged = 0;
            while self.merge_one(today).await? {
                merged += 1;
            }
            Ok((dropped, merged))
        };
        tokio::time::timeout(HOUSEKEEPING_TIMEOUT, pass).await.unwrap_or_else(|_| {
            Err(StoreError::Timeout(format!("partition housekeeping past {HOUSEKEEPING_TIMEOUT:?}")))
        })
    }

    /// Drops the empty partitions that end before yesterday; each is locked against writes
    /// before it is found empty, so no row can arrive in between.
    async fn drop_emptied(&self, today: i64) -> Result<usize, StoreError> {
        let mut connection = self.connection().await?;
        let (dropped, partitions) = (*connection)
            .transaction::<_, DieselError, _>(async move |connection: &mut AsyncPgConnection| {
                let mut partitions = lock_partitions(connection).await?;
                connection.batch_execute("SET LOCAL statement_timeout = 0").await?;
                let names = names(connection).await?;
                let old: Vec<DayRange> = partitions.iter().filter(|range| range.end < today).collect();
                let mut dropped = 0;
                for range in old {
                    let Some(name) = names.get(&range.first) else { continue };
                    connection.batch_execute(&format!("LOCK TABLE \"{name}\" IN SHARE MODE")).await?;
                    let found: Vec<Found> =
                        diesel::sql_query(format!("SELECT EXISTS (SELECT 1 FROM \"{name}\") AS found"))
                            .load(connection)
                            .await?;
                    if <[Found]>::first(&found).is_some_and(|row| !row.found) {
                        connection.batch_execute(&format!("DROP TABLE \"{name}\"")).await?;
                        partitions.remove(range);
                        dropped += 1;
                    }
                }
                Ok((dropped, partitions))
            })
            .await
            .map_err(from_diesel)?;
        self.remember(partitions);
        Ok(dropped)
    }

    /// Makes the first merge aging calls for, if any; true when it made one.
    async fn merge_one(&self, today: i64) -> Result<bool, StoreError> {
        let mut connection = self.connection().await?;
        let (merged, partitions) = (*connection)
            .transaction::<_, DieselError, _>(async move |connection: &mut AsyncPgConnection| {
                let mut partitions = lock_partitions(connection).await?;
                let Some((target, parts)) = partitions.merges(today).into_iter().next() else {
                    return Ok((false, partitions));
                };
                connection.batch_execute("SET LOCAL statement_timeout = 0").await?;
                let names = names(connection).await?;
                merge(connection, &target, &parts, &names).await?;
                for part in parts {
                    partitions.remove(part);
                }
                partitions.insert(target);
                Ok((true, partitions))
            })
            .await
            .map_err(from_diesel)?;
        self.remember(partitions);
        Ok(merged)
    }

    /// What this process knows of the partitions, now.
    fn remember(&self, partitions: Partitions) {
        *self.partitions.lock().unwrap_or_else(PoisonError::into_inner) = partitions;
    }
}
