//! The Compare view: chosen open designs side by side, one column each, with the change of
//! every figure against a baseline the user picks (the menu or a column's "make baseline"),
//! coloured better or worse, and a bar chart of one figure. Each row reads in one unit
//! (`row_units`); each design keeps its colour here, in Plots and in the legend
//! (`design_colour`).
//!
//! The figures are `railyard compare`'s (`analysis::compare`). Each design's column is computed
//! once per (tab, revision, size, sidebar workload) on a background thread and cached, so
//! ticking a column or changing the baseline costs nothing, and no frame waits for an
//! evaluation.

use crate::analysis::collective::{Routing, Workload, sweep_sizes};
use crate::analysis::compare::{Comparison, ComparisonRow, Quantity, compare_with, deltas_of};
use crate::io::row_units::{axis_text, row_texts};
use crate::io::validation_sets::published;
use crate::model::{Bytes, Catalog, Design};
use egui::{Color32, ComboBox, RichText, Ui};
use egui_plot::{Bar, BarChart, Plot};
use std::collections::{BTreeSet, HashSet};
use std::sync::Arc;

use super::RailyardApp;
pub use super::jobs::Jobs;
use super::tabs::Tab;

/// What the Compare window says of the job it asks of every design: whose it is, and the
/// kernel efficiency it sets on every GPU, if any.
fn job_line(w: &Workload, job_of: &str) -> String {
    let what = if w.serving { "serving" } else { "training" };
    let efficiency = match w.efficiency {
        Some(e) => format!(
            "; its kernel efficiency, {:.0} % of peak, on every design's GPUs",
            e * 100.0
        ),
        None => "; each GPU at its generation's published kernel efficiency".to_string(),
    };
    format!(
        "Every design runs {job_of}'s job ({what} {}){efficiency}",
        w.name
    )
}

/// One column's cache key: the tab, its design's revision, the collective size and the
/// sidebar's workload (`workload_key`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct ColumnKey {
    pub tab: u64,
    pub revision: u64,
    pub bytes: u64,
    pub workload: u64,
}

pub struct ColumnJob {
    pub design: Arc<Design>,
    pub bytes: Bytes,
    pub workload: Option<Workload>,
}

/// Tells workloads apart in a `ColumnKey` (0: none).
pub fn workload_key(workload: Option<&Workload>) -> u64 {
    use std::hash::{Hash, Hasher};
    workload.map_or(0, |w| {
        let mut h = std::collections::hash_map::DefaultHasher::new();
        format!("{w:?}").hash(&mut h);
        h.finish() | 1
    })
}

/// A one-column comparison: the design's figures exactly as `compare` computes them.
pub type ColumnJobs = Jobs<ColumnKey, ColumnJob, Comparison>;

pub fn spawn_column_jobs(
    ctx: &egui::Context,
    catalog: Arc<Catalog>,
) -> std::io::Result<ColumnJobs> {
    Jobs::spawn("railyard-compare", ctx.clone(), move |job: ColumnJob| {
        let design = Design::clone(&job.design);
        compare_with(
            &[(design.name.clone(), design)],
            &catalog,
            job.bytes,
            0,
            job.workload.as_ref(),
            Some(published()),
            Routing::Ecmp,
        )
    })
}

