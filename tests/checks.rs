//! Each design check fires on a small design built to trigger it, names the devices, and
//! stays quiet on a clean design.

mod common;

use common::design::{link, switch};
use railyard::analysis::checks::{Finding, Severity, checks, codes};
use railyard::analysis::collective::{CollectiveQuery, Op, collective};
use railyard::model::Bytes;
use railyard::model::{
    Bandwidth, Catalog, Design, Device, DeviceId, DeviceKind, Endpoint, GpuNode, LengthClass, Link,
    LinkState, LinkTech, NicSlot, NvSwitchDomain, PartId, Port, Pos, ScaleUp, Transport,
};

const CATALOG: &str = r#"(
    version: 1,
    parts: [
        (id: "gpu-a", vendor: "Test", model: "GPU A", price: Some((usd: 20000.0, date: "2025-01", source: "test")),
         spec: Gpu((arch: Hopper, memory_gb: 80.0, pcie_generation: 5))),
        (id: "gpu-b", vendor: "Test", model: "GPU B", price: Some((usd: 2000.0, date: "2025-01", source: "test")),
         spec: Gpu((arch: Ada, memory_gb: 24.0, pcie_generation: 4))),
        (id: "server", vendor: "Test", model: "8-GPU server", price: Some((usd: 100000.0, date: "2025-01", source: "test")),
         spec: Node((gpu: "gpu-a", gpu_count: 8, gpus_included_in_price: true, scale_up: NvSwitch(generation: 4), pcie_generation: 5))),
        (id: "workstation", vendor: "Test", model: "Tower", price: Some((usd: 3000.0, date: "2025-01", source: "test")),
         spec: Node((gpu: "gpu-b", gpu_count: 4, any_gpu: true, gpus_included_in_price: false, scale_up: Pcie, builtin_ethernet_ports: 1, builtin_ethernet_gbit_s: Some(10.0), pcie_generation: 4))),
        (id: "mac-gpu", vendor: "Test", model: "SoC", spec: Gpu((arch: AppleM3, memory_gb: 256.0, pcie_generation: 4))),
        (id: "mac4", vendor: "Test", model: "Mac TB4", price: Some((usd: 4000.0, date: "2025-03", source: "test")),
         spec: Node((gpu: "mac-gpu", gpu_count: 1, gpus_included_in_price: true, scale_up: UnifiedMemory, thunderbolt_ports: 2, thunderbolt_generation: Some(4), builtin_ethernet_ports: 1, builtin_ethernet_gbit_s: Some(10.0), pcie_generation: 4))),
        (id: "tray", vendor: "Test", model: "Compute tray", price: Some((usd: 50000.0, date: "2025-01", source: "test")),
         spec: Node((gpu: "gpu-a", gpu_count: 4, gpus_included_in_price: true, scale_up: NvSwitch(generation: 5), pcie_generation: 5))),
        (id: "rack", vendor: "Test", model: "NVLink rack", price: Some((usd: 1000000.0, date: "2025-01", source: "test")),
         spec: Domain((member_node: "tray", members: 2, gpus: 8, nvswitch_trays: 1, nvlink_generation: 5, per_gpu_gbit_s: 14400.0))),
        (id: "nic-ib", vendor: "Test", model: "IB NIC", price: Some((usd: 1000.0, date: "2025-01", source: "test")),
         spec: Nic((family: InfiniBand, ports: 1, port_gbit_s: 400.0, rdma: true, pcie_generation: 5))),
        (id: "nic-eth100", vendor: "Test", model: "Eth NIC 100G", price: Some((usd: 500.0, date: "2025-01", source: "test")),
         spec: Nic((family: Ethernet, ports: 1, port_gbit_s: 100.0, rdma: true, pcie_generation: 4))),
        (id: "nic-eth400", vendor: "Test", model: "Eth NIC 400G", price: Some((usd: 900.0, date: "2025-01", source: "test")),
         spec: Nic((family: Ethernet, ports: 1, port_gbit_s: 400.0, rdma: true, pcie_generation: 5))),
        (id: "ib-switch", vendor: "Test", model: "IB switch", price: Some((usd: 20000.0, date: "2025-02", source: "test")),
         spec: Switch((family: InfiniBand, ports: 4, port_gbit_s: 400.0))),
        (id: "big-ib-switch", vendor: "Test", model: "IB switch 128", price: Some((usd: 40000.0, date: "2025-02", source: "test")),
         spec: Switch((family: InfiniBand, ports: 128, port_gbit_s: 400.0))),
        (id: "eth-switch", vendor: "Test", model: "Eth switch", price: Some((usd: 5000.0, date: "2025-02", source: "test")),
         spec: Switch((family: Ethernet, ports: 8, port_gbit_s: 400.0, max_breakout: 4))),
        (id: "free-switch", vendor: "Test", model: "Unpriced switch",
         spec: Switch((family: Ethernet, ports: 8, port_gbit_s: 10.0))),
        (id: "dac-400g", vendor: "Test", model: "DAC 400G", price: Some((usd: 100.0, date: "2025-01", source: "test")),
         spec: Cable((medium: Dac, speed_gbit_s: 400.0, max_length_m: 3.0, family: Both))),
        (id: "dac-100g", vendor: "Test", model: "DAC 100G", price: Some((usd: 40.0, date: "2025-01", source: "test")),
         spec: Cable((medium: Dac, speed_gbit_s: 100.0, max_length_m: 3.0, family: Both))),
        (id: "dac-10g", vendor: "Test", model: "DAC 10G", price: Some((usd: 10.0, date: "2025-01", source: "test")),
         spec: Cable((medium: Dac, speed_gbit_s: 10.0, max_length_m: 3.0, family: Both))),
        (id: "optic-400g", vendor: "Test", model: "Optic 400G", price: Some((usd: 500.0, date: "2025-01", source: "test")),
         spec: Cable((medium: Transceiver, speed_gbit_s: 400.0, max_length_m: 500.0, family: Both))),
        (id: "tb4", vendor: "Test", model: "TB4 cable", price: Some((usd: 40.0, date: "2025-01", source: "test")),
         spec: Cable((medium: Thunderbolt, speed_gbit_s: 40.0, max_length_m: 1.0, family: Ethernet))),
        (id: "tb5", vendor: "Test", model: "TB5 cable", price: Some((usd: 70.0, date: "2025-01", source: "test")),
         spec: Cable((medium: Thunderbolt, speed_gbit_s: 80.0, max_length_m: 1.0, family: Ethernet))),
    ],
)"#;

