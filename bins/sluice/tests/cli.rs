//! The `sluice` binary as an operator uses it: `serve` prints a working key on first start,
//! `admin` commands print what README.md (Administration) shows and take effect on a running
//! server, and SIGTERM lets a request in flight finish. On SQLite, or with `SLUICE_TEST_BACKEND=postgres`
//! (as `cargo xtask ci` runs them a second time) on a PostgreSQL database of each test's own.

mod common;

use std::io::{BufRead, BufReader, Read, Write};
use std::net::TcpStream;
use std::process::Command;
use std::time::{Duration, Instant};

use serde_json::{Value, json};

use common::*;

#[test]
fn first_start_prints_a_working_key_once() {
    let dir = Cleanup::new();
    let mut server = Server::start(dir.path());
    let key = server.first_start_key();
    let (status, body) = server.http("POST", "/v1/logs", Some(&key), &entry("hello"));
    assert_eq!((status, &body["count"]), (200, &json!(1)), "{body}");
    let (status, body) = server.http("GET", "/v1/logs", Some(&key), "");
    assert_eq!((status, &body["logs"][0]["message"]), (200, &json!("hello")));
    drop(server);

    let workspaces = admin(dir.path(), &["workspace", "list"]);
    assert_eq!(workspaces["workspaces"].as_array().map(Vec::len), Some(1));
    assert_eq!(
        (&workspaces["workspaces"][0]["name"], &workspaces["workspaces"][0]["plan"]),
        (&json!("default"), &json!("enterprise"))
    );

    // A second start finds the workspace and prints no new key.
    let mut again = Server::start(dir.path());
    again.terminate();
    let mut rest = String::new();
    #[expect(clippy::disallowed_methods, reason = "bounded by take: the server's own output in a test")]
    let read = (&mut again.stdout).take(16 << 20).read_to_string(&mut rest);
    read.expect("stdout");
    assert!(!rest.contains("slc_"), "no second key: {rest}");
}

