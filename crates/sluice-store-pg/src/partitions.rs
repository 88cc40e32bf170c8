//! Which partitions `logs` has and which it needs.
//!
//! `logs` is range-partitioned by `ts` with no default partition, so every timestamp needs a
//! partition before its row can be written. Days near the present (from [`DAILY_BEHIND`]
//! days ago to [`DAILY_AHEAD`] days ahead) get one partition each: retention then drops a day
//! at a time, and a newest-first read walks the days in order. Older timestamps (docs/API.md
//! accepts them from 2000 on) share coarse partitions: blocks of [`COARSE_DAYS`] days up to
//! [`OLD_AFTER_DAYS`] back, of [`OLD_DAYS`] before that, all aligned on day 0 so the smaller
//! nest in the larger. A new partition never overlaps an existing one: it is cut short at its
//! neighbours.
//!
//! As days pass, partitions age into a coarser tier: housekeeping
//! ([`PgStore::consolidate_partitions`]) merges the partitions of every block that has aged
//! past its tier's start into one partition covering the block, and drops those retention
//! emptied. So however timestamps arrive and however long the store runs, `logs` has about
//! 128 daily partitions, 31 more of a block not yet merged, 22 of 32 days and one per 256 days
//! since 2000 (37 in 2026): under [`MAX_PARTITIONS`].
//!
//! Everything here is in whole UTC days (day 0 = 1970-01-01); bounds are day-aligned.
//!
//! The store reads the partitions from the catalogue and creates those missing under the
//! partition lock, one process at a time ([`PgStore::create_partitions_ahead`]); retention
//! drops them (`retention`).

use std::collections::{BTreeMap, BTreeSet};
use std::sync::PoisonError;

use diesel::prelude::*;
use diesel::result::Error as DieselError;
use diesel::sql_types::{BigInt, Text};
use diesel_async::{AsyncConnection, AsyncPgConnection, RunQueryDsl, SimpleAsyncConnection};
use sluice_model::calendar::MS_PER_DAY;
use sluice_store::StoreError;

use crate::PgStore;
use crate::error::from_diesel;

/// Days before today that get a partition of their own.
pub const DAILY_BEHIND: i64 = 120;
/// Days after today that get a partition of their own (also how far ahead the server creates
/// them, so the present never waits for DDL).
pub const DAILY_AHEAD: i64 = 7;
/// Width of a partition for timestamps outside the daily window, up to [`OLD_AFTER_DAYS`] back.
pub const COARSE_DAYS: i64 = 32;
/// Days before today past which partitions span [`OLD_DAYS`].
pub const OLD_AFTER_DAYS: i64 = 730;
/// Width of a partition older than [`OLD_AFTER_DAYS`] (eight blocks of [`COARSE_DAYS`]).
pub const OLD_DAYS: i64 = 256;
/// The most partitions `logs` may hold (issue 25); the tiers above keep well under it.
pub const MAX_PARTITIONS: usize = 400;

/// The UTC day of a timestamp.
pub fn day_of(timestamp_ms: i64) -> i64 {
    timestamp_ms.div_euclid(MS_PER_DAY)
}

/// Days `first..last` (end exclusive) of one partition.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub struct DayRange {
    /// First day in the partition.
    pub first: i64,
    /// First day after it.
    pub end: i64,
}

impl DayRange {
    /// The partition's lower bound in SQL: Unix ms, or `MINVALUE` past the range of `BIGINT`.
    pub fn lower_sql(&self) -> String {
        self.first.checked_mul(MS_PER_DAY).map_or_else(|| "MINVALUE".to_owned(), |ms| ms.to_string())
    }

    /// The partition's upper bound in SQL: Unix ms, or `MAXVALUE`.
    pub fn upper_sql(&self) -> String {
        self.end.checked_mul(MS_PER_DAY).map_or_else(|| "MAXVALUE".to_owned(), |ms| ms.to_string())
    }

    /// The first Unix ms after the range, saturating.
    pub fn end_ms(&self) -> i64 {
        self.end.saturating_mul(MS_PER_DAY)
    }

