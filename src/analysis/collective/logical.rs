//! The ring a ring collective runs on the drawn GPUs, for the designer's logical view: which
//! GPU passes to which, and over what. Built by the same rule the cost model's ring plan uses
//! (`plan::ring`): GPUs in fabric order, a domain's GPUs one after another, and with several
//! domains, ring r entering each domain at the GPU that NIC r serves (a rail ring).

use super::CollectiveError;
use super::fabric::{Fabric, GpuInterconnect};
use super::plan::segments;
use super::workspace::Workspace;
use crate::model::{Catalog, Design, DeviceId, LinkTech};

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
                RingHop::Network(nic_link_tech(design, node_a.device, nic))
            }
        })
        .collect();
    RingOrder { stops, hops, rings }
}

/// The technology of the link on NIC `nic` of `node`, or of any network link of the node
/// when that NIC has none (a node wired by its built-in ports).
fn nic_link_tech(design: &Design, node: DeviceId, nic: u32) -> Option<LinkTech> {
    let ends = |l: &&crate::model::Link| {
        [(l.a, l.b), (l.b, l.a)]
            .into_iter()
            .find(|(own, _)| own.device == node)
            .map(|(own, _)| own.port)
    };
    let on_node: Vec<_> = design
        .links
        .iter()
        .filter_map(|l| ends(&l).map(|port| (port, l.tech)))
        .collect();
    on_node
        .iter()
        .find(|(port, _)| port.nic() == Some(nic))
        .or_else(|| {
            on_node
                .iter()
                .find(|(_, tech)| tech.is_network() || tech.is_thunderbolt())
        })
        .map(|&(_, tech)| tech)
}
