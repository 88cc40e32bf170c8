//! CSV against loghub's own structured exports (`shared/corpus/loghub/csv`: CRLF, RFC 4180
//! quoting, embedded commas) and against each cell rule of docs/API.md (CSV).

use std::path::PathBuf;

use serde_json::json;
use sluice_ingest::{Defaults, Format, IngestError, Options, parse};

fn options() -> Options {
    let mut options = Options::new(1_795_348_800_000);
    options.defaults =
        Defaults { source: Some("loghub".into()), environment: Some("production".into()), ..Defaults::default() };
    options.max_entries = usize::MAX;
    options
}

#[test]
fn every_loghub_csv_ingests_one_entry_per_row() {
    let dir = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../../shared/corpus/loghub/csv");
    let mut count = 0;
    for entry in std::fs::read_dir(&dir).expect("loghub csv corpus") {
        let path = entry.expect("entry").path();
        let body = std::fs::read(&path).expect("read");
        let batch = parse(Format::Csv, &body, &options()).unwrap_or_else(|error| match error {
            IngestError::Invalid(issues) => {
                panic!("{}: {} issues, first {:?}", path.display(), issues.len(), issues.first())
            }
            other => panic!("{}: {other}", path.display()),
        });
        assert_eq!(batch.entries.len(), 2000, "{}", path.display());
        let first = &batch.entries[0];
        assert!(!first.message.is_empty());
        assert!(first.data.as_ref().is_some_and(|data| data.get("EventId").is_some()), "other columns go into data");
        count += 1;
    }
    assert_eq!(count, 6);
}

#[test]
fn loghub_level_columns_are_read_leniently_and_kept() {
    let dir = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../../shared/corpus/loghub/csv");
    let zookeeper = std::fs::read(dir.join("Zookeeper_2k.log_structured.csv")).expect("read");
    let batch = parse(Format::Csv, &zookeeper, &options()).expect("parses");
    let first = &batch.entries[0];
    assert_eq!((first.level.as_str(), first.message.as_str()), ("info", "Notification time out: 3200"));
    assert_eq!(first.data.as_ref().and_then(|data| data.get("Time")), Some(json!("17:41:44,747")), "quoted comma kept");
    // Linux's Level column holds the host name (a loghub quirk): no level, so info, and kept.
    let linux = std::fs::read(dir.join("Linux_2k.log_structured.csv")).expect("read");
    let batch = parse(Format::Csv, &linux, &options()).expect("parses");
    assert_eq!(batch.entries[0].level.as_str(), "info");
    assert_eq!(batch.entries[0].data.as_ref().and_then(|data| data.get("Level")), Some(json!("combo")));
}

#[test]
fn cells_follow_the_decided_encodings() {
    let body = "level\tmessage\tdata\ttags\ttimestamp\tstepIndex\tuserId\tzone\n\
                warn\tfirst\t{\"k\":[1,2]}\t[\"a\",\"b\"]\t2024-03-01T12:00:00Z\t3\t\teu-1\n\
                error\tsecond\t\ta; b ;c\t1709294400123\t\tu7\t\n";
    let batch = parse(Format::Csv, body.as_bytes(), &options()).expect("tab-separated parses");
    let [first, second] = &batch.entries[..] else { panic!("two rows") };
    assert_eq!(
        first.data.as_ref().map(|d| serde_json::Value::Object(d.to_map())),
        Some(json!({"k": [1, 2], "zone": "eu-1"}))
    );
    assert_eq!(first.tags, Some(vec!["a".to_owned(), "b".to_owned()]));
    assert_eq!((first.timestamp, first.step_index, first.user_id.clone()), (1_709_294_400_000, Some(3), None));
    assert_eq!(second.tags, Some(vec!["a".to_owned(), "b".to_owned(), "c".to_owned()]));
    assert_eq!(
        (second.timestamp, second.user_id.as_deref(), second.data.clone()),
        (1_709_294_400_123, Some("u7"), None)
    );
}

#[test]
fn bad_rows_are_named() {
    let error = parse(Format::Csv, b"level,message\ninfo,ok\ninfo,too,many\n", &options()).expect_err("unequal row");
    assert_eq!(error.to_string(), "CSV line 3: expected 2 fields as in the header, found 3");
    let error =
        parse(Format::Csv, b"level,message\nINFO,exact column stays strict\n", &options()).expect_err("strict level");
    let IngestError::Invalid(issues) = error else { panic!("validation error expected") };
    assert_eq!(serde_json::to_value(&issues).expect("json")[0]["path"], json!([0, "level"]));
    let error = parse(Format::Csv, b"level,message,data\ninfo,m,not json\n", &options()).expect_err("bad data cell");
    let IngestError::Invalid(issues) = error else { panic!("validation error expected") };
    assert_eq!(issues[0].message, "Expected object, received string");
}

/// docs/API.md (CSV): a `timestamp` cell of ISO shape whose date or time cannot exist is a
/// parse error naming its line, never another moment; a cell that is no date at all stays the
/// entry's `Invalid timestamp` issue.
#[test]
fn impossible_timestamp_cells_are_parse_errors_naming_the_line() {
    for cell in ["2024-02-30T12:00:00Z", "2024-03-01T25:00:00Z", "2024-03-01 12:61:00", "\"2023-02-29T00:00:00+01:00\""]
    {
        let body = format!("level,message,timestamp\ninfo,fine,2024-03-01T12:00:00Z\ninfo,bad,{cell}\n");
        let error = parse(Format::Csv, body.as_bytes(), &options()).expect_err(cell);
        assert_eq!(
            error.to_string(),
            "CSV line 3: expected a date and time that exist in the timestamp cell",
            "{cell}"
        );
    }
    let error = parse(Format::Csv, b"level,message,timestamp\ninfo,m,yesterday\n", &options()).expect_err("no date");
    let IngestError::Invalid(issues) = error else { panic!("validation error expected") };
    assert_eq!(serde_json::to_value(&issues).expect("json")[0]["path"], json!([0, "timestamp"]));
}
