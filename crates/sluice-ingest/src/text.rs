//! Plain text: one log per line, with a timestamp and a level keyword found where real logs
//! put them, and both taken out of the message.
//!
//! ```text
//! line       = [ "[" ] [timestamp] [ "]" ] *(separator) rest
//! timestamp  = date ("T" / " ") time [fraction] [zone]     ; 2024-03-01T12:00:00Z, 2015-10-18 18:01:47,978
//!            / MM "/" DD "/" YYYY " " time [fraction]      ; 03/01/2024 12:00:00
//! date       = YYYY "-" MM "-" DD
//! time       = HH ":" MM ":" SS
//! fraction   = ("." / ",") 1*9DIGIT
//! zone       = "Z" / ("+" / "-") HH [":"] MM
//! level      = a keyword among the first words of `rest`:
//!              bare (`INFO`, `Info`, or any case right after the timestamp),
//!              `[LEVEL]`, `LEVEL:`, `LEVEL,` or `level=LEVEL`
//! ```
//!
//! Keywords (docs/API.md, text): `ERROR`, `WARN`, `WARNING`, `INFO`, `DEBUG`, plus the
//! spellings real logs use for the same levels: `FATAL`, `SEVERE`, `CRITICAL`, `CRIT`,
//! `ALERT`, `EMERG`, `ERR` → error; `NOTICE` → info; `TRACE` → debug. A timestamp without zone
//! is UTC. No keyword: the query default `level`, else `info`. No timestamp: the receive time.
//! A timestamp of that shape whose date or time cannot exist (hour 25, minute 61, February 30)
//! is a parse error at its column, never wrapped into another time nor left in the message; a
//! second of 60 (a leap second) reads as the last millisecond of its minute, as in syslog.

use nom::Parser;
use nom::bytes::complete::{tag, take_while_m_n};
use nom::character::complete::one_of;
use nom::combinator::opt;
use sluice_model::{Draft, Level, Sent};
use time::{Date, Month, PrimitiveDateTime, Time, UtcOffset};

/// How many words at the start of a line may hold the level keyword.
const LEVEL_WINDOW: usize = 10;

/// What the text grammar found in one line.
///
/// ```
/// use sluice_ingest::text::parse_line;
/// let line = parse_line("[2024-03-01T12:00:00Z] [ERROR] disk full").unwrap();
/// assert_eq!((line.timestamp, line.message.as_str()), (Some(1_709_294_400_000), "disk full"));
/// ```
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TextLine<'a> {
    /// Unix ms, when the line starts with a timestamp.
    pub timestamp: Option<i64>,
    /// The level of the keyword found, if any.
    pub level: Option<Level>,
    /// The line without timestamp, keyword and the separators around them.
    pub message: String,
    /// The line as sent.
    pub line: &'a str,
}

/// Exactly `count` ASCII digits, as a number.
fn digits<'a>(count: usize) -> impl Parser<&'a str, Output = u32, Error = nom::error::Error<&'a str>> {
    move |input: &'a str| match input.as_bytes().get(..count).filter(|digits| digits.iter().all(u8::is_ascii_digit)) {
        Some(digits) => {
            let value = digits.iter().fold(0u32, |value, digit| value * 10 + u32::from(digit - b'0'));
            Ok((&input[count..], value))
        }
        None => Err(nom::Err::Error(nom::error::Error::new(input, nom::error::ErrorKind::Digit))),
    }
}

type Stamp = (i32, u32, u32, u32, u32, u32, u32, Option<i32>);

/// `HH:MM:SS[(.|,)fraction][zone]` after a date; returns the parts and the rest.
fn clock(input: &str) -> nom::IResult<&str, (u32, u32, u32, u32, Option<i32>)> {
    let (rest, (hour, _, minute, _, second)) = (digits(2), tag(":"), digits(2), tag(":"), digits(2)).parse(input)?;
    let (rest, fraction) = opt((one_of(".,"), take_while_m_n(1, 9, |c: char| c.is_ascii_digit()))).parse(rest)?;
    let nanos = fraction.map_or(0, |(_, digits)| {
        let value: u32 = digits.parse().unwrap_or(0);
        value * 10u32.pow(9 - digits.len() as u32)
    });
    let (rest, zone) = opt(zone).parse(rest)?;
    Ok((rest, (hour, minute, second, nanos, zone)))
}

