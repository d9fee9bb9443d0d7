//! Side-by-side comparison of designs: one column per scenario, one row per figure, with the
//! change of each figure against a baseline scenario. Used by `railyard compare`, the report
//! and the designer's Compare view, so they all show the same numbers as `eval`.

use crate::analysis::accuracy::{Checked, Published};
use crate::analysis::collective::{self, CollectiveQuery, Op, Routing, Workload};
use crate::analysis::finding::Severity;
use crate::analysis::job::JobOutcome;
use crate::analysis::{Assessor, Question};
use crate::model::units::{group_thousands, trim_number};
use crate::model::{Bandwidth, Bytes, Catalog, Design, Usd, Watts};
use serde::Serialize;

/// What a row measures, which decides how its values print.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Quantity {
    /// A whole number of things.
    Count,
    /// Gigabits per second.
    GbitS,
    /// Gigabytes per second.
    GbyteS,
    /// A fraction 0–1, printed as a percentage.
    Fraction,
    Usd,
    /// US dollars to the cent (prices per unit of work).
    UsdCents,
    Watts,
    Microseconds,
}

impl Quantity {
    /// A value as a person reads it, with its unit.
    pub fn format(self, value: f64) -> String {
        match self {
            Quantity::Count => group_thousands(value.round() as i64),
            Quantity::GbitS => Bandwidth::from_gbit_s(value).to_string(),
            // One decimal always, so a row's figures line up (336.0 beside 230.7).
            Quantity::GbyteS => format!("{value:.1} GB/s"),
            Quantity::Fraction => format!("{:.1} %", value * 100.0),
            Quantity::Usd => Usd(value).to_string(),
            Quantity::UsdCents => format!("${}", crate::model::units::cents_or_less(value)),
            Quantity::Watts => Watts(value).to_string(),
            Quantity::Microseconds => {
                if value >= 1e6 {
                    format!("{} s", trim_number(value / 1e6))
                } else if value >= 10_000.0 {
                    format!("{} ms", trim_number(value / 1000.0))
                } else {
                    format!("{} µs", trim_number(value))
                }
            }
        }
    }
}

/// One figure across the scenarios.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct ComparisonRow {
    /// Stable machine-readable name (`total_cost_usd`).
    pub key: &'static str,
    pub label: String,
    pub quantity: Quantity,
    /// One per scenario; None when the figure is undefined there (no collective, zero cost).
    pub values: Vec<Option<f64>>,
    /// (value − baseline) / baseline per scenario, or for a fraction (a share, a ratio)
    /// value − baseline, its change in points; None for the baseline itself and where either
    /// value is undefined or a relative change has a zero baseline (`deltas_of`).
    pub deltas: Vec<Option<f64>>,
}

impl ComparisonRow {
    /// The value of scenario `col` as a person reads it; `—` when undefined.
    pub fn value_text(&self, col: usize) -> String {
        match self.values.get(col).copied().flatten() {
            Some(v) => self.quantity.format(v),
            None => "—".to_string(),
        }
    }

    /// The change of scenario `col` against the baseline (`+12.5 %`, or for a fraction
    /// `+7.4 pt`); empty when none.
    pub fn delta_text(&self, col: usize) -> String {
        self.deltas
            .get(col)
            .copied()
            .flatten()
            .map(|d| match self.quantity {
                Quantity::Fraction => points_text(d),
                _ => delta_text(d),
            })
            .unwrap_or_default()
    }
}

/// A fraction's change in percentage points: `+7.4 pt`, `−3.0 pt`, `±0 pt`. A share going
/// from 3.7 % to 11.1 % moved 7.4 points, not "+200 %".
pub fn points_text(delta: f64) -> String {
    let points = delta * 100.0;
    if points.abs() < 0.05 {
        "±0 pt".to_string()
    } else if points > 0.0 {
        format!("+{points:.1} pt")
    } else {
        format!("−{:.1} pt", -points)
    }
}

