//! Concurrent groups running one collective (a training step's TP or DP groups), timed on a
//! fabric already built, with the plans kept for the next sizes.

use super::bottleneck::bottleneck;
use super::schedule::make_plans;
use super::{Costed, Keep, protocols_for, time_of, tuner_time, used_at};
use crate::analysis::collective::fabric::Fabric;
use crate::analysis::collective::workspace::Workspace;
use crate::analysis::collective::{AlgoChoice, Algorithm, CollectiveError, LinkLoad, Op, Routing};
use crate::model::Design;
use std::collections::HashMap;
use std::sync::Arc;

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
    workspace: &Workspace,
) -> Result<Vec<GroupTime>, CollectiveError> {
    evaluate_groups_with(fab, design, specs, routing, report, None, workspace)
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
    workspace: &Workspace,
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
                workspace,
            )
            .map(|(plans, _, _)| plans)
        };
        let plans = match cache {
            Some(cache) => cache.get_or_make((spec.op, routing, spec.groups.to_vec()), make)?,
            None => Arc::new(make()?),
        };
        // (tuner's time, time, latency, plan index)
        let mut best = (f64::INFINITY, f64::INFINITY, 0.0, usize::MAX);
        for (i, c) in plans.iter().enumerate() {
            for p in protocols_for(&c.plan) {
                if !used_at(&c.plan, spec.op, spec.bytes) {
                    continue;
                }
                // Picked as NCCL's tuner picks (all channels), timed as it runs.
                let rank = tuner_time(c, &c.intra_hops, spec.op, p, spec.bytes);
                if rank < best.0 {
                    let (l, b) = time_of(c, spec.op, p, spec.bytes);
                    best = (rank, l + b, l, i);
                }
            }
        }
        let (_, time_us, latency_us, chosen) = best;
        let bottleneck = match plans.get(chosen) {
            Some(c) if report => {
                bottleneck(
                    fab,
                    design,
                    c,
                    (time_us - latency_us, time_us),
                    &workspace.strategy,
                )
                .0
            }
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