/// Puts single-design columns side by side with deltas against column `baseline`, by the
/// same rule as `analysis::compare::compare` (the Compare test checks they agree).
pub fn assemble(columns: &[(String, &Comparison)], baseline: usize, bytes: Bytes) -> Comparison {
    let baseline = if baseline < columns.len() {
        baseline
    } else {
        0
    };
    let heads: &[ComparisonRow] = columns.first().map_or(&[], |(_, c)| c.rows.as_slice());
    let rows = heads
        .iter()
        .enumerate()
        .map(|(i, head)| {
            let values: Vec<Option<f64>> = columns
                .iter()
                .map(|(_, c)| {
                    c.rows
                        .get(i)
                        .and_then(|r| r.values.first().copied().flatten())
                })
                .collect();
            let deltas = deltas_of(head.quantity, &values, baseline);
            ComparisonRow {
                key: head.key,
                label: head.label.clone(),
                quantity: head.quantity,
                values,
                deltas,
            }
        })
        .collect();
    Comparison {
        scenarios: columns.iter().map(|(name, _)| name.clone()).collect(),
        baseline,
        bytes,
        rows,
        all_reduce_by: columns
            .iter()
            .map(|(_, c)| c.all_reduce_by.first().cloned().unwrap_or_default())
            .collect(),
        all_reduce_checked: columns
            .iter()
            .map(|(_, c)| c.all_reduce_checked.first().cloned().flatten())
            .collect(),
        unknown_why: columns
            .iter()
            .map(|(_, c)| c.unknown_why.first().cloned().flatten())
            .collect(),
        cost_gaps: columns
            .iter()
            .map(|(_, c)| c.cost_gaps.first().cloned().flatten())
            .collect(),
        fitted: columns
            .iter()
            .map(|(_, c)| c.fitted.first().cloned().flatten())
            .collect(),
        advice: columns
            .iter()
            .map(|(_, c)| c.advice.first().cloned().unwrap_or_default())
            .collect(),
        routing: columns.first().map_or(Routing::Ecmp, |(_, c)| c.routing),
    }
}

/// What the Compare window remembers between frames.
pub struct CompareView {
    pub open: bool,
    /// Tabs (by `Tab::id`) shown as columns.
    chosen: BTreeSet<u64>,
    /// Tabs seen before: a newly opened design starts ticked, an unticked one stays so.
    seen: HashSet<u64>,
    baseline: Option<u64>,
    pub bytes: u64,
    /// Row key of the figure the bar chart shows.
    chart: &'static str,
    jobs: Option<ColumnJobs>,
    /// The table shown on the last frame, once every column had arrived.
    shown: Option<Comparison>,
    error: Option<String>,
}

impl Default for CompareView {
    fn default() -> Self {
        Self {
            open: false,
            chosen: BTreeSet::new(),
            seen: HashSet::new(),
            baseline: None,
            bytes: 1 << 30,
            chart: "total_cost_usd",
            jobs: None,
            shown: None,
            error: None,
        }
    }
}

impl CompareView {
    /// Tab ids chosen as columns, in tab order.
    pub(super) fn chosen_tabs(&self, tabs: &[Tab]) -> Vec<u64> {
        tabs.iter()
            .map(|t| t.id)
            .filter(|id| self.chosen.contains(id))
            .collect()
    }

    /// Keeps the choice in step with the open tabs: new ones ticked, closed ones dropped.
    fn sync_tabs(&mut self, tabs: &[Tab]) {
        let open: HashSet<u64> = tabs.iter().map(|t| t.id).collect();
        for tab in tabs {
            if self.seen.insert(tab.id) {
                self.chosen.insert(tab.id);
            }
        }
        self.chosen.retain(|id| open.contains(id));
        self.seen.retain(|id| open.contains(id));
        if self.baseline.is_none_or(|b| !self.chosen.contains(&b)) {
            self.baseline = self.chosen_tabs(tabs).first().copied();
        }
    }

    /// Polls the background jobs and asks for the columns that are missing. Runs every
    /// frame while the window is open; does nothing when it is closed.
    fn drive(
        &mut self,
        ctx: &egui::Context,
        tabs: &[Tab],
        catalog: &Arc<Catalog>,
        workload: Option<&Workload>,
    ) {
        if self.jobs.is_none() {
            match spawn_column_jobs(ctx, Arc::clone(catalog)) {
                Ok(jobs) => self.jobs = Some(jobs),
                Err(e) => {
                    self.error = Some(format!("could not start the comparison thread ({e})"));
                    return;
                }
            }
        }
        let Some(jobs) = &mut self.jobs else {
            return;
        };
        jobs.poll();
        let current: HashSet<(u64, u64)> = tabs.iter().map(|t| (t.id, t.doc.revision())).collect();
        jobs.retain(|k| current.contains(&(k.tab, k.revision)));
        for tab in tabs.iter().filter(|t| self.chosen.contains(&t.id)) {
            let key = ColumnKey {
                tab: tab.id,
                revision: tab.doc.revision(),
                bytes: self.bytes,
                workload: workload_key(workload),
            };
            jobs.request(key, || ColumnJob {
                design: tab.doc.shared_design(),
                bytes: Bytes(key.bytes),
                workload: workload.cloned(),
            });
        }
    }

