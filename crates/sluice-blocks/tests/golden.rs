//! The format pinned: the blocks of `tests/golden/` were written by earlier builds and must
//! read back as the logs stored beside them, whatever this build writes; and this build
//! writes exactly the bytes of its own version's files. A change to the format is a new
//! version: new files (`SLUICE_BLESS=1 cargo test -p sluice-blocks --test golden` writes them
//! for [`FORMAT_VERSION`]), and the old ones kept.

use std::path::PathBuf;

use sluice_blocks::{Block, FORMAT_VERSION, encode};
use sluice_model::Log;

mod common;

fn folder() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("tests/golden")
}

/// Two granules of logs of every shape, and one with every field set.
fn logs() -> Vec<Log> {
    let mut logs = common::random_logs(42, sluice_blocks::GRANULE_ROWS + 6);
    let full = &mut logs[3];
    full.entry.data = Some(sluice_model::JsonObject::from_text(r#"{"k":[1,"ü",null]}"#.into()).expect("an object"));
    full.entry.tags = Some(vec!["a".into(), "b c".into()]);
    full.entry.flow_id = Some("flow-7".into());
    full.entry.step_index = Some(4);
    logs
}

/// A golden block of `tests/golden` as stored, with the logs it holds.
struct Golden {
    stem: String,
    head: Vec<u8>,
    index: Vec<u8>,
    body: Vec<u8>,
    logs: Vec<Log>,
}

impl Golden {
    fn block(&self) -> Block<'_> {
        Block::open(&self.head, &self.index, &self.body).expect("the golden block opens")
    }
}

/// Every golden block, one a format version.
fn golden_blocks() -> Vec<Golden> {
    let mut blocks = Vec::new();
    for entry in std::fs::read_dir(folder()).expect("tests/golden") {
        let path = entry.expect("an entry").path();
        let Some(stem) = path.file_name().and_then(|name| name.to_str()).and_then(|name| name.strip_suffix(".head"))
        else {
            continue;
        };
        let read = |part: &str| std::fs::read(folder().join(format!("{stem}.{part}"))).expect("the block's parts");
        let logs = serde_json::from_slice(&read("logs.json")).expect("the logs");
        blocks.push(Golden {
            stem: stem.to_owned(),
            head: read("head"),
            index: read("index"),
            body: read("body"),
            logs,
        });
    }
    blocks
}

#[test]
fn this_build_writes_its_versions_golden_bytes() {
    let logs = logs();
    let encoded = encode(&logs).expect("a block");
    let name = |part: &str| folder().join(format!("v{FORMAT_VERSION}.{part}"));
    if std::env::var_os("SLUICE_BLESS").is_some() {
        std::fs::create_dir_all(folder()).expect("the folder");
        std::fs::write(name("head"), &encoded.head).expect("written");
        std::fs::write(name("index"), &encoded.index).expect("written");
        std::fs::write(name("body"), &encoded.body).expect("written");
        let mut sorted = logs.clone();
        sorted.sort_by_key(|log| log.id);
        let json = serde_json::to_string_pretty(&sorted).expect("JSON");
        std::fs::write(name("logs.json"), json + "\n").expect("written");
    }
    let read =
        |part: &str| std::fs::read(name(part)).unwrap_or_else(|error| panic!("{}: {error}", name(part).display()));
    assert!(encoded.head == read("head"), "the head's bytes changed: a new format version?");
    assert!(encoded.index == read("index"), "the index's bytes changed: a new format version?");
    assert!(encoded.body == read("body"), "the body's bytes changed: a new format version?");
}

#[test]
fn every_golden_version_reads_back_as_its_logs() {
    let mut versions = 0;
    for golden in golden_blocks() {
        let (stem, expected) = (&golden.stem, &golden.logs);
        let block = golden.block();
        assert_eq!(&block.all_logs().expect("its logs"), expected, "{stem}");
        for log in expected.iter().step_by(97) {
            assert_eq!(block.get(log.id).expect("a read").as_ref(), Some(log), "{stem}");
        }
        versions += 1;
    }
    assert!(versions >= usize::from(FORMAT_VERSION), "a golden block for every version");
}

/// A block of an earlier version is searched by the keys its index holds: a needle with keys
/// that version did not have (number pairs, version 2) still finds its logs there.
#[test]
fn every_golden_version_is_searched_by_the_keys_it_holds() {
    for golden in golden_blocks() {
        let (stem, logs) = (&golden.stem, &golden.logs);
        let block = golden.block();
        let mut searched = 0;
        for log in logs {
            // The dotted numbers of an address, cut short at both ends.
            let Some(at) = log.entry.message.find("from 10.") else { continue };
            let address = &log.entry.message[at + 6..];
            let needle = &address[1..address.len() - 1];
            let search = sluice_blocks::Search {
                query: sluice_query::Query::parse(needle).expect("a query"),
                fields: vec![sluice_query::SearchField::Message],
            };
            let filter = sluice_blocks::LogFilter::default();
            let hits = block.hits(&sluice_blocks::Matcher::new(&filter, Some(&search))).expect("a read");
            assert!(hits.iter().any(|hit| hit.id == log.id), "{stem}: {needle} in {}", log.entry.message);
            searched += 1;
        }
        assert!(searched > 10, "{stem}: {searched} addresses");
    }
}
