//! The designer window driven through its accessibility tree (egui_kittest): menus by label,
//! a palette drag onto the canvas, an edit in the inspector and its effect on the sidebar,
//! undo and redo, and an idle window that asks for no repaints. Two snapshot images of
//! presets (one with the link heatmap) are rendered by wgpu; on Linux a software adapter
//! (Mesa lavapipe, package `mesa-vulkan-drivers`) does. `UPDATE_SNAPSHOTS=1` rewrites them.

mod common;

use railyard::analysis::job::JobOutcome;

use common::app::{
    WINDOW, app, app_picking, click_menu, harness, open_preset, request_close, root_commands,
    wait_for_analysis,
};
use common::painted::{painted_text_rects, painted_texts};
use egui::accesskit::Role;
use egui::{Key, Modifiers, ViewportCommand, ViewportId};
use egui_kittest::Harness;
use egui_kittest::kittest::{NodeT, Queryable};
use railyard::app::{Prefs, RailyardApp};
use railyard::io::link_colors::ColorMode;
use railyard::model::command::Command;
use railyard::model::factory::default_link;
use railyard::model::{
    Bandwidth, Catalog, DeviceId, DeviceKind, LinkId, LinkState, LinkTech, PartId, Port,
};
use std::collections::{BTreeSet, HashSet};
use std::time::Duration;

fn bisection_gbit_s(harness: &Harness<'_, RailyardApp>) -> f64 {
    let (_, analysis) = harness.state().analysis().expect("an analysis");
    analysis.metrics.bisection.value.gbit_s()
}

fn repaint_delay(harness: &Harness<'_, RailyardApp>) -> Duration {
    harness
        .output()
        .viewport_output
        .get(&ViewportId::ROOT)
        .map_or(Duration::ZERO, |v| v.repaint_delay)
}

/// Three frames in a row ask for no further frame.
fn assert_idle(harness: &mut Harness<'_, RailyardApp>) {
    for _ in 0..3 {
        harness.step();
        assert_eq!(
            repaint_delay(harness),
            Duration::MAX,
            "an idle window repaints: {:?}",
            harness.ctx.repaint_causes()
        );
    }
}

#[test]
fn menu_opens_a_preset_and_an_idle_window_does_not_repaint() {
    let mut harness = harness(app());
    open_preset(&mut harness, "4 × HGX H100, 400G RoCE");
    let doc = harness.state().document();
    assert_eq!(doc.design().name, "4 × HGX H100 on 400G RoCE");
    // 4 nodes × 8 H100 each.
    assert_eq!(doc.design().gpu_count(), 32);
    assert!(!doc.is_dirty(), "a preset opens unmodified");
    assert_eq!(
        harness.state().tab_count(),
        1,
        "the empty start tab gave way"
    );

    // Idle: no frame asks for another.
    assert_idle(&mut harness);
}

#[test]
fn palette_drag_drops_a_switch_on_the_canvas() {
    let mut harness = harness(app());
    let item = harness
        .get_by_label("NVIDIA Quantum-2 QM9700 NDR (managed)")
        .rect();
    let target = egui::pos2(WINDOW.x * 0.5, WINDOW.y * 0.5);
    harness.hover_at(item.center());
    harness.step();
    harness.drag_at(item.center());
    harness.step();
    // Move in steps, as a hand does, so egui sees a drag rather than a click.
    for i in 1..=8 {
        let t = i as f32 / 8.0;
        harness.hover_at(item.center() + (target - item.center()) * t);
        harness.step();
    }
    harness.drop_at(target);
    harness.step();
    harness.run();

    let design = harness.state().document().design();
    assert_eq!(design.devices.len(), 1, "one device dropped");
    let device = &design.devices[0];
    match &device.kind {
        DeviceKind::Switch(s) => assert_eq!(s.model.as_str(), "qm9700"),
        other => panic!("expected a switch, got {other:?}"),
    }
    // The drop lands where the pointer let go, in canvas coordinates.
    let on_screen = harness
        .state()
        .canvas_state()
        .to_screen(device.pos)
        .expect("the canvas has drawn");
    assert!(
        (on_screen - target).length() < 25.0,
        "dropped at {on_screen:?}, released at {target:?}"
    );
    assert_eq!(
        harness.state().document().history().undo_label(),
        Some("add")
    );
}

#[test]
fn link_undo_redo_and_inspector_speed_change_the_bisection() {
    let mut harness = harness(app());
    // Two switches from the palette (the palette's double-click path, the same factory
    // call the canvas makes on a drop).
    for part in ["dgx-h100", "dgx-h100"] {
        harness.state_mut().add_part(&PartId::new(part));
        harness.run();
    }
    let ids: Vec<DeviceId> = harness
        .state()
        .document()
        .design()
        .devices
        .iter()
        .map(|d| d.id)
        .collect();
    assert_eq!(ids.len(), 2);

    // Draw a link the way the canvas does when a port handle is dragged to another device.
    let link = {
        let catalog = Catalog::builtin();
        default_link(
            harness.state().document().design(),
            &catalog,
            ids[0],
            ids[1],
        )
        .expect("two DGX H100 can be cabled NIC to NIC")
    };
    let link_id = link.id;
    let lane = link.rate_gbit_s.gbit_s();
    assert!(harness.state_mut().apply(Command::Insert {
        devices: vec![],
        links: vec![link],
        groups: vec![],
    }));
    harness.run_ok();
    wait_for_analysis(&mut harness);
    // Two nodes joined by one cable: the only cut is that cable.
    assert_eq!(bisection_gbit_s(&harness), lane);

    // Undo (Ctrl+Z) removes the link: the two nodes are islands.
    harness.key_press_modifiers(Modifiers::COMMAND, Key::Z);
    harness.run();
    assert!(harness.state().document().design().links.is_empty());
    wait_for_analysis(&mut harness);
    assert_eq!(bisection_gbit_s(&harness), 0.0);
    // Redo (Ctrl+Shift+Z) brings it back.
    harness.key_press_modifiers(Modifiers::COMMAND | Modifiers::SHIFT, Key::Z);
    harness.run();
    assert_eq!(harness.state().document().design().links.len(), 1);
    wait_for_analysis(&mut harness);
    assert_eq!(bisection_gbit_s(&harness), lane);

    // Select the link alone and set its speed in the inspector to 200 Gb/s.
    let selection = &mut harness.state_mut().canvas_state_mut().selection;
    selection.clear();
    selection.links.insert(link_id);
    harness.run();
    harness.get_by_label("Speed").click();
    harness.run();
    harness.get_by_label("200 Gb/s").click();
    harness.run();
    let edited = harness
        .state()
        .document()
        .design()
        .link(link_id)
        .expect("the link")
        .rate_gbit_s;
    assert_eq!(edited, Bandwidth::from_gbit_s(200.0));
    assert_eq!(
        harness.state().document().history().undo_label(),
        Some("edit link")
    );
    wait_for_analysis(&mut harness);
    assert_eq!(bisection_gbit_s(&harness), 200.0);
    // The sidebar shows it.
    harness.get_by_label_contains("Bisection 200 Gb/s");
    // The inspector says what the link carries: the one cable between the two nodes is the
    // all-reduce's bottleneck.
    harness.run();
    harness.get_by_label_contains("Load: the bottleneck of the all-reduce of 1 GiB");

    // Undo the speed change: back to the lane rate, in one step.
    harness.key_press_modifiers(Modifiers::COMMAND, Key::Z);
    harness.run_ok();
    wait_for_analysis(&mut harness);
    assert_eq!(bisection_gbit_s(&harness), lane);
}

#[test]
fn a_bad_file_shows_a_banner_and_keeps_the_design() {
    let dir = tempfile::tempdir().expect("temp dir");
    let bad = dir.path().join("bad.ron");
    std::fs::write(
        &bad,
        "(\n  version: 1,\n  design: (name: \"x\", devices: [oops]),\n)",
    )
    .expect("writes");
    let mut harness = harness(app_picking(bad.clone()));
    harness.state_mut().add_part(&PartId::new("qm9700"));
    harness.run();
    harness.key_press_modifiers(Modifiers::COMMAND, Key::O);
    harness.run();
    let doc = harness.state().document();
    let banner = doc.banner.clone().expect("a banner");
    assert!(
        banner.contains(&format!("{}:3:", bad.display())),
        "banner names file:line:column: {banner}"
    );
    assert_eq!(doc.design().devices.len(), 1, "the open design is intact");
    harness.get_by_label_contains("bad.ron:3:");
}

/// A long error wraps beside its Dismiss button instead of pushing it out of the window: a
/// file with a 220-character name and a typo'd field gives a message of over 300 characters,
/// wider than the window on one line. Dismiss stays inside the window and clears it.
#[test]
fn a_long_error_wraps_and_its_dismiss_stays_in_the_window() {
    let dir = tempfile::tempdir().expect("temp dir");
    let bad = dir.path().join(format!(
        "{}.ron",
        "a-design-file-with-a-long-name-".repeat(7)
    ));
    std::fs::write(
        &bad,
        "(\n  version: 2,\n  design: (name: \"x\", devices: [(id: 0, n: 1)]),\n)",
    )
    .expect("writes");
    let mut harness = harness(app_picking(bad.clone()));
    harness.run();
    harness.key_press_modifiers(Modifiers::COMMAND, Key::O);
    harness.run();
    let banner = harness.state().document().banner.clone().expect("a banner");
    assert!(banner.len() > 300, "{} characters: {banner}", banner.len());
    assert!(banner.contains("the device has no field `n`"), "{banner}");
    let window = egui::Rect::from_min_size(egui::Pos2::ZERO, common::app::WINDOW);
    let dismiss = harness.get_by_label("Dismiss").rect();
    assert!(window.contains_rect(dismiss), "Dismiss at {dismiss:?}");
    harness.get_by_label("Dismiss").click();
    harness.run();
    assert_eq!(harness.state().document().banner, None);
}

#[test]
fn file_open_imports_an_edge_list_into_a_new_tab_and_a_bad_one_shows_its_line() {
    let dir = tempfile::tempdir().expect("temp dir");
    let edges = dir.path().join("edges.csv");
    std::fs::write(
        &edges,
        "spine-1,leaf-1,InfiniBand,400G\nleaf-1,gpu-1,InfiniBand,400G\n",
    )
    .expect("writes");
    let mut harness = harness(app_picking(edges));
    harness.state_mut().add_part(&PartId::new("qm9700"));
    harness.run();
    harness.key_press_modifiers(Modifiers::COMMAND, Key::O);
    harness.run();
    assert_eq!(harness.state().tab_count(), 2, "a new tab");
    let doc = harness.state().document();
    assert_eq!(doc.design().devices.len(), 3);
    assert_eq!(doc.design().links.len(), 2);
    assert!(doc.path().is_none(), "unsaved: Save asks where");

    let bad = dir.path().join("bad.csv");
    std::fs::write(&bad, "a,b,InfiniBand,400G\nb,c,InfiniBand,fast\n").expect("writes");
    assert!(!harness.state_mut().open_path(&bad));
    harness.run();
    let doc = harness.state().document();
    let banner = doc.banner.clone().expect("a banner");
    assert!(banner.contains("bad.csv:2:"), "{banner}");
    assert_eq!(doc.design().devices.len(), 3, "the open design is intact");
}

