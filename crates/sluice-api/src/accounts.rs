//! Accounts: sign-in, the user, workspaces and plans, API keys, members, sessions
//! (docs/API.md, Accounts). `sluice admin ... --json` prints the same shapes.

use serde::{Deserialize, Serialize};
use sluice_model::Limits;

/// A user.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[serde(rename_all = "camelCase")]
pub struct User {
    /// Their id.
    pub user_id: String,
    /// Their email.
    pub email: String,
    /// Their name.
    pub name: String,
    /// An instance administrator (may change plans).
    pub admin: bool,
}

/// A workspace of the user's and their role there.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[serde(rename_all = "camelCase")]
pub struct Membership {
    /// The workspace.
    pub workspace_id: String,
    /// Its name.
    pub name: String,
    /// `owner`, `member` or `viewer`.
    pub role: String,
}

/// `POST /v1/auth/login` and `GET /v1/me`: the user and their workspaces.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
pub struct Me {
    /// Who.
    pub user: User,
    /// Their workspaces, by name.
    pub workspaces: Vec<Membership>,
}

/// `POST /v1/auth/login`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
pub struct Login {
    /// The user's email.
    pub email: String,
    /// Their password.
    pub password: String,
}

/// `GET /v1/workspaces`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
pub struct Workspaces {
    /// By name.
    pub workspaces: Vec<Membership>,
}

/// `POST /v1/workspaces`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
pub struct NewWorkspace {
    /// Its name, 1 to 100 characters.
    pub name: String,
}

/// This month's usage of a workspace.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[serde(rename_all = "camelCase")]
pub struct Usage {
    /// The month's first ms (UTC).
    pub month_start: i64,
    /// Logs accepted this month.
    pub logs: u64,
    /// The month's quota (`null`: unlimited).
    pub quota: Option<u64>,
}

/// `GET /v1/workspace`: the workspace a request acts on.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[serde(rename_all = "camelCase")]
pub struct WorkspaceInfo {
    /// Its id.
    pub workspace_id: String,
    /// Its name.
    pub name: String,
    /// `free`, `pro` or `enterprise`.
    pub plan: String,
    /// The figures in force (`null`: unlimited).
    pub limits: Limits,
    /// Days logs are kept.
    pub retention_days: u32,
    /// This month's usage.
    pub usage: Usage,
    /// The user's role there.
    pub role: String,
    /// Unix ms.
    pub created_at: i64,
}

/// `PUT /v1/workspace/plan`: a plan, with its figures or custom ones.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[serde(rename_all = "camelCase")]
pub struct SetPlan {
    /// `free`, `pro` or `enterprise`.
    pub plan: String,
    /// `POST /v1/logs` requests a minute (else the plan's).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub requests_per_minute: Option<u32>,
    /// Logs a UTC month (else the plan's).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub logs_per_month: Option<u64>,
    /// Days logs are kept (else the plan's).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub retention_days: Option<u32>,
}

/// The plan now in force.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[serde(rename_all = "camelCase")]
pub struct PlanSet {
    /// The workspace.
    pub workspace_id: String,
    /// Its plan.
    pub plan: String,
    /// The figures in force (`null`: unlimited).
    pub limits: Limits,
}

/// An API key as listed: never its text.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
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

/// `GET /v1/keys`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
pub struct Keys {
    /// The keys, newest first.
    pub keys: Vec<Key>,
}

/// `POST /v1/keys`.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[serde(rename_all = "camelCase")]
pub struct KeyRequest {
    /// A label.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub name: Option<String>,
    /// `live` (default) or `test`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub env: Option<String>,
    /// `ingest`, `read` (default both); the server also takes them comma-separated.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub scopes: Option<Vec<String>>,
    /// Seconds until it expires.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub expires_in: Option<u64>,
}

/// A key just made, its text shown this once.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[serde(rename_all = "camelCase")]
pub struct CreatedKey {
    /// Its id.
    pub key_id: String,
    /// The key.
    pub api_key: String,
    /// Its workspace.
    pub workspace_id: String,
    /// Unix ms.
    pub expires_at: Option<i64>,
    /// Its label.
    pub name: Option<String>,
    /// `live` or `test`.
    pub env: String,
    /// `ingest`, `read`.
    pub scopes: Vec<String>,
}

/// A key and its new state.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[serde(rename_all = "camelCase")]
pub struct KeyRevoked {
    /// The key.
    pub key_id: String,
    /// `revoked`.
    pub state: String,
}

/// A member of a workspace.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[serde(rename_all = "camelCase")]
pub struct Member {
    /// Their id.
    pub user_id: String,
    /// Their email.
    pub email: String,
    /// Their name.
    pub name: String,
    /// `owner`, `member` or `viewer`.
    pub role: String,
    /// Unix ms they joined.
    pub since: i64,
}

/// `GET /v1/members`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
pub struct Members {
    /// By email.
    pub members: Vec<Member>,
}

/// `POST /v1/members`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
pub struct NewMember {
    /// The user's email.
    pub email: String,
    /// `owner`, `member` or `viewer`.
    pub role: String,
}

/// `PATCH /v1/members/{userId}`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
pub struct RoleChange {
    /// `owner`, `member` or `viewer`.
    pub role: String,
}

/// A member's role, as changed.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[serde(rename_all = "camelCase")]
pub struct MemberRole {
    /// The member.
    pub user_id: String,
    /// Their role now.
    pub role: String,
}

/// A session of the signed-in user.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
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

/// `GET /v1/sessions`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
pub struct Sessions {
    /// Newest first.
    pub sessions: Vec<Session>,
}