/// `+12.5 %`, `−3.0 %`, `±0 %`; from ten times the baseline up, the ratio: `×251`,
/// `×2,560` (not "+255900.0 %").
pub fn delta_text(delta: f64) -> String {
    let percent = delta * 100.0;
    let ratio = 1.0 + delta;
    if percent.abs() < 0.05 {
        "±0 %".to_string()
    } else if ratio >= 10.0 {
        let shown = if ratio >= 100.0 {
            crate::model::units::group_thousands(ratio.round() as i64)
        } else {
            format!("{ratio:.1}")
        };
        format!("×{shown}")
    } else if percent > 0.0 {
        format!("+{percent:.1} %")
    } else {
        format!("−{:.1} %", -percent)
    }
}

#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Comparison {
    /// Column headings, one per scenario.
    pub scenarios: Vec<String>,
    /// Index of the scenario the deltas are taken against.
    pub baseline: usize,
    /// Message size of the collective rows.
    pub bytes: Bytes,
    pub rows: Vec<ComparisonRow>,
    /// How each scenario's all-reduce runs ("MLX JACCL (RDMA), bidirectional-ring";
    /// "NCCL, nvls-tree/Simple"), or why it cannot: the times beside each other come from
    /// different libraries and algorithms.
    pub all_reduce_by: Vec<String>,
    /// How far the model was from published runs of each scenario's kind near the size
    /// (`Checked::verdict`); None where not checked (no published sets given, a
    /// calibrated design, or no all-reduce).
    pub all_reduce_checked: Vec<Option<String>>,
    /// Why each scenario's workload figures are unknown (a dash in the table), where they
    /// are: no published kernel efficiency for its GPUs, a layout that does not fit.
    pub unknown_why: Vec<Option<String>>,
    /// Per scenario, what its cost total leaves out (`Metrics::cost_gap`).
    pub cost_gaps: Vec<Option<String>>,
    /// How each scenario's workload layout was narrowed to its GPUs, where its usual layout
    /// needs more than it has.
    pub fitted: Vec<Option<String>>,
    /// How flows spread over equal-cost paths in every scenario's collectives and workload.
    pub routing: Routing,
    /// Each scenario's advice, "severity: message", most severe first: a count in the table
    /// would not say that one option's switches sit half used.
    pub advice: Vec<Vec<String>>,
}

impl Comparison {
    pub fn row(&self, key: &str) -> Option<&ComparisonRow> {
        self.rows.iter().find(|r| r.key == key)
    }

    /// What a reader must know to read the table: scenarios of different GPU counts time
    /// different collectives, why a figure is unknown, and each scenario's advice.
    pub fn notes(&self) -> Vec<String> {
        self.notes_with(true)
    }

