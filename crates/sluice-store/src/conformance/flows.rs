//! Conformance: flows, their summaries as logs arrive and go, the list and the timeline.

use std::collections::BTreeMap;

use super::*;
use crate::flows::{FlowFilter, FlowSummary, FlowsRead, LevelTotals, NewFlow, TIMELINE_MAX_LOGS};

/// A log of `flow` at `timestamp`, with a step or none.
fn flow_log(message: &str, flow: &str, step: Option<u16>, timestamp: i64) -> Log {
    let mut log = log(message, timestamp);
    log.entry.flow_id = Some(flow.to_owned());
    log.entry.step_index = step;
    log
}

const ALL_FLOWS: Page = Page { limit: 500, offset: 0 };

async fn listed(store: &dyn Store, workspace: WorkspaceId, filter: &FlowFilter) -> Vec<String> {
    let page = store.list_flows(workspace, FlowsRead { filter, page: ALL_FLOWS }).await.expect("list flows");
    page.flows.into_iter().map(|flow| flow.flow_id).collect()
}

/// A flow's summary sums its logs (levels, steps, times, sources), flows list by last
/// activity, a created flow lists with its creation time, and the filters pick flows by any of
/// their logs while the summary stays the whole flow's.
pub async fn flows_sum_their_logs_and_list_by_last_activity(store: &dyn Store) {
    let workspace = new_workspace(store, "flows").await;
    let other = new_workspace(store, "other").await;
    let mut checkout = vec![
        flow_log("cart", "checkout-1", Some(0), T0),
        flow_log("pay", "checkout-1", Some(1), T0 + 20),
        flow_log("paid", "checkout-1", Some(1), T0 + 10),
        flow_log("note", "checkout-1", None, T0 + 5),
    ];
    checkout[1].entry.level = Level::Error;
    checkout[2].entry.source = "payments".into();
    checkout[3].entry.environment = Environment::Staging;
    store.insert_logs(workspace, &checkout).await.expect("insert");
    store.insert_logs(workspace, &[flow_log("boot", "device-7", Some(2), T0 + 100)]).await.expect("insert");
    store.insert_logs(workspace, &[log("no flow", T0 + 200)]).await.expect("insert");
    store.insert_logs(other, &[flow_log("theirs", "other-flow", Some(0), T0 + 300)]).await.expect("insert");
    let created = NewFlow { flow_id: "made-first".into(), name: Some("Signup".into()), created_at: T0 + 50 };
    store.create_flow(workspace, &created).await.expect("create flow");

    let page =
        store.list_flows(workspace, FlowsRead { filter: &FlowFilter::default(), page: ALL_FLOWS }).await.expect("list");
    let ids: Vec<&str> = page.flows.iter().map(|flow| flow.flow_id.as_str()).collect();
    assert_eq!(ids, ["device-7", "made-first", "checkout-1"], "newest last activity first");
    assert!(!page.has_more);
    assert_eq!(
        page.flows[2],
        FlowSummary {
            flow_id: "checkout-1".into(),
            name: None,
            steps: 2,
            levels: LevelTotals { debug: 0, info: 3, warn: 0, error: 1 },
            first_timestamp: T0,
            last_timestamp: T0 + 20,
            sources: vec!["api".into(), "payments".into()],
        }
    );
    assert_eq!(
        page.flows[1],
        FlowSummary {
            flow_id: "made-first".into(),
            name: Some("Signup".into()),
            steps: 0,
            levels: LevelTotals::default(),
            first_timestamp: T0 + 50,
            last_timestamp: T0 + 50,
            sources: vec![],
        },
        "a created flow without logs"
    );

    // Logs naming a created flow fill it; its name stays.
    store.insert_logs(workspace, &[flow_log("signed up", "made-first", Some(0), T0 + 400)]).await.expect("insert");
    let page = store
        .list_flows(workspace, FlowsRead { filter: &FlowFilter::default(), page: Page { limit: 1, offset: 0 } })
        .await
        .expect("list");
    assert!(page.has_more);
    let first = &page.flows[0];
    assert_eq!(
        (first.flow_id.as_str(), first.name.as_deref(), first.levels.total(), first.first_timestamp),
        ("made-first", Some("Signup"), 1, T0 + 400)
    );
    let page = store
        .list_flows(workspace, FlowsRead { filter: &FlowFilter::default(), page: Page { limit: 2, offset: 1 } })
        .await
        .expect("list");
    assert_eq!(page.flows.iter().map(|flow| flow.flow_id.as_str()).collect::<Vec<_>>(), ["device-7", "checkout-1"]);
    assert!(!page.has_more);

    let errors = FlowFilter { has_errors: true, ..FlowFilter::default() };
    assert_eq!(listed(store, workspace, &errors).await, ["checkout-1"]);
    let payments = FlowFilter { source: Some("payments".into()), ..FlowFilter::default() };
    let page = store.list_flows(workspace, FlowsRead { filter: &payments, page: ALL_FLOWS }).await.expect("list");
    assert_eq!(page.flows.len(), 1);
    assert_eq!(page.flows[0].levels.total(), 4, "a filter picks flows; their summary stays whole");
    let staging = FlowFilter { environment: Some(Environment::Staging), ..FlowFilter::default() };
    assert_eq!(listed(store, workspace, &staging).await, ["checkout-1"]);
    let window = FlowFilter { from: Some(T0 + 20), to: Some(T0 + 100), ..FlowFilter::default() };
    assert_eq!(listed(store, workspace, &window).await, ["device-7", "checkout-1"], "from and to are inclusive");

    assert_eq!(listed(store, other, &FlowFilter::default()).await, ["other-flow"]);
    assert!(store.flow_timeline(other, "checkout-1").await.expect("timeline").is_none(), "another workspace's flow");
    assert!(store.flow_timeline(workspace, "nobody").await.expect("timeline").is_none());
}

