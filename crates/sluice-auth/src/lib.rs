//! API keys: their text format, generation, hashing, and the check every request goes through.
//!
//! A key is `slc_live_<32 base62>` or `slc_test_<32 base62>`, drawn from the operating
//! system's CSPRNG. Only its BLAKE3 hash is stored. [`Authenticator`] turns the headers of a
//! request into the workspace it may act on, or the exact error docs/API.md (Authentication)
//! names, in this order: key present, key well-formed, key known, key active, workspace
//! targeted, scope held.
//!
//! Invariant: a key's text is never stored or logged, only its hash; the crate reaches the
//! database only through the store traits.
//!
//! Verified keys are cached (moka) for [`CACHE_TTL`], so a revoke or plan change made by any
//! process is seen everywhere within 5 seconds; expiry is checked against the clock on every
//! request, so it takes effect at once.

use std::sync::Arc;
use std::time::Duration;

use moka::sync::Cache;
use sluice_model::{ApiKeyRecord, KeyEnv, KeyState, Scope, Workspace, WorkspaceId};
use sluice_store::{Store, StoreError};

/// The fixed service prefix of every key.
pub const KEY_PREFIX: &str = "slc";

/// Length of the random part of a key.
pub const RANDOM_CHARS: usize = 32;

/// How long a verified (or unknown) key is trusted without asking the store again.
/// Below the 5 seconds of docs/API.md (Authentication), leaving room for the request in flight.
pub const CACHE_TTL: Duration = Duration::from_secs(4);

const BASE62: &[u8; 62] = b"0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz";

/// A freshly generated key: its text (shown once) and the hash to store.
#[derive(Clone, PartialEq, Eq)]
pub struct GeneratedKey {
    /// The key as the client will send it.
    pub text: String,
    /// BLAKE3 of `text`.
    pub hash: [u8; 32],
}

impl std::fmt::Debug for GeneratedKey {
    /// Never prints the secret.
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("GeneratedKey").field("text", &"<secret>").finish_non_exhaustive()
    }
}

/// Draws a new key for `env` from the OS CSPRNG.
///
/// ```
/// let key = sluice_auth::generate_key(sluice_model::KeyEnv::Test).unwrap();
/// assert!(key.text.starts_with("slc_test_"));
/// assert_eq!(sluice_auth::key_env(&key.text), Some(sluice_model::KeyEnv::Test));
/// assert_eq!(sluice_auth::hash_key(&key.text), key.hash);
/// ```
pub fn generate_key(env: KeyEnv) -> Result<GeneratedKey, getrandom::Error> {
    let mut text = format!("{KEY_PREFIX}_{}_", env.as_str());
    let mut chars = 0;
    let mut pool = [0u8; 64];
    while chars < RANDOM_CHARS {
        getrandom::fill(&mut pool)?;
        // Rejection sampling: 248 = 4 × 62, so every accepted byte maps to a uniform digit.
        for byte in pool.iter().filter(|byte| **byte < 248).take(RANDOM_CHARS - chars) {
            text.push(char::from(BASE62[usize::from(byte % 62)]));
            chars += 1;
        }
    }
    let hash = hash_key(&text);
    Ok(GeneratedKey { text, hash })
}

/// BLAKE3 of a key's text: what the store keeps and looks keys up by.
pub fn hash_key(text: &str) -> [u8; 32] {
    *blake3::hash(text.as_bytes()).as_bytes()
}

/// The environment of a well-formed key; `None` for anything not of the key shape, which is
/// rejected without touching the store.
pub fn key_env(text: &str) -> Option<KeyEnv> {
    let rest = text.strip_prefix(KEY_PREFIX)?.strip_prefix('_')?;
    let (env, random) = rest.split_once('_')?;
    let env = match env {
        "live" => KeyEnv::Live,
        "test" => KeyEnv::Test,
        _ => return None,
    };
    (random.len() == RANDOM_CHARS && random.bytes().all(|byte| byte.is_ascii_alphanumeric())).then_some(env)
}

