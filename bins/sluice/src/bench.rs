//! The ingest benchmark's stand-ins for the store's writes (`cargo xtask bench ingest`),
//! compiled only with the `bench` feature, which no production build enables: the naive
//! baseline writer (`--bench-naive-writes`) and the HTTP ceiling (`--bench-discard-writes`).

use std::sync::Arc;

use clap::Args;
use sluice_http::AppState;
use sluice_store::group::{GroupCommitter, GroupWriter};
use sluice_store::{GroupOptions, StoreError, WriteBatch};

/// The benchmark's flags on `sluice serve`.
#[derive(Debug, Args)]
pub(crate) struct BenchOptions {
    /// Benchmarks only: answer `POST /v1/logs` after parsing and discard the logs, which
    /// measures the HTTP and parsing ceiling (`cargo xtask bench`).
    #[arg(long)]
    pub(crate) bench_discard_writes: bool,

    /// Benchmarks only: write `POST /v1/logs` batches the naive way (one transaction per
    /// request into a plain table with a trigram index; `sluice_store_*::naive`), the baseline
    /// of `cargo xtask bench`.
    #[arg(long)]
    pub(crate) bench_naive_writes: bool,
}

/// The naive baseline writer of the benchmark, on the database `url` names.
async fn naive_writer(url: &str) -> anyhow::Result<Arc<dyn GroupWriter>> {
    if let Some(path) = sluice_store_sqlite::path_from_url(url) {
        return Ok(Arc::new(sluice_store_sqlite::naive::NaiveWriter::open(&path)?));
    }
    Ok(Arc::new(sluice_store_pg::naive::NaiveWriter::connect(url).await?))
}

/// Puts the stand-in the flags name in place of the store's writer (the naive one wins).
pub(crate) async fn replace_writer(
    state: &mut AppState,
    database_url: &str,
    options: &BenchOptions,
) -> anyhow::Result<()> {
    let stand_in: (Arc<dyn GroupWriter>, GroupOptions) = if options.bench_naive_writes {
        tracing::warn!("--bench-naive-writes: logs go to the naive baseline's table, not the store");
        // Four writers, each taking one batch: a transaction per request, four at a time.
        (naive_writer(database_url).await?, GroupOptions { writers: 4, max_rows: 1, ..GroupOptions::default() })
    } else if options.bench_discard_writes {
        tracing::warn!("--bench-discard-writes: logs are parsed and thrown away, nothing is stored");
        (Arc::new(DiscardWrites), GroupOptions::default())
    } else {
        return Ok(());
    };
    state.writer.shutdown().await;
    state.writer = GroupCommitter::start(stand_in.0, stand_in.1);
    Ok(())
}

/// The benchmark's HTTP ceiling: a writer that acknowledges every batch and keeps none.
struct DiscardWrites;

#[async_trait::async_trait]
impl GroupWriter for DiscardWrites {
    async fn write_group(&self, group: &[WriteBatch]) -> Result<Vec<Result<(), StoreError>>, StoreError> {
        Ok(group.iter().map(|_| Ok(())).collect())
    }
}
