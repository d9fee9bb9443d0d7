//! The design as a graph for structural metrics: one vertex per device, except that the GPU
//! nodes of an NVSwitch domain share the domain's vertex (NVLink inside a rack is never cut).
//! A *unit* is a vertex holding GPUs: a lone GPU node, or a whole domain with its trays.
//!
//! `FlowNetwork` turns that graph into a max-flow network on compressed arrays (CSR) with a
//! super-source and a super-sink wired to every unit, so that many bipartitions can be tried
//! on one network by switching those attachments on and off.

use crate::model::validate::MAX_LINK_GBIT_S;
use crate::model::{Bandwidth, Design, DeviceId, DeviceKind, GpuNode};
use std::collections::HashMap;
use std::fmt;

/// Capacities are whole Mb/s in the flow network: integer sums are exact, so max-flow never
/// loops on a float residue, and 1 Mb/s is far below anything a design can tell apart.
const MBIT_PER_GBIT: f64 = 1000.0;
/// The fastest link the validator accepts (lanes times lane rate, 102.4 Pb/s), in Mb/s:
/// anything faster is clamped to it. Arcs hold 64-bit Mb/s, so even a unit's sum over the
/// most links a design may have stays far from overflow.
const LINK_LIMIT_MBIT: f64 = MAX_LINK_GBIT_S * MBIT_PER_GBIT;
const NO_UNIT: u32 = u32::MAX;
const UNSEEN: u32 = u32::MAX;

/// Converts a per-direction bandwidth to whole Mb/s; NaN, negative or zero give 0.
pub fn to_mbit(bandwidth: Bandwidth) -> u64 {
    let mbit = bandwidth.gbit_s() * MBIT_PER_GBIT;
    if mbit.is_nan() || mbit <= 0.0 {
        0
    } else {
        mbit.min(LINK_LIMIT_MBIT).round() as u64
    }
}

pub fn from_mbit(mbit: u64) -> Bandwidth {
    Bandwidth::from_gbit_s(mbit as f64 / MBIT_PER_GBIT)
}

/// A vertex holding GPUs, kept whole by every bipartition.
#[derive(Debug, Clone)]
pub struct Unit {
    pub vertex: u32,
    /// Index in `design.devices` of the device standing for the unit: the node itself, or
    /// the NVSwitch domain its trays belong to.
    pub lead: usize,
    pub gpus: u64,
    /// Scale-out injection of the unit at nominal rates (what it was built to send): its
    /// nodes' NIC links, or all their links for nodes cabled directly (Thunderbolt, ...).
    pub injection: Bandwidth,
}

/// One working link between two different vertices.
#[derive(Debug, Clone, Copy)]
pub struct Edge {
    pub a: u32,
    pub b: u32,
    /// Per direction, in whole Mb/s, faults applied; always positive.
    pub capacity_mbit: u64,
    /// Index in `design.links`.
    pub link: usize,
    /// Indices in `design.devices` of the devices at ends a and b.
    pub device_a: u32,
    pub device_b: u32,
}

#[derive(Debug, Clone)]
pub struct FabricGraph {
    pub vertex_count: usize,
    /// Vertex of each device, aligned with `design.devices`.
    pub device_vertex: Vec<u32>,
    pub units: Vec<Unit>,
    /// Unit index of each vertex, `None` for switches, hosts and empty nodes.
    unit_of_vertex: Vec<u32>,
    /// Working links only (capacity above zero, ends on different vertices).
    pub edges: Vec<Edge>,
    /// NIC count of each device (ports below it are NIC ports), aligned with
    /// `design.devices`; 0 for anything but a GPU node.
    pub nic_ports: Vec<u32>,
}

/// Maps device ids to indices in `design.devices`; a plain table when ids are dense, as
/// they are in any design the tool writes, a hash map for odd hand-edited files. With a
/// repeated id (an invalid file), the later device wins.
pub(crate) enum DeviceIndex {
    Dense(Vec<u32>),
    Sparse(HashMap<u32, u32>),
}

