//! The editing canvas: draws a design and turns pointer gestures into `Command`s.
//!
//! Built on `egui::Scene` (pan and zoom) and a `Painter`; devices are not widgets but shapes,
//! hit-tested by hand, so that 10,000 nodes cost one pass per frame. The canvas never edits
//! the design: it returns `CanvasEvent`s and the caller applies the commands (a drag is one
//! `MoveDevices` on release). Nothing here asks for a repaint unless an edit was just emitted.
//!
//! Gestures: primary drag on a device moves the selection, on a port handle draws a link, on
//! empty canvas pans (as do middle and secondary drags, and any primary drag with Space held);
//! Shift+drag on empty canvas draws a box whose devices join the selection. The mouse wheel
//! zooms (a touchpad scrolls), pinch and Ctrl+wheel zoom too. Click selects, Shift+click
//! toggles, a click on empty canvas clears the selection, Escape cancels a gesture.
//! Panning only moves the view: it is no edit, so it leaves the history and the file alone.
//! Far out, groups fold into one block each; a double-click on a block zooms in until its
//! devices show. Right-click opens what-ifs and bulk wiring for the selection; on a device
//! outside the selection it selects that device and offers to connect the devices selected
//! before to it.
//!
//! A device's `pos` is its centre, in canvas units (one unit is one screen point at zoom 1).

mod arrange;
mod bundle;
mod fold_menu;
mod geometry;
mod minimap;
mod paint;
mod wiring_menu;

pub use arrange::arrange_by_tier;
pub use paint::{heat_color, tech_color};

use super::link_info::{self, LinkLoads};
use crate::io::link_colors::ColorMode;
use crate::model::command::Command;
use crate::model::factory::{default_link, devices_from_part, match_design_nics, name_for_new};
use crate::model::{Catalog, Design, DeviceId, DeviceKind, GroupId, LinkId, PartId, Pos};
use egui::containers::DragPanButtons;
use egui::emath::TSTransform;
use egui::{Event, Key, LayerId, MouseWheelUnit, PointerButton, Pos2, Rect, Scene, Ui, Vec2};
use geometry::{DrawnLane, Fold, Handles, Hit, Layout, Stubs, index_of, to_pos2};
use paint::{ALL_HANDLES_ZOOM, COLLAPSE_ZOOM, MIN_HANDLE_ZOOM, link_width_px};
use std::collections::{BTreeSet, HashMap, HashSet};

/// Grid pitch and snap step, in canvas units.
pub const GRID: f32 = 20.0;
/// Zoom limits (screen points per canvas unit). The lower one lets zoom to fit frame a
/// generated row of 16,384 nodes (two million units) on a laptop screen.
pub const MIN_ZOOM: f32 = 0.0005;
pub const MAX_ZOOM: f32 = 4.0;
/// Zoom to fit magnifies no further than this, so a small homelab fills the canvas with
/// labels at a size people read from across a room, but one device does not fill the screen.
const MAX_FIT_ZOOM: f32 = 1.5;
/// What zoom to fit frames when there is nothing to frame.
const EMPTY_FIT_SIZE: Vec2 = Vec2::new(1200.0, 700.0);
const FIT_MARGIN: f32 = 60.0;

#[derive(Debug, Default, Clone, PartialEq)]
pub struct Selection {
    pub devices: BTreeSet<DeviceId>,
    pub links: BTreeSet<LinkId>,
}

impl Selection {
    pub fn is_empty(&self) -> bool {
        self.devices.is_empty() && self.links.is_empty()
    }

    pub fn clear(&mut self) {
        self.devices.clear();
        self.links.clear();
    }

    /// Drops ids the design no longer has (after a delete or an undo). Runs every frame, so
    /// it walks the sorted ids side by side instead of searching for each.
    pub fn retain_existing(&mut self, design: &Design) {
        if !all_present(&self.devices, design.devices.iter().map(|d| d.id)) {
            self.devices.retain(|id| design.device(*id).is_some());
        }
        if !all_present(&self.links, design.links.iter().map(|l| l.id)) {
            self.links.retain(|id| design.link(*id).is_some());
        }
    }
}

/// Whether every id of `wanted` occurs in `present`; both are sorted.
fn all_present<T: Ord + Copy>(wanted: &BTreeSet<T>, mut present: impl Iterator<Item = T>) -> bool {
    'next: for &w in wanted {
        for p in present.by_ref() {
            if p == w {
                continue 'next;
            }
            if p > w {
                return false;
            }
        }
        return false;
    }
    true
}

/// What the canvas remembers between frames. `scene_rect` is the visible canvas region
/// (egui's `Scene` pans and zooms it); set it with [`zoom_to_fit`].
#[derive(Debug, Clone)]
pub struct CanvasState {
    pub selection: Selection,
    pub scene_rect: Rect,
    pub show_grid: bool,
    /// The overview in the corner while part of the design is out of view (off for a PNG).
    pub show_minimap: bool,
    /// The zoom indicator in the top right corner (off for a PNG).
    pub show_zoom: bool,
    pub snap: bool,
    /// What link colours show when no heatmap is given in the overlay.
    pub link_colors: ColorMode,
    /// The legend folded to its heading (a click on it), so it covers nothing zoomed in.
    pub legend_folded: bool,
    /// Groups the user folded into one block each (a view of the design, not an edit).
    pub folded: BTreeSet<GroupId>,
    /// Gesture in progress, hover and view transform: the canvas's own business, public
    /// only so that `CanvasState { snap, ..Default::default() }` works outside this module.
    pub interaction: Interaction,
}

