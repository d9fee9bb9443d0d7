//! Rows of a drawing: devices of one kind (switches of one role, GPU nodes, hosts) whose
//! boxes share a centre line. Tier captions name the rows of switches; far out, the canvas
//! folds each row of devices outside any pod into one block that carries its count.

use crate::model::{Design, Device, DeviceKind, PartId, SwitchRole};
use std::collections::BTreeMap;

/// A box as its (min, max) corners, design units.
pub type Corners = ((f32, f32), (f32, f32));

/// What a row holds.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum RowKind {
    Switches(SwitchRole),
    Nodes,
    Hosts,
}

impl RowKind {
    fn of(d: &Device) -> Option<(RowKind, Option<&PartId>)> {
        match &d.kind {
            DeviceKind::Switch(s) => Some((RowKind::Switches(s.role), Some(&s.model))),
            DeviceKind::GpuNode(n) => Some((RowKind::Nodes, Some(&n.model))),
            DeviceKind::Host(h) => Some((RowKind::Hosts, h.model.as_ref())),
            DeviceKind::NvSwitchDomain(_) => None,
        }
    }

    pub fn label(self) -> &'static str {
        match self {
            RowKind::Switches(role) => role.label(),
            RowKind::Nodes => "nodes",
            RowKind::Hosts => "hosts",
        }
    }
}

/// A row, or rows of one kind with no other row between them (a core too long for one row,
/// wrapped), which read as one.
#[derive(Debug, Clone, PartialEq)]
pub struct DeviceRow {
    pub kind: RowKind,
    /// The top left corner of the leftmost box, at the top row.
    pub at: (f32, f32),
    /// The model every member is, `None` once they differ (or a host has none).
    pub model: Option<PartId>,
    /// How many drawn rows it spans.
    pub rows: u32,
    /// Indices into `design.devices`, in design order.
    pub members: Vec<usize>,
    /// The union of the members' boxes.
    pub bounds: Corners,
}

impl DeviceRow {
    /// "core · 1024 × qm9700 in 5 rows", "spine · 4 × qm9700", "nodes · 32 devices".
    pub fn caption(&self) -> String {
        let count = self.members.len();
        let what = match (&self.model, self.kind) {
            (Some(m), _) => format!("{count} × {m}"),
            (None, RowKind::Switches(_)) => format!("{count} switches"),
            (None, _) => format!("{count} devices"),
        };
        let rows = if self.rows > 1 {
            format!(" in {} rows", self.rows)
        } else {
            String::new()
        };
        format!("{} · {what}{rows}", self.kind.label())
    }
}

/// The rows of the devices `include` accepts and `bounds` gives a box for (`None`: not
/// drawn on its own), from the top. Rows at one height are ordered leaf, spine, core, nodes,
/// hosts.
pub fn device_rows(
    design: &Design,
    bounds: impl Fn(usize) -> Option<Corners>,
    include: impl Fn(&Device) -> bool,
) -> Vec<DeviceRow> {
    // Keyed by centre line (whole design units, so float noise does not split a row) and kind.
    let mut rows: BTreeMap<(i64, RowKind), DeviceRow> = BTreeMap::new();
    for (i, d) in design.devices.iter().enumerate() {
        let Some((kind, model)) = RowKind::of(d) else {
            continue;
        };
        if !include(d) {
            continue;
        }
        let Some(((x0, y0), (x1, y1))) = bounds(i) else {
            continue;
        };
        let centre = (f64::from(y0 + y1) / 2.0).round() as i64;
        let row = rows.entry((centre, kind)).or_insert_with(|| DeviceRow {
            kind,
            at: (x0, y0),
            model: model.cloned(),
            rows: 1,
            members: Vec::new(),
            bounds: ((x0, y0), (x1, y1)),
        });
        row.members.push(i);
        if x0 < row.at.0 {
            row.at = (x0, y0);
        }
        if row.model.as_ref() != model {
            row.model = None;
        }
        row.bounds = union(row.bounds, ((x0, y0), (x1, y1)));
    }
    let mut merged: Vec<DeviceRow> = Vec::new();
    for row in rows.into_values() {
        match merged.last_mut() {
            Some(last) if last.kind == row.kind => {
                last.rows += 1;
                last.at.0 = last.at.0.min(row.at.0);
                if last.model != row.model {
                    last.model = None;
                }
                last.bounds = union(last.bounds, row.bounds);
                last.members.extend(row.members);
            }
            _ => merged.push(row),
        }
    }
    // Once per row, not per merge: a grid of a hundred rows of nodes is one row far out.
    for row in &mut merged {
        row.members.sort_unstable();
    }
    merged
}

