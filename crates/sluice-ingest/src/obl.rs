//! OBL (Open Board Log, `open-board-log-0.1`): logs of AAC devices. Every event of every
//! session becomes one entry, mapped as docs/API.md (POST /v1/logs, OBL) says.
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

use std::borrow::Cow;
use std::cell::Cell;
use std::fmt;

use serde::Deserialize;
use serde::de::{self, Deserializer, MapAccess, SeqAccess, Visitor};
use serde_json::Value;
use serde_json::value::RawValue;
use sluice_model::{Draft, Field, JsonObject, Level, Member, Sent, SmolStr};

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

/// The root object; only the keys the mapping uses are kept, borrowed from the body.
#[derive(Deserialize)]
#[serde(expecting = "an OBL object with a `sessions` array")]
struct Root<'a> {
    #[serde(borrow)]
    format: Option<&'a RawValue>,
    #[serde(borrow)]
    user_id: Option<&'a RawValue>,
    #[serde(borrow)]
    source: Option<&'a RawValue>,
    #[serde(borrow)]
    locale: Option<&'a RawValue>,
    #[serde(borrow)]
    device_id: Option<&'a RawValue>,
    #[serde(borrow)]
    sessions: Option<Sessions<'a>>,
}

#[derive(Deserialize)]
#[serde(expecting = "a session object")]
struct Session<'a> {
    #[serde(borrow)]
    id: Option<&'a RawValue>,
    #[serde(borrow, rename = "type")]
    kind: Option<&'a RawValue>,
    #[serde(borrow)]
    started: Option<&'a RawValue>,
    #[serde(borrow)]
    ended: Option<&'a RawValue>,
    #[serde(borrow)]
    device_id: Option<&'a RawValue>,
    #[serde(borrow)]
    events: Option<Events<'a>>,
}

thread_local! {
    /// How many more events the parse on this thread holds: `Options::max_entries` + 1, so the
    /// collector meets the one past the limit. Later events are read for their syntax only and
    /// never held, so a body of a million empty events costs no more than one of 101.
    static EVENTS_LEFT: Cell<usize> = const { Cell::new(usize::MAX) };
}

/// Sets [`EVENTS_LEFT`] for one parse, and lifts it when dropped.
struct EventBudget;

impl EventBudget {
    fn enter(events: usize) -> Self {
        EVENTS_LEFT.with(|left| left.set(events));
        EventBudget
    }
}

impl Drop for EventBudget {
    fn drop(&mut self) {
        EVENTS_LEFT.with(|left| left.set(usize::MAX));
    }
}

/// The sessions that hold an event: one with none gives no entry and is not kept.
struct Sessions<'a>(Vec<Session<'a>>);

impl<'de: 'a, 'a> Deserialize<'de> for Sessions<'a> {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        struct SessionsVisitor;
        impl<'de> Visitor<'de> for SessionsVisitor {
            type Value = Sessions<'de>;
            fn expecting(&self, formatter: &mut fmt::Formatter<'_>) -> fmt::Result {
                formatter.write_str("a `sessions` array")
            }
            fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<Sessions<'de>, A::Error> {
                let mut sessions = Vec::new();
                while let Some(session) = seq.next_element::<Session<'de>>()? {
                    if session.events.as_ref().is_some_and(|events| !events.0.is_empty()) {
                        sessions.push(session);
                    }
                }
                Ok(Sessions(sessions))
            }
        }
        deserializer.deserialize_seq(SessionsVisitor)
    }
}

/// A session's events, as many as [`EVENTS_LEFT`] still allows.
struct Events<'a>(Vec<Event<'a>>);

impl<'de: 'a, 'a> Deserialize<'de> for Events<'a> {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        struct EventsVisitor;
        impl<'de> Visitor<'de> for EventsVisitor {
            type Value = Events<'de>;
            fn expecting(&self, formatter: &mut fmt::Formatter<'_>) -> fmt::Result {
                formatter.write_str("an `events` array")
            }
            fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<Events<'de>, A::Error> {
                let mut events = Vec::new();
                while EVENTS_LEFT.with(Cell::get) > 0 {
                    let Some(event) = seq.next_element::<Event<'de>>()? else { return Ok(Events(events)) };
                    events.push(event);
                    EVENTS_LEFT.with(|left| left.set(left.get() - 1));
                }
                while seq.next_element::<de::IgnoredAny>()?.is_some() {}
                Ok(Events(events))
            }
        }
        deserializer.deserialize_seq(EventsVisitor)
    }
}