    /// `notes`, with each scenario's advice or without it (a report lists it per design).
    pub fn notes_with(&self, advice: bool) -> Vec<String> {
        let mut notes = Vec::new();
        if let Some(gpus) = self.row("gpus") {
            let counts: Vec<u64> = gpus.values.iter().flatten().map(|&g| g as u64).collect();
            if counts.windows(2).any(|w| w[0] != w[1]) {
                let each: Vec<String> = self
                    .scenarios
                    .iter()
                    .zip(&gpus.values)
                    .map(|(name, g)| match g {
                        Some(g) => format!("{name} {}", group_thousands(*g as i64)),
                        None => format!("{name} –"),
                    })
                    .collect();
                // A workload's step is the same job (one global batch) on every design; the
                // collective rows are not.
                let step = if self.row("workload_step_us").is_some() {
                    "; a workload's step is the same job, its global batch, on each design's GPUs"
                } else {
                    ""
                };
                notes.push(format!(
                    "The scenarios have different GPU counts ({}): each collective runs on all \
                     of its own GPUs, so the collective times are of different collectives{step}",
                    each.join(", ")
                ));
            }
        }
        // "name: text" for each scenario that has one, under a heading.
        let per_scenario = |heading: &str, texts: &[Option<String>]| {
            let named: Vec<String> = self
                .scenarios
                .iter()
                .zip(texts)
                .filter_map(|(name, text)| text.as_ref().map(|t| format!("{name}: {t}")))
                .collect();
            (!named.is_empty()).then(|| format!("{heading}: {}", named.join("; ")))
        };
        notes.extend(per_scenario("Cost incomplete", &self.cost_gaps));
        notes.extend(per_scenario("Unknown (—)", &self.unknown_why));
        if let (Some(rented), Some(pays)) = (
            self.row("rented_usd_per_million_tokens"),
            self.row("owning_pays_above_use"),
        ) {
            // A rented figure without a share: renting costs less even at full use.
            let never: Vec<&str> = self
                .scenarios
                .iter()
                .zip(rented.values.iter().zip(&pays.values))
                .filter(|(_, (r, p))| r.is_some() && p.is_none())
                .map(|(name, _)| name.as_str())
                .collect();
            let mut note = "Owning against renting: the owned hour counts the capital written \
                            off and the energy of busy hours, not staff, space or upkeep"
                .to_string();
            if !never.is_empty() {
                note.push_str(&format!(
                    "; owning never costs less on {} (—): renting costs less even with the \
                     owned GPUs busy every hour",
                    never.join(", ")
                ));
            }
            notes.push(note);
        }
        notes.extend(per_scenario("Layout", &self.fitted));
        if let Some(bisection) = self.row("bisection_gbit_s") {
            let single: Vec<&str> = self
                .scenarios
                .iter()
                .zip(&bisection.values)
                .filter(|(_, v)| v.is_none())
                .map(|(name, _)| name.as_str())
                .collect();
            if !single.is_empty() {
                notes.push(format!(
                    "Bisection (—): {} {} no cut to measure (GPUs in one node or domain, or \
                     not connected)",
                    single.join(", "),
                    if single.len() == 1 { "has" } else { "have" }
                ));
            }
        }
        let each = self.advice.iter().filter(|_| advice);
        for (name, items) in self.scenarios.iter().zip(each) {
            notes.extend(items.iter().map(|item| format!("Advice, {name}: {item}")));
        }
        let timed = self
            .row("all_reduce_time_us")
            .is_some_and(|r| r.values.iter().any(Option::is_some));
        if timed {
            notes.push(match self.routing {
                Routing::Ecmp => "Collective times: each design's library with its defaults (eval \
                                  says which), under static routing, modelled as a hash of each \
                                  connection (--routing adaptive for adaptive routing)"
                    .into(),
                Routing::Adaptive => "Collective times: each design's library with its defaults \
                                      (eval says which), under adaptive routing: flows spread \
                                      over the equal-cost paths as the switches balance them"
                    .into(),
            });
        }
        notes
    }
}

/// `w` in the fastest layout `workload --search` finds on the design, with a note naming it;
/// or why none was found.
fn fastest_layout(
    design: &Design,
    catalog: &Catalog,
    w: &Workload,
    routing: Routing,
) -> Result<(Workload, String), String> {
    use crate::analysis::job::{SearchOptions, search_layouts, training_job_of_workload};
    let job = training_job_of_workload(w)
        .ok_or_else(|| format!("no search: railyard does not know the shape of {}", w.name))?;
    let options = SearchOptions {
        keep: 1,
        routing,
        hold_memory_settings: false,
    };
    let found = search_layouts(design, catalog, &job, options, &mut |_| {})
        .map_err(|e| format!("no layout found by the search: {e}"))?;
    let best = found.best.first().ok_or("no layout found by the search")?;
    let mut fastest = w.clone();
    (fastest.tp, fastest.pp, fastest.dp) = (best.tp, best.pp, Some(best.dp));
    fastest.micro_batch = best.micro_batch;
    fastest.recompute = Some(best.recompute);
    fastest.zero = Some(best.zero);
    if let Some(moe) = &mut fastest.moe {
        moe.ep = Some(best.ep);
    }
    let note = format!(
        "the fastest found (workload --search): {}",
        best.settings_text()
    );
    Ok((fastest, note))
}

