//! `cargo xtask bench ingest [--quick]`: the ingest benchmark over HTTP.
//!
//! Builds the release `sluice` and `sluice-loadgen`, then for each store (SQLite in a fresh
//! file; PostgreSQL in a fresh database of the durable bench cluster) starts `sluice serve`
//! and drives it from the load generator, a process of its own, with 100-entry batches in
//! JSON, JSONL, syslog and text and 512-record OTLP protobuf exports as fast as it answers, then JSON offered at the store's target
//! rate; then the naive endpoint on the same store (`--bench-naive-writes`); last, the HTTP
//! ceiling: the same server parsing and discarding (`--bench-discard-writes`); and on
//! PostgreSQL the raw COPY baseline: the same rows loaded by one psql `\copy`, with and
//! without the naive table's trigram index. Prints the
//! table, and (not with `--quick`) writes it to docs/PERFORMANCE.md between the
//! `ingest-bench` markers.

use std::io::{BufRead, BufReader};
use std::net::{TcpListener, TcpStream};
use std::path::Path;
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use anyhow::{Context, bail};

use sluice_testkit::cluster as postgres;

/// How long and how hard.
struct Plan {
    seconds: u64,
    warmup: u64,
    connections: usize,
}

/// A `sluice serve` of the benchmark, stopped when dropped.
pub(crate) struct Server {
    child: Child,
    pub(crate) port: u16,
    pub(crate) key: String,
    /// The first admin's password, as its first start printed it.
    pub(crate) password: String,
}

impl Server {
    /// Starts the release server on a fresh database and reads the key and the admin's password
    /// its first start prints.
    pub(crate) fn start(root: &Path, database_url: &str, extra: &[&str]) -> anyhow::Result<Server> {
        Self::launch(&root.join("target/release/sluice"), database_url, extra, true)
    }

    /// [`Server::start`] of another build of `sluice` (`cargo xtask bench against`), which may
    /// be older than accounts: only its key is read (`password` is left empty).
    pub(crate) fn start_binary(binary: &Path, database_url: &str) -> anyhow::Result<Server> {
        Self::launch(binary, database_url, &[], false)
    }

    fn launch(binary: &Path, database_url: &str, extra: &[&str], with_password: bool) -> anyhow::Result<Server> {
        let port = TcpListener::bind("127.0.0.1:0")?.local_addr()?.port();
        let mut child = Command::new(binary)
            .args(["serve", "--listen", &format!("127.0.0.1:{port}")])
            .args(extra)
            .env("SLUICE_DATABASE_URL", database_url)
            // `SLUICE_BENCH_LOG` (say `warn,sluice_store_pg=debug`) shows a store's debug lines.
            .env("SLUICE_LOG", std::env::var("SLUICE_BENCH_LOG").unwrap_or_else(|_| "warn".to_owned()))
            .stdout(Stdio::piped())
            .spawn()
            .with_context(|| format!("cannot start {}", binary.display()))?;
        let printed = read_first_start(&mut child, with_password);
        let (key, password) = match printed {
            Ok((key, password)) => (key, password.unwrap_or_default()),
            Err(error) => {
                let _ = child.kill();
                return Err(error);
            }
        };
        let deadline = Instant::now() + Duration::from_secs(30);
        while TcpStream::connect(("127.0.0.1", port)).is_err() {
            if Instant::now() > deadline {
                let _ = child.kill();
                bail!("the server did not listen within 30 s");
            }
            std::thread::sleep(Duration::from_millis(50));
        }
        Ok(Server { child, port, key, password })
    }
}

/// The API key and the first admin's password a first start prints (the line after the one
/// naming admin@localhost); the rest of its output is read and dropped on a thread of its own,
/// so the server never writes to a closed pipe.
pub(crate) fn first_start(child: &mut Child) -> anyhow::Result<(String, String)> {
    match read_first_start(child, true)? {
        (key, Some(password)) => Ok((key, password)),
        (_, None) => bail!("the server printed no key and admin password (was the database fresh?)"),
    }
}

