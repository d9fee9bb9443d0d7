//! Which algorithms to plan, in what order, on how many threads, and which plans keep their loads.

use super::step_latency::latency_floor_us;
use super::{Choice, Costed, Keep, cost, payload, protocols_for, weigh};
use crate::analysis::collective::fabric::Fabric;
use crate::analysis::collective::helpers;
use crate::analysis::collective::latency::{self as lat, ArchRow, Protocol};
use crate::analysis::collective::plan::{self, Groups, Plan};
use crate::analysis::collective::release::forced_falls_back_to_ring;
use crate::analysis::collective::routing::{Prune, Router};
use crate::analysis::collective::workspace::{Strategy, Workspace};
use crate::analysis::collective::{AlgoChoice, Algorithm, CollectiveError, Library, Op, Routing};
use crate::model::Design;

/// Algorithms worth trying for an operation. MLX's backends have rings (one way, and both
/// ways for large arrays) for all-reduce and all-gather, and point-to-point sends; no trees,
/// no in-switch reduction, no reduce-scatter, broadcast or reduce. Gloo (as PyTorch calls
/// it) has one-way rings for all-reduce, all-gather, reduce-scatter and reduce (a ring
/// reduce-scatter, then a gather to the root), a binomial tree for broadcast and direct
/// exchanges.
fn algorithms_for(
    op: Op,
    choice: AlgoChoice,
    domains: u32,
    library: Library,
    jaccl_mesh: bool,
) -> Vec<Algorithm> {
    if library == Library::Gloo {
        return match (op, choice) {
            (
                Op::AllReduce | Op::AllGather | Op::ReduceScatter,
                AlgoChoice::Auto | AlgoChoice::Ring,
            ) => {
                vec![Algorithm::Ring]
            }
            (Op::Reduce, AlgoChoice::Auto | AlgoChoice::Ring) => vec![Algorithm::Ring],
            (Op::Broadcast, AlgoChoice::Auto | AlgoChoice::Tree) => vec![Algorithm::Tree],
            (Op::AllToAll | Op::SendRecv, AlgoChoice::Auto | AlgoChoice::Direct) => {
                vec![Algorithm::Direct]
            }
            _ => Vec::new(),
        };
    }
    // JACCL runs its mesh group wherever every pair of ranks is cabled (jaccl.cpp: a valid
    // mesh unless JACCL_RING asks for the ring, which a forced ring stands for).
    if jaccl_mesh && library == Library::MlxJaccl {
        return match (op, choice) {
            (Op::AllReduce, AlgoChoice::Auto | AlgoChoice::Direct) => {
                vec![Algorithm::Direct, Algorithm::Mesh]
            }
            (Op::AllGather, AlgoChoice::Auto | AlgoChoice::Direct) => vec![Algorithm::Direct],
            (Op::AllReduce | Op::AllGather, AlgoChoice::Ring) => vec![Algorithm::Ring],
            (Op::AllToAll | Op::SendRecv, AlgoChoice::Auto | AlgoChoice::Direct) => {
                vec![Algorithm::Direct]
            }
            _ => Vec::new(),
        };
    }
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
    // What NCCL's tuner chooses among. The hierarchical scheme (reduce-scatter in the node,
    // a ring per rail, all-gather) is not an NCCL algorithm: it runs only when forced.
    let auto: &[Algorithm] = match op {
        Op::AllReduce => &[
            Algorithm::Ring,
            Algorithm::Tree,
            Algorithm::Nvls,
            Algorithm::NvlsTree,
            Algorithm::Sharp,
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

/// Plans and costs every applicable algorithm; errors only when none works. Where NCCL_ALGO
/// forces an algorithm the release cannot run and the release backs it up with its ring
/// (`release::forced_falls_back_to_ring`), the ring's plans, each saying why.
///
/// On large fabrics the algorithms are planned on several threads (each plan is independent of
/// the others); the outcome is the same as planning them one after another in order.
#[allow(clippy::too_many_arguments)]
pub(super) fn make_plans(
    fab: &Fabric,
    design: &Design,
    groups: &[Vec<u32>],
    op: Op,
    choice: AlgoChoice,
    routing: Routing,
    protocol: Option<Protocol>,
    keep: Keep,
    side: Option<&SideJob>,
    workspace: &Workspace,
) -> Result<(Vec<Costed>, u32, Vec<Algorithm>), CollectiveError> {
    // NCCL 2.19 to 2.23 run their ring where the forced algorithm cannot run.
    let ring_in_place = |e: CollectiveError| match e {
        CollectiveError::AlgorithmUnavailable {
            algorithm, reason, ..
        } if !matches!(choice, AlgoChoice::Auto | AlgoChoice::Ring)
            && fab.library == Library::Nccl
            && forced_falls_back_to_ring(fab.nccl) =>
        {
            let why = format!(
                "the forced {algorithm} cannot run ({reason}), so NCCL {} runs its ring in its \
                 place (enqueue.cc, the backup ring)",
                fab.nccl
            );
            let (mut plans, domains, slower) = make_plans(
                fab,
                design,
                groups,
                op,
                AlgoChoice::Ring,
                routing,
                protocol,
                keep,
                side,
                workspace,
            )?;
            for c in &mut plans {
                c.plan.fallback = Some(why.clone());
            }
            Ok((plans, domains, slower))
        }
        e => Err(e),
    };
    let gs = Groups::new(fab, groups);
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
        return ring_in_place(CollectiveError::AlgorithmUnavailable {
            algorithm: Algorithm::Sharp,
            op,
            reason: "in-network reduction is not set up in this design: NCCL leaves CollNet \
                     (SHARP) off unless NCCL_COLLNET_ENABLE=1 and the plugin are installed; turn \
                     it on in the design's inspector (or `sharp_enabled: true` in the file)"
                .into(),
        });
    }
    let jaccl_mesh = fab.library == Library::MlxJaccl && fully_cabled(fab, design, &groups[0]);
    let algorithms: Vec<Algorithm> = algorithms_for(op, choice, domains, fab.library, jaccl_mesh)
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
        routing,
        protocol,
        keep,
        arch,
        side,
        workspace,
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
    // Algorithms left uncosted because they cannot win at this size: their latency alone is
    // over the best time, or their routing stopped early (`Router::pruned`).
    let mut slower: Vec<Algorithm> = Vec::new();
    let mut outcomes = match keep {
        Keep::BestAt(s) if domains > 1 && !first.is_empty() && !last.is_empty() => {
            let mut outcomes = job.plan_all(&algorithms, &first);
            let mut best: Option<Choice> = None;
            for (i, outcome) in &outcomes {
                if let Ok(c) = outcome {
                    weigh(&mut best, *i, c, op, protocol, s, |_| {});
                }
            }
            let best_us = best.map_or(f64::INFINITY, |(_, _, _, _, rank)| rank);
            let n = groups[0].len() as u32;
            let (worth, over): (Vec<usize>, Vec<usize>) = last.into_iter().partition(|&i| {
                latency_floor_us(
                    algorithms[i],
                    op,
                    protocol,
                    &gs,
                    n,
                    fab.library,
                    fab.latency_table(),
                ) <= best_us
            });
            slower.extend(over.iter().map(|&i| algorithms[i]));
            outcomes.extend(job.plan_all(&algorithms, &worth));
            outcomes
        }
        _ => job.plan_all(&algorithms, &all),
    };
    outcomes.sort_by_key(|(i, _)| *i);

    let mut plans: Vec<Costed> = Vec::new();
    let mut first_error: Option<CollectiveError> = None;
    for (i, outcome) in outcomes {
        match outcome {
            Ok(c) => plans.push(c),
            Err(CollectiveError::StoppedEarly { .. }) => slower.push(algorithms[i]),
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
        return ring_in_place(
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
    slower.sort_by_key(|a| algorithms.iter().position(|b| b == a));
    Ok((plans, domains, slower))
}

/// Fabrics with at least this many arcs plan their algorithms on several threads; below it
/// a thread costs more than it saves.
const PARALLEL_ARCS: usize = 1 << 16;

/// How many threads plan a fabric's algorithms: as `strategy` says, else by the fabric's size.
pub(super) fn plan_threads(fab: &Fabric, strategy: &Strategy) -> usize {
    if let Some(n) = strategy.plan_threads {
        return n;
    }
    if fab.arc_count() >= PARALLEL_ARCS {
        std::thread::available_parallelism().map_or(1, |n| n.get())
    } else {
        1
    }
}

/// Every pair of the group's nodes joined by a working link of their own: the mesh JACCL
/// takes for its mesh group.
fn fully_cabled(fab: &Fabric, design: &Design, group: &[u32]) -> bool {
    let mut nodes: Vec<crate::model::DeviceId> =
        group.iter().map(|&g| fab.node_of_gpu(g).device).collect();
    nodes.sort_unstable();
    nodes.dedup();
    let mut pairs: std::collections::HashSet<(crate::model::DeviceId, crate::model::DeviceId)> =
        std::collections::HashSet::new();
    for l in &design.links {
        if l.state == crate::model::LinkState::Failed {
            continue;
        }
        let (a, b) = (l.a.device.min(l.b.device), l.a.device.max(l.b.device));
        if a != b && nodes.binary_search(&a).is_ok() && nodes.binary_search(&b).is_ok() {
            pairs.insert((a, b));
        }
    }
    nodes.len() > 1 && pairs.len() == nodes.len() * (nodes.len() - 1) / 2
}

/// The order in which to plan: the long plans first (several threads end together), and
/// in-network reduction first of all: where the switches offer it, it most often wins at
/// large sizes, and a fast time found early lets the other plans stop early (see `Prune`).
fn relative_plan_cost(a: Algorithm) -> u8 {
    match a {
        Algorithm::Sharp => 4,
        Algorithm::Tree => 3,
        Algorithm::NvlsTree | Algorithm::Ring | Algorithm::BidirectionalRing => 2,
        Algorithm::Hierarchical | Algorithm::Direct | Algorithm::Mesh => 1,
        Algorithm::Nvls => 0,
    }
}

/// Ring and hierarchical take a step per GPU or domain: their latency alone can rule them out.
pub(super) fn latency_grows_with_size(a: Algorithm) -> bool {
    matches!(
        a,
        Algorithm::Ring | Algorithm::BidirectionalRing | Algorithm::Hierarchical
    )
}

/// Work that does not wait for the plans, done by the first planning thread to run out of
/// plans (on several threads, one always waits for the others at the end).
pub(super) type SideJob<'a> = std::sync::Mutex<Option<Box<dyn FnOnce() + Send + 'a>>>;

/// What every plan of one `make_plans` call shares.
struct PlanJob<'a, 'f, 's> {
    fab: &'f Fabric,
    design: &'a Design,
    gs: &'a Groups<'a>,
    op: Op,
    routing: Routing,
    protocol: Option<Protocol>,
    keep: Keep,
    arch: ArchRow,
    side: Option<&'a SideJob<'s>>,
    /// Where the planning threads take load buffers from and give them back to.
    workspace: &'a Workspace,
    /// The fastest time costed so far at the wanted size (µs as `f64` bits), for `Prune`.
    best_us_bits: std::sync::Arc<std::sync::atomic::AtomicU64>,
}

impl PlanJob<'_, '_, '_> {
    /// How a plan of `algorithm` may stop early: only when one size's winner is wanted,
    /// across several domains, for the one-phase algorithms whose routing is the costly part.
    fn prune_for(&self, algorithm: Algorithm) -> Option<Prune> {
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
        Some(Prune {
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
        let threads = plan_threads(self.fab, &self.workspace.strategy).min(indices.len());
        // Each thread takes the next plan when it is free.
        let mut queue = indices.to_vec();
        queue.sort_by_key(|&i| std::cmp::Reverse(relative_plan_cost(algorithms[i])));
        let next = std::sync::atomic::AtomicUsize::new(0);
        let take = || {
            let k = next.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
            queue.get(k).map(|&i| (i, algorithms[i]))
        };
        let pool = match helpers::pool() {
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
        let mut router = Router::new(fab, self.workspace);
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
            let attempt = plan::plan(fab, &mut router, self.gs, self.op, algorithm, self.routing)
                .and_then(|p| cost(fab, self.design, p, self.arch));
            if router.pruned {
                // Slower than a plan already costed: no candidate, and no error to report,
                // but the answer says it was left uncosted.
                out.push((index, Err(CollectiveError::StoppedEarly { algorithm })));
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
                    let t = fastest.map_or(f64::INFINITY, |(_, _, _, _, rank)| rank);
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