/// The canvas's private per-frame memory.
#[derive(Debug, Clone)]
pub struct Interaction {
    gesture: Gesture,
    hovered: Option<DeviceId>,
    /// Whether the last wheel event came from a notched mouse wheel (zoom) rather than a
    /// touchpad (pan).
    wheel_is_mouse: bool,
    /// Canvas → screen transform of the last frame.
    to_global: Option<TSTransform>,
    /// Links drawn in the last frame: decides whether their edges are feathered.
    links_drawn: std::cell::Cell<usize>,
    /// Links leading out of the last frame's view drawn as stubs: a link is found only
    /// where it was drawn.
    stubs: Option<Stubs>,
    /// The device the context menu was opened on, and the devices selected before the
    /// right-click (less that one): "connect those to this one".
    menu_target: Option<DeviceId>,
    menu_sources: BTreeSet<DeviceId>,
    /// What the context menu's "Connect to…" list is narrowed to.
    connect_filter: String,
    /// What the context menu's fold and unfold items act on.
    menu_fold: fold_menu::FoldTarget,
    /// A view asked for inside the scene (opening a folded group), taken up after it: the
    /// scene writes back its own rect when it ends.
    next_view: Option<Rect>,
    /// A fit asked for (the design's extent it fits) whose view is made once the frame
    /// knows where the legend sits, so the design fits beside it rather than under it.
    fit_pending: Option<Rect>,
    /// The legend's place in the last frame, in screen points.
    legend_rect: Option<Rect>,
    /// The view the last fit made, the legend it kept clear of and the design's extent it
    /// fitted: while the view stays there and the design does not change, a legend that grows
    /// or shrinks (another colour mode, the heatmap) refits it.
    fitted: Option<Fitted>,
    /// The design's extent and a sample of its devices, while some are out of view.
    overview: Option<minimap::Overview>,
    /// Links the last frame drew in a lane beside their bundle's line: clicks and hovers
    /// find them there.
    lanes: Vec<DrawnLane>,
    /// The last search for a link under the resting pointer: where, and what it found (the
    /// link's index, id and drawn ends, and how many links its bundle draws).
    hover_link: Option<(HoverKey, Option<FoundLink>)>,
    /// The last frames of pods and units, tier captions, and the fingerprint they were found
    /// for (`paint::captions_of`).
    captions: Option<(u64, std::sync::Arc<paint::Captions>)>,
}

/// What the last fit made: see `Interaction::fitted`.
#[derive(Debug, Clone, Copy, PartialEq)]
struct Fitted {
    view: Rect,
    legend: Option<Rect>,
    content: Rect,
}

/// A link as a search found it: its id and the two points its line was drawn between.
type SeenLink = (LinkId, Pos2, Pos2);
/// A found link's index, how it was seen, and how many links its bundle draws.
type FoundLink = (usize, SeenLink, usize);

/// Where a resting pointer's link search was made: the same point (in canvas units, so a
/// panned view differs) at the same zoom on a design of the same size finds the same link.
#[derive(Debug, Clone, Copy, PartialEq)]
struct HoverKey {
    at: Pos2,
    zoom: f32,
    devices: usize,
    links: usize,
}

impl Default for Interaction {
    fn default() -> Self {
        Self {
            gesture: Gesture::Idle,
            hovered: None,
            wheel_is_mouse: true,
            to_global: None,
            links_drawn: std::cell::Cell::new(0),
            stubs: None,
            menu_target: None,
            menu_sources: BTreeSet::new(),
            connect_filter: String::new(),
            menu_fold: fold_menu::FoldTarget::Canvas,
            next_view: None,
            fit_pending: None,
            legend_rect: None,
            fitted: None,
            overview: None,
            lanes: Vec::new(),
            hover_link: None,
            captions: None,
        }
    }
}

impl Default for CanvasState {
    fn default() -> Self {
        Self {
            selection: Selection::default(),
            scene_rect: Rect::NOTHING,
            show_grid: true,
            show_minimap: true,
            show_zoom: true,
            snap: true,
            link_colors: ColorMode::Technology,
            legend_folded: false,
            folded: BTreeSet::new(),
            interaction: Interaction::default(),
        }
    }
}

impl CanvasState {
    pub fn new() -> Self {
        Self::default()
    }

    /// How many link lines the last frame drew (bundles of parallel links count once).
    pub fn links_drawn(&self) -> usize {
        self.interaction.links_drawn.get()
    }

    /// Screen position of a canvas point as of the last frame drawn.
    pub fn to_screen(&self, p: Pos) -> Option<Pos2> {
        self.interaction.to_global.map(|t| t * to_pos2(p))
    }

    /// Canvas point under a screen position, as of the last frame drawn.
    pub fn to_canvas(&self, p: Pos2) -> Option<Pos> {
        self.interaction.to_global.map(|t| {
            let c = t.inverse() * p;
            Pos::new(c.x, c.y)
        })
    }

    /// Screen points per canvas unit in the last frame.
    pub fn zoom(&self) -> Option<f32> {
        self.interaction.to_global.map(|t| t.scaling)
    }

    /// True while a drag, box selection or link drawing is under way.
    pub fn is_busy(&self) -> bool {
        !matches!(self.interaction.gesture, Gesture::Idle)
    }
}

#[derive(Debug, Clone)]
enum Gesture {
    Idle,
    /// Primary drag on empty canvas or with Space held: the view follows the pointer so that
    /// the canvas point grabbed stays under it.
    Pan {
        grabbed: Pos2,
    },
    Move {
        /// Sorted; includes the members of selected domains.
        ids: Vec<DeviceId>,
        /// The grabbed device: it lands on the grid, the rest keep their distance to it.
        anchor: DeviceId,
        origin: Pos2,
        current: Pos2,
    },
    /// Shift+drag on empty canvas: the devices inside join the selection.
    Box {
        origin: Pos2,
        current: Pos2,
    },
    Link {
        from: DeviceId,
        current: Pos2,
    },
}

/// Read-only extras drawn over the design.
pub struct CanvasOverlay<'a> {
    pub catalog: &'a Catalog,
    /// Utilisation 0..1 of each link under the selected collective; colours links when set.
    pub heat: Option<&'a HashMap<LinkId, f64>>,
    /// Links to emphasise (the bisection cut while its figure is hovered).
    pub highlight_links: &'a HashSet<LinkId>,
    /// Each link's load under the sidebar's collective, for a hovered link's card.
    pub loads: Option<&'a LinkLoads<'a>>,
}

#[derive(Debug, Clone, PartialEq)]
pub enum CanvasEvent {
    Command(Command),
    /// A message for the status bar (a refused link, a part that is not a device).
    Status(String),
}

/// Payload a palette item carries when dragged onto the canvas.
#[derive(Clone, Debug)]
pub struct PaletteDrop {
    pub part: PartId,
}

fn usable(rect: Rect) -> bool {
    rect.is_finite() && rect.width() > 0.0 && rect.height() > 0.0
}

/// Frames every device (and domain container) with a margin. The next frame moves the
/// view so that the legend covers none of it ([`fit_clear_of`]).
pub fn zoom_to_fit(design: &Design, state: &mut CanvasState) {
    let content = fit_content(design);
    state.scene_rect = content;
    state.interaction.fit_pending = Some(content);
}

