//! Resolving catalog parts for a template: node, GPU, NIC, switch and direct cable, with the
//! template's defaults, kind checks, and the link technology and rate they agree on.

use super::{GenerateError, TemplateSpec};
use crate::model::catalog::{
    CableMedium, CableSpec, GpuSpec, NetFamily, NicSpec, NodeSpec, ScaleUpSpec, SwitchSpec,
};
use crate::model::{
    Bandwidth, Catalog, DeviceId, DeviceKind, GpuNode, LinkTech, NicSlot, Part, PartId, PartSpec,
    PcieVia, ScaleUp, SwitchFeatures, Transport,
};

/// More than this many GPU nodes is refused: beyond any real cluster, and it keeps a typo
/// (`--nodes 4000000000`) from exhausting memory.
pub(super) const MAX_NODES: u32 = 262_144;
/// NICs or GPUs per node above this are surely a typo.
const MAX_PER_NODE: u32 = 64;

/// Rack budget used to group nodes into racks: space and power of a typical AI rack.
const RACK_UNITS: u32 = 42;
const RACK_POWER_W: f64 = 42_000.0;

pub(super) fn infeasible(message: impl Into<String>) -> GenerateError {
    GenerateError::Infeasible(message.into())
}

fn part<'a>(catalog: &'a Catalog, id: &PartId) -> Result<&'a Part, GenerateError> {
    catalog
        .get(id)
        .ok_or_else(|| GenerateError::unknown_part(catalog, id))
}

fn wrong_kind(id: &PartId, expected: &'static str) -> GenerateError {
    GenerateError::WrongKind {
        id: id.clone(),
        expected,
    }
}

pub(super) fn node_part<'a>(
    catalog: &'a Catalog,
    id: &PartId,
) -> Result<(&'a Part, &'a NodeSpec), GenerateError> {
    let p = part(catalog, id)?;
    match &p.spec {
        PartSpec::Node(n) => Ok((p, n)),
        _ => Err(wrong_kind(id, "node")),
    }
}

pub(super) fn gpu_spec<'a>(
    catalog: &'a Catalog,
    id: &PartId,
) -> Result<&'a GpuSpec, GenerateError> {
    match &part(catalog, id)?.spec {
        PartSpec::Gpu(g) => Ok(g),
        _ => Err(wrong_kind(id, "GPU")),
    }
}

pub(super) fn nic_spec<'a>(
    catalog: &'a Catalog,
    id: &PartId,
) -> Result<&'a NicSpec, GenerateError> {
    match &part(catalog, id)?.spec {
        PartSpec::Nic(n) => Ok(n),
        _ => Err(wrong_kind(id, "NIC")),
    }
}

pub(super) fn switch_spec<'a>(
    catalog: &'a Catalog,
    id: &PartId,
) -> Result<&'a SwitchSpec, GenerateError> {
    match &part(catalog, id)?.spec {
        PartSpec::Switch(s) => Ok(s),
        _ => Err(wrong_kind(id, "switch")),
    }
}

pub(super) fn cable_spec<'a>(
    catalog: &'a Catalog,
    id: &PartId,
) -> Result<&'a CableSpec, GenerateError> {
    match &part(catalog, id)?.spec {
        PartSpec::Cable(c) => Ok(c),
        _ => Err(wrong_kind(id, "cable")),
    }
}

/// Number of GPU nodes asked for, checked against the bounds of the template.
pub(super) fn node_count(
    spec: &TemplateSpec,
    default: u32,
    min: u32,
) -> Result<u32, GenerateError> {
    let n = spec.nodes.unwrap_or(default);
    let what = spec.template.cli_name();
    if n < min {
        return Err(infeasible(format!(
            "`{what}` needs at least {min} node{}; got {n}",
            if min == 1 { "" } else { "s" }
        )));
    }
    if n > MAX_NODES {
        return Err(infeasible(format!(
            "{n} nodes is more than railyard generates ({MAX_NODES})"
        )));
    }
    Ok(n)
}

