//! Flows (docs/API.md, "Flows"): the logs that share a `flowId`, summed as they arrive.
//!
//! Both stores keep three tables beside their logs, in the transactions that insert and delete
//! logs, the way they keep the stats rollups: `flows` (one row a flow: logs per level, first and
//! last time, distinct steps, and the name and creation time of a flow made by
//! `POST /v1/flows`), `flow_steps` (logs per `stepIndex`) and `flow_scopes` (logs per source and
//! environment). Listing flows then reads a page of `flows`, never the logs, and a timeline
//! reads one flow's logs by index. This module holds what both stores share: the types the
//! trait speaks, and which counters a batch of logs moves ([`FlowDeltas`]).

use std::collections::BTreeMap;

use sluice_model::{Level, Log};

/// The most logs a timeline returns (`truncated` past it).
pub const TIMELINE_MAX_LOGS: usize = 2_000;

/// The most sources a flow's summary lists (alphabetical).
pub const MAX_LISTED_SOURCES: usize = 100;

/// A flow made by `POST /v1/flows`, before any log names it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct NewFlow {
    /// Its id (a UUID v7 as text; logs name it in `flowId`).
    pub flow_id: String,
    /// Its name, at most 100 characters.
    pub name: Option<String>,
    /// When it was made, Unix ms.
    pub created_at: i64,
}

/// Logs per level.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct LevelTotals {
    /// `debug` logs.
    pub debug: u64,
    /// `info` logs.
    pub info: u64,
    /// `warn` logs.
    pub warn: u64,
    /// `error` logs.
    pub error: u64,
}

impl LevelTotals {
    /// Every log counted.
    pub fn total(&self) -> u64 {
        self.debug + self.info + self.warn + self.error
    }
}

/// One flow as listed: its summary over every log it holds.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct FlowSummary {
    /// The flow id.
    pub flow_id: String,
    /// The name given at creation, if any.
    pub name: Option<String>,
    /// Distinct `stepIndex` values among its logs.
    pub steps: u64,
    /// Logs per level (their sum is the flow's logs).
    pub levels: LevelTotals,
    /// The oldest log's timestamp (the creation time of a created flow without logs).
    pub first_timestamp: i64,
    /// The newest log's timestamp (the creation time of a created flow without logs).
    pub last_timestamp: i64,
    /// The sources of its logs, alphabetical, at most [`MAX_LISTED_SOURCES`].
    pub sources: Vec<String>,
}

/// Filters of `GET /v1/flows`; every field set must match.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct FlowFilter {
    /// Last activity at or after, Unix ms.
    pub from: Option<i64>,
    /// Last activity at or before, Unix ms.
    pub to: Option<i64>,
    /// Flows with at least one log from this source.
    pub source: Option<String>,
    /// Flows with at least one log in this environment.
    pub environment: Option<sluice_model::Environment>,
    /// Only flows with at least one `error` log.
    pub has_errors: bool,
}

/// What a flow list asks for: the flows `filter` keeps, one `page` of them.
#[derive(Debug, Clone, Copy)]
pub struct FlowsRead<'a> {
    /// The filter every flow on the page meets.
    pub filter: &'a FlowFilter,
    /// Where the page starts and how long it is.
    pub page: crate::Page,
}

/// One page of flows, the most recently active first.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct FlowPage {
    /// The flows of this page.
    pub flows: Vec<FlowSummary>,
    /// True exactly when at least one more matching flow follows this page.
    pub has_more: bool,
}

/// One flow's timeline.
#[derive(Debug, Clone, PartialEq)]
pub struct FlowTimeline {
    /// The flow's summary, as listed.
    pub summary: FlowSummary,
    /// Steps from 0 to the highest seen that no log carries, ascending.
    pub missing_steps: Vec<u16>,
    /// Steps more than one log carries, ascending.
    pub duplicate_steps: Vec<u16>,
    /// Its logs by `stepIndex` (logs without one last), then timestamp, then id, at most
    /// [`TIMELINE_MAX_LOGS`].
    pub logs: Vec<Log>,
    /// True when the flow holds more logs than `logs`.
    pub truncated: bool,
}

/// A timeline's logs from all of a flow's: those with a step by step, then timestamp, then id;
/// then those without, by timestamp and id; at most [`TIMELINE_MAX_LOGS`], and whether more
/// were left out.
pub fn timeline_logs(mut logs: Vec<Log>) -> (Vec<Log>, bool) {
    logs.sort_by(|a, b| {
        let key = |log: &Log| (log.entry.step_index.is_none(), log.entry.step_index, log.entry.timestamp, log.id);
        key(a).cmp(&key(b))
    });
    let truncated = logs.len() > TIMELINE_MAX_LOGS;
    logs.truncate(TIMELINE_MAX_LOGS);
    (logs, truncated)
}

