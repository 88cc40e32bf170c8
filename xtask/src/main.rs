//! Project automation, run as `cargo xtask <task>`:
//!
//! - `ci`: exactly what CI runs: first the system packages it needs (`setup.rs`: installed
//!   as root, else the command is printed), then formatting, clippy with `-D warnings`, the
//!   architecture and tidy checks, every test, and cargo-deny (installed when missing). Tests
//!   get a PostgreSQL server as `SLUICE_TEST_PG`: the one that variable names, else a
//!   throwaway cluster; and a Redis server as `SLUICE_TEST_REDIS` the same way (both from
//!   `sluice-testkit`).
//! - `bench [--quick]`: the criterion benchmarks, whose figures go to docs/PERFORMANCE.md;
//!   the PostgreSQL ones get `SLUICE_BENCH_PG`, a durable cluster kept in
//!   `target/bench-data/postgres` unless the variable names a server; then the ingest
//!   benchmark over HTTP (`ingest.rs`), which `bench ingest [--quick]` runs alone. `bench search
//!   [--logs N] [--plain] [--store sqlite|postgres] [--quick]` runs the search benchmark over HTTP alone (`search.rs`; not part of
//!   `bench`: it builds 10M logs on each store; `--plain`: the loghub lines alone, for ingest and bytes a log).
//! - `bench against REV [--logs N] [--pairs N] [--store sqlite|postgres]`: ingest of this
//!   tree against revision REV's, runs in turn on the same machine (`against.rs`; PostgreSQL
//!   unless `--store sqlite`); not part of `bench`.
//! - `fuzz [--seconds N]`: every cargo-fuzz target of `fuzz/`, built on the stable toolchain
//!   with libFuzzer's coverage flags and run N seconds each (`ci` runs them too, briefly;
//!   `fuzz.rs`).
//! - `bench soak [--minutes N] [--warmup-minutes N] [--reads-per-second N] [--store sqlite|postgres]`: the soak benchmark (`soak.rs`): half
//!   the most ingest each store takes for N minutes (10) while readers run; not part of `bench`.
//! - `bench flows [--logs N] [--store sqlite|postgres]`: the flow benchmark (`flows.rs`): 1M
//!   logs in 100k flows and one of 1,000 steps, then the flow list and timelines over HTTP;
//!   not part of `bench`.
//! - `bench peers [--logs N] [--store sqlite|postgres] [--kind plain|entropy] [--repeat N]`:
//!   sluice beside VictoriaLogs on the same logs and searches (`peers.rs`).
//! - `bench tail [--seconds N] [--store sqlite|postgres]`: the live tail benchmark
//!   (`tail.rs`): ingest with and without 10 tails open, and delivery times at 20k logs/s;
//!   not part of `bench`.
//! - `shippers`: the real OpenTelemetry Python and JS SDKs and pino with pino-http-send,
//!   installed from PyPI and npm into `target/shippers`, shipping to the real binary
//!   (`shippers.rs`; `ci` runs it too).
//! - `browser`: the web dashboard in Debian's Chromium, driven by playwright-core and checked
//!   by axe-core (both from npm, into `target/browser`) against the real binary; screenshots
//!   of every page in `target/browser/screenshots` (`browser.rs`; `ci` runs it too).
//! - `with-pg <command...>`: runs one command with `SLUICE_TEST_PG` and `SLUICE_TEST_REDIS`
//!   set to throwaway servers (e.g. `cargo xtask with-pg cargo test -p <crate>`), removed
//!   afterwards.
//! - `tidy`: the tidy rules alone (`ci` runs them too): a `//!` line opening every module, at
//!   most 600 lines of code a file, every path the docs name exists, no circles of imports
//!   between a crate's modules (`circles.rs`).
//! - `pg-schema`: rewrites the PostgreSQL store's `schema.rs` with diesel's `print-schema`
//!   of `migrations/postgres` (`ci` checks it is current; `schema.rs` in this folder).

use std::path::{Path, PathBuf};
use std::process::Command;

use anyhow::{Context, bail};
use clap::Parser;
use cli::{Bench, Task};
use sluice_testkit::cluster as postgres;
use sluice_testkit::redis;

mod against;
mod browser;
mod circles;
mod cli;
mod flows;
mod fuzz;
mod ingest;
mod peers;
mod schema;
mod search;
mod setup;
mod shippers;
mod soak;
mod tail;

