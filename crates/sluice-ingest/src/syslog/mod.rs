//! Syslog: RFC 5424 and RFC 3164 messages, one per line, as nom grammars.
//!
//! ```text
//! line        = [WS] (rfc5424 / rfc3164 / unframed)
//! rfc5424     = PRI VERSION SP TIMESTAMP SP HOSTNAME SP APP-NAME SP PROCID SP MSGID SP SD [SP MSG]
//! PRI         = "<" 1*3DIGIT ">"            ; 0..=191, no leading zero
//! VERSION     = NONZERO-DIGIT 0*2DIGIT
//! TIMESTAMP   = "-" / FULL-DATE "T" TIME [FRACTION (1*6DIGIT)] ("Z" / ("+"/"-") HH ":" MM)
//! HOSTNAME    = "-" / 1*255PRINTUSASCII     ; APP-NAME 1*48, PROCID 1*128, MSGID 1*32
//! SD          = "-" / 1*("[" SD-NAME *(SP PARAM) "]")
//! PARAM       = SD-NAME "=" *SP DQUOTE *(escaped / not DQUOTE) DQUOTE   ; \" \\ \] decoded
//! rfc3164     = PRI *SP [STAMP SP] [HOSTNAME SP] [TAG ["[" PID "]"] [":"] SP] MSG
//! STAMP       = MON SP+ DAY SP+ [YEAR SP+] HH:MM:SS [":"] / RFC3339
//! unframed    = a line without PRI, read as rfc5424 or rfc3164 when it fits, else all MSG
//! ```
//!
//! Documented fallbacks, so a line is never lost for a cosmetic fault: a malformed
//! STRUCTURED-DATA stays in the message (as Vector and syslog_loose do); an RFC 3164 line whose
//! header does not fit keeps everything after PRI as the message. An empty MSG becomes the
//! whole line, since a log needs a message of at least one character.
//!
//! The RFC 5424 grammar is in `rfc5424`, RFC 3164's in `rfc3164`; this module holds the
//! message type, the parts both share (PRI, NILVALUE fields, MSG), and the entry point.

mod rfc3164;
mod rfc5424;

use std::borrow::Cow;
use std::fmt;
use std::sync::LazyLock;

use nom::bytes::complete::{tag, take_while_m_n};
use nom::character::complete::{char, space1};
use nom::combinator::opt;
use nom::{IResult, Parser};

use sluice_model::{Draft, JsonKey, Level, Member, ObjectWriter, Sent, SmolStr};

use self::rfc3164::rfc3164;
#[cfg(test)]
use self::rfc5424::rfc3339_ms;
use self::rfc5424::{SdElement, rfc3339_timestamp, rfc5424};
use time::{Date, Month, OffsetDateTime, PrimitiveDateTime, Time};

/// Where and why a syslog line could not be read.
///
/// ```
/// use sluice_ingest::syslog::parse_line;
/// let error = parse_line("<999>1 - - - - - -", 0).unwrap_err();
/// assert_eq!(error.to_string(), "expected a PRI from <0> to <191> at column 1");
/// ```
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SyslogError {
    /// 1-based column (in characters) where the grammar stopped.
    pub column: usize,
    /// What the grammar expected there.
    pub expected: &'static str,
}

impl fmt::Display for SyslogError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "expected {} at column {}", self.expected, self.column)
    }
}

impl std::error::Error for SyslogError {}

/// Which grammar read the line.
///
/// ```
/// use sluice_ingest::syslog::{Protocol, parse_line};
/// assert_eq!(parse_line("<13>Feb  5 17:32:18 host app: hi", 0).unwrap().protocol, Protocol::Rfc3164);
/// ```
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Protocol {
    /// `<PRI>VERSION ...`.
    Rfc5424,
    /// BSD syslog.
    Rfc3164,
}

/// One syslog message, its parts borrowed from the line where they need no decoding.
///
/// ```
/// use sluice_ingest::syslog::parse_line;
/// let message = parse_line("<34>1 2003-10-11T22:14:15.003Z mymachine su - ID47 - hello", 0).unwrap();
/// assert_eq!((message.facility, message.hostname, message.msg_id), (Some(4), Some("mymachine"), Some("ID47")));
/// assert_eq!(message.timestamp, Some(1_065_910_455_003));
/// ```
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SyslogMessage<'a> {
    /// The grammar that read it.
    pub protocol: Protocol,
    /// Facility code (PRI / 8), when the line had a PRI.
    pub facility: Option<u8>,
    /// Severity code (PRI % 8), when the line had a PRI.
    pub severity: Option<u8>,
    /// Unix ms.
    pub timestamp: Option<i64>,
    /// HOSTNAME.
    pub hostname: Option<&'a str>,
    /// APP-NAME (RFC 5424) or TAG (RFC 3164).
    pub app_name: Option<&'a str>,
    /// PROCID or PID.
    pub proc_id: Option<&'a str>,
    /// MSGID.
    pub msg_id: Option<&'a str>,
    /// STRUCTURED-DATA elements in order, with decoded parameter values.
    pub structured_data: Vec<SdElement<'a>>,
    /// The STRUCTURED-DATA did not follow the grammar and was kept in `message` instead.
    pub malformed_structured_data: bool,
    /// MSG, BOM stripped.
    pub message: &'a str,
}

