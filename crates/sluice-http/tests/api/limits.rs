//! docs/API.md, Limits: headers past the limit, too many headers, and idle connections that
//! must not keep other clients waiting.

use std::io::{Read, Write};

use actix_web::http::StatusCode;
use serde_json::json;

use crate::common::{start, start_configured};

/// A raw request's first line of answer and its body, sent on a connection of its own.
fn raw(address: &str, head: &str) -> String {
    let mut stream = std::net::TcpStream::connect(address).expect("connect");
    stream.write_all(head.as_bytes()).expect("send");
    let mut answer = Vec::new();
    let mut buffer = [0_u8; 4096];
    // The server closes the connection after a 431; a 200 is read up to its body.
    while let Ok(read) = stream.read(&mut buffer) {
        if read == 0 {
            break;
        }
        answer.extend_from_slice(&buffer[..read]);
        if answer.windows(4).any(|window| window == b"\r\n\r\n") && !answer.starts_with(b"HTTP/1.1 431") {
            break;
        }
    }
    String::from_utf8_lossy(&answer).into_owned()
}

/// Headers past `max_header_bytes` get 431 `Request headers too large` before authentication
/// looks at them; headers within it are served.
#[actix_web::test]
async fn headers_past_the_limit_get_431_before_anything_else() {
    let server = start_configured(&sluice_store_sqlite::SqliteOptions::default(), |state| {
        state.max_header_bytes = 4096;
    })
    .await;
    let pad = "p".repeat(5_000);
    let reply = server.request("GET", "/v1/logs", &[("X-Pad", &pad)], Vec::new()).await;
    assert_eq!(reply.status, StatusCode::REQUEST_HEADER_FIELDS_TOO_LARGE);
    assert_eq!(reply.body, json!({"error": "Request headers too large"}));
    let auth = format!("Bearer {}", server.key);
    let pad = "p".repeat(3_000);
    let reply = server.request("GET", "/v1/logs", &[("Authorization", &auth), ("X-Pad", &pad)], Vec::new()).await;
    assert_eq!(reply.status, StatusCode::OK, "{}", reply.body);
    server.stop().await;
}

/// More headers than the HTTP layer reads (96) are refused with 431 too, and the server goes on.
#[actix_web::test]
async fn too_many_headers_are_refused() {
    let server = start().await;
    let address = server.base.trim_start_matches("http://").to_owned();
    let many: String = (0..200).map(|n| format!("X-H{n}: v\r\n")).collect();
    let head = format!("GET /v1/logs HTTP/1.1\r\nHost: {address}\r\n{many}\r\n");
    let answer = actix_web::rt::task::spawn_blocking(move || raw(&address, &head)).await.expect("client");
    assert!(answer.starts_with("HTTP/1.1 431"), "{answer}");
    assert_eq!(server.get("/v1/logs").await.status, StatusCode::OK);
    server.stop().await;
}

/// The open files this process may hold (`Max open files` of /proc/self/limits, soft).
fn open_files_limit() -> usize {
    let limits = std::fs::read_to_string("/proc/self/limits").unwrap_or_default();
    limits
        .lines()
        .find(|line| line.starts_with("Max open files"))
        .and_then(|line| line.split_whitespace().nth(3))
        .and_then(|soft| soft.parse().ok())
        .unwrap_or(1024)
}

/// Thousands of idle connections (some that never finish their headers) do not keep another
/// client from being served: a server thread is never held by a connection that sends nothing.
/// As many as this process's open-file limit allows, up to 2,000 (two descriptors each: the
/// client's end and the server's, in this one process).
#[actix_web::test]
async fn idle_connections_do_not_keep_others_waiting() {
    let server = start().await;
    let address = server.base.trim_start_matches("http://").to_owned();
    let count = 2_000.min(open_files_limit().saturating_sub(256) / 2);
    assert!(count >= 400, "the open-file limit leaves room for {count} idle connections only");
    let target = address.clone();
    let idle = actix_web::rt::task::spawn_blocking(move || {
        (0..count)
            .map(|n| {
                let mut stream = std::net::TcpStream::connect(&target).expect("connect an idle client");
                if n % 2 == 0 {
                    // Half of them start a request and never finish its headers.
                    stream.write_all(b"GET /v1/logs HTTP/1.1\r\nHost: x\r\n").expect("send a partial head");
                }
                stream
            })
            .collect::<Vec<_>>()
    })
    .await
    .expect("idle clients");
    assert_eq!(idle.len(), count);
    let reply = server.get("/v1/logs").await;
    assert_eq!(reply.status, StatusCode::OK, "{}", reply.body);
    drop(idle);
    server.stop().await;
}