/// Shows `view` (canvas units), as it was left: no fit on the next frame.
pub fn show_view(state: &mut CanvasState, view: Rect) {
    state.scene_rect = view;
    state.interaction.fit_pending = None;
}

/// Whether two views are the same but for rounding (the scene writes its view back each
/// frame).
fn same_view(a: Rect, b: Rect) -> bool {
    let tolerance = 1e-3 * a.width().max(a.height());
    (a.min - b.min).length() <= tolerance && (a.max - b.max).length() <= tolerance
}

/// Where `r` (canvas units) lies on screen when `view` fills `outer`.
fn on_screen(r: Rect, view: Rect, outer: Rect) -> Rect {
    let scale = outer.width() / view.width().max(f32::EPSILON);
    let map = |p: Pos2| outer.min + (p - view.min) * scale;
    Rect::from_min_max(map(r.min), map(r.max))
}

/// The design's bounds with the fit's margin.
fn fit_content(design: &Design) -> Rect {
    Layout::build(design, None, Fold::Nothing)
        .bounds()
        .map_or(Rect::from_center_size(Pos2::ZERO, EMPTY_FIT_SIZE), |b| {
            b.expand(FIT_MARGIN)
        })
}

/// The view (canvas units, `outer`'s shape) that shows `content` as large as it can in
/// `outer` (screen points), up to [`MAX_FIT_ZOOM`], where the `legend` in the corner covers
/// none of it: centred on the whole canvas if the legend misses it there, else above the
/// legend or to its right, whichever shows it larger.
pub fn fit_clear_of(content: Rect, outer: Rect, legend: Option<Rect>) -> Rect {
    let zoom_in = |area: Rect| {
        (area.width() / content.width())
            .min(area.height() / content.height())
            .min(MAX_FIT_ZOOM)
    };
    let view = |area: Rect, zoom: f32| {
        let min = content.center() - (area.center() - outer.min) / zoom;
        Rect::from_min_size(min, outer.size() / zoom)
    };
    let whole = zoom_in(outer);
    let on_screen = Rect::from_center_size(outer.center(), content.size() * whole);
    let Some(legend) = legend.filter(|l| on_screen.intersects(*l)) else {
        return view(outer, whole);
    };
    let above = Rect::from_min_max(outer.min, Pos2::new(outer.max.x, legend.min.y));
    let beside = Rect::from_min_max(Pos2::new(legend.max.x, outer.min.y), outer.max);
    [above, beside]
        .into_iter()
        .filter(|a| a.width() > 0.0 && a.height() > 0.0)
        .map(|a| (a, zoom_in(a)))
        .max_by(|x, y| x.1.total_cmp(&y.1))
        .map_or(view(outer, whole), |(a, z)| view(a, z))
}

/// What the port handle does, on hover.
pub const HANDLE_HINT: &str =
    "Drag from here to another device to connect them (or right-click a device: Connect to…)";

/// What an empty canvas says: where designs come from and how the canvas moves.
pub const EMPTY_CANVAS_HINT: &str = "Drag a part from the palette on the left onto the canvas,\n\
     or Generate… a whole fabric from a template (above the palette), or open a preset (File).\n\
     Drag empty canvas to pan, Shift+drag to select, scroll to zoom; press ? for every shortcut.";

fn empty_canvas_hint(ui: &Ui, outer: Rect) {
    ui.painter().text(
        outer.center(),
        egui::Align2::CENTER_CENTER,
        EMPTY_CANVAS_HINT,
        egui::FontId::proportional(15.0),
        ui.visuals().weak_text_color(),
    );
}

/// The zoom in the canvas's top right corner, as a percentage ("8 %", "100 %"); a click on
/// it fits the design. Returns whether it was clicked.
fn zoom_indicator(ui: &mut Ui, outer: Rect, zoom: Option<f32>) -> bool {
    let Some(zoom) = zoom.filter(|z| z.is_finite() && *z > 0.0) else {
        return false;
    };
    let size = Vec2::new(64.0, 20.0);
    let at = outer.right_top() + Vec2::new(-size.x - 8.0, 8.0);
    // An area in front of the canvas (as the minimap), so the click is the button's, not
    // the canvas's underneath; in the windows' order, not in front of them, so an open
    // window (Plots, Compare) covers it.
    egui::Area::new(ui.id().with("railyard_zoom"))
        .order(egui::Order::Middle)
        .fixed_pos(at)
        .movable(false)
        .fade_in(false)
        .show(ui.ctx(), |ui| {
            ui.add_sized(
                size,
                egui::Button::new(egui::RichText::new(zoom_percent(zoom)).small()),
            )
            .on_hover_text("Zoom. Click (or press F) to fit the whole design")
            .clicked()
        })
        .inner
}

/// A click target over the legend (drawn with the labels, where it was last frame): a
/// click folds it to its heading or opens it again. Returns whether it was clicked.
fn legend_toggle(ui: &mut Ui, legend: Rect, folded: bool) -> bool {
    // In front of the canvas, as the zoom indicator, so the click is the legend's.
    egui::Area::new(ui.id().with("railyard_legend"))
        .order(egui::Order::Middle)
        .fixed_pos(legend.min)
        .movable(false)
        .fade_in(false)
        .show(ui.ctx(), |ui| {
            let (_, response) = ui.allocate_exact_size(legend.size(), egui::Sense::click());
            response
                .on_hover_text(if folded {
                    "Click to show the legend"
                } else {
                    "Click to fold the legend to its heading"
                })
                .clicked()
        })
        .inner
}

/// A zoom as people read it: whole percents, one decimal below 10 %.
fn zoom_percent(zoom: f32) -> String {
    let percent = zoom * 100.0;
    if percent < 9.95 {
        format!("{percent:.1} %")
    } else {
        format!("{percent:.0} %")
    }
}

/// The view that shows a collapsed block's members: the block with the fit margin, no larger
/// than what a `viewport` of screen points shows at the zoom groups open at, about its centre.
fn opening_view(block: Rect, viewport: Vec2) -> Rect {
    let open_size = viewport / (COLLAPSE_ZOOM * 1.25);
    let wanted = block.expand(FIT_MARGIN).size();
    Rect::from_center_size(block.center(), wanted.min(open_size))
}

/// Snaps the moving set so that the grabbed device lands on the grid.
fn move_offset(design: &Design, anchor: DeviceId, delta: Vec2, snap: bool) -> Vec2 {
    if !snap {
        return delta;
    }
    let Some(d) = design.device(anchor) else {
        return delta;
    };
    let p = to_pos2(d.pos) + delta;
    let snapped = Pos2::new((p.x / GRID).round() * GRID, (p.y / GRID).round() * GRID);
    snapped - to_pos2(d.pos)
}

