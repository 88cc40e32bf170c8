//! One error type for every handler, and the one place that maps errors to statuses and to
//! the envelope `{error, issues?, code?, retryAfter?}` of docs/API.md (Errors).

use actix_web::http::StatusCode;
use actix_web::{HttpResponse, ResponseError};
use sluice_api::ErrorBody;
use sluice_auth::AuthError;
use sluice_ingest::IngestError;
use sluice_model::Issue;
use sluice_store::StoreError;

/// Everything a request can fail with.
#[derive(Debug, thiserror::Error)]
pub enum ApiError {
    /// 400 `Validation error` with every issue.
    #[error("Validation error")]
    Validation(Vec<Issue>),
    /// 400 with `code: PARSE_ERROR`: the body could not be read.
    #[error("{0}")]
    Parse(String),
    /// 401, 403 or 404 from authentication (store failures become `Unavailable` or `Internal`).
    #[error(transparent)]
    Auth(AuthError),
    /// 400 with the given message and nothing more (the search query message of docs/API.md).
    #[error("{0}")]
    BadRequest(&'static str),
    /// 500 `Search failed`: the backend failed while searching; retrying is advised.
    #[error("Search failed")]
    SearchFailed,
    /// 404 with the given message.
    #[error("{0}")]
    NotFound(&'static str),
    /// 409 with the given message: the change conflicts with what is stored.
    #[error("{0}")]
    Conflict(&'static str),
    /// 429 `Too many sign-in attempts` with `retryAfter` and `Retry-After`.
    #[error("Too many sign-in attempts")]
    TooManySignIns {
        /// Seconds until an attempt is counted again.
        retry_after: u64,
    },
    /// 401 `Invalid email or password`.
    #[error("Invalid email or password")]
    BadSignIn,
    /// 405.
    #[error("Method not allowed")]
    MethodNotAllowed,
    /// 408: the body did not arrive in full within the body timeout.
    #[error("Request timeout")]
    RequestTimeout,
    /// 413.
    #[error("Payload too large")]
    PayloadTooLarge,
    /// 431: the request's headers pass `SLUICE_MAX_HEADER_BYTES`.
    #[error("Request headers too large")]
    HeadersTooLarge,
    /// 400 with `code: PARSE_ERROR`: a `Content-Encoding` we do not decode.
    #[error("Unsupported Content-Encoding '{0}'; use gzip, deflate or zstd")]
    UnsupportedEncoding(String),
    /// 429 `Rate limit exceeded` with `retryAfter` (seconds) and `Retry-After`.
    #[error("Rate limit exceeded")]
    RateLimited {
        /// Seconds until the window admits a request.
        retry_after: u64,
    },
    /// 429 `Monthly log quota exceeded` with `code: QUOTA_EXCEEDED`, `retryAfter` (seconds to
    /// the next UTC month) and `Retry-After`.
    #[error("Monthly log quota exceeded")]
    QuotaExceeded {
        /// Seconds until the next UTC month.
        retry_after: u64,
    },
    /// 429 `Too many live tails`: the workspace has its most tails open.
    #[error("Too many live tails")]
    TooManyTails,
    /// 503: the database cannot be reached; retrying later is advised.
    #[error("Service unavailable")]
    Unavailable,
    /// 503 `Service unavailable` with `retryAfter` and `Retry-After` (seconds): the write queue
    /// is full, or the batch waited in it past its time; nothing was stored.
    #[error("Service unavailable")]
    Overloaded {
        /// Seconds to wait before sending again.
        retry_after: u64,
    },
    /// 503 `Storage is full` with `retryAfter` and `Retry-After` (seconds): the database cannot
    /// write for lack of space; nothing of the request was stored.
    #[error("Storage is full")]
    StorageFull {
        /// Seconds to wait before sending again.
        retry_after: u64,
    },
    /// 500: a bug or a backend failure; details go to the log, not the client.
    #[error("Internal server error")]
    Internal,
}

/// The `Retry-After` of a `Storage is full` answer: space comes back when an operator or the
/// retention sweep frees it, in minutes rather than seconds.
pub const STORAGE_FULL_RETRY_SECONDS: u64 = 30;

impl ApiError {
    /// The quota error at `now_ms`: retry when the next UTC month starts.
    pub fn quota_exceeded(now_ms: i64) -> Self {
        let wait_ms = sluice_model::calendar::next_month_start_ms(now_ms) - now_ms;
        ApiError::QuotaExceeded { retry_after: u64::try_from(wait_ms).unwrap_or(0).div_ceil(1000).max(1) }
    }

    /// A validation error with one issue about a named parameter.
    pub fn invalid(field: &str, message: impl Into<String>) -> Self {
        ApiError::Validation(vec![Issue::at(field, message)])
    }
}

impl From<StoreError> for ApiError {
    fn from(error: StoreError) -> Self {
        match error {
            StoreError::Unavailable(reason) => {
                tracing::warn!(error.reason = %reason, "database unavailable");
                ApiError::Unavailable
            }
            StoreError::Timeout(reason) => {
                tracing::warn!(error.reason = %reason, "database call past its deadline");
                ApiError::Unavailable
            }
            StoreError::NotFound(_) => ApiError::NotFound("Not found"),
            StoreError::Conflict(message) => ApiError::Conflict(message),
            // Only an insert is refused for its quota, and the ingest handler answers it with
            // the request's clock (routes/logs.rs); no other call can meet it.
            StoreError::QuotaExceeded => {
                tracing::error!("a quota refusal outside ingest");
                ApiError::Internal
            }
            StoreError::Backend(reason) => {
                tracing::error!(error.reason = %reason, "database error");
                ApiError::Internal
            }
            StoreError::Overloaded => {
                tracing::warn!("write queue full: a batch refused");
                ApiError::Overloaded { retry_after: 1 }
            }
            // The store logs the one ERROR line when its storage fills (`sluice_store::full`).
            StoreError::StorageFull(reason) => {
                tracing::debug!(error.reason = %reason, "a write refused: storage full");
                ApiError::StorageFull { retry_after: STORAGE_FULL_RETRY_SECONDS }
            }
        }
    }
}

impl ApiError {
    /// A store failure during a search: `Search failed` for a backend error and for a search
    /// past its deadline, the usual 503 while the database is unreachable (docs/API.md, search).
    pub fn from_search(error: StoreError) -> Self {
        let timed_out = matches!(error, StoreError::Timeout(_));
        match ApiError::from(error) {
            ApiError::Internal => ApiError::SearchFailed,
            ApiError::Unavailable if timed_out => ApiError::SearchFailed,
            other => other,
        }
    }
}

impl From<AuthError> for ApiError {
    fn from(error: AuthError) -> Self {
        match error {
            AuthError::Store(store) => ApiError::from(store),
            other => ApiError::Auth(other),
        }
    }
}

impl From<IngestError> for ApiError {
    fn from(error: IngestError) -> Self {
        match error {
            IngestError::Parse(parse) => ApiError::Parse(parse.to_string()),
            IngestError::Invalid(issues) => ApiError::Validation(issues),
        }
    }
}

impl ApiError {
    /// The `reason` label of `sluice_rejections_total` ([`crate::metrics`]).
    pub fn reason(&self) -> &'static str {
        match self {
            ApiError::Validation(_) => "validation",
            ApiError::Parse(_) | ApiError::UnsupportedEncoding(_) => "parse",
            ApiError::BadRequest(_) => "bad_request",
            ApiError::Auth(AuthError::AccessDenied | AuthError::MissingScope(_) | AuthError::RoleDenied) => "forbidden",
            ApiError::Auth(AuthError::CrossSite) => "cross_site",
            ApiError::Auth(_) | ApiError::BadSignIn => "unauthenticated",
            ApiError::NotFound(_) => "not_found",
            ApiError::Conflict(_) => "conflict",
            ApiError::MethodNotAllowed => "method_not_allowed",
            ApiError::RequestTimeout => "body_timeout",
            ApiError::PayloadTooLarge => "payload_too_large",
            ApiError::HeadersTooLarge => "headers_too_large",
            ApiError::RateLimited { .. } => "rate_limited",
            ApiError::QuotaExceeded { .. } => "quota_exceeded",
            ApiError::TooManyTails => "too_many_tails",
            ApiError::TooManySignIns { .. } => "sign_in_throttled",
            ApiError::Overloaded { .. } => "overloaded",
            ApiError::Unavailable => "unavailable",
            ApiError::SearchFailed => "search_failed",
            ApiError::StorageFull { .. } => "storage_full",
            ApiError::Internal => "internal",
        }
    }
}

impl ResponseError for ApiError {
    fn status_code(&self) -> StatusCode {
        match self {
            ApiError::Validation(_)
            | ApiError::Parse(_)
            | ApiError::UnsupportedEncoding(_)
            | ApiError::BadRequest(_) => StatusCode::BAD_REQUEST,
            ApiError::Auth(auth) => match auth {
                AuthError::Missing
                | AuthError::Invalid
                | AuthError::Revoked
                | AuthError::Expired
                | AuthError::MissingSession
                | AuthError::InvalidSession
                | AuthError::SessionExpired => StatusCode::UNAUTHORIZED,
                AuthError::AccessDenied
                | AuthError::MissingScope(_)
                | AuthError::NoWorkspace
                | AuthError::RoleDenied
                | AuthError::NeedsUser
                | AuthError::CrossSite => StatusCode::FORBIDDEN,
                AuthError::WorkspaceNotFound => StatusCode::NOT_FOUND,
                // Never built: `From<AuthError>` sends store failures through `From<StoreError>`.
                AuthError::Store(_) => StatusCode::INTERNAL_SERVER_ERROR,
            },
            ApiError::NotFound(_) => StatusCode::NOT_FOUND,
            ApiError::Conflict(_) => StatusCode::CONFLICT,
            ApiError::BadSignIn => StatusCode::UNAUTHORIZED,
            ApiError::MethodNotAllowed => StatusCode::METHOD_NOT_ALLOWED,
            ApiError::RequestTimeout => StatusCode::REQUEST_TIMEOUT,
            ApiError::PayloadTooLarge => StatusCode::PAYLOAD_TOO_LARGE,
            ApiError::HeadersTooLarge => StatusCode::REQUEST_HEADER_FIELDS_TOO_LARGE,
            ApiError::RateLimited { .. }
            | ApiError::QuotaExceeded { .. }
            | ApiError::TooManyTails
            | ApiError::TooManySignIns { .. } => StatusCode::TOO_MANY_REQUESTS,
            ApiError::Unavailable | ApiError::Overloaded { .. } | ApiError::StorageFull { .. } => {
                StatusCode::SERVICE_UNAVAILABLE
            }
            ApiError::Internal | ApiError::SearchFailed => StatusCode::INTERNAL_SERVER_ERROR,
        }
    }

    fn error_response(&self) -> HttpResponse {
        let status = self.status_code();
        let error = self.to_string();
        let envelope = ErrorBody {
            error,
            issues: match self {
                ApiError::Validation(issues) => Some(issues.clone()),
                _ => None,
            },
            code: match self {
                ApiError::Parse(_) | ApiError::UnsupportedEncoding(_) => Some("PARSE_ERROR".to_owned()),
                ApiError::QuotaExceeded { .. } => Some("QUOTA_EXCEEDED".to_owned()),
                _ => None,
            },
            retry_after: match self {
                ApiError::RateLimited { retry_after }
                | ApiError::QuotaExceeded { retry_after }
                | ApiError::Overloaded { retry_after }
                | ApiError::StorageFull { retry_after }
                | ApiError::TooManySignIns { retry_after } => Some(*retry_after),
                _ => None,
            },
        };
        let mut response = HttpResponse::build(status);
        response.extensions_mut().insert(crate::metrics::Rejection(self.reason()));
        if let Some(seconds) = envelope.retry_after {
            response.insert_header((actix_web::http::header::RETRY_AFTER, seconds));
        }
        response.json(envelope)
    }
}

/// The error answers any route may give, each in the envelope of docs/API.md (Errors), as the
/// OpenAPI document lists them under every operation.
#[derive(utoipa::IntoResponses)]
#[allow(dead_code, reason = "descriptions only")]
pub(crate) enum Errors {
    /// A parameter or body breaks a rule (`issues` lists each), or cannot be read (`code: PARSE_ERROR`).
    #[response(status = 400)]
    BadRequest(ErrorBody),
    /// No credential, or one that is unknown, revoked or expired.
    #[response(status = 401)]
    Unauthorized(ErrorBody),
    /// The credential may not do this (scope, role, another workspace, a key where a session is needed).
    #[response(status = 403)]
    Forbidden(ErrorBody),
    /// Unknown (or another workspace's) id, or an unknown path.
    #[response(status = 404)]
    NotFound(ErrorBody),
    /// The path exists, the method does not.
    #[response(status = 405)]
    MethodNotAllowed(ErrorBody),
    /// The body did not arrive in time.
    #[response(status = 408)]
    RequestTimeout(ErrorBody),
    /// A conflict with the current state (the last owner, an existing member).
    #[response(status = 409)]
    Conflict(ErrorBody),
    /// The body passes 5 MiB after decompression (or a route's own smaller cap).
    #[response(status = 413)]
    PayloadTooLarge(ErrorBody),
    /// The rate limit, the monthly quota (`code: QUOTA_EXCEEDED`), too many tails or sign-ins;
    /// `Retry-After` says when to try again.
    #[response(status = 429, headers(("Retry-After" = u64, description = "Seconds to wait")))]
    TooMany(ErrorBody),
    /// The request's headers pass the server's limit.
    #[response(status = 431)]
    HeadersTooLarge(ErrorBody),
    /// `Search failed` (retrying is advised), or an unexpected error.
    #[response(status = 500)]
    Internal(ErrorBody),
    /// The database cannot be reached, the write queue is full, or the storage is full (`Storage is
    /// full`); with `Retry-After` when a wait is known.
    #[response(status = 503, headers(("Retry-After" = u64, description = "Seconds to wait")))]
    Unavailable(ErrorBody),
}

#[cfg(test)]
mod tests {
    use super::*;

    /// docs/API.md: a call past its deadline answers 503, but a search past it 500 `Search
    /// failed`; a database that cannot be reached answers 503 either way.
    #[test]
    fn deadlines_answer_503_but_a_search_500() {
        let timeout = || StoreError::Timeout("past".into());
        let unreachable = || StoreError::Unavailable("gone".into());
        assert!(matches!(ApiError::from(timeout()), ApiError::Unavailable));
        assert!(matches!(ApiError::from_search(timeout()), ApiError::SearchFailed));
        assert!(matches!(ApiError::from_search(unreachable()), ApiError::Unavailable));
        assert!(matches!(ApiError::from_search(StoreError::Backend("x".into())), ApiError::SearchFailed));
        assert_eq!(ApiError::from_search(timeout()).status_code(), StatusCode::INTERNAL_SERVER_ERROR);
    }

    /// DECISIONS, Storage: a write refused for lack of space answers 503 `Storage is full`
    /// with `Retry-After`, never 500.
    #[test]
    fn a_full_storage_answers_503_with_retry_after() {
        let error = ApiError::from(StoreError::StorageFull("database or disk is full".into()));
        assert_eq!(error.status_code(), StatusCode::SERVICE_UNAVAILABLE);
        assert_eq!(error.to_string(), "Storage is full");
        let response = error.error_response();
        assert_eq!(
            response.headers().get(actix_web::http::header::RETRY_AFTER).map(|value| value.as_bytes()),
            Some(&b"30"[..])
        );
    }
}