    /// The comparison of the chosen tabs and their ids, column by column, if every column has
    /// been computed; else how many of them are ready.
    fn comparison(
        &self,
        tabs: &[Tab],
        workload: Option<&Workload>,
    ) -> Result<(Comparison, Vec<u64>), (usize, usize)> {
        let chosen: Vec<&Tab> = tabs
            .iter()
            .filter(|t| self.chosen.contains(&t.id))
            .collect();
        let Some(jobs) = &self.jobs else {
            return Err((0, chosen.len()));
        };
        let columns: Vec<(String, &Comparison)> = chosen
            .iter()
            .filter_map(|t| {
                let key = ColumnKey {
                    tab: t.id,
                    revision: t.doc.revision(),
                    bytes: self.bytes,
                    workload: workload_key(workload),
                };
                jobs.get(&key).map(|c| (t.doc.title(), c.as_ref()))
            })
            .collect();
        if columns.len() < chosen.len() {
            return Err((columns.len(), chosen.len()));
        }
        let baseline = chosen
            .iter()
            .position(|t| Some(t.id) == self.baseline)
            .unwrap_or(0);
        let tab_ids = chosen.iter().map(|t| t.id).collect();
        Ok((assemble(&columns, baseline, Bytes(self.bytes)), tab_ids))
    }

    /// The Compare window; with the sidebar's `workload`, rows for its communication too.
    /// `job_of`: the title of the design whose job every design is asked.
    pub(super) fn window(
        &mut self,
        ctx: &egui::Context,
        tabs: &[Tab],
        catalog: &Arc<Catalog>,
        workload: Option<&Workload>,
        job_of: &str,
    ) {
        if !self.open {
            return;
        }
        self.sync_tabs(tabs);
        self.drive(ctx, tabs, catalog, workload);
        let mut open = true;
        egui::Window::new("Compare")
            .open(&mut open)
            .default_size([760.0, 700.0])
            .vscroll(true)
            .show(ctx, |ui| self.contents(ui, tabs, workload, job_of));
        self.open = open;
    }

    fn contents(&mut self, ui: &mut Ui, tabs: &[Tab], workload: Option<&Workload>, job_of: &str) {
        if let Some(error) = &self.error {
            ui.colored_label(ui.visuals().error_fg_color, error);
            return;
        }
        ui.horizontal_wrapped(|ui| {
            ui.label("Columns:");
            for tab in tabs {
                let mut on = self.chosen.contains(&tab.id);
                if ui.checkbox(&mut on, tab.doc.title()).changed() {
                    if on {
                        self.chosen.insert(tab.id);
                    } else {
                        self.chosen.remove(&tab.id);
                    }
                }
            }
        });
        ui.horizontal(|ui| {
            let chosen: Vec<&Tab> = tabs
                .iter()
                .filter(|t| self.chosen.contains(&t.id))
                .collect();
            let baseline_title = chosen
                .iter()
                .find(|t| Some(t.id) == self.baseline)
                .map_or_else(|| "—".to_string(), |t| t.doc.title());
            ComboBox::from_label("baseline")
                .selected_text(baseline_title)
                .show_ui(ui, |ui| {
                    for tab in &chosen {
                        ui.selectable_value(&mut self.baseline, Some(tab.id), tab.doc.title());
                    }
                });
            ComboBox::from_label("message size")
                .selected_text(Bytes(self.bytes).to_string())
                .height(300.0)
                .show_ui(ui, |ui| {
                    for size in sweep_sizes() {
                        ui.selectable_value(&mut self.bytes, size.0, size.to_string());
                    }
                });
        });
        if self.chosen.is_empty() {
            self.shown = None;
            ui.weak("Tick the designs to compare.");
            return;
        }
        if let Some(w) = workload {
            // One job for all, so the columns time the same work: say whose, and that a
            // kernel efficiency set for one GPU applies to every design's.
            ui.weak(job_line(w, job_of));
        }
        ui.separator();
        match self.comparison(tabs, workload) {
            Ok((c, tab_ids)) => {
                let colours: Vec<Color32> = tab_ids.iter().map(|&id| design_colour(id)).collect();
                if let Some(column) = table_ui(ui, &c, &colours) {
                    self.baseline = tab_ids.get(column).copied();
                }
                ui.separator();
                self.chart_ui(ui, &c, &colours);
                self.shown = Some(c);
            }
            Err((ready, total)) => {
                self.shown = None;
                ui.horizontal(|ui| {
                    ui.spinner();
                    ui.weak(format!("computing… {ready} of {total} designs ready"));
                });
            }
        }
    }

