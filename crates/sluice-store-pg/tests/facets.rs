//! Filtered lists and searches on the PostgreSQL store, which have no index per filter field:
//! they walk the chunks whose facet filters may hold the values, newest first, a step at a
//! time. On a real server, with chunks of three logs whose time spans overlap (batches with
//! scattered timestamps), each answer is checked against the same filter applied to the logs
//! in memory, for every page; then again with the chunks' facet filters all ones, as the
//! migration leaves the chunks written before them.

use diesel_async::{AsyncConnection, AsyncPgConnection, SimpleAsyncConnection};
use sluice_model::{Environment, Level, Log, Plan, Workspace};
use sluice_query::{Query, SearchField};
use sluice_store::conformance::log;
use sluice_store::prelude::*;
use sluice_store::{LogFilter, Page, Search};
use sluice_store_pg::testing::TestDatabase;
use sluice_store_pg::{PgOptions, PgStore};

const T0: i64 = 1_700_000_000_000;

/// The logs of one workspace: 150 in batches of 1 to 5, the fields cycling at different
/// periods, timestamps scattered over 97 ms, many shared, so chunks' spans overlap and tie.
fn logs(tag: &str) -> Vec<Vec<Log>> {
    let levels = [Level::Info, Level::Warn, Level::Error, Level::Info, Level::Debug];
    let mut batches = Vec::new();
    let mut n = 0_usize;
    while n < 150 {
        let size = 1 + n % 5;
        let batch = (n..n + size)
            .map(|i| {
                let mut log = log(
                    &format!("{tag} entry {i} {}", if i % 7 == 0 { "needle" } else { "hay" }),
                    T0 + ((i * 7_919) % 97) as i64,
                );
                log.entry.level = levels[i % levels.len()];
                log.entry.source = ["api", "web", "worker"][i % 3].into();
                log.entry.environment = Environment::ALL[i % 2];
                log.entry.dataset = if i % 11 == 0 { "audit".into() } else { "default".into() };
                log.entry.user_id = (i % 4 != 0).then(|| format!("u-{}", i % 6));
                log
            })
            .collect();
        batches.push(batch);
        n += size;
    }
    batches
}

fn keeps(filter: &LogFilter, log: &Log) -> bool {
    let entry = &log.entry;
    filter.level.is_none_or(|level| entry.level == level)
        && filter.environment.is_none_or(|environment| entry.environment == environment)
        && filter.source.as_deref().is_none_or(|source| entry.source == source)
        && filter.dataset.as_deref().is_none_or(|dataset| entry.dataset == dataset)
        && filter.user_id.as_deref().is_none_or(|user| entry.user_id.as_deref() == Some(user))
        && filter.from.is_none_or(|from| entry.timestamp >= from)
        && filter.to.is_none_or(|to| entry.timestamp <= to)
}

/// The filters checked: each facet alone, two together, with a time range, and a value no
/// log holds.
fn filters() -> Vec<LogFilter> {
    vec![
        LogFilter { level: Some(Level::Error), ..LogFilter::default() },
        LogFilter { environment: Some(Environment::ALL[1]), ..LogFilter::default() },
        LogFilter { source: Some("worker".into()), ..LogFilter::default() },
        LogFilter { dataset: Some("audit".into()), ..LogFilter::default() },
        LogFilter { user_id: Some("u-5".into()), ..LogFilter::default() },
        LogFilter { level: Some(Level::Info), source: Some("web".into()), ..LogFilter::default() },
        LogFilter { user_id: Some("u-1".into()), from: Some(T0 + 20), to: Some(T0 + 60), ..LogFilter::default() },
        LogFilter { user_id: Some("nobody".into()), ..LogFilter::default() },
    ]
}

const PAGES: [Page; 5] = [
    Page { limit: 1, offset: 0 },
    Page { limit: 3, offset: 0 },
    Page { limit: 3, offset: 4 },
    Page { limit: 10, offset: 9 },
    Page { limit: 1000, offset: 0 },
];

/// Checks every filter and page of lists, and of a search for "needle", against `expected`.
async fn check(store: &PgStore, workspace: &Workspace, expected: &[Log], when: &str) {
    let search = Search { query: Query::parse("needle").expect("query"), fields: vec![SearchField::Message] };
    for filter in filters() {
        for searching in [false, true] {
            let mut matching: Vec<&Log> = expected
                .iter()
                .filter(|log| keeps(&filter, log) && (!searching || log.entry.message.contains("needle")))
                .collect();
            matching.sort_by_key(|log| std::cmp::Reverse((log.entry.timestamp, log.id)));
            for page in PAGES {
                let got = if searching {
                    store.search_logs(workspace.id, &search, &filter, page).await.expect("search")
                } else {
                    store.list_logs(workspace.id, &filter, page).await.expect("list")
                };
                let want: Vec<_> =
                    matching.iter().skip(page.offset as usize).take(page.limit as usize).map(|log| log.id).collect();
                let ids: Vec<_> = got.logs.iter().map(|log| log.id).collect();
                let what = format!("{when}, search {searching}, {filter:?}, {page:?}");
                assert_eq!(ids, want, "{what}");
                assert_eq!(got.has_more, matching.len() > (page.offset + u64::from(page.limit)) as usize, "{what}");
            }
        }
    }
}

#[tokio::test]
async fn facet_filtered_lists_and_searches_match_the_logs_page_by_page() {
    let database = TestDatabase::new("sluice_facets").await;
    let options = PgOptions { pool_size: 2, index_chunk_rows: 3, ..PgOptions::default() };
    let store = PgStore::connect(database.url(), &options).await.expect("connect");
    let (workspace, other) = (Workspace::new("w", Plan::Enterprise, T0), Workspace::new("o", Plan::Enterprise, T0));
    store.create_workspace(&workspace).await.expect("workspace");
    store.create_workspace(&other).await.expect("workspace");
    let mut expected = Vec::new();
    // The other workspace's logs hold the same values, in between: none may show up.
    for (mine, theirs) in logs("mine").into_iter().zip(logs("theirs")) {
        store.insert_logs(workspace.id, &mine).await.expect("insert");
        store.insert_logs(other.id, &theirs).await.expect("insert");
        expected.extend(mine);
    }
    check(&store, &workspace, &expected, "own facets").await;

    let mut connection = AsyncPgConnection::establish(database.url()).await.expect("connect");
    connection
        .batch_execute("UPDATE log_chunks SET facets = decode(repeat('ff', 512), 'hex')")
        .await
        .expect("facets as the migration leaves older chunks");
    check(&store, &workspace, &expected, "all-ones facets").await;
}