/// Draws the design and handles the canvas's gestures. Returns the edits and messages the
/// caller should apply or show, in order.
pub fn canvas_ui(
    ui: &mut Ui,
    design: &Design,
    state: &mut CanvasState,
    overlay: &CanvasOverlay,
) -> Vec<CanvasEvent> {
    let mut events = Vec::new();
    if !usable(state.scene_rect) {
        zoom_to_fit(design, state);
    }
    state.selection.retain_existing(design);

    let outer = ui.available_rect_before_wrap();
    wheel_zoom(ui, outer, state);

    let space = ui.input(|i| i.key_down(Key::Space)) && !ui.ctx().egui_wants_keyboard_input();
    // Primary-button pans are the canvas's own (they start on empty canvas, which only the
    // hit test knows); the Scene pans on the other buttons.
    let pan_buttons = DragPanButtons::MIDDLE | DragPanButtons::SECONDARY;
    follow_pan(ui, outer, state);
    let labels_layer = LayerId::new(ui.layer_id().order, ui.id().with("railyard_canvas_labels"));
    let parent_layer = ui.layer_id();

    let mut scene_rect = state.scene_rect;
    Scene::new()
        .zoom_range(MIN_ZOOM..=MAX_ZOOM)
        .drag_pan_buttons(pan_buttons)
        .show(ui, &mut scene_rect, |ui| {
            body(ui, design, state, overlay, space, labels_layer, &mut events);
        });
    state.scene_rect = scene_rect;
    let legend = state.interaction.legend_rect;
    let asked = state.interaction.fit_pending.take();
    let legend_changed = state
        .interaction
        .fitted
        .filter(|f| same_view(f.view, state.scene_rect) && f.legend != legend);
    if (asked.is_some() || legend_changed.is_some()) && usable(outer) {
        // Laid out only now, not every frame: a layout walks every device.
        let content = asked.unwrap_or_else(|| fit_content(design));
        // A legend that changed but still clears the design (a what-if adds its "failed"
        // row) leaves the view be: a jump would move what is under the pointer.
        let still_clear = asked.is_none()
            && legend.is_none_or(|l| !l.intersects(on_screen(content, state.scene_rect, outer)));
        if still_clear && legend_changed.is_some_and(|f| f.content == content) {
            state.interaction.fitted = Some(Fitted {
                view: state.scene_rect,
                legend,
                content,
            });
        } else if asked.is_some() || legend_changed.is_some_and(|f| f.content == content) {
            state.scene_rect = fit_clear_of(content, outer, legend);
            state.interaction.fitted = Some(Fitted {
                view: state.scene_rect,
                legend,
                content,
            });
            ui.ctx().request_repaint();
        } else {
            // The design changed since the fit: its view is the user's now.
            state.interaction.fitted = None;
        }
    }
    if let Some(view) = state.interaction.next_view.take() {
        state.scene_rect = view;
        ui.ctx().request_repaint();
    }
    if state.show_minimap
        && let Some(overview) = &state.interaction.overview
    {
        let (visible, _) = visible_region(outer, state.scene_rect);
        if let Some(centre) = minimap::minimap_ui(ui, outer, overview, visible) {
            state.scene_rect = Rect::from_center_size(centre, state.scene_rect.size());
            ui.ctx().request_repaint();
        }
    }
    if design.devices.is_empty() {
        empty_canvas_hint(ui, outer);
    }
    if state.show_zoom && zoom_indicator(ui, outer, state.zoom()) {
        zoom_to_fit(design, state);
        ui.ctx().request_repaint();
    }
    if let Some(legend) = state.interaction.legend_rect
        && legend_toggle(ui, legend, state.legend_folded)
    {
        state.legend_folded = !state.legend_folded;
        ui.ctx().request_repaint();
    }
    // A pan that began this frame catches up with the pointer now; show it with one more frame.
    let before = state.scene_rect;
    follow_pan(ui, outer, state);
    if state.scene_rect.min.distance(before.min) > 1e-3 {
        ui.ctx().request_repaint();
    }
    // After the Scene's own layer, so the labels stack above the drawing.
    ui.ctx().set_sublayer(parent_layer, labels_layer);
    if !events.is_empty() {
        // The caller applies the edits after this frame: draw once more to show them.
        ui.ctx().request_repaint();
    }
    events
}

/// The visible canvas region when `scene_rect` is shown in `outer` (as `Scene` fits it: the
/// whole rect in view, centred, at the zoom limits), and its zoom.
fn visible_region(outer: Rect, scene_rect: Rect) -> (Rect, f32) {
    let scale = (outer.size() / scene_rect.size())
        .min_elem()
        .clamp(MIN_ZOOM, MAX_ZOOM);
    (
        Rect::from_center_size(scene_rect.center(), outer.size() / scale),
        scale,
    )
}

/// During a primary-button pan, moves the view so that the grabbed canvas point lies under the
/// pointer again. Only the view moves: no command, so no undo step and no unsaved change.
fn follow_pan(ui: &Ui, outer: Rect, state: &mut CanvasState) {
    let Gesture::Pan { grabbed } = state.interaction.gesture else {
        return;
    };
    let Some(pointer) = ui.input(|i| i.pointer.latest_pos()) else {
        return;
    };
    let (visible, scale) = visible_region(outer, state.scene_rect);
    let under_pointer = visible.min + (pointer - outer.min) / scale;
    state.scene_rect = state.scene_rect.translate(grabbed - under_pointer);
}

/// Mouse-wheel notches zoom about the pointer; touchpad scrolling is left to the Scene (pan).
fn wheel_zoom(ui: &mut Ui, outer: Rect, state: &mut CanvasState) {
    ui.input(|i| {
        for e in &i.raw.events {
            if let Event::MouseWheel { unit, .. } = e {
                state.interaction.wheel_is_mouse = *unit != MouseWheelUnit::Point;
            }
        }
    });
    let (scroll, pointer, modifiers) =
        ui.input(|i| (i.smooth_scroll_delta, i.pointer.latest_pos(), i.modifiers));
    let Some(pointer) = pointer else { return };
    // A window or popup above the canvas keeps its own wheel.
    let covered = ui
        .ctx()
        .layer_id_at(pointer)
        .is_some_and(|l| l.order != ui.layer_id().order);
    if !state.interaction.wheel_is_mouse
        || scroll.y == 0.0
        || !modifiers.is_none()
        || !outer.contains(pointer)
        || covered
    {
        return;
    }
    let (visible, scale) = visible_region(outer, state.scene_rect);
    let q = visible.min + (pointer - outer.min) / scale;
    let factor = (scroll.y / 200.0).exp();
    let factor = (scale * factor).clamp(MIN_ZOOM, MAX_ZOOM) / scale;
    state.scene_rect = Rect::from_min_max(
        q + (visible.min - q) / factor,
        q + (visible.max - q) / factor,
    );
    ui.input_mut(|i| i.smooth_scroll_delta.y = 0.0);
}

