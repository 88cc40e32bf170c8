//! Conformance: inserting, getting and listing logs (fields round-trip, order, pages,
//! filters, time bounds, failed and large batches), each scoped to its workspace.

use super::*;
use crate::CountsRead;

/// Every field written comes back unchanged, including JSON data with nested values and Unicode.
pub async fn insert_then_get_round_trips_every_field(store: &dyn Store) {
    let workspace = new_workspace(store, "w").await;
    let mut full = log("full ünïcødé ✓", T0);
    full.entry.level = Level::Error;
    full.entry.environment = Environment::Staging;
    full.entry.dataset = "payments".into();
    full.entry.version = Some("1.2.3".into());
    full.entry.user_id = Some("u1".into());
    full.entry.session_id = Some("s1".into());
    full.entry.request_id = Some("r1".into());
    full.entry.data = json!({"nested": {"a": [1, 2.5, null, true]}, "text": "é"}).as_object().map(JsonObject::from_map);
    full.entry.error_name = Some("TypeError".into());
    full.entry.error_stack = Some("at x\nat y".into());
    full.entry.tags = Some(vec!["a".into(), "b c".into()]);
    full.entry.flow_id = Some("flow-1".into());
    full.entry.step_index = Some(1000);
    full.country = Some("NL".into());
    full.ip_address = Some("2001:db8::1".into());
    let bare = log("bare", T0 - 1);
    store.insert_logs(workspace, &[full.clone(), bare.clone()]).await.expect("insert");

    assert_eq!(store.get_log(workspace, full.id).await.expect("get"), Some(full));
    assert_eq!(store.get_log(workspace, bare.id).await.expect("get"), Some(bare));
    assert_eq!(store.get_log(workspace, LogId::generate()).await.expect("get"), None);
}

/// JSON lets a client send U+0000 and U+10FFFF in any string: they are stored, returned,
/// filtered on, searched and counted like any other character.
pub async fn text_with_nul_and_rare_characters_round_trips(store: &dyn Store) {
    let workspace = new_workspace(store, "w").await;
    let mut odd = log("nul\0inside and \u{10FFFF}0 max", T0);
    odd.entry.source = "src\0".into();
    odd.entry.dataset = "\u{10FFFF}E".into();
    odd.entry.user_id = Some("user\0\u{10FFFF}".into());
    odd.entry.error_name = Some("Err\0".into());
    let plain = log("plain", T0 + 1);
    store.insert_logs(workspace, &[odd.clone(), plain]).await.expect("insert");

    assert_eq!(store.get_log(workspace, odd.id).await.expect("get"), Some(odd.clone()));
    let filter = LogFilter {
        source: Some("src\0".into()),
        dataset: Some("\u{10FFFF}E".into()),
        user_id: Some("user\0\u{10FFFF}".into()),
        ..LogFilter::default()
    };
    let page = store.list_logs(workspace, &filter, EVERYTHING).await.expect("list");
    assert_eq!(page.logs, [odd.clone()]);
    let filter = LogFilter { source: Some("src".into()), ..LogFilter::default() };
    assert!(store.list_logs(workspace, &filter, EVERYTHING).await.expect("list").logs.is_empty());
    assert_eq!(
        found(store, workspace, "\"\u{10FFFF}0 max\"", &[SearchField::Message]).await,
        [odd.entry.message.clone()]
    );
    assert_eq!(found(store, workspace, "inside", &[SearchField::Message]).await, [odd.entry.message.clone()]);
    let counts = store
        .level_counts(
            workspace,
            CountsRead {
                from_ms: hour_start(T0),
                to_ms: hour_start(T0) + MS_PER_HOUR,
                filter: &RollupFilter::default(),
                by: CountBy::Source,
            },
        )
        .await
        .expect("counts");
    let mut sources: Vec<String> = counts
        .iter()
        .map(|count| match &count.bucket {
            Bucket::Source(source) => source.clone(),
            other => format!("{other:?}"),
        })
        .collect();
    sources.sort();
    assert_eq!(sources, ["api", "src\0"]);
}

/// A log is invisible through another workspace.
pub async fn get_is_scoped_to_the_workspace(store: &dyn Store) {
    let mine = new_workspace(store, "mine").await;
    let theirs = new_workspace(store, "theirs").await;
    let secret = log("secret", T0);
    store.insert_logs(theirs, std::slice::from_ref(&secret)).await.expect("insert");
    assert_eq!(store.get_log(mine, secret.id).await.expect("get"), None);
    assert!(store.get_log(theirs, secret.id).await.expect("get").is_some());
}

