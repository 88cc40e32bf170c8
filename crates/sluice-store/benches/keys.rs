//! Taking a chunk's search keys from its logs' folded text: what SQLite's sealing thread and
//! PostgreSQL's chunker spend per log on ingest (`chunk_keys` of each searchable field). The
//! logs are the search benchmark's shape (issue 24): a loghub line followed by an order
//! number, a hex request id, a UUID and a few words.
//!
//! The second bench is PostgreSQL's whole signing of those logs, chunk by chunk: the keys,
//! the trigrams' keys, the bits set, and each signature folded as it is stored.
//!
//! `cargo bench -p sluice-store --features bench --bench keys`

use criterion::{Criterion, Throughput, criterion_group, criterion_main};
use sluice_store::bench::{Random, corpus_lines};
use sluice_store::grams::chunk_keys;
use sluice_store::signature::Signature;

/// 10,000 folded messages of the search benchmark's shape.
fn messages() -> Vec<String> {
    let lines = corpus_lines();
    let mut random = Random(0x9e37_79b9_7f4a_7c15);
    (0..10_000_u64)
        .map(|i| {
            let line = &lines[random.below(lines.len() as u64) as usize];
            let (a, b) = (random.below(u64::MAX), random.below(u64::MAX));
            sluice_query::fold(&format!(
                "{line} order=ORD-{:07} req={a:016x} trace={:08x}-{:04x}-4{:03x}-{:04x}-{:012x} kappa{:03} lambda{} \
                 failover to replica east{:06}",
                a % 10_000_000,
                b >> 32,
                (b >> 16) & 0xffff,
                b & 0xfff,
                0x8000 | (a & 0x3fff),
                b & 0xffff_ffff_ffff,
                i % 1_000,
                i % 10,
                b % 1_000_000,
            ))
        })
        .collect()
}

fn keys(c: &mut Criterion) {
    let messages = messages();
    let mut group = c.benchmark_group("keys");
    group.throughput(Throughput::Elements(messages.len() as u64));
    group.bench_function("trigrams and signature keys of 10,000 logs", |b| {
        b.iter(|| {
            let mut sum = 0_u64;
            for message in &messages {
                let mut trigrams = 0_u64;
                chunk_keys(message, |code| trigrams = trigrams.wrapping_add(code), |key| sum = sum.wrapping_add(key));
                sum = sum.wrapping_add(trigrams);
            }
            sum
        })
    });
    group.bench_function("PostgreSQL's signatures of 10,000 logs (trigrams too, chunks of 256)", |b| {
        b.iter(|| {
            let mut ones = 0_u32;
            for chunk in messages.chunks(256) {
                let mut signature = Signature::new();
                for message in chunk {
                    signature.add_text_with_trigrams(message);
                }
                ones += signature.folded().len() as u32;
            }
            ones
        })
    });
    group.finish();
}

criterion_group!(benches, keys);
criterion_main!(benches);