fn main() -> anyhow::Result<()> {
    let task = cli::Xtask::parse();
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).parent().context("xtask lives in the workspace")?.to_path_buf();
    std::env::set_current_dir(&root)?;
    match task.command {
        Task::Ci => ci(&root),
        Task::Bench { bench: None, quick } => {
            bench(quick)?;
            ingest::bench(&root, quick)
        }
        Task::Bench { bench: Some(bench), quick } => match bench {
            Bench::Ingest => ingest::bench(&root, quick),
            Bench::Soak { minutes, warmup_minutes, reads_per_second, store } => {
                let plan = soak::Plan { minutes, warmup_minutes, reads_per_second };
                soak::bench(&root, &plan, &store.stores())
            }
            Bench::Against { revision, logs, pairs, store } => {
                let sqlite = store.stores() == [true];
                against::bench(&root, &against::Plan { revision, logs, pairs: pairs.max(1), sqlite })
            }
            Bench::Search { logs, plain, store } => {
                let logs = logs.unwrap_or(if quick { 1_000_000 } else { 10_000_000 });
                search::bench(&root, logs, plain, &store.stores())
            }
            Bench::Peers { logs, store, kind, repeat } => {
                let kinds = match kind {
                    Some(kind) => vec![kind.name()],
                    None => vec!["plain", "entropy"],
                };
                peers::bench(&root, &peers::Plan { logs, stores: store.stores(), kinds, repeat })
            }
            Bench::Tail { seconds, store } => tail::bench(&root, seconds, &store.stores()),
            Bench::Flows { logs, store } => flows::bench(&root, logs, &store.stores()),
        },
        Task::Tidy => tidy_rules(&root),
        Task::Fuzz { seconds } => fuzz::run_all(&root, seconds),
        Task::Shippers => shippers::run_all(&root),
        Task::Browser => browser::run_all(&root),
        Task::WithPg { command } => with_pg(&command),
        Task::PgSchema => pg_schema(&root),
    }
}

/// Regenerates the PostgreSQL store's schema.rs against a throwaway cluster (or `SLUICE_TEST_PG`).
fn pg_schema(root: &Path) -> anyhow::Result<()> {
    match std::env::var("SLUICE_TEST_PG") {
        Ok(url) if !url.is_empty() => schema::write(root, &url),
        _ => {
            let cluster = postgres::Cluster::start("ci").map_err(anyhow::Error::msg)?;
            schema::write(root, &cluster.url())
        }
    }
}

/// Runs a command, echoing it, and fails when it fails.
pub(crate) fn run(program: &str, args: &[&str]) -> anyhow::Result<()> {
    run_in_env(program, args, &[])
}

/// [`run`] with extra environment variables.
pub(crate) fn run_in_env(program: &str, args: &[&str], env: &[(&str, &str)]) -> anyhow::Result<()> {
    eprintln!("\n$ {program} {}", args.join(" "));
    let status = Command::new(program)
        .args(args)
        .envs(env.iter().copied())
        .status()
        .with_context(|| format!("cannot run {program}"))?;
    if !status.success() {
        bail!("`{program} {}` failed ({status})", args.join(" "));
    }
    Ok(())
}

pub(crate) fn succeeds(program: &str, args: &[&str]) -> bool {
    Command::new(program).args(args).output().is_ok_and(|output| output.status.success())
}

