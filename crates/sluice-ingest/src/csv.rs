//! CSV: a header row of field names, then one entry per row, read with the `csv` crate.
//!
//! Comma or tab is detected from the header row; RFC 4180 quoting (commas, quotes and line
//! breaks inside quoted cells) is supported. Cells of known fields are typed as docs/API.md
//! (CSV) says: `data` is a JSON object as text; `tags` is a JSON array or a `;`-separated list;
//! `timestamp` is Unix ms or ISO 8601 (one whose date or time cannot exist, `2024-02-30T12:00:00Z`,
//! is a parse error naming the line); `stepIndex` a number. An empty cell is an absent field.
//! Columns that are not field names go into `data`, as text.
//!
//! Exported tables often name their columns otherwise (loghub: `Level`, `Content`). Without a
//! `message` column, the first column named `message`, `msg`, `content`, `text` or `log` (any
//! case) gives the message; without a `level` column, a `level`, `severity` or `loglevel`
//! column (any case) is read with the text format's keywords (`INFO`, `notice`, `Warning`...)
//! and a value that is no level leaves the query default (else `info`). A level column read
//! this way also stays in `data` as sent; a message column read this way is the message only.
//! A table with no level column at all takes the query default, else `info`.
//! A column named exactly `level` stays strict, like JSON.

use serde_json::Value;
use sluice_model::{Draft, EscapeFree, Field, JsonKey, Level, ObjectWriter, Sent};

use crate::{Batch, Format, IngestError, Options, ParseError};

const MESSAGE_ALIASES: [&str; 5] = ["message", "msg", "content", "text", "log"];
const LEVEL_ALIASES: [&str; 3] = ["level", "severity", "loglevel"];

/// One cell of a known field as the JSON value `entry_from_json` expects.
fn typed(field: Field, cell: &str) -> Value {
    match field {
        Field::Timestamp | Field::StepIndex => match cell.trim().parse::<i64>() {
            Ok(number) => Value::from(number),
            Err(_) => cell
                .parse::<f64>()
                .ok()
                .and_then(serde_json::Number::from_f64)
                .map_or_else(|| Value::from(cell), Value::Number),
        },
        Field::Data => {
            serde_json::from_str::<Value>(cell).ok().filter(Value::is_object).unwrap_or_else(|| Value::from(cell))
        }
        Field::Tags => match serde_json::from_str::<Value>(cell) {
            Ok(array @ Value::Array(_)) => array,
            _ => Value::Array(cell.split(';').map(str::trim).filter(|tag| !tag.is_empty()).map(Value::from).collect()),
        },
        _ => Value::from(cell),
    }
}

fn csv_error(error: &::csv::Error) -> ParseError {
    let line = error.position().map(|position| position.line() as usize);
    let reason = match error.kind() {
        ::csv::ErrorKind::UnequalLengths { expected_len, len, .. } => {
            format!("expected {expected_len} fields as in the header, found {len}")
        }
        ::csv::ErrorKind::Utf8 { .. } => "invalid UTF-8".to_owned(),
        other => format!("{other:?}"),
    };
    ParseError { format: Format::Csv, line, column: None, reason }
}

