//! `railyard import`: draw.io files our export wrote read back to the same design; a
//! hand-written DOT file and CSV edge list read to the devices, links, parts and tiers
//! they name; bad input refused with its line; placeholders named by the checks.

mod common;

use common::cli::railyard;
use common::design::{preset, presets};
use railyard::analysis::checks::{checks, codes};
use railyard::io::export::dot::design_to_dot;
use railyard::io::export::drawio::design_to_drawio;
use railyard::io::import::{ImportError, ImportFormat, import_text, placeholders};
use railyard::model::{Catalog, Design, DeviceKind, LinkTech, Port, SwitchRole};

fn import(text: &str, format: ImportFormat, origin: &str) -> Result<Design, ImportError> {
    import_text(text, format, origin, &Catalog::builtin())
}

fn device<'a>(design: &'a Design, name: &str) -> &'a railyard::model::Device {
    design
        .devices
        .iter()
        .find(|d| d.name == name)
        .unwrap_or_else(|| panic!("no device {name}"))
}

#[test]
fn every_preset_round_trips_through_drawio() {
    for (name, design) in presets() {
        let text = design_to_drawio(&design);
        let back = import(&text, ImportFormat::Drawio, "x.drawio")
            .unwrap_or_else(|e| panic!("{name}: {e}"));
        // Devices: ids, names, positions, groups and kinds (parts, NICs, roles); links:
        // ends with their ports, technology, rate, lanes and the rest.
        assert_eq!(back.devices, design.devices, "{name}");
        assert_eq!(back.links, design.links, "{name}");
        assert_eq!(back.groups, design.groups, "{name}");
        assert_eq!(back.name, design.name, "{name}");
        assert!(
            placeholders(&back, &Catalog::builtin()).is_empty(),
            "{name}"
        );
    }
}

