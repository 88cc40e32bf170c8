//! The read path over real HTTP on loopback, at 1M logs in one workspace of a SQLite store:
//! the newest page of `GET /v1/logs` unfiltered and with each single filter, and
//! `GET /v1/logs/{id}`. Targets (issue 2): page ≤ 5 ms p50, get ≤ 1 ms p50.
//!
//! The database is built once (about a minute) and kept in `target/bench-data/`; delete it to
//! rebuild. Each request includes authentication (cached), the query and JSON of 100 logs.

use std::net::TcpListener;
use std::path::PathBuf;
use std::sync::Arc;
use std::time::{Duration, Instant};

use actix_web::HttpServer;
use criterion::{Criterion, criterion_group, criterion_main};
use serde_json::json;
use sluice_http::AppState;
use sluice_model::{
    ApiKeyRecord, Environment, JsonObject, KeyEnv, KeyId, Level, Log, LogEntry, LogId, Plan, Scopes, Workspace,
};
use sluice_store::prelude::*;
use sluice_store::{LogFilter, NewApiKey, Page};
use sluice_store_sqlite::SqliteStore;

const LOGS: u64 = 1_000_000;
const BATCH: u64 = 2_000;
const DAY_MS: i64 = 86_400_000;
const START: i64 = 1_767_225_600_000; // 2026-01-01T00:00:00Z

/// A small deterministic generator, so every run builds the same data.
struct Lcg(u64);

impl Lcg {
    fn next(&mut self) -> u64 {
        self.0 = self.0.wrapping_mul(6_364_136_223_846_793_005).wrapping_add(1_442_695_040_888_963_407);
        self.0 >> 33
    }
}

fn synthetic_log(random: &mut Lcg, index: u64) -> Log {
    let roll = random.next() % 100;
    let level = match roll {
        0..=4 => Level::Error,
        5..=14 => Level::Warn,
        15..=29 => Level::Debug,
        _ => Level::Info,
    };
    let environment = Environment::ALL[(random.next() % 3) as usize];
    Log {
        id: LogId::generate(),
        entry: LogEntry {
            timestamp: START + (index as i64 * 30 * DAY_MS) / LOGS as i64,
            level,
            message: format!(
                "request {index} handled in {} ms for tenant {}",
                random.next() % 900,
                random.next() % 5000
            ),
            source: format!("svc-{}", random.next() % 20).into(),
            environment,
            dataset: format!("ds-{}", random.next() % 5).into(),
            version: Some("2.4.1".into()),
            user_id: Some(format!("u-{}", random.next() % 10_000)),
            session_id: Some(format!("s-{}", random.next() % 50_000)),
            request_id: Some(format!("r-{index}")),
            data: json!({"path": "/api/orders", "status": 200 + (random.next() % 4) * 100})
                .as_object()
                .map(JsonObject::from_map),
            error_name: None,
            error_stack: None,
            tags: Some(vec!["web".into()]),
            flow_id: random.next().is_multiple_of(10).then(|| format!("f-{}", random.next() % 20_000)),
            step_index: None,
        },
        country: None,
        ip_address: Some("10.0.0.1".into()),
    }
}

fn data_path() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../target/bench-data/read_path-1m.db")
}

