//! Design files: RON, readable and diff-friendly, with a version and migrations.
//!
//! A failed load names file, line and column and changes nothing; a save writes a temporary
//! file beside the target and renames it, so a failed save never destroys the previous file.

use crate::model::Design;
use serde::{Deserialize, Serialize};
use std::path::{Path, PathBuf};

/// The version this build writes. Older versions are migrated on load; newer ones refused.
pub const CURRENT_VERSION: u32 = 1;

/// Files larger than this are refused before parsing: a design of 131,072 GPUs is ~60 MB.
pub const MAX_FILE_BYTES: u64 = 512 * 1024 * 1024;

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct DesignFile {
    pub version: u32,
    pub design: Design,
}

#[derive(Debug, thiserror::Error)]
pub enum DesignFileError {
    #[error("{path}: {source}")]
    Read {
        path: String,
        source: std::io::Error,
    },
    #[error("{origin}:{line}:{column}: {message}")]
    Syntax {
        origin: String,
        line: usize,
        column: usize,
        message: String,
    },
    #[error("{origin}: file version {found} is newer than this railyard understands ({CURRENT_VERSION}); update railyard")]
    FutureVersion { origin: String, found: u32 },
    #[error("{origin}: file is {size} bytes, over the limit of {MAX_FILE_BYTES}")]
    TooLarge { origin: String, size: u64 },
    #[error("{origin}: {message}")]
    Invalid { origin: String, message: String },
    #[error("could not save {path}: {source}")]
    Write {
        path: String,
        source: std::io::Error,
    },
    #[error("could not encode the design: {0}")]
    Encode(String),
}

/// Only the version, read first so that an old file is migrated before it is typed.
#[derive(Deserialize)]
struct VersionProbe {
    version: u32,
}

fn syntax_error(origin: &str, e: &ron::error::SpannedError) -> DesignFileError {
    DesignFileError::Syntax {
        origin: origin.to_string(),
        line: e.span.start.line,
        column: e.span.start.col,
        message: e.code.to_string(),
    }
}

fn ron_options() -> ron::Options {
    // Bounded recursion: a file is data from anyone, and deep nesting must not overflow the stack.
    ron::Options::default().with_recursion_limit(64)
}

/// Parses design text; `origin` names the file in error messages.
pub fn parse_design(text: &str, origin: &str) -> Result<Design, DesignFileError> {
    let probe: VersionProbe = match ron_options().from_str::<ron::Value>(text) {
        Ok(value) => value
            .into_rust()
            .map_err(|e| DesignFileError::Invalid {
                origin: origin.to_string(),
                message: format!("no readable `version` field: {e}"),
            })?,
        Err(e) => return Err(syntax_error(origin, &e)),
    };
    if probe.version > CURRENT_VERSION {
        return Err(DesignFileError::FutureVersion {
            origin: origin.to_string(),
            found: probe.version,
        });
    }
    // Version 1 is the first; migrations from older versions go here as the format moves.
    let file: DesignFile = ron_options()
        .from_str(text)
        .map_err(|e| syntax_error(origin, &e))?;
    Ok(file.design)
}

/// Reads and parses a design file.
pub fn load_design(path: &Path) -> Result<Design, DesignFileError> {
    let origin = path.display().to_string();
    let meta = std::fs::metadata(path).map_err(|source| DesignFileError::Read {
        path: origin.clone(),
        source,
    })?;
    if meta.len() > MAX_FILE_BYTES {
        return Err(DesignFileError::TooLarge {
            origin,
            size: meta.len(),
        });
    }
    let text = std::fs::read_to_string(path).map_err(|source| DesignFileError::Read {
        path: origin.clone(),
        source,
    })?;
    parse_design(&text, &origin)
}

/// The file text of a design, pretty and stable for diffs.
pub fn design_to_string(design: &Design) -> Result<String, DesignFileError> {
    let file = DesignFile {
        version: CURRENT_VERSION,
        design: design.clone(),
    };
    let pretty = ron::ser::PrettyConfig::new()
        .depth_limit(4)
        .indentor("  ".to_string())
        .struct_names(false);
    ron::ser::to_string_pretty(&file, pretty).map_err(|e| DesignFileError::Encode(e.to_string()))
}

/// Writes atomically: temporary file in the same folder, flushed, then renamed over the target.
pub fn save_design(path: &Path, design: &Design) -> Result<(), DesignFileError> {
    let text = design_to_string(design)?;
    write_atomically(path, text.as_bytes()).map_err(|source| DesignFileError::Write {
        path: path.display().to_string(),
        source,
    })
}

/// Writes bytes to `path` through a temporary sibling and a rename.
pub fn write_atomically(path: &Path, bytes: &[u8]) -> std::io::Result<()> {
    use std::io::Write;
    let dir = path
        .parent()
        .filter(|p| !p.as_os_str().is_empty())
        .unwrap_or_else(|| Path::new("."));
    let file_name = path
        .file_name()
        .ok_or_else(|| std::io::Error::new(std::io::ErrorKind::InvalidInput, "no file name"))?;
    let mut tmp_name = std::ffi::OsString::from(".");
    tmp_name.push(file_name);
    tmp_name.push(format!(".{}.tmp", std::process::id()));
    let tmp: PathBuf = dir.join(tmp_name);
    let result = (|| {
        let mut f = std::fs::File::create(&tmp)?;
        f.write_all(bytes)?;
        f.sync_all()?;
        std::fs::rename(&tmp, path)
    })();
    if result.is_err() {
        let _ = std::fs::remove_file(&tmp);
    }
    result
}
