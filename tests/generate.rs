//! Template output checked against counts worked out by hand, plus structural invariants
//! (no dangling link ends, no port used twice, node ports within the node's ports) on
//! every template.

use railyard::generate::{GenerateError, Template, TemplateSpec, generate};
use railyard::model::{
    Bandwidth, Catalog, Design, DeviceKind, LengthClass, LinkTech, PartId, Port, ScaleUp,
    SwitchRole, Transport,
};
use std::collections::{HashMap, HashSet};

fn catalog() -> Catalog {
    Catalog::builtin()
}

fn spec(template: Template, nodes: u32) -> TemplateSpec {
    let mut s = TemplateSpec::new(template);
    s.nodes = Some(nodes);
    s
}

fn run(s: &TemplateSpec) -> Design {
    match generate(s, &catalog()) {
        Ok(d) => {
            check_structure(&d, &catalog());
            d
        }
        Err(e) => panic!("{} failed: {e}", s.template.cli_name()),
    }
}

fn infeasible(s: &TemplateSpec) -> String {
    match generate(s, &catalog()) {
        Err(GenerateError::Infeasible(msg)) => msg,
        Err(e) => panic!("expected Infeasible, got {e:?}"),
        Ok(_) => panic!("expected {} to be refused", s.template.cli_name()),
    }
}

fn switches(d: &Design, role: SwitchRole) -> Vec<&railyard::model::Device> {
    d.devices
        .iter()
        .filter(|dev| matches!(&dev.kind, DeviceKind::Switch(s) if s.role == role))
        .collect()
}

/// Links between a node and a switch.
fn node_links(d: &Design) -> usize {
    d.links
        .iter()
        .filter(|l| {
            let kinds = [l.a.device, l.b.device].map(|id| d.device(id).map(|x| &x.kind));
            kinds
                .iter()
                .any(|k| matches!(k, Some(DeviceKind::GpuNode(_))))
        })
        .count()
}

/// Every link end on an existing device, no (device, port) used twice, node ports among
/// its NICs and built-in ports, switch ports within ports × breakout, no two devices of a row
/// closer than a device width.
fn check_structure(d: &Design, cat: &Catalog) {
    let mut used = HashSet::new();
    for l in &d.links {
        assert_ne!(l.a.device, l.b.device, "self-loop {:?}", l.id);
        for end in [l.a, l.b] {
            let dev = d
                .device(end.device)
                .unwrap_or_else(|| panic!("link {} dangles at {}", l.id, end.device));
            assert!(
                used.insert((end.device, end.port)),
                "{} {} used twice",
                dev.name,
                end.port
            );
            match &dev.kind {
                DeviceKind::GpuNode(n) => {
                    let spec = cat.node(&n.model).expect("node part");
                    let exists = match end.port {
                        Port::Nic(k) => (k as usize) < n.nics.len(),
                        Port::Thunderbolt(k) => k < spec.thunderbolt_ports,
                        Port::Ethernet(k) => k < spec.builtin_ethernet_ports,
                        Port::NvLink => n.domain.is_some(),
                        other => panic!("{} has a {other}", dev.name),
                    };
                    assert!(exists, "{} has no {}", dev.name, end.port);
                    if l.tech.is_network() && !n.nics.is_empty() {
                        assert!(
                            end.port.nic().is_some(),
                            "{} network link on its {}, not a NIC",
                            dev.name,
                            end.port
                        );
                    }
                }
                DeviceKind::Switch(s) => {
                    let spec = cat.switch(&s.model).expect("switch part");
                    let Port::Switch(k) = end.port else {
                        panic!("{} has a {}", dev.name, end.port);
                    };
                    assert!(
                        k < spec.ports * s.breakout,
                        "{} port {k} ≥ {}",
                        dev.name,
                        spec.ports * s.breakout
                    );
                }
                other => panic!("link to a {}", other.label()),
            }
        }
    }
    let ids: HashSet<_> = d.devices.iter().map(|x| x.id).collect();
    assert_eq!(ids.len(), d.devices.len(), "duplicate device ids");
    let names: HashSet<_> = d.devices.iter().map(|x| x.name.as_str()).collect();
    assert_eq!(names.len(), d.devices.len(), "duplicate device names");
    for dev in &d.devices {
        if let Some(g) = dev.group {
            assert!(d.group(g).is_some(), "{} in a missing group", dev.name);
        }
    }
    let mut rows: HashMap<u32, Vec<f32>> = HashMap::new();
    for dev in &d.devices {
        rows.entry(dev.pos.y.to_bits()).or_default().push(dev.pos.x);
    }
    for xs in rows.values_mut() {
        xs.sort_by(f32::total_cmp);
        for w in xs.windows(2) {
            assert!(
                w[1] - w[0] >= 119.0,
                "devices overlap at x {} and {}",
                w[0],
                w[1]
            );
        }
    }
}

#[test]
fn single_is_one_node_and_no_links() {
    let d = run(&TemplateSpec::new(Template::Single));
    assert_eq!(d.node_count(), 1);
    assert_eq!(d.gpu_count(), 8); // dgx-h100
    assert!(d.links.is_empty());
    let msg = infeasible(&spec(Template::Single, 3));
    assert!(msg.contains("one node"), "{msg}");
}

#[test]
fn star_of_four_workstations() {
    // Default: workstation with 4 × rtx-4090, no NIC, so its on-board 10 GbE port.
    let d = run(&spec(Template::Star, 4));
    assert_eq!(d.switch_count(), 1);
    assert_eq!(d.node_count(), 4);
    assert_eq!(d.gpu_count(), 16);
    assert_eq!(d.links.len(), 4);
    for l in &d.links {
        assert_eq!(l.tech, LinkTech::Ethernet);
        assert_eq!(l.transport, Transport::Tcp);
        assert_eq!(l.rate_gbit_s, Bandwidth::from_gbit_s(10.0));
    }
    // GeForce: PCIe without peer-to-peer.
    let node = d
        .devices
        .iter()
        .find_map(|x| x.kind.as_node())
        .expect("node");
    assert_eq!(
        node.scale_up,
        ScaleUp::Pcie {
            generation: 4,
            via: railyard::model::PcieVia::HostBridge,
            peer_to_peer: false
        }
    );
}

