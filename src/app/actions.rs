//! The one table of user actions: label, keyboard shortcuts and when each is enabled. The
//! menu bar and the keyboard handler both read it, so a shortcut shown in a menu is the one
//! that works, and a disabled menu item is a disabled shortcut.

use crate::io::export::ExportFormat;
use egui::{Key, KeyboardShortcut, Modifiers};

#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Action {
    New,
    Open,
    OpenPath,
    Save,
    SaveAs,
    CloseTab,
    Quit,
    Undo,
    Redo,
    Cut,
    Copy,
    Paste,
    Delete,
    SelectAll,
    ZoomToFit,
    NudgeLeft,
    NudgeRight,
    NudgeUp,
    NudgeDown,
    ToggleGrid,
    ToggleSnap,
    ToggleHeatmap,
    ArrangeByTier,
    Generate,
    Presentation,
    Compare,
    Plots,
    /// View > Logical view: the ring, trees and in-switch groups of the collective.
    LogicalView,
    Calibrate,
    CheckCabling,
    /// Help > Keyboard shortcuts.
    Shortcuts,
    ExportPng,
    ExportViewPng,
    ExportSvg,
    ExportBom,
    ExportReport,
    /// One of the exports for other tools (`ExportFormat::for_other_tools`): cable plan,
    /// NetBox, draw.io, DOT, containerlab, and the simulators SimAI, htsim and ASTRA-sim.
    ExportFor(ExportFormat),
}

/// What the actions' `enabled` rules look at; built once per frame from the active document.
#[derive(Debug, Clone, Copy, Default)]
pub struct ActionState {
    pub has_document: bool,
    pub can_undo: bool,
    pub can_redo: bool,
    pub has_selection: bool,
    pub has_devices_selected: bool,
    pub has_clipboard: bool,
    pub design_is_empty: bool,
}

const fn ctrl(key: Key) -> KeyboardShortcut {
    KeyboardShortcut::new(Modifiers::COMMAND, key)
}

const fn ctrl_shift(key: Key) -> KeyboardShortcut {
    KeyboardShortcut::new(
        Modifiers {
            alt: false,
            ctrl: false,
            shift: true,
            mac_cmd: false,
            command: true,
        },
        key,
    )
}

const fn plain(key: Key) -> KeyboardShortcut {
    KeyboardShortcut::new(Modifiers::NONE, key)
}

impl Action {
    /// The actions without a format.
    const FIXED: [Action; 36] = [
        Action::New,
        Action::Open,
        Action::OpenPath,
        Action::Save,
        Action::SaveAs,
        Action::CloseTab,
        Action::Quit,
        Action::Undo,
        Action::Redo,
        Action::Cut,
        Action::Copy,
        Action::Paste,
        Action::Delete,
        Action::SelectAll,
        Action::ZoomToFit,
        Action::NudgeLeft,
        Action::NudgeRight,
        Action::NudgeUp,
        Action::NudgeDown,
        Action::ToggleGrid,
        Action::ToggleSnap,
        Action::ToggleHeatmap,
        Action::ArrangeByTier,
        Action::Generate,
        Action::Presentation,
        Action::Compare,
        Action::Plots,
        Action::LogicalView,
        Action::ExportPng,
        Action::ExportViewPng,
        Action::ExportSvg,
        Action::ExportBom,
        Action::ExportReport,
        Action::Calibrate,
        Action::CheckCabling,
        Action::Shortcuts,
    ];

    /// Every action: those above and an export for each other tool.
    pub fn all() -> impl Iterator<Item = Action> {
        Self::FIXED
            .into_iter()
            .chain(ExportFormat::for_other_tools().map(Action::ExportFor))
    }

