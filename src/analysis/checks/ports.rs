//! Ports: what a link end plugs into on its device, which link holds each cabled port, and
//! how many switch, Thunderbolt and built-in Ethernet ports each device uses against what it has.

use super::checked::{CheckedDesign, as_nic, as_node, as_switch};
use super::{Finding, Severity, codes::*};
use crate::analysis::cost::FastMap;
use crate::model::catalog::{NicSpec, NodeSpec, SwitchSpec};
use crate::model::{DeviceId, DeviceKind, Endpoint, LinkId, PartId, Port, Switch};
use std::collections::BTreeMap;

/// What a link end's port is on its device, with the parts that decide what it carries.
pub(super) enum PortAt<'a> {
    /// NIC slot `slot` of a node or host.
    Nic {
        slot: u32,
        part: &'a PartId,
        spec: Option<&'a NicSpec>,
    },
    /// A built-in Thunderbolt or on-board Ethernet port (`spec` is the device's model).
    Builtin {
        port: Port,
        spec: Option<&'a NodeSpec>,
    },
    Switch {
        switch: &'a Switch,
        spec: Option<&'a SwitchSpec>,
    },
    Domain,
    /// A port the device cannot have: a NIC slot past its NICs, a switch port on a node.
    Missing(String),
}

/// What `port` of the device at position `at` is.
pub(super) fn port_of<'a>(at: usize, port: Port, checked: &CheckedDesign<'a>) -> PortAt<'a> {
    let device = &checked.design.devices[at];
    let resolved = &checked.device_parts[at];
    let nics = match &device.kind {
        DeviceKind::GpuNode(n) => &n.nics,
        DeviceKind::Host(h) => &h.nics,
        DeviceKind::Switch(switch) => {
            return match port {
                Port::Switch(_) => PortAt::Switch {
                    switch,
                    spec: resolved.model.and_then(as_switch),
                },
                other => PortAt::Missing(format!("a switch has no {other}, only numbered ports")),
            };
        }
        DeviceKind::NvSwitchDomain(_) => return PortAt::Domain,
    };
    match port {
        Port::Nic(slot) => match nics.get(slot as usize) {
            Some(nic) => PortAt::Nic {
                slot,
                part: &nic.part,
                spec: resolved
                    .nics
                    .get(slot as usize)
                    .copied()
                    .flatten()
                    .and_then(as_nic),
            },
            None => PortAt::Missing(format!(
                "NIC {slot} does not exist: it has {} NIC(s)",
                nics.len()
            )),
        },
        Port::Thunderbolt(_) | Port::Ethernet(_) | Port::NvLink => PortAt::Builtin {
            port,
            spec: resolved.model.and_then(as_node),
        },
        Port::Switch(_) | Port::Slot(_) => PortAt::Missing(format!(
            "it has no {port}: that is a switch's or domain's port"
        )),
        Port::Gpu(_) => PortAt::Missing(format!(
            "its {port} is inside the box: cables go on NICs and built-in ports"
        )),
    }
}

/// Ports in use on one device, summed over its links (lanes are parallel cables).
#[derive(Default, Clone, Copy)]
pub(super) struct Usage {
    pub(super) switch_lanes: u64,
    pub(super) highest_switch_port: Option<u32>,
    pub(super) thunderbolt_lanes: u64,
    pub(super) builtin_ethernet_lanes: u64,
}

/// The link holding each cabled port: a flat table of every device's ports (sized by the
/// highest port its links use) when that table stays small, else a hash map for files
/// with stray port numbers.
pub(super) enum PortOwners {
    Dense {
        /// Start of each device's ports in `owner`, by position in `design.devices`.
        first: Vec<usize>,
        owner: Vec<Option<LinkId>>,
    },
    Sparse(FastMap<Endpoint, LinkId>),
}

impl PortOwners {
    pub(super) fn new(checked: &CheckedDesign<'_>) -> Self {
        let design = checked.design;
        let mut ports = vec![0usize; design.devices.len()];
        for link in &design.links {
            if !(link.tech.is_network() || link.tech.is_thunderbolt()) {
                continue;
            }
            for end in [link.a, link.b] {
                if let Some(i) = checked.index.get(end.device) {
                    let key = usize::try_from(end.port.dense_key()).unwrap_or(usize::MAX);
                    ports[i] = ports[i].max(key.saturating_add(1));
                }
            }
        }
        let mut first = Vec::with_capacity(ports.len() + 1);
        let mut sum = 0usize;
        for p in ports {
            first.push(sum);
            sum = sum.saturating_add(p);
        }
        first.push(sum);
        // Seven port kinds interleave in the keys (`Port::dense_key`), so a device's ports
        // spread over seven times their count.
        if sum <= 28 * (design.links.len() + design.devices.len()) + 1024 {
            PortOwners::Dense {
                first,
                owner: vec![None; sum],
            }
        } else {
            PortOwners::Sparse(FastMap::default())
        }
    }

