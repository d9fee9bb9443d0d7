//! Structural metrics on rail-optimized fabrics of 1,024, 16,384 and 131,072 GPUs.
//! Targets: 16,384 GPUs within 16 ms and 131,072 within 250 ms for bisection, cost and
//! checks together (`evaluate`); bisection is also timed alone.
//!
//! Designs come from the rail-optimized template; STRUCTURAL_LOCAL_BUILDER=1 uses the
//! builder below instead (one link per cable, the heaviest form of the same fabric), and
//! STRUCTURAL_PETGRAPH=1 also times one split with petgraph's `dinics` for comparison.

use criterion::{BenchmarkId, Criterion, criterion_group, criterion_main};
use railyard::analysis::bisection::{bisection, partition_flow};
use railyard::analysis::evaluate;
use railyard::generate::{Template, TemplateSpec, generate};
use railyard::io::design_file::design_to_string;
use railyard::io::parse_design;
use railyard::model::{
    Bandwidth, Catalog, Design, Device, DeviceId, DeviceKind, Endpoint, GpuNode, GroupKind, Link,
    LinkTech, NicSlot, PartId, Port, Pos, ScaleUp, Switch, SwitchFeatures, SwitchRole,
};
use std::collections::HashMap;
use std::hint::black_box;
use std::time::Instant;

const GPUS_PER_NODE: usize = 8;
const RAILS: usize = 8;
/// Nodes per scalable unit: one 64-port leaf per rail takes 32 down and 32 up.
const SU_NODES: usize = 32;
const LEAF_UP: usize = 32;
const SWITCH_PORTS: usize = 64;
const RATE: f64 = 400.0;

fn add_switch(d: &mut Design, name: String, role: SwitchRole, rail: usize, x: f32) -> DeviceId {
    let y = match role {
        SwitchRole::Leaf => 100.0,
        SwitchRole::Spine => 200.0,
        SwitchRole::Core => 300.0,
    };
    d.add_device(Device {
        id: DeviceId(0),
        name,
        pos: Pos::new(x, y),
        group: None,
        kind: DeviceKind::Switch(Switch {
            model: "qm9700".into(),
            role,
            breakout: 1,
            rail: Some(rail as u32),
            features: SwitchFeatures::default(),
        }),
    })
}

fn add_link(d: &mut Design, a: (DeviceId, usize), b: (DeviceId, usize)) {
    // A node's port k is its NIC k (rail k); switches number their ports.
    let end = |d: &Design, (id, k): (DeviceId, usize)| {
        let port = match d.device(id).map(|x| &x.kind) {
            Some(DeviceKind::Switch(_)) => Port::Switch(k as u32),
            _ => Port::Nic(k as u32),
        };
        Endpoint::new(id, port)
    };
    let (a, b) = (end(d, a), end(d, b));
    d.add_link(Link::new(
        a,
        b,
        LinkTech::InfiniBand,
        Bandwidth::from_gbit_s(RATE),
    ));
}

