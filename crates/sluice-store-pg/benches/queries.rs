//! Read latency of the PostgreSQL store at scale, and its batch inserts.
//!
//! `cargo bench -p sluice-store-pg --bench queries` with a server in `SLUICE_BENCH_PG`
//! (`cargo xtask bench` gives it a durable cluster kept in `target/bench-data/postgres`). The
//! first run builds database `sluice_bench_<total>` through the store itself: the data set of
//! `sluice_store::bench` (5M logs, 1M in the measured workspace; `--quick`: 500k and 100k);
//! later runs reuse it. Then the same reads as the SQLite store's bench, and a 100- and a
//! 5,000-log batch insert into a 100k-log store.

use std::time::Instant;

use criterion::{Criterion, criterion_group};
use diesel::QueryableByName;
use diesel::sql_types::Bool;
use diesel_async::{AsyncConnection, AsyncPgConnection, RunQueryDsl, SimpleAsyncConnection};
use sluice_model::WorkspaceId;
use sluice_store::bench::{fill, measured, sizes};
use sluice_store_pg::testing::database_url;
use sluice_store_pg::{PgOptions, PgStore};

#[derive(QueryableByName)]
struct Flag {
    #[diesel(sql_type = Bool)]
    flag: bool,
}

/// The server the bench uses.
fn server() -> String {
    std::env::var("SLUICE_BENCH_PG")
        .ok()
        .filter(|url| !url.is_empty())
        .expect("SLUICE_BENCH_PG names no server: run `cargo xtask bench`, which starts one")
}

/// A fresh, empty database `name` on the bench server, and its URL.
async fn recreate(name: &str) -> String {
    let mut admin = AsyncPgConnection::establish(&server()).await.expect("connect to SLUICE_BENCH_PG");
    admin.batch_execute(&format!("DROP DATABASE IF EXISTS {name} WITH (FORCE)")).await.expect("drop");
    admin.batch_execute(&format!("CREATE DATABASE {name}")).await.expect("create");
    database_url(&server(), name)
}

/// Opens the kept data set, building it first when missing.
async fn data_set() -> (PgStore, WorkspaceId) {
    let (total, main) = sizes();
    let name = format!("sluice_bench_{total}");
    let url = database_url(&server(), &name);
    let ready = match AsyncPgConnection::establish(&url).await {
        Ok(mut connection) => diesel::sql_query("SELECT to_regclass('bench_ready') IS NOT NULL AS flag")
            .load::<Flag>(&mut connection)
            .await
            .is_ok_and(|rows| rows.as_slice().first().is_some_and(|row| row.flag)),
        Err(_) => false,
    };
    if !ready {
        let started = Instant::now();
        let url = recreate(&name).await;
        let store = PgStore::connect(&url, &PgOptions::default()).await.expect("connect");
        fill(&store, total, main).await;
        let mut connection = AsyncPgConnection::establish(&url).await.expect("connect");
        // As autovacuum leaves a settled database: statistics, and the visibility map that
        // lets the chunks' walk read their filters from its index alone.
        connection.batch_execute("VACUUM ANALYZE").await.expect("vacuum");
        connection.batch_execute("CREATE TABLE bench_ready ()").await.expect("mark ready");
        eprintln!("built {name} in {:.0} s", started.elapsed().as_secs_f64());
    }
    let store = PgStore::connect(&url, &PgOptions::default()).await.expect("open data set");
    let workspace = measured(&store).await;
    (store, workspace)
}

fn reads(criterion: &mut Criterion) {
    let runtime = tokio::runtime::Builder::new_current_thread().enable_all().build().expect("runtime");
    let _context = runtime.enter();
    let (store, workspace) = runtime.block_on(data_set());
    sluice_store::bench::reads(criterion, "pg_reads", &runtime, &store, workspace);
}

/// One batch of 100 and of 5,000 logs into a store of 100k logs.
fn ingest(criterion: &mut Criterion) {
    let runtime = tokio::runtime::Builder::new_current_thread().enable_all().build().expect("runtime");
    let _context = runtime.enter();
    let name = "sluice_bench_ingest";
    let url = runtime.block_on(recreate(name));
    let store = runtime.block_on(PgStore::connect(&url, &PgOptions::default())).expect("connect");
    sluice_store::bench::inserts(criterion, "pg_insert", &runtime, &store);
    drop(store);
    let mut admin = runtime.block_on(AsyncPgConnection::establish(&server())).expect("connect");
    runtime.block_on(admin.batch_execute(&format!("DROP DATABASE IF EXISTS {name} WITH (FORCE)"))).expect("drop");
}

criterion_group!(benches, ingest, reads);

fn main() {
    benches();
    Criterion::default().configure_from_args().final_summary();
}
