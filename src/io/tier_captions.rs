//! Captions for the tiers of a switched fabric ("spine · 4 × qm9700"), one per row of
//! switches of one role, so a picture shows which row is which and how many switches it
//! holds where their own names are too small to read. The canvas and the SVG export draw
//! the same captions.

use crate::model::{Design, DeviceKind, PartId, SwitchRole};
use std::collections::BTreeMap;

/// A box as its (min, max) corners, design units.
pub type Corners = ((f32, f32), (f32, f32));

/// One row's caption and where it goes: above the row's leftmost box (`at` is that box's
/// top left corner, design units).
#[derive(Debug, Clone, PartialEq)]
pub struct TierCaption {
    pub text: String,
    pub at: (f32, f32),
}

/// A row being read: its role, leftmost box's top left corner, count and model (`None`
/// once models differ).
struct Row {
    role: SwitchRole,
    at: (f32, f32),
    count: u32,
    model: Option<PartId>,
    /// Rows of the same role next to each other (a long core wrapped) read as one.
    rows: u32,
}

/// The captions of the rows of switches that `bounds` gives a box for (`None`: not drawn
/// on its own), in order from the top. A row is the switches of one role whose boxes share
/// a centre line. Only designs with two tiers or more have them: a single switch needs none.
pub fn tier_captions(
    design: &Design,
    bounds: impl Fn(usize) -> Option<Corners>,
) -> Vec<TierCaption> {
    // Keyed by centre line (whole design units, so float noise does not split a row) and role.
    let mut rows: BTreeMap<(i64, u8), Row> = BTreeMap::new();
    for (i, d) in design.devices.iter().enumerate() {
        let DeviceKind::Switch(s) = &d.kind else {
            continue;
        };
        let Some(((x0, y0), (_, y1))) = bounds(i) else {
            continue;
        };
        let centre = (f64::from(y0 + y1) / 2.0).round() as i64;
        let row = rows.entry((centre, s.role as u8)).or_insert(Row {
            role: s.role,
            at: (x0, y0),
            count: 0,
            model: Some(s.model.clone()),
            rows: 1,
        });
        row.count += 1;
        if x0 < row.at.0 {
            row.at = (x0, y0);
        }
        if row.model.as_ref() != Some(&s.model) {
            row.model = None;
        }
    }
    let mut roles: Vec<u8> = rows.keys().map(|&(_, r)| r).collect();
    roles.sort_unstable();
    roles.dedup();
    if roles.len() < 2 {
        return Vec::new();
    }
    // Rows of one role with no other row between them (a core too long for one row, wrapped)
    // are one tier: one caption at the top row, counting them all.
    let mut tiers: Vec<Row> = Vec::new();
    for row in rows.into_values() {
        match tiers.last_mut() {
            Some(last) if last.role == row.role => {
                last.count += row.count;
                last.rows += 1;
                last.at.0 = last.at.0.min(row.at.0);
                if last.model != row.model {
                    last.model = None;
                }
            }
            _ => tiers.push(row),
        }
    }
    tiers
        .into_iter()
        .map(|r| {
            let what = match &r.model {
                Some(m) => format!("{} × {m}", r.count),
                None => format!("{} switches", r.count),
            };
            let rows = if r.rows > 1 {
                format!(" in {} rows", r.rows)
            } else {
                String::new()
            };
            TierCaption {
                text: format!("{} · {what}{rows}", r.role.label()),
                at: r.at,
            }
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::generate::{Template, TemplateSpec, generate};
    use crate::model::Catalog;

    fn boxes(design: &Design) -> impl Fn(usize) -> Option<Corners> + '_ {
        |i| {
            let p = design.devices[i].pos;
            Some(((p.x - 50.0, p.y - 20.0), (p.x + 50.0, p.y + 20.0)))
        }
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
