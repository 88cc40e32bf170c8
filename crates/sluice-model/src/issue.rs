//! Validation issues in the shape the error body uses: `{path, message}` (docs/API.md, Errors).

use serde::{Deserialize, Serialize};

/// One step of an issue's path: a field name or a 0-based index.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[serde(untagged)]
pub enum PathSegment {
    /// A field or parameter name.
    Key(String),
    /// A position in an array.
    Index(usize),
}

impl From<&str> for PathSegment {
    fn from(key: &str) -> Self {
        PathSegment::Key(key.to_owned())
    }
}

impl From<usize> for PathSegment {
    fn from(index: usize) -> Self {
        PathSegment::Index(index)
    }
}

/// One broken rule: where, and what is wrong.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
pub struct Issue {
    /// Where the rule broke, outermost first.
    pub path: Vec<PathSegment>,
    /// What is wrong, in words a client can show.
    pub message: String,
}

impl Issue {
    /// An issue at `path`.
    pub fn new(path: Vec<PathSegment>, message: impl Into<String>) -> Self {
        Self { path, message: message.into() }
    }

    /// An issue about one named field or parameter.
    pub fn at(field: &str, message: impl Into<String>) -> Self {
        Self::new(vec![PathSegment::from(field)], message)
    }

    /// The same issue, placed under `prefix` (for example the entry's index in a batch).
    pub fn under(mut self, prefix: &[PathSegment]) -> Self {
        let mut path = prefix.to_vec();
        path.append(&mut self.path);
        self.path = path;
        self
    }
}
