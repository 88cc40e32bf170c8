//! The text grammar against the loghub samples of 16 real systems (`shared/corpus/loghub`):
//! every line ingests as one entry, and where a system writes a level, it is found.

use std::path::PathBuf;

use sluice_ingest::text::parse_line;
use sluice_ingest::{Defaults, Format, Options, parse};

fn loghub(name: &str) -> String {
    let path = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../../shared/corpus/loghub").join(name);
    std::fs::read_to_string(&path).unwrap_or_else(|error| panic!("{}: {error}", path.display()))
}

#[test]
fn every_loghub_sample_ingests_one_entry_per_line() {
    let dir = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../../shared/corpus/loghub");
    let mut files: Vec<PathBuf> = std::fs::read_dir(&dir)
        .expect("loghub corpus")
        .filter_map(|entry| entry.ok().map(|entry| entry.path()))
        .filter(|path| path.to_string_lossy().ends_with("_2k.log"))
        .collect();
    files.sort();
    assert_eq!(files.len(), 16, "the 16 loghub systems");
    let mut options = Options::new(1_795_348_800_000);
    options.defaults =
        Defaults { source: Some("loghub".into()), environment: Some("production".into()), ..Defaults::default() };
    options.max_entries = usize::MAX;
    for file in files {
        let body = std::fs::read(&file).expect("read");
        let lines = String::from_utf8_lossy(&body).lines().filter(|line| !line.trim().is_empty()).count();
        let batch =
            parse(Format::Text, &body, &options).unwrap_or_else(|error| panic!("{}: {error:?}", file.display()));
        assert_eq!(batch.entries.len(), lines, "{}", file.display());
        assert!(batch.entries.iter().all(|entry| !entry.message.is_empty()));
    }
}

/// The level as each system writes it, read by position, next to what the grammar found.
#[test]
fn levels_are_found_where_each_system_writes_them() {
    // (file, index of the word that holds the level)
    let systems = [
        ("Hadoop_2k.log", 2),
        ("Zookeeper_2k.log", 3),
        ("Spark_2k.log", 2),
        ("HDFS_2k.log", 3),
        ("OpenStack_2k.log", 4),
        ("Windows_2k.log", 2),
        ("Apache_2k.log", 5),
        ("BGL_2k.log", 8),
    ];
    for (file, position) in systems {
        for (number, line) in loghub(file).lines().enumerate().filter(|(_, line)| !line.trim().is_empty()) {
            let word = line.split_whitespace().nth(position).unwrap_or_default();
            let word = word.trim_matches(|c| c == '[' || c == ']' || c == ',').to_ascii_lowercase();
            let expected = match word.as_str() {
                "error" | "fatal" | "severe" | "failure" => Some("error"),
                "warn" | "warning" => Some("warn"),
                "info" | "notice" => Some("info"),
                "debug" => Some("debug"),
                _ => None,
            };
            let found = parse_line(line).expect("real log lines have real dates");
            if expected.is_some() {
                assert_eq!(found.level.map(|level| level.as_str()), expected, "{file} line {}: {line}", number + 1);
                // The keyword left the message at the place it stood.
                let words: Vec<&str> = line.split_whitespace().collect();
                let stood = format!("{} {}", words[position - 1], words[position]);
                assert!(!found.message.contains(&stood), "{file} line {}: {line} -> {}", number + 1, found.message);
            }
        }
    }
}

#[test]
fn timestamps_of_real_logs_are_read_and_removed() {
    let cases = [
        (
            "2015-10-18 18:01:47,978 INFO [main] org.apache.hadoop.mapreduce.v2.app.MRAppMaster: Created",
            1_445_191_307_978,
            "[main] org.apache.hadoop.mapreduce.v2.app.MRAppMaster: Created",
        ),
        (
            "2016-09-28 04:30:30, Info                  CBS    Loaded Servicing Stack",
            1_475_037_030_000,
            "CBS    Loaded Servicing Stack",
        ),
        ("2024-03-01T12:00:00.250+01:00 [WARN] slow disk", 1_709_290_800_250, "slow disk"),
        ("03/01/2024 12:00:00 DEBUG: cache warm", 1_709_294_400_000, "cache warm"),
        ("[2024-03-01 12:00:00] error: failed to bind", 1_709_294_400_000, "failed to bind"),
    ];
    for (line, timestamp, message) in cases {
        let found = parse_line(line).expect("real log lines have real dates");
        assert_eq!((found.timestamp, found.message.as_str()), (Some(timestamp), message), "{line}");
    }
}

#[test]
fn lines_without_keywords_take_the_default_or_info() {
    let found = parse_line("Jun 14 15:16:01 combo sshd(pam_unix)[19939]: authentication failure; user unknown")
        .expect("no timestamp of the grammar's shape");
    assert_eq!((found.level, found.timestamp), (None, None));
    let found = parse_line("connection error while reading").expect("no timestamp");
    assert_eq!(found.level, None, "a lower-case word in a sentence is not a level");
    let mut options = Options::new(1_795_348_800_000);
    options.defaults = Defaults {
        source: Some("s".into()),
        environment: Some("staging".into()),
        level: Some("warn".into()),
        ..Defaults::default()
    };
    let batch = parse(Format::Text, b"no keyword here\n2024-01-01 00:00:00 INFO has one\n", &options).expect("parses");
    assert_eq!(batch.entries[0].level.as_str(), "warn");
    assert_eq!(batch.entries[0].timestamp, 1_795_348_800_000, "no timestamp: receive time");
    assert_eq!(batch.entries[1].level.as_str(), "info");
}
