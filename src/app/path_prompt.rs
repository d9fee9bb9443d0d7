//! The one way the designer asks for a file path: Open, Save as, every export and PNG first
//! ask the system file dialog and, where none can appear (no desktop portal or zenity: rfd
//! answers at once), open the in-app path field instead. The field proposes a path, takes
//! the keyboard when it appears, offers Browse… to try the system dialog again and, for Open,
//! the recent files.

use std::path::PathBuf;

use super::exports::{ExportKind, export_file_name, export_name_with_suffix, with_extension};
use super::files::{self, DialogAnswer};
use super::png::with_png_extension;
use super::{AppEvent, RailyardApp};
use crate::io::svg::Detail;

/// What a path is asked for.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum PathPurpose {
    Open,
    SaveAs,
    Export(ExportKind),
    Png,
}

impl PathPurpose {
    fn title(self) -> &'static str {
        match self {
            Self::Open => "Open a design",
            Self::SaveAs => "Save design as",
            Self::Export(_) => "Export",
            Self::Png => "Export PNG",
        }
    }

    fn label(self) -> String {
        match self {
            Self::Open | Self::SaveAs => "Path of the design file:".to_string(),
            Self::Export(kind) => format!("Path of the {}:", kind.what()),
            Self::Png => "Path of the PNG file:".to_string(),
        }
    }

    fn verb(self) -> &'static str {
        match self {
            Self::Open => "Open",
            Self::SaveAs => "Save",
            Self::Export(_) | Self::Png => "Export",
        }
    }
}

/// The path a field's text names. The field comes with a folder or a name in it, and a
/// whole path typed after that proposal still means itself, as in Emacs's minibuffer: after
/// "//" a path starts again at the root, and after "/~/" at the home folder ("/tmp//data/x.ron"
/// is "/data/x.ron"). A leading "~/" is the home folder.
fn typed_path(text: &str) -> PathBuf {
    let text = text.trim();
    let restart = [
        text.rfind("//").map(|i| i + 1),
        text.rfind("/~/").map(|i| i + 1),
    ]
    .into_iter()
    .flatten()
    .max();
    let text = restart.map_or(text, |i| &text[i..]);
    match (text.strip_prefix("~/"), std::env::var_os("HOME")) {
        (Some(rest), Some(home)) if !home.is_empty() => PathBuf::from(home).join(rest),
        _ => PathBuf::from(text),
    }
}

/// The in-app path field while it is open.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(super) struct PathPrompt {
    purpose: PathPurpose,
    text: String,
    /// The path whose files were found to exist: using it again replaces them.
    replace: Option<PathBuf>,
}

/// The files using `path` for `purpose` writes (none for Open): the design file, the export
/// with its extension and, for a report, the diagram written beside it.
fn files_written(purpose: PathPurpose, path: &std::path::Path) -> Vec<PathBuf> {
    match purpose {
        PathPurpose::Open => Vec::new(),
        PathPurpose::SaveAs => vec![files::with_design_extension(path.to_path_buf())],
        PathPurpose::Export(kind) => {
            let file = with_extension(path.to_path_buf(), kind);
            let mut out = vec![file.clone()];
            if kind == ExportKind::Report {
                out.push(file.with_extension("svg"));
            }
            out
        }
        PathPurpose::Png => vec![with_png_extension(path.to_path_buf())],
    }
}

impl RailyardApp {
    /// Asks for the path `purpose` needs and uses it: the system dialog first, the path field
    /// where no dialog can appear, nothing if the user cancels.
    pub(super) fn ask_path(&mut self, purpose: PathPurpose, ctx: &egui::Context) {
        match self.pick_path(purpose) {
            DialogAnswer::Picked(path) => self.use_path(purpose, path, ctx, None),
            DialogAnswer::Cancelled => {}
            DialogAnswer::Unavailable => self.prompt_path(purpose),
        }
    }

