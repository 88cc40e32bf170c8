//! The embedded SQLite store: sluice's default, one file, no server to run.
//!
//! Diesel over a bundled SQLite in WAL mode, so readers never wait for the writer and several
//! processes (a server and the admin CLI) can share the file. Connections live in a deadpool
//! pool; each call runs on a blocking thread so the async runtime never stalls on disk.
//! Writes take `BEGIN IMMEDIATE` and `synchronous = FULL`, so a returned `Ok` is on disk.

mod rows;
mod schema;

use std::path::{Path, PathBuf};
use std::time::Duration;

use async_trait::async_trait;
use deadpool_diesel::sqlite::{Hook, HookError, Manager, Pool, Runtime};
use diesel::connection::SimpleConnection;
use diesel::prelude::*;
use diesel::result::{DatabaseErrorKind, Error as DieselError};
use diesel_migrations::{EmbeddedMigrations, MigrationHarness, embed_migrations};
use sluice_model::{ApiKeyRecord, KeyId, Log, LogId, Plan, Workspace, WorkspaceId};
use sluice_store::{LogFilter, LogPage, LogStore, NewApiKey, Page, Store, StoreError, TenantStore};

use crate::rows::{KeyRow, LogRow, NewKeyRow, NewLogRow, WorkspaceRow};
use crate::schema::{api_keys, logs, workspaces};

const MIGRATIONS: EmbeddedMigrations = embed_migrations!("../../migrations/sqlite");

/// Rows per multi-row `INSERT`: 20 bound values each keeps a statement well under SQLite's
/// limit of 32,766 variables, whatever the batch size.
const ROWS_PER_INSERT: usize = 500;

/// Tuning of the SQLite store.
#[derive(Debug, Clone)]
pub struct SqliteOptions {
    /// Connections in the pool (readers run in parallel; writers queue on SQLite's lock).
    pub pool_size: usize,
    /// How long a writer waits for another's lock before the call fails as unavailable.
    pub busy_timeout: Duration,
    /// How long a call waits for a free connection.
    pub wait_timeout: Duration,
}

impl Default for SqliteOptions {
    fn default() -> Self {
        Self { pool_size: 8, busy_timeout: Duration::from_secs(5), wait_timeout: Duration::from_secs(5) }
    }
}

/// The SQLite file a `sqlite://` URL names: `sqlite://rel/path.db` is relative to the working
/// directory, `sqlite:///abs/path.db` absolute. `None` for any other scheme.
pub fn path_from_url(url: &str) -> Option<PathBuf> {
    let rest = url.strip_prefix("sqlite://")?;
    (!rest.is_empty()).then(|| PathBuf::from(rest))
}

/// A store in one SQLite file.
#[derive(Clone)]
pub struct SqliteStore {
    pool: Pool,
}

impl std::fmt::Debug for SqliteStore {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("SqliteStore").field("pool", &self.pool.status()).finish()
    }
}

fn backend(error: impl std::fmt::Display) -> StoreError {
    StoreError::Backend(error.to_string())
}

/// Diesel's error in our terms: a busy or locked database is "unavailable", a retry may work.
fn from_diesel(error: DieselError) -> StoreError {
    match &error {
        DieselError::DatabaseError(DatabaseErrorKind::Unknown, info)
            if info.message().contains("locked") || info.message().contains("busy") =>
        {
            StoreError::Unavailable(error.to_string())
        }
        _ => backend(error),
    }
}

/// Settings every connection gets when the pool opens it.
fn connection_pragmas(busy_timeout: Duration) -> String {
    format!(
        "PRAGMA busy_timeout = {}; PRAGMA synchronous = FULL; PRAGMA foreign_keys = ON; \
         PRAGMA cache_size = -8000; PRAGMA temp_store = MEMORY;",
        busy_timeout.as_millis()
    )
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
        let pragmas = connection_pragmas(options.busy_timeout);

        let mut connection = SqliteConnection::establish(&url).map_err(backend)?;
        connection.batch_execute(&pragmas).map_err(backend)?;
        connection.batch_execute("PRAGMA journal_mode = WAL;").map_err(backend)?;
        connection.run_pending_migrations(MIGRATIONS).map_err(|error| backend(format!("migrations: {error}")))?;
        drop(connection);

        let manager = Manager::new(url, Runtime::Tokio1);
        let pool = Pool::builder(manager)
            .max_size(options.pool_size)
            .runtime(Runtime::Tokio1)
            .wait_timeout(Some(options.wait_timeout))
            .create_timeout(Some(options.wait_timeout))
            .recycle_timeout(Some(options.wait_timeout))
            .post_create(Hook::async_fn(move |connection, _| {
                let pragmas = pragmas.clone();
                Box::pin(async move {
                    connection
                        .interact(move |connection| connection.batch_execute(&pragmas))
                        .await
                        .map_err(|error| HookError::message(error.to_string()))?
                        .map_err(|error| HookError::message(error.to_string()))
                })
            }))
            .build()
            .map_err(backend)?;
        Ok(Self { pool })
    }

    /// Runs `work` on a pooled connection, on a blocking thread.
    async fn with<R, F>(&self, work: F) -> Result<R, StoreError>
    where
        R: Send + 'static,
        F: FnOnce(&mut SqliteConnection) -> Result<R, StoreError> + Send + 'static,
    {
        let connection = self.pool.get().await.map_err(|error| StoreError::Unavailable(error.to_string()))?;
        connection.interact(work).await.map_err(backend)?
    }
}

