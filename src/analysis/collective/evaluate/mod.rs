//! Turns plans into times: latency by NCCL's constants, bandwidth from the most loaded arc,
//! the tuner's choice among algorithms and protocols, and the bottleneck report.
//!
//! `schedule` plans the algorithms (on several threads at scale), `step_latency` sums NCCL's
//! latency constants for a plan, `bottleneck` names the busiest resources, `bounds` gives the
//! line-rate bounds, `groups` times a training step's concurrent groups.

mod bottleneck;
mod bounds;
mod groups;
mod schedule;
mod step_latency;

pub(crate) use groups::{GroupSpec, PlanCache, evaluate_groups, evaluate_groups_with};

use super::channels::RingChannels;
use super::efficiency as eff;
use super::fabric::Fabric;
use super::latency::{self as lat, ArchRow, HopKind, Protocol};
use super::load_ratio::{worst_ratio, worst_ratios};
use super::plan::{Phase, Plan};
use super::workspace::{Workspace, zeroed};
use super::{
    AlgoChoice, Algorithm, Candidate, CollectiveError, CollectiveQuery, CollectiveResult, Forced,
    Op, Routing,
};
use crate::model::{Bytes, Catalog, Design};
use bottleneck::{bottleneck, resource_label};
use bounds::busbw_bounds;
use schedule::{SideJob, make_plans};
pub(crate) use step_latency::calibrated_ring_step_us;
use step_latency::{IntraHops, latency_us};

