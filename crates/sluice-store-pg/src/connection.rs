//! Reaching the database: the store's options, how the pool opens a connection (timeouts,
//! TCP keepalives, `statement_timeout`), the migrations applied on connect, and the time
//! limit every call of the store runs within.

use std::sync::{Arc, Mutex};
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
use sluice_store::{Clock, GroupOptions, Store, StoreError, system_clock};
use uuid::Uuid;

use crate::chunks;
use crate::error::{backend, from_diesel, from_pool, unavailable};
use crate::partitions::Partitions;
use crate::slots::Slots;

/// The schema, applied in order on connect.
pub const MIGRATIONS: EmbeddedMigrations = embed_migrations!("../../migrations/postgres");

/// Advisory lock held while migrating.
const MIGRATION_LOCK: i64 = 7_355_908;

/// The time one step of the store's work may take: a request's call
/// ([`PgStore::with_deadline`]), or one transaction or statement of work that goes on for as
/// long as there is some (sealing, housekeeping, indexing what connect finds unindexed). A
/// deadline for the whole of such work would end it wherever it stood once there was more
/// than one step's worth: a seal due behind another, an `ANALYZE` behind the seals (seen
/// under PostgreSQL ingest, docs/PERFORMANCE.md, issue 24), and a store with a backlog would
/// never get past it. Step by step, each gets the full time and what is done stays done.
#[derive(Clone, Copy, Debug)]
pub(crate) struct Deadline(pub(crate) Duration);

impl Deadline {
    /// `call`, failed as [`StoreError::Timeout`] when it takes longer than this deadline.
    pub(crate) async fn call<T>(self, call: impl Future<Output = Result<T, StoreError>>) -> Result<T, StoreError> {
        tokio::time::timeout(self.0, call).await.unwrap_or_else(|_| {
            Err(StoreError::Timeout(format!("no answer from PostgreSQL within {} ms", self.0.as_millis())))
        })
    }

    /// One step of diesel's work (a transaction, a statement) within this deadline.
    pub(crate) async fn step<T>(
        self,
        step: impl Future<Output = Result<T, diesel::result::Error>>,
    ) -> Result<T, StoreError> {
        self.call(async { step.await.map_err(from_diesel) }).await
    }
}

/// A pool of connections to one PostgreSQL database whose schema is current.
#[derive(Clone)]
pub struct PgStore {
    pub(crate) pool: Pool<AsyncPgConnection>,
    /// The partitions of `logs` this process knows of (reloaded under the partition lock
    /// before any change, and whenever an insert finds one missing).
    pub(crate) partitions: Arc<Mutex<Partitions>>,
    /// Chunks of a workspace's signatures gathered into one block.
    pub(crate) block_chunks: usize,
    /// [`PgOptions::search_listed_chunks`].
    pub(crate) listed_chunks: usize,
    /// The signatures of chunks not in a block yet that searches have read.
    pub(crate) signatures: crate::signatures::KeptSignatures,
    /// Sealed blocks' headers and bands that searches have read (block ids are chunk ids,
    /// from a sequence: never reused).
    pub(crate) blocks: sluice_store::signature::BlockCache,
    /// Chunks written per workspace by this process since it last looked for a block to seal
    /// ([`PgStore::seal_due`]).
    pub(crate) unsealed: Arc<Mutex<std::collections::HashMap<Uuid, usize>>>,
    /// Whether this process's sealing task runs ([`PgStore::after_insert`]).
    pub(crate) sealing: Arc<std::sync::atomic::AtomicBool>,
    /// Held by whatever seals blocks in this process, the sealing task and housekeeping, so
    /// the two never race for the same oldest signatures: housekeeping that lost that race
    /// eight times in a row returned with blocks still due while the task went on.
    pub(crate) seal_lock: Arc<tokio::sync::Mutex<()>>,
    /// Whether this process's task signing lost chunks again runs
    /// ([`PgStore::sign_again_in_background`]).
    pub(crate) signing_again: Arc<std::sync::atomic::AtomicBool>,
    pub(crate) call_timeout: Duration,
    pub(crate) group: GroupOptions,
    pub(crate) chunk_rows: usize,
    pub(crate) slots: Arc<Slots>,
    /// "Now", for which days get a partition of their own.
    pub(crate) clock: Clock,
    /// How this store connects (for the live tail's listening connection, `crate::feed`).
    pub(crate) config: Arc<tokio_postgres::Config>,
    /// This server among those sharing the database, in its own announcements (`crate::feed`).
    pub(crate) server: String,
    /// What chunk walks (searches, and lists filtered on a facet) have read since the store
    /// connected.
    pub(crate) walk_reads: Arc<WalkReadCounts>,
    /// Whether the last write found no room (`sluice_store::full`).
    pub(crate) full: Arc<sluice_store::full::FullState>,
}

