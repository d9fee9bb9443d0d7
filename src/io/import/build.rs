//! A design from devices and links named in a file: each device gets its catalog part
//! (named by a `part` attribute, or by its own name: `dgx-h100`, `qm9700-3`) or becomes a
//! placeholder the checks name; devices without positions are placed by tier as the
//! templates place them (GPU servers at the bottom, leaves above, spines above those);
//! each link takes the first free port of its technology on each end, by the ports the
//! catalog gives the part. A link that finds no such port is refused with its line, never
//! dropped.

use super::ImportError;
use crate::generate::{SPACING, row_y, spread};
use crate::io::link_colors::device_tier;
use crate::model::device::HostRole;
use crate::model::factory::device_from_part;
use crate::model::ports::{PortKind, port_groups};
use crate::model::validate::validate;
use crate::model::{
    Bandwidth, Catalog, Design, Device, DeviceId, DeviceKind, Endpoint, Host, Link, LinkTech,
    NicSlot, PartCategory, PartId, Port, Pos, Switch, SwitchFeatures, SwitchRole,
};
use std::collections::{HashMap, HashSet};

/// The part id a placeholder gets when the file names none.
pub const UNKNOWN_PART: &str = "unknown";

/// A device as a file names it.
#[derive(Debug, Clone, Default)]
pub(super) struct NamedDevice {
    /// How the file's links refer to it: a DOT node id, a draw.io cell id, a CSV name.
    pub key: String,
    pub name: String,
    pub part: Option<String>,
    pub pos: Option<Pos>,
    /// 0 servers, 1 leaves, 2 spines, 3 cores, when the file says.
    pub tier: Option<u8>,
    pub line: usize,
}

/// A link as a file names it: its ends by device key.
#[derive(Debug, Clone)]
pub(super) struct NamedLink {
    pub a: String,
    pub b: String,
    pub tech: LinkTech,
    pub rate: Bandwidth,
    pub lanes: u32,
    pub line: usize,
}

/// Collects what a file names, then builds the design in `finish`.
pub(super) struct Importer<'c> {
    catalog: &'c Catalog,
    origin: String,
    /// What the file recorded exactly (a draw.io file from our export); named devices
    /// and links are added to it.
    design: Design,
    recorded: HashMap<String, DeviceId>,
    devices: Vec<NamedDevice>,
    index: HashMap<String, usize>,
    links: Vec<NamedLink>,
}

impl<'c> Importer<'c> {
    pub fn new(catalog: &'c Catalog, origin: &str, design: Design) -> Self {
        Self {
            catalog,
            origin: origin.to_string(),
            design,
            recorded: HashMap::new(),
            devices: Vec::new(),
            index: HashMap::new(),
            links: Vec::new(),
        }
    }

    /// A device already in the design that links may name by `key`.
    pub fn recorded(&mut self, key: &str, id: DeviceId) {
        self.recorded.insert(key.to_string(), id);
    }

    /// Adds a device; a second statement for the same key adds what the first lacked
    /// (DOT lets a node be declared twice).
    pub fn device(&mut self, d: NamedDevice) {
        if self.recorded.contains_key(&d.key) {
            return;
        }
        match self.index.get(&d.key) {
            Some(&i) => {
                let old = &mut self.devices[i];
                if d.name != d.key {
                    old.name = d.name;
                }
                old.part = d.part.or(old.part.take());
                old.pos = d.pos.or(old.pos);
                old.tier = d.tier.or(old.tier);
            }
            None => {
                self.index.insert(d.key.clone(), self.devices.len());
                self.devices.push(d);
            }
        }
    }

    pub fn link(&mut self, link: NamedLink) {
        for (key, line) in [(link.a.clone(), link.line), (link.b.clone(), link.line)] {
            if !self.recorded.contains_key(&key) && !self.index.contains_key(&key) {
                self.device(NamedDevice {
                    name: key.clone(),
                    key,
                    line,
                    ..NamedDevice::default()
                });
            }
        }
        self.links.push(link);
    }

    fn line_error(&self, line: usize, message: String) -> ImportError {
        ImportError::Line {
            origin: self.origin.clone(),
            line,
            message,
        }
    }

