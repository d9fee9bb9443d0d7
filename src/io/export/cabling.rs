//! What the exports share: readable port names, the links that are physical cables (with
//! both ends resolved and each port used once), racks, length classes and link labels.

use super::ExportError;
use crate::analysis::cost::{CableChoice, link_cable};
use crate::analysis::optic_cages::{dac_splitter, dac_twin_ways};
use crate::analysis::twisted_pair::{TWISTED_PAIR, twisted_pair};
use crate::io::link_colors::{Background, ColorMode, LinkPainter};
use crate::model::catalog::CableMedium;
use crate::model::{
    Catalog, Design, Device, DeviceId, Endpoint, Group, GroupId, GroupKind, LengthClass, Link,
    LinkTech, Port,
};
use std::collections::HashMap;
use std::collections::hash_map::Entry;

pub use crate::model::ports::port_name;

/// Links that are cables someone plugs in: network and Thunderbolt links, NVLink bridges,
/// and any link that names a cable part. NVLink and PCIe inside a node or an NVSwitch
/// domain run over the board or the rack's spine, not over cables.
pub fn is_cabled(link: &Link) -> bool {
    link.cable.is_some() || !matches!(link.tech, LinkTech::NvLink | LinkTech::Pcie)
}

/// One end of a cable.
pub struct CableEnd<'a> {
    pub device: &'a Device,
    pub port: Port,
    pub port_name: String,
    /// The rack the device sits in, through its group's parents; None when not in one.
    pub rack: Option<&'a Group>,
}

/// A cabled link with both ends resolved.
pub struct Cable<'a> {
    pub link: &'a Link,
    pub a: CableEnd<'a>,
    pub b: CableEnd<'a>,
}

impl Cable<'_> {
    /// `leaf-3:p12 <-> node-7:nic3`: what goes on the label printer.
    pub fn label(&self) -> String {
        format!(
            "{}:{} <-> {}:{}",
            self.a.device.name, self.a.port_name, self.b.device.name, self.b.port_name
        )
    }

    /// `in-rack` or `cross-rack` when both racks are known (or the link is marked
    /// cross-rack), else `unknown`. The design has no rack positions, so "adjacent rack"
    /// and "across rows" cannot be told apart; the link's in-rack default is no evidence.
    pub fn length_class(&self) -> &'static str {
        match (self.a.rack, self.b.rack) {
            (Some(x), Some(y)) if x.id == y.id => "in-rack",
            (Some(_), Some(_)) => "cross-rack",
            _ if self.link.length == LengthClass::CrossRack => "cross-rack",
            _ => "unknown",
        }
    }
}

/// The rack a device is in: its group or the nearest rack above it.
pub fn rack_of<'a>(design: &'a Design, device: &Device) -> Option<&'a Group> {
    let mut at: Option<GroupId> = device.group;
    // A malformed file could make parents loop; no chain is longer than the group count.
    for _ in 0..=design.groups.len() {
        let group = design.group(at?)?;
        if group.kind == GroupKind::Rack {
            return Some(group);
        }
        at = group.parent;
    }
    None
}

/// Every cabled link of the design, in link order, each port used by one cable only.
pub fn cables<'a>(design: &'a Design) -> Result<Vec<Cable<'a>>, ExportError> {
    let mut owner: HashMap<(DeviceId, Port), &Link> = HashMap::new();
    let mut out = Vec::new();
    for link in design.links.iter().filter(|l| is_cabled(l)) {
        let end = |device: DeviceId, port: Port| -> Result<CableEnd<'a>, ExportError> {
            let d = design.device(device).ok_or(ExportError::MissingDevice {
                link: link.id,
                device: device.0,
            })?;
            Ok(CableEnd {
                device: d,
                port,
                port_name: port_name(port),
                rack: rack_of(design, d),
            })
        };
        let cable = Cable {
            link,
            a: end(link.a.device, link.a.port)?,
            b: end(link.b.device, link.b.port)?,
        };
        for e in [&cable.a, &cable.b] {
            match owner.entry((e.device.id, e.port)) {
                Entry::Occupied(first) => {
                    return Err(ExportError::PortReused {
                        device: e.device.name.clone(),
                        port: e.port_name.clone(),
                        first: first.get().id,
                        second: link.id,
                    });
                }
                Entry::Vacant(v) => {
                    v.insert(link);
                }
            }
        }
        out.push(cable);
    }
    Ok(out)
}

/// `Ethernet 10 Gb/s`, or `InfiniBand 2 × 400 Gb/s` for a bundle: an edge's label.
pub fn link_label(link: &Link) -> String {
    if link.lanes == 1 {
        format!("{} {}", link.tech.label(), link.rate_gbit_s)
    } else {
        format!(
            "{} {} × {}",
            link.tech.label(),
            link.lanes,
            link.rate_gbit_s
        )
    }
}

/// Links coloured by technology on a light background: the canvas's default view, which
/// the draw.io and DOT exports follow.
pub fn technology_painter() -> LinkPainter<'static> {
    LinkPainter {
        mode: ColorMode::Technology,
        background: Background::Light,
        heat: None,
    }
}

