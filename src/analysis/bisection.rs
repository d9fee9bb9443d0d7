//! Bisection bandwidth of the drawn graph: the least max-flow between two halves of the GPUs,
//! over balanced bipartitions that keep every unit (a GPU node, or a whole NVSwitch domain)
//! whole. Switches and hosts take no side: the max-flow finds where to cut around them.
//!
//! Trying every bipartition is exponential, so small designs are enumerated exactly and larger
//! ones try the partitions a designed fabric is cut along: by device order, canvas x and y,
//! group, the leaf a node hangs off, the set of rail leaves it uses, breadth-first order, a
//! spectral ordering, then Kernighan-Lin style swaps around the best cut. The result is
//! exact for small designs and an upper bound on the true minimum otherwise; for the
//! fat-tree and rail templates the candidates include the true worst cut.

use super::graph::{FabricGraph, Flow, FlowNetwork, from_mbit};
use crate::model::{Bandwidth, Catalog, Design, DeviceId, GroupId, LinkId};
use serde::Serialize;
use std::collections::hash_map::DefaultHasher;
use std::collections::{HashMap, HashSet};
use std::fmt;
use std::hash::{Hash, Hasher};

/// Bisection of a design, one direction.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Bisection {
    /// Least max-flow between balanced halves, per direction.
    pub value: Bandwidth,
    /// What full bisection would be: half the GPUs times their scale-out injection.
    pub full: Bandwidth,
    /// `value / full`; `None` when `full` is zero or no bipartition exists.
    pub ratio: Option<f64>,
    /// Links crossing the minimum cut, in id order.
    pub cut_links: Vec<LinkId>,
    pub status: BisectionStatus,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
pub enum BisectionStatus {
    /// A minimum over balanced bipartitions; `exact` when every one of them was tried.
    Ok { exact: bool },
    /// No GPUs: nothing to bisect.
    NoGpus,
    /// All GPUs sit in one node or NVSwitch domain, which no cut may split.
    SingleUnit,
    /// Several GPU units but no working link between any of them.
    NoLinks,
    /// The GPUs fall into separate islands with no path between them.
    NotConnected { islands: usize },
}

impl BisectionStatus {
    pub fn is_ok(self) -> bool {
        matches!(self, BisectionStatus::Ok { .. })
    }
}

impl fmt::Display for BisectionStatus {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            BisectionStatus::Ok { exact: true } => f.write_str("ok (every balanced split tried)"),
            BisectionStatus::Ok { exact: false } => f.write_str("ok (best of candidate splits)"),
            BisectionStatus::NoGpus => f.write_str("n/a: no GPUs"),
            BisectionStatus::SingleUnit => f.write_str("n/a: all GPUs in one node or domain"),
            BisectionStatus::NoLinks => f.write_str("not connected: no working links"),
            BisectionStatus::NotConnected { islands } => {
                write!(f, "not connected: the GPUs form {islands} separate islands")
            }
        }
    }
}

/// Enumerate every balanced bipartition while the estimated work (bipartitions times
/// network size times `FLOW_COST_PER_ARC`) stays under this: about 10 ms, so the sidebar
/// stays live while a small design is edited.
const EXHAUSTIVE_WORK: usize = 4_000_000;
/// A small max-flow visits each arc a few dozen times (several augmenting paths, levels).
const FLOW_COST_PER_ARC: usize = 32;
/// Largest unit count for exhaustive search (2^(n-1) masks to scan).
const EXHAUSTIVE_MAX_UNITS: usize = 16;
/// The spectral ordering and Kernighan-Lin refinement run on networks up to this many arcs
/// (a few thousand links: anything drawn by hand). Past that it is generated fabrics, whose
/// worst cut the structural candidates already hit, and the time goes to them.
const SEARCH_MAX_ARCS: usize = 20_000;
const SPECTRAL_STEPS: usize = 40;
const REFINE_ROUNDS: usize = 6;
const REFINE_TRIES_PER_ROUND: usize = 4;
const REFINE_SHORTLIST: usize = 8;

