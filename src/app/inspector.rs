//! Properties of the selection, editable. Every edit leaves as one `UpdateDevice`,
//! `UpdateLink` or `SetMeta` command; nothing here writes to the design.
//!
//! Widgets edit a draft copy. While a slider or number is being dragged, or a text field has
//! the keyboard, the draft stays local; the command is sent once the gesture ends, so a whole
//! drag or a typed name is one undo step. Discrete widgets (combo boxes, checkboxes) commit on
//! the frame they change.

use super::link_info::LinkLoads;
use crate::analysis::collective::{Library, release};
use crate::analysis::optic_cages::automatic_parts_text;
use crate::io::link_colors::{ColorMode, links_in_lane};
use crate::model::Port;
use crate::model::catalog::PartSpec;
use crate::model::command::Command;
use crate::model::factory::device_from_part;
use crate::model::port_edits::{remove_nic, stranded_links, update_dropping};
use crate::model::units::count_of;
use crate::model::{
    Bandwidth, Catalog, Design, Device, DeviceId, DeviceKind, GpuNode, HostRole, LengthClass,
    LibraryChoice, Link, LinkId, LinkState, LinkTech, NicSlot, PartCategory, PartId, PcieVia,
    ScaleUp, SwitchRole, Transport,
};
use crate::model::{NcclBuffer, NcclRelease};
use egui::{ComboBox, DragValue, Response, Ui};
use std::collections::BTreeSet;

/// Drafts carried between frames while a gesture is in progress.
#[derive(Default)]
pub struct InspectorState {
    device_draft: Option<Device>,
    link_draft: Option<Link>,
    meta_draft: Option<(String, String)>,
    /// A widget was being dragged or typed into on the last frame.
    live: bool,
    /// A NIC the user asked to remove that carries links: (device, slot), until they confirm.
    nic_to_remove: Option<(DeviceId, u32)>,
    /// An edit that takes away ports links are plugged into (another model, fewer GPUs): the
    /// device as edited, until the user confirms or keeps it.
    port_change: Option<Device>,
    /// The question about `port_change` has not been scrolled into view yet.
    port_question_new: bool,
    /// What a switch's change of model turned off (features the new model lacks), said
    /// under its features while it stays selected.
    features_dropped: Option<(DeviceId, String)>,
}

/// Tracks whether any widget of this frame is mid-gesture.
struct Gesture {
    live: bool,
}

impl Gesture {
    fn track(&mut self, ui: &Ui, response: &Response) {
        if response.dragged() || (response.has_focus() && ui.ctx().text_edit_focused()) {
            self.live = true;
        }
    }
}

/// What the canvas shows of the links this frame, which the inspector's words follow.
pub struct DrawnLinks<'a> {
    /// Each link's load under the sidebar's collective, once evaluated.
    pub loads: Option<&'a LinkLoads<'a>>,
    /// The colours the canvas draws links in, which set their lanes.
    pub lanes: ColorMode,
}

pub fn inspector_ui(
    ui: &mut Ui,
    design: &Design,
    catalog: &Catalog,
    devices: &BTreeSet<DeviceId>,
    links: &BTreeSet<LinkId>,
    state: &mut InspectorState,
    drawn: &DrawnLinks,
) -> Vec<Command> {
    let mut commands = Vec::new();
    let selected_devices: Vec<&Device> = devices.iter().filter_map(|&d| design.device(d)).collect();
    let selected_links: Vec<&Link> = links.iter().filter_map(|&l| design.link(l)).collect();
    match (selected_devices.as_slice(), selected_links.as_slice()) {
        ([], []) => design_meta_ui(ui, design, catalog, state, &mut commands),
        ([device], []) => device_ui(ui, design, catalog, device, state, &mut commands),
        ([], [link]) => link_ui(ui, design, catalog, link, state, drawn, &mut commands),
        (d, l) => {
            state.live = false;
            multi_ui(ui, d, l, &mut commands);
        }
    }
    commands
}

fn design_meta_ui(
    ui: &mut Ui,
    design: &Design,
    catalog: &Catalog,
    state: &mut InspectorState,
    out: &mut Vec<Command>,
) {
    ui.heading("Design");
    let source = (design.name.clone(), design.notes.clone());
    let mut draft = match state.meta_draft.take() {
        Some(d) if state.live => d,
        _ => source.clone(),
    };
    let mut gesture = Gesture { live: false };
    egui::Grid::new("design-meta")
        .num_columns(2)
        .show(ui, |ui| {
            ui.label("Name");
            let r = ui.add(egui::TextEdit::singleline(&mut draft.0).desired_width(f32::INFINITY));
            gesture.track(ui, &r);
            ui.end_row();
        });
    ui.label("Notes");
    let r = ui.add(
        egui::TextEdit::multiline(&mut draft.1)
            .desired_rows(3)
            .desired_width(f32::INFINITY),
    );
    gesture.track(ui, &r);
    let mut sharp = design.sharp_enabled;
    if ui
        .checkbox(&mut sharp, "In-network reduction (SHARP) set up")
        .on_hover_text(
            "NCCL reduces in the switches (CollNet) only where the SHARP plugin is installed \
             and NCCL_COLLNET_ENABLE=1; it is off by default, and so it is here. Switches \
             must support it too.",
        )
        .changed()
    {
        out.push(Command::SetSharpEnabled(sharp));
    }
    library_ui(ui, design, catalog, out);
    if Library::of(design, catalog).is_nccl() {
        nccl_release_ui(ui, design, out);
        nccl_buffer_ui(ui, design, out);
    }
    ui.separator();
    ui.label(format!(
        "{} devices, {} links, {} GPUs",
        design.devices.len(),
        design.links.len(),
        design.gpu_count()
    ));
    ui.weak("Select a device or link to edit it; drag parts in from the palette.");
    state.live = gesture.live;
    if !gesture.live && draft != source {
        out.push(Command::SetMeta {
            name: draft.0.clone(),
            notes: draft.1.clone(),
        });
    }
    state.meta_draft = Some(draft);
}

