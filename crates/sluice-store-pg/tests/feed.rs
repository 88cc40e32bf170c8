//! The live tail across servers on a real PostgreSQL (`crate::feed`): two stores on one
//! database stand for two servers. A server announces a committed batch only when another
//! server watches its workspace (`tail_watches`), never for its own watches, and housekeeping
//! forgets the watches long lapsed.
//!
//! "Not announced" is observed, not waited for: notifications on one channel arrive in the
//! order their statements committed, so when the follower's next delivery is a batch announced
//! after the one that must not be, that one never was.

use std::sync::Arc;
use std::time::Duration;

use diesel::QueryableByName;
use diesel::sql_types::Text;
use diesel_async::{AsyncConnection, AsyncPgConnection, RunQueryDsl};
use sluice_model::{Log, Plan, Workspace, WorkspaceId};
use sluice_store::conformance::log;
use sluice_store::prelude::*;
use sluice_store::{Announced, Store};
use sluice_store_pg::testing::TestDatabase;
use sluice_store_pg::{PgOptions, PgStore};
use tokio::sync::mpsc;

/// The longest a delivery may take before the test fails (a bound, not an ordering).
const DELIVERY: Duration = Duration::from_secs(20);

fn now_ms() -> i64 {
    sluice_store::unix_now_ms()
}

async fn store(url: &str) -> PgStore {
    PgStore::connect(url, &PgOptions { pool_size: 4, ..Default::default() }).await.expect("connect")
}

/// Stores one log of `message` in `workspace` through `store`; returns its announcement.
async fn commit(store: &PgStore, workspace: WorkspaceId, message: &str) -> Announced {
    let log: Log = log(message, now_ms());
    store.insert_logs(workspace, std::slice::from_ref(&log)).await.expect("insert");
    Announced { workspace, logs: vec![(log.id, log.entry.timestamp)] }
}

/// The next delivery to the follower: its workspace and messages.
async fn next(delivered: &mut mpsc::UnboundedReceiver<(WorkspaceId, Vec<Log>)>) -> (WorkspaceId, Vec<String>) {
    let (workspace, logs) =
        tokio::time::timeout(DELIVERY, delivered.recv()).await.expect("a delivery in time").expect("open");
    (workspace, logs.into_iter().map(|log| log.entry.message).collect())
}

