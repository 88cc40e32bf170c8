//! What `cargo xtask ci` needs from the system, made present before anything runs: the
//! PostgreSQL server binaries and `redis-server` for the throwaway test servers (unless
//! `SLUICE_TEST_PG` / `SLUICE_TEST_REDIS` name servers), libpq's headers for diesel's
//! CLI (the schema check), a C++ compiler for libFuzzer (the fuzz targets), and Python's venv,
//! Node.js and npm for the real clients of the shipper tests, and Chromium for the dashboard's
//! browser suite. Run as root, xtask installs what is missing with `apt-get` and says
//! so in one line; otherwise it prints the exact command and stops.

use std::path::Path;
use std::process::Command;

use anyhow::{Context, bail};
use sluice_testkit::cluster;

/// A system package the run needs, and how to tell it is there.
struct Need {
    /// What it is for, in a few words.
    what: &'static str,
    /// The Debian package that brings it.
    package: &'static str,
    /// Whether it is present (or not needed, because a variable names a server).
    present: fn() -> bool,
}

/// Whether `program` is on the `PATH`.
fn on_path(program: &str) -> bool {
    std::env::var_os("PATH").is_some_and(|path| std::env::split_paths(&path).any(|dir| dir.join(program).is_file()))
}

/// Whether the environment variable names something.
fn named(variable: &str) -> bool {
    std::env::var(variable).is_ok_and(|value| !value.is_empty())
}

const NEEDS: [Need; 8] = [
    Need {
        what: "PostgreSQL's initdb and pg_ctl, for the throwaway test cluster (or set SLUICE_TEST_PG)",
        package: "postgresql",
        present: || named("SLUICE_TEST_PG") || cluster::binaries().is_some(),
    },
    Need {
        what: "the throwaway test Redis server (or set SLUICE_TEST_REDIS)",
        package: "redis-server",
        present: || named("SLUICE_TEST_REDIS") || on_path("redis-server"),
    },
    Need {
        what: "libpq's headers, for diesel's CLI (built once for the schema check)",
        package: "libpq-dev",
        present: || Path::new("/usr/include/postgresql/libpq-fe.h").is_file(),
    },
    Need {
        what: "a C++ compiler, for libFuzzer (the fuzz targets `cargo xtask ci` runs)",
        package: "g++",
        present: || on_path("c++") || on_path("g++"),
    },
    Need {
        what: "Python's venv with pip, for the OpenTelemetry Python SDK the shipper tests run",
        package: "python3-venv",
        present: || {
            Command::new("python3")
                .args(["-c", "import ensurepip, venv"])
                .output()
                .is_ok_and(|out| out.status.success())
        },
    },
    Need {
        what: "Node.js, for the OpenTelemetry JS SDK and pino the shipper tests run",
        package: "nodejs",
        present: || on_path("node"),
    },
    Need { what: "npm, to install those Node.js clients", package: "npm", present: || on_path("npm") },
    Need {
        what: "Chromium, the browser the dashboard's browser suite drives",
        package: "chromium",
        present: || Path::new("/usr/bin/chromium").is_file(),
    },
];

/// Installs the missing packages (as root) or stops with the command to run.
pub fn ensure() -> anyhow::Result<()> {
    let missing: Vec<&Need> = NEEDS.iter().filter(|need| !(need.present)()).collect();
    if missing.is_empty() {
        return Ok(());
    }
    let packages: Vec<&str> = missing.iter().map(|need| need.package).collect();
    let command = format!("apt-get install -y {}", packages.join(" "));
    if !cluster::is_root() || !on_path("apt-get") {
        let reasons: Vec<String> = missing.iter().map(|need| format!("  - {}: {}", need.package, need.what)).collect();
        bail!(
            "missing system packages:\n{}\ninstall them, then run `cargo xtask ci` again:\n\n    sudo {command}\n",
            reasons.join("\n")
        );
    }
    eprintln!("setup: installing {} with apt-get (missing on this machine)", packages.join(", "));
    let quiet = |args: &[&str]| -> anyhow::Result<()> {
        let status = Command::new("apt-get")
            .args(args)
            .env("DEBIAN_FRONTEND", "noninteractive")
            .status()
            .context("cannot run apt-get")?;
        if !status.success() {
            bail!("`apt-get {}` failed ({status})", args.join(" "));
        }
        Ok(())
    };
    quiet(&["update", "-qq"])?;
    let mut install = vec!["install", "-y", "-qq", "--no-install-recommends"];
    install.extend(&packages);
    quiet(&install)?;
    let still: Vec<&str> = NEEDS.iter().filter(|need| !(need.present)()).map(|need| need.package).collect();
    if !still.is_empty() {
        bail!("apt-get installed {} but these are still missing: {}", packages.join(" "), still.join(" "));
    }
    Ok(())
}
