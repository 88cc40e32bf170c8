//! The search benchmark's workload (`cargo xtask bench search`): `--logs` distinct logs made
//! from the loghub lines, each carrying identifiers of the shapes real logs hold, sent once
//! (`search-ingest`); then searches of each kind over HTTP, each with a different value
//! (`search-queries`).
//!
//! Log `i` belongs to rare group `i % groups`, where `groups` is a hundredth of the logs, so
//! each rare value is in 100 logs: 0.001 % of 10M. Its message is a loghub line followed by
//! `order=ORD-nnnnnnn req=<16 hex> trace=<uuid> <term at 0.1 %> <term at 10 %> failover to
//! replica eastNNNNNN`: the order number shares its prefix with every other one and differs in
//! digits, the request id is hex, the trace a UUID (version 4 layout), all of one group. Terms
//! have a fixed width, so no term is a substring of another. Everything is a function of `i`:
//! the queries know which values exist without reading anything back.

use std::time::{Duration, Instant};

use anyhow::{Context, bail};
use serde_json::json;

use crate::{ENTRIES, Line, level_of, quantile_ms};

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
    /// ([`crate::flows::flow_of`]).
    pub(crate) flows: bool,
    /// The plain shape (`plain-ingest`): each message is its loghub line alone, with no
    /// identifiers, for the bytes a log of real lines takes.
    pub(crate) plain: bool,
}

impl Workload {
    pub(crate) fn new(lines: Vec<Line>, logs: u64) -> Workload {
        let newest_ms = time::OffsetDateTime::now_utc().unix_timestamp() * 1_000;
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
    fn entry(&self, i: u64) -> serde_json::Value {
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
            let (flow, step) = crate::flows::flow_of(i, self.logs);
            entry["flowId"] = json!(flow);
            entry["stepIndex"] = json!(step);
        }
        entry
    }

    /// The request body of logs `first..first + ENTRIES`.
    fn body(&self, first: u64) -> Vec<u8> {
        let entries: Vec<_> = (first..(first + ENTRIES as u64).min(self.logs)).map(|i| self.entry(i)).collect();
        json!({ "logs": entries }).to_string().into_bytes()
    }