    /// The first Unix ms of the range, saturating.
    pub fn first_ms(&self) -> i64 {
        self.first.saturating_mul(MS_PER_DAY)
    }

    /// The table name: `logs_20261123` for one day, `logs_20250101_20250202` for a range
    /// (first day and first day after), days far outside the calendar as day numbers.
    pub fn table_name(&self) -> String {
        let date = |day: i64| {
            i32::try_from(day + 2_440_588)
                .ok()
                .and_then(|julian| time::Date::from_julian_day(julian).ok())
                .filter(|date| (0..=9999).contains(&date.year()))
                .map_or_else(
                    || if day < 0 { format!("m{}", day.unsigned_abs()) } else { format!("d{day}") },
                    |date| format!("{:04}{:02}{:02}", date.year(), u8::from(date.month()), date.day()),
                )
        };
        if self.end - self.first == 1 {
            format!("logs_{}", date(self.first))
        } else {
            format!("logs_{}_{}", date(self.first), date(self.end))
        }
    }
}

/// The partitions that exist, by first day.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Partitions {
    ranges: BTreeMap<i64, i64>,
}

impl Partitions {
    /// The partitions of `ranges`.
    pub fn new(ranges: impl IntoIterator<Item = DayRange>) -> Self {
        Partitions { ranges: ranges.into_iter().map(|range| (range.first, range.end)).collect() }
    }

    /// Records a partition that now exists.
    pub fn insert(&mut self, range: DayRange) {
        self.ranges.insert(range.first, range.end);
    }

    /// Forgets a dropped partition.
    pub fn remove(&mut self, range: DayRange) {
        self.ranges.remove(&range.first);
    }

    /// Every partition, oldest first.
    pub fn iter(&self) -> impl Iterator<Item = DayRange> + '_ {
        self.ranges.iter().map(|(&first, &end)| DayRange { first, end })
    }

    /// Whether a partition holds `day`.
    pub fn covers(&self, day: i64) -> bool {
        self.ranges.range(..=day).next_back().is_some_and(|(_, &end)| day < end)
    }

    /// The partition to create so that `day` has one (`today` decides daily or coarse), or
    /// `None` when one exists.
    pub fn needed(&self, day: i64, today: i64) -> Option<DayRange> {
        if self.covers(day) {
            return None;
        }
        let daily = (today.saturating_sub(DAILY_BEHIND)..=today.saturating_add(DAILY_AHEAD)).contains(&day);
        let width = match day {
            _ if daily => 1,
            _ if day < today.saturating_sub(OLD_AFTER_DAYS) => OLD_DAYS,
            _ => COARSE_DAYS,
        };
        let start = day.div_euclid(width) * width;
        let (mut first, mut end) = (start, start.saturating_add(width));
        // Cut short at the neighbours: the partition ending before `day` and the one after.
        if let Some((_, &before_end)) = self.ranges.range(..day).next_back() {
            first = first.max(before_end);
        }
        if let Some((&after_first, _)) = self.ranges.range(day + 1..).next() {
            end = end.min(after_first);
        }
        Some(DayRange { first, end })
    }

    /// The merges aging calls for: for each block whose tier it has aged into (a block of
    /// [`OLD_DAYS`] wholly older than [`OLD_AFTER_DAYS`], then one of [`COARSE_DAYS`] wholly
    /// older than the daily window) and that holds two partitions or more, the partitions inside
    /// it and the one to make of them: the whole block, cut short at the partitions around it.
    pub fn merges(&self, today: i64) -> Vec<(DayRange, Vec<DayRange>)> {
        let mut merges = Vec::new();
        let mut taken = BTreeSet::new();
        for (width, settled_before) in
            [(OLD_DAYS, today.saturating_sub(OLD_AFTER_DAYS)), (COARSE_DAYS, today.saturating_sub(DAILY_BEHIND))]
        {
            let mut blocks: BTreeMap<i64, Vec<DayRange>> = BTreeMap::new();
            for range in self.iter().filter(|range| !taken.contains(&range.first)) {
                let start = range.first.div_euclid(width) * width;
                let end = start.saturating_add(width);
                if range.end <= end && end <= settled_before {
                    blocks.entry(start).or_default().push(range);
                }
            }
            for (start, parts) in blocks.into_iter().filter(|(_, parts)| parts.len() > 1) {
                let (Some(first_part), Some(last_part)) = (<[DayRange]>::first(&parts), <[DayRange]>::last(&parts))
                else {
                    continue;
                };
                let before = self.ranges.range(..first_part.first).next_back().map_or(i64::MIN, |(_, &end)| end);
                let after = self.ranges.range(last_part.end..).next().map_or(i64::MAX, |(&first, _)| first);
                let target = DayRange { first: start.max(before), end: start.saturating_add(width).min(after) };
                taken.extend(parts.iter().map(|part| part.first));
                merges.push((target, parts));
            }
        }
        merges
    }

    /// The partitions whose every timestamp is before `cutoff_ms`.
    pub fn before(&self, cutoff_ms: i64) -> Vec<DayRange> {
        self.iter().filter(|range| range.end_ms() <= cutoff_ms).collect()
    }
}

