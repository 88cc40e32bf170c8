//! The PostgreSQL store's chunked search index, on a real server: logs without a chunk (stored
//! before the index existed) are indexed, and chunks without a signature signed, when a store
//! connects; signatures gather into blocks that find identifiers; retention drops the chunks,
//! signatures and blocks it empties.

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

/// Runs housekeeping until the workspace's chunks are sealed into `blocks` blocks (a pass seals
/// a bounded number), and checks they are.
async fn seal_into(store: &PgStore, connection: &mut AsyncPgConnection, blocks: i64) {
    for _ in 0..30 {
        if count(connection, "SELECT count(*) AS count FROM log_blocks").await == blocks {
            break;
        }
        store.maintain().await.expect("housekeeping seals the blocks due");
    }
    assert_eq!(count(connection, "SELECT count(*) AS count FROM log_blocks").await, blocks);
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
async fn chunks_without_a_signature_are_signed_when_a_store_connects() {
    let database = TestDatabase::new("sluice_chunks").await;
    let store = PgStore::connect(database.url(), &options()).await.expect("connect");
    let workspace = Workspace::new("w", Plan::Enterprise, T0);
    store.create_workspace(&workspace).await.expect("workspace");
    let logs: Vec<_> = (0..5).map(|n| log(&format!("Zebra ORD-{:07}", 4_800_000 + n), T0 + n)).collect();
    store.insert_logs(workspace.id, &logs).await.expect("insert");
    drop(store);

    // As chunks written before signatures existed.
    let mut connection = AsyncPgConnection::establish(database.url()).await.expect("connect");
    connection
        .batch_execute("DELETE FROM log_chunk_signatures; UPDATE log_chunks SET signed = false;")
        .await
        .expect("forget");
    let store = PgStore::connect(database.url(), &options()).await.expect("reconnect");
    assert_eq!(count(&mut connection, "SELECT count(*) AS count FROM log_chunks WHERE NOT signed").await, 0);
    assert_eq!(count(&mut connection, "SELECT count(*) AS count FROM log_chunk_signatures").await, 3);
    assert_eq!(found(&store, workspace.id, "ORD-4800003").await, ["Zebra ORD-4800003"]);
    assert_eq!(found(&store, workspace.id, "zebra").await.len(), 5);
    drop(store);
}

/// Chunk signatures are gathered into blocks once a workspace has enough of them;
/// identifiers are found in blocks and in the chunks outside one, never in another workspace;
/// retention drops a block once none of its chunks is left.
#[tokio::test]
async fn signatures_gather_into_blocks_that_find_identifiers_and_retention_drops_them() {
    let database = TestDatabase::new("sluice_chunks").await;
    let store =
        PgStore::connect(database.url(), &PgOptions { index_block_chunks: 4, ..options() }).await.expect("connect");
    let (workspace, other) = (Workspace::new("w", Plan::Enterprise, T0), Workspace::new("other", Plan::Enterprise, T0));
    store.create_workspace(&workspace).await.expect("workspace");
    store.create_workspace(&other).await.expect("workspace");
    let (order, request) = (sluice_store::conformance::order_number, sluice_store::conformance::request_id);
    // 21 logs in chunks of two: 11 chunks; two blocks of four, three chunks left over.
    let logs: Vec<_> =
        (0..21).map(|n| log(&format!("order {} req={} shipped", order(n), request(n)), T0 + n * 1_000)).collect();
    store.insert_logs(workspace.id, &logs).await.expect("insert");
    store.insert_logs(other.id, &[log(&format!("order {} theirs", order(3)), T0)]).await.expect("insert");
    store.maintain().await.expect("housekeeping seals the blocks due");
    let mut connection = AsyncPgConnection::establish(database.url()).await.expect("connect");
    assert_eq!(count(&mut connection, "SELECT count(*) AS count FROM log_blocks").await, 2);
    assert_eq!(count(&mut connection, "SELECT count(*) AS count FROM log_chunk_signatures").await, 3 + 1);
    for n in 0..21 {
        let expected = [format!("order {} req={} shipped", order(n), request(n))];
        assert_eq!(found(&store, workspace.id, &order(n)).await, expected, "order {n}");
        assert_eq!(found(&store, workspace.id, &request(n)[2..14]).await, expected, "request {n}");
    }
    assert_eq!(found(&store, other.id, &order(3)).await, [format!("order {} theirs", order(3))]);
    assert!(found(&store, workspace.id, "ORD-9999999").await.is_empty());
    // Words go by the trigrams in the signatures.
    assert_eq!(found(&store, workspace.id, "shipped").await.len(), 21);
    assert_eq!(store.cached_signatures(), 3 + 1, "the signatures outside a block are kept in memory");

    // The first 10 logs: the first block's 8 and the first two of the second.
    assert_eq!(store.delete_logs_before(workspace.id, T0 + 10_000).await.expect("delete"), 10);
    assert_eq!(count(&mut connection, "SELECT count(*) AS count FROM log_blocks").await, 1);
    assert_eq!(
        count(
            &mut connection,
            "SELECT count(*) AS count FROM log_block_bands WHERE block_id NOT IN (SELECT id FROM log_blocks)"
        )
        .await,
        0,
        "the emptied block's bands are gone"
    );
    assert!(found(&store, workspace.id, &order(2)).await.is_empty());
    for n in 10..21 {
        assert_eq!(found(&store, workspace.id, &order(n)).await.len(), 1, "order {n}");
    }
    // A new chunk seals a block with the three left over: their signatures are forgotten.
    let logs: Vec<_> = (21..23).map(|n| log(&format!("order {} late", order(n)), T0 + n * 1_000)).collect();
    store.insert_logs(workspace.id, &logs).await.expect("insert");
    store.maintain().await.expect("housekeeping seals the block due");
    assert_eq!(count(&mut connection, "SELECT count(*) AS count FROM log_blocks").await, 2);
    assert_eq!(store.cached_signatures(), 1, "the sealed chunks' signatures are forgotten; the other's stays");
    assert_eq!(found(&store, workspace.id, &order(22)).await.len(), 1);
    drop(store);
}

/// Each block due is sealed within a call timeout of its own, as is each step of housekeeping:
/// four blocks, each of which takes 40 % of the timeout to write (a trigger makes writing a
/// block slow), are all sealed by one pass, where one deadline for the whole pass ran out
/// after the second (as the sealing task's did mid-ingest: docs/PERFORMANCE.md, issue 24).
#[tokio::test]
async fn each_block_due_is_sealed_within_a_deadline_of_its_own() {
    let database = TestDatabase::new("sluice_chunks").await;
    let call_timeout = std::time::Duration::from_secs(3);
    let sealer = PgStore::connect(database.url(), &PgOptions { index_block_chunks: 4, call_timeout, ..options() })
        .await
        .expect("connect");
    // Writes without sealing (a block is more chunks than it writes): the blocks are due when
    // housekeeping runs.
    let writer =
        PgStore::connect(database.url(), &PgOptions { index_block_chunks: 1_000, ..options() }).await.expect("connect");
    let workspace = Workspace::new("w", Plan::Enterprise, T0);
    writer.create_workspace(&workspace).await.expect("workspace");
    let mut connection = AsyncPgConnection::establish(database.url()).await.expect("connect");
    connection
        .batch_execute(
            "CREATE FUNCTION slow_block() RETURNS trigger LANGUAGE plpgsql AS \
             $$ BEGIN PERFORM pg_sleep(1.2); RETURN NEW; END $$; \
             CREATE TRIGGER slow_block BEFORE INSERT ON log_blocks FOR EACH ROW EXECUTE FUNCTION slow_block();",
        )
        .await
        .expect("a slow block");
    let order = sluice_store::conformance::order_number;
    // 32 logs in chunks of two: 16 chunks, four blocks of four.
    let logs: Vec<_> = (0..32).map(|n| log(&format!("order {} shipped", order(n)), T0 + n * 1_000)).collect();
    writer.insert_logs(workspace.id, &logs).await.expect("insert");
    assert_eq!(count(&mut connection, "SELECT count(*) AS count FROM log_blocks").await, 0);

    sealer.maintain().await.expect("housekeeping seals every block due, each within a deadline of its own");
    assert_eq!(count(&mut connection, "SELECT count(*) AS count FROM log_blocks").await, 4);
    assert_eq!(count(&mut connection, "SELECT count(*) AS count FROM log_chunk_signatures").await, 0);
    for n in 0..32 {
        assert_eq!(found(&sealer, workspace.id, &order(n)).await, [format!("order {} shipped", order(n))]);
    }
    drop((sealer, writer));
}

/// A vacuum keeps the pages the seals emptied in `log_chunk_signatures` and its TOAST table
/// for the next signatures (`vacuum_truncate` off): truncating them takes a lock every insert
/// waits behind, and the store's own `VACUUM` spent its whole statement timeout truncating
/// under ingest (docs/PERFORMANCE.md, issue 24).
#[tokio::test]
async fn a_vacuum_keeps_the_signature_pages_the_seals_emptied() {
    let database = TestDatabase::new("sluice_chunks").await;
    let store =
        PgStore::connect(database.url(), &PgOptions { index_block_chunks: 4, ..options() }).await.expect("connect");
    let workspace = Workspace::new("w", Plan::Enterprise, T0);
    store.create_workspace(&workspace).await.expect("workspace");
    // Logs of 300 request ids each: signatures of a few KiB, stored out of line (TOAST).
    let request = sluice_store::conformance::request_id;
    let logs: Vec<_> = (0..8)
        .map(|n| {
            let ids: Vec<String> = (0..300).map(|i| request(n * 300 + i)).collect();
            log(&ids.join(" "), T0 + n * 1_000)
        })
        .collect();
    store.insert_logs(workspace.id, &logs).await.expect("insert");
    // Four chunks of two: one block, every signature deleted by its seal.
    let mut connection = AsyncPgConnection::establish(database.url()).await.expect("connect");
    seal_into(&store, &mut connection, 1).await;
    assert_eq!(count(&mut connection, "SELECT count(*) AS count FROM log_chunk_signatures").await, 0);
    const TABLE: &str = "SELECT pg_relation_size('log_chunk_signatures') AS count";
    const TOAST: &str = "SELECT pg_relation_size(reltoastrelid) AS count FROM pg_class \
                         WHERE oid = 'log_chunk_signatures'::regclass";
    let (table, toast) = (count(&mut connection, TABLE).await, count(&mut connection, TOAST).await);
    assert!(table > 0 && toast > 0, "the signatures were stored, out of line");
    connection.batch_execute("VACUUM log_chunk_signatures").await.expect("vacuum");
    assert_eq!(count(&mut connection, TABLE).await, table, "the vacuum kept the table's emptied pages");
    assert_eq!(count(&mut connection, TOAST).await, toast, "the vacuum kept the TOAST table's emptied pages");
    assert_eq!(found(&store, workspace.id, &request(1_234)[2..14]).await.len(), 1);
    drop(store);
}

#[derive(QueryableByName, PartialEq, Debug)]
struct StoredBand {
    #[diesel(sql_type = BigInt)]
    block: i64,
    #[diesel(sql_type = diesel::sql_types::Integer)]
    band: i32,
    #[diesel(sql_type = diesel::sql_types::Binary)]
    slices: Vec<u8>,
}

/// Every band of every block of a database, in order, with the block's first chunk as
/// numbered from its first chunk.
async fn stored_bands(connection: &mut AsyncPgConnection) -> Vec<StoredBand> {
    diesel::sql_query(
        "SELECT b.block_id - (SELECT min(id) FROM log_chunks) AS block, b.band, b.slices \
         FROM log_block_bands b ORDER BY b.block_id, b.band",
    )
    .load(connection)
    .await
    .expect("bands")
}

/// A block sealed by a process that wrote some of its chunks (their signatures kept in its
/// memory, the others read from the database) is the block a process that wrote none of them
/// seals from the database alone, band for band.
#[tokio::test]
async fn a_block_sealed_from_signatures_kept_in_memory_is_the_one_read_from_the_database() {
    let batches: [Vec<_>; 2] = [
        (0..6).map(|n| log(&format!("order {} first", sluice_store::conformance::order_number(n)), T0 + n)).collect(),
        (6..16).map(|n| log(&format!("req={} later", sluice_store::conformance::request_id(n)), T0 + n)).collect(),
    ];
    let never_seals = PgOptions { index_block_chunks: 1_000, ..options() };
    let seals = PgOptions { index_block_chunks: 4, ..options() };
    let workspace = Workspace::new("w", Plan::Enterprise, T0);

    // Three chunks written by one process, then five by the one that seals: its first block
    // holds three chunks it did not write and one it did, its second four it did.
    let mixed = TestDatabase::new("sluice_chunks").await;
    let writer = PgStore::connect(mixed.url(), &never_seals).await.expect("connect");
    writer.create_workspace(&workspace).await.expect("workspace");
    writer.insert_logs(workspace.id, &batches[0]).await.expect("insert");
    let sealer = PgStore::connect(mixed.url(), &seals).await.expect("connect");
    sealer.insert_logs(workspace.id, &batches[1]).await.expect("insert");
    let mut connection = AsyncPgConnection::establish(mixed.url()).await.expect("connect");
    seal_into(&sealer, &mut connection, 2).await;
    assert_eq!(sealer.signatures_read_to_seal(), 3, "the five it wrote were taken from its memory");
    let kept_and_read = stored_bands(&mut connection).await;
    assert_eq!(found(&sealer, workspace.id, &sluice_store::conformance::request_id(9)[2..14]).await.len(), 1);

    // The same chunks, all written by a process that does not seal, sealed by one that wrote
    // none of them.
    let cold = TestDatabase::new("sluice_chunks").await;
    let writer = PgStore::connect(cold.url(), &never_seals).await.expect("connect");
    writer.create_workspace(&workspace).await.expect("workspace");
    for batch in &batches {
        writer.insert_logs(workspace.id, batch).await.expect("insert");
    }
    let sealer = PgStore::connect(cold.url(), &seals).await.expect("connect");
    let mut connection = AsyncPgConnection::establish(cold.url()).await.expect("connect");
    seal_into(&sealer, &mut connection, 2).await;
    assert_eq!(sealer.signatures_read_to_seal(), 8);
    let read = stored_bands(&mut connection).await;

    assert!(!read.is_empty());
    assert_eq!(kept_and_read, read);
    assert_eq!(found(&sealer, workspace.id, &sluice_store::conformance::order_number(4)).await.len(), 1);
}

#[derive(QueryableByName)]
struct StoredSignature {
    #[diesel(sql_type = diesel::sql_types::Binary)]
    signature: Vec<u8>,
}

/// The process that writes a chunk keeps its signature in memory and writes it folded once
/// more; a process that wrote none of them finds every log from what was written, in the
/// signatures waiting and in the block it seals from them.
#[tokio::test]
async fn a_waiting_signature_is_written_folded_once_more_and_another_process_finds_its_logs() {
    use sluice_store::signature::{Signature, folded_once_more};
    let (order, request) = (sluice_store::conformance::order_number, sluice_store::conformance::request_id);
    let database = TestDatabase::new("sluice_chunks").await;
    let writes = PgOptions { index_chunk_rows: 64, index_block_chunks: 1_000, ..options() };
    let writer = PgStore::connect(database.url(), &writes).await.expect("connect");
    let workspace = Workspace::new("w", Plan::Enterprise, T0);
    writer.create_workspace(&workspace).await.expect("workspace");
    // Four chunks of 64 logs, each log with an order number and a request id of its own.
    let messages: Vec<String> = (0..256).map(|n| format!("order {} req={} shipped", order(n), request(n))).collect();
    let logs: Vec<_> = messages.iter().zip(0..).map(|(message, n)| log(message, T0 + n * 1_000)).collect();
    writer.insert_logs(workspace.id, &logs).await.expect("insert");

    let mut connection = AsyncPgConnection::establish(database.url()).await.expect("connect");
    let stored: Vec<StoredSignature> =
        diesel::sql_query("SELECT signature FROM log_chunk_signatures ORDER BY chunk_id")
            .load(&mut connection)
            .await
            .expect("signatures");
    let expected: Vec<Vec<u8>> = messages
        .chunks(64)
        .map(|chunk| {
            let mut signature = Signature::new();
            chunk.iter().for_each(|message| signature.add_text_with_trigrams(&message.to_lowercase()));
            let kept = signature.folded();
            assert!(kept.len() > 64, "large enough to be folded once more");
            folded_once_more(&kept)
        })
        .collect();
    let stored: Vec<Vec<u8>> = stored.into_iter().map(|row| row.signature).collect();
    assert_eq!(stored, expected);

    let seals = PgOptions { index_chunk_rows: 64, index_block_chunks: 4, ..options() };
    let reader = PgStore::connect(database.url(), &seals).await.expect("connect");
    for n in [0, 77, 130, 255] {
        let wanted = [messages[n as usize].clone()];
        assert_eq!(found(&reader, workspace.id, &order(n)).await, wanted, "waiting, {n}");
        assert_eq!(found(&reader, workspace.id, &request(n)[2..14]).await, wanted, "waiting, {n}");
    }
    seal_into(&reader, &mut connection, 1).await;
    assert_eq!(reader.signatures_read_to_seal(), 4, "none of them in its memory");
    for n in [1, 64, 200, 254] {
        let wanted = [messages[n as usize].clone()];
        assert_eq!(found(&reader, workspace.id, &order(n)).await, wanted, "sealed, {n}");
        assert_eq!(found(&reader, workspace.id, &request(n)[2..14]).await, wanted, "sealed, {n}");
        assert_eq!(found(&writer, workspace.id, &order(n)).await, wanted, "sealed, by the writer, {n}");
    }
}

/// `log_chunk_signatures` is unlogged: PostgreSQL empties it, and `log_chunk_signatures_intact`
/// with it, when it recovers from a crash. A search meanwhile reads the chunks left in neither
/// a block nor it (nothing is missed), and has them signed again from their logs, whole, in
/// the background; a store that connects does the same; they are sealed in turn.
#[tokio::test]
async fn chunks_whose_waiting_signatures_a_crash_dropped_are_read_then_signed_again() {
    use sluice_store::signature::Signature;
    let order = sluice_store::conformance::order_number;
    let database = TestDatabase::new("sluice_chunks").await;
    let writes = PgOptions { index_chunk_rows: 64, index_block_chunks: 3, ..options() };
    let writer = PgStore::connect(database.url(), &writes).await.expect("connect");
    let workspace = Workspace::new("w", Plan::Enterprise, T0);
    writer.create_workspace(&workspace).await.expect("workspace");
    // Five chunks of 64 logs: three sealed into a block, two waiting.
    let messages: Vec<String> = (0..320).map(|n| format!("order {} shipped", order(n))).collect();
    let logs: Vec<_> = messages.iter().zip(0..).map(|(message, n)| log(message, T0 + n * 1_000)).collect();
    writer.insert_logs(workspace.id, &logs).await.expect("insert");
    let mut connection = AsyncPgConnection::establish(database.url()).await.expect("connect");
    seal_into(&writer, &mut connection, 1).await;
    assert_eq!(count(&mut connection, "SELECT count(*) AS count FROM log_chunk_signatures").await, 2);
    let signed_again: Vec<Vec<u8>> = messages[192..]
        .chunks(64)
        .map(|chunk| {
            let mut signature = Signature::new();
            chunk.iter().for_each(|message| signature.add_text_with_trigrams(&message.to_lowercase()));
            signature.folded()
        })
        .collect();
    let crash = "TRUNCATE log_chunk_signatures, log_chunk_signatures_intact";
    let intact = "SELECT count(*) AS count FROM log_chunk_signatures_intact";

    // What PostgreSQL's recovery from a crash leaves of the unlogged tables, under a running
    // process: its searches find every log, and have the two chunks signed again.
    connection.batch_execute(crash).await.expect("crash");
    for n in [0, 200, 319] {
        assert_eq!(found(&writer, workspace.id, &order(n)).await, [messages[n as usize].clone()], "unsigned, {n}");
    }
    let mut waited = 0;
    while count(&mut connection, intact).await == 0 {
        assert!(waited < 400, "the search's task signs the lost chunks again within 20 s");
        tokio::time::sleep(std::time::Duration::from_millis(50)).await;
        waited += 1;
    }
    assert_eq!(count(&mut connection, "SELECT count(*) AS count FROM log_chunks WHERE NOT signed").await, 0);
    assert_eq!(stored_signatures(&mut connection).await, signed_again);
    for n in [3, 200, 256, 319] {
        assert_eq!(found(&writer, workspace.id, &order(n)).await, [messages[n as usize].clone()], "signed again, {n}");
    }

    // Again, with no process running: the next to connect signs them again.
    drop(writer);
    connection.batch_execute(crash).await.expect("crash");
    let reads = PgOptions { index_block_chunks: 4, ..writes };
    let reader = PgStore::connect(database.url(), &reads).await.expect("reconnect");
    assert_eq!(count(&mut connection, "SELECT count(*) AS count FROM log_chunks WHERE NOT signed").await, 0);
    assert_eq!(count(&mut connection, intact).await, 1);
    assert_eq!(stored_signatures(&mut connection).await, signed_again);
    for n in [3, 200, 256, 319] {
        assert_eq!(found(&reader, workspace.id, &order(n)).await, [messages[n as usize].clone()], "connected, {n}");
    }
    // Sealed in turn with the chunks after them.
    let late = ["order ORD-9999999 late", "order ORD-9999998 later"];
    for (message, at) in late.iter().zip([400_000, 500_000]) {
        reader.insert_logs(workspace.id, &[log(message, T0 + at)]).await.expect("insert");
    }
    seal_into(&reader, &mut connection, 2).await;
    for n in [4, 255, 318] {
        assert_eq!(found(&reader, workspace.id, &order(n)).await, [messages[n as usize].clone()], "sealed, {n}");
    }
    assert_eq!(found(&reader, workspace.id, "ORD-9999999").await, [late[0]]);
}

/// The waiting signatures, in chunk order.
async fn stored_signatures(connection: &mut AsyncPgConnection) -> Vec<Vec<u8>> {
    let stored: Vec<StoredSignature> =
        diesel::sql_query("SELECT signature FROM log_chunk_signatures ORDER BY chunk_id")
            .load(connection)
            .await
            .expect("signatures");
    stored.into_iter().map(|row| row.signature).collect()
}

/// A word in every chunk is looked for by walking the chunks newest first, and a page
/// decided in the newest ones narrows only their blocks; a page that needs every block
/// narrows them all and still answers every log, newest first.
#[tokio::test]
async fn a_common_word_narrows_only_the_blocks_its_page_reaches() {
    let database = TestDatabase::new("sluice_chunks").await;
    let options = PgOptions { index_block_chunks: 4, search_listed_chunks: 2, ..options() };
    let store = PgStore::connect(database.url(), &options).await.expect("connect");
    let workspace = Workspace::new("w", Plan::Enterprise, T0);
    store.create_workspace(&workspace).await.expect("workspace");
    // 100 logs in chunks of two: 50 chunks, twelve blocks of four and two chunks left over.
    let logs: Vec<_> = (0..100).map(|n| log(&format!("parcel {n} shipped"), T0 + n * 1_000)).collect();
    store.insert_logs(workspace.id, &logs).await.expect("insert");
    store.maintain().await.expect("housekeeping seals the blocks due");
    let mut connection = AsyncPgConnection::establish(database.url()).await.expect("connect");
    assert_eq!(count(&mut connection, "SELECT count(*) AS count FROM log_blocks").await, 12);

    let search = Search { query: Query::parse("shipped").expect("query"), fields: vec![SearchField::Message] };
    let newest = store
        .search_logs(workspace.id, &search, &LogFilter::default(), Page { limit: 2, offset: 0 })
        .await
        .expect("search");
    let messages: Vec<String> = newest.logs.into_iter().map(|log| log.entry.message).collect();
    assert_eq!(messages, ["parcel 99 shipped", "parcel 98 shipped"]);
    assert!(newest.has_more);
    let some = store.cached_bands();
    assert!(some > 0, "the newest blocks were narrowed");

    assert_eq!(found(&store, workspace.id, "shipped").await.len(), 100);
    let all = store.cached_bands();
    // Each block is narrowed by the same bands: the first search's walk (16 chunks, four
    // blocks) and estimate (the newest two) read those of five blocks at most of twelve.
    assert!(some * 12 <= all * 5, "{some} bands for the newest page, {all} for every log");
    let page = store
        .search_logs(workspace.id, &search, &LogFilter::default(), Page { limit: 100, offset: 0 })
        .await
        .expect("search");
    let expected: Vec<String> = (0..100).rev().map(|n| format!("parcel {n} shipped")).collect();
    assert_eq!(page.logs.into_iter().map(|log| log.entry.message).collect::<Vec<_>>(), expected);
    assert_eq!(found(&store, workspace.id, "\"parcel 7 shipped\"").await, ["parcel 7 shipped"]);
    drop(store);
}

/// A needle allowed in few chunks is read from a list of them, its blocks narrowed newest
/// first by the newest log each holds, as far as its page reaches: a log sent first but dated
/// after every other, in the oldest block, is still the first of the page, also when that
/// block's newest time is not known (taken as newer than any); a span narrows no block that
/// ends before it.
#[tokio::test]
async fn a_listed_needle_narrows_its_blocks_newest_first_as_far_as_its_page_reaches() {
    let database = TestDatabase::new("sluice_chunks").await;
    let options = PgOptions { index_block_chunks: 4, ..options() };
    let store = PgStore::connect(database.url(), &options).await.expect("connect");
    let workspace = Workspace::new("w", Plan::Enterprise, T0);
    store.create_workspace(&workspace).await.expect("workspace");
    let id = sluice_store::conformance::order_number(7);
    // Chunks of two: [late, filler], then 200 parcels in 100 chunks; 25 blocks of four, the
    // last chunk left over. The first block holds the newest log and five of the oldest.
    let mut logs = vec![log(&format!("late {id}"), T0 + 10_000_000), log("filler", T0 - 1)];
    logs.extend((0..200).map(|n| log(&format!("parcel {n} {id}"), T0 + n * 1_000)));
    store.insert_logs(workspace.id, &logs).await.expect("insert");
    let mut connection = AsyncPgConnection::establish(database.url()).await.expect("connect");
    seal_into(&store, &mut connection, 25).await;
    assert_eq!(count(&mut connection, "SELECT count(*) AS count FROM log_blocks WHERE max_ts IS NULL").await, 0);

    let search = Search { query: Query::parse(&id).expect("query"), fields: vec![SearchField::Message] };
    let messages = |page: sluice_store::LogPage| page.logs.into_iter().map(|log| log.entry.message).collect::<Vec<_>>();
    let first = Page { limit: 3, offset: 0 };
    let newest = store.search_logs(workspace.id, &search, &LogFilter::default(), first).await.expect("search");
    let expected_first = [format!("late {id}"), format!("parcel 199 {id}"), format!("parcel 198 {id}")];
    assert_eq!(messages(newest), expected_first);
    let some = store.cached_bands();
    assert!(some > 0, "the newest blocks were narrowed");

    let every = Page { limit: 300, offset: 0 };
    let all = store.search_logs(workspace.id, &search, &LogFilter::default(), every).await.expect("search");
    let mut expected = vec![format!("late {id}")];
    expected.extend((0..200).rev().map(|n| format!("parcel {n} {id}")));
    assert_eq!(messages(all), expected);
    let bands = store.cached_bands();
    // The page of three: the estimate's two blocks, then the four newest by time (the
    // first block among them), of 25.
    assert!(some * 3 <= bands, "{some} bands for the newest page, {bands} for every log");
    drop(store);

    // A block sealed before its newest time was stored is narrowed before every other.
    connection
        .batch_execute("UPDATE log_blocks SET max_ts = NULL WHERE id = (SELECT min(id) FROM log_blocks)")
        .await
        .expect("forget");
    let store = PgStore::connect(database.url(), &options).await.expect("reconnect");
    // A span narrows no block that ends before it.
    let recent = LogFilter { from: Some(T0 + 150_000), ..LogFilter::default() };
    let page = store.search_logs(workspace.id, &search, &recent, every).await.expect("search");
    let mut expected_recent = vec![format!("late {id}")];
    expected_recent.extend((150..200).rev().map(|n| format!("parcel {n} {id}")));
    assert_eq!(messages(page), expected_recent);
    let in_span = store.cached_bands();
    assert!(in_span * 2 < bands, "{in_span} bands for the last 50 parcels, {bands} for every log");
    let newest = store.search_logs(workspace.id, &search, &LogFilter::default(), first).await.expect("search");
    assert_eq!(messages(newest), expected_first);
    drop(store);
}

/// A rare identifier's logs are read by id, those their chunk's key filters let through, not
/// the chunk's 256; a chunk written before chunks kept filters is read whole, with the same
/// answer.
#[tokio::test]
async fn a_rare_identifier_reads_the_logs_its_chunks_filters_let_through() {
    let database = TestDatabase::new("sluice_chunks").await;
    let options = PgOptions { pool_size: 2, ..PgOptions::default() };
    let store = PgStore::connect(database.url(), &options).await.expect("connect");
    let workspace = Workspace::new("w", Plan::Enterprise, T0);
    store.create_workspace(&workspace).await.expect("workspace");
    let logs: Vec<_> = (0..256)
        .map(|n| {
            let id = sluice_store::conformance::order_number(n);
            let request = sluice_store::conformance::request_id(n);
            log(&format!("order {id} shipped, request {request}"), T0 + n)
        })
        .collect();
    store.insert_logs(workspace.id, &logs).await.expect("insert");
    let id = sluice_store::conformance::order_number(77);
    let expected = [format!("order {id} shipped, request {}", sluice_store::conformance::request_id(77))];
    assert_eq!(found(&store, workspace.id, &id).await, expected);
    let reads = store.walk_reads();
    assert_eq!(reads.chunks_whole, 0, "{reads:?}");
    assert!((1..=8).contains(&reads.logs_by_id), "{reads:?} of 256 logs");
    // A word has no keys to narrow with: its chunk is read whole.
    assert_eq!(found(&store, workspace.id, "shipped").await.len(), 100);
    assert_eq!(store.walk_reads().chunks_whole, 1);
    drop(store);

    // Not what a chunk of 256 logs stores (a byte short: the store's check; shorter than the
    // narrowest filters: the statement's), or gone: the chunk is read whole.
    let mut connection = AsyncPgConnection::establish(database.url()).await.expect("connect");
    for change in [
        "UPDATE log_chunks SET slots = substring(slots FROM 1 FOR octet_length(slots) - 1)",
        "UPDATE log_chunks SET slots = substring(slots FROM 1 FOR 1 + 16 * logs + 5)",
        "UPDATE log_chunks SET slots = NULL",
    ] {
        connection.batch_execute(change).await.expect("change the slots");
        let store = PgStore::connect(database.url(), &options).await.expect("reconnect");
        assert_eq!(found(&store, workspace.id, &id).await, expected, "{change}");
        assert_eq!(
            store.walk_reads(),
            sluice_store_pg::WalkReads { logs_by_id: 0, chunks_whole: 1, chunks_sifted: 0 },
            "{change}"
        );
        drop(store);
    }
}

/// A word the newest blocks hold once but older blocks in hundreds of chunks starts as a listed
/// needle; once its blocks allow more chunks than a search lists, the walk goes on over the
/// ordered index from where it is: every log still comes, newest first, once.
#[tokio::test]
async fn a_listed_needle_common_in_older_blocks_goes_on_over_the_ordered_index() {
    let database = TestDatabase::new("sluice_chunks").await;
    // Listed: an estimate of 75 chunks (one in the newest two blocks' eight); more than 100
    // allowed go on over the index.
    let options = PgOptions { index_block_chunks: 4, search_listed_chunks: 100, ..options() };
    let store = PgStore::connect(database.url(), &options).await.expect("connect");
    let workspace = Workspace::new("w", Plan::Enterprise, T0);
    store.create_workspace(&workspace).await.expect("workspace");
    // 1,200 logs in 600 chunks, 150 blocks; "early" in the first 1,160 and the newest.
    let text = |n: i64| if n < 1_160 || n == 1_199 { format!("early parcel {n}") } else { format!("parcel {n}") };
    let logs: Vec<_> = (0..1_200).map(|n| log(&text(n), T0 + n * 1_000)).collect();
    store.insert_logs(workspace.id, &logs).await.expect("insert");
    let mut connection = AsyncPgConnection::establish(database.url()).await.expect("connect");
    seal_into(&store, &mut connection, 150).await;

    let search = Search { query: Query::parse("early").expect("query"), fields: vec![SearchField::Message] };
    let page = Page { limit: 1_200, offset: 0 };
    let found = store.search_logs(workspace.id, &search, &LogFilter::default(), page).await.expect("search");
    let messages: Vec<String> = found.logs.into_iter().map(|log| log.entry.message).collect();
    let mut expected = vec![text(1_199)];
    expected.extend((0..1_160).rev().map(text));
    assert_eq!(messages, expected);
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

/// A needle whose walk finds it in few logs of each chunk read whole (here one in each of the
/// newest sixteen) reads the next steps' chunks by their key filters; a chunk whose filters let
/// more logs through than are read by id (twenty true ones of 64) is read with those ids tested
/// first. Every log holding the needle still comes, newest first, and no other.
#[tokio::test]
async fn a_walk_that_finds_few_logs_a_chunk_sifts_the_next_chunks_by_their_filters() {
    let database = TestDatabase::new("sluice_chunks").await;
    // Walked, never listed: the chunks are found by recency, each block narrowed on the way.
    let options = PgOptions { pool_size: 2, index_chunk_rows: 64, search_listed_chunks: 0, ..PgOptions::default() };
    let store = PgStore::connect(database.url(), &options).await.expect("connect");
    let workspace = Workspace::new("w", Plan::Enterprise, T0);
    store.create_workspace(&workspace).await.expect("workspace");
    let needle = sluice_store::conformance::order_number(4_242);
    let text = |n: i64, holds: bool| match holds {
        true => format!("log {n} order {needle} shipped"),
        false => format!("log {n} order {} shipped", sluice_store::conformance::order_number(n)),
    };
    // Older: four chunks holding the needle in 20 logs of 64 each. Newer: sixteen in one each.
    let dense: Vec<_> = (0..256).map(|n| log(&text(n, n % 64 < 20), T0 + n)).collect();
    let sparse: Vec<_> = (256..1_280).map(|n| log(&text(n, n % 64 == 7), T0 + n)).collect();
    for logs in [dense, sparse] {
        for batch in logs.chunks(64) {
            store.insert_logs(workspace.id, batch).await.expect("insert");
        }
    }
    let mut expected: Vec<String> = (0..256).filter(|n| n % 64 < 20).map(|n| text(n, true)).collect();
    expected.extend((256..1_280).filter(|n| n % 64 == 7).map(|n| text(n, true)));
    expected.reverse();
    assert_eq!(expected.len(), 96);
    assert_eq!(found(&store, workspace.id, &needle).await, expected);
    let reads = store.walk_reads();
    assert_eq!(reads.chunks_sifted, 4, "{reads:?}");
    assert_eq!(reads.chunks_whole, 16, "{reads:?}: the first step's chunks");
}
