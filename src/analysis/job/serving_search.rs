//! The serving layouts worth deploying: with a given number of sequences decoded at once over
//! the whole design (the users being served), which tensor × pipeline split serves each of
//! them fastest. At a fixed number of sequences in flight the design's throughput is that
//! number times each sequence's rate, so one ranking answers both questions; more replicas
//! only help by splitting the sequences between them, never by serving more of them.

use super::serving::{ServingJob, ServingResult, serving};
use super::{JobError, design_gpu};
use crate::analysis::collective::{CollectiveError, Routing};
use crate::model::{Catalog, Design};
use serde::Serialize;

/// One layout the search timed: its sizes, how the sequences split over its replicas, and
/// the result of serving them.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct ServingLayout {
    pub tp: u32,
    pub pp: u32,
    /// Sequences each replica decodes at once: the design's sequences shared out, rounded up.
    pub batch: u32,
    pub result: ServingResult,
}

/// How many layouts a search returns at most.
pub const SERVING_LAYOUTS_SHOWN: usize = 5;

/// Every tensor × pipeline split of the design's GPUs that divides the model and fits, each
/// replica decoding its share of `sequences`, fastest per sequence first (then by memory
/// left); `job` gives the model, prompt, precision, weights and expert split. Refuses with
/// `NoLayout` when none fits.
pub fn search_serving(
    design: &Design,
    catalog: &Catalog,
    job: &ServingJob,
    sequences: u32,
    routing: Routing,
) -> Result<Vec<ServingLayout>, JobError> {
    design_gpu(design, catalog)?;
    let gpus = u32::try_from(design.gpu_count()).unwrap_or(u32::MAX);
    let m = &job.model;
    let ep = job.ep.max(1);
    let sequences = sequences.max(1);
    let mut found = Vec::new();
    for tp in divisors(gpus).filter(|tp| m.heads.is_multiple_of(*tp)) {
        for pp in divisors(gpus / tp).filter(|pp| *pp <= m.layers) {
            let replicas = gpus / (tp * pp);
            if !replicas.is_multiple_of(ep) {
                continue;
            }
            let batch = sequences.div_ceil(replicas / ep);
            let candidate = ServingJob {
                tp,
                pp,
                batch,
                ..job.clone()
            };
            match serving(design, catalog, &candidate, routing) {
                Ok(result) => found.push(ServingLayout {
                    tp,
                    pp,
                    batch,
                    result,
                }),
                // What does not fit or divide is simply not a candidate.
                Err(
                    JobError::DoesNotFit { .. }
                    | JobError::NotDivisible(_)
                    | JobError::Collective(
                        CollectiveError::NotEnoughGpus { .. }
                        | CollectiveError::ExpertParallelism { .. },
                    ),
                ) => {}
                Err(e) => return Err(e),
            }
        }
    }
    if found.is_empty() {
        return Err(JobError::NoLayout(None));
    }
    let rate = |l: &ServingLayout| l.result.decode_tokens_per_s_per_sequence.unwrap_or(0.0);
    found.sort_by(|a, b| {
        rate(b).total_cmp(&rate(a)).then(
            a.result
                .memory_gib_per_gpu
                .total_cmp(&b.result.memory_gib_per_gpu),
        )
    });
    Ok(found)
}

/// The divisors of `n`, smallest first.
fn divisors(n: u32) -> impl Iterator<Item = u32> {
    (1..=n).filter(move |d| n.is_multiple_of(*d))
}