/// The rows that fold into one block each far out: devices outside any group and outside
/// any NVSwitch domain, two or more to a row. A pod folds into its own block; these are what
/// is left between pods (a core tier) or a design without pods.
pub fn foldable_rows(design: &Design, bounds: impl Fn(usize) -> Option<Corners>) -> Vec<DeviceRow> {
    let loose =
        |d: &Device| d.group.is_none() && d.kind.as_node().is_none_or(|n| n.domain.is_none());
    device_rows(design, bounds, loose)
        .into_iter()
        .filter(|r| r.members.len() >= 2)
        .collect()
}

/// The box around two boxes.
pub(crate) fn union(a: Corners, b: Corners) -> Corners {
    (
        (a.0.0.min(b.0.0), a.0.1.min(b.0.1)),
        (a.1.0.max(b.1.0), a.1.1.max(b.1.1)),
    )
}

/// For tests: a 100 × 40 box around each device's position.
#[cfg(test)]
pub(crate) fn boxes_at_positions(design: &Design) -> impl Fn(usize) -> Option<Corners> + '_ {
    |i| {
        let p = design.devices[i].pos;
        Some(((p.x - 50.0, p.y - 20.0), (p.x + 50.0, p.y + 20.0)))
    }
}

/// For tests: a two-tier fat tree of `nodes` DGX as an imported edge list would give it,
/// without racks or pods.
#[cfg(test)]
pub(crate) fn ungrouped_fat_tree(nodes: u32) -> Design {
    use crate::generate::{Template, TemplateSpec, generate};
    let mut spec = TemplateSpec::new(Template::FatTree);
    spec.nodes = Some(nodes);
    let mut design = generate(&spec, &crate::model::Catalog::builtin()).expect("a fat tree");
    design.groups.clear();
    for d in &mut design.devices {
        d.group = None;
    }
    design
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::generate::{Template, TemplateSpec, generate};
    use crate::model::Catalog;

    fn boxes(design: &Design) -> impl Fn(usize) -> Option<Corners> + '_ {
        boxes_at_positions(design)
    }

    /// A two-tier fat tree of 64 DGX drawn without racks or pods: far out each band of rows
    /// is one block with its count.
    #[test]
    fn an_ungrouped_fat_tree_folds_into_its_rows() {
        let design = ungrouped_fat_tree(64);
        let rows = foldable_rows(&design, boxes(&design));
        let captions: Vec<String> = rows.iter().map(DeviceRow::caption).collect();
        // 64 nodes of 8 NICs are 512 downlinks: 16 leaves of 64 ports (32 down, 32 up) and
        // 512 uplinks over 8 spines of 64 ports. The template wraps the leaves 9 to a row,
        // each over a stack of 4 nodes per leaf: each band is one block.
        assert_eq!(
            captions,
            [
                "spine · 8 × qm9700",
                "leaf · 9 × qm9700",
                "nodes · 36 × dgx-h100 in 4 rows",
                "leaf · 7 × qm9700",
                "nodes · 28 × dgx-h100 in 4 rows"
            ]
        );
        let spines = &rows[0];
        assert_eq!(spines.members.len(), 8);
        // Its box spans its members'.
        let leftmost = spines
            .members
            .iter()
            .map(|&i| design.devices[i].pos.x - 50.0)
            .fold(f32::INFINITY, f32::min);
        assert_eq!(spines.bounds.0.0, leftmost);
    }

    /// Pods fold on their own: only the core between them is left in rows.
    #[test]
    fn only_what_lies_outside_pods_folds_by_rows() {
        let catalog = Catalog::builtin();
        let mut spec = TemplateSpec::new(Template::RailOptimized);
        spec.nodes = Some(256);
        spec.tiers = 3;
        let design = generate(&spec, &catalog).expect("generates");
        let rows = foldable_rows(&design, boxes(&design));
        assert_eq!(
            rows.len(),
            1,
            "{:?}",
            rows.iter().map(DeviceRow::caption).collect::<Vec<_>>()
        );
        assert_eq!(rows[0].kind, RowKind::Switches(SwitchRole::Core));
        assert!(
            rows[0]
                .members
                .iter()
                .all(|&i| design.devices[i].group.is_none())
        );
    }
}