/// The collective library the design's jobs run. Auto names what it resolves to; a library
/// that cannot run the design is offered greyed out, its reason on hover.
fn library_ui(ui: &mut Ui, design: &Design, catalog: &Catalog, out: &mut Vec<Command>) {
    let by_family = Library::by_node_family(design, catalog);
    let text = |c: LibraryChoice| match c {
        LibraryChoice::Auto => format!("auto: {}", by_family.label()),
        other => other.label().to_string(),
    };
    ComboBox::from_label("Collective library")
        .selected_text(text(design.library))
        .show_ui(ui, |ui| {
            for choice in LibraryChoice::ALL {
                let reason = Library::chosen(choice)
                    .and_then(|library| library.unavailable(design, catalog));
                let r = ui.add_enabled(
                    reason.is_none(),
                    egui::Button::selectable(design.library == choice, text(choice)),
                );
                let r = match &reason {
                    Some(why) => r.on_disabled_hover_text(why),
                    None => r,
                };
                if r.clicked() && design.library != choice {
                    out.push(Command::SetLibrary(choice));
                }
            }
        })
        .response
        .on_hover_text(
            "Which library runs the collectives: NCCL on NVIDIA GPUs, MLX on Apple silicon \
             (JACCL with RDMA over Thunderbolt 5), or PyTorch's Gloo backend (Windows has no \
             NCCL). Auto chooses by node family, Gloo for a mix.",
        );
}

/// The NCCL release the design's jobs run: its latency tables, NVLS and LL128 rules. The modelled
/// release is the default and is saved as no choice at all.
fn nccl_release_ui(ui: &mut Ui, design: &Design, out: &mut Vec<Command>) {
    let modelled = NcclRelease::MODELLED;
    let current = design.nccl_release.unwrap_or(modelled);
    let text = |r: NcclRelease| {
        if r == modelled {
            format!("{r} (modelled)")
        } else {
            r.to_string()
        }
    };
    let mut offered: Vec<NcclRelease> = release::OFFERED.to_vec();
    if !offered.contains(&current) {
        offered.push(current);
        offered.sort_by(|a, b| b.cmp(a));
    }
    ComboBox::from_label("NCCL release")
        .selected_text(text(current))
        .height(320.0)
        .show_ui(ui, |ui| {
            for r in offered {
                if ui.selectable_label(r == current, text(r)).clicked() && r != current {
                    let choice = (r != modelled).then_some(r);
                    out.push(Command::SetNcclRelease(choice));
                }
            }
        })
        .response
        .on_hover_text(format!(
            "The NCCL release the jobs run. Its latency tables (tuning.cc) and which GPU \
             counts it sets NVLS up for (nvls.cc) change the times; bandwidth figures stay \
             {modelled}'s. Measurements from an older release compare with that release."
        ));
}

/// NCCL_BUFFSIZE for the design's jobs. NCCL's default is saved as no choice at all.
fn nccl_buffer_ui(ui: &mut Ui, design: &Design, out: &mut Vec<Command>) {
    let default = NcclBuffer::DEFAULT;
    let current = design.nccl_buffer.unwrap_or(default);
    let text = |b: NcclBuffer| {
        if b == default {
            format!("{b} (default)")
        } else {
            b.to_string()
        }
    };
    let mut offered = NcclBuffer::OFFERED.to_vec();
    if !offered.contains(&current) {
        offered.push(current);
        offered.sort();
    }
    ComboBox::from_label("NCCL buffer")
        .selected_text(text(current))
        .show_ui(ui, |ui| {
            for b in offered {
                if ui.selectable_label(b == current, text(b)).clicked() && b != current {
                    out.push(Command::SetNcclBuffer((b != default).then_some(b)));
                }
            }
        })
        .response
        .on_hover_text(
            "NCCL_BUFFSIZE: each connection's buffer for the Simple protocol. A tree forwards \
             one eighth of it at a time, so it sets how long a tree takes to fill its pipeline. \
             NCCL's default is 4 MiB; AWS's EFA and Google's GPUDirect-TCPXO recipes set 8 MiB.",
        );
}

fn parts_of(catalog: &Catalog, category: PartCategory) -> Vec<(&PartId, String)> {
    catalog
        .parts()
        .filter(|p| p.category() == category)
        .map(|p| (&p.id, format!("{} {}", p.vendor, p.model)))
        .collect()
}

/// A part's model name, short enough for a combo box (the list shows the vendor too).
fn part_name(catalog: &Catalog, id: &PartId) -> String {
    catalog
        .get(id)
        .map_or_else(|| format!("{id} (not in catalog)"), |p| p.model.clone())
}

/// A labelled grid row holding a combo box; the label names the combo for screen readers
/// and tests.
fn combo_row<R>(
    ui: &mut Ui,
    label: &str,
    selected: impl Into<egui::WidgetText>,
    items: impl FnOnce(&mut Ui) -> R,
) {
    let l = ui.label(label);
    ComboBox::from_id_salt(label)
        .selected_text(selected)
        .width(ui.available_width().max(80.0))
        .truncate()
        .show_ui(ui, items)
        .response
        .labelled_by(l.id);
    ui.end_row();
}

/// A grid row choosing a part of one category; returns true when the choice changed.
fn part_row(
    ui: &mut Ui,
    label: &str,
    catalog: &Catalog,
    category: PartCategory,
    value: &mut PartId,
) -> bool {
    let before = value.clone();
    combo_row(ui, label, part_name(catalog, value), |ui| {
        for (id, name) in parts_of(catalog, category) {
            ui.selectable_value(value, id.clone(), name);
        }
    });
    *value != before
}

