//! File > Export BOM CSV / SVG / Markdown report, and Export for other tools (cable plan,
//! NetBox, draw.io, DOT, containerlab): the writers behind `railyard bom`, `export` and
//! `report`, on the active design. Where no file dialog can appear, a path field in the
//! window asks instead, as for Open, Save and PNG.

use anyhow::Context as _;
use std::path::{Path, PathBuf};

use super::RailyardApp;
use super::exporting::{ExportJob, OwnedColors};
use super::files;
use super::path_prompt::PathPurpose;
use crate::analysis::collective::Workload;
use crate::analysis::cost::bom_lines;
use crate::io::bom::{BomOptions, bom_total, write_bom_csv};
use crate::io::design_file::write_atomically;
use crate::io::export::{ExportFormat, export_to_path};
use crate::io::link_colors::ColorMode;
use crate::io::raster::svg_to_png;
use crate::io::svg::{Detail, LinkColors, design_to_svg, diagram_svg, drawn_detail};
use crate::model::{Bytes, Catalog, Design, LinkId};

/// The scale File > Export PNG offers first: sharp on a projector, a few megapixels for most
/// designs.
pub(super) const DEFAULT_PNG_SCALE: u32 = 2;

/// Devices from which a diagram export proposes the overview (`Detail::Overview`): the
/// 256-node fabric (556 devices) still reads in full on a slide; at 1,024 nodes (1,664) a
/// box is a few pixels, and the 8,192-node PNG is too large to draw at all.
const OVERVIEW_FROM_DEVICES: usize = 1_500;

/// The detail a diagram export of `design` proposes.
pub(super) fn proposed_detail(design: &Design) -> Detail {
    if design.devices.len() >= OVERVIEW_FROM_DEVICES {
        Detail::Overview
    } else {
        Detail::Full
    }
}

/// What the export message adds where an overview was asked for a design that is all one
/// group: it is drawn in full, since its overview would be one box.
fn drawn_in_full(design: &Design, asked: Detail) -> &'static str {
    if drawn_detail(design, asked) == asked {
        ""
    } else {
        ", drawn in full: all one group, its overview would be one box"
    }
}

/// The all-reduce size a report states, as `railyard report` does by default.
const REPORT_BYTES: Bytes = Bytes(1 << 30);

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ExportKind {
    Bom,
    Svg(Detail),
    /// The SVG diagram rendered to PNG at this many pixels per unit (1–4), as
    /// `railyard export -o F.png --scale K` writes it.
    Png(u32, Detail),
    Report,
    /// One of the formats for other tools (not SVG or PNG, which have their own kinds).
    Tool(ExportFormat),
}

impl ExportKind {
    pub(super) fn extension(self) -> &'static str {
        match self {
            Self::Bom => "csv",
            Self::Svg(_) => "svg",
            Self::Png(..) => "png",
            Self::Report => "md",
            // The last part of the name `railyard export` gives (`.clab.yml` → `yml`); NetBox
            // writes a folder (`-netbox`): no extension.
            Self::Tool(format) => format.suffix().rsplit_once('.').map_or("", |(_, ext)| ext),
        }
    }

    /// What follows the design file's stem in the proposed name, as `railyard export`
    /// names it: `pod.csv`, `pod.cables.csv`, `pod.clab.yml`, `pod-netbox`.
    pub(super) fn suffix(self) -> String {
        match self {
            Self::Tool(format) => format.suffix().to_string(),
            other => format!(".{}", other.extension()),
        }
    }

    /// The dialog's filter name, and what the path field asks for.
    pub(super) fn what(self) -> &'static str {
        match self {
            Self::Bom => "bill of materials (CSV)",
            Self::Svg(_) => "diagram (SVG)",
            Self::Png(..) => "diagram (PNG)",
            Self::Report => "report (Markdown)",
            Self::Tool(ExportFormat::Cables) => "cable plan (CSV)",
            Self::Tool(ExportFormat::Netbox) => "NetBox import folder",
            Self::Tool(ExportFormat::Drawio) => "diagram (draw.io)",
            Self::Tool(ExportFormat::Dot) => "graph (Graphviz DOT)",
            Self::Tool(ExportFormat::Containerlab) => "topology (containerlab)",
            Self::Tool(ExportFormat::Simai) => "topology (SimAI)",
            Self::Tool(ExportFormat::Htsim) => "fat tree (htsim)",
            Self::Tool(ExportFormat::AstraSim) => "network (ASTRA-sim)",
            Self::Tool(ExportFormat::AstraSimSystem) => "system layer (ASTRA-sim JSON)",
            Self::Tool(ExportFormat::Svg | ExportFormat::Png) => "diagram",
        }
    }
}

