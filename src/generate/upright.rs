//! Racks stood upright. Templates lay every node of a fabric side by side, so 256 nodes are a
//! row 36,000 units wide under four rows of switches: at zoom to fit, a strip a few pixels
//! high. Drawn as vendors draw racks, each rack's nodes stacked in one column, the row is as
//! many columns as there are racks, and the switches above close up over their racks.

use super::builder::SPACING;
use crate::model::{Design, DeviceKind, GroupId, GroupKind};
use std::collections::{BTreeMap, HashMap, HashSet};

/// Vertical distance between nodes stacked in one rack: a node box (56 units) and its gap,
/// as the canvas's Arrange by tier stacks them.
const RACK_PITCH: f32 = 72.0;

/// One column of the node row: a rack's stacked nodes, or a device standing alone. `first`
/// and `last` are its old leftmost and rightmost x.
struct Column {
    first: f32,
    last: f32,
    members: Vec<usize>,
}

/// Stacks each rack's nodes into a column and closes the row up, moving every other device
/// with the part of the row below it. Does nothing unless some rack holds two or more
/// nodes side by side on one row shared by all such racks (racks with an NVSwitch domain are
/// already drawn as blocks and stay as they are).
pub(super) fn stand_racks_upright(design: &mut Design) {
    let racks: HashSet<GroupId> = design
        .groups
        .iter()
        .filter(|g| g.kind == GroupKind::Rack)
        .map(|g| g.id)
        .collect();
    let mut members: BTreeMap<GroupId, Vec<usize>> = BTreeMap::new();
    for (i, d) in design.devices.iter().enumerate() {
        if let Some(g) = d.group.filter(|g| racks.contains(g)) {
            members.entry(g).or_default().push(i);
        }
    }
    // A rack is stacked when it holds no domain and its nodes share its lowest row.
    let mut stacks: Vec<Vec<usize>> = Vec::new();
    let mut row_y: Option<f32> = None;
    for list in members.values() {
        let devices = || list.iter().map(|&i| &design.devices[i]);
        if devices().any(|d| matches!(d.kind, DeviceKind::NvSwitchDomain(_))) {
            continue;
        }
        let y = devices().map(|d| d.pos.y).fold(f32::NEG_INFINITY, f32::max);
        let mut nodes: Vec<usize> = list
            .iter()
            .copied()
            .filter(|&i| {
                let d = &design.devices[i];
                d.pos.y == y && matches!(d.kind, DeviceKind::GpuNode(_) | DeviceKind::Host(_))
            })
            .collect();
        if nodes.len() < 2 {
            continue;
        }
        match row_y {
            None => row_y = Some(y),
            Some(r) if r != y => return,
            Some(_) => {}
        }
        nodes.sort_by(|&a, &b| design.devices[a].pos.x.total_cmp(&design.devices[b].pos.x));
        stacks.push(nodes);
    }
    let Some(row_y) = row_y else { return };
    let stacked: HashSet<usize> = stacks.iter().flatten().copied().collect();
    let mut columns: Vec<Column> = stacks
        .into_iter()
        .map(|m| Column {
            first: design.devices[m[0]].pos.x,
            last: design.devices[m[m.len() - 1]].pos.x,
            members: m,
        })
        .collect();
    for (i, d) in design.devices.iter().enumerate() {
        if d.pos.y == row_y && !stacked.contains(&i) {
            columns.push(Column {
                first: d.pos.x,
                last: d.pos.x,
                members: vec![i],
            });
        }
    }
    columns.sort_by(|a, b| a.first.total_cmp(&b.first));
    // Each column keeps the gap that stood before it (rack and block gaps survive).
    let mut new_x = Vec::with_capacity(columns.len());
    for (k, c) in columns.iter().enumerate() {
        let x = match k {
            0 => c.first,
            _ => new_x[k - 1] + (c.first - columns[k - 1].last).max(SPACING),
        };
        new_x.push(x);
    }
    let remap = Remap {
        anchors: columns
            .iter()
            .zip(&new_x)
            .map(|(c, &x)| (c.first, c.last, x))
            .collect(),
    };
    for (c, &x) in columns.iter().zip(&new_x) {
        for (j, &i) in c.members.iter().enumerate() {
            design.devices[i].pos.x = x;
            design.devices[i].pos.y = row_y + j as f32 * RACK_PITCH;
        }
    }
    let in_row: HashSet<usize> = columns
        .iter()
        .flat_map(|c| c.members.iter().copied())
        .collect();
    let mut rows: HashMap<u32, Vec<usize>> = HashMap::new();
    for (i, d) in design.devices.iter_mut().enumerate() {
        if !in_row.contains(&i) {
            d.pos.x = remap.apply(d.pos.x);
            rows.entry(d.pos.y.to_bits()).or_default().push(i);
        }
    }
    for row in rows.into_values() {
        let xs: Vec<f32> = row.iter().map(|&i| design.devices[i].pos.x).collect();
        for (i, x) in row.into_iter().zip(separate(&xs, SPACING)) {
            design.devices[i].pos.x = x.round();
        }
    }
}