/// `Z`, `+hh:mm`, `-hhmm`: the offset in seconds.
fn zone(input: &str) -> nom::IResult<&str, i32> {
    if let Some(rest) = input.strip_prefix('Z') {
        return Ok((rest, 0));
    }
    let (rest, (sign, hours, _, minutes)) = (one_of("+-"), digits(2), opt(tag(":")), digits(2)).parse(input)?;
    // An offset past 23:59 cannot exist (RFC 3339): out of `UtcOffset`'s range, so `to_ms` refuses it.
    if hours > 23 || minutes > 59 {
        return Ok((rest, i32::MAX));
    }
    let seconds = (hours * 3600 + minutes * 60) as i32;
    Ok((rest, if sign == '-' { -seconds } else { seconds }))
}

fn iso_stamp(input: &str) -> nom::IResult<&str, Stamp> {
    let (rest, (year, _, month, _, day, _)) =
        (digits(4), tag("-"), digits(2), tag("-"), digits(2), one_of("T ")).parse(input)?;
    let (rest, (hour, minute, second, nanos, zone)) = clock(rest)?;
    Ok((rest, (year as i32, month, day, hour, minute, second, nanos, zone)))
}

fn us_stamp(input: &str) -> nom::IResult<&str, Stamp> {
    let (rest, (month, _, day, _, year, _)) =
        (digits(2), tag("/"), digits(2), tag("/"), digits(4), tag(" ")).parse(input)?;
    let (rest, (hour, minute, second, nanos, zone)) = clock(rest)?;
    Ok((rest, (year as i32, month, day, hour, minute, second, nanos, zone)))
}

/// The moment a stamp names, in Unix ms; `None` when its date, time or zone cannot exist.
fn to_ms((year, month, day, hour, minute, second, nanos, zone): Stamp) -> Option<i64> {
    let date =
        Date::from_calendar_date(year, Month::try_from(u8::try_from(month).ok()?).ok()?, u8::try_from(day).ok()?)
            .ok()?;
    // A leap second is the last millisecond of its minute.
    let (second, nanos) = if second == 60 { (59, 999_000_000) } else { (second, nanos) };
    let time =
        Time::from_hms_nano(u8::try_from(hour).ok()?, u8::try_from(minute).ok()?, u8::try_from(second).ok()?, nanos)
            .ok()?;
    let offset = UtcOffset::from_whole_seconds(zone.unwrap_or(0)).ok()?;
    let moment = PrimitiveDateTime::new(date, time).assume_offset(offset);
    i64::try_from(moment.unix_timestamp_nanos() / 1_000_000).ok()
}

/// Whether `text` is a whole timestamp of the grammar's shape (`2024-02-30T12:00:00Z`,
/// `03/01/2024 25:00:00`) naming a date or time that cannot exist: CSV's `timestamp` cells
/// refuse those as the text grammar does.
pub(crate) fn is_impossible_stamp(text: &str) -> bool {
    let text = text.trim();
    iso_stamp(text).or_else(|_| us_stamp(text)).is_ok_and(|(rest, stamp)| rest.is_empty() && to_ms(stamp).is_none())
}

/// A line that starts with a timestamp whose date or time cannot exist.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ImpossibleStamp {
    /// The 1-based column (in characters) where the timestamp starts.
    pub column: usize,
}

/// What a line starting with an impossible timestamp fails with, after `expected`.
pub(crate) const IMPOSSIBLE_STAMP: &str = "a date and time that exist";

/// A keyword of up to 8 ASCII lower-case letters as one number, first letter lowest.
const fn packed(word: &[u8]) -> u64 {
    let mut number = 0;
    let mut at = 0;
    while at < word.len() {
        number |= (word[at] as u64) << (8 * at);
        at += 1;
    }
    number
}

