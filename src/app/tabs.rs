//! Tabs: one open design each with its view state, opening and closing them, the tab bar,
//! and the question asked before unsaved changes are closed.

use std::path::Path;

use super::actions::Action;
use super::canvas::{self, CanvasState};
use super::document::Document;
use super::inspector::InspectorState;
use super::layout_search::LayoutSearch;
use super::sidebar::AnalysisWorker;
use super::{AppEvent, RailyardApp};

/// One open design and the view state that goes with it.
pub(super) struct Tab {
    /// Stable for the tab's life (indices shift when a tab closes): keys cached results.
    pub(super) id: u64,
    pub(super) doc: Document,
    pub(super) canvas: CanvasState,
    pub(super) inspector: InspectorState,
    pub(super) worker: Option<AnalysisWorker>,
    pub(super) layout_search: LayoutSearch,
}

/// Unsaved changes to confirm before closing a tab or the window.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum ClosePrompt {
    Tab(usize),
    Window,
}

impl RailyardApp {
    pub(super) fn new_tab(&mut self) {
        let doc = Document::untitled(self.next_untitled);
        self.next_untitled += 1;
        self.push_tab(doc);
    }

    pub(super) fn push_tab(&mut self, doc: Document) {
        let mut canvas = CanvasState {
            show_grid: self.prefs.show_grid,
            snap: self.prefs.snap,
            link_colors: self.prefs.link_colors,
            legend_folded: self.prefs.legend_folded,
            ..CanvasState::default()
        };
        canvas::zoom_to_fit(doc.design(), &mut canvas);
        self.next_tab_id += 1;
        let tab = Tab {
            id: self.next_tab_id,
            doc,
            canvas,
            inspector: InspectorState::default(),
            worker: None,
            layout_search: LayoutSearch::default(),
        };
        // An untouched empty tab gives way to the design being opened.
        if let Some(current) = self.tabs.get(self.active)
            && current.doc.is_pristine()
            && !tab.doc.is_pristine()
        {
            self.tabs[self.active] = tab;
        } else {
            self.tabs.push(tab);
            self.active = self.tabs.len() - 1;
        }
    }

    pub(super) fn request_close_tab(&mut self, index: usize) {
        if self.tabs.get(index).is_some_and(|t| t.doc.is_dirty()) {
            self.active = index;
            self.close_prompt = Some(ClosePrompt::Tab(index));
        } else {
            self.close_tab(index);
        }
    }

    pub(super) fn close_tab(&mut self, index: usize) {
        if index >= self.tabs.len() {
            return;
        }
        self.tabs.remove(index);
        if self.tabs.is_empty() {
            self.new_tab();
        }
        if self.active >= self.tabs.len() || self.active > index {
            self.active = self.active.saturating_sub(1).min(self.tabs.len() - 1);
        }
    }

    pub(super) fn tab_bar(&mut self, ui: &mut egui::Ui, events: &mut Vec<AppEvent>) {
        let mut shown = self.tab_in_view;
        egui::Panel::top("tab-bar").show(ui, |ui| {
            egui::ScrollArea::horizontal().show(ui, |ui| {
                ui.horizontal(|ui| {
                    for (i, tab) in self.tabs.iter().enumerate() {
                        let dirty = if tab.doc.is_dirty() { " •" } else { "" };
                        let title = tab.doc.title();
                        let label = format!("{}{dirty}", short_title(&title));
                        let r = ui.selectable_label(i == self.active, label);
                        if r.clicked() {
                            events.push(AppEvent::SwitchTab(i));
                        }
                        if i == self.active && shown != Some(tab.id) {
                            r.scroll_to_me(Some(egui::Align::Center));
                            shown = Some(tab.id);
                        }
                        // Built only while hovered: the whole name, and the file.
                        r.on_hover_ui(|ui| {
                            ui.label(&title);
                            if let Some(path) = tab.doc.path() {
                                ui.label(path.display().to_string());
                            }
                        });
                        if ui
                            .small_button("×")
                            .on_hover_text("Close this design")
                            .clicked()
                        {
                            events.push(AppEvent::CloseTab(i));
                        }
                        ui.separator();
                    }
                    if ui.small_button("+").on_hover_text("New design").clicked() {
                        events.push(AppEvent::Action {
                            action: Action::New,
                            shift: false,
                        });
                    }
                });
            });
        });
        self.tab_in_view = shown;
    }

    pub(super) fn close_prompt_window(&mut self, ctx: &egui::Context, events: &mut Vec<AppEvent>) {
        let Some(prompt) = self.close_prompt else {
            return;
        };
        let dirty: Vec<usize> = match prompt {
            ClosePrompt::Tab(i) => vec![i],
            ClosePrompt::Window => (0..self.tabs.len())
                .filter(|&i| self.tabs[i].doc.is_dirty())
                .collect(),
        };
        let mut choice = None;
        let modal = egui::Modal::new(egui::Id::new("close-prompt")).show(ctx, |ui| {
            ui.heading("Unsaved changes");
            for &i in &dirty {
                if let Some(tab) = self.tabs.get(i) {
                    ui.label(format!("• {}", tab.doc.title()));
                }
            }
            ui.label("Save them before closing?");
            ui.horizontal(|ui| {
                if ui.button("Save").clicked() {
                    choice = Some(true);
                }
                if ui.button("Discard").clicked() {
                    choice = Some(false);
                }
                if ui.button("Cancel").clicked() {
                    ui.close();
                }
            });
        });
        if modal.should_close() && choice.is_none() {
            self.close_prompt = None;
            return;
        }
        let Some(save) = choice else {
            return;
        };
        self.close_prompt = None;
        if save {
            for &i in &dirty {
                self.active = i;
                match self.tabs[i].doc.path().map(Path::to_path_buf) {
                    Some(path) => self.save_active_to(&path),
                    None => {
                        // Needs a name first; closing waits for the user to save and retry.
                        events.push(AppEvent::Action {
                            action: Action::SaveAs,
                            shift: false,
                        });
                        return;
                    }
                }
                if self.tabs[i].doc.is_dirty() {
                    return; // The save failed; the banner says why.
                }
            }
        }
        match prompt {
            ClosePrompt::Tab(i) => events.push(AppEvent::ForceCloseTab(i)),
            ClosePrompt::Window => {
                self.allow_close = true;
                ctx.send_viewport_cmd(egui::ViewportCommand::Close);
            }
        }
    }
}

/// Characters of a design's name a tab shows; the whole name is on hover.
const TAB_TITLE_CHARS: usize = 32;

/// A long design name cut to fit a tab or a column: "2 × workstation with 4 × RTX…".
pub(super) fn short_title(title: &str) -> String {
    if title.chars().count() <= TAB_TITLE_CHARS {
        return title.to_string();
    }
    let kept: String = title.chars().take(TAB_TITLE_CHARS - 1).collect();
    format!("{}…", kept.trim_end())
}

#[cfg(test)]
mod tests {
    use super::short_title;

    #[test]
    fn long_names_are_cut_to_fit_a_tab() {
        assert_eq!(short_title("saved.ron"), "saved.ron");
        assert_eq!(
            short_title("2 × workstation with 4 × RTX 4090, 25 GbE back to back"),
            "2 × workstation with 4 × RTX 40…"
        );
        assert_eq!(short_title(&"x".repeat(32)), "x".repeat(32));
    }
}
