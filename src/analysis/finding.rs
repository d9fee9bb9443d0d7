//! How serious a finding is: one scale for the design checks (`checks`) and the architect's
//! advice (`collective::advice`), most severe first, so both sort the same way.

use serde::Serialize;

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
