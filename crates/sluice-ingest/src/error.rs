//! The ways a body can fail: unreadable (a parse error) or readable but breaking the rules.

use std::fmt;

use sluice_model::Issue;

use crate::Format;

/// The body could not be read as its format.
///
/// ```
/// use sluice_ingest::{Format, IngestError, Options, parse};
/// let Err(IngestError::Parse(error)) = parse(Format::Jsonl, b"{\"a\":1}\n{", &Options::new(0)) else { panic!() };
/// assert_eq!((error.format, error.line), (Format::Jsonl, Some(2)));
/// assert_eq!(error.to_string(), "JSONL line 2: EOF while parsing an object at column 1");
/// ```
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ParseError {
    /// The format it was read as.
    pub format: Format,
    /// 1-based line, where known.
    pub line: Option<usize>,
    /// 1-based column, where known.
    pub column: Option<usize>,
    /// What was expected or found, without the position.
    pub reason: String,
}

impl fmt::Display for ParseError {
    /// `JSONL line 2: expected value at column 2`.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}", self.format.label())?;
        if let Some(line) = self.line {
            write!(f, " line {line}")?;
        }
        write!(f, ": {}", self.reason)?;
        if let Some(column) = self.column {
            write!(f, " at column {column}")?;
        }
        Ok(())
    }
}

impl std::error::Error for ParseError {}

/// Why a body gave no entries.
///
/// ```
/// use sluice_ingest::{Format, IngestError, Options, parse};
/// let body = br#"{"level":"fatal","message":"m","source":"s","environment":"staging"}"#;
/// let Err(IngestError::Invalid(issues)) = parse(Format::Json, body, &Options::new(0)) else { panic!() };
/// assert_eq!(issues[0].message, "Invalid enum value. Expected 'debug' | 'info' | 'warn' | 'error', received 'fatal'");
/// ```
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub enum IngestError {
    /// The body is not readable as its format.
    #[error(transparent)]
    Parse(#[from] ParseError),
    /// The body was read, but entries break the rules; every issue is listed.
    #[error("Validation error")]
    Invalid(Vec<Issue>),
}