impl DeviceIndex {
    pub(crate) fn new(design: &Design) -> Self {
        Self::with_repeats(design, |_| {})
    }

    /// Builds the index and calls `repeat` with the position of every device whose id an
    /// earlier device already has.
    pub(crate) fn with_repeats(design: &Design, mut repeat: impl FnMut(usize)) -> Self {
        let max_id = design.devices.iter().map(|d| d.id.0).max().unwrap_or(0) as usize;
        if max_id <= 4 * design.devices.len() + 1024 {
            let mut table = vec![u32::MAX; max_id + 1];
            for (i, d) in design.devices.iter().enumerate() {
                let slot = &mut table[d.id.0 as usize];
                if *slot != u32::MAX {
                    repeat(i);
                }
                *slot = i as u32;
            }
            DeviceIndex::Dense(table)
        } else {
            let mut map = HashMap::with_capacity(design.devices.len());
            for (i, d) in design.devices.iter().enumerate() {
                if map.insert(d.id.0, i as u32).is_some() {
                    repeat(i);
                }
            }
            DeviceIndex::Sparse(map)
        }
    }

    #[inline]
    pub(crate) fn get(&self, id: DeviceId) -> Option<usize> {
        match self {
            DeviceIndex::Dense(t) => t
                .get(id.0 as usize)
                .copied()
                .filter(|&i| i != u32::MAX)
                .map(|i| i as usize),
            DeviceIndex::Sparse(m) => m.get(&id.0).map(|&i| i as usize),
        }
    }
}

impl FabricGraph {
    pub fn new(design: &Design) -> Self {
        let index = DeviceIndex::new(design);
        let n = design.devices.len();

        // Domains first, so that their trays can point at their vertex.
        let mut device_vertex = vec![u32::MAX; n];
        let mut vertex_count = 0u32;
        for (i, d) in design.devices.iter().enumerate() {
            let merged = match &d.kind {
                DeviceKind::GpuNode(node) => domain_index(design, &index, node).is_some(),
                _ => false,
            };
            if !merged {
                device_vertex[i] = vertex_count;
                vertex_count += 1;
            }
        }
        for (i, d) in design.devices.iter().enumerate() {
            if let DeviceKind::GpuNode(node) = &d.kind
                && let Some(domain) = domain_index(design, &index, node)
            {
                device_vertex[i] = device_vertex[domain];
            }
        }
        let vertex_count = vertex_count as usize;

        let mut gpus_of_vertex = vec![0u64; vertex_count];
        let mut lead_of_vertex = vec![usize::MAX; vertex_count];
        for (i, d) in design.devices.iter().enumerate() {
            let v = device_vertex[i] as usize;
            if let DeviceKind::GpuNode(node) = &d.kind {
                gpus_of_vertex[v] += u64::from(node.gpu_count);
            }
            // The domain device leads its unit; a lone node leads itself.
            if lead_of_vertex[v] == usize::MAX || !matches!(d.kind, DeviceKind::GpuNode(_)) {
                lead_of_vertex[v] = i;
            }
        }

        // Injection per node at nominal rate: NIC-port links, else every outside link.
        let nic_ports: Vec<u32> = design
            .devices
            .iter()
            .map(|d| match &d.kind {
                DeviceKind::GpuNode(node) => u32::try_from(node.nics.len()).unwrap_or(u32::MAX),
                _ => 0,
            })
            .collect();
        let mut nic_mbit = vec![0u64; n];
        let mut any_mbit = vec![0u64; n];
        let mut edges = Vec::with_capacity(design.links.len());
        for (li, link) in design.links.iter().enumerate() {
            let (Some(ia), Some(ib)) = (index.get(link.a.device), index.get(link.b.device)) else {
                continue;
            };
            let (va, vb) = (device_vertex[ia], device_vertex[ib]);
            if va == vb {
                continue;
            }
            let nominal = to_mbit(link.nominal_capacity());
            for (i, port) in [(ia, link.a.port), (ib, link.b.port)] {
                any_mbit[i] = any_mbit[i].saturating_add(nominal);
                if port.nic().is_some_and(|slot| slot < nic_ports[i]) {
                    nic_mbit[i] = nic_mbit[i].saturating_add(nominal);
                }
            }
            let capacity_mbit = to_mbit(link.capacity());
            if capacity_mbit > 0 {
                edges.push(Edge {
                    a: va,
                    b: vb,
                    capacity_mbit,
                    link: li,
                    device_a: ia as u32,
                    device_b: ib as u32,
                });
            }
        }
        let mut injection_of_vertex = vec![0u64; vertex_count];
        for (i, d) in design.devices.iter().enumerate() {
            let own = match &d.kind {
                DeviceKind::GpuNode(_) if nic_mbit[i] > 0 => nic_mbit[i],
                DeviceKind::GpuNode(_) | DeviceKind::NvSwitchDomain(_) => any_mbit[i],
                _ => 0,
            };
            let v = device_vertex[i] as usize;
            injection_of_vertex[v] = injection_of_vertex[v].saturating_add(own);
        }

        let mut unit_of_vertex = vec![NO_UNIT; vertex_count];
        let mut units = Vec::new();
        for v in 0..vertex_count {
            if gpus_of_vertex[v] > 0 {
                unit_of_vertex[v] = units.len() as u32;
                units.push(Unit {
                    vertex: v as u32,
                    lead: lead_of_vertex[v],
                    gpus: gpus_of_vertex[v],
                    injection: from_mbit(injection_of_vertex[v]),
                });
            }
        }

        FabricGraph {
            vertex_count,
            device_vertex,
            units,
            unit_of_vertex,
            edges,
            nic_ports,
        }
    }

