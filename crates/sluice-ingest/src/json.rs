//! JSON (three body shapes) and JSONL (one object per line).

use std::fmt;

use serde::de::{self, Deserialize, DeserializeSeed, Deserializer, IgnoredAny, MapAccess, SeqAccess, Visitor};
use sluice_model::limits::MAX_ENTRIES_PER_REQUEST;
use sluice_model::{Draft, DraftVisitor, Issue, Key, LogEntry, PathSegment, ResolvedDefaults};

use crate::{Batch, Format, IngestError, Options, ParseError};

/// The most characters of serde's message a parse error repeats.
const MAX_REASON_CHARS: usize = 200;

/// A serde_json error as a [`ParseError`]: its message without serde's own position, plus
/// the line and column in our words.
pub(crate) fn parse_error(format: Format, error: &serde_json::Error, line: Option<usize>) -> ParseError {
    let text = error.to_string();
    // serde's message may quote what was sent (a whole string): keep the answer small.
    let reason = &text[..text.rfind(" at line ").unwrap_or(text.len())];
    let reason = sluice_model::clip(reason, MAX_REASON_CHARS);
    let column = (error.column() > 0).then_some(error.column());
    ParseError { format, line: line.or((error.line() > 0).then_some(error.line())), column, reason }
}

/// One item of a batch: an entry object, or the JSON type name of something else.
#[allow(clippy::large_enum_variant, reason = "nearly every item is an entry; boxing would cost an allocation each")]
pub(crate) enum Item {
    Entry(Draft),
    NotObject(&'static str),
}

impl<'de> Deserialize<'de> for Item {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        deserializer.deserialize_any(ItemVisitor)
    }
}

struct ItemVisitor;

impl<'de> Visitor<'de> for ItemVisitor {
    type Value = Item;

    fn expecting(&self, formatter: &mut fmt::Formatter<'_>) -> fmt::Result {
        formatter.write_str("a log entry object")
    }
    fn visit_map<A: MapAccess<'de>>(self, map: A) -> Result<Item, A::Error> {
        DraftVisitor.visit_map(map).map(Item::Entry)
    }
    fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<Item, A::Error> {
        while seq.next_element::<IgnoredAny>()?.is_some() {}
        Ok(Item::NotObject("array"))
    }
    fn visit_bool<E: de::Error>(self, _: bool) -> Result<Item, E> {
        Ok(Item::NotObject("boolean"))
    }
    fn visit_i64<E: de::Error>(self, _: i64) -> Result<Item, E> {
        Ok(Item::NotObject("number"))
    }
    fn visit_u64<E: de::Error>(self, _: u64) -> Result<Item, E> {
        Ok(Item::NotObject("number"))
    }
    fn visit_f64<E: de::Error>(self, _: f64) -> Result<Item, E> {
        Ok(Item::NotObject("number"))
    }
    fn visit_str<E: de::Error>(self, _: &str) -> Result<Item, E> {
        Ok(Item::NotObject("string"))
    }
    fn visit_unit<E: de::Error>(self) -> Result<Item, E> {
        Ok(Item::NotObject("null"))
    }
}