    fn chart_ui(&mut self, ui: &mut Ui, c: &Comparison, colours: &[Color32]) {
        let Some(row) = c.row(self.chart).or_else(|| c.rows.first()) else {
            return;
        };
        ComboBox::from_label("chart")
            .selected_text(&row.label)
            .show_ui(ui, |ui| {
                for r in &c.rows {
                    ui.selectable_value(&mut self.chart, r.key, &r.label);
                }
            });
        let quantity = row.quantity;
        let bars: Vec<Bar> = row
            .values
            .iter()
            .enumerate()
            .filter_map(|(i, v)| {
                v.map(|v| {
                    Bar::new(i as f64, chart_value(quantity, v))
                        .name(&c.scenarios[i])
                        .width(0.6)
                        .fill(colours.get(i).copied().unwrap_or(Color32::GRAY))
                })
            })
            .collect();
        // Each bar's figure above it, in the row's unit: a design a hundred times smaller
        // than another is a sliver of a bar, but its figure still reads.
        let figures: Vec<(f64, f64, String)> = row
            .values
            .iter()
            .zip(row_texts(row, c.baseline))
            .enumerate()
            .filter_map(|(i, (v, text))| v.map(|v| (i as f64, chart_value(quantity, v), text)))
            .collect();
        let top = figures.iter().map(|f| f.1).fold(0.0, f64::max);
        let names = c.scenarios.clone();
        Plot::new("compare-chart")
            .include_y(0.0)
            // Room above the tallest bar for its figure.
            .include_y(top * 1.15)
            .height(220.0)
            .allow_drag(false)
            .allow_zoom(false)
            .allow_scroll(false)
            // A mark under every bar, so each is named (egui_plot's own spacing skipped some).
            .x_grid_spacer(egui_plot::uniform_grid_spacer(|_| [1.0, 1.0, 1.0]))
            .y_axis_formatter(move |mark, _| axis_text(quantity, mark.value))
            .x_axis_formatter(move |mark, _| {
                let i = mark.value.round();
                if (mark.value - i).abs() < 1e-6 && i >= 0.0 {
                    names.get(i as usize).cloned().unwrap_or_default()
                } else {
                    String::new()
                }
            })
            .show(ui, |plot| {
                plot.bar_chart(BarChart::new(row.label.clone(), bars));
                for (x, y, text) in figures {
                    plot.text(
                        egui_plot::Text::new(
                            "figure",
                            egui_plot::PlotPoint::new(x, y),
                            RichText::new(text).strong().size(13.0),
                        )
                        .anchor(egui::Align2::CENTER_BOTTOM),
                    );
                }
            });
    }
}

/// The number a bar shows: fractions as percentages, the rest in the row's own unit.
fn chart_value(quantity: Quantity, value: f64) -> f64 {
    match quantity {
        Quantity::Fraction => value * 100.0,
        _ => value,
    }
}

/// The colour of a design (by its tab's id, which stays while tabs open and close) in the
/// Compare chart, the Plots and their legends, so a design looks the same in every view.
pub fn design_colour(tab_id: u64) -> Color32 {
    const COLOURS: [Color32; 6] = [
        Color32::from_rgb(90, 150, 230),
        Color32::from_rgb(230, 140, 60),
        Color32::from_rgb(90, 190, 110),
        Color32::from_rgb(210, 90, 90),
        Color32::from_rgb(160, 110, 210),
        Color32::from_rgb(180, 160, 80),
    ];
    COLOURS[(tab_id % COLOURS.len() as u64) as usize]
}

