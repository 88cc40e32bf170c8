//! Connecting to a real PostgreSQL server (`SLUICE_TEST_PG`, which `cargo xtask ci` and
//! `cargo xtask with-pg` set): migrations applied once and idempotently, readiness, and an
//! unreachable server reported as unavailable. Each test works in a database of its own,
//! cloned from the migrated template.

use std::time::Duration;

use diesel::QueryableByName;
use diesel::sql_types::{BigInt, Text};
use diesel_async::{AsyncConnection, AsyncPgConnection, RunQueryDsl};
use sluice_store::conformance::log;
use sluice_store::{CountsRead, StoreError};
use sluice_store_pg::testing::{drop_database, fresh_database};
use sluice_store_pg::{PgOptions, PgStore};

#[derive(QueryableByName)]
struct Name {
    #[diesel(sql_type = Text)]
    name: String,
}

#[derive(QueryableByName)]
struct Count {
    #[diesel(sql_type = BigInt)]
    count: i64,
}

#[tokio::test]
async fn connect_applies_the_migrations_once() {
    let name = format!("sluice_test_migrations_{}", std::process::id());
    let url = fresh_database(&name).await;
    let store = PgStore::connect(&url, &PgOptions::default()).await.expect("connect");
    store.ping().await.expect("ready");
    // A second server start finds nothing to apply.
    let again = PgStore::connect(&url, &PgOptions::default()).await.expect("connect again");
    again.ping().await.expect("ready");

    let mut connection = AsyncPgConnection::establish(&url).await.expect("connect");
    let tables: Vec<String> = diesel::sql_query(
        "SELECT relname::text AS name FROM pg_class WHERE relnamespace = 'public'::regnamespace \
         AND relkind IN ('r', 'p') AND NOT relispartition ORDER BY 1",
    )
    .load::<Name>(&mut connection)
    .await
    .expect("tables")
    .into_iter()
    .map(|row| row.name)
    .collect();
    assert_eq!(
        tables,
        [
            "__diesel_schema_migrations",
            "api_keys",
            "block_bands",
            "block_granules",
            "blocks",
            "device_codes",
            "flow_scopes",
            "flow_steps",
            "flows",
            "log_rollups",
            "log_rollups_daily",
            "log_rollups_daily_sources",
            "logs",
            "memberships",
            "sessions",
            "tail_watches",
            "usage_monthly",
            "users",
            "workspaces"
        ]
    );
    // A new database holds no logs kept as rows: nothing to convert.
    assert!(sluice_store::Store::upgrade_progress(&store).is_none());
    sluice_store::Store::maintain(&again).await.expect("maintain");
    let applied: Vec<Count> = diesel::sql_query("SELECT count(*) AS count FROM __diesel_schema_migrations")
        .load(&mut connection)
        .await
        .expect("migrations");
    assert_eq!(
        applied[0].count,
        i64::try_from(std::fs::read_dir("../../migrations/postgres").expect("dir").count()).expect("small")
    );
    drop(connection);
    drop_database(&name).await;
}

#[tokio::test]
async fn an_unreachable_server_is_unavailable() {
    // A port nobody listens on.
    let port = std::net::TcpListener::bind("127.0.0.1:0").expect("port").local_addr().expect("addr").port();
    let url = format!("postgres://postgres@127.0.0.1:{port}/postgres");
    let options = PgOptions { create_timeout: Duration::from_secs(1), ..PgOptions::default() };
    let error = PgStore::connect(&url, &options).await.expect_err("nobody listens");
    assert!(matches!(error, StoreError::Unavailable(_)), "{error:?}");
}

/// Bytes that, seen going to the server, turn the proxy into a black hole at once (the
/// message carrying them is the first one lost), so a call is cut off after its connection was
/// checked out and verified, when only the store's own deadline can end it.
const TRIGGER: &[u8] = b"blackhole-now";

/// A TCP proxy that can turn into a black hole: while `dropping` is set it still accepts
/// connections and reads what either side sends (so the kernel acknowledges it) but passes
/// nothing on, like a network path that silently lost its state. No reset ever reaches the
/// store.
struct Blackhole {
    address: std::net::SocketAddr,
    dropping: std::sync::Arc<std::sync::atomic::AtomicBool>,
}

