//! Runs an action of the action table (menus, shortcuts, the palette): the one place a
//! menu choice or key becomes commands, dialogs and tab changes.

use std::path::Path;
use std::sync::Arc;

use super::RailyardApp;
use super::actions::Action;
use super::document::{Clip, copy_selection, delete_command, nudge_command, paste_command};
use super::exports::{DEFAULT_PNG_SCALE, ExportKind, proposed_detail};
use super::path_prompt::PathPurpose;
use super::{canvas, presentation};
use crate::model::Pos;

/// How far a paste moves the copy off the original, in canvas units.
const PASTE_STEP: f32 = 40.0;

impl RailyardApp {
    /// Where a paste goes: centred on the pointer when it is over the canvas, else 40 units
    /// below and right of the copied devices, so the copy never hides the original; so too
    /// when the pointer still rests on what was copied (click, Ctrl+C, Ctrl+V).
    pub(super) fn paste_offset(&self, clip: &Clip, ctx: &egui::Context) -> (f32, f32) {
        let canvas = &self.tabs[self.active].canvas;
        let pointer = ctx
            .input(|i| i.pointer.latest_pos())
            .and_then(|p| canvas.to_canvas(p))
            .filter(|p| canvas.scene_rect.contains(egui::pos2(p.x, p.y)));
        let (Some(at), Some(first)) = (pointer, clip.devices.first()) else {
            return (PASTE_STEP, PASTE_STEP);
        };
        let (mut lo, mut hi) = (first.pos, first.pos);
        for d in &clip.devices {
            lo = Pos::new(lo.x.min(d.pos.x), lo.y.min(d.pos.y));
            hi = Pos::new(hi.x.max(d.pos.x), hi.y.max(d.pos.y));
        }
        let (dx, dy) = (at.x - (lo.x + hi.x) / 2.0, at.y - (lo.y + hi.y) / 2.0);
        if dx.abs() < PASTE_STEP && dy.abs() < PASTE_STEP {
            (PASTE_STEP, PASTE_STEP)
        } else {
            (dx, dy)
        }
    }

