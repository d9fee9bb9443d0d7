//! Large design files read off the UI thread. A 131,072-GPU design takes about a second to
//! read even on every core: the window keeps drawing meanwhile, a small window names the
//! file being read with a spinner, and the design opens in a tab of its own when it is in
//! (or the reason it is not shows in the banner, as for any file).

use super::document::Document;
use crate::model::Bytes;
use std::path::{Path, PathBuf};
use std::sync::mpsc::{self, Receiver, TryRecvError};
use std::time::Duration;

/// Files this large are read in the background (a 16,384-GPU design is about 16 MB and
/// reads in about 0.13 s; smaller ones open before anyone could see a progress window).
pub const BACKGROUND_BYTES: u64 = 8 << 20;

struct Pending {
    path: PathBuf,
    bytes: u64,
    result: Receiver<Result<Document, String>>,
}

/// The files being read.
#[derive(Default)]
pub struct Opening {
    pending: Vec<Pending>,
}

impl Opening {
    /// Starts reading `path` (`bytes` long) on a thread of its own.
    pub fn start(&mut self, path: &Path, bytes: u64) -> std::io::Result<()> {
        let (send, result) = mpsc::channel();
        let owned = path.to_path_buf();
        std::thread::Builder::new()
            .name("railyard-open".into())
            .spawn(move || {
                // The window may have closed meanwhile: nobody to tell, nothing to do.
                let _ = send.send(Document::open(&owned).map_err(|e| e.to_string()));
            })?;
        self.pending.push(Pending {
            path: path.to_path_buf(),
            bytes,
            result,
        });
        Ok(())
    }

    /// Whether `path` is being read.
    pub fn is_opening(&self, path: &Path) -> bool {
        self.pending.iter().any(|p| p.path == path)
    }

    /// The files read since the last call, in the order they were asked for; a read that
    /// died (a panic) says so instead of leaving its window up for ever.
    pub fn finished(&mut self) -> Vec<(PathBuf, Result<Document, String>)> {
        let mut done = Vec::new();
        self.pending.retain(|p| match p.result.try_recv() {
            Ok(result) => {
                done.push((p.path.clone(), result));
                false
            }
            Err(TryRecvError::Empty) => true,
            Err(TryRecvError::Disconnected) => {
                done.push((
                    p.path.clone(),
                    Err(format!("reading {} failed unexpectedly", p.path.display())),
                ));
                false
            }
        });
        done
    }

    /// While files are being read: a small window naming them, and frames often enough to
    /// turn its spinner and pick up what finished.
    pub fn ui(&self, ctx: &egui::Context) {
        if self.pending.is_empty() {
            return;
        }
        egui::Window::new("Opening")
            .collapsible(false)
            .resizable(false)
            .anchor(egui::Align2::CENTER_TOP, [0.0, 48.0])
            .show(ctx, |ui| {
                for p in &self.pending {
                    ui.horizontal(|ui| {
                        ui.spinner();
                        let name = p.path.file_name().map_or_else(
                            || p.path.display().to_string(),
                            |n| n.to_string_lossy().into_owned(),
                        );
                        ui.label(format!("Opening {name} ({})…", Bytes(p.bytes)));
                    });
                }
            });
        ctx.request_repaint_after(Duration::from_millis(100));
    }
}
