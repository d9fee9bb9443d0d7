//! The designer window (eframe/egui): one file per panel. Panels read the design and return
//! events; the app applies them after drawing, so the design never changes mid-frame, and
//! every edit goes through `Document::apply` (one undo step each).

mod action_runner;
pub mod actions;
pub mod autosave;
mod background;
pub mod cabling;
pub mod calibrate;
pub mod canvas;
pub mod compare;
pub mod document;
mod escape;
pub mod exporting;
pub mod exports;
pub mod files;
mod fonts;
pub mod inspector;
pub mod jobs;
pub mod layout_search;
pub mod link_info;
pub mod logical_view;
pub mod menu;
pub mod opening;
pub mod palette;
mod path_prompt;
pub mod plots;
pub mod png;
pub mod prefs;
pub mod presentation;
pub mod presets;
pub mod shortcuts;
pub mod sidebar;
mod status_line;
mod tabs;
pub mod whatif;
pub mod worker;

use crate::io::import::{ImportFormat, import_file, placeholders};
use crate::io::link_colors::ColorMode;
use crate::model::command::Command;
use crate::model::factory::{devices_from_part, match_design_nics, name_for_new};
use crate::model::units::count_of;
use crate::model::{Catalog, DeviceId, LinkId, PartId, Pos};
use actions::{Action, ActionState};
use canvas::{CanvasEvent, CanvasOverlay, CanvasState};
use document::{Clip, Document};
use files::{FileDialogs, NativeDialogs};
use layout_search::SearchKey;
use menu::{MenuContext, MenuEvent, Theme};
use palette::{GenerateDialog, PaletteEvent, PaletteState};
use path_prompt::PathPrompt;
use prefs::PREFS_KEY;
pub use prefs::Prefs;
use presets::PRESETS;
use sidebar::{Analysis, AnalysisKey, SidebarEvent};
use std::collections::HashSet;
use std::path::{Path, PathBuf};
use std::sync::Arc;
use tabs::{ClosePrompt, Tab};

/// The error banner grows to this many points with a long message, then scrolls.
const BANNER_MAX_HEIGHT: f32 = 96.0;

/// Opens the designer window, optionally with a design file, on `catalog` (the built-in one,
/// or a user catalog merged over it, named by `user_catalog`).
pub fn run(
    file: Option<PathBuf>,
    catalog: Catalog,
    user_catalog: Option<String>,
) -> anyhow::Result<()> {
    let exit_after_first_frame =
        std::env::var_os("RAILYARD_EXIT_AFTER_FIRST_FRAME").is_some_and(|v| v == "1");
    let options = eframe::NativeOptions {
        viewport: egui::ViewportBuilder::default()
            .with_title("railyard")
            .with_app_id("railyard")
            .with_inner_size([1440.0, 900.0])
            .with_min_inner_size([720.0, 480.0]),
        ..Default::default()
    };
    eframe::run_native(
        "railyard",
        options,
        Box::new(move |cc| {
            let prefs = cc
                .storage
                .and_then(|s| eframe::get_value::<Prefs>(s, PREFS_KEY))
                .unwrap_or_default();
            let mut app = RailyardApp::new(catalog, prefs).with_user_catalog(user_catalog);
            app.exit_after_first_frame = exit_after_first_frame;
            if let Some(path) = file
                && !app.open_path(&path)
                && let Some(message) = &app.document().banner
            {
                // The window still opens, with the banner; the terminal hears it too.
                eprintln!("railyard: {message}");
            }
            app.start_autosave_from_env();
            Ok(Box::new(app))
        }),
    )
    .map_err(|e| anyhow::anyhow!("could not open the designer window: {e}"))
}

/// Everything panels and keys can ask for; applied after the frame's drawing.
enum AppEvent {
    Action {
        action: Action,
        shift: bool,
    },
    Command(Command),
    Select {
        devices: Vec<DeviceId>,
        links: Vec<LinkId>,
    },
    Status(String),
    AddPart(PartId),
    OpenPreset(usize),
    OpenPath(PathBuf),
    SaveAsPath(PathBuf),
    NewTab(Box<Document>),
    SwitchTab(usize),
    CloseTab(usize),
    ForceCloseTab(usize),
    Theme(Theme),
    /// View > Link colours.
    LinkColors(ColorMode),
    /// The legend folded or opened on a canvas: every tab, and the next start, follow.
    LegendFolded(bool),
    ClearRecent,
    About,
}