#[test]
fn admin_commands_print_what_decisions_show_and_reach_a_running_server() {
    let dir = Cleanup::new();
    // On a new database, `migrate` makes the schema (twice is fine).
    assert_eq!(admin(dir.path(), &["migrate"]), json!({"migrated": true}));
    assert_eq!(admin(dir.path(), &["migrate"]), json!({"migrated": true}));
    let created = admin(dir.path(), &["workspace", "create", "--name", "acme", "--plan", "pro"]);
    let workspace = created["workspaceId"].as_str().expect("workspaceId").to_owned();
    assert_eq!(created, json!({"workspaceId": workspace, "name": "acme", "plan": "pro"}));

    let key = admin(
        dir.path(),
        &["key", "create", "--workspace", &workspace, "--env", "test", "--name", "ci", "--scopes", "ingest,read"],
    );
    let api_key = key["apiKey"].as_str().expect("apiKey").to_owned();
    let key_id = key["keyId"].as_str().expect("keyId").to_owned();
    assert!(api_key.starts_with("slc_test_") && api_key.len() == 41, "{api_key}");
    assert_eq!((&key["workspaceId"], &key["expiresAt"]), (&json!(workspace), &Value::Null));

    let read_only =
        admin(dir.path(), &["key", "create", "--workspace", &workspace, "--scopes", "read", "--expires-in", "1"]);
    assert!(read_only["apiKey"].as_str().is_some_and(|k| k.starts_with("slc_live_")));
    assert!(read_only["expiresAt"].as_i64().is_some());

    let listed = admin(dir.path(), &["key", "list", "--workspace", &workspace]);
    let keys = listed["keys"].as_array().expect("keys");
    assert_eq!(keys.len(), 2);
    assert_eq!(keys[0]["keyId"], json!(key_id));
    assert_eq!(
        (&keys[0]["name"], &keys[0]["env"], &keys[0]["scopes"], &keys[0]["state"]),
        (&json!("ci"), &json!("test"), &json!(["ingest", "read"]), &json!("active"))
    );
    assert!(!listed.to_string().contains("slc_"), "key values are never listed");
    assert!(keys[0]["createdAt"].as_i64().is_some() && keys[0]["expiresAt"].is_null(), "{}", keys[0]);
    assert_eq!(keys[1]["expiresAt"], read_only["expiresAt"]);

    let planned = admin(dir.path(), &["workspace", "set-plan", &workspace, "enterprise"]);
    assert_eq!(planned["plan"], json!("enterprise"));
    let workspaces = admin(dir.path(), &["workspace", "list"]);
    assert_eq!(workspaces["workspaces"][0]["plan"], json!("enterprise"));

    // The server sees keys made by another process, and their revocation within 5 seconds.
    let server = Server::start(dir.path());
    assert_eq!(server.http("GET", "/v1/logs", Some(&api_key), "").0, 200);
    // Expiry is checked on every request: the 1-second key stops working once its second is
    // over, whatever the cache holds (waited for by asking, within 5 seconds).
    let deadline = Instant::now() + Duration::from_secs(5);
    loop {
        let (status, body) = server.http("GET", "/v1/logs", read_only["apiKey"].as_str(), "");
        if status == 401 {
            assert_eq!(body["error"], json!("API key has expired"));
            break;
        }
        assert_eq!(status, 200, "before it expires the key works: {body}");
        assert!(Instant::now() < deadline, "expiry not seen");
        std::thread::sleep(Duration::from_millis(50));
    }

    let revoked = admin(dir.path(), &["key", "revoke", &key_id]);
    assert_eq!(revoked["state"], json!("revoked"));
    let deadline = Instant::now() + Duration::from_secs(5);
    loop {
        let (status, body) = server.http("GET", "/v1/logs", Some(&api_key), "");
        if status == 401 {
            assert_eq!(body["error"], json!("API key has been revoked"));
            break;
        }
        assert!(Instant::now() < deadline, "revocation not seen within 5 seconds");
        std::thread::sleep(Duration::from_millis(100));
    }
    drop(server);
    let states: Vec<Value> = admin(dir.path(), &["key", "list", "--workspace", &workspace])["keys"]
        .as_array()
        .map(|keys| keys.iter().map(|key| key["state"].clone()).collect())
        .unwrap_or_default();
    assert_eq!(states, vec![json!("revoked"), json!("expired")]);

    let failed = Command::new(BIN)
        .args(["admin", "key", "revoke", "01900000-0000-7000-8000-000000000000"])
        .env("SLUICE_DATABASE_URL", database_url(dir.path()))
        .output()
        .expect("run admin");
    assert!(!failed.status.success());
    assert!(String::from_utf8_lossy(&failed.stderr).contains("not found"));
}

#[test]
fn sigterm_lets_the_request_in_flight_finish() {
    let dir = Cleanup::new();
    let mut server = Server::start(dir.path());
    let key = server.first_start_key();

    let body = entry("in flight");
    let (head, tail) = body.split_at(body.len() / 2);
    let mut stream = TcpStream::connect(("127.0.0.1", server.port)).expect("connect");
    // `Expect: 100-continue`: the server answers `100 Continue` once the request is in its
    // handler, so the signal below cannot come before the server has the request.
    write!(
        stream,
        "POST /v1/logs HTTP/1.1\r\nHost: localhost\r\nAuthorization: Bearer {key}\r\nContent-Type: application/json\r\nContent-Length: {}\r\nExpect: 100-continue\r\nConnection: close\r\n\r\n",
        body.len()
    )
    .expect("send head");
    stream.flush().expect("flush");
    let mut interim = [0_u8; 25];
    stream.read_exact(&mut interim).expect("100 Continue");
    assert_eq!(&interim, b"HTTP/1.1 100 Continue\r\n\r\n");
    stream.write_all(head.as_bytes()).expect("send half the body");
    server.terminate();
    // The server has the signal once it takes no new connection; the request in flight goes on.
    let deadline = Instant::now() + Duration::from_secs(10);
    while TcpStream::connect(("127.0.0.1", server.port)).is_ok() {
        assert!(Instant::now() < deadline, "the server still accepts connections after SIGTERM");
        std::thread::sleep(Duration::from_millis(20));
    }
    stream.write_all(tail.as_bytes()).expect("send tail");
    let (status, reply) = read_response(&mut stream);
    assert_eq!((status, &reply["count"]), (200, &json!(1)), "{reply}");
    assert!(server.wait().success(), "clean exit after SIGTERM");

    let server = Server::start(dir.path());
    let (_, listed) = server.http("GET", "/v1/logs", Some(&key), "");
    assert_eq!(listed["logs"][0]["message"], json!("in flight"));
}

