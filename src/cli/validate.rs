//! `railyard validate [MEASURED.csv] [--design D.ron | --systems S.csv] [--json | --markdown]`:
//! predicts every measured row on the design it ran on and prints predicted against measured,
//! the error per row, and the median and worst errors per system and overall. Without a file,
//! the public data sets shipped in `assets/validation/` (the page `docs/validation.md` is this
//! command's `--markdown` output over them).

use super::{load, write_stdout};
use crate::analysis::accuracy::SystemClass;
use crate::analysis::collective::release::release_note;
use crate::analysis::nccl_tests::{HOST_LAUNCH_PER_GPU_US, Harness};
use crate::analysis::refit::{RefitSummary, refit_sweep};
use crate::analysis::validate::{
    ErrorSummary, MeasuredRow, RowFailure, RowPrediction, predict_rows, summarize,
};
use crate::io::measured::{SystemsList, ValidationSystem, parse_systems_csv};
use crate::io::validation_plot::{PlotPoint, PlotSeries, validation_svg};
use crate::io::validation_sets::{GroupedRows, SystemRows, group_rows, public_rows};
use crate::model::units::{significant, time_text};
use crate::model::{Bytes, Catalog, Design, NcclBuffer, NcclRelease};
use anyhow::Context;
use clap::Args;
use serde::Serialize;
use std::path::{Path, PathBuf};

#[derive(Debug, Args)]
pub(super) struct ValidateArgs {
    /// Measured rows as CSV (the columns of assets/validation/measured.csv).
    #[arg(value_name = "MEASURED.csv", requires = "on")]
    file: Option<PathBuf>,
    /// The design every row ran on.
    #[arg(long, value_name = "FILE.ron", group = "on")]
    design: Option<PathBuf>,
    /// Which design each row ran on: CSV of prefix (of the row ids), design, assumes.
    #[arg(long, value_name = "SYSTEMS.csv", group = "on")]
    systems: Option<PathBuf>,
    /// One JSON object instead of a table.
    #[arg(long, conflicts_with_all = ["markdown", "svg"])]
    json: bool,
    /// A Markdown page (what docs/validation.md is).
    #[arg(long, conflicts_with = "svg")]
    markdown: bool,
    /// The figure as SVG: predicted against measured time, and the error by message size
    /// (what docs/validation.svg is).
    #[arg(long)]
    svg: bool,
    /// Training step times against Megatron-LM's published runs instead (the page
    /// docs/training-validation.md is its `--markdown` output).
    #[arg(long, conflicts_with_all = ["file", "design", "systems", "svg"])]
    training: bool,
}

/// Where the rows and their designs come from.
enum Source<'a> {
    Public,
    File {
        measured: &'a Path,
        design: Option<&'a Path>,
        systems: Option<&'a Path>,
    },
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Format {
    Text,
    Json,
    Markdown,
    Svg,
}

/// What a design's NCCL_BUFFSIZE changes, for a system's heading.
fn buffer_note(buffer: NcclBuffer) -> String {
    format!(
        "NCCL_BUFFSIZE {buffer} (the design's, as the run set it): a tree forwards {} chunks",
        Bytes(buffer.step_bytes() as u64)
    )
}

/// The rows of one system and how the model did on them.
#[derive(Debug, Serialize)]
struct SystemReport {
    prefix: String,
    design: String,
    assumes: String,
    harness: Harness,
    /// The NCCL release whose latency tables and rules the predictions used, where not the
    /// modelled one.
    nccl: Option<NcclRelease>,
    /// NCCL_BUFFSIZE the design runs with, where not NCCL's default.
    nccl_buffer: Option<NcclBuffer>,
    /// The kind of system its design is (`SystemClass::label`): designs of that kind show
    /// these counted rows' errors beside their collective times.
    kind: Option<String>,
    summary: ErrorSummary,
    rows: Vec<RowPrediction>,
    failed: Vec<RowFailure>,
    /// The counted rows, when they form one sweep, fitted as a user's log would be.
    refit: Option<RefitSummary>,
}

