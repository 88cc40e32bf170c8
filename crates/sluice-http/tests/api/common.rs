//! A real sluice HTTP server on a loopback port over a real database, and a client for it.
//!
//! The database is a SQLite file of the test's own, or, with `SLUICE_TEST_BACKEND=postgres`
//! (as `cargo xtask ci` runs this suite a second time), a PostgreSQL database of the test's
//! own on the `SLUICE_TEST_PG` server, cloned from the migrated template and dropped after.

#![allow(dead_code, missing_docs)]

use std::net::TcpListener;
use std::sync::Arc;
use std::sync::atomic::{AtomicI64, Ordering};

use actix_web::HttpServer;
use actix_web::dev::ServerHandle;
use awc::http::StatusCode;
use serde_json::{Value, json};
use sluice_http::AppState;
use sluice_model::{ApiKeyRecord, KeyEnv, KeyId, Plan, Scopes, Workspace, WorkspaceId};
use sluice_store::{NewApiKey, Store};
use sluice_store_sqlite::{SqliteOptions, SqliteStore};

pub const NOW: i64 = 1_700_000_000_000;

/// The clock value meaning "follow the wall clock".
const WALL_CLOCK: i64 = i64::MIN;

/// Whether this run's servers use SQLite (the default) rather than PostgreSQL.
pub fn on_sqlite() -> bool {
    std::env::var("SLUICE_TEST_BACKEND").map_or(true, |backend| backend != "postgres")
}

pub struct TestServer {
    pub base: String,
    /// The SQLite file behind the server (on SQLite runs).
    pub path: std::path::PathBuf,
    /// The PostgreSQL database behind the server (on PostgreSQL runs), dropped with it.
    pub database: Option<sluice_store_pg::testing::TestDatabase>,
    pub store: Arc<dyn Store>,
    pub workspace: Workspace,
    pub key: String,
    /// The server's clock, in Unix ms, once set; until then the wall clock.
    pub now: Arc<AtomicI64>,
    handle: ServerHandle,
    /// The folder of the SQLite file (kept until the server is dropped).
    pub folder: tempfile::TempDir,
    /// The server's live tails.
    pub tails: sluice_http::tail::TailHub,
}

pub struct Reply {
    pub status: StatusCode,
    pub body: Value,
    pub headers: awc::http::header::HeaderMap,
}

impl Reply {
    pub fn error(&self) -> &str {
        self.body["error"].as_str().unwrap_or("<no error field>")
    }

    /// Issues as `path message` lines, for compact assertions.
    pub fn issues(&self) -> Vec<String> {
        self.body["issues"]
            .as_array()
            .map(|issues| {
                issues
                    .iter()
                    .map(|issue| format!("{} {}", issue["path"], issue["message"].as_str().unwrap_or("")))
                    .collect()
            })
            .unwrap_or_default()
    }

    pub fn messages(&self) -> Vec<String> {
        self.body["logs"]
            .as_array()
            .map(|logs| logs.iter().map(|log| log["message"].as_str().unwrap_or("").to_owned()).collect())
            .unwrap_or_default()
    }
}

/// An answer as it came over the wire, and how long it took.
pub struct RawReply {
    pub status: StatusCode,
    pub headers: awc::http::header::HeaderMap,
    pub bytes: actix_web::web::Bytes,
    pub elapsed: std::time::Duration,
}

pub async fn start() -> TestServer {
    start_with(&SqliteOptions::default()).await
}

pub async fn start_with(options: &SqliteOptions) -> TestServer {
    start_configured(options, |_| {}).await
}

/// A server whose state `configure` adjusts before it starts (client resolution, limiter).
pub async fn start_configured(options: &SqliteOptions, configure: impl FnOnce(&mut AppState)) -> TestServer {
    let dir = tempfile::tempdir().expect("temp dir");
    let path = dir.path().join("sluice.db");
    let (store, database): (Arc<dyn Store>, _) = if on_sqlite() {
        (Arc::new(SqliteStore::open_with(&path, options).expect("open store")), None)
    } else {
        let database = sluice_store_pg::testing::TestDatabase::new("sluice_http").await;
        let options = sluice_store_pg::PgOptions { pool_size: 4, ..Default::default() };
        let store = sluice_store_pg::PgStore::connect(database.url(), &options).await.expect("connect");
        (Arc::new(store), Some(database))
    };
    let mut server = start_over_configured(store, configure).await;
    server.path = path;
    server.database = database;
    server.folder = dir;
    server
}

