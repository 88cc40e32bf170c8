//! The rules a log entry must pass: [`Draft::finish`] checks every field of a draft (types,
//! lengths through `validator`, vocabularies, tags, the timestamp's range), fills what is
//! missing from the defaults, and lists every issue in a stable order; [`entry_from_json`]
//! does the same for an entry already parsed into a JSON object.
//! Messages follow the wording of zod, which the public API has always used
//! (`Invalid enum value. Expected ...`, `Required`, `String must contain at most ...`).

use std::collections::BTreeMap;

use serde_json::value::RawValue;
use serde_json::{Map, Value};
use validator::{Validate, ValidationErrorsKind};

use crate::draft::{Draft, Sent};
use crate::limits::{
    MAX_DATA_DEPTH, MAX_MESSAGE_CHARS, MAX_SOURCE_CHARS, MAX_STEP_INDEX, MAX_TAG_CHARS, MAX_TAGS,
    MAX_TIMESTAMP_AHEAD_MS, MIN_TIMESTAMP_MS,
};
use crate::{Issue, JsonObject, Member, PathSegment, nesting_depth};

use crate::entry::{Defaults, ENTRY_FIELDS, LogEntry, ResolvedDefaults};

/// The length and range rules, checked by `validator` once every field has the right type.
#[derive(Validate)]
struct Lengths<'a> {
    #[validate(length(min = 1, max = "MAX_MESSAGE_CHARS"))]
    message: &'a str,
    #[validate(length(min = 1, max = "MAX_SOURCE_CHARS"))]
    source: &'a str,
    #[validate(length(min = 1, max = "MAX_SOURCE_CHARS"))]
    dataset: &'a str,
    #[validate(range(min = 0, max = 1000))]
    step_index: Option<i64>,
}

/// The wire name of a field of [`Lengths`].
fn wire_name(field: &str) -> &str {
    match field {
        "step_index" => "stepIndex",
        other => other,
    }
}

/// Checks one entry sent as a JSON object and turns it into a [`LogEntry`].
///
/// `defaults` fill `source`, `environment`, `level` and `dataset` where the entry lacks them;
/// `received_at_ms` is the timestamp of an entry that has none. Unknown top-level fields are
/// merged into `data` (an explicit `data` key wins). On failure, every issue is returned, with
/// paths relative to the entry (`["level"]`, `["tags", 3]`).
///
/// ```
/// use sluice_model::{Defaults, Level, entry_from_json};
/// let object = serde_json::json!({"level": "warn", "message": "disk 91% full", "host": "db-1"});
/// let defaults = Defaults {
///     source: Some("monitor".into()),
///     environment: Some("production".into()),
///     ..Defaults::default()
/// };
/// let serde_json::Value::Object(object) = object else { unreachable!() };
/// let entry = entry_from_json(object, &defaults, 1_700_000_000_000).unwrap();
/// assert_eq!(entry.level, Level::Warn);
/// assert_eq!(entry.dataset, "default");
/// assert_eq!(entry.data.unwrap().get("host"), Some("db-1".into()));
/// ```
pub fn entry_from_json(
    object: Map<String, Value>,
    defaults: &Defaults,
    received_at_ms: i64,
) -> Result<LogEntry, Vec<Issue>> {
    Draft::from_map(object).finish(defaults, received_at_ms)
}

/// A required field: the sent value, else the query default (already read like a sent
/// value: its value or its issue), else `Required`.
#[inline(always)]
fn required<T: Clone>(issues: &mut Vec<Issue>, name: &str, sent: Sent<T>, default: &Sent<T>) -> Option<T> {
    let issue = match (sent, default) {
        (Sent::Value(value), _) => return Some(value),
        (Sent::Absent, Sent::Value(value)) => return Some(value.clone()),
        (Sent::Wrong(message), _) => message,
        (Sent::Absent, Sent::Wrong(message)) => message.clone(),
        (Sent::Absent, Sent::Absent) => "Required".to_owned(),
    };
    issues.push(Issue::at(name, issue));
    None
}

