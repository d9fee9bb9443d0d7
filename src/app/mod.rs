//! The designer window (eframe/egui): one file per panel.

pub mod actions;
pub mod document;
pub mod files;
pub mod inspector;
pub mod worker;

use std::path::PathBuf;

/// Opens the designer window, optionally with a design file.
pub fn run(file: Option<PathBuf>) -> anyhow::Result<()> {
    let options = eframe::NativeOptions::default();
    eframe::run_native(
        "railyard",
        options,
        Box::new(move |_cc| Ok(Box::new(Placeholder { file }))),
    )
    .map_err(|e| anyhow::anyhow!("could not open the designer window: {e}"))
}

struct Placeholder {
    file: Option<PathBuf>,
}

impl eframe::App for Placeholder {
    fn ui(&mut self, ui: &mut egui::Ui, _frame: &mut eframe::Frame) {
        egui::CentralPanel::default().show(ui, |ui| {
            ui.heading("railyard");
            if let Some(f) = &self.file {
                ui.label(f.display().to_string());
            }
        });
    }
}
