//! Connecting to a real PostgreSQL server (`SLUICE_TEST_PG`, which `cargo xtask ci` and
//! `cargo xtask with-pg` set): migrations applied once and idempotently, readiness, and an
//! unreachable server reported as unavailable. Each test works in a database of its own.

use std::time::Duration;

use diesel::QueryableByName;
use diesel::sql_types::{BigInt, Text};
use diesel_async::{AsyncConnection, AsyncPgConnection, RunQueryDsl, SimpleAsyncConnection};
use sluice_store::StoreError;
use sluice_store_pg::{PgOptions, PgStore};

/// Removes a test's database, closing what still uses it.
async fn drop_database(name: &str) {
    let mut admin = AsyncPgConnection::establish(&server()).await.expect("connect to SLUICE_TEST_PG");
    admin.batch_execute(&format!("DROP DATABASE {} WITH (FORCE)", database_name(name))).await.expect("drop");
}

/// The server's URL; the tests need one.
fn server() -> String {
    std::env::var("SLUICE_TEST_PG")
        .ok()
        .filter(|url| !url.is_empty())
        .expect("SLUICE_TEST_PG names no server: run `cargo xtask with-pg cargo test -p sluice-store-pg`")
}

/// `url` with its database replaced by `database`.
fn with_database(url: &str, database: &str) -> String {
    let (base, query) = url.split_once('?').map_or((url, None), |(base, query)| (base, Some(query)));
    let (server, _) = base.rsplit_once('/').expect("a URL with a database");
    match query {
        Some(query) => format!("{server}/{database}?{query}"),
        None => format!("{server}/{database}"),
    }
}

fn database_name(name: &str) -> String {
    format!("sluice_test_{name}_{}", std::process::id())
}

/// A new, empty database for one test, and its URL.
async fn fresh_database(name: &str) -> String {
    let database = database_name(name);
    let mut admin = AsyncPgConnection::establish(&server()).await.expect("connect to SLUICE_TEST_PG");
    admin.batch_execute(&format!("DROP DATABASE IF EXISTS {database}")).await.expect("drop");
    admin.batch_execute(&format!("CREATE DATABASE {database}")).await.expect("create");
    with_database(&server(), &database)
}

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

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn connect_applies_the_migrations_once() {
    let url = fresh_database("migrations").await;
    let store = PgStore::connect(&url, &PgOptions::default()).await.expect("connect");
    store.ping().await.expect("ready");
    // A second server start finds nothing to apply.
    let again = PgStore::connect(&url, &PgOptions::default()).await.expect("connect again");
    again.ping().await.expect("ready");

    let mut connection = AsyncPgConnection::establish(&url).await.expect("connect");
    let tables: Vec<String> = diesel::sql_query(
        "SELECT table_name::text AS name FROM information_schema.tables WHERE table_schema = 'public' ORDER BY 1",
    )
    .load::<Name>(&mut connection)
    .await
    .expect("tables")
    .into_iter()
    .map(|row| row.name)
    .collect();
    assert_eq!(tables, ["__diesel_schema_migrations", "api_keys", "workspaces"]);
    let applied: Vec<Count> = diesel::sql_query("SELECT count(*) AS count FROM __diesel_schema_migrations")
        .load(&mut connection)
        .await
        .expect("migrations");
    assert_eq!(
        applied[0].count,
        i64::try_from(std::fs::read_dir("../../migrations/postgres").expect("dir").count()).expect("small")
    );
    drop(connection);
    drop_database("migrations").await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_unreachable_server_is_unavailable() {
    // A port nobody listens on.
    let port = std::net::TcpListener::bind("127.0.0.1:0").expect("port").local_addr().expect("addr").port();
    let url = format!("postgres://postgres@127.0.0.1:{port}/postgres");
    let options = PgOptions { create_timeout: Duration::from_secs(1), ..PgOptions::default() };
    let error = PgStore::connect(&url, &options).await.expect_err("nobody listens");
    assert!(matches!(error, StoreError::Unavailable(_)), "{error:?}");
}
