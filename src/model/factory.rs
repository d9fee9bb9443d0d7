//! Devices from catalog parts, and the default link between two devices: what the canvas
//! does when a part is dropped on it or a link is drawn. No UI here, so both are testable.
//! Which ports a device has is `ports.rs`'s business; this file picks among them.

use super::catalog::{Catalog, GpuSpec, NetFamily, NodeSpec, PartId, PartSpec, ScaleUpSpec};
use super::design::{Design, DeviceId, Pos};
use super::device::{
    Device, DeviceKind, GpuNode, NicSlot, NvSwitchDomain, PcieVia, ScaleUp, Switch, SwitchFeatures,
    SwitchRole,
};
use super::link::{Endpoint, Link, LinkTech};
use super::ports::{Port, PortGroup, PortKind, port_groups};
use super::units::Bandwidth;
use std::collections::HashSet;

/// The chassis a bare GPU card goes into when dropped on its own.
pub const WORKSTATION: &str = "workstation";

#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub enum FactoryError {
    #[error("the catalog has no part `{0}`")]
    UnknownPart(PartId),
    #[error("`{part}` is a {category}, not a device: {hint}")]
    NotADevice {
        part: PartId,
        category: &'static str,
        hint: &'static str,
    },
    #[error("`{part}` is not a card for a workstation: {hint}")]
    NotACard { part: PartId, hint: String },
    #[error("`{part}` refers to `{missing}`, which the catalog lacks")]
    Dangling { part: PartId, missing: PartId },
    #[error("`{part}`: {message}")]
    Inconsistent { part: PartId, message: String },
}

/// A name for a new device: the part id and the device number ("dgx-h100-12").
pub fn default_name(part: &PartId, id: DeviceId) -> String {
    format!("{part}-{}", id.0)
}

/// A name for a new device that follows the design's own: where two or more devices of its
/// kind (GPU machines, leaf switches, NVSwitch domains) are named one prefix and a number
/// ("node-01", "node-02"), the next number in the same width ("node-05"); else the part id
/// and the device number (`default_name`). Never a name the design already has.
pub fn name_for_new(design: &Design, catalog: &Catalog, part: &PartId, id: DeviceId) -> String {
    let fallback = default_name(part, id);
    let Some(spec) = catalog.get(part).map(|p| &p.spec) else {
        return fallback;
    };
    // A GPU card makes a workstation, a switch part a leaf (`device_from_part`).
    let same_kind = |kind: &DeviceKind| match (spec, kind) {
        (PartSpec::Node(_) | PartSpec::Gpu(_), DeviceKind::GpuNode(_)) => true,
        (PartSpec::Switch(_), DeviceKind::Switch(s)) => s.role == SwitchRole::Leaf,
        (PartSpec::Domain(_), DeviceKind::NvSwitchDomain(_)) => true,
        _ => false,
    };
    // Prefix → (devices, highest number, its digits).
    let mut series: Vec<(&str, u32, u64, usize)> = Vec::new();
    for d in design.devices.iter().filter(|d| same_kind(&d.kind)) {
        let digits = d.name.len() - d.name.trim_end_matches(|c: char| c.is_ascii_digit()).len();
        let (prefix, number) = d.name.split_at(d.name.len() - digits);
        let Ok(number) = number.parse::<u64>() else {
            continue;
        };
        match series.iter_mut().find(|s| s.0 == prefix) {
            Some(s) => {
                s.1 += 1;
                if number >= s.2 {
                    (s.2, s.3) = (number, digits);
                }
            }
            None => series.push((prefix, 1, number, digits)),
        }
    }
    let Some(&(prefix, _, highest, width)) = series
        .iter()
        .filter(|s| s.1 >= 2 && !s.0.is_empty())
        .max_by_key(|s| s.1)
    else {
        return fallback;
    };
    let taken = |name: &str| design.devices.iter().any(|d| d.name == name);
    let Some(next) = highest.checked_add(1) else {
        return fallback;
    };
    (next..)
        .map(|n| format!("{prefix}{n:0width$}"))
        .find(|name| !taken(name))
        .unwrap_or(fallback)
}

/// One device from a catalog part, at `pos` (the device's centre on the canvas).
///
/// A node part gives a GPU node with the part's GPUs, scale-up and default NICs; a GPU card
/// gives a `workstation` with that card; a domain part gives the NVSwitch domain alone (see
/// [`devices_from_part`] for the domain with its compute trays); a switch part gives a leaf.
/// NICs and cables are not devices and are refused with a hint.
pub fn device_from_part(
    catalog: &Catalog,
    part: &PartId,
    id: DeviceId,
    name: String,
    pos: Pos,
) -> Result<Device, FactoryError> {
    let entry = catalog
        .get(part)
        .ok_or_else(|| FactoryError::UnknownPart(part.clone()))?;
    let kind = match &entry.spec {
        PartSpec::Node(spec) => DeviceKind::GpuNode(node_from_spec(catalog, part, spec, None)?),
        PartSpec::Gpu(gpu) => {
            if let Some(hint) = not_a_card_hint(catalog, part, gpu) {
                return Err(FactoryError::NotACard {
                    part: part.clone(),
                    hint,
                });
            }
            let chassis = PartId::new(WORKSTATION);
            let spec = catalog
                .node(&chassis)
                .ok_or_else(|| FactoryError::Dangling {
                    part: part.clone(),
                    missing: chassis.clone(),
                })?;
            DeviceKind::GpuNode(node_from_spec(catalog, &chassis, spec, Some(part))?)
        }
        PartSpec::Domain(_) => DeviceKind::NvSwitchDomain(NvSwitchDomain {
            model: part.clone(),
        }),
        PartSpec::Switch(spec) => DeviceKind::Switch(Switch {
            model: part.clone(),
            role: SwitchRole::Leaf,
            breakout: 1,
            rail: None,
            features: SwitchFeatures {
                in_network_reduction: spec.in_network_reduction,
                adaptive_routing: spec.adaptive_routing,
                lossless: false,
            },
        }),
        PartSpec::Nic(_) => {
            return Err(FactoryError::NotADevice {
                part: part.clone(),
                category: "NIC",
                hint: "add it to a node's NICs in the inspector",
            });
        }
        PartSpec::Cable(_) => {
            return Err(FactoryError::NotADevice {
                part: part.clone(),
                category: "cable",
                hint: "draw a link, then choose the cable in the inspector",
            });
        }
    };
    Ok(Device {
        id,
        name,
        pos,
        group: None,
        kind,
    })
}

