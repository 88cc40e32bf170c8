//! Signing in and out, and what a signed-in user sees of themselves: `POST /v1/auth/login`,
//! `POST /v1/auth/logout`, `GET /v1/me`, `GET|POST /v1/workspaces`, `GET /v1/workspace`,
//! `PUT /v1/workspace/plan`, `GET /v1/sessions`, `DELETE /v1/sessions/{sessionId}`
//! (docs/API.md, Accounts).

use actix_web::{HttpRequest, HttpResponse, web};
use sluice_model::{Limits, Plan, Role, SessionId, UserId, Workspace};
use sluice_store::accounts::MemberChange;

use crate::extract::{InWorkspace, User};
use crate::fields::{Fields, FromFields};
use crate::routes::session::{MAX_EMAIL, MAX_PASSWORD, check_password, new_session, session_cookie};
use crate::{ApiError, AppState, views};

/// The longest workspace name.
const MAX_NAME: usize = 100;

impl FromFields for sluice_api::Login {
    fn from_fields(fields: &mut Fields) -> Option<Self> {
        let email = fields.string("email", true, MAX_EMAIL);
        let password = fields.string("password", true, MAX_PASSWORD);
        Some(sluice_api::Login { email: email?, password: password? })
    }
}

impl FromFields for sluice_api::NewWorkspace {
    fn from_fields(fields: &mut Fields) -> Option<Self> {
        Some(sluice_api::NewWorkspace { name: fields.string("name", true, MAX_NAME)? })
    }
}

impl FromFields for sluice_api::SetPlan {
    fn from_fields(fields: &mut Fields) -> Option<Self> {
        let plan: Option<Plan> = fields.parsed("plan", true);
        let requests = fields.positive("requestsPerMinute", u64::from(u32::MAX));
        let logs = fields.positive("logsPerMonth", i64::MAX.unsigned_abs());
        let retention = fields.positive("retentionDays", 36_500);
        Some(sluice_api::SetPlan {
            plan: plan?.as_str().to_owned(),
            requests_per_minute: requests.and_then(|value| u32::try_from(value).ok()),
            logs_per_month: logs,
            retention_days: retention.and_then(|value| u32::try_from(value).ok()),
        })
    }
}

/// The user's workspaces and their role in each, by name.
async fn memberships(state: &AppState, user: UserId) -> Result<Vec<sluice_api::Membership>, ApiError> {
    let workspaces = state.auth.memberships(user, state.now_ms()).await?;
    Ok(workspaces.iter().map(|(workspace, role)| views::membership(workspace, *role)).collect())
}

/// The user and their workspaces, as sign-in and `GET /v1/me` answer.
async fn me_of(state: &AppState, user: &sluice_model::User) -> Result<sluice_api::Me, ApiError> {
    Ok(sluice_api::Me { user: views::user(user), workspaces: memberships(state, user.id).await? })
}

/// Signs in with email and password: the user, their workspaces, and the session cookie.
#[utoipa::path(post, path = "/v1/auth/login", tag = "accounts", summary = "Sign in with email and password", request_body = sluice_api::Login, security(()),
    responses((status = 200, description = "Signed in; the session is the `sluice_session` cookie", body = sluice_api::Me, headers(("Set-Cookie" = String, description = "sluice_session=<token>; HttpOnly; SameSite=Lax; Path=/"))), crate::error::Errors))]
pub(crate) async fn login(
    request: HttpRequest,
    payload: web::Payload,
    state: web::Data<AppState>,
) -> Result<HttpResponse, ApiError> {
    let login: sluice_api::Login = Fields::read_as(&request, payload, &state).await?;
    let user = check_password(&state, &login.email, login.password).await?;
    let (token, session) = new_session(user.id, "browser", state.now_ms())?;
    state.store.create_session(&session).await?;
    let body = me_of(&state, &user).await?;
    Ok(HttpResponse::Ok().cookie(session_cookie(&request, &state, token)).json(body))
}

/// Ends the session that asks, and clears the cookie.
#[utoipa::path(post, path = "/v1/auth/logout", tag = "accounts", summary = "Sign out (ends this session)",
    responses((status = 204, description = "Signed out; the cookie is cleared"), crate::error::Errors))]
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
    responses((status = 200, description = "The user", body = sluice_api::Me), crate::error::Errors))]
pub(crate) async fn me(User(signed_in): User, state: web::Data<AppState>) -> Result<HttpResponse, ApiError> {
    Ok(HttpResponse::Ok().json(me_of(&state, &signed_in.user).await?))
}

/// The user's workspaces, by name.
#[utoipa::path(get, path = "/v1/workspaces", tag = "accounts", summary = "The user's workspaces",
    responses((status = 200, description = "By name", body = sluice_api::Workspaces), crate::error::Errors))]
pub(crate) async fn workspaces(User(signed_in): User, state: web::Data<AppState>) -> Result<HttpResponse, ApiError> {
    Ok(HttpResponse::Ok().json(sluice_api::Workspaces { workspaces: memberships(&state, signed_in.user.id).await? }))
}

