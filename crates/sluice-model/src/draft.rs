//! An entry as it was sent, field by field, before the entry rules of docs/API.md are checked.
//!
//! Every ingestion format fills a [`Draft`] straight from its input (JSON objects through
//! serde without an intermediate map, syslog and text lines from their grammars) and then
//! calls [`Draft::finish`], which holds every rule. So the rules live in one place and no
//! format pays for building and taking apart a JSON object per entry.

use std::fmt;

use serde::de::{self, Deserialize, Deserializer, MapAccess, Visitor};
use serde_json::value::RawValue;
use serde_json::{Map, Value};
use smol_str::SmolStr;

use crate::calendar::parse_timestamp_text;
use crate::json_object::json_type_name;
use crate::{Environment, JsonObject, Level};

/// One field as a client sent it.
#[derive(Debug, Clone, PartialEq, Default)]
pub enum Sent<T> {
    /// Not sent, or sent as `null`: a query default or the field's own default applies.
    #[default]
    Absent,
    /// Sent, with the right type.
    Value(T),
    /// Sent, but not usable; the text is the issue clients see (`Expected string, received number`).
    Wrong(String),
}

impl<T> Sent<T> {
    /// `Value(value)` for `Some`, `Absent` for `None`.
    ///
    /// ```
    /// use sluice_model::Sent;
    /// assert_eq!(Sent::from(Some(3)), Sent::Value(3));
    /// assert_eq!(Sent::<i32>::from(None), Sent::Absent);
    /// ```
    pub fn from_option(value: Option<T>) -> Self {
        value.map_or(Sent::Absent, Sent::Value)
    }
}

impl<T> From<Option<T>> for Sent<T> {
    fn from(value: Option<T>) -> Self {
        Sent::from_option(value)
    }
}

/// The fields of a log entry, as the wire names them.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Field {
    /// `level`
    Level,
    /// `message`
    Message,
    /// `source`
    Source,
    /// `environment`
    Environment,
    /// `dataset`
    Dataset,
    /// `version`
    Version,
    /// `userId`
    UserId,
    /// `sessionId`
    SessionId,
    /// `requestId`
    RequestId,
    /// `data`
    Data,
    /// `errorName`
    ErrorName,
    /// `errorStack`
    ErrorStack,
    /// `tags`
    Tags,
    /// `timestamp`
    Timestamp,
    /// `flowId`
    FlowId,
    /// `stepIndex`
    StepIndex,
}

impl Field {
    /// The field a wire name names, if any (exact spelling).
    ///
    /// ```
    /// use sluice_model::Field;
    /// assert_eq!(Field::from_name("userId"), Some(Field::UserId));
    /// assert_eq!(Field::from_name("user_id"), None);
    /// ```
    pub fn from_name(name: &str) -> Option<Field> {
        Some(match name {
            "level" => Field::Level,
            "message" => Field::Message,
            "source" => Field::Source,
            "environment" => Field::Environment,
            "dataset" => Field::Dataset,
            "version" => Field::Version,
            "userId" => Field::UserId,
            "sessionId" => Field::SessionId,
            "requestId" => Field::RequestId,
            "data" => Field::Data,
            "errorName" => Field::ErrorName,
            "errorStack" => Field::ErrorStack,
            "tags" => Field::Tags,
            "timestamp" => Field::Timestamp,
            "flowId" => Field::FlowId,
            "stepIndex" => Field::StepIndex,
            _ => return None,
        })
    }
}

