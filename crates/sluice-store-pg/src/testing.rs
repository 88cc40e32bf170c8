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

/// A stalled store for overload tests: a connection of its own holds a lock on `logs` that
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
        connection.batch_execute("BEGIN; LOCK TABLE logs IN SHARE MODE").await.expect("lock the logs");
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