/// Bisection bandwidth of the drawn graph. Capacities come from the links themselves
/// (`Link::capacity`: degraded links at their fraction, failed ones at zero); the catalog
/// is not needed for that and is taken so callers pass the same arguments to every metric.
pub fn bisection(design: &Design, catalog: &Catalog) -> Bisection {
    let _ = catalog;
    let graph = FabricGraph::new(design);
    let total_injection: Bandwidth = graph.units.iter().map(|u| u.injection).sum();
    let full = total_injection / 2.0;
    let degenerate = |status| Bisection {
        value: Bandwidth::ZERO,
        full,
        ratio: match status {
            BisectionStatus::NotConnected { .. } | BisectionStatus::NoLinks
                if full.gbit_s() > 0.0 =>
            {
                Some(0.0)
            }
            _ => None,
        },
        cut_links: Vec::new(),
        status,
    };
    if graph.total_gpus() == 0 {
        return degenerate(BisectionStatus::NoGpus);
    }
    if graph.units.len() == 1 {
        return degenerate(BisectionStatus::SingleUnit);
    }
    if graph.edges.is_empty() {
        return degenerate(BisectionStatus::NoLinks);
    }
    let islands = graph.unit_islands();
    if islands > 1 {
        return degenerate(BisectionStatus::NotConnected { islands });
    }

    let mut search = Search::new(&graph);
    let exact = search.exhaustive(&graph);
    if !exact {
        search.structural_candidates(design, &graph);
        if search.network.arc_count() <= SEARCH_MAX_ARCS {
            search.refine(&graph);
        }
    }

    // Every run scores at least one bipartition without a limit, so a best exists.
    debug_assert!(!search.best_sides.is_empty());
    let value = if search.best_sides.is_empty() {
        Bandwidth::ZERO
    } else {
        from_mbit(search.best_value)
    };
    let mut cut_links: Vec<LinkId> = graph
        .edges
        .iter()
        .filter(|e| search.best_reach[e.a as usize] != search.best_reach[e.b as usize])
        .map(|e| design.links[e.link].id)
        .collect();
    cut_links.sort_unstable();
    cut_links.dedup();
    Bisection {
        value,
        full,
        ratio: (full.gbit_s() > 0.0).then(|| value / full),
        cut_links,
        status: BisectionStatus::Ok { exact },
    }
}

/// Max-flow, one direction, from the GPU units holding any of the devices in `half_a` to
/// all other units: the bandwidth across one chosen split ("what if the job runs on these
/// racks and those"). `None` when either half has no GPUs.
pub fn partition_flow(design: &Design, half_a: &[DeviceId]) -> Option<Bandwidth> {
    let graph = FabricGraph::new(design);
    let wanted: HashSet<DeviceId> = half_a.iter().copied().collect();
    let mut sides = vec![false; graph.units.len()];
    for (i, device) in design.devices.iter().enumerate() {
        if wanted.contains(&device.id)
            && let Some(u) = graph.unit_of_vertex(graph.device_vertex[i])
        {
            sides[u] = true;
        }
    }
    if !sides.contains(&true) || !sides.contains(&false) {
        return None;
    }
    match FlowNetwork::new(&graph).max_flow(&sides, u64::MAX) {
        Flow::Complete(mbit) | Flow::AtLeast(mbit) => Some(from_mbit(mbit)),
    }
}

/// The best bipartition found so far and the network that scores the candidates.
struct Search {
    network: FlowNetwork,
    best_value: u64,
    /// Side of each unit, `true` for half A (attached to the source).
    best_sides: Vec<bool>,
    /// Source side of the best minimum cut, per fabric vertex.
    best_reach: Vec<bool>,
    tried: HashSet<u64>,
    gpus: Vec<u64>,
    total_gpus: u64,
    smallest_unit: u64,
}

