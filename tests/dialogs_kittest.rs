//! Dialogs and the keyboard: Escape closes the frontmost dialog or window, one per press;
//! an export's path field takes the keyboard and proposes a name after the design's file.

mod common;

use common::app::{
    app, app_picking, click_button, click_menu, harness, open_preset, request_close, root_commands,
};
use egui::accesskit::Role;
use egui::{Key, Modifiers};
use egui_kittest::kittest::{NodeT, Queryable};
use railyard::model::PartId;

fn shown(harness: &egui_kittest::Harness<'_, railyard::app::RailyardApp>, title: &str) -> bool {
    harness.query_all_by_label(title).next().is_some()
}

#[test]
fn escape_closes_each_dialog_and_window_one_per_press() {
    let mut harness = harness(app());
    // A dialog (Generate) and two tool windows (Compare, Plots).
    harness.get_by_label("Generate…").click();
    harness.run();
    assert!(shown(&harness, "Generate a design"));
    click_menu(&mut harness, "View", "Compare designs…");
    click_menu(&mut harness, "View", "Plots…");
    harness.run_ok();
    assert!(shown(&harness, "Compare") && shown(&harness, "Plots"));
    assert!(shown(&harness, "Generate a design"));

    harness.key_press(Key::Escape);
    harness.run_ok();
    assert!(
        !shown(&harness, "Generate a design"),
        "the dialog goes first"
    );
    assert!(shown(&harness, "Plots"), "one window per press");
    harness.key_press(Key::Escape);
    harness.run_ok();
    assert!(!shown(&harness, "Plots"));
    assert!(shown(&harness, "Compare"));
    harness.key_press(Key::Escape);
    harness.run_ok();
    assert!(!shown(&harness, "Compare"));

    // Check cabling, then Calibrate over it: Calibrate closes first (it is the more modal:
    // it can rewrite the design's calibration), then Check cabling.
    click_menu(&mut harness, "File", "Check cabling…");
    click_menu(&mut harness, "Design", "Calibrate…");
    assert!(shown(&harness, "Calibrate") && shown(&harness, "Check cabling"));
    harness.key_press(Key::Escape);
    harness.run_ok();
    assert!(!shown(&harness, "Calibrate"), "Calibrate goes first");
    assert!(shown(&harness, "Check cabling"));
    harness.key_press(Key::Escape);
    harness.run_ok();
    assert!(!shown(&harness, "Check cabling"));

    // The in-app path field (no file dialog here) closes too, and so does About.
    harness.key_press_modifiers(Modifiers::COMMAND, Key::O);
    harness.run();
    assert!(shown(&harness, "Browse…"));
    harness.key_press(Key::Escape);
    harness.run();
    assert!(!shown(&harness, "Browse…"));
    click_menu(&mut harness, "Help", "About railyard");
    assert!(shown(&harness, "About railyard"));
    harness.key_press(Key::Escape);
    harness.run();
    assert!(
        harness
            .query_all_by_label("About railyard")
            .all(|n| n.accesskit_node().role() == Role::Button),
        "only the menu's own item is left, the window closed"
    );
}

#[test]
fn after_saving_as_pme_the_bom_export_proposes_pme_csv_in_a_focused_field() {
    let dir = tempfile::tempdir().expect("temp dir");
    let mut harness = harness(app_picking(dir.path().join("pme.ron")));
    harness.state_mut().add_part(&PartId::new("qm9700"));
    harness.run();
    harness.key_press_modifiers(Modifiers::COMMAND | Modifiers::SHIFT, Key::S);
    harness.run();
    assert_eq!(harness.state().document().title(), "pme.ron");

    // The scripted dialog is used up: the export asks in its own path field.
    click_menu(&mut harness, "File", "Export BOM CSV…");
    harness.run();
    // The parts search is a text field too: the export's is the one holding a path.
    let fields: Vec<String> = harness
        .query_all_by_role(Role::TextInput)
        .filter_map(|n| n.value())
        .filter(|v| v.contains('/'))
        .collect();
    assert_eq!(fields.len(), 1, "{fields:?}");
    assert!(fields[0].ends_with("/pme.csv"), "{fields:?}");
    assert!(
        harness.ctx.text_edit_focused(),
        "the path field has the keyboard"
    );
    // Typing goes straight into it, and Escape then closes it without exporting.
    harness.key_press(Key::Escape);
    harness.run();
    assert!(
        harness
            .query_all_by_role(Role::TextInput)
            .filter_map(|n| n.value())
            .all(|v| !v.contains('/')),
        "the path field closed"
    );
    assert!(!dir.path().join("pme.csv").exists());
}

