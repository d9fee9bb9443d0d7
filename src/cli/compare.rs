//! `railyard compare A B [...]`: designs side by side, with changes against a baseline.

use super::args::{
    AdapterArgs, chosen_workload, parse_bytes, parse_fraction, parse_model, parse_positive,
    parse_routing, parse_weights,
};
use super::{count_of, load, write_stdout};
use crate::analysis::collective;
use crate::analysis::collective::{QuantizedWeights, Routing};
use crate::model::{Bytes, Catalog};
use anyhow::{Context, bail};
use clap::Args;
use std::path::{Path, PathBuf};

#[derive(Debug, Args)]
pub(super) struct CompareArgs {
    /// Two or more design files; each becomes a column named after the file.
    #[arg(value_name = "FILE", num_args = 2.., required = true)]
    files: Vec<PathBuf>,
    /// A Markdown table.
    #[arg(long, conflicts_with = "csv")]
    markdown: bool,
    /// CSV with raw values and deltas (fractions).
    #[arg(long)]
    csv: bool,
    /// Message size of the collective rows (all-reduce, all-to-all).
    #[arg(long, value_name = "SIZE", default_value = "1GiB", value_parser = parse_bytes, allow_negative_numbers = true)]
    bytes: Bytes,
    /// Which file the changes are taken against, counting from 1.
    #[arg(long, value_name = "K", default_value_t = 1, value_parser = clap::value_parser!(u32).range(1..))]
    baseline: u32,
    /// Add rows for this model's communication per step (as `workload --model`, in its
    /// usual parallel layout, narrowed on a design with fewer GPUs as workload narrows it) and
    /// its excess over an ideal network. Without it, the baseline design's own job, if its file
    /// carries one (the designer's workload).
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
    /// Train each design in its own fastest layout (tensor, pipeline, data parallel sizes,
    /// micro-batch, recomputation, ZeRO), as `workload --search` finds it, rather than all in
    /// the model's usual one; the Layout note names each.
    #[arg(long, conflicts_with = "serving")]
    search: bool,
    /// Renting each design's GPUs instead, USD per GPU-hour (your cloud's quote, energy
    /// included): adds rows for what a training job's tokens cost rented, and the share of
    /// the hours the owned GPUs must be busy for owning to cost less.
    #[arg(long, value_name = "USD", conflicts_with = "serving", value_parser = parse_positive)]
    rent: Option<f64>,
    /// How flows spread over equal-cost paths, in every design: `ecmp` (static routing, a
    /// hash of each connection) or `adaptive` (the switches balance them).
    #[arg(long, value_name = "ecmp|adaptive", default_value = "ecmp", value_parser = parse_routing)]
    routing: Routing,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum TableFormat {
    Text,
    Markdown,
    Csv,
}

/// A scenario's name: the file name without `.ron`.
fn scenario_name(file: &Path) -> String {
    file.file_stem().map_or_else(
        || file.display().to_string(),
        |s| s.to_string_lossy().into_owned(),
    )
}

/// Loads the files as (scenario name, design) and compares them (`report` too).
pub(super) fn comparison(
    files: &[PathBuf],
    bytes: Bytes,
    baseline: usize,
    (workload, search, rent): (Option<&collective::Workload>, bool, Option<f64>),
    routing: Routing,
    catalog: &Catalog,
) -> anyhow::Result<crate::analysis::compare::Comparison> {
    if baseline >= files.len() {
        bail!(
            "--baseline {} but only {} given",
            baseline + 1,
            count_of(files.len(), "file", "files")
        );
    }
    let designs = files
        .iter()
        .map(|f| Ok((scenario_name(f), load(f)?)))
        .collect::<anyhow::Result<Vec<_>>>()?;
    // Without --model, the baseline's own job (the designer's workload, saved in its file)
    // is asked of every design.
    let own = workload
        .is_none()
        .then(|| {
            designs[baseline]
                .1
                .job
                .as_ref()
                .and_then(crate::analysis::job::workload_of_job)
        })
        .flatten();
    Ok(crate::analysis::compare::compare_searching(
        &designs,
        catalog,
        bytes,
        baseline,
        (workload.or(own.as_ref()), search, rent),
        Some(crate::io::validation_sets::published()),
        routing,
    ))
}

pub(super) fn run(args: &CompareArgs, catalog: &Catalog) -> anyhow::Result<()> {
    use crate::io::report::{render_csv, render_markdown, render_text};
    let workload = chosen_workload(
        args.model.as_deref(),
        args.serving,
        args.efficiency,
        args.weights,
        args.adapters,
    );
    let format = if args.markdown {
        TableFormat::Markdown
    } else if args.csv {
        TableFormat::Csv
    } else {
        TableFormat::Text
    };
    let (files, bytes, baseline, workload) =
        (&args.files, args.bytes, args.baseline, workload.as_ref());
    let baseline = usize::try_from(baseline.saturating_sub(1)).unwrap_or(usize::MAX);
    let c = comparison(
        files,
        bytes,
        baseline,
        (workload, args.search, args.rent),
        args.routing,
        catalog,
    )?;
    let text = match format {
        TableFormat::Text => render_text(&c),
        TableFormat::Markdown => render_markdown(&c),
        TableFormat::Csv => render_csv(&c).context("could not write the CSV")?,
    };
    write_stdout(&text)
}
