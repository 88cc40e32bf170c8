//! Read latency of the SQLite store at scale, and its batch inserts.
//!
//! `cargo bench -p sluice-store-sqlite --bench queries` (or `cargo xtask bench`). The first run
//! builds `target/bench-data/queries-<total>.db` through the store itself (5M logs, 1M of them
//! in the measured workspace; `--quick`: 500k and 100k) from loghub lines, and later runs reuse
//! it. Measured: search for a term in 0.01% of the workspace's logs, a phrase as rare, a
//! common phrase, stats for 30 days by day and by source, the summary, and the newest page of
//! the list under each single filter; then a 100- and a 5,000-log batch insert into a 100k-log
//! store.

use std::path::PathBuf;
use std::sync::Arc;
use std::time::Instant;

use criterion::{Criterion, criterion_group};
use sluice_model::WorkspaceId;
use sluice_store::bench::{fill, measured, sizes};
use sluice_store_sqlite::SqliteStore;

/// Opens the cached data set, building it first when missing. Call inside `runtime`'s
/// context (the pool needs it, also when dropped).
fn data_set(runtime: &tokio::runtime::Runtime) -> (Arc<SqliteStore>, WorkspaceId) {
    let (total, main) = sizes();
    let dir = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../target/bench-data");
    std::fs::create_dir_all(&dir).expect("bench data dir");
    let path = dir.join(format!("queries-{total}.db"));
    let ready = dir.join(format!("queries-{total}.ready"));
    if !ready.exists() {
        let _ = std::fs::remove_file(&path);
        let started = Instant::now();
        let store = SqliteStore::open(&path).expect("create data set");
        runtime.block_on(fill(&store, total, main));
        std::fs::write(&ready, "built\n").expect("marker");
        eprintln!("built {} in {:.0} s", path.display(), started.elapsed().as_secs_f64());
    }
    let store = Arc::new(SqliteStore::open(&path).expect("open data set"));
    let workspace = runtime.block_on(measured(store.as_ref()));
    (store, workspace)
}

fn reads(criterion: &mut Criterion) {
    let runtime = tokio::runtime::Builder::new_current_thread().enable_all().build().expect("runtime");
    let _context = runtime.enter();
    let (store, workspace) = data_set(&runtime);
    sluice_store::bench::reads(criterion, "sqlite_reads", &runtime, store.as_ref(), workspace);
}

/// One batch of 100 and of 5,000 logs into a store of 100k logs.
fn ingest(criterion: &mut Criterion) {
    let runtime = tokio::runtime::Builder::new_current_thread().enable_all().build().expect("runtime");
    let _context = runtime.enter();
    let dir = tempfile::tempdir().expect("temp dir");
    let store = SqliteStore::open(&dir.path().join("ingest.db")).expect("store");
    sluice_store::bench::inserts(criterion, "sqlite_insert", &runtime, &store);
}

criterion_group!(benches, ingest, reads);

fn main() {
    benches();
    Criterion::default().configure_from_args().final_summary();
}
