//! The extractor that authenticates a request and yields the workspace it acts on.

use std::future::Future;
use std::pin::Pin;

use actix_web::http::Method;
use actix_web::{FromRequest, HttpRequest, dev::Payload, web};
use sluice_auth::{Principal, key_from_headers};
use sluice_model::Scope;

use crate::{ApiError, AppState};

/// An authenticated request: the key and the workspace it may act on. `POST` needs the
/// `ingest` scope, every other method `read`.
#[derive(Debug, Clone)]
pub struct Authed(pub Principal);

/// The scope a key needs for `method`: `ingest` to `POST`, `read` for everything else (the
/// route table's [`crate::Route::scope`] says the same).
pub(crate) fn scope_for(method: &Method) -> Scope {
    if method == Method::POST { Scope::Ingest } else { Scope::Read }
}

fn header(request: &HttpRequest, name: &str) -> Option<String> {
    request.headers().get(name).map(|value| String::from_utf8_lossy(value.as_bytes()).into_owned())
}

impl FromRequest for Authed {
    type Error = ApiError;
    type Future = Pin<Box<dyn Future<Output = Result<Self, ApiError>>>>;

    fn from_request(request: &HttpRequest, _: &mut Payload) -> Self::Future {
        let state = request.app_data::<web::Data<AppState>>().cloned();
        let authorization = header(request, "authorization");
        let x_api_key = header(request, "x-api-key");
        let target = header(request, "x-workspace-id");
        let scope = scope_for(request.method());
        Box::pin(async move {
            let state = state.ok_or(ApiError::Internal)?;
            let key = key_from_headers(authorization.as_deref(), x_api_key.as_deref());
            let principal = state.auth.authenticate(key, target.as_deref(), scope, state.now_ms()).await?;
            Ok(Authed(principal))
        })
    }
}
