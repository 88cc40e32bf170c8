//! A throwaway PostgreSQL cluster for a test run, made with the system's `initdb` and `pg_ctl`
//! in a temporary folder on a free loopback port, stopped and removed when dropped.
//!
//! `cargo xtask ci` uses it where `SLUICE_TEST_PG` is not set, and hands its URL to the tests
//! as `SLUICE_TEST_PG`; the outage test stops and restarts one of its own. PostgreSQL refuses
//! to run as root, so under root the cluster belongs to the `postgres` user (Debian's package
//! creates it), else to `nobody`.
//!
//! Standard library only.

use std::net::TcpListener;
use std::path::{Path, PathBuf};
use std::process::{Command, Output};

/// What went wrong, in words.
pub type Error = String;

/// What to install when the binaries are missing, in one line.
const INSTALL: &str = "PostgreSQL's initdb and pg_ctl were not found: install them (Debian: apt-get install postgresql) \
                       or point SLUICE_TEST_PG at a server (postgres://user@host:port/database)";

/// A running cluster; dropping it stops the server and removes its folder (unless it was
/// made by [`Cluster::kept_at`]).
pub struct Cluster {
    bin: PathBuf,
    dir: PathBuf,
    data: PathBuf,
    port: u16,
    owner: Option<String>,
    keep: bool,
}

impl Cluster {
    /// Creates and starts a cluster with trust authentication for the `postgres` role.
    ///
    /// `name` tells clusters of one process apart (its folder is `sluice-pg-<pid>-<name>`).
    pub fn start(name: &str) -> Result<Cluster, Error> {
        let dir = std::env::temp_dir().join(format!("sluice-pg-{}-{name}", std::process::id()));
        if dir.exists() {
            std::fs::remove_dir_all(&dir).map_err(|error| format!("cannot clear {}: {error}", dir.display()))?;
        }
        Cluster::create(dir, false)
    }

    /// A cluster in `dir` that outlives the process (benchmark data sets): started where it
    /// exists, made first where it does not; dropping it stops the server and keeps the folder.
    pub fn kept_at(dir: &Path) -> Result<Cluster, Error> {
        if dir.join("data/PG_VERSION").is_file() {
            let bin = binaries().ok_or_else(|| INSTALL.to_owned())?;
            let owner = if is_root() { Some(unprivileged_user()) } else { None };
            let cluster =
                Cluster { data: dir.join("data"), bin, dir: dir.to_path_buf(), port: free_port()?, owner, keep: true };
            cluster.resume()?;
            return Ok(cluster);
        }
        if dir.exists() {
            std::fs::remove_dir_all(dir).map_err(|error| format!("cannot clear {}: {error}", dir.display()))?;
        }
        Cluster::create(dir.to_path_buf(), true)
    }

    fn create(dir: PathBuf, keep: bool) -> Result<Cluster, Error> {
        let bin = binaries().ok_or_else(|| INSTALL.to_owned())?;
        std::fs::create_dir_all(&dir).map_err(|error| format!("cannot create {}: {error}", dir.display()))?;
        let owner = if is_root() { Some(unprivileged_user()) } else { None };
        if let Some(user) = &owner {
            checked(Command::new("chown").arg(user).arg(&dir), "chown the cluster folder")?;
        }
        let port = free_port()?;
        let cluster = Cluster { data: dir.join("data"), bin, dir, port, owner, keep };
        let data = cluster.data.display().to_string();
        cluster
            .tool("initdb", &["--auth=trust", "--username=postgres", "--encoding=UTF8", "--no-sync", "-D", &data])?;
        cluster.resume()?;
        let psql = cluster.bin.join("psql");
        let psql = if psql.is_file() { psql } else { PathBuf::from("psql") };
        let version = checked(Command::new(psql).args([&cluster.url(), "-Atc", "SHOW server_version"]), "psql")?;
        eprintln!(
            "postgres: throwaway cluster (PostgreSQL {}) on 127.0.0.1:{port} in {}",
            String::from_utf8_lossy(&version.stdout).trim(),
            cluster.dir.display()
        );
        Ok(cluster)
    }

    /// Starts the server again after [`Cluster::stop`] (same folder, same port).
    pub fn resume(&self) -> Result<(), Error> {
        let data = self.data.display().to_string();
        // Tests trade durability for speed; a kept (benchmark) cluster is durable, as in use,
        // and set up as a write-heavy server is: checkpoints spaced out (under the ingest
        // bench the default `max_wal_size` of 1 GB checkpointed every 8-10 s, which
        // PostgreSQL's own log calls too frequent), and backends asking the kernel to write
        // their dirty pages as they go (`backend_flush_after`), not in bursts that stall the
        // commits' WAL fsyncs behind them (at 40k logs/s offered, p99 207-294 ms -> 24-33 ms).
        // Its log says what ran when a benchmark's figures moved: every autovacuum run, and
        // every wait of a second for a lock (`deadlock_timeout`), with the statement waiting.
        let durability = if self.keep {
            " -c max_wal_size=8GB -c checkpoint_timeout=15min -c backend_flush_after=256kB \
             -c log_autovacuum_min_duration=0 -c log_lock_waits=on"
        } else {
            " -c fsync=off -c synchronous_commit=off -c full_page_writes=off"
        };
        let options = format!("-p {} -h 127.0.0.1 -k {}{durability}", self.port, self.dir.display());
        let log = self.dir.join("server.log").display().to_string();
        self.tool("pg_ctl", &["start", "-w", "-t", "60", "-D", &data, "-l", &log, "-o", &options])?;
        Ok(())
    }

