//! Wiring a selection in one go: NIC i of each node to the i-th leaf (a rail-optimized
//! fabric), every selected device to one device, or a full mesh in one technology. Each
//! returns the links to add as one `Command` (one undo step) and a sentence for the status
//! line, or refuses with the reason. Ports and technologies are `factory::wished_link`'s
//! choice, the same as a link drawn by hand.

use super::catalog::Catalog;
use super::command::Command;
use super::design::{Design, DeviceId};
use super::device::{Device, DeviceKind};
use super::factory::{LinkWish, wished_link};
use super::link::{Link, LinkTech};
use super::ports::Port;
use std::cmp::Ordering;
use std::collections::BTreeSet;

/// The links a bulk wiring adds, and what it did, for the status line.
#[derive(Debug, Clone, PartialEq)]
pub struct Wiring {
    pub links: Vec<Link>,
    /// NICs (or pairs) left alone because they were wired already.
    pub skipped: usize,
    pub summary: String,
}

impl Wiring {
    /// The links as one undoable insert.
    pub fn command(&self) -> Command {
        Command::Insert {
            devices: Vec::new(),
            links: self.links.clone(),
            groups: Vec::new(),
        }
    }
}

#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub enum WiringRefusal {
    #[error("select GPU nodes with NICs and their rail leaves (switches) together")]
    NoRails,
    #[error("{node} has {nics} NICs but {leaves} leaves are selected: select one leaf per NIC")]
    LeafCount {
        node: String,
        nics: usize,
        leaves: usize,
    },
    #[error("select at least one device besides {target}")]
    NothingToConnect { target: String },
    #[error("select at least two devices for a mesh")]
    TooFewForMesh,
    #[error("no device {0}")]
    NoDevice(DeviceId),
    /// One of the links cannot be made; nothing is added.
    #[error("{from} → {to}: {reason}; nothing added")]
    Link {
        from: String,
        to: String,
        reason: String,
    },
    #[error("everything selected is wired already ({skipped} skipped)")]
    AllWired { skipped: usize },
}

/// The order rail leaves are taken in: by name, numbers compared as numbers (`leaf-2`
/// before `leaf-10`), so leaf i is the i-th in the list a person reads.
pub const LEAF_ORDER: &str = "leaves in name order (leaf-2 before leaf-10)";

/// NIC i of every selected GPU node (or host with NICs) to the i-th selected switch, leaves
/// in `LEAF_ORDER`. Each link takes the NIC's technology and the slower of the two port
/// rates, on the leaf's first free port. NICs already wired are skipped.
pub fn rails(
    design: &Design,
    catalog: &Catalog,
    selected: &BTreeSet<DeviceId>,
) -> Result<Wiring, WiringRefusal> {
    let devices = selected_devices(design, selected)?;
    let nodes: Vec<&Device> = devices
        .iter()
        .copied()
        .filter(|d| nic_count(d) > 0)
        .collect();
    let mut leaves: Vec<&Device> = devices
        .iter()
        .copied()
        .filter(|d| d.kind.as_switch().is_some())
        .collect();
    if nodes.is_empty() || leaves.is_empty() {
        return Err(WiringRefusal::NoRails);
    }
    leaves.sort_by(|x, y| natural_order(&x.name, &y.name).then(x.id.cmp(&y.id)));
    if let Some(node) = nodes.iter().find(|n| nic_count(n) != leaves.len()) {
        return Err(WiringRefusal::LeafCount {
            node: node.name.clone(),
            nics: nic_count(node),
            leaves: leaves.len(),
        });
    }
    let mut plan = Plan::new(design);
    for node in &nodes {
        for (rail, leaf) in leaves.iter().enumerate() {
            let nic = Port::Nic(u32::try_from(rail).unwrap_or(u32::MAX));
            if plan.is_wired(node.id, nic) {
                plan.skipped += 1;
                continue;
            }
            let wish = LinkWish {
                port_a: Some(nic),
                tech: None,
            };
            plan.add(catalog, node, leaf, wish, &format!("{}'s {nic}", node.name))?;
        }
    }
    plan.finish("NIC i → rail-i leaf")
}