#[test]
fn sigterm_ends_live_tails_and_the_server_exits_without_waiting_for_them() {
    let dir = Cleanup::new();
    let mut server = Server::start(dir.path());
    let key = server.first_start_key();
    let mut stream = TcpStream::connect(("127.0.0.1", server.port)).expect("connect");
    write!(stream, "GET /v1/logs/tail HTTP/1.1\r\nHost: localhost\r\nAuthorization: Bearer {key}\r\n\r\n")
        .expect("send");
    let mut reader = BufReader::new(stream);
    let mut status = String::new();
    reader.read_line(&mut status).expect("status line");
    assert!(status.starts_with("HTTP/1.1 200"), "{status}");
    // The tail is open (its head came); the graceful stop would wait 30 s for it if it stayed,
    // and its first heartbeat comes 15 s after it opened: a read waiting 10 s sees only the end.
    reader.get_ref().set_read_timeout(Some(Duration::from_secs(10))).expect("timeout");
    server.terminate();
    let mut rest = Vec::new();
    #[expect(clippy::disallowed_methods, reason = "bounded by take: a test's tail, never a request body")]
    let read = reader.take(16 << 20).read_to_end(&mut rest);
    read.expect("the stream ends well before the 30 s a graceful stop waits");
    assert!(server.wait().success(), "clean exit after SIGTERM");
}

#[test]
fn two_servers_sharing_redis_enforce_one_rate_limit() {
    let redis = std::env::var("SLUICE_TEST_REDIS")
        .ok()
        .filter(|url| !url.is_empty())
        .expect("SLUICE_TEST_REDIS names no server: run the tests with `cargo xtask with-pg cargo test ...`");
    let dir = Cleanup::new();
    let env = [("SLUICE_REDIS_URL", redis.as_str())];
    let first = Server::start_with(dir.path(), &env);
    let second = Server::start_with(dir.path(), &env);
    let created = admin(dir.path(), &["workspace", "create", "--name", "metered", "--plan", "free"]);
    let workspace = created["workspaceId"].as_str().expect("id").to_owned();
    let key =
        admin(dir.path(), &["key", "create", "--workspace", &workspace])["apiKey"].as_str().expect("key").to_owned();
    let body = format!("{{\"logs\": [{}]}}", entry("shared window"));
    for n in 0..60 {
        let server = if n % 2 == 0 { &first } else { &second };
        let (status, reply) = server.http("POST", "/v1/logs", Some(&key), &body);
        assert_eq!(status, 200, "request {n}: {reply}");
    }
    for server in [&first, &second] {
        let (status, reply) = server.http("POST", "/v1/logs", Some(&key), &body);
        assert_eq!(status, 429, "{reply}");
        assert_eq!(reply["error"], json!("Rate limit exceeded"));
    }
    // What the workspace used, and its figures, as the operator sees them.
    let shown = admin(dir.path(), &["workspace", "show", &workspace]);
    assert_eq!(shown["plan"], json!("free"));
    assert_eq!(shown["limits"], json!({"requestsPerMinute": 60, "logsPerMonth": 10_000, "retentionDays": 7}));
    assert_eq!(shown["usage"]["logs"], json!(60));
}