/// An optional field: its value, nothing, or an issue.
#[inline(always)]
fn optional<T>(issues: &mut Vec<Issue>, name: &str, sent: Sent<T>) -> Option<T> {
    match sent {
        Sent::Value(value) => Some(value),
        Sent::Absent => None,
        Sent::Wrong(message) => {
            issues.push(Issue::at(name, message));
            None
        }
    }
}

/// The tags that are strings of at most 50 characters; an issue for each other item and for
/// more than 20 of them.
fn tags(issues: &mut Vec<Issue>, items: Vec<Result<String, &'static str>>) -> Vec<String> {
    if items.len() as u64 > MAX_TAGS {
        issues.push(Issue::at("tags", format!("Array must contain at most {MAX_TAGS} element(s)")));
    }
    let mut tags = Vec::with_capacity(items.len());
    for (index, item) in items.into_iter().enumerate() {
        let path = || vec![PathSegment::from("tags"), PathSegment::from(index)];
        match item {
            Ok(tag) if tag.len() > MAX_TAG_CHARS && tag.chars().count() > MAX_TAG_CHARS => {
                issues.push(Issue::new(path(), format!("String must contain at most {MAX_TAG_CHARS} character(s)")));
            }
            Ok(tag) => tags.push(tag),
            Err(kind) => issues.push(Issue::new(path(), format!("Expected string, received {kind}"))),
        }
    }
    tags
}