/// One event: its members in order, values as JSON text borrowed from the body.
struct Event<'a>(Vec<(Cow<'a, str>, &'a RawValue)>);

impl<'de: 'a, 'a> Deserialize<'de> for Event<'a> {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        struct Key<'a>(Cow<'a, str>);
        impl<'de> Deserialize<'de> for Key<'de> {
            fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
                struct KeyVisitor;
                impl<'de> Visitor<'de> for KeyVisitor {
                    type Value = Key<'de>;
                    fn expecting(&self, formatter: &mut fmt::Formatter<'_>) -> fmt::Result {
                        formatter.write_str("a key")
                    }
                    fn visit_borrowed_str<E: de::Error>(self, key: &'de str) -> Result<Key<'de>, E> {
                        Ok(Key(Cow::Borrowed(key)))
                    }
                    fn visit_str<E: de::Error>(self, key: &str) -> Result<Key<'de>, E> {
                        Ok(Key(Cow::Owned(key.to_owned())))
                    }
                }
                deserializer.deserialize_str(KeyVisitor)
            }
        }
        struct EventVisitor;
        impl<'de> Visitor<'de> for EventVisitor {
            type Value = Event<'de>;
            fn expecting(&self, formatter: &mut fmt::Formatter<'_>) -> fmt::Result {
                formatter.write_str("an event object")
            }
            fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<Event<'de>, A::Error> {
                let mut members = Vec::with_capacity(map.size_hint().unwrap_or(16));
                while let Some(Key(key)) = map.next_key()? {
                    members.push((key, map.next_value()?));
                }
                Ok(Event(members))
            }
        }
        let Event(members) = deserializer.deserialize_map(EventVisitor)?;
        Ok(Event(members))
    }
}

impl<'a> Event<'a> {
    fn get(&self, key: &str) -> Option<&'a RawValue> {
        self.0.iter().rev().find(|(name, _)| name == key).map(|(_, value)| *value)
    }
}

/// A non-empty string value.
fn text(value: Option<&RawValue>) -> Option<Cow<'_, str>> {
    let raw = value?.get();
    if !raw.starts_with('"') {
        return None;
    }
    let text = match serde_json::from_str::<&str>(raw) {
        Ok(text) => Cow::Borrowed(text),
        Err(_) => Cow::Owned(serde_json::from_str::<String>(raw).ok()?),
    };
    (!text.is_empty()).then_some(text)
}

/// The message of one event and the type it is recorded under.
fn describe(event: &Event<'_>, session_type: Option<&str>) -> (String, String) {
    let text_of = |key: &str| text(event.get(key));
    let kind = text_of("type");
    let body = text_of("text").unwrap_or_default();
    match kind.as_deref() {
        Some("button") => {
            let label = text_of("label")
                .or_else(|| text_of("vocalization"))
                .or_else(|| text_of("button_id"))
                .unwrap_or_default();
            let label = if label.is_empty() { "(no label)" } else { &label };
            (format!("Button: {label}"), "button".into())
        }
        Some("utterance") => (format!("Utterance: {body}"), "utterance".into()),
        Some("action") => (format!("Action: {}", text_of("action").unwrap_or_default()), "action".into()),
        Some("note") => (format!("Note: {body}"), "note".into()),
        Some(other) => (format!("Event: {other}"), other.to_owned()),
        None if event.get("text").is_some() && (session_type == Some("note") || event.get("author_name").is_some()) => {
            (format!("Note: {body}"), "note".into())
        }
        None => {
            let named = session_type.unwrap_or("event");
            (format!("Event: {named}"), named.to_owned())
        }
    }
}

fn is_null(raw: &&RawValue) -> bool {
    raw.get() == "null"
}

