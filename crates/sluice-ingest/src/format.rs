//! The six body formats, and how a request says (or lets us guess) which one it sends.

use std::fmt;
use std::str::FromStr;

use sluice_model::{ENTRY_FIELDS, UnknownValue};

/// A body format of `POST /v1/logs`.
///
/// ```
/// use sluice_ingest::Format;
/// let format: Format = "jsonl".parse().unwrap();
/// assert_eq!((format, format.to_string()), (Format::Jsonl, "jsonl".to_owned()));
/// assert!("xml".parse::<Format>().is_err());
/// ```
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Format {
    /// An object with a `logs` array, a bare array, or one entry object.
    Json,
    /// One JSON object per line.
    Jsonl,
    /// RFC 5424 or RFC 3164 messages, one per line.
    Syslog,
    /// Free text, one log per line.
    Text,
    /// A header row of field names, then one entry per row.
    Csv,
    /// Open Board Log, from AAC devices.
    Obl,
    /// OTLP/HTTP logs (protobuf or OTLP JSON), chosen by the body and `Content-Type`, never
    /// by the `format` parameter: see [`crate::otlp`].
    Otlp,
}

impl Format {
    /// The value of the `format` query parameter.
    ///
    /// ```
    /// assert_eq!(sluice_ingest::Format::Syslog.as_str(), "syslog");
    /// ```
    pub const fn as_str(self) -> &'static str {
        match self {
            Format::Json => "json",
            Format::Jsonl => "jsonl",
            Format::Syslog => "syslog",
            Format::Text => "text",
            Format::Csv => "csv",
            Format::Obl => "obl",
            Format::Otlp => "otlp",
        }
    }

    /// How error messages name the format.
    ///
    /// ```
    /// assert_eq!(sluice_ingest::Format::Csv.label(), "CSV");
    /// ```
    pub const fn label(self) -> &'static str {
        match self {
            Format::Json => "JSON",
            Format::Jsonl => "JSONL",
            Format::Syslog => "Syslog",
            Format::Text => "Text",
            Format::Csv => "CSV",
            Format::Obl => "OBL",
            Format::Otlp => "OTLP",
        }
    }

    /// The format a `Content-Type` names, parameters such as `; charset=utf-8` ignored.
    /// `None` for a type that names none of them.
    ///
    /// ```
    /// use sluice_ingest::Format;
    /// assert_eq!(Format::from_content_type("application/x-ndjson; charset=utf-8"), Some(Format::Jsonl));
    /// assert_eq!(Format::from_content_type("Text/CSV"), Some(Format::Csv));
    /// assert_eq!(Format::from_content_type("application/xml"), None);
    /// ```
    pub fn from_content_type(content_type: &str) -> Option<Format> {
        match essence(content_type).as_str() {
            "application/json" => Some(Format::Json),
            "application/x-ndjson" | "application/jsonl" | "application/x-jsonlines" => Some(Format::Jsonl),
            "application/x-syslog" => Some(Format::Syslog),
            "text/plain" => Some(Format::Text),
            "text/csv" => Some(Format::Csv),
            "application/x-obl" => Some(Format::Obl),
            _ => None,
        }
    }

    /// Guesses the format of a body that names none, in the order docs/API.md (POST /v1/logs) fixes.
    ///
    /// ```
    /// use sluice_ingest::Format;
    /// assert_eq!(Format::sniff(br#"{"logs": []}"#), Format::Json);
    /// assert_eq!(Format::sniff(b"<34>1 2003-10-11T22:14:15.003Z host su - ID47 - hi"), Format::Syslog);
    /// assert_eq!(Format::sniff(b"level,message\ninfo,hi\n"), Format::Csv);
    /// assert_eq!(Format::sniff(b"just words"), Format::Text);
    /// ```
    pub fn sniff(body: &[u8]) -> Format {
        if contains(body, b"open-board-log-") {
            return Format::Obl;
        }
        let trimmed = body.trim_ascii_start();
        if matches!(trimmed.first(), Some(b'{' | b'['))
            && serde_json::from_slice::<serde::de::IgnoredAny>(trimmed).is_ok()
        {
            return Format::Json;
        }
        let mut lines =
            body.split(|byte| *byte == b'\n').map(<[u8]>::trim_ascii).filter(|line| !line.is_empty()).peekable();
        let Some(first) = lines.peek().copied() else { return Format::Json };
        if lines.all(|line| line.starts_with(b"{")) {
            return Format::Jsonl;
        }
        if first.starts_with(b"<") && first.get(1).is_some_and(u8::is_ascii_digit) {
            return Format::Syslog;
        }
        if looks_like_csv_header(first) {
            return Format::Csv;
        }
        Format::Text
    }
}

