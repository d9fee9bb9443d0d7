//! Captions for the tiers of a switched fabric ("spine · 4 × qm9700"), one per row of
//! switches of one role, so a picture shows which row is which and how many switches it
//! holds where their own names are too small to read. The canvas and the SVG export draw
//! the same captions.

use super::device_rows::{DeviceRow, RowKind, device_rows};
use crate::model::{Design, Device, DeviceKind};

pub use super::device_rows::Corners;

/// One row's caption and where it goes: above the row's leftmost box (`at` is that box's
/// top left corner, design units).
#[derive(Debug, Clone, PartialEq)]
pub struct TierCaption {
    pub text: String,
    pub at: (f32, f32),
}

/// The captions of the rows of switches that `bounds` gives a box for (`None`: not drawn
/// on its own), in order from the top. A row is the switches of one role whose boxes share
/// a centre line; rows of one role with no other row between them (a core too long for one
/// row, wrapped) are one tier. Only designs with two tiers or more have them: a single
/// switch needs none. GPU nodes outside any pod, unit or rack (no frame counts them) are
/// captioned by rows too, between the tiers they hang from.
pub fn tier_captions(
    design: &Design,
    bounds: impl Fn(usize) -> Option<Corners>,
) -> Vec<TierCaption> {
    let unframed_node =
        |d: &Device| d.group.is_none() && d.kind.as_node().is_some_and(|n| n.domain.is_none());
    let rows = device_rows(design, bounds, |d| {
        matches!(d.kind, DeviceKind::Switch(_)) || unframed_node(d)
    });
    let mut roles: Vec<RowKind> = rows
        .iter()
        .map(|t| t.kind)
        .filter(|k| matches!(k, RowKind::Switches(_)))
        .collect();
    roles.sort_unstable();
    roles.dedup();
    if roles.len() < 2 {
        return Vec::new();
    }
    rows.iter()
        .map(|t: &DeviceRow| TierCaption {
            text: per_frame(design, t).unwrap_or_else(|| t.caption()),
            at: t.at,
        })
        .collect()
}

