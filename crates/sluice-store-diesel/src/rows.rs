//! The shared tables' rows, and their conversion to and from the model's types (through
//! `sluice_store::rows` for the columns every store reads the same way).

use diesel::prelude::*;
use sluice_model::{ApiKeyRecord, DeviceGrant, Limits, Plan, SessionRecord, User, Workspace};
use sluice_store::rows::{PlanColumns, corrupt, parse_column};
use sluice_store::{NewApiKey, StoreError, accounts};

use crate::DbId;
use crate::schema::{api_keys, device_codes, sessions, users, workspaces};

/// A workspace row, both ways.
#[derive(Queryable, Selectable, Insertable)]
#[diesel(table_name = workspaces)]
pub struct WorkspaceRow {
    id: DbId,
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
            id: workspace.id.into(),
            name: workspace.name.clone(),
            plan: columns.plan.to_owned(),
            created_at: workspace.created_at,
            rate_limit: columns.rate_limit,
            monthly_quota: columns.monthly_quota,
            retention_days: columns.retention_days,
        }
    }
}

impl TryFrom<WorkspaceRow> for Workspace {
    type Error = StoreError;

    fn try_from(row: WorkspaceRow) -> Result<Self, StoreError> {
        Ok(Workspace {
            id: row.id.into(),
            name: row.name,
            plan: parse_column(&row.plan, "workspace plan")?,
            limits: PlanColumns::limits(row.rate_limit, row.monthly_quota, row.retention_days),
            created_at: row.created_at,
        })
    }
}

/// A workspace's plan and figures, as `set_plan` writes them (`None` writes NULL: unlimited).
#[derive(AsChangeset)]
#[diesel(table_name = workspaces, treat_none_as_null = true)]
pub struct PlanChange {
    plan: &'static str,
    rate_limit: Option<i32>,
    monthly_quota: Option<i64>,
    retention_days: i32,
}

impl PlanChange {
    /// The change to `plan` with `limits` in force ([`PlanColumns::new`]).
    pub fn new(plan: Plan, limits: &Limits) -> Self {
        let PlanColumns { plan, rate_limit, monthly_quota, retention_days } = PlanColumns::new(plan, limits);
        PlanChange { plan, rate_limit, monthly_quota, retention_days }
    }
}

/// A key row, both ways (its token's hash apart: it is written, never read back).
#[derive(Queryable, Selectable, Insertable)]
#[diesel(table_name = api_keys, treat_none_as_default_value = false)]
pub struct KeyRow {
    id: DbId,
    workspace_id: DbId,
    name: Option<String>,
    env: String,
    scopes: String,
    created_at: i64,
    expires_at: Option<i64>,
    revoked_at: Option<i64>,
}

impl From<&ApiKeyRecord> for KeyRow {
    fn from(record: &ApiKeyRecord) -> Self {
        Self {
            id: record.id.into(),
            workspace_id: record.workspace_id.into(),
            name: record.name.clone(),
            env: record.env.as_str().to_owned(),
            scopes: record.scopes.to_string(),
            created_at: record.created_at,
            expires_at: record.expires_at,
            revoked_at: record.revoked_at,
        }
    }
}

impl TryFrom<KeyRow> for ApiKeyRecord {
    type Error = StoreError;

    fn try_from(row: KeyRow) -> Result<Self, StoreError> {
        Ok(ApiKeyRecord {
            id: row.id.into(),
            workspace_id: row.workspace_id.into(),
            name: row.name,
            env: parse_column(&row.env, "key env")?,
            scopes: parse_column(&row.scopes, "key scopes")?,
            created_at: row.created_at,
            expires_at: row.expires_at,
            revoked_at: row.revoked_at,
        })
    }
}

/// A key row as inserted: the record's columns and its token's hash.
#[derive(Insertable)]
#[diesel(table_name = api_keys)]
pub struct NewKeyRow {
    #[diesel(embed)]
    key: KeyRow,
    hash: Vec<u8>,
}

impl From<&NewApiKey> for NewKeyRow {
    fn from(key: &NewApiKey) -> Self {
        NewKeyRow { key: KeyRow::from(&key.record), hash: key.hash.to_vec() }
    }
}

/// A user row, both ways (the sign-in columns, `email_key` and `password_hash`, apart).
#[derive(Queryable, Selectable, Insertable)]
#[diesel(table_name = users)]
pub struct UserRow {
    id: DbId,
    email: String,
    name: String,
    admin: bool,
    created_at: i64,
}

impl From<&User> for UserRow {
    fn from(user: &User) -> Self {
        Self {
            id: user.id.into(),
            email: user.email.clone(),
            name: user.name.clone(),
            admin: user.admin,
            created_at: user.created_at,
        }
    }
}

impl From<UserRow> for User {
    fn from(row: UserRow) -> Self {
        User { id: row.id.into(), email: row.email, name: row.name, admin: row.admin, created_at: row.created_at }
    }
}

/// A session row, both ways (its token's hash apart).
#[derive(Queryable, Selectable, Insertable)]
#[diesel(table_name = sessions)]
pub struct SessionRow {
    id: DbId,
    user_id: DbId,
    client: String,
    created_at: i64,
    last_used_at: i64,
    revoked_at: Option<i64>,
}

impl From<&SessionRecord> for SessionRow {
    fn from(session: &SessionRecord) -> Self {
        Self {
            id: session.id.into(),
            user_id: session.user_id.into(),
            client: session.client.clone(),
            created_at: session.created_at,
            last_used_at: session.last_used_at,
            revoked_at: session.revoked_at,
        }
    }
}

impl From<SessionRow> for SessionRecord {
    fn from(row: SessionRow) -> Self {
        SessionRecord {
            id: row.id.into(),
            user_id: row.user_id.into(),
            client: row.client,
            created_at: row.created_at,
            last_used_at: row.last_used_at,
            revoked_at: row.revoked_at,
        }
    }
}

/// A device code row, both ways (its device code's hash apart).
#[derive(Queryable, Selectable, Insertable, AsChangeset)]
#[diesel(table_name = device_codes, treat_none_as_null = true)]
pub struct DeviceRow {
    user_code: String,
    client_id: String,
    scope: Option<String>,
    created_at: i64,
    expires_at: i64,
    interval_s: i32,
    last_poll_at: Option<i64>,
    state: String,
    user_id: Option<DbId>,
}

impl From<&DeviceGrant> for DeviceRow {
    fn from(grant: &DeviceGrant) -> Self {
        let (state, user) = accounts::device_state_columns(grant.state);
        Self {
            user_code: grant.user_code.clone(),
            client_id: grant.client_id.clone(),
            scope: grant.scope.clone(),
            created_at: grant.created_at,
            expires_at: grant.expires_at,
            interval_s: i32::try_from(grant.interval_s).unwrap_or(i32::MAX),
            last_poll_at: grant.last_poll_at,
            state: state.to_owned(),
            user_id: user.map(DbId::from),
        }
    }
}

impl TryFrom<DeviceRow> for DeviceGrant {
    type Error = StoreError;

    fn try_from(row: DeviceRow) -> Result<Self, StoreError> {
        Ok(DeviceGrant {
            user_code: row.user_code,
            client_id: row.client_id,
            scope: row.scope,
            created_at: row.created_at,
            expires_at: row.expires_at,
            interval_s: u32::try_from(row.interval_s).map_err(|_| corrupt("device interval"))?,
            last_poll_at: row.last_poll_at,
            state: accounts::device_state_from_columns(&row.state, row.user_id.map(Into::into))?,
        })
    }
}
