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

use std::borrow::Cow;
use std::fmt;
use std::sync::LazyLock;

use nom::bytes::complete::{tag, take_while_m_n};
use nom::character::complete::{char, space1};
use nom::combinator::opt;
use nom::{IResult, Parser};

use sluice_model::{Draft, JsonKey, Level, Member, ObjectWriter, Sent, SmolStr};
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

/// SPEC's severity mapping: emergency..error → error, warning → warn, notice/info → info,
/// debug → debug.
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

/// An RFC 5424 TIMESTAMP (also accepted inside RFC 3164 frames), up to the next space:
/// `YYYY-MM-DDTHH:MM:SS[.1*6DIGIT](Z|(+|-)HH:MM)`, upper-case `T` and `Z` as RFC 5424 wants,
/// read byte by byte; `time` checks the calendar. A leap second (`23:59:60` UTC at the end of
/// a month) reads as the millisecond before the next minute, as `time`'s RFC 3339 parser does.
fn rfc3339_timestamp(input: &str) -> Res<'_, i64> {
    let fail = || nom::Err::Error(nom::error::Error::new(input, nom::error::ErrorKind::Verify));
    let end = input.bytes().position(|byte| byte == b' ').unwrap_or(input.len());
    let (token, rest) = input.split_at(end);
    rfc3339_ms(token.as_bytes()).map(|ms| (rest, ms)).ok_or_else(fail)
}

/// The Unix milliseconds of an RFC 5424 TIMESTAMP that is all of `bytes`.
fn rfc3339_ms(bytes: &[u8]) -> Option<i64> {
    let number = |at: usize, count: usize| {
        bytes
            .get(at..at + count)?
            .iter()
            .try_fold(0u32, |value, &byte| byte.is_ascii_digit().then(|| value * 10 + u32::from(byte - b'0')))
    };
    let literal = |at: usize, expected: u8| bytes.get(at) == Some(&expected);
    if !(literal(4, b'-') && literal(7, b'-') && literal(10, b'T') && literal(13, b':') && literal(16, b':')) {
        return None;
    }
    let (year, month, day) = (number(0, 4)?, number(5, 2)?, number(8, 2)?);
    let (hour, minute, mut second) = (number(11, 2)?, number(14, 2)?, number(17, 2)?);
    let mut at = 19;
    let mut nanos = 0;
    if literal(at, b'.') {
        let count = bytes[at + 1..].iter().take_while(|byte| byte.is_ascii_digit()).count();
        if !(1..=6).contains(&count) {
            return None;
        }
        nanos = number(at + 1, count)? * 10u32.pow(9 - count as u32);
        at += 1 + count;
    }
    let offset_seconds = match bytes.get(at..)? {
        b"Z" => 0,
        [sign @ (b'+' | b'-'), _, _, b':', _, _] => {
            let (hours, minutes) = (number(at + 1, 2)?, number(at + 4, 2)?);
            if hours > 23 || minutes > 59 {
                return None;
            }
            let seconds = (hours * 3600 + minutes * 60) as i32;
            if *sign == b'-' { -seconds } else { seconds }
        }
        _ => return None,
    };
    let leap_second = second == 60;
    if leap_second {
        (second, nanos) = (59, 999_999_999);
    }
    let date = Date::from_calendar_date(
        year as i32,
        Month::try_from(u8::try_from(month).ok()?).ok()?,
        u8::try_from(day).ok()?,
    )
    .ok()?;
    if hour > 23 || minute > 59 || second > 59 {
        return None;
    }
    let seconds = i64::from(date.to_julian_day() - UNIX_EPOCH_JULIAN_DAY) * 86_400
        + i64::from(hour * 3600 + minute * 60 + second)
        - i64::from(offset_seconds);
    // A leap second stands for 23:59:59.999 UTC on a month's last day, and nothing else.
    if leap_second && (seconds.rem_euclid(86_400) != 86_399 || !last_day_of_month(seconds)) {
        return None;
    }
    Some(seconds * 1000 + i64::from(nanos / 1_000_000))
}

/// The Julian day of 1970-01-01.
const UNIX_EPOCH_JULIAN_DAY: i32 = 2_440_588;

/// Whether the UTC day of these Unix seconds is the last of its month.
fn last_day_of_month(seconds: i64) -> bool {
    OffsetDateTime::from_unix_timestamp(seconds).is_ok_and(|utc| utc.day() == utc.month().length(utc.year()))
}

