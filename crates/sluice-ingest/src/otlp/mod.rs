//! OTLP/HTTP logs: an `ExportLogsServiceRequest` in protobuf or OTLP JSON, mapped to entries
//! as DECISIONS ("OpenTelemetry and shippers' own formats") says.
//!
//! Unlike the other formats a request is not all or nothing: records that break the entry
//! rules are counted and described (the answer's `partial_success`) and the rest are kept.
//!
//! ```
//! use sluice_ingest::otlp::{Encoding, parse_otlp};
//! use sluice_ingest::Options;
//! let body = br#"{"resourceLogs":[{"resource":{"attributes":[{"key":"service.name","value":{"stringValue":"checkout"}}]},
//!   "scopeLogs":[{"logRecords":[{"timeUnixNano":"1700000000000000000","severityNumber":17,"body":{"stringValue":"card declined"}}]}]}]}"#;
//! let mut options = Options::new(1_700_000_000_000);
//! options.defaults.environment = Some("production".into());
//! let batch = parse_otlp(Encoding::Json, body, &options).unwrap();
//! let entry = &batch.entries[0];
//! assert_eq!((entry.source.as_str(), entry.message.as_str(), entry.timestamp), ("checkout", "card declined", 1_700_000_000_000));
//! assert_eq!((entry.level.as_str(), batch.rejected), ("error", 0));
//! ```

mod bounds;

use std::fmt::Write as _;

use opentelemetry_proto::tonic::collector::logs::v1::{
    ExportLogsPartialSuccess, ExportLogsServiceRequest, ExportLogsServiceResponse,
};
use opentelemetry_proto::tonic::common::v1::{AnyValue, InstrumentationScope, KeyValue, any_value};
use opentelemetry_proto::tonic::logs::v1::LogRecord;
use prost::Message;
use serde_json::{Map, Value};
use sluice_model::{Draft, Environment, Issue, JsonObject, Level, LogEntry, Member, PathSegment, Sent};

pub use bounds::MAX_MESSAGES;
use bounds::Refusal;

use crate::{Format, IngestError, Options, ParseError};

/// The most log records one OTLP request may carry (SDK batches are 512 by default).
pub const MAX_RECORDS: usize = 1_000;
/// The source of a record whose resource names no `service.name` and whose query gives none.
pub const UNKNOWN_SERVICE: &str = "unknown_service";
/// What the entries of one request may hold in all (messages, `data`, stacks), past 4 times
/// the body: a resource's attributes are copied into each of its records' `data`, so a large
/// resource over many records could otherwise grow a request far past its 5 MiB. Records past
/// the budget are refused (`partial_success`).
const EXPANSION: usize = 4;
/// The budget of a small body.
const MIN_BUDGET: usize = 1 << 20;

/// How many rejected records `error_message` describes; the rest are only counted.
const DESCRIBED_REJECTIONS: usize = 5;

/// How an OTLP body is encoded; the answer uses the same.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Encoding {
    /// `application/x-protobuf`.
    Protobuf,
    /// OTLP JSON (`application/json` whose top level has `resourceLogs`).
    Json,
}

impl Encoding {
    /// The encoding a `Content-Type` names on its own: protobuf (`application/x-protobuf` or
    /// `application/protobuf`, parameters ignored). OTLP JSON is told by its body
    /// ([`is_otlp_json`]), since plain JSON entries share its type.
    ///
    /// ```
    /// use sluice_ingest::otlp::Encoding;
    /// assert_eq!(Encoding::from_content_type("Application/X-Protobuf; a=b"), Some(Encoding::Protobuf));
    /// assert_eq!(Encoding::from_content_type("application/json"), None);
    /// ```
    pub fn from_content_type(content_type: &str) -> Option<Encoding> {
        matches!(crate::format::essence(content_type).as_str(), "application/x-protobuf" | "application/protobuf")
            .then_some(Encoding::Protobuf)
    }
}

/// The records of one OTLP request that pass the entry rules, and what was made of the others.
#[derive(Debug, Clone, PartialEq)]
pub struct OtlpBatch {
    /// The entries, in the order of the records.
    pub entries: Vec<LogEntry>,
    /// Records refused (`partial_success.rejected_log_records`).
    pub rejected: usize,
    /// Why, for the first few (`partial_success.error_message`); empty when none was.
    pub error_message: String,
}

