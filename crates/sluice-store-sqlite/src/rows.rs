//! Rows as SQLite holds them (ids as blobs, text as sent), and their conversion to and from
//! the model's types through the mapping both stores share (`sluice_store::rows`).

use diesel::prelude::*;
use sluice_model::{ApiKeyRecord, JsonObject, KeyId, Limits, Log, LogId, Plan, Workspace, WorkspaceId};
use sluice_store::page::SearchableRow;
use sluice_store::rows::{LogColumns, PlanColumns, corrupt, parse_column, step_index_column, tags_column};
use sluice_store::{NewApiKey, Search, StoreError};

use crate::schema::{api_keys, logs, workspaces};

/// A log as inserted: borrowed from the model so a batch is written without copies.
#[derive(Insertable)]
#[diesel(table_name = logs, treat_none_as_default_value = false)]
pub(crate) struct NewLogRow<'a> {
    seq: i64,
    workspace_id: &'a [u8],
    id: &'a [u8],
    ts: i64,
    level: &'a str,
    environment: &'a str,
    source: &'a str,
    dataset: &'a str,
    message: &'a str,
    version: Option<&'a str>,
    user_id: Option<&'a str>,
    session_id: Option<&'a str>,
    request_id: Option<&'a str>,
    data: Option<&'a str>,
    error_name: Option<&'a str>,
    error_stack: Option<&'a str>,
    tags: Option<String>,
    flow_id: Option<&'a str>,
    step_index: Option<i32>,
    country: Option<&'a str>,
    ip_address: Option<&'a str>,
}

impl<'a> NewLogRow<'a> {
    pub(crate) fn new(seq: i64, workspace: &'a WorkspaceId, log: &'a Log) -> Self {
        let entry = &log.entry;
        Self {
            seq,
            workspace_id: workspace.as_bytes(),
            id: log.id.as_bytes(),
            ts: entry.timestamp,
            level: entry.level.as_str(),
            environment: entry.environment.as_str(),
            source: &entry.source,
            dataset: &entry.dataset,
            message: &entry.message,
            version: entry.version.as_deref(),
            user_id: entry.user_id.as_deref(),
            session_id: entry.session_id.as_deref(),
            request_id: entry.request_id.as_deref(),
            data: entry.data.as_ref().map(JsonObject::as_str),
            error_name: entry.error_name.as_deref(),
            error_stack: entry.error_stack.as_deref(),
            tags: tags_column(entry),
            flow_id: entry.flow_id.as_deref(),
            step_index: step_index_column(entry),
            country: log.country.as_deref(),
            ip_address: log.ip_address.as_deref(),
        }
    }
}

/// A log as read back.
#[derive(Queryable, QueryableByName, Selectable)]
#[diesel(table_name = logs, check_for_backend(diesel::sqlite::Sqlite))]
pub(crate) struct LogRow {
    id: Vec<u8>,
    ts: i64,
    level: String,
    environment: String,
    source: String,
    dataset: String,
    message: String,
    version: Option<String>,
    user_id: Option<String>,
    session_id: Option<String>,
    request_id: Option<String>,
    data: Option<String>,
    error_name: Option<String>,
    error_stack: Option<String>,
    tags: Option<String>,
    flow_id: Option<String>,
    step_index: Option<i32>,
    country: Option<String>,
    ip_address: Option<String>,
}

impl LogRow {
    /// The row's place in a page, newest first as searches and lists sort: `(ts, id)`.
    pub(crate) fn sort_key(&self) -> (i64, &[u8]) {
        (self.ts, &self.id)
    }
}

impl sluice_store::page::KeyedRow for LogRow {
    type Id = Vec<u8>;
    fn ts(&self) -> i64 {
        self.ts
    }
    fn id(&self) -> &Vec<u8> {
        &self.id
    }
}

impl SearchableRow for LogRow {
    /// The exact check of a search on this row.
    fn matches(&self, search: &Search) -> bool {
        search.matches(&self.message, self.error_name.as_deref(), self.error_stack.as_deref(), self.data.as_deref())
    }
}

impl TryFrom<LogRow> for Log {
    type Error = StoreError;

    fn try_from(row: LogRow) -> Result<Self, StoreError> {
        LogColumns {
            id: LogId::from_slice(&row.id).ok_or_else(|| corrupt("log id"))?,
            ts: row.ts,
            level: row.level,
            environment: row.environment,
            source: row.source,
            dataset: row.dataset,
            message: row.message,
            version: row.version,
            user_id: row.user_id,
            session_id: row.session_id,
            request_id: row.request_id,
            data: row.data,
            error_name: row.error_name,
            error_stack: row.error_stack,
            tags: row.tags,
            flow_id: row.flow_id,
            step_index: row.step_index,
            country: row.country,
            ip_address: row.ip_address,
        }
        .try_into()
    }
}