fn ci(root: &Path) -> anyhow::Result<()> {
    setup::ensure()?;
    run("cargo", &["fmt", "--all", "--", "--check"])?;
    run("cargo", &["clippy", "--workspace", "--all-targets", "--locked", "--", "-D", "warnings"])?;
    architecture()?;
    tidy_rules(root)?;
    let corpus = root.join("../shared/corpus");
    if !corpus.is_dir() {
        bail!(
            "the test corpus is missing at {}: clone sluice next to the project's shared/ folder (CI does)",
            corpus.display()
        );
    }
    // The server the PostgreSQL tests use: the given one, else a throwaway cluster that lives
    // until the tests are done.
    let (pg_url, cluster) = match std::env::var("SLUICE_TEST_PG") {
        Ok(url) if !url.is_empty() => (url, None),
        _ => {
            let cluster = postgres::Cluster::start("ci").map_err(anyhow::Error::msg)?;
            (cluster.url(), Some(cluster))
        }
    };
    let (redis_url, redis) = redis::for_tests().map_err(anyhow::Error::msg)?;
    let env = [("SLUICE_TEST_PG", pg_url.as_str()), ("SLUICE_TEST_REDIS", redis_url.as_str())];
    if succeeds("cargo", &["nextest", "--version"]) {
        run_in_env("cargo", &["nextest", "run", "--workspace", "--locked", "--no-fail-fast"], &env)?;
    } else {
        run_in_env("cargo", &["test", "--workspace", "--locked", "--lib", "--bins", "--tests"], &env)?;
    }
    run_in_env("cargo", &["test", "--workspace", "--locked", "--doc"], &env)?;
    // The authentication, HTTP and command-line suites once more, on PostgreSQL instead of SQLite.
    let env = [
        ("SLUICE_TEST_PG", pg_url.as_str()),
        ("SLUICE_TEST_REDIS", redis_url.as_str()),
        ("SLUICE_TEST_BACKEND", "postgres"),
    ];
    if succeeds("cargo", &["nextest", "--version"]) {
        // --workspace with a filter, not -p: the same features as the run above, so no rebuild.
        let filter = "package(sluice-auth) | package(sluice-http) | package(sluice)";
        let args = ["nextest", "run", "--workspace", "--locked", "--no-fail-fast", "-E", filter];
        run_in_env("cargo", &args, &env)?;
    } else {
        let args = ["test", "--locked", "-p", "sluice-auth", "-p", "sluice-http", "-p", "sluice", "--tests"];
        run_in_env("cargo", &args, &env)?;
    }
    schema::check(root, &pg_url)?;
    shippers::run_all(root)?;
    browser::run_all(root)?;
    drop(cluster);
    drop(redis);
    fuzz::run_all(root, fuzz::CI_SECONDS)?;
    deny()?;
    eprintln!("\nci: every check passed");
    Ok(())
}

/// Builds `target/debug/sluice` with the features the workspace's tests unify, so the suites
/// that start the binary reuse the test build instead of compiling every crate once more.
pub fn build_debug_binary() -> anyhow::Result<()> {
    run("cargo", &["test", "--workspace", "--locked", "--no-run"])
}

/// What each layer may not depend on (normal and build dependencies, transitively), and why.
const LAYER_RULES: [(&str, &[&str], &str); 12] = [
    ("sluice-model", PURE_FORBIDDEN, "other services embed the domain model"),
    ("sluice-api", PURE_FORBIDDEN, "the wire types are plain data: the client and the server both build on them"),
    ("sluice-ingest", PURE_FORBIDDEN, "other services embed the parsers"),
    ("sluice-query", PURE_FORBIDDEN, "the query language is pure"),
    ("sluice-blocks", PURE_FORBIDDEN, "the storage format and query execution are pure: both stores call them"),
    ("sluice-store", DRIVERS, "the storage contract knows no SQL and no driver"),
    (
        "sluice-store-diesel",
        &["actix", "sluice-http", "sluice-store-sqlite", "sluice-store-pg", "tokio-postgres", "libsqlite3-sys"],
        "what the stores share is diesel's alone: no server, no store, no driver until a store picks one",
    ),
    ("sluice-http", BACKENDS, "the HTTP layer sees the store traits, never a backend"),
    ("sluice", &["sluice-testkit", "criterion"], "test and benchmark support stays out of the server"),
    ("sluice-client", CLIENT_FORBIDDEN, "other programs embed the client: HTTP only, on any Tokio runtime"),
    (
        "sluice-auth",
        &["actix", "diesel", "libsqlite3-sys", "tokio-postgres"],
        "authentication sees the store traits, never HTTP or a backend",
    ),
    ("sluice-tracing", CLIENT_FORBIDDEN, "Rust services embed the layer: the client and tracing only"),
];

/// No server, database or store in the client library.
const CLIENT_FORBIDDEN: &[&str] = &[
    "actix",
    "diesel",
    "deadpool",
    "libsqlite3-sys",
    "postgres",
    "redis",
    "sluice-store",
    "sluice-http",
    "sluice-auth",
];

/// No runtime, server or database crate in the pure layers.
const PURE_FORBIDDEN: &[&str] =
    &["actix", "diesel", "tokio", "deadpool", "mio", "redis", "libsqlite3-sys", "postgres", "sluice-store"];
