//! The design as an SVG diagram, from the positions saved in the design: one `<g>` per device
//! (a rectangle and its name) and one `<line>` per link, each carrying the model's id in
//! `data-id`, so the picture can be scripted or matched back to the file. No UI imports; the
//! sizes and colours follow the canvas's so the export looks like the screen.

use super::device_rows::Corners;
use super::device_title::diagram_titles;
use super::group_frames::{GroupFrame, group_frames};
use super::link_colors::{
    self, Background, ColorMode, Legend, LinkPainter, Pattern, heat_stops, lane_look, rail_of,
};
use super::link_label::{
    LinkTally, label_spots, link_label, min_labelled, segment_meets_box, sort_for_labels,
    tally_link,
};
use super::name_forms::{fitting_form, name_forms};
use super::tier_captions::{TierCaption, tier_captions};
use crate::model::units::count_of;
use crate::model::{Catalog, Design, DeviceId, DeviceKind, LinkId, LinkState, Pos};
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
pub(crate) const MARGIN: f32 = 40.0;

/// How links are coloured.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum LinkColors<'a> {
    /// By technology (NVLink green, InfiniBand purple...).
    Technology,
    /// One colour-blind-safe hue per rail (see [`link_colors::rail_color`]).
    Rail,
    /// By the switch tiers a link joins.
    Tier,
    /// By utilisation 0–1 (green → yellow → red), as the collective result's
    /// `link_utilization` lists it; links not listed carry no traffic and are grey. The text
    /// says whose loads they are (`CollectiveResult::summary`), for the title block.
    Heatmap(&'a [(LinkId, f64)], &'a str),
}

impl LinkColors<'_> {
    /// Each link's load under the heatmap; empty otherwise.
    pub(crate) fn loads(&self) -> HashMap<LinkId, f64> {
        match self {
            LinkColors::Heatmap(loads, _) => loads.iter().copied().collect(),
            _ => HashMap::new(),
        }
    }

    /// The colours a drawing of `design` uses: rail colours fall back to technology on a
    /// design without rails ([`link_colors::drawn_mode`]).
    pub(crate) fn drawn_on(self, design: &Design) -> Self {
        match self {
            LinkColors::Rail
                if link_colors::drawn_mode(ColorMode::Rail, design) != ColorMode::Rail =>
            {
                LinkColors::Technology
            }
            other => other,
        }
    }

    pub fn mode(&self) -> ColorMode {
        match self {
            LinkColors::Technology => ColorMode::Technology,
            LinkColors::Rail => ColorMode::Rail,
            LinkColors::Tier => ColorMode::Tier,
            LinkColors::Heatmap(..) => ColorMode::Heatmap,
        }
    }
}

/// How much of a design a diagram draws.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum Detail {
    /// Every device and link.
    #[default]
    Full,
    /// Pods, scalable units and the rows outside them folded into blocks, sized for a
    /// slide (`svg_overview`).
    Overview,
}

/// The detail `design` is drawn at when `asked` is: in full where its overview would be one
/// box with nothing beside it (a design that is all one group), which says nothing.
pub fn drawn_detail(design: &Design, asked: Detail) -> Detail {
    match asked {
        Detail::Overview if super::svg_overview::overview_is_one_box(design) => Detail::Full,
        _ => asked,
    }
}

/// The design's diagram at `detail` (as [`drawn_detail`] decides).
pub fn diagram_svg(
    design: &Design,
    catalog: &Catalog,
    colors: LinkColors<'_>,
    detail: Detail,
) -> String {
    match drawn_detail(design, detail) {
        Detail::Full => design_to_svg(design, catalog, colors),
        Detail::Overview => super::svg_overview::design_overview_svg(design, catalog, colors),
    }
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

pub(crate) fn fill(kind: &DeviceKind) -> &'static str {
    match kind {
        DeviceKind::GpuNode(_) => "#2c5c96",
        DeviceKind::Switch(_) => "#37474f",
        DeviceKind::Host(_) => "#5c5c5c",
        DeviceKind::NvSwitchDomain(_) => "#1b2a1b",
    }
}