/// A timeline orders its logs by step (logs without one last), then time, then id; names the
/// steps missing below the highest and those carried twice; stops at 2,000 logs.
pub async fn flow_timeline_orders_steps_marks_gaps_and_truncates(store: &dyn Store) {
    let workspace = new_workspace(store, "timeline").await;
    let logs = vec![
        flow_log("step 3", "f", Some(3), T0),
        flow_log("step 1 later", "f", Some(1), T0 + 30),
        flow_log("no step early", "f", None, T0 - 10),
        flow_log("step 1", "f", Some(1), T0 + 20),
        flow_log("step 0", "f", Some(0), T0 + 50),
        flow_log("no step late", "f", None, T0 + 60),
    ];
    store.insert_logs(workspace, &logs).await.expect("insert");
    let timeline = store.flow_timeline(workspace, "f").await.expect("timeline").expect("the flow");
    assert_eq!(
        messages(&timeline.logs),
        ["step 0", "step 1", "step 1 later", "step 3", "no step early", "no step late"]
    );
    assert_eq!((timeline.missing_steps, timeline.duplicate_steps), (vec![2], vec![1]));
    assert!(!timeline.truncated);
    assert_eq!(
        (timeline.summary.steps, timeline.summary.first_timestamp, timeline.summary.last_timestamp),
        (3, T0 - 10, T0 + 60)
    );

    // A long flow: one step a log, 2,001 logs, shown up to 2,000.
    for part in 0..21_i64 {
        let batch: Vec<Log> = (0..100_i64)
            .filter(|n| part * 100 + n <= 2_000)
            .map(|n| {
                let index = part * 100 + n;
                flow_log(&format!("long {index}"), "long", Some((index % 1_000) as u16), T0 + index)
            })
            .collect();
        if !batch.is_empty() {
            store.insert_logs(workspace, &batch).await.expect("insert");
        }
    }
    let timeline = store.flow_timeline(workspace, "long").await.expect("timeline").expect("the flow");
    assert_eq!((timeline.logs.len(), timeline.truncated), (TIMELINE_MAX_LOGS, true));
    assert_eq!(timeline.summary.levels.total(), 2_001);
    assert_eq!(timeline.summary.steps, 1_000);
    assert_eq!(&messages(&timeline.logs)[..3], ["long 0", "long 1000", "long 2000"]);
    assert!(timeline.missing_steps.is_empty());
    assert_eq!(timeline.duplicate_steps.len(), 1_000);
}

/// What a flow's summary, steps and sources should be, from the logs themselves.
#[derive(Debug, Default, PartialEq, Eq)]
struct Expected {
    levels: [u64; 4],
    first: i64,
    last: i64,
    steps: BTreeMap<u16, u64>,
    sources: std::collections::BTreeSet<String>,
}

