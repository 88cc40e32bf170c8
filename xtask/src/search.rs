//! `cargo xtask bench search [--logs N] [--plain] [--store sqlite|postgres] [--quick]`: the
//! search benchmark over HTTP (issue 24).
//!
//! For each store (SQLite in a fresh file, PostgreSQL in a fresh database of the durable bench
//! cluster), it starts the release `sluice serve`, sends it `--logs` logs (10M by default,
//! 1M with `--quick`) made by `sluice-loadgen search-ingest` (loghub lines carrying order
//! numbers, hex request ids, UUIDs, a rare four-word phrase, terms in 0.1 % and 10 % of the
//! logs: `bins/sluice-loadgen/src/search.rs`), then runs `sluice-loadgen search-queries`: 30
//! searches of each kind, each with another value, one at a time. It prints, per store, the
//! ingest rate, the bytes on disk per log and p50/p95/max of each kind, and writes each store's
//! table between its markers in docs/PERFORMANCE.md (`search-bench-sqlite`,
//! `search-bench-postgres`), so `--store` runs one store and leaves the other's figures. Only a
//! run of 10M logs writes there (the size issue 24's targets are set at); `--quick` and other
//! `--logs` print their figures and leave the documented ones alone.
//!
//! Before ingesting, it checks the disk holds the data set with room for a build left
//! ([`BYTES_PER_LOG_BOUND`], [`SPARE_BYTES`]); a data set larger than 10M (50M takes 47 GB on
//! SQLite) is removed after its run, so it does not leave the next build without room.
//!
//! `--plain` sends the loghub lines alone instead (`sluice-loadgen plain-ingest`: no
//! identifiers, no terms) and runs no searches: the ingest rate and the bytes a log of real
//! lines takes, the figure issue 24's byte targets were set on (markers
//! `search-bench-plain-sqlite`, `search-bench-plain-postgres`).

use std::path::Path;
use std::process::{Command, Stdio};

use anyhow::{Context, bail};
use sluice_testkit::cluster as postgres;

use crate::ingest::{Server, fresh, remove, settle, utc_now, write_between_markers};

/// Runs `sluice-loadgen <mode>` against `server`; returns the lines it printed on stdout.
pub(crate) fn loadgen(root: &Path, server: &Server, mode: &str, logs: u64) -> anyhow::Result<Vec<String>> {
    // The flow benchmark also times the dashboard explorer's first page, as the first admin.
    let password = Some(server.password.as_str()).filter(|_| mode == "flows-queries");
    let output = Command::new(root.join("target/release/sluice-loadgen"))
        .args([mode, "--url", &format!("http://127.0.0.1:{}", server.port), "--key", &server.key])
        .args(password.map(|password| ["--password", password]).into_iter().flatten())
        .args(["--logs", &logs.to_string()])
        .args(["--corpus", &root.join("../shared/corpus").display().to_string()])
        .stderr(Stdio::inherit())
        .output()
        .context("cannot run sluice-loadgen")?;
    if !output.status.success() {
        bail!("sluice-loadgen {mode} failed ({})", output.status);
    }
    Ok(String::from_utf8_lossy(&output.stdout).lines().map(str::to_owned).collect())
}

/// The fields of the `ingest | logs | seconds | batches sent again after a 503 | logs/s` line
/// `sluice-loadgen <mode>` printed among `lines`.
pub(crate) fn ingest_fields(lines: &[String], mode: &str) -> anyhow::Result<Vec<String>> {
    Ok(lines
        .iter()
        .find_map(|line| line.strip_prefix("ingest | "))
        .with_context(|| format!("{mode} printed no rate"))?
        .split(" | ")
        .map(str::to_owned)
        .collect())
}

/// The `query | ...` lines `sluice-loadgen` printed among `lines`, as rows of a Markdown table.
pub(crate) fn query_rows(lines: &[String]) -> String {
    lines.iter().filter_map(|line| line.strip_prefix("query | ")).map(|row| format!("| {row} |\n")).collect()
}

/// The bytes a store's data takes: the SQLite file with its WAL, or the PostgreSQL database.
pub(crate) fn bytes_on_disk(url: &str, cluster: &postgres::Cluster) -> anyhow::Result<u64> {
    if let Some(path) = url.strip_prefix("sqlite://") {
        let mut total = 0;
        for suffix in ["", "-wal", "-shm"] {
            total += std::fs::metadata(format!("{path}{suffix}")).map_or(0, |meta| meta.len());
        }
        return Ok(total);
    }
    let name = url.rsplit('/').next().unwrap_or_default();
    let psql = Command::new("psql")
        .args([&cluster.url(), "-Atc", &format!("SELECT pg_database_size('{name}')")])
        .output()
        .context("cannot run psql")?;
    String::from_utf8_lossy(&psql.stdout).trim().parse().context("pg_database_size")
}

/// The data set's name: its folder under target/bench-data (SQLite), its database (PostgreSQL).
const DATA_SET: &str = "sluice_search_bench";

/// The size of the data set whose figures docs/PERFORMANCE.md holds.
const DOCUMENTED_LOGS: u64 = 10_000_000;