    /// Builds the design: parts, tiers, devices, positions, then links and their ports.
    pub fn finish(mut self) -> Result<Design, ImportError> {
        let parts = self
            .devices
            .iter()
            .map(|d| self.resolve_part(d))
            .collect::<Result<Vec<_>, _>>()?;
        let tiers = self.tiers(&parts);
        let mut ids: HashMap<String, DeviceId> = self.recorded.clone();
        let mut unplaced: Vec<(DeviceId, u8)> = Vec::new();
        for ((named, part), tier) in self.devices.iter().zip(&parts).zip(&tiers) {
            let id = self.design.next_device_id();
            let pos = named.pos.unwrap_or_default();
            let mut device = match part {
                Ok(part) => device_from_part(self.catalog, part, id, named.name.clone(), pos)
                    .map_err(|e| self.line_error(named.line, format!("{}: {e}", named.name)))?,
                Err(given) => placeholder(id, named.name.clone(), pos, given, *tier),
            };
            if let DeviceKind::Switch(s) = &mut device.kind {
                s.role = role_of_tier(*tier);
            }
            if named.pos.is_none() {
                unplaced.push((id, *tier));
            }
            ids.insert(named.key.clone(), id);
            self.design.insert_device(device);
        }
        place_by_tier(&mut self.design, &unplaced);

        let mut used: HashMap<DeviceId, HashSet<Port>> = HashMap::new();
        for l in &self.design.links {
            used.entry(l.a.device).or_default().insert(l.a.port);
            used.entry(l.b.device).or_default().insert(l.b.port);
        }
        for named in &self.links {
            let (Some(&a), Some(&b)) = (ids.get(&named.a), ids.get(&named.b)) else {
                return Err(self.line_error(named.line, "a link end names no device".into()));
            };
            if a == b {
                return Err(
                    self.line_error(named.line, format!("a link from `{}` to itself", named.a))
                );
            }
            let mut end = |id: DeviceId| -> Result<Endpoint, ImportError> {
                let device = self
                    .design
                    .device(id)
                    .ok_or_else(|| self.line_error(named.line, format!("no device {id}")))?;
                let taken = used.entry(id).or_default();
                let port = free_port(self.catalog, device, named.tech, taken)
                    .map_err(|why| self.line_error(named.line, why))?;
                taken.insert(port);
                Ok(Endpoint::new(id, port))
            };
            let (end_a, end_b) = (end(a)?, end(b)?);
            for end in [end_a, end_b] {
                give_placeholder_its_nic(self.catalog, &mut self.design, end);
            }
            let link = Link::new(end_a, end_b, named.tech, named.rate).with_lanes(named.lanes);
            self.design.add_link(link);
        }

        self.design.imported_from = Some(self.origin.clone());
        if let Err(problems) = validate(&self.design) {
            let text: Vec<String> = problems.iter().map(ToString::to_string).collect();
            return Err(ImportError::File {
                origin: self.origin,
                message: text.join("; "),
            });
        }
        Ok(self.design)
    }

    /// The catalog part a device names (by a `part` attribute, else by its name or its
    /// name less a `-N` suffix), or `Err` with the part a placeholder should carry.
    fn resolve_part(&self, d: &NamedDevice) -> Result<Result<PartId, String>, ImportError> {
        let found = match &d.part {
            Some(part) => self.catalog.get_str(part),
            None => self.catalog.get_str(&d.name).or_else(|| {
                let (stem, number) = d.name.rsplit_once('-')?;
                number.parse::<u32>().ok()?;
                self.catalog.get_str(stem)
            }),
        };
        let Some(part) = found else {
            return Ok(Err(d.part.clone().unwrap_or_else(|| UNKNOWN_PART.into())));
        };
        match part.category() {
            PartCategory::Nic | PartCategory::Cable => Err(self.line_error(
                d.line,
                format!(
                    "`{}`: part `{}` is a {}, not a device",
                    d.name,
                    part.id,
                    part.category().label()
                ),
            )),
            _ => Ok(Ok(part.id.clone())),
        }
    }