    /// The query of kind `kind` (an index into [`KINDS`]), its `n`-th value.
    fn query(&self, kind: usize, n: u64) -> String {
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

/// `sluice-loadgen search-ingest|search-queries|plain-ingest|flows-ingest|flows-queries ...`: parses the
/// mode's options and runs it.
pub(crate) async fn run(mode: &str) -> anyhow::Result<()> {
    let (mut url, mut key, mut logs, mut connections, mut repeat) = (String::new(), String::new(), 0_u64, 32, 30);
    // Where the searches' value numbers start (1 or more): a run with another `--first` asks
    // for identifiers and phrases no run with the default asked for (the terms in 0.1 % and
    // 10 % of the logs come back every 1,000 and 10 values).
    let mut first = 1;
    let mut corpus = std::path::PathBuf::from("../shared/corpus");
    let mut password = None;
    let mut words = std::env::args().skip(2);
    while let Some(flag) = words.next() {
        let value = words.next().with_context(|| format!("{flag} needs a value"))?;
        match flag.as_str() {
            "--url" => url = value,
            "--key" => key = value,
            "--logs" => logs = value.parse()?,
            "--corpus" => corpus = value.into(),
            "--connections" => connections = value.parse()?,
            "--repeat" => repeat = value.parse()?,
            "--first" => first = value.parse()?,
            "--password" => password = Some(value),
            other => bail!("unknown option {other}"),
        }
    }
    if url.is_empty() || key.is_empty() || logs == 0 || first == 0 {
        bail!("{}", crate::USAGE);
    }
    let mut workload = Workload::new(crate::corpus_lines(&corpus)?, logs);
    workload.flows = mode.starts_with("flows-");
    workload.plain = mode == "plain-ingest";
    match mode {
        "search-ingest" | "plain-ingest" | "flows-ingest" => ingest(workload, &url, &key, connections).await,
        "search-queries" => queries(workload, &url, &key, first, repeat).await,
        "flows-queries" => {
            crate::flows::queries(&workload, &url, &key, repeat).await?;
            match password {
                Some(password) => crate::flows::explorer(&url, &password, repeat).await,
                None => Ok(()),
            }
        }
        other => bail!("unknown mode {other}"),
    }
}

/// Sends every log of the workload once over `connections` keep-alive connections, each
/// sending its next batch when the last is answered; prints the rate and any refusal.
pub(crate) async fn ingest(workload: Workload, url: &str, key: &str, connections: usize) -> anyhow::Result<()> {
    let target = crate::send::Target {
        url: format!("{}/v1/logs", url.trim_end_matches('/')),
        headers: vec![
            ("Authorization".into(), format!("Bearer {key}")),
            ("Content-Type".into(), "application/json".into()),
        ],
        stored: 200,
    };
    let sent =
        crate::send::send_all(workload.logs, ENTRIES as u64, connections, target, move |first| workload.body(first))
            .await?;
    let (logs, seconds) = (sent.logs, sent.seconds);
    eprintln!("search-ingest: {logs} logs in {seconds:.1} s, {} batches sent again after a 503", sent.retried);
    println!("ingest | {logs} | {seconds:.1} | {} | {:.0}", sent.retried, logs as f64 / seconds);
    Ok(())
}

/// Runs `repeat` searches of each kind, one at a time, each with another value (numbered from
/// `first`), and prints a row per kind: `| kind | p50 ms | p95 ms | max ms | 5xx | median hits |`.
pub(crate) async fn queries(workload: Workload, url: &str, key: &str, first: u64, repeat: u64) -> anyhow::Result<()> {
    let client = awc::Client::builder().timeout(Duration::from_secs(60)).finish();
    let auth = format!("Bearer {key}");
    for (kind, name) in KINDS.iter().enumerate() {
        let mut latencies = Vec::new();
        let mut hits = Vec::new();
        let mut errors = 0;
        // One warm-up search of the kind (its value not measured again).
        for n in 0..=repeat {
            let query = workload.query(kind, n + first - 1 + 1_000 * u64::from(n == 0));
            let target = format!("{}/v1/logs/search", url.trim_end_matches('/'));
            let started = Instant::now();
            let mut response = client
                .get(target.as_str())
                .insert_header(("Authorization", auth.as_str()))
                .query(&[("q", query.as_str())])
                .context("query string")?
                .send()
                .await
                .map_err(|error| anyhow::anyhow!("search {query:?}: {error}"))?;
            let body = response.body().limit(64 << 20).await.context("search answer")?;
            let elapsed = u64::try_from(started.elapsed().as_micros()).unwrap_or(u64::MAX);
            if n == 0 {
                continue;
            }
            latencies.push(elapsed);
            if response.status().is_server_error() {
                errors += 1;
            } else if response.status().is_success() {
                let value: serde_json::Value = serde_json::from_slice(&body).context("search answer is JSON")?;
                hits.push(value["logs"].as_array().map_or(0, Vec::len));
            } else {
                bail!("search {query:?} answered {}: {}", response.status(), String::from_utf8_lossy(&body));
            }
        }
        print_query_row(name, latencies, hits, errors);
    }
    Ok(())
}

/// Prints a kind's row, `query | kind | p50 ms | p95 ms | max ms | 5xx | median hits`, from
/// its searches' latencies (µs) and hits.
pub(crate) fn print_query_row(name: &str, mut latencies: Vec<u64>, mut hits: Vec<usize>, errors: u64) {
    latencies.sort_unstable();
    hits.sort_unstable();
    let median_hits = hits.get(hits.len() / 2).copied().unwrap_or(0);
    let (p50, p95) = (quantile_ms(&latencies, 0.50), quantile_ms(&latencies, 0.95));
    let max = latencies.last().map_or(0.0, |max| *max as f64 / 1000.0);
    eprintln!("search {name}: p50 {p50:.1} ms, p95 {p95:.1} ms, max {max:.1} ms, {errors} errors");
    println!("query | {name} | {p50:.1} | {p95:.1} | {max:.1} | {errors} | {median_hits}");
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
}
