//! Signing in and out, and what a signed-in user sees of themselves: `POST /v1/auth/login`,
//! `POST /v1/auth/logout`, `GET /v1/me`, `GET|POST /v1/workspaces`, `GET /v1/workspace`,
//! `PUT /v1/workspace/plan`, `GET /v1/sessions`, `DELETE /v1/sessions/{sessionId}`
//! (docs/API.md, Accounts).

use actix_web::cookie::{Cookie, SameSite};
use actix_web::{HttpRequest, HttpResponse, web};
use serde_json::json;
use sluice_auth::passwords::{verify_nobody, verify_password};
use sluice_auth::secrets::{generate_session_token, hash_secret};
use sluice_model::{Limits, Plan, Role, SessionId, SessionRecord, UserId, Workspace};
use sluice_store::accounts::{MemberChange, NewSession, email_key};

use crate::extract::{InWorkspace, SESSION_COOKIE, User};
use crate::fields::Fields;
use crate::{ApiError, AppState, views};

/// The longest email and password read (RFC 5321's 320; a passphrase of 1,024).
pub(crate) const MAX_EMAIL: usize = 320;
const MAX_PASSWORD: usize = 1024;
const MAX_NAME: usize = 100;

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

/// The user's workspaces and their role in each, by name, as JSON.
async fn workspaces_json(state: &AppState, user: UserId) -> Result<Vec<serde_json::Value>, ApiError> {
    let workspaces = state.auth.memberships(user, state.now_ms()).await?;
    Ok(workspaces.iter().map(|(workspace, role)| views::membership(workspace, *role)).collect())
}

/// The user and their workspaces, as sign-in and `GET /v1/me` answer.
async fn me_json(state: &AppState, user: &sluice_model::User) -> Result<serde_json::Value, ApiError> {
    Ok(json!({"user": views::user(user), "workspaces": workspaces_json(state, user.id).await?}))
}

/// Signs in with email and password: the user, their workspaces, and the session cookie.
#[utoipa::path(post, path = "/v1/auth/login", tag = "accounts", summary = "Sign in with email and password", request_body = crate::openapi::schemas::Login, security(()),
    responses((status = 200, description = "Signed in; the session is the `sluice_session` cookie", body = crate::openapi::schemas::Me, headers(("Set-Cookie" = String, description = "sluice_session=<token>; HttpOnly; SameSite=Lax; Path=/"))), crate::openapi::Errors))]
pub(crate) async fn login(
    request: HttpRequest,
    payload: web::Payload,
    state: web::Data<AppState>,
) -> Result<HttpResponse, ApiError> {
    let mut fields = Fields::read(&request, payload, &state).await?;
    let email = fields.string("email", true, MAX_EMAIL);
    let password = fields.string("password", true, MAX_PASSWORD);
    fields.finish()?;
    let (Some(email), Some(password)) = (email, password) else { return Err(ApiError::Internal) };
    let user = check_password(&state, &email, password).await?;
    let (token, session) = new_session(user.id, "browser", state.now_ms())?;
    state.store.create_session(&session).await?;
    let body = me_json(&state, &user).await?;
    Ok(HttpResponse::Ok().cookie(session_cookie(&request, &state, token)).json(body))
}

/// Ends the session that asks, and clears the cookie.
#[utoipa::path(post, path = "/v1/auth/logout", tag = "accounts", summary = "Sign out (ends this session)",
    responses((status = 204, description = "Signed out; the cookie is cleared"), crate::openapi::Errors))]
pub(crate) async fn logout(
    User(signed_in): User,
    request: HttpRequest,
    state: web::Data<AppState>,
) -> Result<HttpResponse, ApiError> {
    let session = signed_in.session.id;
    state.store.revoke_session(signed_in.user.id, session, state.now_ms()).await?;
    state.auth.forget_session(session);
    let mut gone = session_cookie(&request, &state, String::new());
    gone.make_removal();
    Ok(HttpResponse::NoContent().cookie(gone).finish())
}

/// Who is signed in, and their workspaces.
#[utoipa::path(get, path = "/v1/me", tag = "accounts", summary = "The signed-in user and their workspaces",
    responses((status = 200, description = "The user", body = crate::openapi::schemas::Me), crate::openapi::Errors))]
pub(crate) async fn me(User(signed_in): User, state: web::Data<AppState>) -> Result<HttpResponse, ApiError> {
    Ok(HttpResponse::Ok().json(me_json(&state, &signed_in.user).await?))
}

/// The user's workspaces, by name.
#[utoipa::path(get, path = "/v1/workspaces", tag = "accounts", summary = "The user's workspaces",
    responses((status = 200, description = "By name", body = crate::openapi::schemas::Workspaces), crate::openapi::Errors))]
pub(crate) async fn workspaces(User(signed_in): User, state: web::Data<AppState>) -> Result<HttpResponse, ApiError> {
    Ok(HttpResponse::Ok().json(json!({"workspaces": workspaces_json(&state, signed_in.user.id).await?})))
}

/// Makes a workspace on the free plan; its creator is its owner.
#[utoipa::path(post, path = "/v1/workspaces", tag = "accounts", summary = "Create a workspace (the user owns it)", request_body = crate::openapi::schemas::Named,
    responses((status = 201, description = "Created", body = crate::openapi::schemas::Membership), crate::openapi::Errors))]
