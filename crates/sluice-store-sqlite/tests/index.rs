//! The SQLite store's chunked search index, on a real file: logs it does not cover are
//! indexed when the store opens, and retention drops the chunks it empties.

use diesel::connection::SimpleConnection;
use diesel::prelude::*;
use diesel::sql_types::BigInt;
use sluice_model::{Plan, Workspace, WorkspaceId};
use sluice_query::{Query, SearchField};
use sluice_store::conformance::log;
use sluice_store::{LogFilter, LogStore, Page, Search, TenantStore};
use sluice_store_sqlite::{SqliteOptions, SqliteStore};

const T0: i64 = 1_700_000_000_000;

#[derive(QueryableByName)]
struct Count {
    #[diesel(sql_type = BigInt)]
    count: i64,
}

fn count(connection: &mut SqliteConnection, sql: &str) -> i64 {
    diesel::sql_query(sql).get_result::<Count>(connection).expect("count").count
}

async fn found(store: &SqliteStore, workspace: WorkspaceId, raw: &str) -> Vec<String> {
    let search = Search { query: Query::parse(raw).expect("query"), fields: vec![SearchField::Message] };
    let page = Page { limit: 100, offset: 0 };
    let logs = store.search_logs(workspace, &search, &LogFilter::default(), page).await.expect("search").logs;
    logs.into_iter().map(|log| log.entry.message).collect()
}

fn options() -> SqliteOptions {
    SqliteOptions { index_chunk_rows: 2, ..SqliteOptions::default() }
}

#[tokio::test]
async fn logs_the_index_does_not_cover_are_indexed_when_the_store_opens() {
    let dir = tempfile::tempdir().expect("temp dir");
    let path = dir.path().join("sluice.db");
    let store = SqliteStore::open_with(&path, &options()).expect("open");
    let workspace = Workspace::new("w", Plan::Enterprise, T0);
    store.create_workspace(&workspace).await.expect("workspace");
    let logs: Vec<_> = (0..5).map(|n| log(&format!("Zebra number {n}"), T0 + n)).collect();
    store.insert_logs(workspace.id, &logs).await.expect("insert");
    drop(store);

    // As a database written before the chunk index existed: logs, no chunks.
    let mut connection = SqliteConnection::establish(path.to_str().expect("utf-8")).expect("connect");
    connection
        .batch_execute("PRAGMA busy_timeout = 5000; DELETE FROM log_chunks; INSERT INTO log_chunks_fts (log_chunks_fts) VALUES ('delete-all');")
        .expect("forget the index");
    assert_eq!(count(&mut connection, "SELECT count(*) AS count FROM log_chunks"), 0);

    let store = SqliteStore::open_with(&path, &options()).expect("reopen");
    assert_eq!(count(&mut connection, "SELECT count(*) AS count FROM log_chunks"), 3, "five logs, two a chunk");
    assert_eq!(found(&store, workspace.id, "zebra").await.len(), 5);
    assert_eq!(found(&store, workspace.id, "\"number 3\"").await, ["Zebra number 3"]);

    // New logs go past the backfilled chunks and are found at once.
    store.insert_logs(workspace.id, &[log("Zebra number 9", T0 + 9)]).await.expect("insert");
    assert_eq!(found(&store, workspace.id, "zebra").await.len(), 6);
    assert_eq!(count(&mut connection, "SELECT count(*) AS count FROM log_chunks"), 4);
}

#[tokio::test]
async fn retention_drops_the_chunks_it_empties_and_keeps_the_rest() {
    let dir = tempfile::tempdir().expect("temp dir");
    let path = dir.path().join("sluice.db");
    let store = SqliteStore::open_with(&path, &options()).expect("open");
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
    let mut connection = SqliteConnection::establish(path.to_str().expect("utf-8")).expect("connect");
    connection.batch_execute("PRAGMA busy_timeout = 5000;").expect("pragma");
    assert_eq!(count(&mut connection, "SELECT count(*) AS count FROM log_chunks"), 4);

    assert_eq!(store.delete_logs_before(workspace.id, T0).await.expect("delete"), 3);
    // The first chunk is empty and gone; the second keeps its new log; the other workspace's stays.
    assert_eq!(count(&mut connection, "SELECT count(*) AS count FROM log_chunks"), 3);
    assert_eq!(found(&store, workspace.id, "one").await, ["new one"]);
    assert!(found(&store, workspace.id, "old").await.is_empty());
    assert_eq!(found(&store, other.id, "old").await, ["old theirs"]);
    let first_chunk_hits = count(
        &mut connection,
        &format!(
            "SELECT count(*) AS count FROM log_chunks_fts WHERE log_chunks_fts MATCH '\"{:x}\"'",
            sluice_query::trigram_code(['t', 'w', 'o'])
        ),
    );
    assert_eq!(first_chunk_hits, 1, "\"two\" is left only in the last chunk's document");
}
