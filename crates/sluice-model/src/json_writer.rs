//! Writing JSON objects into one string: keys written once for many objects ([`JsonKey`]),
//! members pushed one by one ([`ObjectWriter`], [`Member`]), strings escaped only when they
//! need it ([`EscapeFree`], a word-at-a-time check), and the result kept as a [`JsonObject`]
//! without being parsed again.

use serde::{Serialize, Serializer};
use serde_json::Value;
use serde_json::value::RawValue;

use crate::JsonObject;

/// An object key written as JSON once, for writing many objects with the same keys, such as
/// one per CSV row. Held as `,"name":"`, separator and a string value's opening quote
/// included, so a string member costs two copies.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct JsonKey(String);

impl JsonKey {
    /// The key `name`, escaped as JSON needs.
    pub fn new(name: &str) -> Self {
        let mut text = String::with_capacity(name.len() + 4);
        text.push(',');
        push_string(&mut text, name);
        text.push_str(":\"");
        JsonKey(text)
    }

    /// How many bytes the key adds to an object: quotes, colon and separator included.
    pub fn len(&self) -> usize {
        self.0.len() - 1
    }

    /// Always false: a key's JSON holds at least its quotes.
    pub fn is_empty(&self) -> bool {
        self.0.is_empty()
    }
}

/// A JSON object written member by member into one string, then kept as a [`JsonObject`].
/// A key given twice is written twice, so callers pass distinct keys.
///
/// ```
/// use sluice_model::{JsonKey, Member, ObjectWriter};
/// let region = JsonKey::new("region");
/// let mut writer = ObjectWriter::with_capacity(32);
/// writer.push(&region, Member::Str("eu"));
/// writer.push_named("n", Member::Value(&1.into()));
/// assert_eq!(writer.finish().as_str(), r#"{"region":"eu","n":1}"#);
/// ```
#[derive(Debug)]
pub struct ObjectWriter {
    text: String,
}

impl ObjectWriter {
    /// An empty object with room for `capacity` bytes of members.
    #[inline]
    pub fn with_capacity(capacity: usize) -> Self {
        let mut text = String::with_capacity(capacity + 2);
        text.push('{');
        ObjectWriter { text }
    }

    /// Whether no member was written yet.
    #[inline]
    pub fn is_empty(&self) -> bool {
        self.text.len() == 1
    }

    /// Whether the object being written (the innermost, inside [`ObjectWriter::push_object`])
    /// has no member yet.
    #[inline]
    fn at_start(&self) -> bool {
        self.text.ends_with('{')
    }

    /// Appends a member under a key written beforehand.
    #[inline]
    pub fn push(&mut self, key: &JsonKey, value: Member<'_>) {
        // The first member goes without the separator.
        let key = if self.at_start() { &key.0[1..] } else { key.0.as_str() };
        // The usual member, a string needing no escape: key with opening quote, text, quote.
        if let Member::Str(text) = value
            && !needs_escape(text.as_bytes())
        {
            self.text.push_str(key);
            self.text.push_str(text);
            self.text.push('"');
            return;
        }
        self.text.push_str(&key[..key.len() - 1]);
        self.value(value);
    }

    /// Appends a string member whose text lies inside `clean`, bytes checked beforehand to
    /// need no escape: no check of its own. Text from elsewhere is checked as by
    /// [`ObjectWriter::push`]. (A CSV row checks its cells' bytes once, not cell by cell.)
    ///
    /// ```
    /// use sluice_model::{EscapeFree, JsonKey, ObjectWriter};
    /// let row = "eu-west,db-1";
    /// let clean = EscapeFree::check(row.as_bytes());
    /// let mut writer = ObjectWriter::with_capacity(64);
    /// writer.push_within(&JsonKey::new("region"), &row[..7], &clean);
    /// writer.push_within(&JsonKey::new("quote"), "say \"hi\"", &clean);
    /// assert_eq!(writer.finish().as_str(), r#"{"region":"eu-west","quote":"say \"hi\""}"#);
    /// ```
    #[inline]
    pub fn push_within(&mut self, key: &JsonKey, text: &str, clean: &EscapeFree<'_>) {
        if !clean.holds(text.as_bytes()) {
            return self.push_checked(key, text);
        }
        let key = if self.at_start() { &key.0[1..] } else { key.0.as_str() };
        self.text.push_str(key);
        self.text.push_str(text);
        self.text.push('"');
    }

