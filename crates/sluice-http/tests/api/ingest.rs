//! `POST /v1/logs`: body shapes, every validation rule and limit, atomic batches, parse errors,
//! format resolution, query defaults, size limits and compression.

use std::io::Write;

use awc::http::StatusCode;
use serde_json::{Value, json};

use crate::common::{TestServer, entry, start};

const LEVEL_MESSAGE: &str = "Invalid enum value. Expected 'debug' | 'info' | 'warn' | 'error', received 'fatal'";

async fn stored(server: &TestServer) -> Vec<String> {
    server.get("/v1/logs?limit=1000").await.messages()
}

#[actix_web::test]
async fn three_json_shapes_are_accepted_and_answered() {
    let server = start().await;
    let before = sluice_http::unix_now_ms();
    for (body, count) in [(json!({"logs": [entry("a"), entry("b")]}), 2), (json!([entry("c")]), 1), (entry("d"), 1)] {
        let reply = server.post_json("/v1/logs", &body).await;
        assert_eq!(reply.status, StatusCode::OK, "{}", reply.body);
        assert_eq!(reply.body["success"], json!(true));
        assert_eq!(reply.body["count"], json!(count));
        let timestamp = reply.body["timestamp"].as_i64().unwrap_or_default();
        assert!(timestamp >= before, "server time of ingestion: {timestamp}");
    }
    let logs = server.get("/v1/logs").await;
    assert_eq!(logs.body["logs"].as_array().map(Vec::len), Some(4));
    let newest = &logs.body["logs"][0];
    assert_eq!(newest["ipAddress"], json!("127.0.0.1"), "ipAddress comes from the TCP peer");
    assert!(newest["timestamp"].as_i64().unwrap_or_default() >= before, "omitted timestamp is receive time");
    server.stop().await;
}

