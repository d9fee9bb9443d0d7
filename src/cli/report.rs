//! `railyard report FILE [MORE ...] -o FILE.md`: the Markdown report, and its SVG diagram next
//! to it.

use super::args::{chosen_workload, parse_bytes, parse_fraction, parse_model};
use super::compare::comparison;
use super::diagram::design_svg;
use super::{load, write_stdout};
use crate::io::design_file::write_atomically;
use crate::model::{Bytes, Catalog};
use anyhow::{Context, bail};
use clap::Args;
use std::path::PathBuf;

#[derive(Debug, Args)]
pub(super) struct ReportArgs {
    /// The design file, then any designs to compare it with.
    #[arg(value_name = "FILE", num_args = 1.., required = true)]
    files: Vec<PathBuf>,
    /// The Markdown file to write; the diagram goes next to it with `.svg` (`-` prints
    /// the report without a diagram).
    #[arg(short, long, value_name = "FILE.md")]
    output: PathBuf,
    /// Message size of the collectives.
    #[arg(long, value_name = "SIZE", default_value = "1GiB", value_parser = parse_bytes, allow_negative_numbers = true)]
    bytes: Bytes,
    /// Add a workload section for this model (as `workload --model`), in its usual
    /// parallel layout.
    #[arg(long, value_name = "MODEL", value_parser = parse_model)]
    model: Option<String>,
    /// With `--model`: serving replicas (one decode step) rather than training.
    #[arg(long, requires = "model")]
    serving: bool,
    /// With `--model`: the fraction of the GPUs' dense peak the kernels achieve, 0 to 1, on
    /// every design, in place of each GPU generation's published figure (without one, the
    /// step, MFU and cost of GPUs with no published figure are unknown).
    #[arg(long, value_name = "F", requires = "model", value_parser = parse_fraction)]
    efficiency: Option<f64>,
}

pub(super) fn run(args: &ReportArgs, catalog: &Catalog) -> anyhow::Result<()> {
    let workload = chosen_workload(args.model.as_deref(), args.serving, args.efficiency);
    let (files, output, bytes, workload) =
        (&args.files, &args.output, args.bytes, workload.as_ref());
    let Some(file) = files.first() else {
        bail!("give at least one design file");
    };
    let design = load(file)?;
    let comparison = if files.len() > 1 {
        Some(comparison(files, bytes, 0, workload, catalog)?)
    } else {
        None
    };
    let to_stdout = output.as_os_str() == "-";
    let diagram_path = output.with_extension("svg");
    let diagram_name = diagram_path
        .file_name()
        .map(|n| n.to_string_lossy().into_owned());
    let report = crate::io::report::design_report(
        &file.display().to_string(),
        &design,
        catalog,
        bytes,
        workload,
        comparison.as_ref(),
        if to_stdout {
            None
        } else {
            diagram_name.as_deref()
        },
    );
    if to_stdout {
        return write_stdout(&report);
    }
    let svg = design_svg(file, &design, None, catalog)?;
    write_atomically(&diagram_path, svg.as_bytes())
        .with_context(|| format!("could not write {}", diagram_path.display()))?;
    write_atomically(output, report.as_bytes())
        .with_context(|| format!("could not write {}", output.display()))?;
    eprintln!(
        "railyard: wrote {} and {}",
        output.display(),
        diagram_path.display()
    );
    Ok(())
}
