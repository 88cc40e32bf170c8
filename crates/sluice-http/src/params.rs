//! Query-string parameters: parsed once, each checked with a message naming it.
//!
//! Empty values (`?source=`) count as absent, the way HTML forms send unset fields.

use std::collections::HashMap;
use std::str::FromStr;

use sluice_model::{Issue, UnknownValue};

use crate::ApiError;

/// The parameters of one request; the last of repeated names wins.
pub(crate) struct Params {
    values: HashMap<String, String>,
    issues: Vec<Issue>,
}

impl Params {
    pub(crate) fn parse(query: &str) -> Result<Self, ApiError> {
        let pairs: Vec<(String, String)> = serde_urlencoded::from_str(query)
            .map_err(|_| ApiError::invalid("query", "The query string is not valid URL encoding"))?;
        let values = pairs.into_iter().filter(|(_, value)| !value.is_empty()).collect();
        Ok(Self { values, issues: Vec::new() })
    }

    /// A text parameter.
    pub(crate) fn text(&self, name: &str) -> Option<String> {
        self.values.get(name).cloned()
    }

    /// A parameter from a closed vocabulary.
    pub(crate) fn vocabulary<T: FromStr<Err = UnknownValue>>(&mut self, name: &str) -> Option<T> {
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
    pub(crate) fn integer(&mut self, name: &str, min: i64) -> Option<i64> {
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
    pub(crate) fn push(&mut self, issue: Issue) {
        self.issues.push(issue);
    }

    /// Every issue found so far, as one validation error.
    pub(crate) fn finish(self) -> Result<(), ApiError> {
        if self.issues.is_empty() { Ok(()) } else { Err(ApiError::Validation(self.issues)) }
    }
}
