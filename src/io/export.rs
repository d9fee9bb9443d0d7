//! Exports for other tools: a cable plan (cut sheet) CSV, NetBox bulk-import CSVs, a draw.io
//! diagram, Graphviz DOT, a containerlab topology and network simulators' topologies
//! (SimAI, htsim, ASTRA-sim). One file per format below this one; what they share (port
//! names, the cabled links, racks, link labels) is in `cabling`.
//! No UI imports: the command line and the designer's File menu call the same writers.

pub mod astra_sim;
pub mod astra_sim_system;
pub mod cables;
pub mod cabling;
pub mod containerlab;
pub mod dot;
pub mod drawio;
pub mod htsim;
pub mod netbox;
pub mod simai;

use crate::model::{Catalog, Design, LinkId};
use std::fmt;
use std::path::{Path, PathBuf};
use std::str::FromStr;

/// Every format `railyard export` writes: the two diagrams it had, and those for other tools.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum ExportFormat {
    Svg,
    Png,
    /// The cable plan (cut sheet) as CSV, one row per cable.
    Cables,
    /// A folder of NetBox bulk-import CSVs.
    Netbox,
    Drawio,
    Dot,
    Containerlab,
    /// SimAI's topology text file (GPUs, NVSwitches, switches and their links).
    Simai,
    /// An htsim fat-tree topology (`.topo`) for `FatTreeTopology::load`.
    Htsim,
    /// An ASTRA-sim analytical network (`network.yml`): scale-up and scale-out dimensions.
    AstraSim,
    /// ASTRA-sim's system layer (`system.json`): the collective implementation per dimension
    /// railyard chose.
    AstraSimSystem,
}

impl ExportFormat {
    pub const ALL: [ExportFormat; 11] = [
        ExportFormat::Svg,
        ExportFormat::Png,
        ExportFormat::Cables,
        ExportFormat::Netbox,
        ExportFormat::Drawio,
        ExportFormat::Dot,
        ExportFormat::Containerlab,
        ExportFormat::Simai,
        ExportFormat::Htsim,
        ExportFormat::AstraSim,
        ExportFormat::AstraSimSystem,
    ];

