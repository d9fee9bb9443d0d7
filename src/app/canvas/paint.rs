//! Drawing the canvas: grid, links, devices and labels. Shapes go out in a few batches
//! (`Painter::extend`), off-screen items are skipped, and detail drops with the zoom.

use super::bundle::{Bundles, CELL_PX, FAR_CELL_PX, ParallelLinks};
use super::geometry::{
    DrawnLane, HANDLE_RADIUS_PX, Handles, Layout, clip_segment, handle_center, is_domain,
};
use super::{CanvasOverlay, CanvasState};
use crate::io::device_title::device_title;
use crate::io::group_frames::GroupFrame;
use crate::io::link_colors::{
    self, Background, ColorMode, Legend, LegendEntry, LegendTally, LinkPainter, Pattern, Rgb,
    heat_stops, lane_look,
};
use crate::io::link_label::{
    label_spots, link_label, min_labelled, segment_meets_box, sort_for_labels,
};
use crate::io::name_forms::{fitting_form, name_forms, two_lines};
use crate::io::tier_captions::TierCaption;
use crate::model::{
    Catalog, Design, Device, DeviceKind, Link, LinkState, LinkTech, PartId, ScaleUp, SwitchRole,
};
use egui::emath::TSTransform;
use egui::epaint::text::{LayoutJob, TextFormat, TextWrapping};
use egui::epaint::{Mesh, Vertex, WHITE_UV};
use egui::{
    Align2, Color32, FontId, Galley, Painter, Pos2, Rect, Shape, Stroke, StrokeKind, pos2, vec2,
};
use std::sync::Arc;

/// Utilisation from which a link shows under the heatmap even inside a bundle (the first
/// such link of each bundle).
const HOT: f64 = 0.9;

/// Zoom (screen points per canvas unit) below which groups collapse into blocks.
pub(super) const COLLAPSE_ZOOM: f32 = 0.1;
/// Below this, devices are plain rectangles without borders or rounded corners.
pub(super) const DETAIL_ZOOM: f32 = 0.25;
/// From this zoom on, every visible device shows its port handle (otherwise only the hovered).
pub(super) const ALL_HANDLES_ZOOM: f32 = 1.0;
/// Below this, not even the hovered device shows a handle: it would be too small to grab.
pub(super) const MIN_HANDLE_ZOOM: f32 = 0.3;
/// Device label size in canvas units; labels show once they reach `MIN_TEXT_PX` on screen.
const LABEL_SIZE: f32 = 12.0;
const DOMAIN_LABEL_SIZE: f32 = 14.0;
const MIN_TEXT_PX: f32 = 7.0;
/// Smallest device label on screen, in points.
const MIN_LABEL_PX: f32 = 10.0;
const MAX_TEXT_PX: f32 = 32.0;
/// Screen size of block labels and hover tags, which do not scale with the zoom.
const TAG_PX: f32 = 12.0;

/// The colour of a link technology, as the exports draw it too.
pub fn tech_color(tech: LinkTech) -> Color32 {
    color32(link_colors::tech_color(tech))
}

/// Utilisation 0..1 as green → yellow → red (values outside are clamped).
pub fn heat_color(utilisation: f64) -> Color32 {
    color32(link_colors::heat_color(utilisation))
}

fn color32(Rgb(r, g, b): Rgb) -> Color32 {
    Color32::from_rgb(r, g, b)
}

const SELECTED: Color32 = Color32::from_rgb(255, 202, 40);
const HIGHLIGHT: Color32 = Color32::from_rgba_premultiplied(120, 110, 20, 120);
const LABEL: Color32 = Color32::WHITE;
const NODE_FILL: Color32 = Color32::from_rgb(44, 92, 150);
const MAC_FILL: Color32 = Color32::from_rgb(96, 100, 118);
const HOST_FILL: Color32 = Color32::from_rgb(92, 92, 92);
const DOMAIN_STROKE: Color32 = Color32::from_rgb(118, 185, 0);
const DOMAIN_FILL: Color32 = Color32::from_rgba_premultiplied(14, 24, 0, 28);
const DOMAIN_HEADER_FILL: Color32 = Color32::from_rgba_premultiplied(50, 80, 0, 110);
const BLOCK_FILL: Color32 = Color32::from_rgb(70, 84, 110);
/// Pods' and units' frames: a grey that reads on the dark and the light canvas.
const FRAME_STROKE: Color32 = Color32::from_rgba_premultiplied(110, 110, 110, 160);
const FRAME_CAPTION_DARK: Color32 = Color32::from_gray(170);
const FRAME_CAPTION_LIGHT: Color32 = Color32::from_gray(80);
/// Narrower on screen than this, a group gets no frame; twice as wide, a caption too.
const FRAME_MIN_PX: f32 = 60.0;

fn switch_fill(role: SwitchRole) -> Color32 {
    match role {
        SwitchRole::Leaf => Color32::from_rgb(0, 121, 107),
        SwitchRole::Spine => Color32::from_rgb(106, 76, 160),
        SwitchRole::Core => Color32::from_rgb(160, 52, 74),
    }
}

fn device_fill(d: &Device) -> Color32 {
    match &d.kind {
        DeviceKind::GpuNode(n) if n.scale_up == ScaleUp::UnifiedMemory => MAC_FILL,
        DeviceKind::GpuNode(_) => NODE_FILL,
        DeviceKind::Switch(s) => switch_fill(s.role),
        DeviceKind::Host(_) => HOST_FILL,
        DeviceKind::NvSwitchDomain(_) => DOMAIN_FILL,
    }
}

/// Link width on screen: grows with the log of the bandwidth (10G thin, 800G thick), and
/// thins out (but never vanishes) when zoomed out.
pub(super) fn link_width_px(link: &Link, zoom: f32) -> f32 {
    link_width_px_scaled(link, link_width_scale(zoom))
}

/// Zoomed out, links thin a little slower than devices shrink, so bandwidth stays legible.
fn link_width_scale(zoom: f32) -> f32 {
    zoom.powf(0.75).min(1.0)
}

/// `link_width_px` with the zoom factor worked out once per frame.
fn link_width_px_scaled(link: &Link, scale: f32) -> f32 {
    let gbit = link.nominal_capacity().gbit_s().max(1.0);
    let w = (1.0 + 1.1 * ((gbit / 10.0).log2().max(0.0) as f32)).min(9.0);
    (w * scale).max(0.75)
}

/// The captions a frame draws over the design: pod and unit frames, tier captions.
#[derive(Debug, Default)]
pub struct Captions {
    pub frames: Vec<GroupFrame>,
    pub tiers: Vec<TierCaption>,
}