/// The key a request carries: `Authorization: Bearer <key>`, else `X-API-Key: <key>`.
/// `None` when neither holds anything. An `Authorization` of another scheme is used only when
/// there is no `X-API-Key`, and then fails the shape check as an invalid key.
pub fn key_from_headers<'a>(authorization: Option<&'a str>, x_api_key: Option<&'a str>) -> Option<&'a str> {
    let authorization = authorization.map(str::trim).filter(|value| !value.is_empty());
    let (bearer, other) = match authorization.map(|value| (value, value.split_once(' '))) {
        Some((_, Some((scheme, token)))) if scheme.eq_ignore_ascii_case("bearer") => (Some(token.trim()), None),
        // `Bearer` with nothing after it (proxies trim the trailing space) carries no key.
        Some((value, None)) if value.eq_ignore_ascii_case("bearer") => (None, None),
        Some((value, _)) => (None, Some(value)),
        None => (None, None),
    };
    let api_key = x_api_key.map(str::trim).filter(|value| !value.is_empty());
    bearer.filter(|token| !token.is_empty()).or(api_key).or(other)
}

/// Why a request is not allowed; `Display` is the exact message of docs/API.md (Authentication).
#[derive(Debug, thiserror::Error)]
pub enum AuthError {
    /// No key header.
    #[error("Missing API key")]
    Missing,
    /// Malformed or unknown key.
    #[error("Invalid API key")]
    Invalid,
    /// The key was revoked.
    #[error("API key has been revoked")]
    Revoked,
    /// The key is past its expiry.
    #[error("API key has expired")]
    Expired,
    /// The targeted workspace exists but is not the key's.
    #[error("Access denied to workspace")]
    AccessDenied,
    /// The targeted workspace does not exist.
    #[error("Workspace not found")]
    WorkspaceNotFound,
    /// The key lacks the scope the request needs.
    #[error("API key lacks the {} scope", .0.as_str())]
    MissingScope(Scope),
    /// The store could not answer.
    #[error(transparent)]
    Store(#[from] StoreError),
}

/// What a request may act on once authenticated.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Principal {
    /// The key that was presented.
    pub key: ApiKeyRecord,
    /// The workspace the request acts on (the key's own).
    pub workspace: Workspace,
}

type Verified = Option<Arc<Principal>>;

/// Checks keys against the store, with a short-lived cache of what it found.
#[derive(Clone)]
pub struct Authenticator {
    store: Arc<dyn Store>,
    /// What the store answered for a key hash, and when (the request clock's Unix ms).
    keys: Cache<[u8; 32], (Verified, i64)>,
    /// How long an answer is trusted, in ms of the request clock.
    ttl_ms: i64,
}

impl std::fmt::Debug for Authenticator {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Authenticator").field("cached_keys", &self.keys.entry_count()).finish_non_exhaustive()
    }
}

impl Authenticator {
    /// An authenticator over `store` whose cache trusts an answer for `ttl`, measured on the
    /// clock requests are checked with (`now_ms`); the cache also lets entries go after `ttl`
    /// of wall time, so it holds no more than the keys of that long.
    pub fn new(store: Arc<dyn Store>, ttl: Duration) -> Self {
        let keys = Cache::builder().max_capacity(100_000).time_to_live(ttl).build();
        Self { store, keys, ttl_ms: i64::try_from(ttl.as_millis()).unwrap_or(i64::MAX) }
    }

