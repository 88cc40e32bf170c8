//! The Redis window against a real Redis server (`SLUICE_TEST_REDIS`, which `cargo xtask ci`
//! and `cargo xtask with-pg` set): the same rules as the in-process window, one limit for
//! several limiters (as for several sluice processes), and failing open when Redis is gone.

use std::time::{Duration, Instant};

use sluice_limits::{Decision, LocalLimiter, RateLimiter, RedisLimiter};
use sluice_model::WorkspaceId;

const T0: i64 = 1_700_000_000_000;

fn redis_url() -> String {
    std::env::var("SLUICE_TEST_REDIS")
        .ok()
        .filter(|url| !url.is_empty())
        .expect("SLUICE_TEST_REDIS names no server: run the tests with `cargo xtask with-pg cargo test ...`")
}

fn limiter() -> RedisLimiter {
    RedisLimiter::new(&redis_url(), Duration::from_secs(2)).expect("Redis URL")
}

#[tokio::test]
async fn the_redis_window_decides_as_the_in_process_one() {
    let redis = limiter();
    let local = LocalLimiter::new();
    let workspace = WorkspaceId::generate();
    // The same sequence of (time, limit) through both: every decision equal.
    let mut steps: Vec<(i64, u32)> = Vec::new();
    steps.extend((0..30).map(|n| (T0 + n * 10, 60)));
    steps.extend((0..40).map(|n| (T0 + 10_000 + n, 60)));
    steps.extend([(T0 + 59_999, 60), (T0 + 60_000, 60), (T0 + 60_001, 60), (T0 + 65_000, 120)]);
    steps.extend((0..35).map(|n| (T0 + 70_000 + n, 60)));
    steps.push((T0 + 200_000, 60));
    for (at, limit) in steps {
        let shared = redis.acquire(workspace, limit, at).await;
        let own = local.check(workspace, limit, at);
        assert_eq!(shared, own, "at T0 + {} ms", at - T0);
    }
    assert_eq!(redis.failures(), 0);
}

#[tokio::test]
async fn two_limiters_on_one_redis_enforce_one_limit() {
    let (first, second) = (limiter(), limiter());
    let workspace = WorkspaceId::generate();
    for n in 0..60 {
        let limiter = if n % 2 == 0 { &first } else { &second };
        assert!(limiter.acquire(workspace, 60, T0 + n).await.allowed, "request {n}");
    }
    let refused = second.acquire(workspace, 60, T0 + 100).await;
    assert_eq!(refused, Decision { allowed: false, limit: 60, remaining: 0, reset_seconds: 60 });
    assert!(!first.acquire(workspace, 60, T0 + 100).await.allowed);
    // Another workspace is apart.
    assert!(first.acquire(WorkspaceId::generate(), 60, T0 + 100).await.allowed);
}

#[tokio::test]
async fn an_unreachable_redis_admits_requests_and_counts_the_failures() {
    // A port nobody listens on.
    let port = std::net::TcpListener::bind("127.0.0.1:0").expect("port").local_addr().expect("addr").port();
    let limiter = RedisLimiter::new(&format!("redis://127.0.0.1:{port}"), Duration::from_millis(200)).expect("URL");
    let workspace = WorkspaceId::generate();
    let started = Instant::now();
    for n in 0..100 {
        let decision = limiter.acquire(workspace, 1, T0 + n).await;
        assert_eq!(decision, Decision::open(1), "request {n}");
    }
    // One timeout at most per quiet period, not one per request.
    assert!(started.elapsed() < Duration::from_secs(5), "took {:?}", started.elapsed());
    assert_eq!(limiter.failures(), 100);
}