/// A rectangle: left, top, right, bottom.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Rect {
    pub(crate) x0: f32,
    pub(crate) y0: f32,
    pub(crate) x1: f32,
    pub(crate) y1: f32,
}

impl Rect {
    /// The diagram area of a design with nothing to draw.
    pub(crate) const EMPTY_DIAGRAM: Rect = Rect {
        x0: 0.0,
        y0: 0.0,
        x1: 200.0,
        y1: 100.0,
    };

    /// The rectangle of (min, max) corners, as the shared captions and folding take boxes.
    pub(crate) fn from_corners(((x0, y0), (x1, y1)): Corners) -> Rect {
        Rect { x0, y0, x1, y1 }
    }

    pub(crate) fn corners(self) -> Corners {
        ((self.x0, self.y0), (self.x1, self.y1))
    }

    fn around(p: Pos, (w, h): (f32, f32)) -> Rect {
        Rect {
            x0: p.x - w / 2.0,
            y0: p.y - h / 2.0,
            x1: p.x + w / 2.0,
            y1: p.y + h / 2.0,
        }
    }

    pub(crate) fn union(self, o: Rect) -> Rect {
        Rect {
            x0: self.x0.min(o.x0),
            y0: self.y0.min(o.y0),
            x1: self.x1.max(o.x1),
            y1: self.y1.max(o.y1),
        }
    }

