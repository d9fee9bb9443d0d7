//! The Calibrate… window through the accessibility tree: a log pasted in, Fit (run on a
//! background thread, with a spinner meanwhile), the fitted values shown, Apply emitting the
//! command that sets them (undoable); a fit made stale by an edit or a closed window is
//! dropped. No dialogs, no snapshots.

use egui::Vec2;
use egui_kittest::Harness;
use egui_kittest::kittest::Queryable;
use railyard::analysis::collective::{CollectiveQuery, Op, sweep};
use railyard::app::calibrate::CalibrateWindow;
use railyard::generate::{Template, TemplateSpec, generate};
use railyard::io::nccl_log::format_nccl_log;
use railyard::model::command::Command;
use railyard::model::{Bytes, Calibration, Catalog, Design, DeviceKind, LinkTech, PartId};
use std::time::{Duration, Instant};

struct State {
    window: CalibrateWindow,
    design: Design,
    catalog: Catalog,
    emitted: Vec<Command>,
}

/// 4 DGX H100 on rail-optimized InfiniBand, SHARP off, so IB limits large all-reduces.
fn four_dgx(catalog: &Catalog) -> Design {
    let mut spec = TemplateSpec::new(Template::RailOptimized);
    spec.nodes = Some(4);
    spec.node = Some(PartId::new("dgx-h100"));
    let mut design = generate(&spec, catalog).unwrap();
    for d in &mut design.devices {
        if let DeviceKind::Switch(s) = &mut d.kind {
            s.features.in_network_reduction = false;
        }
    }
    design
}

/// The log the model prints for `design` with InfiniBand at 0.75.
fn log_with_ib_at_075(design: &Design, catalog: &Catalog) -> String {
    let mut truth = design.clone();
    let mut cal = Calibration::default();
    cal.set(LinkTech::InfiniBand, Some(0.75), None);
    truth.calibration = Some(cal);
    let results = sweep(
        &truth,
        catalog,
        &CollectiveQuery::new(Op::AllReduce, Bytes(0)),
    )
    .unwrap();
    let rows: Vec<(Bytes, f64)> = results.iter().map(|r| (r.bytes, r.time_us)).collect();
    format_nccl_log(Op::AllReduce, results[0].gpus, &rows)
}

/// The window, open, with the four-DGX design and a log of it with InfiniBand at 0.75;
/// `floating` shows it as the app does (an egui::Window), else its contents fill the frame.
fn window_with_log(floating: bool) -> Harness<'static, State> {
    let catalog = Catalog::builtin();
    let design = four_dgx(&catalog);
    let text = log_with_ib_at_075(&design, &catalog);
    let state = State {
        window: CalibrateWindow::default(),
        design,
        catalog,
        emitted: Vec::new(),
    };
    let mut harness = Harness::builder()
        .with_size(Vec2::new(900.0, 1000.0))
        .build_ui_state(
            move |ui, s: &mut State| {
                let command = if floating {
                    s.window.show(ui.ctx(), &s.design, &s.catalog)
                } else {
                    s.window.ui(ui, &s.design, &s.catalog)
                };
                s.emitted.extend(command);
            },
            state,
        );
    harness.state_mut().window.open = true;
    harness.state_mut().window.text = text;
    harness.run();
    harness
}

/// Steps frames until the background fit is in (polling, bounded), then lets the UI settle:
/// `run` fails if anything still asks for repaints, so this also checks that the window
/// idles once the spinner is gone.
fn run_until_fitted(harness: &mut Harness<'_, State>) {
    let start = Instant::now();
    harness.step();
    while harness.state().window.is_fitting() {
        assert!(
            start.elapsed() < Duration::from_secs(60),
            "the fit did not finish"
        );
        std::thread::sleep(Duration::from_millis(2));
        harness.step();
    }
    harness.run();
}

#[test]
fn paste_fit_and_apply() {
    let mut harness = window_with_log(false);
    harness.get_by_label("Fit").click();
    harness.step();
    // The click started the fit on its own thread: the frame came back with a spinner (a
    // result is only taken at the start of a frame, so this one has none yet).
    assert!(harness.state().window.is_fitting());
    harness.get_by_label("Fitting…");
    run_until_fitted(&mut harness);
    assert!(!harness.state().window.is_fitting());
    harness.get_by_label_contains("InfiniBand efficiency: 0.940 → 0.750");
    harness.get_by_label("Apply to design").click();
    harness.run();
    let s = harness.state_mut();
    assert_eq!(s.emitted.len(), 1);
    let command = s.emitted.remove(0);
    let mut design = s.design.clone();
    let undo = command.apply(&mut design).unwrap();
    let e = design
        .calibration
        .as_ref()
        .and_then(|c| c.efficiency(LinkTech::InfiniBand))
        .unwrap();
    assert!((e - 0.75).abs() < 0.002, "{e}");
    undo.apply(&mut design).unwrap();
    assert_eq!(design.calibration, None);
}

#[test]
fn a_fit_of_a_design_edited_meanwhile_is_dropped() {
    let mut harness = window_with_log(false);
    harness.get_by_label("Fit").click();
    harness.step();
    assert!(harness.state().window.is_fitting());
    // An edit lands before the result is taken (results are only taken in a frame).
    harness.state_mut().design.name.push_str(" (edited)");
    run_until_fitted(&mut harness);
    match harness.state().window.result() {
        Some(Err(message)) => assert!(message.contains("changed while fitting"), "{message}"),
        other => panic!("a stale fit must not be shown: {other:?}"),
    }
    assert!(harness.query_by_label_contains("efficiency:").is_none());
    assert!(harness.query_by_label("Apply to design").is_none());
}

#[test]
fn closing_the_window_drops_the_fit() {
    let mut harness = window_with_log(true);
    harness.get_by_label("Fit").click();
    harness.step();
    assert!(harness.state().window.is_fitting());
    harness.state_mut().window.open = false;
    harness.step();
    assert!(!harness.state().window.is_fitting());
    // Nothing repaints for it any more, and no result turns up later.
    harness.run();
    assert!(harness.state().window.result().is_none());
    harness.state_mut().window.open = true;
    harness.run();
    assert!(harness.state().window.result().is_none());
    assert!(harness.query_by_label("Apply to design").is_none());
}

/// A log that does not name its test: the window asks for the collective in its own terms
/// (the menu), not the CLI's `--op`.
#[test]
fn a_log_without_its_test_asks_for_the_collective_menu() {
    let mut harness = window_with_log(false);
    let text = harness
        .state()
        .window
        .text
        .replace("# Collective test starting: all_reduce_perf\n", "");
    harness.state_mut().window.text = text;
    harness.run();
    harness.get_by_label("Fit").click();
    harness.step();
    run_until_fitted(&mut harness);
    harness.get_by_label_contains("choose it in the collective menu");
    assert!(harness.query_by_label_contains("--op").is_none());
}
