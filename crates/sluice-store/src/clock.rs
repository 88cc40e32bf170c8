//! The one clock: the current time in Unix ms, injected into every layer that needs "now"
//! (the HTTP state, the stores' housekeeping) so tests move time without sleeping, and read
//! from the system only by [`system_clock`].

use std::sync::Arc;
use std::time::{SystemTime, UNIX_EPOCH};

/// The current time in Unix ms. Injected so tests can move time without sleeping.
#[derive(Clone)]
pub struct Clock(Arc<dyn Fn() -> i64 + Send + Sync>);

impl Clock {
    /// A clock that reads `now`.
    pub fn new(now: impl Fn() -> i64 + Send + Sync + 'static) -> Self {
        Clock(Arc::new(now))
    }

    /// Now, in Unix ms.
    pub fn now_ms(&self) -> i64 {
        (self.0)()
    }
}

impl std::fmt::Debug for Clock {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_tuple("Clock").field(&self.now_ms()).finish()
    }
}

/// Now, in Unix ms, by the wall clock: the one place the system time is read.
#[expect(clippy::disallowed_methods, reason = "the one place the wall clock is read")]
pub fn unix_now_ms() -> i64 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map_or(0, |elapsed| i64::try_from(elapsed.as_millis()).unwrap_or(i64::MAX))
}

/// The wall clock.
pub fn system_clock() -> Clock {
    Clock::new(unix_now_ms)
}
