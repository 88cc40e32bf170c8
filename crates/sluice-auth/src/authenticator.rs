//! The check every authenticated request goes through, for API keys and for sessions, with a
//! short-lived cache of what the store answered.

use std::sync::Arc;
use std::time::Duration;

use moka::sync::Cache;
use sluice_model::{
    ApiKeyRecord, KeyId, KeyState, Role, Scope, SessionId, SessionRecord, User, UserId, Workspace, WorkspaceId,
};
use sluice_store::Store;

use crate::secrets::{hash_secret, is_session_token};
use crate::{AuthError, hash_key, key_env};

/// A session's last use is written at most this often (1 minute), so a request rarely writes.
pub const TOUCH_EVERY_MS: i64 = 60_000;

/// A signed-in user and the session they came with.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SignedIn {
    /// Who.
    pub user: User,
    /// With which session.
    pub session: SessionRecord,
}

/// Who is asking.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Actor {
    /// An API key.
    Key(ApiKeyRecord),
    /// A signed-in user, with their role in the workspace.
    User(SignedIn, Role),
}

/// What a request may act on once authenticated.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Principal {
    /// The workspace the request acts on.
    pub workspace: Workspace,
    /// Who is asking.
    pub actor: Actor,
}

/// What the store answered, and when (the request clock's Unix ms).
type Cached<T> = (Option<Arc<T>>, i64);

/// A user's workspaces and roles there, by workspace name.
pub type Memberships = Arc<Vec<(Workspace, Role)>>;

/// Checks keys and sessions against the store, with a short-lived cache of what it found.
#[derive(Clone)]
pub struct Authenticator {
    store: Arc<dyn Store>,
    keys: Cache<[u8; 32], Cached<(ApiKeyRecord, Workspace)>>,
    sessions: Cache<[u8; 32], Cached<SignedIn>>,
    /// Each user's workspaces and roles, by workspace name.
    memberships: Cache<UserId, (Memberships, i64)>,
    /// Keys and sessions revoked by this process, refused at once whatever the cache holds.
    revoked_keys: Cache<KeyId, ()>,
    revoked_sessions: Cache<SessionId, ()>,
    /// How long an answer is trusted, in ms of the request clock.
    ttl_ms: i64,
}

impl std::fmt::Debug for Authenticator {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Authenticator")
            .field("cached_keys", &self.keys.entry_count())
            .field("cached_sessions", &self.sessions.entry_count())
            .finish_non_exhaustive()
    }
}

/// A cache of at most 100,000 entries, each kept `ttl` at most.
fn bounded<K, V>(ttl: Duration) -> Cache<K, V>
where
    K: std::hash::Hash + Eq + Send + Sync + 'static,
    V: Clone + Send + Sync + 'static,
{
    Cache::builder().max_capacity(100_000).time_to_live(ttl).build()
}

impl Authenticator {
    /// An authenticator over `store` whose cache trusts an answer for `ttl`, measured on the
    /// clock requests are checked with (`now_ms`); the cache also lets entries go after `ttl`
    /// of wall time, so it holds no more than the keys of that long.
    pub fn new(store: Arc<dyn Store>, ttl: Duration) -> Self {
        // A revoke is remembered well past the time anything cached before it is trusted.
        Self {
            store,
            keys: bounded(ttl),
            sessions: bounded(ttl),
            memberships: bounded(ttl),
            revoked_keys: bounded(ttl * 4),
            revoked_sessions: bounded(ttl * 4),
            ttl_ms: i64::try_from(ttl.as_millis()).unwrap_or(i64::MAX),
        }
    }

    /// Whether an answer cached at `cached_at` is still trusted at `now_ms` (one from the
    /// future, should the clock step back, is not).
    fn fresh(&self, cached_at: i64, now_ms: i64) -> bool {
        (0..self.ttl_ms).contains(&now_ms.saturating_sub(cached_at))
    }

    /// Checks a request to the log routes: `token` as [`crate::key_from_headers`] found it (an
    /// API key or a session token), `target` the raw `X-Workspace-Id` header, `scope` what the
    /// request needs (a session's role must be `member` or above to ingest, any role to read).
    pub async fn authenticate(
        &self,
        token: Option<&str>,
        target: Option<&str>,
        scope: Scope,
        now_ms: i64,
    ) -> Result<Principal, AuthError> {
        let token = token.ok_or(AuthError::Missing)?;
        if token.starts_with(crate::secrets::SESSION_PREFIX) {
            let signed_in = self.signed_in(Some(token), now_ms).await?;
            let (workspace, role) = self.workspace_of(&signed_in, target, now_ms).await?;
            let needed = match scope {
                Scope::Ingest => Role::Member,
                Scope::Read => Role::Viewer,
            };
            if role < needed {
                return Err(AuthError::RoleDenied);
            }
            return Ok(Principal { workspace, actor: Actor::User(signed_in, role) });
        }
        let (key, workspace) = self.key(token, now_ms).await?;
        if let Some(target) = target.map(str::trim).filter(|target| !target.is_empty()) {
            self.check_key_target(&workspace, target).await?;
        }
        if !key.scopes.allows(scope) {
            return Err(AuthError::MissingScope(scope));
        }
        Ok(Principal { workspace, actor: Actor::Key(key) })
    }

