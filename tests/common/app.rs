//! The designer window under egui_kittest: a harness, menus by label, and waiting for the
//! background threads, which wake the UI themselves while a test has to wait for them.

use egui::Vec2;
use egui::accesskit::Role;
use egui_kittest::Harness;
use egui_kittest::kittest::{NodeT, Queryable};
use railyard::app::files::{DialogAnswer, ScriptedDialogs};
use railyard::app::{Prefs, RailyardApp};
use railyard::model::Catalog;
use std::path::PathBuf;
use std::time::{Duration, Instant};

pub const WINDOW: Vec2 = Vec2::new(1440.0, 900.0);

pub fn app() -> RailyardApp {
    RailyardApp::new(Catalog::builtin(), Prefs::default())
}

/// The app, with a file dialog that picks `path` once.
pub fn app_picking(path: PathBuf) -> RailyardApp {
    let mut app = app();
    app.set_dialogs(Box::new(ScriptedDialogs {
        answers: [DialogAnswer::Picked(path)].into(),
    }));
    app
}

pub fn harness(app: RailyardApp) -> Harness<'static, RailyardApp> {
    Harness::builder()
        .with_size(WINDOW)
        // A real frame or two for layout, a few more for popups: an app that keeps asking
        // for repaints still fails `run()` quickly.
        .with_max_steps(12)
        .build_eframe(move |_cc| app)
}

/// Steps until `done` holds, then lets the window settle.
pub fn wait_until(
    harness: &mut Harness<'_, RailyardApp>,
    what: &str,
    done: impl Fn(&RailyardApp) -> bool,
) {
    // Input queued by a click lands in the next frame: until then the old state may still
    // look done (an analysis current for settings the click is about to change). One step,
    // not `run()`: a spinner for the work being waited for repaints every frame.
    harness.step();
    let start = Instant::now();
    while !done(harness.state()) {
        assert!(
            start.elapsed() < Duration::from_secs(120),
            "{what} never came"
        );
        std::thread::sleep(Duration::from_millis(5));
        harness.step();
    }
    // A background thread sends its result, then wakes the UI: that wake-up may still be on
    // its way. Let it land before settling, or it shows up as a repaint of an idle window.
    std::thread::sleep(Duration::from_millis(20));
    harness.run();
}

/// Runs frames until the sidebar's numbers belong to the current revision.
pub fn wait_for_analysis(harness: &mut Harness<'_, RailyardApp>) {
    wait_until(harness, "the analysis", RailyardApp::analysis_is_current);
}

pub fn click_menu(harness: &mut Harness<'_, RailyardApp>, menu: &str, item: &str) {
    // The menu bar's button: another widget may carry the same word ("Design").
    harness
        .query_all_by_label(menu)
        .find(|n| n.accesskit_node().role() == Role::Button)
        .unwrap_or_else(|| panic!("menu {menu}"))
        .click();
    harness.run();
    // A submenu button's label carries its arrow too (and the status bar mentions the menu).
    harness
        .query_all_by_label_contains(item)
        .find(|n| n.accesskit_node().role() == Role::Button)
        .unwrap_or_else(|| panic!("menu item {item}"))
        .click();
    // Not `run()`: an item may start background work whose spinner repaints every frame.
    harness.run_ok();
}

/// File > Open preset > `title`, and its analysis.
pub fn open_preset(harness: &mut Harness<'_, RailyardApp>, title: &str) {
    click_menu(harness, "File", "Open preset");
    harness.get_by_label(title).click();
    harness.run_ok();
    wait_for_analysis(harness);
}

/// The window's close button, as the window system sends it.
pub fn request_close(harness: &mut Harness<'_, RailyardApp>) {
    harness
        .input_mut()
        .viewports
        .entry(egui::ViewportId::ROOT)
        .or_default()
        .events
        .push(egui::ViewportEvent::Close);
}

/// What the last frame asked of the main window (close, cancel close, title...).
pub fn root_commands(harness: &Harness<'_, RailyardApp>) -> Vec<egui::ViewportCommand> {
    harness
        .output()
        .viewport_output
        .get(&egui::ViewportId::ROOT)
        .map(|v| v.commands.clone())
        .unwrap_or_default()
}

/// Clicks the button labelled `label` (another widget may carry the same text).
pub fn click_button(harness: &mut Harness<'_, RailyardApp>, label: &str) {
    harness
        .query_all_by_label(label)
        .find(|n| n.accesskit_node().role() == Role::Button)
        .unwrap_or_else(|| panic!("the {label} button"))
        .click();
}