    pub(crate) fn centre(self) -> (f32, f32) {
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
pub(crate) fn device_rects(design: &Design) -> HashMap<DeviceId, Rect> {
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

/// Height of the title block above the diagram: the design's name and a line of counts.
pub(crate) const TITLE_HEIGHT: f32 = 64.0;
/// Room above a group's frame for its caption.
const CAPTION_HEIGHT: f32 = 18.0;
const TITLE_PX: f32 = 22.0;
/// Font size of frame and tier captions.
const CAPTION_PX: f32 = 14.0;
/// The legend's column right of the diagram.
pub(crate) const LEGEND_WIDTH: f32 = 210.0;
const LEGEND_ROW: f32 = 20.0;
/// Rough width of a character of the sans-serif font, per pixel of font size, to keep a
/// long title inside the picture.
const CHAR_WIDTH: f32 = 0.6;
/// The same, on average over a legend's words.
const LEGEND_CHAR_WIDTH: f32 = 0.52;

/// The design as a standalone SVG document: a title block, the diagram and a legend for
/// `colors`. Its `width` and `height` are the picture's size in pixels at scale 1.
pub fn design_to_svg(design: &Design, catalog: &Catalog, colors: LinkColors<'_>) -> String {
    let asked = colors.mode();
    let colors = colors.drawn_on(design);
    let rects = device_rects(design);
    let frames = group_frames(design, |i| {
        let r = rects.get(&design.devices.get(i)?.id)?;
        Some(r.corners())
    });
    let frame_rect = |f: &GroupFrame| Rect::from_corners((f.min, f.max));
    let tiers = tier_captions(design, |i| {
        let r = rects.get(&design.devices.get(i)?.id)?;
        Some(r.corners())
    });
    let tier_rect = |t: &TierCaption| Rect {
        x0: t.at.0,
        y0: t.at.1 - CAPTION_HEIGHT - 4.0,
        x1: t.at.0 + t.text.chars().count() as f32 * CAPTION_PX * CHAR_WIDTH + 8.0,
        y1: t.at.1 - 4.0,
    };
    // A frame's caption stands above its top edge.
    let framed = frames.iter().map(|f| Rect {
        y0: f.min.1 - CAPTION_HEIGHT,
        ..frame_rect(f)
    });
    let bounds = rects
        .values()
        .copied()
        .chain(framed)
        .chain(tiers.iter().map(tier_rect))
        .reduce(Rect::union)
        .unwrap_or(Rect::EMPTY_DIAGRAM);
    let legend = link_colors::legend(design, colors.mode(), Background::Light)
        .drawn_for(asked, colors.mode());
    let legend_height = legend_height(&legend);
    let title_width = design.name.chars().count() as f32 * TITLE_PX * CHAR_WIDTH;
    let (x, y) = (bounds.x0 - MARGIN, bounds.y0 - MARGIN - TITLE_HEIGHT);
    let diagram_width = bounds.x1 - bounds.x0 + 2.0 * MARGIN;
    let w = (diagram_width + legend_width(&legend))
        .max(title_width + 2.0 * MARGIN)
        .ceil();
    let h = (TITLE_HEIGHT + 2.0 * MARGIN + (bounds.y1 - bounds.y0).max(legend_height)).ceil();
    let heat = colors.loads();
    let painter = LinkPainter {
        mode: colors.mode(),
        background: Background::Light,
        heat: Some(&heat),
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
    write_title_block(&mut out, design, colors, (x + MARGIN, y + MARGIN));

    // Pods' and units' frames under everything, each captioned above its top left.
    let _ = writeln!(out, r#"<g class="groups">"#);
    for f in &frames {
        let r = frame_rect(f);
        let _ = writeln!(
            out,
            r##"<rect x="{}" y="{}" width="{}" height="{}" rx="8" fill="none" stroke="#9e9e9e" stroke-width="1"/>"##,
            r.x0,
            r.y0,
            r.x1 - r.x0,
            r.y1 - r.y0
        );
    }
    let _ = writeln!(out, "</g>");

    // Domains next: their trays and links sit on top of them.
    let _ = writeln!(out, r#"<g class="domains">"#);
    for d in design
        .devices
        .iter()
        .filter(|d| matches!(d.kind, DeviceKind::NvSwitchDomain(_)))
    {
        write_device(&mut out, d, rects[&d.id], true, &diagram_titles(catalog, d));
    }
    let _ = writeln!(out, "</g>");

    let _ = writeln!(out, r#"<g class="links">"#);
    // The looks seen between each pair of devices, in order: a link's lane is its look's
    // place (as on the canvas, lanes alternate either side of the line between centres).
    let mut looks: HashMap<(DeviceId, DeviceId), Vec<u64>> = HashMap::new();
    for link in &design.links {
        let (Some(a), Some(b)) = (rects.get(&link.a.device), rects.get(&link.b.device)) else {
            continue;
        };
        let (Some(dev_a), Some(dev_b)) =
            (design.device(link.a.device), design.device(link.b.device))
        else {
            continue;
        };
        let ((mut x1, mut y1), (mut x2, mut y2)) = (a.centre(), b.centre());
        let width = link_width(link.lanes);
        let pair = if link.a.device <= link.b.device {
            (link.a.device, link.b.device)
        } else {
            (link.b.device, link.a.device)
        };
        let look = lane_look(link, dev_a, dev_b, painter.mode);
        let seen = looks.entry(pair).or_default();
        let lane = seen.iter().position(|&l| l == look).unwrap_or_else(|| {
            seen.push(look);
            seen.len() - 1
        });
        let length = (x2 - x1).hypot(y2 - y1);
        if lane > 0 && length > 0.0 {
            let side = if lane % 2 == 1 { 1.0 } else { -1.0 };
            let step = side * lane.div_ceil(2) as f32 * (width + LANE_GAP);
            let (nx, ny) = (-(y2 - y1) / length * step, (x2 - x1) / length * step);
            (x1, y1, x2, y2) = (x1 + nx, y1 + ny, x2 + nx, y2 + ny);
        }
        let style = painter.style(link, dev_a, dev_b);
        let note = match colors {
            LinkColors::Heatmap(..) => match heat.get(&link.id) {
                Some(&u) => format!(", {:.0} % busy", u * 100.0),
                None => ", idle".to_string(),
            },
            _ => String::new(),
        };
        let state = match link.state {
            LinkState::Up => "",
            LinkState::Degraded { .. } => ", degraded",
            LinkState::Failed => ", failed",
        };
        let rail = match rail_of(dev_a, link.a.port, dev_b, link.b.port, link.tech) {
            Some(r) => format!(r#" data-rail="{r}""#),
            None => String::new(),
        };
        let title = format!(
            "{} {}: {} × {}{note}{state}",
            link.id,
            link.tech.label(),
            link.lanes,
            link.rate_gbit_s
        );
        let _ = writeln!(
            out,
            r#"<line class="link" data-id="{}" data-tech="{}"{rail} x1="{x1}" y1="{y1}" x2="{x2}" y2="{y2}" stroke="{}" stroke-width="{width}"{}><title>{}</title></line>"#,
            link.id,
            xml_escape(link.tech.label()),
            style.color.hex(),
            dash_attribute(style.pattern),
            xml_escape(&title)
        );
    }
    let _ = writeln!(out, "</g>");
    // Bundle labels keep clear of the frames' and tiers' captions.
    let captions: Vec<Rect> = frames
        .iter()
        .map(|f| Rect {
            x0: f.min.0,
            y0: f.min.1 - CAPTION_HEIGHT,
            x1: f.min.0 + f.caption.chars().count() as f32 * CAPTION_PX * CHAR_WIDTH + 12.0,
            y1: f.min.1,
        })
        .chain(tiers.iter().map(tier_rect))
        .collect();
    write_bundle_labels(&mut out, design, &rects, &captions);

    let _ = writeln!(out, r#"<g class="devices">"#);
    for d in design
        .devices
        .iter()
        .filter(|d| !matches!(d.kind, DeviceKind::NvSwitchDomain(_)))
    {
        write_device(
            &mut out,
            d,
            rects[&d.id],
            false,
            &diagram_titles(catalog, d),
        );
    }
    let _ = writeln!(out, "</g>");

    // Each frame's caption above its top left, on a light tag over the links that cross it
    // (under them it could not be read where a spine's links fan out).
    let _ = writeln!(out, r#"<g class="group-captions">"#);
    for f in &frames {
        let r = frame_rect(f);
        let width = f.caption.chars().count() as f32 * CAPTION_PX * CHAR_WIDTH + 8.0;
        let _ = writeln!(
            out,
            r##"<rect x="{}" y="{}" width="{width}" height="{}" rx="3" fill="#ffffff" fill-opacity="0.85"/><text x="{}" y="{}" fill="#616161" font-size="{CAPTION_PX}">{}</text>"##,
            r.x0 + 2.0,
            r.y0 - CAPTION_HEIGHT,
            CAPTION_HEIGHT - 1.0,
            r.x0 + 6.0,
            r.y0 - 5.0,
            xml_escape(&f.caption)
        );
    }
    let _ = writeln!(out, "</g>");

    // Each switch row's caption above its leftmost switch, on a light tag over the links.
    let _ = writeln!(out, r#"<g class="tiers">"#);
    for t in &tiers {
        let r = tier_rect(t);
        let _ = writeln!(
            out,
            r##"<rect x="{}" y="{}" width="{}" height="{}" rx="3" fill="#ffffff" fill-opacity="0.85"/><text x="{}" y="{}" fill="#424242" font-size="{CAPTION_PX}">{}</text>"##,
            r.x0,
            r.y0,
            r.x1 - r.x0,
            r.y1 - r.y0,
            r.x0 + 4.0,
            r.y1 - 5.0,
            xml_escape(&t.text)
        );
    }
    let _ = writeln!(out, "</g>");
    write_legend(&mut out, &legend, (bounds.x1 + MARGIN, bounds.y0));
    out.push_str("</svg>\n");
    out
}

/// Labels on the links: "8 × 400G" at the middle of each bundle of parallel links (drawn
/// on one another as one line), and on a small design single links' rates too, each where
/// its line is long enough to carry it and no other label is.
fn write_bundle_labels(
    out: &mut String,
    design: &Design,
    rects: &HashMap<DeviceId, Rect>,
    avoid: &[Rect],
) {
    let mut pairs: HashMap<(DeviceId, DeviceId), LinkTally> = HashMap::new();
    for link in &design.links {
        if !(rects.contains_key(&link.a.device) && rects.contains_key(&link.b.device)) {
            continue;
        }
        let key = (
            link.a.device.min(link.b.device),
            link.a.device.max(link.b.device),
        );
        tally_link(
            pairs.entry(key).or_default(),
            link.nominal_capacity().gbit_s(),
        );
    }
    let min = min_labelled(pairs.len());
    let mut labelled: Vec<_> = pairs
        .into_iter()
        .filter(|(_, t)| t.links >= min)
        .map(|((a, b), t)| (a, b, t.links, t))
        .collect();
    sort_for_labels(&mut labelled);
    // Cells of 16 units a label covers: an overlap test that stays linear at 200,000 links.
    const CELL: f32 = 16.0;
    let cells_of = |x0: f32, y0: f32, x1: f32, y1: f32| {
        ((x0 / CELL).floor() as i32..=(x1 / CELL).floor() as i32).flat_map(move |cx| {
            ((y0 / CELL).floor() as i32..=(y1 / CELL).floor() as i32).map(move |cy| (cx, cy))
        })
    };
    let mut taken: std::collections::HashSet<(i32, i32)> = avoid
        .iter()
        .flat_map(|r| cells_of(r.x0, r.y0, r.x1, r.y1))
        .collect();
    let spots = label_spots(labelled.len());
    // On a small drawing (several spots to choose from) a label keeps off the other lines,
    // whose crossing would make it read as theirs.
    type Line = ((f32, f32), (f32, f32), (DeviceId, DeviceId));
    let lines: Vec<Line> = if spots.len() > 1 {
        labelled
            .iter()
            .filter_map(|&(a, b, _, _)| {
                Some((rects.get(&a)?.centre(), rects.get(&b)?.centre(), (a, b)))
            })
            .collect()
    } else {
        Vec::new()
    };
    let _ = writeln!(out, r#"<g class="link-labels">"#);
    for (a, b, _, tally) in labelled {
        let (Some(ra), Some(rb)) = (rects.get(&a), rects.get(&b)) else {
            continue;
        };
        let ((x1, y1), (x2, y2)) = (ra.centre(), rb.centre());
        let text = link_label(&tally);
        let width = text.chars().count() as f32 * 12.0 * CHAR_WIDTH + 8.0;
        let height = 16.0;
        if (x2 - x1).hypot(y2 - y1) < 3.0 * width {
            continue;
        }
        // At the middle, else a third of the way from either end (bundles fanning into one
        // switch crowd their middles together).
        let cells_at = |t: f32| {
            let (mx, my) = (x1 + (x2 - x1) * t, y1 + (y2 - y1) * t);
            let (x0, y0) = (mx - width / 2.0, my - height / 2.0);
            let cells: Vec<(i32, i32)> = cells_of(x0, y0, x0 + width, y0 + height).collect();
            (mx, my, cells)
        };
        let crossed = |mx: f32, my: f32| {
            let label = (
                mx - width / 2.0,
                my - height / 2.0,
                mx + width / 2.0,
                my + height / 2.0,
            );
            lines
                .iter()
                .any(|&(p, q, pair)| pair != (a, b) && segment_meets_box(p, q, label))
        };
        let Some((mx, my, cells)) = spots
            .iter()
            .map(|&t| cells_at(t))
            .find(|(mx, my, cells)| !cells.iter().any(|c| taken.contains(c)) && !crossed(*mx, *my))
        else {
            continue;
        };
        let (x0, y0) = (mx - width / 2.0, my - height / 2.0);
        taken.extend(cells);
        let _ = writeln!(
            out,
            r##"<rect x="{x0}" y="{y0}" width="{width}" height="{height}" rx="3" fill="#ffffff" fill-opacity="0.85"/><text x="{mx}" y="{}" text-anchor="middle" fill="#212121">{}</text>"##,
            my + 4.0,
            xml_escape(&text)
        );
    }
    let _ = writeln!(out, "</g>");
}

/// A link's line width: thicker with more lanes, up to eight.
/// Space between lanes of links side by side, SVG units.
const LANE_GAP: f32 = 2.0;

pub(crate) fn link_width(lanes: u32) -> f32 {
    1.5 + (lanes.min(8) as f32 - 1.0) * 0.5
}

pub(crate) fn dash_attribute(pattern: Pattern) -> String {
    match pattern.dash_gap() {
        Some((dash, gap)) => format!(r#" stroke-dasharray="{dash} {gap}""#),
        None => String::new(),
    }
}

/// The design's name, large, and a line of what it holds and how links are coloured (for a
/// heatmap, in which collective).
pub(crate) fn write_title_block(
    out: &mut String,
    design: &Design,
    colors: LinkColors<'_>,
    (x, y): (f32, f32),
) {
    let gpus: u64 = design
        .devices
        .iter()
        .filter_map(|d| d.kind.as_node())
        .map(|n| u64::from(n.gpu_count))
        .sum();
    let mut counts = format!(
        "{} · {} · {} · links coloured by {}",
        count_of(gpus as usize, "GPU", "GPUs"),
        count_of(design.devices.len(), "device", "devices"),
        count_of(design.links.len(), "link", "links"),
        match colors {
            LinkColors::Heatmap(_, of) => format!("load in the {of}"),
            other => other.mode().name().to_string(),
        }
    );
    // A what-if is said where the picture is titled, so it is not shown as the design.
    if let Some(what_if) = crate::analysis::whatif::what_if_text(design) {
        counts = format!("{what_if} · {counts}");
    }
    let _ = writeln!(
        out,
        r##"<g class="title-block"><text x="{x}" y="{}" font-size="{TITLE_PX}" font-weight="bold" fill="#212121">{}</text><text x="{x}" y="{}" font-size="13" fill="#616161">{}</text></g>"##,
        y + TITLE_PX,
        xml_escape(&design.name),
        y + TITLE_PX + 22.0,
        xml_escape(&counts)
    );
}

pub(crate) fn legend_height(legend: &Legend) -> f32 {
    let scale = if legend.heat_scale { 2.0 } else { 0.0 };
    LEGEND_ROW * (1.5 + scale + legend.entries.len() as f32)
}

/// The legend's heading, the heatmap's scale if any, then one line sample per entry.
/// The room a legend takes beside the diagram, its margin included: at least
/// `LEGEND_WIDTH`, wider for a long heading or label (12-point text, about half an em a
/// character in the sans-serif faces that draw it).
pub(crate) fn legend_width(legend: &Legend) -> f32 {
    let text = |s: &str| s.chars().count() as f32 * 12.0 * LEGEND_CHAR_WIDTH;
    let content = legend
        .entries
        .iter()
        .map(|e| 36.0 + text(&e.label))
        .fold(text(&legend.heading), f32::max);
    (content + 40.0).max(LEGEND_WIDTH).ceil()
}

pub(crate) fn write_legend(out: &mut String, legend: &Legend, (x, y): (f32, f32)) {
    let _ = writeln!(
        out,
        r##"<g class="legend"><rect x="{}" y="{}" width="{}" height="{}" rx="4" fill="#fafafa" stroke="#bdbdbd"/>"##,
        x - 8.0,
        y - 8.0,
        legend_width(legend) - 24.0,
        legend_height(legend) + 8.0
    );
    let _ = writeln!(
        out,
        r##"<text x="{x}" y="{}" font-weight="bold" fill="#212121">{}</text>"##,
        y + 12.0,
        xml_escape(&legend.heading)
    );
    let mut row = y + 1.5 * LEGEND_ROW;
    if legend.heat_scale {
        let stops: String = heat_stops()
            .iter()
            .map(|(u, c)| format!(r#"<stop offset="{u}" stop-color="{}"/>"#, c.hex()))
            .collect();
        let _ = writeln!(
            out,
            r##"<defs><linearGradient id="heat-scale">{stops}</linearGradient></defs><rect class="heat-scale" x="{x}" y="{row}" width="150" height="10" fill="url(#heat-scale)"/><text x="{x}" y="{}" fill="#424242">0 %</text><text x="{}" y="{}" text-anchor="middle" fill="#424242">50 %</text><text x="{}" y="{}" text-anchor="end" fill="#424242">100 %</text>"##,
            row + 24.0,
            x + 75.0,
            row + 24.0,
            x + 150.0,
            row + 24.0
        );
        row += 2.0 * LEGEND_ROW;
    }
    for entry in &legend.entries {
        let _ = writeln!(
            out,
            r##"<g class="legend-entry"><line x1="{x}" y1="{}" x2="{}" y2="{}" stroke="{}" stroke-width="4"{}/><text x="{}" y="{}" fill="#212121">{}</text></g>"##,
            row + 6.0,
            x + 28.0,
            row + 6.0,
            entry.color.hex(),
            dash_attribute(entry.pattern),
            x + 36.0,
            row + 10.0,
            xml_escape(&entry.label)
        );
        row += LEGEND_ROW;
    }
    let _ = writeln!(out, "</g>");
}

/// A device's box: its name, and above it what it is (the first of `titles` that fits:
/// "8× H100", "spine · qm9700") where the box has room for both lines. A domain's name sits
/// in its header band.
pub(crate) fn write_device(
    out: &mut String,
    d: &crate::model::Device,
    r: Rect,
    domain: bool,
    titles: &[String],
) {
    let (cx, cy) = r.centre();
    let room = r.x1 - r.x0 - 8.0;
    let fits = |text: &str, px: f32| text.chars().count() as f32 * px * CHAR_WIDTH <= room;
    // Two lines need 2 × 12 units and a gap; the title is smaller than the name.
    let title = titles
        .iter()
        .find(|t| !t.is_empty() && fits(t, TITLE_LINE_PX))
        .filter(|_| !domain && r.y1 - r.y0 >= 40.0);
    let text_y = if domain {
        r.y0 + 18.0
    } else if title.is_some() {
        cy + 11.0
    } else {
        cy + 4.0
    };
    // The longest form of the name that fits the box (whole words dropped from the front,
    // as on the canvas); the title keeps the full name.
    let forms = name_forms(&d.name);
    let shown = xml_escape(fitting_form(&forms, |f| fits(f, 12.0)).unwrap_or(""));
    let name = xml_escape(&d.name);
    let title_line = title.map_or_else(String::new, |title| {
        format!(
            r##"<text class="what" x="{cx}" y="{}" text-anchor="middle" font-size="{TITLE_LINE_PX}" fill="#eceff1">{}</text>"##,
            cy - 5.0,
            xml_escape(title)
        )
    });
    let _ = writeln!(
        out,
        r##"<g class="device" data-id="{}" data-kind="{}"><title>{name}</title><rect x="{}" y="{}" width="{}" height="{}" rx="6" fill="{}" stroke="#263238"/>{title_line}<text x="{cx}" y="{text_y}" text-anchor="middle" fill="#ffffff">{shown}</text></g>"##,
        d.id,
        xml_escape(d.kind.label()),
        r.x0,
        r.y0,
        r.x1 - r.x0,
        r.y1 - r.y0,
        fill(&d.kind),
    );
}

/// The size of the line above a device's name.
const TITLE_LINE_PX: f32 = 10.0;

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

    /// A legend is as wide as its longest line: 210 units at least; the 46-character "no
    /// rails" heading takes 46 × 12 × 0.52 = 287.04 units and 40 of margin: 328.
    #[test]
    fn a_legend_is_as_wide_as_its_longest_line() {
        let short = Legend {
            heading: "Links by rail".into(),
            entries: vec![],
            heat_scale: false,
        };
        assert_eq!(legend_width(&short), LEGEND_WIDTH);
        let long = Legend {
            heading: "Links by technology (this design has no rails)".into(),
            ..short
        };
        assert_eq!(long.heading.chars().count(), 46);
        assert_eq!(legend_width(&long), 328.0);
    }
}
