//! `railyard calibrate FILE --from LOG -o OUT.ron`: fits the design to an nccl-tests log and
//! writes it with the calibration, printing the fitted values and measured against model.

use super::args::parse_op;
use super::{load, write_stdout};
use crate::analysis::calibrate::{CalibrationFit, FitOptions, fit_calibration};
use crate::analysis::collective::Op;
use crate::io::design_file::{design_to_string, save_design};
use crate::io::nccl_log::parse_nccl_log;
use crate::model::Catalog;
use anyhow::Context;
use clap::Args;
use std::path::{Path, PathBuf};

#[derive(Debug, Args)]
pub(super) struct CalibrateArgs {
    /// The design file.
    file: PathBuf,
    /// nccl-tests output as printed (all_reduce_perf and friends).
    #[arg(long, value_name = "LOG")]
    from: PathBuf,
    /// Where to write the calibrated design (`-` for standard output).
    #[arg(short, long, value_name = "OUT.ron")]
    output: PathBuf,
    /// The collective, when the log does not name its test.
    #[arg(long, value_name = "OP", value_parser = parse_op)]
    op: Option<Op>,
    /// Ranks of the run, when the log does not list them.
    #[arg(long, value_name = "N", value_parser = clap::value_parser!(u32).range(2..))]
    gpus: Option<u32>,
    /// Print the fit as JSON instead of a table.
    #[arg(long)]
    json: bool,
}

/// Logs larger than this are refused: a full sweep is a few kilobytes.
const MAX_LOG_BYTES: u64 = 64 * 1024 * 1024;

pub(super) fn run(args: &CalibrateArgs, catalog: &Catalog) -> anyhow::Result<()> {
    let CalibrateArgs {
        file,
        from,
        output,
        op,
        gpus,
        json,
    } = args;
    let (op, gpus, json) = (*op, *gpus, *json);
    let mut design = load(file)?;
    let size = std::fs::metadata(from)
        .with_context(|| format!("{}: cannot read", from.display()))?
        .len();
    if size > MAX_LOG_BYTES {
        anyhow::bail!(
            "{}: {size} bytes, over the limit of {MAX_LOG_BYTES} for a log",
            from.display()
        );
    }
    let bytes = std::fs::read(from).with_context(|| format!("{}: cannot read", from.display()))?;
    let text = String::from_utf8_lossy(&bytes);
    let log = parse_nccl_log(&text).with_context(|| from.display().to_string())?;
    let options = FitOptions {
        op,
        gpus,
        source: from.file_name().map_or_else(
            || from.display().to_string(),
            |n| n.to_string_lossy().into(),
        ),
        fitted_at_unix_s: std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map_or(0, |d| d.as_secs()),
    };
    let fit = fit_calibration(&design, catalog, &log, &options)
        .with_context(|| format!("{} against {}", file.display(), from.display()))?;
    design.calibration = Some(fit.calibration.clone());
    if output.as_path() == Path::new("-") {
        // The design goes to stdout; the fit to stderr so the two do not mix.
        write_stdout(&design_to_string(&design)?)?;
        eprint!("{}", fit_table(&fit));
    } else {
        save_design(output, &design)?;
        if json {
            let mut text = serde_json::to_string_pretty(&fit)?;
            text.push('\n');
            write_stdout(&text)?;
        } else {
            write_stdout(&fit_table(&fit))?;
        }
    }
    Ok(())
}

/// The fitted values and one line per measured row.
pub fn fit_table(fit: &CalibrationFit) -> String {
    let mut out = format!(
        "# {} on {} GPUs, from {} ({})\n",
        fit.op.cli_name(),
        fit.gpus,
        fit.calibration.source,
        fit.calibration.test
    );
    for line in fit.fitted_lines("->", "u") {
        out.push_str(&format!("# {line}\n"));
    }
    for note in &fit.notes {
        out.push_str(&format!("# note: {note}\n"));
    }
    out.push_str(
        "# measured: the faster of each row's out-of-place and in-place times, what the fabric \
         can do at that size\n",
    );
    out.push_str(&format!(
        "#{:>11} {:>11} {:>9} {:>11} {:>9} {:>11} {:>9} {:>7}  {}\n",
        "size (B)", "measured", "busbw", "before", "busbw", "fitted", "busbw", "error", "algorithm"
    ));
    out.push_str(&format!(
        "#{:>11} {:>11} {:>9} {:>11} {:>9} {:>11} {:>9} {:>7}\n",
        "", "(us)", "(GB/s)", "(us)", "(GB/s)", "(us)", "(GB/s)", "(%)"
    ));
    for r in &fit.rows {
        out.push_str(&format!(
            "{:>12} {:>11.2} {:>9.2} {:>11.2} {:>9.2} {:>11.2} {:>9.2} {:>+7.1}  {} {}\n",
            r.bytes.0,
            r.measured_time_us,
            r.measured_busbw_gbyte_s,
            r.before_time_us,
            r.before_busbw_gbyte_s,
            r.predicted_time_us,
            r.predicted_busbw_gbyte_s,
            r.time_error() * 100.0,
            r.algorithm,
            r.protocol.label()
        ));
    }
    out
}