pub struct RailyardApp {
    catalog: Arc<Catalog>,
    /// The user catalog merged over the built-in one (`--catalog`), named in the title bar.
    user_catalog: Option<String>,
    prefs: Prefs,
    tabs: Vec<Tab>,
    active: usize,
    /// The tab the tab bar last scrolled into view (by id): a tab made active is brought into
    /// view once, and the user's own scrolling is left alone after.
    tab_in_view: Option<u64>,
    dialogs: Box<dyn FileDialogs>,
    clipboard: Option<Clip>,
    status: String,
    /// When the status line took its text: which design (tab id and revision) it spoke of and
    /// at what time, so that it can say its age and fade once the user has moved on.
    status_moment: Option<status_line::StatusMoment>,
    /// The sidebar's workload while a gesture edits it (a drag, a typed number), with the
    /// tab it belongs to: it becomes one `SetJob` command when the gesture ends.
    job_draft: Option<(u64, sidebar::WorkloadSettings)>,
    palette: PaletteState,
    generate: GenerateDialog,
    path_prompt: Option<PathPrompt>,
    close_prompt: Option<ClosePrompt>,
    about: bool,
    /// The Keyboard shortcuts window is open.
    shortcuts: bool,
    /// Links the sidebar points at this frame (the bisection cut, a check).
    highlight: HashSet<LinkId>,
    presentation: bool,
    /// The tab (its id) and view presentation mode was entered from: leaving it on that tab
    /// shows that view again.
    view_before_presentation: Option<(u64, egui::Rect)>,
    sent_title: Option<String>,
    applied_theme: Option<Theme>,
    /// The symbol fallback is installed in the window's fonts (`fonts`).
    fonts_installed: bool,
    /// The user confirmed closing with unsaved changes (or nothing was unsaved).
    allow_close: bool,
    /// The window was asked to close while an export was being written: it closes once
    /// the file is written.
    close_when_exported: bool,
    next_untitled: u32,
    next_tab_id: u64,
    calibrate: calibrate::CalibrateWindow,
    cabling: cabling::CablingWindow,
    compare: compare::CompareView,
    plots: plots::PlotsView,
    logical_view: logical_view::LogicalView,
    png: png::PngExport,
    frames: u64,
    /// Recovery files for crash safety; None in tests unless they turn it on.
    autosave: Option<autosave::Autosave>,
    /// Designs a crashed session left behind, offered until the user decides.
    recovery: Option<autosave::Orphans>,
    /// The window's focus on the last frame, to autosave when it is lost.
    was_focused: Option<bool>,
    /// `RAILYARD_EXIT_AFTER_FIRST_FRAME=1`: the smoke test's "the window came up".
    pub exit_after_first_frame: bool,
    /// Large files being read off the UI thread.
    opening: opening::Opening,
    exporting: exporting::Exporting,
}

impl RailyardApp {
    /// The app with one empty design; no window needed (tests drive `show`).
    pub fn new(catalog: Catalog, prefs: Prefs) -> Self {
        let mut app = Self {
            catalog: Arc::new(catalog),
            user_catalog: None,
            prefs,
            tabs: Vec::new(),
            active: 0,
            tab_in_view: None,
            dialogs: Box::new(NativeDialogs),
            clipboard: None,
            status: "Ready. Drag parts from the left, or File > Open preset.".to_string(),
            status_moment: None,
            job_draft: None,
            palette: PaletteState::default(),
            generate: GenerateDialog::default(),
            path_prompt: None,
            close_prompt: None,
            about: false,
            shortcuts: false,
            highlight: HashSet::new(),
            presentation: false,
            view_before_presentation: None,
            sent_title: None,
            applied_theme: None,
            fonts_installed: false,
            allow_close: false,
            close_when_exported: false,
            next_untitled: 1,
            next_tab_id: 0,
            calibrate: calibrate::CalibrateWindow::default(),
            cabling: cabling::CablingWindow::default(),
            compare: compare::CompareView::default(),
            plots: plots::PlotsView::default(),
            logical_view: logical_view::LogicalView::default(),
            png: png::PngExport::default(),
            frames: 0,
            autosave: None,
            recovery: None,
            was_focused: None,
            exit_after_first_frame: false,
            opening: opening::Opening::default(),
            exporting: exporting::Exporting::default(),
        };
        app.new_tab();
        app
    }

    /// Replaces the native file dialogs (tests inject paths this way).
    pub fn set_dialogs(&mut self, dialogs: Box<dyn FileDialogs>) {
        self.dialogs = dialogs;
    }

    pub fn prefs(&self) -> &Prefs {
        &self.prefs
    }

    /// The active design's document.
    pub fn document(&self) -> &Document {
        &self.tabs[self.active].doc
    }

    pub fn tab_count(&self) -> usize {
        self.tabs.len()
    }

    pub fn active_tab(&self) -> usize {
        self.active
    }

    pub fn canvas_state(&self) -> &CanvasState {
        &self.tabs[self.active].canvas
    }

    pub fn canvas_state_mut(&mut self) -> &mut CanvasState {
        &mut self.tabs[self.active].canvas
    }

    /// Links the sidebar asked the canvas to emphasise on the last frame.
    pub fn highlighted_links(&self) -> &HashSet<LinkId> {
        &self.highlight
    }

    pub fn status(&self) -> &str {
        &self.status
    }

    /// The newest finished analysis of the active design and the revision it belongs to.
    pub fn analysis(&self) -> Option<(AnalysisKey, Arc<Analysis>)> {
        let worker = self.tabs[self.active].worker.as_ref()?;
        worker.latest().map(|(k, a)| (k.clone(), Arc::clone(a)))
    }

    /// The active design's layout search is still running.
    pub fn layout_search_is_running(&self) -> bool {
        self.tabs[self.active].layout_search.is_running()
    }

    /// The active design's layout search was asked for (it runs or has finished).
    pub fn layout_search_was_started(&self) -> bool {
        self.tabs[self.active].layout_search.was_started()
    }