#[test]
fn set_plan_takes_custom_figures_and_retention_runs_on_demand() {
    let dir = Cleanup::new();
    let created = admin(dir.path(), &["workspace", "create", "--name", "big", "--plan", "pro"]);
    let workspace = created["workspaceId"].as_str().expect("id").to_owned();
    let set = admin(
        dir.path(),
        &[
            "workspace",
            "set-plan",
            &workspace,
            "enterprise",
            "--requests-per-minute",
            "5000",
            "--retention-days",
            "365",
        ],
    );
    assert_eq!(set["limits"], json!({"requestsPerMinute": 5000, "logsPerMonth": null, "retentionDays": 365}));
    let shown = admin(dir.path(), &["workspace", "show", &workspace]);
    assert_eq!(shown["plan"], json!("enterprise"));
    assert_eq!(shown["limits"], set["limits"]);
    assert_eq!(shown["usage"]["logs"], json!(0));
    // Back to a plan without options: the plan's figures again.
    let reset = admin(dir.path(), &["workspace", "set-plan", &workspace, "pro", "--logs-per-month", "unlimited"]);
    assert_eq!(reset["limits"], json!({"requestsPerMinute": 600, "logsPerMonth": null, "retentionDays": 30}));
    assert_eq!(admin(dir.path(), &["retention", "run"]), json!({"deleted": 0}));
    // Nonsense figures are refused by the parser, before anything is written.
    let refused = Command::new(BIN)
        .args(["admin", "workspace", "set-plan", &workspace, "pro", "--requests-per-minute", "-3"])
        .env("SLUICE_DATABASE_URL", database_url(dir.path()))
        .output()
        .expect("run admin");
    assert!(!refused.status.success());
    assert_eq!(admin(dir.path(), &["workspace", "show", &workspace])["limits"], reset["limits"]);
}

/// Posts one log stamped `timestamp` (Unix ms); returns the status.
fn post_at(server: &Server, key: &str, message: &str, timestamp: i64) -> u16 {
    let entry = json!({
        "level": "info", "message": message, "timestamp": timestamp, "source": "cli-test", "environment": "development"
    });
    let body = json!({ "logs": [entry] }).to_string();
    server.http("POST", "/v1/logs", Some(key), &body).0
}

fn now_ms() -> i64 {
    sluice_store::unix_now_ms()
}

/// The messages a key's workspace holds, newest first.
fn messages(server: &Server, key: &str) -> Vec<Value> {
    let (status, listed) = server.http("GET", "/v1/logs?limit=1000", Some(key), "");
    assert_eq!(status, 200, "{listed}");
    listed["logs"].as_array().map(|logs| logs.iter().map(|log| log["message"].clone()).collect()).unwrap_or_default()
}

/// Polls `check` every 100 ms until it holds or `within` has passed.
fn eventually(within: Duration, what: &str, mut check: impl FnMut() -> bool) {
    let deadline = Instant::now() + within;
    while !check() {
        assert!(Instant::now() < deadline, "{what}: not within {within:?}");
        std::thread::sleep(Duration::from_millis(100));
    }
}