fn body(
    ui: &mut Ui,
    design: &Design,
    state: &mut CanvasState,
    overlay: &CanvasOverlay,
    space: bool,
    labels_layer: LayerId,
    events: &mut Vec<CanvasEvent>,
) {
    let ctx = ui.ctx().clone();
    let response = ui.response();
    let to_global = ctx
        .layer_transform_to_global(ui.layer_id())
        .unwrap_or_default();
    let from_global = to_global.inverse();
    let zoom = to_global.scaling;
    let view = ui.clip_rect();
    state.interaction.to_global = Some(to_global);

    let (pointer, press_origin, shift, escape) = ctx.input(|i| {
        (
            i.pointer.interact_pos().or(i.pointer.latest_pos()),
            i.pointer.press_origin(),
            i.modifiers.shift || i.modifiers.command,
            i.key_pressed(Key::Escape),
        )
    });
    let pointer = pointer.map(|p| from_global * p);

    // Follow the pointer first, so the preview is not a frame behind.
    if response.dragged()
        && let Some(p) = pointer
    {
        match &mut state.interaction.gesture {
            Gesture::Move { current, .. }
            | Gesture::Box { current, .. }
            | Gesture::Link { current, .. } => *current = p,
            Gesture::Idle | Gesture::Pan { .. } => {}
        }
    }
    if escape && state.is_busy() {
        state.interaction.gesture = Gesture::Idle;
    }

    let moving = match &state.interaction.gesture {
        Gesture::Move {
            ids,
            anchor,
            origin,
            current,
        } => Some((
            ids.as_slice(),
            move_offset(design, *anchor, *current - *origin, state.snap),
        )),
        _ => None,
    };
    let far_out = zoom < COLLAPSE_ZOOM;
    let fold = if far_out {
        Fold::Outermost
    } else {
        Fold::Chosen(&state.folded)
    };
    let layout = Layout::build(design, moving, fold);

    let hovered_index = state
        .interaction
        .hovered
        .and_then(|id| index_of(&design.devices, id));
    let handles = if zoom >= ALL_HANDLES_ZOOM {
        Handles::All
    } else if zoom >= MIN_HANDLE_ZOOM {
        hovered_index.map_or(Handles::None, Handles::Only)
    } else {
        Handles::None
    };
    let pointer_inside = response.contains_pointer() || response.dragged();
    let hover_hit = pointer
        .filter(|_| pointer_inside)
        .and_then(|p| layout.hit(design, p, zoom, handles));
    let hovered_now = match hover_hit {
        Some(Hit::Port(i) | Hit::Device(i)) => Some(i),
        _ => None,
    };
    // The port handle says what it is for.
    if let Some(Hit::Port(_)) = hover_hit
        && matches!(state.interaction.gesture, Gesture::Idle)
    {
        response.clone().on_hover_text_at_pointer(HANDLE_HINT);
    }
    // A link under a resting pointer, and no device: its card (what it is, its ends, its
    // load). The links are searched once each time the pointer comes to rest (a card only
    // shows then), not while it moves, zooms or scrolls, and not again on later frames
    // while it rests where it was: on 200,000 links a search takes a few milliseconds.
    let still = ui.input(|i| {
        i.pointer.is_still() && i.smooth_scroll_delta == Vec2::ZERO && i.zoom_delta() == 1.0
    });
    if pointer_inside
        && still
        && hover_hit.is_none()
        && matches!(state.interaction.gesture, Gesture::Idle)
        && let Some(p) = pointer
    {
        let key = HoverKey {
            at: p,
            zoom,
            devices: design.devices.len(),
            links: design.links.len(),
        };
        // What a found link was then (its id and where its ends were drawn): an edit under
        // a resting pointer (an undo) that moved or replaced it makes a new search.
        let seen = |k: usize| {
            let link = design.links.get(k)?;
            let (ia, ib) = layout.link_ends(&design.devices, link)?;
            Some((link.id, layout.anchor(ia), layout.anchor(ib)))
        };
        let found = match state.interaction.hover_link {
            Some((last, None)) if last == key => None,
            Some((last, Some((k, then, parallel)))) if last == key && seen(k) == Some(then) => {
                Some((k, parallel))
            }
            _ => {
                let found = layout.hit_link(
                    design,
                    p,
                    zoom,
                    |l| link_width_px(l, zoom),
                    &state.interaction.lanes,
                    state.interaction.stubs,
                );
                // Lanes as the links were drawn: the heatmap's, else the chosen colours'.
                let mode = if overlay.heat.is_some() {
                    ColorMode::Heatmap
                } else {
                    crate::io::link_colors::drawn_mode(state.link_colors, design)
                };
                let remembered = found
                    .and_then(|k| Some((k, seen(k)?, layout.links_alongside(design, k, mode))));
                state.interaction.hover_link = Some((key, remembered));
                remembered.map(|(k, _, parallel)| (k, parallel))
            }
        };
        if let Some((link, parallel)) = found.and_then(|(k, n)| Some((design.links.get(k)?, n))) {
            let text = link_info::hover_text(design, link, parallel, overlay.loads);
            response.clone().on_hover_text_at_pointer(text);
        }
    }
    // While moving, the device under the pointer is the one being dragged: keep the handle
    // of what was hovered before, so it does not flicker.
    if !matches!(state.interaction.gesture, Gesture::Move { .. }) {
        state.interaction.hovered = hovered_now.map(|i| design.devices[i].id);
    }

    // Gestures start, end, and clicks.
    if response.drag_started_by(PointerButton::Primary) {
        let origin = press_origin.map(|p| from_global * p).or(pointer);
        if let Some(origin) = origin {
            state.interaction.gesture = if space {
                Gesture::Pan { grabbed: origin }
            } else {
                start_gesture(design, state, &layout, origin, zoom, handles, shift)
            };
        }
    }
    if response.drag_stopped() {
        let gesture = std::mem::replace(&mut state.interaction.gesture, Gesture::Idle);
        finish_gesture(
            design,
            state,
            &layout,
            overlay.catalog,
            gesture,
            zoom,
            events,
        );
    } else if !response.dragged() && state.is_busy() {
        // The drag ended somewhere we did not see (focus lost): drop it.
        state.interaction.gesture = Gesture::Idle;
    }
    if response.clicked_by(PointerButton::Primary)
        && let Some(p) = pointer
    {
        click(design, state, &layout, p, zoom, handles, shift);
    }
    // Double-click on a folded group opens it: one the user folded unfolds where it is; far
    // out, the view closes in on a pod's or scalable unit's members until they are drawn one
    // by one again.
    if response.double_clicked_by(PointerButton::Primary)
        && let Some(p) = pointer
        && let Some(Hit::Block(b)) = layout.hit(design, p, zoom, handles)
        && !far_out
        && let Some(group) = layout.blocks[b].what.group()
    {
        state.folded.remove(&group);
        events.push(CanvasEvent::Status(format!(
            "Unfolded {}",
            fold_menu::group_name(design, group)
        )));
    } else if response.double_clicked_by(PointerButton::Primary)
        && let Some(p) = pointer
        && let Some(Hit::Block(b)) = layout.hit(design, p, zoom, handles)
    {
        let block = &layout.blocks[b];
        // The response lives in canvas units inside the scene: times the zoom, screen points.
        state.interaction.next_view = Some(opening_view(block.rect, response.rect.size() * zoom));
        events.push(CanvasEvent::Status(format!(
            "Opened {} (zoom out to fold it again)",
            block.caption(design)
        )));
    }
    // Right-click: what-if actions for what is under the pointer (selected first, unless it
    // already is) or, on empty canvas, for the selection, rails and planes.
    if response.secondary_clicked()
        && let Some(p) = pointer
    {
        let hit = layout.hit(design, p, zoom, handles);
        let target = match hit {
            Some(Hit::Device(i) | Hit::Port(i)) => Some(design.devices[i].id),
            _ => None,
        };
        state.interaction.menu_fold = match hit {
            Some(Hit::Device(i) | Hit::Port(i)) => {
                fold_menu::FoldTarget::Device(design.devices[i].id)
            }
            Some(Hit::Block(b)) if !far_out => match layout.blocks[b].what.group() {
                Some(g) => fold_menu::FoldTarget::Block(g),
                None => fold_menu::FoldTarget::Canvas,
            },
            _ => fold_menu::FoldTarget::Canvas,
        };
        // Remembered before the right-click selects what is under it, so that the menu can
        // still connect what was selected to the device clicked.
        let mut sources = state.selection.devices.clone();
        if let Some(t) = target {
            sources.remove(&t);
        }
        state.interaction.menu_target = target;
        state.interaction.menu_sources = sources;
        let under = match hit {
            Some(Hit::Device(i) | Hit::Port(i)) => {
                Some(state.selection.devices.contains(&design.devices[i].id))
            }
            Some(Hit::Block(_)) => None,
            None => layout
                .hit_link(
                    design,
                    p,
                    zoom,
                    |l| link_width_px(l, zoom),
                    &state.interaction.lanes,
                    state.interaction.stubs,
                )
                .map(|k| state.selection.links.contains(&design.links[k].id)),
        };
        if under == Some(false) {
            click(design, state, &layout, p, zoom, handles, false);
        }
    }
    response.context_menu(|ui| {
        let sel = &state.selection;
        if let Some(command) = super::whatif::context_menu_ui(ui, design, &sel.devices, &sel.links)
        {
            events.push(CanvasEvent::Command(command));
        }
        let interaction = &mut state.interaction;
        events.extend(wiring_menu::wiring_menu_ui(
            ui,
            design,
            overlay.catalog,
            &mut state.selection,
            interaction.menu_target,
            &interaction.menu_sources,
            &mut interaction.connect_filter,
        ));
        events.extend(
            fold_menu::fold_menu_ui(ui, design, &mut state.folded, interaction.menu_fold)
                .map(CanvasEvent::Status),
        );
    });

    // Palette drops.
    let drop_preview = response.dnd_hover_payload::<PaletteDrop>();
    if let Some(payload) = response.dnd_release_payload::<PaletteDrop>()
        && let Some(p) = pointer
    {
        drop_part(design, state, overlay.catalog, &payload.part, p, events);
    }

    // Paint.
    let labels = ctx
        .layer_painter(labels_layer)
        .with_clip_rect(to_global * view);
    let link_target = match (&state.interaction.gesture, hover_hit) {
        (Gesture::Link { .. }, Some(Hit::Device(i) | Hit::Port(i))) => Some(i),
        _ => None,
    };
    let visible = paint::visible_devices(design, &layout, view);
    let captions = paint::captions_of(design, &layout, &mut state.interaction.captions);
    let frame = paint::Frame {
        scene: ui.painter(),
        labels: &labels,
        to_global,
        zoom,
        view,
        design,
        catalog: overlay.catalog,
        layout: &layout,
        state,
        overlay,
        handles,
        visible: &visible,
        hovered: link_target.or(hovered_now).or(hovered_index),
        dark: ui.visuals().dark_mode,
        drawn_colors: crate::io::link_colors::drawn_mode(state.link_colors, design),
    };
    if state.show_grid {
        frame.grid();
    }
    let frame_captions = frame.group_frames(&captions.frames);
    frame.domains();
    let links = frame.links();
    frame.devices();
    match &state.interaction.gesture {
        Gesture::Box { origin, current } => {
            frame.selection_box(Rect::from_two_pos(*origin, *current))
        }
        Gesture::Link { from, current } => {
            if let Some(i) = index_of(&design.devices, *from) {
                frame.link_band(i, *current);
            }
        }
        _ => {}
    }
    if let (Some(payload), Some(p)) = (drop_preview, pointer) {
        frame.drop_ghost(snap_point(p, state.snap), &payload.part);
    }
    frame.labels();
    let captions_placed = frame.tier_captions(&captions.tiers, frame_captions);
    let captions_placed = frame.pod_captions(&captions.frames, captions_placed);
    frame.bundle_counts(&links.parallel, captions_placed);
    state.interaction.legend_rect = frame.legend(&links);
    state.interaction.stubs = links.stub_length.map(|length| Stubs { view, length });
    state.interaction.overview = minimap::Overview::of(&layout, view);
    state.interaction.lanes = links.lanes;
}

