//! What the API answers, as typed values (docs/API.md). Logs are [`sluice_model::Log`], the
//! type the server writes them from.

use serde::{Deserialize, Serialize};
use sluice_model::Log;

/// What a list says about its page.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Pagination {
    /// The page size asked for.
    pub limit: u32,
    /// Items skipped.
    pub offset: u64,
    /// Items on this page.
    pub count: usize,
    /// Whether more follow.
    pub has_more: bool,
}

/// A page of logs (`GET /v1/logs`, `GET /v1/logs/search`), newest first.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct LogPage {
    /// The logs.
    pub logs: Vec<Log>,
    /// About the page.
    pub pagination: Pagination,
}

/// `POST /v1/logs` accepted a batch.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub struct Ingested {
    /// Logs stored.
    pub count: u64,
    /// When the server received them, Unix ms.
    pub timestamp: i64,
}

/// Level counters.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct Counts {
    /// `debug` logs.
    pub debug: u64,
    /// `info` logs.
    pub info: u64,
    /// `warn` logs.
    pub warn: u64,
    /// `error` logs.
    pub error: u64,
    /// All of them.
    pub total: u64,
}

/// One record of `GET /v1/stats`: a day, an hour or a source, with its counters.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct StatsRecord {
    /// `YYYY-MM-DD` (by day and by hour).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub date: Option<String>,
    /// 0 to 23, UTC (by hour).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub hour: Option<u8>,
    /// The source (by source).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub source: Option<String>,
    /// Its counters.
    #[serde(flatten)]
    pub counts: Counts,
}

/// What `GET /v1/stats` covers.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Period {
    /// First day.
    pub from: String,
    /// Last day.
    pub to: String,
    /// `day`, `hour` or `source`.
    pub group_by: String,
}

/// `GET /v1/stats`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Stats {
    /// The records.
    pub stats: Vec<StatsRecord>,
    /// Counters over the period.
    pub totals: Counts,
    /// The period.
    pub period: Period,
}

/// Today against yesterday.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Comparison {
    /// Yesterday's total.
    pub yesterday_total: u64,
    /// Change in percent.
    pub change_percent: f64,
    /// `up`, `down` or `stable`.
    pub trend: String,
}

/// `GET /v1/stats/summary`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Summary {
    /// Today's counters (UTC).
    pub today: Counts,
    /// Against yesterday.
    pub comparison: Comparison,
}

/// A flow as listed.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Flow {
    /// Its id.
    pub flow_id: String,
    /// Its name, when it was made with one.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub name: Option<String>,
    /// Distinct steps seen.
    pub steps: u64,
    /// Logs in it.
    pub logs: u64,
    /// First log's time, Unix ms.
    pub first_timestamp: i64,
    /// Last log's time, Unix ms.
    pub last_timestamp: i64,
    /// From the first log to the last, ms.
    pub duration_ms: i64,
    /// Logs per level.
    pub levels: Counts,
    /// Its sources.
    pub sources: Vec<String>,
}

/// `GET /v1/flows`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct FlowPage {
    /// The flows, most recently active first.
    pub flows: Vec<Flow>,
    /// About the page.
    pub pagination: Pagination,
}

/// A flow with its gaps and duplicates.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct FlowDetail {
    /// The summary.
    #[serde(flatten)]
    pub summary: Flow,
    /// Step numbers missing between the first and the last.
    #[serde(default)]
    pub missing_steps: Vec<u16>,
    /// Step numbers more than one log has.
    #[serde(default)]
    pub duplicate_steps: Vec<u16>,
}

/// `GET /v1/flows/{flowId}`: the flow and its logs in step order.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct FlowTimeline {
    /// The flow.
    pub flow: FlowDetail,
    /// Its logs, in step order.
    pub logs: Vec<Log>,
    /// Whether only the first 2,000 logs are here.
    #[serde(default)]
    pub truncated: bool,
}

/// A user.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct User {
    /// Their id.
    pub user_id: String,
    /// Their email.
    pub email: String,
    /// Their name.
    pub name: String,
    /// An instance administrator.
    pub admin: bool,
}