/// A named chassis brings its own GPUs: the PCIe server's eight L40S (peer to peer on PCIe 5),
/// not the workstation's RTX 4090s, and the design's name says which; its on-board 10 GbE
/// reaches the switch. Its cost reads incomplete: the chassis has no public price.
#[test]
fn a_star_of_pcie_servers_holds_their_l40s() {
    let mut s = spec(Template::Star, 4);
    s.node = Some(PartId::new("pcie-server-8gpu"));
    let d = run(&s);
    assert_eq!(d.gpu_count(), 32);
    assert!(
        d.devices
            .iter()
            .filter_map(|x| x.kind.as_node())
            .all(|n| n.gpu.as_str() == "l40s")
    );
    assert_eq!(d.name, "star: 4 × pcie-server-8gpu with 8 × l40s");
    assert!(
        d.links
            .iter()
            .all(|l| l.tech == LinkTech::Ethernet && l.rate_gbit_s == Bandwidth::from_gbit_s(10.0))
    );
    let m = railyard::analysis::metrics::evaluate(&d, &catalog());
    assert_eq!(
        m.cost_gap().as_deref(),
        Some("`pcie-server-8gpu` has no price in the catalog (counted at $0)")
    );
    assert!(!m.parts_unknown());
    // The workstation's star is whole.
    let m = railyard::analysis::metrics::evaluate(&run(&spec(Template::Star, 4)), &catalog());
    assert_eq!(m.cost_gap(), None);
}

#[test]
fn star_refuses_when_the_switch_is_too_small() {
    // crs317: 16 × 10G; 20 nodes need 20 ports.
    let mut s = spec(Template::Star, 20);
    s.switch = Some(PartId::new("crs317-16x10g"));
    let msg = infeasible(&s);
    assert!(msg.contains("20") && msg.contains("16"), "{msg}");
}

/// A switch named without a NIC: a node whose own NIC does not speak the switch's network
/// takes the catalog's NIC of that network at its own rate, and the notes say so; a NIC named
/// that does not speak it is still refused, as asked.
#[test]
fn a_named_switch_brings_nics_of_its_network() {
    let mut s = spec(Template::RailOptimized, 32);
    s.node = Some(PartId::new("dgx-h100"));
    s.switch = Some(PartId::new("sn5600"));
    let d = run(&s);
    let nics: Vec<&str> = d
        .devices
        .iter()
        .filter_map(|x| x.kind.as_node())
        .flat_map(|n| n.nics.iter().map(|slot| slot.part.as_str()))
        .collect();
    assert_eq!(nics.len(), 256);
    assert!(nics.iter().all(|&p| p == "cx7-400gbe"), "{nics:?}");
    assert!(
        d.notes
            .contains("NICs: `cx7-400gbe` in place of the node's own `cx7-ndr-400`"),
        "{}",
        d.notes
    );
    assert!(d.links.iter().all(|l| l.tech == LinkTech::RoceV2));
    // InfiniBand switches keep the node's own NICs, and say nothing.
    s.switch = Some(PartId::new("qm9700"));
    let ib = run(&s);
    assert!(!ib.notes.contains("in place of"), "{}", ib.notes);
    // Named, a NIC of the other network is refused.
    s.nic = Some(PartId::new("cx7-400gbe"));
    assert!(infeasible(&s).contains("share no network family"));
}

#[test]
fn star_of_h100_on_400g_roce() {
    // 4 hgx-h100 × 8 cx7-400gbe = 32 ports; sn5600 is 64 × 800G, split 2 → 128 × 400G.
    let mut s = spec(Template::Star, 4);
    s.node = Some(PartId::new("hgx-h100"));
    s.nic = Some(PartId::new("cx7-400gbe"));
    s.switch = Some(PartId::new("sn5600"));
    let d = run(&s);
    assert_eq!(d.links.len(), 32);
    assert_eq!(d.gpu_count(), 32);
    let sw = d
        .devices
        .iter()
        .find_map(|x| x.kind.as_switch())
        .expect("switch");
    assert_eq!(sw.breakout, 2);
    assert!(sw.features.lossless);
    for l in &d.links {
        assert_eq!(l.tech, LinkTech::RoceV2);
        assert_eq!(l.rate_gbit_s, Bandwidth::from_gbit_s(400.0));
    }
}

#[test]
fn fat_tree_32_dgx_non_blocking() {
    // 32 × 8 NICs = 256 endpoints at 400G; qm9700 has 64 ports → 32 down / 32 up.
    // 4 nodes per leaf → 8 leaves; 8 × 32 = 256 uplinks / 64 ports = 4 spines, each taking
    // 8 links from each of the 8 leaves. Links: 256 node + 256 leaf-spine.
    let d = run(&spec(Template::FatTree, 32));
    let leaves = switches(&d, SwitchRole::Leaf);
    let spines = switches(&d, SwitchRole::Spine);
    assert_eq!(leaves.len(), 8);
    assert_eq!(spines.len(), 4);
    assert_eq!(node_links(&d), 256);
    assert_eq!(d.links.len(), 512);
    // Leaf-01 to spine-01: 8 parallel links.
    let (l1, s1) = (leaves[0].id, spines[0].id);
    let between = d
        .links
        .iter()
        .filter(|l| l.touches(l1) && l.touches(s1))
        .count();
    assert_eq!(between, 8);
    for l in &d.links {
        assert_eq!(l.tech, LinkTech::InfiniBand);
        let to_spine = l.touches(s1) || spines.iter().any(|s| l.touches(s.id));
        let expected = if to_spine {
            LengthClass::CrossRack
        } else {
            LengthClass::InRack
        };
        assert_eq!(l.length, expected);
    }
}

#[test]
fn fat_tree_32_dgx_three_to_one() {
    // 3:1 → down = round(64 × 3/4) = 48, up = 16. 6 nodes per leaf → 6 leaves, the last
    // with 2 nodes = 16 ports down. Uplinks: 5 × 16 + ceil(16 × 16 / 48) = 80 + 6 = 86,
    // so ceil(86 / 64) = 2 spines (the 1:1 tree needs 4).
    let mut s = spec(Template::FatTree, 32);
    s.oversubscription = 3.0;
    let d = run(&s);
    assert_eq!(switches(&d, SwitchRole::Leaf).len(), 6);
    assert_eq!(switches(&d, SwitchRole::Spine).len(), 2);
    assert_eq!(d.links.len(), 256 + 86);
    // A rack holds 4 DGX (42 kW / 10 kW) and the racks fill in order, so a full leaf's 6
    // nodes span two racks and the leaf stands in the one with 4 of them: 32 in-rack links
    // and 16 cross-rack per full leaf; the last leaf's 2 nodes are in its own rack.
    let in_rack = d
        .links
        .iter()
        .filter(|l| l.length == LengthClass::InRack)
        .count();
    assert_eq!(in_rack, 5 * 32 + 16);
}

