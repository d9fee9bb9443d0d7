#![allow(clippy::needless_range_loop)]
//! Bisection bandwidth against answers worked out by hand, plus a cross-check of the
//! max-flow against petgraph's own Dinic on random networks.

mod common;

use common::design::v1_end;
use petgraph::Graph;
use petgraph::algo::dinics;
use proptest::prelude::*;
use railyard::analysis::bisection::{Bisection, BisectionStatus, bisection, partition_flow};
use railyard::model::{
    Bandwidth, Catalog, Design, Device, DeviceId, DeviceKind, Endpoint, GpuNode, Link, LinkId,
    LinkState, LinkTech, NicSlot, NvSwitchDomain, Port, Pos, ScaleUp, Switch, SwitchFeatures,
    SwitchRole,
};

// ---------------------------------------------------------------------------------------
// Building designs by hand (no generator, no presets)

fn gbit(x: f64) -> Bandwidth {
    Bandwidth::from_gbit_s(x)
}

fn gpu_node(design: &mut Design, name: &str, gpus: u32, nics: usize, x: f32) -> DeviceId {
    design.add_device(Device {
        id: DeviceId(0),
        name: name.into(),
        pos: Pos::new(x, 0.0),
        group: None,
        kind: DeviceKind::GpuNode(GpuNode {
            model: "test-node".into(),
            gpu: "test-gpu".into(),
            gpu_count: gpus,
            scale_up: ScaleUp::NvSwitch {
                generation: 4,
                per_gpu_gbit_s: gbit(3600.0),
            },
            nics: (0..nics)
                .map(|_| NicSlot {
                    part: "test-nic".into(),
                    gpudirect: true,
                })
                .collect(),
            domain: None,
        }),
    })
}

/// A Mac: one unified-memory GPU, no NICs, Thunderbolt ports from port 0.
fn mac(design: &mut Design, name: &str) -> DeviceId {
    design.add_device(Device {
        id: DeviceId(0),
        name: name.into(),
        pos: Pos::default(),
        group: None,
        kind: DeviceKind::GpuNode(GpuNode {
            model: "mac-studio".into(),
            gpu: "m2-ultra".into(),
            gpu_count: 1,
            scale_up: ScaleUp::UnifiedMemory,
            nics: Vec::new(),
            domain: None,
        }),
    })
}

fn switch(design: &mut Design, name: &str, role: SwitchRole, rail: Option<u32>) -> DeviceId {
    design.add_device(Device {
        id: DeviceId(0),
        name: name.into(),
        pos: Pos::new(
            0.0,
            if role == SwitchRole::Leaf {
                100.0
            } else {
                200.0
            },
        ),
        group: None,
        kind: DeviceKind::Switch(Switch {
            model: "test-switch".into(),
            role,
            breakout: 1,
            rail,
            features: SwitchFeatures::default(),
        }),
    })
}

fn link(design: &mut Design, a: (DeviceId, u32), b: (DeviceId, u32), rate: f64) -> LinkId {
    let tech = LinkTech::InfiniBand;
    let (a, b) = (v1_end(design, a, tech), v1_end(design, b, tech));
    design.add_link(Link::new(a, b, tech, gbit(rate)))
}

fn tb4(design: &mut Design, a: (DeviceId, u32), b: (DeviceId, u32)) -> LinkId {
    let tech = LinkTech::Thunderbolt4;
    let (a, b) = (v1_end(design, a, tech), v1_end(design, b, tech));
    design.add_link(Link::new(a, b, tech, gbit(40.0)))
}

fn set_state(design: &mut Design, id: LinkId, state: LinkState) {
    design.link_mut(id).expect("link exists").state = state;
}

