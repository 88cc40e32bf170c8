//! [`PgStore`] and the `sluice_store` traits it implements: each method is a call into the
//! module of its concern (`insert`, `list`, `search`, `rollups`, `retention`, `connection`);
//! `TenantStore` is implemented whole in `tenancy`.

use std::sync::{Arc, Mutex};
use std::time::Duration;

use async_trait::async_trait;
use diesel_async::AsyncPgConnection;
use diesel_async::pooled_connection::deadpool::Pool;
use sluice_model::{Log, LogId, WorkspaceId};
use sluice_query::stats::{CountBy, LevelCount, RollupFilter};
use sluice_store::{Clock, GroupOptions, LogFilter, LogPage, LogStore, Page, Search, Store, StoreError, WriteBatch};

use crate::partitions::Partitions;
use crate::slots::Slots;

/// A pool of connections to one PostgreSQL database whose schema is current.
#[derive(Clone)]
pub struct PgStore {
    pub(crate) pool: Pool<AsyncPgConnection>,
    /// The partitions of `logs` this process knows of (reloaded under the partition lock
    /// before any change, and whenever an insert finds one missing).
    pub(crate) partitions: Arc<Mutex<Partitions>>,
    pub(crate) dense_hits: i64,
    pub(crate) walk_rows: i64,
    pub(crate) call_timeout: Duration,
    pub(crate) group: GroupOptions,
    pub(crate) chunk_rows: usize,
    pub(crate) slots: Arc<Slots>,
    /// "Now", for which days get a partition of their own.
    pub(crate) clock: Clock,
}

impl std::fmt::Debug for PgStore {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("PgStore").field("pool", &self.pool.status()).finish()
    }
}

#[async_trait]
impl LogStore for PgStore {
    async fn insert_logs(&self, workspace: WorkspaceId, batch: &[Log]) -> Result<(), StoreError> {
        PgStore::insert_logs(self, workspace, batch).await
    }

    async fn insert_group(&self, group: &[WriteBatch]) -> Result<Vec<Result<(), StoreError>>, StoreError> {
        PgStore::insert_group(self, group).await
    }

    fn group_options(&self) -> GroupOptions {
        self.group
    }

    async fn list_logs(&self, workspace: WorkspaceId, filter: &LogFilter, page: Page) -> Result<LogPage, StoreError> {
        PgStore::list_logs(self, workspace, filter, page).await
    }

    async fn get_log(&self, workspace: WorkspaceId, id: LogId) -> Result<Option<Log>, StoreError> {
        PgStore::get_log(self, workspace, id).await
    }

    async fn monthly_usage(&self, workspace: WorkspaceId, month_ms: i64) -> Result<u64, StoreError> {
        PgStore::monthly_usage(self, workspace, month_ms).await
    }

    async fn search_logs(
        &self,
        workspace: WorkspaceId,
        search: &Search,
        filter: &LogFilter,
        page: Page,
    ) -> Result<LogPage, StoreError> {
        PgStore::search_logs(self, workspace, search, filter, page).await
    }

    async fn level_counts(
        &self,
        workspace: WorkspaceId,
        from_ms: i64,
        to_ms: i64,
        filter: &RollupFilter,
        by: CountBy,
    ) -> Result<Vec<LevelCount>, StoreError> {
        PgStore::level_counts(self, workspace, from_ms, to_ms, filter, by).await
    }

    async fn delete_logs_before(&self, workspace: WorkspaceId, cutoff_ms: i64) -> Result<u64, StoreError> {
        PgStore::delete_logs_before(self, workspace, cutoff_ms).await
    }

    async fn sweep(&self, cutoffs: &[(WorkspaceId, i64)]) -> Result<u64, StoreError> {
        PgStore::sweep(self, cutoffs).await
    }
}

#[async_trait]
impl Store for PgStore {
    async fn ping(&self) -> Result<(), StoreError> {
        PgStore::ping(self).await
    }

    async fn maintain(&self) -> Result<(), StoreError> {
        PgStore::maintain(self).await
    }
}