/// Racks of the design: each rack group's name and the nodes and leaves in it.
fn racks(d: &Design) -> Vec<(String, usize, usize)> {
    d.groups
        .iter()
        .filter(|g| g.kind == railyard::model::GroupKind::Rack)
        .map(|g| {
            let inside = |leaf: bool| {
                d.devices
                    .iter()
                    .filter(|dev| dev.group == Some(g.id))
                    .filter(|dev| match &dev.kind {
                        DeviceKind::GpuNode(_) => !leaf,
                        DeviceKind::Switch(s) => leaf && s.role == SwitchRole::Leaf,
                        _ => false,
                    })
                    .count()
            };
            (g.name.clone(), inside(false), inside(true))
        })
        .collect()
}

#[test]
fn a_two_to_one_fat_tree_fills_its_racks() {
    // 2:1 → down = round(64 × 2/3) = 43: 5 DGX (40 ports) per leaf, 13 leaves for 64.
    // Racks of 4 DGX fill in order: 16 racks, not a rack of 4 and a rack of 1 per leaf.
    let mut s = spec(Template::FatTree, 64);
    s.oversubscription = 2.0;
    let d = run(&s);
    assert_eq!(switches(&d, SwitchRole::Leaf).len(), 13);
    let racks = racks(&d);
    assert_eq!(racks.len(), 16);
    assert!(racks.iter().all(|&(_, nodes, _)| nodes == 4), "{racks:?}");
    // Each leaf stands in the rack holding most of its nodes (rack k holds nodes 4k-3 to
    // 4k): leaf 1 (nodes 1-5) in rack 1; leaf 2 (nodes 6-10: 3 in rack 2, 2 in rack 3) in
    // rack 2; leaf 3 (nodes 11-15: 2 in rack 3, 3 in rack 4) in rack 4; leaf 4 (nodes
    // 16-20: 1 in rack 4, 4 in rack 5) in rack 5. Rack 3 holds none; no rack holds two.
    let leaves: Vec<&str> = racks
        .iter()
        .filter(|r| r.2 == 1)
        .map(|r| r.0.as_str())
        .collect();
    assert_eq!(leaves.len(), 13);
    assert!(racks.iter().all(|r| r.2 <= 1));
    assert_eq!(leaves[..4], ["rack-01", "rack-02", "rack-04", "rack-05"]);
}

/// 16 DGX at 2:1 need 4 leaves of room for 5 (43 down ports): shared out 4/4/4/4, each leaf
/// 32 NIC links down and ceil(32 × 21 / 43) = 16 up, so the bisection is half of full, as
/// "2:1" says. Filling leaves in order gave 5/5/5/1 and 62.5 %: the last leaf's one node had
/// 4 uplinks to itself.
#[test]
fn a_fat_tree_shares_its_nodes_out_evenly_over_the_leaves_it_needs() {
    use railyard::analysis::bisection::bisection;
    let mut s = spec(Template::FatTree, 16);
    s.oversubscription = 2.0;
    let d = run(&s);
    let leaves = switches(&d, SwitchRole::Leaf);
    assert_eq!(leaves.len(), 4);
    for leaf in leaves.iter().map(|l| l.id) {
        let links = |node_side: bool| {
            d.links
                .iter()
                .filter(|l| l.a.device == leaf || l.b.device == leaf)
                .filter(|l| {
                    let other = if l.a.device == leaf {
                        l.b.device
                    } else {
                        l.a.device
                    };
                    d.device(other)
                        .is_some_and(|o| matches!(o.kind, DeviceKind::GpuNode(_)) == node_side)
                })
                .count()
        };
        assert_eq!((links(true), links(false)), (32, 16));
    }
    let b = bisection(&d, &catalog());
    let ratio = b.ratio.expect("a ratio");
    assert!((ratio - 0.5).abs() < 1e-9, "{b:?}");
}

#[test]
fn oversubscription_below_one_or_without_uplinks_is_refused() {
    let mut s = spec(Template::FatTree, 64);
    s.oversubscription = 0.5;
    assert!(infeasible(&s).contains("more uplinks than downlinks"));
    let mut s = spec(Template::Star, 4);
    s.oversubscription = 2.0;
    assert!(infeasible(&s).contains("no leaf uplinks"));
    // 4 DGX H100 bring 32 NIC ports, which one 64-port QM9700 holds: a fat tree of one switch
    // has nothing to thin, and a design named "2:1" would be non-blocking.
    let mut s = spec(Template::FatTree, 4);
    s.oversubscription = 2.0;
    assert_eq!(
        infeasible(&s),
        "all 32 NIC ports fit one 64-port `qm9700`, which has no uplinks to thin: \
         --oversubscription 2 (2:1) applies once the NICs need leaves and spines (more than 64 \
         ports); leave it at 1, or add nodes"
    );
    s.oversubscription = 1.0;
    assert_eq!(
        run(&s)
            .devices
            .iter()
            .filter(|d| d.kind.as_switch().is_some())
            .count(),
        1
    );
}

#[test]
fn fat_tree_spreads_a_node_over_leaves_when_its_nics_outnumber_down_ports() {
    // crs317: 16 × 10G → 8 down / 8 up. 4 workstations × 12 x710 NICs = 48 NIC ports in
    // order over 6 leaves of 8; node-01's NICs 0-7 on leaf-01 and 8-11 on leaf-02.
    // 6 × 8 = 48 uplinks / 16 ports = 3 spines. Links: 48 + 48.
    let mut s = spec(Template::FatTree, 4);
    s.node = Some(PartId::new("workstation"));
    s.nic = Some(PartId::new("x710-10gbe"));
    s.nics_per_node = Some(12);
    s.switch = Some(PartId::new("crs317-16x10g"));
    let d = run(&s);
    let leaves = switches(&d, SwitchRole::Leaf);
    assert_eq!(leaves.len(), 6);
    assert_eq!(switches(&d, SwitchRole::Spine).len(), 3);
    assert_eq!(d.links.len(), 96);
    let node1 = d
        .devices
        .iter()
        .find(|x| x.name == "node-01")
        .expect("node-01")
        .id;
    let on = |leaf: usize| {
        d.links
            .iter()
            .filter(|l| l.touches(node1) && l.touches(leaves[leaf].id))
            .count()
    };
    assert_eq!((on(0), on(1)), (8, 4));
    assert!(d.links.iter().all(|l| l.tech == LinkTech::Ethernet));
}