/// [`first_start`]'s reading: the key, and the password when `with_password` (else reading
/// stops at the key: a build older than accounts prints none, and waiting for it would wait for
/// good).
fn read_first_start(child: &mut Child, with_password: bool) -> anyhow::Result<(String, Option<String>)> {
    let stdout = child.stdout.take().context("server stdout")?;
    let mut lines = BufReader::new(stdout).lines();
    let (mut key, mut password, mut announced) = (None, None, false);
    for line in lines.by_ref() {
        let line = line?;
        if let Some(found) = line.split_whitespace().find(|word| word.starts_with("slc_live_")) {
            key = Some(found.to_owned());
            if !with_password {
                break;
            }
        } else if line.contains("admin@localhost") {
            announced = true;
        } else if announced && !line.trim().is_empty() {
            password = Some(line.trim().to_owned());
            break;
        }
    }
    std::thread::spawn(move || lines.for_each(drop));
    Ok((key.context("the server printed no key (was the database fresh?)")?, password))
}

impl Server {
    /// The server's process id.
    pub(crate) fn pid(&self) -> u32 {
        self.child.id()
    }
}

impl Drop for Server {
    fn drop(&mut self) {
        let _ = Command::new("kill").args(["-TERM", &self.child.id().to_string()]).status();
        let _ = self.child.wait();
    }
}

/// Writes out what the page cache holds dirty (`sync`) before a row starts: on this machine
/// the kernel may keep gigabytes of a previous row's writes (SQLite's file, say) and flush
/// them during the next row, whose commits' fsyncs then wait behind them.
pub(crate) fn settle() {
    if let Err(error) = Command::new("sync").status() {
        eprintln!("ingest bench: cannot run sync ({error}); the row may pay for the last one's writes");
    }
}

/// Runs the load generator against `server` once; returns its table row.
fn drive(
    root: &Path,
    server: &Server,
    label: &str,
    format: &str,
    plan: &Plan,
    db_pid: Option<u32>,
    rate: Option<u32>,
) -> anyhow::Result<String> {
    settle();
    let mut command = Command::new(root.join("target/release/sluice-loadgen"));
    command
        .args(["--url", &format!("http://127.0.0.1:{}", server.port), "--key", &server.key])
        .args(["--format", format, "--label", label])
        .args(["--corpus", &root.join("../shared/corpus").display().to_string()])
        .args(["--connections", &plan.connections.to_string()])
        .args(["--seconds", &plan.seconds.to_string(), "--warmup", &plan.warmup.to_string()])
        .args(["--server-pid", &server.child.id().to_string()]);
    if let Some(pid) = db_pid {
        command.args(["--db-pid", &pid.to_string()]);
    }
    if let Some(rate) = rate {
        command.args(["--rate", &rate.to_string()]);
    }
    let output = command.stderr(Stdio::inherit()).output().context("cannot run sluice-loadgen")?;
    if !output.status.success() {
        bail!("sluice-loadgen failed ({})", output.status);
    }
    let stdout = String::from_utf8_lossy(&output.stdout);
    stdout.lines().last().map(str::to_owned).context("sluice-loadgen printed no row")
}

/// One store's part of the run: its name, database URL, the offered rate of its target, and
/// the postmaster whose CPU counts as the database's.
struct Backend {
    name: &'static str,
    url: String,
    target_rate: u32,
    db_pid: Option<u32>,
}

/// A fresh database called `name`: in `cluster`, dropped and made again; without one, a SQLite
/// file in an emptied folder.
pub(crate) fn fresh(root: &Path, cluster: Option<&postgres::Cluster>, name: &str) -> anyhow::Result<String> {
    let Some(cluster) = cluster else {
        let folder = root.join("target/bench-data").join(name);
        let _ = std::fs::remove_dir_all(&folder);
        std::fs::create_dir_all(&folder)?;
        return Ok(format!("sqlite://{}", folder.join("sluice.db").display()));
    };
    cluster.psql(&format!("DROP DATABASE IF EXISTS {name}")).map_err(anyhow::Error::msg)?;
    cluster.psql(&format!("CREATE DATABASE {name}")).map_err(anyhow::Error::msg)?;
    let url = cluster.url();
    let server = url.rsplit_once('/').map_or(url.as_str(), |(server, _)| server);
    Ok(format!("{server}/{name}"))
}

/// Removes a data set [`fresh`] made: the SQLite folder `name` under target/bench-data, or the
/// PostgreSQL database `name` of `cluster`.
pub(crate) fn remove(root: &Path, cluster: Option<&postgres::Cluster>, name: &str) -> anyhow::Result<()> {
    match cluster {
        None => Ok(std::fs::remove_dir_all(root.join("target/bench-data").join(name))?),
        Some(cluster) => cluster.psql(&format!("DROP DATABASE IF EXISTS {name}")).map_err(anyhow::Error::msg),
    }
}

