//! A database without room (DECISIONS, Storage): ingest answers 503 `Storage is full` with
//! `Retry-After` and stores nothing of the request, `/readyz` answers 503 until a write
//! succeeds again, reads keep working, and the service takes logs again by itself once space
//! is freed. The room runs out through SQLite's own cap on the file (`max_page_count`, which
//! `SLUICE_SQLITE_MAX_BYTES` sets), which fails a write exactly as a full disk does
//! (`SQLITE_FULL`, "database or disk is full").

use std::sync::Arc;

use diesel::connection::SimpleConnection;
use diesel::{Connection, SqliteConnection};
use serde_json::json;
use sluice_store_sqlite::{SqliteOptions, SqliteStore};

use crate::common::{on_sqlite, start_over};

/// Logs the workspace has stored this month, from the quota's counter (kept in the insert's
/// transaction, so it counts exactly what was stored).
async fn stored(server: &crate::common::TestServer) -> u64 {
    let month = sluice_model::calendar::month_start_ms(sluice_http::unix_now_ms());
    server.store.monthly_usage(server.workspace.id, month).await.expect("usage")
}

#[actix_web::test]
async fn a_full_database_refuses_ingest_until_space_is_freed() {
    if !on_sqlite() {
        return;
    }
    // A megabyte of the file taken by something else (an operator's to free later), then the
    // store opened with the file capped at 3 MB.
    let folder = tempfile::tempdir().expect("a folder");
    let path = folder.path().join("sluice.db");
    let options = SqliteOptions { max_bytes: Some(3 << 20), ..SqliteOptions::default() };
    drop(SqliteStore::open_with(&path, &options).expect("made"));
    let mut operator = SqliteConnection::establish(&path.to_string_lossy()).expect("a connection of its own");
    operator.batch_execute("PRAGMA busy_timeout = 10000; CREATE TABLE filler (b BLOB); INSERT INTO filler VALUES (randomblob(1048576));").expect("filled");
    let server = start_over(Arc::new(SqliteStore::open_with(&path, &options).expect("opened"))).await;
    assert_eq!(server.get("/readyz").await.status, 200);
    // 400 characters of noise a log, which compression cannot shrink.
    let noise = |seed: usize| -> String {
        let mut state = (seed as u64).wrapping_mul(0x9e37_79b9_7f4a_7c15) | 1;
        (0..400)
            .map(|_| {
                state ^= state << 13;
                state ^= state >> 7;
                state ^= state << 17;
                char::from(b'a' + (state % 26) as u8)
            })
            .collect()
    };
    let batch = |n: usize| {
        let entries: Vec<_> = (0..100)
            .map(|i| json!({"level": "info", "message": format!("order {n}-{i} paid {}", noise(n * 100 + i)), "source": "billing", "environment": "production"}))
            .collect();
        json!({ "logs": entries })
    };
    let mut full = None;
    for n in 0..200 {
        let before = stored(&server).await;
        let reply = server.post_json("/v1/logs", &batch(n)).await;
        match reply.status.as_u16() {
            200 => assert_eq!(stored(&server).await, before + 100),
            _ => {
                full = Some((reply, before));
                break;
            }
        }
    }
    let (reply, before) = full.expect("3 MB fill up within 20,000 logs of 400 bytes");
    assert_eq!(reply.status, 503, "{:?}", reply.body);
    assert_eq!(reply.body, json!({"error": "Storage is full", "retryAfter": 30}));
    assert_eq!(reply.headers.get("retry-after").and_then(|value| value.to_str().ok()), Some("30"));
    assert_eq!(stored(&server).await, before, "nothing of the refused request is stored");
    assert!(before > 0);

    let ready = server.get("/readyz").await;
    assert_eq!(ready.status, 503, "not ready while full: {:?}", ready.body);
    let again = server.post_json("/v1/logs", &batch(1_000)).await;
    assert_eq!(again.status, 503, "still full: {:?}", again.body);
    let listed = server.get("/v1/logs?limit=5").await;
    assert_eq!(listed.status, 200, "reads keep working");
    assert_eq!(listed.body["logs"].as_array().map(Vec::len), Some(5));

    // The operator frees space, and the readiness check's own write finds room, with no
    // client writing meanwhile.
    operator.batch_execute("DELETE FROM filler;").expect("freed");
    assert_eq!(server.get("/readyz").await.status, 200, "ready once a write succeeds again");
    for n in 2_000..2_010 {
        let resumed = server.post_json("/v1/logs", &batch(n)).await;
        assert_eq!(resumed.status, 200, "every connection writes again: {:?}", resumed.body);
    }
    let found = server.get("/v1/logs/search?q=2005-99").await;
    assert_eq!(found.body["logs"].as_array().map(Vec::len), Some(1), "{:?}", found.body);
}