    /// The shown analysis belongs to the current revision and settings.
    pub fn analysis_is_current(&self) -> bool {
        self.analysis()
            .is_some_and(|(key, _)| key == self.analysis_key())
    }

    fn analysis_key(&self) -> AnalysisKey {
        (
            self.document().revision(),
            sidebar::question(
                self.prefs.collective.query(),
                self.document()
                    .design()
                    .job
                    .as_ref()
                    .and_then(crate::analysis::job::workload_of_job),
            ),
        )
    }

    /// Applies an edit to the active design, exactly as a panel's command is applied.
    pub fn apply(&mut self, command: Command) -> bool {
        let label = command.label();
        match self.tabs[self.active].doc.apply(command) {
            Ok(()) => {
                self.prune_selection();
                true
            }
            Err(e) => {
                self.status = format!("Could not {label}: {e}");
                false
            }
        }
    }

    /// Opens a design file in a tab (or switches to it if already open). A file that does
    /// not load leaves every open design as it was and shows why in a banner (false).
    pub fn open_path(&mut self, path: &Path) -> bool {
        if let Some(format) = ImportFormat::from_path(path) {
            return self.import_path(path, format);
        }
        let canonical = std::fs::canonicalize(path).ok();
        if let Some(i) = self.tabs.iter().position(|t| {
            t.doc
                .path()
                .is_some_and(|p| canonical.as_deref() == std::fs::canonicalize(p).ok().as_deref())
        }) {
            self.active = i;
            self.status = format!("{} is already open", path.display());
            return true;
        }
        if self.opening.is_opening(path) {
            self.status = format!("{} is still being read", path.display());
            return true;
        }
        // A large file is read off the UI thread (see `opening`); it opens when it is in.
        let bytes = std::fs::metadata(path).map_or(0, |m| m.len());
        if bytes >= opening::BACKGROUND_BYTES && self.opening.start(path, bytes).is_ok() {
            self.status = format!("Opening {}…", path.display());
            return true;
        }
        let result = Document::open(path).map_err(|e| e.to_string());
        self.opened(path, result)
    }

    /// A file read: its tab, or why not in the banner (false).
    fn opened(&mut self, path: &Path, result: Result<Document, String>) -> bool {
        match result {
            Ok(doc) => {
                files::remember_recent(&mut self.prefs.recent, path);
                self.status = format!("Opened {}", path.display());
                self.push_tab(doc);
                true
            }
            Err(message) => {
                self.status = "The file did not open; the banner says why.".to_string();
                self.tabs[self.active].doc.banner = Some(message);
                false
            }
        }
    }

    /// Reads a draw.io, DOT or CSV edge-list file into a new unsaved tab (Save asks where
    /// to put the design). A file that does not import leaves every open design as it was
    /// and shows why, with the line, in a banner (false).
    fn import_path(&mut self, path: &Path, format: ImportFormat) -> bool {
        match import_file(path, Some(format), &self.catalog) {
            Ok(design) => {
                let made_up = placeholders(&design, &self.catalog).len();
                self.status = if made_up == 0 {
                    format!("Imported {} ({format})", path.display())
                } else {
                    format!(
                        "Imported {} ({format}): {made_up} devices with parts the catalog \
                         lacks, listed by the checks",
                        path.display()
                    )
                };
                self.push_tab(Document::from_design(design, None));
                true
            }
            Err(e) => {
                self.status = "The file did not import; the banner says why.".to_string();
                self.tabs[self.active].doc.banner = Some(e.to_string());
                false
            }
        }
    }

    /// Opens one of the compiled-in presets as a new design (Save asks where to put it).
    pub fn open_preset(&mut self, index: usize) {
        let Some(preset) = PRESETS.get(index) else {
            return;
        };
        match preset.design() {
            Ok(design) => {
                self.status = format!("Opened preset {}", preset.title);
                self.push_tab(Document::from_design(design, None));
            }
            Err(e) => self.tabs[self.active].doc.banner = Some(e.to_string()),
        }
    }

    /// Adds a catalog part at the centre of the view: what a palette double-click does, and
    /// the same factory call a drop on the canvas makes.
    pub fn add_part(&mut self, part: &PartId) {
        let tab = &self.tabs[self.active];
        let design = tab.doc.design();
        let centre = tab.canvas.scene_rect.center();
        // Step aside from devices already sitting exactly there.
        let taken = design
            .devices
            .iter()
            .filter(|d| (d.pos.x - centre.x).abs() < 1.0 || (d.pos.y - centre.y).abs() < 1.0)
            .count() as f32;
        let pos = Pos::new(centre.x + 24.0 * taken, centre.y + 24.0 * taken);
        let id = design.next_device_id();
        let name = name_for_new(design, &self.catalog, part, id);
        match devices_from_part(&self.catalog, part, id, name, pos) {
            Ok(mut devices) => {
                let ids: Vec<DeviceId> = devices.iter().map(|d| d.id).collect();
                let name = devices.first().map(|d| d.name.clone()).unwrap_or_default();
                let nics = devices
                    .first_mut()
                    .and_then(|d| match_design_nics(&self.catalog, design, d));
                if self.apply(Command::Insert {
                    devices,
                    links: Vec::new(),
                    groups: Vec::new(),
                }) {
                    self.status = match nics {
                        Some(nics) => format!("Added {name} {nics}"),
                        None => format!("Added {name}"),
                    };
                    let selection = &mut self.tabs[self.active].canvas.selection;
                    selection.devices = ids.into_iter().collect();
                    selection.links.clear();
                }
            }
            Err(e) => self.status = e.to_string(),
        }
    }

