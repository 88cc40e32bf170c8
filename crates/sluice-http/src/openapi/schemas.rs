//! The shapes of the API's bodies as the OpenAPI document describes them: what the handlers
//! write (often with `serde_json::json!`) and read, field for field as docs/API.md gives them.
//! They are never serialized; the schemathesis run of `cargo xtask ci` checks every answer of a
//! live server against them, so a shape that drifts from its handler fails there.

#![allow(dead_code, clippy::large_enum_variant, reason = "descriptions only: never built, read by utoipa's derive")]

use serde_json::Value;
use utoipa::{IntoParams, ToSchema};

/// A log level.
#[derive(ToSchema)]
#[schema(rename_all = "lowercase")]
pub enum Level {
    Debug,
    Info,
    Warn,
    Error,
}

/// An environment.
#[derive(ToSchema)]
#[schema(rename_all = "lowercase")]
pub enum Environment {
    Development,
    Staging,
    Production,
}

/// A stored log. Optional fields appear only when set, never as `null`.
#[derive(ToSchema)]
#[schema(rename_all = "camelCase")]
pub struct Log {
    /// UUID v7, in the order logs were accepted.
    id: String,
    /// Unix milliseconds.
    timestamp: i64,
    level: Level,
    message: String,
    source: String,
    environment: Environment,
    dataset: String,
    version: Option<String>,
    user_id: Option<String>,
    session_id: Option<String>,
    request_id: Option<String>,
    data: Option<Object>,
    error_name: Option<String>,
    error_stack: Option<String>,
    tags: Option<Vec<String>>,
    flow_id: Option<String>,
    step_index: Option<u16>,
    country: Option<String>,
    ip_address: Option<String>,
}

/// Any JSON object.
#[derive(ToSchema)]
pub struct Object {}

/// A log entry as sent (docs/API.md, POST /v1/logs): `level`, `message`, `source` and
/// `environment` are required unless the query gives them; unknown fields go into `data`.
#[derive(ToSchema)]
#[schema(rename_all = "camelCase")]
pub struct Entry {
    level: Option<Level>,
    message: Option<String>,
    source: Option<String>,
    environment: Option<Environment>,
    dataset: Option<String>,
    version: Option<String>,
    user_id: Option<String>,
    session_id: Option<String>,
    request_id: Option<String>,
    data: Option<Object>,
    error_name: Option<String>,
    error_stack: Option<String>,
    tags: Option<Vec<String>>,
    /// Unix ms or ISO 8601.
    #[schema(value_type = Option<Value>)]
    timestamp: Option<Value>,
    flow_id: Option<String>,
    step_index: Option<u16>,
}

/// `POST /v1/logs` as JSON: `{"logs": [...]}`, a bare array, or one entry.
#[derive(ToSchema)]
#[serde(untagged)]
pub enum IngestBody {
    Wrapped(Wrapped),
    Bare(Vec<Entry>),
    One(Entry),
}

/// `{"logs": [...]}`.
#[derive(ToSchema)]
pub struct Wrapped {
    logs: Vec<Entry>,
}

/// A stored batch.
#[derive(ToSchema)]
pub struct IngestAnswer {
    success: bool,
    count: u32,
    /// When it was received, Unix ms.
    timestamp: i64,
}

/// What `POST /v1/logs` answers in JSON: a stored batch, or to OTLP JSON an
/// `ExportLogsServiceResponse` (`{}`, or `partialSuccess` when records were refused).
#[derive(ToSchema)]
#[serde(untagged)]
pub enum IngestReply {
    Stored(IngestAnswer),
    Otlp(OtlpAnswer),
}

/// OTLP JSON's `ExportLogsServiceResponse` (nothing else in it, so a stored batch's answer
/// is never taken for one).
#[derive(ToSchema)]
#[schema(rename_all = "camelCase")]
#[serde(deny_unknown_fields)]
pub struct OtlpAnswer {
    partial_success: Option<PartialSuccess>,
}

/// The records an OTLP request had refused, and why.
#[derive(ToSchema)]
#[schema(rename_all = "camelCase")]
pub struct PartialSuccess {
    /// An int64, as a string (OTLP JSON).
    rejected_log_records: String,
    error_message: String,
}

/// What a page answers about itself.
#[derive(ToSchema)]
#[schema(rename_all = "camelCase")]
pub struct Pagination {
    limit: u32,
    offset: u64,
    count: u32,
    has_more: bool,
}

/// A page of logs, newest first.
#[derive(ToSchema)]
pub struct LogPage {
    logs: Vec<Log>,
    pagination: Pagination,
}

/// One log.
#[derive(ToSchema)]
pub struct OneLog {
    log: Log,
}

/// A search query as understood.
#[derive(ToSchema)]
pub struct Parsed {
    required: Vec<String>,
    phrases: Vec<String>,
    excluded: Vec<String>,
    optional: Vec<String>,
}

/// The query echoed.
#[derive(ToSchema)]
pub struct QueryEcho {
    raw: String,
    parsed: Parsed,
    fields: Vec<String>,
}

