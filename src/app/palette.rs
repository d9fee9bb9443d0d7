//! The parts palette: the catalog by category with a search box. Device parts are dragged
//! onto the canvas (payload `PaletteDrop`, which the canvas turns into an insert), or added
//! at the view's centre with a double click. Also the "Generate…" dialog, which runs any
//! template with its parameters into a new design tab.

use super::canvas::PaletteDrop;
use crate::generate::{Template, TemplateSpec, generate};
use crate::model::{Catalog, Design, Part, PartCategory, PartId, PartSpec, Transport};
use egui::{ComboBox, DragValue, RichText, Ui};

#[derive(Debug, Clone, PartialEq)]
pub enum PaletteEvent {
    /// Add this part at the centre of the view (the same factory path as a drop).
    Add(PartId),
    OpenGenerate,
}

#[derive(Debug, Default)]
pub struct PaletteState {
    pub search: String,
}

/// Categories in palette order; the last three are parts of devices, not devices.
const SECTIONS: [(PartCategory, &str, bool); 6] = [
    (PartCategory::Node, "GPU servers & computers", true),
    (PartCategory::Domain, "NVLink racks", true),
    (PartCategory::Switch, "Switches", true),
    (PartCategory::Gpu, "GPU cards (in a workstation)", true),
    (PartCategory::Nic, "NICs (add in the inspector)", false),
    (
        PartCategory::Cable,
        "Cables & optics (choose on a link)",
        false,
    ),
];

fn matches(part: &Part, needle: &str) -> bool {
    if needle.is_empty() {
        return true;
    }
    let needle = needle.to_lowercase();
    [
        part.id.as_str(),
        part.vendor.as_str(),
        part.model.as_str(),
        part.description.as_str(),
    ]
    .iter()
    .any(|s| s.to_lowercase().contains(&needle))
}

/// One line of detail for a part's tooltip.
fn summary(part: &Part) -> String {
    let spec = match &part.spec {
        PartSpec::Node(n) => format!("{} × {}", n.gpu_count, n.gpu),
        PartSpec::Domain(d) => format!("{} GPUs in {} trays", d.gpus, d.members),
        PartSpec::Switch(s) => format!("{} × {}", s.ports, s.port_gbit_s),
        PartSpec::Gpu(g) => format!("{:.0} GB", g.memory_gb),
        PartSpec::Nic(n) => format!("{} × {}", n.ports, n.port_gbit_s),
        PartSpec::Cable(c) => format!("{}, up to {} m", c.speed_gbit_s, c.max_length_m),
    };
    let price = match &part.price {
        Some(p) => format!(
            "{}{} ({})",
            p.usd,
            if part.estimate { " est." } else { "" },
            p.date
        ),
        None => "no price".to_string(),
    };
    format!("{spec} · {price} · {}", part.power_w)
}

pub fn palette_ui(ui: &mut Ui, catalog: &Catalog, state: &mut PaletteState) -> Vec<PaletteEvent> {
    let mut events = Vec::new();
    ui.heading("Parts");
    ui.add(
        egui::TextEdit::singleline(&mut state.search)
            .hint_text("search parts")
            .desired_width(f32::INFINITY),
    );
    if ui
        .button("Generate…")
        .on_hover_text("Build a whole fabric from a template")
        .clicked()
    {
        events.push(PaletteEvent::OpenGenerate);
    }
    ui.separator();
    egui::ScrollArea::vertical().show(ui, |ui| {
        for (category, title, is_device) in SECTIONS {
            let parts: Vec<&Part> = catalog
                .parts()
                .filter(|p| p.category() == category && matches(p, &state.search))
                .collect();
            if parts.is_empty() {
                continue;
            }
            egui::CollapsingHeader::new(format!("{title} ({})", parts.len()))
                .id_salt(title)
                .default_open(is_device || !state.search.is_empty())
                .show(ui, |ui| {
                    for part in parts {
                        let text = format!("{} {}", part.vendor, part.model);
                        if is_device {
                            let id = egui::Id::new(("palette", part.id.as_str()));
                            let drop = PaletteDrop {
                                part: part.id.clone(),
                            };
                            let dragged = ui.dnd_drag_source(id, drop, |ui| {
                                ui.add(egui::Label::new(&text).selectable(false))
                            });
                            // The drag source senses drags only: the same widget also senses
                            // clicks, so a double-click reaches it.
                            let r = ui
                                .interact(dragged.response.rect, id, egui::Sense::click_and_drag())
                                .on_hover_text(format!(
                                    "{}\nDrag onto the canvas, or double-click to add.",
                                    summary(part)
                                ));
                            if r.double_clicked() {
                                events.push(PaletteEvent::Add(part.id.clone()));
                            }
                        } else {
                            ui.weak(&text).on_hover_text(summary(part));
                        }
                    }
                });
        }
    });
    events
}

