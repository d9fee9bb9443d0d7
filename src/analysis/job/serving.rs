//! Serving a model: decode tokens per second per replica and in all, and time to first token,
//! on the drawn design.
//!
//! Decode is bound by memory: every step reads each GPU's share of the weights (of a
//! mixture of experts, the experts the batch's tokens reach) and the batch's key/value
//! cache, at the GPU's peak memory bandwidth (a datasheet figure, so decode rates are upper
//! bounds), stage after stage of the pipeline, plus the step's tensor-parallel all-reduces
//! and stage hand-offs timed on the links. A large batch is bound by compute instead: its
//! tokens' FLOPs at the GPU's peak (still an upper bound) take longer than the reads.
//! Prefill (time to first token) is bound by compute at the kernels' achieved rate, plus the
//! prompt's all-reduces.

use super::compute::{Efficiency, gpu_efficiency, peak_tflops};
use super::economics::Economics;
use super::model::ModelSpec;
use super::{JobError, design_gpu};
use crate::analysis::collective::{
    CommFabrics, Moe, Precision, QuantizedWeights, Routing, Workload, Workspace,
};
use crate::model::{Catalog, Design};
use serde::Serialize;

const GIB: f64 = 1024.0 * 1024.0 * 1024.0;

/// The share of a GPU's memory a serving engine takes for weights, cache and activations:
/// vLLM's default `gpu_memory_utilization` (0.9); the rest is left to the CUDA context and
/// allocations outside the engine. A replica that needs more does not start.
pub const SERVING_MEMORY_SHARE: f64 = 0.9;

/// MLX's ceiling on Apple silicon: its Metal allocator's limit is min(1.5 × Metal's
/// recommended working set, 0.95 × the unified memory) (`mlx/backend/metal/allocator.cpp`,
/// `block_limit_`), so at most 95 %; macOS's recommended working set itself is not published
/// (`iogpu.wired_limit_mb` raises it), and past it the system may page.
pub const MLX_MEMORY_SHARE: f64 = 0.95;

/// What a serving engine may take of one GPU's memory, and whose rule that is.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct ServingBudget {
    pub share: f64,
    /// Whose figure: "vLLM's default" or "MLX's allocator limit".
    pub source: &'static str,
    /// The same, at length, for assumption lines and hover text.
    pub explained: &'static str,
}

impl ServingBudget {
    /// Apple silicon serves with MLX under its allocator's limit; other GPUs with vLLM's
    /// default.
    pub fn of(gpu: &crate::model::catalog::GpuSpec) -> ServingBudget {
        if gpu.arch.is_apple() {
            ServingBudget {
                share: MLX_MEMORY_SHARE,
                source: "MLX's allocator limit",
                explained: "MLX's Metal allocator takes at most 95 % of unified memory; past \
                            macOS's recommended working set (not published; \
                            iogpu.wired_limit_mb raises it) the system may page",
            }
        } else {
            ServingBudget {
                share: SERVING_MEMORY_SHARE,
                source: "vLLM's default",
                explained: "vLLM's default gpu_memory_utilization; the rest is the CUDA \
                            context's",
            }
        }
    }
}

#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct ServingJob {
    pub model: ModelSpec,
    pub tp: u32,
    pub pp: u32,
    /// Expert-parallel size inside a replica (mixtures of experts).
    pub ep: u32,
    /// Sequences decoded at once by each replica.
    pub batch: u32,
    /// Prompt tokens of each sequence (the key/value cache decode reads).
    pub prompt: u32,
    /// The activations' precision: the key/value cache, the all-reduces and the prefill's
    /// arithmetic, and the weights unless `weights` quantizes them.
    pub precision: Precision,
    /// Fraction of peak the prefill kernels achieve; None = the published default.
    pub efficiency: Option<f64>,
    /// Weights stored in fewer bits than `precision`; None = weights in `precision`.
    pub weights: Option<QuantizedWeights>,
    /// The share of the GPU's peak memory bandwidth decode reaches, as the user measured or
    /// assumes it; None = the peak, which makes the decode rate an upper bound.
    pub memory_share: Option<f64>,
}