/// Every selected device (other than `target`) linked to `target` on the first free ports both
/// ends share: a server's every free NIC when `target` is a switch (a star cables them all),
/// else one link. Devices with nothing left to link are skipped.
pub fn connect_to(
    design: &Design,
    catalog: &Catalog,
    selected: &BTreeSet<DeviceId>,
    target: DeviceId,
) -> Result<Wiring, WiringRefusal> {
    let to = design
        .device(target)
        .ok_or(WiringRefusal::NoDevice(target))?;
    let devices: Vec<&Device> = selected_devices(design, selected)?
        .into_iter()
        .filter(|d| d.id != target)
        .collect();
    if devices.is_empty() {
        return Err(WiringRefusal::NothingToConnect {
            target: to.name.clone(),
        });
    }
    let mut plan = Plan::new(design);
    let to_switch = to.kind.as_switch().is_some();
    for from in devices {
        let nics = nic_count(from);
        if to_switch && nics > 0 {
            let free: Vec<Port> = (0..nics)
                .map(|i| Port::Nic(u32::try_from(i).unwrap_or(u32::MAX)))
                .filter(|&nic| !plan.is_wired(from.id, nic))
                .collect();
            if free.is_empty() {
                plan.skipped += 1;
            }
            for nic in free {
                let wish = LinkWish {
                    port_a: Some(nic),
                    tech: None,
                };
                plan.add(catalog, from, to, wish, &format!("{}'s {nic}", from.name))?;
            }
            continue;
        }
        if plan.are_linked(from.id, target, None) {
            plan.skipped += 1;
            continue;
        }
        plan.add(catalog, from, to, LinkWish::default(), &from.name)?;
    }
    plan.finish(&format!("selected → {}", to.name))
}

/// One `tech` link between every pair of selected devices, on free ports of that
/// technology. Pairs already joined by a `tech` link are skipped.
pub fn full_mesh(
    design: &Design,
    catalog: &Catalog,
    selected: &BTreeSet<DeviceId>,
    tech: LinkTech,
) -> Result<Wiring, WiringRefusal> {
    let devices = selected_devices(design, selected)?;
    if devices.len() < 2 {
        return Err(WiringRefusal::TooFewForMesh);
    }
    let mut plan = Plan::new(design);
    for (i, a) in devices.iter().enumerate() {
        for b in &devices[i + 1..] {
            if plan.are_linked(a.id, b.id, Some(tech)) {
                plan.skipped += 1;
                continue;
            }
            let wish = LinkWish {
                port_a: None,
                tech: Some(tech),
            };
            plan.add(catalog, a, b, wish, &a.name)?;
        }
    }
    plan.finish(&format!("full mesh with {}", tech.label()))
}

/// The links chosen so far, on a scratch copy of the design so that each choice sees the
/// ports the earlier ones took.
struct Plan {
    scratch: Design,
    links: Vec<Link>,
    skipped: usize,
}

impl Plan {
    fn new(design: &Design) -> Self {
        Self {
            scratch: design.clone(),
            links: Vec::new(),
            skipped: 0,
        }
    }

    fn is_wired(&self, device: DeviceId, port: Port) -> bool {
        self.scratch.links_of(device).any(|l| {
            (l.a.device == device && l.a.port == port) || (l.b.device == device && l.b.port == port)
        })
    }

    fn are_linked(&self, a: DeviceId, b: DeviceId, tech: Option<LinkTech>) -> bool {
        self.scratch
            .links_of(a)
            .any(|l| l.touches(b) && tech.is_none_or(|t| t == l.tech))
    }

    fn add(
        &mut self,
        catalog: &Catalog,
        from: &Device,
        to: &Device,
        wish: LinkWish,
        from_label: &str,
    ) -> Result<(), WiringRefusal> {
        let link = wished_link(&self.scratch, catalog, from.id, to.id, wish).map_err(|reason| {
            WiringRefusal::Link {
                from: from_label.to_string(),
                to: to.name.clone(),
                reason,
            }
        })?;
        self.scratch.insert_link(link.clone());
        self.links.push(link);
        Ok(())
    }

