//! Authentication of a cached key and of a cached session: the cost every request pays before
//! its handler runs (targets, issues 2 and 27: ≤ 50 µs); and one Argon2id check of a password
//! with the parameters chosen, the cost of a sign-in (target ≤ 300 ms). Figures go to
//! docs/PERFORMANCE.md.

use std::sync::Arc;

use criterion::{Criterion, criterion_group, criterion_main};
use sluice_auth::{Authenticator, CACHE_TTL, generate_key};
use sluice_model::{
    ApiKeyRecord, KeyEnv, KeyId, Plan, Role, Scope, Scopes, SessionId, SessionRecord, User, UserId, Workspace,
};
use sluice_store::accounts::{MemberChange, NewSession, NewUser};
use sluice_store::{NewApiKey, Store};
use sluice_store_sqlite::SqliteStore;

fn cached_key(c: &mut Criterion) {
    let runtime = tokio::runtime::Builder::new_current_thread().enable_all().build().expect("runtime");
    // The pool hands connections to blocking threads even when dropped: keep a runtime entered.
    let _context = runtime.enter();
    let dir = tempfile::tempdir().expect("temp dir");
    let (auth, key) = runtime.block_on(async {
        let store: Arc<dyn Store> = Arc::new(SqliteStore::open(&dir.path().join("bench.db")).expect("open"));
        let workspace = Workspace::new("bench", Plan::Pro, 0);
        store.create_workspace(&workspace).await.expect("workspace");
        let generated = generate_key(KeyEnv::Live).expect("csprng");
        let record = ApiKeyRecord {
            id: KeyId::generate(),
            workspace_id: workspace.id,
            name: None,
            env: KeyEnv::Live,
            scopes: Scopes::ALL,
            created_at: 0,
            expires_at: None,
            revoked_at: None,
        };
        store.create_key(&NewApiKey { record, hash: generated.hash }).await.expect("key");
        let auth = Authenticator::new(store, CACHE_TTL);
        auth.authenticate(Some(&generated.text), None, Scope::Read, 1).await.expect("warm the cache");
        (auth, generated.text)
    });
    c.bench_function("authenticate/cached_key", |b| {
        b.iter(|| runtime.block_on(auth.authenticate(Some(&key), None, Scope::Read, 1)).expect("authenticated"))
    });
}

fn cached_session(c: &mut Criterion) {
    let runtime = tokio::runtime::Builder::new_current_thread().enable_all().build().expect("runtime");
    let _context = runtime.enter();
    let dir = tempfile::tempdir().expect("temp dir");
    let (auth, token) = runtime.block_on(async {
        let store: Arc<dyn Store> = Arc::new(SqliteStore::open(&dir.path().join("bench.db")).expect("open"));
        let workspace = Workspace::new("bench", Plan::Pro, 0);
        store.create_workspace(&workspace).await.expect("workspace");
        let user = User {
            id: UserId::generate(),
            email: "bench@example.com".into(),
            name: "bench".into(),
            admin: false,
            created_at: 0,
        };
        let password_hash = sluice_auth::passwords::hash_password("a bench password").expect("hash");
        store.create_user(&NewUser { user: user.clone(), password_hash }).await.expect("user");
        store.change_member(workspace.id, user.id, MemberChange::Set(Role::Member), false, 0).await.expect("member");
        let token = sluice_auth::secrets::generate_session_token().expect("csprng");
        let record = SessionRecord {
            id: SessionId::generate(),
            user_id: user.id,
            client: "bench".into(),
            created_at: 1,
            last_used_at: 1,
            revoked_at: None,
        };
        let hash = sluice_auth::secrets::hash_secret(&token);
        store.create_session(&NewSession { record, hash }).await.expect("session");
        let auth = Authenticator::new(store, CACHE_TTL);
        auth.authenticate(Some(&token), None, Scope::Ingest, 1).await.expect("warm the cache");
        (auth, token)
    });
    c.bench_function("authenticate/cached_session", |b| {
        b.iter(|| runtime.block_on(auth.authenticate(Some(&token), None, Scope::Ingest, 1)).expect("authenticated"))
    });
}

fn password(c: &mut Criterion) {
    let stored = sluice_auth::passwords::hash_password("correct horse battery").expect("hash");
    let mut group = c.benchmark_group("sign_in");
    group.sample_size(10);
    group.bench_function("argon2id_verify", |b| {
        b.iter(|| assert!(sluice_auth::passwords::verify_password("correct horse battery", &stored)))
    });
    group.finish();
}

criterion_group!(benches, cached_key, cached_session, password);
criterion_main!(benches);
