//! Crash safety: every open design with unsaved changes is copied to a recovery file, and the
//! next start offers the copies left behind by a process that did not exit cleanly.
//!
//! Layout: `<root>/session-<pid>-<nanos>/` per running designer, holding `lock` (locked for
//! the life of the process, so a crashed process's lock is released by the OS and a live one
//! is never taken for dead, whatever its pid) and per tab `tab-<uid>.ron` (an ordinary design
//! file) with `tab-<uid>.json` (where the design came from). Every file is written atomically.
//!
//! A recovery file is written only when its design is dirty and has changed since the last
//! write (by revision), at most once per interval or when the window loses focus; a saved or
//! closed design loses its file, and a clean exit removes the whole session.

use super::document::Document;
use crate::io::design_file::{design_to_string, write_atomically};
use crate::model::Design;
use serde::{Deserialize, Serialize};
use std::collections::{HashMap, HashSet};
use std::fs::{File, OpenOptions};
use std::io::{self, Write as _};
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::thread::JoinHandle;
use std::time::{Duration, Instant, SystemTime};

/// Overrides where recovery files go (tests point it at a temporary folder).
pub const DIR_ENV: &str = "RAILYARD_RECOVERY_DIR";
/// Overrides the autosave interval, in seconds (fractions allowed).
pub const INTERVAL_ENV: &str = "RAILYARD_AUTOSAVE_SECS";
pub const DEFAULT_INTERVAL: Duration = Duration::from_secs(30);
/// Designs with more devices plus links than this are encoded on a background thread:
/// encoding a 131k-GPU design takes about a second, too long for a frame.
pub const BACKGROUND_ITEMS: usize = 20_000;
/// While a background write runs, look again this often to collect it.
const IN_FLIGHT_POLL: Duration = Duration::from_millis(100);

const SESSION_PREFIX: &str = "session-";
const LOCK_FILE: &str = "lock";

#[derive(Debug, Clone, PartialEq)]
pub struct AutosaveConfig {
    /// The folder holding one sub-folder per running designer.
    pub root: PathBuf,
    pub interval: Duration,
    /// Devices plus links above which a write leaves the UI thread.
    pub background_items: usize,
}

impl AutosaveConfig {
    pub fn new(root: PathBuf) -> Self {
        Self {
            root,
            interval: DEFAULT_INTERVAL,
            background_items: BACKGROUND_ITEMS,
        }
    }

    /// `RAILYARD_RECOVERY_DIR`, else `recovery` in the platform data folder (on Linux
    /// `$XDG_DATA_HOME/railyard/recovery`); the interval from `RAILYARD_AUTOSAVE_SECS`.
    pub fn from_env() -> Option<Self> {
        let root = std::env::var_os(DIR_ENV)
            .filter(|v| !v.is_empty())
            .map(PathBuf::from)
            .or_else(|| eframe::storage_dir("railyard").map(|d| d.join("recovery")))?;
        let mut config = Self::new(root);
        config.interval = parse_interval(std::env::var(INTERVAL_ENV).ok().as_deref());
        Some(config)
    }
}

/// Seconds as text, positive and finite; anything else gives the default.
pub fn parse_interval(text: Option<&str>) -> Duration {
    text.and_then(|t| t.trim().parse::<f64>().ok())
        .filter(|s| s.is_finite() && *s > 0.0 && *s < 1e9)
        .map_or(DEFAULT_INTERVAL, Duration::from_secs_f64)
}

/// What a recovery file's sidecar remembers about its design.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
struct Meta {
    /// The file the design was opened from or last saved to, if any.
    original: Option<PathBuf>,
    title: String,
    revision: u64,
}

/// One design left behind by a process that did not exit cleanly.
#[derive(Debug, Clone, PartialEq)]
pub struct RecoveredFile {
    /// The recovery copy (an ordinary design file).
    pub file: PathBuf,
    /// Where the design lived before the crash, if it had been saved or opened from a file.
    pub original: Option<PathBuf>,
    pub title: String,
    pub modified: Option<SystemTime>,
}

