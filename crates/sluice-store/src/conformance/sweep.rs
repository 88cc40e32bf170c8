//! Conformance: deleting before a cutoff, each workspace's sweep and retention days.

use super::*;
use crate::CountsRead;

/// Deleting before a cutoff removes the logs from list, get, search and counts, and only them.
pub async fn delete_before_removes_logs_everywhere(store: &dyn Store) {
    let workspace = new_workspace(store, "w").await;
    let other = new_workspace(store, "other").await;
    let old = log("old needle", T0 - 1);
    let edge = log("edge needle", T0);
    store.insert_logs(workspace, &[old.clone(), edge.clone()]).await.expect("insert");
    store.insert_logs(other, &[log("their old needle", T0 - 1)]).await.expect("insert");

    assert_eq!(store.delete_logs_before(workspace, T0).await.expect("delete"), 1);
    assert_eq!(store.get_log(workspace, old.id).await.expect("get"), None);
    let listed = store.list_logs(workspace, &LogFilter::default(), EVERYTHING).await.expect("list");
    assert_eq!(messages(&listed.logs), ["edge needle"]);
    assert_eq!(found(store, workspace, "needle", &[SearchField::Message]).await, ["edge needle"]);
    let hour = hour_start(T0 - 1);
    let counts = store
        .level_counts(
            workspace,
            CountsRead {
                from_ms: hour - MS_PER_HOUR,
                to_ms: hour + 2 * MS_PER_HOUR,
                filter: &RollupFilter::default(),
                by: CountBy::Hour,
            },
        )
        .await
        .expect("counts");
    assert_eq!(counts.iter().map(|count| count.count).sum::<u64>(), 1);
    assert_eq!(found(store, other, "needle", &[SearchField::Message]).await, ["their old needle"]);
    assert_eq!(store.delete_logs_before(workspace, T0).await.expect("delete"), 0);
}

/// Retention over every workspace at once, with logs spread over months so a store drops
/// whole blocks and rewrites mixed ones: each workspace keeps exactly its logs at or after its cutoff,
/// search and counters included; a workspace left out keeps everything.
pub async fn sweep_applies_each_workspace_cutoff(store: &dyn Store) {
    let short = new_workspace(store, "short").await;
    let long = new_workspace(store, "long").await;
    let spared = new_workspace(store, "spared").await;
    let days = [-400_i64, -100, -40, -3, 0, 1, 30];
    let at = |day: i64| T0 + day * MS_PER_DAY;
    for workspace in [short, long, spared] {
        let logs: Vec<Log> = days.iter().map(|day| log(&format!("needle day {day}"), at(*day))).collect();
        store.insert_logs(workspace, &logs).await.expect("insert");
    }
    // Every workspace but `spared` named: nothing may be dropped wholesale.
    let deleted = store.sweep(&[(short, at(0)), (long, at(-40))]).await.expect("sweep");
    assert_eq!(deleted, 4 + 2);
    let kept = |workspace| async move {
        let page = store.list_logs(workspace, &LogFilter::default(), EVERYTHING).await.expect("list");
        page.logs.iter().map(|log| log.entry.timestamp).rev().collect::<Vec<_>>()
    };
    assert_eq!(kept(short).await, [at(0), at(1), at(30)]);
    assert_eq!(kept(long).await, [at(-40), at(-3), at(0), at(1), at(30)]);
    assert_eq!(kept(spared).await.len(), days.len());

    // Now every workspace named: the oldest stretches go for all of them.
    let deleted = store.sweep(&[(short, at(1)), (long, at(-3)), (spared, at(-100))]).await.expect("sweep everyone");
    assert_eq!(deleted, 1 + 1 + 1);
    assert_eq!(kept(short).await, [at(1), at(30)]);
    assert_eq!(kept(long).await, [at(-3), at(0), at(1), at(30)]);
    assert_eq!(kept(spared).await, [at(-100), at(-40), at(-3), at(0), at(1), at(30)]);
    assert_eq!(found(store, spared, "needle", &[SearchField::Message]).await.len(), 6);
    assert_eq!(found(store, short, "needle", &[SearchField::Message]).await, ["needle day 30", "needle day 1"]);

    // The counters agree with the rows, per day over the whole span.
    for (workspace, alive) in [(short, 2_u64), (long, 4), (spared, 6)] {
        let from = day_start_ms(at(-500));
        let counts = store
            .level_counts(
                workspace,
                CountsRead {
                    from_ms: from,
                    to_ms: day_start_ms(at(60)),
                    filter: &RollupFilter::default(),
                    by: CountBy::Day,
                },
            )
            .await
            .expect("counts");
        assert_eq!(counts.iter().map(|count| count.count).sum::<u64>(), alive);
    }
    assert_eq!(store.sweep(&[(short, at(1)), (long, at(-3)), (spared, at(-100))]).await.expect("again"), 0);
}

/// The sweep of `retention::sweep` at an injected "now": each workspace keeps its own number
/// of days (plan figures and a custom one), and the counters stay equal to the rows.
pub async fn retention_sweep_keeps_each_workspace_its_days(store: &dyn Store) {
    let now = T0 + 400 * MS_PER_DAY;
    let mut ids = Vec::new();
    for (name, plan, days) in [("free", Plan::Free, 7), ("pro", Plan::Pro, 30), ("custom", Plan::Enterprise, 3)] {
        let mut workspace = workspace(name);
        workspace.plan = plan;
        workspace.limits = Limits { retention_days: days, logs_per_month: None, ..plan.limits() };
        store.create_workspace(&workspace).await.expect("create");
        ids.push(workspace.id);
    }
    let ages = [0_i64, 2, 4, 8, 29, 31, 200];
    for workspace in &ids {
        let logs: Vec<Log> = ages.iter().map(|age| log(&format!("aged {age}"), now - age * MS_PER_DAY - 1)).collect();
        store.insert_logs(*workspace, &logs).await.expect("insert");
    }
    let deleted = retention::sweep(store, now).await.expect("sweep");
    assert_eq!(deleted, 4 + 2 + 5);
    for (workspace, kept) in ids.iter().zip([
        &["aged 0", "aged 2", "aged 4"][..],
        &["aged 0", "aged 2", "aged 4", "aged 8", "aged 29"],
        &["aged 0", "aged 2"],
    ]) {
        let page = store.list_logs(*workspace, &LogFilter::default(), EVERYTHING).await.expect("list");
        assert_eq!(messages(&page.logs), kept);
        let counts = store
            .level_counts(
                *workspace,
                CountsRead {
                    from_ms: day_start_ms(now - 400 * MS_PER_DAY),
                    to_ms: day_start_ms(now) + MS_PER_DAY,
                    filter: &RollupFilter::default(),
                    by: CountBy::Day,
                },
            )
            .await
            .expect("counts");
        assert_eq!(counts.iter().map(|count| count.count).sum::<u64>(), kept.len() as u64);
    }
    // A second sweep at the same moment finds nothing; a day later the next day goes.
    assert_eq!(retention::sweep(store, now).await.expect("again"), 0);
    // Free keeps its 4-day-old log; Pro loses the 29-day-old one, the custom workspace the
    // 2-day-old one.
    assert_eq!(retention::sweep(store, now + MS_PER_DAY).await.expect("a day later"), 2);
}
