//! The Check cabling… window through the accessibility tree: the sample listing (the SuperPOD
//! unit with four faults, `docs/check-cabling.md`) checked against the preset, its faults
//! listed; hovering one lights its drawn links for the canvas, clicking selects them and
//! their devices.

use egui::Vec2;
use egui_kittest::Harness;
use egui_kittest::kittest::Queryable;
use railyard::app::cabling::CablingWindow;
use railyard::io::load_design;
use railyard::model::{Catalog, Design, DeviceId, LinkId};
use std::path::PathBuf;

struct State {
    window: CablingWindow,
    design: Design,
    catalog: Catalog,
    selected: Option<(Vec<DeviceId>, Vec<LinkId>)>,
}

fn root() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
}

fn window() -> Harness<'static, State> {
    let state = State {
        window: CablingWindow::default(),
        design: load_design(&root().join("presets/dgx-h100-superpod-su.ron")).expect("loads"),
        catalog: Catalog::builtin(),
        selected: None,
    };
    let mut harness = Harness::builder()
        .with_size(Vec2::new(900.0, 1000.0))
        .build_ui_state(
            |ui, s: &mut State| {
                let outcome = s.window.ui(ui, &s.design, &s.catalog);
                if outcome.select.is_some() {
                    s.selected = outcome.select;
                }
            },
            state,
        );
    harness.state_mut().window.open = true;
    harness.state_mut().window.path = root()
        .join("tests/data/ibnetdiscover/superpod-su-as-built.txt")
        .display()
        .to_string();
    harness.run();
    harness
}

#[test]
fn check_lists_the_faults_and_hover_and_click_point_at_them() {
    let mut harness = window();
    harness.get_by_label("Check").click();
    harness.run();
    harness.get_by_label_contains("512 cables found, 508 as drawn");
    let missing =
        harness.get_by_label_contains("node-20:nic5 <-> leaf-r5:p19 is drawn but not cabled");
    missing.hover();
    harness.run();
    // node-20's NIC 5 cable is link 157 of the preset.
    assert_eq!(harness.state().window.hovered_links(), &[LinkId(157)]);
    harness
        .get_by_label_contains(
            "node-03:nic0 <-> leaf-r0:p2 and node-03:nic1 <-> leaf-r1:p2 are swapped",
        )
        .click();
    harness.run();
    let (devices, links) = harness
        .state()
        .selected
        .clone()
        .expect("a fault was clicked");
    assert_eq!(links, vec![LinkId(16), LinkId(17)]);
    // node-03 and the two leaves its NICs reach.
    assert_eq!(devices, vec![DeviceId(2), DeviceId(32), DeviceId(33)]);
}

#[test]
fn a_listing_that_does_not_read_says_why() {
    let mut harness = window();
    harness.state_mut().window.path = "/nonexistent/ibnetdiscover.txt".into();
    harness.get_by_label("Check").click();
    harness.run();
    harness.get_by_label_contains("/nonexistent/ibnetdiscover.txt");
}