fn sd_name(input: &str) -> Res<'_, &str> {
    let length = input
        .bytes()
        .position(|byte| !(b'!'..=b'~').contains(&byte) || matches!(byte, b'=' | b']' | b'"'))
        .unwrap_or(input.len());
    if length == 0 || length > 32 {
        return Err(nom::Err::Error(nom::error::Error::new(input, nom::error::ErrorKind::TakeWhileMN)));
    }
    // ASCII only, so `length` is a character boundary.
    let (name, rest) = input.split_at(length);
    Ok((rest, name))
}

fn unclosed(at: &str) -> nom::Err<nom::error::Error<&str>> {
    nom::Err::Error(nom::error::Error::new(at, nom::error::ErrorKind::Char))
}

/// A PARAM-VALUE between quotes, with `\"`, `\\` and `\]` decoded; borrowed when there is
/// nothing to decode.
fn param_value(input: &str) -> Res<'_, Cow<'_, str>> {
    let body = input.strip_prefix('"').ok_or_else(|| unclosed(input))?;
    let end = body.bytes().position(|byte| matches!(byte, b'"' | b'\\' | b']')).ok_or_else(|| unclosed(body))?;
    if body.as_bytes().get(end) == Some(&b'"') {
        return Ok((&body[end + 1..], Cow::Borrowed(&body[..end])));
    }
    let mut value = String::with_capacity(body.len().min(256));
    let mut rest = body;
    loop {
        let mut chars = rest.chars();
        match chars.next() {
            None => return Err(unclosed(rest)),
            Some('"') => return Ok((chars.as_str(), Cow::Owned(value))),
            Some('\\') => match chars.next() {
                Some(escaped @ ('"' | '\\' | ']')) => {
                    value.push(escaped);
                    rest = chars.as_str();
                }
                _ => {
                    value.push('\\');
                    rest = &rest[1..];
                }
            },
            Some(']') => return Err(unclosed(rest)),
            Some(other) => {
                value.push(other);
                rest = chars.as_str();
            }
        }
    }
}

type SdElement<'a> = (&'a str, Vec<(&'a str, Cow<'a, str>)>);

fn sd_element(input: &str) -> Res<'_, SdElement<'_>> {
    let rest = input.strip_prefix('[').ok_or_else(|| unclosed(input))?;
    let (mut rest, id) = sd_name(rest)?;
    let mut params = Vec::new();
    loop {
        if let Some(after) = rest.strip_prefix(']') {
            return Ok((after, (id, params)));
        }
        let spaced = rest.trim_start_matches([' ', '\t']);
        if spaced.len() == rest.len() {
            return Err(unclosed(rest));
        }
        let (after, name) = sd_name(spaced)?;
        let after = after.strip_prefix('=').ok_or_else(|| unclosed(after))?;
        let (after, value) = param_value(after.trim_start_matches([' ', '\t']))?;
        params.push((name, value));
        rest = after;
    }
}

/// `-` or one or more SD-ELEMENTs, each SD-ID once.
fn structured_data(input: &str) -> Res<'_, Vec<SdElement<'_>>> {
    if let Some(rest) = input.strip_prefix('-')
        && (rest.is_empty() || rest.starts_with(' '))
    {
        return Ok((rest, Vec::new()));
    }
    let (mut rest, first) = sd_element(input)?;
    let mut elements = vec![first];
    while rest.starts_with('[') {
        let (after, element) = sd_element(rest)?;
        if elements.iter().any(|(id, _)| *id == element.0) {
            return Err(nom::Err::Error(nom::error::Error::new(rest, nom::error::ErrorKind::Verify)));
        }
        elements.push(element);
        rest = after;
    }
    Ok((rest, elements))
}

/// The MSG part: after one optional space, BOM stripped.
fn message_part(rest: &str) -> &str {
    let rest = rest.strip_prefix(' ').unwrap_or(rest);
    rest.strip_prefix('\u{feff}').unwrap_or(rest)
}

/// Column (1-based, in characters) of `rest` inside `line`.
fn column(line: &str, rest: &str) -> usize {
    let offset = line.len().saturating_sub(rest.len());
    line.get(..offset).map_or(offset, |done| done.chars().count()) + 1
}