#[test]
fn a_running_server_follows_plan_changes_and_sweeps_at_start_and_on_its_interval() {
    let dir = Cleanup::new();
    let created = admin(dir.path(), &["workspace", "create", "--name", "metered", "--plan", "free"]);
    let workspace = created["workspaceId"].as_str().expect("id").to_owned();
    let key =
        admin(dir.path(), &["key", "create", "--workspace", &workspace])["apiKey"].as_str().expect("key").to_owned();
    let day = 86_400_000;
    let server = Server::start(dir.path());
    for n in 0..3 {
        assert_eq!(post_at(&server, &key, &format!("fresh {n}"), now_ms()), 200);
    }
    // Older than the free plan's 7 days: stored, and visible until a sweep.
    assert_eq!(post_at(&server, &key, "ten days old", now_ms() - 10 * day), 200);
    assert_eq!(messages(&server, &key).len(), 4);

    // A plan change made by another process binds the running server within 5 seconds: with 2
    // requests a minute, the 3 already made leave no room.
    admin(dir.path(), &["workspace", "set-plan", &workspace, "free", "--requests-per-minute", "2"]);
    eventually(Duration::from_secs(5), "the new rate limit", || {
        let (status, reply) = server.http("POST", "/v1/logs", Some(&key), &entry("more"));
        status == 429 && reply["error"] == json!("Rate limit exceeded")
    });

    // The sweep at start removes what the plan's retention has passed.
    drop(server);
    let server = Server::start(dir.path());
    eventually(Duration::from_secs(10), "the start-up sweep", || {
        !messages(&server, &key).contains(&json!("ten days old"))
    });
    assert!(messages(&server, &key).contains(&json!("fresh 0")), "a fresh log was swept");
    drop(server);

    // And every SLUICE_RETENTION_INTERVAL after that, here with 2 days of retention.
    admin(dir.path(), &["workspace", "set-plan", &workspace, "free", "--retention-days", "2"]);
    let server = Server::start_with(dir.path(), &[("SLUICE_RETENTION_INTERVAL", "1s")]);
    assert_eq!(post_at(&server, &key, "three days old", now_ms() - 3 * day), 200);
    eventually(Duration::from_secs(10), "the periodic sweep", || {
        !messages(&server, &key).contains(&json!("three days old"))
    });
    assert!(messages(&server, &key).contains(&json!("fresh 0")));
}

#[test]
fn an_unreachable_redis_lets_requests_through() {
    let dir = Cleanup::new();
    // A port nobody listens on: every rate-limit check fails, and the server admits requests.
    let nowhere = format!("redis://127.0.0.1:{}", free_port());
    let created = admin(dir.path(), &["workspace", "create", "--name", "metered", "--plan", "free"]);
    let workspace = created["workspaceId"].as_str().expect("id").to_owned();
    admin(dir.path(), &["workspace", "set-plan", &workspace, "free", "--requests-per-minute", "1"]);
    let key =
        admin(dir.path(), &["key", "create", "--workspace", &workspace])["apiKey"].as_str().expect("key").to_owned();
    let server = Server::start_with(dir.path(), &[("SLUICE_REDIS_URL", nowhere.as_str())]);
    for n in 0..5 {
        assert_eq!(post_at(&server, &key, &format!("admitted {n}"), now_ms()), 200, "request {n}");
    }
    assert_eq!(messages(&server, &key).len(), 5);
}

/// Every message of the workspace, read page by page.
fn all_messages(server: &Server, key: &str) -> std::collections::HashSet<String> {
    let mut messages = std::collections::HashSet::new();
    for page in 0.. {
        let path = format!("/v1/logs?limit=1000&offset={}", page * 1000);
        let (status, listed) = server.http("GET", &path, Some(key), "");
        assert_eq!(status, 200, "{listed}");
        let logs = listed["logs"].as_array().cloned().unwrap_or_default();
        messages.extend(logs.iter().filter_map(|log| log["message"].as_str().map(str::to_owned)));
        if listed["pagination"]["hasMore"] != json!(true) {
            break;
        }
    }
    messages
}