pub(crate) fn bench(root: &Path, quick: bool) -> anyhow::Result<()> {
    // The server with the `bench` feature: its stand-in writers (the naive baseline, the HTTP
    // ceiling) exist only there.
    crate::run(
        "cargo",
        &["build", "--release", "--locked", "-p", "sluice", "--features", "sluice/bench", "-p", "sluice-loadgen"],
    )?;
    let plan = if quick {
        Plan { seconds: 2, warmup: 1, connections: 32 }
    } else {
        Plan { seconds: 60, warmup: 5, connections: 32 }
    };
    // Quick: JSON only, so the whole run stays under a minute after the build.
    let formats: &[&str] = if quick { &["json"] } else { &["json", "jsonl", "syslog", "text", "otlp"] };
    // The PostgreSQL store's database: a durable cluster (fsync on) kept between runs, whose
    // postmaster's CPU is counted, so SLUICE_BENCH_PG is not used here.
    let cluster = postgres::Cluster::kept_at(&root.join("target/bench-data/postgres")).map_err(anyhow::Error::msg)?;
    let mut rows = Vec::new();
    for sqlite in [true, false] {
        let backend = Backend {
            name: if sqlite { "SQLite" } else { "PostgreSQL" },
            url: fresh(root, (!sqlite).then_some(&cluster), "sluice_ingest_bench")?,
            // The targets: what each store must sustain with p99 <= 100 ms.
            target_rate: if sqlite { 15_000 } else { 40_000 },
            db_pid: if sqlite { None } else { cluster.server_pid() },
        };
        let label = format!("sluice, {}", backend.name);
        {
            let server = Server::start(root, &backend.url, &[])?;
            for format in formats {
                rows.push(drive(root, &server, &label, format, &plan, backend.db_pid, None)?);
            }
            rows.push(drive(root, &server, &label, "json", &plan, backend.db_pid, Some(backend.target_rate))?);
        }
        // The naive endpoint in the same run, on a database of its own.
        let naive_url = fresh(root, (!sqlite).then_some(&cluster), "sluice_naive_bench")?;
        let server = Server::start(root, &naive_url, &["--bench-naive-writes"])?;
        let naive = format!("naive, {}", backend.name);
        rows.push(drive(root, &server, &naive, "json", &plan, backend.db_pid, None)?);
        if !sqlite {
            drop(server);
            let copy_rows = if quick { 50_000 } else { 500_000 };
            let file = root.join("target/bench-data/copy.csv");
            write_copy_csv(root, &file, copy_rows)?;
            for with_index in [false, true] {
                rows.push(copy_baseline(&cluster, &file, copy_rows, with_index)?);
            }
            let _ = std::fs::remove_file(&file);
        }
    }
    drop(cluster);

    // The HTTP ceiling: authentication, parsing and the answer, nothing stored.
    let url = fresh(root, None, "sluice_ceiling_bench")?;
    {
        let server = Server::start(root, &url, &["--bench-discard-writes"])?;
        for format in formats {
            rows.push(drive(root, &server, "HTTP ceiling (parse, discard)", format, &plan, None, None)?);
        }
    }
    for name in ["sluice_ingest_bench", "sluice_naive_bench", "sluice_ceiling_bench"] {
        let _ = remove(root, None, name);
    }

    let mode = if quick { "`--quick` (JSON only, 2 s a row)" } else { "60 s a row after 5 s of warm-up" };
    let table = format!(
        "Measured {} by `cargo xtask bench ingest{}`: {mode}, {} connections, 100-entry batches from the \
         loghub samples. Load \"as fast as answered\": each connection sends when its last request is \
         answered (the most the server takes); \"N offered\": requests due at fixed times for N logs/s, \
         latency counted from when each was due. CPU in % of one core over the measured window \
         (database: the postmaster and its backends); RSS is the server's peak.\n\n\
         | what | format | load | logs/s | MB/s | p50 ms | p99 ms | server CPU | database CPU | server peak RSS | refused |\n\
         |---|---|---|---|---|---|---|---|---|---|---|\n{}\n",
        utc_now(),
        if quick { " --quick" } else { "" },
        plan.connections,
        rows.join("\n")
    );
    println!("\n{table}");
    // A quick run is a check, not a measurement: it leaves the documented table alone.
    if quick { Ok(()) } else { write_between_markers(root, "ingest-bench", &table) }
}

