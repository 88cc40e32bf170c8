//! The store's own `ANALYZE` of the partitions written to most, on a real PostgreSQL server:
//! it gives way to an autovacuum holding the partition, instead of waiting for the lock until
//! PostgreSQL cancels the autovacuum (`deadlock_timeout` later) or the call's deadline passes.
//! Under sustained ingest that cancel came once a minute, so autovacuum never finished the
//! day's partition (`cargo xtask bench soak`, docs/PERFORMANCE.md).

use std::sync::Arc;

use sluice_model::{Log, Plan, Workspace};
use sluice_store::conformance::log;
use sluice_store::prelude::*;
use sluice_store_pg::testing::TestDatabase;
use sluice_store_pg::{PgOptions, PgStore};

/// 2026-11-22T00:00:00Z.
const NOW: i64 = 1_795_305_600_000;

/// More logs than a partition takes before the store analyzes it (10,000 changed rows).
const LOGS: usize = 12_000;

fn options() -> PgOptions {
    // 12,000 logs fill fewer chunks than a block: no insert starts a sealing task, which
    // analyzes too, so only `maintain` does.
    PgOptions { pool_size: 2, clock: Arc::new(|| NOW), ..PgOptions::default() }
}

async fn client(url: &str) -> tokio_postgres::Client {
    let (client, connection) = tokio_postgres::connect(url, tokio_postgres::NoTls).await.expect("connect");
    tokio::spawn(connection);
    client
}

/// The partition's changed rows since its statistics, and whether the store analyzed it.
async fn analyzed(client: &tokio_postgres::Client, partition: &str) -> (i64, bool) {
    let row = client
        .query_one(
            "SELECT n_mod_since_analyze, last_analyze IS NOT NULL FROM pg_stat_user_tables WHERE relname = $1",
            &[&partition],
        )
        .await
        .expect("statistics");
    (row.get(0), row.get(1))
}

#[tokio::test]
async fn the_stores_analyze_gives_way_to_an_autovacuum_holding_the_partition() {
    let database = TestDatabase::new("sluice_analyze").await;
    let admin = client(database.url()).await;
    let store = PgStore::connect(database.url(), &options()).await.expect("connect");
    let workspace = Workspace::new("w", Plan::Enterprise, NOW);
    store.create_workspace(&workspace).await.expect("workspace");

    // The day's partition, made by the first insert; this test's lock stands in for autovacuum,
    // so the server's own must not analyze it meanwhile.
    store.insert_logs(workspace.id, &[log("first", NOW + 1_000)]).await.expect("insert");
    let partition: String = admin
        .query_one(
            "SELECT c.relname::text FROM pg_inherits i JOIN pg_class c ON c.oid = i.inhrelid \
             WHERE i.inhparent = 'logs'::regclass AND c.relname LIKE 'logs_20261122%'",
            &[],
        )
        .await
        .expect("the day's partition")
        .get(0);
    admin
        .batch_execute(&format!("ALTER TABLE \"{partition}\" SET (autovacuum_enabled = false)"))
        .await
        .expect("autovacuum off on the partition");
    let logs: Vec<Log> = (0..LOGS).map(|n| log(&format!("log {n}"), NOW + 2_000 + n as i64)).collect();
    for batch in logs.chunks(100) {
        store.insert_logs(workspace.id, batch).await.expect("insert");
    }
    // A backend reports what it changed when it exits: the store's connections close with it.
    drop(store);
    let reported = async {
        while analyzed(&admin, &partition).await.0 <= 10_000 {
            tokio::task::yield_now().await;
        }
    };
    tokio::time::timeout(std::time::Duration::from_secs(60), reported)
        .await
        .expect("the store's closed connections never reported their inserts");
    let store = PgStore::connect(database.url(), &options()).await.expect("connect again");

    // Held as autovacuum holds a table it vacuums.
    let vacuum = client(database.url()).await;
    vacuum
        .batch_execute(&format!("BEGIN; LOCK TABLE \"{partition}\" IN SHARE UPDATE EXCLUSIVE MODE"))
        .await
        .expect("lock the partition");
    store.maintain().await.expect("housekeeping gives way instead of waiting for the lock");
    assert!(!analyzed(&admin, &partition).await.1, "analyzed through a lock it could not have had");

    vacuum.batch_execute("ROLLBACK").await.expect("release the partition");
    store.maintain().await.expect("housekeeping");
    let (changed, done) = analyzed(&admin, &partition).await;
    assert!(done && changed == 0, "the partition was not analyzed once free ({changed} changed rows since)");
}
