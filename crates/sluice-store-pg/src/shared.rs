//! Tenancy and accounts: the queries both stores share (`sluice_store_diesel`), expanded for
//! PostgreSQL, and how they run here ([`Calls`]): on a pooled connection within the call's
//! deadline, rows a transaction reads locked with `FOR UPDATE`.

use diesel::result::Error as DieselError;
use diesel_async::{AsyncConnection, AsyncPgConnection};
use sluice_store::StoreError;
use sluice_store_diesel::{Calls, TransactionError, TransactionWork, Work};

use crate::PgStore;
use crate::error::from_diesel;

impl Calls for PgStore {
    type Connection = AsyncPgConnection;

    async fn read<R: Send + 'static>(&self, work: impl Work<AsyncPgConnection, R>) -> Result<R, StoreError> {
        self.with_deadline(async move {
            let mut connection = self.connection().await?;
            work(&mut connection).await
        })
        .await
    }

    async fn write<R: Send + 'static>(&self, work: impl Work<AsyncPgConnection, R>) -> Result<R, StoreError> {
        self.read(work).await
    }

    async fn transaction<R: Send + 'static>(
        &self,
        work: impl TransactionWork<AsyncPgConnection, R>,
    ) -> Result<R, StoreError> {
        self.with_deadline(async move {
            let mut connection = self.connection().await?;
            (*connection)
                .transaction::<_, TransactionError, _>(async move |connection: &mut AsyncPgConnection| {
                    work(connection).await
                })
                .await
                .map_err(|error| error.into_store(from_diesel))
        })
        .await
    }

    fn from_diesel(error: DieselError) -> StoreError {
        from_diesel(error)
    }
}

sluice_store_diesel::tenancy!(
    store: PgStore,
    connection: AsyncPgConnection,
    bootstrap_lock: Some("LOCK TABLE workspaces IN EXCLUSIVE MODE"),
);

sluice_store_diesel::accounts!(
    store: PgStore,
    connection: AsyncPgConnection,
    lock_rows: [.for_update()],
);
