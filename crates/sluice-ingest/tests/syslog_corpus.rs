//! The syslog grammar against real inputs nobody here wrote: RFC examples, other parsers'
//! test vectors, and captures from logger and syslog-ng (`shared/corpus/syslog`, whose
//! SOURCES.md says where each line came from).

use std::path::PathBuf;

use sluice_ingest::syslog::{Protocol, parse_line};

/// 2026-11-22T12:00:00Z: "now" for RFC 3164's missing year.
const NOW: i64 = 1_795_348_800_000;

fn corpus(name: &str) -> String {
    let path = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../../shared/corpus/syslog").join(name);
    std::fs::read_to_string(&path).unwrap_or_else(|error| panic!("{}: {error}", path.display()))
}

fn lines(name: &str) -> Vec<String> {
    corpus(name).lines().filter(|line| !line.trim().is_empty()).map(str::to_owned).collect()
}

#[test]
fn every_rfc5424_line_parses_as_rfc5424() {
    for (index, line) in lines("rfc5424.txt").iter().enumerate() {
        let message = parse_line(line, NOW).unwrap_or_else(|error| panic!("line {}: {error}: {line}", index + 1));
        assert_eq!(message.protocol, Protocol::Rfc5424, "line {}: {line}", index + 1);
        assert!(message.severity.is_some(), "line {}", index + 1);
    }
}

#[test]
fn every_rfc3164_line_parses() {
    for (index, line) in lines("rfc3164.txt").iter().enumerate() {
        let message = parse_line(line, NOW).unwrap_or_else(|error| panic!("line {}: {error}: {line}", index + 1));
        assert!(message.severity.is_some(), "line {}: {line}", index + 1);
    }
}

#[test]
fn rfc5424_examples_map_every_part() {
    let all = lines("rfc5424.txt");
    let first = parse_line(&all[0], NOW).expect("example 1");
    assert_eq!((first.facility, first.severity), (Some(4), Some(2)));
    assert_eq!(first.timestamp, Some(1_065_910_455_003));
    assert_eq!(
        (first.hostname, first.app_name, first.proc_id, first.msg_id),
        (Some("mymachine.example.com"), Some("su"), None, Some("ID47"))
    );
    assert_eq!(first.message, "BOM'su root' failed for lonvick on /dev/pts/8");

    let second = parse_line(&all[1], NOW).expect("example 2");
    assert_eq!(second.timestamp, Some(1_061_727_255_000), "2003-08-24T05:14:15.000003-07:00");
    assert_eq!((second.facility, second.severity, second.proc_id), (Some(20), Some(5), Some("8710")));

    let fourth = parse_line(&all[3], NOW).expect("example 4");
    let ids: Vec<&str> = fourth.structured_data.iter().map(|(id, _)| *id).collect();
    assert_eq!(ids, vec!["exampleSDID@32473", "examplePriority@32473"]);
    assert_eq!(fourth.structured_data[0].1[1], ("eventSource", "Application".into()));
    assert_eq!(fourth.message, "");
}

