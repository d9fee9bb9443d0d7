//! `railyard export` for other tools: every preset in every format (cable plan, NetBox,
//! draw.io, DOT, containerlab), each read back with a real parser (the `csv` crate,
//! quick-xml, dot-parser, yaml-rust2), against counts worked out from the design itself.

mod common;

use common::cli::railyard;
use common::design::{preset, presets, v1_end};
use railyard::io::export::ExportError;
use railyard::io::export::astra_sim::design_to_astra_sim;
use railyard::io::export::cables::write_cable_plan;
use railyard::io::export::containerlab::design_to_containerlab;
use railyard::io::export::dot::design_to_dot;
use railyard::io::export::drawio::design_to_drawio;
use railyard::io::export::htsim::design_to_htsim;
use railyard::io::export::netbox::{FILES, write_netbox_folder};
use railyard::io::export::simai::design_to_simai;
use railyard::model::{Catalog, Design, DeviceKind, LinkTech, Port, SwitchRole};
use std::collections::{BTreeSet, HashMap, HashSet};
use std::path::Path;

/// Links that are cables, by the rule the module documents: all but NVLink and PCIe,
/// unless a cable part is named.
fn cabled_count(design: &Design) -> usize {
    design
        .links
        .iter()
        .filter(|l| l.cable.is_some() || !matches!(l.tech, LinkTech::NvLink | LinkTech::Pcie))
        .count()
}

fn csv_rows(bytes: &[u8]) -> (Vec<String>, Vec<HashMap<String, String>>) {
    let mut reader = csv::Reader::from_reader(bytes);
    let headers: Vec<String> = reader
        .headers()
        .expect("a header")
        .iter()
        .map(str::to_string)
        .collect();
    let rows = reader
        .records()
        .map(|r| {
            let r = r.expect("a well-formed row");
            headers
                .iter()
                .cloned()
                .zip(r.iter().map(str::to_string))
                .collect()
        })
        .collect();
    (headers, rows)
}

fn cable_plan(design: &Design) -> Vec<HashMap<String, String>> {
    let mut bytes = Vec::new();
    let n = write_cable_plan(design, &Catalog::builtin(), &mut bytes).expect("a cable plan");
    let (headers, rows) = csv_rows(&bytes);
    assert_eq!(headers[0], "cable");
    assert_eq!(rows.len(), n);
    rows
}

#[test]
fn cable_plans_list_every_cable_with_both_ends() {
    for (name, design) in presets() {
        let rows = cable_plan(&design);
        assert_eq!(rows.len(), cabled_count(&design), "{name}");
        let names: HashSet<&str> = design.devices.iter().map(|d| d.name.as_str()).collect();
        for row in &rows {
            for side in ["a_device", "b_device"] {
                assert!(names.contains(row[side].as_str()), "{name}: {row:?}");
            }
            let label = format!(
                "{}:{} <-> {}:{}",
                row["a_device"], row["a_port"], row["b_device"], row["b_port"]
            );
            assert_eq!(row["label"], label, "{name}");
            assert!(
                ["in-rack", "cross-rack", "unknown"].contains(&row["length_class"].as_str()),
                "{name}: {row:?}"
            );
            let rate: f64 = row["rate_gbit_s"].parse().expect("a rate");
            let lanes: f64 = row["lanes"].parse().expect("lanes");
            let total: f64 = row["total_gbit_s"].parse().expect("a total");
            assert!((rate * lanes - total).abs() < 1e-9, "{name}: {row:?}");
        }
    }
}

#[test]
fn a_known_cable_reads_back_with_both_ends() {
    // workstation-star-10gbe.ron, link 0: node-01 (a workstation without NICs, so port 0
    // is its first on-board Ethernet port) to switch-01 port 0, 10 GbE, both in rack-01.
    let rows = cable_plan(&preset("workstation-star-10gbe.ron"));
    let l0 = rows.iter().find(|r| r["cable"] == "l0").expect("cable l0");
    assert_eq!(l0["label"], "node-01:eth0 <-> switch-01:p0");
    assert_eq!(
        (l0["a_rack"].as_str(), l0["b_rack"].as_str()),
        ("rack-01", "rack-01")
    );
    assert_eq!(l0["technology"], "Ethernet");
    assert_eq!(l0["rate_gbit_s"], "10");
    // The on-board port is 10GBASE-T: twisted pair, and an RJ-45 module in the SFP+ cage.
    assert_eq!(l0["part"], "cat6a");
    assert_eq!(l0["length_class"], "in-rack");
    assert_eq!(
        (l0["a_transceiver"].as_str(), l0["b_transceiver"].as_str()),
        ("", "sfp-10gbase-t")
    );

    // dgx-h100-superpod-su.ron, link 0: node-01 NIC 0 (rail 0) to leaf-r0 port 0, NDR
    // InfiniBand marked cross-rack: a transceiver at each end, and both ends sit on
    // twin-port cages (DGX H100, QM9700), so each names the 800G twin-port module.
    let rows = cable_plan(&preset("dgx-h100-superpod-su.ron"));
    let l0 = rows.iter().find(|r| r["cable"] == "l0").expect("cable l0");
    assert_eq!(l0["label"], "node-01:nic0 <-> leaf-r0:p0");
    assert_eq!(l0["technology"], "InfiniBand");
    assert_eq!(l0["rate_gbit_s"], "400");
    assert_eq!(l0["part"], "");
    // No cable part: the fibre between the optics is said to be outside the bill.
    assert_eq!(
        l0["part_model"],
        "fibre patch cord between the optics (not in the bill)"
    );
    assert_eq!(l0["a_transceiver"], "optic-800g");
    assert_eq!(l0["b_transceiver"], "optic-800g");
    assert_eq!(l0["length_class"], "cross-rack");

    // mac-studio-tb5-x4.ron: Thunderbolt ports are named as such.
    let rows = cable_plan(&preset("mac-studio-tb5-x4.ron"));
    assert!(
        rows.iter().all(|r| r["a_port"].starts_with("tb")),
        "{rows:?}"
    );
}