    pub fn unit_of_vertex(&self, vertex: u32) -> Option<usize> {
        self.unit_of_vertex
            .get(vertex as usize)
            .copied()
            .filter(|&u| u != NO_UNIT)
            .map(|u| u as usize)
    }

    pub fn total_gpus(&self) -> u64 {
        self.units.iter().map(|u| u.gpus).sum()
    }

    /// Number of separate islands the units fall into over working links.
    pub fn unit_islands(&self) -> usize {
        let mut parent: Vec<u32> = (0..self.vertex_count as u32).collect();
        fn find(parent: &mut [u32], mut v: u32) -> u32 {
            while parent[v as usize] != v {
                let up = parent[parent[v as usize] as usize];
                parent[v as usize] = up;
                v = up;
            }
            v
        }
        for e in &self.edges {
            let (ra, rb) = (find(&mut parent, e.a), find(&mut parent, e.b));
            if ra != rb {
                parent[ra as usize] = rb;
            }
        }
        let mut roots: Vec<u32> = self
            .units
            .iter()
            .map(|u| find(&mut parent, u.vertex))
            .collect();
        roots.sort_unstable();
        roots.dedup();
        roots.len()
    }
}

/// The index of the NVSwitch domain a node belongs to, when that device exists and is one.
fn domain_index(design: &Design, index: &DeviceIndex, node: &GpuNode) -> Option<usize> {
    let i = index.get(node.domain?)?;
    matches!(design.devices[i].kind, DeviceKind::NvSwitchDomain(_)).then_some(i)
}

/// Outcome of one max-flow run.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Flow {
    /// The maximum flow, in Mb/s.
    Complete(u64),
    /// The flow reached the given limit; the run stopped there.
    AtLeast(u64),
}

/// An arc's far end and what it can still carry, side by side: the search reads both at
/// once, and on fabrics of 100,000 GPUs memory traffic is the cost.
#[derive(Debug, Clone, Copy, Default)]
struct Arc<R> {
    head: u32,
    residual: R,
}

