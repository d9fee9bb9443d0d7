//! Collective model on rail-optimized DGX H100 fabrics of 1,024, 16,384 and 131,072 GPUs.
//! Targets: all-reduce (auto) and all-to-all each within 2 ms, 16 ms and 250 ms.

#[path = "../tests/collective_fixtures/mod.rs"]
mod collective_fixtures;

use criterion::{BenchmarkId, Criterion, criterion_group, criterion_main};
use railyard::analysis::collective::{CollectiveQuery, Op, collective};
use railyard::model::{Bytes, Catalog};
use std::hint::black_box;
use std::time::Duration;

fn bench(c: &mut Criterion) {
    let catalog = Catalog::builtin();
    let mut group = c.benchmark_group("collective");
    group
        .sample_size(10)
        .measurement_time(Duration::from_secs(10));
    for gpus in [1_024u32, 16_384, 131_072] {
        let design = collective_fixtures::rail_optimized(gpus);
        for op in [Op::AllReduce, Op::AllToAll] {
            let q = CollectiveQuery::new(op, Bytes(1 << 30));
            // Fail loudly rather than time an error path.
            if let Err(e) = collective(&design, &catalog, &q) {
                panic!("{gpus} GPUs, {op}: {e}");
            }
            group.bench_with_input(BenchmarkId::new(op.cli_name(), gpus), &q, |b, q| {
                b.iter(|| collective(black_box(&design), &catalog, q))
            });
        }
    }
    group.finish();
}

criterion_group!(benches, bench);
criterion_main!(benches);