/// Refuses a design over the design-wide GPU limit before any device is built, so an
/// absurd request fails at once instead of exhausting memory first.
pub(super) fn check_gpu_total(node: &NodeProfile, nodes: u32) -> Result<(), GenerateError> {
    let total = node.gpu_total(nodes);
    if total > crate::model::validate::MAX_GPUS {
        return Err(infeasible(format!(
            "{nodes} nodes × {} GPUs is {total} GPUs, over the limit of {} per design",
            node.gpu_count,
            crate::model::validate::MAX_GPUS
        )));
    }
    Ok(())
}

/// A node part with its GPUs, scale-up and scale-out NICs settled.
#[derive(Debug, Clone)]
pub(super) struct NodeProfile {
    pub part: PartId,
    pub spec: NodeSpec,
    pub power_w: f64,
    pub gpu: PartId,
    pub gpu_count: u32,
    pub scale_up: ScaleUp,
    /// The scale-out NIC part and its spec, if the node has NICs.
    pub nic: Option<(PartId, NicSpec)>,
    pub nic_count: u32,
    /// GPUDirect RDMA on the NIC slots: datacenter GPUs have it, GeForce cards do not (the
    /// same cards that lack PCIe peer-to-peer), and it needs an RDMA NIC.
    pub gpudirect: bool,
    /// Why the NICs are not the node's own, for the design's notes: a switch named without
    /// a NIC, of a network the node's own NIC does not speak.
    pub nic_note: Option<String>,
}

impl NodeProfile {
    /// Resolves the node part (spec's or `default_node`) and the GPU, NIC and scale-up that
    /// go with it: the spec's GPU, else the chassis's own default (a workstation's RTX 4090s,
    /// the PCIe server's L40S).
    pub fn resolve(
        spec: &TemplateSpec,
        catalog: &Catalog,
        node_id: &PartId,
    ) -> Result<NodeProfile, GenerateError> {
        let (node_part, node) = node_part(catalog, node_id)?;

        let gpu = spec.gpu.clone().unwrap_or_else(|| node.gpu.clone());
        let gpu_spec = gpu_spec(catalog, &gpu)?;
        if !node.any_gpu && gpu != node.gpu {
            return Err(infeasible(format!(
                "`{node_id}` comes with {} × `{}`; another GPU needs a chassis that takes any GPU, such as `workstation`",
                node.gpu_count, node.gpu
            )));
        }
        let gpu_count = spec.gpus_per_node.unwrap_or(node.gpu_count);
        if !node.any_gpu && gpu_count != node.gpu_count {
            return Err(infeasible(format!(
                "`{node_id}` has {} GPUs; a different count needs a chassis that takes any GPU, such as `workstation`",
                node.gpu_count
            )));
        }
        if gpu_count == 0 || gpu_count > MAX_PER_NODE {
            return Err(infeasible(format!(
                "GPUs per node must be between 1 and {MAX_PER_NODE}; got {gpu_count}"
            )));
        }

        let pcie_generation = spec
            .pcie_generation
            .unwrap_or_else(|| node.pcie_generation.min(gpu_spec.pcie_generation));
        if !(1..=7).contains(&pcie_generation) {
            return Err(infeasible(format!(
                "PCIe generation must be between 1 and 7; got {pcie_generation}"
            )));
        }
        let scale_up = if spec.nvlink_bridge {
            bridge_pairs(&gpu, gpu_spec, gpu_count, pcie_generation)?
        } else {
            match &node.scale_up {
                ScaleUpSpec::NvSwitch { generation } => ScaleUp::NvSwitch {
                    generation: *generation,
                    per_gpu_gbit_s: gpu_spec.nvlink_gbit_s.unwrap_or(Bandwidth::ZERO),
                },
                ScaleUpSpec::NvLinkBridgePairs => {
                    bridge_pairs(&gpu, gpu_spec, gpu_count, pcie_generation)?
                }
                ScaleUpSpec::Pcie => ScaleUp::Pcie {
                    generation: pcie_generation,
                    // A generic chassis hangs the cards off the CPU's root ports.
                    via: PcieVia::HostBridge,
                    peer_to_peer: gpu_spec.peer_to_peer,
                },
                ScaleUpSpec::UnifiedMemory => ScaleUp::UnifiedMemory,
            }
        };

        let mut nic_note = None;
        let nic_id = match (&spec.nic, &node.nic) {
            (Some(id), _) => Some(id.clone()),
            (None, Some(own)) => match nic_for_switch(spec, catalog, node_id, node, own)? {
                Some(other) => {
                    nic_note = Some(format!(
                        "NICs: `{other}` in place of the node's own `{own}`, which `{}` does not \
                         speak.",
                        spec.switch.as_ref().map_or("", PartId::as_str)
                    ));
                    Some(other)
                }
                None => Some(own.clone()),
            },
            (None, None) => None,
        };
        let nic = match &nic_id {
            Some(id) => Some((id.clone(), nic_spec(catalog, id)?.clone())),
            None => None,
        };
        let nic_count = match (&nic, spec.nics_per_node) {
            (None, Some(n)) if n > 0 => {
                return Err(infeasible(format!(
                    "`{node_id}` has no default scale-out NIC; choose a NIC (--nic on the command line)"
                )));
            }
            (None, _) => 0,
            (Some(_), Some(n)) => n,
            // A NIC named for a node that has none by default: one per node.
            (Some(_), None) if spec.nic.is_some() && node.nic_count == 0 => 1,
            (Some(_), None) => node.nic_count,
        };
        if nic_count > MAX_PER_NODE {
            return Err(infeasible(format!(
                "NICs per node must be at most {MAX_PER_NODE}; got {nic_count}"
            )));
        }
        let nic = if nic_count == 0 { None } else { nic };
        let gpudirect = gpu_spec.peer_to_peer && nic.as_ref().is_some_and(|(_, n)| n.rdma);

        Ok(NodeProfile {
            part: node_id.clone(),
            spec: node.clone(),
            power_w: node_part.power_w.0,
            gpu,
            gpu_count,
            scale_up,
            nic,
            nic_count,
            gpudirect,
            nic_note,
        })
    }