/// The level a keyword names, if it is one (any case).
///
/// The word's first eight bytes are read as one number with each byte `| 0x20`: that maps an
/// upper-case letter to its lower-case one and no other byte to a letter, so one comparison
/// per keyword decides, without copying or lowering the word (a CSV level column asks once
/// per row, the text format once per line).
pub(crate) fn keyword_level(word: &str) -> Option<Level> {
    let bytes = word.as_bytes();
    if !(3..=9).contains(&bytes.len()) {
        return None;
    }
    let (head, tail) = bytes.split_at(bytes.len().min(8));
    let folded =
        head.iter().enumerate().fold(0_u64, |number, (at, byte)| number | (u64::from(byte | 0x20) << (8 * at)));
    if let [last] = tail {
        return (folded == packed(b"emergenc") && last | 0x20 == b'y').then_some(Level::Error);
    }
    KEYWORDS.iter().find(|(keyword, _)| *keyword == folded).map(|(_, level)| *level)
}

/// The level keywords of up to eight letters, packed (`emergency` is read apart).
const KEYWORDS: [(u64, Level); 14] = [
    (packed(b"error"), Level::Error),
    (packed(b"err"), Level::Error),
    (packed(b"fatal"), Level::Error),
    (packed(b"severe"), Level::Error),
    (packed(b"critical"), Level::Error),
    (packed(b"crit"), Level::Error),
    (packed(b"alert"), Level::Error),
    (packed(b"emerg"), Level::Error),
    (packed(b"warn"), Level::Warn),
    (packed(b"warning"), Level::Warn),
    (packed(b"info"), Level::Info),
    (packed(b"notice"), Level::Info),
    (packed(b"debug"), Level::Debug),
    (packed(b"trace"), Level::Debug),
];

/// A word that carries a level: `[LEVEL]`, `LEVEL:`, `LEVEL,`, `level=LEVEL`, or bare. A bare
/// keyword must be upper or title case (`INFO`, `Info`) unless it directly follows the
/// timestamp, so an ordinary lower-case "error" in a sentence is not taken for a level.
fn word_level(word: &str, right_after_timestamp: bool) -> Option<Level> {
    if word.len() > 20 {
        return None;
    }
    if let Some(inner) = word.strip_prefix('[').and_then(|inner| inner.strip_suffix(']')) {
        return keyword_level(inner);
    }
    for prefix in ["level=", "lvl=", "severity="] {
        if let Some(value) = word.strip_prefix(prefix) {
            return keyword_level(value.trim_matches('"'));
        }
    }
    if let Some(inner) = word.strip_suffix(':').or_else(|| word.strip_suffix(',')) {
        return keyword_level(inner);
    }
    let level = keyword_level(word)?;
    let tail = word.as_bytes().get(1..).unwrap_or_default();
    let cased = tail.iter().all(u8::is_ascii_uppercase)
        || tail.iter().all(u8::is_ascii_lowercase) && word.starts_with(|c: char| c.is_ascii_uppercase());
    (cased || right_after_timestamp).then_some(level)
}

/// Separators that surround a timestamp or keyword and go with it.
fn is_separator(c: char) -> bool {
    c.is_whitespace() || matches!(c, '-' | ':' | ',' | '|')
}

