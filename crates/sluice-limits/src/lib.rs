//! Rate limits of sluice: a rolling 60-second window of requests per workspace, shared by all
//! its keys (docs/API.md, "Plans: rate limits, quotas, retention").
//!
//! The window is kept at one-second resolution: sixty per-second counters, of which the ones of
//! the last sixty seconds (the current one included) count. A request is admitted while their
//! sum is below the limit, and counted only when admitted, so a client that keeps knocking
//! after a 429 does not push its own window further out. Memory per workspace is fixed
//! whatever the limit.
//!
//! Invariant: a limiter's decision never waits on a store, and a failing shared window admits
//! (fails open) rather than refusing traffic.
//!
//! Two implementations of [`RateLimiter`]: [`LocalLimiter`], in the process (the default), and
//! [`RedisLimiter`] (feature `redis`), which keeps the same counters in Redis so that every
//! sluice process behind a load balancer enforces one limit. It fails open: while Redis cannot
//! be reached, requests are admitted and the failure is logged and counted.

use std::collections::HashMap;
use std::sync::Mutex;
use std::sync::atomic::{AtomicU64, Ordering};

use async_trait::async_trait;
use sluice_model::WorkspaceId;

#[cfg(feature = "redis")]
mod redis_limiter;
#[cfg(feature = "redis")]
pub use redis_limiter::RedisLimiter;

/// The window's length, in seconds.
pub const WINDOW_SECONDS: i64 = 60;

/// The outcome of one request's check, with what the `X-RateLimit-*` headers say.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Decision {
    /// Whether the request may go on (it was counted).
    pub allowed: bool,
    /// Requests per window.
    pub limit: u32,
    /// Requests the window still admits after this one.
    pub remaining: u32,
    /// Seconds until the window frees a request (0 when nothing is counted in it).
    pub reset_seconds: u64,
}

impl Decision {
    /// What a 429 tells the client to wait: at least one second.
    pub fn retry_after_seconds(&self) -> u64 {
        self.reset_seconds.max(1)
    }

    /// The decision from a window holding `counted` requests (after this one, if admitted) whose
    /// oldest counted second is `oldest_second`.
    pub fn from_window(allowed: bool, limit: u32, counted: u64, oldest_second: Option<i64>, now_ms: i64) -> Self {
        let reset_seconds = oldest_second.map_or(0, |second| {
            let frees_at_ms = (second + WINDOW_SECONDS) * 1000;
            u64::try_from((frees_at_ms - now_ms).max(0)).unwrap_or(0).div_ceil(1000)
        });
        let remaining = u64::from(limit).saturating_sub(counted);
        Decision { allowed, limit, remaining: u32::try_from(remaining).unwrap_or(u32::MAX), reset_seconds }
    }

    /// Admitted without counting (a limiter that failed open): the whole allowance shown.
    pub fn open(limit: u32) -> Self {
        Decision { allowed: true, limit, remaining: limit, reset_seconds: 0 }
    }
}

/// Counts a workspace's requests against its limit.
#[async_trait]
pub trait RateLimiter: Send + Sync {
    /// Checks one request of `workspace` at `now_ms` against `limit` requests per window, and
    /// counts it when admitted.
    async fn acquire(&self, workspace: WorkspaceId, limit: u32, now_ms: i64) -> Decision;

    /// How many checks failed open since the start (a limiter that cannot fail: 0).
    fn failures(&self) -> u64 {
        0
    }
}

/// The per-second counters of one workspace.
#[derive(Debug, Clone)]
struct Window {
    /// `counts[i]` requests in second `seconds[i]`, where `i = second mod 60`.
    counts: [u32; WINDOW_SECONDS as usize],
    seconds: [i64; WINDOW_SECONDS as usize],
}

impl Default for Window {
    fn default() -> Self {
        Window { counts: [0; WINDOW_SECONDS as usize], seconds: [i64::MIN; WINDOW_SECONDS as usize] }
    }
}

impl Window {
    /// The requests counted in the window ending at `now_second`, and its oldest second.
    fn tally(&self, now_second: i64) -> (u64, Option<i64>) {
        let mut counted = 0_u64;
        let mut oldest = None;
        for (count, second) in self.counts.iter().zip(&self.seconds) {
            if *count > 0 && *second > now_second - WINDOW_SECONDS && *second <= now_second {
                counted += u64::from(*count);
                oldest = Some(oldest.map_or(*second, |oldest: i64| oldest.min(*second)));
            }
        }
        (counted, oldest)
    }

    fn count(&mut self, now_second: i64) {
        let slot = usize::try_from(now_second.rem_euclid(WINDOW_SECONDS)).unwrap_or(0);
        if self.seconds[slot] != now_second {
            self.seconds[slot] = now_second;
            self.counts[slot] = 0;
        }
        self.counts[slot] = self.counts[slot].saturating_add(1);
    }

