//! Device sign-in (RFC 8628): `POST /oauth/device/code`, `POST /oauth/token`, and the page
//! where a signed-in person approves or denies, `GET|POST /device`, with its API
//! `POST /v1/device/approve|deny` (docs/API.md, "Device sign-in").

use actix_web::http::header;
use actix_web::{HttpRequest, HttpResponse, web};
use askama::Template;
use serde::Deserialize;
use sluice_auth::secrets::{
    display_user_code, generate_device_code, generate_session_token, generate_user_code, hash_secret,
    normalize_user_code,
};
use sluice_model::{DeviceGrant, DeviceState, SESSION_IDLE_MS, SessionId};
use sluice_store::StoreError;
use sluice_store::accounts::{DevicePoll, NewDeviceCode, SessionSeed};

use crate::extract::{SESSION_COOKIE, User, same_site};
use crate::fields::{Fields, FromFields};
use crate::routes::session::{check_password, new_session, session_cookie};
use crate::{ApiError, AppState, body};

/// The one client that signs in this way.
pub const CLIENT_ID: &str = "sluice-cli";

/// The grant type of a device's poll.
pub const DEVICE_GRANT: &str = "urn:ietf:params:oauth:grant-type:device_code";

/// How long a device code lives, and the least seconds between polls at first.
pub const EXPIRES_IN_S: i64 = 600;
/// See [`EXPIRES_IN_S`].
pub const INTERVAL_S: u32 = 5;

/// The largest form these routes read.
const MAX_FORM: usize = 4 * 1024;

/// An OAuth error answer: 400 `{"error": code}` (RFC 6749, 5.2), never cached.
fn oauth_error(code: &str) -> HttpResponse {
    HttpResponse::BadRequest().insert_header((header::CACHE_CONTROL, "no-store")).json(sluice_api::TokenAnswer {
        access_token: None,
        token_type: None,
        expires_in: None,
        error: Some(code.to_owned()),
    })
}

#[derive(Deserialize, Default)]
struct CodeForm {
    client_id: Option<String>,
    scope: Option<String>,
}

#[derive(Deserialize, Default)]
struct TokenForm {
    grant_type: Option<String>,
    device_code: Option<String>,
    client_id: Option<String>,
}

/// Reads a form body; `None` when it is not one.
async fn form<T: for<'de> Deserialize<'de>>(
    request: &HttpRequest,
    payload: web::Payload,
    state: &AppState,
) -> Result<Option<T>, ApiError> {
    let bytes = body::read_capped(payload, request.headers(), MAX_FORM, state.body_timeout).await?;
    Ok(serde_urlencoded::from_bytes(&bytes).ok())
}

/// Where people approve device sign-ins: `<public base>/device`.
fn verification_uri(request: &HttpRequest, state: &AppState) -> String {
    let base = state.public_url.clone().unwrap_or_else(|| {
        let info = request.connection_info();
        format!("{}://{}", info.scheme(), info.host())
    });
    format!("{}/device", base.trim_end_matches('/'))
}

/// Starts a device sign-in.
#[utoipa::path(post, path = "/oauth/device/code", tag = "device", summary = "Start a device sign-in (RFC 8628)", request_body(content_type = "application/x-www-form-urlencoded", description = "client_id=sluice-cli"), security(()),
    responses((status = 200, description = "The codes", body = sluice_api::DeviceCode), crate::error::Errors))]
pub(crate) async fn device_code(
    request: HttpRequest,
    payload: web::Payload,
    state: web::Data<AppState>,
) -> Result<HttpResponse, ApiError> {
    let Some(form) = form::<CodeForm>(&request, payload, &state).await? else {
        return Ok(oauth_error("invalid_request"));
    };
    match form.client_id.as_deref() {
        None => return Ok(oauth_error("invalid_request")),
        Some(CLIENT_ID) => {}
        Some(_) => return Ok(oauth_error("invalid_client")),
    }
    let now = state.now_ms();
    let device_code = generate_device_code().map_err(|_| ApiError::Internal)?;
    let user_code = generate_user_code().map_err(|_| ApiError::Internal)?;
    let grant = DeviceGrant {
        user_code: user_code.clone(),
        client_id: CLIENT_ID.to_owned(),
        scope: form.scope.filter(|scope| !scope.is_empty()).map(|scope| scope.chars().take(200).collect()),
        created_at: now,
        expires_at: now + EXPIRES_IN_S * 1000,
        interval_s: INTERVAL_S,
        last_poll_at: None,
        state: DeviceState::Pending,
    };
    state.store.create_device_code(&NewDeviceCode { grant, hash: hash_secret(&device_code) }).await?;
    let shown = display_user_code(&user_code);
    let uri = verification_uri(&request, &state);
    Ok(HttpResponse::Ok().insert_header((header::CACHE_CONTROL, "no-store")).json(sluice_api::DeviceCode {
        device_code,
        verification_uri_complete: format!("{uri}?code={shown}"),
        user_code: shown,
        verification_uri: uri,
        expires_in: EXPIRES_IN_S.unsigned_abs(),
        interval: u64::from(INTERVAL_S),
    }))
}