impl OtlpBatch {
    /// The `ExportLogsServiceResponse` for this batch in `encoding`, with its `Content-Type`:
    /// `partial_success` only when a record was refused.
    ///
    /// ```
    /// use sluice_ingest::otlp::{Encoding, OtlpBatch};
    /// let batch = OtlpBatch { entries: vec![], rejected: 2, error_message: "record 0: ...".into() };
    /// let (content_type, body) = batch.response(Encoding::Json);
    /// assert_eq!(content_type, "application/json");
    /// assert_eq!(body, br#"{"partialSuccess":{"errorMessage":"record 0: ...","rejectedLogRecords":"2"}}"#);
    /// ```
    pub fn response(&self, encoding: Encoding) -> (&'static str, Vec<u8>) {
        let partial_success = (self.rejected > 0).then(|| ExportLogsPartialSuccess {
            rejected_log_records: i64::try_from(self.rejected).unwrap_or(i64::MAX),
            error_message: self.error_message.clone(),
        });
        match encoding {
            Encoding::Protobuf => {
                ("application/x-protobuf", ExportLogsServiceResponse { partial_success }.encode_to_vec())
            }
            Encoding::Json => {
                // OTLP JSON: int64 as a string, and no `partialSuccess` at all when none was.
                let body = match partial_success {
                    Some(partial) => serde_json::json!({"partialSuccess": {
                        "rejectedLogRecords": partial.rejected_log_records.to_string(),
                        "errorMessage": partial.error_message,
                    }}),
                    None => serde_json::json!({}),
                };
                ("application/json", body.to_string().into_bytes())
            }
        }
    }
}

/// True when `body` is OTLP JSON: a JSON object whose top level has `resourceLogs`.
///
/// ```
/// use sluice_ingest::otlp::is_otlp_json;
/// assert!(is_otlp_json(br#" {"resourceLogs": []}"#));
/// assert!(!is_otlp_json(br#"{"logs": [{"message": "resourceLogs"}]}"#));
/// ```
pub fn is_otlp_json(body: &[u8]) -> bool {
    #[derive(serde::Deserialize)]
    struct Probe {
        #[serde(rename = "resourceLogs")]
        resource_logs: Option<serde::de::IgnoredAny>,
    }
    body.trim_ascii_start().starts_with(b"{")
        && crate::format::contains(body, b"\"resourceLogs\"")
        && serde_json::from_slice::<Probe>(body).is_ok_and(|probe| probe.resource_logs.is_some())
}

/// Decodes an OTLP request and maps its records; `options.max_entries` is not used (an OTLP
/// request carries up to [`MAX_RECORDS`]). `options.defaults` are the query's `source`,
/// `environment` and `level` (the caller puts the key's environment there when the query has
/// none); a record without a level, and a query without one, is `info`.
pub fn parse_otlp(encoding: Encoding, body: &[u8], options: &Options) -> Result<OtlpBatch, IngestError> {
    let unreadable = |reason: String| ParseError { format: Format::Otlp, line: None, column: None, reason };
    let refused = |refusal: Refusal| match refusal {
        Refusal::TooManyRecords => {
            IngestError::Invalid(vec![Issue::new(Vec::new(), format!("A request carries at most {MAX_RECORDS} logs"))])
        }
        Refusal::TooManyMessages => {
            IngestError::Parse(unreadable(format!("more than {MAX_MESSAGES} messages in one request")))
        }
        Refusal::Malformed(reason) => IngestError::Parse(unreadable(reason)),
    };
    let request = match encoding {
        Encoding::Protobuf => {
            bounds::count_protobuf(body, MAX_RECORDS).map_err(refused)?;
            ExportLogsServiceRequest::decode(body)
                .map_err(|error| IngestError::Parse(unreadable(format!("invalid protobuf: {error}"))))?
        }
        Encoding::Json => {
            bounds::count_json(body).map_err(refused)?;
            serde_json::from_slice::<ExportLogsServiceRequest>(body)
                .map_err(|error| IngestError::Parse(crate::json::parse_error(Format::Otlp, &error, None)))?
        }
    };
    let records: usize = request
        .resource_logs
        .iter()
        .flat_map(|resource| &resource.scope_logs)
        .map(|scope| scope.log_records.len())
        .sum();
    if records > MAX_RECORDS {
        return Err(refused(Refusal::TooManyRecords));
    }
    let budget = body.len().saturating_mul(EXPANSION).max(MIN_BUDGET);
    Ok(map_request(request, options, budget))
}

