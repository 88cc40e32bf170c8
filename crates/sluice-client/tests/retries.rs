//! The client's retry rules against a server that answers what the test scripts (a plain TCP
//! listener speaking HTTP/1.1): 429 waits its `retryAfter`, 503 backs off, a 4xx is final, a
//! batch goes gzipped. The real server's answers are tested with the real binary.

use std::io::{BufRead, BufReader, Read, Write};
use std::net::TcpListener;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use sluice_client::{Client, Error, Retries};

/// A request as the scripted server saw it: its head, and when it came.
struct Seen {
    head: String,
    at: Instant,
}

/// Serves `answers` (status line, body) one per connection, in order; returns its URL and
/// what it saw.
fn scripted(answers: Vec<(&'static str, &'static str)>) -> (String, Arc<Mutex<Vec<Seen>>>) {
    let listener = TcpListener::bind("127.0.0.1:0").expect("bind");
    let url = format!("http://{}", listener.local_addr().expect("address"));
    let seen = Arc::new(Mutex::new(Vec::new()));
    let log = seen.clone();
    std::thread::spawn(move || {
        for (status, body) in answers {
            let Ok((stream, _)) = listener.accept() else { return };
            let mut reader = BufReader::new(stream);
            let mut head = String::new();
            let mut length = 0;
            loop {
                let mut line = String::new();
                if reader.read_line(&mut line).unwrap_or(0) == 0 || line == "\r\n" {
                    break;
                }
                if let Some(value) = line.to_ascii_lowercase().strip_prefix("content-length:") {
                    length = value.trim().parse().unwrap_or(0);
                }
                head.push_str(&line);
            }
            let mut body_in = vec![0; length];
            let _ = reader.read_exact(&mut body_in);
            log.lock().expect("log").push(Seen { head, at: Instant::now() });
            let answer = format!(
                "HTTP/1.1 {status}\r\nContent-Type: application/json\r\nContent-Length: {}\r\nConnection: close\r\n\r\n{body}",
                body.len()
            );
            let _ = reader.get_mut().write_all(answer.as_bytes());
        }
    });
    (url, seen)
}

fn entry() -> serde_json::Value {
    serde_json::json!({"level": "info", "message": "hi", "source": "test", "environment": "development"})
}

#[tokio::test]
async fn a_429_waits_its_retry_after_and_a_503_backs_off_until_the_batch_is_stored() {
    let (url, seen) = scripted(vec![
        ("429 Too Many Requests", r#"{"error":"Rate limit exceeded","retryAfter":1}"#),
        ("503 Service Unavailable", r#"{"error":"Service unavailable"}"#),
        ("200 OK", r#"{"success":true,"count":1,"timestamp":5}"#),
    ]);
    let retries = Retries { attempts: 5, first_delay: Duration::from_millis(10), max_delay: Duration::from_millis(50) };
    let client = Client::new(&url).expect("client").with_token("slc_live_x").with_retries(retries);
    let accepted = client.ingest(&[entry()]).await.expect("stored in the end");
    assert_eq!((accepted.count, accepted.timestamp), (1, 5));
    let seen = seen.lock().expect("log");
    assert_eq!(seen.len(), 3);
    assert!(seen[1].at - seen[0].at >= Duration::from_secs(1), "the 429's retryAfter was honoured");
    for request in seen.iter() {
        let head = request.head.to_ascii_lowercase();
        assert!(head.starts_with("post /v1/logs"), "{head}");
        assert!(head.contains("content-encoding: gzip") && head.contains("authorization: bearer slc_live_x"), "{head}");
    }
}

#[tokio::test]
async fn a_refusal_is_final_and_says_what_the_server_said() {
    let (url, seen) = scripted(vec![("400 Bad Request", r#"{"error":"Validation error","issues":[]}"#)]);
    let client = Client::new(&url).expect("client");
    let error = client.ingest(&[entry()]).await.expect_err("refused");
    assert!(
        matches!(&error, Error::Refused { status: 400, message, .. } if message == "Validation error"),
        "{error:?}"
    );
    assert_eq!(error.exit_code(), 2);
    assert_eq!(seen.lock().expect("log").len(), 1, "not retried");
}

#[tokio::test]
async fn a_server_that_stays_unavailable_is_an_error_after_the_last_try() {
    let (url, seen) = scripted(vec![("503 Service Unavailable", r#"{"error":"Service unavailable"}"#); 3]);
    let retries = Retries { attempts: 3, first_delay: Duration::from_millis(10), max_delay: Duration::from_millis(20) };
    let client = Client::new(&url).expect("client").with_retries(retries);
    let error = client.summary().await.expect_err("unavailable");
    assert_eq!((error.exit_code(), error.status()), (3, Some(503)));
    assert_eq!(seen.lock().expect("log").len(), 3);
    assert!(matches!(Client::new("localhost:8080"), Err(Error::Usage(_))));
}