pub(super) fn with_extension(path: PathBuf, kind: ExportKind) -> PathBuf {
    if path.extension().is_some() || kind.extension().is_empty() {
        path
    } else {
        path.with_extension(kind.extension())
    }
}

/// The name an export proposes: the design file's name with the export's extension once
/// the design has been saved ("pme.ron" → "pme.csv"), else one made from the design's name.
pub fn export_file_name(design_file: Option<&Path>, design_name: &str, extension: &str) -> String {
    export_name_with_suffix(design_file, design_name, &format!(".{extension}"))
}

/// `export_file_name` with what follows the stem given whole (`.clab.yml`, `-netbox`).
pub(super) fn export_name_with_suffix(
    design_file: Option<&Path>,
    design_name: &str,
    suffix: &str,
) -> String {
    let stem = design_file
        .and_then(Path::file_stem)
        .map(|s| s.to_string_lossy().into_owned())
        .filter(|s| !s.is_empty())
        .unwrap_or_else(|| {
            files::suggested_file_name(design_name)
                .trim_end_matches(".ron")
                .to_string()
        });
    format!("{stem}{suffix}")
}

/// Writes `kind` of `design` to `path` (atomically, like a design save) and returns the
/// status-bar line. `label` names the design in the report, which weighs the design against
/// `workload` when the sidebar has one chosen. Diagrams colour links by `colors`, as the
/// canvas does.
pub fn write_export(
    kind: ExportKind,
    design: &Design,
    label: &str,
    workload: Option<&Workload>,
    catalog: &Catalog,
    path: &Path,
    colors: LinkColors<'_>,
) -> anyhow::Result<String> {
    let write = |p: &Path, bytes: &[u8]| {
        write_atomically(p, bytes).with_context(|| format!("could not write {}", p.display()))
    };
    match kind {
        ExportKind::Bom => {
            let options = BomOptions::default();
            let lines = bom_lines(design, catalog);
            let mut csv = Vec::new();
            write_bom_csv(&lines, &mut csv, &options).context("could not write the CSV")?;
            write(path, &csv)?;
            Ok(format!(
                "Exported {}: {} lines, {} {} total",
                path.display(),
                lines.len(),
                bom_total(&lines, &options).0,
                options.currency_label
            ))
        }
        ExportKind::Svg(detail) => {
            write(
                path,
                diagram_svg(design, catalog, colors, detail).as_bytes(),
            )?;
            Ok(format!(
                "Exported {}{}",
                path.display(),
                drawn_in_full(design, detail)
            ))
        }
        ExportKind::Png(scale, detail) => {
            let png = svg_to_png(&diagram_svg(design, catalog, colors, detail), scale)
                .context("could not draw the PNG")?;
            write(path, &png)?;
            let (w, h) = png_size(&png).unwrap_or_default();
            let overview = match drawn_detail(design, detail) {
                Detail::Overview => ", overview".to_string(),
                Detail::Full => drawn_in_full(design, detail).to_string(),
            };
            Ok(format!(
                "Exported {}: {w} × {h} pixels ({scale}×{overview})",
                path.display()
            ))
        }
        ExportKind::Tool(format) => {
            let summary = export_to_path(design, catalog, format, path)
                .with_context(|| format!("no {format} export"))?;
            Ok(format!("Exported {}: {summary}", path.display()))
        }
        ExportKind::Report => {
            // The diagram sits next to the report, which links it by name.
            let diagram = path.with_extension("svg");
            let diagram_name = diagram
                .file_name()
                .map(|n| n.to_string_lossy().into_owned());
            let report = crate::io::report::design_report(
                label,
                design,
                catalog,
                crate::io::report::ReportQuestion {
                    bytes: REPORT_BYTES,
                    workload,
                    routing: crate::analysis::collective::Routing::Ecmp,
                },
                None,
                diagram_name.as_deref(),
            );
            write(&diagram, design_to_svg(design, catalog, colors).as_bytes())?;
            write(path, report.as_bytes())?;
            Ok(format!(
                "Exported {} and {}",
                path.display(),
                diagram.display()
            ))
        }
    }
}

/// Width and height from a PNG's header (its IHDR chunk).
fn png_size(png: &[u8]) -> Option<(u32, u32)> {
    let word = |at: usize| Some(u32::from_be_bytes(png.get(at..at + 4)?.try_into().ok()?));
    Some((word(16)?, word(20)?))
}

impl RailyardApp {
    /// File > Export …: asks where, then writes.
    pub(super) fn ask_export(&mut self, kind: ExportKind, ctx: &egui::Context) {
        self.ask_path(PathPurpose::Export(kind), ctx);
    }

