//! The menu bar. Items come from the action table (label, shortcut, enabled), so menus and
//! keys never disagree; the menu only reports what was chosen.

use super::actions::{Action, ActionState};
use super::presets::Preset;
use crate::io::export::ExportFormat;
use crate::io::link_colors::ColorMode;
use egui::{Button, Ui};
use std::path::PathBuf;

#[derive(Debug, Clone, PartialEq)]
pub enum MenuEvent {
    Action(Action),
    OpenPreset(usize),
    OpenRecent(PathBuf),
    ClearRecent,
    Theme(Theme),
    LinkColors(ColorMode),
    About,
}

/// The window's colour theme, a persisted preference.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, serde::Serialize, serde::Deserialize)]
pub enum Theme {
    #[default]
    System,
    Dark,
    Light,
}

impl Theme {
    pub fn preference(self) -> egui::ThemePreference {
        match self {
            Theme::System => egui::ThemePreference::System,
            Theme::Dark => egui::ThemePreference::Dark,
            Theme::Light => egui::ThemePreference::Light,
        }
    }
}

/// What the menus show besides the actions: labels of the undo steps, toggles' states.
pub struct MenuContext<'a> {
    pub state: ActionState,
    pub undo_label: Option<&'static str>,
    pub redo_label: Option<&'static str>,
    pub show_grid: bool,
    pub snap: bool,
    pub heatmap: bool,
    pub link_colors: ColorMode,
    pub presentation: bool,
    pub theme: Theme,
    pub recent: &'a [PathBuf],
    pub presets: &'a [Preset],
}

fn item(ui: &mut Ui, action: Action, label: &str, m: &MenuContext, out: &mut Vec<MenuEvent>) {
    let mut button = Button::new(label);
    if let Some(shortcut) = action.shortcuts().first() {
        button = button.shortcut_text(super::shortcuts::shortcut_text(ui.ctx(), shortcut));
    }
    if ui.add_enabled(action.enabled(&m.state), button).clicked() {
        out.push(MenuEvent::Action(action));
    }
}

fn plain(ui: &mut Ui, action: Action, m: &MenuContext, out: &mut Vec<MenuEvent>) {
    item(ui, action, action.label(), m, out);
}

fn toggle(ui: &mut Ui, action: Action, on: bool, m: &MenuContext, out: &mut Vec<MenuEvent>) {
    let mut button = Button::selectable(on, action.label());
    if let Some(shortcut) = action.shortcuts().first() {
        button = button.shortcut_text(super::shortcuts::shortcut_text(ui.ctx(), shortcut));
    }
    if ui.add_enabled(action.enabled(&m.state), button).clicked() {
        out.push(MenuEvent::Action(action));
    }
}

