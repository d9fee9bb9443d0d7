//! Properties that must hold on every design, not just the hand-worked ones:
//! - adding a link never lowers the bisection, removing one never raises it;
//! - a design saved and loaded again is the same design;
//! - every template's output passes the structural checks;
//! - collective time never falls as the message grows, and busbw stays under the physical
//!   bound (the in-network bound where the switches reduce).
//!
//! Case counts are modest (64) so the suite stays quick on two cores; raise
//! `PROPTEST_CASES` for a longer hunt.

mod common;

use common::design::v1_end;
use proptest::prelude::*;
use proptest::test_runner::{Config, TestCaseError, TestRunner};
use railyard::analysis::bisection::{BisectionStatus, bisection};
use railyard::analysis::checks::{Severity, checks};
use railyard::analysis::collective::{AlgoChoice, CollectiveQuery, Op, Routing, sweep_at};
use railyard::analysis::evaluate;
use railyard::generate::{GenerateError, Template, TemplateSpec, generate};
use railyard::io::design_file::design_to_string;
use railyard::io::parse_design;
use railyard::model::validate::validate;
use railyard::model::{
    Bandwidth, Bytes, Catalog, Design, Device, DeviceId, DeviceKind, Endpoint, GpuNode, Group,
    GroupId, GroupKind, Host, HostRole, LengthClass, Link, LinkId, LinkState, LinkTech, NicSlot,
    NvSwitchDomain, PartId, PcieVia, Port, Pos, ScaleUp, Switch, SwitchFeatures, SwitchRole,
    Transport,
};
use std::cell::Cell;
use std::collections::HashMap;

const CASES: u32 = 64;

fn config() -> Config {
    // `PROPTEST_CASES` from the environment still wins, for longer runs by hand.
    let cases = std::env::var("PROPTEST_CASES")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(CASES);
    Config {
        cases,
        failure_persistence: None,
        ..Config::default()
    }
}

// ------------------------------------------------------------------ random fabrics

/// A random fabric: GPU nodes and leaf switches joined by InfiniBand links, valid by
/// construction (ids dense, no self-loops, every end on a device, ports never reused).
#[derive(Debug, Clone)]
struct Fabric {
    /// (GPUs, NICs) of each node.
    nodes: Vec<(u32, u32)>,
    switches: usize,
    links: Vec<LinkPlan>,
}

/// A link between the devices at index `from` and `from + 1 + offset` (mod device count),
/// so the ends always differ.
#[derive(Debug, Clone, Copy)]
struct LinkPlan {
    from: usize,
    offset: usize,
    gbit_s: f64,
    lanes: u32,
    state: LinkState,
}

fn link_plan() -> impl Strategy<Value = LinkPlan> {
    (
        0usize..64,
        0usize..64,
        prop_oneof![Just(100.0), Just(200.0), Just(400.0)],
        1u32..=2,
        prop_oneof![
            6 => Just(LinkState::Up),
            1 => Just(LinkState::Failed),
            1 => (0.1f64..=1.0).prop_map(|fraction| LinkState::Degraded { fraction }),
        ],
    )
        .prop_map(|(from, offset, gbit_s, lanes, state)| LinkPlan {
            from,
            offset,
            gbit_s,
            lanes,
            state,
        })
}

/// `nodes` GPU nodes and up to four leaves, randomly wired.
fn fabric(nodes: std::ops::RangeInclusive<usize>) -> impl Strategy<Value = Fabric> {
    (
        prop::collection::vec(
            (prop_oneof![Just(1u32), Just(2), Just(4), Just(8)], 0u32..=4),
            nodes,
        ),
        0usize..=4,
        prop::collection::vec(link_plan(), 0..=40),
    )
        .prop_map(|(nodes, switches, links)| Fabric {
            nodes,
            switches,
            links,
        })
}

/// Small enough that the bisection tries every balanced split (up to 16 units, within its
/// work budget), so its answer is exact; the tests check the `exact` flag it reports.
fn exact_fabric() -> impl Strategy<Value = Fabric> {
    fabric(2..=10)
}

/// A result from the candidate search rather than from every balanced split.
fn searched(status: BisectionStatus) -> bool {
    matches!(status, BisectionStatus::Ok { exact: false })
}

/// Runs a property over exact-path cases, skipping those the bisection searched; fails if
/// more than a quarter were skipped, so a change in the search budget cannot make the
/// property vacuous.
fn run_exact<S: Strategy>(strategy: S, test: impl Fn(S::Value) -> Result<bool, TestCaseError>)
where
    S::Value: std::fmt::Debug,
{
    let (ran, skipped) = (Cell::new(0u32), Cell::new(0u32));
    TestRunner::new(config())
        .run(&strategy, |value| {
            let exact = test(value)?;
            ran.set(ran.get() + 1);
            skipped.set(skipped.get() + u32::from(!exact));
            Ok(())
        })
        .unwrap();
    assert!(
        skipped.get() * 4 <= ran.get(),
        "{} of {} cases took the candidate search",
        skipped.get(),
        ran.get()
    );
}

/// From 17 units on it takes the best of candidate splits.
fn searched_fabric() -> impl Strategy<Value = Fabric> {
    fabric(17..=18)
}

fn gpu_node(gpus: u32, nics: u32) -> DeviceKind {
    DeviceKind::GpuNode(GpuNode {
        model: PartId::new("dgx-h100"),
        gpu: PartId::new("h100-sxm"),
        gpu_count: gpus,
        scale_up: ScaleUp::NvSwitch {
            generation: 4,
            per_gpu_gbit_s: Bandwidth::from_gbyte_s(450.0),
        },
        nics: (0..nics)
            .map(|_| NicSlot {
                part: PartId::new("cx7-ndr-400"),
                gpudirect: true,
            })
            .collect(),
        domain: None,
    })
}

