//! `cargo xtask bench soak [--minutes N] [--warmup-minutes N] [--reads-per-second N]
//! [--store sqlite|postgres]`: the soak benchmark.
//!
//! For each store (SQLite in a fresh file; PostgreSQL in a fresh database of the durable bench
//! cluster) it starts the release `sluice serve`, measures the most JSON ingest it takes (10 s
//! as fast as answered, 32 connections), then offers half of that while two readers make a
//! dashboard's reads the whole time (`sluice-loadgen reads`), 20 a second in all
//! ([`READS_PER_SECOND`]; `--reads-per-second 0`: as fast as answered): first for the warm-up
//! minutes (3 by default, [`WARMUP_MINUTES`]), shown but not kept, then for N measured minutes
//! (10 by default). Each measured minute is a row: ingest logs/s and p99, reads' p99, the
//! server's peak resident memory in the minute (sampled every 250 ms), refusals. The start and the end are compared
//! ([`window`]): flat is within 10 %. Writes the table to docs/PERFORMANCE.md between the
//! `soak-bench` markers.

use std::path::Path;
use std::process::{Command, Stdio};

use anyhow::{Context, bail};
use sluice_testkit::cluster as postgres;

use crate::ingest::{Server, fresh, remove, settle, utc_now, write_between_markers};

/// The readers' pace by default: a few dashboards refreshing, not a load test of reads.
pub(crate) const READS_PER_SECOND: u32 = 20;

/// Minutes of the same load before the first measured one. A fresh store's first minutes are
/// not its steady state: its caches, the search index's tail and its first sealed blocks, the
/// allocator's arenas and PostgreSQL's statistics all fill or settle then (measured, 2026-11-26:
/// SQLite's ingest p50 8 ms in the first 10 s, 17-22 ms from the second 10 s on; PostgreSQL's
/// RSS 305 MB after the first minute, 370-423 MB in every later one). A soak asks whether the
/// service degrades as it keeps running, so it compares minutes that all run in that state.
pub(crate) const WARMUP_MINUTES: u32 = 3;

/// How the soak runs.
pub(crate) struct Plan {
    /// Measured minutes.
    pub(crate) minutes: u32,
    /// Minutes run first and not kept ([`WARMUP_MINUTES`]).
    pub(crate) warmup_minutes: u32,
    /// The readers' pace in all; 0: as fast as answered.
    pub(crate) reads_per_second: u32,
}

/// How many minutes make the start, and the end: two when there are at least four. A
/// minute's p99 is about its 100 slowest ingest requests, or its 12 slowest reads at 20 a
/// second, so a single one moves by tens of percent from one minute to the next of an
/// unchanged load (SQLite, 2026-11-26: 67 to 158 ms ingest p99 within one run); the mean of
/// two halves that, and every minute is still in the table.
fn window(minutes: usize) -> usize {
    if minutes >= 4 { 2 } else { 1 }
}

/// One minute of the soak.
struct Minute {
    logs_per_second: f64,
    ingest_p99: f64,
    refused: String,
    read_p99: f64,
    reads: u64,
    rss_mb: f64,
}

/// The most resident memory the server had while a minute ran, sampled every 250 ms: the
/// minute's peak, where one sample at its end caught a block being sealed (tens of MB for a
/// second) in some minutes and not in others.
struct PeakRss {
    stop: std::sync::mpsc::Sender<()>,
    sampler: std::thread::JoinHandle<f64>,
}

impl PeakRss {
    fn watch(pid: u32) -> PeakRss {
        let (stop, stopped) = std::sync::mpsc::channel();
        let sampler = std::thread::spawn(move || {
            let mut peak = rss_mb(pid);
            while let Err(std::sync::mpsc::RecvTimeoutError::Timeout) =
                stopped.recv_timeout(std::time::Duration::from_millis(250))
            {
                peak = peak.max(rss_mb(pid));
            }
            peak.max(rss_mb(pid))
        });
        PeakRss { stop, sampler }
    }

