//! File dialogs behind one small trait (rfd is called here and nowhere else, and tests inject
//! paths), the recent-files list, and the presets compiled into the binary.

use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

/// What a native dialog answered.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum DialogAnswer {
    Picked(PathBuf),
    /// The user closed the dialog.
    Cancelled,
    /// No dialog could be shown (no desktop portal, no zenity): offer the in-app path field.
    Unavailable,
}

pub trait FileDialogs {
    fn pick_open(&mut self, start_dir: Option<&Path>) -> DialogAnswer;
    fn pick_save(&mut self, start_dir: Option<&Path>, file_name: &str) -> DialogAnswer;
    /// Where to write an export (`kind` names the filter, e.g. "PNG image"); by default
    /// answered like `pick_save`, so test doubles need nothing more.
    fn pick_export(
        &mut self,
        start_dir: Option<&Path>,
        file_name: &str,
        _kind: &str,
        _extension: &str,
    ) -> DialogAnswer {
        self.pick_save(start_dir, file_name)
    }
}

/// Native dialogs through rfd (desktop portal, else zenity).
#[derive(Debug, Default)]
pub struct NativeDialogs;

/// A "None" faster than a person can close a dialog means no dialog was ever shown.
const NO_DIALOG_WITHIN: Duration = Duration::from_millis(400);

fn answer(started: Instant, picked: Option<PathBuf>) -> DialogAnswer {
    match picked {
        Some(path) => DialogAnswer::Picked(path),
        None if started.elapsed() < NO_DIALOG_WITHIN => DialogAnswer::Unavailable,
        None => DialogAnswer::Cancelled,
    }
}

impl FileDialogs for NativeDialogs {
    fn pick_open(&mut self, start_dir: Option<&Path>) -> DialogAnswer {
        let mut dialog = rfd::FileDialog::new()
            .set_title("Open design")
            .add_filter("railyard design", &["ron"])
            // Imported into a new unsaved design (`io::import`).
            .add_filter(
                "draw.io, Graphviz DOT or CSV edge list",
                &["drawio", "xml", "dot", "gv", "csv"],
            );
        if let Some(dir) = start_dir {
            dialog = dialog.set_directory(dir);
        }
        let started = Instant::now();
        answer(started, dialog.pick_file())
    }

    fn pick_save(&mut self, start_dir: Option<&Path>, file_name: &str) -> DialogAnswer {
        let mut dialog = rfd::FileDialog::new()
            .set_title("Save design")
            .add_filter("railyard design", &["ron"])
            .set_file_name(file_name);
        if let Some(dir) = start_dir {
            dialog = dialog.set_directory(dir);
        }
        let started = Instant::now();
        answer(started, dialog.save_file())
    }

    fn pick_export(
        &mut self,
        start_dir: Option<&Path>,
        file_name: &str,
        kind: &str,
        extension: &str,
    ) -> DialogAnswer {
        let mut dialog = rfd::FileDialog::new()
            .set_title(format!("Export {kind}"))
            .set_file_name(file_name);
        // A folder export (NetBox) has no extension to filter by.
        if !extension.is_empty() {
            dialog = dialog.add_filter(kind, &[extension]);
        }
        if let Some(dir) = start_dir {
            dialog = dialog.set_directory(dir);
        }
        let started = Instant::now();
        answer(started, dialog.save_file())
    }
}

/// Test double: answers with queued paths, then `Unavailable`.
#[derive(Debug, Default)]
pub struct ScriptedDialogs {
    pub answers: std::collections::VecDeque<DialogAnswer>,
}

impl FileDialogs for ScriptedDialogs {
    fn pick_open(&mut self, _start_dir: Option<&Path>) -> DialogAnswer {
        self.answers
            .pop_front()
            .unwrap_or(DialogAnswer::Unavailable)
    }
    fn pick_save(&mut self, _start_dir: Option<&Path>, _file_name: &str) -> DialogAnswer {
        self.answers
            .pop_front()
            .unwrap_or(DialogAnswer::Unavailable)
    }
}

/// Most recently used first, no duplicates, at most `RECENT_MAX`.
pub const RECENT_MAX: usize = 10;

pub fn remember_recent(recent: &mut Vec<PathBuf>, path: &Path) {
    let path = std::fs::canonicalize(path).unwrap_or_else(|_| path.to_path_buf());
    recent.retain(|p| p != &path);
    recent.insert(0, path);
    recent.truncate(RECENT_MAX);
}

/// A file name for Save As from a design name: "DGX SuperPOD SU" → "dgx-superpod-su.ron".
pub fn suggested_file_name(design_name: &str) -> String {
    let mut stem = String::new();
    for c in design_name.trim().chars() {
        if c.is_ascii_alphanumeric() {
            stem.push(c.to_ascii_lowercase());
        } else if !stem.ends_with('-') && !stem.is_empty() {
            stem.push('-');
        }
    }
    let stem = stem.trim_end_matches('-');
    if stem.is_empty() {
        "design.ron".to_string()
    } else {
        format!("{stem}.ron")
    }
}

/// Adds `.ron` to a typed path without an extension.
pub fn with_design_extension(path: PathBuf) -> PathBuf {
    if path.extension().is_some() {
        path
    } else {
        path.with_extension("ron")
    }
}

/// A small window centred on the screen, neither collapsible nor resizable: the app's
/// dialogs (path fields, Generate) all look alike.
pub fn dialog_window<'o>(ctx: &egui::Context, title: &str, open: &'o mut bool) -> egui::Window<'o> {
    egui::Window::new(title)
        .open(open)
        .pivot(egui::Align2::CENTER_CENTER)
        .default_pos(ctx.content_rect().center())
        .collapsible(false)
        .resizable(false)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn recent_list_moves_reopened_files_to_the_front() {
        let mut recent = Vec::new();
        for name in ["a.ron", "b.ron", "a.ron"] {
            remember_recent(&mut recent, Path::new(name));
        }
        let names: Vec<_> = recent
            .iter()
            .map(|p| p.file_name().and_then(|n| n.to_str()).unwrap_or(""))
            .collect();
        assert_eq!(names, ["a.ron", "b.ron"]);
        for i in 0..20 {
            remember_recent(&mut recent, Path::new(&format!("f{i}.ron")));
        }
        assert_eq!(recent.len(), RECENT_MAX);
    }

    #[test]
    fn file_names_from_design_names() {
        assert_eq!(
            suggested_file_name("DGX H100 SuperPOD (1 SU)"),
            "dgx-h100-superpod-1-su.ron"
        );
        assert_eq!(suggested_file_name("  "), "design.ron");
        assert_eq!(
            with_design_extension(PathBuf::from("/tmp/x")),
            PathBuf::from("/tmp/x.ron")
        );
    }

    #[test]
    fn an_instant_none_means_no_dialog() {
        assert_eq!(answer(Instant::now(), None), DialogAnswer::Unavailable);
        let long_ago = Instant::now() - Duration::from_secs(5);
        assert_eq!(answer(long_ago, None), DialogAnswer::Cancelled);
    }
}