fn catalog() -> Catalog {
    Catalog::parse(CATALOG, "test").expect("test catalog parses")
}

fn node(name: &str, model: &str, gpu: &str, gpus: u32, nics: &[&str]) -> Device {
    Device {
        id: DeviceId(0),
        name: name.to_string(),
        pos: Pos::default(),
        group: None,
        kind: DeviceKind::GpuNode(GpuNode {
            model: PartId::new(model),
            gpu: PartId::new(gpu),
            gpu_count: gpus,
            scale_up: ScaleUp::NvSwitch {
                generation: 4,
                per_gpu_gbit_s: Bandwidth::from_gbit_s(3600.0),
            },
            nics: nics
                .iter()
                .map(|n| NicSlot {
                    part: PartId::new(*n),
                    gpudirect: true,
                })
                .collect(),
            domain: None,
        }),
    }
}

fn server(name: &str) -> Device {
    node(name, "server", "gpu-a", 8, &["nic-ib"])
}

fn mac(name: &str) -> Device {
    node(name, "mac4", "mac-gpu", 1, &[])
}

fn ib(a: DeviceId, pa: Port, b: DeviceId, pb: Port) -> Link {
    link(a, pa, b, pb, LinkTech::InfiniBand, 400.0)
}

/// Two servers on one InfiniBand switch: nothing to report.
fn clean() -> (Design, DeviceId, DeviceId, DeviceId) {
    let mut d = Design::new("clean");
    let n0 = d.add_device(server("node-0"));
    let n1 = d.add_device(server("node-1"));
    let leaf = d.add_device(switch("leaf-0", "ib-switch", None));
    d.add_link(ib(n0, Port::Nic(0), leaf, Port::Switch(0)));
    d.add_link(ib(n1, Port::Nic(0), leaf, Port::Switch(1)));
    (d, n0, n1, leaf)
}

fn with_code<'a>(all: &'a [Finding], code: &str) -> Vec<&'a Finding> {
    all.iter().filter(|c| c.code == code).collect()
}

/// Exactly one check with this code; returns it.
fn single<'a>(all: &'a [Finding], code: &str) -> &'a Finding {
    let found = with_code(all, code);
    assert_eq!(found.len(), 1, "want one `{code}` in {all:#?}");
    found[0]
}

#[test]
fn clean_design_reports_nothing() {
    let (d, ..) = clean();
    let found = checks(&d, &catalog());
    assert!(found.is_empty(), "{found:#?}");
}

#[test]
fn single_node_is_not_isolated() {
    let mut d = Design::new("one");
    d.add_device(server("alone"));
    // Only the note that its NIC is cabled to nothing.
    let found = checks(&d, &catalog());
    assert_eq!(
        found
            .iter()
            .map(|f| (f.code, f.severity))
            .collect::<Vec<_>>(),
        [(codes::NIC_UNCABLED, Severity::Info)]
    );
}

#[test]
fn switch_with_more_cables_than_ports() {
    let (mut d, _, _, leaf) = clean();
    // Four ports: two used, three more servers make five.
    for i in 2..5 {
        let n = d.add_device(server(&format!("node-{i}")));
        d.add_link(ib(n, Port::Nic(0), leaf, Port::Switch(i)));
    }
    let found = checks(&d, &catalog());
    let over = with_code(&found, codes::PORTS_OVER_CAPACITY);
    assert!(
        over.iter()
            .any(|c| c.message.contains("leaf-0") && c.message.contains("5 cables on 4 ports")),
        "{over:#?}"
    );
    // Port 4 does not exist on a four-port switch.
    assert!(over.iter().any(|c| c.message.contains("port 4")));
    assert!(
        over.iter()
            .all(|c| c.severity == Severity::Error && c.devices == [leaf])
    );
    assert_eq!(over[0].links.len(), 5);
}