fn leaf() -> DeviceKind {
    DeviceKind::Switch(Switch {
        model: PartId::new("qm9700"),
        role: SwitchRole::Leaf,
        breakout: 1,
        rail: None,
        features: SwitchFeatures::default(),
    })
}

/// Devices and links of a fabric; `next_port` tracks the first free port of each device.
struct Built {
    design: Design,
    next_port: Vec<u32>,
}

impl Built {
    fn add_link(&mut self, plan: &LinkPlan) {
        let n = self.design.devices.len();
        if n < 2 {
            return;
        }
        let a = plan.from % n;
        let b = (a + 1 + plan.offset % (n - 1)) % n;
        let ends = [a, b].map(|i| {
            let port = self.next_port[i];
            self.next_port[i] += 1;
            v1_end(
                &self.design,
                (self.design.devices[i].id, port),
                LinkTech::InfiniBand,
            )
        });
        let mut link = Link::new(
            ends[0],
            ends[1],
            LinkTech::InfiniBand,
            Bandwidth::from_gbit_s(plan.gbit_s),
        )
        .with_lanes(plan.lanes);
        link.state = plan.state;
        self.design.add_link(link);
    }
}

fn build(f: &Fabric) -> Built {
    let mut design = Design::new("random fabric");
    for (i, &(gpus, nics)) in f.nodes.iter().enumerate() {
        design.add_device(Device {
            id: DeviceId(0),
            name: format!("node-{i}"),
            pos: Pos::new(i as f32 * 100.0, 400.0),
            group: None,
            kind: gpu_node(gpus, nics),
        });
    }
    for i in 0..f.switches {
        design.add_device(Device {
            id: DeviceId(0),
            name: format!("leaf-{i}"),
            pos: Pos::new(i as f32 * 100.0, 0.0),
            group: None,
            kind: leaf(),
        });
    }
    let next_port = vec![0; design.devices.len()];
    let mut built = Built { design, next_port };
    for plan in &f.links {
        built.add_link(plan);
    }
    built
}

/// The least max-flow over balanced bipartitions of the GPU nodes, by brute force with
/// petgraph's max-flow: an oracle independent of the bisection module. Balanced, as the
/// module documents it: the halves' GPU counts differ by at most the smallest node's
/// count, or by the least any split allows. Designs here have no NVSwitch domains, so each
/// GPU node is a unit of its own. In Mb/s, each link rounded to whole Mb/s as the module does.
fn brute_force_bisection_mbit(design: &Design) -> Option<u64> {
    use petgraph::graph::{DiGraph, NodeIndex};
    let units: Vec<(usize, u64)> = design
        .devices
        .iter()
        .enumerate()
        .filter_map(|(i, d)| d.kind.as_node().map(|n| (i, u64::from(n.gpu_count))))
        .collect();
    let n = units.len();
    if !(2..=20).contains(&n) {
        return None;
    }
    let total: u64 = units.iter().map(|u| u.1).sum();
    let imbalance = |mask: u64| {
        let a: u64 = (0..n)
            .filter(|&u| mask >> u & 1 == 1)
            .map(|u| units[u].1)
            .sum();
        (2 * a).abs_diff(total)
    };
    // Unit 0 always in half A, so each split comes once; not every unit in A, so half B
    // is never empty.
    let masks = (0..1u64 << n).filter(|m| m & 1 == 1 && *m != (1u64 << n) - 1);
    let least = masks.clone().map(imbalance).min()?;
    let smallest = units.iter().map(|u| u.1).min()?;
    let tolerance = least.max(smallest);
    let index_of: HashMap<DeviceId, usize> = design
        .devices
        .iter()
        .enumerate()
        .map(|(i, d)| (d.id, i))
        .collect();
    let mut best = u64::MAX;
    for mask in masks.filter(|&m| imbalance(m) <= tolerance) {
        let mut g: DiGraph<(), u64> = DiGraph::new();
        let vertices: Vec<NodeIndex> = design.devices.iter().map(|_| g.add_node(())).collect();
        let (source, sink) = (g.add_node(()), g.add_node(()));
        let mut all = 0u64;
        for l in &design.links {
            let mbit = (l.capacity().gbit_s() * 1000.0).round() as u64;
            let (a, b) = (
                vertices[index_of[&l.a.device]],
                vertices[index_of[&l.b.device]],
            );
            if mbit > 0 {
                g.add_edge(a, b, mbit);
                g.add_edge(b, a, mbit);
                all += mbit;
            }
        }
        for (u, &(i, _)) in units.iter().enumerate() {
            if mask >> u & 1 == 1 {
                g.add_edge(source, vertices[i], all + 1);
            } else {
                g.add_edge(vertices[i], sink, all + 1);
            }
        }
        let (flow, _) = petgraph::algo::dinics(&g, source, sink);
        best = best.min(flow);
    }
    Some(best)
}

/// How many separate islands the GPU nodes form over links that carry anything.
fn gpu_islands(design: &Design) -> usize {
    use petgraph::unionfind::UnionFind;
    let index_of: HashMap<DeviceId, usize> = design
        .devices
        .iter()
        .enumerate()
        .map(|(i, d)| (d.id, i))
        .collect();
    let mut islands = UnionFind::new(design.devices.len());
    for l in &design.links {
        if (l.capacity().gbit_s() * 1000.0).round() > 0.0 {
            islands.union(index_of[&l.a.device], index_of[&l.b.device]);
        }
    }
    let mut roots: Vec<usize> = (0..design.devices.len())
        .filter(|&i| design.devices[i].kind.as_node().is_some())
        .map(|i| islands.find(i))
        .collect();
    roots.sort_unstable();
    roots.dedup();
    roots.len()
}

fn mbit(design: &Design, catalog: &Catalog) -> (u64, BisectionStatus) {
    let b = bisection(design, catalog);
    let value = b.value.gbit_s();
    assert!(value.is_finite() && value >= 0.0, "bisection {value}");
    ((value * 1000.0).round() as u64, b.status)
}