/// An export to a path whose file exists writes nothing at first: the path field names the
/// file and waits, and Export again replaces it. A report names its diagram beside it too.
#[test]
fn an_export_over_an_existing_file_asks_first() {
    let dir = tempfile::tempdir().expect("temp dir");
    let mut harness = harness(app_picking(dir.path().join("fabric.ron")));
    harness.state_mut().add_part(&PartId::new("qm9700"));
    harness.run();
    harness.key_press_modifiers(Modifiers::COMMAND | Modifiers::SHIFT, Key::S);
    harness.run();
    let svg = dir.path().join("fabric.svg");
    std::fs::write(&svg, "an earlier export").expect("written");
    click_menu(&mut harness, "File", "Export report (Markdown)…");
    harness.run();
    click_button(&mut harness, "Export");
    harness.run();
    let md = dir.path().join("fabric.md");
    assert!(!md.exists(), "nothing written yet");
    harness.get_by_label_contains(&format!("{} already exists", svg.display()));
    assert_eq!(std::fs::read_to_string(&svg).unwrap(), "an earlier export");
    click_button(&mut harness, "Export");
    common::app::wait_until(&mut harness, "the report", |_| md.exists());
    harness.run();
    assert_ne!(std::fs::read_to_string(&svg).unwrap(), "an earlier export");
}

/// File > Export PNG draws the whole diagram, title block and legend, as `railyard export
/// -o F.png --scale K` does, at the scale picked beside its path field: 3× is three times
/// the 1× image in each direction, and the status line says so.
#[test]
fn export_png_draws_the_diagram_at_the_scale_picked() {
    use railyard::io::raster::svg_to_png;
    use railyard::io::svg::{LinkColors, design_to_svg};
    let dir = tempfile::tempdir().expect("temp dir");
    let path = dir.path().join("fabric.png");
    let mut harness = harness(app_picking(dir.path().join("fabric.ron")));
    harness.state_mut().add_part(&PartId::new("qm9700"));
    harness.state_mut().add_part(&PartId::new("dgx-h100"));
    harness.run();
    harness.key_press_modifiers(Modifiers::COMMAND | Modifiers::SHIFT, Key::S);
    harness.run();
    // The scripted dialog is used up: the export asks in its own path field, 2× picked.
    click_menu(&mut harness, "File", "Export PNG…");
    harness.run();
    harness.get_by_label("3×").click();
    harness.run();
    // It proposes fabric.png beside fabric.ron.
    let proposed: Vec<String> = harness
        .query_all_by_role(Role::TextInput)
        .filter_map(|n| n.value())
        .filter(|v| v.ends_with(".png"))
        .collect();
    assert_eq!(proposed, [path.display().to_string()]);
    click_button(&mut harness, "Export");
    harness.run();
    let written = image::open(&path).expect("a PNG").to_rgba8();
    let svg = design_to_svg(
        harness.state().document().design(),
        &railyard::model::Catalog::builtin(),
        LinkColors::Technology,
    );
    let one = image::load_from_memory(&svg_to_png(&svg, 1).expect("1×"))
        .expect("decodes")
        .to_rgba8();
    assert_eq!(
        written.dimensions(),
        (3 * one.width(), 3 * one.height()),
        "1× is {:?}",
        one.dimensions()
    );
    let status = harness.state().status().to_string();
    assert!(
        status.contains(&format!(
            "{} × {} pixels (3×)",
            3 * one.width(),
            3 * one.height()
        )),
        "{status}"
    );
}

