//! The canvas driven through egui_kittest: a small app holds a design, its history and the
//! canvas state, applies the commands the canvas returns, and deletes the selection on the
//! Delete key (as the window shell does). No rendering: these run the UI only.

mod common;

use common::painted::painted_texts;
use egui::{Event, Key, Modifiers, MouseWheelUnit, PointerButton, Pos2, Rect, Vec2, pos2, vec2};
use egui_kittest::Harness;
use egui_kittest::kittest::Queryable;
use railyard::app::canvas::{
    CanvasEvent, CanvasOverlay, CanvasState, EMPTY_CANVAS_HINT, HANDLE_HINT, PaletteDrop,
    canvas_ui, zoom_to_fit,
};
use railyard::app::link_info::LinkLoads;
use railyard::model::command::{Command, History};
use railyard::model::factory::device_from_part;
use railyard::model::{Catalog, Design, DeviceId, Endpoint, LinkId, LinkTech, PartId, Port, Pos};
use std::collections::{BTreeSet, HashMap, HashSet};
use std::time::Duration;

struct App {
    design: Design,
    history: History,
    canvas: CanvasState,
    catalog: Catalog,
    statuses: Vec<String>,
    no_highlight: HashSet<LinkId>,
    /// Link loads for the heatmap, if on.
    heat: Option<HashMap<LinkId, f64>>,
}

/// Node a at (0, 0), an InfiniBand leaf at (300, 0), node b at (0, 200), an Ethernet switch
/// at (300, 200); viewed at zoom 1 with (0, 0) at the centre of a 1000×700 window.
fn app() -> App {
    let catalog = Catalog::builtin();
    let mut design = Design::new("test");
    for (part, x, y) in [
        ("dgx-h100", 0.0, 0.0),
        ("qm9700", 300.0, 0.0),
        ("dgx-h100", 0.0, 200.0),
        ("crs317-16x10g", 300.0, 200.0),
    ] {
        let id = design.next_device_id();
        let d = device_from_part(
            &catalog,
            &PartId::new(part),
            id,
            format!("{part}-{}", id.0),
            Pos::new(x, y),
        )
        .unwrap();
        design.insert_device(d);
    }
    let canvas = CanvasState {
        scene_rect: Rect::from_center_size(Pos2::ZERO, vec2(1000.0, 700.0)),
        ..CanvasState::default()
    };
    App {
        design,
        history: History::default(),
        canvas,
        catalog,
        statuses: Vec::new(),
        no_highlight: HashSet::new(),
        heat: None,
    }
}

fn harness(app: App) -> Harness<'static, App> {
    harness_stepping(app, 0.25)
}

/// `harness` with frames `step_dt` seconds apart (a double-click needs them under 0.3 s
/// apart over its four events).
fn harness_stepping(app: App, step_dt: f32) -> Harness<'static, App> {
    let mut h = Harness::builder()
        .with_size(vec2(1000.0, 700.0))
        .with_step_dt(step_dt)
        .build_ui_state(
            |ui, app: &mut App| {
                // The loads of a made-up collective, when a test gives link heat.
                let loads = app.heat.as_ref().map(|utilisation| LinkLoads::Known {
                    utilisation,
                    collective: "all-reduce of 1 GiB (ring/Simple)".into(),
                });
                let overlay = CanvasOverlay {
                    catalog: &app.catalog,
                    heat: app.heat.as_ref(),
                    highlight_links: &app.no_highlight,
                    loads: loads.as_ref(),
                };
                let events = canvas_ui(ui, &app.design, &mut app.canvas, &overlay);
                for event in events {
                    match event {
                        CanvasEvent::Command(c) => app.history.apply(&mut app.design, c).unwrap(),
                        CanvasEvent::Status(s) => app.statuses.push(s),
                    }
                }
                if ui.input(|i| i.key_pressed(Key::Delete)) && !app.canvas.selection.is_empty() {
                    let remove = Command::Remove {
                        devices: app.canvas.selection.devices.iter().copied().collect(),
                        links: app.canvas.selection.links.iter().copied().collect(),
                        groups: vec![],
                    };
                    app.history.apply(&mut app.design, remove).unwrap();
                }
            },
            app,
        );
    h.run();
    h
}

fn screen(h: &Harness<'_, App>, x: f32, y: f32) -> Pos2 {
    h.state()
        .canvas
        .to_screen(Pos::new(x, y))
        .expect("a frame was drawn")
}

fn press(h: &Harness<'_, App>, at: Pos2, modifiers: Modifiers) {
    h.event(Event::PointerMoved(at));
    h.event(Event::PointerButton {
        pos: at,
        button: PointerButton::Primary,
        pressed: true,
        modifiers,
    });
}

fn release(h: &Harness<'_, App>, at: Pos2, modifiers: Modifiers) {
    h.event(Event::PointerButton {
        pos: at,
        button: PointerButton::Primary,
        pressed: false,
        modifiers,
    });
}

/// Click at a screen point.
fn click_on_screen(h: &mut Harness<'_, App>, at: Pos2) {
    press(h, at, Modifiers::NONE);
    release(h, at, Modifiers::NONE);
    h.run();
}

/// Click at canvas point (x, y).
fn click(h: &mut Harness<'_, App>, (x, y): (f32, f32), modifiers: Modifiers) {
    let at = screen(h, x, y);
    h.event(Event::ModifiersChanged(modifiers));
    press(h, at, modifiers);
    release(h, at, modifiers);
    h.event(Event::ModifiersChanged(Modifiers::NONE));
    h.run();
}

/// Press at canvas point `from`, move to `to` in steps, release.
fn drag(h: &mut Harness<'_, App>, from: (f32, f32), to: (f32, f32)) {
    drag_with(h, from, to, Modifiers::NONE);
}

/// Press at canvas point `from` with `modifiers` held, move to `to` in steps, release.
fn drag_with(h: &mut Harness<'_, App>, from: (f32, f32), to: (f32, f32), modifiers: Modifiers) {
    let (from, to) = (screen(h, from.0, from.1), screen(h, to.0, to.1));
    drag_on_screen(h, from, to, PointerButton::Primary, modifiers);
}

/// Press `button` at screen point `from`, move to `to` in steps, release.
fn drag_on_screen(
    h: &mut Harness<'_, App>,
    from: Pos2,
    to: Pos2,
    button: PointerButton,
    modifiers: Modifiers,
) {
    h.event(Event::ModifiersChanged(modifiers));
    h.event(Event::PointerMoved(from));
    h.event(Event::PointerButton {
        pos: from,
        button,
        pressed: true,
        modifiers,
    });
    h.run();
    for k in 1..=5 {
        let t = k as f32 / 5.0;
        h.event(Event::PointerMoved(from + (to - from) * t));
        h.run();
    }
    h.event(Event::PointerButton {
        pos: to,
        button,
        pressed: false,
        modifiers,
    });
    h.event(Event::ModifiersChanged(Modifiers::NONE));
    h.run();
}

