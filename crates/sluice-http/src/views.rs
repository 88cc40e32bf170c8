//! The JSON of workspaces, keys, users, members and sessions, as the management API answers
//! it and `sluice admin ... --json` prints it: one shape for both (docs/API.md, Accounts).

use serde_json::{Value, json};
use sluice_model::{ApiKeyRecord, Role, SessionRecord, User, Workspace};
use sluice_store::accounts::Member;

/// A key as listed (`GET /v1/keys`, `admin key list --json`): never its text.
pub fn key(key: &ApiKeyRecord, now_ms: i64) -> Value {
    json!({
        "keyId": key.id.to_string(),
        "name": key.name,
        "env": key.env.as_str(),
        "scopes": key.scopes.list().iter().map(|scope| scope.as_str()).collect::<Vec<_>>(),
        "state": key.state(now_ms),
        "createdAt": key.created_at,
        "expiresAt": key.expires_at,
    })
}

/// A key just made (`POST /v1/keys`, `admin key create --json`): its text, shown this once.
pub fn created_key(key: &ApiKeyRecord, text: &str) -> Value {
    json!({
        "keyId": key.id.to_string(),
        "apiKey": text,
        "workspaceId": key.workspace_id.to_string(),
        "expiresAt": key.expires_at,
        "name": key.name,
        "env": key.env.as_str(),
        "scopes": key.scopes.list().iter().map(|scope| scope.as_str()).collect::<Vec<_>>(),
    })
}

/// A user (`GET /v1/me`, `admin user create --json`).
pub fn user(user: &User) -> Value {
    json!({
        "userId": user.id.to_string(),
        "email": user.email,
        "name": user.name,
        "admin": user.admin,
    })
}

/// A workspace of the user's, with their role there.
pub fn membership(workspace: &Workspace, role: Role) -> Value {
    json!({"workspaceId": workspace.id.to_string(), "name": workspace.name, "role": role.as_str()})
}

/// A member of a workspace.
pub fn member(member: &Member) -> Value {
    json!({
        "userId": member.user.id.to_string(),
        "email": member.user.email,
        "name": member.user.name,
        "role": member.role.as_str(),
        "since": member.since,
    })
}

/// A session, `current` when it is the one asking.
pub fn session(session: &SessionRecord, current: bool) -> Value {
    json!({
        "sessionId": session.id.to_string(),
        "client": session.client,
        "createdAt": session.created_at,
        "lastUsedAt": session.last_used_at,
        "expiresAt": session.expires_at(),
        "current": current,
    })
}
