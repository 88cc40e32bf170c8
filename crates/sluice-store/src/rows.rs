//! Row <-> model mapping that does not depend on the backend: how a stored log's columns
//! become a [`Log`] (and the columns whose encoding both stores share: tags, step index),
//! how a workspace's plan and figures are stored, and the error a value the model refuses
//! becomes. Each store keeps only its diesel row types and their column types (ids as blobs
//! or UUIDs, text as sent or escaped), and hands the values here.

use std::str::FromStr;

use sluice_model::{JsonObject, Limits, Log, LogEntry, LogId, Plan};

use crate::StoreError;

/// The error for a stored value the model cannot read back.
pub fn corrupt(what: &str) -> StoreError {
    StoreError::Backend(format!("corrupt {what} in the database"))
}

/// A stored text column parsed into the model's type (level, environment, plan, scopes...).
pub fn parse_column<T: FromStr>(text: &str, what: &str) -> Result<T, StoreError> {
    text.parse().map_err(|_| corrupt(what))
}

/// A log's columns as read back, text as it was sent (a store that escapes text on the way
/// in decodes it before filling these).
#[derive(Debug, Clone)]
pub struct LogColumns {
    /// The log's id, already read from the backend's id type.
    pub id: LogId,
    /// `ts`: the log's timestamp, Unix ms.
    pub ts: i64,
    /// `level`, as `Level` spells it.
    pub level: String,
    /// `environment`, as `Environment` spells it.
    pub environment: String,
    /// `source`.
    pub source: String,
    /// `dataset`.
    pub dataset: String,
    /// `message`.
    pub message: String,
    /// `version`.
    pub version: Option<String>,
    /// `user_id`.
    pub user_id: Option<String>,
    /// `session_id`.
    pub session_id: Option<String>,
    /// `request_id`.
    pub request_id: Option<String>,
    /// `data`: a JSON object's text.
    pub data: Option<String>,
    /// `error_name`.
    pub error_name: Option<String>,
    /// `error_stack`.
    pub error_stack: Option<String>,
    /// `tags`: a JSON array's text ([`tags_column`]).
    pub tags: Option<String>,
    /// `flow_id`.
    pub flow_id: Option<String>,
    /// `step_index` ([`step_index_column`]).
    pub step_index: Option<i32>,
    /// `country`.
    pub country: Option<String>,
    /// `ip_address`.
    pub ip_address: Option<String>,
}

impl TryFrom<LogColumns> for Log {
    type Error = StoreError;

    fn try_from(row: LogColumns) -> Result<Self, StoreError> {
        let data = match row.data {
            Some(text) => Some(JsonObject::from_text(text).map_err(|_| corrupt("log data"))?),
            None => None,
        };
        let tags = match row.tags {
            Some(text) => Some(serde_json::from_str(&text).map_err(|_| corrupt("log tags"))?),
            None => None,
        };
        Ok(Log {
            id: row.id,
            entry: LogEntry {
                timestamp: row.ts,
                level: parse_column(&row.level, "log level")?,
                message: row.message,
                source: row.source.into(),
                environment: parse_column(&row.environment, "log environment")?,
                dataset: row.dataset.into(),
                version: row.version,
                user_id: row.user_id,
                session_id: row.session_id,
                request_id: row.request_id,
                data,
                error_name: row.error_name,
                error_stack: row.error_stack,
                tags,
                flow_id: row.flow_id,
                step_index: row
                    .step_index
                    .map(|index| u16::try_from(index).map_err(|_| corrupt("step index")))
                    .transpose()?,
            },
            country: row.country,
            ip_address: row.ip_address,
        })
    }
}

/// An entry's `tags` as stored: the JSON array's text.
pub fn tags_column(entry: &LogEntry) -> Option<String> {
    entry.tags.as_ref().and_then(|tags| serde_json::to_string(tags).ok())
}

