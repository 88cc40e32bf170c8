//! What real clients send, replayed as they sent it (`../shared/corpus/client-captures`): the
//! OpenTelemetry Python SDK (OTLP/HTTP protobuf), the OpenTelemetry JS SDK (OTLP JSON, even
//! with `?format=json`), pino-http-send and winston; and OTLP's own rules (partial success,
//! gzip, the answer in the request's encoding, 400 `PARSE_ERROR` for a malformed body).

use std::io::Write as _;

use awc::http::StatusCode;
use opentelemetry_proto::tonic::collector::logs::v1::{ExportLogsServiceRequest, ExportLogsServiceResponse};
use opentelemetry_proto::tonic::common::v1::{AnyValue, KeyValue, any_value};
use opentelemetry_proto::tonic::logs::v1::{LogRecord, ResourceLogs, ScopeLogs};
use opentelemetry_proto::tonic::resource::v1::Resource;
use prost::Message;
use serde_json::{Value, json};

use sluice_testkit::captures::{Captured, captures};

use crate::common::{TestServer, start};

/// Sends a captured request as it was, with the server's key for `KEY` and `extra_query`
/// appended (the URL a user configures), and only the headers that describe the body.
async fn replay(server: &TestServer, captured: &Captured, extra_query: &str) -> (StatusCode, Vec<u8>, String) {
    let auth = format!("Bearer {}", server.key);
    let mut headers = vec![("authorization", auth.as_str())];
    for (name, value) in &captured.headers {
        if matches!(name.as_str(), "content-type" | "user-agent" | "content-encoding") {
            headers.push((name.as_str(), value.as_str()));
        }
    }
    let separator = if captured.path.contains('?') { '&' } else { '?' };
    let path = if extra_query.is_empty() {
        captured.path.clone()
    } else {
        format!("{}{separator}{extra_query}", captured.path)
    };
    let reply = server.request_raw(&captured.method, &path, &headers, captured.body.clone()).await;
    let content_type = reply.headers.get("content-type").and_then(|value| value.to_str().ok()).unwrap_or_default();
    (reply.status, reply.bytes.to_vec(), content_type.to_owned())
}

/// Every log of the workspace, newest first.
async fn logs(server: &TestServer) -> Vec<Value> {
    server.get("/v1/logs?limit=100").await.body["logs"].as_array().cloned().unwrap_or_default()
}

fn by_message<'a>(logs: &'a [Value], message: &str) -> &'a Value {
    logs.iter().find(|log| log["message"] == message).unwrap_or_else(|| panic!("{message} in {logs:?}"))
}

#[actix_web::test]
async fn the_python_sdk_protobuf_export_is_stored_field_by_field() {
    let server = start().await;
    let captured = captures("otel-python_otlp-http.txt").remove(0);
    let (status, body, content_type) = replay(&server, &captured, "").await;
    assert_eq!(status, StatusCode::OK, "{}", String::from_utf8_lossy(&body));
    assert_eq!(content_type, "application/x-protobuf");
    let answer = ExportLogsServiceResponse::decode(&body[..]).expect("a protobuf answer");
    assert_eq!(answer.partial_success, None, "every record stored");

    let logs = logs(&server).await;
    assert_eq!(logs.len(), 2);
    let info = by_message(&logs, "user logged in");
    let error = by_message(&logs, "disk full on /var");
    assert_eq!((&info["level"], &error["level"]), (&json!("info"), &json!("error")));
    // service.name → source; no deployment.environment and no query: the key's (a test key).
    assert_eq!((&info["source"], &info["environment"]), (&json!("demo-svc"), &json!("development")));
    assert_eq!(info["userId"], "42");
    assert_eq!(info["data"]["attributes"]["code.file.path"], "/tmp/otel/send_logs.py");
    assert_eq!(info["data"]["resource"]["telemetry.sdk.name"], "opentelemetry");
    assert_eq!(info["data"]["scope"]["name"], "demo");
    assert!(info["timestamp"].as_i64().is_some_and(|ms| ms > 1_795_000_000_000), "{}", info["timestamp"]);
    server.stop().await;
}

#[actix_web::test]
async fn the_js_sdk_json_export_is_stored_and_answered_in_json() {
    let server = start().await;
    let captured = captures("otel-js_otlp-http-json.txt").remove(0);
    assert!(captured.path.contains("format=json"), "the capture names format=json, and is OTLP all the same");
    let (status, body, content_type) = replay(&server, &captured, "").await;
    assert_eq!(status, StatusCode::OK, "{}", String::from_utf8_lossy(&body));
    assert_eq!((content_type.as_str(), body.as_slice()), ("application/json", &b"{}"[..]));
    let logs = logs(&server).await;
    let info = by_message(&logs, "user logged in");
    assert_eq!(
        (&info["source"], &info["userId"], &info["timestamp"]),
        (&json!("demo-js"), &json!("42"), &json!(1_795_314_374_143_i64))
    );
    assert_eq!(by_message(&logs, "disk full on /var")["level"], "error");
    server.stop().await;
}