/// The cable or optic part of a link as the bill of materials counts it, and how many
/// pieces (two transceivers per lane for optics; twisted pair at an RJ-45 end; a splitter
/// DAC for a leg of one, one per lane), or None for a link without one.
pub fn cable_part<'a>(
    design: &Design,
    link: &'a Link,
    catalog: &Catalog,
) -> Option<(CableChoice<'a>, u64)> {
    if twisted_pair(design, catalog, link).is_some() {
        return Some((CableChoice::Fixed(TWISTED_PAIR), u64::from(link.lanes)));
    }
    let need = link_cable(link, catalog)?;
    // A DAC that is a splitter's leg names the splitter, which its cage's other legs share.
    if let CableChoice::Derived {
        prefix: "dac",
        gbit_s,
    } = need.choice
        && let Some((splitter, _)) = dac_splitter(design, catalog, link, gbit_s)
    {
        return Some((splitter, u64::from(link.lanes)));
    }
    // A DAC between two shared cages is one port of a twin-port DAC its neighbour shares.
    if let Some(port) = twin_port(design, catalog, link, need.choice) {
        return Some((port.twin, u64::from(link.lanes)));
    }
    Some((need.choice, need.quantity))
}

/// `cable_part`'s splitter rule: the splitter a link's DAC is a leg of, and the end whose
/// cage holds it; None for a link on a cable of its own.
pub fn splitter_leg_of(
    design: &Design,
    link: &Link,
    catalog: &Catalog,
) -> Option<(CableChoice<'static>, Endpoint)> {
    if twisted_pair(design, catalog, link).is_some() {
        return None;
    }
    let CableChoice::Derived {
        prefix: "dac",
        gbit_s,
    } = link_cable(link, catalog)?.choice
    else {
        return None;
    };
    dac_splitter(design, catalog, link, gbit_s)
}

/// A link whose cable is one port of a twin-port DAC (`dac-800g` between a DGX H100's twin
/// cage and a QM9700's): the twin, the DAC of the link's own rate, and the ports one twin
/// carries.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct TwinPort {
    pub twin: CableChoice<'static>,
    pub single: CableChoice<'static>,
    pub ways: u32,
}

/// `cable_part`'s twin rule: the link's cable is that port where `cable_part` names the twin.
pub fn twin_port_of(design: &Design, link: &Link, catalog: &Catalog) -> Option<TwinPort> {
    if twisted_pair(design, catalog, link).is_some() {
        return None;
    }
    twin_port(design, catalog, link, link_cable(link, catalog)?.choice)
}

/// The twin-DAC port a link's derived cable `choice` is, unless it is a splitter's leg.
fn twin_port(
    design: &Design,
    catalog: &Catalog,
    link: &Link,
    choice: CableChoice<'_>,
) -> Option<TwinPort> {
    let CableChoice::Derived {
        prefix: "dac",
        gbit_s,
    } = choice
    else {
        return None;
    };
    if dac_splitter(design, catalog, link, gbit_s).is_some() {
        return None;
    }
    let (twin, ways) = dac_twin_ways(design, catalog, link, gbit_s)?;
    Some(TwinPort {
        twin,
        single: CableChoice::Derived {
            prefix: "dac",
            gbit_s,
        },
        ways,
    })
}

/// NetBox's cable type slug for a link's part, where the part says it: a DAC is
/// `dac-passive`, an active optical cable `aoc`, a Thunderbolt cable (USB-C) `usb`, twisted
/// pair `cat6a`. Optics
/// do not say whether the fibre is multi- or single-mode, so they get no type.
pub fn netbox_cable_type(choice: CableChoice<'_>, catalog: &Catalog) -> &'static str {
    let medium = catalog.cable(&choice.part_id()).map(|spec| spec.medium);
    match (medium, choice) {
        (Some(CableMedium::Dac), _) => "dac-passive",
        (Some(CableMedium::Aoc), _) => "aoc",
        (Some(CableMedium::Thunderbolt), _) => "usb",
        (Some(CableMedium::TwistedPair), _) => "cat6a",
        (Some(CableMedium::Transceiver | CableMedium::NvLinkBridge), _) => "",
        (None, CableChoice::Derived { prefix: "dac", .. }) => "dac-passive",
        (None, CableChoice::Derived { prefix: "aoc", .. }) => "aoc",
        (None, CableChoice::Fixed("tb4" | "tb5")) => "usb",
        (None, _) => "",
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::{Bandwidth, Endpoint};

    fn link(tech: LinkTech) -> Link {
        Link::new(
            Endpoint::new(DeviceId(0), Port::Nic(0)),
            Endpoint::new(DeviceId(1), Port::Switch(0)),
            tech,
            Bandwidth::from_gbit_s(400.0),
        )
    }

    #[test]
    fn nvlink_and_pcie_are_not_cables() {
        assert!(!is_cabled(&link(LinkTech::NvLink)));
        assert!(!is_cabled(&link(LinkTech::Pcie)));
        assert!(is_cabled(&link(LinkTech::InfiniBand)));
        assert!(is_cabled(&link(LinkTech::Thunderbolt5)));
    }

    #[test]
    fn labels_carry_technology_rate_and_lanes() {
        assert_eq!(
            link_label(&link(LinkTech::InfiniBand)),
            "InfiniBand 400 Gb/s"
        );
        assert_eq!(
            link_label(&link(LinkTech::RoceV2).with_lanes(2)),
            "RoCEv2 2 × 400 Gb/s"
        );
    }

    #[test]
    fn derived_parts_map_to_netbox_types() {
        let catalog = Catalog::builtin();
        let dac = CableChoice::Derived {
            prefix: "dac",
            gbit_s: 400,
        };
        let optic = CableChoice::Derived {
            prefix: "optic",
            gbit_s: 400,
        };
        assert_eq!(netbox_cable_type(dac, &catalog), "dac-passive");
        assert_eq!(netbox_cable_type(optic, &catalog), "");
        assert_eq!(
            netbox_cable_type(CableChoice::Fixed("tb5"), &catalog),
            "usb"
        );
    }
}
