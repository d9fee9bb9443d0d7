//! `railyard export FILE -o FILE.svg|FILE.png`: the diagram, with links coloured by technology,
//! rail, tier or an all-reduce's load.

use super::{count_of, load, write_stdout};
use crate::analysis::collective::{self, CollectiveQuery, Op};
use crate::io::design_file::write_atomically;
use crate::io::link_colors::ColorMode;
use crate::model::{Bytes, Catalog, Design};
use anyhow::{Context, bail};
use std::path::Path;

/// The design's SVG; with `heatmap_bytes`, links coloured by an all-reduce of that size.
pub(super) fn design_svg(
    file: &Path,
    design: &Design,
    heatmap_bytes: Option<Bytes>,
    catalog: &Catalog,
) -> anyhow::Result<String> {
    design_svg_in(
        file,
        design,
        ColorMode::Technology,
        heatmap_bytes,
        false,
        catalog,
    )
}

/// The design's overview SVG (pods, units and racks folded into blocks), links coloured by
/// technology: the report's diagram with `--overview`.
pub(super) fn overview_svg(
    file: &Path,
    design: &Design,
    catalog: &Catalog,
) -> anyhow::Result<String> {
    design_svg_in(file, design, ColorMode::Technology, None, true, catalog)
}

/// The design's SVG with links coloured by `mode`; a heatmap runs an all-reduce of
/// `heatmap_bytes` (1 GiB if not given). `overview`: pods and rows folded into blocks.
fn design_svg_in(
    file: &Path,
    design: &Design,
    mode: ColorMode,
    heatmap_bytes: Option<Bytes>,
    overview: bool,
    catalog: &Catalog,
) -> anyhow::Result<String> {
    use crate::io::svg::{Detail, LinkColors, diagram_svg, drawn_detail};
    let detail = if overview {
        Detail::Overview
    } else {
        Detail::Full
    };
    if drawn_detail(design, detail) != detail {
        eprintln!(
            "railyard: {} is all one group, so its overview would be a single box: drawn in full",
            file.display()
        );
    }
    let draw =
        |design: &Design, colors: LinkColors<'_>| diagram_svg(design, catalog, colors, detail);
    let heatmap_bytes = match (mode, heatmap_bytes) {
        (ColorMode::Heatmap, bytes) => Some(bytes.unwrap_or(Bytes(1 << 30))),
        (_, None) => None,
        (_, Some(_)) => {
            bail!("--bytes sizes the heatmap's all-reduce: give it with --color heatmap")
        }
    };
    Ok(match heatmap_bytes {
        None => draw(
            design,
            match mode {
                ColorMode::Rail => LinkColors::Rail,
                ColorMode::Tier => LinkColors::Tier,
                _ => LinkColors::Technology,
            },
        ),
        Some(bytes) => {
            let q = CollectiveQuery::new(Op::AllReduce, bytes);
            let result = collective::collective(design, catalog, &q).with_context(|| {
                format!("{}: no heatmap, the all-reduce cannot run", file.display())
            })?;
            draw(
                design,
                LinkColors::Heatmap(&result.link_utilization, &result.summary()),
            )
        }
    })
}

/// Writes the diagram as SVG (or to standard output for `-`) or, for a `.png`, as PNG.
pub(super) fn run(
    file: &Path,
    output: &Path,
    mode: ColorMode,
    heatmap_bytes: Option<Bytes>,
    scale: Option<u32>,
    overview: bool,
    catalog: &Catalog,
) -> anyhow::Result<()> {
    let png = output
        .extension()
        .is_some_and(|e| e.eq_ignore_ascii_case("png"));
    if scale.is_some() && !png {
        bail!("--scale is for a PNG: give -o FILE.png");
    }
    let design = load(file)?;
    let svg = design_svg_in(file, &design, mode, heatmap_bytes, overview, catalog)?;
    if output.as_os_str() == "-" {
        return write_stdout(&svg);
    }
    let bytes = if png {
        crate::io::raster::svg_to_png(&svg, scale.unwrap_or(1)).with_context(|| {
            if overview {
                format!("could not draw {}", output.display())
            } else {
                format!(
                    "could not draw {} (--overview draws pods and rows as blocks, sized for a slide)",
                    output.display()
                )
            }
        })?
    } else {
        svg.into_bytes()
    };
    write_atomically(output, &bytes)
        .with_context(|| format!("could not write {}", output.display()))?;
    eprintln!(
        "railyard: wrote {}: {}, {}",
        output.display(),
        count_of(design.devices.len(), "device", "devices"),
        count_of(design.links.len(), "link", "links")
    );
    Ok(())
}
