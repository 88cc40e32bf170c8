//! Reaching the database: the store's options, how the pool opens a connection (timeouts,
//! TCP keepalives, `statement_timeout`), the migrations applied on connect, and the time
//! limit every call of the store runs within.

use std::sync::Arc;
use std::sync::atomic::AtomicBool;
use std::time::Duration;

use async_trait::async_trait;
use deadpool::Runtime;
use deadpool::managed::QueueMode;
use diesel::connection::SimpleConnection;
use diesel::prelude::*;
use diesel_async::async_connection_wrapper::AsyncConnectionWrapper;
use diesel_async::pooled_connection::deadpool::{Object, Pool};
use diesel_async::pooled_connection::{AsyncDieselConnectionManager, ManagerConfig};
use diesel_async::{AsyncConnection, AsyncPgConnection, SimpleAsyncConnection};
use diesel_migrations::{EmbeddedMigrations, MigrationHarness, embed_migrations};
use sluice_model::WorkspaceId;
use sluice_store::blockstore::{HeadCache, head_cache};
use sluice_store::upgrade::{Progress, not_ready};
use sluice_store::{Clock, GroupOptions, Store, StoreError, system_clock};
use tokio::sync::watch;
use uuid::Uuid;

use crate::error::{backend, from_diesel, from_pool, unavailable};
use crate::slots::Slots;

/// The schema, applied in order on connect.
pub const MIGRATIONS: EmbeddedMigrations = embed_migrations!("../../migrations/postgres");

/// Advisory lock held while migrating.
const MIGRATION_LOCK: i64 = 7_355_908;

/// A pool of connections to one PostgreSQL database whose schema is current.
#[derive(Clone)]
pub struct PgStore {
    pub(crate) pool: Pool<AsyncPgConnection>,
    /// Decoded block heads, shared by the reads (`sluice_store::blockstore`).
    pub(crate) heads: HeadCache,
    /// Whether this process's merging task runs (`crate::blocks`).
    pub(crate) merging: Arc<AtomicBool>,
    /// [`PgOptions::merge_in_insert`].
    pub(crate) merge_in_insert: bool,
    /// When merges last vacuumed the blocks' tables (`crate::blocks`).
    pub(crate) vacuumed: Arc<std::sync::Mutex<Option<std::time::Instant>>>,
    pub(crate) call_timeout: Duration,
    pub(crate) group: GroupOptions,
    pub(crate) slots: Arc<Slots>,
    /// "Now": when a block was written, and so when small ones are due to merge.
    pub(crate) clock: Clock,
    /// How this store connects (for the live tail's listening connection, `crate::feed`).
    pub(crate) config: Arc<tokio_postgres::Config>,
    /// This server among those sharing the database, in its own announcements (`crate::feed`).
    pub(crate) server: String,
    /// Whether the last write found no room (`sluice_store::full`).
    pub(crate) full: Arc<sluice_store::full::FullState>,
    /// The conversion of logs kept as rows, when this start found some (`crate::upgrade`).
    pub(crate) upgrade: Option<watch::Receiver<Progress>>,
    /// Dropped with the last clone of the store, which stops the conversion's task.
    _upgrading: Arc<watch::Sender<()>>,
}

impl std::fmt::Debug for PgStore {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("PgStore").field("pool", &self.pool.status()).finish()
    }
}

/// How the store behaves.
#[derive(Clone, Debug)]
pub struct PgOptions {
    /// Connections in the pool.
    pub pool_size: usize,
    /// How long a call waits for a free connection before it fails as unavailable.
    pub wait_timeout: Duration,
    /// How long opening a new connection may take.
    pub create_timeout: Duration,
    /// How long checking an idle connection before reuse may take.
    pub recycle_timeout: Duration,
    /// How long one call of the store (a request's reads or its insert; one batch of a
    /// retention sweep) may take, waiting for a connection included, before it fails as
    /// unavailable. Also the server's `statement_timeout` and the sockets' TCP user timeout,
    /// so a network that stops answering without a reset cannot hold a request.
    pub call_timeout: Duration,
    /// How concurrent inserts are grouped into transactions.
    pub group: GroupOptions,
    /// Whether each insert merges the small blocks due before it answers (tests: reads then
    /// meet merged blocks at once), instead of a task of its own doing so after it.
    pub merge_in_insert: bool,
    /// "Now", for when blocks were written and are due to merge (the server passes the clock
    /// its requests use; tests move it).
    pub clock: Clock,
}