fn ids(ids: &[u32]) -> BTreeSet<DeviceId> {
    ids.iter().map(|&i| DeviceId(i)).collect()
}

#[test]
fn click_selects_and_shift_click_toggles() {
    let mut h = harness(app());
    let a = (0.0, 0.0);
    let b = (0.0, 200.0);
    // The view is the one we set: canvas (0, 0) at the window centre.
    assert_eq!(screen(&h, 0.0, 0.0), pos2(500.0, 350.0));

    click(&mut h, a, Modifiers::NONE);
    assert_eq!(h.state().canvas.selection.devices, ids(&[0]));
    click(&mut h, b, Modifiers::SHIFT);
    assert_eq!(h.state().canvas.selection.devices, ids(&[0, 2]));
    click(&mut h, a, Modifiers::SHIFT);
    assert_eq!(h.state().canvas.selection.devices, ids(&[2]));
    // A plain click replaces; a click on empty canvas clears.
    click(&mut h, a, Modifiers::NONE);
    assert_eq!(h.state().canvas.selection.devices, ids(&[0]));
    click(&mut h, (-300.0, -250.0), Modifiers::NONE);
    assert!(h.state().canvas.selection.is_empty());
    // Clicking did not edit anything.
    assert!(!h.state().history.can_undo());
}

#[test]
fn dragging_a_device_is_one_undo_step_and_snaps() {
    let mut h = harness(app());
    // Grab node a left of its centre (clear of the port handle on its right edge) and move
    // it by (97, 43): the grabbed device lands on the 20-unit grid at (100, 40).
    drag(&mut h, (-20.0, 0.0), (77.0, 43.0));
    let app = h.state();
    assert_eq!(
        app.design.device(DeviceId(0)).unwrap().pos,
        Pos::new(100.0, 40.0)
    );
    assert_eq!(
        app.design.device(DeviceId(2)).unwrap().pos,
        Pos::new(0.0, 200.0)
    );
    assert_eq!(app.history.undo_label(), Some("move"));

    let app = h.state_mut();
    app.history.undo(&mut app.design);
    assert_eq!(
        app.design.device(DeviceId(0)).unwrap().pos,
        Pos::new(0.0, 0.0)
    );
    assert!(!app.history.can_undo(), "the drag was more than one step");
}

#[test]
fn dragging_a_selection_moves_all_of_it_together() {
    let mut h = harness(app());
    click(&mut h, (0.0, 0.0), Modifiers::NONE);
    click(&mut h, (0.0, 200.0), Modifiers::SHIFT);
    drag(&mut h, (-20.0, 200.0), (180.0, 140.0));
    let app = h.state();
    assert_eq!(
        app.design.device(DeviceId(0)).unwrap().pos,
        Pos::new(200.0, -60.0)
    );
    assert_eq!(
        app.design.device(DeviceId(2)).unwrap().pos,
        Pos::new(200.0, 140.0)
    );
    assert_eq!(
        app.design.device(DeviceId(1)).unwrap().pos,
        Pos::new(300.0, 0.0)
    );
    assert_eq!(app.history.revision(), 1);
}

#[test]
fn shift_drag_on_empty_canvas_selects_the_devices_in_the_box() {
    let mut h = harness(app());
    let view = h.state().canvas.scene_rect;
    // From empty canvas at (-100, -60) to (120, 260): nodes a and b, not the switches.
    drag_with(&mut h, (-100.0, -60.0), (120.0, 260.0), Modifiers::SHIFT);
    assert_eq!(h.state().canvas.selection.devices, ids(&[0, 2]));
    // A box selects; it neither edits nor pans.
    assert!(!h.state().history.can_undo());
    assert_eq!(h.state().canvas.scene_rect, view);
}

#[test]
fn a_shift_drag_box_adds_to_the_selection() {
    let mut h = harness(app());
    click(&mut h, (300.0, 0.0), Modifiers::NONE);
    // Around node b only: the leaf selected before stays selected.
    drag_with(&mut h, (-100.0, 140.0), (120.0, 260.0), Modifiers::SHIFT);
    assert_eq!(h.state().canvas.selection.devices, ids(&[1, 2]));
}

#[test]
fn dragging_empty_canvas_pans_without_selecting_or_editing() {
    let mut h = harness(app());
    click(&mut h, (0.0, 200.0), Modifiers::NONE);
    let grabbed = (-300.0, -250.0);
    let from = screen(&h, grabbed.0, grabbed.1);
    let to = from + vec2(150.0, 100.0);
    drag_on_screen(&mut h, from, to, PointerButton::Primary, Modifiers::NONE);
    // The canvas point grabbed followed the pointer: the view moved by the drag.
    let now = screen(&h, grabbed.0, grabbed.1);
    assert!((now - to).length() < 0.5, "{now:?}, expected {to:?}");
    let centre = screen(&h, 0.0, 0.0);
    assert!((centre - pos2(650.0, 450.0)).length() < 0.5, "{centre:?}");
    // Nothing moved, nothing was selected or deselected, and no undo step was made.
    let app = h.state();
    assert_eq!(
        app.design.device(DeviceId(0)).unwrap().pos,
        Pos::new(0.0, 0.0)
    );
    assert_eq!(app.canvas.selection.devices, ids(&[2]));
    assert!(app.canvas.selection.links.is_empty());
    assert_eq!(app.history.revision(), 0);
    assert!(!app.canvas.is_busy());
    // Once the pan is over, the canvas idles.
    h.step();
    let delay = h.output().viewport_output[&egui::ViewportId::ROOT].repaint_delay;
    assert_eq!(delay, Duration::MAX);
}