    fn action_state(&self) -> ActionState {
        let tab = &self.tabs[self.active];
        let sel = &tab.canvas.selection;
        ActionState {
            has_document: true,
            can_undo: tab.doc.history().can_undo(),
            can_redo: tab.doc.history().can_redo(),
            has_selection: !sel.is_empty(),
            has_devices_selected: !sel.devices.is_empty(),
            has_clipboard: self
                .clipboard
                .as_ref()
                .is_some_and(|c| !c.devices.is_empty()),
            design_is_empty: tab.doc.design().devices.is_empty(),
        }
    }

    /// Drops selected ids that an undo or delete removed.
    fn prune_selection(&mut self) {
        let tab = &mut self.tabs[self.active];
        tab.canvas.selection.retain_existing(tab.doc.design());
    }

    /// Where a file dialog starts: beside the open design, else beside the last file opened.
    fn start_dir(&self) -> Option<PathBuf> {
        self.document()
            .path()
            .or(self.prefs.recent.first().map(PathBuf::as_path))
            .and_then(Path::parent)
            .map(Path::to_path_buf)
    }

    fn save_active_to(&mut self, path: &Path) {
        let tab = &mut self.tabs[self.active];
        match tab.doc.save_to(path) {
            Ok(()) => {
                tab.doc.banner = None;
                files::remember_recent(&mut self.prefs.recent, path);
                self.status = format!("Saved {}", path.display());
            }
            Err(e) => {
                self.status = "Not saved; the banner says why.".to_string();
                tab.doc.banner = Some(e.to_string());
            }
        }
    }

    fn handle(&mut self, event: AppEvent, ctx: &egui::Context) {
        match event {
            AppEvent::Action { action, shift } => self.run_action(action, shift, ctx),
            AppEvent::Command(command) => {
                self.apply(command);
            }
            AppEvent::Select { devices, links } => {
                let selection = &mut self.tabs[self.active].canvas.selection;
                selection.devices = devices.into_iter().collect();
                selection.links = links.into_iter().collect();
                self.prune_selection();
            }
            AppEvent::Status(message) => self.status = message,
            AppEvent::AddPart(part) => self.add_part(&part),
            AppEvent::OpenPreset(i) => self.open_preset(i),
            AppEvent::OpenPath(path) => {
                self.open_path(&path);
            }
            AppEvent::SaveAsPath(path) => self.save_active_to(&files::with_design_extension(path)),
            AppEvent::NewTab(doc) => {
                self.push_tab(*doc);
            }
            AppEvent::SwitchTab(i) => {
                if i < self.tabs.len() {
                    self.active = i;
                }
            }
            AppEvent::CloseTab(i) => self.request_close_tab(i),
            AppEvent::ForceCloseTab(i) => self.close_tab(i),
            AppEvent::Theme(theme) => self.prefs.theme = theme,
            AppEvent::LinkColors(mode) => {
                self.prefs.link_colors = mode;
                for tab in &mut self.tabs {
                    tab.canvas.link_colors = mode;
                }
            }
            AppEvent::LegendFolded(folded) => {
                self.prefs.legend_folded = folded;
                for tab in &mut self.tabs {
                    tab.canvas.legend_folded = folded;
                }
            }
            AppEvent::ClearRecent => self.prefs.recent.clear(),
            AppEvent::About => self.about = true,
        }
    }

    /// Searches the layouts of the sidebar's workload on the active design, off the UI
    /// thread; the sidebar shows its progress and what it found.
    fn start_layout_search(&mut self, ctx: &egui::Context) {
        let Some(workload) = self
            .document()
            .design()
            .job
            .as_ref()
            .and_then(crate::analysis::job::workload_of_job)
        else {
            return;
        };
        let tab = &mut self.tabs[self.active];
        let key = SearchKey {
            revision: tab.doc.fabric_revision(),
            workload,
            routing: self.prefs.collective.routing(),
        };
        let design = tab.doc.shared_design();
        if let Err(e) = tab
            .layout_search
            .start(ctx, Arc::clone(&self.catalog), design, key)
        {
            self.status = format!("Could not start the layout search: {e}");
        }
    }

    /// Polls every tab's worker and asks for the active design's analysis if it is stale.
    fn drive_analysis(&mut self, ctx: &egui::Context) {
        for tab in &mut self.tabs {
            if let Some(worker) = &mut tab.worker {
                worker.poll();
            }
            tab.layout_search.poll();
        }
        let key = self.analysis_key();
        let catalog = Arc::clone(&self.catalog);
        let tab = &mut self.tabs[self.active];
        if tab.worker.is_none() {
            match sidebar::spawn_worker(ctx, catalog) {
                Ok(worker) => tab.worker = Some(worker),
                Err(e) => {
                    self.status = format!("Metrics are off: could not start the worker ({e})");
                    return;
                }
            }
        }
        if let Some(worker) = &mut tab.worker {
            let design = tab.doc.shared_design();
            let question = key.1.clone();
            worker.submit_if_new(key, || (design, question));
        }
    }