/// A JSON body in one of its three shapes, read in one pass.
enum Body {
    /// `{"logs": [...]}`.
    Wrapped(Vec<Item>),
    /// `{"logs": <not an array>}`: the type found.
    WrappedNotArray(&'static str),
    /// `[...]`.
    Bare(Vec<Item>),
    /// One entry object.
    Single(Box<Draft>),
    /// A scalar: its type.
    Scalar(&'static str),
}

/// The value of a `logs` key: an array of items, or the type of something else.
enum Logs {
    Items(Vec<Item>),
    Not(&'static str),
}

/// Reads the value of a `logs` key, holding at most `hold` of its items.
struct LogsSeed {
    hold: usize,
}

impl<'de> DeserializeSeed<'de> for LogsSeed {
    type Value = Logs;

    fn deserialize<D: Deserializer<'de>>(self, deserializer: D) -> Result<Logs, D::Error> {
        let value = deserializer.deserialize_any(BodyVisitor { hold: self.hold })?;
        Ok(match value {
            Body::Bare(items) => Logs::Items(items),
            Body::Scalar(kind) => Logs::Not(kind),
            _ => Logs::Not("object"),
        })
    }
}

/// Reads a body; an array's items past the first `hold` are skipped unread (the batch is too
/// long whatever they hold), so no body makes more than `hold` drafts.
struct BodyVisitor {
    hold: usize,
}

impl<'de> Visitor<'de> for BodyVisitor {
    type Value = Body;

    fn expecting(&self, formatter: &mut fmt::Formatter<'_>) -> fmt::Result {
        formatter.write_str("an object with a `logs` array, an array of entries or one entry object")
    }
    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<Body, A::Error> {
        // An object is the wrapped shape when it has a `logs` key (other keys are then
        // ignored), else a single entry; its fields are read into a draft as they come.
        let mut draft = Draft::default();
        let mut logs = None;
        while let Some(key) = map.next_key::<Key>()? {
            match key {
                Key::Other(name) if name == "logs" => logs = Some(map.next_value_seed(LogsSeed { hold: self.hold })?),
                _ if logs.is_some() => {
                    map.next_value::<IgnoredAny>()?;
                }
                key => draft.read_value(key, &mut map)?,
            }
        }
        Ok(match logs {
            Some(Logs::Items(items)) => Body::Wrapped(items),
            Some(Logs::Not(kind)) => Body::WrappedNotArray(kind),
            None => Body::Single(Box::new(draft)),
        })
    }
    fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<Body, A::Error> {
        let mut items =
            Vec::with_capacity(seq.size_hint().unwrap_or(0).min(self.hold).min(MAX_ENTRIES_PER_REQUEST + 1));
        while items.len() < self.hold {
            match seq.next_element::<Item>()? {
                Some(item) => items.push(item),
                None => return Ok(Body::Bare(items)),
            }
        }
        while seq.next_element::<IgnoredAny>()?.is_some() {}
        Ok(Body::Bare(items))
    }
    fn visit_bool<E: de::Error>(self, _: bool) -> Result<Body, E> {
        Ok(Body::Scalar("boolean"))
    }
    fn visit_i64<E: de::Error>(self, _: i64) -> Result<Body, E> {
        Ok(Body::Scalar("number"))
    }
    fn visit_u64<E: de::Error>(self, _: u64) -> Result<Body, E> {
        Ok(Body::Scalar("number"))
    }
    fn visit_f64<E: de::Error>(self, _: f64) -> Result<Body, E> {
        Ok(Body::Scalar("number"))
    }
    fn visit_str<E: de::Error>(self, _: &str) -> Result<Body, E> {
        Ok(Body::Scalar("string"))
    }
    fn visit_unit<E: de::Error>(self) -> Result<Body, E> {
        Ok(Body::Scalar("null"))
    }
}

/// The most issues a 400 lists (docs/API.md, POST /v1/logs): the work and the answer stay
/// bounded whatever the body holds.
pub const MAX_ISSUES: usize = 100;

/// Checks entries one by one as a parser produces them, so no list of drafts is kept.
/// Issue paths are prefixed with `prefix` and the entry index.
pub(crate) struct Collector<'o> {
    options: &'o Options,
    prefix: &'o [PathSegment],
    entries: Vec<LogEntry>,
    issues: Vec<Issue>,
    count: usize,
    /// An entry past `options.max_entries` was offered: the batch is refused with one issue.
    too_many: bool,
    /// `options.defaults`, read once for the batch.
    defaults: ResolvedDefaults,
}

impl<'o> Collector<'o> {
    /// `expected` is a guess of the entry count, to allocate once.
    pub(crate) fn new(options: &'o Options, prefix: &'o [PathSegment], expected: usize) -> Self {
        let capacity = expected.min(options.max_entries);
        Collector {
            options,
            prefix,
            entries: Vec::with_capacity(capacity),
            issues: Vec::new(),
            count: 0,
            too_many: false,
            defaults: options.defaults.resolve(),
        }
    }

    /// A collector sized for a line-oriented body: at most one entry per line.
    pub(crate) fn for_lines(options: &'o Options, body: &[u8]) -> Self {
        Collector::new(options, &[], crate::frame::count_lines(body))
    }

    fn path(&self, index: usize) -> Vec<PathSegment> {
        let mut path = self.prefix.to_vec();
        path.push(PathSegment::Index(index));
        path
    }

