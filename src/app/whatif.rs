//! What-if in the designer: mark a link, a device (a switch and so all its links), a rail or a
//! plane failed or degraded, and restore everything, each as one batch of link updates under
//! its own name (one undo step, "undo: fail links"). The sidebar then shows the change against the healthy design, the same design with
//! every link up, which the analysis worker evaluates alongside the current one.

use crate::analysis::whatif::{
    Scope, WhatIfDelta, links_in_scope, planes, rails, unhealthy_counts,
};
use crate::model::command::Command;
use crate::model::units::time_text;
use crate::model::{Design, DeviceId, DeviceKind, LinkId, LinkState};
use egui::{RichText, Ui};
use std::collections::BTreeSet;

/// The fraction "degrade" sets; the inspector's slider refines it.
pub const DEGRADED_FRACTION: f64 = 0.5;

/// Sets `state` on every listed link that is not in it already, as one undo step named for
/// what it does ("Undid fail links").
pub fn state_command(design: &Design, links: &[LinkId], state: LinkState) -> Option<Command> {
    let updates: Vec<Command> = links
        .iter()
        .filter_map(|&id| design.link(id))
        .filter(|l| l.state != state)
        .map(|l| {
            let mut l = l.clone();
            l.state = state;
            Command::UpdateLink(Box::new(l))
        })
        .collect();
    let label = match state {
        LinkState::Failed => "fail links",
        LinkState::Degraded { .. } => "degrade links",
        LinkState::Up => "restore links",
    };
    (!updates.is_empty()).then(|| Command::Named {
        label,
        command: Box::new(Command::Batch(updates)),
    })
}

pub fn scope_command(design: &Design, scope: Scope, state: LinkState) -> Option<Command> {
    state_command(design, &links_in_scope(design, scope), state)
}

/// Every failed or degraded link back up, as one undo step.
pub fn restore_all_command(design: &Design) -> Option<Command> {
    let all: Vec<LinkId> = design.links.iter().map(|l| l.id).collect();
    state_command(design, &all, LinkState::Up)
}

/// A relative change as "+12.5 %" / "−6.25 %".
pub fn change_text(now: f64, was: f64) -> String {
    if was == 0.0 {
        return if now == 0.0 {
            "±0 %".into()
        } else {
            "new".into()
        };
    }
    let pct = (now - was) / was * 100.0;
    let sign = if pct > 0.0 {
        "+"
    } else if pct < 0.0 {
        "−"
    } else {
        "±"
    };
    let mag = pct.abs();
    let digits = if mag >= 100.0 {
        format!("{mag:.0}")
    } else {
        let text = format!("{mag:.2}");
        text.trim_end_matches('0').trim_end_matches('.').to_string()
    };
    format!("{sign}{digits} %")
}

/// The sidebar's what-if section: each figure now, healthy, and the change.
pub fn delta_ui(ui: &mut Ui, d: &WhatIfDelta) {
    let mut parts = Vec::new();
    if d.failed > 0 {
        parts.push(format!("{} failed", d.failed));
    }
    if d.degraded > 0 {
        parts.push(format!("{} degraded", d.degraded));
    }
    ui.label(
        RichText::new(format!("What-if: {} links vs healthy", parts.join(", ")))
            .strong()
            .color(ui.visuals().warn_fg_color),
    );
    let (now, was) = (d.current.bisection, d.healthy.bisection);
    ui.label(format!(
        "bisection {now} (healthy {was}, {})",
        change_text(now.gbit_s(), was.gbit_s())
    ));
    for (name, now, was) in [
        ("all-reduce", d.current.all_reduce, d.healthy.all_reduce),
        ("all-to-all", d.current.all_to_all, d.healthy.all_to_all),
    ] {
        match (now, was) {
            (Some(n), Some(w)) => {
                ui.label(format!(
                    "{name} {} (healthy {}, {}); busbw {:.1} GB/s ({})",
                    time_text(n.time_us),
                    time_text(w.time_us),
                    change_text(n.time_us, w.time_us),
                    n.busbw_gbyte_s,
                    change_text(n.busbw_gbyte_s, w.busbw_gbyte_s)
                ));
            }
            (None, Some(_)) => {
                ui.colored_label(
                    ui.visuals().error_fg_color,
                    format!("{name} cannot run: the failure cuts GPUs apart"),
                );
            }
            _ => {}
        }
    }
}

