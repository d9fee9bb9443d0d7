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
use crate::model::{
    Catalog, Design, DeviceId, DeviceKind, LengthClass, Link, LinkId, LinkTech, Port, ScaleUp,
};
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
    /// This node's NICs in `Fabric::nics` (see `Fabric::nics_of`).
    nics: std::ops::Range<u32>,
    /// This node's entries in `Fabric::other_access` (see `Fabric::other_access_of`).
    other_access: std::ops::Range<u32>,
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

/// A scale-up domain: a node on its own, or the nodes of a rack's NVSwitch domain.
#[derive(Debug, Clone, Copy, Default)]
pub(crate) struct Domain {
    pub nodes: u32,
    pub gpus: u32,
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
    /// Every node's NICs, node after node (one list rather than one per node).
    nics: Vec<Nic>,
    /// Working links at node ports that are not NICs (Thunderbolt, on-board Ethernet), or at
    /// NIC ports when the node has nothing else: (arc out, arc in, far device index).
    other_access: Vec<(ArcId, ArcId, Vx)>,
    pub domains: Vec<Domain>,
    /// Per device index: can traffic pass through it.
    pub transit: Vec<bool>,
    /// Per device index: a GPU node.
    pub is_node: Vec<bool>,
    /// Per device index: a switch that reduces in the network (SHARP).
    pub in_network: Vec<bool>,
    /// The collective library the design's GPUs run.
    pub library: super::Library,
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

    /// The NICs of `node`, by port.
    pub fn nics_of(&self, node: &Node) -> &[Nic] {
        &self.nics[node.nics.start as usize..node.nics.end as usize]
    }

    /// The node's working links that are not NICs (or all of them when it has only NICs).
    pub fn other_access_of(&self, node: &Node) -> &[(ArcId, ArcId, Vx)] {
        &self.other_access[node.other_access.start as usize..node.other_access.end as usize]
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

/// A link end's slot when it is not on a NIC: above every NIC slot.
const NOT_A_NIC: u32 = u32::MAX;

/// A routable link as one device sees it.
#[derive(Debug, Clone, Copy)]
struct DevLink {
    /// The NIC slot the link is on at this device, or `NOT_A_NIC`.
    nic: u32,
    out: ArcId,
    inn: ArcId,
    far: Vx,
}

/// Designs with at least this many links build the fabric's halves on two threads (when
/// there are two cores): below it a thread costs more than it saves.
const PARALLEL_LINKS: usize = 1 << 14;

#[cfg(test)]
thread_local! {
    /// Tests build in one piece or in two halves whatever the design's size.
    static BUILD_IN_HALVES: std::cell::Cell<Option<bool>> = const { std::cell::Cell::new(None) };
}

/// Whether to build a design's fabric in two halves side by side.
fn split_build(links: usize) -> bool {
    #[cfg(test)]
    if let Some(halves) = BUILD_IN_HALVES.with(std::cell::Cell::get) {
        return halves;
    }
    links >= PARALLEL_LINKS
}

/// Device flags for the link pass: a rack's NVSwitch domain, a switch without lossless
/// Ethernet.
const DOMAIN: u8 = 1;
const LOSSY_SWITCH: u8 = 2;

/// The per-link lists for a run of links, to fill (a whole design's or half of it).
struct LinkFacts<'a> {
    /// Device index and NIC slot of each end (u32::MAX when an end is missing, and for the
    /// slot, `NOT_A_NIC` when the end is on another kind of port).
    ends: &'a mut [[u32; 4]],
    routable: &'a mut [bool],
    /// Two arcs per link: usable bytes per second and NVLink flag.
    usable: &'a mut [f64],
    nvlink: &'a mut [bool],
    line: &'a mut [f64],
    ids: &'a mut [LinkId],
    latency_us: &'a mut [f64],
}

impl<'a> LinkFacts<'a> {
    fn split_at(self, mid: usize) -> (LinkFacts<'a>, LinkFacts<'a>) {
        let (ends, ends2) = self.ends.split_at_mut(mid);
        let (routable, routable2) = self.routable.split_at_mut(mid);
        let (usable, usable2) = self.usable.split_at_mut(2 * mid);
        let (nvlink, nvlink2) = self.nvlink.split_at_mut(2 * mid);
        let (line, line2) = self.line.split_at_mut(mid);
        let (ids, ids2) = self.ids.split_at_mut(mid);
        let (latency_us, latency_us2) = self.latency_us.split_at_mut(mid);
        (
            LinkFacts {
                ends,
                routable,
                usable,
                nvlink,
                line,
                ids,
                latency_us,
            },
            LinkFacts {
                ends: ends2,
                routable: routable2,
                usable: usable2,
                nvlink: nvlink2,
                line: line2,
                ids: ids2,
                latency_us: latency_us2,
            },
        )
    }