#[test]
fn escaped_structured_data_values_are_decoded() {
    let line = r#"<29>1 2016-02-21T04:32:57+00:00 web1 someservice - - [origin x-service="svc \"q\" \\ \]"] msg"#;
    let message = parse_line(line, NOW).expect("parses");
    assert_eq!(message.structured_data, vec![("origin", vec![("x-service", r#"svc "q" \ ]"#.into())])]);
    assert_eq!(message.message, "msg");
}

#[test]
fn a_real_bom_is_stripped() {
    for line in lines("rfc5424_realbom.txt") {
        let message = parse_line(&line, NOW).expect("parses");
        assert!(!message.message.starts_with('\u{feff}'), "{:?}", message.message);
        assert!(!message.message.is_empty());
    }
}

#[test]
fn rfc3164_year_is_guessed_from_now() {
    let message = parse_line("<34>Oct 11 22:14:15 mymachine su: failed", NOW).expect("parses");
    assert_eq!(message.timestamp, Some(1_791_756_855_000), "2026-10-11T22:14:15Z");
    // More than a day ahead of now: last year.
    let message = parse_line("<34>Dec 24 10:00:00 host app: later", NOW).expect("parses");
    assert_eq!(message.timestamp, Some(1_766_570_400_000), "2025-12-24T10:00:00Z");
    assert_eq!((message.hostname, message.app_name, message.message), (Some("host"), Some("app"), "later"));
}

/// Lines where we read the header differently from rsyslog, on purpose.
const KNOWN_DIFFERENCES: [&str; 1] = [
    // A year after the time: rsyslog takes `2009` for the host and keeps `netips-warden2-p` in
    // the message; we read `netips-warden2-p` as the TAG, the same rule that gives rsyslog's
    // own `tag` for `<167>AUG 10 22:18:24 host tag This msg ...`.
    "<6>AUG 10 22:18:24 2009  netips-warden2-p [audit] user=[*SMS] src=192.168.11.11 iface=5 access=9 Update State Reset",
];

#[test]
fn rfc3164_parts_agree_with_rsyslog() {
    let mut disagreements = Vec::new();
    for row in corpus("rsyslog_parse1_expected.tsv").lines().filter(|row| !row.starts_with('#')) {
        let Some((input, expected)) = row.split_once('\t') else { continue };
        let fields: Vec<&str> = expected.splitn(8, ',').collect();
        let [pri, _, _, _, hostname, program, _, msg] = fields[..] else { continue };
        // This row's program name holds a quote and commas, so rsyslog's comma-separated output
        // cannot be split back into its fields.
        if program.contains('"') {
            continue;
        }
        let message = parse_line(input, NOW).expect("every rsyslog input parses");
        if KNOWN_DIFFERENCES.contains(&input) {
            continue;
        }
        // A line without PRI is user.notice (13), as RFC 3164 section 4.3.3 says a relay assumes.
        let ours_pri = message.facility.zip(message.severity).map_or(13, |(f, s)| f * 8 + s);
        if ours_pri.to_string() != pri {
            disagreements.push(format!("PRI {pri} vs {ours_pri:?}: {input}"));
        }
        if !hostname.contains("RS_HOSTNAME") && message.hostname.unwrap_or("") != hostname {
            disagreements.push(format!("hostname {hostname:?} vs {:?}: {input}", message.hostname));
        }
        if message.app_name.unwrap_or("") != program {
            disagreements.push(format!("program {program:?} vs {:?}: {input}", message.app_name));
        }
        if message.message.trim() != msg.trim() {
            disagreements.push(format!("msg {msg:?} vs {:?}: {input}", message.message));
        }
    }
    assert!(disagreements.is_empty(), "{} disagreements:\n{}", disagreements.len(), disagreements.join("\n"));
}

#[test]
fn invalid_rfc5424_lines_fail_or_fall_back_as_documented() {
    let mut accepted = Vec::new();
    for line in lines("rfc5424_invalid.txt") {
        match parse_line(&line, NOW) {
            Err(_) => {}
            Ok(message) if message.protocol == Protocol::Rfc3164 => {}
            Ok(message) if message.malformed_structured_data => {}
            // RFC 5424 section 6.3.3: a backslash before any other character is an ordinary
            // character. go-syslog refuses `\n`; we follow the RFC.
            Ok(_) if line.contains(r#"escape="\n""#) => {}
            Ok(message) => accepted.push(format!("{line:?} -> {message:?}")),
        }
    }
    assert!(accepted.is_empty(), "accepted as valid RFC 5424:\n{}", accepted.join("\n"));
}

#[test]
fn edge_cases_never_panic_and_keep_text() {
    for line in lines("edge_cases.txt") {
        let message = parse_line(&line, NOW).expect("unframed lines are read, not refused");
        assert!(!message.message.is_empty() || message.hostname.is_some(), "{line}");
    }
}