    /// The node device, optionally a member of an NVLink domain.
    pub fn device_kind(&self, domain: Option<DeviceId>) -> DeviceKind {
        let nics = match &self.nic {
            Some((id, _)) => (0..self.nic_count)
                .map(|_| NicSlot {
                    part: id.clone(),
                    gpudirect: self.gpudirect,
                })
                .collect(),
            None => Vec::new(),
        };
        DeviceKind::GpuNode(GpuNode {
            model: self.part.clone(),
            gpu: self.gpu.clone(),
            gpu_count: self.gpu_count,
            scale_up: self.scale_up.clone(),
            nics,
            domain,
        })
    }

    /// The NIC, or a clear refusal for templates that need one.
    pub fn require_nic(&self) -> Result<(&PartId, &NicSpec), GenerateError> {
        match &self.nic {
            Some((id, spec)) => Ok((id, spec)),
            None => Err(infeasible(format!(
                "`{}` has no scale-out NIC; choose a NIC (--nic on the command line)",
                self.part
            ))),
        }
    }

    /// How many of these nodes share a rack, by space and by power.
    pub fn nodes_per_rack(&self) -> u32 {
        // A part with no rack height given counts as a small box: eight to a rack.
        let by_space = RACK_UNITS.checked_div(self.spec.rack_units).unwrap_or(8);
        let by_power = if self.power_w > 0.0 {
            (RACK_POWER_W / self.power_w).floor() as u32
        } else {
            u32::MAX
        };
        by_space.min(by_power).max(1)
    }

    pub fn gpu_total(&self, nodes: u32) -> u64 {
        u64::from(nodes) * u64::from(self.gpu_count)
    }
}

