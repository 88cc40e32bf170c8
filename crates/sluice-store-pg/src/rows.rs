//! Rows as PostgreSQL holds them (ids as UUIDs, text encoded: [`crate::text`]), and their
//! conversion to and from the model's types, through `sluice_store::rows` for what both
//! stores share.

use diesel::prelude::*;
use diesel::sql_types::{BigInt, Nullable};
use sluice_model::{Log, LogId};
use sluice_store::StoreError;
use sluice_store::rows::LogColumns;
use uuid::Uuid;

use crate::schema::logs;
use crate::text::{decode, decode_option};

/// A log as read back.
#[derive(Queryable, QueryableByName, Selectable)]
#[diesel(table_name = logs, check_for_backend(diesel::pg::Pg))]
pub(crate) struct LogRow {
    pub(crate) id: Uuid,
    pub(crate) ts: i64,
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

    /// The row's columns, text decoded as it was sent (`data` is JSON text, stored as it is),
    /// read as the model's log.
    fn try_from(row: LogRow) -> Result<Self, StoreError> {
        Log::try_from(LogColumns {
            id: LogId::from_uuid(row.id),
            ts: row.ts,
            level: row.level,
            environment: row.environment,
            source: decode(row.source),
            dataset: decode(row.dataset),
            message: decode(row.message),
            version: decode_option(row.version),
            user_id: decode_option(row.user_id),
            session_id: decode_option(row.session_id),
            request_id: decode_option(row.request_id),
            data: row.data,
            error_name: decode_option(row.error_name),
            error_stack: decode_option(row.error_stack),
            tags: row.tags,
            flow_id: decode_option(row.flow_id),
            step_index: row.step_index,
            country: decode_option(row.country),
            ip_address: decode_option(row.ip_address),
        })
    }
}

/// A sum, NULL over no rows, as a raw query reads it.
#[derive(QueryableByName)]
pub(crate) struct Total {
    #[diesel(sql_type = Nullable<BigInt>)]
    pub(crate) total: Option<i64>,
}
