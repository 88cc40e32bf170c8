//! What pino (through pino-http-send), bunyan and winston send, as captured from the real
//! clients (`../shared/corpus/client-captures`), read with the mapping of DECISIONS ("pino /
//! bunyan / winston JSON"): numeric levels, `msg`, `time`, `err` objects.

use sluice_ingest::{Defaults, Format, Options, parse};
use sluice_model::Level;

/// The bodies of a capture file: each `--- body (N bytes) repr:` line is followed by a Python
/// bytes literal.
fn bodies(name: &str) -> Vec<Vec<u8>> {
    let path = format!("{}/../../../shared/corpus/client-captures/{name}", env!("CARGO_MANIFEST_DIR"));
    let text = std::fs::read_to_string(&path).unwrap_or_else(|error| panic!("{path}: {error}"));
    let mut lines = text.lines();
    let mut found = Vec::new();
    while let Some(line) = lines.next() {
        if line.starts_with("--- body") {
            found.push(unrepr(lines.next().unwrap_or_default()));
        }
    }
    found
}

/// A Python `b'...'` literal's bytes.
fn unrepr(literal: &str) -> Vec<u8> {
    let inner = literal.trim().strip_prefix("b'").and_then(|rest| rest.strip_suffix('\'')).unwrap_or_default();
    let mut bytes = Vec::new();
    let mut chars = inner.chars();
    while let Some(c) = chars.next() {
        if c != '\\' {
            let mut buffer = [0; 4];
            bytes.extend_from_slice(c.encode_utf8(&mut buffer).as_bytes());
            continue;
        }
        match chars.next() {
            Some('n') => bytes.push(b'\n'),
            Some('r') => bytes.push(b'\r'),
            Some('t') => bytes.push(b'\t'),
            Some('x') => {
                let hex: String = chars.by_ref().take(2).collect();
                bytes.push(u8::from_str_radix(&hex, 16).unwrap_or(b'?'));
            }
            Some(other) => bytes.push(u8::try_from(other).unwrap_or(b'?')),
            None => {}
        }
    }
    bytes
}

fn options() -> Options {
    let mut options = Options::new(1_795_314_400_000);
    options.defaults =
        Defaults { source: Some("node-app".into()), environment: Some("production".into()), ..Defaults::default() };
    options
}

#[test]
fn pino_lines_take_their_numeric_level_msg_time_and_err() {
    let body = bodies("pino-http-send_ndjson.txt").remove(0);
    // As pino-http-send sends it: NDJSON, which the server also sniffs as JSONL.
    assert_eq!(Format::sniff(&body), Format::Jsonl);
    // Its first line carries `userId: 42`, a number: SPEC's `userId` is a string, so that line
    // is refused by name; the others are read.
    let refused = parse(Format::Jsonl, &body, &options()).expect_err("a numeric userId");
    assert!(refused.to_string().contains("Validation error"), "{refused}");
    let rest: Vec<&[u8]> = body.split(|byte| *byte == b'\n').skip(1).collect();
    let batch = parse(Format::Jsonl, &rest.join(&b'\n'), &options()).expect("pino's lines");
    let [warn, error] = &batch.entries[..] else { panic!("two entries: {:?}", batch.entries) };
    assert_eq!((warn.level, warn.message.as_str(), warn.timestamp), (Level::Warn, "low disk", 1_795_314_371_382));
    assert_eq!((error.level, error.message.as_str()), (Level::Error, "write failed"));
    assert_eq!(error.error_name.as_deref(), Some("Error"));
    assert!(error.error_stack.as_deref().is_some_and(|stack| stack.starts_with("Error: disk full on /var\n    at ")));
    let data = serde_json::to_value(&error.data).expect("data");
    assert_eq!((&data["hostname"], &data["pid"]), (&serde_json::json!("vm"), &serde_json::json!(16034)));
    assert_eq!(data["err"], serde_json::json!({"type": "Error", "message": "disk full on /var"}));
}

#[test]
fn winston_entries_keep_their_own_fields() {
    for body in bodies("winston_http.txt").into_iter().chain(bodies("winston_http_batch.txt")) {
        let text = String::from_utf8_lossy(&body).replace("\"userId\":42", "\"userId\":\"42\"");
        let batch = parse(Format::Json, text.as_bytes(), &options()).expect("winston");
        assert!(batch.entries.iter().all(|entry| !entry.message.is_empty()), "{text}");
    }
}

#[test]
fn bunyan_levels_and_an_error_named_by_name() {
    let line = br#"{"name":"api","hostname":"h","pid":7,"level":60,"msg":"fatal","time":"2026-11-22T02:26:07.769Z","err":{"name":"TypeError","message":"x is undefined","stack":"TypeError: x is undefined"},"v":0}
{"level":20,"msg":"details","message":"the real message","time":1795314367000}"#;
    let batch = parse(Format::Jsonl, line, &options()).expect("bunyan");
    let [fatal, details] = &batch.entries[..] else { panic!("two entries") };
    assert_eq!((fatal.level, fatal.message.as_str(), fatal.timestamp), (Level::Error, "fatal", 1_795_314_367_769));
    assert_eq!(fatal.error_name.as_deref(), Some("TypeError"));
    // `message` wins over `msg`, which stays in data.
    assert_eq!((details.level, details.message.as_str()), (Level::Debug, "the real message"));
    assert_eq!(serde_json::to_value(&details.data).expect("data")["msg"], "details");
}