/// The NIC a node takes when a switch is named and no NIC is: its own where the two share a
/// network; else the catalog's NIC of the switch's network at the same port rate (RDMA where
/// its own has it) that the chassis takes and has slots for, first by id, so that `--switch sn5600` on a DGX
/// gives it ConnectX-7 400GbE rather than a refusal. None keeps its own (the switch plan
/// then says what is wrong); an error when no such NIC exists.
fn nic_for_switch(
    spec: &TemplateSpec,
    catalog: &Catalog,
    node_id: &PartId,
    node: &NodeSpec,
    own: &PartId,
) -> Result<Option<PartId>, GenerateError> {
    let (Some(switch_id), Some(own_spec)) = (&spec.switch, catalog.nic(own)) else {
        return Ok(None);
    };
    let Some(switch) = catalog.switch(switch_id) else {
        return Ok(None);
    };
    let speaks = |family: NetFamily| {
        (family.speaks_infiniband() && switch.family.speaks_infiniband())
            || (family.speaks_ethernet() && switch.family.speaks_ethernet())
    };
    if speaks(own_spec.family) {
        return Ok(None);
    }
    let found = catalog
        .parts()
        .filter_map(|p| match &p.spec {
            PartSpec::Nic(n) => Some((&p.id, n)),
            _ => None,
        })
        .filter(|(id, n)| {
            speaks(n.family)
                && n.port_gbit_s == own_spec.port_gbit_s
                && (n.rdma || !own_spec.rdma)
                && node.takes_nic(id, n)
                && node.has_slots_for(if n.builtin {
                    0
                } else {
                    spec.nics_per_node.unwrap_or(node.nic_count) as usize
                })
        })
        .map(|(id, _)| id.clone())
        .min_by(|a, b| a.as_str().cmp(b.as_str()));
    match found {
        Some(id) => Ok(Some(id)),
        None => Err(infeasible(format!(
            "`{node_id}`'s own NIC `{own}` does not speak `{switch_id}`'s network, and the \
             catalog has no NIC of that network at {} for it; choose a NIC (--nic on the command line)",
            own_spec.port_gbit_s
        ))),
    }
}

fn bridge_pairs(
    gpu: &PartId,
    gpu_spec: &GpuSpec,
    gpu_count: u32,
    pcie_generation: u8,
) -> Result<ScaleUp, GenerateError> {
    if !gpu_spec.nvlink_bridge {
        return Err(infeasible(format!("`{gpu}` takes no NVLink bridge")));
    }
    let Some(per_gpu) = gpu_spec.nvlink_gbit_s else {
        return Err(infeasible(format!(
            "the catalog gives no NVLink bandwidth for `{gpu}`"
        )));
    };
    if !gpu_count.is_multiple_of(2) {
        return Err(infeasible(format!(
            "NVLink bridges join GPUs in pairs; {gpu_count} GPUs per node is odd"
        )));
    }
    Ok(ScaleUp::NvLinkBridgePairs {
        per_gpu_gbit_s: per_gpu,
        pcie_generation,
        peer_to_peer: gpu_spec.peer_to_peer,
    })
}

/// The wire a template lays: technology, rate and transport of every link of one kind.
#[derive(Debug, Clone, PartialEq)]
pub(super) struct Wire {
    pub tech: LinkTech,
    pub rate: Bandwidth,
    pub transport: Transport,
    pub cable: Option<PartId>,
}

/// A switch model as the template deploys it, and the wires to and between switches.
#[derive(Debug, Clone)]
pub(super) struct SwitchPlan {
    pub part: PartId,
    pub breakout: u32,
    /// Ports after breakout.
    pub radix: u32,
    pub features: SwitchFeatures,
    /// Node NIC to switch.
    pub node_wire: Wire,
    /// Switch to switch, at the switch's port rate after breakout.
    pub fabric_wire: Wire,
    /// Remarks for the design notes (speed mismatches, breakout).
    pub remarks: Vec<String>,
}

/// Which network the NIC and switch share. A VPI part speaks both; then InfiniBand unless
/// a transport was asked for, since a transport is an Ethernet notion.
fn common_family(
    nic_id: &PartId,
    nic: NetFamily,
    other_id: &PartId,
    other: NetFamily,
    transport: Option<Transport>,
) -> Result<NetFamily, GenerateError> {
    let ib = nic.speaks_infiniband() && other.speaks_infiniband();
    let eth = nic.speaks_ethernet() && other.speaks_ethernet();
    match (ib, eth) {
        (true, true) if transport.is_none() => Ok(NetFamily::InfiniBand),
        (_, true) => Ok(NetFamily::Ethernet),
        (true, false) if matches!(transport, Some(Transport::Tcp | Transport::Efa)) => {
            Err(infeasible(format!(
                "{} transport needs Ethernet, but `{nic_id}` and `{other_id}` share only \
                 InfiniBand",
                transport.map_or("", Transport::label)
            )))
        }
        (true, false) => Ok(NetFamily::InfiniBand),
        (false, false) => Err(infeasible(format!(
            "`{nic_id}` ({}) and `{other_id}` ({}) share no network family",
            family_label(nic),
            family_label(other)
        ))),
    }
}

