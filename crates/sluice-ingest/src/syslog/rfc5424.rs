//! RFC 5424: the header after PRI (VERSION, TIMESTAMP, HOSTNAME, APP-NAME, PROCID, MSGID),
//! STRUCTURED-DATA with its escapes, and the RFC 3339 TIMESTAMP reader (also used inside
//! RFC 3164 frames).

use super::*;

/// An RFC 5424 TIMESTAMP (also accepted inside RFC 3164 frames), up to the next space:
/// `YYYY-MM-DDTHH:MM:SS[.1*6DIGIT](Z|(+|-)HH:MM)`, upper-case `T` and `Z` as RFC 5424 wants,
/// read byte by byte; `time` checks the calendar. A leap second (`23:59:60` UTC at the end of
/// a month) reads as the millisecond before the next minute, as `time`'s RFC 3339 parser does.
pub(super) fn rfc3339_timestamp(input: &str) -> Res<'_, i64> {
    let fail = || nom::Err::Error(nom::error::Error::new(input, nom::error::ErrorKind::Verify));
    let end = input.bytes().position(|byte| byte == b' ').unwrap_or(input.len());
    let (token, rest) = input.split_at(end);
    rfc3339_ms(token.as_bytes()).map(|ms| (rest, ms)).ok_or_else(fail)
}

/// The Unix milliseconds of an RFC 5424 TIMESTAMP that is all of `bytes`.
pub(super) fn rfc3339_ms(bytes: &[u8]) -> Option<i64> {
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

pub(super) type SdElement<'a> = (&'a str, Vec<(&'a str, Cow<'a, str>)>);

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

/// The RFC 5424 header and body after PRI; `None` when the line is not RFC 5424 at all
/// (no VERSION), an error when it is but breaks the grammar.
pub(super) fn rfc5424<'a>(
    line: &'a str,
    after_pri: &'a str,
    pri: Option<u8>,
) -> Option<Result<SyslogMessage<'a>, SyslogError>> {
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
