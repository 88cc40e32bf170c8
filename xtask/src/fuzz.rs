//! The fuzz targets of `fuzz/` (cargo-fuzz's layout), built and run without cargo-fuzz or a
//! nightly toolchain: the same coverage instrumentation cargo-fuzz asks of rustc
//! (`-Cpasses=sancov-module` and the `sanitizer-coverage` options, all stable) without its
//! AddressSanitizer (nightly only; the targets are safe Rust), for the host target so build
//! scripts and proc macros stay uninstrumented. Each target starts from the seeds
//! `fuzz/seed.sh` copies from `../shared/corpus` and runs for a set time; a crash fails the run
//! and libFuzzer writes the input that caused it into the working directory.

use std::path::Path;
use std::process::Command;

use anyhow::{Context, bail};

/// Seconds each target runs in `cargo xtask ci`.
pub const CI_SECONDS: u32 = 10;

/// What cargo-fuzz passes to rustc, less the nightly-only sanitizer flags.
const RUSTFLAGS: &str = "--cfg fuzzing -Cpasses=sancov-module -Cllvm-args=-sanitizer-coverage-level=4 \
     -Cllvm-args=-sanitizer-coverage-inline-8bit-counters -Cllvm-args=-sanitizer-coverage-pc-table \
     -Cllvm-args=-sanitizer-coverage-trace-compares -Cdebug-assertions -Coverflow-checks";

/// The targets `fuzz/Cargo.toml` declares, in order (each `[[bin]]`'s `name`).
fn targets(manifest: &str) -> Vec<String> {
    let mut targets = Vec::new();
    let mut in_bin = false;
    for line in manifest.lines().map(str::trim) {
        if line.starts_with('[') {
            in_bin = line == "[[bin]]";
        } else if in_bin && let Some(name) = line.strip_prefix("name = ") {
            targets.push(name.trim_matches('"').to_owned());
        }
    }
    targets
}

/// The host's target triple, from `rustc -vV`.
fn host() -> anyhow::Result<String> {
    let output = Command::new("rustc").arg("-vV").output().context("cannot run rustc")?;
    String::from_utf8_lossy(&output.stdout)
        .lines()
        .find_map(|line| line.strip_prefix("host: ").map(str::to_owned))
        .context("rustc -vV names no host")
}

/// Builds every target and runs each for `seconds`.
pub fn run_all(root: &Path, seconds: u32) -> anyhow::Result<()> {
    let fuzz = root.join("fuzz");
    let targets = targets(&std::fs::read_to_string(fuzz.join("Cargo.toml"))?);
    let host = host()?;
    let target_dir = root.join("target/fuzz");
    eprintln!("\n$ fuzz: building {} targets for {host} (libFuzzer coverage, stable rustc)", targets.len());
    let status = Command::new("cargo")
        .args(["build", "--release", "--locked", "--target", &host, "--target-dir"])
        .arg(&target_dir)
        .current_dir(&fuzz)
        .env("RUSTFLAGS", RUSTFLAGS)
        .status()
        .context("cannot run cargo")?;
    if !status.success() {
        bail!("building the fuzz targets failed ({status})");
    }
    crate::run("bash", &[&fuzz.join("seed.sh").to_string_lossy()])?;
    for target in &targets {
        let corpus = fuzz.join("corpus").join(target);
        std::fs::create_dir_all(&corpus)?;
        let binary = target_dir.join(&host).join("release").join(target);
        eprintln!("$ fuzz: {target} for {seconds} s");
        let output = Command::new(&binary)
            .arg(format!("-max_total_time={seconds}"))
            .args(["-rss_limit_mb=2048", "-timeout=10", "-print_final_stats=1"])
            .arg(&corpus)
            .current_dir(&target_dir)
            .output()
            .with_context(|| format!("cannot run {}", binary.display()))?;
        let log = String::from_utf8_lossy(&output.stderr);
        if !output.status.success() {
            bail!("fuzz target {target} failed ({}):\n{log}", output.status);
        }
        let runs = log.lines().find_map(|line| line.strip_prefix("stat::number_of_executed_units:")).unwrap_or("?");
        eprintln!("  {target}: {} runs, no crash", runs.trim());
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn targets_are_read_from_the_manifest() {
        let manifest = "[package]\nname = \"x\"\n\n[[bin]]\nname = \"json\"\npath = \"a.rs\"\n\n[dependencies]\nname = \"no\"\n\n[[bin]]\nname = \"text\"\n";
        assert_eq!(targets(manifest), ["json", "text"]);
    }
}