/// A grid row with a number dragged or typed; the label names the field. A drag stops at
/// the ends of `range`; a typed value outside it is refused, not clamped, and the row below
/// says why (`why` names the limit: "a node holds 1 to 16 GPUs") until a valid value is typed.
#[allow(clippy::too_many_arguments)]
fn number_row<T: egui::emath::Numeric>(
    ui: &mut Ui,
    label: &str,
    value: &mut T,
    range: std::ops::RangeInclusive<T>,
    suffix: &str,
    why: &str,
    gesture: &mut Gesture,
) -> Response {
    let l = ui.label(label);
    let mut edited = *value;
    let r = ui
        .add(
            DragValue::new(&mut edited)
                .speed(0.1)
                .suffix(suffix)
                .update_while_editing(false),
        )
        .labelled_by(l.id);
    gesture.track(ui, &r);
    ui.end_row();
    let refusal_id = r.id.with("refused");
    if r.changed() {
        if range.contains(&edited) {
            *value = edited;
            ui.data_mut(|d| d.remove::<String>(refusal_id));
        } else if r.dragged() {
            let (lo, hi) = (*range.start(), *range.end());
            *value = if edited.to_f64() < lo.to_f64() {
                lo
            } else {
                hi
            };
        } else {
            let typed = egui::emath::format_with_decimals_in_range(edited.to_f64(), 0..=6);
            ui.data_mut(|d| d.insert_temp(refusal_id, format!("{typed}{suffix} refused: {why}")));
        }
    }
    if let Some(refusal) = ui.data(|d| d.get_temp::<String>(refusal_id)) {
        ui.label("");
        // Wrapped: a grid lays its cells out unwrapped, and the reason would run off the
        // sidebar's edge.
        let color = ui.visuals().error_fg_color;
        ui.add(egui::Label::new(egui::RichText::new(refusal).color(color)).wrap());
        ui.end_row();
    }
    r
}

fn device_ui(
    ui: &mut Ui,
    design: &Design,
    catalog: &Catalog,
    source: &Device,
    state: &mut InspectorState,
    out: &mut Vec<Command>,
) {
    let mut draft = match state.device_draft.take() {
        Some(d) if state.live && d.id == source.id => d,
        _ => source.clone(),
    };
    if state
        .features_dropped
        .as_ref()
        .is_some_and(|(id, _)| *id != source.id)
    {
        state.features_dropped = None;
    }
    let mut gesture = Gesture { live: false };
    ui.heading(&source.name);
    ui.weak(format!("{} {}", kind_text(&source.kind), source.id));
    egui::Grid::new(("device", source.id))
        .num_columns(2)
        .spacing([8.0, 6.0])
        .show(ui, |ui| {
            let l = ui.label("Name");
            let r = ui
                .add(egui::TextEdit::singleline(&mut draft.name).desired_width(f32::INFINITY))
                .labelled_by(l.id);
            gesture.track(ui, &r);
            ui.end_row();
            device_kind_rows(ui, design, catalog, source, &mut draft, &mut gesture);
        });
    // The question about an edit that would strand links sits right under the rows edited.
    if let Some(change) = port_change_ui(ui, design, catalog, source, state) {
        out.push(change);
        state.device_draft = None;
        state.live = false;
        return;
    }
    let mut remove_nic = None;
    if let DeviceKind::GpuNode(node) = &mut draft.kind {
        let slots = catalog.node(&node.model).and_then(|s| s.nic_slots);
        remove_nic = nics_ui(ui, catalog, &mut node.nics, slots);
    } else if let DeviceKind::Host(host) = &mut draft.kind {
        remove_nic = nics_ui(ui, catalog, &mut host.nics, None);
    } else if let DeviceKind::Switch(sw) = &mut draft.kind {
        if let DeviceKind::Switch(before) = &source.kind
            && before.model != sw.model
        {
            let mut dropped = Vec::new();
            if before.features.in_network_reduction && !sw.features.in_network_reduction {
                dropped.push("SHARP");
            }
            if before.features.adaptive_routing && !sw.features.adaptive_routing {
                dropped.push("adaptive routing");
            }
            if !dropped.is_empty() {
                state.features_dropped = Some((
                    source.id,
                    format!(
                        "{} turned off: `{}` has {}",
                        dropped.join(" and "),
                        sw.model,
                        if dropped.len() == 1 {
                            "none"
                        } else {
                            "neither"
                        }
                    ),
                ));
            }
        }
        let spec = catalog.switch(&sw.model);
        let supports = |f: fn(&crate::model::catalog::SwitchSpec) -> bool| spec.is_none_or(f);
        ui.label("Features");
        if let Some((id, dropped)) = &state.features_dropped
            && *id == source.id
        {
            ui.label(egui::RichText::new(dropped).color(ui.visuals().warn_fg_color));
        }
        ui.checkbox(
            &mut sw.features.in_network_reduction,
            "SHARP (in-network reduction)",
        )
        .on_hover_text(if supports(|s| s.in_network_reduction) {
            "Reductions run inside the switch"
        } else {
            "This switch model has no in-network reduction"
        });
        ui.checkbox(&mut sw.features.adaptive_routing, "Adaptive routing")
            .on_hover_text(if supports(|s| s.adaptive_routing) {
                "Spreads flows over all equal-cost paths"
            } else {
                "This switch model has no adaptive routing"
            });
        ui.checkbox(&mut sw.features.lossless, "Lossless (PFC/ECN)")
            .on_hover_text("What RoCE needs to run without drops");
    }
    // The question about a NIC's links sits right under the NIC list.
    if let Some(slot) = remove_nic {
        state.nic_to_remove = Some((source.id, slot));
    }
    if let Some(removal) = nic_removal_ui(ui, design, source, state, remove_nic.is_some()) {
        // The removal replaces the device as it stands in the design; the draft follows.
        out.push(removal);
        state.device_draft = None;
        state.live = false;
        return;
    }
    ui.separator();
    ui.weak(format!(
        "{} · at ({:.0}, {:.0})",
        count_of(design.links_of(source.id).count(), "link", "links"),
        source.pos.x,
        source.pos.y
    ));

    state.live = gesture.live;
    if !gesture.live && draft != *source {
        let stranded = stranded_links(design, catalog, &draft);
        if stranded.is_empty() {
            out.push(Command::UpdateDevice(Box::new(draft.clone())));
        } else {
            // Nothing is dropped silently: the device stays as it is until the user answers,
            // asked right under the rows they changed from the next frame on.
            state.port_change = Some(draft);
            state.port_question_new = true;
            draft = source.clone();
            ui.ctx().request_repaint();
        }
    }
    state.device_draft = Some(draft);
}