#[test]
fn bisection_equals_a_brute_force_minimum_when_exact() {
    let catalog = Catalog::builtin();
    run_exact(exact_fabric(), |f| {
        let design = build(&f).design;
        prop_assert!(validate(&design).is_ok());
        let (value, status) = mbit(&design, &catalog);
        match status {
            BisectionStatus::Ok { exact: false } => return Ok(false),
            BisectionStatus::Ok { exact: true } => {
                prop_assert_eq!(Some(value), brute_force_bisection_mbit(&design));
            }
            // GPUs in separate islands: reported as zero, whatever a balanced split of
            // the islands would have to cross.
            BisectionStatus::NotConnected { islands } => {
                prop_assert_eq!(value, 0);
                prop_assert_eq!(islands, gpu_islands(&design));
                prop_assert!(islands > 1);
            }
            BisectionStatus::NoLinks => {
                prop_assert_eq!(value, 0);
                let carried = |l: &Link| l.capacity().gbit_s() * 1000.0 >= 0.5;
                prop_assert!(!design.links.iter().any(carried));
            }
            other => prop_assert!(
                false,
                "unexpected status {other} for {} nodes",
                f.nodes.len()
            ),
        }
        Ok(true)
    });
}

/// Beyond the exhaustive range the result is the best of candidate splits, documented as an
/// upper bound on the true minimum: every candidate obeys the exhaustive search's balance
/// rule (a split of 18 against 23 GPUs out of 41 is not scored where the rule allows 20
/// against 21), so none can fall below the balanced minimum.
#[test]
fn searched_bisection_is_never_below_the_true_minimum() {
    let catalog = Catalog::builtin();
    let mut runner = TestRunner::new(Config {
        cases: config().cases / 4 + 1,
        ..config()
    });
    runner
        .run(&searched_fabric(), |f| {
            let design = build(&f).design;
            let (value, status) = mbit(&design, &catalog);
            let oracle = brute_force_bisection_mbit(&design).expect("2 to 20 units");
            if status.is_ok() {
                prop_assert!(
                    value >= oracle,
                    "{value} Mb/s below the true minimum {oracle}"
                );
            } else {
                prop_assert_eq!(value, 0, "{}", status);
            }
            Ok(())
        })
        .unwrap();
}

/// Checks that adding `extra` does not lower the bisection; with `exact_only`, skips (and
/// returns false for) designs where either result came from the candidate search.
fn add_link_keeps_or_raises(
    f: Fabric,
    extra: LinkPlan,
    catalog: &Catalog,
    exact_only: bool,
) -> Result<bool, TestCaseError> {
    let mut built = build(&f);
    prop_assert!(validate(&built.design).is_ok());
    let before_design = built.design.clone();
    let (before, status_before) = mbit(&built.design, catalog);
    built.add_link(&extra);
    prop_assert!(validate(&built.design).is_ok());
    let (after, status_after) = mbit(&built.design, catalog);
    if exact_only && (searched(status_before) || searched(status_after)) {
        return Ok(false);
    }
    prop_assert!(
        after >= before,
        "bisection fell from {before} to {after} Mb/s after adding a link ({status_before} → \
         {status_after}); true minima {:?} → {:?}",
        brute_force_bisection_mbit(&before_design),
        brute_force_bisection_mbit(&built.design)
    );
    Ok(true)
}

/// Checks that removing a link does not raise the bisection; `exact_only` as above.
fn remove_link_keeps_or_lowers(
    f: Fabric,
    which: prop::sample::Index,
    catalog: &Catalog,
    exact_only: bool,
) -> Result<bool, TestCaseError> {
    let built = build(&f);
    if built.design.links.is_empty() {
        return Ok(true);
    }
    let (before, status_before) = mbit(&built.design, catalog);
    let mut design = built.design.clone();
    let id = design.links[which.index(design.links.len())].id;
    design.remove_link(id);
    prop_assert!(validate(&design).is_ok());
    let (after, status_after) = mbit(&design, catalog);
    if exact_only && (searched(status_before) || searched(status_after)) {
        return Ok(false);
    }
    prop_assert!(
        after <= before,
        "bisection rose from {before} to {after} Mb/s after removing link {id} \
         ({status_before} → {status_after}); true minima {:?} → {:?}",
        brute_force_bisection_mbit(&built.design),
        brute_force_bisection_mbit(&design)
    );
    Ok(true)
}

#[test]
fn adding_a_link_never_lowers_the_bisection() {
    let catalog = Catalog::builtin();
    run_exact((exact_fabric(), link_plan()), |(f, extra)| {
        add_link_keeps_or_raises(f, extra, &catalog, true)
    });
}

#[test]
fn removing_a_link_never_raises_the_bisection() {
    let catalog = Catalog::builtin();
    run_exact(
        (exact_fabric(), any::<prop::sample::Index>()),
        |(f, which)| remove_link_keeps_or_lowers(f, which, &catalog, true),
    );
}

/// The same two properties where the candidate search answers (here, 17 and 18 units).
/// When the candidates came from the links (breadth-first, spectral, refinement), removing
/// one link raised a result from 856 to 1,256 Gb/s while the true minimum stayed at
/// 731.5 Gb/s; now both designs are scored over the same splits, taken from the devices.
#[test]
fn monotone_bisection_past_the_exhaustive_range() {
    let catalog = Catalog::builtin();
    TestRunner::new(config())
        .run(&(searched_fabric(), link_plan()), |(f, extra)| {
            add_link_keeps_or_raises(f, extra, &catalog, false).map(|_| ())
        })
        .unwrap();
    TestRunner::new(config())
        .run(
            &(searched_fabric(), any::<prop::sample::Index>()),
            |(f, which)| remove_link_keeps_or_lowers(f, which, &catalog, false).map(|_| ()),
        )
        .unwrap();
}