/// The RFC 5424 header and body after PRI; `None` when the line is not RFC 5424 at all
/// (no VERSION), an error when it is but breaks the grammar.
fn rfc5424<'a>(line: &'a str, after_pri: &'a str, pri: Option<u8>) -> Option<Result<SyslogMessage<'a>, SyslogError>> {
    // VERSION: a non-zero digit and up to two more.
    let version = after_pri.bytes().take(4).take_while(u8::is_ascii_digit).count();
    if !(1..=3).contains(&version) || after_pri.starts_with('0') {
        return None;
    }
    let rest = &after_pri[version..];
    let rest = rest.strip_prefix(' ')?;
    let at = |rest: &'a str, expected| SyslogError { column: column(line, rest), expected };
    let step = |rest: &'a str| rest.strip_prefix(' ');

    let parsed = (|| {
        let (rest, timestamp) = match rest.strip_prefix("- ") {
            Some(after) => (after, None),
            None => {
                let (after, ms) = rfc3339_timestamp(rest).map_err(|_| at(rest, "an RFC 3339 TIMESTAMP or -"))?;
                (step(after).ok_or_else(|| at(after, "a space after TIMESTAMP"))?, Some(ms))
            }
        };
        let (after, hostname) = nil_or(255)(rest).map_err(|_| at(rest, "a HOSTNAME of 1 to 255 characters or -"))?;
        let rest = step(after).ok_or_else(|| at(after, "a space after HOSTNAME"))?;
        let (after, app_name) = nil_or(48)(rest).map_err(|_| at(rest, "an APP-NAME of 1 to 48 characters or -"))?;
        let rest = step(after).ok_or_else(|| at(after, "a space after APP-NAME"))?;
        let (after, proc_id) = nil_or(128)(rest).map_err(|_| at(rest, "a PROCID of 1 to 128 characters or -"))?;
        let rest = step(after).ok_or_else(|| at(after, "a space after PROCID"))?;
        let (after, msg_id) = nil_or(32)(rest).map_err(|_| at(rest, "a MSGID of 1 to 32 characters or -"))?;
        let rest = step(after).ok_or_else(|| at(after, "a space after MSGID"))?;
        // A malformed STRUCTURED-DATA stays in the message (documented fallback).
        let (structured_data, message, malformed_structured_data) = match structured_data(rest) {
            Ok((after, elements)) if after.is_empty() || after.starts_with(' ') => {
                (elements, message_part(after), false)
            }
            _ => (Vec::new(), message_part(rest), true),
        };
        Ok(SyslogMessage {
            protocol: Protocol::Rfc5424,
            facility: pri.map(|pri| pri / 8),
            severity: pri.map(|pri| pri % 8),
            timestamp,
            hostname,
            app_name,
            proc_id,
            msg_id,
            structured_data,
            malformed_structured_data,
            message,
        })
    })();
    Some(parsed)
}

/// A month's three-letter English abbreviation, any case.
fn month(input: &str) -> Res<'_, Month> {
    const MONTHS: [&[u8; 3]; 12] =
        [b"jan", b"feb", b"mar", b"apr", b"may", b"jun", b"jul", b"aug", b"sep", b"oct", b"nov", b"dec"];
    let fail = || nom::Err::Error(nom::error::Error::new(input, nom::error::ErrorKind::Tag));
    let mut name = [0u8; 3];
    name.copy_from_slice(input.as_bytes().get(..3).ok_or_else(fail)?);
    name.make_ascii_lowercase();
    let index = MONTHS.iter().position(|candidate| **candidate == name).ok_or_else(fail)?;
    // Three ASCII letters, so 3 is a character boundary.
    Ok((&input[3..], Month::try_from(index as u8 + 1).unwrap_or(Month::January)))
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

