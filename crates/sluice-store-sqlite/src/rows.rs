//! Rows as SQLite holds them (ids as blobs, text as sent), and their conversion to and from
//! the model's types through the mapping both stores share (`sluice_store::rows`).

use diesel::prelude::*;
use sluice_model::{ApiKeyRecord, KeyId, Limits, Log, LogId, Plan, Workspace, WorkspaceId};
use sluice_store::rows::{LogColumns, PlanColumns, corrupt, parse_column};
use sluice_store::{NewApiKey, StoreError};

use crate::schema::{api_keys, logs, workspaces};

/// A log as the rows of `logs` kept it, before blocks (read by the upgrade).
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