/// Everything left behind by dead sessions.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Orphans {
    pub sessions: Vec<PathBuf>,
    pub files: Vec<RecoveredFile>,
}

impl Orphans {
    pub fn is_empty(&self) -> bool {
        self.files.is_empty()
    }

    /// Deletes the dead sessions' folders (after Discard, or once recovered files moved out).
    pub fn discard(&self) -> io::Result<()> {
        let mut first_error = None;
        for dir in &self.sessions {
            if let Err(e) = std::fs::remove_dir_all(dir)
                && e.kind() != io::ErrorKind::NotFound
            {
                first_error.get_or_insert(e);
            }
        }
        first_error.map_or(Ok(()), Err)
    }
}

/// True when another process holds the session's lock.
fn session_is_live(dir: &Path) -> bool {
    let Ok(file) = OpenOptions::new().read(true).open(dir.join(LOCK_FILE)) else {
        // No lock file: the process died between creating the folder and locking it.
        return false;
    };
    // The probe's own lock goes away when `file` is dropped.
    matches!(file.try_lock(), Err(std::fs::TryLockError::WouldBlock))
}

/// Recovery files under `root` whose process is gone. `own` (this process's session) is
/// skipped. Dead sessions with nothing to recover are removed on the way.
pub fn find_orphans(root: &Path, own: Option<&Path>) -> Orphans {
    let mut orphans = Orphans::default();
    let Ok(entries) = std::fs::read_dir(root) else {
        return orphans;
    };
    for entry in entries.flatten() {
        let dir = entry.path();
        let is_session = entry
            .file_name()
            .to_string_lossy()
            .starts_with(SESSION_PREFIX)
            && entry.file_type().is_ok_and(|t| t.is_dir());
        if !is_session || own == Some(dir.as_path()) || session_is_live(&dir) {
            continue;
        }
        let files = session_files(&dir);
        if files.is_empty() {
            let _ = std::fs::remove_dir_all(&dir);
            continue;
        }
        orphans.files.extend(files);
        orphans.sessions.push(dir);
    }
    // Newest first: the most recent work is most likely what the user is after.
    orphans
        .files
        .sort_by(|a, b| b.modified.cmp(&a.modified).then(a.file.cmp(&b.file)));
    orphans
}

fn session_files(dir: &Path) -> Vec<RecoveredFile> {
    let Ok(entries) = std::fs::read_dir(dir) else {
        return Vec::new();
    };
    let mut files = Vec::new();
    for entry in entries.flatten() {
        let path = entry.path();
        let name = entry.file_name().to_string_lossy().into_owned();
        if !(name.starts_with("tab-") && name.ends_with(".ron")) {
            continue;
        }
        let meta: Option<Meta> = std::fs::read_to_string(path.with_extension("json"))
            .ok()
            .and_then(|text| serde_json::from_str(&text).ok());
        let modified = entry.metadata().and_then(|m| m.modified()).ok();
        let (original, title) = match meta {
            Some(m) => (m.original, m.title),
            None => (None, name.clone()),
        };
        files.push(RecoveredFile {
            file: path,
            original,
            title,
            modified,
        });
    }
    files
}

/// What one tick did, for the status bar and the repaint schedule.
#[derive(Debug, Default)]
pub struct TickReport {
    /// Recovery files written (or started, for a background write) this tick.
    pub written: usize,
    /// Recovery files removed because their design was saved or closed.
    pub removed: usize,
    pub errors: Vec<String>,
    /// Wake the UI after this long to write what is waiting; None: nothing is waiting.
    pub repaint_after: Option<Duration>,
}

#[derive(Default)]
struct TabRecord {
    /// The revision the recovery file on disk holds.
    written: Option<u64>,
    /// A background write of this revision.
    in_flight: Option<(u64, JoinHandle<io::Result<()>>)>,
}

