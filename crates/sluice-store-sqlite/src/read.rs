//! Reading logs back: a workspace's logs under a filter, newest first, a page at a time, and
//! one log by its id.

use async_trait::async_trait;
use diesel::prelude::*;
use diesel::sqlite::Sqlite;
use sluice_model::{Log, LogId, WorkspaceId};
use sluice_store::{LogFilter, LogPage, LogReads, Page, StoreError};

use crate::connection::{SqliteStore, from_diesel};
use crate::rows::LogRow;
use crate::schema::logs;

/// The workspace's logs matching `filter`, as a query still open to more conditions. Each row
/// it steps calls `sluice_alive`, so the statement ends when its call's deadline passes.
pub(crate) fn filtered(workspace: &WorkspaceId, filter: &LogFilter) -> logs::BoxedQuery<'static, Sqlite> {
    let mut query = logs::table
        .filter(logs::workspace_id.eq(workspace.as_bytes().to_vec()))
        .filter(crate::search::functions::sluice_alive())
        .into_boxed();
    if let Some(level) = filter.level {
        query = query.filter(logs::level.eq(level.as_str()));
    }
    if let Some(environment) = filter.environment {
        query = query.filter(logs::environment.eq(environment.as_str()));
    }
    if let Some(source) = filter.source.clone() {
        query = query.filter(logs::source.eq(source));
    }
    if let Some(dataset) = filter.dataset.clone() {
        query = query.filter(logs::dataset.eq(dataset));
    }
    if let Some(user_id) = filter.user_id.clone() {
        query = query.filter(logs::user_id.eq(user_id));
    }
    if let Some(session_id) = filter.session_id.clone() {
        query = query.filter(logs::session_id.eq(session_id));
    }
    if let Some(flow_id) = filter.flow_id.clone() {
        query = query.filter(logs::flow_id.eq(flow_id));
    }
    if let Some(from) = filter.from {
        query = query.filter(logs::ts.ge(from));
    }
    if let Some(to) = filter.to {
        query = query.filter(logs::ts.le(to));
    }
    query
}

#[async_trait]
impl LogReads for SqliteStore {
    async fn list_logs(&self, workspace: WorkspaceId, filter: &LogFilter, page: Page) -> Result<LogPage, StoreError> {
        let filter = filter.clone();
        self.with_connection(move |connection| {
            let offset = i64::try_from(page.offset).unwrap_or(i64::MAX);
            let rows: Vec<LogRow> = filtered(&workspace, &filter)
                .order((logs::ts.desc(), logs::id.desc()))
                .limit(i64::from(page.limit) + 1)
                .offset(offset)
                .select(LogRow::as_select())
                .load(connection)
                .map_err(from_diesel)?;
            let has_more = rows.len() > page.limit as usize;
            let logs = rows.into_iter().take(page.limit as usize).map(Log::try_from).collect::<Result<_, _>>()?;
            Ok(LogPage { logs, has_more })
        })
        .await
    }

    async fn get_log(&self, workspace: WorkspaceId, id: LogId) -> Result<Option<Log>, StoreError> {
        self.with_connection(move |connection| {
            logs::table
                .filter(logs::id.eq(id.as_bytes().to_vec()))
                .filter(logs::workspace_id.eq(workspace.as_bytes().to_vec()))
                .select(LogRow::as_select())
                .first(connection)
                .optional()
                .map_err(from_diesel)?
                .map(Log::try_from)
                .transpose()
        })
        .await
    }

    async fn logs_after(&self, workspace: WorkspaceId, after: LogId, limit: u32) -> Result<Vec<Log>, StoreError> {
        self.with_connection(move |connection| {
            let rows: Vec<LogRow> = logs::table
                .filter(logs::workspace_id.eq(workspace.as_bytes().to_vec()))
                .filter(logs::id.gt(after.as_bytes().to_vec()))
                .order(logs::id.desc())
                .limit(i64::from(limit))
                .select(LogRow::as_select())
                .load(connection)
                .map_err(from_diesel)?;
            rows.into_iter().rev().map(Log::try_from).collect()
        })
        .await
    }
}
