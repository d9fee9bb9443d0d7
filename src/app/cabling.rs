//! The Check cabling… window: a fabric listing (`ibnetdiscover` output) read from a path typed
//! in, set against the active design with `analysis::as_built` (the call behind `railyard
//! check-cabling`), and its faults listed. Hovering a fault lights its drawn links on the
//! canvas; clicking selects its links and devices (extra and swapped cables exist only as
//! built, so their devices are what the canvas can show).

use crate::analysis::as_built::{CablingReport, check_cabling, resolve};
use crate::io::ib_names::{NameMap, parse_name_map};
use crate::io::ibnetdiscover::parse_observed;
use crate::model::units::time_text;
use crate::model::{Bandwidth, Catalog, Design, DeviceId, LinkId};
use egui::{RichText, ScrollArea, TextEdit, Ui};

/// Listings larger than this are not read.
const MAX_LISTING_BYTES: u64 = 64 * 1024 * 1024;

/// State of the window; lives across frames on the app.
#[derive(Debug, Default)]
pub struct CablingWindow {
    pub open: bool,
    /// The listing's path, typed in (no dialog: the window must work without a portal).
    pub path: String,
    /// An optional mapping file's path.
    pub map: String,
    /// The last check, or why it could not run.
    pub result: Option<Result<CablingReport, String>>,
    /// Links of the fault under the pointer on the last frame, for the canvas.
    hovered: Vec<LinkId>,
}

/// What the window asks of the canvas this frame.
#[derive(Debug, Default)]
pub struct CablingOutcome {
    /// Select these devices and links (a fault was clicked).
    pub select: Option<(Vec<DeviceId>, Vec<LinkId>)>,
}

fn read(path: &str) -> Result<String, String> {
    let path = std::path::Path::new(path.trim());
    let size = std::fs::metadata(path)
        .map_err(|e| crate::io::path_error(path, &e))?
        .len();
    if size > MAX_LISTING_BYTES {
        return Err(format!("{}: {size} bytes, over the limit", path.display()));
    }
    let bytes = std::fs::read(path).map_err(|e| crate::io::path_error(path, &e))?;
    Ok(String::from_utf8_lossy(&bytes).into_owned())
}

impl CablingWindow {
    /// Links to light on the canvas: those of the fault the pointer was over.
    pub fn hovered_links(&self) -> &[LinkId] {
        if self.open { &self.hovered } else { &[] }
    }

    /// Reads the listing (and the mapping file, when given) and checks the design against it.
    pub fn run(&mut self, design: &Design, catalog: &Catalog) {
        let check = || -> Result<CablingReport, String> {
            let observed = parse_observed(&read(&self.path)?)
                .map_err(|e| format!("{}: {e}", self.path.trim()))?;
            let map = if self.map.trim().is_empty() {
                NameMap::default()
            } else {
                parse_name_map(&read(&self.map)?)
                    .map_err(|e| format!("{}: {e}", self.map.trim()))?
            };
            Ok(check_cabling(
                design,
                catalog,
                &resolve(design, &observed, &map),
            ))
        };
        self.result = Some(check());
    }

    pub fn show(
        &mut self,
        ctx: &egui::Context,
        design: &Design,
        catalog: &Catalog,
    ) -> CablingOutcome {
        let mut outcome = CablingOutcome::default();
        if !self.open {
            self.hovered.clear();
            return outcome;
        }
        let mut open = self.open;
        egui::Window::new("Check cabling")
            .open(&mut open)
            .default_width(640.0)
            .default_height(520.0)
            .show(ctx, |ui| outcome = self.ui(ui, design, catalog));
        self.open = open;
        outcome
    }

    pub fn ui(&mut self, ui: &mut Ui, design: &Design, catalog: &Catalog) -> CablingOutcome {
        let mut outcome = CablingOutcome::default();
        ui.label("What was cabled: ibnetdiscover output, or a LocalPort|LocalGUID|RemotePort|RemoteGUID table.");
        ui.horizontal(|ui| {
            ui.label("Listing:");
            ui.add(
                TextEdit::singleline(&mut self.path)
                    .hint_text("/path/to/ibnetdiscover.txt")
                    .desired_width(360.0),
            );
        });
        ui.horizontal(|ui| {
            ui.label("Names (optional):");
            ui.add(
                TextEdit::singleline(&mut self.map)
                    .hint_text("fabric name or GUID, device[, NIC offset]")
                    .desired_width(300.0),
            );
        });
        if ui
            .add_enabled(!self.path.trim().is_empty(), egui::Button::new("Check"))
            .clicked()
        {
            self.run(design, catalog);
        }
        self.hovered.clear();
        match &self.result {
            None => {}
            Some(Err(message)) => {
                ui.colored_label(ui.visuals().error_fg_color, message);
            }
            Some(Ok(report)) => {
                ui.separator();
                ui.label(format!(
                    "{} cables found, {} as drawn ({} drawn).",
                    report.built, report.matched, report.drawn
                ));
                let time = |us: Option<f64>| us.map_or("cannot run".to_string(), time_text);
                ui.label(format!(
                    "As drawn: bisection {}, all-reduce of 1 GiB {}. As built: {}, {}.",
                    Bandwidth::from_gbit_s(report.as_drawn.bisection_gbit_s),
                    time(report.as_drawn.all_reduce_us),
                    Bandwidth::from_gbit_s(report.as_built.bisection_gbit_s),
                    time(report.as_built.all_reduce_us),
                ));
                if report.is_clean() {
                    ui.label(RichText::new("No faults: the fabric is cabled as drawn.").strong());
                }
                ScrollArea::vertical()
                    .id_salt("cabling-faults")
                    .show(ui, |ui| {
                        for fault in &report.faults {
                            let rails = fault
                                .rails
                                .iter()
                                .map(|r| format!("rail {r}"))
                                .collect::<Vec<_>>()
                                .join(", ");
                            let cost = fault.cost.as_ref().map_or_else(
                                || "not modelled".to_string(),
                                |d| {
                                    format!(
                                        "Δ bisection {:+} Gb/s, Δ all-reduce {}",
                                        d.bisection_gbit_s,
                                        d.all_reduce_us
                                            .map_or("cannot run".to_string(), |t| format!(
                                                "{t:+.1} µs"
                                            ))
                                    )
                                },
                            );
                            let response = ui
                                .add(
                                    egui::Button::new(format!(
                                        "{}  {rails}\n{}\n{cost}",
                                        fault.kind.label(),
                                        fault.summary
                                    ))
                                    .wrap(),
                                )
                                .on_hover_text(
                                    "Click to select its links and devices on the canvas",
                                );
                            if response.hovered() {
                                self.hovered.clone_from(&fault.links);
                            }
                            if response.clicked() {
                                outcome.select = Some((fault.devices.clone(), fault.links.clone()));
                            }
                        }
                    });
            }
        }
        outcome
    }
}