fn family_label(f: NetFamily) -> &'static str {
    match f {
        NetFamily::InfiniBand => "InfiniBand",
        NetFamily::Ethernet => "Ethernet",
        NetFamily::Both => "InfiniBand or Ethernet",
    }
}

/// Technology and transport for a family: RoCEv2 for Ethernet with RDMA, plain Ethernet
/// (TCP) otherwise.
fn tech_for(
    family: NetFamily,
    nic_id: &PartId,
    nic: &NicSpec,
    transport: Option<Transport>,
) -> Result<(LinkTech, Transport), GenerateError> {
    if family == NetFamily::InfiniBand {
        return Ok((LinkTech::InfiniBand, Transport::Rdma));
    }
    let transport = transport.unwrap_or(if nic.rdma {
        Transport::Rdma
    } else {
        Transport::Tcp
    });
    match transport {
        Transport::Rdma if !nic.rdma => Err(infeasible(format!(
            "`{nic_id}` does not do RDMA; use TCP transport or an RDMA NIC"
        ))),
        Transport::Rdma => Ok((LinkTech::RoceV2, Transport::Rdma)),
        Transport::Tcp => Ok((LinkTech::Ethernet, Transport::Tcp)),
        // EFA is its own adapter on plain Ethernet, not RoCE.
        Transport::Efa => Ok((LinkTech::Ethernet, Transport::Efa)),
    }
}

/// Deploys `switch_id` for NICs of `nic`: picks the breakout that brings the switch ports
/// down to the NIC speed, and the technology both ends speak.
pub(super) fn plan_switch(
    catalog: &Catalog,
    switch_id: &PartId,
    nic_id: &PartId,
    nic: &NicSpec,
    transport: Option<Transport>,
) -> Result<SwitchPlan, GenerateError> {
    let sw = switch_spec(catalog, switch_id)?;
    let family = common_family(nic_id, nic.family, switch_id, sw.family, transport)?;
    let (tech, transport) = tech_for(family, nic_id, nic, transport)?;

    let nic_rate = nic.port_gbit_s;
    let port_rate = sw.port_gbit_s;
    let mut remarks = Vec::new();
    if !(nic_rate.gbit_s() > 0.0 && port_rate.gbit_s() > 0.0) {
        return Err(infeasible(format!(
            "`{nic_id}` or `{switch_id}` has no port speed in the catalog"
        )));
    }
    // Split fast switch ports as far as the NIC speed allows (800G as 2×400G for 400G NICs).
    let fits = (port_rate / nic_rate + 1e-9).floor();
    let breakout = if fits >= 2.0 {
        (fits as u32).min(sw.max_breakout).max(1)
    } else {
        1
    };
    let lane = port_rate / f64::from(breakout);
    let node_rate = nic_rate.min(lane);
    if breakout > 1 {
        remarks.push(format!(
            "`{switch_id}` ports split {breakout} ways: {} ports at {lane}",
            sw.ports * breakout
        ));
    }
    if lane.gbit_s() + 1e-9 < nic_rate.gbit_s() {
        remarks.push(format!(
            "the NICs' {nic_rate} ports run at the switch's {lane}"
        ));
    } else if lane.gbit_s() > nic_rate.gbit_s() + 1e-9 {
        remarks.push(format!("switch ports at {lane} carry the NICs' {nic_rate}"));
    }
    let radix = sw.ports.saturating_mul(breakout);
    let features = SwitchFeatures {
        in_network_reduction: sw.in_network_reduction,
        adaptive_routing: sw.adaptive_routing,
        // PFC/ECN: what RoCE needs to behave; InfiniBand is lossless by design.
        lossless: tech == LinkTech::RoceV2,
    };
    Ok(SwitchPlan {
        part: switch_id.clone(),
        breakout,
        radix,
        features,
        node_wire: Wire {
            tech,
            rate: node_rate,
            transport,
            cable: None,
        },
        fabric_wire: Wire {
            tech,
            rate: lane,
            transport,
            cable: None,
        },
        remarks,
    })
}