/// The what-if section under the inspector.
pub fn whatif_ui(
    ui: &mut Ui,
    design: &Design,
    devices: &BTreeSet<DeviceId>,
    links: &BTreeSet<LinkId>,
) -> Vec<Command> {
    egui::CollapsingHeader::new("What-if")
        .id_salt("whatif")
        .default_open(true)
        .show(ui, |ui| whatif_buttons(ui, design, devices, links))
        .body_returned
        .flatten()
        .into_iter()
        .collect()
}

/// The canvas's right-click menu: the same actions for what was clicked (or the selection).
pub fn context_menu_ui(
    ui: &mut Ui,
    design: &Design,
    devices: &BTreeSet<DeviceId>,
    links: &BTreeSet<LinkId>,
) -> Option<Command> {
    ui.label(RichText::new("What-if").strong());
    let command = whatif_buttons(ui, design, devices, links);
    if command.is_some() {
        ui.close();
    }
    command
}

/// For the selection, per rail and plane, and Restore all. At most one command per frame.
fn whatif_buttons(
    ui: &mut Ui,
    design: &Design,
    devices: &BTreeSet<DeviceId>,
    links: &BTreeSet<LinkId>,
) -> Option<Command> {
    let mut out: Option<Command> = None;
    let mut emit = |c: Option<Command>| {
        if out.is_none() {
            out = c;
        }
    };
    let degraded = LinkState::Degraded {
        fraction: DEGRADED_FRACTION,
    };
    let (failed_count, degraded_count) = unhealthy_counts(design);
    // The selection: its links plus every link of its devices (one pass: Select All on a
    // big fabric selects many devices).
    let selected: Vec<LinkId> = design
        .links
        .iter()
        .filter(|l| {
            links.contains(&l.id) || devices.contains(&l.a.device) || devices.contains(&l.b.device)
        })
        .map(|l| l.id)
        .collect();
    if !selected.is_empty() {
        let what = match (devices.len(), links.len()) {
            (0, 1) => "link".to_string(),
            (0, n) => format!("{n} links"),
            (1, 0) => "device".to_string(),
            (n, 0) => format!("{n} devices"),
            _ => "selection".to_string(),
        };
        ui.horizontal_wrapped(|ui| {
            if ui
                .button(format!("Fail {what}"))
                .on_hover_text(format!("Mark {} links failed", selected.len()))
                .clicked()
            {
                emit(state_command(design, &selected, LinkState::Failed));
            }
            if ui
                .button(format!("Degrade {what}"))
                .on_hover_text("Run its links at half rate")
                .clicked()
            {
                emit(state_command(design, &selected, degraded));
            }
            if ui.button(format!("Restore {what}")).clicked() {
                emit(state_command(design, &selected, LinkState::Up));
            }
        });
    }
    // The rail and plane of a selected switch, then every rail and plane.
    let mut selected_rails = BTreeSet::new();
    let mut selected_planes = BTreeSet::new();
    for d in devices.iter().filter_map(|&d| design.device(d)) {
        if let DeviceKind::Switch(s) = &d.kind {
            selected_rails.extend(s.rail);
            selected_planes.extend(d.group);
        }
    }
    let all_rails = rails(design);
    let all_planes = planes(design);
    let offered = !selected.is_empty() || !all_rails.is_empty() || !all_planes.is_empty();
    if !all_rails.is_empty() {
        ui.horizontal_wrapped(|ui| {
            ui.label("Fail rail");
            for r in all_rails {
                let b = egui::Button::new(r.to_string())
                    .small()
                    .selected(selected_rails.contains(&r));
                if ui
                    .add(b)
                    .on_hover_text(format!("Fail every link of rail {r}'s switches"))
                    .clicked()
                {
                    emit(scope_command(design, Scope::Rail(r), LinkState::Failed));
                }
            }
        });
    }
    if !all_planes.is_empty() {
        ui.horizontal_wrapped(|ui| {
            ui.label("Fail plane");
            for (g, name) in all_planes {
                let b = egui::Button::new(name.as_str())
                    .small()
                    .selected(selected_planes.contains(&g));
                if ui
                    .add(b)
                    .on_hover_text(format!("Fail every link of plane {name}'s switches"))
                    .clicked()
                {
                    emit(scope_command(design, Scope::Plane(g), LinkState::Failed));
                }
            }
        });
    }
    if failed_count + degraded_count > 0 {
        let text = format!("Restore all ({} links)", failed_count + degraded_count);
        if ui
            .button(text)
            .on_hover_text("Every failed or degraded link back up, in one undo step")
            .clicked()
        {
            emit(restore_all_command(design));
        }
    } else if selected_is_empty(devices, links) {
        ui.weak("Select a link or switch, or pick a rail or plane, to see what its loss costs.");
    } else if !offered {
        // Without this line the heading would stand alone (an unwired switch, say).
        ui.weak("Nothing to fail here: the selection has no links yet.");
    }
    out
}

