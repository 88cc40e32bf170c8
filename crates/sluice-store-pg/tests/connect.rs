//! Connecting to a real PostgreSQL server (`SLUICE_TEST_PG`, which `cargo xtask ci` and
//! `cargo xtask with-pg` set): migrations applied once and idempotently, readiness, and an
//! unreachable server reported as unavailable. Each test works in a database of its own,
//! cloned from the migrated template.

use std::time::Duration;

use diesel::QueryableByName;
use diesel::sql_types::{BigInt, Text};
use diesel_async::{AsyncConnection, AsyncPgConnection, RunQueryDsl};
use sluice_store::StoreError;
use sluice_store_pg::testing::{drop_database, fresh_database};
use sluice_store_pg::{PgOptions, PgStore};

#[derive(QueryableByName)]
struct Name {
    #[diesel(sql_type = Text)]
    name: String,
}

#[derive(QueryableByName)]
struct Count {
    #[diesel(sql_type = BigInt)]
    count: i64,
}

#[tokio::test]
async fn connect_applies_the_migrations_once() {
    let name = format!("sluice_test_migrations_{}", std::process::id());
    let url = fresh_database(&name).await;
    let store = PgStore::connect(&url, &PgOptions::default()).await.expect("connect");
    store.ping().await.expect("ready");
    // A second server start finds nothing to apply.
    let again = PgStore::connect(&url, &PgOptions::default()).await.expect("connect again");
    again.ping().await.expect("ready");

    let mut connection = AsyncPgConnection::establish(&url).await.expect("connect");
    let tables: Vec<String> = diesel::sql_query(
        "SELECT relname::text AS name FROM pg_class WHERE relnamespace = 'public'::regnamespace \
         AND relkind IN ('r', 'p') AND NOT relispartition ORDER BY 1",
    )
    .load::<Name>(&mut connection)
    .await
    .expect("tables")
    .into_iter()
    .map(|row| row.name)
    .collect();
    assert_eq!(
        tables,
        [
            "__diesel_schema_migrations",
            "api_keys",
            "log_rollups",
            "log_rollups_daily",
            "log_rollups_daily_sources",
            "logs",
            "usage_monthly",
            "workspaces"
        ]
    );
    // The partitions of the days around today exist from the start.
    let partitions = store.partitions().await.expect("partitions");
    assert_eq!(partitions.len() as i64, sluice_store_pg::DAILY_AHEAD + 2, "{partitions:?}");
    // The hourly housekeeping makes what is missing and nothing twice.
    sluice_store::Store::maintain(&again).await.expect("maintain");
    assert_eq!(store.partitions().await.expect("partitions"), partitions);
    let applied: Vec<Count> = diesel::sql_query("SELECT count(*) AS count FROM __diesel_schema_migrations")
        .load(&mut connection)
        .await
        .expect("migrations");
    assert_eq!(
        applied[0].count,
        i64::try_from(std::fs::read_dir("../../migrations/postgres").expect("dir").count()).expect("small")
    );
    drop(connection);
    drop_database(&name).await;
}

#[tokio::test]
async fn an_unreachable_server_is_unavailable() {
    // A port nobody listens on.
    let port = std::net::TcpListener::bind("127.0.0.1:0").expect("port").local_addr().expect("addr").port();
    let url = format!("postgres://postgres@127.0.0.1:{port}/postgres");
    let options = PgOptions { create_timeout: Duration::from_secs(1), ..PgOptions::default() };
    let error = PgStore::connect(&url, &options).await.expect_err("nobody listens");
    assert!(matches!(error, StoreError::Unavailable(_)), "{error:?}");
}
