//! The block layout (`crate::blockstore`) as every store keeps it: each group's small block
//! merged with its workspace's others into large ones, retention writing a block of old and
//! new logs again without the old, and the upgrade of a database that kept its logs as rows.
//! A backend runs them with [`block_suite!`](crate::block_suite) and a [`BlockFixture`].

use std::sync::Arc;
use std::sync::atomic::{AtomicI64, Ordering};

use async_trait::async_trait;
use sluice_model::{Level, Log, LogId, WorkspaceId};
use sluice_query::{Query, SearchField};

use crate::blockstore::MERGE_AFTER_MS;
use crate::prelude::*;
use crate::{Clock, LogFilter, Page, Search, Store};

/// One place a backend keeps a store (a file, a database), opened as often as a test asks.
#[async_trait]
pub trait BlockFixture: Send + Sync {
    /// The backend's store.
    type Store: Store;

    /// The store at this place; `merge_now`: each insert merges the small blocks due before
    /// it answers (else the backend's own thread or task does, later).
    async fn open(&self, merge_now: bool, clock: Clock) -> Self::Store;

    /// The size of each block in logs, oldest block first.
    async fn block_sizes(&self) -> Vec<u32>;

    /// Fills the place, before any store opened it, with `logs` kept as rows, as the builds
    /// before blocks kept them.
    async fn rows_database(&self, logs: &[(WorkspaceId, Log)]);

    /// Logs kept in blocks, and as rows.
    async fn stored_logs(&self) -> (u64, u64);
}

/// Builds one test per behaviour of this module. `$make` is an async function returning a
/// fresh [`BlockFixture`].
#[macro_export]
macro_rules! block_suite {
    ($make:expr) => {
        $crate::block_suite!(@each $make;
            small_blocks_merge_into_large_ones_and_every_log_stays_readable,
            a_workspace_s_small_blocks_merge_once_they_have_waited,
            retention_drops_old_blocks_and_writes_a_mixed_one_again_without_its_old_logs,
            a_database_of_row_logs_is_converted_into_blocks_exactly_once_across_restarts,
        );
    };
    (@each $make:expr; $($name:ident),+ $(,)?) => {
        $(
            #[tokio::test]
            async fn $name() {
                let fixture = ($make)().await;
                $crate::conformance::blocks::$name(&fixture).await;
            }
        )+
    };
}

const BASE_MS: i64 = 1_750_000_000_000;

fn workspace(n: u8) -> WorkspaceId {
    WorkspaceId::from_slice(&[n; 16]).expect("16 bytes")
}

/// Log `n`: its id counts up (as ingest's do), its timestamp a second apart.
fn numbered(n: u64, message: String) -> Log {
    let id = 0x0190_0000_0000_7000_8000_0000_0000_0000_u128 + u128::from(n);
    let mut log = super::log(&message, BASE_MS + 1_000 * n as i64);
    log.id = LogId::from_slice(&id.to_be_bytes()).expect("16 bytes");
    log.entry.level = [Level::Info, Level::Warn, Level::Error][(n % 3) as usize];
    log.entry.source = format!("host-{}", n % 7).into();
    log.entry.user_id = n.is_multiple_of(5).then(|| format!("user-{}", n % 11));
    log.entry.request_id = Some(format!("req-{n:08x}"));
    log
}

fn logs(range: std::ops::Range<u64>) -> Vec<Log> {
    range.map(|n| numbered(n, format!("order {n} shipped to warehouse-{}", n % 13))).collect()
}

/// Every log of the workspace, newest first, page by page.
async fn all(store: &impl Store, workspace: WorkspaceId) -> Vec<Log> {
    let mut listed = Vec::new();
    loop {
        let page = Page { limit: 1_000, offset: listed.len() as u64 };
        let got = store.list_logs(workspace, &LogFilter::default(), page).await.expect("list");
        listed.extend(got.logs);
        if !got.has_more {
            return listed;
        }
    }
}

fn newest_first(mut logs: Vec<Log>) -> Vec<Log> {
    logs.sort_by_key(|log| std::cmp::Reverse((log.entry.timestamp, log.id)));
    logs
}

fn fixed_clock() -> Clock {
    Clock::new(|| BASE_MS)
}

fn search(query: &str) -> Search {
    Search { query: Query::parse(query).expect("query"), fields: vec![SearchField::Message] }
}

/// Groups of 10,000 logs merge as soon as two make half a block; every log reads back.
pub async fn small_blocks_merge_into_large_ones_and_every_log_stays_readable(fixture: &impl BlockFixture) {
    let store = fixture.open(true, fixed_clock()).await;
    let ws = workspace(1);
    let sent = logs(0..40_000);
    for batch in sent.chunks(10_000) {
        store.insert_logs(ws, batch).await.expect("insert");
    }
    // Two groups of 10,000 make half a block: merged; then the next two.
    assert_eq!(fixture.block_sizes().await, vec![20_000, 20_000]);
    assert_eq!(all(&store, ws).await, newest_first(sent.clone()));
    for n in [0_usize, 9_999, 10_000, 23_456, 39_999] {
        assert_eq!(store.get_log(ws, sent[n].id).await.expect("get"), Some(sent[n].clone()));
    }
    let found = store
        .search_logs(ws, &search("\"order 23456 shipped\""), &LogFilter::default(), Page { limit: 10, offset: 0 })
        .await
        .expect("search");
    assert_eq!(found.logs, vec![sent[23_456].clone()]);
}

