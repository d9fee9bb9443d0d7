//! One training step on the drawn fabric: compute at the GPUs' achieved rate, the pipeline
//! bubble, and the communication the collective model times on the design's links, with
//! what hides behind what.
//!
//! Assumptions (shown with every result): Megatron-style tensor, pipeline, data and expert
//! parallelism (rank order tp-ep-dp-pp); the 1F1B pipeline schedule, whose bubble is
//! (PP − 1) / micro-batches of the ideal time (Narayanan et al. 2021, §2.2.1), divided by the
//! virtual stages of the interleaved schedule; tensor-parallel all-reduces, pipeline
//! hand-offs and expert all-to-alls on the critical path (not overlapped); the gradient
//! all-reduce overlapped with the last micro-batch's backward pass, except its last bucket
//! (Megatron's default bucket, 40M parameters), or not at all when overlap is off.

use super::compute::{Efficiency, gpu_efficiency, peak_tflops};
use super::finetune::{
    DEQUANT_BYTES, TrainedWeights, adapter_flops_per_token, adapter_params, block_linear_params,
    weight_passes,
};
use super::memory::{MemoryLayout, MemoryUse, training_memory};
use super::model::{ModelSpec, Recompute};
use super::{JobError, design_gpu};
use crate::analysis::collective::{
    CommFabrics, CommKind, Moe, Precision, Routing, Workload, WorkloadResult, Workspace,
};
use crate::model::catalog::GpuSpec;
use crate::model::job_spec::Finetune;
use crate::model::{Catalog, Design};
use serde::Serialize;

/// Parameters in one gradient bucket (Megatron-LM's `--ddp-bucket-size` default).
const GRAD_BUCKET_PARAMS: f64 = 40.0e6;
const GIB: f64 = 1024.0 * 1024.0 * 1024.0;

/// A training job: the model, its parallel layout and the framework's settings.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct TrainingJob {
    pub model: ModelSpec,
    pub tp: u32,
    pub pp: u32,
    /// None = as many replicas as the GPUs allow.
    pub dp: Option<u32>,
    /// Expert-parallel size of a mixture of experts; None = as many as it has experts
    /// (within the data-parallel size).
    pub ep: Option<u32>,
    pub micro_batch: u32,
    /// Sequences per step over all replicas.
    pub global_batch: u32,
    pub precision: Precision,
    pub recompute: Recompute,
    /// ZeRO / FSDP stage, 0 to 3.
    pub zero: u8,
    /// Virtual stages per GPU of the interleaved pipeline schedule (1 = plain 1F1B).
    pub virtual_stages: u32,
    /// Overlap the gradient all-reduce with the backward pass.
    pub overlap_grad_reduce: bool,
    /// The fraction of peak the kernels achieve; None = the published default for the GPU.
    pub efficiency: Option<f64>,
    /// Every weight trains, or adapters on the frozen model.
    pub finetune: Finetune,
}

impl TrainingJob {
    /// The model in a layout of the user's: defaults bf16, micro-batch 1, selective
    /// recomputation (attention scores are not kept, as with FlashAttention), ZeRO-1
    /// (Megatron's distributed optimizer), overlap on.
    pub fn new(model: ModelSpec, tp: u32, pp: u32, global_batch: u32) -> Self {
        TrainingJob {
            model,
            tp,
            pp,
            dp: None,
            ep: None,
            micro_batch: 1,
            global_batch,
            precision: Precision::Bf16,
            recompute: Recompute::Selective,
            zero: 1,
            virtual_stages: 1,
            overlap_grad_reduce: true,
            efficiency: None,
            finetune: Finetune::Full,
        }
    }

    /// Training FLOPs per token the job needs, no recomputation: the numerator of MFU.
    pub fn model_flops_per_token(&self) -> f64 {
        match self.finetune.rank() {
            None => self.model.model_flops_per_token(),
            Some(r) => adapter_flops_per_token(&self.model, r, Recompute::None),
        }
    }

