//! Read latency of the SQLite store at scale (issue 4), and what the search index costs ingest.
//!
//! `cargo bench -p sluice-store-sqlite --bench queries` (or `cargo xtask bench`). The first run
//! builds `target/bench-data/queries-<total>.db` through the store itself (5M logs, 1M of them
//! in the measured workspace; `--quick`: 500k and 100k) from loghub lines, and later runs reuse
//! it. Measured: search for a term in 0.01% of the workspace's logs, a phrase as rare, a
//! common phrase, stats for 30 days by day and by source, the summary, and the newest page of
//! the list under each single filter; then one 100-log batch insert with and without the
//! trigram index. Medians are the p50 figures in docs/PERFORMANCE.md.

use std::path::PathBuf;
use std::sync::Arc;
use std::time::{Duration, Instant};

use criterion::{Criterion, criterion_group};
use serde_json::json;
use sluice_model::{Environment, JsonObject, Level, Log, LogEntry, LogId, Plan, Workspace, WorkspaceId};
use sluice_query::stats::{CountBy, MS_PER_DAY, RollupFilter, StatsRequest, summary_range_ms};
use sluice_query::{Query, SearchField};
use sluice_store::{LogFilter, LogStore, Page, Search, TenantStore};
use sluice_store_sqlite::SqliteStore;

/// 2026-03-31 12:00 UTC: "now" for every query; the measured workspace's logs cover the 30
/// days before it.
const NOW: i64 = 1_774_958_400_000;
const SPAN_MS: i64 = 30 * MS_PER_DAY;
/// One log in this many carries the rare term (0.01%), another the rare phrase.
const RARE_EVERY: usize = 10_000;
const RARE_TERM: &str = "zebraquokka";
const RARE_PHRASE: &str = "quota ledger drift";
const SOURCES: [&str; 8] = ["api", "web", "worker", "billing", "auth", "search", "mailer", "gateway"];
const WORKSPACES: usize = 5;

fn quick() -> bool {
    std::env::args().any(|arg| arg == "--quick")
}

fn sizes() -> (usize, usize) {
    if quick() { (500_000, 100_000) } else { (5_000_000, 1_000_000) }
}

/// Every line of the loghub samples: real messages of 16 systems.
fn corpus_lines() -> Vec<String> {
    let dir = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../../shared/corpus/loghub");
    let mut lines = Vec::new();
    let mut entries: Vec<_> =
        std::fs::read_dir(&dir).expect("loghub corpus").flatten().map(|entry| entry.path()).collect();
    entries.sort();
    for path in entries.into_iter().filter(|path| path.to_string_lossy().ends_with("_2k.log")) {
        let text = std::fs::read(&path).expect("corpus file");
        lines.extend(String::from_utf8_lossy(&text).lines().filter(|line| !line.trim().is_empty()).map(str::to_owned));
    }
    lines
}

/// A small deterministic generator, so every build of the data set is the same.
struct Random(u64);

impl Random {
    fn next(&mut self) -> u64 {
        self.0 ^= self.0 << 13;
        self.0 ^= self.0 >> 7;
        self.0 ^= self.0 << 17;
        self.0
    }

    fn below(&mut self, bound: u64) -> u64 {
        self.next() % bound
    }
}

/// The `index`-th of `count` logs of a workspace, spread evenly over the 30 days before NOW.
fn make_log(lines: &[String], random: &mut Random, index: usize, count: usize) -> Log {
    let mut message = lines[random.below(lines.len() as u64) as usize].clone();
    if index.is_multiple_of(RARE_EVERY) {
        message.push_str(&format!(" {RARE_TERM} seen"));
    } else if index % RARE_EVERY == RARE_EVERY / 2 {
        message.push_str(&format!(" {RARE_PHRASE} detected"));
    }
    let level = match random.below(100) {
        0..=4 => Level::Error,
        5..=14 => Level::Warn,
        15..=29 => Level::Debug,
        _ => Level::Info,
    };
    let user = random.below(5_000);
    let data = json!({"host": format!("node-{}", random.below(64)), "attempt": random.below(4), "region": "eu-west-1"});
    Log {
        id: LogId::generate(),
        entry: LogEntry {
            timestamp: NOW - SPAN_MS + (index as i64 * SPAN_MS) / count as i64,
            level,
            message,
            source: SOURCES[random.below(SOURCES.len() as u64) as usize].into(),
            environment: Environment::ALL[random.below(3) as usize],
            dataset: if random.below(4) == 0 { "audit".into() } else { "default".into() },
            version: Some("2.4.1".to_owned()),
            user_id: Some(format!("u-{user}")),
            session_id: Some(format!("s-{}", random.below(50_000))),
            request_id: None,
            data: data.as_object().map(JsonObject::from_map),
            error_name: (level == Level::Error).then(|| "TimeoutError".to_owned()),
            error_stack: None,
            tags: None,
            flow_id: (random.below(10) == 0).then(|| format!("f-{}", random.below(10_000))),
            step_index: None,
        },
        country: None,
        ip_address: Some("10.0.0.7".to_owned()),
    }
}