    #[cold]
    #[inline(never)]
    fn push_checked(&mut self, key: &JsonKey, text: &str) {
        self.push(key, Member::Str(text));
    }

    /// Appends a member under a key given as text.
    pub fn push_named(&mut self, key: &str, value: Member<'_>) {
        self.separate();
        push_string(&mut self.text, key);
        self.text.push(':');
        self.value(value);
    }

    /// Appends a member whose value is an object, written by `fill` into the same string.
    ///
    /// ```
    /// use sluice_model::{Member, ObjectWriter};
    /// let mut writer = ObjectWriter::with_capacity(32);
    /// writer.push_object("sd", |inner| inner.push_named("a", Member::Str("1")));
    /// writer.push_named("b", Member::Str("2"));
    /// assert_eq!(writer.finish().as_str(), r#"{"sd":{"a":"1"},"b":"2"}"#);
    /// ```
    pub fn push_object(&mut self, key: &str, fill: impl FnOnce(&mut ObjectWriter)) {
        self.separate();
        push_string(&mut self.text, key);
        self.text.push_str(":{");
        fill(self);
        self.text.push('}');
    }

    /// The object.
    #[inline]
    pub fn finish(mut self) -> JsonObject {
        self.text.push('}');
        JsonObject::from_written(self.text)
    }

    fn separate(&mut self) {
        if !self.at_start() {
            self.text.push(',');
        }
    }

    fn value(&mut self, value: Member<'_>) {
        match value {
            Member::Str(value) => push_string(&mut self.text, value),
            Member::Json(raw) => self.text.push_str(raw.get()),
            Member::Object(object) => self.text.push_str(object.as_str()),
            Member::Value(value) => self.text.push_str(&value.to_string()),
        }
    }
}

/// Appends `text` as a JSON string: copied as is when nothing needs escaping, else escaped by
/// serde_json.
fn push_string(out: &mut String, text: &str) {
    if needs_escape(text.as_bytes()) {
        let start = out.len();
        if serde_json::to_writer(StringWriter(out), text).is_err() {
            out.truncate(start);
            out.push_str(&Value::from(text).to_string());
        }
    } else {
        out.reserve(text.len() + 2);
        out.push('"');
        out.push_str(text);
        out.push('"');
    }
}

/// `io::Write` into a `String`, for serde_json's escaper: it writes whole UTF-8 sequences
/// (text between escapes, and escapes), so each write is checked text.
struct StringWriter<'a>(&'a mut String);

impl std::io::Write for StringWriter<'_> {
    fn write(&mut self, bytes: &[u8]) -> std::io::Result<usize> {
        let text =
            std::str::from_utf8(bytes).map_err(|error| std::io::Error::new(std::io::ErrorKind::InvalidData, error))?;
        self.0.push_str(text);
        Ok(bytes.len())
    }

    fn flush(&mut self) -> std::io::Result<()> {
        Ok(())
    }
}

/// Bytes JSON must escape in a string: control characters, `"` and `\`.
const ESCAPED: [bool; 256] = {
    let mut table = [false; 256];
    let mut byte = 0;
    while byte < 0x20 {
        table[byte] = true;
        byte += 1;
    }
    table[b'"' as usize] = true;
    table[b'\\' as usize] = true;
    table
};

