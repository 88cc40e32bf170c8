//! What pino (through pino-http-send), bunyan and winston send, as captured from the real
//! clients (`../shared/corpus/client-captures`), read with the mapping of DECISIONS ("pino /
//! bunyan / winston JSON"): numeric levels, `msg`, `time`, `err` objects.

use sluice_ingest::{Defaults, Format, Options, parse};
use sluice_model::Level;

use sluice_testkit::captures::bodies;

fn options() -> Options {
    let mut options = Options::new(1_795_314_400_000);
    options.defaults =
        Defaults { source: Some("node-app".into()), environment: Some("production".into()), ..Defaults::default() };
    options
}

#[test]
fn pino_lines_take_their_numeric_level_msg_time_and_err() {
    let body = bodies("pino-http-send_ndjson.txt").remove(0);
    // As pino-http-send sends it: NDJSON, which the server also sniffs as JSONL.
    assert_eq!(Format::sniff(&body), Format::Jsonl);
    // Its first line carries `userId: 42`, a number: kept as the id "42" (docs/API.md).
    let batch = parse(Format::Jsonl, &body, &options()).expect("pino's lines");
    let [info, warn, error] = &batch.entries[..] else { panic!("three entries: {:?}", batch.entries) };
    assert_eq!(
        (info.level, info.message.as_str(), info.user_id.as_deref()),
        (Level::Info, "user logged in", Some("42"))
    );
    assert_eq!((warn.level, warn.message.as_str(), warn.timestamp), (Level::Warn, "low disk", 1_795_314_371_382));
    assert_eq!((error.level, error.message.as_str()), (Level::Error, "write failed"));
    assert_eq!(error.error_name.as_deref(), Some("Error"));
    assert!(error.error_stack.as_deref().is_some_and(|stack| stack.starts_with("Error: disk full on /var\n    at ")));
    let data = serde_json::to_value(&error.data).expect("data");
    assert_eq!((&data["hostname"], &data["pid"]), (&serde_json::json!("vm"), &serde_json::json!(16034)));
    assert_eq!(data["err"], serde_json::json!({"type": "Error", "message": "disk full on /var"}));
}

#[test]
fn winston_entries_keep_their_own_fields() {
    for body in bodies("winston_http.txt").into_iter().chain(bodies("winston_http_batch.txt")) {
        let text = String::from_utf8_lossy(&body).into_owned();
        let batch = parse(Format::Json, text.as_bytes(), &options()).expect("winston");
        assert!(batch.entries.iter().all(|entry| !entry.message.is_empty()), "{text}");
    }
}

#[test]
fn bunyan_levels_and_an_error_named_by_name() {
    let line = br#"{"name":"api","hostname":"h","pid":7,"level":60,"msg":"fatal","time":"2026-11-22T02:26:07.769Z","err":{"name":"TypeError","message":"x is undefined","stack":"TypeError: x is undefined"},"v":0}
{"level":20,"msg":"details","message":"the real message","time":1795314367000}"#;
    let batch = parse(Format::Jsonl, line, &options()).expect("bunyan");
    let [fatal, details] = &batch.entries[..] else { panic!("two entries") };
    assert_eq!((fatal.level, fatal.message.as_str(), fatal.timestamp), (Level::Error, "fatal", 1_795_314_367_769));
    assert_eq!(fatal.error_name.as_deref(), Some("TypeError"));
    // `message` wins over `msg`, which stays in data.
    assert_eq!((details.level, details.message.as_str()), (Level::Debug, "the real message"));
    assert_eq!(serde_json::to_value(&details.data).expect("data")["msg"], "details");
}

mod otlp {
    use opentelemetry_proto::tonic::collector::logs::v1::ExportLogsServiceRequest;
    use opentelemetry_proto::tonic::common::v1::{AnyValue, any_value};
    use opentelemetry_proto::tonic::logs::v1::{LogRecord, ResourceLogs, ScopeLogs};
    use prost::Message;
    use serde_json::json;
    use sluice_ingest::otlp::{Encoding, is_otlp_json, parse_otlp};
    use sluice_ingest::{Format, IngestError, Options};
    use sluice_model::{Environment, Level};

    use super::{bodies, options};