/// The figures of one design, in row order, and how its all-reduce runs.
fn figures(
    design: &Design,
    catalog: &Catalog,
    bytes: Bytes,
    (workload, search, rent): (Option<&Workload>, bool, Option<f64>),
    published: Option<&'static Published>,
    routing: Routing,
) -> Figures {
    // A model's usual layout wider than the design runs narrowed to it, as `workload` runs it.
    let gpus = design.gpu_count();
    let (fitted, mut fitted_note) = workload
        .and_then(|w| w.fitted_to(gpus))
        .map_or((None, None), |(w, note)| (Some(w), Some(note)));
    let mut workload = fitted.as_ref().or(workload);
    // Each design in its own fastest training layout, as `workload --search` finds it.
    let searched = workload
        .filter(|w| search && !w.serving)
        .map(|w| fastest_layout(design, catalog, w, routing));
    match &searched {
        Some(Ok((w, note))) => {
            workload = Some(w);
            fitted_note = Some(note.clone());
        }
        Some(Err(why)) => fitted_note = Some(why.clone()),
        None => {}
    }
    let mut assessor = published.map_or_else(Assessor::default, Assessor::with_published);
    let a = assessor.assess(
        design,
        catalog,
        &Question::all_reduce_and_workload(bytes, workload.cloned()).routed(routing),
    );
    let checked = a.checked.as_ref().map(Checked::verdict);
    let m = &a.metrics;
    let all_reduce_by = match &a.collective {
        Some(Ok(r)) => format!("{}, {}", r.library_text(), r.algorithm_text()),
        Some(Err(e)) => format!("not modelled ({e})"),
        None => "not modelled".to_string(),
    };
    let all_reduce = a.collective.and_then(Result::ok);
    let all_to_all = collective::collective(
        design,
        catalog,
        &CollectiveQuery {
            routing,
            ..CollectiveQuery::new(Op::AllToAll, bytes)
        },
    )
    .ok();
    let advice = a.advice;
    let errors = m
        .checks
        .iter()
        .filter(|f| f.severity == Severity::Error)
        .count();
    let unknown_why = workload.and_then(|w| unknown_job_figures(w, &a.workload, &a.job));
    // A layout that does not fit in memory never runs: its traffic is no figure to compare.
    let fits = !matches!(
        a.job,
        Some(Err(crate::analysis::job::JobError::DoesNotFit { .. }))
    );
    let step = a.workload.and_then(Result::ok).filter(|_| fits);
    let job = a.job.and_then(Result::ok);
    let total = m.cost.total.0;
    let bisection_ok = matches!(
        m.bisection.status,
        crate::analysis::bisection::BisectionStatus::Ok { .. }
    );
    let mut values = vec![
        Some(m.gpus as f64),
        Some(m.switches as f64),
        Some(m.links as f64),
        // A single node or domain has no cut to measure: unknown (—), not 0 Gb/s nor 0 %.
        bisection_ok.then(|| m.bisection.value.gbit_s()),
        m.bisection.ratio.filter(|_| bisection_ok),
        Some(total),
        (m.gpus > 0).then(|| total / m.gpus as f64),
        m.switch_cost_share,
        m.network_cost_share,
        Some(m.power.0),
        all_reduce.as_ref().map(|r| r.time_us),
        all_reduce.as_ref().map(|r| r.busbw_gbyte_s),
        all_to_all.as_ref().map(|r| r.time_us),
    ];
    if workload.is_some() {
        values.push(step.as_ref().map(|s| s.total_us));
        values.push(
            step.as_ref()
                .filter(|s| s.ideal_total_us > 0.0)
                .map(|s| s.total_us / s.ideal_total_us - 1.0),
        );
        match workload.map(|w| w.serving) {
            Some(false) => {
                let training = job.as_ref().and_then(|j| match j {
                    JobOutcome::Training { step, .. } => Some(step),
                    JobOutcome::Serving(_) => None,
                });
                values.push(training.and_then(|s| s.step_ms).map(|ms| ms * 1e3));
                values.push(training.and_then(|s| s.mfu));
                values.push(job.as_ref().and_then(JobOutcome::usd_per_million_tokens));
                if let Some(usd) = rent {
                    let rented = job
                        .as_ref()
                        .and_then(JobOutcome::economics)
                        .map(|e| e.rented_at(usd, design.gpu_count()));
                    values.push(rented.map(|r| r.usd_per_million_tokens));
                    // Renting costs less even at full use: owning never pays (no share).
                    values.push(rented.and_then(|r| r.break_even_use));
                }
            }
            _ => {
                let serving = job.as_ref().and_then(|j| match j {
                    JobOutcome::Serving(r) => Some(r),
                    JobOutcome::Training { .. } => None,
                });
                values.push(serving.and_then(|r| r.decode_tokens_per_s));
                values.push(job.as_ref().and_then(JobOutcome::usd_per_million_tokens));
            }
        }
    }
    values.push(Some(errors as f64));
    values.push(Some(advice.len() as f64));
    let mut ranked: Vec<&crate::analysis::finding::Finding> = advice.iter().collect();
    // Severity orders most severe first.
    ranked.sort_by_key(|f| f.severity);
    Figures {
        values,
        all_reduce_by,
        checked,
        cost_gap: m.cost_gap(),
        unknown_why,
        fitted: fitted_note,
        advice: ranked
            .iter()
            .map(|f| format!("{}: {}", f.severity.advice_label(), f.message))
            .collect(),
    }
}

