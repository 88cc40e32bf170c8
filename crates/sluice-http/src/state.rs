//! What every handler shares: the store and the group committer in front of its writes, the
//! authenticator and sign-in throttle, the rate limiter, who the clients are, the live tails,
//! and the clock.

use std::sync::Arc;

use sluice_auth::Authenticator;
use sluice_limits::{LocalLimiter, RateLimiter};
use sluice_store::group::GroupCommitter;
use sluice_store::{Clock, Store, system_clock};

use crate::OriginResolver;

/// How long a request body may take to arrive by default: 30 seconds, a 5 MiB body at under
/// 200 KB/s.
pub const DEFAULT_BODY_TIMEOUT: std::time::Duration = std::time::Duration::from_secs(30);

/// Shared by every worker.
#[derive(Clone)]
pub struct AppState {
    /// Where logs, workspaces and keys live.
    pub store: Arc<dyn Store>,
    /// Writes `POST /v1/logs` batches to the store in groups (one transaction for many).
    pub writer: GroupCommitter,
    /// Checks keys, with its cache.
    pub auth: Authenticator,
    /// Counts each workspace's `POST /v1/logs` requests against its limit.
    pub limiter: Arc<dyn RateLimiter>,
    /// Client address and country of a request.
    pub origins: Arc<OriginResolver>,
    /// The clock.
    pub clock: Clock,
    /// How long a request body may take to arrive in full before the request is answered
    /// 408 (`SLUICE_BODY_TIMEOUT_MS`): a body sent a few bytes a second cannot hold a worker.
    pub body_timeout: std::time::Duration,
    /// The most bytes of headers a request may carry before it is answered 431
    /// (`SLUICE_MAX_HEADER_BYTES`; [`crate::limits`]).
    pub max_header_bytes: usize,
    /// The live tails open on this server, which ingest hands committed logs to.
    pub tails: crate::tail::TailHub,
    /// How often a live tail writes a comment line ([`crate::tail::DEFAULT_HEARTBEAT`]).
    pub heartbeat: std::time::Duration,
    /// Failed sign-ins per email.
    pub throttle: sluice_auth::throttle::SignInThrottle,
    /// The base URL people reach this server at (`SLUICE_PUBLIC_URL`), for the device
    /// sign-in's `verification_uri`; without it, the scheme and host of the request.
    pub public_url: Option<String>,
    /// What `GET /metrics` shows ([`crate::metrics`]).
    pub metrics: Arc<crate::metrics::Metrics>,
}

impl AppState {
    /// State over `store` with its group commit, the default key cache, an in-process rate
    /// limiter, clients taken at their TCP address (no trusted proxies, no country database)
    /// and the wall clock. Starts the committer's writers on the current Tokio runtime, and,
    /// on a database other servers share, the live tail's listener and announcer.
    pub fn new(store: Arc<dyn Store>) -> Self {
        let auth = Authenticator::new(store.clone(), sluice_auth::CACHE_TTL);
        let writer = GroupCommitter::start(Arc::new(store.clone()), store.group_options());
        let tails = crate::tail::TailHub::connect(store.clone());
        Self {
            store,
            writer,
            auth,
            limiter: Arc::new(LocalLimiter::new()),
            origins: Arc::new(OriginResolver::default()),
            clock: system_clock(),
            body_timeout: DEFAULT_BODY_TIMEOUT,
            max_header_bytes: crate::limits::DEFAULT_MAX_HEADER_BYTES,
            tails,
            heartbeat: crate::tail::DEFAULT_HEARTBEAT,
            throttle: sluice_auth::throttle::SignInThrottle::default(),
            public_url: None,
            metrics: Arc::default(),
        }
    }

    /// Now, in Unix ms.
    pub fn now_ms(&self) -> i64 {
        self.clock.now_ms()
    }
}
