//! RFC 3164 (BSD syslog): `Mmm dd [yyyy] hh:mm:ss` stamps with the year guessed from the
//! receive time, HOSTNAME, TAG and PID, with the fallbacks the module doc lists.

use super::*;

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

/// `Mmm dd [yyyy] hh:mm:ss[:]`, with the year guessed from `now_ms` when absent: this year,
/// or the previous one when that would put the message more than 24 hours in the future (for
/// February 29, the last leap year). A
/// stamp of that shape whose date or time cannot exist (hour 25, minute 61, February 30) is a
/// [`nom::Err::Failure`] at its start, never wrapped into another time (docs/API.md, syslog);
/// a second of 60 (a leap second) reads as the millisecond before the next minute.
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
    let impossible = || nom::Err::Failure(nom::error::Error::new(input, nom::error::ErrorKind::Verify));
    let leap = second == 60;
    let field = |value: u32| u8::try_from(value).map_err(|_| impossible());
    let time = Time::from_hms(field(hour)?, field(minute)?, field(if leap { 59 } else { second })?)
        .map_err(|_| impossible())?;
    let at = |year: i32| {
        let date = Date::from_calendar_date(year, month, u8::try_from(day).ok()?).ok()?;
        let ms = PrimitiveDateTime::new(date, time).assume_utc().unix_timestamp() * 1000;
        Some(if leap { ms + 999 } else { ms })
    };
    let timestamp = match year {
        Some(year) => at(year as i32),
        None => {
            let this_year = OffsetDateTime::from_unix_timestamp(now_ms / 1000).map(|now| now.year()).unwrap_or(1970);
            // The latest year in which the date exists and is at most a day ahead: this year or
            // the last one, or for February 29 the last leap year.
            (0..8).find_map(|back| at(this_year - back).filter(|ms| *ms <= now_ms + 86_400_000))
        }
    };
    Ok((rest, Some(timestamp.ok_or_else(impossible)?)))
}

/// A TAG: up to 48 characters other than space, `[` and `:`.
fn tag_name(input: &str) -> Res<'_, &str> {
    take_while_m_n(1, 48, |c: char| c != ' ' && c != '[' && c != ':').parse(input)
}

/// The RFC 3164 part after PRI (or the whole line, when unframed).
pub(super) fn rfc3164<'a>(
    line: &str,
    after_pri: &'a str,
    pri: Option<u8>,
    now_ms: i64,
) -> Result<SyslogMessage<'a>, SyslogError> {
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
    let (rest, timestamp) = match stamped {
        Ok(found) => found,
        Err(nom::Err::Failure(error)) => {
            return Err(SyslogError { column: column(line, error.input), expected: "a date and time that exist" });
        }
        Err(_) => {
            // No timestamp: RFC 3164 §4.3.2 treats everything after PRI as MSG.
            message.message = body;
            return Ok(message);
        }
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
            return Ok(message);
        }
    }
    message.message = message_part(rest);
    Ok(message)
}
