//! The fabric as the collective model sees it: every direction of every link is an *arc* with
//! a usable capacity, and so is each GPU's scale-up port, each GPU's and NIC's PCIe path.
//! Switches (and GPU nodes cabled only to each other) form the routing graph; its vertices are
//! grouped into *twin classes* (same neighbours), which is what makes large symmetric fabrics
//! cheap: distances are computed once per class on the quotient graph.
//!
//! `build` makes it (the links' arcs, then the GPU nodes' side and the routing graph side by
//! side), `node_part` the GPU nodes' side, `routing_graph` the graph and its twin classes,
//! `scratch` the lists a build reuses, `calibration` the design's fitted figures on top.

mod build;
mod calibration;
mod hasher;
mod node_part;
mod routing_graph;
mod scratch;

pub(crate) use build::build;
pub(crate) use hasher::FxBuild;
pub(crate) use scratch::Scratch;

use super::latency::ArchRow;
use crate::model::{Design, DeviceId, LinkId};

/// One direction of a link, or of a GPU's or NIC's port: an index into the per-arc lists.
pub(crate) type ArcId = u32;
/// A device of the routing graph: its index in `design.devices`.
pub(crate) type Vertex = u32;
/// The arc of a port a GPU does not have (no NVLink, no bridge partner, no PCIe of its own).
pub(crate) const ABSENT_ARC: ArcId = u32::MAX;

/// What an arc stands for, to name bottlenecks.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Resource {
    /// Direction a→b (`forward`) or b→a of `design.links[index]`.
    Link { index: u32, forward: bool },
    /// A GPU's NVLink port into its NVSwitch fabric (node or rack domain).
    ScaleUp { node: u32, gpu: u32, up: bool },
    /// A GPU's own PCIe x16.
    GpuPcie { node: u32, gpu: u32, up: bool },
    /// A NIC's PCIe slot.
    NicPcie { node: u32, nic: u32, up: bool },
    /// An NVLink bridge between two cards.
    Bridge { node: u32, from: u32 },
}

/// How a node's GPUs reach each other.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum GpuInterconnect {
    /// NVSwitch inside the node or the rack domain; `nvls` when the switch reduces.
    NvSwitch {
        nvls: bool,
    },
    BridgePairs,
    Pcie,
    /// One SoC: GPUs share memory.
    Unified,
}

/// Why network data passes through host memory somewhere in a design (`Fabric::staged_why`),
/// as bits.
pub(crate) mod staged_why {
    /// A NIC slot with GPUDirect RDMA off.
    pub const NIC_SETTING: u8 = 1;
    /// GPUs that are no PCIe peers (GeForce cards): no NIC reaches their memory.
    pub const NO_PEER_GPU: u8 = 2;
    /// GPUs and NICs that meet only at the host bridge (PHB), past NCCL_NET_GDR_LEVEL's PXB.
    pub const HOST_BRIDGE: u8 = 4;
    /// NCCL's socket transport, which takes host buffers only.
    pub const SOCKETS: u8 = 8;

    /// The reasons that hold for one NIC (or a board's own ports): GPUs that are no peers
    /// rule GPUDirect out before any setting or distance.
    pub fn of(peer: bool, setting_off: bool, at_host_bridge: bool, sockets: bool) -> u8 {
        [
            (peer && setting_off, NIC_SETTING),
            (!peer, NO_PEER_GPU),
            (peer && at_host_bridge, HOST_BRIDGE),
            (sockets, SOCKETS),
        ]
        .iter()
        .filter(|(yes, _)| *yes)
        .fold(0, |bits, (_, bit)| bits | bit)
    }
}

#[derive(Debug, Clone)]
pub(crate) struct Nic {
    pub pcie_up: ArcId,
    pub pcie_down: ArcId,
    /// The working link at this NIC's port: (arc out, arc in, far device index).
    pub access: Option<(ArcId, ArcId, Vertex)>,
    /// Its GPUs' network data passes through host memory: no GPUDirect RDMA (the slot's
    /// setting, GPUs that are no PCIe peers, or GPUs that meet it at the host bridge), or
    /// NCCL's socket transport on its cable (`staged_why`).
    pub host_staged: bool,
}

#[derive(Debug, Clone)]
pub(crate) struct Node {
    pub device: DeviceId,
    pub vertex: Vertex,
    pub first_gpu: u32,
    pub gpu_count: u32,
    pub interconnect: GpuInterconnect,
    pub p2p: bool,
    pub domain: u32,
    /// This node's NICs in `Fabric::nics` (see `Fabric::nics_of`).
    nics: std::ops::Range<u32>,
    /// This node's entries in `Fabric::other_access` (see `Fabric::other_access_of`).
    other_access: std::ops::Range<u32>,
    /// Network data through the node's other ports passes through host memory (as
    /// `Nic::host_staged`).
    pub other_host_staged: bool,
    pub arch: ArchRow,
    /// Its GPUs' CUDA compute capability (major × 10 + minor); 0 where they run no CUDA.
    pub compute_capability: u16,
}