/// An entry before the rules: each field [`Sent`] or not, plus the unknown top-level fields
/// that will be merged into `data`. Turn it into a [`LogEntry`](crate::LogEntry) with
/// [`Draft::finish`].
///
/// ```
/// use sluice_model::{Defaults, Draft, Level, Sent};
/// let draft = Draft {
///     level: Sent::Value(Level::Warn),
///     message: Sent::Value("disk 91% full".into()),
///     ..Draft::default()
/// };
/// let defaults = Defaults {
///     source: Some("monitor".into()),
///     environment: Some("production".into()),
///     ..Defaults::default()
/// };
/// let entry = draft.finish(&defaults, 1_700_000_000_000).unwrap();
/// assert_eq!((entry.source.as_str(), entry.timestamp), ("monitor", 1_700_000_000_000));
/// ```
#[derive(Debug, Clone, Default)]
pub struct Draft {
    /// `level`; a value outside the vocabulary is `Wrong` with zod's enum message.
    pub level: Sent<Level>,
    /// `message`.
    pub message: Sent<String>,
    /// `source`.
    pub source: Sent<SmolStr>,
    /// `environment`.
    pub environment: Sent<Environment>,
    /// `dataset`.
    pub dataset: Sent<SmolStr>,
    /// `version`.
    pub version: Sent<String>,
    /// `userId`.
    pub user_id: Sent<String>,
    /// `sessionId`.
    pub session_id: Sent<String>,
    /// `requestId`.
    pub request_id: Sent<String>,
    /// `data`.
    pub data: Sent<JsonObject>,
    /// `errorName`.
    pub error_name: Sent<String>,
    /// `errorStack`.
    pub error_stack: Sent<String>,
    /// `tags`: each item a string, or the JSON type name of an item that is not.
    pub tags: Sent<Vec<Result<String, &'static str>>>,
    /// `timestamp`, Unix ms.
    pub timestamp: Sent<i64>,
    /// `flowId`.
    pub flow_id: Sent<String>,
    /// `stepIndex`, any integer (its range is a rule).
    pub step_index: Sent<i64>,
    /// Top-level fields that are not entry fields, as sent; they join `data` (a key of the
    /// explicit `data` object wins; of a key sent twice, the last).
    pub unknown: Vec<(String, Box<RawValue>)>,
}

fn expected(what: &str, value: &Value) -> String {
    format!("Expected {what}, received {}", json_type_name(value))
}

/// The zod type name of a raw JSON value, from its first character.
fn raw_type_name(raw: &RawValue) -> &'static str {
    match raw.get().trim_start().as_bytes().first() {
        Some(b'{') => "object",
        Some(b'[') => "array",
        Some(b'"') => "string",
        Some(b't' | b'f') => "boolean",
        Some(b'n') => "null",
        _ => "number",
    }
}

/// A string field from JSON.
fn string(value: Value) -> Sent<String> {
    match value {
        Value::Null => Sent::Absent,
        Value::String(text) => Sent::Value(text),
        other => Sent::Wrong(expected("string", &other)),
    }
}

/// `userId`: a string, or a whole number taken as its decimal text (pino and OpenTelemetry
/// users often log `userId: 42`; docs/API.md, "Node.js loggers").
fn user_id(value: Value) -> Sent<String> {
    match value {
        Value::Number(number) if number.is_i64() || number.is_u64() => Sent::Value(number.to_string()),
        other => string(other),
    }
}

/// A text field kept as a [`SmolStr`] (inline when short).
fn smol(sent: Sent<String>) -> Sent<SmolStr> {
    match sent {
        Sent::Value(text) => Sent::Value(SmolStr::from(text)),
        Sent::Absent => Sent::Absent,
        Sent::Wrong(message) => Sent::Wrong(message),
    }
}

/// A vocabulary field from JSON (`level`, `environment`).
fn vocabulary<T: std::str::FromStr<Err = crate::UnknownValue>>(value: Value) -> Sent<T> {
    match value {
        Value::Null => Sent::Absent,
        Value::String(text) => match text.parse() {
            Ok(value) => Sent::Value(value),
            Err(error) => Sent::Wrong(error.to_string()),
        },
        other => Sent::Wrong(expected("string", &other)),
    }
}

/// `level`: a name of the vocabulary, or a pino/bunyan level number (10 and 20 `debug`, 30
/// `info`, 40 `warn`, 50 and 60 `error`; DECISIONS, "pino / bunyan / winston JSON").
fn level(value: Value) -> Sent<Level> {
    match value.as_u64() {
        Some(10 | 20) => Sent::Value(Level::Debug),
        Some(30) => Sent::Value(Level::Info),
        Some(40) => Sent::Value(Level::Warn),
        Some(50 | 60) => Sent::Value(Level::Error),
        _ => vocabulary(value),
    }
}

/// The issue of a timestamp that is a number or text but no moment.
pub(crate) const INVALID_TIMESTAMP: &str = "Invalid timestamp: expected Unix milliseconds or an ISO 8601 date-time";