#[test]
fn middle_drag_and_space_drag_pan_even_over_a_device() {
    let mut h = harness(app());
    // Middle drag starting on node a: the view moves, node a does not.
    let from = screen(&h, -20.0, 0.0);
    drag_on_screen(
        &mut h,
        from,
        from + vec2(-80.0, 60.0),
        PointerButton::Middle,
        Modifiers::NONE,
    );
    let centre = screen(&h, 0.0, 0.0);
    assert!((centre - pos2(420.0, 410.0)).length() < 0.5, "{centre:?}");
    // Space held, primary drag starting on node a: a pan too, not a move.
    h.event(Event::Key {
        key: Key::Space,
        physical_key: None,
        pressed: true,
        repeat: false,
        modifiers: Modifiers::NONE,
    });
    let from = screen(&h, -20.0, 0.0);
    drag_on_screen(
        &mut h,
        from,
        from + vec2(80.0, -60.0),
        PointerButton::Primary,
        Modifiers::NONE,
    );
    h.event(Event::Key {
        key: Key::Space,
        physical_key: None,
        pressed: false,
        repeat: false,
        modifiers: Modifiers::NONE,
    });
    h.run();
    let centre = screen(&h, 0.0, 0.0);
    assert!((centre - pos2(500.0, 350.0)).length() < 0.5, "{centre:?}");
    let app = h.state();
    assert_eq!(
        app.design.device(DeviceId(0)).unwrap().pos,
        Pos::new(0.0, 0.0)
    );
    assert!(app.canvas.selection.is_empty());
    assert_eq!(app.history.revision(), 0);
}

#[test]
fn drawing_from_a_port_handle_adds_one_link() {
    let mut h = harness(app());
    // Node a is 100 wide: its handle is on the right edge at (50, 0), shown once the
    // pointer is over the node; grab it just inside the edge.
    drag(&mut h, (47.0, 0.0), (300.0, 0.0));
    let app = h.state();
    assert_eq!(app.design.links.len(), 1);
    let link = &app.design.links[0];
    assert_eq!((link.a.device, link.b.device), (DeviceId(0), DeviceId(1)));
    assert_eq!(link.tech, LinkTech::InfiniBand);
    assert_eq!(link.rate_gbit_s.gbit_s(), 400.0);
    // Node a did not move, and the new link is selected.
    assert_eq!(
        app.design.device(DeviceId(0)).unwrap().pos,
        Pos::new(0.0, 0.0)
    );
    assert_eq!(app.canvas.selection.links, [link.id].into_iter().collect());
    assert_eq!(app.history.revision(), 1);
}

#[test]
fn a_refused_link_says_why_and_changes_nothing() {
    let mut h = harness(app());
    // Node b's InfiniBand NICs to the 10GbE MikroTik.
    drag(&mut h, (47.0, 200.0), (300.0, 200.0));
    let app = h.state();
    assert!(app.design.links.is_empty());
    assert_eq!(
        app.statuses.last().map(String::as_str),
        Some("cx7-ndr-400 speaks InfiniBand, crs317-16x10g only Ethernet")
    );
    assert!(!app.history.can_undo());
}

/// A right-click on a device outside the selection selects it, and its menu connects the
/// devices selected before to it: nodes a and b, right-click on the InfiniBand leaf, "Connect
/// 2 selected to qm9700-1": NIC 0 of each node on leaf ports 0 and 1, InfiniBand at 400 Gb/s,
/// one undo step.
#[test]
fn right_click_connects_the_devices_selected_before_to_the_device_clicked() {
    let mut h = harness(app());
    click(&mut h, (0.0, 0.0), Modifiers::NONE);
    click(&mut h, (0.0, 200.0), Modifiers::SHIFT);
    let leaf = screen(&h, 300.0, 0.0);
    h.event(Event::PointerMoved(leaf));
    for pressed in [true, false] {
        h.event(Event::PointerButton {
            pos: leaf,
            button: PointerButton::Secondary,
            pressed,
            modifiers: Modifiers::NONE,
        });
    }
    h.run();
    assert_eq!(h.state().canvas.selection.devices, ids(&[1]));
    h.get_by_label("Connect 2 selected to qm9700-1").click();
    h.run();
    let app = h.state();
    for l in &app.design.links {
        assert_eq!(
            (l.tech, l.rate_gbit_s.gbit_s()),
            (LinkTech::InfiniBand, 400.0)
        );
    }
    // Each DGX brings all 8 NICs to the switch, NIC k on the next free port.
    let ends: Vec<_> = app.design.links.iter().map(|l| (l.a, l.b)).collect();
    let end = |d, port| Endpoint::new(DeviceId(d), port);
    let expected: Vec<_> = [0u32, 2]
        .iter()
        .enumerate()
        .flat_map(|(i, &d)| {
            (0..8u32).map(move |k| (end(d, Port::Nic(k)), end(1, Port::Switch(8 * i as u32 + k))))
        })
        .collect();
    assert_eq!(ends, expected);
    assert_eq!(
        app.statuses.last().map(String::as_str),
        Some("16 links added: selected → qm9700-1")
    );
    assert_eq!(app.history.revision(), 1);
}

#[test]
fn delete_then_undo_restores_device_and_links() {
    let mut h = harness(app());
    drag(&mut h, (47.0, 0.0), (300.0, 0.0));
    assert_eq!(h.state().design.links.len(), 1);
    click(&mut h, (300.0, 0.0), Modifiers::NONE);
    assert_eq!(h.state().canvas.selection.devices, ids(&[1]));
    h.key_press(Key::Delete);
    h.run();
    assert_eq!(h.state().design.devices.len(), 3);
    assert!(h.state().design.links.is_empty());
    // The canvas forgets the deleted device.
    assert!(h.state().canvas.selection.is_empty());

    let app = h.state_mut();
    assert_eq!(app.history.undo(&mut app.design), Some("delete"));
    assert_eq!(app.design.devices.len(), 4);
    assert_eq!(app.design.links.len(), 1);
}

#[test]
fn a_palette_drop_inserts_the_part_where_it_lands() {
    let mut h = harness(app());
    let at = screen(&h, -203.0, 118.0);
    h.event(Event::PointerMoved(at));
    h.run();
    egui::DragAndDrop::set_payload(
        &h.ctx,
        PaletteDrop {
            part: PartId::new("mac-studio-m3-ultra"),
        },
    );
    h.event(Event::PointerButton {
        pos: at,
        button: PointerButton::Primary,
        pressed: true,
        modifiers: Modifiers::NONE,
    });
    h.run();
    release(&h, at, Modifiers::NONE);
    h.run();
    let app = h.state();
    let dropped = app
        .design
        .device(DeviceId(4))
        .expect("the drop inserted a device");
    // Snapped to the grid: (-203, 118) → (-200, 120).
    assert_eq!(dropped.pos, Pos::new(-200.0, 120.0));
    assert_eq!(
        dropped.kind.as_node().unwrap().model.as_str(),
        "mac-studio-m3-ultra"
    );
    assert_eq!(app.canvas.selection.devices, ids(&[4]));
}