/// A workspace row, both ways.
#[derive(Queryable, Selectable, Insertable)]
#[diesel(table_name = workspaces, check_for_backend(diesel::sqlite::Sqlite))]
pub(crate) struct WorkspaceRow {
    id: Vec<u8>,
    name: String,
    plan: String,
    created_at: i64,
    rate_limit: Option<i32>,
    monthly_quota: Option<i64>,
    retention_days: i32,
}

impl From<&Workspace> for WorkspaceRow {
    fn from(workspace: &Workspace) -> Self {
        let columns = PlanColumns::new(workspace.plan, &workspace.limits);
        Self {
            id: workspace.id.as_bytes().to_vec(),
            name: workspace.name.clone(),
            plan: columns.plan.to_owned(),
            created_at: workspace.created_at,
            rate_limit: columns.rate_limit,
            monthly_quota: columns.monthly_quota,
            retention_days: columns.retention_days,
        }
    }
}

/// A workspace's plan and figures, as `set_plan` writes them (`None` writes NULL: unlimited).
#[derive(AsChangeset)]
#[diesel(table_name = workspaces, treat_none_as_null = true)]
pub(crate) struct PlanChange {
    plan: &'static str,
    rate_limit: Option<i32>,
    monthly_quota: Option<i64>,
    retention_days: i32,
}

impl PlanChange {
    pub(crate) fn new(plan: Plan, limits: &Limits) -> Self {
        let PlanColumns { plan, rate_limit, monthly_quota, retention_days } = PlanColumns::new(plan, limits);
        PlanChange { plan, rate_limit, monthly_quota, retention_days }
    }
}

impl TryFrom<WorkspaceRow> for Workspace {
    type Error = StoreError;

    fn try_from(row: WorkspaceRow) -> Result<Self, StoreError> {
        Ok(Workspace {
            id: WorkspaceId::from_slice(&row.id).ok_or_else(|| corrupt("workspace id"))?,
            name: row.name,
            plan: parse_column(&row.plan, "workspace plan")?,
            limits: PlanColumns::limits(row.rate_limit, row.monthly_quota, row.retention_days),
            created_at: row.created_at,
        })
    }
}

/// A key row as read back (the hash stays in the database).
#[derive(Queryable, Selectable)]
#[diesel(table_name = api_keys, check_for_backend(diesel::sqlite::Sqlite))]
pub(crate) struct KeyRow {
    id: Vec<u8>,
    workspace_id: Vec<u8>,
    name: Option<String>,
    env: String,
    scopes: String,
    created_at: i64,
    expires_at: Option<i64>,
    revoked_at: Option<i64>,
}

impl TryFrom<KeyRow> for ApiKeyRecord {
    type Error = StoreError;

    fn try_from(row: KeyRow) -> Result<Self, StoreError> {
        Ok(ApiKeyRecord {
            id: KeyId::from_slice(&row.id).ok_or_else(|| corrupt("key id"))?,
            workspace_id: WorkspaceId::from_slice(&row.workspace_id).ok_or_else(|| corrupt("key workspace"))?,
            name: row.name,
            env: parse_column(&row.env, "key env")?,
            scopes: parse_column(&row.scopes, "key scopes")?,
            created_at: row.created_at,
            expires_at: row.expires_at,
            revoked_at: row.revoked_at,
        })
    }
}

/// A key row as inserted.
#[derive(Insertable)]
#[diesel(table_name = api_keys, treat_none_as_default_value = false)]
pub(crate) struct NewKeyRow {
    id: Vec<u8>,
    workspace_id: Vec<u8>,
    hash: Vec<u8>,
    name: Option<String>,
    env: String,
    scopes: String,
    created_at: i64,
    expires_at: Option<i64>,
    revoked_at: Option<i64>,
}

impl From<&NewApiKey> for NewKeyRow {
    fn from(key: &NewApiKey) -> Self {
        let record = &key.record;
        Self {
            id: record.id.as_bytes().to_vec(),
            workspace_id: record.workspace_id.as_bytes().to_vec(),
            hash: key.hash.to_vec(),
            name: record.name.clone(),
            env: record.env.as_str().to_owned(),
            scopes: record.scopes.to_string(),
            created_at: record.created_at,
            expires_at: record.expires_at,
            revoked_at: record.revoked_at,
        }
    }
}