    /// Checks a request: `key` as [`key_from_headers`] found it, `target` the raw
    /// `X-Workspace-Id` header, `scope` what the request needs, `now_ms` the clock.
    pub async fn authenticate(
        &self,
        key: Option<&str>,
        target: Option<&str>,
        scope: Scope,
        now_ms: i64,
    ) -> Result<Principal, AuthError> {
        let key = key.ok_or(AuthError::Missing)?;
        if key_env(key).is_none() {
            return Err(AuthError::Invalid);
        }
        let hash = hash_key(key);
        // An answer older than the time to live on the request clock (or from its future,
        // should the clock step back) is asked again.
        let fresh = |cached_at: i64| (0..self.ttl_ms).contains(&now_ms.saturating_sub(cached_at));
        let verified = match self.keys.get(&hash) {
            Some((verified, cached_at)) if fresh(cached_at) => verified,
            _ => {
                let found = self.store.find_key(&hash).await?;
                let verified = found.map(|(key, workspace)| Arc::new(Principal { key, workspace }));
                self.keys.insert(hash, (verified.clone(), now_ms));
                verified
            }
        };
        let principal = verified.ok_or(AuthError::Invalid)?;
        match principal.key.state(now_ms) {
            KeyState::Active => {}
            KeyState::Revoked => return Err(AuthError::Revoked),
            KeyState::Expired => return Err(AuthError::Expired),
        }
        if let Some(target) = target.map(str::trim).filter(|target| !target.is_empty()) {
            self.check_target(&principal, target).await?;
        }
        if !principal.key.scopes.allows(scope) {
            return Err(AuthError::MissingScope(scope));
        }
        Ok(Principal::clone(&principal))
    }

    /// A key may only target its own workspace; another existing one is forbidden, and an id
    /// of no workspace (malformed ones included) is not found.
    async fn check_target(&self, principal: &Principal, target: &str) -> Result<(), AuthError> {
        let Ok(target) = target.parse::<WorkspaceId>() else {
            return Err(AuthError::WorkspaceNotFound);
        };
        if target == principal.workspace.id {
            return Ok(());
        }
        match self.store.get_workspace(target).await? {
            Some(_) => Err(AuthError::AccessDenied),
            None => Err(AuthError::WorkspaceNotFound),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn generated_keys_have_the_decided_shape() {
        for env in [KeyEnv::Live, KeyEnv::Test] {
            let key = generate_key(env).expect("csprng");
            let prefix = format!("slc_{}_", env.as_str());
            assert!(key.text.starts_with(&prefix));
            assert_eq!(key.text.len(), prefix.len() + RANDOM_CHARS);
            assert_eq!(key_env(&key.text), Some(env));
        }
        let first = generate_key(KeyEnv::Live).expect("csprng");
        let second = generate_key(KeyEnv::Live).expect("csprng");
        assert_ne!(first.text, second.text);
    }

    #[test]
    fn malformed_keys_are_recognised_without_a_lookup() {
        let good = "slc_live_0123456789abcdefghijABCDEFGHIJ01";
        assert_eq!(key_env(good), Some(KeyEnv::Live));
        for bad in [
            "",
            "slc_live_",
            "slc_prod_0123456789abcdefghijABCDEFGHIJ01",
            "sk_live_0123456789abcdefghijABCDEFGHIJ01",
            "slc_live_0123456789abcdefghijABCDEFGHIJ0",
            "slc_live_0123456789abcdefghijABCDEFGHIJ012",
            "slc_live_0123456789abcdefghijABCDEFGHI-01",
            "slc_live_0123456789abcdefghijABCDEFGHIJ0é",
        ] {
            assert_eq!(key_env(bad), None, "{bad:?}");
        }
    }

    #[test]
    fn headers_prefer_bearer_then_x_api_key() {
        assert_eq!(key_from_headers(Some("Bearer abc"), Some("def")), Some("abc"));
        assert_eq!(key_from_headers(Some("bearer  abc "), None), Some("abc"));
        assert_eq!(key_from_headers(None, Some(" def ")), Some("def"));
        assert_eq!(key_from_headers(Some("Basic xyz"), None), Some("Basic xyz"));
        assert_eq!(key_from_headers(Some("Basic xyz"), Some("def")), Some("def"));
        assert_eq!(key_from_headers(Some(""), Some("")), None);
        assert_eq!(key_from_headers(Some("Bearer"), None), None);
        assert_eq!(key_from_headers(Some("Bearer "), Some("def")), Some("def"));
        assert_eq!(key_from_headers(None, None), None);
    }

    #[test]
    fn hashing_is_blake3() {
        assert_eq!(hash_key("abc"), *blake3::hash(b"abc").as_bytes());
    }
}