// ------------------------------------------------------------------ save then load

/// Any text up to `max` chars, control characters, quotes and backslashes included.
fn text(max: usize) -> impl Strategy<Value = String> {
    prop_oneof![
        prop::collection::vec(any::<char>(), 0..=max).prop_map(|c| c.into_iter().collect()),
        "[a-z0-9 \"\\\\\n\t()\\[\\]:,]{0,12}",
    ]
}

fn part_id() -> impl Strategy<Value = PartId> {
    prop_oneof![
        Just(PartId::new("dgx-h100")),
        Just(PartId::new("h100-sxm")),
        text(16).prop_map(PartId::new),
    ]
}

/// Finite f32 within the canvas limit, with the awkward ones (subnormals, -0.0) included.
fn coordinate() -> impl Strategy<Value = f32> {
    prop_oneof![
        -1.0e9f32..=1.0e9,
        Just(-0.0f32),
        Just(f32::MIN_POSITIVE / 4.0),
        Just(0.1f32),
        Just(1.0e9f32),
        any::<f32>().prop_filter("finite, within the canvas", |v| {
            v.is_finite() && v.abs() <= 1.0e9
        }),
    ]
}

/// A positive rate within the validator's limit, odd fractions included.
fn rate() -> impl Strategy<Value = Bandwidth> {
    prop_oneof![
        Just(400.0f64),
        Just(0.1f64),
        Just(1.0e5),
        Just(f64::MIN_POSITIVE),
        (1.0e-300f64..=1.0e5),
    ]
    .prop_map(Bandwidth::from_gbit_s)
}

fn nics() -> impl Strategy<Value = Vec<NicSlot>> {
    prop::collection::vec(
        (part_id(), any::<bool>()).prop_map(|(part, gpudirect)| NicSlot { part, gpudirect }),
        0..=3,
    )
}

fn scale_up() -> impl Strategy<Value = ScaleUp> {
    let non_negative = prop_oneof![Just(0.0f64), 0.0f64..=1.0e6, Just(1.0e308)];
    prop_oneof![
        (any::<u8>(), non_negative.clone()).prop_map(|(generation, g)| ScaleUp::NvSwitch {
            generation,
            per_gpu_gbit_s: Bandwidth::from_gbit_s(g),
        }),
        (non_negative, any::<u8>(), any::<bool>()).prop_map(|(g, pcie_generation, p2p)| {
            ScaleUp::NvLinkBridgePairs {
                per_gpu_gbit_s: Bandwidth::from_gbit_s(g),
                pcie_generation,
                peer_to_peer: p2p,
            }
        }),
        (any::<u8>(), any::<bool>(), any::<bool>()).prop_map(|(generation, switch, p2p)| {
            ScaleUp::Pcie {
                generation,
                via: if switch {
                    PcieVia::Switch
                } else {
                    PcieVia::HostBridge
                },
                peer_to_peer: p2p,
            }
        }),
        Just(ScaleUp::UnifiedMemory),
    ]
}

fn features() -> impl Strategy<Value = SwitchFeatures> {
    (any::<bool>(), any::<bool>(), any::<bool>()).prop_map(|(a, b, c)| SwitchFeatures {
        in_network_reduction: a,
        adaptive_routing: b,
        lossless: c,
    })
}

/// A device kind; `domain` of a GPU node is a choice among the domains, settled later.
#[derive(Debug, Clone)]
enum KindPlan {
    Node(GpuNode, Option<prop::sample::Index>),
    Other(DeviceKind),
}

fn kind_plan() -> impl Strategy<Value = KindPlan> {
    let node = (
        part_id(),
        part_id(),
        prop_oneof![1u32..=8, Just(1_000_000)],
        scale_up(),
        nics(),
        prop::option::of(any::<prop::sample::Index>()),
    )
        .prop_map(|(model, gpu, gpu_count, scale_up, nics, domain)| {
            KindPlan::Node(
                GpuNode {
                    model,
                    gpu,
                    gpu_count,
                    scale_up,
                    nics,
                    domain: None,
                },
                domain,
            )
        });
    let switch = (
        part_id(),
        prop_oneof![
            Just(SwitchRole::Leaf),
            Just(SwitchRole::Spine),
            Just(SwitchRole::Core)
        ],
        1u32..=64,
        prop::option::of(any::<u32>()),
        features(),
    )
        .prop_map(|(model, role, breakout, rail, features)| {
            KindPlan::Other(DeviceKind::Switch(Switch {
                model,
                role,
                breakout,
                rail,
                features,
            }))
        });
    let host =
        (any::<bool>(), prop::option::of(part_id()), nics()).prop_map(|(storage, model, nics)| {
            KindPlan::Other(DeviceKind::Host(Host {
                role: if storage {
                    HostRole::Storage
                } else {
                    HostRole::Cpu
                },
                model,
                nics,
            }))
        });
    let domain = part_id()
        .prop_map(|model| KindPlan::Other(DeviceKind::NvSwitchDomain(NvSwitchDomain { model })));
    prop_oneof![4 => node, 3 => switch, 1 => host, 1 => domain]
}

#[derive(Debug, Clone)]
struct DevicePlan {
    id_gap: u32,
    name: String,
    pos: Pos,
    group: Option<prop::sample::Index>,
    kind: KindPlan,
}

fn device_plan() -> impl Strategy<Value = DevicePlan> {
    (
        prop_oneof![Just(1u32), 1u32..=1000, Just(1_000_000)],
        text(12),
        coordinate(),
        coordinate(),
        prop::option::of(any::<prop::sample::Index>()),
        kind_plan(),
    )
        .prop_map(|(id_gap, name, x, y, group, kind)| DevicePlan {
            id_gap,
            name,
            pos: Pos::new(x, y),
            group,
            kind,
        })
}