/// The Generate dialog: a template and its parameters; "default" leaves a choice to the
/// template.
pub struct GenerateDialog {
    pub open: bool,
    pub spec: TemplateSpec,
    pub error: Option<String>,
}

impl Default for GenerateDialog {
    fn default() -> Self {
        Self {
            open: false,
            spec: TemplateSpec::new(Template::RailOptimized),
            error: None,
        }
    }
}

fn template_help(t: Template) -> &'static str {
    match t {
        Template::Single => "one node on its own",
        Template::Star => "nodes on one switch",
        Template::FatTree => "leaf/spine(/core) Clos, every NIC into its rack's leaf",
        Template::RailOptimized => "NIC i of every node on rail i's leaf, spines above",
        Template::RailOnly => "one switch per rail, no spines",
        Template::Ring => "direct cables in a ring",
        Template::Chain => "direct cables in a line",
        Template::Mesh => "direct cables, every node to every node",
        Template::Nvl72 => "GB200 NVL72 racks",
    }
}

/// An optional catalog part: "default" or one of a category.
fn optional_part(
    ui: &mut Ui,
    label: &str,
    catalog: &Catalog,
    categories: &[PartCategory],
    value: &mut Option<PartId>,
) {
    let shown = value.as_ref().map_or_else(
        || "default".to_string(),
        |id| {
            catalog
                .get(id)
                .map_or_else(|| id.to_string(), |p| p.model.clone())
        },
    );
    ui.label(label);
    ComboBox::from_id_salt(label)
        .selected_text(shown)
        .width(200.0)
        .show_ui(ui, |ui| {
            ui.selectable_value(value, None, "default");
            for part in catalog
                .parts()
                .filter(|p| categories.contains(&p.category()))
            {
                ui.selectable_value(
                    value,
                    Some(part.id.clone()),
                    format!("{} {}", part.vendor, part.model),
                );
            }
        });
    ui.end_row();
}

fn optional_number<T>(
    ui: &mut Ui,
    label: &str,
    value: &mut Option<T>,
    fallback: T,
    range: std::ops::RangeInclusive<T>,
) where
    T: egui::emath::Numeric,
{
    ui.label(label);
    ui.horizontal(|ui| {
        let mut set = value.is_some();
        if ui.checkbox(&mut set, "").changed() {
            *value = set.then_some(fallback);
        }
        match value {
            Some(v) => {
                ui.add(DragValue::new(v).range(range));
            }
            None => {
                ui.weak("default");
            }
        }
    });
    ui.end_row();
}