#[actix_web::test]
async fn decided_example_issue_path_and_message() {
    let server = start().await;
    let mut bad = entry("bad");
    bad["level"] = json!("fatal");
    let reply = server.post_json("/v1/logs", &json!([entry("a"), entry("b"), entry("c"), bad.clone()])).await;
    assert_eq!((reply.status, reply.error()), (StatusCode::BAD_REQUEST, "Validation error"));
    assert_eq!(reply.body["issues"], json!([{"path": [3, "level"], "message": LEVEL_MESSAGE}]));

    let reply = server.post_json("/v1/logs", &json!({"logs": [entry("a"), bad.clone()]})).await;
    assert_eq!(reply.issues(), vec![format!(r#"["logs",1,"level"] {LEVEL_MESSAGE}"#)]);
    let reply = server.post_json("/v1/logs", &bad).await;
    assert_eq!(reply.issues(), vec![format!(r#"[0,"level"] {LEVEL_MESSAGE}"#)]);
    assert!(stored(&server).await.is_empty());
    server.stop().await;
}

#[actix_web::test]
async fn every_rule_of_the_spec_tables_is_enforced_and_every_issue_listed() {
    let server = start().await;
    let with = |field: &str, value: Value| {
        let mut e = entry("m");
        e[field] = value;
        e
    };
    let without = |field: &str| {
        let mut e = entry("m");
        e.as_object_mut().map(|o| o.remove(field));
        e
    };
    let batch = vec![
        without("level"),
        without("message"),
        without("source"),
        without("environment"),
        with("message", json!("")),
        with("message", json!("x".repeat(10_001))),
        with("source", json!("")),
        with("source", json!("s".repeat(101))),
        with("environment", json!("prod")),
        with("tags", json!(vec!["t"; 21])),
        with("tags", json!(["ok", "t".repeat(51)])),
        with("stepIndex", json!(1001)),
        with("stepIndex", json!(-1)),
        with("data", json!("not an object")),
        with("timestamp", json!("not a time")),
        // A whole number is taken as its text (pino's `userId: 42`); any other number is not.
        with("userId", json!(12.5)),
    ];
    let reply = server.post_json("/v1/logs", &json!(batch)).await;
    assert_eq!(reply.status, StatusCode::BAD_REQUEST);
    assert_eq!(
        reply.issues(),
        vec![
            r#"[0,"level"] Required"#,
            r#"[1,"message"] Required"#,
            r#"[2,"source"] Required"#,
            r#"[3,"environment"] Required"#,
            r#"[4,"message"] String must contain at least 1 character(s)"#,
            r#"[5,"message"] String must contain at most 10000 character(s)"#,
            r#"[6,"source"] String must contain at least 1 character(s)"#,
            r#"[7,"source"] String must contain at most 100 character(s)"#,
            r#"[8,"environment"] Invalid enum value. Expected 'development' | 'staging' | 'production', received 'prod'"#,
            r#"[9,"tags"] Array must contain at most 20 element(s)"#,
            r#"[10,"tags",1] String must contain at most 50 character(s)"#,
            r#"[11,"stepIndex"] Number must be less than or equal to 1000"#,
            r#"[12,"stepIndex"] Number must be greater than or equal to 0"#,
            r#"[13,"data"] Expected object, received string"#,
            r#"[14,"timestamp"] Invalid timestamp: expected Unix milliseconds or an ISO 8601 date-time"#,
            r#"[15,"userId"] Expected string, received number"#,
        ]
    );
    // Limits themselves are accepted.
    let edge = vec![
        with("message", json!("x".repeat(10_000))),
        with("source", json!("s".repeat(100))),
        with("tags", json!(vec!["t".repeat(50); 20])),
        with("stepIndex", json!(0)),
        with("stepIndex", json!(1000)),
    ];
    server.ingest(edge).await;
    server.stop().await;
}

#[actix_web::test]
async fn batch_size_is_one_to_one_hundred() {
    let server = start().await;
    // docs/API.md: parsing stops at the 101st entry, whose one issue is the whole answer.
    let too_many = vec![r#"[] A request carries at most 100 logs"#];
    let reply = server.post_json("/v1/logs", &json!({"logs": vec![entry("m"); 101]})).await;
    assert_eq!(reply.status, StatusCode::BAD_REQUEST);
    assert_eq!(reply.issues(), too_many);
    let reply = server.post_json("/v1/logs", &json!(vec![entry("m"); 101])).await;
    assert_eq!(reply.issues(), too_many);
    let reply = server.post_json("/v1/logs", &json!({"logs": []})).await;
    assert_eq!(reply.issues(), vec![r#"["logs"] Array must contain at least 1 element(s)"#]);
    let reply = server.post_json("/v1/logs", &json!([])).await;
    assert_eq!(reply.issues(), vec![r#"[] Array must contain at least 1 element(s)"#]);
    let lines: String = (0..101).map(|i| format!("{}\n", entry(&format!("l{i}")))).collect();
    let reply = server.post("/v1/logs", "application/x-ndjson", lines.into_bytes()).await;
    assert_eq!(reply.issues(), too_many);
    let reply = server.post("/v1/logs", "application/x-ndjson", b"\n \n".to_vec()).await;
    assert_eq!(reply.issues(), vec![r#"[] Array must contain at least 1 element(s)"#]);
    // Every format stops there, also before a line it could not read.
    let syslog: String = (0..101).map(|i| format!("<14>1 2026-11-22T02:19:14Z vm app - - - line {i}\n")).collect();
    let reply = server.post("/v1/logs?format=syslog&environment=production", "text/plain", syslog.into_bytes()).await;
    assert_eq!(reply.issues(), too_many);
    let text: String = (0..101).map(|i| format!("INFO line {i}\n")).collect::<String>() + "<999>broken\n";
    let reply =
        server.post("/v1/logs?format=text&source=app&environment=production", "text/plain", text.into_bytes()).await;
    assert_eq!(reply.issues(), too_many);
    let csv = "level,message,source,environment\n".to_owned() + &"info,m,app,production\n".repeat(101);
    let reply = server.post("/v1/logs?format=csv", "text/csv", csv.into_bytes()).await;
    assert_eq!(reply.issues(), too_many);
    let mut many = vec![entry("m"); 101];
    many[50]["environment"] = json!("qa");
    let reply = server.post_json("/v1/logs", &json!({"logs": many})).await;
    assert_eq!(reply.issues(), too_many, "the entries before the 101st are not listed either");
    assert!(stored(&server).await.is_empty());
    server.ingest(vec![entry("m"); 100]).await;
    assert_eq!(stored(&server).await.len(), 100);
    server.stop().await;
}

/// docs/API.md: a timestamp before 2000 or more than a day past the server's clock is an issue
/// (year 1 and year 9999 were stored, and on PostgreSQL each made partitions).
#[actix_web::test]
async fn timestamps_out_of_range_are_refused() {
    let server = start().await;
    let mut old = entry("old");
    old["timestamp"] = json!("0001-01-01T00:00:00Z");
    let mut far = entry("far");
    far["timestamp"] = json!("9999-12-31T23:59:59Z");
    let reply = server.post_json("/v1/logs", &json!({"logs": [entry("fine"), old, far]})).await;
    assert_eq!(reply.status, StatusCode::BAD_REQUEST);
    assert_eq!(
        reply.issues(),
        vec![
            r#"["logs",1,"timestamp"] Timestamp out of range"#.to_owned(),
            r#"["logs",2,"timestamp"] Timestamp out of range"#.to_owned(),
        ]
    );
    assert!(stored(&server).await.is_empty(), "nothing of the request is stored");
    server.stop().await;
}

/// docs/API.md: an answer stays within 64 KiB whatever the body holds: at most 100 issues,
/// each repeating at most 64 characters of what was sent.
#[actix_web::test]
async fn error_answers_stay_small_whatever_was_sent() {
    let server = start().await;
    let huge = "x".repeat(20_000);
    let entries: Vec<_> = (0..100)
        .map(|_| json!({"level": huge, "message": "m", "source": "s", "environment": huge, "dataset": "d"}))
        .collect();
    let reply = server.post_json("/v1/logs", &json!({"logs": entries})).await;
    assert_eq!(reply.status, StatusCode::BAD_REQUEST);
    let size = reply.body.to_string().len();
    assert!(size < 64 * 1024, "a {size}-byte answer to a body of 4 MB of bad values");
    assert_eq!(reply.issues().len(), 100, "at most 100 issues");
    let first = &reply.issues()[0];
    assert!(first.ends_with("received 'xxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxx…'"), "{first}");
    server.stop().await;
}

/// docs/API.md: a body that does not arrive in full within the body timeout is answered 408,
/// and nothing is stored. The client sends its headers and one byte of a 1,000-byte body, then
/// reads: the answer comes when the server gives up (no sleep orders anything here).
#[actix_web::test]
async fn a_body_that_trickles_is_cut_with_408() {
    let server = crate::common::start_configured(&sluice_store_sqlite::SqliteOptions::default(), |state| {
        state.body_timeout = std::time::Duration::from_millis(300);
    })
    .await;
    let address = server.base.trim_start_matches("http://").to_owned();
    let key = server.key.clone();
    let answer = actix_web::rt::task::spawn_blocking(move || {
        use std::io::Read;
        let mut stream = std::net::TcpStream::connect(&address).expect("connect");
        let head = format!(
            "POST /v1/logs HTTP/1.1\r\nHost: {address}\r\nAuthorization: Bearer {key}\r\n\
             Content-Type: application/json\r\nContent-Length: 1000\r\n\r\n{{"
        );
        stream.write_all(head.as_bytes()).expect("send the head and one byte");
        let mut answer = vec![0; 4096];
        let read = stream.read(&mut answer).expect("the server answers");
        String::from_utf8_lossy(&answer[..read]).into_owned()
    })
    .await
    .expect("the client ran");
    assert!(answer.starts_with("HTTP/1.1 408"), "{answer}");
    assert!(answer.contains(r#"{"error":"Request timeout"}"#), "{answer}");
    assert!(stored(&server).await.is_empty());
    server.stop().await;
}

#[actix_web::test]
async fn one_bad_entry_stores_nothing() {
    let server = start().await;
    let mut bad = entry("bad");
    bad["stepIndex"] = json!(5000);
    let reply = server.post_json("/v1/logs", &json!({"logs": [entry("good"), bad, entry("good too")]})).await;
    assert_eq!(reply.status, StatusCode::BAD_REQUEST);
    assert!(stored(&server).await.is_empty());
    server.stop().await;
}

#[actix_web::test]
async fn unreadable_bodies_are_parse_errors() {
    let server = start().await;
    let reply = server.post("/v1/logs", "application/json", b"{\"level\": ".to_vec()).await;
    assert_eq!(reply.status, StatusCode::BAD_REQUEST);
    assert_eq!(reply.body["code"], json!("PARSE_ERROR"));
    assert_eq!(reply.error(), "JSON line 1: EOF while parsing a value at column 10");

    let body = format!("{}\n{{\"level\" \"info\"}}\n", entry("a"));
    let reply = server.post("/v1/logs", "application/x-ndjson", body.into_bytes()).await;
    assert_eq!(
        (reply.error(), &reply.body["code"]),
        ("JSONL line 2: expected `:` at column 10", &json!("PARSE_ERROR"))
    );

    // Readable lines that break rules are validation errors indexed by entry, not by line.
    let mut bad = entry("b");
    bad["level"] = json!("fatal");
    let body = format!("{}\n\n{}\n", entry("a"), bad);
    let reply = server.post("/v1/logs", "application/x-ndjson", body.into_bytes()).await;
    assert_eq!(reply.issues(), vec![format!(r#"[1,"level"] {LEVEL_MESSAGE}"#)]);

    let reply = server.post("/v1/logs", "application/json", b"{\"message\": \"\xff\xfe\"}".to_vec()).await;
    assert_eq!((reply.status, &reply.body["code"]), (StatusCode::BAD_REQUEST, &json!("PARSE_ERROR")));
    assert!(stored(&server).await.is_empty());
    server.stop().await;
}

#[actix_web::test]
async fn format_comes_from_parameter_then_content_type_then_sniffing() {
    let server = start().await;
    let jsonl = format!("{}\n\n{}\n", entry("one"), entry("two")).into_bytes();
    let auth = format!("Bearer {}", server.key);
    for (path, content_type) in [
        ("/v1/logs", Some("application/x-ndjson")),
        ("/v1/logs", Some("application/jsonl; charset=utf-8")),
        ("/v1/logs?format=jsonl", Some("application/json")),
        ("/v1/logs", None),
    ] {
        let mut headers = vec![("Authorization", auth.as_str())];
        if let Some(content_type) = content_type {
            headers.push(("Content-Type", content_type));
        }
        let reply = server.request("POST", path, &headers, jsonl.clone()).await;
        assert_eq!(
            (reply.status, &reply.body["count"]),
            (StatusCode::OK, &json!(2)),
            "{path} {content_type:?}: {}",
            reply.body
        );
    }
    let reply = server.post("/v1/logs?format=xml", "application/json", entry("x").to_string().into_bytes()).await;
    assert_eq!(reply.status, StatusCode::BAD_REQUEST);
    assert_eq!(
        reply.issues(),
        vec![
            r#"["format"] Invalid enum value. Expected 'json' | 'jsonl' | 'syslog' | 'text' | 'csv' | 'obl', received 'xml'"#
        ]
    );
    server.stop().await;
}

#[actix_web::test]
async fn query_defaults_fill_missing_fields_and_are_validated() {
    let server = start().await;
    let sparse = json!({"message": "only a message", "dataset": "own", "host": "db-1"});
    let reply = server.post_json("/v1/logs?source=svc&environment=staging&level=warn&dataset=defaulted", &sparse).await;
    assert_eq!(reply.status, StatusCode::OK, "{}", reply.body);
    let log = &server.get("/v1/logs").await.body["logs"][0];
    assert_eq!(
        (&log["source"], &log["environment"], &log["level"], &log["dataset"], &log["data"]),
        (&json!("svc"), &json!("staging"), &json!("warn"), &json!("own"), &json!({"host": "db-1"}))
    );
    let reply = server.post_json("/v1/logs?source=svc&environment=staging&level=loud", &sparse).await;
    assert_eq!(
        reply.issues(),
        vec![r#"[0,"level"] Invalid enum value. Expected 'debug' | 'info' | 'warn' | 'error', received 'loud'"#]
    );
    server.stop().await;
}

#[actix_web::test]
async fn bodies_are_capped_at_five_mebibytes_after_decompression() {
    let server = start().await;
    let big = vec![b' '; 5 * 1024 * 1024 + 1];
    let reply = server.post("/v1/logs", "application/json", big).await;
    assert_eq!((reply.status, reply.error()), (StatusCode::PAYLOAD_TOO_LARGE, "Payload too large"));

    // A small gzip body that inflates past the cap.
    let mut encoder = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::best());
    encoder.write_all(&vec![b' '; 6 * 1024 * 1024]).expect("gzip");
    let bomb = encoder.finish().expect("gzip");
    assert!(bomb.len() < 64 * 1024);
    let auth = format!("Bearer {}", server.key);
    let headers =
        [("Authorization", auth.as_str()), ("Content-Type", "application/json"), ("Content-Encoding", "gzip")];
    let reply = server.request("POST", "/v1/logs", &headers, bomb).await;
    assert_eq!((reply.status, reply.error()), (StatusCode::PAYLOAD_TOO_LARGE, "Payload too large"));

    let mut encoder = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::fast());
    encoder.write_all(json!([entry("zipped")]).to_string().as_bytes()).expect("gzip");
    let reply = server.request("POST", "/v1/logs", &headers, encoder.finish().expect("gzip")).await;
    assert_eq!(reply.status, StatusCode::OK, "{}", reply.body);

    let zstd_body = zstd::encode_all(json!([entry("squeezed")]).to_string().as_bytes(), 3).expect("zstd");
    let headers =
        [("Authorization", auth.as_str()), ("Content-Type", "application/json"), ("Content-Encoding", "zstd")];
    let reply = server.request("POST", "/v1/logs", &headers, zstd_body).await;
    assert_eq!(reply.status, StatusCode::OK, "{}", reply.body);

    let mut encoder = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::fast());
    encoder.write_all(json!([entry("x-zipped")]).to_string().as_bytes()).expect("gzip");
    let headers =
        [("Authorization", auth.as_str()), ("Content-Type", "application/json"), ("Content-Encoding", "x-gzip")];
    let reply = server.request("POST", "/v1/logs", &headers, encoder.finish().expect("gzip")).await;
    assert_eq!(reply.status, StatusCode::OK, "x-gzip is gzip: {}", reply.body);

    let mut encoder = flate2::write::ZlibEncoder::new(Vec::new(), flate2::Compression::fast());
    encoder.write_all(json!([entry("deflated")]).to_string().as_bytes()).expect("deflate");
    let headers =
        [("Authorization", auth.as_str()), ("Content-Type", "application/json"), ("Content-Encoding", "deflate")];
    let reply = server.request("POST", "/v1/logs", &headers, encoder.finish().expect("deflate")).await;
    assert_eq!(reply.status, StatusCode::OK, "{}", reply.body);

    let headers = [("Authorization", auth.as_str()), ("Content-Type", "application/json"), ("Content-Encoding", "br")];
    let reply = server.request("POST", "/v1/logs", &headers, b"whatever".to_vec()).await;
    assert_eq!(reply.status, StatusCode::BAD_REQUEST);
    assert_eq!(reply.body["code"], json!("PARSE_ERROR"));
    assert_eq!(reply.error(), "Unsupported Content-Encoding 'br'; use gzip, deflate or zstd");

    // Bytes that are not what the header claims are a parse error, and store nothing.
    let headers =
        [("Authorization", auth.as_str()), ("Content-Type", "application/json"), ("Content-Encoding", "gzip")];
    let reply = server.request("POST", "/v1/logs", &headers, b"not gzip at all".to_vec()).await;
    assert_eq!((reply.status, &reply.body["code"]), (StatusCode::BAD_REQUEST, &json!("PARSE_ERROR")));
    assert_eq!(stored(&server).await, vec!["deflated", "x-zipped", "squeezed", "zipped"]);
    server.stop().await;
}

#[actix_web::test]
async fn syslog_bodies_from_real_shippers_are_stored_with_their_parts() {
    let server = start().await;
    let bodies: [&[u8]; 2] = [
        br#"<11>1 2026-11-22T02:19:14+00:00 vm myapp - ID47 [timeQuality tzKnown="1" isSynced="0"][exampleSDID@32473 iut="3"] disk full on /var"#,
        b"<36>1 2026-11-22T02:19:14+00:00 vm sshd 8270 - - Invalid user webmaster from 127.0.0.9\n<14>Nov 22 02:26:14 vm myapp: hello\n",
    ];
    for body in bodies {
        let reply = server.post("/v1/logs?format=syslog&environment=production", "text/plain", body.to_vec()).await;
        assert_eq!(reply.status, StatusCode::OK, "{}", reply.body);
    }
    let logs = server.get("/v1/logs?limit=10").await.body["logs"].clone();
    let find = |message: &str| {
        logs.as_array().into_iter().flatten().find(|log| log["message"] == json!(message)).cloned().unwrap_or_default()
    };
    let disk = find("disk full on /var");
    assert_eq!(
        (&disk["level"], &disk["source"], &disk["timestamp"]),
        (&json!("error"), &json!("myapp"), &json!(1_795_313_954_000_i64))
    );
    assert_eq!(
        disk["data"],
        json!({
            "hostname": "vm",
            "msgId": "ID47",
            "facility": "user",
            "structuredData": {"timeQuality": {"tzKnown": "1", "isSynced": "0"}, "exampleSDID@32473": {"iut": "3"}}
        })
    );
    let sshd = find("Invalid user webmaster from 127.0.0.9");
    assert_eq!(
        (&sshd["level"], &sshd["source"], &sshd["data"]["procId"], &sshd["data"]["facility"]),
        (&json!("warn"), &json!("sshd"), &json!("8270"), &json!("auth"))
    );
    let hello = find("hello");
    assert_eq!(
        (&hello["level"], &hello["source"], &hello["data"]["hostname"]),
        (&json!("info"), &json!("myapp"), &json!("vm"))
    );

    // A line that breaks the grammar names its line and column, and nothing of the body is stored.
    let reply = server
        .post(
            "/v1/logs?format=syslog&environment=production",
            "text/plain",
            b"<14>1 - h a - - - ok\n<999>bad\n".to_vec(),
        )
        .await;
    assert_eq!((reply.status, &reply.body["code"]), (StatusCode::BAD_REQUEST, &json!("PARSE_ERROR")));
    assert_eq!(reply.error(), "Syslog line 2: expected a PRI from <0> to <191> at column 1");
    assert_eq!(server.get("/v1/logs?limit=10").await.messages().len(), 3);
    server.stop().await;
}

#[actix_web::test]
async fn text_lines_take_timestamp_and_level_out_of_the_message() {
    let server = start().await;
    let body =
        b"2015-10-18 18:01:47,978 WARN [main] org.apache.hadoop.Retry: retrying\nno keyword on this line\n".to_vec();
    let reply =
        server.post("/v1/logs?source=hadoop&environment=staging&level=debug", "text/plain; charset=utf-8", body).await;
    assert_eq!((reply.status, &reply.body["count"]), (StatusCode::OK, &json!(2)), "{}", reply.body);
    let logs = server.get("/v1/logs").await.body["logs"].clone();
    let warn =
        logs.as_array().into_iter().flatten().find(|log| log["level"] == json!("warn")).cloned().unwrap_or_default();
    assert_eq!(
        (&warn["message"], &warn["timestamp"], &warn["source"]),
        (&json!("[main] org.apache.hadoop.Retry: retrying"), &json!(1_445_191_307_978_i64), &json!("hadoop"))
    );
    let plain =
        logs.as_array().into_iter().flatten().find(|log| log["level"] == json!("debug")).cloned().unwrap_or_default();
    assert_eq!(plain["message"], json!("no keyword on this line"), "query default level when no keyword");

    let reply = server
        .post("/v1/logs?source=s&environment=staging", "text/plain", b"ok line\n\xff\xfe broken\n".to_vec())
        .await;
    assert_eq!((reply.status, reply.error()), (StatusCode::BAD_REQUEST, "Text line 2: invalid UTF-8 at column 1"));
    server.stop().await;
}

#[actix_web::test]
async fn csv_rows_become_entries_with_typed_cells() {
    let server = start().await;
    let body =
        b"level,message,tags,data,region\nwarn,\"disk 91%, full\",a;b,\"{\"\"mount\"\":\"\"/var\"\"}\",eu\n".to_vec();
    let reply = server.post("/v1/logs?source=db&environment=production", "text/csv; header=present", body).await;
    assert_eq!((reply.status, &reply.body["count"]), (StatusCode::OK, &json!(1)), "{}", reply.body);
    let log = server.get("/v1/logs").await.body["logs"][0].clone();
    assert_eq!(
        (&log["message"], &log["tags"], &log["data"]),
        (&json!("disk 91%, full"), &json!(["a", "b"]), &json!({"mount": "/var", "region": "eu"}))
    );
    let reply = server
        .post("/v1/logs?source=db&environment=production", "text/csv", b"level,message\ninfo,a,extra\n".to_vec())
        .await;
    assert_eq!(
        (reply.status, reply.error()),
        (StatusCode::BAD_REQUEST, "CSV line 2: expected 2 fields as in the header, found 3")
    );
    server.stop().await;
}

/// One body of each format, sent with neither `format` nor `Content-Type`: sniffing in
/// the order of docs/API.md (POST /v1/logs) picks each parser, end to end.
#[actix_web::test]
async fn every_format_is_sniffed_and_stored() {
    let server = start().await;
    let obl = std::fs::read(concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/../../../shared/corpus/obl/aacprocessors_generated_with_notice.obl"
    ))
    .expect("obl corpus");
    let bodies: Vec<(&str, Vec<u8>)> = vec![
        ("obl", obl),
        ("json", json!([entry("from json")]).to_string().into_bytes()),
        ("jsonl", format!("{}\n{}\n", entry("jsonl one"), entry("jsonl two")).into_bytes()),
        ("syslog", b"<13>1 2024-03-01T12:00:00Z host app - - - from syslog\n".to_vec()),
        ("csv", b"level,message,source\nwarn,from csv,api\n".to_vec()),
        ("text", b"2024-03-01 12:00:00 ERROR from text\n".to_vec()),
    ];
    let auth = format!("Bearer {}", server.key);
    for (format, body) in bodies {
        let reply = server
            .request("POST", "/v1/logs?source=sniffed&environment=production", &[("Authorization", &auth)], body)
            .await;
        assert_eq!(reply.status, StatusCode::OK, "{format}: {}", reply.body);
    }
    let messages = server.get("/v1/logs?limit=100").await.messages();
    for expected in ["from json", "jsonl one", "jsonl two", "from syslog", "from csv", "from text", "Button: I"] {
        assert!(messages.iter().any(|message| message == expected), "{expected} in {messages:?}");
    }
    server.stop().await;
}

/// DECISIONS, "pino / bunyan / winston JSON": what pino-http-send posts (NDJSON, no
/// Content-Type, numeric levels, `msg`, `time`, `err`) is stored with our fields.
#[actix_web::test]
async fn pino_ndjson_without_a_content_type_is_stored_with_its_levels_and_error() {
    let server = start().await;
    let body = concat!(
        r#"{"level":40,"time":1795314371382,"pid":16034,"hostname":"vm","msg":"low disk"}"#,
        "\n",
        r#"{"level":50,"time":1795314371382,"pid":16034,"hostname":"vm","err":{"type":"Error","message":"disk full","stack":"Error: disk full\n    at main (app.js:12:14)"},"msg":"write failed"}"#,
        "\n"
    );
    let auth = format!("Bearer {}", server.key);
    let reply = server
        .request(
            "POST",
            "/v1/logs?source=node-app&environment=production",
            &[("Authorization", &auth)],
            body.as_bytes().to_vec(),
        )
        .await;
    assert_eq!(reply.status, StatusCode::OK, "{}", reply.body);
    assert_eq!(reply.body["count"], 2);
    let listed = server.get("/v1/logs?level=error").await;
    let log = &listed.body["logs"][0];
    assert_eq!(
        (&log["message"], &log["errorName"], &log["timestamp"]),
        (&json!("write failed"), &json!("Error"), &json!(1_795_314_371_382_i64))
    );
    assert_eq!(log["data"]["err"], json!({"type": "Error", "message": "disk full"}));
    assert_eq!(log["data"]["hostname"], "vm");
    assert_eq!(server.get("/v1/logs?level=warn").await.body["logs"][0]["message"], "low disk");
    server.stop().await;
}