    /// Writes the export, in the background when the design is large (`exporting`).
    pub(super) fn export_to(&mut self, kind: ExportKind, path: &Path) {
        let doc = self.document();
        let label = doc
            .path()
            .map_or_else(|| doc.design().name.clone(), |p| p.display().to_string());
        // The heatmap as the canvas shows it, if it is on and computed.
        let heat: Option<(Vec<(LinkId, f64)>, String)> = self
            .prefs
            .heatmap
            .then(|| self.analysis())
            .flatten()
            .and_then(|(_, a)| {
                let of = a.collective.as_ref()?.as_ref().ok()?.summary();
                Some((a.heat.iter().map(|(&id, &u)| (id, u)).collect(), of))
            });
        let colors = match (heat, self.prefs.link_colors) {
            (Some((loads, of)), _) => OwnedColors::Heatmap(loads, of),
            (None, ColorMode::Rail) => OwnedColors::Rail,
            (None, ColorMode::Tier) => OwnedColors::Tier,
            (None, _) => OwnedColors::Technology,
        };
        let job = ExportJob {
            kind,
            design: doc.shared_design(),
            label,
            workload: doc
                .design()
                .job
                .as_ref()
                .and_then(crate::analysis::job::workload_of_job),
            catalog: std::sync::Arc::clone(&self.catalog),
            path: path.to_path_buf(),
            colors,
        };
        if job.is_large() {
            self.status = match self.exporting.start(job) {
                Some(line) => line,
                None => format!("Writing {}…", path.display()),
            };
        } else {
            self.status = job.run();
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::generate::{Template, TemplateSpec, generate};

    fn small_fabric() -> (Design, Catalog) {
        let catalog = Catalog::builtin();
        let mut spec = TemplateSpec::new(Template::RailOptimized);
        spec.nodes = Some(4);
        let design = generate(&spec, &catalog).expect("a 4-node rail-optimized fabric");
        (design, catalog)
    }

    /// An export without a workload, links by technology; its status line.
    fn export_plain(kind: ExportKind, design: &Design, catalog: &Catalog, path: &Path) -> String {
        write_export(
            kind,
            design,
            "x",
            None,
            catalog,
            path,
            LinkColors::Technology,
        )
        .expect("written")
    }

    #[test]
    fn the_bom_export_re_reads_to_the_cost_total() {
        let (design, catalog) = small_fabric();
        let dir = tempfile::tempdir().expect("temp dir");
        let path = dir.path().join("bom.csv");
        let status = export_plain(ExportKind::Bom, &design, &catalog, &path);
        let lines = bom_lines(&design, &catalog);
        let total = crate::analysis::cost::cost_summary(&lines).total.0;

        let mut reader = csv::Reader::from_path(&path).expect("the CSV");
        let headers = reader.headers().expect("headers").clone();
        let column = headers
            .iter()
            .position(|h| h == "extended_price_usd")
            .expect("an extended price column");
        let rows: Vec<csv::StringRecord> = reader.records().map(|r| r.expect("row")).collect();
        assert_eq!(rows.len(), lines.len());
        let sum: f64 = rows
            .iter()
            .map(|r| r[column].parse::<f64>().expect("a number"))
            .sum();
        assert!((sum - total).abs() < 0.01, "{sum} vs {total}");
        assert!(
            status.contains(&format!("{} lines", lines.len())),
            "{status}"
        );
    }

    #[test]
    fn svg_and_report_exports_write_their_files() {
        let (design, catalog) = small_fabric();
        let dir = tempfile::tempdir().expect("temp dir");
        let svg = dir.path().join("d.svg");
        write_export(
            ExportKind::Svg(Detail::Full),
            &design,
            "x",
            None,
            &catalog,
            &svg,
            LinkColors::Rail,
        )
        .expect("svg");
        let text = std::fs::read_to_string(&svg).expect("read");
        assert!(
            text.starts_with("<?xml") || text.starts_with("<svg"),
            "{}",
            &text[..40]
        );
        assert_eq!(
            text.matches("class=\"device\"").count(),
            design.devices.len()
        );
        assert!(
            text.contains("Links by rail"),
            "the legend follows the colours"
        );

        let report = dir.path().join("r.md");
        write_export(
            ExportKind::Report,
            &design,
            "my design",
            None,
            &catalog,
            &report,
            LinkColors::Technology,
        )
        .expect("md");
        let md = std::fs::read_to_string(&report).expect("read");
        assert!(md.contains("my design"));
        assert!(md.contains("r.svg"), "the report links its diagram");
        assert!(dir.path().join("r.svg").exists());
        assert!(!md.contains("## Workload"));
        // With the sidebar's workload chosen, the report weighs the design against it.
        let workload = Workload::llama(8);
        write_export(
            ExportKind::Report,
            &design,
            "my design",
            workload.as_ref(),
            &catalog,
            &report,
            LinkColors::Technology,
        )
        .expect("md");
        let md = std::fs::read_to_string(&report).expect("read");
        assert!(
            md.contains("## Workload\n\nLlama 8B in bf16, training"),
            "{md}"
        );
    }

    /// The simulators' formats from the menu: written where the design is a shape the tool
    /// models, refused with the reason (and no file) where it is not.
    #[test]
    fn simulator_exports_write_or_say_why_not() {
        let (design, catalog) = small_fabric();
        let dir = tempfile::tempdir().expect("temp dir");
        const SIMULATORS: [ExportFormat; 4] = [
            ExportFormat::Simai,
            ExportFormat::Htsim,
            ExportFormat::AstraSim,
            ExportFormat::AstraSimSystem,
        ];
        let write = |design: &Design, format: ExportFormat, name: &str| {
            let kind = ExportKind::Tool(format);
            let path = with_extension(dir.path().join(name), kind);
            let written = write_export(
                kind,
                design,
                "x",
                None,
                &catalog,
                &path,
                LinkColors::Technology,
            );
            (written, path)
        };
        for format in SIMULATORS {
            let (written, path) = write(&design, format, "pod");
            let status = written.expect("a rail-optimized fabric of leaves and spines");
            assert!(status.starts_with("Exported"), "{status}");
            assert!(path.is_file(), "{}", path.display());
        }
        // SimAI's header: 8 GPUs per server, one NVSwitch per server (four servers).
        let simai = std::fs::read_to_string(dir.path().join("pod.simai")).expect("written");
        let header: Vec<&str> = simai.lines().next().unwrap_or("").split(' ').collect();
        assert_eq!(header.get(1..3), Some(&["8", "4"][..]), "{header:?}");

        // One server and no network: nothing for a network simulator to model.
        let mut spec = TemplateSpec::new(Template::Single);
        spec.nodes = Some(1);
        let single = generate(&spec, &catalog).expect("one node");
        for format in SIMULATORS {
            let (written, path) = write(&single, format, "single");
            let err = written.expect_err("refused");
            assert!(format!("{err:#}").contains("switch"), "{format}: {err:#}");
            assert!(!path.exists());
        }
    }

    #[test]
    fn tool_exports_write_their_files_named_after_the_design() {
        let (design, catalog) = small_fabric();
        let dir = tempfile::tempdir().expect("temp dir");
        for format in [
            ExportFormat::Cables,
            ExportFormat::Netbox,
            ExportFormat::Drawio,
            ExportFormat::Dot,
            ExportFormat::Containerlab,
        ] {
            let kind = ExportKind::Tool(format);
            let name = export_name_with_suffix(Some(Path::new("/x/pod.ron")), "", &kind.suffix());
            assert_eq!(name, format!("pod{}", format.suffix()));
            let path = with_extension(dir.path().join(&name), kind);
            let status = export_plain(kind, &design, &catalog, &path);
            assert!(status.starts_with("Exported"), "{status}");
            assert!(path.exists(), "{}", path.display());
        }
        assert!(dir.path().join("pod-netbox").join("cables.csv").is_file());
        assert_eq!(
            with_extension(
                PathBuf::from("/tmp/lab"),
                ExportKind::Tool(ExportFormat::Containerlab)
            ),
            PathBuf::from("/tmp/lab.yml")
        );
        assert_eq!(
            with_extension(
                PathBuf::from("/tmp/nb"),
                ExportKind::Tool(ExportFormat::Netbox)
            ),
            PathBuf::from("/tmp/nb")
        );
    }

    #[test]
    fn export_names_follow_the_design_file() {
        assert_eq!(
            export_file_name(Some(Path::new("/home/a/pme.ron")), "Untitled 2", "csv"),
            "pme.csv"
        );
        assert_eq!(export_file_name(None, "DGX SU (1)", "svg"), "dgx-su-1.svg");
        assert_eq!(export_file_name(None, "  ", "md"), "design.md");
    }

    #[test]
    fn an_export_path_gets_its_extension_only_when_it_has_none() {
        assert_eq!(
            with_extension(PathBuf::from("/tmp/a"), ExportKind::Bom),
            PathBuf::from("/tmp/a.csv")
        );
        assert_eq!(
            with_extension(PathBuf::from("/tmp/a.txt"), ExportKind::Report),
            PathBuf::from("/tmp/a.txt")
        );
    }
}