/// An entry's `stepIndex` as stored.
pub fn step_index_column(entry: &LogEntry) -> Option<i32> {
    entry.step_index.map(i32::from)
}

/// A workspace's plan and figures as its row stores them (`None`: NULL, unlimited), written
/// on create and by `set_plan`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct PlanColumns {
    /// `plan`, as `Plan` spells it.
    pub plan: &'static str,
    /// `rate_limit`: requests a minute.
    pub rate_limit: Option<i32>,
    /// `monthly_quota`: logs a month.
    pub monthly_quota: Option<i64>,
    /// `retention_days`.
    pub retention_days: i32,
}

impl PlanColumns {
    /// The columns of `plan` with the figures in force, `limits` (saturating at the columns'
    /// range).
    pub fn new(plan: Plan, limits: &Limits) -> Self {
        PlanColumns {
            plan: plan.as_str(),
            rate_limit: limits.requests_per_minute.map(|limit| i32::try_from(limit).unwrap_or(i32::MAX)),
            monthly_quota: limits.logs_per_month.map(|quota| i64::try_from(quota).unwrap_or(i64::MAX)),
            retention_days: i32::try_from(limits.retention_days).unwrap_or(i32::MAX),
        }
    }

    /// The figures in force, as read back from the columns (a negative figure reads as 0).
    pub fn limits(rate_limit: Option<i32>, monthly_quota: Option<i64>, retention_days: i32) -> Limits {
        Limits {
            requests_per_minute: rate_limit.map(|limit| u32::try_from(limit).unwrap_or(0)),
            logs_per_month: monthly_quota.map(|quota| u64::try_from(quota).unwrap_or(0)),
            retention_days: u32::try_from(retention_days).unwrap_or(0),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn plan_figures_round_trip_and_saturate() {
        let limits = Plan::Pro.limits();
        let columns = PlanColumns::new(Plan::Pro, &limits);
        assert_eq!(PlanColumns::limits(columns.rate_limit, columns.monthly_quota, columns.retention_days), limits);
        let huge =
            Limits { requests_per_minute: Some(u32::MAX), logs_per_month: Some(u64::MAX), retention_days: u32::MAX };
        let columns = PlanColumns::new(Plan::Enterprise, &huge);
        assert_eq!(
            (columns.rate_limit, columns.monthly_quota, columns.retention_days),
            (Some(i32::MAX), Some(i64::MAX), i32::MAX)
        );
        assert_eq!(
            PlanColumns::limits(Some(-1), Some(-1), -1),
            Limits { requests_per_minute: Some(0), logs_per_month: Some(0), retention_days: 0 }
        );
    }

    #[test]
    fn unreadable_columns_are_corrupt_not_panics() {
        let columns = LogColumns {
            id: LogId::generate(),
            ts: 0,
            level: "loud".into(),
            environment: "production".into(),
            source: "s".into(),
            dataset: "d".into(),
            message: "m".into(),
            version: None,
            user_id: None,
            session_id: None,
            request_id: None,
            data: None,
            error_name: None,
            error_stack: None,
            tags: None,
            flow_id: None,
            step_index: None,
            country: None,
            ip_address: None,
        };
        let error = Log::try_from(columns.clone()).expect_err("an unknown level");
        assert_eq!(error.to_string(), "database error: corrupt log level in the database");
        let bad_step = LogColumns { level: "info".into(), step_index: Some(-1), ..columns.clone() };
        assert!(Log::try_from(bad_step).is_err());
        let bad_data = LogColumns { level: "info".into(), data: Some("[1]".into()), ..columns.clone() };
        assert!(Log::try_from(bad_data).is_err());
        let fine = LogColumns { level: "info".into(), tags: Some(r#"["a"]"#.into()), step_index: Some(3), ..columns };
        let log = Log::try_from(fine).expect("readable");
        assert_eq!((log.entry.tags, log.entry.step_index), (Some(vec!["a".to_owned()]), Some(3)));
    }
}
