//! Crash safety: autosave to recovery files, the offer to recover at the next start, and a
//! failed save that keeps the design open and unsaved.
//!
//! The autosave logic is driven with a hand-held clock (`Autosave::tick(now, ..)`); the
//! recovery dialog and the failed save through egui_kittest; and one test kills the real
//! binary under Xvfb mid-edit (edits typed with `xdotool`), restarts it and recovers.
//! That test needs the packages `xvfb` and `xdotool`; without them it says so and passes,
//! unless `CI` is set.

mod common;

use common::app::{app, app_picking, harness};
use common::xvfb::{Reaped, start_xvfb, tool_available};
use egui::{Key, Modifiers};
use egui_kittest::kittest::Queryable;
use railyard::app::autosave::{Autosave, AutosaveConfig, find_orphans};
use railyard::app::document::{Document, nudge_command};
use railyard::generate::{Template, TemplateSpec, generate};
use railyard::io::{load_design, save_design};
use railyard::model::{Catalog, Design, DeviceId, PartId};
use std::collections::BTreeSet;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

/// Two 8-GPU nodes on one switch: small, and every device has a position to nudge.
fn star() -> Design {
    let mut spec = TemplateSpec::new(Template::Star);
    spec.nodes = Some(2);
    generate(&spec, &Catalog::builtin()).expect("a two-node star")
}

fn config(root: &Path, interval: Duration) -> AutosaveConfig {
    let mut c = AutosaveConfig::new(root.to_path_buf());
    c.interval = interval;
    c
}

fn nudge(doc: &mut Document, id: DeviceId, dx: f32) {
    let command = nudge_command(doc.design(), &BTreeSet::from([id]), (dx, 0.0)).expect("a move");
    doc.apply(command).expect("applies");
}

fn x_of(design: &Design, id: DeviceId) -> f32 {
    design.device(id).expect("device").pos.x
}

#[test]
fn autosave_waits_for_the_interval_and_writes_each_revision_once() {
    let root = tempfile::tempdir().expect("temp dir");
    let original = root.path().join("star.ron");
    save_design(&original, &star()).expect("writes");
    let mut autosave =
        Autosave::start(config(root.path(), Duration::from_secs(30))).expect("starts");
    let mut doc = Document::open(&original).expect("opens");
    let file = autosave.design_file(7);
    let t0 = Instant::now();

    // Nothing unsaved: nothing written, and no wake-up asked for.
    let r = autosave.tick(t0, false, &[(7, &doc)]);
    assert_eq!((r.written, r.repaint_after), (0, None));

    let id = doc.design().devices[0].id;
    let x0 = x_of(doc.design(), id);
    nudge(&mut doc, id, 10.0);
    let r = autosave.tick(t0, false, &[(7, &doc)]);
    assert_eq!(r.written, 0, "not before the interval");
    assert_eq!(r.repaint_after, Some(Duration::from_secs(30)));
    let r = autosave.tick(t0 + Duration::from_secs(12), false, &[(7, &doc)]);
    assert_eq!(r.repaint_after, Some(Duration::from_secs(18)));
    assert!(!file.exists());

    let r = autosave.tick(t0 + Duration::from_secs(30), false, &[(7, &doc)]);
    assert_eq!(r.written, 1);
    assert_eq!(r.repaint_after, None, "written: nothing left to wait for");
    assert!(r.errors.is_empty(), "{:?}", r.errors);
    let copy = load_design(&file).expect("the recovery file is a design file");
    assert_eq!(x_of(&copy, id), x0 + 10.0);

    // The same revision is not written again, however long it waits.
    let r = autosave.tick(t0 + Duration::from_secs(300), false, &[(7, &doc)]);
    assert_eq!((r.written, r.repaint_after), (0, None));

    // Losing focus writes a new revision at once.
    nudge(&mut doc, id, 10.0);
    let t1 = t0 + Duration::from_secs(301);
    assert_eq!(autosave.tick(t1, false, &[(7, &doc)]).written, 0);
    assert_eq!(
        autosave
            .tick(t1 + Duration::from_secs(1), true, &[(7, &doc)])
            .written,
        1
    );
    assert_eq!(x_of(&load_design(&file).expect("loads"), id), x0 + 20.0);

    // The sidecar remembers where the design lives.
    let orphans_seen_by_others = find_orphans(root.path(), None);
    assert!(
        orphans_seen_by_others.is_empty(),
        "a live session is never offered: {orphans_seen_by_others:?}"
    );
}