/// A two-tier fat-tree: `leaves` leaves with `down` single-NIC nodes each at `rate`, and
/// `spines` spines each linked once to every leaf. Node i hangs off leaf i % leaves, so the
/// id order (and the canvas order) interleaves leaves: a cut along either splits every
/// leaf, and the leaf-aligned worst cut is found by the round-robin stripes (node i in
/// stripe i mod k) among the candidate splits.
fn fat_tree(leaves: usize, down: usize, spines: usize, rate: f64) -> (Design, Vec<LinkId>) {
    let mut d = Design::new("fat-tree");
    let leaf_ids: Vec<DeviceId> = (0..leaves)
        .map(|l| switch(&mut d, &format!("leaf{l}"), SwitchRole::Leaf, None))
        .collect();
    let spine_ids: Vec<DeviceId> = (0..spines)
        .map(|s| switch(&mut d, &format!("spine{s}"), SwitchRole::Spine, None))
        .collect();
    let mut next_port = vec![0u32; leaves];
    for i in 0..leaves * down {
        let node = gpu_node(&mut d, &format!("n{i}"), 1, 1, i as f32 * 10.0);
        let l = i % leaves;
        link(&mut d, (node, 0), (leaf_ids[l], next_port[l]), rate);
        next_port[l] += 1;
    }
    let mut uplinks = Vec::new();
    for (l, &leaf) in leaf_ids.iter().enumerate() {
        for (s, &spine) in spine_ids.iter().enumerate() {
            let port = next_port[l] + s as u32;
            uplinks.push(link(&mut d, (leaf, port), (spine, l as u32), rate));
        }
    }
    (d, uplinks)
}

/// A ring of four Macs over Thunderbolt 4 (40 Gb/s): m0-m1-m2-m3-m0.
fn mac_ring() -> (Design, Vec<LinkId>) {
    let mut d = Design::new("mac ring");
    let m: Vec<DeviceId> = (0..4).map(|i| mac(&mut d, &format!("m{i}"))).collect();
    let links = (0..4)
        .map(|i| tb4(&mut d, (m[i], 0), (m[(i + 1) % 4], 1)))
        .collect();
    (d, links)
}

fn run(design: &Design) -> Bisection {
    let b = bisection(design, &Catalog::default());
    // Whatever the design, nothing may come out NaN or infinite.
    assert!(b.value.is_finite_non_negative(), "{b:?}");
    assert!(b.full.is_finite_non_negative(), "{b:?}");
    if let Some(r) = b.ratio {
        assert!(r.is_finite() && r >= 0.0, "{b:?}");
    }
    // The cut links are the cut: their capacities add up to the value.
    let cut: f64 = b
        .cut_links
        .iter()
        .map(|&id| {
            design
                .link(id)
                .expect("cut link exists")
                .capacity()
                .gbit_s()
        })
        .sum();
    assert!((cut - b.value.gbit_s()).abs() < 1e-6, "cut {cut} vs {b:?}");
    b
}

fn assert_gbit(actual: Bandwidth, expected: f64) {
    assert!(
        (actual.gbit_s() - expected).abs() < 1e-6,
        "expected {expected} Gb/s, got {actual}"
    );
}

fn assert_ratio(b: &Bisection, expected: f64) {
    let r = b.ratio.expect("a ratio");
    assert!(
        (r - expected).abs() < 1e-9,
        "expected ratio {expected}, got {r}"
    );
}

// ---------------------------------------------------------------------------------------
// Known answers

/// Five equal servers on one non-blocking switch, 8 × 400G each: nodes stay whole, so the
/// halves are two and three servers, and the two can send 2 × 3.2 = 6.4 Tb/s, all of which
/// the switch carries. That is full bisection: 100 %, not 6.4 of 8 (half the total). Three
/// servers of a 2:1 fat tree's kind are not (see `fat_tree_three_to_one`).
#[test]
fn an_odd_count_of_whole_nodes_on_one_switch_is_full() {
    let mut d = Design::new("star of 5");
    let sw = switch(&mut d, "sw", SwitchRole::Leaf, None);
    for i in 0..5u32 {
        let n = gpu_node(&mut d, &format!("n{i}"), 8, 8, i as f32 * 100.0);
        for k in 0..8u32 {
            link(&mut d, (n, k), (sw, i * 8 + k), 400.0);
        }
    }
    let b = run(&d);
    assert_gbit(b.value, 6400.0);
    assert_gbit(b.full, 6400.0);
    assert_ratio(&b, 1.0);
}