#[test]
fn nic_past_the_nodes_nics() {
    let (mut d, n0, _, leaf) = clean();
    // The server has one NIC: NIC 3 does not exist.
    d.add_link(ib(n0, Port::Nic(3), leaf, Port::Switch(2)));
    let found = checks(&d, &catalog());
    let c = single(&found, codes::PORTS_OVER_CAPACITY);
    assert!(
        c.message
            .starts_with("node-0: NIC 3 does not exist: it has 1 NIC(s)"),
        "{c:#?}"
    );
    assert_eq!(c.devices[0], n0);
}

#[test]
fn more_thunderbolt_cables_than_ports() {
    let mut d = Design::new("macs");
    let hub = d.add_device(mac("mac-hub"));
    // Two cables bundled on port 0 and one on port 1: three cables on two ports.
    for (i, lanes) in [(0, 2), (1, 1)] {
        let other = d.add_device(mac(&format!("mac-{i}")));
        let tb = |k| Port::Thunderbolt(k);
        d.add_link(link(hub, tb(i), other, tb(0), LinkTech::Thunderbolt4, 40.0).with_lanes(lanes));
    }
    let found = checks(&d, &catalog());
    let c = single(&found, codes::PORTS_OVER_CAPACITY);
    assert!(
        c.message
            .contains("mac-hub: 3 Thunderbolt cables on 2 Thunderbolt ports"),
        "{c:#?}"
    );
}

#[test]
fn a_thunderbolt_port_past_the_machines_ports() {
    let mut d = Design::new("macs");
    let hub = d.add_device(mac("mac-hub"));
    // Thunderbolt ports 0 and 1 exist; a third cable on port 2 has nowhere to go.
    for i in 0..3 {
        let other = d.add_device(mac(&format!("mac-{i}")));
        d.add_link(link(
            hub,
            Port::Thunderbolt(i),
            other,
            Port::Thunderbolt(0),
            LinkTech::Thunderbolt4,
            40.0,
        ));
    }
    let found = checks(&d, &catalog());
    let c = single(&found, codes::PORTS_OVER_CAPACITY);
    assert!(
        c.message
            .contains("mac-hub: its Thunderbolt port 2 does not exist: it has 2 (0 to 1)"),
        "{c:#?}"
    );
    assert_eq!(c.links, [d.links[2].id]);
}

#[test]
fn nic_slower_than_its_link() {
    let mut d = Design::new("speed");
    let n0 = d.add_device(node("node-0", "server", "gpu-a", 8, &["nic-eth100"]));
    let n1 = d.add_device(node("node-1", "server", "gpu-a", 8, &["nic-eth400"]));
    let sw = d.add_device(switch("eth-0", "eth-switch", None));
    d.add_link(link(
        n0,
        Port::Nic(0),
        sw,
        Port::Switch(0),
        LinkTech::RoceV2,
        400.0,
    ));
    d.add_link(link(
        n1,
        Port::Nic(0),
        sw,
        Port::Switch(1),
        LinkTech::RoceV2,
        400.0,
    ));
    let found = checks(&d, &catalog());
    let c = single(&found, codes::SPEED_MISMATCH);
    assert_eq!(c.devices, [n0, sw]);
    assert!(
        c.message.contains("node-0") && c.message.contains("100 Gb/s"),
        "{c:#?}"
    );
    assert!(c.message.contains("eth-0"), "names the far end: {c:#?}");
}

#[test]
fn switch_breakout_lowers_the_port_speed() {
    let mut d = Design::new("breakout");
    let n0 = d.add_device(node("node-0", "server", "gpu-a", 8, &["nic-eth400"]));
    let mut sw = switch("eth-0", "eth-switch", None);
    if let DeviceKind::Switch(s) = &mut sw.kind {
        // 8 × 400G split four ways is 32 × 100G.
        s.breakout = 4;
    }
    let sw = d.add_device(sw);
    d.add_link(link(
        n0,
        Port::Nic(0),
        sw,
        Port::Switch(0),
        LinkTech::RoceV2,
        400.0,
    ));
    let found = checks(&d, &catalog());
    let c = single(&found, codes::SPEED_MISMATCH);
    assert_eq!(c.devices[0], sw);
    assert!(c.message.contains("100 Gb/s (breakout 4)"), "{c:#?}");
}

/// Apple's RDMA over Thunderbolt needs Thunderbolt 5: a Thunderbolt 4 cable marked RDMA is
/// named, and the Macs' library (MLX's ring backend, TCP sockets) times it exactly as a
/// TCP-marked cable; it used to take the RDMA figures.
#[test]
fn thunderbolt_4_marked_rdma_is_named_and_timed_as_tcp() {
    let mut d = Design::new("tb4");
    let a = d.add_device(mac("mac-a"));
    let b = d.add_device(mac("mac-b"));
    let mut l = link(
        a,
        Port::Thunderbolt(0),
        b,
        Port::Thunderbolt(0),
        LinkTech::Thunderbolt4,
        40.0,
    );
    l.transport = Transport::Tcp;
    d.add_link(l.clone());
    assert!(with_code(&checks(&d, &catalog()), codes::INCOMPATIBLE_LINK).is_empty());
    let query = CollectiveQuery::new(Op::AllReduce, Bytes(1 << 30));
    let tcp = collective(&d, &catalog(), &query).expect("TCP over TB4");

    d.links[0].transport = Transport::Rdma;
    let found = checks(&d, &catalog());
    let c = single(&found, codes::INCOMPATIBLE_LINK);
    assert_eq!(c.severity, Severity::Warning);
    assert!(
        c.message.contains("Thunderbolt 4 marked RDMA") && c.message.contains("timed as TCP"),
        "{c:#?}"
    );
    let marked_rdma = collective(&d, &catalog(), &query).expect("TB4 marked RDMA");
    assert_eq!(marked_rdma.time_us, tcp.time_us);
}

