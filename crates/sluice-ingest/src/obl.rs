//! OBL (Open Board Log, `open-board-log-0.1`): logs of AAC devices. Every event of every
//! session becomes one entry, mapped as SPEC's table and DECISIONS say.
//!
//! | event `type` | `message` | notes |
//! |---|---|---|
//! | `button` | `Button: {label}` | `vocalization`, then `button_id`, when the label is missing |
//! | `utterance` | `Utterance: {text}` | |
//! | `action` | `Action: {action}` | |
//! | `note` | `Note: {text}` | also events with no `type` that carry `text` in a note session or with an `author_name` (CoughDrop's note exports) |
//! | anything else | `Event: {type}` | kept, never rejected; an event with no `type` at all is named after its session's type |
//!
//! Every field of an event except `id`, `timestamp` and `type` goes into `data`, plus
//! `eventId`, `eventType`, `session` (`{id, type, started, ended}`) and the root's `locale`
//! and `device_id`. `user_id` → `userId`; `device_id` (the root's, else the session's) →
//! `sessionId`; root `source` → `source` (the query default only when the root has none);
//! level: the query default, else `info`; an event without timestamp takes its session's
//! `started`. A leading `/* ... */` comment is stripped.

use serde_json::{Map, Value};

use crate::{Batch, Format, IngestError, Options, ParseError};

fn parse_error(reason: impl Into<String>, line: Option<usize>, column: Option<usize>) -> IngestError {
    ParseError { format: Format::Obl, line, column, reason: reason.into() }.into()
}

/// The body without a leading `/* ... */` comment, and how many lines the comment took.
fn strip_comment(text: &str) -> Result<(&str, usize), IngestError> {
    let trimmed = text.trim_start();
    let Some(rest) = trimmed.strip_prefix("/*") else { return Ok((text, 0)) };
    let end =
        rest.find("*/").ok_or_else(|| parse_error("expected `*/` to close the leading comment", Some(1), Some(1)))?;
    let consumed = &text[..text.len() - rest.len() + end + 2];
    Ok((&rest[end + 2..], consumed.matches('\n').count()))
}

fn text_of<'a>(object: &'a Map<String, Value>, key: &str) -> Option<&'a str> {
    object.get(key).and_then(Value::as_str).filter(|text| !text.is_empty())
}

/// The message of one event and the type it is recorded under.
fn describe(event: &Map<String, Value>, session_type: Option<&str>) -> (String, String) {
    let kind = text_of(event, "type");
    let text = text_of(event, "text").unwrap_or("");
    match kind {
        Some("button") => {
            let label = text_of(event, "label")
                .or_else(|| text_of(event, "vocalization"))
                .or_else(|| text_of(event, "button_id"))
                .unwrap_or("(no label)");
            (format!("Button: {label}"), "button".into())
        }
        Some("utterance") => (format!("Utterance: {text}"), "utterance".into()),
        Some("action") => (format!("Action: {}", text_of(event, "action").unwrap_or("")), "action".into()),
        Some("note") => (format!("Note: {text}"), "note".into()),
        Some(other) => (format!("Event: {other}"), other.to_owned()),
        None if event.contains_key("text") && (session_type == Some("note") || event.contains_key("author_name")) => {
            (format!("Note: {text}"), "note".into())
        }
        None => {
            let named = session_type.unwrap_or("event");
            (format!("Event: {named}"), named.to_owned())
        }
    }
}

/// Parses an OBL body.
///
/// ```
/// use sluice_ingest::{Defaults, Options, obl::parse_obl};
/// let body = br#"/* NOTICE */ {"format":"open-board-log-0.1","user_id":"u1","source":"app",
///   "sessions":[{"id":"s1","type":"log","started":"2024-03-01T09:00:00Z","events":[
///     {"id":"e1","type":"button","label":"want","board_id":"home","timestamp":"2024-03-01T09:00:05Z"}]}]}"#;
/// let mut options = Options::new(0);
/// options.defaults = Defaults { environment: Some("production".into()), ..Defaults::default() };
/// let entry = &parse_obl(body, &options).unwrap().entries[0];
/// assert_eq!((entry.message.as_str(), entry.user_id.as_deref()), ("Button: want", Some("u1")));
/// assert_eq!(entry.data.as_ref().unwrap()["board_id"], "home");
/// ```
pub fn parse_obl(body: &[u8], options: &Options) -> Result<Batch, IngestError> {
    let text = std::str::from_utf8(body).map_err(|_| parse_error("invalid UTF-8", None, None))?;
    let (json, comment_lines) = strip_comment(text)?;
    let root: Value = serde_json::from_str(json)
        .map_err(|error| crate::json::parse_error(Format::Obl, &error, Some(error.line() + comment_lines)))?;
    let Value::Object(root) = root else { return Err(parse_error("expected a JSON object", None, None)) };
    if let Some(format) = root.get("format").and_then(Value::as_str)
        && !format.starts_with("open-board-log")
    {
        return Err(parse_error(format!("expected format `open-board-log-0.1`, found `{format}`"), None, None));
    }
    let Some(Value::Array(sessions)) = root.get("sessions") else {
        return Err(parse_error("expected a `sessions` array", None, None));
    };

    let mut objects = Vec::new();
    for session in sessions {
        let Value::Object(session) = session else {
            return Err(parse_error("expected each session to be an object", None, None));
        };
        let session_type = text_of(session, "type");
        let session_info: Map<String, Value> = ["id", "type", "started", "ended"]
            .into_iter()
            .filter_map(|key| session.get(key).map(|value| (key.to_owned(), value.clone())))
            .collect();
        let events = match session.get("events") {
            Some(Value::Array(events)) => events.as_slice(),
            None | Some(Value::Null) => &[],
            Some(_) => return Err(parse_error("expected `events` to be an array", None, None)),
        };
        for event in events {
            let Value::Object(event) = event else {
                return Err(parse_error("expected each event to be an object", None, None));
            };
            let (message, event_type) = describe(event, session_type);
            let mut data: Map<String, Value> = event
                .iter()
                .filter(|(key, _)| !matches!(key.as_str(), "id" | "timestamp" | "type"))
                .map(|(key, value)| (key.clone(), value.clone()))
                .collect();
            if let Some(id) = event.get("id").filter(|id| !id.is_null()) {
                data.insert("eventId".into(), id.clone());
            }
            data.insert("eventType".into(), event_type.into());
            data.insert("session".into(), Value::Object(session_info.clone()));
            for key in ["locale", "device_id"] {
                if let Some(value) = root.get(key) {
                    data.insert(key.into(), value.clone());
                }
            }

            let mut entry = Map::new();
            entry.insert("message".into(), message.into());
            entry.insert("level".into(), options.defaults.level.as_deref().unwrap_or("info").into());
            if let Some(source) = text_of(&root, "source") {
                entry.insert("source".into(), source.into());
            }
            if let Some(user) = text_of(&root, "user_id") {
                entry.insert("userId".into(), user.into());
            }
            if let Some(device) = text_of(&root, "device_id").or_else(|| text_of(session, "device_id")) {
                entry.insert("sessionId".into(), device.into());
            }
            if let Some(at) = event.get("timestamp").filter(|at| !at.is_null()).or_else(|| session.get("started")) {
                entry.insert("timestamp".into(), at.clone());
            }
            entry.insert("data".into(), Value::Object(data));
            objects.push(Value::Object(entry));
        }
    }
    crate::json::validate(objects, &[], options)
}
