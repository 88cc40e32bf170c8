//! `GET /metrics` after real traffic (both stores): the numbers match what was sent, the
//! families DECISIONS lists are there, nothing names a workspace, and no key is needed.

use awc::http::StatusCode;
use opentelemetry_proto::tonic::collector::logs::v1::ExportLogsServiceRequest;
use opentelemetry_proto::tonic::common::v1::{AnyValue, any_value};
use opentelemetry_proto::tonic::logs::v1::{LogRecord, ResourceLogs, ScopeLogs};
use prost::Message;
use serde_json::json;

use crate::common::{entry, start};

/// The value of the sample `name{labels}` (labels exactly as written), or of `name` alone.
fn sample(text: &str, series: &str) -> Option<f64> {
    text.lines().find_map(|line| line.strip_prefix(series)?.strip_prefix(' ')?.split(' ').next()?.parse().ok())
}

#[actix_web::test]
async fn metrics_count_the_traffic_they_saw() {
    let server = start().await;
    server.ingest(vec![entry("one"), entry("two"), entry("three")]).await;
    let jsonl = "{\"level\":\"info\",\"message\":\"a\",\"source\":\"s\",\"environment\":\"staging\"}\n".repeat(2);
    assert_eq!(
        server.post("/v1/logs", "application/x-ndjson", jsonl.clone().into_bytes()).await.status,
        StatusCode::OK
    );
    // An OTLP export of two records, one too long: one stored, one rejected.
    let record = |message: String| LogRecord {
        body: Some(AnyValue { value: Some(any_value::Value::StringValue(message)) }),
        ..LogRecord::default()
    };
    let export = ExportLogsServiceRequest {
        resource_logs: vec![ResourceLogs {
            scope_logs: vec![ScopeLogs {
                log_records: vec![record("ok".into()), record("x".repeat(10_001))],
                ..ScopeLogs::default()
            }],
            ..ResourceLogs::default()
        }],
    };
    let auth = format!("Bearer {}", server.key);
    let headers = [("Authorization", auth.as_str()), ("Content-Type", "application/x-protobuf")];
    let reply = server.request_raw("POST", "/v1/logs?environment=production", &headers, export.encode_to_vec()).await;
    assert_eq!(reply.status, StatusCode::OK);
    // Refusals: a validation error, a parse error, no key, a wrong key.
    assert_eq!(
        server.post_json("/v1/logs", &json!({"logs": [{"level": "loud"}]})).await.status,
        StatusCode::BAD_REQUEST
    );
    assert_eq!(
        server.post("/v1/logs?format=json", "application/json", b"{".to_vec()).await.status,
        StatusCode::BAD_REQUEST
    );
    assert_eq!(server.request("GET", "/v1/logs", &[], Vec::new()).await.status, StatusCode::UNAUTHORIZED);
    let wrong = [("Authorization", "Bearer slc_live_nope")];
    assert_eq!(server.request("GET", "/v1/logs", &wrong, Vec::new()).await.status, StatusCode::UNAUTHORIZED);
    let listed = server.get("/v1/logs").await;
    let id = listed.body["logs"][0]["id"].as_str().expect("an id").to_owned();
    assert_eq!(server.get(&format!("/v1/logs/{id}")).await.status, StatusCode::OK);

    let scraped = server.request_raw("GET", "/metrics", &[], Vec::new()).await;
    assert_eq!(scraped.status, StatusCode::OK);
    let content_type = scraped.headers.get("content-type").and_then(|value| value.to_str().ok()).unwrap_or_default();
    assert!(content_type.starts_with("application/openmetrics-text"), "{content_type}");
    let text = String::from_utf8(scraped.bytes.to_vec()).expect("text");
    let value = |series: &str| sample(&text, series).unwrap_or_else(|| panic!("{series} in\n{text}"));

    assert_eq!(value(r#"sluice_ingested_logs_total{format="json"}"#), 3.0);
    assert_eq!(value(r#"sluice_ingested_logs_total{format="jsonl"}"#), 2.0);
    assert_eq!(value(r#"sluice_ingested_logs_total{format="otlp"}"#), 1.0);
    assert_eq!(value(r#"sluice_ingested_bytes_total{format="jsonl"}"#), jsonl.len() as f64);
    assert_eq!(value(r#"sluice_rejections_total{reason="otlp_record"}"#), 1.0);
    assert_eq!(value(r#"sluice_rejections_total{reason="validation"}"#), 1.0);
    assert_eq!(value(r#"sluice_rejections_total{reason="parse"}"#), 1.0);
    assert_eq!(value(r#"sluice_rejections_total{reason="unauthenticated"}"#), 2.0);
    // Routes by pattern, never by path: the log's id is no label.
    assert_eq!(value(r#"sluice_http_requests_total{route="/v1/logs",status="200"}"#), 4.0);
    assert_eq!(value(r#"sluice_http_requests_total{route="/v1/logs",status="400"}"#), 2.0);
    assert_eq!(value(r#"sluice_http_requests_total{route="/v1/logs",status="401"}"#), 2.0);
    assert_eq!(value(r#"sluice_http_requests_total{route="/v1/logs/{id}",status="200"}"#), 1.0);
    assert_eq!(value(r#"sluice_http_request_duration_seconds_count{route="/v1/logs"}"#), 8.0);
    assert!(!text.contains(&id) && !text.contains(&server.workspace.id.to_string()), "no id or workspace in\n{text}");
    // Three stored requests, each committed in some group: every log counted once.
    assert_eq!(value("sluice_group_commit_logs_sum"), 6.0);
    assert!((1.0..=3.0).contains(&value("sluice_group_commit_logs_count")));
    assert_eq!(value("sluice_group_commit_wait_seconds_count"), value("sluice_group_commit_logs_count"));
    assert!(value("sluice_db_pool_max_connections") >= 1.0);
    assert!(sample(&text, r#"sluice_db_pool_connections{state="idle"}"#).is_some());
    assert_eq!((value("sluice_tails_open"), value("sluice_write_queue_logs")), (0.0, 0.0));
    assert_eq!(value("sluice_rate_limiter_fail_opens_total"), 0.0);
    // The scrape itself is counted on the next one.
    let again = server.request_raw("GET", "/metrics", &[], Vec::new()).await;
    let text = String::from_utf8(again.bytes.to_vec()).expect("text");
    assert_eq!(sample(&text, r#"sluice_http_requests_total{route="/metrics",status="200"}"#), Some(1.0));
    server.stop().await;
}
