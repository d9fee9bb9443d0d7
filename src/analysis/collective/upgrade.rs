//! What to change so that slow network links run at the fabric's faster rate: the part at
//! either end whose ports are slower, and a part from the catalog that has the rate (one the
//! design already uses first). When both ends already have fast ports, the cable is the slow
//! part.

use crate::model::catalog::NetFamily;
use crate::model::ports::{PortKind, port_groups};
use crate::model::{
    Bandwidth, Catalog, Design, DeviceKind, Link, LinkTech, Part, PartId, PartSpec,
};
use std::collections::{BTreeMap, BTreeSet};

/// Which kind of part sets a slow end's rate.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
enum EndKind {
    Nic,
    BuiltinEthernet,
    Switch,
}

/// The remedy for `slow` links among links at `fastest`: names each slower part at their
/// ends and what replaces it, or says that the cables are the slow part.
pub fn upgrade_remedy(
    design: &Design,
    catalog: &Catalog,
    slow: &[&Link],
    fastest: Bandwidth,
) -> String {
    let mut slow_parts: BTreeMap<(EndKind, PartId), (Bandwidth, NetFamily)> = BTreeMap::new();
    // An end whose port rate is not known (a part the catalog lacks) might be the slow one.
    let mut unknown = false;
    for link in slow {
        let family = match link.tech {
            LinkTech::InfiniBand => NetFamily::InfiniBand,
            _ => NetFamily::Ethernet,
        };
        for end in [link.a, link.b] {
            let group = design.device(end.device).and_then(|device| {
                port_groups(catalog, device)
                    .into_iter()
                    .find(|g| g.contains(end.port))
            });
            let (kind, rate) = match group.as_ref().map(|g| g.kind) {
                Some(PortKind::Nic { rate, .. }) => (EndKind::Nic, rate),
                Some(PortKind::BuiltinEthernet { rate }) => (EndKind::BuiltinEthernet, rate),
                Some(PortKind::SwitchPort { rate, .. }) => (EndKind::Switch, rate),
                _ => {
                    unknown = true;
                    continue;
                }
            };
            let Some(group) = group else { continue };
            if rate.gbit_s() < fastest.gbit_s() {
                slow_parts.insert((kind, group.part), (rate, family));
            }
        }
    }
    if slow_parts.is_empty() && unknown {
        return format!(
            "give both ends of these links ports at {fastest} (a part at one end is not in the catalog, so which end is slower is not known)"
        );
    }
    if slow_parts.is_empty() {
        return format!(
            "the ports at both ends already run at {fastest}, so the cable (or the rate it came up at) holds these links back: replace it with one rated for {fastest}"
        );
    }
    let used = parts_in_use(design);
    let mut steps = Vec::new();
    for ((kind, part), (rate, family)) in slow_parts {
        let replacement = match kind {
            EndKind::Nic | EndKind::BuiltinEthernet => {
                faster_part(catalog, &used, fastest, family, false)
            }
            EndKind::Switch => faster_part(catalog, &used, fastest, family, true),
        };
        let what = match kind {
            EndKind::Nic => format!("the `{part}` NICs ({rate})"),
            EndKind::BuiltinEthernet => format!("the `{part}`'s own Ethernet ports ({rate})"),
            EndKind::Switch => format!("the `{part}` switch ports ({rate})"),
        };
        steps.push(match (kind, replacement) {
            // Its own model runs faster ports: they are split (breakout) below the cable's rate.
            (EndKind::Switch, Some(p)) if p.id == part => format!(
                "{what} are split below {fastest}: lower the `{part}`'s breakout (in the \
                 inspector) so its ports run at {fastest}"
            ),
            (EndKind::Switch, Some(p)) => format!(
                "move these cables from {what} to a switch with {fastest} ports such as `{}` ({})",
                p.id, p.model
            ),
            (EndKind::BuiltinEthernet, _)
                if let Some(step) = slotless(catalog, &part, &what, fastest) =>
            {
                step
            }
            (EndKind::BuiltinEthernet, Some(p)) => {
                format!("add a `{}` NIC ({}) to stand in for {what}", p.id, p.model)
            }
            (_, Some(p)) => format!("replace {what} with `{}` ({})", p.id, p.model),
            (_, None) => {
                format!("replace {what} with parts that run at {fastest} (the catalog has none)")
            }
        });
    }
    steps.join("; ")
}

