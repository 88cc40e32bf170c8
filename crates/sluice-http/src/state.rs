//! What every handler shares: the store, the authenticator and the clock.

use std::sync::Arc;
use std::time::{SystemTime, UNIX_EPOCH};

use sluice_auth::Authenticator;
use sluice_store::Store;

/// The current time in Unix ms. Injected so tests can move time without sleeping.
pub type Clock = Arc<dyn Fn() -> i64 + Send + Sync>;

/// Now, in Unix ms, by the wall clock.
pub fn unix_now_ms() -> i64 {
    SystemTime::now().duration_since(UNIX_EPOCH).map(|elapsed| elapsed.as_millis() as i64).unwrap_or_default()
}

/// The wall clock.
pub fn system_clock() -> Clock {
    Arc::new(unix_now_ms)
}

/// Shared by every worker.
#[derive(Clone)]
pub struct AppState {
    /// Where logs, workspaces and keys live.
    pub store: Arc<dyn Store>,
    /// Checks keys, with its cache.
    pub auth: Authenticator,
    /// The clock.
    pub clock: Clock,
}

impl AppState {
    /// State over `store` with the default key cache and the wall clock.
    pub fn new(store: Arc<dyn Store>) -> Self {
        let auth = Authenticator::new(store.clone(), sluice_auth::CACHE_TTL);
        Self { store, auth, clock: system_clock() }
    }

    /// Now, in Unix ms.
    pub fn now_ms(&self) -> i64 {
        (self.clock)()
    }
}
