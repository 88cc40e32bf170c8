//! Conformance: the monthly quota, counted in the month of acceptance, refusing the batch that
//! would cross it, alone in its group.

use super::*;
use crate::CountsRead;

/// Now, by the wall clock (log ids are stamped with it).
fn wall_clock_ms() -> i64 {
    crate::unix_now_ms()
}

/// A workspace whose quota is `logs_per_month`, otherwise unlimited.
async fn workspace_with_quota(store: &dyn Store, logs_per_month: u64) -> WorkspaceId {
    let mut workspace = workspace("metered");
    workspace.limits = Limits { logs_per_month: Some(logs_per_month), ..Plan::Enterprise.limits() };
    store.create_workspace(&workspace).await.expect("create workspace");
    workspace.id
}

fn batch(prefix: &str, count: usize) -> Vec<Log> {
    (0..count).map(|n| log(&format!("{prefix} {n}"), T0 + n as i64)).collect()
}

/// Batches are counted in the month they are accepted in; the one that would cross the quota
/// is refused whole and changes nothing, and the quota can be met exactly.
pub async fn quota_refuses_the_batch_that_would_cross_it(store: &dyn Store) {
    let workspace = workspace_with_quota(store, 250).await;
    let first = batch("first", 100);
    let month = accepted_month(&first[0]);
    assert_eq!(month, month_start_ms(wall_clock_ms()), "ids are stamped at ingest");
    store.insert_logs(workspace, &first).await.expect("100 of 250");
    store.insert_logs(workspace, &batch("second", 100)).await.expect("200 of 250");
    let refused = store.insert_logs(workspace, &batch("third", 100)).await;
    assert!(matches!(refused, Err(StoreError::QuotaExceeded)), "{refused:?}");
    assert_eq!(store.monthly_usage(workspace, month).await.expect("usage"), 200);
    let stored = store.list_logs(workspace, &LogFilter::default(), EVERYTHING).await.expect("list");
    assert_eq!(stored.logs.len(), 200, "a refused batch left rows behind");
    assert!(found(store, workspace, "third", &[SearchField::Message]).await.is_empty());
    let counts = store
        .level_counts(
            workspace,
            CountsRead {
                from_ms: day_start_ms(T0),
                to_ms: day_start_ms(T0) + MS_PER_DAY,
                filter: &RollupFilter::default(),
                by: CountBy::Hour,
            },
        )
        .await
        .expect("counts");
    assert_eq!(counts.iter().map(|count| count.count).sum::<u64>(), 200, "a refused batch left counts behind");
    // Exactly up to the quota, then not one more.
    store.insert_logs(workspace, &batch("fourth", 50)).await.expect("250 of 250");
    assert!(matches!(store.insert_logs(workspace, &batch("fifth", 1)).await, Err(StoreError::QuotaExceeded)));
    assert_eq!(store.monthly_usage(workspace, month).await.expect("usage"), 250);
    // Another month's usage is apart.
    assert_eq!(store.monthly_usage(workspace, month_start_ms(month - 1)).await.expect("last month"), 0);
}

/// The quota read is the one stored when the batch is written (a plan change counts at once),
/// usage belongs to one workspace, and a workspace without a quota is never refused.
pub async fn quota_follows_plan_changes_and_counts_per_workspace(store: &dyn Store) {
    let metered = workspace_with_quota(store, 10).await;
    let free = new_workspace(store, "unmetered").await;
    let month = month_start_ms(wall_clock_ms());
    store.insert_logs(metered, &batch("a", 10)).await.expect("10 of 10");
    assert!(matches!(store.insert_logs(metered, &batch("b", 1)).await, Err(StoreError::QuotaExceeded)));
    store
        .set_plan(metered, Plan::Enterprise, Limits { logs_per_month: Some(15), ..Plan::Enterprise.limits() })
        .await
        .expect("raise");
    store.insert_logs(metered, &batch("c", 5)).await.expect("15 of 15");
    store.set_plan(metered, Plan::Enterprise, Plan::Enterprise.limits()).await.expect("unlimited");
    store.insert_logs(metered, &batch("d", 100)).await.expect("no quota");
    assert_eq!(store.monthly_usage(metered, month).await.expect("usage"), 115);
    for _ in 0..3 {
        store.insert_logs(free, &batch("e", 100)).await.expect("unlimited workspace");
    }
    assert_eq!(store.monthly_usage(free, month).await.expect("usage"), 300);
    assert_eq!(store.monthly_usage(WorkspaceId::generate(), month).await.expect("nobody"), 0);
    // Lowering the quota below the usage refuses everything from then on.
    store.set_plan(free, Plan::Free, Plan::Free.limits()).await.expect("down to free");
    let lowered = Limits { logs_per_month: Some(299), ..Plan::Free.limits() };
    store.set_plan(free, Plan::Free, lowered).await.expect("lower");
    assert!(matches!(store.insert_logs(free, &batch("f", 1)).await, Err(StoreError::QuotaExceeded)));
}

/// A UUID v7 log id stamped `ms` (Unix ms), the `n`th of that millisecond.
fn id_stamped(ms: i64, n: u8) -> LogId {
    let mut bytes = [0_u8; 16];
    bytes[..6].copy_from_slice(&ms.to_be_bytes()[2..]);
    bytes[6] = 0x70;
    bytes[8] = 0x80;
    bytes[15] = n;
    LogId::from_slice(&bytes).expect("a UUID v7")
}

