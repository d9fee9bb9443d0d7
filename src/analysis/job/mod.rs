//! From the network to the job: a model's compute, memory and communication on the drawn
//! design, as training step time, MFU, time and money per token, or serving throughput.

pub mod advice;
pub mod assessed;
pub mod compute;
pub mod economics;
pub mod finetune;
pub mod memory;
pub mod model;
pub mod published;
pub mod published_finetune;
pub mod search;
pub mod serving;
pub mod serving_search;
pub mod training;

pub use advice::add_job_advice;
pub use assessed::{
    JobOutcome, job_of_workload, training_job_of_workload, with_adapters, workload_of_job,
};
pub use compute::{Efficiency, default_efficiency, gpu_efficiency, peak_tflops};
pub use economics::{Economics, EconomicsInputs, Site, economics};
pub use memory::{MemoryUse, training_memory};
pub use model::{ModelSpec, Recompute, gpt, named_model};
pub use search::{SearchOptions, SearchResult, search_layouts};
pub use serving::{ServingJob, ServingResult, serving};
pub use serving_search::{SERVING_LAYOUTS_SHOWN, ServingLayout, search_serving};
pub use training::{TrainingJob, TrainingStep, training_step};

use crate::analysis::collective::CollectiveError;
use crate::model::catalog::GpuSpec;
use crate::model::{Catalog, Design};

#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub enum JobError {
    #[error(transparent)]
    Collective(#[from] CollectiveError),
    #[error("model: {0}")]
    Model(String),
    #[error("{0}")]
    NotDivisible(String),
    #[error(
        "does not fit: needs {need_gib:.1} GiB per GPU; each {gpu} has {} GiB ({:.1} GiB short)",
        crate::model::units::trim_number(*have_gib),
        need_gib - have_gib
    )]
    DoesNotFit {
        need_gib: f64,
        have_gib: f64,
        gpu: String,
    },
    #[error("{gpu} has no {precision} tensor throughput")]
    NoPeak {
        gpu: String,
        precision: &'static str,
    },
    /// The GPU has the units, but no published figure for their peak (GB10): the step
    /// cannot be timed, which is not the same as the hardware lacking them.
    #[error(
        "no published {precision} peak for the {gpu} (the catalog leaves it unknown): its compute cannot be timed; give it as bf16_tflops in your own catalog (--catalog FILE)"
    )]
    UnknownPeak {
        gpu: String,
        precision: &'static str,
    },
    #[error("the design's GPUs ({0}) are not in the catalog")]
    UnknownGpu(String),
    /// With the leanest layout tried and what it needs, where memory refused them all.
    #[error("no layout of the model fits and divides on this design{}", .0.as_deref().map(|l| format!(": {l}")).unwrap_or_default())]
    NoLayout(Option<String>),
    #[error(
        "no published kernel efficiency for the {gpu} at {precision}: step times are unknown, so layouts cannot be ranked ({})",
        compute::how_to_set_efficiency()
    )]
    UnknownEfficiency {
        gpu: String,
        precision: &'static str,
    },
}

/// The GPU that sets the pace: of the design's GPU parts, the one with the lowest dense
/// throughput (the slowest rank rules a synchronous step), with the smallest memory among
/// the GPUs taken as its memory.
/// The GPUs' dense peak at `precision`, TFLOP/s, or why there is none: the hardware lacks
/// the units (FP8 on Ampere), or no figure is published (GB10).
pub(crate) fn peak_or_refusal(
    gpu_id: &str,
    gpu: &GpuSpec,
    precision: crate::analysis::collective::Precision,
) -> Result<f64, JobError> {
    peak_tflops(gpu, precision).ok_or_else(|| {
        let (gpu_id, precision) = (gpu_id.to_string(), precision.label());
        if gpu.bf16_tflops <= 0.0 {
            JobError::UnknownPeak {
                gpu: gpu_id,
                precision,
            }
        } else {
            JobError::NoPeak {
                gpu: gpu_id,
                precision,
            }
        }
    })
}

pub fn design_gpu<'c>(
    design: &Design,
    catalog: &'c Catalog,
) -> Result<(String, &'c GpuSpec), JobError> {
    let mut slowest: Option<(String, &GpuSpec)> = None;
    for node in design.devices.iter().filter_map(|d| d.kind.as_node()) {
        if node.gpu_count == 0 {
            continue;
        }
        let spec = catalog
            .gpu(&node.gpu)
            .ok_or_else(|| JobError::UnknownGpu(node.gpu.0.clone()))?;
        let slower = slowest
            .as_ref()
            .is_none_or(|(_, s)| spec.bf16_tflops < s.bf16_tflops);
        if slower {
            slowest = Some((node.gpu.0.clone(), spec));
        }
    }
    slowest.ok_or(JobError::Collective(CollectiveError::NoGpus))
}

/// Refuses a layout whose memory does not fit the design's GPU, before any communication is
/// timed (the layout search's first filter); the GiB it needs and the GPU holds otherwise.
fn memory_check(
    job: &TrainingJob,
    design: &Design,
    catalog: &Catalog,
    dp: u32,
) -> Result<(f64, f64), JobError> {
    let (gpu_id, gpu) = design_gpu(design, catalog)?;
    let per_step = dp.max(1) * job.micro_batch.max(1);
    let use_ = training_memory(
        &job.model,
        &memory::MemoryLayout {
            tp: job.tp,
            pp: job.pp,
            dp,
            ep: job.ep.unwrap_or(1),
            micro_batch: job.micro_batch,
            micro_batches: job.global_batch / per_step,
            zero: job.zero,
            recompute: job.recompute,
            finetune: job.finetune,
        },
    );
    let need_gib = use_.total() / (1024.0 * 1024.0 * 1024.0);
    if need_gib > gpu.memory_gib() {
        return Err(JobError::DoesNotFit {
            need_gib,
            have_gib: gpu.memory_gib(),
            gpu: gpu_id,
        });
    }
    Ok((need_gib, gpu.memory_gib()))
}
