//! A finding about a design: one type and one severity scale for the design checks
//! (`checks`: wiring that cannot work) and the architect's advice (`collective::advice`:
//! changes that would make it faster or safer), so the sidebar, `eval`, `workload` and the
//! report list, sort and select both the same way.

use crate::model::{DeviceId, LinkId};
use serde::Serialize;

/// One check result or advice item, naming what it is about so a click can select it.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Finding {
    pub severity: Severity,
    /// Stable kebab-case name of the check or rule (`checks::codes` lists the checks').
    pub code: &'static str,
    /// Names the devices by name.
    pub message: String,
    pub devices: Vec<DeviceId>,
    pub links: Vec<LinkId>,
    /// The change advised; empty for a check, whose message says what is wrong.
    #[serde(skip_serializing_if = "String::is_empty")]
    pub suggestion: String,
}

/// Ordered most severe first: sorting ascending puts errors at the top.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize)]
pub enum Severity {
    /// A check: the design cannot be built or cannot work as drawn. Advice: the change that
    /// matters most (advice calls it critical, since the design still works).
    Error,
    /// It works, but worse than it looks or with part of the bill missing.
    Warning,
    Info,
}

impl Severity {
    /// How `eval` names a check's severity.
    pub fn check_label(self) -> &'static str {
        match self {
            Severity::Error => "error",
            Severity::Warning => "warning",
            Severity::Info => "info",
        }
    }

    /// How `eval`, `workload` and reports name an advice item's severity.
    pub fn advice_label(self) -> &'static str {
        match self {
            Severity::Error => "critical",
            Severity::Warning => "warning",
            Severity::Info => "info",
        }
    }
}
