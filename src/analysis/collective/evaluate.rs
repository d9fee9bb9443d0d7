//! Turns plans into times: latency by NCCL's constants, bandwidth from the most loaded arc,
//! the tuner's choice among algorithms and protocols, and the bottleneck report.

use super::algorithms::{self, Plan, segments};
use super::efficiency as eff;
use super::fabric::{self, Fabric, Intra, NO_ARC, Resource};
use super::latency::{self as lat, ArchRow, Hw, Protocol, TableAlgo};
use super::routing::{Router, zeroed};
use super::{
    AlgoChoice, Algorithm, Candidate, CollectiveError, CollectiveQuery, CollectiveResult, Library,
    LinkLoad, Op, ResourceKind, Routing,
};
use crate::model::{Bytes, Catalog, Design, DeviceId, LinkId};
use std::collections::HashMap;
use std::sync::Arc;

/// A plan with its bandwidth cost.
pub(crate) struct Costed {
    /// The plan; its phases' loads are dropped when no result will need them (see `Keep`).
    pub plan: Plan,
    /// Seconds per byte of size at full payload (Simple).
    pub spb: f64,
    pub arch: ArchRow,
    /// Calibrated intra-node hop latencies on this plan's path (none: NCCL's constants).
    pub intra_hops: lat::IntraHops,
}

impl Costed {
    /// Calls `f(arc, busy)` for every arc in `arcs` that carries traffic, with its busy
    /// seconds per byte of size summed over the phases, in arc order.
    fn for_each_busy(
        &self,
        fab: &Fabric,
        arcs: std::ops::Range<usize>,
        mut f: impl FnMut(usize, f64),
    ) {
        let nvls_eff = self.arch.nvls_efficiency();
        let busy_of = |phase: &algorithms::Phase, a: usize, load: f64| {
            load / capacity(fab, a, phase.nvls, nvls_eff) * phase.repeat
        };
        let within = |loads: &[f64]| arcs.start.min(loads.len())..arcs.end.min(loads.len());
        match self.plan.phases.as_slice() {
            [] => {}
            [phase] => {
                let range = within(&phase.loads);
                for (a, &load) in range.clone().zip(&phase.loads[range]) {
                    if load > 1e-15 {
                        let b = busy_of(phase, a, load);
                        if b > 0.0 {
                            f(a, b);
                        }
                    }
                }
            }
            phases => {
                let mut busy = zeroed(arcs.len());
                for phase in phases {
                    let range = within(&phase.loads);
                    for (a, &load) in range.clone().zip(&phase.loads[range]) {
                        if load > 1e-15 {
                            busy[a - arcs.start] += busy_of(phase, a, load);
                        }
                    }
                }
                for (i, &b) in busy.iter().enumerate() {
                    if b > 0.0 {
                        f(arcs.start + i, b);
                    }
                }
            }
        }
    }
}

/// Which plans keep their per-arc loads once costed: only those a result will report on.
#[derive(Debug, Clone, Copy, PartialEq)]
pub(crate) enum Keep {
    /// Every plan (a sweep over sizes).
    All,
    /// The plan the tuner picks at this size (one result).
    BestAt(f64),
    /// None (times only).
    Nothing,
}

/// The tuner's choice so far: (plan index, protocol, latency µs, bandwidth µs).
type Choice = (usize, Protocol, f64, f64);

/// Weighs plan `i`'s protocols at size `s` in NCCL's order, keeping the first strictly fastest
/// candidate overall; reports each candidate. Returns whether plan `i` became the choice.
fn weigh(
    best: &mut Option<Choice>,
    i: usize,
    c: &Costed,
    op: Op,
    forced: Option<Protocol>,
    s: f64,
    mut candidate: impl FnMut(Candidate),
) -> bool {
    let mut chosen = false;
    if !used_at(&c.plan, s) {
        return false;
    }
    for p in protocols_for(&c.plan) {
        if forced.is_some_and(|forced| forced != p) {
            continue;
        }
        let (latency, bw) = time_of(c, op, p, s);
        let t = latency + bw;
        candidate(Candidate {
            algorithm: c.plan.algorithm,
            protocol: p,
            time_us: t,
        });
        if best.is_none_or(|(_, _, l, b)| t < l + b) {
            *best = Some((i, p, latency, bw));
            chosen = true;
        }
    }
    chosen
}

/// Whether the library runs the plan at this size: MLX turns its ring both ways only for
/// large arrays (`Library::both_ways_from_bytes`).
fn used_at(plan: &Plan, s: f64) -> bool {
    plan.algorithm != Algorithm::BidirectionalRing
        || plan
            .library
            .both_ways_from_bytes(plan.n)
            .is_some_and(|from| s >= from)
}

/// Usable capacity of an arc in a phase (NVLS phases run NVLink ports at NVLS efficiency).
#[inline]
fn capacity(fab: &Fabric, a: usize, nvls: bool, nvls_eff: f64) -> f64 {
    let usable = fab.arc_usable[a];
    if nvls && fab.arc_nvlink[a] {
        usable * nvls_eff
    } else {
        usable
    }
}

pub(crate) struct Evaluator<'d> {
    design: &'d Design,
    fab: Fabric,
    op: Op,
    n: u32,
    routing: Routing,
    protocol: Option<Protocol>,
    plans: Vec<Costed>,
    bound_gbyte_s: f64,
    in_network_bound_gbyte_s: f64,
}

/// Algorithms worth trying for an operation. MLX's backends have rings (one way, and both
/// ways for large arrays) for all-reduce and all-gather, and point-to-point sends; no trees,
/// no in-switch reduction, no reduce-scatter, broadcast or reduce.
fn algorithms_for(op: Op, choice: AlgoChoice, domains: u32, library: Library) -> Vec<Algorithm> {
    if library.is_mlx() {
        let both: &[Algorithm] = &[Algorithm::Ring, Algorithm::BidirectionalRing];
        return match (op, choice) {
            (Op::AllReduce | Op::AllGather, AlgoChoice::Auto) => both.to_vec(),
            (Op::AllReduce | Op::AllGather, AlgoChoice::Ring) => vec![Algorithm::Ring],
            (Op::AllToAll | Op::SendRecv, AlgoChoice::Auto | AlgoChoice::Direct) => {
                vec![Algorithm::Direct]
            }
            _ => Vec::new(),
        };
    }
    let auto: &[Algorithm] = match op {
        Op::AllReduce => &[
            Algorithm::Ring,
            Algorithm::Tree,
            Algorithm::Nvls,
            Algorithm::NvlsTree,
            Algorithm::Sharp,
            Algorithm::Hierarchical,
        ],
        Op::AllGather | Op::ReduceScatter => &[Algorithm::Ring, Algorithm::Nvls],
        Op::Broadcast | Op::Reduce => &[Algorithm::Ring],
        Op::AllToAll | Op::SendRecv => &[Algorithm::Direct],
    };
    match choice {
        AlgoChoice::Auto => auto.to_vec(),
        AlgoChoice::Ring => vec![Algorithm::Ring],
        AlgoChoice::Tree => vec![Algorithm::Tree],
        AlgoChoice::Nvls if domains > 1 => vec![Algorithm::NvlsTree],
        AlgoChoice::Nvls => vec![Algorithm::Nvls],
        AlgoChoice::NvlsTree => vec![Algorithm::NvlsTree],
        AlgoChoice::Sharp => vec![Algorithm::Sharp],
        AlgoChoice::Hierarchical => vec![Algorithm::Hierarchical],
        AlgoChoice::Direct => vec![Algorithm::Direct],
    }
}

fn protocols_for(plan: &Plan) -> Vec<Protocol> {
    if plan.library.is_mlx() {
        // MLX moves plain buffers: no LL or LL128 lines.
        return vec![Protocol::Simple];
    }
    match plan.algorithm {
        Algorithm::Nvls | Algorithm::NvlsTree | Algorithm::Sharp => vec![Protocol::Simple],
        Algorithm::Direct => vec![Protocol::Ll, Protocol::Simple],
        // NCCL enables LL128 only where GPUs talk over NVLink.
        _ if plan.intra_hw == Some(Hw::Pci) => vec![Protocol::Ll, Protocol::Simple],
        _ => Protocol::ALL.to_vec(),
    }
}