    /// Links usable for traffic: both ends exist, distinct, not failed, capacity > 0, and not
    /// attached to a rack domain device (NVLink inside a rack is modelled from the nodes).
    fn fill(self, links: &[Link], index_of: &DeviceIndex, dev_flags: &[u8]) {
        for (li, link) in links.iter().enumerate() {
            let ia = index_of.get(link.a.device);
            let ib = index_of.get(link.b.device);
            let cap = link.capacity().gbit_s();
            let mut lossless = true;
            if let (Some(ia), Some(ib)) = (ia, ib) {
                let (fa, fb) = (dev_flags[ia], dev_flags[ib]);
                lossless = (fa | fb) & LOSSY_SWITCH == 0;
                self.routable[li] =
                    ia != ib && cap.is_finite() && cap > 0.0 && (fa | fb) & DOMAIN == 0;
                let nic = |port: Port| port.nic().unwrap_or(NOT_A_NIC);
                self.ends[li] = [ia as u32, ib as u32, nic(link.a.port), nic(link.b.port)];
            }
            let e = eff::link_efficiency(link.tech, link.transport, lossless);
            let (usable, line) = if self.routable[li] {
                (usable_bytes_per_s(cap, e), usable_bytes_per_s(cap, 1.0))
            } else {
                (0.0, 0.0)
            };
            let is_nvlink = matches!(link.tech, LinkTech::NvLink | LinkTech::NvLinkBridge);
            self.usable[2 * li] = usable;
            self.usable[2 * li + 1] = usable;
            self.nvlink[2 * li] = is_nvlink;
            self.nvlink[2 * li + 1] = is_nvlink;
            self.line[li] = line;
            self.ids[li] = link.id;
            self.latency_us[li] = eff::stack_latency_us(link.tech, link.transport)
                + eff::propagation_us(link.length == LengthClass::CrossRack);
        }
    }
}

/// The largest lists of fabrics no longer needed, for the next build to fill again: the
/// sidebar builds the same design's fabric, give or take an edit, again and again, and
/// megabytes of fresh memory fault in page by page (whether freed memory stays mapped
/// depends on what else the allocator holds, so build times would swing with it).
struct Kept {
    arc_usable: Vec<f64>,
    arc_nvlink: Vec<bool>,
    link_line: Vec<f64>,
    link_ids: Vec<LinkId>,
    link_latency_us: Vec<f64>,
    port_line: Vec<f64>,
    port_resource: Vec<Resource>,
    gpus: Vec<Gpu>,
    nics: Vec<Nic>,
    other_access: Vec<(ArcId, ArcId, Vx)>,
    adj: Vec<Adj>,
    groups: Vec<AdjGroup>,
    /// Build scratch: each link's ends, each device's links.
    ends: Vec<[u32; 4]>,
    dev_links: Vec<DevLink>,
}

impl Kept {
    const NONE: Kept = Kept {
        arc_usable: Vec::new(),
        arc_nvlink: Vec::new(),
        link_line: Vec::new(),
        link_ids: Vec::new(),
        link_latency_us: Vec::new(),
        port_line: Vec::new(),
        port_resource: Vec::new(),
        gpus: Vec::new(),
        nics: Vec::new(),
        other_access: Vec::new(),
        adj: Vec::new(),
        groups: Vec::new(),
        ends: Vec::new(),
        dev_links: Vec::new(),
    };

