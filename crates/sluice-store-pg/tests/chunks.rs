//! The PostgreSQL store's chunked search index, on a real server: logs without a chunk (stored
//! before the index existed) are indexed when a store connects, and retention drops the
//! chunks it empties.

use diesel::prelude::*;
use diesel::sql_types::BigInt;
use diesel_async::{AsyncConnection, AsyncPgConnection, RunQueryDsl, SimpleAsyncConnection};
use sluice_model::{Plan, Workspace, WorkspaceId};
use sluice_query::{Query, SearchField};
use sluice_store::conformance::log;
use sluice_store::prelude::*;
use sluice_store::{LogFilter, Page, Search};
use sluice_store_pg::testing::TestDatabase;
use sluice_store_pg::{PgOptions, PgStore};

const T0: i64 = 1_700_000_000_000;

#[derive(QueryableByName)]
struct Count {
    #[diesel(sql_type = BigInt)]
    count: i64,
}

async fn count(connection: &mut AsyncPgConnection, sql: &str) -> i64 {
    diesel::sql_query(sql).get_result::<Count>(connection).await.expect("count").count
}

async fn found(store: &PgStore, workspace: WorkspaceId, raw: &str) -> Vec<String> {
    let search = Search { query: Query::parse(raw).expect("query"), fields: vec![SearchField::Message] };
    let page = Page { limit: 100, offset: 0 };
    let logs = store.search_logs(workspace, &search, &LogFilter::default(), page).await.expect("search").logs;
    logs.into_iter().map(|log| log.entry.message).collect()
}

fn options() -> PgOptions {
    PgOptions { pool_size: 2, index_chunk_rows: 2, ..PgOptions::default() }
}

#[tokio::test]
async fn logs_without_a_chunk_are_indexed_when_a_store_connects() {
    let database = TestDatabase::new("sluice_chunks").await;
    let store = PgStore::connect(database.url(), &options()).await.expect("connect");
    let workspace = Workspace::new("w", Plan::Enterprise, T0);
    store.create_workspace(&workspace).await.expect("workspace");
    let logs: Vec<_> = (0..5).map(|n| log(&format!("Zebra number {n}"), T0 + n)).collect();
    store.insert_logs(workspace.id, &logs).await.expect("insert");
    drop(store);

    // As a database written before the chunk index existed: logs, no chunks.
    let mut connection = AsyncPgConnection::establish(database.url()).await.expect("connect");
    connection.batch_execute("UPDATE logs SET chunk_id = NULL; DELETE FROM log_chunks;").await.expect("forget");
    assert_eq!(count(&mut connection, "SELECT count(*) AS count FROM log_chunks").await, 0);

    let store = PgStore::connect(database.url(), &options()).await.expect("reconnect");
    assert_eq!(count(&mut connection, "SELECT count(*) AS count FROM log_chunks").await, 3, "five logs, two a chunk");
    assert_eq!(count(&mut connection, "SELECT count(*) AS count FROM logs WHERE chunk_id IS NULL").await, 0);
    assert_eq!(found(&store, workspace.id, "zebra").await.len(), 5);
    assert_eq!(found(&store, workspace.id, "\"number 3\"").await, ["Zebra number 3"]);
    store.insert_logs(workspace.id, &[log("Zebra number 9", T0 + 9)]).await.expect("insert");
    assert_eq!(found(&store, workspace.id, "zebra").await.len(), 6);
    drop(store);
}

#[tokio::test]
async fn retention_drops_the_chunks_it_empties_and_keeps_the_rest() {
    let database = TestDatabase::new("sluice_chunks").await;
    let store = PgStore::connect(database.url(), &options()).await.expect("connect");
    let (workspace, other) = (Workspace::new("w", Plan::Enterprise, T0), Workspace::new("other", Plan::Enterprise, T0));
    store.create_workspace(&workspace).await.expect("workspace");
    store.create_workspace(&other).await.expect("workspace");
    // Chunks of two: [old, old], [old, new], [new].
    let logs = [
        log("old one", T0 - 3),
        log("old two", T0 - 2),
        log("old three", T0 - 1),
        log("new one", T0),
        log("new two", T0 + 1),
    ];
    store.insert_logs(workspace.id, &logs).await.expect("insert");
    store.insert_logs(other.id, &[log("old theirs", T0 - 5)]).await.expect("insert");
    let mut connection = AsyncPgConnection::establish(database.url()).await.expect("connect");
    assert_eq!(count(&mut connection, "SELECT count(*) AS count FROM log_chunks").await, 4);

    assert_eq!(store.delete_logs_before(workspace.id, T0).await.expect("delete"), 3);
    assert_eq!(count(&mut connection, "SELECT count(*) AS count FROM log_chunks").await, 3);
    assert_eq!(found(&store, workspace.id, "one").await, ["new one"]);
    assert!(found(&store, workspace.id, "old").await.is_empty());
    assert_eq!(found(&store, other.id, "old").await, ["old theirs"]);
    drop(store);
}
