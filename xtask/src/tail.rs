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

/// One run: `tail LOGS SECONDS LOGS_PER_S P50_MS P99_MS DELIVERED DROPPED`, split.
fn run(root: &Path, cluster: Option<&postgres::Cluster>, seconds: u64, extra: &[&str]) -> anyhow::Result<Vec<String>> {
    let url = fresh(root, cluster, "sluice_tail_bench")?;
    let server = Server::start(root, &url, &[])?;
    settle();
    let output = Command::new(root.join("target/release/sluice-loadgen"))
        .args(["tail", "--url", &format!("http://127.0.0.1:{}", server.port), "--key", &server.key])
        .args(["--seconds", &seconds.to_string()])
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
        let text = format!(
            "{name}, measured {} by `cargo xtask bench tail` ({seconds} s a run, 32 connections, 100-entry JSON \
             batches, each run on a fresh database):\n\n\
             | run | logs/s | delivery p50 ms | delivery p99 ms | events delivered | dropped |\n|---|---|---|---|---|---|\n\
             | as fast as answered, no tail | {:.0} | | | | |\n\
             | as fast as answered, 10 tails | {:.0} ({change:+.1} % against none) | {} | {} | {} | {} |\n\
             | 20,000 logs/s offered, 10 tails | {:.0} | {} | {} | {} | {} |\n",
            utc_now(),
            rate(&alone),
            rate(&tailed),
            field(&tailed, 3),
            field(&tailed, 4),
            field(&tailed, 5),
            field(&tailed, 6),
            rate(&paced),
            field(&paced, 3),
            field(&paced, 4),
            field(&paced, 5),
            field(&paced, 6),
        );
        println!("\n{text}");
        write_between_markers(root, marker, &text)?;
    }
    Ok(())
}