fn snap_point(p: Pos2, snap: bool) -> Pos2 {
    if snap {
        Pos2::new((p.x / GRID).round() * GRID, (p.y / GRID).round() * GRID)
    } else {
        p
    }
}

/// The devices a drag of the selection moves: the selection and the members of selected
/// domains, sorted.
fn moving_set(design: &Design, selection: &BTreeSet<DeviceId>) -> Vec<DeviceId> {
    let mut ids: BTreeSet<DeviceId> = selection.clone();
    let any_domain = selection.iter().any(|id| {
        design
            .device(*id)
            .is_some_and(|d| matches!(d.kind, DeviceKind::NvSwitchDomain(_)))
    });
    if any_domain {
        for d in &design.devices {
            if let DeviceKind::GpuNode(n) = &d.kind
                && n.domain.is_some_and(|dom| selection.contains(&dom))
            {
                ids.insert(d.id);
            }
        }
    }
    ids.into_iter().collect()
}

/// Every device folded into block `b`: the members of its group and of the groups inside
/// it (a scalable unit's racks), as the layout folded them.
fn block_members(design: &Design, layout: &Layout, b: usize) -> Vec<DeviceId> {
    design
        .devices
        .iter()
        .enumerate()
        .filter(|&(i, _)| layout.block_of(i) == Some(b))
        .map(|(_, d)| d.id)
        .collect()
}

