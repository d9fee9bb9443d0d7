//! Transceivers on shared cages: one twin-port module per two ports of a twin-port OSFP cage
//! or per broken-out switch port, counted by hand on a small test catalog, and the built-in
//! rail-optimized scalable unit's optics worked out from its parts.

mod common;

use common::design::{link, preset, switch};
use railyard::analysis::cost::{BomLine, bom_lines};
use railyard::analysis::optic_cages::automatic_parts_text;
use railyard::io::export::cables::write_cable_plan;
use railyard::model::{
    Catalog, Design, Device, DeviceId, DeviceKind, GpuNode, LengthClass, LinkTech, NicSlot, PartId,
    Port, Pos, ScaleUp,
};

/// Optics $500 (400G) and $900 (800G twin-port), so a shared cage is visible in the total.
const CATALOG: &str = r#"(
    version: 1,
    parts: [
        (id: "gpu", vendor: "Test", model: "GPU", spec: Gpu((arch: Hopper, memory_gb: 80.0, pcie_generation: 5))),
        (id: "nic-400", vendor: "Test", model: "400G NIC", spec: Nic((family: InfiniBand, ports: 1, port_gbit_s: 400.0, rdma: true, pcie_generation: 5))),
        (id: "nic-200", vendor: "Test", model: "200G NIC", spec: Nic((family: InfiniBand, ports: 1, port_gbit_s: 200.0, rdma: true, pcie_generation: 5))),
        (id: "twin-node", vendor: "Test", model: "Two NICs on one twin-port cage",
         spec: Node((gpu: "gpu", gpu_count: 2, gpus_included_in_price: true, scale_up: Pcie, nic: Some("nic-400"), nic_count: 2, nic_ports_per_cage: 2, pcie_generation: 5))),
        (id: "plain-node", vendor: "Test", model: "One NIC, one cage",
         spec: Node((gpu: "gpu", gpu_count: 1, gpus_included_in_price: true, scale_up: Pcie, nic: Some("nic-400"), nic_count: 1, pcie_generation: 5))),
        (id: "twin-switch", vendor: "Test", model: "8 x 400G on 4 twin-port cages",
         spec: Switch((family: InfiniBand, ports: 8, port_gbit_s: 400.0, max_breakout: 2, ports_per_cage: 2))),
        (id: "eth-switch", vendor: "Test", model: "4 x 800G",
         spec: Switch((family: Ethernet, ports: 4, port_gbit_s: 800.0, max_breakout: 2))),
        (id: "optic-200g", vendor: "Test", model: "Optic 200G", price: Some((usd: 300.0, date: "2025", source: "test")),
         spec: Cable((medium: Transceiver, speed_gbit_s: 200.0, max_length_m: 100.0, family: Both))),
        (id: "optic-400g", vendor: "Test", model: "Optic 400G", price: Some((usd: 500.0, date: "2025", source: "test")),
         spec: Cable((medium: Transceiver, speed_gbit_s: 400.0, max_length_m: 100.0, family: Both))),
        (id: "optic-800g", vendor: "Test", model: "Optic 800G twin-port", price: Some((usd: 900.0, date: "2025", source: "test")),
         spec: Cable((medium: Transceiver, speed_gbit_s: 800.0, max_length_m: 100.0, family: Both))),
    ],
)"#;

fn catalog() -> Catalog {
    Catalog::parse(CATALOG, "test").expect("test catalog parses")
}

