//! `cargo xtask bench flows [--logs N] [--store sqlite|postgres]`: the flow benchmark over
//! HTTP (issue 26).
//!
//! For each store it starts the release `sluice serve` on a fresh database, sends it `--logs`
//! logs (1M by default) made by `sluice-loadgen flows-ingest`: the search benchmark's logs, ten
//! a flow (100k flows at 1M) but the newest 1,000, one flow of 1,000 steps
//! (`bins/sluice-loadgen/src/flows.rs`); then `sluice-loadgen flows-queries` reads the flow
//! list's newest page, a page 5,000 flows in, the 1,000-step timeline and 10-step timelines,
//! 30 times each, and, signed in as the first admin, the web dashboard explorer's first page
//! as its script loads it (issue 29), 30 times. Each store's table goes between its markers in docs/PERFORMANCE.md
//! (`flows-bench-sqlite`, `flows-bench-postgres`).

use std::path::Path;

use anyhow::bail;
use sluice_testkit::cluster as postgres;

use crate::ingest::{Server, fresh, settle, utc_now, write_between_markers};
use crate::search::{ingest_fields, loadgen, query_rows};

pub(crate) fn bench(root: &Path, logs: u64, stores: &[bool]) -> anyhow::Result<()> {
    crate::run("cargo", &["build", "--release", "--locked", "-p", "sluice", "-p", "sluice-loadgen"])?;
    let cluster = postgres::Cluster::kept_at(&root.join("target/bench-data/postgres")).map_err(anyhow::Error::msg)?;
    for &sqlite in stores {
        let (name, marker) =
            if sqlite { ("SQLite", "flows-bench-sqlite") } else { ("PostgreSQL", "flows-bench-postgres") };
        let mut table =
            String::from("| read | p50 ms | p95 ms | max ms | 5xx | items answered |\n|---|---|---|---|---|---|\n");
        let url = fresh(root, (!sqlite).then_some(&cluster), "sluice_flows_bench")?;
        let server = Server::start(root, &url, &[])?;
        settle();
        let fields = ingest_fields(&loadgen(root, &server, "flows-ingest", logs)?, "flows-ingest")?;
        let Some(rate) = fields.get(3) else { bail!("flows-ingest printed {fields:?}") };
        table.push_str(&query_rows(&loadgen(root, &server, "flows-queries", logs)?));
        drop(server);
        let flows = logs.saturating_sub(1_000) / 10 + 1;
        let text = format!(
            "{name}, measured {} by `cargo xtask bench flows` with {logs} logs in {flows} flows in one workspace \
             (ingested at {rate} logs/s, 32 connections, 100-entry JSON batches, every log in a flow):\n\n{table}",
            utc_now()
        );
        println!("\n{text}");
        write_between_markers(root, marker, &text)?;
    }
    Ok(())
}