/// The frames of pods and units and the captions of switch tiers as `layout` draws the
/// design, and a fingerprint of what they are drawn from (every drawn box, group, GPU count
/// and switch): finding them walks every device's groups, about 2 ms at 9,000 devices, so a
/// frame reuses the last ones while the fingerprint holds.
pub(super) fn captions_of(
    design: &Design,
    layout: &Layout,
    cache: &mut Option<(u64, std::sync::Arc<Captions>)>,
) -> std::sync::Arc<Captions> {
    let mut h: u64 = 0xcbf2_9ce4_8422_2325;
    let mut mix = |x: u64| h = (h ^ x).wrapping_mul(0x0000_0100_0000_01b3);
    for r in layout
        .rects
        .iter()
        .chain(layout.blocks.iter().map(|b| &b.rect))
    {
        mix(u64::from(r.min.x.to_bits()) << 32 | u64::from(r.min.y.to_bits()));
    }
    for (i, d) in design.devices.iter().enumerate() {
        mix(layout.block_of(i).map_or(u64::MAX, |b| b as u64));
        match &d.kind {
            DeviceKind::GpuNode(n) => mix(u64::from(n.gpu_count)),
            DeviceKind::Switch(s) => {
                mix(s.role as u64);
                s.model.as_str().bytes().for_each(|b| mix(u64::from(b)));
            }
            _ => {}
        }
    }
    for g in &design.groups {
        mix(u64::from(g.id.0));
        mix(g.parent.map_or(u64::MAX, |p| u64::from(p.0)));
        g.name.bytes().for_each(|b| mix(u64::from(b)));
    }
    if let Some((key, captions)) = cache
        && *key == h
    {
        return captions.clone();
    }
    let block_or_box = |i: usize| {
        let r = match layout.block_of(i) {
            Some(b) => layout.blocks[b].rect,
            None => *layout.rects.get(i)?,
        };
        Some(((r.min.x, r.min.y), (r.max.x, r.max.y)))
    };
    let own_box = |i: usize| {
        if layout.block_of(i).is_some() {
            return None;
        }
        let r = layout.rects.get(i)?;
        Some(((r.min.x, r.min.y), (r.max.x, r.max.y)))
    };
    let captions = std::sync::Arc::new(Captions {
        frames: if design.groups.is_empty() {
            Vec::new()
        } else {
            crate::io::group_frames::group_frames(design, block_or_box)
        },
        tiers: crate::io::tier_captions::tier_captions(design, own_box),
    });
    *cache = Some((h, captions.clone()));
    captions
}

/// What the links drawn showed: the legend's tally and the bundles of parallel links.
pub(super) struct LinksDrawn {
    pub tally: LegendTally,
    pub parallel: ParallelLinks,
    /// Links passing through the view (neither end in it) left out past `PASSING_MAX`.
    pub passing_hidden: usize,
    /// Links drawn in a lane beside their bundle's line, where they were drawn.
    pub lanes: Vec<DrawnLane>,
    /// Links leading out of the view drawn as short stubs (a crowded view), else 0.
    pub stubbed: usize,
    /// The stubs' length in canvas units, when any were drawn.
    pub stub_length: Option<f32>,
}

/// A link with one end in view, drawn once the frame knows how many there are.
struct Leaving {
    /// The box of the end in view, and where the other end is.
    inside: Rect,
    outside: Pos2,
    width_px: f32,
    color: Color32,
}

/// Everything one frame's painting needs.
pub(super) struct Frame<'a> {
    pub scene: &'a Painter,
    /// Screen-space painter above the scene, for crisp text at any zoom.
    pub labels: &'a Painter,
    pub to_global: TSTransform,
    pub zoom: f32,
    /// The visible part of the canvas, in canvas units.
    pub view: Rect,
    pub design: &'a Design,
    pub catalog: &'a Catalog,
    pub layout: &'a Layout,
    pub state: &'a CanvasState,
    pub overlay: &'a CanvasOverlay<'a>,
    pub handles: Handles,
    /// Nodes, switches and hosts in view and not collapsed (see [`visible_devices`]).
    pub visible: &'a [usize],
    /// Devices outlined as hovered (the pointer, or a link's prospective end).
    pub hovered: Option<usize>,
    pub dark: bool,
    /// The link colours chosen, as this design can show them
    /// ([`crate::io::link_colors::drawn_mode`]).
    pub drawn_colors: ColorMode,
}