/// The batches a workspace holds, by the prefix of their logs' messages (sorted, each once),
/// and how many logs it holds.
async fn stored_batches(store: &dyn Store, workspace: WorkspaceId) -> (Vec<String>, usize) {
    let stored = store.list_logs(workspace, &LogFilter::default(), EVERYTHING).await.expect("list");
    let mut prefixes: Vec<String> =
        stored.logs.iter().filter_map(|log| log.entry.message.split(' ').next()).map(str::to_owned).collect();
    prefixes.sort_unstable();
    prefixes.dedup();
    (prefixes, stored.logs.len())
}

/// A group whose batches are each of one month (as nearly every group is; PostgreSQL counts
/// them in one statement): each batch is still counted in order against its own workspace's
/// quota, one refused counts nothing, and a later batch that fits is stored.
pub async fn a_group_of_one_month_batches_is_counted_in_order(store: &dyn Store) {
    let metered = workspace_with_quota(store, 150).await;
    let other = new_workspace(store, "other").await;
    let month = month_start_ms(wall_clock_ms());
    let group = [
        WriteBatch { workspace: other, logs: batch("h1", 100) },
        WriteBatch { workspace: metered, logs: batch("h2", 100) },
        WriteBatch { workspace: metered, logs: batch("h3", 100) },
        WriteBatch { workspace: other, logs: batch("h4", 10) },
        WriteBatch { workspace: metered, logs: batch("h5", 48) },
        WriteBatch { workspace: metered, logs: batch("h6", 3) },
        WriteBatch { workspace: metered, logs: batch("h7", 2) },
    ];
    let answers = store.insert_group(&group).await.expect("the group");
    let refused: Vec<bool> = answers.iter().map(|answer| matches!(answer, Err(StoreError::QuotaExceeded))).collect();
    assert_eq!(refused, [false, false, true, false, false, true, false], "{answers:?}");
    assert_eq!(store.monthly_usage(metered, month).await.expect("usage"), 150);
    assert_eq!(store.monthly_usage(other, month).await.expect("usage"), 110);
    let (prefixes, stored) = stored_batches(store, metered).await;
    assert_eq!(prefixes, ["h2", "h5", "h7"]);
    assert_eq!(stored, 150);
    assert_eq!(store.list_logs(other, &LogFilter::default(), EVERYTHING).await.expect("list").logs.len(), 110);
}

/// One transaction for many batches (a group commit): each batch is counted against its own
/// workspace's quota, in order, and one refused is left out whole, its usage, rows and counters
/// untouched, while the rest of the group is stored. A batch accepted across a month's end
/// counts in both months, and is refused whole when either would pass the quota.
pub async fn a_group_refuses_only_the_batches_over_their_quota(store: &dyn Store) {
    let metered = workspace_with_quota(store, 150).await;
    let other = new_workspace(store, "other").await;
    let month = month_start_ms(wall_clock_ms());
    let last_month = month_start_ms(month - 1);
    // `first` keeps the stamped ids of different batches apart.
    let spanning = |prefix: &str, before: usize, after: usize, first: u8| -> Vec<Log> {
        let mut logs = batch(prefix, before + after);
        for (n, log) in logs.iter_mut().take(before).enumerate() {
            log.id = id_stamped(month - 1, first + n as u8);
        }
        logs
    };
    let group = [
        WriteBatch { workspace: other, logs: batch("g1", 100) },
        WriteBatch { workspace: metered, logs: batch("g2", 100) },
        WriteBatch { workspace: metered, logs: batch("g3", 100) },
        WriteBatch { workspace: other, logs: batch("g4", 10) },
        WriteBatch { workspace: metered, logs: batch("g5", 48) },
        WriteBatch { workspace: metered, logs: spanning("g6", 2, 2, 0) },
        WriteBatch { workspace: metered, logs: spanning("g7", 1, 1, 2) },
    ];
    let answers = store.insert_group(&group).await.expect("the group");
    let refused: Vec<bool> = answers.iter().map(|answer| matches!(answer, Err(StoreError::QuotaExceeded))).collect();
    assert_eq!(refused, [false, false, true, false, false, false, true], "{answers:?}");
    assert!(answers.iter().all(|answer| answer.is_ok() || matches!(answer, Err(StoreError::QuotaExceeded))));

    assert_eq!(store.monthly_usage(metered, month).await.expect("usage"), 150);
    assert_eq!(store.monthly_usage(metered, last_month).await.expect("usage"), 2, "g7's first month stayed counted");
    assert_eq!(store.monthly_usage(other, month).await.expect("usage"), 110);
    let (prefixes, stored) = stored_batches(store, metered).await;
    assert_eq!(prefixes, ["g2", "g5", "g6"]);
    assert_eq!(stored, 152);
    assert!(found(store, metered, "g3", &[SearchField::Message]).await.is_empty());
    assert!(found(store, metered, "g7", &[SearchField::Message]).await.is_empty());
    assert_eq!(store.list_logs(other, &LogFilter::default(), EVERYTHING).await.expect("list").logs.len(), 110);
    let counts = store
        .level_counts(
            metered,
            CountsRead {
                from_ms: day_start_ms(T0),
                to_ms: day_start_ms(T0) + MS_PER_DAY,
                filter: &RollupFilter::default(),
                by: CountBy::Hour,
            },
        )
        .await
        .expect("counts");
    assert_eq!(counts.iter().map(|count| count.count).sum::<u64>(), 152, "refused batches left counts behind");
    // A group of one answers as `insert_logs` does.
    let alone = store.insert_group(&[WriteBatch { workspace: metered, logs: batch("g8", 1) }]).await.expect("group");
    assert!(matches!(alone.as_slice(), [Err(StoreError::QuotaExceeded)]), "{alone:?}");
}
