//! The storage conformance suite: one set of behaviours every backend must show.
//!
//! A backend's tests call [`conformance_suite!`](crate::conformance_suite) with an async
//! closure that builds a fresh, empty store (its own file or database); each behaviour below
//! becomes one `#[tokio::test]`. Nothing here knows which backend it runs against.

use serde_json::json;
use sluice_model::{
    ApiKeyRecord, Environment, JsonObject, KeyEnv, KeyId, KeyState, Level, Limits, Log, LogEntry, LogId, Plan, Scopes,
    Workspace, WorkspaceId,
};

use sluice_query::stats::{
    Bucket, CountBy, LevelCount, MS_PER_DAY, MS_PER_HOUR, RollupFilter, day_start_ms, hour_start,
};
use sluice_query::{Query, SearchField};

use crate::{Batch, LogFilter, NewApiKey, Page, Search, Store, StoreError, accepted_month, month_start_ms, retention};

/// Builds one test per behaviour of this module. `$make` is an expression evaluating to an
/// async closure (or function) that returns something dereferencing to the store under test.
#[macro_export]
macro_rules! conformance_suite {
    ($make:expr) => {
        $crate::conformance_suite!(@each $make;
            insert_then_get_round_trips_every_field,
            text_with_nul_and_rare_characters_round_trips,
            get_is_scoped_to_the_workspace,
            list_orders_newest_first_with_id_tiebreak,
            list_pages_report_has_more_exactly,
            list_filters_alone_and_combined,
            list_time_bounds_are_inclusive,
            list_is_scoped_to_the_workspace,
            failed_batch_stores_nothing,
            large_batches_are_stored_whole,
            workspaces_create_list_get_and_set_plan,
            keys_create_find_list_and_revoke,
            bootstrap_happens_once,
            ping_answers,
            search_finds_every_query_form_case_insensitively,
            search_fields_choose_where_to_look,
            search_filters_orders_and_pages,
            search_is_scoped_to_the_workspace,
            level_counts_group_by_hour_and_source_with_filters,
            level_counts_are_scoped_to_the_workspace,
            delete_before_removes_logs_everywhere,
            sweep_applies_each_workspace_cutoff,
            quota_refuses_the_batch_that_would_cross_it,
            quota_follows_plan_changes_and_counts_per_workspace,
            a_group_refuses_only_the_batches_over_their_quota,
            retention_sweep_keeps_each_workspace_its_days,
            rollups_equal_the_rows_after_random_ingests_and_deletes
        );
    };
    (@each $make:expr; $($name:ident),+) => {
        $(
            #[tokio::test]
            async fn $name() {
                let fixture = ($make)().await;
                let store: &dyn $crate::Store = &*fixture;
                $crate::conformance::$name(store).await;
            }
        )+
    };
}

const T0: i64 = 1_700_000_000_000;

fn workspace(name: &str) -> Workspace {
    // Enterprise: no quota in the way of tests about something else.
    Workspace::new(name, Plan::Enterprise, T0)
}

async fn new_workspace(store: &dyn Store, name: &str) -> WorkspaceId {
    let workspace = workspace(name);
    store.create_workspace(&workspace).await.expect("create workspace");
    workspace.id
}

/// A plain log of `message` at `timestamp` (info, source `api`, production), for tests.
pub fn log(message: &str, timestamp: i64) -> Log {
    Log {
        id: LogId::generate(),
        entry: LogEntry {
            timestamp,
            level: Level::Info,
            message: message.to_owned(),
            source: "api".into(),
            environment: Environment::Production,
            dataset: "default".into(),
            version: None,
            user_id: None,
            session_id: None,
            request_id: None,
            data: None,
            error_name: None,
            error_stack: None,
            tags: None,
            flow_id: None,
            step_index: None,
        },
        country: None,
        ip_address: None,
    }
}

const EVERYTHING: Page = Page { limit: 1000, offset: 0 };

fn messages(logs: &[Log]) -> Vec<&str> {
    logs.iter().map(|log| log.entry.message.as_str()).collect()
}

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
            hour_start(T0),
            hour_start(T0) + MS_PER_HOUR,
            &RollupFilter::default(),
            CountBy::Source,
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
/// after more rows than one insert statement takes) leaves nothing behind.
pub async fn failed_batch_stores_nothing(store: &dyn Store) {
    let workspace = new_workspace(store, "w").await;
    let first = log("first", T0);
    let mut twin = log("twin", T0);
    twin.id = first.id;
    let mut batch = vec![log("before", T0 + 2), first];
    batch.extend((0..1_200).map(|index| log("filler", T0 + 3 + index)));
    batch.push(twin);
    assert!(store.insert_logs(workspace, &batch).await.is_err());
    let page = store.list_logs(workspace, &LogFilter::default(), EVERYTHING).await.expect("list");
    assert!(page.logs.is_empty(), "a failed batch stored {:?}", messages(&page.logs));
}

/// A batch far larger than one request's 100 entries (bulk imports, benches) is stored whole.
pub async fn large_batches_are_stored_whole(store: &dyn Store) {
    let workspace = new_workspace(store, "w").await;
    let logs: Vec<Log> = (0..2_500).map(|i| log(&format!("m{i}"), T0 + i)).collect();
    store.insert_logs(workspace, &logs).await.expect("insert");
    let page =
        store.list_logs(workspace, &LogFilter::default(), Page { limit: 1000, offset: 2_000 }).await.expect("list");
    assert_eq!((page.logs.len(), page.has_more), (500, false));
    assert_eq!(page.logs.last().map(|log| log.entry.message.as_str()), Some("m0"));
}

