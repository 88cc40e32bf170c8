//! Framing: cutting a line-oriented body into numbered lines, separately from reading each
//! line's format.

use crate::{Format, ParseError};

/// `body` as text; invalid UTF-8 is a parse error naming the line and column it is at.
pub(crate) fn utf8(body: &[u8], format: Format) -> Result<&str, ParseError> {
    std::str::from_utf8(body).map_err(|error| {
        let valid = &body[..error.valid_up_to()];
        let line = count_lines(valid);
        let line_start = valid.iter().rposition(|byte| *byte == b'\n').map_or(0, |position| position + 1);
        let column = String::from_utf8_lossy(&valid[line_start..]).chars().count() + 1;
        ParseError { format, line: Some(line), column: Some(column), reason: "invalid UTF-8".to_owned() }
    })
}

/// The non-blank lines of `body` with their 1-based numbers (blank lines count), `\r` of
/// CRLF removed. Invalid UTF-8 is a parse error naming the line it is on.
pub(crate) fn lines(body: &[u8], format: Format) -> Result<impl Iterator<Item = (usize, &str)>, ParseError> {
    let text = utf8(body, format)?;
    Ok(text
        .split('\n')
        .enumerate()
        .map(|(index, line)| (index + 1, line.strip_suffix('\r').unwrap_or(line)))
        .filter(|(_, line)| !line.trim().is_empty()))
}

/// Lines in `body` (line breaks plus one). Counted per 255-byte chunk into a byte counter,
/// which the compiler turns into vector compares: about five times faster than counting
/// each match, and it runs over every line-oriented body.
pub(crate) fn count_lines(body: &[u8]) -> usize {
    let breaks: usize = body
        .chunks(255)
        .map(|chunk| usize::from(chunk.iter().fold(0u8, |count, &byte| count + u8::from(byte == b'\n'))))
        .sum();
    breaks + 1
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn lines_are_counted_across_chunk_edges() {
        for length in [0, 1, 254, 255, 256, 600] {
            let all_breaks = vec![b'\n'; length];
            assert_eq!(count_lines(&all_breaks), length + 1);
            let mixed: Vec<u8> = (0..length).map(|index| if index % 3 == 0 { b'\n' } else { b'x' }).collect();
            assert_eq!(count_lines(&mixed), length.div_ceil(3) + 1);
        }
    }
}