/// Residual capacities in Mb/s. Most designs fit 32 bits, which halves the memory the
/// search walks through; a design with links near the validator's limit needs 64.
trait Residual: Copy + Default + Ord + std::ops::SubAssign + Into<u64> + fmt::Debug {
    /// What a source or sink arc carries: more than the links of any one unit together.
    const UNLIMITED: Self;
    const ZERO: Self;
    /// Only called with values that fit (see `FlowNetwork::new`).
    fn narrow(v: u64) -> Self;
    fn saturating_add(self, other: Self) -> Self;
}

impl Residual for u32 {
    const UNLIMITED: Self = u32::MAX;
    const ZERO: Self = 0;
    fn narrow(v: u64) -> Self {
        u32::try_from(v).unwrap_or(u32::MAX)
    }
    fn saturating_add(self, other: Self) -> Self {
        u32::saturating_add(self, other)
    }
}

impl Residual for u64 {
    const UNLIMITED: Self = u64::MAX / 4;
    const ZERO: Self = 0;
    fn narrow(v: u64) -> Self {
        v
    }
    fn saturating_add(self, other: Self) -> Self {
        u64::saturating_add(self, other)
    }
}

/// A reusable max-flow network over a `FabricGraph` (Dinic's algorithm on CSR arrays).
///
/// Each link is a pair of opposite arcs, each the other's reverse, both with the link's
/// capacity: pushing flow one way frees capacity the other way, which is exactly an
/// undirected edge. Every unit has an arc from the source and one to the sink; a run turns
/// on the source arcs of half A and the sink arcs of half B.
#[derive(Debug, Clone)]
pub struct FlowNetwork(Width);

#[derive(Debug, Clone)]
enum Width {
    Narrow(Network<u32>),
    Wide(Network<u64>),
}

impl FlowNetwork {
    pub fn new(graph: &FabricGraph) -> Self {
        // A source arc carries at most what its unit's links carry, and a link arc at most
        // twice its capacity: 32 bits hold both when every vertex's links sum below 2^31.
        let mut sum = vec![0u64; graph.vertex_count];
        for e in &graph.edges {
            sum[e.a as usize] = sum[e.a as usize].saturating_add(e.capacity_mbit);
            sum[e.b as usize] = sum[e.b as usize].saturating_add(e.capacity_mbit);
        }
        if sum.iter().all(|&s| s < 1 << 31) {
            FlowNetwork(Width::Narrow(Network::new(graph)))
        } else {
            FlowNetwork(Width::Wide(Network::new(graph)))
        }
    }

    pub fn arc_count(&self) -> usize {
        match &self.0 {
            Width::Narrow(n) => n.arcs.len(),
            Width::Wide(n) => n.arcs.len(),
        }
    }

    /// Maximum flow in Mb/s from the units with `in_a[u]` to the others, stopping early once
    /// it reaches `limit` (pass `u64::MAX` for none).
    pub fn max_flow(&mut self, in_a: &[bool], limit: u64) -> Flow {
        match &mut self.0 {
            Width::Narrow(n) => n.max_flow(in_a, limit),
            Width::Wide(n) => n.max_flow(in_a, limit),
        }
    }

    /// After a complete `max_flow`: which fabric vertices the source still reaches in the
    /// residual network. That set is the source side of a minimum cut.
    pub fn source_side(&mut self) -> Vec<bool> {
        match &mut self.0 {
            Width::Narrow(n) => n.source_side(),
            Width::Wide(n) => n.source_side(),
        }
    }
}

#[derive(Debug, Clone)]
struct Network<R> {
    /// Vertices of the fabric; the source and sink come after them.
    fabric_vertices: u32,
    source: u32,
    sink: u32,
    first: Vec<u32>,
    arcs: Vec<Arc<R>>,
    mate: Vec<u32>,
    capacity: Vec<R>,
    /// Arc from the source to each unit, and from each unit to the sink.
    source_arc: Vec<u32>,
    sink_arc: Vec<u32>,
    level: Vec<u32>,
    cursor: Vec<u32>,
    queue: Vec<u32>,
    path: Vec<u32>,
}