#[test]
fn fat_tree_that_fits_one_switch_has_no_spines() {
    // 4 dgx × 8 = 32 ports ≤ 64.
    let d = run(&spec(Template::FatTree, 4));
    assert_eq!(d.switch_count(), 1);
    assert_eq!(d.links.len(), 32);
}

#[test]
fn fat_tree_two_tier_limit_is_radix_squared_over_two() {
    // 64²/2 = 2048 endpoints = 256 dgx-h100: 64 leaves, 2048 uplinks / 64 = 32 spines.
    let d = run(&spec(Template::FatTree, 256));
    assert_eq!(switches(&d, SwitchRole::Leaf).len(), 64);
    assert_eq!(switches(&d, SwitchRole::Spine).len(), 32);
    assert_eq!(d.links.len(), 4096);
    // One more node is 2056 endpoints.
    let msg = infeasible(&spec(Template::FatTree, 257));
    assert!(msg.contains("2048") && msg.contains("2056"), "{msg}");
    assert!(msg.contains("--tiers 3"), "{msg}");
}

#[test]
fn fat_tree_three_tiers() {
    // 512 dgx = 4096 endpoints: 128 leaves of 4 nodes. A pod spine gives 32 ports to
    // leaves, so 32 leaves per pod → 4 pods; per pod 32 × 32 = 1024 uplinks / 32 = 32
    // spines (128 in all), each with 32 uplinks: 4096 / 64 = 64 core switches.
    let mut s = spec(Template::FatTree, 512);
    s.tiers = 3;
    let d = run(&s);
    assert_eq!(switches(&d, SwitchRole::Leaf).len(), 128);
    assert_eq!(switches(&d, SwitchRole::Spine).len(), 128);
    assert_eq!(switches(&d, SwitchRole::Core).len(), 64);
    assert_eq!(d.links.len(), 3 * 4096);
    let pods = d
        .groups
        .iter()
        .filter(|g| g.kind == railyard::model::GroupKind::Pod)
        .count();
    assert_eq!(pods, 4);
}

#[test]
fn rail_optimized_scalable_unit() {
    // 32 dgx-h100, qm9700: one unit of 32 nodes, 8 rail leaves with 32 down each;
    // 8 × 32 = 256 uplinks / 64 = 4 spines.
    let d = run(&spec(Template::RailOptimized, 32));
    let leaves = switches(&d, SwitchRole::Leaf);
    assert_eq!(leaves.len(), 8);
    let mut rails: Vec<u32> = leaves
        .iter()
        .filter_map(|l| l.kind.as_switch().and_then(|s| s.rail))
        .collect();
    rails.sort_unstable();
    assert_eq!(rails, (0..8).collect::<Vec<u32>>());
    assert_eq!(switches(&d, SwitchRole::Spine).len(), 4);
    assert_eq!(node_links(&d), 256);
    assert_eq!(d.links.len(), 512);
    // NIC k of every node lands on the rail-k leaf.
    for l in &d.links {
        let (node_end, sw_end) = match (d.device(l.a.device), d.device(l.b.device)) {
            (Some(a), Some(b)) if a.kind.as_node().is_some() => (l.a, b),
            _ => continue,
        };
        let rail = sw_end.kind.as_switch().and_then(|s| s.rail);
        assert_eq!(rail, node_end.port.nic());
    }
}

#[test]
fn rail_optimized_two_tier_limit() {
    // qm9700 at 1:1: a spine reaches 64 leaves = 8 units of 8 rails × 32 nodes = 256 nodes.
    let d = run(&spec(Template::RailOptimized, 256));
    assert_eq!(switches(&d, SwitchRole::Leaf).len(), 64);
    assert_eq!(switches(&d, SwitchRole::Spine).len(), 32);
    let msg = infeasible(&spec(Template::RailOptimized, 257));
    assert!(msg.contains("256 nodes"), "{msg}");
}

#[test]
fn rail_optimized_131072_gpus_on_q3400_three_tiers() {
    // 16,384 dgx-h100 × 8 NICs. q3400: 144 × 800G split 2 → 288 × 400G; leaves 144/144.
    // Units: ceil(16384 / 144) = 114 (113 full, one of 112) → 912 rail leaves.
    // Pod spine: 144 ports down → 18 units (144 leaves) per pod → 7 pods, the last with 6
    // units (48 leaves). Pod spines: 6 × (144 × 144 / 144) + ceil((40 × 144 + 8 × 112) / 144)
    // = 6 × 144 + ceil(6656 / 144) = 864 + 47 = 911. Uplinks to the core: 131,072 / 288 →
    // 456 core switches. Links: 131,072 per tier × 3.
    let mut s = spec(Template::RailOptimized, 16_384);
    s.switch = Some(PartId::new("q3400"));
    s.tiers = 3;
    let d = generate(&s, &catalog()).expect("131,072 GPUs on q3400");
    check_structure(&d, &catalog());
    assert_eq!(d.gpu_count(), 131_072);
    assert_eq!(switches(&d, SwitchRole::Leaf).len(), 912);
    assert_eq!(switches(&d, SwitchRole::Spine).len(), 911);
    assert_eq!(switches(&d, SwitchRole::Core).len(), 456);
    assert_eq!(d.links.len(), 3 * 131_072);
}

#[test]
fn rail_optimized_131072_gpus_do_not_fit_three_tiers_of_qm9700() {
    // Radix 64: at most 64 pods × 32 leaves × 32 ports = 65,536 NIC ports.
    let mut s = spec(Template::RailOptimized, 16_384);
    s.tiers = 3;
    let msg = infeasible(&s);
    assert!(msg.contains("65536") && msg.contains("131072"), "{msg}");
}

#[test]
fn rail_only_one_switch_per_rail() {
    let mut s = spec(Template::RailOnly, 32);
    s.tiers = 1;
    let d = run(&s);
    assert_eq!(switches(&d, SwitchRole::Leaf).len(), 8);
    assert_eq!(switches(&d, SwitchRole::Spine).len(), 0);
    assert_eq!(d.links.len(), 256);
}

