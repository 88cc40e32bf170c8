//! A workspace's keys and members, for signed-in users: `GET|POST /v1/keys`,
//! `DELETE /v1/keys/{keyId}`, `GET|POST /v1/members`, `PATCH|DELETE /v1/members/{userId}`
//! (docs/API.md, Accounts). Keys need the role `member`, changing members `owner`; through
//! these routes a workspace that has an owner keeps one.

use actix_web::{HttpRequest, HttpResponse, web};
use serde_json::Value;
use sluice_model::{KeyEnv, KeyId, Role, Scopes, UserId};
use sluice_store::StoreError;
use sluice_store::accounts::MemberChange;

use crate::extract::InWorkspace;
use crate::fields::{Fields, FromFields};
use crate::routes::session::MAX_EMAIL;
use crate::{ApiError, AppState, views};

/// The longest key lifetime `expiresIn` takes: 10 years, in seconds.
const MAX_EXPIRES_IN: u64 = 10 * 365 * 24 * 3600;

/// The workspace's keys, oldest first, never their text.
#[utoipa::path(get, path = "/v1/keys", tag = "team", summary = "The workspace's API keys (never their text)",
    responses((status = 200, description = "The keys", body = sluice_api::Keys), crate::error::Errors))]
pub(crate) async fn keys(member: InWorkspace, state: web::Data<AppState>) -> Result<HttpResponse, ApiError> {
    member.require(Role::Member)?;
    let now = state.now_ms();
    let keys = state.store.list_keys(member.workspace.id).await?;
    Ok(HttpResponse::Ok().json(sluice_api::Keys { keys: keys.iter().map(|key| views::key(key, now)).collect() }))
}

/// The scopes of a create body: a list (`["ingest","read"]`) or a comma-separated string.
fn scopes_of(fields: &mut Fields) -> Scopes {
    let text = match fields.take("scopes") {
        None => return Scopes::ALL,
        Some(Value::String(text)) => text,
        Some(Value::Array(items)) => {
            let names: Option<Vec<&str>> = items.iter().map(Value::as_str).collect();
            match names {
                Some(names) if !names.is_empty() => names.join(","),
                _ => {
                    fields.refuse("scopes", "Expected a non-empty list of 'ingest' | 'read'");
                    return Scopes::ALL;
                }
            }
        }
        Some(_) => {
            fields.refuse("scopes", "Expected a non-empty list of 'ingest' | 'read'");
            return Scopes::ALL;
        }
    };
    text.parse().unwrap_or_else(|error: sluice_model::UnknownValue| {
        fields.refuse("scopes", error.to_string());
        Scopes::ALL
    })
}

impl FromFields for sluice_api::KeyRequest {
    fn from_fields(fields: &mut Fields) -> Option<Self> {
        let name = fields.string("name", false, 100);
        let env: Option<KeyEnv> = fields.parsed("env", false);
        let scopes = scopes_of(fields);
        let expires_in = fields.positive("expiresIn", MAX_EXPIRES_IN);
        Some(sluice_api::KeyRequest {
            name,
            env: Some(env.unwrap_or(KeyEnv::Live).as_str().to_owned()),
            scopes: Some(scopes.list().iter().map(|scope| scope.as_str().to_owned()).collect()),
            expires_in,
        })
    }
}

impl FromFields for sluice_api::NewMember {
    fn from_fields(fields: &mut Fields) -> Option<Self> {
        let email = fields.string("email", true, MAX_EMAIL);
        let role: Option<Role> = fields.parsed("role", true);
        Some(sluice_api::NewMember { email: email?, role: role?.as_str().to_owned() })
    }
}

impl FromFields for sluice_api::RoleChange {
    fn from_fields(fields: &mut Fields) -> Option<Self> {
        let role: Option<Role> = fields.parsed("role", true);
        Some(sluice_api::RoleChange { role: role?.as_str().to_owned() })
    }
}

/// Makes a key: 201 with its text, shown this once.
#[utoipa::path(post, path = "/v1/keys", tag = "team", summary = "Create an API key (shown once)", request_body = sluice_api::KeyRequest,
    responses((status = 201, description = "The key, shown this once", body = sluice_api::CreatedKey), crate::error::Errors))]
pub(crate) async fn create_key(
    member: InWorkspace,
    request: HttpRequest,
    payload: web::Payload,
    state: web::Data<AppState>,
) -> Result<HttpResponse, ApiError> {
    member.require(Role::Member)?;
    let asked: sluice_api::KeyRequest = Fields::read_as(&request, payload, &state).await?;
    let env: KeyEnv = asked.env.as_deref().unwrap_or("live").parse().map_err(|_| ApiError::Internal)?;
    let scopes: Scopes = match asked.scopes {
        Some(names) => names.join(",").parse().map_err(|_| ApiError::Internal)?,
        None => Scopes::ALL,
    };
    let (text, key) =
        sluice_auth::mint_key(member.workspace.id, env, asked.name, scopes, asked.expires_in, state.now_ms())
            .map_err(|_| ApiError::Internal)?;
    state.store.create_key(&key).await?;
    Ok(HttpResponse::Created().json(views::created_key(&key.record, &text)))
}