/// A first line of comma- or tab-separated known field names, `level` or `message` among them.
fn looks_like_csv_header(line: &[u8]) -> bool {
    let Ok(line) = std::str::from_utf8(line) else { return false };
    let delimiter = if line.contains('\t') {
        '\t'
    } else if line.contains(',') {
        ','
    } else {
        return false;
    };
    let names: Vec<&str> = line.split(delimiter).map(|name| name.trim().trim_matches('"')).collect();
    let known = names.iter().filter(|name| ENTRY_FIELDS.contains(name)).count();
    known * 2 > names.len() && names.iter().any(|name| *name == "message" || *name == "level")
}

/// A `Content-Type`'s type and subtype, in lower case, without parameters.
pub(crate) fn essence(content_type: &str) -> String {
    content_type.split(';').next().unwrap_or_default().trim().to_ascii_lowercase()
}

/// Whether `needle` occurs in `haystack` (a SIMD search: a sniffed body can be 5 MiB).
pub(crate) fn contains(haystack: &[u8], needle: &[u8]) -> bool {
    memchr::memmem::find(haystack, needle).is_some()
}

impl FromStr for Format {
    type Err = UnknownValue;

    fn from_str(text: &str) -> Result<Self, Self::Err> {
        match text {
            "json" => Ok(Format::Json),
            "jsonl" => Ok(Format::Jsonl),
            "syslog" => Ok(Format::Syslog),
            "text" => Ok(Format::Text),
            "csv" => Ok(Format::Csv),
            "obl" => Ok(Format::Obl),
            other => Err(UnknownValue::new("'json' | 'jsonl' | 'syslog' | 'text' | 'csv' | 'obl'", other)),
        }
    }
}

impl fmt::Display for Format {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn content_types_ignore_parameters_and_case() {
        assert_eq!(Format::from_content_type("application/json; charset=utf-8"), Some(Format::Json));
        assert_eq!(Format::from_content_type("Application/X-NDJSON"), Some(Format::Jsonl));
        assert_eq!(Format::from_content_type("application/jsonl"), Some(Format::Jsonl));
        assert_eq!(Format::from_content_type("text/csv;header=present"), Some(Format::Csv));
        assert_eq!(Format::from_content_type("application/octet-stream"), None);
    }

    #[test]
    fn sniffing_follows_the_decided_order() {
        assert_eq!(Format::sniff(br#"{"format":"open-board-log-0.1","sessions":[]}"#), Format::Obl);
        assert_eq!(Format::sniff(br#"[{"message":"a"}]"#), Format::Json);
        assert_eq!(Format::sniff(b"{\"a\":1}\n{\"a\":2}\n"), Format::Jsonl);
        assert_eq!(Format::sniff(b"<34>1 2003-10-11T22:14:15.003Z host app - - - msg"), Format::Syslog);
        assert_eq!(Format::sniff(b"level,message,source\ninfo,hi,api"), Format::Csv);
        assert_eq!(Format::sniff(b"2024-01-01 10:00:00 ERROR it broke"), Format::Text);
    }
}