    fn window_title(&self) -> String {
        let doc = self.document();
        let dirty = if doc.is_dirty() { " •" } else { "" };
        match &self.user_catalog {
            Some(name) => format!("{}{dirty} — railyard (catalog + {name})", doc.title()),
            None => format!("{}{dirty} — railyard", doc.title()),
        }
    }

    /// Names the user catalog merged into this app's catalog, for the title bar.
    pub fn with_user_catalog(mut self, name: Option<String>) -> Self {
        self.user_catalog = name;
        self
    }

    /// The whole window, one frame. Public so tests can run it in a kittest harness.
    pub fn show(&mut self, ui: &mut egui::Ui) {
        let ctx = ui.ctx().clone();
        self.frames += 1;
        if !self.fonts_installed {
            ctx.set_fonts(fonts::with_symbol_fallback());
            self.fonts_installed = true;
        }
        if self.applied_theme != Some(self.prefs.theme) {
            ctx.set_theme(self.prefs.theme.preference());
            self.applied_theme = Some(self.prefs.theme);
        }
        self.drive_analysis(&ctx);
        for (path, result) in self.opening.finished() {
            self.opened(&path, result);
        }
        for line in self.exporting.finished() {
            self.status = line;
        }

        let mut events: Vec<AppEvent> = Vec::new();

        // Paste from another railyard window arrives as clipboard text.
        let pasted: Option<Clip> = ctx.input(|i| {
            i.events.iter().find_map(|e| match e {
                egui::Event::Paste(text) => Clip::from_text(text),
                _ => None,
            })
        });
        if pasted.is_some() && !ctx.text_edit_focused() {
            self.clipboard = pasted;
        }
        let state = self.action_state();
        for t in actions::triggered_actions(&ctx, &state) {
            events.push(AppEvent::Action {
                action: t.action,
                shift: t.shift,
            });
        }

        // A close while an export is written waits for the file: cut off, it would be lost.
        if ctx.input(|i| i.viewport().close_requested()) && self.exporting.is_busy() {
            ctx.send_viewport_cmd(egui::ViewportCommand::CancelClose);
            if !self.close_when_exported {
                self.close_when_exported = true;
                self.status = "Closing once the export is written…".into();
            }
        } else if self.close_when_exported && !self.exporting.is_busy() {
            self.close_when_exported = false;
            ctx.send_viewport_cmd(egui::ViewportCommand::Close);
        } else if ctx.input(|i| i.viewport().close_requested()) && !self.allow_close {
            if self.tabs.iter().any(|t| t.doc.is_dirty()) {
                ctx.send_viewport_cmd(egui::ViewportCommand::CancelClose);
                self.close_prompt = Some(ClosePrompt::Window);
            } else {
                self.allow_close = true;
            }
        }

        self.highlight.clear();
        // The fault under the pointer in Check cabling (on the last frame: the window is
        // drawn after the canvas).
        self.highlight
            .extend(self.cabling.hovered_links().iter().copied());
        if !self.presentation {
            self.menu_bar(ui, &state, &mut events);
            self.tab_bar(ui, &mut events);
            self.status_bar(ui);
        } else if presentation::strip_ui(
            ui,
            &self.document().title(),
            crate::analysis::whatif::what_if_text(self.document().design()).as_deref(),
            self.analysis().as_ref().map(|(_, a)| a.as_ref()),
        ) {
            events.push(AppEvent::Action {
                action: Action::Presentation,
                shift: false,
            });
        }
        // Escape closes an open dialog first; only then does it leave presentation mode.
        let dialog_closed = self.close_dialog_on_escape(&ctx);
        // Escape leaves presentation mode as it leaves any full-screen view, unless a drag on
        // the canvas is under way (there Escape cancels the drag).
        if self.presentation
            && !dialog_closed
            && !ctx.text_edit_focused()
            && ctx.input(|i| i.key_pressed(egui::Key::Escape) && !i.pointer.any_down())
        {
            events.push(AppEvent::Action {
                action: Action::Presentation,
                shift: false,
            });
        }
        if !self.presentation {
            self.left_panel(ui, &mut events);
            self.right_panel(ui, &mut events);
        }
        self.central(ui, &mut events);
        // Tool windows over the canvas would be in the exported PNG.
        if !self.png.clean_view() {
            self.windows(&ctx, &mut events);
        }
        self.drive_png(&ctx);

        for event in events {
            self.handle(event, &ctx);
        }
        self.prune_selection();
        // Ask for the new revision now rather than on the next frame.
        self.drive_analysis(&ctx);
        self.drive_autosave(&ctx);

        let title = self.window_title();
        if self.sent_title.as_deref() != Some(title.as_str()) {
            ctx.send_viewport_cmd(egui::ViewportCommand::Title(title.clone()));
            self.sent_title = Some(title);
        }

        if self.exit_after_first_frame && self.frames == 1 {
            eprintln!("railyard: first frame drawn; closing (RAILYARD_EXIT_AFTER_FIRST_FRAME=1)");
            self.allow_close = true;
            ctx.send_viewport_cmd(egui::ViewportCommand::Close);
        }
    }