/// Counts of what chunk walks read ([`PgStore::walk_reads`]).
#[derive(Default)]
pub(crate) struct WalkReadCounts {
    pub(crate) logs_by_id: std::sync::atomic::AtomicU64,
    pub(crate) chunks_whole: std::sync::atomic::AtomicU64,
    pub(crate) chunks_sifted: std::sync::atomic::AtomicU64,
}

/// What chunk walks have read since a store connected ([`PgStore::walk_reads`]).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct WalkReads {
    /// Logs read by id: those their chunk's key filters let through.
    pub logs_by_id: u64,
    /// Chunks read whole: without key filters, for a needle they cannot narrow or a common
    /// one.
    pub chunks_whole: u64,
    /// Chunks read with the ids their key filters let through tested first: those letting
    /// more logs through than are read by id.
    pub chunks_sifted: u64,
}

impl std::fmt::Debug for PgStore {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("PgStore").field("pool", &self.pool.status()).finish()
    }
}

/// How the store behaves.
#[derive(Clone)]
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
    /// The most logs one chunk of the search index covers ([`chunks`]): more make ingest
    /// cheaper (fewer distinct trigrams per log) and a rare needle's search read more logs.
    pub index_chunk_rows: usize,
    /// The chunks whose signatures are gathered into one block, bit-sliced
    /// (`sluice_store::signature`): at most `sluice_store::signature::BLOCK_CHUNKS`, the
    /// default. A search reads a band per position and block; the chunks not in a block yet
    /// are tested from signatures kept in memory.
    pub index_block_chunks: usize,
    /// The most chunks a search names to the database by id (or lists as it narrows a rare
    /// needle's blocks newest first): more (a common needle, as estimated from the newest
    /// blocks, or found so in older ones) are found by walking the workspace's chunks newest
    /// first, each block narrowed only once the walk reaches it (`crate::allowed`).
    pub search_listed_chunks: usize,
    /// "Now", for housekeeping: which days get a partition of their own (the server passes
    /// the clock its requests use; tests move it).
    pub clock: Clock,
}

impl std::fmt::Debug for PgOptions {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("PgOptions")
            .field("pool_size", &self.pool_size)
            .field("wait_timeout", &self.wait_timeout)
            .field("create_timeout", &self.create_timeout)
            .field("recycle_timeout", &self.recycle_timeout)
            .field("call_timeout", &self.call_timeout)
            .field("group", &self.group)
            .field("index_chunk_rows", &self.index_chunk_rows)
            .field("index_block_chunks", &self.index_block_chunks)
            .field("search_listed_chunks", &self.search_listed_chunks)
            .finish_non_exhaustive()
    }
}