/// A timestamp from Unix ms as a JSON number (whole or not).
pub(crate) fn timestamp_number(number: &serde_json::Number) -> Sent<i64> {
    let ms = number
        .as_i64()
        .or_else(|| number.as_f64().filter(|ms| ms.is_finite() && ms.abs() < 1e17).map(|ms| ms.floor() as i64));
    ms.map_or_else(|| Sent::Wrong(INVALID_TIMESTAMP.to_owned()), Sent::Value)
}

/// A timestamp from text: RFC 3339 / ISO 8601 (UTC when it has no zone).
///
/// ```
/// use sluice_model::{Sent, timestamp_text};
/// assert_eq!(timestamp_text("2024-03-01T12:00:00.250Z"), Sent::Value(1_709_294_400_250));
/// assert!(matches!(timestamp_text("yesterday"), Sent::Wrong(_)));
/// ```
pub fn timestamp_text(text: &str) -> Sent<i64> {
    parse_timestamp_text(text).map_or_else(|| Sent::Wrong(INVALID_TIMESTAMP.to_owned()), Sent::Value)
}

impl Draft {
    /// Sets one field from its JSON value, with JSON's typing rules (`null` is absent).
    ///
    /// ```
    /// use sluice_model::{Draft, Field, Sent};
    /// let mut draft = Draft::default();
    /// draft.set(Field::StepIndex, serde_json::json!(3.0));
    /// draft.set(Field::Source, serde_json::json!(7));
    /// assert_eq!(draft.step_index, Sent::Value(3));
    /// assert_eq!(draft.source, Sent::Wrong("Expected string, received number".into()));
    /// ```
    pub fn set(&mut self, field: Field, value: Value) {
        match field {
            Field::Level => self.level = level(value),
            Field::Message => self.message = string(value),
            Field::Source => self.source = smol(string(value)),
            Field::Environment => self.environment = vocabulary(value),
            Field::Dataset => self.dataset = smol(string(value)),
            Field::Version => self.version = string(value),
            Field::UserId => self.user_id = user_id(value),
            Field::SessionId => self.session_id = string(value),
            Field::RequestId => self.request_id = string(value),
            Field::ErrorName => self.error_name = string(value),
            Field::ErrorStack => self.error_stack = string(value),
            Field::FlowId => self.flow_id = string(value),
            Field::Data => {
                self.data = match value {
                    Value::Null => Sent::Absent,
                    Value::Object(map) => Sent::Value(JsonObject::from_map(&map)),
                    other => Sent::Wrong(expected("object", &other)),
                }
            }
            Field::Tags => {
                self.tags = match value {
                    Value::Null => Sent::Absent,
                    Value::Array(items) => Sent::Value(
                        items
                            .into_iter()
                            .map(|item| match item {
                                Value::String(tag) => Ok(tag),
                                other => Err(json_type_name(&other)),
                            })
                            .collect(),
                    ),
                    other => Sent::Wrong(expected("array", &other)),
                }
            }
            Field::Timestamp => {
                self.timestamp = match value {
                    Value::Null => Sent::Absent,
                    Value::Number(number) => timestamp_number(&number),
                    Value::String(text) => timestamp_text(&text),
                    other => Sent::Wrong(expected("number", &other)),
                }
            }
            Field::StepIndex => {
                self.step_index = match value {
                    Value::Null => Sent::Absent,
                    Value::Number(number) => match number.as_i64() {
                        Some(index) => Sent::Value(index),
                        None if number.is_u64() => Sent::Value(i64::MAX),
                        // `3.0` and `1e2` are whole numbers, as JSON and zod's int() see them.
                        None => match number.as_f64() {
                            Some(value) if value.is_finite() && value.fract() == 0.0 => {
                                Sent::Value(value.clamp(i64::MIN as f64, i64::MAX as f64) as i64)
                            }
                            _ => Sent::Wrong("Expected integer, received float".to_owned()),
                        },
                    },
                    other => Sent::Wrong(expected("number", &other)),
                }
            }
        }
    }