/// Parses a CSV body.
///
/// ```
/// use sluice_ingest::{Options, csv::parse_csv};
/// let body = b"level,message,source,environment,tags,region\nwarn,\"disk 91%, full\",db,production,a;b,eu\n";
/// let entry = &parse_csv(body, &Options::new(0)).unwrap().entries[0];
/// assert_eq!(entry.message, "disk 91%, full");
/// assert_eq!(entry.tags.as_deref(), Some(&["a".to_owned(), "b".to_owned()][..]));
/// assert_eq!(entry.data.as_ref().unwrap().get("region"), Some("eu".into()));
/// ```
pub fn parse_csv(body: &[u8], options: &Options) -> Result<Batch, IngestError> {
    let header_line = body.split(|byte| *byte == b'\n').next().unwrap_or_default();
    let delimiter = if header_line.contains(&b'\t') { b'\t' } else { b',' };
    let mut reader = ::csv::ReaderBuilder::new().delimiter(delimiter).has_headers(true).from_reader(body);
    let headers: Vec<String> = reader.headers().map_err(|error| csv_error(&error))?.iter().map(str::to_owned).collect();
    if headers.iter().all(String::is_empty) {
        return Err(ParseError {
            format: Format::Csv,
            line: Some(1),
            column: None,
            reason: "expected a header row of field names".to_owned(),
        }
        .into());
    }
    let has = |name: &str| headers.iter().any(|header| header == name);
    let alias =
        |aliases: &[&str]| headers.iter().position(|header| aliases.contains(&header.to_ascii_lowercase().as_str()));
    let message_alias = (!has("message")).then(|| alias(&MESSAGE_ALIASES)).flatten();
    let level_alias = (!has("level")).then(|| alias(&LEVEL_ALIASES)).flatten();

    // What each column is, decided once from the header.
    enum Column {
        Skip,
        Field(Field),
        MessageAlias,
        LevelAlias(Key),
        Other(Key),
    }
    // A column that goes into `data`: its name, and its name written as JSON once.
    struct Key {
        name: String,
        json: JsonKey,
    }
    let key = |header: &String| Key { name: header.clone(), json: JsonKey::new(header) };
    let columns: Vec<Column> = headers
        .iter()
        .enumerate()
        .map(|(index, header)| match Field::from_name(header) {
            _ if header.is_empty() => Column::Skip,
            _ if Some(index) == message_alias => Column::MessageAlias,
            _ if Some(index) == level_alias => Column::LevelAlias(key(header)),
            Some(field) => Column::Field(field),
            None => Column::Other(key(header)),
        })
        .collect();
    // Without a `level` column the level is not the client's to get wrong: query default,
    // else info, as for text. An exact `level` column with an empty cell stays `Required`.
    let implied_level =
        if options.defaults.level.is_none() && !has("level") { Sent::Value(Level::Info) } else { Sent::Absent };

    // Unknown columns become `data`, written as JSON in one pass with keys written once,
    // unless a `data` column needs merging with them.
    let has_data_column = has("data");
    let keys_len: usize = columns
        .iter()
        .map(|column| match column {
            Column::LevelAlias(key) | Column::Other(key) => key.json.len() + 3,
            _ => 0,
        })
        .sum();
    let mut collector = crate::json::Collector::for_lines(options, body);
    let mut record = ::csv::StringRecord::new();
    while reader.read_record(&mut record).map_err(|error| csv_error(&error))? {
        if collector.at_limit() {
            break;
        }
        let mut draft = Draft { level: implied_level.clone(), ..Draft::default() };
        let mut data = (keys_len > 0 && !has_data_column)
            .then(|| ObjectWriter::with_capacity(keys_len + record.as_byte_record().as_slice().len()));
        // Cells are usually clean: their bytes are checked for JSON escapes once per row.
        let clean = EscapeFree::check(record.as_byte_record().as_slice());
        for (column, cell) in columns.iter().zip(record.iter()) {
            if cell.is_empty() {
                continue;
            }
            let other = match column {
                Column::Skip => continue,
                Column::Field(Field::Timestamp) if crate::text::is_impossible_stamp(cell) => {
                    let line = record.position().map(|position| position.line() as usize);
                    let reason = format!("expected {} in the timestamp cell", crate::text::IMPOSSIBLE_STAMP);
                    return Err(ParseError { format: Format::Csv, line, column: None, reason }.into());
                }
                Column::Field(field) => {
                    draft.set(*field, typed(*field, cell));
                    continue;
                }
                Column::MessageAlias => {
                    draft.message = Sent::Value(cell.to_owned());
                    continue;
                }
                Column::LevelAlias(key) => {
                    if let Some(level) = crate::text::keyword_level(cell.trim()) {
                        draft.level = Sent::Value(level);
                    }
                    key
                }
                Column::Other(key) => key,
            };
            match data.as_mut() {
                Some(data) => data.push_within(&other.json, cell, &clean),
                None => {
                    if let Ok(raw) = serde_json::value::to_raw_value(cell) {
                        draft.unknown.push((other.name.clone(), raw));
                    }
                }
            }
        }
        if let Some(data) = data.filter(|data| !data.is_empty()) {
            draft.data = Sent::Value(data.finish());
        }
        // Always true here: the limit was checked before the record was read into a draft.
        let _ = collector.push(draft);
    }
    collector.finish()
}