fn node(name: &str, model: &str, nics: &[&str]) -> Device {
    Device {
        id: DeviceId(0),
        name: name.to_string(),
        pos: Pos::default(),
        group: None,
        kind: DeviceKind::GpuNode(GpuNode {
            model: PartId::new(model),
            gpu: PartId::new("gpu"),
            gpu_count: 1,
            scale_up: ScaleUp::UnifiedMemory,
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

/// A cross-rack InfiniBand or Ethernet link: the bill derives its optics.
fn optical(d: &mut Design, a: (DeviceId, Port), b: (DeviceId, Port), tech: LinkTech, gbit_s: f64) {
    d.add_link(link(a.0, a.1, b.0, b.1, tech, gbit_s).with_length(LengthClass::CrossRack));
}

/// `count` one-NIC nodes (NIC part `nic`), each optical at `gbit_s` into a port of a new
/// switch of part `switch_model`; returns the design and the switch.
fn fan_in(
    switch_model: &str,
    nic: &str,
    tech: LinkTech,
    gbit_s: f64,
    count: u32,
) -> (Design, DeviceId) {
    let mut d = Design::new("fan-in");
    let s = d.add_device(switch("leaf", switch_model, None));
    for k in 0..count {
        let n = d.add_device(node(&format!("node-{k}"), "plain-node", &[nic]));
        optical(
            &mut d,
            (n, Port::Nic(0)),
            (s, Port::Switch(k)),
            tech,
            gbit_s,
        );
    }
    (d, s)
}

/// A node's two NICs, on one twin-port cage, optical into two ports of a twin-cage switch.
fn twin_pair() -> Design {
    let mut d = Design::new("twin");
    let n = d.add_device(node("node", "twin-node", &["nic-400", "nic-400"]));
    let s = d.add_device(switch("leaf", "twin-switch", None));
    for k in 0..2 {
        optical(
            &mut d,
            (n, Port::Nic(k)),
            (s, Port::Switch(k)),
            LinkTech::InfiniBand,
            400.0,
        );
    }
    d
}

/// Each optic part and its count.
fn optics(design: &Design, catalog: &Catalog) -> Vec<(String, u64)> {
    bom_lines(design, catalog)
        .iter()
        .filter(|l| l.part.as_str().starts_with("optic-"))
        .map(|l: &BomLine| (l.part.as_str().to_string(), l.quantity))
        .collect()
}

fn pairs(expected: &[(&str, u64)]) -> Vec<(String, u64)> {
    expected.iter().map(|(p, n)| (p.to_string(), *n)).collect()
}

#[test]
fn two_ports_of_a_twin_cage_share_one_module_at_each_end() {
    // A node's two NICs on one cage, to two ports of a twin-cage switch: one 800G module at
    // each end ($1,800), where one 400G optic per end would be four ($2,000).
    let d = twin_pair();
    assert_eq!(optics(&d, &catalog()), pairs(&[("optic-800g", 2)]));
    let cost: f64 = bom_lines(&d, &catalog())
        .iter()
        .map(|l| l.extended_price.0)
        .sum();
    assert!((cost - 1800.0).abs() < 1e-9, "{cost}");
}

#[test]
fn a_single_port_nic_keeps_its_own_optic_and_an_odd_cage_still_takes_a_module() {
    // Three one-NIC nodes into a twin-cage switch: three 400G optics at the NICs, and the
    // switch's three ends fill two cages (⌈3 / 2⌉), the second half empty.
    let (d, _) = fan_in("twin-switch", "nic-400", LinkTech::InfiniBand, 400.0, 3);
    assert_eq!(
        optics(&d, &catalog()),
        pairs(&[("optic-400g", 3), ("optic-800g", 2)])
    );
}

#[test]
fn a_broken_out_port_is_one_cage_and_a_slower_link_fills_a_port_alone() {
    // An 800G port broken out to 2 × 400G: two 400G links into it take one 800G module
    // with splitter fibre at the switch, one 400G optic at each node.
    let (mut d, s) = fan_in("eth-switch", "nic-400", LinkTech::Ethernet, 400.0, 2);
    if let Some(DeviceKind::Switch(sw)) = d.device_mut(s).map(|x| &mut x.kind) {
        sw.breakout = 2;
    }
    assert_eq!(
        optics(&d, &catalog()),
        pairs(&[("optic-400g", 2), ("optic-800g", 1)])
    );

    // Unbroken, the same 400G links run below the 800G port's rate: each port is filled by
    // one link and takes that link's 400G optic.
    if let Some(DeviceKind::Switch(sw)) = d.device_mut(s).map(|x| &mut x.kind) {
        sw.breakout = 1;
    }
    assert_eq!(optics(&d, &catalog()), pairs(&[("optic-400g", 4)]));

    // A 200G NIC into a 400G twin cage: one 200G optic per end, no twin module.
    let (d, _) = fan_in("twin-switch", "nic-200", LinkTech::InfiniBand, 200.0, 2);
    assert_eq!(optics(&d, &catalog()), pairs(&[("optic-200g", 4)]));
}

#[test]
fn without_the_cage_module_in_the_catalog_each_end_keeps_its_optic() {
    let text = CATALOG.replace(
        r#"(id: "optic-800g", vendor: "Test", model: "Optic 800G twin-port", price: Some((usd: 900.0, date: "2025", source: "test")),
         spec: Cable((medium: Transceiver, speed_gbit_s: 800.0, max_length_m: 100.0, family: Both))),"#,
        "",
    );
    let catalog = Catalog::parse(&text, "test").expect("parses");
    assert!(catalog.get(&PartId::new("optic-800g")).is_none());
    let d = twin_pair();
    assert_eq!(optics(&d, &catalog), pairs(&[("optic-400g", 4)]));
}

#[test]
fn the_scalable_unit_buys_one_twin_port_module_per_two_ports() {
    // dgx-h100-superpod-su.ron: 32 DGX H100 (8 NICs on 4 twin-port cages each) on 8 rail
    // leaves and 4 spines, all QM9700 (64 ports on 32 twin-port cages), every link optical.
    // DGX side: 32 × 4 cages = 128 modules. Leaves: 32 down + 32 up = 64 ports = 32 cages,
    // × 8 = 256. Spines: 64 ports = 32 cages, × 4 = 128. 512 twin-port modules at $1,250:
    // $640,000, where 1,024 single 400G optics at $800 were $819,200.
    let catalog = Catalog::builtin();
    let design = preset("dgx-h100-superpod-su.ron");
    assert_eq!(optics(&design, &catalog), pairs(&[("optic-800g", 512)]));
    let line = bom_lines(&design, &catalog)
        .into_iter()
        .find(|l| l.part.as_str() == "optic-800g")
        .expect("a line for the twin-port modules");
    assert!((line.extended_price.0 - 640_000.0).abs() < 1e-6);

    // The cut sheet names each end's module: a DGX cage and a leaf cage.
    let mut bytes = Vec::new();
    write_cable_plan(&design, &catalog, &mut bytes).expect("a cable plan");
    let mut reader = csv::Reader::from_reader(bytes.as_slice());
    let headers = reader.headers().expect("a header").clone();
    let column = |name: &str| headers.iter().position(|h| h == name).expect(name);
    let first = reader.records().next().expect("a row").expect("a record");
    assert_eq!(&first[column("label")], "node-01:nic0 <-> leaf-r0:p0");
    assert_eq!(&first[column("a_transceiver")], "optic-800g");
    assert_eq!(&first[column("b_transceiver")], "optic-800g");
    assert_eq!(&first[column("part")], "");
}

/// The 3:1 fat-tree preset: 22 DGX H100 hang from their leaves on copper, all 8 NICs of a
/// node on one leaf, so each of a node's twin-port cages meets one of its leaf's: 176 links in
/// 88 twin-port DACs (2 × 400G, MCP4Y10-class), not 176 single-port DACs that would not fill
/// an OSFP twin-port cage. The cable plan names the twin for each link, and the inspector says
/// the pair shares one.
#[test]
fn copper_between_twin_port_cages_is_one_twin_dac_per_two_links() {
    let catalog = Catalog::builtin();
    let design = preset("dgx-h100-fat-tree-3to1.ron");
    let quantity = |part: &str| {
        bom_lines(&design, &catalog)
            .into_iter()
            .find(|l| l.part.as_str() == part)
            .map_or(0, |l| l.quantity)
    };
    let copper = design
        .links
        .iter()
        .filter(|l| l.length == LengthClass::InRack && l.tech == LinkTech::InfiniBand)
        .count() as u64;
    assert_eq!(copper, 176);
    assert_eq!(quantity("dac-800g"), copper / 2);
    assert_eq!(quantity("dac-400g"), 0);
    let link = design
        .links
        .iter()
        .find(|l| l.length == LengthClass::InRack && l.tech == LinkTech::InfiniBand)
        .expect("a copper link");
    let text = automatic_parts_text(&design, &catalog, link).expect("a part");
    assert!(text.starts_with("one port of dac-800g between "), "{text}");
    let mut bytes = Vec::new();
    write_cable_plan(&design, &catalog, &mut bytes).expect("a cable plan");
    let plan = String::from_utf8(bytes).expect("UTF-8");
    assert!(!plan.contains("dac-400g"), "{plan}");
    assert!(plan.contains("dac-800g"));
    // The plan's quantities add up to the bill's: a twin counts on the cable that opens it,
    // and the cable that shares it says whose it is (before, every row said 1: 176).
    let planned = |design: &Design, part: &str| -> u64 {
        let mut bytes = Vec::new();
        write_cable_plan(design, &catalog, &mut bytes).expect("a cable plan");
        let mut reader = csv::Reader::from_reader(bytes.as_slice());
        let headers = reader.headers().expect("a header").clone();
        let column = |name: &str| headers.iter().position(|h| h == name).expect(name);
        reader
            .records()
            .map(|r| r.expect("a record"))
            .filter(|r| &r[column("part")] == part)
            .map(|r| r[column("part_quantity")].parse::<u64>().expect("a count"))
            .sum()
    };
    assert_eq!(planned(&design, "dac-800g"), 88);
    assert!(
        plan.contains(&format!("(shares the DAC of {})", link.id)),
        "{plan}"
    );
    // One cable fewer between a node and its leaf: its partner keeps a dac-400g of its own,
    // in the plan as in the bill.
    let mut odd = design.clone();
    let gone = odd
        .links
        .iter()
        .position(|l| l.id == link.id)
        .expect("there");
    odd.links.remove(gone);
    let bill = |part: &str| {
        bom_lines(&odd, &catalog)
            .into_iter()
            .find(|l| l.part.as_str() == part)
            .map_or(0, |l| l.quantity)
    };
    assert_eq!((bill("dac-800g"), bill("dac-400g")), (87, 1));
    assert_eq!(
        (planned(&odd, "dac-800g"), planned(&odd, "dac-400g")),
        (87, 1)
    );
}

/// The SuperPOD unit on Spectrum-X instead: the DGX's ConnectX-7 run as 400GbE still plug
/// into its four twin-port cages, so the node side is 32 × 4 = 128 twin-port modules, as on
/// InfiniBand, not 256 single-port optics. The SN5600's 64 × 800G ports split 2 × 400G are
/// its own cages: 256 node links and 256 uplinks at the leaves and 256 at the spines, at 2
/// lanes a cage = 384 modules. 512 in all, every one an 800G twin-port.
#[test]
fn a_dgx_on_ethernet_nics_keeps_its_twin_port_cages() {
    use railyard::generate::{Template, TemplateSpec, generate};
    use railyard::model::Transport;
    let catalog = Catalog::builtin();
    let mut spec = TemplateSpec::new(Template::RailOptimized);
    spec.nodes = Some(32);
    spec.node = Some(PartId::new("dgx-h100"));
    spec.nic = Some(PartId::new("cx7-400gbe"));
    spec.switch = Some(PartId::new("sn5600"));
    spec.transport = Some(Transport::Rdma);
    let design = generate(&spec, &catalog).expect("generates");
    assert_eq!(optics(&design, &catalog), pairs(&[("optic-800g", 512)]));
}

#[test]
fn the_inspector_says_what_each_end_takes() {
    let catalog = catalog();
    let d = twin_pair();
    assert_eq!(
        automatic_parts_text(&d, &catalog, &d.links[0]).as_deref(),
        Some(
            "optic-800g at node (a cage shared by 2 ports), \
             optic-800g at leaf (a cage shared by 2 ports)"
        )
    );
    let (d, _) = fan_in("twin-switch", "nic-200", LinkTech::InfiniBand, 200.0, 1);
    assert_eq!(
        automatic_parts_text(&d, &catalog, &d.links[0]).as_deref(),
        Some("optic-200g at node-0, optic-200g at leaf")
    );
    // In a rack: one copper cable, whatever the cages.
    let mut d = twin_pair();
    d.links[0].length = LengthClass::InRack;
    assert_eq!(
        automatic_parts_text(&d, &catalog, &d.links[0]).as_deref(),
        Some("1 × dac-400g")
    );
}

/// `star` of `n` workstations, each with one 25 GbE ConnectX-4 Lx, on a MikroTik CRS504
/// (4 × 100G QSFP28, each port broken out to 4 × 25G): copper in the rack.
fn breakout_star(n: u32) -> Design {
    use railyard::generate::{Template, TemplateSpec, generate};
    let mut spec = TemplateSpec::new(Template::Star);
    spec.nodes = Some(n);
    spec.node = Some(PartId::new("workstation"));
    spec.gpu = Some(PartId::new("rtx-3090"));
    spec.nic = Some(PartId::new("cx4lx-25gbe"));
    spec.switch = Some(PartId::new("crs504-4x100g"));
    generate(&spec, &Catalog::builtin()).expect("a 25 GbE star")
}

#[test]
fn a_broken_out_port_takes_a_splitter_dac_not_a_dac_per_link() {
    let catalog = Catalog::builtin();
    let quantity = |d: &Design, part: &str| {
        bom_lines(d, &catalog)
            .iter()
            .find(|l| l.part.as_str() == part)
            .map_or(0, |l| l.quantity)
    };
    // 2 legs fill one QSFP28 breakout ($70), not 2 SFP28 DACs that would not plug in.
    let two = breakout_star(2);
    assert_eq!(quantity(&two, "dac-100g-4x25g"), 1);
    assert_eq!(quantity(&two, "dac-25g"), 0);
    // 5 legs: ⌈5 / 4⌉ = 2 splitters.
    assert_eq!(quantity(&breakout_star(5), "dac-100g-4x25g"), 2);
    // The cut sheet names the splitter on each leg; the leg that opens one counts it and the
    // others share it, so the column adds up to the bill: 1 + 0 for two legs, and for five
    // 1 + 0 + 0 + 0 + 1.
    let plan = |d: &Design| {
        let mut csv = Vec::new();
        write_cable_plan(d, &catalog, &mut csv).expect("cable plan");
        String::from_utf8(csv).expect("utf-8")
    };
    let text = plan(&two);
    let row = text.lines().nth(1).expect("a row");
    assert!(
        row.contains(
            ",dac-100g-4x25g,Generic 100G QSFP28 to 4x 25G SFP28 breakout DAC (one leg of 4),1,"
        ),
        "{row}"
    );
    let row = text.lines().nth(2).expect("a row");
    assert!(
        row.contains("(one leg of 4), shares the splitter of l0\",0,"),
        "{row}"
    );
    let counts: Vec<String> = plan(&breakout_star(5))
        .lines()
        .skip(1)
        .map(|r| {
            let fields: Vec<&str> = r.rsplitn(6, ',').collect();
            fields[4].to_string()
        })
        .collect();
    assert_eq!(counts, ["1", "0", "0", "0", "1"]);
    assert_eq!(
        automatic_parts_text(&two, &catalog, &two.links[0]).as_deref(),
        Some("a leg of dac-100g-4x25g at switch-01 (a splitter shared by 4 ports)")
    );
}

#[test]
fn a_single_nic_into_a_twin_port_cage_in_the_rack_is_a_twin_port_splitter() {
    // One 400G NIC per node into QM9700 twin-port cages, in the rack: each pair of ports
    // takes one 800G-to-2×400G splitter (MCP7Y00-class). Both ends on twin cages (the
    // twin_pair above, in a rack) keep a DAC each.
    let catalog = Catalog::builtin();
    let (mut d, _) = fan_in("qm9700", "cx7-ndr-400", LinkTech::InfiniBand, 400.0, 4);
    for l in &mut d.links {
        l.length = LengthClass::InRack;
    }
    let lines = bom_lines(&d, &catalog);
    let splitters = lines
        .iter()
        .find(|l| l.part.as_str() == "dac-800g-2x400g")
        .map_or(0, |l| l.quantity);
    assert_eq!(splitters, 2);
    assert!(lines.iter().all(|l| l.part.as_str() != "dac-400g"));
}
