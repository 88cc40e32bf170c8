//! What `/metrics` costs an ingest request (issue 28: at most 1 % of ingest CPU): the work
//! `metrics::track` and the ingest handler add to one `POST /v1/logs` (the route pattern's
//! label, the request counter, the latency histogram, the logs and bytes by format), and a
//! group commit's observation. Compare with the server CPU one 100-entry request costs in
//! `cargo xtask bench ingest` (docs/PERFORMANCE.md).

use criterion::{Criterion, criterion_group, criterion_main};
use sluice_http::metrics::Metrics;
use sluice_store::group::GroupCommit;

fn benches(c: &mut Criterion) {
    let metrics = Metrics::default();
    c.bench_function("metrics/one ingest request", |b| {
        b.iter(|| {
            metrics.request("/v1/logs".to_owned(), 200, 0.003);
            metrics.ingested("json", 100, 31_000);
        })
    });
    let group = GroupCommit {
        batches: 8,
        logs: 800,
        waited: std::time::Duration::from_micros(900),
        took: std::time::Duration::from_millis(4),
    };
    c.bench_function("metrics/one group commit", |b| b.iter(|| metrics.committed(&group)));
}

criterion_group!(metrics, benches);
criterion_main!(metrics);
