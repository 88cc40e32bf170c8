//! Building a block of chunk signatures (`sluice_store::signature::Block::build`): what the
//! sealer spends per 1,024 chunks, off the insert's path but on the same two cores.
//!
//! `cargo bench -p sluice-store --features bench --bench block`

use criterion::{Criterion, criterion_group, criterion_main};
use sluice_store::signature::{BLOCK_CHUNKS, Block, Signature};

/// Full signatures of chunks of 256 logs carrying identifiers: about 15,000 distinct keys
/// each, as the 10M-log search benchmark's (docs/PERFORMANCE.md, issue 24).
fn signatures() -> Vec<Vec<u8>> {
    let mut state = 0x9e37_79b9_7f4a_7c15_u64;
    (0..BLOCK_CHUNKS)
        .map(|_| {
            let mut signature = Signature::new();
            for _ in 0..15_000 {
                state ^= state << 13;
                state ^= state >> 7;
                state ^= state << 17;
                signature.insert(state);
            }
            signature.folded()
        })
        .collect()
}

fn block(c: &mut Criterion) {
    let signatures = signatures();
    let views: Vec<&[u8]> = signatures.iter().map(Vec::as_slice).collect();
    let mut group = c.benchmark_group("block");
    group.sample_size(10);
    group.bench_function("build 1,024 signatures of 32 KiB", |b| b.iter(|| Block::build(&views)));
    group.finish();
}

criterion_group!(benches, block);
criterion_main!(benches);
