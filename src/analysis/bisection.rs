//! Bisection bandwidth of the drawn graph: the least max-flow between two halves of the GPUs,
//! over balanced bipartitions that keep every unit (a GPU node, or a whole NVSwitch domain)
//! whole. Balanced: the halves' GPU counts differ by no more than the smallest unit holds,
//! or by the least the unit sizes allow. Switches and hosts take no side: the max-flow
//! finds where to cut around them.
//!
//! Trying every bipartition is exponential, so small designs are enumerated exactly and
//! larger ones take the least over a fixed set of balanced candidate splits: a most even
//! split, and the cut along device order, group, canvas x, y and angle, and round-robin
//! stripes. The candidates come from the devices alone, never from the links, so the
//! result is an upper bound on the true minimum that never falls when a link is added or
//! sped up and never rises when one is removed, degraded or failed. Designs built leaf by
//! leaf, rack by rack or group by group (every template) are cut along their worst cut.

use super::graph::{FabricGraph, Flow, FlowNetwork, from_mbit};
use crate::model::{Bandwidth, Catalog, Design, DeviceId, DeviceKind, GroupId, LinkId};
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
    /// What full bisection would be: the scale-out injection of the smaller half of the least
    /// cut (half the total where the halves are equal; nodes kept whole, five equal nodes
    /// split two and three, and two nodes' injection is all a cut between them can carry).
    pub full: Bandwidth,
    /// `value / full`; `None` when `full` is zero or no bipartition exists.
    pub ratio: Option<f64>,
    /// Links crossing the minimum cut, in id order.
    pub cut_links: Vec<LinkId>,
    pub status: BisectionStatus,
    /// Groups of switches that no switch-to-switch link joins, where there are two or more
    /// (a rail-only fabric's rail leaves): what crosses between them goes through the servers
    /// (NCCL's PXN over NVLink), which the bisection counts. 0 or 1: the network itself
    /// joins every switch.
    pub switch_islands: usize,
    /// For a full direct mesh whose bisection is below full only by construction, why
    /// (`full_mesh_note`); None otherwise.
    pub mesh_note: Option<String>,
}

impl Bisection {
    /// "across the servers: its 8 groups of switches meet only inside the nodes, …" where
    /// they do.
    pub fn through_servers(&self) -> Option<String> {
        (self.switch_islands > 1).then(|| {
            format!(
                "across the servers: its {} groups of switches meet only inside the nodes, \
                 over NVLink (NCCL's PXN), never in the network",
                self.switch_islands
            )
        })
    }
}

/// "a full mesh of 4 machines reaches 67 % of full by construction: …" for a design of three
/// or more GPU nodes, no switch, and every pair of nodes cabled, whose bisection `ratio` is
/// what a mesh of equal cables reaches; None otherwise.
pub fn full_mesh_note(design: &Design, ratio: f64) -> Option<String> {
    if design
        .devices
        .iter()
        .any(|d| matches!(d.kind, crate::model::DeviceKind::Switch(_)))
    {
        return None;
    }
    let nodes: Vec<crate::model::DeviceId> = design
        .devices
        .iter()
        .filter(|d| d.kind.as_node().is_some())
        .map(|d| d.id)
        .collect();
    let n = nodes.len();
    if n < 3 {
        return None;
    }
    let mut pairs = std::collections::HashSet::new();
    for l in &design.links {
        if l.state != crate::model::LinkState::Failed && l.a.device != l.b.device {
            pairs.insert((l.a.device.min(l.b.device), l.a.device.max(l.b.device)));
        }
    }
    let every_pair = nodes.iter().enumerate().all(|(i, a)| {
        nodes[i + 1..]
            .iter()
            .all(|b| pairs.contains(&((*a).min(*b), (*a).max(*b))))
    });
    // The smaller half's machines each have n − 1 cables, of which those to the larger half
    // (⌈n/2⌉) cross the cut: ⌈n/2⌉/(n − 1) of full, 67 % for 4, 75 % for 5.
    let across = n.div_ceil(2);
    let share = across as f64 / (n as f64 - 1.0);
    // Cables of unequal rates (or a degraded one) put the cut elsewhere: no such note.
    (every_pair && (ratio - share).abs() < 1e-6).then(|| {
        format!(
            "a full mesh of {n} machines reaches {:.0} % of full by construction: of each \
             machine's {} cables, {across} reach the other half; only a switch or more cables \
             per pair reach more",
            share * 100.0,
            n - 1
        )
    })
}

