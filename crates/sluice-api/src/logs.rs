//! Logs: ingest, list, search, get.

use serde::{Deserialize, Serialize};
use serde_json::Value;
use sluice_model::{Environment, Level, Log};

/// What a list answers about the page it returns (logs, searches, flows).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[serde(rename_all = "camelCase")]
pub struct Pagination {
    /// The page size asked for.
    pub limit: u32,
    /// Items skipped.
    pub offset: u64,
    /// Items on this page.
    pub count: u32,
    /// Whether more follow.
    pub has_more: bool,
}

/// A page of logs (`GET /v1/logs`), newest first.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
pub struct LogPage {
    /// The logs.
    pub logs: Vec<Log>,
    /// About the page.
    pub pagination: Pagination,
}

/// `GET /v1/logs/{id}`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
pub struct OneLog {
    /// The log.
    pub log: Log,
}

/// A search query as the server understood it.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
pub struct ParsedQuery {
    /// Words that must be present.
    pub required: Vec<String>,
    /// Phrases that must be present.
    pub phrases: Vec<String>,
    /// Words and phrases that must be absent.
    pub excluded: Vec<String>,
    /// Alternatives joined by `OR`.
    pub optional: Vec<String>,
}

/// The query a search answers, echoed.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
pub struct QueryEcho {
    /// `q` as sent.
    pub raw: String,
    /// `q` as understood.
    pub parsed: ParsedQuery,
    /// The fields searched.
    pub fields: Vec<String>,
}

/// A page of search results (`GET /v1/logs/search`), newest first.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
pub struct SearchPage {
    /// The matches.
    pub logs: Vec<Log>,
    /// The query.
    pub query: QueryEcho,
    /// About the page.
    pub pagination: Pagination,
}

/// `POST /v1/logs` stored a batch.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
pub struct Ingested {
    /// Always `true`.
    pub success: bool,
    /// Logs stored.
    pub count: u64,
    /// When the server received them, Unix ms.
    pub timestamp: i64,
}

/// A log entry as sent (docs/API.md, POST /v1/logs): `level`, `message`, `source` and
/// `environment` are required unless the query gives them; unknown fields go into `data`.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[serde(rename_all = "camelCase")]
pub struct Entry {
    /// The severity.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub level: Option<Level>,
    /// The text, 1 to 10,000 characters.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub message: Option<String>,
    /// What sent it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub source: Option<String>,
    /// Where it ran.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub environment: Option<Environment>,
    /// Its dataset (`default` when absent).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub dataset: Option<String>,
    /// The version that sent it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub version: Option<String>,
    /// The user it concerns.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub user_id: Option<String>,
    /// The session it belongs to.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub session_id: Option<String>,
    /// The request it belongs to.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub request_id: Option<String>,
    /// Any JSON object.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[cfg_attr(feature = "openapi", schema(value_type = Option<Object>))]
    pub data: Option<serde_json::Map<String, Value>>,
    /// An error's name.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub error_name: Option<String>,
    /// An error's stack.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub error_stack: Option<String>,
    /// Labels.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub tags: Option<Vec<String>>,
    /// Unix ms or ISO 8601 (the time it arrived when absent).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub timestamp: Option<Value>,
    /// The flow it is a step of.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub flow_id: Option<String>,
    /// Its step in the flow.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub step_index: Option<u16>,
}

/// `POST /v1/logs` as JSON: `{"logs": [...]}`, a bare array, or one entry.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[serde(untagged)]
pub enum IngestBody {
    /// `{"logs": [...]}`.
    Wrapped(Batch),
    /// `[...]`.
    Bare(Vec<Entry>),
    /// One entry.
    One(Box<Entry>),
}

/// `{"logs": [...]}`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
pub struct Batch {
    /// 1 to 100 entries.
    pub logs: Vec<Entry>,
}

/// What `POST /v1/logs` answers in JSON: a stored batch, or to OTLP JSON an
/// `ExportLogsServiceResponse` (`{}`, or `partialSuccess` when records were refused).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[serde(untagged)]
pub enum IngestReply {
    /// A stored batch.
    Stored(Ingested),
    /// OTLP's answer.
    Otlp(OtlpAnswer),
}

/// OTLP JSON's `ExportLogsServiceResponse` (nothing else in it, so a stored batch's answer is
/// never taken for one).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct OtlpAnswer {
    /// The records refused, when any were.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub partial_success: Option<PartialSuccess>,
}

/// The records an OTLP request had refused, and why.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[serde(rename_all = "camelCase")]
pub struct PartialSuccess {
    /// An int64, as a string (OTLP JSON).
    pub rejected_log_records: String,
    /// Why.
    pub error_message: String,
}
