//! The fastest training layout of a model on a design: tensor, pipeline, data and expert
//! parallel sizes, micro-batch, recomputation and ZeRO stage, each candidate refused when it
//! does not divide or fit and otherwise timed by the step model.
//!
//! Candidates: tensor sizes that are powers of two dividing the heads and the key-value heads
//! (Megatron splits both); pipeline sizes that divide the layers or are powers of two; the
//! data-parallel size that fills the GPUs; expert sizes dividing both it and the experts;
//! micro-batches 1, 2, 4 and 8 that split the global batch; no, selective or full
//! recomputation; ZeRO 1 or 2 (whose traffic is the all-reduce's). ZeRO-3, which gathers
//! every layer's weights twice per micro-batch, is the user's to ask for (`--zero 3`).
//!
//! Fitting means room for PyTorch's caching allocator beyond the tensors (the reserve of
//! `advice::short_of_reserve`): a layout that fits only without it ranks after every layout
//! with it, and its line says it may run out of memory.

use super::JobError;
use super::model::Recompute;
use super::training::{
    TrainingJob, TrainingStep, job_efficiency, step_lower_bound_ms, training_step_on,
    training_step_with,
};
use crate::analysis::collective::{CommFabrics, Routing, Workspace};
use crate::model::{Catalog, Design};
use serde::Serialize;

/// Tensor, pipeline, data, expert parallel sizes and micro-batch.
type Shape = (u32, u32, u32, Option<u32>, u32);

#[derive(Debug, Clone, Copy, PartialEq)]
pub struct SearchOptions {
    /// How many of the fastest layouts to keep.
    pub keep: usize,
    pub routing: Routing,
    /// Recomputation and ZeRO stage held as the job has them (the sidebar's job, whose
    /// settings a pinned layout keeps); false searches none/selective/full and ZeRO 1 or 2.
    pub hold_memory_settings: bool,
}

#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct SearchResult {
    /// Fastest first.
    pub best: Vec<TrainingStep>,
    /// Why each kept layout is where it is, against the first (the fastest with room for
    /// the allocator, or the fastest where none has room).
    pub why: Vec<String>,
    pub tried: usize,
    /// Layouts refused (did not divide, did not fit), with one example reason.
    pub refused: usize,
    pub example_refusal: Option<String>,
}