/// A device's poll: pending, slow down, denied, expired, invalid, or its session token, once.
#[utoipa::path(post, path = "/oauth/token", tag = "device", summary = "Poll a device sign-in for its token", request_body(content_type = "application/x-www-form-urlencoded", description = "grant_type=urn:ietf:params:oauth:grant-type:device_code, device_code, client_id"), security(()),
    responses((status = 200, description = "The session token, once", body = sluice_api::TokenAnswer), crate::error::Errors))]
pub(crate) async fn token(
    request: HttpRequest,
    payload: web::Payload,
    state: web::Data<AppState>,
) -> Result<HttpResponse, ApiError> {
    let Some(form) = form::<TokenForm>(&request, payload, &state).await? else {
        return Ok(oauth_error("invalid_request"));
    };
    if form.grant_type.as_deref() != Some(DEVICE_GRANT) {
        return Ok(oauth_error(if form.grant_type.is_none() { "invalid_request" } else { "unsupported_grant_type" }));
    }
    if form.client_id.as_deref() != Some(CLIENT_ID) {
        return Ok(oauth_error(if form.client_id.is_none() { "invalid_request" } else { "invalid_client" }));
    }
    let Some(device_code) = form.device_code.filter(|code| !code.is_empty()) else {
        return Ok(oauth_error("invalid_request"));
    };
    let now = state.now_ms();
    let token = generate_session_token().map_err(|_| ApiError::Internal)?;
    let seed = SessionSeed { id: SessionId::generate(), hash: hash_secret(&token), created_at: now };
    let answer = match state.store.poll_device_code(&hash_secret(&device_code), now, &seed).await? {
        DevicePoll::Pending => "authorization_pending",
        DevicePoll::SlowDown => "slow_down",
        DevicePoll::Denied => "access_denied",
        DevicePoll::Expired => "expired_token",
        DevicePoll::Invalid => "invalid_grant",
        DevicePoll::Approved(_) => {
            return Ok(HttpResponse::Ok().insert_header((header::CACHE_CONTROL, "no-store")).json(
                sluice_api::TokenAnswer {
                    access_token: Some(token),
                    token_type: Some("Bearer".to_owned()),
                    expires_in: Some((SESSION_IDLE_MS / 1000).unsigned_abs()),
                    error: None,
                },
            ));
        }
    };
    Ok(oauth_error(answer))
}

/// Approves or denies a pending code for the signed-in user; 404 for an unknown or expired one.
async fn decide(state: &AppState, user: &User, typed: &str, approve: bool) -> Result<String, ApiError> {
    const UNKNOWN: ApiError = ApiError::NotFound("Unknown or expired code");
    let code = normalize_user_code(typed).ok_or(UNKNOWN)?;
    let approver = approve.then_some(user.0.user.id);
    match state.store.decide_device_code(&code, approver, state.now_ms()).await {
        Err(StoreError::NotFound(_)) => Err(UNKNOWN),
        other => other.map(|()| code).map_err(ApiError::from),
    }
}

async fn decide_route(
    user: User,
    request: HttpRequest,
    payload: web::Payload,
    state: web::Data<AppState>,
    approve: bool,
) -> Result<HttpResponse, ApiError> {
    let typed: sluice_api::UserCode = Fields::read_as(&request, payload, &state).await?;
    let code = decide(&state, &user, &typed.user_code, approve).await?;
    let word = if approve { "approved" } else { "denied" };
    Ok(HttpResponse::Ok().json(sluice_api::Decided { user_code: display_user_code(&code), state: word.to_owned() }))
}