fn payload(p: Protocol) -> f64 {
    match p {
        Protocol::Ll => eff::LL_PAYLOAD,
        Protocol::Ll128 => eff::LL128_PAYLOAD,
        Protocol::Simple => 1.0,
    }
}

/// The most loaded arc's busy time per byte in one phase, or the first arc that must carry
/// traffic but has no capacity (under a byte per second: dividing by it overflows).
fn phase_worst(fab: &Fabric, phase: &algorithms::Phase, nvls_eff: f64) -> Result<f64, usize> {
    let loads = phase.loads.as_slice();
    let usable = &fab.arc_usable[..loads.len()];
    let nvlink = &fab.arc_nvlink[..loads.len()];
    let (worst, bad) = if phase.nvls {
        worst_ratio(
            loads,
            usable,
            nvlink,
            |u, nv| if nv { u * nvls_eff } else { u },
        )
    } else {
        worst_ratio(loads, usable, nvlink, |u, _| u)
    };
    if bad {
        // Rare: find the first such arc, in arc order.
        let first = (0..loads.len()).find(|&a| {
            let cap = if phase.nvls && nvlink[a] {
                usable[a] * nvls_eff
            } else {
                usable[a]
            };
            loads[a] > 1e-15 && (cap.is_nan() || cap < 1.0)
        });
        if let Some(a) = first {
            return Err(a);
        }
    }
    Ok(worst)
}

/// The largest `load / cap` over arcs with load (NaN ratios never win, as with `f64::max`),
/// and whether such an arc has under a byte per second. Independent lanes, without
/// branches, let the loop vectorise; a maximum is exact whatever the order.
#[inline(always)]
pub(crate) fn worst_ratio(
    loads: &[f64],
    usable: &[f64],
    nvlink: &[bool],
    cap_of: impl Fn(f64, bool) -> f64,
) -> (f64, bool) {
    const L: usize = 4;
    // All in f64 selects (a flag of 1.0 for an arc without capacity) so that the lanes map
    // onto vector compares and blends.
    let mut worst = [0.0f64; L];
    let mut bad = [0.0f64; L];
    let whole = loads.len() / L * L;
    for ((l, u), v) in loads[..whole]
        .chunks_exact(L)
        .zip(usable[..whole].chunks_exact(L))
        .zip(nvlink[..whole].chunks_exact(L))
    {
        for k in 0..L {
            let cap = cap_of(u[k], v[k]);
            let busy = l[k] > 1e-15;
            let t = if busy { l[k] / cap } else { 0.0 };
            worst[k] = if t > worst[k] { t } else { worst[k] };
            bad[k] = if busy & (cap.is_nan() | (cap < 1.0)) {
                1.0
            } else {
                bad[k]
            };
        }
    }
    for a in whole..loads.len() {
        let cap = cap_of(usable[a], nvlink[a]);
        let busy = loads[a] > 1e-15;
        let t = if busy { loads[a] / cap } else { 0.0 };
        worst[0] = if t > worst[0] { t } else { worst[0] };
        bad[0] = if busy & (cap.is_nan() | (cap < 1.0)) {
            1.0
        } else {
            bad[0]
        };
    }
    let w = worst.iter().fold(0.0f64, |w, &t| if t > w { t } else { w });
    (w, bad.iter().any(|&b| b > 0.0))
}

/// Sums a plan's phases into a bandwidth cost; refuses arcs that must carry traffic but
/// have no capacity.
fn cost(
    fab: &Fabric,
    design: &Design,
    plan: Plan,
    arch: ArchRow,
) -> Result<Costed, CollectiveError> {
    let nvls_eff = arch.nvls_efficiency();
    let mut spb = 0.0;
    let mut seen: Vec<(*const Vec<f64>, bool, f64)> = Vec::new();
    for phase in &plan.phases {
        // A phase that repeats an earlier one's traffic (hierarchical's all-gather) shares it.
        let key = (std::sync::Arc::as_ptr(&phase.loads), phase.nvls);
        let known = seen
            .iter()
            .find(|(p, nvls, _)| (*p, *nvls) == key)
            .map(|&(_, _, w)| w);
        let worst = match known {
            Some(w) => w,
            None => {
                let worst = phase_worst(fab, phase, nvls_eff).map_err(|a| {
                    CollectiveError::ZeroCapacity {
                        resource: resource_label(fab, design, fab.arc_resource(a)),
                    }
                })?;
                seen.push((key.0, key.1, worst));
                worst
            }
        };
        spb += worst * phase.repeat;
    }
    let intra_hops = lat::IntraHops::of(fab, design, &plan);
    Ok(Costed {
        plan,
        spb,
        arch,
        intra_hops,
    })
}

impl Drop for Evaluator<'_> {
    /// The plans' load buffers serve the next evaluation.
    fn drop(&mut self) {
        for c in &mut self.plans {
            for phase in c.plan.phases.drain(..) {
                if let Ok(loads) = std::sync::Arc::try_unwrap(phase.loads) {
                    super::routing::keep_for_later(loads);
                }
            }
        }
    }
}

impl<'d> Evaluator<'d> {
    pub fn new(
        design: &'d Design,
        catalog: &Catalog,
        q: &CollectiveQuery,
        keep: Keep,
    ) -> Result<Self, CollectiveError> {
        let fab = fabric::build(design, catalog)?;
        let total = fab.gpus.len() as u64;
        if total == 0 {
            return Err(CollectiveError::NoGpus);
        }
        let requested = q.gpus.map_or(total, u64::from);
        if requested > total {
            return Err(CollectiveError::NotEnoughGpus {
                available: total,
                requested,
            });
        }
        if requested < 2 {
            return Err(CollectiveError::TooFewGpus {
                available: total,
                requested,
            });
        }
        let group: Vec<u32> = (0..requested as u32).collect();
        let groups = vec![group];
        // The physical bounds need no plan: a planning thread works them out while another
        // finishes its last plan.
        let bounds = std::sync::OnceLock::new();
        let side: SideJob = std::sync::Mutex::new(Some(Box::new(|| {
            let _ = bounds.set(busbw_bounds(&fab, &groups[0], q.op));
        })));
        let (plans, _) = make_plans(
            &fab,
            design,
            &groups,
            q.op,
            q.algorithm,
            q.routing,
            q.protocol,
            keep,
            Some(&side),
        )?;
        drop(side);
        let (bound, in_network_bound) = match bounds.get() {
            Some(&bounds) => bounds,
            None => busbw_bounds(&fab, &groups[0], q.op),
        };
        Ok(Evaluator {
            design,
            fab,
            op: q.op,
            n: requested as u32,
            routing: q.routing,
            protocol: q.protocol,
            plans,
            bound_gbyte_s: bound,
            in_network_bound_gbyte_s: in_network_bound,
        })
    }

    pub fn result_at(&self, bytes: Bytes) -> CollectiveResult {
        let s = bytes.0 as f64;
        let mut candidates = Vec::new();
        let mut best: Option<Choice> = None;
        for (i, c) in self.plans.iter().enumerate() {
            weigh(&mut best, i, c, self.op, self.protocol, s, |x| {
                candidates.push(x)
            });
        }
        // make_plans guarantees at least one plan with at least one protocol.
        let (i, protocol, latency_us, bandwidth_us) =
            best.unwrap_or((0, Protocol::Simple, 0.0, 0.0));
        let chosen = &self.plans[i];
        let time_us = latency_us + bandwidth_us;
        let algbw = if time_us > 0.0 {
            s / (time_us * 1e3)
        } else {
            0.0
        };
        let busbw = algbw * self.op.busbw_factor(self.n);
        let (bottleneck, link_utilization, device_utilization) =
            bottleneck(&self.fab, self.design, chosen, bandwidth_us, time_us);
        let mut notes = chosen.plan.notes.clone();
        if chosen.plan.algorithm.reduces_in_network() {
            notes.push(format!(
                "{} reduces inside the switches, so busbw may exceed the point-to-point bound",
                chosen.plan.algorithm
            ));
        }
        let why = why_chosen(&candidates, chosen.plan.algorithm, protocol, time_us);
        CollectiveResult {
            library: self.fab.library,
            assumes: self.fab.library.assumes(self.design.sharp_enabled),
            why,
            op: self.op,
            bytes,
            gpus: self.n,
            algorithm: chosen.plan.algorithm,
            protocol,
            routing: self.routing,
            time_us,
            latency_us,
            bandwidth_us,
            algbw_gbyte_s: algbw,
            busbw_gbyte_s: busbw,
            busbw_bound_gbyte_s: if chosen.plan.algorithm.reduces_in_network() {
                self.in_network_bound_gbyte_s
            } else {
                self.bound_gbyte_s
            },
            bottleneck,
            link_utilization,
            device_utilization,
            candidates,
            notes,
        }
    }
}

