//! "Arrange by tier": core switches on top, then spines, then leaves (grouped by rail), then
//! the nodes (grouped by NVLink domain or rack, stacked like a rack; a small design's racks
//! in a row), then plain hosts.

use crate::model::command::Command;
use crate::model::{Catalog, Design, DeviceId, DeviceKind, GroupId, Pos, SwitchRole};
use std::collections::HashMap;

/// Horizontal distance between neighbouring devices (as the templates use).
const COLUMN: f32 = 120.0;
/// Vertical distance between nodes stacked in one rack.
const RACK_PITCH: f32 = 72.0;
/// Extra room between racks, and between rails in a switch row.
const GAP: f32 = 60.0;
/// Vertical distance between tiers.
const TIER: f32 = 260.0;
/// Nodes stacked per column of a rack before a new column starts.
const RACK_ROWS: usize = 9;
/// Loose nodes (no rack, no domain) are stacked this many to a column when there are many.
const LOOSE_STACK: usize = 8;
/// Up to this many loose nodes simply stand in a row.
const LOOSE_ROW: usize = 16;

#[derive(Clone, Copy, PartialEq, Eq, Hash)]
enum BlockKey {
    Domain(DeviceId),
    Group(GroupId),
    Loose(usize),
}

/// One `MoveDevices` that lays the design out by tier. Devices already in place are left out.
pub fn arrange_by_tier(design: &Design, _catalog: &Catalog) -> Command {
    let mut moves: Vec<(DeviceId, Pos)> = Vec::new();

    // Node blocks, in order of first appearance.
    let loose_count = design
        .devices
        .iter()
        .filter(|d| matches!(&d.kind, DeviceKind::GpuNode(n) if n.domain.is_none() && d.group.is_none()))
        .count();
    let loose_per_block = if loose_count <= LOOSE_ROW {
        1
    } else {
        LOOSE_STACK
    };
    let mut blocks: Vec<(BlockKey, Vec<DeviceId>)> = Vec::new();
    let mut block_index: HashMap<BlockKey, usize> = HashMap::new();
    let mut loose_seen = 0;
    let mut push = |key: BlockKey, id: DeviceId, blocks: &mut Vec<(BlockKey, Vec<DeviceId>)>| {
        let k = *block_index.entry(key).or_insert_with(|| {
            blocks.push((key, Vec::new()));
            blocks.len() - 1
        });
        blocks[k].1.push(id);
    };
    for d in &design.devices {
        match &d.kind {
            DeviceKind::GpuNode(n) => {
                let key = match (n.domain, d.group) {
                    (Some(domain), _) => BlockKey::Domain(domain),
                    (None, Some(g)) => BlockKey::Group(g),
                    (None, None) => {
                        loose_seen += 1;
                        BlockKey::Loose((loose_seen - 1) / loose_per_block)
                    }
                };
                push(key, d.id, &mut blocks);
            }
            // A domain stands where its members are; an empty one gets a block of its own.
            DeviceKind::NvSwitchDomain(_) => {
                let has_members = design
                    .devices
                    .iter()
                    .any(|m| m.kind.as_node().is_some_and(|n| n.domain == Some(d.id)));
                if !has_members {
                    push(BlockKey::Domain(d.id), d.id, &mut blocks);
                }
            }
            _ => {}
        }
    }

    let tiers: Vec<Vec<&crate::model::Device>> =
        [SwitchRole::Core, SwitchRole::Spine, SwitchRole::Leaf]
            .iter()
            .map(|role| {
                let mut row: Vec<_> = design
                    .devices
                    .iter()
                    .filter(|d| d.kind.as_switch().is_some_and(|s| s.role == *role))
                    .collect();
                row.sort_by_key(|d| {
                    (
                        d.kind.as_switch().and_then(|s| s.rail).unwrap_or(u32::MAX),
                        d.id,
                    )
                });
                row
            })
            .filter(|row| !row.is_empty())
            .collect();
    let node_top = tiers.len() as f32 * TIER;
    let node_count = design
        .devices
        .iter()
        .filter(|d| matches!(d.kind, DeviceKind::GpuNode(_)))
        .count();

    // Lay the node blocks out left to right, each as columns of a rack.
    let mut x = 0.0;
    let mut tallest = 0usize;
    let mut domain_members: HashMap<DeviceId, (f32, f32, f32, f32)> = HashMap::new();
    for (key, ids) in &blocks {
        let only_empty_domain =
            matches!(key, BlockKey::Domain(d) if ids.len() == 1 && ids[0] == *d);
        if only_empty_domain {
            let width = 2.0 * COLUMN;
            moves.push((ids[0], Pos::new(x + width / 2.0, node_top + RACK_PITCH)));
            tallest = tallest.max(3);
            x += width + GAP;
            continue;
        }
        // A rack's nodes stack as in the rack, except in a small design, where they stand in
        // a row: cables drawn down to a stack would run through the boxes above.
        let rows = match key {
            BlockKey::Group(_) if node_count <= LOOSE_ROW => 1,
            _ => ids.len().clamp(1, RACK_ROWS),
        };
        let columns = ids.len().div_ceil(rows);
        for (k, id) in ids.iter().enumerate() {
            let pos = Pos::new(
                x + (k / rows) as f32 * COLUMN + COLUMN / 2.0,
                node_top + (k % rows) as f32 * RACK_PITCH,
            );
            moves.push((*id, pos));
            if let BlockKey::Domain(domain) = key {
                let e = domain_members
                    .entry(*domain)
                    .or_insert((pos.x, pos.y, pos.x, pos.y));
                *e = (
                    e.0.min(pos.x),
                    e.1.min(pos.y),
                    e.2.max(pos.x),
                    e.3.max(pos.y),
                );
            }
        }
        tallest = tallest.max(rows);
        x += columns as f32 * COLUMN + GAP;
    }
    let nodes_width = (x - GAP).max(COLUMN);
    for (domain, (x0, y0, x1, y1)) in domain_members {
        moves.push((domain, Pos::new((x0 + x1) / 2.0, (y0 + y1) / 2.0)));
    }

    // Switch rows, centred over the nodes, an extra gap where the rail changes.
    let row_of = |row: &[&crate::model::Device], y: f32, moves: &mut Vec<(DeviceId, Pos)>| {
        let rail = |d: &crate::model::Device| d.kind.as_switch().and_then(|s| s.rail);
        let gaps = row.windows(2).filter(|w| rail(w[0]) != rail(w[1])).count();
        let width = row.len() as f32 * COLUMN + gaps as f32 * GAP;
        let mut x = nodes_width / 2.0 - width / 2.0;
        for (k, d) in row.iter().enumerate() {
            if k > 0 && rail(row[k - 1]) != rail(d) {
                x += GAP;
            }
            moves.push((d.id, Pos::new(x + COLUMN / 2.0, y)));
            x += COLUMN;
        }
    };
    for (t, row) in tiers.iter().enumerate() {
        row_of(row, t as f32 * TIER, &mut moves);
    }
    let hosts: Vec<&crate::model::Device> = design
        .devices
        .iter()
        .filter(|d| matches!(d.kind, DeviceKind::Host(_)))
        .collect();
    let host_y = node_top + (tallest.max(1) - 1) as f32 * RACK_PITCH + TIER;
    row_of(&hosts, host_y, &mut moves);

    moves.retain(|(id, pos)| design.device(*id).is_some_and(|d| d.pos != *pos));
    moves.sort_by_key(|(id, _)| *id);
    Command::MoveDevices { moves }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::{
        Device, GroupKind, Host, HostRole, NvSwitchDomain, PartId, Switch, SwitchFeatures,
    };

    fn switch(id: u32, role: SwitchRole, rail: Option<u32>) -> Device {
        Device {
            id: DeviceId(id),
            name: format!("s{id}"),
            pos: Pos::default(),
            group: None,
            kind: DeviceKind::Switch(Switch {
                model: PartId::new("qm9700"),
                role,
                breakout: 1,
                rail,
                features: SwitchFeatures::default(),
            }),
        }
    }

    fn node(catalog: &Catalog, id: u32, group: Option<GroupId>) -> Device {
        let mut d = crate::model::factory::device_from_part(
            catalog,
            &PartId::new("dgx-h100"),
            DeviceId(id),
            format!("n{id}"),
            Pos::default(),
        )
        .unwrap();
        d.group = group;
        d
    }

    fn position(cmd: &Command, id: u32) -> Pos {
        match cmd {
            Command::MoveDevices { moves } => moves
                .iter()
                .find(|(d, _)| *d == DeviceId(id))
                .map(|(_, p)| *p)
                .expect("device moved"),
            _ => panic!("not a move"),
        }
    }

    #[test]
    fn spines_over_rail_sorted_leaves_over_racks_over_hosts() {
        let c = Catalog::builtin();
        let mut d = Design::new("t");
        let rack_a = d.add_group("rack-a", GroupKind::Rack);
        let rack_b = d.add_group("rack-b", GroupKind::Rack);
        d.insert_device(switch(0, SwitchRole::Spine, None));
        d.insert_device(switch(1, SwitchRole::Leaf, Some(1)));
        d.insert_device(switch(2, SwitchRole::Leaf, Some(0)));
        d.insert_device(node(&c, 3, Some(rack_a)));
        d.insert_device(node(&c, 4, Some(rack_b)));
        d.insert_device(node(&c, 5, Some(rack_a)));
        d.insert_device(node(&c, 6, Some(rack_b)));
        d.insert_device(Device {
            id: DeviceId(7),
            name: "store".into(),
            pos: Pos::default(),
            group: None,
            kind: DeviceKind::Host(Host {
                role: HostRole::Storage,
                model: None,
                nics: vec![],
            }),
        });
        let cmd = arrange_by_tier(&d, &c);
        // Two switch tiers (spine, leaf) put the nodes at y = 2 × 260 = 520. Four nodes are a
        // small design: each rack's stand in a row, so no cable runs through a box.
        // Rack a: x 0..240, nodes 3 and 5 at centres 60 and 180.
        assert_eq!(position(&cmd, 3), Pos::new(60.0, 520.0));
        assert_eq!(position(&cmd, 5), Pos::new(180.0, 520.0));
        // Rack b starts after 240 + 60 of gap: centres 360 and 480.
        assert_eq!(position(&cmd, 4), Pos::new(360.0, 520.0));
        assert_eq!(position(&cmd, 6), Pos::new(480.0, 520.0));
        // Nodes span 0..540; the leaf row is 2 × 120 + 60 (rail change) = 300 wide, centred:
        // rail 0 at 120 + 60 = 180, rail 1 at 120 + 240 = 360.
        assert_eq!(position(&cmd, 2), Pos::new(180.0, 260.0));
        assert_eq!(position(&cmd, 1), Pos::new(360.0, 260.0));
        // The lone spine is centred: 270.
        assert_eq!(position(&cmd, 0), Pos::new(270.0, 0.0));
        // The host row sits one tier below the nodes: 520 + 260.
        assert_eq!(position(&cmd, 7), Pos::new(270.0, 780.0));
    }

    #[test]
    fn a_domain_sits_at_the_middle_of_its_trays_and_placed_devices_stay_out() {
        let c = Catalog::builtin();
        let mut d = Design::new("t");
        d.insert_device(Device {
            id: DeviceId(0),
            name: "nvl".into(),
            pos: Pos::new(999.0, 999.0),
            group: None,
            kind: DeviceKind::NvSwitchDomain(NvSwitchDomain {
                model: PartId::new("gb200-nvl72"),
            }),
        });
        for id in 1..=3 {
            let mut n = node(&c, id, None);
            if let DeviceKind::GpuNode(g) = &mut n.kind {
                g.domain = Some(DeviceId(0));
            }
            d.insert_device(n);
        }
        let cmd = arrange_by_tier(&d, &c);
        // No switch tiers: trays stack from y 0 at x 60, 72 apart; the domain at the middle.
        assert_eq!(position(&cmd, 1), Pos::new(60.0, 0.0));
        assert_eq!(position(&cmd, 3), Pos::new(60.0, 144.0));
        assert_eq!(position(&cmd, 0), Pos::new(60.0, 72.0));

        // Applying it and arranging again moves nothing.
        let mut arranged = d.clone();
        cmd.apply(&mut arranged).unwrap();
        assert_eq!(
            arrange_by_tier(&arranged, &c),
            Command::MoveDevices { moves: vec![] }
        );
    }
}