/// The entries of a decoded request.
fn map_request(request: ExportLogsServiceRequest, options: &Options, budget: usize) -> OtlpBatch {
    let mut defaults = options.defaults.clone();
    defaults.source.get_or_insert_with(|| UNKNOWN_SERVICE.into());
    defaults.level.get_or_insert_with(|| "info".to_owned());
    let defaults = defaults.resolve();
    let mut batch = OtlpBatch { entries: Vec::new(), rejected: 0, error_message: String::new() };
    let mut index = 0;
    let mut held = 0_usize;
    for resource_logs in request.resource_logs {
        let attributes = resource_logs.resource.map(|resource| resource.attributes).unwrap_or_default();
        let resource = Resource::of(attributes);
        for scope_logs in resource_logs.scope_logs {
            let scope = scope_logs.scope.as_ref().map(scope_json);
            for record in scope_logs.log_records {
                let draft = draft_of(record, &resource, scope.as_ref());
                match draft.finish_resolved(&defaults, options.received_at_ms) {
                    Ok(entry) => {
                        held = held.saturating_add(size_of(&entry));
                        if held <= budget {
                            batch.entries.push(entry);
                        } else {
                            let message = format!("the request's entries pass {budget} bytes");
                            batch.reject(index, &[Issue::new(Vec::new(), message)]);
                        }
                    }
                    Err(issues) => batch.reject(index, &issues),
                }
                index += 1;
            }
        }
    }
    batch
}

impl OtlpBatch {
    /// Counts a refused record and describes the first few.
    fn reject(&mut self, index: usize, issues: &[Issue]) {
        self.rejected += 1;
        if self.rejected > DESCRIBED_REJECTIONS {
            return;
        }
        if !self.error_message.is_empty() {
            self.error_message.push_str("; ");
        }
        let _ = write!(self.error_message, "record {index}:");
        for issue in issues.iter().take(3) {
            let field = issue.path.iter().map(|segment| match segment {
                PathSegment::Key(key) => key.clone(),
                PathSegment::Index(at) => at.to_string(),
            });
            let field = field.collect::<Vec<_>>().join(".");
            if field.is_empty() {
                let _ = write!(self.error_message, " {}", issue.message);
            } else {
                let _ = write!(self.error_message, " {field}: {}", issue.message);
            }
        }
    }
}

/// The bytes of text an entry holds (its other fields are small and bounded).
fn size_of(entry: &LogEntry) -> usize {
    let data = entry.data.as_ref().map_or(0, |data| data.as_str().len());
    let stack = entry.error_stack.as_deref().map_or(0, str::len);
    entry.message.len() + data + stack
}

/// What a resource gives each of its records.
struct Resource {
    service: Option<String>,
    version: Option<String>,
    environment: Option<Environment>,
    /// The other attributes, for `data.resource` (written once for all its records).
    rest: Option<JsonObject>,
}

impl Resource {
    fn of(attributes: Vec<KeyValue>) -> Resource {
        let mut resource = Resource { service: None, version: None, environment: None, rest: None };
        let (mut named_environment, mut legacy_environment) = (None, None);
        let mut rest = Map::new();
        for KeyValue { key, value, .. } in attributes {
            match key.as_str() {
                "service.name" => resource.service = value.as_ref().and_then(text),
                "service.version" => resource.version = value.as_ref().and_then(text),
                "deployment.environment.name" => named_environment = value.as_ref().and_then(text),
                "deployment.environment" => legacy_environment = value.as_ref().and_then(text),
                _ => {
                    rest.insert(key, value.as_ref().map_or(Value::Null, json));
                }
            }
        }
        resource.rest = (!rest.is_empty()).then(|| JsonObject::from_map(&rest));
        resource.environment = named_environment.or(legacy_environment).as_deref().and_then(environment_of);
        resource
    }
}

/// `prod*` → production, `stag*` → staging, `dev*`/`test`/`local` → development (DECISIONS);
/// any other name falls back to the query's or the key's environment.
fn environment_of(name: &str) -> Option<Environment> {
    let name = name.to_ascii_lowercase();
    if name.starts_with("prod") {
        Some(Environment::Production)
    } else if name.starts_with("stag") {
        Some(Environment::Staging)
    } else if name.starts_with("dev") || name == "test" || name == "local" {
        Some(Environment::Development)
    } else {
        None
    }
}

