//! Parsers that turn an ingestion request body into validated log entries.
//!
//! Invariant: the crate is pure: bytes and options in, entries or one error out. It has no
//! async runtime, no database and no HTTP dependency (checked by `cargo xtask ci`, which also
//! builds it alone), so other services can embed it to accept exactly what sluice accepts.
//!
//! ```
//! use sluice_ingest::{Format, Options, parse};
//!
//! let body = br#"{"level":"info","message":"started","source":"api","environment":"production"}
//! {"level":"error","message":"boom","source":"api","environment":"production"}"#;
//! let batch = parse(Format::Jsonl, body, &Options::new(1_700_000_000_000)).unwrap();
//! assert_eq!(batch.entries.len(), 2);
//! ```

pub mod csv;
mod error;
mod format;
mod frame;
mod json;
pub mod obl;
pub mod otlp;
pub mod syslog;
pub mod text;

pub use error::{IngestError, ParseError};
pub use format::Format;
pub use json::{parse_json, parse_jsonl};
pub use sluice_model::{Defaults, LogEntry};

use sluice_model::limits::MAX_ENTRIES_PER_REQUEST;

/// What a parser needs besides the body.
///
/// ```
/// use sluice_ingest::{Defaults, Options};
/// let mut options = Options::new(1_700_000_000_000);
/// options.defaults = Defaults { source: Some("api".into()), ..Defaults::default() };
/// assert_eq!(options.max_entries, 100);
/// ```
#[derive(Debug, Clone)]
pub struct Options {
    /// Query-parameter defaults for `source`, `environment`, `level`, `dataset`.
    pub defaults: Defaults,
    /// Unix ms; the timestamp of an entry that carries none.
    pub received_at_ms: i64,
    /// Most entries one body may hold; 100 by default (docs/API.md, POST /v1/logs).
    pub max_entries: usize,
}

impl Options {
    /// No defaults, the batch limit of docs/API.md (100), and `received_at_ms` as "now".
    ///
    /// ```
    /// let options = sluice_ingest::Options::new(42);
    /// assert_eq!((options.received_at_ms, options.defaults.source), (42, None));
    /// ```
    pub fn new(received_at_ms: i64) -> Self {
        Self { defaults: Defaults::default(), received_at_ms, max_entries: MAX_ENTRIES_PER_REQUEST }
    }
}

/// The entries of one body, valid and in the order they were sent.
///
/// ```
/// use sluice_ingest::{Defaults, Format, Options, parse};
/// let mut options = Options::new(0);
/// options.defaults = Defaults { source: Some("app".into()), environment: Some("staging".into()), ..Defaults::default() };
/// let batch = parse(Format::Text, b"first\nsecond\n", &options).unwrap();
/// assert_eq!(batch.entries.iter().map(|e| e.message.as_str()).collect::<Vec<_>>(), ["first", "second"]);
/// ```
#[derive(Debug, Clone, PartialEq)]
pub struct Batch {
    /// The entries.
    pub entries: Vec<LogEntry>,
}

/// Parses `body` as `format` and validates every entry.
///
/// The batch is all or nothing: any invalid entry makes the whole body fail, with every issue
/// listed. A body with no entry, or with more than `options.max_entries`, fails too.
///
/// ```
/// use sluice_ingest::{Defaults, Format, Options, parse};
/// let mut options = Options::new(1_795_348_800_000); // received 2026-11-22
/// options.defaults = Defaults { environment: Some("production".into()), ..Defaults::default() };
/// let body = b"<13>Feb  5 17:32:18 10.0.0.99 myapp: started\n";
/// let entry = &parse(Format::Syslog, body, &options).unwrap().entries[0];
/// assert_eq!((entry.source.as_str(), entry.message.as_str()), ("myapp", "started"));
/// assert!(parse(Format::Syslog, b"\n\n", &options).is_err(), "no entry at all");
/// ```
pub fn parse(format: Format, body: &[u8], options: &Options) -> Result<Batch, IngestError> {
    match format {
        Format::Json => parse_json(body, options),
        Format::Jsonl => parse_jsonl(body, options),
        Format::Syslog => syslog::parse_syslog(body, options),
        Format::Text => text::parse_text(body, options),
        Format::Csv => csv::parse_csv(body, options),
        Format::Obl => obl::parse_obl(body, options),
        // All or nothing here like every format; the server keeps the valid records instead
        // (otlp::parse_otlp, partial success).
        Format::Otlp => {
            let encoding = if otlp::is_otlp_json(body) { otlp::Encoding::Json } else { otlp::Encoding::Protobuf };
            let batch = otlp::parse_otlp(encoding, body, options)?;
            if batch.rejected > 0 {
                let issue = sluice_model::Issue::new(Vec::new(), batch.error_message);
                return Err(IngestError::Invalid(vec![issue]));
            }
            Ok(Batch { entries: batch.entries })
        }
    }
}
