//! A log entry as a client sends it and a log as sluice returns it: the entry's fields and
//! types, the query-string defaults that fill missing ones, and the wire names of its fields.
//! The rules an entry must pass are in `rules` ([`Draft::finish`](crate::Draft::finish)).

use serde::{Deserialize, Serialize};
use smol_str::SmolStr;

use crate::draft::Sent;
use crate::{Environment, JsonObject, Level, LogId};

/// Values from the request's query string that fill fields an entry lacks.
///
/// They are raw text: a defaulted value is validated exactly like a sent one.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Defaults {
    /// Default `source`.
    pub source: Option<SmolStr>,
    /// Default `environment`.
    pub environment: Option<String>,
    /// Default `level`.
    pub level: Option<String>,
    /// Default `dataset`.
    pub dataset: Option<SmolStr>,
}

impl Defaults {
    /// The defaults read once, as a sent value would be read: what [`Draft::finish_resolved`]
    /// fills in, so a batch parses its query's `level` and `environment` once, not per entry.
    ///
    /// ```
    /// use sluice_model::{Defaults, Draft, Sent};
    /// let defaults = Defaults { level: Some("loud".into()), ..Defaults::default() };
    /// let draft = Draft { message: Sent::Value("hi".into()), ..Draft::default() };
    /// let issues = draft.finish_resolved(&defaults.resolve(), 0).unwrap_err();
    /// assert!(issues[0].message.starts_with("Invalid enum value"));
    /// ```
    pub fn resolve(&self) -> ResolvedDefaults {
        fn read<T: std::str::FromStr<Err = crate::UnknownValue>>(text: Option<&str>) -> Sent<T> {
            match text.map(str::parse) {
                Some(Ok(value)) => Sent::Value(value),
                Some(Err(error)) => Sent::Wrong(error.to_string()),
                None => Sent::Absent,
            }
        }
        ResolvedDefaults {
            level: read(self.level.as_deref()),
            source: Sent::from_option(self.source.clone()),
            environment: read(self.environment.as_deref()),
            dataset: self.dataset.clone().unwrap_or_else(|| SmolStr::new_static("default")),
        }
    }
}

/// [`Defaults`] after reading: each value, or the issue it raises in an entry that lacks the
/// field. Made by [`Defaults::resolve`].
#[derive(Debug, Clone)]
pub struct ResolvedDefaults {
    pub(crate) level: Sent<Level>,
    pub(crate) source: Sent<SmolStr>,
    pub(crate) environment: Sent<Environment>,
    pub(crate) dataset: SmolStr,
}

/// Every field of a log entry as the wire spells it, in the order in which issues are listed
/// (docs/API.md, POST /v1/logs).
pub const ENTRY_FIELDS: [&str; 16] = [
    "level",
    "message",
    "source",
    "environment",
    "dataset",
    "version",
    "userId",
    "sessionId",
    "requestId",
    "data",
    "errorName",
    "errorStack",
    "tags",
    "timestamp",
    "flowId",
    "stepIndex",
];

/// A valid log entry, ready to store. Built by [`Draft::finish`] (or by hand in tests).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[serde(rename_all = "camelCase")]
pub struct LogEntry {
    /// Unix ms.
    pub timestamp: i64,
    /// Severity.
    pub level: Level,
    /// 1 to 10,000 characters.
    pub message: String,
    /// Application or service name, 1 to 100 characters.
    #[cfg_attr(feature = "openapi", schema(value_type = String))]
    pub source: SmolStr,
    /// Deployment.
    pub environment: Environment,
    /// Grouping name; `default` when not sent.
    #[cfg_attr(feature = "openapi", schema(value_type = String))]
    pub dataset: SmolStr,
    /// Application version.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub version: Option<String>,
    /// User identifier.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub user_id: Option<String>,
    /// Session identifier.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub session_id: Option<String>,
    /// Correlation identifier.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub request_id: Option<String>,
    /// Arbitrary JSON object, including any unknown top-level fields that were sent.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[cfg_attr(feature = "openapi", schema(value_type = Option<Object>))]
    pub data: Option<JsonObject>,
    /// Error class or name.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub error_name: Option<String>,
    /// Error stack trace.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub error_stack: Option<String>,
    /// At most 20 tags of at most 50 characters.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub tags: Option<Vec<String>>,
    /// Flow identifier.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub flow_id: Option<String>,
    /// Position inside the flow, 0 to 1000.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub step_index: Option<u16>,
}

/// A stored log: an entry plus what the service assigned to it.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[serde(rename_all = "camelCase")]
pub struct Log {
    /// Assigned by the service.
    #[cfg_attr(feature = "openapi", schema(value_type = String))]
    pub id: LogId,
    /// What the client sent, after defaults.
    #[serde(flatten)]
    pub entry: LogEntry,
    /// ISO 3166-1 alpha-2 country of the client, when known.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub country: Option<String>,
    /// The client's IP address.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub ip_address: Option<String>,
}
