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
/// let line = parse_line("[2024-03-01T12:00:00Z] [ERROR] disk full");
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

fn to_ms((year, month, day, hour, minute, second, nanos, zone): Stamp) -> Option<i64> {
    let date =
        Date::from_calendar_date(year, Month::try_from(u8::try_from(month).ok()?).ok()?, u8::try_from(day).ok()?)
            .ok()?;
    let time =
        Time::from_hms_nano(u8::try_from(hour).ok()?, u8::try_from(minute).ok()?, u8::try_from(second).ok()?, nanos)
            .ok()?;
    let offset = UtcOffset::from_whole_seconds(zone.unwrap_or(0)).ok()?;
    let moment = PrimitiveDateTime::new(date, time).assume_offset(offset);
    i64::try_from(moment.unix_timestamp_nanos() / 1_000_000).ok()
}

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
/// let line = parse_line("2015-07-29 17:41:44,747 - WARN  [QuorumPeer] - Notification time out: 3200");
/// assert_eq!(line.timestamp, Some(1_438_191_704_747));
/// assert_eq!(line.level, Some(sluice_model::Level::Warn));
/// assert_eq!(line.message, "[QuorumPeer] - Notification time out: 3200");
/// ```
pub fn parse_line(line: &str) -> TextLine<'_> {
    let trimmed = line.trim();
    let bracketed = trimmed.strip_prefix('[');
    let candidate = bracketed.unwrap_or(trimmed);
    let stamped = iso_stamp(candidate).or_else(|_| us_stamp(candidate)).ok().and_then(|(rest, stamp)| {
        let rest = if bracketed.is_some() { rest.strip_prefix(']')? } else { rest };
        Some((rest, to_ms(stamp)?))
    });
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
    TextLine { timestamp, level, message, line }
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
    for (_, line) in crate::frame::lines(body, crate::Format::Text)? {
        if !collector.push(draft(parse_line(line), options.defaults.level.as_ref())) {
            break;
        }
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