fn start_gesture(
    design: &Design,
    state: &mut CanvasState,
    layout: &Layout,
    origin: Pos2,
    zoom: f32,
    handles: Handles,
    shift: bool,
) -> Gesture {
    match layout.hit(design, origin, zoom, handles) {
        Some(Hit::Port(i)) => Gesture::Link {
            from: design.devices[i].id,
            current: origin,
        },
        Some(Hit::Device(i)) => {
            let id = design.devices[i].id;
            if !state.selection.devices.contains(&id) {
                if !shift {
                    state.selection.clear();
                }
                state.selection.devices.insert(id);
            }
            Gesture::Move {
                ids: moving_set(design, &state.selection.devices),
                anchor: id,
                origin,
                current: origin,
            }
        }
        Some(Hit::Block(b)) => {
            let members = block_members(design, layout, b);
            if !shift {
                state.selection.clear();
            }
            state.selection.devices.extend(members.iter().copied());
            match members.first() {
                Some(&anchor) => Gesture::Move {
                    ids: moving_set(design, &state.selection.devices),
                    anchor,
                    origin,
                    current: origin,
                },
                None => Gesture::Idle,
            }
        }
        None if shift => Gesture::Box {
            origin,
            current: origin,
        },
        None => Gesture::Pan { grabbed: origin },
    }
}

fn finish_gesture(
    design: &Design,
    state: &mut CanvasState,
    layout: &Layout,
    catalog: &Catalog,
    gesture: Gesture,
    zoom: f32,
    events: &mut Vec<CanvasEvent>,
) {
    match gesture {
        Gesture::Idle | Gesture::Pan { .. } => {}
        Gesture::Move {
            ids,
            anchor,
            origin,
            current,
        } => {
            let offset = move_offset(design, anchor, current - origin, state.snap);
            if offset == Vec2::ZERO {
                return;
            }
            let moves: Vec<(DeviceId, Pos)> = ids
                .iter()
                .filter_map(|id| {
                    let d = design.device(*id)?;
                    Some((*id, Pos::new(d.pos.x + offset.x, d.pos.y + offset.y)))
                })
                .collect();
            if !moves.is_empty() {
                events.push(CanvasEvent::Command(Command::MoveDevices { moves }));
            }
        }
        Gesture::Box { origin, current } => {
            // Shift means "add to the selection", as Shift+click does; a click on empty
            // canvas clears it first.
            let area = Rect::from_two_pos(origin, current);
            for (i, d) in design.devices.iter().enumerate() {
                if area.contains(layout.rects[i].center()) {
                    state.selection.devices.insert(d.id);
                }
            }
        }
        Gesture::Link { from, current } => match layout.hit(design, current, zoom, Handles::None) {
            Some(Hit::Device(j) | Hit::Port(j)) => {
                let to = design.devices[j].id;
                if to == from {
                    return;
                }
                match default_link(design, catalog, from, to) {
                    Ok(link) => {
                        let down = if link.state == crate::model::LinkState::Failed {
                            let which = if crate::model::factory::device_down(design, from) {
                                from
                            } else {
                                to
                            };
                            format!(
                                ", failed: {} is failed in the what-if (Restore brings it back)",
                                name_of(design, which)
                            )
                        } else {
                            String::new()
                        };
                        let status = format!(
                            "linked {} and {}: {} at {}{down}",
                            name_of(design, from),
                            name_of(design, to),
                            link.tech.label(),
                            link.nominal_capacity()
                        );
                        state.selection.clear();
                        state.selection.links.insert(link.id);
                        events.push(CanvasEvent::Command(Command::Insert {
                            devices: vec![],
                            links: vec![link],
                            groups: vec![],
                        }));
                        events.push(CanvasEvent::Status(status));
                    }
                    Err(reason) => events.push(CanvasEvent::Status(reason)),
                }
            }
            Some(Hit::Block(_)) => events.push(CanvasEvent::Status(
                "zoom in, or unfold the group, to link to a single device".to_string(),
            )),
            None => {}
        },
    }
}

fn name_of(design: &Design, id: DeviceId) -> String {
    design
        .device(id)
        .map_or_else(|| id.to_string(), |d| d.name.clone())
}

fn click(
    design: &Design,
    state: &mut CanvasState,
    layout: &Layout,
    p: Pos2,
    zoom: f32,
    handles: Handles,
    toggle: bool,
) {
    let sel = &mut state.selection;
    let (lanes, stubs) = (&state.interaction.lanes, state.interaction.stubs);
    match layout.hit(design, p, zoom, handles) {
        Some(Hit::Device(i) | Hit::Port(i)) => {
            let id = design.devices[i].id;
            if toggle {
                if !sel.devices.remove(&id) {
                    sel.devices.insert(id);
                }
            } else {
                sel.clear();
                sel.devices.insert(id);
            }
        }
        Some(Hit::Block(b)) => {
            if !toggle {
                sel.clear();
            }
            sel.devices.extend(block_members(design, layout, b));
        }
        None => match layout.hit_link(design, p, zoom, |l| link_width_px(l, zoom), lanes, stubs) {
            Some(k) => {
                let id = design.links[k].id;
                if toggle {
                    if !sel.links.remove(&id) {
                        sel.links.insert(id);
                    }
                } else {
                    sel.clear();
                    sel.links.insert(id);
                }
            }
            None if !toggle => sel.clear(),
            None => {}
        },
    }
}