/// This process's autosave session.
pub struct Autosave {
    config: AutosaveConfig,
    dir: PathBuf,
    /// Held locked until the process ends; that is what tells other processes we are alive.
    _lock: File,
    records: HashMap<u64, TabRecord>,
    /// When a design first had changes not yet in its recovery file.
    pending_since: Option<Instant>,
}

impl Autosave {
    /// Creates and locks this process's session folder under `config.root`.
    pub fn start(config: AutosaveConfig) -> io::Result<Self> {
        std::fs::create_dir_all(&config.root)?;
        let nanos = SystemTime::now()
            .duration_since(SystemTime::UNIX_EPOCH)
            .map_or(0, |d| d.as_nanos());
        let dir = config
            .root
            .join(format!("{SESSION_PREFIX}{}-{nanos}", std::process::id()));
        std::fs::create_dir(&dir)?;
        let mut lock = File::create(dir.join(LOCK_FILE))?;
        lock.try_lock().map_err(io::Error::from)?;
        // The pid is for people looking in the folder; the lock is what counts.
        writeln!(lock, "{}", std::process::id())?;
        Ok(Self {
            config,
            dir,
            _lock: lock,
            records: HashMap::new(),
            pending_since: None,
        })
    }

    pub fn config(&self) -> &AutosaveConfig {
        &self.config
    }

    /// This session's folder.
    pub fn dir(&self) -> &Path {
        &self.dir
    }

    pub fn design_file(&self, uid: u64) -> PathBuf {
        self.dir.join(format!("tab-{uid}.ron"))
    }

    fn meta_file(&self, uid: u64) -> PathBuf {
        self.dir.join(format!("tab-{uid}.json"))
    }

    /// Dead sessions' files, not this one's.
    pub fn orphans(&self) -> Orphans {
        find_orphans(&self.config.root, Some(&self.dir))
    }

    /// Looks at every open tab (`uid`, document): removes the files of saved and closed
    /// designs, and when due (the interval has passed since a change was first waiting, or
    /// `focus_lost`) writes every dirty design whose revision is not on disk yet.
    pub fn tick(
        &mut self,
        now: Instant,
        focus_lost: bool,
        tabs: &[(u64, &Document)],
    ) -> TickReport {
        let mut report = TickReport::default();
        self.collect_finished(&mut report);

        let live: HashSet<u64> = tabs.iter().map(|(uid, _)| *uid).collect();
        let closed: Vec<u64> = self
            .records
            .keys()
            .copied()
            .filter(|uid| !live.contains(uid))
            .collect();
        for uid in closed {
            self.remove(uid, &mut report);
            self.records.remove(&uid);
        }
        for (uid, doc) in tabs {
            let on_disk = self
                .records
                .get(uid)
                .is_some_and(|r| r.written.is_some() || r.in_flight.is_some());
            if !doc.is_dirty() && on_disk {
                self.remove(*uid, &mut report);
            }
        }

        let waiting: Vec<(u64, &Document)> = tabs
            .iter()
            .filter(|(uid, doc)| {
                let record = self.records.get(uid);
                doc.is_dirty()
                    && record
                        .is_none_or(|r| r.in_flight.is_none() && r.written != Some(doc.revision()))
            })
            .map(|(uid, doc)| (*uid, *doc))
            .collect();
        let in_flight = self.records.values().any(|r| r.in_flight.is_some());
        if waiting.is_empty() {
            self.pending_since = None;
            report.repaint_after = in_flight.then_some(IN_FLIGHT_POLL);
            return report;
        }
        let since = *self.pending_since.get_or_insert(now);
        let elapsed = now.saturating_duration_since(since);
        if !focus_lost && elapsed < self.config.interval {
            let mut wait = self.config.interval - elapsed;
            if in_flight {
                wait = wait.min(IN_FLIGHT_POLL);
            }
            report.repaint_after = Some(wait);
            return report;
        }
        self.pending_since = None;
        for (uid, doc) in waiting {
            match self.write(uid, doc) {
                Ok(()) => report.written += 1,
                Err(e) => report
                    .errors
                    .push(format!("autosave of {} failed: {e}", doc.title())),
            }
        }
        if self.records.values().any(|r| r.in_flight.is_some()) {
            report.repaint_after = Some(IN_FLIGHT_POLL);
        }
        report
    }