/// No database driver in the storage contract.
const DRIVERS: &[&str] = &["diesel", "deadpool", "libsqlite3-sys", "tokio-postgres", "postgres", "sluice-store-"];
/// No store backend in the HTTP layer (only the binary chooses one).
const BACKENDS: &[&str] =
    &["sluice-store-sqlite", "sluice-store-pg", "sluice-store-diesel", "diesel", "libsqlite3-sys", "tokio-postgres"];

/// The layering of docs/ARCHITECTURE.md, checked on the dependency graph.
fn architecture() -> anyhow::Result<()> {
    for (package, forbidden, why) in LAYER_RULES {
        eprintln!("\n$ architecture: {package} depends on none of {} ({why})", forbidden.join(", "));
        let output = Command::new("cargo")
            .args(["tree", "--locked", "-p", package, "-e", "normal,build", "--prefix", "none", "--format", "{p}"])
            .output()
            .context("cannot run cargo tree")?;
        if !output.status.success() {
            bail!("cargo tree -p {package} failed: {}", String::from_utf8_lossy(&output.stderr));
        }
        let tree = String::from_utf8_lossy(&output.stdout);
        let offenders: Vec<&str> =
            tree.lines().skip(1).filter(|line| forbidden.iter().any(|name| line.starts_with(name))).collect();
        if !offenders.is_empty() {
            bail!("architecture: {package} must not depend on {offenders:?}: {why} (docs/ARCHITECTURE.md)");
        }
    }
    // The embeddable crate builds on its own, with only its own features.
    run("cargo", &["check", "--locked", "-p", "sluice-ingest"])
}

/// The longest a source file may be, in lines before its `#[cfg(test)]` module: one job a file.
const MAX_SOURCE_LINES: usize = 600;

/// The tidy rules: module docs and file lengths, doc paths, no circles.
fn tidy_rules(root: &Path) -> anyhow::Result<()> {
    tidy(root)?;
    doc_paths(root)?;
    circles::check(root)
}

/// Every Rust source file says what it is for in a `//!` line.
fn tidy(root: &Path) -> anyhow::Result<()> {
    eprintln!("\n$ tidy: every module starts with a //! doc line and has at most {MAX_SOURCE_LINES} lines of code");
    let mut missing = Vec::new();
    let mut long = Vec::new();
    let mut stack: Vec<PathBuf> = ["crates", "bins", "xtask"].iter().map(|dir| root.join(dir)).collect();
    while let Some(path) = stack.pop() {
        if path.is_dir() {
            if path.file_name().is_some_and(|name| name == "target") {
                continue;
            }
            for entry in std::fs::read_dir(&path)? {
                stack.push(entry?.path());
            }
        } else if path.extension().is_some_and(|extension| extension == "rs") {
            let text = std::fs::read_to_string(&path)?;
            let first = text.lines().find(|line| !line.trim().is_empty()).unwrap_or("");
            let relative = path.strip_prefix(root).unwrap_or(&path).display().to_string();
            let test_code = ["/tests/", "/benches/"].iter().any(|folder| relative.contains(folder));
            let code_lines = text.lines().take_while(|line| !line.starts_with("#[cfg(test)]")).count();
            if !test_code && !first.starts_with("// @generated") && code_lines > MAX_SOURCE_LINES {
                long.push(format!("{relative} ({code_lines} lines)"));
            }
            // Generated files (diesel's schema.rs) carry their generator's mark instead.
            if !first.starts_with("//!") && !first.starts_with("// @generated") {
                missing.push(path.strip_prefix(root).unwrap_or(&path).display().to_string());
            }
        }
    }
    if !missing.is_empty() {
        missing.sort();
        bail!("tidy: these files lack a leading //! doc line: {missing:?}");
    }
    if !long.is_empty() {
        long.sort();
        bail!("tidy: split these files by concern (at most {MAX_SOURCE_LINES} lines before their tests): {long:?}");
    }
    Ok(())
}

/// Where the docs point: a path in backticks that starts at a top folder of the repository.
const DOC_ROOTS: [&str; 8] = ["crates/", "bins/", "xtask/", "migrations/", "docs/", "fuzz/", ".ci/", "README.md"];