    /// Training FLOPs per token the GPUs execute, recomputation included: the numerator of
    /// HFU.
    pub fn hardware_flops_per_token(&self) -> f64 {
        match self.finetune.rank() {
            None => self.model.hardware_flops_per_token(self.recompute),
            Some(r) => adapter_flops_per_token(&self.model, r, self.recompute),
        }
    }

    /// Forward FLOPs per token (the backward pass is what the gradient all-reduce can hide
    /// behind).
    fn forward_flops_per_token(&self) -> f64 {
        match self.finetune.rank() {
            None => self.model.model_flops_per_token() / 3.0,
            Some(r) => self.model.forward_flops_per_token() + 2.0 * adapter_params(&self.model, r),
        }
    }

    /// Why the job cannot train with its adapters: a rank out of range, or a mixture of
    /// experts (which matrices of which experts carry adapters varies by framework).
    fn finetune_refusal(&self) -> Option<String> {
        let rank = self.finetune.rank()?;
        if !Finetune::RANKS.contains(&rank) {
            return Some(format!(
                "adapter rank {rank} is out of range ({} to {})",
                Finetune::RANKS.start(),
                Finetune::RANKS.end()
            ));
        }
        self.model.experts.filter(|e| *e > 1).map(|_| {
            format!(
                "{} is a mixture of experts: adapters (LoRA, QLoRA) are modelled on dense \
                 models only",
                self.model.name
            )
        })
    }

    /// The built-in workload of the same name, when the job's model is that built-in's
    /// shape (a user's model file that reuses the name is not).
    fn published_workload(&self) -> Option<Workload> {
        let mut builtin = super::model::named_model(&self.model.name)?;
        builtin.seq_len = self.model.seq_len;
        (builtin == self.model)
            .then(|| Workload::named(&self.model.name))
            .flatten()
    }

    /// The communication the collective model times: the same job as a `Workload`. A
    /// built-in model's gradients are its published parameter counts, as its `Workload`
    /// carries them (DeepSeek-V3's 671B, which the shape counted here approximates as 669B),
    /// so that the sidebar, `workload`, `compare` and the layout search time one exchange.
    pub fn comm_workload(&self) -> Workload {
        let m = &self.model;
        let adapters = (!self.finetune.is_full()).then(|| TrainedWeights::of(m, self.finetune));
        let published = self.published_workload();
        let moe = m.experts.filter(|e| *e > 1).map(|experts| Moe {
            experts,
            top_k: m.top_k.unwrap_or(1),
            layers: m.moe_layers(),
            expert_params: published
                .as_ref()
                .and_then(|w| w.moe)
                .map_or_else(|| m.all_expert_params(), |moe| moe.expert_params),
            ep: self.ep,
        });
        Workload {
            name: m.name.clone(),
            params: published.as_ref().map_or_else(|| m.params(), |w| w.params),
            layers: m.layers,
            hidden: m.hidden,
            seq_len: m.seq_len,
            micro_batch: self.micro_batch.max(1),
            global_batch: self.global_batch,
            precision: self.precision,
            tp: self.tp.max(1),
            pp: self.pp.max(1),
            dp: self.dp,
            moe,
            serving: false,
            serving_batch: None,
            efficiency: self.efficiency,
            weights: None,
            memory_share: None,
            recompute: Some(self.recompute),
            zero: Some(self.zero),
            trained_params: adapters.map(|a| a.trained_params),
            frozen_bytes: adapters.map(|a| a.frozen_bytes),
            finetune: self.finetune,
        }
    }
}

/// One part of the step's time, ms; None where the GPUs' achieved rate is unknown.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct StepPart {
    pub name: String,
    pub ms: f64,
    /// The traffic it is (the gradient part: data parallelism's, experts' included).
    #[serde(skip)]
    pub kind: CommKind,
}