#[test]
fn a_shape_moved_and_renamed_in_drawio_moves_and_renames_the_device() {
    let design = preset("workstation-star-10gbe.ron");
    let first = &design.devices[0];
    let text = design_to_drawio(&design);
    let renamed = text.replacen(
        &format!(r#"id="{}" label="{}""#, first.id, first.name),
        &format!(r#"id="{}" label="bench-1""#, first.id),
        1,
    );
    // Push the shape 200 units right: its geometry's x is the first `x="` after its id.
    let at = renamed
        .find(&format!(r#"id="{}""#, first.id))
        .expect("the shape");
    let x_at = at + renamed[at..].find(r#" x=""#).expect("geometry") + 4;
    let x_end = x_at + renamed[x_at..].find('"').expect("a value");
    let x: f32 = renamed[x_at..x_end].parse().expect("a number");
    let moved = format!("{}{}{}", &renamed[..x_at], x + 200.0, &renamed[x_end..]);
    let back = import(&moved, ImportFormat::Drawio, "x.drawio").expect("imports");
    let d = back.device(first.id).expect("the device");
    assert_eq!(d.name, "bench-1");
    assert!(
        (d.pos.x - (first.pos.x + 200.0)).abs() < 0.01,
        "{:?}",
        d.pos
    );
    assert_eq!(d.pos.y, first.pos.y);
    assert_eq!(back.links, design.links);
}

const LAB_DOT: &str = r#"
// Two leaves under one spine, two DGX H100 per leaf; one box the catalog lacks.
graph "lab" {
  node [shape=box];
  spine [part="qm9700"];
  subgraph leaves { rank=same; "leaf-a" [part=qm9700]; "leaf-b" [part=qm9700]; }
  "dgx-h100-1"; "dgx-h100-2"; "dgx-h100-3";
  mystery [label="storage-1", part="acme-9000"];
  "leaf-a" -- spine [technology=InfiniBand, rate="400G", lanes=2];
  "leaf-b" -- spine [label="InfiniBand 2 × 400 Gb/s"];
  "dgx-h100-1" -- "leaf-a" [label="IB 400G"];
  "dgx-h100-2" -- "leaf-a" [label="InfiniBand 400 Gb/s"];
  "dgx-h100-3" -> "leaf-b" [label="InfiniBand 400 Gb/s"];
  mystery -- "leaf-b" [label="InfiniBand 400 Gb/s"];
}
"#;

#[test]
fn a_hand_written_dot_file_gives_its_devices_links_and_tiers() {
    let design = import(LAB_DOT, ImportFormat::Dot, "lab.dot").expect("imports");
    assert_eq!(design.name, "lab");
    assert_eq!(design.devices.len(), 7);
    assert_eq!(design.links.len(), 6);
    let spine = device(&design, "spine");
    let leaf = device(&design, "leaf-a");
    let node = device(&design, "dgx-h100-1");
    let storage = device(&design, "storage-1");
    assert_eq!(
        spine.kind.as_switch().map(|s| s.role),
        Some(SwitchRole::Spine)
    );
    assert_eq!(
        leaf.kind.as_switch().map(|s| s.role),
        Some(SwitchRole::Leaf)
    );
    assert_eq!(node.kind.as_node().map(|n| n.gpu_count), Some(8));
    // Tiers from the bottom: servers, then leaves, then the spine.
    assert!(node.pos.y > leaf.pos.y && leaf.pos.y > spine.pos.y);
    assert_eq!(storage.pos.y, node.pos.y);
    // Ports in order: the leaf's first two ports go up, the next two down.
    let up = &design.links[0];
    assert_eq!(
        (up.tech, up.lanes, up.rate_gbit_s.gbit_s()),
        (LinkTech::InfiniBand, 2, 400.0)
    );
    assert_eq!(up.a.port, Port::Switch(0));
    assert_eq!(up.b.port, Port::Switch(0));
    assert_eq!(design.links[1].b.port, Port::Switch(1));
    assert_eq!(design.links[2].a.port, Port::Nic(0));
    assert_eq!(design.links[2].b.port, Port::Switch(1));
    assert_eq!(design.links[3].b.port, Port::Switch(2));
    assert_eq!(
        placeholders(&design, &Catalog::builtin()),
        vec![(
            "storage-1".to_string(),
            railyard::model::PartId::new("acme-9000")
        )]
    );
}

#[test]
fn our_dot_export_reads_back_with_its_names_tiers_and_links() {
    for (name, design) in presets() {
        let back = import(&design_to_dot(&design), ImportFormat::Dot, "x.dot")
            .unwrap_or_else(|e| panic!("{name}: {e}"));
        let mut names: Vec<&str> = back.devices.iter().map(|d| d.name.as_str()).collect();
        let mut expected: Vec<&str> = design.devices.iter().map(|d| d.name.as_str()).collect();
        names.sort_unstable();
        expected.sort_unstable();
        assert_eq!(names, expected, "{name}");
        assert_eq!(back.links.len(), design.links.len(), "{name}");
        for d in &design.devices {
            let role = |k: &DeviceKind| k.as_switch().map(|s| s.role);
            if let Some(r) = role(&d.kind) {
                assert_eq!(
                    role(&device(&back, &d.name).kind),
                    Some(r),
                    "{name}: {}",
                    d.name
                );
            }
        }
    }
}

const EDGES_CSV: &str = "\
a,b,technology,rate
spine-1,leaf-1,InfiniBand,400G
spine-1,leaf-2,InfiniBand,400 Gb/s
leaf-1,gpu-1,InfiniBand,400G
leaf-1,gpu-2,InfiniBand,400G
leaf-2,gpu-3,InfiniBand,400G
# the last box
leaf-2,gpu-4,Ethernet,100GbE
";

#[test]
fn a_csv_edge_list_places_devices_by_tier_and_names_its_placeholders() {
    let design = import(EDGES_CSV, ImportFormat::Csv, "edges.csv").expect("imports");
    assert_eq!(design.name, "edges");
    assert_eq!(design.devices.len(), 7);
    assert_eq!(design.links.len(), 6);
    let y = |name: &str| device(&design, name).pos.y;
    assert!(y("gpu-1") > y("leaf-1") && y("leaf-1") > y("spine-1"));
    assert_eq!(y("gpu-1"), y("gpu-4"));
    assert_eq!(y("leaf-1"), y("leaf-2"));
    let last = &design.links[5];
    assert_eq!(
        (last.tech, last.rate_gbit_s.gbit_s()),
        (LinkTech::Ethernet, 100.0)
    );
    // No part is named: every device is a placeholder, and the checks say so and where
    // they came from.
    assert_eq!(placeholders(&design, &Catalog::builtin()).len(), 7);
    let found = checks(&design, &Catalog::builtin());
    let unknown = found
        .iter()
        .find(|c| c.code == codes::UNKNOWN_PART)
        .expect("an unknown-part check");
    assert!(
        unknown.message.contains("unknown") && unknown.message.contains("imported from edges.csv"),
        "{}",
        unknown.message
    );
    assert_eq!(unknown.devices.len(), 7);
    // Each placeholder has the NIC slots its links use (carrying its unknown part, named
    // once with it): the unknown part is the one thing to fix, not a link on a missing NIC.
    assert!(
        found.iter().all(|c| c.code != codes::PORTS_OVER_CAPACITY),
        "{found:?}"
    );
}

#[test]
fn a_bad_csv_row_is_refused_with_its_line() {
    let text = "spine-1,leaf-1,InfiniBand,400G\nleaf-1,gpu-1,InfiniBand,fast\n";
    let err = import(text, ImportFormat::Csv, "edges.csv").expect_err("refused");
    assert!(matches!(&err, ImportError::Line { line: 2, .. }), "{err}");
    assert!(
        err.to_string().starts_with("edges.csv:2: field 4 (rate)"),
        "{err}"
    );
    let short = "a,b,InfiniBand,400G\n\nc,d,InfiniBand\n";
    let err = import(short, ImportFormat::Csv, "e.csv").expect_err("refused");
    assert!(matches!(&err, ImportError::Line { line: 3, .. }), "{err}");
}

#[test]
fn a_link_past_a_devices_last_port_is_refused_not_dropped() {
    // A DGX H100 has eight InfiniBand NICs; a ninth link has no port to go to.
    let mut text = String::new();
    for i in 0..9 {
        text.push_str(&format!("dgx-h100-1,qm9700-{i},InfiniBand,400G\n"));
    }
    let err = import(&text, ImportFormat::Csv, "e.csv").expect_err("refused");
    assert!(matches!(&err, ImportError::Line { line: 9, .. }), "{err}");
    assert!(err.to_string().contains("no free InfiniBand port"), "{err}");
}

#[test]
fn a_bad_drawio_file_is_refused_with_its_line() {
    let design = preset("workstation-star-10gbe.ron");
    let text = design_to_drawio(&design);
    // Break line 10 (a device shape): an unclosed attribute quote runs into the next tag.
    let mut lines: Vec<String> = text.lines().map(str::to_string).collect();
    lines[9] = lines[9].replacen("vertex=\"1\"", "vertex=\"1", 1);
    let err = import(&lines.join("\n"), ImportFormat::Drawio, "x.drawio").expect_err("refused");
    let ImportError::Syntax { line, .. } = &err else {
        panic!("{err}")
    };
    assert!((10..=11).contains(line), "{err}");

    let bad_number = text.replacen(r#"width=""#, r#"width="wide"#, 1);
    let err = import(&bad_number, ImportFormat::Drawio, "x.drawio").expect_err("refused");
    let want = text
        .lines()
        .position(|l| l.contains(r#"width=""#))
        .expect("a geometry")
        + 1;
    assert!(
        matches!(&err, ImportError::Line { line, .. } if *line == want),
        "{err}"
    );
}

#[test]
fn a_dot_syntax_error_names_line_and_column() {
    let err = import(
        "graph g {\n  a -- b [label=\"IB 400G\"\n}\n",
        ImportFormat::Dot,
        "g.dot",
    )
    .expect_err("refused");
    assert!(
        matches!(
            &err,
            ImportError::Syntax {
                line: 3,
                column: 1,
                ..
            }
        ),
        "{err}"
    );
}

#[test]
fn the_cli_imports_and_names_placeholders() {
    let dir = tempfile::tempdir().expect("a temporary folder");
    let csv = dir.path().join("edges.csv");
    std::fs::write(&csv, EDGES_CSV).expect("written");
    let out = dir.path().join("edges.ron");
    let run = railyard(&[
        "import",
        csv.to_str().expect("a path"),
        "-o",
        out.to_str().expect("a path"),
    ]);
    let stderr = String::from_utf8_lossy(&run.stderr);
    assert!(run.status.success(), "{stderr}");
    assert!(stderr.contains("7 devices, 6 links"), "{stderr}");
    assert!(stderr.contains("7 placeholders"), "{stderr}");
    let design = railyard::io::load_design(&out).expect("the design loads");
    assert_eq!(design.links.len(), 6);
}

const HAND_DRAWN: &str = r#"<mxfile host="app.diagrams.net">
  <diagram name="Page-1" id="p1">
    <mxGraphModel grid="1">
      <root>
        <mxCell id="0"/>
        <mxCell id="1" parent="0"/>
        <object label="leaf-1" part="qm9700" id="a"><mxCell style="rounded=1;" vertex="1" parent="1"><mxGeometry x="100" y="200" width="100" height="40" as="geometry"/></mxCell></object>
        <mxCell id="b" value="&lt;b&gt;dgx-h100-1&lt;/b&gt;" style="html=1;" vertex="1" parent="1">
          <mxGeometry x="100" y="400" width="100" height="56" as="geometry"/>
        </mxCell>
        <mxCell id="t" value="a note" style="text;html=1;" vertex="1" parent="1"><mxGeometry width="60" height="20" as="geometry"/></mxCell>
        <mxCell id="e" value="InfiniBand 400 Gb/s" style="endArrow=none;" edge="1" parent="1" source="b" target="a"><mxGeometry relative="1" as="geometry"/></mxCell>
      </root>
    </mxGraphModel>
  </diagram>
</mxfile>
"#;

#[test]
fn shapes_drawn_in_drawio_become_devices_where_they_were_drawn() {
    let design = import(HAND_DRAWN, ImportFormat::Drawio, "hand.drawio").expect("imports");
    assert_eq!(design.name, "Page-1");
    assert_eq!(design.devices.len(), 2, "the text shape is not a device");
    let leaf = device(&design, "leaf-1");
    let node = device(&design, "dgx-h100-1");
    assert_eq!((leaf.pos.x, leaf.pos.y), (150.0, 220.0));
    assert_eq!((node.pos.x, node.pos.y), (150.0, 428.0));
    assert_eq!(
        leaf.kind.as_switch().map(|s| s.role),
        Some(SwitchRole::Leaf)
    );
    assert_eq!(node.kind.as_node().map(|n| n.gpu_count), Some(8));
    let link = &design.links[0];
    assert_eq!((link.a.device, link.a.port), (node.id, Port::Nic(0)));
    assert_eq!((link.b.device, link.b.port), (leaf.id, Port::Switch(0)));
    assert!(placeholders(&design, &Catalog::builtin()).is_empty());

    // What draw.io saves by default: the page deflated and in base64, which we do not read.
    let compressed = HAND_DRAWN.replace(
        "\n    <mxGraphModel grid=\"1\">",
        "\n    7VhRb5swEP41PHYCDCR5TNJ2e+ikSn3Y9mjgCG6NzYzTJP31s4NJgoCk29Ip0oKUyPfd+Xz3+T6/4KB5sf4scJk/8BSo==\n",
    ).replace("</root>\n    </mxGraphModel>\n  </diagram>", "</diagram>");
    let err = import(&compressed, ImportFormat::Drawio, "c.drawio").expect_err("refused");
    assert!(err.to_string().contains("compressed"), "{err}");
}

#[test]
fn a_dot_pos_is_kept_and_a_chain_makes_one_link_per_pair() {
    let text = r#"strict digraph {
        /* Graphviz's y grows up, the canvas's down */
        a [pos="100,50!"];
        a -> b -> c [label="Ethernet 10G"];
    }"#;
    let design = import(text, ImportFormat::Dot, "chain.gv").expect("imports");
    assert_eq!(design.name, "chain");
    let a = device(&design, "a");
    assert_eq!((a.pos.x, a.pos.y), (100.0, -50.0));
    assert_eq!(design.links.len(), 2);
    let b = device(&design, "b").id;
    assert!(design.links.iter().all(|l| l.touches(b)));
    assert!(
        design
            .links
            .iter()
            .all(|l| l.tech == LinkTech::Ethernet && l.rate_gbit_s.gbit_s() == 10.0)
    );
}

/// Four Macs in a Thunderbolt 5 ring from a CSV, none a catalog part: each placeholder's two
/// cables take its Thunderbolt ports 0 and 1, not NICs.
#[test]
fn thunderbolt_cables_of_placeholders_take_thunderbolt_ports() {
    let text =
        "mac-a,mac-b,tb5,80G\nmac-b,mac-c,tb5,80G\nmac-c,mac-d,tb5,80G\nmac-d,mac-a,tb5,80G\n";
    let design = import(text, ImportFormat::Csv, "macs.csv").expect("imports");
    assert_eq!(design.links.len(), 4);
    let a = device(&design, "mac-a").id;
    let mut ports: Vec<Port> = design
        .links
        .iter()
        .flat_map(|l| [l.a, l.b])
        .filter(|end| end.device == a)
        .map(|end| end.port)
        .collect();
    ports.sort();
    assert_eq!(ports, [Port::Thunderbolt(0), Port::Thunderbolt(1)]);
    assert!(
        design
            .links
            .iter()
            .all(|l| l.tech == LinkTech::Thunderbolt5 && l.rate_gbit_s.gbit_s() == 80.0)
    );
}