#[derive(Debug, Serialize)]
struct ValidationReport {
    systems: Vec<SystemReport>,
    summary: ErrorSummary,
    /// Rows that could not be read as one measurement (id, why).
    unreadable: Vec<(String, String)>,
    /// Rows of no listed system.
    unmatched: Vec<String>,
    /// Rows of sets listed without a design (id, why not drawn).
    undrawn: Vec<(String, String)>,
}

pub(super) fn run(args: &ValidateArgs, catalog: &Catalog) -> anyhow::Result<()> {
    if args.training {
        return run_training(args.json, args.markdown, catalog);
    }
    let format = if args.json {
        Format::Json
    } else if args.markdown {
        Format::Markdown
    } else if args.svg {
        Format::Svg
    } else {
        Format::Text
    };
    let source = match &args.file {
        Some(f) => file_source(f, args.design.as_ref(), args.systems.as_ref()),
        None => Source::Public,
    };
    run_source(source, format, catalog)
}

fn run_source(source: Source<'_>, format: Format, catalog: &Catalog) -> anyhow::Result<()> {
    // The public page sits beside its figure (docs/validation.svg, this command's --svg).
    let figure_file = matches!(source, Source::Public).then_some("validation.svg");
    let report = match source {
        Source::Public => {
            let grouped = public_rows().context("the public data sets")?;
            report_of(grouped, catalog)
        }
        Source::File {
            measured,
            design,
            systems,
        } => {
            let text = std::fs::read_to_string(measured)
                .with_context(|| format!("{}: cannot read", measured.display()))?;
            match (design, systems) {
                (Some(design), _) => {
                    let one = SystemsList::one(design.to_path_buf());
                    validate(&text, &one, |s| load(&s.design), catalog)
                }
                (None, Some(list)) => {
                    let list_text = std::fs::read_to_string(list)
                        .with_context(|| format!("{}: cannot read", list.display()))?;
                    let systems = parse_systems_csv(&list_text)
                        .with_context(|| list.display().to_string())?;
                    let folder = list.parent().map(Path::to_path_buf).unwrap_or_default();
                    validate(&text, &systems, |s| load(&folder.join(&s.design)), catalog)
                }
                (None, None) => {
                    anyhow::bail!("say which design the measurements ran on: --design or --systems")
                }
            }
            .with_context(|| measured.display().to_string())?
        }
    };
    let text = match format {
        Format::Json => {
            let mut t = serde_json::to_string_pretty(&report)?;
            t.push('\n');
            t
        }
        Format::Text => text_report(&report),
        Format::Markdown => markdown_report(&report, figure_file),
        Format::Svg => figure(&report),
    };
    write_stdout(&text)
}

fn validate(
    measured: &str,
    systems: &SystemsList,
    design_of: impl Fn(&ValidationSystem) -> anyhow::Result<Design>,
    catalog: &Catalog,
) -> anyhow::Result<ValidationReport> {
    let grouped = group_rows(measured, systems, |s| {
        design_of(s).with_context(|| format!("the design of {}", s.design.display()))
    })?;
    Ok(report_of(grouped, catalog))
}

/// Predicts each system's rows and refits its sweep.
fn report_of(grouped: GroupedRows, catalog: &Catalog) -> ValidationReport {
    let mut reports = Vec::new();
    let mut all = Vec::new();
    for SystemRows {
        system,
        design,
        rows,
    } in grouped.systems
    {
        let (predicted, failed) = predict_rows(&design, catalog, &rows);
        all.extend(predicted.iter().cloned());
        let refit = refit_sweep(&design, catalog, &predicted);
        reports.push(SystemReport {
            prefix: system.prefix.clone(),
            design: system.design.display().to_string(),
            assumes: system.assumes.clone(),
            harness: system.harness,
            nccl: design.nccl_release,
            nccl_buffer: design.nccl_buffer.filter(|&b| b != NcclBuffer::DEFAULT),
            kind: SystemClass::of(&design, catalog).map(|c| c.label()),
            summary: summarize(&predicted),
            rows: predicted,
            failed,
            refit,
        });
    }
    ValidationReport {
        systems: reports,
        summary: summarize(&all),
        unreadable: grouped.unreadable,
        unmatched: grouped.unmatched,
        undrawn: grouped.undrawn,
    }
}