#[actix_web::test]
async fn pino_and_winston_requests_are_stored_as_sent() {
    let server = start().await;
    // Their URL is the user's to configure: the source and environment go in its query.
    for name in ["pino-http-send_ndjson.txt", "winston_http.txt", "winston_http_batch.txt"] {
        for captured in captures(name) {
            let (status, body, _) = replay(&server, &captured, "source=node-app&environment=staging").await;
            assert_eq!(status, StatusCode::OK, "{name}: {}", String::from_utf8_lossy(&body));
        }
    }
    let logs = logs(&server).await;
    assert_eq!(logs.len(), 3 + 2 + 3);
    let pino = by_message(&logs, "user logged in");
    assert_eq!(
        (&pino["level"], &pino["userId"], &pino["timestamp"]),
        (&json!("info"), &json!("42"), &json!(1_795_314_371_380_i64))
    );
    let failed = by_message(&logs, "write failed");
    assert_eq!((&failed["level"], &failed["errorName"]), (&json!("error"), &json!("Error")));
    assert!(failed["errorStack"].as_str().is_some_and(|stack| stack.contains("pino_test.js:12:14")));
    assert_eq!(failed["data"]["hostname"], "vm");
    assert_eq!(by_message(&logs, "two")["data"]["a"], 1);
    assert_eq!(by_message(&logs, "disk full on /var")["environment"], "staging");
    server.stop().await;
}

fn text(value: &str) -> Option<AnyValue> {
    Some(AnyValue { value: Some(any_value::Value::StringValue(value.to_owned())) })
}

fn attribute(key: &str, value: &str) -> KeyValue {
    KeyValue { key: key.to_owned(), value: text(value), ..KeyValue::default() }
}

fn export(records: Vec<LogRecord>, resource: Vec<KeyValue>) -> ExportLogsServiceRequest {
    ExportLogsServiceRequest {
        resource_logs: vec![ResourceLogs {
            resource: Some(Resource { attributes: resource, ..Resource::default() }),
            scope_logs: vec![ScopeLogs { log_records: records, ..ScopeLogs::default() }],
            ..ResourceLogs::default()
        }],
    }
}

#[actix_web::test]
async fn a_gzipped_export_with_a_bad_record_is_partly_stored_and_says_why() {
    let server = start().await;
    let good = LogRecord { body: text("checkout done"), severity_number: 13, ..LogRecord::default() };
    let bad = LogRecord { body: text(&"x".repeat(10_001)), ..LogRecord::default() };
    let resource = vec![attribute("service.name", "checkout"), attribute("deployment.environment.name", "staging-eu")];
    let request = export(vec![good, bad], resource).encode_to_vec();
    let mut gzip = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::fast());
    gzip.write_all(&request).expect("gzip");
    let auth = format!("Bearer {}", server.key);
    let headers =
        [("Authorization", auth.as_str()), ("Content-Type", "application/x-protobuf"), ("Content-Encoding", "gzip")];
    let reply = server.request_raw("POST", "/v1/logs", &headers, gzip.finish().expect("gzip")).await;
    assert_eq!(reply.status, StatusCode::OK);
    let answer = ExportLogsServiceResponse::decode(&reply.bytes[..]).expect("protobuf");
    let partial = answer.partial_success.expect("a partial success");
    assert_eq!(partial.rejected_log_records, 1);
    assert!(partial.error_message.starts_with("record 1: message: "), "{}", partial.error_message);

    let logs = logs(&server).await;
    assert_eq!(logs.len(), 1);
    assert_eq!(
        (&logs[0]["level"], &logs[0]["source"], &logs[0]["environment"]),
        (&json!("warn"), &json!("checkout"), &json!("staging"))
    );

    // The same in OTLP JSON: the answer is JSON, the count a string (int64).
    let body = json!({"resourceLogs": [{"scopeLogs": [{"logRecords": [{"body": {"stringValue": ""}, "severityText": "WARNING"}, {"timeUnixNano": "1"}]}]}]});
    let reply = server.post("/v1/logs?environment=production", "application/json", body.to_string().into_bytes()).await;
    assert_eq!(reply.status, StatusCode::OK, "{}", reply.body);
    assert_eq!(reply.body["partialSuccess"]["rejectedLogRecords"], "1");
    assert!(
        reply.body["partialSuccess"]["errorMessage"]
            .as_str()
            .is_some_and(|m| m.contains("timestamp: Timestamp out of range"))
    );
    let logs = crate::shippers::logs(&server).await;
    let empty = by_message(&logs, "(empty)");
    assert_eq!((&empty["level"], &empty["source"]), (&json!("warn"), &json!("unknown_service")));
    server.stop().await;
}

#[actix_web::test]
async fn malformed_and_oversized_exports_are_refused_and_store_nothing() {
    let server = start().await;
    for (content_type, body) in [
        ("application/x-protobuf", b"\x0a\xff\xff\xff\x0f".to_vec()),
        ("application/x-protobuf", b"\x0a\x03\x12\x05\x1a".to_vec()),
        ("application/json", br#"{"resourceLogs": [{"scopeLogs": [{"logRecords": [{"body": 7}]}]}]}"#.to_vec()),
        (
            "application/json",
            br#"{"resourceLogs": [{"scopeLogs": [{"logRecords": [{"timeUnixNano": "soon"}]}]}]}"#.to_vec(),
        ),
    ] {
        let reply = server.post("/v1/logs?environment=production", content_type, body.clone()).await;
        assert_eq!(reply.status, StatusCode::BAD_REQUEST, "{body:?}: {}", reply.body);
        assert_eq!(reply.body["code"], "PARSE_ERROR", "{}", reply.body);
        assert!(reply.error().contains("OTLP"), "{}", reply.body);
    }
    let many = vec![LogRecord { body: text("x"), ..LogRecord::default() }; 1_001];
    let reply = server.post("/v1/logs", "application/x-protobuf", export(many, Vec::new()).encode_to_vec()).await;
    assert_eq!(reply.status, StatusCode::BAD_REQUEST);
    assert_eq!(reply.issues(), ["[] A request carries at most 1000 logs"]);
    assert!(logs(&server).await.is_empty());
    server.stop().await;
}
