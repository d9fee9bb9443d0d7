//! As built against as drawn (`railyard check-cabling`): a fault of each kind on the DGX H100
//! SuperPOD scalable unit (`presets/dgx-h100-superpod-su.ron`: 32 nodes, NIC k of every node on
//! leaf-r<k> port node−1, each leaf 32 × 400 Gb/s down and 32 up to 4 spines; bisection
//! 51.2 Tb/s, half of 256 NICs at 400 Gb/s), the listing parser on both forms, the sample
//! listing and the page `docs/check-cabling.md` made from it.

use railyard::analysis::as_built::{CablingReport, FaultKind, check_cabling, resolve};
use railyard::io::ib_names::{NameMap, parse_name_map};
use railyard::io::ibnetdiscover::{
    IbParseError, design_as_ibnetdiscover, normalize_guid, parse_observed,
};
use railyard::io::load_design;
use railyard::model::{
    Catalog, Design, Device, DeviceKind, Endpoint, Host, HostRole, Link, LinkTech, Port, Pos,
};
use std::path::PathBuf;
use std::process::{Command, Output};

fn root() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
}

const PRESET: &str = "presets/dgx-h100-superpod-su.ron";
const SAMPLE: &str = "tests/data/ibnetdiscover/superpod-su-as-built.txt";
const PAGE: &str = "docs/check-cabling.md";

fn su() -> Design {
    load_design(&root().join(PRESET)).expect("the preset loads")
}

fn device(design: &Design, name: &str) -> railyard::model::DeviceId {
    design
        .devices
        .iter()
        .find(|d| d.name == name)
        .map(|d| d.id)
        .unwrap_or_else(|| panic!("no {name}"))
}

/// Index of the link at `name`'s `port`.
fn link_at(design: &Design, name: &str, port: Port) -> usize {
    let end = Endpoint::new(device(design, name), port);
    design
        .links
        .iter()
        .position(|l| l.a == end || l.b == end)
        .unwrap_or_else(|| panic!("nothing at {name} {port}"))
}

/// The drawn design checked against `built` cabled as `ibnetdiscover` would list it.
fn check(drawn: &Design, built: &Design) -> CablingReport {
    let listing = design_as_ibnetdiscover(built);
    let observed = parse_observed(&listing).expect("our own listing parses");
    check_cabling(
        drawn,
        &Catalog::builtin(),
        &resolve(drawn, &observed, &NameMap::default()),
    )
}

/// NIC `nic` of `node` cabled to `leaf`'s port where `other`'s NIC of the same number is drawn.
fn swap_nics(design: &mut Design, node: &str, x: u32, y: u32) {
    let (i, j) = (
        link_at(design, node, Port::Nic(x)),
        link_at(design, node, Port::Nic(y)),
    );
    let (px, py) = (design.links[i].a.port, design.links[j].a.port);
    design.links[i].a.port = py;
    design.links[j].a.port = px;
}

/// The sample: the scalable unit with node-03's NIC 0 and 1 swapped, node-20's NIC 5 cable
/// left out, node-12's NIC 4 cabled into the leaf-r5 port that freed, a UFM appliance
/// plugged into the leaf-r4 port node-12 left, and node-07's NIC 2 cable trained at HDR.
fn sample_as_built() -> Design {
    let mut built = su();
    swap_nics(&mut built, "node-03", 0, 1);
    let hdr = link_at(&built, "node-07", Port::Nic(2));
    built.links[hdr].rate_gbit_s = gbit(200.0);
    let gone = link_at(&built, "node-20", Port::Nic(5));
    let freed = built.links.remove(gone).b;
    let moved = link_at(&built, "node-12", Port::Nic(4));
    let left = built.links[moved].b;
    built.links[moved].b = freed;
    let ufm = built.add_device(Device {
        id: railyard::model::DeviceId(0),
        name: "ufm-01".into(),
        pos: Pos::default(),
        group: None,
        kind: DeviceKind::Host(Host {
            role: HostRole::Cpu,
            model: None,
            nics: Vec::new(),
        }),
    });
    built.add_link(Link::new(
        Endpoint::new(ufm, Port::Nic(0)),
        left,
        LinkTech::InfiniBand,
        railyard::model::Bandwidth::from_gbit_s(400.0),
    ));
    built
}