/// A workspace of the user's and their role there.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Membership {
    /// The workspace.
    pub workspace_id: String,
    /// Its name.
    pub name: String,
    /// `owner`, `member` or `viewer`.
    pub role: String,
}

/// `GET /v1/me`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Me {
    /// Who.
    pub user: User,
    /// Their workspaces, by name.
    pub workspaces: Vec<Membership>,
}

/// An API key as listed: never its text.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Key {
    /// Its id.
    pub key_id: String,
    /// Its label.
    pub name: Option<String>,
    /// `live` or `test`.
    pub env: String,
    /// `ingest`, `read`.
    pub scopes: Vec<String>,
    /// `active`, `revoked` or `expired`.
    pub state: String,
    /// Unix ms.
    pub created_at: i64,
    /// Unix ms.
    pub expires_at: Option<i64>,
}

/// A key just made, its text shown this once.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct NewKey {
    /// Its id.
    pub key_id: String,
    /// The key.
    pub api_key: String,
    /// Its workspace.
    pub workspace_id: String,
    /// Unix ms.
    pub expires_at: Option<i64>,
}

/// What `POST /v1/keys` takes.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct KeyRequest {
    /// A label.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub name: Option<String>,
    /// `live` (default) or `test`.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub env: Option<String>,
    /// `ingest`, `read` (default both).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub scopes: Option<Vec<String>>,
    /// Seconds until it expires.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub expires_in: Option<u64>,
}

/// A member of a workspace.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Member {
    /// Their id.
    pub user_id: String,
    /// Their email.
    pub email: String,
    /// Their name.
    pub name: String,
    /// Their role.
    pub role: String,
    /// Unix ms they joined.
    pub since: i64,
}

/// One event of the live tail.
#[derive(Debug, Clone, PartialEq)]
pub enum TailEvent {
    /// A log, as it was committed.
    Log(Box<Log>),
    /// The server dropped this many logs because the reader fell behind.
    Dropped(u64),
}

/// What `POST /oauth/device/code` answers.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct DeviceCode {
    /// What the client polls with (secret).
    pub device_code: String,
    /// What the person types, `XXXX-XXXX`.
    pub user_code: String,
    /// Where they type it.
    pub verification_uri: String,
    /// The same with the code filled in.
    pub verification_uri_complete: String,
    /// Seconds the code lives.
    pub expires_in: u64,
    /// Least seconds between polls.
    pub interval: u64,
}

/// A session of the signed-in user.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Session {
    /// Its id.
    pub session_id: String,
    /// `browser` or `sluice-cli`.
    pub client: String,
    /// Unix ms.
    pub created_at: i64,
    /// Unix ms.
    pub last_used_at: i64,
    /// Unix ms, unless used again before.
    pub expires_at: i64,
    /// Whether it is the one asking.
    pub current: bool,
}

/// The figures a workspace's plan puts in force (`None`: unlimited).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Limits {
    /// `POST /v1/logs` requests a minute.
    pub requests_per_minute: Option<u64>,
    /// Logs a UTC month.
    pub logs_per_month: Option<u64>,
    /// Days logs are kept.
    pub retention_days: u32,
}

/// This month's usage of a workspace.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Usage {
    /// The month's first ms (UTC).
    pub month_start: i64,
    /// Logs accepted this month.
    pub logs: u64,
    /// The month's quota (`None`: unlimited).
    pub quota: Option<u64>,
}

/// `GET /v1/workspace`: the workspace a request acts on.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct WorkspaceInfo {
    /// Its id.
    pub workspace_id: String,
    /// Its name.
    pub name: String,
    /// `free`, `pro` or `enterprise`.
    pub plan: String,
    /// The figures in force.
    pub limits: Limits,
    /// This month's usage.
    pub usage: Usage,
    /// The user's role there.
    pub role: String,
}

/// `POST /v1/flows`: a flow made before its logs.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct NewFlow {
    /// Its id, for logs' `flowId`.
    pub flow_id: String,
    /// Its name.
    #[serde(default)]
    pub name: Option<String>,
    /// Unix ms.
    pub created_at: i64,
}
