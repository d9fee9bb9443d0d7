//! The Calibrate… window: paste nccl-tests output (or load it from a path typed in), fit the
//! active design's technology efficiency and latency to it, compare measured with predicted
//! (table and busbw plot), and apply the calibration as one undoable command.
//!
//! The fit is `analysis::calibrate::fit_calibration`, the call behind `railyard calibrate`.
//! It runs on the designer's background-job type (`jobs::Jobs`, which catches a panic in a
//! fit) with a spinner meanwhile (seconds on a large design); the thread wakes the UI once
//! when done, so an idle window still asks for no repaints. A newer fit waits for one still
//! computing to finish, whose result is then dropped. A
//! result for a design that changed meanwhile, for a log edited or reloaded meanwhile, or
//! after the window closed, is dropped.

use super::jobs::Jobs;
use crate::analysis::calibrate::{CalibrateError, CalibrationFit, FitOptions, fit_calibration};
use crate::analysis::collective::Op;
use crate::io::nccl_log::parse_nccl_log;
use crate::model::command::Command;
use crate::model::units::trim_number;
use crate::model::{Catalog, Design};
use egui::{Color32, ComboBox, RichText, ScrollArea, TextEdit, Ui};
use egui_plot::{Legend, Line, LineStyle, Plot, PlotPoints, Points};
use std::sync::Arc;

type FitResult = Result<CalibrationFit, String>;
/// What a fit reads: the log text, the collective, its source, the design and the catalog.
type FitQuery = (String, Option<Op>, String, Arc<Design>, Catalog);

/// The fit running in the background.
#[derive(Debug)]
struct Pending {
    ticket: u64,
    /// The design being fitted: a result only counts if the window's design still equals it.
    design: Arc<Design>,
}

/// Logs larger than this are not read into the window.
const MAX_LOG_BYTES: u64 = 16 * 1024 * 1024;

/// State of the window; lives across frames on the app.
#[derive(Debug, Default)]
pub struct CalibrateWindow {
    pub open: bool,
    /// A log file path typed in (no dialog: the window must work without a portal).
    pub path: String,
    /// The log text, pasted or loaded.
    pub text: String,
    /// The collective when the log does not name it.
    pub op: Option<Op>,
    /// Where the text came from, for the calibration's provenance.
    source: String,
    /// The last fit, or why it failed.
    result: Option<FitResult>,
    /// The fit in progress, if any.
    pending: Option<Pending>,
    /// The fitting thread (started by the first fit) and the last ticket handed out.
    jobs: Option<FitJobs>,
    tickets: u64,
}

/// The designer's one background-job type (`Jobs`), running fits.
struct FitJobs(Jobs<u64, FitQuery, FitResult>);

impl std::fmt::Debug for FitJobs {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("FitJobs")
    }
}

impl CalibrateWindow {
    /// The last fit, or its error message.
    pub fn result(&self) -> Option<&FitResult> {
        self.result.as_ref()
    }

    /// A fit is running in the background.
    pub fn is_fitting(&self) -> bool {
        self.pending.is_some()
    }

    /// Reads the log at `path` into the text field.
    pub fn load_path(&mut self) -> Result<(), String> {
        let path = std::path::Path::new(self.path.trim());
        let read = || -> Result<String, String> {
            let size = std::fs::metadata(path)
                .map_err(|e| crate::io::path_error(path, &e))?
                .len();
            if size > MAX_LOG_BYTES {
                return Err(format!(
                    "{}: {size} bytes, over the limit of {MAX_LOG_BYTES} for a log",
                    path.display()
                ));
            }
            let bytes = std::fs::read(path).map_err(|e| crate::io::path_error(path, &e))?;
            Ok(String::from_utf8_lossy(&bytes).into_owned())
        };
        match read() {
            Ok(text) => {
                self.text = text;
                self.source = path.file_name().map_or_else(
                    || path.display().to_string(),
                    |n| n.to_string_lossy().into(),
                );
                self.result = None;
                // A fit of the previous text is no longer wanted.
                self.drop_pending();
                Ok(())
            }
            Err(e) => {
                self.result = Some(Err(e.clone()));
                Err(e)
            }
        }
    }