/// `severityNumber` 1–8 debug, 9–12 info, 13–16 warn, 17–24 error; else the usual names in
/// `severityText`; else `None` (the query's level, or info).
fn level_of(number: i32, text: &str) -> Option<Level> {
    match number {
        1..=8 => return Some(Level::Debug),
        9..=12 => return Some(Level::Info),
        13..=16 => return Some(Level::Warn),
        17..=24 => return Some(Level::Error),
        _ => {}
    }
    let text = text.trim().to_ascii_lowercase();
    let starts = |prefixes: &[&str]| prefixes.iter().any(|prefix| text.starts_with(prefix));
    if starts(&["trace", "debug"]) {
        Some(Level::Debug)
    } else if starts(&["info", "notice"]) {
        Some(Level::Info)
    } else if starts(&["warn"]) {
        Some(Level::Warn)
    } else if starts(&["err", "fatal", "crit", "alert", "emerg", "severe"]) {
        Some(Level::Error)
    } else {
        None
    }
}

/// One record as a draft entry.
fn draft_of(record: LogRecord, resource: &Resource, scope: Option<&JsonObject>) -> Draft {
    let mut draft = Draft {
        level: Sent::from_option(level_of(record.severity_number, &record.severity_text)),
        message: Sent::Value(message_of(record.body.as_ref())),
        source: Sent::from_option(resource.service.as_deref().map(Into::into)),
        environment: Sent::from_option(resource.environment),
        version: Sent::from_option(resource.version.clone()),
        ..Draft::default()
    };
    let nanos = [record.time_unix_nano, record.observed_time_unix_nano].into_iter().find(|nanos| *nanos > 0);
    if let Some(nanos) = nanos {
        draft.timestamp = Sent::Value(i64::try_from(nanos / 1_000_000).unwrap_or(i64::MAX));
    }
    let mut attributes = Map::new();
    let mut end_user = None;
    for KeyValue { key, value, .. } in record.attributes {
        let value = value.unwrap_or_default();
        let sent = || Sent::from_option(text(&value));
        match key.as_str() {
            "user.id" => draft.user_id = sent(),
            "enduser.id" => end_user = Some(sent()),
            "session.id" => draft.session_id = sent(),
            "exception.type" => draft.error_name = sent(),
            "exception.stacktrace" => draft.error_stack = sent(),
            _ => {
                attributes.insert(key, json(&value));
            }
        }
    }
    // `user.id`, else `enduser.id`, whichever order they come in.
    if let (Sent::Absent, Some(end_user)) = (&draft.user_id, end_user) {
        draft.user_id = end_user;
    }
    let trace_id = hex(&record.trace_id);
    let span_id = hex(&record.span_id);
    if let Some(trace_id) = &trace_id {
        draft.request_id = Sent::Value(trace_id.clone());
    }
    // `data`'s members in key order, written in one pass; the resource's and the scope's
    // objects were written once for all their records.
    let attributes = Value::Object(attributes);
    let mut members: Vec<(&str, Member<'_>)> = Vec::with_capacity(6);
    if attributes.as_object().is_some_and(|object| !object.is_empty()) {
        members.push(("attributes", Member::Value(&attributes)));
    }
    if !record.event_name.is_empty() {
        members.push(("eventName", Member::Str(&record.event_name)));
    }
    if let Some(rest) = &resource.rest {
        members.push(("resource", Member::Object(rest)));
    }
    if let Some(scope) = scope {
        members.push(("scope", Member::Object(scope)));
    }
    if let Some(span_id) = &span_id {
        members.push(("spanId", Member::Str(span_id)));
    }
    if let Some(trace_id) = &trace_id {
        members.push(("traceId", Member::Str(trace_id)));
    }
    if !members.is_empty() {
        draft.data = Sent::Value(JsonObject::from_members(&members));
    }
    draft
}

/// The body as a message: a string as it is, anything else as JSON text, nothing as `(empty)`.
fn message_of(body: Option<&AnyValue>) -> String {
    let message = match body.and_then(|body| body.value.as_ref()) {
        Some(any_value::Value::StringValue(text)) => text.clone(),
        None | Some(any_value::Value::StringValueStrindex(_)) => String::new(),
        Some(_) => body.map(json).unwrap_or_default().to_string(),
    };
    if message.trim().is_empty() { "(empty)".to_owned() } else { message }
}

/// A scalar attribute as text (`user.id` sent as an integer is still an id).
fn text(value: &AnyValue) -> Option<String> {
    match value.value.as_ref()? {
        any_value::Value::StringValue(text) => Some(text.clone()),
        any_value::Value::IntValue(number) => Some(number.to_string()),
        any_value::Value::DoubleValue(number) => Some(number.to_string()),
        any_value::Value::BoolValue(flag) => Some(flag.to_string()),
        _ => None,
    }
    .filter(|text| !text.is_empty())
}

/// An OTLP value as JSON: arrays and key-value lists nest; bytes become lowercase hex.
fn json(value: &AnyValue) -> Value {
    match &value.value {
        None | Some(any_value::Value::StringValueStrindex(_)) => Value::Null,
        Some(any_value::Value::StringValue(text)) => Value::String(text.clone()),
        Some(any_value::Value::BoolValue(flag)) => Value::Bool(*flag),
        Some(any_value::Value::IntValue(number)) => Value::from(*number),
        Some(any_value::Value::DoubleValue(number)) => {
            serde_json::Number::from_f64(*number).map_or_else(|| Value::String(number.to_string()), Value::Number)
        }
        Some(any_value::Value::BytesValue(bytes)) => hex(bytes).map_or(Value::Null, Value::String),
        Some(any_value::Value::ArrayValue(array)) => Value::Array(array.values.iter().map(json).collect()),
        Some(any_value::Value::KvlistValue(list)) => Value::Object(
            list.values.iter().map(|pair| (pair.key.clone(), pair.value.as_ref().map_or(Value::Null, json))).collect(),
        ),
    }
}

/// The scope as `data.scope`: its name, version and attributes where set.
fn scope_json(scope: &InstrumentationScope) -> JsonObject {
    let mut object = Map::new();
    if !scope.name.is_empty() {
        object.insert("name".to_owned(), Value::String(scope.name.clone()));
    }
    if !scope.version.is_empty() {
        object.insert("version".to_owned(), Value::String(scope.version.clone()));
    }
    if !scope.attributes.is_empty() {
        let attributes =
            scope.attributes.iter().map(|pair| (pair.key.clone(), pair.value.as_ref().map_or(Value::Null, json)));
        object.insert("attributes".to_owned(), Value::Object(attributes.collect()));
    }
    JsonObject::from_map(&object)
}

/// Lowercase hex of an id; `None` when it is empty or all zeros (an invalid trace or span id).
fn hex(bytes: &[u8]) -> Option<String> {
    if bytes.iter().all(|byte| *byte == 0) {
        return None;
    }
    Some(const_hex::encode(bytes))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn levels_follow_the_severity_number_then_the_text() {
        assert_eq!(level_of(5, "ERROR"), Some(Level::Debug));
        assert_eq!(level_of(12, ""), Some(Level::Info));
        assert_eq!(level_of(13, ""), Some(Level::Warn));
        assert_eq!(level_of(24, ""), Some(Level::Error));
        assert_eq!(level_of(0, "Warning"), Some(Level::Warn));
        assert_eq!(level_of(99, "FATAL"), Some(Level::Error));
        assert_eq!(level_of(0, "loud"), None);
    }

    #[test]
    fn environments_follow_the_decided_prefixes() {
        assert_eq!(environment_of("Production-EU"), Some(Environment::Production));
        assert_eq!(environment_of("staging"), Some(Environment::Staging));
        assert_eq!(environment_of("dev"), Some(Environment::Development));
        assert_eq!(environment_of("local"), Some(Environment::Development));
        assert_eq!(environment_of("qa"), None);
    }

    #[test]
    fn bodies_become_messages() {
        let kv = AnyValue {
            value: Some(any_value::Value::KvlistValue(opentelemetry_proto::tonic::common::v1::KeyValueList {
                values: vec![KeyValue {
                    key: "a".into(),
                    value: Some(AnyValue { value: Some(any_value::Value::IntValue(1)) }),
                    ..KeyValue::default()
                }],
            })),
        };
        assert_eq!(message_of(Some(&kv)), r#"{"a":1}"#);
        assert_eq!(message_of(None), "(empty)");
        assert_eq!(hex(&[0, 0]), None);
        assert_eq!(hex(&[0x0a, 0xff]).as_deref(), Some("0aff"));
    }
}
