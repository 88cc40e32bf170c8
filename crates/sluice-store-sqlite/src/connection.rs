//! Opening the store: the SQLite file's connections (their pragmas and pool), its migrations,
//! and the [`SqliteStore`] they make up.

use std::path::Path;
use std::sync::Arc;
use std::time::{Duration, Instant};

use async_trait::async_trait;

use deadpool::Runtime;
use diesel::connection::SimpleConnection;
use diesel::prelude::*;
use diesel_async::pooled_connection::deadpool::Pool;
use diesel_async::pooled_connection::{AsyncDieselConnectionManager, ManagerConfig, RecyclingMethod};
use diesel_async::sync_connection_wrapper::SyncConnectionWrapper;
use diesel_migrations::{EmbeddedMigrations, MigrationHarness, embed_migrations};
use sluice_store::blockstore::HeadCache;
use sluice_store::upgrade::{Progress, not_ready};
use sluice_store::{Clock, Store, StoreError};
use sluice_store_diesel::Work;
use tokio::sync::watch;

use crate::background::Background;
use crate::config::SqliteOptions;
use crate::deadline::{DeadlineScope, register_functions};
use crate::error::{backend, from_diesel};
use crate::lock::WriteLock;

pub(crate) const MIGRATIONS: EmbeddedMigrations = embed_migrations!("../../migrations/sqlite");

/// A pooled connection: diesel's SQLite connection behind diesel-async's wrapper, which runs
/// its work on a blocking thread.
pub(crate) type AsyncSqlite = SyncConnectionWrapper<SqliteConnection>;

/// A store in one SQLite file.
#[derive(Clone)]
pub struct SqliteStore {
    pool: Pool<AsyncSqlite>,
    /// Decoded block heads, shared by the reads (`sluice_store::blockstore`).
    pub(crate) heads: HeadCache,
    /// `None` when each insert merges the small blocks due ([`SqliteOptions::merge_every`]).
    pub(crate) merge_every: Option<Duration>,
    /// Held by whoever takes SQLite's write lock in this process for logs (inserts, merges,
    /// retention, the upgrade, and the checkpoint that starts the log over), so they hand it
    /// to each other at once instead of through SQLite's busy handler, which sleeps in steps
    /// of up to 100 ms.
    pub(crate) write_lock: Arc<WriteLock>,
    /// How long one call may take ([`SqliteOptions::call_timeout`]).
    call_timeout: Duration,
    /// Whether the last write found no room (`sluice_store::full`).
    pub(crate) full: Arc<sluice_store::full::FullState>,
    /// Now.
    pub(crate) clock: Clock,
    /// The conversion of logs kept as rows, when this start found some (`crate::upgrade`).
    upgrade: Option<watch::Receiver<Progress>>,
    /// Runs while any clone of the store lives.
    _background: Arc<Background>,
}

impl std::fmt::Debug for SqliteStore {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("SqliteStore").field("pool", &self.pool.status()).finish()
    }
}

/// Settings every connection gets when the pool opens it. Each connection keeps its own page
/// cache, and over time the pool hands every one of them to the writer: 2 MB each (not SQLite's
/// default 8 MB here before) kept the server's peak RSS under sustained ingest from 233 MB to
/// about 150 MB at the same rate; the operating system's cache holds the file besides.
fn connection_pragmas(busy_timeout: Duration, max_pages: Option<u64>) -> String {
    let cap = max_pages.map(|pages| format!(" PRAGMA max_page_count = {pages};")).unwrap_or_default();
    format!(
        "PRAGMA busy_timeout = {}; PRAGMA synchronous = FULL; PRAGMA foreign_keys = ON; \
         PRAGMA cache_size = -2000; PRAGMA temp_store = MEMORY; PRAGMA wal_autocheckpoint = 0; \
         PRAGMA journal_size_limit = 67108864;{cap}",
        busy_timeout.as_millis()
    )
}

/// A write that needs new pages and leaves nothing: the readiness check's proof that the
/// storage has room again. 256 KiB, more than a group of 100-log requests takes, so a file
/// with room for less than a group does not pass for ready.
const ROOM_PROBE: &str =
    "BEGIN IMMEDIATE; INSERT INTO room_probe (filler) VALUES (randomblob(262144)); DELETE FROM room_probe; COMMIT;";