#[test]
fn rail_only_beyond_one_switch() {
    // 128 nodes > 64 ports: with --tiers 1 refused; by default each rail gets its own
    // 2-tier Clos: 4 leaves per rail (32 down), 4 × 32 = 128 uplinks / 64 = 2 spines per
    // rail → 32 leaves, 16 spines, 1024 + 1024 links.
    let mut s = spec(Template::RailOnly, 128);
    s.tiers = 1;
    let msg = infeasible(&s);
    assert!(msg.contains("128") && msg.contains("64"), "{msg}");
    s.tiers = 2;
    let d = run(&s);
    assert_eq!(switches(&d, SwitchRole::Leaf).len(), 32);
    assert_eq!(switches(&d, SwitchRole::Spine).len(), 16);
    assert_eq!(d.links.len(), 2048);
    // A rail spine connects only to leaves of its own rail.
    for l in &d.links {
        let rails: Vec<Option<u32>> = [l.a.device, l.b.device]
            .iter()
            .filter_map(|&id| d.device(id))
            .filter_map(|dev| dev.kind.as_switch())
            .filter(|s| s.role == SwitchRole::Leaf)
            .map(|s| s.rail)
            .collect();
        let spine_name = [l.a.device, l.b.device]
            .iter()
            .filter_map(|&id| d.device(id))
            .find(|dev| dev.name.starts_with("spine-r"))
            .map(|dev| dev.name.clone());
        if let (Some(name), [Some(rail)]) = (spine_name, rails.as_slice()) {
            assert!(name.starts_with(&format!("spine-r{rail}-")), "{name}");
        }
    }
}

#[test]
fn ring_mesh_chain_of_macs() {
    let d = run(&spec(Template::Ring, 4));
    assert_eq!(d.links.len(), 4);
    assert!(d.links.iter().all(|l| l.tech == LinkTech::Thunderbolt4));
    assert_eq!(d.switch_count(), 0);
    assert_eq!(run(&spec(Template::Mesh, 4)).links.len(), 6);
    assert_eq!(run(&spec(Template::Chain, 4)).links.len(), 3);
    // 7 Macs in a full mesh use 6 ports each: exactly what an M2 Ultra has.
    assert_eq!(run(&spec(Template::Mesh, 7)).links.len(), 21);
}

#[test]
fn mesh_of_eight_m2_ultras_exceeds_the_thunderbolt_ports() {
    let msg = infeasible(&spec(Template::Mesh, 8));
    assert!(msg.contains("7 Thunderbolt ports"), "{msg}");
    assert!(msg.contains("has 6"), "{msg}");
}

#[test]
fn mesh_of_four_m3_ultras_over_tb5() {
    let mut s = spec(Template::Mesh, 4);
    s.node = Some(PartId::new("mac-studio-m3-ultra"));
    s.transport = Some(Transport::Rdma);
    let d = run(&s);
    assert_eq!(d.links.len(), 6);
    for l in &d.links {
        assert_eq!(l.tech, LinkTech::Thunderbolt5);
        assert_eq!(l.rate_gbit_s, Bandwidth::from_gbit_s(80.0));
        assert_eq!(l.transport, Transport::Rdma);
    }
    assert!(!d.notes.contains("--transport rdma"), "{}", d.notes);
    // Without a transport, Thunderbolt 5 carries TCP, and the notes say how JACCL's RDMA
    // would be had.
    let mut s = spec(Template::Mesh, 4);
    s.node = Some(PartId::new("mac-studio-m3-ultra"));
    let d = run(&s);
    assert!(d.links.iter().all(|l| l.transport == Transport::Tcp));
    assert!(
        d.notes.contains("with RDMA turned on (macOS 26.2 or later")
            && d.notes.contains("--transport rdma"),
        "{}",
        d.notes
    );
    // RDMA over Thunderbolt 4 is refused.
    let mut s = spec(Template::Ring, 4);
    s.transport = Some(Transport::Rdma);
    assert!(infeasible(&s).contains("Thunderbolt 5"));
}

#[test]
fn pair_of_workstations_on_a_25g_dac() {
    let mut s = spec(Template::Chain, 2);
    s.node = Some(PartId::new("workstation"));
    s.gpu = Some(PartId::new("rtx-4090"));
    s.gpus_per_node = Some(4);
    s.nic = Some(PartId::new("cx4lx-25gbe"));
    s.link = Some(PartId::new("dac-25g"));
    let d = run(&s);
    assert_eq!(d.links.len(), 1);
    assert_eq!(d.gpu_count(), 8);
    let l = &d.links[0];
    assert_eq!(l.tech, LinkTech::RoceV2);
    assert_eq!(l.rate_gbit_s, Bandwidth::from_gbit_s(25.0));
    assert_eq!((l.a.port, l.b.port), (Port::Nic(0), Port::Nic(0)));
    // GeForce cards: no GPUDirect RDMA on the NIC slot.
    let node = d.devices[0].kind.as_node().expect("node");
    assert!(!node.nics[0].gpudirect);
}

/// Two 8-NIC HGX H100 servers back to back: every NIC is a rail, so all eight are cabled,
/// NIC k to NIC k (8 × 400 Gb/s = 3.2 Tb/s between them), not NIC 0 alone with seven left
/// uncabled. A chain of three shares the middle server's eight between its two neighbours.
#[test]
fn servers_back_to_back_cable_every_nic() {
    let mut s = spec(Template::Chain, 2);
    s.node = Some(PartId::new("hgx-h100"));
    s.nic = Some(PartId::new("cx7-400gbe"));
    s.nics_per_node = Some(8);
    s.link = Some(PartId::new("dac-400g"));
    let d = run(&s);
    assert_eq!(d.links.len(), 8);
    for (k, l) in d.links.iter().enumerate() {
        assert_eq!(
            (l.a.port, l.b.port),
            (Port::Nic(k as u32), Port::Nic(k as u32))
        );
    }
    s.nodes = Some(3);
    assert_eq!(run(&s).links.len(), 8);
}

#[test]
fn nvl72_two_racks() {
    // 2 racks × 18 trays × 4 GPUs = 144 GPUs; 36 trays ≤ 64 ports, so one leaf per rail:
    // 4 leaves, 36 × 4 = 144 links, no spines.
    let d = run(&spec(Template::Nvl72, 2));
    let domains: Vec<_> = d
        .devices
        .iter()
        .filter(|x| matches!(x.kind, DeviceKind::NvSwitchDomain(_)))
        .collect();
    assert_eq!(domains.len(), 2);
    assert_eq!(d.node_count(), 36);
    assert_eq!(d.gpu_count(), 144);
    for dom in &domains {
        let members = d
            .devices
            .iter()
            .filter(|x| x.kind.as_node().and_then(|n| n.domain) == Some(dom.id))
            .count();
        assert_eq!(members, 18);
    }
    assert_eq!(switches(&d, SwitchRole::Leaf).len(), 4);
    assert_eq!(switches(&d, SwitchRole::Spine).len(), 0);
    assert_eq!(d.links.len(), 144);
}