#[test]
fn thunderbolt_5_link_on_thunderbolt_4_macs() {
    let mut d = Design::new("tb");
    let a = d.add_device(mac("mac-a"));
    let b = d.add_device(mac("mac-b"));
    d.add_link(link(
        a,
        Port::Thunderbolt(0),
        b,
        Port::Thunderbolt(0),
        LinkTech::Thunderbolt5,
        80.0,
    ));
    let found = checks(&d, &catalog());
    // One report per machine.
    assert_eq!(
        with_code(&found, codes::SPEED_MISMATCH).len(),
        2,
        "{found:#?}"
    );
}

#[test]
fn unlinked_node_is_isolated() {
    let (mut d, ..) = clean();
    let lonely = d.add_device(server("node-lonely"));
    let found = checks(&d, &catalog());
    let c = single(&found, codes::GPU_ISOLATED);
    assert_eq!(c.devices, [lonely]);
    assert_eq!(c.severity, Severity::Error);
    // 8 of its own GPUs, 16 in the rest of the cluster.
    assert!(
        c.message.contains("node-lonely (8 GPUs)") && c.message.contains("other 16 GPUs"),
        "{c:#?}"
    );
}

#[test]
fn failed_link_cuts_a_node_off() {
    let (mut d, _, n1, _) = clean();
    let cut = d.links[1].id;
    d.link_mut(cut).expect("link").state = LinkState::Failed;
    let found = checks(&d, &catalog());
    // Two islands of 8 GPUs: neither is the cluster, so both are reported.
    let isolated = with_code(&found, codes::GPU_ISOLATED);
    assert_eq!(isolated.len(), 2, "{found:#?}");
    assert!(isolated.iter().any(|c| c.devices == [n1]));
}

#[test]
fn nvl_trays_reach_each_other_through_their_domain() {
    let mut d = Design::new("rack");
    let rack = d.add_device(Device {
        id: DeviceId(0),
        name: "nvl-0".into(),
        pos: Pos::default(),
        group: None,
        kind: DeviceKind::NvSwitchDomain(NvSwitchDomain {
            model: PartId::new("rack"),
        }),
    });
    for i in 0..2 {
        let mut tray = node(&format!("tray-{i}"), "tray", "gpu-a", 4, &[]);
        if let DeviceKind::GpuNode(n) = &mut tray.kind {
            n.domain = Some(rack);
        }
        d.add_device(tray);
    }
    let found = checks(&d, &catalog());
    assert!(found.is_empty(), "{found:#?}");

    // A third tray is one more than the rack takes.
    let mut extra = node("tray-2", "tray", "gpu-a", 4, &[]);
    if let DeviceKind::GpuNode(n) = &mut extra.kind {
        n.domain = Some(rack);
    }
    d.add_device(extra);
    let found = checks(&d, &catalog());
    let c = single(&found, codes::DOMAIN_OVER_CAPACITY);
    assert!(c.message.contains("nvl-0 holds 3 compute trays"), "{c:#?}");
}

#[test]
fn nic_cabled_to_another_rail() {
    let mut d = Design::new("rails");
    let a = d.add_device(node("node-a", "server", "gpu-a", 8, &["nic-ib", "nic-ib"]));
    let b = d.add_device(node("node-b", "server", "gpu-a", 8, &["nic-ib", "nic-ib"]));
    let rail0 = d.add_device(switch("leaf-rail0", "ib-switch", Some(0)));
    let rail1 = d.add_device(switch("leaf-rail1", "ib-switch", Some(1)));
    d.add_link(ib(a, Port::Nic(0), rail0, Port::Switch(0)));
    d.add_link(ib(a, Port::Nic(1), rail1, Port::Switch(0)));
    // node-b is crossed over: NIC 0 to rail 1's leaf, NIC 1 to rail 0's.
    d.add_link(ib(b, Port::Nic(0), rail1, Port::Switch(1)));
    d.add_link(ib(b, Port::Nic(1), rail0, Port::Switch(1)));
    let found = checks(&d, &catalog());
    let misaligned = with_code(&found, codes::RAIL_MISALIGNED);
    assert_eq!(misaligned.len(), 2, "{found:#?}");
    assert!(misaligned.iter().all(|c| c.severity == Severity::Warning));
    let at_rail1 = misaligned
        .iter()
        .find(|c| c.devices[0] == rail1)
        .expect("reported at leaf-rail1");
    assert!(
        at_rail1
            .message
            .starts_with("leaf-rail1: serves rail 1 but is cabled to NIC 0 (rail 0)"),
        "{at_rail1:#?}"
    );
    assert_eq!(at_rail1.devices, [rail1, b]);
    assert!(found.iter().all(|c| c.code == codes::RAIL_MISALIGNED));
}