    /// Starts parsing the text and fitting `design` to it on a background thread, replacing
    /// any fit in progress; `ctx` is woken when the result is ready (see `poll`).
    pub fn run_fit(&mut self, ctx: &egui::Context, design: &Design, catalog: &Catalog) {
        let source = if self.source.is_empty() {
            "pasted text".to_string()
        } else {
            self.source.clone()
        };
        let design = Arc::new(design.clone());
        if self.jobs.is_none() {
            match Jobs::spawn(
                "railyard-calibrate",
                ctx.clone(),
                |(text, op, source, design, catalog): FitQuery| {
                    fit_text(&text, op, source, &design, &catalog)
                },
            ) {
                Ok(jobs) => self.jobs = Some(FitJobs(jobs)),
                Err(e) => {
                    self.drop_pending();
                    self.result = Some(Err(format!("could not start the fitting thread ({e})")));
                    return;
                }
            }
        }
        self.drop_pending();
        let Some(FitJobs(jobs)) = &mut self.jobs else {
            return;
        };
        self.tickets += 1;
        let ticket = self.tickets;
        let query = (
            self.text.clone(),
            self.op,
            source,
            Arc::clone(&design),
            catalog.clone(),
        );
        jobs.request(ticket, move || query);
        self.pending = Some(Pending { ticket, design });
    }

    /// Forgets the fit in progress: its result, when it comes, is dropped.
    fn drop_pending(&mut self) {
        self.pending = None;
        if let Some(FitJobs(jobs)) = &mut self.jobs {
            jobs.retain(|_| false);
        }
    }

    /// Takes a finished fit, without waiting. A fit of a design other than `design` (edited
    /// or another tab meanwhile) is stale: it is dropped with a note to fit again.
    pub fn poll(&mut self, design: &Design) {
        let (Some(pending), Some(FitJobs(jobs))) = (&self.pending, &mut self.jobs) else {
            return;
        };
        jobs.poll();
        if jobs.is_pending(&pending.ticket) {
            return;
        }
        // No result for a key no longer pending: the fit panicked (`Jobs` catches it).
        let fit = jobs.get(&pending.ticket).map_or_else(
            || Err("the fit stopped unexpectedly".to_string()),
            |fit| (**fit).clone(),
        );
        self.result = Some(if *pending.design == *design {
            fit
        } else {
            Err("The design changed while fitting; press Fit again.".into())
        });
        self.drop_pending();
    }

    /// The window, when open; returns a command to apply (set or clear the calibration).
    pub fn show(
        &mut self,
        ctx: &egui::Context,
        design: &Design,
        catalog: &Catalog,
    ) -> Option<Command> {
        if !self.open {
            // Closed: a fit still running is no longer wanted; its thread's result is dropped.
            self.drop_pending();
            return None;
        }
        let mut open = self.open;
        let mut command = None;
        egui::Window::new("Calibrate")
            .open(&mut open)
            .default_width(720.0)
            .default_height(640.0)
            .show(ctx, |ui| command = self.ui(ui, design, catalog));
        self.open = open;
        if !open {
            self.drop_pending();
        }
        command
    }

    pub fn ui(&mut self, ui: &mut Ui, design: &Design, catalog: &Catalog) -> Option<Command> {
        self.poll(design);
        let mut command = None;
        ui.label("Paste nccl-tests output (all_reduce_perf and friends) or load a log file.");
        ui.horizontal(|ui| {
            ui.label("Log file:");
            ui.add(
                TextEdit::singleline(&mut self.path)
                    .hint_text("/path/to/all_reduce.txt")
                    .desired_width(360.0),
            );
            if ui
                .add_enabled(!self.path.trim().is_empty(), egui::Button::new("Load"))
                .clicked()
            {
                let _ = self.load_path();
            }
        });
        ScrollArea::vertical()
            .id_salt("calibrate-log")
            .max_height(140.0)
            .show(ui, |ui| {
                let edit = ui.add(
                    TextEdit::multiline(&mut self.text)
                        .code_editor()
                        .desired_rows(6)
                        .desired_width(f32::INFINITY)
                        .hint_text("# nThread 1 nGpus 8 ...\n#  size  count  type ..."),
                );
                if edit.changed() {
                    self.source.clear();
                    // A fit of the previous text is no longer wanted.
                    self.drop_pending();
                }
            });
        ui.horizontal(|ui| {
            ComboBox::from_label("collective")
                .selected_text(self.op.map_or("as the log says", |op| op.cli_name()))
                .show_ui(ui, |ui| {
                    ui.selectable_value(&mut self.op, None, "as the log says");
                    for op in Op::ALL {
                        ui.selectable_value(&mut self.op, Some(op), op.cli_name());
                    }
                });
            let fitting = self.pending.is_some();
            if ui
                .add_enabled(
                    !fitting && !self.text.trim().is_empty(),
                    egui::Button::new("Fit"),
                )
                .clicked()
            {
                self.run_fit(ui.ctx(), design, catalog);
            }
            if self.pending.is_some() {
                // The spinner repaints while it shows; nothing does once the fit is in.
                ui.spinner();
                ui.label("Fitting…");
            }
        });
        if let Some(cal) = &design.calibration {
            ui.label(format!(
                "The design is calibrated from {} ({}).",
                if cal.source.is_empty() {
                    "a log"
                } else {
                    &cal.source
                },
                cal.test
            ));
            if ui.button("Clear calibration").clicked() {
                command = Some(Command::SetCalibration(None));
            }
        }
        ui.separator();
        match &self.result {
            None => {}
            Some(Err(message)) => {
                ui.colored_label(ui.visuals().error_fg_color, message);
            }
            Some(Ok(fit)) => {
                fitted_values(ui, fit);
                if ui
                    .button("Apply to design")
                    .on_hover_text("Save these values with the design (undoable)")
                    .clicked()
                {
                    command = Some(Command::SetCalibration(Some(Box::new(
                        fit.calibration.clone(),
                    ))));
                }
                busbw_plot(ui, fit);
                comparison_table(ui, fit);
            }
        }
        command
    }
}