    /// To be asked before each further entry: true when the batch already holds the most
    /// entries it may, so this one makes it too long; the batch is then refused and the parser
    /// stops reading.
    pub(crate) fn at_limit(&mut self) -> bool {
        if self.count >= self.options.max_entries {
            self.too_many = true;
        }
        self.too_many
    }

    /// Adds found issues, keeping at most [`MAX_ISSUES`].
    fn add_issues(&mut self, found: impl IntoIterator<Item = Issue>) {
        let room = MAX_ISSUES.saturating_sub(self.issues.len());
        self.issues.extend(found.into_iter().take(room));
    }

    /// Checks one draft; false once the batch is too long (the draft is not checked, and the
    /// parser stops reading: docs/API.md, POST /v1/logs).
    #[inline]
    pub(crate) fn push(&mut self, draft: Draft) -> bool {
        if self.at_limit() {
            return false;
        }
        let index = self.count;
        self.count += 1;
        match draft.finish_resolved(&self.defaults, self.options.received_at_ms) {
            // Once anything failed, or the batch is too long, the answer is an error: the
            // remaining entries are only checked, not kept.
            Ok(entry) if self.issues.is_empty() && self.count <= self.options.max_entries => self.entries.push(entry),
            Ok(_) => {}
            Err(found) => {
                let path = self.path(index);
                self.add_issues(found.into_iter().map(|issue| issue.under(&path)));
            }
        }
        true
    }

    /// Checks one batch item; false once the batch is too long.
    pub(crate) fn push_item(&mut self, item: Item) -> bool {
        match item {
            Item::Entry(mut draft) => {
                // JSON and JSONL take the fields of the usual Node.js loggers too.
                draft.adopt_shipper_fields();
                self.push(draft)
            }
            Item::NotObject(_) if self.at_limit() => false,
            Item::NotObject(kind) => {
                let path = self.path(self.count);
                self.count += 1;
                self.add_issues([Issue::new(path, format!("Expected object, received {kind}"))]);
                true
            }
        }
    }

    /// The batch, or every issue (the batch's length first).
    pub(crate) fn finish(self) -> Result<Batch, IngestError> {
        if self.count == 0 {
            return Err(IngestError::Invalid(vec![Issue::new(
                self.prefix.to_vec(),
                "Array must contain at least 1 element(s)",
            )]));
        }
        if self.too_many {
            // The one issue of a request with more entries than it may carry (docs/API.md).
            let message = format!("A request carries at most {} logs", self.options.max_entries);
            return Err(IngestError::Invalid(vec![Issue::new(Vec::new(), message)]));
        }
        if self.issues.is_empty() {
            Ok(Batch { entries: self.entries })
        } else {
            Err(IngestError::Invalid(self.issues))
        }
    }
}

/// Checks every item of a JSON batch.
fn finish_items(items: Vec<Item>, prefix: &[PathSegment], options: &Options) -> Result<Batch, IngestError> {
    let mut collector = Collector::new(options, prefix, items.len());
    for item in items {
        if !collector.push_item(item) {
            break;
        }
    }
    collector.finish()
}

/// Parses a JSON body: `{"logs": [...]}`, a bare array of entries, or one entry object.
///
/// Issue paths are `["logs", i, field]` for the first shape and `[i, field]` for the others.
///
/// ```
/// use sluice_ingest::{Options, parse_json};
/// let body = br#"{"logs":[{"level":"info","message":"up","source":"api","environment":"staging"}]}"#;
/// assert_eq!(parse_json(body, &Options::new(0)).unwrap().entries[0].message, "up");
/// ```
pub fn parse_json(body: &[u8], options: &Options) -> Result<Batch, IngestError> {
    let mut deserializer = serde_json::Deserializer::from_slice(body);
    // One item past the limit is held, so the collector sees that the batch is too long.
    let hold = options.max_entries.saturating_add(1);
    let document = Deserializer::deserialize_any(&mut deserializer, BodyVisitor { hold })
        .and_then(|document| deserializer.end().map(|()| document))
        .map_err(|error| parse_error(Format::Json, &error, None))?;
    match document {
        Body::Bare(items) => finish_items(items, &[], options),
        Body::Wrapped(items) => finish_items(items, &[PathSegment::from("logs")], options),
        Body::WrappedNotArray(kind) => {
            Err(IngestError::Invalid(vec![Issue::at("logs", format!("Expected array, received {kind}"))]))
        }
        Body::Single(draft) => finish_items(vec![Item::Entry(*draft)], &[], options),
        Body::Scalar(kind) => Err(ParseError {
            format: Format::Json,
            line: None,
            column: None,
            reason: format!(
                "expected an object with a `logs` array, an array of entries or one entry object, found {kind}"
            ),
        }
        .into()),
    }
}

/// Parses a JSONL body: one JSON object per line; blank lines are skipped. Line numbers in
/// errors count every line of the body, blank ones included.
///
/// ```
/// use sluice_ingest::{Options, parse_jsonl};
/// let error = parse_jsonl(b"{\"level\":\"info\"}\n{oops", &Options::new(0)).unwrap_err();
/// assert_eq!(error.to_string(), "JSONL line 2: key must be a string at column 2");
/// ```
pub fn parse_jsonl(body: &[u8], options: &Options) -> Result<Batch, IngestError> {
    let mut collector = Collector::for_lines(options, body);
    for (index, line) in body.split(|byte| *byte == b'\n').enumerate() {
        let line = line.trim_ascii();
        if line.is_empty() {
            continue;
        }
        if collector.at_limit() {
            break;
        }
        let number = index + 1;
        let item: Item =
            serde_json::from_slice(line).map_err(|error| parse_error(Format::Jsonl, &error, Some(number)))?;
        if let Item::NotObject(kind) = item {
            return Err(ParseError {
                format: Format::Jsonl,
                line: Some(number),
                column: Some(1),
                reason: format!("expected a JSON object, found {kind}"),
            }
            .into());
        }
        if !collector.push_item(item) {
            break;
        }
    }
    collector.finish()
}

#[cfg(test)]
mod tests {
    use serde_json::{Value, json};

