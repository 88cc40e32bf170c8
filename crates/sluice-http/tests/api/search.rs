//! `GET /v1/logs/search` end to end: the messages of docs/API.md, the response shape, each
//! query form, fields, filters, paging limits and tenant isolation.

use awc::http::StatusCode;
use serde_json::{Value, json};
use sluice_model::Scopes;

use crate::common::{NOW, entry, new_key, new_workspace, start};

fn at(message: &str, timestamp: i64) -> Value {
    let mut e = entry(message);
    e["timestamp"] = json!(timestamp);
    e
}

fn encoded(text: &str) -> String {
    text.bytes()
        .map(|byte| match byte {
            b'A'..=b'Z' | b'a'..=b'z' | b'0'..=b'9' | b'-' | b'.' | b'_' | b'~' => (byte as char).to_string(),
            other => format!("%{other:02X}"),
        })
        .collect()
}

#[actix_web::test]
async fn short_or_missing_queries_get_specs_message() {
    let server = start().await;
    for path in [
        "/v1/logs/search",
        "/v1/logs/search?q=",
        "/v1/logs/search?q=a",
        "/v1/logs/search?q=%20a%20",
        "/v1/logs/search?q=%22%22",
    ] {
        let reply = server.get(path).await;
        assert_eq!(reply.status, StatusCode::BAD_REQUEST, "{path}");
        assert_eq!(reply.body, json!({"error": "Search query must be at least 2 characters"}), "{path}");
    }
    server.stop().await;
}