/// The row's old x to its new x: each column's old span goes to its one new x, the gaps
/// between columns scale linearly, and beyond the ends x shifts with the nearest column.
struct Remap {
    /// (old first, old last, new x) of each column, left to right.
    anchors: Vec<(f32, f32, f32)>,
}

impl Remap {
    fn apply(&self, x: f32) -> f32 {
        let Some(&(first, _, new)) = self.anchors.first() else {
            return x;
        };
        if x <= first {
            return x - first + new;
        }
        for pair in self.anchors.windows(2) {
            let ((_, last, a), (next, _, b)) = (pair[0], pair[1]);
            if x <= last {
                return a;
            }
            if x < next {
                return a + (x - last) / (next - last) * (b - a);
            }
        }
        let &(_, last, new) = self.anchors.last().unwrap_or(&(first, first, new));
        if x <= last { new } else { x - last + new }
    }
}

/// Positions at least `gap` apart, each as near its wanted x as that allows: devices that
/// would crowd are spread evenly about their wanted positions' mean (in their given order
/// by wanted x).
fn separate(wanted: &[f32], gap: f32) -> Vec<f32> {
    let mut order: Vec<usize> = (0..wanted.len()).collect();
    order.sort_by(|&a, &b| wanted[a].total_cmp(&wanted[b]));
    // Clusters of consecutive devices: (count, sum of wanted x); each is laid about its mean.
    let mut clusters: Vec<(usize, f32)> = Vec::new();
    for &i in &order {
        clusters.push((1, wanted[i]));
        while clusters.len() >= 2 {
            let (n2, s2) = clusters[clusters.len() - 1];
            let (n1, s1) = clusters[clusters.len() - 2];
            let right_of_first = s1 / n1 as f32 + (n1 as f32 - 1.0) * gap / 2.0;
            let left_of_second = s2 / n2 as f32 - (n2 as f32 - 1.0) * gap / 2.0;
            if left_of_second - right_of_first >= gap {
                break;
            }
            clusters.pop();
            let last = clusters.len() - 1;
            // Merged, the cluster's mean is its members' wanted mean.
            clusters[last] = (n1 + n2, s1 + s2);
        }
    }
    let mut out = vec![0.0; wanted.len()];
    let mut k = 0;
    for (n, sum) in clusters {
        let start = sum / n as f32 - (n as f32 - 1.0) * gap / 2.0;
        for j in 0..n {
            out[order[k]] = start + j as f32 * gap;
            k += 1;
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn crowded_positions_spread_about_their_mean() {
        // 0 and 10 want to be 120 apart: they centre on 5, at -55 and 65; 500 stays.
        assert_eq!(
            separate(&[10.0, 0.0, 500.0], 120.0),
            vec![65.0, -55.0, 500.0]
        );
        // Merging cascades: -55/65 then meets 100 -> three about 36.67.
        let out = separate(&[0.0, 10.0, 100.0], 120.0);
        let mean = 110.0 / 3.0;
        assert!((out[0] - (mean - 120.0)).abs() < 1e-3, "{out:?}");
        assert!((out[2] - (mean + 120.0)).abs() < 1e-3, "{out:?}");
    }

    #[test]
    fn the_row_closes_up_around_columns() {
        // Two racks: old spans [0, 360] and [480, 840] become x = 0 and x = 120 (the gap of
        // 120 kept); a switch above the first rack's middle sits on its column.
        let r = Remap {
            anchors: vec![(0.0, 360.0, 0.0), (480.0, 840.0, 120.0)],
        };
        assert_eq!(r.apply(180.0), 0.0);
        assert_eq!(r.apply(420.0), 60.0);
        assert_eq!(r.apply(900.0), 180.0);
        assert_eq!(r.apply(-30.0), -30.0);
    }
}
