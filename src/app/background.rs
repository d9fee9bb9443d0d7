//! File work that runs on a thread of its own while the window keeps drawing (reading a
//! large design, writing a large export): a small window names each file with a progress
//! bar (a spinner where the work cannot say how far it is), and what finished is picked up
//! each frame.

use crate::io::read_progress::ReadProgress;
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::sync::mpsc::{self, Receiver, TryRecvError};
use std::time::Duration;

struct Pending<T> {
    path: PathBuf,
    /// How far it has got, where the work says.
    progress: Option<Arc<ReadProgress>>,
    /// What the window says while it runs ("Opening big.ron (130 MB)…").
    doing: String,
    result: Receiver<T>,
}

/// The files being worked on, each with its result to come.
pub struct FileJobs<T> {
    /// The window's title.
    title: &'static str,
    pending: Vec<Pending<T>>,
}

impl<T: Send + 'static> FileJobs<T> {
    pub fn new(title: &'static str) -> Self {
        Self {
            title,
            pending: Vec::new(),
        }
    }

    /// Runs `work` on a thread of its own for `path`; `doing` says what it does, and
    /// `progress` (if any) how far it has got.
    pub fn start(
        &mut self,
        path: &Path,
        doing: String,
        progress: Option<Arc<ReadProgress>>,
        work: impl FnOnce() -> T + Send + 'static,
    ) -> std::io::Result<()> {
        let (send, result) = mpsc::channel();
        std::thread::Builder::new()
            .name(format!("railyard-{}", self.title.to_lowercase()))
            .spawn(move || {
                // The window may have closed meanwhile: nobody to tell, nothing to do.
                let _ = send.send(work());
            })?;
        self.pending.push(Pending {
            path: path.to_path_buf(),
            progress,
            doing,
            result,
        });
        Ok(())
    }

    /// Whether `path` is being worked on.
    pub fn has(&self, path: &Path) -> bool {
        self.pending.iter().any(|p| p.path == path)
    }

    pub fn is_busy(&self) -> bool {
        !self.pending.is_empty()
    }

    /// The results since the last call, in the order the work was started; work that died
    /// (a panic) gives `Err`, instead of leaving its window up for ever.
    pub fn finished(&mut self) -> Vec<(PathBuf, Result<T, String>)> {
        let mut done = Vec::new();
        self.pending.retain(|p| match p.result.try_recv() {
            Ok(result) => {
                done.push((p.path.clone(), Ok(result)));
                false
            }
            Err(TryRecvError::Empty) => true,
            Err(TryRecvError::Disconnected) => {
                done.push((
                    p.path.clone(),
                    Err(format!("{} failed unexpectedly", p.path.display())),
                ));
                false
            }
        });
        done
    }

    /// While work runs: a small window (`offset` points below the top centre) listing it,
    /// and frames often enough to turn its spinners and pick up what finished.
    pub fn ui(&self, ctx: &egui::Context, offset: f32) {
        if self.pending.is_empty() {
            return;
        }
        egui::Window::new(self.title)
            .collapsible(false)
            .resizable(false)
            .anchor(egui::Align2::CENTER_TOP, [0.0, offset])
            .show(ctx, |ui| {
                for p in &self.pending {
                    let progress = p.progress.as_ref();
                    match progress.and_then(|r| r.fraction()) {
                        Some(done) => {
                            ui.label(&p.doing);
                            let text = if progress.is_some_and(|r| r.is_checking()) {
                                "checking the design…".to_string()
                            } else {
                                format!("{:.0} %", done * 100.0)
                            };
                            ui.add(egui::ProgressBar::new(done).desired_width(280.0).text(text));
                        }
                        None => {
                            ui.horizontal(|ui| {
                                ui.spinner();
                                ui.label(&p.doing);
                            });
                        }
                    }
                }
            });
        ctx.request_repaint_after(Duration::from_millis(100));
    }
}

/// A path's file name, for the work window ("big.ron").
pub fn file_name(path: &Path) -> String {
    path.file_name().map_or_else(
        || path.display().to_string(),
        |n| n.to_string_lossy().into_owned(),
    )
}