#[tokio::test]
async fn a_batch_is_announced_only_when_another_server_watches_its_workspace() {
    let database = TestDatabase::new("sluice_test_feed").await;
    let (first, second) = (store(database.url()).await, store(database.url()).await);
    let (tailed, quiet) = (Workspace::new("tailed", Plan::Enterprise, 0), Workspace::new("quiet", Plan::Enterprise, 0));
    for workspace in [&tailed, &quiet] {
        first.create_workspace(workspace).await.expect("workspace");
    }
    // The second server follows every workspace it hears of, so what it hears is what was sent.
    let (sender, mut delivered) = mpsc::unbounded_channel();
    let (_stop, stopped) = tokio::sync::watch::channel(false);
    let following = second.follow(
        Arc::new(|_| true),
        Arc::new(move |workspace, logs| {
            let _ = sender.send((workspace, logs));
        }),
        stopped,
    );
    assert!(following, "a PostgreSQL store follows the others");

    // Nobody watches: the first server's batches go nowhere, which the probes below show once
    // the second listens (until then, nothing could arrive anyway).
    first.announce(&[commit(&first, tailed.id, "before any watch").await]).await.expect("announce");
    second.watch(&[tailed.id]).await.expect("watch");
    // The second listens once its own connection has said LISTEN: probes until one arrives.
    let mut probe = 0;
    let mut heard = loop {
        first.announce(&[commit(&first, tailed.id, &format!("probe {probe}")).await]).await.expect("announce");
        match tokio::time::timeout(Duration::from_millis(200), delivered.recv()).await {
            Ok(Some((workspace, logs))) => {
                assert_eq!(workspace, tailed.id);
                break logs.into_iter().map(|log| log.entry.message).collect::<Vec<_>>();
            }
            Ok(None) => panic!("the follower stopped"),
            Err(_) => {
                probe += 1;
                assert!(probe < 100, "the second server never heard the first");
            }
        }
    };
    // The probes still in flight, up to the last sent.
    let last = format!("probe {probe}");
    while !heard.contains(&last) {
        heard.extend(next(&mut delivered).await.1);
    }
    assert!(
        heard.iter().all(|message| message.starts_with("probe")),
        "only what was announced after the watch: {heard:?}"
    );

    // A workspace nobody else watches is not announced, even one this server watches itself;
    // the watched one's batch, announced after, is the next thing heard.
    first.watch(&[quiet.id]).await.expect("a watch of its own");
    let unwatched = commit(&first, quiet.id, "nobody else watches this").await;
    let watched = commit(&first, tailed.id, "the second watches this").await;
    first.announce(&[unwatched]).await.expect("announce");
    first.announce(&[watched]).await.expect("announce");
    assert_eq!(next(&mut delivered).await, (tailed.id, vec!["the second watches this".to_owned()]));

    // In one announcement of both, only the watched workspace's batch is sent.
    let both = [commit(&first, quiet.id, "still unwatched").await, commit(&first, tailed.id, "watched again").await];
    first.announce(&both).await.expect("announce");
    assert_eq!(next(&mut delivered).await, (tailed.id, vec!["watched again".to_owned()]));

    // Once the second watches it too, the other workspace's batches are sent.
    second.watch(&[quiet.id, tailed.id, quiet.id]).await.expect("watch both");
    first.announce(&[commit(&first, quiet.id, "now watched").await]).await.expect("announce");
    assert_eq!(next(&mut delivered).await, (quiet.id, vec!["now watched".to_owned()]));
}

#[derive(QueryableByName)]
struct Server {
    #[diesel(sql_type = Text)]
    server: String,
}

#[tokio::test]
async fn housekeeping_forgets_the_watches_lapsed_for_an_hour() {
    let database = TestDatabase::new("sluice_test_feed_lapsed").await;
    let store = store(database.url()).await;
    let workspace = Workspace::new("tailed", Plan::Enterprise, 0);
    store.create_workspace(&workspace).await.expect("workspace");
    store.watch(&[workspace.id]).await.expect("watch");
    let mut connection = AsyncPgConnection::establish(database.url()).await.expect("connect");
    // A server that stopped two hours ago without a word, and one whose watch lapsed a minute ago.
    diesel::sql_query(
        "INSERT INTO tail_watches (workspace_id, server, expires_at) \
         SELECT workspace_id, 'gone', expires_at - 7200000 FROM tail_watches \
         UNION ALL SELECT workspace_id, 'lapsed', expires_at - 120000 FROM tail_watches",
    )
    .execute(&mut connection)
    .await
    .expect("lapsed watches");
    store.maintain().await.expect("housekeeping");
    let mut servers: Vec<String> = diesel::sql_query("SELECT server FROM tail_watches ORDER BY server")
        .load::<Server>(&mut connection)
        .await
        .expect("watches")
        .into_iter()
        .map(|row| row.server)
        .collect();
    assert_eq!(servers.len(), 2, "{servers:?}");
    servers.retain(|server| server != "lapsed");
    assert_eq!(servers.len(), 1, "the store's own watch stays: {servers:?}");
    // A watch holds for WATCH_SECONDS by the database's clock.
    let seconds = i64::try_from(sluice_store::WATCH_SECONDS).expect("small");
    let left = sluice_store_pg::testing::tail_watches_left_ms(database.url()).await;
    assert_eq!(left.iter().filter(|ms| ((seconds - 5) * 1_000..=seconds * 1_000).contains(*ms)).count(), 1, "{left:?}");
}