    /// Stops the server as an operator's restart does (`pg_ctl stop -m fast`: sessions are
    /// ended, transactions in flight rolled back); [`Cluster::resume`] starts it again.
    pub fn stop(&self) -> Result<(), Error> {
        let data = self.data.display().to_string();
        self.tool("pg_ctl", &["stop", "-m", "fast", "-w", "-D", &data])?;
        Ok(())
    }

    /// Runs SQL in the cluster's `postgres` database with its `psql`.
    pub fn psql(&self, sql: &str) -> Result<(), Error> {
        self.psql_in("postgres", sql)
    }

    /// Runs `sql` (or a psql command such as `\copy`) in database `database`.
    pub fn psql_in(&self, database: &str, sql: &str) -> Result<(), Error> {
        let psql = self.bin.join("psql");
        let psql = if psql.is_file() { psql } else { PathBuf::from("psql") };
        let url = format!("postgres://postgres@127.0.0.1:{}/{database}", self.port);
        checked(Command::new(psql).args([&url, "-qAtc", sql]), "psql")?;
        Ok(())
    }

    /// The process id of the running server (its postmaster), from `postmaster.pid`.
    pub fn server_pid(&self) -> Option<u32> {
        let text = std::fs::read_to_string(self.data.join("postmaster.pid")).ok()?;
        text.lines().next()?.trim().parse().ok()
    }

    /// The URL of the cluster's `postgres` database.
    pub fn url(&self) -> String {
        format!("postgres://postgres@127.0.0.1:{}/postgres", self.port)
    }

    /// Runs one of the cluster's binaries as the cluster's owner.
    fn tool(&self, name: &str, args: &[&str]) -> Result<Output, Error> {
        let program = self.bin.join(name);
        let mut command = match &self.owner {
            Some(user) => {
                let mut command = Command::new("runuser");
                command.args(["-u", user, "--"]).arg(&program);
                command
            }
            None => Command::new(&program),
        };
        command.args(args).current_dir(&self.dir);
        checked(&mut command, name)
    }
}

impl Drop for Cluster {
    fn drop(&mut self) {
        let data = self.data.display().to_string();
        // Already stopped is fine. A kept cluster stops cleanly, so its data survives.
        let mode = if self.keep { "fast" } else { "immediate" };
        let _stopped = self.tool("pg_ctl", &["stop", "-m", mode, "-w", "-D", &data]);
        if self.keep {
            return;
        }
        if let Err(error) = std::fs::remove_dir_all(&self.dir) {
            eprintln!("postgres: cannot remove {}: {error}", self.dir.display());
        }
    }
}

/// Runs a command and fails with its output when it fails.
fn checked(command: &mut Command, what: &str) -> Result<Output, Error> {
    let output = command.output().map_err(|error| format!("cannot run {what}: {error}"))?;
    if !output.status.success() {
        return Err(format!(
            "{what} failed ({}): {}{}",
            output.status,
            String::from_utf8_lossy(&output.stdout),
            String::from_utf8_lossy(&output.stderr)
        ));
    }
    Ok(output)
}

/// The folder holding `initdb` and `pg_ctl`: on the PATH, else Debian's versioned folder
/// (`/usr/lib/postgresql/<major>/bin`, not on the PATH), the newest major first. `None` when
/// PostgreSQL's server package is not installed.
pub fn binaries() -> Option<PathBuf> {
    let has_both = |dir: &Path| dir.join("initdb").is_file() && dir.join("pg_ctl").is_file();
    let on_path = std::env::var_os("PATH")
        .map(|path| std::env::split_paths(&path).collect::<Vec<_>>())
        .unwrap_or_default()
        .into_iter()
        .find(|dir| has_both(dir));
    on_path.or_else(|| {
        let mut versions: Vec<(u32, PathBuf)> = std::fs::read_dir("/usr/lib/postgresql")
            .ok()?
            .filter_map(Result::ok)
            .filter_map(|entry| Some((entry.file_name().to_str()?.parse().ok()?, entry.path().join("bin"))))
            .filter(|(_, dir)| has_both(dir))
            .collect();
        versions.sort();
        versions.pop().map(|(_, dir)| dir)
    })
}

/// Whether this process runs as root (PostgreSQL refuses to; package installs need it).
pub fn is_root() -> bool {
    Command::new("id").arg("-u").output().is_ok_and(|output| output.stdout.trim_ascii() == b"0")
}

/// The user a root-run cluster belongs to.
fn unprivileged_user() -> String {
    let exists = |user: &str| Command::new("id").arg(user).output().is_ok_and(|output| output.status.success());
    if exists("postgres") { "postgres" } else { "nobody" }.to_owned()
}

/// A loopback port nobody listens on right now.
fn free_port() -> Result<u16, Error> {
    TcpListener::bind("127.0.0.1:0")
        .and_then(|listener| listener.local_addr())
        .map(|address| address.port())
        .map_err(|error| format!("cannot find a free port: {error}"))
}
