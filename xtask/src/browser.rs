//! The dashboard's browser suite (`cargo xtask browser`, and part of `ci`): playwright-core and
//! axe-core from npm, pinned in `bins/sluice/tests/browser/package.json` and installed into
//! `target/browser`, drive Debian's Chromium (`/usr/bin/chromium`, which `setup.rs` makes
//! present) against the debug `sluice serve` on a fresh SQLite file: `dashboard.mjs` signs in
//! with the first start's admin and goes through every page. Screenshots of each page, light
//! and dark, are written to `target/browser/screenshots`, and the timings the run measured to
//! `target/browser/figures.json` (written down in docs/PERFORMANCE.md, never asserted).

use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};

use anyhow::Context;

use crate::{run, run_in_env};

/// The files of `bins/sluice/tests/browser` copied next to the installed packages (Node.js
/// resolves imports from the script's folder).
const FILES: [&str; 2] = ["package.json", "dashboard.mjs"];

/// Installs the packages when their pinned list changed, and returns the folder.
fn prepare(root: &Path) -> anyhow::Result<PathBuf> {
    let source = root.join("bins/sluice/tests/browser");
    let dir = root.join("target/browser");
    std::fs::create_dir_all(&dir)?;
    let installed = dir.join("package.json.installed");
    let changed = std::fs::read(source.join("package.json")).ok() != std::fs::read(&installed).ok()
        || !dir.join("node_modules").is_dir();
    for name in FILES {
        std::fs::copy(source.join(name), dir.join(name)).with_context(|| format!("copy {name}"))?;
    }
    if changed {
        let prefix = dir.display().to_string();
        run("npm", &["install", "--no-audit", "--no-fund", "--loglevel=error", "--prefix", &prefix])?;
        std::fs::copy(source.join("package.json"), installed)?;
    }
    Ok(dir)
}

/// Builds the debug binary, starts it on a fresh SQLite file and runs the suite against it.
pub fn run_all(root: &Path) -> anyhow::Result<()> {
    let dir = prepare(root)?;
    crate::build_debug_binary()?;
    let data = dir.join("server");
    let _ = std::fs::remove_dir_all(&data);
    std::fs::create_dir_all(&data)?;
    let database = format!("sqlite://{}", data.join("sluice.db").display());
    let port = std::net::TcpListener::bind("127.0.0.1:0")?.local_addr()?.port();
    let binary = root.join("target/debug/sluice");
    let mut child = Command::new(&binary)
        .args(["serve", "--listen", &format!("127.0.0.1:{port}")])
        .env("SLUICE_DATABASE_URL", &database)
        .env("SLUICE_LOG", "warn")
        .stdout(Stdio::piped())
        .spawn()
        .context("cannot start target/debug/sluice")?;
    let result = crate::ingest::first_start(&mut child).and_then(|(key, password)| {
        let url = format!("http://127.0.0.1:{port}");
        let (shots, figures) = (dir.join("screenshots"), dir.join("figures.json"));
        let (binary, shots, figures) =
            (binary.display().to_string(), shots.display().to_string(), figures.display().to_string());
        let env = [
            ("SLUICE_URL", url.as_str()),
            ("SLUICE_KEY", key.as_str()),
            ("SLUICE_PASSWORD", password.as_str()),
            ("SLUICE_BIN", binary.as_str()),
            ("SLUICE_DATABASE_URL", database.as_str()),
            ("SLUICE_SCREENSHOTS", shots.as_str()),
            ("SLUICE_FIGURES", figures.as_str()),
        ];
        let script = dir.join("dashboard.mjs").display().to_string();
        run_in_env("node", &[&script], &env)
    });
    let _ = child.kill();
    let _ = child.wait();
    result
}
