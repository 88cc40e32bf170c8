//! sluice's search query language, for `GET /v1/logs/search`: a nom grammar ([`grammar`])
//! into an AST ([`Query`] of [`Clause`]s), the `query.parsed` shape of docs/API.md (search)
//! ([`ParsedQuery`]), the searchable fields ([`SearchField`]), and the exact matcher
//! ([`Query::matches`]) that every store uses to re-check what its index proposes.
//!
//! Invariant: pure (no runtime, database or HTTP dependency; checked by `cargo xtask ci`), and
//! the query language and stats types only: how a store indexes text is the store's
//! (`sluice_blocks`).
//!
//! Matching is a case-insensitive substring match (Unicode lower case on both sides) of each
//! term or phrase in any searched field; `%`, `_` and `\` are ordinary characters.
//!
//! ```
//! use sluice_query::Query;
//! let query = Query::parse(r#"timeout "db-1" -retry warn OR error"#).unwrap();
//! let parsed = query.parsed();
//! assert_eq!(parsed.required, ["timeout"]);
//! assert_eq!(parsed.phrases, ["db-1"]);
//! assert_eq!(parsed.excluded, ["retry"]);
//! assert_eq!(parsed.optional, ["warn", "error"]);
//! assert!(query.matches(&["Timeout talking to DB-1: ERROR"]));
//! assert!(!query.matches(&["Timeout talking to db-1: error, will retry"]));
//! ```

mod grammar;
pub mod params;
pub mod stats;

pub use sluice_api::ParsedQuery;
use sluice_model::{Issue, UnknownValue};

/// The longest query accepted, in characters (docs/API.md, search).
pub const MAX_QUERY_CHARS: usize = 1000;

/// The shortest query accepted, in characters, once surrounding spaces are set aside.
pub const MIN_QUERY_CHARS: usize = 2;

/// The message for a query that is missing, too short, or has nothing to find (docs/API.md, search).
pub const TOO_SHORT: &str = "Search query must be at least 2 characters";

/// Text to find: a word or a quoted phrase, as typed and in lower case.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Needle {
    /// The text as the query has it (without quotes).
    pub text: String,
    /// The text in lower case, as matching compares it.
    pub folded: String,
    /// Whether it was written as a `"phrase"`.
    pub phrase: bool,
}

impl Needle {
    /// A word.
    pub fn term(text: &str) -> Self {
        Needle { text: text.to_owned(), folded: fold(text), phrase: false }
    }

    /// A quoted phrase.
    pub fn phrase(text: &str) -> Self {
        Needle { text: text.to_owned(), folded: fold(text), phrase: true }
    }

    /// Whether any of `haystacks` contains it, as [`fold`] compares them.
    fn found_in(&self, haystacks: &[Haystack<'_>]) -> bool {
        haystacks.iter().any(|haystack| match haystack {
            Haystack::Ascii(text) => contains_ignoring_ascii_case(text, &self.folded),
            Haystack::Folded(text) => text.contains(&self.folded),
        })
    }
}

/// One condition of a query; a log matches when every clause holds.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Clause {
    /// The needle is in some searched field (`word`, `"a phrase"`).
    Contains(Needle),
    /// The needle is in no searched field (`-word`, `-"a phrase"`).
    Excludes(Needle),
    /// At least one needle is in some searched field (`a OR b OR "c d"`).
    AnyOf(Vec<Needle>),
}

/// A parsed search query.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Query {
    raw: String,
    clauses: Vec<Clause>,
}

/// Why a query cannot be used.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum QueryError {
    /// Missing, under two characters, or nothing to find: the message of docs/API.md (search), as is.
    #[error("{TOO_SHORT}")]
    TooShort,
    /// Over [`MAX_QUERY_CHARS`]: a validation error on `q`.
    #[error("String must contain at most {MAX_QUERY_CHARS} character(s)")]
    TooLong,
}

impl QueryError {
    /// The validation issue on parameter `q`, for errors that are validation errors.
    pub fn issue(&self) -> Option<Issue> {
        match self {
            QueryError::TooShort => None,
            QueryError::TooLong => Some(Issue::at("q", self.to_string())),
        }
    }
}