fn drop_part(
    design: &Design,
    state: &mut CanvasState,
    catalog: &Catalog,
    part: &PartId,
    at: Pos2,
    events: &mut Vec<CanvasEvent>,
) {
    let at = snap_point(at, state.snap);
    let id = design.next_device_id();
    match devices_from_part(
        catalog,
        part,
        id,
        name_for_new(design, catalog, part, id),
        Pos::new(at.x, at.y),
    ) {
        Ok(mut devices) => {
            let nics = devices
                .first_mut()
                .and_then(|d| match_design_nics(catalog, design, d));
            let name = devices.first().map(|d| d.name.clone()).unwrap_or_default();
            state.selection.clear();
            state.selection.devices.insert(id);
            events.push(CanvasEvent::Command(Command::Insert {
                devices,
                links: vec![],
                groups: vec![],
            }));
            if let Some(nics) = nics {
                events.push(CanvasEvent::Status(format!("Added {name} {nics}")));
            }
        }
        Err(e) => events.push(CanvasEvent::Status(e.to_string())),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn zoom_reads_in_whole_percents_with_a_decimal_below_ten() {
        assert_eq!(zoom_percent(1.0), "100 %");
        assert_eq!(zoom_percent(0.158), "16 %");
        assert_eq!(zoom_percent(0.065), "6.5 %");
        assert_eq!(zoom_percent(0.0996), "10 %");
    }

    #[test]
    fn a_fit_keeps_the_design_clear_of_the_legend() {
        let outer = Rect::from_min_size(Pos2::ZERO, Vec2::new(1000.0, 600.0));
        let legend = Rect::from_min_max(Pos2::new(12.0, 480.0), Pos2::new(212.0, 588.0));
        // A wide design (2000 × 400) fits the whole width at zoom 0.5: 200 points high,
        // centred at y 200..400, above the legend's top (480). The plain fit stands.
        let wide = Rect::from_min_size(Pos2::ZERO, Vec2::new(2000.0, 400.0));
        let view = fit_clear_of(wide, outer, Some(legend));
        assert_eq!(
            view,
            Rect::from_min_size(Pos2::new(0.0, -400.0), Vec2::new(2000.0, 1200.0))
        );
        // A square design (600 × 600) at zoom 1 fills the height and runs x 200..800 — the
        // legend's corner is x 12..212: covered. Above the legend (600 × 480) gives zoom 0.8;
        // to its right (788 × 600) zoom 1.0, so it moves right: centred at screen x 606.
        let square = Rect::from_min_size(Pos2::ZERO, Vec2::splat(600.0));
        let view = fit_clear_of(square, outer, Some(legend));
        assert!((view.width() - 1000.0).abs() < 1e-3 && (view.height() - 600.0).abs() < 1e-3);
        assert!((view.min.x - (300.0 - 606.0)).abs() < 1e-3, "{view:?}");
        assert!(view.min.y.abs() < 1e-3, "{view:?}");
    }

    #[test]
    fn canvas_rects_map_to_the_screen_at_the_view_s_scale() {
        // A view 2000 units wide over a 1000-point canvas: half a point a unit.
        let outer = Rect::from_min_size(Pos2::new(10.0, 20.0), Vec2::new(1000.0, 600.0));
        let view = Rect::from_min_size(Pos2::new(-200.0, 0.0), Vec2::new(2000.0, 1200.0));
        let r = Rect::from_min_max(Pos2::new(0.0, 100.0), Pos2::new(200.0, 300.0));
        assert_eq!(
            on_screen(r, view, outer),
            Rect::from_min_max(Pos2::new(110.0, 70.0), Pos2::new(210.0, 170.0))
        );
    }

    #[test]
    fn a_fit_magnifies_a_small_design_up_to_its_limit() {
        let outer = Rect::from_min_size(Pos2::ZERO, Vec2::new(1000.0, 600.0));
        // A homelab 400 × 200 units would fill the canvas at zoom 2.5 (width) or 3 (height);
        // the fit stops at 1.5: 1000 / 1.5 × 600 / 1.5 units, centred on the design.
        let small = Rect::from_center_size(Pos2::new(100.0, 50.0), Vec2::new(400.0, 200.0));
        let view = fit_clear_of(small, outer, None);
        let expected = Rect::from_center_size(small.center(), Vec2::new(1000.0, 600.0) / 1.5);
        assert!((view.min - expected.min).length() < 1e-3, "{view:?}");
        assert!((view.max - expected.max).length() < 1e-3, "{view:?}");
        // A large one fits as before: 4000 units across 1000 points, zoom 0.25.
        let large = Rect::from_min_size(Pos2::ZERO, Vec2::new(4000.0, 1000.0));
        assert!((fit_clear_of(large, outer, None).width() - 4000.0).abs() < 1e-2);
    }

    #[test]
    fn presence_walks_sorted_ids() {
        let wanted: BTreeSet<u32> = [2, 5, 9].into_iter().collect();
        assert!(all_present(&wanted, [1, 2, 3, 5, 9, 10].into_iter()));
        assert!(!all_present(&wanted, [2, 5, 8, 10].into_iter()));
        assert!(!all_present(&wanted, [2, 5].into_iter()));
        assert!(all_present(&BTreeSet::new(), std::iter::empty::<u32>()));
    }

    #[test]
    fn snapping_lands_the_grabbed_device_on_the_grid() {
        let mut design = Design::new("t");
        let catalog = Catalog::builtin();
        let d = crate::model::factory::device_from_part(
            &catalog,
            &PartId::new("qm9700"),
            DeviceId(0),
            "s".into(),
            Pos::new(7.0, 3.0),
        )
        .unwrap();
        design.insert_device(d);
        // (7, 3) + (25, 30) = (32, 33) snaps to (40, 40): the offset becomes (33, 37).
        assert_eq!(
            move_offset(&design, DeviceId(0), Vec2::new(25.0, 30.0), true),
            Vec2::new(33.0, 37.0)
        );
        assert_eq!(
            move_offset(&design, DeviceId(0), Vec2::new(25.0, 30.0), false),
            Vec2::new(25.0, 30.0)
        );
    }
}
