//! The real clients people already run, unmodified, shipping to the real `sluice` binary:
//! the OpenTelemetry Python SDK (OTLP/HTTP protobuf), the OpenTelemetry JS SDK (OTLP/HTTP
//! JSON), and pino through pino-http-send (NDJSON without a Content-Type). Each is set up only
//! the way its documentation says (`OTEL_*` variables, a URL and a header), and every log must
//! arrive with its level, message, source and environment.
//!
//! The clients come from PyPI and npm (`tests/shippers/requirements.txt`, `package.json`), so
//! these tests are ignored by a plain `cargo test`: `cargo xtask ci` installs the clients into
//! `target/shippers` and runs them with `SLUICE_SHIPPERS_DIR` naming that folder (by hand:
//! `cargo xtask shippers`).

mod common;

use std::path::PathBuf;
use std::process::Command;

use common::{Cleanup, Server};
use serde_json::Value;

/// The folder holding the scripts, `venv/` and `node_modules/`, prepared by `cargo xtask`.
fn clients() -> PathBuf {
    let dir = std::env::var("SLUICE_SHIPPERS_DIR")
        .expect("SLUICE_SHIPPERS_DIR names the folder `cargo xtask shippers` prepares (run that instead)");
    let dir = PathBuf::from(dir);
    assert!(dir.join("node_modules").is_dir() && dir.join("venv").is_dir(), "{} is not prepared", dir.display());
    dir
}

/// Runs one client to its end; it must exit 0 (each flushes before it exits, so what it sent
/// has been answered by then).
fn ship(program: PathBuf, script: &str, env: &[(&str, String)]) {
    let dir = clients();
    let output = Command::new(&program)
        .arg(dir.join(script))
        .current_dir(&dir)
        .envs(env.iter().map(|(name, value)| (*name, value.as_str())))
        .output()
        .unwrap_or_else(|error| panic!("{}: {error}", program.display()));
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(output.status.success(), "{script} failed: {stderr}");
    assert!(!stderr.contains("Traceback") && !stderr.contains("Failed to export"), "{script} reported: {stderr}");
}

/// The logs of `source`, newest first.
fn logs_of(server: &Server, key: &str, source: &str) -> Vec<Value> {
    let (status, body) = server.http("GET", &format!("/v1/logs?source={source}&limit=100"), Some(key), "");
    assert_eq!(status, 200, "{body}");
    body["logs"].as_array().cloned().unwrap_or_default()
}

fn find<'a>(logs: &'a [Value], message: &str) -> &'a Value {
    logs.iter().find(|log| log["message"] == message).unwrap_or_else(|| panic!("{message} among {logs:#?}"))
}

/// The standard OpenTelemetry exporter settings for this server.
fn otel_env(server: &Server, key: &str, service: &str) -> Vec<(&'static str, String)> {
    vec![
        ("OTEL_EXPORTER_OTLP_ENDPOINT", format!("http://127.0.0.1:{}", server.port)),
        ("OTEL_EXPORTER_OTLP_HEADERS", format!("Authorization=Bearer%20{key}")),
        ("OTEL_SERVICE_NAME", service.to_owned()),
        ("OTEL_RESOURCE_ATTRIBUTES", "deployment.environment.name=staging,service.version=1.4.2".to_owned()),
    ]
}

#[test]
#[ignore = "needs the real clients from PyPI and npm: run by `cargo xtask ci` (or `cargo xtask shippers`)"]
fn the_opentelemetry_python_sdk_ships_over_otlp_protobuf() {
    let dir = Cleanup::new();
    let mut server = Server::start(dir.path());
    let key = server.first_start_key();
    ship(clients().join("venv/bin/python"), "otel_python.py", &otel_env(&server, &key, "py-checkout"));

    let logs = logs_of(&server, &key, "py-checkout");
    assert_eq!(logs.len(), 2, "{logs:#?}");
    let retried = find(&logs, "python: payment retried");
    assert_eq!((&retried["level"], &retried["environment"]), (&"warn".into(), &"staging".into()));
    assert_eq!((&retried["userId"], &retried["version"]), (&"u-42".into(), &"1.4.2".into()));
    assert_eq!(retried["data"]["attributes"]["order"], 1001);
    let failed = find(&logs, "python: payment failed");
    assert_eq!((&failed["level"], &failed["errorName"]), (&"error".into(), &"ValueError".into()));
    assert!(failed["errorStack"].as_str().is_some_and(|stack| stack.contains("card declined")), "{failed}");
}

#[test]
#[ignore = "needs the real clients from PyPI and npm: run by `cargo xtask ci` (or `cargo xtask shippers`)"]
fn the_opentelemetry_js_sdk_ships_over_otlp_json() {
    let dir = Cleanup::new();
    let mut server = Server::start(dir.path());
    let key = server.first_start_key();
    ship(PathBuf::from("node"), "otel_js.js", &otel_env(&server, &key, "js-cart"));

    let logs = logs_of(&server, &key, "js-cart");
    assert_eq!(logs.len(), 2, "{logs:#?}");
    let saved = find(&logs, "js: cart saved");
    assert_eq!(
        (&saved["level"], &saved["environment"], &saved["userId"]),
        (&"info".into(), &"staging".into(), &"42".into())
    );
    assert_eq!(find(&logs, "js: stock lookup failed")["level"], "error");
}

#[test]
#[ignore = "needs the real clients from PyPI and npm: run by `cargo xtask ci` (or `cargo xtask shippers`)"]
fn pino_ships_through_pino_http_send() {
    let dir = Cleanup::new();
    let mut server = Server::start(dir.path());
    let key = server.first_start_key();
    let url = format!("http://127.0.0.1:{}/v1/logs?source=pino-api&environment=production", server.port);
    ship(PathBuf::from("node"), "pino.js", &[("SLUICE_PINO_URL", url), ("SLUICE_API_KEY", key.clone())]);

    let logs = logs_of(&server, &key, "pino-api");
    assert_eq!(logs.len(), 3, "{logs:#?}");
    assert_eq!(find(&logs, "pino: cache warmed")["level"], "debug");
    let signed_in = find(&logs, "pino: user signed in");
    assert_eq!((&signed_in["level"], &signed_in["userId"]), (&"info".into(), &"7".into()));
    let failed = find(&logs, "pino: write failed");
    assert_eq!(
        (&failed["level"], &failed["environment"], &failed["errorName"]),
        (&"error".into(), &"production".into(), &"Error".into())
    );
    assert!(failed["errorStack"].as_str().is_some_and(|stack| stack.contains("pino.js")), "{failed}");
    assert!(failed["data"]["hostname"].is_string() && failed["data"]["pid"].is_number(), "{failed}");
}
