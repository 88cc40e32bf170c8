//! The `sluice` binary: reads configuration, sets up tracing, and hands over to `serve` or to
//! the admin commands. Everything else lives in the library crates.
//!
//! Invariant: the only place a backend is chosen (from `SLUICE_DATABASE_URL`); no test or
//! benchmark support in a default build (the benchmark's stand-ins need the `bench` feature;
//! `cargo xtask ci` checks no `sluice-testkit` or criterion is linked).

mod accounts;
mod admin;
mod allocator;
#[cfg(feature = "bench")]
mod bench;
mod cli;
mod client;
mod serve;
mod upgrade;

use std::io::IsTerminal;
use std::process::ExitCode;
use std::sync::Arc;
use std::time::Duration;

use clap::Parser;
use sluice_store::Store;

use crate::cli::{Cli, Command};

/// Opens the store a database URL names, creating its schema when needed.
async fn open_store(cli: &Cli) -> anyhow::Result<Arc<dyn Store>> {
    let url = cli.database_url.as_str();
    if let Some(path) = sluice_store_sqlite::path_from_url(url) {
        let options = sluice_store_sqlite::SqliteOptions {
            wait_timeout: Duration::from_millis(cli.db_timeout_ms),
            call_timeout: Duration::from_millis(cli.db_call_timeout_ms),
            max_bytes: cli.sqlite_max_bytes,
            ..sluice_store_sqlite::SqliteOptions::default()
        };
        let store = sluice_store_sqlite::SqliteStore::open_with(&path, &options)
            .map_err(|error| anyhow::anyhow!("cannot open the SQLite database {}: {error}", path.display()))?;
        return Ok(Arc::new(store));
    }
    if url.starts_with("postgres://") || url.starts_with("postgresql://") {
        let timeout = Duration::from_millis(cli.db_timeout_ms);
        let options = sluice_store_pg::PgOptions {
            pool_size: cli.db_pool_size,
            wait_timeout: timeout,
            create_timeout: timeout,
            recycle_timeout: timeout,
            call_timeout: Duration::from_millis(cli.db_call_timeout_ms),
            ..sluice_store_pg::PgOptions::default()
        };
        let store = sluice_store_pg::PgStore::connect(url, &options)
            .await
            .map_err(|error| anyhow::anyhow!("cannot open the PostgreSQL database: {error}"))?;
        return Ok(Arc::new(store));
    }
    anyhow::bail!("unsupported database URL (expected sqlite://PATH or postgres://...)")
}

fn main() -> ExitCode {
    // Before the runtime starts its threads: the allocator's options are read without locks.
    allocator::tune();
    actix_web::rt::System::new().block_on(run())
}

/// Parses the command line and runs the command it names.
async fn run() -> ExitCode {
    // Exit codes of docs/API.md (Command-line client): a usage error is 1 (clap's own is 2,
    // which here means "the server refused").
    let cli = match Cli::try_parse() {
        Ok(cli) => cli,
        Err(error) => {
            let _ = error.print();
            return if error.use_stderr() { ExitCode::from(1) } else { ExitCode::SUCCESS };
        }
    };
    let filter = tracing_subscriber::EnvFilter::try_new(&cli.log).unwrap_or_else(|_| "info".into());
    // Colour only on a terminal that wants it: a log file or a journal gets plain lines.
    let colour = std::io::stderr().is_terminal() && std::env::var_os("NO_COLOR").is_none_or(|value| value.is_empty());
    tracing_subscriber::fmt().with_env_filter(filter).with_writer(std::io::stderr).with_ansi(colour).init();

    if matches!(cli.command, Command::Client(_)) {
        // A client of a running server: no database here.
        let Command::Client(command) = cli.command else { return ExitCode::FAILURE };
        return ExitCode::from(client::run(command).await);
    }
    let result = async move {
        let store = open_store(&cli).await?;
        if let Some(progress) = store.upgrade_progress() {
            upgrade::show(progress);
        }
        match cli.command {
            Command::Serve(options) => {
                allocator::start_purger();
                serve::run(store, &cli.database_url, options).await
            }
            Command::Admin(command) => admin::run(store.as_ref(), command).await,
            Command::Client(_) => Ok(()),
        }
    }
    .await;
    match result {
        Ok(()) => ExitCode::SUCCESS,
        Err(error) => {
            eprintln!("error: {error:#}");
            ExitCode::FAILURE
        }
    }
}