/// Rail-only: 4 servers of 2 GPUs and 2 NICs, NIC k on rail leaf k, no spine. Halves of two
/// servers: each rail leaf carries its two servers' NIC k across, 2 × 100 Gb/s a rail, so the
/// cut is full (400 of 400), but only because a server forwards between its rails over
/// NVLink: the two leaves never meet in the network, and the bisection says so. A spine that
/// joins them makes it a network of one piece, and the remark goes.
#[test]
fn rail_only_bisection_says_the_rails_meet_inside_the_servers() {
    let mut d = Design::new("rail-only");
    let leaves: Vec<DeviceId> = (0..2u32)
        .map(|k| switch(&mut d, &format!("rail-{k}"), SwitchRole::Leaf, Some(k)))
        .collect();
    for i in 0..4u32 {
        let n = gpu_node(&mut d, &format!("n{i}"), 2, 2, i as f32 * 100.0);
        for (k, &leaf) in leaves.iter().enumerate() {
            link(&mut d, (n, k as u32), (leaf, i), 100.0);
        }
    }
    // A spare switch cabled to nothing is no third rail.
    switch(&mut d, "spare", SwitchRole::Leaf, None);
    let b = run(&d);
    assert_gbit(b.value, 400.0);
    assert_ratio(&b, 1.0);
    assert_eq!(b.switch_islands, 2);
    let remark = b.through_servers().expect("a remark");
    assert!(remark.contains("its 2 groups of switches meet only inside the nodes"));
    let spine = switch(&mut d, "spine", SwitchRole::Spine, None);
    for (k, &leaf) in leaves.iter().enumerate() {
        link(&mut d, (leaf, 8), (spine, k as u32), 100.0);
    }
    let b = run(&d);
    assert_eq!(b.switch_islands, 1);
    assert!(b.through_servers().is_none());
}

#[test]
fn fat_tree_one_to_one() {
    // 8 nodes × 1 NIC × 100G; 2 leaves of 4 down / 4 up; 4 spines, one link to each leaf.
    // Halves of 4 nodes: no half can send more than its 4 NICs (400), and the worst split,
    // leaf 0 against leaf 1, still has 4 uplinks × 100 = 400 through the spines.
    // Full = 8 GPUs / 2 × 100 = 400, ratio 1.
    let (d, _) = fat_tree(2, 4, 4, 100.0);
    let b = run(&d);
    assert_gbit(b.value, 400.0);
    assert_gbit(b.full, 400.0);
    assert_ratio(&b, 1.0);
    assert_eq!(b.cut_links.len(), 4);
    assert_eq!(b.status, BisectionStatus::Ok { exact: true });
}

#[test]
fn fat_tree_three_to_one() {
    // 12 nodes × 100G; 2 leaves of 6 down / 2 up (3:1); 2 spines, one link to each leaf.
    // Leaf 0 against leaf 1: only leaf 0's 2 uplinks cross: 2 × 100 = 200.
    // Full = 12 / 2 × 100 = 600, ratio 1/3.
    let (d, uplinks) = fat_tree(2, 6, 2, 100.0);
    let b = run(&d);
    assert_gbit(b.value, 200.0);
    assert_gbit(b.full, 600.0);
    assert_ratio(&b, 1.0 / 3.0);
    // The cut is one leaf's two uplinks.
    assert_eq!(b.cut_links.len(), 2);
    assert!(b.cut_links.iter().all(|l| uplinks.contains(l)));
}

#[test]
fn fat_tree_three_to_one_found_by_search() {
    // 48 nodes, too many to enumerate: 4 leaves of 12 down / 4 up at 100G, 4 spines.
    // Nodes are interleaved over the leaves by id and on the canvas.
    // Leaves {0,1} against {2,3}: 8 uplinks × 100 = 800 cross. Mixing a leaf's nodes
    // costs more: a leaf with a nodes on one side and b on the other is cut for min(a, b+4)
    // or so, at least 4 unless the leaf is whole. Full = 48 / 2 × 100 = 2400, ratio 1/3.
    let (d, _) = fat_tree(4, 12, 4, 100.0);
    let b = run(&d);
    assert_gbit(b.value, 800.0);
    assert_gbit(b.full, 2400.0);
    assert_ratio(&b, 1.0 / 3.0);
    assert_eq!(b.status, BisectionStatus::Ok { exact: false });
}