    #[test]
    fn the_python_sdk_protobuf_export_maps_field_by_field() {
        let body = bodies("otel-python_otlp-http.txt").remove(0);
        assert!(!is_otlp_json(&body));
        let batch = parse_otlp(Encoding::Protobuf, &body, &options()).expect("the Python SDK's request");
        assert_eq!(batch.rejected, 0);
        let [info, error] = &batch.entries[..] else { panic!("two records: {:?}", batch.entries) };
        assert_eq!(
            (info.level, info.message.as_str(), info.source.as_str()),
            (Level::Info, "user logged in", "demo-svc")
        );
        assert_eq!((error.level, error.message.as_str()), (Level::Error, "disk full on /var"));
        // No deployment.environment in the resource: the query's (the caller's) environment.
        assert_eq!(info.environment, Environment::Production);
        assert_eq!(info.user_id.as_deref(), Some("42"));
        assert!((1_795_314_360_000..1_795_314_400_000).contains(&info.timestamp), "{}", info.timestamp);
        let data = serde_json::to_value(&info.data).expect("data");
        assert_eq!(data["attributes"]["code.function.name"], "<module>");
        assert_eq!(data["attributes"]["code.line.number"], 18);
        assert_eq!(data["resource"]["telemetry.sdk.language"], "python");
        assert_eq!(data["resource"].get("service.name"), None, "mapped to source, not repeated");
        assert_eq!(data["scope"], json!({"name": "demo"}));
    }

    #[test]
    fn the_js_sdk_json_export_maps_field_by_field() {
        let body = bodies("otel-js_otlp-http-json.txt").remove(0);
        // Sent as application/json (here even with ?format=json): the top level says OTLP.
        assert!(is_otlp_json(&body));
        assert_eq!(Format::sniff(&body), Format::Json);
        let batch = parse_otlp(Encoding::Json, &body, &options()).expect("the JS SDK's request");
        let [info, error] = &batch.entries[..] else { panic!("two records: {:?}", batch.entries) };
        assert_eq!((info.source.as_str(), info.user_id.as_deref()), ("demo-js", Some("42")));
        assert_eq!((info.level, info.timestamp), (Level::Info, 1_795_314_374_143));
        assert_eq!(
            (error.level, error.message.as_str(), error.timestamp),
            (Level::Error, "disk full on /var", 1_795_314_374_144)
        );
        assert_eq!(error.user_id, None);
    }

    fn request(records: Vec<LogRecord>) -> ExportLogsServiceRequest {
        ExportLogsServiceRequest {
            resource_logs: vec![ResourceLogs {
                scope_logs: vec![ScopeLogs { log_records: records, ..ScopeLogs::default() }],
                ..ResourceLogs::default()
            }],
        }
    }

    fn record(message: &str) -> LogRecord {
        LogRecord {
            body: Some(AnyValue { value: Some(any_value::Value::StringValue(message.to_owned())) }),
            trace_id: vec![0xab; 16],
            span_id: vec![0x01; 8],
            ..LogRecord::default()
        }
    }

    #[test]
    fn records_that_break_the_rules_are_reported_and_the_rest_kept() {
        let long = "x".repeat(10_001);
        let body = request(vec![record("fine"), record(&long), record("")]).encode_to_vec();
        let batch = parse_otlp(Encoding::Protobuf, &body, &Options::new(1_795_314_400_000)).expect("partial");
        assert_eq!(batch.rejected, 3, "no environment anywhere: every record lacks one");
        assert!(batch.error_message.starts_with("record 0: environment: Required"), "{}", batch.error_message);
        let mut staging = Options::new(1_795_314_400_000);
        staging.defaults.environment = Some("staging".into());
        let batch = parse_otlp(Encoding::Protobuf, &request(vec![record("a")]).encode_to_vec(), &staging).expect("one");
        assert_eq!(batch.entries[0].source.as_str(), "unknown_service", "no service.name and no query source");

        let batch = parse_otlp(Encoding::Protobuf, &body, &options()).expect("partial");
        assert_eq!((batch.entries.len(), batch.rejected), (2, 1));
        assert!(batch.error_message.starts_with("record 1: message: "), "{}", batch.error_message);
        let [fine, empty] = &batch.entries[..] else { unreachable!() };
        assert_eq!((fine.message.as_str(), empty.message.as_str()), ("fine", "(empty)"));
        assert_eq!((fine.source.as_str(), fine.level), ("node-app", Level::Info), "the query's source");
        assert_eq!(fine.request_id.as_deref(), Some("abababababababababababababababab"));
        assert_eq!(serde_json::to_value(&fine.data).expect("data")["spanId"], "0101010101010101");
    }

