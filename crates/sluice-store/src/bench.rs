//! The read benchmark every store runs (feature `bench`), and the data set it reads: 5M logs
//! from the loghub samples in five workspaces, 1M of them in the measured one (`--quick`:
//! 500k and 100k), spread over the 30 days before a fixed "now". Each store's bench builds the
//! set once through its own `insert_logs`, keeps it, and calls [`reads`]: searches (a term in
//! 0.01 % of the logs, a phrase as rare, a common phrase, a term with an exclusion), stats for
//! 30 days by day and by source, the summary, and the newest page under each single filter.
//! [`inserts`] measures a 100- and a 5,000-log batch into a store of 100k logs (each store's
//! bench runs it with its search index and without, to see what the index costs ingest).

use std::path::PathBuf;
use std::time::Duration;

use criterion::Criterion;
use serde_json::json;
use sluice_model::calendar::MS_PER_DAY;
use sluice_model::{Environment, JsonObject, Level, Log, LogEntry, LogId, Plan, Workspace, WorkspaceId};
use sluice_query::stats::{CountBy, RollupFilter, StatsRequest, summary_range_ms};
use sluice_query::{Query, SearchField};

use crate::{CountsRead, LogFilter, Page, Search, Store};

/// 2026-03-31 12:00 UTC: "now" for every query; the measured workspace's logs cover the 30
/// days before it.
pub const NOW: i64 = 1_774_958_400_000;
/// The time the measured workspace's logs cover.
pub const SPAN_MS: i64 = 30 * MS_PER_DAY;
/// One log in this many carries the rare term (0.01%), another the rare phrase.
const RARE_EVERY: usize = 10_000;
const RARE_TERM: &str = "zebraquokka";
const RARE_PHRASE: &str = "quota ledger drift";
const SOURCES: [&str; 8] = ["api", "web", "worker", "billing", "auth", "search", "mailer", "gateway"];
/// Workspaces in the data set (the measured one and four others).
pub const WORKSPACES: usize = 5;

/// Whether the bench was started with `--quick`.
pub fn quick() -> bool {
    std::env::args().any(|arg| arg == "--quick")
}

/// Logs in the data set, and in the measured workspace.
pub fn sizes() -> (usize, usize) {
    if quick() { (500_000, 100_000) } else { (5_000_000, 1_000_000) }
}

/// Every line of the loghub samples: real messages of 16 systems.
pub fn corpus_lines() -> Vec<String> {
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
pub struct Random(pub u64);

impl Random {
    /// The next number.
    fn step(&mut self) -> u64 {
        self.0 ^= self.0 << 13;
        self.0 ^= self.0 >> 7;
        self.0 ^= self.0 << 17;
        self.0
    }

    /// A number below `bound`.
    pub fn below(&mut self, bound: u64) -> u64 {
        self.step() % bound
    }
}

/// The `index`-th of `count` logs of a workspace, spread evenly over the 30 days before NOW.
pub fn make_log(lines: &[String], random: &mut Random, index: usize, count: usize) -> Log {
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

/// Fills an empty store with the data set: `total` logs, `main` of them in the workspace
/// named `measured`, in batches of 5,000.
pub async fn fill(store: &dyn Store, total: usize, main: usize) {
    let lines = corpus_lines();
    let others = (total - main) / (WORKSPACES - 1);
    for number in 0..WORKSPACES {
        let name = if number == 0 { "measured".to_owned() } else { format!("other-{number}") };
        let workspace = Workspace::new(name, Plan::Enterprise, NOW - SPAN_MS);
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

/// The id of the workspace named `measured`.
pub async fn measured(store: &dyn Store) -> WorkspaceId {
    let workspaces = store.list_workspaces().await.expect("workspaces");
    workspaces.iter().find(|workspace| workspace.name == "measured").expect("measured workspace").id
}

/// Measures the reads on `store` (holding the data set) as criterion group `group_name`.
pub fn reads(
    criterion: &mut Criterion,
    group_name: &str,
    runtime: &tokio::runtime::Runtime,
    store: &dyn Store,
    workspace: WorkspaceId,
) {
    let page = Page { limit: 50, offset: 0 };
    let mut group = criterion.benchmark_group(group_name);
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
                    .block_on(store.level_counts(
                        workspace,
                        CountsRead {
                            from_ms: from,
                            to_ms: to,
                            filter: &RollupFilter::default(),
                            by: request.count_by(),
                        },
                    ))
                    .expect("counts");
                request.answer(&counts)
            })
        });
    }
    let (from, to) = summary_range_ms(NOW);
    group.bench_function("summary", |bench| {
        bench.iter(|| {
            let counts = runtime
                .block_on(store.level_counts(
                    workspace,
                    CountsRead { from_ms: from, to_ms: to, filter: &RollupFilter::default(), by: CountBy::Day },
                ))
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

/// Fills `store` (empty) with 100k logs, then measures one batch of 100 and of 5,000 logs as
/// a shipper sends them (logs of the last few seconds), as `<name>/batch_<size>`.
pub fn inserts(criterion: &mut Criterion, name: &str, runtime: &tokio::runtime::Runtime, store: &dyn Store) {
    let mut group = criterion.benchmark_group(name);
    group.sample_size(20).measurement_time(Duration::from_secs(8));
    let lines = corpus_lines();
    let workspace = Workspace::new("w", Plan::Enterprise, NOW);
    runtime.block_on(store.create_workspace(&workspace)).expect("workspace");
    let mut random = Random(7);
    let mut index = 0;
    while index < 100_000 {
        let batch: Vec<Log> = (index..index + 5_000).map(|i| make_log(&lines, &mut random, i, 100_000)).collect();
        runtime.block_on(store.insert_logs(workspace.id, &batch)).expect("insert");
        index += 5_000;
    }
    for size in [100, 5_000] {
        group.throughput(criterion::Throughput::Elements(size as u64));
        group.bench_function(format!("batch_{size}"), |bench| {
            bench.iter_batched(
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
    group.finish();
}