    /// Takes every kept list (none left behind for a build running alongside).
    fn take() -> Kept {
        KEPT.lock()
            .map(|mut kept| std::mem::replace(&mut *kept, Kept::NONE))
            .unwrap_or(Kept::NONE)
    }

    /// Keeps what `f` hands over (the latest lists replace those kept before).
    fn give(f: impl FnOnce(&mut Kept)) {
        if let Ok(mut kept) = KEPT.lock() {
            f(&mut kept);
        }
    }
}

static KEPT: std::sync::Mutex<Kept> = std::sync::Mutex::new(Kept::NONE);

/// `list` emptied, with room for `n`: kept memory when it fits, fresh memory when the kept
/// list is far larger (a big design's lists are not held on to for a small one).
fn reuse<T>(mut list: Vec<T>, n: usize) -> Vec<T> {
    if list.capacity() > 2 * n + 4096 {
        return Vec::with_capacity(n);
    }
    list.clear();
    list.reserve(n);
    list
}

impl Drop for Fabric {
    fn drop(&mut self) {
        Kept::give(|k| {
            k.arc_usable = std::mem::take(&mut self.arc_usable);
            k.arc_nvlink = std::mem::take(&mut self.arc_nvlink);
            k.link_line = std::mem::take(&mut self.link_line);
            k.link_ids = std::mem::take(&mut self.link_ids);
            k.link_latency_us = std::mem::take(&mut self.link_latency_us);
            k.port_line = std::mem::take(&mut self.port_line);
            k.port_resource = std::mem::take(&mut self.port_resource);
            k.gpus = std::mem::take(&mut self.gpus);
            k.nics = std::mem::take(&mut self.nics);
            k.other_access = std::mem::take(&mut self.other_access);
            k.adj = std::mem::take(&mut self.adj);
            k.groups = std::mem::take(&mut self.groups);
        });
    }
}

/// Builds the fabric. Errors name unknown parts; nothing here panics on user data.
pub(crate) fn build(design: &Design, catalog: &Catalog) -> Result<Fabric, CollectiveError> {
    let n_dev = design.devices.len();
    let index_of = DeviceIndex::new(design);
    let mut kept = Kept::take();
    // Large designs build in halves side by side: the calling thread and a kept helper.
    let halves = super::helpers::pool().filter(|_| split_build(design.links.len()));
    let is_switch = |i: usize| matches!(design.devices[i].kind, DeviceKind::Switch(_));

    let n_links = design.links.len();
    let (mut gpu_total, mut nic_total, mut node_total) = (0usize, 0usize, 0usize);
    for d in &design.devices {
        if let DeviceKind::GpuNode(n) = &d.kind {
            gpu_total += n.gpu_count as usize;
            nic_total += n.nics.len();
            node_total += 1;
        }
    }
    let arc_estimate = n_links * 2 + gpu_total * 4 + nic_total * 2;
    let port_estimate = arc_estimate - 2 * n_links;
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
    let dev_flags: Vec<u8> = design
        .devices
        .iter()
        .map(|d| match &d.kind {
            DeviceKind::NvSwitchDomain(_) => DOMAIN,
            DeviceKind::Switch(s) if !s.features.lossless => LOSSY_SWITCH,
            _ => 0,
        })
        .collect();
    let mut ends = reuse(std::mem::take(&mut kept.ends), n_links);
    ends.resize(n_links, [u32::MAX; 4]);
    let mut routable = vec![false; n_links];
    let mut arc_usable = reuse(std::mem::take(&mut kept.arc_usable), arc_estimate);
    let mut arc_nvlink = reuse(std::mem::take(&mut kept.arc_nvlink), arc_estimate);
    arc_usable.resize(2 * n_links, 0.0);
    arc_nvlink.resize(2 * n_links, false);
    let mut link_line = reuse(std::mem::take(&mut kept.link_line), n_links);
    link_line.resize(n_links, 0.0);
    let mut link_ids = reuse(std::mem::take(&mut kept.link_ids), n_links);
    link_ids.resize(n_links, LinkId(0));
    let mut link_latency_us = reuse(std::mem::take(&mut kept.link_latency_us), n_links);
    link_latency_us.resize(n_links, 0.0);
    {
        let facts = LinkFacts {
            ends: &mut ends,
            routable: &mut routable,
            usable: &mut arc_usable,
            nvlink: &mut arc_nvlink,
            line: &mut link_line,
            ids: &mut link_ids,
            latency_us: &mut link_latency_us,
        };
        let fill = |links: &[Link], out: LinkFacts| out.fill(links, &index_of, &dev_flags);
        if let Some(pool) = halves {
            // Each half of the links fills its own part of the lists.
            let mid = n_links / 2;
            let (front, back) = facts.split_at(mid);
            let (first, second) = design.links.split_at(mid);
            pool.in_place_scope(|scope| {
                scope.spawn(|_| fill(second, back));
                fill(first, front);
            });
        } else {
            fill(&design.links, facts);
        }
    }
    // A switch whose model gives no latency takes its technology's, from its first link.
    if switch_latency_us.iter().any(|v| v.is_nan()) {
        for (&[ia, ib, ..], link) in ends.iter().zip(&design.links) {
            if ia == u32::MAX {
                continue;
            }
            for i in [ia as usize, ib as usize] {
                if switch_latency_us[i].is_nan() {
                    switch_latency_us[i] = eff::default_switch_latency_us(link.tech);
                }
            }
        }
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
    let mut dev_links = reuse(
        std::mem::take(&mut kept.dev_links),
        dl_start[n_dev] as usize,
    );
    dev_links.resize(
        dl_start[n_dev] as usize,
        DevLink {
            nic: NOT_A_NIC,
            out: 0,
            inn: 0,
            far: 0,
        },
    );
    for (li, &[ia, ib, pa, pb]) in ends.iter().enumerate() {
        if !routable[li] {
            continue;
        }
        let (fwd, back) = (2 * li as u32, 2 * li as u32 + 1);
        dev_links[fill[ia as usize] as usize] = DevLink {
            nic: pa,
            out: fwd,
            inn: back,
            far: ib,
        };
        fill[ia as usize] += 1;
        dev_links[fill[ib as usize] as usize] = DevLink {
            nic: pb,
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
    let node_part = |arcs: (&mut Vec<f64>, &mut Vec<bool>), lists| {
        NodePart::build(
            design,
            catalog,
            &index_of,
            &links_of,
            arcs,
            (node_total, gpu_total, nic_total, port_estimate),
            lists,
        )
    };
    let node_lists = NodeLists {
        line: std::mem::take(&mut kept.port_line),
        resource: std::mem::take(&mut kept.port_resource),
        gpus: std::mem::take(&mut kept.gpus),
        nics: std::mem::take(&mut kept.nics),
        other_access: std::mem::take(&mut kept.other_access),
    };
    let mut graph = RoutingGraph::with_capacity(
        n_dev,
        dev_links.len(),
        (
            std::mem::take(&mut kept.adj),
            std::mem::take(&mut kept.groups),
        ),
    );
    let fill_graph = |graph: &mut RoutingGraph| graph.fill(design, &transit, &links_of);
    // The GPU nodes' side and the routing graph do not depend on each other. The node side
    // stays on the calling thread: it allocates the nodes' own lists, and memory one thread
    // allocates and another frees tends to go back to the system, to fault in anew next time.
    let node_part = if let Some(pool) = halves {
        pool.in_place_scope(|scope| {
            scope.spawn(|_| fill_graph(&mut graph));
            node_part((&mut arc_usable, &mut arc_nvlink), node_lists)
        })
    } else {
        fill_graph(&mut graph);
        node_part((&mut arc_usable, &mut arc_nvlink), node_lists)
    };
    let NodePart {
        nodes,
        nics,
        other_access,
        gpus,
        domains,
        line: port_line,
        resource: port_resource,
    } = node_part?;
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
    } = std::mem::take(&mut graph);
    let mut fab = Fabric {
        library: super::Library::of(design, catalog),
        in_network,
        is_node,
        arc_usable,
        link_line,
        port_line,
        port_resource,
        arc_nvlink,
        gpus,
        nodes,
        nics,
        other_access,
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
    Kept::give(|k| {
        k.ends = ends;
        k.dev_links = dev_links;
    });
    eff::apply_calibration(&mut fab, design);
    Ok(fab)
}

/// The GPU nodes' side of the fabric: nodes, GPUs, scale-up domains, and the port arcs (GPU
/// scale-up and PCIe, NIC PCIe), numbered after the link arcs. Their usable capacity and
/// NVLink flag go straight onto the fabric's per-arc lists.
struct NodePart {
    nodes: Vec<Node>,
    nics: Vec<Nic>,
    other_access: Vec<(ArcId, ArcId, Vx)>,
    gpus: Vec<Gpu>,
    domains: Vec<Domain>,
    line: Vec<f64>,
    resource: Vec<Resource>,
}

/// Kept lists for `NodePart::build` to fill again.
struct NodeLists {
    line: Vec<f64>,
    resource: Vec<Resource>,
    gpus: Vec<Gpu>,
    nics: Vec<Nic>,
    other_access: Vec<(ArcId, ArcId, Vx)>,
}

impl NodePart {
    fn build<'d>(
        design: &'d Design,
        catalog: &Catalog,
        index_of: &DeviceIndex,
        links_of: &(dyn Fn(usize) -> &'d [DevLink] + Sync),
        (usable, nvlink): (&mut Vec<f64>, &mut Vec<bool>),
        (node_total, gpu_total, nic_total, port_estimate): (usize, usize, usize, usize),
        kept: NodeLists,
    ) -> Result<NodePart, CollectiveError> {
        let mut line = reuse(kept.line, port_estimate);
        let mut resource = reuse(kept.resource, port_estimate);
        // Scale-up domains: rack domains by device, every other node on its own.
        let mut domains: Vec<Domain> = Vec::new();
        let mut rack_domain: HashMap<DeviceId, u32> = HashMap::new();
        let mut nodes: Vec<Node> = Vec::with_capacity(node_total);
        let mut nics = reuse(kept.nics, nic_total);
        let mut other_access = reuse(kept.other_access, nic_total);
        let mut gpus = reuse(kept.gpus, gpu_total);
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
                    domains.push(Domain::default());
                    domains.len() as u32 - 1
                }),
                None => {
                    domains.push(Domain::default());
                    domains.len() as u32 - 1
                }
            };
            let members = &mut domains[domain as usize];
            members.nodes += 1;
            members.gpus += n.gpu_count;

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
            let first_nic = nics.len() as u32;
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
                    .find(|l| l.nic == ni as u32)
                    .map(|l| (l.out, l.inn, l.far));
                nics.push(Nic {
                    pcie_up: up,
                    pcie_down: up + 1,
                    access,
                });
            }
            let nic_ports = k;
            let first_other = other_access.len() as u32;
            other_access.extend(
                links
                    .iter()
                    .filter(|l| l.nic >= nic_ports)
                    .map(|l| (l.out, l.inn, l.far)),
            );
            if other_access.len() as u32 == first_other {
                other_access.extend(links.iter().map(|l| (l.out, l.inn, l.far)));
            }
            nodes.push(Node {
                device: d.id,
                vertex: i as Vx,
                first_gpu,
                gpu_count: n.gpu_count,
                intra,
                p2p,
                domain,
                nics: first_nic..nics.len() as u32,
                other_access: first_other..other_access.len() as u32,
                arch,
            });
        }
        Ok(NodePart {
            nodes,
            nics,
            other_access,
            gpus,
            domains,
            line,
            resource,
        })
    }
}