/// Links of `device` as a question names them: "l3 to leaf-7".
fn links_named(design: &Design, device: DeviceId, links: &[LinkId]) -> Vec<String> {
    links
        .iter()
        .filter_map(|id| design.link(*id))
        .map(|l| {
            let far = l.other_end(device).map_or(l.b.device, |e| e.device);
            let name = design.device(far).map_or("?", |d| d.name.as_str());
            format!("{} to {name}", l.id)
        })
        .collect()
}

/// The question about an edit that would strand links: it names them, and either applies
/// the edit with the links removed (one undo step) or keeps the device as it was.
fn port_change_ui(
    ui: &mut Ui,
    design: &Design,
    catalog: &Catalog,
    source: &Device,
    state: &mut InspectorState,
) -> Option<Command> {
    let changed = state.port_change.as_ref()?;
    if changed.id != source.id {
        state.port_change = None;
        return None;
    }
    // Worked out each frame: links may have gone meanwhile (undo, a delete on the canvas).
    let stranded = stranded_links(design, catalog, changed);
    let links = links_named(design, source.id, &stranded);
    let (mut apply, mut keep) = (false, false);
    let question = ui.group(|ui| {
        ui.label(format!(
            "This change leaves {} link(s) on ports {} would no longer have: {}. Applying it \
             removes them.",
            links.len(),
            source.name,
            links.join(", ")
        ));
        ui.horizontal(|ui| {
            apply = ui.button("Change and remove links").clicked();
            keep = ui.button("Keep as it was").clicked();
        });
    });
    if std::mem::take(&mut state.port_question_new) {
        question.response.scroll_to_me(None);
    }
    if keep {
        state.port_change = None;
    }
    if apply && let Some(changed) = state.port_change.take() {
        return Some(update_dropping(changed, &stranded));
    }
    None
}

/// The removal of the NIC the user asked to remove: at once when no link is plugged into
/// it, else after they confirm, naming the links that go with it. Links on the NICs after it
/// follow their cards down one slot (`port_edits::remove_nic`).
/// What taking NIC `slot` out does besides: the links that go with it, and the cards after
/// it moving down a slot with their cables (a rail follows its NIC's number).
fn removal_question(
    design: &Design,
    device: DeviceId,
    slot: u32,
    removal: &crate::model::port_edits::NicRemoval,
) -> String {
    let mut words = Vec::new();
    if !removal.dropped.is_empty() {
        let links = links_named(design, device, &removal.dropped);
        words.push(format!(
            "NIC {slot} carries {}: {}. Removing the NIC removes {} too.",
            count_of(links.len(), "link", "links"),
            links.join(", "),
            if links.len() == 1 { "it" } else { "them" }
        ));
    }
    if !removal.renumbered.is_empty() {
        words.push(format!(
            "The NICs after it move down a slot with their cables ({} in all: NIC {} becomes \
             NIC {slot}); a rail follows its NIC's number, so their rails go down by one too.",
            count_of(removal.renumbered.len(), "link", "links"),
            slot + 1
        ));
    }
    words.join(" ")
}

fn nic_removal_ui(
    ui: &mut Ui,
    design: &Design,
    source: &Device,
    state: &mut InspectorState,
    just_asked: bool,
) -> Option<Command> {
    let (device, slot) = state.nic_to_remove?;
    let removal = (device == source.id)
        .then(|| remove_nic(design, device, slot))
        .flatten();
    let Some(removal) = removal else {
        state.nic_to_remove = None;
        return None;
    };
    if removal.dropped.is_empty() && removal.renumbered.is_empty() {
        state.nic_to_remove = None;
        return Some(removal.command);
    }
    let mut confirmed = false;
    let question = ui.group(|ui| {
        ui.label(removal_question(design, device, slot, &removal));
        ui.horizontal(|ui| {
            let remove = if removal.dropped.is_empty() {
                "Remove NIC"
            } else {
                "Remove NIC and links"
            };
            if ui.button(remove).clicked() {
                confirmed = true;
            }
            if ui.button("Keep NIC").clicked() {
                state.nic_to_remove = None;
            }
        });
    });
    if just_asked {
        question.response.scroll_to_me(None);
    }
    if confirmed {
        state.nic_to_remove = None;
        return Some(removal.command);
    }
    None
}

fn kind_text(kind: &DeviceKind) -> String {
    match kind {
        DeviceKind::Switch(s) => format!("{} switch", s.role.label()),
        other => other.label().to_string(),
    }
}

