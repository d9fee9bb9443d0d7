//! The design as an uncompressed draw.io (diagrams.net) file: one vertex per device at its
//! canvas position and size (NVSwitch domains enclosing their trays, as on the canvas and
//! in the SVG), one edge per link in the canvas's technology colour, labelled with
//! technology and rate. Cell ids are the design's own (`d3`, `l12`), so the file diffs
//! cleanly and can be matched back to the design.
//!
//! Each device and link cell is wrapped in draw.io's `<object>` (what draw.io writes for a
//! shape with data, shown under Edit Data), whose attributes carry what `railyard import`
//! needs to read the design back exactly: a device's `part`, its canvas position and its
//! kind (RON); a link's port names and the link (RON); the root cell carries the design's
//! name, notes and groups. draw.io keeps these attributes through edits.

use super::cabling::{link_label, technology_painter};
use crate::io::link_colors::Pattern;
use crate::io::svg::{device_rects, fill, link_width, xml_escape};
use crate::model::ports::port_name;
use crate::model::{Design, DeviceKind};
use serde::Serialize;
use std::fmt::Write as _;

/// Attribute names of the data railyard records on cells (read by `io::import::drawio`).
pub const DESIGN_ATTRIBUTE: &str = "railyard_design";
pub const KIND_ATTRIBUTE: &str = "railyard_kind";
pub const POS_ATTRIBUTE: &str = "railyard_pos";
pub const GROUP_ATTRIBUTE: &str = "railyard_group";
pub const LINK_ATTRIBUTE: &str = "railyard_link";
pub const PART_ATTRIBUTE: &str = "part";
pub const SOURCE_PORT_ATTRIBUTE: &str = "source_port";
pub const TARGET_PORT_ATTRIBUTE: &str = "target_port";

/// An attribute value: XML-escaped, with line breaks and tabs as character references
/// (a reader turns literal ones into spaces).
fn attribute(text: &str) -> String {
    xml_escape(text)
        .replace('\n', "&#10;")
        .replace('\r', "&#13;")
        .replace('\t', "&#9;")
}

/// A value as one line of RON in an attribute; empty if it cannot be written (it can: the
/// model's types all serialize).
fn ron_attribute(value: &impl Serialize) -> String {
    attribute(&ron::to_string(value).unwrap_or_default())
}

pub fn design_to_drawio(design: &Design) -> String {
    let rects = device_rects(design);
    let painter = technology_painter();
    let mut out = String::new();
    // Writing to a String cannot fail; the results are ignored for that reason.
    let _ = writeln!(out, r#"<?xml version="1.0" encoding="UTF-8"?>"#);
    let _ = writeln!(out, r#"<mxfile host="railyard" type="device">"#);
    let _ = writeln!(
        out,
        r#"  <diagram id="railyard" name="{}">"#,
        xml_escape(&design.name)
    );
    let _ = writeln!(out, r#"    <mxGraphModel grid="1" gridSize="10" page="0">"#);
    let _ = writeln!(out, "      <root>");
    // The design less its devices and links: name, notes, groups, calibration, job.
    let rest = Design {
        devices: Vec::new(),
        links: Vec::new(),
        name: design.name.clone(),
        notes: design.notes.clone(),
        groups: design.groups.clone(),
        calibration: design.calibration.clone(),
        sharp_enabled: design.sharp_enabled,
        library: design.library,
        nccl_release: design.nccl_release,
        nccl_buffer: design.nccl_buffer,
        imported_from: design.imported_from.clone(),
        job: design.job.clone(),
    };
    let _ = writeln!(
        out,
        r#"        <object id="0" label="" {DESIGN_ATTRIBUTE}="{}"><mxCell/></object>"#,
        ron_attribute(&rest)
    );
    let _ = writeln!(out, r#"        <mxCell id="1" parent="0"/>"#);
    // Domains first: draw.io stacks later cells on top, and the trays sit inside them.
    let (domains, others): (Vec<_>, Vec<_>) = design
        .devices
        .iter()
        .partition(|d| matches!(d.kind, DeviceKind::NvSwitchDomain(_)));
    for d in domains.into_iter().chain(others) {
        let Some(r) = rects.get(&d.id) else { continue };
        // A domain's name goes in its top band, as on the canvas.
        let align = if matches!(d.kind, DeviceKind::NvSwitchDomain(_)) {
            "verticalAlign=top;"
        } else {
            ""
        };
        let part = d
            .kind
            .model_part()
            .map(|p| format!(r#" {PART_ATTRIBUTE}="{}""#, attribute(p.as_str())))
            .unwrap_or_default();
        let group = d
            .group
            .map(|g| format!(r#" {GROUP_ATTRIBUTE}="{}""#, g.0))
            .unwrap_or_default();
        let _ = writeln!(
            out,
            r##"        <object id="{}" label="{}"{part} {POS_ATTRIBUTE}="{},{}"{group} {KIND_ATTRIBUTE}="{}"><mxCell style="rounded=1;whiteSpace=wrap;html=0;{align}fillColor={};strokeColor=#263238;fontColor=#ffffff;" vertex="1" parent="1"><mxGeometry x="{}" y="{}" width="{}" height="{}" as="geometry"/></mxCell></object>"##,
            d.id,
            attribute(&d.name),
            d.pos.x,
            d.pos.y,
            ron_attribute(&d.kind),
            fill(&d.kind),
            r.x0,
            r.y0,
            r.x1 - r.x0,
            r.y1 - r.y0
        );
    }
    for link in &design.links {
        let (Some(a), Some(b)) = (design.device(link.a.device), design.device(link.b.device))
        else {
            continue;
        };
        let style = painter.style(link, a, b);
        let dashed = if style.pattern == Pattern::Solid {
            ""
        } else {
            "dashed=1;"
        };
        let width = link_width(link.lanes);
        let _ = writeln!(
            out,
            r#"        <object id="{}" label="{}" {SOURCE_PORT_ATTRIBUTE}="{}" {TARGET_PORT_ATTRIBUTE}="{}" {LINK_ATTRIBUTE}="{}"><mxCell style="endArrow=none;html=0;strokeColor={};strokeWidth={width};{dashed}" edge="1" parent="1" source="{}" target="{}"><mxGeometry relative="1" as="geometry"/></mxCell></object>"#,
            link.id,
            attribute(&link_label(link)),
            port_name(link.a.port),
            port_name(link.b.port),
            ron_attribute(link),
            style.color.hex(),
            link.a.device,
            link.b.device
        );
    }
    let _ = writeln!(out, "      </root>");
    let _ = writeln!(out, "    </mxGraphModel>");
    let _ = writeln!(out, "  </diagram>");
    out.push_str("</mxfile>\n");
    out
}
