//! Written reports: the comparison table as Markdown, CSV or aligned text, and the design
//! report in Markdown. No UI imports.

use super::row_units::row_texts;
use crate::analysis::Metrics;
use crate::analysis::accuracy::Checked;
use crate::analysis::collective::{
    CollectiveResult, Routing, Workload, WorkloadResult, model_label,
};
use crate::analysis::compare::Comparison;
use crate::analysis::cost::{BomCategory, BomLine};
use crate::analysis::finding::{Finding, Severity};
use crate::analysis::job::JobOutcome;
use crate::model::units::{cents_or_less, count_of, group_thousands, time_text, trim_number};
use crate::model::{Bytes, Catalog, Design, Usd, Watts};
use std::fmt::Write as _;

/// `|` would end a Markdown table cell; line breaks would end the row.
fn md_cell(text: &str) -> String {
    text.replace('|', "\\|").replace(['\n', '\r'], " ")
}

fn heading(c: &Comparison, col: usize) -> String {
    let name = c.scenarios.get(col).map_or("", String::as_str);
    if col == c.baseline && c.scenarios.len() > 1 {
        format!("{name} (baseline)")
    } else {
        name.to_string()
    }
}

/// A row's cells: each value, in the one unit of its row (as the designer's Compare shows
/// it), and its change against the baseline in brackets.
fn cells(c: &Comparison, row: usize) -> Vec<String> {
    let r = &c.rows[row];
    row_texts(r, c.baseline)
        .into_iter()
        .enumerate()
        .map(|(col, value)| {
            let delta = r.delta_text(col);
            if delta.is_empty() {
                value
            } else {
                format!("{value} ({delta})")
            }
        })
        .collect()
}

/// A GitHub-flavoured Markdown table: figures down, scenarios across, numbers right-aligned.
pub fn render_markdown(c: &Comparison) -> String {
    comparison_markdown(c, true)
}

/// The table, how each all-reduce runs, and the notes; `advice`: each option's advice under
/// them (a report lists it under each design already).
fn comparison_markdown(c: &Comparison, advice: bool) -> String {
    let mut out = String::from("| Figure |");
    for col in 0..c.scenarios.len() {
        out.push_str(&format!(" {} |", md_cell(&heading(c, col))));
    }
    out.push_str("\n|:--|");
    out.push_str(&"--:|".repeat(c.scenarios.len()));
    out.push('\n');
    for (i, row) in c.rows.iter().enumerate() {
        out.push_str(&format!("| {} |", md_cell(&row.label)));
        for text in cells(c, i) {
            out.push_str(&format!(" {} |", md_cell(&text)));
        }
        out.push('\n');
    }
    out.push_str(&format!("\n{}\n", md_inline(&runs_as(c))));
    for note in c.notes_with(advice) {
        out.push_str(&format!("\n{}\n", md_inline(&note)));
    }
    out
}

/// "All-reduce runs as: a: NCCL, ring/Simple; b: MLX JACCL (RDMA), bidirectional-ring": the
/// times side by side come from different libraries and algorithms, and say so.
fn runs_as(c: &Comparison) -> String {
    let each: Vec<String> = c
        .scenarios
        .iter()
        .zip(&c.all_reduce_by)
        .map(|(name, how)| format!("{name}: {how}"))
        .collect();
    let mut text = format!("All-reduce runs as: {}", each.join("; "));
    if c.all_reduce_checked.iter().any(Option::is_some) {
        let checked: Vec<String> = c
            .scenarios
            .iter()
            .zip(&c.all_reduce_checked)
            .map(|(name, checked)| format!("{name}: {}", checked.as_deref().unwrap_or("–")))
            .collect();
        text.push_str(&format!(
            ". Against published runs of each kind: {}",
            checked.join("; ")
        ));
    }
    text
}