#[test]
fn infiniband_into_an_ethernet_switch() {
    let mut d = Design::new("mixed");
    let n = d.add_device(server("node-0"));
    let sw = d.add_device(switch("eth-0", "eth-switch", None));
    d.add_link(ib(n, Port::Nic(0), sw, Port::Switch(0)));
    let found = checks(&d, &catalog());
    let c = single(&found, codes::INCOMPATIBLE_LINK);
    assert_eq!(c.devices, [sw, n]);
    assert!(
        c.message.contains("eth-0") && c.message.contains("Ethernet-only"),
        "{c:#?}"
    );
}

#[test]
fn ethernet_link_on_an_infiniband_nic() {
    let mut d = Design::new("mixed");
    let n = d.add_device(server("node-0"));
    let sw = d.add_device(switch("eth-0", "eth-switch", None));
    d.add_link(link(
        n,
        Port::Nic(0),
        sw,
        Port::Switch(0),
        LinkTech::RoceV2,
        400.0,
    ));
    let found = checks(&d, &catalog());
    let c = single(&found, codes::INCOMPATIBLE_LINK);
    assert_eq!(c.devices[0], n);
    assert!(c.message.contains("InfiniBand-only"), "{c:#?}");
}

#[test]
fn thunderbolt_on_a_machine_without_thunderbolt() {
    let mut d = Design::new("tb");
    let tower = d.add_device(node("tower", "workstation", "gpu-b", 4, &[]));
    let m = d.add_device(mac("mac-a"));
    d.add_link(link(
        tower,
        Port::Thunderbolt(0),
        m,
        Port::Thunderbolt(0),
        LinkTech::Thunderbolt4,
        40.0,
    ));
    let found = checks(&d, &catalog());
    let c = single(&found, codes::INCOMPATIBLE_LINK);
    assert_eq!(c.devices[0], tower);
    assert!(
        c.message.contains("tower: it has no Thunderbolt ports"),
        "{c:#?}"
    );
}

#[test]
fn unknown_and_misused_parts() {
    let (mut d, _, _, leaf) = clean();
    let odd = d.add_device(node("odd-node", "no-such-node", "gpu-a", 8, &["nic-ib"]));
    // 200G has no DAC in the test catalog, so its cabling is missing from the BOM.
    let slow = d.add_link(link(
        odd,
        Port::Nic(0),
        leaf,
        Port::Switch(2),
        LinkTech::InfiniBand,
        200.0,
    ));
    let wrong = d.add_device(switch("not-a-switch", "nic-ib", None));
    let found = checks(&d, &catalog());
    let unknown = with_code(&found, codes::UNKNOWN_PART);
    assert_eq!(unknown.len(), 2, "{found:#?}");
    let node_part = unknown
        .iter()
        .find(|c| c.severity == Severity::Error)
        .expect("unknown node model");
    assert_eq!(node_part.devices, [odd]);
    assert!(node_part.message.contains("`no-such-node`") && node_part.message.contains("odd-node"));
    let cable = unknown
        .iter()
        .find(|c| c.severity == Severity::Warning)
        .expect("missing cable");
    assert_eq!(cable.links, [slow]);
    assert!(cable.message.contains("`dac-200g`"), "{cable:#?}");

    let kind = single(&found, codes::WRONG_PART_KIND);
    assert_eq!(kind.devices, [wrong]);
    assert!(kind.message.contains("not-a-switch"));
}

#[test]
fn unpriced_part_is_information() {
    let mut d = Design::new("free");
    d.add_device(switch("sw", "free-switch", None));
    let found = checks(&d, &catalog());
    let c = single(&found, codes::UNPRICED_PART);
    assert_eq!(c.severity, Severity::Info);
    assert!(c.message.contains("free-switch"));
}

#[test]
fn dangling_self_loop_reused_and_invalid_links() {
    let (mut d, n0, n1, leaf) = clean();
    let dangling = d.add_link(ib(n0, Port::Nic(0), DeviceId(99), Port::Switch(0)));
    let looped = d.add_link(ib(leaf, Port::Switch(2), leaf, Port::Switch(3)));
    // node-1's NIC port already carries a link to leaf port 1.
    let reused = d.add_link(ib(n1, Port::Nic(0), leaf, Port::Switch(2)));
    let zero = d.add_link(link(
        n0,
        Port::Nic(0),
        leaf,
        Port::Switch(3),
        LinkTech::InfiniBand,
        0.0,
    ));
    let found = checks(&d, &catalog());

    let c = single(&found, codes::DANGLING_LINK);
    assert_eq!(c.links, [dangling]);
    assert!(c.message.contains("d99"), "{c:#?}");

    let c = single(&found, codes::SELF_LOOP);
    assert_eq!(c.links, [looped]);
    assert!(c.message.contains("leaf-0"));

    let c = single(&found, codes::PORT_REUSED);
    assert_eq!(c.devices, [n1]);
    assert_eq!(c.links, [d.links[1].id, reused]);
    assert!(c.message.contains("node-1 NIC 0 carries both"), "{c:#?}");

    let c = single(&found, codes::INVALID_LINK);
    assert_eq!(c.links, [zero]);

    // Errors come first.
    let first_other = found
        .iter()
        .position(|c| c.severity != Severity::Error)
        .unwrap_or(found.len());
    assert!(
        found[first_other..]
            .iter()
            .all(|c| c.severity != Severity::Error)
    );
}

