//! Property: any valid entry, written in JSON, JSONL or CSV the way a client would write it,
//! parses back to the same entry.

use proptest::prelude::*;
use serde_json::{Map, Value};
use sluice_ingest::{Format, LogEntry, Options, parse};
use sluice_model::{Environment, JsonObject, Level};

/// Text that survives every format's framing: no line breaks in fields a line-based body
/// carries raw, and not empty (an empty CSV cell means "absent").
fn text(max: usize) -> impl Strategy<Value = String> {
    proptest::string::string_regex(&format!("[a-zA-Z0-9 ,;\"'é✓\\\\\\[\\]{{}}:-]{{1,{max}}}")).expect("regex")
}

fn optional_text() -> impl Strategy<Value = Option<String>> {
    proptest::option::of(text(20))
}

fn data() -> impl Strategy<Value = Option<JsonObject>> {
    let value = prop_oneof![
        text(10).prop_map(Value::from),
        any::<i32>().prop_map(Value::from),
        any::<bool>().prop_map(Value::from),
        Just(Value::Null),
    ];
    proptest::option::of(
        proptest::collection::btree_map("[a-z]{1,8}", value, 1..4)
            .prop_map(|map| JsonObject::from_map(&map.into_iter().collect::<Map<String, Value>>())),
    )
}

fn entry() -> impl Strategy<Value = LogEntry> {
    let header = (
        // The accepted range (docs/API.md): from 2000 to a day past the receive time.
        946_684_800_000i64..=1_795_348_800_000,
        proptest::sample::select(Level::ALL.to_vec()),
        text(200),
        text(100),
        proptest::sample::select(Environment::ALL.to_vec()),
        text(30),
    );
    let optional = (
        optional_text(),
        optional_text(),
        optional_text(),
        optional_text(),
        optional_text(),
        optional_text(),
        optional_text(),
    );
    let rest = (
        data(),
        proptest::option::of(proptest::collection::vec("[a-z0-9-]{1,50}", 1..20)),
        proptest::option::of(0u16..=1000),
    );
    (header, optional, rest).prop_map(
        |(
            (timestamp, level, message, source, environment, dataset),
            (version, user_id, session_id, request_id, error_name, error_stack, flow_id),
            (data, tags, step_index),
        )| LogEntry {
            timestamp,
            level,
            message,
            source: source.into(),
            environment,
            dataset: dataset.into(),
            version,
            user_id,
            session_id,
            request_id,
            data,
            error_name,
            error_stack,
            tags,
            flow_id,
            step_index,
        },
    )
}

fn options() -> Options {
    Options::new(1_795_348_800_000)
}

/// A CSV body with every field as a column, cells encoded as docs/API.md (CSV) says.
fn csv_body(entries: &[LogEntry]) -> Vec<u8> {
    const COLUMNS: [&str; 16] = [
        "timestamp",
        "level",
        "message",
        "source",
        "environment",
        "dataset",
        "version",
        "userId",
        "sessionId",
        "requestId",
        "data",
        "errorName",
        "errorStack",
        "tags",
        "flowId",
        "stepIndex",
    ];
    let mut writer = csv::Writer::from_writer(Vec::new());
    writer.write_record(COLUMNS).expect("header");
    for entry in entries {
        let value = serde_json::to_value(entry).expect("entry serialises");
        let row: Vec<String> = COLUMNS
            .iter()
            .map(|column| match &value[*column] {
                Value::Null => String::new(),
                Value::String(text) => text.clone(),
                other => other.to_string(),
            })
            .collect();
        writer.write_record(&row).expect("row");
    }
    writer.into_inner().expect("flush")
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 200, ..ProptestConfig::default() })]

    #[test]
    fn json_round_trips(entries in proptest::collection::vec(entry(), 1..10)) {
        let body = serde_json::to_vec(&serde_json::json!({"logs": entries})).expect("serialise");
        prop_assert_eq!(parse(Format::Json, &body, &options()).expect("parses").entries, entries);
    }

    #[test]
    fn jsonl_round_trips(entries in proptest::collection::vec(entry(), 1..10)) {
        let body: String = entries.iter().map(|entry| serde_json::to_string(entry).expect("serialise") + "\n").collect();
        prop_assert_eq!(parse(Format::Jsonl, body.as_bytes(), &options()).expect("parses").entries, entries);
    }

    #[test]
    fn csv_round_trips(entries in proptest::collection::vec(entry(), 1..10)) {
        let body = csv_body(&entries);
        prop_assert_eq!(parse(Format::Csv, &body, &options()).expect("parses").entries, entries);
    }
}
