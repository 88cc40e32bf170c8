//! The authenticator against a real store: every outcome of docs/API.md (Authentication), and the
//! cache's promise that revokes are seen within its time to live. A SQLite file, or with
//! `SLUICE_TEST_BACKEND=postgres` (as `cargo xtask ci` runs these a second time) a PostgreSQL
//! database of the test's own.

use std::sync::Arc;
use std::time::Duration;

use sluice_auth::{AuthError, Authenticator, generate_key};
use sluice_model::{ApiKeyRecord, KeyEnv, KeyId, Plan, Scope, Scopes, Workspace, WorkspaceId};
use sluice_store::{NewApiKey, Store};
use sluice_store_pg::testing::TestDatabase;
use sluice_store_sqlite::SqliteStore;

const NOW: i64 = 1_700_000_000_000;

struct World {
    store: Arc<dyn Store>,
    workspace: Workspace,
    _dir: tempfile::TempDir,
    /// The PostgreSQL database, dropped with the world.
    _database: Option<TestDatabase>,
}

async fn world() -> World {
    let dir = tempfile::tempdir().expect("temp dir");
    let on_postgres = std::env::var("SLUICE_TEST_BACKEND").is_ok_and(|backend| backend == "postgres");
    let (store, database): (Arc<dyn Store>, _) = if on_postgres {
        let database = TestDatabase::new("sluice_auth").await;
        let options = sluice_store_pg::PgOptions { pool_size: 2, ..Default::default() };
        (Arc::new(sluice_store_pg::PgStore::connect(database.url(), &options).await.expect("connect")), Some(database))
    } else {
        (Arc::new(SqliteStore::open(&dir.path().join("auth.db")).expect("open")), None)
    };
    let workspace = Workspace::new("w", Plan::Pro, NOW);
    store.create_workspace(&workspace).await.expect("workspace");
    World { store, workspace, _dir: dir, _database: database }
}

async fn key(world: &World, scopes: Scopes, expires_at: Option<i64>) -> (String, KeyId) {
    let generated = generate_key(KeyEnv::Live).expect("csprng");
    let record = ApiKeyRecord {
        id: KeyId::generate(),
        workspace_id: world.workspace.id,
        name: None,
        env: KeyEnv::Live,
        scopes,
        created_at: NOW,
        expires_at,
        revoked_at: None,
    };
    let id = record.id;
    world.store.create_key(&NewApiKey { record, hash: generated.hash }).await.expect("key");
    (generated.text, id)
}

fn message(result: Result<sluice_auth::Principal, AuthError>) -> String {
    match result {
        Ok(_) => "ok".into(),
        Err(error) => error.to_string(),
    }
}

#[tokio::test]
async fn every_failure_has_its_message() {
    let world = world().await;
    let auth = Authenticator::new(world.store.clone(), Duration::from_secs(60));
    let (active, _) = key(&world, Scopes::ALL, None).await;
    let (expiring, _) = key(&world, Scopes::ALL, Some(NOW + 1000)).await;
    let (read_only, _) = key(&world, Scopes { ingest: false, read: true }, None).await;
    let other = Workspace::new("other", Plan::Free, NOW);
    world.store.create_workspace(&other).await.expect("workspace");
    let unknown = generate_key(KeyEnv::Test).expect("csprng").text;
    let own = world.workspace.id.to_string();
    let other_id = other.id.to_string();
    let nowhere = WorkspaceId::generate().to_string();

    let check = |key: Option<&str>, target: Option<&str>, scope, now| {
        let auth = auth.clone();
        let key = key.map(str::to_owned);
        let target = target.map(str::to_owned);
        async move { message(auth.authenticate(key.as_deref(), target.as_deref(), scope, now).await) }
    };
    assert_eq!(check(None, None, Scope::Read, NOW).await, "Missing API key");
    assert_eq!(check(Some("nope"), None, Scope::Read, NOW).await, "Invalid API key");
    assert_eq!(check(Some(&unknown), None, Scope::Read, NOW).await, "Invalid API key");
    assert_eq!(check(Some(&active), None, Scope::Read, NOW).await, "ok");
    assert_eq!(check(Some(&active), Some(&own), Scope::Ingest, NOW).await, "ok");
    assert_eq!(check(Some(&active), Some(&other_id), Scope::Read, NOW).await, "Access denied to workspace");
    assert_eq!(check(Some(&active), Some(&nowhere), Scope::Read, NOW).await, "Workspace not found");
    assert_eq!(check(Some(&active), Some("garbage"), Scope::Read, NOW).await, "Workspace not found");
    assert_eq!(check(Some(&expiring), None, Scope::Read, NOW + 999).await, "ok");
    assert_eq!(check(Some(&expiring), None, Scope::Read, NOW + 1000).await, "API key has expired");
    assert_eq!(check(Some(&read_only), None, Scope::Read, NOW).await, "ok");
    assert_eq!(check(Some(&read_only), None, Scope::Ingest, NOW).await, "API key lacks the ingest scope");
    // Authentication comes first: a bad key gets its 401 whatever else is wrong.
    assert_eq!(check(Some(&unknown), Some(&other_id), Scope::Ingest, NOW).await, "Invalid API key");
}

#[tokio::test]
async fn revocation_is_seen_once_the_cache_entry_lapses() {
    let world = world().await;
    // The time to live is counted on the request clock (injected here), not by sleeping.
    let auth = Authenticator::new(world.store.clone(), Duration::from_secs(60));
    let (text, id) = key(&world, Scopes::ALL, None).await;
    assert!(auth.authenticate(Some(&text), None, Scope::Read, NOW).await.is_ok());
    world.store.revoke_key(id, NOW).await.expect("revoke");
    // Within the time to live the cached verdict stands; after it, never.
    assert!(auth.authenticate(Some(&text), None, Scope::Read, NOW + 59_999).await.is_ok(), "cached");
    let revoked = auth.authenticate(Some(&text), None, Scope::Read, NOW + 60_000).await;
    assert_eq!(message(revoked), "API key has been revoked");
}

#[tokio::test]
async fn plan_changes_reach_the_principal_after_the_ttl() {
    let world = world().await;
    let auth = Authenticator::new(world.store.clone(), Duration::from_secs(60));
    let (text, _) = key(&world, Scopes::ALL, None).await;
    let before = auth.authenticate(Some(&text), None, Scope::Read, NOW).await.expect("auth");
    assert_eq!(before.workspace.plan, Plan::Pro);
    world.store.set_plan(world.workspace.id, Plan::Enterprise, Plan::Enterprise.limits()).await.expect("plan");
    let cached = auth.authenticate(Some(&text), None, Scope::Read, NOW + 1_000).await.expect("auth");
    assert_eq!(cached.workspace.plan, Plan::Pro, "within the time to live");
    let after = auth.authenticate(Some(&text), None, Scope::Read, NOW + 60_000).await.expect("auth");
    assert_eq!(after.workspace.plan, Plan::Enterprise);
}