/// The most bytes a log of this benchmark takes on disk, with room to spare (measured: about
/// 940 on SQLite, 800 on PostgreSQL).
const BYTES_PER_LOG_BOUND: u64 = 1_200;

/// The disk a run leaves free besides its data set: a release build and its link.
const SPARE_BYTES: u64 = 10 << 30;

/// The bytes free on the file system holding `path` (`df`).
fn free_bytes(path: &Path) -> anyhow::Result<u64> {
    let df = Command::new("df").args(["-B1", "--output=avail"]).arg(path).output().context("cannot run df")?;
    let text = String::from_utf8_lossy(&df.stdout);
    text.lines().nth(1).unwrap_or_default().trim().parse().with_context(|| format!("df printed {text:?}"))
}

/// Stops before a data set the disk cannot hold with [`SPARE_BYTES`] left, saying what to do.
fn check_room(root: &Path, logs: u64) -> anyhow::Result<()> {
    let needed = logs.saturating_mul(BYTES_PER_LOG_BOUND).saturating_add(SPARE_BYTES);
    let free = free_bytes(&root.join("target"))?;
    if free < needed {
        bail!(
            "{logs} logs need about {} GB free on the disk holding target/ ({} GB of data and {} GB for a build); \
             {} GB are free: free some, or pass a smaller --logs",
            needed >> 30,
            (needed - SPARE_BYTES) >> 30,
            SPARE_BYTES >> 30,
            free >> 30
        );
    }
    Ok(())
}

pub(crate) fn bench(root: &Path, logs: u64, plain: bool, stores: &[bool]) -> anyhow::Result<()> {
    crate::run("cargo", &["build", "--release", "--locked", "-p", "sluice", "-p", "sluice-loadgen"])?;
    let cluster = postgres::Cluster::kept_at(&root.join("target/bench-data/postgres")).map_err(anyhow::Error::msg)?;
    for &sqlite in stores {
        let name = if sqlite { "SQLite" } else { "PostgreSQL" };
        let marker = match (sqlite, plain) {
            (true, false) => "search-bench-sqlite",
            (false, false) => "search-bench-postgres",
            (true, true) => "search-bench-plain-sqlite",
            (false, true) => "search-bench-plain-postgres",
        };
        let url = fresh(root, (!sqlite).then_some(&cluster), DATA_SET)?;
        check_room(root, logs)?;
        let measured = measure(root, &cluster, &url, name, logs, plain);
        if logs > DOCUMENTED_LOGS {
            // Kept, it would take the room the next build needs (50M: 47 GB on SQLite); removed
            // whether or not the run got through.
            match remove(root, (!sqlite).then_some(&cluster), DATA_SET) {
                Ok(()) => println!("{name}: the {logs}-log data set is removed"),
                Err(error) => eprintln!(
                    "{name}: the {logs}-log data set could not be removed ({error}): delete \
                     target/bench-data/{DATA_SET} (SQLite) or drop database {DATA_SET}"
                ),
            }
        }
        let text = measured?;
        println!("\n{text}");
        if logs == DOCUMENTED_LOGS {
            write_between_markers(root, marker, &text)?;
        } else {
            println!("{marker}: {logs} logs, not {DOCUMENTED_LOGS}: docs/PERFORMANCE.md left as it was");
        }
    }
    Ok(())
}

/// Starts the server on `url`, sends it the logs and (unless `plain`) runs the searches;
/// returns the store's text for docs/PERFORMANCE.md.
fn measure(
    root: &Path,
    cluster: &postgres::Cluster,
    url: &str,
    name: &str,
    logs: u64,
    plain: bool,
) -> anyhow::Result<String> {
    let server = Server::start(root, url, &[])?;
    settle();
    let mode = if plain { "plain-ingest" } else { "search-ingest" };
    let fields = ingest_fields(&loadgen(root, &server, mode, logs)?, mode)?;
    let (Some(retried), Some(rate)) = (fields.get(2), fields.get(3)) else {
        bail!("{mode} printed {fields:?}");
    };
    let bytes = bytes_on_disk(url, cluster)?;
    // The plain run has no searches: its text says which lines were sent, and no table.
    let (command, sent, table) = if plain {
        ("cargo xtask bench search --plain", "loghub lines alone", String::new())
    } else {
        let mut table = String::from(
            "| query | p50 ms | p95 ms | max ms | 5xx | hits (median, page of 50) |\n|---|---|---|---|---|---|\n",
        );
        table.push_str(&query_rows(&loadgen(root, &server, "search-queries", logs)?));
        ("cargo xtask bench search", "logs", table)
    };
    drop(server);
    Ok(format!(
        "{name}, measured {} by `{command}` with {logs} {sent} in one workspace: ingest {rate} logs/s \
         as fast as answered (32 connections, 100-entry JSON batches; {retried} batches answered 503 with \
         `Retry-After` and sent again after it), {:.0} bytes on disk per log.\n\n{table}",
        utc_now(),
        bytes as f64 / logs as f64
    ))
}