/// A page of search results.
#[derive(ToSchema)]
pub struct SearchPage {
    logs: Vec<Log>,
    query: QueryEcho,
    pagination: Pagination,
}

/// Counts by level.
#[derive(ToSchema)]
pub struct Counts {
    debug: u64,
    info: u64,
    warn: u64,
    error: u64,
    total: u64,
}

/// One bucket of `GET /v1/stats`: `date` (and `hour`) or `source`, with its counts.
#[derive(ToSchema)]
pub struct Bucket {
    date: Option<String>,
    hour: Option<u8>,
    source: Option<String>,
    debug: u64,
    info: u64,
    warn: u64,
    error: u64,
    total: u64,
}

/// The period a stats answer covers.
#[derive(ToSchema)]
#[schema(rename_all = "camelCase")]
pub struct Period {
    from: String,
    to: String,
    group_by: String,
}

/// `GET /v1/stats`.
#[derive(ToSchema)]
pub struct Stats {
    stats: Vec<Bucket>,
    totals: Counts,
    period: Period,
}

/// Today against yesterday.
#[derive(ToSchema)]
#[schema(rename_all = "camelCase")]
pub struct Comparison {
    yesterday_total: u64,
    change_percent: f64,
    trend: String,
}

/// `GET /v1/stats/summary`.
#[derive(ToSchema)]
pub struct Summary {
    today: Counts,
    comparison: Comparison,
}

/// A flow's summary.
#[derive(ToSchema)]
#[schema(rename_all = "camelCase")]
pub struct Flow {
    flow_id: String,
    name: Option<String>,
    steps: u64,
    logs: u64,
    first_timestamp: i64,
    last_timestamp: i64,
    duration_ms: i64,
    levels: Counts,
    sources: Vec<String>,
}

/// `GET /v1/flows`.
#[derive(ToSchema)]
pub struct FlowPage {
    flows: Vec<Flow>,
    pagination: Pagination,
}

/// A flow with its gaps and duplicates.
#[derive(ToSchema)]
#[schema(rename_all = "camelCase")]
pub struct TimelineFlow {
    flow_id: String,
    name: Option<String>,
    steps: u64,
    logs: u64,
    first_timestamp: i64,
    last_timestamp: i64,
    duration_ms: i64,
    levels: Counts,
    sources: Vec<String>,
    missing_steps: Vec<u16>,
    duplicate_steps: Vec<u16>,
}

/// `GET /v1/flows/{flowId}`: the flow and its logs in step order (at most 2,000;
/// `truncated` when there were more).
#[derive(ToSchema)]
pub struct Timeline {
    flow: TimelineFlow,
    logs: Vec<Log>,
    truncated: Option<bool>,
}

/// `POST /v1/flows`.
#[derive(ToSchema)]
pub struct NewFlow {
    name: Option<String>,
}

/// A created flow.
#[derive(ToSchema)]
#[schema(rename_all = "camelCase")]
pub struct CreatedFlow {
    flow_id: String,
    name: Option<String>,
    created_at: i64,
}

/// One issue of a 400 Validation error.
#[derive(ToSchema)]
pub struct Issue {
    /// Field names and 0-based indexes.
    #[schema(value_type = Vec<Value>)]
    path: Vec<Value>,
    message: String,
}

/// Every error: `error`, and `issues` (validation), `code` (`PARSE_ERROR`,
/// `QUOTA_EXCEEDED`) or `retryAfter` (seconds) where they apply.
#[derive(ToSchema)]
#[schema(rename_all = "camelCase")]
pub struct Error {
    error: String,
    issues: Option<Vec<Issue>>,
    code: Option<String>,
    retry_after: Option<u64>,
}

/// `/healthz` and `/readyz`.
#[derive(ToSchema)]
pub struct Health {
    status: String,
}

/// A signed-in user.
#[derive(ToSchema)]
#[schema(rename_all = "camelCase")]
pub struct UserJson {
    user_id: String,
    email: String,
    name: Option<String>,
    admin: bool,
}

/// A workspace the user belongs to, with their role.
#[derive(ToSchema)]
#[schema(rename_all = "camelCase")]
pub struct Membership {
    workspace_id: String,
    name: String,
    role: String,
}

/// `POST /v1/auth/login` and `GET /v1/me`.
#[derive(ToSchema)]
pub struct Me {
    user: UserJson,
    workspaces: Vec<Membership>,
}

/// `POST /v1/auth/login`.
#[derive(ToSchema)]
pub struct Login {
    email: String,
    password: String,
}

/// `GET /v1/workspaces`.
#[derive(ToSchema)]
pub struct Workspaces {
    workspaces: Vec<Membership>,
}

/// A name.
#[derive(ToSchema)]
pub struct Named {
    name: String,
}

/// `GET /v1/workspace`, and `PUT /v1/workspace/plan`'s answer (its first fields).
#[derive(ToSchema)]
#[schema(rename_all = "camelCase")]
pub struct WorkspaceJson {
    workspace_id: String,
    name: Option<String>,
    plan: String,
    limits: Object,
    retention_days: Option<u32>,
    usage: Option<Object>,
    role: Option<String>,
    created_at: Option<i64>,
}

