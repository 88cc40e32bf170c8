//! docs/API.md, overload: a stalled store and clients that keep sending. Requests past the
//! write queue's room are refused at once, and those no writer takes within the queue's wait
//! when it passes, both 503 `Service unavailable` with `Retry-After`, nothing stored, while the
//! store is still stalled, each within a second; memory stays flat however many are refused;
//! once the store is free, every request that got a 200 has its logs stored and no refused one
//! has.
//!
//! On both stores: the stall is an `IMMEDIATE` transaction on the SQLite file, or a `SHARE`
//! lock on PostgreSQL's `logs` table, from the test. Nothing here waits on a clock: the
//! refusals are collected before the lock is let go, so none of them can have waited for the
//! store.

use std::collections::BTreeSet;
use std::sync::Arc;
use std::time::Duration;

use awc::http::StatusCode;
use diesel::connection::SimpleConnection;
use diesel::{Connection, SqliteConnection};
use serde_json::json;
use sluice_store::GroupOptions;
use sluice_store::group::GroupCommitter;

use crate::common::{Reply, TestServer, entry, resident_bytes, start_configured};

/// What holds the store still: SQLite's write lock, or a lock PostgreSQL's inserts wait for.
enum Stall {
    Sqlite(SqliteConnection),
    Postgres(Box<sluice_store_pg::testing::WriteStall>),
}

impl Stall {
    async fn take(server: &TestServer) -> Stall {
        match &server.database {
            None => {
                let mut blocker = SqliteConnection::establish(server.path.to_str().expect("utf-8")).expect("connect");
                blocker.batch_execute("BEGIN IMMEDIATE").expect("take the write lock");
                Stall::Sqlite(blocker)
            }
            Some(database) => {
                Stall::Postgres(Box::new(sluice_store_pg::testing::WriteStall::take(database.url()).await))
            }
        }
    }

    async fn release(self) {
        match self {
            Stall::Sqlite(mut blocker) => blocker.batch_execute("ROLLBACK").expect("let the lock go"),
            Stall::Postgres(stall) => stall.release().await,
        }
    }
}

#[actix_web::test]
async fn a_stalled_store_gets_503_with_retry_after_and_stores_only_what_was_acknowledged() {
    let server = Arc::new(
        start_configured(&sluice_store_sqlite::SqliteOptions::default(), |state| {
            let options = GroupOptions {
                max_queued_logs: 250,
                max_wait: Duration::from_millis(200),
                ..state.store.group_options()
            };
            state.writer = GroupCommitter::start(Arc::new(state.store.clone()), options);
        })
        .await,
    );
    // The stall, held by another connection until the test lets it go.
    let stall = Stall::take(&server).await;

    // Eight requests of 100 logs each, into a queue with room for 250: two at most are let in,
    // so six at least are refused at once.
    let (sent, mut answers) = tokio::sync::mpsc::unbounded_channel::<(usize, Reply)>();
    for request in 0..8 {
        let (server, sent) = (server.clone(), sent.clone());
        actix_web::rt::spawn(async move {
            let logs: Vec<_> = (0..100).map(|n| entry(&format!("request {request} log {n}"))).collect();
            let reply = server.post_json("/v1/logs", &json!({ "logs": logs })).await;
            let _ = sent.send((request, reply));
        });
    }
    drop(sent);
    let mut outcomes = Vec::new();
    while outcomes.len() < 6 {
        outcomes.push(answers.recv().await.expect("an answer"));
    }
    // The store is still stalled: these six did not wait for it.
    for (request, reply) in &outcomes {
        assert_eq!(reply.status, StatusCode::SERVICE_UNAVAILABLE, "request {request}: {}", reply.body);
        assert_eq!(reply.body, json!({"error": "Service unavailable", "retryAfter": 1}), "request {request}");
        assert_eq!(reply.headers.get("Retry-After").and_then(|value| value.to_str().ok()), Some("1"));
    }

    // While it stays stalled, wave after wave is refused, each request within a second, and
    // memory stays flat: the refused bodies are not kept.
    let before = resident_bytes();
    for wave in 0..10 {
        let mut waves = Vec::new();
        for request in 0..30 {
            let server = server.clone();
            waves.push(actix_web::rt::spawn(async move {
                let logs: Vec<_> = (0..100).map(|n| entry(&format!("wave {wave} request {request} log {n}"))).collect();
                let started = std::time::Instant::now();
                let reply = server.post_json("/v1/logs", &json!({ "logs": logs })).await;
                (reply.status, started.elapsed())
            }));
        }
        for wave_request in waves {
            let (status, took) = wave_request.await.expect("request task");
            assert_eq!(status, StatusCode::SERVICE_UNAVAILABLE, "wave {wave}");
            assert!(took < Duration::from_secs(1), "wave {wave}: a refusal took {took:?}");
        }
    }
    let grown = resident_bytes().saturating_sub(before);
    assert!(grown < 64 * 1024 * 1024, "300 refused requests grew the process by {grown} bytes");

    stall.release().await;
    while let Some(outcome) = answers.recv().await {
        outcomes.push(outcome);
    }
    assert_eq!(outcomes.len(), 8);
    let acknowledged: BTreeSet<usize> =
        outcomes.iter().filter(|(_, reply)| reply.status == StatusCode::OK).map(|(request, _)| *request).collect();
    assert!(!acknowledged.is_empty(), "the batch a writer took is written once the store is free");
    for (request, reply) in &outcomes {
        assert!(
            matches!(reply.status, StatusCode::OK | StatusCode::SERVICE_UNAVAILABLE),
            "request {request}: {} {}",
            reply.status,
            reply.body
        );
    }
    // Stored: exactly the logs of the acknowledged requests.
    let stored: Vec<String> = server.get("/v1/logs?limit=1000").await.messages();
    let requests_stored: BTreeSet<usize> =
        stored.iter().filter_map(|message| message.strip_prefix("request ")?.split(' ').next()?.parse().ok()).collect();
    assert_eq!(requests_stored, acknowledged);
    assert_eq!(stored.len(), acknowledged.len() * 100, "and nothing of the refused waves");
    // And the queue has room again.
    assert_eq!(server.post_json("/v1/logs", &entry("after")).await.status, StatusCode::OK);
    drop(answers);
    if let Ok(server) = Arc::try_unwrap(server) {
        server.stop().await;
    }
}
