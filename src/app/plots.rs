//! The Plots window: collective busbw and time against message size (8 B to 8 GiB, log axis)
//! for the active design and the ones ticked in Compare, their cost by category, and a
//! histogram of how busy the links are at one size. One legend above the plots names the
//! designs in their colours (the Compare view's), so no legend covers a curve.
//!
//! The curves come from `collective::sweep`, the call behind `railyard sweep`, run on a
//! background thread once per (tab, revision, operation).

use crate::analysis::accuracy::{MeasuredPoint, SystemClass, measured_points};
use crate::analysis::collective::{self, CollectiveQuery, Op, sweep_sizes};
use crate::analysis::cost::{CostSummary, bom_lines, cost_summary};
use crate::io::validation_sets::published;
use crate::model::{Bytes, Catalog, Design, Usd};
use egui::{ComboBox, Ui};
use egui_plot::{Bar, BarChart, GridInput, GridMark, Line, MarkerShape, Plot, PlotPoints, Points};
use std::collections::HashSet;
use std::sync::Arc;

use super::RailyardApp;
use super::compare::{CompareView, Jobs, colour_swatch, design_colour};
use super::tabs::Tab;

/// Link utilisation in tenths: `bins[i]` counts links busy from i×10 % to (i+1)×10 %
/// (the last bin includes 100 %, the bottleneck).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct Histogram {
    pub bins: [u32; 10],
    /// Drawn links that carry nothing in this collective.
    pub idle: u32,
}

/// Bins per-link utilisations (1.0 = the bottleneck); `links` is the number of drawn links.
pub fn utilisation_histogram(utilisation: &[f64], links: usize) -> Histogram {
    let mut h = Histogram::default();
    let mut busy = 0u32;
    for &u in utilisation {
        if u.is_nan() || u <= 0.0 {
            continue; // Zero (and NaN) carry nothing.
        }
        let bin = ((u * 10.0).floor() as usize).min(9);
        h.bins[bin] += 1;
        busy += 1;
    }
    h.idle = u32::try_from(links)
        .unwrap_or(u32::MAX)
        .saturating_sub(busy);
    h
}

/// One size of a sweep.
#[derive(Debug, Clone, PartialEq)]
pub struct SweepPoint {
    pub bytes: Bytes,
    pub time_us: f64,
    pub busbw_gbyte_s: f64,
    pub histogram: Histogram,
}

/// Everything the window draws for one design.
#[derive(Debug, Clone, PartialEq)]
pub struct PlotData {
    pub cost: CostSummary,
    /// The sweep, or why the collective cannot run (no GPUs, not connected).
    pub sweep: Result<Vec<SweepPoint>, String>,
    /// Published measurements of systems of the design's kind, for this operation: dots
    /// beside the curve (`accuracy::measured_points`).
    pub measured: Vec<MeasuredPoint>,
}

pub fn plot_data(design: &Design, catalog: &Catalog, op: Op) -> PlotData {
    let cost = cost_summary(&bom_lines(design, catalog));
    // `q.bytes` is ignored by a sweep; the query is `railyard sweep`'s default otherwise.
    let query = CollectiveQuery::new(op, Bytes(1 << 30));
    let sweep = collective::sweep(design, catalog, &query)
        .map(|results| {
            results
                .iter()
                .map(|r| {
                    let loads: Vec<f64> = r.link_utilization.iter().map(|&(_, u)| u).collect();
                    SweepPoint {
                        bytes: r.bytes,
                        time_us: r.time_us,
                        busbw_gbyte_s: r.busbw_gbyte_s,
                        histogram: utilisation_histogram(&loads, design.links.len()),
                    }
                })
                .collect()
        })
        .map_err(|e| e.to_string());
    let measured = SystemClass::of(design, catalog)
        .map(|class| measured_points(published(), &class, &query, class.gpus))
        .unwrap_or_default();
    PlotData {
        cost,
        sweep,
        measured,
    }
}