    fn finish(self, what: &str) -> Result<Wiring, WiringRefusal> {
        if self.links.is_empty() {
            return Err(WiringRefusal::AllWired {
                skipped: self.skipped,
            });
        }
        let count = self.links.len();
        let mut summary = format!(
            "{count} link{} added: {what}",
            if count == 1 { "" } else { "s" }
        );
        if self.skipped > 0 {
            summary.push_str(&format!(" ({} already wired, skipped)", self.skipped));
        }
        Ok(Wiring {
            links: self.links,
            skipped: self.skipped,
            summary,
        })
    }
}

/// The selected devices in id order; an id the design lacks is refused.
fn selected_devices<'a>(
    design: &'a Design,
    selected: &BTreeSet<DeviceId>,
) -> Result<Vec<&'a Device>, WiringRefusal> {
    selected
        .iter()
        .map(|&id| design.device(id).ok_or(WiringRefusal::NoDevice(id)))
        .collect()
}

/// How many NIC slots a node or host has (0 for switches and domains).
pub fn nic_count(device: &Device) -> usize {
    match &device.kind {
        DeviceKind::GpuNode(node) => node.nics.len(),
        DeviceKind::Host(host) => host.nics.len(),
        DeviceKind::Switch(_) | DeviceKind::NvSwitchDomain(_) => 0,
    }
}

