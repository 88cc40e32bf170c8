//! The `sluice` binary: reads configuration, sets up tracing, and hands over to `serve` or to
//! the admin commands. Everything else lives in the library crates.

mod admin;
mod cli;
mod serve;

use std::process::ExitCode;
use std::sync::Arc;

use clap::Parser;
use sluice_store::Store;

use crate::cli::{Cli, Command};

/// mimalloc instead of the system allocator: ingest allocates many small strings per entry,
/// and glibc's malloc spent a third of the parsers' time on them (see docs/PERFORMANCE.md).
#[global_allocator]
static GLOBAL: mimalloc::MiMalloc = mimalloc::MiMalloc;

/// Opens the store a database URL names, creating its schema when needed.
fn open_store(url: &str) -> anyhow::Result<Arc<dyn Store>> {
    if let Some(path) = sluice_store_sqlite::path_from_url(url) {
        let store = sluice_store_sqlite::SqliteStore::open(&path)
            .map_err(|error| anyhow::anyhow!("cannot open the SQLite database {}: {error}", path.display()))?;
        return Ok(Arc::new(store));
    }
    if url.starts_with("postgres://") || url.starts_with("postgresql://") {
        anyhow::bail!("this build of sluice has no PostgreSQL store yet; use a sqlite:// URL");
    }
    anyhow::bail!("unsupported database URL (expected sqlite://PATH or postgres://...)")
}

#[actix_web::main]
async fn main() -> ExitCode {
    let cli = Cli::parse();
    let filter = tracing_subscriber::EnvFilter::try_new(&cli.log).unwrap_or_else(|_| "info".into());
    tracing_subscriber::fmt().with_env_filter(filter).with_writer(std::io::stderr).init();

    let result = async {
        let store = open_store(&cli.database_url)?;
        match cli.command {
            Command::Serve(options) => serve::run(store, options).await,
            Command::Admin(command) => admin::run(store.as_ref(), command).await,
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