impl Query {
    /// Parses `raw`. Every string is a query; it is refused only when it is under two
    /// characters (spaces around it aside), over 1000, or has nothing to find (`""`).
    ///
    /// ```
    /// use sluice_query::{Query, QueryError};
    /// assert_eq!(Query::parse(" a ").unwrap_err(), QueryError::TooShort);
    /// assert_eq!(Query::parse(r#""""#).unwrap_err(), QueryError::TooShort);
    /// assert_eq!(Query::parse(&"x".repeat(1001)).unwrap_err(), QueryError::TooLong);
    /// assert!(Query::parse("-debug").is_ok(), "only exclusions is a valid query");
    /// ```
    pub fn parse(raw: &str) -> Result<Query, QueryError> {
        let length = raw.chars().count();
        if length > MAX_QUERY_CHARS {
            return Err(QueryError::TooLong);
        }
        if raw.trim().chars().count() < MIN_QUERY_CHARS {
            return Err(QueryError::TooShort);
        }
        // An empty needle finds everything and excludes everything: it means nothing, so it
        // is dropped, and an OR group with an empty alternative always holds.
        let clauses: Vec<Clause> = grammar::clauses(raw)
            .into_iter()
            .filter(|clause| match clause {
                Clause::Contains(needle) | Clause::Excludes(needle) => !needle.text.is_empty(),
                Clause::AnyOf(needles) => needles.iter().all(|needle| !needle.text.is_empty()),
            })
            .collect();
        if clauses.is_empty() {
            return Err(QueryError::TooShort);
        }
        Ok(Query { raw: raw.to_owned(), clauses })
    }

    /// The query as sent.
    pub fn raw(&self) -> &str {
        &self.raw
    }

    /// The clauses, in the order written.
    pub fn clauses(&self) -> &[Clause] {
        &self.clauses
    }

    /// `query.parsed` for the response.
    pub fn parsed(&self) -> ParsedQuery {
        let mut parsed = ParsedQuery::default();
        for clause in &self.clauses {
            match clause {
                Clause::Contains(needle) if needle.phrase => parsed.phrases.push(needle.text.clone()),
                Clause::Contains(needle) => parsed.required.push(needle.text.clone()),
                Clause::Excludes(needle) => parsed.excluded.push(needle.text.clone()),
                Clause::AnyOf(needles) => parsed.optional.extend(needles.iter().map(|needle| needle.text.clone())),
            }
        }
        parsed
    }

    /// What an index can narrow the search with: groups of folded needles, each at least
    /// [`INDEX_MIN_CHARS`] long. A log can match only when, for every group, some searched
    /// field contains one of the group's needles. Exclusions, and groups with a shorter
    /// needle, are left to [`Query::matches`]. Empty when the query gives an index nothing
    /// to look up (every positive needle under three characters, or only exclusions).
    ///
    /// ```
    /// let query = sluice_query::Query::parse(r#"Timeout db "Pool Full" -retry warn OR error"#).unwrap();
    /// assert_eq!(query.index_groups(), [vec!["timeout"], vec!["pool full"], vec!["warn", "error"]]);
    /// ```
    pub fn index_groups(&self) -> Vec<Vec<&str>> {
        let long = |needle: &&Needle| needle.folded.chars().count() >= INDEX_MIN_CHARS;
        self.clauses
            .iter()
            .filter_map(|clause| match clause {
                Clause::Contains(needle) => Some(vec![needle]).filter(|group| group.iter().all(long)),
                Clause::AnyOf(needles) => {
                    Some(needles.iter().collect::<Vec<_>>()).filter(|group| group.iter().all(long))
                }
                Clause::Excludes(_) => None,
            })
            .map(|group| group.into_iter().map(|needle| needle.folded.as_str()).collect())
            .collect()
    }

    /// Whether a log whose searched fields hold `fields` matches (fields that are unset are
    /// left out or passed empty).
    pub fn matches(&self, fields: &[&str]) -> bool {
        let folded: Vec<Haystack<'_>> = fields
            .iter()
            .map(|field| if field.is_ascii() { Haystack::Ascii(field) } else { Haystack::Folded(fold(field)) })
            .collect();
        self.clauses.iter().all(|clause| match clause {
            Clause::Contains(needle) => needle.found_in(&folded),
            Clause::Excludes(needle) => !needle.found_in(&folded),
            Clause::AnyOf(needles) => needles.iter().any(|needle| needle.found_in(&folded)),
        })
    }
}

