//! The design as an SVG diagram, from the positions saved in the design: one `<g>` per device
//! (a rectangle and its name) and one `<line>` per link, each carrying the model's id in
//! `data-id`, so the picture can be scripted or matched back to the file. No UI imports; the
//! sizes and colours follow the canvas's so the export looks like the screen.

use crate::model::{Design, DeviceId, DeviceKind, LinkId, LinkState, LinkTech, Pos};
use std::collections::HashMap;
use std::fmt::Write as _;

/// Width and height of a device's box, in canvas units (as the canvas draws them).
fn device_size(kind: &DeviceKind) -> (f32, f32) {
    match kind {
        DeviceKind::GpuNode(_) => (100.0, 56.0),
        DeviceKind::Switch(_) => (100.0, 44.0),
        DeviceKind::Host(_) => (90.0, 44.0),
        DeviceKind::NvSwitchDomain(_) => (240.0, 160.0),
    }
}

/// Room around an NVSwitch domain's trays, and the band on top that carries its name.
const DOMAIN_PAD: f32 = 14.0;
const DOMAIN_HEADER: f32 = 26.0;
const MARGIN: f32 = 40.0;

/// How links are coloured.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum LinkColors<'a> {
    /// By technology (NVLink green, InfiniBand purple...).
    Technology,
    /// By utilisation 0–1 (green → yellow → red), as the collective result's
    /// `link_utilization` lists it; links not listed carry no traffic and are grey.
    Heatmap(&'a [(LinkId, f64)]),
}

/// `&`, `<`, `>`, `"` and `'` as entities; control characters XML 1.0 forbids become spaces.
pub fn xml_escape(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    for c in text.chars() {
        match c {
            '&' => out.push_str("&amp;"),
            '<' => out.push_str("&lt;"),
            '>' => out.push_str("&gt;"),
            '"' => out.push_str("&quot;"),
            '\'' => out.push_str("&apos;"),
            '\t' | '\n' | '\r' => out.push(c),
            c if (c as u32) < 0x20 || c == '\u{FFFE}' || c == '\u{FFFF}' => out.push(' '),
            c => out.push(c),
        }
    }
    out
}

fn tech_color(tech: LinkTech) -> (u8, u8, u8) {
    match tech {
        LinkTech::NvLink => (118, 185, 0),
        LinkTech::NvLinkBridge => (175, 180, 43),
        LinkTech::Pcie => (161, 127, 100),
        LinkTech::Ethernet => (66, 133, 244),
        LinkTech::RoceV2 => (0, 188, 212),
        LinkTech::InfiniBand => (171, 71, 188),
        LinkTech::Thunderbolt4 => (120, 144, 156),
        LinkTech::Thunderbolt5 => (240, 98, 146),
    }
}

/// Utilisation 0..1 as green → yellow → red.
fn heat_color(utilisation: f64) -> (u8, u8, u8) {
    let u = if utilisation.is_finite() {
        utilisation.clamp(0.0, 1.0)
    } else {
        1.0
    };
    let lerp = |a: (u8, u8, u8), b: (u8, u8, u8), t: f64| {
        let mix = |x: u8, y: u8| (f64::from(x) + (f64::from(y) - f64::from(x)) * t).round() as u8;
        (mix(a.0, b.0), mix(a.1, b.1), mix(a.2, b.2))
    };
    let (green, yellow, red) = ((67, 160, 71), (253, 216, 53), (229, 57, 53));
    if u < 0.5 {
        lerp(green, yellow, u * 2.0)
    } else {
        lerp(yellow, red, (u - 0.5) * 2.0)
    }
}

fn hex((r, g, b): (u8, u8, u8)) -> String {
    format!("#{r:02x}{g:02x}{b:02x}")
}

fn fill(kind: &DeviceKind) -> &'static str {
    match kind {
        DeviceKind::GpuNode(_) => "#2c5c96",
        DeviceKind::Switch(_) => "#37474f",
        DeviceKind::Host(_) => "#5c5c5c",
        DeviceKind::NvSwitchDomain(_) => "#1b2a1b",
    }
}

/// A rectangle: left, top, right, bottom.
#[derive(Debug, Clone, Copy)]
struct Rect {
    x0: f32,
    y0: f32,
    x1: f32,
    y1: f32,
}

impl Rect {
    fn around(p: Pos, (w, h): (f32, f32)) -> Rect {
        Rect {
            x0: p.x - w / 2.0,
            y0: p.y - h / 2.0,
            x1: p.x + w / 2.0,
            y1: p.y + h / 2.0,
        }
    }

    fn union(self, o: Rect) -> Rect {
        Rect {
            x0: self.x0.min(o.x0),
            y0: self.y0.min(o.y0),
            x1: self.x1.max(o.x1),
            y1: self.y1.max(o.y1),
        }
    }

    fn centre(self) -> (f32, f32) {
        ((self.x0 + self.x1) / 2.0, (self.y0 + self.y1) / 2.0)
    }
}

/// Positions that are not finite numbers are drawn at the origin rather than breaking the file.
fn finite(p: Pos) -> Pos {
    let f = |v: f32| if v.is_finite() { v } else { 0.0 };
    Pos {
        x: f(p.x),
        y: f(p.y),
    }
}