#[test]
fn save_as_through_an_injected_dialog_then_title_and_dirty_flag() {
    let dir = tempfile::tempdir().expect("temp dir");
    let target = dir.path().join("mine");
    let mut harness = harness(app_picking(target.clone()));
    harness.state_mut().add_part(&PartId::new("qm9700"));
    harness.run();
    assert!(harness.state().document().is_dirty());
    harness.key_press_modifiers(Modifiers::COMMAND | Modifiers::SHIFT, Key::S);
    harness.run();
    let saved = dir.path().join("mine.ron");
    assert!(saved.exists(), "saved with the .ron extension added");
    assert!(!harness.state().document().is_dirty());
    assert_eq!(harness.state().document().title(), "mine.ron");
    let reopened = railyard::io::load_design(&saved).expect("reloads");
    assert_eq!(reopened.devices.len(), 1);
    assert_eq!(harness.state().prefs().recent.len(), 1);

    // With no dialog available, Open falls back to the in-app path field.
    harness.key_press_modifiers(Modifiers::COMMAND, Key::O);
    harness.run();
    harness.get_by_label("Browse…");
    assert!(
        harness
            .query_all_by_role(Role::TextInput)
            .any(|n| n.value().is_some_and(|v| v.ends_with('/'))),
        "the path field starts in a folder"
    );
}

#[test]
fn keyboard_nudge_copy_paste_and_delete() {
    let mut harness = harness(app());
    harness.state_mut().add_part(&PartId::new("qm9700"));
    harness.run();
    let id = harness.state().document().design().devices[0].id;
    let before = harness.state().document().design().devices[0].pos;
    harness.key_press(Key::ArrowRight);
    harness.run();
    let after = harness
        .state()
        .document()
        .design()
        .device(id)
        .expect("device")
        .pos;
    assert_eq!((after.x - before.x, after.y - before.y), (10.0, 0.0));
    harness.key_press_modifiers(Modifiers::COMMAND, Key::C);
    harness.run();
    harness.key_press_modifiers(Modifiers::COMMAND, Key::V);
    harness.run();
    let design = harness.state().document().design();
    assert_eq!(design.devices.len(), 2);
    let copy = &design.devices[1];
    assert_eq!((copy.pos.x - after.x, copy.pos.y - after.y), (40.0, 40.0));
    // The pasted copy is selected; Delete removes only it.
    harness.key_press(Key::Delete);
    harness.run();
    assert_eq!(harness.state().document().design().devices.len(), 1);
    // nudge, paste, delete: three undo steps back to the start.
    for _ in 0..3 {
        harness.key_press_modifiers(Modifiers::COMMAND, Key::Z);
        harness.run();
    }
    assert_eq!(
        harness
            .state()
            .document()
            .design()
            .device(id)
            .map(|d| d.pos),
        Some(before)
    );
}

/// A fresh window with one QM9700 added and copied (Ctrl+C): the window, and the original.
fn one_switch_copied() -> (Harness<'static, RailyardApp>, railyard::model::Device) {
    let mut harness = harness(app());
    harness.state_mut().add_part(&PartId::new("qm9700"));
    harness.run();
    let original = harness.state().document().design().devices[0].clone();
    harness.key_press_modifiers(Modifiers::COMMAND, Key::C);
    harness.run();
    (harness, original)
}

/// With the pointer over the canvas, a paste lands centred on it (not on the original),
/// under the next free name.
#[test]
fn paste_lands_at_the_pointer_with_a_fresh_name() {
    let (mut harness, original) = one_switch_copied();
    // A point in the canvas, well away from the device.
    let p = egui::pos2(900.0, 300.0);
    harness.hover_at(p);
    harness.run();
    let at = harness
        .state()
        .canvas_state()
        .to_canvas(p)
        .expect("the canvas was drawn");
    assert!(
        (at.x - original.pos.x).abs() > 50.0 || (at.y - original.pos.y).abs() > 50.0,
        "the pointer is away from the original"
    );
    harness.key_press_modifiers(Modifiers::COMMAND, Key::V);
    harness.run();
    let design = harness.state().document().design();
    assert_eq!(design.devices.len(), 2);
    let copy = &design.devices[1];
    assert!(
        (copy.pos.x - at.x).abs() < 0.01 && (copy.pos.y - at.y).abs() < 0.01,
        "{:?} against the pointer at {at:?}",
        copy.pos
    );
    assert_ne!(copy.name, original.name);
}

/// With the pointer still on the copied device (click it, Ctrl+C, Ctrl+V), the copy goes 40
/// units below and right of it, not on top where it would hide the original.
#[test]
fn a_paste_over_the_original_moves_off_it() {
    let (mut harness, original) = one_switch_copied();
    // The screen point of the original's centre, found from the canvas's own mapping.
    let on = (0..1440)
        .step_by(4)
        .flat_map(|x| {
            (0..900)
                .step_by(4)
                .map(move |y| egui::pos2(x as f32, y as f32))
        })
        .find(|&p| {
            harness
                .state()
                .canvas_state()
                .to_canvas(p)
                .is_some_and(|c| {
                    (c.x - original.pos.x).abs() < 3.0 && (c.y - original.pos.y).abs() < 3.0
                })
        })
        .expect("the original is on screen");
    harness.hover_at(on);
    harness.run();
    harness.key_press_modifiers(Modifiers::COMMAND, Key::V);
    harness.run();
    let design = harness.state().document().design();
    assert_eq!(design.devices.len(), 2);
    let copy = &design.devices[1];
    assert_eq!(
        (copy.pos.x - original.pos.x, copy.pos.y - original.pos.y),
        (40.0, 40.0)
    );
}

/// Two DGX H100 joined by one default link, the link alone selected.
fn two_nodes_one_link(harness: &mut Harness<'_, RailyardApp>) -> LinkId {
    for _ in 0..2 {
        harness.state_mut().add_part(&PartId::new("dgx-h100"));
        harness.run();
    }
    cable_first_two_and_select(harness)
}

/// One more default link between the design's first two devices, alone selected.
fn cable_first_two_and_select(harness: &mut Harness<'_, RailyardApp>) -> LinkId {
    let design = harness.state().document().design();
    let link = default_link(
        design,
        &Catalog::builtin(),
        design.devices[0].id,
        design.devices[1].id,
    )
    .expect("two DGX H100 can be cabled");
    let id = link.id;
    assert!(harness.state_mut().apply(Command::Insert {
        devices: vec![],
        links: vec![link],
        groups: vec![],
    }));
    let selection = &mut harness.state_mut().canvas_state_mut().selection;
    selection.clear();
    selection.links.insert(id);
    harness.run();
    id
}

fn fraction_of(harness: &Harness<'_, RailyardApp>, id: LinkId) -> Option<f64> {
    match harness.state().document().design().link(id)?.state {
        LinkState::Degraded { fraction } => Some(fraction),
        _ => None,
    }
}

#[test]
fn a_slider_drag_is_one_undo_step() {
    let mut harness = harness(app());
    let id = two_nodes_one_link(&mut harness);
    harness.get_by_label("degraded").click();
    harness.run();
    assert_eq!(fraction_of(&harness, id), Some(0.5));

    let rail = harness.get_by_label("Runs at").rect();
    let from = egui::pos2(rail.left() + rail.width() * 0.25, rail.center().y);
    harness.hover_at(from);
    harness.step();
    harness.drag_at(from);
    harness.step();
    for i in 1..=6 {
        let x = from.x + (rail.right() + 40.0 - from.x) * i as f32 / 6.0;
        harness.hover_at(egui::pos2(x, from.y));
        harness.step();
        assert_eq!(
            fraction_of(&harness, id),
            Some(0.5),
            "the design does not change while the slider is still held"
        );
    }
    harness.drop_at(egui::pos2(rail.right() + 40.0, from.y));
    harness.step();
    harness.run();
    let dragged = fraction_of(&harness, id).expect("still degraded");
    assert!(
        (dragged - 0.95).abs() < 1e-9,
        "dragged past the end: {dragged}"
    );

    // One undo takes the whole drag back; the next undoes the switch to "degraded".
    harness.key_press_modifiers(Modifiers::COMMAND, Key::Z);
    harness.run();
    assert_eq!(fraction_of(&harness, id), Some(0.5));
    harness.key_press_modifiers(Modifiers::COMMAND, Key::Z);
    harness.run();
    assert_eq!(
        harness
            .state()
            .document()
            .design()
            .link(id)
            .map(|l| l.state),
        Some(LinkState::Up)
    );
}

#[test]
fn closing_with_unsaved_changes_asks_first() {
    let mut harness = harness(app());
    harness.state_mut().add_part(&PartId::new("qm9700"));
    harness.step();
    assert!(
        root_commands(&harness).iter().any(|c| matches!(
            c,
            ViewportCommand::Title(t) if t == "Untitled • — railyard"
        )),
        "the title marks unsaved changes: {:?}",
        root_commands(&harness)
    );
    harness.run();

    request_close(&mut harness);
    harness.step();
    assert!(root_commands(&harness).contains(&ViewportCommand::CancelClose));
    harness.run();
    harness.get_by_label("Unsaved changes");
    harness.get_by_label("Discard").click();
    harness.step();
    assert!(root_commands(&harness).contains(&ViewportCommand::Close));
    assert_eq!(harness.state().document().design().devices.len(), 1);
}

#[test]
fn sidebar_points_at_the_cut_the_checks_and_the_bottleneck() {
    let mut harness = harness(app());
    open_preset(&mut harness, "4 × HGX H100, 400G RoCE");
    let (_, analysis) = harness.state().analysis().expect("an analysis");

    // Hovering the bisection figure highlights the cut on the canvas: a star of 4 nodes on
    // one switch is cut between 2 nodes and the rest, through 2 × 8 links.
    let cut: HashSet<LinkId> = analysis
        .metrics
        .bisection
        .cut_links
        .iter()
        .copied()
        .collect();
    assert_eq!(cut.len(), 16);
    // 16 links × 400 Gb/s, and full bisection is 16 GPUs × one 400G NIC each.
    assert_eq!(analysis.metrics.bisection.value.gbit_s(), 6400.0);
    assert_eq!(analysis.metrics.bisection.full.gbit_s(), 6400.0);
    harness.get_by_label_contains("Bisection ").hover();
    harness.run();
    assert_eq!(harness.state().highlighted_links(), &cut);

    // Clicking the bottleneck selects the links running at full load.
    let result = analysis
        .collective
        .as_ref()
        .and_then(|c| c.as_ref().ok())
        .expect("a collective result");
    let busiest: BTreeSet<LinkId> = result
        .bottleneck
        .iter()
        .filter(|l| l.utilization >= 0.999)
        .filter_map(|l| l.link)
        .collect();
    assert!(!busiest.is_empty());
    harness.get_by_label_contains("Bottleneck:").scroll_to_me();
    harness.run();
    harness.get_by_label_contains("Bottleneck:").click();
    harness.run();
    assert_eq!(harness.state().canvas_state().selection.links, busiest);
}

