//! The right-click menu's View section: fold a rack, pod or scalable unit into one block at
//! any zoom (its links drawn as bundles with counts), and unfold it again. Folding is a view
//! of the design, not an edit: nothing goes on the undo stack and nothing is saved.

use crate::model::{Design, DeviceId, GroupId};
use egui::{RichText, Ui};
use std::collections::BTreeSet;

/// What the menu was opened on.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum FoldTarget {
    Canvas,
    Device(DeviceId),
    /// A folded group's block.
    Block(GroupId),
}

/// A group's name, or a plain word for one that no longer exists.
pub(super) fn group_name(design: &Design, id: GroupId) -> &str {
    design.group(id).map_or("the group", |g| g.name.as_str())
}

/// The groups a device sits in, innermost first (a rack, then its pod).
fn groups_around(design: &Design, device: DeviceId) -> Vec<GroupId> {
    let mut chain = Vec::new();
    let mut next = design.device(device).and_then(|d| d.group);
    while let Some(id) = next {
        if chain.contains(&id) || chain.len() >= 16 {
            break;
        }
        chain.push(id);
        next = design.group(id).and_then(|g| g.parent);
    }
    chain
}

/// The section's items; on a click, what changed, for the status line.
pub(super) fn fold_menu_ui(
    ui: &mut Ui,
    design: &Design,
    folded: &mut BTreeSet<GroupId>,
    target: FoldTarget,
) -> Option<String> {
    let foldable: Vec<GroupId> = match target {
        FoldTarget::Device(d) => groups_around(design, d),
        _ => Vec::new(),
    };
    let unfoldable = match target {
        FoldTarget::Block(g) => Some(g),
        _ => None,
    };
    // Folded groups of a design whose groups changed since (undo) are no longer there.
    folded.retain(|&g| design.group(g).is_some());
    if foldable.is_empty() && unfoldable.is_none() && folded.is_empty() {
        return None;
    }
    ui.separator();
    ui.label(RichText::new("View").strong());
    let mut said = None;
    for g in foldable {
        let name = group_name(design, g);
        if ui
            .button(format!("Fold {name}"))
            .on_hover_text(
                "Draw it as one block with its links bundled (double-click the block to \
                 unfold it). A view only: the design does not change.",
            )
            .clicked()
        {
            folded.insert(g);
            said = Some(format!("Folded {name} (double-click it to unfold)"));
            ui.close();
        }
    }
    if let Some(g) = unfoldable
        && ui
            .button(format!("Unfold {}", group_name(design, g)))
            .clicked()
    {
        folded.remove(&g);
        said = Some(format!("Unfolded {}", group_name(design, g)));
        ui.close();
    }
    if !folded.is_empty()
        && ui
            .button(format!("Unfold all ({})", folded.len()))
            .clicked()
    {
        folded.clear();
        said = Some("Every group unfolded".into());
        ui.close();
    }
    said
}
