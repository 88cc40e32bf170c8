//! The SQLite store's chunked search index, on a real file: the background indexes new logs
//! while searches find them all along, logs it does not cover are indexed when the store
//! opens, and retention drops the chunks it empties.

use diesel::connection::SimpleConnection;
use diesel::prelude::*;
use diesel::sql_types::BigInt;
use sluice_model::{Plan, Workspace, WorkspaceId};
use sluice_query::{Query, SearchField};
use sluice_store::conformance::log;
use sluice_store::prelude::*;
use sluice_store::{LogFilter, Page, Search};
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

/// Logs past the last chunk: the tail the index does not cover yet.
fn unindexed(connection: &mut SqliteConnection) -> i64 {
    count(
        connection,
        "SELECT count(*) AS count FROM logs WHERE seq > (SELECT coalesce(max(last_seq), 0) FROM log_chunks)",
    )
}

async fn found(store: &SqliteStore, workspace: WorkspaceId, raw: &str) -> Vec<String> {
    let search = Search { query: Query::parse(raw).expect("query"), fields: vec![SearchField::Message] };
    let page = Page { limit: 100, offset: 0 };
    let logs = store.search_logs(workspace, &search, &LogFilter::default(), page).await.expect("search").logs;
    logs.into_iter().map(|log| log.entry.message).collect()
}

/// Chunks of two, written by each insert after its commit.
fn options() -> SqliteOptions {
    SqliteOptions { index_chunk_rows: 2, index_every: None, ..SqliteOptions::default() }
}

#[tokio::test]
async fn the_background_indexes_new_logs_and_searches_find_them_before_and_after() {
    let dir = tempfile::tempdir().expect("temp dir");
    let path = dir.path().join("sluice.db");
    let every = std::time::Duration::from_millis(20);
    let options = SqliteOptions { index_chunk_rows: 2, index_every: Some(every), ..SqliteOptions::default() };
    let store = SqliteStore::open_with(&path, &options).expect("open");
    let (workspace, other) = (Workspace::new("w", Plan::Enterprise, T0), Workspace::new("other", Plan::Enterprise, T0));
    store.create_workspace(&workspace).await.expect("workspace");
    store.create_workspace(&other).await.expect("workspace");
    let mut connection = SqliteConnection::establish(path.to_str().expect("utf-8")).expect("connect");
    connection.batch_execute("PRAGMA busy_timeout = 5000;").expect("pragma");

    for round in 0..3_i64 {
        let logs: Vec<_> =
            (0..5).map(|n| log(&format!("Zebra round {round} number {n}"), T0 + round * 10 + n)).collect();
        store.insert_logs(workspace.id, &logs).await.expect("insert");
        store.insert_logs(other.id, &[log(&format!("Zebra of theirs {round}"), T0)]).await.expect("insert");
        // Found at once, indexed or not, each once, and only in its workspace.
        let zebras = found(&store, workspace.id, "zebra").await;
        assert_eq!(zebras.len(), 5 * (round as usize + 1), "{zebras:?}");
        assert_eq!(found(&store, workspace.id, &format!("\"round {round} number 4\"")).await.len(), 1);
        assert_eq!(found(&store, other.id, "zebra").await.len(), round as usize + 1);
        // Then the background covers them.
        let deadline = std::time::Instant::now() + std::time::Duration::from_secs(10);
        while unindexed(&mut connection) > 0 {
            assert!(std::time::Instant::now() < deadline, "the background did not index the new logs");
            tokio::time::sleep(every).await;
        }
        assert_eq!(found(&store, workspace.id, "zebra").await.len(), 5 * (round as usize + 1));
    }
    // 5 logs make three chunks of at most two, the other workspace's one a chunk, each round.
    assert_eq!(count(&mut connection, "SELECT count(*) AS count FROM log_chunks"), 12);
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
        .batch_execute("PRAGMA busy_timeout = 5000; DELETE FROM log_chunks; INSERT INTO log_chunks_fts (log_chunks_fts) VALUES ('delete-all'); \
             DELETE FROM log_chunk_signatures; DELETE FROM log_blocks; DELETE FROM log_block_bands;")
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
    assert_eq!(count(&mut connection, "SELECT count(*) AS count FROM log_chunk_keys"), 4);

    assert_eq!(store.delete_logs_before(workspace.id, T0).await.expect("delete"), 3);
    // The first chunk is empty and gone; the second keeps its new log; the other workspace's stays.
    assert_eq!(count(&mut connection, "SELECT count(*) AS count FROM log_chunks"), 3);
    assert_eq!(count(&mut connection, "SELECT count(*) AS count FROM log_chunk_keys"), 3, "its filters went with it");
    assert_eq!(found(&store, workspace.id, "one").await, ["new one"]);
    assert!(found(&store, workspace.id, "old").await.is_empty());
    assert_eq!(found(&store, other.id, "old").await, ["old theirs"]);
    let first_chunk_hits = count(
        &mut connection,
        &format!(
            "SELECT count(*) AS count FROM log_chunks_fts WHERE log_chunks_fts MATCH '\"{:x}\"'",
            sluice_store::grams::trigram_code(['t', 'w', 'o'])
        ),
    );
    assert_eq!(first_chunk_hits, 1, "\"two\" is left only in the last chunk's document");
}