/// One design's column of the comparison.
struct Figures {
    /// In row order (`row_heads`).
    values: Vec<Option<f64>>,
    all_reduce_by: String,
    checked: Option<String>,
    cost_gap: Option<String>,
    unknown_why: Option<String>,
    fitted: Option<String>,
    advice: Vec<String>,
}

/// Why the workload's figures of one design are unknown, where some are.
fn unknown_job_figures(
    workload: &Workload,
    comm: &Option<Result<collective::WorkloadResult, collective::CollectiveError>>,
    job: &Option<Result<JobOutcome, crate::analysis::job::JobError>>,
) -> Option<String> {
    if let Some(Err(e)) = comm {
        return Some(e.to_string());
    }
    match job {
        // compare runs each model in its usual layout; the search may find one that fits.
        Some(Err(e @ crate::analysis::job::JobError::DoesNotFit { .. })) if !workload.serving => {
            Some(format!(
                "{e} in {}'s layout TP {} × PP {} (`workload --search` looks for one that fits)",
                workload.name, workload.tp, workload.pp
            ))
        }
        Some(Err(e)) => Some(e.to_string()),
        None => Some(format!(
            "railyard does not know the shape of {}",
            workload.name
        )),
        Some(Ok(JobOutcome::Training { step, .. })) if step.step_ms.is_none() => step
            .assumes
            .iter()
            .find(|a| a.contains("unknown"))
            .cloned()
            .or_else(|| Some("the step needs figures the catalog lacks".into())),
        Some(Ok(JobOutcome::Serving(r))) if r.decode_tokens_per_s.is_none() => r
            .assumes
            .iter()
            .find(|a| a.contains("unknown"))
            .cloned()
            .or_else(|| Some("the decode rate needs figures the catalog lacks".into())),
        Some(Ok(_)) => None,
    }
}