/// Reads a partition's bounds from PostgreSQL's description of them
/// (`FOR VALUES FROM ('1700006400000') TO ('1700092800000')`, `MINVALUE`, `MAXVALUE`).
pub fn parse_bounds(description: &str) -> Option<DayRange> {
    let value = |after: &str| -> Option<i64> {
        let rest = description.split_once(after)?.1;
        let inner = rest.split_once(')')?.0.trim().trim_matches('\'');
        match inner {
            "MINVALUE" => Some(i64::MIN),
            "MAXVALUE" => Some(i64::MAX),
            number => number.parse().ok(),
        }
    };
    let (low, high) = (value("FROM (")?, value("TO (")?);
    let first = if low == i64::MIN { i64::MIN / MS_PER_DAY - 1 } else { day_of(low) };
    let end = if high == i64::MAX { i64::MAX / MS_PER_DAY + 1 } else { day_of(high) };
    Some(DayRange { first, end })
}

/// Advisory lock held while creating or dropping partitions (one process at a time).
const PARTITION_LOCK: i64 = 7_355_910;

/// One row of a partition listing.
#[derive(QueryableByName)]
pub(crate) struct PartitionRow {
    #[diesel(sql_type = Text)]
    pub(crate) bound: String,
}

/// The partitions `logs` has now.
pub(crate) async fn load_partitions(connection: &mut AsyncPgConnection) -> Result<Partitions, DieselError> {
    let rows: Vec<PartitionRow> = diesel::sql_query(
        "SELECT pg_get_expr(c.relpartbound, c.oid) AS bound FROM pg_inherits i \
         JOIN pg_class c ON c.oid = i.inhrelid WHERE i.inhparent = 'logs'::regclass",
    )
    .load(connection)
    .await?;
    Ok(Partitions::new(rows.iter().filter_map(|row| parse_bounds(&row.bound))))
}

/// Takes the partition lock for the rest of the transaction (one process creates or drops
/// partitions at a time) and reads the partitions `logs` has under it.
pub(crate) async fn lock_partitions(connection: &mut AsyncPgConnection) -> Result<Partitions, DieselError> {
    diesel::sql_query("SELECT pg_advisory_xact_lock($1)").bind::<BigInt, _>(PARTITION_LOCK).execute(connection).await?;
    load_partitions(connection).await
}

impl PgStore {
    /// The day today is, by the store's clock.
    pub(crate) fn today(&self) -> i64 {
        day_of((self.clock)())
    }

    /// Creates the partitions of yesterday, today and the next [`DAILY_AHEAD`] days where
    /// missing, so logs of the present never wait for one. Run at start and by the
    /// retention sweep.
    pub async fn create_partitions_ahead(&self) -> Result<(), StoreError> {
        self.with_deadline(async move {
            let today = self.today();
            self.ensure_partitions((today - 1..=today + DAILY_AHEAD).collect(), today).await
        })
        .await
    }