#[test]
fn domain_pointer_and_breakout() {
    let (mut d, _, _, leaf) = clean();
    let mut tray = node("tray-0", "tray", "gpu-a", 4, &[]);
    if let DeviceKind::GpuNode(n) = &mut tray.kind {
        // Points at the switch, not at an NVSwitch domain.
        n.domain = Some(leaf);
    }
    let tray = d.add_device(tray);
    if let Some(DeviceKind::Switch(s)) = d.device_mut(leaf).map(|x| &mut x.kind) {
        s.breakout = 2;
    }
    let found = checks(&d, &catalog());
    assert_eq!(single(&found, codes::DANGLING_DOMAIN).devices, [tray]);
    let c = single(&found, codes::BREAKOUT_UNSUPPORTED);
    assert!(c.message.contains("leaf-0: breakout 2"), "{c:#?}");
}

#[test]
fn duplicate_device_ids() {
    let (mut d, n0, ..) = clean();
    let mut twin = server("twin");
    twin.id = n0;
    d.devices.push(twin);
    let found = checks(&d, &catalog());
    assert_eq!(single(&found, codes::DUPLICATE_ID).devices, [n0]);
}

/// A rail-optimised fabric of 16,384 eight-GPU servers (131,072 GPUs): 8 rails of 256
/// 64-port-down leaves, each leaf with 8 cross-rack uplinks to its rail's 16 spines.
/// 131,072 NIC links + 16,384 uplinks = 147,456 links.
fn big_rail_fabric() -> Design {
    let mut d = Design::new("big");
    let nics = ["nic-ib"; 8];
    let nodes: Vec<DeviceId> = (0..16_384)
        .map(|i| d.add_device(node(&format!("node-{i}"), "server", "gpu-a", 8, &nics)))
        .collect();
    for rail in 0..8u32 {
        let spines: Vec<DeviceId> = (0..16)
            .map(|s| d.add_device(switch(&format!("spine-r{rail}-{s}"), "big-ib-switch", None)))
            .collect();
        for leaf_index in 0..256u32 {
            let leaf = d.add_device(switch(
                &format!("leaf-r{rail}-{leaf_index}"),
                "big-ib-switch",
                Some(rail),
            ));
            for down in 0..64u32 {
                let n = nodes[(leaf_index * 64 + down) as usize];
                d.add_link(ib(n, Port::Nic(rail), leaf, Port::Switch(down)));
            }
            for up in 0..8u32 {
                // Leaf i goes up to spines i..i+8 (mod 16), so neighbouring leaves share
                // spines; for one spine and one `up` there are 16 leaves, 16 apart.
                let spine = spines[((leaf_index + up) % 16) as usize];
                let spine_port = (leaf_index / 16) * 8 + up;
                d.add_link(
                    ib(leaf, Port::Switch(64 + up), spine, Port::Switch(spine_port))
                        .with_length(LengthClass::CrossRack),
                );
            }
        }
    }
    d
}

#[test]
fn a_131072_gpu_fabric_checks_clean_and_finds_one_miswire() {
    let mut d = big_rail_fabric();
    assert_eq!(d.gpu_count(), 131_072);
    assert_eq!(d.links.len(), 147_456);
    let found = checks(&d, &catalog());
    let messages: Vec<&str> = found.iter().map(|c| c.message.as_str()).collect();
    assert!(found.is_empty(), "{messages:#?}");

    // Move node-0's NIC 3 (rail 3) onto a free port of a rail-5 leaf, past its uplinks.
    let victim = d
        .links
        .iter()
        .find(|l| l.a == Endpoint::new(DeviceId(0), Port::Nic(3)))
        .map(|l| l.id)
        .expect("node-0 NIC 3 is cabled");
    let rail5_leaf = d
        .devices
        .iter()
        .find(|x| x.name == "leaf-r5-0")
        .map(|x| x.id)
        .expect("leaf exists");
    let l = d.link_mut(victim).expect("link");
    assert_eq!(l.a.port, Port::Nic(3));
    l.b = Endpoint::new(rail5_leaf, Port::Switch(100));
    let found = checks(&d, &catalog());
    let c = single(&found, codes::RAIL_MISALIGNED);
    assert_eq!(c.links, [victim]);
    assert_eq!(found.len(), 1, "{found:#?}");
}

#[test]
fn shipped_catalog_has_every_cable_the_bom_derives() {
    let builtin = Catalog::builtin();
    for grade in railyard::analysis::cost::CABLE_SPEED_GRADES {
        for prefix in ["dac", "optic"] {
            let id = format!("{prefix}-{grade}g");
            assert!(builtin.cable(&PartId::new(id.as_str())).is_some(), "{id}");
        }
    }
    for id in ["tb4", "tb5", "nvlink-bridge"] {
        assert!(builtin.cable(&PartId::new(id)).is_some(), "{id}");
    }
}