/// Gives a new GPU node the NIC most of the design's nodes carry, where its chassis takes it
/// in place of its own default: an HGX server dropped into a RoCE design gets the design's
/// Ethernet NICs rather than its catalog's InfiniBand ones, so it cables like its neighbours.
/// Returns what was done, in words, for the status line (nothing changes unsaid); None when
/// the node keeps its own.
pub fn match_design_nics(
    catalog: &Catalog,
    design: &Design,
    device: &mut Device,
) -> Option<String> {
    let DeviceKind::GpuNode(node) = &mut device.kind else {
        return None;
    };
    let own = node.nics.first()?.part.clone();
    let mut counts: std::collections::BTreeMap<&PartId, usize> = Default::default();
    for d in &design.devices {
        if let DeviceKind::GpuNode(n) = &d.kind {
            for slot in &n.nics {
                *counts.entry(&slot.part).or_default() += 1;
            }
        }
    }
    // The most common; on a tie, the first by id, so the choice never depends on order.
    let most = counts.values().copied().max()?;
    let common = counts
        .into_iter()
        .find(|&(_, n)| n == most)
        .map(|(p, _)| p.clone())?;
    if common == own {
        return None;
    }
    let chassis = catalog.node(&node.model)?;
    let nic = catalog.nic(&common)?;
    let add_in = if nic.builtin { 0 } else { node.nics.len() };
    if !chassis.takes_nic(&common, nic) || !chassis.has_slots_for(add_in) {
        return None;
    }
    let peer_to_peer = catalog.gpu(&node.gpu).is_some_and(|g| g.peer_to_peer);
    for slot in &mut node.nics {
        slot.part = common.clone();
        slot.gpudirect = nic.rdma && peer_to_peer;
    }
    let model = |id: &PartId| catalog.get(id).map_or(id.to_string(), |p| p.model.clone());
    Some(format!(
        "with the design's {} NICs in place of its own {}",
        model(&common),
        model(&own)
    ))
}

/// Vertical distance between compute trays stacked inside a dropped domain.
const TRAY_PITCH: f32 = 72.0;
/// Horizontal distance between the columns of trays.
const TRAY_COLUMN_PITCH: f32 = 120.0;
/// Trays per column: an NVL72's 18 trays make two columns of nine.
const TRAYS_PER_COLUMN: u32 = 9;

/// What a palette drop inserts: [`device_from_part`], except that a domain part comes with
/// its compute trays (ids `first_id + 1 ..`), pointing at it and stacked around `pos`.
pub fn devices_from_part(
    catalog: &Catalog,
    part: &PartId,
    first_id: DeviceId,
    name: String,
    pos: Pos,
) -> Result<Vec<Device>, FactoryError> {
    let domain = device_from_part(catalog, part, first_id, name.clone(), pos)?;
    let Some(spec) = catalog.domain(part) else {
        return Ok(vec![domain]);
    };
    let member_spec = catalog
        .node(&spec.member_node)
        .ok_or_else(|| FactoryError::Dangling {
            part: part.clone(),
            missing: spec.member_node.clone(),
        })?;
    let columns = spec.members.div_ceil(TRAYS_PER_COLUMN).max(1);
    let rows = spec.members.min(TRAYS_PER_COLUMN);
    let left = pos.x - (columns - 1) as f32 * TRAY_COLUMN_PITCH / 2.0;
    let top = pos.y - (rows.max(1) - 1) as f32 * TRAY_PITCH / 2.0;
    let mut devices = Vec::with_capacity(spec.members as usize + 1);
    devices.push(domain);
    for i in 0..spec.members {
        let mut node = node_from_spec(catalog, &spec.member_node, member_spec, None)?;
        node.domain = Some(first_id);
        let column = i / TRAYS_PER_COLUMN;
        let row = i % TRAYS_PER_COLUMN;
        devices.push(Device {
            id: DeviceId(first_id.0 + 1 + i),
            name: format!("{name}-tray{:02}", i + 1),
            pos: Pos::new(
                left + column as f32 * TRAY_COLUMN_PITCH,
                top + row as f32 * TRAY_PITCH,
            ),
            group: None,
            kind: DeviceKind::GpuNode(node),
        });
    }
    Ok(devices)
}

/// Why a GPU part cannot go into a workstation on its own, if it cannot: SXM modules sit on
/// an NVSwitch baseboard, Apple GPUs are part of their SoC.
fn not_a_card_hint(catalog: &Catalog, part: &PartId, gpu: &GpuSpec) -> Option<String> {
    let apple = gpu.arch.is_apple();
    let module = gpu.nvlink_gbit_s.is_some() && !gpu.nvlink_bridge;
    let carrying: Vec<(&str, &NodeSpec)> = catalog
        .parts()
        .filter_map(|p| match &p.spec {
            PartSpec::Node(n) if n.gpu == *part => Some((p.id.as_str(), n)),
            _ => None,
        })
        .collect();
    // A GPU that only ever comes sharing memory with its CPU (GB10) is no card either.
    let superchip = !carrying.is_empty()
        && carrying
            .iter()
            .all(|(_, n)| n.scale_up == ScaleUpSpec::UnifiedMemory);
    if !(apple || module || superchip) {
        return None;
    }
    let carriers: Vec<&str> = carrying.iter().map(|(id, _)| *id).collect();
    let what = if apple {
        "it is part of an Apple SoC"
    } else if superchip {
        "it shares one chip and its memory with a CPU"
    } else {
        "it is an SXM module on an NVSwitch board"
    };
    Some(match carriers.as_slice() {
        [] => what.to_string(),
        list => format!("{what}; drop a node that carries it ({})", list.join(", ")),
    })
}