#[test]
fn clicking_a_check_selects_what_it_is_about() {
    let mut harness = harness(app());
    // Two DGX H100 and nothing between them: their GPUs cannot reach each other.
    for _ in 0..2 {
        harness.state_mut().add_part(&PartId::new("dgx-h100"));
        harness.run();
    }
    harness.state_mut().canvas_state_mut().selection.clear();
    wait_for_analysis(&mut harness);
    let (_, analysis) = harness.state().analysis().expect("an analysis");
    let check = analysis
        .metrics
        .checks
        .iter()
        .find(|c| !c.devices.is_empty())
        .expect("a check about some devices")
        .clone();
    harness.get_by_label(&check.message).click();
    harness.run();
    let selection = &harness.state().canvas_state().selection;
    assert_eq!(selection.devices, check.devices.iter().copied().collect());
    assert_eq!(selection.links, check.links.iter().copied().collect());
}

#[test]
fn generate_dialog_runs_a_template_into_a_new_tab() {
    let mut harness = harness(app());
    harness.state_mut().add_part(&PartId::new("qm9700"));
    harness.run();
    harness.get_by_label("Generate…").click();
    harness.run();
    // Rail-optimized with the template's defaults.
    harness.get_by_label("Generate").click();
    harness.run();
    assert_eq!(
        harness.state().tab_count(),
        2,
        "the edited tab stays, the new one opens"
    );
    assert_eq!(harness.state().active_tab(), 1);
    let doc = harness.state().document();
    assert!(
        doc.design().gpu_count() > 0,
        "{:?}",
        harness.state().status()
    );
    assert!(
        doc.is_dirty(),
        "a generated design is not saved anywhere yet"
    );
    assert!(doc.path().is_none());
    assert!(
        harness.query_by_label("Generate a design").is_none(),
        "the dialog closed"
    );
}

/// eframe's storage, in memory.
#[derive(Default)]
struct MemoryStorage(std::collections::HashMap<String, String>);

impl eframe::Storage for MemoryStorage {
    fn get_string(&self, key: &str) -> Option<String> {
        self.0.get(key).cloned()
    }
    fn set_string(&mut self, key: &str, value: String) {
        self.0.insert(key.to_string(), value);
    }
    fn remove_string(&mut self, key: &str) {
        self.0.remove(key);
    }
    fn flush(&mut self) {}
}

#[test]
fn preferences_survive_a_restart_but_the_design_does_not() {
    let dir = tempfile::tempdir().expect("temp dir");
    let path = dir.path().join("kept.ron");
    railyard::io::save_design(&path, &railyard::model::Design::new("kept")).expect("writes");
    let mut harness = harness(app());
    assert!(harness.state_mut().open_path(&path));
    harness.key_press(Key::H);
    harness.run();
    let mut storage = MemoryStorage::default();
    eframe::App::save(harness.state_mut(), &mut storage);

    let prefs: Prefs = eframe::get_value(&storage, "railyard-prefs").expect("saved prefs");
    assert!(prefs.heatmap, "the heatmap toggle is remembered");
    assert_eq!(prefs.recent.len(), 1);
    assert!(prefs.recent[0].ends_with("kept.ron"));
    let restarted = RailyardApp::new(Catalog::builtin(), prefs);
    assert_eq!(restarted.document().design().name, "Untitled");
    assert!(
        storage.0.values().all(|v| !v.contains("devices")),
        "no design in the prefs"
    );
}

/// Renders a preset with the window's real panels and compares it with the stored image.
fn snapshot_preset(title: &str, heatmap: bool, name: &str) {
    snapshot_preset_with(
        title,
        Prefs {
            heatmap,
            ..Prefs::default()
        },
        false,
        name,
    );
}

/// `snapshot_preset` with these preferences (link colours, heatmap), in presentation mode
/// (F11) if `present`.
fn snapshot_preset_with(title: &str, prefs: Prefs, present: bool, name: &str) {
    if !common::vulkan::adapter_or_skip(name) {
        return;
    }
    let app = RailyardApp::new(Catalog::builtin(), prefs);
    let mut harness = Harness::builder()
        .with_size(WINDOW)
        .with_max_steps(12)
        .wgpu()
        .build_eframe(move |_cc| app);
    open_preset(&mut harness, title);
    if present {
        harness.key_press(Key::F11);
        harness.run();
    }
    harness.remove_cursor();
    harness.run();
    harness.snapshot(name);
}

#[test]
fn snapshot_mac_studio_mesh() {
    snapshot_preset(
        "4 × Mac Studio, Thunderbolt 5 mesh",
        false,
        "mac_studio_tb5_mesh",
    );
}

#[test]
fn snapshot_hgx_roce_heatmap() {
    snapshot_preset("4 × HGX H100, 400G RoCE", true, "hgx_h100_roce_heatmap");
}

/// A preset with its links coloured by `mode`, against the stored image `name`.
fn snapshot_in_colours(title: &str, mode: ColorMode, name: &str) {
    let prefs = Prefs {
        link_colors: mode,
        ..Prefs::default()
    };
    snapshot_preset_with(title, prefs, false, name);
}

#[test]
fn snapshot_superpod_in_rail_colours() {
    snapshot_in_colours(
        "DGX H100 SuperPOD scalable unit (32 nodes)",
        ColorMode::Rail,
        "superpod_su_rail",
    );
}

#[test]
fn snapshot_fat_tree_in_tier_colours() {
    snapshot_in_colours(
        "32 × DGX H100, fat-tree at 3:1",
        ColorMode::Tier,
        "fat_tree_3to1_tier",
    );
}

#[test]
fn snapshot_gb200_pod_in_presentation_mode() {
    snapshot_preset_with(
        "GB200 NVL72 pod: 8 racks, 576 GPUs",
        Prefs::default(),
        true,
        "gb200_pod_presentation",
    );
}

/// Picks `label` from the Workload section's model menu, and waits for its analysis.
fn choose_model(harness: &mut Harness<'_, RailyardApp>, label: &str) {
    // The menu opens below its button: bring the button up first so every model fits.
    harness.get_by_label("model").scroll_to_me();
    harness.run();
    harness.get_by_label("model").click();
    harness.run();
    harness.get_by_label(label).click();
    wait_for_analysis(harness);
}

/// The 4 × HGX H100 RoCE preset with the sidebar's workload turned on and Llama 8B chosen.
fn llama_8b_on_the_roce_preset() -> Harness<'static, RailyardApp> {
    let mut harness = harness(app());
    open_preset(&mut harness, "4 × HGX H100, 400G RoCE");
    harness.get_by_label("Workload").scroll_to_me();
    harness.run();
    harness.get_by_label("Workload").click();
    wait_for_analysis(&mut harness);
    choose_model(&mut harness, "Llama 8B");
    harness
}

#[test]
fn sidebar_gives_advice_and_times_a_training_step() {
    let mut harness = harness(app());
    open_preset(&mut harness, "4 × Mac Studio, Thunderbolt 5 mesh");
    let (_, analysis) = harness.state().analysis().expect("an analysis");
    let advice = analysis.advice.clone();
    assert_eq!(advice.len(), 1, "{advice:?}");
    assert_eq!(advice[0].code, "thunderbolt");
    assert!(analysis.workload.is_none());
    // Clicking the finding selects the six Thunderbolt cables of the mesh.
    harness.get_by_label_contains("Advice (1)");
    harness.get_by_label(&advice[0].message).click();
    harness.run();
    let selected = &harness.state().canvas_state().selection.links;
    assert_eq!(selected.len(), 6);
    assert_eq!(*selected, advice[0].links.iter().copied().collect());

    // The default workload, Llama 70B with tensor parallelism 8, needs more GPUs than 4.
    // The section sits below the fold of the sidebar.
    harness.get_by_label("Workload").scroll_to_me();
    harness.run();
    harness.get_by_label("Workload").click();
    wait_for_analysis(&mut harness);
    harness.get_by_label_contains("8 GPUs requested but the design has 4");
    // The sidebar offers the layout `workload` narrows to: TP 4 on the four Macs.
    harness
        .get_by_label("Fit to 4 GPUs: TP 4 × PP 1")
        .scroll_to_me();
    harness.run();
    harness.get_by_label("Fit to 4 GPUs: TP 4 × PP 1").click();
    harness.run();
    wait_for_analysis(&mut harness);
    {
        let (_, analysis) = harness.state().analysis().expect("an analysis");
        let fitted = analysis
            .workload
            .as_ref()
            .and_then(|w| w.as_ref().ok())
            .unwrap_or_else(|| panic!("a step once fitted: {:?}", analysis.workload));
        assert_eq!((fitted.mapping.tp, fitted.mapping.pp), (4, 1));
    }
    // Llama 8B runs data-parallel over the four Macs.
    harness.get_by_label("model").scroll_to_me();
    harness.run();
    choose_model(&mut harness, "Llama 8B");
    let (_, analysis) = harness.state().analysis().expect("an analysis");
    let result = analysis
        .workload
        .as_ref()
        .and_then(|w| w.as_ref().ok())
        .unwrap_or_else(|| panic!("a training step: {:?}", analysis.workload));
    assert_eq!(
        (result.mapping.tp, result.mapping.pp, result.mapping.dp),
        (1, 1, 4)
    );
    assert_eq!(result.components.len(), 1);
    harness.get_by_label("TP 1 × PP 1 × DP 4 on 4 GPUs");
    harness.get_by_label_contains("Communication per step: ");
    // The step as a job: Apple silicon has no published kernel efficiency, so the step time
    // is unknown rather than guessed; the memory it needs is known.
    let Some(Ok(JobOutcome::Training { step, .. })) = &analysis.job else {
        panic!("a training job: {:?}", analysis.job);
    };
    assert_eq!(step.step_ms, None);
    assert!(step.memory_gib_per_gpu > 0.0);
    harness.get_by_label("Step unknown");
    // The user's own kernel efficiency times it, and the step says whose figure it is.
    harness.get_by_label("own kernel efficiency").scroll_to_me();
    harness.run();
    harness.get_by_label("own kernel efficiency").click();
    wait_for_analysis(&mut harness);
    assert_eq!(harness.state().prefs().workload.efficiency, Some(0.4));
    let (_, analysis) = harness.state().analysis().expect("an analysis");
    let Some(Ok(JobOutcome::Training { step, .. })) = &analysis.job else {
        panic!("a training job: {:?}", analysis.job);
    };
    assert!(step.step_ms.is_some_and(|ms| ms > 0.0), "{step:?}");
    assert!(
        step.assumes
            .iter()
            .any(|a| a.starts_with("kernels at 40 % of peak: set by the user")),
        "{:?}",
        step.assumes
    );
    assert!(harness.query_by_label("Step unknown").is_none());
    // The step known, Thunderbolt stays a note that says how much of the step it exposes.
    let thunderbolt = |analysis: &railyard::analysis::Assessment| {
        analysis
            .advice
            .iter()
            .find(|f| f.code == "thunderbolt")
            .cloned()
            .expect("a thunderbolt finding")
    };
    let timed = thunderbolt(&analysis);
    assert_eq!(
        timed.severity,
        railyard::analysis::collective::Severity::Info
    );
    assert!(
        timed.message.contains("this job's step leaves"),
        "{}",
        timed.message
    );
    harness.get_by_label("own kernel efficiency").click();
    wait_for_analysis(&mut harness);
    assert_eq!(harness.state().prefs().workload.efficiency, None);
    harness.get_by_label("Step unknown");
    // With data parallelism to run and the step unknown, Thunderbolt is a warning.
    let (_, analysis) = harness.state().analysis().expect("an analysis");
    assert_eq!(
        thunderbolt(&analysis).severity,
        railyard::analysis::collective::Severity::Warning
    );

    // A mixture of experts: its 8 experts split over the 4 replicas, which exchange tokens.
    choose_model(&mut harness, "Mixtral 8×7B (MoE)");
    harness.get_by_label("expert parallel");
    harness.get_by_label("serving").scroll_to_me();
    harness.run();
    harness.get_by_label("TP 1 × PP 1 × DP 4 (EP 4) on 4 GPUs");
    let (_, analysis) = harness.state().analysis().expect("an analysis");
    assert!(matches!(
        &analysis.workload,
        Some(Ok(step)) if step.components.iter().any(|c| c.name == "MoE all-to-all")
    ));
    harness.get_by_label("MoE all-to-all");

    // Serving replicas: one decode step rather than a training step.
    harness.get_by_label("serving").click();
    wait_for_analysis(&mut harness);
    harness.get_by_label_contains("Communication per decode step: ");
    let (_, analysis) = harness.state().analysis().expect("an analysis");
    assert!(matches!(&analysis.workload, Some(Ok(step)) if step.serving));
    // Decode is bounded by memory bandwidth, which the M3 Ultra's datasheet gives.
    let Some(Ok(JobOutcome::Serving(serving))) = &analysis.job else {
        panic!("a serving job: {:?}", analysis.job);
    };
    // How many sequences a replica decodes at once is the user's (64 until changed).
    harness.get_by_label("sequences at once");
    assert_eq!(harness.state().prefs().workload.serving_batch, 64);
    assert!(
        serving
            .assumes
            .iter()
            .any(|a| a.starts_with("64 sequences per replica")),
        "{:?}",
        serving.assumes
    );
    let rate = serving.decode_tokens_per_s.expect("known bandwidth");
    harness.get_by_label_contains(&format!(
        "Decode ≤ {}",
        railyard::model::units::group_thousands(rate.round() as i64)
    ));
}