/// The unknown top-level fields and the explicit `data` as one object; `data` wins.
fn merge_unknown(unknown: &[(String, Box<RawValue>)], data: Option<&JsonObject>) -> JsonObject {
    let mut members: BTreeMap<&str, Member<'_>> =
        unknown.iter().map(|(name, raw)| (name.as_str(), Member::Json(raw))).collect();
    // Owned keys: a key with escapes cannot be borrowed from the text.
    let explicit: BTreeMap<String, &RawValue> =
        data.and_then(|data| serde_json::from_str(data.as_str()).ok()).unwrap_or_default();
    members.extend(explicit.iter().map(|(name, raw)| (name.as_str(), Member::Json(raw))));
    let members: Vec<(&str, Member<'_>)> = members.into_iter().collect();
    JsonObject::from_members(&members)
}

impl Draft {
    /// Checks every entry rule of docs/API.md (POST /v1/logs) and turns the draft into a
    /// [`LogEntry`].
    ///
    /// `defaults` fill `source`, `environment`, `level` and `dataset` where the entry lacks
    /// them (validated like sent values); `received_at_ms` is the timestamp of an entry that
    /// has none. Unknown fields are merged into `data` (an explicit `data` key wins). On
    /// failure every issue is returned, in field order, with paths relative to the entry
    /// (`["level"]`, `["tags", 3]`).
    pub fn finish(self, defaults: &Defaults, received_at_ms: i64) -> Result<LogEntry, Vec<Issue>> {
        self.finish_resolved(&defaults.resolve(), received_at_ms)
    }

    /// [`Draft::finish`] with the defaults read beforehand: a caller checking many entries
    /// against the same query reads them once ([`Defaults::resolve`]).
    pub fn finish_resolved(self, defaults: &ResolvedDefaults, received_at_ms: i64) -> Result<LogEntry, Vec<Issue>> {
        let mut issues = Vec::new();
        let level = required(&mut issues, "level", self.level, &defaults.level);
        let message = required(&mut issues, "message", self.message, &Sent::Absent);
        let source = required(&mut issues, "source", self.source, &defaults.source);
        let environment = required(&mut issues, "environment", self.environment, &defaults.environment);
        let dataset = match self.dataset {
            Sent::Value(text) => text,
            Sent::Absent => defaults.dataset.clone(),
            Sent::Wrong(message) => {
                issues.push(Issue::at("dataset", message));
                defaults.dataset.clone()
            }
        };
        let version = optional(&mut issues, "version", self.version);
        let user_id = optional(&mut issues, "userId", self.user_id);
        let session_id = optional(&mut issues, "sessionId", self.session_id);
        let request_id = optional(&mut issues, "requestId", self.request_id);
        let data = optional(&mut issues, "data", self.data);
        // Nested past what JSON readers read back (docs/API.md, entry rules): refused, with the
        // unknown fields that would be merged into `data` one level down.
        let too_deep = format!("Nested deeper than {MAX_DATA_DEPTH} levels");
        if data.as_ref().is_some_and(|data| nesting_depth(data.as_str()) > MAX_DATA_DEPTH) {
            issues.push(Issue::at("data", too_deep.clone()));
        }
        for (name, raw) in &self.unknown {
            if nesting_depth(raw.get()) >= MAX_DATA_DEPTH {
                issues.push(Issue::at(name, too_deep.clone()));
            }
        }
        let error_name = optional(&mut issues, "errorName", self.error_name);
        let error_stack = optional(&mut issues, "errorStack", self.error_stack);
        let tags = optional(&mut issues, "tags", self.tags).map(|items| tags(&mut issues, items));
        // A sent timestamp lies from 2000 to a day past the server's clock (docs/API.md): no
        // entry reaches a store at year 1 or 9999, and a typo cannot make a partition.
        let timestamp = optional(&mut issues, "timestamp", self.timestamp).filter(|ms| {
            let inside = (MIN_TIMESTAMP_MS..=received_at_ms.saturating_add(MAX_TIMESTAMP_AHEAD_MS)).contains(ms);
            if !inside {
                issues.push(Issue::at("timestamp", "Timestamp out of range"));
            }
            inside
        });
        let flow_id = optional(&mut issues, "flowId", self.flow_id);
        let step_index = optional(&mut issues, "stepIndex", self.step_index);

        let lengths = Lengths {
            message: message.as_deref().unwrap_or("-"),
            source: source.as_deref().unwrap_or("-"),
            dataset: &dataset,
            step_index,
        };
        // Bytes bound characters: text whose byte length is within a limit is within it, so
        // the usual entry skips counting characters; anything near a limit gets `validator`.
        let within = |text: &str, max: u64| (1..=max).contains(&(text.len() as u64));
        let surely_valid = within(lengths.message, MAX_MESSAGE_CHARS)
            && within(lengths.source, MAX_SOURCE_CHARS)
            && within(lengths.dataset, MAX_SOURCE_CHARS)
            && step_index.is_none_or(|index| (0..=i64::from(MAX_STEP_INDEX)).contains(&index));
        if !surely_valid && let Err(errors) = lengths.validate() {
            for (field, kind) in errors.into_errors() {
                let ValidationErrorsKind::Field(errors) = kind else { continue };
                for error in errors {
                    issues.push(Issue::at(wire_name(&field), length_message(&error)));
                }
            }
        }

        let (Some(level), Some(message), Some(source), Some(environment), true) =
            (level, message, source, environment, issues.is_empty())
        else {
            sort_issues(&mut issues);
            return Err(issues);
        };

        let data = if self.unknown.is_empty() { data } else { Some(merge_unknown(&self.unknown, data.as_ref())) };

        Ok(LogEntry {
            timestamp: timestamp.unwrap_or(received_at_ms),
            level,
            message,
            source,
            environment,
            dataset,
            version,
            user_id,
            session_id,
            request_id,
            data,
            error_name,
            error_stack,
            tags,
            flow_id,
            step_index: step_index.and_then(|index| u16::try_from(index).ok()),
        })
    }
}

/// Issues in a stable order (docs/API.md, POST /v1/logs), by field in `ENTRY_FIELDS` order and
/// then by position inside the field (`["tags"]` before `["tags", 0]` before `["tags", 1]`),
/// so a client sees the same list for the same body.
fn sort_issues(issues: &mut [Issue]) {
    let rank = |issue: &Issue| {
        let field = match issue.path.first() {
            Some(PathSegment::Key(key)) => {
                ENTRY_FIELDS.iter().position(|name| name == key).unwrap_or(ENTRY_FIELDS.len())
            }
            _ => ENTRY_FIELDS.len(),
        };
        let position = match issue.path.get(1) {
            Some(PathSegment::Index(index)) => Some(*index),
            _ => None,
        };
        (field, position)
    };
    issues.sort_by_key(rank);
}

/// The zod wording of a broken length or range rule.
fn length_message(error: &validator::ValidationError) -> String {
    let number = |name: &str| error.params.get(name).and_then(Value::as_i64);
    let value = error.params.get("value");
    match error.code.as_ref() {
        "range" => match (number("min"), value.and_then(Value::as_i64)) {
            (Some(min), Some(value)) if value < min => format!("Number must be greater than or equal to {min}"),
            _ => format!("Number must be less than or equal to {}", number("max").unwrap_or_default()),
        },
        _ => {
            let (noun, actual) = match value {
                Some(Value::Array(items)) => ("Array", items.len() as i64),
                Some(Value::String(text)) => ("String", text.chars().count() as i64),
                _ => ("String", 0),
            };
            let unit = if noun == "Array" { "element(s)" } else { "character(s)" };
            match number("min") {
                Some(min) if actual < min => format!("{noun} must contain at least {min} {unit}"),
                _ => format!("{noun} must contain at most {} {unit}", number("max").unwrap_or_default()),
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;
    use crate::{Log, LogId};

    fn object(value: Value) -> Map<String, Value> {
        match value {
            Value::Object(map) => map,
            _ => panic!("test input must be an object"),
        }
    }

    fn check(value: Value) -> Result<LogEntry, Vec<Issue>> {
        entry_from_json(object(value), &Defaults::default(), 42)
    }

    fn messages(issues: &[Issue]) -> Vec<(String, String)> {
        issues
            .iter()
            .map(|issue| (serde_json::to_string(&issue.path).unwrap_or_default(), issue.message.clone()))
            .collect()
    }

    fn valid() -> Value {
        json!({"level": "info", "message": "hi", "source": "api", "environment": "production"})
    }

    #[test]
    fn minimal_entry_takes_defaults() {
        let entry = check(valid()).expect("valid");
        assert_eq!(entry.timestamp, 42);
        assert_eq!(entry.dataset, "default");
        assert_eq!(entry.data, None);
    }

    #[test]
    fn every_missing_required_field_is_reported() {
        let issues = check(json!({})).unwrap_err();
        assert_eq!(
            messages(&issues),
            vec![
                (r#"["level"]"#.into(), "Required".into()),
                (r#"["message"]"#.into(), "Required".into()),
                (r#"["source"]"#.into(), "Required".into()),
                (r#"["environment"]"#.into(), "Required".into()),
            ]
        );
    }

    #[test]
    fn limits_use_zod_wording() {
        let mut value = valid();
        value["message"] = json!("");
        value["source"] = json!("s".repeat(101));
        value["tags"] = json!(vec!["t"; 21]);
        value["stepIndex"] = json!(1001);
        let issues = check(value).unwrap_err();
        assert_eq!(
            messages(&issues),
            vec![
                (r#"["message"]"#.into(), "String must contain at least 1 character(s)".into()),
                (r#"["source"]"#.into(), "String must contain at most 100 character(s)".into()),
                (r#"["tags"]"#.into(), "Array must contain at most 20 element(s)".into()),
                (r#"["stepIndex"]"#.into(), "Number must be less than or equal to 1000".into()),
            ]
        );
    }

    #[test]
    fn message_length_counts_characters_not_bytes() {
        let mut value = valid();
        value["message"] = json!("é".repeat(10_000));
        assert!(check(value.clone()).is_ok());
        value["message"] = json!("é".repeat(10_001));
        assert!(check(value).is_err());
    }

    #[test]
    fn too_many_tags_is_reported_beside_bad_tags() {
        let mut value = valid();
        let mut tags = vec![json!("ok"); 24];
        tags.push(json!("x".repeat(51)));
        value["tags"] = json!(tags);
        let issues = check(value).unwrap_err();
        assert_eq!(
            messages(&issues),
            vec![
                (r#"["tags"]"#.into(), "Array must contain at most 20 element(s)".into()),
                (r#"["tags",24]"#.into(), "String must contain at most 50 character(s)".into()),
            ]
        );
    }

    #[test]
    fn whole_floats_are_integers() {
        let mut value = valid();
        value["stepIndex"] = json!(3.0);
        assert_eq!(check(value.clone()).map(|entry| entry.step_index), Ok(Some(3)));
        value["stepIndex"] = json!(2e3);
        assert!(check(value).is_err(), "2000 is out of range");
    }

    #[test]
    fn tag_items_are_checked_one_by_one() {
        let mut value = valid();
        value["tags"] = json!(["ok", "x".repeat(51), 7]);
        let issues = check(value).unwrap_err();
        assert_eq!(
            messages(&issues),
            vec![
                (r#"["tags",1]"#.into(), "String must contain at most 50 character(s)".into()),
                (r#"["tags",2]"#.into(), "Expected string, received number".into()),
            ]
        );
    }

    /// docs/API.md: `data` nests at most 64 levels (itself the first), an unknown field at
    /// most 63 (it sits inside `data`); deeper is an issue at the field, whatever the depth.
    #[test]
    fn data_nested_past_the_limit_is_an_issue() {
        let nested = |levels: usize| -> Value {
            let text = format!("{}1{}", "[".repeat(levels), "]".repeat(levels));
            serde_json::from_str::<Value>(&text).unwrap_or(Value::Null)
        };
        let mut value = valid();
        value["data"] = json!({"a": nested(63)});
        assert!(check(value.clone()).is_ok(), "64 levels");
        value["data"] = json!({"a": nested(64)});
        let deep = Err(vec![Issue::at("data", "Nested deeper than 64 levels")]);
        assert_eq!(check(value.clone()).map(|_| ()), deep);
        let mut value = valid();
        value["extra"] = nested(63);
        assert!(check(value.clone()).is_ok(), "63 levels inside data");
        value["extra"] = nested(64);
        assert_eq!(check(value).map(|_| ()), Err(vec![Issue::at("extra", "Nested deeper than 64 levels")]));
        let hundred_thousand = format!("{}{}", "[".repeat(100_000), "]".repeat(100_000));
        assert_eq!(nesting_depth(&hundred_thousand), 100_000);
    }

    #[test]
    fn unknown_fields_merge_into_data_and_data_wins() {
        let mut value = valid();
        value["host"] = json!("db-1");
        value["pid"] = json!(7);
        value["data"] = json!({"pid": 8});
        let entry = check(value).expect("valid");
        assert_eq!(entry.data.map(|data| Value::Object(data.to_map())), Some(json!({"host": "db-1", "pid": 8})));
    }

    #[test]
    fn merging_keeps_keys_that_need_escapes() {
        let mut value = valid();
        value["quote\"d"] = json!(1);
        value["data"] = json!({"back\\slash": 2});
        let entry = check(value).expect("valid");
        assert_eq!(entry.data.map(|data| Value::Object(data.to_map())), Some(json!({"quote\"d": 1, "back\\slash": 2})));
    }

    #[test]
    fn timestamps_as_numbers_or_iso_text() {
        // Received 2026-11-22 (a timestamp may be at most a day ahead of it).
        let check = |value: Value| entry_from_json(object(value), &Defaults::default(), 1_795_348_800_000);
        let mut value = valid();
        value["timestamp"] = json!("2024-03-01T12:00:00.250Z");
        assert_eq!(check(value.clone()).map(|e| e.timestamp), Ok(1_709_294_400_250));
        value["timestamp"] = json!("2024-03-01T13:00:00+01:00");
        assert_eq!(check(value.clone()).map(|e| e.timestamp), Ok(1_709_294_400_000));
        value["timestamp"] = json!(1_709_294_400_000_i64);
        assert_eq!(check(value.clone()).map(|e| e.timestamp), Ok(1_709_294_400_000));
        value["timestamp"] = json!("yesterday");
        assert!(check(value.clone()).is_err());
        value["timestamp"] = json!(true);
        assert!(check(value.clone()).is_err());
    }

    /// docs/API.md: from 2000-01-01T00:00:00Z to 24 hours past the receive time, both ends in.
    #[test]
    fn timestamps_outside_the_accepted_range_are_issues() {
        let now = 1_795_348_800_000;
        let at = |timestamp: Value| {
            let mut value = valid();
            value["timestamp"] = timestamp;
            entry_from_json(object(value), &Defaults::default(), now).map(|entry| entry.timestamp)
        };
        let out = Err(vec![Issue::at("timestamp", "Timestamp out of range")]);
        assert_eq!(at(json!(946_684_800_000_i64)), Ok(946_684_800_000));
        assert_eq!(at(json!(946_684_799_999_i64)), out);
        assert_eq!(at(json!(now + 86_400_000)), Ok(now + 86_400_000));
        assert_eq!(at(json!(now + 86_400_001)), out);
        assert_eq!(at(json!("0001-01-01T00:00:00Z")), out);
        assert_eq!(at(json!("9999-12-31T23:59:59Z")), out);
        assert_eq!(at(json!(-1)), out);
    }

    #[test]
    fn query_defaults_are_validated_like_sent_values() {
        let defaults = Defaults { level: Some("fatal".into()), ..Defaults::default() };
        let issues =
            entry_from_json(object(json!({"message": "m", "source": "s", "environment": "staging"})), &defaults, 0)
                .unwrap_err();
        assert_eq!(
            messages(&issues),
            vec![(
                r#"["level"]"#.into(),
                "Invalid enum value. Expected 'debug' | 'info' | 'warn' | 'error', received 'fatal'".into()
            )]
        );
    }

    #[test]
    fn sent_values_win_over_defaults() {
        let defaults = Defaults { source: Some("fallback".into()), ..Defaults::default() };
        let entry = entry_from_json(object(valid()), &defaults, 0).expect("valid");
        assert_eq!(entry.source, "api");
    }

    #[test]
    fn wrong_types_are_named() {
        let mut value = valid();
        value["level"] = json!(3);
        value["data"] = json!([1]);
        value["stepIndex"] = json!(1.5);
        let issues = check(value).unwrap_err();
        assert_eq!(
            messages(&issues),
            vec![
                (r#"["level"]"#.into(), "Expected string, received number".into()),
                (r#"["data"]"#.into(), "Expected object, received array".into()),
                (r#"["stepIndex"]"#.into(), "Expected integer, received float".into()),
            ]
        );
    }

    #[test]
    fn log_serialisation_omits_unset_fields() {
        let entry = check(valid()).expect("valid");
        let log = Log { id: LogId::generate(), entry, country: None, ip_address: Some("127.0.0.1".into()) };
        let value = serde_json::to_value(&log).unwrap_or_default();
        let keys: Vec<&str> = value.as_object().map(|o| o.keys().map(String::as_str).collect()).unwrap_or_default();
        assert_eq!(keys, vec!["dataset", "environment", "id", "ipAddress", "level", "message", "source", "timestamp"]);
    }
}