/// A GPU node from a node spec, with `gpu` replacing the default card in a generic chassis.
fn node_from_spec(
    catalog: &Catalog,
    node_part: &PartId,
    spec: &NodeSpec,
    gpu: Option<&PartId>,
) -> Result<GpuNode, FactoryError> {
    let gpu_id = gpu.unwrap_or(&spec.gpu).clone();
    let gpu_spec = catalog.gpu(&gpu_id).ok_or_else(|| FactoryError::Dangling {
        part: node_part.clone(),
        missing: gpu_id.clone(),
    })?;
    // A card runs at the slower of its own PCIe generation and the slot's.
    let pcie_generation = spec.pcie_generation.min(gpu_spec.pcie_generation);
    let pcie = ScaleUp::Pcie {
        generation: pcie_generation,
        // A generic chassis hangs the cards off the CPU's root ports.
        via: PcieVia::HostBridge,
        peer_to_peer: gpu_spec.peer_to_peer,
    };
    let scale_up = match &spec.scale_up {
        ScaleUpSpec::NvSwitch { generation } => ScaleUp::NvSwitch {
            generation: *generation,
            per_gpu_gbit_s: gpu_spec
                .nvlink_gbit_s
                .ok_or_else(|| FactoryError::Inconsistent {
                    part: node_part.clone(),
                    message: format!("NVSwitch node, but `{gpu_id}` has no NVLink bandwidth"),
                })?,
        },
        ScaleUpSpec::NvLinkBridgePairs => match gpu_spec.nvlink_gbit_s {
            Some(per_gpu) if gpu_spec.nvlink_bridge && spec.gpu_count.is_multiple_of(2) => {
                ScaleUp::NvLinkBridgePairs {
                    per_gpu_gbit_s: per_gpu,
                    pcie_generation,
                    peer_to_peer: gpu_spec.peer_to_peer,
                }
            }
            // A card without a bridge in a bridged chassis: its GPUs meet over PCIe.
            _ => pcie,
        },
        ScaleUpSpec::Pcie => pcie,
        ScaleUpSpec::UnifiedMemory => ScaleUp::UnifiedMemory,
    };
    let nics = match &spec.nic {
        Some(nic) if spec.nic_count > 0 => {
            let nic_spec = catalog.nic(nic).ok_or_else(|| FactoryError::Dangling {
                part: node_part.clone(),
                missing: nic.clone(),
            })?;
            // GPUDirect RDMA needs an RDMA NIC and a GPU that does peer-to-peer (GeForce
            // cards do not); the templates use the same rule.
            let gpudirect = nic_spec.rdma && gpu_spec.peer_to_peer;
            (0..spec.nic_count)
                .map(|_| NicSlot {
                    part: nic.clone(),
                    gpudirect,
                })
                .collect()
        }
        _ => Vec::new(),
    };
    Ok(GpuNode {
        model: node_part.clone(),
        gpu: gpu_id,
        gpu_count: spec.gpu_count,
        scale_up,
        nics,
        domain: None,
    })
}

/// A link both port kinds can carry: technology, rate of one lane, lanes, and a rank
/// (lower is preferred: NVLink, then NIC fabrics, then Thunderbolt, then on-board Ethernet).
struct Candidate {
    tech: LinkTech,
    rate: Bandwidth,
    lanes: u32,
    rank: u8,
}

/// What the two ends' neighbourhoods already carry, for switch-to-switch Ethernet.
#[derive(Clone, Copy)]
struct EthernetHabit {
    roce: bool,
    plain: bool,
}

fn pair_candidate(
    a: PortKind,
    b: PortKind,
    habit: EthernetHabit,
    nvlink: Option<(Bandwidth, u32)>,
) -> Option<Candidate> {
    use PortKind::*;
    let network = |fa: NetFamily, fb: NetFamily, rdma: bool, rate: Bandwidth| {
        if fa.speaks_infiniband() && fb.speaks_infiniband() {
            Some(Candidate {
                tech: LinkTech::InfiniBand,
                rate,
                lanes: 1,
                rank: 1,
            })
        } else if fa.speaks_ethernet() && fb.speaks_ethernet() {
            Some(Candidate {
                tech: if rdma {
                    LinkTech::RoceV2
                } else {
                    LinkTech::Ethernet
                },
                rate,
                lanes: 1,
                rank: if rdma { 2 } else { 3 },
            })
        } else {
            None
        }
    };
    let ethernet = |fam: NetFamily, rate: Bandwidth| {
        fam.speaks_ethernet().then_some(Candidate {
            tech: LinkTech::Ethernet,
            rate,
            lanes: 1,
            rank: 5,
        })
    };
    match (a, b) {
        (
            Nic {
                family: fa,
                rdma: ra,
                rate: sa,
            },
            Nic {
                family: fb,
                rdma: rb,
                rate: sb,
            },
        ) => network(fa, fb, ra && rb, sa.min(sb)),
        (
            Nic {
                family: fn_,
                rdma,
                rate: sn,
            },
            SwitchPort {
                family: fs,
                rate: ss,
            },
        )
        | (
            SwitchPort {
                family: fs,
                rate: ss,
            },
            Nic {
                family: fn_,
                rdma,
                rate: sn,
            },
        ) => network(fn_, fs, rdma, sn.min(ss)),
        (
            SwitchPort {
                family: fa,
                rate: sa,
            },
            SwitchPort {
                family: fb,
                rate: sb,
            },
        ) => {
            let rate = sa.min(sb);
            // Between switches, carry on with what the fabric already runs; a fresh
            // data-centre fabric (100G and up) is taken to be RoCE.
            let rdma = habit.roce || (!habit.plain && rate.gbit_s() >= 100.0);
            network(fa, fb, rdma, rate)
        }
        (Thunderbolt { generation: ga }, Thunderbolt { generation: gb }) => {
            let (tech, gbit) = if ga.min(gb) >= 5 {
                (LinkTech::Thunderbolt5, 80.0)
            } else {
                (LinkTech::Thunderbolt4, 40.0)
            };
            Some(Candidate {
                tech,
                rate: Bandwidth::from_gbit_s(gbit),
                lanes: 1,
                rank: 4,
            })
        }
        (BuiltinEthernet { rate: sa }, BuiltinEthernet { rate: sb }) => Some(Candidate {
            tech: LinkTech::Ethernet,
            rate: sa.min(sb),
            lanes: 1,
            rank: 5,
        }),
        (BuiltinEthernet { rate: se }, SwitchPort { family, rate: ss })
        | (SwitchPort { family, rate: ss }, BuiltinEthernet { rate: se })
        | (
            BuiltinEthernet { rate: se },
            Nic {
                family, rate: ss, ..
            },
        )
        | (
            Nic {
                family, rate: ss, ..
            },
            BuiltinEthernet { rate: se },
        ) => ethernet(family, se.min(ss)),
        (NvLinkUplink, DomainSlot) | (DomainSlot, NvLinkUplink) => {
            nvlink.map(|(rate, lanes)| Candidate {
                tech: LinkTech::NvLink,
                rate,
                lanes,
                rank: 0,
            })
        }
        _ => None,
    }
}