#[derive(Debug, Clone)]
struct WirePlan {
    id_gap: u32,
    a: prop::sample::Index,
    b_offset: prop::sample::Index,
    ports: (u32, u32),
    tech: LinkTech,
    rate: Bandwidth,
    lanes: u32,
    transport: Transport,
    length: LengthClass,
    state: LinkState,
    cable: Option<PartId>,
}

fn wire_plan() -> impl Strategy<Value = WirePlan> {
    (
        (
            prop_oneof![Just(1u32), 1u32..=1000],
            any::<prop::sample::Index>(),
            any::<prop::sample::Index>(),
        ),
        (any::<u32>(), any::<u32>()),
        prop::sample::select(LinkTech::ALL.to_vec()),
        rate(),
        prop_oneof![1u32..=4, Just(1024)],
        (any::<bool>(), any::<bool>()),
        prop_oneof![
            Just(LinkState::Up),
            Just(LinkState::Failed),
            Just(LinkState::Degraded { fraction: 1.0 }),
            (f64::MIN_POSITIVE..=1.0).prop_map(|fraction| LinkState::Degraded { fraction }),
        ],
        prop::option::of(part_id()),
    )
        .prop_map(
            |((id_gap, a, b_offset), ports, tech, rate, lanes, (tcp, cross), state, cable)| {
                WirePlan {
                    id_gap,
                    a,
                    b_offset,
                    ports,
                    tech,
                    rate,
                    lanes,
                    transport: if tcp { Transport::Tcp } else { Transport::Rdma },
                    length: if cross {
                        LengthClass::CrossRack
                    } else {
                        LengthClass::InRack
                    },
                    state,
                    cable,
                }
            },
        )
}

/// Groups in a forest: each group's parent, if any, comes before it, so there is no cycle.
fn group_plans() -> impl Strategy<Value = Vec<(String, GroupKind, Option<prop::sample::Index>)>> {
    prop::collection::vec(
        (
            text(8),
            prop_oneof![
                Just(GroupKind::Rack),
                Just(GroupKind::Pod),
                Just(GroupKind::ScalableUnit),
                Just(GroupKind::Plane),
            ],
            prop::option::of(any::<prop::sample::Index>()),
        ),
        0..=4,
    )
}

/// A design that uses every field of the model with awkward values, valid by construction.
fn any_design() -> impl Strategy<Value = Design> {
    (
        text(24),
        text(40),
        group_plans(),
        prop::collection::vec(device_plan(), 0..=12),
        prop::collection::vec(wire_plan(), 0..=16),
    )
        .prop_map(|(name, notes, groups, devices, wires)| {
            let mut d = Design::new(name);
            d.notes = notes;
            for (i, (name, kind, parent)) in groups.into_iter().enumerate() {
                let parent = parent
                    .filter(|_| i > 0)
                    .map(|p| GroupId(p.index(i) as u32 * 3));
                // Ids with gaps: a hand-edited file need not number groups densely.
                d.groups.push(Group {
                    id: GroupId(i as u32 * 3),
                    name,
                    kind,
                    parent,
                });
            }
            let mut next_id = 0u32;
            let mut domains = Vec::new();
            let mut pending_domain = Vec::new();
            for plan in devices {
                let id = DeviceId(next_id);
                next_id += plan.id_gap;
                let group = plan
                    .group
                    .filter(|_| !d.groups.is_empty())
                    .map(|g| d.groups[g.index(d.groups.len())].id);
                let kind = match plan.kind {
                    KindPlan::Node(node, domain) => {
                        pending_domain.push((id, domain));
                        DeviceKind::GpuNode(node)
                    }
                    KindPlan::Other(kind) => {
                        if matches!(kind, DeviceKind::NvSwitchDomain(_)) {
                            domains.push(id);
                        }
                        kind
                    }
                };
                d.devices.push(Device {
                    id,
                    name: plan.name,
                    pos: plan.pos,
                    group,
                    kind,
                });
            }
            for (id, domain) in pending_domain {
                if let (Some(choice), false) = (domain, domains.is_empty())
                    && let Some(DeviceKind::GpuNode(n)) = d.device_mut(id).map(|x| &mut x.kind)
                {
                    n.domain = Some(domains[choice.index(domains.len())]);
                }
            }
            // Keep within the design-wide GPU limit: at most one node of a million GPUs.
            let mut big_seen = false;
            for dev in &mut d.devices {
                if let DeviceKind::GpuNode(n) = &mut dev.kind
                    && n.gpu_count > 8
                {
                    if big_seen {
                        n.gpu_count = 8;
                    }
                    big_seen = true;
                }
            }
            let mut next_link = 0u32;
            if d.devices.len() >= 2 {
                for w in wires {
                    let n = d.devices.len();
                    let a = w.a.index(n);
                    let b = (a + 1 + w.b_offset.index(n - 1)) % n;
                    let mut link = Link::new(
                        v1_end(&d, (d.devices[a].id, w.ports.0), w.tech),
                        v1_end(&d, (d.devices[b].id, w.ports.1), w.tech),
                        w.tech,
                        w.rate,
                    );
                    link.id = LinkId(next_link);
                    next_link += w.id_gap;
                    link.lanes = w.lanes;
                    link.transport = w.transport;
                    link.length = w.length;
                    link.state = w.state;
                    link.cable = w.cable;
                    d.links.push(link);
                }
            }
            d
        })
}