    /// Every partition of `logs`, oldest first, as the Unix ms ranges they hold.
    pub async fn partitions(&self) -> Result<Vec<(i64, i64)>, StoreError> {
        self.with_deadline(async move {
            let mut connection = self.connection().await?;
            let partitions = load_partitions(&mut connection).await.map_err(from_diesel)?;
            Ok(partitions.iter().map(|range| (range.first_ms(), range.end_ms())).collect())
        })
        .await
    }

    /// Makes sure a partition holds each of `days`, creating what is missing under the
    /// partition lock (after reading the catalogue again, since another process may have
    /// made some).
    pub(crate) async fn ensure_partitions(&self, days: BTreeSet<i64>, today: i64) -> Result<(), StoreError> {
        let missing = {
            let known = self.partitions.lock().unwrap_or_else(PoisonError::into_inner);
            days.iter().any(|day| !known.covers(*day))
        };
        if !missing {
            return Ok(());
        }
        let mut connection = self.connection().await?;
        let partitions = (*connection)
            .transaction::<_, DieselError, _>(async move |connection: &mut AsyncPgConnection| {
                let mut partitions = lock_partitions(connection).await?;
                for day in days {
                    if let Some(range) = partitions.needed(day, today) {
                        connection
                            .batch_execute(&format!(
                                "CREATE TABLE IF NOT EXISTS {} PARTITION OF logs FOR VALUES FROM ({}) TO ({})",
                                range.table_name(),
                                range.lower_sql(),
                                range.upper_sql()
                            ))
                            .await?;
                        partitions.insert(range);
                    }
                }
                Ok(partitions)
            })
            .await
            .map_err(from_diesel)?;
        *self.partitions.lock().unwrap_or_else(PoisonError::into_inner) = partitions;
        Ok(())
    }