/// The most GPUs a node can be given, and the reason shown when more are typed: the chassis'
/// slots where the catalog states them, else the 16 the largest servers hold.
fn gpu_limit(slots: Option<u32>) -> (u32, String) {
    match slots {
        // The range, not only the top: a negative count typed reads as 0.
        Some(slots) => (
            slots.max(1),
            format!(
                "this chassis holds 1 to {} ({})",
                count_of(slots.max(1) as usize, "GPU", "GPUs"),
                count_of(slots as usize, "GPU slot", "GPU slots")
            ),
        ),
        None => (16, "a node holds 1 to 16 GPUs".to_string()),
    }
}

/// Whether a node's `nics` stay through a change to the chassis `model`: there are some (a
/// node without any takes the new chassis's own), the chassis has slots enough for the
/// add-in ones (or does not say how many), and none is built into another machine's board.
fn chassis_takes_nics(catalog: &Catalog, model: &PartId, nics: &[NicSlot]) -> bool {
    let Some(spec) = catalog.node(model) else {
        return false;
    };
    if nics.is_empty() {
        return false;
    }
    let mut add_in = 0;
    for slot in nics {
        match catalog.nic(&slot.part) {
            Some(nic) if nic.builtin => {
                if !spec.takes_nic(&slot.part, nic) {
                    return false;
                }
            }
            _ => add_in += 1,
        }
    }
    spec.has_slots_for(add_in)
}

/// The grid rows particular to each kind of device.
fn device_kind_rows(
    ui: &mut Ui,
    design: &Design,
    catalog: &Catalog,
    source: &Device,
    draft: &mut Device,
    gesture: &mut Gesture,
) {
    let (id, draft_name, pos) = (draft.id, draft.name.clone(), draft.pos);
    match &mut draft.kind {
        DeviceKind::GpuNode(node) => {
            let mut model = node.model.clone();
            if part_row(ui, "Model", catalog, PartCategory::Node, &mut model) {
                // A different chassis brings its own GPUs and scale-up, as a fresh drop of
                // that part would; the node keeps its name, place and NVLink domain, and the
                // NICs its links are cabled to wherever the new chassis takes them.
                match device_from_part(catalog, &model, id, draft_name.clone(), pos) {
                    Ok(Device {
                        kind: DeviceKind::GpuNode(mut fresh),
                        ..
                    }) => {
                        fresh.domain = node.domain;
                        if chassis_takes_nics(catalog, &model, &node.nics) {
                            fresh.nics = std::mem::take(&mut node.nics);
                        }
                        *node = fresh;
                    }
                    _ => node.model = model,
                }
            }
            let any_gpu = catalog.node(&node.model).is_none_or(|spec| spec.any_gpu);
            if any_gpu {
                let mut gpu = node.gpu.clone();
                if part_row(ui, "GPU", catalog, PartCategory::Gpu, &mut gpu) {
                    // How the cards talk inside the box follows the card (NVLink bridge,
                    // PCIe peer-to-peer or not), as a fresh drop of it would have it.
                    match device_from_part(catalog, &gpu, id, draft_name.clone(), pos) {
                        Ok(Device {
                            kind: DeviceKind::GpuNode(fresh),
                            ..
                        }) => {
                            node.gpu = fresh.gpu;
                            node.scale_up = fresh.scale_up;
                        }
                        _ => node.gpu = gpu,
                    }
                }
                let (most, why) = gpu_limit(
                    catalog
                        .node(&node.model)
                        .and_then(crate::model::catalog::NodeSpec::max_gpus),
                );
                number_row(ui, "GPUs", &mut node.gpu_count, 1..=most, "", &why, gesture);
            } else {
                ui.label("GPUs");
                ui.label(format!(
                    "{} × {}",
                    node.gpu_count,
                    part_name(catalog, &node.gpu)
                ))
                .on_hover_text("This chassis comes with its GPUs; change the model instead");
                ui.end_row();
            }
            ui.label("Inside");
            ui.label(scale_up_text(&node.scale_up));
            ui.end_row();
            bridge_row(ui, catalog, node);
            if let Some(domain) = node.domain {
                ui.label("NVLink domain");
                ui.label(design.device(domain).map_or("?", |d| d.name.as_str()));
                ui.end_row();
            }
        }
        DeviceKind::Switch(sw) => {
            if part_row(ui, "Model", catalog, PartCategory::Switch, &mut sw.model)
                && let Some(spec) = catalog.switch(&sw.model)
            {
                sw.breakout = sw.breakout.clamp(1, spec.max_breakout);
                // What the new model lacks goes off with it (`features_dropped` says so).
                sw.features.in_network_reduction &= spec.in_network_reduction;
                sw.features.adaptive_routing &= spec.adaptive_routing;
            }
            combo_row(ui, "Role", sw.role.label(), |ui| {
                for role in [SwitchRole::Leaf, SwitchRole::Spine, SwitchRole::Core] {
                    ui.selectable_value(&mut sw.role, role, role.label());
                }
            });
            let spec = catalog.switch(&sw.model);
            let max_breakout = spec.map_or(8, |s| s.max_breakout).max(1);
            number_row(
                ui,
                "Breakout",
                &mut sw.breakout,
                1..=max_breakout,
                " per port",
                &format!("this switch splits a port 1 to {max_breakout} ways"),
                gesture,
            );
            if let Some(spec) = spec {
                let ports = spec.ports * sw.breakout.max(1);
                let used = design.links_of(source.id).map(|l| l.lanes).sum::<u32>();
                ui.label("Ports");
                ui.label(format!(
                    "{used} of {ports} used, {} each",
                    spec.port_gbit_s / f64::from(sw.breakout.max(1))
                ));
                ui.end_row();
            }
            ui.label("Rail");
            ui.horizontal(|ui| {
                let mut has_rail = sw.rail.is_some();
                if ui.checkbox(&mut has_rail, "").changed() {
                    sw.rail = has_rail.then_some(0);
                }
                match &mut sw.rail {
                    Some(rail) => {
                        let r = ui.add(
                            DragValue::new(rail)
                                .range(0..=63)
                                .update_while_editing(false),
                        );
                        gesture.track(ui, &r);
                    }
                    None => {
                        ui.weak("none");
                    }
                }
            });
            ui.end_row();
        }
        DeviceKind::NvSwitchDomain(domain) => {
            part_row(
                ui,
                "Model",
                catalog,
                PartCategory::Domain,
                &mut domain.model,
            );
            let members = design
                .devices
                .iter()
                .filter(|d| {
                    d.kind
                        .as_node()
                        .is_some_and(|n| n.domain == Some(source.id))
                })
                .count();
            let expected = catalog.domain(&domain.model).map_or(0, |s| s.members);
            ui.label("Trays");
            ui.label(format!("{members} of {expected} attached"));
            ui.end_row();
        }
        DeviceKind::Host(host) => {
            let role_text = match host.role {
                HostRole::Cpu => "CPU",
                HostRole::Storage => "storage",
            };
            combo_row(ui, "Role", role_text, |ui| {
                ui.selectable_value(&mut host.role, HostRole::Cpu, "CPU");
                ui.selectable_value(&mut host.role, HostRole::Storage, "storage");
            });
        }
    }
}