/// Why the answer's algorithm and protocol: the fastest of the pairs costed, with the runner-up
/// and how much slower it is.
fn why_chosen(
    candidates: &[Candidate],
    algorithm: Algorithm,
    protocol: Protocol,
    time_us: f64,
) -> String {
    let runner_up = candidates
        .iter()
        .filter(|c| !(c.algorithm == algorithm && c.protocol == protocol))
        .min_by(|a, b| a.time_us.total_cmp(&b.time_us));
    match runner_up {
        None => "the only algorithm and protocol available".into(),
        Some(next) => format!(
            "fastest of {} costed; next {}/{} at {} ({})",
            candidates.len(),
            next.algorithm,
            next.protocol.label(),
            crate::model::units::time_text(next.time_us),
            if time_us > 0.0 {
                format!("{:+.0} %", (next.time_us / time_us - 1.0) * 100.0)
            } else {
                "n/a".into()
            }
        ),
    }
}

/// The busiest resources of a costed plan (the eight busiest, busiest first), every busy
/// link's utilization and every node's busiest internal resource.
#[allow(clippy::type_complexity)]
fn bottleneck(
    fab: &Fabric,
    design: &Design,
    c: &Costed,
    bandwidth_us: f64,
    time_us: f64,
) -> (Vec<LinkLoad>, Vec<(LinkId, f64)>, Vec<(DeviceId, f64)>) {
    if c.spb <= 0.0 {
        return (Vec::new(), Vec::new(), Vec::new());
    }
    // Busiest direction per drawn link; busiest port per node and kind of internal resource.
    const KINDS: usize = 4;
    let mut per_link = zeroed(design.links.len());
    let mut per_node = zeroed(fab.nodes.len() * KINDS);
    // Links' arcs come first, then the nodes' ports: two runs to scan side by side.
    let (link_arcs, port_arcs) = (0..2 * per_link.len(), 2 * per_link.len()..fab.arc_count());
    let scan = |arcs: std::ops::Range<usize>, per_link: &mut [f64], per_node: &mut [f64]| {
        c.for_each_busy(fab, arcs, |a, busy| {
            let u = busy / c.spb;
            let slot = match fab.arc_resource(a) {
                Resource::Link { index, .. } => &mut per_link[index as usize],
                Resource::ScaleUp { node, .. } => &mut per_node[node as usize * KINDS],
                Resource::Bridge { node, .. } => &mut per_node[node as usize * KINDS + 1],
                Resource::GpuPcie { node, .. } => &mut per_node[node as usize * KINDS + 2],
                Resource::NicPcie { node, .. } => &mut per_node[node as usize * KINDS + 3],
            };
            *slot = slot.max(u);
        })
    };
    match super::helpers::pool().filter(|_| plan_threads(fab) > 1) {
        Some(pool) => pool.in_place_scope(|scope| {
            scope.spawn(|_| scan(port_arcs, &mut [], &mut per_node));
            scan(link_arcs, &mut per_link, &mut []);
        }),
        None => scan(0..fab.arc_count(), &mut per_link, &mut per_node),
    }
    let share = if time_us > 0.0 {
        bandwidth_us / time_us
    } else {
        0.0
    };
    let busy_links = per_link.iter().filter(|u| **u > 0.0).count();
    let mut links: Vec<(LinkId, f64)> = Vec::with_capacity(busy_links);
    // The eight busiest resources (utilization, kind, index), busiest first and ties in
    // kind and index order, kept as they come rather than by sorting every busy one
    // (hundreds of thousands at scale).
    let order = |a: &(f64, u8, u32), b: &(f64, u8, u32)| {
        b.0.total_cmp(&a.0).then(a.1.cmp(&b.1)).then(a.2.cmp(&b.2))
    };
    const TOP: usize = 8;
    let mut all: Vec<(f64, u8, u32)> = Vec::with_capacity(TOP + 1);
    let mut offer = |e: (f64, u8, u32)| {
        if all.len() == TOP && all.last().is_some_and(|w| order(&e, w).is_ge()) {
            return;
        }
        let at = all.partition_point(|x| order(x, &e).is_lt());
        all.insert(at, e);
        all.truncate(TOP);
    };
    for (i, &u) in per_link.iter().enumerate() {
        if u > 0.0 {
            links.push((fab.link_ids[i], u));
            offer((u, 0u8, i as u32));
        }
    }
    let devices: Vec<(DeviceId, f64)> = per_node
        .chunks(KINDS)
        .enumerate()
        .map(|(i, k)| (fab.nodes[i].device, k.iter().copied().fold(0.0, f64::max)))
        .filter(|(_, u)| *u > 0.0)
        .collect();
    for (i, &u) in per_node.iter().enumerate() {
        if u > 0.0 {
            offer((u, 1 + (i % KINDS) as u8, (i / KINDS) as u32));
        }
    }
    let loads: Vec<LinkLoad> = all
        .iter()
        .map(|&(u, kind, idx)| {
            let (link, device, rk, label) = describe(fab, design, kind, idx);
            LinkLoad {
                link,
                device,
                kind: rk,
                label,
                utilization: u,
                time_share: u * share,
            }
        })
        .collect();
    (loads, links, devices)
}

/// A resource of `bottleneck`'s kind and index: its link or node, kind and label.
fn describe(
    fab: &Fabric,
    design: &Design,
    kind: u8,
    idx: u32,
) -> (Option<LinkId>, Option<DeviceId>, ResourceKind, String) {
    let name = |id: DeviceId| {
        design
            .device(id)
            .map_or_else(|| id.to_string(), |d| d.name.clone())
    };
    match kind {
        0 => {
            let l = &design.links[idx as usize];
            let label = format!("{} {} – {}", l.id, name(l.a.device), name(l.b.device));
            (Some(l.id), None, ResourceKind::Link, label)
        }
        _ => {
            let node = fab.nodes[idx as usize].device;
            let (rk, what) = match kind {
                1 => (ResourceKind::NvLink, "NVLink ports"),
                2 => (ResourceKind::NvLinkBridge, "NVLink bridges"),
                3 => (ResourceKind::GpuPcie, "GPU PCIe links"),
                _ => (ResourceKind::NicPcie, "NIC PCIe slots"),
            };
            (None, Some(node), rk, format!("{} {}", name(node), what))
        }
    }
}

fn resource_label(fab: &Fabric, design: &Design, r: Resource) -> String {
    let node_name = |node: u32| {
        let id = fab.nodes[node as usize].device;
        design
            .device(id)
            .map_or_else(|| id.to_string(), |d| d.name.clone())
    };
    match r {
        Resource::Link { index, .. } => format!("link {}", fabric::link_id(design, index)),
        Resource::ScaleUp { node, gpu, .. } => format!("{} NVLink of GPU {gpu}", node_name(node)),
        Resource::Bridge { node, from } => {
            format!("{} NVLink bridge of GPU {from}", node_name(node))
        }
        Resource::GpuPcie { node, gpu, .. } => format!("{} PCIe of GPU {gpu}", node_name(node)),
        Resource::NicPcie { node, nic, .. } => {
            format!("{} PCIe slot of NIC {nic}", node_name(node))
        }
    }
}

