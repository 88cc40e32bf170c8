//! The window in Redis, shared by every sluice process that names the same server.

use std::sync::Mutex;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::{Duration, Instant};

use async_trait::async_trait;
use redis::aio::ConnectionManager;
use sluice_model::WorkspaceId;

use crate::{Decision, RateLimiter, WINDOW_SECONDS};

/// One round trip per check: forget seconds that left the window, sum the rest, count the
/// request when the sum is below the limit. KEYS[1] is the workspace's hash of per-second
/// counters; ARGV is the current second, the limit and the window. Returns
/// `{admitted 0/1, counted, oldest second or -1}`.
const CHECK: &str = r"
local now = tonumber(ARGV[1])
local limit = tonumber(ARGV[2])
local window = tonumber(ARGV[3])
local fields = redis.call('HGETALL', KEYS[1])
local counted = 0
local oldest = -1
for i = 1, #fields, 2 do
  local second = tonumber(fields[i])
  if second <= now - window then
    redis.call('HDEL', KEYS[1], fields[i])
  elseif second <= now then
    counted = counted + tonumber(fields[i + 1])
    if oldest == -1 or second < oldest then oldest = second end
  end
end
local admitted = 0
if counted < limit then
  redis.call('HINCRBY', KEYS[1], ARGV[1], 1)
  redis.call('EXPIRE', KEYS[1], window + 1)
  counted = counted + 1
  if oldest == -1 then oldest = now end
  admitted = 1
end
return {admitted, counted, oldest}
";

/// After a failure, how long checks skip Redis (admitting requests) before trying again, so
/// an unreachable Redis costs one timeout per this period, not one per request.
const QUIET: Duration = Duration::from_secs(1);

/// Failures between two warnings in the log, after the first of a run.
const WARN_EVERY: u64 = 1000;

/// The rate-limit window kept in Redis.
pub struct RedisLimiter {
    client: redis::Client,
    connection: Mutex<Option<ConnectionManager>>,
    script: redis::Script,
    timeout: Duration,
    failures: AtomicU64,
    quiet_until: Mutex<Option<Instant>>,
}

impl std::fmt::Debug for RedisLimiter {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("RedisLimiter").field("timeout", &self.timeout).finish_non_exhaustive()
    }
}

impl RedisLimiter {
    /// A limiter on the Redis server at `url` (`redis://host:port/db`), each check bounded by
    /// `timeout`. Connects lazily: a Redis that is down at start only means failing open.
    pub fn new(url: &str, timeout: Duration) -> Result<Self, redis::RedisError> {
        Ok(RedisLimiter {
            client: redis::Client::open(url)?,
            connection: Mutex::new(None),
            script: redis::Script::new(CHECK),
            timeout,
            failures: AtomicU64::new(0),
            quiet_until: Mutex::new(None),
        })
    }

    async fn connection(&self) -> Result<ConnectionManager, redis::RedisError> {
        if let Some(connection) = self.connection.lock().unwrap_or_else(std::sync::PoisonError::into_inner).clone() {
            return Ok(connection);
        }
        let config = redis::aio::ConnectionManagerConfig::new()
            .set_connection_timeout(Some(self.timeout))
            .set_response_timeout(Some(self.timeout))
            .set_number_of_retries(0);
        let connection = self.client.get_connection_manager_with_config(config).await?;
        *self.connection.lock().unwrap_or_else(std::sync::PoisonError::into_inner) = Some(connection.clone());
        Ok(connection)
    }

    async fn check(&self, workspace: WorkspaceId, limit: u32, now_second: i64) -> Result<(i64, i64, i64), String> {
        let mut connection = self.connection().await.map_err(|error| error.to_string())?;
        self.script
            .key(format!("sluice:rate:{workspace}"))
            .arg(now_second)
            .arg(limit)
            .arg(WINDOW_SECONDS)
            .invoke_async(&mut connection)
            .await
            .map_err(|error| error.to_string())
    }

    fn in_quiet_period(&self) -> bool {
        let quiet = self.quiet_until.lock().unwrap_or_else(std::sync::PoisonError::into_inner);
        quiet.is_some_and(|until| Instant::now() < until)
    }

    fn failed(&self, reason: &str) {
        *self.quiet_until.lock().unwrap_or_else(std::sync::PoisonError::into_inner) = Some(Instant::now() + QUIET);
        let failures = self.failures.fetch_add(1, Ordering::Relaxed) + 1;
        if failures == 1 || failures.is_multiple_of(WARN_EVERY) {
            tracing::warn!(failures, reason, "rate limiter: Redis unreachable, admitting requests unlimited");
        }
    }
}

#[async_trait]
impl RateLimiter for RedisLimiter {
    async fn acquire(&self, workspace: WorkspaceId, limit: u32, now_ms: i64) -> Decision {
        if self.in_quiet_period() {
            self.failures.fetch_add(1, Ordering::Relaxed);
            return Decision::open(limit);
        }
        let now_second = now_ms.div_euclid(1000);
        match tokio::time::timeout(self.timeout, self.check(workspace, limit, now_second)).await {
            Ok(Ok((admitted, counted, oldest))) => Decision::from_window(
                admitted == 1,
                limit,
                u64::try_from(counted).unwrap_or(0),
                (oldest >= 0).then_some(oldest),
                now_ms,
            ),
            Ok(Err(reason)) => {
                self.failed(&reason);
                Decision::open(limit)
            }
            Err(_) => {
                self.failed("no answer within the timeout");
                Decision::open(limit)
            }
        }
    }

    fn failures(&self) -> u64 {
        self.failures.load(Ordering::Relaxed)
    }
}