/// The routing graph over transit devices, with its twin classes and their quotient graph.
#[derive(Default)]
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
    /// Empty lists with room for a design of `n_dev` devices and `link_ends` routable link
    /// ends (`adj` and `groups` are kept lists to fill again), made on the calling thread,
    /// which will free them too.
    fn with_capacity(
        n_dev: usize,
        link_ends: usize,
        (adj, groups): (Vec<Adj>, Vec<AdjGroup>),
    ) -> RoutingGraph {
        RoutingGraph {
            adj_start: Vec::with_capacity(n_dev + 1),
            adj: reuse(adj, link_ends),
            grp_start: Vec::with_capacity(n_dev + 1),
            groups: reuse(groups, link_ends),
            class: Vec::with_capacity(n_dev),
            class_count: 0,
            class_adj_start: Vec::with_capacity(n_dev + 1),
            class_adj: Vec::new(),
            in_network: Vec::with_capacity(n_dev),
            is_node: Vec::with_capacity(n_dev),
        }
    }

    /// Fills the lists (empty, made by `with_capacity` for this design).
    fn fill<'d>(
        &mut self,
        design: &'d Design,
        transit: &[bool],
        links_of: &(dyn Fn(usize) -> &'d [DevLink] + Sync),
    ) {
        let RoutingGraph {
            mut adj_start,
            mut adj,
            mut grp_start,
            mut groups,
            mut class,
            mut class_adj_start,
            mut class_adj,
            mut in_network,
            mut is_node,
            ..
        } = std::mem::take(self);
        let n_dev = design.devices.len();
        // Routing graph over transit devices: each one's transit neighbours, in link order.
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
        class.resize(n_dev, u32::MAX);
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

        for &rep in &class_rep {
            class_adj_start.push(class_adj.len() as u32);
            let (s, e) = (
                grp_start[rep as usize] as usize,
                grp_start[rep as usize + 1] as usize,
            );
            class_adj.extend(groups[s..e].iter().map(|g| g.class));
        }
        class_adj_start.push(class_adj.len() as u32);
        in_network.extend(
            design.devices.iter().map(
                |d| matches!(&d.kind, DeviceKind::Switch(s) if s.features.in_network_reduction),
            ),
        );
        is_node.extend(
            design
                .devices
                .iter()
                .map(|d| matches!(d.kind, DeviceKind::GpuNode(_))),
        );
        *self = RoutingGraph {
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
        };
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

#[cfg(test)]
mod tests {
    use super::*;
    use crate::analysis::collective::test_designs::rail_optimized;
    use crate::generate::{Template, TemplateSpec, generate};
    use crate::model::{LinkState, PartId};

    /// Everything a build produces, as text (floats to the last bit), to compare builds.
    fn fingerprint(fab: &Fabric) -> String {
        let ports = (
            &fab.arc_usable,
            &fab.link_line,
            &fab.port_line,
            &fab.port_resource,
            &fab.arc_nvlink,
            &fab.gpus,
            &fab.nodes,
            &fab.domains,
            &fab.switch_latency_us,
            &fab.link_latency_us,
            &fab.device_ids,
            &fab.link_ids,
        );
        let graph = (
            &fab.transit,
            &fab.is_node,
            &fab.in_network,
            &fab.adj_start,
            &fab.adj,
            &fab.grp_start,
            &fab.groups,
            &fab.class,
            fab.class_count,
            &fab.class_adj_start,
            &fab.class_adj,
        );
        let nodes = (&fab.nics, &fab.other_access);
        format!("{ports:?}\n{graph:?}\n{nodes:?}")
    }

    fn build_in(halves: bool, design: &Design, catalog: &Catalog) -> String {
        BUILD_IN_HALVES.with(|c| c.set(Some(halves)));
        let fab = build(design, catalog).map(|f| fingerprint(&f));
        BUILD_IN_HALVES.with(|c| c.set(None));
        fab.expect("fabric")
    }

    /// A rail-optimized design with the irregular cases the link pass handles: a failed and a
    /// degraded link, a link whose far device is missing, a switch model the catalog lacks
    /// (its latency comes from its first link) and a lossy switch.
    fn irregular() -> Design {
        let mut d = rail_optimized(16, "dgx-h100", 2);
        d.links[3].state = LinkState::Failed;
        d.links[7].state = LinkState::Degraded { fraction: 0.5 };
        let last = d.links.len() - 1;
        d.links[last].b.device = DeviceId(u32::MAX / 2);
        let mut switches = d.devices.iter_mut().filter_map(|dev| match &mut dev.kind {
            DeviceKind::Switch(s) => Some(s),
            _ => None,
        });
        if let Some(s) = switches.next() {
            s.model = PartId::new("no-such-switch");
        }
        if let Some(s) = switches.next() {
            s.features.lossless = false;
        }
        d
    }

    #[test]
    fn halves_build_what_one_piece_builds() {
        let catalog = Catalog::builtin();
        let mut rack = TemplateSpec::new(Template::Nvl72);
        rack.nodes = Some(2);
        let mut tb_ring = TemplateSpec::new(Template::Ring);
        tb_ring.nodes = Some(4);
        tb_ring.node = Some(PartId::new("mac-studio-m3-ultra"));
        let designs = [
            ("rail-optimized", rail_optimized(64, "dgx-h100", 2)),
            ("irregular", irregular()),
            ("nvl72 racks", generate(&rack, &catalog).expect("nvl72")),
            (
                "thunderbolt ring",
                generate(&tb_ring, &catalog).expect("ring"),
            ),
        ];
        for (name, design) in &designs {
            let whole = build_in(false, design, &catalog);
            let halves = build_in(true, design, &catalog);
            assert!(whole == halves, "{name}: the halves build another fabric");
            // Again, now into the lists the builds above left behind.
            assert!(
                build_in(true, design, &catalog) == whole,
                "{name}: kept lists"
            );
        }
    }

    #[test]
    fn a_switch_without_catalog_latency_takes_its_first_links() {
        let design = irregular();
        let catalog = Catalog::builtin();
        let fab = build(&design, &catalog).expect("fabric");
        let unknown = design
            .devices
            .iter()
            .position(|d| matches!(&d.kind, DeviceKind::Switch(s) if s.model.as_str() == "no-such-switch"))
            .expect("renamed switch");
        let first_link = design
            .links
            .iter()
            .find(|l| {
                l.a.device == design.devices[unknown].id || l.b.device == design.devices[unknown].id
            })
            .expect("a link");
        assert_eq!(
            fab.switch_latency_us[unknown],
            eff::default_switch_latency_us(first_link.tech)
        );
    }

    #[test]
    fn a_small_design_does_not_hold_a_large_designs_lists() {
        let catalog = Catalog::builtin();
        let large = rail_optimized(128, "dgx-h100", 2);
        let small = rail_optimized(2, "dgx-h100", 2);
        let big = build(&large, &catalog).expect("large");
        let big_arcs = big.arc_count();
        drop(big);
        let fab = build(&small, &catalog).expect("small");
        let n = fab.arc_count();
        assert!(big_arcs > 2 * n + 4096, "{big_arcs} arcs against {n}");
        assert!(fab.arc_usable.capacity() <= 2 * n + 4096);
        assert!(fab.port_resource.capacity() <= 2 * n + 4096);
        assert!(fab.adj.capacity() <= 2 * fab.adj.len().max(1) + 4096);
    }
}