/// NVLink bridges between pairs of cards that take one, on a node whose cards meet at the
/// host bridge (a workstation): ticked, the pairs talk over the bridge and pairs over PCIe,
/// as `generate --nvlink-bridge` draws them. An odd count of cards cannot pair up.
fn bridge_row(ui: &mut Ui, catalog: &Catalog, node: &mut GpuNode) {
    let Some(spec) = catalog.gpu(&node.gpu) else {
        return;
    };
    let (Some(per_gpu), true) = (spec.nvlink_gbit_s, spec.nvlink_bridge) else {
        return;
    };
    let (bridged, generation, peer_to_peer) = match node.scale_up {
        ScaleUp::NvLinkBridgePairs {
            pcie_generation,
            peer_to_peer,
            ..
        } => (true, pcie_generation, peer_to_peer),
        ScaleUp::Pcie {
            generation,
            via: PcieVia::HostBridge,
            peer_to_peer,
        } => (false, generation, peer_to_peer),
        _ => return,
    };
    let odd = !node.gpu_count.is_multiple_of(2);
    let mut ticked = bridged;
    ui.label("NVLink bridges");
    let response = ui
        .add_enabled(
            !odd || bridged,
            egui::Checkbox::new(&mut ticked, "between pairs"),
        )
        .on_hover_text(format!(
            "Each pair of cards joined by an NVLink bridge ({per_gpu} per card); pairs meet \
             over PCIe gen {generation}"
        ))
        .on_disabled_hover_text(format!(
            "Bridges join cards in pairs: {} is odd",
            count_of(node.gpu_count as usize, "card", "cards")
        ));
    if response.changed() {
        node.scale_up = if ticked {
            ScaleUp::NvLinkBridgePairs {
                per_gpu_gbit_s: per_gpu,
                pcie_generation: generation,
                peer_to_peer,
            }
        } else {
            ScaleUp::Pcie {
                generation,
                via: PcieVia::HostBridge,
                peer_to_peer,
            }
        };
    }
    ui.end_row();
}

fn scale_up_text(scale_up: &ScaleUp) -> String {
    match scale_up {
        ScaleUp::NvSwitch {
            generation,
            per_gpu_gbit_s,
        } => format!("NVSwitch gen {generation}, {per_gpu_gbit_s} per GPU"),
        ScaleUp::NvLinkBridgePairs {
            per_gpu_gbit_s,
            pcie_generation,
            ..
        } => format!("NVLink bridge pairs ({per_gpu_gbit_s}), PCIe gen {pcie_generation}"),
        ScaleUp::Pcie {
            generation,
            peer_to_peer,
            ..
        } => format!(
            "PCIe gen {generation}{}",
            if *peer_to_peer {
                ", peer-to-peer"
            } else {
                ", no peer-to-peer (via host memory)"
            }
        ),
        ScaleUp::UnifiedMemory => "unified memory (one SoC)".to_string(),
    }
}

