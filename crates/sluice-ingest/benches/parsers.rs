//! Parser throughput, each format side by side with its baseline on the same bytes, output
//! being complete, validated entries (issue 3's figures; results in docs/PERFORMANCE.md):
//! JSONL vs serde_json into a struct, syslog vs `syslog_loose` (the parser Vector uses),
//! CSV vs the `csv` crate's ByteRecord loop, text and OBL in MB/s.
//! Inputs come from `../shared/corpus`.

use std::path::PathBuf;

use criterion::{Criterion, Throughput, criterion_group, criterion_main};
use serde::Deserialize;
use sluice_ingest::{Defaults, Format, Options, parse};

/// The allocator the `sluice` binary uses, so the figures are those of the deployed service.
#[global_allocator]
static GLOBAL: mimalloc::MiMalloc = mimalloc::MiMalloc;

fn corpus(relative: &str) -> Vec<u8> {
    let path = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../../shared/corpus").join(relative);
    std::fs::read(&path).unwrap_or_else(|error| panic!("{}: {error}", path.display()))
}

fn options() -> Options {
    let mut options = Options::new(1_795_348_800_000);
    options.defaults =
        Defaults { source: Some("bench".into()), environment: Some("production".into()), ..Defaults::default() };
    options.max_entries = usize::MAX;
    options
}

/// The plain serde_json baseline: the same fields, no rules.
#[derive(Deserialize)]
#[serde(rename_all = "camelCase")]
#[allow(dead_code)]
struct PlainEntry {
    level: String,
    message: String,
    source: String,
    environment: String,
    timestamp: Option<i64>,
    user_id: Option<String>,
    request_id: Option<String>,
    tags: Option<Vec<String>>,
    data: Option<serde_json::Value>,
}

fn jsonl_body() -> Vec<u8> {
    let text = String::from_utf8_lossy(&corpus("loghub/Hadoop_2k.log")).into_owned();
    let mut body = String::new();
    for (index, line) in text.lines().enumerate() {
        let level = ["info", "warn", "error", "debug"][index % 4];
        let entry = serde_json::json!({
            "level": level,
            "message": line,
            "source": "hadoop",
            "environment": "production",
            "timestamp": 1_700_000_000_000_i64 + index as i64,
            "userId": format!("u-{}", index % 97),
            "requestId": format!("r-{index}"),
            "tags": ["batch", "yarn"],
            "data": {"attempt": index % 3, "node": "n-7"},
        });
        body.push_str(&entry.to_string());
        body.push('\n');
    }
    body.into_bytes()
}

fn lines_of(files: &[&str]) -> Vec<u8> {
    let mut body = Vec::new();
    for file in files {
        body.extend_from_slice(&corpus(file));
        if body.last() != Some(&b'\n') {
            body.push(b'\n');
        }
    }
    body
}

fn benches(c: &mut Criterion) {
    let options = options();

    let jsonl = jsonl_body();
    let mut group = c.benchmark_group("jsonl");
    group.throughput(Throughput::Bytes(jsonl.len() as u64));
    group
        .bench_function("sluice", |b| b.iter(|| parse(Format::Jsonl, &jsonl, &options).expect("parses").entries.len()));
    group.bench_function("serde_json_struct", |b| {
        b.iter(|| {
            jsonl
                .split(|byte| *byte == b'\n')
                .filter(|line| !line.is_empty())
                .map(|line| serde_json::from_slice::<PlainEntry>(line).expect("valid"))
                .collect::<Vec<_>>()
        })
    });
    group.finish();

    for (name, files) in [("syslog_rfc5424", ["syslog/rfc5424.txt"]), ("syslog_rfc3164", ["syslog/rfc3164.txt"])] {
        let body = lines_of(&files);
        let text = String::from_utf8_lossy(&body).into_owned();
        let mut group = c.benchmark_group(name);
        group.throughput(Throughput::Bytes(body.len() as u64));
        group.bench_function("sluice", |b| {
            b.iter(|| parse(Format::Syslog, &body, &options).expect("parses").entries.len())
        });
        group.bench_function("syslog_loose", |b| {
            b.iter(|| {
                text.lines()
                    .map(|line| syslog_loose::parse_message(line, syslog_loose::Variant::Either))
                    .collect::<Vec<_>>()
            })
        });
        group.finish();
    }

    let text = lines_of(&[
        "loghub/Hadoop_2k.log",
        "loghub/Zookeeper_2k.log",
        "loghub/Linux_2k.log",
        "loghub/Windows_2k.log",
        "loghub/Spark_2k.log",
    ]);
    let mut group = c.benchmark_group("text");
    group.throughput(Throughput::Bytes(text.len() as u64));
    group.bench_function("sluice", |b| b.iter(|| parse(Format::Text, &text, &options).expect("parses").entries.len()));
    group.finish();

    let csv = corpus("loghub/csv/Zookeeper_2k.log_structured.csv");
    let mut group = c.benchmark_group("csv");
    group.throughput(Throughput::Bytes(csv.len() as u64));
    group.bench_function("sluice", |b| b.iter(|| parse(Format::Csv, &csv, &options).expect("parses").entries.len()));
    group.bench_function("csv_byte_record", |b| {
        b.iter(|| {
            let mut reader = csv::ReaderBuilder::new().from_reader(csv.as_slice());
            let mut record = csv::ByteRecord::new();
            let mut rows = 0;
            while reader.read_byte_record(&mut record).expect("reads") {
                rows += 1;
            }
            rows
        })
    });
    group.finish();

    let obl = corpus("obl/coughdrop_export_spec.obl");
    let mut group = c.benchmark_group("obl");
    group.throughput(Throughput::Bytes(obl.len() as u64));
    group.bench_function("sluice", |b| b.iter(|| parse(Format::Obl, &obl, &options).expect("parses").entries.len()));
    group.finish();
}

criterion_group!(parsers, benches);
criterion_main!(parsers);
