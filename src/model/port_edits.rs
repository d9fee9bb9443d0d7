//! Edits to a device's ports that keep every link on the port it was drawn to: the commands
//! the inspector emits when NICs come and go, and what they would drop, so it can ask first.

use super::catalog::Catalog;
use super::command::Command;
use super::design::{Design, DeviceId, LinkId};
use super::device::{Device, DeviceKind};
use super::ports::{Port, has_port};

/// Taking NIC `slot` out of a node or host, as one undo step.
#[derive(Debug, Clone, PartialEq)]
pub struct NicRemoval {
    /// The device without the NIC; the links on it removed; the links on the NICs after it
    /// following their cards down one slot, so each stays on the card it was plugged into.
    pub command: Command,
    /// The links plugged into the NIC itself, which go with it.
    pub dropped: Vec<LinkId>,
    /// The links on the NICs after it, whose slot numbers (and so rails) go down by one.
    pub renumbered: Vec<LinkId>,
}

/// The removal of NIC `slot` of `device`, or None when the device has no such NIC.
pub fn remove_nic(design: &Design, device: DeviceId, slot: u32) -> Option<NicRemoval> {
    let source = design.device(device)?;
    let mut changed = source.clone();
    let nics = match &mut changed.kind {
        DeviceKind::GpuNode(node) => &mut node.nics,
        DeviceKind::Host(host) => &mut host.nics,
        DeviceKind::Switch(_) | DeviceKind::NvSwitchDomain(_) => return None,
    };
    if slot as usize >= nics.len() {
        return None;
    }
    nics.remove(slot as usize);

    let mut dropped = Vec::new();
    let mut moved = Vec::new();
    let mut renumbered_ids = Vec::new();
    let on_device = |end: &super::link::Endpoint| end.device == device;
    for link in design.links_of(device) {
        let nics = [link.a, link.b]
            .into_iter()
            .filter(on_device)
            .filter_map(|end| end.port.nic());
        if nics.clone().any(|k| k == slot) {
            dropped.push(link.id);
        } else if nics.clone().any(|k| k > slot) {
            let mut renumbered = link.clone();
            for end in [&mut renumbered.a, &mut renumbered.b] {
                if let (true, Port::Nic(k)) = (on_device(end), end.port)
                    && k > slot
                {
                    end.port = Port::Nic(k - 1);
                }
            }
            renumbered_ids.push(link.id);
            moved.push(Command::UpdateLink(Box::new(renumbered)));
        }
    }

    let mut steps = Vec::with_capacity(moved.len() + 2);
    if !dropped.is_empty() {
        steps.push(Command::Remove {
            devices: Vec::new(),
            links: dropped.clone(),
            groups: Vec::new(),
        });
    }
    steps.extend(moved);
    steps.push(Command::UpdateDevice(Box::new(changed)));
    Some(NicRemoval {
        command: Command::Batch(steps),
        dropped,
        renumbered: renumbered_ids,
    })
}

/// The links of the device `changed` replaces (same id) that are plugged into a port it has
/// now and would not have after the change: another model with fewer NICs or ports, fewer
/// GPUs under a bridge. Links already on a missing port are the checks' business, not this
/// change's.
pub fn stranded_links(design: &Design, catalog: &Catalog, changed: &Device) -> Vec<LinkId> {
    let Some(source) = design.device(changed.id) else {
        return Vec::new();
    };
    design
        .links_of(changed.id)
        .filter(|link| {
            [link.a, link.b].into_iter().any(|end| {
                end.device == changed.id
                    && has_port(catalog, source, end.port)
                    && !has_port(catalog, changed, end.port)
            })
        })
        .map(|link| link.id)
        .collect()
}