/// The NIC list: part and GPUDirect edited in place, a NIC added at the end. Returns the
/// slot the user asked to remove; the caller removes it with its links (`nic_removal_ui`).
fn nics_ui(
    ui: &mut Ui,
    catalog: &Catalog,
    nics: &mut Vec<NicSlot>,
    slots: Option<u32>,
) -> Option<u32> {
    // A NIC on another machine's board is no card to fit (GB10's ConnectX-7).
    let builtin = |id: &PartId| catalog.nic(id).is_some_and(|n| n.builtin);
    // A machine with no NIC and no slot for one (a Mac) has nothing here to edit: its ports
    // are its own (Thunderbolt, built-in Ethernet).
    if nics.is_empty() && slots == Some(0) {
        ui.weak("NICs: none; this machine takes no add-in NIC (its links use its own ports)");
        return None;
    }
    ui.label(format!("NICs ({}): NIC i is rail i", nics.len()));
    let mut remove = None;
    for (i, nic) in nics.iter_mut().enumerate() {
        ui.push_id(i, |ui| {
            ui.horizontal(|ui| {
                ui.label(format!("{i}"));
                // Right to left, so the combo box takes whatever width the others leave.
                ui.with_layout(egui::Layout::right_to_left(egui::Align::Center), |ui| {
                    // Clear of the panel's floating scroll bar, which takes clicks at the edge.
                    let scroll = &ui.spacing().scroll;
                    ui.add_space(scroll.bar_width + scroll.bar_outer_margin);
                    if ui
                        .small_button("×")
                        .on_hover_text("Remove this NIC")
                        .clicked()
                    {
                        remove = Some(i);
                    }
                    ui.checkbox(&mut nic.gpudirect, "GPUDirect")
                        .on_hover_text("GPUDirect RDMA: off means traffic crosses host memory");
                    ComboBox::from_id_salt("nic")
                        .selected_text(part_name(catalog, &nic.part))
                        .width(ui.available_width())
                        .truncate()
                        .show_ui(ui, |ui| {
                            for (id, name) in parts_of(catalog, PartCategory::Nic) {
                                if !builtin(id) || *id == nic.part {
                                    ui.selectable_value(&mut nic.part, id.clone(), name);
                                }
                            }
                        });
                });
            });
        });
    }
    let add_ins = nics.iter().filter(|n| !builtin(&n.part)).count();
    let full = slots.is_some_and(|slots| add_ins >= slots as usize);
    let add = ui
        .add_enabled(!full, egui::Button::new("Add NIC"))
        .on_disabled_hover_text(match slots {
            Some(0) => "This machine has no slot for an add-in NIC".to_string(),
            Some(1) => "This machine's one NIC slot is taken".to_string(),
            Some(n) => format!("This machine's {n} NIC slots are taken"),
            None => String::new(),
        });
    if add.clicked() {
        let part = nics
            .iter()
            .rev()
            .map(|n| n.part.clone())
            .find(|id| !builtin(id))
            .or_else(|| {
                parts_of(catalog, PartCategory::Nic)
                    .into_iter()
                    .map(|(id, _)| id.clone())
                    .find(|id| !builtin(id))
            });
        if let Some(part) = part {
            nics.push(NicSlot {
                part,
                gpudirect: true,
            });
        }
    }
    remove.map(|i| i as u32)
}

/// Common per-lane rates for a technology, per direction.
pub fn speed_choices(tech: LinkTech) -> &'static [f64] {
    match tech {
        LinkTech::Ethernet | LinkTech::RoceV2 => {
            &[1.0, 10.0, 25.0, 40.0, 50.0, 100.0, 200.0, 400.0, 800.0]
        }
        LinkTech::InfiniBand => &[100.0, 200.0, 400.0, 800.0],
        LinkTech::Thunderbolt4 => &[40.0],
        LinkTech::Thunderbolt5 => &[80.0, 120.0],
        // Per GPU: NVLink 3 (A100) 2.4 Tb/s, NVLink 4 (H100) 3.6 Tb/s, NVLink 5 (B200) 7.2 Tb/s.
        LinkTech::NvLink => &[2400.0, 3600.0, 7200.0],
        LinkTech::NvLinkBridge => &[450.0, 900.0],
        // PCIe x16 per direction: gen3 126, gen4 252, gen5 504 Gb/s.
        LinkTech::Pcie => &[126.0, 252.0, 504.0],
    }
}

fn endpoint_text(design: &Design, device: DeviceId, port: Port) -> String {
    let name = design.device(device).map_or("?", |d| d.name.as_str());
    format!("{name} {port}")
}