    pub fn label(self) -> &'static str {
        match self {
            Action::New => "New",
            Action::Open => "Open…",
            Action::OpenPath => "Open path…",
            Action::Save => "Save",
            Action::SaveAs => "Save as…",
            Action::CloseTab => "Close tab",
            Action::Quit => "Quit",
            Action::Undo => "Undo",
            Action::Redo => "Redo",
            Action::Cut => "Cut",
            Action::Copy => "Copy",
            Action::Paste => "Paste",
            Action::Delete => "Delete",
            Action::SelectAll => "Select all",
            Action::ZoomToFit => "Zoom to fit",
            Action::NudgeLeft => "Nudge left",
            Action::NudgeRight => "Nudge right",
            Action::NudgeUp => "Nudge up",
            Action::NudgeDown => "Nudge down",
            Action::ToggleGrid => "Grid",
            Action::ToggleSnap => "Snap to grid",
            Action::ToggleHeatmap => "Link heatmap",
            Action::ArrangeByTier => "Arrange by tier",
            Action::Generate => "Generate…",
            Action::Presentation => "Presentation mode",
            Action::Compare => "Compare designs…",
            Action::Plots => "Plots…",
            Action::LogicalView => "Logical view…",
            Action::Calibrate => "Calibrate…",
            Action::CheckCabling => "Check cabling…",
            Action::Shortcuts => "Keyboard shortcuts",
            Action::ExportPng => "Export PNG…",
            Action::ExportViewPng => "Export view as PNG…",
            Action::ExportSvg => "Export SVG…",
            Action::ExportBom => "Export BOM CSV…",
            Action::ExportReport => "Export report (Markdown)…",
            Action::ExportFor(format) => match format {
                ExportFormat::Cables => "Export cable plan CSV…",
                ExportFormat::Netbox => "Export NetBox import CSVs…",
                ExportFormat::Drawio => "Export draw.io…",
                ExportFormat::Dot => "Export Graphviz DOT…",
                ExportFormat::Containerlab => "Export containerlab topology…",
                ExportFormat::Simai => "Export SimAI topology…",
                ExportFormat::Htsim => "Export htsim fat tree…",
                ExportFormat::AstraSim => "Export ASTRA-sim network…",
                ExportFormat::AstraSimSystem => "Export ASTRA-sim system layer…",
                // Not offered as exports for other tools: they have their own actions.
                ExportFormat::Svg => "Export SVG…",
                ExportFormat::Png => "Export PNG…",
            },
        }
    }

    /// Shortcuts, the first being the one menus show.
    pub fn shortcuts(self) -> &'static [KeyboardShortcut] {
        const NEW: [KeyboardShortcut; 1] = [ctrl(Key::N)];
        const OPEN: [KeyboardShortcut; 1] = [ctrl(Key::O)];
        const SAVE: [KeyboardShortcut; 1] = [ctrl(Key::S)];
        const SAVE_AS: [KeyboardShortcut; 1] = [ctrl_shift(Key::S)];
        const CLOSE: [KeyboardShortcut; 1] = [ctrl(Key::W)];
        const QUIT: [KeyboardShortcut; 1] = [ctrl(Key::Q)];
        const UNDO: [KeyboardShortcut; 1] = [ctrl(Key::Z)];
        const REDO: [KeyboardShortcut; 2] = [ctrl_shift(Key::Z), ctrl(Key::Y)];
        const CUT: [KeyboardShortcut; 1] = [ctrl(Key::X)];
        const COPY: [KeyboardShortcut; 1] = [ctrl(Key::C)];
        const PASTE: [KeyboardShortcut; 1] = [ctrl(Key::V)];
        const DELETE: [KeyboardShortcut; 2] = [plain(Key::Delete), plain(Key::Backspace)];
        const SELECT_ALL: [KeyboardShortcut; 1] = [ctrl(Key::A)];
        const FIT: [KeyboardShortcut; 1] = [plain(Key::F)];
        const LEFT: [KeyboardShortcut; 1] = [plain(Key::ArrowLeft)];
        const RIGHT: [KeyboardShortcut; 1] = [plain(Key::ArrowRight)];
        const UP: [KeyboardShortcut; 1] = [plain(Key::ArrowUp)];
        const DOWN: [KeyboardShortcut; 1] = [plain(Key::ArrowDown)];
        const HEAT: [KeyboardShortcut; 1] = [plain(Key::H)];
        const GENERATE: [KeyboardShortcut; 1] = [ctrl(Key::G)];
        const PRESENT: [KeyboardShortcut; 1] = [plain(Key::F11)];
        // `?` is Shift+/ on most layouts; shortcuts match Shift they do not name.
        const SHORTCUTS: [KeyboardShortcut; 1] = [plain(Key::Questionmark)];
        match self {
            Action::New => &NEW,
            Action::Open => &OPEN,
            Action::Save => &SAVE,
            Action::SaveAs => &SAVE_AS,
            Action::CloseTab => &CLOSE,
            Action::Quit => &QUIT,
            Action::Undo => &UNDO,
            Action::Redo => &REDO,
            Action::Cut => &CUT,
            Action::Copy => &COPY,
            Action::Paste => &PASTE,
            Action::Delete => &DELETE,
            Action::SelectAll => &SELECT_ALL,
            Action::ZoomToFit => &FIT,
            Action::NudgeLeft => &LEFT,
            Action::NudgeRight => &RIGHT,
            Action::NudgeUp => &UP,
            Action::NudgeDown => &DOWN,
            Action::ToggleHeatmap => &HEAT,
            Action::Generate => &GENERATE,
            Action::Presentation => &PRESENT,
            Action::Shortcuts => &SHORTCUTS,
            Action::OpenPath
            | Action::ToggleGrid
            | Action::ToggleSnap
            | Action::ArrangeByTier
            | Action::Compare
            | Action::Plots
            | Action::LogicalView
            | Action::ExportPng
            | Action::ExportViewPng
            | Action::ExportSvg
            | Action::ExportBom
            | Action::ExportReport
            | Action::ExportFor(_)
            | Action::Calibrate
            | Action::CheckCabling => &[],
        }
    }

    pub fn enabled(self, s: &ActionState) -> bool {
        match self {
            Action::New
            | Action::Open
            | Action::OpenPath
            | Action::Quit
            | Action::Generate
            | Action::Presentation
            | Action::Compare
            | Action::Plots
            | Action::LogicalView
            | Action::Shortcuts => true,
            Action::Save
            | Action::SaveAs
            | Action::CloseTab
            | Action::ExportPng
            | Action::ExportViewPng
            | Action::ExportSvg
            | Action::ExportBom
            | Action::ExportReport
            | Action::ExportFor(_)
            | Action::Calibrate
            | Action::CheckCabling => s.has_document,
            Action::Undo => s.can_undo,
            Action::Redo => s.can_redo,
            Action::Cut | Action::Copy => s.has_devices_selected,
            Action::Delete => s.has_selection,
            Action::Paste => s.has_clipboard && s.has_document,
            Action::NudgeLeft | Action::NudgeRight | Action::NudgeUp | Action::NudgeDown => {
                s.has_devices_selected
            }
            Action::SelectAll | Action::ZoomToFit | Action::ArrangeByTier => {
                s.has_document && !s.design_is_empty
            }
            Action::ToggleGrid | Action::ToggleSnap | Action::ToggleHeatmap => s.has_document,
        }
    }

    /// Actions that act on the canvas and whose keys a focused text field needs for itself
    /// (arrows, Delete, Ctrl+Z, Ctrl+A, letters).
    pub fn yields_to_text_fields(self) -> bool {
        !matches!(
            self,
            Action::New
                | Action::Open
                | Action::Save
                | Action::SaveAs
                | Action::CloseTab
                | Action::Quit
                | Action::Generate
                | Action::Presentation
        )
    }

    /// Canvas units moved by one arrow-key press (Shift: a larger step).
    pub fn nudge_delta(self, large: bool) -> Option<(f32, f32)> {
        let step = if large { 50.0 } else { 10.0 };
        match self {
            Action::NudgeLeft => Some((-step, 0.0)),
            Action::NudgeRight => Some((step, 0.0)),
            Action::NudgeUp => Some((0.0, -step)),
            Action::NudgeDown => Some((0.0, step)),
            _ => None,
        }
    }
}

