//! Designs read from files other tools write: draw.io (our own export read back, or a
//! diagram drawn by hand), Graphviz DOT, and a CSV edge list (`device,device,technology,
//! rate`). One file per format; `build.rs` turns devices named in a file into a design
//! (parts from the catalog or placeholders, positions by tier, ports in order) and
//! `labels.rs` reads technologies and rates as people write them.

mod build;
pub mod dot;
pub mod drawio;
pub mod edge_list;
mod labels;

use crate::model::{Catalog, Design, PartId};
use std::fmt;
use std::path::Path;

pub use labels::{parse_link_label, parse_rate, parse_technology};

/// Why a file could not be imported; `line` (and `column` where the parser knows it) are
/// 1-based and point into the file.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub enum ImportError {
    #[error("{origin}:{line}:{column}: {message}")]
    Syntax {
        origin: String,
        line: usize,
        column: usize,
        message: String,
    },
    /// A well-formed line that says something railyard cannot build.
    #[error("{origin}:{line}: {message}")]
    Line {
        origin: String,
        line: usize,
        message: String,
    },
    #[error("{origin}: {message}")]
    File { origin: String, message: String },
}

/// The formats `railyard import` reads.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ImportFormat {
    Drawio,
    Dot,
    Csv,
}

impl ImportFormat {
    pub const ALL: [ImportFormat; 3] = [ImportFormat::Drawio, ImportFormat::Dot, ImportFormat::Csv];

    pub fn name(self) -> &'static str {
        match self {
            ImportFormat::Drawio => "drawio",
            ImportFormat::Dot => "dot",
            ImportFormat::Csv => "csv",
        }
    }

    /// The format a file name's extension names: .drawio or .xml, .dot or .gv, .csv.
    pub fn from_path(path: &Path) -> Option<ImportFormat> {
        let extension = path.extension()?.to_str()?.to_ascii_lowercase();
        match extension.as_str() {
            "drawio" | "xml" => Some(ImportFormat::Drawio),
            "dot" | "gv" => Some(ImportFormat::Dot),
            "csv" => Some(ImportFormat::Csv),
            _ => None,
        }
    }
}

impl fmt::Display for ImportFormat {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

impl std::str::FromStr for ImportFormat {
    type Err = String;

    fn from_str(text: &str) -> Result<Self, String> {
        ImportFormat::ALL
            .into_iter()
            .find(|f| f.name().eq_ignore_ascii_case(text))
            .ok_or_else(|| format!("`{text}` is not an import format; one of drawio, dot, csv"))
    }
}

/// Reads `text` in `format`; `origin` names the file in errors and in the design.
pub fn import_text(
    text: &str,
    format: ImportFormat,
    origin: &str,
    catalog: &Catalog,
) -> Result<Design, ImportError> {
    match format {
        ImportFormat::Drawio => drawio::drawio_to_design(text, origin, catalog),
        ImportFormat::Dot => dot::dot_to_design(text, origin, catalog),
        ImportFormat::Csv => edge_list::edge_list_to_design(text, origin, catalog),
    }
}

/// Reads a file, in `format` or the one its extension names.
pub fn import_file(
    path: &Path,
    format: Option<ImportFormat>,
    catalog: &Catalog,
) -> Result<Design, ImportError> {
    let origin = path.display().to_string();
    let format = format
        .or_else(|| ImportFormat::from_path(path))
        .ok_or_else(|| ImportError::File {
            origin: origin.clone(),
            message: "cannot tell the format from the file name: give drawio, dot or csv"
                .to_string(),
        })?;
    let text = std::fs::read_to_string(path).map_err(|e| ImportError::File {
        origin: origin.clone(),
        message: e.to_string(),
    })?;
    let file_name = path
        .file_name()
        .map_or(origin.clone(), |n| n.to_string_lossy().into_owned());
    import_text(&text, format, &file_name, catalog).map_err(|e| e.with_origin(&origin))
}

impl ImportError {
    /// The same error naming the file by its full path.
    fn with_origin(self, path: &str) -> ImportError {
        let path = path.to_string();
        match self {
            ImportError::Syntax {
                line,
                column,
                message,
                ..
            } => ImportError::Syntax {
                origin: path,
                line,
                column,
                message,
            },
            ImportError::Line { line, message, .. } => ImportError::Line {
                origin: path,
                line,
                message,
            },
            ImportError::File { message, .. } => ImportError::File {
                origin: path,
                message,
            },
        }
    }
}

/// Devices whose part the catalog lacks, as `(name, part)`: the placeholders an import
/// made for parts it did not know.
pub fn placeholders(design: &Design, catalog: &Catalog) -> Vec<(String, PartId)> {
    design
        .devices
        .iter()
        .filter_map(|d| {
            let part = d.kind.model_part()?;
            catalog
                .get(part)
                .is_none()
                .then(|| (d.name.clone(), part.clone()))
        })
        .collect()
}

/// 1-based line and column of a byte offset in `text`.
pub(crate) fn line_column(text: &str, offset: usize) -> (usize, usize) {
    let before = &text[..text.floor_char_boundary(offset)];
    let line = before.matches('\n').count() + 1;
    let column = before
        .rfind('\n')
        .map_or(before.chars().count(), |i| before[i + 1..].chars().count())
        + 1;
    (line, column)
}
