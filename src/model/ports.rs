//! A device's ports: what each one is, named by kind and index so that a link stays on
//! the port it was drawn to whatever else changes on the device. The factory, the checks,
//! the canvas and the exports all read ports from here.

use super::catalog::{Catalog, NetFamily, NodeSpec, PartId};
use super::device::{Device, DeviceKind, NicSlot};
use super::link::LinkTech;
use super::units::Bandwidth;
use serde::{Deserialize, Serialize};
use std::fmt;

/// One port of a device, by kind and index within that kind. Adding or removing a NIC
/// never renames a Thunderbolt or on-board port, and NIC k stays NIC k while the NICs
/// before it stay.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
pub enum Port {
    /// The port of NIC slot k of a node or host; on a rail-optimized node, rail k.
    Nic(u32),
    /// Built-in Thunderbolt port k.
    Thunderbolt(u32),
    /// Built-in (on-board) Ethernet port k.
    Ethernet(u32),
    /// A compute tray's NVLink connection into its rack-scale domain.
    NvLink,
    /// Switch port k, after breakout.
    Switch(u32),
    /// A rack-scale NVLink domain's slot k for a compute tray.
    Slot(u32),
    /// GPU k's own connector inside its node: an NVLink bridge or a PCIe link between cards.
    Gpu(u32),
}

impl Port {
    /// The NIC slot, for a NIC port.
    pub fn nic(self) -> Option<u32> {
        match self {
            Port::Nic(k) => Some(k),
            _ => None,
        }
    }

    /// The index within its kind (0 for the single NVLink port).
    pub fn index(self) -> u32 {
        match self {
            Port::Nic(k)
            | Port::Thunderbolt(k)
            | Port::Ethernet(k)
            | Port::Switch(k)
            | Port::Slot(k)
            | Port::Gpu(k) => k,
            Port::NvLink => 0,
        }
    }

    /// A number unique among one device's ports, small for the ports a device has: for
    /// tables indexed by port. Kinds interleave, so a switch's port k is about 7k.
    pub fn dense_key(self) -> u64 {
        let tag = match self {
            Port::Nic(_) => 0,
            Port::Thunderbolt(_) => 1,
            Port::Ethernet(_) => 2,
            Port::NvLink => 3,
            Port::Switch(_) => 4,
            Port::Slot(_) => 5,
            Port::Gpu(_) => 6,
        };
        u64::from(self.index()) * 7 + tag
    }
}

impl fmt::Display for Port {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Port::Nic(k) => write!(f, "NIC {k}"),
            Port::Thunderbolt(k) => write!(f, "Thunderbolt port {k}"),
            Port::Ethernet(k) => write!(f, "Ethernet port {k}"),
            Port::NvLink => f.write_str("NVLink port"),
            Port::Switch(k) => write!(f, "port {k}"),
            Port::Slot(k) => write!(f, "tray slot {k}"),
            Port::Gpu(k) => write!(f, "GPU {k}'s connector"),
        }
    }
}

/// A port's name on a label, as the design names ports: `nic3` (NIC 3, rail 3), `tb1` and
/// `eth0` (a node's built-in Thunderbolt and Ethernet ports), `p12` (switch port 12 after
/// breakout, from 0 as `railyard eval` numbers it), `nvl0` (a tray's NVLink uplink),
/// `slot4` (a domain's tray slot).
pub fn port_name(port: Port) -> String {
    match port {
        Port::Nic(k) => format!("nic{k}"),
        Port::Thunderbolt(k) => format!("tb{k}"),
        Port::Ethernet(k) => format!("eth{k}"),
        Port::Switch(k) => format!("p{k}"),
        Port::NvLink => "nvl0".to_string(),
        Port::Slot(k) => format!("slot{k}"),
        Port::Gpu(k) => format!("gpu{k}"),
    }
}