/// The ports of one device that links already use.
fn used_ports(design: &Design, id: DeviceId) -> HashSet<Port> {
    let mut used = HashSet::new();
    for l in design.links_of(id) {
        if l.a.device == id {
            used.insert(l.a.port);
        }
        if l.b.device == id {
            used.insert(l.b.port);
        }
    }
    used
}

/// The first free port of a group, trying `preferred` first (a rail leaf's own NIC).
fn free_port(group: &PortGroup, used: &HashSet<Port>, preferred: Option<Port>) -> Option<Port> {
    if let Some(p) = preferred
        && group.contains(p)
        && !used.contains(&p)
    {
        return Some(p);
    }
    group.ports().find(|p| !used.contains(p))
}

/// How a device is named in a refusal: the part that talks (its NIC, or its model).
fn speaker(device: &Device, groups: &[PortGroup]) -> String {
    match groups
        .iter()
        .find(|g| matches!(g.kind, PortKind::Nic { .. }))
    {
        Some(g) => g.part.to_string(),
        None => match &device.kind {
            DeviceKind::GpuNode(n) => n.model.to_string(),
            DeviceKind::Switch(s) => s.model.to_string(),
            DeviceKind::NvSwitchDomain(d) => d.model.to_string(),
            DeviceKind::Host(h) => h
                .model
                .as_ref()
                .map_or_else(|| device.name.clone(), |m| m.to_string()),
        },
    }
}

fn families(groups: &[PortGroup]) -> String {
    let mut names: Vec<&str> = Vec::new();
    for g in groups {
        for f in g.kind.families() {
            if !names.contains(f) {
                names.push(f);
            }
        }
    }
    match names.as_slice() {
        [] => "nothing".to_string(),
        [one] => (*one).to_string(),
        [init @ .., last] => format!("{} and {last}", init.join(", ")),
    }
}

/// Whether the links of a device already run RoCE or plain Ethernet.
fn ethernet_habit(design: &Design, ids: [DeviceId; 2]) -> EthernetHabit {
    let mut habit = EthernetHabit {
        roce: false,
        plain: false,
    };
    for l in &design.links {
        if ids.iter().any(|&id| l.touches(id)) {
            habit.roce |= l.tech == LinkTech::RoceV2;
            habit.plain |= l.tech == LinkTech::Ethernet;
        }
    }
    habit
}

/// The link a user means when they draw one from `a` to `b`: the first free port on each
/// end, the technology both ends speak, at the slower of the two port speeds, with id
/// `design.next_link_id()`. Refuses with a reason a person can act on.
pub fn default_link(
    design: &Design,
    catalog: &Catalog,
    a: DeviceId,
    b: DeviceId,
) -> Result<Link, String> {
    wished_link(design, catalog, a, b, LinkWish::default())
}

/// A device whose links are all failed: what "fail device" leaves (a what-if marks links, not
/// devices), so a link drawn to it starts failed too. False for a device with no links.
pub fn device_down(design: &Design, id: DeviceId) -> bool {
    let mut links = design.links.iter().filter(|l| l.touches(id)).peekable();
    links.peek().is_some() && links.all(|l| l.state == crate::model::LinkState::Failed)
}

/// What a bulk wiring asks of a link beyond `default_link`'s choice: a given port on end
/// `a` (NIC i for rail i), or one technology (a Thunderbolt 5 mesh).
#[derive(Debug, Clone, Copy, Default, PartialEq)]
pub struct LinkWish {
    pub port_a: Option<Port>,
    pub tech: Option<LinkTech>,
}

