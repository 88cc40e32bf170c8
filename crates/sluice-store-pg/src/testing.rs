//! Databases for tests (feature `testing`): each test gets a database of its own, cloned from
//! a template that holds the current migrations, so tests run in parallel without sharing
//! rows and without migrating each database again.
//!
//! The server is `SLUICE_TEST_PG` (set by `cargo xtask ci` and `cargo xtask with-pg`).

use std::sync::atomic::{AtomicUsize, Ordering};

use diesel::QueryableByName;
use diesel::migration::MigrationSource;
use diesel::pg::Pg;
use diesel::sql_types::{BigInt, Text};
use diesel_async::{AsyncConnection, AsyncPgConnection, RunQueryDsl, SimpleAsyncConnection};

use crate::{MIGRATIONS, migrate};

#[derive(QueryableByName)]
struct Count {
    #[diesel(sql_type = BigInt)]
    count: i64,
}

#[derive(QueryableByName)]
struct Name {
    #[diesel(sql_type = Text)]
    name: String,
}

/// The test server's URL.
///
/// # Panics
/// When `SLUICE_TEST_PG` is unset: a test that needs PostgreSQL must not pass without one.
pub fn server() -> String {
    std::env::var("SLUICE_TEST_PG")
        .ok()
        .filter(|url| !url.is_empty())
        .expect("SLUICE_TEST_PG names no server: run the tests with `cargo xtask with-pg cargo test ...`")
}

/// `url` with its database replaced by `database`.
pub fn database_url(url: &str, database: &str) -> String {
    let (base, query) = url.split_once('?').map_or((url, None), |(base, query)| (base, Some(query)));
    let server = base.rsplit_once('/').map_or(base, |(server, _)| server);
    match query {
        Some(query) => format!("{server}/{database}?{query}"),
        None => format!("{server}/{database}"),
    }
}

/// The template's name: the newest migration's version, so a template of an older schema
/// (fewer migrations) is never cloned.
fn template_name() -> String {
    let newest = MigrationSource::<Pg>::migrations(&MIGRATIONS)
        .unwrap_or_default()
        .iter()
        .map(|migration| migration.name().version().to_string())
        .max()
        .unwrap_or_default();
    format!("sluice_template_{}", newest.replace('-', ""))
}

/// A test database `name` (dropped first if a previous run left it), cloned from the migrated
/// template, and its URL.
///
/// # Panics
/// When the server cannot be reached or refuses: a test cannot go on without its database.
pub async fn fresh_database(name: &str) -> String {
    let server = server();
    let mut admin = AsyncPgConnection::establish(&server).await.expect("connect to SLUICE_TEST_PG");
    let template = template_name();
    // One process builds the template; the others wait for it.
    admin.batch_execute("SELECT pg_advisory_lock(7355909)").await.expect("lock");
    let found: Vec<Count> = diesel::sql_query("SELECT count(*) AS count FROM pg_database WHERE datname = $1")
        .bind::<Text, _>(&template)
        .load(&mut admin)
        .await
        .expect("look for the template");
    let exists = found.as_slice().first().is_some_and(|row| row.count == 1);
    if !exists {
        admin.batch_execute(&format!("CREATE DATABASE {template}")).await.expect("create the template");
        migrate(&database_url(&server, &template)).await.expect("migrate the template");
        // Templates of older schemas are of no more use.
        let older: Vec<Name> = diesel::sql_query(
            "SELECT datname::text AS name FROM pg_database WHERE datname LIKE 'sluice\\_template\\_%' AND datname <> $1",
        )
        .bind::<Text, _>(&template)
        .load(&mut admin)
        .await
        .expect("list older templates");
        for old in older {
            admin.batch_execute(&format!("DROP DATABASE IF EXISTS {} WITH (FORCE)", old.name)).await.expect("drop");
        }
    }
    admin.batch_execute("SELECT pg_advisory_unlock(7355909)").await.expect("unlock");
    admin.batch_execute(&format!("DROP DATABASE IF EXISTS {name} WITH (FORCE)")).await.expect("drop");
    admin.batch_execute(&format!("CREATE DATABASE {name} TEMPLATE {template}")).await.expect("clone the template");
    database_url(&server, name)
}

