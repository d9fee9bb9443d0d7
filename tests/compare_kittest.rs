//! The Compare view and the Plots window driven through the accessibility tree: two presets
//! open as tabs, View > Compare designs…, a baseline picked from its menu; the table must show
//! what `railyard compare` computes for the same designs, and the changes must carry the
//! right sign. No file dialogs, no snapshots.

mod common;

use common::app::{app, click_menu, harness, open_preset, wait_until};
use egui::accesskit::Role;
use egui_kittest::Harness;
use egui_kittest::kittest::{NodeT, Queryable};
use railyard::analysis::compare::compare_with;
use railyard::analysis::cost::{bom_lines, cost_summary};
use railyard::app::RailyardApp;
use railyard::app::files::{DialogAnswer, ScriptedDialogs};
use railyard::app::presets::PRESETS;
use railyard::io::row_units::row_texts;
use railyard::model::{Bytes, Catalog, Design, Usd};
use std::time::{Duration, Instant};

const HGX: &str = "4 × HGX H100, 400G RoCE";
const STAR: &str = "4 workstations × 4 RTX 4090 (16 GPUs), 10 GbE switch";

fn preset(title: &str) -> Design {
    PRESETS
        .iter()
        .find(|p| p.title == title)
        .expect("a preset")
        .design()
        .expect("the preset loads")
}

