//! The Compare view: chosen open designs side by side, one column each, with the change of
//! every figure against a baseline and a bar chart of one figure.
//!
//! The figures are `railyard compare`'s (`analysis::compare`). Each design's column is computed
//! once per (tab, revision, size, sidebar workload) on a background thread and cached, so
//! ticking a column or changing the baseline costs nothing, and no frame waits for an
//! evaluation.

use crate::analysis::collective::{Workload, sweep_sizes};
use crate::analysis::compare::{
    Comparison, ComparisonRow, Quantity, compare_with, relative_deltas,
};
use crate::model::{Bytes, Catalog, Design};
use egui::{Color32, ComboBox, RichText, Ui};
use egui_plot::{Bar, BarChart, Plot};
use std::collections::{BTreeSet, HashSet};
use std::sync::Arc;

pub use super::jobs::Jobs;
use super::{RailyardApp, Tab};

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
            let deltas = relative_deltas(&values, baseline);
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

    /// The comparison of the chosen tabs if every column has been computed, else how many
    /// of them are ready.
    fn comparison(
        &self,
        tabs: &[Tab],
        workload: Option<&Workload>,
    ) -> Result<Comparison, (usize, usize)> {
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
        Ok(assemble(&columns, baseline, Bytes(self.bytes)))
    }

    /// The Compare window; with the sidebar's `workload`, rows for its communication too.
    pub(super) fn window(
        &mut self,
        ctx: &egui::Context,
        tabs: &[Tab],
        catalog: &Arc<Catalog>,
        workload: Option<&Workload>,
    ) {
        if !self.open {
            return;
        }
        self.sync_tabs(tabs);
        self.drive(ctx, tabs, catalog, workload);
        let mut open = true;
        egui::Window::new("Compare")
            .open(&mut open)
            .default_size([720.0, 560.0])
            .vscroll(true)
            .show(ctx, |ui| self.contents(ui, tabs, workload));
        self.open = open;
    }

    fn contents(&mut self, ui: &mut Ui, tabs: &[Tab], workload: Option<&Workload>) {
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
        ui.separator();
        match self.comparison(tabs, workload) {
            Ok(c) => {
                table_ui(ui, &c);
                ui.separator();
                self.chart_ui(ui, &c);
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

    fn chart_ui(&mut self, ui: &mut Ui, c: &Comparison) {
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
                        .fill(scenario_colour(i))
                })
            })
            .collect();
        let names = c.scenarios.clone();
        Plot::new("compare-chart")
            .height(220.0)
            .allow_drag(false)
            .allow_zoom(false)
            .allow_scroll(false)
            .y_axis_label(chart_unit(quantity))
            .x_axis_formatter(move |mark, _| {
                let i = mark.value.round();
                if (mark.value - i).abs() < 1e-6 && i >= 0.0 {
                    names.get(i as usize).cloned().unwrap_or_default()
                } else {
                    String::new()
                }
            })
            .show(ui, |plot| {
                plot.bar_chart(BarChart::new(row.label.clone(), bars))
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

fn chart_unit(quantity: Quantity) -> &'static str {
    match quantity {
        Quantity::Count => "count",
        Quantity::GbitS => "Gb/s",
        Quantity::GbyteS => "GB/s",
        Quantity::Fraction => "%",
        Quantity::Usd | Quantity::UsdCents => "USD",
        Quantity::Watts => "W",
        Quantity::Microseconds => "µs",
    }
}

/// A colour per scenario, shared by the chart here and the plots.
pub fn scenario_colour(i: usize) -> Color32 {
    const COLOURS: [Color32; 6] = [
        Color32::from_rgb(90, 150, 230),
        Color32::from_rgb(230, 140, 60),
        Color32::from_rgb(90, 190, 110),
        Color32::from_rgb(210, 90, 90),
        Color32::from_rgb(160, 110, 210),
        Color32::from_rgb(180, 160, 80),
    ];
    COLOURS[i % COLOURS.len()]
}

/// The figures in a grid: one column per scenario, each non-baseline value followed by its
/// change against the baseline.
fn table_ui(ui: &mut Ui, c: &Comparison) {
    egui::Grid::new("compare-table")
        .striped(true)
        .num_columns(1 + c.scenarios.len())
        .spacing([16.0, 4.0])
        .show(ui, |ui| {
            ui.strong("Figure");
            for (i, name) in c.scenarios.iter().enumerate() {
                if i == c.baseline {
                    ui.strong(format!("{name} (baseline)"));
                } else {
                    ui.strong(name);
                }
            }
            ui.end_row();
            for row in &c.rows {
                ui.label(&row.label);
                for col in 0..c.scenarios.len() {
                    ui.horizontal(|ui| {
                        ui.label(row.value_text(col));
                        let delta = row.delta_text(col);
                        if !delta.is_empty() {
                            ui.label(RichText::new(delta).small().weak());
                        }
                    });
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
