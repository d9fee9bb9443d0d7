//! Bill of materials, cost summary, shares and the CSV export, against totals worked out by
//! hand from a small test catalog (independent of the shipped catalog's figures).

mod common;

use common::design::{link, switch};
use railyard::analysis::cost::{BomCategory, BomLine, bom_lines, cost_summary};
use railyard::io::bom::{BomOptions, bom_total, write_bom_csv};
use railyard::model::{
    Bandwidth, Catalog, Design, Device, DeviceId, DeviceKind, GpuNode, Host, HostRole, LengthClass,
    LinkTech, NicSlot, NvSwitchDomain, PartId, Port, Pos, ScaleUp,
};

const CATALOG: &str = r#"(
    version: 1,
    parts: [
        (id: "gpu-a", vendor: "Test", model: "GPU A", price: Some((usd: 20000.0, date: "2025-01", source: "test")), power_w: 700.0,
         spec: Gpu((arch: Hopper, memory_gb: 80.0, pcie_generation: 5))),
        (id: "gpu-b", vendor: "Test", model: "GPU B", price: Some((usd: 2000.0, date: "2025-01", source: "test")), power_w: 450.0,
         spec: Gpu((arch: Ada, memory_gb: 24.0, pcie_generation: 4, nvlink_bridge: true))),
        (id: "server", vendor: "Test", model: "8-GPU server", price: Some((usd: 100000.0, date: "2025-01", source: "test")), power_w: 10000.0,
         spec: Node((gpu: "gpu-a", gpu_count: 8, gpus_included_in_price: true, scale_up: NvSwitch(generation: 4), nic: Some("nic-ib"), nic_count: 1, pcie_generation: 5))),
        (id: "workstation", vendor: "Test", model: "Tower", price: Some((usd: 3000.0, date: "2025-01", source: "test")), power_w: 300.0,
         spec: Node((gpu: "gpu-b", gpu_count: 4, any_gpu: true, gpus_included_in_price: false, scale_up: Pcie, builtin_ethernet_ports: 1, builtin_ethernet_gbit_s: Some(10.0), pcie_generation: 4))),
        (id: "mac-gpu", vendor: "Test", model: "SoC", spec: Gpu((arch: AppleM3, memory_gb: 256.0, pcie_generation: 4))),
        (id: "mac", vendor: "Test", model: "Mac", price: Some((usd: 4000.0, date: "2025-03", source: "test")), power_w: 150.0,
         spec: Node((gpu: "mac-gpu", gpu_count: 1, gpus_included_in_price: true, scale_up: UnifiedMemory, thunderbolt_ports: 2, thunderbolt_generation: Some(5), pcie_generation: 4))),
        (id: "tray", vendor: "Test", model: "Compute tray", price: Some((usd: 50000.0, date: "2025-01", source: "test")), power_w: 5000.0,
         spec: Node((gpu: "gpu-a", gpu_count: 4, gpus_included_in_price: true, scale_up: NvSwitch(generation: 5), pcie_generation: 5))),
        (id: "rack", vendor: "Test", model: "NVLink rack", price: Some((usd: 1000000.0, date: "2025-01", source: "test")), power_w: 20000.0, estimate: true,
         spec: Domain((member_node: "tray", members: 2, gpus: 8, nvswitch_trays: 1, nvlink_generation: 5, per_gpu_gbit_s: 14400.0))),
        (id: "cpu-server", vendor: "Test", model: "CPU box", price: Some((usd: 8000.0, date: "2025-01", source: "test")), power_w: 400.0,
         spec: Node((gpu: "gpu-a", gpu_count: 0, gpus_included_in_price: true, scale_up: Pcie, pcie_generation: 5))),
        (id: "nic-ib", vendor: "Test", model: "IB NIC", price: Some((usd: 1000.0, date: "2025-01", source: "test")), power_w: 25.0,
         spec: Nic((family: InfiniBand, ports: 1, port_gbit_s: 400.0, rdma: true, pcie_generation: 5))),
        (id: "nic-eth", vendor: "Test", model: "Eth NIC", price: Some((usd: 500.0, date: "2025-01", source: "test")), power_w: 15.0,
         spec: Nic((family: Ethernet, ports: 1, port_gbit_s: 100.0, rdma: true, pcie_generation: 4))),
        (id: "ib-switch", vendor: "Test", model: "IB switch", description: "Switch, 4 × 400G \"test\"", price: Some((usd: 20000.0, date: "2025-02", source: "test sheet")), power_w: 1000.0,
         spec: Switch((family: InfiniBand, ports: 4, port_gbit_s: 400.0))),
        (id: "free-switch", vendor: "Test", model: "Unpriced switch", power_w: 50.0,
         spec: Switch((family: Ethernet, ports: 8, port_gbit_s: 10.0))),
        (id: "dac-400g", vendor: "Test", model: "DAC 400G", price: Some((usd: 100.0, date: "2025-01", source: "test")),
         spec: Cable((medium: Dac, speed_gbit_s: 400.0, max_length_m: 3.0, family: Both))),
        (id: "dac-100g", vendor: "Test", model: "DAC 100G", price: Some((usd: 40.0, date: "2025-01", source: "test")),
         spec: Cable((medium: Dac, speed_gbit_s: 100.0, max_length_m: 3.0, family: Both))),
        (id: "optic-400g", vendor: "Test", model: "Optic 400G", price: Some((usd: 500.0, date: "2025-01", source: "test")), power_w: 12.0,
         spec: Cable((medium: Transceiver, speed_gbit_s: 400.0, max_length_m: 500.0, family: Both))),
        (id: "aoc-400g", vendor: "Test", model: "AOC 400G", price: Some((usd: 700.0, date: "2025-01", source: "test")), power_w: 20.0,
         spec: Cable((medium: Aoc, speed_gbit_s: 400.0, max_length_m: 30.0, family: Both))),
        (id: "tb5", vendor: "Test", model: "TB5 cable", price: Some((usd: 70.0, date: "2025-01", source: "test")),
         spec: Cable((medium: Thunderbolt, speed_gbit_s: 80.0, max_length_m: 1.0, family: Ethernet))),
        (id: "nvlink-bridge", vendor: "Test", model: "Bridge", price: Some((usd: 80.0, date: "2025-01", source: "test")),
         spec: Cable((medium: NvLinkBridge, speed_gbit_s: 900.0, max_length_m: 0.1, family: Both))),
    ],
)"#;

