//! Issue 25 ("Bounded under any input and any load"), item 7: bodies made to hurt, sent to
//! `POST /v1/logs` over real HTTP in every format: huge arrays, deep nesting, one line at and
//! past the 5 MiB cap, millions of tiny lines, NUL bytes, invalid UTF-8 at every kind of
//! position, compression bombs, timestamps at each edge of the accepted range and dates that
//! cannot exist. Each one is refused with the status and envelope docs/API.md gives (400
//! `Validation error` with `issues`, 400 `code: "PARSE_ERROR"`, 413 `Payload too large`), in an
//! answer of at most 64 KiB and 100 issues that arrives within a second, and leaves nothing
//! stored; the accepted side of each timestamp edge is stored, at that timestamp.
//!
//! One table of named cases, each in a workspace of its own (so "nothing stored" is an empty
//! list); every failure is collected with its case's name, so one run reports all of them.

use std::io::Write;
use std::time::Duration;

use awc::http::StatusCode;
use serde_json::{Value, json};
use sluice_model::Scopes;
use sluice_store::{LogFilter, Page};

use crate::common::{TestServer, new_key, new_workspace, start};

/// The body cap, counted after decompression (docs/API.md, Errors).
const CAP: usize = 5 * 1024 * 1024;
/// The largest error answer docs/API.md allows.
const MAX_ANSWER_BYTES: usize = 64 * 1024;
/// The most issues one answer lists.
const MAX_ISSUES: usize = 100;
/// How long any of these answers may take (issue 25).
const MAX_ANSWER_TIME: Duration = Duration::from_secs(1);

/// The server's clock for the cases: 2026-11-22T00:00:00Z.
const CLOCK: i64 = 1_795_305_600_000;
/// The newest timestamp accepted at [`CLOCK`]: 2026-11-23T00:00:00Z.
const LATEST: i64 = CLOCK + 86_400_000;
/// The oldest timestamp accepted: 2000-01-01T00:00:00Z.
const EARLIEST: i64 = 946_684_800_000;

const TOO_MANY: &str = "[] A request carries at most 100 logs";
const NONE: &str = "[] Array must contain at least 1 element(s)";
const MESSAGE_TOO_LONG: &str = r#"[0,"message"] String must contain at most 10000 character(s)"#;
const OUT_OF_RANGE: &str = r#"[0,"timestamp"] Timestamp out of range"#;
const NOT_A_TIME: &str = r#"[0,"timestamp"] Invalid timestamp: expected Unix milliseconds or an ISO 8601 date-time"#;

/// What a case must be answered with.
#[derive(Debug)]
enum Expect {
    /// 400 `Validation error` whose first issue is this `path message` line.
    Invalid(&'static str),
    /// 400 `Validation error` listing exactly this many issues.
    Issues(usize),
    /// 400 with `code: "PARSE_ERROR"` whose `error` starts with this text.
    Parse(String),
    /// 400, either `Validation error` with `issues` or `code: "PARSE_ERROR"`: refused, where
    /// docs/API.md does not yet say which of the two.
    Refused,
    /// 413 `{"error":"Payload too large"}`.
    TooLarge,
    /// 200, and one log stored, at this timestamp (the accepted side of an edge).
    StoredAt(i64),
}

/// One body sent to `POST /v1/logs`.
struct Case {
    name: String,
    /// The query string after `?`.
    query: String,
    /// Headers besides the key: `Content-Type`, `Content-Encoding`.
    headers: Vec<(&'static str, String)>,
    /// Built when the case runs, so the 5 MiB bodies are not all held at once.
    body: Box<dyn Fn() -> Vec<u8>>,
    /// The server's clock while it runs.
    now: i64,
    expect: Expect,
}

/// The formats, their `Content-Type`, and query defaults that make their entries complete.
const FORMATS: [(&str, &str); 6] = [
    ("json", "application/json"),
    ("jsonl", "application/x-ndjson"),
    ("syslog", "application/x-syslog"),
    ("text", "text/plain"),
    ("csv", "text/csv"),
    ("obl", "application/x-obl"),
];

fn content_type(format: &str) -> String {
    FORMATS.iter().find(|(name, _)| *name == format).map_or("application/octet-stream", |(_, kind)| kind).to_owned()
}

/// A case in `format`, named by `format` and `what`, sent with `?format=` and the format's
/// `Content-Type`, with `source` and `environment` defaults.
fn case(format: &str, what: &str, body: impl Fn() -> Vec<u8> + 'static, expect: Expect) -> Case {
    Case {
        name: format!("{format}: {what}"),
        query: format!("format={format}&source=adversary&environment=production"),
        headers: vec![("Content-Type", content_type(format))],
        body: Box::new(body),
        now: CLOCK,
        expect,
    }
}

impl Case {
    fn at(mut self, now: i64) -> Self {
        self.now = now;
        self
    }

