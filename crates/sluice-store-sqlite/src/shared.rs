//! Tenancy and accounts: the queries both stores share (`sluice_store_diesel`), expanded for
//! SQLite, and how they run here ([`Calls`]): through diesel-async's wrapper of the pooled
//! connection, writers taking this process's write lock first and transactions starting with
//! `BEGIN IMMEDIATE`.

use diesel::result::Error as DieselError;
use sluice_store::StoreError;
use sluice_store_diesel::{Calls, TransactionError, TransactionWork, Work};

use crate::connection::{AsyncSqlite, SqliteStore};
use crate::error::from_diesel;

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
                    .map_err(|error: TransactionError| error.into_store(from_diesel))
            })
        })
        .await
    }

    fn from_diesel(error: DieselError) -> StoreError {
        from_diesel(error)
    }
}

sluice_store_diesel::tenancy!(store: SqliteStore, connection: AsyncSqlite, bootstrap_lock: None);

sluice_store_diesel::accounts!(store: SqliteStore, connection: AsyncSqlite, lock_rows: []);