impl<R: Residual> Network<R> {
    fn new(graph: &FabricGraph) -> Self {
        let fabric_vertices = graph.vertex_count as u32;
        let source = fabric_vertices;
        let sink = fabric_vertices + 1;
        let vertices = graph.vertex_count + 2;

        let mut first = vec![0u32; vertices + 1];
        for e in &graph.edges {
            first[e.a as usize + 1] += 1;
            first[e.b as usize + 1] += 1;
        }
        for u in &graph.units {
            first[u.vertex as usize + 1] += 2;
        }
        first[source as usize + 1] += graph.units.len() as u32;
        first[sink as usize + 1] += graph.units.len() as u32;
        for v in 0..vertices {
            first[v + 1] += first[v];
        }
        let arc_count = first[vertices] as usize;
        let mut fill = first.clone();
        let mut arcs = vec![Arc::default(); arc_count];
        let mut mate = vec![0u32; arc_count];
        let mut capacity = vec![R::ZERO; arc_count];
        let mut add_pair = |from: u32, to: u32, both_ways: R| -> u32 {
            let x = fill[from as usize];
            fill[from as usize] += 1;
            let y = fill[to as usize];
            fill[to as usize] += 1;
            arcs[x as usize].head = to;
            arcs[y as usize].head = from;
            mate[x as usize] = y;
            mate[y as usize] = x;
            capacity[x as usize] = both_ways;
            capacity[y as usize] = both_ways;
            x
        };
        for e in &graph.edges {
            add_pair(e.a, e.b, R::narrow(e.capacity_mbit));
        }
        let mut source_arc = Vec::with_capacity(graph.units.len());
        let mut sink_arc = Vec::with_capacity(graph.units.len());
        for u in &graph.units {
            source_arc.push(add_pair(source, u.vertex, R::ZERO));
            sink_arc.push(add_pair(u.vertex, sink, R::ZERO));
        }

        Network {
            fabric_vertices,
            source,
            sink,
            first,
            arcs,
            mate,
            capacity,
            source_arc,
            sink_arc,
            level: vec![UNSEEN; vertices],
            cursor: vec![0; vertices],
            queue: Vec::with_capacity(vertices),
            path: Vec::new(),
        }
    }

    fn max_flow(&mut self, in_a: &[bool], limit: u64) -> Flow {
        for (arc, &c) in self.arcs.iter_mut().zip(&self.capacity) {
            arc.residual = c;
        }
        for (u, &a) in in_a.iter().enumerate() {
            let (on, off) = if a {
                (self.source_arc[u], self.sink_arc[u])
            } else {
                (self.sink_arc[u], self.source_arc[u])
            };
            self.arcs[on as usize].residual = R::UNLIMITED;
            self.arcs[off as usize].residual = R::ZERO;
        }
        let mut flow = 0u64;
        while self.build_levels() {
            flow = flow.saturating_add(self.blocking_flow(limit.saturating_sub(flow)));
            if flow >= limit {
                return Flow::AtLeast(flow);
            }
        }
        Flow::Complete(flow)
    }

    fn source_side(&mut self) -> Vec<bool> {
        let mut seen = vec![false; self.fabric_vertices as usize + 2];
        self.queue.clear();
        self.queue.push(self.source);
        seen[self.source as usize] = true;
        let mut i = 0;
        while i < self.queue.len() {
            let v = self.queue[i] as usize;
            i += 1;
            for arc in &self.arcs[self.first[v] as usize..self.first[v + 1] as usize] {
                if arc.residual > R::ZERO && !seen[arc.head as usize] {
                    seen[arc.head as usize] = true;
                    self.queue.push(arc.head);
                }
            }
        }
        seen.truncate(self.fabric_vertices as usize);
        seen
    }