    /// Each named device's tier: what the file says, else what the part is (servers 0),
    /// else what the name says (`spine-1`), else from its neighbours (a switch next to a
    /// server is a leaf, one next to a leaf only a spine; an unknown part below a switch
    /// is a server).
    fn tiers(&self, parts: &[Result<PartId, String>]) -> Vec<u8> {
        let mut tiers: Vec<Option<u8>> = self
            .devices
            .iter()
            .zip(parts)
            .map(|(d, part)| {
                d.tier.or_else(|| {
                    let category = part
                        .as_ref()
                        .ok()
                        .and_then(|p| self.catalog.get(p))
                        .map(|p| p.category());
                    match category {
                        Some(PartCategory::Node | PartCategory::Gpu | PartCategory::Domain) => {
                            Some(0)
                        }
                        _ => tier_from_name(&d.name),
                    }
                })
            })
            .collect();
        let is_switch = |i: usize| {
            parts[i]
                .as_ref()
                .ok()
                .and_then(|p| self.catalog.get(p))
                .is_some_and(|p| p.category() == PartCategory::Switch)
        };
        let neighbour_tiers = |tiers: &[Option<u8>], i: usize| -> Vec<u8> {
            let key = &self.devices[i].key;
            self.links
                .iter()
                .filter_map(|l| {
                    let other = if &l.a == key {
                        &l.b
                    } else if &l.b == key {
                        &l.a
                    } else {
                        return None;
                    };
                    match self.index.get(other) {
                        Some(&j) => tiers[j],
                        None => self
                            .recorded
                            .get(other)
                            .and_then(|id| self.design.device(*id))
                            .and_then(device_tier),
                    }
                })
                .collect()
        };
        for i in 0..tiers.len() {
            if tiers[i].is_some() {
                continue;
            }
            let around = neighbour_tiers(&tiers, i);
            tiers[i] = Some(if is_switch(i) {
                if around.contains(&0) || !around.contains(&1) {
                    1
                } else {
                    2
                }
            } else {
                around.iter().min().map_or(0, |t| t.saturating_sub(1))
            });
        }
        tiers.into_iter().map(|t| t.unwrap_or(0)).collect()
    }
}

/// A tier from words in a name: `spine-1`, `leaf03`, `tor-a`, `gpu-node-7`.
fn tier_from_name(name: &str) -> Option<u8> {
    let name = name.to_lowercase();
    let words: Vec<&str> = name
        .split(|c: char| !c.is_alphabetic())
        .filter(|w| !w.is_empty())
        .collect();
    let has = |starts: &[&str]| {
        words
            .iter()
            .any(|w| starts.iter().any(|s| w.starts_with(s)))
    };
    if has(&["core", "super"]) {
        Some(3)
    } else if has(&["spine"]) {
        Some(2)
    } else if has(&["leaf", "tor"]) {
        Some(1)
    } else if has(&["node", "gpu", "server", "host", "dgx", "hgx", "storage"]) {
        Some(0)
    } else {
        None
    }
}

fn role_of_tier(tier: u8) -> SwitchRole {
    match tier {
        0 | 1 => SwitchRole::Leaf,
        2 => SwitchRole::Spine,
        _ => SwitchRole::Core,
    }
}

/// A device whose part the catalog lacks: a host for a server, a switch above it. It has
/// no ports (the catalog gives them); the checks name it and its part.
fn placeholder(id: DeviceId, name: String, pos: Pos, part: &str, tier: u8) -> Device {
    let part = PartId::new(part);
    let kind = if tier == 0 {
        DeviceKind::Host(Host {
            role: HostRole::Cpu,
            model: Some(part),
            nics: Vec::new(),
        })
    } else {
        DeviceKind::Switch(Switch {
            model: part,
            role: role_of_tier(tier),
            breakout: 1,
            rail: None,
            features: SwitchFeatures::default(),
        })
    };
    Device {
        id,
        name,
        pos,
        group: None,
        kind,
    }
}

/// Rows by tier, the top tier at the top, each row spread over the widest one as the
/// templates spread switches over their nodes.
fn place_by_tier(design: &mut Design, devices: &[(DeviceId, u8)]) {
    let Some(top) = devices.iter().map(|(_, t)| *t).max() else {
        return;
    };
    let mut rows: Vec<Vec<DeviceId>> = vec![Vec::new(); usize::from(top) + 1];
    for (id, tier) in devices {
        rows[usize::from(*tier)].push(*id);
    }
    let widest = rows.iter().map(Vec::len).max().unwrap_or(1).max(1);
    let span = (widest - 1) as f32 * SPACING;
    for (tier, row) in rows.iter().enumerate() {
        let y = row_y(usize::from(top) - tier);
        for (id, x) in row.iter().zip(spread(row.len(), 0.0, span)) {
            if let Some(d) = design.device_mut(*id) {
                d.pos = Pos::new(x.round() + 0.0, y);
            }
        }
    }
}