fn rail_only() -> Design {
    load_design(&root().join("presets/rail-only-1tier.ron")).expect("the preset loads")
}

fn gbit(x: f64) -> railyard::model::Bandwidth {
    railyard::model::Bandwidth::from_gbit_s(x)
}

/// The one fault of a report.
fn only_fault(r: &CablingReport) -> &railyard::analysis::as_built::Fault {
    assert_eq!(r.faults.len(), 1, "{:#?}", r.faults);
    &r.faults[0]
}

#[test]
fn a_fabric_cabled_as_drawn_has_no_faults() {
    let drawn = su();
    let r = check(&drawn, &drawn);
    assert!(r.is_clean(), "{:#?}", r.faults);
    assert_eq!((r.drawn, r.built, r.matched), (512, 512, 512));
    assert_eq!(r.as_built, r.as_drawn);
    assert_eq!(r.as_drawn.bisection_gbit_s, 51_200.0);
}

/// node-20's NIC 5 uncabled: the best balanced cut puts node-20 in one half, whose 16 nodes
/// now inject 16 × 3.2 Tb/s − 400 Gb/s into a non-blocking fabric: bisection 50.8 Tb/s,
/// exactly one cable's 400 Gb/s less. The all-reduce slows: GPU 5 of node-20 reaches rail 5
/// through another NIC, which then carries two rails' share.
#[test]
fn a_missing_cable_names_its_rail_and_costs_one_cable_of_bisection() {
    let drawn = su();
    let mut built = drawn.clone();
    built.links.remove(link_at(&built, "node-20", Port::Nic(5)));
    let r = check(&drawn, &built);
    let f = only_fault(&r);
    assert_eq!(f.kind, FaultKind::Missing);
    assert_eq!(f.rails, vec![5]);
    assert_eq!(f.drawn, vec!["node-20:nic5 <-> leaf-r5:p19"]);
    let cost = f.cost.as_ref().expect("modelled");
    assert_eq!(cost.bisection_gbit_s, -400.0);
    assert!(cost.all_reduce_us.expect("runs") > 0.0, "{cost:?}");
    assert_eq!(r.as_built.bisection_gbit_s, 50_800.0);
}

/// node-20's NIC 5 cable trained at 100 Gb/s (a quarter of its 4xNDR: three lanes lost, or
/// an EDR-only part): cabled where drawn, so only the rate says so. It carries a quarter of
/// its 400 Gb/s, so the cut loses 300 Gb/s of the 400 the missing cable above loses.
#[test]
fn a_cable_slower_than_drawn_is_a_slow_fault_with_its_cost() {
    let drawn = su();
    let mut built = drawn.clone();
    let i = link_at(&built, "node-20", Port::Nic(5));
    built.links[i].rate_gbit_s = gbit(100.0);
    let r = check(&drawn, &built);
    let f = only_fault(&r);
    assert_eq!(f.kind, FaultKind::Slow);
    assert_eq!(f.rails, vec![5]);
    assert_eq!(f.drawn, vec!["node-20:nic5 <-> leaf-r5:p19"]);
    assert!(
        f.summary.contains("runs at 100 Gb/s, drawn at 400 Gb/s") && f.summary.contains("25 %"),
        "{}",
        f.summary
    );
    let cost = f.cost.as_ref().expect("modelled");
    assert_eq!(cost.bisection_gbit_s, -300.0);
    assert_eq!(r.as_built.bisection_gbit_s, 50_900.0);
    // The whole fabric trained at HDR (200 Gb/s): every cable is slow, and the cut halves.
    let mut hdr = drawn.clone();
    for l in &mut hdr.links {
        l.rate_gbit_s = gbit(200.0);
    }
    let r = check(&drawn, &hdr);
    assert_eq!(r.faults.len(), 512);
    assert!(r.faults.iter().all(|f| f.kind == FaultKind::Slow));
    assert_eq!(r.as_built.bisection_gbit_s, 25_600.0);
}