#[async_trait]
impl LogStore for SqliteStore {
    async fn insert_logs(&self, workspace: WorkspaceId, batch: &[Log]) -> Result<(), StoreError> {
        let batch = batch.to_vec();
        self.with(move |connection| {
            let rows: Vec<NewLogRow<'_>> = batch.iter().map(|log| NewLogRow::new(&workspace, log)).collect();
            connection
                .immediate_transaction(|connection| {
                    for chunk in rows.chunks(ROWS_PER_INSERT) {
                        diesel::insert_into(logs::table).values(chunk).execute(connection)?;
                    }
                    Ok::<_, DieselError>(())
                })
                .map_err(from_diesel)
        })
        .await
    }

    async fn list_logs(&self, workspace: WorkspaceId, filter: &LogFilter, page: Page) -> Result<LogPage, StoreError> {
        let filter = filter.clone();
        self.with(move |connection| {
            let mut query = logs::table.filter(logs::workspace_id.eq(workspace.as_bytes().to_vec())).into_boxed();
            if let Some(level) = filter.level {
                query = query.filter(logs::level.eq(level.as_str()));
            }
            if let Some(environment) = filter.environment {
                query = query.filter(logs::environment.eq(environment.as_str()));
            }
            if let Some(source) = filter.source {
                query = query.filter(logs::source.eq(source));
            }
            if let Some(dataset) = filter.dataset {
                query = query.filter(logs::dataset.eq(dataset));
            }
            if let Some(user_id) = filter.user_id {
                query = query.filter(logs::user_id.eq(user_id));
            }
            if let Some(session_id) = filter.session_id {
                query = query.filter(logs::session_id.eq(session_id));
            }
            if let Some(flow_id) = filter.flow_id {
                query = query.filter(logs::flow_id.eq(flow_id));
            }
            if let Some(from) = filter.from {
                query = query.filter(logs::ts.ge(from));
            }
            if let Some(to) = filter.to {
                query = query.filter(logs::ts.le(to));
            }
            let offset = i64::try_from(page.offset).unwrap_or(i64::MAX);
            let rows: Vec<LogRow> = query
                .order((logs::ts.desc(), logs::id.desc()))
                .limit(i64::from(page.limit) + 1)
                .offset(offset)
                .select(LogRow::as_select())
                .load(connection)
                .map_err(from_diesel)?;
            let has_more = rows.len() > page.limit as usize;
            let logs = rows.into_iter().take(page.limit as usize).map(Log::try_from).collect::<Result<_, _>>()?;
            Ok(LogPage { logs, has_more })
        })
        .await
    }

    async fn get_log(&self, workspace: WorkspaceId, id: LogId) -> Result<Option<Log>, StoreError> {
        self.with(move |connection| {
            logs::table
                .filter(logs::id.eq(id.as_bytes().to_vec()))
                .filter(logs::workspace_id.eq(workspace.as_bytes().to_vec()))
                .select(LogRow::as_select())
                .first(connection)
                .optional()
                .map_err(from_diesel)?
                .map(Log::try_from)
                .transpose()
        })
        .await
    }
}

#[async_trait]
impl TenantStore for SqliteStore {
    async fn create_workspace(&self, workspace: &Workspace) -> Result<(), StoreError> {
        let row = WorkspaceRow::from(workspace);
        self.with(move |connection| {
            diesel::insert_into(workspaces::table).values(&row).execute(connection).map_err(from_diesel)?;
            Ok(())
        })
        .await
    }

