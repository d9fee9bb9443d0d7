//! `railyard export`: picks the format from `--format` or the output's extension (naming the
//! output after the design file when `-o` is left out), hands SVG and PNG to `diagram.rs`, and
//! writes the formats other tools read: the cable plan, NetBox, draw.io, DOT, containerlab,
//! SimAI, htsim and ASTRA-sim.

use super::args::{parse_bytes, parse_color_mode, parse_export_format};
use super::{diagram, load, write_stdout};
use crate::io::export::{ExportFormat, export_text, export_to_path};
use crate::io::link_colors::ColorMode;
use crate::model::{Bytes, Catalog};
use anyhow::{Context, bail};
use clap::Args;
use std::path::{Path, PathBuf};

#[derive(Debug, Args)]
pub(super) struct ExportArgs {
    /// The design file.
    file: PathBuf,
    /// The file to write; its extension names the format unless --format does: .svg,
    /// .png, .csv (the cable plan; the BOM is `railyard bom`), .drawio, .dot or .gv,
    /// .yml or .yaml (containerlab), .simai (SimAI), .topo (htsim), .astra.yml
    /// (ASTRA-sim). NetBox writes a folder. `-` is standard output. Without -o, the
    /// output goes next to the design file (needs --format).
    #[arg(short, long, value_name = "OUT")]
    output: Option<PathBuf>,
    /// svg, png, cables, netbox, drawio, dot, containerlab, simai, htsim or astra-sim.
    #[arg(long, value_name = "FORMAT", value_parser = parse_export_format)]
    format: Option<ExportFormat>,
    /// What link colours show: technology, rail, tier or heatmap (load in an all-reduce).
    #[arg(long, value_name = "MODE", default_value = "technology", value_parser = parse_color_mode)]
    color: ColorMode,
    /// The same as `--color heatmap`.
    #[arg(long, conflicts_with = "color")]
    heatmap: bool,
    /// Message size of the heatmap's all-reduce (default 1 GiB).
    #[arg(long, value_name = "SIZE", value_parser = parse_bytes, allow_negative_numbers = true)]
    bytes: Option<Bytes>,
    /// Pixels per diagram unit of a PNG, 1 to 4.
    #[arg(long, value_name = "K", value_parser = clap::value_parser!(u32).range(1..=4))]
    scale: Option<u32>,
    /// An overview for a slide: each pod and scalable unit, and each row of devices outside
    /// them (a core tier), folded into one block with its counts, and the links between two
    /// blocks drawn as one line with their count. Text keeps its size however large the
    /// fabric, so 8,192 nodes fit a screen's width.
    #[arg(long)]
    overview: bool,
}

/// Draws the diagram, or writes a format for other tools.
pub(super) fn run(args: ExportArgs, catalog: &Catalog) -> anyhow::Result<()> {
    let ExportArgs {
        file,
        output,
        format,
        color,
        heatmap,
        bytes,
        scale,
        overview,
    } = args;
    let mode = if heatmap { ColorMode::Heatmap } else { color };
    let (format, output) = resolve(&file, output, format)?;
    if matches!(format, ExportFormat::Svg | ExportFormat::Png) {
        diagram::run(&file, &output, mode, bytes, scale, overview, catalog)
    } else if mode != ColorMode::Technology || bytes.is_some() || scale.is_some() || overview {
        bail!("--color, --heatmap, --bytes, --scale and --overview are for SVG and PNG")
    } else {
        run_for_tools(&file, &output, format, catalog)
    }
}

/// The format and the output path: `--format` wins, else the extension says; without `-o`
/// the output goes next to the design (`pod.ron` → `pod.clab.yml`), which needs `--format`.
fn resolve(
    file: &Path,
    output: Option<PathBuf>,
    format: Option<ExportFormat>,
) -> anyhow::Result<(ExportFormat, PathBuf)> {
    let Some(output) = output else {
        let Some(format) = format else {
            bail!("give -o FILE (its extension names the format) or --format FORMAT");
        };
        return Ok((format, format.beside(file)));
    };
    let stdout = output.as_os_str() == "-";
    let from_extension = ExportFormat::from_path(&output);
    let format = match (format, from_extension) {
        (Some(f), Some(e)) if f != e => bail!(
            "--format {f} but {} ends like a {e} file: drop --format or change the name",
            output.display()
        ),
        (Some(f), _) => f,
        (None, Some(e)) => e,
        (None, None) if stdout => ExportFormat::Svg,
        (None, None) => bail!(
            "cannot tell the format from {}: give --format ({})",
            output.display(),
            ExportFormat::names()
        ),
    };
    // `diagram::run` tells PNG from SVG by the extension.
    if format == ExportFormat::Png && from_extension != Some(ExportFormat::Png) {
        bail!("a PNG needs -o FILE.png");
    }
    if stdout && format == ExportFormat::Netbox {
        bail!("{format} cannot go to standard output: give -o");
    }
    Ok((format, output))
}

/// Writes one of the formats for other tools, or prints a single-file one for `-o -`.
fn run_for_tools(
    file: &Path,
    output: &Path,
    format: ExportFormat,
    catalog: &Catalog,
) -> anyhow::Result<()> {
    let design = load(file)?;
    let refused = || format!("{}: no {format} export", file.display());
    if output.as_os_str() == "-" {
        return write_stdout(&export_text(&design, catalog, format).with_context(refused)?);
    }
    let summary = export_to_path(&design, catalog, format, output).with_context(refused)?;
    eprintln!("railyard: wrote {} ({format}): {summary}", output.display());
    Ok(())
}
