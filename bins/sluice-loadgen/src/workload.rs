//! The workload the search and flow benchmarks share (`cargo xtask bench search`, `bench
//! flows`): `logs` distinct logs made from the loghub lines, each carrying identifiers of the
//! shapes real logs hold, and the queries that find them.
//!
//! Log `i` belongs to rare group `i % groups`, where `groups` is a hundredth of the logs, so
//! each rare value is in 100 logs: 0.001 % of 10M. Its message is a loghub line followed by
//! `order=ORD-nnnnnnn req=<16 hex> trace=<uuid> <term at 0.1 %> <term at 10 %> failover to
//! replica eastNNNNNN`: the order number shares its prefix with every other one and differs in
//! digits, the request id is hex, the trace a UUID (version 4 layout), all of one group. Terms
//! have a fixed width, so no term is a substring of another. Everything is a function of `i`:
//! the queries know which values exist without reading anything back.

use serde_json::json;

use crate::{ENTRIES, Line, level_of};

/// The kinds of query, in the order they are run and printed.
pub(crate) const KINDS: [&str; 6] = [
    "rare identifier",
    "rare phrase",
    "term in 0.1 %",
    "common term (10 %), newest page",
    "absent term",
    "rare identifier and an exclusion",
];

/// splitmix64's finalizer: a bijection of u64, so distinct groups get distinct values.
pub(crate) fn mix(mut x: u64) -> u64 {
    x = x.wrapping_add(0x9E37_79B9_7F4A_7C15);
    x = (x ^ (x >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
    x = (x ^ (x >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
    x ^ (x >> 31)
}

/// What the workload of `logs` logs holds, as functions of a log's index or a group.
pub(crate) struct Workload {
    lines: Vec<Line>,
    pub(crate) logs: u64,
    groups: u64,
    newest_ms: i64,
    /// The flow benchmark's shape (`flows-ingest`): every log in a flow
    /// ([`flow_of`]).
    pub(crate) flows: bool,
    /// The plain shape (`plain-ingest`): each message is its loghub line alone, with no
    /// identifiers, for the bytes a log of real lines takes.
    pub(crate) plain: bool,
}

impl Workload {
    pub(crate) fn new(lines: Vec<Line>, logs: u64) -> Workload {
        let newest_ms = crate::wall_clock().unix_timestamp() * 1_000;
        Workload { lines, logs, groups: (logs / 100).max(1), newest_ms, flows: false, plain: false }
    }

    /// The order number of a group: `ORD-` and seven digits, distinct per group (an affine map
    /// with a multiplier prime to 10^7).
    fn order(&self, group: u64) -> String {
        format!("ORD-{:07}", (group.wrapping_mul(7_654_321) + 1_234_567) % 10_000_000)
    }

    /// The request id of a group: 16 hex digits.
    fn request_id(&self, group: u64) -> String {
        format!("{:016x}", mix(group ^ 0x5EED))
    }

    /// The trace id of a group: a UUID in version 4 layout.
    fn trace(&self, group: u64) -> String {
        let (high, low) = (mix(group.wrapping_mul(2)), mix(group.wrapping_mul(2) + 1));
        format!(
            "{:08x}-{:04x}-4{:03x}-{:04x}-{:012x}",
            high >> 32,
            (high >> 16) & 0xFFFF,
            high & 0xFFF,
            0x8000 | ((low >> 48) & 0x3FFF),
            low & 0xFFFF_FFFF_FFFF
        )
    }

    /// The replica name in a group's four-word phrase (`failover to replica eastNNNNNN`).
    fn replica(&self, group: u64) -> String {
        format!("east{:06}", mix(group ^ 0xFA11) % 1_000_000)
    }

    /// Log `i` as a shipper's JSON entry.
    pub(crate) fn entry(&self, i: u64) -> serde_json::Value {
        let line = &self.lines[usize::try_from(i.wrapping_mul(7_919) % self.lines.len() as u64).unwrap_or(0)];
        let group = i % self.groups;
        let message = if self.plain {
            line.text.clone()
        } else {
            format!(
                "{} order={} req={} trace={} kappa{:03} lambda{} failover to replica {}",
                line.text,
                self.order(group),
                self.request_id(group),
                self.trace(group),
                i % 1_000,
                i % 10,
                self.replica(group)
            )
        };
        let mut entry = json!({
            "timestamp": self.newest_ms - i64::try_from(self.logs - i).unwrap_or(0),
            "level": level_of(&line.text),
            "message": message,
            "source": line.system,
            "environment": "production",
        });
        if self.flows {
            let (flow, step) = flow_of(i, self.logs);
            entry["flowId"] = json!(flow);
            entry["stepIndex"] = json!(step);
        }
        entry
    }

    /// The request body of logs `first..first + ENTRIES`.
    pub(crate) fn body(&self, first: u64) -> Vec<u8> {
        let entries: Vec<_> = (first..(first + ENTRIES as u64).min(self.logs)).map(|i| self.entry(i)).collect();
        json!({ "logs": entries }).to_string().into_bytes()
    }

    /// The query of kind `kind` (an index into [`KINDS`]), its `n`-th value.
    pub(crate) fn query(&self, kind: usize, n: u64) -> String {
        let group = mix(n.wrapping_mul(31).wrapping_add(kind as u64)) % self.groups;
        let rare = match n % 3 {
            0 => self.order(group),
            1 => self.request_id(group),
            _ => self.trace(group),
        };
        match kind {
            0 => rare,
            1 => format!("\"failover to replica {}\"", self.replica(group)),
            2 => format!("kappa{:03}", mix(n) % 1_000),
            3 => format!("lambda{}", n % 10),
            4 => format!("nowhere{:06}", n),
            _ => format!("{rare} -lambda{}", mix(n) % 10),
        }
    }
}

/// Logs in the long flow, one a step.
pub(crate) const LONG_FLOW: u64 = 1_000;

/// The flow and step of log `i` of `logs`: ten logs a flow, steps 0 to 9, but the newest
/// [`LONG_FLOW`] logs, which are `flow-long`'s steps 0 to 999.
pub(crate) fn flow_of(i: u64, logs: u64) -> (String, u64) {
    let long_from = logs.saturating_sub(LONG_FLOW);
    if i >= long_from { ("flow-long".to_owned(), i - long_from) } else { (format!("flow-{}", i / 10), i % 10) }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn workload(logs: u64) -> Workload {
        let lines = vec![Line { system: "hdfs".into(), text: "block received".into() }];
        Workload::new(lines, logs)
    }

    #[test]
    fn rare_values_are_distinct_per_group_and_well_formed() {
        let work = workload(1_000_000);
        let orders: std::collections::HashSet<String> = (0..work.groups).map(|group| work.order(group)).collect();
        assert_eq!(orders.len() as u64, work.groups, "one order number per group");
        let trace = work.trace(7);
        assert_eq!(trace.len(), 36);
        assert_eq!(&trace[14..15], "4");
        assert_eq!(work.request_id(7).len(), 16);
    }

    #[test]
    fn every_query_value_is_in_the_data_or_deliberately_absent() {
        let work = workload(10_000);
        let messages: Vec<String> =
            (0..work.logs).map(|i| work.entry(i)["message"].as_str().unwrap_or_default().to_owned()).collect();
        for kind in 0..KINDS.len() {
            for n in 0..30 {
                let query = work.query(kind, n);
                let needle = query.split(" -").next().unwrap_or_default().trim_matches('"').to_owned();
                let found = messages.iter().filter(|message| message.contains(&needle)).count();
                if kind == 4 {
                    assert_eq!(found, 0, "{query}");
                } else {
                    assert!(found > 0, "{query} is in some log");
                }
            }
        }
    }

    #[test]
    fn flows_have_ten_steps_and_the_newest_thousand_logs_make_the_long_one() {
        assert_eq!(flow_of(0, 1_000_000), ("flow-0".to_owned(), 0));
        assert_eq!(flow_of(19, 1_000_000), ("flow-1".to_owned(), 9));
        assert_eq!(flow_of(998_999, 1_000_000), ("flow-99899".to_owned(), 9));
        assert_eq!(flow_of(999_000, 1_000_000), ("flow-long".to_owned(), 0));
        assert_eq!(flow_of(999_999, 1_000_000), ("flow-long".to_owned(), 999));
    }
}
