//! `railyard sweep FILE [--json]`: collective time from 8 B to 8 GiB, as nccl-tests prints it.

use super::args::QueryArgs;
use super::{load, write_stdout};
use crate::analysis::collective;
use crate::model::units::group_thousands;
use crate::model::{Bytes, Catalog};
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
    /// Elements of 4 bytes (float32), as nccl-tests counts them.
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
            count: r.bytes.0 / 4,
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
    write_stdout(&out)
}