/// A key press turned into an action, with whether Shift was held (a larger nudge).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Triggered {
    pub action: Action,
    pub shift: bool,
}

/// Consumes this frame's shortcut key presses and returns the enabled actions they trigger,
/// in the order pressed within each action. Shortcuts with more modifiers are matched first:
/// egui ignores extra Shift when matching, so Ctrl+Shift+Z must be taken before Ctrl+Z.
pub fn triggered_actions(ctx: &egui::Context, state: &ActionState) -> Vec<Triggered> {
    let text_focused = ctx.text_edit_focused();
    let mut table: Vec<(Action, KeyboardShortcut)> = Action::all()
        .flat_map(|a| a.shortcuts().iter().map(move |&s| (a, s)))
        .collect();
    table.sort_by_key(|(_, s)| std::cmp::Reverse(modifier_count(s.modifiers)));

    let mut out = Vec::new();
    ctx.input_mut(|input| {
        // egui-winit turns Ctrl+C / Ctrl+X / Ctrl+V into clipboard events, not key presses.
        if !text_focused {
            for event in &input.events {
                let action = match event {
                    egui::Event::Copy => Some(Action::Copy),
                    egui::Event::Cut => Some(Action::Cut),
                    egui::Event::Paste(_) => Some(Action::Paste),
                    _ => None,
                };
                if let Some(action) = action
                    && action.enabled(state)
                {
                    out.push(Triggered {
                        action,
                        shift: false,
                    });
                }
            }
        }
        let shift = input.modifiers.shift;
        for (action, shortcut) in table {
            if text_focused && action.yields_to_text_fields() {
                continue;
            }
            let presses = input.count_and_consume_key(shortcut.modifiers, shortcut.logical_key);
            if presses > 0 && action.enabled(state) {
                // Nudges repeat with the key; other actions run once per frame.
                let times = if action.nudge_delta(false).is_some() {
                    presses
                } else {
                    1
                };
                for _ in 0..times {
                    out.push(Triggered { action, shift });
                }
            }
        }
    });
    out
}