impl Search {
    fn new(graph: &FabricGraph) -> Self {
        let gpus: Vec<u64> = graph.units.iter().map(|u| u.gpus).collect();
        Search {
            network: FlowNetwork::new(graph),
            best_value: u64::MAX,
            best_sides: Vec::new(),
            best_reach: vec![false; graph.vertex_count],
            tried: HashSet::new(),
            total_gpus: gpus.iter().sum(),
            smallest_unit: gpus.iter().copied().min().unwrap_or(0),
            gpus,
        }
    }

    /// GPU count difference between the halves.
    fn imbalance(&self, gpus_a: u64) -> u64 {
        (2 * gpus_a).abs_diff(self.total_gpus)
    }

    /// Scores one bipartition (each unit's side); returns whether it beat the best. The
    /// max-flow stops as soon as it reaches the best value, so losers cost little.
    fn try_sides(&mut self, mut sides: Vec<bool>) -> bool {
        if sides.first() == Some(&false) {
            sides.iter_mut().for_each(|s| *s = !*s);
        }
        if !sides.contains(&true) || !sides.contains(&false) {
            return false;
        }
        let mut hasher = DefaultHasher::new();
        sides.hash(&mut hasher);
        if !self.tried.insert(hasher.finish()) {
            return false;
        }
        match self.network.max_flow(&sides, self.best_value) {
            Flow::Complete(value) if value < self.best_value => {
                self.best_value = value;
                self.best_reach = self.network.source_side();
                self.best_sides = sides;
                true
            }
            _ => false,
        }
    }

    /// Splits an ordering of the units at the point where the halves are most even.
    fn try_order(&mut self, order: &[usize]) -> bool {
        let mut best_cut = 0;
        let mut best_imbalance = u64::MAX;
        let mut gpus_a = 0;
        for (k, &u) in order.iter().enumerate() {
            gpus_a += self.gpus[u];
            let imbalance = self.imbalance(gpus_a);
            if imbalance < best_imbalance {
                best_imbalance = imbalance;
                best_cut = k + 1;
            }
        }
        let mut sides = vec![false; self.gpus.len()];
        for &u in &order[..best_cut] {
            sides[u] = true;
        }
        self.try_sides(sides)
    }

    /// Tries every balanced bipartition when there are few; returns whether it did.
    /// Balanced: the halves' GPU counts differ by no more than the smallest unit holds, or
    /// by the least the unit sizes allow.
    fn exhaustive(&mut self, graph: &FabricGraph) -> bool {
        let n = self.gpus.len();
        if n > EXHAUSTIVE_MAX_UNITS {
            return false;
        }
        // Unit 0 stays in half A: each bipartition once.
        let masks = 1u64 << (n - 1);
        let gpus_a = |mask: u64| {
            self.gpus[0]
                + (1..n)
                    .filter(|&u| mask >> (u - 1) & 1 == 1)
                    .map(|u| self.gpus[u])
                    .sum::<u64>()
        };
        let least = (0..masks)
            .map(|m| self.imbalance(gpus_a(m)))
            .min()
            .unwrap_or(0);
        let tolerance = least.max(self.smallest_unit);
        let balanced: Vec<u64> = (0..masks)
            .filter(|&m| self.imbalance(gpus_a(m)) <= tolerance)
            .collect();
        let work = balanced
            .len()
            .saturating_mul(self.network.arc_count() + graph.vertex_count)
            .saturating_mul(FLOW_COST_PER_ARC);
        if work > EXHAUSTIVE_WORK {
            return false;
        }
        for mask in balanced {
            let sides = (0..n).map(|u| u == 0 || mask >> (u - 1) & 1 == 1).collect();
            self.try_sides(sides);
        }
        true
    }

