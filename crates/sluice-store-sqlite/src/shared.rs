//! Tenancy and accounts: the queries both stores share (`sluice_store_diesel`), expanded for
//! SQLite, and how they run here ([`Calls`]): through diesel-async's wrapper of the pooled
//! connection, writers taking this process's write lock first and transactions starting with
//! `BEGIN IMMEDIATE`.

use std::sync::Arc;

use diesel::result::Error as DieselError;
use sluice_store::StoreError;
use sluice_store_diesel::{Calls, TransactionWork, Work};

use crate::connection::{AsyncSqlite, SqliteStore};
use crate::error::{backend, from_diesel};
use crate::lock::WriteLock;

impl Calls for SqliteStore {
    type Connection = AsyncSqlite;

    async fn read<R: Send + 'static>(&self, work: impl Work<AsyncSqlite, R>) -> Result<R, StoreError> {
        self.detached(None, work).await
    }

    async fn write<R: Send + 'static>(&self, work: impl Work<AsyncSqlite, R>) -> Result<R, StoreError> {
        self.detached(Some(self.write_lock.clone()), work).await
    }

    async fn transaction<R: Send + 'static>(
        &self,
        work: impl TransactionWork<AsyncSqlite, R>,
    ) -> Result<R, StoreError> {
        self.detached(Some(self.write_lock.clone()), move |connection: &mut AsyncSqlite| {
            Box::pin(async move {
                connection
                    .immediate_transaction(async move |connection: &mut AsyncSqlite| work(connection).await)
                    .await
                    .map_err(from_diesel)?
            })
        })
        .await
    }

    fn from_diesel(error: DieselError) -> StoreError {
        from_diesel(error)
    }
}

impl SqliteStore {
    /// Runs `work` on a pooled connection in a task of its own, holding this process's turn
    /// at the write lock when `write_lock` is given. The connection comes first, then the
    /// turn, as for every writer here, so a writer waiting for a connection never holds the
    /// lock. The task keeps the connection until `work` is done, whether or not the caller
    /// still waits ([`SqliteStore::with_connection`] says why); so only the waits for the
    /// connection and the turn count against the call's deadline: a statement already running
    /// cannot be stopped from here.
    async fn detached<R: Send + 'static>(
        &self,
        write_lock: Option<Arc<WriteLock>>,
        work: impl Work<AsyncSqlite, R>,
    ) -> Result<R, StoreError> {
        let (pool, timeout) = (self.pool.clone(), self.call_timeout);
        let call = tokio::spawn(async move {
            let ready = async {
                let connection = pool.get().await.map_err(|error| StoreError::Unavailable(error.to_string()))?;
                let turn = match write_lock {
                    Some(lock) => Some(lock.lock_owned().await),
                    None => None,
                };
                Ok::<_, StoreError>((connection, turn))
            };
            let (mut connection, _turn) = tokio::time::timeout(timeout, ready).await.map_err(|_| {
                StoreError::Timeout(format!("no connection and turn to write within {} ms", timeout.as_millis()))
            })??;
            work(&mut connection).await
        });
        call.await.map_err(|error| backend(format!("a store call ended abnormally: {error}")))?
    }
}

sluice_store_diesel::tenancy!(store: SqliteStore, connection: AsyncSqlite, bootstrap_lock: None);

sluice_store_diesel::accounts!(store: SqliteStore, connection: AsyncSqlite, lock_rows: []);