#[test]
fn dgx_pair_on_the_shipped_catalog_is_clean() {
    let builtin = Catalog::builtin();
    let mut d = Design::new("dgx pair");
    let leaf = d.add_device(switch("leaf-0", "qm9700", None));
    for i in 0..2 {
        let n = d.add_device(node(
            &format!("dgx-{i}"),
            "dgx-h100",
            "h100-sxm",
            8,
            &["cx7-ndr-400"],
        ));
        d.add_link(ib(n, Port::Nic(0), leaf, Port::Switch(i)));
    }
    let found = checks(&d, &builtin);
    assert!(
        found.iter().all(|c| c.severity == Severity::Info),
        "{found:#?}"
    );
}

#[test]
fn a_nic_with_no_link_is_named_with_its_slot_and_part() {
    let mut d = Design::new("two nics");
    let n0 = d.add_device(node("node-0", "server", "gpu-a", 8, &["nic-ib", "nic-ib"]));
    let n1 = d.add_device(node("node-1", "server", "gpu-a", 8, &["nic-ib", "nic-ib"]));
    let leaf = d.add_device(switch("leaf-0", "ib-switch", None));
    d.add_link(ib(n0, Port::Nic(0), leaf, Port::Switch(0)));
    d.add_link(ib(n1, Port::Nic(0), leaf, Port::Switch(1)));
    d.add_link(ib(n1, Port::Nic(1), leaf, Port::Switch(2)));
    let found = checks(&d, &catalog());
    let f = single(&found, codes::NIC_UNCABLED);
    assert_eq!(f.severity, Severity::Warning);
    assert!(
        f.message
            .starts_with("NIC 1 (nic-ib) has no link on node-0:"),
        "{}",
        f.message
    );
    assert_eq!(f.devices, vec![n0]);
    // A failed link is still drawn, so its NIC is cabled.
    let mut failed = d.clone();
    failed.add_link(Link {
        state: LinkState::Failed,
        ..ib(n0, Port::Nic(1), leaf, Port::Switch(3))
    });
    assert!(with_code(&checks(&failed, &catalog()), codes::NIC_UNCABLED).is_empty());
}

#[test]
fn deleting_a_rail_leaf_of_the_superpod_names_its_nic_on_all_32_nodes() {
    let mut d = common::design::preset("dgx-h100-superpod-su.ron");
    let builtin = Catalog::builtin();
    assert!(with_code(&checks(&d, &builtin), codes::NIC_UNCABLED).is_empty());
    let leaf = d
        .devices
        .iter()
        .find(|x| x.name == "leaf-r3")
        .map(|x| x.id)
        .expect("the preset has leaf-r3");
    d.links.retain(|l| l.a.device != leaf && l.b.device != leaf);
    let found = checks(&d, &builtin);
    let f = single(&found, codes::NIC_UNCABLED);
    assert!(
        f.message.starts_with(
            "NIC 3 (cx7-ndr-400) has no link on 32 GPU nodes (node-01, node-02, node-03 and 29 more)"
        ),
        "{}",
        f.message
    );
    assert_eq!(f.devices.len(), 32);
}

/// A lone server with two $1,000 NICs and no links: said once, as information, with what
/// the NICs add to the cost; two servers not networked yet get nothing (a network to come).
#[test]
fn a_lone_servers_nics_are_noted_with_their_price() {
    let mut d = Design::new("one box");
    let n = d.add_device(node("box", "server", "gpu-a", 8, &["nic-ib", "nic-ib"]));
    let found = checks(&d, &catalog());
    let f = single(&found, codes::NIC_UNCABLED);
    assert_eq!(f.severity, Severity::Info);
    assert_eq!(f.devices, vec![n]);
    assert_eq!(
        f.message,
        "2 NICs on box are cabled to nothing ($2,000 in the cost): one server's GPUs talk inside it"
    );
    d.add_device(server("another"));
    assert!(with_code(&checks(&d, &catalog()), codes::NIC_UNCABLED).is_empty());
}

/// A DGX Spark's ConnectX-7 is built into its board: nothing to remove, so no note.
#[test]
fn a_lone_spark_has_no_nic_to_remove() {
    use railyard::generate::{Template, TemplateSpec, generate};
    let builtin = Catalog::builtin();
    let mut spec = TemplateSpec::new(Template::Single);
    spec.node = Some(railyard::model::PartId::new("dgx-spark"));
    let d = generate(&spec, &builtin).expect("one Spark");
    let nics = d
        .devices
        .iter()
        .filter_map(|x| x.kind.as_node())
        .map(|n| n.nics.len());
    assert_eq!(nics.sum::<usize>(), 1, "the Spark carries its built-in NIC");
    assert!(with_code(&checks(&d, &builtin), codes::NIC_UNCABLED).is_empty());
}

/// A passive Thunderbolt 5 cable reaches 1 m (the catalog's `tb5`): links marked across
/// racks are flagged once, with their ids; side by side they are fine.
#[test]
fn thunderbolt_across_racks_outruns_its_cable() {
    let builtin = Catalog::builtin();
    let mut d = common::design::preset("mac-studio-tb5-x4.ron");
    assert!(with_code(&checks(&d, &builtin), codes::CABLE_TOO_SHORT).is_empty());
    for l in &mut d.links {
        l.length = LengthClass::CrossRack;
    }
    let found = checks(&d, &builtin);
    let f = single(&found, codes::CABLE_TOO_SHORT);
    assert_eq!(f.severity, Severity::Warning);
    assert_eq!(f.links.len(), 6);
    assert!(
        f.message
            .starts_with("6 Thunderbolt links marked across racks on `tb5`, which reaches 1 m"),
        "{}",
        f.message
    );
}

