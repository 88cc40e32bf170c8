//! Text as PostgreSQL can hold it. `TEXT` cannot contain U+0000, which JSON (`"\u0000"`) and
//! so a client may send; blocks keep it. So that a client cannot tell the stores apart, every
//! text this store writes in a `TEXT` column (flows, counters' sources and datasets, and the
//! logs kept as rows by earlier builds) is encoded reversibly: U+0000 becomes U+10FFFF followed by
//! `0`, and U+10FFFF (a noncharacter, the escape) becomes U+10FFFF followed by `E`. Text
//! with neither, nearly all of it, is written and read as it is.
//!
//! The encoding maps each character to a fixed string, so a needle inside a text stays
//! inside it once both are encoded: exact filters of flows and stats compare encoded forms.

use std::borrow::Cow;

/// The escape character.
const ESCAPE: char = '\u{10FFFF}';

/// Whether `text` holds a character the encoding changes (two memchr-driven scans).
fn needs_encoding(text: &str) -> bool {
    text.as_bytes().contains(&0) || text.contains(ESCAPE)
}

/// `text` as stored.
pub(crate) fn encode(text: &str) -> Cow<'_, str> {
    if !needs_encoding(text) {
        return Cow::Borrowed(text);
    }
    let mut encoded = String::with_capacity(text.len() + 8);
    for character in text.chars() {
        match character {
            '\0' => {
                encoded.push(ESCAPE);
                encoded.push('0');
            }
            ESCAPE => {
                encoded.push(ESCAPE);
                encoded.push('E');
            }
            other => encoded.push(other),
        }
    }
    Cow::Owned(encoded)
}

/// Stored text as it was sent.
pub(crate) fn decode(text: String) -> String {
    if !text.contains(ESCAPE) {
        return text;
    }
    let mut decoded = String::with_capacity(text.len());
    let mut characters = text.chars();
    while let Some(character) = characters.next() {
        if character != ESCAPE {
            decoded.push(character);
            continue;
        }
        match characters.next() {
            Some('0') => decoded.push('\0'),
            // `E`, or (never written by `encode`) anything else: keep the escape itself.
            Some('E') | None => decoded.push(ESCAPE),
            Some(other) => {
                decoded.push(ESCAPE);
                decoded.push(other);
            }
        }
    }
    decoded
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn round_trips_and_leaves_plain_text_alone() {
        for text in ["", "plain", "nul\0inside", "\0", "\u{10FFFF}", "\u{10FFFF}0", "\0\u{10FFFF}E\0", "é ☃ \u{F4}"]
        {
            let encoded = encode(text);
            assert!(!encoded.contains('\0'), "{text:?}");
            assert_eq!(decode(encoded.clone().into_owned()), text, "{text:?}");
        }
        assert!(matches!(encode("plain ☃ text"), Cow::Borrowed(_)));
    }

    #[test]
    fn a_needle_inside_a_text_stays_inside_once_encoded() {
        let text = "a\0b\u{10FFFF}c\0";
        for start in 0..text.len() {
            for end in start..=text.len() {
                let (Some(needle), true) = (text.get(start..end), text.is_char_boundary(start)) else { continue };
                assert!(encode(text).contains(encode(needle).as_ref()), "{needle:?}");
            }
        }
    }
}