#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct TrainingStep {
    pub layout: String,
    pub tp: u32,
    pub pp: u32,
    pub dp: u32,
    pub ep: u32,
    pub gpus_used: u32,
    pub micro_batch: u32,
    pub micro_batches: u32,
    pub recompute: Recompute,
    pub zero: u8,
    pub gpu: String,
    /// None when no source gives the GPU's peak: compute, MFU and HFU are then unknown.
    pub peak_tflops: Option<f64>,
    /// The kernels' fraction of peak and where it comes from; None = unknown.
    pub efficiency: Option<Efficiency>,
    /// Model FLOPs (no recomputation) and the FLOPs the GPUs execute, per step, all GPUs.
    pub model_flops: f64,
    pub hardware_flops: f64,
    /// None when the efficiency is unknown (as are every figure below that needs it).
    pub compute_ms: Option<f64>,
    /// Of it, the element-wise kernels bound by memory bandwidth.
    pub elementwise_ms: Option<f64>,
    pub bubble_ms: Option<f64>,
    pub exposed_comm_ms: Option<f64>,
    /// Exposed communication by part, ms.
    pub exposed: Vec<StepPart>,
    pub step_ms: Option<f64>,
    /// The same step on a fabric that never queues beyond the first switch.
    pub ideal_step_ms: Option<f64>,
    /// Share of the step the network costs: 1 − ideal / step.
    pub network_share: Option<f64>,
    pub tokens_per_step: f64,
    pub tokens_per_s: Option<f64>,
    pub mfu: Option<f64>,
    pub hfu: Option<f64>,
    pub memory: MemoryUse,
    pub memory_gib_per_gpu: f64,
    pub gpu_memory_gib: f64,
    pub comm: WorkloadResult,
    pub assumes: Vec<String>,
}

impl TrainingStep {
    /// The settings a search chooses, as a search lists them: "TP 4 × PP 4 × DP 1,
    /// micro-batch 1, recompute full, ZeRO 1".
    pub fn settings_text(&self) -> String {
        format!(
            "{}, micro-batch {}, recompute {}, ZeRO {}",
            self.layout,
            self.micro_batch,
            self.recompute.label(),
            self.zero
        )
    }

    /// Why the step is mostly waiting, when the 1F1B pipeline's bubble is over half of it:
    /// each stage idles (p − 1)/m of the compute (Narayanan et al., SC21), so with few
    /// micro-batches per replica the GPUs mostly wait. Says what shrinks it: the batch that
    /// gives 4 micro-batches per stage is our suggestion (the bubble is then (p − 1)/4p,
    /// under a quarter of the compute), not a figure from a source.
    pub fn bubble_note(&self) -> Option<String> {
        let (bubble, step) = (self.bubble_ms?, self.step_ms?);
        if step <= 0.0 || bubble / step <= 0.5 {
            return None;
        }
        let m = self.micro_batches.max(1);
        let enough = 4 * self.pp * self.dp * self.micro_batch.max(1);
        Some(format!(
            "the pipeline bubble is {:.0} % of the step: {} per replica through {} stages, and \
             1F1B idles (p − 1)/m = {}/{m} of the compute; a global batch of {} sequences \
             (4 micro-batches per stage) or fewer data-parallel replicas shrinks it",
            bubble / step * 100.0,
            crate::model::units::count_of(m as usize, "micro-batch", "micro-batches"),
            self.pp,
            self.pp - 1,
            crate::model::units::group_thousands(i64::from(enough)),
        ))
    }
}

/// The step time of `job` on the design. Refuses layouts that do not divide or do not fit.
pub fn training_step(
    design: &Design,
    catalog: &Catalog,
    job: &TrainingJob,
    routing: Routing,
) -> Result<TrainingStep, JobError> {
    job.model.validate().map_err(JobError::Model)?;
    let workspace = Workspace::default();
    let fabrics = CommFabrics::build(design, catalog, &workspace)?;
    training_step_on(&fabrics, design, catalog, job, routing)
}

/// `training_step` on fabrics already built from `design`.
pub fn training_step_on(
    fabrics: &CommFabrics,
    design: &Design,
    catalog: &Catalog,
    job: &TrainingJob,
    routing: Routing,
) -> Result<TrainingStep, JobError> {
    let comm = fabrics.step_comm(design, &job.comm_workload(), routing)?;
    training_step_with(comm, design, catalog, job)
}

