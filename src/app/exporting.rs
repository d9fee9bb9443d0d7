//! Exports of large designs written off the UI thread. Drawing a 256-node fabric to a PNG
//! at 2× takes seconds: the window keeps drawing meanwhile, a small window names the file
//! being written with a spinner, and the status bar says how it went when it is done.

use super::background::{FileJobs, file_name};
use super::exports::{ExportKind, write_export};
use crate::analysis::collective::Workload;
use crate::io::svg::LinkColors;
use crate::model::{Catalog, Design, LinkId};
use std::path::PathBuf;
use std::sync::Arc;

/// Designs with this many devices and links together are exported in the background
/// (a 32-node SuperPOD unit has 556 and exports at once; 256 nodes in 3 tiers have 6,560,
/// and their PNG at 2× took 6 s here).
pub const BACKGROUND_ITEMS: usize = 2_000;

/// Link colours the export thread owns.
#[derive(Debug, Clone)]
pub enum OwnedColors {
    Technology,
    Rail,
    Tier,
    /// Each link's load, and whose loads they are (`CollectiveResult::summary`).
    Heatmap(Vec<(LinkId, f64)>, String),
}

impl OwnedColors {
    pub fn borrow(&self) -> LinkColors<'_> {
        match self {
            OwnedColors::Technology => LinkColors::Technology,
            OwnedColors::Rail => LinkColors::Rail,
            OwnedColors::Tier => LinkColors::Tier,
            OwnedColors::Heatmap(loads, of) => LinkColors::Heatmap(loads, of),
        }
    }
}

/// One export: everything `write_export` reads, owned.
pub struct ExportJob {
    pub kind: ExportKind,
    pub design: Arc<Design>,
    pub label: String,
    pub workload: Option<Workload>,
    pub catalog: Arc<Catalog>,
    pub path: PathBuf,
    pub colors: OwnedColors,
}

impl ExportJob {
    /// Whether this export is large enough to be written in the background.
    pub fn is_large(&self) -> bool {
        self.design.devices.len() + self.design.links.len() >= BACKGROUND_ITEMS
    }

    /// Writes the export and returns the status-bar line ("Exported …" or "Not exported: …").
    pub fn run(&self) -> String {
        match write_export(
            self.kind,
            &self.design,
            &self.label,
            self.workload.as_ref(),
            &self.catalog,
            &self.path,
            self.colors.borrow(),
        ) {
            Ok(line) => line,
            Err(e) => format!("Not exported: {e:#}"),
        }
    }
}

/// The exports being written.
pub struct Exporting {
    jobs: FileJobs<String>,
}

impl Default for Exporting {
    fn default() -> Self {
        Self {
            jobs: FileJobs::new("Exporting"),
        }
    }
}

impl Exporting {
    /// Starts writing `job` on a thread of its own; if no thread can be had, says so in the
    /// status line it returns.
    pub fn start(&mut self, job: ExportJob) -> Option<String> {
        let path = job.path.clone();
        let doing = format!("Writing the {} to {}…", job.kind.what(), file_name(&path));
        match self.jobs.start(&path, doing, None, move || job.run()) {
            Ok(()) => None,
            Err(e) => Some(format!("Not exported: no thread to write it on ({e})")),
        }
    }

    /// Whether an export is being written.
    pub fn is_busy(&self) -> bool {
        self.jobs.is_busy()
    }

    /// The status lines of the exports finished since the last call, in the order they
    /// were started; one that died (a panic) says so.
    pub fn finished(&mut self) -> Vec<String> {
        self.jobs
            .finished()
            .into_iter()
            .map(|(path, line)| {
                line.unwrap_or_else(|_| {
                    format!(
                        "Not exported: writing {} failed unexpectedly",
                        path.display()
                    )
                })
            })
            .collect()
    }

    /// While exports are being written: a small window naming them with a spinner.
    pub fn ui(&self, ctx: &egui::Context) {
        self.jobs.ui(ctx, 96.0);
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::generate::{Template, TemplateSpec, generate};

    /// A 256-node, 3-tier fabric is exported in the background, and the file it writes is
    /// the same SVG the command line writes.
    #[test]
    fn a_large_export_is_written_off_the_calling_thread() {
        let catalog = Catalog::builtin();
        let mut spec = TemplateSpec::new(Template::RailOptimized);
        spec.nodes = Some(256);
        spec.tiers = 3;
        let design = generate(&spec, &catalog).expect("generates");
        let dir = tempfile::tempdir().expect("a temporary folder");
        let path = dir.path().join("fabric.svg");
        let job = ExportJob {
            kind: ExportKind::Svg(crate::io::svg::Detail::Full),
            design: Arc::new(design.clone()),
            label: "fabric".into(),
            workload: None,
            catalog: Arc::new(catalog),
            path: path.clone(),
            colors: OwnedColors::Rail,
        };
        assert!(
            job.is_large(),
            "{} items",
            design.devices.len() + design.links.len()
        );
        let mut exporting = Exporting::default();
        assert_eq!(exporting.start(job), None);
        assert!(exporting.is_busy());
        let mut lines = Vec::new();
        while lines.is_empty() {
            std::thread::sleep(std::time::Duration::from_millis(20));
            lines = exporting.finished();
        }
        assert_eq!(lines, [format!("Exported {}", path.display())]);
        assert!(!exporting.is_busy());
        let written = std::fs::read_to_string(&path).expect("the file");
        assert_eq!(
            written,
            crate::io::svg::design_to_svg(
                &design,
                &crate::model::Catalog::builtin(),
                LinkColors::Rail
            )
        );
    }
}
