//! The PostgreSQL store of sluice: diesel-async over tokio-postgres (no libpq), pooled by
//! deadpool, migrations from `migrations/postgres` embedded and applied on connect.
//!
//! Work in progress (issue 5): the pool, its timeouts, the migrations and the readiness check
//! are here; the store traits are not implemented yet, so the server cannot select it.

use std::time::Duration;

use deadpool::Runtime;
use diesel::connection::SimpleConnection;
use diesel_async::async_connection_wrapper::AsyncConnectionWrapper;
use diesel_async::pooled_connection::deadpool::{Object, Pool, PoolError};
use diesel_async::pooled_connection::{AsyncDieselConnectionManager, PoolError as ConnectError};
use diesel_async::{AsyncConnection, AsyncPgConnection, SimpleAsyncConnection};
use diesel_migrations::{EmbeddedMigrations, MigrationHarness, embed_migrations};
use sluice_store::StoreError;

#[cfg(feature = "testing")]
pub mod testing;

/// The schema, applied in order on connect.
pub const MIGRATIONS: EmbeddedMigrations = embed_migrations!("../../migrations/postgres");

/// How the pool behaves.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PgOptions {
    /// Connections in the pool.
    pub pool_size: usize,
    /// How long a call waits for a free connection before it fails as unavailable.
    pub wait_timeout: Duration,
    /// How long opening a new connection may take.
    pub create_timeout: Duration,
    /// How long checking an idle connection before reuse may take.
    pub recycle_timeout: Duration,
}

impl Default for PgOptions {
    fn default() -> Self {
        PgOptions {
            pool_size: 16,
            wait_timeout: Duration::from_secs(5),
            create_timeout: Duration::from_secs(5),
            recycle_timeout: Duration::from_secs(2),
        }
    }
}

/// A pool of connections to one PostgreSQL database whose schema is current.
#[derive(Clone)]
pub struct PgStore {
    pool: Pool<AsyncPgConnection>,
}

impl std::fmt::Debug for PgStore {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("PgStore").field("pool", &self.pool.status()).finish()
    }
}

fn unavailable(error: impl std::fmt::Display) -> StoreError {
    StoreError::Unavailable(error.to_string())
}

fn backend(error: impl std::fmt::Display) -> StoreError {
    StoreError::Backend(error.to_string())
}

/// A pool error as the store's: anything about reaching the server is "unavailable".
fn from_pool(error: PoolError) -> StoreError {
    match error {
        PoolError::Backend(ConnectError::QueryError(error)) => backend(error),
        other => unavailable(other),
    }
}

impl PgStore {
    /// Applies the pending migrations to the database at `url`
    /// (`postgres://user:password@host:port/database`), then opens the pool.
    pub async fn connect(url: &str, options: &PgOptions) -> Result<PgStore, StoreError> {
        migrate(url).await?;
        let manager = AsyncDieselConnectionManager::<AsyncPgConnection>::new(url);
        let pool = Pool::builder(manager)
            .max_size(options.pool_size)
            .wait_timeout(Some(options.wait_timeout))
            .create_timeout(Some(options.create_timeout))
            .recycle_timeout(Some(options.recycle_timeout))
            .runtime(Runtime::Tokio1)
            .build()
            .map_err(backend)?;
        Ok(PgStore { pool })
    }

    /// A connection from the pool.
    async fn connection(&self) -> Result<Object<AsyncPgConnection>, StoreError> {
        self.pool.get().await.map_err(from_pool)
    }

    /// Whether the database answers (readiness).
    pub async fn ping(&self) -> Result<(), StoreError> {
        let mut connection = self.connection().await?;
        connection.batch_execute("SELECT 1").await.map_err(unavailable)
    }
}

/// Runs the pending migrations on a connection of their own, on a blocking thread (diesel's
/// migration harness is synchronous; the wrapper drives the async connection there).
pub async fn migrate(url: &str) -> Result<(), StoreError> {
    let connection = AsyncPgConnection::establish(url).await.map_err(unavailable)?;
    tokio::task::spawn_blocking(move || {
        let mut connection: AsyncConnectionWrapper<AsyncPgConnection> = AsyncConnectionWrapper::from(connection);
        // One server at a time: two starting together must not both apply a migration.
        SimpleConnection::batch_execute(&mut connection, "SELECT pg_advisory_lock(7355908)").map_err(backend)?;
        let applied = connection
            .run_pending_migrations(MIGRATIONS)
            .map(|_| ())
            .map_err(|error| backend(format!("migrations: {error}")));
        let unlocked =
            SimpleConnection::batch_execute(&mut connection, "SELECT pg_advisory_unlock(7355908)").map_err(backend);
        applied.and(unlocked)
    })
    .await
    .map_err(backend)?
}