/// MLX's step latency: a ring takes 2(n − 1) steps for an all-reduce and n − 1 for an
/// all-gather, each one message over the worst network path (its stack, switch and cable
/// latency); a point-to-point exchange takes one.
fn mlx_latency_us(plan: &Plan, op: Op) -> f64 {
    let n = f64::from(plan.n);
    let steps = match (plan.algorithm, op) {
        (Algorithm::Ring | Algorithm::BidirectionalRing, Op::AllReduce) => 2.0 * (n - 1.0),
        (Algorithm::Ring | Algorithm::BidirectionalRing, _) => n - 1.0,
        _ => 1.0,
    };
    steps * plan.net_extra_us
}

/// Plans and costs every applicable algorithm; errors only when none works.
///
/// On large fabrics the algorithms are planned on several threads (each plan is independent of
/// the others); the outcome is the same as planning them one after another in order.
#[allow(clippy::too_many_arguments)]
fn make_plans(
    fab: &Fabric,
    design: &Design,
    groups: &[Vec<u32>],
    op: Op,
    choice: AlgoChoice,
    routing: Routing,
    protocol: Option<Protocol>,
    keep: Keep,
    side: Option<&SideJob>,
) -> Result<(Vec<Costed>, u32), CollectiveError> {
    let gs = algorithms::Groups::new(fab, groups);
    let domains = gs.segs[0].len() as u32;
    let arch = groups[0]
        .iter()
        .map(|&g| fab.node_of_gpu(g).arch)
        .reduce(ArchRow::min)
        .unwrap_or(ArchRow::Ampere);
    // SHARP needs a reducing switch on every tree; with none in the fabric its plan always
    // fails, and under Auto that failure is never reported (ring runs or fails first), so
    // it is not planned at all. Forced, it is, for its reason.
    // NCCL runs in-network reduction only where it is set up (CollNet is off by default):
    // under Auto it is never a candidate then, and forced it is refused with how to set it up.
    let any_reducing = fab.in_network.iter().any(|&r| r);
    if choice == AlgoChoice::Sharp && !design.sharp_enabled {
        return Err(CollectiveError::AlgorithmUnavailable {
            algorithm: Algorithm::Sharp,
            op,
            reason: "in-network reduction is not set up in this design: NCCL leaves CollNet \
                     (SHARP) off unless NCCL_COLLNET_ENABLE=1 and the plugin are installed; turn \
                     it on in the design's inspector (or `sharp_enabled: true` in the file)"
                .into(),
        });
    }
    let algorithms: Vec<Algorithm> = algorithms_for(op, choice, domains, fab.library)
        .into_iter()
        .filter(|&a| {
            !(a == Algorithm::Sharp
                && choice == AlgoChoice::Auto
                && !(any_reducing && design.sharp_enabled))
        })
        .collect();
    if algorithms.is_empty() {
        return Err(CollectiveError::NotInLibrary {
            library: fab.library,
            op,
            forced: match choice {
                AlgoChoice::Auto => String::new(),
                other => format!("{other:?}").to_lowercase(),
            },
        });
    }
    let job = PlanJob {
        fab,
        design,
        gs: &gs,
        op,
        adaptive: routing == Routing::Adaptive,
        protocol,
        keep,
        arch,
        side,
        best_us_bits: std::sync::Arc::new(f64::INFINITY.to_bits().into()),
    };
    let all: Vec<usize> = (0..algorithms.len()).collect();
    // When one size's winner is all that is wanted, the algorithms whose step count grows
    // with the GPUs or domains (ring, hierarchical) are planned after the others, and only
    // if their latency alone does not exceed the others' best time: at thousands of GPUs it
    // does, so they cannot win. The choice is the same; they just go uncosted.
    let (first, last): (Vec<usize>, Vec<usize>) = all
        .iter()
        .partition(|&&i| !latency_grows_with_size(algorithms[i]));
    let mut outcomes = match keep {
        Keep::BestAt(s) if domains > 1 && !first.is_empty() && !last.is_empty() => {
            let mut outcomes = job.plan_all(&algorithms, &first);
            let mut best: Option<Choice> = None;
            for (i, outcome) in &outcomes {
                if let Ok(c) = outcome {
                    weigh(&mut best, *i, c, op, protocol, s, |_| {});
                }
            }
            let best_us = best.map_or(f64::INFINITY, |(_, _, l, b)| l + b);
            let n = groups[0].len() as u32;
            let worth: Vec<usize> = last
                .into_iter()
                .filter(|&i| {
                    latency_floor_us(algorithms[i], op, protocol, &gs, n, fab.library) <= best_us
                })
                .collect();
            outcomes.extend(job.plan_all(&algorithms, &worth));
            outcomes
        }
        _ => job.plan_all(&algorithms, &all),
    };
    outcomes.sort_by_key(|(i, _)| *i);

    let mut plans: Vec<Costed> = Vec::new();
    let mut first_error: Option<CollectiveError> = None;
    for (_, outcome) in outcomes {
        match outcome {
            Ok(c) => plans.push(c),
            Err(e) => {
                // A hard error (not connected, no capacity) outranks "not applicable".
                let hard = !matches!(e, CollectiveError::AlgorithmUnavailable { .. });
                if first_error.is_none()
                    || (hard
                        && matches!(
                            first_error,
                            Some(CollectiveError::AlgorithmUnavailable { .. })
                        ))
                {
                    first_error = Some(e);
                }
            }
        }
    }
    if plans.is_empty() {
        return Err(
            first_error.unwrap_or(CollectiveError::AlgorithmUnavailable {
                algorithm: Algorithm::Ring,
                op,
                reason: "no algorithm applies".into(),
            }),
        );
    }
    if let Keep::BestAt(s) = keep {
        // Each thread kept its own best; only the overall one keeps its loads.
        let mut best: Option<Choice> = None;
        for (i, c) in plans.iter().enumerate() {
            weigh(&mut best, i, c, op, protocol, s, |_| {});
        }
        let chosen = best.map_or(0, |b| b.0);
        for (i, c) in plans.iter_mut().enumerate() {
            if i != chosen {
                c.plan.phases.clear();
            }
        }
    }
    Ok((plans, domains))
}

/// Fabrics with at least this many arcs plan their algorithms on several threads; below it
/// a thread costs more than it saves.
const PARALLEL_ARCS: usize = 1 << 16;

#[cfg(test)]
thread_local! {
    /// Tests set the number of planning threads whatever the fabric's size.
    static PLAN_THREADS: std::cell::Cell<Option<usize>> = const { std::cell::Cell::new(None) };
}

/// How many threads plan a fabric's algorithms.
fn plan_threads(fab: &Fabric) -> usize {
    #[cfg(test)]
    if let Some(n) = PLAN_THREADS.with(std::cell::Cell::get) {
        return n;
    }
    if fab.arc_count() >= PARALLEL_ARCS {
        std::thread::available_parallelism().map_or(1, |n| n.get())
    } else {
        1
    }
}

/// The order in which to plan: the long plans first (several threads end together), and
/// in-network reduction first of all: where the switches offer it, it most often wins at
/// large sizes, and a fast time found early lets the other plans stop early (see `Prune`).
fn relative_plan_cost(a: Algorithm) -> u8 {
    match a {
        Algorithm::Sharp => 4,
        Algorithm::Tree => 3,
        Algorithm::NvlsTree | Algorithm::Ring | Algorithm::BidirectionalRing => 2,
        Algorithm::Hierarchical | Algorithm::Direct => 1,
        Algorithm::Nvls => 0,
    }
}

/// Ring and hierarchical take a step per GPU or domain: their latency alone can rule them out.
fn latency_grows_with_size(a: Algorithm) -> bool {
    matches!(
        a,
        Algorithm::Ring | Algorithm::BidirectionalRing | Algorithm::Hierarchical
    )
}