    /// Writes one tab's recovery file now: inline for a small design, on a thread for a big one.
    fn write(&mut self, uid: u64, doc: &Document) -> io::Result<()> {
        let meta = Meta {
            original: doc.path().map(Path::to_path_buf),
            title: doc.title(),
            revision: doc.revision(),
        };
        let meta_text = serde_json::to_string(&meta).map_err(io::Error::other)?;
        let meta_path = self.meta_file(uid);
        let design_path = self.design_file(uid);
        let design = doc.shared_design();
        let revision = doc.revision();
        let items = design.devices.len() + design.links.len();
        let job = move || write_pair(&meta_path, &meta_text, &design_path, &design);
        let record = self.records.entry(uid).or_default();
        if items > self.config.background_items {
            let handle = std::thread::Builder::new()
                .name("railyard-autosave".into())
                .spawn(job)?;
            record.in_flight = Some((revision, handle));
        } else {
            job()?;
            record.written = Some(revision);
        }
        Ok(())
    }

    /// Takes in the results of background writes that have finished.
    fn collect_finished(&mut self, report: &mut TickReport) {
        for record in self.records.values_mut() {
            if record
                .in_flight
                .as_ref()
                .is_some_and(|(_, h)| h.is_finished())
                && let Some((revision, handle)) = record.in_flight.take()
            {
                finish(record, revision, handle, report);
            }
        }
    }

    /// Waits for every background write (tests; shutdown).
    pub fn wait_for_writes(&mut self) -> Vec<String> {
        let mut report = TickReport::default();
        for record in self.records.values_mut() {
            if let Some((revision, handle)) = record.in_flight.take() {
                finish(record, revision, handle, &mut report);
            }
        }
        report.errors
    }

    /// Removes one tab's files, after any write of them still running (or it would land after).
    fn remove(&mut self, uid: u64, report: &mut TickReport) {
        let Some(record) = self.records.get_mut(&uid) else {
            return;
        };
        if let Some((_, handle)) = record.in_flight.take() {
            let _ = handle.join();
        }
        record.written = None;
        let mut removed = false;
        for path in [self.design_file(uid), self.meta_file(uid)] {
            match std::fs::remove_file(&path) {
                Ok(()) => removed = true,
                Err(e) if e.kind() == io::ErrorKind::NotFound => {}
                Err(e) => report
                    .errors
                    .push(format!("could not remove {}: {e}", path.display())),
            }
        }
        if removed {
            report.removed += 1;
        }
    }

    /// Takes over a recovered file for the tab now showing it (moved, not copied, so a crash
    /// right after recovering still leaves it on disk) at the tab's revision.
    pub fn adopt(&mut self, uid: u64, doc: &Document, recovered: &RecoveredFile) -> io::Result<()> {
        let meta = Meta {
            original: doc.path().map(Path::to_path_buf),
            title: doc.title(),
            revision: doc.revision(),
        };
        let meta_text = serde_json::to_string(&meta).map_err(io::Error::other)?;
        write_atomically(&self.meta_file(uid), meta_text.as_bytes())?;
        std::fs::rename(&recovered.file, self.design_file(uid))?;
        let _ = std::fs::remove_file(recovered.file.with_extension("json"));
        self.records.entry(uid).or_default().written = Some(doc.revision());
        Ok(())
    }

    /// Clean exit: waits for running writes, then removes the whole session.
    pub fn finish(mut self) -> io::Result<()> {
        self.wait_for_writes();
        std::fs::remove_dir_all(&self.dir)
    }
}

