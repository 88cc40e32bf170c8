//! People: users, their roles in workspaces, their sessions, and the device codes a
//! command-line client signs in with (docs/API.md, Accounts).

use std::fmt;
use std::str::FromStr;

use serde::{Deserialize, Serialize};

use crate::{SessionId, UnknownValue, UserId};

/// A session ends this long after its last use: 30 days.
pub const SESSION_IDLE_MS: i64 = 30 * 24 * 60 * 60 * 1000;

/// A person who signs in. The password is not here: only the store holds its hash.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct User {
    /// Its identifier.
    pub id: UserId,
    /// Unique, compared without regard to case.
    pub email: String,
    /// A display name.
    pub name: String,
    /// An instance administrator (may change plans).
    pub admin: bool,
    /// Unix ms.
    pub created_at: i64,
}

/// What a member may do in a workspace, from least to most.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Role {
    /// Reads logs, flows and statistics.
    Viewer,
    /// A viewer who also sends logs and manages keys.
    Member,
    /// Everything in the workspace, members included.
    Owner,
}

impl Role {
    /// The wire spelling.
    pub const fn as_str(self) -> &'static str {
        match self {
            Role::Viewer => "viewer",
            Role::Member => "member",
            Role::Owner => "owner",
        }
    }
}

impl FromStr for Role {
    type Err = UnknownValue;

    fn from_str(text: &str) -> Result<Self, Self::Err> {
        match text {
            "owner" => Ok(Role::Owner),
            "member" => Ok(Role::Member),
            "viewer" => Ok(Role::Viewer),
            other => Err(UnknownValue::new("'owner' | 'member' | 'viewer'", other)),
        }
    }
}

impl fmt::Display for Role {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// A session as stored: everything but its token, of which only a hash is kept.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SessionRecord {
    /// Its identifier.
    pub id: SessionId,
    /// Whose session.
    pub user_id: UserId,
    /// What signed in: `browser` or the device client's id (`sluice-cli`).
    pub client: String,
    /// Unix ms.
    pub created_at: i64,
    /// Unix ms of the last request made with it (kept to within a minute).
    pub last_used_at: i64,
    /// Unix ms when it was revoked (signed out).
    pub revoked_at: Option<i64>,
}

impl SessionRecord {
    /// Unix ms after which it no longer works, unless used again before.
    pub const fn expires_at(&self) -> i64 {
        self.last_used_at.saturating_add(SESSION_IDLE_MS)
    }
}

/// Where a device sign-in stands.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum DeviceState {
    /// Waiting for someone to approve or deny it.
    Pending,
    /// Approved by this user; the next poll gets a session.
    Approved(UserId),
    /// Denied; the next poll gets `access_denied`.
    Denied,
    /// Its session was handed out, or its denial told: no poll gets anything more.
    Used,
}

/// A device sign-in (RFC 8628) as stored: everything but the device code, of which only a
/// hash is kept.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct DeviceGrant {
    /// What the person types: 8 letters, stored without the dash.
    pub user_code: String,
    /// The client that asked (`sluice-cli`).
    pub client_id: String,
    /// The scope it asked for, if any.
    pub scope: Option<String>,
    /// Unix ms.
    pub created_at: i64,
    /// Unix ms after which it no longer works.
    pub expires_at: i64,
    /// The least seconds between two polls; grows by 5 at each poll that came sooner.
    pub interval_s: u32,
    /// Unix ms of the last poll.
    pub last_poll_at: Option<i64>,
    /// Where it stands.
    pub state: DeviceState,
}