type Res<'a, T> = IResult<&'a str, T>;

/// The facility names of RFC 5424's table.
///
/// ```
/// use sluice_ingest::syslog::facility_name;
/// assert_eq!((facility_name(4), facility_name(23), facility_name(99)), ("auth", "local7", "unknown"));
/// ```
pub fn facility_name(code: u8) -> &'static str {
    const NAMES: [&str; 24] = [
        "kern", "user", "mail", "daemon", "auth", "syslog", "lpr", "news", "uucp", "cron", "authpriv", "ftp", "ntp",
        "audit", "alert", "clock", "local0", "local1", "local2", "local3", "local4", "local5", "local6", "local7",
    ];
    NAMES.get(usize::from(code)).copied().unwrap_or("unknown")
}

/// The severity mapping of docs/API.md (POST /v1/logs, syslog): emergency..error → error,
/// warning → warn, notice/info → info, debug → debug.
///
/// ```
/// use sluice_ingest::syslog::severity_level;
/// use sluice_model::Level;
/// assert_eq!([0, 3, 4, 5, 6, 7].map(severity_level), [Level::Error, Level::Error, Level::Warn, Level::Info, Level::Info, Level::Debug]);
/// ```
pub fn severity_level(severity: u8) -> Level {
    match severity {
        0..=3 => Level::Error,
        4 => Level::Warn,
        5 | 6 => Level::Info,
        _ => Level::Debug,
    }
}

/// `<PRI>`: 1 to 3 digits, no leading zero, at most 191.
fn pri(input: &str) -> Res<'_, u8> {
    let fail = || nom::Err::Error(nom::error::Error::new(input, nom::error::ErrorKind::Verify));
    let inner = input.strip_prefix('<').ok_or_else(fail)?;
    let (after, value) = number(inner).map_err(|_| fail())?;
    let length = inner.len() - after.len();
    let rest = after.strip_prefix('>').ok_or_else(fail)?;
    match u8::try_from(value) {
        Ok(value) if length <= 3 && value <= 191 && !(length > 1 && inner.starts_with('0')) => Ok((rest, value)),
        _ => Err(fail()),
    }
}

/// `-` or 1 to `max` printable US-ASCII characters.
fn nil_or(max: usize) -> impl Fn(&str) -> Res<'_, Option<&str>> {
    move |input| {
        let length = input.bytes().position(|byte| !(b'!'..=b'~').contains(&byte)).unwrap_or(input.len());
        if length == 0 || length > max {
            return Err(nom::Err::Error(nom::error::Error::new(input, nom::error::ErrorKind::TakeWhileMN)));
        }
        // The token is ASCII, so `length` is a character boundary.
        let (token, rest) = input.split_at(length);
        Ok((rest, (token != "-").then_some(token)))
    }
}

/// The MSG part: after one optional space, BOM stripped.
fn message_part(rest: &str) -> &str {
    let rest = rest.strip_prefix(' ').unwrap_or(rest);
    rest.strip_prefix('\u{feff}').unwrap_or(rest)
}

/// One or more ASCII digits, as a number.
fn number(input: &str) -> Res<'_, u32> {
    let fail = || nom::Err::Error(nom::error::Error::new(input, nom::error::ErrorKind::Digit));
    let length = input.bytes().take_while(u8::is_ascii_digit).count();
    if length == 0 || length > 9 {
        return Err(fail());
    }
    let value = input.as_bytes()[..length].iter().fold(0u32, |value, digit| value * 10 + u32::from(digit - b'0'));
    Ok((&input[length..], value))
}

/// Column (1-based, in characters) of `rest` inside `line`.
fn column(line: &str, rest: &str) -> usize {
    let offset = line.len().saturating_sub(rest.len());
    line.get(..offset).map_or(offset, |done| done.chars().count()) + 1
}