/// The port a [`port_name`] names (`nic3`, `p12`, `nvl0`...), or `None` for any other text.
pub fn parse_port_name(name: &str) -> Option<Port> {
    if name == "nvl0" {
        return Some(Port::NvLink);
    }
    let split = name.find(|c: char| c.is_ascii_digit())?;
    let (kind, number) = name.split_at(split);
    let k: u32 = number.parse().ok()?;
    Some(match kind {
        "nic" => Port::Nic(k),
        "tb" => Port::Thunderbolt(k),
        "eth" => Port::Ethernet(k),
        "p" => Port::Switch(k),
        "slot" => Port::Slot(k),
        "gpu" => Port::Gpu(k),
        _ => return None,
    })
}

/// What kind of port a run of ports is.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum PortKind {
    /// A scale-out NIC: one port per NIC slot (slot i is rail i).
    Nic {
        family: NetFamily,
        rdma: bool,
        rate: Bandwidth,
    },
    Thunderbolt {
        generation: u8,
    },
    BuiltinEthernet {
        rate: Bandwidth,
    },
    /// A switch port after breakout.
    SwitchPort {
        family: NetFamily,
        rate: Bandwidth,
    },
    /// A compute tray's NVLink connection into its rack-scale domain (one lane per GPU).
    NvLinkUplink,
    /// A domain's slot for one of its compute trays.
    DomainSlot,
}

impl PortKind {
    pub(crate) fn families(self) -> &'static [&'static str] {
        match self {
            PortKind::Nic { family, .. } | PortKind::SwitchPort { family, .. } => match family {
                NetFamily::InfiniBand => &["InfiniBand"],
                NetFamily::Ethernet => &["Ethernet"],
                NetFamily::Both => &["InfiniBand", "Ethernet"],
            },
            PortKind::Thunderbolt { .. } => &["Thunderbolt"],
            PortKind::BuiltinEthernet { .. } => &["Ethernet"],
            PortKind::NvLinkUplink | PortKind::DomainSlot => &["NVLink"],
        }
    }

    /// "Thunderbolt port", "NIC port", ...: for messages about a full device.
    pub(crate) fn noun(self) -> &'static str {
        match self {
            PortKind::Nic { .. } => "NIC port",
            PortKind::Thunderbolt { .. } => "Thunderbolt port",
            PortKind::BuiltinEthernet { .. } => "Ethernet port",
            PortKind::SwitchPort { .. } => "port",
            PortKind::NvLinkUplink => "NVLink port",
            PortKind::DomainSlot => "tray slot",
        }
    }
}

/// A run of ports of one kind on a device: indices `first .. first + count` of that kind.
#[derive(Debug, Clone, PartialEq)]
pub struct PortGroup {
    pub kind: PortKind,
    pub first: u32,
    pub count: u32,
    /// The part that provides the ports (the NIC, or the device's own model), for messages.
    pub part: PartId,
}

impl PortGroup {
    /// The group's i-th port.
    pub fn port(&self, i: u32) -> Port {
        let k = self.first.saturating_add(i);
        match self.kind {
            PortKind::Nic { .. } => Port::Nic(k),
            PortKind::Thunderbolt { .. } => Port::Thunderbolt(k),
            PortKind::BuiltinEthernet { .. } => Port::Ethernet(k),
            PortKind::SwitchPort { .. } => Port::Switch(k),
            PortKind::NvLinkUplink => Port::NvLink,
            PortKind::DomainSlot => Port::Slot(k),
        }
    }

    pub fn ports(&self) -> impl Iterator<Item = Port> + '_ {
        (0..self.count).map(|i| self.port(i))
    }

    pub fn contains(&self, port: Port) -> bool {
        self.ports_kind_matches(port)
            && port.index() >= self.first
            && port.index() - self.first < self.count
    }

    fn ports_kind_matches(&self, port: Port) -> bool {
        matches!(
            (self.kind, port),
            (PortKind::Nic { .. }, Port::Nic(_))
                | (PortKind::Thunderbolt { .. }, Port::Thunderbolt(_))
                | (PortKind::BuiltinEthernet { .. }, Port::Ethernet(_))
                | (PortKind::SwitchPort { .. }, Port::Switch(_))
                | (PortKind::NvLinkUplink, Port::NvLink)
                | (PortKind::DomainSlot, Port::Slot(_))
        )
    }
}