pub(crate) async fn create_workspace(
    User(signed_in): User,
    request: HttpRequest,
    payload: web::Payload,
    state: web::Data<AppState>,
) -> Result<HttpResponse, ApiError> {
    let mut fields = Fields::read(&request, payload, &state).await?;
    let name = fields.string("name", true, MAX_NAME);
    fields.finish()?;
    let Some(name) = name else { return Err(ApiError::Internal) };
    let now = state.now_ms();
    let workspace = Workspace::new(name.trim(), Plan::Free, now);
    state.store.create_workspace(&workspace).await?;
    let user = signed_in.user.id;
    state.store.change_member(workspace.id, user, MemberChange::Set(Role::Owner), false, now).await?;
    state.auth.forget_memberships(user);
    Ok(HttpResponse::Created().json(views::membership(&workspace, Role::Owner)))
}

/// The workspace a request acts on: plan, limits in force, this month's usage, retention.
#[utoipa::path(get, path = "/v1/workspace", tag = "accounts", summary = "The workspace: plan, limits, usage", params(("X-Workspace-Id" = Option<String>, Header, description = "The workspace (else the user's first)")),
    responses((status = 200, description = "The workspace", body = crate::openapi::schemas::WorkspaceJson), crate::openapi::Errors))]
pub(crate) async fn workspace(member: InWorkspace, state: web::Data<AppState>) -> Result<HttpResponse, ApiError> {
    // Read again: the membership cache may hold the workspace as it was a few seconds ago.
    let workspace = state.store.get_workspace(member.workspace.id).await?.unwrap_or(member.workspace);
    let workspace = &workspace;
    let now = state.now_ms();
    let month = sluice_model::calendar::month_start_ms(now);
    let used = state.store.monthly_usage(workspace.id, month).await?;
    Ok(HttpResponse::Ok().json(json!({
        "workspaceId": workspace.id.to_string(),
        "name": workspace.name,
        "plan": workspace.plan.as_str(),
        "limits": workspace.limits,
        "retentionDays": workspace.limits.retention_days,
        "usage": {"monthStart": month, "logs": used, "quota": workspace.limits.logs_per_month},
        "role": member.role.as_str(),
        "createdAt": workspace.created_at,
    })))
}

/// Puts the workspace on a plan (instance admins only): `{"plan"}` with the plan's figures,
/// or custom ones as `requestsPerMinute`, `logsPerMonth`, `retentionDays`.
#[utoipa::path(put, path = "/v1/workspace/plan", tag = "accounts", summary = "Change the workspace's plan (instance admins)", request_body = crate::openapi::schemas::SetPlan, params(("X-Workspace-Id" = Option<String>, Header, description = "The workspace")),
    responses((status = 200, description = "The plan in force", body = crate::openapi::schemas::WorkspaceJson), crate::openapi::Errors))]
pub(crate) async fn set_plan(
    member: InWorkspace,
    request: HttpRequest,
    payload: web::Payload,
    state: web::Data<AppState>,
) -> Result<HttpResponse, ApiError> {
    if !member.signed_in.user.admin {
        return Err(ApiError::Auth(sluice_auth::AuthError::RoleDenied));
    }
    let mut fields = Fields::read(&request, payload, &state).await?;
    let plan: Option<Plan> = fields.parsed("plan", true);
    let requests = fields.positive("requestsPerMinute", u64::from(u32::MAX));
    let logs = fields.positive("logsPerMonth", i64::MAX.unsigned_abs());
    let retention = fields.positive("retentionDays", 36_500);
    fields.finish()?;
    let Some(plan) = plan else { return Err(ApiError::Internal) };
    let defaults = plan.limits();
    let limits = Limits {
        requests_per_minute: requests.and_then(|value| u32::try_from(value).ok()).or(defaults.requests_per_minute),
        logs_per_month: logs.or(defaults.logs_per_month),
        retention_days: retention.and_then(|value| u32::try_from(value).ok()).unwrap_or(defaults.retention_days),
    };
    state.store.set_plan(member.workspace.id, plan, limits).await?;
    Ok(HttpResponse::Ok().json(json!({
        "workspaceId": member.workspace.id.to_string(),
        "plan": plan.as_str(),
        "limits": limits,
    })))
}

/// The user's sessions that still work, newest first.
#[utoipa::path(get, path = "/v1/sessions", tag = "accounts", summary = "The user's working sessions",
    responses((status = 200, description = "Newest first", body = crate::openapi::schemas::Sessions), crate::openapi::Errors))]
pub(crate) async fn sessions(User(signed_in): User, state: web::Data<AppState>) -> Result<HttpResponse, ApiError> {
    let now = state.now_ms();
    let sessions = state.store.sessions(signed_in.user.id).await?;
    let sessions: Vec<_> = sessions
        .iter()
        .filter(|session| session.expires_at() > now)
        .map(|session| views::session(session, session.id == signed_in.session.id))
        .collect();
    Ok(HttpResponse::Ok().json(json!({"sessions": sessions})))
}

/// Ends one of the user's sessions (on every node within 5 s, here at once).
#[utoipa::path(delete, path = "/v1/sessions/{sessionId}", tag = "accounts", summary = "End one of the user's sessions", params(("sessionId" = String, Path, description = "The session")),
    responses((status = 204, description = "Ended"), crate::openapi::Errors))]
pub(crate) async fn revoke_session(
    User(signed_in): User,
    path: web::Path<String>,
    state: web::Data<AppState>,
) -> Result<HttpResponse, ApiError> {
    let id: SessionId = path.parse().map_err(|_| ApiError::NotFound("Session not found"))?;
    match state.store.revoke_session(signed_in.user.id, id, state.now_ms()).await {
        Err(sluice_store::StoreError::NotFound(_)) => return Err(ApiError::NotFound("Session not found")),
        other => other?,
    }
    state.auth.forget_session(id);
    Ok(HttpResponse::NoContent().finish())
}