#[test]
fn fat_tree_one_to_one_found_by_search() {
    // 32 nodes, 4 leaves of 8 down / 8 up, 8 spines: non-blocking.
    // Any half of 16 nodes sends at most 16 × 100 = 1600 and the fabric carries it.
    let (d, _) = fat_tree(4, 8, 8, 100.0);
    let b = run(&d);
    assert_gbit(b.value, 1600.0);
    assert_ratio(&b, 1.0);
}

/// A scalable unit of `nodes` DGX-like nodes (8 GPUs, 8 NICs at 400G), one leaf per rail.
fn rail_unit(nodes: usize) -> Design {
    let mut d = Design::new("rail SU");
    let leaves: Vec<DeviceId> = (0..8)
        .map(|r| switch(&mut d, &format!("rail{r}"), SwitchRole::Leaf, Some(r)))
        .collect();
    for n in 0..nodes {
        let node = gpu_node(&mut d, &format!("dgx{n}"), 8, 8, n as f32 * 10.0);
        for (r, &leaf) in leaves.iter().enumerate() {
            link(&mut d, (node, r as u32), (leaf, n as u32), 400.0);
        }
    }
    d
}

#[test]
fn rail_optimized_scalable_unit() {
    // 4 nodes × 8 GPUs × 8 NICs of 400G, one leaf per rail, no spine.
    // Two nodes a side: on each rail leaf, 2 NICs send to the other 2: 2 × 400 per rail,
    // × 8 rails = 6,400. Full = 32 GPUs / 2 × 400 (8 × 400 / 8 per GPU) = 6,400, ratio 1.
    let d = rail_unit(4);
    let b = run(&d);
    assert_gbit(b.value, 6400.0);
    assert_gbit(b.full, 6400.0);
    assert_ratio(&b, 1.0);
    assert_eq!(b.cut_links.len(), 16);
}

#[test]
fn rail_optimized_two_to_one_found_by_search() {
    // 4 scalable units × 8 nodes (8 GPUs, 8 NICs at 400G), interleaved by id: node i is in
    // unit i % 4. Each unit has a leaf per rail with 8 down and 4 up (2:1); each rail has
    // 4 spines, each linked once to that rail's leaf in every unit.
    // Units {0,1} against {2,3}: per rail, 2 leaves × 4 uplinks × 400 = 3,200 cross;
    // × 8 rails = 25,600. Full = 256 GPUs / 2 × 400 = 51,200, ratio 1/2.
    let mut d = Design::new("rail 2:1");
    let mut leaf = vec![vec![DeviceId(0); 8]; 4];
    for (u, row) in leaf.iter_mut().enumerate() {
        for (r, l) in row.iter_mut().enumerate() {
            *l = switch(
                &mut d,
                &format!("su{u}-rail{r}"),
                SwitchRole::Leaf,
                Some(r as u32),
            );
        }
    }
    let mut spine = vec![vec![DeviceId(0); 4]; 8];
    for (r, row) in spine.iter_mut().enumerate() {
        for (k, s) in row.iter_mut().enumerate() {
            *s = switch(
                &mut d,
                &format!("rail{r}-spine{k}"),
                SwitchRole::Spine,
                None,
            );
        }
    }
    for i in 0..32 {
        let node = gpu_node(&mut d, &format!("dgx{i}"), 8, 8, i as f32 * 10.0);
        for (r, &rail_leaf) in leaf[i % 4].iter().enumerate() {
            link(&mut d, (node, r as u32), (rail_leaf, (i / 4) as u32), 400.0);
        }
    }
    for (u, unit_leaves) in leaf.iter().enumerate() {
        for (&rail_leaf, rail_spines) in unit_leaves.iter().zip(&spine) {
            for (k, &s) in rail_spines.iter().enumerate() {
                link(&mut d, (rail_leaf, 8 + k as u32), (s, u as u32), 400.0);
            }
        }
    }
    let b = run(&d);
    assert_gbit(b.value, 25_600.0);
    assert_gbit(b.full, 51_200.0);
    assert_ratio(&b, 0.5);
}