#[test]
fn saving_undoing_to_saved_closing_and_exiting_remove_the_files() {
    let root = tempfile::tempdir().expect("temp dir");
    let original = root.path().join("star.ron");
    save_design(&original, &star()).expect("writes");
    let mut autosave =
        Autosave::start(config(root.path(), Duration::from_secs(1))).expect("starts");
    let session = autosave.dir().to_path_buf();
    let mut a = Document::open(&original).expect("opens");
    let mut b = Document::recovered(star(), None);
    let id = a.design().devices[0].id;
    nudge(&mut a, id, 10.0);
    let t0 = Instant::now();
    autosave.tick(t0, false, &[(1, &a), (2, &b)]);
    let r = autosave.tick(t0 + Duration::from_secs(1), false, &[(1, &a), (2, &b)]);
    assert_eq!(r.written, 2);
    let (fa, fb) = (autosave.design_file(1), autosave.design_file(2));
    assert!(fa.exists() && fb.exists());

    // Undo back to the state on disk: clean again, so its recovery file goes.
    a.undo();
    assert!(!a.is_dirty());
    let r = autosave.tick(t0 + Duration::from_secs(2), false, &[(1, &a), (2, &b)]);
    assert_eq!(r.removed, 1);
    assert!(!fa.exists() && fb.exists());

    // Saving removes it too.
    b.save_to(&root.path().join("b.ron")).expect("saves");
    nudge(&mut a, id, 10.0);
    let r = autosave.tick(t0 + Duration::from_secs(3), false, &[(1, &a), (2, &b)]);
    assert_eq!((r.removed, r.written), (1, 0));
    assert!(!fb.exists());
    let r = autosave.tick(t0 + Duration::from_secs(4), false, &[(1, &a), (2, &b)]);
    assert_eq!(r.written, 1);
    assert!(fa.exists());

    // Closing the tab removes its file.
    let r = autosave.tick(t0 + Duration::from_secs(5), false, &[]);
    assert_eq!(r.removed, 1);
    assert!(!fa.exists());

    // A clean exit removes the session folder and leaves nothing to recover.
    nudge(&mut a, id, 10.0);
    autosave.tick(t0 + Duration::from_secs(6), true, &[(1, &a)]);
    assert!(autosave.design_file(1).exists());
    autosave.finish().expect("cleans up");
    assert!(!session.exists());
    assert!(find_orphans(root.path(), None).is_empty());
}

#[test]
fn a_big_design_is_written_off_the_ui_thread_and_waited_for_before_removal() {
    let root = tempfile::tempdir().expect("temp dir");
    let mut c = config(root.path(), Duration::from_secs(1));
    c.background_items = 0;
    let mut autosave = Autosave::start(c).expect("starts");
    let mut doc = Document::recovered(star(), None);
    let id = doc.design().devices[0].id;
    nudge(&mut doc, id, 5.0);
    let t0 = Instant::now();
    let r = autosave.tick(t0, true, &[(3, &doc)]);
    assert_eq!(r.written, 1);
    assert!(
        r.repaint_after.is_some(),
        "the UI is woken to collect the background write"
    );
    assert!(autosave.wait_for_writes().is_empty());
    let copy = load_design(&autosave.design_file(3)).expect("written");
    assert_eq!(x_of(&copy, id), x_of(doc.design(), id));
    // Written once for this revision, then closing removes it.
    let r = autosave.tick(t0 + Duration::from_secs(5), false, &[(3, &doc)]);
    assert_eq!(r.written, 0);
    let r = autosave.tick(t0 + Duration::from_secs(6), false, &[]);
    assert_eq!(r.removed, 1);
    assert!(!autosave.design_file(3).exists());
}

