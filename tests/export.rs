//! `railyard export`: link colour modes, the legend and title block, and PNG at a scale,
//! read back with a real XML parser and a real PNG decoder.

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};
use std::process::{Command, Output};

fn railyard(args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_railyard"))
        .args(args)
        .output()
        .expect("the railyard binary runs")
}

fn preset(name: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("presets")
        .join(name)
}

fn path_str(p: &Path) -> &str {
    p.to_str().expect("temporary paths are UTF-8")
}

fn assert_refused(o: &Output, says: &str) {
    let err = String::from_utf8_lossy(&o.stderr);
    assert_eq!(o.status.code(), Some(2), "stderr: {err}");
    assert!(err.contains(says), "{err}");
}

/// What the tests look at in an exported SVG.
#[derive(Debug, Default)]
struct Svg {
    width: f64,
    height: f64,
    /// (`data-rail` if any, `stroke`) of every link line.
    links: Vec<(Option<String>, String)>,
    /// Each link line's ends as written (x1 y1 x2 y2), in the order of `links`.
    link_ends: Vec<String>,
    /// Texts inside the `legend` group, in order (its heading first).
    legend: Vec<String>,
    /// (label, stroke) of each legend entry.
    legend_entries: Vec<(String, String)>,
    /// Texts inside the `title-block` group.
    title: Vec<String>,
}

fn read_svg(text: &str) -> Svg {
    use quick_xml::XmlVersion;
    use quick_xml::events::Event;
    let mut reader = quick_xml::Reader::from_str(text);
    reader.config_mut().check_end_names = true;
    let mut svg = Svg::default();
    // The class of each open element, innermost last.
    let mut open: Vec<String> = Vec::new();
    let mut entry_stroke: Option<String> = None;
    loop {
        let event = reader.read_event().expect("well-formed SVG");
        match &event {
            Event::Start(e) | Event::Empty(e) => {
                let attr = |name: &str| {
                    e.try_get_attribute(name).unwrap().map(|a| {
                        a.normalized_value(XmlVersion::Implicit1_0)
                            .unwrap()
                            .into_owned()
                    })
                };
                let class = attr("class").unwrap_or_default();
                if e.name().as_ref() == b"svg" {
                    svg.width = attr("width").unwrap().parse().unwrap();
                    svg.height = attr("height").unwrap().parse().unwrap();
                }
                if class == "link" {
                    svg.links
                        .push((attr("data-rail"), attr("stroke").expect("a stroke")));
                    let ends = ["x1", "y1", "x2", "y2"].map(|a| attr(a).expect("an end"));
                    svg.link_ends.push(ends.join(" "));
                }
                if e.name().as_ref() == b"line" && open.last().is_some_and(|c| c == "legend-entry")
                {
                    entry_stroke = attr("stroke");
                }
                if matches!(event, Event::Start(_)) {
                    open.push(class);
                }
            }
            Event::End(_) => {
                open.pop();
            }
            Event::Text(t) => {
                let text = t.decode().unwrap().trim().to_string();
                if text.is_empty() {
                    continue;
                }
                if open.iter().any(|c| c == "legend") {
                    svg.legend.push(text.clone());
                    if open.iter().any(|c| c == "legend-entry") {
                        let stroke = entry_stroke.take().expect("a sample line before its label");
                        svg.legend_entries.push((text.clone(), stroke));
                    }
                }
                if open.iter().any(|c| c == "title-block") {
                    svg.title.push(text);
                }
            }
            Event::Eof => break,
            _ => {}
        }
    }
    svg
}

fn export_svg(file: &Path, color: &str) -> Svg {
    let o = railyard(&["export", path_str(file), "-o", "-", "--color", color]);
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    read_svg(&String::from_utf8(o.stdout).unwrap())
}