/// A searched field as the exact check reads it: an ASCII field as it is (searched ignoring
/// ASCII case, which is what [`fold`] does to it, without a folded copy per log checked), any
/// other folded.
enum Haystack<'a> {
    Ascii(&'a str),
    Folded(String),
}

/// Whether ASCII `text` folded would contain `needle` (folded): `needle` found at some position
/// of `text` byte for byte once `text` is in lower case. A needle with a non-ASCII character is
/// never in an ASCII text, folded or not.
fn contains_ignoring_ascii_case(text: &str, needle: &str) -> bool {
    let (text, needle) = (text.as_bytes(), needle.as_bytes());
    let Some((&first, rest)) = needle.split_first() else { return true };
    if text.len() < needle.len() {
        return false;
    }
    (0..=text.len() - needle.len()).any(|at| {
        text[at].to_ascii_lowercase() == first
            && text[at + 1..at + needle.len()].iter().zip(rest).all(|(byte, want)| byte.to_ascii_lowercase() == *want)
    })
}

/// Text in lower case, as matching compares it: each character on its own by Unicode's
/// lower-case mapping (no context rules such as the final sigma), so folding a text folds
/// each of its parts the same way and a substring stays a substring. Stores index the folded
/// text, so the index and the exact check can never disagree.
///
/// ```
/// assert_eq!(sluice_query::fold("Straße ÉTÉ ΟΔΟΣ"), "straße été οδοσ");
/// ```
pub fn fold(text: &str) -> String {
    if text.is_ascii() { text.to_ascii_lowercase() } else { text.chars().flat_map(char::to_lowercase).collect() }
}

/// The shortest needle [`Query::index_groups`] hands an index, in characters (a trigram needs three).
pub const INDEX_MIN_CHARS: usize = 3;

/// A field `GET /v1/logs/search` can search.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum SearchField {
    /// `message`.
    Message,
    /// `errorName`.
    ErrorName,
    /// `errorStack`.
    ErrorStack,
    /// `data`, as its JSON text.
    Data,
}

impl SearchField {
    /// Every field, in the order docs/API.md (search) lists them.
    pub const ALL: [SearchField; 4] =
        [SearchField::Message, SearchField::ErrorName, SearchField::ErrorStack, SearchField::Data];

    /// The wire spelling.
    pub const fn as_str(self) -> &'static str {
        match self {
            SearchField::Message => "message",
            SearchField::ErrorName => "errorName",
            SearchField::ErrorStack => "errorStack",
            SearchField::Data => "data",
        }
    }

    /// The `fields` parameter: comma-separated names (spaces around a name ignored, each
    /// field once, in the order given). Absent or empty means `message`.
    ///
    /// ```
    /// use sluice_query::SearchField;
    /// assert_eq!(SearchField::parse_list(None), Ok(vec![SearchField::Message]));
    /// assert_eq!(SearchField::parse_list(Some("data, message,data")), Ok(vec![SearchField::Data, SearchField::Message]));
    /// assert_eq!(
    ///     SearchField::parse_list(Some("message,body")).unwrap_err().message,
    ///     "Invalid enum value. Expected 'message' | 'errorName' | 'errorStack' | 'data', received 'body'"
    /// );
    /// ```
    pub fn parse_list(text: Option<&str>) -> Result<Vec<SearchField>, Issue> {
        let text = text.unwrap_or_default();
        if text.trim().is_empty() {
            return Ok(vec![SearchField::Message]);
        }
        let mut fields = Vec::new();
        for name in text.split(',').map(str::trim) {
            let field = SearchField::ALL.into_iter().find(|field| field.as_str() == name).ok_or_else(|| {
                let unknown = UnknownValue::new("'message' | 'errorName' | 'errorStack' | 'data'", name);
                Issue::at("fields", unknown.to_string())
            })?;
            if !fields.contains(&field) {
                fields.push(field);
            }
        }
        Ok(fields)
    }
}

#[cfg(test)]
mod tests;