#[derive(Debug, Clone)]
pub(crate) struct Gpu {
    pub node: u32,
    pub local: u32,
    pub su_up: ArcId,
    pub su_down: ArcId,
    pub pcie_up: ArcId,
    pub pcie_down: ArcId,
    /// Local NIC serving this GPU (NIC i serves GPUs i·G/K .. (i+1)·G/K).
    pub nic: Option<u32>,
}

/// A scale-up domain: a node on its own, or the nodes of a rack's NVSwitch domain.
#[derive(Debug, Clone, Copy, Default)]
pub(crate) struct Domain {
    pub nodes: u32,
    pub gpus: u32,
}

/// One adjacency entry of the routing graph.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Adj {
    pub neighbour: Vertex,
    pub out: ArcId,
    pub arc_in: ArcId,
}

/// A run of a vertex's adjacency whose neighbours share a twin class.
#[derive(Debug, Clone, Copy)]
pub(crate) struct AdjGroup {
    pub class: u32,
    pub start: u32,
    pub end: u32,
}

pub(crate) struct Fabric {
    /// Per arc: usable bytes per second.
    pub arc_usable: Vec<f64>,
    /// Per arc: part of a link between two switches, which NCCL's tuner does not see (it
    /// knows its NICs and NVLink, not the fabric behind them): it ranks algorithms as if
    /// these arcs never queued. Empty when the fabric has no such link.
    pub arc_core: Vec<bool>,
    /// Per link: line rate of each direction in bytes per second (faults applied), for
    /// physical bounds. Link `i`'s arcs are `2i` (a→b) and `2i + 1`.
    link_line: Vec<f64>,
    /// Per arc past the links' (GPU and NIC ports): line rate, as for links.
    port_line: Vec<f64>,
    /// Per arc past the links': what it stands for.
    port_resource: Vec<Resource>,
    /// Per arc: NVLS efficiency applies to it during NVLS phases.
    pub arc_nvlink: Vec<bool>,
    pub gpus: Vec<Gpu>,
    pub nodes: Vec<Node>,
    /// Every node's NICs, node after node (one list rather than one per node).
    nics: Vec<Nic>,
    /// Working links at node ports that are not NICs (Thunderbolt, on-board Ethernet), or at
    /// NIC ports when the node has nothing else: (arc out, arc in, far device index).
    other_access: Vec<(ArcId, ArcId, Vertex)>,
    pub domains: Vec<Domain>,
    /// Per device index: can traffic pass through it.
    pub transit: Vec<bool>,
    /// Per device index: a GPU node.
    pub is_node: Vec<bool>,
    /// Per device index: a switch that reduces in the network (SHARP).
    pub in_network: Vec<bool>,
    /// The collective library the design's GPUs run.
    pub library: super::Library,
    /// The NCCL release whose latency tables and rules apply (the design's, else the
    /// modelled one); read only when `library` is NCCL.
    pub nccl: crate::model::NcclRelease,
    /// NCCL_BUFFSIZE the jobs run with (the design's, else NCCL's default).
    pub nccl_buffer: crate::model::NcclBuffer,
    pub adj_start: Vec<u32>,
    pub adj: Vec<Adj>,
    pub grp_start: Vec<u32>,
    pub groups: Vec<AdjGroup>,
    /// Twin class per device index (`u32::MAX` for non-transit devices).
    pub class: Vec<u32>,
    pub class_count: u32,
    /// Quotient graph: neighbour classes of each class.
    pub class_adj_start: Vec<u32>,
    pub class_adj: Vec<u32>,
    /// Per device index: switch latency (µs) for switches, 0 otherwise.
    pub switch_latency_us: Vec<f64>,
    /// Per design link: stack latency and propagation (µs), and its tech.
    pub link_latency_us: Vec<f64>,
    /// Device index per device id order (design.devices is sorted by id).
    pub device_ids: Vec<DeviceId>,
    /// Per design link: its id.
    pub link_ids: Vec<LinkId>,
    /// Some working Ethernet link runs AWS EFA: aws-ofi-nccl then restricts NCCL to its
    /// Simple protocol on communicators that cross the network (`Plan::efa`).
    pub efa: bool,
    /// Some GPU reaches the network without GPUDirect RDMA: a NIC without it (its setting, or
    /// GPUs that cannot have it, `Nic::host_staged`), or NCCL's socket transport, which takes
    /// host buffers only (`net_socket.cc`: `ptrSupport = NCCL_PTR_HOST`). NCCL's network path
    /// then runs through the CPU (`paths.cc` adds it as a step, `PATH_PHB`), past the
    /// `PATH_PXB` where its tuner still enables LL128, so LL128 is off on communicators that
    /// cross the network (`Plan::no_net_ll128`).
    pub net_without_gdr: bool,
    /// Why some GPU's network data passes through host memory (`staged_why` bits; 0: none).
    pub staged_why: u8,
    /// The fastest working Ethernet link NCCL drives through its socket transport, Gb/s (0
    /// without one): above a single TCP flow's rate the host, not the wire, may bind
    /// (`efficiency::SOCKET_FLOW_GBIT_S`).
    pub fastest_socket_gbit_s: f64,
}