/// CSV for spreadsheets: `key,label,quantity`, one raw value column per scenario, then one
/// `delta <scenario>` column per scenario (a fraction; empty for the baseline and where
/// undefined). Raw values are unrounded, so they equal `eval --json`'s.
pub fn render_csv(c: &Comparison) -> Result<String, csv::Error> {
    let mut writer = csv::Writer::from_writer(Vec::new());
    let mut header = vec!["key".to_string(), "label".into(), "quantity".into()];
    header.extend(c.scenarios.iter().cloned());
    header.extend(c.scenarios.iter().map(|s| format!("delta {s}")));
    writer.write_record(&header)?;
    let number = |x: Option<f64>| x.map_or_else(String::new, |v| v.to_string());
    for row in &c.rows {
        let quantity = serde_json::to_value(row.quantity)
            .ok()
            .and_then(|v| v.as_str().map(str::to_string))
            .unwrap_or_default();
        let mut record = vec![row.key.to_string(), row.label.clone(), quantity];
        record.extend(row.values.iter().map(|&v| number(v)));
        record.extend(row.deltas.iter().map(|&d| number(d)));
        writer.write_record(&record)?;
    }
    let bytes = writer.into_inner().map_err(|e| e.into_error())?;
    Ok(String::from_utf8_lossy(&bytes).into_owned())
}

/// Aligned columns for a terminal.
pub fn render_text(c: &Comparison) -> String {
    let mut table: Vec<Vec<String>> = Vec::with_capacity(c.rows.len() + 1);
    let mut head = vec![String::new()];
    head.extend((0..c.scenarios.len()).map(|col| heading(c, col)));
    table.push(head);
    for (i, row) in c.rows.iter().enumerate() {
        let mut line = vec![row.label.clone()];
        line.extend(cells(c, i));
        table.push(line);
    }
    let columns = c.scenarios.len() + 1;
    let widths: Vec<usize> = (0..columns)
        .map(|col| {
            table
                .iter()
                .map(|line| line[col].chars().count())
                .max()
                .unwrap_or(0)
        })
        .collect();
    let mut out = String::new();
    for line in &table {
        let cells: Vec<String> = line
            .iter()
            .zip(&widths)
            .enumerate()
            .map(|(col, (text, &w))| {
                let pad = w.saturating_sub(text.chars().count());
                if col == 0 {
                    format!("{text}{}", " ".repeat(pad))
                } else {
                    format!("{}{text}", " ".repeat(pad))
                }
            })
            .collect();
        out.push_str(cells.join("  ").trim_end());
        out.push('\n');
    }
    out.push_str(&runs_as(c));
    out.push('\n');
    for note in c.notes() {
        out.push_str(&note);
        out.push('\n');
    }
    out
}

/// Everything a design report shows, computed by the caller with the shared cost model.
#[derive(Debug, Clone, Copy)]
pub struct ReportInput<'a> {
    /// The design file, as the reader should see it named.
    pub file: &'a str,
    pub design: &'a Design,
    pub metrics: &'a Metrics,
    /// The modelled collective, or why it cannot run.
    pub collective: Result<&'a CollectiveResult, &'a str>,
    pub advice: &'a [Finding],
    /// The workload weighed against the design, and its step or why it cannot run.
    pub workload: Option<(&'a Workload, Result<&'a WorkloadResult, &'a str>)>,
    /// The workload as a job (step time, MFU, cost per token, or serving rates), or why not.
    pub job: Option<Result<&'a JobOutcome, &'a str>>,
    pub bom: &'a [BomLine],
    /// Present when several designs were given.
    pub comparison: Option<&'a Comparison>,
    /// Relative path of the diagram to link.
    pub diagram: Option<&'a str>,
    /// The collective checked against the published measurements.
    pub checked: Option<&'a Checked>,
    /// How the collective's and the workload's flows spread over equal-cost paths.
    pub routing: Routing,
}

/// What a report weighs a design on: the all-reduce at `bytes`, and the workload's step when
/// one is given, both under `routing`.
#[derive(Debug, Clone, Copy)]
pub struct ReportQuestion<'a> {
    pub bytes: Bytes,
    pub workload: Option<&'a Workload>,
    pub routing: Routing,
}