    /// Opens the path field for `purpose` with a proposed path.
    pub(super) fn prompt_path(&mut self, purpose: PathPurpose) {
        let dir = self
            .start_dir()
            .or_else(|| std::env::current_dir().ok())
            .unwrap_or_default();
        let doc = self.document();
        let text = match purpose {
            PathPurpose::Open => return self.open_prompt(purpose, format!("{}/", dir.display())),
            PathPurpose::SaveAs => doc.path().map_or_else(
                || dir.join(files::suggested_file_name(&doc.design().name)),
                PathBuf::from,
            ),
            PathPurpose::Export(kind) => dir.join(export_name_with_suffix(
                doc.path(),
                &doc.design().name,
                &kind.suffix(),
            )),
            PathPurpose::Png => dir.join(export_file_name(doc.path(), &doc.design().name, "png")),
        }
        .to_string_lossy()
        .into_owned();
        self.open_prompt(purpose, text);
    }

    fn open_prompt(&mut self, purpose: PathPurpose, text: String) {
        self.path_prompt = Some(PathPrompt {
            purpose,
            text,
            replace: None,
        });
    }

    /// The system dialog for `purpose`, proposing a name made from the design's.
    fn pick_path(&mut self, purpose: PathPurpose) -> DialogAnswer {
        let start = self.start_dir();
        let doc = self.document();
        let design_name = doc.design().name.clone();
        let design_file = doc.path().map(PathBuf::from);
        let design_file = design_file.as_deref();
        match purpose {
            PathPurpose::Open => self.dialogs.pick_open(start.as_deref()),
            PathPurpose::SaveAs => {
                let name = files::suggested_file_name(&design_name);
                self.dialogs.pick_save(start.as_deref(), &name)
            }
            PathPurpose::Export(kind) => {
                let name = export_name_with_suffix(design_file, &design_name, &kind.suffix());
                self.dialogs
                    .pick_export(start.as_deref(), &name, kind.what(), kind.extension())
            }
            PathPurpose::Png => {
                let name = export_file_name(design_file, &design_name, "png");
                self.dialogs
                    .pick_export(start.as_deref(), &name, "PNG image", "png")
            }
        }
    }

    /// Does what the path was asked for. Opening and saving go through `events` when the
    /// caller is in the middle of drawing the window, as the menus' choices do.
    fn use_path(
        &mut self,
        purpose: PathPurpose,
        path: PathBuf,
        ctx: &egui::Context,
        events: Option<&mut Vec<AppEvent>>,
    ) {
        match (purpose, events) {
            (PathPurpose::Open, Some(events)) => events.push(AppEvent::OpenPath(path)),
            (PathPurpose::Open, None) => {
                self.open_path(&path);
            }
            (PathPurpose::SaveAs, Some(events)) => events.push(AppEvent::SaveAsPath(path)),
            (PathPurpose::SaveAs, None) => {
                self.save_active_to(&files::with_design_extension(path));
            }
            (PathPurpose::Export(kind), _) => self.export_to(kind, &with_extension(path, kind)),
            (PathPurpose::Png, _) => self.request_screenshot(ctx, with_png_extension(path)),
        }
    }