    fn query(mut self, query: &str) -> Self {
        query.clone_into(&mut self.query);
        self
    }

    fn header(mut self, name: &'static str, value: &str) -> Self {
        self.headers.retain(|(other, _)| *other != name);
        self.headers.push((name, value.to_owned()));
        self
    }

    /// Sent with neither `?format=` nor `Content-Type`: the sniffer decides.
    fn sniffed(mut self) -> Self {
        self.query = "source=adversary&environment=production".to_owned();
        self.headers.retain(|(name, _)| *name != "Content-Type");
        self.name.push_str(" (sniffed)");
        self
    }
}

fn parse(prefix: &str) -> Expect {
    Expect::Parse(prefix.to_owned())
}

fn bytes(text: &str) -> impl Fn() -> Vec<u8> + 'static {
    let text = text.as_bytes().to_vec();
    move || text.clone()
}

/// `unit` repeated as often as fits between `head` and `tail` in `total` bytes.
fn filled(head: &str, unit: &str, tail: &str, total: usize) -> impl Fn() -> Vec<u8> + 'static {
    let (head, unit, tail) = (head.to_owned(), unit.to_owned(), tail.to_owned());
    move || {
        let count = (total - head.len() - tail.len()) / unit.len();
        let mut body = Vec::with_capacity(total);
        body.extend_from_slice(head.as_bytes());
        for _ in 0..count {
            body.extend_from_slice(unit.as_bytes());
        }
        body.extend_from_slice(tail.as_bytes());
        body
    }
}

/// `head`, then `x` up to exactly `total` bytes with `tail`: one very long value or line.
fn long(head: &str, tail: &str, total: usize) -> impl Fn() -> Vec<u8> + 'static {
    let (head, tail) = (head.to_owned(), tail.to_owned());
    move || {
        let mut body = head.clone().into_bytes();
        body.resize(total - tail.len(), b'x');
        body.extend_from_slice(tail.as_bytes());
        body
    }
}

/// `text` with `insert` put at byte `at` (`usize::MAX`: at the end).
fn spliced(text: &str, at: usize, insert: &[u8]) -> impl Fn() -> Vec<u8> + 'static {
    let mut body = text.as_bytes().to_vec();
    let at = at.min(body.len());
    body.splice(at..at, insert.iter().copied());
    move || body.clone()
}

/// The end of a body, for [`spliced`].
const END: usize = usize::MAX;