/// The design report with every figure computed by the shared cost model (`asked`): what
/// `railyard report` and the designer's File > Export report write.
pub fn design_report(
    file: &str,
    design: &Design,
    catalog: &Catalog,
    asked: ReportQuestion<'_>,
    comparison: Option<&Comparison>,
    diagram: Option<&str>,
) -> String {
    use crate::analysis::job::JobError;
    use crate::analysis::{Assessor, Question};
    // A usual layout wider than the design runs narrowed to it, as `workload` and `compare`
    // run it, and the section says so.
    let gpus = design.gpu_count();
    let fitted = asked.workload.and_then(|w| w.fitted_to(gpus));
    let workload = fitted.as_ref().map(|(w, _)| w).or(asked.workload);
    let question =
        Question::all_reduce_and_workload(asked.bytes, workload.cloned()).routed(asked.routing);
    let a = Assessor::with_published(super::validation_sets::published())
        .assess(design, catalog, &question);
    let result = a.collective.expect("the question asks for a collective");
    let error_text = result.as_ref().err().map(ToString::to_string);
    // A layout that does not fit in memory never runs: the section says why, not its traffic.
    let (step, job) = match a.job {
        Some(Err(e @ JobError::DoesNotFit { .. })) => (Some(Err(e.to_string())), None),
        job => (
            a.workload.map(|s| {
                s.map(|mut r| {
                    r.notes
                        .extend(fitted.as_ref().map(|(_, note)| note.clone()));
                    r
                })
                .map_err(|e| e.to_string())
            }),
            job.map(|j| j.map_err(|e| e.to_string())),
        ),
    };
    let (metrics, advice) = (a.metrics, a.advice);
    let bom = crate::analysis::cost::bom_lines(design, catalog);
    render_report(&ReportInput {
        file,
        design,
        metrics: &metrics,
        collective: match (&result, &error_text) {
            (Ok(r), _) => Ok(r),
            (Err(_), Some(e)) => Err(e.as_str()),
            (Err(_), None) => Err("not modelled"),
        },
        advice: &advice,
        workload: workload.zip(step.as_ref()).map(|(w, step)| {
            (
                w,
                match step {
                    Ok(r) => Ok(r),
                    Err(e) => Err(e.as_str()),
                },
            )
        }),
        job: job.as_ref().map(|j| match j {
            Ok(job) => Ok(job),
            Err(e) => Err(e.as_str()),
        }),
        bom: &bom,
        comparison,
        diagram,
        checked: a.checked.as_ref(),
        routing: asked.routing,
    })
}