impl Default for PgOptions {
    fn default() -> Self {
        PgOptions {
            pool_size: 16,
            wait_timeout: Duration::from_secs(5),
            create_timeout: Duration::from_secs(5),
            recycle_timeout: Duration::from_secs(2),
            call_timeout: Duration::from_secs(10),
            merge_in_insert: false,
            // Three writers: one PostgreSQL backend runs one transaction on one core, so
            // concurrent groups use both (measured with `cargo xtask bench ingest`: 1 writer
            // 8.4k, 2 13.8k, 3 16.8k, 4 15.2-16.3k logs/s). They hold the rows every group
            // touches only around their commits (see `insert_group_once`).
            group: GroupOptions { writers: 3, max_rows: 5_000, ..GroupOptions::default() },
            clock: system_clock(),
        }
    }
}

/// Idle time before a connection's first TCP keepalive probe, the time between probes, and
/// how many may go unanswered: a peer that vanished is noticed within a minute.
const KEEPALIVE: (Duration, Duration, u32) = (Duration::from_secs(30), Duration::from_secs(10), 3);

/// How long `migrate` may take to connect.
const MIGRATE_CONNECT_TIMEOUT: Duration = Duration::from_secs(10);

/// How the pool opens a connection: the URL's settings, plus bounds for a network that stops
/// answering (where the URL sets none): a connect timeout, TCP keepalives, a TCP user timeout
/// and the server-side `statement_timeout`, so the server also stops a query its client gave
/// up on. A URL's own `options` come after ours and so win.
fn connection_config(url: &str, options: &PgOptions) -> Result<tokio_postgres::Config, StoreError> {
    let mut config: tokio_postgres::Config =
        url.parse().map_err(|error| backend(format!("the database URL: {error}")))?;
    if config.get_connect_timeout().is_none() {
        config.connect_timeout(options.create_timeout);
    }
    if config.get_tcp_user_timeout().is_none() {
        config.tcp_user_timeout(options.call_timeout);
    }
    let (idle, interval, retries) = KEEPALIVE;
    if config.get_keepalives_idle() > idle {
        config.keepalives_idle(idle);
    }
    if config.get_keepalives_interval().is_none() {
        config.keepalives_interval(interval);
    }
    if config.get_keepalives_retries().is_none() {
        config.keepalives_retries(retries);
    }
    let ours = format!("-c statement_timeout={}", options.call_timeout.as_millis());
    let merged = match config.get_options() {
        Some(theirs) if !theirs.trim().is_empty() => format!("{ours} {theirs}"),
        _ => ours,
    };
    config.options(merged);
    Ok(config)
}

impl PgStore {
    /// Applies the pending migrations to the database at `url`
    /// (`postgres://user:password@host:port/database`), opens the pool and, when the database
    /// still holds logs kept as rows, starts converting them into blocks (`crate::upgrade`).
    pub async fn connect(url: &str, options: &PgOptions) -> Result<PgStore, StoreError> {
        let config = Arc::new(connection_config(url, options)?);
        migrate(url).await?;
        let mut manager_config = ManagerConfig::default();
        let pooled = Arc::clone(&config);
        manager_config.custom_setup = Box::new(move |_url| {
            let config = Arc::clone(&pooled);
            Box::pin(async move {
                let (client, connection) = config
                    .connect(tokio_postgres::NoTls)
                    .await
                    .map_err(|error| ConnectionError::BadConnection(error.to_string()))?;
                AsyncPgConnection::try_from_client_and_connection(client, connection).await
            })
        });
        let manager = AsyncDieselConnectionManager::<AsyncPgConnection>::new_with_config(url, manager_config);
        // Last in, first out: the writers take back the connections they just returned. Each
        // connection keeps its send buffer at the size of the largest group it has sent (a few
        // MB); handed out in turn (first in, first out), all sixteen grew to that, and the
        // server's peak RSS crept up 20-40 MB over a full bench run (docs/PERFORMANCE.md).
        let pool = Pool::builder(manager)
            .queue_mode(QueueMode::Lifo)
            .max_size(options.pool_size)
            .wait_timeout(Some(options.wait_timeout))
            .create_timeout(Some(options.create_timeout))
            .recycle_timeout(Some(options.recycle_timeout))
            .runtime(Runtime::Tokio1)
            .build()
            .map_err(backend)?;
        let (upgrading, stop_upgrade) = watch::channel(());
        let mut store = PgStore {
            pool,
            heads: head_cache(),
            merging: Arc::default(),
            merge_in_insert: options.merge_in_insert,
            vacuumed: Arc::default(),
            call_timeout: options.call_timeout,
            group: options.group,
            slots: Arc::new(Slots::new()),
            clock: options.clock.clone(),
            config,
            server: Uuid::now_v7().simple().to_string(),
            full: Arc::new(sluice_store::full::FullState::new("the PostgreSQL database")),
            upgrade: None,
            _upgrading: Arc::new(upgrading),
        };
        store.upgrade = store.start_upgrade(stop_upgrade).await?;
        Ok(store)
    }