/// A server over a store the test made itself.
pub async fn start_over(store: Arc<dyn Store>) -> TestServer {
    start_over_configured(store, |_| {}).await
}

/// [`start_over`], with the state adjusted by `configure` before the server starts.
pub async fn start_over_configured(store: Arc<dyn Store>, configure: impl FnOnce(&mut AppState)) -> TestServer {
    let dir = tempfile::tempdir().expect("temp dir");
    let workspace = new_workspace(&store, "main").await;
    let key = new_key(&store, workspace.id, Scopes::ALL, None).await.0;

    let listener = TcpListener::bind("127.0.0.1:0").expect("bind loopback");
    let base = format!("http://{}", listener.local_addr().expect("address"));
    let now = Arc::new(AtomicI64::new(WALL_CLOCK));
    let mut state = AppState::new(store.clone());
    let clock = now.clone();
    state.clock = sluice_http::Clock::new(move || match clock.load(Ordering::SeqCst) {
        WALL_CLOCK => sluice_http::unix_now_ms(),
        set => set,
    });
    // Tails write a heartbeat every 50 ms here: a test reads up to one to know the stream has
    // sent all it holds (the replay, the logs published so far).
    state.heartbeat = std::time::Duration::from_millis(50);
    configure(&mut state);
    let tails = state.tails.clone();
    let server = HttpServer::new(move || sluice_http::app(state.clone()))
        .workers(1)
        .disable_signals()
        .listen(listener)
        .expect("listen")
        .run();
    let handle = server.handle();
    actix_web::rt::spawn(server);
    TestServer {
        base,
        path: std::path::PathBuf::new(),
        database: None,
        store,
        workspace,
        key,
        now,
        handle,
        folder: dir,
        tails,
    }
}

pub async fn new_workspace(store: &Arc<dyn Store>, name: &str) -> Workspace {
    // Enterprise: no rate limit or quota in the way of tests about something else.
    let workspace = Workspace::new(name, Plan::Enterprise, NOW);
    store.create_workspace(&workspace).await.expect("workspace");
    workspace
}

/// A key in `workspace`; returns its text and id.
pub async fn new_key(
    store: &Arc<dyn Store>,
    workspace: WorkspaceId,
    scopes: Scopes,
    expires_at: Option<i64>,
) -> (String, KeyId) {
    let generated = sluice_auth::generate_key(KeyEnv::Test).expect("csprng");
    let record = ApiKeyRecord {
        id: KeyId::generate(),
        workspace_id: workspace,
        name: None,
        env: KeyEnv::Test,
        scopes,
        created_at: NOW,
        expires_at,
        revoked_at: None,
    };
    let id = record.id;
    store.create_key(&NewApiKey { record, hash: generated.hash }).await.expect("key");
    (generated.text, id)
}

pub fn entry(message: &str) -> Value {
    json!({"level": "info", "message": message, "source": "api", "environment": "production"})
}

impl TestServer {
    /// Sets the server's clock.
    pub fn set_now(&self, ms: i64) {
        self.now.store(ms, Ordering::SeqCst);
    }

    pub async fn stop(self) {
        // As `sluice serve` does at a signal: tails end, so the graceful stop need not wait.
        self.tails.close();
        self.handle.stop(true).await;
    }
}

impl TestServer {
    pub async fn request(&self, method: &str, path: &str, headers: &[(&str, &str)], body: Vec<u8>) -> Reply {
        let raw = self.request_raw(method, path, headers, body).await;
        let body = if raw.bytes.is_empty() {
            Value::Null
        } else {
            serde_json::from_slice(&raw.bytes).expect("every response is JSON")
        };
        Reply { status: raw.status, body, headers: raw.headers }
    }

