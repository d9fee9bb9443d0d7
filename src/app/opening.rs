//! Large design files read off the UI thread. A 131,072-GPU design takes about a second to
//! read even on every core: the window keeps drawing meanwhile, a small window names the
//! file being read with a progress bar, and the design opens in a tab of its own when it is in
//! (or the reason it is not shows in the banner, as for any file).

use super::background::{FileJobs, file_name};
use super::document::Document;
use crate::io::read_progress::ReadProgress;
use crate::model::Bytes;
use std::path::{Path, PathBuf};
use std::sync::Arc;

/// Files this large are read in the background (a 16,384-GPU design is about 16 MB and
/// reads in about 0.13 s; smaller ones open before anyone could see a progress window).
pub const BACKGROUND_BYTES: u64 = 8 << 20;

/// The files being read.
pub struct Opening {
    jobs: FileJobs<Result<Document, String>>,
}

impl Default for Opening {
    fn default() -> Self {
        Self {
            jobs: FileJobs::new("Opening"),
        }
    }
}

impl Opening {
    /// Starts reading `path` (`bytes` long) on a thread of its own.
    pub fn start(&mut self, path: &Path, bytes: u64) -> std::io::Result<()> {
        let owned = path.to_path_buf();
        let progress = Arc::new(ReadProgress::default());
        let reading = Arc::clone(&progress);
        self.jobs.start(
            path,
            format!("Opening {} ({})…", file_name(path), Bytes(bytes)),
            Some(progress),
            move || Document::open_reporting(&owned, &reading).map_err(|e| e.to_string()),
        )
    }

    /// Whether `path` is being read.
    pub fn is_opening(&self, path: &Path) -> bool {
        self.jobs.has(path)
    }

    /// The files read since the last call, in the order they were asked for; a read that
    /// died (a panic) says so.
    pub fn finished(&mut self) -> Vec<(PathBuf, Result<Document, String>)> {
        self.jobs
            .finished()
            .into_iter()
            .map(|(path, result)| {
                let result = result
                    .map_err(|_| format!("reading {} failed unexpectedly", path.display()))
                    .and_then(|r| r);
                (path, result)
            })
            .collect()
    }

    /// While files are being read: a small window naming them with their progress.
    pub fn ui(&self, ctx: &egui::Context) {
        self.jobs.ui(ctx, 48.0);
    }
}