    fn menu_bar(&mut self, ui: &mut egui::Ui, state: &ActionState, events: &mut Vec<AppEvent>) {
        let tab = &self.tabs[self.active];
        let m = MenuContext {
            state: *state,
            undo_label: tab.doc.history().undo_label(),
            redo_label: tab.doc.history().redo_label(),
            show_grid: self.prefs.show_grid,
            snap: self.prefs.snap,
            heatmap: self.prefs.heatmap,
            link_colors: self.prefs.link_colors,
            presentation: self.presentation,
            theme: self.prefs.theme,
            recent: &self.prefs.recent,
            presets: PRESETS,
        };
        let chosen = egui::Panel::top("menu-bar")
            .show(ui, |ui| menu::menu_ui(ui, &m))
            .inner;
        for event in chosen {
            events.push(match event {
                MenuEvent::Action(action) => AppEvent::Action {
                    action,
                    shift: false,
                },
                MenuEvent::OpenPreset(i) => AppEvent::OpenPreset(i),
                MenuEvent::OpenRecent(path) => AppEvent::OpenPath(path),
                MenuEvent::ClearRecent => AppEvent::ClearRecent,
                MenuEvent::Theme(theme) => AppEvent::Theme(theme),
                MenuEvent::LinkColors(mode) => AppEvent::LinkColors(mode),
                MenuEvent::About => AppEvent::About,
            });
        }
    }

    fn status_bar(&mut self, ui: &mut egui::Ui) {
        let tab = &self.tabs[self.active];
        let now = ui.input(|i| i.time);
        let here = (tab.id, tab.doc.revision());
        let moment = match self.status_moment.take() {
            Some(m) if m.text == self.status => m,
            _ => status_line::StatusMoment {
                text: self.status.clone(),
                design: here,
                since_s: now,
            },
        };
        let status = moment.line(here, now);
        self.status_moment = Some(moment);
        let pending = tab.worker.as_ref().is_some_and(|w| w.is_pending());
        egui::Panel::bottom("status-bar").show(ui, |ui| {
            ui.horizontal(|ui| {
                ui.label(status);
                ui.with_layout(egui::Layout::right_to_left(egui::Align::Center), |ui| {
                    if pending {
                        ui.weak("recomputing…");
                    }
                    let undo = tab
                        .doc
                        .history()
                        .undo_label()
                        .map_or_else(|| "nothing to undo".to_string(), |l| format!("undo: {l}"));
                    ui.weak(undo);
                    let sel = &tab.canvas.selection;
                    if !sel.is_empty() {
                        ui.weak(format!(
                            "{}, {} selected",
                            count_of(sel.devices.len(), "device", "devices"),
                            count_of(sel.links.len(), "link", "links")
                        ));
                    }
                });
            });
        });
    }

    fn left_panel(&mut self, ui: &mut egui::Ui, events: &mut Vec<AppEvent>) {
        let response = egui::Panel::left("palette")
            .resizable(true)
            .default_size(self.prefs.palette_width)
            .size_range(160.0..=480.0)
            .show(ui, |ui| {
                palette::palette_ui(ui, &self.catalog, &mut self.palette)
            });
        if let Some(size) = panel_size(ui.ctx(), "palette") {
            self.prefs.palette_width = size.x;
        }
        for event in response.inner {
            events.push(match event {
                PaletteEvent::Add(part) => AppEvent::AddPart(part),
                PaletteEvent::OpenGenerate => AppEvent::Action {
                    action: Action::Generate,
                    shift: false,
                },
            });
        }
    }