fn percent(x: Option<f64>) -> String {
    x.map_or_else(|| "–".into(), |e| format!("{:.0} %", e * 100.0))
}

fn signed_percent(e: f64) -> String {
    format!("{:+.0} %", e * 100.0)
}

fn measured_text(row: &MeasuredRow) -> String {
    match (row.time_us, row.busbw_gbyte_s) {
        (Some(t), _) if t > 0.0 => time_text(t),
        (_, Some(b)) => gbyte_s_text(b),
        _ => "–".into(),
    }
}

/// A busbw to a tenth of a GB/s, or to three significant digits under 1 GB/s: small
/// messages' 0.07 against 0.09 GB/s would both read "0.1" beside a 31 % error.
fn gbyte_s_text(gbyte_s: f64) -> String {
    if gbyte_s.abs() >= 1.0 {
        format!("{gbyte_s:.1} GB/s")
    } else {
        format!("{} GB/s", significant(gbyte_s, 3))
    }
}

fn predicted_text(p: &RowPrediction) -> String {
    match p.row.time_us {
        Some(t) if t > 0.0 => time_text(p.predicted_time_us),
        _ => gbyte_s_text(p.predicted_busbw_gbyte_s),
    }
}

/// The algorithm and protocol the model chose, whether the harness's launches set the time,
/// and the range of sizes a figure was quoted for.
fn algorithm_text(p: &RowPrediction) -> String {
    let mut text = format!("{}/{}", p.algorithm, p.protocol);
    if p.launch_bound {
        text.push_str(" under the launch floor");
    }
    if let Some(range) = &p.row.size_range {
        text.push_str(&format!(" (quoted for {range}: predicted at the top)"));
    }
    text
}

/// How the system's tests drove the GPUs, when that changes the times they print.
fn harness_text(h: &Harness) -> Option<String> {
    if h.cuda_graph {
        return Some(
            "nccl-tests replayed the operations from a CUDA graph (-G): no launch floor".into(),
        );
    }
    (h.gpus_per_thread > 1).then(|| {
        format!(
            "nccl-tests -g {g}: one host thread launches the kernels of {g} GPUs in turn, so no \
             operation takes less than {:.1} µs (the launch floor; {HOST_LAUNCH_PER_GPU_US} µs \
             per GPU, nccl-tests #123)",
            h.launch_floor_us(),
            g = h.gpus_per_thread
        )
    })
}

fn summary_line(s: &ErrorSummary) -> String {
    format!(
        "median |error| {} over {} rows; worst at ≥ 1 MiB {}, below {}",
        percent(s.median_abs_error),
        s.rows,
        percent(s.max_abs_error_from_1mib),
        percent(s.max_abs_error_below_1mib)
    )
}

/// What fitting the sweep as the user's own log gives back, in one line.
fn refit_line(f: &RefitSummary) -> String {
    format!(
        "refitted to its own {} rows: worst 1–64 MiB {} (before {}), ≥ 64 MiB {} (before {}); {}",
        f.rows,
        percent(f.worst_mid_after),
        percent(f.worst_mid_before),
        percent(f.worst_large_after),
        percent(f.worst_large_before),
        if f.fitted.is_empty() {
            "nothing fitted".to_string()
        } else {
            f.fitted.join(", ")
        }
    )
}