    fn structural_candidates(&mut self, design: &Design, graph: &FabricGraph) {
        let keys = UnitKeys::new(design, graph);
        let n = graph.units.len();
        let by = |cmp: &dyn Fn(usize, usize) -> std::cmp::Ordering| {
            let mut order: Vec<usize> = (0..n).collect();
            order.sort_by(|&p, &q| cmp(p, q).then(keys.id[p].cmp(&keys.id[q])));
            order
        };
        // Designed fabrics are cut cleanest along their own structure: leaves and rails
        // first, then the layout the user drew, then the graph's own shape.
        let orders = [
            by(&|p, q| keys.leaf[p].cmp(&keys.leaf[q])),
            by(&|p, q| (keys.pod[p], keys.leaf[p]).cmp(&(keys.pod[q], keys.leaf[q]))),
            by(&|p, q| keys.rails[p].cmp(&keys.rails[q])),
            by(&|p, q| keys.group[p].cmp(&keys.group[q])),
            by(&|_, _| std::cmp::Ordering::Equal),
            by(&|p, q| keys.x[p].total_cmp(&keys.x[q])),
            by(&|p, q| keys.y[p].total_cmp(&keys.y[q])),
        ];
        for order in &orders {
            self.try_order(order);
        }
        let (bfs_order, hops) = self.breadth_first(graph);
        self.try_order(&bfs_order);
        if self.network.arc_count() <= SEARCH_MAX_ARCS {
            let spectral = self.spectral_order(graph, &hops);
            self.try_order(&spectral);
        }
    }

    /// Units in breadth-first order from a far-out unit (a pseudo-peripheral one: the
    /// last reached from unit 0), and the hop count of every vertex from it.
    fn breadth_first(&self, graph: &FabricGraph) -> (Vec<usize>, Vec<u32>) {
        let from_first = self.bfs(graph, graph.units[0].vertex);
        let far = from_first
            .iter()
            .rev()
            .find_map(|&v| graph.unit_of_vertex(v))
            .unwrap_or(0);
        let visit = self.bfs(graph, graph.units[far].vertex);
        let mut hops = vec![u32::MAX; graph.vertex_count];
        let mut order = Vec::with_capacity(graph.units.len());
        let mut seen_units = vec![false; graph.units.len()];
        for &v in &visit {
            if let Some(u) = graph.unit_of_vertex(v) {
                order.push(u);
                seen_units[u] = true;
            }
        }
        // Hop counts from a second pass over the visit order (parents come first).
        hops[graph.units[far].vertex as usize] = 0;
        for &v in &visit {
            let h = hops[v as usize];
            for (w, _) in self.network.neighbours(v) {
                if hops[w as usize] == u32::MAX {
                    hops[w as usize] = h.saturating_add(1);
                }
            }
        }
        order.extend((0..graph.units.len()).filter(|&u| !seen_units[u]));
        (order, hops)
    }

    fn bfs(&self, graph: &FabricGraph, start: u32) -> Vec<u32> {
        let mut seen = vec![false; graph.vertex_count];
        let mut queue = vec![start];
        seen[start as usize] = true;
        let mut i = 0;
        while i < queue.len() {
            let v = queue[i];
            i += 1;
            for (w, _) in self.network.neighbours(v) {
                if !seen[w as usize] {
                    seen[w as usize] = true;
                    queue.push(w);
                }
            }
        }
        queue
    }