/// A complete JSON entry; `extra` goes inside the object (`,"timestamp":1`).
fn entry(extra: &str) -> String {
    format!(r#"{{"level":"info","message":"m","source":"s","environment":"production"{extra}}}"#)
}

/// An OBL document of one session, up to the opening of its `events` array.
const OBL_HEAD: &str = concat!(
    r#"{"format":"open-board-log-0.1","#,
    r#""sessions":[{"id":"s1","type":"log","started":"2024-03-01T09:00:00Z","events":["#
);

/// An OBL document of one session holding `events` (already JSON).
fn obl(events: &str) -> String {
    format!("{OBL_HEAD}{events}]}}]}}")
}

/// An OBL note event at `timestamp` (JSON).
fn obl_note(timestamp: &str) -> String {
    format!(r#"{{"id":"e1","type":"note","text":"hi","timestamp":{timestamp}}}"#)
}

/// A `Content-Encoding`'s encoder.
type Encoder = fn(&[u8]) -> Vec<u8>;

fn gzip(data: &[u8]) -> Vec<u8> {
    let mut encoder = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::best());
    encoder.write_all(data).expect("gzip");
    encoder.finish().expect("gzip")
}

fn deflate(data: &[u8]) -> Vec<u8> {
    let mut encoder = flate2::write::ZlibEncoder::new(Vec::new(), flate2::Compression::best());
    encoder.write_all(data).expect("deflate");
    encoder.finish().expect("deflate")
}

fn zstd(data: &[u8]) -> Vec<u8> {
    zstd::encode_all(data, 19).expect("zstd")
}

/// Huge arrays, deep nesting, one very long line, many tiny lines, NUL bytes.
fn shapes() -> Vec<Case> {
    let deep_arrays = "[".repeat(100_000);
    let deep_objects = r#"{"a":"#.repeat(100_000);
    // A complete JSON value 100,000 objects deep.
    let nested = format!("{deep_objects}1{}", "}".repeat(100_000));
    let entry_head = r#"[{"level":"info","source":"s","environment":"production","message":""#;
    vec![
        // About 1.7 million empty entries: parsing stops at the 101st.
        case("json", "a 5 MiB array of {}", filled("[", "{},", "{}]", CAP), Expect::Invalid(TOO_MANY)),
        case("json", "a 5 MiB array of {}", filled("[", "{},", "{}]", CAP), Expect::Invalid(TOO_MANY)).sniffed(),
        case(
            "json",
            r#"{"logs": a 5 MiB array of {}}"#,
            filled(r#"{"logs":["#, "{},", "{}]}", CAP),
            Expect::Invalid(TOO_MANY),
        ),
        case("jsonl", "5 MiB of {} lines", filled("", "{}\n", "", CAP), Expect::Invalid(TOO_MANY)),
        case("jsonl", "5 MiB of {} lines", filled("", "{}\n", "", CAP), Expect::Invalid(TOO_MANY)).sniffed(),
        case(
            "obl",
            "a session of 5 MiB of {} events",
            filled(OBL_HEAD, "{},", "{}]}]}", CAP),
            Expect::Invalid(TOO_MANY),
        ),
        // 100,000 levels, unclosed and closed.
        case("json", "100k [", bytes(&deep_arrays), parse("JSON line 1: EOF while parsing a list at column 100000")),
        case("json", "100k [", bytes(&deep_arrays), Expect::Invalid(MESSAGE_TOO_LONG)).sniffed(),
        case(
            "json",
            r#"100k {"a":"#,
            bytes(&deep_objects),
            parse("JSON line 1: EOF while parsing a value at column 500000"),
        ),
        case(
            "json",
            "data nested 100k levels, closed",
            bytes(&format!("[{}]", entry(&format!(",\"data\":{nested}")))),
            Expect::Refused,
        ),
        case(
            "jsonl",
            "data nested 100k levels, closed",
            bytes(&entry(&format!(",\"data\":{nested}"))),
            Expect::Refused,
        ),
        case(
            "obl",
            "an event field nested 100k levels, closed",
            bytes(&obl(&format!(r#"{{"type":"note","text":"hi","deep":{nested}}}"#))),
            Expect::Refused,
        ),
        case(
            "csv",
            "a data cell nested 100k levels, closed",
            bytes(&format!("level,message,data\ninfo,m,\"{}\"\n", nested.replace('"', "\"\""))),
            Expect::Invalid(r#"[0,"data"] Expected object, received string"#),
        ),
        case("jsonl", "100k [", bytes(&deep_arrays), parse("JSONL line 1: ")),
        case("jsonl", r#"100k {"a":"#, bytes(&deep_objects), parse("JSONL line 1: ")),
        case("obl", "an event nested 100k levels", bytes(&obl(&format!("{deep_objects}1"))), parse("OBL")),
        case(
            "csv",
            "a data cell of 100k [",
            bytes(&format!("level,message,data\ninfo,m,{deep_arrays}\n")),
            Expect::Invalid(r#"[0,"data"] Expected object, received string"#),
        ),
        // Syslog and text have no nesting: 100,000 brackets are a message too long.
        case(
            "syslog",
            "100k [ as structured data",
            bytes(&format!("<14>1 2024-03-01T12:00:00Z h app - - {deep_arrays}")),
            Expect::Invalid(MESSAGE_TOO_LONG),
        ),
        case("text", "100k [", bytes(&deep_arrays), Expect::Invalid(MESSAGE_TOO_LONG)),
        // One line of exactly the cap (accepted by the reader, then refused by the rules), and one byte past it.
        case("json", "a 5 MiB message", long(entry_head, r#""}]"#, CAP), Expect::Invalid(MESSAGE_TOO_LONG)),
        case("json", "a 5 MiB + 1 message", long(entry_head, r#""}]"#, CAP + 1), Expect::TooLarge),
        case("jsonl", "a 5 MiB line", long(&entry_head[1..], r#""}"#, CAP), Expect::Invalid(MESSAGE_TOO_LONG)),
        case("jsonl", "a 5 MiB + 1 line", long(&entry_head[1..], r#""}"#, CAP + 1), Expect::TooLarge),
        case(
            "syslog",
            "a 5 MiB line",
            long("<14>1 2024-03-01T12:00:00Z h app - - - ", "", CAP),
            Expect::Invalid(MESSAGE_TOO_LONG),
        ),
        case(
            "syslog",
            "a 5 MiB + 1 line",
            long("<14>1 2024-03-01T12:00:00Z h app - - - ", "", CAP + 1),
            Expect::TooLarge,
        ),
        case("text", "a 5 MiB line", long("", "", CAP), Expect::Invalid(MESSAGE_TOO_LONG)),
        case("text", "a 5 MiB + 1 line", long("", "", CAP + 1), Expect::TooLarge),
        case("csv", "a 5 MiB row", long("level,message\ninfo,", "\n", CAP), Expect::Invalid(MESSAGE_TOO_LONG)),
        case("csv", "a 5 MiB + 1 row", long("level,message\ninfo,", "\n", CAP + 1), Expect::TooLarge),
        case(
            "obl",
            "a 5 MiB note",
            long(&format!(r#"{OBL_HEAD}{{"type":"note","text":""#), r#""}]}]}"#, CAP),
            Expect::Invalid(MESSAGE_TOO_LONG),
        ),
        case("obl", "a 5 MiB + 1 note", long(OBL_HEAD, "]}]}", CAP + 1), Expect::TooLarge),
        // Many tiny lines: parsing stops at the 101st entry.
        case("text", "5 MiB of one-character lines", filled("", "a\n", "", CAP), Expect::Invalid(TOO_MANY)),
        case("syslog", "5 MiB of one-character lines", filled("", "a\n", "", CAP), Expect::Invalid(TOO_MANY)),
        case("csv", "5 MiB of one-character lines", filled("", "a\n", "", CAP), Expect::Invalid(TOO_MANY)),
        case("text", "5 MiB of one-character lines", filled("", "a\n", "", CAP), Expect::Invalid(TOO_MANY)).sniffed(),
        case("text", "5 MiB of one-character CRLF lines", filled("", "a\r\n", "", CAP), Expect::Invalid(TOO_MANY)),
        // Nothing but line breaks: no entry at all.
        case("text", "5 MiB of line breaks", filled("", "\n", "", CAP), Expect::Invalid(NONE)),
        case("syslog", "5 MiB of line breaks", filled("", "\n", "", CAP), Expect::Invalid(NONE)),
        case("jsonl", "5 MiB of line breaks", filled("", "\n", "", CAP), Expect::Invalid(NONE)),
        case(
            "csv",
            "5 MiB of line breaks",
            filled("", "\n", "", CAP),
            parse("CSV line 1: expected a header row of field names"),
        ),
        // Every entry breaking rules: 400 issues found, 100 listed.
        case("json", "100 empty entries", bytes(&format!("[{}{{}}]", "{},".repeat(99))), Expect::Issues(MAX_ISSUES)),
        case("text", "100 lines and no defaults", filled("", "a\n", "", 200), Expect::Issues(MAX_ISSUES))
            .query("format=text"),
        // NUL bytes.
        case(
            "json",
            "a NUL inside a string",
            bytes(&format!("[{}]", entry(",\"requestId\":\"a\0b\""))),
            parse("JSON line 1: control character"),
        ),
        case("json", "5 MiB of NUL", bytes(&"\0".repeat(CAP)), parse("JSON line 1: expected value at column 1")),
        case(
            "jsonl",
            "a NUL line",
            bytes(&format!("{}\n\0\n", entry(""))),
            parse("JSONL line 2: expected value at column 1"),
        ),
        case(
            "syslog",
            "a NUL inside the PRI",
            bytes("<1\x004>1 2024-03-01T12:00:00Z h app - - - m\n"),
            parse("Syslog line 1: "),
        ),
        case("text", "5 MiB of NUL", bytes(&"\0".repeat(CAP)), Expect::Invalid(MESSAGE_TOO_LONG)),
        case(
            "csv",
            "a NUL before a level",
            bytes("level,message\n\0info,m\n"),
            Expect::Invalid(
                "[0,\"level\"] Invalid enum value. Expected 'debug' | 'info' | 'warn' | 'error', received '\u{0}info'",
            ),
        ),
        case(
            "obl",
            "a NUL before the document",
            bytes(&format!("\0{}", obl(&obl_note("\"2024-03-01T09:00:05Z\"")))),
            parse("OBL"),
        ),
    ]
}

/// Invalid UTF-8 at each kind of position, in every format.
fn encodings() -> Vec<Case> {
    let valid = [
        ("json", format!("[{}]", entry(""))),
        ("jsonl", format!("{}\n{}", entry(""), entry(""))),
        ("syslog", "<14>1 2024-03-01T12:00:00Z h app - - - ok\n<14>1 2024-03-01T12:00:00Z h app - - - fine".to_owned()),
        ("text", "ok line\nINFO another line".to_owned()),
        ("csv", "level,message\ninfo,fine".to_owned()),
        ("obl", obl(&obl_note("\"2024-03-01T09:00:05Z\""))),
    ];
    let mut cases = Vec::new();
    for (format, text) in valid {
        let label = match format {
            "json" => "JSON",
            "jsonl" => "JSONL",
            "syslog" => "Syslog",
            "text" => "Text",
            "csv" => "CSV",
            _ => "OBL",
        };
        let middle = text.find('\n').map_or(text.len() / 2, |line_end| line_end + 4);
        for (what, at, insert) in [
            ("0xFF as the first byte", 0, &b"\xff"[..]),
            ("0xFF in the middle of a line", middle, b"\xff"),
            ("0xFF as the last byte", END, b"\xff"),
            ("a truncated euro sign at the end", END, b"\xe2\x82"),
            ("a lone continuation byte", middle, b"\x80"),
            ("an overlong NUL (C0 80)", middle, b"\xc0\x80"),
            ("a UTF-16 surrogate (ED A0 80)", middle, b"\xed\xa0\x80"),
        ] {
            cases.push(case(format, what, spliced(&text, at, insert), parse(label)));
        }
    }
    let line = entry(",\"requestId\":\"ab\"");
    let inside = line.find("ab").unwrap_or(0) + 1;
    cases.push(case(
        "json",
        "0xFF inside a string",
        spliced(&format!("[{line}]"), inside + 1, b"\xff"),
        parse("JSON line 1: "),
    ));
    cases.push(case("jsonl", "0xFF inside a string", spliced(&line, inside, b"\xff"), parse("JSONL line 1: ")));
    let document = obl(&obl_note("\"2024-03-01T09:00:05Z\""));
    let inside = document.find("hi").unwrap_or(0) + 1;
    cases.push(case("obl", "0xFF inside a string", spliced(&document, inside, b"\xff"), parse("OBL")));
    cases.push(case(
        "csv",
        "0xFF inside a cell",
        spliced("level,message\ninfo,fine\n", 21, b"\xff"),
        parse("CSV line 2: "),
    ));
    cases.push(case(
        "csv",
        "0xFF inside a quoted cell",
        spliced("level,message\ninfo,\"a, b\"\n", 22, b"\xff"),
        parse("CSV line 2: "),
    ));
    cases.push(case(
        "text",
        "0xFF in the middle of line 1",
        spliced("INFO abcd\n", 7, b"\xff"),
        parse("Text line 1: invalid UTF-8 at column 8"),
    ));
    cases
}

/// Small compressed bodies that inflate past the cap, in each encoding and format, and one
/// that inflates to just under it (read, then parsed like any body).
fn bombs() -> Vec<Case> {
    let encoders: [(&str, Encoder); 3] = [("gzip", gzip), ("deflate", deflate), ("zstd", zstd)];
    let mut cases = Vec::new();
    for (encoding, encode) in encoders {
        let bomb = encode(&vec![b'\n'; 64 * 1024 * 1024]);
        assert!(bomb.len() < 128 * 1024, "a {encoding} bomb of {} bytes", bomb.len());
        for (format, _) in FORMATS {
            let bomb = bomb.clone();
            cases.push(
                case(
                    format,
                    &format!("{encoding}: 64 KiB at most, 64 MiB inflated"),
                    move || bomb.clone(),
                    Expect::TooLarge,
                )
                .header("Content-Encoding", encoding),
            );
        }
        let within = encode(&filled("", "{}\n", "", CAP - 3)());
        cases.push(
            case(
                "jsonl",
                &format!("{encoding}: 5 MiB of {{}} lines inflated"),
                move || within.clone(),
                Expect::Invalid(TOO_MANY),
            )
            .header("Content-Encoding", encoding),
        );
        let just_past = encode(&vec![b' '; CAP + 1]);
        cases.push(
            case("json", &format!("{encoding}: 5 MiB + 1 inflated"), move || just_past.clone(), Expect::TooLarge)
                .header("Content-Encoding", encoding),
        );
    }
    // A bomb inside a bomb: the inner layer is never decoded, the outer one is refused.
    let nested = gzip(&gzip(&vec![b'\n'; 64 * 1024 * 1024]));
    cases.push(
        case(
            "text",
            "gzip, gzip: a bomb in a bomb",
            move || nested.clone(),
            parse("Unsupported Content-Encoding 'gzip, gzip'"),
        )
        .header("Content-Encoding", "gzip, gzip"),
    );
    cases
}

/// Timestamps at and just past each end of the accepted range, in every format.
fn timestamps() -> Vec<Case> {
    // RFC 3164 has no year: at 2000-01-01T12:00:00Z, `Jan  1` is this year's and `Dec 31` last year's.
    let new_year_noon = EARLIEST + 43_200_000;
    let syslog = |stamp: &str| format!("<14>1 {stamp} h app - - - m\n");
    let text = |stamp: &str| format!("{stamp} INFO m\n");
    let csv = |stamp: &str| format!("timestamp,level,message\n{stamp},info,m\n");
    let json = |stamp: String| format!("[{}]", entry(&format!(",\"timestamp\":{stamp}")));
    let jsonl = |stamp: &str| format!("{}\n", entry(&format!(",\"timestamp\":\"{stamp}\"")));
    let edges: [(&str, &str, &str, &str, i64, bool); 5] = [
        // (what, ISO 8601, text/CSV stamp, Unix ms as text, ms, accepted)
        ("2000-01-01T00:00:00Z", "2000-01-01T00:00:00Z", "2000-01-01 00:00:00", "946684800000", EARLIEST, true),
        (
            "1 ms before 2000",
            "1999-12-31T23:59:59.999Z",
            "1999-12-31 23:59:59.999",
            "946684799999",
            EARLIEST - 1,
            false,
        ),
        (
            "1 ms before 2000 in +01:00",
            "2000-01-01T00:59:59.999+01:00",
            "2000-01-01 00:59:59.999+01:00",
            "946684799999",
            EARLIEST - 1,
            false,
        ),
        ("the clock + 24 h", "2026-11-23T00:00:00Z", "2026-11-23 00:00:00", "1795392000000", LATEST, true),
        (
            "1 ms past the clock + 24 h",
            "2026-11-23T00:00:00.001Z",
            "2026-11-23 00:00:00.001",
            "1795392000001",
            LATEST + 1,
            false,
        ),
    ];
    let mut cases = Vec::new();
    for (what, iso, plain, ms_text, ms, accepted) in edges {
        let expect = || if accepted { Expect::StoredAt(ms) } else { Expect::Invalid(OUT_OF_RANGE) };
        assert_eq!(ms_text.parse::<i64>().ok(), Some(ms), "{what}");
        cases.push(case("json", &format!("{what} as Unix ms"), bytes(&json(ms.to_string())), expect()));
        cases.push(case("json", &format!("{what} as ISO 8601"), bytes(&json(format!("\"{iso}\""))), expect()));
        cases.push(case("jsonl", what, bytes(&jsonl(iso)), expect()));
        cases.push(case("syslog", &format!("{what} (RFC 5424)"), bytes(&syslog(iso)), expect()));
        cases.push(case("text", what, bytes(&text(plain)), expect()));
        cases.push(case("csv", &format!("{what} as Unix ms"), bytes(&csv(ms_text)), expect()));
        cases.push(case("csv", &format!("{what} as ISO 8601"), bytes(&csv(iso)), expect()));
        cases.push(case("obl", what, bytes(&obl(&obl_note(&format!("\"{iso}\"")))), expect()));
    }
    cases.push(
        case(
            "syslog",
            "Jan  1 00:00:00 at 2000-01-01T12:00Z (RFC 3164)",
            bytes("<14>Jan  1 00:00:00 h app: m\n"),
            Expect::StoredAt(EARLIEST),
        )
        .at(new_year_noon),
    );
    cases.push(
        case(
            "syslog",
            "Dec 31 23:59:59 at 2000-01-01T12:00Z: 1999 (RFC 3164)",
            bytes("<14>Dec 31 23:59:59 h app: m\n"),
            Expect::Invalid(OUT_OF_RANGE),
        )
        .at(new_year_noon),
    );
    cases.push(case(
        "text",
        "12/31/1999 23:59:59",
        bytes("12/31/1999 23:59:59 INFO m\n"),
        Expect::Invalid(OUT_OF_RANGE),
    ));
    cases
}

/// Dates and times that cannot exist (hour 25, minute 61, second 61, February 30, April 31):
/// parse errors in the line formats, never wrapped into another time.
fn impossible_dates() -> Vec<Case> {
    const EXIST: &str = "expected a date and time that exist";
    let mut cases = Vec::new();
    for (what, iso, plain, us, rfc3164) in [
        ("February 30", "2024-02-30T12:00:00Z", "2024-02-30 12:00:00", "02/30/2024 12:00:00", "Feb 30 12:00:00"),
        ("April 31", "2024-04-31T12:00:00Z", "2024-04-31 12:00:00", "04/31/2024 12:00:00", "Apr 31 12:00:00"),
        ("hour 25", "2024-03-01T25:00:00Z", "2024-03-01 25:00:00", "03/01/2024 25:00:00", "Mar  1 25:00:00"),
        ("minute 61", "2024-03-01T12:61:00Z", "2024-03-01 12:61:00", "03/01/2024 12:61:00", "Mar  1 12:61:00"),
        ("second 61", "2024-03-01T12:00:61Z", "2024-03-01 12:00:61", "03/01/2024 12:00:61", "Mar  1 12:00:61"),
    ] {
        cases.push(case(
            "syslog",
            &format!("{what} (RFC 5424)"),
            bytes(&format!("<14>1 {iso} h app - - - m\n")),
            parse("Syslog line 1: "),
        ));
        cases.push(case(
            "syslog",
            &format!("{what} on line 2 (RFC 3164)"),
            bytes(&format!("<14>Mar  1 12:00:00 h app: ok\n<14>{rfc3164} h app: m\n")),
            parse(&format!("Syslog line 2: {EXIST} at column 5")),
        ));
        cases.push(case(
            "text",
            what,
            bytes(&format!("{plain} ERROR x\n")),
            parse(&format!("Text line 1: {EXIST} at column 1")),
        ));
        cases.push(case(
            "text",
            &format!("{what} on line 2"),
            bytes(&format!("fine\n{plain} x\n")),
            parse(&format!("Text line 2: {EXIST} at column 1")),
        ));
        cases.push(case(
            "text",
            &format!("{what}, ISO 8601 in brackets"),
            bytes(&format!("[{iso}] x\n")),
            parse("Text line 1: "),
        ));
        cases.push(case("text", &format!("{what}, MM/DD/YYYY"), bytes(&format!("{us} x\n")), parse("Text line 1: ")));
        cases.push(case(
            "csv",
            what,
            bytes(&format!("timestamp,level,message\n{iso},info,m\n")),
            parse(&format!("CSV line 2: {EXIST}")),
        ));
        cases.push(case(
            "csv",
            &format!("{what} on line 3"),
            bytes(&format!("timestamp,level,message\n,info,ok\n{plain},info,m\n")),
            parse(&format!("CSV line 3: {EXIST}")),
        ));
        cases.push(case(
            "json",
            what,
            bytes(&format!("[{}]", entry(&format!(",\"timestamp\":\"{iso}\"")))),
            Expect::Invalid(NOT_A_TIME),
        ));
        cases.push(case(
            "jsonl",
            what,
            bytes(&entry(&format!(",\"timestamp\":\"{iso}\""))),
            Expect::Invalid(NOT_A_TIME),
        ));
        cases.push(case("obl", what, bytes(&obl(&obl_note(&format!("\"{iso}\"")))), Expect::Invalid(NOT_A_TIME)));
    }
    cases
}

/// What went wrong with one answer, if anything.
async fn check(server: &TestServer, case: &Case) -> Result<(), String> {
    let workspace = new_workspace(&server.store, "adversary").await;
    let key = new_key(&server.store, workspace.id, Scopes::ALL, None).await.0;
    let auth = format!("Bearer {key}");
    let mut headers: Vec<(&str, &str)> = vec![("Authorization", &auth)];
    headers.extend(case.headers.iter().map(|(name, value)| (*name, value.as_str())));
    server.set_now(case.now);
    let path = format!("/v1/logs?{}", case.query);
    let reply = server.request_raw("POST", &path, &headers, (case.body)()).await;

    let mut problems = Vec::new();
    if reply.elapsed > MAX_ANSWER_TIME {
        problems.push(format!("answered in {:?}", reply.elapsed));
    }
    if reply.bytes.len() > MAX_ANSWER_BYTES {
        problems.push(format!("a {}-byte answer", reply.bytes.len()));
    }
    let body: Value = serde_json::from_slice(&reply.bytes).unwrap_or_else(|_| {
        problems.push(format!("an answer that is not JSON: {:?}", String::from_utf8_lossy(&reply.bytes)));
        Value::Null
    });
    let issues = body["issues"].as_array().map_or(0, Vec::len);
    if issues > MAX_ISSUES {
        problems.push(format!("{issues} issues"));
    }
    let error = body["error"].as_str().unwrap_or_default();
    let keys: Vec<&str> =
        body.as_object().map(|object| object.keys().map(String::as_str).collect()).unwrap_or_default();
    let first_issue = body["issues"][0]["path"].to_string() + " " + body["issues"][0]["message"].as_str().unwrap_or("");
    let summary = || {
        let text = body.to_string();
        format!("{} {}", reply.status, text.chars().take(300).collect::<String>())
    };
    let fits = match &case.expect {
        Expect::Invalid(issue) => {
            reply.status == StatusCode::BAD_REQUEST
                && error == "Validation error"
                && keys == ["error", "issues"]
                && first_issue == *issue
        }
        Expect::Issues(count) => {
            reply.status == StatusCode::BAD_REQUEST && error == "Validation error" && issues == *count
        }
        Expect::Parse(prefix) => {
            reply.status == StatusCode::BAD_REQUEST
                && body["code"] == json!("PARSE_ERROR")
                && keys == ["code", "error"]
                && error.starts_with(prefix.as_str())
        }
        Expect::Refused => {
            reply.status == StatusCode::BAD_REQUEST
                && (keys == ["error", "issues"] && error == "Validation error"
                    || keys == ["code", "error"] && body["code"] == json!("PARSE_ERROR"))
        }
        Expect::TooLarge => {
            reply.status == StatusCode::PAYLOAD_TOO_LARGE && body == json!({"error": "Payload too large"})
        }
        Expect::StoredAt(_) => reply.status == StatusCode::OK && body["count"] == json!(1),
    };
    if !fits {
        problems.push(format!("expected {:?}, got {}", case.expect, summary()));
    }
    if !matches!(case.expect, Expect::StoredAt(_)) && !reply.status.is_client_error() {
        problems.push(format!("not a 4xx: {}", reply.status));
    }

    let listing = server.request_raw("GET", "/v1/logs?limit=1000", &[("Authorization", &auth)], Vec::new()).await;
    let stored: Vec<i64> = match serde_json::from_slice::<Value>(&listing.bytes) {
        Ok(listed) => {
            listed["logs"].as_array().into_iter().flatten().filter_map(|log| log["timestamp"].as_i64()).collect()
        }
        Err(error) => {
            problems.push(format!("the listing of what was stored is not JSON a client reads back: {error}"));
            let page = Page { limit: 1000, offset: 0 };
            let found = server.store.list_logs(workspace.id, &LogFilter::default(), page).await;
            found.map(|found| found.logs.iter().map(|log| log.entry.timestamp).collect()).unwrap_or_default()
        }
    };
    let expected: Vec<i64> = if let Expect::StoredAt(ms) = case.expect { vec![ms] } else { Vec::new() };
    if stored != expected {
        problems.push(format!("stored logs at {stored:?}, expected {expected:?}"));
    }
    if problems.is_empty() { Ok(()) } else { Err(problems.join("; ")) }
}

/// Every case of the table, one after another (each request timed alone), and every failure
/// with its case's name.
#[actix_web::test]
async fn every_hostile_body_is_refused_small_and_fast_and_stores_nothing() {
    let cases: Vec<Case> =
        [shapes(), encodings(), bombs(), timestamps(), impossible_dates()].into_iter().flatten().collect();
    let server = start().await;
    let mut failures = Vec::new();
    for case in &cases {
        if let Err(problem) = check(&server, case).await {
            failures.push(format!("{}: {problem}", case.name));
        }
    }
    server.stop().await;
    assert!(failures.is_empty(), "{} of {} cases failed:\n{}", failures.len(), cases.len(), failures.join("\n"));
}
