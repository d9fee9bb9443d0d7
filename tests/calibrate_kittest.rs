//! The Calibrate… window through the accessibility tree: a log pasted in, Fit, the fitted
//! values shown, Apply emitting the command that sets them (undoable). No dialogs, no
//! snapshots.

use egui::Vec2;
use egui_kittest::Harness;
use egui_kittest::kittest::Queryable;
use railyard::analysis::collective::{CollectiveQuery, Op, sweep};
use railyard::app::calibrate::CalibrateWindow;
use railyard::generate::{Template, TemplateSpec, generate};
use railyard::io::nccl_log::format_nccl_log;
use railyard::model::command::Command;
use railyard::model::{Bytes, Calibration, Catalog, Design, DeviceKind, LinkTech, PartId};

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

#[test]
fn paste_fit_and_apply() {
    let catalog = Catalog::builtin();
    let design = four_dgx(&catalog);
    // The log the model prints with InfiniBand at 0.75.
    let mut truth = design.clone();
    let mut cal = Calibration::default();
    cal.set(LinkTech::InfiniBand, Some(0.75), None);
    truth.calibration = Some(cal);
    let results = sweep(
        &truth,
        &catalog,
        &CollectiveQuery::new(Op::AllReduce, Bytes(0)),
    )
    .unwrap();
    let rows: Vec<(Bytes, f64)> = results.iter().map(|r| (r.bytes, r.time_us)).collect();
    let state = State {
        window: CalibrateWindow::default(),
        design,
        catalog,
        emitted: Vec::new(),
    };
    let mut harness = Harness::builder()
        .with_size(Vec2::new(900.0, 1000.0))
        .build_ui_state(
            |ui, s: &mut State| {
                if let Some(c) = s.window.ui(ui, &s.design, &s.catalog) {
                    s.emitted.push(c);
                }
            },
            state,
        );
    let text = format_nccl_log(Op::AllReduce, results[0].gpus, &rows);
    harness.state_mut().window.open = true;
    harness.state_mut().window.text = text;
    harness.run();
    harness.get_by_label("Fit").click();
    harness.run();
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