/// The flow summaries equal what the raw rows say after random ingests, deletes before a
/// cutoff and sweeps (which may drop whole stretches of time).
pub async fn flows_equal_the_rows_after_random_ingests_and_sweeps(store: &dyn Store) {
    for seed in [3_u64, 11, 99] {
        let workspace = new_workspace(store, "random flows").await;
        let mut random = Random(seed.wrapping_mul(0x9E37_79B9_7F4A_7C15) | 1);
        let mut alive: Vec<Log> = Vec::new();
        // The thirty days before today, so a sweep may drop whole blocks as well as rewrite
        // blocks that hold logs on both sides of a cutoff.
        let start = day_start_ms(crate::unix_now_ms()) - 30 * MS_PER_DAY;
        let span = 30 * MS_PER_DAY as u64;
        let mut cutoff = start;
        let created = NewFlow { flow_id: "flow-0".into(), name: Some("made".into()), created_at: start };
        store.create_flow(workspace, &created).await.expect("create");
        for step in 0..14 {
            if step % 4 == 3 {
                cutoff += random.below(span / 3) as i64;
                if step % 8 == 3 {
                    let everyone = store.list_workspaces().await.expect("workspaces");
                    let cutoffs: Vec<(WorkspaceId, i64)> = everyone.iter().map(|w| (w.id, cutoff)).collect();
                    store.sweep(&cutoffs).await.expect("sweep");
                } else {
                    let deleted = store.delete_logs_before(workspace, cutoff).await.expect("delete");
                    let left = alive.iter().filter(|log| log.entry.timestamp >= cutoff).count();
                    assert_eq!(deleted as usize, alive.len() - left, "seed {seed} step {step}");
                }
                alive.retain(|log| log.entry.timestamp >= cutoff);
            } else {
                let batch: Vec<Log> = (0..1 + random.below(80))
                    .map(|_| {
                        let flow = format!("flow-{}", random.below(6));
                        let step = match random.below(5) {
                            0 => None,
                            _ => Some(random.below(7) as u16),
                        };
                        let mut entry = flow_log("r", &flow, step, start + random.below(span) as i64);
                        if random.below(4) == 0 {
                            entry.entry.flow_id = None;
                        }
                        entry.entry.level = Level::ALL[random.below(4) as usize];
                        entry.entry.source = ["api", "web", "db"][random.below(3) as usize].into();
                        entry.entry.environment = Environment::ALL[random.below(3) as usize];
                        entry
                    })
                    .collect();
                store.insert_logs(workspace, &batch).await.expect("insert");
                alive.extend(batch);
            }
            let mut expected: BTreeMap<String, Expected> = BTreeMap::new();
            for log in &alive {
                let Some(flow) = &log.entry.flow_id else { continue };
                let ts = log.entry.timestamp;
                let flow = expected.entry(flow.clone()).or_insert_with(|| Expected {
                    first: ts,
                    last: ts,
                    ..Expected::default()
                });
                flow.levels[Level::ALL.iter().position(|level| *level == log.entry.level).unwrap_or(0)] += 1;
                (flow.first, flow.last) = (flow.first.min(ts), flow.last.max(ts));
                if let Some(step) = log.entry.step_index {
                    *flow.steps.entry(step).or_insert(0) += 1;
                }
                flow.sources.insert(log.entry.source.to_string());
            }
            let page = store
                .list_flows(workspace, FlowsRead { filter: &FlowFilter::default(), page: ALL_FLOWS })
                .await
                .expect("list");
            let mut listed: BTreeMap<String, FlowSummary> =
                page.flows.into_iter().map(|flow| (flow.flow_id.clone(), flow)).collect();
            // The created flow is listed whether or not logs name it.
            let made = listed.get("flow-0").cloned().expect("the created flow stays listed");
            assert_eq!(made.name.as_deref(), Some("made"), "seed {seed} step {step}");
            if !expected.contains_key("flow-0") {
                assert_eq!(
                    (made.levels.total(), made.steps, made.first_timestamp, made.last_timestamp),
                    (0, 0, start, start),
                    "seed {seed} step {step}: a created flow whose logs all went"
                );
                listed.remove("flow-0");
            }
            assert_eq!(
                listed.keys().collect::<Vec<_>>(),
                expected.keys().collect::<Vec<_>>(),
                "seed {seed} step {step}: the flows listed are those with logs"
            );
            for (id, want) in &expected {
                let got = &listed[id];
                let levels = [got.levels.debug, got.levels.info, got.levels.warn, got.levels.error];
                assert_eq!(
                    (levels, got.first_timestamp, got.last_timestamp, got.steps),
                    (want.levels, want.first, want.last, want.steps.len() as u64),
                    "seed {seed} step {step} flow {id}"
                );
                assert_eq!(got.sources, want.sources.iter().cloned().collect::<Vec<_>>(), "seed {seed} step {step}");
                let timeline = store.flow_timeline(workspace, id).await.expect("timeline").expect("listed flow");
                let highest = want.steps.keys().max().copied();
                let missing: Vec<u16> =
                    highest.map_or_else(Vec::new, |top| (0..top).filter(|s| !want.steps.contains_key(s)).collect());
                let duplicate: Vec<u16> = want.steps.iter().filter(|(_, n)| **n > 1).map(|(s, _)| *s).collect();
                assert_eq!((timeline.missing_steps, timeline.duplicate_steps), (missing, duplicate), "seed {seed}");
                assert_eq!(timeline.logs.len() as u64, want.levels.iter().sum::<u64>(), "seed {seed} step {step}");
            }
        }
    }
}