#[test]
fn thunderbolt_ring_of_four_macs() {
    // Two Macs a side; the best split takes neighbours, crossing 2 of the 4 links:
    // 2 × 40 = 80. (Taking opposite Macs crosses all 4.) Full: each Mac has 2 × 40 = 80 of
    // links and one GPU, so 4 / 2 × 80 = 160; ratio 1/2.
    let (d, _) = mac_ring();
    let b = run(&d);
    assert_gbit(b.value, 80.0);
    assert_gbit(b.full, 160.0);
    assert_ratio(&b, 0.5);
    assert_eq!(b.cut_links.len(), 2);
}

#[test]
fn degraded_link_lowers_the_ring() {
    // m1-m2 at half rate (20): the split {m0,m1} | {m2,m3} crosses m1-m2 and m3-m0:
    // 20 + 40 = 60; the other neighbour split still crosses 40 + 40 = 80.
    let (mut d, links) = mac_ring();
    set_state(&mut d, links[1], LinkState::Degraded { fraction: 0.5 });
    let b = run(&d);
    assert_gbit(b.value, 60.0);
    // Full counts what the Macs were built with (nominal rates): still 160.
    assert_gbit(b.full, 160.0);
    assert_ratio(&b, 60.0 / 160.0);
}

#[test]
fn failed_link_in_ring_of_four() {
    // m1-m2 failed: {m0,m1} | {m2,m3} is joined by m3-m0 alone: 40. The failed link
    // carries nothing, so it is not listed among the cut links.
    let (mut d, links) = mac_ring();
    set_state(&mut d, links[1], LinkState::Failed);
    let b = run(&d);
    assert_gbit(b.value, 40.0);
    assert_eq!(b.cut_links, vec![links[3]]);
}

#[test]
fn links_at_the_validator_limit_are_not_clamped() {
    // Two single-NIC nodes joined through a switch by two links each, every link at the
    // fastest the validator allows: 1024 lanes × 100,000 Gb/s = 102,400,000 Gb/s. The only
    // split puts one node a side; both of its links cross: 2 × 102,400,000 = 204,800,000 Gb/s,
    // far past 32-bit Mb/s (4,294,967 Gb/s) and the old 1 Pb/s clamp.
    use railyard::model::validate::{MAX_LANE_GBIT_S, MAX_LANES, validate};
    let mut d = Design::new("fastest links");
    let a = gpu_node(&mut d, "a", 1, 2, 0.0);
    let b = gpu_node(&mut d, "b", 1, 2, 10.0);
    let s = switch(&mut d, "s", SwitchRole::Leaf, None);
    for (node, port) in [(a, 0), (a, 1), (b, 0), (b, 1)] {
        let id = link(
            &mut d,
            (node, port),
            (s, port + 2 * node.0),
            MAX_LANE_GBIT_S,
        );
        d.link_mut(id).expect("link exists").lanes = MAX_LANES;
    }
    assert_eq!(validate(&d), Ok(()));
    let b = run(&d);
    assert_gbit(b.value, 204_800_000.0);
    assert_gbit(b.full, 204_800_000.0);
    assert_eq!(b.cut_links.len(), 2);
    assert_eq!(b.status, BisectionStatus::Ok { exact: true });
}

#[test]
fn failed_uplink_in_fat_tree() {
    // The 1:1 fat-tree of 8 nodes with one leaf-0 uplink failed: leaf 0 against leaf 1
    // now has 3 working uplinks: 300. Full is unchanged (400): ratio 3/4.
    let (mut d, uplinks) = fat_tree(2, 4, 4, 100.0);
    set_state(&mut d, uplinks[0], LinkState::Failed);
    let b = run(&d);
    assert_gbit(b.value, 300.0);
    assert_ratio(&b, 0.75);
}

// ---------------------------------------------------------------------------------------
// NVSwitch domains are units