/// The job's lines under the workload: the step and where it goes, MFU and cost per token,
/// or serving's rates; unknown figures say so; then what they assume.
fn job_section(out: &mut String, job: Result<&JobOutcome, &str>) {
    let ms = |v: Option<f64>| v.map_or_else(|| "unknown".into(), |ms| time_text(ms * 1e3));
    let pct =
        |v: Option<f64>| v.map_or_else(|| "unknown".into(), |f| format!("{:.1} %", f * 100.0));
    let job = match job {
        Ok(job) => job,
        Err(why) => {
            let _ = writeln!(out, "\nAs a job: not modelled: {}.", md_inline(why));
            return;
        }
    };
    let assumes = match job {
        JobOutcome::Training { step, economics } => {
            let _ = writeln!(
                out,
                "\nTraining step {}: compute {}, pipeline bubble {}, exposed communication {}; {} on a fabric that never queues. MFU {}, HFU {}, {} tokens/s; {:.1} of {:.0} GiB per GPU.",
                ms(step.step_ms),
                ms(step.compute_ms),
                ms(step.bubble_ms),
                ms(step.exposed_comm_ms),
                ms(step.ideal_step_ms),
                pct(step.mfu),
                pct(step.hfu),
                step.tokens_per_s
                    .map_or_else(|| "unknown".into(), |t| group_thousands(t.round() as i64)),
                step.memory_gib_per_gpu,
                step.gpu_memory_gib
            );
            if let Some(e) = economics {
                let _ = writeln!(
                    out,
                    "\n${} per million tokens (capital over {} years of training without a break, energy at PUE {} and ${}/kWh{}).",
                    cents_or_less(e.usd_per_million_tokens),
                    e.amortisation_years,
                    e.pue,
                    e.usd_per_kwh,
                    e.energy_basis()
                );
            }
            &step.assumes
        }
        JobOutcome::Serving(r) => {
            let _ = writeln!(
                out,
                "\nServing: {} of {}, decode {} {} tokens/s in all ({} per replica, {} per sequence), first token after {}; {:.1} of the {} GiB per GPU a serving engine takes ({:.0} % of {} GiB, {}).",
                crate::model::units::count_of(r.replicas as usize, "replica", "replicas"),
                r.layout,
                match r.memory_share {
                    None => "at most".to_string(),
                    Some(f) => format!(
                        "at {}:",
                        crate::analysis::job::serving::share_of_peak_text(f)
                    ),
                },
                r.decode_tokens_per_s
                    .map_or_else(|| "unknown".into(), |t| group_thousands(t.round() as i64)),
                r.decode_tokens_per_s_per_replica
                    .map_or_else(|| "unknown".into(), |t| format!("{t:.1}")),
                r.decode_tokens_per_s_per_sequence
                    .map_or_else(|| "unknown".into(), |t| format!("{t:.1}")),
                ms(r.ttft_ms),
                r.memory_gib_per_gpu,
                trim_number(r.usable_memory_gib),
                r.usable_memory_gib / r.gpu_memory_gib * 100.0,
                trim_number(r.gpu_memory_gib),
                r.memory_budget_source
            );
            if let Some(e) = &r.economics {
                let lead = if r.memory_share.is_none() {
                    "At least $"
                } else {
                    "$"
                };
                let basis = r.decode_basis();
                let _ = writeln!(
                    out,
                    "\n{lead}{} per million output tokens ({basis}; capital over {} years of serving without a break, energy at PUE {} and ${}/kWh{}).",
                    cents_or_less(e.usd_per_million_tokens),
                    e.amortisation_years,
                    e.pue,
                    e.usd_per_kwh,
                    e.energy_basis()
                );
            }
            &r.assumes
        }
    };
    let _ = writeln!(out, "\nAssumes:\n");
    for a in assumes {
        let _ = writeln!(out, "- {}", md_inline(a));
    }
}

/// The workload's section: its layout, the step's communication against an ideal network,
/// and each part with its busiest link.
fn workload_section(
    out: &mut String,
    w: &Workload,
    step: Result<&WorkloadResult, &str>,
    routing: Routing,
) {
    let label = model_label(&w.name);
    let what = if w.serving { "serving" } else { "training" };
    let _ = writeln!(out, "\n## Workload\n");
    let _ = writeln!(
        out,
        "{} in {}, {what}, {} routing.\n",
        md_inline(label),
        w.precision.label(),
        match routing {
            Routing::Ecmp => "ECMP",
            Routing::Adaptive => "adaptive",
        }
    );
    let r = match step {
        Ok(r) => r,
        Err(why) => {
            let _ = writeln!(out, "Not modelled: {}.", md_inline(why));
            return;
        }
    };
    let m = &r.mapping;
    let _ = writeln!(
        out,
        "{} on {} GPUs. Communication per {}: {} ({} on a fabric that never queues).\n",
        m.layout(),
        group_thousands(i64::from(m.gpus_used)),
        if r.serving { "decode step" } else { "step" },
        time_text(r.total_us),
        time_text(r.ideal_total_us)
    );
    if !r.components.is_empty() {
        let _ = writeln!(
            out,
            "| Part | Per step | Ideal | Calls × size | Algorithm | Busiest resource |\n|:--|--:|--:|--:|:--|:--|"
        );
        for c in &r.components {
            let busiest = c.bottleneck.first().map_or("—".into(), |b| {
                format!("{} ({:.0} %)", md_cell(&b.label), b.utilization * 100.0)
            });
            let _ = writeln!(
                out,
                "| {} | {} | {} | {} × {} | {} | {busiest} |",
                md_cell(&c.name),
                time_text(c.time_us_per_step),
                time_text(c.ideal_us_per_step),
                crate::model::units::trim_number(c.calls_per_step),
                Bytes(c.bytes_per_call.round() as u64),
                c.algorithm
            );
        }
    }
    for note in &r.notes {
        let _ = writeln!(out, "\n- {}", md_inline(note));
    }
}