/// `Mmm dd [yyyy] hh:mm:ss[:]`, with the year guessed from `now_ms` when absent: this year,
/// or the previous one when that would put the message more than 24 hours in the future.
fn bsd_timestamp(input: &str, now_ms: i64) -> Res<'_, Option<i64>> {
    let (rest, (month, _, day, _, year, (hour, _, minute, _, second), _)) = (
        month,
        space1,
        number,
        space1,
        opt((number, space1)).map(|year| year.map(|(year, _)| year)),
        (number, tag(":"), number, tag(":"), number),
        opt(char(':')),
    )
        .parse(input)?;
    let time = Time::from_hms(hour as u8, minute as u8, second as u8).ok();
    let at = |year: i32| {
        let date = Date::from_calendar_date(year, month, u8::try_from(day).ok()?).ok()?;
        let ms = PrimitiveDateTime::new(date, time?).assume_utc().unix_timestamp() * 1000;
        Some(ms)
    };
    let timestamp = match year {
        Some(year) => at(year as i32),
        None => {
            let this_year = OffsetDateTime::from_unix_timestamp(now_ms / 1000).map(|now| now.year()).unwrap_or(1970);
            match at(this_year) {
                Some(ms) if ms <= now_ms + 86_400_000 => Some(ms),
                _ => at(this_year - 1),
            }
        }
    };
    Ok((rest, timestamp))
}

/// A TAG: up to 48 characters other than space, `[` and `:`.
fn tag_name(input: &str) -> Res<'_, &str> {
    take_while_m_n(1, 48, |c: char| c != ' ' && c != '[' && c != ':').parse(input)
}

/// The RFC 3164 part after PRI (or the whole line, when unframed).
fn rfc3164<'a>(after_pri: &'a str, pri: Option<u8>, now_ms: i64) -> SyslogMessage<'a> {
    let body = after_pri.trim_start_matches(' ');
    let mut message = SyslogMessage {
        protocol: Protocol::Rfc3164,
        facility: pri.map(|pri| pri / 8),
        severity: pri.map(|pri| pri % 8),
        timestamp: None,
        hostname: None,
        app_name: None,
        proc_id: None,
        msg_id: None,
        structured_data: Vec::new(),
        malformed_structured_data: false,
        message: after_pri,
    };
    let stamped = rfc3339_timestamp(body).map(|(rest, ms)| (rest, Some(ms))).or_else(|_| bsd_timestamp(body, now_ms));
    let Ok((rest, timestamp)) = stamped else {
        // No timestamp: RFC 3164 §4.3.2 treats everything after PRI as MSG.
        message.message = body;
        return message;
    };
    message.timestamp = timestamp;
    let rest = rest.trim_start_matches(' ');
    // HOSTNAME, unless the next word is already the TAG (`name:` or `name[pid]`).
    let (word, after_word) = rest.split_once(' ').unwrap_or((rest, ""));
    let rest = if !word.is_empty() && !word.ends_with(':') && !word.contains('[') {
        message.hostname = Some(word);
        after_word.trim_start_matches(' ')
    } else {
        rest
    };
    if let Ok((after_tag, name)) = tag_name(rest) {
        let (after_pid, pid) = match after_tag.strip_prefix('[').and_then(|inner| inner.split_once(']')) {
            Some((pid, after)) => (after, Some(pid)),
            None => (after_tag, None),
        };
        let after_colon = after_pid.strip_prefix(':');
        // A TAG must end at `:`, `[pid]` or a space; anything else is message text.
        if after_colon.is_some() || pid.is_some() || after_pid.is_empty() || after_pid.starts_with(' ') {
            message.app_name = Some(name);
            message.proc_id = pid;
            message.message = message_part(after_colon.unwrap_or(after_pid));
            return message;
        }
    }
    message.message = message_part(rest);
    message
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
            None => Ok(rfc3164(after_pri, Some(value), now_ms)),
        };
    }
    // Unframed: RFC 5424 without PRI when it fits (VERSION 1 only, so a number that starts a
    // plain line is not taken for a version), else RFC 3164 without PRI.
    if trimmed.starts_with("1 ")
        && let Some(Ok(message)) = rfc5424(line, trimmed, None)
    {
        return Ok(message);
    }
    Ok(rfc3164(trimmed, None, now_ms))
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
/// Severity gives `level` (SPEC's mapping); APP-NAME/TAG gives `source`, else the query
/// default; HOSTNAME, PROCID, MSGID, facility and STRUCTURED-DATA go into `data`.
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
        let message = parse_line(line, options.received_at_ms).map_err(|error| crate::ParseError {
            format: crate::Format::Syslog,
            line: Some(number),
            column: Some(error.column),
            reason: format!("expected {}", error.expected),
        })?;
        collector.push(draft(&message, line, options.defaults.level.as_ref()));
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
}