#[async_trait]
impl Store for SqliteStore {
    fn upgrade_progress(&self) -> Option<watch::Receiver<Progress>> {
        self.upgrade.clone()
    }

    fn pool_status(&self) -> Option<sluice_store::PoolStatus> {
        Some(sluice_store_diesel::pool_status(self.pool.status()))
    }

    async fn ping(&self) -> Result<(), StoreError> {
        // Readiness means "ingest would work": take the write lock and give it back, so a file
        // another process keeps locked fails the check instead of passing a trivial SELECT.
        // It queues behind this process's own writers on `write_lock` as they do: through
        // SQLite's busy handler alone, an index round or a seal taking the lock just as another
        // process let it go could outlast the busy timeout and fail the check (seen in CI).
        // While the storage is full it is ready again only once a write that needs new pages
        // commits (`ROOM_PROBE`): then ingest, which it stands for, would too.
        if let Some(error) = self.upgrade.as_ref().and_then(|progress| not_ready(&progress.borrow())) {
            return Err(error);
        }
        let (write_lock, full) = (self.write_lock.clone(), self.full.clone());
        self.with_connection(move |connection| {
            let _lock = write_lock.blocking_lock();
            if !full.is_full() {
                return connection.batch_execute("BEGIN IMMEDIATE; ROLLBACK;").map_err(from_diesel);
            }
            let probed = connection.batch_execute(ROOM_PROBE).map_err(from_diesel);
            if probed.is_err() {
                let _ = connection.batch_execute("ROLLBACK;");
            }
            full.note(&probed);
            probed
        })
        .await
    }
}

impl SqliteStore {
    /// Opens (creating when missing) the database at `path` with default options, and applies
    /// pending migrations. Must be called inside a Tokio runtime.
    pub fn open(path: &Path) -> Result<Self, StoreError> {
        Self::open_with(path, &SqliteOptions::default())
    }

    /// [`SqliteStore::open`] with explicit options.
    pub fn open_with(path: &Path, options: &SqliteOptions) -> Result<Self, StoreError> {
        if let Some(parent) = path.parent().filter(|parent| !parent.as_os_str().is_empty()) {
            std::fs::create_dir_all(parent)
                .map_err(|error| backend(format!("cannot create {}: {error}", parent.display())))?;
        }
        let url = path.to_str().ok_or_else(|| backend("the database path is not UTF-8"))?.to_owned();
        let mut connection = SqliteConnection::establish(&url).map_err(backend)?;
        // The cap in pages of the file's own size (4,096 bytes unless it was made otherwise).
        let max_pages = match options.max_bytes {
            Some(bytes) => {
                let page: i64 =
                    diesel::select(diesel::dsl::sql::<diesel::sql_types::BigInt>("page_size FROM pragma_page_size()"))
                        .get_result(&mut connection)
                        .map_err(backend)?;
                Some((bytes / u64::try_from(page).unwrap_or(4096).max(512)).max(1))
            }
            None => None,
        };
        let pragmas = connection_pragmas(options.busy_timeout, max_pages);
        connection.batch_execute(&pragmas).map_err(backend)?;
        register_functions(&mut connection).map_err(backend)?;
        connection.batch_execute("PRAGMA journal_mode = WAL;").map_err(backend)?;
        connection.run_pending_migrations(MIGRATIONS).map_err(|error| backend(format!("migrations: {error}")))?;
        let write_lock = Arc::new(WriteLock::new(()));
        let own = || -> Result<SqliteConnection, StoreError> {
            let mut own = SqliteConnection::establish(&url).map_err(backend)?;
            own.batch_execute(&pragmas).map_err(backend)?;
            register_functions(&mut own).map_err(backend)?;
            Ok(own)
        };
        let (upgrading, stop_upgrade) = std::sync::mpsc::channel::<()>();
        let upgrade = crate::upgrade::start(own()?, write_lock.clone(), options.clock.clone(), stop_upgrade)?;
        let merger = match options.merge_every {
            Some(every) => Some((own()?, every)),
            None => None,
        };
        let background =
            Arc::new(Background::start(connection, merger, write_lock.clone(), options.clock.clone(), upgrading)?);

        // Each connection gets the pragmas and functions first; a connection back in the pool
        // is taken again unchecked (a query to check it would cost every call a round).
        let mut manager_config = ManagerConfig::<AsyncSqlite>::default();
        manager_config.recycling_method = RecyclingMethod::Fast;
        manager_config.custom_setup = Box::new(move |url| {
            let (url, pragmas) = (url.to_owned(), pragmas.clone());
            Box::pin(async move {
                let mut connection = <AsyncSqlite as diesel_async::AsyncConnection>::establish(&url).await?;
                connection
                    .spawn_blocking(move |connection| {
                        connection.batch_execute(&pragmas)?;
                        register_functions(connection)
                    })
                    .await
                    .map_err(ConnectionError::CouldntSetupConfiguration)?;
                Ok(connection)
            })
        });
        let manager = AsyncDieselConnectionManager::new_with_config(url, manager_config);
        let pool = Pool::builder(manager)
            .max_size(options.pool_size)
            .runtime(Runtime::Tokio1)
            .wait_timeout(Some(options.wait_timeout))
            .create_timeout(Some(options.wait_timeout))
            .recycle_timeout(Some(options.wait_timeout))
            .build()
            .map_err(backend)?;
        Ok(Self {
            pool,
            heads: sluice_store::blockstore::head_cache(),
            merge_every: options.merge_every,
            write_lock,
            clock: options.clock.clone(),
            upgrade,
            call_timeout: options.call_timeout,
            full: Arc::new(sluice_store::full::FullState::new(format!("the SQLite database {}", path.display()))),
            _background: background,
        })
    }

