//! JSON (three body shapes) and JSONL (one object per line).

use serde_json::Value;
use sluice_model::{Issue, PathSegment, entry_from_json, json_type_name};

use crate::{Batch, Format, IngestError, Options, ParseError};

/// A serde_json error as a [`ParseError`]: its message without serde's own position, plus
/// the line and column in our words.
pub(crate) fn parse_error(format: Format, error: &serde_json::Error, line: Option<usize>) -> ParseError {
    let text = error.to_string();
    let reason = match text.rfind(" at line ") {
        Some(position) => text[..position].to_owned(),
        None => text,
    };
    let column = (error.column() > 0).then_some(error.column());
    ParseError { format, line: line.or((error.line() > 0).then_some(error.line())), column, reason }
}

/// Validates every object, prefixing issue paths with `prefix` and the entry index.
pub(crate) fn validate(objects: Vec<Value>, prefix: &[PathSegment], options: &Options) -> Result<Batch, IngestError> {
    let count_path: Vec<PathSegment> = prefix.to_vec();
    if objects.is_empty() {
        return Err(IngestError::Invalid(vec![Issue::new(count_path, "Array must contain at least 1 element(s)")]));
    }
    let mut issues = Vec::new();
    if objects.len() > options.max_entries {
        // Reported first, but the entries are still checked: the answer lists every issue.
        issues.push(Issue::new(count_path, format!("Array must contain at most {} element(s)", options.max_entries)));
    }
    let mut entries = Vec::with_capacity(objects.len().min(options.max_entries));
    for (index, value) in objects.into_iter().enumerate() {
        let mut path = prefix.to_vec();
        path.push(PathSegment::Index(index));
        match value {
            Value::Object(object) => match entry_from_json(object, &options.defaults, options.received_at_ms) {
                Ok(entry) => entries.push(entry),
                Err(found) => issues.extend(found.into_iter().map(|issue| issue.under(&path))),
            },
            other => issues.push(Issue::new(path, format!("Expected object, received {}", json_type_name(&other)))),
        }
    }
    if issues.is_empty() { Ok(Batch { entries }) } else { Err(IngestError::Invalid(issues)) }
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
    let document: Value = serde_json::from_slice(body).map_err(|error| parse_error(Format::Json, &error, None))?;
    match document {
        Value::Array(items) => validate(items, &[], options),
        Value::Object(mut object) => match object.remove("logs") {
            Some(Value::Array(items)) => validate(items, &[PathSegment::from("logs")], options),
            Some(other) => Err(IngestError::Invalid(vec![Issue::at(
                "logs",
                format!("Expected array, received {}", json_type_name(&other)),
            )])),
            None => validate(vec![Value::Object(object)], &[], options),
        },
        other => Err(ParseError {
            format: Format::Json,
            line: None,
            column: None,
            reason: format!(
                "expected an object with a `logs` array, an array of entries or one entry object, found {}",
                json_type_name(&other)
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
    let mut objects = Vec::new();
    for (index, line) in body.split(|byte| *byte == b'\n').enumerate() {
        let line = line.trim_ascii();
        if line.is_empty() {
            continue;
        }
        let number = index + 1;
        let value: Value =
            serde_json::from_slice(line).map_err(|error| parse_error(Format::Jsonl, &error, Some(number)))?;
        if !value.is_object() {
            return Err(ParseError {
                format: Format::Jsonl,
                line: Some(number),
                column: Some(1),
                reason: format!("expected a JSON object, found {}", json_type_name(&value)),
            }
            .into());
        }
        objects.push(value);
    }
    validate(objects, &[], options)
}

#[cfg(test)]
mod tests {
    use serde_json::json;

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
        assert_eq!(
            issues(parse_json(too_many.as_bytes(), &options)),
            vec![r#"["logs"] Array must contain at most 100 element(s)"#]
        );
        assert_eq!(issues(parse_json(b"[]", &options)), vec!["[] Array must contain at least 1 element(s)"]);
        assert_eq!(issues(parse_jsonl(b"\n\n", &options)), vec!["[] Array must contain at least 1 element(s)"]);
    }

    #[test]
    fn an_over_long_batch_lists_its_bad_entries_too() {
        let mut entries = vec![entry("a"); 101];
        entries[7]["level"] = json!("fatal");
        let body = json!({"logs": entries}).to_string();
        let found = issues(parse_json(body.as_bytes(), &Options::new(0)));
        assert_eq!(found.len(), 2, "{found:?}");
        assert_eq!(found[0], r#"["logs"] Array must contain at most 100 element(s)"#);
        assert!(found[1].starts_with(r#"["logs",7,"level"]"#), "{found:?}");
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
