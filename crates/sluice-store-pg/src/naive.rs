//! The ingest benchmark's naive baseline on PostgreSQL (`sluice serve --bench-naive-writes`):
//! what a first endpoint does, against which the real write path is measured in the same
//! run. Each request is one transaction with one multi-row `INSERT` into a plain table
//! carrying a pg_trgm index on the message, over a pool of four connections. No partitions,
//! counters, quota or other indexes.

use async_trait::async_trait;
use diesel_async::pooled_connection::AsyncDieselConnectionManager;
use diesel_async::pooled_connection::deadpool::Pool;
use diesel_async::{AsyncConnection, AsyncPgConnection, RunQueryDsl, SimpleAsyncConnection};
use sluice_store::group::GroupWriter;
use sluice_store::{StoreError, WriteBatch};
use sluice_store_diesel::naive::{NaiveRow, bench_naive_logs};

/// The naive writer: a pool of four and the table, made on first use.
pub struct NaiveWriter {
    pool: Pool<AsyncPgConnection>,
}

fn failed(error: impl std::fmt::Display) -> StoreError {
    StoreError::Backend(error.to_string())
}

impl NaiveWriter {
    /// Connects to `url` and makes the table and its trigram index when missing.
    pub async fn connect(url: &str) -> Result<Self, StoreError> {
        let pool = Pool::builder(AsyncDieselConnectionManager::<AsyncPgConnection>::new(url))
            .max_size(4)
            .build()
            .map_err(failed)?;
        let mut connection = pool.get().await.map_err(failed)?;
        connection
            .batch_execute(
                "CREATE EXTENSION IF NOT EXISTS pg_trgm; \
                 CREATE TABLE IF NOT EXISTS bench_naive_logs (id UUID PRIMARY KEY, workspace_id UUID NOT NULL, \
                 ts BIGINT NOT NULL, level TEXT NOT NULL, source TEXT NOT NULL, environment TEXT NOT NULL, \
                 message TEXT NOT NULL, data TEXT); \
                 CREATE INDEX IF NOT EXISTS bench_naive_logs_message ON bench_naive_logs USING gin (message gin_trgm_ops);",
            )
            .await
            .map_err(failed)?;
        drop(connection);
        Ok(Self { pool })
    }

    async fn insert(&self, batch: &WriteBatch) -> Result<(), StoreError> {
        let rows: Vec<NaiveRow<'_>> = batch.logs.iter().map(|log| NaiveRow::of(batch.workspace, log)).collect();
        let mut connection = self.pool.get().await.map_err(failed)?;
        (*connection)
            .transaction::<_, diesel::result::Error, _>(async move |connection: &mut AsyncPgConnection| {
                diesel::insert_into(bench_naive_logs::table).values(&rows).execute(connection).await?;
                Ok(())
            })
            .await
            .map_err(failed)
    }
}

#[async_trait]
impl GroupWriter for NaiveWriter {
    async fn write_group(&self, group: &[WriteBatch]) -> Result<Vec<Result<(), StoreError>>, StoreError> {
        Ok(sluice_store::one_by_one(group, |batch| self.insert(batch)).await)
    }
}