    /// Breadth-first levels from the source over arcs with residual capacity; false when
    /// the sink is out of reach (the flow is maximum).
    fn build_levels(&mut self) -> bool {
        self.level.fill(UNSEEN);
        self.queue.clear();
        self.level[self.source as usize] = 0;
        self.queue.push(self.source);
        let mut i = 0;
        while i < self.queue.len() {
            let v = self.queue[i] as usize;
            i += 1;
            let next = self.level[v] + 1;
            if next > self.level[self.sink as usize] {
                break;
            }
            for arc in &self.arcs[self.first[v] as usize..self.first[v + 1] as usize] {
                if arc.residual > R::ZERO && self.level[arc.head as usize] == UNSEEN {
                    self.level[arc.head as usize] = next;
                    self.queue.push(arc.head);
                }
            }
        }
        self.level[self.sink as usize] != UNSEEN
    }

    /// Augments along shortest paths until the level graph is blocked (or `limit` is met),
    /// with an explicit path stack: rings of thousands of Macs would overflow recursion.
    fn blocking_flow(&mut self, limit: u64) -> u64 {
        let sink_level = self.level[self.sink as usize];
        let vertices = self.cursor.len();
        self.cursor.copy_from_slice(&self.first[..vertices]);
        self.path.clear();
        let mut total = 0u64;
        let mut v = self.source;
        loop {
            if v == self.sink {
                let pushed = self
                    .path
                    .iter()
                    .map(|&a| self.arcs[a as usize].residual)
                    .min()
                    .unwrap_or(R::ZERO);
                for &a in &self.path {
                    self.arcs[a as usize].residual -= pushed;
                    let m = self.mate[a as usize] as usize;
                    self.arcs[m].residual = self.arcs[m].residual.saturating_add(pushed);
                }
                total = total.saturating_add(pushed.into());
                if total >= limit {
                    return total;
                }
                // Back up to the tail of the first arc the push saturated.
                let saturated = self
                    .path
                    .iter()
                    .position(|&a| self.arcs[a as usize].residual == R::ZERO)
                    .unwrap_or(0);
                self.path.truncate(saturated);
                v = match self.path.last() {
                    Some(&a) => self.arcs[a as usize].head,
                    None => self.source,
                };
                continue;
            }
            let end = self.first[v as usize + 1];
            let wanted = self.level[v as usize] + 1;
            let mut advanced = false;
            while self.cursor[v as usize] < end {
                let a = self.cursor[v as usize];
                let arc = self.arcs[a as usize];
                if arc.residual > R::ZERO
                    && self.level[arc.head as usize] == wanted
                    && (wanted < sink_level || arc.head == self.sink)
                {
                    self.path.push(a);
                    v = arc.head;
                    advanced = true;
                    break;
                }
                self.cursor[v as usize] += 1;
            }
            if !advanced {
                // A dead end: retreat and skip the arc that led here.
                let Some(a) = self.path.pop() else {
                    return total;
                };
                v = self.arcs[self.mate[a as usize] as usize].head;
                self.cursor[v as usize] += 1;
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::validate::{MAX_LANE_GBIT_S, MAX_LANES};

    #[test]
    fn links_up_to_the_validator_limit_are_carried_whole() {
        // 1024 lanes × 100,000 Gb/s = 102,400,000 Gb/s = 102,400,000,000 Mb/s.
        let fastest = Bandwidth::from_gbit_s(MAX_LANE_GBIT_S * f64::from(MAX_LANES));
        assert_eq!(to_mbit(fastest), 102_400_000_000);
        // Beyond it (a file the validator would refuse) the link is clamped, not wrapped.
        assert_eq!(to_mbit(fastest * 3.0), 102_400_000_000);
        assert_eq!(to_mbit(Bandwidth::from_gbit_s(400.0)), 400_000);
        assert_eq!(to_mbit(Bandwidth::from_gbit_s(f64::NAN)), 0);
    }
}