/// Workspaces are stored, listed oldest first, read back and re-planned.
pub async fn workspaces_create_list_get_and_set_plan(store: &dyn Store) {
    let first = workspace("first");
    let mut second = workspace("second");
    second.created_at = T0 + 1;
    second.plan = Plan::Enterprise;
    store.create_workspace(&first).await.expect("create");
    store.create_workspace(&second).await.expect("create");
    assert_eq!(store.list_workspaces().await.expect("list"), vec![first.clone(), second.clone()]);
    store.set_plan(first.id, Plan::Pro, Plan::Pro.limits()).await.expect("set plan");
    let reread = store.get_workspace(first.id).await.expect("get").expect("exists");
    assert_eq!((reread.plan, reread.limits), (Plan::Pro, Plan::Pro.limits()));
    // Custom figures, unlimited ones included, round-trip.
    let custom = Limits { requests_per_minute: Some(5_000), logs_per_month: None, retention_days: 400 };
    store.set_plan(second.id, Plan::Enterprise, custom).await.expect("set custom");
    assert_eq!(store.get_workspace(second.id).await.expect("get").expect("exists").limits, custom);
    let unlimited =
        Limits { requests_per_minute: None, logs_per_month: Some(u64::from(u32::MAX) * 4), retention_days: 1 };
    store.set_plan(second.id, Plan::Enterprise, unlimited).await.expect("set unlimited");
    assert_eq!(store.get_workspace(second.id).await.expect("get").expect("exists").limits, unlimited);
    assert_eq!(store.get_workspace(WorkspaceId::generate()).await.expect("get"), None);
    let missing = store.set_plan(WorkspaceId::generate(), Plan::Pro, Plan::Pro.limits()).await;
    assert!(matches!(missing, Err(StoreError::NotFound(_))));
}

/// Keys are found by hash with their workspace, listed, and revoked.
pub async fn keys_create_find_list_and_revoke(store: &dyn Store) {
    let workspace = workspace("w");
    store.create_workspace(&workspace).await.expect("create");
    let key = NewApiKey {
        record: ApiKeyRecord {
            id: KeyId::generate(),
            workspace_id: workspace.id,
            name: Some("ci".into()),
            env: KeyEnv::Test,
            scopes: Scopes { ingest: true, read: false },
            created_at: T0,
            expires_at: Some(T0 + 60_000),
            revoked_at: None,
        },
        hash: [7; 32],
    };
    store.create_key(&key).await.expect("create key");
    let (found, owner) = store.find_key(&[7; 32]).await.expect("find").expect("present");
    assert_eq!((found, owner), (key.record.clone(), workspace.clone()));
    assert_eq!(store.find_key(&[8; 32]).await.expect("find"), None);
    assert_eq!(store.list_keys(workspace.id).await.expect("list"), vec![key.record.clone()]);

    store.revoke_key(key.record.id, T0 + 5).await.expect("revoke");
    store.revoke_key(key.record.id, T0 + 9).await.expect("revoke twice");
    let (revoked, _) = store.find_key(&[7; 32]).await.expect("find").expect("present");
    assert_eq!(revoked.revoked_at, Some(T0 + 5));
    assert_eq!(revoked.state(T0 + 6), KeyState::Revoked);
    assert!(matches!(store.revoke_key(KeyId::generate(), T0).await, Err(StoreError::NotFound(_))));
    let duplicate = NewApiKey { record: ApiKeyRecord { id: KeyId::generate(), ..key.record.clone() }, hash: [7; 32] };
    assert!(store.create_key(&duplicate).await.is_err(), "two keys may not share a hash");
}

/// The first-start bootstrap stores its workspace and key once, and never over existing ones.
pub async fn bootstrap_happens_once(store: &dyn Store) {
    let make = |hash: u8| {
        let workspace = workspace("default");
        let key = NewApiKey {
            record: ApiKeyRecord {
                id: KeyId::generate(),
                workspace_id: workspace.id,
                name: None,
                env: KeyEnv::Live,
                scopes: Scopes::ALL,
                created_at: T0,
                expires_at: None,
                revoked_at: None,
            },
            hash: [hash; 32],
        };
        (workspace, key)
    };
    let (workspace, key) = make(1);
    assert!(store.bootstrap(&workspace, &key).await.expect("bootstrap"));
    let (again, again_key) = make(2);
    assert!(!store.bootstrap(&again, &again_key).await.expect("bootstrap"));
    assert_eq!(store.list_workspaces().await.expect("list"), vec![workspace]);
    assert!(store.find_key(&[1; 32]).await.expect("find").is_some());
    assert!(store.find_key(&[2; 32]).await.expect("find").is_none());
}

/// A healthy store answers its health check.
pub async fn ping_answers(store: &dyn Store) {
    store.ping().await.expect("ping");
}

fn search(raw: &str, fields: &[SearchField]) -> Search {
    Search { query: Query::parse(raw).expect("a valid query"), fields: fields.to_vec() }
}

async fn found(store: &dyn Store, workspace: WorkspaceId, raw: &str, fields: &[SearchField]) -> Vec<String> {
    let page =
        store.search_logs(workspace, &search(raw, fields), &LogFilter::default(), EVERYTHING).await.expect("search");
    page.logs.into_iter().map(|log| log.entry.message).collect()
}

