//! `crates/sluice-store-pg/src/schema.rs` is diesel's own output for `migrations/postgres`,
//! but for the tables both stores share (`crates/sluice-store-diesel/src/schema.rs`, checked
//! by each store's `shared_tables_match_the_migrations` test):
//! `cargo xtask ci` migrates a scratch database with diesel's CLI, prints its schema and
//! fails when the file differs; `cargo xtask pg-schema` writes it instead.
//!
//! The CLI is built once into `target/tools` (a fixed version, linked against the system's
//! libpq), so no global install is needed.

use std::path::{Path, PathBuf};
use std::process::Command;

use anyhow::{Context, bail};

const DIESEL_CLI_VERSION: &str = "2.3.2";
const SCHEMA: &str = "crates/sluice-store-pg/src/schema.rs";
/// The tables `sluice_store_diesel::schema` defines for both stores, and `logs` (rows of
/// earlier builds, read only as SQL by the upgrade), as print-schema's filter.
const EXCEPT_TABLES: [&str; 7] =
    ["^workspaces$", "^api_keys$", "^users$", "^memberships$", "^sessions$", "^device_codes$", "^logs$"];

/// diesel's CLI under `target/tools`, built when missing.
fn diesel_cli(root: &Path) -> anyhow::Result<PathBuf> {
    let tools = root.join("target/tools");
    let binary = tools.join("bin/diesel");
    let current = Command::new(&binary)
        .arg("--version")
        .output()
        .is_ok_and(|output| String::from_utf8_lossy(&output.stdout).contains(DIESEL_CLI_VERSION));
    if current {
        return Ok(binary);
    }
    eprintln!("\n$ cargo install diesel_cli {DIESEL_CLI_VERSION} into target/tools (once)");
    let status = Command::new("cargo")
        .args(["install", "diesel_cli", "--locked", "--version", DIESEL_CLI_VERSION])
        .args(["--no-default-features", "--features", "postgres", "--root"])
        .arg(&tools)
        .status()
        .context("cannot run cargo install")?;
    if !status.success() {
        bail!("building diesel's CLI failed: it links libpq (Debian: apt-get install libpq-dev)");
    }
    Ok(binary)
}

/// What diesel prints for the migrated schema, with a scratch database on `server_url`'s
/// server (created and dropped here).
fn printed(root: &Path, server_url: &str) -> anyhow::Result<String> {
    let diesel = diesel_cli(root)?;
    let base = server_url.split('?').next().unwrap_or(server_url);
    let server = base.rsplit_once('/').map_or(base, |(server, _)| server);
    let url = format!("{server}/sluice_schema_{}", std::process::id());
    let migrations = root.join("migrations/postgres");
    let run = |args: &[&str]| -> anyhow::Result<String> {
        let output = Command::new(&diesel)
            .args(args)
            .args(["--database-url", &url])
            .current_dir(root.join("target"))
            .output()
            .with_context(|| format!("cannot run diesel {}", args.join(" ")))?;
        if !output.status.success() {
            bail!("diesel {} failed: {}", args.join(" "), String::from_utf8_lossy(&output.stderr));
        }
        Ok(String::from_utf8_lossy(&output.stdout).into_owned())
    };
    let migration_dir = migrations.display().to_string();
    run(&["database", "reset", "--migration-dir", &migration_dir])?;
    let mut print = vec!["print-schema", "--except-tables"];
    print.extend(EXCEPT_TABLES);
    let schema = run(&print);
    let dropped = run(&["database", "drop"]);
    let schema = schema?;
    dropped?;
    Ok(schema)
}

/// Fails when the checked-in schema is not what diesel prints.
pub fn check(root: &Path, server_url: &str) -> anyhow::Result<()> {
    eprintln!("\n$ schema: {SCHEMA} is diesel print-schema of migrations/postgres");
    let expected = printed(root, server_url)?;
    let actual = std::fs::read_to_string(root.join(SCHEMA)).with_context(|| format!("cannot read {SCHEMA}"))?;
    if actual != expected {
        bail!("{SCHEMA} is not what diesel prints for migrations/postgres: run `cargo xtask pg-schema`");
    }
    Ok(())
}

/// Writes the schema diesel prints.
pub fn write(root: &Path, server_url: &str) -> anyhow::Result<()> {
    let schema = printed(root, server_url)?;
    std::fs::write(root.join(SCHEMA), schema).with_context(|| format!("cannot write {SCHEMA}"))?;
    eprintln!("wrote {SCHEMA}");
    Ok(())
}