/// Reads one line of text.
///
/// ```
/// use sluice_ingest::text::parse_line;
/// let line = parse_line("2015-07-29 17:41:44,747 - WARN  [QuorumPeer] - Notification time out: 3200").unwrap();
/// assert_eq!(line.timestamp, Some(1_438_191_704_747));
/// assert_eq!(line.level, Some(sluice_model::Level::Warn));
/// assert_eq!(line.message, "[QuorumPeer] - Notification time out: 3200");
/// // February 30 does not exist: an error at the timestamp's column, not another day.
/// assert_eq!(parse_line(" [2024-02-30 12:00:00] x").unwrap_err().column, 3);
/// ```
pub fn parse_line(line: &str) -> Result<TextLine<'_>, ImpossibleStamp> {
    let trimmed = line.trim();
    let bracketed = trimmed.strip_prefix('[');
    let candidate = bracketed.unwrap_or(trimmed);
    let stamped = match iso_stamp(candidate).or_else(|_| us_stamp(candidate)) {
        Ok((rest, stamp)) => {
            let Some(ms) = to_ms(stamp) else {
                let indent = line[..line.len() - line.trim_start().len()].chars().count();
                return Err(ImpossibleStamp { column: indent + usize::from(bracketed.is_some()) + 1 });
            };
            let rest = if bracketed.is_some() { rest.strip_prefix(']') } else { Some(rest) };
            rest.map(|rest| (rest, ms))
        }
        Err(_) => None,
    };
    let (rest, timestamp) = match stamped {
        Some((rest, ms)) => (rest, Some(ms)),
        None => (trimmed, None),
    };

    let body = rest.trim_start_matches(is_separator);
    let mut level = None;
    let mut message = None;
    let bytes = body.as_bytes();
    let mut end = 0;
    for index in 0..LEVEL_WINDOW {
        let Some(start) = bytes[end..].iter().position(|byte| !byte.is_ascii_whitespace()).map(|skip| end + skip)
        else {
            break;
        };
        end = bytes[start..].iter().position(u8::is_ascii_whitespace).map_or(bytes.len(), |length| start + length);
        // Both ends sit next to ASCII whitespace or the ends of `body`: character boundaries.
        let (Some(word), Some(before), Some(after)) = (body.get(start..end), body.get(..start), body.get(end..)) else {
            break;
        };
        if let Some(found) = word_level(word, index == 0 && timestamp.is_some()) {
            level = Some(found);
            let before = before.trim_end_matches(is_separator);
            let after = after.trim_start_matches(is_separator);
            message = Some(match (before.is_empty(), after.is_empty()) {
                (true, _) => after.to_owned(),
                (false, true) => before.to_owned(),
                (false, false) => [before, after].join(" "),
            });
            break;
        }
    }
    let message = match message {
        Some(message) if !message.is_empty() => message,
        // Nothing but a timestamp and a keyword: keep the line, a log needs a message.
        Some(_) => trimmed.to_owned(),
        None if body.is_empty() => trimmed.to_owned(),
        None => body.to_owned(),
    };
    Ok(TextLine { timestamp, level, message, line })
}

/// The draft entry of one line.
pub(crate) fn draft(parsed: TextLine<'_>, default_level: Option<&String>) -> Draft {
    let level = match parsed.level {
        Some(level) => Sent::Value(level),
        // No keyword: the query default (checked like a sent value), else info.
        None if default_level.is_some() => Sent::Absent,
        None => Sent::Value(Level::Info),
    };
    Draft {
        level,
        message: Sent::Value(parsed.message),
        timestamp: Sent::from_option(parsed.timestamp),
        ..Draft::default()
    }
}

/// Parses a text body: one log per line; blank lines are skipped. `source` and
/// `environment` normally come from the query defaults.
///
/// ```
/// use sluice_ingest::{Defaults, Options, text::parse_text};
/// let mut options = Options::new(1_795_348_800_000); // received 2026-11-22
/// options.defaults = Defaults { source: Some("api".into()), environment: Some("staging".into()), ..Defaults::default() };
/// let batch = parse_text(b"2024-03-01 12:00:00 ERROR disk full\nplain line\n", &options).unwrap();
/// assert_eq!((batch.entries[0].level.as_str(), batch.entries[0].message.as_str()), ("error", "disk full"));
/// assert_eq!(batch.entries[1].level.as_str(), "info");
/// ```
pub fn parse_text(body: &[u8], options: &crate::Options) -> Result<crate::Batch, crate::IngestError> {
    let mut collector = crate::json::Collector::for_lines(options, body);
    for (number, line) in crate::frame::lines(body, crate::Format::Text)? {
        if collector.at_limit() {
            break;
        }
        let parsed = parse_line(line).map_err(|error| crate::ParseError {
            format: crate::Format::Text,
            line: Some(number),
            column: Some(error.column),
            reason: format!("expected {IMPOSSIBLE_STAMP}"),
        })?;
        // Always true here: the limit was checked before the line was read.
        let _ = collector.push(draft(parsed, options.defaults.level.as_ref()));
    }
    collector.finish()
}

#[cfg(test)]
mod tests {
    use proptest::prelude::*;

    use super::*;

    /// The keywords as a plain lower-cased lookup.
    fn reference(word: &str) -> Option<Level> {
        match word.to_ascii_lowercase().as_str() {
            "error" | "err" | "fatal" | "severe" | "critical" | "crit" | "alert" | "emerg" | "emergency" => {
                Some(Level::Error)
            }
            "warn" | "warning" => Some(Level::Warn),
            "info" | "notice" => Some(Level::Info),
            "debug" | "trace" => Some(Level::Debug),
            _ => None,
        }
    }

