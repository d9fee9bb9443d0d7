//! The fabric as the collective model sees it: every direction of every link is an *arc* with
//! a usable capacity, and so is each GPU's scale-up port, each GPU's and NIC's PCIe path.
//! Switches (and GPU nodes cabled only to each other) form the routing graph; its vertices are
//! grouped into *twin classes* (same neighbours), which is what makes large symmetric fabrics
//! cheap: distances are computed once per class on the quotient graph.

use super::CollectiveError;
use super::efficiency as eff;
use super::latency::ArchRow;
use crate::model::catalog::PartSpec;
use crate::model::device::pcie_x16_bandwidth;
use crate::model::{Catalog, Design, DeviceId, DeviceKind, LengthClass, LinkId, LinkTech, ScaleUp};
use std::collections::HashMap;

pub(crate) type ArcId = u32;
pub(crate) type Vx = u32;
pub(crate) const NO_ARC: ArcId = u32::MAX;

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

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Intra {
    /// NVSwitch inside the node or the rack domain; `nvls` when the switch reduces.
    NvSwitch {
        nvls: bool,
    },
    BridgePairs,
    Pcie,
    /// One SoC: GPUs share memory.
    Unified,
}

#[derive(Debug, Clone)]
pub(crate) struct Nic {
    pub pcie_up: ArcId,
    pub pcie_down: ArcId,
    /// The working link at this NIC's port: (arc out, arc in, far device index).
    pub access: Option<(ArcId, ArcId, Vx)>,
}

#[derive(Debug, Clone)]
pub(crate) struct Node {
    pub device: DeviceId,
    pub vertex: Vx,
    pub first_gpu: u32,
    pub gpu_count: u32,
    pub intra: Intra,
    pub p2p: bool,
    pub domain: u32,
    pub nics: Vec<Nic>,
    /// Working links at ports that are not NICs (Thunderbolt, on-board Ethernet), or at NIC
    /// ports when the node has nothing else: (arc out, arc in, far device index).
    pub other_access: Vec<(ArcId, ArcId, Vx)>,
    pub arch: ArchRow,
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

#[derive(Debug, Clone)]
pub(crate) struct Domain {
    pub nodes: Vec<u32>,
}

/// One adjacency entry of the routing graph.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Adj {
    pub nbr: Vx,
    pub out: ArcId,
    pub inn: ArcId,
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
    pub domains: Vec<Domain>,
    /// Per device index: can traffic pass through it.
    pub transit: Vec<bool>,
    /// Per device index: a GPU node.
    pub is_node: Vec<bool>,
    /// Per device index: a switch that reduces in the network (SHARP).
    pub in_network: Vec<bool>,
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
}

impl Fabric {
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

    pub fn neighbours(&self, v: Vx) -> &[Adj] {
        let (s, e) = (
            self.adj_start[v as usize] as usize,
            self.adj_start[v as usize + 1] as usize,
        );
        &self.adj[s..e]
    }

