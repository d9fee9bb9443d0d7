//! The minimap: while part of the design is out of view, a small overview in the canvas's
//! bottom-right corner shows the whole design and the part in view; a click or drag on it
//! moves the view there. Its dots are a sample of at most `MAX_DOTS` devices, so it costs the
//! same at 65,536 GPUs as at 16.

use egui::epaint::Mesh;
use egui::{Color32, Pos2, Rect, Sense, Shape, Stroke, StrokeKind, Ui, Vec2, pos2, vec2};

use super::geometry::Layout;

const SIZE: Vec2 = vec2(200.0, 130.0);
const MARGIN: f32 = 12.0;
const MAX_DOTS: usize = 1500;

/// What the minimap shows, taken from the frame's layout (canvas units).
#[derive(Debug, Clone)]
pub(super) struct Overview {
    bounds: Rect,
    dots: Vec<Pos2>,
}

impl Overview {
    /// The design's extent and a sample of its devices; None when every device is in `view`
    /// (nothing to find).
    pub fn of(layout: &Layout, view: Rect) -> Option<Overview> {
        let bounds = layout.bounds()?;
        if view.contains_rect(bounds) {
            return None;
        }
        let n = layout.rects.len();
        let stride = n.div_ceil(MAX_DOTS).max(1);
        let dots = layout
            .rects
            .iter()
            .step_by(stride)
            .filter(|r| r.is_positive())
            .map(|r| r.center())
            .collect();
        Some(Overview { bounds, dots })
    }
}

/// Where the minimap sits in a canvas of `outer` (screen points).
pub(super) fn minimap_rect(outer: Rect) -> Rect {
    Rect::from_min_size(outer.right_bottom() - SIZE - Vec2::splat(MARGIN), SIZE)
}

/// Draws the minimap over the canvas and returns the canvas point a click or drag on it
/// asks to centre the view on.
pub(super) fn minimap_ui(ui: &Ui, outer: Rect, overview: &Overview, view: Rect) -> Option<Pos2> {
    let rect = minimap_rect(outer);
    // Canvas → minimap: the design's bounds fitted into the rectangle, aspect kept.
    let world = overview.bounds;
    let scale = ((rect.size() - Vec2::splat(8.0)) / world.size()).min_elem();
    if !scale.is_finite() || scale <= 0.0 {
        return None;
    }
    let to_map = |p: Pos2| rect.center() + (p - world.center()) * scale;
    let from_map = |p: Pos2| world.center() + (p - rect.center()) / scale;
    let dark = ui.visuals().dark_mode;
    let (fill, dot, frame) = if dark {
        (
            Color32::from_black_alpha(200),
            Color32::from_gray(150),
            Color32::from_gray(90),
        )
    } else {
        (
            Color32::from_white_alpha(220),
            Color32::from_gray(110),
            Color32::from_gray(170),
        )
    };
    // An area in front of the canvas, so a click on the map moves the view rather than
    // selecting or panning underneath; in the windows' order, so a window covers it.
    let area = egui::Area::new(ui.id().with("railyard_minimap"))
        .order(egui::Order::Middle)
        .fixed_pos(rect.min)
        .movable(false)
        // No fade: an animation would keep asking for frames, and the canvas idles at none.
        .fade_in(false)
        .show(ui.ctx(), |ui| {
            let (_, response) = ui.allocate_exact_size(rect.size(), Sense::click_and_drag());
            let painter = ui.painter().with_clip_rect(rect);
            let mut shapes = Vec::with_capacity(4);
            shapes.push(Shape::rect_filled(rect, 4.0, fill));
            // The dots as one mesh of quads: a shape each would cost more to tessellate
            // than the rest of the map.
            let mut dots = Mesh::default();
            for &p in &overview.dots {
                dots.add_colored_rect(Rect::from_center_size(to_map(p), vec2(2.0, 2.0)), dot);
            }
            shapes.push(Shape::mesh(dots));
            let seen = Rect::from_min_max(to_map(view.min), to_map(view.max)).intersect(rect);
            shapes.push(Shape::rect_stroke(
                seen,
                1.0,
                Stroke::new(1.5, ui.visuals().selection.stroke.color),
                StrokeKind::Inside,
            ));
            shapes.push(Shape::rect_stroke(
                rect,
                4.0,
                Stroke::new(1.0, frame),
                StrokeKind::Inside,
            ));
            painter.extend(shapes);
            response.on_hover_text("Overview: click or drag to move the view")
        });
    let response = area.inner;
    if response.clicked() || response.dragged() {
        response.interact_pointer_pos().map(|p| {
            let p = pos2(
                p.x.clamp(rect.min.x, rect.max.x),
                p.y.clamp(rect.min.y, rect.max.y),
            );
            from_map(p)
        })
    } else {
        None
    }
}
