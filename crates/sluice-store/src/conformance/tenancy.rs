//! Conformance: workspaces, plans, keys, the first-start bootstrap and the health ping.

use super::*;

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