/// A fat tree's server puts its eight NICs on one leaf: eight cables, eight rails. Under rail
/// colours each rail gets its own lane beside the others, in its own colour, as on the
/// canvas; before, the eight shared one line and it showed whichever rail came last. Under
/// technology colours they are one look and share one line.
#[test]
fn a_bundle_of_several_rails_shows_each_rail_in_its_lane() {
    let dir = tempfile::tempdir().unwrap();
    let ft = dir.path().join("ft.ron");
    let o = railyard(&[
        "generate",
        "fat-tree",
        "--nodes",
        "4",
        "--output",
        path_str(&ft),
    ]);
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let svg = export_svg(&ft, "rail");
    assert_eq!(svg.links.len(), 32);
    let lines: BTreeSet<&String> = svg.link_ends.iter().collect();
    assert_eq!(lines.len(), 32, "{lines:?}");
    let mut strokes: BTreeMap<&str, BTreeSet<&str>> = BTreeMap::new();
    for (rail, stroke) in &svg.links {
        let rail = rail.as_deref().expect("a NIC's rail");
        strokes.entry(rail).or_default().insert(stroke);
    }
    assert_eq!(strokes.len(), 8);
    assert!(strokes.values().all(|s| s.len() == 1), "{strokes:?}");
    let plain = export_svg(&ft, "technology");
    let lines: BTreeSet<&String> = plain.link_ends.iter().collect();
    assert_eq!(lines.len(), 4, "{lines:?}");
}

#[test]
fn the_superpod_in_rail_colours_has_one_colour_per_rail_and_a_legend() {
    let svg = export_svg(&preset("dgx-h100-superpod-su.ron"), "rail");
    // 32 nodes × 8 NICs to the rail leaves, and each leaf's 32 uplinks: 64 links a rail,
    // every one of them on a rail.
    assert_eq!(svg.links.len(), 512);
    let mut colours: BTreeMap<String, BTreeSet<String>> = BTreeMap::new();
    for (rail, stroke) in &svg.links {
        let rail = rail
            .clone()
            .expect("every link of a rail fabric has a rail");
        colours.entry(rail).or_default().insert(stroke.clone());
    }
    let rails: Vec<&str> = colours.keys().map(String::as_str).collect();
    assert_eq!(rails, ["0", "1", "2", "3", "4", "5", "6", "7"]);
    for (rail, strokes) in &colours {
        assert_eq!(strokes.len(), 1, "rail {rail} drawn in {strokes:?}");
        let count = svg
            .links
            .iter()
            .filter(|(r, _)| r.as_ref() == Some(rail))
            .count();
        assert_eq!(count, 64, "rail {rail}");
    }
    let distinct: BTreeSet<&String> = colours.values().flatten().collect();
    assert_eq!(distinct.len(), 8, "{distinct:?}");

    // The legend names each rail with its colour, under its heading.
    assert_eq!(
        svg.legend.first().map(String::as_str),
        Some("Links by rail")
    );
    let want: Vec<(String, String)> = colours
        .iter()
        .map(|(rail, strokes)| (format!("rail {rail}"), strokes.first().unwrap().clone()))
        .collect();
    assert_eq!(svg.legend_entries, want);
    // The title block names the design.
    assert_eq!(
        svg.title.first().map(String::as_str),
        Some("DGX H100 SuperPOD scalable unit (32 nodes, rail-optimized NDR)")
    );
    assert!(svg.title[1].contains("256 GPUs"), "{:?}", svg.title);
}

#[test]
fn tiers_and_technology_colour_by_what_they_say() {
    let su = preset("dgx-h100-superpod-su.ron");
    // Two tiers of links: 256 node-to-leaf, 256 leaf-to-spine, one colour each.
    let tiers = export_svg(&su, "tier");
    let labels: Vec<&str> = tiers
        .legend_entries
        .iter()
        .map(|(l, _)| l.as_str())
        .collect();
    assert_eq!(labels, ["node to leaf", "leaf to spine"]);
    for (label, stroke) in &tiers.legend_entries {
        let n = tiers.links.iter().filter(|(_, s)| s == stroke).count();
        assert_eq!(n, 256, "{label}");
    }
    // By technology everything is InfiniBand, one colour.
    let tech = export_svg(&su, "technology");
    assert_eq!(tech.legend_entries.len(), 1);
    assert_eq!(tech.legend_entries[0].0, "InfiniBand");
    assert!(
        tech.links
            .iter()
            .all(|(_, s)| *s == tech.legend_entries[0].1)
    );
    // The heatmap shows its scale's labels in the legend.
    let heat = export_svg(&su, "heatmap");
    assert_eq!(heat.legend[0], "Links by load (time busy)");
    assert_eq!(heat.legend[1..4], ["0 %", "50 %", "100 %"]);
}