/// Whether a switch should be preferred for a fabric or a single-switch star.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum SwitchUse {
    /// Leaf-spine fabrics: the largest radix at the NIC speed.
    Fabric,
    /// One switch: the smallest that holds this many ports.
    Single { ports: u32 },
}

/// The switch the user named, or a sensible one from the catalog for this NIC.
pub(super) fn choose_switch(
    spec: &TemplateSpec,
    catalog: &Catalog,
    nic_id: &PartId,
    nic: &NicSpec,
    usage: SwitchUse,
) -> Result<SwitchPlan, GenerateError> {
    if let Some(id) = &spec.switch {
        return plan_switch(catalog, id, nic_id, nic, spec.transport);
    }
    let wants_ib = nic.family.speaks_infiniband() && spec.transport.is_none();
    let preferred: &[&str] = if wants_ib {
        &["qm9700"]
    } else {
        &["sn5600", "tomahawk5-64x800"]
    };
    if usage == SwitchUse::Fabric {
        for id in preferred {
            let id = PartId::new(*id);
            if catalog.switch(&id).is_none() {
                continue;
            }
            if let Ok(plan) = plan_switch(catalog, &id, nic_id, nic, spec.transport)
                && plan.node_wire.rate == nic.port_gbit_s
            {
                return Ok(plan);
            }
        }
    }
    // Otherwise any switch that runs the NIC at full speed, scored for the use.
    let mut best: Option<(SwitchPlan, (u32, u32))> = None;
    for part in catalog.parts() {
        if !matches!(part.spec, PartSpec::Switch(_)) {
            continue;
        }
        let Ok(plan) = plan_switch(catalog, &part.id, nic_id, nic, spec.transport) else {
            continue;
        };
        if plan.node_wire.rate != nic.port_gbit_s {
            continue;
        }
        // An exact speed match first (no wasted switch bandwidth), then by radix.
        let exact = u32::from(plan.fabric_wire.rate != plan.node_wire.rate);
        let score = match usage {
            SwitchUse::Fabric => (exact, u32::MAX - plan.radix),
            SwitchUse::Single { ports } => {
                if plan.radix < ports {
                    continue;
                }
                (exact, plan.radix)
            }
        };
        if best.as_ref().is_none_or(|(_, s)| score < *s) {
            best = Some((plan, score));
        }
    }
    best.map(|(plan, _)| plan).ok_or_else(|| {
        let need = match usage {
            SwitchUse::Single { ports } => format!(" with {ports} ports"),
            SwitchUse::Fabric => String::new(),
        };
        infeasible(format!(
            "no switch in the catalog{need} runs `{nic_id}` at {} ({}); name one with --switch",
            nic.port_gbit_s,
            family_label(nic.family)
        ))
    })
}

/// Direct node-to-node cabling: which node ports the cables use and what they carry.
#[derive(Debug, Clone)]
pub(super) struct DirectPlan {
    pub wire: Wire,
    /// First node port used and how many the node has of this kind.
    pub first_port: u32,
    pub ports: u32,
    /// "Thunderbolt", "NIC" or "built-in Ethernet", for messages.
    pub port_kind: &'static str,
}