#[tokio::test]
async fn an_insert_indexes_the_tail_itself_once_it_passes_its_bound() {
    let dir = tempfile::tempdir().expect("temp dir");
    let path = dir.path().join("sluice.db");
    // A background that never comes round in this test: only the bound indexes.
    let options =
        SqliteOptions { index_every: Some(std::time::Duration::from_secs(3_600)), ..SqliteOptions::default() };
    let store = SqliteStore::open_with(&path, &options).expect("open");
    let workspace = Workspace::new("w", Plan::Enterprise, T0);
    store.create_workspace(&workspace).await.expect("workspace");
    let mut connection = SqliteConnection::establish(path.to_str().expect("utf-8")).expect("connect");
    connection.batch_execute("PRAGMA busy_timeout = 5000;").expect("pragma");

    let logs = |count: i64| -> Vec<_> { (0..count).map(|n| log(&format!("Quagga {n}"), T0 + n)).collect() };
    store.insert_logs(workspace.id, &logs(10_000)).await.expect("insert");
    assert_eq!(unindexed(&mut connection), 10_000, "under the bound, the tail waits for the background");
    store.insert_logs(workspace.id, &logs(10_000)).await.expect("insert");
    store.insert_logs(workspace.id, &logs(1)).await.expect("insert");
    assert_eq!(unindexed(&mut connection), 0, "past 20,000, the insert indexed the tail");
    assert_eq!(found(&store, workspace.id, "\"quagga 9999\"").await.len(), 2);
}