/// An inter-switch cable nobody drew between the rail-0 and rail-1 switches of the rail-only
/// unit (both have 32 free ports): bisection is already full (51.2 Tb/s, half of 256 NICs at
/// 400 Gb/s) and cannot grow; the all-reduce runs within rails and does not change.
#[test]
fn an_extra_cable_is_reported_with_its_rails() {
    let drawn = rail_only();
    let mut built = drawn.clone();
    built.add_link(Link::new(
        Endpoint::new(device(&built, "leaf-r0"), Port::Switch(40)),
        Endpoint::new(device(&built, "leaf-r1"), Port::Switch(41)),
        LinkTech::InfiniBand,
        gbit(400.0),
    ));
    let r = check(&drawn, &built);
    let f = only_fault(&r);
    assert_eq!(f.kind, FaultKind::Extra);
    assert_eq!(f.rails, vec![0, 1]);
    assert_eq!(f.built, vec!["leaf-r0:p40 <-> leaf-r1:p41"]);
    let cost = f.cost.as_ref().expect("modelled");
    assert_eq!(cost.bisection_gbit_s, 0.0);
    assert_eq!(cost.all_reduce_us, Some(0.0));
}

/// node-03's NIC 0 and NIC 1 cables exchanged at the node: each NIC sits on the other's rail.
/// Every node still has 8 × 400 Gb/s into a non-blocking fabric, so bisection holds; rails 0
/// and 1 of node-03 now cross the spines, and the all-reduce is slower.
#[test]
fn cables_swapped_within_a_node_break_both_rails() {
    let drawn = su();
    let mut built = drawn.clone();
    swap_nics(&mut built, "node-03", 0, 1);
    let r = check(&drawn, &built);
    let f = only_fault(&r);
    assert_eq!(f.kind, FaultKind::Swapped);
    assert_eq!(f.rails, vec![0, 1]);
    assert_eq!(
        f.built,
        vec!["node-03:nic0 <-> leaf-r1:p2", "node-03:nic1 <-> leaf-r0:p2"]
    );
    let cost = f.cost.as_ref().expect("modelled");
    assert_eq!(cost.bisection_gbit_s, 0.0);
    assert!(cost.all_reduce_us.expect("runs") > 0.0, "{cost:?}");
}

/// node-12's NIC 4 on the rail-5 leaf of the scalable unit, in the port node-20's NIC 5 left
/// free: alone, it keeps node-12's 8 × 400 Gb/s into the non-blocking fabric (bisection
/// unchanged) and sends rail 4's traffic of node-12 over the spines (the all-reduce slower).
#[test]
fn a_nic_on_another_rails_leaf_is_a_wrong_rail_fault() {
    let drawn = su();
    let mut built = drawn.clone();
    let gone = link_at(&built, "node-20", Port::Nic(5));
    let freed = built.links.remove(gone).b;
    let moved = link_at(&built, "node-12", Port::Nic(4));
    built.links[moved].b = freed;
    let r = check(&drawn, &built);
    assert_eq!(r.faults.len(), 2, "{:#?}", r.faults);
    let f = &r.faults[0];
    assert_eq!(f.kind, FaultKind::WrongRail);
    assert_eq!(f.rails, vec![4, 5]);
    assert_eq!(f.drawn, vec!["node-12:nic4 <-> leaf-r4:p11"]);
    assert_eq!(f.built, vec!["node-12:nic4 <-> leaf-r5:p19"]);
    let cost = f.cost.as_ref().expect("modelled");
    assert_eq!(cost.bisection_gbit_s, 0.0);
    assert!(cost.all_reduce_us.expect("runs") > 0.0, "{cost:?}");
    assert_eq!(r.faults[1].kind, FaultKind::Missing);
}

