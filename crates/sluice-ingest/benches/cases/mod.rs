//! The inputs and baselines of issue 3's parser figures, shared by the criterion bench
//! (`parsers.rs`, wall-clock time) and the instruction-count bench (`instructions.rs`).
//! Inputs come from `../shared/corpus`; sluice's output is complete, validated entries.

use std::path::PathBuf;

use serde::Deserialize;
use sluice_ingest::{Defaults, Format, Options, parse};

/// A baseline: its name and one run over a body, giving the number of items read.
pub type Baseline = (&'static str, fn(&[u8]) -> usize);

/// One format's input, with the baseline it is measured against, if any.
pub struct Case {
    /// The criterion group name.
    pub name: &'static str,
    /// The format sluice reads `body` as.
    pub format: Format,
    /// The request body.
    pub body: Vec<u8>,
    /// The baseline: its name and one run over the same bytes.
    pub baseline: Option<Baseline>,
}

impl Case {
    /// One run of sluice's parser: the number of entries.
    pub fn sluice(&self, options: &Options) -> usize {
        parse(self.format, &self.body, options).expect("parses").entries.len()
    }
}

pub fn corpus(relative: &str) -> Vec<u8> {
    let path = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../../shared/corpus").join(relative);
    std::fs::read(&path).unwrap_or_else(|error| panic!("{}: {error}", path.display()))
}

/// Query defaults as a shipper would send them, and no batch limit.
pub fn options() -> Options {
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

fn serde_json_struct(body: &[u8]) -> usize {
    body.split(|byte| *byte == b'\n')
        .filter(|line| !line.is_empty())
        .map(|line| serde_json::from_slice::<PlainEntry>(line).expect("valid"))
        .collect::<Vec<_>>()
        .len()
}

fn syslog_loose(body: &[u8]) -> usize {
    std::str::from_utf8(body)
        .expect("UTF-8")
        .lines()
        .map(|line| syslog_loose::parse_message(line, syslog_loose::Variant::Either))
        .collect::<Vec<_>>()
        .len()
}

fn csv_byte_record(body: &[u8]) -> usize {
    let mut reader = csv::ReaderBuilder::new().from_reader(body);
    let mut record = csv::ByteRecord::new();
    let mut rows = 0;
    while reader.read_byte_record(&mut record).expect("reads") {
        rows += 1;
    }
    rows
}

/// 2,000 JSONL entries with every common field, messages from loghub's Hadoop sample.
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

/// Every measured case, in the order of docs/PERFORMANCE.md.
pub fn cases() -> Vec<Case> {
    let text_files = [
        "loghub/Hadoop_2k.log",
        "loghub/Zookeeper_2k.log",
        "loghub/Linux_2k.log",
        "loghub/Windows_2k.log",
        "loghub/Spark_2k.log",
    ];
    vec![
        Case {
            name: "jsonl",
            format: Format::Jsonl,
            body: jsonl_body(),
            baseline: Some(("serde_json_struct", serde_json_struct)),
        },
        Case {
            name: "syslog_rfc5424",
            format: Format::Syslog,
            body: lines_of(&["syslog/rfc5424.txt"]),
            baseline: Some(("syslog_loose", syslog_loose)),
        },
        Case {
            name: "syslog_rfc3164",
            format: Format::Syslog,
            body: lines_of(&["syslog/rfc3164.txt"]),
            baseline: Some(("syslog_loose", syslog_loose)),
        },
        Case { name: "text", format: Format::Text, body: lines_of(&text_files), baseline: None },
        Case {
            name: "csv",
            format: Format::Csv,
            body: corpus("loghub/csv/Zookeeper_2k.log_structured.csv"),
            baseline: Some(("csv_byte_record", csv_byte_record)),
        },
        Case { name: "obl", format: Format::Obl, body: corpus("obl/coughdrop_export_spec.obl"), baseline: None },
        Case {
            name: "otlp_protobuf",
            format: Format::Otlp,
            body: otlp_body(&lines_of(&text_files)),
            baseline: Some(("prost_decode", prost_decode)),
        },
    ]
}

/// An SDK-sized OTLP/HTTP protobuf export (512 records, as the SDKs batch) of loghub lines,
/// each with a trace and span id and three attributes, under a resource of four.
pub fn otlp_body(lines: &[u8]) -> Vec<u8> {
    use opentelemetry_proto::tonic::collector::logs::v1::ExportLogsServiceRequest;
    use opentelemetry_proto::tonic::common::v1::{AnyValue, InstrumentationScope, KeyValue, any_value};
    use opentelemetry_proto::tonic::logs::v1::{LogRecord, ResourceLogs, ScopeLogs};
    use opentelemetry_proto::tonic::resource::v1::Resource;
    use prost::Message;

    let text = |value: &str| Some(AnyValue { value: Some(any_value::Value::StringValue(value.to_owned())) });
    let int = |value: i64| Some(AnyValue { value: Some(any_value::Value::IntValue(value)) });
    let pair = |key: &str, value| KeyValue { key: key.to_owned(), value, ..KeyValue::default() };
    let records = String::from_utf8_lossy(lines)
        .lines()
        .filter(|line| !line.trim().is_empty())
        .take(512)
        .enumerate()
        .map(|(index, line)| LogRecord {
            time_unix_nano: 1_795_348_000_000_000_000 + index as u64 * 1_000_000,
            severity_number: [5, 9, 13, 17][index % 4],
            severity_text: ["DEBUG", "INFO", "WARN", "ERROR"][index % 4].to_owned(),
            body: text(line),
            attributes: vec![
                pair("user.id", text(&format!("u-{}", index % 97))),
                pair("http.route", text("/v1/orders/{id}")),
                pair("attempt", int(index as i64 % 3)),
            ],
            trace_id: (index as u128 + 1).to_be_bytes().to_vec(),
            span_id: (index as u64 + 1).to_be_bytes().to_vec(),
            ..LogRecord::default()
        })
        .collect();
    let resource = vec![
        pair("service.name", text("checkout")),
        pair("service.version", text("1.4.2")),
        pair("deployment.environment.name", text("production")),
        pair("host.name", text("web-7")),
    ];
    ExportLogsServiceRequest {
        resource_logs: vec![ResourceLogs {
            resource: Some(Resource { attributes: resource, ..Resource::default() }),
            scope_logs: vec![ScopeLogs {
                scope: Some(InstrumentationScope { name: "checkout".to_owned(), ..InstrumentationScope::default() }),
                log_records: records,
                ..ScopeLogs::default()
            }],
            ..ResourceLogs::default()
        }],
    }
    .encode_to_vec()
}

/// The prost baseline: decoding the generated types alone, no mapping and no rules.
fn prost_decode(body: &[u8]) -> usize {
    use prost::Message;
    opentelemetry_proto::tonic::collector::logs::v1::ExportLogsServiceRequest::decode(body)
        .map(|request| request.resource_logs.iter().flat_map(|r| &r.scope_logs).map(|s| s.log_records.len()).sum())
        .unwrap_or(0)
}
