//! How a collective runs on the drawn GPUs, for the designer's logical view, built by the
//! same rules the cost model's plans use:
//! - the ring (`plan::ring`): which GPU passes to which, and over what. GPUs in fabric order,
//!   a domain's GPUs one after another, and with several domains, ring r entering each
//!   domain at the GPU that NIC r serves (a rail ring);
//! - the double binary trees between domains (`plan::tree`), with a chain inside each;
//! - the in-switch groups: the NVSwitch domains that reduce with NVLS, and the switches that
//!   reduce with SHARP.

use super::CollectiveError;
use super::fabric::{Fabric, GpuInterconnect};
use super::plan::{double_tree, segments};
use super::workspace::Workspace;
use crate::model::{Catalog, Design, DeviceId, LinkTech};
use std::collections::HashMap;

/// One GPU on the ring: its node and its index inside the node.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct RingStop {
    pub node: DeviceId,
    pub gpu: u32,
}

/// What a hop of the ring goes over.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum RingHop {
    /// Inside one scale-up domain: NVSwitch, NVLink bridge, PCIe (peer to peer or through
    /// host memory) or one chip's shared memory.
    ScaleUp(ScaleUpPath),
    /// Between domains, over the network link of the leaving GPU's NIC (None where the
    /// node's NIC has no link drawn).
    Network(Option<LinkTech>),
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ScaleUpPath {
    NvSwitch,
    NvLinkBridge,
    PciePeerToPeer,
    HostMemory,
    SharedMemory,
}

impl ScaleUpPath {
    pub fn label(self) -> &'static str {
        match self {
            ScaleUpPath::NvSwitch => "NVLink (NVSwitch)",
            ScaleUpPath::NvLinkBridge => "NVLink bridge",
            ScaleUpPath::PciePeerToPeer => "PCIe peer to peer",
            ScaleUpPath::HostMemory => "PCIe through host memory",
            ScaleUpPath::SharedMemory => "shared memory",
        }
    }
}

/// Ring 0 of the design's ring collective; `rings` says how many run side by side (one per
/// NIC when the ring crosses domains), each the same shape entering domains at another GPU.
#[derive(Debug, Clone, PartialEq)]
pub struct RingOrder {
    pub stops: Vec<RingStop>,
    /// `hops[i]` goes from `stops[i]` to the next stop (the last one back to the first).
    pub hops: Vec<RingHop>,
    pub rings: u32,
}

/// The ring over every GPU of the design.
pub fn ring_order(design: &Design, catalog: &Catalog) -> Result<RingOrder, CollectiveError> {
    with_fabric(design, catalog, |fab, group| ring_of(fab, group, design))
}

/// Builds the design's fabric and hands it to `f` with every GPU, in fabric order.
fn with_fabric<T>(
    design: &Design,
    catalog: &Catalog,
    f: impl FnOnce(&Fabric, &[u32]) -> T,
) -> Result<T, CollectiveError> {
    let fab = Workspace::default().build_fabric(design, catalog)?;
    let group: Vec<u32> = (0..fab.gpus.len() as u32).collect();
    Ok(f(&fab, &group))
}

fn ring_of(fab: &Fabric, group: &[u32], design: &Design) -> RingOrder {
    let segs = segments(fab, group);
    let crosses = segs.len() > 1;
    let rings = if crosses {
        super::plan::nic_rings(fab, group)
    } else {
        1
    };
    let mut seq: Vec<u32> = Vec::with_capacity(group.len());
    for s in &segs {
        let start = if crosses {
            s.gpus
                .iter()
                .position(|&g| fab.gpus[g as usize].nic == Some(0))
                .unwrap_or(0)
        } else {
            0
        };
        seq.extend(s.gpus[start..].iter().chain(&s.gpus[..start]));
    }
    let stop = |g: u32| {
        let gpu = &fab.gpus[g as usize];
        RingStop {
            node: fab.nodes[gpu.node as usize].device,
            gpu: gpu.local,
        }
    };
    let stops: Vec<RingStop> = seq.iter().map(|&g| stop(g)).collect();
    let node_links = NodeLinks::of(design);
    let hops = (0..seq.len())
        .map(|i| {
            let (a, b) = (seq[i], seq[(i + 1) % seq.len()]);
            let node_a = &fab.nodes[fab.gpus[a as usize].node as usize];
            if fab.domain_of_gpu(a) == fab.domain_of_gpu(b) {
                RingHop::ScaleUp(scale_up_path(node_a.interconnect, node_a.p2p))
            } else {
                let nic = fab.gpus[a as usize].nic.unwrap_or(0);
                RingHop::Network(node_links.tech(node_a.device, nic))
            }
        })
        .collect();
    RingOrder { stops, hops, rings }
}

/// What each node's network links are, found in one pass over the links: per (node, NIC)
/// the technology of the link on that NIC, and per node that of any network or Thunderbolt
/// link (for a node wired by its built-in ports).
#[derive(Default)]
struct NodeLinks {
    on_nic: HashMap<(DeviceId, u32), LinkTech>,
    any: HashMap<DeviceId, LinkTech>,
}

impl NodeLinks {
    fn of(design: &Design) -> NodeLinks {
        let mut out = NodeLinks::default();
        for l in &design.links {
            for end in [l.a, l.b] {
                if let Some(nic) = end.port.nic() {
                    out.on_nic.entry((end.device, nic)).or_insert(l.tech);
                }
                if l.tech.is_network() || l.tech.is_thunderbolt() {
                    out.any.entry(end.device).or_insert(l.tech);
                }
            }
        }
        out
    }