    fn right_panel(&mut self, ui: &mut egui::Ui, events: &mut Vec<AppEvent>) {
        let analysis = self.analysis();
        let loads = analysis.as_ref().and_then(|(_, a)| link_loads(a));
        // As the canvas decides: the heatmap shows when asked for and evaluated.
        let heatmap = self.prefs.heatmap && analysis.is_some();
        let tab = &mut self.tabs[self.active];
        let pending = tab.worker.as_ref().is_some_and(|w| w.is_pending());
        let catalog = &self.catalog;
        let settings = &mut self.prefs.collective;
        // The design's job as the sidebar edits it: the draft of a gesture under way, else
        // the design's own.
        let committed =
            sidebar::WorkloadSettings::of(tab.doc.design().job.as_ref(), &self.prefs.workload);
        let mut workload = match self.job_draft.take() {
            Some((id, draft)) if id == tab.id => draft,
            _ => committed.clone(),
        };
        let inspector_height = self.prefs.inspector_height;
        let view = &mut self.prefs.sidebar_view;
        let mut sidebar_events = Vec::new();
        egui::Panel::right("sidebar")
            .resizable(true)
            .default_size(self.prefs.sidebar_width)
            .size_range(240.0..=560.0)
            .show(ui, |ui| {
                sidebar::view_tabs_ui(ui, view);
                let mut commands = Vec::new();
                if view.shows_inspector() && view.shows_metrics() {
                    commands = egui::Panel::top("inspector")
                        .resizable(true)
                        .default_size(inspector_height)
                        .size_range(120.0..=800.0)
                        .show(ui, |ui| {
                            inspector_area(ui, tab, catalog, loads.as_ref(), heatmap)
                        })
                        .inner;
                } else if view.shows_inspector() {
                    commands = inspector_area(ui, tab, catalog, loads.as_ref(), heatmap);
                }
                for command in commands {
                    events.push(AppEvent::Command(command));
                }
                if view.shows_metrics() {
                    // Scrolls both ways so that a wide row (a long model name, a table of
                    // parts) scrolls rather than widening the sidebar over the canvas.
                    egui::ScrollArea::both()
                        .id_salt("metrics-scroll")
                        .auto_shrink([false, false])
                        .show(ui, |ui| {
                            sidebar_events = sidebar::sidebar_ui(
                                ui,
                                analysis.as_ref().map(|(_, a)| a.as_ref()),
                                pending,
                                settings,
                                &mut workload,
                                (&tab.layout_search, tab.doc.fabric_revision()),
                            );
                            // Room under the last row, so that the scroll bar floating over
                            // the bottom edge on hover never covers it.
                            ui.add_space(ui.spacing().scroll.bar_width + 12.0);
                        });
                }
            });
        // A changed workload is one undoable edit of the design, once the gesture ends.
        if workload != committed {
            let gesture = ui.input(|i| i.pointer.any_down()) || ui.ctx().text_edit_focused();
            if gesture {
                self.job_draft = Some((self.tabs[self.active].id, workload));
            } else {
                self.prefs.workload = workload.job.clone();
                events.push(AppEvent::Command(Command::SetJob(
                    workload.design_job().map(Box::new),
                )));
            }
        }
        if let Some(size) = panel_size(ui.ctx(), "sidebar") {
            self.prefs.sidebar_width = size.x;
        }
        if let Some(size) = panel_size(ui.ctx(), "inspector") {
            self.prefs.inspector_height = size.y;
        }
        for event in sidebar_events {
            match event {
                SidebarEvent::Select { devices, links } => {
                    events.push(AppEvent::Select { devices, links });
                }
                SidebarEvent::Highlight(links) => self.highlight.extend(links),
                // The question is part of the analysis key: a new one is asked next frame.
                SidebarEvent::SettingsChanged => {}
                SidebarEvent::OpenPlots => self.plots.open = true,
                SidebarEvent::SearchLayouts => self.start_layout_search(ui.ctx()),
            }
        }
    }

    fn central(&mut self, ui: &mut egui::Ui, events: &mut Vec<AppEvent>) {
        let analysis = self.analysis();
        let heat = if self.prefs.heatmap {
            analysis.as_ref().map(|(_, a)| &a.heat)
        } else {
            None
        };
        let loads = analysis.as_ref().and_then(|(_, a)| link_loads(a));
        let tab = &mut self.tabs[self.active];
        let catalog = &self.catalog;
        let no_highlight = HashSet::new();
        let clean = self.png.clean_view();
        let highlight = if clean {
            &no_highlight
        } else {
            &self.highlight
        };
        // For the PNG: no grid and no selection, put back after this frame's canvas.
        let kept = clean.then(|| {
            let grid = std::mem::replace(&mut tab.canvas.show_grid, false);
            let minimap = std::mem::replace(&mut tab.canvas.show_minimap, false);
            let zoom = std::mem::replace(&mut tab.canvas.show_zoom, false);
            (
                grid,
                minimap,
                zoom,
                std::mem::take(&mut tab.canvas.selection),
            )
        });
        let panel = egui::CentralPanel::default().show(ui, |ui| {
            if let Some(message) = &tab.doc.banner {
                let mut dismiss = false;
                egui::Frame::new()
                    .fill(ui.visuals().error_fg_color.gamma_multiply(0.15))
                    .inner_margin(8.0)
                    .corner_radius(4.0)
                    .show(ui, |ui| {
                        // Dismiss is laid first, at the right, so a long message wraps and
                        // scrolls beside it instead of pushing it out of the window.
                        ui.horizontal_top(|ui| {
                            ui.colored_label(ui.visuals().error_fg_color, "Error:");
                            ui.with_layout(egui::Layout::right_to_left(egui::Align::Min), |ui| {
                                dismiss = ui.button("Dismiss").clicked();
                                egui::ScrollArea::vertical()
                                    .id_salt("railyard_banner")
                                    .max_height(BANNER_MAX_HEIGHT)
                                    .auto_shrink([false, true])
                                    .show(ui, |ui| {
                                        ui.with_layout(
                                            egui::Layout::top_down(egui::Align::Min),
                                            |ui| ui.add(egui::Label::new(message.as_str()).wrap()),
                                        );
                                    });
                            });
                        });
                    });
                if dismiss {
                    tab.doc.banner = None;
                }
            }
            let overlay = CanvasOverlay {
                catalog,
                heat,
                highlight_links: highlight,
                loads: loads.as_ref(),
            };
            let folded = tab.canvas.legend_folded;
            for event in canvas::canvas_ui(ui, tab.doc.design(), &mut tab.canvas, &overlay) {
                events.push(match event {
                    CanvasEvent::Command(command) => AppEvent::Command(command),
                    CanvasEvent::Status(message) => AppEvent::Status(message),
                });
            }
            if tab.canvas.legend_folded != folded {
                events.push(AppEvent::LegendFolded(tab.canvas.legend_folded));
            }
            if clean {
                png::paint_title(ui, ui.max_rect(), &tab.doc.design().name);
            }
        });
        if let Some((grid, minimap, zoom, selection)) = kept {
            tab.canvas.show_grid = grid;
            tab.canvas.show_minimap = minimap;
            tab.canvas.show_zoom = zoom;
            tab.canvas.selection = selection;
        }
        self.png.canvas_rect = Some(panel.response.rect);
    }

