//! Parser throughput, each format side by side with its baseline on the same bytes, output
//! being complete, validated entries (issue 3's figures; results in docs/PERFORMANCE.md):
//! JSONL vs serde_json into a struct, syslog vs `syslog_loose` (the parser Vector uses),
//! CSV vs the `csv` crate's ByteRecord loop, text and OBL in MB/s. Wall-clock time; the
//! `instructions` bench counts instructions of the same cases, which noise does not move.

mod cases;

use criterion::{Criterion, Throughput, criterion_group, criterion_main};

/// The allocator the `sluice` binary uses, so the figures are those of the deployed service.
#[global_allocator]
static GLOBAL: mimalloc::MiMalloc = mimalloc::MiMalloc;

fn benches(c: &mut Criterion) {
    let options = cases::options();
    for case in cases::cases() {
        let mut group = c.benchmark_group(case.name);
        group.throughput(Throughput::Bytes(case.body.len() as u64));
        group.bench_function("sluice", |b| b.iter(|| case.sluice(&options)));
        if let Some((name, baseline)) = case.baseline {
            group.bench_function(name, |b| b.iter(|| baseline(&case.body)));
        }
        group.finish();
    }
}

criterion_group!(parsers, benches);
criterion_main!(parsers);