    /// The word `--format` takes.
    pub fn name(self) -> &'static str {
        match self {
            ExportFormat::Svg => "svg",
            ExportFormat::Png => "png",
            ExportFormat::Cables => "cables",
            ExportFormat::Netbox => "netbox",
            ExportFormat::Drawio => "drawio",
            ExportFormat::Dot => "dot",
            ExportFormat::Containerlab => "containerlab",
            ExportFormat::Simai => "simai",
            ExportFormat::Htsim => "htsim",
            ExportFormat::AstraSim => "astra-sim",
            ExportFormat::AstraSimSystem => "astra-sim-system",
        }
    }

    /// What is appended to a design's file stem to name the export: NetBox's is a folder.
    pub fn suffix(self) -> &'static str {
        match self {
            ExportFormat::Svg => ".svg",
            ExportFormat::Png => ".png",
            ExportFormat::Cables => ".cables.csv",
            ExportFormat::Netbox => "-netbox",
            ExportFormat::Drawio => ".drawio",
            ExportFormat::Dot => ".dot",
            ExportFormat::Containerlab => ".clab.yml",
            // SimAI's own files have no extension; this one says what reads it.
            ExportFormat::Simai => ".simai",
            ExportFormat::Htsim => ".topo",
            ExportFormat::AstraSim => ".astra.yml",
            ExportFormat::AstraSimSystem => ".astra.json",
        }
    }

    /// The format an output path's extension names. `.csv` means the cable plan: the bill
    /// of materials has its own command (`railyard bom`). NetBox writes a folder, so it has
    /// no extension and always needs `--format netbox`.
    pub fn from_path(path: &Path) -> Option<ExportFormat> {
        // `.yml` is containerlab's unless the name says ASTRA-sim, as its own suffix does.
        let name = path.file_name()?.to_str()?.to_ascii_lowercase();
        if name.ends_with(".astra.yml") || name.ends_with(".astra.yaml") {
            return Some(ExportFormat::AstraSim);
        }
        if name.ends_with(".astra.json") {
            return Some(ExportFormat::AstraSimSystem);
        }
        let ext = path.extension()?.to_str()?.to_ascii_lowercase();
        match ext.as_str() {
            "svg" => Some(ExportFormat::Svg),
            "png" => Some(ExportFormat::Png),
            "csv" => Some(ExportFormat::Cables),
            "drawio" => Some(ExportFormat::Drawio),
            "dot" | "gv" => Some(ExportFormat::Dot),
            "yml" | "yaml" => Some(ExportFormat::Containerlab),
            "simai" => Some(ExportFormat::Simai),
            "topo" => Some(ExportFormat::Htsim),
            _ => None,
        }
    }

    /// Every `--format` word, comma separated, for messages.
    /// The formats for other tools: all but the two diagrams (SVG, PNG).
    pub fn for_other_tools() -> impl Iterator<Item = ExportFormat> {
        Self::ALL
            .into_iter()
            .filter(|f| !matches!(f, ExportFormat::Svg | ExportFormat::Png))
    }

    pub fn names() -> String {
        let names: Vec<&str> = ExportFormat::ALL.iter().map(|f| f.name()).collect();
        names.join(", ")
    }

    /// The output path an export takes next to a design file `design.ron` when none is
    /// given: `design.cables.csv`, `design-netbox/`, `design.clab.yml`...
    pub fn beside(self, design_file: &Path) -> PathBuf {
        let stem = design_file
            .file_stem()
            .map_or_else(|| "design".into(), |s| s.to_string_lossy().into_owned());
        design_file.with_file_name(format!("{stem}{}", self.suffix()))
    }
}

impl fmt::Display for ExportFormat {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

impl FromStr for ExportFormat {
    type Err = String;

