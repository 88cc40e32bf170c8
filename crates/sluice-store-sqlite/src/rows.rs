//! Rows as SQLite holds them (ids as blobs, text as sent), and their conversion to and from
//! the model's types through the mapping both stores share (`sluice_store::rows`).

use diesel::prelude::*;
use sluice_model::{Log, LogId};
use sluice_store::StoreError;
use sluice_store::rows::{LogColumns, corrupt};

use crate::schema::logs;

/// A log as the rows of `logs` kept it, before blocks (read by the upgrade).
#[derive(Queryable, QueryableByName, Selectable)]
#[diesel(table_name = logs, check_for_backend(diesel::sqlite::Sqlite))]
pub(crate) struct LogRow {
    id: Vec<u8>,
    ts: i64,
    level: String,
    environment: String,
    source: String,
    dataset: String,
    message: String,
    version: Option<String>,
    user_id: Option<String>,
    session_id: Option<String>,
    request_id: Option<String>,
    data: Option<String>,
    error_name: Option<String>,
    error_stack: Option<String>,
    tags: Option<String>,
    flow_id: Option<String>,
    step_index: Option<i32>,
    country: Option<String>,
    ip_address: Option<String>,
}

impl TryFrom<LogRow> for Log {
    type Error = StoreError;

    fn try_from(row: LogRow) -> Result<Self, StoreError> {
        LogColumns {
            id: LogId::from_slice(&row.id).ok_or_else(|| corrupt("log id"))?,
            ts: row.ts,
            level: row.level,
            environment: row.environment,
            source: row.source,
            dataset: row.dataset,
            message: row.message,
            version: row.version,
            user_id: row.user_id,
            session_id: row.session_id,
            request_id: row.request_id,
            data: row.data,
            error_name: row.error_name,
            error_stack: row.error_stack,
            tags: row.tags,
            flow_id: row.flow_id,
            step_index: row.step_index,
            country: row.country,
            ip_address: row.ip_address,
        }
        .try_into()
    }
}
