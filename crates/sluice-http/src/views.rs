//! The wire types of workspaces, keys, users, members and sessions (`sluice-api`) made from the
//! model's records, as the management API answers them and `sluice admin ... --json` prints
//! them: one shape for both (docs/API.md, Accounts).

use sluice_model::{ApiKeyRecord, Role, SessionRecord, User, Workspace};
use sluice_store::accounts::Member;

fn scopes(key: &ApiKeyRecord) -> Vec<String> {
    key.scopes.list().iter().map(|scope| scope.as_str().to_owned()).collect()
}

/// A key as listed (`GET /v1/keys`, `admin key list --json`): never its text.
pub fn key(key: &ApiKeyRecord, now_ms: i64) -> sluice_api::Key {
    sluice_api::Key {
        key_id: key.id.to_string(),
        name: key.name.clone(),
        env: key.env.as_str().to_owned(),
        scopes: scopes(key),
        state: key.state(now_ms).as_str().to_owned(),
        created_at: key.created_at,
        expires_at: key.expires_at,
    }
}

/// A key just made (`POST /v1/keys`, `admin key create --json`): its text, shown this once.
pub fn created_key(key: &ApiKeyRecord, text: &str) -> sluice_api::CreatedKey {
    sluice_api::CreatedKey {
        key_id: key.id.to_string(),
        api_key: text.to_owned(),
        workspace_id: key.workspace_id.to_string(),
        expires_at: key.expires_at,
        name: key.name.clone(),
        env: key.env.as_str().to_owned(),
        scopes: scopes(key),
    }
}

/// A user (`GET /v1/me`, `admin user create --json`).
pub fn user(user: &User) -> sluice_api::User {
    sluice_api::User {
        user_id: user.id.to_string(),
        email: user.email.clone(),
        name: user.name.clone(),
        admin: user.admin,
    }
}

/// A workspace of the user's, with their role there.
pub fn membership(workspace: &Workspace, role: Role) -> sluice_api::Membership {
    sluice_api::Membership {
        workspace_id: workspace.id.to_string(),
        name: workspace.name.clone(),
        role: role.as_str().to_owned(),
    }
}

/// A member of a workspace.
pub fn member(member: &Member) -> sluice_api::Member {
    sluice_api::Member {
        user_id: member.user.id.to_string(),
        email: member.user.email.clone(),
        name: member.user.name.clone(),
        role: member.role.as_str().to_owned(),
        since: member.since,
    }
}

/// A session, `current` when it is the one asking.
pub fn session(session: &SessionRecord, current: bool) -> sluice_api::Session {
    sluice_api::Session {
        session_id: session.id.to_string(),
        client: session.client.clone(),
        created_at: session.created_at,
        last_used_at: session.last_used_at,
        expires_at: session.expires_at(),
        current,
    }
}