impl Frame<'_> {
    fn px(&self, screen_points: f32) -> f32 {
        screen_points / self.zoom
    }

    pub fn grid(&self) {
        let mut step = super::GRID;
        while step * self.zoom < 12.0 {
            step *= 5.0;
        }
        let major = step * 5.0;
        let (minor_color, major_color) = if self.dark {
            (Color32::from_white_alpha(10), Color32::from_white_alpha(24))
        } else {
            (Color32::from_black_alpha(14), Color32::from_black_alpha(30))
        };
        let width = self.px(1.0);
        let v = self.view;
        let mut shapes = Vec::new();
        let mut x = (v.min.x / step).floor() * step;
        while x <= v.max.x {
            let c = if (x / major).round() * major == x {
                major_color
            } else {
                minor_color
            };
            shapes.push(Shape::line_segment(
                [pos2(x, v.min.y), pos2(x, v.max.y)],
                Stroke::new(width, c),
            ));
            x += step;
        }
        let mut y = (v.min.y / step).floor() * step;
        while y <= v.max.y {
            let c = if (y / major).round() * major == y {
                major_color
            } else {
                minor_color
            };
            shapes.push(Shape::line_segment(
                [pos2(v.min.x, y), pos2(v.max.x, y)],
                Stroke::new(width, c),
            ));
            y += step;
        }
        self.scene.extend(shapes);
    }

    fn selected_device(&self, d: &Device) -> bool {
        let sel = &self.state.selection.devices;
        !sel.is_empty() && sel.contains(&d.id)
    }

    /// NVSwitch-domain containers, under everything else.
    pub fn domains(&self) {
        let mut shapes = Vec::new();
        let detail = self.zoom >= DETAIL_ZOOM;
        for (i, d) in self.design.devices.iter().enumerate() {
            if !is_domain(d) || self.layout.block_of(i).is_some() {
                continue;
            }
            let r = self.layout.rects[i];
            if !r.intersects(self.view) {
                continue;
            }
            let stroke = if self.selected_device(d) {
                Stroke::new(self.px(2.5), SELECTED)
            } else if self.hovered == Some(i) {
                Stroke::new(self.px(2.0), Color32::WHITE)
            } else {
                Stroke::new(self.px(1.5), DOMAIN_STROKE)
            };
            let radius = if detail { 10.0 } else { 0.0 };
            shapes.push(Shape::rect_filled(r, radius, DOMAIN_FILL));
            if detail {
                let header =
                    Rect::from_min_size(r.min, vec2(r.width(), super::geometry::DOMAIN_HEADER));
                shapes.push(Shape::rect_filled(
                    header,
                    egui::CornerRadius {
                        nw: 10,
                        ne: 10,
                        sw: 0,
                        se: 0,
                    },
                    DOMAIN_HEADER_FILL,
                ));
            }
            shapes.push(Shape::rect_stroke(r, radius, stroke, StrokeKind::Inside));
        }
        self.scene.extend(shapes);
    }

    /// Frames around pods and scalable units, and the units' captions above their top
    /// left corners; returns where the captions were drawn (screen points). Pods are
    /// captioned last ([`Frame::pod_captions`]), above what is already there.
    pub fn group_frames(&self, frames: &[GroupFrame]) -> Vec<Rect> {
        if frames.is_empty() || self.zoom < COLLAPSE_ZOOM {
            return Vec::new();
        }
        let stroke = Stroke::new(self.px(1.0), FRAME_STROKE);
        let mut outlines = Vec::new();
        let mut placed: Vec<Rect> = Vec::new();
        for f in frames {
            let r = Rect::from_min_max(pos2(f.min.0, f.min.1), pos2(f.max.0, f.max.1));
            let screen = self.to_global * r;
            if !r.intersects(self.view) || screen.width() < FRAME_MIN_PX {
                continue;
            }
            outlines.push(Shape::rect_stroke(
                r,
                self.px(8.0),
                stroke,
                StrokeKind::Inside,
            ));
            if !f.pod {
                self.frame_caption(f, screen, false, &mut placed);
            }
        }
        self.scene.extend(outlines);
        placed
    }

    /// Each pod's caption above its frame's top left corner; where a unit's or a row's
    /// caption already stands there (zoomed out, the frames' tops are a few points apart),
    /// a line higher, or else moved right along its line; left out if still covered.
    /// Returns `placed` with them added.
    pub fn pod_captions(&self, frames: &[GroupFrame], mut placed: Vec<Rect>) -> Vec<Rect> {
        if self.zoom < COLLAPSE_ZOOM {
            return placed;
        }
        for f in frames.iter().filter(|f| f.pod) {
            let r = Rect::from_min_max(pos2(f.min.0, f.min.1), pos2(f.max.0, f.max.1));
            let screen = self.to_global * r;
            if r.intersects(self.view) && screen.width() >= FRAME_MIN_PX {
                self.frame_caption(f, screen, true, &mut placed);
            }
        }
        placed
    }

    /// A frame's caption above `screen` (its frame on screen), on the canvas's colour, if
    /// the frame is wide enough to read it and it covers no caption in `placed`; one that
    /// may `make_room` tries a line higher, then a few steps right within its frame.
    fn frame_caption(&self, f: &GroupFrame, screen: Rect, make_room: bool, placed: &mut Vec<Rect>) {
        if screen.width() < 2.0 * FRAME_MIN_PX {
            return;
        }
        let color = if self.dark {
            FRAME_CAPTION_DARK
        } else {
            FRAME_CAPTION_LIGHT
        };
        let g = self.galley_in(f.caption.clone(), TAG_PX, screen.width() - 12.0, color);
        let at = pos2(screen.min.x + 6.0, screen.min.y - g.size().y - 2.0);
        let natural = Rect::from_min_size(at, g.size()).expand(2.0);
        let clear = |room: &Rect| placed.iter().all(|p| !p.intersects(*room));
        let mut room = natural;
        if make_room && !clear(&room) {
            let lifted = room.translate(vec2(0.0, -(room.height() + 1.0)));
            if clear(&lifted) {
                room = lifted;
            } else {
                // Right past what covers it, a clear gap after, while it stays in its frame.
                for _ in 0..3 {
                    let Some(over) = placed.iter().find(|p| p.intersects(room)) else {
                        break;
                    };
                    room = room.translate(vec2(over.max.x + 16.0 - room.min.x, 0.0));
                }
                if room.max.x > screen.max.x {
                    return;
                }
            }
        }
        if !clear(&room) {
            return;
        }
        let at = at + (room.min - natural.min);
        placed.push(room);
        // On the canvas's own colour, so links passing under it do not cross it out.
        let ground = if self.dark {
            Color32::from_black_alpha(170)
        } else {
            Color32::from_white_alpha(200)
        };
        self.labels.extend([
            Shape::rect_filled(room, 2.0, ground),
            Shape::galley(at, g, color),
        ]);
    }

    /// Each switch row's caption ("leaf · 8 × qm9700") just above its leftmost switch,
    /// on a dark tag as the bundle counts; moved right past captions already drawn there
    /// (`placed`: a unit's frame caption sits just above its leaf row).
    /// Returns `placed` with the captions drawn added.
    pub fn tier_captions(&self, tiers: &[TierCaption], mut placed: Vec<Rect>) -> Vec<Rect> {
        if tiers.is_empty() || self.zoom < COLLAPSE_ZOOM {
            return placed;
        }
        let clip = self.labels.clip_rect();
        let mut shapes = Vec::new();
        for t in tiers {
            let corner = self.to_global * pos2(t.at.0, t.at.1);
            let g = self
                .labels
                .layout_no_wrap(t.text.clone(), FontId::proportional(TAG_PX), LABEL);
            let mut at = pos2(corner.x, corner.y - g.size().y - 6.0);
            let mut rect = Rect::from_min_size(at, g.size()).expand2(vec2(4.0, 1.0));
            // A few steps right at most: past that the row's own switches are covered.
            for _ in 0..3 {
                let Some(over) = placed.iter().find(|r| r.intersects(rect)) else {
                    break;
                };
                let dx = over.max.x + 8.0 - rect.min.x;
                at.x += dx;
                rect = rect.translate(vec2(dx, 0.0));
            }
            if !clip.intersects(rect) || placed.iter().any(|r| r.intersects(rect)) {
                continue;
            }
            placed.push(rect);
            push_tag(&mut shapes, rect, at, g);
        }
        self.labels.extend(shapes);
        placed
    }

    /// What link colours show this frame: the heatmap whenever loads are given; rail
    /// colours fall back to technology on a design without rails.
    fn color_mode(&self) -> ColorMode {
        if self.overlay.heat.is_some() {
            ColorMode::Heatmap
        } else {
            self.drawn_colors
        }
    }

    fn background(&self) -> Background {
        if self.dark {
            Background::Dark
        } else {
            Background::Light
        }
    }

    /// Draws the links in view and returns what they showed, for the legend and the counts
    /// on bundles of parallel links.
    pub fn links(&self) -> LinksDrawn {
        let design = self.design;
        let heat = self.overlay.heat;
        let mode = self.color_mode();
        let painter = LinkPainter {
            mode,
            background: self.background(),
            heat,
        };
        let mut tally = LegendTally::default();
        let highlight = self.overlay.highlight_links;
        let selected = &self.state.selection.links;
        let folded = self.layout.is_collapsed();
        let cell_px = if self.zoom < COLLAPSE_ZOOM {
            FAR_CELL_PX
        } else {
            CELL_PX
        };
        let mut bundles = Bundles::new(self.layout, design.devices.len(), self.zoom, cell_px);
        // Under the heatmap, each bundle's first hot link too: a bundle takes its first
        // link's colour, and a hot link must not hide behind a cooler one.
        let mut hot_bundles =
            heat.map(|_| Bundles::new(self.layout, design.devices.len(), self.zoom, cell_px));
        // Counted only where labels show: further out, a count could not be read. Links into
        // a folded group count as its block's.
        let count_parallel = self.visible.len() <= LABELS_MAX;
        let mut parallel = ParallelLinks::default();
        let width_scale = link_width_scale(self.zoom);
        // Feathered edges only when few links were drawn last frame: with many, plain quads
        // halve the vertices and nobody can tell.
        let feather = self.state.interaction.links_drawn.get() <= FEATHERED_LINKS_MAX;
        let mut under = Lines::new(self.zoom, 0, true);
        let mut lines = Lines::new(self.zoom, design.links.len().min(1 << 16), feather);
        let mut dashes = Vec::new();
        let mut drawn = 0;
        let mut lanes = Vec::new();
        let (mut passing_drawn, mut passing_hidden) = (0, 0);
        let mut leaving = Vec::new();
        // Most links share a few rates: remember the last width instead of a log per link.
        let mut last_width = (f64::NAN, 0.0);
        for link in &design.links {
            let Some((ia, ib)) = self.layout.link_ends(&design.devices, link) else {
                continue;
            };
            let (a, b) = (self.layout.anchor(ia), self.layout.anchor(ib));
            if !Rect::from_two_pos(a, b).intersects(self.view) {
                continue;
            }
            let is_selected = !selected.is_empty() && selected.contains(&link.id);
            // A tray's NVLink into its own domain is what the container already shows:
            // drawn only when something is to be seen on it.
            if link.state == LinkState::Up
                && heat.is_none()
                && !is_selected
                && (self.layout.is_domain(ia) || self.layout.is_domain(ib))
                && joins_own_domain(&design.devices, ia, ib)
            {
                continue;
            }
            // Links inside a folded group vanish with it.
            if folded
                && let Some(block) = self.layout.block_of(ia)
                && self.layout.block_of(ib) == Some(block)
            {
                continue;
            }
            if count_parallel {
                parallel.add(
                    self.layout.owner(ia),
                    self.layout.owner(ib),
                    link.nominal_capacity().gbit_s(),
                );
            }
            let is_highlighted = !highlight.is_empty() && highlight.contains(&link.id);
            let is_hot = heat.is_some_and(|h| h.get(&link.id).is_some_and(|&u| u >= HOT));
            // A healthy link is drawn only as the first of its bundle (the links that would
            // cover one another on screen) or as its first hot one; failed and degraded
            // links always show, and leave the bundle to its healthy links. A selected or
            // highlighted link always shows too, in its bundle's lane.
            // Links that look different (another technology or rate; under rail colours
            // another rail) bundle apart, each in its own lane beside the first.
            let capacity = link.nominal_capacity().gbit_s();
            let look = lane_look(link, &design.devices[ia], &design.devices[ib], mode);
            let mut lane = 0;
            if link.state == LinkState::Up {
                // Both marked whatever the other says: a bundle shows at most one cool and
                // one hot line.
                let first = bundles.first(ia, ib, look);
                let first_hot = if is_hot {
                    hot_bundles.as_mut().and_then(|b| b.first(ia, ib, look))
                } else {
                    None
                };
                match first.or(first_hot) {
                    Some(l) => lane = l,
                    None if is_selected || is_highlighted => lane = bundles.lane(ia, ib, look),
                    None => continue,
                }
            }
            if capacity != last_width.0 {
                last_width = (capacity, link_width_px_scaled(link, width_scale));
            }
            let width_px = last_width.1;
            // Lanes alternate either side of the line between the anchors, a width apart.
            let (a, b) = if lane == 0 {
                (a, b)
            } else {
                let side = if lane % 2 == 1 { 1.0 } else { -1.0 };
                let step = side * lane.div_ceil(2) as f32 * self.px(width_px + LANE_GAP_PX);
                let normal = (b - a).normalized().rot90();
                let ends = (a + normal * step, b + normal * step);
                lanes.push(DrawnLane {
                    link: link.id,
                    a: ends.0,
                    b: ends.1,
                });
                ends
            };
            drawn += 1;
            if is_highlighted {
                under.add(a, b, width_px + 8.0, HIGHLIGHT);
            }
            if is_selected {
                under.add(a, b, width_px + 4.0, SELECTED);
            }
            let (dev_a, dev_b) = (&design.devices[ia], &design.devices[ib]);
            tally.add(mode, link, dev_a, dev_b);
            let style = painter.style(link, dev_a, dev_b);
            let plain = link.state == LinkState::Up && !is_selected && !is_highlighted && !is_hot;
            let (a_in, b_in) = (self.view.contains(a), self.view.contains(b));
            if plain && a_in != b_in {
                let (inside, outside) = if a_in { (ia, b) } else { (ib, a) };
                // In a lane, the box moves with the line.
                let anchor = if a_in { a } else { b };
                let inside = self.layout.drawn_rect(inside);
                leaving.push(Leaving {
                    inside: Rect::from_center_size(anchor, inside.size()),
                    outside,
                    width_px,
                    color: color32(style.color),
                });
                continue;
            }
            let passing = plain && !a_in && !b_in;
            if passing {
                if passing_drawn >= PASSING_MAX {
                    passing_hidden += 1;
                    continue;
                }
                passing_drawn += 1;
            }
            let color = if passing {
                color32(style.color).gamma_multiply(PASSING_ALPHA)
            } else {
                color32(style.color)
            };
            match style.pattern.dash_gap() {
                None => lines.add(a, b, width_px, color),
                Some((dash, gap)) => {
                    if let Some((ca, cb)) = clip_segment(a, b, self.view.expand(self.px(20.0))) {
                        dashes.extend(Shape::dashed_line(
                            &[ca, cb],
                            Stroke::new(self.px(width_px.max(1.5)), color),
                            self.px(dash),
                            self.px(gap),
                        ));
                    }
                }
            }
        }
        // Many links leading out of the view (a spine row's uplinks to a core row far
        // away) would lay a solid sheet over everything between: each is then a stub
        // pointing where it goes, and the legend says so.
        let stub_length = (leaving.len() > LEAVING_FULL_MAX).then(|| self.px(STUB_PX));
        for l in &leaving {
            let outside = stub_length.map_or(l.outside, |length| {
                super::geometry::stub_end(l.inside, l.outside, length)
            });
            lines.add(l.inside.center(), outside, l.width_px, l.color);
        }
        self.state.interaction.links_drawn.set(drawn);
        self.scene.add(under.into_shape());
        self.scene.add(lines.into_shape());
        self.scene.extend(dashes);
        LinksDrawn {
            tally,
            parallel,
            passing_hidden,
            lanes,
            stubbed: if stub_length.is_some() {
                leaving.len()
            } else {
                0
            },
            stub_length,
        }
    }

    /// "8 × 400G" at the middle of each bundle of parallel links long enough on screen to
    /// carry it, clear of the captions already `placed`; on a small design (few linked pairs
    /// in view) single links' rates too.
    pub fn bundle_counts(&self, parallel: &ParallelLinks, mut placed: Vec<Rect>) {
        // A folded block hides the links under it and carries its own caption: a count on
        // it would name a line nobody can see.
        placed.extend(
            self.layout
                .blocks
                .iter()
                .filter(|b| b.rect.intersects(self.view))
                .map(|b| self.to_global * b.rect),
        );
        // Nor on a device: a count over a node's box hides its name (links fanning down
        // into a column of nodes pass over the nodes above the one they reach).
        placed.extend(
            self.layout
                .rects
                .iter()
                .filter(|r| r.intersects(self.view))
                .map(|&r| self.to_global * r),
        );
        let mut shapes = Vec::new();
        let mut bundles: Vec<_> = parallel.bundles(min_labelled(parallel.pairs())).collect();
        sort_for_labels(&mut bundles);
        let spots = label_spots(bundles.len());
        // On a small drawing a count keeps off the other lines, whose crossing would make it
        // read as theirs (as the exported diagram does).
        let lines: Vec<(Pos2, Pos2, _)> = if spots.len() > 1 {
            bundles
                .iter()
                .map(|&(i, j, _, _)| {
                    (
                        self.to_global * self.layout.owner_anchor(i),
                        self.to_global * self.layout.owner_anchor(j),
                        (i, j),
                    )
                })
                .collect()
        } else {
            Vec::new()
        };
        for (i, j, _, tally) in bundles {
            let (a, b) = (
                self.to_global * self.layout.owner_anchor(i),
                self.to_global * self.layout.owner_anchor(j),
            );
            let g =
                self.labels
                    .layout_no_wrap(link_label(&tally), FontId::proportional(TAG_PX), LABEL);
            if a.distance(b) < 3.0 * (g.size().x + 8.0) {
                continue;
            }
            // Labels overlapping would run together into an unreadable row.
            let clip = self.labels.clip_rect();
            let Some((mid, rect)) = spots.iter().find_map(|&t| {
                let at = a + (b - a) * t;
                let rect = Rect::from_center_size(at, g.size()).expand2(vec2(4.0, 1.0));
                let crossed = lines.iter().any(|&(p, q, pair)| {
                    pair != (i, j)
                        && segment_meets_box(
                            (p.x, p.y),
                            (q.x, q.y),
                            (rect.min.x, rect.min.y, rect.max.x, rect.max.y),
                        )
                });
                (clip.contains(at) && !crossed && !placed.iter().any(|r: &Rect| r.intersects(rect)))
                    .then_some((at, rect))
            }) else {
                continue;
            };
            placed.push(rect);
            let at = mid - g.size() / 2.0;
            push_tag(&mut shapes, rect, at, g);
        }
        self.labels.extend(shapes);
    }

    /// The legend of the links `drawn` showed, in the canvas's bottom-left corner, in screen
    /// space, with how many leaving the view were drawn short or left out. Returns where it
    /// was drawn (screen points).
    pub fn legend(&self, drawn: &LinksDrawn) -> Option<Rect> {
        let mut legend = drawn
            .tally
            .legend(self.color_mode(), self.background())
            .drawn_for(self.state.link_colors, self.color_mode());
        if legend.entries.is_empty() {
            return None;
        }
        if self.state.legend_folded {
            legend.heading.push_str(" · click to show");
            legend.entries.clear();
            legend.heat_scale = false;
        } else {
            self.out_of_view_entries(&mut legend, drawn.passing_hidden, drawn.stubbed);
        }
        let (shapes, rect) =
            legend_shapes(self.labels, &legend, self.to_global * self.view, self.dark);
        self.labels.extend(shapes);
        Some(rect)
    }

    /// The legend's lines for links drawn short or faint because they leave the view.
    fn out_of_view_entries(&self, legend: &mut Legend, passing_hidden: usize, stubbed: usize) {
        let Some(first) = legend.entries.first().map(|e| e.color) else {
            return;
        };
        if stubbed > 0 {
            legend.entries.push(LegendEntry {
                label: format!(
                    "short: {} leading out of view",
                    crate::model::units::count_of(stubbed, "link", "links")
                ),
                color: first,
                pattern: Pattern::Solid,
            });
        }
        if passing_hidden > 0 {
            let faint = first;
            legend.entries.push(LegendEntry {
                label: format!(
                    "faint: passing through; {} more not drawn",
                    crate::model::units::group_thousands(passing_hidden as i64)
                ),
                color: faded(faint, self.dark),
                pattern: Pattern::Solid,
            });
        }
    }

    /// Nodes, switches and hosts, then collapsed blocks and port handles. When few are in
    /// view they are proper rounded, outlined shapes; when many, flat quads in one mesh.
    pub fn devices(&self) {
        if self.zoom >= DETAIL_ZOOM && self.visible.len() <= DETAILED_MAX {
            self.detailed_devices(self.visible);
        } else {
            self.flat_devices(self.visible);
        }
        self.port_handles();
    }

    fn detailed_devices(&self, visible: &[usize]) {
        let mut shapes = Vec::with_capacity(visible.len());
        for &i in visible {
            let d = &self.design.devices[i];
            let r = self.layout.rects[i];
            let fill = device_fill(d);
            let radius = match d.kind {
                DeviceKind::Switch(_) => r.height() / 2.0,
                DeviceKind::Host(_) => 2.0,
                _ => 8.0,
            };
            let stroke = if self.selected_device(d) {
                Stroke::new(self.px(2.5), SELECTED)
            } else if self.hovered == Some(i) {
                Stroke::new(self.px(2.0), Color32::WHITE)
            } else {
                Stroke::new(self.px(1.0), fill.gamma_multiply(0.6))
            };
            shapes.push(Shape::Rect(egui::epaint::RectShape::new(
                r,
                radius,
                fill,
                stroke,
                StrokeKind::Inside,
            )));
        }
        for block in &self.layout.blocks {
            if block.rect.intersects(self.view) {
                shapes.push(Shape::rect_filled(block.rect, 0.0, BLOCK_FILL));
                shapes.push(Shape::rect_stroke(
                    block.rect,
                    0.0,
                    Stroke::new(self.px(1.0), Color32::from_white_alpha(60)),
                    StrokeKind::Inside,
                ));
            }
        }
        self.scene.extend(shapes);
    }

    fn flat_devices(&self, visible: &[usize]) {
        let mut mesh = Mesh::default();
        mesh.reserve_vertices(visible.len() * 4);
        mesh.reserve_triangles(visible.len() * 2);
        // A border only where it is at least a point wide and the device well over it.
        let outline = self.zoom >= DETAIL_ZOOM;
        let border = self.px(1.0);
        for &i in visible {
            let d = &self.design.devices[i];
            let r = self.layout.rects[i];
            let fill = device_fill(d);
            let (fill, edge) = if self.selected_device(d) {
                (fill, Some((SELECTED, 2.5)))
            } else if self.hovered == Some(i) {
                (fill, Some((Color32::WHITE, 2.0)))
            } else if outline {
                (fill, Some((fill.gamma_multiply(0.6), 1.0)))
            } else {
                (fill, None)
            };
            mesh.add_colored_rect(r, fill);
            match edge {
                Some((color, width)) if outline || width > 1.0 => {
                    frame_rect(&mut mesh, r, (border * width).min(r.height() / 3.0), color);
                }
                _ => {}
            }
        }
        for block in &self.layout.blocks {
            if block.rect.intersects(self.view) {
                mesh.add_colored_rect(block.rect, BLOCK_FILL);
                frame_rect(&mut mesh, block.rect, border, Color32::from_white_alpha(60));
            }
        }
        self.scene.add(Shape::mesh(mesh));
    }

    fn port_handles(&self) {
        let r = self.px(HANDLE_RADIUS_PX);
        let stroke = Stroke::new(self.px(1.5), Color32::WHITE);
        let fill = Color32::from_rgb(30, 30, 30);
        let mut shapes = Vec::new();
        let mut add = |i: usize| {
            let rect = self.layout.rects[i];
            if self.layout.block_of(i).is_none() && rect.intersects(self.view) {
                let c = handle_center(rect);
                shapes.push(Shape::circle_filled(c, r, fill));
                shapes.push(Shape::circle_stroke(c, r, stroke));
            }
        };
        match self.handles {
            Handles::None => {}
            Handles::Only(i) => add(i),
            Handles::All => (0..self.design.devices.len()).for_each(add),
        }
        self.scene.extend(shapes);
    }

    /// Text in screen space: device labels when they are big enough to read, domain
    /// headers, block counts, and a tag for the hovered device when labels are off.
    pub fn labels(&self) {
        // Device labels never shrink below a readable size: the name gives way instead.
        let device_px = (LABEL_SIZE * self.zoom)
            .clamp(MIN_LABEL_PX, MAX_TEXT_PX)
            .round();
        let domain_px = (DOMAIN_LABEL_SIZE * self.zoom).round().min(MAX_TEXT_PX);
        let mut shapes = Vec::new();
        if domain_px >= MIN_TEXT_PX {
            for (i, d) in self.design.devices.iter().enumerate() {
                if !is_domain(d) || self.layout.block_of(i).is_some() {
                    continue;
                }
                let r = self.layout.rects[i];
                if !r.intersects(self.view) {
                    continue;
                }
                let header = self.to_global
                    * Rect::from_min_size(r.min, vec2(r.width(), super::geometry::DOMAIN_HEADER));
                let text = domain_title(self.design, d);
                let g = self.galley(text, domain_px, header.width() - 2.0 * domain_px);
                shapes.push(Shape::galley(
                    pos2(
                        header.min.x + domain_px * 0.6,
                        header.center().y - g.size().y / 2.0,
                    ),
                    g,
                    LABEL,
                ));
            }
        }
        // The hovered device's tag is left out when its box already shows all of it.
        let mut hovered_in_full = false;
        if self.visible.len() <= LABELS_MAX {
            let font = FontId::proportional(device_px);
            let line = device_px * 1.25;
            for &i in self.visible {
                let d = &self.design.devices[i];
                let screen = self.to_global * self.layout.rects[i];
                let max_width = screen.width() - device_px * 0.6;
                if screen.height() < line || max_width <= 0.0 {
                    continue;
                }
                let forms = name_forms(&d.name);
                let fits = |f: &str| {
                    self.labels
                        .layout_no_wrap(f.to_string(), font.clone(), LABEL)
                        .size()
                        .x
                        <= max_width
                };
                // A long name on two lines where the box is tall enough, before it is
                // shortened.
                let wrapped = two_lines(&d.name).filter(|&(a, b)| {
                    screen.height() >= 2.2 * line && !fits(&forms[0]) && fits(a) && fits(b)
                });
                let name_lines: Vec<String> = match wrapped {
                    Some((a, b)) => vec![a.to_string(), b.to_string()],
                    None => match fitting_form(&forms, fits) {
                        Some(form) => vec![form.to_string()],
                        None => continue,
                    },
                };
                let in_full = name_lines.concat() == forms[0];
                let room_for_model = (name_lines.len() as f32 + 1.2) * line;
                // The model line ("8× H100") only when it fits whole too.
                let model = Some(self.labels.layout_no_wrap(
                    device_title(self.catalog, d),
                    font.clone(),
                    LABEL,
                ))
                .filter(|g| g.size().x <= max_width && screen.height() >= room_for_model);
                if self.hovered == Some(i) && in_full && model.is_some() {
                    hovered_in_full = true;
                }
                let lines: Vec<_> = model
                    .into_iter()
                    .chain(
                        name_lines
                            .into_iter()
                            .map(|l| self.labels.layout_no_wrap(l, font.clone(), LABEL)),
                    )
                    .collect();
                let gap = device_px * 0.15;
                let total = lines.iter().map(|g| g.size().y).sum::<f32>()
                    + gap * (lines.len() as f32 - 1.0);
                let mut top = screen.center().y - total / 2.0;
                for g in lines {
                    let height = g.size().y;
                    shapes.push(Shape::galley(
                        pos2(screen.center().x - g.size().x / 2.0, top),
                        g,
                        LABEL,
                    ));
                    top += height + gap;
                }
            }
        }
        for block in &self.layout.blocks {
            let screen = self.to_global * block.rect;
            if screen.width() < 50.0 || !block.rect.intersects(self.view) {
                continue;
            }
            let text = block.caption(self.design);
            let g = self.galley(text, TAG_PX, screen.width() - 8.0);
            shapes.push(Shape::galley(screen.center() - g.size() / 2.0, g, LABEL));
        }
        if !hovered_in_full
            && let Some(i) = self.hovered
            && let Some(d) = self.design.devices.get(i)
        {
            let text = format!("{}  ·  {}", d.name, device_title(self.catalog, d));
            let anchor =
                self.to_global * pos2(self.layout.rects[i].center().x, self.layout.rects[i].min.y);
            let g = self.galley(text, TAG_PX, 400.0);
            let rect = Align2::CENTER_BOTTOM
                .anchor_size(anchor - vec2(0.0, 4.0), g.size())
                .expand(4.0);
            shapes.push(Shape::rect_filled(
                rect,
                3.0,
                Color32::from_black_alpha(200),
            ));
            shapes.push(Shape::galley(rect.min + vec2(4.0, 4.0), g, LABEL));
        }
        self.labels.extend(shapes);
    }

    fn galley(&self, text: String, size_px: f32, max_width: f32) -> std::sync::Arc<egui::Galley> {
        self.galley_in(text, size_px, max_width, LABEL)
    }

    fn galley_in(
        &self,
        text: String,
        size_px: f32,
        max_width: f32,
        color: Color32,
    ) -> std::sync::Arc<egui::Galley> {
        let mut job = LayoutJob::single_section(
            text,
            TextFormat {
                font_id: FontId::proportional(size_px),
                color,
                ..Default::default()
            },
        );
        job.wrap = TextWrapping::truncate_at_width(max_width.max(size_px));
        self.labels.layout_job(job)
    }

    /// A translucent outline of what a palette drop would add, at `at`.
    pub fn drop_ghost(&self, at: Pos2, part: &PartId) {
        let size = match self.catalog.get(part).map(|p| &p.spec) {
            Some(crate::model::PartSpec::Switch(_)) => super::geometry::SWITCH_SIZE,
            Some(crate::model::PartSpec::Domain(_)) => super::geometry::EMPTY_DOMAIN_SIZE,
            _ => super::geometry::NODE_SIZE,
        };
        let r = Rect::from_center_size(at, size);
        self.scene.add(Shape::Rect(egui::epaint::RectShape::new(
            r,
            8.0,
            Color32::from_white_alpha(30),
            Stroke::new(self.px(1.5), SELECTED),
            StrokeKind::Inside,
        )));
    }

    /// The rubber band of a link being drawn.
    pub fn link_band(&self, from: usize, to: Pos2) {
        let a = handle_center(self.layout.rects[from]);
        self.scene.extend(Shape::dashed_line(
            &[a, to],
            Stroke::new(self.px(2.0), SELECTED),
            self.px(8.0),
            self.px(5.0),
        ));
    }

    pub fn selection_box(&self, rect: Rect) {
        self.scene.add(Shape::Rect(egui::epaint::RectShape::new(
            rect,
            0.0,
            Color32::from_rgba_unmultiplied(255, 202, 40, 24),
            Stroke::new(self.px(1.0), SELECTED),
            StrokeKind::Inside,
        )));
    }
}