/// Row keys, labels and quantities, in the order `figures` returns values.
fn row_heads(
    bytes: Bytes,
    workload: Option<&Workload>,
    rent: Option<f64>,
) -> Vec<(&'static str, String, Quantity)> {
    let mut heads = vec![
        ("gpus", "GPUs".into(), Quantity::Count),
        ("switches", "Switches".into(), Quantity::Count),
        ("links", "Links".into(), Quantity::Count),
        ("bisection_gbit_s", "Bisection".into(), Quantity::GbitS),
        (
            "bisection_ratio",
            "Bisection ratio".into(),
            Quantity::Fraction,
        ),
        ("total_cost_usd", "Total cost".into(), Quantity::Usd),
        ("cost_per_gpu_usd", "Cost per GPU".into(), Quantity::Usd),
        (
            "switch_cost_share",
            "Switch share".into(),
            Quantity::Fraction,
        ),
        (
            "network_cost_share",
            "Network share".into(),
            Quantity::Fraction,
        ),
        ("power_w", "Power".into(), Quantity::Watts),
        (
            "all_reduce_time_us",
            format!("All-reduce time ({bytes})"),
            Quantity::Microseconds,
        ),
        (
            "all_reduce_busbw_gbyte_s",
            format!("All-reduce busbw ({bytes})"),
            Quantity::GbyteS,
        ),
        (
            "all_to_all_time_us",
            format!("All-to-all time ({bytes})"),
            Quantity::Microseconds,
        ),
    ];
    if let Some(w) = workload {
        let step = if w.serving { "decode step" } else { "step" };
        // A job training adapters says so in every row it names.
        let name = if w.serving || w.finetune.is_full() {
            w.name.clone()
        } else {
            format!("{} {}", w.name, w.finetune.label())
        };
        heads.push((
            "workload_step_us",
            format!("{} communication per {step}", name),
            Quantity::Microseconds,
        ));
        heads.push((
            "workload_over_ideal",
            format!("{} communication added by contention", name),
            Quantity::Fraction,
        ));
        if w.serving {
            // At the peak memory bandwidth the rate is a bound and the cost a floor; at the
            // user's share, each is their estimate.
            let (rate, cost) = match w.memory_share {
                None => ("(bound)".to_string(), "(at least)".to_string()),
                Some(f) => {
                    let at = format!(
                        "(at {})",
                        crate::analysis::job::serving::share_of_peak_text(f)
                    );
                    (at.clone(), at)
                }
            };
            heads.push((
                "decode_tokens_per_s",
                format!("{} decode tokens/s {rate}", name),
                Quantity::Count,
            ));
            heads.push((
                "usd_per_million_tokens",
                format!("{} $ per million output tokens {cost}", name),
                Quantity::UsdCents,
            ));
        } else {
            heads.push((
                "step_us",
                format!("{} training step", name),
                Quantity::Microseconds,
            ));
            heads.push(("mfu", format!("{} MFU", name), Quantity::Fraction));
            heads.push((
                "usd_per_million_tokens",
                format!("{} $ per million tokens", name),
                Quantity::UsdCents,
            ));
            if let Some(usd) = rent {
                let usd = crate::model::units::trim_number(usd);
                heads.push((
                    "rented_usd_per_million_tokens",
                    format!("{} $ per million tokens rented at ${usd} a GPU-hour", name),
                    Quantity::UsdCents,
                ));
                heads.push((
                    "owning_pays_above_use",
                    format!("Owning costs less when busy more than (rent ${usd} a GPU-hour)"),
                    Quantity::Fraction,
                ));
            }
        }
    }
    heads.push(("check_errors", "Check errors".into(), Quantity::Count));
    heads.push(("advice_items", "Advice items".into(), Quantity::Count));
    heads
}

/// Each value's change against the baseline column, as a quantity of that kind is read: a
/// fraction's in points (value − baseline), anything else relative (`relative_deltas`).
pub fn deltas_of(quantity: Quantity, values: &[Option<f64>], baseline: usize) -> Vec<Option<f64>> {
    if quantity != Quantity::Fraction {
        return relative_deltas(values, baseline);
    }
    let base = values.get(baseline).copied().flatten();
    values
        .iter()
        .enumerate()
        .map(|(col, v)| match (col == baseline, *v, base) {
            (false, Some(v), Some(b)) if b.is_finite() => Some(v - b),
            _ => None,
        })
        .collect()
}

/// Each value's change against the baseline column as a fraction (`0.125` is +12.5 %); none
/// for the baseline itself, a missing value, or a baseline of zero or not finite.
pub fn relative_deltas(values: &[Option<f64>], baseline: usize) -> Vec<Option<f64>> {
    let base = values.get(baseline).copied().flatten();
    values
        .iter()
        .enumerate()
        .map(|(col, v)| match (col == baseline, *v, base) {
            (false, Some(v), Some(b)) if b != 0.0 && b.is_finite() => Some((v - b) / b),
            _ => None,
        })
        .collect()
}

/// Compares designs (name, design) at one collective size; deltas against `baseline`
/// (an index into `designs`; an index past the end counts as the first).
pub fn compare(
    designs: &[(String, Design)],
    catalog: &Catalog,
    bytes: Bytes,
    baseline: usize,
) -> Comparison {
    compare_with(designs, catalog, bytes, baseline, None, None, Routing::Ecmp)
}

/// `compare`, with rows for a workload's communication per step and its excess over an
/// ideal network (and the workload's advice counted) when one is given, and each all-reduce
/// checked against the published runs of its kind when they are given; every collective
/// and step under `routing`.
pub fn compare_with(
    designs: &[(String, Design)],
    catalog: &Catalog,
    bytes: Bytes,
    baseline: usize,
    workload: Option<&Workload>,
    published: Option<&'static Published>,
    routing: Routing,
) -> Comparison {
    compare_searching(
        designs,
        catalog,
        bytes,
        baseline,
        (workload, false, None),
        published,
        routing,
    )
}

