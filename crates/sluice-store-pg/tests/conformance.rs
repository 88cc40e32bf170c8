//! The shared store conformance suite, run against a real PostgreSQL server
//! (`SLUICE_TEST_PG`): each test in a database of its own, cloned from the migrated
//! template and dropped afterwards, so tests run in parallel.

use std::ops::Deref;
use std::sync::atomic::{AtomicUsize, Ordering};

use sluice_store_pg::testing::{drop_database, fresh_database};
use sluice_store_pg::{PgOptions, PgStore};

/// A store in its own database, dropped when the test ends.
struct Fixture {
    store: PgStore,
    name: String,
}

impl Deref for Fixture {
    type Target = PgStore;

    fn deref(&self) -> &PgStore {
        &self.store
    }
}

impl Drop for Fixture {
    fn drop(&mut self) {
        // Drop runs inside the test's runtime, which cannot be blocked on: a thread of its own.
        let name = self.name.clone();
        let dropped = std::thread::spawn(move || {
            tokio::runtime::Builder::new_current_thread()
                .enable_all()
                .build()
                .map(|runtime| runtime.block_on(drop_database(&name)))
        })
        .join();
        if !matches!(dropped, Ok(Ok(()))) {
            eprintln!("could not drop test database {}", self.name);
        }
    }
}

static NEXT: AtomicUsize = AtomicUsize::new(0);

async fn open(options: PgOptions) -> Fixture {
    let name = format!("sluice_conformance_{}_{}", std::process::id(), NEXT.fetch_add(1, Ordering::Relaxed));
    let url = fresh_database(&name).await;
    let store = PgStore::connect(&url, &options).await.expect("connect");
    Fixture { store, name }
}

async fn fresh() -> Fixture {
    open(PgOptions { pool_size: 4, ..PgOptions::default() }).await
}

sluice_store::conformance_suite!(fresh);

/// The same contract with search's thresholds at their smallest, so every search takes the
/// walk of the newest logs first and, when that is not conclusive, reads every candidate.
mod dense_search {
    use super::*;

    async fn fresh() -> Fixture {
        open(PgOptions { pool_size: 4, search_dense_hits: 1, search_walk_rows: 3, ..PgOptions::default() }).await
    }

    sluice_store::conformance_suite!(fresh);
}