    /// `call`, failed as [`StoreError::Timeout`] when it takes longer than the call timeout.
    /// Dropping it mid-transaction leaves its connection marked broken, so the pool discards
    /// it; the server ends the statement by `statement_timeout`, the same figure. Work that
    /// goes on for as long as there is some (merges, retention, the upgrade) takes it a
    /// transaction at a time, so each step gets the full time and what is done stays done.
    pub(crate) async fn with_deadline<T>(
        &self,
        call: impl Future<Output = Result<T, StoreError>>,
    ) -> Result<T, StoreError> {
        tokio::time::timeout(self.call_timeout, call).await.unwrap_or_else(|_| {
            Err(StoreError::Timeout(format!("no answer from PostgreSQL within {} ms", self.call_timeout.as_millis())))
        })
    }

    /// A connection from the pool.
    pub(crate) async fn connection(&self) -> Result<Object<AsyncPgConnection>, StoreError> {
        self.pool.get().await.map_err(from_pool)
    }

    /// Whether the database answers (readiness).
    pub async fn ping(&self) -> Result<(), StoreError> {
        if let Some(error) = self.upgrade.as_ref().and_then(|progress| not_ready(&progress.borrow())) {
            return Err(error);
        }
        self.with_deadline(async {
            let mut connection = self.connection().await?;
            if !self.full.is_full() {
                return connection.batch_execute("SELECT 1").await.map_err(from_diesel);
            }
            // While the storage is full, ready again only once a write that needs a new page
            // would succeed: 8 KB of random text (TOAST cannot shrink it) written and rolled back.
            let probed = connection
                .batch_execute(
                    "BEGIN; CREATE TEMP TABLE IF NOT EXISTS room_probe (filler text) ON COMMIT DROP; \
                     INSERT INTO room_probe SELECT string_agg(md5(random()::text), '') FROM generate_series(1, 256); \
                     ROLLBACK;",
                )
                .await
                .map_err(from_diesel);
            if probed.is_err() {
                let _ = connection.batch_execute("ROLLBACK").await;
            }
            self.full.note(&probed);
            probed
        })
        .await
    }
}

/// Runs the pending migrations on a connection of their own, on a blocking thread (diesel's
/// migration harness is synchronous; the wrapper drives the async connection there).
pub async fn migrate(url: &str) -> Result<(), StoreError> {
    let connection = tokio::time::timeout(MIGRATE_CONNECT_TIMEOUT, AsyncPgConnection::establish(url))
        .await
        .map_err(|_| unavailable(format!("no answer from PostgreSQL within {MIGRATE_CONNECT_TIMEOUT:?}")))?
        .map_err(unavailable)?;
    tokio::task::spawn_blocking(move || {
        let mut connection: AsyncConnectionWrapper<AsyncPgConnection> = AsyncConnectionWrapper::from(connection);
        // One server at a time: two starting together must not both apply a migration.
        SimpleConnection::batch_execute(&mut connection, &format!("SELECT pg_advisory_lock({MIGRATION_LOCK})"))
            .map_err(backend)?;
        let applied = connection
            .run_pending_migrations(MIGRATIONS)
            .map(|_| ())
            .map_err(|error| backend(format!("migrations: {error}")));
        let unlocked =
            SimpleConnection::batch_execute(&mut connection, &format!("SELECT pg_advisory_unlock({MIGRATION_LOCK})"))
                .map_err(backend);
        applied.and(unlocked)
    })
    .await
    .map_err(backend)?
}

#[async_trait]
impl Store for PgStore {
    fn pool_status(&self) -> Option<sluice_store::PoolStatus> {
        Some(sluice_store_diesel::pool_status(self.pool.status()))
    }

    async fn ping(&self) -> Result<(), StoreError> {
        PgStore::ping(self).await
    }

    /// `NOTIFY` on the live tail's channel (`crate::feed`).
    async fn announce(&self, batches: &[sluice_store::Announced]) -> Result<(), StoreError> {
        self.notify(batches).await
    }

    /// A row of `tail_watches` a workspace (`crate::feed`).
    async fn watch(&self, workspaces: &[WorkspaceId]) -> Result<(), StoreError> {
        self.watch_workspaces(workspaces).await
    }

    /// `LISTEN` on a connection of its own (`crate::feed`).
    fn follow(
        &self,
        watched: sluice_store::Watched,
        deliver: sluice_store::Deliver,
        stop: watch::Receiver<bool>,
    ) -> bool {
        self.listen(watched, deliver, stop);
        true
    }

    /// Housekeeping: the live tail's lapsed watches, and the merges due (those of a
    /// workspace that stopped sending, whose small blocks waited long enough).
    async fn maintain(&self) -> Result<(), StoreError> {
        let mut connection = self.with_deadline(self.connection()).await?;
        self.with_deadline(self.forget_lapsed_watches(&mut connection)).await?;
        drop(connection);
        self.merge_due().await.map(|_| ())
    }

    fn upgrade_progress(&self) -> Option<watch::Receiver<Progress>> {
        self.upgrade.clone()
    }
}
