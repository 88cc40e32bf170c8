//! Health, readiness, and JSON answers for unknown routes and methods.

use awc::http::StatusCode;
use serde_json::json;

use crate::common::start;

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