    fn windows(&mut self, ctx: &egui::Context, events: &mut Vec<AppEvent>) {
        if let Some(design) = palette::generate_dialog_ui(ctx, &self.catalog, &mut self.generate) {
            self.status = format!("Generated {}", design.name);
            events.push(AppEvent::NewTab(Box::new(Document::unsaved(design))));
        }
        self.path_prompt_window(ctx, events);
        self.close_prompt_window(ctx, events);
        self.opening.ui(ctx);
        self.exporting.ui(ctx);
        self.recovery_window(ctx);
        let cabling = self
            .cabling
            .show(ctx, self.tabs[self.active].doc.design(), &self.catalog);
        if let Some((devices, links)) = cabling.select {
            events.push(AppEvent::Select { devices, links });
        }
        if let Some(command) =
            self.calibrate
                .show(ctx, self.tabs[self.active].doc.design(), &self.catalog)
        {
            self.apply(command);
        }
        // Only while the window is open (this runs every frame). The active design's job is
        // asked of every design compared.
        let workload = self
            .compare
            .open
            .then(|| {
                let design = self.tabs[self.active].doc.design();
                design
                    .job
                    .as_ref()
                    .and_then(crate::analysis::job::workload_of_job)
            })
            .flatten();
        let job_of = self.tabs[self.active].doc.title();
        self.compare
            .window(ctx, &self.tabs, &self.catalog, workload.as_ref(), &job_of);
        self.plots
            .window(ctx, &self.tabs, self.active, &self.compare, &self.catalog);
        let tab = &self.tabs[self.active];
        self.logical_view.window(
            ctx,
            (tab.id, tab.doc.revision()),
            tab.doc.design(),
            &self.catalog,
        );
        if self.shortcuts {
            shortcuts::shortcuts_window(ctx, &mut self.shortcuts);
        }
        if self.about {
            egui::Window::new("About railyard")
                .open(&mut self.about)
                .collapsible(false)
                .resizable(false)
                .show(ctx, |ui| {
                    ui.label(format!("railyard {}", env!("CARGO_PKG_VERSION")));
                    ui.label(env!("CARGO_PKG_DESCRIPTION"));
                    ui.label(format!("{} parts in the catalog", self.catalog.len()));
                });
        }
    }
}

/// Each link's load under the analysis's collective, or why it is unknown; None when no
/// collective was asked for.
fn link_loads(analysis: &sidebar::Analysis) -> Option<link_info::LinkLoads<'_>> {
    Some(match analysis.collective.as_ref()? {
        Ok(result) => link_info::LinkLoads::of(&analysis.heat, result),
        Err(e) => link_info::LinkLoads::Unknown { why: e.to_string() },
    })
}

/// The inspector and the what-if buttons of the selection, in a scroll area that fills its
/// space (so the split keeps the height it was given) and scrolls sideways rather than
/// widening the sidebar.
fn inspector_area(
    ui: &mut egui::Ui,
    tab: &mut Tab,
    catalog: &Catalog,
    loads: Option<&link_info::LinkLoads>,
    heatmap: bool,
) -> Vec<Command> {
    egui::ScrollArea::both()
        .id_salt("inspector-scroll")
        .auto_shrink([false, false])
        .show(ui, |ui| {
            let sel = &tab.canvas.selection;
            let design = tab.doc.design();
            let lanes = if heatmap {
                ColorMode::Heatmap
            } else {
                crate::io::link_colors::drawn_mode(tab.canvas.link_colors, design)
            };
            let mut commands = inspector::inspector_ui(
                ui,
                design,
                catalog,
                &sel.devices,
                &sel.links,
                &mut tab.inspector,
                &inspector::DrawnLinks { loads, lanes },
            );
            ui.separator();
            commands.extend(whatif::whatif_ui(
                ui,
                tab.doc.design(),
                &sel.devices,
                &sel.links,
            ));
            commands
        })
        .inner
}

/// A panel's size as egui keeps it (outer, what `default_size` takes), so that the saved
/// preference reopens the panel at exactly the size it had.
fn panel_size(ctx: &egui::Context, id: &str) -> Option<egui::Vec2> {
    egui::PanelState::load(ctx, egui::Id::new(id)).map(|s| s.size())
}

impl eframe::App for RailyardApp {
    fn ui(&mut self, ui: &mut egui::Ui, _frame: &mut eframe::Frame) {
        self.show(ui);
    }

    fn save(&mut self, storage: &mut dyn eframe::Storage) {
        eframe::set_value(storage, PREFS_KEY, &self.prefs);
    }

    fn on_exit(&mut self) {
        self.finish_autosave();
    }
}
