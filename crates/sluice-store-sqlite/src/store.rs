//! The store traits of `sluice-store`, implemented by delegating to the modules of each
//! concern.

use async_trait::async_trait;
use sluice_model::{Log, LogId, WorkspaceId};
use sluice_query::stats::{CountBy, LevelCount, RollupFilter};
use sluice_store::{LogFilter, LogPage, LogStore, Page, Search, Store, StoreError, WriteBatch};

use crate::connection::SqliteStore;

#[async_trait]
impl LogStore for SqliteStore {
    async fn insert_logs(&self, workspace: WorkspaceId, batch: &[Log]) -> Result<(), StoreError> {
        let group = vec![WriteBatch { workspace, logs: batch.to_vec() }];
        sluice_store::only_answer(self.insert_owned(group).await?)
    }

    async fn insert_group(&self, group: &[WriteBatch]) -> Result<Vec<Result<(), StoreError>>, StoreError> {
        self.insert_owned(group.to_vec()).await
    }

    async fn monthly_usage(&self, workspace: WorkspaceId, month_ms: i64) -> Result<u64, StoreError> {
        self.usage_of_month(workspace, month_ms).await
    }

    async fn list_logs(&self, workspace: WorkspaceId, filter: &LogFilter, page: Page) -> Result<LogPage, StoreError> {
        self.list_page(workspace, filter, page).await
    }

    async fn get_log(&self, workspace: WorkspaceId, id: LogId) -> Result<Option<Log>, StoreError> {
        self.log_by_id(workspace, id).await
    }

    async fn search_logs(
        &self,
        workspace: WorkspaceId,
        search: &Search,
        filter: &LogFilter,
        page: Page,
    ) -> Result<LogPage, StoreError> {
        self.search_page(workspace, search, filter, page).await
    }

    async fn level_counts(
        &self,
        workspace: WorkspaceId,
        from_ms: i64,
        to_ms: i64,
        filter: &RollupFilter,
        by: CountBy,
    ) -> Result<Vec<LevelCount>, StoreError> {
        self.count_levels(workspace, from_ms, to_ms, filter, by).await
    }

    async fn delete_logs_before(&self, workspace: WorkspaceId, cutoff_ms: i64) -> Result<u64, StoreError> {
        self.delete_before(workspace, cutoff_ms).await
    }
}

#[async_trait]
impl Store for SqliteStore {
    async fn ping(&self) -> Result<(), StoreError> {
        self.check_writable().await
    }
}
