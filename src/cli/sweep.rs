//! `railyard sweep FILE [--json]`: collective time from 8 B to 8 GiB, as nccl-tests prints it.

use super::args::QueryArgs;
use super::{load, write_stdout};
use crate::analysis::accuracy::{MeasuredPoint, SystemClass, measured_points};
use crate::analysis::collective::{self, CollectiveQuery, Op, Workspace};
use crate::io::validation_sets::published;
use crate::model::units::group_thousands;
use crate::model::{Bytes, Catalog, Design};
use anyhow::Context;
use clap::Args;
use serde::Serialize;
use std::path::PathBuf;

#[derive(Debug, Args)]
pub(super) struct SweepArgs {
    /// The design file.
    file: PathBuf,
    /// JSON instead of a table: what the model assumes, the rows, and the published runs
    /// of systems of the design's kind.
    #[arg(long)]
    json: bool,
    #[command(flatten)]
    query: QueryArgs,
}

/// `sweep --json`: the rows with what every one of them assumes, as `eval --json` gives it
/// for one size.
#[derive(Debug, Clone, Serialize)]
pub struct SweepReport {
    pub file: String,
    pub name: String,
    /// `all-reduce`, `all-gather`, ...
    pub op: &'static str,
    pub gpus: u32,
    pub routing: &'static str,
    /// The collective library (`nccl`, `mlx-ring`, `mlx-jaccl`, `gloo`).
    pub library: collective::Library,
    /// The NCCL release the design names, where it names one.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub nccl_release: Option<crate::model::NcclRelease>,
    /// What the model assumes of the library, the same at every size.
    pub assumes: String,
    /// The design's calibration, when it has one (the times are the calibrated model's).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub calibrated: Option<String>,
    pub rows: Vec<SweepRow>,
    /// Published runs of systems of the design's kind against the model on the design that
    /// stands for each (`railyard validate`); empty: how far the model is off here is
    /// unknown. Absent for a calibrated design, which answers to its own log.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub published: Option<Vec<MeasuredPoint>>,
}

/// One row of `sweep --json`.
#[derive(Debug, Clone, Serialize)]
pub struct SweepRow {
    pub bytes: u64,
    /// Elements of 4 bytes (float32) each rank passes NCCL, as nccl-tests prints them: the
    /// whole buffer for all-reduce, broadcast, reduce and send/recv; one rank's share for
    /// all-gather, reduce-scatter and all-to-all (their tests' `paramcount`, count / nranks).
    pub count: u64,
    pub time_us: f64,
    pub algbw_gbyte_s: f64,
    pub busbw_gbyte_s: f64,
    pub algorithm: &'static str,
    pub protocol: &'static str,
    /// Why this algorithm and protocol at this size.
    pub why: String,
}

pub(super) fn run(args: &SweepArgs, catalog: &Catalog) -> anyhow::Result<()> {
    let (file, json, query) = (&args.file, args.json, &args.query.query(Bytes(1 << 30)));
    let design = args.query.design_for_run(load(file)?);
    let results = collective::sweep(&design, catalog, query)
        .with_context(|| format!("{}: cannot model {}", file.display(), query.op.cli_name()))?;
    let rows: Vec<SweepRow> = results
        .iter()
        .map(|r| SweepRow {
            bytes: r.bytes.0,
            count: match r.op {
                Op::AllGather | Op::ReduceScatter | Op::AllToAll => {
                    r.bytes.0 / 4 / u64::from(r.gpus.max(1))
                }
                _ => r.bytes.0 / 4,
            },
            time_us: r.time_us,
            algbw_gbyte_s: r.algbw_gbyte_s,
            busbw_gbyte_s: r.busbw_gbyte_s,
            algorithm: r.algorithm.label(),
            protocol: r.protocol.label(),
            why: r.why.clone(),
        })
        .collect();
    let gpus = results.first().map_or(0, |r| r.gpus);
    let calibrated = design.calibration.as_ref().and_then(|c| c.summary());
    if json {
        let Some(first) = results.first() else {
            anyhow::bail!("{}: no sizes to sweep", file.display());
        };
        let report = SweepReport {
            file: file.display().to_string(),
            name: design.name.clone(),
            op: query.op.cli_name(),
            gpus,
            routing: query.routing.cli_name(),
            library: first.library,
            nccl_release: first.nccl_release,
            assumes: first.assumes.clone(),
            published: calibrated
                .is_none()
                .then(|| published_points(&design, catalog, query, gpus)),
            calibrated,
            rows,
        };
        let mut text = serde_json::to_string_pretty(&report)?;
        text.push('\n');
        return write_stdout(&text);
    }
    let mut out = format!(
        "# {} on {} GPUs of {} ({} routing)\n",
        query.op.cli_name(),
        group_thousands(i64::from(gpus)),
        design.name,
        query.routing.cli_name()
    );
    if let Some(r) = results.first() {
        out.push_str(&format!(
            "# library: {}; the model assumes {}\n",
            r.library_text(),
            r.assumes
        ));
    }
    if let Some(cal) = &calibrated {
        out.push_str(&format!("# {cal}\n"));
    }
    out.push_str(&format!(
        "#{:>11} {:>11} {:>12} {:>9} {:>9}  {}\n",
        "size (B)", "count", "time (us)", "algbw", "busbw", "algorithm"
    ));
    out.push_str(&format!(
        "#{:>11} {:>11} {:>12} {:>9} {:>9}\n",
        "", "(elements)", "", "(GB/s)", "(GB/s)"
    ));
    for (row, r) in rows.iter().zip(&results) {
        out.push_str(&format!(
            "{:>12} {:>11} {:>12.2} {:>9.2} {:>9.2}  {}\n",
            row.bytes,
            row.count,
            row.time_us,
            row.algbw_gbyte_s,
            row.busbw_gbyte_s,
            r.algorithm_text().replace('/', " ")
        ));
    }
    // A calibrated design answers to its own log.
    if calibrated.is_none() {
        out.push_str(&published_block(&published_points(
            &design, catalog, query, gpus,
        )));
    }
    write_stdout(&out)
}

/// The published runs of systems of the design's kind, each against the model on the design
/// that stands for its system, by size: how far to trust the sweep.
fn published_points(
    design: &Design,
    catalog: &Catalog,
    query: &CollectiveQuery,
    gpus: u32,
) -> Vec<MeasuredPoint> {
    let mut points = SystemClass::of_run(design, catalog, gpus, &Workspace::default())
        .map(|class| measured_points(published(), &class, query, gpus))
        .unwrap_or_default();
    points.sort_by(|a, b| a.bytes.cmp(&b.bytes).then_with(|| a.system.cmp(&b.system)));
    points
}

/// The published points under the table.
fn published_block(points: &[MeasuredPoint]) -> String {
    if points.is_empty() {
        return "# No counted published run of a system of this kind: how far the model is off \
                here is unknown (railyard validate lists what has been measured, and why a run \
                is not counted).\n"
            .into();
    }
    let mut out = String::from(
        "#\n# Published runs of systems of this kind, against the model on the design standing \
         for each (railyard validate):\n",
    );
    out.push_str(&format!(
        "# {:>11}  {:<14} {:>14} {:>12} {:>7}\n",
        "size (B)", "system", "measured (us)", "model (us)", "error"
    ));
    for p in points {
        out.push_str(&format!(
            "# {:>11}  {:<14} {:>14.2} {:>12.2} {:>+6.0}%\n",
            p.bytes.0,
            p.system,
            p.time_us,
            p.model_time_us,
            p.error * 100.0
        ));
    }
    out
}