/// A plan with its bandwidth cost.
pub(crate) struct Costed {
    /// The plan; its phases' loads are dropped when no result will need them (see `Keep`).
    pub plan: Plan,
    /// Seconds per byte of size at full payload (Simple).
    pub seconds_per_byte: f64,
    /// The same as NCCL's tuner sees it: links between two switches never queue
    /// (`Fabric::arc_core`). Equal to `seconds_per_byte` where they do not.
    pub tuner_seconds_per_byte: f64,
    pub arch: ArchRow,
    /// Calibrated intra-node hop latencies on this plan's path (none: NCCL's constants).
    pub intra_hops: IntraHops,
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
        let busy_of = |phase: &Phase, a: usize, load: f64| {
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

/// The tuner's choice so far: (plan index, protocol, latency µs, bandwidth µs, the time the
/// tuner ranks it by µs).
pub(super) type Choice = (usize, Protocol, f64, f64, f64);

/// Weighs plan `i`'s protocols at size `s` in NCCL's order, keeping the first strictly fastest
/// candidate overall; reports each candidate. Returns whether plan `i` became the choice.
///
/// NCCL's tuner ranks by its own constants: a calibration of the design's intra-node hops
/// changes how long a step takes, not what NCCL picks. So candidates are ranked by their time
/// with NCCL's hop latencies, and timed with the calibrated ones. The tuner also ranks on all
/// its channels, and only then runs a small operation on fewer (`channels`): the ranking
/// leaves that out too.
pub(super) fn weigh(
    best: &mut Option<Choice>,
    i: usize,
    c: &Costed,
    op: Op,
    forced: Option<Protocol>,
    s: f64,
    mut candidate: impl FnMut(Candidate),
) -> bool {
    let mut chosen = false;
    if !used_at(&c.plan, op, s) {
        return false;
    }
    for p in protocols_for(&c.plan) {
        if forced.is_some_and(|forced| forced != p) {
            continue;
        }
        let (latency, bw) = time_of(c, op, p, s);
        let t = latency + bw;
        let rank = tuner_time(c, &IntraHops::default(), op, p, s);
        candidate(Candidate {
            algorithm: c.plan.algorithm,
            protocol: p,
            time_us: t,
        });
        if best.is_none_or(|(_, _, _, _, r)| rank < r) {
            *best = Some((i, p, latency, bw, rank));
            chosen = true;
        }
    }
    chosen
}

/// Whether the library runs the plan at this size: MLX turns its ring both ways only for
/// large arrays (`Library::both_ways_from_bytes`); JACCL's mesh sends every rank's whole
/// array to every peer up to 32 KiB, and on three or more ranks reduce-scatters and
/// all-gathers above (`Library::mesh_splits_above`).
pub(super) fn used_at(plan: &Plan, op: Op, s: f64) -> bool {
    let mesh_splits = || {
        plan.library
            .mesh_splits_above(plan.gpus)
            .is_some_and(|above| s > above)
    };
    match plan.algorithm {
        Algorithm::BidirectionalRing => plan
            .library
            .both_ways_from_bytes(plan.gpus)
            .is_some_and(|from| s >= from),
        Algorithm::Mesh => mesh_splits(),
        Algorithm::Direct if op == Op::AllReduce && plan.library.is_mlx() => !mesh_splits(),
        _ => true,
    }
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
    /// Where the fabric's lists and the plans' load buffers go back to.
    workspace: &'d Workspace,
    fab: Fabric,
    op: Op,
    /// GPUs in the group.
    gpus: u32,
    routing: Routing,
    /// The algorithm asked for (auto, or one forced).
    choice: AlgoChoice,
    protocol: Option<Protocol>,
    plans: Vec<Costed>,
    /// Algorithms left uncosted because they could not win at the size asked
    /// (`make_plans`).
    slower: Vec<Algorithm>,
    bound_gbyte_s: f64,
    in_network_bound_gbyte_s: f64,
}

pub(super) fn protocols_for(plan: &Plan) -> Vec<Protocol> {
    if !plan.library.is_nccl() {
        // MLX and Gloo move plain buffers: no LL or LL128 lines.
        return vec![Protocol::Simple];
    }
    if plan.efa {
        return vec![Protocol::Simple];
    }
    if plan.no_net_ll128
        && !matches!(
            plan.algorithm,
            Algorithm::Nvls | Algorithm::NvlsTree | Algorithm::Sharp
        )
    {
        return vec![Protocol::Ll, Protocol::Simple];
    }
    match plan.algorithm {
        Algorithm::Nvls | Algorithm::NvlsTree | Algorithm::Sharp => vec![Protocol::Simple],
        Algorithm::Direct => vec![Protocol::Ll, Protocol::Simple],
        // NCCL enables LL128 only where GPUs talk over NVLink, and on GPUs it was tested on.
        _ if plan.intra_hop == Some(HopKind::Pci) || plan.gpus_without_ll128 => {
            vec![Protocol::Ll, Protocol::Simple]
        }
        _ => Protocol::ALL.to_vec(),
    }
}

pub(super) fn payload(p: Protocol) -> f64 {
    match p {
        Protocol::Ll => eff::LL_PAYLOAD,
        Protocol::Ll128 => eff::LL128_PAYLOAD,
        Protocol::Simple => 1.0,
    }
}

/// The most loaded arc's busy time per byte in one phase, on the fabric and on the fabric as
/// NCCL's tuner sees it (without `Fabric::arc_core`), or the first arc that must carry traffic
/// but has no capacity (under a byte per second: dividing by it overflows).
fn phase_worst(fab: &Fabric, phase: &Phase, nvls_eff: f64) -> Result<(f64, f64), usize> {
    let loads = phase.loads.as_slice();
    let usable = &fab.arc_usable[..loads.len()];
    let nvlink = &fab.arc_nvlink[..loads.len()];
    let cap_of = |u: f64, nv: bool| if phase.nvls && nv { u * nvls_eff } else { u };
    let (worst, seen, bad) = if fab.arc_core.is_empty() {
        let (worst, bad) = if phase.nvls {
            worst_ratio(loads, usable, nvlink, cap_of)
        } else {
            worst_ratio(loads, usable, nvlink, |u, _| u)
        };
        (worst, worst, bad)
    } else {
        let hidden = &fab.arc_core[..loads.len()];
        worst_ratios::<true>(loads, usable, hidden, nvlink, cap_of)
    };
    if bad {
        // Rare: find the first such arc, in arc order.
        let first = (0..loads.len()).find(|&a| {
            let cap = cap_of(usable[a], nvlink[a]);
            loads[a] > 1e-15 && (cap.is_nan() || cap < 1.0)
        });
        if let Some(a) = first {
            return Err(a);
        }
    }
    Ok((worst, seen))
}

/// Sums a plan's phases into a bandwidth cost; refuses arcs that must carry traffic but
/// have no capacity.
pub(super) fn cost(
    fab: &Fabric,
    design: &Design,
    plan: Plan,
    arch: ArchRow,
) -> Result<Costed, CollectiveError> {
    let nvls_eff = arch.nvls_efficiency();
    let mut seconds_per_byte = 0.0;
    let mut tuner_seconds_per_byte = 0.0;
    let mut seen: Vec<(*const Vec<f64>, bool, (f64, f64))> = Vec::new();
    for phase in &plan.phases {
        // A phase that repeats an earlier one's traffic (hierarchical's all-gather) shares it.
        let key = (std::sync::Arc::as_ptr(&phase.loads), phase.nvls);
        let known = seen
            .iter()
            .find(|(p, nvls, _)| (*p, *nvls) == key)
            .map(|&(_, _, w)| w);
        let (worst, tuner_worst) = match known {
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
        seconds_per_byte += worst * phase.repeat;
        tuner_seconds_per_byte += tuner_worst * phase.repeat;
    }
    let intra_hops = IntraHops::of(fab, design, &plan);
    Ok(Costed {
        plan,
        seconds_per_byte,
        tuner_seconds_per_byte,
        arch,
        intra_hops,
    })
}

impl Drop for Evaluator<'_> {
    /// The plans' load buffers and the fabric's lists serve the next evaluation.
    fn drop(&mut self) {
        for c in &mut self.plans {
            for phase in c.plan.phases.drain(..) {
                if let Ok(loads) = std::sync::Arc::try_unwrap(phase.loads) {
                    self.workspace.keep_loads(loads);
                }
            }
        }
        self.workspace.keep_fabric(&mut self.fab);
    }
}

impl<'d> Evaluator<'d> {
    pub fn new(
        design: &'d Design,
        catalog: &Catalog,
        q: &CollectiveQuery,
        keep: Keep,
        workspace: &'d Workspace,
    ) -> Result<Self, CollectiveError> {
        let fab = workspace.build_fabric(design, catalog)?;
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
        let (plans, _, slower) = make_plans(
            &fab,
            design,
            &groups,
            q.op,
            q.algorithm,
            q.routing,
            q.protocol,
            keep,
            Some(&side),
            workspace,
        )?;
        drop(side);
        let (bound, in_network_bound) = match bounds.get() {
            Some(&bounds) => bounds,
            None => busbw_bounds(&fab, &groups[0], q.op),
        };
        Ok(Evaluator {
            design,
            workspace,
            fab,
            op: q.op,
            gpus: requested as u32,
            routing: q.routing,
            choice: q.algorithm,
            protocol: q.protocol,
            plans,
            slower,
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
        let (i, protocol, latency_us, bandwidth_us, _) =
            best.unwrap_or((0, Protocol::Simple, 0.0, 0.0, 0.0));
        let chosen = &self.plans[i];
        let time_us = latency_us + bandwidth_us;
        let algbw = if time_us > 0.0 {
            s / (time_us * 1e3)
        } else {
            0.0
        };
        let busbw = algbw * self.op.busbw_factor(self.gpus);
        let (bottleneck, link_utilization, device_utilization) = bottleneck(
            &self.fab,
            self.design,
            chosen,
            (bandwidth_us, time_us),
            &self.workspace.strategy,
        );
        let mut notes = chosen.plan.notes.clone();
        let fewer_channels = chosen.plan.channels.and_then(|ch| {
            let in_use = ch.in_use(chosen.plan.algorithm, protocol, chosen.plan.gpus, s);
            (in_use < ch.comm).then_some((in_use, ch))
        });
        if let Some((in_use, ch)) = fewer_channels {
            notes.push(format!(
                "NCCL runs this size on {in_use} of its {} channels, {:.0} GB/s each: a channel \
                 must hold its threads' share of the bytes (enqueue.cc)",
                ch.comm, ch.speed_gbyte_s
            ));
        }
        let tree_fill = tree_fill_us(chosen, protocol, s);
        if let Some(tree) = chosen.plan.tree_pipeline.filter(|_| tree_fill > 0.0) {
            let chunk = Bytes(tree.chunk_bytes(s) as u64);
            let hops = tree.hops();
            notes.push(if chosen.plan.algorithm == Algorithm::NvlsTree {
                format!(
                    "NVLSTree's heads forward their {chunk} chunks whole up and down the tree \
                     between nodes (all_reduce.h, enqueue.cc): the first of them crosses the \
                     tree's {hops} node-to-node hops, up and down, before the rest streams \
                     behind, {tree_fill:.0} µs that NCCL's tuner does not count"
                )
            } else {
                format!(
                    "NCCL's tree under Simple forwards each channel's {chunk} chunks whole, hop \
                     by hop (all_reduce.h, enqueue.cc): the first of them crosses all {hops} hops \
                     before the rest streams behind, {tree_fill:.0} µs that NCCL's tuner does not \
                     count"
                )
            });
        }
        let calibrated = chosen.intra_hops != IntraHops::default();
        // How much longer the plan's bandwidth term is for the queues between switches,
        // which NCCL's tuner does not see.
        let queued = if chosen.tuner_seconds_per_byte > 0.0 {
            chosen.seconds_per_byte / chosen.tuner_seconds_per_byte
        } else {
            1.0
        };
        let ranked_apart = || {
            let mut unseen = Vec::new();
            if queued > 1.001 {
                unseen.push(format!(
                    "blind to the queues between switches (they make its bandwidth time \
                     {queued:.2}× what its NICs and NVLink allow)"
                ));
            }
            if tree_fill > 0.0 {
                unseen.push(format!(
                    "without its tree's {tree_fill:.0} µs pipeline fill"
                ));
            }
            if unseen.is_empty() {
                return ranked_apart_by_constants(fewer_channels, calibrated);
            }
            let unseen = format!("NCCL's tuner ranks it {}", unseen.join(" and "));
            if calibrated {
                format!(
                    "{unseen}, by its own latency constants (the design's calibrated hop \
                     latencies change step times, not its choice)"
                )
            } else {
                unseen
            }
        };
        if chosen.plan.algorithm.reduces_in_network() {
            // The bound printed beside busbw is then the in-switch one: say what the wire
            // alone allows, so the two figures are not read as one.
            let wire = if self.bound_gbyte_s.is_finite() && self.bound_gbyte_s > 0.0 {
                format!(" ({:.0} GB/s here)", self.bound_gbyte_s)
            } else {
                String::new()
            };
            notes.push(format!(
                "{} reduces inside the switches, so busbw may exceed what point-to-point \
                 transfers allow{wire}; the line-rate bound shown counts the switches' reduction",
                chosen.plan.algorithm
            ));
        }
        let mut why = why_chosen(
            &candidates,
            &self.slower,
            chosen.plan.algorithm,
            protocol,
            time_us,
            self.fab.library.is_nccl(),
            ranked_apart,
        );
        if let Some(fallback) = &chosen.plan.fallback {
            why = format!("{fallback}; {why}");
        }
        if self.choice == AlgoChoice::Nvls && chosen.plan.algorithm == Algorithm::NvlsTree {
            why = format!(
                "NVLS across {} NVLink domains runs as nvls-tree (NVLS inside each, a tree \
                 between them); {why}",
                chosen.plan.domains
            );
        }
        CollectiveResult {
            library: self.fab.library,
            nccl_release: self
                .fab
                .library
                .is_nccl()
                .then_some(self.design.nccl_release)
                .flatten(),
            assumes: self.fab.library.assumes(
                self.design.sharp_enabled,
                self.design.nccl_release,
                self.design.nccl_buffer,
                Forced {
                    algorithm: (self.choice != AlgoChoice::Auto).then_some(chosen.plan.algorithm),
                    protocol: self.protocol,
                },
                self.fab.in_switch_hardware(),
            ),
            why,
            unseen_queueing: queued,
            op: self.op,
            bytes,
            gpus: self.gpus,
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

/// Why NCCL's tuner picks a plan the times rank below another: it ranks on all its channels
/// a size it runs on fewer, and by its own hop latencies where the design's are calibrated.
fn ranked_apart_by_constants(
    fewer_channels: Option<(u32, RingChannels)>,
    calibrated: bool,
) -> String {
    match (fewer_channels, calibrated) {
        (Some((in_use, ch)), false) => format!(
            "NCCL's tuner ranks it first as if on all {} of its channels, then runs this size \
             on {in_use}",
            ch.comm
        ),
        (Some((in_use, ch)), true) => format!(
            "NCCL's tuner picks it by its own latency constants on all {} channels (the \
             design's calibrated hop latencies change step times, not its choice, and this \
             size runs on {in_use})",
            ch.comm
        ),
        (None, _) => "NCCL's tuner picks it by its own latency constants (the design's \
                      calibrated hop latencies change step times, not its choice)"
            .to_string(),
    }
}

/// Why the answer's algorithm and protocol: the fastest of the pairs costed, with the runner-up
/// and how much slower it is; or, where NCCL's tuner ranks by figures other than the times
/// (`ranked_apart` says which, asked only then: its own hop latencies on a calibrated design,
/// all its channels for a size it runs on fewer), its pick and the faster pair the times
/// would rank first.
fn why_chosen(
    candidates: &[Candidate],
    slower: &[Algorithm],
    algorithm: Algorithm,
    protocol: Protocol,
    time_us: f64,
    protocols_named: bool,
    ranked_apart: impl FnOnce() -> String,
) -> String {
    let runner_up = candidates
        .iter()
        .filter(|c| !(c.algorithm == algorithm && c.protocol == protocol))
        .min_by(|a, b| a.time_us.total_cmp(&b.time_us));
    let Some(next) = runner_up else {
        return "the only algorithm and protocol available".into();
    };
    // MLX and Gloo have no protocols to name.
    let next_name = if protocols_named {
        format!("{}/{}", next.algorithm, next.protocol.label())
    } else {
        next.algorithm.to_string()
    };
    let next_text = format!(
        "{next_name} {} {} ({})",
        if next.time_us < time_us {
            "would take"
        } else {
            "at"
        },
        crate::model::units::time_text(next.time_us),
        match (next.time_us / time_us - 1.0) * 100.0 {
            _ if time_us <= 0.0 => "n/a".into(),
            // "+0 %" would read as a tie the ranking broke by chance: say how close.
            percent if percent.abs() < 0.5 => "within 0.5 %".into(),
            percent => format!("{percent:+.0} %"),
        }
    );
    if next.time_us < time_us {
        format!("{}; {next_text}", ranked_apart())
    } else if slower.is_empty() {
        format!("fastest of {} costed; next {next_text}", candidates.len())
    } else {
        // Those left uncosted are slower than the pick (their latency alone, or their loads
        // so far, exceed its time), but may beat the next costed.
        let names: Vec<String> = slower.iter().map(|a| a.to_string()).collect();
        format!(
            "fastest of {} costed ({} left uncosted: slower at this size); next costed \
             {next_text}",
            candidates.len(),
            names.join(" and ")
        )
    }
}

/// (latency µs, bandwidth µs) of a costed plan at a size and protocol, on the channels NCCL
/// runs it on.
/// A tree under Simple also fills its pipeline one whole chunk at a time (`tree_fill_us`),
/// and before 2.20 a ring all-reduce waits on chunks rounded up on the GPU
/// (`DeviceChunking`); NCCL's tuner counts neither.
pub(super) fn time_of(c: &Costed, op: Op, p: Protocol, s: f64) -> (f64, f64) {
    let plan = &c.plan;
    let channels = plan
        .channels
        .map_or(1.0, |ch| ch.share(plan.algorithm, p, plan.gpus, s));
    let (latency, bw) = time_with(c, c.seconds_per_byte, &c.intra_hops, op, p, s, channels);
    let rounding = match (plan.device_chunking, plan.channels) {
        (Some(cut), Some(ch)) if op == Op::AllReduce => {
            let in_use = ch.in_use(plan.algorithm, p, plan.gpus, s);
            cut.rounding(p, in_use, plan.gpus, s)
        }
        _ => 1.0,
    };
    (latency + tree_fill_us(c, p, s), bw * rounding)
}

/// µs a tree all-reduce under Simple spends filling its pipeline (`TreePipeline::fill_us`);
/// zero otherwise.
pub(super) fn tree_fill_us(c: &Costed, p: Protocol, s: f64) -> f64 {
    match (&c.plan.tree_pipeline, p) {
        (Some(tree), Protocol::Simple) => tree.fill_us(s),
        _ => 0.0,
    }
}

/// The time NCCL's tuner ranks a plan by, with the given hop latencies (the design's, or
/// none for NCCL's own constants), on all its channels, on the fabric as it sees it (links
/// between switches never queue).
pub(super) fn tuner_time(c: &Costed, hops: &IntraHops, op: Op, p: Protocol, s: f64) -> f64 {
    let (latency, bw) = time_with(c, c.tuner_seconds_per_byte, hops, op, p, s, 1.0);
    latency + bw
}

/// (latency µs, bandwidth µs) with the given hops and seconds per byte, the links' data
/// moving at `channel_share` of the rate all channels reach.
fn time_with(
    c: &Costed,
    seconds_per_byte: f64,
    hops: &IntraHops,
    op: Op,
    p: Protocol,
    s: f64,
    channel_share: f64,
) -> (f64, f64) {
    let plan = &c.plan;
    let share = match (p, hops.ll128_share) {
        (Protocol::Ll128, Some(share)) => share,
        _ => payload(p),
    };
    let mut bw = s * seconds_per_byte / share / channel_share;
    if plan.algorithm == Algorithm::Tree && op == Op::AllReduce {
        bw /= lat::tree_correction(p, s);
    }
    if p == Protocol::Ll {
        let cap = lat::ll_max_busbw_gbyte_s(c.arch, plan.domains) * 1e9;
        bw = bw.max(s * op.busbw_factor(plan.gpus) / cap);
    }
    bw += s * plan.staging_s_per_byte;
    (latency_us(plan, hops, op, p, s), bw * 1e6)
}

#[cfg(test)]
mod tests;