/// On the rail-only unit (no spine) the same miswiring costs bisection: with node-12 in one
/// half, rail 4 joins 15 of its nodes to 16 and rail 5 17 to 16, so 6 × 16 + 15 + 16 = 127
/// cables cross instead of 128: 50.8 Tb/s, one cable's 400 Gb/s less. And the model cannot run
/// the all-reduce at all: rail 4's ring has no path from leaf-r4 to node-12's NIC.
#[test]
fn without_a_spine_a_wrong_rail_costs_a_cable_of_bisection_and_the_all_reduce() {
    let drawn = rail_only();
    let mut built = drawn.clone();
    let i = link_at(&built, "node-12", Port::Nic(4));
    built.links[i].b = Endpoint::new(device(&built, "leaf-r5"), Port::Switch(40));
    let r = check(&drawn, &built);
    let f = only_fault(&r);
    assert_eq!(f.kind, FaultKind::WrongRail);
    assert_eq!(f.rails, vec![4, 5]);
    let cost = f.cost.as_ref().expect("modelled");
    assert_eq!(cost.bisection_gbit_s, -400.0);
    assert_eq!(cost.all_reduce_us, None);
    assert!(
        cost.all_reduce_error
            .as_deref()
            .is_some_and(|e| e.contains("not connected")),
        "{cost:?}"
    );
}

/// A cable on another port of the leaf it was drawn to: a labelling fault that costs nothing.
#[test]
fn a_cable_on_another_port_of_its_leaf_is_moved_and_costs_nothing() {
    let drawn = rail_only();
    let mut built = drawn.clone();
    let i = link_at(&built, "node-12", Port::Nic(4));
    built.links[i].b.port = Port::Switch(40);
    let r = check(&drawn, &built);
    let f = only_fault(&r);
    assert_eq!(f.kind, FaultKind::Moved);
    assert_eq!(f.rails, vec![4]);
    let cost = f.cost.as_ref().expect("modelled");
    assert_eq!(cost.bisection_gbit_s, 0.0);
    assert_eq!(cost.all_reduce_us, Some(0.0));
}

/// Fabric names that are not the design's: a host renamed, mapped back by name, and one HCA
/// known by GUID with its NIC number.
#[test]
fn a_mapping_file_maps_fabric_names_onto_the_design() {
    let drawn = su();
    let listing = design_as_ibnetdiscover(&drawn)
        .replace("\"node-01 mlx5_", "\"dgx-a01 mlx5_")
        .replace("\"node-02 mlx5_3\"", "\"storage-nic\"");
    let observed = parse_observed(&listing).expect("parses");
    let catalog = Catalog::builtin();
    let unmapped = check_cabling(
        &drawn,
        &catalog,
        &resolve(&drawn, &observed, &NameMap::default()),
    );
    assert!(!unmapped.is_clean());
    // node-02 is device 1: its NIC 3 HCA has GUID 0002c903 0000011 3 in our listing.
    let map = parse_name_map("dgx-a01, node-01\nstorage-nic, node-02, 3\n").expect("parses");
    let mapped = check_cabling(&drawn, &catalog, &resolve(&drawn, &observed, &map));
    assert!(mapped.is_clean(), "{:#?}", mapped.faults);
    let by_guid =
        parse_name_map("dgx-a01, node-01\n0x0002c90300000113, node-02, 3\n").expect("parses");
    let mapped = check_cabling(&drawn, &catalog, &resolve(&drawn, &observed, &by_guid));
    assert!(mapped.is_clean(), "{:#?}", mapped.faults);
}