fn link_ui(
    ui: &mut Ui,
    design: &Design,
    catalog: &Catalog,
    source: &Link,
    state: &mut InspectorState,
    drawn: &DrawnLinks,
    out: &mut Vec<Command>,
) {
    let mut draft = match state.link_draft.take() {
        Some(l) if state.live && l.id == source.id => l,
        _ => source.clone(),
    };
    let mut gesture = Gesture { live: false };
    ui.heading(format!("Link {}", source.id));
    ui.weak(format!(
        "{} – {}",
        endpoint_text(design, source.a.device, source.a.port),
        endpoint_text(design, source.b.device, source.b.port)
    ));
    // The canvas draws parallel links of one lane as one line: say that an edit here is
    // one link's.
    let parallel = links_in_lane(design, source, drawn.lanes);
    if parallel > 1 {
        ui.label(
            egui::RichText::new(format!(
                "One of {parallel} links drawn as one line: edits change this one only"
            ))
            .color(ui.visuals().warn_fg_color),
        );
    }
    // What it carries in the sidebar's collective, as the canvas's hover card says. Always
    // one line (cut short, whole on hover), so that the rows below do not move when the
    // analysis comes in.
    let load = match drawn.loads {
        Some(loads) => format!("Load: {}", loads.line(source.id)),
        None => "Load: unknown (no collective evaluated yet)".to_string(),
    };
    ui.add(egui::Label::new(load).truncate());
    egui::Grid::new(("link", source.id))
        .num_columns(2)
        .spacing([8.0, 6.0])
        .show(ui, |ui| {
            combo_row(ui, "Technology", draft.tech.label(), |ui| {
                for tech in LinkTech::ALL {
                    ui.selectable_value(&mut draft.tech, tech, tech.label());
                }
            });
            let tech = draft.tech;
            combo_row(ui, "Speed", draft.rate_gbit_s.to_string(), |ui| {
                for &gbit_s in speed_choices(tech) {
                    let rate = Bandwidth::from_gbit_s(gbit_s);
                    ui.selectable_value(&mut draft.rate_gbit_s, rate, rate.to_string());
                }
            });
            let mut gbit_s = draft.rate_gbit_s.gbit_s();
            let r = number_row(
                ui,
                "Per lane",
                &mut gbit_s,
                0.001..=100_000.0,
                " Gb/s",
                "a lane runs at 0.001 to 100,000 Gb/s",
                &mut gesture,
            );
            if r.changed() {
                draft.rate_gbit_s = Bandwidth::from_gbit_s(gbit_s);
            }
            number_row(
                ui,
                "Lanes",
                &mut draft.lanes,
                1..=64,
                "",
                "a link bundles 1 to 64 lanes",
                &mut gesture,
            );
            ui.label("Carries");
            ui.label(if draft.capacity() == draft.nominal_capacity() {
                draft.capacity().to_string()
            } else {
                format!(
                    "{} (nominal {})",
                    draft.capacity(),
                    draft.nominal_capacity()
                )
            });
            ui.end_row();
            ui.label("Transport");
            ui.add_enabled_ui(tech.is_ethernet_family() || tech.is_thunderbolt(), |ui| {
                ui.horizontal(|ui| {
                    // RDMA over Thunderbolt needs Thunderbolt 5 (macOS 26.2).
                    let rdma_allowed = tech != LinkTech::Thunderbolt4;
                    let selected = draft.transport == Transport::Rdma;
                    let rdma = ui
                        .add_enabled(rdma_allowed, egui::RadioButton::new(selected, "RDMA"))
                        .on_disabled_hover_text(
                            "Thunderbolt 4 carries no RDMA: RDMA over Thunderbolt needs \
                             Thunderbolt 5 and macOS 26.2",
                        );
                    if rdma.clicked() {
                        draft.transport = Transport::Rdma;
                    }
                    ui.radio_value(&mut draft.transport, Transport::Tcp, "TCP");
                    // EFA is an Ethernet adapter; Thunderbolt carries TCP or RDMA only.
                    if tech.is_ethernet_family() {
                        ui.radio_value(&mut draft.transport, Transport::Efa, "EFA")
                            .on_hover_text(
                                "AWS Elastic Fabric Adapter (SRD): needs no PFC; NCCL runs its \
                                 Simple protocol over it (aws-ofi-nccl)",
                            );
                    }
                });
            });
            ui.end_row();
            ui.label("Length");
            ui.horizontal(|ui| {
                ui.radio_value(&mut draft.length, LengthClass::InRack, "in rack");
                ui.radio_value(&mut draft.length, LengthClass::CrossRack, "across racks");
            });
            ui.end_row();
            ui.label("State");
            ui.horizontal(|ui| {
                let up = matches!(draft.state, LinkState::Up);
                let degraded = matches!(draft.state, LinkState::Degraded { .. });
                let failed = matches!(draft.state, LinkState::Failed);
                if ui.radio(up, "up").clicked() {
                    draft.state = LinkState::Up;
                }
                if ui.radio(degraded, "degraded").clicked() && !degraded {
                    draft.state = LinkState::Degraded { fraction: 0.5 };
                }
                if ui.radio(failed, "failed").clicked() {
                    draft.state = LinkState::Failed;
                }
            });
            ui.end_row();
            if let LinkState::Degraded { fraction } = &mut draft.state {
                let l = ui.label("Runs at");
                let r = ui
                    .add(egui::Slider::new(fraction, 0.05..=0.95).fixed_decimals(2))
                    .labelled_by(l.id);
                gesture.track(ui, &r);
                ui.end_row();
            }
            let cable_text = draft
                .cable
                .as_ref()
                .map_or_else(|| "automatic".to_string(), |c| part_name(catalog, c));
            combo_row(ui, "Cable", cable_text, |ui| {
                ui.selectable_value(&mut draft.cable, None, "automatic");
                for part in catalog.parts() {
                    if let PartSpec::Cable(spec) = &part.spec {
                        ui.selectable_value(
                            &mut draft.cable,
                            Some(part.id.clone()),
                            format!("{} ({})", part.model, spec.speed_gbit_s),
                        );
                    }
                }
            });
            // What "automatic" buys, as the bill of materials counts it.
            if draft.cable.is_none()
                && let Some(parts) = automatic_parts_text(design, catalog, &draft)
            {
                ui.label("Counted as");
                ui.add(egui::Label::new(egui::RichText::new(parts).weak()).wrap());
                ui.end_row();
            }
        });

    state.live = gesture.live;
    if !gesture.live && draft != *source {
        out.push(Command::UpdateLink(Box::new(draft.clone())));
    }
    state.link_draft = Some(draft);
}

/// Several items: a summary and the bulk edits that make sense for many links at once.
fn multi_ui(ui: &mut Ui, devices: &[&Device], links: &[&Link], out: &mut Vec<Command>) {
    ui.heading("Selection");
    ui.label(format!("{} devices, {} links", devices.len(), links.len()));
    let gpus: u64 = devices
        .iter()
        .filter_map(|d| d.kind.as_node())
        .map(|n| u64::from(n.gpu_count))
        .sum();
    if gpus > 0 {
        ui.label(format!("{gpus} GPUs"));
    }
    if links.is_empty() {
        return;
    }
    ui.separator();
    ui.label(format!("All {} selected links:", links.len()));
    let techs: BTreeSet<LinkTech> = links.iter().map(|l| l.tech).collect();
    let bulk = |edit: &dyn Fn(&mut Link)| -> Command {
        Command::Batch(
            links
                .iter()
                .map(|l| {
                    let mut l = (*l).clone();
                    edit(&mut l);
                    Command::UpdateLink(Box::new(l))
                })
                .collect(),
        )
    };
    if let [tech] = techs.iter().copied().collect::<Vec<_>>().as_slice() {
        ui.horizontal_wrapped(|ui| {
            ui.label("Speed");
            for &gbit_s in speed_choices(*tech) {
                let rate = Bandwidth::from_gbit_s(gbit_s);
                if ui.small_button(rate.to_string()).clicked() {
                    out.push(bulk(&|l| l.rate_gbit_s = rate));
                }
            }
        });
    }
    ui.horizontal(|ui| {
        ui.label("State");
        if ui.small_button("up").clicked() {
            out.push(bulk(&|l| l.state = LinkState::Up));
        }
        if ui.small_button("failed").clicked() {
            out.push(bulk(&|l| l.state = LinkState::Failed));
        }
    });
}
