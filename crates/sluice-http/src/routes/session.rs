//! Sessions as the sign-in routes make them (`POST /v1/auth/login`, the device page's form):
//! the password check with its throttle, a new session and its cookie.

use actix_web::cookie::{Cookie, SameSite};
use actix_web::{HttpRequest, web};
use sluice_auth::passwords::{verify_nobody, verify_password};
use sluice_auth::secrets::{generate_session_token, hash_secret};
use sluice_model::{SessionId, SessionRecord, UserId};
use sluice_store::accounts::{NewSession, email_key};

use crate::extract::SESSION_COOKIE;
use crate::{ApiError, AppState};

/// The longest email and password read (RFC 5321's 320; a passphrase of 1,024).
pub(crate) const MAX_EMAIL: usize = 320;
pub(crate) const MAX_PASSWORD: usize = 1024;

/// A new session for `user`: its token (shown once) and what the store keeps.
pub(crate) fn new_session(user: UserId, client: &str, now_ms: i64) -> Result<(String, NewSession), ApiError> {
    let token = generate_session_token().map_err(|_| ApiError::Internal)?;
    let record = SessionRecord {
        id: SessionId::generate(),
        user_id: user,
        client: client.to_owned(),
        created_at: now_ms,
        last_used_at: now_ms,
        revoked_at: None,
    };
    let hash = hash_secret(&token);
    Ok((token, NewSession { record, hash }))
}

/// The session cookie: HttpOnly, SameSite=Lax, Path=/, Secure over TLS (docs/API.md).
pub(crate) fn session_cookie(request: &HttpRequest, state: &AppState, token: String) -> Cookie<'static> {
    let secure = state.origins.is_https(request.peer_addr(), request.headers());
    Cookie::build(SESSION_COOKIE, token)
        .http_only(true)
        .same_site(SameSite::Lax)
        .path("/")
        .secure(secure)
        .max_age(time::Duration::days(30))
        .finish()
}

/// The email and password a sign-in body or form gives, checked: the user, or 401 (the same
/// answer, after about the same time, for an unknown email and a wrong password), or 429 after
/// too many failures.
pub(crate) async fn check_password(
    state: &AppState,
    email: &str,
    password: String,
) -> Result<sluice_model::User, ApiError> {
    let now = state.now_ms();
    let key = email_key(email);
    state.throttle.check(&key, now).map_err(|retry_after| ApiError::TooManySignIns { retry_after })?;
    let found = state.store.find_user_by_email(email).await?;
    // Argon2id takes tens of milliseconds of CPU: off the worker thread.
    let verified = web::block(move || match found {
        Some((user, hash)) => verify_password(&password, &hash).then_some(user),
        None => {
            verify_nobody(&password);
            None
        }
    })
    .await
    .map_err(|_| ApiError::Internal)?;
    verified.ok_or_else(|| {
        state.throttle.fail(&key, now);
        ApiError::BadSignIn
    })
}