#[test]
fn nvl72_four_racks_need_spines() {
    // 72 trays > 64: leaves split 32/32; a rack's 18 trays fit 32 ports, one rack per set;
    // 4 sets × 4 rails = 16 leaves of 18 trays, 18 uplinks each = 288 / 64 → 5 spines.
    let d = run(&spec(Template::Nvl72, 4));
    assert_eq!(d.gpu_count(), 288);
    assert_eq!(switches(&d, SwitchRole::Leaf).len(), 16);
    assert_eq!(switches(&d, SwitchRole::Spine).len(), 5);
    assert_eq!(d.links.len(), 288 + 288);
}

#[test]
fn parts_are_checked() {
    let mut s = spec(Template::FatTree, 8);
    s.node = Some(PartId::new("no-such-node"));
    assert_eq!(
        generate(&s, &catalog()),
        Err(GenerateError::UnknownPart {
            id: PartId::new("no-such-node"),
            like: Vec::new()
        })
    );
    // A shortened id names the parts it could mean.
    s.node = Some(PartId::new("mac-studio-m3"));
    let why = generate(&s, &catalog()).unwrap_err().to_string();
    assert!(
        why.starts_with(
            "unknown part `mac-studio-m3` (did you mean `mac-studio-m3-ultra` or \
             `mac-studio-m3-ultra-256gb`?): "
        ),
        "{why}"
    );
    s.node = Some(PartId::new("qm9700"));
    assert!(matches!(
        generate(&s, &catalog()),
        Err(GenerateError::WrongKind {
            expected: "node",
            ..
        })
    ));
    let mut s = spec(Template::FatTree, 8);
    s.switch = Some(PartId::new("cx7-400gbe"));
    assert!(matches!(
        generate(&s, &catalog()),
        Err(GenerateError::WrongKind {
            expected: "switch",
            ..
        })
    ));
    // An InfiniBand NIC named for an Ethernet switch shares no family.
    let mut s = spec(Template::FatTree, 8);
    s.switch = Some(PartId::new("sn5600"));
    s.nic = Some(PartId::new("cx7-ndr-400"));
    assert!(infeasible(&s).contains("no network family"));
    // A DGX cannot take other GPUs.
    let mut s = spec(Template::Single, 1);
    s.gpu = Some(PartId::new("rtx-4090"));
    assert!(infeasible(&s).contains("workstation"));
}

#[test]
fn workstation_with_nvlink_bridges() {
    let mut s = spec(Template::Single, 1);
    s.node = Some(PartId::new("workstation"));
    s.gpu = Some(PartId::new("rtx-3090"));
    s.gpus_per_node = Some(2);
    s.nvlink_bridge = true;
    let d = run(&s);
    let node = d.devices[0].kind.as_node().expect("node");
    assert_eq!(
        node.scale_up,
        ScaleUp::NvLinkBridgePairs {
            per_gpu_gbit_s: Bandwidth::from_gbit_s(450.0),
            pcie_generation: 4,
            peer_to_peer: false
        }
    );
    s.gpu = Some(PartId::new("rtx-4090"));
    assert!(infeasible(&s).contains("no NVLink bridge"));
}

#[test]
fn bad_numbers_are_refused_not_panicked_on() {
    let mut s = spec(Template::FatTree, 32);
    s.oversubscription = f64::NAN;
    assert!(infeasible(&s).contains("oversubscription"));
    s.oversubscription = 1.0;
    s.tiers = 7;
    assert!(infeasible(&s).contains("tiers"));
    assert!(infeasible(&spec(Template::Star, 0)).contains("at least 1"));
    assert!(infeasible(&spec(Template::Ring, 1)).contains("at least 2"));
    assert!(infeasible(&spec(Template::Star, u32::MAX)).contains("more than"));
}

#[test]
fn every_template_has_a_sound_default() {
    for t in Template::ALL {
        let d = run(&TemplateSpec::new(t));
        assert!(d.node_count() >= 1, "{}", t.cli_name());
        assert!(!d.notes.is_empty());
    }
}

mod props {
    use super::*;
    use proptest::prelude::*;

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(48))]

        #[test]
        fn fabrics_are_sound_at_any_size(
            nodes in 1u32..400,
            which in 0usize..4,
            ratio in prop::sample::select(vec![1.0, 2.0, 3.0, 0.5]),
            tiers in 2u8..=3,
            nics in 1u32..9,
        ) {
            let template = [Template::FatTree, Template::RailOptimized, Template::RailOnly, Template::Nvl72][which];
            let mut s = spec(template, if template == Template::Nvl72 { nodes / 20 + 1 } else { nodes });
            s.oversubscription = ratio;
            s.tiers = if template == Template::RailOnly { 2 } else { tiers };
            s.nics_per_node = Some(nics);
            match generate(&s, &catalog()) {
                Ok(d) => {
                    check_structure(&d, &catalog());
                    let nic_ports: usize = d.devices.iter().filter_map(|x| x.kind.as_node()).map(|n| n.nics.len()).sum();
                    prop_assert_eq!(node_links(&d), nic_ports);
                }
                Err(GenerateError::Infeasible(msg)) => prop_assert!(!msg.is_empty()),
                Err(e) => prop_assert!(false, "unexpected {e:?}"),
            }
        }
    }
}

#[test]
fn a_request_over_the_gpu_limit_is_refused_before_building() {
    // 262,144 eight-GPU nodes are 2,097,152 GPUs, just over the 2,000,000 limit; the node
    // count alone is within bounds, so only the GPU check can refuse it.
    for template in [Template::FatTree, Template::RailOptimized, Template::Ring] {
        let mut s = spec(template, 262_144);
        s.node = Some(PartId::new("dgx-h100"));
        let message = infeasible(&s);
        assert!(
            message.contains("2097152 GPUs") && message.contains("over the limit"),
            "{}: {message}",
            template.cli_name()
        );
    }
}