    use super::*;

    fn entry(message: &str) -> Value {
        json!({"level": "info", "message": message, "source": "api", "environment": "production"})
    }

    fn issues(result: Result<Batch, IngestError>) -> Vec<String> {
        match result {
            Err(IngestError::Invalid(issues)) => issues
                .iter()
                .map(|issue| format!("{} {}", serde_json::to_string(&issue.path).unwrap_or_default(), issue.message))
                .collect(),
            other => panic!("expected a validation error, got {other:?}"),
        }
    }

    #[test]
    fn three_json_shapes() {
        let options = Options::new(0);
        let wrapped = json!({"logs": [entry("a"), entry("b")]}).to_string();
        let bare = json!([entry("a"), entry("b")]).to_string();
        let single = entry("a").to_string();
        assert_eq!(parse_json(wrapped.as_bytes(), &options).map(|b| b.entries.len()), Ok(2));
        assert_eq!(parse_json(bare.as_bytes(), &options).map(|b| b.entries.len()), Ok(2));
        assert_eq!(parse_json(single.as_bytes(), &options).map(|b| b.entries.len()), Ok(1));
    }

    #[test]
    fn issue_paths_depend_on_the_shape() {
        let options = Options::new(0);
        let mut bad = entry("a");
        bad["level"] = json!("fatal");
        let wrapped = json!({"logs": [entry("ok"), bad.clone()]}).to_string();
        let bare = json!([entry("ok"), bad]).to_string();
        let expected = "Invalid enum value. Expected 'debug' | 'info' | 'warn' | 'error', received 'fatal'";
        assert_eq!(issues(parse_json(wrapped.as_bytes(), &options)), vec![format!(r#"["logs",1,"level"] {expected}"#)]);
        assert_eq!(issues(parse_json(bare.as_bytes(), &options)), vec![format!(r#"[1,"level"] {expected}"#)]);
    }

    #[test]
    fn batch_size_is_bounded() {
        let options = Options::new(0);
        let hundred = json!({"logs": vec![entry("a"); 100]}).to_string();
        assert!(parse_json(hundred.as_bytes(), &options).is_ok());
        let too_many = json!({"logs": vec![entry("a"); 101]}).to_string();
        assert_eq!(issues(parse_json(too_many.as_bytes(), &options)), vec!["[] A request carries at most 100 logs"]);
        assert_eq!(issues(parse_json(b"[]", &options)), vec!["[] Array must contain at least 1 element(s)"]);
        assert_eq!(issues(parse_jsonl(b"\n\n", &options)), vec!["[] Array must contain at least 1 element(s)"]);
    }

    /// docs/API.md: parsing stops at the 101st entry, whose one issue is the whole answer, so
    /// what comes after it (more entries, bad entries, broken syntax) is never read.
    #[test]
    fn parsing_stops_at_the_101st_entry_with_one_issue() {
        let options = Options::new(0);
        let mut entries = vec![entry("a"); 101];
        entries[7]["level"] = json!("fatal");
        let body = json!({"logs": entries}).to_string();
        assert_eq!(issues(parse_json(body.as_bytes(), &options)), vec!["[] A request carries at most 100 logs"]);
        // 1.7 million empty objects in 5 MiB: one issue, not one per object.
        let empty = format!("[{}{{}}]", "{},".repeat(1_700_000));
        assert_eq!(issues(parse_json(empty.as_bytes(), &options)), vec!["[] A request carries at most 100 logs"]);
        let lines: String = (0..101).map(|n| format!("{}\n", entry(&format!("l{n}")))).collect();
        let broken = format!("{lines}{{not json\n");
        assert_eq!(issues(parse_jsonl(broken.as_bytes(), &options)), vec!["[] A request carries at most 100 logs"]);
        let empties = "{}\n".repeat(500_000);
        assert_eq!(issues(parse_jsonl(empties.as_bytes(), &options)), vec!["[] A request carries at most 100 logs"]);
    }

    /// docs/API.md: a 400 lists at most 100 issues, in order, the first ones found.
    #[test]
    fn an_answer_lists_at_most_one_hundred_issues() {
        let options = Options::new(0);
        let body = format!("[{}{{}}]", "{},".repeat(99));
        let found = issues(parse_json(body.as_bytes(), &options));
        assert_eq!(found.len(), MAX_ISSUES, "100 entries, each missing four fields");
        assert!(found[0].starts_with("[0,"), "{found:?}");
        assert!(found[99].starts_with("[24,"), "the first issues, in order: {found:?}");
    }

    #[test]
    fn jsonl_issue_paths_use_the_entry_index_not_the_line() {
        let mut bad = entry("b");
        bad["source"] = json!("");
        let body = format!(
            "{}

{}
",
            entry("a"),
            bad
        );
        assert_eq!(
            issues(parse_jsonl(body.as_bytes(), &Options::new(0))),
            vec![r#"[1,"source"] String must contain at least 1 character(s)"#]
        );
    }

    #[test]
    fn jsonl_errors_name_the_line() {
        let options = Options::new(0);
        let body = format!("{}\n\n{}\n[1]\n", entry("a"), entry("b"));
        let error = parse_jsonl(body.as_bytes(), &options).unwrap_err();
        assert_eq!(error.to_string(), "JSONL line 4: expected a JSON object, found array at column 1");
        let error = parse_jsonl(format!("{}\n{{\"a\":", entry("a")).as_bytes(), &options).unwrap_err();
        assert_eq!(error.to_string(), "JSONL line 2: EOF while parsing a value at column 5");
    }

    #[test]
    fn jsonl_skips_blank_lines_and_carriage_returns() {
        let body = format!("{}\r\n\r\n{}\r\n", entry("a"), entry("b"));
        let batch = parse_jsonl(body.as_bytes(), &Options::new(0)).expect("valid");
        assert_eq!(batch.entries.iter().map(|e| e.message.as_str()).collect::<Vec<_>>(), vec!["a", "b"]);
    }

    #[test]
    fn invalid_utf8_is_a_parse_error() {
        let error = parse_json(b"{\"message\":\"\xff\"}", &Options::new(0)).unwrap_err();
        assert!(matches!(error, IngestError::Parse(_)), "{error:?}");
    }

    #[test]
    fn scalars_are_not_bodies() {
        let error = parse_json(b"42", &Options::new(0)).unwrap_err();
        assert!(error.to_string().starts_with("JSON: expected an object"), "{error}");
    }
}
