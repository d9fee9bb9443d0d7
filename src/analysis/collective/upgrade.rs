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
            (EndKind::Switch, Some(p)) => format!(
                "move these cables from {what} to a switch with {fastest} ports such as `{}` ({})",
                p.id, p.model
            ),
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
                PartSpec::Nic(n) if !switch && fits(n.family) => n.port_gbit_s,
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
