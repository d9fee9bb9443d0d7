//! Stand-in with the canvas's interface until `src/app/canvas/` (another helper's) lands:
//! the window shell compiles and runs against it, showing a placeholder in the centre.
//! Removed as soon as the real canvas module exists.

use crate::model::command::Command;
use crate::model::{Catalog, Design, DeviceId, LinkId, PartId};
use std::collections::{BTreeSet, HashMap, HashSet};

#[derive(Debug, Clone, Default)]
pub struct Selection {
    pub devices: BTreeSet<DeviceId>,
    pub links: BTreeSet<LinkId>,
}

#[derive(Debug, Clone)]
pub struct CanvasState {
    pub selection: Selection,
    pub scene_rect: egui::Rect,
    pub show_grid: bool,
    pub snap: bool,
}

impl Default for CanvasState {
    fn default() -> Self {
        Self {
            selection: Selection::default(),
            scene_rect: egui::Rect::from_min_size(egui::Pos2::ZERO, egui::vec2(1000.0, 700.0)),
            show_grid: true,
            snap: true,
        }
    }
}

pub struct CanvasOverlay<'a> {
    pub catalog: &'a Catalog,
    pub heat: Option<&'a HashMap<LinkId, f64>>,
    pub highlight_links: &'a HashSet<LinkId>,
}

pub enum CanvasEvent {
    Command(Command),
    Status(String),
}

pub struct PaletteDrop {
    pub part: PartId,
}

pub fn canvas_ui(
    ui: &mut egui::Ui,
    design: &Design,
    _state: &mut CanvasState,
    _overlay: &CanvasOverlay,
) -> Vec<CanvasEvent> {
    ui.centered_and_justified(|ui| {
        ui.weak(format!(
            "canvas coming: {} devices, {} links",
            design.devices.len(),
            design.links.len()
        ));
    });
    Vec::new()
}

pub fn zoom_to_fit(_design: &Design, _state: &mut CanvasState) {}

pub fn arrange_by_tier(_design: &Design, _catalog: &Catalog) -> Command {
    Command::Batch(Vec::new())
}