impl Blackhole {
    fn start(target: std::net::SocketAddr) -> Blackhole {
        use std::sync::Arc;
        use std::sync::atomic::AtomicBool;
        let listener = std::net::TcpListener::bind("127.0.0.1:0").expect("bind the proxy");
        let address = listener.local_addr().expect("proxy address");
        let dropping = Arc::new(AtomicBool::new(false));
        let flag = Arc::clone(&dropping);
        std::thread::spawn(move || {
            for client in listener.incoming() {
                let Ok(client) = client else { continue };
                let Ok(server) = std::net::TcpStream::connect(target) else { continue };
                let (Ok(client_reader), Ok(server_reader)) = (client.try_clone(), server.try_clone()) else {
                    continue;
                };
                for (from, to, watch) in [(client_reader, server, true), (server_reader, client, false)] {
                    let flag = Arc::clone(&flag);
                    std::thread::spawn(move || pump(from, to, &flag, watch));
                }
            }
        });
        Blackhole { address, dropping }
    }

    fn is_dropping(&self) -> bool {
        std::sync::atomic::AtomicBool::load(&self.dropping, std::sync::atomic::Ordering::SeqCst)
    }

    fn set_dropping(&self, dropping: bool) {
        self.dropping.store(dropping, std::sync::atomic::Ordering::SeqCst);
    }
}

/// Copies `from` to `to` until either closes, discarding while `dropping`; with `watch`, the
/// trigger bytes set `dropping`.
fn pump(
    mut from: std::net::TcpStream,
    mut to: std::net::TcpStream,
    dropping: &std::sync::atomic::AtomicBool,
    watch: bool,
) {
    use std::io::{Read, Write};
    use std::sync::atomic::Ordering;
    let mut buffer = [0_u8; 16 * 1024];
    loop {
        match from.read(&mut buffer) {
            Ok(0) | Err(_) => {
                let _ = to.shutdown(std::net::Shutdown::Write);
                return;
            }
            Ok(read) => {
                let chunk = &buffer[..read];
                if watch && chunk.windows(TRIGGER.len()).any(|window| window == TRIGGER) {
                    dropping.store(true, Ordering::SeqCst);
                }
                if dropping.load(Ordering::SeqCst) {
                    continue;
                }
                if to.write_all(chunk).is_err() {
                    return;
                }
            }
        }
    }
}

