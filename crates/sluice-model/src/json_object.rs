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
pub struct JsonObject(Box<RawValue>);

/// Text that is not one JSON object.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("expected a JSON object")]
pub struct NotAnObject;

impl JsonObject {
    /// Checks `text` and keeps it.
    pub fn from_text(text: String) -> Result<Self, NotAnObject> {
        let raw = RawValue::from_string(text).map_err(|_| NotAnObject)?;
        Self::from_raw(raw).ok_or(NotAnObject)
    }

    /// Keeps a raw JSON value that is an object; `None` for any other value.
    pub fn from_raw(raw: Box<RawValue>) -> Option<Self> {
        raw.get().starts_with('{').then_some(JsonObject(raw))
    }

    /// The object of a map.
    ///
    /// ```
    /// use sluice_model::JsonObject;
    /// let serde_json::Value::Object(map) = serde_json::json!({"b": 1, "a": [true]}) else { unreachable!() };
    /// assert_eq!(JsonObject::from_map(&map).as_str(), r#"{"a":[true],"b":1}"#);
    /// ```
    pub fn from_map(map: &Map<String, Value>) -> Self {
        serde_json::value::to_raw_value(map).map(JsonObject).unwrap_or_else(|_| JsonObject::empty())
    }

    /// `{}`.
    pub fn empty() -> Self {
        JsonObject(RawValue::from_string("{}".to_owned()).unwrap_or_else(|_| unreachable!("{{}} is JSON")))
    }

    /// The JSON text.
    pub fn as_str(&self) -> &str {
        self.0.get()
    }

    /// The text as serde_json's raw value (to embed it in other JSON without parsing it).
    pub fn as_raw(&self) -> &RawValue {
        &self.0
    }

    /// The object as a map (parses the text).
    pub fn to_map(&self) -> Map<String, Value> {
        serde_json::from_str(self.0.get()).unwrap_or_default()
    }

    /// The value of one member, if present (parses the text).
    pub fn get(&self, key: &str) -> Option<Value> {
        let members: BTreeMap<&str, &RawValue> = serde_json::from_str(self.0.get()).ok()?;
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
        let mut members: BTreeMap<&str, &RawValue> = serde_json::from_str(base.0.get()).unwrap_or_default();
        let over: BTreeMap<&str, &RawValue> = serde_json::from_str(over.0.get()).unwrap_or_default();
        members.extend(over);
        serde_json::value::to_raw_value(&members).map(JsonObject).unwrap_or_else(|_| JsonObject::empty())
    }
}

impl PartialEq for JsonObject {
    fn eq(&self, other: &Self) -> bool {
        self.as_str() == other.as_str() || self.to_map() == other.to_map()
    }
}

impl fmt::Debug for JsonObject {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

impl Serialize for JsonObject {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        self.0.serialize(serializer)
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
    /// Any JSON value.
    Value(&'a Value),
}

impl Serialize for Member<'_> {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        match self {
            Member::Str(text) => serializer.serialize_str(text),
            Member::Json(raw) => raw.serialize(serializer),
            Member::Value(value) => value.serialize(serializer),
        }
    }
}

impl JsonObject {
    /// The object of these members, written in one pass (serde_json escapes; nothing is
    /// parsed back). A key given twice is written twice, so callers pass distinct keys.
    ///
    /// ```
    /// use sluice_model::{JsonObject, Member};
    /// let object = JsonObject::from_members(&[("host", Member::Str("db \"1\"")), ("pid", Member::Value(&7.into()))]);
    /// assert_eq!(object.as_str(), r#"{"host":"db \"1\"","pid":7}"#);
    /// ```
    pub fn from_members(members: &[(&str, Member<'_>)]) -> JsonObject {
        struct Members<'m, 'a>(&'m [(&'m str, Member<'a>)]);
        impl Serialize for Members<'_, '_> {
            fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
                serializer.collect_map(self.0.iter().map(|(key, value)| (key, value)))
            }
        }
        serde_json::value::to_raw_value(&Members(members)).map(JsonObject).unwrap_or_else(|_| JsonObject::empty())
    }
}
