//! Handlers, one module per resource, plus the JSON answers for unknown routes and methods.

pub(crate) mod health;
pub(crate) mod logs;
pub(crate) mod stats;

use actix_web::{HttpResponse, ResponseError};

use crate::ApiError;

/// Any path no route knows.
pub(crate) async fn not_found() -> HttpResponse {
    ApiError::NotFound("Not found").error_response()
}

/// A known path with a method it does not answer.
pub(crate) async fn method_not_allowed() -> HttpResponse {
    ApiError::MethodNotAllowed.error_response()
}