/// The step of `job` given its communication (`comm`, timed for `job.comm_workload()`; the
/// job's recomputation adds its own exchanges).
pub fn training_step_with(
    comm: WorkloadResult,
    design: &Design,
    catalog: &Catalog,
    job: &TrainingJob,
) -> Result<TrainingStep, JobError> {
    job.model.validate().map_err(JobError::Model)?;
    if let Some(why) = job.finetune_refusal() {
        return Err(JobError::Model(why));
    }
    let (gpu_id, gpu) = design_gpu(design, catalog)?;
    // A GPU whose peak no source gives (the catalog leaves it at zero) still has its memory
    // and traffic worked out; only its compute is unknown, and the assumptions say so.
    let peak = match super::peak_or_refusal(&gpu_id, gpu, job.precision) {
        Ok(peak) => Some(peak),
        Err(JobError::UnknownPeak { .. }) => None,
        Err(e) => return Err(e),
    };
    if job.pp.max(1) > job.model.layers {
        return Err(JobError::NotDivisible(format!(
            "{} layers cannot fill {} pipeline stages",
            job.model.layers, job.pp
        )));
    }
    if !job.model.heads.is_multiple_of(job.tp.max(1)) {
        return Err(JobError::NotDivisible(format!(
            "{} attention heads do not split over tensor parallelism of {}",
            job.model.heads, job.tp
        )));
    }
    // Megatron splits the key-value heads (query groups) across tensor parallelism as it
    // splits the heads (megatron/core/transformer/attention.py: `divide(num_query_groups,
    // world_size)`), so Llama 3 70B's 8 of them stop TP at 8.
    if !job.model.kv_heads().is_multiple_of(job.tp.max(1)) {
        return Err(JobError::NotDivisible(format!(
            "{} key-value heads do not split over tensor parallelism of {}",
            job.model.kv_heads(),
            job.tp
        )));
    }
    if job.zero > 3 {
        return Err(JobError::NotDivisible(format!(
            "ZeRO stage {} does not exist (0 to 3)",
            job.zero
        )));
    }
    let (tp, pp, dp, ep) = (
        comm.mapping.tp,
        comm.mapping.pp,
        comm.mapping.dp,
        comm.mapping.ep,
    );
    let per_step = u64::from(dp) * u64::from(job.micro_batch.max(1));
    if !u64::from(job.global_batch).is_multiple_of(per_step) || job.global_batch == 0 {
        return Err(JobError::NotDivisible(format!(
            "a global batch of {} sequences does not split into micro-batches of {} over {} data-parallel replicas",
            job.global_batch, job.micro_batch, dp
        )));
    }
    let m = (u64::from(job.global_batch) / per_step) as u32;
    let memory = training_memory(
        &job.model,
        &MemoryLayout {
            tp,
            pp,
            dp,
            ep,
            micro_batch: job.micro_batch,
            micro_batches: m,
            zero: job.zero,
            recompute: job.recompute,
            finetune: job.finetune,
        },
    );
    let have_gib = gpu.memory_gib();
    let need_gib = memory.total() / GIB;
    if need_gib > have_gib {
        return Err(JobError::DoesNotFit {
            need_gib,
            have_gib,
            gpu: gpu_id,
        });
    }

    let tokens = f64::from(job.global_batch) * f64::from(job.model.seq_len);
    let model_flops = job.model_flops_per_token() * tokens;
    let hardware_flops = job.hardware_flops_per_token() * tokens;
    let efficiency = job_efficiency(job, gpu);
    let used = f64::from(comm.mapping.gpus_used);
    let times = compute_times(job, gpu, efficiency.as_ref(), comm.mapping.gpus_used, pp);
    let elementwise_ms = times.map(|t| t.1);
    let compute_ms = times.map(|t| t.0);

    let comm = job.recompute.communication(comm);
    let part_ms = |kinds: &[CommKind], ideal: bool| -> f64 {
        comm.components
            .iter()
            .filter(|c| kinds.contains(&c.kind))
            .map(|c| {
                if ideal {
                    c.ideal_us_per_step / 1e3
                } else {
                    c.time_us_per_step / 1e3
                }
            })
            .sum()
    };
    let backward_share = 1.0 - job.forward_flops_per_token() / job.hardware_flops_per_token();
    let params_per_gpu =
        TrainedWeights::of(&job.model, job.finetune).trained_params / f64::from(tp * pp);
    let last_bucket = (GRAD_BUCKET_PARAMS / params_per_gpu).min(1.0);
    let layers_per_stage = f64::from(job.model.layers.div_ceil(pp.max(1)));
    let compose = |ideal: bool| {
        let compute = compute_ms?;
        let tensor = part_ms(&[CommKind::TensorParallel], ideal);
        let experts = part_ms(&[CommKind::ExpertAllToAll], ideal);
        let pipeline = part_ms(&[CommKind::Pipeline], ideal);
        // ZeRO-3's gathers run beside the compute (FSDP prefetches the next layer's while
        // this one computes): what the compute cannot cover waits, and at least each pass's
        // first layer, which nothing precedes.
        let gathers = part_ms(&[CommKind::WeightGather], ideal);
        let gathers_exposed = (gathers - compute).max(gathers / layers_per_stage);
        let grads = part_ms(
            &[CommKind::DataParallel, CommKind::ExpertDataParallel],
            ideal,
        );
        let grads_exposed = if job.overlap_grad_reduce {
            let window = compute / f64::from(m) * backward_share;
            (grads - window).max(grads * last_bucket)
        } else {
            grads
        };
        let bubble = f64::from(pp - 1) / (f64::from(m) * f64::from(job.virtual_stages.max(1)))
            * (compute + tensor + experts);
        let parts = vec![
            (
                "tensor-parallel all-reduces",
                CommKind::TensorParallel,
                tensor,
            ),
            ("MoE all-to-all", CommKind::ExpertAllToAll, experts),
            ("pipeline hand-offs", CommKind::Pipeline, pipeline),
            (
                "ZeRO-3 weight all-gathers (exposed)",
                CommKind::WeightGather,
                gathers_exposed,
            ),
            (
                if job.zero == 3 && dp > 1 {
                    "gradient reduce-scatter (exposed)"
                } else {
                    "gradient all-reduce (exposed)"
                },
                CommKind::DataParallel,
                grads_exposed,
            ),
        ];
        let exposed: f64 = parts.iter().map(|(_, _, ms)| ms).sum();
        Some((compute + bubble + exposed, bubble, exposed, parts))
    };
    let real = compose(false);
    let ideal = compose(true);
    let step_ms = real.as_ref().map(|r| r.0);
    let ideal_step_ms = ideal.as_ref().map(|r| r.0);
    let utilisation = |flops: f64| {
        step_ms
            .zip(peak)
            .map(|(s, peak)| flops / used / (s / 1e3) / (peak * 1e12))
    };
    let mut assumes = vec![
        format!(
            "a step of {} sequences of {} tokens ({}), {} micro-batches of {} per \
             data-parallel rank",
            crate::model::units::group_thousands(i64::from(job.global_batch)),
            crate::model::units::group_thousands(i64::from(job.model.seq_len)),
            step_tokens_text(f64::from(job.global_batch) * f64::from(job.model.seq_len)),
            m,
            job.micro_batch.max(1)
        ),
        format!(
            "Megatron-style layout (tp-ep-dp-pp rank order), 1F1B pipeline{}",
            if job.virtual_stages > 1 {
                format!(" interleaved over {} virtual stages", job.virtual_stages)
            } else {
                String::new()
            }
        ),
        "tensor-parallel, pipeline and expert traffic not overlapped with compute".into(),
        format!(
            "element-wise kernels at the {gpu_id}'s peak memory bandwidth{}",
            gpu.memory_gbyte_s
                .map(|bw| format!(" ({bw:.0} GB/s)"))
                .unwrap_or_else(|| " (unknown: compute time unknown)".into())
        ),
        if job.overlap_grad_reduce {
            "gradient all-reduce overlapped with the last micro-batch's backward pass, \
             last 40M-parameter bucket exposed"
                .into()
        } else {
            "gradient all-reduce after the backward pass (no overlap)".into()
        },
        format!(
            "recomputation {}, ZeRO stage {}, {} weights and activations",
            job.recompute.label(),
            job.zero,
            job.precision.label()
        ),
        // Not modelled, so not guessed: the free memory is shown beside the figure instead.
        "memory counts weights, gradients, optimizer state and activations; the CUDA \
         context, NCCL's buffers and the allocator's fragmentation also take memory and are \
         not counted, so a layout with little memory free may not run"
            .into(),
    ];
    if job.zero == 3 && dp > 1 {
        assumes.push(
            "ZeRO-3 (FSDP's full shard): each micro-batch gathers every layer's weights from \
             the data-parallel replicas before its forward pass and again before its backward \
             pass, beside the compute (FSDP prefetches the next layer's; Zhao et al. 2023), so \
             only what outlasts the compute waits, and at least each pass's first layer; the \
             gradients are reduce-scattered"
                .into(),
        );
    }
    if let Some(rank) = job.finetune.rank() {
        let frozen = match job.finetune {
            Finetune::Qlora { .. } => {
                "the blocks' frozen weights in NF4 with double quantization (4.127 bits; \
                 embeddings and output projection 16-bit), widened to 16-bit on every pass \
                 as bitsandbytes does, at the peak memory bandwidth"
            }
            _ => "the frozen weights in 16-bit",
        };
        assumes.push(format!(
            "{}: adapters of rank {rank} on every linear layer of the blocks ({} M trained \
             parameters, 16 bytes each with mixed-precision Adam; QLoRA's choice), {frozen}; \
             no frozen weight has a gradient, so the gradient all-reduce carries the adapters' \
             only; the adapters' small products at the kernels' rate",
            job.finetune.label(),
            crate::model::units::trim_number(
                (adapter_params(&job.model, rank) / 1e4).round() / 1e2
            ),
        ));
    }
    if !job.model.layers.is_multiple_of(pp) {
        assumes.push(format!(
            "{} layers over {pp} stages: the longest stage has {} (it paces the pipeline)",
            job.model.layers,
            job.model.layers.div_ceil(pp)
        ));
    }
    match (&efficiency, peak) {
        (_, None) => assumes.push(format!(
            "no published {} peak for the {gpu_id}: compute time unknown (give the GPU's \
             bf16_tflops in your own catalog, --catalog FILE)",
            job.precision.label()
        )),
        (Some(e), Some(_)) => assumes.push(format!(
            "kernels at {:.0} % of peak: {}",
            e.fraction * 100.0,
            e.source
        )),
        (None, Some(_)) => assumes.push(format!(
            "no published kernel efficiency for {gpu_id} at {}: compute time unknown ({})",
            job.precision.label(),
            super::compute::how_to_set_efficiency()
        )),
    }
    Ok(TrainingStep {
        layout: comm.mapping.layout(),
        tp,
        pp,
        dp,
        ep,
        gpus_used: comm.mapping.gpus_used,
        micro_batch: job.micro_batch,
        micro_batches: m,
        recompute: job.recompute,
        zero: job.zero,
        gpu: gpu_id,
        peak_tflops: peak,
        compute_ms,
        elementwise_ms,
        bubble_ms: real.as_ref().map(|r| r.1),
        exposed_comm_ms: real.as_ref().map(|r| r.2),
        exposed: real
            .as_ref()
            .map(|r| {
                r.3.iter()
                    .filter(|(_, _, ms)| *ms > 0.0)
                    .map(|(name, kind, ms)| StepPart {
                        name: (*name).into(),
                        ms: *ms,
                        kind: *kind,
                    })
                    .collect()
            })
            .unwrap_or_default(),
        step_ms,
        ideal_step_ms,
        network_share: step_ms
            .zip(ideal_step_ms)
            .map(|(s, i)| if s > 0.0 { 1.0 - i / s } else { 0.0 }),
        tokens_per_step: tokens,
        tokens_per_s: step_ms.map(|s| tokens / (s / 1e3)),
        mfu: utilisation(model_flops),
        hfu: utilisation(hardware_flops),
        efficiency,
        model_flops,
        hardware_flops,
        memory,
        memory_gib_per_gpu: need_gib,
        gpu_memory_gib: have_gib,
        comm,
        assumes,
    })
}