    /// A request on a connection of its own, its answer as the bytes that came (up to 64 MiB),
    /// and the time from sending it to the answer's last byte.
    pub async fn request_raw(&self, method: &str, path: &str, headers: &[(&str, &str)], body: Vec<u8>) -> RawReply {
        let client = awc::Client::builder().timeout(std::time::Duration::from_secs(30)).disable_redirects().finish();
        let method = awc::http::Method::from_bytes(method.as_bytes()).expect("method");
        let mut request = client.request(method, format!("{}{path}", self.base));
        for (name, value) in headers {
            request = request.insert_header((*name, *value));
        }
        let started = std::time::Instant::now();
        let mut response = request.send_body(body).await.expect("request");
        let bytes = response.body().limit(64 * 1024 * 1024).await.expect("response body");
        RawReply { status: response.status(), headers: response.headers().clone(), bytes, elapsed: started.elapsed() }
    }

    /// GET with the main key.
    pub async fn get(&self, path: &str) -> Reply {
        let auth = format!("Bearer {}", self.key);
        self.request("GET", path, &[("Authorization", &auth)], Vec::new()).await
    }

    /// POST a JSON value with the main key.
    pub async fn post_json(&self, path: &str, body: &Value) -> Reply {
        self.post(path, "application/json", body.to_string().into_bytes()).await
    }

    /// POST raw bytes with the main key and a content type.
    pub async fn post(&self, path: &str, content_type: &str, body: Vec<u8>) -> Reply {
        let auth = format!("Bearer {}", self.key);
        self.request("POST", path, &[("Authorization", &auth), ("Content-Type", content_type)], body).await
    }

    /// Ingests `entries` and checks the answer.
    pub async fn ingest(&self, entries: Vec<Value>) {
        let count = entries.len();
        let reply = self.post_json("/v1/logs", &json!({"logs": entries})).await;
        assert_eq!(reply.status, StatusCode::OK, "{}", reply.body);
        assert_eq!(reply.body["count"], json!(count));
    }
}

/// One event of a live tail: `event` (`log`, `dropped`, or `comment` for a heartbeat), `id`
/// and `data` as sent.
#[derive(Debug, Clone, PartialEq)]
pub struct Event {
    pub event: String,
    pub id: Option<String>,
    pub data: Value,
}

/// An open live tail, read event by event.
pub struct Tail {
    response: awc::ClientResponse,
    buffer: Vec<u8>,
}

impl Tail {
    /// The next event, or `None` when the stream ended.
    pub async fn next(&mut self) -> Option<Event> {
        loop {
            if let Some(end) = self.buffer.windows(2).position(|pair| pair == b"\n\n") {
                let block: Vec<u8> = self.buffer.drain(..end + 2).collect();
                let text = String::from_utf8(block).expect("events are UTF-8");
                let mut event = Event { event: "log".into(), id: None, data: Value::Null };
                for line in text.lines() {
                    if line.starts_with(':') {
                        event.event = "comment".into();
                    } else if let Some(value) = line.strip_prefix("event: ") {
                        event.event = value.to_owned();
                    } else if let Some(value) = line.strip_prefix("id: ") {
                        event.id = Some(value.to_owned());
                    } else if let Some(value) = line.strip_prefix("data: ") {
                        event.data = serde_json::from_str(value).expect("data is JSON");
                    }
                }
                return Some(event);
            }
            let chunk = std::future::poll_fn(|context| {
                futures_core::Stream::poll_next(std::pin::Pin::new(&mut self.response), context)
            })
            .await?;
            self.buffer.extend_from_slice(&chunk.expect("the stream reads"));
        }
    }

    /// The logs' messages up to the next heartbeat, and every `dropped` count met.
    pub async fn until_heartbeat(&mut self) -> (Vec<String>, Vec<u64>) {
        let (mut messages, mut dropped) = (Vec::new(), Vec::new());
        while let Some(event) = self.next().await {
            match event.event.as_str() {
                "comment" => break,
                "dropped" => dropped.push(event.data["count"].as_u64().unwrap_or(0)),
                _ => messages.push(event.data["message"].as_str().unwrap_or("").to_owned()),
            }
        }
        (messages, dropped)
    }
}