fn text_report(r: &ValidationReport) -> String {
    // Rows quoted as bandwidth show GB/s, but every error is of time: say so once.
    let mut out = String::from(
        "error = predicted time / measured time − 1 (negative: the model is faster; rows \
         quoted in GB/s are compared by the time they imply)\n\n",
    );
    for s in &r.systems {
        out.push_str(&format!("{}* on {}", s.prefix, s.design));
        if !s.assumes.is_empty() {
            out.push_str(&format!(" ({})", s.assumes));
        }
        out.push('\n');
        if let Some(h) = harness_text(&s.harness) {
            out.push_str(&format!("  {h}\n"));
        }
        if let Some(r) = s.nccl {
            out.push_str(&format!("  {}\n", release_note(r)));
        }
        if let Some(b) = s.nccl_buffer {
            out.push_str(&format!("  {}\n", buffer_note(b)));
        }
        for p in &s.rows {
            out.push_str(&format!(
                "  {:<22} {:<14} {:>9}  measured {:>10}  model {:>10}  {:>6}  {}{}\n",
                p.row.id,
                p.row.op.cli_name(),
                Bytes(p.row.bytes.0).to_string(),
                measured_text(&p.row),
                predicted_text(p),
                signed_percent(p.error),
                algorithm_text(p),
                p.row
                    .excluded
                    .as_ref()
                    .map_or_else(String::new, |why| format!("  (not counted: {why})")),
            ));
        }
        for f in &s.failed {
            out.push_str(&format!("  {:<22} not modelled: {}\n", f.row.id, f.reason));
        }
        out.push_str(&format!("  {}\n", summary_line(&s.summary)));
        if let Some(f) = &s.refit {
            out.push_str(&format!("  {}\n", refit_line(f)));
        }
        out.push('\n');
    }
    for (set, why, count) in skipped_sets(&skipped_rows(r, "no system lists them")) {
        out.push_str(&format!("skipped {count} row(s) of {set}: {why}\n"));
    }
    out.push_str(&format!("overall: {}\n", summary_line(&r.summary)));
    out
}

/// Every row not predicted, with why: unreadable ones first, then those of sets listed without
/// a design, then those of no listed system.
fn skipped_rows<'a>(r: &'a ValidationReport, unmatched: &'a str) -> Vec<(String, &'a str)> {
    r.unreadable
        .iter()
        .chain(&r.undrawn)
        .map(|(id, why)| (id.clone(), why.as_str()))
        .chain(r.unmatched.iter().map(|id| (id.clone(), unmatched)))
        .collect()
}

/// Skipped rows by data set (the id up to its last `-`), with the reason, in first-seen order:
/// each set's label (`SET-*`, or the row's own id when it is the only one) and row count.
fn skipped_sets<'a>(rows: &[(String, &'a str)]) -> Vec<(String, &'a str, usize)> {
    let mut sets: Vec<(String, &str, usize, &str)> = Vec::new();
    for (id, why) in rows {
        let set = id.rsplit_once('-').map_or(id.as_str(), |(head, _)| head);
        match sets.iter_mut().find(|(s, w, _, _)| s == set && w == why) {
            Some(entry) => entry.2 += 1,
            None => sets.push((set.to_string(), why, 1, id)),
        }
    }
    sets.into_iter()
        .map(|(set, why, count, first)| {
            let label = if count == 1 {
                first.to_string()
            } else {
                format!("{set}-*")
            };
            (label, why, count)
        })
        .collect()
}