/// The PNG export's Overview box draws pods and rows as blocks, as `railyard export
/// --overview` does: a design of a few hundred devices proposes the full diagram, and
/// ticking the box writes the overview instead (the SuperPOD unit: its unit as one block).
#[test]
fn export_png_overview_box_writes_the_overview() {
    use railyard::io::raster::svg_to_png;
    use railyard::io::svg::{Detail, LinkColors, diagram_svg};
    let dir = tempfile::tempdir().expect("temp dir");
    let path = dir.path().join("fabric.png");
    let mut harness = harness(app_picking(dir.path().join("fabric.ron")));
    open_preset(&mut harness, "DGX H100 SuperPOD scalable unit (32 nodes)");
    harness.key_press_modifiers(Modifiers::COMMAND | Modifiers::SHIFT, Key::S);
    harness.run();
    click_menu(&mut harness, "File", "Export PNG…");
    harness.run();
    let overview = harness.get_by_label("Overview: pods and rows as blocks");
    assert_eq!(
        overview.accesskit_node().toggled(),
        Some(egui::accesskit::Toggled::False),
        "a small design proposes the full diagram"
    );
    overview.click();
    harness.run();
    click_button(&mut harness, "Export");
    harness.run();
    let written = image::open(&path).expect("a PNG").to_rgba8();
    let design = harness.state().document().design();
    let expected = |detail| {
        let svg = diagram_svg(
            design,
            &railyard::model::Catalog::builtin(),
            LinkColors::Technology,
            detail,
        );
        image::load_from_memory(&svg_to_png(&svg, 2).expect("2×"))
            .expect("decodes")
            .to_rgba8()
    };
    let (overview, full) = (expected(Detail::Overview), expected(Detail::Full));
    assert_ne!(overview.dimensions(), full.dimensions());
    assert_eq!(written.dimensions(), overview.dimensions());
    assert!(
        written.as_raw() == overview.as_raw(),
        "the overview, pixel for pixel"
    );
}

/// Closing the window while a large export is still being written (in the background)
/// waits for the file and then closes: cut off, the export would be lost without a word.
#[test]
fn closing_while_an_export_is_written_waits_for_the_file() {
    use egui::ViewportCommand;
    use railyard::generate::{Template, TemplateSpec, generate};
    let dir = tempfile::tempdir().expect("temp dir");
    let ron = dir.path().join("fabric.ron");
    let png = dir.path().join("fabric.png");
    let catalog = railyard::model::Catalog::builtin();
    let mut spec = TemplateSpec::new(Template::RailOptimized);
    spec.nodes = Some(256);
    let design = generate(&spec, &catalog).expect("256 nodes");
    railyard::io::save_design(&ron, &design).expect("writes");
    let mut harness = harness(app());
    assert!(harness.state_mut().open_path(&ron));
    common::app::wait_until(&mut harness, "the design", |app| {
        app.document().design().devices.len() == design.devices.len()
    });
    // A PNG of 556 devices and 6,560 links at 2× takes seconds: it runs in the background.
    click_menu(&mut harness, "File", "Export PNG…");
    click_button(&mut harness, "Export");
    harness.step();
    assert!(!png.exists(), "written in the background");
    request_close(&mut harness);
    harness.step();
    assert!(root_commands(&harness).contains(&ViewportCommand::CancelClose));
    assert_eq!(
        harness.state().status(),
        "Closing once the export is written…"
    );
    let start = std::time::Instant::now();
    while !root_commands(&harness).contains(&ViewportCommand::Close) {
        assert!(start.elapsed().as_secs() < 120, "the window never closed");
        std::thread::sleep(std::time::Duration::from_millis(20));
        harness.step();
    }
    assert!(image::open(&png).is_ok(), "the PNG was written whole");
}