    /// The active key `token` is, with its workspace.
    async fn key(&self, token: &str, now_ms: i64) -> Result<(ApiKeyRecord, Workspace), AuthError> {
        if key_env(token).is_none() {
            return Err(AuthError::Invalid);
        }
        let hash = hash_key(token);
        let verified = match self.keys.get(&hash) {
            Some((verified, cached_at)) if self.fresh(cached_at, now_ms) => verified,
            _ => {
                let verified = self.store.find_key(&hash).await?.map(Arc::new);
                self.keys.insert(hash, (verified.clone(), now_ms));
                verified
            }
        };
        let verified = verified.ok_or(AuthError::Invalid)?;
        let (key, workspace) = verified.as_ref();
        if self.revoked_keys.contains_key(&key.id) {
            return Err(AuthError::Revoked);
        }
        match key.state(now_ms) {
            KeyState::Active => Ok((key.clone(), workspace.clone())),
            KeyState::Revoked => Err(AuthError::Revoked),
            KeyState::Expired => Err(AuthError::Expired),
        }
    }

    /// A key may only target its own workspace; another existing one is forbidden, and an id
    /// of no workspace (malformed ones included) is not found.
    async fn check_key_target(&self, own: &Workspace, target: &str) -> Result<(), AuthError> {
        let Ok(target) = target.parse::<WorkspaceId>() else {
            return Err(AuthError::WorkspaceNotFound);
        };
        if target == own.id {
            return Ok(());
        }
        match self.store.get_workspace(target).await? {
            Some(_) => Err(AuthError::AccessDenied),
            None => Err(AuthError::WorkspaceNotFound),
        }
    }

    /// The signed-in user a session token stands for: for the routes only a user may call (an
    /// API key there is refused with [`AuthError::NeedsUser`]). Records the use of the session
    /// at most every [`TOUCH_EVERY_MS`].
    pub async fn signed_in(&self, token: Option<&str>, now_ms: i64) -> Result<SignedIn, AuthError> {
        let token = token.ok_or(AuthError::MissingSession)?;
        if !is_session_token(token) {
            return Err(if key_env(token).is_some() { AuthError::NeedsUser } else { AuthError::InvalidSession });
        }
        let hash = hash_secret(token);
        let found = match self.sessions.get(&hash) {
            Some((found, cached_at)) if self.fresh(cached_at, now_ms) => found,
            _ => {
                let found =
                    self.store.find_session(&hash).await?.map(|(session, user)| Arc::new(SignedIn { user, session }));
                self.sessions.insert(hash, (found.clone(), now_ms));
                found
            }
        };
        let found = found.ok_or(AuthError::InvalidSession)?;
        if found.session.revoked_at.is_some() || self.revoked_sessions.contains_key(&found.session.id) {
            return Err(AuthError::InvalidSession);
        }
        if now_ms >= found.session.expires_at() {
            return Err(AuthError::SessionExpired);
        }
        if now_ms.saturating_sub(found.session.last_used_at) < TOUCH_EVERY_MS {
            return Ok(SignedIn::clone(&found));
        }
        self.store.touch_session(found.session.id, now_ms).await?;
        let mut touched = SignedIn::clone(&found);
        touched.session.last_used_at = now_ms;
        if let Some((_, cached_at)) = self.sessions.get(&hash) {
            self.sessions.insert(hash, (Some(Arc::new(touched.clone())), cached_at));
        }
        Ok(touched)
    }

    /// The user's workspaces and roles, by name (cached like keys).
    pub async fn memberships(&self, user: UserId, now_ms: i64) -> Result<Memberships, AuthError> {
        if let Some((memberships, cached_at)) = self.memberships.get(&user)
            && self.fresh(cached_at, now_ms)
        {
            return Ok(memberships);
        }
        let memberships = Arc::new(self.store.memberships(user).await?);
        self.memberships.insert(user, (memberships.clone(), now_ms));
        Ok(memberships)
    }

    /// The workspace a signed-in user's request acts on, and their role there: the one
    /// `target` (`X-Workspace-Id`) names, else their only one, else the first by name.
    pub async fn workspace_of(
        &self,
        signed_in: &SignedIn,
        target: Option<&str>,
        now_ms: i64,
    ) -> Result<(Workspace, Role), AuthError> {
        let memberships = self.memberships(signed_in.user.id, now_ms).await?;
        let Some(target) = target.map(str::trim).filter(|target| !target.is_empty()) else {
            return memberships.first().cloned().ok_or(AuthError::NoWorkspace);
        };
        let Ok(target) = target.parse::<WorkspaceId>() else {
            return Err(AuthError::WorkspaceNotFound);
        };
        if let Some(found) = memberships.iter().find(|(workspace, _)| workspace.id == target) {
            return Ok(found.clone());
        }
        match self.store.get_workspace(target).await? {
            Some(_) => Err(AuthError::AccessDenied),
            None => Err(AuthError::WorkspaceNotFound),
        }
    }

    /// Forgets what is cached of a key this process revoked: refused here at once.
    pub fn forget_key(&self, key: KeyId) {
        self.revoked_keys.insert(key, ());
    }

    /// Forgets what is cached of a session this process revoked: refused here at once.
    pub fn forget_session(&self, session: SessionId) {
        self.revoked_sessions.insert(session, ());
    }

    /// Forgets a user's cached memberships (changed by this process).
    pub fn forget_memberships(&self, user: UserId) {
        self.memberships.invalidate(&user);
    }
}