/// Text size of the canvas legend, in screen points.
const LEGEND_PX: f32 = 13.0;

/// A legend box in the bottom-left corner of `screen`: heading, the heatmap's scale if
/// any, and one line sample per entry.
/// A colour as a faint line shows it over the legend's background.
fn faded(Rgb(r, g, b): Rgb, dark: bool) -> Rgb {
    let to = if dark { 20.0 } else { 245.0 };
    let mix = |c: u8| (to + (f32::from(c) - to) * PASSING_ALPHA * 2.5).round() as u8;
    Rgb(mix(r), mix(g), mix(b))
}

/// The body text's size in `style`.
fn body_size(style: &egui::Style) -> f32 {
    style
        .text_styles
        .get(&egui::TextStyle::Body)
        .map_or(1.0, |f| f.size)
}

/// egui's own body size, against which the interface's text is scaled: read once, not built
/// from a fresh `Style` every frame.
static DEFAULT_BODY_SIZE: std::sync::LazyLock<f32> =
    std::sync::LazyLock::new(|| body_size(&egui::Style::default()));

fn legend_shapes(
    painter: &Painter,
    legend: &Legend,
    screen: Rect,
    dark: bool,
) -> (Vec<Shape>, Rect) {
    let text_color = if dark { LABEL } else { Color32::from_gray(30) };
    // The legend sits on the screen, not in the zoomed scene: it grows with the interface's
    // text, as presentation mode enlarges it.
    let scale = body_size(&painter.ctx().global_style()) / *DEFAULT_BODY_SIZE;
    let legend_px = LEGEND_PX * scale;
    let row = legend_px * 1.5;
    let sample = 26.0 * scale;
    let pad = 8.0 * scale;
    let font = FontId::proportional(legend_px);
    let heading = painter.layout_no_wrap(legend.heading.clone(), font.clone(), text_color);
    let labels: Vec<_> = legend
        .entries
        .iter()
        .map(|e| painter.layout_no_wrap(e.label.clone(), font.clone(), text_color))
        .collect();
    let scale_rows = if legend.heat_scale { 2.0 } else { 0.0 };
    let width = labels
        .iter()
        .map(|g| sample + 8.0 + g.size().x)
        .fold(heading.size().x, f32::max)
        .max(if legend.heat_scale {
            160.0 * scale
        } else {
            0.0
        });
    let height = row * (1.0 + scale_rows + labels.len() as f32);
    let rect = Rect::from_min_size(
        pos2(
            screen.min.x + 12.0,
            screen.max.y - 12.0 - height - 2.0 * pad,
        ),
        vec2(width + 2.0 * pad, height + 2.0 * pad),
    );
    let fill = if dark {
        Color32::from_black_alpha(190)
    } else {
        Color32::from_white_alpha(225)
    };
    let mut shapes = vec![Shape::Rect(egui::epaint::RectShape::new(
        rect,
        4.0,
        fill,
        Stroke::new(1.0, Color32::from_gray(128)),
        StrokeKind::Inside,
    ))];
    let x = rect.min.x + pad;
    let mut y = rect.min.y + pad;
    shapes.push(Shape::galley(pos2(x, y), heading, text_color));
    y += row;
    if legend.heat_scale {
        let bar = Rect::from_min_size(pos2(x, y + 2.0), vec2(150.0, 10.0) * scale);
        let mut mesh = Mesh::default();
        let stops = heat_stops();
        for pair in stops.windows(2) {
            let (u0, c0) = pair[0];
            let (u1, c1) = pair[1];
            let x0 = bar.min.x + bar.width() * u0 as f32;
            let x1 = bar.min.x + bar.width() * u1 as f32;
            let base = mesh.vertices.len() as u32;
            for (px, py, c) in [
                (x0, bar.min.y, c0),
                (x1, bar.min.y, c1),
                (x0, bar.max.y, c0),
                (x1, bar.max.y, c1),
            ] {
                mesh.vertices.push(Vertex {
                    pos: pos2(px, py),
                    uv: WHITE_UV,
                    color: color32(c),
                });
            }
            mesh.indices.extend_from_slice(&[
                base,
                base + 1,
                base + 2,
                base + 1,
                base + 3,
                base + 2,
            ]);
        }
        shapes.push(Shape::mesh(mesh));
        let small = FontId::proportional(legend_px * 0.85);
        for (u, text, align) in [
            (0.0, "0 %", Align2::LEFT_TOP),
            (0.5, "50 %", Align2::CENTER_TOP),
            (1.0, "100 %", Align2::RIGHT_TOP),
        ] {
            let g = painter.layout_no_wrap(text.to_string(), small.clone(), text_color);
            let at = pos2(bar.min.x + bar.width() * u, bar.max.y + 2.0);
            let r = align.anchor_size(at, g.size());
            shapes.push(Shape::galley(r.min, g, text_color));
        }
        y += 2.0 * row;
    }
    for (entry, label) in legend.entries.iter().zip(labels) {
        let mid = y + row / 2.0 - 1.0;
        let stroke = Stroke::new(3.0, color32(entry.color));
        let (a, b) = (pos2(x, mid), pos2(x + sample, mid));
        match entry.pattern {
            Pattern::Solid => shapes.push(Shape::line_segment([a, b], stroke)),
            pattern => {
                let (dash, gap) = pattern.dash_gap().unwrap_or((4.0, 4.0));
                shapes.extend(Shape::dashed_line(&[a, b], stroke, dash, gap));
            }
        }
        let top = mid - label.size().y / 2.0;
        shapes.push(Shape::galley(
            pos2(x + sample + 8.0, top),
            label,
            text_color,
        ));
        y += row;
    }
    (shapes, rect)
}