/// Opens the cached data set, building it first when missing. Call inside `runtime`'s
/// context (the pool needs it, also when dropped).
fn data_set(runtime: &tokio::runtime::Runtime) -> (Arc<SqliteStore>, WorkspaceId) {
    let (total, main) = sizes();
    let dir = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../target/bench-data");
    std::fs::create_dir_all(&dir).expect("bench data dir");
    let path = dir.join(format!("queries-{total}.db"));
    let ready = dir.join(format!("queries-{total}.ready"));
    if !ready.exists() {
        let _ = std::fs::remove_file(&path);
        let started = Instant::now();
        runtime.block_on(build(&path, total, main));
        std::fs::write(&ready, "built\n").expect("marker");
        eprintln!("built {} in {:.0} s", path.display(), started.elapsed().as_secs_f64());
    }
    let store = Arc::new(SqliteStore::open(&path).expect("open data set"));
    let workspaces = runtime.block_on(store.list_workspaces()).expect("workspaces");
    let workspace = workspaces.iter().find(|workspace| workspace.name == "measured").expect("measured workspace").id;
    (store, workspace)
}

async fn build(path: &std::path::Path, total: usize, main: usize) {
    let store = SqliteStore::open(path).expect("create data set");
    let lines = corpus_lines();
    let others = (total - main) / (WORKSPACES - 1);
    for number in 0..WORKSPACES {
        let name = if number == 0 { "measured".to_owned() } else { format!("other-{number}") };
        let workspace = Workspace { id: WorkspaceId::generate(), name, plan: Plan::Pro, created_at: NOW - SPAN_MS };
        store.create_workspace(&workspace).await.expect("workspace");
        let count = if number == 0 { main } else { others };
        let mut random = Random(0x9E37_79B9_7F4A_7C15 ^ (number as u64 + 1));
        let mut index = 0;
        while index < count {
            let batch: Vec<Log> =
                (index..(index + 5_000).min(count)).map(|i| make_log(&lines, &mut random, i, count)).collect();
            store.insert_logs(workspace.id, &batch).await.expect("insert");
            index += batch.len();
        }
    }
}

fn search(raw: &str) -> Search {
    Search { query: Query::parse(raw).expect("query"), fields: vec![SearchField::Message] }
}

fn reads(criterion: &mut Criterion) {
    let runtime = tokio::runtime::Builder::new_current_thread().enable_all().build().expect("runtime");
    let _context = runtime.enter();
    let (store, workspace) = data_set(&runtime);
    let page = Page { limit: 50, offset: 0 };
    let mut group = criterion.benchmark_group("sqlite_reads");
    group.sample_size(30).measurement_time(Duration::from_secs(4)).warm_up_time(Duration::from_secs(1));

    let searches = [
        ("search_rare_term", search(RARE_TERM)),
        ("search_rare_phrase", search(&format!("\"{RARE_PHRASE}\""))),
        ("search_common_phrase", search("\"Received block\"")),
        ("search_term_and_exclusion", search(&format!("{RARE_TERM} -nothing"))),
    ];
    for (name, query) in &searches {
        let found = runtime.block_on(store.search_logs(workspace, query, &LogFilter::default(), page)).expect("search");
        eprintln!("{name}: {} logs on the first page, more: {}", found.logs.len(), found.has_more);
        group.bench_function(*name, |bench| {
            bench.iter(|| runtime.block_on(store.search_logs(workspace, query, &LogFilter::default(), page)))
        });
    }

    let day = |ms: i64| time::OffsetDateTime::from_unix_timestamp(ms / 1000).expect("date").date().to_string();
    for (name, group_by) in [("stats_30_days_by_day", "day"), ("stats_30_days_by_source", "source")] {
        let request = StatsRequest::parse(Some(&day(NOW - 29 * MS_PER_DAY)), Some(&day(NOW)), Some(group_by), NOW)
            .expect("stats");
        let (from, to) = request.range_ms();
        group.bench_function(name, |bench| {
            bench.iter(|| {
                let counts = runtime
                    .block_on(store.level_counts(workspace, from, to, &RollupFilter::default(), request.count_by()))
                    .expect("counts");
                request.answer(&counts)
            })
        });
    }
    let (from, to) = summary_range_ms(NOW);
    group.bench_function("summary", |bench| {
        bench.iter(|| {
            let counts = runtime
                .block_on(store.level_counts(workspace, from, to, &RollupFilter::default(), CountBy::Day))
                .expect("counts");
            sluice_query::stats::summary(NOW, &counts)
        })
    });

    let filters = [
        ("list_newest", LogFilter::default()),
        ("list_level_error", LogFilter { level: Some(Level::Error), ..LogFilter::default() }),
        ("list_source", LogFilter { source: Some("billing".into()), ..LogFilter::default() }),
        ("list_environment", LogFilter { environment: Some(Environment::Staging), ..LogFilter::default() }),
        ("list_dataset", LogFilter { dataset: Some("audit".into()), ..LogFilter::default() }),
        ("list_user", LogFilter { user_id: Some("u-42".into()), ..LogFilter::default() }),
        (
            "list_from_to",
            LogFilter { from: Some(NOW - 10 * MS_PER_DAY), to: Some(NOW - 9 * MS_PER_DAY), ..LogFilter::default() },
        ),
    ];
    for (name, filter) in &filters {
        group.bench_function(*name, |bench| {
            bench.iter(|| runtime.block_on(store.list_logs(workspace, filter, Page { limit: 100, offset: 0 })))
        });
    }
    group.finish();
}