#[test]
fn a_png_at_scale_two_is_twice_the_diagram() {
    let dir = tempfile::tempdir().unwrap();
    let su = preset("dgx-h100-superpod-su.ron");
    let svg = export_svg(&su, "rail");
    let mut sizes = Vec::new();
    for scale in ["1", "2"] {
        let png = dir.path().join(format!("su-{scale}.png"));
        let o = railyard(&[
            "export",
            path_str(&su),
            "-o",
            path_str(&png),
            "--color",
            "rail",
            "--scale",
            scale,
        ]);
        assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
        let image = image::open(&png).expect("a PNG").to_rgba8();
        sizes.push(image.dimensions());
    }
    let (w, h) = (svg.width.ceil() as u32, svg.height.ceil() as u32);
    assert_eq!(sizes[0], (w, h));
    assert_eq!(sizes[1], (2 * w, 2 * h));
}

#[test]
fn bad_modes_and_scales_are_refused() {
    let su = preset("dgx-h100-superpod-su.ron");
    let su = path_str(&su);
    assert_refused(
        &railyard(&["export", su, "-o", "-", "--color", "rainbow"]),
        "not a colour mode",
    );
    assert_refused(
        &railyard(&["export", su, "-o", "x.png", "--scale", "5"]),
        "5",
    );
    assert_refused(
        &railyard(&["export", su, "-o", "x.svg", "--scale", "2"]),
        "--scale is for a PNG",
    );
    assert_refused(
        &railyard(&["export", su, "-o", "-", "--color", "rail", "--bytes", "1M"]),
        "--bytes",
    );
}

/// The SVG export of a rail-optimized design generated with `args`, as the command line
/// writes them.
fn generated_svg(args: &[&str]) -> String {
    let dir = tempfile::tempdir().expect("temp dir");
    let design = dir.path().join("generated.ron");
    let mut generate = vec!["generate", "rail-optimized"];
    generate.extend_from_slice(args);
    generate.extend_from_slice(&["-o", path_str(&design)]);
    let o = railyard(&generate);
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let o = railyard(&["export", path_str(&design), "-o", "-", "--format", "svg"]);
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    String::from_utf8(o.stdout).expect("UTF-8")
}