#[test]
fn a_server_killed_under_load_keeps_every_acknowledged_log() {
    const SENDERS: usize = 4;
    const PER_BATCH: usize = 20;
    let dir = Cleanup::new();
    let mut server = Server::start(dir.path());
    let key = server.first_start_key();
    let port = server.port;
    let stop = std::sync::Arc::new(std::sync::atomic::AtomicBool::new(false));
    let answered = std::sync::Arc::new(std::sync::atomic::AtomicUsize::new(0));
    // Each sender posts numbered batches one after another until the server is gone, and
    // keeps the numbers of those answered 200.
    let senders: Vec<_> = (0..SENDERS)
        .map(|sender| {
            let key = key.clone();
            let stop = stop.clone();
            let answered = answered.clone();
            std::thread::spawn(move || {
                let client = Server::client(port);
                let mut acknowledged = Vec::new();
                for batch in 0.. {
                    if stop.load(std::sync::atomic::Ordering::SeqCst) {
                        break;
                    }
                    let entries: Vec<String> =
                        (0..PER_BATCH).map(|index| entry(&format!("kill {sender}-{batch}-{index}"))).collect();
                    let body = format!("{{\"logs\": [{}]}}", entries.join(","));
                    match client.http("POST", "/v1/logs", Some(&key), &body).0 {
                        200 => {
                            acknowledged.push(batch);
                            answered.fetch_add(1, std::sync::atomic::Ordering::SeqCst);
                        }
                        0 => break,
                        other => panic!("sender {sender}: status {other}"),
                    }
                }
                acknowledged
            })
        })
        .collect();
    // Let acknowledged batches pile up (40 answered, counted as they come), then kill the
    // server mid-stream: no shutdown, no flush.
    let deadline = Instant::now() + Duration::from_secs(60);
    while answered.load(std::sync::atomic::Ordering::SeqCst) < 40 {
        assert!(Instant::now() < deadline, "the senders got too few answers");
        std::thread::sleep(Duration::from_millis(10));
    }
    server.kill();
    stop.store(true, std::sync::atomic::Ordering::SeqCst);
    let acknowledged: Vec<Vec<usize>> =
        senders.into_iter().map(|sender| sender.join().expect("sender thread")).collect();
    assert!(
        acknowledged.iter().map(Vec::len).sum::<usize>() >= 10,
        "too few batches before the kill: {acknowledged:?}"
    );

    let server = Server::start(dir.path());
    let stored = all_messages(&server, &key);
    for (sender, batches) in acknowledged.iter().enumerate() {
        for batch in batches {
            for index in 0..PER_BATCH {
                let message = format!("kill {sender}-{batch}-{index}");
                assert!(stored.contains(&message), "acknowledged but lost: {message}");
            }
        }
    }
    // Batches are whole or absent, acknowledged or not (the last one may have committed
    // without its answer arriving).
    for message in &stored {
        let Some(rest) = message.strip_prefix("kill ") else { continue };
        let batch = rest.rsplit_once('-').map_or(rest, |(batch, _)| batch);
        for index in 0..PER_BATCH {
            assert!(stored.contains(&format!("kill {batch}-{index}")), "batch {batch} is stored in part");
        }
    }
}

