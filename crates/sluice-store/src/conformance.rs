//! The storage conformance suite: one set of behaviours every backend must show.
//!
//! A backend's tests call [`conformance_suite!`](crate::conformance_suite) with an async
//! closure that builds a fresh, empty store (its own file or database); each behaviour below
//! becomes one `#[tokio::test]`. Nothing here knows which backend it runs against.

use serde_json::json;
use sluice_model::{
    ApiKeyRecord, Environment, JsonObject, KeyEnv, KeyId, KeyState, Level, Log, LogEntry, LogId, Plan, Scopes,
    Workspace, WorkspaceId,
};

use crate::{LogFilter, NewApiKey, Page, Store, StoreError};

/// Builds one test per behaviour of this module. `$make` is an expression evaluating to an
/// async closure (or function) that returns something dereferencing to the store under test.
#[macro_export]
macro_rules! conformance_suite {
    ($make:expr) => {
        $crate::conformance_suite!(@each $make;
            insert_then_get_round_trips_every_field,
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
            ping_answers
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
    Workspace { id: WorkspaceId::generate(), name: name.to_owned(), plan: Plan::Free, created_at: T0 }
}

async fn new_workspace(store: &dyn Store, name: &str) -> WorkspaceId {
    let workspace = workspace(name);
    store.create_workspace(&workspace).await.expect("create workspace");
    workspace.id
}

fn log(message: &str, timestamp: i64) -> Log {
    Log {
        id: LogId::generate(),
        entry: LogEntry {
            timestamp,
            level: Level::Info,
            message: message.to_owned(),
            source: "api".to_owned(),
            environment: Environment::Production,
            dataset: "default".to_owned(),
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

/// A batch that fails part-way (here: a duplicate id) leaves nothing behind.
pub async fn failed_batch_stores_nothing(store: &dyn Store) {
    let workspace = new_workspace(store, "w").await;
    let first = log("first", T0);
    let mut twin = log("twin", T0 + 1);
    twin.id = first.id;
    assert!(store.insert_logs(workspace, &[log("before", T0 + 2), first, twin]).await.is_err());
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
    store.set_plan(first.id, Plan::Pro).await.expect("set plan");
    let reread = store.get_workspace(first.id).await.expect("get").expect("exists");
    assert_eq!(reread.plan, Plan::Pro);
    assert_eq!(store.get_workspace(WorkspaceId::generate()).await.expect("get"), None);
    assert!(matches!(store.set_plan(WorkspaceId::generate(), Plan::Pro).await, Err(StoreError::NotFound(_))));
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
