//! The ring a ring collective runs on the drawn GPUs, for the designer's logical view: which
//! GPU passes to which, and over what. Built by the same rule the cost model's ring plan uses
//! (`plan::ring`): GPUs in fabric order, a domain's GPUs one after another, and with several
//! domains, ring r entering each domain at the GPU that NIC r serves (a rail ring).

use super::CollectiveError;
use super::fabric::{Fabric, GpuInterconnect};
use super::plan::segments;
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
    let workspace = Workspace::default();
    let mut fab = workspace.build_fabric(design, catalog)?;
    let order = ring_of(&fab, design);
    workspace.keep_fabric(&mut fab);
    Ok(order)
}

fn ring_of(fab: &Fabric, design: &Design) -> RingOrder {
    let group: Vec<u32> = (0..fab.gpus.len() as u32).collect();
    let segs = segments(fab, &group);
    let crosses = segs.len() > 1;
    let rings = if crosses {
        super::plan::nic_rings(fab, &group)
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
                RingHop::ScaleUp(match node_a.interconnect {
                    GpuInterconnect::NvSwitch { .. } => ScaleUpPath::NvSwitch,
                    GpuInterconnect::BridgePairs => ScaleUpPath::NvLinkBridge,
                    GpuInterconnect::Pcie if node_a.p2p => ScaleUpPath::PciePeerToPeer,
                    GpuInterconnect::Pcie => ScaleUpPath::HostMemory,
                    GpuInterconnect::Unified => ScaleUpPath::SharedMemory,
                })
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