    /// Units ordered along an approximate Fiedler vector: a few steps of the lazy random
    /// walk (I + D⁻¹W)/2 from the breadth-first hop counts, kept orthogonal to the
    /// stationary vector. It smooths the hop counts towards the graph's sparsest direction.
    fn spectral_order(&self, graph: &FabricGraph, hops: &[u32]) -> Vec<usize> {
        let n = graph.vertex_count;
        let max_capacity = graph
            .edges
            .iter()
            .map(|e| e.capacity_mbit)
            .max()
            .unwrap_or(1) as f64;
        let mut degree = vec![0.0f64; n];
        for e in &graph.edges {
            let w = e.capacity_mbit as f64 / max_capacity;
            degree[e.a as usize] += w;
            degree[e.b as usize] += w;
        }
        let total_degree: f64 = degree.iter().sum();
        let mut x: Vec<f64> = hops
            .iter()
            .map(|&h| if h == u32::MAX { 0.0 } else { f64::from(h) })
            .collect();
        let mut next = vec![0.0f64; n];
        for _ in 0..SPECTRAL_STEPS {
            for v in 0..n {
                next[v] = if degree[v] > 0.0 {
                    let pull: f64 = self
                        .network
                        .neighbours(v as u32)
                        .map(|(w, c)| c as f64 / max_capacity * x[w as usize])
                        .sum();
                    0.5 * (x[v] + pull / degree[v])
                } else {
                    x[v]
                };
            }
            let mean = if total_degree > 0.0 {
                next.iter().zip(&degree).map(|(a, d)| a * d).sum::<f64>() / total_degree
            } else {
                0.0
            };
            let scale = next.iter().map(|a| (a - mean).abs()).fold(0.0f64, f64::max);
            if !(scale.is_finite() && scale > 0.0) {
                break;
            }
            for (xv, nv) in x.iter_mut().zip(&next) {
                *xv = (nv - mean) / scale;
            }
        }
        let mut order: Vec<usize> = (0..graph.units.len()).collect();
        order.sort_by(|&p, &q| {
            let (a, b) = (graph.units[p].vertex, graph.units[q].vertex);
            x[a as usize].total_cmp(&x[b as usize]).then(p.cmp(&q))
        });
        order
    }

    /// Kernighan-Lin style: swap a unit of each half where the current cut says it sits on
    /// the wrong side, and keep the swap when the max-flow drops.
    fn refine(&mut self, graph: &FabricGraph) {
        for _ in 0..REFINE_ROUNDS {
            if self.best_sides.is_empty() {
                return;
            }
            // Gain of moving a unit across with the switches staying put: capacity to the
            // other side minus capacity to its own.
            let gain = |u: usize| -> i128 {
                let v = graph.units[u].vertex;
                let own = self.best_reach[v as usize];
                self.network
                    .neighbours(v)
                    .map(|(w, c)| {
                        if self.best_reach[w as usize] == own {
                            -i128::from(c)
                        } else {
                            i128::from(c)
                        }
                    })
                    .sum()
            };
            let shortlist = |in_a: bool| {
                let mut units: Vec<(i128, usize)> = (0..graph.units.len())
                    .filter(|&u| self.best_sides[u] == in_a)
                    .map(|u| (gain(u), u))
                    .collect();
                units.sort_by(|p, q| q.0.cmp(&p.0).then(p.1.cmp(&q.1)));
                units.truncate(REFINE_SHORTLIST);
                units
            };
            let (from_a, from_b) = (shortlist(true), shortlist(false));
            let gpus_a: u64 = (0..self.gpus.len())
                .filter(|&u| self.best_sides[u])
                .map(|u| self.gpus[u])
                .sum();
            let allowed = self.imbalance(gpus_a).max(self.smallest_unit);
            let mut pairs = Vec::new();
            for &(ga, a) in &from_a {
                for &(gb, b) in &from_b {
                    let moved = gpus_a - self.gpus[a] + self.gpus[b];
                    if self.imbalance(moved) > allowed {
                        continue;
                    }
                    let between: u64 = self
                        .network
                        .neighbours(graph.units[a].vertex)
                        .filter(|&(w, _)| w == graph.units[b].vertex)
                        .map(|(_, c)| c)
                        .sum();
                    pairs.push((ga + gb - 2 * i128::from(between), a, b));
                }
            }
            pairs.sort_by(|p, q| q.0.cmp(&p.0).then((p.1, p.2).cmp(&(q.1, q.2))));
            let mut improved = false;
            for &(_, a, b) in pairs.iter().take(REFINE_TRIES_PER_ROUND) {
                let mut sides = self.best_sides.clone();
                sides[a] = false;
                sides[b] = true;
                if self.try_sides(sides) {
                    improved = true;
                    break;
                }
            }
            if !improved {
                return;
            }
        }
    }
}