#[test]
fn compare_shows_the_cli_numbers_with_deltas_against_the_chosen_baseline() {
    let catalog = Catalog::builtin();
    let (hgx, star) = (preset(HGX), preset(STAR));
    let mut harness = harness(app());
    open_preset(&mut harness, HGX);
    open_preset(&mut harness, STAR);
    assert_eq!(harness.state().tab_count(), 2);

    click_menu(&mut harness, "View", "Compare designs");
    wait_until(&mut harness, "the comparison", |app| {
        app.comparison().is_some()
    });

    // Columns in tab order, the first the baseline until another is picked.
    let shown = harness.state().comparison().expect("a table").clone();
    assert_eq!(shown.scenarios, [hgx.name.clone(), star.name.clone()]);
    assert_eq!(shown.baseline, 0);
    // 4 nodes × 8 H100 against 4 workstations × 4 RTX 4090.
    assert_eq!(shown.row("gpus").unwrap().values, [Some(32.0), Some(16.0)]);
    assert_eq!(shown.row("gpus").unwrap().deltas, [None, Some(-0.5)]);
    harness.get_by_label("−50.0 %");

    // Slide-ready figures: money as "$1.35M" (the baseline as `Usd::compact` writes it), not
    // "$1,346,176", and each row in one unit, the baseline's.
    let hgx_cost = cost_summary(&bom_lines(&hgx, &catalog)).total;
    harness.get_by_label(&hgx_cost.compact());
    assert!(harness.query_by_label(&hgx_cost.to_string()).is_none());
    let cost_texts = row_texts(shown.row("total_cost_usd").unwrap(), 0);
    assert!(
        cost_texts
            .iter()
            .all(|t| t.starts_with('$') && t.ends_with('M')),
        "{cost_texts:?}"
    );
    // 5.9 ms on the HGX against about 2 s on the workstations: both in ms.
    let time = shown.row("all_reduce_time_us").unwrap();
    let time_texts = row_texts(time, 0);
    assert!(time.values[1] > Some(1e6), "{:?}", time.values);
    assert!(
        time_texts.iter().all(|t| t.ends_with(" ms")),
        "{time_texts:?}"
    );
    for text in cost_texts.iter().chain(&time_texts) {
        harness.get_by_label(text);
    }
    // The chart (cost by default) carries each bar's figure above it, as the table has it:
    // each figure is painted twice.
    let painted = common::painted::painted_texts(&harness);
    for text in &cost_texts {
        let times = painted.iter().filter(|t| *t == text).count();
        assert_eq!(
            times, 2,
            "{text} in the table and on the chart: {painted:?}"
        );
    }

    // Pick the workstation star as the baseline from the combo box: its entry is the one
    // node with the star's name that opening the menu added (the tab, the column tick box
    // and the column heading carry the name too).
    let rects = |h: &Harness<'_, RailyardApp>| -> Vec<egui::Rect> {
        h.query_all_by_label(&star.name).map(|n| n.rect()).collect()
    };
    let before = rects(&harness);
    harness.get_by_label("baseline").click();
    harness.run();
    harness
        .query_all_by_label(&star.name)
        .find(|n| !before.contains(&n.rect()))
        .expect("the star in the baseline menu")
        .click();
    harness.run_ok();
    wait_until(&mut harness, "the new baseline", |app| {
        app.comparison().is_some_and(|c| c.baseline == 1)
    });
    let shown = harness.state().comparison().expect("a table").clone();

    // The same figures `railyard compare` prints for the two designs, star as baseline.
    let cli = compare_with(
        &[
            (hgx.name.clone(), hgx.clone()),
            (star.name.clone(), star.clone()),
        ],
        &catalog,
        Bytes(1 << 30),
        1,
        None,
        Some(railyard::io::validation_sets::published()),
        railyard::analysis::collective::Routing::Ecmp,
    );
    assert_eq!(shown, cli);
    // 32 GPUs against 16: +100 %, and the star itself has no change.
    let gpus = shown.row("gpus").unwrap();
    assert_eq!(gpus.deltas, [Some(1.0), None]);
    harness.get_by_label("+100.0 %");
    assert!(harness.query_by_label("−50.0 %").is_none());

    // Total cost is the BOM's, and the cell shows it as money; the HGX costs more: a rise.
    let star_cost = cost_summary(&bom_lines(&star, &catalog)).total;
    let cost = shown.row("total_cost_usd").unwrap();
    assert_eq!(cost.values, [Some(hgx_cost.0), Some(star_cost.0)]);
    assert!(hgx_cost.0 > star_cost.0);
    // In thousands now, the star's unit: "$50K".
    for text in row_texts(cost, 1) {
        assert!(text.ends_with('K'), "{text}");
        harness.get_by_label(&text);
    }
    assert_eq!(row_texts(cost, 1)[1], Usd(star_cost.0).compact());
    // About 27 times the star's: read as a ratio, not "+2590.0 %".
    let rise = cost.delta_text(0);
    assert!(rise.starts_with('×'), "{rise}");
    assert_eq!(
        cost.deltas[0],
        Some((hgx_cost.0 - star_cost.0) / star_cost.0)
    );
    harness.get_by_label(&rise);

    // "make baseline" on the HGX's column puts the deltas back in the star's column.
    harness.get_by_label("make baseline").click();
    harness.run_ok();
    wait_until(&mut harness, "the HGX as baseline again", |app| {
        app.comparison().is_some_and(|c| c.baseline == 0)
    });
    harness.get_by_label("−50.0 %");
    assert!(harness.query_by_label("+100.0 %").is_none());
    let shown = harness.state().comparison().expect("a table").clone();
    assert_eq!(shown.row("gpus").unwrap().deltas, [None, Some(-0.5)]);

    // The Plots window opens from the sidebar and draws both designs.
    harness.get_by_label("Plots…").click();
    harness.run_ok();
    wait_until(&mut harness, "the plot data", |app| {
        app.plotted_designs().len() == 2
    });
    assert_eq!(
        harness.state().plotted_designs(),
        [star.name.clone(), hgx.name.clone()],
        "the active design first, then the other compared one"
    );
    harness.get_by_label("Cost by category");
    harness.get_by_label_contains("links carry traffic in all-reduce of 1 GiB");
}