/// For a machine that takes no add-in NIC (a Mac Studio, a DGX Spark): its own faster NIC
/// where it has one, or its faster built-in links. None for machines with slots.
fn slotless(catalog: &Catalog, node: &PartId, what: &str, fastest: Bandwidth) -> Option<String> {
    let spec = catalog.node(node)?;
    if spec.nic_slots != Some(0) {
        return None;
    }
    let own = spec
        .nic
        .as_ref()
        .filter(|_| spec.nic_included_in_price)
        .and_then(|id| Some((id, catalog.nic(id)?)))
        .filter(|(_, nic)| nic.port_gbit_s.gbit_s() >= fastest.gbit_s());
    Some(match own {
        Some((id, nic)) => format!(
            "move these cables from {what} to the `{node}`'s built-in `{id}` ports ({})",
            nic.port_gbit_s
        ),
        None => format!(
            "the `{node}` takes no add-in NIC, so {what} are its fastest Ethernet: carry the \
             traffic that needs {fastest} on its faster built-in links{}",
            if spec.thunderbolt_ports > 0 {
                " (Thunderbolt)"
            } else {
                ""
            }
        ),
    })
}

/// The NIC or switch parts the design's devices use.
fn parts_in_use(design: &Design) -> BTreeSet<PartId> {
    let mut used = BTreeSet::new();
    for d in &design.devices {
        match &d.kind {
            DeviceKind::GpuNode(n) => used.extend(n.nics.iter().map(|s| s.part.clone())),
            DeviceKind::Host(h) => used.extend(h.nics.iter().map(|s| s.part.clone())),
            DeviceKind::Switch(s) => {
                used.insert(s.model.clone());
            }
            _ => {}
        }
    }
    used
}

/// A NIC (or, with `switch`, a switch) of the link's family whose ports reach `rate`: one
/// the design already uses before others, then the slowest that suffices, then the cheapest.
fn faster_part<'a>(
    catalog: &'a Catalog,
    used: &BTreeSet<PartId>,
    rate: Bandwidth,
    family: NetFamily,
    switch: bool,
) -> Option<&'a Part> {
    let fits = |f: NetFamily| f == family || f == NetFamily::Both;
    catalog
        .parts()
        .filter_map(|p| {
            let port = match &p.spec {
                // A NIC built into one machine's board is no card to add.
                PartSpec::Nic(n) if !switch && fits(n.family) && !n.builtin => n.port_gbit_s,
                PartSpec::Switch(s) if switch && fits(s.family) => s.port_gbit_s,
                _ => return None,
            };
            (port.gbit_s() >= rate.gbit_s()).then_some((p, port.gbit_s()))
        })
        .min_by(|(a, ra), (b, rb)| {
            let price = |p: &Part| p.price.as_ref().map_or(f64::INFINITY, |x| x.usd.0);
            (!used.contains(&a.id))
                .cmp(&!used.contains(&b.id))
                .then(ra.total_cmp(rb))
                .then(price(a).total_cmp(&price(b)))
        })
        .map(|(p, _)| p)
}

#[cfg(test)]
mod tests {
    use super::upgrade_remedy;
    use crate::model::factory::device_from_part;
    use crate::model::ports::{PortKind, port_groups};
    use crate::model::{Bandwidth, Catalog, Design, Endpoint, Link, LinkTech, PartId, Pos};

    /// A design of two built-in parts, named as given, and no links.
    fn two_parts(name: &str, parts: [(&str, &str); 2]) -> (Design, Catalog) {
        let catalog = Catalog::builtin();
        let mut design = Design::new(name);
        for (part, name) in parts {
            let id = design.next_device_id();
            let d = device_from_part(
                &catalog,
                &PartId::new(part),
                id,
                name.into(),
                Pos::default(),
            )
            .expect("builtin part");
            design.insert_device(d);
        }
        (design, catalog)
    }