/// Newest timestamp first; equal timestamps by id, highest first.
pub async fn list_orders_newest_first_with_id_tiebreak(store: &dyn Store) {
    let workspace = new_workspace(store, "w").await;
    let old = log("old", T0);
    let tie_low = log("tie-low", T0 + 5);
    let tie_high = log("tie-high", T0 + 5);
    let new = log("new", T0 + 10);
    store.insert_logs(workspace, &[tie_high.clone(), old, new, tie_low.clone()]).await.expect("insert");
    assert!(tie_high.id > tie_low.id);
    let page = store.list_logs(workspace, &LogFilter::default(), EVERYTHING).await.expect("list");
    assert_eq!(messages(&page.logs), vec!["new", "tie-high", "tie-low", "old"]);
    assert!(!page.has_more);
}

/// `has_more` is true exactly when another matching log follows the page.
pub async fn list_pages_report_has_more_exactly(store: &dyn Store) {
    let workspace = new_workspace(store, "w").await;
    let logs: Vec<Log> = (0..5).map(|i| log(&format!("m{i}"), T0 + i)).collect();
    store.insert_logs(workspace, &logs).await.expect("insert");
    let filter = LogFilter::default();
    let page = |limit, offset| store.list_logs(workspace, &filter, Page { limit, offset });

    let first = page(2, 0).await.expect("page");
    assert_eq!((messages(&first.logs), first.has_more), (vec!["m4", "m3"], true));
    let second = page(2, 2).await.expect("page");
    assert_eq!((messages(&second.logs), second.has_more), (vec!["m2", "m1"], true));
    let last = page(2, 4).await.expect("page");
    assert_eq!((messages(&last.logs), last.has_more), (vec!["m0"], false));
    let exact = page(5, 0).await.expect("page");
    assert_eq!((exact.logs.len(), exact.has_more), (5, false));
    let exact_last = page(1, 4).await.expect("page");
    assert_eq!((messages(&exact_last.logs), exact_last.has_more), (vec!["m0"], false));
    let beyond = page(2, 50).await.expect("page");
    assert_eq!((beyond.logs.len(), beyond.has_more), (0, false));
}

/// Each filter alone selects exactly its logs; several together intersect.
pub async fn list_filters_alone_and_combined(store: &dyn Store) {
    let workspace = new_workspace(store, "w").await;
    let mut a = log("a", T0);
    a.entry.level = Level::Error;
    a.entry.source = "billing".into();
    a.entry.user_id = Some("u1".into());
    a.entry.flow_id = Some("f1".into());
    let mut b = log("b", T0 + 1);
    b.entry.environment = Environment::Development;
    b.entry.dataset = "audit".into();
    b.entry.session_id = Some("s1".into());
    b.entry.user_id = Some("u1".into());
    let mut c = log("c", T0 + 2);
    c.entry.level = Level::Error;
    c.entry.session_id = Some("s1".into());
    store.insert_logs(workspace, &[a, b, c]).await.expect("insert");

    let cases: Vec<(LogFilter, Vec<&str>)> = vec![
        (LogFilter { level: Some(Level::Error), ..LogFilter::default() }, vec!["c", "a"]),
        (LogFilter { source: Some("billing".into()), ..LogFilter::default() }, vec!["a"]),
        (LogFilter { environment: Some(Environment::Development), ..LogFilter::default() }, vec!["b"]),
        (LogFilter { dataset: Some("audit".into()), ..LogFilter::default() }, vec!["b"]),
        (LogFilter { user_id: Some("u1".into()), ..LogFilter::default() }, vec!["b", "a"]),
        (LogFilter { session_id: Some("s1".into()), ..LogFilter::default() }, vec!["c", "b"]),
        (LogFilter { flow_id: Some("f1".into()), ..LogFilter::default() }, vec!["a"]),
        (LogFilter { source: Some("nobody".into()), ..LogFilter::default() }, vec![]),
        (LogFilter { level: Some(Level::Error), session_id: Some("s1".into()), ..LogFilter::default() }, vec!["c"]),
        (LogFilter { user_id: Some("u1".into()), level: Some(Level::Info), ..LogFilter::default() }, vec!["b"]),
        (LogFilter { level: Some(Level::Error), from: Some(T0 + 1), ..LogFilter::default() }, vec!["c"]),
    ];
    for (filter, expected) in cases {
        let page = store.list_logs(workspace, &filter, EVERYTHING).await.expect("list");
        assert_eq!(messages(&page.logs), expected, "filter {filter:?}");
    }
}