/// Every file or folder README.md and docs/*.md name in backticks exists, so the docs cannot
/// send a reader to a file that moved. A name with a placeholder (`<format>`, `*`, `{...}`)
/// is a pattern, not a path, and is passed over; `:line` and `#anchor` suffixes are dropped.
fn doc_paths(root: &Path) -> anyhow::Result<()> {
    eprintln!("\n$ tidy: every path README.md and docs/*.md name exists");
    let mut documents = vec![root.join("README.md")];
    for entry in std::fs::read_dir(root.join("docs"))? {
        let path = entry?.path();
        if path.extension().is_some_and(|extension| extension == "md") {
            documents.push(path);
        }
    }
    let mut missing = Vec::new();
    for document in documents {
        let text = std::fs::read_to_string(&document)?;
        let name = document.strip_prefix(root).unwrap_or(&document).display().to_string();
        for (index, quoted) in text.split('`').enumerate() {
            // Odd pieces are inside backticks.
            if index % 2 == 0 || !DOC_ROOTS.iter().any(|top| quoted.starts_with(top)) {
                continue;
            }
            if quoted.contains(['<', '*', '{', ' ', '|']) {
                continue;
            }
            let path = quoted.split([':', '#']).next().unwrap_or(quoted);
            if !root.join(path).exists() {
                missing.push(format!("{name}: {path}"));
            }
        }
    }
    if !missing.is_empty() {
        missing.sort();
        missing.dedup();
        bail!("tidy: the docs name paths that do not exist (fix the docs or the path): {missing:#?}");
    }
    Ok(())
}

/// cargo-deny for licenses, bans and sources. The advisory database lives on GitHub, which
/// this project's machines cannot reach, so advisories are checked where a network allows.
fn deny() -> anyhow::Result<()> {
    if !succeeds("cargo", &["deny", "--version"]) {
        run("cargo", &["install", "cargo-deny", "--locked"])?;
    }
    run("cargo", &["deny", "--all-features", "check", "bans", "licenses", "sources"])
}

fn bench(quick: bool) -> anyhow::Result<()> {
    let mut cargo_args = vec!["bench", "--workspace", "--locked"];
    if quick {
        cargo_args.extend(["--", "--quick"]);
    }
    // The PostgreSQL store's data sets live in a durable cluster kept between runs (building
    // 5M logs takes a while), unless SLUICE_BENCH_PG names a server.
    let (url, cluster) = match std::env::var("SLUICE_BENCH_PG") {
        Ok(url) if !url.is_empty() => (url, None),
        _ => {
            let root = Path::new(env!("CARGO_MANIFEST_DIR")).parent().context("xtask lives in the workspace")?;
            let cluster =
                postgres::Cluster::kept_at(&root.join("target/bench-data/postgres")).map_err(anyhow::Error::msg)?;
            (cluster.url(), Some(cluster))
        }
    };
    // The rate limiter's Redis figures: SLUICE_BENCH_REDIS, else a throwaway server.
    let (redis_url, redis) = match std::env::var("SLUICE_BENCH_REDIS") {
        Ok(url) if !url.is_empty() => (url, None),
        _ => {
            let server = redis::Server::start().map_err(anyhow::Error::msg)?;
            (server.url(), Some(server))
        }
    };
    let result = run_in_env("cargo", &cargo_args, &[("SLUICE_BENCH_PG", &url), ("SLUICE_BENCH_REDIS", &redis_url)]);
    drop(cluster);
    drop(redis);
    result
}

/// Runs `command` with a throwaway cluster as `SLUICE_TEST_PG` and Redis as `SLUICE_TEST_REDIS`.
fn with_pg(command: &[String]) -> anyhow::Result<()> {
    let Some((program, args)) = command.split_first() else {
        bail!("usage: cargo xtask with-pg <command...>");
    };
    setup::ensure()?;
    let cluster = postgres::Cluster::start("ci").map_err(anyhow::Error::msg)?;
    let url = cluster.url();
    let (redis_url, redis) = redis::for_tests().map_err(anyhow::Error::msg)?;
    let args: Vec<&str> = args.iter().map(String::as_str).collect();
    let result = run_in_env(program, &args, &[("SLUICE_TEST_PG", &url), ("SLUICE_TEST_REDIS", &redis_url)]);
    drop(cluster);
    drop(redis);
    result
}
