//! Sign-in throttling: at most [`MAX_FAILURES`] failed sign-ins per email in any
//! [`WINDOW_MS`]; the next is refused before its password is checked.
//!
//! Counted in this process's memory (moka), per email as compared (lower case): a server of
//! several nodes allows up to that many per node, and a restart forgets the count.

use std::sync::{Arc, Mutex, PoisonError};
use std::time::Duration;

use moka::sync::Cache;

/// Failed attempts allowed per email in the window.
pub const MAX_FAILURES: usize = 10;

/// The window: 15 minutes.
pub const WINDOW_MS: i64 = 15 * 60 * 1000;

/// Failed sign-ins per email.
#[derive(Clone)]
pub struct SignInThrottle {
    /// Times of each email's failures within the window, oldest first.
    failures: Cache<String, Arc<Mutex<Vec<i64>>>>,
}

impl std::fmt::Debug for SignInThrottle {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("SignInThrottle").field("emails", &self.failures.entry_count()).finish()
    }
}

impl Default for SignInThrottle {
    fn default() -> Self {
        let idle = Duration::from_millis(u64::try_from(WINDOW_MS).unwrap_or(u64::MAX));
        Self { failures: Cache::builder().max_capacity(100_000).time_to_idle(idle).build() }
    }
}

impl SignInThrottle {
    /// `Err(seconds)` when `email` has had its failures in the window at `now_ms`: the seconds
    /// until the oldest of them leaves it.
    pub fn check(&self, email: &str, now_ms: i64) -> Result<(), u64> {
        let Some(times) = self.failures.get(email) else {
            return Ok(());
        };
        let mut times = times.lock().unwrap_or_else(PoisonError::into_inner);
        times.retain(|at| now_ms.saturating_sub(*at) < WINDOW_MS);
        if times.len() < MAX_FAILURES {
            return Ok(());
        }
        let oldest = times.first().copied().unwrap_or(now_ms);
        let wait_ms = oldest.saturating_add(WINDOW_MS).saturating_sub(now_ms);
        Err(u64::try_from(wait_ms).unwrap_or(0).div_ceil(1000).max(1))
    }

    /// Counts a failed sign-in for `email` at `now_ms`.
    pub fn fail(&self, email: &str, now_ms: i64) {
        let times = self.failures.get_with(email.to_owned(), Arc::default);
        let mut times = times.lock().unwrap_or_else(PoisonError::into_inner);
        times.retain(|at| now_ms.saturating_sub(*at) < WINDOW_MS);
        times.push(now_ms);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_eleventh_attempt_waits_for_the_oldest_to_leave_the_window() {
        let throttle = SignInThrottle::default();
        for attempt in 0..10 {
            assert_eq!(throttle.check("a@b", 1_000 * attempt), Ok(()));
            throttle.fail("a@b", 1_000 * attempt);
        }
        assert_eq!(throttle.check("a@b", 10_000), Err(890));
        assert_eq!(throttle.check("c@d", 10_000), Ok(()), "per email");
        assert_eq!(throttle.check("a@b", WINDOW_MS), Ok(()), "the first left the window");
    }
}
