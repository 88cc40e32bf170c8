//! The request and response bodies of the sluice HTTP API (docs/API.md), defined once: the
//! server writes its answers from these types, its OpenAPI document derives their schemas
//! (feature `openapi`), and `sluice-client` reads the answers into them, so the three cannot
//! disagree on a field.
//!
//! Invariant: plain data with serde (and, with `openapi`, utoipa's schema traits) over
//! `sluice-model`; no server, runtime or database (`cargo xtask ci` checks its dependencies).
//! Request bodies are checked by the server with the contract's `issues` wording, not by serde:
//! these types say what a client sends.

mod accounts;
mod device;
mod flows;
mod logs;
mod params;
mod stats;

pub use accounts::*;
pub use device::*;
pub use flows::*;
pub use logs::*;
pub use params::*;
pub use stats::*;

use serde::{Deserialize, Serialize};
pub use sluice_model::{Issue, Limits, Log, PathSegment};

/// Every error answer: `error`, and `issues` (validation), `code` (`PARSE_ERROR`,
/// `QUOTA_EXCEEDED`) or `retryAfter` (seconds) where they apply (docs/API.md, Errors).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[serde(rename_all = "camelCase")]
pub struct ErrorBody {
    /// What went wrong, for a person.
    pub error: String,
    /// Each broken rule of a 400 Validation error.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub issues: Option<Vec<Issue>>,
    /// A machine-readable kind where one applies.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub code: Option<String>,
    /// Seconds to wait before trying again.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub retry_after: Option<u64>,
}

/// `/healthz` and `/readyz`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
pub struct Health {
    /// `ok` (alive) or `ready`.
    pub status: String,
}