/// `racks` domains of `trays` trays with 4 GPUs and 1 NIC at 400G each; trays are NVLinked
/// to their domain and their NIC goes to one shared leaf.
fn nvl_racks(racks: usize, trays: usize) -> Design {
    let mut d = Design::new("racks");
    let leaf = switch(&mut d, "leaf", SwitchRole::Leaf, None);
    let mut port = 0;
    for r in 0..racks {
        let domain = d.add_device(Device {
            id: DeviceId(0),
            name: format!("nvl{r}"),
            pos: Pos::default(),
            group: None,
            kind: DeviceKind::NvSwitchDomain(NvSwitchDomain {
                model: "gb200-nvl72".into(),
            }),
        });
        for t in 0..trays {
            let tray = gpu_node(&mut d, &format!("nvl{r}-tray{t}"), 4, 1, 0.0);
            if let Some(DeviceKind::GpuNode(n)) = d.device_mut(tray).map(|dev| &mut dev.kind) {
                n.domain = Some(domain);
            }
            d.add_link(Link::new(
                Endpoint::new(tray, Port::NvLink),
                Endpoint::new(domain, Port::Slot(t as u32)),
                LinkTech::NvLink,
                gbit(7200.0),
            ));
            link(&mut d, (tray, 0), (leaf, port), 400.0);
            port += 1;
        }
    }
    d
}

#[test]
fn nvswitch_domains_stay_whole() {
    // Two domains of 2 trays: the only balanced split is rack against rack; rack 0's two
    // NICs cross: 2 × 400 = 800. Splitting trays would put 7,200 Gb/s NVLinks in the cut;
    // they never appear. Full = 16 GPUs / 2 × 100 (400 / 4 per GPU) = 800.
    let d = nvl_racks(2, 2);
    let b = run(&d);
    assert_gbit(b.value, 800.0);
    assert_gbit(b.full, 800.0);
    assert_eq!(b.cut_links.len(), 2);
    for id in &b.cut_links {
        assert_eq!(d.link(*id).map(|l| l.tech), Some(LinkTech::InfiniBand));
    }
}

#[test]
fn one_domain_is_one_unit() {
    let d = nvl_racks(1, 4);
    let b = run(&d);
    assert_eq!(b.status, BisectionStatus::SingleUnit);
    assert_gbit(b.value, 0.0);
    assert_eq!(b.ratio, None);
}

// ---------------------------------------------------------------------------------------
// Degenerate designs: a value of 0 and a status, never NaN or a panic

#[test]
fn empty_design() {
    let b = run(&Design::new("empty"));
    assert_eq!(b.status, BisectionStatus::NoGpus);
    assert_gbit(b.value, 0.0);
    assert_gbit(b.full, 0.0);
    assert_eq!(b.ratio, None);
    assert!(b.cut_links.is_empty());
}

#[test]
fn single_node() {
    let mut d = Design::new("one");
    let n = gpu_node(&mut d, "dgx", 8, 8, 0.0);
    let s = switch(&mut d, "leaf", SwitchRole::Leaf, None);
    link(&mut d, (n, 0), (s, 0), 400.0);
    let b = run(&d);
    assert_eq!(b.status, BisectionStatus::SingleUnit);
    assert_gbit(b.value, 0.0);
    assert_eq!(b.ratio, None);
}

#[test]
fn two_unconnected_nodes() {
    let mut d = Design::new("two");
    gpu_node(&mut d, "a", 8, 0, 0.0);
    gpu_node(&mut d, "b", 8, 0, 10.0);
    let b = run(&d);
    assert_eq!(b.status, BisectionStatus::NoLinks);
    assert_gbit(b.value, 0.0);
    assert_eq!(b.ratio, None);
    assert_eq!(b.status.to_string(), "not connected: no working links");
}

#[test]
fn two_islands() {
    // Two pairs of Macs, each pair cabled, the pairs not: value 0, ratio 0.
    let mut d = Design::new("islands");
    let m: Vec<DeviceId> = (0..4).map(|i| mac(&mut d, &format!("m{i}"))).collect();
    tb4(&mut d, (m[0], 0), (m[1], 0));
    tb4(&mut d, (m[2], 0), (m[3], 0));
    let b = run(&d);
    assert_eq!(b.status, BisectionStatus::NotConnected { islands: 2 });
    assert_gbit(b.value, 0.0);
    assert_eq!(b.ratio, Some(0.0));
}