/// A listing as a real fabric prints it: attributes, a switch's and an HCA's blocks, each
/// cable seen from both ends, kept once.
#[test]
fn ibnetdiscover_output_reads_as_cables() {
    let text = "#
# Topology file: generated on Tue Mar  4 10:12:01 2025
#
# Initiated from node 0002c9030010b1b0 port 0002c9030010b1b1

vendid=0x2c9
devid=0xd2f0
sysimgguid=0xb83fd203004a5b3e
switchguid=0xb83fd203004a5b36(b83fd203004a5b36)
Switch	64 \"S-b83fd203004a5b36\"		# \"MF0;leaf-r0:MQM9700/U1\" enhanced port 0 lid 1 lmc 0
[1]	\"H-0002c9030010b1b0\"[1](2c9030010b1b1) 		# \"node-01 mlx5_0\" lid 5 4xNDR
[33]	\"S-b83fd203004a5c00\"[1]		# \"MF0;spine-01:MQM9700/U1\" lid 2 4xNDR

vendid=0x2c9
devid=0x1021
sysimgguid=0x2c9030010b1b0
caguid=0x2c9030010b1b0
Ca	1 \"H-0002c9030010b1b0\"		# \"node-01 mlx5_0\"
[1](2c9030010b1b1) 	\"S-b83fd203004a5b36\"[1]		# lid 5 lmc 0 \"MF0;leaf-r0:MQM9700/U1\" lid 1 4xNDR
";
    let cables = parse_observed(text).expect("parses");
    assert_eq!(cables.len(), 2, "{cables:#?}");
    let c = &cables[0];
    assert_eq!(c.line, 11);
    assert_eq!(
        (c.a.description.as_str(), c.a.port, c.a.switch),
        ("MF0;leaf-r0:MQM9700/U1", 1, true)
    );
    assert_eq!(
        (c.b.description.as_str(), c.b.port, c.b.switch),
        ("node-01 mlx5_0", 1, false)
    );
    assert_eq!(c.b.guid, normalize_guid("0x0002c9030010b1b0"));
    assert_eq!(c.rate, Some(gbit(400.0)));
    assert_eq!(cables[1].b.description, "MF0;spine-01:MQM9700/U1");
    // Mapped onto the scalable unit: leaf-r0 port 1 is p0, node-01's mlx5_0 is NIC 0.
    let drawn = su();
    let built = resolve(&drawn, &cables, &NameMap::default());
    assert_eq!(
        built[0].b,
        railyard::analysis::as_built::BuiltEnd::Known(Endpoint::new(
            device(&drawn, "node-01"),
            Port::Nic(0)
        ))
    );
}

/// The table form: names optional, GUIDs with or without 0x, both directions kept once.
#[test]
fn the_port_table_form_reads_as_cables() {
    let text = "LocalPort | LocalGUID | RemotePort | RemoteGUID | LocalName | RemoteName
1 | 0xb83fd203004a5b36 | 1 | 0x0002c9030010b1b0 | MF0;leaf-r0:MQM9700/U1 | node-01 mlx5_0
1 | 0002c9030010b1b0 | 1 | b83fd203004a5b36 | node-01 mlx5_0 | MF0;leaf-r0:MQM9700/U1
";
    let cables = parse_observed(text).expect("parses");
    assert_eq!(cables.len(), 1);
    assert_eq!(cables[0].a.guid, "b83fd203004a5b36");
    assert_eq!(cables[0].b.description, "node-01 mlx5_0");
    let bare = "LocalPort|LocalGUID|RemotePort|RemoteGUID\n3|0x10|1|0x20\n";
    let cables = parse_observed(bare).expect("parses");
    assert_eq!((cables[0].a.port, cables[0].b.guid.as_str()), (3, "20"));
}

#[test]
fn a_bad_line_names_its_line_and_column() {
    let err =
        parse_observed("Switch 64 \"S-00ab\" # \"leaf\"\n[1] \"X-12\"[1]\n").expect_err("refused");
    assert_eq!(
        err,
        IbParseError::Syntax {
            line: 2,
            column: 6,
            message: "`X-12` is not S-, H- or R-GUID".into()
        }
    );
    let err = parse_observed("[1] \"H-12\"[1]\n").expect_err("refused");
    assert!(
        matches!(
            err,
            IbParseError::Syntax {
                line: 1,
                column: 1,
                ..
            }
        ),
        "{err}"
    );
    let err = parse_observed("LocalPort|LocalGUID|RemotePort|RemoteGUID\n1|0x10|one|0x20\n")
        .expect_err("refused");
    assert_eq!(
        err,
        IbParseError::Syntax {
            line: 2,
            column: 8,
            message: "`one` is not a port number".into()
        }
    );
}

fn railyard(args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_railyard"))
        .current_dir(root())
        .args(args)
        .output()
        .expect("runs")
}

/// `UPDATE_SNAPSHOTS=1` rewrites the sample listing and the page.
fn updating() -> bool {
    std::env::var_os("UPDATE_SNAPSHOTS").is_some()
}

#[test]
fn the_sample_listing_is_the_preset_with_its_faults() {
    let expected = design_as_ibnetdiscover(&sample_as_built());
    let path = root().join(SAMPLE);
    if updating() {
        std::fs::create_dir_all(path.parent().expect("a folder")).expect("mkdir");
        std::fs::write(&path, &expected).expect("writes");
    }
    let committed = std::fs::read_to_string(&path).expect("the sample");
    assert!(
        committed == expected,
        "{SAMPLE} is stale: rerun with UPDATE_SNAPSHOTS=1"
    );
}

