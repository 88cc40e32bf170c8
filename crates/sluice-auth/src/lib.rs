//! Who is asking: API keys and signed-in users' sessions, their text formats, generation and
//! hashing, passwords, sign-in throttling, and the check every request goes through.
//!
//! A key is `slc_live_<32 base62>` or `slc_test_<32 base62>`, drawn from the operating
//! system's CSPRNG. Only its BLAKE3 hash is stored. [`Authenticator`] turns the headers of a
//! request into the workspace it may act on, or the exact error docs/API.md (Authentication)
//! names, in this order: key present, key well-formed, key known, key active, workspace
//! targeted, scope held.
//!
//! A session token (`slc_sess_<32 base62>`) takes the same path ([`secrets`]): found by its
//! BLAKE3 hash, then the user's role in the targeted workspace must allow the request.
//!
//! Invariant: a key's, a session's or a device code's text is never stored or logged, only its
//! hash, and a password only as its Argon2id hash ([`passwords`]); the crate reaches the
//! database only through the store traits.
//!
//! Verified keys are cached (moka) for [`CACHE_TTL`], so a revoke or plan change made by any
//! process is seen everywhere within 5 seconds; expiry is checked against the clock on every
//! request, so it takes effect at once.

mod authenticator;
pub mod passwords;
pub mod secrets;
pub mod throttle;

use std::time::Duration;

pub use authenticator::{Actor, Authenticator, Memberships, Principal, SignedIn, TOUCH_EVERY_MS};
use sluice_model::{KeyEnv, Scope};
pub use sluice_store::StoreError;

/// The fixed service prefix of every key.
pub const KEY_PREFIX: &str = "slc";

/// Length of the random part of a key.
pub const RANDOM_CHARS: usize = 32;

/// How long a verified (or unknown) key or session is trusted without asking the store again.
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

/// A new key of `workspace` made at `now_ms`, its text (shown once) and what the store keeps;
/// `expires_in` seconds from now (`None` never expires, as does one too far to count).
pub fn mint_key(
    workspace: sluice_model::WorkspaceId,
    env: KeyEnv,
    name: Option<String>,
    scopes: sluice_model::Scopes,
    expires_in: Option<u64>,
    now_ms: i64,
) -> Result<(String, sluice_store::NewApiKey), getrandom::Error> {
    let generated = generate_key(env)?;
    let expires_at = expires_in
        .and_then(|seconds| i64::try_from(seconds).ok())
        .and_then(|seconds| seconds.checked_mul(1000))
        .and_then(|ms| now_ms.checked_add(ms));
    let record = sluice_model::ApiKeyRecord {
        id: sluice_model::KeyId::generate(),
        workspace_id: workspace,
        name,
        env,
        scopes,
        created_at: now_ms,
        expires_at,
        revoked_at: None,
    };
    Ok((generated.text, sluice_store::NewApiKey { record, hash: generated.hash }))
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
    /// A route for signed-in users met no credential at all.
    #[error("Missing session")]
    MissingSession,
    /// Malformed, unknown or revoked session token.
    #[error("Invalid session")]
    InvalidSession,
    /// The session went unused for 30 days.
    #[error("Session has expired")]
    SessionExpired,
    /// A signed-in user who is a member of no workspace.
    #[error("User has no workspace")]
    NoWorkspace,
    /// The user's role in the workspace does not allow the request.
    #[error("Your role does not allow this")]
    RoleDenied,
    /// An API key on a route for signed-in users.
    #[error("This endpoint needs a signed-in user")]
    NeedsUser,
    /// A request that changes state, authenticated by cookie alone, from another site.
    #[error("Cross-site request refused")]
    CrossSite,
    /// The store could not answer.
    #[error(transparent)]
    Store(#[from] StoreError),
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
