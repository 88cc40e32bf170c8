//! Limits a request meets before its route: the size of its headers (docs/API.md, Limits).
//! actix-web itself refuses more than 96 headers, or a head over its 128 KiB read buffer, with
//! an empty 431; below that, the head's size is a setting (`SLUICE_MAX_HEADER_BYTES`).

use actix_web::body::{EitherBody, MessageBody};
use actix_web::dev::{ServiceRequest, ServiceResponse};
use actix_web::middleware::Next;
use actix_web::{ResponseError, web};

use crate::{ApiError, AppState};

/// The default of `SLUICE_MAX_HEADER_BYTES`: 32 KiB of headers, more than browsers and
/// shippers send (nginx answers 400 past 32 KiB in its default configuration).
pub const DEFAULT_MAX_HEADER_BYTES: usize = 32 * 1024;

/// A request's headers as they came on the wire: each name and value, `: ` and CRLF.
fn header_bytes(request: &ServiceRequest) -> usize {
    request.headers().iter().map(|(name, value)| name.as_str().len() + value.len() + 4).sum()
}

/// Answers 431 `Request headers too large` to a request whose headers pass the state's
/// `max_header_bytes`, before any route (or authentication) sees it.
pub async fn limit_headers(
    request: ServiceRequest,
    next: Next<impl MessageBody>,
) -> Result<ServiceResponse<EitherBody<impl MessageBody>>, actix_web::Error> {
    let limit =
        request.app_data::<web::Data<AppState>>().map_or(DEFAULT_MAX_HEADER_BYTES, |state| state.max_header_bytes);
    if header_bytes(&request) > limit {
        let response = ApiError::HeadersTooLarge.error_response();
        return Ok(request.into_response(response).map_into_right_body());
    }
    next.call(request).await.map(ServiceResponse::map_into_left_body)
}