/// Sort keys of each unit for the structural candidates.
struct UnitKeys {
    id: Vec<u32>,
    x: Vec<f32>,
    y: Vec<f32>,
    /// (top-level group, own group); ungrouped units last.
    group: Vec<(u32, u32)>,
    /// Vertex of the switch on the unit's lowest-numbered connected port.
    leaf: Vec<u32>,
    /// The lowest-numbered switch that leaf links up to: leaves of one pod of a three-tier
    /// fat-tree share their spines, so this keeps pods together.
    pod: Vec<u32>,
    /// The switches on its NIC ports as a set: (lowest vertex, order-free hash of all).
    /// Units sharing a set of rail leaves (a scalable unit) sort together.
    rails: Vec<(u32, u64)>,
}

impl UnitKeys {
    fn new(design: &Design, graph: &FabricGraph) -> Self {
        let n = graph.units.len();
        let lead = |u: usize| &design.devices[graph.units[u].lead];
        let parent: HashMap<GroupId, GroupId> = design
            .groups
            .iter()
            .filter_map(|g| Some((g.id, g.parent?)))
            .collect();
        let root_group = |u: usize| -> (u32, u32) {
            let Some(mut g) = lead(u).group else {
                return (u32::MAX, u32::MAX);
            };
            let own = g;
            // Bounded walk: a cycle in a hand-edited file must not hang us.
            for _ in 0..parent.len() {
                match parent.get(&g) {
                    Some(&up) => g = up,
                    None => break,
                }
            }
            (g.0, own.0)
        };

        let mut leaf = vec![(u32::MAX, u32::MAX); n];
        let mut rails = vec![(u32::MAX, 0u64); n];
        for e in &graph.edges {
            let link = &design.links[e.link];
            let ends = [
                (link.a.port, e.device_a, e.a, e.b),
                (link.b.port, e.device_b, e.b, e.a),
            ];
            for (port, device, here, there) in ends {
                let Some(u) = graph.unit_of_vertex(here) else {
                    continue;
                };
                if graph.unit_of_vertex(there).is_some() {
                    continue;
                }
                if port < leaf[u].0 {
                    leaf[u] = (port, there);
                }
                if port < graph.nic_ports[device as usize] {
                    rails[u].0 = rails[u].0.min(there);
                    rails[u].1 = rails[u].1.wrapping_add(mix(there));
                }
            }
        }
        let leaf: Vec<u32> = leaf.into_iter().map(|(_, v)| v).collect();
        let mut uplink = vec![u32::MAX; graph.vertex_count];
        for e in &graph.edges {
            if graph.unit_of_vertex(e.a).is_none() && graph.unit_of_vertex(e.b).is_none() {
                uplink[e.a as usize] = uplink[e.a as usize].min(e.b);
                uplink[e.b as usize] = uplink[e.b as usize].min(e.a);
            }
        }
        let pod = leaf
            .iter()
            .map(|&l| uplink.get(l as usize).copied().unwrap_or(u32::MAX))
            .collect();
        UnitKeys {
            id: (0..n).map(|u| lead(u).id.0).collect(),
            x: (0..n).map(|u| lead(u).pos.x).collect(),
            y: (0..n).map(|u| lead(u).pos.y).collect(),
            group: (0..n).map(root_group).collect(),
            leaf,
            pod,
            rails,
        }
    }
}

/// Spreads a vertex number over 64 bits (SplitMix64's finaliser), so that a sum of them
/// tells sets apart.
fn mix(v: u32) -> u64 {
    let mut z = u64::from(v).wrapping_add(0x9E37_79B9_7F4A_7C15);
    z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
    z ^ (z >> 31)
}
