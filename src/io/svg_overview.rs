//! The overview diagram of a large fabric: every pod and scalable unit folded into one block
//! with its counts, every row left outside them (a core tier) into one block too, and the
//! links between two blocks drawn once with their count ("2048 × 400G"). The picture is
//! sized for a slide: its text and lines keep their size in pixels however large the fabric
//! is, so 8,192 nodes come out about as wide as a screen rather than 26,000 pixels.

use super::device_title::diagram_titles;
use super::folding::{FoldScope, FoldedAs, Folding, NOT_FOLDED, fold};
use super::link_colors::{
    Background, LegendEntry, LegendTally, LinkPainter, LinkStyle, Pattern, Rgb,
};
use super::link_label::{LinkTally, link_label, min_labelled, tally_link};
use super::svg::{
    LinkColors, MARGIN, Rect, TITLE_HEIGHT, dash_attribute, device_rects, legend_height,
    legend_width, write_device, write_legend, write_title_block, xml_escape,
};
use crate::model::units::group_thousands;
use crate::model::{Catalog, Design, DeviceKind};
use std::collections::HashMap;
use std::fmt::Write as _;

/// The width the overview aims at, in pixels: a wide slide or screen.
const TARGET_WIDTH_PX: f32 = 2400.0;
/// Block captions: a name line, a tally line and a contents line, in pixels, before they
/// grow with a large block.
const BLOCK_NAME_PX: f32 = 16.0;
const BLOCK_TALLY_PX: f32 = 13.0;
/// Most a block's captions grow (a pod's name at 28 px): read from the back of a meeting
/// room, yet not louder than the title (22 px) by much.
const BLOCK_GROWTH: f32 = 1.75;
/// Bundle labels, in pixels: an overview has few, and each says what joins two blocks.
const LABEL_PX: f32 = 15.0;
/// Rough width of a character of the sans-serif font, per pixel of font size.
const CHAR_WIDTH: f32 = 0.6;
/// Most bundle labels tried: the overlap test is quadratic in them.
const MAX_LABELS: usize = 500;
/// A bundle whose links look different (several technologies, rails or loads).
const MIXED: Rgb = Rgb(0x75, 0x75, 0x75);

/// Links between two drawn things (blocks or devices): how many, their rate, their look.
struct Bundle {
    tally: LinkTally,
    /// The look of its links, `None` once they differ.
    style: Option<LinkStyle>,
    /// Under the heatmap, the busiest link's load.
    hottest: f64,
    /// The link whose look the bundle takes (under the heatmap, the busiest), and its ends.
    shown: (usize, usize, usize),
}

/// What an overview draws: blocks, then the devices left on their own (by index).
struct Folded {
    folding: Folding,
    loose: Vec<usize>,
}

fn folded(design: &Design, rects: &HashMap<crate::model::DeviceId, Rect>) -> Folded {
    let devices = &design.devices;
    let corners = |i: usize| {
        let r = rects.get(&devices.get(i)?.id)?;
        Some(r.corners())
    };
    let folding = fold(design, corners, FoldScope::Overview);
    let folded = |i: usize| folding.block_of.get(i).is_some_and(|&b| b != NOT_FOLDED);
    // Domains whose trays folded go with them.
    let folded_domains: std::collections::HashSet<crate::model::DeviceId> = devices
        .iter()
        .enumerate()
        .filter(|&(j, _)| folded(j))
        .filter_map(|(_, d)| d.kind.as_node().and_then(|n| n.domain))
        .collect();
    let loose = (0..devices.len())
        .filter(|&i| !folded(i) && !folded_domains.contains(&devices[i].id))
        .collect();
    Folded { folding, loose }
}

/// Whether the overview of `design` would be a single box with nothing beside it: a design
/// that is all one group (a desk of four Macs, one rack). Such a design is drawn in full.
pub fn overview_is_one_box(design: &Design) -> bool {
    let Folded { folding, loose } = folded(design, &device_rects(design));
    folding.blocks.len() <= 1 && loose.is_empty()
}