/// Groups of switches joined by switch-to-switch links (union-find over the switches),
/// counting only groups that reach a GPU node: a spare switch cabled to nothing is no rail.
fn switch_islands(design: &Design) -> usize {
    let index: HashMap<DeviceId, usize> = design
        .devices
        .iter()
        .filter(|d| matches!(d.kind, DeviceKind::Switch(_)))
        .enumerate()
        .map(|(i, d)| (d.id, i))
        .collect();
    let mut parent: Vec<usize> = (0..index.len()).collect();
    fn root(parent: &mut [usize], mut i: usize) -> usize {
        while parent[i] != i {
            parent[i] = parent[parent[i]];
            i = parent[i];
        }
        i
    }
    let is_node = |id: DeviceId| {
        design
            .device(id)
            .is_some_and(|d| matches!(d.kind, DeviceKind::GpuNode(_)))
    };
    let mut serves = vec![false; index.len()];
    for link in &design.links {
        match (index.get(&link.a.device), index.get(&link.b.device)) {
            (Some(&a), Some(&b)) => {
                let (ra, rb) = (root(&mut parent, a), root(&mut parent, b));
                parent[ra] = rb;
            }
            (Some(&s), None) if is_node(link.b.device) => serves[s] = true,
            (None, Some(&s)) if is_node(link.a.device) => serves[s] = true,
            _ => {}
        }
    }
    let mut roots: Vec<usize> = (0..parent.len())
        .filter(|&i| serves[i])
        .map(|i| root(&mut parent, i))
        .collect();
    roots.sort_unstable();
    roots.dedup();
    roots.len()
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
/// Round-robin stripes of 2 to `MAX_STRIDE` (node i in stripe i mod k) are tried on designs
/// up to `STRIDE_MAX_UNITS` units (anything drawn by hand); past that each candidate is a
/// max-flow over thousands of switches, and generated fabrics are cut along their order
/// and groups. The limit counts units, not links, so it keeps the candidates link-free.
const MAX_STRIDE: usize = 8;
const STRIDE_MAX_UNITS: usize = 512;

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
        switch_islands: 0,
        mesh_note: None,
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
        search.candidates(design, &graph);
    }

    // The exhaustive search scores every balanced split and the candidates start with an
    // even one, each without a limit until a best exists.
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
    // The smaller half's injection bounds any cut between these halves.
    let side_injection = |side: bool| -> Bandwidth {
        graph
            .units
            .iter()
            .zip(&search.best_sides)
            .filter(|&(_, &s)| s == side)
            .map(|(u, _)| u.injection)
            .sum()
    };
    let full = if search.best_sides.is_empty() {
        full
    } else {
        let (a, b) = (side_injection(true), side_injection(false));
        if a.gbit_s() < b.gbit_s() { a } else { b }
    };
    let ratio = (full.gbit_s() > 0.0).then(|| value / full);
    Bisection {
        value,
        full,
        ratio,
        cut_links,
        status: BisectionStatus::Ok { exact },
        switch_islands: switch_islands(design),
        mesh_note: ratio
            .filter(|r| *r < 1.0)
            .and_then(|r| full_mesh_note(design, r)),
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

/// The balance rule every scored bipartition obeys: the halves' GPU counts differ by no
/// more than the smallest unit holds, or by the least the unit sizes allow. It depends on
/// the units alone, never on the links.
#[derive(Debug, Clone)]
struct Balance {
    total: u64,
    /// Largest allowed difference between the halves' GPU counts.
    tolerance: u64,
    /// One half of a split within the rule: a most even one, or the greedy one.
    even_split: Vec<bool>,
}

/// Subset-sum tables larger than this (in bits times items) are not built: only designs
/// with thousands of distinct, odd GPU counts per node get there.
const SUBSET_SUM_WORK: usize = 1 << 28;

impl Balance {
    fn new(gpus: &[u64]) -> Self {
        let total: u64 = gpus.iter().sum();
        let smallest = gpus.iter().copied().min().unwrap_or(0);
        // Fallback: a greedy split bounds the least imbalance from above, which can only
        // widen the rule, and only for odd sizes in their thousands.
        let (least, even_split) = most_even_split(gpus).unwrap_or_else(|| greedy_split(gpus));
        Balance {
            total,
            tolerance: least.max(smallest),
            even_split,
        }
    }

    fn imbalance(&self, gpus_a: u64) -> u64 {
        (2 * gpus_a).abs_diff(self.total)
    }

    fn allows(&self, gpus_a: u64) -> bool {
        self.imbalance(gpus_a) <= self.tolerance
    }
}

/// The least imbalance any bipartition into two non-empty halves achieves, and one half of
/// such a split, by a bounded subset-sum over the unit sizes (divided by their common
/// factor). `None` when the table would be too large.
fn most_even_split(gpus: &[u64]) -> Option<(u64, Vec<bool>)> {
    let factor = gpus.iter().fold(0u64, |g, &x| gcd(g, x));
    if gpus.len() < 2 || factor == 0 {
        return None;
    }
    let total: u64 = gpus.iter().map(|g| g / factor).sum();
    let half = usize::try_from(total / 2).ok()?;
    // Items: each distinct size in power-of-two bundles (bounded knapsack).
    let mut by_size: Vec<(u64, Vec<usize>)> = Vec::new();
    let mut order: Vec<usize> = (0..gpus.len()).collect();
    order.sort_by_key(|&u| (gpus[u], u));
    for u in order {
        let size = gpus[u] / factor;
        match by_size.last_mut() {
            Some((s, units)) if *s == size => units.push(u),
            _ => by_size.push((size, vec![u])),
        }
    }
    let mut items: Vec<(usize, u64, usize)> = Vec::new(); // (size group, size, units)
    for (group, (size, units)) in by_size.iter().enumerate() {
        let mut left = units.len();
        let mut bundle = 1;
        while left > 0 {
            let take = bundle.min(left);
            items.push((group, size * take as u64, take));
            left -= take;
            bundle *= 2;
        }
    }
    let words = half / 64 + 1;
    if words.saturating_mul(items.len()).saturating_mul(64) > SUBSET_SUM_WORK {
        return None;
    }
    // reached[s]: sum s is possible; by[s]: the item that first reached it (earlier items
    // reach s - size), so a split is read back by walking down.
    let mut reached = vec![0u64; words];
    reached[0] = 1;
    let mut by = vec![u32::MAX; half + 1];
    for (k, &(_, size, _)) in items.iter().enumerate() {
        let Ok(shift) = usize::try_from(size) else {
            continue;
        };
        if shift > half {
            continue;
        }
        let (word_shift, bit_shift) = (shift / 64, shift % 64);
        for w in (word_shift..words).rev() {
            let low = reached[w - word_shift];
            let mut shifted = low << bit_shift;
            if bit_shift > 0 && w > word_shift {
                shifted |= reached[w - word_shift - 1] >> (64 - bit_shift);
            }
            let mut fresh = shifted & !reached[w];
            if w == words - 1 && (half + 1) % 64 != 0 {
                fresh &= (1u64 << ((half + 1) % 64)) - 1;
            }
            reached[w] |= fresh;
            while fresh != 0 {
                let bit = fresh.trailing_zeros() as usize;
                by[w * 64 + bit] = k as u32;
                fresh &= fresh - 1;
            }
        }
    }
    // The largest reachable sum up to half; the smallest unit alone is one, so it exists.
    let best = (1..=half)
        .rev()
        .find(|&s| reached[s / 64] >> (s % 64) & 1 == 1)?;
    let mut take = vec![0usize; by_size.len()];
    let mut s = best;
    while s > 0 {
        let k = by[s] as usize;
        let (group, size, units) = items[k];
        take[group] += units;
        s -= size as usize;
    }
    let mut sides = vec![false; gpus.len()];
    for ((_, units), &n) in by_size.iter().zip(&take) {
        for &u in &units[..n] {
            sides[u] = true;
        }
    }
    Some(((total - 2 * best as u64) * factor, sides))
}

fn gcd(mut a: u64, mut b: u64) -> u64 {
    while b != 0 {
        (a, b) = (b, a % b);
    }
    a
}

/// The largest-first greedy split: its imbalance bounds the least one from above.
fn greedy_split(gpus: &[u64]) -> (u64, Vec<bool>) {
    let mut order: Vec<usize> = (0..gpus.len()).collect();
    order.sort_unstable_by_key(|&u| (std::cmp::Reverse(gpus[u]), u));
    let (mut a, mut b) = (0u64, 0u64);
    let mut sides = vec![false; gpus.len()];
    for u in order {
        if a <= b {
            a += gpus[u];
            sides[u] = true;
        } else {
            b += gpus[u];
        }
    }
    (a.abs_diff(b), sides)
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
    balance: Balance,
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
            balance: Balance::new(&gpus),
            gpus,
        }
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
        debug_assert!(self.balance.allows(self.gpus_of(&sides)));
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

    fn gpus_of(&self, sides: &[bool]) -> u64 {
        sides
            .iter()
            .zip(&self.gpus)
            .filter(|(a, _)| **a)
            .map(|(_, g)| g)
            .sum()
    }

    /// A balanced split along an ordering: units go to half A in order while they fit under
    /// half the GPUs (the most even cut of a uniform ordering), else under the rule's
    /// upper end. `None` when neither pass reaches a balanced half.
    fn split_along(&self, order: &[usize]) -> Option<Vec<bool>> {
        let total = self.balance.total;
        let upper = (total + self.balance.tolerance) / 2;
        for cap in [total / 2, upper] {
            let mut sides = vec![false; self.gpus.len()];
            let mut gpus_a = 0u64;
            for &u in order {
                if gpus_a + self.gpus[u] <= cap {
                    gpus_a += self.gpus[u];
                    sides[u] = true;
                }
            }
            if gpus_a > 0 && self.balance.allows(gpus_a) {
                return Some(sides);
            }
        }
        None
    }

    /// Tries every balanced bipartition when there are few; returns whether it did.
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
        let balanced: Vec<u64> = (0..masks)
            .filter(|&m| self.balance.allows(gpus_a(m)))
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

    /// Scores the candidate splits: a most even split, then the balanced cut along each
    /// ordering of `UnitKeys`. None of them looks at the links, so two designs with the same
    /// devices are scored over the same splits, and the minimum of fixed cuts can only rise
    /// as links are added or sped up.
    fn candidates(&mut self, design: &Design, graph: &FabricGraph) {
        let keys = UnitKeys::new(design, graph);
        let n = graph.units.len();
        let by = |key: &dyn Fn(usize) -> (u64, u64)| {
            let mut order: Vec<usize> = (0..n).collect();
            order.sort_by_key(|&u| (key(u), u));
            order
        };
        let float = |v: f32| u64::from(ordered_bits(v));
        // Designs are cut cleanest along how they were made: in id order (templates and
        // hand drawing add nodes leaf by leaf, rack by rack), by group, along the canvas
        // (rows, columns, a ring drawn as a circle), and striped (round-robin placement).
        let mut orders = vec![
            by(&|_| (0, 0)),
            by(&|u| keys.group[u]),
            by(&|u| (float(keys.x[u]), 0)),
            by(&|u| (float(keys.y[u]), 0)),
            by(&|u| (float(keys.angle[u]), 0)),
        ];
        if n <= STRIDE_MAX_UNITS {
            for stride in 2..=MAX_STRIDE as u64 {
                orders.push(by(&|u| (u as u64 % stride, 0)));
            }
        }
        self.try_sides(self.balance.even_split.clone());
        for order in &orders {
            if let Some(sides) = self.split_along(order) {
                self.try_sides(sides);
            }
        }
    }
}

