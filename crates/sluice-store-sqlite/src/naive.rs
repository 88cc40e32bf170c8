//! The ingest benchmark's naive baseline on SQLite (`sluice serve --bench-naive-writes`): what
//! a first endpoint does, against which the real write path is measured in the same run. Each
//! request is one `BEGIN IMMEDIATE` transaction inserting its rows into a plain table and their
//! messages into an FTS5 trigram table, on a pool of four connections waiting on the write
//! lock. No counters, quota or other indexes.

use std::path::Path;
use std::time::Duration;

use async_trait::async_trait;
use deadpool::Runtime;
use diesel::connection::SimpleConnection;
use diesel::prelude::*;
use diesel_async::pooled_connection::AsyncDieselConnectionManager;
use diesel_async::pooled_connection::deadpool::Pool;
use sluice_store::group::GroupWriter;
use sluice_store::{StoreError, WriteBatch};
use sluice_store_diesel::naive::{NaiveRow, bench_naive_logs};

/// The full-text table (the macro makes public modules; this one stays private).
mod tables {
    diesel::table! {
        bench_naive_fts (rowid) {
            rowid -> BigInt,
            message -> Text,
        }
    }
}

use tables::bench_naive_fts;

/// The naive writer: four connections and the tables, made on first use.
pub struct NaiveWriter {
    pool: Pool<crate::connection::AsyncSqlite>,
}

fn failed(error: impl std::fmt::Display) -> StoreError {
    StoreError::Backend(error.to_string())
}

/// Every connection: durable commits, waiting for the write lock rather than failing.
const PRAGMAS: &str = "PRAGMA busy_timeout = 10000; PRAGMA synchronous = FULL; PRAGMA journal_mode = WAL;";

impl NaiveWriter {
    /// Opens the database at `path` and makes the tables when missing. Must be called inside a
    /// Tokio runtime.
    pub fn open(path: &Path) -> Result<Self, StoreError> {
        let url = path.to_str().ok_or_else(|| failed("the database path is not UTF-8"))?.to_owned();
        let mut connection = SqliteConnection::establish(&url).map_err(failed)?;
        connection
            .batch_execute(&format!(
                "{PRAGMAS} CREATE TABLE IF NOT EXISTS bench_naive_logs (id BLOB PRIMARY KEY, workspace_id BLOB NOT NULL, \
                 ts INTEGER NOT NULL, level TEXT NOT NULL, source TEXT NOT NULL, environment TEXT NOT NULL, \
                 message TEXT NOT NULL, data TEXT); \
                 CREATE VIRTUAL TABLE IF NOT EXISTS bench_naive_fts USING fts5(message, tokenize = 'trigram');"
            ))
            .map_err(failed)?;
        let pool = Pool::builder(AsyncDieselConnectionManager::new(url))
            .max_size(4)
            .wait_timeout(Some(Duration::from_secs(10)))
            .runtime(Runtime::Tokio1)
            .build()
            .map_err(failed)?;
        Ok(Self { pool })
    }

    async fn insert(&self, batch: WriteBatch) -> Result<(), StoreError> {
        let mut connection = self.pool.get().await.map_err(failed)?;
        connection
            .spawn_blocking(move |connection| {
                connection.batch_execute(PRAGMAS)?;
                let rows: Vec<NaiveRow<'_>> = batch.logs.iter().map(|log| NaiveRow::of(batch.workspace, log)).collect();
                let messages: Vec<_> =
                    batch.logs.iter().map(|log| bench_naive_fts::message.eq(log.entry.message.as_str())).collect();
                connection.immediate_transaction(|connection| {
                    diesel::insert_into(bench_naive_logs::table).values(&rows).execute(connection)?;
                    diesel::insert_into(bench_naive_fts::table).values(&messages).execute(connection)?;
                    Ok::<_, diesel::result::Error>(())
                })
            })
            .await
            .map_err(failed)
    }
}

#[async_trait]
impl GroupWriter for NaiveWriter {
    async fn write_group(&self, group: &[WriteBatch]) -> Result<Vec<Result<(), StoreError>>, StoreError> {
        Ok(sluice_store::one_by_one(group, |batch| self.insert(batch.clone())).await)
    }
}