fn finish(
    record: &mut TabRecord,
    revision: u64,
    handle: JoinHandle<io::Result<()>>,
    report: &mut TickReport,
) {
    match handle.join() {
        Ok(Ok(())) => record.written = Some(revision),
        Ok(Err(e)) => report.errors.push(format!("autosave failed: {e}")),
        Err(_) => report
            .errors
            .push("autosave failed: the writer panicked".into()),
    }
}

/// The sidecar first, so that a design file never sits there without its origin.
fn write_pair(
    meta_path: &Path,
    meta: &str,
    design_path: &Path,
    design: &Arc<Design>,
) -> io::Result<()> {
    write_atomically(meta_path, meta.as_bytes())?;
    let text = design_to_string(design).map_err(io::Error::other)?;
    write_atomically(design_path, text.as_bytes())
}

/// The designer's side: turning autosave on, the per-frame tick, the recovery dialog.
impl super::RailyardApp {
    /// Turns autosave on with the folder and interval from the environment (the real
    /// binary; tests call `enable_autosave`). A failure is reported, not fatal.
    pub(super) fn start_autosave_from_env(&mut self) {
        let Some(config) = AutosaveConfig::from_env() else {
            self.status = "Autosave is off: no data folder for recovery files".into();
            return;
        };
        let root = config.root.clone();
        match self.enable_autosave(config) {
            Ok(0) => {}
            Ok(n) => eprintln!(
                "railyard: {n} design(s) with unsaved changes from a session that did not exit \
                 cleanly, in {}; offering recovery",
                root.display()
            ),
            Err(e) => {
                eprintln!("railyard: autosave is off: {}: {e}", root.display());
                self.status = format!("Autosave is off: {}: {e}", root.display());
            }
        }
    }

    /// Starts this process's autosave session and looks for work left by crashed ones;
    /// returns how many designs are offered for recovery.
    pub fn enable_autosave(&mut self, config: AutosaveConfig) -> io::Result<usize> {
        let autosave = Autosave::start(config)?;
        let orphans = autosave.orphans();
        let offered = orphans.files.len();
        self.recovery = (!orphans.is_empty()).then_some(orphans);
        self.autosave = Some(autosave);
        Ok(offered)
    }

    /// The running autosave session, if any.
    pub fn autosave(&self) -> Option<&Autosave> {
        self.autosave.as_ref()
    }

    pub fn autosave_mut(&mut self) -> Option<&mut Autosave> {
        self.autosave.as_mut()
    }

    /// The designs on offer in the recovery dialog.
    pub fn recovery_offer(&self) -> Option<&Orphans> {
        self.recovery.as_ref()
    }

    /// The recovery file of the active tab (written or not yet).
    pub fn active_recovery_file(&self) -> Option<PathBuf> {
        let uid = self.tabs[self.active].id;
        self.autosave.as_ref().map(|a| a.design_file(uid))
    }

    pub(super) fn drive_autosave(&mut self, ctx: &egui::Context) {
        let Some(autosave) = &mut self.autosave else {
            return;
        };
        let focused = ctx.input(|i| i.viewport().focused);
        let focus_lost = self.was_focused == Some(true) && focused == Some(false);
        if focused.is_some() {
            self.was_focused = focused;
        }
        let tabs: Vec<(u64, &Document)> = self.tabs.iter().map(|t| (t.id, &t.doc)).collect();
        let report = autosave.tick(Instant::now(), focus_lost, &tabs);
        // Only while something waits: an idle window with nothing unsaved asks for nothing.
        if let Some(wait) = report.repaint_after {
            ctx.request_repaint_after(wait);
        }
        if let Some(error) = report.errors.into_iter().next() {
            self.status = error;
        }
    }

    /// Clean exit: this session's recovery files go.
    pub(super) fn finish_autosave(&mut self) {
        if let Some(autosave) = self.autosave.take()
            && let Err(e) = autosave.finish()
        {
            eprintln!("railyard: could not remove the recovery files: {e}");
        }
    }