/// A floor under any time of `algorithm` on groups of `n` GPUs across several domains: its
/// latency with the cheapest protocol allowed, with no network path latency of its own
/// (`net_extra_us` is never negative) and intra-domain steps at the network floor (across
/// domains `latency_us` never charges less).
fn latency_floor_us(
    algorithm: Algorithm,
    op: Op,
    forced: Option<Protocol>,
    gs: &algorithms::Groups,
    n: u32,
    library: Library,
) -> f64 {
    let segs = &gs.segs[0];
    let skeleton = Plan {
        algorithm,
        library,
        phases: Vec::new(),
        n,
        domains: segs.len() as u32,
        max_domain_gpus: segs.iter().map(|s| s.gpus.len() as u32).max().unwrap_or(0),
        intra_hw: None,
        uses_net: false,
        net_extra_us: 0.0,
        nvls_rate: 0.0,
        notes: Vec::new(),
    };
    let hops = lat::IntraHops::default();
    Protocol::ALL
        .into_iter()
        .filter(|p| forced.is_none_or(|f| f == *p))
        .map(|p| latency_us(&skeleton, &hops, op, p))
        .fold(f64::INFINITY, f64::min)
}

/// Work that does not wait for the plans, done by the first planning thread to run out of
/// plans (on several threads, one always waits for the others at the end).
type SideJob<'a> = std::sync::Mutex<Option<Box<dyn FnOnce() + Send + 'a>>>;

/// What every plan of one `make_plans` call shares.
struct PlanJob<'a, 'f, 's> {
    fab: &'f Fabric,
    design: &'a Design,
    gs: &'a algorithms::Groups<'a>,
    op: Op,
    adaptive: bool,
    protocol: Option<Protocol>,
    keep: Keep,
    arch: ArchRow,
    side: Option<&'a SideJob<'s>>,
    /// The fastest time costed so far at the wanted size (µs as `f64` bits), for `Prune`.
    best_us_bits: std::sync::Arc<std::sync::atomic::AtomicU64>,
}

impl PlanJob<'_, '_, '_> {
    /// How a plan of `algorithm` may stop early: only when one size's winner is wanted,
    /// across several domains, for the one-phase algorithms whose routing is the costly part.
    fn prune_for(&self, algorithm: Algorithm) -> Option<algorithms::Prune> {
        let Keep::BestAt(s) = self.keep else {
            return None;
        };
        let one_phase = matches!(
            algorithm,
            Algorithm::Tree | Algorithm::NvlsTree | Algorithm::Sharp
        );
        if !one_phase || self.gs.segs[0].len() < 2 {
            return None;
        }
        // time_of's bandwidth term per unit of worst ratio, with the protocol that makes it
        // smallest (LL's ceiling only ever adds).
        let per_worst = Protocol::ALL
            .into_iter()
            .filter(|p| self.protocol.is_none_or(|f| f == *p))
            .map(|p| {
                let correction = if algorithm == Algorithm::Tree && self.op == Op::AllReduce {
                    lat::tree_correction(p, s)
                } else {
                    1.0
                };
                s / payload(p) / correction * 1e6
            })
            .fold(f64::INFINITY, f64::min);
        Some(algorithms::Prune {
            best_us_bits: std::sync::Arc::clone(&self.best_us_bits),
            us_per_worst: per_worst,
            algorithm,
            op: self.op,
        })
    }

    /// Plans and costs `algorithms[i]` for each `i` in `indices`, on several threads when
    /// the fabric is large; returns each one's outcome by its index, in no particular order.
    fn plan_all(
        &self,
        algorithms: &[Algorithm],
        indices: &[usize],
    ) -> Vec<(usize, Result<Costed, CollectiveError>)> {
        let threads = plan_threads(self.fab).min(indices.len());
        // Each thread takes the next plan when it is free.
        let mut queue = indices.to_vec();
        queue.sort_by_key(|&i| std::cmp::Reverse(relative_plan_cost(algorithms[i])));
        let next = std::sync::atomic::AtomicUsize::new(0);
        let take = || {
            let k = next.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
            queue.get(k).map(|&i| (i, algorithms[i]))
        };
        let pool = match super::helpers::pool() {
            Some(pool) if threads > 1 => pool,
            _ => return self.run(take),
        };
        // The calling thread plans too, beside kept helper threads.
        let helpers = std::sync::Mutex::new(Vec::new());
        let mut out = pool.in_place_scope(|scope| {
            for _ in 1..threads {
                scope.spawn(|_| {
                    let done = self.run(take);
                    if let Ok(mut all) = helpers.lock() {
                        all.extend(done);
                    }
                });
            }
            self.run(take)
        });
        out.extend(helpers.into_inner().unwrap_or_default());
        out
    }

    /// Plans and costs the algorithms `next` hands out, with a router of its own; returns
    /// each one's outcome by its index. Loads no result will report on go back to the router
    /// for the next plans.
    fn run(
        &self,
        mut next: impl FnMut() -> Option<(usize, Algorithm)>,
    ) -> Vec<(usize, Result<Costed, CollectiveError>)> {
        let fab = self.fab;
        let mut router = Router::new(fab);
        let mut out: Vec<(usize, Result<Costed, CollectiveError>)> = Vec::new();
        // This thread's best so far: (its fastest time, its index, its position in `out`).
        let mut best: Option<(f64, usize, usize)> = None;
        let release = |router: &mut Router, plan: &mut Plan| {
            for phase in plan.phases.drain(..) {
                if let Ok(loads) = std::sync::Arc::try_unwrap(phase.loads) {
                    router.recycle_loads(loads);
                }
            }
        };
        while let Some((index, algorithm)) = next() {
            router.start_plan(self.prune_for(algorithm));
            let attempt =
                algorithms::plan(fab, &mut router, self.gs, self.op, algorithm, self.adaptive)
                    .and_then(|p| cost(fab, self.design, p, self.arch));
            if router.pruned {
                // Slower than a plan already costed: no candidate, no error to report.
                continue;
            }
            let outcome = match attempt {
                Ok(c)
                    if self
                        .protocol
                        .is_none_or(|p| protocols_for(&c.plan).contains(&p)) =>
                {
                    Ok(c)
                }
                Ok(mut c) => {
                    release(&mut router, &mut c.plan);
                    Err(CollectiveError::AlgorithmUnavailable {
                        algorithm,
                        op: self.op,
                        reason: format!(
                            "it does not run the {} protocol",
                            self.protocol.map_or("", |p| p.label())
                        ),
                    })
                }
                Err(e) => Err(e),
            };
            out.push((index, outcome));
            let at = out.len() - 1;
            let (_, Ok(c)) = &mut out[at] else {
                continue;
            };
            match self.keep {
                Keep::All => {}
                Keep::Nothing => release(&mut router, &mut c.plan),
                Keep::BestAt(s) => {
                    // The tuner keeps the first strictly fastest in index order; threads
                    // take indices out of order, so ties go to the lower index explicitly.
                    let mut fastest: Option<Choice> = None;
                    weigh(&mut fastest, index, c, self.op, self.protocol, s, |_| {});
                    let t = fastest.map_or(f64::INFINITY, |(_, _, l, b)| l + b);
                    if t >= 0.0 {
                        // Non-negative floats order as their bits do.
                        self.best_us_bits
                            .fetch_min(t.to_bits(), std::sync::atomic::Ordering::Relaxed);
                    }
                    let wins = best.is_none_or(|(bt, bi, _)| t < bt || (t == bt && index < bi));
                    if wins {
                        if let Some((_, _, j)) = best
                            && let (_, Ok(old)) = &mut out[j]
                        {
                            release(&mut router, &mut old.plan);
                        }
                        best = Some((t, index, at));
                    } else {
                        release(&mut router, &mut c.plan);
                    }
                }
            }
        }
        let side = self.side.and_then(|s| s.lock().ok()?.take());
        if let Some(job) = side {
            job();
        }
        out
    }
}

/// (latency µs, bandwidth µs) of a costed plan at a size and protocol.
fn time_of(c: &Costed, op: Op, p: Protocol, s: f64) -> (f64, f64) {
    let plan = &c.plan;
    let mut bw = s * c.spb / payload(p);
    if plan.algorithm == Algorithm::Tree && op == Op::AllReduce {
        bw /= lat::tree_correction(p, s);
    }
    if p == Protocol::Ll {
        let cap = lat::ll_max_busbw_gbyte_s(c.arch, plan.domains) * 1e9;
        bw = bw.max(s * op.busbw_factor(plan.n) / cap);
    }
    (latency_us(plan, &c.intra_hops, op, p), bw * 1e6)
}