/// Shows the dialog if open; returns a generated design to open in a new tab.
pub fn generate_dialog_ui(
    ctx: &egui::Context,
    catalog: &Catalog,
    dialog: &mut GenerateDialog,
) -> Option<Design> {
    if !dialog.open {
        return None;
    }
    let mut open = dialog.open;
    let mut result = None;
    super::files::dialog_window(ctx, "Generate a design", &mut open).show(ctx, |ui| {
        let spec = &mut dialog.spec;
        egui::Grid::new("generate-params")
            .num_columns(2)
            .spacing([12.0, 6.0])
            .show(ui, |ui| {
                ui.label("Template");
                ComboBox::from_id_salt("template")
                    .selected_text(spec.template.cli_name())
                    .show_ui(ui, |ui| {
                        for t in Template::ALL {
                            ui.selectable_value(&mut spec.template, t, t.cli_name())
                                .on_hover_text(template_help(t));
                        }
                    });
                ui.end_row();
                ui.label("");
                ui.weak(template_help(spec.template));
                ui.end_row();
                let nodes_label = if spec.template == Template::Nvl72 {
                    "Racks"
                } else {
                    "Nodes"
                };
                optional_number(ui, nodes_label, &mut spec.nodes, 4, 1..=131_072);
                optional_part(ui, "Node", catalog, &[PartCategory::Node], &mut spec.node);
                optional_part(ui, "GPU", catalog, &[PartCategory::Gpu], &mut spec.gpu);
                optional_number(ui, "GPUs per node", &mut spec.gpus_per_node, 8, 1..=16);
                optional_number(ui, "PCIe generation", &mut spec.pcie_generation, 5, 3..=6);
                ui.label("NVLink bridges");
                ui.checkbox(&mut spec.nvlink_bridge, "pair cards with bridges");
                ui.end_row();
                optional_part(ui, "NIC", catalog, &[PartCategory::Nic], &mut spec.nic);
                optional_number(ui, "NICs per node", &mut spec.nics_per_node, 8, 0..=16);
                ui.label("Transport");
                ui.horizontal(|ui| {
                    ui.radio_value(&mut spec.transport, None, "default");
                    ui.radio_value(&mut spec.transport, Some(Transport::Rdma), "RDMA");
                    ui.radio_value(&mut spec.transport, Some(Transport::Tcp), "TCP");
                    ui.radio_value(&mut spec.transport, Some(Transport::Efa), "EFA")
                        .on_hover_text("AWS Elastic Fabric Adapter (SRD) on the Ethernet links");
                });
                ui.end_row();
                // Only what the template reads: a single box has no switch, a switched fabric
                // no direct cable.
                if spec.template.builds_switches() {
                    optional_part(
                        ui,
                        "Switch",
                        catalog,
                        &[PartCategory::Switch],
                        &mut spec.switch,
                    );
                }
                if spec.template.takes_a_cable() {
                    optional_part(
                        ui,
                        "Cable (direct)",
                        catalog,
                        &[PartCategory::Cable],
                        &mut spec.link,
                    );
                }
                if spec.template.builds_switches() && spec.template != Template::Star {
                    ui.label("Oversubscription");
                    ui.add(
                        DragValue::new(&mut spec.oversubscription)
                            .range(1.0..=16.0)
                            .speed(0.05)
                            .suffix(" : 1"),
                    );
                    ui.end_row();
                    ui.label("Switch tiers");
                    ui.add(DragValue::new(&mut spec.tiers).range(1..=3));
                    ui.end_row();
                }
            });
        if let Some(error) = &dialog.error {
            ui.colored_label(ui.visuals().error_fg_color, error);
        }
        ui.horizontal(|ui| {
            if ui.button("Generate").clicked() {
                // A field the template hides keeps its value for the next template that shows
                // it, but does not reach this one.
                let mut spec = dialog.spec.clone();
                if !spec.template.takes_a_cable() {
                    spec.link = None;
                }
                if !spec.template.builds_switches() {
                    spec.switch = None;
                }
                if !spec.template.builds_switches() || spec.template == Template::Star {
                    spec.oversubscription = 1.0;
                }
                match generate(&spec, catalog) {
                    Ok(design) => {
                        dialog.error = None;
                        result = Some(design);
                    }
                    Err(e) => dialog.error = Some(e.to_string()),
                }
            }
            if ui.button("Reset").clicked() {
                dialog.spec = TemplateSpec::new(dialog.spec.template);
                dialog.error = None;
            }
        });
        ui.label(RichText::new("The design opens in a new tab.").weak());
    });
    dialog.open = open && result.is_none();
    result
}
