//! Flows: logs that share a `flowId`, by step.

use serde::{Deserialize, Serialize};
use sluice_model::Log;

use crate::{Counts, Pagination};

/// A flow as listed.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[serde(rename_all = "camelCase")]
pub struct Flow {
    /// Its id.
    pub flow_id: String,
    /// Its name, when it was made with one.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub name: Option<String>,
    /// Distinct steps seen.
    pub steps: u64,
    /// Logs in it.
    pub logs: u64,
    /// First log's time, Unix ms.
    pub first_timestamp: i64,
    /// Last log's time, Unix ms.
    pub last_timestamp: i64,
    /// From the first log to the last, ms.
    pub duration_ms: i64,
    /// Logs per level.
    pub levels: Counts,
    /// Its sources.
    pub sources: Vec<String>,
}

/// `GET /v1/flows`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
pub struct FlowPage {
    /// The flows, most recently active first.
    pub flows: Vec<Flow>,
    /// About the page.
    pub pagination: Pagination,
}

/// A flow with its gaps and duplicates.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[serde(rename_all = "camelCase")]
pub struct FlowDetail {
    /// The summary.
    #[serde(flatten)]
    pub summary: Flow,
    /// Step numbers missing between the first and the last.
    #[serde(default)]
    pub missing_steps: Vec<u16>,
    /// Step numbers more than one log has.
    #[serde(default)]
    pub duplicate_steps: Vec<u16>,
}

/// `GET /v1/flows/{flowId}`: the flow and its logs in step order (at most 2,000; `truncated`
/// when there were more).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
pub struct FlowTimeline {
    /// The flow.
    pub flow: FlowDetail,
    /// Its logs, in step order.
    pub logs: Vec<Log>,
    /// Whether only the first 2,000 logs are here.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub truncated: bool,
}

/// `POST /v1/flows`: a flow made before its logs.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
pub struct CreateFlow {
    /// Its name, 1 to 100 characters.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub name: Option<String>,
}

/// A flow just made.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[serde(rename_all = "camelCase")]
pub struct CreatedFlow {
    /// Its id, for logs' `flowId`.
    pub flow_id: String,
    /// Its name.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub name: Option<String>,
    /// Unix ms.
    pub created_at: i64,
}