#[test]
fn the_wheel_zooms_about_the_pointer() {
    let mut h = harness(app());
    let at = screen(&h, 300.0, 200.0);
    h.event(Event::PointerMoved(at));
    h.event(Event::MouseWheel {
        unit: MouseWheelUnit::Line,
        delta: vec2(0.0, 3.0),
        phase: egui::TouchPhase::Move,
        modifiers: Modifiers::NONE,
    });
    h.run();
    let zoom = h.state().canvas.zoom().unwrap();
    assert!(zoom > 1.2, "zoom {zoom}");
    // The point under the pointer stays under it.
    let still = h.state().canvas.to_canvas(at).unwrap();
    assert!(
        (still.x - 300.0).abs() < 0.5 && (still.y - 200.0).abs() < 0.5,
        "{still:?}"
    );
}

#[test]
fn idle_canvas_requests_no_repaint() {
    let mut h = harness(app());
    // After an edit the canvas asks for one more frame, then goes quiet.
    drag(&mut h, (-20.0, 0.0), (80.0, 0.0));
    h.step();
    let delay = h.output().viewport_output[&egui::ViewportId::ROOT].repaint_delay;
    assert_eq!(delay, Duration::MAX);
}

#[test]
fn parallel_links_draw_as_one_bundle_with_their_count_and_rate() {
    use railyard::model::factory::default_link;
    let mut a = app();
    for _ in 0..3 {
        let link = default_link(&a.design, &a.catalog, DeviceId(0), DeviceId(1)).unwrap();
        a.design.insert_link(link);
    }
    // One cable from node b to the leaf: on a design this small, a single link carries its
    // rate too.
    let single = default_link(&a.design, &a.catalog, DeviceId(2), DeviceId(1)).unwrap();
    assert_eq!(single.rate_gbit_s.gbit_s(), 400.0);
    a.design.insert_link(single);
    let mut h = harness(a);
    h.run();
    assert!(
        painted_texts(&h).contains(&"400G".to_string()),
        "{:?}",
        painted_texts(&h)
    );
    assert!(
        painted_texts(&h).contains(&"3 × 400G".to_string()),
        "{:?}",
        painted_texts(&h)
    );
    // Zoomed far out the count would be unreadable: it is left out.
    h.state_mut().canvas.scene_rect = Rect::from_center_size(Pos2::ZERO, vec2(40_000.0, 28_000.0));
    h.run();
    assert!(!painted_texts(&h).iter().any(|t| t.contains(" × ")));
}

/// Three InfiniBand links from node 0 to the leaf, the second at 200 Gb/s, the others 400.
fn slow_link_among_fast() -> App {
    use railyard::model::Bandwidth;
    use railyard::model::factory::default_link;
    let mut a = app();
    for k in 0..3 {
        let mut link = default_link(&a.design, &a.catalog, DeviceId(0), DeviceId(1)).unwrap();
        if k == 1 {
            link.rate_gbit_s = Bandwidth::from_gbit_s(200.0);
        }
        a.design.insert_link(link);
    }
    a
}

/// A slower link beside faster ones between the same two devices is not hidden in their
/// bundle: three links, one of them at 200 Gb/s among 400s, are two lines side by side.
#[test]
fn a_link_of_another_rate_is_drawn_beside_its_bundle() {
    use railyard::model::Bandwidth;
    let a = slow_link_among_fast();
    let mut h = harness(a);
    h.run();
    assert_eq!(h.state().canvas.links_drawn(), 2);
    assert!(painted_texts(&h).contains(&"3 links, 1T".to_string()));
    // Taken away, one line again.
    let slow = h.state().design.links[1].id;
    h.state_mut().design.link_mut(slow).unwrap().rate_gbit_s = Bandwidth::from_gbit_s(400.0);
    h.run();
    assert_eq!(h.state().canvas.links_drawn(), 1);
}

/// A link drawn in the lane beside its bundle is clicked and hovered where it is drawn, and its
/// card counts its lane's links only: the
/// 200 Gb/s link among 400s sits a lane's offset above the line (its width, 1 + 1.1·log2(20)
/// = 5.75 points, and 3 points of gap: 8.75 at zoom 1), outside the 400s' reach (half of
/// 6.85 and 4 points: 7.4).
#[test]
fn a_link_in_a_lane_is_found_where_it_is_drawn() {
    let mut a = slow_link_among_fast();
    let ids: Vec<LinkId> = a.design.links.iter().map(|l| l.id).collect();
    let mut heat = HashMap::new();
    heat.insert(ids[1], 1.0);
    heat.insert(ids[0], 0.5);
    a.heat = Some(heat);
    let mut h = harness(a);
    h.run();
    click(&mut h, (150.0, -8.75), Modifiers::NONE);
    assert_eq!(
        h.state().canvas.selection.links,
        BTreeSet::from([ids[1]]),
        "the lane's link"
    );
    click(&mut h, (150.0, 0.0), Modifiers::NONE);
    assert_eq!(h.state().canvas.selection.links, BTreeSet::from([ids[0]]));
    // Resting on the lane shows its card: rate, ends with ports, and its load.
    let p = screen(&h, 150.0, -8.75);
    h.hover_at(p);
    for _ in 0..4 {
        h.run();
    }
    let texts = painted_texts(&h).join("\n");
    assert!(
        texts.contains(&format!("Link {}: InfiniBand, 200 Gb/s", ids[1])),
        "{texts}"
    );
    assert!(
        texts.contains("The bottleneck of the all-reduce of 1 GiB (ring/Simple)"),
        "{texts}"
    );
    // It is the one link of its lane; the line beside it stands for the two 400s.
    assert!(!texts.contains("One of"), "{texts}");
    h.hover_at(screen(&h, 150.0, 0.0));
    for _ in 0..4 {
        h.run();
    }
    let texts = painted_texts(&h).join("\n");
    assert!(
        texts.contains("One of 2 links drawn as this one line"),
        "{texts}"
    );
}

/// Under the heatmap a bundle shows its first link's colour, so its first hot link is drawn
/// too: three parallel links, the last one 100 % busy, are two lines, where a cool bundle and
/// an all-hot one are one.
#[test]
fn a_hot_link_is_not_hidden_in_its_bundle() {
    use railyard::model::factory::default_link;
    let mut a = app();
    let mut ids = Vec::new();
    for _ in 0..3 {
        let link = default_link(&a.design, &a.catalog, DeviceId(0), DeviceId(1)).unwrap();
        ids.push(link.id);
        a.design.insert_link(link);
    }
    a.heat = Some(ids.iter().map(|&id| (id, 0.2)).collect());
    let mut h = harness(a);
    h.run();
    assert_eq!(
        h.state().canvas.links_drawn(),
        1,
        "a cool bundle is one line"
    );
    h.state_mut().heat.as_mut().unwrap().insert(ids[2], 1.0);
    h.run();
    assert_eq!(h.state().canvas.links_drawn(), 2, "the hot link shows");
    // All hot: the first link already shows the bundle's colour, one line again.
    for id in &ids {
        h.state_mut().heat.as_mut().unwrap().insert(*id, 1.0);
    }
    h.run();
    assert_eq!(
        h.state().canvas.links_drawn(),
        1,
        "a hot bundle is one line"
    );
}