    /// The technology of the link on NIC `nic` of `node`, else of any of its network links.
    fn tech(&self, node: DeviceId, nic: u32) -> Option<LinkTech> {
        self.on_nic
            .get(&(node, nic))
            .or_else(|| self.any.get(&node))
            .copied()
    }
}

/// One domain of the trees: an NVSwitch domain, or a node on its own.
#[derive(Debug, Clone, PartialEq)]
pub struct TreeDomain {
    /// Its nodes, in fabric order.
    pub nodes: Vec<DeviceId>,
    pub gpus: u32,
    /// What its chain of GPUs goes over (None with one GPU).
    pub chain: Option<ScaleUpPath>,
    /// The technology of its network link (of NIC 0), where one is drawn.
    pub network: Option<LinkTech>,
}

/// NCCL's double binary trees over the design's domains: tree 1 is tree 0 shifted by one
/// domain, so a leaf of one is an inner domain of the other. `edges[t]` are (parent, child)
/// indices into `domains`; `channels` pairs of trees run side by side, one per NIC.
#[derive(Debug, Clone, PartialEq)]
pub struct DoubleTree {
    pub domains: Vec<TreeDomain>,
    pub edges: [Vec<(u32, u32)>; 2],
    pub channels: u32,
}

/// The double binary trees over every GPU of the design.
pub fn double_trees(design: &Design, catalog: &Catalog) -> Result<DoubleTree, CollectiveError> {
    with_fabric(design, catalog, |fab, group| trees_of(fab, group, design))
}

fn trees_of(fab: &Fabric, group: &[u32], design: &Design) -> DoubleTree {
    let segs = segments(fab, group);
    let node_links = NodeLinks::of(design);
    let domains = segs
        .iter()
        .map(|s| {
            let nodes = nodes_of(fab, s.gpus);
            let first = &fab.nodes[fab.gpus[s.gpus[0] as usize].node as usize];
            TreeDomain {
                gpus: s.gpus.len() as u32,
                chain: (s.gpus.len() > 1).then(|| scale_up_path(first.interconnect, first.p2p)),
                network: node_links.tech(first.device, 0),
                nodes,
            }
        })
        .collect();
    let channels = if segs.len() > 1 {
        segs.iter()
            .map(|s| super::plan::nic_rings(fab, s.gpus))
            .min()
            .unwrap_or(1)
    } else {
        1
    };
    let edges = double_tree(segs.len() as u32);
    DoubleTree {
        domains,
        edges,
        channels,
    }
}

/// Switches that reduce in the network, and NVSwitch domains that reduce with NVLS.
#[derive(Debug, Clone, PartialEq)]
pub struct InSwitchGroups {
    /// Per NVSwitch domain whose switch and GPUs run NVLS: its nodes and GPUs.
    pub nvls: Vec<(Vec<DeviceId>, u32)>,
    /// Switches whose part reduces in the network (SHARP).
    pub sharp_switches: Vec<DeviceId>,
    /// Whether the design sets in-network reduction up (NCCL's CollNet is off by default).
    pub sharp_enabled: bool,
}

/// The design's in-switch reduction groups.
pub fn in_switch_groups(
    design: &Design,
    catalog: &Catalog,
) -> Result<InSwitchGroups, CollectiveError> {
    with_fabric(design, catalog, |fab, group| InSwitchGroups {
        nvls: segments(fab, group)
            .iter()
            .filter(|s| super::plan::all_nvls(fab, s.gpus))
            .map(|s| (nodes_of(fab, s.gpus), s.gpus.len() as u32))
            .collect(),
        sharp_switches: fab
            .in_network
            .iter()
            .zip(&fab.device_ids)
            .filter(|(reduces, _)| **reduces)
            .map(|(_, &id)| id)
            .collect(),
        sharp_enabled: design.sharp_enabled,
    })
}

/// Which in-switch reductions the design's hardware offers (what `Library::assumes` names).
pub fn in_switch_hardware(
    design: &Design,
    catalog: &Catalog,
) -> Result<super::InSwitchHardware, CollectiveError> {
    with_fabric(design, catalog, |fab, _| fab.in_switch_hardware())
}

/// The nodes of a run of GPUs, in order, each once.
fn nodes_of(fab: &Fabric, gpus: &[u32]) -> Vec<DeviceId> {
    let mut nodes: Vec<DeviceId> = Vec::new();
    for &g in gpus {
        let d = fab.nodes[fab.gpus[g as usize].node as usize].device;
        if nodes.last() != Some(&d) {
            nodes.push(d);
        }
    }
    nodes
}

fn scale_up_path(interconnect: GpuInterconnect, p2p: bool) -> ScaleUpPath {
    match interconnect {
        GpuInterconnect::NvSwitch { .. } => ScaleUpPath::NvSwitch,
        GpuInterconnect::BridgePairs => ScaleUpPath::NvLinkBridge,
        GpuInterconnect::Pcie if p2p => ScaleUpPath::PciePeerToPeer,
        GpuInterconnect::Pcie => ScaleUpPath::HostMemory,
        GpuInterconnect::Unified => ScaleUpPath::SharedMemory,
    }
}
