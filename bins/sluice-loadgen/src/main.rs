//! The ingest benchmark's load generator, a process of its own beside the server it measures
//! (`cargo xtask bench` starts both).
//!
//! It makes 100-entry batches in one format from the loghub samples of the test corpus, sends
//! them to `POST /v1/logs` over `--connections` keep-alive connections for `--warmup` and then
//! `--seconds` seconds, and counts only what completes in the measured window: logs and
//! payload bytes per second, latency percentiles, refusals by status. With `--server-pid` (and
//! `--db-pid`, a PostgreSQL postmaster whose children are counted with it) it reads the CPU
//! time those processes used in the window and the server's peak RSS from `/proc`.
//!
//! `search-*` are the search benchmark's workload (`search.rs`), `plain-ingest` its loghub
//! lines alone; `flows-*` the flow benchmark's (`flows.rs`); `peers-*` the peers benchmark's,
//! sent to sluice or VictoriaLogs (`peers.rs`); `reads` the soak's readers; `tail` the tail's.
//!
//! Prints a summary on stderr and, last on stdout, one Markdown table row:
//! `| label | format | load | logs/s | MB/s | p50 ms | p99 ms | server CPU | database CPU | server peak RSS | refused |`.
//!
//! Load: by default each connection sends its next request when the last is answered (the
//! most the server takes; latency is then about connections × 100 / throughput). With
//! `--rate LOGS_PER_SECOND` requests are due at fixed times (an offered load, as many shippers
//! send), and each latency counts from when its request was due.

use std::cell::RefCell;
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::rc::Rc;
use std::time::{Duration, Instant};

use anyhow::{Context, bail};
use clap::Parser;
use cli::Mode;
use serde_json::json;

mod cli;
mod flows;
mod peers;
mod reads;
mod search;
mod send;
mod tail;
mod workload;

/// Entries per request, as a shipper's batch.
const ENTRIES: usize = 100;
/// Distinct bodies per run, sent in turn.
const BODIES: usize = 64;
/// Clock ticks per second of `/proc/*/stat` (USER_HZ, 100 on Linux).
const TICKS_PER_SECOND: f64 = 100.0;

/// The command line.
/// One line of a loghub sample and the system it came from.
struct Line {
    system: String,
    text: String,
}

/// Every line of the loghub samples (`<System>_2k.log`), system by system.
fn corpus_lines(corpus: &Path) -> anyhow::Result<Vec<Line>> {
    let folder = corpus.join("loghub");
    let mut files: Vec<PathBuf> = std::fs::read_dir(&folder)
        .with_context(|| format!("cannot read {}", folder.display()))?
        .filter_map(|entry| entry.ok().map(|entry| entry.path()))
        .filter(|path| path.to_string_lossy().ends_with("_2k.log"))
        .collect();
    files.sort();
    let mut lines = Vec::new();
    for file in files {
        let name = file.file_name().map(|name| name.to_string_lossy().into_owned()).unwrap_or_default();
        let system = name.trim_end_matches("_2k.log").to_ascii_lowercase();
        let text = String::from_utf8_lossy(&std::fs::read(&file)?).into_owned();
        lines.extend(
            text.lines()
                .filter(|line| !line.trim().is_empty())
                .map(|line| Line { system: system.clone(), text: line.to_owned() }),
        );
    }
    if lines.is_empty() {
        bail!("no loghub samples in {}", folder.display());
    }
    Ok(lines)
}

/// The level a line's own words suggest.
fn level_of(text: &str) -> &'static str {
    let upper = text.to_ascii_uppercase();
    if upper.contains("ERROR") || upper.contains("FATAL") || upper.contains("FAIL") {
        "error"
    } else if upper.contains("WARN") {
        "warn"
    } else if upper.contains("DEBUG") {
        "debug"
    } else {
        "info"
    }
}