/// Which way a figure is better, by row key; None where neither is (GPUs, cost shares).
pub fn higher_is_better(key: &str) -> Option<bool> {
    match key {
        "bisection_gbit_s"
        | "bisection_ratio"
        | "all_reduce_busbw_gbyte_s"
        | "decode_tokens_per_s"
        | "mfu" => Some(true),
        "total_cost_usd"
        | "cost_per_gpu_usd"
        | "power_w"
        | "all_reduce_time_us"
        | "all_to_all_time_us"
        | "workload_step_us"
        | "workload_over_ideal"
        | "step_us"
        | "usd_per_million_tokens"
        | "check_errors"
        | "advice_items" => Some(false),
        _ => None,
    }
}

const BETTER: Color32 = Color32::from_rgb(80, 190, 100);
const WORSE: Color32 = Color32::from_rgb(230, 90, 80);

/// The colour of a change: better, worse, or the plain text colour.
fn delta_colour(ui: &Ui, key: &str, delta: f64) -> Color32 {
    match higher_is_better(key) {
        _ if delta.abs() < 0.0005 => ui.visuals().text_color(),
        Some(higher) if (delta > 0.0) == higher => BETTER,
        Some(_) => WORSE,
        None => ui.visuals().text_color(),
    }
}

/// A small square of a design's colour, as in the chart and the plots' legend.
pub fn colour_swatch(ui: &mut Ui, colour: Color32) {
    let size = egui::vec2(10.0, 10.0);
    let (rect, _) = ui.allocate_exact_size(size, egui::Sense::hover());
    ui.painter().rect_filled(rect, 2.0, colour);
}

/// The figures in a grid: one column per scenario headed by its colour, each non-baseline
/// value followed by its change against the baseline in the better or worse colour. Returns
/// the column whose "make baseline" was clicked.
fn table_ui(ui: &mut Ui, c: &Comparison, colours: &[Color32]) -> Option<usize> {
    let mut new_baseline = None;
    // The table scrolls sideways within the window, so that many columns neither widen the
    // window past the screen nor stop the notes under it wrapping.
    egui::ScrollArea::horizontal()
        .id_salt("compare-table-scroll")
        .show(ui, |ui| grid_ui(ui, c, colours, &mut new_baseline));
    // Different GPU counts, and why a figure is unknown.
    for note in c.notes() {
        ui.weak(note);
    }
    new_baseline
}

/// The figures in rows, one column per design; `new_baseline` takes a column whose "make
/// baseline" was clicked.
fn grid_ui(ui: &mut Ui, c: &Comparison, colours: &[Color32], new_baseline: &mut Option<usize>) {
    egui::Grid::new("compare-table")
        .striped(true)
        .num_columns(1 + c.scenarios.len())
        .spacing([16.0, 4.0])
        .show(ui, |ui| {
            ui.strong("Figure");
            for (i, name) in c.scenarios.iter().enumerate() {
                ui.vertical(|ui| {
                    ui.horizontal(|ui| {
                        colour_swatch(ui, colours.get(i).copied().unwrap_or(Color32::GRAY));
                        let short = super::tabs::short_title(name);
                        if short == *name {
                            ui.strong(name);
                        } else {
                            ui.strong(short).on_hover_text(name);
                        }
                    });
                    if i == c.baseline {
                        ui.label(RichText::new("(baseline)").italics());
                    } else if ui
                        .small_button("make baseline")
                        .on_hover_text("Measure the other designs against this one")
                        .clicked()
                    {
                        *new_baseline = Some(i);
                    }
                });
            }
            ui.end_row();
            for row in &c.rows {
                ui.label(&row.label);
                for (col, text) in row_texts(row, c.baseline).into_iter().enumerate() {
                    ui.horizontal(|ui| {
                        ui.label(text);
                        if let Some(delta) = row.deltas.get(col).copied().flatten() {
                            let colour = delta_colour(ui, row.key, delta);
                            ui.label(RichText::new(row.delta_text(col)).strong().color(colour));
                        }
                    });
                }
                ui.end_row();
            }
            // The times side by side may come from different libraries and algorithms.
            ui.weak("All-reduce runs as");
            for how in &c.all_reduce_by {
                ui.weak(how);
            }
            ui.end_row();
            // How far each time may be off, from published runs of its kind.
            if c.all_reduce_checked.iter().any(Option::is_some) {
                ui.weak("Against published runs");
                for checked in &c.all_reduce_checked {
                    ui.weak(checked.as_deref().unwrap_or("–"));
                }
                ui.end_row();
            }
        });
}