/// "4.19 M tokens"; under a million, the count itself ("4,096 tokens"), which in millions
/// would read as none.
fn step_tokens_text(tokens: f64) -> String {
    if tokens < 1e6 {
        format!(
            "{} tokens",
            crate::model::units::group_thousands(tokens.round() as i64)
        )
    } else {
        format!(
            "{} M tokens",
            crate::model::units::trim_number((tokens / 1e4).round() / 1e2)
        )
    }
}

/// The kernels' efficiency for the job: the user's, else the published one for the GPU.
pub(super) fn job_efficiency(job: &TrainingJob, gpu: &GpuSpec) -> Option<Efficiency> {
    match job.efficiency {
        Some(fraction) => Some(Efficiency {
            fraction,
            source: "set by the user".into(),
        }),
        None => gpu_efficiency(gpu, job.precision),
    }
}

/// Layers that do not split evenly leave some stages one layer longer: the longest stage
/// paces the pipeline.
fn stage_imbalance(model: &ModelSpec, pp: u32) -> f64 {
    let pp = pp.max(1);
    f64::from(model.layers.div_ceil(pp)) * f64::from(pp) / f64::from(model.layers)
}

/// A step's compute on `used` GPUs in `pp` stages, and the part of it in element-wise
/// kernels, ms; None when the kernels' efficiency or the memory bandwidth is unknown.
pub(super) fn compute_times(
    job: &TrainingJob,
    gpu: &GpuSpec,
    efficiency: Option<&Efficiency>,
    used: u32,
    pp: u32,
) -> Option<(f64, f64)> {
    let peak = peak_tflops(gpu, job.precision)?;
    let fraction = efficiency?.fraction;
    let bw = gpu.memory_gbyte_s?;
    let used = f64::from(used.max(1));
    let tokens = f64::from(job.global_batch) * f64::from(job.model.seq_len);
    let imbalance = stage_imbalance(&job.model, pp);
    let matmul = job.hardware_flops_per_token() * tokens / used / (peak * 1e12 * fraction);
    // Element-wise kernels are bound by memory, not by the tensor cores: their bytes at the
    // GPU's memory bandwidth, split over all GPUs as the matrices are (sequence parallelism
    // splits them over the tensor ranks).
    let mut elementwise = tokens
        * f64::from(job.model.layers)
        * job.model.elementwise_bytes_per_token_layer(job.recompute)
        * ModelSpec::elementwise_passes(job.recompute)
        / used
        / (bw * 1e9);
    if let Finetune::Qlora { .. } = job.finetune {
        // Every micro-batch widens each GPU's share of the 4-bit weights to 16-bit once per
        // pass; over the step, the global batch's micro-batches share the GPUs.
        let micro_batches = f64::from(job.global_batch) / f64::from(job.micro_batch.max(1));
        elementwise += micro_batches
            * weight_passes(job.recompute)
            * block_linear_params(&job.model)
            * DEQUANT_BYTES
            / used
            / (bw * 1e9);
    }
    Some((
        (matmul + elementwise) * 1e3 * imbalance,
        elementwise * 1e3 * imbalance,
    ))
}

/// No step of the job in this layout is faster than its compute and the bubble that compute
/// alone leaves: the layout search's bound.
pub(super) fn step_lower_bound_ms(
    job: &TrainingJob,
    gpu: &GpuSpec,
    efficiency: Option<&Efficiency>,
    (tp, pp, dp): (u32, u32, u32),
) -> Option<f64> {
    let (compute, _) = compute_times(job, gpu, efficiency, tp * pp * dp, pp)?;
    let m = f64::from(job.global_batch) / f64::from(dp.max(1) * job.micro_batch.max(1));
    Some(compute * (1.0 + f64::from(pp.max(1) - 1) / (m * f64::from(job.virtual_stages.max(1)))))
}
