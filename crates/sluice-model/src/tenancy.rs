//! Workspaces, plans and API key records: who owns logs and who may read or write them.

use std::fmt;
use std::str::FromStr;

use serde::{Deserialize, Serialize};

use crate::{KeyId, UnknownValue, WorkspaceId};

/// A workspace's billing plan, which sets its rate limit, quota and retention.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Plan {
    /// 60 requests/min, 10,000 logs/month, 7 days retention.
    Free,
    /// 600 requests/min, 1,000,000 logs/month, 30 days retention.
    Pro,
    /// Unlimited or custom figures.
    Enterprise,
}

impl Plan {
    /// The wire spelling.
    pub const fn as_str(self) -> &'static str {
        match self {
            Plan::Free => "free",
            Plan::Pro => "pro",
            Plan::Enterprise => "enterprise",
        }
    }
}

impl Plan {
    /// The plan's figures (docs/API.md, "Plans: rate limits, quotas, retention"): what a
    /// workspace gets when it is put on the plan without figures of its own.
    pub const fn limits(self) -> Limits {
        match self {
            Plan::Free => Limits { requests_per_minute: Some(60), logs_per_month: Some(10_000), retention_days: 7 },
            Plan::Pro => Limits { requests_per_minute: Some(600), logs_per_month: Some(1_000_000), retention_days: 30 },
            Plan::Enterprise => Limits { requests_per_minute: None, logs_per_month: None, retention_days: 90 },
        }
    }
}

/// A workspace's figures: its plan's, or custom ones set with the plan
/// (`sluice admin workspace set-plan ... --requests-per-minute N`). `None` is unlimited.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[serde(rename_all = "camelCase")]
pub struct Limits {
    /// `POST /v1/logs` requests in any 60 seconds, shared by all the workspace's keys.
    pub requests_per_minute: Option<u32>,
    /// Logs accepted per UTC calendar month.
    pub logs_per_month: Option<u64>,
    /// Days a log is kept, counted from its `timestamp`.
    pub retention_days: u32,
}

impl FromStr for Plan {
    type Err = UnknownValue;

    fn from_str(text: &str) -> Result<Self, Self::Err> {
        match text {
            "free" => Ok(Plan::Free),
            "pro" => Ok(Plan::Pro),
            "enterprise" => Ok(Plan::Enterprise),
            other => Err(UnknownValue::new("'free' | 'pro' | 'enterprise'", other)),
        }
    }
}

impl fmt::Display for Plan {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// The unit of tenancy: owns logs and keys.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Workspace {
    /// Its identifier.
    pub id: WorkspaceId,
    /// A human name, unique is not required.
    pub name: String,
    /// Its plan.
    pub plan: Plan,
    /// The figures in force: the plan's, unless custom ones were set with it.
    pub limits: Limits,
    /// Unix ms.
    pub created_at: i64,
}

impl Workspace {
    /// A new workspace with a fresh id and its plan's figures.
    pub fn new(name: impl Into<String>, plan: Plan, created_at: i64) -> Self {
        Workspace { id: WorkspaceId::generate(), name: name.into(), plan, limits: plan.limits(), created_at }
    }
}

/// Which kind of key: `slc_live_` for production, `slc_test_` for test and development.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum KeyEnv {
    /// Production keys.
    Live,
    /// Test and development keys.
    Test,
}

impl KeyEnv {
    /// The wire spelling, also the middle part of the key text.
    pub const fn as_str(self) -> &'static str {
        match self {
            KeyEnv::Live => "live",
            KeyEnv::Test => "test",
        }
    }
}

impl FromStr for KeyEnv {
    type Err = UnknownValue;

    fn from_str(text: &str) -> Result<Self, Self::Err> {
        match text {
            "live" => Ok(KeyEnv::Live),
            "test" => Ok(KeyEnv::Test),
            other => Err(UnknownValue::new("'live' | 'test'", other)),
        }
    }
}

/// What a key may do.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Scope {
    /// `POST` requests: sending logs.
    Ingest,
    /// `GET` requests: reading logs and statistics.
    Read,
}

impl Scope {
    /// The wire spelling.
    pub const fn as_str(self) -> &'static str {
        match self {
            Scope::Ingest => "ingest",
            Scope::Read => "read",
        }
    }
}