impl Fabric {
    /// NCCL's latency tables of the release the design runs; the modelled release's for
    /// releases older than the tables go (before 2.5).
    pub(crate) fn latency_table(&self) -> &'static super::latency::LatencyTable {
        super::latency::LatencyTable::of(self.nccl).unwrap_or(&super::latency::MODELLED)
    }
    /// Which in-switch reductions the hardware offers: NVLS on some NVSwitch domain (the
    /// plans' own test, `plan::all_nvls`), SHARP on some switch.
    pub(crate) fn in_switch_hardware(&self) -> super::InSwitchHardware {
        super::InSwitchHardware {
            nvls: self.nodes.iter().any(|n| {
                matches!(n.interconnect, GpuInterconnect::NvSwitch { nvls: true })
                    && n.arch.nvls_efficiency() > 0.0
            }),
            sharp: self.in_network.iter().any(|&r| r),
        }
    }
    /// Whether NCCL's tuner sees arc `a` (`arc_core`).
    #[inline]
    pub fn tuner_sees(&self, a: usize) -> bool {
        !self.arc_core.get(a).copied().unwrap_or(false)
    }

    pub fn arc_count(&self) -> usize {
        self.arc_usable.len()
    }

    /// What arc `a` stands for.
    #[inline]
    pub fn arc_resource(&self, a: usize) -> Resource {
        let links = self.link_line.len();
        if a < 2 * links {
            Resource::Link {
                index: (a / 2) as u32,
                forward: a.is_multiple_of(2),
            }
        } else {
            self.port_resource[a - 2 * links]
        }
    }

    /// Line rate of arc `a` in bytes per second (faults applied).
    pub fn arc_line(&self, a: usize) -> f64 {
        let links = self.link_line.len();
        if a < 2 * links {
            self.link_line[a / 2]
        } else {
            self.port_line[a - 2 * links]
        }
    }

    pub fn neighbours(&self, v: Vertex) -> &[Adj] {
        let (s, e) = (
            self.adj_start[v as usize] as usize,
            self.adj_start[v as usize + 1] as usize,
        );
        &self.adj[s..e]
    }

    pub fn adj_groups(&self, v: Vertex) -> &[AdjGroup] {
        let (s, e) = (
            self.grp_start[v as usize] as usize,
            self.grp_start[v as usize + 1] as usize,
        );
        &self.groups[s..e]
    }

    pub fn class_neighbours(&self, c: u32) -> &[u32] {
        let (s, e) = (
            self.class_adj_start[c as usize] as usize,
            self.class_adj_start[c as usize + 1] as usize,
        );
        &self.class_adj[s..e]
    }

    /// The NICs of `node`, by port.
    pub fn nics_of(&self, node: &Node) -> &[Nic] {
        &self.nics[node.nics.start as usize..node.nics.end as usize]
    }

    /// The node's working links that are not NICs (or all of them when it has only NICs).
    pub fn other_access_of(&self, node: &Node) -> &[(ArcId, ArcId, Vertex)] {
        &self.other_access[node.other_access.start as usize..node.other_access.end as usize]
    }

    /// The local GPU nearest NIC `nic` of `node`: the first GPU it serves, or, when the node
    /// has more NICs than GPUs (two 100 GbE ports per A100 on OCI's BM.GPU4.8), the GPU
    /// whose PCIe switch the NIC shares (NIC i sits by GPU i·G/K). A ring or tree channel on
    /// that NIC enters and leaves the node there.
    pub fn gpu_on_nic(&self, node: &Node, nic: u32) -> u32 {
        (node.first_gpu..node.first_gpu + node.gpu_count)
            .find(|&g| self.gpus[g as usize].nic == Some(nic))
            .unwrap_or_else(|| {
                let k = self.nics_of(node).len().max(1) as u64;
                let local = u64::from(nic) * u64::from(node.gpu_count) / k;
                node.first_gpu + (local as u32).min(node.gpu_count.saturating_sub(1))
            })
    }

    pub fn node_of_gpu(&self, g: u32) -> &Node {
        &self.nodes[self.gpus[g as usize].node as usize]
    }

    pub fn domain_of_gpu(&self, g: u32) -> u32 {
        self.node_of_gpu(g).domain
    }
}

fn usable_bytes_per_s(line_gbit_s: f64, efficiency: f64) -> f64 {
    let v = line_gbit_s * efficiency * 1e9 / 8.0;
    if v.is_finite() && v > 0.0 { v } else { 0.0 }
}

/// Name of a design link for messages.
pub(crate) fn link_id(design: &Design, index: u32) -> LinkId {
    design.links[index as usize].id
}
