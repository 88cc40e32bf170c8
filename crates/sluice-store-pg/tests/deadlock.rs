//! An insert PostgreSQL picks as a deadlock's victim, on a real server: the store tries the
//! group again, and the caller gets its 200, not a 500. PostgreSQL rolls the victim's
//! transaction back whole, so the retry stores every log once. Seen in `cargo xtask ci`: an
//! insert of a three-day-old log racing retention's sweep of that day answered 500.

use sluice_model::{Plan, Workspace};
use sluice_store::conformance::log;
use sluice_store::prelude::*;
use sluice_store_pg::testing::TestDatabase;
use sluice_store_pg::{PgOptions, PgStore};

/// 2026-11-22T00:00:00Z.
const NOW: i64 = 1_795_305_600_000;

async fn client(url: &str) -> tokio_postgres::Client {
    let (client, connection) = tokio_postgres::connect(url, tokio_postgres::NoTls).await.expect("connect");
    tokio::spawn(connection);
    client
}

#[tokio::test]
async fn an_insert_chosen_as_a_deadlocks_victim_is_tried_again_and_stored_once() {
    let database = TestDatabase::new("sluice_deadlock").await;
    let store = PgStore::connect(
        database.url(),
        &PgOptions { pool_size: 2, clock: sluice_store::Clock::new(|| NOW), ..PgOptions::default() },
    )
    .await
    .expect("connect");
    let workspace = Workspace::new("w", Plan::Enterprise, NOW);
    store.create_workspace(&workspace).await.expect("workspace");
    store.insert_logs(workspace.id, &[log("first", NOW + 1_000)]).await.expect("insert");

    // This session takes the table an insert writes last (its usage), lets the insert take the
    // one it writes first (its blocks) and wait, then asks for that one: a deadlock. With a
    // long `deadlock_timeout` of its own, this session is never the one PostgreSQL gives up.
    let other = client(database.url()).await;
    other
        .batch_execute("SET deadlock_timeout = '60s'; BEGIN; LOCK TABLE usage_monthly IN EXCLUSIVE MODE")
        .await
        .expect("lock the usage");
    let inserting = tokio::spawn({
        let store = store.clone();
        async move { store.insert_logs(workspace.id, &[log("second", NOW + 2_000)]).await }
    });
    let waits = async {
        loop {
            let waiting: i64 = other
                .query_one(
                    "SELECT count(*) FROM pg_locks WHERE relation = 'usage_monthly'::regclass AND NOT granted",
                    &[],
                )
                .await
                .expect("locks")
                .get(0);
            if waiting > 0 {
                break;
            }
            tokio::task::yield_now().await;
        }
    };
    tokio::time::timeout(std::time::Duration::from_secs(10), waits).await.expect("the insert waits for the usage");
    // Granted once PostgreSQL has rolled the insert back (a second later, its deadlock_timeout).
    other.batch_execute("LOCK TABLE blocks IN SHARE MODE").await.expect("the insert gave way");
    other.batch_execute("COMMIT").await.expect("commit");

    inserting.await.expect("the insert's task").expect("the insert was tried again and committed");
    let stored: i64 = other.query_one("SELECT sum(rows)::int8 FROM blocks", &[]).await.expect("count").get(0);
    assert_eq!(stored, 2, "each log once");
    let counted: i64 = other.query_one("SELECT sum(logs)::int8 FROM usage_monthly", &[]).await.expect("usage").get(0);
    assert_eq!(counted, 2, "each log counted once");
}