    fn from_str(s: &str) -> Result<Self, Self::Err> {
        let wanted = s.trim().to_ascii_lowercase();
        let alias = match wanted.as_str() {
            "clab" => "containerlab",
            "gv" | "graphviz" => "dot",
            "csv" | "cable-plan" => "cables",
            "astra" | "astrasim" => "astra-sim",
            "astra-system" | "astra-sim-json" => "astra-sim-system",
            other => other,
        };
        ExportFormat::ALL
            .into_iter()
            .find(|f| f.name() == alias)
            .ok_or_else(|| format!("`{s}` is not an export format: {}", ExportFormat::names()))
    }
}

/// A single-file format as text (for a file or standard output). SVG and PNG are drawn by
/// `svg`/`raster`, and NetBox is a folder: those are refused here.
pub fn export_text(
    design: &Design,
    catalog: &Catalog,
    format: ExportFormat,
) -> Result<String, ExportError> {
    match format {
        ExportFormat::Cables => {
            let mut bytes = Vec::new();
            cables::write_cable_plan(design, catalog, &mut bytes)?;
            // The csv crate writes the UTF-8 it is given; the names are Rust strings.
            String::from_utf8(bytes).map_err(|_| ExportError::NotText(format))
        }
        ExportFormat::Drawio => Ok(drawio::design_to_drawio(design)),
        ExportFormat::Dot => Ok(dot::design_to_dot(design)),
        ExportFormat::Containerlab => containerlab::design_to_containerlab(design, catalog),
        ExportFormat::Simai => simai::design_to_simai(design),
        ExportFormat::Htsim => htsim::design_to_htsim(design),
        ExportFormat::AstraSim => astra_sim::design_to_astra_sim(design),
        ExportFormat::AstraSimSystem => {
            astra_sim_system::design_to_astra_sim_system(design, catalog)
        }
        ExportFormat::Svg | ExportFormat::Png | ExportFormat::Netbox => {
            Err(ExportError::NotText(format))
        }
    }
}

/// Writes one of the formats for other tools at `path` (NetBox: the folder `path`),
/// each file atomically; returns what it holds, for a status line ("5 devices, 4 cables").
pub fn export_to_path(
    design: &Design,
    catalog: &Catalog,
    format: ExportFormat,
    path: &Path,
) -> Result<String, ExportError> {
    let devices = design.devices.len();
    if format == ExportFormat::Netbox {
        let tables = netbox::write_netbox_folder(design, catalog, path)?;
        return Ok(format!(
            "{} devices, {} cables",
            tables.device_count, tables.cable_count
        ));
    }
    let text = export_text(design, catalog, format)?;
    crate::io::design_file::write_atomically(path, text.as_bytes()).map_err(|error| {
        ExportError::Io {
            path: path.to_path_buf(),
            error,
        }
    })?;
    Ok(format!("{devices} devices, {} links", design.links.len()))
}

/// Why an export cannot be written.
#[derive(Debug, thiserror::Error)]
pub enum ExportError {
    /// Two cabled links on one port: a cut sheet, NetBox and containerlab all need one
    /// cable per port, so the design is fixed first (`railyard eval` lists it too).
    #[error(
        "{device} port {port} carries both link {first} and link {second}: one cable per port (fix the design first; `railyard eval` lists it)"
    )]
    PortReused {
        device: String,
        port: String,
        first: LinkId,
        second: LinkId,
    },
    /// A link whose end names no device of the design.
    #[error("link {link} ends on device d{device}, which the design does not have")]
    MissingDevice { link: LinkId, device: u32 },
    /// A simulator's format cannot express the design (no switches, say); the reason says
    /// what it lacks.
    #[error("the {format} format cannot express this design: {reason}")]
    Unsupported {
        format: ExportFormat,
        reason: String,
    },
    #[error("{0} is not a single text file")]
    NotText(ExportFormat),
    #[error("could not write the CSV: {0}")]
    Csv(#[from] csv::Error),
    #[error("could not write {}: {}", path.display(), super::plain_error::plain_io(.error))]
    Io {
        path: PathBuf,
        /// Not a `source`: the message gives it in plain words, once.
        error: std::io::Error,
    },
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn extensions_name_formats() {
        let of = |p: &str| ExportFormat::from_path(Path::new(p));
        assert_eq!(of("a.SVG"), Some(ExportFormat::Svg));
        assert_eq!(of("a.csv"), Some(ExportFormat::Cables));
        assert_eq!(of("a.gv"), Some(ExportFormat::Dot));
        assert_eq!(of("lab.clab.yml"), Some(ExportFormat::Containerlab));
        assert_eq!(of("a.drawio"), Some(ExportFormat::Drawio));
        assert_eq!(of("pod.simai"), Some(ExportFormat::Simai));
        assert_eq!(of("ft.topo"), Some(ExportFormat::Htsim));
        assert_eq!(of("pod.astra.yml"), Some(ExportFormat::AstraSim));
        assert_eq!(of("pod.astra.json"), Some(ExportFormat::AstraSimSystem));
        assert_eq!(of("netbox-dir"), None);
        assert_eq!(of("a.txt"), None);
    }

    #[test]
    fn names_parse_back() {
        for f in ExportFormat::ALL {
            assert_eq!(f.name().parse::<ExportFormat>(), Ok(f));
        }
        assert_eq!(
            "clab".parse::<ExportFormat>(),
            Ok(ExportFormat::Containerlab)
        );
        assert!("xlsx".parse::<ExportFormat>().is_err());
    }

    #[test]
    fn outputs_follow_the_design_file() {
        let design = Path::new("/tmp/pod.ron");
        assert_eq!(
            ExportFormat::Containerlab.beside(design),
            PathBuf::from("/tmp/pod.clab.yml")
        );
        assert_eq!(
            ExportFormat::Netbox.beside(design),
            PathBuf::from("/tmp/pod-netbox")
        );
    }
}
