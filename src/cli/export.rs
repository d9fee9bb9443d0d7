//! `railyard export` for the formats other tools read: the cable plan, NetBox, draw.io, DOT
//! and containerlab (SVG and PNG stay with `run_export` in `cli.rs`). Picks the format from
//! `--format` or the output's extension, and names the output after the design file when
//! `-o` is left out.

use super::{load, write_stdout};
use crate::io::export::{ExportFormat, export_text, export_to_path};
use crate::model::Catalog;
use anyhow::{Context, bail};
use std::path::{Path, PathBuf};

/// The format and the output path: `--format` wins, else the extension says; without `-o`
/// the output goes next to the design (`pod.ron` → `pod.clab.yml`), which needs `--format`.
pub(super) fn resolve(
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
    // `run_export` tells PNG from SVG by the extension.
    if format == ExportFormat::Png && from_extension != Some(ExportFormat::Png) {
        bail!("a PNG needs -o FILE.png");
    }
    if stdout && format == ExportFormat::Netbox {
        bail!("{format} cannot go to standard output: give -o");
    }
    Ok((format, output))
}

/// Writes one of the five formats for other tools, or prints a single-file one for `-o -`.
pub(super) fn run(
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