/// Pods and scalable units are framed and captioned in the export, as on the canvas: 256
/// DGX H100 in 3 tiers are 2 pods of 4 units, so 10 frames, pods first. The captions stand
/// on light tags above the links (under them, a spine's fan of links crossed them out).
#[test]
fn pods_and_units_are_framed_and_captioned() {
    let svg = generated_svg(&["--nodes", "256", "--tiers", "3"]);
    let layer = |class: &str| {
        let (before, rest) = svg
            .split_once(&format!(r#"<g class="{class}">"#))
            .unwrap_or_else(|| panic!("a {class} layer"));
        (before.len(), rest.split("</g>").next().expect("closed"))
    };
    let (_, groups) = layer("groups");
    assert_eq!(groups.matches("<rect").count(), 10);
    let (captions_at, tagged) = layer("group-captions");
    let (links_at, _) = layer("links");
    assert!(captions_at > links_at, "captions drawn after the links");
    assert_eq!(tagged.matches("<rect").count(), 10);
    let captions: Vec<&str> = tagged
        .lines()
        .filter_map(|l| {
            l.split("<text")
                .nth(1)?
                .split('>')
                .nth(1)?
                .strip_suffix("</text")
        })
        .collect();
    assert_eq!(captions[0], "pod-01 · 128 nodes, 1024 GPUs");
    assert!(
        captions.contains(&"su-08 · 32 nodes, 256 GPUs"),
        "{captions:?}"
    );
}

/// Each switch row is captioned with its role and count, and links carry their rates where
/// there is room: the 32-node SuperPOD unit has a row of 4 spines over 8 rail leaves, each
/// leaf joined to each spine by 8 cables of 400 Gb/s (its 32 uplinks over 4 spines).
#[test]
fn switch_rows_are_captioned_and_bundles_carry_their_rates() {
    let svg = generated_svg(&["--nodes", "32"]);
    let layer = |class: &str| -> Vec<String> {
        svg.split(&format!(r#"<g class="{class}">"#))
            .nth(1)
            .and_then(|rest| rest.split("</g>").next())
            .unwrap_or_else(|| panic!("a {class} layer"))
            .lines()
            .filter_map(|l| {
                let text = l.split("<text").nth(1)?;
                Some(text.split('>').nth(1)?.strip_suffix("</text")?.to_string())
            })
            .collect()
    };
    assert_eq!(layer("tiers"), ["spine · 4 × qm9700", "leaf · 8 × qm9700"]);
    let labels = layer("link-labels");
    // 32 leaf–spine bundles; node–leaf links are single, and with 288 linked pairs the
    // single ones go unlabelled.
    assert!(!labels.is_empty() && labels.len() <= 32, "{labels:?}");
    assert!(labels.iter().all(|l| l == "8 × 400G"), "{labels:?}");
}

/// A fabric too large for a full PNG (2,048 DGX in 3 tiers: the full diagram is refused above
/// 200 megapixels, and the refusal names the overview) draws as an overview: 16 pod blocks
/// and the core, at about a slide's width, with pixels to spare.
#[test]
fn a_large_fabric_draws_as_an_overview_png() {
    let dir = tempfile::tempdir().unwrap();
    let design = dir.path().join("big.ron");
    let o = railyard(&[
        "generate",
        "rail-optimized",
        "--nodes",
        "2048",
        "--tiers",
        "3",
        "-o",
        path_str(&design),
    ]);
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let full = dir.path().join("full.png");
    let o = railyard(&[
        "export",
        path_str(&design),
        "-o",
        path_str(&full),
        "--scale",
        "4",
    ]);
    assert_refused(&o, "--overview");
    let png = dir.path().join("overview.png");
    let o = railyard(&[
        "export",
        path_str(&design),
        "--overview",
        "-o",
        path_str(&png),
    ]);
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let (w, _) = image::open(&png).expect("a PNG").to_rgba8().dimensions();
    assert!((2400..2800).contains(&w), "{w}");
    let o = railyard(&["export", path_str(&design), "--overview", "-o", "-"]);
    let svg = String::from_utf8(o.stdout).expect("UTF-8");
    let pods = (1..=16)
        .filter(|k| svg.contains(&format!("<title>pod-{k:02}: ")))
        .count();
    assert_eq!(pods, 16);
    assert!(svg.contains("<title>core · "), "a core block");
    // Pods are joined only through the core: one line per pod.
    assert_eq!(svg.matches(r#"class="bundle""#).count(), 16);
    assert_refused(
        &railyard(&[
            "export",
            path_str(&design),
            "--overview",
            "--format",
            "dot",
            "-o",
            "-",
        ]),
        "--overview are for SVG and PNG",
    );
}

/// A name too long for its box is shortened as on the canvas, by whole words from the front
/// ("…rack-unit-1" in a 100-unit box), never cut inside a word or run over the box; the
/// device's title keeps the full name.
#[test]
fn long_names_shorten_by_whole_words_in_the_diagram() {
    let dir = tempfile::tempdir().unwrap();
    let text = std::fs::read_to_string(preset("mac-studio-tb5-x4.ron")).expect("the preset");
    let long = "mac-studio-m3-ultra-living-room-rack-unit-1";
    let file = dir.path().join("long.ron");
    std::fs::write(
        &file,
        text.replace(r#"name: "node-01""#, &format!(r#"name: "{long}""#)),
    )
    .unwrap();
    let o = railyard(&["export", path_str(&file), "-o", "-"]);
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let svg = String::from_utf8(o.stdout).unwrap();
    let device = svg
        .split(r#"<g class="device""#)
        .find(|g| g.contains(long))
        .expect("the renamed device");
    assert!(device.contains(&format!("<title>{long}</title>")));
    assert!(
        device.contains(r##"fill="#ffffff">…rack-unit-1</text>"##),
        "{device}"
    );
    // node-02 fits as it is.
    assert!(svg.contains(r##"fill="#ffffff">node-02</text>"##));
}

/// A slide has no inspector: each box says what it is above its name, as the canvas does,
/// and a switch its model too where the box has room (a spine's "spine · qm9700"; a rail
/// leaf's "leaf · rail 0 · qm9700" is too long for its box, so it keeps "leaf · rail 0").
/// Four Macs in a full mesh: the two diagonals of the square cross in its middle. Each rate
/// label lies on its own line only, so no label sits where another line crosses and reads as
/// that line's (checked by sampling each line, not by the code that places them).
#[test]
fn each_link_label_lies_on_one_line_only() {
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("mesh.svg");
    let o = railyard(&[
        "export",
        path_str(&preset("mac-studio-tb5-x4.ron")),
        "-o",
        path_str(&out),
    ]);
    assert!(o.status.success());
    let text = std::fs::read_to_string(&out).unwrap();
    let attr = |tag: &str, name: &str| -> f32 {
        let key = format!(" {name}=\"");
        let from = tag.find(&key).expect(name) + key.len();
        tag[from..].split('"').next().unwrap().parse().unwrap()
    };
    let lines: Vec<[f32; 4]> = text
        .lines()
        .filter(|l| l.starts_with(r#"<line class="link""#))
        .map(|l| [attr(l, "x1"), attr(l, "y1"), attr(l, "x2"), attr(l, "y2")])
        .collect();
    assert_eq!(lines.len(), 6);
    let labels_block = text
        .split(r#"<g class="link-labels">"#)
        .nth(1)
        .and_then(|rest| rest.split("</g>").next())
        .expect("labels");
    let rects: Vec<[f32; 4]> = labels_block
        .lines()
        .filter(|l| l.starts_with("<rect"))
        .map(|l| {
            let (x, y) = (attr(l, "x"), attr(l, "y"));
            [x, y, x + attr(l, "width"), y + attr(l, "height")]
        })
        .collect();
    assert_eq!(rects.len(), 6, "every link labelled");
    for r in &rects {
        let meeting = lines
            .iter()
            .filter(|[x1, y1, x2, y2]| {
                (0..=400).any(|k| {
                    let t = k as f32 / 400.0;
                    let (x, y) = (x1 + (x2 - x1) * t, y1 + (y2 - y1) * t);
                    x >= r[0] && x <= r[2] && y >= r[1] && y <= r[3]
                })
            })
            .count();
        assert_eq!(meeting, 1, "label at {r:?} lies on {meeting} lines");
    }
}

#[test]
fn boxes_say_what_they_are_above_their_names() {
    let svg = generated_svg(&["--nodes", "32"]);
    let devices = svg
        .split(r#"<g class="devices">"#)
        .nth(1)
        .and_then(|rest| rest.split("\n</g>").next())
        .expect("a devices layer");
    let what = |name: &str| -> String {
        let device = devices
            .lines()
            .find(|l| l.contains(&format!("<title>{name}</title>")))
            .unwrap_or_else(|| panic!("{name} in {devices}"));
        device
            .split(r#"<text class="what""#)
            .nth(1)
            .and_then(|t| t.split('>').nth(1))
            .and_then(|t| t.strip_suffix("</text"))
            .unwrap_or_else(|| panic!("a title line in {device}"))
            .to_string()
    };
    assert_eq!(what("node-01"), "8× H100");
    assert_eq!(what("spine-01"), "spine · qm9700");
    assert_eq!(what("leaf-r0"), "leaf · rail 0");
}

/// A diagram exported during a what-if says so in its title block, so it is not shown as the
/// healthy design: the SuperPOD unit with leaf-r0's 64 links failed.
#[test]
fn a_what_if_is_named_in_the_diagram_title() {
    let dir = tempfile::tempdir().expect("temp dir");
    let text = std::fs::read_to_string(preset("dgx-h100-superpod-su.ron")).expect("preset");
    let mut design = railyard::io::parse_design(&text, "su").expect("parses");
    let leaf = design
        .devices
        .iter()
        .find(|d| d.name == "leaf-r0")
        .expect("leaf-r0")
        .id;
    for l in &mut design.links {
        if l.touches(leaf) {
            l.state = railyard::model::LinkState::Failed;
        }
    }
    let path = dir.path().join("down.ron");
    railyard::io::save_design(&path, &design).expect("saved");
    let o = railyard(&["export", path_str(&path), "-o", "-", "--format", "svg"]);
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let svg = String::from_utf8(o.stdout).expect("UTF-8");
    assert!(
        svg.contains(">what-if: 64 links failed · 256 GPUs"),
        "{}",
        &svg[..800]
    );
    // The healthy preset's title says nothing of it.
    let o = railyard(&[
        "export",
        path_str(&preset("dgx-h100-superpod-su.ron")),
        "-o",
        "-",
        "--format",
        "svg",
    ]);
    assert!(!String::from_utf8_lossy(&o.stdout).contains("what-if"));
}