/// The sidebar's layout search runs off the UI thread with its progress shown, lists the
/// fastest layouts, and Use pins one: the step then shown is the one the list gave.
#[test]
fn the_layout_search_finds_layouts_and_use_pins_one() {
    let mut harness = llama_8b_on_the_roce_preset();
    // The sidebar settles on the new model's figures before the button is aimed at.
    wait_for_analysis(&mut harness);
    harness
        .get_by_label("Find the fastest layout")
        .scroll_to_me();
    harness.run();
    assert!(!harness.state().layout_search_was_started());
    harness.get_by_label("Find the fastest layout").click();
    harness.step();
    // A 32-GPU search may already be done after one frame on a fast machine.
    assert!(harness.state().layout_search_was_started());
    common::app::wait_until(&mut harness, "the layout search", |app| {
        !app.layout_search_is_running()
    });
    harness.get_by_label_contains("settings tried");
    let rows: Vec<String> = harness
        .query_all_by_label_contains(", micro-batch ")
        .filter_map(|n| n.accesskit_node().value())
        .collect();
    assert!(!rows.is_empty() && rows.len() <= 5, "{rows:?}");
    let use_buttons = harness.query_all_by_label("Use").count();
    assert!(
        use_buttons >= rows.len() - 1,
        "{use_buttons} Use for {rows:?}"
    );
    // Below the fold until scrolled to.
    harness
        .query_all_by_label("Use")
        .last()
        .expect("a layout to pin")
        .scroll_to_me();
    harness.run();
    harness
        .query_all_by_label("Use")
        .last()
        .expect("a layout to pin")
        .click();
    wait_for_analysis(&mut harness);
    let (_, analysis) = harness.state().analysis().expect("an analysis");
    let Some(Ok(JobOutcome::Training { step, .. })) = &analysis.job else {
        panic!("a training job: {:?}", analysis.job);
    };
    let pinned = format!(
        "{}, micro-batch {}, recompute {}, ZeRO {}:",
        step.layout,
        step.micro_batch,
        step.recompute.label(),
        step.zero
    );
    assert!(
        rows.last().is_some_and(|row| row.starts_with(&pinned)),
        "pinned {pinned}, rows {rows:?}"
    );
    let prefs = &harness.state().prefs().workload;
    assert_eq!(
        (prefs.tp, prefs.pp, prefs.micro_batch),
        (step.tp, step.pp, step.micro_batch)
    );
    // Recomputation and ZeRO are searched as `workload --search` searches them, and pinned.
    assert_eq!(
        (prefs.recompute, prefs.zero),
        (Some(step.recompute), Some(step.zero))
    );
    // The pinned row is now the one in use.
    harness.get_by_label("in use");
}

/// The workload belongs to the design: turning it on and choosing a model are undoable edits
/// that make the design unsaved and ride in its file, and another design keeps its own.
#[test]
fn the_workload_is_the_designs_own_undoable_edit() {
    let mut harness = harness(app());
    open_preset(&mut harness, "4 × HGX H100, 400G RoCE");
    assert!(!harness.state().document().is_dirty());
    harness.get_by_label("Workload").scroll_to_me();
    harness.run();
    harness.get_by_label("Workload").click();
    wait_for_analysis(&mut harness);
    let job = |h: &Harness<'_, RailyardApp>| {
        h.state()
            .document()
            .design()
            .job
            .as_ref()
            .map(|j| j.model.clone())
    };
    assert_eq!(job(&harness).as_deref(), Some("llama-70b"));
    assert!(harness.state().document().is_dirty());
    choose_model(&mut harness, "Llama 8B");
    assert_eq!(job(&harness).as_deref(), Some("llama-8b"));
    // Saved with the design, as its file would carry it.
    let text = ron::ser::to_string(harness.state().document().design()).expect("RON");
    let back: railyard::model::Design = ron::from_str(&text).expect("reads back");
    assert_eq!(back.job.map(|j| j.model).as_deref(), Some("llama-8b"));
    // Each step undoes on its own: the model, then the workload itself.
    harness.key_press_modifiers(Modifiers::COMMAND, Key::Z);
    harness.run();
    assert_eq!(job(&harness).as_deref(), Some("llama-70b"));
    harness.key_press_modifiers(Modifiers::COMMAND, Key::Z);
    harness.run();
    assert_eq!(job(&harness), None);
    harness.key_press_modifiers(Modifiers::COMMAND | Modifiers::SHIFT, Key::Z);
    harness.run();
    assert_eq!(job(&harness).as_deref(), Some("llama-70b"));
    // Another design has none until given one; back on the first, its own is there.
    open_preset(&mut harness, "4 × Mac Studio, Thunderbolt 5 mesh");
    assert_eq!(job(&harness), None);
    let (_, analysis) = harness.state().analysis().expect("an analysis");
    assert!(analysis.workload.is_none());
    harness
        .get_by_label_contains("4 × HGX H100 on 400G RoCE")
        .click();
    harness.run();
    assert_eq!(job(&harness).as_deref(), Some("llama-70b"));
}

/// Choosing QLoRA under "trains" is one undoable edit of the design's job, saved with it; the
/// rank starts at 16.
#[test]
fn adapters_are_chosen_in_the_sidebar_and_undone() {
    use railyard::model::job_spec::Finetune;
    let mut harness = llama_8b_on_the_roce_preset();
    let finetune = |h: &Harness<'_, RailyardApp>| {
        h.state()
            .document()
            .design()
            .job
            .as_ref()
            .map(|j| j.finetune)
    };
    assert_eq!(finetune(&harness), Some(Finetune::Full));
    harness.get_by_label("trains").scroll_to_me();
    harness.run();
    harness.get_by_label("trains").click();
    harness.run();
    harness.get_by_label("QLoRA").click();
    wait_for_analysis(&mut harness);
    assert_eq!(finetune(&harness), Some(Finetune::Qlora { rank: 16 }));
    harness.get_by_label("rank");
    let (_, analysis) = harness.state().analysis().expect("an analysis");
    let grads = analysis
        .workload
        .as_ref()
        .and_then(|w| w.as_ref().ok())
        .and_then(|w| w.components.first())
        .map(|c| c.bytes_per_call);
    // Rank 16 on Llama 3 8B: 41,943,040 adapter weights, their gradients in 2 bytes.
    assert_eq!(grads, Some(2.0 * 41_943_040.0));
    harness.key_press_modifiers(Modifiers::COMMAND, Key::Z);
    harness.run();
    assert_eq!(finetune(&harness), Some(Finetune::Full));
}

#[test]
fn shortcuts_open_on_question_mark_list_the_gestures_and_close_on_escape() {
    let mut harness = harness(app());
    assert!(harness.query_by_label("Keyboard shortcuts").is_none());
    harness.key_press(Key::Questionmark);
    harness.run();
    // The window's title (its title bar and the window carry it).
    assert!(harness.query_all_by_label("Keyboard shortcuts").count() > 0);
    // The canvas's gestures: pan, box select, link drag, zoom.
    harness.get_by_label("pan the view");
    harness.get_by_label_contains("box select");
    harness.get_by_label("draw a link");
    harness.get_by_label("zoom");
    // Keys from the action table, every shortcut of an action.
    let redo = [
        egui::KeyboardShortcut::new(Modifiers::COMMAND | Modifiers::SHIFT, Key::Z),
        egui::KeyboardShortcut::new(Modifiers::COMMAND, Key::Y),
    ]
    .map(|s| harness.ctx.format_shortcut(&s))
    .join(" or ");
    harness.get_by_label(&redo);
    harness.get_by_label("Presentation mode");
    harness.key_press(Key::Escape);
    harness.run();
    assert!(harness.query_by_label("pan the view").is_none());
    // Help > Keyboard shortcuts opens it too.
    common::app::click_menu(&mut harness, "Help", "Keyboard shortcuts");
    harness.get_by_label("pan the view");
}

#[test]
fn on_a_1366_by_768_laptop_the_sidebar_reaches_what_ifs_and_workload_without_widening() {
    let laptop = egui::vec2(1366.0, 768.0);
    let mut harness = Harness::builder()
        .with_size(laptop)
        .with_max_steps(12)
        .build_eframe(|_cc| app());
    open_preset(&mut harness, "4 × HGX H100, 400G RoCE");
    // A server: its eight NICs fill the inspector.
    let node = (harness.state().document().design().devices.iter())
        .find(|d| matches!(d.kind, DeviceKind::GpuNode(_)))
        .expect("a server")
        .clone();
    harness
        .state_mut()
        .canvas_state_mut()
        .selection
        .devices
        .insert(node.id);
    harness.run_ok();
    let width = harness.state().prefs().sidebar_width;
    let window = egui::Rect::from_min_size(egui::Pos2::ZERO, laptop);

    // The what-if buttons scroll into view inside the sidebar, and work.
    harness.get_by_label("Fail device").scroll_to_me();
    harness.run_ok();
    let fail = harness.get_by_label("Fail device");
    assert!(window.contains_rect(fail.rect()), "{:?}", fail.rect());
    assert!(fail.rect().min.x >= laptop.x - width - 1.0);
    fail.click();
    harness.run_ok();
    // The sidebar settles on the new analysis before anything in it is clicked again.
    wait_for_analysis(&mut harness);
    let failed = (harness.state().document().design().links.iter())
        .filter(|l| l.state == LinkState::Failed)
        .count();
    assert!(failed > 0, "the what-if failed the server's links");

    // The Workload section too; ticking it does not widen the sidebar.
    harness.get_by_label("Workload").scroll_to_me();
    harness.run_ok();
    harness.get_by_label("Workload").click();
    wait_for_analysis(&mut harness);
    harness.get_by_label("model").scroll_to_me();
    harness.run_ok();
    assert!(window.contains_rect(harness.get_by_label("model").rect()));
    let after = harness.state().prefs().sidebar_width;
    assert!((after - width).abs() < 0.5, "{width} → {after}");

    // One part in the whole height: the metrics alone, then the inspector alone.
    // The tab (a button), not the section's heading: scrolled to the workload, the heading
    // can sit as high as the tab.
    harness
        .query_all_by_label("Metrics")
        .find(|n| n.accesskit_node().role() == Role::Button)
        .expect("the Metrics tab")
        .click();
    harness.run_ok();
    assert!(harness.query_by_label("Fail device").is_none());
    harness.get_by_label("Workload");
    harness.get_by_label("Inspector").click();
    harness.run_ok();
    assert!(harness.query_by_label("Plots…").is_none());
    harness.get_by_label("Fail device");
    assert_eq!(
        harness.state().prefs().sidebar_view,
        railyard::app::sidebar::SidebarView::Inspector
    );
}

