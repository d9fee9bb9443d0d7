use egui::Vec2;
use egui_kittest::Harness;
use egui_kittest::kittest::Queryable;
use railyard::app::{Prefs, RailyardApp};
use railyard::model::Catalog;
use std::time::{Duration, Instant};

fn shot(h: &mut Harness<'_, RailyardApp>, name: &str) {
    let start = Instant::now();
    while !h.state().analysis_is_current() && start.elapsed() < Duration::from_secs(30) {
        std::thread::sleep(Duration::from_millis(5));
        h.step();
    }
    h.run_ok();
    let img = h.render().expect("render");
    img.save(format!("/tmp/qa/{name}.png")).unwrap();
}

#[test]
fn qa() {
    let app = RailyardApp::new(Catalog::builtin(), Prefs::default());
    let mut h = Harness::builder()
        .with_size(Vec2::new(1440.0, 900.0))
        .with_max_steps(50)
        .wgpu()
        .build_eframe(move |_| app);
    h.state_mut()
        .open_path(std::path::Path::new("presets/hgx-h100-x4-roce.ron"));
    h.run_ok();
    let node = h
        .state()
        .document()
        .design()
        .devices
        .iter()
        .find(|d| d.kind.as_node().is_some())
        .unwrap()
        .id;
    h.state_mut()
        .canvas_state_mut()
        .selection
        .devices
        .insert(node);
    shot(&mut h, "node");
    h.state_mut().canvas_state_mut().selection.clear();
    let sw = h
        .state()
        .document()
        .design()
        .devices
        .iter()
        .find(|d| d.kind.as_switch().is_some())
        .unwrap()
        .id;
    h.state_mut()
        .canvas_state_mut()
        .selection
        .devices
        .insert(sw);
    shot(&mut h, "switch");
    h.state_mut().canvas_state_mut().selection.clear();
    let l = h.state().document().design().links[0].id;
    h.state_mut().canvas_state_mut().selection.links.insert(l);
    shot(&mut h, "link");
    h.get_by_label("Design").click();
    h.run_ok();
    h.get_by_label("Generate…").click();
    h.run_ok();
    shot(&mut h, "generate");
    h.key_press(egui::Key::Escape);
    h.run_ok();
}