/// `compare_with`, and with `search` each design runs a training workload in its own
/// fastest layout (`workload --search`), which the Layout note names, rather than all in
/// the model's usual one.
pub fn compare_searching(
    designs: &[(String, Design)],
    catalog: &Catalog,
    bytes: Bytes,
    baseline: usize,
    (workload, search, rent): (Option<&Workload>, bool, Option<f64>),
    published: Option<&'static Published>,
    routing: Routing,
) -> Comparison {
    let baseline = if baseline < designs.len() {
        baseline
    } else {
        0
    };
    let mut columns = Vec::new();
    let mut all_reduce_by = Vec::new();
    let mut all_reduce_checked = Vec::new();
    let mut unknown_why = Vec::new();
    let mut cost_gaps = Vec::new();
    let mut fitted = Vec::new();
    let mut advice = Vec::new();
    for (_, d) in designs {
        let f = figures(
            d,
            catalog,
            bytes,
            (workload, search, rent),
            published,
            routing,
        );
        columns.push(f.values);
        all_reduce_by.push(f.all_reduce_by);
        all_reduce_checked.push(f.checked);
        unknown_why.push(f.unknown_why);
        cost_gaps.push(f.cost_gap);
        fitted.push(f.fitted);
        advice.push(f.advice);
    }
    let rows = row_heads(bytes, workload, rent)
        .into_iter()
        .enumerate()
        .map(|(i, (key, label, quantity))| {
            let values: Vec<Option<f64>> = columns.iter().map(|c| c[i]).collect();
            let deltas = deltas_of(quantity, &values, baseline);
            ComparisonRow {
                key,
                label,
                quantity,
                values,
                deltas,
            }
        })
        .collect();
    Comparison {
        scenarios: designs.iter().map(|(name, _)| name.clone()).collect(),
        baseline,
        bytes,
        rows,
        all_reduce_by,
        all_reduce_checked,
        unknown_why,
        cost_gaps,
        fitted,
        routing,
        advice,
    }
}

#[cfg(test)]
pub(crate) mod tests {
    use super::*;

    #[test]
    fn times_read_in_the_unit_that_suits_them() {
        let us = Quantity::Microseconds;
        assert_eq!(us.format(812.5), "812.5 µs");
        assert_eq!(us.format(22_250.0), "22.25 ms");
        assert_eq!(us.format(3_242_317.2), "3.24 s");
    }

    #[test]
    fn deltas_read_as_signed_percentages() {
        assert_eq!(delta_text(0.125), "+12.5 %");
        assert_eq!(delta_text(-0.03), "−3.0 %");
        assert_eq!(delta_text(0.0001), "±0 %");
        // 51,200 Gb/s against 20 Gb/s: 2,560 times, not +255900.0 %.
        assert_eq!(delta_text(51_200.0 / 20.0 - 1.0), "×2,560");
        assert_eq!(delta_text(9.0), "×10.0");
        assert_eq!(delta_text(8.99), "+899.0 %");
    }

    /// A share going from 11.1 % to 2.6 % moved 8.5 points, not "−76.6 %".
    #[test]
    fn shares_change_in_points() {
        assert_eq!(points_text(0.026 - 0.111), "−8.5 pt");
        assert_eq!(points_text(0.074), "+7.4 pt");
        assert_eq!(points_text(0.0004), "±0 pt");
        let values = [Some(0.111), Some(0.026), None];
        assert_eq!(
            deltas_of(Quantity::Fraction, &values, 0),
            [None, Some(0.026 - 0.111), None]
        );
        let row = ComparisonRow {
            key: "switch_cost_share",
            label: "Switch share".into(),
            quantity: Quantity::Fraction,
            values: values.to_vec(),
            deltas: deltas_of(Quantity::Fraction, &values, 0),
        };
        assert_eq!(row.delta_text(1), "−8.5 pt");
        // Other quantities stay relative.
        assert_eq!(
            deltas_of(Quantity::Usd, &[Some(100.0), Some(125.0)], 0),
            [None, Some(0.25)]
        );
    }