/// Plans direct cables with `link_id` (a Thunderbolt cable, a DAC or an AOC) between nodes.
pub(super) fn plan_direct(
    catalog: &Catalog,
    link_id: &PartId,
    node: &NodeProfile,
    transport: Option<Transport>,
) -> Result<DirectPlan, GenerateError> {
    let cable = cable_spec(catalog, link_id)?;
    let nic_ports = node.nic_count;
    match cable.medium {
        CableMedium::Thunderbolt => {
            let tb_ports = node.spec.thunderbolt_ports;
            let Some(node_gen) = node.spec.thunderbolt_generation.filter(|_| tb_ports > 0) else {
                return Err(infeasible(format!(
                    "`{}` has no Thunderbolt ports; join it with a DAC or AOC (--link)",
                    node.part
                )));
            };
            // Cable and port both limit the generation: a TB5 cable on TB4 ports runs TB4.
            let cable_gen = if cable.speed_gbit_s.gbit_s() >= 80.0 {
                5
            } else {
                4
            };
            let generation = node_gen.min(cable_gen);
            let (tech, port_rate) = if generation >= 5 {
                (LinkTech::Thunderbolt5, Bandwidth::from_gbit_s(80.0))
            } else {
                (LinkTech::Thunderbolt4, Bandwidth::from_gbit_s(40.0))
            };
            let transport = transport.unwrap_or(Transport::Tcp);
            if transport == Transport::Efa {
                return Err(infeasible(
                    "EFA is an AWS Ethernet adapter; Thunderbolt links carry TCP or RDMA",
                ));
            }
            if transport == Transport::Rdma && tech != LinkTech::Thunderbolt5 {
                return Err(infeasible(
                    "RDMA over Thunderbolt needs Thunderbolt 5 ports and cables",
                ));
            }
            Ok(DirectPlan {
                wire: Wire {
                    tech,
                    rate: port_rate.min(cable.speed_gbit_s),
                    transport,
                    cable: Some(link_id.clone()),
                },
                first_port: nic_ports,
                ports: tb_ports,
                port_kind: "Thunderbolt",
            })
        }
        CableMedium::Dac | CableMedium::Aoc | CableMedium::TwistedPair => {
            // A DAC or AOC takes the NICs' cages if the node has NICs, else its on-board
            // Ethernet; twisted pair takes on-board RJ-45 jacks, and only those.
            let twisted = cable.medium == CableMedium::TwistedPair;
            let nic = node.nic.as_ref().filter(|_| !twisted);
            let (family, rate, first_port, ports, port_kind, rdma) = match nic {
                Some((_, nic)) => (nic.family, nic.port_gbit_s, 0, nic_ports, "NIC", nic.rdma),
                None => {
                    let eth = node.spec.builtin_ethernet_ports;
                    let Some(speed) = node.spec.builtin_ethernet_gbit_s.filter(|_| eth > 0) else {
                        return Err(infeasible(format!(
                            "`{}` has neither NICs nor built-in Ethernet for `{link_id}`; choose a NIC (--nic on the command line)",
                            node.part
                        )));
                    };
                    if twisted != node.spec.builtin_ethernet_rj45 {
                        return Err(infeasible(if twisted {
                            format!(
                                "`{link_id}` is twisted pair for RJ-45 jacks, and `{}`'s built-in Ethernet is not one",
                                node.part
                            )
                        } else {
                            format!(
                                "`{}`'s built-in Ethernet is an RJ-45 jack, which takes twisted pair (`cat6a`), not `{link_id}`",
                                node.part
                            )
                        }));
                    }
                    (
                        NetFamily::Ethernet,
                        speed,
                        nic_ports + node.spec.thunderbolt_ports,
                        eth,
                        "built-in Ethernet",
                        false,
                    )
                }
            };
            let nic_id = node
                .nic
                .as_ref()
                .map_or_else(|| node.part.clone(), |(id, _)| id.clone());
            let family = common_family(&nic_id, family, link_id, cable.family, transport)?;
            let (tech, transport) = if family == NetFamily::InfiniBand {
                (LinkTech::InfiniBand, Transport::Rdma)
            } else {
                let nic_for_tech = NicSpec {
                    family,
                    ports,
                    port_gbit_s: rate,
                    rdma,
                    pcie_generation: 0,
                    pcie_lanes: 16,
                    builtin: false,
                };
                tech_for(family, &nic_id, &nic_for_tech, transport)?
            };
            Ok(DirectPlan {
                wire: Wire {
                    tech,
                    rate: rate.min(cable.speed_gbit_s),
                    transport,
                    cable: Some(link_id.clone()),
                },
                first_port,
                ports,
                port_kind,
            })
        }
        CableMedium::Transceiver | CableMedium::NvLinkBridge => Err(infeasible(format!(
            "`{link_id}` is not a cable that joins two nodes; use a Thunderbolt cable, a DAC, an AOC or twisted pair"
        ))),
    }
}

/// The Thunderbolt cable part that fits a node, from its port generation.
pub(super) fn default_direct_cable(node: &NodeSpec) -> &'static str {
    match node.thunderbolt_generation {
        Some(g) if g >= 5 => "tb5",
        _ => "tb4",
    }
}