/// A workstation's NICs edited in the inspector: adding one leaves its on-board 10 GbE link
/// where it was (it used to move onto the new NIC); removing a NIC that carries a link asks
/// first, takes the link with it in one undo step, and keeps later NICs' links on their cards.
#[test]
fn nic_edits_in_the_inspector_keep_links_on_their_ports() {
    let mut harness = harness(app());
    open_preset(
        &mut harness,
        "4 workstations × 4 RTX 4090 (16 GPUs), 10 GbE switch",
    );
    let design = harness.state().document().design().clone();
    let node = design.devices[0].id;
    let select = |harness: &mut Harness<'_, RailyardApp>, id: DeviceId| {
        let selection = &mut harness.state_mut().canvas_state_mut().selection;
        selection.clear();
        selection.devices.insert(id);
        harness.run();
    };
    select(&mut harness, node);
    harness.get_by_label("Add NIC").click();
    harness.run();
    let after = harness.state().document().design();
    assert_eq!(after.links, design.links, "no link moved");
    assert_eq!(
        after
            .device(node)
            .and_then(|d| d.kind.as_node())
            .map(|n| n.nics.len()),
        Some(1)
    );
    assert_eq!(
        harness.state().document().history().undo_label(),
        Some("edit device")
    );

    // Two DGX H100 joined NIC 0 to NIC 0 and NIC 1 to NIC 1.
    let mut harness = harness_with_two_dgx_links();
    let dgx = harness.state().document().design().devices[0].id;
    let before = harness.state().document().design().clone();
    select(&mut harness, dgx);
    // The inspector's eight NIC rows end the list of "×" buttons (tabs close with one too).
    let removes: Vec<_> = harness.get_all_by_label("×").collect();
    assert!(removes.len() >= 8, "one per NIC");
    removes[removes.len() - 8].scroll_to_me();
    harness.run();
    let removes: Vec<_> = harness.get_all_by_label("×").collect();
    removes[removes.len() - 8].click();
    harness.run();
    // Nothing changed yet: the inspector names the link and asks.
    assert_eq!(*harness.state().document().design(), before);
    harness.get_by_label_contains("NIC 0 carries 1 link: ");
    // The link on NIC 1 moves down with its card, and the question says so.
    harness.get_by_label_contains(
        "The NICs after it move down a slot with their cables (1 link in all: NIC 1 becomes \
         NIC 0)",
    );
    harness.get_by_label("Remove NIC and links").scroll_to_me();
    harness.run();
    harness.get_by_label("Remove NIC and links").click();
    harness.run();
    let after = harness.state().document().design().clone();
    assert_eq!(after.links.len(), 1);
    // The link that was on NIC 1 is on the same card, now NIC 0.
    let kept = &after.links[0];
    let end = if kept.a.device == dgx { kept.a } else { kept.b };
    assert_eq!(end.port, railyard::model::Port::Nic(0));
    assert_eq!(
        after
            .device(dgx)
            .and_then(|d| d.kind.as_node())
            .map(|n| n.nics.len()),
        Some(7)
    );
    // One undo step brings the NIC and its link back exactly.
    harness.key_press_modifiers(Modifiers::COMMAND, Key::Z);
    harness.run();
    assert_eq!(*harness.state().document().design(), before);
}

/// Changing a node's model to one without the NICs its links are plugged into asks first,
/// naming the links; "Keep as it was" leaves the design alone, and applying removes them
/// with the change in one undo step. Two DGX H100 joined NIC 0–0 and 1–1; the first becomes
/// a Mac Studio, which has no NIC slots.
#[test]
fn a_model_change_that_strands_links_asks_first() {
    let mut harness = harness_with_two_dgx_links();
    let dgx = harness.state().document().design().devices[0].id;
    let before = harness.state().document().design().clone();
    {
        let selection = &mut harness.state_mut().canvas_state_mut().selection;
        selection.clear();
        selection.devices.insert(dgx);
    }
    harness.run();
    let choose_mac = |harness: &mut Harness<'_, RailyardApp>| {
        choose_model_in_inspector(
            harness,
            "Apple Mac Studio M3 Ultra (2025), 80-core GPU, 512GB",
        );
    };
    choose_mac(&mut harness);
    // Nothing changed yet: the inspector names both links and asks.
    assert_eq!(*harness.state().document().design(), before);
    harness.get_by_label_contains("leaves 2 link(s) on ports");
    harness.get_by_label("Keep as it was").scroll_to_me();
    harness.run();
    harness.get_by_label("Keep as it was").click();
    harness.run();
    assert_eq!(*harness.state().document().design(), before);
    assert!(harness.query_by_label("Keep as it was").is_none());

    choose_mac(&mut harness);
    harness
        .get_by_label("Change and remove links")
        .scroll_to_me();
    harness.run();
    harness.get_by_label("Change and remove links").click();
    harness.run();
    let after = harness.state().document().design().clone();
    assert!(after.links.is_empty());
    assert_eq!(
        after
            .device(dgx)
            .and_then(|d| d.kind.as_node())
            .map(|n| n.model.as_str().to_string()),
        Some("mac-studio-m3-ultra".to_string())
    );
    harness.key_press_modifiers(Modifiers::COMMAND, Key::Z);
    harness.run();
    assert_eq!(*harness.state().document().design(), before);
}

/// "What about H200?": changing an HGX H100 on 400 GbE RoCE to an HGX H200 keeps the node's
/// ConnectX-7 400GbE cards, which the new chassis takes, rather than the H200's default
/// InfiniBand NICs, which would turn all eight RoCE links into errors.
#[test]
fn a_model_change_keeps_the_nics_the_new_chassis_takes() {
    let mut harness = harness(app());
    open_preset(&mut harness, "4 × HGX H100, 400G RoCE");
    let design = harness.state().document().design().clone();
    let node = design
        .devices
        .iter()
        .find(|d| d.kind.as_node().is_some())
        .expect("a node");
    let nics_before = node.kind.as_node().map(|n| n.nics.clone());
    {
        let selection = &mut harness.state_mut().canvas_state_mut().selection;
        selection.clear();
        selection.devices.insert(node.id);
    }
    harness.run();
    choose_model_in_inspector(&mut harness, "NVIDIA (HGX H200 OEM) HGX H200 8-GPU server");
    let after = harness.state().document().design().clone();
    let changed = after
        .device(node.id)
        .and_then(|d| d.kind.as_node())
        .expect("the node");
    assert_eq!(changed.model.as_str(), "hgx-h200");
    assert_eq!(Some(changed.nics.clone()), nics_before);
    assert!(
        changed.nics.iter().all(|n| n.part.as_str() == "cx7-400gbe"),
        "{:?}",
        changed.nics
    );
    assert_eq!(after.links, design.links);
}

/// A workstation of RTX 3090s (cards that take a bridge) gets NVLink bridges between pairs in
/// the inspector, as one undoable edit; the bridge runs at the card's 450 Gb/s a direction.
#[test]
fn the_inspector_bridges_pairs_of_cards_that_take_a_bridge() {
    use railyard::model::ScaleUp;
    let mut harness = harness(app());
    harness.state_mut().add_part(&PartId::new("rtx-3090"));
    harness.run();
    let id = harness.state().document().design().devices[0].id;
    let scale_up = |h: &Harness<'_, RailyardApp>| {
        h.state()
            .document()
            .design()
            .device(id)
            .and_then(|d| d.kind.as_node())
            .map(|n| n.scale_up.clone())
            .expect("a node")
    };
    assert!(matches!(scale_up(&harness), ScaleUp::Pcie { .. }));
    {
        let selection = &mut harness.state_mut().canvas_state_mut().selection;
        selection.clear();
        selection.devices.insert(id);
    }
    harness.run();
    harness.get_by_label("between pairs").scroll_to_me();
    harness.run();
    harness.get_by_label("between pairs").click();
    harness.run();
    match scale_up(&harness) {
        ScaleUp::NvLinkBridgePairs {
            per_gpu_gbit_s,
            peer_to_peer,
            ..
        } => assert_eq!((per_gpu_gbit_s.gbit_s(), peer_to_peer), (450.0, false)),
        other => panic!("{other:?}"),
    }
    harness.key_press_modifiers(Modifiers::COMMAND, Key::Z);
    harness.run();
    assert!(matches!(scale_up(&harness), ScaleUp::Pcie { .. }));
}

/// A switch's model changed to one without SHARP and adaptive routing turns both off and says
/// so under its features; one undo brings model and features back.
#[test]
fn a_switch_model_without_its_features_turns_them_off_and_says_so() {
    let mut harness = harness(app());
    harness.state_mut().add_part(&PartId::new("qm9700"));
    harness.run();
    let id = harness.state().document().design().devices[0].id;
    let features = |h: &Harness<'_, RailyardApp>| match &h
        .state()
        .document()
        .design()
        .device(id)
        .expect("the switch")
        .kind
    {
        railyard::model::DeviceKind::Switch(s) => (
            s.model.to_string(),
            s.features.in_network_reduction,
            s.features.adaptive_routing,
        ),
        _ => panic!("a switch"),
    };
    assert_eq!(features(&harness), ("qm9700".to_string(), true, true));
    {
        let selection = &mut harness.state_mut().canvas_state_mut().selection;
        selection.clear();
        selection.devices.insert(id);
    }
    harness.run();
    choose_model_in_inspector(&mut harness, "MikroTik CRS317-1G-16S+RM");
    harness.run();
    assert_eq!(
        features(&harness),
        ("crs317-16x10g".to_string(), false, false)
    );
    harness.get_by_label("SHARP and adaptive routing turned off: `crs317-16x10g` has neither");
    harness.key_press_modifiers(Modifiers::COMMAND, Key::Z);
    harness.run();
    assert_eq!(features(&harness), ("qm9700".to_string(), true, true));
}