#[test]
fn a_failed_autosave_is_reported() {
    let root = tempfile::tempdir().expect("temp dir");
    let mut autosave =
        Autosave::start(config(root.path(), Duration::from_secs(1))).expect("starts");
    // The session folder vanishes (someone cleaned up by hand): the write cannot land.
    std::fs::remove_dir_all(autosave.dir()).expect("removes");
    let doc = Document::recovered(star(), None);
    let r = autosave.tick(Instant::now(), true, &[(1, &doc)]);
    assert_eq!(r.written, 0);
    assert_eq!(r.errors.len(), 1, "{:?}", r.errors);
    assert!(r.errors[0].contains("autosave of"), "{}", r.errors[0]);
}

/// The test that starts processes runs alone (`write`); the tests that end a session by
/// dropping it in this process hold `read` while they count on its lock being free. A child
/// holds copies of this process's open files from fork to exec, locks included, so a session
/// dropped in that moment still reads as live.
static SPAWNING: std::sync::RwLock<()> = std::sync::RwLock::new(());

fn no_spawning() -> std::sync::RwLockReadGuard<'static, ()> {
    SPAWNING
        .read()
        .unwrap_or_else(std::sync::PoisonError::into_inner)
}

/// A session whose process died: its files stay, its lock is free.
fn crashed_session(root: &Path, original: Option<&Path>) -> (PathBuf, f32) {
    let mut autosave = Autosave::start(config(root, Duration::from_secs(1))).expect("starts");
    let mut doc = match original {
        Some(path) => Document::open(path).expect("opens"),
        None => Document::recovered(star(), None),
    };
    let id = doc.design().devices[0].id;
    nudge(&mut doc, id, 30.0);
    let r = autosave.tick(Instant::now(), true, &[(1, &doc)]);
    assert_eq!(r.written, 1, "{:?}", r.errors);
    let session = autosave.dir().to_path_buf();
    // Dropped without `finish`: what a crash leaves (the OS releases the lock).
    drop(autosave);
    (session, x_of(doc.design(), id))
}

/// Checks the app offers the recovery dialog for `root`, clicks Recover, and checks the tab.
fn recover_through_the_dialog(root: &Path, original: Option<&Path>, expected_x: f32) {
    let mut app = app();
    let offered = app
        .enable_autosave(config(root, Duration::from_secs(30)))
        .expect("autosave starts");
    assert_eq!(offered, 1);
    let old_sessions = app.recovery_offer().expect("an offer").sessions.clone();
    let mut harness = harness(app);
    harness.run();
    harness.get_by_label("Recover unsaved work?");
    let listed = original.map_or_else(|| "never saved".to_string(), |p| p.display().to_string());
    harness.get_by_label_contains(&listed);
    harness.get_by_label("Recover").click();
    harness.run();
    assert!(harness.query_by_label("Recover unsaved work?").is_none());

    let state = harness.state();
    assert_eq!(state.tab_count(), 1, "the empty start tab gave way");
    let doc = state.document();
    assert!(doc.is_dirty(), "recovered work is unsaved");
    assert_eq!(doc.path(), original, "the original file is remembered");
    let id = doc.design().devices[0].id;
    assert_eq!(x_of(doc.design(), id), expected_x);
    // Moved into this session, so a second crash still leaves it; the dead session is gone.
    let adopted = state.active_recovery_file().expect("autosave is on");
    assert_eq!(x_of(&load_design(&adopted).expect("loads"), id), expected_x);
    for dir in old_sessions {
        assert!(!dir.exists(), "{} left behind", dir.display());
    }
    assert!(find_orphans(root, state.autosave().map(Autosave::dir)).is_empty());
}

#[test]
fn the_next_start_offers_recovery_and_recovers_with_the_path() {
    let _calm = no_spawning();
    let root = tempfile::tempdir().expect("temp dir");
    let original = root.path().join("star.ron");
    save_design(&original, &star()).expect("writes");
    let (_, x) = crashed_session(root.path(), Some(&original));
    recover_through_the_dialog(root.path(), Some(&original), x);
}

#[test]
fn discard_deletes_the_recovery_files() {
    let _calm = no_spawning();
    let root = tempfile::tempdir().expect("temp dir");
    let (session, _) = crashed_session(root.path(), None);
    let mut app = app();
    assert_eq!(
        app.enable_autosave(config(root.path(), Duration::from_secs(30)))
            .expect("starts"),
        1
    );
    let mut harness = harness(app);
    harness.run();
    harness.get_by_label_contains("never saved");
    harness.get_by_label("Discard").click();
    harness.run();
    assert!(!session.exists());
    assert_eq!(harness.state().tab_count(), 1);
    assert!(harness.state().document().design().devices.is_empty());
}