/// The cost categories of the breakdown, as the sidebar names them.
pub fn cost_categories(c: &CostSummary) -> [(&'static str, Usd); 6] {
    [
        ("nodes & GPUs", c.nodes),
        ("NVSwitch", c.nvswitch),
        ("switches", c.switches),
        ("NICs", c.nics),
        ("cables & optics", c.cables_optics),
        ("other", c.other),
    ]
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct PlotKey {
    pub tab: u64,
    pub revision: u64,
    pub op: Op,
}

pub struct PlotJob {
    pub design: Arc<Design>,
    pub op: Op,
}

pub struct PlotsView {
    pub open: bool,
    pub op: Op,
    /// Size of the utilisation histogram.
    pub bytes: u64,
    jobs: Option<Jobs<PlotKey, PlotJob, PlotData>>,
    error: Option<String>,
    /// Designs drawn on the last frame with data (titles), for tests and the legend.
    shown: Vec<String>,
}

impl Default for PlotsView {
    fn default() -> Self {
        Self {
            open: false,
            op: Op::AllReduce,
            bytes: 1 << 30,
            jobs: None,
            error: None,
            shown: Vec::new(),
        }
    }
}

/// A design on the plots: its title and data.
struct Series {
    title: String,
    colour: egui::Color32,
    data: Arc<PlotData>,
}

impl PlotsView {
    pub(super) fn window(
        &mut self,
        ctx: &egui::Context,
        tabs: &[Tab],
        active: usize,
        compare: &CompareView,
        catalog: &Arc<Catalog>,
    ) {
        if !self.open {
            return;
        }
        // The active design first, then the compared ones in tab order.
        let mut ids = vec![tabs.get(active).map_or(0, |t| t.id)];
        for id in compare.chosen_tabs(tabs) {
            if !ids.contains(&id) {
                ids.push(id);
            }
        }
        let chosen: Vec<&Tab> = ids
            .iter()
            .filter_map(|id| tabs.iter().find(|t| t.id == *id))
            .collect();
        let (series, pending) = self.drive(ctx, &chosen, catalog);
        self.shown = series.iter().map(|s| s.title.clone()).collect();
        let mut open = true;
        egui::Window::new("Plots")
            .open(&mut open)
            .default_size([640.0, 720.0])
            .vscroll(true)
            .show(ctx, |ui| {
                if let Some(error) = &self.error {
                    ui.colored_label(ui.visuals().error_fg_color, error);
                    return;
                }
                self.contents(ui, &series, pending)
            });
        self.open = open;
    }

    /// Polls and requests the designs' data; returns what has arrived and how many wait.
    fn drive(
        &mut self,
        ctx: &egui::Context,
        chosen: &[&Tab],
        catalog: &Arc<Catalog>,
    ) -> (Vec<Series>, usize) {
        if self.jobs.is_none() && self.error.is_none() {
            let catalog = Arc::clone(catalog);
            match Jobs::spawn("railyard-plots", ctx.clone(), move |job: PlotJob| {
                plot_data(&job.design, &catalog, job.op)
            }) {
                Ok(jobs) => self.jobs = Some(jobs),
                Err(e) => self.error = Some(format!("could not start the plot thread ({e})")),
            }
        }
        let Some(jobs) = &mut self.jobs else {
            return (Vec::new(), 0);
        };
        jobs.poll();
        let current: HashSet<(u64, u64)> =
            chosen.iter().map(|t| (t.id, t.doc.revision())).collect();
        jobs.retain(|k| current.contains(&(k.tab, k.revision)));
        let mut series = Vec::new();
        let mut pending = 0;
        for &tab in chosen {
            let key = PlotKey {
                tab: tab.id,
                revision: tab.doc.revision(),
                op: self.op,
            };
            jobs.request(key, || PlotJob {
                design: tab.doc.shared_design(),
                op: key.op,
            });
            match jobs.get(&key) {
                Some(data) => series.push(Series {
                    title: tab.doc.title(),
                    colour: design_colour(tab.id),
                    data: Arc::clone(data),
                }),
                None => pending += 1,
            }
        }
        (series, pending)
    }

    fn contents(&mut self, ui: &mut Ui, series: &[Series], pending: usize) {
        ui.horizontal(|ui| {
            ComboBox::from_label("operation")
                .selected_text(self.op.cli_name())
                .show_ui(ui, |ui| {
                    for op in Op::ALL {
                        ui.selectable_value(&mut self.op, op, op.cli_name());
                    }
                });
            if pending > 0 {
                ui.spinner();
                ui.weak(format!("computing {pending} design(s)…"));
            }
        });
        ui.weak("The active design, then those ticked in Compare.");
        legend_ui(ui, series);
        for s in series {
            if let Err(why) = &s.data.sweep {
                ui.weak(format!("{}: no {} ({why})", s.title, self.op.cli_name()));
            }
        }

        ui.heading("busbw against message size");
        if let Some(active) = series.first().filter(|s| !s.data.measured.is_empty()) {
            ui.weak(measured_caption(&active.data.measured));
        }
        sweep_plot(ui, "plot-busbw", series, Quantity::Busbw);
        ui.heading("Time against message size");
        sweep_plot(ui, "plot-time", series, Quantity::Time);

        ui.heading("Cost by category");
        cost_plot(ui, series);

        ui.heading("Link utilisation");
        ComboBox::from_label("at size")
            .selected_text(Bytes(self.bytes).to_string())
            .height(300.0)
            .show_ui(ui, |ui| {
                for size in sweep_sizes() {
                    ui.selectable_value(&mut self.bytes, size.0, size.to_string());
                }
            });
        // The active design's links; the others' fabrics have other links.
        if let Some(s) = series.first() {
            self.histogram_ui(ui, s);
        }
    }

    fn histogram_ui(&self, ui: &mut Ui, s: &Series) {
        let Ok(points) = &s.data.sweep else {
            ui.weak("No collective, so no link loads.");
            return;
        };
        let Some(point) = points.iter().find(|p| p.bytes.0 == self.bytes) else {
            return;
        };
        let h = point.histogram;
        let busy: u32 = h.bins.iter().sum();
        ui.label(format!(
            "{}: {busy} links carry traffic in {} of {}, {} idle",
            s.title,
            self.op.cli_name(),
            point.bytes,
            h.idle
        ));
        let bars: Vec<Bar> = h
            .bins
            .iter()
            .enumerate()
            .map(|(i, &n)| {
                Bar::new(i as f64 * 10.0 + 5.0, f64::from(n))
                    .width(9.0)
                    .name(format!("{}–{} %", i * 10, i * 10 + 10))
                    .fill(s.colour)
            })
            .collect();
        Plot::new("plot-utilisation")
            .height(180.0)
            .allow_drag(false)
            .allow_zoom(false)
            .allow_scroll(false)
            .x_axis_label("utilisation (% of the bottleneck's)")
            .y_axis_label("links")
            .include_x(0.0)
            .include_x(100.0)
            .include_y(0.0)
            .show(ui, |plot| plot.bar_chart(BarChart::new("links", bars)));
    }
}

/// The designs in their colours, once for all the plots and outside them.
fn legend_ui(ui: &mut Ui, series: &[Series]) {
    ui.horizontal_wrapped(|ui| {
        for s in series {
            colour_swatch(ui, s.colour);
            ui.label(&s.title);
            ui.add_space(12.0);
        }
    });
}

/// The smallest size of a sweep is 8 B = 2^3; size ticks are labelled every 5 powers of 2
/// from there (8 B, 256 B, 8 KiB, … 8 GiB), each 10 powers a thousand-fold (a major mark).
const SIZE_TICK_FIRST_EXPONENT: i64 = 3;

/// Grid marks on the log2(size) axis: a mark per power of 2, every 5th and 10th from 8 B
/// stronger so that egui_plot has room to label them.
fn size_marks(input: GridInput) -> Vec<GridMark> {
    let (lo, hi) = input.bounds;
    if !(lo.is_finite() && hi.is_finite()) || hi - lo > 1000.0 {
        return Vec::new();
    }
    (lo.ceil() as i64..=hi.floor() as i64)
        .map(|v| {
            let from_first = v - SIZE_TICK_FIRST_EXPONENT;
            let step_size = if from_first % 10 == 0 {
                10.0
            } else if from_first % 5 == 0 {
                5.0
            } else {
                1.0
            };
            GridMark {
                value: v as f64,
                step_size,
            }
        })
        .collect()
}

/// The label of a size tick at log2(size) = `exponent`: "8 B" … "8 GiB" on the labelled
/// marks, empty elsewhere.
pub fn size_tick_label(exponent: f64) -> String {
    let v = exponent.round();
    let labelled = (exponent - v).abs() < 1e-6
        && (0.0..=63.0).contains(&v)
        && (v as i64 - SIZE_TICK_FIRST_EXPONENT).rem_euclid(5) == 0;
    if labelled {
        Bytes(1u64 << v as u32).to_string()
    } else {
        String::new()
    }
}

/// Four to ten marks at a round step (1, 2 or 5 × 10^k) over a linear axis.
fn linear_marks(input: GridInput) -> Vec<GridMark> {
    let (lo, hi) = input.bounds;
    let raw = (hi - lo) / 5.0;
    if !(raw.is_finite() && raw > 0.0) {
        return Vec::new();
    }
    let magnitude = 10f64.powf(raw.log10().floor());
    // The smallest round step that gives five intervals or fewer: on a 200-point chart they
    // stay over 30 points apart, where egui_plot writes a label (it hides them closer than
    // 20 points, which eight intervals were).
    let step = [1.0, 2.0, 5.0, 10.0]
        .into_iter()
        .map(|m| m * magnitude)
        .find(|&s| s >= raw)
        .unwrap_or(10.0 * magnitude);
    ((lo / step).ceil() as i64..=(hi / step).floor() as i64)
        .map(|k| GridMark {
            value: k as f64 * step,
            step_size: step,
        })
        .collect()
}

/// Integer grid marks on a log-scaled axis (decades for time).
fn integer_marks(input: GridInput, major: i64) -> Vec<GridMark> {
    let (lo, hi) = input.bounds;
    if !(lo.is_finite() && hi.is_finite()) || hi - lo > 1000.0 {
        return Vec::new();
    }
    (lo.ceil() as i64..=hi.floor() as i64)
        .map(|v| GridMark {
            value: v as f64,
            step_size: if v % major == 0 { major as f64 } else { 1.0 },
        })
        .collect()
}

/// A mark on a linear axis with as many decimals as the marks' spacing needs.
fn linear_tick_label(value: f64, step: f64) -> String {
    let decimals = if step > 0.0 && step.is_finite() {
        (-step.log10().floor()).clamp(0.0, 6.0) as usize
    } else {
        0
    };
    format!("{value:.decimals$}")
}

/// A time in µs as a person reads it.
fn time_label(us: f64) -> String {
    if us >= 1e6 {
        format!("{} s", us / 1e6)
    } else if us >= 1e3 {
        format!("{} ms", us / 1e3)
    } else {
        format!("{us} µs")
    }
}

/// One line per design of `value` against log2(size); `log_y` plots log10 of the value.
fn sweep_plot(ui: &mut Ui, id: &str, series: &[Series], quantity: Quantity) {
    let (unit, log_y) = match quantity {
        Quantity::Busbw => ("GB/s", false),
        Quantity::Time => ("time", true),
    };
    // (time µs, busbw GB/s) → the plotted value.
    let value = |time_us: f64, busbw_gbyte_s: f64| match quantity {
        Quantity::Busbw => busbw_gbyte_s,
        Quantity::Time => time_us,
    };
    let mut plot = Plot::new(id)
        .height(200.0)
        .x_axis_label("message size")
        .y_axis_label(unit)
        .x_grid_spacer(size_marks)
        .x_axis_formatter(|mark, _| size_tick_label(mark.value));
    if log_y {
        plot = plot
            .y_grid_spacer(|input| integer_marks(input, 3))
            .y_axis_formatter(|mark, _| time_label(10f64.powf(mark.value.round())));
    } else {
        // A few marks at a round step, each labelled with the decimals it needs: 0.2, 0.4 …
        // for a homelab's 0.9 GB/s, where the default marks were too dense to label but "0".
        plot = plot
            .include_y(0.0)
            .y_grid_spacer(linear_marks)
            .y_axis_formatter(|mark, _| linear_tick_label(mark.value, mark.step_size));
    }
    let point = |y: f64, bytes: Bytes| {
        let y = if log_y { y.log10() } else { y };
        y.is_finite().then(|| [(bytes.0 as f64).log2(), y])
    };
    plot.show(ui, |plot| {
        for s in series {
            let Ok(points) = &s.data.sweep else {
                continue;
            };
            let pts: PlotPoints = points
                .iter()
                .filter_map(|p| point(value(p.time_us, p.busbw_gbyte_s), p.bytes))
                .collect();
            plot.line(Line::new(s.title.clone(), pts).color(s.colour).width(2.0));
        }
        // The active design's published neighbours, as hollow dots in its colour.
        if let Some(s) = series.first() {
            let dots: PlotPoints = s
                .data
                .measured
                .iter()
                .filter_map(|m| point(value(m.time_us, m.busbw_gbyte_s), m.bytes))
                .collect();
            plot.points(
                Points::new(format!("{}: published runs", s.title), dots)
                    .color(s.colour)
                    .shape(MarkerShape::Circle)
                    .filled(false)
                    .radius(3.5),
            );
        }
    });
}

/// What a sweep plot draws against message size.
#[derive(Clone, Copy)]
enum Quantity {
    Busbw,
    Time,
}

/// "Circles: 52 published runs of systems of this kind (DGXH100, AZ-H100)".
fn measured_caption(points: &[MeasuredPoint]) -> String {
    let mut systems: Vec<&str> = Vec::new();
    for p in points {
        if !systems.contains(&p.system.as_str()) {
            systems.push(&p.system);
        }
    }
    let runs = if points.len() == 1 { "run" } else { "runs" };
    format!(
        "Circles: {} published {runs} of systems of the active design's kind ({}), off any \
         harness's launch floor.",
        points.len(),
        systems.join(", ")
    )
}

/// Grouped bars: one group per cost category, one bar per design.
fn cost_plot(ui: &mut Ui, series: &[Series]) {
    let n = series.len().max(1) as f64;
    let width = 0.8 / n;
    let charts: Vec<BarChart> = series
        .iter()
        .enumerate()
        .map(|(j, s)| {
            let bars = cost_categories(&s.data.cost)
                .iter()
                .enumerate()
                .map(|(i, (label, usd))| {
                    let x = i as f64 - 0.4 + width * (j as f64 + 0.5);
                    Bar::new(x, usd.0)
                        .width(width * 0.9)
                        .name(format!("{label}: {usd}"))
                        .fill(s.colour)
                })
                .collect();
            BarChart::new(s.title.clone(), bars).color(s.colour)
        })
        .collect();
    Plot::new("plot-cost")
        .height(220.0)
        .allow_drag(false)
        .allow_zoom(false)
        .allow_scroll(false)
        .y_axis_formatter(|mark, _| Usd(mark.value).compact())
        .include_y(0.0)
        .x_axis_formatter(|mark, _| {
            let i = mark.value.round();
            if (mark.value - i).abs() < 1e-6 && (0.0..6.0).contains(&i) {
                cost_categories(&CostSummary::default())[i as usize]
                    .0
                    .to_string()
            } else {
                String::new()
            }
        })
        .show(ui, |plot| {
            for chart in charts {
                plot.bar_chart(chart);
            }
        });
}

impl RailyardApp {
    /// Titles of the designs the Plots window drew on the last frame (empty when closed).
    pub fn plotted_designs(&self) -> &[String] {
        if self.plots.open {
            &self.plots.shown
        } else {
            &[]
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_curve_is_drawn_against_published_runs_of_its_kind() {
        // Eight A100s behind NVSwitch: OCI's and Azure's nccl-tests sweeps (-g 8), 28 and 24
        // rows, less those under the 33.6 µs launch floor (14 and 10): 28 circles.
        let design = crate::io::parse_design(
            include_str!("../../assets/validation/hgx-a100.ron"),
            "hgx-a100.ron",
        )
        .expect("the validation design");
        let data = plot_data(&design, &Catalog::builtin(), Op::AllReduce);
        assert_eq!(data.measured.len(), 28);
        // OCI's 1 MiB row as printed: 76.71 µs, busbw 23.92 GB/s.
        let oci = data
            .measured
            .iter()
            .find(|m| m.system == "OCIA100-1N" && m.bytes == Bytes(1 << 20))
            .expect("OCI's 1 MiB row");
        assert!((oci.time_us - 76.71).abs() < 0.01, "{oci:?}");
        assert!((oci.busbw_gbyte_s - 23.92).abs() < 0.01, "{oci:?}");
        assert_eq!(
            measured_caption(&data.measured),
            "Circles: 28 published runs of systems of the active design's kind (OCIA100-1N, \
             AZA100), off any harness's launch floor."
        );
        // An all-gather was never measured there.
        assert!(
            plot_data(&design, &Catalog::builtin(), Op::AllGather)
                .measured
                .is_empty()
        );
    }

    #[test]
    fn a_linear_axis_has_at_most_five_round_intervals() {
        let marks = |lo: f64, hi: f64| -> Vec<String> {
            linear_marks(GridInput {
                bounds: (lo, hi),
                base_step_size: 0.0,
            })
            .iter()
            .map(|m| linear_tick_label(m.value, m.step_size))
            .collect()
        };
        // A 10 GbE homelab's busbw, 0 to 0.95 GB/s: a fifth is 0.19, so steps of 0.2.
        assert_eq!(marks(0.0, 0.95), ["0.0", "0.2", "0.4", "0.6", "0.8"]);
        // An H100 node's 0 to 410 GB/s: a fifth is 84, so steps of 100.
        assert_eq!(marks(-10.0, 410.0), ["0", "100", "200", "300", "400"]);
        // 0 to 79: a fifth is 15.8, so steps of 20, not 10 (eight marks too close to label).
        assert_eq!(marks(0.0, 79.0), ["0", "20", "40", "60"]);
        assert!(marks(0.0, 0.0).is_empty());
    }

    #[test]
    fn linear_ticks_carry_the_decimals_their_spacing_needs() {
        assert_eq!(linear_tick_label(0.4, 0.2), "0.4");
        assert_eq!(linear_tick_label(0.05, 0.05), "0.05");
        assert_eq!(linear_tick_label(150.0, 50.0), "150");
        assert_eq!(linear_tick_label(0.0, 0.0), "0");
    }

    #[test]
    fn size_ticks_read_8_b_to_8_gib() {
        let labels: Vec<String> = (0..=36)
            .map(|e| size_tick_label(f64::from(e)))
            .filter(|l| !l.is_empty())
            .collect();
        assert_eq!(
            labels,
            [
                "8 B", "256 B", "8 KiB", "256 KiB", "8 MiB", "256 MiB", "8 GiB"
            ]
        );
        // The sweep's own ends are labelled.
        let sizes = sweep_sizes();
        let ends = [sizes.first(), sizes.last()].map(|b| b.map(|b| (b.0 as f64).log2()));
        assert_eq!(
            ends.map(|e| e.map(size_tick_label)),
            [Some("8 B".into()), Some("8 GiB".into())]
        );
        assert_eq!(size_tick_label(3.5), "");
        // The labelled marks are the strong ones, so egui_plot has room for them.
        let marks = size_marks(GridInput {
            bounds: (2.5, 33.5),
            base_step_size: 1.0,
        });
        let strong: Vec<f64> = marks
            .iter()
            .filter(|m| m.step_size >= 5.0)
            .map(|m| m.value)
            .collect();
        assert_eq!(strong, [3.0, 8.0, 13.0, 18.0, 23.0, 28.0, 33.0]);
    }

    #[test]
    fn utilisation_bins_by_tenths() {
        // 0.05 → 0–10 %; 0.1 → 10–20 %; 0.95 and the bottleneck 1.0 → 90–100 %.
        let h = utilisation_histogram(&[0.05, 0.1, 0.55, 0.95, 1.0, 0.0], 8);
        assert_eq!(h.bins, [1, 1, 0, 0, 0, 1, 0, 0, 0, 2]);
        // 8 links, 5 carry traffic.
        assert_eq!(h.idle, 3);
    }
}
