//! `cargo xtask bench against REV [--logs N] [--pairs N] [--store sqlite|postgres]`: ingest of
//! this tree against another revision's, on the same machine in the same hour (issue 24's
//! ingest target is a share of what the code it was filed on ingests; this machine's speed
//! moves about twofold from hour to hour, so only runs side by side compare).
//!
//! It builds this tree's release `sluice` and `sluice-loadgen`, and REV's `sluice` in a git
//! worktree (`target/against/src`, with its own target folder `target/against/target`, so
//! this tree's binaries stay as they are), then runs `--pairs` pairs (2) of ingests, the two
//! binaries in turn and the first of each pair alternating, after one run of this tree's that
//! is not counted (a command's first run was the slowest of its binary): each on a fresh
//! database (SQLite file, or a database of the durable bench cluster, PostgreSQL by default),
//! `--logs` logs (4M) of the search benchmark's shape from this tree's load generator
//! (`sluice-loadgen search-ingest`, 32 connections, 100-entry JSON batches, as fast as
//! answered). A row a run: logs/s, the CPU per 1,000 logs of the machine and of the server
//! (`/proc`), the machine's idle share, the bytes on disk a log; then, for each binary, the sum
//! of its rates and this tree's share of REV's. It writes nothing to docs/PERFORMANCE.md: a
//! comparison is read with its hour.

use std::path::Path;
use std::process::Command;
use std::time::Instant;

use anyhow::{Context, bail};
use sluice_testkit::cluster as postgres;

use crate::ingest::{Server, fresh, remove, settle};
use crate::search::{bytes_on_disk, ingest_fields, loadgen};

/// The data set's name: its folder under target/bench-data (SQLite), its database (PostgreSQL).
const DATA_SET: &str = "sluice_against_bench";

/// What the command line asks for.
pub(crate) struct Plan {
    pub(crate) revision: String,
    pub(crate) logs: u64,
    pub(crate) pairs: usize,
    pub(crate) sqlite: bool,
}

/// Busy and idle clock ticks of the whole machine, from `/proc/stat`'s first line.
fn machine_ticks() -> anyhow::Result<(u64, u64)> {
    let stat = std::fs::read_to_string("/proc/stat").context("/proc/stat")?;
    let fields: Vec<u64> = stat
        .lines()
        .next()
        .context("/proc/stat is empty")?
        .split_whitespace()
        .skip(1)
        .map(|field| field.parse().unwrap_or(0))
        .collect();
    // user nice system idle iowait irq softirq steal: busy is all but idle and iowait.
    let idle = fields.get(3).copied().unwrap_or(0) + fields.get(4).copied().unwrap_or(0);
    let total: u64 = fields.iter().take(8).sum();
    Ok((total.saturating_sub(idle), idle))
}

/// The user and system clock ticks process `pid` has used (`/proc/PID/stat`, fields 14 and 15).
fn process_ticks(pid: u32) -> anyhow::Result<u64> {
    let stat = std::fs::read_to_string(format!("/proc/{pid}/stat")).context("/proc/PID/stat")?;
    // The command name, in parentheses, may hold spaces: count fields after its closing one.
    let after = stat.rsplit_once(')').map(|(_, rest)| rest).context("/proc/PID/stat has no name")?;
    let fields: Vec<&str> = after.split_whitespace().collect();
    let field = |at: usize| fields.get(at).and_then(|field| field.parse::<u64>().ok()).unwrap_or(0);
    Ok(field(11) + field(12))
}

/// Clock ticks a second of `/proc`'s counters (USER_HZ, 100 on Linux), as `sluice-loadgen`
/// reads them.
const TICKS_PER_SECOND: f64 = 100.0;

/// One run's figures.
struct Run {
    rate: f64,
    machine_ms: f64,
    server_ms: f64,
    idle: f64,
    bytes: f64,
}

/// Ingests `logs` logs into a fresh data set with `binary`'s server.
fn run_once(
    root: &Path,
    binary: &Path,
    cluster: Option<&postgres::Cluster>,
    bench_cluster: &postgres::Cluster,
    logs: u64,
) -> anyhow::Result<Run> {
    let url = fresh(root, cluster, DATA_SET)?;
    settle();
    let server = Server::start_binary(binary, &url)?;
    let ((busy, idle), served, started) = (machine_ticks()?, process_ticks(server.pid())?, Instant::now());
    let lines = loadgen(root, &server, "search-ingest", logs)?;
    let ((busy_after, idle_after), served_after) = (machine_ticks()?, process_ticks(server.pid())?);
    let wall = started.elapsed().as_secs_f64();
    drop(server);
    let fields = ingest_fields(&lines, "search-ingest")?;
    let rate: f64 = fields.get(3).context("no rate")?.trim().parse().context("the rate")?;
    let thousands = logs as f64 / 1_000.0;
    let cores = std::thread::available_parallelism().map_or(1.0, |cores| cores.get() as f64);
    Ok(Run {
        rate,
        machine_ms: (busy_after - busy) as f64 / TICKS_PER_SECOND * 1e3 / thousands,
        server_ms: (served_after - served) as f64 / TICKS_PER_SECOND * 1e3 / thousands,
        idle: (idle_after - idle) as f64 / TICKS_PER_SECOND / (wall * cores),
        bytes: bytes_on_disk(&url, bench_cluster)? as f64 / logs as f64,
    })
}