#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct ServingResult {
    pub layout: String,
    pub replicas: u32,
    pub gpus_per_replica: u32,
    pub gpu: String,
    /// Bytes one GPU reads per decode step: weights, then key/value cache.
    pub weight_bytes_per_gpu: f64,
    pub kv_bytes_per_gpu: f64,
    pub memory_gib_per_gpu: f64,
    pub gpu_memory_gib: f64,
    /// What the serving engine may take of it (`ServingBudget`).
    pub usable_memory_gib: f64,
    /// Whose rule sets that share ("vLLM's default", "MLX's allocator limit").
    pub memory_budget_source: String,
    /// The same, at length.
    pub memory_budget_explained: String,
    /// None when the GPU's memory bandwidth is unknown.
    pub decode_step_ms: Option<f64>,
    /// The share of peak memory bandwidth decode is timed at: None = the peak, so the rates
    /// are upper bounds (and the cost per token a lower one).
    pub memory_share: Option<f64>,
    pub decode_comm_ms: f64,
    /// A decode step's FLOPs at the GPU's peak, stage after stage, ms; None where the peak
    /// is unknown (then compute bounds nothing).
    pub decode_compute_ms: Option<f64>,
    /// The step's reads at the memory bandwidth it is timed at, ms; None where it is unknown.
    pub decode_memory_ms: Option<f64>,
    pub decode_tokens_per_s_per_replica: Option<f64>,
    /// What one sequence (one user's stream) sees: a token each decode step.
    pub decode_tokens_per_s_per_sequence: Option<f64>,
    pub decode_tokens_per_s: Option<f64>,
    /// None when the kernels' efficiency is unknown.
    pub ttft_ms: Option<f64>,
    pub efficiency: Option<Efficiency>,
    /// What a million output tokens cost at the decode rate, which is an upper bound, so a
    /// lower bound; set by the caller, who knows the capital, power and prices (None: not
    /// asked, or the rate is unknown).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub economics: Option<Economics>,
    pub assumes: Vec<String>,
}

/// "40 % of peak memory bandwidth": the user's share, as every output names it.
pub fn share_of_peak_text(share: f64) -> String {
    format!("{:.0} % of peak memory bandwidth", share * 100.0)
}

impl ServingResult {
    /// What the decode rate (and so the cost per token) stands on: the bound, or the user's
    /// share of peak memory bandwidth.
    pub fn decode_basis(&self) -> String {
        match self.memory_share {
            None => "at the decode bound".into(),
            Some(f) => format!("decode at {}", share_of_peak_text(f)),
        }
    }
}