/// A caption on a dark tag (`rect`), its text at `at`: bundle labels and tier captions.
fn push_tag(shapes: &mut Vec<Shape>, rect: Rect, at: Pos2, text: Arc<Galley>) {
    shapes.push(Shape::rect_filled(
        rect,
        3.0,
        Color32::from_black_alpha(200),
    ));
    shapes.push(Shape::galley(at, text, LABEL));
}

/// Indices of the nodes, switches and hosts that are in view and drawn on their own.
pub(super) fn visible_devices(design: &Design, layout: &Layout, view: Rect) -> Vec<usize> {
    design
        .devices
        .iter()
        .enumerate()
        .filter(|&(i, d)| {
            !is_domain(d) && layout.block_of(i).is_none() && layout.rects[i].intersects(view)
        })
        .map(|(i, _)| i)
        .collect()
}

/// Whether devices i and j are a compute tray and the NVSwitch domain it belongs to.
fn joins_own_domain(devices: &[Device], i: usize, j: usize) -> bool {
    let member_of = |node: &Device, domain: &Device| {
        is_domain(domain)
            && node
                .kind
                .as_node()
                .is_some_and(|n| n.domain == Some(domain.id))
    };
    member_of(&devices[i], &devices[j]) || member_of(&devices[j], &devices[i])
}