#[test]
fn netbox_folders_import_in_order_and_resolve() {
    let dir = tempfile::tempdir().expect("a temp dir");
    for (name, design) in presets() {
        let out = dir.path().join(name.trim_end_matches(".ron"));
        write_netbox_folder(&design, &Catalog::builtin(), &out).expect("a NetBox folder");
        let read = |file: &str| csv_rows(&std::fs::read(out.join(file)).expect("the file"));
        let (device_headers, devices) = read(FILES[0]);
        assert_eq!(
            device_headers,
            [
                "name",
                "role",
                "manufacturer",
                "device_type",
                "status",
                "site"
            ]
        );
        assert_eq!(devices.len(), design.devices.len(), "{name}");
        let (_, interfaces) = read(FILES[1]);
        let (cable_headers, cables) = read(FILES[2]);
        // NetBox's CableImportForm fields, in our column order.
        let netbox_fields = "side_a_device side_a_type side_a_name side_b_device side_b_type \
                             side_b_name type status label color length length_unit";
        assert_eq!(
            cable_headers,
            netbox_fields.split_whitespace().collect::<Vec<_>>()
        );
        assert_eq!(cables.len(), cabled_count(&design), "{name}");
        assert_eq!(interfaces.len(), 2 * cables.len(), "{name}");
        let device_names: HashSet<&str> = devices.iter().map(|d| d["name"].as_str()).collect();
        let ports: HashSet<(&str, &str)> = interfaces
            .iter()
            .map(|i| (i["device"].as_str(), i["name"].as_str()))
            .collect();
        assert_eq!(ports.len(), interfaces.len(), "{name}: an interface twice");
        let netbox_types = [
            "",
            "dac-passive",
            "dac-active",
            "aoc",
            "usb",
            "mmf",
            "smf",
            "cat6a",
        ];
        for c in &cables {
            for side in ["side_a", "side_b"] {
                let device = c[&format!("{side}_device")].as_str();
                let port = c[&format!("{side}_name")].as_str();
                assert!(device_names.contains(device), "{name}: {c:?}");
                assert!(ports.contains(&(device, port)), "{name}: {c:?}");
                assert_eq!(c[&format!("{side}_type")], "dcim.interface");
            }
            assert!(netbox_types.contains(&c["type"].as_str()), "{c:?}");
            assert_eq!(c["status"], "planned");
        }
    }
}

/// Vertex ids and (id, source, target) of edges of a draw.io file.
fn read_drawio(text: &str) -> (Vec<String>, Vec<(String, String, String)>, String) {
    use quick_xml::events::Event;
    let mut reader = quick_xml::Reader::from_str(text);
    reader.config_mut().check_end_names = true;
    let (mut vertices, mut edges, mut diagram) = (Vec::new(), Vec::new(), String::new());
    let mut object_id: Option<String> = None;
    loop {
        match reader.read_event().expect("well-formed XML") {
            Event::Start(e) | Event::Empty(e) => {
                let attr = |name: &str| {
                    e.try_get_attribute(name).expect("an attribute").map(|a| {
                        a.normalized_value(quick_xml::XmlVersion::Implicit1_0)
                            .expect("a value")
                            .into_owned()
                    })
                };
                // A cell with data sits in an `<object>` that carries its id.
                let id = || attr("id").or_else(|| object_id.clone()).expect("an id");
                match e.name().as_ref() {
                    b"diagram" => diagram = attr("name").expect("a diagram name"),
                    b"object" => object_id = attr("id"),
                    b"mxCell" if attr("vertex").as_deref() == Some("1") => {
                        vertices.push(id());
                    }
                    b"mxCell" if attr("edge").as_deref() == Some("1") => edges.push((
                        id(),
                        attr("source").expect("a source"),
                        attr("target").expect("a target"),
                    )),
                    _ => {}
                }
            }
            Event::End(e) if e.name().as_ref() == b"object" => object_id = None,
            Event::Eof => break,
            _ => {}
        }
    }
    (vertices, edges, diagram)
}