/// A path no one can write to, even root: a folder where a file is, or a read-only folder
/// when permissions are enforced (they are not for root, who runs CI containers).
fn unwritable_target(dir: &Path) -> PathBuf {
    #[cfg(unix)]
    {
        use std::os::unix::fs::PermissionsExt;
        let ro = dir.join("read-only");
        std::fs::create_dir(&ro).expect("mkdir");
        std::fs::set_permissions(&ro, std::fs::Permissions::from_mode(0o555)).expect("chmod");
        if std::fs::write(ro.join("probe"), "x").is_err() {
            return ro.join("design.ron");
        }
        println!("permissions are not enforced (root?): saving under a plain file instead");
    }
    let plain = dir.join("not-a-folder");
    std::fs::write(&plain, "x").expect("writes");
    plain.join("design.ron")
}

#[test]
fn a_failed_save_shows_path_and_reason_and_keeps_the_design_unsaved() {
    let dir = tempfile::tempdir().expect("temp dir");
    let target = unwritable_target(dir.path());
    let mut harness = harness(app_picking(target.clone()));
    harness.state_mut().add_part(&PartId::new("qm9700"));
    harness.run();
    harness.key_press_modifiers(Modifiers::COMMAND | Modifiers::SHIFT, Key::S);
    harness.run();
    let doc = harness.state().document();
    let banner = doc.banner.clone().expect("a banner");
    assert!(
        banner.contains(&target.display().to_string()),
        "names the path: {banner}"
    );
    // In plain words, without the system's error number.
    let reason = railyard::io::plain_io(&std::fs::File::create(&target).expect_err("unwritable"));
    assert!(!banner.contains("os error"), "{banner}");
    assert!(
        banner.contains(&reason),
        "gives the reason ({reason}): {banner}"
    );
    assert!(doc.is_dirty(), "still unsaved");
    assert!(
        doc.path().is_none(),
        "not pretending to live at the failed path"
    );
    assert_eq!(doc.design().devices.len(), 1, "the design stays open");
    assert!(!target.exists());
    harness.get_by_label_contains("could not save");
    assert!(
        harness.query_all_by_label("Untitled •").next().is_some(),
        "the tab is marked unsaved"
    );
}

// ---- The real binary, killed mid-edit under Xvfb. ----

fn wait_until(timeout: Duration, what: &str, mut ready: impl FnMut() -> bool) {
    let start = Instant::now();
    while !ready() {
        assert!(start.elapsed() < timeout, "timed out waiting for {what}");
        std::thread::sleep(Duration::from_millis(100));
    }
}

fn railyard(display: u32, data: &Path, recovery: &Path, args: &[&Path]) -> Command {
    let mut command = Command::new(env!("CARGO_BIN_EXE_railyard"));
    command
        .args(args)
        .env("DISPLAY", format!(":{display}"))
        .env_remove("WAYLAND_DISPLAY")
        .env_remove("RAILYARD_EXIT_AFTER_FIRST_FRAME")
        .env("XDG_DATA_HOME", data)
        .env("XDG_CONFIG_HOME", data)
        .env("RAILYARD_RECOVERY_DIR", recovery)
        .env("RAILYARD_AUTOSAVE_SECS", "1")
        .stdout(Stdio::null())
        .stderr(Stdio::piped());
    command
}

fn xdotool(display: u32, args: &[&str]) -> Option<String> {
    let out = Command::new("xdotool")
        .args(args)
        .env("DISPLAY", format!(":{display}"))
        .output()
        .ok()?;
    out.status
        .success()
        .then(|| String::from_utf8_lossy(&out.stdout).trim().to_string())
}

fn recovery_files(root: &Path) -> Vec<PathBuf> {
    let mut found = Vec::new();
    for session in std::fs::read_dir(root).into_iter().flatten().flatten() {
        for f in std::fs::read_dir(session.path())
            .into_iter()
            .flatten()
            .flatten()
        {
            let p = f.path();
            if p.extension().is_some_and(|e| e == "ron") {
                found.push(p);
            }
        }
    }
    found
}

