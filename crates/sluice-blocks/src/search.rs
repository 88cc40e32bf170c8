//! A search as the query language gives it: the query and the fields it looks in, with the
//! exact check of one log ([`Search::matches`]) that every faster path must agree with.

use sluice_query::{Query, SearchField};

/// A search: the query and the fields it looks in.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Search {
    /// The parsed query.
    pub query: Query,
    /// Fields searched, at least one.
    pub fields: Vec<SearchField>,
}

impl Search {
    /// The exact check: whether a log's searched fields match the query.
    pub fn matches(
        &self,
        message: &str,
        error_name: Option<&str>,
        error_stack: Option<&str>,
        data: Option<&str>,
    ) -> bool {
        let texts: Vec<&str> = self
            .fields
            .iter()
            .filter_map(|field| match field {
                SearchField::Message => Some(message),
                SearchField::ErrorName => error_name,
                SearchField::ErrorStack => error_stack,
                SearchField::Data => data,
            })
            .collect();
        self.query.matches(&texts)
    }
}