    /// Takes the fields pino, bunyan and winston write in place of ours (DECISIONS, "pino /
    /// bunyan / winston JSON"), for JSON and JSONL entries: `msg` is the `message` and `time`
    /// the `timestamp` when those are absent; an `err` or `error` object gives `errorName` (its
    /// `type`, else `name`) and `errorStack` (its `stack`) when those are absent, and stays in
    /// `data` without its stack (its `message` kept there). `hostname`, `pid` and `name` are
    /// unknown fields, so in `data` already.
    ///
    /// ```
    /// use sluice_model::{Draft, Level, Sent};
    /// let serde_json::Value::Object(map) = serde_json::json!({"level": 50, "time": 1700000000000_i64,
    ///     "msg": "write failed", "err": {"type": "Error", "message": "disk full", "stack": "Error: disk full\n  at x"}})
    /// else { unreachable!() };
    /// let mut draft = Draft::from_map(map);
    /// draft.adopt_shipper_fields();
    /// assert_eq!((draft.level, draft.message), (Sent::Value(Level::Error), Sent::Value("write failed".into())));
    /// assert_eq!((draft.timestamp, draft.error_name), (Sent::Value(1_700_000_000_000), Sent::Value("Error".into())));
    /// assert_eq!(draft.error_stack, Sent::Value("Error: disk full\n  at x".into()));
    /// assert_eq!(draft.unknown[0].1.get(), r#"{"message":"disk full","type":"Error"}"#);
    /// ```
    pub fn adopt_shipper_fields(&mut self) {
        let position =
            |unknown: &[(String, Box<RawValue>)], name: &str| unknown.iter().rposition(|(key, _)| key == name);
        if matches!(self.message, Sent::Absent)
            && let Some(at) = position(&self.unknown, "msg")
            && let Ok(Value::String(text)) = serde_json::from_str::<Value>(self.unknown[at].1.get())
        {
            self.unknown.remove(at);
            self.message = Sent::Value(text);
        }
        if matches!(self.timestamp, Sent::Absent)
            && let Some(at) = position(&self.unknown, "time")
        {
            let (_, raw) = self.unknown.remove(at);
            let value = serde_json::from_str::<Value>(raw.get()).unwrap_or(Value::Null);
            self.set(Field::Timestamp, value);
        }
        for name in ["err", "error"] {
            let Some(at) = position(&self.unknown, name) else { continue };
            let Ok(Value::Object(mut error)) = serde_json::from_str::<Value>(self.unknown[at].1.get()) else {
                continue;
            };
            let text =
                |field: &str, error: &Map<String, Value>| error.get(field).and_then(Value::as_str).map(str::to_owned);
            if matches!(self.error_name, Sent::Absent)
                && let Some(kind) = text("type", &error).or_else(|| text("name", &error))
            {
                self.error_name = Sent::Value(kind);
            }
            if matches!(self.error_stack, Sent::Absent)
                && let Some(stack) = text("stack", &error)
            {
                self.error_stack = Sent::Value(stack);
                error.remove("stack");
            }
            if let Ok(raw) = serde_json::value::to_raw_value(&Value::Object(error)) {
                self.unknown[at].1 = raw;
            }
        }
    }

    /// Sets a top-level field by its wire name: an entry field, or an unknown one for `data`.
    pub fn set_named(&mut self, name: String, value: Value) {
        match Field::from_name(&name) {
            Some(field) => self.set(field, value),
            None => {
                if let Ok(raw) = serde_json::value::to_raw_value(&value) {
                    self.unknown.push((name, raw));
                }
            }
        }
    }

    /// A draft of a JSON object's fields.
    ///
    /// ```
    /// use sluice_model::{Draft, Sent};
    /// let serde_json::Value::Object(map) = serde_json::json!({"message": "hi", "host": "db-1"}) else { unreachable!() };
    /// let draft = Draft::from_map(map);
    /// assert_eq!(draft.message, Sent::Value("hi".into()));
    /// assert_eq!(draft.unknown[0].0, "host");
    /// ```
    pub fn from_map(object: Map<String, Value>) -> Draft {
        let mut draft = Draft::default();
        for (name, value) in object {
            draft.set_named(name, value);
        }
        draft
    }