/// A rail-optimized InfiniBand fabric of DGX-H100-like nodes (8 GPUs, 8 × 400G NICs),
/// one cable per link. Each rail is a non-blocking fat-tree of 64-port switches: two tiers
/// up to 64 scalable units (2,048 nodes), three tiers beyond, in pods of 32 units.
fn rail_optimized(gpus: usize) -> Design {
    let nodes = gpus / GPUS_PER_NODE;
    let units = nodes.div_ceil(SU_NODES);
    let mut d = Design::new(format!("rail-optimized {gpus} GPUs"));
    let su_groups: Vec<_> = (0..units)
        .map(|u| d.add_group(format!("SU{u}"), GroupKind::ScalableUnit))
        .collect();
    let mut node_ids = Vec::with_capacity(nodes);
    for n in 0..nodes {
        let id = d.add_device(Device {
            id: DeviceId(0),
            name: format!("dgx{n}"),
            pos: Pos::new(n as f32 * 20.0, 0.0),
            group: Some(su_groups[n / SU_NODES]),
            kind: DeviceKind::GpuNode(GpuNode {
                model: "dgx-h100".into(),
                gpu: "h100-sxm".into(),
                gpu_count: GPUS_PER_NODE as u32,
                scale_up: ScaleUp::NvSwitch {
                    generation: 4,
                    per_gpu_gbit_s: Bandwidth::from_gbit_s(3600.0),
                },
                nics: (0..RAILS)
                    .map(|_| NicSlot {
                        part: "cx7-400g".into(),
                        gpudirect: true,
                    })
                    .collect(),
                domain: None,
            }),
        });
        node_ids.push(id);
    }

    for rail in 0..RAILS {
        let leaves: Vec<DeviceId> = (0..units)
            .map(|u| {
                let x = (u * SU_NODES * 20 + rail * 60) as f32;
                add_switch(
                    &mut d,
                    format!("su{u}-rail{rail}"),
                    SwitchRole::Leaf,
                    rail,
                    x,
                )
            })
            .collect();
        for (n, &node) in node_ids.iter().enumerate() {
            add_link(&mut d, (node, rail), (leaves[n / SU_NODES], n % SU_NODES));
        }
        if units <= SWITCH_PORTS {
            // Two tiers: the rail's leaf uplinks spread evenly over its spines.
            let spines = (units * LEAF_UP).div_ceil(SWITCH_PORTS);
            let spine_ids: Vec<DeviceId> = (0..spines)
                .map(|s| {
                    let x = (s * 40 + rail * 2000) as f32;
                    add_switch(
                        &mut d,
                        format!("rail{rail}-spine{s}"),
                        SwitchRole::Spine,
                        rail,
                        x,
                    )
                })
                .collect();
            let mut spine_port = vec![0; spines];
            for &leaf in &leaves {
                for k in 0..LEAF_UP {
                    let s = k % spines;
                    add_link(&mut d, (leaf, SU_NODES + k), (spine_ids[s], spine_port[s]));
                    spine_port[s] += 1;
                }
            }
        } else {
            // Three tiers: pods of 32 leaves with 32 spines each; spine j of every pod
            // goes up to core group j.
            let pods = units.div_ceil(SU_NODES);
            let cores_per_group = (pods * LEAF_UP / SWITCH_PORTS).max(1);
            let cores: Vec<Vec<DeviceId>> = (0..LEAF_UP)
                .map(|j| {
                    (0..cores_per_group)
                        .map(|c| {
                            let x = ((j * cores_per_group + c) * 40 + rail * 4000) as f32;
                            let name = format!("rail{rail}-core{j}.{c}");
                            add_switch(&mut d, name, SwitchRole::Core, rail, x)
                        })
                        .collect()
                })
                .collect();
            let mut core_port = vec![vec![0; cores_per_group]; LEAF_UP];
            for p in 0..pods {
                let spines: Vec<DeviceId> = (0..LEAF_UP)
                    .map(|j| {
                        let x = ((p * LEAF_UP + j) * 40 + rail * 4000) as f32;
                        let name = format!("rail{rail}-pod{p}-spine{j}");
                        add_switch(&mut d, name, SwitchRole::Spine, rail, x)
                    })
                    .collect();
                let pod_leaves = &leaves[p * SU_NODES..((p + 1) * SU_NODES).min(units)];
                for (i, &leaf) in pod_leaves.iter().enumerate() {
                    for (j, &spine) in spines.iter().enumerate() {
                        add_link(&mut d, (leaf, SU_NODES + j), (spine, i));
                    }
                }
                for (j, &spine) in spines.iter().enumerate() {
                    for k in 0..LEAF_UP {
                        let c = k % cores_per_group;
                        add_link(
                            &mut d,
                            (spine, SU_NODES + k),
                            (cores[j][c], core_port[j][c]),
                        );
                        core_port[j][c] += 1;
                    }
                }
            }
        }
    }
    d
}

/// The rail-optimized template with its default parts (DGX H100 nodes, 64-port QM9700
/// switches), two tiers while they fit and three beyond; past what those switches reach,
/// 144-port Q3400s. The local builder stands in if the template refuses.
fn design_for(gpus: usize, catalog: &Catalog) -> Design {
    let nodes = (gpus / GPUS_PER_NODE) as u32;
    let mut refusals = Vec::new();
    for (switch, tiers) in [(None, 2), (None, 3), (Some("q3400"), 2), (Some("q3400"), 3)] {
        let mut spec = TemplateSpec::new(Template::RailOptimized);
        spec.nodes = Some(nodes);
        spec.tiers = tiers;
        spec.switch = switch.map(PartId::new);
        match generate(&spec, catalog) {
            Ok(d) if d.gpu_count() == gpus as u64 => return d,
            Ok(d) => refusals.push(format!("template gave {} GPUs", d.gpu_count())),
            Err(e) => refusals.push(e.to_string()),
        }
    }
    eprintln!(
        "{gpus} GPUs: using the local builder; {}",
        refusals.join("; ")
    );
    rail_optimized(gpus)
}