fn markdown_report(r: &ValidationReport, figure_file: Option<&str>) -> String {
    let mut out = String::from(
        "# Validation against public measurements\n\n\
         Generated by `railyard validate --markdown` from the data sets in `assets/validation/`; \
         do not edit by hand. Each row is a published nccl-tests (or MLX) measurement, predicted \
         on the design that stands for its system. Error = predicted time / measured time − 1 \
         (negative: the model is faster than the measurement). Rows marked *not counted* are \
         shown but left out of the medians: their setup is uncertain, their reporter called the \
         run slow, they measure a library bug its maintainers fixed, or they took over 25 % \
         longer than the next size up of their sweep, which a larger message cannot (a glitch \
         of the run); each says which.\n\n",
    );
    out.push_str(&format!("**Overall:** {}.\n\n", summary_line(&r.summary)));
    if let Some(file) = figure_file {
        out.push_str(&format!(
            "![Predicted against measured time, and the error of each row by message size, \
             one colour per system; hollow rows are shown but not counted]({file})\n\n\
             Left: predicted against measured time (the diagonal is a perfect prediction, the \
             dashed lines ±25 %). Right: the error of each row by message size, with the \
             targets (±35 % below 1 MiB, ±25 % from 1 MiB); rows beyond ±100 % sit on the \
             edge as triangles. The figure is `railyard validate --svg`.\n\n"
        ));
    }
    out.push_str("| system | design | rows | median \\|error\\| | worst ≥ 1 MiB | worst < 1 MiB |\n|---|---|---:|---:|---:|---:|\n");
    for s in &r.systems {
        out.push_str(&format!(
            "| `{}` {} | `{}` | {} | {} | {} | {} |\n",
            s.prefix,
            s.assumes,
            s.design,
            s.summary.rows,
            percent(s.summary.median_abs_error),
            percent(s.summary.max_abs_error_from_1mib),
            percent(s.summary.max_abs_error_below_1mib)
        ));
    }
    let refits: Vec<&SystemReport> = r.systems.iter().filter(|s| s.refit.is_some()).collect();
    if !refits.is_empty() {
        out.push_str(
            "\n**Refitted.** Each sweep below also fitted as a user's own log would be \
             (`railyard calibrate`: the limiting technology's efficiency, each protocol's hop \
             latency, LL128's rate), then held against the same rows: what calibration gives \
             back where the protocols change. Rows under a harness's launch floor are left out \
             of the fit.\n\n\
             | system | rows fitted | worst 1–64 MiB | before | worst ≥ 64 MiB | before | fitted |\n\
             |---|---:|---:|---:|---:|---:|---|\n",
        );
        for s in refits {
            if let Some(f) = &s.refit {
                out.push_str(&format!(
                    "| `{}` | {} | {} | {} | {} | {} | {} |\n",
                    s.prefix,
                    f.rows,
                    percent(f.worst_mid_after),
                    percent(f.worst_mid_before),
                    percent(f.worst_large_after),
                    percent(f.worst_large_before),
                    f.fitted.join("; ")
                ));
            }
        }
    }
    out.push_str("\nRows not predicted, and why:\n\n");
    for (set, why, count) in skipped_sets(&skipped_rows(r, "no design is drawn for them")) {
        out.push_str(&format!("- `{set}` ({count}): {why}.\n"));
    }
    for s in &r.systems {
        out.push_str(&format!("\n## `{}` on `{}`\n\n", s.prefix, s.design));
        if !s.assumes.is_empty() {
            out.push_str(&format!("{}\n\n", s.assumes));
        }
        if let Some(h) = harness_text(&s.harness) {
            out.push_str(&format!("{h}\n\n"));
        }
        if let Some(r) = s.nccl {
            out.push_str(&format!("{}\n\n", release_note(r)));
        }
        if let Some(b) = s.nccl_buffer {
            out.push_str(&format!("{}\n\n", buffer_note(b)));
        }
        // Only the public sets (the page with a figure) stand beside designs' times.
        match (&s.kind, s.summary.rows, figure_file.is_some()) {
            (Some(kind), 0, true) => out.push_str(&format!(
                "Kind: {kind}. No row here counts, so designs of this kind do not draw on them.\n\n"
            )),
            (Some(kind), _, true) => out.push_str(&format!(
                "Kind: {kind}. A design of this kind shows the counted rows' errors beside its \
                 collective times.\n\n"
            )),
            (Some(kind), _, false) => out.push_str(&format!("Kind: {kind}.\n\n")),
            (None, ..) => {}
        }
        out.push_str("| id | collective | size | measured | model | error | algorithm |\n|---|---|---:|---:|---:|---:|---|\n");
        for p in &s.rows {
            out.push_str(&format!(
                "| {}{} | {} | {} | {} | {} | {} | {} |\n",
                p.row.id,
                if p.row.excluded.is_some() {
                    " (not counted)"
                } else {
                    ""
                },
                p.row.op.cli_name(),
                Bytes(p.row.bytes.0),
                measured_text(&p.row),
                predicted_text(p),
                signed_percent(p.error),
                algorithm_text(p)
            ));
        }
        for f in &s.failed {
            out.push_str(&format!(
                "| {} | not modelled: {} | | | | | |\n",
                f.row.id, f.reason
            ));
        }
        out.push_str(&not_counted_text(&s.rows));
    }
    out
}