/// Terms, phrases, OR chains, exclusions, only exclusions, short needles, Unicode case and
/// literal SQL wildcards: each finds exactly the logs the matcher accepts.
pub async fn search_finds_every_query_form_case_insensitively(store: &dyn Store) {
    let workspace = new_workspace(store, "w").await;
    let texts = [
        "Timeout talking to DB-1",
        "connection reset by peer",
        "disk 100% full",
        "user_id missing",
        r"path C:\temp\x",
        "ÉTÉ CHAUD à Straße",
        "ΟΔΟΣ closed",
        "all good",
    ];
    let logs: Vec<Log> = texts.iter().enumerate().map(|(i, text)| log(text, T0 + i as i64)).collect();
    store.insert_logs(workspace, &logs).await.expect("insert");
    let message = &[SearchField::Message];
    let cases: Vec<(&str, Vec<&str>)> = vec![
        ("timeout", vec!["Timeout talking to DB-1"]),
        ("TIMEOUT db-1", vec!["Timeout talking to DB-1"]),
        ("timeout reset", vec![]),
        (r#""reset by peer""#, vec!["connection reset by peer"]),
        (r#""by reset""#, vec![]),
        (r#""reset by"#, vec!["connection reset by peer"]),
        ("timeout OR reset OR good", vec!["all good", "connection reset by peer", "Timeout talking to DB-1"]),
        ("timeout OR reset -peer", vec!["Timeout talking to DB-1"]),
        ("-o", vec!["disk 100% full", "user_id missing", r"path C:\temp\x", "ÉTÉ CHAUD à Straße"]),
        ("-timeout -reset -good -disk -user -path -été", vec!["ΟΔΟΣ closed"]),
        ("% disk", vec!["disk 100% full"]),
        ("%%", vec![]),
        ("0%", vec!["disk 100% full"]),
        ("r_i", vec!["user_id missing"]),
        ("_ missing", vec!["user_id missing"]),
        ("r_", vec!["user_id missing"]),
        ("__", vec![]),
        (r"c:\temp", vec![r"path C:\temp\x"]),
        (r"\ path", vec![r"path C:\temp\x"]),
        (r"\t", vec![r"path C:\temp\x"]),
        ("été chaud", vec!["ÉTÉ CHAUD à Straße"]),
        ("STRASSE", vec![]),
        ("straße", vec!["ÉTÉ CHAUD à Straße"]),
        ("οδοσ", vec!["ΟΔΟΣ closed"]),
        ("ab", vec![]),
        ("db", vec!["Timeout talking to DB-1"]),
    ];
    for (raw, expected) in cases {
        let mut expected: Vec<String> = expected.into_iter().map(str::to_owned).collect();
        // Newest first: the texts were inserted oldest first.
        expected.sort_by_key(|text| std::cmp::Reverse(texts.iter().position(|t| t == text)));
        assert_eq!(found(store, workspace, raw, message).await, expected, "query {raw:?}");
    }
}

/// `fields` picks the columns searched; `data` is searched as its JSON text.
pub async fn search_fields_choose_where_to_look(store: &dyn Store) {
    let workspace = new_workspace(store, "w").await;
    let mut failing = log("request failed", T0);
    failing.entry.error_name = Some("TimeoutError".into());
    failing.entry.error_stack = Some("at Pool.acquire (pool.js:10)".into());
    failing.entry.data = json!({"host": "db-7", "retries": 3}).as_object().map(JsonObject::from_map);
    let plain = log("timeout on db-7 pool", T0 + 1);
    store.insert_logs(workspace, &[failing, plain]).await.expect("insert");

    let all = SearchField::ALL;
    assert_eq!(found(store, workspace, "timeout", &[SearchField::Message]).await, ["timeout on db-7 pool"]);
    assert_eq!(found(store, workspace, "timeouterror", &[SearchField::ErrorName]).await, ["request failed"]);
    assert_eq!(found(store, workspace, "pool.acquire", &[SearchField::ErrorStack]).await, ["request failed"]);
    assert_eq!(found(store, workspace, "pool.acquire", &[SearchField::Message]).await, Vec::<String>::new());
    assert_eq!(found(store, workspace, r#""host":"db-7""#, &[SearchField::Data]).await, ["request failed"]);
    assert_eq!(found(store, workspace, r#""retries":3"#, &[SearchField::Data]).await, ["request failed"]);
    assert_eq!(found(store, workspace, "db-7", &all).await, ["timeout on db-7 pool", "request failed"]);
    // Each term may be in a different searched field.
    assert_eq!(found(store, workspace, "failed timeouterror", &all).await, ["request failed"]);
    assert_eq!(found(store, workspace, "failed timeouterror", &[SearchField::Message]).await, Vec::<String>::new());
    // An exclusion looks in every searched field too.
    assert_eq!(found(store, workspace, "db-7 -retries", &all).await, ["timeout on db-7 pool"]);
}

/// Search takes list's filters, orders newest first with the id tiebreak, and pages with an
/// exact `has_more`.
pub async fn search_filters_orders_and_pages(store: &dyn Store) {
    let workspace = new_workspace(store, "w").await;
    let mut logs: Vec<Log> = (0..7).map(|i| log(&format!("payment {i} failed"), T0 + i)).collect();
    logs[1].entry.level = Level::Error;
    logs[2].entry.source = "billing".into();
    logs[3].entry.environment = Environment::Staging;
    logs[4].entry.dataset = "audit".into();
    let tie_a = log("payment tie failed", T0 + 100);
    let tie_b = log("payment tie failed", T0 + 100);
    let (low, high) = if tie_a.id < tie_b.id { (tie_a, tie_b) } else { (tie_b, tie_a) };
    logs.push(low.clone());
    logs.push(high.clone());
    logs.push(log("something else", T0 + 200));
    store.insert_logs(workspace, &logs).await.expect("insert");

    let query = search("payment failed", &[SearchField::Message]);
    let run = |filter: LogFilter, page: Page| {
        let query = query.clone();
        async move { store.search_logs(workspace, &query, &filter, page).await.expect("search") }
    };
    let all = run(LogFilter::default(), EVERYTHING).await;
    let ids: Vec<LogId> = all.logs.iter().map(|log| log.id).collect();
    assert_eq!(ids[..2], [high.id, low.id], "newest first, equal timestamps by id desc");
    assert_eq!(
        messages(&all.logs)[2..],
        [
            "payment 6 failed",
            "payment 5 failed",
            "payment 4 failed",
            "payment 3 failed",
            "payment 2 failed",
            "payment 1 failed",
            "payment 0 failed"
        ]
    );

    let filters: Vec<(LogFilter, Vec<&str>)> = vec![
        (LogFilter { level: Some(Level::Error), ..LogFilter::default() }, vec!["payment 1 failed"]),
        (LogFilter { source: Some("billing".into()), ..LogFilter::default() }, vec!["payment 2 failed"]),
        (LogFilter { environment: Some(Environment::Staging), ..LogFilter::default() }, vec!["payment 3 failed"]),
        (LogFilter { dataset: Some("audit".into()), ..LogFilter::default() }, vec!["payment 4 failed"]),
        (
            LogFilter { from: Some(T0 + 5), to: Some(T0 + 6), ..LogFilter::default() },
            vec!["payment 6 failed", "payment 5 failed"],
        ),
    ];
    for (filter, expected) in filters {
        assert_eq!(messages(&run(filter.clone(), EVERYTHING).await.logs), expected, "{filter:?}");
    }

    let first = run(LogFilter::default(), Page { limit: 4, offset: 0 }).await;
    assert_eq!((first.logs.len(), first.has_more), (4, true));
    let last = run(LogFilter::default(), Page { limit: 4, offset: 6 }).await;
    assert_eq!(
        (messages(&last.logs), last.has_more),
        (vec!["payment 2 failed", "payment 1 failed", "payment 0 failed"], false)
    );
    let exact = run(LogFilter::default(), Page { limit: 9, offset: 0 }).await;
    assert_eq!((exact.logs.len(), exact.has_more), (9, false));
    // A short needle is not indexable: the same answers by walking the logs.
    let short = search("nt -tie", &[SearchField::Message]);
    let page = store
        .search_logs(workspace, &short, &LogFilter::default(), Page { limit: 2, offset: 1 })
        .await
        .expect("search");
    assert_eq!((messages(&page.logs), page.has_more), (vec!["payment 5 failed", "payment 4 failed"], true));
}

/// Another workspace's logs are never found.
pub async fn search_is_scoped_to_the_workspace(store: &dyn Store) {
    let mine = new_workspace(store, "mine").await;
    let theirs = new_workspace(store, "theirs").await;
    store.insert_logs(theirs, &[log("secret token leaked", T0)]).await.expect("insert");
    store.insert_logs(mine, &[log("public notice", T0)]).await.expect("insert");
    assert_eq!(found(store, mine, "secret", &[SearchField::Message]).await, Vec::<String>::new());
    assert_eq!(found(store, mine, "-public", &[SearchField::Message]).await, Vec::<String>::new());
    assert_eq!(found(store, mine, "se", &[SearchField::Message]).await, Vec::<String>::new());
    assert_eq!(found(store, theirs, "secret", &[SearchField::Message]).await, ["secret token leaked"]);
}

fn sorted(mut counts: Vec<LevelCount>) -> Vec<(Bucket, Level, u64)> {
    counts.sort_by(|a, b| (&a.bucket, a.level).cmp(&(&b.bucket, b.level)));
    counts.into_iter().filter(|count| count.count > 0).map(|count| (count.bucket, count.level, count.count)).collect()
}

/// Counts by hour (hour edges exact, the end exclusive) and by source, with each filter.
pub async fn level_counts_group_by_hour_and_source_with_filters(store: &dyn Store) {
    let workspace = new_workspace(store, "w").await;
    let hour = hour_start(T0);
    let at = |message: &str, timestamp: i64, level: Level, source: &str| {
        let mut entry = log(message, timestamp);
        entry.entry.level = level;
        entry.entry.source = source.into();
        entry
    };
    let mut staging = at("s", hour + 10, Level::Warn, "api");
    staging.entry.environment = Environment::Staging;
    let mut audit = at("d", hour + 20, Level::Warn, "api");
    audit.entry.dataset = "audit".into();
    let logs = vec![
        at("before", hour - 1, Level::Info, "api"),
        at("first ms", hour, Level::Info, "api"),
        at("last ms", hour + MS_PER_HOUR - 1, Level::Error, "web"),
        at("next hour", hour + MS_PER_HOUR, Level::Info, "web"),
        at("end", hour + 2 * MS_PER_HOUR, Level::Debug, "web"),
        staging,
        audit,
    ];
    store.insert_logs(workspace, &logs).await.expect("insert");
    let counts = |filter: RollupFilter, by: CountBy| async move {
        sorted(store.level_counts(workspace, hour, hour + 2 * MS_PER_HOUR, &filter, by).await.expect("counts"))
    };
    assert_eq!(
        counts(RollupFilter::default(), CountBy::Hour).await,
        [
            (Bucket::Hour(hour), Level::Info, 1),
            (Bucket::Hour(hour), Level::Warn, 2),
            (Bucket::Hour(hour), Level::Error, 1),
            (Bucket::Hour(hour + MS_PER_HOUR), Level::Info, 1),
        ]
    );
    assert_eq!(
        counts(RollupFilter::default(), CountBy::Source).await,
        [
            (Bucket::Source("api".into()), Level::Info, 1),
            (Bucket::Source("api".into()), Level::Warn, 2),
            (Bucket::Source("web".into()), Level::Info, 1),
            (Bucket::Source("web".into()), Level::Error, 1),
        ]
    );
    let web = RollupFilter { source: Some("web".into()), ..RollupFilter::default() };
    assert_eq!(
        counts(web, CountBy::Hour).await,
        [(Bucket::Hour(hour), Level::Error, 1), (Bucket::Hour(hour + MS_PER_HOUR), Level::Info, 1)]
    );
    let staging = RollupFilter { environment: Some(Environment::Staging), ..RollupFilter::default() };
    assert_eq!(counts(staging, CountBy::Source).await, [(Bucket::Source("api".into()), Level::Warn, 1)]);
    let audit = RollupFilter { dataset: Some("audit".into()), ..RollupFilter::default() };
    assert_eq!(counts(audit, CountBy::Hour).await, [(Bucket::Hour(hour), Level::Warn, 1)]);

    // By day, over whole days and over a range of hours: the same day buckets.
    let day = day_start_ms(hour);
    let by_day = |from: i64, to: i64| async move {
        sorted(store.level_counts(workspace, from, to, &RollupFilter::default(), CountBy::Day).await.expect("counts"))
    };
    let whole = by_day(day - MS_PER_DAY, day + 2 * MS_PER_DAY).await;
    let mut expected = vec![];
    for (timestamp, level) in [(hour - 1, Level::Info), (hour, Level::Info), (hour + MS_PER_HOUR - 1, Level::Error)]
        .into_iter()
        .chain([(hour + MS_PER_HOUR, Level::Info), (hour + 2 * MS_PER_HOUR, Level::Debug)])
        .chain([(hour + 10, Level::Warn), (hour + 20, Level::Warn)])
    {
        expected.push((Bucket::Day(day_start_ms(timestamp)), level));
    }
    let mut tally: std::collections::BTreeMap<(Bucket, Level), u64> = std::collections::BTreeMap::new();
    for key in expected {
        *tally.entry(key).or_default() += 1;
    }
    let tally: Vec<(Bucket, Level, u64)> =
        tally.into_iter().map(|((bucket, level), count)| (bucket, level, count)).collect();
    assert_eq!(whole, tally);
    let hours_only = by_day(hour, hour + MS_PER_HOUR).await;
    assert_eq!(
        hours_only,
        [(Bucket::Day(day), Level::Info, 1), (Bucket::Day(day), Level::Warn, 2), (Bucket::Day(day), Level::Error, 1)]
    );
}

/// Counts never include another workspace's logs.
pub async fn level_counts_are_scoped_to_the_workspace(store: &dyn Store) {
    let mine = new_workspace(store, "mine").await;
    let theirs = new_workspace(store, "theirs").await;
    store.insert_logs(theirs, &[log("x", T0), log("y", T0)]).await.expect("insert");
    store.insert_logs(mine, &[log("z", T0)]).await.expect("insert");
    let hour = hour_start(T0);
    for by in [CountBy::Hour, CountBy::Source] {
        let counts =
            store.level_counts(mine, hour, hour + MS_PER_HOUR, &RollupFilter::default(), by).await.expect("counts");
        assert_eq!(counts.iter().map(|count| count.count).sum::<u64>(), 1, "{by:?}");
    }
}

/// Deleting before a cutoff removes the logs from list, get, search and counts, and only them.
pub async fn delete_before_removes_logs_everywhere(store: &dyn Store) {
    let workspace = new_workspace(store, "w").await;
    let other = new_workspace(store, "other").await;
    let old = log("old needle", T0 - 1);
    let edge = log("edge needle", T0);
    store.insert_logs(workspace, &[old.clone(), edge.clone()]).await.expect("insert");
    store.insert_logs(other, &[log("their old needle", T0 - 1)]).await.expect("insert");

    assert_eq!(store.delete_logs_before(workspace, T0).await.expect("delete"), 1);
    assert_eq!(store.get_log(workspace, old.id).await.expect("get"), None);
    let listed = store.list_logs(workspace, &LogFilter::default(), EVERYTHING).await.expect("list");
    assert_eq!(messages(&listed.logs), ["edge needle"]);
    assert_eq!(found(store, workspace, "needle", &[SearchField::Message]).await, ["edge needle"]);
    let hour = hour_start(T0 - 1);
    let counts = store
        .level_counts(workspace, hour - MS_PER_HOUR, hour + 2 * MS_PER_HOUR, &RollupFilter::default(), CountBy::Hour)
        .await
        .expect("counts");
    assert_eq!(counts.iter().map(|count| count.count).sum::<u64>(), 1);
    assert_eq!(found(store, other, "needle", &[SearchField::Message]).await, ["their old needle"]);
    assert_eq!(store.delete_logs_before(workspace, T0).await.expect("delete"), 0);
}

/// Retention over every workspace at once, with logs spread over months so a partitioned
/// store drops whole stretches: each workspace keeps exactly its logs at or after its cutoff,
/// search and counters included; a workspace left out keeps everything.
pub async fn sweep_applies_each_workspace_cutoff(store: &dyn Store) {
    let short = new_workspace(store, "short").await;
    let long = new_workspace(store, "long").await;
    let spared = new_workspace(store, "spared").await;
    let days = [-400_i64, -100, -40, -3, 0, 1, 30];
    let at = |day: i64| T0 + day * MS_PER_DAY;
    for workspace in [short, long, spared] {
        let logs: Vec<Log> = days.iter().map(|day| log(&format!("needle day {day}"), at(*day))).collect();
        store.insert_logs(workspace, &logs).await.expect("insert");
    }
    // Every workspace but `spared` named: nothing may be dropped wholesale.
    let deleted = store.sweep(&[(short, at(0)), (long, at(-40))]).await.expect("sweep");
    assert_eq!(deleted, 4 + 2);
    let kept = |workspace| async move {
        let page = store.list_logs(workspace, &LogFilter::default(), EVERYTHING).await.expect("list");
        page.logs.iter().map(|log| log.entry.timestamp).rev().collect::<Vec<_>>()
    };
    assert_eq!(kept(short).await, [at(0), at(1), at(30)]);
    assert_eq!(kept(long).await, [at(-40), at(-3), at(0), at(1), at(30)]);
    assert_eq!(kept(spared).await.len(), days.len());

    // Now every workspace named: the oldest stretches go for all of them.
    let deleted = store.sweep(&[(short, at(1)), (long, at(-3)), (spared, at(-100))]).await.expect("sweep everyone");
    assert_eq!(deleted, 1 + 1 + 1);
    assert_eq!(kept(short).await, [at(1), at(30)]);
    assert_eq!(kept(long).await, [at(-3), at(0), at(1), at(30)]);
    assert_eq!(kept(spared).await, [at(-100), at(-40), at(-3), at(0), at(1), at(30)]);
    assert_eq!(found(store, spared, "needle", &[SearchField::Message]).await.len(), 6);
    assert_eq!(found(store, short, "needle", &[SearchField::Message]).await, ["needle day 30", "needle day 1"]);

    // The counters agree with the rows, per day over the whole span.
    for (workspace, alive) in [(short, 2_u64), (long, 4), (spared, 6)] {
        let from = day_start_ms(at(-500));
        let counts = store
            .level_counts(workspace, from, day_start_ms(at(60)), &RollupFilter::default(), CountBy::Day)
            .await
            .expect("counts");
        assert_eq!(counts.iter().map(|count| count.count).sum::<u64>(), alive);
    }
    assert_eq!(store.sweep(&[(short, at(1)), (long, at(-3)), (spared, at(-100))]).await.expect("again"), 0);
}

/// Now, by the wall clock (log ids are stamped with it).
fn wall_clock_ms() -> i64 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |elapsed| i64::try_from(elapsed.as_millis()).unwrap_or(i64::MAX))
}

/// A workspace whose quota is `logs_per_month`, otherwise unlimited.
async fn workspace_with_quota(store: &dyn Store, logs_per_month: u64) -> WorkspaceId {
    let mut workspace = workspace("metered");
    workspace.limits = Limits { logs_per_month: Some(logs_per_month), ..Plan::Enterprise.limits() };
    store.create_workspace(&workspace).await.expect("create workspace");
    workspace.id
}

fn batch(prefix: &str, count: usize) -> Vec<Log> {
    (0..count).map(|n| log(&format!("{prefix} {n}"), T0 + n as i64)).collect()
}

/// Batches are counted in the month they are accepted in; the one that would cross the quota
/// is refused whole and changes nothing, and the quota can be met exactly.
pub async fn quota_refuses_the_batch_that_would_cross_it(store: &dyn Store) {
    let workspace = workspace_with_quota(store, 250).await;
    let first = batch("first", 100);
    let month = accepted_month(&first[0]);
    assert_eq!(month, month_start_ms(wall_clock_ms()), "ids are stamped at ingest");
    store.insert_logs(workspace, &first).await.expect("100 of 250");
    store.insert_logs(workspace, &batch("second", 100)).await.expect("200 of 250");
    let refused = store.insert_logs(workspace, &batch("third", 100)).await;
    assert!(matches!(refused, Err(StoreError::QuotaExceeded)), "{refused:?}");
    assert_eq!(store.monthly_usage(workspace, month).await.expect("usage"), 200);
    let stored = store.list_logs(workspace, &LogFilter::default(), EVERYTHING).await.expect("list");
    assert_eq!(stored.logs.len(), 200, "a refused batch left rows behind");
    assert!(found(store, workspace, "third", &[SearchField::Message]).await.is_empty());
    let counts = store
        .level_counts(
            workspace,
            day_start_ms(T0),
            day_start_ms(T0) + MS_PER_DAY,
            &RollupFilter::default(),
            CountBy::Hour,
        )
        .await
        .expect("counts");
    assert_eq!(counts.iter().map(|count| count.count).sum::<u64>(), 200, "a refused batch left counts behind");
    // Exactly up to the quota, then not one more.
    store.insert_logs(workspace, &batch("fourth", 50)).await.expect("250 of 250");
    assert!(matches!(store.insert_logs(workspace, &batch("fifth", 1)).await, Err(StoreError::QuotaExceeded)));
    assert_eq!(store.monthly_usage(workspace, month).await.expect("usage"), 250);
    // Another month's usage is apart.
    assert_eq!(store.monthly_usage(workspace, month_start_ms(month - 1)).await.expect("last month"), 0);
}

/// The quota read is the one stored when the batch is written (a plan change counts at once),
/// usage belongs to one workspace, and a workspace without a quota is never refused.
pub async fn quota_follows_plan_changes_and_counts_per_workspace(store: &dyn Store) {
    let metered = workspace_with_quota(store, 10).await;
    let free = new_workspace(store, "unmetered").await;
    let month = month_start_ms(wall_clock_ms());
    store.insert_logs(metered, &batch("a", 10)).await.expect("10 of 10");
    assert!(matches!(store.insert_logs(metered, &batch("b", 1)).await, Err(StoreError::QuotaExceeded)));
    store
        .set_plan(metered, Plan::Enterprise, Limits { logs_per_month: Some(15), ..Plan::Enterprise.limits() })
        .await
        .expect("raise");
    store.insert_logs(metered, &batch("c", 5)).await.expect("15 of 15");
    store.set_plan(metered, Plan::Enterprise, Plan::Enterprise.limits()).await.expect("unlimited");
    store.insert_logs(metered, &batch("d", 100)).await.expect("no quota");
    assert_eq!(store.monthly_usage(metered, month).await.expect("usage"), 115);
    for _ in 0..3 {
        store.insert_logs(free, &batch("e", 100)).await.expect("unlimited workspace");
    }
    assert_eq!(store.monthly_usage(free, month).await.expect("usage"), 300);
    assert_eq!(store.monthly_usage(WorkspaceId::generate(), month).await.expect("nobody"), 0);
    // Lowering the quota below the usage refuses everything from then on.
    store.set_plan(free, Plan::Free, Plan::Free.limits()).await.expect("down to free");
    let lowered = Limits { logs_per_month: Some(299), ..Plan::Free.limits() };
    store.set_plan(free, Plan::Free, lowered).await.expect("lower");
    assert!(matches!(store.insert_logs(free, &batch("f", 1)).await, Err(StoreError::QuotaExceeded)));
}

/// A UUID v7 log id stamped `ms` (Unix ms), the `n`th of that millisecond.
fn id_stamped(ms: i64, n: u8) -> LogId {
    let mut bytes = [0_u8; 16];
    bytes[..6].copy_from_slice(&ms.to_be_bytes()[2..]);
    bytes[6] = 0x70;
    bytes[8] = 0x80;
    bytes[15] = n;
    LogId::from_slice(&bytes).expect("a UUID v7")
}

/// One transaction for many batches (a group commit): each batch is counted against its own
/// workspace's quota, in order, and one refused is left out whole, its usage, rows and counters
/// untouched, while the rest of the group is stored. A batch accepted across a month's end
/// counts in both months, and is refused whole when either would pass the quota.
pub async fn a_group_refuses_only_the_batches_over_their_quota(store: &dyn Store) {
    let metered = workspace_with_quota(store, 150).await;
    let other = new_workspace(store, "other").await;
    let month = month_start_ms(wall_clock_ms());
    let last_month = month_start_ms(month - 1);
    // `first` keeps the stamped ids of different batches apart.
    let spanning = |prefix: &str, before: usize, after: usize, first: u8| -> Vec<Log> {
        let mut logs = batch(prefix, before + after);
        for (n, log) in logs.iter_mut().take(before).enumerate() {
            log.id = id_stamped(month - 1, first + n as u8);
        }
        logs
    };
    let group = [
        Batch { workspace: other, logs: batch("g1", 100) },
        Batch { workspace: metered, logs: batch("g2", 100) },
        Batch { workspace: metered, logs: batch("g3", 100) },
        Batch { workspace: other, logs: batch("g4", 10) },
        Batch { workspace: metered, logs: batch("g5", 48) },
        Batch { workspace: metered, logs: spanning("g6", 2, 2, 0) },
        Batch { workspace: metered, logs: spanning("g7", 1, 1, 2) },
    ];
    let answers = store.insert_group(&group).await.expect("the group");
    let refused: Vec<bool> = answers.iter().map(|answer| matches!(answer, Err(StoreError::QuotaExceeded))).collect();
    assert_eq!(refused, [false, false, true, false, false, false, true], "{answers:?}");
    assert!(answers.iter().all(|answer| answer.is_ok() || matches!(answer, Err(StoreError::QuotaExceeded))));

    assert_eq!(store.monthly_usage(metered, month).await.expect("usage"), 150);
    assert_eq!(store.monthly_usage(metered, last_month).await.expect("usage"), 2, "g7's first month stayed counted");
    assert_eq!(store.monthly_usage(other, month).await.expect("usage"), 110);
    let stored = store.list_logs(metered, &LogFilter::default(), EVERYTHING).await.expect("list");
    let mut prefixes: Vec<&str> = stored.logs.iter().filter_map(|log| log.entry.message.split(' ').next()).collect();
    prefixes.dedup();
    prefixes.sort_unstable();
    prefixes.dedup();
    assert_eq!(prefixes, ["g2", "g5", "g6"]);
    assert_eq!(stored.logs.len(), 152);
    assert!(found(store, metered, "g3", &[SearchField::Message]).await.is_empty());
    assert!(found(store, metered, "g7", &[SearchField::Message]).await.is_empty());
    assert_eq!(store.list_logs(other, &LogFilter::default(), EVERYTHING).await.expect("list").logs.len(), 110);
    let counts = store
        .level_counts(metered, day_start_ms(T0), day_start_ms(T0) + MS_PER_DAY, &RollupFilter::default(), CountBy::Hour)
        .await
        .expect("counts");
    assert_eq!(counts.iter().map(|count| count.count).sum::<u64>(), 152, "refused batches left counts behind");
    // A group of one answers as `insert_logs` does.
    let alone = store.insert_group(&[Batch { workspace: metered, logs: batch("g8", 1) }]).await.expect("group");
    assert!(matches!(alone.as_slice(), [Err(StoreError::QuotaExceeded)]), "{alone:?}");
}

/// The sweep of `retention::sweep` at an injected "now": each workspace keeps its own number
/// of days (plan figures and a custom one), and the counters stay equal to the rows.
pub async fn retention_sweep_keeps_each_workspace_its_days(store: &dyn Store) {
    let now = T0 + 400 * MS_PER_DAY;
    let mut ids = Vec::new();
    for (name, plan, days) in [("free", Plan::Free, 7), ("pro", Plan::Pro, 30), ("custom", Plan::Enterprise, 3)] {
        let mut workspace = workspace(name);
        workspace.plan = plan;
        workspace.limits = Limits { retention_days: days, logs_per_month: None, ..plan.limits() };
        store.create_workspace(&workspace).await.expect("create");
        ids.push(workspace.id);
    }
    let ages = [0_i64, 2, 4, 8, 29, 31, 200];
    for workspace in &ids {
        let logs: Vec<Log> = ages.iter().map(|age| log(&format!("aged {age}"), now - age * MS_PER_DAY - 1)).collect();
        store.insert_logs(*workspace, &logs).await.expect("insert");
    }
    let deleted = retention::sweep(store, now).await.expect("sweep");
    assert_eq!(deleted, 4 + 2 + 5);
    for (workspace, kept) in ids.iter().zip([
        &["aged 0", "aged 2", "aged 4"][..],
        &["aged 0", "aged 2", "aged 4", "aged 8", "aged 29"],
        &["aged 0", "aged 2"],
    ]) {
        let page = store.list_logs(*workspace, &LogFilter::default(), EVERYTHING).await.expect("list");
        assert_eq!(messages(&page.logs), kept);
        let counts = store
            .level_counts(
                *workspace,
                day_start_ms(now - 400 * MS_PER_DAY),
                day_start_ms(now) + MS_PER_DAY,
                &RollupFilter::default(),
                CountBy::Day,
            )
            .await
            .expect("counts");
        assert_eq!(counts.iter().map(|count| count.count).sum::<u64>(), kept.len() as u64);
    }
    // A second sweep at the same moment finds nothing; a day later the next day goes.
    assert_eq!(retention::sweep(store, now).await.expect("again"), 0);
    // Free keeps its 4-day-old log; Pro loses the 29-day-old one, the custom workspace the
    // 2-day-old one.
    assert_eq!(retention::sweep(store, now + MS_PER_DAY).await.expect("a day later"), 2);
}

/// A small deterministic generator (xorshift), so a failure names its seed and replays.
struct Random(u64);

impl Random {
    fn below(&mut self, bound: u64) -> u64 {
        self.0 ^= self.0 << 13;
        self.0 ^= self.0 >> 7;
        self.0 ^= self.0 << 17;
        self.0 % bound
    }
}

/// Random batches over a few hours, sources, environments, datasets and levels, and random
/// retention cutoffs: after every step the counters equal a count of the surviving rows,
/// per hour and per source.
pub async fn rollups_equal_the_rows_after_random_ingests_and_deletes(store: &dyn Store) {
    for seed in [1_u64, 7, 42, 1234] {
        let workspace = new_workspace(store, "w").await;
        let mut random = Random(seed.wrapping_mul(0x9E37_79B9_7F4A_7C15) | 1);
        let mut alive: Vec<Log> = Vec::new();
        // Eight hours across a UTC midnight (T0 is 22:13 UTC).
        let start = hour_start(T0) - 2 * MS_PER_HOUR;
        for step in 0..12 {
            if step % 4 == 3 {
                let cutoff = start + random.below(8 * MS_PER_HOUR as u64) as i64;
                let deleted = store.delete_logs_before(workspace, cutoff).await.expect("delete");
                let before = alive.len();
                alive.retain(|log| log.entry.timestamp >= cutoff);
                assert_eq!(deleted as usize, before - alive.len(), "seed {seed} step {step}");
            } else {
                let batch: Vec<Log> = (0..1 + random.below(60))
                    .map(|_| {
                        let mut entry = log("r", start + random.below(8 * MS_PER_HOUR as u64) as i64);
                        entry.entry.level = Level::ALL[random.below(4) as usize];
                        entry.entry.source = ["api", "web", "db"][random.below(3) as usize].into();
                        entry.entry.environment = Environment::ALL[random.below(3) as usize];
                        entry.entry.dataset = ["default", "audit"][random.below(2) as usize].into();
                        entry
                    })
                    .collect();
                store.insert_logs(workspace, &batch).await.expect("insert");
                alive.extend(batch);
            }
            let mut by_hour = std::collections::BTreeMap::new();
            let mut by_source = std::collections::BTreeMap::new();
            for log in &alive {
                *by_hour.entry((Bucket::Hour(hour_start(log.entry.timestamp)), log.entry.level)).or_insert(0) += 1;
                *by_source.entry((Bucket::Source(log.entry.source.to_string()), log.entry.level)).or_insert(0) += 1;
            }
            let range = (start - MS_PER_HOUR, start + 9 * MS_PER_HOUR);
            for (by, expected) in [(CountBy::Hour, by_hour), (CountBy::Source, by_source)] {
                let counts = store
                    .level_counts(workspace, range.0, range.1, &RollupFilter::default(), by)
                    .await
                    .expect("counts");
                let expected: Vec<(Bucket, Level, u64)> =
                    expected.into_iter().map(|((bucket, level), count)| (bucket, level, count)).collect();
                assert_eq!(sorted(counts), expected, "seed {seed} step {step} {by:?}");
            }
            // Whole UTC days, which a store may answer from coarser counters: unfiltered, and
            // filtered on an environment.
            let days = (day_start_ms(start - MS_PER_HOUR), day_start_ms(start + 9 * MS_PER_HOUR) + MS_PER_DAY);
            let staging = RollupFilter { environment: Some(Environment::Staging), ..RollupFilter::default() };
            for (filter, by) in [
                (RollupFilter::default(), CountBy::Day),
                (RollupFilter::default(), CountBy::Source),
                (staging.clone(), CountBy::Day),
                (staging.clone(), CountBy::Source),
            ] {
                let mut expected = std::collections::BTreeMap::new();
                for log in
                    alive.iter().filter(|log| filter.environment.is_none_or(|wanted| log.entry.environment == wanted))
                {
                    let bucket = match by {
                        CountBy::Day => Bucket::Day(day_start_ms(log.entry.timestamp)),
                        _ => Bucket::Source(log.entry.source.to_string()),
                    };
                    *expected.entry((bucket, log.entry.level)).or_insert(0) += 1;
                }
                let counts = store.level_counts(workspace, days.0, days.1, &filter, by).await.expect("counts");
                let expected: Vec<(Bucket, Level, u64)> =
                    expected.into_iter().map(|((bucket, level), count)| (bucket, level, count)).collect();
                assert_eq!(sorted(counts), expected, "seed {seed} step {step} {by:?} {filter:?}");
            }
        }
    }
}