/// Whether a run of ports carries `tech`.
fn carries(kind: PortKind, tech: LinkTech) -> bool {
    match tech {
        LinkTech::NvLink => matches!(kind, PortKind::NvLinkUplink | PortKind::DomainSlot),
        LinkTech::Thunderbolt4 | LinkTech::Thunderbolt5 => {
            matches!(kind, PortKind::Thunderbolt { .. })
        }
        LinkTech::Ethernet | LinkTech::RoceV2 => match kind {
            PortKind::Nic { family, .. } | PortKind::SwitchPort { family, .. } => {
                family.speaks_ethernet()
            }
            PortKind::BuiltinEthernet { .. } => true,
            _ => false,
        },
        LinkTech::InfiniBand => match kind {
            PortKind::Nic { family, .. } | PortKind::SwitchPort { family, .. } => {
                family.speaks_infiniband()
            }
            _ => false,
        },
        LinkTech::NvLinkBridge | LinkTech::Pcie => false,
    }
}

/// The first free port of `device` that carries `tech`. A placeholder, whose part the
/// catalog lacks, takes the next port of its kind (Thunderbolt for Thunderbolt links, a NIC
/// for other network links; the checks name the part); a known
/// part without a free port of the technology refuses the link with the reason.
fn free_port(
    catalog: &Catalog,
    device: &Device,
    tech: LinkTech,
    taken: &HashSet<Port>,
) -> Result<Port, String> {
    if let (DeviceKind::GpuNode(node), LinkTech::NvLinkBridge | LinkTech::Pcie) =
        (&device.kind, tech)
    {
        return (0..node.gpu_count)
            .map(Port::Gpu)
            .find(|p| !taken.contains(p))
            .ok_or_else(|| {
                format!(
                    "`{}` has no free GPU connector for {}",
                    device.name,
                    tech.label()
                )
            });
    }
    let groups = port_groups(catalog, device);
    if groups.is_empty() && is_placeholder(catalog, device) {
        let next = |make: fn(u32) -> Port| {
            (0..u32::MAX)
                .map(make)
                .find(|p| !taken.contains(p))
                .unwrap_or(make(0))
        };
        return Ok(match device.kind {
            DeviceKind::Switch(_) => next(Port::Switch),
            DeviceKind::NvSwitchDomain(_) => next(Port::Slot),
            // A Mac's Thunderbolt cable goes to a Thunderbolt port, not to a NIC.
            DeviceKind::GpuNode(_) | DeviceKind::Host(_)
                if matches!(tech, LinkTech::Thunderbolt4 | LinkTech::Thunderbolt5) =>
            {
                next(Port::Thunderbolt)
            }
            DeviceKind::GpuNode(_) | DeviceKind::Host(_) => next(Port::Nic),
        });
    }
    let fitting: Vec<_> = groups.iter().filter(|g| carries(g.kind, tech)).collect();
    if fitting.is_empty() {
        return Err(format!(
            "`{}` ({}) has no {} port",
            device.name,
            device.kind.model_part().map_or("no part", PartId::as_str),
            tech.label()
        ));
    }
    fitting
        .iter()
        .flat_map(|g| g.ports())
        .find(|p| !taken.contains(p))
        .ok_or_else(|| {
            let count: u32 = fitting.iter().map(|g| g.count).sum();
            format!(
                "`{}` ({}) has no free {} port: all {count} are taken by earlier links",
                device.name,
                device.kind.model_part().map_or("no part", PartId::as_str),
                tech.label()
            )
        })
}

/// A placeholder's link on NIC slot k gets the slot: the design stays whole (no link on a
/// NIC the device lacks), and the NIC carries the placeholder's own unknown part, which
/// the checks name with it until the user picks both.
fn give_placeholder_its_nic(catalog: &Catalog, design: &mut Design, end: Endpoint) {
    let Port::Nic(slot) = end.port else {
        return;
    };
    let Some(device) = design.device_mut(end.device) else {
        return;
    };
    if !is_placeholder(catalog, device) {
        return;
    }
    let part = device
        .kind
        .model_part()
        .cloned()
        .unwrap_or_else(|| PartId::new(UNKNOWN_PART));
    let nics = match &mut device.kind {
        DeviceKind::GpuNode(n) => &mut n.nics,
        DeviceKind::Host(h) => &mut h.nics,
        _ => return,
    };
    while nics.len() <= slot as usize {
        nics.push(NicSlot {
            part: part.clone(),
            gpudirect: false,
        });
    }
}

fn is_placeholder(catalog: &Catalog, device: &Device) -> bool {
    device
        .kind
        .model_part()
        .is_none_or(|m| catalog.get(m).is_none())
}