/// A workspace's small blocks merge once the oldest has waited, however few logs they hold;
/// another workspace's stay as they are.
pub async fn a_workspace_s_small_blocks_merge_once_they_have_waited(fixture: &impl BlockFixture) {
    let now = Arc::new(AtomicI64::new(BASE_MS));
    let clock: Clock = {
        let now = now.clone();
        Clock::new(move || now.load(Ordering::Relaxed))
    };
    let store = fixture.open(true, clock).await;
    let (ws, other) = (workspace(1), workspace(2));
    let sent = logs(0..30);
    store.insert_logs(ws, &sent[..10]).await.expect("insert");
    store.insert_logs(other, &sent[10..20]).await.expect("insert");
    store.insert_logs(ws, &sent[20..25]).await.expect("insert");
    assert_eq!(fixture.block_sizes().await, vec![10, 10, 5], "none has waited yet");
    now.fetch_add(MERGE_AFTER_MS, Ordering::Relaxed);
    store.insert_logs(ws, &sent[25..30]).await.expect("insert");
    // The workspace's three small blocks merge (the oldest has waited, the newest not);
    // the other workspace's one block stays.
    assert_eq!(fixture.block_sizes().await, vec![10, 20]);
    let mut mine: Vec<Log> = sent[..10].to_vec();
    mine.extend_from_slice(&sent[20..30]);
    assert_eq!(all(&store, ws).await, newest_first(mine));
    assert_eq!(all(&store, other).await, newest_first(sent[10..20].to_vec()));
}

/// Retention drops the blocks all of whose logs are old and writes a block of old and new
/// logs again without the old ones.
pub async fn retention_drops_old_blocks_and_writes_a_mixed_one_again_without_its_old_logs(fixture: &impl BlockFixture) {
    let store = fixture.open(true, fixed_clock()).await;
    let ws = workspace(3);
    let sent = logs(0..3_000);
    for batch in sent.chunks(1_000) {
        store.insert_logs(ws, batch).await.expect("insert");
    }
    assert_eq!(fixture.block_sizes().await, vec![1_000, 1_000, 1_000]);
    // Log 1,500's timestamp: the first block all old, the second half old, the third new.
    let cutoff = sent[1_500].entry.timestamp;
    assert_eq!(store.delete_logs_before(ws, cutoff).await.expect("retention"), 1_500);
    let mut sizes = fixture.block_sizes().await;
    sizes.sort_unstable();
    assert_eq!(sizes, vec![500, 1_000]);
    assert_eq!(all(&store, ws).await, newest_first(sent[1_500..].to_vec()));
    assert_eq!(store.get_log(ws, sent[1_499].id).await.expect("get"), None);
    assert_eq!(store.delete_logs_before(ws, cutoff).await.expect("again"), 0, "nothing left to delete");
}

/// The first start on a database of row logs converts them into blocks, however often it is
/// stopped, with nothing lost or doubled, and is not ready until it is done.
pub async fn a_database_of_row_logs_is_converted_into_blocks_exactly_once_across_restarts(fixture: &impl BlockFixture) {
    let (ws, other) = (workspace(4), workspace(5));
    let mut mine = logs(0..70_000);
    mine[12_345].entry.message = "payment declined: card 4000-0000-0000-0002 (needle)".into();
    let theirs = logs(70_000..70_010);
    let rows: Vec<(WorkspaceId, Log)> =
        mine.iter().map(|log| (ws, log.clone())).chain(theirs.iter().map(|log| (other, log.clone()))).collect();
    fixture.rows_database(&rows).await;
    let total = rows.len() as u64;

    // A first start stopped at once, wherever its conversion was: nothing lost or doubled.
    drop(fixture.open(false, fixed_clock()).await);
    let (in_blocks, as_rows) = fixture.stored_logs().await;
    assert_eq!(in_blocks + as_rows, total, "every log is in a block or a row, never both");

    let store = fixture.open(false, fixed_clock()).await;
    if let Some(mut progress) = store.upgrade_progress() {
        // Ready only once converted: a ping that passes comes after the end.
        if store.ping().await.is_ok() {
            assert!(progress.borrow().finished);
        }
        let done = progress.wait_for(|progress| progress.finished).await.expect("the upgrade ends");
        // The first start's move under way when it stopped may commit after this start
        // counted the rows left: then this one moves fewer than it counted.
        assert!(done.done <= done.total && done.total <= as_rows, "{done:?}");
    } else {
        assert_eq!(fixture.stored_logs().await.1, 0, "an upgrade runs while rows are left");
    }
    store.ping().await.expect("ready once converted");
    assert_eq!(fixture.stored_logs().await, (total, 0));
    assert_eq!(all(&store, ws).await, newest_first(mine.clone()));
    assert_eq!(all(&store, other).await, newest_first(theirs.clone()));
    assert_eq!(store.get_log(ws, mine[40_000].id).await.expect("get"), Some(mine[40_000].clone()));
    assert_eq!(store.get_log(other, mine[40_000].id).await.expect("get"), None, "never another workspace's");
    let found = store
        .search_logs(ws, &search("0000-0002"), &LogFilter::default(), Page { limit: 10, offset: 0 })
        .await
        .expect("search");
    assert_eq!(found.logs, vec![mine[12_345].clone()]);

    // A start on a converted database has nothing to do.
    drop(store);
    let again = fixture.open(false, fixed_clock()).await;
    assert!(again.upgrade_progress().is_none());
}