    #[test]
    fn a_design_against_itself_and_an_empty_one() {
        let catalog = Catalog::builtin();
        let empty = Design::new("empty");
        let c = compare(
            &[("a".into(), empty.clone()), ("b".into(), empty)],
            &catalog,
            Bytes(1 << 30),
            0,
        );
        assert_eq!(c.scenarios, ["a", "b"]);
        assert_eq!(c.rows.len(), 15);
        assert_eq!(
            c.row("check_errors").unwrap().values,
            [Some(0.0), Some(0.0)]
        );
        // No GPUs: no cut to measure and no collective to time.
        assert_eq!(
            c.notes(),
            [
                "Bisection (—): a, b have no cut to measure (GPUs in one node or domain, or not \
                 connected)"
            ]
        );
        let gpus = c.row("gpus").unwrap();
        assert_eq!(gpus.values, [Some(0.0), Some(0.0)]);
        // 0 against a baseline of 0: no relative change.
        assert_eq!(gpus.deltas, [None, None]);
        // No GPUs: no cost per GPU and no collective.
        assert_eq!(c.row("cost_per_gpu_usd").unwrap().values, [None, None]);
        assert_eq!(c.row("all_reduce_time_us").unwrap().values, [None, None]);
        assert_eq!(c.row("all_reduce_time_us").unwrap().value_text(0), "—");
    }

    /// `nodes` workstations of two RTX 4090s on a 10 GbE switch.
    pub(crate) fn workstation_star(nodes: u32, catalog: &Catalog) -> Design {
        use crate::generate::{Template, TemplateSpec, generate};
        use crate::model::PartId;
        let mut spec = TemplateSpec::new(Template::Star);
        spec.nodes = Some(nodes);
        spec.node = Some(PartId::new("workstation"));
        spec.gpu = Some(PartId::new("rtx-4090"));
        spec.gpus_per_node = Some(2);
        spec.switch = Some(PartId::new("crs317-16x10g"));
        generate(&spec, catalog).expect("a star of workstations builds")
    }

    #[test]
    fn deltas_are_taken_against_the_baseline() {
        let catalog = Catalog::builtin();
        let price = |id: &str| catalog.get_str(id).unwrap().price_usd().0;
        let c = compare(
            &[
                ("two".into(), workstation_star(2, &catalog)),
                ("four".into(), workstation_star(4, &catalog)),
            ],
            &catalog,
            Bytes(1 << 20),
            1,
        );
        assert_eq!(c.baseline, 1);
        let gpus = c.row("gpus").unwrap();
        assert_eq!(gpus.values, [Some(4.0), Some(8.0)]);
        // 4 GPUs against 8: −50 %.
        assert_eq!(gpus.deltas, [Some(-0.5), None]);
        assert_eq!(gpus.delta_text(0), "−50.0 %");

        // Each node: a workstation, 2 GPUs, and from its RJ-45 port a Cat6a lead into a
        // 10GBASE-T module in the switch's SFP+ cage; plus one switch.
        let node = price("workstation")
            + 2.0 * price("rtx-4090")
            + price("cat6a")
            + price("sfp-10gbase-t");
        let switch = price("crs317-16x10g");
        let (two, four) = (2.0 * node + switch, 4.0 * node + switch);
        let cost = c.row("total_cost_usd").unwrap();
        let close = |a: Option<f64>, b: f64| (a.unwrap() - b).abs() < 1e-9 * b.abs().max(1.0);
        assert!(close(cost.values[0], two) && close(cost.values[1], four));
        assert!(close(cost.deltas[0], (two - four) / four));
        let per_gpu = c.row("cost_per_gpu_usd").unwrap();
        assert!(close(per_gpu.values[0], two / 4.0));
        assert!(close(per_gpu.values[1], four / 8.0));
        assert!(c.row("all_reduce_busbw_gbyte_s").unwrap().values[0].is_some());
        assert!(c.row("all_reduce_time_us").unwrap().label.contains("1 MiB"));
    }
}
