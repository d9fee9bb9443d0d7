//! The example designs shipped in `presets/`, compiled into the binary so that File → Open
//! preset works from a single executable anywhere.

use crate::io::{DesignFileError, parse_design};
use crate::model::Design;

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Preset {
    /// The menu label.
    pub title: &'static str,
    /// The file name under `presets/` (also the origin in error messages).
    pub file: &'static str,
    pub text: &'static str,
}

pub const PRESETS: &[Preset] = &[];

impl Preset {
    pub fn design(&self) -> Result<Design, DesignFileError> {
        parse_design(self.text, &format!("presets/{}", self.file))
    }
}