fn fitted_values(ui: &mut Ui, fit: &CalibrationFit) {
    ui.label(
        RichText::new(format!(
            "{} on {} GPUs, from {}",
            fit.op.cli_name(),
            fit.gpus,
            fit.calibration.source
        ))
        .strong(),
    );
    for line in fit.fitted_lines("→", "µ") {
        ui.label(line);
    }
    for note in &fit.notes {
        ui.label(RichText::new(note).italics());
    }
}

/// Parses `text` and fits `design` to it: the work of one fit, on the fitting thread.
fn fit_text(
    text: &str,
    op: Option<Op>,
    source: String,
    design: &Design,
    catalog: &Catalog,
) -> FitResult {
    let log = parse_nccl_log(text).map_err(|e| e.to_string())?;
    let options = FitOptions {
        op,
        gpus: None,
        source,
        fitted_at_unix_s: std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map_or(0, |d| d.as_secs()),
    };
    fit_calibration(design, catalog, &log, &options).map_err(|e| match e {
        // The CLI's wording names its --op flag; here the choice is the collective menu.
        CalibrateError::UnknownOp => {
            "the log does not say which collective it measured: choose it in the collective \
             menu"
                .to_string()
        }
        e => e.to_string(),
    })
}

/// busbw against size, both on log axes: log2 bytes and log10 GB/s.
fn busbw_plot(ui: &mut Ui, fit: &CalibrationFit) {
    let series = |value: &dyn Fn(&crate::analysis::calibrate::RowComparison) -> f64| {
        fit.rows
            .iter()
            .filter_map(|r| {
                let y = value(r);
                (y > 0.0).then(|| [(r.bytes.0 as f64).log2(), y.log10()])
            })
            .collect::<Vec<[f64; 2]>>()
    };
    let measured = series(&|r| r.measured_busbw_gbyte_s);
    let before = series(&|r| r.before_busbw_gbyte_s);
    let after = series(&|r| r.predicted_busbw_gbyte_s);
    Plot::new("calibrate-busbw")
        .height(220.0)
        .legend(Legend::default())
        .x_axis_label("message size")
        .y_axis_label("busbw")
        .x_axis_formatter(|mark, _| {
            let v = mark.value.round();
            if (mark.value - v).abs() < 1e-6 && (0.0..=63.0).contains(&v) {
                crate::model::Bytes(1u64 << v as u32).to_string()
            } else {
                String::new()
            }
        })
        .y_axis_formatter(|mark, _| format!("{} GB/s", trim_number(10f64.powf(mark.value))))
        .show(ui, |plot| {
            plot.line(
                Line::new("model before", PlotPoints::from(before))
                    .color(Color32::GRAY)
                    .style(LineStyle::dashed_loose()),
            );
            plot.line(Line::new("model fitted", PlotPoints::from(after)).width(2.0));
            plot.points(
                Points::new("measured", PlotPoints::from(measured))
                    .radius(3.0)
                    .color(Color32::from_rgb(230, 120, 30)),
            );
        });
}

fn comparison_table(ui: &mut Ui, fit: &CalibrationFit) {
    ScrollArea::vertical()
        .id_salt("calibrate-table")
        .max_height(240.0)
        .show(ui, |ui| {
            egui::Grid::new("calibrate-rows")
                .striped(true)
                .num_columns(7)
                .show(ui, |ui| {
                    for h in [
                        "size",
                        "measured µs",
                        "busbw",
                        "fitted µs",
                        "busbw",
                        "error",
                        "algorithm",
                    ] {
                        ui.strong(h);
                    }
                    ui.end_row();
                    for r in &fit.rows {
                        ui.label(r.bytes.to_string());
                        ui.label(format!("{:.2}", r.measured_time_us));
                        ui.label(format!("{:.2}", r.measured_busbw_gbyte_s));
                        ui.label(format!("{:.2}", r.predicted_time_us));
                        ui.label(format!("{:.2}", r.predicted_busbw_gbyte_s));
                        ui.label(format!("{:+.1} %", r.time_error() * 100.0));
                        ui.label(format!("{} {}", r.algorithm, r.protocol.label()));
                        ui.end_row();
                    }
                });
        });
}