/// Opens the bench database, building it when missing; returns the store, key and some ids.
async fn prepare() -> (Arc<dyn Store>, String, Vec<LogId>) {
    let path = data_path();
    // A marker written after the last insert: an interrupted build is thrown away and redone.
    let done = path.with_extension("done");
    if !done.exists() {
        for suffix in ["", "-wal", "-shm"] {
            let _ = std::fs::remove_file(format!("{}{suffix}", path.display()));
        }
        let store = SqliteStore::open(&path).expect("open bench database");
        let workspace = Workspace::new("bench", Plan::Enterprise, START);
        store.create_workspace(&workspace).await.expect("workspace");
        let mut random = Lcg(42);
        let started = Instant::now();
        for batch in 0..LOGS / BATCH {
            let logs: Vec<Log> = (0..BATCH).map(|i| synthetic_log(&mut random, batch * BATCH + i)).collect();
            store.insert_logs(workspace.id, &logs).await.expect("insert");
        }
        eprintln!("built {LOGS} logs in {:.1?}", started.elapsed());
        std::fs::write(&done, b"").expect("mark the bench database complete");
    }
    let store: Arc<dyn Store> = Arc::new(SqliteStore::open(&path).expect("open bench database"));
    let workspace = store.list_workspaces().await.expect("workspaces").remove(0);
    // A fresh key per run: only hashes are stored, so the text cannot be recovered.
    let generated = sluice_auth::generate_key(KeyEnv::Live).expect("csprng");
    let record = ApiKeyRecord {
        id: KeyId::generate(),
        workspace_id: workspace.id,
        name: Some("bench".into()),
        env: KeyEnv::Live,
        scopes: Scopes::ALL,
        created_at: START,
        expires_at: None,
        revoked_at: None,
    };
    store.create_key(&NewApiKey { record, hash: generated.hash }).await.expect("key");
    let sample = store
        .list_logs(workspace.id, &LogFilter::default(), Page { limit: 1000, offset: 400_000 })
        .await
        .expect("sample ids");
    (store, generated.text, sample.logs.into_iter().map(|log| log.id).collect())
}

fn read_path(c: &mut Criterion) {
    let system = actix_web::rt::System::new();
    let (store, key, ids) = system.block_on(prepare());
    let listener = TcpListener::bind("127.0.0.1:0").expect("bind");
    let base = format!("http://{}", listener.local_addr().expect("addr"));
    let state = AppState::new(store);
    let server = HttpServer::new(move || sluice_http::app(state.clone()))
        .workers(1)
        .disable_signals()
        .listen(listener)
        .expect("listen")
        .run();
    let handle = server.handle();
    system.block_on(async {
        // The server runs on its own threads; the join handle is not needed.
        drop(actix_web::rt::spawn(server));
    });
    let client = awc::Client::builder().timeout(Duration::from_secs(30)).finish();
    let auth = format!("Bearer {key}");

    let get = |path: String| {
        let request = client.get(format!("{base}{path}")).insert_header(("Authorization", auth.clone()));
        async move {
            let mut response = request.send().await.expect("request");
            assert!(response.status().is_success(), "{path}: {}", response.status());
            response.body().limit(64 * 1024 * 1024).await.expect("body").len()
        }
    };

    let mut group = c.benchmark_group("list_newest_page_1m");
    group.sample_size(50);
    let window = format!("from={}&to={}", START + 10 * DAY_MS, START + 11 * DAY_MS);
    for (name, query) in [
        ("unfiltered", String::new()),
        ("level", "level=error".to_owned()),
        ("source", "source=svc-7".to_owned()),
        ("environment", "environment=staging".to_owned()),
        ("dataset", "dataset=ds-3".to_owned()),
        ("userId", "userId=u-1234".to_owned()),
        ("sessionId", "sessionId=s-4321".to_owned()),
        ("flowId", "flowId=f-777".to_owned()),
        ("time_window", window.clone()),
    ] {
        group.bench_function(name, |b| {
            b.iter_custom(|iterations| {
                system.block_on(async {
                    let started = Instant::now();
                    for _ in 0..iterations {
                        get(format!("/v1/logs?{query}")).await;
                    }
                    started.elapsed()
                })
            })
        });
    }
    group.finish();

    c.bench_function("get_by_id_1m", |b| {
        b.iter_custom(|iterations| {
            system.block_on(async {
                let started = Instant::now();
                for i in 0..iterations {
                    get(format!("/v1/logs/{}", ids[i as usize % ids.len()])).await;
                }
                started.elapsed()
            })
        })
    });
    system.block_on(handle.stop(true));
}

criterion_group!(benches, read_path);
criterion_main!(benches);
