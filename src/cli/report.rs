//! `railyard report FILE [MORE ...] -o FILE.md`: the Markdown report, and its SVG diagram next
//! to it.

use super::args::{
    AdapterArgs, chosen_workload, parse_bytes, parse_fraction, parse_model, parse_routing,
    parse_weights,
};
use super::compare::comparison;
use super::diagram::{design_svg, overview_svg};
use super::{load, write_stdout};
use crate::analysis::collective::{QuantizedWeights, Routing};
use crate::io::design_file::write_atomically;
use crate::model::{Bytes, Catalog};
use anyhow::{Context, bail};
use clap::Args;
use std::path::{Path, PathBuf};

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
    /// parallel layout. Without it, the design's own job, if its file carries one (the
    /// designer's workload).
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
    /// With `--serving`: weights quantized to int8, or int4 in AWQ/GPTQ groups of 128
    /// (decode reads and holds fewer bytes; the cache and activations stay in bf16).
    #[arg(long, value_name = "int8|int4", requires = "serving", value_parser = parse_weights)]
    weights: Option<QuantizedWeights>,
    #[command(flatten)]
    adapters: AdapterArgs,
    /// How flows spread over equal-cost paths, in every design: `ecmp` (static routing, a
    /// hash of each connection) or `adaptive` (the switches balance them).
    #[arg(long, value_name = "ecmp|adaptive", default_value = "ecmp", value_parser = parse_routing)]
    routing: Routing,
    /// Draw each diagram as an overview (pods, units and racks as blocks, bundles between
    /// them), as `export --overview` does: for a slide of a large fabric.
    #[arg(long)]
    overview: bool,
}

pub(super) fn run(args: &ReportArgs, catalog: &Catalog) -> anyhow::Result<()> {
    let workload = chosen_workload(
        args.model.as_deref(),
        args.serving,
        args.efficiency,
        args.weights,
        args.adapters,
    );
    let (files, output, bytes, workload) =
        (&args.files, &args.output, args.bytes, workload.as_ref());
    let Some(file) = files.first() else {
        bail!("give at least one design file");
    };
    let design = load(file)?;
    // Without --model, the design's own job (the designer's workload, saved in its file).
    let own = workload
        .is_none()
        .then(|| {
            design
                .job
                .as_ref()
                .and_then(crate::analysis::job::workload_of_job)
        })
        .flatten();
    let workload = workload.or(own.as_ref());
    let comparison = if files.len() > 1 {
        Some(comparison(
            files,
            bytes,
            0,
            (workload, false, None),
            args.routing,
            catalog,
        )?)
    } else {
        None
    };
    let asked = crate::io::report::ReportQuestion {
        bytes,
        workload,
        routing: args.routing,
    };
    let to_stdout = output.as_os_str() == "-";
    let diagram_path = output.with_extension("svg");
    let diagram_name = diagram_path
        .file_name()
        .map(|n| n.to_string_lossy().into_owned());
    let mut report = crate::io::report::design_report(
        &file.display().to_string(),
        &design,
        catalog,
        asked,
        comparison.as_ref(),
        if to_stdout {
            None
        } else {
            diagram_name.as_deref()
        },
    );
    // Every design of a comparison gets its own section and diagram, after the first's: a
    // meeting weighs all of them, not only the baseline.
    let mut diagrams = vec![(diagram_path, file.as_path(), design)];
    for (k, other) in files.iter().enumerate().skip(1) {
        let design = load(other)?;
        let path = numbered_diagram(output, k + 1);
        let name = path.file_name().map(|n| n.to_string_lossy().into_owned());
        report.push_str("\n---\n\n");
        report.push_str(&crate::io::report::design_report(
            &other.display().to_string(),
            &design,
            catalog,
            asked,
            None,
            if to_stdout { None } else { name.as_deref() },
        ));
        diagrams.push((path, other.as_path(), design));
    }
    if to_stdout {
        return write_stdout(&report);
    }
    for (path, file, design) in &diagrams {
        let svg = if args.overview {
            overview_svg(file, design, catalog)?
        } else {
            design_svg(file, design, None, catalog)?
        };
        write_atomically(path, svg.as_bytes())
            .with_context(|| format!("could not write {}", path.display()))?;
    }
    write_atomically(output, report.as_bytes())
        .with_context(|| format!("could not write {}", output.display()))?;
    let written: Vec<String> = diagrams
        .iter()
        .map(|(path, _, _)| path.display().to_string())
        .collect();
    eprintln!(
        "railyard: wrote {} and {}",
        output.display(),
        written.join(", ")
    );
    Ok(())
}

/// `report-2.svg` beside `report.md`: the diagram of the `k`-th design.
fn numbered_diagram(output: &Path, k: usize) -> PathBuf {
    let stem = output
        .file_stem()
        .map_or_else(|| "report".into(), |s| s.to_string_lossy().into_owned());
    output.with_file_name(format!("{stem}-{k}.svg"))
}