/// 2,048 DGX in 16 pods of 128 (3 tiers of QM9700) used to be one strip 60 times wider than
/// tall: at zoom to fit a line of pixels. The pods now stand in a grid of about a screen's
/// proportions, each drawn alike (its tiers level with the other pods', its racks upright),
/// and the core switches in rows above them all.
#[test]
fn a_fabric_of_many_pods_is_laid_out_in_a_grid() {
    let mut s = spec(Template::RailOptimized, 2048);
    s.tiers = 3;
    let d = run(&s);
    let pods: HashSet<_> = d
        .groups
        .iter()
        .filter(|g| g.parent.is_none())
        .map(|g| g.id)
        .collect();
    assert_eq!(pods.len(), 16);
    let root = |g| outermost(&d, g);
    let (mut lo, mut hi) = ((f32::MAX, f32::MAX), (f32::MIN, f32::MIN));
    for dev in &d.devices {
        lo = (lo.0.min(dev.pos.x), lo.1.min(dev.pos.y));
        hi = (hi.0.max(dev.pos.x), hi.1.max(dev.pos.y));
    }
    let aspect = (hi.0 - lo.0) / (hi.1 - lo.1);
    assert!((0.5..=4.0).contains(&aspect), "width / height {aspect}");
    // Each pod's tiers, relative to its grid row: the same for every pod.
    let mut tiers: HashMap<_, Vec<f32>> = HashMap::new();
    for dev in d.devices.iter().filter(|x| x.group.is_some()) {
        tiers
            .entry(root(dev.group.unwrap()))
            .or_default()
            .push(dev.pos.y);
    }
    let shape = |ys: &Vec<f32>| {
        let top = ys.iter().copied().fold(f32::MAX, f32::min);
        let mut rel: Vec<i64> = ys.iter().map(|y| (y - top) as i64).collect();
        rel.sort_unstable();
        rel.dedup();
        rel
    };
    let first = shape(tiers.values().next().unwrap());
    // Spines, leaves 260 below, and the racks' 4 DGX H100 stacked 72 apart under them.
    assert_eq!(first, vec![0, 260, 520, 592, 664, 736], "{first:?}");
    assert!(tiers.values().all(|ys| shape(ys) == first));
    // Core switches above every pod; no two devices on one spot.
    let top_of_pods = d
        .devices
        .iter()
        .filter(|x| x.group.is_some())
        .map(|x| x.pos.y)
        .fold(f32::MAX, f32::min);
    let cores: Vec<_> = d.devices.iter().filter(|x| x.group.is_none()).collect();
    assert!(!cores.is_empty());
    assert!(cores.iter().all(|c| c.pos.y < top_of_pods));
    assert_no_two_on_one_spot(&d);
}

/// The outermost group that `g` is in.
fn outermost(d: &Design, mut g: railyard::model::GroupId) -> railyard::model::GroupId {
    while let Some(p) = d.group(g).and_then(|x| x.parent) {
        g = p;
    }
    g
}

fn assert_no_two_on_one_spot(d: &Design) {
    let spots: HashSet<(i64, i64)> = d
        .devices
        .iter()
        .map(|x| (x.pos.x as i64, x.pos.y as i64))
        .collect();
    assert_eq!(spots.len(), d.devices.len());
}

/// Extent of some devices: (width, height).
fn size_of<'a>(devices: impl Iterator<Item = &'a railyard::model::Device>) -> (f32, f32) {
    let (mut lo, mut hi) = ((f32::MAX, f32::MAX), (f32::MIN, f32::MIN));
    for dev in devices {
        lo = (lo.0.min(dev.pos.x), lo.1.min(dev.pos.y));
        hi = (hi.0.max(dev.pos.x), hi.1.max(dev.pos.y));
    }
    (hi.0 - lo.0, hi.1 - lo.1)
}

/// 256 DGX H100 in 2 pods under 32 core switches (3 tiers of QM9700) were a strip 36,060
/// wide and 780 high: at zoom to fit, 20 pixels. Now each rack of 4 stands as a column and
/// the pods face each other across the core row, the upper one upside down, so no link
/// crosses the other pod.
#[test]
fn a_fabric_of_two_pods_faces_itself_across_the_core() {
    let mut s = spec(Template::RailOptimized, 256);
    s.tiers = 3;
    let d = run(&s);
    check_structure(&d, &catalog());
    let (w, h) = size_of(d.devices.iter());
    assert!(w / h <= 4.0, "width / height {}", w / h);
    // Every rack: its 4 nodes in one column, 72 apart.
    let mut racks: HashMap<_, Vec<(f32, f32)>> = HashMap::new();
    for dev in d
        .devices
        .iter()
        .filter(|x| matches!(x.kind, DeviceKind::GpuNode(_)))
    {
        racks
            .entry(dev.group.unwrap())
            .or_default()
            .push((dev.pos.x, dev.pos.y));
    }
    assert_eq!(racks.len(), 64);
    for column in racks.values_mut() {
        column.sort_by(|a, b| a.1.total_cmp(&b.1));
        assert_eq!(column.len(), 4);
        assert!(column.iter().all(|p| p.0 == column[0].0), "{column:?}");
        assert!(
            column.windows(2).all(|p| p[1].1 - p[0].1 == 72.0),
            "{column:?}"
        );
    }
    // Pod 1 above the core row, its spines nearest it and its nodes on top; pod 2 below.
    let pod = |name: &str| d.groups.iter().find(|g| g.name == name).unwrap().id;
    let root = |g| outermost(&d, g);
    let ys = |p, role: Option<SwitchRole>| -> Vec<f32> {
        d.devices
            .iter()
            .filter(|x| x.group.map(root) == Some(p))
            .filter(|x| match (&x.kind, role) {
                (DeviceKind::Switch(sw), Some(r)) => sw.role == r,
                (DeviceKind::GpuNode(_), None) => true,
                _ => false,
            })
            .map(|x| x.pos.y)
            .collect()
    };
    let core_y = switches(&d, SwitchRole::Core)[0].pos.y;
    assert!(
        switches(&d, SwitchRole::Core)
            .iter()
            .all(|c| c.pos.y == core_y)
    );
    let (p1, p2) = (pod("pod-01"), pod("pod-02"));
    let max = |v: Vec<f32>| v.into_iter().fold(f32::MIN, f32::max);
    let min = |v: Vec<f32>| v.into_iter().fold(f32::MAX, f32::min);
    assert_eq!(
        max(ys(p1, None)) + 260.0,
        min(ys(p1, Some(SwitchRole::Leaf)))
    );
    assert_eq!(min(ys(p1, Some(SwitchRole::Spine))) + 260.0, core_y);
    assert_eq!(max(ys(p2, Some(SwitchRole::Spine))) - 260.0, core_y);
    assert_eq!(
        max(ys(p2, Some(SwitchRole::Leaf))) + 260.0,
        min(ys(p2, None))
    );
    assert_no_two_on_one_spot(&d);
}