    fn is_idle(&self, now_second: i64) -> bool {
        self.tally(now_second).0 == 0
    }
}

/// Checks between two passes that forget idle workspaces.
const PRUNE_EVERY: u64 = 4096;

/// The window in this process's memory.
#[derive(Debug, Default)]
pub struct LocalLimiter {
    windows: Mutex<HashMap<WorkspaceId, Window>>,
    checks: AtomicU64,
}

impl LocalLimiter {
    /// An empty limiter.
    pub fn new() -> Self {
        Self::default()
    }

    /// The check itself, without the async wrapper (for benches and other callers).
    pub fn check(&self, workspace: WorkspaceId, limit: u32, now_ms: i64) -> Decision {
        let now_second = now_ms.div_euclid(1000);
        let mut windows = self.windows.lock().unwrap_or_else(std::sync::PoisonError::into_inner);
        if self.checks.fetch_add(1, Ordering::Relaxed) % PRUNE_EVERY == PRUNE_EVERY - 1 {
            windows.retain(|_, window| !window.is_idle(now_second));
        }
        let window = windows.entry(workspace).or_default();
        let (counted, oldest) = window.tally(now_second);
        if counted < u64::from(limit) {
            window.count(now_second);
            Decision::from_window(true, limit, counted + 1, Some(oldest.unwrap_or(now_second)), now_ms)
        } else {
            Decision::from_window(false, limit, counted, oldest, now_ms)
        }
    }
}

#[async_trait]
impl RateLimiter for LocalLimiter {
    async fn acquire(&self, workspace: WorkspaceId, limit: u32, now_ms: i64) -> Decision {
        self.check(workspace, limit, now_ms)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const T0: i64 = 1_700_000_000_000;

    #[test]
    fn the_limit_th_request_passes_and_the_next_is_refused() {
        let limiter = LocalLimiter::new();
        let workspace = WorkspaceId::generate();
        for n in 1..=60 {
            let decision = limiter.check(workspace, 60, T0 + n * 100);
            assert!(decision.allowed, "request {n}");
            assert_eq!(decision.remaining, 60 - u32::try_from(n).expect("small"));
        }
        let refused = limiter.check(workspace, 60, T0 + 6_100);
        assert_eq!(refused, Decision { allowed: false, limit: 60, remaining: 0, reset_seconds: 54 });
        assert_eq!(refused.retry_after_seconds(), 54);
    }

    #[test]
    fn the_window_slides_a_second_at_a_time() {
        let limiter = LocalLimiter::new();
        let workspace = WorkspaceId::generate();
        // 30 requests in second 0, 30 in second 10.
        for _ in 0..30 {
            assert!(limiter.check(workspace, 60, T0).allowed);
        }
        for _ in 0..30 {
            assert!(limiter.check(workspace, 60, T0 + 10_000).allowed);
        }
        assert!(!limiter.check(workspace, 60, T0 + 59_999).allowed);
        // Second 0 leaves the window at T0 + 60 s: 30 requests free, then none again.
        let freed = limiter.check(workspace, 60, T0 + 60_000);
        assert_eq!(freed.remaining, 29);
        assert_eq!(freed.reset_seconds, 10);
        for _ in 0..29 {
            assert!(limiter.check(workspace, 60, T0 + 60_500).allowed);
        }
        assert!(!limiter.check(workspace, 60, T0 + 60_500).allowed);
        // Refusals were not counted: second 10's requests free at T0 + 70 s.
        assert_eq!(limiter.check(workspace, 60, T0 + 70_000).remaining, 29);
    }

    #[test]
    fn workspaces_have_windows_of_their_own_and_limits_apply_at_once() {
        let limiter = LocalLimiter::new();
        let (busy, quiet) = (WorkspaceId::generate(), WorkspaceId::generate());
        for _ in 0..10 {
            assert!(limiter.check(busy, 10, T0).allowed);
        }
        assert!(!limiter.check(busy, 10, T0).allowed);
        assert!(limiter.check(quiet, 10, T0).allowed);
        // A plan change raises the limit: the same window, more room.
        let raised = limiter.check(busy, 600, T0 + 1);
        assert!(raised.allowed);
        assert_eq!(raised.remaining, 589);
    }

    #[test]
    fn idle_workspaces_are_forgotten() {
        let limiter = LocalLimiter::new();
        for _ in 0..PRUNE_EVERY - 1 {
            limiter.check(WorkspaceId::generate(), 60, T0);
        }
        let later = T0 + 120_000;
        limiter.check(WorkspaceId::generate(), 60, later);
        let windows = limiter.windows.lock().expect("lock");
        assert!(windows.len() <= 1, "{} windows kept", windows.len());
    }
}