fn catalog() -> Catalog {
    Catalog::parse(CATALOG, "test").expect("test catalog parses")
}

fn node(name: &str, model: &str, gpu: &str, gpus: u32, nics: &[&str], scale_up: ScaleUp) -> Device {
    Device {
        id: DeviceId(0),
        name: name.to_string(),
        pos: Pos::default(),
        group: None,
        kind: DeviceKind::GpuNode(GpuNode {
            model: PartId::new(model),
            gpu: PartId::new(gpu),
            gpu_count: gpus,
            scale_up,
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

fn nvswitch() -> ScaleUp {
    ScaleUp::NvSwitch {
        generation: 4,
        per_gpu_gbit_s: Bandwidth::from_gbit_s(3600.0),
    }
}

fn server(name: &str) -> Device {
    node(name, "server", "gpu-a", 8, &["nic-ib"], nvswitch())
}

/// Two servers with one 400G InfiniBand NIC each, on one switch, by in-rack DAC.
/// Servers 2 × $100,000 + NICs 2 × $1,000 + switch $20,000 + DACs 2 × $100 = $222,200.
fn two_servers() -> (Design, DeviceId) {
    let mut d = Design::new("two servers");
    let n0 = d.add_device(server("node-0"));
    let n1 = d.add_device(server("node-1"));
    let leaf = d.add_device(switch("leaf-0", "ib-switch", None));
    d.add_link(link(
        n0,
        Port::Nic(0),
        leaf,
        Port::Switch(0),
        LinkTech::InfiniBand,
        400.0,
    ));
    d.add_link(link(
        n1,
        Port::Nic(0),
        leaf,
        Port::Switch(1),
        LinkTech::InfiniBand,
        400.0,
    ));
    (d, leaf)
}

/// The two-server design plus a spine joined by a two-lane cross-rack trunk:
/// + switch $20,000 + 2 lanes × 2 optics × $500 = $244,200.
fn with_spine() -> Design {
    let (mut d, leaf) = two_servers();
    let spine = d.add_device(switch("spine-0", "ib-switch", None));
    d.add_link(
        link(
            leaf,
            Port::Switch(2),
            spine,
            Port::Switch(0),
            LinkTech::InfiniBand,
            400.0,
        )
        .with_lanes(2)
        .with_length(LengthClass::CrossRack),
    );
    d
}

fn line<'a>(lines: &'a [BomLine], part: &str) -> &'a BomLine {
    lines
        .iter()
        .find(|l| l.part.as_str() == part)
        .unwrap_or_else(|| panic!("no BOM line for {part}"))
}

fn close(a: f64, b: f64) -> bool {
    (a - b).abs() < 1e-6
}

#[test]
fn two_servers_on_one_switch_cost_222_200() {
    let (design, _) = two_servers();
    let lines = bom_lines(&design, &catalog());
    assert_eq!(lines.len(), 4, "server, NIC, switch, DAC: {lines:#?}");
    assert_eq!(line(&lines, "server").quantity, 2);
    assert_eq!(line(&lines, "nic-ib").quantity, 2);
    assert_eq!(line(&lines, "ib-switch").quantity, 1);
    assert_eq!(line(&lines, "dac-400g").quantity, 2);
    assert_eq!(line(&lines, "dac-400g").category, BomCategory::CablesOptics);
    assert_eq!(line(&lines, "server").extended_price.0, 200_000.0);

    let summary = cost_summary(&lines);
    assert_eq!(summary.total.0, 222_200.0);
    assert_eq!(summary.nodes.0, 200_000.0);
    assert_eq!(summary.nics.0, 2_000.0);
    assert_eq!(summary.switches.0, 20_000.0);
    assert_eq!(summary.cables_optics.0, 200.0);
    assert_eq!(summary.nvswitch.0, 0.0);
    // 2 × 10 kW + 2 × 25 W + 1 kW; the DACs draw nothing.
    assert_eq!(summary.power_total.0, 21_050.0);
}

#[test]
fn shares_are_worked_out_from_the_same_lines() {
    let (design, _) = two_servers();
    let summary = cost_summary(&bom_lines(&design, &catalog()));
    let switch_share = summary.switch_cost_share().expect("non-zero total");
    let network_share = summary.network_cost_share().expect("non-zero total");
    // 20,000 / 222,200 and (20,000 + 2,000 + 200) / 222,200.
    assert!(close(switch_share, 0.090_009_000_9), "{switch_share}");
    assert!(close(network_share, 0.099_909_990_9), "{network_share}");
    assert_eq!(
        railyard::analysis::cost::switch_cost_share(&summary),
        Some(switch_share)
    );
    assert_eq!(
        railyard::analysis::cost::network_cost_share(&summary),
        Some(network_share)
    );
}

#[test]
fn cross_rack_lanes_take_two_optics_each() {
    let design = with_spine();
    let lines = bom_lines(&design, &catalog());
    assert_eq!(line(&lines, "optic-400g").quantity, 4);
    assert_eq!(line(&lines, "ib-switch").quantity, 2);
    assert_eq!(line(&lines, "dac-400g").quantity, 2);
    let summary = cost_summary(&lines);
    assert_eq!(summary.total.0, 244_200.0);
    assert_eq!(summary.cables_optics.0, 2_200.0);
    // 21,050 W + a switch (1,000 W) + 4 optics × 12 W.
    assert_eq!(summary.power_total.0, 22_098.0);
}

#[test]
fn named_cable_overrides_the_derived_one() {
    let (mut d, leaf) = two_servers();
    let spine = d.add_device(switch("spine-0", "ib-switch", None));
    let mut aoc = link(
        leaf,
        Port::Switch(2),
        spine,
        Port::Switch(0),
        LinkTech::InfiniBand,
        400.0,
    )
    .with_length(LengthClass::CrossRack)
    .with_lanes(3);
    aoc.cable = Some(PartId::new("aoc-400g"));
    d.add_link(aoc);
    let mut optic = link(
        leaf,
        Port::Switch(3),
        spine,
        Port::Switch(1),
        LinkTech::InfiniBand,
        400.0,
    );
    optic.cable = Some(PartId::new("optic-400g"));
    d.add_link(optic);
    let lines = bom_lines(&d, &catalog());
    // An AOC has both ends built in: one per lane. A named transceiver still needs two.
    assert_eq!(line(&lines, "aoc-400g").quantity, 3);
    assert_eq!(line(&lines, "optic-400g").quantity, 2);
    // 222,200 + 20,000 + 3 × 700 + 2 × 500.
    assert_eq!(cost_summary(&lines).total.0, 245_300.0);
}

#[test]
fn lane_rate_picks_the_next_cable_grade_up() {
    let (mut d, leaf) = two_servers();
    // 300 Gb/s has no grade of its own: it takes the 400G DAC. 60 Gb/s takes a 100G DAC.
    let n2 = d.add_device(server("node-2"));
    d.add_link(link(
        n2,
        Port::Nic(0),
        leaf,
        Port::Switch(2),
        LinkTech::InfiniBand,
        300.0,
    ));
    let n3 = d.add_device(node(
        "node-3",
        "server",
        "gpu-a",
        8,
        &["nic-eth"],
        nvswitch(),
    ));
    let esw = d.add_device(switch("eth-0", "free-switch", None));
    d.add_link(link(
        n3,
        Port::Nic(0),
        esw,
        Port::Switch(0),
        LinkTech::RoceV2,
        60.0,
    ));
    let lines = bom_lines(&d, &catalog());
    assert_eq!(line(&lines, "dac-400g").quantity, 3);
    assert_eq!(line(&lines, "dac-100g").quantity, 1);
    assert_eq!(
        railyard::analysis::cost::cable_speed_grade(300.0),
        Some(400)
    );
    assert_eq!(railyard::analysis::cost::cable_speed_grade(60.0), Some(100));
}

#[test]
fn workstation_pays_for_its_gpus_and_bridges() {
    let mut d = Design::new("workstation");
    // GPUs not in the chassis price: $3,000 + 4 × $2,000. Bridge pairs with none drawn:
    // 4 / 2 = 2 bridges at $80.
    d.add_device(node(
        "tower",
        "workstation",
        "gpu-b",
        4,
        &[],
        ScaleUp::NvLinkBridgePairs {
            per_gpu_gbit_s: Bandwidth::from_gbit_s(900.0),
            pcie_generation: 4,
            peer_to_peer: true,
        },
    ));
    let lines = bom_lines(&d, &catalog());
    assert_eq!(line(&lines, "gpu-b").quantity, 4);
    assert_eq!(line(&lines, "gpu-b").category, BomCategory::Gpus);
    assert_eq!(line(&lines, "nvlink-bridge").quantity, 2);
    let summary = cost_summary(&lines);
    assert_eq!(summary.nodes.0, 11_000.0);
    assert_eq!(summary.cables_optics.0, 160.0);
    assert_eq!(summary.total.0, 11_160.0);
    // 300 W chassis + 4 × 450 W.
    assert_eq!(summary.power_total.0, 2_100.0);
    // Servers whose price includes their GPUs get no GPU line.
    let (servers, _) = two_servers();
    assert!(
        bom_lines(&servers, &catalog())
            .iter()
            .all(|l| l.category != BomCategory::Gpus)
    );
}

#[test]
fn drawn_bridges_are_not_counted_twice() {
    let mut d = Design::new("bridged");
    let tower = d.add_device(node(
        "tower",
        "workstation",
        "gpu-b",
        4,
        &[],
        ScaleUp::NvLinkBridgePairs {
            per_gpu_gbit_s: Bandwidth::from_gbit_s(900.0),
            pcie_generation: 4,
            peer_to_peer: true,
        },
    ));
    d.add_link(link(
        tower,
        Port::Gpu(0),
        tower,
        Port::Gpu(1),
        LinkTech::NvLinkBridge,
        900.0,
    ));
    d.add_link(link(
        tower,
        Port::Gpu(2),
        tower,
        Port::Gpu(3),
        LinkTech::NvLinkBridge,
        900.0,
    ));
    let lines = bom_lines(&d, &catalog());
    assert_eq!(line(&lines, "nvlink-bridge").quantity, 2);
}

#[test]
fn thunderbolt_macs_and_an_nvlink_rack() {
    let mut d = Design::new("macs");
    let a = d.add_device(node(
        "mac-a",
        "mac",
        "mac-gpu",
        1,
        &[],
        ScaleUp::UnifiedMemory,
    ));
    let b = d.add_device(node(
        "mac-b",
        "mac",
        "mac-gpu",
        1,
        &[],
        ScaleUp::UnifiedMemory,
    ));
    d.add_link(link(
        a,
        Port::Thunderbolt(0),
        b,
        Port::Thunderbolt(0),
        LinkTech::Thunderbolt5,
        80.0,
    ));
    let summary = cost_summary(&bom_lines(&d, &catalog()));
    // 2 × $4,000 + one TB5 cable at $70.
    assert_eq!(summary.total.0, 8_070.0);
    assert_eq!(summary.cables_optics.0, 70.0);

    let mut r = Design::new("rack");
    let rack = r.add_device(Device {
        id: DeviceId(0),
        name: "nvl-0".into(),
        pos: Pos::default(),
        group: None,
        kind: DeviceKind::NvSwitchDomain(NvSwitchDomain {
            model: PartId::new("rack"),
        }),
    });
    for i in 0..2 {
        let mut tray = node("tray", "tray", "gpu-a", 4, &[], nvswitch());
        tray.name = format!("tray-{i}");
        if let DeviceKind::GpuNode(n) = &mut tray.kind {
            n.domain = Some(rack);
        }
        let t = r.add_device(tray);
        // NVLink inside the rack: no cable line.
        r.add_link(link(
            t,
            Port::NvLink,
            rack,
            Port::Slot(i),
            LinkTech::NvLink,
            14_400.0,
        ));
    }
    let lines = bom_lines(&r, &catalog());
    assert_eq!(lines.len(), 2, "{lines:#?}");
    assert!(line(&lines, "rack").estimate);
    let summary = cost_summary(&lines);
    assert_eq!(summary.nvswitch.0, 1_000_000.0);
    assert_eq!(summary.nodes.0, 100_000.0);
    assert_eq!(summary.total.0, 1_100_000.0);
    assert_eq!(summary.power_total.0, 30_000.0);
}

#[test]
fn hosts_land_in_other_and_their_nics_in_nics() {
    let mut d = Design::new("storage");
    d.add_device(Device {
        id: DeviceId(0),
        name: "store-0".into(),
        pos: Pos::default(),
        group: None,
        kind: DeviceKind::Host(Host {
            role: HostRole::Storage,
            model: Some(PartId::new("cpu-server")),
            nics: vec![NicSlot {
                part: PartId::new("nic-eth"),
                gpudirect: false,
            }],
        }),
    });
    let summary = cost_summary(&bom_lines(&d, &catalog()));
    assert_eq!(summary.other.0, 8_000.0);
    assert_eq!(summary.nics.0, 500.0);
    assert_eq!(summary.total.0, 8_500.0);
}

#[test]
fn unknown_ids_are_left_out_without_panicking() {
    let (mut d, leaf) = two_servers();
    let n2 = d.add_device(node(
        "odd",
        "no-such-node",
        "gpu-a",
        8,
        &["no-such-nic"],
        nvswitch(),
    ));
    // 200G has no DAC in the test catalog.
    d.add_link(link(
        n2,
        Port::Nic(0),
        leaf,
        Port::Switch(2),
        LinkTech::InfiniBand,
        200.0,
    ));
    let summary = cost_summary(&bom_lines(&d, &catalog()));
    assert_eq!(summary.total.0, 222_200.0);
}

#[test]
fn empty_and_unpriced_designs_have_no_share() {
    let empty = cost_summary(&bom_lines(&Design::new("empty"), &catalog()));
    assert_eq!(empty.total.0, 0.0);
    assert_eq!(empty.switch_cost_share(), None);
    assert_eq!(empty.network_cost_share(), None);

    let mut d = Design::new("free");
    d.add_device(switch("sw", "free-switch", None));
    let lines = bom_lines(&d, &catalog());
    assert!(
        lines[0].estimate,
        "an unpriced part is marked as an estimate"
    );
    let summary = cost_summary(&lines);
    assert_eq!(summary.total.0, 0.0);
    assert_eq!(summary.power_total.0, 50.0);
    assert_eq!(summary.switch_cost_share(), None);
}

#[test]
fn metrics_carry_the_same_totals() {
    let design = with_spine();
    let m = railyard::analysis::evaluate(&design, &catalog());
    assert_eq!(m.gpus, 16);
    assert_eq!(m.nodes, 2);
    assert_eq!(m.switches, 2);
    assert_eq!(m.links, 3);
    assert_eq!(m.cost.total.0, 244_200.0);
    assert_eq!(m.power.0, 22_098.0);
    // 40,000 / 244,200 and (40,000 + 2,000 + 2,200) / 244,200.
    assert!(close(
        m.switch_cost_share.unwrap_or(f64::NAN),
        40_000.0 / 244_200.0
    ));
    assert!(close(
        m.network_cost_share.unwrap_or(f64::NAN),
        44_200.0 / 244_200.0
    ));
    assert!(m.checks.is_empty(), "{:#?}", m.checks);
}

fn read_csv(bytes: &[u8]) -> (csv::StringRecord, Vec<csv::StringRecord>) {
    let mut reader = csv::Reader::from_reader(bytes);
    let header = reader.headers().expect("header").clone();
    let rows = reader
        .records()
        .collect::<Result<Vec<_>, _>>()
        .expect("rows parse");
    (header, rows)
}

#[test]
fn csv_rows_add_up_to_the_total() {
    let lines = bom_lines(&with_spine(), &catalog());
    let options = BomOptions::default();
    let mut bytes = Vec::new();
    write_bom_csv(&lines, &mut bytes, &options).expect("writes");
    let (header, rows) = read_csv(&bytes);
    assert_eq!(
        header.iter().collect::<Vec<_>>(),
        [
            "category",
            "part_id",
            "vendor",
            "model",
            "description",
            "quantity",
            "unit_price_usd",
            "extended_price_usd",
            "unit_power_w",
            "total_power_w",
            "price_source",
            "price_date",
            "estimate"
        ]
    );
    // server, NIC, switch, DAC, optic.
    assert_eq!(rows.len(), 5);
    let extended: f64 = rows
        .iter()
        .map(|r| r[7].parse::<f64>().expect("price is a number"))
        .sum();
    assert_eq!(extended, 244_200.0);
    assert_eq!(bom_total(&lines, &options).0, 244_200.0);
    let switch_row = rows
        .iter()
        .find(|r| &r[1] == "ib-switch")
        .expect("switch row");
    // Commas and quotes in a description survive the round trip.
    assert_eq!(&switch_row[4], "Switch, 4 × 400G \"test\"");
    assert_eq!(&switch_row[5], "2");
    assert_eq!(&switch_row[6], "20000.00");
    assert_eq!(&switch_row[7], "40000.00");
    assert_eq!(&switch_row[8], "1000.00");
    assert_eq!(&switch_row[9], "2000.00");
    assert_eq!(&switch_row[10], "test sheet");
    assert_eq!(&switch_row[11], "2025-02");
    assert_eq!(&switch_row[12], "false");
    assert_eq!(&switch_row[0], "switches");
}

#[test]
fn csv_discount_and_currency_label() {
    let lines = bom_lines(&with_spine(), &catalog());
    let options = BomOptions {
        currency_label: "EUR".into(),
        discount: 0.10,
    };
    let mut bytes = Vec::new();
    write_bom_csv(&lines, &mut bytes, &options).expect("writes");
    let (header, rows) = read_csv(&bytes);
    assert_eq!(&header[6], "unit_price_eur");
    assert_eq!(&header[7], "extended_price_eur");
    // 10 % off each unit: 2 × 90,000 + 2 × 900 + 2 × 18,000 + 2 × 90 + 4 × 450.
    let extended: f64 = rows
        .iter()
        .map(|r| r[7].parse::<f64>().unwrap_or(0.0))
        .sum();
    assert_eq!(extended, 219_780.0);
    assert_eq!(bom_total(&lines, &options).0, 219_780.0);
    // A discount outside 0..=1 is clamped rather than producing negative prices.
    let silly = BomOptions {
        discount: 1.5,
        ..BomOptions::default()
    };
    assert_eq!(bom_total(&lines, &silly).0, 0.0);
}

#[test]
fn csv_of_an_empty_design_is_just_the_header() {
    let mut bytes = Vec::new();
    write_bom_csv(&[], &mut bytes, &BomOptions::default()).expect("writes");
    let (header, rows) = read_csv(&bytes);
    assert_eq!(header.len(), 13);
    assert!(rows.is_empty());
    assert_eq!(bom_total(&[], &BomOptions::default()).0, 0.0);
}