/// Reads one syslog line. `now_ms` is the receive time, for RFC 3164's missing year.
///
/// ```
/// use sluice_ingest::syslog::{parse_line, Protocol};
/// let line = r#"<165>1 2003-10-11T22:14:15.003Z host app 42 ID47 [ex@1 a="\"q\""] hello"#;
/// let message = parse_line(line, 0).unwrap();
/// assert_eq!((message.protocol, message.severity, message.app_name), (Protocol::Rfc5424, Some(5), Some("app")));
/// assert_eq!(message.structured_data[0].1[0].1, "\"q\"");
/// assert_eq!(message.message, "hello");
/// ```
pub fn parse_line(line: &str, now_ms: i64) -> Result<SyslogMessage<'_>, SyslogError> {
    let trimmed = line.trim_start();
    if trimmed.starts_with('<') {
        let (after_pri, value) = pri(trimmed)
            .map_err(|_| SyslogError { column: column(line, trimmed), expected: "a PRI from <0> to <191>" })?;
        return match rfc5424(line, after_pri, Some(value)) {
            Some(result) => result,
            None => rfc3164(line, after_pri, Some(value), now_ms),
        };
    }
    // Unframed: RFC 5424 without PRI when it fits (VERSION 1 only, so a number that starts a
    // plain line is not taken for a version), else RFC 3164 without PRI.
    if trimmed.starts_with("1 ")
        && let Some(Ok(message)) = rfc5424(line, trimmed, None)
    {
        return Ok(message);
    }
    rfc3164(line, trimmed, None, now_ms)
}

/// The `data` keys of header fields, written as JSON once.
static KEYS: LazyLock<[JsonKey; 4]> = LazyLock::new(|| ["hostname", "procId", "msgId", "facility"].map(JsonKey::new));

/// The draft entry of one message.
pub(crate) fn draft(message: &SyslogMessage<'_>, line: &str, default_level: Option<&String>) -> Draft {
    let level = match message.severity {
        Some(severity) => Sent::Value(severity_level(severity)),
        // No PRI: the query default (checked like a sent value), else info.
        None if default_level.is_some() => Sent::Absent,
        None => Sent::Value(Level::Info),
    };
    let text = if message.message.trim().is_empty() { line.trim() } else { message.message };
    // `data` written in one pass, STRUCTURED-DATA as `{"id": {"param": "value"}}` inside it.
    let mut data = ObjectWriter::with_capacity(line.len() + 64);
    let [hostname, proc_id, msg_id, facility] = &*KEYS;
    let strings = [
        (hostname, message.hostname),
        (proc_id, message.proc_id),
        (msg_id, message.msg_id),
        (facility, message.facility.map(facility_name)),
    ];
    for (key, value) in strings {
        if let Some(value) = value {
            data.push(key, Member::Str(value));
        }
    }
    if !message.structured_data.is_empty() {
        data.push_object("structuredData", |elements| {
            for (id, params) in &message.structured_data {
                elements.push_object(id, |object| {
                    for (name, value) in params {
                        object.push_named(name, Member::Str(value));
                    }
                });
            }
        });
    }
    let data = (!data.is_empty()).then(|| data.finish());
    Draft {
        level,
        message: Sent::Value(text.to_owned()),
        source: Sent::from_option(message.app_name.map(SmolStr::new)),
        timestamp: Sent::from_option(message.timestamp),
        data: Sent::from_option(data),
        ..Draft::default()
    }
}

/// Parses a syslog body: one message per line (LF or CRLF); blank lines are skipped.
///
/// Severity gives `level` (the mapping of docs/API.md, syslog); APP-NAME/TAG gives `source`,
/// else the query default; HOSTNAME, PROCID, MSGID, facility and STRUCTURED-DATA go into `data`.
///
/// ```
/// use sluice_ingest::{Defaults, Options, syslog::parse_syslog};
/// let mut options = Options::new(1_700_000_000_000);
/// options.defaults = Defaults { environment: Some("production".into()), ..Defaults::default() };
/// let body = b"<34>Oct 11 22:14:15 mymachine su: 'su root' failed for lonvick on /dev/pts/8\n";
/// let entry = &parse_syslog(body, &options).unwrap().entries[0];
/// assert_eq!((entry.source.as_str(), entry.level.as_str()), ("su", "error"));
/// assert_eq!(entry.data.as_ref().unwrap().get("hostname"), Some("mymachine".into()));
/// ```
pub fn parse_syslog(body: &[u8], options: &crate::Options) -> Result<crate::Batch, crate::IngestError> {
    let mut collector = crate::json::Collector::for_lines(options, body);
    for (number, line) in crate::frame::lines(body, crate::Format::Syslog)? {
        if collector.at_limit() {
            break;
        }
        let message = parse_line(line, options.received_at_ms).map_err(|error| crate::ParseError {
            format: crate::Format::Syslog,
            line: Some(number),
            column: Some(error.column),
            reason: format!("expected {}", error.expected),
        })?;
        // Always true here: the limit was checked before the line was read.
        let _ = collector.push(draft(&message, line, options.defaults.level.as_ref()));
    }
    collector.finish()
}