/// Each device's box: NVSwitch domains enclose their compute trays, as on the canvas.
fn device_rects(design: &Design) -> HashMap<DeviceId, Rect> {
    let mut rects: HashMap<DeviceId, Rect> = design
        .devices
        .iter()
        .map(|d| (d.id, Rect::around(finite(d.pos), device_size(&d.kind))))
        .collect();
    let mut members: HashMap<DeviceId, Rect> = HashMap::new();
    for d in &design.devices {
        if let Some(domain) = d.kind.as_node().and_then(|n| n.domain) {
            let r = rects[&d.id];
            members
                .entry(domain)
                .and_modify(|m| *m = m.union(r))
                .or_insert(r);
        }
    }
    for (domain, m) in members {
        if let Some(r) = rects.get_mut(&domain) {
            *r = Rect {
                x0: m.x0 - DOMAIN_PAD,
                y0: m.y0 - DOMAIN_PAD - DOMAIN_HEADER,
                x1: m.x1 + DOMAIN_PAD,
                y1: m.y1 + DOMAIN_PAD,
            };
        }
    }
    rects
}

/// The design as a standalone SVG document.
pub fn design_to_svg(design: &Design, colors: LinkColors<'_>) -> String {
    let rects = device_rects(design);
    let bounds = rects.values().copied().reduce(Rect::union).unwrap_or(Rect {
        x0: 0.0,
        y0: 0.0,
        x1: 200.0,
        y1: 100.0,
    });
    let (x, y) = (bounds.x0 - MARGIN, bounds.y0 - MARGIN);
    let (w, h) = (
        bounds.x1 - bounds.x0 + 2.0 * MARGIN,
        bounds.y1 - bounds.y0 + 2.0 * MARGIN,
    );
    let heat: HashMap<LinkId, f64> = match colors {
        LinkColors::Heatmap(loads) => loads.iter().copied().collect(),
        LinkColors::Technology => HashMap::new(),
    };

    let mut out = String::new();
    // Writing to a String cannot fail; the results are ignored for that reason.
    let _ = writeln!(out, r#"<?xml version="1.0" encoding="UTF-8"?>"#);
    let _ = writeln!(
        out,
        r#"<svg xmlns="http://www.w3.org/2000/svg" viewBox="{x} {y} {w} {h}" width="{w}" height="{h}" font-family="sans-serif" font-size="12">"#
    );
    let _ = writeln!(out, "<title>{}</title>", xml_escape(&design.name));
    let _ = writeln!(
        out,
        r##"<rect x="{x}" y="{y}" width="{w}" height="{h}" fill="#ffffff"/>"##
    );

    // Domains first: their trays and links sit on top of them.
    let _ = writeln!(out, r#"<g class="domains">"#);
    for d in design
        .devices
        .iter()
        .filter(|d| matches!(d.kind, DeviceKind::NvSwitchDomain(_)))
    {
        write_device(&mut out, d, rects[&d.id], true);
    }
    let _ = writeln!(out, "</g>");

    let _ = writeln!(out, r#"<g class="links">"#);
    for link in &design.links {
        let (Some(a), Some(b)) = (rects.get(&link.a.device), rects.get(&link.b.device)) else {
            continue;
        };
        let ((x1, y1), (x2, y2)) = (a.centre(), b.centre());
        let (color, note) = match colors {
            LinkColors::Technology => (hex(tech_color(link.tech)), String::new()),
            LinkColors::Heatmap(_) => match heat.get(&link.id) {
                Some(&u) => (hex(heat_color(u)), format!(", {:.0} % busy", u * 100.0)),
                None => ("#9e9e9e".to_string(), ", idle".to_string()),
            },
        };
        let dash = match link.state {
            LinkState::Failed => r#" stroke-dasharray="6 4""#,
            _ => "",
        };
        let width = 1.5 + (link.lanes.min(8) as f32 - 1.0) * 0.5;
        let title = format!(
            "{} {}: {} × {}{note}",
            link.id,
            link.tech.label(),
            link.lanes,
            link.rate_gbit_s
        );
        let _ = writeln!(
            out,
            r#"<line class="link" data-id="{}" data-tech="{}" x1="{x1}" y1="{y1}" x2="{x2}" y2="{y2}" stroke="{color}" stroke-width="{width}"{dash}><title>{}</title></line>"#,
            link.id,
            xml_escape(link.tech.label()),
            xml_escape(&title)
        );
    }
    let _ = writeln!(out, "</g>");

    let _ = writeln!(out, r#"<g class="devices">"#);
    for d in design
        .devices
        .iter()
        .filter(|d| !matches!(d.kind, DeviceKind::NvSwitchDomain(_)))
    {
        write_device(&mut out, d, rects[&d.id], false);
    }
    let _ = writeln!(out, "</g>");
    out.push_str("</svg>\n");
    out
}

fn write_device(out: &mut String, d: &crate::model::Device, r: Rect, domain: bool) {
    let (cx, cy) = r.centre();
    // A domain's name sits in its header band; other devices' in their middle.
    let text_y = if domain { r.y0 + 18.0 } else { cy + 4.0 };
    let name = xml_escape(&d.name);
    let _ = writeln!(
        out,
        r##"<g class="device" data-id="{}" data-kind="{}"><title>{name}</title><rect x="{}" y="{}" width="{}" height="{}" rx="6" fill="{}" stroke="#263238"/><text x="{cx}" y="{text_y}" text-anchor="middle" fill="#ffffff">{name}</text></g>"##,
        d.id,
        xml_escape(d.kind.label()),
        r.x0,
        r.y0,
        r.x1 - r.x0,
        r.y1 - r.y0,
        fill(&d.kind),
    );
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_are_escaped() {
        assert_eq!(
            xml_escape(r#"a<b & "c" 'd'>"#),
            "a&lt;b &amp; &quot;c&quot; &apos;d&apos;&gt;"
        );
        assert_eq!(xml_escape("bell\u{7}"), "bell ");
    }

    #[test]
    fn heat_runs_green_to_red() {
        assert_eq!(heat_color(0.0), (67, 160, 71));
        assert_eq!(heat_color(0.5), (253, 216, 53));
        assert_eq!(heat_color(1.0), (229, 57, 53));
        assert_eq!(heat_color(f64::NAN), (229, 57, 53));
    }
}