/// One batch of 100 and of 5,000 logs into a store of 100k logs, with the trigram index and
/// with the index table replaced by a view that drops what is written to it: the difference
/// is what the search index costs ingest (at 100, mostly next to the commit's fsync; at 5,000,
/// per log).
fn ingest(criterion: &mut Criterion) {
    let runtime = tokio::runtime::Builder::new_current_thread().enable_all().build().expect("runtime");
    let _context = runtime.enter();
    let lines = corpus_lines();
    let mut group = criterion.benchmark_group("sqlite_insert");
    group.sample_size(30).measurement_time(Duration::from_secs(6));
    for indexed in [true, false] {
        let dir = tempfile::tempdir().expect("temp dir");
        let path = dir.path().join("ingest.db");
        let store = SqliteStore::open(&path).expect("store");
        if !indexed {
            use diesel::connection::SimpleConnection;
            use diesel::{Connection, SqliteConnection};
            let mut connection = SqliteConnection::establish(path.to_str().expect("utf-8")).expect("connect");
            connection
                .batch_execute(
                    "DROP TABLE logs_fts; \
                     CREATE VIEW logs_fts AS SELECT 0 AS rowid, '' AS message, '' AS error_name, '' AS error_stack, '' AS data; \
                     CREATE TRIGGER logs_fts_drop INSTEAD OF INSERT ON logs_fts BEGIN SELECT 1; END;",
                )
                .expect("replace the index");
        }
        let workspace = Workspace { id: WorkspaceId::generate(), name: "w".into(), plan: Plan::Pro, created_at: NOW };
        runtime.block_on(store.create_workspace(&workspace)).expect("workspace");
        let mut random = Random(7);
        let mut index = 0;
        while index < 100_000 {
            let batch: Vec<Log> = (index..index + 5_000).map(|i| make_log(&lines, &mut random, i, 100_000)).collect();
            runtime.block_on(store.insert_logs(workspace.id, &batch)).expect("insert");
            index += 5_000;
        }
        for size in [100, 5_000] {
            let name = format!("{}_batch_{size}", if indexed { "with_trigram_index" } else { "without_index" });
            group.throughput(criterion::Throughput::Elements(size as u64));
            group.bench_function(name, |bench| {
                bench.iter_batched(
                    // A batch as a shipper sends it: logs of the last few seconds.
                    || {
                        (0..size)
                            .map(|i| {
                                let mut log = make_log(&lines, &mut random, i, size);
                                log.entry.timestamp = NOW + i as i64;
                                log
                            })
                            .collect::<Vec<Log>>()
                    },
                    |batch| runtime.block_on(store.insert_logs(workspace.id, &batch)).expect("insert"),
                    criterion::BatchSize::LargeInput,
                )
            });
        }
    }
    group.finish();
}

criterion_group!(benches, ingest, reads);

fn main() {
    benches();
    Criterion::default().configure_from_args().final_summary();
}