    const KEYWORDS: [&str; 18] = [
        "error",
        "err",
        "fatal",
        "severe",
        "critical",
        "crit",
        "alert",
        "emerg",
        "emergency",
        "warn",
        "warning",
        "info",
        "notice",
        "debug",
        "trace",
        "emergencx",
        "emergenc",
        "infox",
    ];

    /// docs/API.md (text): a timestamp that cannot exist is a parse error naming the line and
    /// its column, never another time and never left in the message; a leap second exists.
    #[test]
    fn impossible_timestamps_are_parse_errors_naming_line_and_column() {
        let options = crate::Options::new(1_795_348_800_000);
        for (line, column) in [
            ("2024-02-30 12:00:00 ERROR x", 1),
            ("2024-03-01T25:00:00Z x", 1),
            ("2024-03-01 12:61:00 x", 1),
            ("2024-03-01 12:00:61 x", 1),
            ("2024-13-01 12:00:00 x", 1),
            ("  [2023-02-29 12:00:00] x", 4),
            ("04/31/2024 12:00:00 x", 1),
            ("2024-03-01T12:00:00+24:00 x", 1),
        ] {
            let body = format!("2024-03-01 12:00:00 fine\n{line}\n");
            let Err(crate::IngestError::Parse(error)) = parse_text(body.as_bytes(), &options) else {
                panic!("{line} was accepted");
            };
            assert_eq!((error.line, error.column), (Some(2), Some(column)), "{line}");
            assert_eq!(
                error.to_string(),
                format!("Text line 2: expected a date and time that exist at column {column}")
            );
        }
        let leap = parse_line("2016-12-31 23:59:60 leap").expect("a leap second exists");
        assert_eq!(leap.timestamp, Some(1_483_228_799_999));
        // Not a timestamp's shape at all: text, as before.
        let plain = parse_line("2024-02-30 is not a day").expect("no timestamp");
        assert_eq!((plain.timestamp, plain.message.as_str()), (None, "2024-02-30 is not a day"));
        assert!(is_impossible_stamp("2024-02-30T12:00:00Z") && !is_impossible_stamp("2024-02-29T12:00:00Z"));
        assert!(!is_impossible_stamp("yesterday") && !is_impossible_stamp("2024-02-30T12:00:00Z and more"));
    }

    #[test]
    fn every_keyword_in_any_case() {
        for keyword in KEYWORDS {
            for word in
                [keyword.to_owned(), keyword.to_ascii_uppercase(), format!("{keyword}\0"), format!("{keyword} ")]
            {
                assert_eq!(keyword_level(&word), reference(&word), "{word:?}");
            }
        }
        assert_eq!(keyword_level("EMERGENCY"), Some(Level::Error));
        assert_eq!(keyword_level("Warning"), Some(Level::Warn));
        // Bytes that differ from a letter only in bit 0x20 are not that letter.
        assert_eq!(keyword_level("\u{9}nfo"), None);
        assert_eq!(keyword_level("inf\u{f}"), None);
    }

    proptest! {
        /// Any word, near-keywords included (case flips, bit 0x20 flips, cut or grown).
        #[test]
        fn matches_the_plain_lookup(
            keyword in proptest::sample::select(&KEYWORDS[..]),
            flips in proptest::collection::vec(any::<bool>(), 9),
            raw in proptest::collection::vec(any::<u8>(), 0..10),
            cut in 0_usize..10,
        ) {
            let mut bytes: Vec<u8> = keyword.bytes().zip(&flips).map(|(byte, flip)| if *flip { byte ^ 0x20 } else { byte }).collect();
            bytes.truncate(cut.max(3));
            if let Ok(word) = std::str::from_utf8(&bytes) {
                prop_assert_eq!(keyword_level(word), reference(word), "{:?}", word);
            }
            let noise = String::from_utf8_lossy(&raw);
            prop_assert_eq!(keyword_level(&noise), reference(&noise), "{:?}", noise);
        }
    }
}
