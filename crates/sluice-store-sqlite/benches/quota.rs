//! What the monthly quota check adds to an insert on SQLite (issue 6: ≤ 100 µs p50).
//!
//! `cargo bench -p sluice-store-sqlite --bench quota`. The check is one statement in the
//! insert's write transaction ([`sluice_store_sqlite::COUNT_USAGE`]); measured here in a write
//! transaction that is rolled back (so no fsync, which the insert pays once either way),
//! against the same transaction empty. The difference is the check's cost.

use std::time::Duration;

use criterion::{Criterion, criterion_group};
use diesel::connection::SimpleConnection;
use diesel::sql_types::{BigInt, Binary};
use diesel::{Connection, QueryableByName, RunQueryDsl, SqliteConnection};
use sluice_model::{Limits, Plan, Workspace};
use sluice_store::TenantStore;
use sluice_store_sqlite::{COUNT_USAGE, SqliteStore};

#[derive(QueryableByName)]
struct Counted {
    #[diesel(sql_type = BigInt)]
    #[diesel(column_name = logs)]
    _logs: i64,
}

fn quota(criterion: &mut Criterion) {
    let runtime = tokio::runtime::Builder::new_current_thread().enable_all().build().expect("runtime");
    let _context = runtime.enter();
    let dir = tempfile::tempdir().expect("temp dir");
    let path = dir.path().join("quota.db");
    let store = SqliteStore::open(&path).expect("store");
    let mut workspace = Workspace::new("metered", Plan::Pro, 0);
    workspace.limits = Limits { logs_per_month: Some(u64::MAX >> 2), ..Plan::Pro.limits() };
    runtime.block_on(store.create_workspace(&workspace)).expect("workspace");
    let id = workspace.id.as_bytes().to_vec();
    let mut connection = SqliteConnection::establish(path.to_str().expect("utf-8")).expect("connect");
    connection.batch_execute("PRAGMA busy_timeout = 5000").expect("pragma");

    let mut group = criterion.benchmark_group("quota_check_sqlite");
    group.measurement_time(Duration::from_secs(5));
    group.bench_function("empty_write_transaction", |bencher| {
        bencher.iter(|| connection.batch_execute("BEGIN IMMEDIATE; ROLLBACK").expect("transaction"));
    });
    group.bench_function("write_transaction_with_check", |bencher| {
        bencher.iter(|| {
            connection.batch_execute("BEGIN IMMEDIATE").expect("begin");
            let counted: Vec<Counted> = diesel::sql_query(COUNT_USAGE)
                .bind::<Binary, _>(id.as_slice())
                .bind::<BigInt, _>(1_793_491_200_000_i64)
                .bind::<BigInt, _>(100_i64)
                .load(&mut connection)
                .expect("check");
            assert_eq!(counted.len(), 1);
            connection.batch_execute("ROLLBACK").expect("rollback");
        });
    });
    group.finish();
}

criterion_group!(benches, quota);

fn main() {
    benches();
    Criterion::default().configure_from_args().final_summary();
}