/// Up to this many links drawn, their edges are feathered (anti-aliased).
const FEATHERED_LINKS_MAX: usize = 4000;
/// Opacity of a healthy link that only passes through the view (neither end in it): the
/// devices in view and their own links stay readable under the core-to-spine sheaves of a
/// large fabric, which otherwise cover the view in one colour.
const PASSING_ALPHA: f32 = 0.12;
/// Passing links drawn at most; past this many their faint lines only add up to a haze, so
/// the rest are left out and the legend says how many.
const PASSING_MAX: usize = 1500;
/// Links leading out of the view drawn whole at most; past this many each is a stub.
const LEAVING_FULL_MAX: usize = 2000;
/// A stub's length on screen, in points.
const STUB_PX: f32 = 28.0;
/// Screen points between the lanes of links that look different between the same two ends.
const LANE_GAP_PX: f32 = 3.0;

/// Above this many devices in view, labels are left out: they could not be read anyway.
const LABELS_MAX: usize = 600;

/// Above this many devices in view, they are drawn as flat quads in one mesh.
const DETAILED_MAX: usize = 300;

/// An outline of `width` just inside `r`, as four quads.
fn frame_rect(mesh: &mut Mesh, r: Rect, width: f32, color: Color32) {
    let w = width;
    mesh.add_colored_rect(Rect::from_min_max(r.min, pos2(r.max.x, r.min.y + w)), color);
    mesh.add_colored_rect(Rect::from_min_max(pos2(r.min.x, r.max.y - w), r.max), color);
    mesh.add_colored_rect(
        Rect::from_min_max(pos2(r.min.x, r.min.y + w), pos2(r.min.x + w, r.max.y - w)),
        color,
    );
    mesh.add_colored_rect(
        Rect::from_min_max(pos2(r.max.x - w, r.min.y + w), pos2(r.max.x, r.max.y - w)),
        color,
    );
}

