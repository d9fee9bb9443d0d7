//! The right-click menu's Wiring section: connect the selection to the device right-clicked
//! or to one chosen by name, NIC i → rail-i leaf, and a full mesh in one technology. The
//! wiring itself is `model::bulk_wiring`'s; this only offers it and reports the result.

use super::{CanvasEvent, Selection};
use crate::model::bulk_wiring::{self, LEAF_ORDER, Wiring, WiringRefusal};
use crate::model::{Catalog, Design, DeviceId, LinkTech};
use egui::{RichText, Ui};
use std::collections::BTreeSet;

/// Technologies a mesh can be asked for, in the order the menu lists them.
const MESH_TECHS: [LinkTech; 5] = [
    LinkTech::Thunderbolt5,
    LinkTech::Thunderbolt4,
    LinkTech::Ethernet,
    LinkTech::RoceV2,
    LinkTech::InfiniBand,
];

/// How many devices "Connect to…" lists at most: type to narrow a big design down.
const CONNECT_TO_ROWS: usize = 30;

/// What a click in the section asks for.
enum Wish {
    /// The devices selected before the right-click, to the device right-clicked.
    SourcesTo(DeviceId),
    /// The selection to a device chosen by name.
    ConnectTo(DeviceId),
    Rails,
    Mesh(LinkTech),
}

/// The section's buttons; on a click, the wiring's command and its status line (or the
/// refusal), and the selection becomes the new links so they can be seen.
pub(super) fn wiring_menu_ui(
    ui: &mut Ui,
    design: &Design,
    catalog: &Catalog,
    selection: &mut Selection,
    target: Option<DeviceId>,
    sources: &BTreeSet<DeviceId>,
    filter: &mut String,
) -> Vec<CanvasEvent> {
    let mut wish = None;
    let selected = &selection.devices;
    let target = target.and_then(|t| design.device(t));
    if selected.is_empty() && (target.is_none() || sources.is_empty()) {
        return Vec::new();
    }
    ui.separator();
    ui.label(RichText::new("Wiring").strong());
    if let Some(to) = target
        && !sources.is_empty()
        && ui
            .button(format!("Connect {} selected to {}", sources.len(), to.name))
            .on_hover_text(
                "One link from each selected device, on the first free ports both ends \
                 share; devices already linked to it are skipped",
            )
            .clicked()
    {
        wish = Some(Wish::SourcesTo(to.id));
    }
    if !selected.is_empty() {
        ui.menu_button("Connect to…", |ui| {
            ui.add(egui::TextEdit::singleline(filter).hint_text("name contains"));
            let needle = filter.to_lowercase();
            let matching = design
                .devices
                .iter()
                .filter(|d| !selected.contains(&d.id))
                .filter(|d| d.name.to_lowercase().contains(&needle));
            for d in matching.take(CONNECT_TO_ROWS) {
                if ui.button(&d.name).clicked() {
                    wish = Some(Wish::ConnectTo(d.id));
                }
            }
        });
    }
    let has_nics = selected.iter().any(|&id| {
        design
            .device(id)
            .is_some_and(|d| bulk_wiring::nic_count(d) > 0)
    });
    let has_switches = selected.iter().any(|&id| {
        design
            .device(id)
            .is_some_and(|d| d.kind.as_switch().is_some())
    });
    if has_nics && !has_switches {
        // Shown greyed, so the wiring is found and says what it needs.
        ui.add_enabled(false, egui::Button::new("NIC i → rail-i leaf"))
            .on_disabled_hover_text(format!(
                "Select the rail leaves too (Shift+click or Shift+drag): NIC i of every \
                 selected node goes to the i-th selected switch, {LEAF_ORDER}"
            ));
    }
    if has_nics
        && has_switches
        && ui
            .button("NIC i → rail-i leaf")
            .on_hover_text(format!(
                "NIC i of every selected node to the i-th selected switch, {LEAF_ORDER}; \
                 NICs already wired are skipped"
            ))
            .clicked()
    {
        wish = Some(Wish::Rails);
    }
    if selected.len() >= 2 {
        ui.menu_button("Full mesh of selected with…", |ui| {
            for tech in MESH_TECHS {
                if ui.button(tech.label()).clicked() {
                    wish = Some(Wish::Mesh(tech));
                }
            }
        });
    }
    let Some(wish) = wish else {
        return Vec::new();
    };
    ui.close();
    let result: Result<Wiring, WiringRefusal> = match wish {
        Wish::SourcesTo(to) => bulk_wiring::connect_to(design, catalog, sources, to),
        Wish::ConnectTo(to) => bulk_wiring::connect_to(design, catalog, selected, to),
        Wish::Rails => bulk_wiring::rails(design, catalog, selected),
        Wish::Mesh(tech) => bulk_wiring::full_mesh(design, catalog, selected, tech),
    };
    match result {
        Ok(wiring) => {
            selection.clear();
            selection.links.extend(wiring.links.iter().map(|l| l.id));
            vec![
                CanvasEvent::Command(wiring.command()),
                CanvasEvent::Status(wiring.summary),
            ]
        }
        Err(refusal) => vec![CanvasEvent::Status(format!("Not wired: {refusal}"))],
    }
}