impl FromFields for sluice_api::UserCode {
    fn from_fields(fields: &mut Fields) -> Option<Self> {
        Some(sluice_api::UserCode { user_code: fields.string("userCode", true, 64)? })
    }
}

/// `POST /v1/device/approve` `{"userCode"}`.
#[utoipa::path(post, path = "/v1/device/approve", tag = "device", summary = "Approve a device's code", request_body = sluice_api::UserCode,
    responses((status = 200, description = "Approved", body = sluice_api::Decided), crate::error::Errors))]
pub(crate) async fn approve(
    user: User,
    request: HttpRequest,
    payload: web::Payload,
    state: web::Data<AppState>,
) -> Result<HttpResponse, ApiError> {
    decide_route(user, request, payload, state, true).await
}

/// `POST /v1/device/deny` `{"userCode"}`.
#[utoipa::path(post, path = "/v1/device/deny", tag = "device", summary = "Deny a device's code", request_body = sluice_api::UserCode,
    responses((status = 200, description = "Denied", body = sluice_api::Decided), crate::error::Errors))]
pub(crate) async fn deny(
    user: User,
    request: HttpRequest,
    payload: web::Payload,
    state: web::Data<AppState>,
) -> Result<HttpResponse, ApiError> {
    decide_route(user, request, payload, state, false).await
}

/// Which part of the page shows.
enum Step {
    SignIn,
    EnterCode,
    Decide(String, String),
    Done,
}

#[derive(Template)]
#[template(path = "device.html")]
struct Page {
    step: Step,
    code: String,
    email: String,
    who: String,
    error: Option<String>,
    done: Option<String>,
}

impl Page {
    fn new(step: Step) -> Self {
        Page { step, code: String::new(), email: String::new(), who: String::new(), error: None, done: None }
    }
}

/// The page, with a Content Security Policy that allows no script and no framing.
fn html(status: actix_web::http::StatusCode, page: &Page) -> Result<HttpResponse, ApiError> {
    let text = page.render().map_err(|_| ApiError::Internal)?;
    Ok(HttpResponse::build(status)
        .content_type("text/html; charset=utf-8")
        .insert_header((
            header::CONTENT_SECURITY_POLICY,
            "default-src 'none'; style-src 'self'; img-src data:; form-action 'self'; frame-ancestors 'none'; base-uri 'none'",
        ))
        .insert_header((header::X_FRAME_OPTIONS, "DENY"))
        .insert_header((header::REFERRER_POLICY, "same-origin"))
        .insert_header((header::CACHE_CONTROL, "no-store"))
        .body(text))
}

/// The signed-in user of a page request (by cookie), if any.
async fn page_user(request: &HttpRequest, state: &AppState) -> Option<User> {
    let token = request.cookie(SESSION_COOKIE)?.value().to_owned();
    state.auth.signed_in(Some(&token), state.now_ms()).await.ok().map(User)
}

/// The UTC time of a Unix ms, as `2026-11-25 14:03 UTC`.
fn utc(ms: i64) -> String {
    time::OffsetDateTime::from_unix_timestamp(ms.div_euclid(1000)).map_or_else(
        |_| ms.to_string(),
        |at| {
            format!(
                "{:04}-{:02}-{:02} {:02}:{:02} UTC",
                at.year(),
                u8::from(at.month()),
                at.day(),
                at.hour(),
                at.minute()
            )
        },
    )
}

/// What the page shows a signed-in user for `typed`: the request to decide, or the code form.
async fn page_for(state: &AppState, user: &User, typed: &str) -> Result<(actix_web::http::StatusCode, Page), ApiError> {
    let mut page = Page::new(Step::EnterCode);
    page.who = user.0.user.email.clone();
    page.code = typed.chars().take(20).collect();
    if typed.trim().is_empty() {
        return Ok((actix_web::http::StatusCode::OK, page));
    }
    let grant = match normalize_user_code(typed) {
        Some(code) => state.store.pending_device_code(&code, state.now_ms()).await?,
        None => None,
    };
    let Some(grant) = grant else {
        page.error = Some("Unknown or expired code. Check the code your device shows, or start again there.".into());
        return Ok((actix_web::http::StatusCode::NOT_FOUND, page));
    };
    page.code = display_user_code(&grant.user_code);
    page.step = Step::Decide(grant.client_id, utc(grant.created_at));
    Ok((actix_web::http::StatusCode::OK, page))
}