#[actix_web::test]
async fn bad_parameters_are_validation_errors_naming_them() {
    let server = start().await;
    let long = "x".repeat(1001);
    let reply = server.get(&format!("/v1/logs/search?q={long}")).await;
    assert_eq!(reply.status, StatusCode::BAD_REQUEST);
    assert_eq!(reply.error(), "Validation error");
    assert_eq!(reply.issues(), [r#"["q"] String must contain at most 1000 character(s)"#]);
    let exactly = server.get(&format!("/v1/logs/search?q={}", "x".repeat(1000))).await;
    assert_eq!(exactly.status, StatusCode::OK);

    let reply = server.get("/v1/logs/search?q=timeout&fields=message,body&limit=0&level=fatal").await;
    assert_eq!(reply.status, StatusCode::BAD_REQUEST);
    assert_eq!(
        reply.issues(),
        [
            r#"["fields"] Invalid enum value. Expected 'message' | 'errorName' | 'errorStack' | 'data', received 'body'"#,
            r#"["limit"] Number must be greater than or equal to 1"#,
            r#"["level"] Invalid enum value. Expected 'debug' | 'info' | 'warn' | 'error', received 'fatal'"#,
        ]
    );
    let reply = server.get("/v1/logs/search?q=timeout&from=1.5").await;
    assert_eq!(reply.issues(), [r#"["from"] Expected integer, received float"#]);
    server.stop().await;
}

#[actix_web::test]
async fn the_response_echoes_the_query_and_pages() {
    let server = start().await;
    server.ingest((0..3).map(|i| at(&format!("Timeout {i} on db-1"), NOW + i)).collect()).await;
    let query = r#"timeout "db-1" -retry warn OR error"#;
    let reply = server.get(&format!("/v1/logs/search?q={}&fields=message,data", encoded(query))).await;
    assert_eq!(reply.status, StatusCode::OK, "{}", reply.body);
    assert_eq!(
        reply.body["query"],
        json!({
            "raw": query,
            "parsed": {"required": ["timeout"], "phrases": ["db-1"], "excluded": ["retry"], "optional": ["warn", "error"]},
            "fields": ["message", "data"]
        })
    );
    assert_eq!(reply.messages(), Vec::<String>::new(), "no log has warn or error");

    let reply = server.get("/v1/logs/search?q=TIMEOUT&limit=2").await;
    assert_eq!(reply.messages(), ["Timeout 2 on db-1", "Timeout 1 on db-1"]);
    assert_eq!(reply.body["pagination"], json!({"limit": 2, "offset": 0, "count": 2, "hasMore": true}));
    assert_eq!(reply.body["query"]["fields"], json!(["message"]), "message is the default field");
    let last = server.get("/v1/logs/search?q=timeout&limit=2&offset=2").await;
    assert_eq!(last.body["pagination"], json!({"limit": 2, "offset": 2, "count": 1, "hasMore": false}));
    let clamped = server.get("/v1/logs/search?q=timeout&limit=100000").await;
    assert_eq!(clamped.body["pagination"]["limit"], json!(500));
    let default = server.get("/v1/logs/search?q=timeout").await;
    assert_eq!(default.body["pagination"]["limit"], json!(50));
    // Returned logs have the same shape as everywhere else.
    assert_eq!(default.body["logs"][0]["source"], json!("api"));
    assert!(default.body["logs"][0]["id"].is_string());
    server.stop().await;
}

#[actix_web::test]
async fn every_form_and_field_works_over_http() {
    let server = start().await;
    let mut failing = at("request failed", NOW);
    failing["errorName"] = json!("TimeoutError");
    failing["errorStack"] = json!("at Pool.acquire");
    failing["data"] = json!({"host": "db-7"});
    failing["level"] = json!("error");
    server
        .ingest(vec![
            failing,
            at("ÉTÉ 100% _ok_", NOW + 1),
            at("connection reset by peer", NOW + 2),
            at("all good", NOW + 3),
        ])
        .await;
    let cases = [
        ("q=reset", vec!["connection reset by peer"]),
        ("q=%22reset%20by%22", vec!["connection reset by peer"]),
        ("q=reset%20OR%20good", vec!["all good", "connection reset by peer"]),
        ("q=-reset%20-good", vec!["ÉTÉ 100% _ok_", "request failed"]),
        ("q=%C3%A9t%C3%A9", vec!["ÉTÉ 100% _ok_"]),
        ("q=0%25%20_ok", vec!["ÉTÉ 100% _ok_"]),
        ("q=timeout", vec![]),
        ("q=timeout&fields=errorName", vec!["request failed"]),
        ("q=pool.acquire&fields=errorStack", vec!["request failed"]),
        ("q=%22host%22%3A%22db-7%22&fields=data", vec!["request failed"]),
        ("q=failed%20timeouterror&fields=message,errorName", vec!["request failed"]),
        ("q=reset&level=error", vec![]),
        ("q=re&level=error", vec!["request failed"]),
        ("q=re&environment=staging", vec![]),
        ("q=re&source=api&dataset=default", vec!["connection reset by peer", "request failed"]),
        (&format!("q=re&from={}&to={}", NOW + 1, NOW + 2), vec!["connection reset by peer"]),
    ];
    for (query, expected) in cases {
        let reply = server.get(&format!("/v1/logs/search?{query}")).await;
        assert_eq!(reply.status, StatusCode::OK, "{query}: {}", reply.body);
        assert_eq!(reply.messages(), expected, "{query}");
    }
    server.stop().await;
}

#[actix_web::test]
async fn search_sees_only_the_targeted_workspace() {
    let server = start().await;
    server.ingest(vec![entry("secret payroll export")]).await;
    let other = new_workspace(&server.store, "other").await;
    let (other_key, _) = new_key(&server.store, other.id, Scopes::ALL, None).await;
    let auth = format!("Bearer {other_key}");
    let reply = server.request("GET", "/v1/logs/search?q=payroll", &[("Authorization", &auth)], Vec::new()).await;
    assert_eq!(reply.status, StatusCode::OK);
    assert_eq!(reply.messages(), Vec::<String>::new());
    let reply = server.request("GET", "/v1/logs/search?q=-nothing", &[("Authorization", &auth)], Vec::new()).await;
    assert_eq!(reply.messages(), Vec::<String>::new());
    let own = server.get("/v1/logs/search?q=payroll").await;
    assert_eq!(own.messages(), ["secret payroll export"]);
    server.stop().await;
}

#[actix_web::test]
async fn search_is_a_route_of_its_own() {
    let server = start().await;
    let auth = format!("Bearer {}", server.key);
    let reply = server.request("POST", "/v1/logs/search?q=abc", &[("Authorization", &auth)], Vec::new()).await;
    assert_eq!(
        (reply.status, reply.body.clone()),
        (StatusCode::METHOD_NOT_ALLOWED, json!({"error": "Method not allowed"}))
    );
    let anonymous = server.request("GET", "/v1/logs/search?q=abc", &[], Vec::new()).await;
    assert_eq!(anonymous.status, StatusCode::UNAUTHORIZED);
    server.stop().await;
}