    fn stop(self) -> f64 {
        let _ = self.stop.send(());
        self.sampler.join().unwrap_or(0.0)
    }
}

/// The server's resident memory now, in MB (`VmRSS`).
fn rss_mb(pid: u32) -> f64 {
    let status = std::fs::read_to_string(format!("/proc/{pid}/status")).unwrap_or_default();
    status
        .lines()
        .find_map(|line| line.strip_prefix("VmRSS:"))
        .and_then(|value| value.trim().trim_end_matches("kB").trim().parse::<f64>().ok())
        .map_or(0.0, |kib| kib / 1024.0)
}

/// Runs the load generator with `args` against `server`. What it says on stderr is shown: each
/// read's p99, to tell which one moved, and when ingest's slow answers were due, to set a slow
/// minute against the server's and the database's logs.
fn loadgen(root: &Path, server: &Server, args: &[&str]) -> anyhow::Result<std::process::Child> {
    Command::new(root.join("target/release/sluice-loadgen"))
        .args(args)
        .args(["--url", &format!("http://127.0.0.1:{}", server.port), "--key", &server.key])
        .stdout(Stdio::piped())
        .stderr(Stdio::inherit())
        .spawn()
        .context("cannot run sluice-loadgen")
}

/// The last line a finished load generator printed.
fn last_line(child: std::process::Child) -> anyhow::Result<String> {
    let output = child.wait_with_output()?;
    if !output.status.success() {
        bail!("sluice-loadgen failed ({})", output.status);
    }
    String::from_utf8_lossy(&output.stdout).lines().last().map(str::to_owned).context("no output")
}

/// The cells of an ingest row (`| label | format | load | logs/s | MB/s | p50 | p99 | ... | refused |`).
fn cells(row: &str) -> Vec<String> {
    row.trim().trim_matches('|').split('|').map(|cell| cell.trim().to_owned()).collect()
}