/// Picks `entry` ("vendor model") in the inspector's Model menu. The palette names the part
/// too, so the entry is the node opening the menu added.
fn choose_model_in_inspector(harness: &mut Harness<'_, RailyardApp>, entry: &str) {
    let before: Vec<egui::Rect> = harness
        .query_all_by_label(entry)
        .map(|n| n.rect())
        .collect();
    // The sidebar may be scrolled (to the question) with the combo under its top edge.
    harness
        .get_by_role_and_label(Role::ComboBox, "Model")
        .scroll_to_me();
    harness.run();
    harness
        .get_by_role_and_label(Role::ComboBox, "Model")
        .click();
    harness.run();
    // The menu scrolls once its list is longer than it is tall: bring the entry into view,
    // then click it where it now is.
    for scrolled in [false, true] {
        let item = harness
            .query_all_by_label(entry)
            .find(|n| !before.contains(&n.rect()))
            .unwrap_or_else(|| panic!("{entry} in the model menu"));
        if scrolled {
            item.click();
        } else {
            item.scroll_to_me();
        }
        harness.run();
    }
}

fn harness_with_two_dgx_links() -> Harness<'static, RailyardApp> {
    let mut harness = harness(app());
    for _ in 0..2 {
        harness.state_mut().add_part(&PartId::new("dgx-h100"));
        harness.run();
    }
    let catalog = Catalog::builtin();
    let ids: Vec<DeviceId> = harness
        .state()
        .document()
        .design()
        .devices
        .iter()
        .map(|d| d.id)
        .collect();
    for _ in 0..2 {
        let link = default_link(
            harness.state().document().design(),
            &catalog,
            ids[0],
            ids[1],
        )
        .expect("a free NIC on each");
        assert!(harness.state_mut().apply(Command::Insert {
            devices: vec![],
            links: vec![link],
            groups: vec![],
        }));
        harness.run();
    }
    harness
}

/// A typed value outside a field's range is refused with the reason beside the field, not
/// clamped: 99999 GPUs in a 4-slot chassis stay 4 (it once became 16) and −5 Gb/s stays 10 (it once became
/// 0.001); a valid value then goes through and the reason goes away.
#[test]
fn an_out_of_range_value_is_refused_with_the_reason() {
    let mut harness = harness(app());
    open_preset(
        &mut harness,
        "4 workstations × 4 RTX 4090 (16 GPUs), 10 GbE switch",
    );
    let design = harness.state().document().design().clone();
    let node = design.devices[0].id;
    let gpus = |h: &Harness<'_, RailyardApp>| {
        h.state()
            .document()
            .design()
            .device(node)
            .and_then(|d| d.kind.as_node())
            .map(|n| n.gpu_count)
    };
    {
        let selection = &mut harness.state_mut().canvas_state_mut().selection;
        selection.clear();
        selection.devices.insert(node);
    }
    harness.run();
    let type_into = |harness: &mut Harness<'_, RailyardApp>, field: &str, text: &str| {
        harness
            .get_by_role_and_label(Role::SpinButton, field)
            .click();
        harness.run();
        harness.key_press_modifiers(Modifiers::COMMAND, Key::A);
        harness
            .get_by_role_and_label(Role::SpinButton, field)
            .type_text(text);
        harness.key_press(Key::Enter);
        harness.run();
    };
    type_into(&mut harness, "GPUs", "99999");
    assert_eq!(gpus(&harness), Some(4));
    // The workstation chassis has 4 GPU slots (catalog): the reason names them, and 8 is
    // refused as well.
    harness.get_by_label_contains("99999 refused: this chassis holds 1 to 4 GPUs (4 GPU slots)");
    type_into(&mut harness, "GPUs", "8");
    assert_eq!(gpus(&harness), Some(4));
    harness.get_by_label_contains("8 refused: this chassis holds 1 to 4 GPUs (4 GPU slots)");
    type_into(&mut harness, "GPUs", "2");
    assert_eq!(gpus(&harness), Some(2));
    assert!(harness.query_by_label_contains("refused").is_none());

    // A link's rate: −5 Gb/s is refused too.
    let link = design.links[0].id;
    {
        let selection = &mut harness.state_mut().canvas_state_mut().selection;
        selection.clear();
        selection.links.insert(link);
    }
    harness.run();
    type_into(&mut harness, "Per lane", "-5");
    let rate = harness
        .state()
        .document()
        .design()
        .link(link)
        .map(|l| l.rate_gbit_s);
    assert_eq!(rate, Some(Bandwidth::from_gbit_s(10.0)));
    harness.get_by_label_contains("-5 Gb/s refused: a lane runs at 0.001 to 100,000 Gb/s");
}

/// Issue 19's bulk wiring: 4 DGX H100 (8 NDR NICs each) and 8 QM9700 leaves added through the
/// palette's path, Select All, right-click, "NIC i → rail-i leaf": 4 × 8 = 32 InfiniBand links
/// at 400 Gb/s, NIC i of every node on the i-th leaf (qm9700-4 … qm9700-11: name order, 11 after 9),
/// node k on port k of each leaf; one undo step takes all 32 away.
#[test]
fn bulk_wiring_of_4_dgx_nodes_produces_32_rail_links() {
    let mut harness = harness(app());
    for part in ["dgx-h100"; 4].into_iter().chain(["qm9700"; 8]) {
        harness.state_mut().add_part(&PartId::new(part));
        harness.run();
    }
    // With only the nodes selected the wiring shows, greyed, and says to select the leaves.
    let node_ids: Vec<DeviceId> = harness.state().document().design().devices[..4]
        .iter()
        .map(|d| d.id)
        .collect();
    {
        let selection = &mut harness.state_mut().canvas_state_mut().selection;
        selection.clear();
        selection.devices.extend(node_ids);
    }
    harness.run();
    right_click_first_device(&mut harness);
    assert!(
        harness
            .get_by_label("NIC i → rail-i leaf")
            .accesskit_node()
            .is_disabled()
    );
    harness.key_press(Key::Escape);
    harness.run();
    harness.key_press_modifiers(Modifiers::COMMAND, Key::A);
    harness.run();
    let design = harness.state().document().design().clone();
    assert_eq!(harness.state().canvas_state().selection.devices.len(), 12);
    let nodes: Vec<DeviceId> = design.devices[..4].iter().map(|d| d.id).collect();
    let leaves: Vec<DeviceId> = design.devices[4..].iter().map(|d| d.id).collect();
    assert_eq!(
        design.device(leaves[7]).map(|d| d.name.as_str()),
        Some("qm9700-11")
    );

    right_click_first_device(&mut harness);
    harness.get_by_label("NIC i → rail-i leaf").click();
    harness.run();

    let wired = harness.state().document().design();
    assert_eq!(wired.links.len(), 32);
    for (k, node) in nodes.iter().enumerate() {
        for (rail, leaf) in leaves.iter().enumerate() {
            let link = wired
                .links
                .iter()
                .find(|l| l.a.device == *node && l.a.port == Port::Nic(rail as u32))
                .unwrap_or_else(|| panic!("node {k} NIC {rail} wired"));
            assert_eq!(link.b.device, *leaf, "NIC {rail} on leaf {rail}");
            assert_eq!(link.b.port, Port::Switch(k as u32));
            assert_eq!(link.tech, LinkTech::InfiniBand);
            assert_eq!(link.rate_gbit_s, Bandwidth::from_gbit_s(400.0));
        }
    }
    assert_eq!(
        harness.state().status(),
        "32 links added: NIC i → rail-i leaf"
    );
    harness.key_press_modifiers(Modifiers::COMMAND, Key::Z);
    harness.run();
    assert_eq!(*harness.state().document().design(), design);
}

/// Right-clicks the first device of the design.
fn right_click_first_device(harness: &mut Harness<'_, RailyardApp>) {
    let at = harness
        .state()
        .canvas_state()
        .to_screen(harness.state().document().design().devices[0].pos)
        .expect("the canvas has drawn");
    click_at(harness, at, egui::PointerButton::Secondary);
}

/// The shortcuts promise it: a double-click on a part in the palette adds one at the middle
/// of the view, as one undo step.
#[test]
fn double_clicking_a_part_in_the_palette_adds_it() {
    // Frames a sixtieth of a second apart, as a screen's: the default quarter second would
    // put the two clicks further apart than a double-click's 0.3 s.
    let a = app();
    let mut harness = Harness::builder()
        .with_size(WINDOW)
        .with_max_steps(12)
        .with_step_dt(1.0 / 60.0)
        .build_eframe(move |_cc| a);
    let before = harness.state().document().design().devices.len();
    let at = harness.get_by_label("NVIDIA DGX H100 (8U)").rect().center();
    harness.event(egui::Event::PointerMoved(at));
    harness.step();
    for _ in 0..2 {
        for pressed in [true, false] {
            harness.event(egui::Event::PointerButton {
                pos: at,
                button: egui::PointerButton::Primary,
                pressed,
                modifiers: Modifiers::NONE,
            });
        }
    }
    harness.run();
    let design = harness.state().document().design().clone();
    assert_eq!(design.devices.len(), before + 1);
    assert!(design.devices.iter().any(|d| {
        d.kind
            .as_node()
            .is_some_and(|n| n.model.as_str() == "dgx-h100")
    }));
    harness.key_press_modifiers(Modifiers::COMMAND, Key::Z);
    harness.run();
    assert_eq!(harness.state().document().design().devices.len(), before);
}

/// Presses and releases `button` at screen point `at`, a frame each, then settles.
fn click_at(harness: &mut Harness<'_, RailyardApp>, at: egui::Pos2, button: egui::PointerButton) {
    for pressed in [true, false] {
        harness.event(egui::Event::PointerButton {
            pos: at,
            button,
            pressed,
            modifiers: Modifiers::NONE,
        });
        harness.step();
    }
    harness.run();
}

/// The Mac preset is a full Thunderbolt 5 mesh of 4 (6 links). With one link taken out,
/// Full mesh of selected with… > Thunderbolt 5 adds that one back and skips the 5 others;
/// asked again, it adds nothing and says so.
#[test]
fn full_mesh_from_the_submenu_adds_only_the_missing_pair() {
    let mut harness = harness(app());
    open_preset(&mut harness, "4 × Mac Studio, Thunderbolt 5 mesh");
    let full = harness.state().document().design().clone();
    assert_eq!(full.links.len(), 6);
    let missing = full.links[0].clone();
    assert!(harness.state_mut().apply(Command::Remove {
        devices: vec![],
        links: vec![missing.id],
        groups: vec![],
    }));
    harness.run();
    for expected in [
        "1 link added: full mesh with Thunderbolt 5 (5 already wired, skipped)",
        "Not wired: everything selected is wired already (6 skipped)",
    ] {
        harness.key_press_modifiers(Modifiers::COMMAND, Key::A);
        harness.run();
        right_click_first_device(&mut harness);
        harness
            .get_by_label_contains("Full mesh of selected with")
            .click();
        harness.run();
        harness
            .query_all_by_label("Thunderbolt 5")
            .find(|n| n.accesskit_node().role() == Role::Button)
            .expect("the submenu's Thunderbolt 5")
            .click();
        harness.run();
        assert_eq!(harness.state().status(), expected);
    }
    let design = harness.state().document().design();
    assert_eq!(design.links.len(), 6);
    let added = design.links.last().expect("a link");
    assert_eq!(
        (
            added.a.device,
            added.b.device,
            added.tech,
            added.rate_gbit_s
        ),
        (
            missing.a.device,
            missing.b.device,
            missing.tech,
            missing.rate_gbit_s
        )
    );
}

