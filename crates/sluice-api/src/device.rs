//! Sign-in from the command line: the OAuth 2.0 device authorization grant (RFC 8628).

use serde::{Deserialize, Serialize};

/// What `POST /oauth/device/code` answers.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
pub struct DeviceCode {
    /// What the client polls with (secret).
    pub device_code: String,
    /// What the person types, `XXXX-XXXX`.
    pub user_code: String,
    /// Where they type it.
    pub verification_uri: String,
    /// The same with the code filled in.
    pub verification_uri_complete: String,
    /// Seconds the code lives.
    pub expires_in: u64,
    /// Least seconds between polls.
    pub interval: u64,
}

/// What `POST /oauth/token` answers: the session token, or RFC 6749's `{"error"}`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
pub struct TokenAnswer {
    /// The session token.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub access_token: Option<String>,
    /// `Bearer`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub token_type: Option<String>,
    /// Seconds the session lives unused.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub expires_in: Option<u64>,
    /// `authorization_pending`, `slow_down`, `access_denied`, `expired_token`...
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub error: Option<String>,
}

/// `POST /v1/device/approve` and `/deny`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[serde(rename_all = "camelCase")]
pub struct UserCode {
    /// The code the device shows.
    pub user_code: String,
}

/// A device code and what was decided.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[serde(rename_all = "camelCase")]
pub struct Decided {
    /// The code.
    pub user_code: String,
    /// `approved` or `denied`.
    pub state: String,
}
