//! The design as an uncompressed draw.io (diagrams.net) file: one vertex per device at its
//! canvas position and size (NVSwitch domains enclosing their trays, as on the canvas and
//! in the SVG), one edge per link in the canvas's technology colour, labelled with
//! technology and rate. Cell ids are the design's own (`d3`, `l12`), so the file diffs
//! cleanly and can be matched back to the design.

use super::cabling::{link_label, technology_painter};
use crate::io::link_colors::Pattern;
use crate::io::svg::{device_rects, fill, link_width, xml_escape};
use crate::model::{Design, DeviceKind};
use std::fmt::Write as _;

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
    let _ = writeln!(out, r#"        <mxCell id="0"/>"#);
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
        let _ = writeln!(
            out,
            r##"        <mxCell id="{}" value="{}" style="rounded=1;whiteSpace=wrap;html=0;{align}fillColor={};strokeColor=#263238;fontColor=#ffffff;" vertex="1" parent="1"><mxGeometry x="{}" y="{}" width="{}" height="{}" as="geometry"/></mxCell>"##,
            d.id,
            xml_escape(&d.name),
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
            r#"        <mxCell id="{}" value="{}" style="endArrow=none;html=0;strokeColor={};strokeWidth={width};{dashed}" edge="1" parent="1" source="{}" target="{}"><mxGeometry relative="1" as="geometry"/></mxCell>"#,
            link.id,
            xml_escape(&link_label(link)),
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