/// Syslog severity of a level (RFC 5424 numbers).
fn severity(level: &str) -> u8 {
    match level {
        "error" => 3,
        "warn" => 4,
        "debug" => 7,
        _ => 6,
    }
}

/// The lines of body `body`: 100 lines spread over every system.
fn pick(lines: &[Line], body: usize) -> impl Iterator<Item = (usize, &Line)> {
    (0..ENTRIES).map(move |index| (index, &lines[((body * ENTRIES + index) * 7_919) % lines.len()]))
}

/// A shipper's JSON entry (winston, pino): level, message, source, environment, ids, `data`.
fn json_entry(body: usize, index: usize, line: &Line) -> serde_json::Value {
    json!({
        "level": level_of(&line.text),
        "message": line.text,
        "source": line.system,
        "environment": "production",
        "userId": format!("user-{}", (body * 31 + index) % 5_000),
        "requestId": format!("req-{body}-{index}"),
        "data": {"host": format!("node-{}", index % 16), "pid": 1_000 + index, "region": "eu-west-1"},
    })
}

/// Writes `rows` of the JSON workload's entries (the bodies' entries, in turn) as CSV in the
/// columns of the naive table (`bench_naive_logs`: id, workspace_id, ts, level, source,
/// environment, message, data), for a raw `COPY` of the same rows the server is sent.
fn write_copy_csv(path: &Path, rows: usize, lines: &[Line]) -> anyhow::Result<()> {
    let mut writer = csv::Writer::from_path(path).with_context(|| format!("cannot write {}", path.display()))?;
    let now = wall_clock().unix_timestamp() * 1_000;
    let workspace = "01900000-0000-7000-8000-000000000001";
    for row in 0..rows {
        let (body, index) = (row / ENTRIES, row % ENTRIES);
        let line = &lines[((body * ENTRIES + index) * 7_919) % lines.len()];
        let entry = json_entry(body, index, line);
        let id = format!("01900000-0000-7000-8000-{row:012x}");
        let ts = (now + row as i64).to_string();
        let field = |name: &str| entry[name].as_str().unwrap_or_default().to_owned();
        let record = [
            id,
            workspace.to_owned(),
            ts,
            field("level"),
            field("source"),
            field("environment"),
            field("message"),
            entry["data"].to_string(),
        ];
        writer.write_record(&record)?;
    }
    writer.flush()?;
    Ok(())
}

/// Request bodies and how each is sent: the query string and `Content-Type`.
struct Workload {
    bodies: Vec<&'static [u8]>,
    /// Logs per body.
    entries: usize,
    query: &'static str,
    content_type: &'static str,
}

fn workload(format: &str, lines: &[Line]) -> anyhow::Result<Workload> {
    // RFC 5424 allows at most six digits of fractional seconds: milliseconds.
    let now = wall_clock();
    let now = now.replace_millisecond(now.millisecond())?.format(&time::format_description::well_known::Rfc3339)?;
    if format == "otlp" {
        let bodies = (0..BODIES).map(|body| &*otlp_body(body, lines).leak()).collect();
        return Ok(Workload { bodies, entries: OTLP_RECORDS, query: "", content_type: "application/x-protobuf" });
    }
    let mut bodies = Vec::with_capacity(BODIES);
    for body in 0..BODIES {
        let text = match format {
            "json" => {
                let entries: Vec<_> = pick(lines, body).map(|(index, line)| json_entry(body, index, line)).collect();
                json!({"logs": entries}).to_string()
            }
            "jsonl" => {
                pick(lines, body).map(|(index, line)| json_entry(body, index, line).to_string() + "\n").collect()
            }
            "syslog" => pick(lines, body)
                .map(|(index, line)| {
                    let pri = 8 + severity(level_of(&line.text));
                    format!("<{pri}>1 {now} node-{} {} {} - - {}\n", index % 16, line.system, 1_000 + index, line.text)
                })
                .collect(),
            "text" => pick(lines, body).map(|(_, line)| format!("{}\n", line.text)).collect(),
            other => bail!("unknown format {other} (json, jsonl, syslog, text, otlp)"),
        };
        bodies.push(&*text.into_bytes().leak());
    }
    let (query, content_type) = match format {
        "json" => ("", "application/json"),
        "jsonl" => ("", "application/x-ndjson"),
        "syslog" => ("?format=syslog&environment=production", "text/plain"),
        _ => ("?format=text&source=loghub&environment=production", "text/plain"),
    };
    Ok(Workload { bodies, entries: ENTRIES, query, content_type })
}