impl Default for PgOptions {
    fn default() -> Self {
        PgOptions {
            pool_size: 16,
            wait_timeout: Duration::from_secs(5),
            create_timeout: Duration::from_secs(5),
            recycle_timeout: Duration::from_secs(2),
            call_timeout: Duration::from_secs(10),
            index_chunk_rows: 256,
            index_block_chunks: sluice_store::signature::BLOCK_CHUNKS,
            search_listed_chunks: crate::search::LISTED_CHUNKS,
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
    /// (`postgres://user:password@host:port/database`), opens the pool and creates the
    /// partitions of the days around today.
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
        let store = PgStore {
            pool,
            partitions: Arc::new(Mutex::new(Partitions::default())),
            block_chunks: options.index_block_chunks,
            listed_chunks: options.search_listed_chunks.max(1),
            signatures: crate::signatures::KeptSignatures::new(),
            blocks: sluice_store::signature::BlockCache::new(),
            unsealed: Arc::default(),
            sealing: Arc::default(),
            seal_lock: Arc::default(),
            signing_again: Arc::default(),
            call_timeout: options.call_timeout,
            group: options.group,
            chunk_rows: options.index_chunk_rows,
            slots: Arc::new(Slots::new()),
            clock: options.clock.clone(),
            config,
            server: Uuid::now_v7().simple().to_string(),
            walk_reads: Arc::default(),
            full: Arc::new(sluice_store::full::FullState::new("the PostgreSQL database")),
        };
        store.create_partitions_ahead().await?;
        // Logs stored before the chunk index existed get theirs.
        let mut connection = store.connection().await?;
        let indexed = chunks::index_unchunked(&mut connection, store.chunk_rows, store.deadline()).await?;
        if indexed > 0 {
            tracing::info!(logs = indexed, "indexed logs the search index did not cover");
        }
        // Chunks written before signatures existed, and chunks whose waiting signatures a
        // crash of PostgreSQL dropped, get theirs, and blocks due are sealed.
        let signed = crate::lost::sign_again(&mut connection, store.deadline()).await?;
        if signed > 0 {
            tracing::info!(chunks = signed, "signed the chunks of the search index that had no signature");
        }
        store.seal_due(&mut connection, None).await?;
        drop(connection);
        Ok(store)
    }

    /// `call`, failed as [`StoreError::Timeout`] when it takes longer than the call timeout.
    /// Dropping it mid-transaction leaves its connection marked broken, so the pool discards
    /// it; the server ends the statement by `statement_timeout`, the same figure.
    pub(crate) async fn with_deadline<T>(
        &self,
        call: impl Future<Output = Result<T, StoreError>>,
    ) -> Result<T, StoreError> {
        self.deadline().call(call).await
    }

    /// The call timeout, as a [`Deadline`] for each step of work that is not a request's.
    pub(crate) fn deadline(&self) -> Deadline {
        Deadline(self.call_timeout)
    }

    /// A connection from the pool.
    pub(crate) async fn connection(&self) -> Result<Object<AsyncPgConnection>, StoreError> {
        self.pool.get().await.map_err(from_pool)
    }

    /// How many chunk signatures searches keep in memory now: those of chunks not in a block
    /// yet that a search has read; a chunk's goes when its block is sealed.
    pub fn cached_signatures(&self) -> u64 {
        self.signatures.cache.run_pending_tasks();
        self.signatures.cache.entry_count()
    }

    /// How many chunk signatures the blocks this store sealed read from the database: those it
    /// did not keep in memory (written by another process, or forgotten).
    pub fn signatures_read_to_seal(&self) -> u64 {
        self.signatures.read_to_seal()
    }

    /// How many bands of sealed blocks searches keep in memory now: those of the blocks a
    /// search has narrowed.
    pub fn cached_bands(&self) -> u64 {
        self.blocks.bands.run_pending_tasks();
        self.blocks.bands.entry_count()
    }

    /// What chunk walks (searches, and lists filtered on a facet) have read since this store
    /// connected: logs by id, chunks whole.
    pub fn walk_reads(&self) -> WalkReads {
        use std::sync::atomic::Ordering::Relaxed;
        WalkReads {
            logs_by_id: self.walk_reads.logs_by_id.load(Relaxed),
            chunks_whole: self.walk_reads.chunks_whole.load(Relaxed),
            chunks_sifted: self.walk_reads.chunks_sifted.load(Relaxed),
        }
    }

    /// Whether the database answers (readiness).
    pub async fn ping(&self) -> Result<(), StoreError> {
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
        let status = self.pool.status();
        Some(sluice_store::PoolStatus {
            max: status.max_size,
            open: status.size,
            idle: status.available,
            waiting: status.waiting,
        })
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
        stop: tokio::sync::watch::Receiver<bool>,
    ) -> bool {
        self.listen(watched, deliver, stop);
        true
    }

    /// Housekeeping: the partitions ahead, the chunks of logs stored without one, the live
    /// tail's lapsed watches, the blocks due and the statistics gone stale, each transaction
    /// or statement within the call timeout ([`Deadline`]).
    async fn maintain(&self) -> Result<(), StoreError> {
        self.create_partitions_ahead().await?;
        // After this process's sealing task, if one runs, so the blocks it leaves due are
        // sealed below; taken before a connection, which the task needs too.
        let _sealing = self.seal_lock.lock().await;
        // Logs a process of an older release stored without a chunk since this one connected
        // (a rolling upgrade) become searchable here; usually one probe of an empty index.
        let mut connection = self.with_deadline(self.connection()).await?;
        chunks::index_unchunked(&mut connection, self.chunk_rows, self.deadline()).await?;
        // PostgreSQL may have recovered from a crash since, emptying the unlogged waiting
        // signatures: usually one probe of a one-row table.
        crate::lost::sign_again(&mut connection, self.deadline()).await?;
        self.with_deadline(self.forget_lapsed_watches(&mut connection)).await?;
        self.seal_due(&mut connection, None).await?;
        crate::signatures::analyze_stale_partitions(&mut connection, self.deadline()).await
    }
}