#[test]
fn save_then_load_is_the_identity() {
    let mut runner = TestRunner::new(config());
    runner
        .run(&any_design(), |design| {
            prop_assert_eq!(validate(&design), Ok(()));
            let text = design_to_string(&design)
                .map_err(|e| TestCaseError::fail(format!("encode: {e}")))?;
            let loaded = parse_design(&text, "round-trip.ron")
                .map_err(|e| TestCaseError::fail(format!("{e}\n--- text ---\n{text}")))?;
            prop_assert_eq!(&loaded, &design, "text:\n{}", text);
            // And the text is stable: a second save writes the same bytes.
            let again = design_to_string(&loaded)
                .map_err(|e| TestCaseError::fail(format!("encode: {e}")))?;
            prop_assert_eq!(again, text);
            Ok(())
        })
        .unwrap();
}

/// The bit patterns must survive too: `==` on floats would let -0.0 pass for 0.0.
#[test]
fn save_then_load_keeps_float_bits() {
    let mut runner = TestRunner::new(config());
    runner
        .run(&(coordinate(), rate()), |(x, r)| {
            let mut design = Design::new("floats");
            design.add_device(Device {
                id: DeviceId(0),
                name: "a".into(),
                pos: Pos::new(x, -x),
                group: None,
                kind: leaf(),
            });
            design.add_device(Device {
                id: DeviceId(0),
                name: "b".into(),
                pos: Pos::default(),
                group: None,
                kind: leaf(),
            });
            design.add_link(Link::new(
                Endpoint::new(DeviceId(0), Port::Nic(0)),
                Endpoint::new(DeviceId(1), Port::Switch(0)),
                LinkTech::Ethernet,
                r,
            ));
            let text = design_to_string(&design)
                .map_err(|e| TestCaseError::fail(format!("encode: {e}")))?;
            let loaded = parse_design(&text, "floats.ron")
                .map_err(|e| TestCaseError::fail(e.to_string()))?;
            prop_assert_eq!(loaded.devices[0].pos.x.to_bits(), x.to_bits());
            prop_assert_eq!(loaded.devices[0].pos.y.to_bits(), (-x).to_bits());
            prop_assert_eq!(
                loaded.links[0].rate_gbit_s.gbit_s().to_bits(),
                r.gbit_s().to_bits()
            );
            Ok(())
        })
        .unwrap();
}

// ------------------------------------------------------------------ templates

/// A template run over parameters in the range each template is meant for.
fn template_spec(template: Template) -> BoxedStrategy<TemplateSpec> {
    let base = move |nodes: u32| {
        let mut s = TemplateSpec::new(template);
        s.nodes = Some(nodes);
        s
    };
    let part = |id: &'static str| Some(PartId::new(id));
    match template {
        Template::Single => prop_oneof![
            prop::sample::select(vec!["dgx-h100", "hgx-h200", "dgx-b200", "dgx-a100"]).prop_map(
                move |node| {
                    let mut s = base(1);
                    s.node = part(node);
                    s
                }
            ),
            (
                prop::sample::select(vec!["rtx-4090", "rtx-3090", "rtx-5090", "rtx-6000-ada"]),
                1u32..=4,
            )
                .prop_map(move |(gpu, count)| {
                    let mut s = base(1);
                    s.node = part("workstation");
                    s.gpu = part(gpu);
                    s.gpus_per_node = Some(count);
                    s
                }),
        ]
        .boxed(),
        Template::Star => (
            1u32..=32,
            prop::sample::select(vec!["dgx-h100", "hgx-h100"]),
        )
            .prop_map(move |(n, node)| {
                let mut s = base(n);
                s.node = part(node);
                s
            })
            .boxed(),
        Template::FatTree | Template::RailOptimized | Template::RailOnly => (
            1u32..=256,
            prop::sample::select(vec![
                "dgx-h100", "hgx-h100", "hgx-h200", "dgx-b200", "dgx-a100",
            ]),
            prop::sample::select(vec![1.0, 2.0, 3.0]),
        )
            .prop_map(move |(n, node, oversubscription)| {
                let mut s = base(n);
                s.node = part(node);
                // Rail-only has no spines to oversubscribe.
                if template != Template::RailOnly {
                    s.oversubscription = oversubscription;
                }
                // Two tiers; specs too big for two are retried at three below.
                s.tiers = 2;
                s
            })
            .boxed(),
        Template::Ring | Template::Chain => (
            2u32..=8,
            prop::sample::select(vec!["mac-studio-m3-ultra", "mac-studio-m2-ultra"]),
        )
            .prop_map(move |(n, node)| {
                let mut s = base(n);
                s.node = part(node);
                s
            })
            .boxed(),
        Template::Mesh => (2u32..=4).prop_map(base).boxed(),
        Template::Nvl72 => (1u32..=8).prop_map(base).boxed(),
    }
}