    /// Reads one more top-level key of a JSON object being deserialized into this draft.
    /// `key` has been read already; the value is read from `map`. Lets a caller that reads
    /// an object key by key (the JSON body's `{"logs": [...]}` shape) fill a draft as it goes.
    pub fn read_value<'de, A: MapAccess<'de>>(&mut self, key: Key, map: &mut A) -> Result<(), A::Error> {
        match key {
            // `data` and unknown fields are kept as text: no tree is built for them.
            Key::Field(Field::Data) => {
                let raw: Box<RawValue> = map.next_value()?;
                self.data = match raw_type_name(&raw) {
                    "object" => JsonObject::from_raw(raw).map_or(Sent::Absent, Sent::Value),
                    "null" => Sent::Absent,
                    other => Sent::Wrong(format!("Expected object, received {other}")),
                };
            }
            Key::Field(field) => self.set(field, map.next_value()?),
            Key::Other(name) => self.unknown.push((name, map.next_value()?)),
        }
        Ok(())
    }
}

/// A top-level key of an entry object, read without allocating when it names a field.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Key {
    /// An entry field.
    Field(Field),
    /// Any other name (it goes into `data`).
    Other(String),
}

impl<'de> Deserialize<'de> for Key {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        struct KeyVisitor;
        impl Visitor<'_> for KeyVisitor {
            type Value = Key;
            fn expecting(&self, formatter: &mut fmt::Formatter<'_>) -> fmt::Result {
                formatter.write_str("a field name")
            }
            fn visit_str<E: de::Error>(self, name: &str) -> Result<Key, E> {
                Ok(Field::from_name(name).map_or_else(|| Key::Other(name.to_owned()), Key::Field))
            }
            fn visit_string<E: de::Error>(self, name: String) -> Result<Key, E> {
                Ok(Field::from_name(&name).map_or(Key::Other(name), Key::Field))
            }
        }
        deserializer.deserialize_str(KeyVisitor)
    }
}

/// Deserializes a JSON object straight into a draft: no map of the entry is built, and a
/// field of the wrong type is recorded as [`Sent::Wrong`], not a deserialization error.
impl<'de> Deserialize<'de> for Draft {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        deserializer.deserialize_map(DraftVisitor)
    }
}

/// The visitor of an entry object; public so a caller can reuse it in its own visitor.
pub struct DraftVisitor;

impl<'de> Visitor<'de> for DraftVisitor {
    type Value = Draft;

    fn expecting(&self, formatter: &mut fmt::Formatter<'_>) -> fmt::Result {
        formatter.write_str("a log entry object")
    }

    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<Draft, A::Error> {
        let mut draft = Draft::default();
        while let Some(key) = map.next_key::<Key>()? {
            draft.read_value(key, &mut map)?;
        }
        Ok(draft)
    }
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    #[test]
    fn deserializing_equals_building_from_a_map() {
        let value = json!({
            "level": "warn", "message": "m", "source": 3, "environment": "prod", "tags": ["a", 1],
            "timestamp": "2024-03-01T12:00:00Z", "stepIndex": 1.5, "host": "h", "data": {"k": 1}
        });
        let direct: Draft = serde_json::from_value(value.clone()).expect("an object");
        let Value::Object(map) = value else { unreachable!() };
        assert_eq!(format!("{direct:?}"), format!("{:?}", Draft::from_map(map)));
        assert_eq!(direct.tags, Sent::Value(vec![Ok("a".to_owned()), Err("number")]));
        assert_eq!(direct.step_index, Sent::Wrong("Expected integer, received float".into()));
        assert!(matches!(direct.environment, Sent::Wrong(ref message) if message.contains("received 'prod'")));
    }

    #[test]
    fn null_is_absent_and_the_last_duplicate_wins() {
        let draft: Draft = serde_json::from_str(r#"{"level": 3, "level": "info", "userId": null}"#).expect("parses");
        assert_eq!(draft.level, Sent::Value(Level::Info));
        assert_eq!(draft.user_id, Sent::Absent);
    }

    #[test]
    fn escaped_keys_are_still_fields() {
        let draft: Draft = serde_json::from_str(r#"{"mess\u0061ge": "hi"}"#).expect("parses");
        assert_eq!(draft.message, Sent::Value("hi".into()));
    }
}
