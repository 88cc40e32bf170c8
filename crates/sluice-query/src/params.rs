//! Query-string parameters: parsed once, each checked with a message naming it, every issue
//! gathered into one answer. Pure (no HTTP types), so the HTTP layer and the fuzz target share
//! it.
//!
//! Empty values (`?source=`) count as absent, the way HTML forms send unset fields.
//!
//! ```
//! use sluice_query::params::Params;
//! let mut params = Params::parse("limit=20&offset=x&source=").unwrap();
//! assert_eq!(params.integer("limit", 1), Some(20));
//! assert_eq!(params.integer("offset", 0), None);
//! assert_eq!(params.text("source"), None);
//! let issues = params.finish().unwrap_err().0;
//! assert_eq!(issues[0].message, "Expected number, received 'x'");
//! ```

use std::collections::HashMap;
use std::str::FromStr;

use sluice_model::{Issue, UnknownValue};

/// The issues that refuse a request's parameters (a 400 Validation error).
#[derive(Debug, Clone, PartialEq)]
pub struct Invalid(pub Vec<Issue>);

/// The parameters of one request; the last of repeated names wins.
#[derive(Debug)]
pub struct Params {
    values: HashMap<String, String>,
    issues: Vec<Issue>,
}

impl Params {
    /// Reads a query string (without the `?`).
    pub fn parse(query: &str) -> Result<Self, Invalid> {
        let pairs: Vec<(String, String)> = serde_urlencoded::from_str(query)
            .map_err(|_| Invalid(vec![Issue::at("query", "The query string is not valid URL encoding")]))?;
        let values = pairs.into_iter().filter(|(_, value)| !value.is_empty()).collect();
        Ok(Self { values, issues: Vec::new() })
    }

    /// A text parameter.
    pub fn text(&self, name: &str) -> Option<String> {
        self.values.get(name).cloned()
    }

    /// A parameter from a closed vocabulary.
    pub fn vocabulary<T: FromStr<Err = UnknownValue>>(&mut self, name: &str) -> Option<T> {
        let text = self.values.get(name)?;
        match text.parse() {
            Ok(value) => Some(value),
            Err(error) => {
                self.issues.push(Issue::at(name, error.to_string()));
                None
            }
        }
    }

    /// A whole number of at least `min`.
    pub fn integer(&mut self, name: &str, min: i64) -> Option<i64> {
        let text = self.values.get(name)?;
        let issue = match text.parse::<i64>() {
            Ok(value) if value >= min => return Some(value),
            // All digits but beyond i64: as large as it gets (a `limit` is then clamped).
            Err(_) if !text.is_empty() && text.bytes().all(|byte| byte.is_ascii_digit()) => return Some(i64::MAX),
            Ok(_) => format!("Number must be greater than or equal to {min}"),
            Err(_) if text.parse::<f64>().is_ok_and(f64::is_finite) => "Expected integer, received float".to_owned(),
            Err(_) => format!("Expected number, received '{text}'"),
        };
        self.issues.push(Issue::at(name, issue));
        None
    }

    /// An issue found outside this type (for example by a parameter's own parser).
    pub fn push(&mut self, issue: Issue) {
        self.issues.push(issue);
    }

    /// Every issue found so far, as one validation error.
    pub fn finish(self) -> Result<(), Invalid> {
        if self.issues.is_empty() { Ok(()) } else { Err(Invalid(self.issues)) }
    }
}