#[test]
fn every_template_output_passes_the_structural_checks() {
    let catalog = Catalog::builtin();
    for template in Template::ALL {
        let mut runner = TestRunner::new(Config {
            cases: config().cases / 4 + 1,
            ..config()
        });
        // The runner takes an `Fn`, hence cells.
        let built = Cell::new(0usize);
        let retried = Cell::new(0usize);
        runner
            .run(&template_spec(template), |spec| {
                let design = match generate(&spec, &catalog) {
                    Ok(d) => d,
                    // A 2-tier fabric too big for the radix is refused with a reason; that
                    // is the documented behaviour, and the same spec at 3 tiers must build.
                    Err(GenerateError::Infeasible(msg)) if msg.contains("--tiers 3") => {
                        retried.set(retried.get() + 1);
                        let mut three = spec.clone();
                        three.tiers = 3;
                        generate(&three, &catalog)
                            .map_err(|e| TestCaseError::fail(format!("{spec:?} at 3 tiers: {e}")))?
                    }
                    // A ratio asked of a fabric that fits one switch is refused with a reason;
                    // the same spec without it must build.
                    Err(GenerateError::Infeasible(msg)) if msg.contains("no uplinks to thin") => {
                        let mut flat = spec.clone();
                        flat.oversubscription = 1.0;
                        generate(&flat, &catalog)
                            .map_err(|e| TestCaseError::fail(format!("{spec:?} at 1:1: {e}")))?
                    }
                    Err(e) => return Err(TestCaseError::fail(format!("{spec:?}: {e}"))),
                };
                built.set(built.get() + 1);
                prop_assert_eq!(validate(&design), Ok(()), "{:?}", spec);
                let errors: Vec<String> = checks(&design, &catalog)
                    .into_iter()
                    .filter(|c| c.severity == Severity::Error)
                    .map(|c| format!("{}: {}", c.code, c.message))
                    .collect();
                prop_assert!(errors.is_empty(), "{:?}: {:?}", spec, errors);
                let m = evaluate(&design, &catalog);
                prop_assert!(m.bisection.value.gbit_s().is_finite());
                prop_assert!(m.cost.total.0.is_finite() && m.cost.total.0 > 0.0);
                prop_assert!(m.power.0.is_finite() && m.power.0 > 0.0);
                // What the generator made, the file format keeps.
                let text = design_to_string(&design)
                    .map_err(|e| TestCaseError::fail(format!("encode: {e}")))?;
                let loaded = parse_design(&text, "generated.ron")
                    .map_err(|e| TestCaseError::fail(e.to_string()))?;
                prop_assert_eq!(loaded, design);
                Ok(())
            })
            .unwrap_or_else(|e| panic!("{}: {e}", template.cli_name()));
        assert!(
            built.get() > retried.get(),
            "{}: {} of {} specs needed 3 tiers",
            template.cli_name(),
            retried.get(),
            built.get()
        );
    }
}

// ------------------------------------------------------------------ collectives

/// Designs a collective runs on: small templates of every family.
fn collective_design() -> impl Strategy<Value = TemplateSpec> {
    prop_oneof![
        (2u32..=8).prop_map(|n| {
            let mut s = TemplateSpec::new(Template::RailOptimized);
            s.nodes = Some(n);
            s
        }),
        // A 2:1 tree needs leaves to thin: more than the 64 NIC ports one QM9700 holds, so
        // 10 to 16 DGX H100 (up to 8 fit one switch, which `generate` refuses to call 2:1).
        (2u32..=8, prop::sample::select(vec![1.0, 2.0])).prop_map(|(n, o)| {
            let mut s = TemplateSpec::new(Template::FatTree);
            s.nodes = Some(if o > 1.0 { n + 8 } else { n });
            s.oversubscription = o;
            s
        }),
        (2u32..=8).prop_map(|n| {
            let mut s = TemplateSpec::new(Template::RailOnly);
            s.nodes = Some(n);
            s
        }),
        (2u32..=6).prop_map(|n| {
            let mut s = TemplateSpec::new(Template::Star);
            s.nodes = Some(n);
            s
        }),
        (2u32..=4).prop_map(|n| {
            let mut s = TemplateSpec::new(Template::Mesh);
            s.nodes = Some(n);
            s
        }),
        (2u32..=6).prop_map(|n| {
            let mut s = TemplateSpec::new(Template::Ring);
            s.nodes = Some(n);
            s
        }),
        Just(TemplateSpec::new(Template::Single)),
        (1u32..=2).prop_map(|n| {
            let mut s = TemplateSpec::new(Template::Nvl72);
            s.nodes = Some(n);
            s
        }),
    ]
}

fn query() -> impl Strategy<Value = CollectiveQuery> {
    (
        prop::sample::select(Op::ALL.to_vec()),
        prop_oneof![
            4 => Just(AlgoChoice::Auto),
            1 => prop::sample::select(vec![
            AlgoChoice::Ring,
            AlgoChoice::Tree,
            AlgoChoice::Nvls,
            AlgoChoice::Sharp,
            AlgoChoice::Hierarchical,
            AlgoChoice::Direct,
        ]),
        ],
        any::<bool>(),
    )
        .prop_map(|(op, algorithm, adaptive)| {
            let mut q = CollectiveQuery::new(op, Bytes(0));
            q.algorithm = algorithm;
            q.routing = if adaptive {
                Routing::Adaptive
            } else {
                Routing::Ecmp
            };
            q
        })
}

/// Sizes from 1 byte to 16 GiB, not only powers of two.
fn sizes() -> impl Strategy<Value = Vec<Bytes>> {
    prop::collection::vec(prop_oneof![1u64..=1 << 34, Just(0u64), Just(1u64)], 2..=12).prop_map(
        |mut v| {
            v.sort_unstable();
            v.into_iter().map(Bytes).collect()
        },
    )
}

#[test]
fn collective_time_is_monotone_in_bytes_and_busbw_is_bounded() {
    let catalog = Catalog::builtin();
    let mut runner = TestRunner::new(config());
    runner
        .run(
            &(collective_design(), query(), sizes()),
            |(spec, q, sizes)| {
                let design = generate(&spec, &catalog)
                    .map_err(|e| TestCaseError::fail(format!("{spec:?}: {e}")))?;
                // An algorithm this design or op cannot run is refused, which is fine.
                let Ok(results) = sweep_at(&design, &catalog, &q, &sizes) else {
                    return Ok(());
                };
                prop_assert_eq!(results.len(), sizes.len());
                let mut previous: Option<(u64, f64)> = None;
                for r in &results {
                    for v in [
                        r.time_us,
                        r.latency_us,
                        r.bandwidth_us,
                        r.algbw_gbyte_s,
                        r.busbw_gbyte_s,
                    ] {
                        prop_assert!(
                            v.is_finite() && v >= 0.0,
                            "{:?}: not a time or rate: {v}",
                            r
                        );
                    }
                    prop_assert!(r.busbw_bound_gbyte_s.is_finite() && r.busbw_bound_gbyte_s > 0.0);
                    if let Some((bytes, time)) = previous {
                        prop_assert!(
                            r.time_us >= time * (1.0 - 1e-12),
                            "{} of {} B took {} µs, less than {} µs for {} B ({}, {:?})",
                            q.op,
                            r.bytes.0,
                            r.time_us,
                            time,
                            bytes,
                            r.algorithm,
                            spec.template
                        );
                    }
                    previous = Some((r.bytes.0, r.time_us));
                    prop_assert!(
                        r.busbw_gbyte_s <= r.busbw_bound_gbyte_s * (1.0 + 1e-9),
                        "{} {} B by {}: busbw {} GB/s over the bound {} GB/s ({:?})",
                        q.op,
                        r.bytes.0,
                        r.algorithm,
                        r.busbw_gbyte_s,
                        r.busbw_bound_gbyte_s,
                        spec.template
                    );
                }
                Ok(())
            },
        )
        .unwrap();
}