/// Two bundles crossing at their middles: their labels do not run together; the second
/// moves a third of the way along its bundle.
#[test]
fn crossing_bundles_do_not_print_their_counts_on_top_of_each_other() {
    use railyard::model::factory::default_link;
    let mut a = app();
    let leaf = device_from_part(
        &a.catalog,
        &PartId::new("qm9700"),
        DeviceId(4),
        "leaf-low".into(),
        Pos::new(300.0, 220.0),
    )
    .unwrap();
    a.design.insert_device(leaf);
    // Node a (0, 0) to the new leaf (300, 220), node b (0, 200) to the leaf (300, 0): the
    // bundles' middles are (150, 110) and (150, 100), ten points apart at zoom 1.
    for (from, to) in [(0, 4), (0, 4), (2, 1), (2, 1)] {
        let link = default_link(&a.design, &a.catalog, DeviceId(from), DeviceId(to)).unwrap();
        a.design.insert_link(link);
    }
    let h = harness(a);
    let labels: Vec<egui::Rect> = h
        .output()
        .shapes
        .iter()
        .filter_map(|c| match &c.shape {
            egui::Shape::Text(t) if t.galley.text() == "2 × 400G" => {
                Some(egui::Rect::from_min_size(t.pos, t.galley.size()))
            }
            _ => None,
        })
        .collect();
    assert_eq!(labels.len(), 2, "{labels:?}");
    assert!(!labels[0].intersects(labels[1]), "{labels:?}");
}

/// An empty canvas says how to start; on a drawn design that hint is gone, and resting on
/// a port handle says what dragging it does.
#[test]
fn an_empty_canvas_says_how_to_start_and_a_handle_what_it_does() {
    let mut empty = app();
    empty.design = Design::new("empty");
    let mut h = harness(empty);
    h.run();
    assert!(painted_texts(&h).contains(&EMPTY_CANVAS_HINT.to_string()));
    let mut h = harness(app());
    h.run();
    // Node a's handle is on its right edge at (50, 0).
    let p = screen(&h, 47.0, 0.0);
    h.hover_at(p);
    for _ in 0..4 {
        h.run();
    }
    let texts = painted_texts(&h);
    assert!(texts.contains(&HANDLE_HINT.to_string()), "{texts:?}");
    assert!(!texts.contains(&EMPTY_CANVAS_HINT.to_string()));
}

/// A generated fabric's scalable units are framed and captioned on the canvas: 64 DGX H100
/// rail-optimized are two units of 32 (256 GPUs each).
#[test]
fn scalable_units_are_captioned_at_fit() {
    use railyard::generate::{Template, TemplateSpec, generate};
    let mut a = app();
    let mut spec = TemplateSpec::new(Template::RailOptimized);
    spec.nodes = Some(64);
    a.design = generate(&spec, &a.catalog).expect("generates");
    zoom_to_fit(&a.design, &mut a.canvas);
    let mut h = harness(a);
    h.run();
    let texts = painted_texts(&h);
    for unit in ["su-01", "su-02"] {
        let caption = format!("{unit} · 32 nodes, 256 GPUs");
        assert!(texts.contains(&caption), "{caption} not in {texts:?}");
    }
}

/// The rail-optimized template's fabric of `nodes` DGX H100 in `tiers` switch tiers.
fn rail_optimized(catalog: &Catalog, nodes: u32, tiers: u8) -> Design {
    use railyard::generate::{Template, TemplateSpec, generate};
    let mut spec = TemplateSpec::new(Template::RailOptimized);
    spec.nodes = Some(nodes);
    spec.tiers = tiers;
    generate(&spec, catalog).expect("generates")
}

/// At fit, a 256-node 3-tier fabric shows every pod's and unit's caption, none covering
/// another or a row's caption: pod-01's stands a line above su-01's (their frames' tops are
/// a few points apart), pod-02's beside the spine row's caption at its frame's top.
#[test]
fn pod_unit_and_row_captions_all_show_apart_at_fit() {
    use common::painted::painted_text_rects;
    let mut a = app();
    a.design = rail_optimized(&a.catalog, 256, 3);
    zoom_to_fit(&a.design, &mut a.canvas);
    let mut h = harness(a);
    h.run();
    let captions: Vec<(String, Rect)> = painted_text_rects(&h)
        .into_iter()
        .filter(|(t, _)| t.contains(" · "))
        .collect();
    let names: Vec<&str> = captions.iter().map(|(t, _)| t.as_str()).collect();
    for frame in ["pod-01", "pod-02", "su-01", "su-05", "su-08"] {
        assert!(
            names.iter().any(|t| t.starts_with(&format!("{frame} · "))),
            "{frame} not in {names:?}"
        );
    }
    for (i, (a, ra)) in captions.iter().enumerate() {
        for (b, rb) in &captions[i + 1..] {
            assert!(!ra.intersects(*rb), "{a} at {ra:?} covers {b} at {rb:?}");
        }
    }
    // pod-01's caption above su-01's, not left out.
    let at = |name: &str| {
        captions
            .iter()
            .find(|(t, _)| t.starts_with(name))
            .map(|(_, r)| *r)
            .expect("painted")
    };
    assert!(at("pod-01 · ").max.y <= at("su-01 · ").min.y);
}

/// 70 switches in view, each cabled to 30 far beyond it (x = 100,000): 2,100 links leading
/// out of view.
fn many_links_leaving_the_view() -> App {
    use railyard::model::Bandwidth;
    let mut a = app();
    let mut design = Design::new("leaving");
    let add = |design: &mut Design, x: f32, y: f32| {
        let id = design.next_device_id();
        let d = device_from_part(
            &a.catalog,
            &PartId::new("sn5600"),
            id,
            format!("sw-{}", id.0),
            Pos::new(x, y),
        )
        .unwrap();
        design.insert_device(d);
        id
    };
    let near: Vec<DeviceId> = (0..70)
        .map(|i| add(&mut design, -480.0 + 10.0 * i as f32, 0.0))
        .collect();
    let far: Vec<DeviceId> = (0..30)
        .map(|j| add(&mut design, 100_000.0, 200.0 * j as f32))
        .collect();
    for (i, &n) in near.iter().enumerate() {
        for (j, &f) in far.iter().enumerate() {
            design.add_link(railyard::model::Link::new(
                Endpoint::new(n, Port::Switch(j as u32)),
                Endpoint::new(f, Port::Switch(i as u32)),
                LinkTech::Ethernet,
                Bandwidth::from_gbit_s(400.0),
            ));
        }
    }
    a.design = design;
    a
}