impl RailyardApp {
    /// The comparison the Compare window showed on the last frame (None while it computes
    /// or is closed).
    pub fn comparison(&self) -> Option<&Comparison> {
        self.compare.shown.as_ref().filter(|_| self.compare.open)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::analysis::compare::compare;
    use std::time::{Duration, Instant};

    #[test]
    fn jobs_cache_per_key_and_skip_forgotten_ones() {
        let ctx = egui::Context::default();
        let mut jobs: Jobs<u32, u32, u32> = Jobs::spawn("test", ctx, |n| n * 10).expect("thread");
        for k in 1..=3 {
            jobs.request(k, || k);
        }
        jobs.retain(|&k| k != 2);
        jobs.request(1, || panic!("a queued key is not sent twice"));
        let start = Instant::now();
        while (jobs.is_pending(&1) || jobs.is_pending(&3))
            && start.elapsed() < Duration::from_secs(10)
        {
            jobs.poll();
            std::thread::sleep(Duration::from_millis(2));
        }
        assert_eq!(jobs.get(&1).map(|r| **r), Some(10));
        assert_eq!(jobs.get(&3).map(|r| **r), Some(30));
        assert!(jobs.get(&2).is_none() && !jobs.is_pending(&2));
    }

    #[test]
    fn every_figure_says_which_way_is_better_or_is_neutral_on_purpose() {
        use crate::analysis::compare::tests::workstation_star;
        let catalog = Catalog::builtin();
        let design = workstation_star(2, &catalog);
        // Counts of GPUs, switches and links describe a design; more is neither better nor
        // worse in itself (its cost and times say that).
        let neutral = [
            "gpus",
            "switches",
            "links",
            "switch_cost_share",
            "network_cost_share",
        ];
        for workload in [
            Workload::llama(8),
            Workload::llama(8).map(|mut w| {
                w.serving = true;
                w
            }),
        ] {
            let c = compare_with(
                &[("x".into(), design.clone())],
                &catalog,
                Bytes(1 << 20),
                0,
                workload.as_ref(),
                None,
                Routing::Ecmp,
            );
            for row in &c.rows {
                assert!(
                    higher_is_better(row.key).is_some() || neutral.contains(&row.key),
                    "{} has no better direction",
                    row.key
                );
            }
        }
        assert_eq!(higher_is_better("total_cost_usd"), Some(false));
        assert_eq!(higher_is_better("all_reduce_busbw_gbyte_s"), Some(true));
    }

    #[test]
    fn design_colours_follow_the_tab_not_the_column() {
        assert_ne!(design_colour(1), design_colour(2));
        assert_eq!(design_colour(2), design_colour(2 + 6));
    }

    #[test]
    fn assembled_columns_match_a_direct_comparison() {
        use crate::analysis::compare::tests::workstation_star;
        let catalog = Catalog::builtin();
        let (two, four) = (workstation_star(2, &catalog), workstation_star(4, &catalog));
        let bytes = Bytes(1 << 20);
        let direct = compare(
            &[("two".into(), two.clone()), ("four".into(), four.clone())],
            &catalog,
            bytes,
            1,
        );
        let a = compare(&[("x".into(), two)], &catalog, bytes, 0);
        let b = compare(&[("y".into(), four)], &catalog, bytes, 0);
        let assembled = assemble(&[("two".into(), &a), ("four".into(), &b)], 1, bytes);
        assert_eq!(assembled, direct);
        // 4 GPUs against 8.
        assert_eq!(assembled.row("gpus").unwrap().deltas, [Some(-0.5), None]);
    }
}