    pub fn adj_groups(&self, v: Vx) -> &[AdjGroup] {
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

/// A fast, deterministic hasher for the integer keys used while building (twin classes).
#[derive(Default, Clone, Copy)]
pub(crate) struct FxHasher {
    hash: u64,
}

impl std::hash::Hasher for FxHasher {
    fn write(&mut self, bytes: &[u8]) {
        for chunk in bytes.chunks(8) {
            let mut word = [0u8; 8];
            word[..chunk.len()].copy_from_slice(chunk);
            self.write_u64(u64::from_le_bytes(word));
        }
    }

    fn write_u32(&mut self, v: u32) {
        self.write_u64(u64::from(v));
    }

    fn write_u64(&mut self, v: u64) {
        self.hash = (self.hash.rotate_left(5) ^ v).wrapping_mul(0x51_7c_c1_b7_27_22_0a_95);
    }

    fn write_usize(&mut self, v: usize) {
        self.write_u64(v as u64);
    }

    fn finish(&self) -> u64 {
        self.hash
    }
}

pub(crate) type FxBuild = std::hash::BuildHasherDefault<FxHasher>;

/// Device index by id: a dense table when ids are compact (the usual case), else a map.
enum DeviceIndex {
    Dense(Vec<u32>),
    Sparse(HashMap<DeviceId, u32, FxBuild>),
}

impl DeviceIndex {
    fn new(design: &Design) -> Self {
        let n = design.devices.len();
        let max_id = design.devices.iter().map(|d| d.id.0).max().unwrap_or(0) as usize;
        if max_id <= 4 * n + 1024 {
            let mut table = vec![u32::MAX; max_id + 1];
            for (i, d) in design.devices.iter().enumerate() {
                table[d.id.0 as usize] = i as u32;
            }
            DeviceIndex::Dense(table)
        } else {
            DeviceIndex::Sparse(
                design
                    .devices
                    .iter()
                    .enumerate()
                    .map(|(i, d)| (d.id, i as u32))
                    .collect(),
            )
        }
    }

    fn get(&self, id: DeviceId) -> Option<usize> {
        match self {
            DeviceIndex::Dense(t) => t
                .get(id.0 as usize)
                .copied()
                .filter(|&i| i != u32::MAX)
                .map(|i| i as usize),
            DeviceIndex::Sparse(m) => m.get(&id).map(|&i| i as usize),
        }
    }
}

/// A routable link as one device sees it.
#[derive(Debug, Clone, Copy)]
struct DevLink {
    port: u32,
    out: ArcId,
    inn: ArcId,
    far: Vx,
}

/// Builds the fabric. Errors name unknown parts; nothing here panics on user data.
pub(crate) fn build(design: &Design, catalog: &Catalog) -> Result<Fabric, CollectiveError> {
    let n_dev = design.devices.len();
    let index_of = DeviceIndex::new(design);
    let is_switch = |i: usize| matches!(design.devices[i].kind, DeviceKind::Switch(_));

    // Links usable for traffic: both ends exist, distinct, not failed, capacity > 0, and not
    // attached to a rack domain device (NVLink inside a rack is modelled from the nodes).
    let n_links = design.links.len();
    // Per link: device index and port of each end (u32::MAX when an end is missing).
    let mut ends: Vec<[u32; 4]> = Vec::with_capacity(n_links);
    let mut routable = vec![false; n_links];
    let (mut gpu_total, mut nic_total, mut node_total) = (0usize, 0usize, 0usize);
    for d in &design.devices {
        if let DeviceKind::GpuNode(n) = &d.kind {
            gpu_total += n.gpu_count as usize;
            nic_total += n.nics.len();
            node_total += 1;
        }
    }
    let arc_estimate = n_links * 2 + gpu_total * 4 + nic_total * 2;
    let mut arc_usable: Vec<f64> = Vec::with_capacity(arc_estimate);
    let mut link_line: Vec<f64> = Vec::with_capacity(n_links);
    let mut link_ids: Vec<LinkId> = Vec::with_capacity(n_links);
    let port_estimate = arc_estimate - 2 * n_links;
    let mut arc_nvlink: Vec<bool> = Vec::with_capacity(arc_estimate);
    let mut link_latency_us = Vec::with_capacity(n_links);
    let mut switch_latency_us = vec![0.0; n_dev];
    let mut last_model: Option<(&crate::model::PartId, f64)> = None;
    for (i, d) in design.devices.iter().enumerate() {
        if let DeviceKind::Switch(s) = &d.kind {
            let latency = match last_model {
                Some((m, v)) if *m == s.model => v,
                _ => {
                    let v = catalog
                        .switch(&s.model)
                        .map(|spec| spec.latency_ns / 1000.0)
                        .filter(|v| v.is_finite() && *v > 0.0)
                        .unwrap_or(f64::NAN);
                    last_model = Some((&s.model, v));
                    v
                }
            };
            switch_latency_us[i] = latency;
        }
    }
    // Per device: what the link loop needs to know, without touching the devices again.
    const DOMAIN: u8 = 1;
    const LOSSY_SWITCH: u8 = 2;
    let dev_flags: Vec<u8> = design
        .devices
        .iter()
        .map(|d| match &d.kind {
            DeviceKind::NvSwitchDomain(_) => DOMAIN,
            DeviceKind::Switch(s) if !s.features.lossless => LOSSY_SWITCH,
            _ => 0,
        })
        .collect();
    for (li, link) in design.links.iter().enumerate() {
        let ia = index_of.get(link.a.device);
        let ib = index_of.get(link.b.device);
        let cap = link.capacity().gbit_s();
        let mut lossless = true;
        if let (Some(ia), Some(ib)) = (ia, ib) {
            let (fa, fb) = (dev_flags[ia], dev_flags[ib]);
            lossless = (fa | fb) & LOSSY_SWITCH == 0;
            routable[li] = ia != ib && cap.is_finite() && cap > 0.0 && (fa | fb) & DOMAIN == 0;
            for i in [ia, ib] {
                if switch_latency_us[i].is_nan() {
                    switch_latency_us[i] = eff::default_switch_latency_us(link.tech);
                }
            }
            ends.push([ia as u32, ib as u32, link.a.port, link.b.port]);
        } else {
            ends.push([u32::MAX; 4]);
        }
        let e = eff::link_efficiency(link.tech, link.transport, lossless);
        let (usable, line) = if routable[li] {
            (usable_bytes_per_s(cap, e), usable_bytes_per_s(cap, 1.0))
        } else {
            (0.0, 0.0)
        };
        let is_nvlink = matches!(link.tech, LinkTech::NvLink | LinkTech::NvLinkBridge);
        arc_usable.extend([usable, usable]);
        arc_nvlink.extend([is_nvlink, is_nvlink]);
        link_line.push(line);
        link_ids.push(link.id);
        link_latency_us.push(
            eff::stack_latency_us(link.tech, link.transport)
                + eff::propagation_us(link.length == LengthClass::CrossRack),
        );
    }
    for v in switch_latency_us.iter_mut() {
        if v.is_nan() {
            *v = 0.5;
        }
    }
    // Per device: routable links (port, arc out, arc in, far end), in link order.
    let mut dl_start = vec![0u32; n_dev + 1];
    for (li, &[ia, ib, ..]) in ends.iter().enumerate() {
        if routable[li] {
            dl_start[ia as usize + 1] += 1;
            dl_start[ib as usize + 1] += 1;
        }
    }
    for i in 0..n_dev {
        dl_start[i + 1] += dl_start[i];
    }
    let mut fill = dl_start.clone();
    let mut dev_links = vec![
        DevLink {
            port: 0,
            out: 0,
            inn: 0,
            far: 0
        };
        dl_start[n_dev] as usize
    ];
    for (li, &[ia, ib, pa, pb]) in ends.iter().enumerate() {
        if !routable[li] {
            continue;
        }
        let (fwd, back) = (2 * li as u32, 2 * li as u32 + 1);
        dev_links[fill[ia as usize] as usize] = DevLink {
            port: pa,
            out: fwd,
            inn: back,
            far: ib,
        };
        fill[ia as usize] += 1;
        dev_links[fill[ib as usize] as usize] = DevLink {
            port: pb,
            out: back,
            inn: fwd,
            far: ia,
        };
        fill[ib as usize] += 1;
    }
    drop(fill);
    let links_of = |i: usize| &dev_links[dl_start[i] as usize..dl_start[i + 1] as usize];
    // Transit: switches, and GPU nodes cabled only to other GPU nodes or hosts (a Thunderbolt
    // ring of Macs forwards at the IP layer). Nodes on switches never forward: NCCL does not
    // route through a third server.
    let mut transit = vec![false; n_dev];
    for (i, d) in design.devices.iter().enumerate() {
        transit[i] = match &d.kind {
            DeviceKind::Switch(_) => true,
            DeviceKind::GpuNode(_) => {
                let links = links_of(i);
                !links.is_empty() && links.iter().all(|l| !is_switch(l.far as usize))
            }
            _ => false,
        };
    }
    let NodePart {
        nodes,
        gpus,
        domains,
        line: port_line,
        resource: port_resource,
    } = NodePart::build(
        design,
        catalog,
        &index_of,
        &links_of,
        (&mut arc_usable, &mut arc_nvlink),
        (node_total, gpu_total, port_estimate),
    )?;
    let RoutingGraph {
        adj_start,
        adj,
        grp_start,
        groups,
        class,
        class_count,
        class_adj_start,
        class_adj,
        in_network,
        is_node,
    } = RoutingGraph::build(design, &transit, &links_of);
    let mut fab = Fabric {
        in_network,
        is_node,
        arc_usable,
        link_line,
        port_line,
        port_resource,
        arc_nvlink,
        gpus,
        nodes,
        domains,
        transit,
        adj_start,
        adj,
        grp_start,
        groups,
        class,
        class_count,
        class_adj_start,
        class_adj,
        switch_latency_us,
        link_latency_us,
        device_ids: design.devices.iter().map(|d| d.id).collect(),
        link_ids,
    };
    eff::apply_calibration(&mut fab, design);
    Ok(fab)
}

/// The GPU nodes' side of the fabric: nodes, GPUs, scale-up domains, and the port arcs (GPU
/// scale-up and PCIe, NIC PCIe), numbered after the link arcs. Their usable capacity and
/// NVLink flag go straight onto the fabric's per-arc lists.
struct NodePart {
    nodes: Vec<Node>,
    gpus: Vec<Gpu>,
    domains: Vec<Domain>,
    line: Vec<f64>,
    resource: Vec<Resource>,
}

impl NodePart {
    fn build<'d>(
        design: &'d Design,
        catalog: &Catalog,
        index_of: &DeviceIndex,
        links_of: &dyn Fn(usize) -> &'d [DevLink],
        (usable, nvlink): (&mut Vec<f64>, &mut Vec<bool>),
        (node_total, gpu_total, port_estimate): (usize, usize, usize),
    ) -> Result<NodePart, CollectiveError> {
        let mut line: Vec<f64> = Vec::with_capacity(port_estimate);
        let mut resource: Vec<Resource> = Vec::with_capacity(port_estimate);
        // Scale-up domains: rack domains by device, every other node on its own.
        let mut domains: Vec<Domain> = Vec::new();
        let mut rack_domain: HashMap<DeviceId, u32> = HashMap::new();
        let mut nodes: Vec<Node> = Vec::with_capacity(node_total);
        let mut gpus: Vec<Gpu> = Vec::with_capacity(gpu_total);
        // Consecutive nodes usually share parts: remember the last lookups.
        let mut last_gpu: Option<(&crate::model::PartId, &crate::model::catalog::GpuSpec)> = None;
        let mut last_nic: Option<(&crate::model::PartId, Option<u8>)> = None;
        for (i, d) in design.devices.iter().enumerate() {
            let DeviceKind::GpuNode(n) = &d.kind else {
                continue;
            };
            let gpu_spec = match last_gpu {
                Some((id, spec)) if *id == n.gpu => spec,
                _ => {
                    let spec = catalog
                        .gpu(&n.gpu)
                        .ok_or_else(|| CollectiveError::UnknownPart {
                            part: n.gpu.to_string(),
                            device: d.id,
                        })?;
                    last_gpu = Some((&n.gpu, spec));
                    spec
                }
            };
            let arch = ArchRow::of(gpu_spec.arch);
            let node_index = nodes.len() as u32;
            let rack = n.domain.and_then(|dom| {
                let di = index_of.get(dom)?;
                match &design.devices[di].kind {
                    DeviceKind::NvSwitchDomain(nd) => {
                        Some((dom, catalog.domain(&nd.model).cloned()))
                    }
                    _ => None,
                }
            });
            let domain = match &rack {
                Some((dom, _)) => *rack_domain.entry(*dom).or_insert_with(|| {
                    domains.push(Domain { nodes: Vec::new() });
                    domains.len() as u32 - 1
                }),
                None => {
                    domains.push(Domain { nodes: Vec::new() });
                    domains.len() as u32 - 1
                }
            };
            domains[domain as usize].nodes.push(node_index);

            let gpu_pcie_gen = gpu_spec.pcie_generation;
            let (intra, p2p, su_gbit_s, su_tech_nvlink) = match (&rack, &n.scale_up) {
                (Some((_, spec)), scale_up) => {
                    let per_gpu = spec
                        .as_ref()
                        .map(|s| s.per_gpu_gbit_s.gbit_s())
                        .or(match scale_up {
                            ScaleUp::NvSwitch { per_gpu_gbit_s, .. } => {
                                Some(per_gpu_gbit_s.gbit_s())
                            }
                            _ => None,
                        })
                        .unwrap_or(0.0);
                    let generation = spec.as_ref().map_or(5, |s| s.nvlink_generation);
                    (
                        Intra::NvSwitch {
                            nvls: generation >= 4,
                        },
                        true,
                        per_gpu,
                        true,
                    )
                }
                (
                    None,
                    ScaleUp::NvSwitch {
                        generation,
                        per_gpu_gbit_s,
                    },
                ) => (
                    Intra::NvSwitch {
                        nvls: *generation >= 3,
                    },
                    true,
                    per_gpu_gbit_s.gbit_s(),
                    true,
                ),
                (
                    None,
                    ScaleUp::NvLinkBridgePairs {
                        per_gpu_gbit_s,
                        peer_to_peer,
                        ..
                    },
                ) => (
                    Intra::BridgePairs,
                    *peer_to_peer,
                    per_gpu_gbit_s.gbit_s(),
                    true,
                ),
                (None, ScaleUp::Pcie { peer_to_peer, .. }) => {
                    (Intra::Pcie, *peer_to_peer, 0.0, false)
                }
                (None, ScaleUp::UnifiedMemory) => (Intra::Unified, true, 0.0, false),
            };
            let node_pcie_gen = match &n.scale_up {
                ScaleUp::Pcie { generation, .. } => *generation,
                ScaleUp::NvLinkBridgePairs {
                    pcie_generation, ..
                } => *pcie_generation,
                _ => gpu_pcie_gen,
            };
            let pcie_gen = gpu_pcie_gen.min(node_pcie_gen.max(1));
            let gpu_pcie = usable_bytes_per_s(pcie_x16_bandwidth(pcie_gen).gbit_s(), eff::PCIE);
            let su = usable_bytes_per_s(su_gbit_s, eff::NVLINK);

            let first_gpu = gpus.len() as u32;
            let k = n.nics.len() as u32;
            let mut push = |cap: f64, what: Resource, nvl: bool| {
                let rate = if nvl {
                    cap / eff::NVLINK
                } else {
                    cap / eff::PCIE
                };
                usable.push(cap);
                line.push(rate);
                resource.push(what);
                nvlink.push(nvl);
                usable.len() as ArcId - 1
            };
            for local in 0..n.gpu_count {
                let (su_up, su_down) = match intra {
                    Intra::NvSwitch { .. } => (
                        push(
                            su,
                            Resource::ScaleUp {
                                node: node_index,
                                gpu: local,
                                up: true,
                            },
                            su_tech_nvlink,
                        ),
                        push(
                            su,
                            Resource::ScaleUp {
                                node: node_index,
                                gpu: local,
                                up: false,
                            },
                            su_tech_nvlink,
                        ),
                    ),
                    Intra::BridgePairs if (local ^ 1) < n.gpu_count => (
                        push(
                            su,
                            Resource::Bridge {
                                node: node_index,
                                from: local,
                            },
                            true,
                        ),
                        NO_ARC,
                    ),
                    _ => (NO_ARC, NO_ARC),
                };
                let (pcie_up, pcie_down) = if intra == Intra::Unified {
                    (NO_ARC, NO_ARC)
                } else {
                    (
                        push(
                            gpu_pcie,
                            Resource::GpuPcie {
                                node: node_index,
                                gpu: local,
                                up: true,
                            },
                            false,
                        ),
                        push(
                            gpu_pcie,
                            Resource::GpuPcie {
                                node: node_index,
                                gpu: local,
                                up: false,
                            },
                            false,
                        ),
                    )
                };
                let nic = if k == 0 {
                    None
                } else {
                    Some((u64::from(local) * u64::from(k) / u64::from(n.gpu_count.max(1))) as u32)
                };
                gpus.push(Gpu {
                    node: node_index,
                    local,
                    su_up,
                    su_down,
                    pcie_up,
                    pcie_down,
                    nic,
                });
            }

            let links = links_of(i);
            let mut nics = Vec::with_capacity(n.nics.len());
            for (ni, slot) in n.nics.iter().enumerate() {
                let part_gen = match last_nic {
                    Some((id, g)) if *id == slot.part => g,
                    _ => {
                        let g = match catalog.get(&slot.part).map(|p| &p.spec) {
                            Some(PartSpec::Nic(spec)) => Some(spec.pcie_generation),
                            _ => None,
                        };
                        last_nic = Some((&slot.part, g));
                        g
                    }
                };
                let nic_gen = part_gen.unwrap_or(node_pcie_gen);
                let share = if slot.gpudirect {
                    1.0
                } else {
                    eff::NO_GPUDIRECT_PCIE_SHARE
                };
                let cap = usable_bytes_per_s(
                    pcie_x16_bandwidth(nic_gen.min(node_pcie_gen.max(1)).max(1)).gbit_s(),
                    eff::PCIE * share,
                );
                let rate = cap / (eff::PCIE * share);
                for up in [true, false] {
                    usable.push(cap);
                    line.push(rate);
                    resource.push(Resource::NicPcie {
                        node: node_index,
                        nic: ni as u32,
                        up,
                    });
                    nvlink.push(false);
                }
                let up = usable.len() as ArcId - 2;
                let access = links
                    .iter()
                    .find(|l| l.port == ni as u32)
                    .map(|l| (l.out, l.inn, l.far));
                nics.push(Nic {
                    pcie_up: up,
                    pcie_down: up + 1,
                    access,
                });
            }
            let nic_ports = k;
            let mut other_access: Vec<(ArcId, ArcId, Vx)> = links
                .iter()
                .filter(|l| l.port >= nic_ports)
                .map(|l| (l.out, l.inn, l.far))
                .collect();
            if other_access.is_empty() {
                other_access = links.iter().map(|l| (l.out, l.inn, l.far)).collect();
            }
            nodes.push(Node {
                device: d.id,
                vertex: i as Vx,
                first_gpu,
                gpu_count: n.gpu_count,
                intra,
                p2p,
                domain,
                nics,
                other_access,
                arch,
            });
        }
        Ok(NodePart {
            nodes,
            gpus,
            domains,
            line,
            resource,
        })
    }
}

/// The routing graph over transit devices, with its twin classes and their quotient graph.
struct RoutingGraph {
    adj_start: Vec<u32>,
    adj: Vec<Adj>,
    grp_start: Vec<u32>,
    groups: Vec<AdjGroup>,
    class: Vec<u32>,
    class_count: u32,
    class_adj_start: Vec<u32>,
    class_adj: Vec<u32>,
    in_network: Vec<bool>,
    is_node: Vec<bool>,
}

impl RoutingGraph {
    fn build<'d>(
        design: &'d Design,
        transit: &[bool],
        links_of: &dyn Fn(usize) -> &'d [DevLink],
    ) -> RoutingGraph {
        let n_dev = design.devices.len();
        // Routing graph over transit devices: each one's transit neighbours, in link order.
        let mut adj_start: Vec<u32> = Vec::with_capacity(n_dev + 1);
        let mut adj: Vec<Adj> = Vec::new();
        for i in 0..n_dev {
            adj_start.push(adj.len() as u32);
            if transit[i] {
                adj.extend(
                    links_of(i)
                        .iter()
                        .filter(|l| transit[l.far as usize])
                        .map(|l| Adj {
                            nbr: l.far,
                            out: l.out,
                            inn: l.inn,
                        }),
                );
            }
        }
        adj_start.push(adj.len() as u32);
        let span = |i: usize| adj_start[i] as usize..adj_start[i + 1] as usize;

        // Twin classes: identical multisets of transit neighbours, numbered by first appearance.
        let mut class = vec![u32::MAX; n_dev];
        let mut keys: HashMap<Vec<Vx>, u32, FxBuild> = HashMap::default();
        let mut key: Vec<Vx> = Vec::new();
        for i in 0..n_dev {
            if !transit[i] {
                continue;
            }
            key.clear();
            key.extend(adj[span(i)].iter().map(|a| a.nbr));
            key.sort();
            let next = keys.len() as u32;
            class[i] = match keys.get(&key) {
                Some(&c) => c,
                None => {
                    keys.insert(key.clone(), next);
                    next
                }
            };
        }
        let class_count = keys.len() as u32;
        drop(keys);

        // Each adjacency sorted by (neighbour class, neighbour), in runs of one class.
        let mut grp_start = Vec::with_capacity(n_dev + 1);
        let mut groups = Vec::new();
        let mut class_rep = vec![u32::MAX; class_count as usize];
        let mut keyed: Vec<(u64, Adj)> = Vec::new();
        for i in 0..n_dev {
            grp_start.push(groups.len() as u32);
            let range = span(i);
            let base = range.start as u32;
            let list = &mut adj[range];
            sort_adjacency(list, &class, &mut keyed);
            let mut j = 0;
            while j < list.len() {
                let c = class[list[j].nbr as usize];
                let s = j;
                while j < list.len() && class[list[j].nbr as usize] == c {
                    j += 1;
                }
                groups.push(AdjGroup {
                    class: c,
                    start: base + s as u32,
                    end: base + j as u32,
                });
            }
            if transit[i] && class_rep[class[i] as usize] == u32::MAX {
                class_rep[class[i] as usize] = i as u32;
            }
        }
        grp_start.push(groups.len() as u32);

        let mut class_adj_start = Vec::with_capacity(class_count as usize + 1);
        let mut class_adj = Vec::new();
        for &rep in &class_rep {
            class_adj_start.push(class_adj.len() as u32);
            let (s, e) = (
                grp_start[rep as usize] as usize,
                grp_start[rep as usize + 1] as usize,
            );
            class_adj.extend(groups[s..e].iter().map(|g| g.class));
        }
        class_adj_start.push(class_adj.len() as u32);
        let in_network = design
            .devices
            .iter()
            .map(|d| matches!(&d.kind, DeviceKind::Switch(s) if s.features.in_network_reduction))
            .collect();
        let is_node = design
            .devices
            .iter()
            .map(|d| matches!(d.kind, DeviceKind::GpuNode(_)))
            .collect();
        RoutingGraph {
            adj_start,
            adj,
            grp_start,
            groups,
            class,
            class_count,
            class_adj_start,
            class_adj,
            in_network,
            is_node,
        }
    }
}