#[test]
fn the_logical_view_shows_the_ring_trees_and_in_switch_groups_and_escape_closes_it() {
    let mut harness = harness(app());
    open_preset(&mut harness, "4 × HGX H100, 400G RoCE");
    click_menu(&mut harness, "View", "Logical view…");
    harness.run();
    // 4 nodes × 8 GPUs; 8 NICs each, so 8 rail rings; 28 NVSwitch hops and 4 RoCE hops.
    assert!(
        harness
            .query_by_label_contains("32 GPUs on 4 nodes; 8 rings side by side")
            .is_some()
    );
    assert!(harness.query_by_label("28 × NVLink (NVSwitch)").is_some());
    assert!(harness.query_by_label("4 × RoCEv2").is_some());
    // The trees: NCCL's double binary tree over the 4 nodes, one pair per NIC.
    harness.get_by_label("Trees").click();
    harness.run();
    assert!(
        harness
            .query_by_label_contains("32 GPUs in 4 domains; 8 pairs of trees side by side")
            .is_some()
    );
    assert!(harness.query_by_label("Tree 0").is_some());
    assert!(harness.query_by_label("Tree 1").is_some());
    // The in-switch groups: each HGX's NVSwitch runs NVLS; no Ethernet switch reduces.
    harness.get_by_label("In-switch reduction").click();
    harness.run();
    assert!(
        harness
            .query_by_label_contains("4 NVSwitch domains reduce in the switch, 32 GPUs in all")
            .is_some()
    );
    assert!(
        harness
            .query_by_label("No switch here reduces in the network.")
            .is_some()
    );
    harness.key_press(egui::Key::Escape);
    harness.run();
    assert!(harness.query_by_label("Tree 0").is_none());
    assert!(
        harness
            .query_by_label_contains("4 NVSwitch domains")
            .is_none()
    );
    // Closed, it leaves nothing asking for frames: the window is idle again.
    assert_idle(&mut harness);
}

/// A large file (over 8 MB: 1,536 DGX, three tiers) is read off the UI thread: the window
/// keeps drawing with a small window naming it, and it opens in a tab when it is in. A large
/// file with a mistake deep in its links ends in the banner, at its line.
#[test]
fn a_large_file_opens_in_the_background() {
    use railyard::generate::{Template, TemplateSpec, generate};
    let dir = tempfile::tempdir().expect("temp dir");
    let mut spec = TemplateSpec::new(Template::RailOptimized);
    spec.nodes = Some(1536);
    spec.tiers = 3;
    let design = generate(&spec, &Catalog::builtin()).expect("generated");
    let path = dir.path().join("big.ron");
    railyard::io::save_design(&path, &design).expect("writes");
    assert!(std::fs::metadata(&path).expect("written").len() > 8 << 20);
    let mut harness = harness(app());
    assert!(harness.state_mut().open_path(&path));
    harness.step();
    assert_eq!(harness.state().document().path(), None, "not in yet");
    harness.get_by_label_contains("Opening big.ron (");
    // In, it takes the place of the untouched Untitled tab.
    common::app::wait_until(&mut harness, "the large file", |app| {
        app.document().path() == Some(path.as_path())
    });
    assert_eq!(harness.state().tab_count(), 1);
    assert_eq!(harness.state().document().design(), &design);

    // The same file with an unreadable rate deep in its links.
    let text = std::fs::read_to_string(&path).expect("reads");
    let (at, _) = text
        .match_indices("rate_gbit_s: 400.0")
        .nth(30_000)
        .expect("that many links");
    let line = text[..at].lines().count();
    let broken = format!("{}rate_gbit_s: ?{}", &text[..at], &text[at + 18..]);
    let bad = dir.path().join("bad.ron");
    std::fs::write(&bad, broken).expect("writes");
    assert!(harness.state_mut().open_path(&bad));
    common::app::wait_until(&mut harness, "the banner", |app| {
        app.document().banner.is_some()
    });
    assert_eq!(harness.state().tab_count(), 1);
    let banner = harness
        .state()
        .document()
        .banner
        .clone()
        .unwrap_or_default();
    assert!(banner.contains(&format!("bad.ron:{line}:")), "{banner}");
}

/// The screen rectangle of the canvas legend, from its texts: from its heading's top left
/// to the right end of its widest line, down to the canvas bottom.
fn legend_rect(harness: &Harness<'_, RailyardApp>, heading: &str) -> egui::Rect {
    let texts = painted_text_rects(harness);
    let (_, top) = texts
        .iter()
        .find(|(t, _)| t == heading)
        .unwrap_or_else(|| panic!("no legend {heading}"));
    let right = texts
        .iter()
        .filter(|(_, r)| r.min.y >= top.min.y && (r.min.x - top.min.x).abs() < 40.0)
        .map(|(_, r)| r.max.x)
        .fold(top.max.x, f32::max);
    egui::Rect::from_min_max(top.min, egui::pos2(right, f32::INFINITY))
}

/// View > Link colours > By rail, and the frames that refit the view to the taller legend.
fn colour_links_by_rail(harness: &mut Harness<'_, RailyardApp>) {
    click_menu(harness, "View", "Link colours");
    harness
        .query_all_by_label("By rail")
        .next()
        .expect("By rail")
        .click();
    for _ in 0..3 {
        harness.run();
    }
}

/// At zoom to fit, the legend covers no device, and a colour mode with a taller legend
/// (8 rails against 1 technology) refits the view while it is still the fitted one.
#[test]
fn a_fitted_design_stays_clear_of_the_legend_when_it_grows() {
    let mut harness = harness(app());
    open_preset(&mut harness, "DGX H100 SuperPOD scalable unit (32 nodes)");
    for _ in 0..3 {
        harness.run();
    }
    let clear = |harness: &Harness<'_, RailyardApp>, heading: &str| {
        let legend = legend_rect(harness, heading);
        // The legend's top right corner in canvas units: no device box (nodes are 100 × 56,
        // centred on their position) may reach into the region left of and below it.
        let canvas = harness.state().canvas_state();
        let corner = canvas
            .to_canvas(egui::pos2(legend.max.x, legend.min.y))
            .expect("drawn");
        let covered: Vec<String> = harness
            .state()
            .document()
            .design()
            .devices
            .iter()
            .filter(|d| d.pos.x - 50.0 < corner.x && d.pos.y + 28.0 > corner.y)
            .map(|d| d.name.clone())
            .collect();
        assert!(covered.is_empty(), "{heading} covers {covered:?}");
    };
    clear(&harness, "Links by technology");
    colour_links_by_rail(&mut harness);
    clear(&harness, "Links by rail");
}

/// A click on the legend folds it to its heading, so zoomed in it covers no device; the
/// next click opens it again with its 8 rails.
#[test]
fn a_click_folds_the_legend_and_another_opens_it() {
    let mut harness = harness(app());
    open_preset(&mut harness, "DGX H100 SuperPOD scalable unit (32 nodes)");
    colour_links_by_rail(&mut harness);
    let rails_listed = |harness: &Harness<'_, RailyardApp>| {
        painted_text_rects(harness)
            .iter()
            .filter(|(t, _)| t.starts_with("rail "))
            .count()
    };
    assert_eq!(rails_listed(&harness), 8);
    let click_on = |harness: &mut Harness<'_, RailyardApp>, heading: &str| {
        let at = legend_rect(harness, heading).min + egui::vec2(20.0, 6.0);
        click_at(harness, at, egui::PointerButton::Primary);
    };
    // A device selected: a click on empty canvas would clear it.
    let first = harness.state().document().design().devices[0].id;
    {
        let selection = &mut harness.state_mut().canvas_state_mut().selection;
        selection.clear();
        selection.devices.insert(first);
    }
    harness.run();
    let selection_before = harness.state().canvas_state().selection.clone();
    click_on(&mut harness, "Links by rail");
    assert!(harness.state().canvas_state().legend_folded);
    assert_eq!(rails_listed(&harness), 0);
    legend_rect(&harness, "Links by rail · click to show");
    // The click was the legend's, not the canvas's: the selection stands.
    assert_eq!(harness.state().canvas_state().selection, selection_before);
    // Kept for the next start, and a tab opened now starts folded too.
    assert!(harness.state().prefs().legend_folded);
    open_preset(&mut harness, "4 × Mac Studio, Thunderbolt 5 mesh");
    assert!(harness.state().canvas_state().legend_folded);
    harness.key_press_modifiers(Modifiers::COMMAND, Key::W);
    harness.run();
    assert_eq!(harness.state().tab_count(), 1);
    click_on(&mut harness, "Links by rail · click to show");
    assert!(!harness.state().canvas_state().legend_folded);
    assert!(!harness.state().prefs().legend_folded);
    assert_eq!(rails_listed(&harness), 8);
}

/// Labels give way in stages and are never cut inside a word ("mac-studio-m…"). The GB200
/// pod at fit in the window (18 %): its 144 trays' names are too small to read, so none is
/// drawn, and the counts speak instead (each unit's frame, each switch row). In
/// presentation mode (30 %) the trays show shorter forms that keep whole words from the end
/// ("…10").
#[test]
fn labels_give_way_to_counts_and_are_never_cut_inside_a_word() {
    let mut harness = harness(app());
    open_preset(&mut harness, "GB200 NVL72 pod: 8 racks, 576 GPUs");
    for _ in 0..3 {
        harness.run();
    }
    let names: Vec<String> = harness
        .state()
        .document()
        .design()
        .devices
        .iter()
        .map(|d| d.name.clone())
        .collect();
    let cut_inside_a_word = |texts: &[String]| -> Vec<String> {
        texts
            .iter()
            .filter(|t| {
                t.strip_suffix('…')
                    .is_some_and(|head| names.iter().any(|n| n.starts_with(head)))
            })
            .cloned()
            .collect()
    };
    let texts = painted_texts(&harness);
    assert!(cut_inside_a_word(&texts).is_empty(), "{texts:?}");
    assert!(
        !texts
            .iter()
            .any(|t| t.starts_with("…") || names.contains(t)),
        "no tray name at 18 %: {texts:?}"
    );
    for count in [
        "su-01 · 18 nodes, 72 GPUs",
        "leaf · 4 × qm9700 in each unit",
        "spine · 9 × qm9700",
    ] {
        assert!(texts.iter().any(|t| t == count), "{count} in {texts:?}");
    }

    harness.key_press(Key::F11);
    for _ in 0..3 {
        harness.run();
    }
    let texts = painted_texts(&harness);
    assert!(cut_inside_a_word(&texts).is_empty(), "{texts:?}");
    let shortened: Vec<&String> = texts.iter().filter(|t| t.starts_with('…')).collect();
    assert!(!shortened.is_empty(), "{texts:?}");
    for t in shortened {
        let tail = t.trim_start_matches('…');
        assert!(
            names
                .iter()
                .any(|n| n.ends_with(tail)
                    && n[..n.len() - tail.len()].ends_with(['-', '_', '.', ' '])),
            "{t} is no whole-word tail of a name"
        );
    }
}