/// Revokes one of the workspace's keys: refused on this node at once, on every node within 5 s.
#[utoipa::path(delete, path = "/v1/keys/{keyId}", tag = "team", summary = "Revoke a key", params(("keyId" = String, Path, description = "The key")),
    responses((status = 200, description = "Revoked", body = sluice_api::KeyRevoked), crate::error::Errors))]
pub(crate) async fn revoke_key(
    member: InWorkspace,
    path: web::Path<String>,
    state: web::Data<AppState>,
) -> Result<HttpResponse, ApiError> {
    member.require(Role::Member)?;
    const MISSING: ApiError = ApiError::NotFound("Key not found");
    let id: KeyId = path.parse().map_err(|_| MISSING)?;
    let keys = state.store.list_keys(member.workspace.id).await?;
    if !keys.iter().any(|key| key.id == id) {
        return Err(MISSING);
    }
    state.store.revoke_key(id, state.now_ms()).await?;
    state.auth.forget_key(id);
    Ok(HttpResponse::Ok().json(sluice_api::KeyRevoked { key_id: id.to_string(), state: "revoked".to_owned() }))
}

/// The workspace's members, by email: any role may list them.
#[utoipa::path(get, path = "/v1/members", tag = "team", summary = "The workspace's members",
    responses((status = 200, description = "By email", body = sluice_api::Members), crate::error::Errors))]
pub(crate) async fn members(member: InWorkspace, state: web::Data<AppState>) -> Result<HttpResponse, ApiError> {
    let members = state.store.members(member.workspace.id).await?;
    Ok(HttpResponse::Ok().json(sluice_api::Members { members: members.iter().map(views::member).collect() }))
}

/// A membership change through the API, which keeps a workspace's last owner; its answers in
/// the words of docs/API.md.
async fn change(state: &AppState, member: &InWorkspace, user: UserId, change: MemberChange) -> Result<(), ApiError> {
    match state.store.change_member(member.workspace.id, user, change, true, state.now_ms()).await {
        Err(StoreError::NotFound("member" | "user")) => return Err(ApiError::NotFound("Member not found")),
        other => other?,
    }
    state.auth.forget_memberships(user);
    Ok(())
}

/// Adds an existing user, by email, with a role: 201 with the member.
#[utoipa::path(post, path = "/v1/members", tag = "team", summary = "Add a member by email", request_body = sluice_api::NewMember,
    responses((status = 201, description = "The member", body = sluice_api::Member), crate::error::Errors))]
pub(crate) async fn add_member(
    member: InWorkspace,
    request: HttpRequest,
    payload: web::Payload,
    state: web::Data<AppState>,
) -> Result<HttpResponse, ApiError> {
    member.require(Role::Owner)?;
    let new: sluice_api::NewMember = Fields::read_as(&request, payload, &state).await?;
    let role: Role = new.role.parse().map_err(|_| ApiError::Internal)?;
    let Some((user, _)) = state.store.find_user_by_email(&new.email).await? else {
        return Err(ApiError::NotFound("User not found"));
    };
    change(&state, &member, user.id, MemberChange::Add(role)).await?;
    let added = sluice_store::accounts::Member { user, role, since: state.now_ms() };
    Ok(HttpResponse::Created().json(views::member(&added)))
}

fn user_of(path: &str) -> Result<UserId, ApiError> {
    path.parse().map_err(|_| ApiError::NotFound("Member not found"))
}

/// Gives a member another role.
#[utoipa::path(patch, path = "/v1/members/{userId}", tag = "team", summary = "Change a member's role", request_body = sluice_api::RoleChange, params(("userId" = String, Path, description = "The member")),
    responses((status = 200, description = "The new role", body = sluice_api::MemberRole), crate::error::Errors))]
pub(crate) async fn set_role(
    member: InWorkspace,
    path: web::Path<String>,
    request: HttpRequest,
    payload: web::Payload,
    state: web::Data<AppState>,
) -> Result<HttpResponse, ApiError> {
    member.require(Role::Owner)?;
    let user = user_of(&path)?;
    let asked: sluice_api::RoleChange = Fields::read_as(&request, payload, &state).await?;
    let role: Role = asked.role.parse().map_err(|_| ApiError::Internal)?;
    change(&state, &member, user, MemberChange::Role(role)).await?;
    Ok(HttpResponse::Ok().json(sluice_api::MemberRole { user_id: user.to_string(), role: role.as_str().to_owned() }))
}

/// Removes a member.
#[utoipa::path(delete, path = "/v1/members/{userId}", tag = "team", summary = "Remove a member", params(("userId" = String, Path, description = "The member")),
    responses((status = 204, description = "Removed"), crate::error::Errors))]
pub(crate) async fn remove_member(
    member: InWorkspace,
    path: web::Path<String>,
    state: web::Data<AppState>,
) -> Result<HttpResponse, ApiError> {
    member.require(Role::Owner)?;
    let user = user_of(&path)?;
    change(&state, &member, user, MemberChange::Remove).await?;
    Ok(HttpResponse::NoContent().finish())
}
