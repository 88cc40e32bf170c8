//! The real clients of `bins/sluice/tests/shippers.rs` (`cargo xtask shippers`, and part of
//! `ci`): the OpenTelemetry Python SDK from PyPI into a virtualenv and the OpenTelemetry JS SDK,
//! pino and pino-http-send from npm, installed into `target/shippers` with the versions pinned in
//! `bins/sluice/tests/shippers/`, then that test run against the real binary; and schemathesis
//! (from the same virtualenv) against a live `sluice serve`, checking every answer against
//! `/openapi.json` (`api_check.py`).

use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};

use anyhow::Context;

use crate::{run, run_in_env, succeeds};

/// The files of `bins/sluice/tests/shippers` copied next to the installed clients (Node.js
/// resolves `require` from the script's folder).
const FILES: [&str; 6] =
    ["requirements.txt", "package.json", "otel_python.py", "otel_js.js", "pino.js", "api_check.py"];

/// Installs the clients when their pinned lists changed, and returns the folder.
fn prepare(root: &Path) -> anyhow::Result<PathBuf> {
    let source = root.join("bins/sluice/tests/shippers");
    let dir = root.join("target/shippers");
    std::fs::create_dir_all(&dir)?;
    let changed = |name: &str| -> bool {
        let installed = dir.join(format!("{name}.installed"));
        std::fs::read(source.join(name)).ok() != std::fs::read(installed).ok()
    };
    let python_changed = changed("requirements.txt") || !dir.join("venv/bin/python").is_file();
    let node_changed = changed("package.json") || !dir.join("node_modules").is_dir();
    for name in FILES {
        std::fs::copy(source.join(name), dir.join(name)).with_context(|| format!("copy {name}"))?;
    }
    let path = |relative: &str| dir.join(relative).display().to_string();
    if python_changed {
        run("python3", &["-m", "venv", &path("venv")])?;
        let pip = path("venv/bin/pip");
        run(&pip, &["install", "--quiet", "--disable-pip-version-check", "-r", &path("requirements.txt")])?;
        std::fs::copy(source.join("requirements.txt"), dir.join("requirements.txt.installed"))?;
    }
    if node_changed {
        run("npm", &["install", "--no-audit", "--no-fund", "--loglevel=error", "--prefix", &path("")])?;
        std::fs::copy(source.join("package.json"), dir.join("package.json.installed"))?;
    }
    Ok(dir)
}

/// Prepares the clients and runs the ignored tests that use them, then the schema check.
pub fn run_all(root: &Path) -> anyhow::Result<()> {
    let prepared = prepare(root)?;
    let dir = prepared.display().to_string();
    let env = [("SLUICE_SHIPPERS_DIR", dir.as_str())];
    if succeeds("cargo", &["nextest", "--version"]) {
        let filter = "binary_id(sluice::shippers)";
        let args = ["nextest", "run", "--workspace", "--locked", "-E", filter, "--run-ignored", "only"];
        run_in_env("cargo", &args, &env)?;
    } else {
        run_in_env("cargo", &["test", "--locked", "-p", "sluice", "--test", "shippers", "--", "--ignored"], &env)?;
    }
    api_check(root, &prepared)
}

/// schemathesis against the debug binary on a fresh SQLite file, with its first-start key and
/// its first admin's session.
fn api_check(root: &Path, dir: &Path) -> anyhow::Result<()> {
    crate::build_debug_binary()?;
    let data = dir.join("api-check");
    let _ = std::fs::remove_dir_all(&data);
    std::fs::create_dir_all(&data)?;
    let port = std::net::TcpListener::bind("127.0.0.1:0")?.local_addr()?.port();
    let mut child = Command::new(root.join("target/debug/sluice"))
        .args(["serve", "--listen", &format!("127.0.0.1:{port}")])
        .env("SLUICE_DATABASE_URL", format!("sqlite://{}", data.join("sluice.db").display()))
        .env("SLUICE_LOG", "warn")
        .stdout(Stdio::piped())
        .spawn()
        .context("cannot start target/debug/sluice")?;
    let checked = crate::ingest::first_start(&mut child).and_then(|(key, password)| {
        let python = dir.join("venv/bin/python").display().to_string();
        let script = dir.join("api_check.py").display().to_string();
        run(&python, &[&script, &format!("http://127.0.0.1:{port}"), &key, &password])
    });
    let _ = child.kill();
    let _ = child.wait();
    checked
}