    /// Each frame: the path field, if open.
    pub(super) fn path_prompt_window(&mut self, ctx: &egui::Context, events: &mut Vec<AppEvent>) {
        let Some(prompt) = &mut self.path_prompt else {
            return;
        };
        let mut purpose = prompt.purpose;
        let mut open = true;
        let mut done = false;
        let mut browse = false;
        let appeared = just_appeared(ctx);
        let recent = &self.prefs.recent;
        files::dialog_window(ctx, purpose.title(), &mut open).show(ctx, |ui| {
            ui.label(purpose.label());
            let mut field = egui::TextEdit::singleline(&mut prompt.text).desired_width(420.0);
            if matches!(purpose, PathPurpose::Open | PathPurpose::SaveAs) {
                field = field.hint_text("/path/to/cluster.ron");
            }
            let r = ui.add(field);
            if appeared {
                r.request_focus();
            }
            let entered = r.lost_focus() && ui.input(|i| i.key_pressed(egui::Key::Enter));
            if let PathPurpose::Export(ExportKind::Png(scale, _)) = &mut prompt.purpose {
                ui.horizontal(|ui| {
                    ui.label("Scale:");
                    for k in 1..=crate::io::raster::MAX_SCALE {
                        ui.selectable_value(scale, k, format!("{k}×"))
                            .on_hover_text(format!("{k} pixels per unit of the diagram"));
                    }
                });
            }
            if let PathPurpose::Export(ExportKind::Png(_, detail) | ExportKind::Svg(detail)) =
                &mut prompt.purpose
            {
                let mut overview = *detail == Detail::Overview;
                ui.checkbox(&mut overview, "Overview: pods and rows as blocks")
                    .on_hover_text(
                        "Each pod and scalable unit, and each row outside them (a core tier), \
                         drawn as one block with its counts; links between two blocks as one \
                         line with theirs. Text keeps its size, so a fabric of thousands of \
                         nodes fits a slide.",
                    );
                *detail = if overview {
                    Detail::Overview
                } else {
                    Detail::Full
                };
            }
            purpose = prompt.purpose;
            let path = typed_path(&prompt.text);
            let replacing = prompt.replace.as_ref() == Some(&path);
            if replacing {
                let names: Vec<String> = files_written(purpose, &path)
                    .iter()
                    .filter(|f| f.exists())
                    .map(|f| f.display().to_string())
                    .collect();
                ui.colored_label(
                    ui.visuals().warn_fg_color,
                    format!(
                        "{} already {}: {} replaces {}.",
                        names.join(" and "),
                        if names.len() == 1 { "exists" } else { "exist" },
                        purpose.verb(),
                        if names.len() == 1 { "it" } else { "them" }
                    ),
                );
            }
            ui.horizontal(|ui| {
                done = ui.button(purpose.verb()).clicked() || entered;
                browse = ui
                    .button("Browse…")
                    .on_hover_text("Use the system file dialog")
                    .clicked();
            });
            if purpose == PathPurpose::Open && !recent.is_empty() {
                ui.separator();
                ui.label("Recent:");
                for path in recent {
                    if ui.link(path.display().to_string()).clicked() {
                        prompt.text = path.display().to_string();
                        done = true;
                    }
                }
            }
        });
        let path = typed_path(&prompt.text);
        // Nothing is written over without a second word: the first use of a path whose files
        // exist names them and waits.
        if done
            && prompt.replace.as_ref() != Some(&path)
            && files_written(purpose, &path).iter().any(|f| f.exists())
        {
            prompt.replace = Some(path);
            return;
        }
        if done && !path.as_os_str().is_empty() {
            self.path_prompt = None;
            self.use_path(purpose, path, ctx, Some(events));
            return;
        }
        if !open {
            self.path_prompt = None;
            return;
        }
        if browse {
            match self.pick_path(purpose) {
                DialogAnswer::Picked(path) => {
                    self.path_prompt = None;
                    self.use_path(purpose, path, ctx, Some(events));
                }
                DialogAnswer::Cancelled => {}
                DialogAnswer::Unavailable => {
                    self.status = "No system file dialog is available here; type the path.".into();
                }
            }
        }
    }
}

/// True in the first few passes after the path field appears: the field takes the keyboard
/// then (a new window's first pass only measures it); after that a click elsewhere is
/// respected.
fn just_appeared(ctx: &egui::Context) -> bool {
    let shown_since = egui::Id::new("railyard-path-field");
    let pass = ctx.cumulative_pass_nr();
    let (first, last) = ctx
        .data(|d| d.get_temp::<(u64, u64)>(shown_since))
        .unwrap_or((pass, pass));
    let first = if last + 1 < pass { pass } else { first };
    ctx.data_mut(|d| d.insert_temp(shown_since, (first, pass)));
    pass - first < 3
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_whole_path_typed_after_the_proposal_means_itself() {
        assert_eq!(typed_path(" /tmp/pod.ron "), PathBuf::from("/tmp/pod.ron"));
        assert_eq!(
            typed_path("/tmp//data/pod.ron"),
            PathBuf::from("/data/pod.ron")
        );
        assert_eq!(
            typed_path("/home/me/designs/"),
            PathBuf::from("/home/me/designs/")
        );
        // Without a home folder "~" is taken as written.
        let home = std::env::var_os("HOME")
            .filter(|h| !h.is_empty())
            .map_or_else(|| PathBuf::from("~"), PathBuf::from);
        assert_eq!(typed_path("/tmp/~/pod.ron"), home.join("pod.ron"));
        assert_eq!(typed_path("~/x/pod.ron"), home.join("x/pod.ron"));
        // A later restart wins: what was typed last.
        assert_eq!(typed_path("/a//b/~/c//d.ron"), PathBuf::from("/d.ron"));
        assert_eq!(typed_path(""), PathBuf::new());
    }
}
