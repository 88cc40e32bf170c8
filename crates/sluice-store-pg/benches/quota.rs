//! What the monthly quota check adds to an insert on PostgreSQL (issue 6: ≤ 100 µs p50).
//!
//! `cargo bench -p sluice-store-pg --bench quota` with a server in `SLUICE_BENCH_PG` (`cargo
//! xtask bench` starts one). The check is one statement in the insert's transaction
//! (the function `sluice_count_usage` of migration `plans`, one cached prepared statement).
//! Measured here in a transaction that is rolled back (no commit, which the insert pays once
//! either way): empty (`BEGIN` and `ROLLBACK` as separate round trips, as in the insert); with
//! only the monthly usage counted (the upsert the insert ran before quotas, as an equal
//! function made here); and with the store's function, which also reads and compares the
//! quota. The month's usage row exists, as after its first batch.

use std::time::Duration;

use criterion::{Criterion, criterion_group};
use diesel::sql_types::{BigInt, Uuid};
use diesel_async::{AsyncConnection, AsyncPgConnection, RunQueryDsl, SimpleAsyncConnection};
use sluice_model::{Limits, Plan, Workspace};
use sluice_store::TenantStore;
use sluice_store_pg::testing::database_url;
use sluice_store_pg::{PgOptions, PgStore};

diesel::define_sql_function! {
    /// The store's quota check (migration `plans`).
    fn sluice_count_usage(ws: Uuid, in_month: BigInt, n: BigInt) -> Bool;
}

diesel::define_sql_function! {
    /// Counting alone: the same upsert without the quota (made by this bench).
    fn bench_count_only(ws: Uuid, in_month: BigInt, n: BigInt) -> Bool;
}

/// [`bench_count_only`]'s definition.
const COUNT_ONLY: &str = "CREATE FUNCTION bench_count_only(ws UUID, in_month BIGINT, n BIGINT) RETURNS BOOLEAN \
    LANGUAGE plpgsql AS $$ \
    BEGIN \
        INSERT INTO usage_monthly AS u (workspace_id, month, logs) VALUES (ws, in_month, n) \
            ON CONFLICT (workspace_id, month) DO UPDATE SET logs = u.logs + excluded.logs; \
        RETURN TRUE; \
    END $$";

fn server() -> String {
    std::env::var("SLUICE_BENCH_PG")
        .ok()
        .filter(|url| !url.is_empty())
        .expect("SLUICE_BENCH_PG names no server: run `cargo xtask bench`, which starts one")
}

fn quota(criterion: &mut Criterion) {
    let runtime = tokio::runtime::Builder::new_current_thread().enable_all().build().expect("runtime");
    let _context = runtime.enter();
    let name = "sluice_bench_quota";
    let url = runtime.block_on(async {
        let mut admin = AsyncPgConnection::establish(&server()).await.expect("connect to SLUICE_BENCH_PG");
        admin.batch_execute(&format!("DROP DATABASE IF EXISTS {name} WITH (FORCE)")).await.expect("drop");
        admin.batch_execute(&format!("CREATE DATABASE {name}")).await.expect("create");
        database_url(&server(), name)
    });
    let store = runtime.block_on(PgStore::connect(&url, &PgOptions::default())).expect("store");
    let mut workspace = Workspace::new("metered", Plan::Pro, 0);
    workspace.limits = Limits { logs_per_month: Some(u64::MAX >> 2), ..Plan::Pro.limits() };
    runtime.block_on(store.create_workspace(&workspace)).expect("workspace");
    let id = *workspace.id.as_uuid();
    let mut connection = runtime.block_on(AsyncPgConnection::establish(&url)).expect("connect");
    // As in service after a month's first batch: the month's usage row exists.
    let first: bool = runtime
        .block_on(diesel::select(sluice_count_usage(id, 1_793_491_200_000_i64, 1_i64)).get_result(&mut connection))
        .expect("first count");
    assert!(first);

    runtime.block_on(connection.batch_execute(COUNT_ONLY)).expect("counting function");
    let mut group = criterion.benchmark_group("quota_check_pg");
    group.measurement_time(Duration::from_secs(5));
    group.bench_function("empty_transaction", |bencher| {
        bencher.iter(|| {
            runtime.block_on(async {
                connection.batch_execute("BEGIN").await.expect("begin");
                connection.batch_execute("ROLLBACK").await.expect("rollback");
            });
        });
    });
    group.bench_function("transaction_with_counting_only", |bencher| {
        bencher.iter(|| {
            runtime.block_on(async {
                connection.batch_execute("BEGIN").await.expect("begin");
                let counted: bool = diesel::select(bench_count_only(id, 1_793_491_200_000_i64, 100_i64))
                    .get_result(&mut connection)
                    .await
                    .expect("count");
                assert!(counted);
                connection.batch_execute("ROLLBACK").await.expect("rollback");
            });
        });
    });
    group.bench_function("transaction_with_check", |bencher| {
        bencher.iter(|| {
            runtime.block_on(async {
                connection.batch_execute("BEGIN").await.expect("begin");
                let within: bool = diesel::select(sluice_count_usage(id, 1_793_491_200_000_i64, 100_i64))
                    .get_result(&mut connection)
                    .await
                    .expect("check");
                assert!(within);
                connection.batch_execute("ROLLBACK").await.expect("rollback");
            });
        });
    });
    group.finish();
}

criterion_group!(benches, quota);

fn main() {
    benches();
    Criterion::default().configure_from_args().final_summary();
}
