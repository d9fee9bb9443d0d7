//! `railyard export` for the formats other tools read: the cable plan, NetBox, draw.io, DOT
//! and containerlab (SVG and PNG stay with `run_export` in `cli.rs`). Picks the format from
//! `--format` or the output's extension, and names the output after the design file when
//! `-o` is left out.

use super::{count_of, load, write_stdout};
use crate::io::design_file::write_atomically;
use crate::io::export::{
    ExportFormat, cables::write_cable_plan, containerlab::design_to_containerlab,
    dot::design_to_dot, drawio::design_to_drawio, netbox::write_netbox_folder,
};
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
            "cannot tell the format from {}: give --format (svg, png, cables, netbox, drawio, dot, containerlab)",
            output.display()
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

/// Writes one of the five formats for other tools.
pub(super) fn run(
    file: &Path,
    output: &Path,
    format: ExportFormat,
    catalog: &Catalog,
) -> anyhow::Result<()> {
    let design = load(file)?;
    let refused = || format!("{}: no {format} export", file.display());
    if format == ExportFormat::Netbox {
        let tables = write_netbox_folder(&design, catalog, output).with_context(refused)?;
        eprintln!(
            "railyard: wrote {}/ (devices.csv, interfaces.csv, cables.csv): {}, {}",
            output.display(),
            count_of(tables.device_count, "device", "devices"),
            count_of(tables.cable_count, "cable", "cables")
        );
        return Ok(());
    }
    let (text, what) = match format {
        ExportFormat::Cables => {
            let mut bytes = Vec::new();
            let rows = write_cable_plan(&design, catalog, &mut bytes).with_context(refused)?;
            let text = String::from_utf8(bytes).context("the cable plan is not UTF-8")?;
            (text, count_of(rows, "cable", "cables"))
        }
        ExportFormat::Drawio => (design_to_drawio(&design), device_and_link_counts(&design)),
        ExportFormat::Dot => (design_to_dot(&design), device_and_link_counts(&design)),
        ExportFormat::Containerlab => (
            design_to_containerlab(&design, catalog).with_context(refused)?,
            device_and_link_counts(&design),
        ),
        ExportFormat::Svg | ExportFormat::Png | ExportFormat::Netbox => {
            bail!("{format} is not written here")
        }
    };
    if output.as_os_str() == "-" {
        return write_stdout(&text);
    }
    write_atomically(output, text.as_bytes())
        .with_context(|| format!("could not write {}", output.display()))?;
    eprintln!("railyard: wrote {} ({format}): {what}", output.display());
    Ok(())
}

fn device_and_link_counts(design: &crate::model::Design) -> String {
    format!(
        "{}, {}",
        count_of(design.devices.len(), "device", "devices"),
        count_of(design.links.len(), "link", "links")
    )
}