/// The naive endpoint's table, which the raw COPY baseline loads.
const NAIVE_TABLE: &str = "CREATE TABLE bench_naive_logs (id UUID PRIMARY KEY, workspace_id UUID NOT NULL, \
     ts BIGINT NOT NULL, level TEXT NOT NULL, source TEXT NOT NULL, environment TEXT NOT NULL, \
     message TEXT NOT NULL, data TEXT)";

/// Writes `rows` of the JSON workload's entries as CSV to `file` (the load generator's
/// `--copy-csv`), for the raw COPY baseline.
fn write_copy_csv(root: &Path, file: &Path, rows: usize) -> anyhow::Result<()> {
    let output = Command::new(root.join("target/release/sluice-loadgen"))
        .args(["--copy-csv", &file.display().to_string(), "--copy-rows", &rows.to_string()])
        .args(["--corpus", &root.join("../shared/corpus").display().to_string()])
        .stderr(Stdio::inherit())
        .output()
        .context("cannot run sluice-loadgen")?;
    if !output.status.success() {
        bail!("sluice-loadgen --copy-csv failed ({})", output.status);
    }
    Ok(())
}

/// The raw COPY baseline: the `rows` of `file` loaded by one `\copy` of psql into the naive
/// endpoint's table in a fresh database, with or without its pg_trgm index on the message.
/// Returns its table row.
fn copy_baseline(cluster: &postgres::Cluster, file: &Path, rows: usize, with_index: bool) -> anyhow::Result<String> {
    let name = "sluice_copy_bench";
    cluster.psql(&format!("DROP DATABASE IF EXISTS {name}")).map_err(anyhow::Error::msg)?;
    cluster.psql(&format!("CREATE DATABASE {name}")).map_err(anyhow::Error::msg)?;
    let mut setup = NAIVE_TABLE.to_owned();
    if with_index {
        setup.push_str(
            "; CREATE EXTENSION IF NOT EXISTS pg_trgm; \
             CREATE INDEX bench_naive_logs_message ON bench_naive_logs USING gin (message gin_trgm_ops)",
        );
    }
    cluster.psql_in(name, &setup).map_err(anyhow::Error::msg)?;
    settle();
    let started = Instant::now();
    cluster
        .psql_in(name, &format!("\\copy bench_naive_logs FROM '{}' WITH (FORMAT csv)", file.display()))
        .map_err(anyhow::Error::msg)?;
    let seconds = started.elapsed().as_secs_f64();
    let megabytes = std::fs::metadata(file).map(|meta| meta.len() as f64 / 1e6).unwrap_or(0.0);
    cluster.psql(&format!("DROP DATABASE IF EXISTS {name}")).map_err(anyhow::Error::msg)?;
    let what =
        if with_index { "raw COPY, PostgreSQL, pg_trgm index on message" } else { "raw COPY, PostgreSQL, no index" };
    eprintln!("{what}: {rows} rows in {seconds:.2} s");
    Ok(format!(
        "| {what} | CSV | one client, {rows} rows | {:.0} | {:.1} | – | – | – | – | – | – |",
        rows as f64 / seconds,
        megabytes / seconds
    ))
}

/// The current UTC time, as `date` prints it.
pub(crate) fn utc_now() -> String {
    Command::new("date")
        .args(["-u", "+%Y-%m-%d %H:%M UTC"])
        .output()
        .map(|output| String::from_utf8_lossy(&output.stdout).trim().to_owned())
        .unwrap_or_default()
}

/// Replaces the text between the `<!-- {name}:start -->` and `<!-- {name}:end -->` markers in
/// docs/PERFORMANCE.md (each benchmark writes its own section).
pub(crate) fn write_between_markers(root: &Path, name: &str, text: &str) -> anyhow::Result<()> {
    let (start_mark, end_mark) = (format!("<!-- {name}:start -->"), format!("<!-- {name}:end -->"));
    let path = root.join("docs/PERFORMANCE.md");
    let doc = std::fs::read_to_string(&path)?;
    let (Some(start), Some(end)) = (doc.find(&start_mark), doc.find(&end_mark)) else {
        bail!("docs/PERFORMANCE.md lacks the {start_mark} and {end_mark} markers");
    };
    std::fs::write(&path, format!("{}{start_mark}\n{text}{}", &doc[..start], &doc[end..]))?;
    eprintln!("{name}: table written to docs/PERFORMANCE.md");
    Ok(())
}