fn compare_with_petgraph(design: &Design) {
    let nodes: Vec<DeviceId> = design
        .devices
        .iter()
        .filter(|d| matches!(d.kind, DeviceKind::GpuNode(_)))
        .map(|d| d.id)
        .collect();
    let (half_a, half_b) = nodes.split_at(nodes.len() / 2);

    let t = Instant::now();
    let ours = partition_flow(design, half_a).map_or(0.0, |b| b.gbit_s());
    let ours_time = t.elapsed();

    let t = Instant::now();
    let mut g = petgraph::Graph::<(), u64>::new();
    let index: HashMap<DeviceId, petgraph::graph::NodeIndex> = design
        .devices
        .iter()
        .map(|d| (d.id, g.add_node(())))
        .collect();
    let source = g.add_node(());
    let sink = g.add_node(());
    for l in &design.links {
        let c = (l.capacity().gbit_s() * 1000.0).round() as u64;
        g.add_edge(index[&l.a.device], index[&l.b.device], c);
        g.add_edge(index[&l.b.device], index[&l.a.device], c);
    }
    for id in half_a {
        g.add_edge(source, index[id], u64::MAX / 4);
    }
    for id in half_b {
        g.add_edge(index[id], sink, u64::MAX / 4);
    }
    let (theirs, _) = petgraph::algo::dinics(&g, source, sink);
    let theirs_time = t.elapsed();
    eprintln!(
        "  one split: ours {ours} Gb/s in {ours_time:?} (graph build included); petgraph dinics {} Gb/s in {theirs_time:?}",
        theirs as f64 / 1000.0
    );
}

fn structural(c: &mut Criterion) {
    let catalog = Catalog::builtin();
    let mut group = c.benchmark_group("structural");
    group.sample_size(10);
    for gpus in [1_024usize, 16_384, 131_072] {
        let design = if std::env::var_os("STRUCTURAL_LOCAL_BUILDER").is_some() {
            rail_optimized(gpus)
        } else {
            design_for(gpus, &catalog)
        };
        let b = bisection(&design, &catalog);
        eprintln!(
            "{gpus} GPUs: {} devices, {} links; bisection {} of {} ({:?}), {} cut links, {}",
            design.devices.len(),
            design.links.len(),
            b.value,
            b.full,
            b.ratio,
            b.cut_links.len(),
            b.status
        );
        if std::env::var_os("STRUCTURAL_PETGRAPH").is_some() {
            compare_with_petgraph(&design);
        }
        group.bench_with_input(BenchmarkId::new("bisection", gpus), &design, |bench, d| {
            bench.iter(|| bisection(black_box(d), &catalog))
        });
        group.bench_with_input(BenchmarkId::new("evaluate", gpus), &design, |bench, d| {
            bench.iter(|| evaluate(black_box(d), &catalog))
        });
    }
    group.finish();
}

/// Building 131,072 GPUs rail-optimized (q3400 switches, three tiers): what Design >
/// Generate costs before the first frame of the largest designs.
fn generating(c: &mut Criterion) {
    let catalog = Catalog::builtin();
    let mut spec = TemplateSpec::new(Template::RailOptimized);
    spec.nodes = Some(16_384);
    spec.switch = Some(PartId::new("q3400"));
    spec.tiers = 3;
    let mut group = c.benchmark_group("generate");
    group.sample_size(10);
    group.bench_function(BenchmarkId::new("rail-optimized", 131_072), |bench| {
        bench.iter(|| generate(black_box(&spec), &catalog))
    });
    group.finish();
}

/// Reading a design file (the text already in memory): what File > Open costs. Targets
/// 150 ms at 16,384 GPUs and 1 s at 131,072 (#19).
fn opening(c: &mut Criterion) {
    let catalog = Catalog::builtin();
    let mut group = c.benchmark_group("open");
    group.sample_size(10);
    for gpus in [16_384, 131_072] {
        let text = design_to_string(&design_for(gpus, &catalog)).expect("written");
        group.bench_function(BenchmarkId::new("parse", gpus), |bench| {
            bench.iter(|| parse_design(black_box(&text), "bench").expect("parses"))
        });
    }
    group.finish();
}

criterion_group!(benches, structural, generating, opening);
criterion_main!(benches);