/// The set of scopes a key holds.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct Scopes {
    /// Holds [`Scope::Ingest`].
    pub ingest: bool,
    /// Holds [`Scope::Read`].
    pub read: bool,
}

impl Scopes {
    /// Both scopes, the default for a new key.
    pub const ALL: Scopes = Scopes { ingest: true, read: true };

    /// Whether `scope` is held.
    pub const fn allows(self, scope: Scope) -> bool {
        match scope {
            Scope::Ingest => self.ingest,
            Scope::Read => self.read,
        }
    }

    /// The held scopes, in a fixed order.
    pub fn list(self) -> Vec<Scope> {
        [Scope::Ingest, Scope::Read].into_iter().filter(|scope| self.allows(*scope)).collect()
    }
}

impl fmt::Display for Scopes {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let names: Vec<&str> = self.list().into_iter().map(Scope::as_str).collect();
        f.write_str(&names.join(","))
    }
}

impl FromStr for Scopes {
    type Err = UnknownValue;

    /// A comma-separated list of `ingest` and `read`; at least one.
    fn from_str(text: &str) -> Result<Self, Self::Err> {
        let mut scopes = Scopes { ingest: false, read: false };
        for part in text.split(',').map(str::trim) {
            match part {
                "ingest" => scopes.ingest = true,
                "read" => scopes.read = true,
                other => return Err(UnknownValue::new("'ingest' | 'read'", other)),
            }
        }
        Ok(scopes)
    }
}

/// The state of a key at a given moment.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum KeyState {
    /// Accepted.
    Active,
    /// Rejected with 401 `API key has been revoked`.
    Revoked,
    /// Rejected with 401 `API key has expired`.
    Expired,
}

impl KeyState {
    /// The wire spelling.
    pub const fn as_str(self) -> &'static str {
        match self {
            KeyState::Active => "active",
            KeyState::Revoked => "revoked",
            KeyState::Expired => "expired",
        }
    }
}

/// An API key as stored: everything but its secret text, of which only a hash is kept.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ApiKeyRecord {
    /// Its identifier.
    pub id: KeyId,
    /// The workspace it belongs to.
    pub workspace_id: WorkspaceId,
    /// An optional human label.
    pub name: Option<String>,
    /// Live or test.
    pub env: KeyEnv,
    /// What it may do.
    pub scopes: Scopes,
    /// Unix ms.
    pub created_at: i64,
    /// Unix ms after which it no longer works.
    pub expires_at: Option<i64>,
    /// Unix ms when it was revoked.
    pub revoked_at: Option<i64>,
}

impl ApiKeyRecord {
    /// The key's state at `now_ms`. Revocation wins over expiry: it was a deliberate act.
    pub fn state(&self, now_ms: i64) -> KeyState {
        if self.revoked_at.is_some() {
            KeyState::Revoked
        } else if self.expires_at.is_some_and(|expires_at| expires_at <= now_ms) {
            KeyState::Expired
        } else {
            KeyState::Active
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn key(expires_at: Option<i64>, revoked_at: Option<i64>) -> ApiKeyRecord {
        ApiKeyRecord {
            id: KeyId::generate(),
            workspace_id: WorkspaceId::generate(),
            name: None,
            env: KeyEnv::Live,
            scopes: Scopes::ALL,
            created_at: 0,
            expires_at,
            revoked_at,
        }
    }

    #[test]
    fn key_state_follows_the_clock() {
        assert_eq!(key(None, None).state(10), KeyState::Active);
        assert_eq!(key(Some(11), None).state(10), KeyState::Active);
        assert_eq!(key(Some(10), None).state(10), KeyState::Expired);
        assert_eq!(key(Some(5), Some(1)).state(10), KeyState::Revoked);
    }

    #[test]
    fn scopes_parse_and_print() {
        assert_eq!("read".parse::<Scopes>(), Ok(Scopes { ingest: false, read: true }));
        assert_eq!("ingest, read".parse::<Scopes>(), Ok(Scopes::ALL));
        assert!("write".parse::<Scopes>().is_err());
        assert_eq!(Scopes::ALL.to_string(), "ingest,read");
    }
}