pub(crate) fn bench(root: &Path, plan: &Plan, stores: &[bool]) -> anyhow::Result<()> {
    let Plan { minutes, warmup_minutes, reads_per_second } = *plan;
    crate::run("cargo", &["build", "--release", "--locked", "-p", "sluice", "-p", "sluice-loadgen"])?;
    let corpus = root.join("../shared/corpus").display().to_string();
    let cluster = postgres::Cluster::kept_at(&root.join("target/bench-data/postgres")).map_err(anyhow::Error::msg)?;
    let mut sections = Vec::new();
    for &sqlite in stores {
        let name = if sqlite { "SQLite" } else { "PostgreSQL" };
        let url = fresh(root, (!sqlite).then_some(&cluster), "sluice_soak_bench")?;
        let server = Server::start(root, &url, &[])?;
        let pid = server.pid();
        settle();
        let most = loadgen(root, &server, &["--corpus", &corpus, "--seconds", "10", "--warmup", "2"])?;
        let most: f64 = cells(&last_line(most)?).get(3).and_then(|cell| cell.parse().ok()).context("max rate")?;
        let rate = (most / 2.0).round();
        eprintln!(
            "soak, {name}: {most:.0} logs/s as fast as answered; offering {rate:.0} for {warmup_minutes} min of warm-up, then {minutes} min"
        );
        let mut rows = Vec::new();
        for minute in (1..=warmup_minutes + minutes).map(|minute| i64::from(minute) - i64::from(warmup_minutes)) {
            let rate = format!("{rate}");
            let ingest = ["--corpus", &corpus, "--seconds", "60", "--warmup", "0", "--rate", &rate];
            let pace = reads_per_second.to_string();
            let mut reads = vec!["reads", "--seconds", "60", "--connections", "2"];
            if reads_per_second > 0 {
                reads.extend(["--rate", &pace]);
            }
            let (ingest, reads) = (loadgen(root, &server, &ingest)?, loadgen(root, &server, &reads)?);
            let peak = PeakRss::watch(pid);
            let (ingest, reads) = (cells(&last_line(ingest)?), last_line(reads)?);
            let rss_mb = peak.stop();
            let reads: Vec<&str> = reads.split_whitespace().collect();
            let row = Minute {
                logs_per_second: ingest.get(3).and_then(|cell| cell.parse().ok()).unwrap_or(0.0),
                ingest_p99: ingest.get(6).and_then(|cell| cell.parse().ok()).unwrap_or(0.0),
                refused: ingest.get(10).cloned().unwrap_or_default(),
                reads: reads.get(1).and_then(|cell| cell.parse().ok()).unwrap_or(0),
                read_p99: reads.get(3).and_then(|cell| cell.parse().ok()).unwrap_or(0.0),
                rss_mb,
            };
            let phase = if minute > 0 {
                format!("minute {minute}")
            } else {
                format!("warm-up minute {} of {warmup_minutes}", minute + i64::from(warmup_minutes))
            };
            eprintln!(
                "soak, {name}, {phase}: {:.0} logs/s, p99 {:.1} ms, reads p99 {:.1} ms ({}), peak RSS {:.0} MB",
                row.logs_per_second, row.ingest_p99, row.read_p99, row.reads, row.rss_mb
            );
            if minute > 0 {
                rows.push(row);
            }
        }
        drop(server);
        let span = window(rows.len());
        if rows.len() < span {
            continue;
        }
        let (first, last) = (&rows[..span], &rows[rows.len() - span..]);
        let mean =
            |minutes: &[Minute], of: fn(&Minute) -> f64| minutes.iter().map(of).sum::<f64>() / minutes.len() as f64;
        let change = |of: fn(&Minute) -> f64| {
            let (from, to) = (mean(first, of), mean(last, of));
            if from > 0.0 { (to - from) / from * 100.0 } else { 0.0 }
        };
        let table: Vec<String> = rows
            .iter()
            .enumerate()
            .map(|(minute, row)| {
                format!(
                    "| {} | {:.0} | {:.1} | {:.1} | {} | {:.0} | {} |",
                    minute + 1,
                    row.logs_per_second,
                    row.ingest_p99,
                    row.read_p99,
                    row.reads,
                    row.rss_mb,
                    row.refused
                )
            })
            .collect();
        sections.push(format!(
            "**{name}**: {most:.0} logs/s as fast as answered, so {rate:.0} offered. {}: \
             throughput {:+.1} %, ingest p99 {:+.1} %, reads p99 {:+.1} %, peak RSS {:+.1} %.\n\n\
             | minute | ingest logs/s | ingest p99 ms | reads p99 ms | reads | server peak RSS MB | refused |\n\
             |---|---|---|---|---|---|---|\n{}\n",
            if span == 1 { "First minute to last".to_owned() } else { format!("First {span} minutes to last {span}") },
            change(|minute| minute.logs_per_second),
            change(|minute| minute.ingest_p99),
            change(|minute| minute.read_p99),
            change(|minute| minute.rss_mb),
            table.join("\n")
        ));
    }
    // A soak leaves millions of logs: about 20 GB in the kept cluster, which goes with them.
    let _ = remove(root, Some(&cluster), "sluice_soak_bench");
    drop(cluster);
    let _ = remove(root, None, "sluice_soak_bench");
    let text = format!(
        "Measured {} by `cargo xtask bench soak --minutes {minutes} --warmup-minutes {warmup_minutes} \
         --reads-per-second {reads_per_second}`: JSON ingest offered at half the most the store took \
         (100-entry batches, 32 connections, requests due at fixed times) while two readers loop \
         over the newest page, a level filter, two searches and the summary ({}), for \
         {warmup_minutes} minutes of warm-up not kept and then {minutes} measured minutes (the \
         store held the logs of those first minutes already: about {warmup_minutes} times 60 \
         times the rate offered).\n\n{}",
        utc_now(),
        if reads_per_second > 0 {
            format!("{reads_per_second} reads a second in all")
        } else {
            "as fast as answered".to_owned()
        },
        sections.join("\n")
    );
    println!("\n{text}");
    write_between_markers(root, "soak-bench", &text)
}