/// `changed` in place of its device with the links it strands removed, as one undo step.
pub fn update_dropping(changed: Device, stranded: &[LinkId]) -> Command {
    let mut steps = Vec::with_capacity(2);
    if !stranded.is_empty() {
        steps.push(Command::Remove {
            devices: Vec::new(),
            links: stranded.to_vec(),
            groups: Vec::new(),
        });
    }
    steps.push(Command::UpdateDevice(Box::new(changed)));
    Command::Batch(steps)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::factory::{default_link, device_from_part};
    use crate::model::{Catalog, Design, Pos};

    /// A DGX H100 (8 NICs) with each NIC cabled to its own leaf, as a rail-optimized node is.
    fn dgx_on_eight_leaves() -> (Design, DeviceId, Vec<DeviceId>) {
        let catalog = Catalog::builtin();
        let mut design = Design::new("t");
        let add = |design: &mut Design, part: &str, name: String| {
            let id = design.next_device_id();
            let device = device_from_part(&catalog, &part.into(), id, name, Pos::default())
                .expect("catalog part");
            design.add_device(device)
        };
        let node = add(&mut design, "dgx-h100", "dgx".into());
        let leaves: Vec<DeviceId> = (0..8)
            .map(|r| add(&mut design, "qm9700", format!("leaf-{r}")))
            .collect();
        for &leaf in &leaves {
            let link = default_link(&design, &catalog, node, leaf).expect("a free NIC");
            design.add_link(link);
        }
        (design, node, leaves)
    }

    fn nic_of_leaf(design: &Design, node: DeviceId, leaf: DeviceId) -> Option<Port> {
        let link = design.links_of(node).find(|l| l.touches(leaf))?;
        Some(if link.a.device == node {
            link.a.port
        } else {
            link.b.port
        })
    }

    #[test]
    fn removing_a_nic_takes_its_link_and_keeps_the_others_on_their_cards() {
        let (mut design, node, leaves) = dgx_on_eight_leaves();
        assert_eq!(nic_of_leaf(&design, node, leaves[5]), Some(Port::Nic(5)));
        let original = design.clone();

        let removal = remove_nic(&design, node, 3).expect("NIC 3 exists");
        let on_nic_3 = design
            .links_of(node)
            .find(|l| l.touches(leaves[3]))
            .map(|l| l.id);
        assert_eq!(removal.dropped, on_nic_3.into_iter().collect::<Vec<_>>());
        // The links of leaves 4–7 move down a slot with their cards: the question names 4.
        assert_eq!(removal.renumbered.len(), 4);
        let undo = removal.command.apply(&mut design).expect("applies");

        assert_eq!(design.links.len(), 7);
        assert_eq!(
            design
                .device(node)
                .and_then(|d| d.kind.as_node())
                .map(|n| n.nics.len()),
            Some(7)
        );
        // Leaves 0–2 keep NICs 0–2; leaves 4–7 keep their cards, now in slots 3–6.
        for (leaf, expected) in [(0, 0), (2, 2), (4, 3), (7, 6)] {
            assert_eq!(
                nic_of_leaf(&design, node, leaves[leaf]),
                Some(Port::Nic(expected))
            );
        }
        assert_eq!(nic_of_leaf(&design, node, leaves[3]), None);

        undo.apply(&mut design).expect("undo applies");
        assert_eq!(design, original);
    }

    #[test]
    fn a_nic_without_links_goes_alone_and_other_devices_have_none_to_remove() {
        let (mut design, node, leaves) = dgx_on_eight_leaves();
        let link = design
            .links_of(node)
            .find(|l| l.touches(leaves[7]))
            .map(|l| l.id);
        let (links, devices, groups) = (link.into_iter().collect(), Vec::new(), Vec::new());
        Command::Remove {
            devices,
            links,
            groups,
        }
        .apply(&mut design)
        .expect("removes");
        let removal = remove_nic(&design, node, 7).expect("NIC 7 exists");
        assert!(removal.dropped.is_empty());
        assert!(removal.renumbered.is_empty(), "the last NIC: nothing moves");
        removal.command.apply(&mut design).expect("applies");
        assert_eq!(design.links.len(), 7);
        assert_eq!(nic_of_leaf(&design, node, leaves[6]), Some(Port::Nic(6)));

        assert_eq!(remove_nic(&design, node, 7), None, "only 7 NICs left");
        assert_eq!(
            remove_nic(&design, leaves[0], 0),
            None,
            "a switch has no NICs"
        );
    }

    #[test]
    fn a_change_that_takes_ports_away_names_the_links_it_strands() {
        let catalog = Catalog::builtin();
        let (design, node, leaves) = dgx_on_eight_leaves();
        let mut changed = design.device(node).expect("node").clone();
        assert!(stranded_links(&design, &catalog, &changed).is_empty());
        // Six NIC cards instead of eight: the links on NICs 6 and 7 have no port left.
        if let DeviceKind::GpuNode(n) = &mut changed.kind {
            n.nics.truncate(6);
        }
        let stranded = stranded_links(&design, &catalog, &changed);
        let on = |leaf: DeviceId| design.links_of(node).find(|l| l.touches(leaf)).unwrap().id;
        assert_eq!(stranded, [on(leaves[6]), on(leaves[7])]);
        // One undo step: both links gone and the node changed; undone, all is back.
        let mut after = design.clone();
        let undo = update_dropping(changed.clone(), &stranded)
            .apply(&mut after)
            .expect("valid");
        assert_eq!(after.links.len(), 6);
        assert_eq!(after.device(node), Some(&changed));
        undo.apply(&mut after).expect("undoes");
        assert_eq!(after, design);
    }
}