/// Names compared with runs of digits as numbers: `leaf-2` < `leaf-10`.
fn natural_order(x: &str, y: &str) -> Ordering {
    let (mut xs, mut ys) = (x.chars().peekable(), y.chars().peekable());
    loop {
        match (xs.peek().copied(), ys.peek().copied()) {
            (None, None) => return Ordering::Equal,
            (None, Some(_)) => return Ordering::Less,
            (Some(_), None) => return Ordering::Greater,
            (Some(a), Some(b)) if a.is_ascii_digit() && b.is_ascii_digit() => {
                let take = |it: &mut std::iter::Peekable<std::str::Chars<'_>>| {
                    let mut digits = String::new();
                    while let Some(c) = it.next_if(char::is_ascii_digit) {
                        digits.push(c);
                    }
                    digits
                };
                let (na, nb) = (take(&mut xs), take(&mut ys));
                let (ta, tb) = (na.trim_start_matches('0'), nb.trim_start_matches('0'));
                let by_value = ta.len().cmp(&tb.len()).then_with(|| ta.cmp(tb));
                if by_value != Ordering::Equal {
                    return by_value;
                }
            }
            (Some(a), Some(b)) => {
                if a != b {
                    return a.cmp(&b);
                }
                xs.next();
                ys.next();
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::factory::device_from_part;
    use crate::model::{PartId, Pos};

    fn add(design: &mut Design, catalog: &Catalog, part: &str, name: &str) -> DeviceId {
        let id = design.next_device_id();
        let d = device_from_part(
            catalog,
            &PartId::new(part),
            id,
            name.to_string(),
            Pos::default(),
        )
        .expect("a builtin part");
        design.insert_device(d);
        id
    }

    /// 4 DGX H100 (8 ConnectX-7 NDR NICs each) and 8 QM9700 leaves named out of order.
    fn dgx_and_leaves() -> (Design, Vec<DeviceId>, Vec<DeviceId>) {
        let catalog = Catalog::builtin();
        let mut design = Design::new("rails");
        let nodes = (0..4)
            .map(|i| add(&mut design, &catalog, "dgx-h100", &format!("dgx-{i}")))
            .collect();
        // Added 7, 6, ... 0 so that id order and name order disagree; leaf-10 sorts last.
        let mut leaves: Vec<DeviceId> = [7, 6, 5, 4, 3, 2, 1]
            .into_iter()
            .map(|i| add(&mut design, &catalog, "qm9700", &format!("leaf-{i}")))
            .collect();
        leaves.push(add(&mut design, &catalog, "qm9700", "leaf-10"));
        (design, nodes, leaves)
    }

    #[test]
    fn names_compare_numbers_as_numbers() {
        assert_eq!(natural_order("leaf-2", "leaf-10"), Ordering::Less);
        assert_eq!(natural_order("leaf-10", "leaf-9"), Ordering::Greater);
        assert_eq!(natural_order("leaf-02", "leaf-2"), Ordering::Equal);
        assert_eq!(natural_order("a", "b"), Ordering::Less);
    }

    #[test]
    fn four_dgx_on_eight_leaves_get_32_rail_links() {
        let catalog = Catalog::builtin();
        let (design, nodes, leaves) = dgx_and_leaves();
        let selected: BTreeSet<DeviceId> = nodes.iter().chain(&leaves).copied().collect();
        let wiring = rails(&design, &catalog, &selected).expect("counts match");
        assert_eq!(wiring.links.len(), 32);
        assert_eq!(wiring.skipped, 0);
        assert_eq!(wiring.summary, "32 links added: NIC i → rail-i leaf");
        // Name order: leaf-1 .. leaf-7, then leaf-10; leaf-1 was the 7th added.
        let by_name = [6, 5, 4, 3, 2, 1, 0, 7].map(|k| leaves[k]);
        for link in &wiring.links {
            let Port::Nic(rail) = link.a.port else {
                panic!("node end on a NIC: {link:?}")
            };
            assert_eq!(link.b.device, by_name[rail as usize]);
            assert_eq!(link.tech, LinkTech::InfiniBand);
            assert_eq!(link.rate_gbit_s.gbit_s(), 400.0);
        }
        // Each leaf's ports 0..3 go to the four nodes in id order.
        for (k, node) in nodes.iter().enumerate() {
            let on_leaf_1 = wiring
                .links
                .iter()
                .find(|l| l.a.device == *node && l.a.port == Port::Nic(0))
                .expect("NIC 0 wired");
            assert_eq!(on_leaf_1.b.port, Port::Switch(k as u32));
        }
        let mut applied = design.clone();
        wiring.command().apply(&mut applied).expect("valid insert");
        assert_eq!(applied.links.len(), 32);
    }

    #[test]
    fn wired_nics_are_skipped_and_counted() {
        let catalog = Catalog::builtin();
        let (mut design, nodes, leaves) = dgx_and_leaves();
        let selected: BTreeSet<DeviceId> = nodes.iter().chain(&leaves).copied().collect();
        let first = rails(&design, &catalog, &selected).expect("counts match");
        // dgx-0's 8 links are already there.
        for link in first.links.iter().filter(|l| l.a.device == nodes[0]) {
            design.insert_link(link.clone());
        }
        let second = rails(&design, &catalog, &selected).expect("counts match");
        assert_eq!(second.links.len(), 24);
        assert_eq!(second.skipped, 8);
        assert_eq!(
            second.summary,
            "24 links added: NIC i → rail-i leaf (8 already wired, skipped)"
        );
    }

    #[test]
    fn rails_refuse_when_leaves_and_nics_differ() {
        let catalog = Catalog::builtin();
        let (design, nodes, leaves) = dgx_and_leaves();
        let selected: BTreeSet<DeviceId> = nodes.iter().chain(&leaves[..7]).copied().collect();
        assert_eq!(
            rails(&design, &catalog, &selected),
            Err(WiringRefusal::LeafCount {
                node: "dgx-0".into(),
                nics: 8,
                leaves: 7
            })
        );
        let only_nodes: BTreeSet<DeviceId> = nodes.iter().copied().collect();
        assert_eq!(
            rails(&design, &catalog, &only_nodes),
            Err(WiringRefusal::NoRails)
        );
    }

    #[test]
    fn infiniband_nics_refuse_ethernet_leaves_and_name_both_parts() {
        // A DGX H100's 8 NDR NICs against 8 MikroTik 10GbE switches: no rail can be cabled.
        let catalog = Catalog::builtin();
        let mut design = Design::new("mismatch");
        let node = add(&mut design, &catalog, "dgx-h100", "dgx-0");
        let mut selected: BTreeSet<DeviceId> = [node].into();
        for i in 0..8 {
            selected.insert(add(
                &mut design,
                &catalog,
                "crs317-16x10g",
                &format!("leaf-{i}"),
            ));
        }
        assert_eq!(
            rails(&design, &catalog, &selected).map_err(|r| r.to_string()),
            Err(
                "dgx-0's NIC 0 → leaf-0: cx7-ndr-400 speaks InfiniBand, crs317-16x10g only \
                 Ethernet; nothing added"
                    .to_string()
            )
        );
    }

    #[test]
    fn a_full_leaf_refuses_the_whole_wiring() {
        // A one-NIC node and one leaf whose 64 ports all go to a spine: rail 0 has no room.
        let catalog = Catalog::builtin();
        let mut design = Design::new("full");
        let node = add(&mut design, &catalog, "dgx-h100", "dgx-0");
        let leaf = add(&mut design, &catalog, "qm9700", "leaf-0");
        let spine = add(&mut design, &catalog, "qm9700", "spine-0");
        for _ in 0..64 {
            let l = crate::model::factory::default_link(&design, &catalog, leaf, spine)
                .expect("free ports");
            design.insert_link(l);
        }
        let mut node_only_one_nic = design.device(node).expect("node").clone();
        if let DeviceKind::GpuNode(n) = &mut node_only_one_nic.kind {
            n.nics.truncate(1);
        }
        design.remove_device(node);
        design.insert_device(node_only_one_nic);
        let selected: BTreeSet<DeviceId> = [node, leaf].into();
        let refusal = rails(&design, &catalog, &selected).expect_err("leaf full");
        assert_eq!(
            refusal.to_string(),
            "dgx-0's NIC 0 → leaf-0: qm9700 has no free port (64 in use); nothing added"
        );
    }

    /// Servers connected to one switch bring every free NIC: 4 DGX × 8 NICs fill a QM9700's
    /// 32 of 64 ports; a server already cabled on NIC 0 brings its other 7.
    #[test]
    fn servers_connect_every_free_nic_to_one_switch() {
        let catalog = Catalog::builtin();
        let (mut design, nodes, leaves) = dgx_and_leaves();
        let first = crate::model::factory::default_link(&design, &catalog, nodes[0], leaves[0])
            .expect("free ports");
        assert_eq!(first.a.port, Port::Nic(0));
        design.insert_link(first);
        let selected: BTreeSet<DeviceId> = nodes.iter().copied().collect();
        let wiring = connect_to(&design, &catalog, &selected, leaves[0]).expect("room");
        assert_eq!(wiring.links.len(), 31);
        assert_eq!(wiring.summary, "31 links added: selected → leaf-7");
        let mut applied = design.clone();
        wiring.command().apply(&mut applied).expect("valid");
        // Again: every NIC is cabled already.
        assert_eq!(
            connect_to(&applied, &catalog, &selected, leaves[0]),
            Err(WiringRefusal::AllWired { skipped: 4 })
        );
    }

    #[test]
    fn four_macs_mesh_over_thunderbolt_5_until_ports_run_out() {
        let catalog = Catalog::builtin();
        let mut design = Design::new("macs");
        let add_mac = |design: &mut Design, i: u32| {
            add(design, &catalog, "mac-studio-m3-ultra", &format!("mac-{i}"))
        };
        let macs: BTreeSet<DeviceId> = (0..4).map(|i| add_mac(&mut design, i)).collect();
        // 4 Macs: 6 pairs, each Mac on 3 of its Thunderbolt 5 ports.
        let wiring = full_mesh(&design, &catalog, &macs, LinkTech::Thunderbolt5).expect("room");
        assert_eq!(wiring.links.len(), 6);
        for l in &wiring.links {
            assert_eq!(l.tech, LinkTech::Thunderbolt5);
            assert_eq!(l.rate_gbit_s.gbit_s(), 80.0);
            assert!(matches!(l.a.port, Port::Thunderbolt(_)));
        }
        // 8 Macs would need 7 Thunderbolt ports each.
        let eight: BTreeSet<DeviceId> = macs
            .iter()
            .copied()
            .chain((4..8).map(|i| add_mac(&mut design, i)))
            .collect();
        let refusal =
            full_mesh(&design, &catalog, &eight, LinkTech::Thunderbolt5).expect_err("out of ports");
        assert!(
            refusal.to_string().contains("no free Thunderbolt port"),
            "{refusal}"
        );
        // A technology neither end has.
        let refusal = full_mesh(&design, &catalog, &macs, LinkTech::InfiniBand).expect_err("no IB");
        assert!(
            refusal.to_string().contains("no InfiniBand ports"),
            "{refusal}"
        );
    }
}