    /// Records `link` on port `end` of the device at position `at`; returns the link that
    /// already holds it, if any.
    #[inline]
    pub(super) fn claim(&mut self, at: usize, end: Endpoint, link: LinkId) -> Option<LinkId> {
        match self {
            PortOwners::Dense { first, owner } => {
                // In range: `new` sized the device's run past its highest key.
                let slot = &mut owner[first[at] + end.port.dense_key() as usize];
                match *slot {
                    Some(held) => Some(held),
                    None => {
                        *slot = Some(link);
                        None
                    }
                }
            }
            PortOwners::Sparse(map) => match map.get(&end) {
                Some(&held) => Some(held),
                None => {
                    map.insert(end, link);
                    None
                }
            },
        }
    }
}

/// Built-in port `index` of a kind the model has `count` of; flags it if it does not exist.
pub(super) fn port_exists(
    port: Port,
    index: u32,
    count: u32,
    flag: &mut impl FnMut(Severity, &'static str, String),
) -> bool {
    let exists = index < count;
    if !exists {
        flag(
            Severity::Error,
            PORTS_OVER_CAPACITY,
            format!(
                "its {port} does not exist: it has {count} ({})",
                match count {
                    0 => "none".to_string(),
                    1 => "number 0".to_string(),
                    _ => format!("0 to {}", count - 1),
                }
            ),
        );
    }
    exists
}

pub(super) fn report_usage(checked: &CheckedDesign<'_>, usage: &[Usage], out: &mut Vec<Finding>) {
    let mut over: BTreeMap<DeviceId, Vec<String>> = BTreeMap::new();
    for ((device, used), resolved) in checked
        .design
        .devices
        .iter()
        .zip(usage)
        .zip(&checked.device_parts)
    {
        let mut problems = Vec::new();
        match &device.kind {
            DeviceKind::Switch(switch) => {
                let Some(spec) = resolved.model.and_then(as_switch) else {
                    continue;
                };
                let ports = u64::from(spec.ports) * u64::from(switch.breakout.max(1));
                if used.switch_lanes > ports {
                    problems.push(format!(
                        "{} cables on {ports} ports ({} × breakout {})",
                        used.switch_lanes,
                        spec.ports,
                        switch.breakout.max(1)
                    ));
                }
                if let Some(highest) = used.highest_switch_port
                    && u64::from(highest) >= ports
                {
                    problems.push(format!(
                        "port {highest} is used but ports are numbered 0 to {}",
                        ports - 1
                    ));
                }
            }
            DeviceKind::GpuNode(_) | DeviceKind::Host(_) => {
                // The node's model, or the host's.
                let Some(spec) = resolved.model.and_then(as_node) else {
                    continue;
                };
                if used.thunderbolt_lanes > u64::from(spec.thunderbolt_ports) {
                    problems.push(format!(
                        "{} Thunderbolt cables on {} Thunderbolt ports",
                        used.thunderbolt_lanes, spec.thunderbolt_ports
                    ));
                }
                if used.builtin_ethernet_lanes > u64::from(spec.builtin_ethernet_ports) {
                    problems.push(format!(
                        "{} cables on {} built-in Ethernet ports",
                        used.builtin_ethernet_lanes, spec.builtin_ethernet_ports
                    ));
                }
            }
            DeviceKind::NvSwitchDomain(_) => {}
        }
        if !problems.is_empty() {
            over.insert(device.id, problems);
        }
    }
    if over.is_empty() {
        return;
    }
    // One more pass over the links to list each crowded device's cabled links.
    let mut links_of: FastMap<DeviceId, Vec<LinkId>> = FastMap::default();
    for link in &checked.design.links {
        if !(link.tech.is_network() || link.tech.is_thunderbolt()) {
            continue;
        }
        for device in [link.a.device, link.b.device] {
            if over.contains_key(&device) {
                links_of.entry(device).or_default().push(link.id);
            }
        }
    }
    for (device, problems) in over {
        let links = links_of.remove(&device).unwrap_or_default();
        for problem in problems {
            out.push(Finding {
                severity: Severity::Error,
                code: PORTS_OVER_CAPACITY,
                message: format!("{}: {problem}", checked.name(device)),
                devices: vec![device],
                links: links.clone(),
                suggestion: String::new(),
            });
        }
    }
}
