//! Escape closes the frontmost dialog or window, one per press, as desktop apps do. The key
//! is consumed, so the same press neither leaves presentation mode nor reaches the canvas.

use super::RailyardApp;

impl RailyardApp {
    /// Closes the most modal open dialog when Escape was pressed; true if one was closed.
    pub(super) fn close_dialog_on_escape(&mut self, ctx: &egui::Context) -> bool {
        let pressed = ctx.input(|i| i.key_pressed(egui::Key::Escape) && !i.pointer.any_down());
        if !pressed {
            return false;
        }
        // From the most modal (answering it blocks everything) to plain tool windows.
        let closed = self.close_prompt.take().is_some()
            || self.path_prompt.take().is_some()
            || std::mem::take(&mut self.generate.open)
            || std::mem::take(&mut self.about)
            || std::mem::take(&mut self.shortcuts)
            || std::mem::take(&mut self.calibrate.open)
            || std::mem::take(&mut self.cabling.open)
            || std::mem::take(&mut self.plots.open)
            || std::mem::take(&mut self.logical_view.open)
            || std::mem::take(&mut self.compare.open);
        if closed {
            ctx.input_mut(|i| i.consume_key(egui::Modifiers::NONE, egui::Key::Escape));
        }
        closed
    }
}
