//! Help > Keyboard shortcuts (also on `?`): the canvas's pointer gestures and every shortcut
//! of the action table, read from the table itself so the list never disagrees with the keys.

use super::actions::Action;
use egui::{RichText, Ui};

/// The canvas's and palette's pointer gestures (see `canvas.rs`): what to do, what it does.
pub const GESTURES: [(&str, &str); 18] = [
    ("Drag a part from the palette", "add it where it is dropped"),
    ("Double-click a part", "add it at the middle of the view"),
    (
        "Click a device or link",
        "select it (a click on empty canvas clears)",
    ),
    (
        "Rest the pointer on a link",
        "its card: technology, rate × lanes, both ends with ports, its load",
    ),
    ("Shift+click", "add to or take from the selection"),
    ("Drag a device", "move the selection"),
    ("Drag from a port handle to a device", "draw a link"),
    ("Drag on empty canvas", "pan the view"),
    (
        "Shift+drag on empty canvas",
        "box select: add the devices inside to the selection",
    ),
    (
        "Right-click the selection",
        "what-ifs and wiring: Connect to…, NIC i → rail-i leaf, full mesh",
    ),
    (
        "Right-click a device outside the selection",
        "select it; its menu connects the devices selected before to it",
    ),
    (
        "Middle or right drag, or Space+drag anywhere",
        "pan the view too",
    ),
    ("Mouse wheel, pinch or Ctrl+wheel", "zoom"),
    (
        "Right-click a device in a rack, pod or scalable unit",
        "Fold it: draw the group as one block, its links bundled with counts",
    ),
    (
        "Double-click a folded group",
        "unfold it; far out, zoom in until its devices show",
    ),
    (
        "Click the legend",
        "fold it to its heading (so it covers nothing), or open it again",
    ),
    ("Escape during a drag", "cancel it"),
    (
        "Escape",
        "close the front dialog, then leave presentation mode",
    ),
];

/// A shortcut as this platform writes it, with its key as printed on the keyboard: egui
/// names the question mark key "Questionmark".
pub fn shortcut_text(ctx: &egui::Context, shortcut: &egui::KeyboardShortcut) -> String {
    let text = ctx.format_shortcut(shortcut);
    match shortcut.logical_key {
        egui::Key::Questionmark => text.replace(egui::Key::Questionmark.name(), "?"),
        _ => text,
    }
}

/// Every action that has a shortcut, with all its shortcuts as this platform writes them.
pub fn shortcut_rows(ctx: &egui::Context) -> Vec<(&'static str, String)> {
    Action::all()
        .filter(|a| !a.shortcuts().is_empty())
        .map(|a| {
            let keys: Vec<String> = a
                .shortcuts()
                .iter()
                .map(|s| shortcut_text(ctx, s))
                .collect();
            (a.label().trim_end_matches('…'), keys.join(" or "))
        })
        .collect()
}

/// The window; `open` is cleared by its close button.
pub fn shortcuts_window(ctx: &egui::Context, open: &mut bool) {
    egui::Window::new("Keyboard shortcuts")
        .open(open)
        .collapsible(false)
        .default_width(460.0)
        .vscroll(true)
        .show(ctx, contents);
}

fn contents(ui: &mut Ui) {
    ui.label(RichText::new("Canvas").strong());
    two_columns(ui, "shortcuts-gestures", GESTURES);
    ui.separator();
    ui.label(RichText::new("Keys").strong());
    let mut keys = shortcut_rows(ui.ctx());
    keys.push(("Nudge further", "Shift+arrow".to_string()));
    two_columns(ui, "shortcuts-keys", keys);
}

/// A striped two-column table of what to do and what it does.
fn two_columns<A: Into<egui::WidgetText>, B: Into<egui::WidgetText>>(
    ui: &mut Ui,
    id: &str,
    rows: impl IntoIterator<Item = (A, B)>,
) {
    egui::Grid::new(id)
        .num_columns(2)
        .striped(true)
        .show(ui, |ui| {
            for (first, second) in rows {
                ui.label(first);
                ui.label(second);
                ui.end_row();
            }
        });
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The list names keys as printed on them: "?" opens it, not "Questionmark".
    #[test]
    fn the_question_mark_reads_as_printed() {
        let rows = shortcut_rows(&egui::Context::default());
        let (_, keys) = rows
            .iter()
            .find(|(label, _)| *label == "Keyboard shortcuts")
            .expect("the shortcuts list has a shortcut");
        assert_eq!(keys, "?");
        assert!(rows.iter().all(|(_, k)| !k.contains("Questionmark")));
    }
}
