//! What the last frame of a kittest harness painted: its texts, with where they lie.

use egui_kittest::Harness;

/// Each painted text with its rectangle on screen.
pub fn painted_text_rects<S>(harness: &Harness<'_, S>) -> Vec<(String, egui::Rect)> {
    harness
        .output()
        .shapes
        .iter()
        .filter_map(|c| match &c.shape {
            egui::Shape::Text(t) => Some((
                t.galley.text().to_string(),
                egui::Rect::from_min_size(t.pos, t.galley.size()),
            )),
            _ => None,
        })
        .collect()
}

/// The painted texts, in painting order.
pub fn painted_texts<S>(harness: &Harness<'_, S>) -> Vec<String> {
    painted_text_rects(harness)
        .into_iter()
        .map(|(t, _)| t)
        .collect()
}