/// 16 DGX under their 8 rail leaves are not a strip (1,980 by 520): their row of nodes
/// stays a row. 32 (4,140 by 520) stand in 8 rack columns, as the SuperPOD unit is drawn.
#[test]
fn a_fabric_that_is_no_strip_keeps_its_rows() {
    let d = run(&spec(Template::RailOptimized, 16));
    let node_rows: HashSet<u32> = d
        .devices
        .iter()
        .filter(|x| matches!(x.kind, DeviceKind::GpuNode(_)))
        .map(|x| x.pos.y.to_bits())
        .collect();
    assert_eq!(node_rows.len(), 1);
}

/// Rail-only at 256 DGX: each rail its own two-tier Clos, its 4 spines grouped by rail. Such
/// switch-only groups join the shared row rather than count as blocks of their own (which
/// had made a grid of units and spine groups, spine links across every row): the 8 units
/// face each other across one row of all 32 spines.
#[test]
fn rail_only_units_face_each_other_across_the_rail_spines() {
    let d = run(&spec(Template::RailOnly, 256));
    check_structure(&d, &catalog());
    let (w, h) = size_of(d.devices.iter());
    assert!(w / h <= 4.0, "width / height {}", w / h);
    let spines = switches(&d, SwitchRole::Spine);
    assert_eq!(spines.len(), 32);
    let row = spines[0].pos.y;
    assert!(spines.iter().all(|s| s.pos.y == row));
    let nodes = |above: bool| {
        d.devices
            .iter()
            .filter(|x| matches!(x.kind, DeviceKind::GpuNode(_)))
            .filter(|x| (x.pos.y < row) == above)
            .count()
    };
    assert_eq!((nodes(true), nodes(false)), (128, 128));
    assert_no_two_on_one_spot(&d);
}

/// Two DGX H100 on rails: 8 rail leaves, each with the 2 ports down and 2 up it uses (of a
/// 64-port switch's 32 and 32), under one spine, and the notes count it in the singular.
#[test]
fn rail_notes_count_one_spine_in_the_singular() {
    let d = run(&spec(Template::RailOptimized, 2));
    assert_eq!(switches(&d, SwitchRole::Spine).len(), 1);
    assert!(
        d.notes
            .contains("8 leaves (2 ports down, 2 up: 1:1), 1 spine."),
        "{}",
        d.notes
    );
    assert!(!d.notes.contains("1 spines"), "{}", d.notes);
}

#[test]
fn rails_over_efa_are_plain_ethernet_and_refused_where_efa_cannot_run() {
    let mut s = spec(Template::RailOptimized, 2);
    s.node = Some(PartId::new("hgx-h100"));
    s.nic = Some(PartId::new("cx7-400gbe"));
    s.nics_per_node = Some(8);
    s.transport = Some(Transport::Efa);
    let d = run(&s);
    // Every link, 16 from the NICs to 8 rail leaves and 16 from the leaves to the spine, runs
    // EFA; EFA is its own adapter on plain Ethernet, not RoCE.
    assert_eq!(d.links.len(), 32);
    assert!(
        d.links
            .iter()
            .all(|l| l.transport == Transport::Efa && l.tech == LinkTech::Ethernet)
    );
    // An InfiniBand-only NIC and switch cannot carry it.
    s.nic = Some(PartId::new("cx7-ndr-400"));
    s.switch = Some(PartId::new("qm9700"));
    let msg = infeasible(&s);
    assert!(msg.contains("EFA (SRD) transport needs Ethernet"), "{msg}");
    // Nor can Thunderbolt.
    let mut s = spec(Template::Ring, 4);
    s.transport = Some(Transport::Efa);
    assert!(infeasible(&s).contains("EFA is an AWS Ethernet adapter"));
}

/// A cable part is a choice of the direct templates; a switched fabric leaves each cable to
/// the bill of materials, so `--link` there is refused with why rather than ignored.
#[test]
fn a_cable_part_is_refused_where_the_template_picks_cables_itself() {
    for template in [Template::FatTree, Template::RailOptimized, Template::Star] {
        let mut s = spec(template, 4);
        s.node = Some(PartId::new("dgx-h100"));
        s.link = Some(PartId::new("optic-800g"));
        let why = infeasible(&s);
        assert!(
            why.starts_with("a cable part (`optic-800g`) applies to the ring, chain and mesh"),
            "{template:?}: {why}"
        );
        s.link = None;
        run(&s);
    }
    // The direct templates take it.
    let mut s = spec(Template::Mesh, 3);
    s.node = Some(PartId::new("mac-studio-m3-ultra"));
    s.link = Some(PartId::new("tb5"));
    let d = run(&s);
    assert!(d.links.iter().all(|l| l.cable == Some(PartId::new("tb5"))));
}

#[test]
fn three_tiers_where_two_would_do_say_so() {
    // 64 DGX at 1:1: 512 NIC ports / 32 down = 16 leaves, which one tier of 64-port spines
    // holds; the core is for growth, and the notes say so. 512 DGX need the core (128
    // leaves > 64).
    let mut s = spec(Template::FatTree, 64);
    s.tiers = 3;
    let d = run(&s);
    assert!(
        d.notes
            .contains("Two tiers would hold these 16 leaves (up to 64 under `qm9700` spines)"),
        "{}",
        d.notes
    );
    let mut s = spec(Template::FatTree, 512);
    s.tiers = 3;
    assert!(!run(&s).notes.contains("Two tiers would hold"));
}

#[test]
fn rail_only_past_one_switch_per_rail_names_a_wider_switch() {
    // 128 DGX: each rail needs 128 ports, past the QM9700's 64. The Q3400's 144 × 800G
    // ports break out to 288 × 400G: one switch holds a rail.
    let mut s = spec(Template::RailOnly, 128);
    s.tiers = 2;
    let d = run(&s);
    assert!(
        d.notes.contains(
            "while a rail's 128 nodes fit one switch, as on `q3400` (288 ports at 400 Gb/s)"
        ),
        "{}",
        d.notes
    );
}
