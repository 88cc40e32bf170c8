//! `cargo xtask bench tail [--seconds N] [--store sqlite|postgres]`: the live tail benchmark
//! over HTTP (issue 26).
//!
//! For each store, three runs of `sluice-loadgen tail`, each on a fresh database and a fresh
//! release `sluice serve`: ingest as fast as answered with no tail open, the same with 10 tails
//! open (the rate it keeps), and 20,000 logs/s offered with 10 tails open (delivery time from a
//! batch's `200` to its event on the client, p50 and p99). Each store's table goes between its
//! markers in docs/PERFORMANCE.md (`tail-bench-sqlite`, `tail-bench-postgres`).

use std::path::Path;
use std::process::{Command, Stdio};

use anyhow::{Context, bail};
use sluice_testkit::cluster as postgres;

use crate::ingest::{Server, fresh, settle, utc_now, write_between_markers};

/// One run: `tail LOGS SECONDS LOGS_PER_S P50_MS P99_MS DELIVERED DROPPED SERVER_CPU_S
/// LOADGEN_CPU_S`, split.
fn run(root: &Path, cluster: Option<&postgres::Cluster>, seconds: u64, extra: &[&str]) -> anyhow::Result<Vec<String>> {
    let url = fresh(root, cluster, "sluice_tail_bench")?;
    let server = Server::start(root, &url, &[])?;
    settle();
    let output = Command::new(root.join("target/release/sluice-loadgen"))
        .args(["tail", "--url", &format!("http://127.0.0.1:{}", server.port), "--key", &server.key])
        .args(["--seconds", &seconds.to_string(), "--server-pid", &server.pid().to_string()])
        .args(extra)
        .stderr(Stdio::inherit())
        .output()
        .context("cannot run sluice-loadgen")?;
    drop(server);
    if !output.status.success() {
        bail!("sluice-loadgen tail failed ({})", output.status);
    }
    let stdout = String::from_utf8_lossy(&output.stdout);
    let line = stdout
        .lines()
        .rev()
        .find_map(|line| line.strip_prefix("tail "))
        .context("sluice-loadgen tail printed nothing")?;
    Ok(line.split(' ').map(str::to_owned).collect())
}

pub(crate) fn bench(root: &Path, seconds: u64, stores: &[bool]) -> anyhow::Result<()> {
    crate::run("cargo", &["build", "--release", "--locked", "-p", "sluice", "-p", "sluice-loadgen"])?;
    let cluster = postgres::Cluster::kept_at(&root.join("target/bench-data/postgres")).map_err(anyhow::Error::msg)?;
    for &sqlite in stores {
        let (name, marker) =
            if sqlite { ("SQLite", "tail-bench-sqlite") } else { ("PostgreSQL", "tail-bench-postgres") };
        let on = (!sqlite).then_some(&cluster);
        let alone = run(root, on, seconds, &["--tails", "0"])?;
        let tailed = run(root, on, seconds, &["--tails", "10"])?;
        let paced = run(root, on, seconds, &["--tails", "10", "--rate", "20000"])?;
        let rate = |fields: &[String]| fields.get(2).and_then(|rate| rate.parse::<f64>().ok()).unwrap_or(0.0);
        let field = |fields: &[String], at: usize| fields.get(at).cloned().unwrap_or_default();
        let change = 100.0 * (rate(&tailed) / rate(&alone).max(1.0) - 1.0);
        // CPU per 1,000 logs: the server's, and the load generator's (senders and readers).
        let per_1k = |fields: &[String], at: usize| {
            let logs = fields.first().and_then(|logs| logs.parse::<f64>().ok()).unwrap_or(0.0).max(1.0);
            let cpu = fields.get(at).and_then(|cpu| cpu.parse::<f64>().ok()).unwrap_or(0.0);
            format!("{:.1}", cpu * 1_000_000.0 / logs)
        };
        let row = |label: &str, fields: &[String], rate_text: String| {
            format!(
                "| {label} | {rate_text} | {} | {} | {} | {} | {} | {} |\n",
                field(fields, 3),
                field(fields, 4),
                field(fields, 5),
                field(fields, 6),
                per_1k(fields, 7),
                per_1k(fields, 8)
            )
        };
        let text = format!(
            "{name}, measured {} by `cargo xtask bench tail` ({seconds} s a run, 32 connections, 100-entry JSON \
             batches, each run on a fresh database):\n\n\
             | run | logs/s | delivery p50 ms | delivery p99 ms | events delivered | dropped | server CPU ms / 1k logs | load generator CPU ms / 1k logs |\n|---|---|---|---|---|---|---|---|\n{}{}{}",
            utc_now(),
            row("as fast as answered, no tail", &alone, format!("{:.0}", rate(&alone))),
            row(
                "as fast as answered, 10 tails",
                &tailed,
                format!("{:.0} ({change:+.1} % against none)", rate(&tailed))
            ),
            row("20,000 logs/s offered, 10 tails", &paced, format!("{:.0}", rate(&paced))),
        );
        println!("\n{text}");
        write_between_markers(root, marker, &text)?;
    }
    Ok(())
}