/// `from` and `to` both include their bound.
pub async fn list_time_bounds_are_inclusive(store: &dyn Store) {
    let workspace = new_workspace(store, "w").await;
    let logs: Vec<Log> = (0..5).map(|i| log(&format!("m{i}"), T0 + i * 10)).collect();
    store.insert_logs(workspace, &logs).await.expect("insert");
    let filter = LogFilter { from: Some(T0 + 10), to: Some(T0 + 30), ..LogFilter::default() };
    let page = store.list_logs(workspace, &filter, EVERYTHING).await.expect("list");
    assert_eq!(messages(&page.logs), vec!["m3", "m2", "m1"]);
    let filter = LogFilter { from: Some(T0 + 31), to: Some(T0 + 39), ..LogFilter::default() };
    assert!(store.list_logs(workspace, &filter, EVERYTHING).await.expect("list").logs.is_empty());
}

/// A workspace never lists another's logs, whatever the filter.
pub async fn list_is_scoped_to_the_workspace(store: &dyn Store) {
    let mine = new_workspace(store, "mine").await;
    let theirs = new_workspace(store, "theirs").await;
    store.insert_logs(mine, &[log("mine", T0)]).await.expect("insert");
    store.insert_logs(theirs, &[log("theirs", T0 + 1)]).await.expect("insert");
    let page = store.list_logs(mine, &LogFilter::default(), EVERYTHING).await.expect("list");
    assert_eq!(messages(&page.logs), vec!["mine"]);
    let filter = LogFilter { source: Some("api".into()), ..LogFilter::default() };
    let page = store.list_logs(theirs, &filter, EVERYTHING).await.expect("list");
    assert_eq!(messages(&page.logs), vec!["theirs"]);
}

/// A batch that fails part-way (here: its last log repeats the first, id and timestamp,
/// after more rows, and more bytes, than one insert statement takes) leaves nothing behind.
pub async fn failed_batch_stores_nothing(store: &dyn Store) {
    let workspace = new_workspace(store, "w").await;
    let first = log("first", T0);
    let mut twin = log("twin", T0);
    twin.id = first.id;
    let mut batch = vec![log("before", T0 + 2), first];
    let filler = format!("filler {}", "x".repeat(2_000));
    batch.extend((0..1_200).map(|index| log(&filler, T0 + 3 + index)));
    batch.push(twin);
    assert!(store.insert_logs(workspace, &batch).await.is_err());
    let page = store.list_logs(workspace, &LogFilter::default(), EVERYTHING).await.expect("list");
    assert!(page.logs.is_empty(), "a failed batch stored {:?}", messages(&page.logs));
}

/// A batch far larger than one request's 100 entries (bulk imports, benches; megabytes, more
/// than one insert statement carries) is stored whole, each log found by its own text.
pub async fn large_batches_are_stored_whole(store: &dyn Store) {
    let workspace = new_workspace(store, "w").await;
    let padding = "y".repeat(1_500);
    let logs: Vec<Log> = (0..2_500).map(|i| log(&format!("m{i} {} {padding}", request_id(i)), T0 + i)).collect();
    store.insert_logs(workspace, &logs).await.expect("insert");
    let page =
        store.list_logs(workspace, &LogFilter::default(), Page { limit: 1000, offset: 2_000 }).await.expect("list");
    assert_eq!((page.logs.len(), page.has_more), (500, false));
    assert_eq!(page.logs.last().map(|log| log.entry.message.as_str()), Some(logs[0].entry.message.as_str()));
    for i in [0, 699, 700, 1_401, 2_499] {
        let found = found(store, workspace, &request_id(i), &[SearchField::Message]).await;
        assert_eq!(found, [logs[i as usize].entry.message.as_str()], "log {i}");
    }
}

/// The logs stored after an id, the latest `limit` of them, oldest first (a tail's replay),
/// whatever their timestamps; only the workspace's own.
pub async fn logs_after_an_id_come_in_the_order_they_were_stored(store: &dyn Store) {
    let workspace = new_workspace(store, "replay").await;
    let other = new_workspace(store, "other").await;
    // Ids are given as logs are accepted; timestamps run backwards here.
    let batch: Vec<Log> = (0..5).map(|n| log(&format!("r{n}"), T0 - n)).collect();
    for log in &batch {
        store.insert_logs(workspace, std::slice::from_ref(log)).await.expect("insert");
    }
    store.insert_logs(other, &[log("theirs", T0)]).await.expect("insert");
    let after = store.logs_after(workspace, batch[1].id, 1_000).await.expect("after");
    assert_eq!(messages(&after), ["r2", "r3", "r4"]);
    let latest = store.logs_after(workspace, batch[0].id, 2).await.expect("after");
    assert_eq!(messages(&latest), ["r3", "r4"], "the latest of them, oldest first");
    assert!(store.logs_after(workspace, batch[4].id, 10).await.expect("after").is_empty());
}