/// Decode and prefill of `job` on the design; refuses what does not fit or divide.
pub fn serving(
    design: &Design,
    catalog: &Catalog,
    job: &ServingJob,
    routing: Routing,
) -> Result<ServingResult, JobError> {
    let m = &job.model;
    m.validate().map_err(JobError::Model)?;
    let (gpu_id, gpu) = design_gpu(design, catalog)?;
    let (tp, pp, ep) = (job.tp.max(1), job.pp.max(1), job.ep.max(1));
    if pp > m.layers {
        return Err(JobError::NotDivisible(format!(
            "{} layers cannot fill {pp} pipeline stages",
            m.layers
        )));
    }
    if !m.heads.is_multiple_of(tp) {
        return Err(JobError::NotDivisible(format!(
            "{} attention heads do not split over tensor parallelism of {tp}",
            m.heads
        )));
    }
    let bytes = job.precision.bytes();
    let weight_bytes = job
        .weights
        .map_or(bytes, QuantizedWeights::bytes_per_weight);
    let batch = job.batch.max(1);
    let workload = |batch: u32| Workload {
        name: m.name.clone(),
        params: m.params(),
        layers: m.layers,
        hidden: m.hidden,
        seq_len: m.seq_len,
        micro_batch: 1,
        global_batch: 1,
        precision: job.precision,
        tp,
        pp,
        dp: None,
        moe: m.experts.filter(|e| *e > 1).map(|experts| Moe {
            experts,
            top_k: m.top_k.unwrap_or(1),
            layers: m.moe_layers(),
            expert_params: m.all_expert_params(),
            ep: Some(ep),
        }),
        serving: true,
        serving_batch: Some(batch),
        efficiency: job.efficiency,
        weights: job.weights,
        memory_share: job.memory_share,
        recompute: None,
        zero: None,
        trained_params: None,
        frozen_bytes: None,
        finetune: crate::model::job_spec::Finetune::Full,
    };
    // Built once for the decode step and the prompt's prefill.
    let workspace = Workspace::default();
    let fabrics = CommFabrics::build(design, catalog, &workspace)?;
    let decode = fabrics.step_comm(design, &workload(batch), routing)?;
    let gpus_per_replica = tp * pp * ep;
    let replicas = decode.mapping.dp / ep;

    let experts = m.all_expert_params();
    let dense = m.params() - experts;
    // Distinct experts a batch reaches per layer: E·(1 − (1 − k/E)^(B·1)) with uniform
    // routing of each token to k of E experts.
    let reached = match (m.experts, m.top_k) {
        (Some(e), Some(k)) if e > 1 => {
            let (e, k) = (f64::from(e), f64::from(k));
            1.0 - (1.0 - k / e).powf(f64::from(batch))
        }
        _ => 1.0,
    };
    let weight_bytes_per_gpu = (dense / f64::from(tp * pp)
        + reached * experts / f64::from(gpus_per_replica))
        * weight_bytes;
    // Key/value heads split over tensor ranks up to their number, then repeat.
    let kv_split = f64::from(tp.min(m.kv_heads()) * pp);
    let kv_bytes_per_gpu = f64::from(batch)
        * f64::from(job.prompt)
        * m.kv_bytes_per_token(job.precision.exchange_bytes())
        / kv_split;
    let held = (dense / f64::from(tp * pp) + experts / f64::from(gpus_per_replica)) * weight_bytes
        + kv_bytes_per_gpu;
    let need_gib = held / GIB;
    let budget = ServingBudget::of(gpu);
    let usable_memory_gib = gpu.memory_gib() * budget.share;
    if need_gib > usable_memory_gib {
        return Err(JobError::DoesNotFit {
            need_gib,
            have_gib: usable_memory_gib,
            gpu: format!(
                "{gpu_id} ({} {:.0} % of its {} GiB)",
                budget.source,
                budget.share * 100.0,
                crate::model::units::trim_number(gpu.memory_gib())
            ),
        });
    }
    let decode_comm_ms = decode.total_us / 1e3;
    let memory_share = job.memory_share.filter(|f| *f > 0.0 && *f <= 1.0);
    let decode_memory_ms = gpu.memory_gbyte_s.map(|bw| {
        let reached = bw * memory_share.unwrap_or(1.0);
        f64::from(pp) * (weight_bytes_per_gpu + kv_bytes_per_gpu) / (reached * 1e9) * 1e3
    });
    let peak = peak_tflops(gpu, job.precision);
    // Each stage's tp × ep GPUs do its share of the batch's FLOPs; stages go in turn, so
    // the step takes the whole batch's FLOPs over one stage's GPUs.
    let flops_per_token = m.decode_flops(job.prompt);
    let decode_compute_ms = peak
        .map(|peak| f64::from(batch) * flops_per_token / (f64::from(tp * ep) * peak * 1e12) * 1e3);
    let decode_step_ms = decode_memory_ms
        .map(|memory_ms| memory_ms.max(decode_compute_ms.unwrap_or(0.0)) + decode_comm_ms);
    let per_replica = decode_step_ms.map(|ms| f64::from(batch) / (ms / 1e3));

    let efficiency = match job.efficiency {
        Some(fraction) => Some(Efficiency {
            fraction,
            source: "set by the user".into(),
        }),
        None => gpu_efficiency(gpu, job.precision),
    };
    let ttft_ms = match (&efficiency, peak) {
        (Some(e), Some(peak)) => {
            let prefill = fabrics.step_comm(design, &workload(job.prompt), routing)?;
            let compute_ms = m.prefill_flops(job.prompt)
                / (f64::from(gpus_per_replica) * peak * 1e12 * e.fraction)
                * 1e3;
            Some(compute_ms + prefill.total_us / 1e3)
        }
        _ => None,
    };
    let mut assumes = vec![
        format!(
            "the serving engine takes {:.0} % of each GPU's memory ({}): {} of {} GiB",
            budget.share * 100.0,
            budget.explained,
            crate::model::units::trim_number(usable_memory_gib),
            crate::model::units::trim_number(gpu.memory_gib())
        ),
        match memory_share {
            None => format!(
                "decode at the {gpu_id}'s peak memory bandwidth{} (an upper bound), pipeline stages in turn",
                gpu.memory_gbyte_s
                    .map(|bw| format!(" ({bw:.0} GB/s)"))
                    .unwrap_or_default()
            ),
            Some(f) => format!(
                "decode at {:.0} % of the {gpu_id}'s peak memory bandwidth{} (set by the user), pipeline stages in turn",
                f * 100.0,
                gpu.memory_gbyte_s
                    .map(|bw| format!(" ({:.0} of {bw:.0} GB/s)", bw * f))
                    .unwrap_or_default()
            ),
        },
        format!(
            "{} per replica with {} prompt tokens each in the key/value cache, {}",
            crate::model::units::count_of(batch as usize, "sequence", "sequences"),
            job.prompt,
            match job.weights {
                Some(q) => format!(
                    "{} weights ({} bits each with their scales) widened to {} in the kernels; {} activations and cache",
                    q.label(),
                    crate::model::units::trim_number(q.bytes_per_weight() * 8.0),
                    job.precision.label(),
                    // FP8 exchanges and caches 16-bit values (`Precision::exchange_bytes`).
                    if job.precision == Precision::Fp8 {
                        "bf16"
                    } else {
                        job.precision.label()
                    }
                ),
                None if job.precision == Precision::Fp8 => {
                    "fp8 weights and matrix products; bf16 activations, all-reduces and cache"
                        .to_string()
                }
                None => format!("{} weights", job.precision.label()),
            }
        ),
    ];
    if gpu.memory_gbyte_s.is_none() {
        assumes.push(format!(
            "the {gpu_id}'s memory bandwidth is unknown: decode rate unknown"
        ));
    }
    if let (Some(memory_ms), Some(compute_ms), Some(peak)) =
        (decode_memory_ms, decode_compute_ms, peak)
    {
        let work = format!(
            "{} × {:.1} GFLOP a token at the {gpu_id}'s {} TFLOP/s {} peak takes {} a step",
            crate::model::units::count_of(batch as usize, "sequence", "sequences"),
            flops_per_token / 1e9,
            crate::model::units::trim_number(peak),
            job.precision.label(),
            crate::model::units::time_text(compute_ms * 1e3)
        );
        let reads = crate::model::units::time_text(memory_ms * 1e3);
        assumes.push(if compute_ms > memory_ms {
            format!("decode bound by compute: {work}, more than its memory reads' {reads}")
        } else {
            format!("decode's compute hides under its memory reads ({reads}): {work}")
        });
    }
    if peak.is_none() {
        assumes.push(if gpu.bf16_tflops <= 0.0 {
            format!(
                "no published {} peak for the {gpu_id}: time to first token unknown, and decode bounded by its memory reads alone",
                job.precision.label()
            )
        } else {
            format!(
                "the {gpu_id} has no {} tensor units: time to first token unknown, and decode bounded by its memory reads alone",
                job.precision.label()
            )
        });
    }
    match &efficiency {
        Some(e) => assumes.push(format!(
            "prefill kernels at {:.0} % of peak: {}",
            e.fraction * 100.0,
            e.source
        )),
        None => assumes.push(format!(
            "no published kernel efficiency for the {gpu_id}: time to first token unknown ({})",
            super::compute::how_to_set_efficiency()
        )),
    }
    Ok(ServingResult {
        layout: format!(
            "TP {tp} × PP {pp}{}",
            if ep > 1 {
                format!(" × EP {ep}")
            } else {
                String::new()
            }
        ),
        replicas,
        gpus_per_replica,
        gpu: gpu_id,
        weight_bytes_per_gpu,
        kv_bytes_per_gpu,
        memory_gib_per_gpu: need_gib,
        gpu_memory_gib: gpu.memory_gib(),
        usable_memory_gib,
        memory_budget_source: budget.source.to_string(),
        memory_budget_explained: budget.explained.to_string(),
        decode_step_ms,
        decode_comm_ms,
        decode_compute_ms,
        decode_memory_ms,
        decode_tokens_per_s_per_replica: per_replica,
        decode_tokens_per_s_per_sequence: decode_step_ms.map(|ms| 1e3 / ms),
        memory_share,
        decode_tokens_per_s: per_replica.map(|r| r * f64::from(replicas)),
        ttft_ms,
        efficiency,
        economics: None,
        assumes,
    })
}