    /// A `node` cabled by its own 10 GbE port to a 10 GbE switch, as on a homelab's switch.
    fn on_ten_gbe(node: &str) -> (Design, Catalog) {
        let (mut design, catalog) =
            two_parts("homelab", [(node, "box"), ("crs317-16x10g", "switch")]);
        let port = |i: usize, builtin: bool| {
            let device = &design.devices[i];
            let group = port_groups(&catalog, device)
                .into_iter()
                .find(|g| matches!(g.kind, PortKind::BuiltinEthernet { .. }) == builtin)
                .expect("a port group");
            Endpoint {
                device: device.id,
                port: group.port(0),
            }
        };
        let link = Link::new(
            port(0, true),
            port(1, false),
            LinkTech::Ethernet,
            Bandwidth::from_gbit_s(10.0),
        );
        design.add_link(link);
        (design, catalog)
    }

    /// Neither a Mac Studio nor a DGX Spark takes an add-in NIC: the Spark is sent to its own
    /// ConnectX-7, the Mac to its Thunderbolt; neither is offered the Spark's built-in NIC.
    #[test]
    fn slotless_machines_are_not_told_to_add_a_nic() {
        let fastest = Bandwidth::from_gbit_s(200.0);
        let remedy = |node: &str| {
            let (design, catalog) = on_ten_gbe(node);
            let slow: Vec<&Link> = design.links.iter().collect();
            upgrade_remedy(&design, &catalog, &slow, fastest)
        };
        let spark = remedy("dgx-spark");
        assert!(
            spark.starts_with(
                "move these cables from the `dgx-spark`'s own Ethernet ports (10 Gb/s) to the \
                 `dgx-spark`'s built-in `cx7-gb10` ports (200 Gb/s)"
            ),
            "{spark}"
        );
        let mac = remedy("mac-studio-m3-ultra");
        assert!(
            mac.starts_with(
                "the `mac-studio-m3-ultra` takes no add-in NIC, so the `mac-studio-m3-ultra`'s \
                 own Ethernet ports (10 Gb/s) are its fastest Ethernet: carry the traffic that \
                 needs 200 Gb/s on its faster built-in links (Thunderbolt)"
            ),
            "{mac}"
        );
        assert!(
            !mac.contains("cx7-gb10") && !spark.contains("add a"),
            "{mac} / {spark}"
        );
        // A workstation has slots: it is offered a card, never the Spark's built-in one.
        let workstation = remedy("workstation");
        assert!(workstation.contains("add a `"), "{workstation}");
        assert!(!workstation.contains("cx7-gb10"), "{workstation}");
    }

    /// An SN5600 split four ways has 200 Gb/s ports: a 400 Gb/s cable on one is told to lower
    /// the breakout, not sent to "a switch such as `sn5600`", the switch it is on.
    #[test]
    fn a_split_port_is_told_to_split_less() {
        use crate::model::{DeviceKind, Port};
        let (mut design, catalog) = two_parts("split", [("dgx-h100", "node"), ("sn5600", "leaf")]);
        if let DeviceKind::Switch(s) = &mut design.devices[1].kind {
            s.breakout = 4;
        }
        let (a, b) = (design.devices[0].id, design.devices[1].id);
        design.add_link(Link::new(
            Endpoint {
                device: a,
                port: Port::Nic(0),
            },
            Endpoint {
                device: b,
                port: Port::Switch(0),
            },
            LinkTech::RoceV2,
            Bandwidth::from_gbit_s(400.0),
        ));
        let slow: Vec<&Link> = design.links.iter().collect();
        let remedy = upgrade_remedy(&design, &catalog, &slow, Bandwidth::from_gbit_s(400.0));
        assert_eq!(
            remedy,
            "the `sn5600` switch ports (200 Gb/s) are split below 400 Gb/s: lower the \
             `sn5600`'s breakout (in the inspector) so its ports run at 400 Gb/s"
        );
    }
}