/// Without in-network reduction the bound is the wire: the same run forced onto ring or
/// tree stays under the point-to-point bound, which the in-network algorithms may pass.
#[test]
fn busbw_without_in_network_reduction_stays_under_the_wire() {
    let catalog = Catalog::builtin();
    let mut runner = TestRunner::new(config());
    runner
        .run(
            &(
                collective_design(),
                prop::sample::select(vec![Op::AllReduce, Op::AllGather, Op::ReduceScatter]),
                prop::sample::select(vec![AlgoChoice::Ring, AlgoChoice::Tree]),
                sizes(),
            ),
            |(spec, op, algorithm, sizes)| {
                let design = generate(&spec, &catalog)
                    .map_err(|e| TestCaseError::fail(format!("{spec:?}: {e}")))?;
                let mut q = CollectiveQuery::new(op, Bytes(0));
                q.algorithm = algorithm;
                let Ok(results) = sweep_at(&design, &catalog, &q, &sizes) else {
                    return Ok(());
                };
                for r in results {
                    prop_assert!(!r.algorithm.reduces_in_network());
                    prop_assert!(
                        r.busbw_gbyte_s <= r.busbw_bound_gbyte_s * (1.0 + 1e-9),
                        "{op} by {}: busbw {} over the wire bound {}",
                        r.algorithm,
                        r.busbw_gbyte_s,
                        r.busbw_bound_gbyte_s
                    );
                }
                Ok(())
            },
        )
        .unwrap();
}

/// Links from a trickle to the validator's ceiling, degraded to almost nothing or failed.
fn extreme_link_plan() -> impl Strategy<Value = LinkPlan> {
    (
        0usize..64,
        0usize..64,
        prop::sample::select(vec![1e-300, 1e-9, 1e-3, 1.0, 100.0, 400.0, 1e5]),
        prop_oneof![Just(1u32), Just(4), Just(1024)],
        prop_oneof![
            3 => Just(LinkState::Up),
            1 => Just(LinkState::Failed),
            1 => prop::sample::select(vec![1e-300, 1e-12, 0.5, 1.0])
                .prop_map(|fraction| LinkState::Degraded { fraction }),
        ],
    )
        .prop_map(|(from, offset, gbit_s, lanes, state)| LinkPlan {
            from,
            offset,
            gbit_s,
            lanes,
            state,
        })
}

/// Every number a collective reports is finite, whatever the links carry: a result or a
/// clear error, never NaN or infinity.
#[test]
fn collective_results_are_finite_on_any_fabric() {
    let catalog = Catalog::builtin();
    let fabrics = (
        prop::collection::vec((prop_oneof![Just(1u32), Just(2), Just(8)], 1u32..=2), 1..=6),
        0usize..=2,
        prop::collection::vec(extreme_link_plan(), 2..=16),
    )
        .prop_map(|(nodes, switches, links)| Fabric {
            nodes,
            switches,
            links,
        });
    let (modelled, refused) = (Cell::new(0u32), Cell::new(0u32));
    TestRunner::new(config())
        .run(&(fabrics, query(), sizes()), |(f, q, sizes)| {
            let design = build(&f).design;
            prop_assert!(validate(&design).is_ok());
            let m = evaluate(&design, &catalog);
            prop_assert!(m.bisection.value.gbit_s().is_finite());
            prop_assert!(m.bisection.ratio.is_none_or(f64::is_finite));
            let results = match sweep_at(&design, &catalog, &q, &sizes) {
                Ok(r) => r,
                Err(e) => {
                    prop_assert!(!e.to_string().is_empty());
                    refused.set(refused.get() + 1);
                    return Ok(());
                }
            };
            modelled.set(modelled.get() + 1);
            for r in results {
                let mut numbers = vec![
                    r.time_us,
                    r.latency_us,
                    r.bandwidth_us,
                    r.algbw_gbyte_s,
                    r.busbw_gbyte_s,
                    r.busbw_bound_gbyte_s,
                ];
                numbers.extend(
                    r.bottleneck
                        .iter()
                        .flat_map(|b| [b.utilization, b.time_share]),
                );
                numbers.extend(r.link_utilization.iter().map(|(_, u)| *u));
                numbers.extend(r.device_utilization.iter().map(|(_, u)| *u));
                numbers.extend(r.candidates.iter().map(|c| c.time_us));
                prop_assert!(
                    numbers.iter().all(|v| v.is_finite()),
                    "{} B by {}: {:?}",
                    r.bytes.0,
                    r.algorithm,
                    numbers
                );
            }
            Ok(())
        })
        .unwrap();
    // Refusals are allowed (extreme links cut the GPUs apart, most fabrics here), but the
    // property is about modelled results. About one case in six is modelled (measured over
    // runs: 6 to 19 of 64), so one in thirty-two keeps the property from being vacuous
    // without failing on an unlucky draw.
    assert!(
        modelled.get() * 32 >= modelled.get() + refused.get(),
        "only {} of {} fabrics were modelled",
        modelled.get(),
        modelled.get() + refused.get()
    );
}