/// Whether `device` has `port`: a GPU connector below its GPU count, the NVLink uplink of a
/// node in a domain, or a port of one of its groups. Parts the catalog lacks have none.
pub fn has_port(catalog: &Catalog, device: &Device, port: Port) -> bool {
    match (port, &device.kind) {
        (Port::Gpu(k), DeviceKind::GpuNode(node)) => k < node.gpu_count,
        (Port::Gpu(_), _) => false,
        _ => port_groups(catalog, device)
            .iter()
            .any(|g| g.contains(port)),
    }
}

/// The ports of a device, from its parts in the catalog, in the order the device lists
/// them: NIC slots, Thunderbolt ports, on-board Ethernet ports, the NVLink uplink; a
/// switch's ports; a domain's tray slots. Parts the catalog lacks give no ports.
pub fn port_groups(catalog: &Catalog, device: &Device) -> Vec<PortGroup> {
    let mut groups = Vec::new();
    match &device.kind {
        DeviceKind::GpuNode(node) => {
            push_nic_groups(catalog, &node.nics, &mut groups);
            if let Some(spec) = catalog.node(&node.model) {
                push_builtin_groups(&node.model, spec, &mut groups);
            }
            if node.domain.is_some() {
                groups.push(PortGroup {
                    kind: PortKind::NvLinkUplink,
                    first: 0,
                    count: 1,
                    part: node.model.clone(),
                });
            }
        }
        DeviceKind::Host(host) => {
            push_nic_groups(catalog, &host.nics, &mut groups);
            if let Some(model) = &host.model
                && let Some(spec) = catalog.node(model)
            {
                push_builtin_groups(model, spec, &mut groups);
            }
        }
        DeviceKind::Switch(sw) => {
            if let Some(spec) = catalog.switch(&sw.model) {
                let breakout = sw.breakout.max(1);
                groups.push(PortGroup {
                    kind: PortKind::SwitchPort {
                        family: spec.family,
                        rate: spec.port_gbit_s / f64::from(breakout),
                    },
                    first: 0,
                    count: spec.ports.saturating_mul(breakout),
                    part: sw.model.clone(),
                });
            }
        }
        DeviceKind::NvSwitchDomain(domain) => {
            if let Some(spec) = catalog.domain(&domain.model) {
                groups.push(PortGroup {
                    kind: PortKind::DomainSlot,
                    first: 0,
                    count: spec.members,
                    part: domain.model.clone(),
                });
            }
        }
    }
    groups
}

/// One group per run of NIC slots with the same part.
fn push_nic_groups(catalog: &Catalog, nics: &[NicSlot], groups: &mut Vec<PortGroup>) {
    for (i, slot) in nics.iter().enumerate() {
        let Some(spec) = catalog.nic(&slot.part) else {
            continue;
        };
        let port = i as u32;
        if let Some(last) = groups.last_mut()
            && last.part == slot.part
            && last.first + last.count == port
        {
            last.count += 1;
            continue;
        }
        groups.push(PortGroup {
            kind: PortKind::Nic {
                family: spec.family,
                rdma: spec.rdma,
                rate: spec.port_gbit_s,
            },
            first: port,
            count: 1,
            part: slot.part.clone(),
        });
    }
}