#[test]
fn first_start_prints_the_admins_sign_in_and_admin_commands_manage_people() {
    let dir = Cleanup::new();
    let mut server = Server::start(dir.path());
    server.first_start_key();
    let password = server.first_start_password();
    let (status, admin_token) = sign_in(&server, "admin@localhost", &password);
    assert_eq!(status, 200);
    let (status, me) = server.http("GET", "/v1/me", Some(&admin_token), "");
    assert_eq!(status, 200, "{me}");
    assert_eq!(
        (&me["user"]["admin"], &me["workspaces"][0]["name"], &me["workspaces"][0]["role"]),
        (&json!(true), &json!("default"), &json!("owner"))
    );
    let workspace = me["workspaces"][0]["workspaceId"].as_str().unwrap_or_default().to_owned();

    // A user with a password from stdin, and one with a generated password shown once.
    let (ok, stdout, stderr) = admin_with_input(
        dir.path(),
        &["user", "create", "--email", "Bob@Example.com", "--name", "Bob", "--password-stdin", "--json"],
        "a long enough password\n",
    );
    assert!(ok, "{stderr}");
    let bob: Value = serde_json::from_str(&stdout).expect("one JSON object");
    assert_eq!((&bob["email"], &bob["name"], &bob["admin"]), (&json!("Bob@Example.com"), &json!("Bob"), &json!(false)));
    assert!(bob.get("password").is_none());
    let carol = admin(dir.path(), &["user", "create", "--email", "carol@example.com"]);
    let carol_password = carol["password"].as_str().unwrap_or_default().to_owned();
    assert!(carol_password.len() >= 16, "{carol}");
    let (ok, _, stderr) = admin_with_input(dir.path(), &["user", "create", "--email", "BOB@example.com"], "");
    assert!(!ok && stderr.contains("already exists"), "{stderr}");
    let (ok, _, stderr) =
        admin_with_input(dir.path(), &["user", "create", "--email", "dan@example.com", "--password-stdin"], "short\n");
    assert!(!ok && stderr.contains("at least 8"), "{stderr}");

    // Members by email or id; the new member signs in and reads.
    let added = admin(
        dir.path(),
        &["member", "add", "--workspace", &workspace, "--user", "bob@example.com", "--role", "viewer"],
    );
    assert_eq!(added, json!({"workspaceId": workspace, "userId": bob["userId"], "role": "viewer"}));
    let (status, bob_token) = sign_in(&server, "bob@example.com", "a long enough password");
    assert_eq!(status, 200);
    assert_eq!(server.http("GET", "/v1/logs", Some(&bob_token), "").0, 200);
    let carol_id = carol["userId"].as_str().unwrap_or_default().to_owned();
    admin(dir.path(), &["member", "add", "--workspace", &workspace, "--user", &carol_id, "--role", "owner"]);
    assert_eq!(sign_in(&server, "carol@example.com", &carol_password).0, 200);
    let removed = admin(dir.path(), &["member", "remove", "--workspace", &workspace, "--user", "bob@example.com"]);
    assert_eq!(removed["removed"], json!(true));
    // The running server sees it within 5 s.
    let deadline = Instant::now() + Duration::from_secs(6);
    loop {
        let (status, body) = server.http("GET", "/v1/logs", Some(&bob_token), "");
        if status == 403 {
            assert_eq!(body["error"], "User has no workspace");
            break;
        }
        assert!(Instant::now() < deadline, "still a member after 6 s: {status} {body}");
        std::thread::sleep(Duration::from_millis(100));
    }
    let (ok, _, stderr) = admin_with_input(
        dir.path(),
        &["member", "remove", "--workspace", &workspace, "--user", "nobody@example.com"],
        "",
    );
    assert!(!ok && stderr.contains("sluice admin user create"), "{stderr}");
}

#[test]
fn the_server_log_is_plain_text_when_it_is_not_a_terminal() {
    let dir = Cleanup::new();
    let port = free_port();
    let mut child = Command::new(BIN)
        .args(["serve", "--listen", &format!("127.0.0.1:{port}")])
        .env("SLUICE_DATABASE_URL", database_url(dir.path()))
        .env("SLUICE_LOG", "info")
        .env_remove("NO_COLOR")
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .expect("spawn sluice serve");
    let mut stderr = BufReader::new(child.stderr.take().expect("stderr"));
    // The server says it listens once it does: read up to that line, then stop it.
    let mut log = String::new();
    while !log.contains("sluice is listening") {
        let mut line = String::new();
        let read = stderr.read_line(&mut line).expect("stderr");
        assert!(read > 0, "the server ended before it listened: {log}");
        log.push_str(&line);
    }
    let _ = child.kill();
    let _ = child.wait();
    assert!(!log.contains('\u{1b}'), "no colour codes in a log that is not a terminal: {log:?}");
    assert!(log.contains(" INFO "), "levels in plain words: {log:?}");
}
