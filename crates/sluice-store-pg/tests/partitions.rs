//! Bounded partitions (issue 25) on a real PostgreSQL server: whatever timestamps arrive in
//! the accepted range, `logs` holds at most `MAX_PARTITIONS` partitions; as days pass,
//! housekeeping merges the partitions that aged into a coarser tier without a log lost or
//! moved in any answer; and it drops the partitions retention emptied.

use std::sync::Arc;
use std::sync::atomic::{AtomicI64, Ordering};

use sluice_model::calendar::MS_PER_DAY;
use sluice_model::{Log, Plan, Workspace, WorkspaceId};
use sluice_store::conformance::log;
use sluice_store::prelude::*;
use sluice_store::{LogFilter, Page};
use sluice_store_pg::testing::TestDatabase;
use sluice_store_pg::{MAX_PARTITIONS, PgOptions, PgStore};

/// 2026-11-22T00:00:00Z.
const NOW: i64 = 1_795_305_600_000;
/// 2000-01-01T00:00:00Z, the earliest timestamp accepted.
const EARLIEST: i64 = 946_684_800_000;

/// A store whose clock the test moves.
async fn store(clock: &Arc<AtomicI64>) -> (PgStore, TestDatabase) {
    let database = TestDatabase::new("sluice_partitions").await;
    let clock = clock.clone();
    let options =
        PgOptions { pool_size: 2, clock: Arc::new(move || clock.load(Ordering::SeqCst)), ..PgOptions::default() };
    let store = PgStore::connect(database.url(), &options).await.expect("connect");
    (store, database)
}

/// Every log of `workspace`, newest first, as (timestamp, message).
async fn everything(store: &PgStore, workspace: WorkspaceId) -> Vec<(i64, String)> {
    let mut all = Vec::new();
    loop {
        let page = Page { limit: 1000, offset: all.len() as u64 };
        let got = store.list_logs(workspace, &LogFilter::default(), page).await.expect("list");
        all.extend(got.logs.iter().map(|log| (log.entry.timestamp, log.entry.message.clone())));
        if !got.has_more {
            return all;
        }
    }
}

async fn insert(store: &PgStore, workspace: WorkspaceId, logs: &[Log]) {
    for batch in logs.chunks(100) {
        store.insert_logs(workspace, batch).await.expect("insert");
    }
}

/// One log every other day from 2000-01-01 to the clock's day after tomorrow, in batches that
/// each span 200 days: fewer partitions than the bound, and every log stored.
#[tokio::test]
async fn timestamps_across_the_whole_accepted_range_make_a_bounded_number_of_partitions() {
    let clock = Arc::new(AtomicI64::new(NOW));
    let (store, _database) = store(&clock).await;
    let workspace = Workspace::new("w", Plan::Enterprise, NOW);
    store.create_workspace(&workspace).await.expect("workspace");
    let days = (NOW + MS_PER_DAY - EARLIEST) / MS_PER_DAY;
    let logs: Vec<Log> =
        (0..=days).step_by(2).map(|day| log(&format!("day {day}"), EARLIEST + day * MS_PER_DAY + 3_600_000)).collect();
    insert(&store, workspace.id, &logs).await;
    let partitions = store.partitions().await.expect("partitions");
    assert!(partitions.len() <= MAX_PARTITIONS, "{} partitions", partitions.len());
    assert!(partitions.len() < 250, "{} partitions: the tiers keep well under the bound", partitions.len());
    assert_eq!(everything(&store, workspace.id).await.len(), logs.len());
}

/// A log a day for 200 days, seen 800 days later: housekeeping merges the aged partitions
/// (fewer than 20 left), every answer is the same before and after, and a log of an old day
/// goes into the merged partition. Then retention deletes everything: the partitions it
/// emptied go, all but those of yesterday on.
#[tokio::test]
async fn aged_partitions_merge_without_a_log_lost_and_emptied_ones_go() {
    let clock = Arc::new(AtomicI64::new(NOW));
    let (store, _database) = store(&clock).await;
    let workspace = Workspace::new("w", Plan::Enterprise, NOW);
    store.create_workspace(&workspace).await.expect("workspace");
    let logs: Vec<Log> = (0..200).map(|day| log(&format!("day {day}"), NOW - day * MS_PER_DAY + 1_000)).collect();
    insert(&store, workspace.id, &logs).await;
    let before = everything(&store, workspace.id).await;
    let made = store.partitions().await.expect("partitions").len();
    assert!(made > 100, "{made} partitions: the days of the daily window each have one");

    clock.store(NOW + 800 * MS_PER_DAY, Ordering::SeqCst);
    let (dropped, merged) = store.consolidate_partitions().await.expect("housekeeping");
    // The days made ahead at the first clock held nothing: those go (logs are checked below).
    assert_eq!(dropped, sluice_store_pg::DAILY_AHEAD as usize, "the empty days made ahead");
    assert!(merged > 0);
    let partitions = store.partitions().await.expect("partitions");
    let old: Vec<&(i64, i64)> = partitions.iter().filter(|(_, end)| *end <= NOW + MS_PER_DAY).collect();
    assert!(old.len() < 20, "{} partitions left of the 200 days: {old:?}", old.len());
    assert!(partitions.windows(2).all(|pair| pair[0].1 <= pair[1].0), "overlap: {partitions:?}");
    assert_eq!(everything(&store, workspace.id).await, before, "every log, in the same order");
    let one = store.get_log(workspace.id, logs[150].id).await.expect("get");
    assert_eq!(one.map(|log| log.entry.message), Some("day 150".to_owned()));

    // A late log of an old day lands in a merged partition: none is made for it.
    insert(&store, workspace.id, &[log("late", NOW - 150 * MS_PER_DAY + 5_000)]).await;
    assert_eq!(store.partitions().await.expect("partitions"), partitions);
    assert_eq!(store.consolidate_partitions().await.expect("housekeeping"), (0, 0), "nothing more to do");

    // Retention empties every old partition: they go, and the present's stay.
    let cutoff = NOW + 800 * MS_PER_DAY;
    store.sweep(&[(workspace.id, cutoff)]).await.expect("sweep");
    assert!(everything(&store, workspace.id).await.is_empty());
    let left = store.partitions().await.expect("partitions");
    let today = (NOW + 800 * MS_PER_DAY) / MS_PER_DAY;
    assert!(left.iter().all(|(_, end)| *end >= (today - 1) * MS_PER_DAY), "emptied partitions stay: {left:?}");
}