/// Parses an OBL body.
///
/// ```
/// use sluice_ingest::{Defaults, Options, obl::parse_obl};
/// let body = br#"/* NOTICE */ {"format":"open-board-log-0.1","user_id":"u1","source":"app",
///   "sessions":[{"id":"s1","type":"log","started":"2024-03-01T09:00:00Z","events":[
///     {"id":"e1","type":"button","label":"want","board_id":"home","timestamp":"2024-03-01T09:00:05Z"}]}]}"#;
/// let mut options = Options::new(1_795_348_800_000); // received 2026-11-22
/// options.defaults = Defaults { environment: Some("production".into()), ..Defaults::default() };
/// let entry = &parse_obl(body, &options).unwrap().entries[0];
/// assert_eq!((entry.message.as_str(), entry.user_id.as_deref()), ("Button: want", Some("u1")));
/// assert_eq!(entry.data.as_ref().unwrap().get("board_id"), Some("home".into()));
/// ```
pub fn parse_obl(body: &[u8], options: &Options) -> Result<Batch, IngestError> {
    let text_body = crate::frame::utf8(body, Format::Obl)?;
    let (json, comment_lines) = strip_comment(text_body)?;
    let budget = EventBudget::enter(options.max_entries.saturating_add(1));
    let root: Root<'_> = serde_json::from_str(json)
        .map_err(|error| crate::json::parse_error(Format::Obl, &error, Some(error.line() + comment_lines)))?;
    drop(budget);
    if let Some(format) = text(root.format)
        && !format.starts_with("open-board-log")
    {
        return Err(parse_error(format!("expected format `open-board-log-0.1`, found `{format}`"), None, None));
    }
    let Some(Sessions(sessions)) = root.sessions else {
        return Err(parse_error("expected a `sessions` array", None, None));
    };
    let source = text(root.source);
    let user_id = text(root.user_id);
    let root_device = text(root.device_id);
    let default_level = if options.defaults.level.is_some() { Sent::Absent } else { Sent::Value(Level::Info) };
    let root_members: Vec<(&str, &RawValue)> = [("locale", root.locale), ("device_id", root.device_id)]
        .into_iter()
        .filter_map(|(k, v)| Some((k, v?)))
        .collect();

    let mut collector = crate::json::Collector::new(options, &[], 0);
    'sessions: for session in sessions {
        let session_type = text(session.kind);
        let session_device = root_device.clone().or_else(|| text(session.device_id));
        let info: Vec<(&str, Member<'_>)> =
            [("id", session.id), ("type", session.kind), ("started", session.started), ("ended", session.ended)]
                .into_iter()
                .filter_map(|(key, value)| Some((key, Member::Json(value?))))
                .collect();
        let session_info = JsonObject::from_members(&info);
        for event in session.events.map(|events| events.0).unwrap_or_default() {
            let (message, event_type) = describe(&event, session_type.as_deref());
            let id = event.get("id").filter(|id| !is_null(id));
            let at = event.get("timestamp").filter(|at| !is_null(at)).or(session.started);
            // Members the mapping sets win over an event's own member of the same name.
            let ours = |key: &str| {
                matches!(key, "id" | "timestamp" | "type" | "eventType" | "session")
                    || key == "eventId" && id.is_some()
                    || root_members.iter().any(|(name, _)| *name == key)
            };
            let mut members: Vec<(&str, Member<'_>)> = Vec::with_capacity(event.0.len() + 5);
            members
                .extend(event.0.iter().filter(|(key, _)| !ours(key)).map(|(key, value)| (&**key, Member::Json(value))));
            if let Some(id) = id {
                members.push(("eventId", Member::Json(id)));
            }
            members.push(("eventType", Member::Str(&event_type)));
            members.push(("session", Member::Object(&session_info)));
            members.extend(root_members.iter().map(|(key, value)| (*key, Member::Json(value))));

            let mut draft = Draft {
                level: default_level.clone(),
                message: Sent::Value(message),
                source: Sent::from_option(source.as_deref().map(SmolStr::new)),
                user_id: Sent::from_option(user_id.as_deref().map(str::to_owned)),
                session_id: Sent::from_option(session_device.as_deref().map(str::to_owned)),
                data: Sent::Value(JsonObject::from_members(&members)),
                ..Draft::default()
            };
            if let Some(at) = at.and_then(|at| serde_json::from_str::<Value>(at.get()).ok()) {
                draft.set(Field::Timestamp, at);
            }
            if !collector.push(draft) {
                break 'sessions;
            }
        }
    }
    collector.finish()
}