/// `PUT /v1/workspace/plan`.
#[derive(ToSchema)]
#[schema(rename_all = "camelCase")]
pub struct SetPlan {
    plan: String,
    requests_per_minute: Option<u32>,
    logs_per_month: Option<u64>,
    retention_days: Option<u32>,
}

/// `GET /v1/keys`.
#[derive(ToSchema)]
pub struct Keys {
    keys: Vec<Object>,
}

/// `POST /v1/keys`.
#[derive(ToSchema)]
#[schema(rename_all = "camelCase")]
pub struct NewKey {
    name: Option<String>,
    env: Option<String>,
    #[schema(value_type = Option<Value>)]
    scopes: Option<Value>,
    expires_in: Option<u64>,
}

/// A created key, its text shown this once.
#[derive(ToSchema)]
#[schema(rename_all = "camelCase")]
pub struct CreatedKey {
    key_id: String,
    api_key: String,
    workspace_id: String,
}

/// A key or device code and its new state.
#[derive(ToSchema)]
pub struct StateChange {
    state: String,
}

/// A member of the workspace.
#[derive(ToSchema)]
#[schema(rename_all = "camelCase")]
pub struct Member {
    user_id: String,
    role: String,
}

/// `GET /v1/members`.
#[derive(ToSchema)]
pub struct Members {
    members: Vec<Member>,
}

/// `POST /v1/members`.
#[derive(ToSchema)]
pub struct NewMember {
    email: String,
    role: String,
}

/// `PATCH /v1/members/{userId}`.
#[derive(ToSchema)]
pub struct RoleChange {
    role: String,
}

/// `GET /v1/sessions`.
#[derive(ToSchema)]
pub struct Sessions {
    sessions: Vec<Object>,
}

/// `POST /v1/device/approve` and `/deny`.
#[derive(ToSchema)]
#[schema(rename_all = "camelCase")]
pub struct UserCode {
    user_code: String,
}

/// RFC 8628's device authorization answer.
#[derive(ToSchema)]
pub struct DeviceCode {
    device_code: String,
    user_code: String,
    verification_uri: String,
    verification_uri_complete: String,
    expires_in: u32,
    interval: u32,
}

/// A token, or RFC 6749's `{"error"}`.
#[derive(ToSchema)]
pub struct TokenAnswer {
    access_token: Option<String>,
    token_type: Option<String>,
    expires_in: Option<u32>,
    error: Option<String>,
}

/// The filters `GET /v1/logs`, search and the tail share.
#[derive(IntoParams)]
#[into_params(parameter_in = Query, rename_all = "camelCase")]
pub struct ListParams {
    /// Page size (list 1-1000, default 100; search 1-500, default 50; larger values clamped).
    limit: Option<u32>,
    /// Logs to skip; `offset + limit` at most 100,000.
    offset: Option<u64>,
    level: Option<Level>,
    source: Option<String>,
    environment: Option<Environment>,
    dataset: Option<String>,
    user_id: Option<String>,
    session_id: Option<String>,
    flow_id: Option<String>,
    /// Unix ms, inclusive.
    from: Option<i64>,
    /// Unix ms, inclusive.
    to: Option<i64>,
}

/// The search's own parameters.
#[derive(IntoParams)]
#[into_params(parameter_in = Query)]
pub struct SearchParams {
    /// The query: `word`, `"phrase"`, `a OR b`, `-excluded`.
    q: Option<String>,
    /// Comma-separated: `message`, `errorName`, `errorStack`, `data` (default `message`).
    fields: Option<String>,
}

/// `POST /v1/logs`'s parameters.
#[derive(IntoParams)]
#[into_params(parameter_in = Query)]
pub struct IngestParams {
    /// `json`, `jsonl`, `syslog`, `text`, `csv`, `obl` (else `Content-Type`, else sniffed).
    format: Option<String>,
    /// Default `source` of entries without one.
    source: Option<String>,
    /// Default `environment`.
    environment: Option<String>,
    /// Default `level`.
    level: Option<String>,
    /// Default `dataset`.
    dataset: Option<String>,
}

/// `GET /v1/stats`'s parameters.
#[derive(IntoParams)]
#[into_params(parameter_in = Query, rename_all = "camelCase")]
pub struct StatsParams {
    /// `YYYY-MM-DD`, UTC (default `to` − 7 days).
    from: Option<String>,
    /// `YYYY-MM-DD`, UTC (default today).
    to: Option<String>,
    /// `day` (default), `hour` or `source`.
    group_by: Option<String>,
    source: Option<String>,
    environment: Option<Environment>,
    dataset: Option<String>,
}

/// `GET /v1/flows`'s parameters.
#[derive(IntoParams)]
#[into_params(parameter_in = Query, rename_all = "camelCase")]
pub struct FlowParams {
    limit: Option<u32>,
    offset: Option<u64>,
    source: Option<String>,
    environment: Option<Environment>,
    /// Only flows with an error log (`true` or `false`).
    has_errors: Option<bool>,
    from: Option<i64>,
    to: Option<i64>,
}