#[test]
fn drawio_edges_resolve_to_vertices() {
    for (name, design) in presets() {
        let text = design_to_drawio(&design);
        assert!(
            text.contains(r#"<object id="0" label="" railyard_design="#)
                && text.contains(r#"<mxCell id="1" parent="0"/>"#)
        );
        let (vertices, edges, diagram) = read_drawio(&text);
        assert_eq!(diagram, design.name, "{name}");
        assert_eq!(vertices.len(), design.devices.len(), "{name}");
        assert_eq!(edges.len(), design.links.len(), "{name}");
        let ids: HashSet<&String> = vertices.iter().chain(edges.iter().map(|e| &e.0)).collect();
        assert_eq!(
            ids.len(),
            vertices.len() + edges.len(),
            "{name}: ids are unique"
        );
        let vertex_ids: HashSet<&String> = vertices.iter().collect();
        for (id, source, target) in &edges {
            assert!(
                vertex_ids.contains(source) && vertex_ids.contains(target),
                "{name}: {id}"
            );
        }
    }
}

#[test]
fn drawio_escapes_names_and_carries_canvas_colours() {
    let mut design = preset("workstation-star-10gbe.ron");
    design.name = r#"Lab <A> & "B""#.to_string();
    design.devices[0].name = "node <1> & 'x'".to_string();
    let text = design_to_drawio(&design);
    let (_, _, diagram) = read_drawio(&text);
    assert_eq!(diagram, design.name);
    assert!(text.contains("node &lt;1&gt; &amp; &apos;x&apos;"));
    // Ethernet's colour on the canvas and in the SVG.
    assert!(text.contains("strokeColor=#4285f4"), "{text}");
    assert!(text.contains(r#"label="Ethernet 10 Gb/s""#));
}

fn tier(kind: &DeviceKind) -> Option<&'static str> {
    match kind {
        DeviceKind::GpuNode(_) | DeviceKind::Host(_) => Some("nodes"),
        DeviceKind::Switch(s) => Some(match s.role {
            SwitchRole::Leaf => "leaves",
            SwitchRole::Spine => "spines",
            SwitchRole::Core => "cores",
        }),
        DeviceKind::NvSwitchDomain(_) => None,
    }
}

fn unquote(id: &str) -> String {
    id.trim_matches('"').to_string()
}

#[test]
fn dot_has_one_rank_group_per_tier() {
    use dot_parser::ast::{Graph, Stmt};
    for (name, design) in presets() {
        let text = design_to_dot(&design);
        let graph = Graph::try_from(text.as_str()).unwrap_or_else(|e| panic!("{name}: {e}"));
        assert!(!graph.is_digraph);
        let expected: BTreeSet<&str> = design
            .devices
            .iter()
            .filter_map(|d| tier(&d.kind))
            .collect();
        let mut groups: BTreeSet<String> = BTreeSet::new();
        let mut ranked: HashMap<String, String> = HashMap::new();
        for stmt in &graph.stmts {
            let Stmt::Subgraph(sub) = stmt else { continue };
            let rank_same = sub.stmts.stmts.iter().any(|s| {
                s.get_ideq_ref()
                    .is_some_and(|(k, v)| k == "rank" && unquote(v) == "same")
            });
            assert!(rank_same, "{name}: a subgraph without rank=same");
            let group = unquote(sub.id.as_deref().expect("a named subgraph"));
            for s in &sub.stmts.stmts {
                if let Some(node) = s.get_node_ref() {
                    ranked.insert(unquote(&node.node.id), group.clone());
                }
            }
            assert!(groups.insert(group), "{name}: a tier twice");
        }
        let groups: BTreeSet<&str> = groups.iter().map(String::as_str).collect();
        assert_eq!(groups, expected, "{name}");
        for d in &design.devices {
            assert_eq!(
                ranked.get(&d.id.to_string()).map(String::as_str),
                tier(&d.kind),
                "{name}: {}",
                d.name
            );
        }
        let canonical = dot_parser::canonical::Graph::from(graph);
        assert_eq!(canonical.edges.set.len(), design.links.len(), "{name}");
        assert_eq!(canonical.nodes.set.len(), design.devices.len(), "{name}");
    }
}

#[test]
fn containerlab_endpoints_refer_to_declared_nodes_once() {
    use yaml_rust2::{Yaml, YamlLoader};
    for (name, design) in presets() {
        let text = design_to_containerlab(&design, &Catalog::builtin()).expect("a topology");
        let docs = YamlLoader::load_from_str(&text).unwrap_or_else(|e| panic!("{name}: {e}"));
        let doc = &docs[0];
        assert!(doc["name"].as_str().is_some_and(|n| !n.is_empty()));
        let nodes = doc["topology"]["nodes"].as_hash().expect("nodes");
        let expected_nodes = design
            .devices
            .iter()
            .filter(|d| !matches!(d.kind, DeviceKind::NvSwitchDomain(_)))
            .count();
        assert_eq!(nodes.len(), expected_nodes, "{name}");
        let declared: HashSet<&str> = nodes.keys().filter_map(Yaml::as_str).collect();
        for node in nodes.values() {
            let kind = node["kind"].as_str().expect("a kind");
            assert!(["nokia_srlinux", "linux"].contains(&kind), "{kind}");
        }
        let links = doc["topology"]["links"].as_vec().expect("links");
        let ethernet = design
            .links
            .iter()
            .filter(|l| l.tech.is_network() || l.tech.is_thunderbolt())
            .count();
        assert_eq!(links.len(), ethernet, "{name}");
        let mut used: HashSet<(String, String)> = HashSet::new();
        for link in links {
            let ends = link["endpoints"].as_vec().expect("endpoints");
            assert_eq!(ends.len(), 2);
            for end in ends {
                let (node, iface) = end
                    .as_str()
                    .and_then(|e| e.split_once(':'))
                    .expect("node:interface");
                assert!(declared.contains(node), "{name}: {node}");
                assert_ne!(iface, "eth0", "eth0 is containerlab's management interface");
                assert!(
                    used.insert((node.to_string(), iface.to_string())),
                    "{name}: {node}:{iface} used twice"
                );
            }
        }
    }
}

#[test]
fn containerlab_names_are_valid_and_unique() {
    use yaml_rust2::YamlLoader;
    let mut design = preset("workstation-star-10gbe.ron");
    design.devices[0].name = "node 01 (top)".to_string();
    design.devices[1].name = "node-01-top".to_string();
    design.devices[2].name = "node 01 top".to_string();
    let text = design_to_containerlab(&design, &Catalog::builtin()).expect("a topology");
    let doc = &YamlLoader::load_from_str(&text).expect("YAML")[0];
    let names: Vec<String> = doc["topology"]["nodes"]
        .as_hash()
        .expect("nodes")
        .keys()
        .map(|k| k.as_str().expect("a name").to_string())
        .collect();
    assert_eq!(
        names[..3],
        ["node-01-top", "node-01-top-2", "node-01-top-3"]
    );
    for n in &names {
        assert!(
            n.chars()
                .all(|c| c.is_ascii_alphanumeric() || "-_.".contains(c)),
            "{n}"
        );
    }
}

#[test]
fn a_reused_port_is_refused_with_its_reason() {
    let mut design = preset("workstation-star-10gbe.ron");
    design.links[1].b.port = Port::Switch(0);
    let err = write_cable_plan(&design, &Catalog::builtin(), Vec::new())
        .expect_err("two cables on switch-01 port 0");
    assert!(
        err.to_string()
            .contains("switch-01 port p0 carries both link l0 and link l1"),
        "{err}"
    );
}

#[test]
fn the_command_line_takes_the_format_from_the_extension_or_flag() {
    let dir = tempfile::tempdir().expect("a temp dir");
    let star = Path::new(env!("CARGO_MANIFEST_DIR")).join("presets/workstation-star-10gbe.ron");
    let star = star.to_str().expect("UTF-8");
    for (file, starts) in [
        ("plan.csv", "cable,label"),
        ("d.drawio", "<?xml"),
        ("d.gv", "graph "),
        ("lab.clab.yml", "# containerlab"),
    ] {
        let out = dir.path().join(file);
        let o = railyard(&["export", star, "-o", out.to_str().expect("UTF-8")]);
        assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
        let text = std::fs::read_to_string(&out).expect("written");
        assert!(text.starts_with(starts), "{file}: {text}");
    }
    let netbox = dir.path().join("nb");
    let o = railyard(&[
        "export",
        star,
        "--format",
        "netbox",
        "-o",
        netbox.to_str().expect("UTF-8"),
    ]);
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    for f in FILES {
        assert!(netbox.join(f).is_file(), "{f}");
    }
    let o = railyard(&["export", star, "--format", "dot", "-o", "-"]);
    assert!(String::from_utf8_lossy(&o.stdout).contains("rank=same"));

    for (args, says) in [
        (vec!["-o", "x.txt"], "cannot tell the format"),
        (vec!["-o", "x.svg", "--format", "dot"], "--format dot but"),
        (
            vec!["-o", "-", "--format", "netbox"],
            "cannot go to standard output",
        ),
        (
            vec!["-o", "x.dot", "--color", "rail"],
            "are for SVG and PNG",
        ),
        (vec!["--format", "xlsx", "-o", "x"], "not an export format"),
    ] {
        let mut all = vec!["export", star];
        all.extend(args);
        let o = railyard(&all);
        let err = String::from_utf8_lossy(&o.stderr);
        assert_eq!(o.status.code(), Some(2), "{err}");
        assert!(err.contains(says), "{err}");
    }
}

#[test]
fn a_network_link_to_an_nvswitch_domain_is_left_out_of_the_lab() {
    use railyard::model::{Bandwidth, Endpoint, Link};
    let mut design = preset("gb200-nvl72-pod.ron");
    let domain = design
        .devices
        .iter()
        .find(|d| matches!(d.kind, DeviceKind::NvSwitchDomain(_)))
        .expect("a domain")
        .id;
    let tray = design
        .devices
        .iter()
        .find(|d| matches!(d.kind, DeviceKind::GpuNode(_)))
        .expect("a tray")
        .id;
    let before = design_to_containerlab(&design, &Catalog::builtin()).expect("a topology");
    design.add_link(Link::new(
        Endpoint::new(tray, Port::Ethernet(900)),
        Endpoint::new(domain, Port::Slot(900)),
        LinkTech::Ethernet,
        Bandwidth::from_gbit_s(100.0),
    ));
    let after = design_to_containerlab(&design, &Catalog::builtin()).expect("a topology");
    assert_eq!(
        before.matches("- endpoints:").count(),
        after.matches("- endpoints:").count()
    );
}

/// `railyard export PRESET -o FILE` with the format left to FILE's extension: the text.
fn exported_by_extension(preset: &str, file: &str) -> String {
    let dir = tempfile::tempdir().expect("a temp dir");
    let design = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("presets")
        .join(preset);
    let out = dir.path().join(file);
    let o = railyard(&[
        "export",
        design.to_str().expect("UTF-8"),
        "-o",
        out.to_str().expect("UTF-8"),
    ]);
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    std::fs::read_to_string(&out).expect("written")
}

/// A simulator export refused as one it cannot express, saying why.
fn assert_refused(name: &str, result: Result<String, ExportError>, says: &str) {
    match result {
        Err(e @ ExportError::Unsupported { .. }) => {
            assert!(e.to_string().contains(says), "{name}: {e}");
        }
        other => panic!("{name}: {other:?}"),
    }
}

/// A SimAI topology read back as SimAI's `SetupNetwork` reads it: whitespace-separated
/// tokens, the header, `nvswitch_num + switch_num` switch ids, then `links` lines.
struct SimaiTopology {
    nodes: u32,
    gpus_per_server: u32,
    nvswitches: Vec<u32>,
    switches: Vec<u32>,
    gpu_type: String,
    /// src, dst, Gb/s, latency.
    links: Vec<(u32, u32, f64, String)>,
}

fn read_simai(text: &str) -> SimaiTopology {
    let mut t = text.split_whitespace();
    let mut num = |what: &str| -> u32 {
        t.next()
            .unwrap_or_else(|| panic!("{what} missing"))
            .parse()
            .unwrap_or_else(|e| panic!("{what}: {e}"))
    };
    let nodes = num("nodes");
    let gpus_per_server = num("gpus_per_server");
    let nvswitch_num = num("nvswitch_num");
    let switch_num = num("switch_num");
    let link_num = num("links");
    let gpu_type = t.next().expect("a GPU type").to_string();
    let mut num = |what: &str| -> u32 {
        t.next()
            .unwrap_or_else(|| panic!("{what} missing"))
            .parse()
            .unwrap_or_else(|e| panic!("{what}: {e}"))
    };
    let nvswitches = (0..nvswitch_num).map(|_| num("an NVSwitch id")).collect();
    let switches = (0..switch_num).map(|_| num("a switch id")).collect();
    let mut rest = text.lines().skip(2);
    let links: Vec<_> = (0..link_num)
        .map(|_| {
            let line = rest.next().expect("a link line");
            let f: Vec<&str> = line.split_whitespace().collect();
            assert_eq!(f.len(), 5, "{line}");
            let gbit_s: f64 = f[2]
                .strip_suffix("Gbps")
                .expect("a rate in Gbps")
                .parse()
                .expect("a number");
            assert_eq!(f[4], "0", "{line}");
            (
                f[0].parse().expect("src"),
                f[1].parse().expect("dst"),
                gbit_s,
                f[3].to_string(),
            )
        })
        .collect();
    assert!(
        rest.all(|l| l.trim().is_empty()),
        "lines after the last link"
    );
    SimaiTopology {
        nodes,
        gpus_per_server,
        nvswitches,
        switches,
        gpu_type,
        links,
    }
}

#[test]
fn simai_topologies_count_gpus_nvswitches_switches_and_links() {
    // hgx-h100-x4-roce: 4 servers × 8 H100 = 32 GPUs (ids 0-31), one NVSwitch per server
    // (32-35), one SN5600 (36): 37 nodes. Links: 32 NVLinks at 3600 Gb/s and 32 NICs at
    // 400 Gb/s, GPU i of server s on NIC i.
    let topo = read_simai(&design_to_simai(&preset("hgx-h100-x4-roce.ron")).expect("a topology"));
    assert_eq!(topo.nodes, 37);
    assert_eq!(topo.gpus_per_server, 8);
    assert_eq!(topo.nvswitches, [32, 33, 34, 35]);
    assert_eq!(topo.switches, [36]);
    assert_eq!(topo.gpu_type, "H100");
    assert_eq!(topo.links.len(), 64);
    for g in 0..32 {
        let mine: Vec<_> = topo.links.iter().filter(|l| l.0 == g).collect();
        assert_eq!(mine.len(), 2, "GPU {g}");
        assert_eq!(mine[0].1, 32 + g / 8, "GPU {g}'s NVSwitch");
        assert_eq!((mine[0].2, mine[0].3.as_str()), (3600.0, "0.000025ms"));
        assert_eq!(mine[1].1, 36);
        assert_eq!((mine[1].2, mine[1].3.as_str()), (400.0, "0.0005ms"));
    }

    // dgx-h100-superpod-su: 32 DGX = 256 GPUs, 32 NVSwitches (256-287), 8 rail leaves
    // (288-295) and 4 spines (296-299): 300 nodes. Each leaf has 8 cables to each spine:
    // 32 leaf-spine links of 3200 Gb/s. 256 NVLinks + 256 NIC links + 32 = 544 links.
    // Rail r's leaf is leaf-r<r>, so GPU g goes to leaf 288 + g mod 8.
    let topo =
        read_simai(&design_to_simai(&preset("dgx-h100-superpod-su.ron")).expect("a topology"));
    assert_eq!(topo.nodes, 300);
    assert_eq!(topo.nvswitches.len(), 32);
    assert_eq!(topo.switches, (288..300).collect::<Vec<_>>());
    assert_eq!(topo.links.len(), 544);
    let uplinks: Vec<_> = topo.links.iter().filter(|l| l.0 >= 288).collect();
    assert_eq!(uplinks.len(), 32);
    assert!(
        uplinks
            .iter()
            .all(|l| l.0 < 296 && l.1 >= 296 && l.2 == 3200.0)
    );
    for g in 0..256 {
        let nic: Vec<_> = topo
            .links
            .iter()
            .filter(|l| l.0 == g && l.1 >= 288)
            .collect();
        assert_eq!(nic.len(), 1, "GPU {g}");
        assert_eq!((nic[0].1, nic[0].2), (288 + g % 8, 400.0), "GPU {g}");
    }

    // gb200-nvl72-pod: 8 NVL72 domains of 18 trays × 4 GPUs: 576 GPUs, 72 per "server",
    // one NVSwitch per domain (576-583), 32 leaves + 9 spines (584-624): 625 nodes. Every
    // leaf has 2 cables to every spine: 288 links of 800 Gb/s. 576 + 576 + 288 = 1440.
    let topo = read_simai(&design_to_simai(&preset("gb200-nvl72-pod.ron")).expect("a topology"));
    assert_eq!(topo.nodes, 625);
    assert_eq!(topo.gpus_per_server, 72);
    assert_eq!(topo.nvswitches, (576..584).collect::<Vec<_>>());
    assert_eq!(topo.switches.len(), 41);
    assert_eq!(topo.links.len(), 1440);
    assert!(
        topo.links
            .iter()
            .filter(|l| l.1 >= 576 && l.1 < 584)
            .all(|l| l.2 == 7200.0 && l.1 == 576 + l.0 / 72)
    );
    assert_eq!(topo.links.iter().filter(|l| l.2 == 800.0).count(), 288);

    // dgx-h100-fat-tree-3to1: 5 leaves with 8 cables to each of 2 spines, one with 3.
    let topo =
        read_simai(&design_to_simai(&preset("dgx-h100-fat-tree-3to1.ron")).expect("a topology"));
    assert_eq!(topo.nodes, 256 + 32 + 8);
    assert_eq!(topo.links.len(), 256 + 256 + 12);
    let uplinks: Vec<f64> = topo
        .links
        .iter()
        .filter(|l| l.0 >= 288)
        .map(|l| l.2)
        .collect();
    assert_eq!(uplinks.iter().filter(|&&r| r == 3200.0).count(), 10);
    assert_eq!(uplinks.iter().filter(|&&r| r == 1200.0).count(), 2);
}

#[test]
fn simai_refuses_what_it_cannot_express_with_the_reason() {
    for (name, says) in [
        ("mac-studio-tb5-x4.ron", "no switches"),
        ("rtx4090-pair-25gbe.ron", "no switches"),
        ("workstation-star-10gbe.ron", "not joined by NVSwitch"),
    ] {
        assert_refused(name, design_to_simai(&preset(name)), says);
    }
    // Four NICs for eight GPUs cannot be one NIC per GPU.
    let mut design = preset("hgx-h100-x4-roce.ron");
    for d in &mut design.devices {
        if let DeviceKind::GpuNode(n) = &mut d.kind {
            n.nics.truncate(4);
        }
    }
    design
        .links
        .retain(|l| l.a.port.nic().is_none_or(|k| k < 4));
    let e = design_to_simai(&design).expect_err("refused");
    assert!(e.to_string().contains("4 NICs for 8 GPUs"), "{e}");
}

#[test]
fn railyard_export_writes_simai_from_the_extension_and_refuses_with_the_reason() {
    let text = exported_by_extension("hgx-h100-x4-roce.ron", "pod.simai");
    assert!(
        text.starts_with("37 8 4 1 64 H100\n32 33 34 35 36\n"),
        "{text}"
    );

    let mac = Path::new(env!("CARGO_MANIFEST_DIR")).join("presets/mac-studio-tb5-x4.ron");
    let mac = mac.to_str().expect("UTF-8");
    let o = railyard(&["export", mac, "--format", "simai", "-o", "-"]);
    let err = String::from_utf8_lossy(&o.stderr);
    assert!(!o.status.success());
    assert!(err.contains("no switches"), "{err}");
}

/// An htsim `.topo` read as `FatTreeTopology::load` reads it: space-separated tokens, `#`
/// comments, keys in any case; the header until the first `Tier`, then each tier's keys.
fn read_htsim(text: &str) -> (HashMap<String, u64>, Vec<HashMap<String, u64>>) {
    let mut header = HashMap::new();
    let mut tiers: Vec<HashMap<String, u64>> = Vec::new();
    for line in text.lines() {
        let tokens: Vec<&str> = line.split(' ').filter(|t| !t.is_empty()).collect();
        if tokens.is_empty() || tokens[0].starts_with('#') {
            continue;
        }
        assert_eq!(tokens.len(), 2, "{line}");
        let key = tokens[0].to_ascii_lowercase();
        let value: u64 = tokens[1].parse().expect("a whole number, as stoi reads it");
        if key == "tier" {
            assert_eq!(value as usize, tiers.len(), "tiers in order");
            tiers.push(HashMap::new());
        } else if let Some(tier) = tiers.last_mut() {
            assert!(tier.insert(key, value).is_none(), "{line} twice");
        } else {
            header.insert(key, value);
        }
    }
    (header, tiers)
}

fn htsim_tier(pairs: &[(&str, u64)]) -> HashMap<String, u64> {
    pairs
        .iter()
        .map(|(k, v)| (k.to_ascii_lowercase(), *v))
        .chain([
            ("downlink_latency_ns".to_string(), 1000),
            ("switch_latency_ns".to_string(), 0),
        ])
        .collect()
}

#[test]
fn htsim_fat_trees_carry_the_designs_tiers() {
    // dgx-h100-superpod-su: 256 rail NICs (hosts) on 8 leaves of 32, each leaf with 32
    // uplinks, 8 to each of 4 spines (Bundle 8), all 400G: one pod of 256, 1:1.
    let (header, tiers) =
        read_htsim(&design_to_htsim(&preset("dgx-h100-superpod-su.ron")).expect("a fat tree"));
    assert_eq!(header["nodes"], 256);
    assert_eq!(header["tiers"], 2);
    assert_eq!(header["podsize"], 256);
    assert_eq!(
        tiers,
        [
            htsim_tier(&[
                ("Downlink_speed_Gbps", 400),
                ("Radix_Down", 32),
                ("Radix_Up", 32),
                ("Oversubscribed", 1),
            ]),
            htsim_tier(&[
                ("Downlink_speed_Gbps", 400),
                ("Radix_Down", 64),
                ("Bundle", 8),
            ]),
        ]
    );
    // What the loader derives: 256 / 32 = 8 leaves, 256 uplinks / 64 = 4 spines.
    assert_eq!(header["podsize"] / tiers[0]["radix_down"], 8);
    assert_eq!(header["nodes"] / tiers[1]["radix_down"], 4);

    // gb200-nvl72-pod: 576 NICs on 32 leaves of 18; 18 uplinks, 2 to each of 9 spines.
    let (header, tiers) =
        read_htsim(&design_to_htsim(&preset("gb200-nvl72-pod.ron")).expect("a fat tree"));
    assert_eq!(
        (header["nodes"], header["tiers"], header["podsize"]),
        (576, 2, 576)
    );
    assert_eq!((tiers[0]["radix_down"], tiers[0]["radix_up"]), (18, 18));
    assert_eq!((tiers[1]["radix_down"], tiers[1]["bundle"]), (64, 2));
}

#[test]
fn htsim_takes_three_tiers_in_pods() {
    use railyard::model::{
        Bandwidth, Device, Host, HostRole, Link, PartId, Pos, Switch, SwitchFeatures,
    };
    // Two pods of 2 leaves and 2 spines, 4 cores. Each leaf: 4 hosts, one cable to each
    // spine of its pod (2:1); spine s of each pod to cores 2s and 2s + 1, as htsim wires it.
    let mut design = Design::new("three tiers");
    let add = |design: &mut Design, name: String, kind: DeviceKind| {
        design.add_device(Device {
            id: railyard::model::DeviceId(0),
            name,
            pos: Pos::new(0.0, 0.0),
            group: None,
            kind,
        })
    };
    let switch = |role| {
        DeviceKind::Switch(Switch {
            model: PartId("sn5600".into()),
            role,
            breakout: 1,
            rail: None,
            features: SwitchFeatures::default(),
        })
    };
    let link = |design: &mut Design, a, b| {
        design.add_link(Link::new(
            v1_end(design, (a, 0), LinkTech::Ethernet),
            v1_end(design, (b, 0), LinkTech::Ethernet),
            LinkTech::Ethernet,
            Bandwidth::from_gbit_s(100.0),
        ));
    };
    let cores: Vec<_> = (0..4)
        .map(|c| add(&mut design, format!("core-{c}"), switch(SwitchRole::Core)))
        .collect();
    for pod in 0..2 {
        let spines: Vec<_> = (0..2)
            .map(|s| {
                add(
                    &mut design,
                    format!("spine-{pod}-{s}"),
                    switch(SwitchRole::Spine),
                )
            })
            .collect();
        for (s, &spine) in spines.iter().enumerate() {
            link(&mut design, spine, cores[2 * s]);
            link(&mut design, spine, cores[2 * s + 1]);
        }
        for l in 0..2 {
            let leaf = add(
                &mut design,
                format!("leaf-{pod}-{l}"),
                switch(SwitchRole::Leaf),
            );
            for &spine in &spines {
                link(&mut design, leaf, spine);
            }
            for h in 0..4 {
                let host = add(
                    &mut design,
                    format!("host-{pod}-{l}-{h}"),
                    DeviceKind::Host(Host {
                        role: HostRole::Cpu,
                        model: None,
                        nics: Vec::new(),
                    }),
                );
                link(&mut design, host, leaf);
            }
        }
    }
    let (header, tiers) = read_htsim(&design_to_htsim(&design).expect("a fat tree"));
    assert_eq!(
        (header["nodes"], header["tiers"], header["podsize"]),
        (16, 3, 8)
    );
    assert_eq!(
        tiers,
        [
            htsim_tier(&[
                ("Downlink_speed_Gbps", 100),
                ("Radix_Down", 4),
                ("Radix_Up", 2),
                ("Oversubscribed", 2),
            ]),
            htsim_tier(&[
                ("Downlink_speed_Gbps", 100),
                ("Radix_Down", 2),
                ("Radix_Up", 2),
                ("Oversubscribed", 1),
                ("Bundle", 1),
            ]),
            htsim_tier(&[
                ("Downlink_speed_Gbps", 100),
                ("Radix_Down", 2),
                ("Bundle", 1),
            ]),
        ]
    );
}

#[test]
fn htsim_refuses_what_is_not_a_fat_tree_with_the_reason() {
    for (name, says) in [
        ("hgx-h100-x4-roce.ron", "a single switch: no tiers"),
        ("rail-only-1tier.ron", "leaves without spines"),
        (
            "dgx-h100-fat-tree-3to1.ron",
            "leaves have different host links",
        ),
        ("mac-studio-tb5-x4.ron", "no leaves"),
    ] {
        assert_refused(name, design_to_htsim(&preset(name)), says);
    }
    // The command line takes htsim from `.topo`.
    let text = exported_by_extension("dgx-h100-superpod-su.ron", "su.topo");
    assert_eq!(read_htsim(&text).0["nodes"], 256);
}

/// An ASTRA-sim network file as yaml-rust2 reads it: each key's list, as numbers or words.
fn read_astra(text: &str) -> (Vec<String>, Vec<i64>, Vec<f64>, Vec<f64>) {
    let docs = yaml_rust2::YamlLoader::load_from_str(text).expect("YAML");
    let doc = &docs[0];
    let list = |key: &str| doc[key].as_vec().unwrap_or_else(|| panic!("{key}")).clone();
    let number = |y: &yaml_rust2::Yaml| {
        y.as_f64()
            .or_else(|| y.as_i64().map(|i| i as f64))
            .expect("a number")
    };
    (
        list("topology")
            .iter()
            .map(|y| y.as_str().expect("a word").to_string())
            .collect(),
        list("npus_count")
            .iter()
            .map(|y| y.as_i64().expect("an int, as parse_vector<int> reads it"))
            .collect(),
        list("bandwidth").iter().map(number).collect(),
        list("latency").iter().map(number).collect(),
    )
}

/// Gb/s in astra-sim's GB/s (2^30 bytes, common/NetworkFunction.cpp).
fn astra_gb(gbit_s: f64) -> f64 {
    gbit_s / 8.0 * 1e9 / 1_073_741_824.0
}

fn close(a: &[f64], b: &[f64]) -> bool {
    a.len() == b.len() && a.iter().zip(b).all(|(x, y)| (x - y).abs() < 1e-3)
}

#[test]
fn astra_sim_networks_have_a_scale_up_and_a_scale_out_dimension() {
    // hgx-h100-x4-roce: 8 GPUs per NVSwitch at 3600 Gb/s (450 GB/s), 4 servers with 8 ×
    // 400G NICs for 8 GPUs: 400 Gb/s (50 GB/s) per GPU.
    let (topology, npus, bandwidth, latency) =
        read_astra(&design_to_astra_sim(&preset("hgx-h100-x4-roce.ron")).expect("a network"));
    assert_eq!(topology, ["Switch", "Switch"]);
    assert_eq!(npus, [8, 4]);
    assert!(
        close(&bandwidth, &[astra_gb(3600.0), astra_gb(400.0)]),
        "{bandwidth:?}"
    );
    assert!(close(&bandwidth, &[419.095, 46.566]), "{bandwidth:?}");
    assert!(close(&latency, &[25.0, 500.0]), "{latency:?}");

    // gb200-nvl72-pod: 8 NVL72 domains of 72 GPUs at 7200 Gb/s (900 GB/s); each tray's
    // 4 × 400G NICs for 4 GPUs.
    let (_, npus, bandwidth, _) =
        read_astra(&design_to_astra_sim(&preset("gb200-nvl72-pod.ron")).expect("a network"));
    assert_eq!(npus, [72, 8]);
    assert!(
        close(&bandwidth, &[astra_gb(7200.0), astra_gb(400.0)]),
        "{bandwidth:?}"
    );

    // dgx-h100-superpod-su: 32 DGX of 8.
    let (_, npus, _, _) =
        read_astra(&design_to_astra_sim(&preset("dgx-h100-superpod-su.ron")).expect("a network"));
    assert_eq!(npus, [8, 32]);
}

#[test]
fn astra_sim_refuses_what_is_not_symmetric_with_the_reason() {
    for (name, says) in [
        ("mac-studio-tb5-x4.ron", "no switches"),
        ("workstation-star-10gbe.ron", "not joined by NVSwitch"),
    ] {
        assert_refused(name, design_to_astra_sim(&preset(name)), says);
    }
    // One server loses a NIC cable: 7 × 400 / 8 GPUs against 400 Gb/s per GPU elsewhere.
    let mut design = preset("hgx-h100-x4-roce.ron");
    design.links.remove(0);
    let e = design_to_astra_sim(&design).expect_err("refused");
    assert!(e.to_string().contains("not symmetric"), "{e}");
    assert!(e.to_string().contains("350"), "{e}");

    // The command line takes ASTRA-sim from `.astra.yml`, and `.yml` stays containerlab's.
    let text = exported_by_extension("hgx-h100-x4-roce.ron", "pod.astra.yml");
    assert_eq!(read_astra(&text).1, [8, 4]);
}

/// ASTRA-sim's system layer, read back with serde_json: one implementation per dimension of
/// the network file, from the algorithm railyard chose at 1 GiB. 4 × HGX H100 on RoCE runs
/// ring all-reduce (two dimensions: ring, ring) and direct all-to-all; the SuperPOD unit's
/// NVLS-tree gives direct inside the NVSwitch domain and a double binary tree across it.
/// local-mem-bw is the H100 SXM's 3,350 GB/s of HBM3 (catalog, NVIDIA datasheet).
#[test]
fn astra_sim_system_names_the_chosen_implementation_per_dimension() {
    let text = exported_by_extension("hgx-h100-x4-roce.ron", "pod.astra.json");
    let v: serde_json::Value = serde_json::from_str(&text).expect("JSON");
    let list = |key: &str| -> Vec<String> {
        v[key]
            .as_array()
            .unwrap_or_else(|| panic!("{key} in {text}"))
            .iter()
            .map(|s| s.as_str().expect("a name").to_string())
            .collect()
    };
    assert_eq!(list("all-reduce-implementation"), ["ring", "ring"]);
    assert_eq!(list("all-to-all-implementation"), ["direct", "direct"]);
    assert_eq!(v["local-mem-bw"], 3350.0);
    assert_eq!(v["scheduling-policy"], "LIFO");
    let why = v["railyard"]["chosen"]["all-reduce"].as_str().expect("why");
    assert!(why.starts_with("ring/Simple at 1 GiB"), "{why}");

    let su = exported_by_extension("dgx-h100-superpod-su.ron", "su.astra.json");
    let v: serde_json::Value = serde_json::from_str(&su).expect("JSON");
    assert_eq!(
        v["all-reduce-implementation"],
        serde_json::json!(["direct", "doubleBinaryTree"])
    );

    // Refused where the network file is: no switches between the Macs.
    let design = preset("mac-studio-tb5-x4.ron");
    let e = railyard::io::export::astra_sim_system::design_to_astra_sim_system(
        &design,
        &Catalog::builtin(),
    )
    .expect_err("refused");
    assert!(e.to_string().contains("no switches"), "{e}");
}