/// A spine whose links are all marked failed is named as down in one note (the figures
/// then leave it out), rather than reading as a shortage of uplinks; a degraded link is
/// counted beside. The SuperPOD unit's spine-01 has 64 links, one to each leaf port.
#[test]
fn a_spine_with_every_link_failed_is_named_down() {
    let mut design = common::design::preset("dgx-h100-superpod-su.ron");
    let spine = design
        .devices
        .iter()
        .find(|d| d.name == "spine-01")
        .expect("spine-01")
        .id;
    let mut failed = 0;
    for l in &mut design.links {
        if l.touches(spine) {
            l.state = LinkState::Failed;
            failed += 1;
        }
    }
    assert_eq!(failed, 64);
    let degraded = design
        .links
        .iter_mut()
        .find(|l| l.state == LinkState::Up)
        .expect("a working link");
    degraded.state = LinkState::Degraded { fraction: 0.5 };
    let all = checks(&design, &catalog());
    let note = single(&all, codes::LINKS_DOWN);
    assert_eq!(note.severity, Severity::Info);
    assert!(
        note.message.starts_with(
            "64 links failed and 1 degraded: spine-01 (all 64) has no working link left"
        ),
        "{}",
        note.message
    );
    assert_eq!(note.devices, vec![spine]);
    assert_eq!(note.links.len(), 65);
    // A design with every link up has no such note.
    let healthy = common::design::preset("dgx-h100-superpod-su.ron");
    assert!(with_code(&checks(&healthy, &catalog()), codes::LINKS_DOWN).is_empty());
}

/// A named cable must fit its link's rate: a QSFP28 100G DAC between two 25G SFP28 ports
/// (ConnectX-4 Lx) is a multi-lane plug their cages do not take, and a 25G DAC cannot carry a
/// 100G link. The 25G DAC on the 25G link, and a breakout (`dac-100g-4x25g`), fit.
#[test]
fn a_named_cable_must_fit_its_links_rate() {
    let catalog = Catalog::builtin();
    let pair = workstation_pair;
    let wide = pair("cx4lx-25gbe", "dac-100g");
    let all = checks(&wide, &catalog);
    let misfit = single(&all, codes::CONNECTOR_MISMATCH);
    assert!(
        misfit
            .message
            .contains("`dac-100g` is made for 100 Gb/s ports")
            && misfit.message.contains("the link runs 25 Gb/s"),
        "{}",
        misfit.message
    );
    assert_eq!(misfit.links, vec![wide.links[0].id]);
    let fits = pair("cx4lx-25gbe", "dac-25g");
    assert!(with_code(&checks(&fits, &catalog), codes::CONNECTOR_MISMATCH).is_empty());
    let mut narrow = pair("e810-100gbe", "dac-100g");
    assert!(with_code(&checks(&narrow, &catalog), codes::CONNECTOR_MISMATCH).is_empty());
    narrow.links[0].cable = Some(PartId::new("dac-25g"));
    let all = checks(&narrow, &catalog);
    assert!(
        single(&all, codes::CONNECTOR_MISMATCH)
            .message
            .contains("it cannot carry it")
    );
    let mut breakout = wide;
    breakout.links[0].cable = Some(PartId::new("dac-100g-4x25g"));
    assert!(with_code(&checks(&breakout, &catalog), codes::CONNECTOR_MISMATCH).is_empty());
}

/// Two workstations with 25 GbE cards, cabled board to board over twisted pair: the cards are
/// bought and powered for nothing, and the check says so (it used to stay quiet whenever no
/// NIC at all was cabled). Cabled on the cards, nothing is said.
#[test]
fn nics_left_idle_beside_the_boards_own_ethernet_are_said() {
    let catalog = Catalog::builtin();
    let pair = |cable: &str| workstation_pair("cx4lx-25gbe", cable);
    let idle = pair("cat6a");
    let all = checks(&idle, &catalog);
    let finding = single(&all, codes::NIC_UNCABLED);
    assert_eq!(finding.severity, Severity::Warning);
    assert!(
        finding
            .message
            .contains("NIC 0 (cx4lx-25gbe) has no link on 2 GPU nodes")
            && finding
                .message
                .contains("meet through their own Ethernet ports"),
        "{}",
        finding.message
    );
    let used = pair("dac-25g");
    assert!(with_code(&checks(&used, &catalog), codes::NIC_UNCABLED).is_empty());
}

/// Two workstations, one RTX 3090 each, a `nic` card in each, chained by one `cable`.
fn workstation_pair(nic: &str, cable: &str) -> Design {
    use railyard::generate::{Template, TemplateSpec, generate};
    let mut spec = TemplateSpec::new(Template::Chain);
    spec.nodes = Some(2);
    spec.node = Some(PartId::new("workstation"));
    spec.gpu = Some(PartId::new("rtx-3090"));
    spec.gpus_per_node = Some(1);
    spec.nic = Some(PartId::new(nic));
    spec.link = Some(PartId::new(cable));
    generate(&spec, &Catalog::builtin()).expect("two workstations")
}