#[test]
fn compare_adds_the_sidebars_workload() {
    // With Llama 8B chosen in the sidebar, the Compare view weighs each design against it, as
    // `railyard compare --model 8` does.
    let catalog = Catalog::builtin();
    let (hgx, star) = (preset(HGX), preset(STAR));
    let mut prefs = railyard::app::Prefs::default();
    prefs.workload.model = "llama-8b".into();
    prefs.workload.tp = 1;
    let workload = railyard::analysis::job::workload_of_job(&prefs.workload).expect("a workload");
    let mut harness = harness(RailyardApp::new(Catalog::builtin(), prefs));
    open_preset(&mut harness, HGX);
    open_preset(&mut harness, STAR);
    // The active design's workload, turned on: it starts from the last one chosen.
    harness.get_by_label("Workload").scroll_to_me();
    harness.run();
    harness.get_by_label("Workload").click();
    harness.run();
    assert_eq!(
        harness.state().document().design().job.as_ref(),
        Some(&harness.state().prefs().workload)
    );
    click_menu(&mut harness, "View", "Compare designs");
    wait_until(&mut harness, "the comparison", |app| {
        app.comparison().is_some()
    });
    let shown = harness.state().comparison().expect("a table").clone();
    let cli = compare_with(
        &[(hgx.name.clone(), hgx), (star.name.clone(), star)],
        &catalog,
        Bytes(1 << 30),
        0,
        Some(&workload),
        Some(railyard::io::validation_sets::published()),
        railyard::analysis::collective::Routing::Ecmp,
    );
    for key in ["workload_step_us", "workload_over_ideal", "advice_items"] {
        assert_eq!(shown.row(key), cli.row(key), "{key}");
    }
    // Neither fabric's kind was measured: both say so, in the window as on the command line.
    assert_eq!(shown.all_reduce_checked, cli.all_reduce_checked);
    assert!(
        shown
            .all_reduce_checked
            .iter()
            .all(|c| c.as_deref() == Some("unknown (none near this size)"))
    );
    // The HGX nodes hold Llama 8B at TP 1; a 24 GB RTX 4090 does not (86 GiB needed), so
    // the star shows no traffic for a step that cannot run, only why.
    let step = shown.row("workload_step_us").expect("the row");
    assert!(step.values[0].is_some());
    assert_eq!(step.values[1], None);
    assert!(
        shown.unknown_why[1]
            .as_deref()
            .is_some_and(|w| w.contains("does not fit")),
        "{:?}",
        shown.unknown_why
    );
    harness.get_by_label("llama-8b communication per step");
    // The window says whose job every column runs, and that each GPU keeps its own kernel
    // efficiency (the job sets none).
    let line = harness
        .get_by_label_contains("Every design runs")
        .accesskit_node()
        .value()
        .unwrap_or_default();
    assert!(
        line.ends_with(
            "'s job (training llama-8b); each GPU at its generation's published kernel \
             efficiency"
        ),
        "{line}"
    );
}

#[test]
fn export_png_writes_the_canvas_area_of_a_screenshot() {
    let dir = tempfile::tempdir().expect("temp dir");
    let path = dir.path().join("canvas.png");
    let mut harness = harness(app());
    let mut dialogs = ScriptedDialogs::default();
    dialogs
        .answers
        .push_back(DialogAnswer::Picked(path.clone()));
    harness.state_mut().set_dialogs(Box::new(dialogs));
    open_preset(&mut harness, HGX);
    // The export draws the canvas without the selection, then puts it back.
    let device = harness.state().document().design().devices[0].id;
    let selection = &mut harness.state_mut().canvas_state_mut().selection;
    selection.devices.insert(device);
    let selected = selection.clone();
    click_menu(&mut harness, "File", "Export view as PNG");
    // kittest renders the frame for the screenshot (lavapipe) and hands it back as an event.
    let start = Instant::now();
    while !path.exists() {
        assert!(
            start.elapsed() < Duration::from_secs(60),
            "no PNG; status: {}",
            harness.state().status()
        );
        harness.step();
    }
    let image = image::open(&path).expect("a PNG").to_rgba8();
    let (w, h) = image.dimensions();
    // The canvas only: narrower than the window by the palette and sidebar, shorter by the
    // menu, tab and status bars.
    assert!(w > 400 && w < 1440 - 300, "{w} px wide");
    assert!(h > 400 && h < 900 - 40, "{h} px high");
    assert!(harness.state().status().starts_with("Exported"));
    harness.run();
    assert_eq!(harness.state().canvas_state().selection, selected);
    assert!(harness.state().canvas_state().show_grid);
    assert!(harness.state().canvas_state().show_zoom);
    // Not a blank image: the drawn design has more than one colour.
    let first = image.get_pixel(0, 0);
    assert!(image.pixels().any(|p| p != first));
}

