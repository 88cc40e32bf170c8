//! A JSON object kept as its text.
//!
//! An entry's `data` is arbitrary JSON that sluice stores and returns but never looks inside
//! on the ingest path. Keeping it as checked text (serde_json's `RawValue`) means ingesting it
//! costs one copy instead of a tree of maps and strings, storing it costs nothing more, and
//! searching it (`data` is searched as its JSON text: docs/API.md, search) reads what is stored.

use std::collections::BTreeMap;
use std::fmt;

use serde::{Deserialize, Deserializer, Serialize, Serializer};
use serde_json::value::RawValue;
use serde_json::{Map, Value};

use crate::{Member, ObjectWriter};

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

/// How deeply arrays and objects nest in JSON text: `1` is `1`, `{}` and `[1]` are 1,
/// `{"a":[1]}` is 2; brackets inside strings do not count. One pass over the bytes, no
/// recursion, so any depth is measured in bounded stack.
///
/// ```
/// use sluice_model::nesting_depth;
/// assert_eq!(nesting_depth(r#"{"a":[1,{"b":"[[["}]}"#), 3);
/// assert_eq!(nesting_depth(r#""\"[""#), 0);
/// ```
pub fn nesting_depth(text: &str) -> usize {
    let (mut depth, mut deepest, mut in_string, mut escaped) = (0_usize, 0_usize, false, false);
    for byte in text.bytes() {
        if in_string {
            match byte {
                _ if escaped => escaped = false,
                b'\\' => escaped = true,
                b'"' => in_string = false,
                _ => {}
            }
            continue;
        }
        match byte {
            b'"' => in_string = true,
            b'[' | b'{' => {
                depth += 1;
                deepest = deepest.max(depth);
            }
            b']' | b'}' => depth = depth.saturating_sub(1),
            _ => {}
        }
    }
    deepest
}

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

    /// Text a writer made valid by construction ([`crate::ObjectWriter`]).
    pub(crate) fn from_written(text: String) -> Self {
        JsonObject(text)
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
        let mut writer = ObjectWriter::with_capacity(size);
        for (key, value) in members {
            writer.push_named(key, *value);
        }
        writer.finish()
    }
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
    /// Through a value tree, not a `RawValue`: a log's `data` is read inside `#[serde(flatten)]`
    /// (a `Log` holds its entry flattened), where serde buffers the fields and a `RawValue`
    /// cannot be had. Ingest never comes here (it reads `data` as text: `Draft::read_value`).
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        match Value::deserialize(deserializer)? {
            Value::Object(map) => Ok(JsonObject::from_map(&map)),
            other => {
                Err(serde::de::Error::custom(format!("expected a JSON object, received {}", json_type_name(&other))))
            }
        }
    }
}

/// The zod name of a JSON value's type, for `Expected string, received number`.
pub fn json_type_name(value: &Value) -> &'static str {
    match value {
        Value::Null => "null",
        Value::Bool(_) => "boolean",
        Value::Number(_) => "number",
        Value::String(_) => "string",
        Value::Array(_) => "array",
        Value::Object(_) => "object",
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A log's `data` reads back through the log's flattened entry (the client decodes logs so).
    #[test]
    fn a_log_with_data_reads_back_through_its_flattened_entry() {
        let text = r#"{"id":"0190f3a2-0000-7000-8000-000000000001","timestamp":1,"level":"info","message":"m","source":"s","environment":"production","dataset":"default","data":{"b":[1,{"c":null}],"a":"x"}}"#;
        let log: crate::Log = serde_json::from_str(text).expect("a log");
        let data = log.entry.data.expect("data");
        assert_eq!(
            serde_json::from_str::<Value>(data.as_str()).ok(),
            Some(serde_json::json!({"a": "x", "b": [1, {"c": null}]}))
        );
        assert!(
            serde_json::from_str::<crate::Log>(
                &text.replace(r#""data":{"b":[1,{"c":null}],"a":"x"}"#, r#""data":[1]"#)
            )
            .is_err()
        );
    }

    use serde_json::json;

    #[test]
    fn serializes_as_an_object_not_a_string() {
        let object = JsonObject::from_text(r#"{"a": [1, {"b": null}]}"#.to_owned()).expect("valid");
        assert_eq!(
            serde_json::to_string(&json!({"data": object})).ok(),
            Some(r#"{"data":{"a":[1,{"b":null}]}}"#.into())
        );
    }
}
