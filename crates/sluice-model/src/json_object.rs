//! A JSON object kept as its text.
//!
//! An entry's `data` is arbitrary JSON that sluice stores and returns but never looks inside
//! on the ingest path. Keeping it as checked text (serde_json's `RawValue`) means ingesting it
//! costs one copy instead of a tree of maps and strings, storing it costs nothing more, and
//! searching it (SPEC searches `data` as JSON text) reads what is stored.

use std::collections::BTreeMap;
use std::fmt;

use serde::{Deserialize, Deserializer, Serialize, Serializer};
use serde_json::value::RawValue;
use serde_json::{Map, Value};

/// A JSON object, held as valid JSON text that starts with `{`.
///
/// Equality compares the objects, not the text: `{"a":1}` equals `{ "a" : 1 }`.
///
/// ```
/// use sluice_model::JsonObject;
/// let object = JsonObject::from_text(r#"{"host":"db-1","pid":7}"#.to_owned()).unwrap();
/// assert_eq!(object.get("host"), Some(serde_json::json!("db-1")));
/// assert_eq!(object.as_str(), r#"{"host":"db-1","pid":7}"#);
/// assert!(JsonObject::from_text("[1]".to_owned()).is_err());
/// ```
#[derive(Clone)]
pub struct JsonObject(String);

/// Text that is not one JSON object.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("expected a JSON object")]
pub struct NotAnObject;

impl JsonObject {
    /// Checks `text` and keeps it.
    pub fn from_text(text: String) -> Result<Self, NotAnObject> {
        let checked = text.starts_with('{') && serde_json::from_str::<&RawValue>(&text).is_ok();
        if checked { Ok(JsonObject(text)) } else { Err(NotAnObject) }
    }

    /// Keeps a raw JSON value that is an object (its text, without copying); `None` for any
    /// other value.
    pub fn from_raw(raw: Box<RawValue>) -> Option<Self> {
        raw.get().starts_with('{').then(|| JsonObject(Box::<str>::from(raw).into_string()))
    }

    /// The object of a map.
    ///
    /// ```
    /// use sluice_model::JsonObject;
    /// let serde_json::Value::Object(map) = serde_json::json!({"b": 1, "a": [true]}) else { unreachable!() };
    /// assert_eq!(JsonObject::from_map(&map).as_str(), r#"{"a":[true],"b":1}"#);
    /// ```
    pub fn from_map(map: &Map<String, Value>) -> Self {
        JsonObject(Value::Object(map.clone()).to_string())
    }

    /// `{}`.
    pub fn empty() -> Self {
        JsonObject("{}".to_owned())
    }

    /// The JSON text.
    pub fn as_str(&self) -> &str {
        &self.0
    }

    /// The object as a map (parses the text).
    pub fn to_map(&self) -> Map<String, Value> {
        serde_json::from_str(&self.0).unwrap_or_default()
    }

    /// The value of one member, if present (parses the text).
    pub fn get(&self, key: &str) -> Option<Value> {
        // Owned keys: a key with escapes cannot be borrowed from the text.
        let members: BTreeMap<String, &RawValue> = serde_json::from_str(&self.0).ok()?;
        members.get(key).and_then(|raw| serde_json::from_str(raw.get()).ok())
    }