/// Chunk signatures are gathered into blocks once a workspace has enough of them; identifiers
/// are found in blocks and in the chunks outside one, never in another workspace; retention
/// drops a block once none of its chunks is left, and the signatures of the chunks it empties.
#[tokio::test]
async fn signatures_gather_into_blocks_that_find_identifiers_and_retention_drops_them() {
    let dir = tempfile::tempdir().expect("temp dir");
    let path = dir.path().join("sluice.db");
    let options = SqliteOptions { index_block_chunks: 4, ..options() };
    let store = SqliteStore::open_with(&path, &options).expect("open");
    let (workspace, other) = (Workspace::new("w", Plan::Enterprise, T0), Workspace::new("other", Plan::Enterprise, T0));
    store.create_workspace(&workspace).await.expect("workspace");
    store.create_workspace(&other).await.expect("workspace");
    // 21 logs a batch in chunks of two: 11 chunks; two blocks of four, three chunks left over.
    let (order, request) = (sluice_store::conformance::order_number, sluice_store::conformance::request_id);
    let logs: Vec<_> =
        (0..21).map(|n| log(&format!("order {} req={} shipped", order(n), request(n)), T0 + n * 1_000)).collect();
    store.insert_logs(workspace.id, &logs).await.expect("insert");
    store.insert_logs(other.id, &[log(&format!("order {} theirs", order(3)), T0)]).await.expect("insert");
    let mut connection = SqliteConnection::establish(path.to_str().expect("utf-8")).expect("connect");
    connection.batch_execute("PRAGMA busy_timeout = 5000;").expect("pragma");
    assert_eq!(count(&mut connection, "SELECT count(*) AS count FROM log_blocks"), 2);
    assert_eq!(count(&mut connection, "SELECT count(*) AS count FROM log_chunk_signatures"), 3 + 1);
    for n in 0..21 {
        let expected = [format!("order {} req={} shipped", order(n), request(n))];
        assert_eq!(found(&store, workspace.id, &order(n)).await, expected, "order {n}");
        // Inside a longer run, by its long grams.
        assert_eq!(found(&store, workspace.id, &request(n)[2..14]).await, expected, "request {n}");
    }
    assert_eq!(found(&store, other.id, &order(3)).await, [format!("order {} theirs", order(3))]);
    assert!(found(&store, workspace.id, "ORD-9999999").await.is_empty());
    assert_eq!(store.cached_signatures(), 3 + 1, "the signatures outside a block, read once");

    // The first 10 logs: the first block's 8 and the first two of the second.
    assert_eq!(store.delete_logs_before(workspace.id, T0 + 10_000).await.expect("delete"), 10);
    assert_eq!(count(&mut connection, "SELECT count(*) AS count FROM log_blocks"), 1);
    let first_block = count(&mut connection, "SELECT min(id) AS count FROM log_blocks");
    assert_eq!(
        count(
            &mut connection,
            &format!("SELECT count(*) AS count FROM log_block_bands WHERE block_id < {first_block}")
        ),
        0,
        "the emptied block's bands are gone"
    );
    assert!(found(&store, workspace.id, &order(2)).await.is_empty());
    for n in 10..21 {
        assert_eq!(found(&store, workspace.id, &order(n)).await.len(), 1, "order {n}");
    }
    // New chunks seal a block again with the three left over.
    let logs: Vec<_> = (21..23).map(|n| log(&format!("order {} late", order(n)), T0 + n * 1_000)).collect();
    store.insert_logs(workspace.id, &logs).await.expect("insert");
    assert_eq!(count(&mut connection, "SELECT count(*) AS count FROM log_blocks"), 2);
    assert_eq!(store.cached_signatures(), 1, "the sealed chunks' signatures are forgotten; the other's stays");
    assert_eq!(found(&store, workspace.id, &order(22)).await.len(), 1);
}

/// A search keeps the signatures of chunks not in a block in memory; once retention has
/// emptied the store, new chunks may take the same ids with other text, and are found by it.
#[tokio::test]
async fn signatures_kept_in_memory_never_answer_for_a_new_chunk_of_the_same_id() {
    let dir = tempfile::tempdir().expect("temp dir");
    let path = dir.path().join("sluice.db");
    let store = SqliteStore::open_with(&path, &options()).expect("open");
    let workspace = Workspace::new("w", Plan::Enterprise, T0);
    store.create_workspace(&workspace).await.expect("workspace");
    let logs: Vec<_> = (0..4).map(|n| log(&format!("old ORD-{:07}", 1_000_000 + n), T0 + n)).collect();
    store.insert_logs(workspace.id, &logs).await.expect("insert");
    assert_eq!(found(&store, workspace.id, "ORD-1000002").await, ["old ORD-1000002"]);
    assert_eq!(store.delete_logs_before(workspace.id, T0 + 10).await.expect("delete"), 4);
    let logs: Vec<_> = (0..4).map(|n| log(&format!("new ORD-{:07}", 2_000_000 + n), T0 + 20 + n)).collect();
    store.insert_logs(workspace.id, &logs).await.expect("insert");
    let mut connection = SqliteConnection::establish(path.to_str().expect("utf-8")).expect("connect");
    connection.batch_execute("PRAGMA busy_timeout = 5000;").expect("pragma");
    assert_eq!(count(&mut connection, "SELECT min(id) AS count FROM log_chunks"), 1, "the first chunk's id again");
    assert_eq!(found(&store, workspace.id, "ORD-2000002").await, ["new ORD-2000002"]);
    assert!(found(&store, workspace.id, "ORD-1000002").await.is_empty());
}
