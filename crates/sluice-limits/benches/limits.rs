//! What a rate-limit check costs a request (issue 6: ≤ 100 µs p50 in process, ≤ 1 ms with
//! Redis on loopback).
//!
//! `cargo bench -p sluice-limits --bench limits` (or `cargo xtask bench`, which starts a
//! throwaway Redis). The Redis group runs against `SLUICE_BENCH_REDIS`; without it, it is
//! skipped with a note. Medians are the p50 figures in docs/PERFORMANCE.md.

use std::sync::atomic::{AtomicI64, Ordering};
use std::time::Duration;

use criterion::{Criterion, criterion_group};
use sluice_limits::{LocalLimiter, RateLimiter, RedisLimiter};
use sluice_model::WorkspaceId;

const T0: i64 = 1_700_000_000_000;

/// A clock that moves 1 ms per check, so the window keeps sliding as in service.
fn ticking() -> impl FnMut() -> i64 {
    let now = AtomicI64::new(T0);
    move || now.fetch_add(1, Ordering::Relaxed)
}

fn in_process(criterion: &mut Criterion) {
    let mut group = criterion.benchmark_group("rate_limit_in_process");
    let limiter = LocalLimiter::new();
    let busy = WorkspaceId::generate();
    let mut now = ticking();
    // One busy workspace at Pro's 600/min (mostly refusals once full: the dearer path sums too).
    group.bench_function("one_workspace", |bencher| bencher.iter(|| limiter.check(busy, 600, now())));
    // 10,000 workspaces in turn: the map lookup with a cold window.
    let many: Vec<WorkspaceId> = (0..10_000).map(|_| WorkspaceId::generate()).collect();
    let mut next = 0;
    group.bench_function("10k_workspaces", |bencher| {
        bencher.iter(|| {
            next = (next + 1) % many.len();
            limiter.check(many[next], 60, now())
        });
    });
    group.finish();
}

fn redis(criterion: &mut Criterion) {
    let Some(url) = std::env::var("SLUICE_BENCH_REDIS").ok().filter(|url| !url.is_empty()) else {
        eprintln!("rate_limit_redis: skipped, SLUICE_BENCH_REDIS names no server (cargo xtask bench sets it)");
        return;
    };
    let runtime = tokio::runtime::Builder::new_current_thread().enable_all().build().expect("runtime");
    let limiter = RedisLimiter::new(&url, Duration::from_secs(1)).expect("Redis URL");
    let workspace = WorkspaceId::generate();
    let mut now = ticking();
    let mut group = criterion.benchmark_group("rate_limit_redis");
    group.bench_function("one_workspace", |bencher| {
        bencher.iter(|| runtime.block_on(limiter.acquire(workspace, 600, now())));
    });
    group.finish();
    assert_eq!(limiter.failures(), 0, "Redis failed during the bench: the figures would be of failing open");
}

criterion_group!(benches, in_process, redis);

fn main() {
    benches();
    Criterion::default().configure_from_args().final_summary();
}
