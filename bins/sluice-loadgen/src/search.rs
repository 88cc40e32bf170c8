//! The search benchmark's modes (`cargo xtask bench search`): the workload's logs sent once
//! (`search-ingest`, `plain-ingest`, `flows-ingest`), then searches of each kind over HTTP, each
//! with a different value (`search-queries`); `flows-queries` hands over to [`crate::flows`].

use std::time::{Duration, Instant};

use anyhow::{Context, bail};

use crate::cli::{DataArgs, WorkloadArgs};
use crate::workload::{KINDS, Workload};
use crate::{ENTRIES, quantile_ms};

/// `sluice-loadgen search-ingest|search-queries|plain-ingest|flows-ingest|flows-queries ...`: parses the
/// mode's options and runs it.
pub(crate) async fn run(mode: &str, args: WorkloadArgs) -> anyhow::Result<()> {
    let WorkloadArgs { url, key, data: DataArgs { logs, corpus, connections }, repeat, first, password } = args;
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
