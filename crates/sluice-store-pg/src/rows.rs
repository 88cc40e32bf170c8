//! Rows as PostgreSQL holds them (ids as UUIDs, text encoded: [`crate::text`]), and their
//! conversion to and from the model's types, through `sluice_store::rows` for what both
//! stores share.

use diesel::prelude::*;
use diesel::sql_types::{BigInt, Nullable};
use sluice_model::{ApiKeyRecord, KeyId, Limits, Log, LogId, Plan, Workspace, WorkspaceId};
use sluice_store::rows::{LogColumns, PlanColumns, parse_column};
use sluice_store::{NewApiKey, StoreError};
use uuid::Uuid;

use crate::schema::{api_keys, logs, workspaces};
use crate::text::{decode, decode_option};

/// A log as read back.
#[derive(Queryable, QueryableByName, Selectable)]
#[diesel(table_name = logs, check_for_backend(diesel::pg::Pg))]
pub(crate) struct LogRow {
    pub(crate) id: Uuid,
    pub(crate) ts: i64,
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

    /// The row's columns, text decoded as it was sent (`data` is JSON text, stored as it is),
    /// read as the model's log.
    fn try_from(row: LogRow) -> Result<Self, StoreError> {
        Log::try_from(LogColumns {
            id: LogId::from_uuid(row.id),
            ts: row.ts,
            level: row.level,
            environment: row.environment,
            source: decode(row.source),
            dataset: decode(row.dataset),
            message: decode(row.message),
            version: decode_option(row.version),
            user_id: decode_option(row.user_id),
            session_id: decode_option(row.session_id),
            request_id: decode_option(row.request_id),
            data: row.data,
            error_name: decode_option(row.error_name),
            error_stack: decode_option(row.error_stack),
            tags: row.tags,
            flow_id: decode_option(row.flow_id),
            step_index: row.step_index,
            country: decode_option(row.country),
            ip_address: decode_option(row.ip_address),
        })
    }
}

/// A workspace row, both ways.
#[derive(Queryable, Selectable, Insertable)]
#[diesel(table_name = workspaces, check_for_backend(diesel::pg::Pg))]
pub(crate) struct WorkspaceRow {
    id: Uuid,
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
            id: *workspace.id.as_uuid(),
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
    /// The change to `plan` with `limits` in force ([`PlanColumns::new`]).
    pub(crate) fn new(plan: Plan, limits: &Limits) -> Self {
        let PlanColumns { plan, rate_limit, monthly_quota, retention_days } = PlanColumns::new(plan, limits);
        PlanChange { plan, rate_limit, monthly_quota, retention_days }
    }
}

impl TryFrom<WorkspaceRow> for Workspace {
    type Error = StoreError;

    fn try_from(row: WorkspaceRow) -> Result<Self, StoreError> {
        Ok(Workspace {
            id: WorkspaceId::from_uuid(row.id),
            name: row.name,
            plan: parse_column(&row.plan, "workspace plan")?,
            limits: PlanColumns::limits(row.rate_limit, row.monthly_quota, row.retention_days),
            created_at: row.created_at,
        })
    }
}

/// A key row as read back (the hash stays in the database).
#[derive(Queryable, Selectable)]
#[diesel(table_name = api_keys, check_for_backend(diesel::pg::Pg))]
pub(crate) struct KeyRow {
    workspace_id: Uuid,
    id: Uuid,
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
            id: KeyId::from_uuid(row.id),
            workspace_id: WorkspaceId::from_uuid(row.workspace_id),
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
    workspace_id: Uuid,
    id: Uuid,
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
            workspace_id: *record.workspace_id.as_uuid(),
            id: *record.id.as_uuid(),
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

/// A sum, NULL over no rows, as a raw query reads it.
#[derive(QueryableByName)]
pub(crate) struct Total {
    #[diesel(sql_type = Nullable<BigInt>)]
    pub(crate) total: Option<i64>,
}