#[cfg(test)]
mod tests {
    use proptest::prelude::*;
    use time::format_description::well_known::Rfc3339;

    use super::*;

    /// What RFC 5424 accepts, as `time`'s RFC 3339 parser reads it (plus RFC 5424's own
    /// limits: upper-case `T` and `Z`, one to six fraction digits), in floor milliseconds.
    fn reference(token: &str) -> Option<i64> {
        let bytes = token.as_bytes();
        if bytes.get(10) != Some(&b'T') || token.contains('z') {
            return None;
        }
        if let Some(dot) = token.find('.') {
            let fraction = token[dot + 1..].bytes().take_while(u8::is_ascii_digit).count();
            if fraction == 0 || fraction > 6 {
                return None;
            }
        }
        let moment = OffsetDateTime::parse(token, &Rfc3339).ok()?;
        i64::try_from(moment.unix_timestamp_nanos().div_euclid(1_000_000)).ok()
    }

    /// Timestamps near the valid shape: each position either what it should be or a
    /// plausible mistake.
    fn near_timestamp() -> impl Strategy<Value = String> {
        let digit = |max: u8| (0..=max).prop_map(|digit| char::from(b'0' + digit));
        let two = |high: u8| (digit(high), digit(9)).prop_map(|(a, b)| format!("{a}{b}"));
        (
            (digit(9), digit(9), digit(9), digit(9)).prop_map(|(a, b, c, d)| format!("{a}{b}{c}{d}")),
            two(1),
            two(3),
            prop::sample::select(vec!["T", "t", " ", "x"]),
            two(2),
            two(6),
            two(6),
            prop::sample::select(vec!["", ".", ".1", ".123", ".123456", ".1234567", ".12a"]),
            prop::sample::select(vec!["Z", "z", "+00:00", "-07:00", "+23:59", "+24:00", "-05:60", "+0530", "", "Zx"]),
        )
            .prop_map(|(year, month, day, t, hour, minute, second, fraction, zone)| {
                format!("{year}-{month}-{day}{t}{hour}:{minute}:{second}{fraction}{zone}")
            })
    }

    proptest! {
        #[test]
        fn timestamps_read_as_times_rfc3339_parser_reads_them(token in near_timestamp()) {
            prop_assert_eq!(rfc3339_ms(token.as_bytes()), reference(&token), "{}", token);
        }
    }

    #[test]
    fn leap_seconds_stand_for_the_last_millisecond_of_a_month() {
        for token in [
            "2016-12-31T23:59:60Z",
            "2016-12-31T18:59:60-05:00",
            "2016-06-30T23:59:60.5Z",
            "2016-12-30T23:59:60Z",
            "2016-12-31T23:58:60Z",
        ] {
            assert_eq!(rfc3339_ms(token.as_bytes()), reference(token), "{token}");
        }
        assert_eq!(rfc3339_ms(b"2016-12-31T23:59:60Z"), Some(1_483_228_799_999));
    }

    /// docs/API.md: a date or time that cannot exist is a parse error naming the line and the
    /// column where the stamp starts, never wrapped into another time (hour 257 was read as
    /// 01:32:18).
    #[test]
    fn impossible_bsd_times_are_errors_not_wrapped() {
        let now = 1_764_000_000_000; // 2025-11-24
        for (line, column) in [
            ("<13>Feb  5 257:32:18 host app: hi", 5),
            ("<13>Feb 30 10:00:00 host app: hi", 5),
            ("<13>Feb  5 10:61:00 host app: hi", 5),
            ("<13>Apr 31 2024 10:00:00 host app: hi", 5),
            ("Feb  5 24:00:00 host app: hi", 1),
        ] {
            let error = parse_line(line, now).expect_err(line);
            assert_eq!((error.column, error.expected), (column, "a date and time that exist"), "{line}");
        }
        let leap = parse_line("<13>Dec 31 2016 23:59:60 host app: hi", now).expect("a leap second exists");
        assert_eq!(leap.timestamp, Some(1_483_228_799_999));
        let fine = parse_line("<13>Feb  5 17:32:18 host app: hi", now).expect("valid");
        assert_eq!(fine.app_name, Some("app"));
        let body = b"<13>Feb  5 17:32:18 host app: fine\n<13>Feb  5 257:32:18 host app: hi\n";
        let error = parse_syslog(body, &crate::Options::new(now)).expect_err("the second line");
        assert_eq!(error.to_string(), "Syslog line 2: expected a date and time that exist at column 5");
    }
}