/// Records in one OTLP request: the SDKs' default batch.
const OTLP_RECORDS: usize = 512;

/// An OTLP/HTTP protobuf export of [`OTLP_RECORDS`] loghub lines, as an SDK sends it: one
/// resource (service, version, environment, host), one scope, each record with its severity,
/// body, trace and span ids and the JSON workload's attributes.
fn otlp_body(body: usize, lines: &[Line]) -> Vec<u8> {
    use opentelemetry_proto::tonic::collector::logs::v1::ExportLogsServiceRequest;
    use opentelemetry_proto::tonic::common::v1::{AnyValue, InstrumentationScope, KeyValue, any_value};
    use opentelemetry_proto::tonic::logs::v1::{LogRecord, ResourceLogs, ScopeLogs};
    use opentelemetry_proto::tonic::resource::v1::Resource;
    use prost::Message;

    let text = |value: String| Some(AnyValue { value: Some(any_value::Value::StringValue(value)) });
    let int = |value: i64| Some(AnyValue { value: Some(any_value::Value::IntValue(value)) });
    let pair = |key: &str, value| KeyValue { key: key.to_owned(), value, ..KeyValue::default() };
    let now = u64::try_from(wall_clock().unix_timestamp_nanos()).unwrap_or(0);
    let records = (0..OTLP_RECORDS)
        .map(|index| {
            let line = &lines[((body * OTLP_RECORDS + index) * 7_919) % lines.len()];
            let severity = match level_of(&line.text) {
                "error" => 17,
                "warn" => 13,
                "debug" => 5,
                _ => 9,
            };
            let sequence = (body * OTLP_RECORDS + index) as u64 + 1;
            LogRecord {
                time_unix_nano: now + index as u64 * 1_000,
                severity_number: severity,
                body: text(line.text.clone()),
                attributes: vec![
                    pair("user.id", text(format!("user-{}", (body * 31 + index) % 5_000))),
                    pair("host", text(format!("node-{}", index % 16))),
                    pair("pid", int(1_000 + index as i64)),
                    pair("region", text("eu-west-1".to_owned())),
                ],
                trace_id: u128::from(sequence).to_be_bytes().to_vec(),
                span_id: sequence.to_be_bytes().to_vec(),
                ..LogRecord::default()
            }
        })
        .collect();
    let resource = vec![
        pair("service.name", text("loghub".to_owned())),
        pair("service.version", text("1.0.0".to_owned())),
        pair("deployment.environment.name", text("production".to_owned())),
    ];
    ExportLogsServiceRequest {
        resource_logs: vec![ResourceLogs {
            resource: Some(Resource { attributes: resource, ..Resource::default() }),
            scope_logs: vec![ScopeLogs {
                scope: Some(InstrumentationScope { name: "loadgen".to_owned(), ..InstrumentationScope::default() }),
                log_records: records,
                ..ScopeLogs::default()
            }],
            ..ResourceLogs::default()
        }],
    }
    .encode_to_vec()
}

/// What the measured window saw.
#[derive(Default)]
struct Tally {
    latencies_us: Vec<u64>,
    logs: u64,
    bytes: u64,
    refused: BTreeMap<u16, u64>,
    /// Answers slower than [`SLOW`], by the UTC second their request was due: how many, and
    /// the slowest (µs). Tells when a slow percentile happened, to set against a server's logs.
    slow: BTreeMap<u64, (u64, u64)>,
}

