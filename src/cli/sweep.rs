//! `railyard sweep FILE [--json]`: collective time from 8 B to 8 GiB, as nccl-tests prints it.

use super::args::QueryArgs;
use super::{load, write_stdout};
use crate::analysis::accuracy::{SystemClass, measured_points};
use crate::analysis::collective::{self, CollectiveQuery, Op};
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
    /// A JSON array of rows instead of a table.
    #[arg(long)]
    json: bool,
    #[command(flatten)]
    query: QueryArgs,
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
        })
        .collect();
    if json {
        let mut text = serde_json::to_string_pretty(&rows)?;
        text.push('\n');
        return write_stdout(&text);
    }
    let gpus = results.first().map_or(0, |r| r.gpus);
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
    if let Some(cal) = design.calibration.as_ref().and_then(|c| c.summary()) {
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
    if design.calibration.is_none() {
        out.push_str(&published_block(&design, catalog, query, gpus));
    }
    write_stdout(&out)
}

/// The published runs of systems of the design's kind, each against the model on the design
/// that stands for its system: how far to trust the table above, size by size.
fn published_block(
    design: &Design,
    catalog: &Catalog,
    query: &CollectiveQuery,
    gpus: u32,
) -> String {
    let mut points = SystemClass::of(design, catalog)
        .map(|class| measured_points(published(), &class, query, gpus))
        .unwrap_or_default();
    if points.is_empty() {
        return "# No counted published run of a system of this kind: how far the model is off \
                here is unknown (railyard validate lists what has been measured, and why a run \
                is not counted).\n"
            .into();
    }
    points.sort_by(|a, b| a.bytes.cmp(&b.bytes).then_with(|| a.system.cmp(&b.system)));
    let mut out = String::from(
        "#\n# Published runs of systems of this kind, against the model on the design standing \
         for each (railyard validate):\n",
    );
    out.push_str(&format!(
        "#{:>11}  {:<14} {:>14} {:>12} {:>7}\n",
        "size (B)", "system", "measured (us)", "model (us)", "error"
    ));
    for p in &points {
        out.push_str(&format!(
            "#{:>11}  {:<14} {:>14.2} {:>12.2} {:>+6.0}%\n",
            p.bytes.0,
            p.system,
            p.time_us,
            p.model_time_us,
            p.error * 100.0
        ));
    }
    out
}
