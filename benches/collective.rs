//! Collective model on rail-optimized DGX H100 fabrics of 1,024, 16,384 and 131,072 GPUs.
//! Targets: all-reduce (auto) and all-to-all each within 2 ms, 16 ms and 250 ms.
//!
//! `all-reduce-sharp` is all-reduce with the switches reducing in the network, as the
//! catalog's QM9700 does: the tuner then plans SHARP trees as well.
//!
//! Each evaluation reuses one workspace, as the designer's sidebar does from one edit to the
//! next; `collective` without one (the command line's single evaluation) takes fresh memory,
//! which costs about 6 ms more at 16,384 GPUs.

#[path = "../tests/collective_fixtures/mod.rs"]
mod collective_fixtures;

use criterion::{BenchmarkId, Criterion, criterion_group, criterion_main};
use railyard::analysis::collective::{CollectiveQuery, Op, Workspace, collective_in};
use railyard::model::{Bytes, Catalog, Design, DeviceKind};
use std::hint::black_box;
use std::time::Duration;

fn bench(c: &mut Criterion) {
    let catalog = Catalog::builtin();
    let mut group = c.benchmark_group("collective");
    group
        .sample_size(10)
        .measurement_time(Duration::from_secs(10));
    let workspace = Workspace::default();
    for gpus in [1_024u32, 16_384, 131_072] {
        let design = collective_fixtures::rail_optimized(gpus);
        let sharp = reducing_in_network(design.clone());
        for (name, design, op) in [
            ("all-reduce", &design, Op::AllReduce),
            ("all-reduce-sharp", &sharp, Op::AllReduce),
            ("all-to-all", &design, Op::AllToAll),
        ] {
            let q = CollectiveQuery::new(op, Bytes(1 << 30));
            // Fail loudly rather than time an error path.
            if let Err(e) = collective_in(design, &catalog, &q, &workspace) {
                panic!("{gpus} GPUs, {name}: {e}");
            }
            group.bench_with_input(BenchmarkId::new(name, gpus), &q, |b, q| {
                b.iter(|| collective_in(black_box(design), &catalog, q, &workspace))
            });
        }
    }
    group.finish();
}

/// The design with every switch reducing in the network and SHARP set up (NCCL's CollNet on).
fn reducing_in_network(mut design: Design) -> Design {
    design.sharp_enabled = true;
    for d in &mut design.devices {
        if let DeviceKind::Switch(s) = &mut d.kind {
            s.features.in_network_reduction = true;
        }
    }
    design
}

criterion_group!(benches, bench);
criterion_main!(benches);
