//! Framing: cutting a line-oriented body into numbered lines, separately from reading each
//! line's format.

use crate::{Format, ParseError};

/// The non-blank lines of `body` with their 1-based numbers (blank lines count), `\r` of
/// CRLF removed. Invalid UTF-8 is a parse error naming the line it is on.
pub(crate) fn lines(body: &[u8], format: Format) -> Result<impl Iterator<Item = (usize, &str)>, ParseError> {
    let text = std::str::from_utf8(body).map_err(|error| {
        let valid = &body[..error.valid_up_to()];
        let line = valid.iter().filter(|byte| **byte == b'\n').count() + 1;
        let line_start = valid.iter().rposition(|byte| *byte == b'\n').map_or(0, |position| position + 1);
        let column = String::from_utf8_lossy(&valid[line_start..]).chars().count() + 1;
        ParseError { format, line: Some(line), column: Some(column), reason: "invalid UTF-8".to_owned() }
    })?;
    Ok(text
        .split('\n')
        .enumerate()
        .map(|(index, line)| (index + 1, line.strip_suffix('\r').unwrap_or(line)))
        .filter(|(_, line)| !line.trim().is_empty()))
}