/// Sorts an adjacency by (neighbour class, neighbour) exactly as `sort_unstable_by_key` does
/// (the order of parallel links decides ECMP's picks), faster where that order is plain: an
/// already sorted list stays as it is, and without parallel links any sort gives the one
/// order there is.
fn sort_adjacency(list: &mut [Adj], class: &[u32], keyed: &mut Vec<(u64, Adj)>) {
    let key = |a: &Adj| (u64::from(class[a.nbr as usize]) << 32) | u64::from(a.nbr);
    if list.is_sorted_by_key(key) {
        return;
    }
    keyed.clear();
    keyed.extend(list.iter().map(|a| (key(a), *a)));
    // The stable sort merges already sorted runs (links to leaves, then to cores...) in one
    // pass; with distinct keys its order is the only one.
    keyed.sort_by_key(|k| k.0);
    if keyed.windows(2).all(|w| w[0].0 != w[1].0) {
        for (slot, (_, a)) in list.iter_mut().zip(keyed.iter()) {
            *slot = *a;
        }
    } else {
        list.sort_unstable_by_key(|a| (class[a.nbr as usize], a.nbr));
    }
}

/// Name of a design link for messages.
pub(crate) fn link_id(design: &Design, index: u32) -> LinkId {
    design.links[index as usize].id
}
