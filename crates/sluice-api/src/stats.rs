//! Counts: `GET /v1/stats` and `GET /v1/stats/summary`.

use serde::{Deserialize, Serialize};
use sluice_model::Level;

/// Counters by level.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
pub struct Counts {
    /// `debug` logs.
    pub debug: u64,
    /// `info` logs.
    pub info: u64,
    /// `warn` logs.
    pub warn: u64,
    /// `error` logs.
    pub error: u64,
    /// All of them.
    pub total: u64,
}

impl Counts {
    /// Adds `count` logs of `level`.
    pub fn add(&mut self, level: Level, count: u64) {
        let slot = match level {
            Level::Debug => &mut self.debug,
            Level::Info => &mut self.info,
            Level::Warn => &mut self.warn,
            Level::Error => &mut self.error,
        };
        *slot += count;
        self.total += count;
    }
}

/// One record of `GET /v1/stats`: a day, an hour (`date` and `hour`) or a source, with its
/// counters.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
pub struct StatsRecord {
    /// `YYYY-MM-DD` (by day and by hour).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub date: Option<String>,
    /// 0 to 23, UTC (by hour).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub hour: Option<u8>,
    /// The source (by source).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub source: Option<String>,
    /// Its counters.
    #[serde(flatten)]
    pub counts: Counts,
}

/// The period a stats answer covers.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[serde(rename_all = "camelCase")]
pub struct Period {
    /// First day, `YYYY-MM-DD`.
    pub from: String,
    /// Last day, `YYYY-MM-DD`.
    pub to: String,
    /// `day`, `hour` or `source`.
    pub group_by: String,
}

/// `GET /v1/stats`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
pub struct Stats {
    /// The records.
    pub stats: Vec<StatsRecord>,
    /// Counters over the whole period.
    pub totals: Counts,
    /// What the records cover.
    pub period: Period,
}

/// Today against yesterday.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[serde(rename_all = "camelCase")]
pub struct Comparison {
    /// Yesterday's total.
    pub yesterday_total: u64,
    /// Change from yesterday in percent, one decimal (written without `.0` when whole).
    #[cfg_attr(feature = "openapi", schema(value_type = f64))]
    pub change_percent: serde_json::Number,
    /// `up`, `down` or `stable`.
    pub trend: String,
}

/// `GET /v1/stats/summary`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
pub struct Summary {
    /// Counters for the current UTC day.
    pub today: Counts,
    /// Against yesterday.
    pub comparison: Comparison,
}
