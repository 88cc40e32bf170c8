//! Health, readiness, and JSON answers for unknown routes and methods.

use awc::http::StatusCode;
use serde_json::json;

use std::time::Duration;

use crate::common::{entry, start, start_with};

#[actix_web::test]
async fn health_and_readiness_need_no_key() {
    let server = start().await;
    let reply = server.request("GET", "/healthz", &[], Vec::new()).await;
    assert_eq!((reply.status, reply.body.clone()), (StatusCode::OK, json!({"status": "ok"})));
    let reply = server.request("GET", "/readyz", &[], Vec::new()).await;
    assert_eq!(reply.status, StatusCode::OK);
    server.stop().await;
}

#[actix_web::test]
async fn a_database_locked_by_another_process_is_unavailable_until_released() {
    use diesel::connection::SimpleConnection;
    use diesel::{Connection, SqliteConnection};

    // SQLite's own kind of trouble; PostgreSQL's outage test stops and restarts a server.
    if !crate::common::on_sqlite() {
        return;
    }
    let options = sluice_store_sqlite::SqliteOptions { busy_timeout: Duration::from_millis(200), ..Default::default() };
    let server = start_with(&options).await;
    server.ingest(vec![entry("before")]).await;
    // Another process takes SQLite's write lock and keeps it.
    let mut locker = SqliteConnection::establish(server.path.to_str().expect("utf-8")).expect("connect");
    locker.batch_execute("BEGIN IMMEDIATE; CREATE TABLE lock_probe (x);").expect("take the write lock");

    let reply = server.request("GET", "/readyz", &[], Vec::new()).await;
    assert_eq!(
        (reply.status, reply.body.clone()),
        (StatusCode::SERVICE_UNAVAILABLE, json!({"error": "Service unavailable"}))
    );
    let reply = server.post_json("/v1/logs", &entry("during")).await;
    assert_eq!(
        (reply.status, reply.error()),
        (StatusCode::SERVICE_UNAVAILABLE, "Service unavailable"),
        "a 503, not a 500"
    );
    assert_eq!(server.get("/v1/logs").await.messages(), vec!["before"], "reads go on beside the lock (WAL)");
    let reply = server.request("GET", "/healthz", &[], Vec::new()).await;
    assert_eq!(reply.status, StatusCode::OK, "liveness does not depend on the database");

    drop(locker);
    let reply = server.request("GET", "/readyz", &[], Vec::new()).await;
    assert_eq!(reply.status, StatusCode::OK, "ready again once the lock is gone: {}", reply.body);
    server.ingest(vec![entry("after")]).await;
    assert_eq!(server.get("/v1/logs").await.messages(), vec!["after", "before"], "the refused batch left nothing");
    server.stop().await;
}

#[actix_web::test]
async fn unknown_routes_and_methods_answer_json() {
    let server = start().await;
    let reply = server.request("GET", "/v2/nothing", &[], Vec::new()).await;
    assert_eq!((reply.status, reply.body.clone()), (StatusCode::NOT_FOUND, json!({"error": "Not found"})));
    for (method, path) in [("DELETE", "/v1/logs"), ("PUT", "/v1/logs/abc"), ("POST", "/healthz")] {
        let reply = server.request(method, path, &[], Vec::new()).await;
        assert_eq!(
            (reply.status, reply.body.clone()),
            (StatusCode::METHOD_NOT_ALLOWED, json!({"error": "Method not allowed"})),
            "{method} {path}"
        );
    }
    server.stop().await;
}