/// An answer this slow is counted in [`Tally::slow`].
const SLOW: Duration = Duration::from_millis(100);

/// The seconds with the most slow answers, as `HH:MM:SS ×N (max M ms)`, worst first.
fn slow_seconds(slow: &BTreeMap<u64, (u64, u64)>) -> String {
    let mut seconds: Vec<_> = slow.iter().collect();
    seconds.sort_by_key(|(_, (count, _))| std::cmp::Reverse(*count));
    let shown: Vec<String> = seconds
        .iter()
        .take(5)
        .map(|(second, (count, max_us))| {
            let of_day = *second % 86_400;
            format!(
                "{:02}:{:02}:{:02} ×{count} (max {:.0} ms)",
                of_day / 3_600,
                of_day / 60 % 60,
                of_day % 60,
                *max_us as f64 / 1e3
            )
        })
        .collect();
    shown.join(", ")
}

/// CPU seconds a process has used (user and system), from `/proc/PID/stat`.
pub(crate) fn cpu_seconds(pid: u32) -> Option<f64> {
    let stat = std::fs::read_to_string(format!("/proc/{pid}/stat")).ok()?;
    let fields: Vec<&str> = stat.rsplit_once(") ")?.1.split_whitespace().collect();
    let user: f64 = fields.get(11)?.parse().ok()?;
    let system: f64 = fields.get(12)?.parse().ok()?;
    Some((user + system) / TICKS_PER_SECOND)
}

/// The parent process of `pid`.
fn parent_of(pid: u32) -> Option<u32> {
    let stat = std::fs::read_to_string(format!("/proc/{pid}/stat")).ok()?;
    stat.rsplit_once(") ")?.1.split_whitespace().nth(1)?.parse().ok()
}

/// CPU seconds of `pid` and all its children (a postmaster and its backends).
fn family_cpu_seconds(pid: u32) -> f64 {
    let mut total = cpu_seconds(pid).unwrap_or(0.0);
    if let Ok(entries) = std::fs::read_dir("/proc") {
        for entry in entries.flatten() {
            let child = entry.file_name().to_string_lossy().parse::<u32>().ok();
            if let Some(child) = child.filter(|child| parent_of(*child) == Some(pid)) {
                total += cpu_seconds(child).unwrap_or(0.0);
            }
        }
    }
    total
}

/// The peak resident set of a process, in MB (`VmHWM`).
fn peak_rss_mb(pid: u32) -> Option<f64> {
    let status = std::fs::read_to_string(format!("/proc/{pid}/status")).ok()?;
    let line = status.lines().find(|line| line.starts_with("VmHWM:"))?;
    let kilobytes: f64 = line.split_whitespace().nth(1)?.parse().ok()?;
    Some(kilobytes / 1024.0)
}

/// CPU seconds of the server and of the database, now.
fn cpu_now(args: &cli::IngestArgs) -> (f64, f64) {
    (args.server_pid.and_then(cpu_seconds).unwrap_or(0.0), args.db_pid.map(family_cpu_seconds).unwrap_or(0.0))
}

/// What every connection's loop shares.
struct Shared {
    client: awc::Client,
    url: String,
    auth: String,
    workload: Workload,
    /// When measuring starts and sending ends.
    window: (Instant, Instant),
    /// An instant and the wall clock then, in ms since the epoch (for [`Tally::slow`]).
    epoch: (Instant, u64),
    tally: RefCell<Tally>,
}