/// An advice item shows the change it advises under its message, not only on hover: the
/// Thunderbolt mesh's advice says where tensor parallelism belongs (Macs take no faster NIC).
#[test]
fn advice_shows_its_suggestion() {
    let mut harness = harness(app());
    open_preset(&mut harness, "4 × Mac Studio, Thunderbolt 5 mesh");
    harness.get_by_label_contains("→ keep tensor parallelism inside as few Macs");
}

/// The collective library is the design's: the inspector (nothing selected) names what auto
/// resolves to, greys out a library that cannot run the design with its reason, and a choice
/// is one undo step that the sidebar's collective follows.
#[test]
fn the_design_chooses_its_collective_library_in_the_inspector() {
    use railyard::analysis::collective::Library;
    use railyard::model::LibraryChoice;
    let mut harness = harness(app());
    open_preset(&mut harness, "4 × Mac Studio, Thunderbolt 5 mesh");
    let library = |harness: &Harness<'_, RailyardApp>| {
        let (_, analysis) = harness.state().analysis().expect("an analysis");
        match &analysis.collective {
            Some(Ok(r)) => r.library,
            other => panic!("a collective: {other:?}"),
        }
    };
    assert_eq!(library(&harness), Library::MlxJaccl);
    harness.get_by_label("Collective library").click();
    harness.run();
    // NCCL does not run on Apple silicon: offered, but not to be chosen.
    assert!(harness.get_by_label("NCCL").accesskit_node().is_disabled());
    harness.get_by_label("Gloo (PyTorch, TCP)").click();
    harness.run();
    wait_for_analysis(&mut harness);
    assert_eq!(
        harness.state().document().design().library,
        LibraryChoice::Gloo
    );
    assert_eq!(library(&harness), Library::Gloo);
    harness.key_press_modifiers(Modifiers::COMMAND, Key::Z);
    harness.run();
    wait_for_analysis(&mut harness);
    assert_eq!(
        harness.state().document().design().library,
        LibraryChoice::Auto
    );
    assert_eq!(library(&harness), Library::MlxJaccl);
}

/// The NCCL release is the design's too: the inspector offers the releases whose tables the
/// model holds, a choice is one undo step, and the sidebar's collective runs that release's
/// tables and says so. On the SuperPOD preset, 1 GiB runs NVLSTree across its 32 nodes:
/// 2 log2(32) = 10 network steps of 20.9 µs in 2.30.7, of 14 µs in 2.21.5, 69 µs less.
#[test]
fn the_design_chooses_its_nccl_release_in_the_inspector() {
    use railyard::model::NcclRelease;
    let mut harness = harness(app());
    open_preset(&mut harness, "DGX H100 SuperPOD scalable unit (32 nodes)");
    let result = |harness: &Harness<'_, RailyardApp>| {
        let (_, analysis) = harness.state().analysis().expect("an analysis");
        match &analysis.collective {
            Some(Ok(r)) => (r.algorithm.to_string(), r.latency_us, r.assumes.clone()),
            other => panic!("a collective: {other:?}"),
        }
    };
    let (algorithm, modelled_us, assumes) = result(&harness);
    assert_eq!(algorithm, "nvls-tree");
    assert!(assumes.starts_with("NCCL 2.30.7 defaults"), "{assumes}");
    harness.get_by_label("NCCL release").click();
    harness.run();
    harness.get_by_label("2.21.5").click();
    harness.run();
    wait_for_analysis(&mut harness);
    assert_eq!(
        harness.state().document().design().nccl_release,
        Some(NcclRelease::new(2, 21, 5))
    );
    let (algorithm, older_us, assumes) = result(&harness);
    assert_eq!(algorithm, "nvls-tree");
    assert!(assumes.starts_with("NCCL 2.21.5 defaults"), "{assumes}");
    // The sidebar names the release where it shows the time.
    harness.get_by_label_contains("NCCL 2.21.5, nvls-tree / Simple: latency");
    assert!(
        (modelled_us - older_us - 10.0 * 6.9).abs() < 1e-6,
        "{modelled_us} {older_us}"
    );
    harness.key_press_modifiers(Modifiers::COMMAND, Key::Z);
    harness.run();
    wait_for_analysis(&mut harness);
    assert_eq!(harness.state().document().design().nccl_release, None);
    assert!((result(&harness).1 - modelled_us).abs() < 1e-9);
}

/// NCCL_BUFFSIZE is the design's as well: a choice in the inspector is one undo step and the
/// sidebar's collective names it. On the SuperPOD preset 1 GiB runs NVLSTree, whose chunks are
/// NCCL's NVLS chunks whatever the buffer, so the time stays.
#[test]
fn the_design_chooses_its_nccl_buffer_in_the_inspector() {
    use railyard::model::NcclBuffer;
    let mut harness = harness(app());
    open_preset(&mut harness, "DGX H100 SuperPOD scalable unit (32 nodes)");
    let result = |harness: &Harness<'_, RailyardApp>| {
        let (_, analysis) = harness.state().analysis().expect("an analysis");
        match &analysis.collective {
            Some(Ok(r)) => (r.time_us, r.assumes.clone()),
            other => panic!("a collective: {other:?}"),
        }
    };
    let (default_us, assumes) = result(&harness);
    assert!(assumes.starts_with("NCCL 2.30.7 defaults:"), "{assumes}");
    harness.get_by_label("NCCL buffer").click();
    harness.run();
    harness.get_by_label("8 MiB").click();
    harness.run();
    wait_for_analysis(&mut harness);
    assert_eq!(
        harness.state().document().design().nccl_buffer,
        Some(NcclBuffer::new(8 << 20).unwrap())
    );
    let (eight_us, assumes) = result(&harness);
    assert!(
        assumes.starts_with("NCCL 2.30.7 defaults but NCCL_BUFFSIZE 8 MiB:"),
        "{assumes}"
    );
    assert_eq!(eight_us, default_us);
    harness.key_press_modifiers(Modifiers::COMMAND, Key::Z);
    harness.run();
    wait_for_analysis(&mut harness);
    assert_eq!(harness.state().document().design().nccl_buffer, None);
}

#[test]
fn the_sidebar_says_when_no_published_run_speaks_for_the_time() {
    // Four H100 servers on one RoCE switch: no system of that kind was measured, so the
    // all-reduce's time carries no accuracy figure, and the sidebar says it is unknown.
    let mut harness = harness(app());
    open_preset(&mut harness, "4 × HGX H100, 400G RoCE");
    let (_, analysis) = harness.state().analysis().expect("an analysis");
    let checked = analysis.checked.as_ref().expect("a check");
    assert_eq!(checked.against, None);
    assert_eq!(
        checked.kind.as_deref(),
        Some("Hopper GPUs on NVSwitch across RoCEv2 with RDMA, NCCL")
    );
    harness.get_by_label("No counted published run of this kind near this size: accuracy unknown");
}

/// A fitted view refits when the legend grows over the design (a what-if adds its "failed"
/// row), but not when it shrinks again and the design stays clear: restoring the links
/// leaves the view where it is, so nothing moves under the pointer a second time.
#[test]
fn a_legend_that_shrinks_leaves_the_view_be() {
    let mut harness = harness(app());
    open_preset(&mut harness, "4 × Mac Studio, Thunderbolt 5 mesh");
    for _ in 0..3 {
        harness.run();
    }
    let design = harness.state().document().design().clone();
    let first = design.links[0].id;
    let fail = railyard::app::whatif::scope_command(
        &design,
        railyard::analysis::whatif::Scope::Link(first),
        railyard::model::LinkState::Failed,
    )
    .expect("a link to fail");
    let fitted = harness.state().canvas_state().scene_rect;
    assert!(harness.state_mut().apply(fail));
    for _ in 0..3 {
        harness.run();
    }
    let failed = harness.state().canvas_state().scene_rect;
    assert_ne!(
        failed, fitted,
        "the grown legend reached the design: refitted"
    );
    let now = harness.state().document().design().clone();
    let restore = railyard::app::whatif::scope_command(
        &now,
        railyard::analysis::whatif::Scope::Link(first),
        railyard::model::LinkState::Up,
    )
    .expect("a link to restore");
    assert!(harness.state_mut().apply(restore));
    for _ in 0..3 {
        harness.run();
    }
    assert_eq!(harness.state().canvas_state().scene_rect, failed);
}

/// A link selected from a bundle says in the inspector that it is one of the bundle's, so a
/// speed set there is not taken for the whole bundle's; a lone link says nothing of it.
#[test]
fn the_inspector_says_a_bundled_link_is_one_of_several() {
    let mut harness = harness(app());
    let first = two_nodes_one_link(&mut harness);
    let says = |harness: &Harness<'_, RailyardApp>| {
        painted_texts(harness)
            .iter()
            .any(|t| t.starts_with("One of ") && t.ends_with("edits change this one only"))
    };
    assert!(!says(&harness), "a lone link");
    cable_first_two_and_select(&mut harness);
    let selection = &mut harness.state_mut().canvas_state_mut().selection;
    selection.clear();
    selection.links.insert(first);
    harness.run();
    assert!(
        painted_texts(&harness)
            .iter()
            .any(|t| t == "One of 2 links drawn as one line: edits change this one only"),
        "{:?}",
        painted_texts(&harness)
    );
}

/// With more tabs than the bar can show, the tab just opened is scrolled into view (and a
/// long design name is cut to fit, whole on hover).
#[test]
fn the_tab_just_opened_is_in_view() {
    let width = 900.0;
    let mut harness = Harness::builder()
        .with_size(egui::vec2(width, 700.0))
        .with_max_steps(12)
        .build_eframe(|_cc| app());
    for preset in [
        "4 × Mac Studio, Thunderbolt 5 mesh",
        "2 workstations × 4 RTX 4090 (8 GPUs), 25 GbE",
        "4 workstations × 4 RTX 4090 (16 GPUs), 10 GbE switch",
        "2 × DGX Spark, one QSFP cable",
        "4 × HGX H100, 400G RoCE",
    ] {
        open_preset(&mut harness, preset);
    }
    harness.run();
    let tabs = |h: &Harness<'_, RailyardApp>, label: &str| -> Vec<egui::Rect> {
        h.query_all_by_label(label)
            .map(|n| n.rect())
            .filter(|r| r.min.y < 60.0)
            .collect()
    };
    // The tabs together are wider than the window.
    let first = tabs(&harness, "4 × Mac Studio M3 Ultra, Thunde…");
    assert_eq!(first.len(), 1, "the first preset's tab, its name cut");
    let last = tabs(&harness, "4 × HGX H100 on 400G RoCE");
    assert_eq!(last.len(), 1);
    assert!(
        last[0].min.x >= 0.0 && last[0].max.x <= width,
        "the active tab at {:?} is outside the {width}-point window",
        last[0]
    );
}

/// A Mac has no NIC and no slot for one: the inspector says so instead of an empty list and
/// a button that could only be refused.
#[test]
fn a_mac_in_the_inspector_offers_no_nic() {
    let mut harness = harness(app());
    open_preset(&mut harness, "4 × Mac Studio, Thunderbolt 5 mesh");
    let mac = harness.state().document().design().devices[0].id;
    {
        let selection = &mut harness.state_mut().canvas_state_mut().selection;
        selection.clear();
        selection.devices.insert(mac);
    }
    harness.run();
    harness.get_by_label_contains("this machine takes no add-in NIC");
    assert!(harness.query_by_label("Add NIC").is_none());
}