/// `default_link` held to `wish`: only port pairs that give the wished technology, and on
/// end `a` only the wished port (when it is free). Refuses with the reason otherwise.
pub fn wished_link(
    design: &Design,
    catalog: &Catalog,
    a: DeviceId,
    b: DeviceId,
    wish: LinkWish,
) -> Result<Link, String> {
    if a == b {
        return Err("a link needs two different devices".to_string());
    }
    let dev_a = design.device(a).ok_or_else(|| format!("no device {a}"))?;
    let dev_b = design.device(b).ok_or_else(|| format!("no device {b}"))?;
    let groups_a = port_groups(catalog, dev_a);
    let groups_b = port_groups(catalog, dev_b);
    for (dev, groups) in [(dev_a, &groups_a), (dev_b, &groups_b)] {
        if groups.is_empty() {
            return Err(format!(
                "{} ({}) has no ports to link: give it a NIC in the inspector",
                dev.name,
                speaker(dev, groups)
            ));
        }
    }

    // NVLink joins a compute tray only to its own domain.
    let nvlink = |node: &Device, domain: &Device| -> Option<(Bandwidth, u32)> {
        let DeviceKind::GpuNode(n) = &node.kind else {
            return None;
        };
        let DeviceKind::NvSwitchDomain(d) = &domain.kind else {
            return None;
        };
        if n.domain != Some(domain.id) {
            return None;
        }
        let per_gpu = catalog
            .domain(&d.model)
            .map(|s| s.per_gpu_gbit_s)
            .or(match n.scale_up {
                ScaleUp::NvSwitch { per_gpu_gbit_s, .. } => Some(per_gpu_gbit_s),
                _ => None,
            })?;
        Some((per_gpu, n.gpu_count.max(1)))
    };
    let nvlink = nvlink(dev_a, dev_b).or_else(|| nvlink(dev_b, dev_a));
    let habit = ethernet_habit(design, [a, b]);

    // Compatible pairs of port groups, best first.
    let mut pairs: Vec<(usize, usize, Candidate)> = Vec::new();
    for (ia, ga) in groups_a.iter().enumerate() {
        for (ib, gb) in groups_b.iter().enumerate() {
            let wished_port = wish.port_a.is_none_or(|p| ga.contains(p));
            if let Some(c) = pair_candidate(ga.kind, gb.kind, habit, nvlink)
                && wished_port
                && wish.tech.is_none_or(|t| t == c.tech)
            {
                pairs.push((ia, ib, c));
            }
        }
    }
    if pairs.is_empty() {
        if let Some(port) = wish.port_a {
            // Name the wished port's part, not every family the device speaks.
            return Err(match groups_a.iter().find(|g| g.contains(port)) {
                None => format!("{} has no {port}", dev_a.name),
                Some(group) => format!(
                    "{} speaks {}, {} only {}",
                    group.part,
                    families(std::slice::from_ref(group)),
                    speaker(dev_b, &groups_b),
                    families(&groups_b)
                ),
            });
        }
        if let Some(tech) = wish.tech {
            return Err(format!(
                "{} and {} have no {} ports to join",
                dev_a.name,
                dev_b.name,
                tech.label()
            ));
        }
        let is_domain = |d: &Device| matches!(d.kind, DeviceKind::NvSwitchDomain(_));
        if is_domain(dev_a) || is_domain(dev_b) {
            let (domain, other) = if is_domain(dev_a) {
                (dev_a, dev_b)
            } else {
                (dev_b, dev_a)
            };
            return Err(format!(
                "{} joins only its own compute trays over NVLink, and {} is not one of them",
                domain.name, other.name
            ));
        }
        return Err(format!(
            "{} speaks {}, {} only {}",
            speaker(dev_a, &groups_a),
            families(&groups_a),
            speaker(dev_b, &groups_b),
            families(&groups_b)
        ));
    }
    pairs.sort_by(|x, y| {
        x.2.rank
            .cmp(&y.2.rank)
            .then(y.2.rate.gbit_s().total_cmp(&x.2.rate.gbit_s()))
    });

    let used_a = used_ports(design, a);
    let used_b = used_ports(design, b);
    // A rail leaf takes the node's NIC of the same rail, if that one is free.
    let rail_of = |d: &Device| d.kind.as_switch().and_then(|s| s.rail);
    let prefer_a = wish.port_a.or(rail_of(dev_b).map(Port::Nic));
    let prefer_b = rail_of(dev_a).map(Port::Nic);
    for (ia, ib, c) in &pairs {
        let (ga, gb) = (&groups_a[*ia], &groups_b[*ib]);
        let port_a = match wish.port_a {
            Some(p) => (!used_a.contains(&p)).then_some(p),
            None => free_port(ga, &used_a, prefer_a),
        };
        if let (Some(pa), Some(pb)) = (port_a, free_port(gb, &used_b, prefer_b)) {
            let mut link = Link::new(Endpoint::new(a, pa), Endpoint::new(b, pb), c.tech, c.rate)
                .with_lanes(c.lanes);
            link.id = design.next_link_id();
            // A device failed in a what-if (every link of it failed) stays down: a cable
            // drawn to it does not bring it back.
            if device_down(design, a) || device_down(design, b) {
                link.state = crate::model::LinkState::Failed;
            }
            return Ok(link);
        }
    }

    // Every compatible pair has a full end: name the full end of the best one.
    let (ia, ib, _) = &pairs[0];
    if let Some(port) = wish.port_a
        && used_a.contains(&port)
    {
        return Err(format!("{}'s {port} is already wired", dev_a.name));
    }
    let (dev, group, used) = if free_port(&groups_a[*ia], &used_a, None).is_none() {
        (dev_a, &groups_a[*ia], &used_a)
    } else {
        (dev_b, &groups_b[*ib], &used_b)
    };
    let in_use = group.ports().filter(|p| used.contains(p)).count();
    Err(format!(
        "{} has no free {} ({in_use} in use)",
        speaker_for_group(dev, group),
        group.kind.noun()
    ))
}