/// Busy resources listed under the collective.
const REPORT_BOTTLENECK_ROWS: usize = 5;

/// A Markdown report: design summary, metrics, collective, advice, BOM by category,
/// the comparison and the diagram.
pub fn render_report(r: &ReportInput<'_>) -> String {
    use crate::analysis::bisection::BisectionStatus;
    let m = r.metrics;
    let mut out = String::new();
    let _ = writeln!(out, "# {}\n", md_inline(&r.design.name));
    let _ = writeln!(out, "Design file: `{}`\n", r.file.replace('`', "'"));
    // The notes' paragraphs stay paragraphs; inside one, Markdown is escaped (free text).
    for paragraph in r.design.notes.split("\n\n").map(str::trim) {
        if !paragraph.is_empty() {
            let _ = writeln!(out, "{}\n", md_inline(paragraph));
        }
    }

    let _ = writeln!(out, "## Summary\n");
    let _ = writeln!(out, "| | |\n|:--|--:|");
    for (label, value) in [
        ("GPUs", group_thousands(m.gpus as i64)),
        ("Nodes", group_thousands(m.nodes as i64)),
        ("Switches", group_thousands(m.switches as i64)),
        ("Links", group_thousands(m.links as i64)),
    ] {
        let _ = writeln!(out, "| {label} | {value} |");
    }

    let _ = writeln!(out, "\n## Metrics\n");
    let _ = writeln!(out, "| Figure | Value |\n|:--|--:|");
    let percent = |x: Option<f64>| x.map_or("—".to_string(), |f| format!("{:.1} %", f * 100.0));
    let bisection = match m.bisection.status {
        BisectionStatus::Ok { .. } => m.bisection.value.to_string(),
        BisectionStatus::NoGpus => "— (no GPUs)".into(),
        BisectionStatus::SingleUnit => "— (a single unit)".into(),
        BisectionStatus::NoLinks => "— (no links)".into(),
        BisectionStatus::NotConnected { .. } => "— (not connected)".into(),
    };
    let c = &m.cost;
    let mut rows = vec![
        ("Bisection (per direction)", bisection),
        (
            "Full bisection",
            if matches!(m.bisection.status, BisectionStatus::Ok { .. }) {
                m.bisection.full.to_string()
            } else {
                "—".into()
            },
        ),
        ("Bisection ratio", percent(m.bisection.ratio)),
        (
            "Total cost",
            match m.cost_gap() {
                Some(gap) => format!("{} (incomplete: {gap})", c.total),
                None => c.total.to_string(),
            },
        ),
        (
            "Cost per GPU",
            if m.gpus > 0 {
                Usd(c.total.0 / m.gpus as f64).to_string()
            } else {
                "—".into()
            },
        ),
        ("Switch share of cost", percent(m.switch_cost_share)),
        ("Network share of cost", percent(m.network_cost_share)),
        ("Power", m.power.to_string()),
    ];
    let count = |s: Severity| m.checks.iter().filter(|c| c.severity == s).count();
    rows.push((
        "Checks",
        format!(
            "{}, {}, {}",
            count_of(count(Severity::Error), "error", "errors"),
            count_of(count(Severity::Warning), "warning", "warnings"),
            count_of(count(Severity::Info), "note", "notes")
        ),
    ));
    for (label, value) in rows {
        let _ = writeln!(out, "| {label} | {} |", md_cell(&value));
    }
    for check in &m.checks {
        let _ = writeln!(
            out,
            "\n- {:?} `{}`: {}",
            check.severity,
            check.code,
            md_inline(&check.message)
        );
    }

    let _ = writeln!(out, "\n## Collective\n");
    match r.collective {
        Ok(col) => {
            // MLX and Gloo have no protocols: name one only where NCCL runs.
            let protocol = if col.library.is_nccl() {
                format!("{} protocol, ", col.protocol.label())
            } else {
                String::new()
            };
            let _ = writeln!(
                out,
                "{} of {} on {} GPUs: {} algorithm, {protocol}{} routing.\n",
                col.op,
                col.bytes,
                group_thousands(i64::from(col.gpus)),
                col.algorithm,
                col.routing.cli_name()
            );
            let _ = writeln!(
                out,
                "Library: {}. The model assumes {}. Why this algorithm: {}.\n",
                col.library_text(),
                md_inline(&col.assumes),
                md_inline(&col.why)
            );
            if let Some(cal) = r.design.calibration.as_ref().and_then(|c| c.summary()) {
                let _ = writeln!(
                    out,
                    "The times are the calibrated model's: {}.\n",
                    md_inline(&cal)
                );
            }
            if let Some(checked) = r.checked {
                let _ = writeln!(out, "{}\n", md_inline(&checked.text()));
            }
            let _ = writeln!(
                out,
                "| Time | algbw (GB/s) | busbw (GB/s) |\n|--:|--:|--:|\n| {} | {:.2} | {:.2} |\n",
                time_text(col.time_us),
                col.algbw_gbyte_s,
                col.busbw_gbyte_s
            );
            // What the model says of this result (the protocol a transport leaves, channels a
            // small size runs on), as the sidebar and `eval` say it.
            for note in &col.notes {
                let _ = writeln!(out, "- {}", md_inline(note));
            }
            if !col.notes.is_empty() {
                let _ = writeln!(out);
            }
            if !col.bottleneck.is_empty() {
                // 100 % is no fault: a collective large enough runs its bottleneck flat out.
                let _ = writeln!(
                    out,
                    "Utilisation is each resource's busy time over the time the collective \
                     spends moving data: its bottleneck is busy throughout (100 %). That is \
                     no fault, but the resource a faster part would speed up.\n"
                );
                let _ = writeln!(out, "| Busiest resource | Utilisation |\n|:--|--:|");
                for load in col.bottleneck.iter().take(REPORT_BOTTLENECK_ROWS) {
                    let _ = writeln!(
                        out,
                        "| {} | {:.0} % |",
                        md_cell(&load.label),
                        load.utilization * 100.0
                    );
                }
            }
        }
        Err(why) => {
            let _ = writeln!(out, "No collective: {}.", md_inline(why));
        }
    }

    if let Some((w, step)) = r.workload {
        workload_section(&mut out, w, step, r.routing);
        if let Some(job) = r.job {
            job_section(&mut out, job);
        }
    }

    let _ = writeln!(out, "\n## Advice\n");
    if r.advice.is_empty() {
        let _ = writeln!(out, "No findings.");
    }
    for a in r.advice {
        let severity = a.severity.advice_label();
        let _ = writeln!(
            out,
            "- **{severity}** `{}`: {} — {}",
            a.code,
            md_inline(&a.message),
            md_inline(&a.suggestion)
        );
    }

    let _ = writeln!(out, "\n## Bill of materials\n");
    let _ = writeln!(
        out,
        "| Category | Parts | Units | Cost | Of which estimated | Power |\n|:--|--:|--:|--:|--:|--:|"
    );
    let estimated = |lines: &[&BomLine]| -> String {
        let usd: f64 = lines
            .iter()
            .filter(|l| l.estimate)
            .map(|l| l.extended_price.0)
            .sum();
        let unpriced = lines.iter().any(|l| l.price_source.is_empty());
        match (usd > 0.0, unpriced) {
            (false, false) => "—".into(),
            (true, false) => Usd(usd).to_string(),
            (false, true) => "unpriced parts".into(),
            (true, true) => format!("{} + unpriced parts", Usd(usd)),
        }
    };
    for category in BomCategory::ALL {
        let lines: Vec<&BomLine> = r.bom.iter().filter(|l| l.category == category).collect();
        if lines.is_empty() {
            continue;
        }
        let units: u64 = lines.iter().map(|l| l.quantity).sum();
        let cost: f64 = lines.iter().map(|l| l.extended_price.0).sum();
        let power: f64 = lines.iter().map(|l| l.total_power.0).sum();
        let _ = writeln!(
            out,
            "| {} | {} | {} | {} | {} | {} |",
            category.label(),
            lines.len(),
            group_thousands(i64::try_from(units).unwrap_or(i64::MAX)),
            Usd(cost),
            estimated(&lines),
            Watts(power)
        );
    }
    let all: Vec<&BomLine> = r.bom.iter().collect();
    let _ = writeln!(
        out,
        "| **Total** | {} | {} | **{}** | {} | {} |",
        r.bom.len(),
        group_thousands(
            i64::try_from(r.bom.iter().map(|l| l.quantity).sum::<u64>()).unwrap_or(i64::MAX)
        ),
        c.total,
        estimated(&all),
        m.power
    );
    let _ = writeln!(
        out,
        "\nOf which estimated: the cost of parts the catalog (railyard's, or yours) marks as \
         estimates: a price of our own, read from a range or converted, or a guessed power \
         draw; unpriced parts count as $0. `railyard bom` lists every part with its price's \
         source and date.\n\nWhat the total leaves out: only what is drawn is billed (GPU \
         servers, NICs, switches, cables and transceivers), so the fibre patch cords between \
         optics, racks, PDUs and cooling, the storage and management networks, the subnet \
         manager or UFM, software, support and installation come on top."
    );

    if let Some(comparison) = r.comparison {
        let _ = writeln!(out, "\n## Comparison\n");
        out.push_str(&comparison_markdown(comparison, false));
    }
    if let Some(diagram) = r.diagram {
        let _ = writeln!(out, "\n## Diagram\n");
        let _ = writeln!(
            out,
            "![Diagram of {}]({})",
            md_inline(&r.design.name),
            diagram.replace(' ', "%20")
        );
    }
    out
}

/// Text inside a paragraph: line breaks become spaces, Markdown's active characters escaped;
/// paired backticks stay code spans (the generator's notes name parts as `hgx-h100`).
fn md_inline(text: &str) -> String {
    let spans = text.matches('`').count().is_multiple_of(2);
    let mut out = String::with_capacity(text.len());
    let mut in_code = false;
    for c in text.chars() {
        match c {
            '\n' | '\r' => out.push(' '),
            '`' if spans => {
                in_code = !in_code;
                out.push(c);
            }
            c if in_code => out.push(c),
            '\\' | '*' | '_' | '`' | '[' | ']' | '<' | '>' | '|' | '#' => {
                out.push('\\');
                out.push(c);
            }
            c => out.push(c),
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::md_inline;

    #[test]
    fn paired_backticks_stay_code_and_the_rest_is_escaped() {
        assert_eq!(
            md_inline("4 × `hgx_h100` on *one* `sn5600`"),
            "4 × `hgx_h100` on \\*one\\* `sn5600`"
        );
        // An unpaired backtick opens nothing: escaped like the others.
        assert_eq!(md_inline("a ` b_c"), "a \\` b\\_c");
        assert_eq!(md_inline("line\nbreak | pipe"), "line break \\| pipe");
    }
}