    /// Opens every offered design as an unsaved tab that remembers its file.
    pub fn recover_all(&mut self) {
        let Some(orphans) = self.recovery.take() else {
            return;
        };
        let mut recovered = 0;
        let mut problems = Vec::new();
        for file in &orphans.files {
            match crate::io::load_design(&file.file) {
                Ok(design) => {
                    self.push_tab(Document::recovered(design, file.original.clone()));
                    recovered += 1;
                    let tab = &self.tabs[self.active];
                    if let Some(autosave) = &mut self.autosave
                        && let Err(e) = autosave.adopt(tab.id, &tab.doc, file)
                    {
                        // The design is open and dirty: the next tick writes it afresh.
                        problems.push(format!("{}: {e}", file.file.display()));
                    }
                }
                Err(e) => problems.push(e.to_string()),
            }
        }
        if problems.is_empty() {
            if let Err(e) = orphans.discard() {
                self.status = format!("Recovered {recovered} design(s); clean-up failed: {e}");
                return;
            }
        } else {
            // Leave the old session on disk so nothing is lost; the banner says what failed.
            self.tabs[self.active].doc.banner = Some(format!(
                "Some recovery files did not open: {}",
                problems.join("; ")
            ));
        }
        self.status = format!("Recovered {recovered} design(s); they are unsaved");
    }

    /// Deletes the offered designs.
    pub fn discard_recovery(&mut self) {
        if let Some(orphans) = self.recovery.take() {
            self.status = match orphans.discard() {
                Ok(()) => format!("Discarded {} recovered design(s)", orphans.files.len()),
                Err(e) => format!("Could not discard the recovery files: {e}"),
            };
        }
    }

    pub(super) fn recovery_window(&mut self, ctx: &egui::Context) {
        let Some(orphans) = &self.recovery else {
            return;
        };
        #[derive(Clone, Copy)]
        enum Choice {
            Recover,
            Discard,
            Later,
        }
        let mut choice = None;
        let modal = egui::Modal::new(egui::Id::new("recovery-prompt")).show(ctx, |ui| {
            ui.heading("Recover unsaved work?");
            ui.label("railyard did not exit cleanly. These designs had unsaved changes:");
            for file in &orphans.files {
                let age = file
                    .modified
                    .and_then(|m| m.elapsed().ok())
                    .map(|d| format!(", {} ago", age_text(d)))
                    .unwrap_or_default();
                let origin = file
                    .original
                    .as_ref()
                    .map_or_else(|| "never saved".to_string(), |p| p.display().to_string());
                ui.label(format!("• {} ({origin}{age})", file.title));
            }
            ui.horizontal(|ui| {
                if ui.button("Recover").clicked() {
                    choice = Some(Choice::Recover);
                }
                if ui.button("Discard").clicked() {
                    choice = Some(Choice::Discard);
                }
                if ui
                    .button("Later")
                    .on_hover_text("Keep the files; ask again at the next start")
                    .clicked()
                {
                    choice = Some(Choice::Later);
                }
            });
        });
        if modal.should_close() && choice.is_none() {
            choice = Some(Choice::Later);
        }
        match choice {
            Some(Choice::Recover) => self.recover_all(),
            Some(Choice::Discard) => self.discard_recovery(),
            Some(Choice::Later) => self.recovery = None,
            None => {}
        }
    }
}

fn age_text(d: Duration) -> String {
    let s = d.as_secs();
    if s < 120 {
        format!("{s} s")
    } else if s < 7200 {
        format!("{} min", s / 60)
    } else if s < 2 * 86_400 {
        format!("{} h", s / 3600)
    } else {
        format!("{} days", s / 86_400)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn interval_from_text() {
        assert_eq!(parse_interval(None), DEFAULT_INTERVAL);
        assert_eq!(parse_interval(Some("2")), Duration::from_secs(2));
        assert_eq!(parse_interval(Some(" 0.5 ")), Duration::from_millis(500));
        for bad in ["0", "-3", "NaN", "inf", "soon", ""] {
            assert_eq!(parse_interval(Some(bad)), DEFAULT_INTERVAL, "{bad}");
        }
    }
}
