//! The ingest benchmark's naive baseline table (`sluice serve --bench-naive-writes`): a plain
//! table of logs, the same on both databases; each store adds its own text index.

use diesel::Insertable;
use sluice_model::{JsonObject, Log, WorkspaceId};

use crate::DbId;

/// The naive table.
#[expect(missing_docs, reason = "diesel's column types: each column is named as the bench creates it")]
mod tables {
    diesel::table! {
        use diesel::sql_types::*;
        use crate::Id;

        /// The naive baseline's logs.
        bench_naive_logs (id) {
            id -> Id,
            workspace_id -> Id,
            ts -> BigInt,
            level -> Text,
            source -> Text,
            environment -> Text,
            message -> Text,
            data -> Nullable<Text>,
        }
    }
}

pub use tables::bench_naive_logs;

/// One row of the naive table.
#[derive(Insertable)]
#[diesel(table_name = bench_naive_logs)]
pub struct NaiveRow<'a> {
    id: DbId,
    workspace_id: DbId,
    ts: i64,
    level: &'a str,
    source: &'a str,
    environment: &'a str,
    message: &'a str,
    data: Option<&'a str>,
}

impl<'a> NaiveRow<'a> {
    /// The row of `log`, a log of `workspace`.
    pub fn of(workspace: WorkspaceId, log: &'a Log) -> Self {
        NaiveRow {
            id: log.id.into(),
            workspace_id: workspace.into(),
            ts: log.entry.timestamp,
            level: log.entry.level.as_str(),
            source: &log.entry.source,
            environment: log.entry.environment.as_str(),
            message: &log.entry.message,
            data: log.entry.data.as_ref().map(JsonObject::as_str),
        }
    }
}