#[test]
fn killing_the_real_process_mid_edit_then_restarting_recovers_the_edit() {
    let _alone = SPAWNING
        .write()
        .unwrap_or_else(std::sync::PoisonError::into_inner);
    if !(tool_available("Xvfb", "-help") && tool_available("xdotool", "version")) {
        assert!(
            std::env::var_os("CI").is_none(),
            "Xvfb or xdotool is missing, and CI is set: install `xvfb` and `xdotool`"
        );
        println!("skipping: needs Xvfb and xdotool (apt-get install xvfb xdotool)");
        return;
    }
    let dir = tempfile::tempdir().expect("temp dir");
    let (data, recovery) = (dir.path().join("data"), dir.path().join("recovery"));
    let original = dir.path().join("star.ron");
    let design = star();
    save_design(&original, &design).expect("writes");
    let first = design.devices[0].id;
    let x0 = x_of(&design, first);

    let (_xvfb, display) = start_xvfb(200..300);
    let mut app = Reaped(
        railyard(display, &data, &recovery, &[&original])
            .spawn()
            .expect("railyard starts"),
    );
    // The window, by its title, then keyboard focus on it (there is no window manager).
    let mut window = String::new();
    wait_until(Duration::from_secs(120), "the railyard window", || {
        // A process that died before showing its window says why on stderr.
        if let Ok(Some(status)) = app.0.try_wait() {
            let mut said = String::new();
            if let Some(mut err) = app.0.stderr.take() {
                let _ = std::io::Read::read_to_string(&mut err, &mut said);
            }
            panic!("railyard exited ({status}) before its window showed:\n{said}");
        }
        if let Some(out) = xdotool(display, &["search", "--name", "star.ron"]) {
            window = out.lines().next().unwrap_or("").to_string();
        }
        !window.is_empty()
    });
    // Select everything and nudge it right: one edit, as a person would type it. Repeated
    // until the recovery file shows up, in case the first keys arrive before the window
    // takes them (each nudge is 10 px; the count is read from the file).
    let start = Instant::now();
    while recovery_files(&recovery).is_empty() {
        assert!(
            start.elapsed() < Duration::from_secs(90),
            "no recovery file appeared"
        );
        let _ = xdotool(display, &["windowfocus", &window]);
        let _ = xdotool(display, &["mousemove", "--window", &window, "640", "400"]);
        let _ = xdotool(display, &["key", "--clearmodifiers", "ctrl+a", "Right"]);
        std::thread::sleep(Duration::from_millis(1500));
    }
    // Let the write settle (it is atomic: the file is whole or absent), then crash.
    std::thread::sleep(Duration::from_millis(300));
    let _ = app.0.kill(); // SIGKILL: no exit handlers run
    let _ = app.0.wait();
    drop(app);

    let files = recovery_files(&recovery);
    assert_eq!(files.len(), 1, "{files:?}");
    let copy = load_design(&files[0]).expect("the recovery file loads");
    let moved = x_of(&copy, first) - x0;
    assert!(
        moved >= 10.0 && moved % 10.0 == 0.0,
        "the edit is in the recovery file: moved by {moved}"
    );
    // Every device moved together (Ctrl+A selected them all).
    for d in &design.devices {
        assert_eq!(x_of(&copy, d.id) - d.pos.x, moved, "{}", d.name);
    }
    assert_eq!(
        load_design(&original).expect("loads"),
        design,
        "original untouched"
    );

    // Restart: the new process finds the dead session and offers it (and exits cleanly
    // after one frame without deciding, so the files stay).
    let out = railyard(display, &data, &recovery, &[])
        .env("RAILYARD_EXIT_AFTER_FIRST_FRAME", "1")
        .output()
        .expect("railyard runs again");
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "{stderr}");
    assert!(
        stderr.contains("1 design(s) with unsaved changes") && stderr.contains("offering recovery"),
        "no recovery offer; stderr:\n{stderr}"
    );
    assert_eq!(recovery_files(&recovery), files, "undecided: still there");

    // The dialog of that start, recovering the killed process's file.
    recover_through_the_dialog(&recovery, Some(&original), x0 + moved);
}