/// Removes a test database, closing what still uses it.
///
/// # Panics
/// When the server refuses.
pub async fn drop_database(name: &str) {
    let mut admin = AsyncPgConnection::establish(&server()).await.expect("connect to SLUICE_TEST_PG");
    admin.batch_execute(&format!("DROP DATABASE IF EXISTS {name} WITH (FORCE)")).await.expect("drop");
}

/// A stalled store for overload tests: a connection of its own holds a lock on `blocks` that
/// every insert waits for (reads go on), until [`WriteStall::release`].
pub struct WriteStall {
    connection: AsyncPgConnection,
}

impl WriteStall {
    /// Takes the lock on the database at `url`.
    ///
    /// # Panics
    /// When the server cannot be reached or refuses the lock.
    pub async fn take(url: &str) -> WriteStall {
        let mut connection = AsyncPgConnection::establish(url).await.expect("connect for the stall");
        // SHARE conflicts with the ROW EXCLUSIVE every insert takes, and with nothing a read takes.
        connection.batch_execute("BEGIN; LOCK TABLE blocks IN SHARE MODE").await.expect("lock the blocks");
        WriteStall { connection }
    }

    /// Lets the lock go: the waiting inserts go on.
    ///
    /// # Panics
    /// When the server cannot be reached.
    pub async fn release(mut self) {
        self.connection.batch_execute("ROLLBACK").await.expect("release the lock");
    }
}

static NEXT_DATABASE: AtomicUsize = AtomicUsize::new(0);

/// A test's own database, cloned from the migrated template by [`fresh_database`] under a
/// name no other test of any process uses, and dropped when this value is (also when the test
/// fails).
#[derive(Debug)]
pub struct TestDatabase {
    name: String,
    url: String,
}

impl TestDatabase {
    /// A new database named `<prefix>_<process>_<count>`.
    ///
    /// # Panics
    /// When the server cannot be reached or refuses.
    pub async fn new(prefix: &str) -> TestDatabase {
        let name = format!("{prefix}_{}_{}", std::process::id(), NEXT_DATABASE.fetch_add(1, Ordering::Relaxed));
        let url = fresh_database(&name).await;
        TestDatabase { name, url }
    }

    /// Its URL.
    pub fn url(&self) -> &str {
        &self.url
    }
}

impl Drop for TestDatabase {
    fn drop(&mut self) {
        // Drop may run inside a test's runtime, which cannot be blocked on: a thread of its own.
        let name = std::mem::take(&mut self.name);
        let dropped = std::thread::spawn(move || {
            tokio::runtime::Builder::new_current_thread()
                .enable_all()
                .build()
                .map(|runtime| runtime.block_on(drop_database(&name)))
        })
        .join();
        if !matches!(dropped, Ok(Ok(()))) {
            eprintln!("could not drop a test database");
        }
    }
}

/// Lapses every live tail watch of the database at `url` (`crate::feed`), as if the servers
/// that hold them had not said so again for a minute; returns how many there were.
///
/// # Panics
/// When the server cannot be reached or refuses.
pub async fn lapse_tail_watches(url: &str) -> usize {
    let mut connection = AsyncPgConnection::establish(url).await.expect("connect");
    diesel::sql_query("UPDATE tail_watches SET expires_at = 0").execute(&mut connection).await.expect("lapse")
}

/// The milliseconds each live tail watch of the database at `url` still holds, by the
/// database's clock (negative once lapsed), lowest first.
///
/// # Panics
/// When the server cannot be reached or refuses.
pub async fn tail_watches_left_ms(url: &str) -> Vec<i64> {
    let mut connection = AsyncPgConnection::establish(url).await.expect("connect");
    let rows: Vec<Count> =
        diesel::sql_query(concat!("SELECT expires_at - ", now_ms!(), " AS count FROM tail_watches ORDER BY 1"))
            .load(&mut connection)
            .await
            .expect("watches");
    rows.into_iter().map(|row| row.count).collect()
}

/// Marks `store`'s storage as found full, as a write refused for lack of space would: its
/// readiness check then tries a write of its own.
pub fn mark_storage_full(store: &crate::PgStore) {
    store.full.note::<()>(&Err(sluice_store::StoreError::StorageFull("a test marked it".into())));
}

/// Whether `store` holds its storage for full.
pub fn storage_full(store: &crate::PgStore) -> bool {
    store.full.is_full()
}