/// One connection's loop: send batches until the window ends; with `pace`, one every
/// `pace.0`, the first after `pace.1`.
async fn drive(shared: Rc<Shared>, worker: usize, pace: Option<(Duration, Duration)>) {
    let Shared { client, url, auth, workload, window, epoch, tally } = &*shared;
    let (measured_from, until) = *window;
    let mut turn = worker;
    // Open loop: this connection's requests are due at fixed times, spread over the
    // connections; latency counts from when a request was due, so a slow answer that delays
    // the next request is charged to it too (no coordinated omission).
    let mut due = pace.map(|(_, offset)| Instant::now() + offset);
    let interval = pace.map(|(interval, _)| interval);
    while Instant::now() < until {
        let body = workload.bodies[turn % workload.bodies.len()];
        turn += 1;
        let sent = when_due(&mut due, interval).await;
        let outcome = client
            .post(url.as_str())
            .insert_header(("Authorization", auth.as_str()))
            .insert_header(("Content-Type", workload.content_type))
            .send_body(body)
            .await;
        let status = match outcome {
            Ok(mut response) => {
                let status = response.status().as_u16();
                let _ = response.body().limit(1 << 20).await;
                status
            }
            Err(_) => 0,
        };
        let done = Instant::now();
        if done < measured_from || done > until {
            continue;
        }
        let mut tally = tally.borrow_mut();
        if status == 200 {
            let latency = done.duration_since(sent);
            tally.latencies_us.push(u64::try_from(latency.as_micros()).unwrap_or(u64::MAX));
            if latency >= SLOW {
                let due_ms = epoch.1 + u64::try_from(sent.saturating_duration_since(epoch.0).as_millis()).unwrap_or(0);
                let second = tally.slow.entry(due_ms / 1_000).or_default();
                second.0 += 1;
                second.1 = second.1.max(u64::try_from(latency.as_micros()).unwrap_or(u64::MAX));
            }
            tally.logs += workload.entries as u64;
            tally.bytes += body.len() as u64;
        } else {
            *tally.refused.entry(status).or_insert(0) += 1;
        }
    }
}

/// Open loop: waits until the request `due` is due, moves `due` on by `interval`, and returns
/// when it was due (latency counts from then); closed loop (no pace): now.
pub(crate) async fn when_due(due: &mut Option<Instant>, interval: Option<Duration>) -> Instant {
    match (*due, interval) {
        (Some(at), Some(interval)) => {
            actix_rt::time::sleep_until(at.into()).await;
            *due = Some(at + interval);
            at
        }
        _ => Instant::now(),
    }
}

/// Now by the wall clock: the load generator stamps what it sends with it.
#[expect(clippy::disallowed_methods, reason = "a client program, not the server: it has no injected clock")]
fn wall_clock() -> time::OffsetDateTime {
    time::OffsetDateTime::now_utc()
}

/// The value at quantile `q` of sorted latencies, in ms.
fn quantile_ms(sorted: &[u64], q: f64) -> f64 {
    if sorted.is_empty() {
        return 0.0;
    }
    let at = ((sorted.len() as f64 - 1.0) * q).round() as usize;
    sorted[at.min(sorted.len() - 1)] as f64 / 1000.0
}