/// Latency by NCCL's model: base + steps × per-step latency by hop type (intra-node hops as
/// calibrated, see `IntraHops`), plus our stack and switch latency on network steps. MLX has
/// none of NCCL's constants: each ring step is one send and receive over the network path.
fn latency_us(plan: &Plan, hops: &lat::IntraHops, op: Op, p: Protocol) -> f64 {
    if plan.library.is_mlx() {
        return mlx_latency_us(plan, op);
    }
    let n = f64::from(plan.n);
    let m = f64::from(plan.domains);
    let g = f64::from(plan.max_domain_gpus);
    let multi = plan.domains > 1;
    let intra = |algo: TableAlgo| -> f64 {
        let l = plan.intra_hw.map_or(0.0, |hw| hops.hw_latency(hw, algo, p));
        if multi {
            l.max(lat::net_overhead(p))
        } else {
            l
        }
    };
    let inter = |algo: TableAlgo| lat::hw_latency(Hw::Net, algo, p) + plan.net_extra_us;
    let fill = if plan.nvls_rate > 0.0 {
        lat::nvls_fill_us(plan.nvls_rate)
    } else {
        0.0
    };
    match plan.algorithm {
        Algorithm::Ring | Algorithm::BidirectionalRing => {
            let (steps, inter_steps) = match op {
                Op::AllReduce => (2.0 * (n - 1.0), if multi { 2.0 * (m - 1.0) } else { 0.0 }),
                _ => (n - 1.0, if multi { m - 1.0 } else { 0.0 }),
            };
            lat::base_latency(TableAlgo::Ring, p)
                + (steps - inter_steps) * intra(TableAlgo::Ring)
                + inter_steps * inter(TableAlgo::Ring)
        }
        Algorithm::Tree => {
            if multi {
                lat::base_latency(TableAlgo::Tree, p)
                    + 2.0
                        * ((g - 1.0) * intra(TableAlgo::Tree)
                            + lat::log2_ceil(plan.domains) * inter(TableAlgo::Tree))
            } else {
                lat::base_latency(TableAlgo::Tree, p) + 2.0 * (n - 1.0) * intra(TableAlgo::Tree)
            }
        }
        Algorithm::Nvls => hops.hw_latency(Hw::NvLink, TableAlgo::Nvls, p) + fill,
        Algorithm::NvlsTree => {
            hops.hw_latency(Hw::NvLink, TableAlgo::NvlsTree, p)
                + 2.0 * lat::log2_ceil(plan.domains) * inter(TableAlgo::NvlsTree)
                + fill
        }
        Algorithm::Sharp => {
            let intra_hw = plan.intra_hw.unwrap_or(Hw::NvLink);
            2.0 * ((g - 1.0).min(1.0) * hops.hw_latency(intra_hw, TableAlgo::CollNetDirect, p)
                + (g - 1.0) * 0.4)
                + inter(TableAlgo::CollNetDirect)
                + fill
        }
        Algorithm::Hierarchical => {
            lat::base_latency(TableAlgo::Ring, p)
                + 2.0 * (g - 1.0) * intra(TableAlgo::Ring)
                + 2.0 * (m - 1.0) * inter(TableAlgo::Ring)
        }
        Algorithm::Direct => {
            let hop = if plan.uses_net {
                inter(TableAlgo::Ring)
            } else {
                intra(TableAlgo::Ring)
            };
            let base = lat::base_latency(TableAlgo::Ring, p) + hop;
            if op == Op::AllToAll {
                let local = (g - 1.0).max(0.0) * intra(TableAlgo::Ring);
                let remote = (n - g).max(0.0) * lat::net_overhead(p);
                base + (local + remote) / lat::P2P_IN_FLIGHT
            } else {
                base
            }
        }
    }
}

/// Line-rate bounds on busbw (GB/s): point-to-point algorithms, and in-network reduction.
/// Per GPU: t ≥ factor × S / (its egress line rate) is nccl-tests' own reasoning. Across
/// domains: each domain must also push its share through its network ports.
fn busbw_bounds(fab: &Fabric, group: &[u32], op: Op) -> (f64, f64) {
    let n = group.len() as f64;
    let node_net_line = |node: usize| -> f64 {
        let nd = &fab.nodes[node];
        let nic: f64 = fab
            .nics_of(nd)
            .iter()
            .filter_map(|x| x.access)
            .map(|(out, _, _)| fab.arc_line(out as usize))
            .sum();
        if nic > 0.0 {
            nic
        } else {
            fab.other_access_of(nd)
                .iter()
                .map(|(out, _, _)| fab.arc_line(*out as usize))
                .sum()
        }
    };
    let segs = segments(fab, group);
    // Per node of the group, worked out once.
    let mut net_line = vec![f64::NAN; fab.nodes.len()];
    let mut last = u32::MAX;
    for &g in group {
        let node = fab.gpus[g as usize].node;
        if node != last {
            net_line[node as usize] = node_net_line(node as usize);
            last = node;
        }
    }
    let mut gpu_bound = f64::INFINITY;
    for &g in group {
        let gpu = &fab.gpus[g as usize];
        let node = &fab.nodes[gpu.node as usize];
        let mut line = 0.0;
        if gpu.su_up != NO_ARC {
            line += fab.arc_line(gpu.su_up as usize);
        }
        if matches!(node.intra, Intra::Pcie | Intra::BridgePairs) && gpu.pcie_up != NO_ARC {
            line += fab.arc_line(gpu.pcie_up as usize);
        }
        if segs.len() > 1 || node.intra == Intra::Unified {
            line += net_line[gpu.node as usize] / f64::from(node.gpu_count.max(1));
        }
        gpu_bound = gpu_bound.min(line);
    }
    let factor = op.busbw_factor(group.len() as u32);
    let mut p2p = gpu_bound;
    let mut in_net = factor * gpu_bound;
    if segs.len() > 1 {
        let m = segs.len() as f64;
        for s in &segs {
            // Each node of the domain once (its GPUs are consecutive).
            let mut l = 0.0;
            let mut last = u32::MAX;
            for &g in s.gpus {
                let nd = fab.gpus[g as usize].node;
                if nd != last {
                    l += net_line[nd as usize];
                    last = nd;
                }
            }
            let gs = s.gpus.len() as f64;
            let dom = match op {
                Op::AllReduce => factor / (2.0 * (m - 1.0) / m) * l,
                Op::AllGather | Op::ReduceScatter => factor / ((m - 1.0) / m) * l,
                Op::AllToAll => (n - 1.0) * l / (gs * (n - gs)).max(1.0),
                Op::Broadcast | Op::Reduce | Op::SendRecv => l,
            };
            p2p = p2p.min(dom);
            in_net = in_net.min(factor * l);
        }
    }
    (p2p / 1e9, in_net / 1e9)
}

/// A set of concurrent, congruent groups running one collective (a training step's TP or DP
/// groups all at once).
pub(crate) struct GroupSpec<'a> {
    pub groups: &'a [Vec<u32>],
    pub op: Op,
    pub bytes: f64,
}

/// What `evaluate_groups` says of one spec: the time of one call, the algorithm the tuner
/// picks, and (when asked for) its busiest resources, busiest first.
#[derive(Clone)]
pub(crate) struct GroupTime {
    pub time_us: f64,
    pub algorithm: Algorithm,
    pub bottleneck: Vec<LinkLoad>,
}

/// Time (µs) and chosen algorithm for concurrent groups, on a fabric already built; with
/// `report`, the chosen plan's busiest resources too.
pub(crate) fn evaluate_groups(
    fab: &Fabric,
    design: &Design,
    specs: &[GroupSpec],
    routing: Routing,
    report: bool,
) -> Result<Vec<GroupTime>, CollectiveError> {
    evaluate_groups_with(fab, design, specs, routing, report, None)
}

/// Plans already made on one fabric, by the groups, operation and routing they were made
/// for. A plan does not depend on the size (only its timing does), so a search that times the
/// same groups at many sizes (micro-batches) plans them once.
#[derive(Default)]
pub(crate) struct PlanCache {
    plans: std::sync::Mutex<HashMap<PlanKey, Arc<Vec<Costed>>>>,
}