/// The columns of `flows` both stores read, in this order ([`FlowColumns`]).
pub const FLOW_COLUMNS: &str = "flow_id, name, steps, debug, info, warn, error, first_ts, last_ts, active_ts";

/// A row of `flows` as read back (text already decoded), before its sources are added.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct FlowColumns {
    /// `flow_id`.
    pub flow_id: String,
    /// `name`.
    pub name: Option<String>,
    /// `steps`.
    pub steps: i64,
    /// `debug`, `info`, `warn`, `error`.
    pub levels: [i64; 4],
    /// `first_ts`, NULL while the flow has no log.
    pub first_ts: Option<i64>,
    /// `last_ts`, NULL while the flow has no log.
    pub last_ts: Option<i64>,
    /// `active_ts`: the last log's time, or the creation time.
    pub active_ts: i64,
}

/// The summaries of `rows`, each with its sources from `sources`: (flow id, source) pairs
/// sorted by flow id, then source, at most [`MAX_LISTED_SOURCES`] a flow.
pub fn summaries(rows: Vec<FlowColumns>, sources: &[(String, String)]) -> Vec<FlowSummary> {
    let count = |n: i64| u64::try_from(n).unwrap_or(0);
    rows.into_iter()
        .map(|row| {
            let listed = sources
                .iter()
                .filter(|(flow_id, _)| *flow_id == row.flow_id)
                .take(MAX_LISTED_SOURCES)
                .map(|(_, source)| source.clone())
                .collect();
            let [debug, info, warn, error] = row.levels.map(count);
            FlowSummary {
                flow_id: row.flow_id,
                name: row.name,
                steps: count(row.steps),
                levels: LevelTotals { debug, info, warn, error },
                first_timestamp: row.first_ts.unwrap_or(row.active_ts),
                last_timestamp: row.last_ts.unwrap_or(row.active_ts),
                sources: listed,
            }
        })
        .collect()
}

/// How a stored flow's steps read back: (step, logs) pairs, ascending.
pub fn missing_and_duplicate_steps(steps: &[(i32, i64)]) -> (Vec<u16>, Vec<u16>) {
    let highest = steps.iter().map(|(step, _)| *step).max();
    let seen: std::collections::BTreeSet<i32> = steps.iter().filter(|(_, logs)| *logs > 0).map(|(s, _)| *s).collect();
    let missing = match highest {
        Some(highest) => {
            (0..highest).filter(|step| !seen.contains(step)).filter_map(|s| u16::try_from(s).ok()).collect()
        }
        None => Vec::new(),
    };
    let duplicate =
        steps.iter().filter(|(_, logs)| *logs > 1).filter_map(|(step, _)| u16::try_from(*step).ok()).collect();
    (missing, duplicate)
}

/// What one flow's counters gain (or, negative, lose) from a batch of logs.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct FlowDelta {
    /// Logs per level, in [`Level::ALL`]'s order.
    pub levels: [i64; 4],
    /// The oldest and newest timestamps among the logs added (unused when removing).
    pub first_ts: i64,
    /// See `first_ts`.
    pub last_ts: i64,
    /// Logs per `stepIndex`.
    pub steps: BTreeMap<i32, i64>,
    /// Logs per (source, environment), as the store writes them.
    pub scopes: BTreeMap<(String, String), i64>,
}

impl FlowDelta {
    /// Logs gained (negative: lost).
    pub fn logs(&self) -> i64 {
        self.levels.iter().sum()
    }
}

/// The flow counters a set of logs moves, by flow id as the store writes it; keys sorted, so
/// concurrent writers lock flows in one order.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct FlowDeltas {
    /// By flow id.
    pub flows: BTreeMap<String, FlowDelta>,
}

/// One stored log's share of its flow's counters, as a store reads it back (retention).
#[derive(Debug, Clone, Copy)]
pub struct FlowShare<'a> {
    /// `flow_id`, as stored.
    pub flow_id: &'a str,
    /// `step_index`.
    pub step_index: Option<i32>,
    /// `level`, as stored.
    pub level: &'a str,
    /// `source`, as stored.
    pub source: &'a str,
    /// `environment`, as stored.
    pub environment: &'a str,
    /// `ts`.
    pub ts: i64,
}