/// The design's overview as a standalone SVG document, with a title block and a legend for
/// `colors`. Its `width` and `height` are the picture's size in pixels at scale 1.
pub fn design_overview_svg(design: &Design, catalog: &Catalog, colors: LinkColors<'_>) -> String {
    let asked = colors.mode();
    let colors = colors.drawn_on(design);
    let devices = &design.devices;
    let rects = device_rects(design);
    let Folded { folding, loose } = folded(design, &rects);
    let block_of = |i: usize| match folding.block_of.get(i) {
        Some(&b) if b != NOT_FOLDED => Some(b as usize),
        _ => None,
    };
    let index: HashMap<crate::model::DeviceId, usize> =
        devices.iter().enumerate().map(|(i, d)| (d.id, i)).collect();
    let owner_rect = |owner: usize| match owner.checked_sub(devices.len()) {
        Some(b) => Rect::from_corners(folding.blocks[b].bounds),
        None => rects[&devices[owner].id],
    };
    let bounds = folding
        .blocks
        .iter()
        .map(|b| Rect::from_corners(b.bounds))
        .chain(loose.iter().map(|&i| rects[&devices[i].id]))
        .reduce(Rect::union)
        .unwrap_or(Rect::EMPTY_DIAGRAM);

    let heat = colors.loads();
    let painter = LinkPainter {
        mode: colors.mode(),
        background: Background::Light,
        heat: Some(&heat),
    };
    let mut bundles: HashMap<(usize, usize), Bundle> = HashMap::new();
    for (k, link) in design.links.iter().enumerate() {
        let (Some(&ia), Some(&ib)) = (index.get(&link.a.device), index.get(&link.b.device)) else {
            continue;
        };
        let owner = |i: usize| block_of(i).map_or(i, |b| devices.len() + b);
        let (oa, ob) = (owner(ia), owner(ib));
        if oa == ob {
            continue;
        }
        let style = painter.style(link, &devices[ia], &devices[ib]);
        let load = heat.get(&link.id).copied().unwrap_or(0.0);
        let bundle = bundles.entry((oa.min(ob), oa.max(ob))).or_insert(Bundle {
            tally: LinkTally::default(),
            style: Some(style),
            hottest: load,
            shown: (k, ia, ib),
        });
        tally_link(&mut bundle.tally, link.nominal_capacity().gbit_s());
        if matches!(colors, LinkColors::Heatmap(..)) {
            if load > bundle.hottest {
                bundle.hottest = load;
                bundle.style = Some(style);
                bundle.shown = (k, ia, ib);
            }
        } else if bundle.style != Some(style) {
            bundle.style = None;
        }
    }
    // The legend lists what the lines show: a bundle of several rails is not a rail.
    let mut tally = LegendTally::default();
    for bundle in bundles.values().filter(|b| b.style.is_some()) {
        let (k, ia, ib) = bundle.shown;
        tally.add(colors.mode(), &design.links[k], &devices[ia], &devices[ib]);
    }
    let mut legend = tally
        .legend(colors.mode(), Background::Light)
        .drawn_for(asked, colors.mode());
    if bundles.values().any(|b| b.style.is_none()) {
        legend.entries.push(LegendEntry {
            label: "bundle of several kinds".into(),
            color: MIXED,
            pattern: Pattern::Solid,
        });
    }

    // Design units per pixel: text, lines and margins are this many units, so that the
    // picture, shown `TARGET_WIDTH_PX` wide, keeps them at their size in pixels.
    let legend_room = legend_width(&legend);
    let u = ((bounds.x1 - bounds.x0 + 2.0 * MARGIN + legend_room) / TARGET_WIDTH_PX).max(1.0);
    let title_width = design.name.chars().count() as f32 * 22.0 * CHAR_WIDTH;
    let (x, y) = (
        bounds.x0 - MARGIN * u,
        bounds.y0 - (MARGIN + TITLE_HEIGHT) * u,
    );
    let w = ((bounds.x1 - bounds.x0) + (2.0 * MARGIN + legend_room) * u)
        .max((title_width + 2.0 * MARGIN) * u);
    let h =
        (TITLE_HEIGHT + 2.0 * MARGIN) * u + (bounds.y1 - bounds.y0).max(legend_height(&legend) * u);
    let (px_w, px_h) = ((w / u).ceil(), (h / u).ceil());

    let mut out = String::new();
    // Writing to a String cannot fail; the results are ignored for that reason.
    let _ = writeln!(out, r#"<?xml version="1.0" encoding="UTF-8"?>"#);
    let _ = writeln!(
        out,
        r#"<svg xmlns="http://www.w3.org/2000/svg" viewBox="{x} {y} {w} {h}" width="{px_w}" height="{px_h}" font-family="sans-serif" font-size="{}">"#,
        12.0 * u
    );
    let _ = writeln!(
        out,
        "<title>{} (overview)</title>",
        xml_escape(&design.name)
    );
    let _ = writeln!(
        out,
        r##"<rect x="{x}" y="{y}" width="{w}" height="{h}" fill="#ffffff"/>"##
    );
    let _ = writeln!(
        out,
        r#"<g transform="translate({} {}) scale({u})" font-size="12">"#,
        x + MARGIN * u,
        y + MARGIN * u
    );
    write_title_block(&mut out, design, colors, (0.0, 0.0));
    let _ = writeln!(out, "</g>");

    // Bundles under the blocks: a line into a block ends at its edge.
    let mut ordered: Vec<((usize, usize), &Bundle)> =
        bundles.iter().map(|(k, b)| (*k, b)).collect();
    ordered.sort_unstable_by_key(|(k, _)| *k);
    let _ = writeln!(out, r#"<g class="bundles">"#);
    for &((a, b), bundle) in &ordered {
        let ((x1, y1), (x2, y2)) = (owner_rect(a).centre(), owner_rect(b).centre());
        let style = bundle.style.unwrap_or(LinkStyle {
            color: MIXED,
            pattern: Pattern::Solid,
        });
        let n = bundle.tally.links;
        let width = (1.5 + 0.35 * (n as f32).log2()).min(5.0) * u;
        let _ = writeln!(
            out,
            r#"<line class="bundle" data-links="{n}" x1="{x1}" y1="{y1}" x2="{x2}" y2="{y2}" stroke="{}" stroke-width="{width}"{}><title>{}</title></line>"#,
            style.color.hex(),
            dash_attribute(style.pattern),
            xml_escape(&link_label(&bundle.tally))
        );
    }
    let _ = writeln!(out, "</g>");

    let contents = block_contents(design, &folding.block_of, folding.blocks.len());
    let _ = writeln!(out, r#"<g class="blocks">"#);
    for (b, block) in folding.blocks.iter().enumerate() {
        let r = Rect::from_corners(block.bounds);
        let (name, tally) = match &block.what {
            FoldedAs::Group(g) => (
                design
                    .group(*g)
                    .map_or("group", |g| g.name.as_str())
                    .to_string(),
                tally_text(block.devices, block.gpus),
            ),
            FoldedAs::Row(caption) => (
                caption.clone(),
                if block.gpus > 0 {
                    format!("{} GPUs", group_thousands(block.gpus as i64))
                } else {
                    String::new()
                },
            ),
        };
        let group_attr = block
            .what
            .group()
            .map_or(String::new(), |g| format!(r#" data-group="{}""#, g.0));
        let (cx, cy) = r.centre();
        // What a unit or pod holds, for a group's block (a row's caption says it already).
        let inside = match block.what {
            FoldedAs::Group(_) => contents[b].as_str(),
            FoldedAs::Row(_) => "",
        };
        // A narrow block (a rack seen whole) lists what it holds a kind to a line, where the
        // one line would not fit its width at 0.8 of its size.
        let narrow = (r.x1 - r.x0) * 0.9
            < inside.chars().count() as f32 * CHAR_WIDTH * BLOCK_TALLY_PX * u * 0.8;
        let inside_lines: Vec<&str> = if narrow {
            inside.split(" · ").collect()
        } else {
            vec![inside]
        };
        // The captions grow with a large block, up to BLOCK_GROWTH while the lines together
        // take at most 70 % of its height, and each shrinks to 90 % of a narrow block's
        // width, down to 0.6 of its pixels.
        let lines: Vec<(f32, &str)> = [
            (BLOCK_NAME_PX, name.as_str()),
            (BLOCK_TALLY_PX, tally.as_str()),
        ]
        .into_iter()
        .chain(inside_lines.iter().map(|&line| (BLOCK_TALLY_PX, line)))
        .filter(|(_, text)| !text.is_empty())
        .collect();
        let tall: f32 = lines.iter().map(|&(px, _)| 1.3 * px).sum();
        let grow = ((r.y1 - r.y0) * 0.7 / (tall * u)).min(BLOCK_GROWTH);
        let fit = |px: f32, text: &str| {
            let wide = text.chars().count().max(1) as f32 * CHAR_WIDTH;
            (px * u * grow.max(1.0))
                .min((r.x1 - r.x0) * 0.9 / wide)
                .max(px * u * 0.6)
        };
        let (name_size, tally_size) = (fit(BLOCK_NAME_PX, &name), fit(BLOCK_TALLY_PX, &tally));
        let inside_size = inside_lines
            .iter()
            .map(|line| fit(BLOCK_TALLY_PX, line))
            .fold(tally_size, f32::min);
        let inside_tall = inside_size * inside_lines.len() as f32;
        // A row of switches far thinner than its caption (the core under 32 pods) is drawn
        // tall enough to hold it.
        let r = if r.y1 - r.y0 < 1.8 * name_size {
            Rect {
                y0: cy - 0.9 * name_size,
                y1: cy + 0.9 * name_size,
                ..r
            }
        } else {
            r
        };
        let two_lines = !tally.is_empty() && (r.y1 - r.y0) >= 2.6 * name_size;
        let three_lines = two_lines
            && !inside.is_empty()
            && (r.y1 - r.y0) >= 1.3 * (name_size + tally_size + inside_tall);
        // The lines' block is centred: the name's baseline sits above the centre.
        let name_y = if three_lines {
            cy - 0.3 * (tally_size + inside_tall)
        } else if two_lines {
            cy - 0.15 * name_size
        } else {
            cy + 0.35 * name_size
        };
        let _ = write!(
            out,
            r##"<g class="block"{group_attr}><title>{}</title><rect x="{}" y="{}" width="{}" height="{}" rx="{}" fill="#cfd8dc" stroke="#607d8b" stroke-width="{}"/><text x="{cx}" y="{name_y}" text-anchor="middle" font-size="{name_size}" font-weight="bold" fill="#263238">{}</text>"##,
            xml_escape(&if tally.is_empty() {
                name.clone()
            } else {
                format!("{name}: {tally}")
            }),
            r.x0,
            r.y0,
            r.x1 - r.x0,
            r.y1 - r.y0,
            6.0 * u,
            u,
            xml_escape(&name)
        );
        if two_lines {
            let tally_y = name_y + 0.45 * name_size + 1.0 * tally_size;
            let _ = write!(
                out,
                r##"<text x="{cx}" y="{tally_y}" text-anchor="middle" font-size="{tally_size}" fill="#37474f">{}</text>"##,
                xml_escape(&tally)
            );
            if three_lines {
                for (k, line) in inside_lines.iter().enumerate() {
                    let _ = write!(
                        out,
                        r##"<text class="contents" x="{cx}" y="{}" text-anchor="middle" font-size="{inside_size}" fill="#37474f">{}</text>"##,
                        tally_y + 1.3 * inside_size * (k + 1) as f32,
                        xml_escape(line)
                    );
                }
            }
        }
        let _ = writeln!(out, "</g>");
    }
    let _ = writeln!(out, "</g>");

    // Devices left on their own keep their names at the design's scale, as their boxes do
    // (the picture's text size is for blocks, labels and the legend).
    let _ = writeln!(out, r#"<g class="devices" font-size="12">"#);
    // Domains first: their trays sit on top of them.
    for domains in [true, false] {
        for &i in &loose {
            let d = &devices[i];
            if matches!(d.kind, DeviceKind::NvSwitchDomain(_)) == domains {
                write_device(
                    &mut out,
                    d,
                    rects[&d.id],
                    domains,
                    &diagram_titles(catalog, d),
                );
            }
        }
    }
    let _ = writeln!(out, "</g>");

    let block_boxes: Vec<Rect> = folding
        .blocks
        .iter()
        .map(|b| Rect::from_corners(b.bounds))
        .collect();
    write_bundle_labels(&mut out, &ordered, &owner_rect, &block_boxes, u);

    let _ = writeln!(
        out,
        r#"<g transform="translate({} {}) scale({u})" font-size="12">"#,
        bounds.x1 + MARGIN * u,
        bounds.y0
    );
    write_legend(&mut out, &legend, (0.0, 0.0));
    let _ = writeln!(out, "</g>");
    out.push_str("</svg>\n");
    out
}

/// What each block holds, most numerous first: "32 × dgx-h100 · 8 × qm9700 leaf". Nodes by
/// their model, switches by model and role, domains by model.
fn block_contents(design: &Design, block_of: &[u32], blocks: usize) -> Vec<String> {
    let mut counts: Vec<Vec<(String, u32)>> = vec![Vec::new(); blocks];
    for (device, &b) in design.devices.iter().zip(block_of) {
        let Some(kinds) = counts.get_mut(b as usize) else {
            continue;
        };
        let kind = match &device.kind {
            DeviceKind::GpuNode(n) => n.model.as_str().to_string(),
            DeviceKind::Switch(s) => format!("{} {}", s.model.as_str(), s.role.label()),
            DeviceKind::NvSwitchDomain(d) => d.model.as_str().to_string(),
            DeviceKind::Host(_) => "host".to_string(),
        };
        match kinds.iter_mut().find(|(k, _)| *k == kind) {
            Some((_, n)) => *n += 1,
            None => kinds.push((kind, 1)),
        }
    }
    counts
        .into_iter()
        .map(|mut kinds| {
            kinds.sort_by(|a, b| b.1.cmp(&a.1).then_with(|| a.0.cmp(&b.0)));
            kinds
                .iter()
                .map(|(kind, n)| format!("{} × {kind}", group_thousands(i64::from(*n))))
                .collect::<Vec<_>>()
                .join(" · ")
        })
        .collect()
}

/// "1,024 devices · 8,192 GPUs", or without GPUs "64 devices" ("1 device").
fn tally_text(devices: u32, gpus: u64) -> String {
    let noun = if devices == 1 { "device" } else { "devices" };
    let devices = format!("{} {noun}", group_thousands(i64::from(devices)));
    if gpus > 0 {
        format!("{devices} · {} GPUs", group_thousands(gpus as i64))
    } else {
        devices
    }
}

/// Each bundle's count and rate ("2048 × 400G") on a white tag where its line is seen: in
/// the open between blocks (a line under a block is hidden), and clear of other labels.
fn write_bundle_labels(
    out: &mut String,
    bundles: &[((usize, usize), &Bundle)],
    owner_rect: &dyn Fn(usize) -> Rect,
    blocks: &[Rect],
    u: f32,
) {
    let overlaps = |a: &Rect, b: &Rect| a.x0 < b.x1 && b.x0 < a.x1 && a.y0 < b.y1 && b.y0 < a.y1;
    let mut placed: Vec<Rect> = blocks.to_vec();
    // Single links are labelled only on a small picture (as in the full diagram); past a
    // few hundred labels the picture holds no room for more anyway.
    let min = min_labelled(bundles.len());
    let _ = writeln!(out, r#"<g class="link-labels">"#);
    for &((a, b), bundle) in bundles
        .iter()
        .filter(|(_, b)| b.tally.links >= min)
        .take(MAX_LABELS)
    {
        let text = link_label(&bundle.tally);
        let (width, height) = (
            (text.chars().count() as f32 * LABEL_PX * CHAR_WIDTH + 8.0) * u,
            (LABEL_PX + 4.0) * u,
        );
        let ((x1, y1), (x2, y2)) = (owner_rect(a).centre(), owner_rect(b).centre());
        // Tried from the middle outwards, in tenths of the line.
        let spot = [0.5, 0.4, 0.6, 0.3, 0.7, 0.2, 0.8].iter().find_map(|&t| {
            let (mx, my) = (x1 + (x2 - x1) * t, y1 + (y2 - y1) * t);
            let tag = Rect {
                x0: mx - width / 2.0,
                y0: my - height / 2.0,
                x1: mx + width / 2.0,
                y1: my + height / 2.0,
            };
            (!placed.iter().any(|p| overlaps(p, &tag))).then_some((mx, my, tag))
        });
        let Some((mx, my, tag)) = spot else {
            continue;
        };
        placed.push(tag);
        let _ = writeln!(
            out,
            r##"<rect x="{}" y="{}" width="{width}" height="{height}" rx="{}" fill="#ffffff" fill-opacity="0.9"/><text x="{mx}" y="{}" text-anchor="middle" font-size="{}" fill="#212121">{}</text>"##,
            tag.x0,
            tag.y0,
            3.0 * u,
            my + LABEL_PX / 3.0 * u,
            LABEL_PX * u,
            xml_escape(&text)
        );
    }
    let _ = writeln!(out, "</g>");
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::generate::{Template, TemplateSpec, generate};
    use crate::model::Catalog;

    fn attribute(svg: &str, name: &str) -> f32 {
        let head = &svg[svg.find("<svg").expect("an svg element")..];
        let at = head.find(&format!(" {name}=\"")).expect("the attribute") + name.len() + 3;
        head[at..]
            .split('"')
            .next()
            .unwrap()
            .parse()
            .expect("a number")
    }

    /// 256 DGX in two pods of four 32-node units under 32 core switches: the overview is two
    /// pod blocks and a core block, each pod joined to the core by one line of 1,024 links
    /// (32 spines × 32 uplinks), on a picture of slide width.
    #[test]
    fn two_pods_and_a_core_are_three_blocks_and_two_bundles() {
        let catalog = Catalog::builtin();
        let mut spec = TemplateSpec::new(Template::RailOptimized);
        spec.nodes = Some(256);
        spec.tiers = 3;
        let design = generate(&spec, &catalog).expect("generates");
        let svg = design_overview_svg(&design, &Catalog::builtin(), LinkColors::Technology);
        let titles: Vec<&str> = svg
            .split(r#"<g class="block""#)
            .skip(1)
            .map(|b| {
                b.split("<title>")
                    .nth(1)
                    .unwrap()
                    .split('<')
                    .next()
                    .unwrap()
            })
            .collect();
        // A pod: 128 nodes, their 32 rail leaves and 32 spines.
        assert_eq!(
            titles,
            [
                "pod-01: 192 devices · 1,024 GPUs",
                "pod-02: 192 devices · 1,024 GPUs",
                "core · 32 × qm9700"
            ]
        );
        assert_eq!(svg.matches(r#"class="bundle""#).count(), 2);
        assert_eq!(svg.matches(r#"data-links="1024""#).count(), 2);
        // Nothing is left drawn on its own, and each bundle says what it holds.
        assert!(!svg.contains(r#"class="device""#));
        assert!(svg.contains("<title>1024 × 400G</title>"));
        // The full diagram is 6,802 pixels wide; the overview about a slide's width, its
        // text the same size in pixels.
        let full =
            crate::io::svg::design_to_svg(&design, &Catalog::builtin(), LinkColors::Technology);
        assert_eq!(attribute(&full, "width"), 6802.0);
        let width = attribute(&svg, "width");
        assert!((2400.0..2700.0).contains(&width), "{width}");
        // The core row (switches 44 units high, a thin strip at this scale) is drawn tall
        // enough for its caption.
        let core = svg
            .split(r#"<g class="block""#)
            .find(|b| b.contains("<title>core"))
            .expect("the core block");
        let number = |name: &str| {
            let at = core.find(&format!(" {name}=\"")).expect(name) + name.len() + 3;
            core[at..]
                .split('"')
                .next()
                .unwrap()
                .parse::<f32>()
                .unwrap()
        };
        assert!(
            number("height") >= 1.8 * number("font-size") - 1e-3,
            "{core}"
        );
        // A pod's block says what it holds, and its name grows with the block (to 1.75 ×
        // 16 px, room allowing) where a row's caption does not.
        let pod = svg
            .split(r#"<g class="block""#)
            .find(|b| b.contains("<title>pod-01"))
            .expect("a pod block");
        let contents = pod
            .split(r#"class="contents""#)
            .nth(1)
            .and_then(|t| t.split('>').nth(1))
            .and_then(|t| t.split('<').next());
        assert_eq!(
            contents,
            Some("128 × dgx-h100 · 32 × qm9700 leaf · 32 × qm9700 spine")
        );
        let unit = attribute(&svg, "font-size") / 12.0;
        let name_px = |block: &str| {
            let at = block.find(r#"font-weight="bold""#).expect("a name");
            let size = block[..at].rsplit(r#"font-size=""#).next().expect("a size");
            size.split('"').next().unwrap().parse::<f32>().unwrap() / unit
        };
        assert!((name_px(pod) - 28.0).abs() < 0.01, "{}", name_px(pod));
        assert!(name_px(core) <= 16.0 + 1e-3, "{}", name_px(core));
    }

    /// The ring template puts its three Macs in one group ("desk"): one block, a GPU per
    /// Mac, its links all inside it.
    #[test]
    fn a_ring_on_one_desk_is_one_block() {
        let catalog = Catalog::builtin();
        let mut spec = TemplateSpec::new(Template::Ring);
        spec.nodes = Some(3);
        let design = generate(&spec, &catalog).expect("a ring");
        let svg = design_overview_svg(&design, &Catalog::builtin(), LinkColors::Technology);
        assert_eq!(svg.matches(r#"<g class="block""#).count(), 1);
        assert!(
            svg.contains("<title>desk: 3 devices · 3 GPUs</title>"),
            "{svg}"
        );
        assert!(!svg.contains(r#"class="device""#));
        assert!(!svg.contains(r#"class="bundle""#));
        // That box says nothing, so a diagram asked at overview detail draws it in full: its
        // three machines and three cables.
        assert!(overview_is_one_box(&design));
        let drawn = super::super::svg::diagram_svg(
            &design,
            &catalog,
            LinkColors::Technology,
            super::super::svg::Detail::Overview,
        );
        assert!(!drawn.contains(r#"<g class="block""#), "{drawn}");
        assert_eq!(drawn.matches(r#"class="device""#).count(), 3, "{drawn}");
    }
}