    #[test]
    fn more_than_a_thousand_records_and_malformed_bodies_are_refused() {
        let body = request(vec![record("x"); 1_001]).encode_to_vec();
        let Err(IngestError::Invalid(issues)) = parse_otlp(Encoding::Protobuf, &body, &options()) else { panic!() };
        assert_eq!(issues[0].message, "A request carries at most 1000 logs");
        assert!(parse_otlp(Encoding::Protobuf, &request(vec![record("x"); 1_000]).encode_to_vec(), &options()).is_ok());

        for (encoding, body) in [
            (Encoding::Protobuf, &b"\x0a\xff\xff\xff\x0f"[..]),
            (Encoding::Protobuf, b"\x0a\x02\x12\x05"),
            (Encoding::Json, br#"{"resourceLogs": [{"scopeLogs": [{"logRecords": [{"timeUnixNano": "soon"}]}]}]}"#),
            (Encoding::Json, br#"{"resourceLogs": "#),
        ] {
            let Err(IngestError::Parse(error)) = parse_otlp(encoding, body, &options()) else {
                panic!("{encoding:?} {body:?}")
            };
            assert_eq!(error.format, Format::Otlp);
            assert!(error.to_string().starts_with("OTLP"), "{error}");
        }
    }

    #[test]
    fn a_large_resource_over_many_records_is_held_to_a_budget() {
        use opentelemetry_proto::tonic::common::v1::KeyValue;
        let big = KeyValue {
            key: "blob".into(),
            value: Some(AnyValue { value: Some(any_value::Value::StringValue("x".repeat(600_000))) }),
            ..KeyValue::default()
        };
        let mut export = request(vec![record("one"); 10]);
        export.resource_logs[0].resource =
            Some(opentelemetry_proto::tonic::resource::v1::Resource { attributes: vec![big], ..Default::default() });
        let body = export.encode_to_vec();
        let batch = parse_otlp(Encoding::Protobuf, &body, &options()).expect("partial");
        // Each record's data holds the resource's 600 KB: four fit in four times the body.
        assert_eq!((batch.entries.len(), batch.rejected), (4, 6));
        assert!(batch.error_message.starts_with("record 4: the request's entries pass "), "{}", batch.error_message);
    }

    #[test]
    fn user_id_wins_over_enduser_id_and_either_environment_key_is_read() {
        use opentelemetry_proto::tonic::common::v1::KeyValue;
        let text = |value: &str| Some(AnyValue { value: Some(any_value::Value::StringValue(value.into())) });
        let pair = |key: &str, value: &str| KeyValue { key: key.into(), value: text(value), ..KeyValue::default() };
        let mut one = record("a");
        one.attributes = vec![pair("user.id", "u-1"), pair("enduser.id", "e-1")];
        let mut two = record("b");
        two.attributes = vec![pair("enduser.id", "e-2")];
        let mut export = request(vec![one, two]);
        export.resource_logs[0].resource = Some(opentelemetry_proto::tonic::resource::v1::Resource {
            attributes: vec![pair("deployment.environment", "staging"), pair("deployment.environment.name", "dev")],
            ..Default::default()
        });
        let batch = parse_otlp(Encoding::Protobuf, &export.encode_to_vec(), &options()).expect("two");
        let [a, b] = &batch.entries[..] else { panic!("{batch:?}") };
        assert_eq!((a.user_id.as_deref(), b.user_id.as_deref()), (Some("u-1"), Some("e-2")));
        assert_eq!(a.environment, Environment::Development, "the .name key wins, whatever the order");
        assert!(serde_json::to_value(&a.data).expect("data").get("resource").is_none(), "both keys mapped away");
    }
}