#[test]
fn presentation_mode_hides_the_panels_enlarges_text_and_shows_key_figures() {
    let mut harness = harness(app());
    open_preset(&mut harness, HGX);
    wait_until(&mut harness, "the analysis", |app| {
        app.analysis_is_current()
    });
    let body = |h: &Harness<'_, RailyardApp>| {
        h.ctx.global_style().text_styles[&egui::TextStyle::Body].size
    };
    let normal = body(&harness);
    // Panned far away before presenting: presentation starts with the whole design in view.
    let far = egui::Rect::from_min_size(egui::pos2(50_000.0, 50_000.0), egui::vec2(10.0, 10.0));
    harness.state_mut().canvas_state_mut().scene_rect = far;
    harness.run();
    let before = harness.state().canvas_state().scene_rect;
    harness.key_press(egui::Key::F11);
    harness.run();
    let shown = harness.state().canvas_state().scene_rect;
    for device in &harness.state().document().design().devices {
        let p = egui::pos2(device.pos.x, device.pos.y);
        assert!(
            shown.contains(p),
            "{} at {p:?} outside {shown:?}",
            device.name
        );
    }
    assert!(
        harness.query_by_label("File").is_none(),
        "the menu bar hides"
    );
    assert!(
        harness.query_by_label("Plots…").is_none(),
        "the sidebar hides"
    );
    assert_eq!(body(&harness), normal * 1.5);
    // The strip: the design's 32 GPUs, label and value as one figure, and a way out.
    harness.get_by_label("GPUs 32");
    harness.get_by_label("Exit presentation").click();
    harness.run();
    harness.get_by_label("File");
    assert_eq!(body(&harness), normal);
    // Leaving gives the presenter's own view back, not the fit shown to the audience.
    let after = harness.state().canvas_state().scene_rect;
    assert!(
        (after.center() - before.center()).length() < 1.0,
        "{after:?} against {before:?}"
    );

    // Escape leaves it too, and only once: a second Escape does not re-enter.
    harness.key_press(egui::Key::F11);
    harness.run();
    assert!(harness.query_by_label("File").is_none());
    harness.key_press(egui::Key::Escape);
    harness.run();
    harness.get_by_label("File");
    assert_eq!(body(&harness), normal);
    harness.key_press(egui::Key::Escape);
    harness.run();
    harness.get_by_label("File");
}

#[test]
fn bom_export_from_the_menu_writes_the_csv_and_falls_back_to_a_path_field() {
    let dir = tempfile::tempdir().expect("temp dir");
    let picked = dir.path().join("hgx-bom");
    let mut dialogs = ScriptedDialogs::default();
    dialogs
        .answers
        .push_back(DialogAnswer::Picked(picked.clone()));
    // The second export finds no dialog: the in-app path field asks instead.
    dialogs.answers.push_back(DialogAnswer::Unavailable);
    let mut harness = harness(app());
    harness.state_mut().set_dialogs(Box::new(dialogs));
    open_preset(&mut harness, HGX);

    click_menu(&mut harness, "File", "Export BOM CSV…");
    let csv_path = dir.path().join("hgx-bom.csv");
    let text = std::fs::read_to_string(&csv_path).expect("the CSV, with .csv added");
    let design = harness.state().document().design().clone();
    let lines = railyard::analysis::cost::bom_lines(&design, &Catalog::builtin());
    assert_eq!(
        text.lines().count(),
        lines.len() + 1,
        "a header and a row a part"
    );

    click_menu(&mut harness, "File", "Export SVG…");
    assert!(
        harness
            .query_all_by_role(Role::TextInput)
            .any(|n| n.value().is_some_and(|v| v.ends_with(".svg"))),
        "the path field offers a file name ending in .svg"
    );
    harness.get_by_label("Path of the diagram (SVG):");
}