    /// The members of `base` and then of `over`: a key in both takes `over`'s value. Keys come
    /// out in sorted order. Values are copied as text, not parsed.
    ///
    /// ```
    /// use sluice_model::JsonObject;
    /// let base = JsonObject::from_text(r#"{"pid":7,"host":"h"}"#.into()).unwrap();
    /// let over = JsonObject::from_text(r#"{"pid":8}"#.into()).unwrap();
    /// assert_eq!(JsonObject::merge(&base, &over).as_str(), r#"{"host":"h","pid":8}"#);
    /// ```
    pub fn merge(base: &JsonObject, over: &JsonObject) -> JsonObject {
        // Owned keys: a key with escapes cannot be borrowed from the text.
        let mut members: BTreeMap<String, &RawValue> = serde_json::from_str(&base.0).unwrap_or_default();
        let over: BTreeMap<String, &RawValue> = serde_json::from_str(&over.0).unwrap_or_default();
        members.extend(over);
        let members: Vec<(&str, Member<'_>)> =
            members.iter().map(|(key, raw)| (key.as_str(), Member::Json(raw))).collect();
        JsonObject::from_members(&members)
    }

    /// The object of these members, written in one pass into one string. A key given twice
    /// is written twice, so callers pass distinct keys.
    ///
    /// ```
    /// use sluice_model::{JsonObject, Member};
    /// let object = JsonObject::from_members(&[("host", Member::Str("db \"1\"")), ("pid", Member::Value(&7.into()))]);
    /// assert_eq!(object.as_str(), r#"{"host":"db \"1\"","pid":7}"#);
    /// ```
    pub fn from_members(members: &[(&str, Member<'_>)]) -> JsonObject {
        let size: usize = members.iter().map(|(key, value)| key.len() + value.size_hint() + 4).sum();
        let mut text = String::with_capacity(size + 2);
        text.push('{');
        for (index, (key, value)) in members.iter().enumerate() {
            if index > 0 {
                text.push(',');
            }
            push_string(&mut text, key);
            text.push(':');
            match value {
                Member::Str(value) => push_string(&mut text, value),
                Member::Json(raw) => text.push_str(raw.get()),
                Member::Object(object) => text.push_str(object.as_str()),
                Member::Value(value) => text.push_str(&value.to_string()),
            }
        }
        text.push('}');
        JsonObject(text)
    }
}

/// Appends `text` as a JSON string: copied as is when nothing needs escaping, else escaped by
/// serde_json.
fn push_string(out: &mut String, text: &str) {
    if needs_escape(text.as_bytes()) {
        out.push_str(&Value::from(text).to_string());
    } else {
        out.reserve(text.len() + 2);
        out.push('"');
        out.push_str(text);
        out.push('"');
    }
}

/// Whether JSON needs an escape for some byte: a control character, `"` or `\`. Eight bytes
/// at a time (the classic "has a byte less than n / equal to c" word tests), since most
/// strings here are short and clean.
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
    chunks.remainder().iter().any(|&byte| byte < 0x20 || byte == b'"' || byte == b'\\')
}

impl PartialEq for JsonObject {
    fn eq(&self, other: &Self) -> bool {
        self.0 == other.0 || self.to_map() == other.to_map()
    }
}

impl fmt::Debug for JsonObject {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.0)
    }
}

/// Written as the JSON object itself (not as a string), without building a tree.
impl Serialize for JsonObject {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        let raw: &RawValue = serde_json::from_str(&self.0).map_err(serde::ser::Error::custom)?;
        raw.serialize(serializer)
    }
}

impl<'de> Deserialize<'de> for JsonObject {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        let raw = Box::<RawValue>::deserialize(deserializer)?;
        JsonObject::from_raw(raw).ok_or_else(|| serde::de::Error::custom("expected a JSON object"))
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
    fn size_hint(&self) -> usize {
        match self {
            Member::Str(text) => text.len() + 2,
            Member::Json(raw) => raw.get().len(),
            Member::Object(object) => object.0.len(),
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
    use serde_json::json;

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
    fn escape_check_matches_the_plain_definition() {
        for byte in 0..=255u8 {
            for position in 0..17 {
                let mut text = vec![b'a'; 17];
                text[position] = byte;
                let plain = text.iter().any(|&b| b < 0x20 || b == b'"' || b == b'\\');
                assert_eq!(needs_escape(&text), plain, "byte {byte:#x} at {position}");
            }
        }
    }

    #[test]
    fn serializes_as_an_object_not_a_string() {
        let object = JsonObject::from_text(r#"{"a": [1, {"b": null}]}"#.to_owned()).expect("valid");
        assert_eq!(
            serde_json::to_string(&json!({"data": object})).ok(),
            Some(r#"{"data":{"a":[1,{"b":null}]}}"#.into())
        );
    }
}