/// Makes a workspace on the free plan; its creator is its owner.
#[utoipa::path(post, path = "/v1/workspaces", tag = "accounts", summary = "Create a workspace (the user owns it)", request_body = sluice_api::NewWorkspace,
    responses((status = 201, description = "Created", body = sluice_api::Membership), crate::error::Errors))]
pub(crate) async fn create_workspace(
    User(signed_in): User,
    request: HttpRequest,
    payload: web::Payload,
    state: web::Data<AppState>,
) -> Result<HttpResponse, ApiError> {
    let new: sluice_api::NewWorkspace = Fields::read_as(&request, payload, &state).await?;
    let now = state.now_ms();
    let workspace = Workspace::new(new.name.trim(), Plan::Free, now);
    state.store.create_workspace(&workspace).await?;
    let user = signed_in.user.id;
    state.store.change_member(workspace.id, user, MemberChange::Set(Role::Owner), false, now).await?;
    state.auth.forget_memberships(user);
    Ok(HttpResponse::Created().json(views::membership(&workspace, Role::Owner)))
}

/// The workspace a request acts on: plan, limits in force, this month's usage, retention.
#[utoipa::path(get, path = "/v1/workspace", tag = "accounts", summary = "The workspace: plan, limits, usage", params(("X-Workspace-Id" = Option<String>, Header, description = "The workspace (else the user's first)")),
    responses((status = 200, description = "The workspace", body = sluice_api::WorkspaceInfo), crate::error::Errors))]
pub(crate) async fn workspace(member: InWorkspace, state: web::Data<AppState>) -> Result<HttpResponse, ApiError> {
    // Read again: the membership cache may hold the workspace as it was a few seconds ago.
    let workspace = state.store.get_workspace(member.workspace.id).await?.unwrap_or(member.workspace);
    let workspace = &workspace;
    let now = state.now_ms();
    let month = sluice_model::calendar::month_start_ms(now);
    let used = state.store.monthly_usage(workspace.id, month).await?;
    Ok(HttpResponse::Ok().json(sluice_api::WorkspaceInfo {
        workspace_id: workspace.id.to_string(),
        name: workspace.name.clone(),
        plan: workspace.plan.as_str().to_owned(),
        limits: workspace.limits,
        retention_days: workspace.limits.retention_days,
        usage: sluice_api::Usage { month_start: month, logs: used, quota: workspace.limits.logs_per_month },
        role: member.role.as_str().to_owned(),
        created_at: workspace.created_at,
    }))
}

/// Puts the workspace on a plan (instance admins only): `{"plan"}` with the plan's figures,
/// or custom ones as `requestsPerMinute`, `logsPerMonth`, `retentionDays`.
#[utoipa::path(put, path = "/v1/workspace/plan", tag = "accounts", summary = "Change the workspace's plan (instance admins)", request_body = sluice_api::SetPlan, params(("X-Workspace-Id" = Option<String>, Header, description = "The workspace")),
    responses((status = 200, description = "The plan in force", body = sluice_api::PlanSet), crate::error::Errors))]
pub(crate) async fn set_plan(
    member: InWorkspace,
    request: HttpRequest,
    payload: web::Payload,
    state: web::Data<AppState>,
) -> Result<HttpResponse, ApiError> {
    if !member.signed_in.user.admin {
        return Err(ApiError::Auth(sluice_auth::AuthError::RoleDenied));
    }
    let asked: sluice_api::SetPlan = Fields::read_as(&request, payload, &state).await?;
    let plan: Plan = asked.plan.parse().map_err(|_| ApiError::Internal)?;
    let defaults = plan.limits();
    let limits = Limits {
        requests_per_minute: asked.requests_per_minute.or(defaults.requests_per_minute),
        logs_per_month: asked.logs_per_month.or(defaults.logs_per_month),
        retention_days: asked.retention_days.unwrap_or(defaults.retention_days),
    };
    state.store.set_plan(member.workspace.id, plan, limits).await?;
    Ok(HttpResponse::Ok().json(sluice_api::PlanSet {
        workspace_id: member.workspace.id.to_string(),
        plan: plan.as_str().to_owned(),
        limits,
    }))
}

/// The user's sessions that still work, newest first.
#[utoipa::path(get, path = "/v1/sessions", tag = "accounts", summary = "The user's working sessions",
    responses((status = 200, description = "Newest first", body = sluice_api::Sessions), crate::error::Errors))]
pub(crate) async fn sessions(User(signed_in): User, state: web::Data<AppState>) -> Result<HttpResponse, ApiError> {
    let now = state.now_ms();
    let sessions = state.store.sessions(signed_in.user.id).await?;
    let sessions = sessions
        .iter()
        .filter(|session| session.expires_at() > now)
        .map(|session| views::session(session, session.id == signed_in.session.id))
        .collect();
    Ok(HttpResponse::Ok().json(sluice_api::Sessions { sessions }))
}

/// Ends one of the user's sessions (on every node within 5 s, here at once).
#[utoipa::path(delete, path = "/v1/sessions/{sessionId}", tag = "accounts", summary = "End one of the user's sessions", params(("sessionId" = String, Path, description = "The session")),
    responses((status = 204, description = "Ended"), crate::error::Errors))]
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