fn modifier_count(m: Modifiers) -> u8 {
    u8::from(m.alt) + u8::from(m.shift) + u8::from(m.ctrl || m.command || m.mac_cmd)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Runs one egui pass, discarding the font texture upload it produces.
    fn run_frame(ctx: &egui::Context, input: egui::RawInput, ui_fn: impl FnMut(&mut egui::Ui)) {
        let mut output = ctx.run_ui(input, ui_fn);
        output.textures_delta.clear();
    }

    fn press(
        ctx: &egui::Context,
        modifiers: Modifiers,
        key: Key,
        state: &ActionState,
    ) -> Vec<Action> {
        let mut input = egui::RawInput::default();
        input.events.push(egui::Event::Key {
            key,
            physical_key: None,
            pressed: true,
            repeat: false,
            modifiers,
        });
        let mut found = Vec::new();
        run_frame(ctx, input, |ui| {
            found = triggered_actions(ui.ctx(), state)
                .into_iter()
                .map(|t| t.action)
                .collect();
        });
        found
    }

    #[test]
    fn ctrl_shift_z_is_redo_not_undo() {
        let ctx = egui::Context::default();
        let state = ActionState {
            has_document: true,
            can_undo: true,
            can_redo: true,
            ..ActionState::default()
        };
        let shift_cmd = Modifiers::COMMAND | Modifiers::SHIFT;
        assert_eq!(press(&ctx, shift_cmd, Key::Z, &state), vec![Action::Redo]);
        assert_eq!(
            press(&ctx, Modifiers::COMMAND, Key::Z, &state),
            vec![Action::Undo]
        );
        assert_eq!(
            press(&ctx, Modifiers::COMMAND, Key::Y, &state),
            vec![Action::Redo]
        );
        assert_eq!(press(&ctx, shift_cmd, Key::S, &state), vec![Action::SaveAs]);
        assert_eq!(
            press(&ctx, Modifiers::COMMAND, Key::S, &state),
            vec![Action::Save]
        );
    }

    #[test]
    fn disabled_actions_do_not_fire() {
        let ctx = egui::Context::default();
        let nothing = ActionState {
            has_document: true,
            ..ActionState::default()
        };
        assert!(press(&ctx, Modifiers::COMMAND, Key::Z, &nothing).is_empty());
        assert!(press(&ctx, Modifiers::NONE, Key::Delete, &nothing).is_empty());
        assert!(press(&ctx, Modifiers::NONE, Key::ArrowLeft, &nothing).is_empty());
        let selected = ActionState {
            has_document: true,
            has_selection: true,
            has_devices_selected: true,
            ..ActionState::default()
        };
        assert_eq!(
            press(&ctx, Modifiers::NONE, Key::ArrowLeft, &selected),
            vec![Action::NudgeLeft]
        );
        assert_eq!(
            press(&ctx, Modifiers::NONE, Key::Delete, &selected),
            vec![Action::Delete]
        );
    }

    #[test]
    fn every_shortcut_belongs_to_one_action() {
        let mut seen = std::collections::HashSet::new();
        for action in Action::all() {
            for s in action.shortcuts() {
                assert!(
                    seen.insert((s.modifiers, s.logical_key)),
                    "{action:?} reuses a shortcut"
                );
            }
        }
    }
}