/// "leaf · 8 × qm9700 in each unit" for a row that runs through several units or pods side
/// by side, each holding as many of its switches: the caption sits inside the first of them,
/// so a total would read as that one's. It does not count the row's units: a count read as
/// the fabric's (2 in a row of a 2 × 2 grid of 4) misleads. None where the row is in one frame, its
/// frames hold different counts, or they are racks.
fn per_frame(design: &Design, row: &DeviceRow) -> Option<String> {
    let outermost = |i: usize| {
        let mut group = design.group(design.devices[i].group?)?;
        while let Some(parent) = group.parent.and_then(|p| design.group(p)) {
            group = parent;
        }
        Some(group)
    };
    let mut frames: Vec<(crate::model::GroupId, crate::model::GroupKind, usize)> = Vec::new();
    for &i in &row.members {
        let g = outermost(i)?;
        match frames.iter_mut().find(|f| f.0 == g.id) {
            Some(f) => f.2 += 1,
            None => frames.push((g.id, g.kind, 1)),
        }
    }
    let (_, kind, count) = *frames.first()?;
    if frames.len() < 2 || frames.iter().any(|f| f.1 != kind || f.2 != count) {
        return None;
    }
    // Top-of-rack leaves each in a rack of their own are one row of the tree, not a count
    // per rack: only units and pods, which hold a tier's worth each, are named.
    let noun = match kind {
        crate::model::GroupKind::Pod => "pod",
        crate::model::GroupKind::ScalableUnit => "unit",
        crate::model::GroupKind::Rack | crate::model::GroupKind::Plane => return None,
    };
    let what = match &row.model {
        Some(m) => format!("{count} × {m}"),
        None => format!("{count} switches"),
    };
    Some(format!("{} · {what} in each {noun}", row.kind.label()))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::generate::{Template, TemplateSpec, generate};
    use crate::model::{Catalog, PartId, SwitchRole};

    fn boxes(design: &Design) -> impl Fn(usize) -> Option<Corners> + '_ {
        crate::io::device_rows::boxes_at_positions(design)
    }

    #[test]
    fn a_superpod_unit_has_a_spine_row_and_a_leaf_row() {
        let catalog = Catalog::builtin();
        let mut spec = TemplateSpec::new(Template::RailOptimized);
        spec.nodes = Some(32);
        let design = generate(&spec, &catalog).expect("generates");
        let captions = tier_captions(&design, boxes(&design));
        // One unit of 32 DGX H100: 8 rail leaves under 4 spines, all QM9700 (the
        // template's default switch), spines on top.
        let texts: Vec<&str> = captions.iter().map(|c| c.text.as_str()).collect();
        assert_eq!(texts, ["spine · 4 × qm9700", "leaf · 8 × qm9700"]);
        // Each caption sits at its row's leftmost box.
        let leftmost_leaf = design
            .devices
            .iter()
            .filter(|d| matches!(&d.kind, DeviceKind::Switch(s) if s.role == SwitchRole::Leaf))
            .map(|d| d.pos.x - 50.0)
            .fold(f32::INFINITY, f32::min);
        assert_eq!(captions[1].at.0, leftmost_leaf);
    }

    /// 128 DGX: four units of 8 leaves in a 2 × 2 grid, under 16 spines outside any unit.
    /// Each row of leaves runs through two units: its caption, inside the first, counts one
    /// unit's leaves, not the row's 16.
    #[test]
    fn a_row_through_several_units_is_captioned_per_unit() {
        let catalog = Catalog::builtin();
        let mut spec = TemplateSpec::new(Template::RailOptimized);
        spec.nodes = Some(128);
        let design = generate(&spec, &catalog).expect("generates");
        let captions = tier_captions(&design, boxes(&design));
        let texts: Vec<&str> = captions.iter().map(|c| c.text.as_str()).collect();
        assert_eq!(
            texts,
            [
                "leaf · 8 × qm9700 in each unit",
                "spine · 16 × qm9700",
                "leaf · 8 × qm9700 in each unit"
            ]
        );
    }

    /// 1,024 core switches of an 8,192-node fabric do not fit one row: the rows they wrap
    /// into read as one tier. Here: 3 core rows of 2, 2 and 1 over a row of 2 spines.
    #[test]
    fn a_wrapped_tier_is_one_caption() {
        let catalog = Catalog::builtin();
        let mut design = Design::new("wrapped");
        let places = [
            (SwitchRole::Core, 0.0, 0.0),
            (SwitchRole::Core, 120.0, 0.0),
            (SwitchRole::Core, -120.0, 100.0),
            (SwitchRole::Core, 0.0, 100.0),
            (SwitchRole::Core, 0.0, 200.0),
            (SwitchRole::Spine, 0.0, 400.0),
            (SwitchRole::Spine, 120.0, 400.0),
        ];
        for (k, &(role, x, y)) in places.iter().enumerate() {
            let mut d = crate::model::factory::device_from_part(
                &catalog,
                &PartId::new("qm9700"),
                crate::model::DeviceId(k as u32),
                format!("s{k}"),
                crate::model::Pos::new(x, y),
            )
            .expect("a switch");
            if let DeviceKind::Switch(s) = &mut d.kind {
                s.role = role;
            }
            design.insert_device(d);
        }
        let captions = tier_captions(&design, boxes(&design));
        let texts: Vec<&str> = captions.iter().map(|c| c.text.as_str()).collect();
        assert_eq!(texts, ["core · 5 × qm9700 in 3 rows", "spine · 2 × qm9700"]);
        // At the top row, as far left as any of the rows reaches.
        assert_eq!(captions[0].at, (-170.0, -20.0));
    }

    /// Nodes no frame counts (a fat tree imported without racks) are captioned by bands
    /// between the leaf rows they hang from; the leaf rows are counted band by band.
    #[test]
    fn unframed_nodes_are_captioned_by_rows() {
        let design = crate::io::device_rows::ungrouped_fat_tree(64);
        let captions = tier_captions(&design, boxes(&design));
        let texts: Vec<&str> = captions.iter().map(|c| c.text.as_str()).collect();
        // 16 leaves, 9 to a row, each over a stack of 4 nodes: 36 and 28 nodes.
        assert_eq!(
            texts,
            [
                "spine · 8 × qm9700",
                "leaf · 9 × qm9700",
                "nodes · 36 × dgx-h100 in 4 rows",
                "leaf · 7 × qm9700",
                "nodes · 28 × dgx-h100 in 4 rows"
            ]
        );
    }

    #[test]
    fn one_tier_or_nothing_drawn_has_no_captions() {
        let catalog = Catalog::builtin();
        let mut spec = TemplateSpec::new(Template::Star);
        spec.nodes = Some(4);
        let star = generate(&spec, &catalog).expect("a star");
        assert!(tier_captions(&star, boxes(&star)).is_empty());
        let mut spec = TemplateSpec::new(Template::RailOptimized);
        spec.nodes = Some(32);
        let unit = generate(&spec, &catalog).expect("generates");
        assert!(tier_captions(&unit, |_| None).is_empty());
    }
}