    pub(super) fn run_action(&mut self, action: Action, shift: bool, ctx: &egui::Context) {
        let catalog = Arc::clone(&self.catalog);
        match action {
            Action::New => {
                self.new_tab();
                self.status = "New design".to_string();
            }
            Action::Open => self.ask_path(PathPurpose::Open, ctx),
            Action::OpenPath => self.prompt_path(PathPurpose::Open),
            Action::Save => {
                if let Some(path) = self.document().path().map(Path::to_path_buf) {
                    self.save_active_to(&path);
                } else {
                    self.run_action(Action::SaveAs, false, ctx);
                }
            }
            Action::SaveAs => self.ask_path(PathPurpose::SaveAs, ctx),
            Action::CloseTab => self.request_close_tab(self.active),
            Action::Quit => ctx.send_viewport_cmd(egui::ViewportCommand::Close),
            Action::Undo => {
                let label = self.tabs[self.active].doc.undo();
                self.prune_selection();
                self.status =
                    label.map_or_else(|| "Nothing to undo".into(), |l| format!("Undid {l}"));
            }
            Action::Redo => {
                let label = self.tabs[self.active].doc.redo();
                self.prune_selection();
                self.status =
                    label.map_or_else(|| "Nothing to redo".into(), |l| format!("Redid {l}"));
            }
            Action::Copy | Action::Cut => {
                let tab = &self.tabs[self.active];
                let clip = copy_selection(tab.doc.design(), &tab.canvas.selection.devices);
                if let Some(text) = clip.to_text() {
                    ctx.copy_text(text);
                }
                self.status = format!(
                    "Copied {} devices, {} links",
                    clip.devices.len(),
                    clip.links.len()
                );
                self.clipboard = Some(clip);
                if action == Action::Cut {
                    self.run_action(Action::Delete, false, ctx);
                }
            }
            Action::Paste => {
                let Some(clip) = self.clipboard.clone() else {
                    return;
                };
                let offset = self.paste_offset(&clip, ctx);
                let (command, devices, links) =
                    paste_command(self.document().design(), &clip, offset);
                if self.apply(command) {
                    let selection = &mut self.tabs[self.active].canvas.selection;
                    selection.devices = devices.into_iter().collect();
                    selection.links = links.into_iter().collect();
                    self.status = format!(
                        "Pasted {}",
                        crate::model::units::count_of(clip.devices.len(), "device", "devices")
                    );
                    // The next paste lands beside this one rather than on top of it.
                    if let Some(c) = &mut self.clipboard {
                        for d in &mut c.devices {
                            d.pos = Pos::new(d.pos.x + 40.0, d.pos.y + 40.0);
                        }
                    }
                }
            }
            Action::Delete => {
                let tab = &self.tabs[self.active];
                let sel = &tab.canvas.selection;
                if let Some(command) = delete_command(tab.doc.design(), &sel.devices, &sel.links) {
                    self.apply(command);
                }
            }
            Action::SelectAll => {
                let tab = &mut self.tabs[self.active];
                let design = tab.doc.design();
                tab.canvas.selection.devices = design.devices.iter().map(|d| d.id).collect();
                tab.canvas.selection.links = design.links.iter().map(|l| l.id).collect();
            }
            Action::ZoomToFit => {
                let tab = &mut self.tabs[self.active];
                canvas::zoom_to_fit(tab.doc.design(), &mut tab.canvas);
            }
            Action::NudgeLeft | Action::NudgeRight | Action::NudgeUp | Action::NudgeDown => {
                let Some(delta) = action.nudge_delta(shift) else {
                    return;
                };
                let tab = &self.tabs[self.active];
                if let Some(command) =
                    nudge_command(tab.doc.design(), &tab.canvas.selection.devices, delta)
                {
                    self.apply(command);
                }
            }
            Action::ToggleGrid => {
                self.prefs.show_grid = !self.prefs.show_grid;
                for tab in &mut self.tabs {
                    tab.canvas.show_grid = self.prefs.show_grid;
                }
            }
            Action::ToggleSnap => {
                self.prefs.snap = !self.prefs.snap;
                for tab in &mut self.tabs {
                    tab.canvas.snap = self.prefs.snap;
                }
            }
            Action::ToggleHeatmap => {
                self.prefs.heatmap = !self.prefs.heatmap;
                if self.prefs.heatmap && !self.prefs.collective.enabled {
                    // The heat comes from the collective; switch it on too.
                    self.prefs.collective.enabled = true;
                }
            }
            Action::ArrangeByTier => {
                let command = canvas::arrange_by_tier(self.document().design(), &catalog);
                if self.apply(command) {
                    let tab = &mut self.tabs[self.active];
                    canvas::zoom_to_fit(tab.doc.design(), &mut tab.canvas);
                }
            }
            Action::Generate => self.generate.open = true,
            Action::Presentation => {
                self.presentation = !self.presentation;
                ctx.send_viewport_cmd(egui::ViewportCommand::Fullscreen(self.presentation));
                presentation::set_large_fonts(ctx, self.presentation);
                // The audience sees the whole design first; leaving gives back the view the
                // presenter had.
                let tab = &mut self.tabs[self.active];
                if self.presentation {
                    self.view_before_presentation = Some((tab.id, tab.canvas.scene_rect));
                    canvas::zoom_to_fit(tab.doc.design(), &mut tab.canvas);
                } else if let Some((id, view)) = self.view_before_presentation.take()
                    && id == tab.id
                {
                    canvas::show_view(&mut tab.canvas, view);
                }
            }
            Action::Calibrate => self.calibrate.open = true,
            Action::CheckCabling => self.cabling.open = true,
            Action::Shortcuts => self.shortcuts = true,
            Action::Compare => self.compare.open = true,
            Action::Plots => self.plots.open = true,
            Action::LogicalView => self.logical_view.open = true,
            Action::ExportPng => {
                let detail = proposed_detail(self.document().design());
                self.ask_export(ExportKind::Png(DEFAULT_PNG_SCALE, detail), ctx)
            }
            Action::ExportViewPng => self.ask_path(PathPurpose::Png, ctx),
            Action::ExportSvg => {
                let detail = proposed_detail(self.document().design());
                self.ask_export(ExportKind::Svg(detail), ctx)
            }
            Action::ExportBom => self.ask_export(ExportKind::Bom, ctx),
            Action::ExportReport => self.ask_export(ExportKind::Report, ctx),
            Action::ExportFor(format) => self.ask_export(ExportKind::Tool(format), ctx),
        }
    }
}