#[test]
fn only_failed_and_nan_links() {
    let mut d = Design::new("broken");
    let a = mac(&mut d, "a");
    let c = mac(&mut d, "c");
    let dead = tb4(&mut d, (a, 0), (c, 0));
    set_state(&mut d, dead, LinkState::Failed);
    let bad = tb4(&mut d, (a, 1), (c, 1));
    d.link_mut(bad).expect("link").rate_gbit_s = gbit(f64::NAN);
    // A link to a device that does not exist is ignored, not a panic.
    tb4(&mut d, (a, 2), (DeviceId(999), 0));
    let b = run(&d);
    assert_eq!(b.status, BisectionStatus::NoLinks);
    assert_gbit(b.value, 0.0);
    // Full counts the failed cable at its nominal 40 (each Mac was built to send 40), the
    // NaN-rate one as nothing: 2 Macs / 2 × 40 = 40. Nothing crosses: ratio 0.
    assert_gbit(b.full, 40.0);
    assert_eq!(b.ratio, Some(0.0));
    let json = serde_json::to_value(&b).expect("serialises");
    assert_eq!(json["value"], 0.0);
    assert_eq!(json["full"], 40.0);
}

#[test]
fn serialises_to_json() {
    let (d, _) = mac_ring();
    let json = serde_json::to_value(run(&d)).expect("serialises");
    assert_eq!(json["value"], 80.0);
    assert_eq!(json["full"], 160.0);
    assert_eq!(json["ratio"], 0.5);
}

// ---------------------------------------------------------------------------------------
// Cross-checks against petgraph's Dinic

/// Max-flow of one split computed independently: petgraph's `dinics` over a graph with one
/// vertex per device, two opposite arcs per link, and a super-source and super-sink.
/// Capacities in whole Gb/s (the random designs use whole numbers).
fn petgraph_flow(design: &Design, half_a: &[DeviceId], half_b: &[DeviceId]) -> u64 {
    let mut g = Graph::<(), u64>::new();
    let vertex: Vec<_> = design.devices.iter().map(|_| g.add_node(())).collect();
    let at = |id: DeviceId| design.devices.iter().position(|d| d.id == id);
    let source = g.add_node(());
    let sink = g.add_node(());
    for l in &design.links {
        let (Some(a), Some(b)) = (at(l.a.device), at(l.b.device)) else {
            continue;
        };
        let c = l.capacity().gbit_s() as u64;
        g.add_edge(vertex[a], vertex[b], c);
        g.add_edge(vertex[b], vertex[a], c);
    }
    let huge = 1u64 << 40;
    for &id in half_a {
        g.add_edge(source, vertex[at(id).expect("device")], huge);
    }
    for &id in half_b {
        g.add_edge(vertex[at(id).expect("device")], sink, huge);
    }
    dinics(&g, source, sink).0
}

/// A random network: `nodes` single-GPU nodes and `switches` switches, with random links
/// of whole-number capacity (some failed).
fn random_design(nodes: usize, switches: usize, links: &[(usize, usize, u8, bool)]) -> Design {
    let mut d = Design::new("random");
    let total = nodes + switches;
    let ids: Vec<DeviceId> = (0..total)
        .map(|i| {
            if i < nodes {
                gpu_node(&mut d, &format!("n{i}"), 1, 0, i as f32)
            } else {
                switch(&mut d, &format!("s{i}"), SwitchRole::Leaf, None)
            }
        })
        .collect();
    for &(a, b, rate, failed) in links {
        let (a, b) = (a % total, b % total);
        let id = link(&mut d, (ids[a], 0), (ids[b], 0), f64::from(rate) + 1.0);
        if failed {
            set_state(&mut d, id, LinkState::Failed);
        }
    }
    d
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(64))]

    #[test]
    fn split_flow_matches_petgraph(
        nodes in 2usize..10,
        switches in 0usize..6,
        links in prop::collection::vec((0usize..16, 0usize..16, 0u8..200, prop::bool::weighted(0.1)), 0..40),
        split in 1u32..u32::MAX,
    ) {
        let d = random_design(nodes, switches, &links);
        let node_ids: Vec<DeviceId> = d.devices.iter().take(nodes).map(|x| x.id).collect();
        let (a, b): (Vec<_>, Vec<_>) = node_ids.iter().enumerate().partition(|(i, _)| split >> (i % 32) & 1 == 1);
        let a: Vec<DeviceId> = a.into_iter().map(|(_, &id)| id).collect();
        let b: Vec<DeviceId> = b.into_iter().map(|(_, &id)| id).collect();
        prop_assume!(!a.is_empty() && !b.is_empty());
        let ours = partition_flow(&d, &a).expect("both halves have GPUs");
        prop_assert_eq!(ours.gbit_s() as u64, petgraph_flow(&d, &a, &b));
    }

    #[test]
    fn exhaustive_bisection_matches_petgraph_brute_force(
        nodes in 2usize..9,
        switches in 0usize..4,
        links in prop::collection::vec((0usize..12, 0usize..12, 0u8..200, prop::bool::weighted(0.1)), 1..30),
    ) {
        let d = random_design(nodes, switches, &links);
        let b = run(&d);
        prop_assume!(b.status.is_ok());
        // Every split of equal-size (1-GPU) nodes into halves differing by at most one.
        let ids: Vec<DeviceId> = d.devices.iter().take(nodes).map(|x| x.id).collect();
        let mut least = u64::MAX;
        for mask in 0u32..(1 << nodes) {
            if (2 * mask.count_ones() as i64 - nodes as i64).abs() > 1 {
                continue;
            }
            let a: Vec<DeviceId> = (0..nodes).filter(|i| mask >> i & 1 == 1).map(|i| ids[i]).collect();
            let c: Vec<DeviceId> = (0..nodes).filter(|i| mask >> i & 1 == 0).map(|i| ids[i]).collect();
            least = least.min(petgraph_flow(&d, &a, &c));
        }
        prop_assert_eq!(b.value.gbit_s() as u64, least);
    }
}