/// Whether JSON needs an escape for some byte: a control character, `"` or `\`. Eight bytes
/// at a time (the classic "has a byte less than n / equal to c" word tests), the last few
/// from a table, since most strings here are short and clean. (Measured: merging the three
/// tests into one branch and reading the tail as an overlapping word both cost more.)
#[inline]
fn needs_escape(bytes: &[u8]) -> bool {
    const ONES: u64 = 0x0101_0101_0101_0101;
    const HIGHS: u64 = 0x8080_8080_8080_8080;
    let has_zero = |word: u64| word.wrapping_sub(ONES) & !word & HIGHS != 0;
    let has_less = |word: u64, limit: u64| word.wrapping_sub(ONES * limit) & !word & HIGHS != 0;
    let mut chunks = bytes.chunks_exact(8);
    for chunk in &mut chunks {
        let mut word = [0u8; 8];
        word.copy_from_slice(chunk);
        let word = u64::from_le_bytes(word);
        if has_less(word, 0x20)
            || has_zero(word ^ (ONES * u64::from(b'"')))
            || has_zero(word ^ (ONES * u64::from(b'\\')))
        {
            return true;
        }
    }
    chunks.remainder().iter().any(|&byte| ESCAPED[usize::from(byte)])
}

/// Bytes that hold nothing JSON must escape (no control character, `"` or `\\`), checked
/// once: [`ObjectWriter::push_within`] writes any string lying inside them without a check.
#[derive(Debug, Clone, Copy)]
pub struct EscapeFree<'a> {
    bytes: &'a [u8],
}

impl<'a> EscapeFree<'a> {
    /// `bytes` if nothing in them needs an escape, else nothing (strings are then checked one
    /// by one). Sixteen bytes at a time, in a loop the compiler turns into vector compares:
    /// meant for long runs, such as a CSV row's cells.
    ///
    /// ```
    /// use sluice_model::EscapeFree;
    /// assert!(EscapeFree::check(b"plain text, 100% clean").is_clean());
    /// assert!(!EscapeFree::check(b"a \"quote\"").is_clean());
    /// assert!(!EscapeFree::check(b"tab\there").is_clean());
    /// ```
    pub fn check(bytes: &'a [u8]) -> Self {
        let (blocks, rest) = bytes.as_chunks::<16>();
        for block in blocks {
            let mut found = false;
            for &byte in block {
                found |= (byte < 0x20) | (byte == b'"') | (byte == b'\\');
            }
            if found {
                return EscapeFree { bytes: &[] };
            }
        }
        EscapeFree { bytes: if needs_escape(rest) { &[] } else { bytes } }
    }

    /// Whether the bytes checked were all clean (else they are not covered at all).
    pub fn is_clean(&self) -> bool {
        !self.bytes.is_empty()
    }

    /// Whether `text` is a part of the checked bytes (the same memory, not equal content).
    #[inline]
    fn holds(&self, text: &[u8]) -> bool {
        // One subtraction: text before the checked bytes wraps to a huge offset.
        let offset = (text.as_ptr() as usize).wrapping_sub(self.bytes.as_ptr() as usize);
        offset <= self.bytes.len() && text.len() <= self.bytes.len() - offset
    }
}

/// One member value for [`JsonObject::from_members`].
#[derive(Debug, Clone, Copy)]
pub enum Member<'a> {
    /// A string.
    Str(&'a str),
    /// JSON text already checked.
    Json(&'a RawValue),
    /// An object.
    Object(&'a JsonObject),
    /// Any JSON value.
    Value(&'a Value),
}

impl Member<'_> {
    pub(crate) fn size_hint(&self) -> usize {
        match self {
            Member::Str(text) => text.len() + 2,
            Member::Json(raw) => raw.get().len(),
            Member::Object(object) => object.as_str().len(),
            Member::Value(_) => 16,
        }
    }
}

impl Serialize for Member<'_> {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        match self {
            Member::Str(text) => serializer.serialize_str(text),
            Member::Json(raw) => raw.serialize(serializer),
            Member::Object(object) => object.serialize(serializer),
            Member::Value(value) => value.serialize(serializer),
        }
    }
}