/// Builds REV's `sluice` in a worktree of its own; returns the binary.
fn build_revision(root: &Path, revision: &str) -> anyhow::Result<std::path::PathBuf> {
    let source = root.join("target/against/src");
    let target = root.join("target/against/target");
    if source.exists() {
        crate::run("git", &["-C", &source.display().to_string(), "checkout", "--quiet", "--detach", revision])?;
    } else {
        crate::run("git", &["worktree", "add", "--detach", &source.display().to_string(), revision])?;
    }
    let status = Command::new("cargo")
        .args(["build", "--release", "--locked", "-p", "sluice"])
        .current_dir(&source)
        .env("CARGO_TARGET_DIR", &target)
        .status()
        .context("cannot run cargo")?;
    if !status.success() {
        bail!("building {revision} failed ({status})");
    }
    Ok(target.join("release/sluice"))
}

pub(crate) fn bench(root: &Path, plan: &Plan) -> anyhow::Result<()> {
    let short = Command::new("git").args(["rev-parse", "--short", &plan.revision]).output()?;
    if !short.status.success() {
        bail!("git knows no revision {}", plan.revision);
    }
    let short = String::from_utf8_lossy(&short.stdout).trim().to_owned();
    crate::run("cargo", &["build", "--release", "--locked", "-p", "sluice", "-p", "sluice-loadgen"])?;
    let theirs = build_revision(root, &short)?;
    let ours = root.join("target/release/sluice");
    let cluster = postgres::Cluster::kept_at(&root.join("target/bench-data/postgres")).map_err(anyhow::Error::msg)?;
    let store = (!plan.sqlite).then_some(&cluster);
    println!(
        "\n{} logs a run on {}, {} pairs, {short} against this tree:\n\n\
         | run | code | logs/s | machine CPU ms / 1,000 logs | server CPU ms / 1,000 logs | idle | bytes a log |\n\
         |---|---|---|---|---|---|---|",
        plan.logs,
        if plan.sqlite { "SQLite" } else { "PostgreSQL" },
        plan.pairs
    );
    let (mut their_sum, mut our_sum) = (0.0, 0.0);
    let mut failed = None;
    // A run first, not counted: the first run of a command was the slowest of its binary in
    // each of three commands of 2026-12-04 (483e0d2 70.8-72.8k logs/s first, 75.5-78.1k in
    // every later slot), and the first slot would always be REV's (docs/PERFORMANCE.md).
    let mut runs = vec![(0, "this tree (warm-up, not counted)", &ours)];
    for pair in 0..plan.pairs {
        let mut order = [(short.as_str(), &theirs), ("this tree", &ours)];
        if pair % 2 == 1 {
            order.reverse();
        }
        runs.extend(
            order.into_iter().enumerate().map(|(index, (label, binary))| (2 * pair + index + 1, label, binary)),
        );
    }
    for (number, label, binary) in runs {
        match run_once(root, binary, store, &cluster, plan.logs) {
            Ok(run) => {
                println!(
                    "| {number} | {label} | {:.0} | {:.1} | {:.1} | {:.0} % | {:.0} |",
                    run.rate,
                    run.machine_ms,
                    run.server_ms,
                    run.idle * 100.0,
                    run.bytes
                );
                match (number, label) {
                    (0, _) => {}
                    (_, "this tree") => our_sum += run.rate,
                    _ => their_sum += run.rate,
                }
            }
            Err(error) => {
                failed = Some(error);
                break;
            }
        }
    }
    if let Err(error) = remove(root, store, DATA_SET) {
        eprintln!("the data set could not be removed ({error}): drop database {DATA_SET} or delete its folder");
    }
    if let Some(error) = failed {
        return Err(error);
    }
    if their_sum > 0.0 {
        println!(
            "\nthis tree ingests {:.1} % of what {short} does (sums of the rates: {our_sum:.0} against {their_sum:.0})",
            100.0 * our_sum / their_sum
        );
    }
    Ok(())
}