    /// Runs `work` on a pooled connection, on a blocking thread, within the call's deadline
    /// (waiting for the connection included): a statement still running when it passes is
    /// stopped ([`crate::deadline`]). The call is [`Self::detached`].
    pub(crate) async fn with_connection<R, F>(&self, work: F) -> Result<R, StoreError>
    where
        R: Send + 'static,
        F: FnOnce(&mut SqliteConnection) -> Result<R, StoreError> + Send + 'static,
    {
        let deadline = Instant::now() + self.call_timeout;
        self.detached(None, move |connection: &mut AsyncSqlite| {
            Box::pin(async move {
                connection
                    .spawn_blocking(move |connection| {
                        let _scope = DeadlineScope::enter(deadline);
                        Ok(crate::deadline::check().and_then(|()| work(connection)))
                    })
                    .await
                    .map_err(from_diesel)?
            })
        })
        .await
    }

    /// Runs `work` on a pooled connection in a task of its own, holding this process's turn
    /// at the write lock when `write_lock` is given. The connection comes first, then the
    /// turn, as for every writer here, so a writer waiting for a connection never holds the
    /// lock. The task keeps the connection until `work` is done, whether or not the caller
    /// still waits: a caller that stops waiting (a client gone mid-request) must not hand the
    /// connection back to the pool while its statement still runs, or the next call to take
    /// it would find it in use. So only the waits for the connection and the turn count
    /// against the call's deadline here.
    pub(crate) async fn detached<R: Send + 'static>(
        &self,
        write_lock: Option<Arc<WriteLock>>,
        work: impl Work<AsyncSqlite, R>,
    ) -> Result<R, StoreError> {
        let (pool, timeout) = (self.pool.clone(), self.call_timeout);
        let waited_for = if write_lock.is_some() { "a connection and the write lock" } else { "a connection" };
        let call = tokio::spawn(async move {
            let ready = async {
                let connection = pool.get().await.map_err(|error| StoreError::Unavailable(error.to_string()))?;
                let turn = match write_lock {
                    Some(lock) => Some(lock.lock_owned().await),
                    None => None,
                };
                Ok::<_, StoreError>((connection, turn))
            };
            let (mut connection, _turn) = tokio::time::timeout(timeout, ready)
                .await
                .map_err(|_| StoreError::Timeout(format!("waited {} ms for {waited_for}", timeout.as_millis())))??;
            work(&mut connection).await
        });
        call.await.map_err(|error| backend(format!("a store call ended abnormally: {error}")))?
    }
}