/// Past 2,000 links leading out of the view (a spine row's uplinks to a far core row, which
/// laid a solid sheet over a huge fabric at middle zoom), each is drawn as a 28-point stub
/// towards its far end, the legend says how many, and a link is found only where its stub
/// is; with fewer, they are drawn whole again.
#[test]
fn crowded_links_leaving_the_view_are_stubs() {
    let mut h = harness(many_links_leaving_the_view());
    h.run();
    let texts = painted_texts(&h);
    assert!(
        texts.contains(&"short: 2,100 links leading out of view".to_string()),
        "{texts:?}"
    );
    // The last near switch's link to the first far one runs right along y = 0 (the far
    // switch at y = 0): on its stub, 20 points past the switch's box (100 wide), it is
    // found; 200 points out (still in view), where a whole line would run, nothing is.
    let right_of_last = -480.0 + 10.0 * 69.0 + 50.0;
    click(&mut h, (right_of_last + 20.0, 0.0), Modifiers::NONE);
    assert_eq!(h.state().canvas.selection.links.len(), 1);
    click(&mut h, (right_of_last + 200.0, 0.0), Modifiers::NONE);
    assert!(h.state().canvas.selection.links.is_empty());

    // 1,900 left: drawn whole, and found far from their ends.
    let keep: Vec<LinkId> = h.state().design.links[..1900]
        .iter()
        .map(|l| l.id)
        .collect();
    h.state_mut().design.links.retain(|l| keep.contains(&l.id));
    h.run();
    h.run();
    assert!(
        !painted_texts(&h).iter().any(|t| t.starts_with("short:")),
        "no stubs"
    );
    click(&mut h, (right_of_last + 200.0, 0.0), Modifiers::NONE);
    assert_eq!(h.state().canvas.selection.links.len(), 1);
}

/// A name too long for its box's width is shown whole on two lines where the box is tall
/// enough (zoomed in), broken after a word; further out it gives way to a shorter form
/// that keeps whole words from the end.
#[test]
fn a_long_name_wraps_onto_two_lines_before_it_is_shortened() {
    let mut a = app();
    a.design.devices[0].name = "mac-studio-m3-ultra-512gb-living-room".into();
    // Zoom 4 on the node at (0, 0).
    a.canvas.scene_rect = Rect::from_center_size(Pos2::ZERO, vec2(250.0, 175.0));
    let mut h = harness(a);
    h.run();
    let texts = painted_texts(&h);
    for line in ["mac-studio-m3-ultra-", "512gb-living-room"] {
        assert!(texts.contains(&line.to_string()), "{line} not in {texts:?}");
    }
    // At zoom 1 the halves do not fit the box's width: a shorter form instead.
    h.state_mut().canvas.scene_rect = Rect::from_center_size(Pos2::ZERO, vec2(1000.0, 700.0));
    h.run();
    let texts = painted_texts(&h);
    assert!(
        texts
            .iter()
            .any(|t| t.starts_with('…') && t.ends_with("living-room")),
        "{texts:?}"
    );
    assert!(!texts.contains(&"512gb-living-room".to_string()));
}

/// The test design and a switch far out at (6000, -2500), zoomed to fit.
fn fitted_with_a_far_switch() -> App {
    let mut a = app();
    let far = device_from_part(
        &a.catalog,
        &PartId::new("sn5600"),
        DeviceId(4),
        "far".into(),
        Pos::new(6000.0, -2500.0),
    )
    .unwrap();
    a.design.insert_device(far);
    zoom_to_fit(&a.design, &mut a.canvas);
    a
}

#[test]
fn zoom_to_fit_frames_every_device() {
    let a = fitted_with_a_far_switch();
    let h = harness(a);
    let window = Rect::from_min_size(Pos2::ZERO, Vec2::new(1000.0, 700.0));
    for d in &h.state().design.devices {
        let p = screen(&h, d.pos.x, d.pos.y);
        assert!(window.contains(p), "{} at {p:?}", d.name);
    }
    // 6000 + 2 × 50 + 2 × 60 of margin = 6220 units across the canvas (1000 points less
    // the harness's margins): zoom a little under 1000 / 6220.
    let zoom = h.state().canvas.zoom().unwrap();
    let widest = 1000.0 / 6220.0;
    assert!(zoom <= widest && zoom > 0.95 * widest, "zoom {zoom}");
}

/// The zoom shows in the canvas's top right corner as a percentage, and a click on it fits
/// the design again: fitted, 6,220 units across 1,000 points read "16 %"; zoomed in on a
/// view 500 units wide, about "200 %".
#[test]
fn the_zoom_indicator_reads_the_zoom_and_a_click_fits() {
    let a = fitted_with_a_far_switch();
    let mut h = harness(a);
    h.run();
    let fitted = h.state().canvas.zoom().unwrap();
    h.get_by_label("16 %");
    h.state_mut().canvas.scene_rect = Rect::from_center_size(Pos2::ZERO, Vec2::new(500.0, 350.0));
    h.run();
    let zoomed = h.state().canvas.zoom().unwrap();
    assert!((zoomed - 2.0).abs() < 0.1, "zoom {zoomed}");
    h.get_by_label(&format!("{:.0} %", zoomed * 100.0)).click();
    h.run();
    h.run();
    let back = h.state().canvas.zoom().unwrap();
    assert!((back - fitted).abs() < 1e-3, "zoom {back}, fitted {fitted}");
    h.get_by_label("16 %");
}