/// Searches layouts of `job.model` (its batch, precision and efficiency kept) on the design;
/// `progress` hears the fraction done.
pub fn search_layouts(
    design: &Design,
    catalog: &Catalog,
    job: &TrainingJob,
    options: SearchOptions,
    progress: &mut dyn FnMut(f64),
) -> Result<SearchResult, JobError> {
    let gpus = u32::try_from(design.gpu_count()).unwrap_or(u32::MAX);
    if gpus == 0 {
        return Err(JobError::Collective(
            crate::analysis::collective::CollectiveError::NoGpus,
        ));
    }
    let (gpu_id, gpu) = super::design_gpu(design, catalog)?;
    super::peak_or_refusal(&gpu_id, gpu, job.precision)?;
    if job.efficiency.is_none() && super::compute::gpu_efficiency(gpu, job.precision).is_none() {
        return Err(JobError::UnknownEfficiency {
            gpu: gpu_id,
            precision: job.precision.label(),
        });
    }
    let m = &job.model;
    let tps: Vec<u32> = (0..8)
        .map(|k| 1u32 << k)
        .filter(|t| *t <= gpus && m.heads.is_multiple_of(*t) && m.kv_heads().is_multiple_of(*t))
        .collect();
    // Stage counts that split the layers evenly, and powers of two (whose uneven last stage
    // the step model charges for).
    let pps: Vec<u32> = (1..=m.layers)
        .filter(|p| m.layers.is_multiple_of(*p) || p.is_power_of_two())
        .collect();
    let mut shapes = Vec::new();
    for &tp in &tps {
        for &pp in &pps {
            if u64::from(tp) * u64::from(pp) > u64::from(gpus) {
                continue;
            }
            let dp = gpus / (tp * pp);
            let eps: Vec<Option<u32>> = match m.experts {
                Some(e) if e > 1 => (1..=dp.min(e))
                    .filter(|x| dp.is_multiple_of(*x) && e.is_multiple_of(*x))
                    .map(Some)
                    .collect(),
                _ => vec![None],
            };
            for ep in eps {
                for mb in [1u32, 2, 4, 8] {
                    let per = u64::from(dp) * u64::from(mb);
                    if u64::from(job.global_batch).is_multiple_of(per) {
                        shapes.push((tp, pp, dp, ep, mb));
                    }
                }
            }
        }
    }
    // Fastest bound first: once a layout's compute and bubble alone are slower than the
    // slowest step kept, no later layout can enter the list.
    let efficiency = job_efficiency(job, gpu);
    let mut ordered: Vec<(f64, Shape)> = shapes
        .into_iter()
        .map(|shape| {
            let (tp, pp, dp, _, mb) = shape;
            // The least compute of the settings: no recomputation moves the most bytes,
            // selective recomputation adds FLOPs; full adds both.
            let recomputes: &[Recompute] = if options.hold_memory_settings {
                &[job.recompute]
            } else {
                &[Recompute::None, Recompute::Selective]
            };
            let bound = recomputes
                .iter()
                .copied()
                .filter_map(|recompute| {
                    let probe = TrainingJob {
                        micro_batch: mb,
                        recompute,
                        ..job.clone()
                    };
                    step_lower_bound_ms(&probe, gpu, efficiency.as_ref(), (tp, pp, dp))
                })
                .fold(f64::INFINITY, f64::min);
            (bound, shape)
        })
        .collect();
    ordered.sort_by(|a, b| a.0.total_cmp(&b.0));
    // One workspace for the whole search: hundreds of layouts timed on the same fabric
    // reuse its load buffers.
    let workspace = Workspace::default();
    let fabrics = CommFabrics::build(design, catalog, &workspace)?;
    let keep = options.keep.max(1);
    let total = ordered.len().max(1);
    let mut state = Shared::default();
    for (i, &(bound, shape)) in ordered.iter().enumerate() {
        progress(i as f64 / total as f64);
        if state.kept.len() >= keep && bound > state.slowest_kept() {
            break;
        }
        let visit = visit_shape(&fabrics, design, catalog, job, shape, options);
        state.add(visit, keep);
    }
    let Shared {
        kept,
        tried,
        refused,
        example_refusal,
        leanest,
    } = state;
    // The layouts kept, timed again with the ideal network for their network share.
    let kept = kept
        .into_iter()
        .map(|(_, job, _)| training_step_on(&fabrics, design, catalog, &job, options.routing))
        .collect::<Result<Vec<_>, _>>()?;
    progress(1.0);
    if kept.is_empty() {
        return Err(JobError::NoLayout(leanest.map(|(_, text)| text)));
    }
    let why = kept.iter().map(|s| explain(s, &kept[0], design)).collect();
    Ok(SearchResult {
        best: kept,
        why,
        tried,
        refused,
        example_refusal,
    })
}

/// Where a layout's step goes, and how it differs from the fastest.
fn explain(step: &TrainingStep, best: &TrainingStep, design: &Design) -> String {
    let (Some(total), Some(compute)) = (step.step_ms, step.compute_ms) else {
        return "compute time unknown".into();
    };
    let pct = |ms: Option<f64>| ms.unwrap_or(0.0) / total * 100.0;
    let mut text = format!(
        "compute {:.0} %, bubble {:.0} %, exposed communication {:.0} %; {:.0} of {:.0} GiB \
         ({:.1} free)",
        compute / total * 100.0,
        pct(step.bubble_ms),
        pct(step.exposed_comm_ms),
        step.memory_gib_per_gpu,
        step.gpu_memory_gib,
        step.gpu_memory_gib - step.memory_gib_per_gpu
    );
    // A layout with less free than the allocator's reserve (listed after those with room)
    // says so, as the advice does for the layout run.
    if let Some(reserve) =
        super::advice::short_of_reserve(design, step.memory_gib_per_gpu, step.gpu_memory_gib)
    {
        text.push_str(&format!(
            ", under the allocator's {reserve:.1} GiB: may run out of memory"
        ));
    }
    if let Some(best_ms) = best.step_ms
        && !std::ptr::eq(step, best)
        && best_ms > 0.0
    {
        text.push_str(&format!(
            ", {:+.1} % against the first",
            (total / best_ms - 1.0) * 100.0
        ));
    }
    text
}

/// The search so far: the fastest layouts and the counts.
#[derive(Default)]
struct Shared {
    /// The fastest layouts, each with whether it leaves less than the allocator's reserve.
    kept: Vec<(TrainingStep, TrainingJob, bool)>,
    tried: usize,
    refused: usize,
    example_refusal: Option<String>,
    /// The layout memory refused by the least (GiB needed), described, for a search where
    /// none fits.
    leanest: Option<(f64, String)>,
}