/// The part a full port group belongs to: the NIC for NIC ports, else the device's model.
fn speaker_for_group(device: &Device, group: &PortGroup) -> String {
    match group.kind {
        PortKind::Nic { .. } => group.part.to_string(),
        _ => speaker(device, &[]),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::design::Design;

    fn catalog() -> Catalog {
        Catalog::builtin()
    }

    fn add(design: &mut Design, catalog: &Catalog, part: &str) -> DeviceId {
        let id = design.next_device_id();
        let d = device_from_part(
            catalog,
            &PartId::new(part),
            id,
            default_name(&PartId::new(part), id),
            Pos::default(),
        )
        .unwrap();
        design.insert_device(d);
        id
    }

    #[test]
    fn a_new_device_follows_the_designs_own_names() {
        let catalog = catalog();
        let mut design = Design::new("t");
        let part = PartId::new("hgx-h100");
        // Alone, a server takes the part's name and its number.
        assert_eq!(
            name_for_new(&design, &catalog, &part, design.next_device_id()),
            format!("hgx-h100-{}", design.next_device_id().0)
        );
        for name in ["node-01", "node-02", "node-04", "gpu-box"] {
            let id = add(&mut design, &catalog, "hgx-h100");
            design.device_mut(id).unwrap().name = name.into();
        }
        let leaf = add(&mut design, &catalog, "qm9700");
        design.device_mut(leaf).unwrap().name = "leaf-7".into();
        // Servers: after the highest of the series, in its width.
        let next = design.next_device_id();
        assert_eq!(name_for_new(&design, &catalog, &part, next), "node-05");
        // A card makes a workstation, a GPU machine too.
        assert_eq!(
            name_for_new(&design, &catalog, &PartId::new("rtx-4090"), next),
            "node-05"
        );
        // One leaf is no series: the part's own name.
        let switch = PartId::new("sn5600");
        assert_eq!(
            name_for_new(&design, &catalog, &switch, next),
            format!("sn5600-{}", next.0)
        );
        // A name taken by another kind is skipped.
        design.device_mut(leaf).unwrap().name = "node-05".into();
        assert_eq!(name_for_new(&design, &catalog, &part, next), "node-06");
    }

    fn connect(design: &mut Design, catalog: &Catalog, a: DeviceId, b: DeviceId) -> Link {
        let link = default_link(design, catalog, a, b).unwrap();
        design.insert_link(link.clone());
        link
    }

    /// "Fail device" fails every link of a switch; a server cabled to it afterwards gets a
    /// failed link too, or the what-if would route through a switch that is off.
    #[test]
    fn a_link_drawn_to_a_failed_device_starts_failed() {
        let c = catalog();
        let mut d = Design::new("t");
        let leaf = add(&mut d, &c, "qm9700");
        let a = add(&mut d, &c, "dgx-h100");
        let b = add(&mut d, &c, "dgx-h100");
        assert!(!device_down(&d, leaf), "no links: not down");
        let first = connect(&mut d, &c, a, leaf);
        assert_eq!(first.state, crate::model::LinkState::Up);
        d.link_mut(first.id).unwrap().state = crate::model::LinkState::Failed;
        assert!(device_down(&d, leaf));
        let second = default_link(&d, &c, b, leaf).unwrap();
        assert_eq!(second.state, crate::model::LinkState::Failed);
        // One working link left on the switch: it is up, and so is what is drawn to it.
        d.link_mut(first.id).unwrap().state = crate::model::LinkState::Up;
        assert_eq!(
            default_link(&d, &c, b, leaf).unwrap().state,
            crate::model::LinkState::Up
        );
    }

    #[test]
    fn dgx_h100_is_eight_hopper_gpus_on_nvswitch_with_eight_ndr_nics() {
        let c = catalog();
        let d = device_from_part(
            &c,
            &PartId::new("dgx-h100"),
            DeviceId(7),
            "n".into(),
            Pos::new(1.0, 2.0),
        )
        .unwrap();
        assert_eq!(d.id, DeviceId(7));
        assert_eq!(d.pos, Pos::new(1.0, 2.0));
        let n = d.kind.as_node().unwrap();
        assert_eq!(n.gpu, PartId::new("h100-sxm"));
        assert_eq!(n.gpu_count, 8);
        // NVSwitch gen 3 (Hopper); NVLink 4 gives 900 GB/s both ways, 450 GB/s each way.
        assert_eq!(
            n.scale_up,
            ScaleUp::NvSwitch {
                generation: 3,
                per_gpu_gbit_s: Bandwidth::from_gbyte_s(450.0)
            }
        );
        assert!(n.scale_up.has_nvls());
        assert_eq!(n.nics.len(), 8);
        assert!(
            n.nics
                .iter()
                .all(|s| s.part.as_str() == "cx7-ndr-400" && s.gpudirect)
        );
        assert_eq!(n.domain, None);
    }

    #[test]
    fn macs_have_unified_memory_and_no_nics() {
        let c = catalog();
        let d = device_from_part(
            &c,
            &PartId::new("mac-studio-m3-ultra"),
            DeviceId(0),
            "m".into(),
            Pos::default(),
        )
        .unwrap();
        let n = d.kind.as_node().unwrap();
        assert_eq!(n.scale_up, ScaleUp::UnifiedMemory);
        assert_eq!(n.gpu_count, 1);
        assert!(n.nics.is_empty());
    }

    #[test]
    fn a_geforce_card_becomes_a_workstation_on_pcie_without_p2p() {
        let c = catalog();
        let d = device_from_part(
            &c,
            &PartId::new("rtx-5090"),
            DeviceId(0),
            "w".into(),
            Pos::default(),
        )
        .unwrap();
        let n = d.kind.as_node().unwrap();
        assert_eq!(n.model.as_str(), "workstation");
        assert_eq!(n.gpu.as_str(), "rtx-5090");
        assert_eq!(n.gpu_count, 4);
        // Card gen 5 in a gen 4 chassis runs gen 4; GeForce has no peer-to-peer.
        assert_eq!(
            n.scale_up,
            ScaleUp::Pcie {
                generation: 4,
                via: PcieVia::HostBridge,
                peer_to_peer: false
            }
        );
    }

    #[test]
    fn modules_nics_and_cables_are_refused_with_a_hint() {
        let c = catalog();
        let refuse = |part: &str| {
            device_from_part(
                &c,
                &PartId::new(part),
                DeviceId(0),
                "x".into(),
                Pos::default(),
            )
            .unwrap_err()
            .to_string()
        };
        let sxm = refuse("h100-sxm");
        assert!(sxm.contains("SXM") && sxm.contains("dgx-h100"), "{sxm}");
        let apple = refuse("m2-ultra");
        assert!(apple.contains("mac-studio-m2-ultra"), "{apple}");
        // GB10 only comes with its CPU and their shared memory (the DGX Spark).
        let gb10 = refuse("gb10");
        assert!(
            gb10.contains("shares one chip and its memory with a CPU")
                && gb10.contains("dgx-spark"),
            "{gb10}"
        );
        assert!(refuse("cx7-ndr-400").contains("NIC"));
        assert!(refuse("tb4").contains("cable"));
        assert!(refuse("no-such-part").contains("no part"));
    }

    #[test]
    fn a_switch_is_a_leaf_with_the_parts_features() {
        let c = catalog();
        let d = device_from_part(
            &c,
            &PartId::new("qm9700"),
            DeviceId(3),
            "s".into(),
            Pos::default(),
        )
        .unwrap();
        let s = d.kind.as_switch().unwrap();
        assert_eq!(s.role, SwitchRole::Leaf);
        assert!(s.features.in_network_reduction && s.features.adaptive_routing);
        let e = device_from_part(
            &c,
            &PartId::new("crs317-16x10g"),
            DeviceId(3),
            "s".into(),
            Pos::default(),
        )
        .unwrap();
        let f = e.kind.as_switch().unwrap().features;
        assert!(!f.in_network_reduction && !f.adaptive_routing);
    }

    #[test]
    fn an_nvl72_drop_brings_eighteen_trays_of_four_gpus() {
        let c = catalog();
        let devices = devices_from_part(
            &c,
            &PartId::new("gb200-nvl72"),
            DeviceId(10),
            "nvl".into(),
            Pos::new(0.0, 0.0),
        )
        .unwrap();
        assert_eq!(devices.len(), 19);
        assert!(matches!(devices[0].kind, DeviceKind::NvSwitchDomain(_)));
        let gpus: u32 = devices
            .iter()
            .filter_map(|d| d.kind.as_node())
            .inspect(|n| assert_eq!(n.domain, Some(DeviceId(10))))
            .map(|n| n.gpu_count)
            .sum();
        assert_eq!(gpus, 72);
        assert_eq!(devices[18].id, DeviceId(28));
        // Two columns of nine, centred on the drop point: x = ±60, y from -288 to 288.
        assert_eq!(devices[1].pos, Pos::new(-60.0, -288.0));
        assert_eq!(devices[18].pos, Pos::new(60.0, 288.0));
    }

    #[test]
    fn dgx_to_infiniband_leaf_is_ndr_on_nic_zero() {
        let c = catalog();
        let mut d = Design::new("t");
        let node = add(&mut d, &c, "dgx-h100");
        let leaf = add(&mut d, &c, "qm9700");
        let first = connect(&mut d, &c, node, leaf);
        assert_eq!(first.tech, LinkTech::InfiniBand);
        assert_eq!(first.rate_gbit_s, Bandwidth::from_gbit_s(400.0));
        assert_eq!(
            (first.a.port, first.b.port),
            (Port::Nic(0), Port::Switch(0))
        );
        assert_eq!(first.id, crate::model::LinkId(0));
        let second = connect(&mut d, &c, leaf, node);
        assert_eq!(
            (second.a.port, second.b.port),
            (Port::Switch(1), Port::Nic(1))
        );
        assert_eq!(second.id, crate::model::LinkId(1));
    }

    #[test]
    fn a_rail_leaf_takes_the_nic_of_its_rail() {
        let c = catalog();
        let mut d = Design::new("t");
        let node = add(&mut d, &c, "dgx-h100");
        let leaf = add(&mut d, &c, "qm9700");
        if let Some(dev) = d.device_mut(leaf)
            && let DeviceKind::Switch(s) = &mut dev.kind
        {
            s.rail = Some(5);
        }
        let l = connect(&mut d, &c, node, leaf);
        assert_eq!(l.a.port, Port::Nic(5));
    }

    /// An HGX H100 (ConnectX-7 NDR by default) dropped beside two on ConnectX-7 400GbE takes
    /// their NICs, all eight, with GPUDirect as the Ethernet NIC and the H100 allow; a Mac
    /// (no NICs) and a node already on the design's NIC keep their own.
    #[test]
    fn a_new_node_takes_the_designs_nics_where_its_chassis_does() {
        let c = catalog();
        let mut d = Design::new("roce");
        for _ in 0..2 {
            let id = add(&mut d, &c, "hgx-h100");
            if let Some(DeviceKind::GpuNode(n)) = d.device_mut(id).map(|dev| &mut dev.kind) {
                for slot in &mut n.nics {
                    slot.part = PartId::new("cx7-400gbe");
                }
            }
        }
        let new = |part: &str| {
            let id = d.next_device_id();
            device_from_part(&c, &PartId::new(part), id, "new".into(), Pos::default()).unwrap()
        };
        let mut hgx = new("hgx-h100");
        let said = match_design_nics(&c, &d, &mut hgx).expect("changed");
        assert!(said.starts_with("with the design's "), "{said}");
        let DeviceKind::GpuNode(n) = &hgx.kind else {
            panic!("a node");
        };
        assert_eq!(n.nics.len(), 8);
        assert!(
            n.nics
                .iter()
                .all(|s| s.part == PartId::new("cx7-400gbe") && s.gpudirect)
        );
        let mut mac = new("mac-studio-m3-ultra");
        assert_eq!(match_design_nics(&c, &d, &mut mac), None);
        assert_eq!(match_design_nics(&c, &d, &mut hgx), None);
    }

    #[test]
    fn two_macs_use_thunderbolt_at_the_older_generation() {
        let c = catalog();
        let mut d = Design::new("t");
        let m2 = add(&mut d, &c, "mac-studio-m2-ultra");
        let m3 = add(&mut d, &c, "mac-studio-m3-ultra");
        let m3b = add(&mut d, &c, "mac-studio-m3-ultra");
        let mixed = connect(&mut d, &c, m2, m3);
        assert_eq!(mixed.tech, LinkTech::Thunderbolt4);
        assert_eq!(mixed.rate_gbit_s, Bandwidth::from_gbit_s(40.0));
        assert_eq!(
            (mixed.a.port, mixed.b.port),
            (Port::Thunderbolt(0), Port::Thunderbolt(0))
        );
        let tb5 = connect(&mut d, &c, m3, m3b);
        assert_eq!(tb5.tech, LinkTech::Thunderbolt5);
        assert_eq!(tb5.rate_gbit_s, Bandwidth::from_gbit_s(80.0));
        assert_eq!(tb5.a.port, Port::Thunderbolt(1));
    }

    #[test]
    fn a_full_mac_says_how_many_ports_are_in_use() {
        let c = catalog();
        let mut d = Design::new("t");
        let hub = add(&mut d, &c, "mac-studio-m2-ultra");
        for _ in 0..6 {
            let other = add(&mut d, &c, "mac-studio-m2-ultra");
            connect(&mut d, &c, hub, other);
        }
        let last = add(&mut d, &c, "mac-studio-m2-ultra");
        // Thunderbolt is full; the on-board 10GbE port is the fallback.
        let eth = connect(&mut d, &c, hub, last);
        assert_eq!(eth.tech, LinkTech::Ethernet);
        assert_eq!(eth.a.port, Port::Ethernet(0));
        let one_more = add(&mut d, &c, "mac-studio-m2-ultra");
        assert_eq!(
            default_link(&d, &c, hub, one_more).unwrap_err(),
            "mac-studio-m2-ultra has no free Thunderbolt port (6 in use)"
        );
    }

    #[test]
    fn infiniband_switch_refuses_an_ethernet_nic() {
        let c = catalog();
        let mut d = Design::new("t");
        let ws = add(&mut d, &c, "workstation");
        if let Some(dev) = d.device_mut(ws)
            && let DeviceKind::GpuNode(n) = &mut dev.kind
        {
            n.nics = vec![NicSlot {
                part: PartId::new("x710-10gbe"),
                gpudirect: false,
            }];
        }
        let ib = add(&mut d, &c, "qm9700");
        assert_eq!(
            default_link(&d, &c, ib, ws).unwrap_err(),
            "qm9700 speaks InfiniBand, x710-10gbe only Ethernet"
        );
    }

    #[test]
    fn ethernet_nics_pick_roce_with_rdma_and_plain_ethernet_without() {
        let c = catalog();
        let mut d = Design::new("t");
        let sw = add(&mut d, &c, "crs317-16x10g");
        let ws = add(&mut d, &c, "workstation");
        // No NIC: the on-board 10GbE port at 10 Gb/s.
        let onboard = connect(&mut d, &c, ws, sw);
        assert_eq!(onboard.tech, LinkTech::Ethernet);
        assert_eq!(onboard.a.port, Port::Ethernet(0));
        assert_eq!(onboard.rate_gbit_s, Bandwidth::from_gbit_s(10.0));

        let spectrum = add(&mut d, &c, "sn5600");
        let node = add(&mut d, &c, "dgx-h100");
        if let Some(dev) = d.device_mut(node)
            && let DeviceKind::GpuNode(n) = &mut dev.kind
        {
            for slot in &mut n.nics {
                slot.part = PartId::new("cx7-400gbe");
            }
        }
        let roce = connect(&mut d, &c, node, spectrum);
        assert_eq!(roce.tech, LinkTech::RoceV2);
        // The 800G switch port against a 400G NIC: the slower, 400.
        assert_eq!(roce.rate_gbit_s, Bandwidth::from_gbit_s(400.0));
    }

    #[test]
    fn switch_to_switch_follows_the_fabric() {
        let c = catalog();
        let mut d = Design::new("t");
        let leaf = add(&mut d, &c, "crs317-16x10g");
        let core = add(&mut d, &c, "crs317-16x10g");
        let l = connect(&mut d, &c, leaf, core);
        assert_eq!(l.tech, LinkTech::Ethernet);
        let a = add(&mut d, &c, "sn5600");
        let b = add(&mut d, &c, "sn5600");
        let fast = connect(&mut d, &c, a, b);
        assert_eq!(fast.tech, LinkTech::RoceV2);
        assert_eq!(fast.rate_gbit_s, Bandwidth::from_gbit_s(800.0));
        let ib1 = add(&mut d, &c, "qm9700");
        let ib2 = add(&mut d, &c, "qm8700");
        let ib = connect(&mut d, &c, ib1, ib2);
        assert_eq!(ib.tech, LinkTech::InfiniBand);
        assert_eq!(ib.rate_gbit_s, Bandwidth::from_gbit_s(200.0));
    }

    #[test]
    fn a_tray_joins_its_own_domain_over_nvlink_only() {
        let c = catalog();
        let mut d = Design::new("t");
        for dev in devices_from_part(
            &c,
            &PartId::new("gb200-nvl72"),
            DeviceId(0),
            "nvl".into(),
            Pos::default(),
        )
        .unwrap()
        {
            d.insert_device(dev);
        }
        let l = connect(&mut d, &c, DeviceId(3), DeviceId(0));
        assert_eq!(l.tech, LinkTech::NvLink);
        // Four GPUs at 7200 Gb/s each: 28.8 Tb/s.
        assert_eq!(l.lanes, 4);
        assert_eq!(l.nominal_capacity(), Bandwidth::from_gbit_s(28_800.0));
        assert_eq!((l.a.port, l.b.port), (Port::NvLink, Port::Slot(0)));

        let stranger = add(&mut d, &c, "gb200-compute-tray");
        let err = default_link(&d, &c, stranger, DeviceId(0)).unwrap_err();
        assert!(err.contains("own compute trays"), "{err}");
        assert_eq!(
            default_link(&d, &c, DeviceId(1), DeviceId(1)).unwrap_err(),
            "a link needs two different devices"
        );
    }
}