/// Waits until the store answers again after the black hole closed.
async fn until_back(store: &PgStore) {
    let started = std::time::Instant::now();
    while store.ping().await.is_err() {
        assert!(started.elapsed() < Duration::from_secs(30), "the store did not come back");
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
}

/// A store call that must end by itself (a hang fails the test after 30 s instead of never):
/// whether it succeeded, and how long it took.
async fn ends<T>(call: impl Future<Output = Result<T, StoreError>>) -> (Result<(), StoreError>, Duration) {
    let started = std::time::Instant::now();
    let outcome = tokio::time::timeout(Duration::from_secs(30), call).await.expect("the call hung");
    (outcome.map(|_| ()), started.elapsed())
}

#[tokio::test]
async fn a_network_that_stops_answering_costs_a_call_its_deadline_and_no_more() {
    use sluice_model::{Plan, Workspace};
    use sluice_query::stats::{CountBy, RollupFilter};
    use sluice_store::prelude::*;
    use sluice_store::{LogFilter, Page};

    let database = sluice_store_pg::testing::TestDatabase::new("sluice_test_blackhole").await;
    let config: tokio_postgres::Config = database.url().parse().expect("test URL");
    let (Some(tokio_postgres::config::Host::Tcp(host)), Some(port)) =
        (config.get_hosts().first(), config.get_ports().first())
    else {
        panic!("SLUICE_TEST_PG must name a TCP host and port");
    };
    let target = std::net::ToSocketAddrs::to_socket_addrs(&(host.as_str(), *port))
        .expect("resolve the test server")
        .next()
        .expect("an address");
    let proxy = Blackhole::start(target);
    let user = config.get_user().unwrap_or("postgres");
    let password = config.get_password().map(|password| format!(":{}", String::from_utf8_lossy(password)));
    let url = format!(
        "postgres://{user}{}@{}/{}",
        password.unwrap_or_default(),
        proxy.address,
        config.get_dbname().expect("a database name")
    );
    let call_timeout = Duration::from_secs(1);
    // The longest a call may take: its deadline, plus a margin for a loaded machine.
    let bound = call_timeout + Duration::from_secs(2);
    let options = PgOptions {
        pool_size: 4,
        wait_timeout: Duration::from_millis(500),
        create_timeout: Duration::from_millis(500),
        recycle_timeout: Duration::from_millis(300),
        call_timeout,
        ..PgOptions::default()
    };
    let store = PgStore::connect(&url, &options).await.expect("connect through the proxy");
    let workspace = Workspace::new("w", Plan::Free, 0);
    store.create_workspace(&workspace).await.expect("workspace");
    let now = sluice_store::unix_now_ms();
    let before: Vec<_> = (0..50).map(|index| log(&format!("before {index}"), now - index)).collect();
    store.insert_logs(workspace.id, &before).await.expect("insert before the black hole");
    let everything = Page { limit: 1000, offset: 0 };

    // The path goes silent in the middle of an insert transaction: the call ends as
    // unavailable by its deadline.
    let lost = log("the insert that was cut off: blackhole-now", now);
    let (outcome, took) = ends(store.insert_logs(workspace.id, std::slice::from_ref(&lost))).await;
    assert!(proxy.is_dropping(), "the trigger did not reach the proxy");
    assert!(matches!(outcome, Err(StoreError::Unavailable(_) | StoreError::Timeout(_))), "{outcome:?}");
    assert!(took < bound, "the cut-off insert took {took:?}");

    // While it stays silent, every kind of call ends as unavailable just as fast, on pooled
    // connections and on new ones.
    for round in 0..2 {
        let checks = [
            ("insert", ends(store.insert_logs(workspace.id, &[log("lost", now)])).await),
            ("list", ends(store.list_logs(workspace.id, &LogFilter::default(), everything)).await),
            ("get", ends(store.get_log(workspace.id, before[0].id)).await),
            (
                "counts",
                ends(store.level_counts(
                    workspace.id,
                    CountsRead {
                        from_ms: now - 3_600_000,
                        to_ms: now,
                        filter: &RollupFilter::default(),
                        by: CountBy::Hour,
                    },
                ))
                .await,
            ),
            ("key", ends(store.find_key(&[7; 32])).await),
            ("ping", ends(store.ping()).await),
        ];
        for (call, (outcome, took)) in &checks {
            let ended = matches!(outcome, Err(StoreError::Unavailable(_) | StoreError::Timeout(_)));
            assert!(ended, "round {round}, {call}: {outcome:?}");
            assert!(*took < bound, "round {round}, {call} took {took:?}");
        }
    }

    // The path comes back: the store serves again by itself (stale connections are dropped
    // as they fail their check).
    proxy.set_dropping(false);
    until_back(&store).await;

    // Writes work again, and what was acknowledged is all there; the cut-off insert is not.
    let after = log("after", now + 1);
    let started = std::time::Instant::now();
    let mut inserted = store.insert_logs(workspace.id, std::slice::from_ref(&after)).await;
    while inserted.is_err() && started.elapsed() < Duration::from_secs(30) {
        inserted = store.insert_logs(workspace.id, std::slice::from_ref(&after)).await;
    }
    inserted.expect("insert after the black hole");
    let listed = store.list_logs(workspace.id, &LogFilter::default(), everything).await.expect("list");
    let ids: std::collections::HashSet<_> = listed.logs.iter().map(|log| log.id).collect();
    assert!(before.iter().all(|log| ids.contains(&log.id)), "an acknowledged log is missing");
    assert!(ids.contains(&after.id));
    assert!(!ids.contains(&lost.id), "the cut-off insert was committed");
}

/// A store that found its storage full is ready again once its readiness check's own write (a
/// page written and undone) succeeds: on a database with room, at the first check.
#[tokio::test]
async fn readiness_after_a_full_storage_is_proved_by_a_write() {
    let database = sluice_store_pg::testing::TestDatabase::new("sluice_test_room").await;
    let store = PgStore::connect(database.url(), &PgOptions::default()).await.expect("connect");
    sluice_store_pg::testing::mark_storage_full(&store);
    assert!(sluice_store_pg::testing::storage_full(&store));
    store.ping().await.expect("the probe's write succeeds on a database with room");
    assert!(!sluice_store_pg::testing::storage_full(&store), "room again once a write succeeded");
    store.ping().await.expect("and the plain check after it");
}