    async fn list_workspaces(&self) -> Result<Vec<Workspace>, StoreError> {
        self.with(|connection| {
            let rows: Vec<WorkspaceRow> = workspaces::table
                .order((workspaces::created_at.asc(), workspaces::id.asc()))
                .select(WorkspaceRow::as_select())
                .load(connection)
                .map_err(from_diesel)?;
            rows.into_iter().map(Workspace::try_from).collect()
        })
        .await
    }

    async fn get_workspace(&self, id: WorkspaceId) -> Result<Option<Workspace>, StoreError> {
        self.with(move |connection| {
            workspaces::table
                .find(id.as_bytes().to_vec())
                .select(WorkspaceRow::as_select())
                .first(connection)
                .optional()
                .map_err(from_diesel)?
                .map(Workspace::try_from)
                .transpose()
        })
        .await
    }

    async fn set_plan(&self, id: WorkspaceId, plan: Plan) -> Result<(), StoreError> {
        self.with(move |connection| {
            let changed = diesel::update(workspaces::table.find(id.as_bytes().to_vec()))
                .set(workspaces::plan.eq(plan.as_str()))
                .execute(connection)
                .map_err(from_diesel)?;
            if changed == 0 { Err(StoreError::NotFound("workspace")) } else { Ok(()) }
        })
        .await
    }

    async fn create_key(&self, key: &NewApiKey) -> Result<(), StoreError> {
        let row = NewKeyRow::from(key);
        self.with(move |connection| {
            diesel::insert_into(api_keys::table).values(&row).execute(connection).map_err(from_diesel)?;
            Ok(())
        })
        .await
    }

    async fn list_keys(&self, workspace: WorkspaceId) -> Result<Vec<ApiKeyRecord>, StoreError> {
        self.with(move |connection| {
            let rows: Vec<KeyRow> = api_keys::table
                .filter(api_keys::workspace_id.eq(workspace.as_bytes().to_vec()))
                .order((api_keys::created_at.asc(), api_keys::id.asc()))
                .select(KeyRow::as_select())
                .load(connection)
                .map_err(from_diesel)?;
            rows.into_iter().map(ApiKeyRecord::try_from).collect()
        })
        .await
    }

    async fn revoke_key(&self, id: KeyId, now_ms: i64) -> Result<(), StoreError> {
        self.with(move |connection| {
            let key = api_keys::table.find(id.as_bytes().to_vec());
            let exists: Option<Option<i64>> =
                key.clone().select(api_keys::revoked_at).first(connection).optional().map_err(from_diesel)?;
            match exists {
                None => Err(StoreError::NotFound("key")),
                Some(Some(_)) => Ok(()),
                Some(None) => {
                    diesel::update(key.filter(api_keys::revoked_at.is_null()))
                        .set(api_keys::revoked_at.eq(now_ms))
                        .execute(connection)
                        .map_err(from_diesel)?;
                    Ok(())
                }
            }
        })
        .await
    }

    async fn find_key(&self, hash: &[u8; 32]) -> Result<Option<(ApiKeyRecord, Workspace)>, StoreError> {
        let hash = hash.to_vec();
        self.with(move |connection| {
            let found: Option<(KeyRow, WorkspaceRow)> = api_keys::table
                .inner_join(workspaces::table)
                .filter(api_keys::hash.eq(hash))
                .select((KeyRow::as_select(), WorkspaceRow::as_select()))
                .first(connection)
                .optional()
                .map_err(from_diesel)?;
            found.map(|(key, workspace)| Ok((key.try_into()?, workspace.try_into()?))).transpose()
        })
        .await
    }

    async fn bootstrap(&self, workspace: &Workspace, key: &NewApiKey) -> Result<bool, StoreError> {
        let workspace = WorkspaceRow::from(workspace);
        let key = NewKeyRow::from(key);
        self.with(move |connection| {
            connection
                .immediate_transaction(|connection| {
                    let existing: i64 = workspaces::table.count().get_result(connection)?;
                    if existing > 0 {
                        return Ok(false);
                    }
                    diesel::insert_into(workspaces::table).values(&workspace).execute(connection)?;
                    diesel::insert_into(api_keys::table).values(&key).execute(connection)?;
                    Ok(true)
                })
                .map_err(from_diesel)
        })
        .await
    }
}

#[async_trait]
impl Store for SqliteStore {
    async fn ping(&self) -> Result<(), StoreError> {
        // Readiness means "ingest would work": take the write lock and give it back, so a file
        // another process keeps locked fails the check instead of passing a trivial SELECT.
        self.with(|connection| connection.batch_execute("BEGIN IMMEDIATE; ROLLBACK;").map_err(from_diesel)).await
    }
}