fn selected_is_empty(devices: &BTreeSet<DeviceId>, links: &BTreeSet<LinkId>) -> bool {
    devices.is_empty() && links.is_empty()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::generate::{Template, TemplateSpec, generate};
    use crate::model::Catalog;

    fn star() -> Design {
        let mut spec = TemplateSpec::new(Template::Star);
        spec.nodes = Some(2);
        generate(&spec, &Catalog::builtin()).expect("a star")
    }

    #[test]
    fn one_batch_per_action_and_restore_all_undoes_everything() {
        let mut design = star();
        let original = design.clone();
        let switch = design
            .devices
            .iter()
            .find(|d| matches!(d.kind, DeviceKind::Switch(_)))
            .expect("the star's switch")
            .id;
        let fail = scope_command(&design, Scope::Device(switch), LinkState::Failed)
            .expect("the switch has links");
        let Command::Named { label, command } = &fail else {
            panic!("one named step: {fail:?}");
        };
        assert_eq!(*label, "fail links");
        let Command::Batch(steps) = command.as_ref() else {
            panic!("one batch: {fail:?}");
        };
        assert_eq!(steps.len(), design.links_of(switch).count());
        let undo = fail.apply(&mut design).expect("applies");
        // Its undo keeps the name, for "Redo fail links".
        assert_eq!(undo.label(), "fail links");
        let (failed, _) = unhealthy_counts(&design);
        assert_eq!(failed, original.links_of(switch).count());
        // Failing again changes nothing, so there is nothing to do.
        assert!(scope_command(&design, Scope::Device(switch), LinkState::Failed).is_none());
        undo.apply(&mut design).expect("undoes");
        assert_eq!(design, original);

        let first = design.links[0].id;
        let degrade = state_command(&design, &[first], LinkState::Degraded { fraction: 0.5 })
            .expect("a change");
        degrade.apply(&mut design).expect("applies");
        scope_command(&design, Scope::Device(switch), LinkState::Failed)
            .expect("a change")
            .apply(&mut design)
            .expect("applies");
        restore_all_command(&design)
            .expect("something to restore")
            .apply(&mut design)
            .expect("applies");
        assert_eq!(design, original);
        assert!(restore_all_command(&design).is_none());
    }

    #[test]
    fn changes_read_as_signed_percentages() {
        assert_eq!(change_text(5600.0, 6400.0), "−12.5 %");
        assert_eq!(change_text(7.0, 5.0), "+40 %");
        assert_eq!(change_text(6000.0, 6400.0), "−6.25 %");
        assert_eq!(change_text(1.0, 1.0), "±0 %");
        assert_eq!(change_text(0.0, 0.0), "±0 %");
    }
}