/// The page quotes the command's table on the sample, between the markers.
#[test]
fn the_page_is_the_commands_output_on_the_sample() {
    let out = railyard(&["check-cabling", PRESET, "--from", SAMPLE]);
    assert_eq!(
        out.status.code(),
        Some(3),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let table = String::from_utf8(out.stdout).expect("UTF-8");
    let page_path = root().join(PAGE);
    let page = std::fs::read_to_string(&page_path).expect("the page");
    let (head, rest) = page
        .split_once(BEGIN)
        .expect("the page has its begin marker");
    let (_, tail) = rest.split_once(END).expect("the page has its end marker");
    let expected = format!("{head}{BEGIN}{table}{END}{tail}");
    if updating() {
        std::fs::write(&page_path, &expected).expect("writes");
    } else {
        assert!(
            page == expected,
            "{PAGE} is stale: rerun with UPDATE_SNAPSHOTS=1"
        );
    }
    for kind in ["swapped", "wrong rail", "missing", "extra"] {
        assert!(table.contains(kind), "{table}");
    }
}

const BEGIN: &str = "<!-- output of: railyard check-cabling presets/dgx-h100-superpod-su.ron --from tests/data/ibnetdiscover/superpod-su-as-built.txt -->\n```text\n";
const END: &str = "```\n";

#[test]
fn the_command_prints_json_and_exits_0_when_clean_and_2_on_a_bad_listing() {
    let dir = tempfile::tempdir().expect("a temporary folder");
    let clean = dir.path().join("clean.txt");
    std::fs::write(&clean, design_as_ibnetdiscover(&su())).expect("writes");
    let clean = clean.to_str().expect("UTF-8");
    let out = railyard(&["check-cabling", PRESET, "--from", clean]);
    assert_eq!(out.status.code(), Some(0));
    assert!(String::from_utf8_lossy(&out.stdout).contains("no faults"));

    let out = railyard(&["check-cabling", PRESET, "--from", SAMPLE, "--json"]);
    assert_eq!(out.status.code(), Some(3));
    let json: serde_json::Value = serde_json::from_slice(&out.stdout).expect("JSON");
    let kinds: Vec<&str> = json["faults"]
        .as_array()
        .expect("faults")
        .iter()
        .filter_map(|f| f["kind"].as_str())
        .collect();
    assert_eq!(kinds, ["swapped", "wrong-rail", "missing", "extra", "slow"]);
    // node-07's NIC 2 at HDR carries half its 400 Gb/s: the cut loses 200.
    assert_eq!(json["faults"][4]["cost"]["bisection_gbit_s"], -200.0);
    assert_eq!(json["faults"][2]["cost"]["bisection_gbit_s"], -400.0);
    assert_eq!(json["as_drawn"]["bisection_gbit_s"], 51_200.0);

    let bad = dir.path().join("bad.txt");
    std::fs::write(&bad, "Switch 64 \"S-00ab\" # \"leaf\"\n[x]\n").expect("writes");
    let out = railyard(&[
        "check-cabling",
        PRESET,
        "--from",
        bad.to_str().expect("UTF-8"),
    ]);
    assert_eq!(out.status.code(), Some(2));
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(
        err.contains("bad.txt: line 2, column 2: expected a port number"),
        "{err}"
    );
}

#[test]
fn the_sample_names_a_rail_breaking_nic() {
    let r = check(&su(), &sample_as_built());
    let kinds: Vec<FaultKind> = r.faults.iter().map(|f| f.kind).collect();
    assert_eq!(
        kinds,
        [
            FaultKind::Swapped,
            FaultKind::WrongRail,
            FaultKind::Missing,
            FaultKind::Extra,
            FaultKind::Slow
        ]
    );
    assert!(r.faults[3].cost.is_none(), "ufm-01 is not in the design");
    // node-20's missing cable (400 Gb/s) and node-07's at half rate (200) both cross the cut.
    assert_eq!(r.as_built.bisection_gbit_s, 50_600.0);
}
