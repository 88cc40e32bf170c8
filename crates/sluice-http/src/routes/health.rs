//! Liveness and readiness, without authentication.

use actix_web::{HttpResponse, web};

use crate::{ApiError, AppState};

/// 200 while the process runs.
#[utoipa::path(get, path = "/healthz", tag = "health", summary = "Liveness", security(()),
    responses((status = 200, description = "The process answers", body = sluice_api::Health), crate::error::Errors))]
pub(crate) async fn healthz() -> HttpResponse {
    HttpResponse::Ok().json(sluice_api::Health { status: "ok".to_owned() })
}

/// 200 when the database takes writes, else 503 (while its storage is full, until a write
/// succeeds again).
#[utoipa::path(get, path = "/readyz", tag = "health", summary = "Readiness: the database takes writes", security(()),
    responses((status = 200, description = "Ready", body = sluice_api::Health), crate::error::Errors))]
pub(crate) async fn readyz(state: web::Data<AppState>) -> Result<HttpResponse, ApiError> {
    state.store.ping().await.map_err(|error| {
        tracing::warn!(error.reason = %error, "readiness check failed");
        ApiError::Unavailable
    })?;
    Ok(HttpResponse::Ok().json(sluice_api::Health { status: "ready".to_owned() }))
}