/// Fills the database at `url` (migrated, no store connected yet) with `logs` kept as rows, as
/// the builds before blocks kept them: the database a first start of this build upgrades.
///
/// # Panics
/// When the server cannot be reached or refuses the rows.
pub async fn rows_database(url: &str, logs: &[(sluice_model::WorkspaceId, sluice_model::Log)]) {
    use crate::text::encode;
    use sluice_store::rows::{step_index_column, tags_column};

    let mut connection = AsyncPgConnection::establish(url).await.expect("connect");
    let low = logs.iter().map(|(_, log)| log.entry.timestamp).min().unwrap_or(0);
    let high = logs.iter().map(|(_, log)| log.entry.timestamp).max().unwrap_or(0);
    connection
        .batch_execute(&format!("CREATE TABLE logs_before PARTITION OF logs FOR VALUES FROM ({low}) TO ({})", high + 1))
        .await
        .expect("a partition of the rows' days");
    let text = |value: Option<&str>| value.map(|value| encode(value).into_owned());
    for part in logs.chunks(2_000) {
        let rows: Vec<serde_json::Value> = part
            .iter()
            .map(|(workspace, log)| {
                let entry = &log.entry;
                serde_json::json!({
                    "workspace_id": workspace.as_uuid(),
                    "ts": entry.timestamp,
                    "id": log.id.as_uuid(),
                    "level": entry.level.as_str(),
                    "environment": entry.environment.as_str(),
                    "source": encode(&entry.source),
                    "dataset": encode(&entry.dataset),
                    "message": encode(&entry.message),
                    "version": text(entry.version.as_deref()),
                    "user_id": text(entry.user_id.as_deref()),
                    "session_id": text(entry.session_id.as_deref()),
                    "request_id": text(entry.request_id.as_deref()),
                    "data": entry.data.as_ref().map(sluice_model::JsonObject::as_str),
                    "error_name": text(entry.error_name.as_deref()),
                    "error_stack": text(entry.error_stack.as_deref()),
                    "tags": tags_column(entry),
                    "flow_id": text(entry.flow_id.as_deref()),
                    "step_index": step_index_column(entry),
                    "country": text(log.country.as_deref()),
                    "ip_address": text(log.ip_address.as_deref()),
                })
            })
            .collect();
        diesel::sql_query(
            "INSERT INTO logs (workspace_id, ts, id, level, environment, source, dataset, message, version, \
             user_id, session_id, request_id, data, error_name, error_stack, tags, flow_id, step_index, country, \
             ip_address) \
             SELECT * FROM json_to_recordset($1::json) AS r(workspace_id uuid, ts int8, id uuid, level text, \
             environment text, source text, dataset text, message text, version text, user_id text, \
             session_id text, request_id text, data text, error_name text, error_stack text, tags text, \
             flow_id text, step_index int4, country text, ip_address text)",
        )
        .bind::<Text, _>(serde_json::Value::Array(rows).to_string())
        .execute(&mut connection)
        .await
        .expect("rows");
    }
}

/// Logs the database at `url` keeps in blocks, and as rows.
///
/// # Panics
/// When the server cannot be reached.
pub async fn stored_logs(url: &str) -> (u64, u64) {
    let mut connection = AsyncPgConnection::establish(url).await.expect("connect");
    let count = async |connection: &mut AsyncPgConnection, sql: &str| -> u64 {
        let rows: Vec<Count> = diesel::sql_query(sql).load(connection).await.expect("count");
        <[Count]>::first(&rows).map_or(0, |row| u64::try_from(row.count).unwrap_or(0))
    };
    let in_blocks = count(&mut connection, "SELECT coalesce(sum(rows), 0)::int8 AS count FROM blocks").await;
    let as_rows = count(&mut connection, "SELECT count(*)::int8 AS count FROM logs").await;
    (in_blocks, as_rows)
}

/// The sizes of the database's blocks, in logs, oldest block first.
///
/// # Panics
/// When the server cannot be reached.
pub async fn block_sizes(url: &str) -> Vec<u32> {
    let mut connection = AsyncPgConnection::establish(url).await.expect("connect");
    let rows: Vec<Count> = diesel::sql_query("SELECT rows::int8 AS count FROM blocks ORDER BY id")
        .load(&mut connection)
        .await
        .expect("blocks");
    rows.into_iter().map(|row| u32::try_from(row.count).unwrap_or(0)).collect()
}