    /// Forgets what this process knows of the partitions (after an insert found one gone).
    pub(crate) fn forget_partitions(&self) {
        *self.partitions.lock().unwrap_or_else(PoisonError::into_inner) = Partitions::default();
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const TODAY: i64 = 20_415; // 2025-11-23

    #[test]
    fn days_near_today_get_their_own_partition() {
        let partitions = Partitions::default();
        assert_eq!(partitions.needed(TODAY, TODAY), Some(DayRange { first: TODAY, end: TODAY + 1 }));
        let behind = TODAY - DAILY_BEHIND;
        assert_eq!(partitions.needed(behind, TODAY), Some(DayRange { first: behind, end: behind + 1 }));
        let ahead = TODAY + DAILY_AHEAD;
        assert_eq!(partitions.needed(ahead, TODAY), Some(DayRange { first: ahead, end: ahead + 1 }));
    }

    #[test]
    fn far_days_share_coarse_partitions_cut_at_their_neighbours() {
        let mut partitions = Partitions::default();
        let far = TODAY - 300;
        let coarse = partitions.needed(far, TODAY).expect("needed");
        let start = far.div_euclid(COARSE_DAYS) * COARSE_DAYS;
        assert_eq!(coarse, DayRange { first: start, end: start + COARSE_DAYS });
        partitions.insert(coarse);
        assert_eq!(partitions.needed(start + COARSE_DAYS - 1, TODAY), None);
        // A coarse block reaching into the daily window stops at the daily partitions there.
        let edge = TODAY - DAILY_BEHIND;
        partitions.insert(DayRange { first: edge, end: edge + 1 });
        let before = partitions.needed(edge - 1, TODAY).expect("needed");
        assert!(before.end <= edge && before.first < edge, "{before:?}");
        partitions.insert(before);
        // A day inside the window already covered by a coarse block uses it.
        assert_eq!(partitions.needed(edge - 1, TODAY), None);
    }

    #[test]
    fn needed_ranges_never_overlap_whatever_the_order() {
        // Scattered days, near and far, in a fixed pseudo-random order.
        let mut state = 0x2545_f491_4f6c_dd1d_u64;
        let mut partitions = Partitions::default();
        for _ in 0..2_000 {
            state ^= state << 13;
            state ^= state >> 7;
            state ^= state << 17;
            let day = TODAY - 400 + (state % 800) as i64;
            if let Some(range) = partitions.needed(day, TODAY) {
                assert!(range.first <= day && day < range.end, "{range:?} misses {day}");
                let overlapping = partitions.iter().any(|other| other.first < range.end && range.first < other.end);
                assert!(!overlapping, "{range:?} overlaps");
                partitions.insert(range);
            }
            assert!(partitions.covers(day));
        }
    }

    #[test]
    fn extreme_timestamps_have_partitions_and_sql_bounds() {
        let partitions = Partitions::default();
        for timestamp in [i64::MIN, i64::MAX, 0, -1] {
            let day = day_of(timestamp);
            let range = partitions.needed(day, TODAY).expect("needed");
            assert!(range.first <= day && day < range.end);
            let (low, high) = (range.lower_sql(), range.upper_sql());
            assert!(low == "MINVALUE" || low.parse::<i64>().is_ok_and(|ms| ms <= timestamp), "{low}");
            assert!(high == "MAXVALUE" || high.parse::<i64>().is_ok_and(|ms| ms > timestamp), "{high}");
        }
    }

    #[test]
    fn days_long_past_share_blocks_of_256_days() {
        let partitions = Partitions::default();
        let old = TODAY - OLD_AFTER_DAYS - 1;
        let range = partitions.needed(old, TODAY).expect("needed");
        assert_eq!((range.end - range.first, range.first % OLD_DAYS), (OLD_DAYS, 0), "{range:?}");
        let mid = TODAY - DAILY_BEHIND - 1;
        let range = partitions.needed(mid, TODAY).expect("needed");
        let start = mid.div_euclid(COARSE_DAYS) * COARSE_DAYS;
        assert_eq!(range, DayRange { first: start, end: start + COARSE_DAYS });
    }

    /// Daily partitions made over 400 days, then seen 800 days later: every block that aged
    /// past its tier's start merges into one partition covering it, none overlap, every day
    /// stays covered, and fewer than 40 are left.
    #[test]
    fn aged_partitions_merge_by_block_and_keep_every_day_covered() {
        let mut partitions = Partitions::default();
        for day in TODAY - 400..=TODAY {
            if let Some(range) = partitions.needed(day, day) {
                partitions.insert(range);
            }
        }
        assert!(partitions.iter().count() > 128);
        let later = TODAY + 800;
        let merges = partitions.merges(later);
        for (target, parts) in &merges {
            assert!(parts.len() > 1 && parts.iter().all(|part| target.first <= part.first && part.end <= target.end));
            for part in parts {
                partitions.remove(*part);
            }
            partitions.insert(*target);
        }
        let ranges: Vec<DayRange> = partitions.iter().collect();
        assert!(ranges.windows(2).all(|pair| pair[0].end <= pair[1].first), "overlap: {ranges:?}");
        assert!((TODAY - 400..=TODAY).all(|day| partitions.covers(day)));
        assert!(ranges.len() < 40, "{} partitions: {ranges:?}", ranges.len());
        assert!(partitions.merges(later).is_empty(), "merging is done in one pass");
    }

    #[test]
    fn names_and_bounds_read_back() {
        let day = DayRange { first: TODAY, end: TODAY + 1 };
        assert_eq!(day.table_name(), "logs_20251123");
        assert_eq!(DayRange { first: 96, end: 128 }.table_name(), "logs_19700407_19700509");
        assert_eq!(DayRange { first: -800_000_000, end: -799_999_968 }.table_name(), "logs_m800000000_m799999968");
        let description = format!("FOR VALUES FROM ('{}') TO ('{}')", day.lower_sql(), day.upper_sql());
        assert_eq!(parse_bounds(&description), Some(day));
        let open = parse_bounds("FOR VALUES FROM (MINVALUE) TO ('86400000')").expect("bounds");
        assert_eq!((open.end, open.lower_sql()), (1, "MINVALUE".to_owned()));
    }
}