/// Renders a mixed design and a generated rail-optimized fabric to PNGs for a look by eye:
/// `cargo test --test canvas_kittest -- --ignored render` (needs a Vulkan driver such as
/// Mesa's lavapipe). Writes target/canvas-mixed.png and target/canvas-rail.png.
#[test]
#[ignore = "renders with wgpu; run by hand to look at the canvas"]
fn render_canvas_to_png() {
    use railyard::app::canvas::arrange_by_tier;
    use railyard::generate::{Template, TemplateSpec, generate};
    use railyard::model::factory::{default_link, devices_from_part};
    use railyard::model::{DeviceKind, GroupKind, LinkState, SwitchRole};

    let catalog = Catalog::builtin();
    let mut d = Design::new("mixed");
    let rack_a = d.add_group("rack-a", GroupKind::Rack);
    let rack_b = d.add_group("rack-b", GroupKind::Rack);
    let add = |d: &mut Design, part: &str| {
        let id = d.next_device_id();
        for dev in devices_from_part(
            &catalog,
            &PartId::new(part),
            id,
            format!("{part}-{}", id.0),
            Pos::default(),
        )
        .unwrap()
        {
            d.insert_device(dev);
        }
        id
    };
    let spine = add(&mut d, "qm9700");
    let leaves: Vec<DeviceId> = (0..4).map(|_| add(&mut d, "qm9700")).collect();
    for (rail, leaf) in leaves.iter().enumerate() {
        if let DeviceKind::Switch(s) = &mut d.device_mut(*leaf).unwrap().kind {
            s.rail = Some(rail as u32);
        }
    }
    if let DeviceKind::Switch(s) = &mut d.device_mut(spine).unwrap().kind {
        s.role = SwitchRole::Spine;
    }
    let nodes: Vec<DeviceId> = (0..4).map(|_| add(&mut d, "dgx-h100")).collect();
    for (k, n) in nodes.iter().enumerate() {
        d.device_mut(*n).unwrap().group = Some(if k < 2 { rack_a } else { rack_b });
    }
    let nvl = add(&mut d, "gb200-nvl72");
    let mac_a = add(&mut d, "mac-studio-m3-ultra");
    let mac_b = add(&mut d, "mac-studio-m3-ultra");
    let ws = add(&mut d, "rtx-4090");
    let eth = add(&mut d, "crs317-16x10g");
    let link = |d: &mut Design, a: DeviceId, b: DeviceId| {
        let l = default_link(d, &catalog, a, b).unwrap();
        let id = l.id;
        d.insert_link(l);
        id
    };
    for leaf in &leaves {
        link(&mut d, *leaf, spine);
        for n in &nodes {
            link(&mut d, *n, *leaf);
        }
    }
    for tray in 1..=3 {
        link(&mut d, DeviceId(nvl.0 + tray), nvl);
    }
    let tb = link(&mut d, mac_a, mac_b);
    link(&mut d, ws, eth);
    link(&mut d, mac_a, eth);
    let failed = d.links[2].id;
    d.link_mut(failed).unwrap().state = LinkState::Failed;
    let degraded = d.links[7].id;
    d.link_mut(degraded).unwrap().state = LinkState::Degraded { fraction: 0.5 };
    let arrange = arrange_by_tier(&d, &catalog);
    arrange.apply(&mut d).unwrap();

    let mut mixed = App {
        design: d,
        history: History::default(),
        canvas: CanvasState::default(),
        catalog: catalog.clone(),
        statuses: vec![],
        no_highlight: HashSet::new(),
        heat: None,
    };
    zoom_to_fit(&mixed.design, &mut mixed.canvas);
    mixed.canvas.selection.devices.insert(nodes[1]);
    mixed.canvas.selection.links.insert(tb);

    let mut spec = TemplateSpec::new(Template::RailOptimized);
    spec.nodes = Some(32);
    let rail = generate(&spec, &catalog).unwrap();
    let mut rail_app = App {
        design: rail,
        history: History::default(),
        canvas: CanvasState::default(),
        catalog,
        statuses: vec![],
        no_highlight: HashSet::new(),
        heat: None,
    };
    zoom_to_fit(&rail_app.design, &mut rail_app.canvas);

    let mut spec = TemplateSpec::new(Template::RailOptimized);
    spec.nodes = Some(256);
    let big = generate(&spec, &rail_app.catalog).unwrap();
    let mut big_app = App {
        design: big,
        history: History::default(),
        canvas: CanvasState::default(),
        catalog: rail_app.catalog.clone(),
        statuses: vec![],
        no_highlight: HashSet::new(),
        heat: None,
    };
    zoom_to_fit(&big_app.design, &mut big_app.canvas);

    // Close up on the mixed design, the pointer over a node: handles and labels.
    let mut close = App {
        design: mixed.design.clone(),
        history: History::default(),
        canvas: CanvasState::default(),
        catalog: mixed.catalog.clone(),
        statuses: vec![],
        no_highlight: HashSet::new(),
        heat: None,
    };
    let focus = close.design.device(nodes[0]).unwrap().pos;
    close.canvas.scene_rect = Rect::from_center_size(
        Pos2::new(focus.x + 150.0, focus.y - 120.0),
        vec2(800.0, 500.0),
    );

    for (name, app) in [
        ("mixed", mixed),
        ("rail", rail_app),
        ("rail-256", big_app),
        ("close", close),
    ] {
        let mut h = harness(app);
        h.set_size(vec2(1600.0, 1000.0));
        h.run();
        if name == "close" {
            let p = screen(&h, focus.x, focus.y);
            h.hover_at(p);
            h.run();
        }
        let image = h.render().expect("rendering needs a wgpu adapter");
        let path = format!("{}/target/canvas-{name}.png", env!("CARGO_MANIFEST_DIR"));
        image.save(&path).unwrap();
        eprintln!("wrote {path}");
    }
}

/// Far out (zoom 0.05), each scalable unit of a 128-node fabric is one block; a double-click
/// on one zooms in until devices are drawn one by one (groups unfold from zoom 0.1).
#[test]
fn double_clicking_a_folded_group_opens_it() {
    use railyard::generate::{Template, TemplateSpec, generate};
    let mut a = app();
    let mut spec = TemplateSpec::new(Template::RailOptimized);
    spec.nodes = Some(128);
    a.design = generate(&spec, &a.catalog).expect("generates");
    let grouped = a
        .design
        .devices
        .iter()
        .find(|d| d.group.is_some())
        .expect("the template groups its nodes")
        .pos;
    // The harness is 1000 points wide: 20,000 units across is zoom 0.05.
    a.canvas.scene_rect =
        Rect::from_center_size(Pos2::new(grouped.x, grouped.y), vec2(20_000.0, 14_000.0));
    let mut h = harness_stepping(a, 1.0 / 60.0);
    let zoom = h.state().canvas.zoom().unwrap();
    assert!(zoom < 0.1, "zoom {zoom}: groups should be folded");
    let at = screen(&h, grouped.x, grouped.y);
    for _ in 0..2 {
        press(&h, at, Modifiers::NONE);
        release(&h, at, Modifiers::NONE);
    }
    h.run();
    // The click of the double-click selected the whole block: its racks' nodes too, not only
    // the devices directly in the scalable unit's group.
    let selected = h.state().canvas.selection.devices.len();
    let statuses = &h.state().statuses;
    assert!(
        statuses
            .iter()
            .any(|s| s.contains(&format!(": {selected} devices"))),
        "{selected} selected; {statuses:?}"
    );
    let opened = h.state().canvas.zoom().unwrap();
    assert!(
        opened >= 0.1,
        "zoom after the double-click {opened} (fit {zoom})"
    );
    assert!(
        h.state().statuses.iter().any(|s| s.starts_with("Opened ")),
        "{:?}",
        h.state().statuses
    );
    assert!(!h.state().history.can_undo(), "opening is no edit");
}

