//! The extractors that authenticate a request: [`Authed`] for the log routes (an API key or a
//! session), [`User`] and [`InWorkspace`] for the routes only a signed-in user may call.
//!
//! A request's credential is `Authorization: Bearer`, else `X-API-Key`, else the session
//! cookie. A request that changes state with the cookie alone must show it comes from this
//! site ([`same_site`]): a page elsewhere can make a browser send the cookie, never a header.

use std::future::Future;
use std::pin::Pin;

use actix_web::http::Method;
use actix_web::{FromRequest, HttpRequest, dev::Payload, web};
use sluice_auth::{AuthError, Principal, SignedIn, key_from_headers};
use sluice_model::{Role, Scope, Workspace};

use crate::{ApiError, AppState};

/// The session cookie's name.
pub const SESSION_COOKIE: &str = "sluice_session";

/// An authenticated request to a log route: the key or session and the workspace it may act
/// on. With a key, `POST` needs the `ingest` scope and every other method `read`; with a
/// session, `POST` needs the role `member` and reading any role.
#[derive(Debug, Clone)]
pub struct Authed(pub Principal);

/// A signed-in user (a session, by bearer token or cookie); an API key is refused.
#[derive(Debug, Clone)]
pub struct User(pub SignedIn);

/// A signed-in user acting on a workspace they are a member of, with their role there.
#[derive(Debug, Clone)]
pub struct InWorkspace {
    /// Who.
    pub signed_in: SignedIn,
    /// The workspace `X-Workspace-Id` names, else the user's first.
    pub workspace: Workspace,
    /// Their role in it.
    pub role: Role,
}

impl InWorkspace {
    /// Refuses with 403 `Your role does not allow this` below `needed`.
    pub fn require(&self, needed: Role) -> Result<(), ApiError> {
        if self.role < needed { Err(ApiError::Auth(AuthError::RoleDenied)) } else { Ok(()) }
    }
}

/// The scope a key needs for `method`: `ingest` to `POST`, `read` for everything else (the
/// route table's [`crate::Route::scope`] says the same).
pub(crate) fn scope_for(method: &Method) -> Scope {
    if method == Method::POST { Scope::Ingest } else { Scope::Read }
}

fn header(request: &HttpRequest, name: &str) -> Option<String> {
    request.headers().get(name).map(|value| String::from_utf8_lossy(value.as_bytes()).into_owned())
}

/// The credential a request carries, and whether it came by cookie alone.
fn credential(request: &HttpRequest) -> (Option<String>, bool) {
    let authorization = header(request, "authorization");
    let x_api_key = header(request, "x-api-key");
    if let Some(token) = key_from_headers(authorization.as_deref(), x_api_key.as_deref()) {
        return (Some(token.to_owned()), false);
    }
    let cookie =
        request.cookie(SESSION_COOKIE).map(|cookie| cookie.value().to_owned()).filter(|value| !value.is_empty());
    let by_cookie = cookie.is_some();
    (cookie, by_cookie)
}

/// Whether a request comes from this site: a method that changes nothing, the header
/// `X-Requested-With: sluice` (which a page elsewhere cannot set without our consent), or an
/// `Origin` whose host is the request's `Host`.
pub(crate) fn same_site(request: &HttpRequest) -> bool {
    if matches!(*request.method(), Method::GET | Method::HEAD | Method::OPTIONS) {
        return true;
    }
    if header(request, "x-requested-with").is_some_and(|value| value.trim().eq_ignore_ascii_case("sluice")) {
        return true;
    }
    let (Some(origin), Some(host)) = (header(request, "origin"), header(request, "host")) else {
        return false;
    };
    let origin_host = origin.split_once("://").map_or("", |(_, rest)| rest).trim_end_matches('/');
    !origin_host.is_empty() && origin_host.eq_ignore_ascii_case(host.trim())
}

/// What every extractor starts with: the state, the credential, and the cross-site rule.
fn checked(request: &HttpRequest) -> Result<(web::Data<AppState>, Option<String>), ApiError> {
    let state = request.app_data::<web::Data<AppState>>().cloned().ok_or(ApiError::Internal)?;
    let (token, by_cookie) = credential(request);
    if by_cookie && !same_site(request) {
        return Err(ApiError::Auth(AuthError::CrossSite));
    }
    Ok((state, token))
}

impl FromRequest for Authed {
    type Error = ApiError;
    type Future = Pin<Box<dyn Future<Output = Result<Self, ApiError>>>>;

    fn from_request(request: &HttpRequest, _: &mut Payload) -> Self::Future {
        let checked = checked(request);
        let target = header(request, "x-workspace-id");
        let scope = scope_for(request.method());
        Box::pin(async move {
            let (state, token) = checked?;
            let principal = state.auth.authenticate(token.as_deref(), target.as_deref(), scope, state.now_ms()).await?;
            Ok(Authed(principal))
        })
    }
}

impl FromRequest for User {
    type Error = ApiError;
    type Future = Pin<Box<dyn Future<Output = Result<Self, ApiError>>>>;

    fn from_request(request: &HttpRequest, _: &mut Payload) -> Self::Future {
        let checked = checked(request);
        Box::pin(async move {
            let (state, token) = checked?;
            Ok(User(state.auth.signed_in(token.as_deref(), state.now_ms()).await?))
        })
    }
}

impl FromRequest for InWorkspace {
    type Error = ApiError;
    type Future = Pin<Box<dyn Future<Output = Result<Self, ApiError>>>>;

    fn from_request(request: &HttpRequest, _: &mut Payload) -> Self::Future {
        let checked = checked(request);
        let target = header(request, "x-workspace-id");
        Box::pin(async move {
            let (state, token) = checked?;
            let now = state.now_ms();
            let signed_in = state.auth.signed_in(token.as_deref(), now).await?;
            let (workspace, role) = state.auth.workspace_of(&signed_in, target.as_deref(), now).await?;
            Ok(InWorkspace { signed_in, workspace, role })
        })
    }
}