impl TestServer {
    /// Opens `GET path` as a live tail with the main key; the status and, when 200, the stream
    /// (else the error's JSON).
    pub async fn tail(&self, path: &str) -> (StatusCode, Result<Tail, Value>) {
        self.tail_with(path, &[("X-API-Key", self.key.as_str())]).await
    }

    /// [`TestServer::tail`] with `headers` only (the credential among them).
    pub async fn tail_with(&self, path: &str, headers: &[(&str, &str)]) -> (StatusCode, Result<Tail, Value>) {
        let client = awc::Client::builder().disable_timeout().finish();
        let mut request = client.get(format!("{}{path}", self.base));
        for (name, value) in headers {
            request = request.insert_header((*name, *value));
        }
        let mut response = request.send().await.expect("request");
        let status = response.status();
        if status != StatusCode::OK {
            let body = response.body().await.expect("body");
            return (status, Err(serde_json::from_slice(&body).expect("JSON error")));
        }
        (status, Ok(Tail { response, buffer: Vec::new() }))
    }
}

/// This process's resident memory, in bytes (`VmRSS` of /proc/self/status).
pub fn resident_bytes() -> u64 {
    let status = std::fs::read_to_string("/proc/self/status").unwrap_or_default();
    status
        .lines()
        .find_map(|line| line.strip_prefix("VmRSS:"))
        .and_then(|value| value.trim().trim_end_matches("kB").trim().parse::<u64>().ok())
        .map_or(0, |kib| kib * 1024)
}

/// The password every test user has.
pub const PASSWORD: &str = "correct horse battery";

/// A user with [`PASSWORD`], a member of each workspace given with its role.
pub async fn new_user(
    store: &Arc<dyn Store>,
    email: &str,
    admin: bool,
    roles: &[(WorkspaceId, sluice_model::Role)],
) -> sluice_model::User {
    let user = sluice_model::User {
        id: sluice_model::UserId::generate(),
        email: email.into(),
        name: email.into(),
        admin,
        created_at: NOW,
    };
    let password_hash = sluice_auth::passwords::hash_password(PASSWORD).expect("hash");
    store.create_user(&sluice_store::accounts::NewUser { user: user.clone(), password_hash }).await.expect("user");
    for (workspace, role) in roles {
        let change = sluice_store::accounts::MemberChange::Set(*role);
        store.change_member(*workspace, user.id, change, false, NOW).await.expect("member");
    }
    user
}

impl TestServer {
    /// Signs in with email and [`PASSWORD`]; returns the session token the cookie carries.
    pub async fn sign_in(&self, email: &str) -> String {
        let body = json!({"email": email, "password": PASSWORD}).to_string().into_bytes();
        let reply = self.request("POST", "/v1/auth/login", &[("Content-Type", "application/json")], body).await;
        assert_eq!(reply.status, StatusCode::OK, "{}", reply.body);
        session_cookie(&reply.headers).expect("a session cookie")
    }

    /// A request with a session token as `Authorization: Bearer`.
    pub async fn as_user(&self, token: &str, method: &str, path: &str, body: Option<Value>) -> Reply {
        let auth = format!("Bearer {token}");
        let mut headers = vec![("Authorization", auth.as_str())];
        if body.is_some() {
            headers.push(("Content-Type", "application/json"));
        }
        let body = body.map(|body| body.to_string().into_bytes()).unwrap_or_default();
        self.request(method, path, &headers, body).await
    }
}

/// The value of the `sluice_session` cookie a response sets, if any.
pub fn session_cookie(headers: &awc::http::header::HeaderMap) -> Option<String> {
    headers.get_all("set-cookie").filter_map(|value| value.to_str().ok()).find_map(|cookie| {
        let value = cookie.strip_prefix("sluice_session=")?;
        Some(value.split(';').next().unwrap_or_default().to_owned())
    })
}