/// Far out, the 32 core switches outside the two pods of a 256-node fabric are one block
/// with their count; a double-click opens it as it opens a pod, and says what it opened.
#[test]
fn far_out_the_core_row_is_one_block_that_opens() {
    use railyard::model::{DeviceKind, SwitchRole};
    let mut a = app();
    a.design = rail_optimized(&a.catalog, 256, 3);
    let core = a
        .design
        .devices
        .iter()
        .find(|d| matches!(&d.kind, DeviceKind::Switch(s) if s.role == SwitchRole::Core))
        .expect("a core switch")
        .pos;
    a.canvas.scene_rect =
        Rect::from_center_size(Pos2::new(core.x, core.y), vec2(20_000.0, 14_000.0));
    let mut h = harness_stepping(a, 1.0 / 60.0);
    assert!(h.state().canvas.zoom().unwrap() < 0.1);
    let at = screen(&h, core.x, core.y);
    for _ in 0..2 {
        press(&h, at, Modifiers::NONE);
        release(&h, at, Modifiers::NONE);
    }
    h.run();
    // The click took the whole row: all 32 core switches.
    assert_eq!(h.state().canvas.selection.devices.len(), 32);
    assert!(
        h.state()
            .statuses
            .iter()
            .any(|s| s == "Opened core · 32 × qm9700 (zoom out to fold it again)"),
        "{:?}",
        h.state().statuses
    );
    assert!(h.state().canvas.zoom().unwrap() >= 0.1);
}

/// Close up, a right-click on a node offers to fold its rack or scalable unit: the rack is
/// then one block (a click on it takes all its nodes), with no edit to undo; a double-click
/// on the block unfolds it where it is.
#[test]
fn a_group_folds_from_the_right_click_menu_and_unfolds_on_double_click() {
    use railyard::generate::{Template, TemplateSpec, generate};
    let mut a = app();
    let mut spec = TemplateSpec::new(Template::RailOptimized);
    spec.nodes = Some(128);
    a.design = generate(&spec, &a.catalog).expect("generates");
    let node = a
        .design
        .devices
        .iter()
        .find(|d| d.group.is_some() && matches!(d.kind, railyard::model::DeviceKind::GpuNode(_)))
        .expect("the template groups its nodes")
        .clone();
    let group = node.group.unwrap();
    let members = a
        .design
        .devices
        .iter()
        .filter(|d| d.group == Some(group))
        .count();
    assert!(members > 1);
    let rack = a
        .design
        .groups
        .iter()
        .find(|g| g.id == group)
        .unwrap()
        .name
        .clone();
    // Zoom 0.5, well above the far-out folding (0.1).
    a.canvas.scene_rect =
        Rect::from_center_size(Pos2::new(node.pos.x, node.pos.y), vec2(2000.0, 1400.0));
    let mut h = harness_stepping(a, 1.0 / 60.0);
    h.run();
    let at = screen(&h, node.pos.x, node.pos.y);
    h.event(Event::PointerMoved(at));
    for pressed in [true, false] {
        h.event(Event::PointerButton {
            pos: at,
            button: PointerButton::Secondary,
            pressed,
            modifiers: Modifiers::NONE,
        });
    }
    h.run();
    h.get_by_label(&format!("Fold {rack}")).click();
    h.run();
    assert_eq!(h.state().canvas.folded, BTreeSet::from([group]));
    assert!(!h.state().history.can_undo(), "folding is no edit");
    // The node is inside the block now: a click takes the whole rack.
    click_on_screen(&mut h, at);
    assert_eq!(h.state().canvas.selection.devices.len(), members);
    // Half a second on, so that the double-click is not taken for a triple one.
    for _ in 0..30 {
        h.step();
    }
    for _ in 0..2 {
        press(&h, at, Modifiers::NONE);
        release(&h, at, Modifiers::NONE);
    }
    h.run();
    assert!(h.state().canvas.folded.is_empty());
    assert_eq!(
        h.state().statuses.last().map(String::as_str),
        Some(format!("Unfolded {rack}").as_str())
    );
    assert!(
        h.state().canvas.zoom().unwrap() > 0.4,
        "unfolding leaves the view"
    );
    assert!(!h.state().history.can_undo());
}

/// Zoomed in on one device, the overview in the bottom-right corner moves the view where it
/// is clicked: its middle is the middle of the design. With everything in view there is no
/// overview, and the same click leaves the view alone.
#[test]
fn the_minimap_moves_the_view_while_part_of_the_design_is_out_of_view() {
    let mut a = app();
    a.canvas.scene_rect = Rect::from_center_size(Pos2::ZERO, vec2(200.0, 140.0));
    let mut h = harness(a);
    let map_middle = pos2(1000.0 - 12.0 - 100.0, 700.0 - 12.0 - 65.0);
    click_on_screen(&mut h, map_middle);
    // The four devices span (-50, -40) to (350, 240) with their boxes: the middle is near
    // (150, 100); the map's scale (about 0.4 point per unit) puts the harness's margin within
    // 40 units.
    let centre = h.state().canvas.scene_rect.center();
    assert!(
        centre.distance(pos2(150.0, 100.0)) < 40.0,
        "view centred on {centre:?}"
    );
    assert!(h.state().canvas.selection.is_empty());
    assert!(!h.state().history.can_undo(), "moving the view is no edit");
    // Shown, the overview asks for no frames of its own: the canvas idles.
    h.step();
    let delay = h.output().viewport_output[&egui::ViewportId::ROOT].repaint_delay;
    assert_eq!(delay, Duration::MAX);

    let mut h = harness(app());
    let before = h.state().canvas.scene_rect;
    click_on_screen(&mut h, map_middle);
    assert_eq!(h.state().canvas.scene_rect, before, "no overview, no move");
}
