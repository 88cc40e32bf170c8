//! Authentication of a cached key: the cost every request pays before its handler runs.
//! Target (issue 2): ≤ 50 µs. Figures go to docs/PERFORMANCE.md.

use std::sync::Arc;

use criterion::{Criterion, criterion_group, criterion_main};
use sluice_auth::{Authenticator, CACHE_TTL, generate_key};
use sluice_model::{ApiKeyRecord, KeyEnv, KeyId, Plan, Scope, Scopes, Workspace};
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

criterion_group!(benches, cached_key);
criterion_main!(benches);