/// Many straight lines in one mesh, each a quad with a one-point feathered edge on either
/// side (what epaint's own anti-aliasing does), in canvas units for a given zoom.
struct Lines {
    mesh: Mesh,
    /// Canvas units per screen point.
    unit: f32,
    feather: bool,
}

impl Lines {
    fn new(zoom: f32, capacity: usize, feather: bool) -> Self {
        let mut mesh = Mesh::default();
        let (vertices, triangles) = if feather { (8, 6) } else { (4, 2) };
        mesh.reserve_vertices(capacity * vertices);
        mesh.reserve_triangles(capacity * triangles);
        Self {
            mesh,
            unit: 1.0 / zoom,
            feather,
        }
    }

    /// A line `width_px` screen points wide; thinner than a point, it fades instead.
    fn add(&mut self, a: Pos2, b: Pos2, width_px: f32, color: Color32) {
        let d = b - a;
        let len = d.length();
        if len <= f32::EPSILON {
            return;
        }
        let (color, width_px) = if width_px < 1.0 {
            (color.gamma_multiply(width_px), 1.0)
        } else {
            (color, width_px)
        };
        let normal = egui::vec2(-d.y, d.x) / len;
        let base = self.mesh.vertices.len() as u32;
        let vertex = |pos: Pos2, color: Color32| Vertex {
            pos,
            uv: WHITE_UV,
            color,
        };
        if !self.feather {
            let half = normal * (width_px * 0.5 * self.unit);
            self.mesh.vertices.extend_from_slice(&[
                vertex(a + half, color),
                vertex(a - half, color),
                vertex(b + half, color),
                vertex(b - half, color),
            ]);
            self.mesh.indices.extend_from_slice(&[
                base,
                base + 1,
                base + 2,
                base + 1,
                base + 3,
                base + 2,
            ]);
            return;
        }
        let inner = normal * ((width_px - 1.0) * 0.5 * self.unit);
        let outer = normal * ((width_px + 1.0) * 0.5 * self.unit);
        let clear = Color32::TRANSPARENT;
        self.mesh.vertices.extend_from_slice(&[
            vertex(a + outer, clear),
            vertex(a + inner, color),
            vertex(a - inner, color),
            vertex(a - outer, clear),
            vertex(b + outer, clear),
            vertex(b + inner, color),
            vertex(b - inner, color),
            vertex(b - outer, clear),
        ]);
        for k in 0..3 {
            let (i, j) = (base + k, base + k + 1);
            self.mesh
                .indices
                .extend_from_slice(&[i, j, i + 4, j, j + 4, i + 4]);
        }
    }