#[actix_rt::main]
async fn main() -> anyhow::Result<()> {
    let cli = cli::Cli::parse();
    match cli.mode {
        Some(Mode::SearchIngest(args)) => return search::run("search-ingest", args).await,
        Some(Mode::PlainIngest(args)) => return search::run("plain-ingest", args).await,
        Some(Mode::SearchQueries(args)) => return search::run("search-queries", args).await,
        Some(Mode::FlowsIngest(args)) => return search::run("flows-ingest", args).await,
        Some(Mode::FlowsQueries(args)) => return search::run("flows-queries", args).await,
        Some(Mode::PeersIngest(args)) => return peers::run(false, args).await,
        Some(Mode::PeersQueries(args)) => return peers::run(true, args).await,
        Some(Mode::Reads(args)) => return reads::run(args).await,
        Some(Mode::Tail(args)) => return tail::run(args).await,
        None => {}
    }
    let args = cli.ingest;
    let (url, key) = (args.url.clone().unwrap_or_default(), args.key.clone().unwrap_or_default());
    let lines = corpus_lines(&args.corpus)?;
    if let Some(path) = &args.copy_csv {
        return write_copy_csv(path, args.copy_rows, &lines);
    }
    let workload = workload(&args.format, &lines)?;
    let start = Instant::now();
    let measured_from = start + Duration::from_secs(args.warmup);
    let until = measured_from + Duration::from_secs(args.seconds);
    let shared = Rc::new(Shared {
        client: awc::Client::builder()
            .connector(awc::Connector::new().limit(args.connections))
            .timeout(Duration::from_secs(60))
            .finish(),
        url: format!("{}/v1/logs{}", url.trim_end_matches('/'), workload.query),
        auth: format!("Bearer {key}"),
        workload,
        window: (measured_from, until),
        epoch: (start, u64::try_from(wall_clock().unix_timestamp_nanos() / 1_000_000).unwrap_or(0)),
        tally: RefCell::new(Tally::default()),
    });
    // At an offered rate, each connection sends one request every `interval`, the
    // connections staggered evenly across it.
    let interval =
        args.rate.map(|rate| Duration::from_secs_f64(args.connections as f64 * shared.workload.entries as f64 / rate));
    let workers: Vec<_> = (0..args.connections)
        .map(|worker| {
            let pace = interval.map(|interval| (interval, interval.mul_f64(worker as f64 / args.connections as f64)));
            actix_rt::spawn(drive(shared.clone(), worker, pace))
        })
        .collect();
    actix_rt::time::sleep_until(measured_from.into()).await;
    let (server_before, db_before) = cpu_now(&args);
    actix_rt::time::sleep_until(until.into()).await;
    let (server_after, db_after) = cpu_now(&args);
    for worker in workers {
        let _ = worker.await;
    }

    let mut tally = shared.tally.take();
    tally.latencies_us.sort_unstable();
    let seconds = args.seconds as f64;
    let logs_per_second = tally.logs as f64 / seconds;
    let megabytes_per_second = tally.bytes as f64 / seconds / 1_000_000.0;
    let (p50, p99) = (quantile_ms(&tally.latencies_us, 0.50), quantile_ms(&tally.latencies_us, 0.99));
    let server_cpu = (server_after - server_before) / seconds * 100.0;
    let db_cpu = (db_after - db_before) / seconds * 100.0;
    let rss = args.server_pid.and_then(peak_rss_mb);
    let refused: Vec<String> = tally.refused.iter().map(|(status, count)| format!("{count}×{status}")).collect();
    let refused = if refused.is_empty() { "none".to_owned() } else { refused.join(", ") };
    eprintln!(
        "{} {}: {:.0} logs/s, {:.2} MB/s, p50 {p50:.1} ms, p99 {p99:.1} ms over {} s with {} connections; \
         server CPU {server_cpu:.0}%, database CPU {db_cpu:.0}%, refused: {refused}",
        args.label, args.format, logs_per_second, megabytes_per_second, args.seconds, args.connections
    );
    if !tally.slow.is_empty() {
        let count: u64 = tally.slow.values().map(|(count, _)| count).sum();
        eprintln!(
            "{} {}: {count} answers took {} ms or more; by when they were due (UTC), the worst seconds: {}",
            args.label,
            args.format,
            SLOW.as_millis(),
            slow_seconds(&tally.slow)
        );
    }
    let load = args.rate.map_or_else(|| "as fast as answered".to_owned(), |rate| format!("{rate:.0} offered"));
    let cpu = |value: f64, known: bool| if known { format!("{value:.0} %") } else { "—".to_owned() };
    println!(
        "| {} | {} | {load} | {:.0} | {:.2} | {p50:.1} | {p99:.1} | {} | {} | {} | {refused} |",
        args.label,
        args.format,
        logs_per_second,
        megabytes_per_second,
        cpu(server_cpu, args.server_pid.is_some()),
        cpu(db_cpu, args.db_pid.is_some()),
        rss.map_or("—".to_owned(), |rss| format!("{rss:.0} MB")),
    );
    Ok(())
}