impl FlowDeltas {
    /// Adds `count` (negative when removing) logs of one share.
    pub fn add(&mut self, share: FlowShare<'_>, count: i64) {
        let level = Level::ALL.iter().position(|level| level.as_str() == share.level).unwrap_or(1);
        let delta = self.flows.entry(share.flow_id.to_owned()).or_insert_with(|| FlowDelta {
            first_ts: share.ts,
            last_ts: share.ts,
            ..FlowDelta::default()
        });
        delta.levels[level] += count;
        delta.first_ts = delta.first_ts.min(share.ts);
        delta.last_ts = delta.last_ts.max(share.ts);
        if let Some(step) = share.step_index {
            *delta.steps.entry(step).or_insert(0) += count;
        }
        *delta.scopes.entry((share.source.to_owned(), share.environment.to_owned())).or_insert(0) += count;
    }

    /// The deltas of a batch being inserted; `stored` turns a flow id or source into the text
    /// the store writes (the PostgreSQL store escapes U+0000).
    pub fn of(logs: &[Log], stored: impl Fn(&str) -> String) -> Self {
        Self::counted(logs, stored, 1)
    }

    /// The deltas of deleting `logs` (retention): [`FlowDeltas::of`] negated.
    pub fn removed(logs: &[Log], stored: impl Fn(&str) -> String) -> Self {
        Self::counted(logs, stored, -1)
    }

    fn counted(logs: &[Log], stored: impl Fn(&str) -> String, sign: i64) -> Self {
        let mut deltas = FlowDeltas::default();
        for log in logs {
            let entry = &log.entry;
            let Some(flow_id) = entry.flow_id.as_deref() else { continue };
            let (flow_id, source) = (stored(flow_id), stored(&entry.source));
            let share = FlowShare {
                flow_id: &flow_id,
                step_index: entry.step_index.map(i32::from),
                level: entry.level.as_str(),
                source: &source,
                environment: entry.environment.as_str(),
                ts: entry.timestamp,
            };
            deltas.add(share, sign);
        }
        deltas
    }

    /// Adds `other`'s deltas to these (several batches of one workspace).
    pub fn absorb(&mut self, other: &FlowDeltas) {
        for (flow_id, theirs) in &other.flows {
            match self.flows.get_mut(flow_id) {
                None => {
                    self.flows.insert(flow_id.clone(), theirs.clone());
                }
                Some(ours) => {
                    for (mine, added) in ours.levels.iter_mut().zip(theirs.levels) {
                        *mine += added;
                    }
                    ours.first_ts = ours.first_ts.min(theirs.first_ts);
                    ours.last_ts = ours.last_ts.max(theirs.last_ts);
                    for (step, count) in &theirs.steps {
                        *ours.steps.entry(*step).or_insert(0) += count;
                    }
                    for (scope, count) in &theirs.scopes {
                        *ours.scopes.entry(scope.clone()).or_insert(0) += count;
                    }
                }
            }
        }
    }

    /// True when no log of a flow is counted.
    pub fn is_empty(&self) -> bool {
        self.flows.is_empty()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn missing_steps_run_from_zero_to_the_highest_and_duplicates_are_counted() {
        assert_eq!(missing_and_duplicate_steps(&[]), (vec![], vec![]));
        assert_eq!(missing_and_duplicate_steps(&[(0, 1), (1, 2), (4, 1)]), (vec![2, 3], vec![1]));
        assert_eq!(missing_and_duplicate_steps(&[(3, 3)]), (vec![0, 1, 2], vec![3]));
    }

    #[test]
    fn deltas_sum_levels_steps_and_scopes_and_cancel() {
        let share = |step, level, ts| FlowShare {
            flow_id: "f",
            step_index: step,
            level,
            source: "api",
            environment: "production",
            ts,
        };
        let mut deltas = FlowDeltas::default();
        deltas.add(share(Some(0), "info", 10), 1);
        deltas.add(share(Some(0), "error", 5), 1);
        deltas.add(share(None, "warn", 20), 1);
        let flow = &deltas.flows["f"];
        assert_eq!((flow.levels, flow.first_ts, flow.last_ts, flow.logs()), ([0, 1, 1, 1], 5, 20, 3));
        assert_eq!(flow.steps.get(&0), Some(&2));
        let mut undo = FlowDeltas::default();
        undo.add(share(Some(0), "info", 10), -1);
        deltas.absorb(&undo);
        assert_eq!((deltas.flows["f"].logs(), deltas.flows["f"].steps.get(&0)), (2, Some(&1)));
    }
}