#[cfg(test)]
mod tests {
    use serde_json::{Map, json};

    use super::*;

    #[test]
    fn written_members_are_valid_json_whatever_the_text() {
        let tricky = ["", "plain", "quote \" and \\ backslash", "tab\tnew\nline\u{1}", "é ☃ \u{7f}", "}\"{"];
        for key in tricky {
            for value in tricky {
                let number = json!(1.5);
                let object = JsonObject::from_members(&[
                    (key, Member::Str(value)),
                    ("n", Member::Value(&number)),
                    ("o", Member::Object(&JsonObject::empty())),
                ]);
                let parsed = JsonObject::from_text(object.as_str().to_owned()).expect("valid JSON");
                assert_eq!(parsed.get(key), Some(json!(value)), "{key:?} {value:?}");
            }
        }
    }

    #[test]
    fn nested_objects_and_written_keys_make_valid_json() {
        let tricky = ["", "plain", "quote \" and \\ backslash", "tab\tnew\nline\u{1}", "é ☃", "}\"{"];
        for key in tricky {
            let written = JsonKey::new(key);
            let mut writer = ObjectWriter::with_capacity(0);
            writer.push_object("outer", |outer| {
                outer.push_object(key, |inner| inner.push(&written, Member::Str(key)));
                outer.push_named("next", Member::Str("after"));
            });
            writer.push(&written, Member::Value(&json!([1])));
            let object = JsonObject::from_text(writer.finish().as_str().to_owned()).expect("valid JSON");
            let mut outer = Map::new();
            outer.insert(key.to_owned(), json!({ key: key }));
            outer.insert("next".to_owned(), json!("after"));
            assert_eq!(object.get("outer"), Some(Value::Object(outer)), "{key:?}");
            assert_eq!(object.get(key), Some(json!([1])), "{key:?}");
        }
    }

    #[test]
    fn escape_check_matches_the_plain_definition() {
        // Every length around the eight-byte steps, every position, every byte, on clean
        // backgrounds of plain and of high bytes (borrows and the byte-wise tail).
        // The row check the same, around its sixteen-byte blocks.
        for len in 0..42 {
            for background in [b'a', 0x21, 0xff, 0x80] {
                assert!(!needs_escape(&vec![background; len]), "clean {background:#x} x {len}");
                assert_eq!(EscapeFree::check(&vec![background; len]).is_clean(), len > 0);
                for position in 0..len {
                    for byte in 0..=255u8 {
                        let mut text = vec![background; len];
                        text[position] = byte;
                        let plain = text.iter().any(|&b| b < 0x20 || b == b'"' || b == b'\\');
                        assert_eq!(needs_escape(&text), plain, "byte {byte:#x} at {position} of {len}");
                        assert_eq!(
                            !EscapeFree::check(&text).is_clean(),
                            plain,
                            "row: {byte:#x} at {position} of {len}"
                        );
                    }
                }
            }
        }
    }

    #[test]
    fn only_text_inside_the_checked_bytes_skips_its_own_check() {
        let row = "clean cells, all of them";
        let clean = EscapeFree::check(row.as_bytes());
        let dirty = String::from("a \"quoted\" cell");
        let key = JsonKey::new("k");
        // Inside the row; elsewhere in memory; and the dirty text when the row was not clean.
        for (text, clean) in [
            (&row[6..11], clean),
            (row, clean),
            (&row[24..], clean),
            (dirty.as_str(), clean),
            (&dirty[2..], EscapeFree::check(dirty.as_bytes())),
        ] {
            let mut within = ObjectWriter::with_capacity(0);
            within.push_within(&key, text, &clean);
            let mut checked = ObjectWriter::with_capacity(0);
            checked.push(&key, Member::Str(text));
            assert_eq!(within.finish().as_str(), checked.finish().as_str(), "{text:?}");
        }
        assert!(!EscapeFree::check(dirty.as_bytes()).holds(dirty.as_bytes()));
    }
}