type PlanKey = (Op, Routing, Vec<Vec<u32>>);

impl PlanCache {
    /// Entries kept before the cache starts again: plans of a 16k-GPU all-reduce take a few
    /// hundred kilobytes each.
    const CAPACITY: usize = 256;

    fn get_or_make(
        &self,
        key: PlanKey,
        make: impl FnOnce() -> Result<Vec<Costed>, CollectiveError>,
    ) -> Result<Arc<Vec<Costed>>, CollectiveError> {
        let lock = || self.plans.lock().unwrap_or_else(|e| e.into_inner());
        if let Some(plans) = lock().get(&key) {
            return Ok(Arc::clone(plans));
        }
        let plans = Arc::new(make()?);
        let mut cache = lock();
        if cache.len() >= Self::CAPACITY {
            cache.clear();
        }
        cache.insert(key, Arc::clone(&plans));
        Ok(plans)
    }
}

/// `evaluate_groups`, reusing the plans in `cache` (made for this fabric) when given; a cache
/// serves unreported timings only, whose plans keep no loads.
pub(crate) fn evaluate_groups_with(
    fab: &Fabric,
    design: &Design,
    specs: &[GroupSpec],
    routing: Routing,
    report: bool,
    cache: Option<&PlanCache>,
) -> Result<Vec<GroupTime>, CollectiveError> {
    let cache = cache.filter(|_| !report);
    let mut out = Vec::with_capacity(specs.len());
    for spec in specs {
        if spec.groups.is_empty() || spec.groups[0].len() < 2 || spec.bytes <= 0.0 {
            out.push(GroupTime {
                time_us: 0.0,
                algorithm: Algorithm::Direct,
                bottleneck: Vec::new(),
            });
            continue;
        }
        let make = || {
            make_plans(
                fab,
                design,
                spec.groups,
                spec.op,
                AlgoChoice::Auto,
                routing,
                None,
                if report { Keep::All } else { Keep::Nothing },
                None,
            )
            .map(|(plans, _)| plans)
        };
        let plans = match cache {
            Some(cache) => cache.get_or_make((spec.op, routing, spec.groups.to_vec()), make)?,
            None => Arc::new(make()?),
        };
        // (time, latency, plan index)
        let mut best = (f64::INFINITY, 0.0, usize::MAX);
        for (i, c) in plans.iter().enumerate() {
            for p in protocols_for(&c.plan) {
                if !used_at(&c.plan, spec.bytes) {
                    continue;
                }
                let (l, b) = time_of(c, spec.op, p, spec.bytes);
                if l + b < best.0 {
                    best = (l + b, l, i);
                }
            }
        }
        let (time_us, latency_us, chosen) = best;
        let bottleneck = match plans.get(chosen) {
            Some(c) if report => bottleneck(fab, design, c, time_us - latency_us, time_us).0,
            _ => Vec::new(),
        };
        out.push(GroupTime {
            time_us,
            algorithm: plans
                .get(chosen)
                .map_or(Algorithm::Ring, |c| c.plan.algorithm),
            bottleneck,
        });
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::analysis::collective::test_designs::rail_optimized;

    /// Planning on two threads gives what planning one after another does, bit for bit: the
    /// same plans in the same order, the same costs, the same loads kept.
    #[test]
    fn threads_change_nothing() {
        let catalog = Catalog::builtin();
        let design = rail_optimized(64, "dgx-h100", 2);
        let fab = fabric::build(&design, &catalog).expect("fabric");
        let all: Vec<u32> = (0..fab.gpus.len() as u32).collect();
        let half: Vec<u32> = (0..fab.gpus.len() as u32 / 2).collect();
        let summary =
            |threads: usize, groups: &[Vec<u32>], op: Op, routing: Routing, keep: Keep| {
                PLAN_THREADS.with(|c| c.set(Some(threads)));
                let plans = make_plans(
                    &fab,
                    &design,
                    groups,
                    op,
                    AlgoChoice::Auto,
                    routing,
                    None,
                    keep,
                    None,
                );
                PLAN_THREADS.with(|c| c.set(None));
                let (plans, _) = plans.expect("plans");
                plans
                    .iter()
                    .map(|c| {
                        let loads: Vec<Vec<u64>> = c
                            .plan
                            .phases
                            .iter()
                            .map(|p| p.loads.iter().map(|l| l.to_bits()).collect())
                            .collect();
                        (
                            c.plan.algorithm,
                            c.spb.to_bits(),
                            c.plan.net_extra_us.to_bits(),
                            loads,
                        )
                    })
                    .collect::<Vec<_>>()
            };
        let mut kept_somewhere = 0;
        for groups in [vec![all.clone()], vec![half.clone()]] {
            for op in [Op::AllReduce, Op::AllGather, Op::AllToAll] {
                for routing in [Routing::Ecmp, Routing::Adaptive] {
                    for keep in [
                        Keep::All,
                        Keep::BestAt(1e3),
                        Keep::BestAt(1e9),
                        Keep::Nothing,
                    ] {
                        let (mut one, mut two) = (
                            summary(1, &groups, op, routing, keep),
                            summary(2, &groups, op, routing, keep),
                        );
                        if let Keep::BestAt(_) = keep {
                            // Which plans stop early on two threads depends on which one
                            // finishes first (see `Prune`): only those may be missing on
                            // either side, and the chosen one (keeping loads) must not be.
                            let (a, b) = (one.clone(), two.clone());
                            for (side, other) in [(&mut one, &b), (&mut two, &a)] {
                                side.retain(|p| {
                                    let both = other.iter().any(|q| q.0 == p.0);
                                    assert!(
                                        both || matches!(
                                            p.0,
                                            Algorithm::Tree
                                                | Algorithm::NvlsTree
                                                | Algorithm::Sharp
                                        ),
                                        "{op} {keep:?}: {} costed on one side only",
                                        p.0
                                    );
                                    both
                                });
                            }
                        }
                        assert_eq!(one, two, "{op} {routing:?} {keep:?}");
                        if keep != Keep::Nothing {
                            kept_somewhere += one.iter().filter(|p| !p.3.is_empty()).count();
                        }
                        if let Keep::BestAt(_) = keep {
                            let kept = one.iter().filter(|p| !p.3.is_empty()).count();
                            assert_eq!(
                                kept, 1,
                                "{op} {keep:?}: exactly the chosen plan keeps loads"
                            );
                        }
                    }
                }
            }
        }
        assert!(kept_somewhere > 12);
        // All-reduce plans several algorithms: the threads had work to share.
        assert!(summary(1, &[all], Op::AllReduce, Routing::Ecmp, Keep::All).len() >= 4);
    }

    /// Load buffers pass from one evaluation to the next: results do not depend on what ran
    /// before.
    #[test]
    fn earlier_evaluations_leave_no_trace() {
        let catalog = Catalog::builtin();
        let design = rail_optimized(16, "dgx-h100", 2);
        let all_reduce = CollectiveQuery::new(Op::AllReduce, Bytes(1 << 30));
        let first = super::super::collective(&design, &catalog, &all_reduce).expect("first");
        assert!(first.time_us > 0.0 && !first.bottleneck.is_empty());
        for op in [Op::AllToAll, Op::AllGather, Op::AllReduce] {
            let q = CollectiveQuery::new(op, Bytes(1 << 20));
            super::super::sweep(&design, &catalog, &q).expect("sweep");
        }
        let again = super::super::collective(&design, &catalog, &all_reduce).expect("again");
        assert_eq!(first, again);
    }

    /// Leaving ring and hierarchical uncosted when their latency alone loses changes no
    /// answer: one size's result is the sweep's (every algorithm costed) at that size, bar
    /// the list of candidates, on one thread and on two.
    #[test]
    fn latency_floor_leaves_out_only_losers() {
        let catalog = Catalog::builtin();
        // Hopper nodes on switches that reduce in the network; Ampere nodes (no NVLS) on
        // switches that do not, where rings win the large sizes.
        let mut plain = rail_optimized(8, "dgx-a100", 2);
        for d in &mut plain.devices {
            if let crate::model::DeviceKind::Switch(s) = &mut d.kind {
                s.features.in_network_reduction = false;
            }
        }
        let (mut left_out, mut costed, mut ring_won) = (0, 0, 0);
        for (threads, design) in [1, 2]
            .into_iter()
            .flat_map(|t| [(t, rail_optimized(64, "dgx-h100", 2)), (t, plain.clone())])
        {
            PLAN_THREADS.with(|c| c.set(Some(threads)));
            for (op, protocol) in [
                (Op::AllReduce, None),
                (Op::AllReduce, Some(Protocol::Ll)),
                (Op::AllGather, None),
            ] {
                for bytes in [8u64, 1 << 16, 1 << 20, 1 << 26, 1 << 30, 1 << 33] {
                    let mut q = CollectiveQuery::new(op, Bytes(bytes));
                    q.protocol = protocol;
                    let one = super::super::collective(&design, &catalog, &q).expect("one");
                    let all = Evaluator::new(&design, &catalog, &q, Keep::All)
                        .expect("all")
                        .result_at(Bytes(bytes));
                    for c in &one.candidates {
                        assert!(all.candidates.contains(c), "{c:?}");
                    }
                    ring_won += usize::from(one.algorithm == Algorithm::Ring);
                    if one
                        .candidates
                        .iter()
                        .any(|c| c.algorithm == Algorithm::Ring)
                    {
                        costed += 1;
                    } else {
                        left_out += 1;
                        // Every ring candidate was slower than the answer.
                        let rings = all
                            .candidates
                            .iter()
                            .filter(|c| c.algorithm == Algorithm::Ring);
                        assert!(rings.clone().count() > 0);
                        assert!(rings.clone().all(|c| c.time_us > one.time_us));
                    }
                    // The floor is under every costed ring and hierarchical plan's latency.
                    if threads == 1 && bytes == 8 {
                        let fab = fabric::build(&design, &catalog).expect("fabric");
                        let groups = [(0..fab.gpus.len() as u32).collect::<Vec<u32>>()];
                        let gs = algorithms::Groups::new(&fab, &groups);
                        let (plans, _) = make_plans(
                            &fab,
                            &design,
                            &groups,
                            op,
                            AlgoChoice::Auto,
                            Routing::Ecmp,
                            protocol,
                            Keep::Nothing,
                            None,
                        )
                        .expect("plans");
                        for c in plans
                            .iter()
                            .filter(|c| latency_grows_with_size(c.plan.algorithm))
                        {
                            for p in protocols_for(&c.plan) {
                                let floor = latency_floor_us(
                                    c.plan.algorithm,
                                    op,
                                    Some(p),
                                    &gs,
                                    groups[0].len() as u32,
                                    fab.library,
                                );
                                let latency = latency_us(&c.plan, &c.intra_hops, op, p);
                                assert!(floor > 0.0 && floor <= latency, "{floor} {latency}");
                            }
                        }
                    }
                    // What was costed differs, and so does the runner-up named in `why`.
                    let bare = |r: &CollectiveResult| CollectiveResult {
                        candidates: Vec::new(),
                        why: String::new(),
                        ..r.clone()
                    };
                    assert_eq!(bare(&one), bare(&all), "{op:?} {bytes} B");
                }
            }
        }
        PLAN_THREADS.with(|c| c.set(None));
        // Both cases came up: small sizes rule the ring out, the largest do not.
        assert!(left_out > 0 && costed > 0, "{left_out} {costed}");
        assert!(ring_won > 0);
    }

    /// Plans that stop early (tree, NVLS-tree, SHARP, once their loads so far make them slower
    /// than a plan already costed) change nothing but the list of candidates: the answer is
    /// the one of costing every plan, on one thread and on two, and every candidate left out
    /// was slower than it. SHARP, planned first, wins the large sizes on a three-tier
    /// rail-optimized fabric and on a 3:1 oversubscribed fat-tree, so the others stop there;
    /// without it, tree is planned first and NVLS-tree, a little faster, must not stop.
    #[test]
    fn plans_stop_early_only_when_slower() {
        let catalog = Catalog::builtin();
        // SHARP set up on the first two (NCCL leaves it off unless told).
        let mut fat_tree = crate::io::design_file::parse_design(
            include_str!("../../../presets/dgx-h100-fat-tree-3to1.ron"),
            "dgx-h100-fat-tree-3to1.ron",
        )
        .expect("preset");
        fat_tree.sharp_enabled = true;
        let mut with_sharp = rail_optimized(64, "dgx-h100", 3);
        with_sharp.sharp_enabled = true;
        let mut plain = rail_optimized(64, "dgx-h100", 3);
        for d in &mut plain.devices {
            if let crate::model::DeviceKind::Switch(s) = &mut d.kind {
                s.features.in_network_reduction = false;
            }
        }
        let designs = [with_sharp, fat_tree, plain];
        let (mut stopped, mut answers) = (0, 0);
        for (threads, design) in [1, 2]
            .into_iter()
            .flat_map(|t| designs.iter().map(move |d| (t, d)))
        {
            PLAN_THREADS.with(|c| c.set(Some(threads)));
            for protocol in [None, Some(Protocol::Simple), Some(Protocol::Ll)] {
                for bytes in [1u64 << 16, 1 << 22, 1 << 26, 1 << 30, 1 << 33] {
                    let mut q = CollectiveQuery::new(Op::AllReduce, Bytes(bytes));
                    q.protocol = protocol;
                    let one = super::super::collective(design, &catalog, &q).expect("one");
                    let all = Evaluator::new(design, &catalog, &q, Keep::All)
                        .expect("all")
                        .result_at(Bytes(bytes));
                    // What was costed differs, and so does the runner-up named in `why`.
                    let bare = |r: &CollectiveResult| CollectiveResult {
                        candidates: Vec::new(),
                        why: String::new(),
                        ..r.clone()
                    };
                    assert!(
                        bare(&one) == bare(&all),
                        "{protocol:?} {bytes} B: {} {} µs, costing all: {} {} µs",
                        one.algorithm,
                        one.time_us,
                        all.algorithm,
                        all.time_us
                    );
                    answers += usize::from(threads == 1);
                    for c in &all.candidates {
                        if one.candidates.contains(c) {
                            continue;
                        }
                        assert!(c.time_us > one.time_us, "{c:?} left out of {one:?}");
                        // On one thread the order, so which plans stop, is fixed.
                        if threads == 1
                            && matches!(
                                c.algorithm,
                                Algorithm::Tree | Algorithm::NvlsTree | Algorithm::Sharp
                            )
                        {
                            stopped += 1;
                        }
                    }
                }
            }
        }
        PLAN_THREADS.with(|c| c.set(None));
        assert!(stopped >= answers / 4, "{stopped} of {answers}");
    }

    /// The bottleneck report scans links and ports side by side on large fabrics: the same
    /// report as one scan, for one-phase plans and hierarchical's three phases.
    #[test]
    fn bottleneck_scans_side_by_side_report_what_one_scan_does() {
        let catalog = Catalog::builtin();
        let mut design = rail_optimized(32, "dgx-a100", 2);
        design.links[5].state = crate::model::LinkState::Degraded { fraction: 0.25 };
        for algorithm in [AlgoChoice::Auto, AlgoChoice::Tree, AlgoChoice::Hierarchical] {
            let mut q = CollectiveQuery::new(Op::AllReduce, Bytes(1 << 30));
            q.algorithm = algorithm;
            let report = |threads: usize| {
                PLAN_THREADS.with(|c| c.set(Some(threads)));
                let r = super::super::collective(&design, &catalog, &q);
                PLAN_THREADS.with(|c| c.set(None));
                r.expect("result")
            };
            let (one, two) = (report(1), report(2));
            assert!(!one.bottleneck.is_empty() && !one.link_utilization.is_empty());
            assert_eq!(one.bottleneck, two.bottleneck, "{algorithm:?}");
            assert_eq!(one.link_utilization, two.link_utilization, "{algorithm:?}");
            assert_eq!(
                one.device_utilization, two.device_utilization,
                "{algorithm:?}"
            );
        }
    }
}