#[derive(Deserialize, Default)]
struct PageQuery {
    code: Option<String>,
}

/// `GET /device[?code=XXXX-XXXX]`.
#[utoipa::path(get, path = "/device", tag = "device", summary = "The device approval page (HTML)", params(("code" = Option<String>, Query, description = "The code to approve")), security(()),
    responses((status = 200, description = "The page", content_type = "text/html"), crate::error::Errors))]
pub(crate) async fn page(request: HttpRequest, state: web::Data<AppState>) -> Result<HttpResponse, ApiError> {
    let query: PageQuery = serde_urlencoded::from_str(request.query_string()).unwrap_or_default();
    let typed = query.code.unwrap_or_default();
    let Some(user) = page_user(&request, &state).await else {
        let mut page = Page::new(Step::SignIn);
        page.code = typed.chars().take(20).collect();
        return html(actix_web::http::StatusCode::OK, &page);
    };
    let (status, page) = page_for(&state, &user, &typed).await?;
    html(status, &page)
}

#[derive(Deserialize, Default)]
struct PageForm {
    action: Option<String>,
    code: Option<String>,
    email: Option<String>,
    password: Option<String>,
}

/// `POST /device`: the page's sign-in, approval and denial, as plain forms (no script).
#[utoipa::path(post, path = "/device", tag = "device", summary = "The device page's forms", request_body(content_type = "application/x-www-form-urlencoded", description = "action=login|approve|deny, code, email, password"), security(()),
    responses((status = 200, description = "The page", content_type = "text/html"), (status = 303, description = "Signed in: back to the page"), crate::error::Errors))]
pub(crate) async fn page_post(
    request: HttpRequest,
    payload: web::Payload,
    state: web::Data<AppState>,
) -> Result<HttpResponse, ApiError> {
    if !same_site(&request) {
        return Err(ApiError::Auth(sluice_auth::AuthError::CrossSite));
    }
    let form: PageForm = form(&request, payload, &state).await?.unwrap_or_default();
    let typed = form.code.unwrap_or_default();
    if form.action.as_deref() == Some("login") {
        let email = form.email.unwrap_or_default();
        let signed_in = check_password(&state, &email, form.password.unwrap_or_default()).await;
        let user = match signed_in {
            Ok(user) => user,
            Err(error @ (ApiError::BadSignIn | ApiError::TooManySignIns { .. })) => {
                let mut page = Page::new(Step::SignIn);
                page.error = Some(error.to_string());
                page.email = email.chars().take(320).collect();
                page.code = typed.chars().take(20).collect();
                return html(actix_web::http::StatusCode::UNAUTHORIZED, &page);
            }
            Err(other) => return Err(other),
        };
        let (token, session) = new_session(user.id, "browser", state.now_ms())?;
        state.store.create_session(&session).await?;
        let target = format!("/device?code={}", urlencode(&typed));
        return Ok(HttpResponse::SeeOther()
            .cookie(session_cookie(&request, &state, token))
            .insert_header((header::LOCATION, target))
            .finish());
    }
    let Some(user) = page_user(&request, &state).await else {
        return html(actix_web::http::StatusCode::UNAUTHORIZED, &Page::new(Step::SignIn));
    };
    let approve = match form.action.as_deref() {
        Some("approve") => true,
        Some("deny") => false,
        _ => {
            let (status, page) = page_for(&state, &user, &typed).await?;
            return html(status, &page);
        }
    };
    match decide(&state, &user, &typed, approve).await {
        Ok(_) => {
            let mut page = Page::new(Step::Done);
            page.done = Some(if approve {
                "Approved. Your device is signed in: go back to it.".to_owned()
            } else {
                "Denied. The device was not signed in.".to_owned()
            });
            html(actix_web::http::StatusCode::OK, &page)
        }
        Err(ApiError::NotFound(_)) => {
            let (_, mut page) = page_for(&state, &user, "").await?;
            page.error =
                Some("Unknown or expired code. Check the code your device shows, or start again there.".into());
            html(actix_web::http::StatusCode::NOT_FOUND, &page)
        }
        Err(other) => Err(other),
    }
}

/// A user code for a URL's query: letters and the dash pass, anything else is dropped.
fn urlencode(typed: &str) -> String {
    typed.chars().filter(|letter| letter.is_ascii_alphanumeric() || *letter == '-').take(20).collect()
}