impl Shared {
    /// The slowest step kept, which a shape's bound must beat to enter; none while a layout
    /// short of the allocator's reserve is kept, since any slower one with room ranks above it.
    fn slowest_kept(&self) -> f64 {
        if self.kept.iter().any(|(_, _, tight)| *tight) {
            return f64::INFINITY;
        }
        self.kept
            .iter()
            .filter_map(|(s, _, _)| s.step_ms)
            .fold(f64::NEG_INFINITY, f64::max)
    }

    fn add(&mut self, visit: Visit, keep: usize) {
        self.tried += visit.tried;
        self.refused += visit.refused.len();
        if self.example_refusal.is_none() {
            self.example_refusal = visit.refused.into_iter().next();
        }
        if let Some((need, text)) = visit.leanest
            && self.leanest.as_ref().is_none_or(|(least, _)| need < *least)
        {
            self.leanest = Some((need, text));
        }
        self.kept.extend(visit.steps);
        // Layouts with room for the allocator first, each group fastest first.
        let key = |s: &TrainingStep| s.step_ms.unwrap_or(f64::INFINITY);
        self.kept
            .sort_by(|a, b| a.2.cmp(&b.2).then(key(&a.0).total_cmp(&key(&b.0))));
        self.kept.truncate(keep);
    }
}

/// One shape's settings: those that fit, timed; the others with why.
struct Visit {
    steps: Vec<(TrainingStep, TrainingJob, bool)>,
    tried: usize,
    refused: Vec<String>,
    /// The setting memory refused by the least: GiB needed, and the layout with its need.
    leanest: Option<(f64, String)>,
}

fn visit_shape(
    fabrics: &CommFabrics,
    design: &Design,
    catalog: &Catalog,
    job: &TrainingJob,
    (tp, pp, dp, ep, mb): Shape,
    options: SearchOptions,
) -> Visit {
    let mut visit = Visit {
        steps: Vec::new(),
        tried: 0,
        refused: Vec::new(),
        leanest: None,
    };
    // Each recomputation setting with the least ZeRO sharding that fits with room for
    // PyTorch's allocator (ZeRO 1 and 2 cost the same traffic, so sharding more than needed
    // gains nothing); failing all, the first setting that fits at all, which the ranking puts
    // after every layout with room (`Shared::add`) and the list marks.
    let mut fitted = Vec::new();
    let mut tight = None;
    let (recomputes, zeros): (&[Recompute], &[u8]) = if options.hold_memory_settings {
        (&[job.recompute], &[job.zero])
    } else {
        (
            &[Recompute::None, Recompute::Selective, Recompute::Full],
            &[1, 2],
        )
    };
    for &recompute in recomputes {
        for &zero in zeros {
            visit.tried += 1;
            let candidate = TrainingJob {
                tp,
                pp,
                dp: Some(dp),
                ep,
                micro_batch: mb,
                recompute,
                zero,
                ..job.clone()
            };
            match super::memory_check(&candidate, design, catalog, dp) {
                Ok((need_gib, have_gib)) => {
                    if super::advice::short_of_reserve(design, need_gib, have_gib).is_none() {
                        fitted.push(candidate);
                        break;
                    }
                    tight.get_or_insert(candidate);
                }
                Err(e) => {
                    if let JobError::DoesNotFit {
                        need_gib,
                        have_gib,
                        gpu,
                    } = &e
                        && visit
                            .leanest
                            .as_ref()
                            .is_none_or(|(least, _)| need_gib < least)
                    {
                        visit.leanest = Some((
                            *need_gib,
                            format!(
                                "the leanest, TP {tp} × PP {pp} × DP {dp} with {} recomputation \
                                 and ZeRO {zero}, needs {need_gib:.1} GiB per GPU, and each {gpu} \
                                 has {have_gib:.0} GiB (more GPUs, or GPUs with more memory)",
                                recompute.label()
                            ),
                        ));
                    }
                    visit.refused.push(e.to_string());
                }
            }
        }
    }
    let only_tight = fitted.is_empty();
    fitted.extend(tight.filter(|_| only_tight));
    let Some(first) = fitted.first() else {
        return visit;
    };
    // One communication timing serves every setting of the shape; the ideal network is left
    // for the layouts kept.
    let comm = match fabrics.step_comm_real_only(design, &first.comm_workload(), options.routing) {
        Ok(comm) => comm,
        Err(e) => {
            visit.refused.push(e.to_string());
            return visit;
        }
    };
    for candidate in fitted {
        match training_step_with(comm.clone(), design, catalog, &candidate) {
            Ok(step) => visit.steps.push((step, candidate, only_tight)),
            Err(e) => visit.refused.push(e.to_string()),
        }
    }
    visit
}