/// Sort keys of each unit for the candidate splits; all from the devices, none from links.
struct UnitKeys {
    x: Vec<f32>,
    y: Vec<f32>,
    /// Angle around the units' centre on the canvas.
    angle: Vec<f32>,
    /// (top-level group, own group); ungrouped units last.
    group: Vec<(u64, u64)>,
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
        let root_group = |u: usize| -> (u64, u64) {
            let Some(mut g) = lead(u).group else {
                return (u64::MAX, u64::MAX);
            };
            let own = g;
            // Bounded walk: a cycle in a hand-edited file must not hang us.
            for _ in 0..parent.len() {
                match parent.get(&g) {
                    Some(&up) => g = up,
                    None => break,
                }
            }
            (u64::from(g.0), u64::from(own.0))
        };
        let x: Vec<f32> = (0..n).map(|u| lead(u).pos.x).collect();
        let y: Vec<f32> = (0..n).map(|u| lead(u).pos.y).collect();
        let mean = |v: &[f32]| v.iter().map(|&c| f64::from(c)).sum::<f64>() / n.max(1) as f64;
        let (cx, cy) = (mean(&x), mean(&y));
        let angle = x
            .iter()
            .zip(&y)
            .map(|(&px, &py)| (f64::from(py) - cy).atan2(f64::from(px) - cx) as f32)
            .collect();
        UnitKeys {
            x,
            y,
            angle,
            group: (0..n).map(root_group).collect(),
        }
    }
}

/// The bits of a float, remapped so that unsigned order is `f32::total_cmp` order.
fn ordered_bits(v: f32) -> u32 {
    let bits = v.to_bits();
    if bits >> 31 == 1 {
        !bits
    } else {
        bits | 1 << 31
    }
}
