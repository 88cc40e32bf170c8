//! OBL against real exports of AAC devices and the specs of CoughDrop and aac-processors
//! (`shared/corpus/obl`, whose SOURCES.md says where each file came from).

use std::path::PathBuf;

use serde_json::json;
use sluice_ingest::{Batch, Defaults, Format, Options, parse};

fn ingest(name: &str) -> Batch {
    let path = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../../shared/corpus/obl").join(name);
    let body = std::fs::read(&path).unwrap_or_else(|error| panic!("{}: {error}", path.display()));
    let mut options = Options::new(1_795_348_800_000);
    options.defaults =
        Defaults { source: Some("fallback".into()), environment: Some("production".into()), ..Defaults::default() };
    parse(Format::Obl, &body, &options).unwrap_or_else(|error| panic!("{name}: {error}"))
}

#[test]
fn every_obl_file_ingests_every_event() {
    let dir = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../../shared/corpus/obl");
    let mut files = 0;
    for entry in std::fs::read_dir(&dir).expect("obl corpus") {
        let path = entry.expect("entry").path();
        let name = path.file_name().and_then(|name| name.to_str()).unwrap_or_default().to_owned();
        if !(name.ends_with(".obl") || name.ends_with(".obla")) {
            continue;
        }
        let text = std::fs::read_to_string(&path).expect("read");
        let json = text.find('{').map_or(text.as_str(), |start| &text[start..]);
        let document: serde_json::Value = serde_json::from_str(json).expect("corpus file is JSON after its comment");
        let events: usize = document["sessions"].as_array().map_or(0, |sessions| {
            sessions.iter().map(|session| session["events"].as_array().map_or(0, Vec::len)).sum()
        });
        assert_eq!(ingest(&name).entries.len(), events, "{name}");
        files += 1;
    }
    assert_eq!(files, 9);
}

#[test]
fn the_mapping_table_of_spec() {
    let batch = ingest("aacprocessors_test_sample.obl");
    let messages: Vec<&str> = batch.entries.iter().map(|entry| entry.message.as_str()).collect();
    assert!(messages.iter().any(|m| m.starts_with("Button: ")), "{messages:?}");
    assert!(messages.iter().any(|m| m.starts_with("Action: ")), "{messages:?}");
    assert!(messages.iter().any(|m| m.starts_with("Utterance: ")), "{messages:?}");
    for entry in &batch.entries {
        let data = entry.data.as_ref().expect("data").to_map();
        assert!(data.contains_key("eventType") && data.contains_key("session"), "{data:?}");
        assert_eq!(entry.level.as_str(), "info");
    }

    let notice = ingest("aacprocessors_generated_with_notice.obl");
    let first = &notice.entries[0];
    assert_eq!(
        (first.message.as_str(), first.user_id.as_deref(), first.source.as_str()),
        ("Button: I", Some("demo-user"), "aac-processors")
    );
    let data = first.data.as_ref().expect("data").to_map();
    assert_eq!((&data["board_id"], &data["button_id"], &data["spoken"]), (&json!("home"), &json!("b1"), &json!(true)));
    assert_eq!((&data["eventId"], &data["locale"]), (&json!("e1"), &json!("en")));
    assert_eq!(
        data["session"],
        json!({"id": "s1", "type": "log", "started": "2024-03-01T09:00:00.000Z", "ended": "2024-03-01T09:02:00.000Z"})
    );
    assert_eq!(first.timestamp, 1_709_283_605_000, "2024-03-01T09:00:05Z");
}

#[test]
fn coughdrop_quirks_are_kept_not_rejected() {
    // No root user_id or source, events without id or timestamp: the session's start, the query source.
    let minimal = ingest("coughdrop_import_spec_minimal.obl");
    assert_eq!(minimal.entries.len(), 3);
    assert!(minimal.entries.iter().all(|entry| entry.timestamp == 1_534_278_145_499 && entry.source == "fallback"));
    assert_eq!(minimal.entries[0].message, "Button: hat");

    // A session type the format does not know is kept.
    let bacon = ingest("coughdrop_import_spec_bad_session_type.obl");
    assert!(
        bacon
            .entries
            .iter()
            .all(|entry| entry.data.as_ref().is_some_and(|data| data.to_map()["session"]["type"] == json!("bacon")))
    );

    // Note sessions whose events have no type become notes.
    let export = ingest("coughdrop_export_spec.obl");
    assert!(export.entries.iter().any(|entry| entry.message.starts_with("Note: ")), "a typeless note event");
}

#[test]
fn unreadable_bodies_name_the_problem() {
    let options = Options::new(1_795_348_800_000);
    let error = parse(Format::Obl, b"/* NOTICE\n spans lines */\n{\"sessions\": [", &options).expect_err("truncated");
    assert_eq!(error.to_string(), "OBL line 3: EOF while parsing a list at column 14");
    let error = parse(Format::Obl, br#"{"format":"open-board-log-0.1"}"#, &options).expect_err("no sessions");
    assert_eq!(error.to_string(), "OBL: expected a `sessions` array");
}