pub fn menu_ui(ui: &mut Ui, m: &MenuContext) -> Vec<MenuEvent> {
    let mut out = Vec::new();
    egui::MenuBar::new().ui(ui, |ui| {
        ui.menu_button("File", |ui| {
            plain(ui, Action::New, m, &mut out);
            plain(ui, Action::Open, m, &mut out);
            plain(ui, Action::OpenPath, m, &mut out);
            ui.menu_button("Open preset", |ui| {
                if m.presets.is_empty() {
                    ui.weak("no presets in this build");
                }
                for (i, preset) in m.presets.iter().enumerate() {
                    if ui.button(preset.title).on_hover_text(preset.file).clicked() {
                        out.push(MenuEvent::OpenPreset(i));
                    }
                }
            });
            ui.menu_button("Recent files", |ui| {
                if m.recent.is_empty() {
                    ui.weak("none yet");
                }
                for path in m.recent {
                    let name = path.file_name().map_or_else(
                        || path.display().to_string(),
                        |n| n.to_string_lossy().into_owned(),
                    );
                    if ui
                        .button(name)
                        .on_hover_text(path.display().to_string())
                        .clicked()
                    {
                        out.push(MenuEvent::OpenRecent(path.clone()));
                    }
                }
                if !m.recent.is_empty() {
                    ui.separator();
                    if ui.button("Clear recent files").clicked() {
                        out.push(MenuEvent::ClearRecent);
                    }
                }
            });
            ui.separator();
            plain(ui, Action::Save, m, &mut out);
            plain(ui, Action::SaveAs, m, &mut out);
            plain(ui, Action::ExportPng, m, &mut out);
            plain(ui, Action::ExportViewPng, m, &mut out);
            plain(ui, Action::ExportSvg, m, &mut out);
            plain(ui, Action::ExportBom, m, &mut out);
            plain(ui, Action::ExportReport, m, &mut out);
            ui.menu_button("Export for other tools", |ui| {
                for format in ExportFormat::for_other_tools() {
                    plain(ui, Action::ExportFor(format), m, &mut out);
                }
            });
            plain(ui, Action::CheckCabling, m, &mut out);
            ui.separator();
            plain(ui, Action::CloseTab, m, &mut out);
            plain(ui, Action::Quit, m, &mut out);
        });
        ui.menu_button("Edit", |ui| {
            let undo = m
                .undo_label
                .map_or_else(|| "Undo".to_string(), |l| format!("Undo {l}"));
            item(ui, Action::Undo, &undo, m, &mut out);
            let redo = m
                .redo_label
                .map_or_else(|| "Redo".to_string(), |l| format!("Redo {l}"));
            item(ui, Action::Redo, &redo, m, &mut out);
            ui.separator();
            plain(ui, Action::Cut, m, &mut out);
            plain(ui, Action::Copy, m, &mut out);
            plain(ui, Action::Paste, m, &mut out);
            plain(ui, Action::Delete, m, &mut out);
            ui.separator();
            plain(ui, Action::SelectAll, m, &mut out);
        });
        ui.menu_button("View", |ui| {
            plain(ui, Action::ZoomToFit, m, &mut out);
            toggle(ui, Action::ToggleGrid, m.show_grid, m, &mut out);
            toggle(ui, Action::ToggleSnap, m.snap, m, &mut out);
            ui.menu_button("Link colours", |ui| {
                for (mode, label) in [
                    (ColorMode::Technology, "By technology"),
                    (ColorMode::Rail, "By rail"),
                    (ColorMode::Tier, "By tier"),
                ] {
                    let chosen = m.link_colors == mode && !m.heatmap;
                    if ui
                        .radio(chosen, label)
                        .on_hover_text("Shown while the heatmap is off")
                        .clicked()
                    {
                        out.push(MenuEvent::LinkColors(mode));
                    }
                }
            });
            toggle(ui, Action::ToggleHeatmap, m.heatmap, m, &mut out);
            toggle(ui, Action::Presentation, m.presentation, m, &mut out);
            ui.separator();
            plain(ui, Action::Compare, m, &mut out);
            plain(ui, Action::Plots, m, &mut out);
            plain(ui, Action::LogicalView, m, &mut out);
            ui.separator();
            ui.menu_button("Theme", |ui| {
                for (theme, label) in [
                    (Theme::System, "Follow system"),
                    (Theme::Dark, "Dark"),
                    (Theme::Light, "Light"),
                ] {
                    if ui.radio(m.theme == theme, label).clicked() {
                        out.push(MenuEvent::Theme(theme));
                    }
                }
            });
        });
        ui.menu_button("Design", |ui| {
            plain(ui, Action::Generate, m, &mut out);
            plain(ui, Action::ArrangeByTier, m, &mut out);
            plain(ui, Action::Calibrate, m, &mut out);
        });
        ui.menu_button("Help", |ui| {
            plain(ui, Action::Shortcuts, m, &mut out);
            if ui.button("About railyard").clicked() {
                out.push(MenuEvent::About);
            }
        });
    });
    out
}
