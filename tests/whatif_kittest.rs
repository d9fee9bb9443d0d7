//! The what-if toggle driven through the window (egui_kittest): fail a link from the
//! inspector's What-if section, see the sidebar's change against the healthy design, undo it.

mod common;

use common::app::{WINDOW, open_preset, wait_for_analysis};
use egui::{Key, Modifiers};
use egui_kittest::Harness;
use egui_kittest::kittest::Queryable;
use railyard::app::{Prefs, RailyardApp};
use railyard::model::{Bandwidth, Catalog, DeviceKind, LinkState};

fn harness() -> Harness<'static, RailyardApp> {
    // A tall inspector, so the What-if section under a switch's properties is on screen.
    let prefs = Prefs {
        inspector_height: 700.0,
        ..Prefs::default()
    };
    let app = RailyardApp::new(Catalog::builtin(), prefs);
    Harness::builder()
        .with_size(WINDOW)
        .with_max_steps(12)
        .build_eframe(move |_cc| app)
}

/// The design is healthy: no what-if comparison, in the analysis or on screen.
fn assert_no_whatif(harness: &Harness<'_, RailyardApp>) {
    assert!(
        harness
            .state()
            .analysis()
            .expect("analysis")
            .1
            .whatif
            .is_none()
    );
    assert!(harness.query_by_label_contains("What-if:").is_none());
}

#[test]
fn failing_a_link_shows_the_loss_against_healthy_and_undo_restores_it() {
    let mut harness = harness();
    // 4 HGX H100 nodes, each with 8 × 400G NICs on one switch.
    open_preset(&mut harness, "4 × HGX H100, 400G RoCE");
    assert_no_whatif(&harness);

    // One node-to-switch link, selected alone.
    let design = harness.state().document().design();
    let link = design
        .links
        .iter()
        .find(|l| {
            [l.a.device, l.b.device].iter().any(|&d| {
                design
                    .device(d)
                    .is_some_and(|d| matches!(d.kind, DeviceKind::Switch(_)))
            })
        })
        .expect("a NIC cable")
        .id;
    let selection = &mut harness.state_mut().canvas_state_mut().selection;
    selection.clear();
    selection.links.insert(link);
    harness.run();

    harness.get_by_label("Fail link").click();
    harness.run();
    assert_eq!(
        harness
            .state()
            .document()
            .design()
            .link(link)
            .map(|l| l.state),
        Some(LinkState::Failed)
    );
    wait_for_analysis(&mut harness);
    let (_, analysis) = harness.state().analysis().expect("analysis");
    let whatif = analysis.whatif.as_ref().expect("a what-if comparison");
    assert_eq!((whatif.failed, whatif.degraded), (1, 0));
    // Healthy: 2 nodes × 8 links × 400 Gb/s cross the balanced cut. With one cable down the
    // narrowest cut takes that node and one other: (7 + 8) × 400 Gb/s.
    assert_eq!(whatif.healthy.bisection, Bandwidth::from_gbit_s(6400.0));
    assert_eq!(whatif.current.bisection, Bandwidth::from_gbit_s(6000.0));
    assert_eq!(analysis.metrics.bisection.value, whatif.current.bisection);
    // The job still runs, no faster than healthy.
    let (now, was) = (
        whatif.current.all_reduce.expect("all-reduce runs"),
        whatif.healthy.all_reduce.expect("all-reduce runs healthy"),
    );
    assert!(now.time_us >= was.time_us, "{now:?} vs {was:?}");
    harness.get_by_label_contains("What-if: 1 failed links vs healthy");
    harness.get_by_label("bisection 6 Tb/s (healthy 6.4 Tb/s, −6.25 %)");
    // The sidebar's collective section names all-reduce too; the what-if lines say "healthy".
    assert_eq!(
        harness.query_all_by_label_contains(" (healthy ").count(),
        3,
        "bisection, all-reduce and all-to-all against healthy"
    );
    harness.get_by_label("Restore all (1 links)");
    // The undo step is named for what it does.
    harness.get_by_label("undo: fail links");

    // Undo: one step puts the link back and the comparison goes away.
    harness.key_press_modifiers(Modifiers::COMMAND, Key::Z);
    harness.run();
    assert_eq!(
        harness
            .state()
            .document()
            .design()
            .link(link)
            .map(|l| l.state),
        Some(LinkState::Up)
    );
    wait_for_analysis(&mut harness);
    assert_no_whatif(&harness);
    assert_eq!(
        harness
            .state()
            .analysis()
            .expect("analysis")
            .1
            .metrics
            .bisection
            .value,
        Bandwidth::from_gbit_s(6400.0)
    );
}

#[test]
fn restore_all_is_one_undo_step_after_failing_a_switch() {
    let mut harness = harness();
    open_preset(&mut harness, "4 × HGX H100, 400G RoCE");
    let design = harness.state().document().design();
    let switch = design
        .devices
        .iter()
        .find(|d| matches!(d.kind, DeviceKind::Switch(_)))
        .expect("the switch")
        .id;
    let switch_links = design.links_of(switch).count();
    let selection = &mut harness.state_mut().canvas_state_mut().selection;
    selection.clear();
    selection.devices.insert(switch);
    harness.run();
    harness.get_by_label("Fail device").click();
    harness.run();
    let failed = |h: &Harness<'_, RailyardApp>| {
        h.state()
            .document()
            .design()
            .links
            .iter()
            .filter(|l| l.state == LinkState::Failed)
            .count()
    };
    assert_eq!(failed(&harness), switch_links);
    wait_for_analysis(&mut harness);
    // Every node is cut off: nothing crosses, and the collectives cannot run.
    let (_, analysis) = harness.state().analysis().expect("analysis");
    let whatif = analysis.whatif.as_ref().expect("a comparison");
    assert_eq!(whatif.current.bisection, Bandwidth::from_gbit_s(0.0));
    assert!(whatif.current.all_reduce.is_none());
    harness.get_by_label_contains("all-reduce cannot run");

    harness
        .get_by_label(&format!("Restore all ({switch_links} links)"))
        .click();
    harness.run();
    assert_eq!(failed(&harness), 0);
    // Undoing the restore fails the whole switch again in one step.
    harness.key_press_modifiers(Modifiers::COMMAND, Key::Z);
    harness.run();
    assert_eq!(failed(&harness), switch_links);
    harness.key_press_modifiers(Modifiers::COMMAND, Key::Z);
    harness.run();
    assert_eq!(failed(&harness), 0);
}

#[test]
fn an_unwired_switch_says_it_has_nothing_to_fail() {
    let mut harness = harness();
    harness
        .state_mut()
        .add_part(&railyard::model::PartId::new("qm9700"));
    harness.run();
    let switch = harness.state().document().design().devices[0].id;
    harness
        .state_mut()
        .canvas_state_mut()
        .selection
        .devices
        .insert(switch);
    harness.run();
    // Not a lone "What-if" heading over nothing: the section says why it offers no action.
    assert!(
        harness
            .query_by_label_contains("Nothing to fail here")
            .is_some()
    );
}