    fn into_shape(self) -> Shape {
        Shape::mesh(self.mesh)
    }
}

/// "nvl-3 · 72 GPUs": the GPUs of the members actually drawn.
fn domain_title(design: &Design, d: &Device) -> String {
    let gpus: u64 = design
        .devices
        .iter()
        .filter_map(|m| m.kind.as_node())
        .filter(|n| n.domain == Some(d.id))
        .map(|n| u64::from(n.gpu_count))
        .sum();
    format!("{} · {gpus} GPUs", d.name)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::Port;

    #[test]
    fn heat_runs_green_yellow_red() {
        assert_eq!(heat_color(0.0), Color32::from_rgb(67, 160, 71));
        assert_eq!(heat_color(0.5), Color32::from_rgb(253, 216, 53));
        assert_eq!(heat_color(1.0), Color32::from_rgb(229, 57, 53));
        assert_eq!(heat_color(7.0), heat_color(1.0));
    }

    #[test]
    fn link_width_grows_with_log_bandwidth() {
        use crate::model::{Bandwidth, DeviceId, Endpoint};
        let link = |gbit: f64| {
            Link::new(
                Endpoint::new(DeviceId(0), Port::Nic(0)),
                Endpoint::new(DeviceId(1), Port::Switch(0)),
                LinkTech::Ethernet,
                Bandwidth::from_gbit_s(gbit),
            )
        };
        // 10G is one point; each doubling adds 1.1 points; capped at 9.
        assert_eq!(link_width_px(&link(10.0), 1.0), 1.0);
        assert!((link_width_px(&link(40.0), 1.0) - 3.2).abs() < 1e-5);
        assert_eq!(link_width_px(&link(100_000.0), 1.0), 9.0);
        // At zoom 1/16, an eighth as wide (16^-0.75), but never below 0.75.
        assert!((link_width_px(&link(100_000.0), 1.0 / 16.0) - 9.0 / 8.0).abs() < 1e-5);
        assert_eq!(link_width_px(&link(10.0), 0.01), 0.75);
    }
}