fn push_builtin_groups(model: &PartId, spec: &NodeSpec, groups: &mut Vec<PortGroup>) {
    if spec.thunderbolt_ports > 0 {
        groups.push(PortGroup {
            kind: PortKind::Thunderbolt {
                generation: spec.thunderbolt_generation.unwrap_or(4),
            },
            first: 0,
            count: spec.thunderbolt_ports,
            part: model.clone(),
        });
    }
    if let Some(rate) = spec.builtin_ethernet_gbit_s
        && spec.builtin_ethernet_ports > 0
    {
        groups.push(PortGroup {
            kind: PortKind::BuiltinEthernet { rate },
            first: 0,
            count: spec.builtin_ethernet_ports,
            part: model.clone(),
        });
    }
}

/// How many Thunderbolt and on-board Ethernet ports a node or host model has, from the
/// catalog; (0, 0) for a model the catalog lacks.
fn builtin_counts(catalog: &Catalog, device: &Device) -> (u32, u32) {
    let model = match &device.kind {
        DeviceKind::GpuNode(node) => Some(&node.model),
        DeviceKind::Host(host) => host.model.as_ref(),
        DeviceKind::Switch(_) | DeviceKind::NvSwitchDomain(_) => None,
    };
    model.and_then(|m| catalog.node(m)).map_or((0, 0), |spec| {
        (spec.thunderbolt_ports, spec.builtin_ethernet_ports)
    })
}

fn nic_count(device: &Device) -> u32 {
    let nics = match &device.kind {
        DeviceKind::GpuNode(node) => node.nics.len(),
        DeviceKind::Host(host) => host.nics.len(),
        DeviceKind::Switch(_) | DeviceKind::NvSwitchDomain(_) => 0,
    };
    u32::try_from(nics).unwrap_or(u32::MAX)
}

/// The port a link of technology `tech` meant by `number` in a version-1 design file,
/// where a port was its place in the device's list: a node's or host's NIC slots, then its
/// Thunderbolt ports, then its on-board Ethernet ports, then its NVLink uplink; a switch's
/// port number; a domain's slot. The technology settles what the number alone cannot: a
/// model the catalog lacks, and an Ethernet cable that version 1 let sit on a number in the
/// Thunderbolt range (that number's on-board Ethernet port is then the same offset past
/// the NICs, as the built-in ports were one pool to version 1's checks).
pub fn port_from_v1_number(
    catalog: &Catalog,
    device: &Device,
    number: u32,
    tech: LinkTech,
) -> Port {
    match &device.kind {
        DeviceKind::Switch(_) => Port::Switch(number),
        DeviceKind::NvSwitchDomain(_) => Port::Slot(number),
        DeviceKind::GpuNode(_) if tech == LinkTech::NvLink => Port::NvLink,
        // Inside the box, version 1's numbers were the cards'.
        DeviceKind::GpuNode(_) if matches!(tech, LinkTech::NvLinkBridge | LinkTech::Pcie) => {
            Port::Gpu(number)
        }
        DeviceKind::GpuNode(_) | DeviceKind::Host(_) => {
            let nics = nic_count(device);
            if number < nics {
                return Port::Nic(number);
            }
            let builtin = number - nics;
            let (thunderbolt, _) = builtin_counts(catalog, device);
            if tech.is_thunderbolt() {
                Port::Thunderbolt(builtin)
            } else if builtin >= thunderbolt {
                Port::Ethernet(builtin - thunderbolt)
            } else {
                Port::Ethernet(builtin)
            }
        }
    }
}

/// The number version 1 gave `port` on `device` (the inverse of `port_from_v1_number` for
/// the ports a device has): still how containerlab's interface names count a device's ports.
pub fn v1_number(catalog: &Catalog, device: &Device, port: Port) -> u32 {
    let nics = nic_count(device);
    let (thunderbolt, ethernet) = builtin_counts(catalog, device);
    match port {
        Port::Nic(k) | Port::Switch(k) | Port::Slot(k) | Port::Gpu(k) => k,
        Port::Thunderbolt(k) => nics.saturating_add(k),
        Port::Ethernet(k) => nics.saturating_add(thunderbolt).saturating_add(k),
        Port::NvLink => nics.saturating_add(thunderbolt).saturating_add(ethernet),
    }
}