/// Full meshes of Macs: of each machine's n − 1 cables, ⌈n/2⌉ reach the other half, so four
/// reach 2/3 of full and five 3/4, and the bisection says that is the mesh's construction,
/// not a shortfall. A ring of four is no full mesh and gets no such note; three in a mesh
/// reach full (the smaller half is one machine, all of whose cables cross).
#[test]
fn a_full_mesh_says_its_bisection_is_below_full_by_construction() {
    let mesh = |n: usize| {
        let mut d = Design::new("mesh");
        let m: Vec<DeviceId> = (0..n).map(|i| mac(&mut d, &format!("m{i}"))).collect();
        let mut port = vec![0u32; n];
        for i in 0..n {
            for j in i + 1..n {
                let (pi, pj) = (port[i], port[j]);
                tb4(&mut d, (m[i], pi), (m[j], pj));
                port[i] += 1;
                port[j] += 1;
            }
        }
        run(&d)
    };
    let four = mesh(4);
    assert_ratio(&four, 2.0 / 3.0);
    assert_eq!(
        four.mesh_note.as_deref(),
        Some(
            "a full mesh of 4 machines reaches 67 % of full by construction: of each machine's 3 \
             cables, 2 reach the other half; only a switch or more cables per pair reach more"
        )
    );
    let five = mesh(5);
    assert_ratio(&five, 0.75);
    assert!(five.mesh_note.unwrap().contains("reaches 75 % of full"));
    let three = mesh(3);
    assert_ratio(&three, 1.0);
    assert_eq!(three.mesh_note, None);
    let (ring, _) = mac_ring();
    assert_eq!(run(&ring).mesh_note, None);
    // One cable at half rate puts the cut elsewhere than the mesh's construction: no note.
    let mut d = Design::new("uneven mesh");
    let m: Vec<DeviceId> = (0..4).map(|i| mac(&mut d, &format!("m{i}"))).collect();
    let mut port = [0u32; 4];
    for i in 0..4 {
        for j in i + 1..4 {
            let rate = if (i, j) == (0, 1) { 20.0 } else { 40.0 };
            let tech = LinkTech::Thunderbolt4;
            let (a, b) = (
                v1_end(&d, (m[i], port[i]), tech),
                v1_end(&d, (m[j], port[j]), tech),
            );
            d.add_link(Link::new(a, b, tech, gbit(rate)));
            port[i] += 1;
            port[j] += 1;
        }
    }
    let uneven = run(&d);
    assert!(uneven.ratio.unwrap() < 2.0 / 3.0 - 1e-3, "{uneven:?}");
    assert_eq!(uneven.mesh_note, None);
}