/// Why a system's rows are not counted, one line per reason under its table: "every row"
/// when the reason is the whole system's, else the rows it holds for.
fn not_counted_text(rows: &[RowPrediction]) -> String {
    let mut reasons: Vec<(&str, Vec<&str>)> = Vec::new();
    for p in rows {
        let Some(why) = p.row.excluded.as_deref() else {
            continue;
        };
        match reasons.iter_mut().find(|(w, _)| *w == why) {
            Some((_, ids)) => ids.push(&p.row.id),
            None => reasons.push((why, vec![&p.row.id])),
        }
    }
    let mut out = String::new();
    for (why, ids) in reasons {
        let which = if ids.len() == rows.len() {
            "every row".to_string()
        } else {
            ids.join(", ")
        };
        out.push_str(&format!("\nNot counted ({which}): {why}.\n"));
    }
    out
}

/// The figure of the report: every predicted row, one series per system.
fn figure(r: &ValidationReport) -> String {
    let series: Vec<PlotSeries> = r
        .systems
        .iter()
        .map(|s| PlotSeries {
            label: format!("{}* ({} counted)", s.prefix, s.summary.rows),
            points: s
                .rows
                .iter()
                .map(|p| PlotPoint {
                    bytes: p.row.bytes.0,
                    measured_us: p.measured_time_us(),
                    predicted_us: p.predicted_time_us,
                    counted: p.row.excluded.is_none(),
                })
                .collect(),
        })
        .collect();
    validation_svg(
        &format!(
            "railyard against public measurements: {}",
            summary_line(&r.summary)
        ),
        &series,
    )
}

/// Paths given on the command line, for `run_source`.
fn file_source<'a>(
    measured: &'a Path,
    design: Option<&'a PathBuf>,
    systems: Option<&'a PathBuf>,
) -> Source<'a> {
    Source::File {
        measured,
        design: design.map(PathBuf::as_path),
        systems: systems.map(PathBuf::as_path),
    }
}

/// The rail-optimized DGX A100 / HDR 200G design of `gpus` GPUs that Megatron's published
/// runs are predicted on: two switch tiers while 40-port leaves reach, three beyond.
fn megatron_design(gpus: u32, catalog: &Catalog) -> Result<Design, String> {
    use crate::generate::{Template, TemplateSpec, generate};
    use crate::model::PartId;
    let nodes = gpus.div_ceil(8);
    let mut spec = TemplateSpec::new(Template::RailOptimized);
    spec.nodes = Some(nodes);
    spec.node = Some(PartId::new("dgx-a100"));
    spec.nic = Some(PartId::new("cx6-hdr-200"));
    spec.switch = Some(PartId::new("qm8700"));
    spec.tiers = if nodes <= 100 { 2 } else { 3 };
    generate(&spec, catalog).map_err(|e| e.to_string())
}

/// `validate --training`: the step model against Megatron-LM's weak-scaling table.
fn run_training(json: bool, markdown: bool, catalog: &Catalog) -> anyhow::Result<()> {
    use crate::analysis::job::published::{check_megatron_2021, megatron_markdown};
    use crate::analysis::job::published_finetune::{check_finetunes, finetune_markdown};
    let checks = check_megatron_2021(catalog, &mut |gpus| megatron_design(gpus, catalog))
        .context("could not predict Megatron's published runs")?;
    if json {
        let mut text = serde_json::to_string_pretty(&checks)?;
        text.push('\n');
        return write_stdout(&text);
    }
    let page = megatron_markdown(&checks) + &finetune_markdown(&check_finetunes());
    if markdown {
        return write_stdout(&page);
    }
    // The table without the page's prose.
    let table: String = page
        .lines()
        .filter(|l| l.starts_with('|') || l.starts_with("Median") || l.starts_with("# "))
        .map(|l| format!("{l}\n"))
        .collect();
    write_stdout(&table)
}

#[cfg(test)]
mod tests {
    use super::gbyte_s_text;

    #[test]
    fn small_bandwidths_keep_the_digits_their_error_needs() {
        // Azure's 1 KiB row: 0.07 measured against 0.0533 modelled, +31 %; at one decimal
        // both read 0.1.
        assert_eq!(gbyte_s_text(0.053_26), "0.0533 GB/s");
        assert_eq!(gbyte_s_text(0.07), "0.07 GB/s");
        assert_eq!(gbyte_s_text(231.64), "231.6 GB/s");
        assert_eq!(gbyte_s_text(1.0), "1.0 GB/s");
    }
}
