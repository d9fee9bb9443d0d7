//! Training and serving workloads on top of the collective model: tensor, pipeline, data and
//! expert parallelism mapped onto the drawn GPUs in Megatron's order, with the communication
//! time of one training step (or one decode step of serving replicas) next to what an ideal
//! network would need.

use super::evaluate::{GroupSpec, PlanCache, evaluate_groups, evaluate_groups_with};
use super::fabric;
use super::workspace::Workspace;
use super::{Algorithm, CollectiveError, Op, Routing};
use crate::model::job_spec::Finetune;
use crate::model::{Catalog, Design};
use serde::{Deserialize, Serialize};

// Defined with the design's job, which names them; their arithmetic is here.
pub use crate::model::job_spec::{Precision, QuantizedWeights, Recompute, SERVING_SEQUENCES};

impl Precision {
    pub fn label(self) -> &'static str {
        match self {
            Precision::Fp32 => "fp32",
            Precision::Bf16 => "bf16",
            Precision::Fp16 => "fp16",
            Precision::Fp8 => "fp8",
        }
    }

    pub fn bytes(self) -> f64 {
        match self {
            Precision::Fp32 => 4.0,
            Precision::Bf16 | Precision::Fp16 => 2.0,
            Precision::Fp8 => 1.0,
        }
    }

    /// Bytes of each value the GPUs exchange (activations, gradients) and of the key/value
    /// cache. FP8 runs only the matrix products in 8 bits: Transformer Engine and vLLM write
    /// their outputs, reduce gradients and cache keys and values in 16 bits unless told
    /// otherwise (vLLM's `kv_cache_dtype` is the model's by default).
    pub fn exchange_bytes(self) -> f64 {
        match self {
            Precision::Fp8 => 2.0,
            p => p.bytes(),
        }
    }
}

impl QuantizedWeights {
    pub const ALL: [QuantizedWeights; 2] = [QuantizedWeights::Int8, QuantizedWeights::Int4];

    pub fn label(self) -> &'static str {
        match self {
            QuantizedWeights::Int8 => "int8",
            QuantizedWeights::Int4 => "int4",
        }
    }

    /// Bytes a weight takes, its share of the group's scale and zero point included.
    pub fn bytes_per_weight(self) -> f64 {
        match self {
            QuantizedWeights::Int8 => 1.0,
            QuantizedWeights::Int4 => (4.0 + 32.0 / 128.0) / 8.0,
        }
    }
}

/// Mixture-of-experts layers: each token goes to `top_k` of `experts` experts, dispatched and
/// combined by all-to-all among the expert-parallel ranks.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub struct Moe {
    pub experts: u32,
    pub top_k: u32,
    /// Layers with experts (the others are dense).
    pub layers: u32,
    /// Parameters in the experts, all layers together (the rest are shared by every token).
    pub expert_params: f64,
    /// Expert-parallel size: the data-parallel ranks that split the experts between them.
    /// None = as many as there are experts, within the data-parallel size.
    pub ep: Option<u32>,
}

/// A training job. Parallel sizes: tensor (`tp`, inside a scale-up domain first), pipeline
/// (`pp`), data (`dp`; None = as many replicas as the GPUs allow).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Workload {
    pub name: String,
    pub params: f64,
    pub layers: u32,
    pub hidden: u32,
    pub seq_len: u32,
    pub micro_batch: u32,
    /// Sequences per step over all replicas.
    pub global_batch: u32,
    pub precision: Precision,
    pub tp: u32,
    pub pp: u32,
    pub dp: Option<u32>,
    pub moe: Option<Moe>,
    /// Inference replicas rather than training: a step is one decode step, and the advice
    /// asks whether the replicas need a fabric at all.
    #[serde(default)]
    pub serving: bool,
    /// Sequences each serving replica decodes at once; None = `SERVING_SEQUENCES`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub serving_batch: Option<u32>,
    /// Fraction of the GPUs' dense peak the kernels achieve, for the step's compute; None =
    /// the published figure for the GPU generation (unknown where there is none). The
    /// communication does not depend on it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub efficiency: Option<f64>,
    /// Serving: weights quantized below the activations' precision; None = weights in
    /// `precision`. Training ignores it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub weights: Option<QuantizedWeights>,
    /// Serving: the share of peak memory bandwidth decode reaches; None = the peak (an upper
    /// bound). The communication does not depend on it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub memory_share: Option<f64>,
    /// Training: recomputation; None = railyard's default framework settings (selective).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub recompute: Option<Recompute>,
    /// Training: the ZeRO stage (0 to 3; 3 gathers the weights, `CommKind::WeightGather`);
    /// None = railyard's default (1).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub zero: Option<u8>,
    /// Training: the parameters whose gradients are reduced, when only some train (adapters
    /// on a frozen dense model); None = every parameter.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub trained_params: Option<f64>,
    /// Training with adapters: the frozen weights' bytes, whole model (what ZeRO-3 gathers
    /// besides the adapters); None when every weight trains.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub frozen_bytes: Option<f64>,
    /// Training: every weight, or adapters on a frozen model (`trained_params` says how many
    /// train).
    #[serde(default, skip_serializing_if = "Finetune::is_full")]
    pub finetune: Finetune,
}

impl Recompute {
    /// A step's communication as this recomputation runs it: full recomputation runs each
    /// layer's forward pass again, with its tensor-parallel all-reduces and expert exchanges,
    /// so 6 of them per layer and micro-batch instead of 4 (2 forward, 2 backward).
    pub fn communication(self, comm: WorkloadResult) -> WorkloadResult {
        match self {
            Recompute::Full => comm.with_layer_exchanges_scaled(
                1.5,
                "full recomputation runs each layer's forward again: its tensor-parallel \
                 all-reduces and expert exchanges 6 times per layer and micro-batch, not 4"
                    .into(),
            ),
            Recompute::None | Recompute::Selective => comm,
        }
    }

    pub fn label(self) -> &'static str {
        match self {
            Recompute::None => "none",
            Recompute::Selective => "selective",
            Recompute::Full => "full",
        }
    }
}

/// The models offered by name (id, label), dense Llama 3 sizes first, then mixtures of experts.
pub const MODELS: [(&str, &str); 5] = [
    ("llama-8b", "Llama 8B"),
    ("llama-70b", "Llama 70B"),
    ("llama-405b", "Llama 405B"),
    ("mixtral-8x7b", "Mixtral 8×7B (MoE)"),
    ("deepseek-v3", "DeepSeek-V3 671B (MoE)"),
];

/// A layout of `tp` × `pp` GPUs narrowed to `gpus`: tensor parallelism to the largest power
/// of two the GPUs hold, then pipeline stages to what is left (at least one). None when it
/// fits as it is, or there are no GPUs. `workload` starts from it when a model's usual
/// layout is larger than the design; the sidebar offers it.
pub fn fitted_layout(tp: u32, pp: u32, gpus: u64) -> Option<(u32, u32)> {
    if gpus == 0 || u64::from(tp) * u64::from(pp) <= gpus {
        return None;
    }
    let largest_power = 1u64 << (63 - gpus.leading_zeros());
    let fit_tp = u64::from(tp).min(largest_power) as u32;
    let fit_pp = u64::from(pp).min(gpus / u64::from(fit_tp)).max(1) as u32;
    Some((fit_tp, fit_pp))
}

impl Workload {
    /// This workload in its usual layout narrowed to a design of `gpus` GPUs
    /// (`fitted_layout`), and the note that says so; None when the layout fits as it is.
    pub fn fitted_to(&self, gpus: u64) -> Option<(Workload, String)> {
        let (tp, pp) = fitted_layout(self.tp, self.pp, gpus)?;
        let note = format!(
            "{} runs TP {tp} × PP {pp}, fitted to the design's {} GPUs (the usual TP {} × PP {} \
             needs {})",
            self.name,
            crate::model::units::group_thousands(i64::try_from(gpus).unwrap_or(i64::MAX)),
            self.tp,
            self.pp,
            u64::from(self.tp) * u64::from(self.pp)
        );
        Some((
            Workload {
                tp,
                pp,
                ..self.clone()
            },
            note,
        ))
    }
}

/// The label `MODELS` gives a model id, else the id itself.
pub fn model_label(id: &str) -> &str {
    MODELS
        .iter()
        .find(|(known, _)| *known == id)
        .map_or(id, |(_, label)| label)
}

impl Workload {
    /// Llama-3-shaped dense models: 8B, 70B, 405B parameters, bf16, 8k sequences.
    pub fn llama(billions: u32) -> Option<Workload> {
        let (params, layers, hidden, tp, pp) = match billions {
            8 => (8.0e9, 32, 4096, 1, 1),
            70 => (70.6e9, 80, 8192, 8, 1),
            405 => (405.8e9, 126, 16384, 8, 16),
            _ => return None,
        };
        Some(Workload::shaped(
            format!("llama-{billions}b"),
            (params, layers, hidden),
            (tp, pp),
            None,
        ))
    }

    /// A model from `MODELS` by id, with its usual parallel layout; bf16, 8k sequences,
    /// 512 sequences per step.
    pub fn named(id: &str) -> Option<Workload> {
        // Expert parameters: MoE layers × experts × three projections of hidden × expert width.
        let (params, layers, hidden, tp, pp, moe) = match id {
            "llama-8b" => return Workload::llama(8),
            "llama-70b" => return Workload::llama(70),
            "llama-405b" => return Workload::llama(405),
            "mixtral-8x7b" => (
                46.7e9,
                32,
                4096,
                1,
                1,
                Moe {
                    experts: 8,
                    top_k: 2,
                    layers: 32,
                    expert_params: 32.0 * 8.0 * 3.0 * 4096.0 * 14336.0,
                    ep: None,
                },
            ),
            // 3 dense layers then 58 with 256 routed experts (top 8); its shared expert counts
            // with the dense parameters. Trained without tensor parallelism, 16 stages, EP 64.
            "deepseek-v3" => (
                671.0e9,
                61,
                7168,
                1,
                16,
                Moe {
                    experts: 256,
                    top_k: 8,
                    layers: 58,
                    expert_params: 58.0 * 256.0 * 3.0 * 7168.0 * 2048.0,
                    ep: Some(64),
                },
            ),
            _ => return None,
        };
        Some(Workload::shaped(
            id.to_string(),
            (params, layers, hidden),
            (tp, pp),
            Some(moe),
        ))
    }

    /// A training job of the given shape (parameters, layers, hidden width) and parallel
    /// layout (TP, PP): bf16, micro-batches of one 8k sequence, 512 sequences per step.
    fn shaped(
        name: String,
        (params, layers, hidden): (f64, u32, u32),
        (tp, pp): (u32, u32),
        moe: Option<Moe>,
    ) -> Workload {
        Workload {
            name,
            params,
            layers,
            hidden,
            seq_len: 8192,
            micro_batch: 1,
            global_batch: 512,
            precision: Precision::Bf16,
            tp,
            pp,
            dp: None,
            moe,
            serving: false,
            serving_batch: None,
            efficiency: None,
            weights: None,
            memory_share: None,
            recompute: None,
            zero: None,
            trained_params: None,
            frozen_bytes: None,
            finetune: Finetune::Full,
        }
    }

    /// Bytes a weight takes: quantized weights when serving them, else the precision's.
    pub fn bytes_per_weight(&self) -> f64 {
        match self.weights {
            Some(q) if self.serving => q.bytes_per_weight(),
            _ => self.precision.bytes(),
        }
    }

    /// Bytes of the model's weights.
    pub fn weight_bytes(&self) -> f64 {
        self.params * self.bytes_per_weight()
    }
}

/// How the parallel dimensions landed on the GPUs.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Mapping {
    pub tp: u32,
    pub pp: u32,
    pub dp: u32,
    /// Expert-parallel size (a divisor of `dp`); 1 for dense models.
    pub ep: u32,
    pub gpus_used: u32,
    /// Largest scale-up domain (GPUs joined by NVLink or PCIe inside a node or rack).
    pub scale_up_gpus: u32,
    pub tp_crosses_domains: bool,
}

impl Mapping {
    /// "TP 8 × PP 16 × DP 8", with the expert-parallel size where experts are split.
    pub fn layout(&self) -> String {
        let ep = if self.ep > 1 {
            format!(" (EP {})", self.ep)
        } else {
            String::new()
        };
        format!("TP {} × PP {} × DP {}{ep}", self.tp, self.pp, self.dp)
    }
}

/// Which parallel dimension a component's traffic belongs to.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum CommKind {
    DataParallel,
    ExpertDataParallel,
    TensorParallel,
    Pipeline,
    ExpertAllToAll,
    /// ZeRO-3's gathers of the sharded weights before each layer's forward and backward pass.
    WeightGather,
}

#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct CommComponent {
    pub name: String,
    pub kind: CommKind,
    pub op: super::Op,
    pub bytes_per_call: f64,
    pub calls_per_step: f64,
    pub algorithm: Algorithm,
    pub time_us_per_call: f64,
    pub time_us_per_step: f64,
    /// The same traffic on a fabric that never queues beyond the first switch.
    pub ideal_us_per_step: f64,
    /// Its busiest resources, busiest first.
    pub bottleneck: Vec<super::LinkLoad>,
}

#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct WorkloadResult {
    pub mapping: Mapping,
    /// The step is one decode step of serving replicas, not a training step.
    pub serving: bool,
    pub components: Vec<CommComponent>,
    pub total_us: f64,
    pub ideal_total_us: f64,
    pub notes: Vec<String>,
}

impl WorkloadResult {
    /// The step with the exchanges inside each layer's forward pass (tensor-parallel
    /// all-reduces, expert dispatch and combine) made `factor` times as often, as a
    /// recomputation that runs the forward again does; `why` joins the notes.
    pub fn with_layer_exchanges_scaled(mut self, factor: f64, why: String) -> Self {
        let mut scaled = false;
        for c in &mut self.components {
            if matches!(c.kind, CommKind::TensorParallel | CommKind::ExpertAllToAll) {
                c.calls_per_step *= factor;
                c.time_us_per_step *= factor;
                c.ideal_us_per_step *= factor;
                scaled = true;
            }
        }
        if scaled {
            self.total_us = self
                .components
                .iter()
                .fold(0.0, |t, c| t + c.time_us_per_step);
            self.ideal_total_us = self
                .components
                .iter()
                .fold(0.0, |t, c| t + c.ideal_us_per_step);
            self.notes.push(why);
        }
        self
    }
}

/// Communication time of one step of `w` on the design: a training step, or for a serving
/// workload one decode step.
pub fn workload_step_comm(
    design: &Design,
    catalog: &Catalog,
    w: &Workload,
    routing: Routing,
) -> Result<WorkloadResult, CollectiveError> {
    workload_step_comm_in(design, catalog, w, routing, &Workspace::default())
}

/// `workload_step_comm`, filling the memory `workspace` kept from earlier evaluations.
pub fn workload_step_comm_in(
    design: &Design,
    catalog: &Catalog,
    w: &Workload,
    routing: Routing,
    workspace: &Workspace,
) -> Result<WorkloadResult, CollectiveError> {
    CommFabrics::build(design, catalog, workspace)?.step_comm(design, w, routing)
}

/// The design's fabric and its ideal counterpart (the same GPUs, NICs and cables to the first
/// switch, but a fabric beyond them that never queues: switch-to-switch links without limit,
/// adaptive routing), built once for any number of workloads (the layout search times
/// hundreds on one design), in the caller's workspace.
pub struct CommFabrics<'w> {
    fab: fabric::Fabric,
    ideal_design: Design,
    ideal_fab: fabric::Fabric,
    /// Plans on `fab` for the unreported timings of `step_comm_real_only`.
    plans: PlanCache,
    /// Where the fabrics' lists and the plans' load buffers come from and go back to.
    workspace: &'w Workspace,
}

impl Drop for CommFabrics<'_> {
    /// The fabrics' lists serve the next build in the workspace.
    fn drop(&mut self) {
        self.workspace.keep_fabric(&mut self.fab);
        self.workspace.keep_fabric(&mut self.ideal_fab);
    }
}

impl<'w> CommFabrics<'w> {
    pub fn build(
        design: &Design,
        catalog: &Catalog,
        workspace: &'w Workspace,
    ) -> Result<Self, CollectiveError> {
        let fab = workspace.build_fabric(design, catalog)?;
        let mut ideal_design = design.clone();
        for l in ideal_design.links.iter_mut() {
            let switch_end = |id| {
                matches!(
                    design.device(id).map(|d| &d.kind),
                    Some(crate::model::DeviceKind::Switch(_))
                )
            };
            if switch_end(l.a.device)
                && switch_end(l.b.device)
                && l.state != crate::model::LinkState::Failed
            {
                l.rate_gbit_s = crate::model::Bandwidth::from_gbit_s(1e9);
                l.lanes = 1;
                l.state = crate::model::LinkState::Up;
            }
        }
        let ideal_fab = workspace.build_fabric(&ideal_design, catalog)?;
        Ok(CommFabrics {
            fab,
            ideal_design,
            ideal_fab,
            plans: PlanCache::default(),
            workspace,
        })
    }

    /// GPUs in the fabric.
    pub fn gpus(&self) -> usize {
        self.fab.gpus.len()
    }

    /// Communication time of one training (or decode) step of `w`; `design` is the one the
    /// fabrics were built from.
    pub fn step_comm(
        &self,
        design: &Design,
        w: &Workload,
        routing: Routing,
    ) -> Result<WorkloadResult, CollectiveError> {
        let ideal = Some((&self.ideal_fab, &self.ideal_design));
        step_comm(&self.fab, design, ideal, w, routing, None, self.workspace)
    }

    /// `step_comm` without the ideal network (its figures are the real ones) and without
    /// the bottleneck lists: for ranking many workloads.
    pub fn step_comm_real_only(
        &self,
        design: &Design,
        w: &Workload,
        routing: Routing,
    ) -> Result<WorkloadResult, CollectiveError> {
        step_comm(
            &self.fab,
            design,
            None,
            w,
            routing,
            Some(&self.plans),
            self.workspace,
        )
    }
}

fn step_comm(
    fab: &fabric::Fabric,
    design: &Design,
    ideal: Option<(&fabric::Fabric, &Design)>,
    w: &Workload,
    routing: Routing,
    plans: Option<&PlanCache>,
    workspace: &Workspace,
) -> Result<WorkloadResult, CollectiveError> {
    let total = fab.gpus.len() as u32;
    if total == 0 {
        return Err(CollectiveError::NoGpus);
    }
    let tp = w.tp.max(1);
    let pp = w.pp.max(1);
    // In u64: sizes come from the user and their product can pass u32.
    let replica = u64::from(tp) * u64::from(pp);
    // A fixed expert-parallel size makes the automatic data-parallel size a multiple of it
    // (at least one run of it: fewer GPUs are refused with the count it needs).
    let ep_fixed = w.moe.and_then(|m| m.ep).map_or(1, |e| u64::from(e.max(1)));
    let dp = match w.dp {
        Some(dp) => u64::from(dp).max(1),
        None => (u64::from(total) / replica / ep_fixed * ep_fixed).max(ep_fixed),
    };
    let used = replica.saturating_mul(dp);
    if used > u64::from(total) {
        return Err(CollectiveError::NotEnoughGpus {
            available: u64::from(total),
            requested: used,
        });
    }
    // All three fit u32 now: their product is at most the GPU count.
    let dp = dp as u32;
    let used = used as u32;
    let scale_up = fab.domains.iter().map(|d| d.gpus).max().unwrap_or(1);
    // Megatron's rank order (tp-ep-dp-pp): tensor ranks neighbours, then the data-parallel
    // replicas (expert-parallel runs of them first), pipeline stages outermost.
    let rank = |t: u32, p: u32, d: u32| t + d * tp + p * tp * dp;
    let tp_groups: Vec<Vec<u32>> = (0..dp)
        .flat_map(|d| (0..pp).map(move |p| (d, p)))
        .map(|(d, p)| (0..tp).map(|t| rank(t, p, d)).collect())
        .collect();
    let dp_groups: Vec<Vec<u32>> = (0..pp)
        .flat_map(|p| (0..tp).map(move |t| (t, p)))
        .map(|(t, p)| (0..dp).map(|d| rank(t, p, d)).collect())
        .collect();
    let pp_pairs: Vec<Vec<u32>> = (0..dp)
        .flat_map(|d| (0..tp).map(move |t| (t, d)))
        .flat_map(|(t, d)| {
            (0..pp.saturating_sub(1)).map(move |p| vec![rank(t, p, d), rank(t, p + 1, d)])
        })
        .collect();
    let tp_crosses = tp_groups.iter().any(|g| {
        g.iter()
            .any(|&r| fab.domain_of_gpu(r) != fab.domain_of_gpu(g[0]))
    });

    // Expert parallelism splits each data-parallel set of replicas into runs of `ep`
    // consecutive ranks (neighbours first, as Megatron places them), which share out the
    // experts and exchange tokens; the replicas of one expert form the expert-data-parallel set.
    let ep = match w.moe {
        None => 1,
        Some(Moe { ep: Some(ep), .. }) => {
            let ep = ep.max(1);
            if !dp.is_multiple_of(ep) {
                return Err(CollectiveError::ExpertParallelism { ep, dp });
            }
            ep
        }
        Some(Moe { experts, .. }) => (1..=experts.clamp(1, dp))
            .rev()
            .find(|e| dp.is_multiple_of(*e))
            .unwrap_or(1),
    };
    let ep_groups: Vec<Vec<u32>> = (0..pp)
        .flat_map(|p| (0..tp).map(move |t| (t, p)))
        .flat_map(|(t, p)| (0..dp / ep).map(move |e| (t, p, e)))
        .map(|(t, p, e)| (0..ep).map(|k| rank(t, p, e * ep + k)).collect())
        .collect();
    let expert_dp_groups: Vec<Vec<u32>> = (0..pp)
        .flat_map(|p| (0..tp).map(move |t| (t, p)))
        .flat_map(|(t, p)| (0..ep).map(move |k| (t, p, k)))
        .map(|(t, p, k)| (0..dp / ep).map(|e| rank(t, p, e * ep + k)).collect())
        .collect();

    let act = w.precision.exchange_bytes();
    let moe_layers = f64::from(w.moe.map_or(0, |m| m.layers.min(w.layers)));
    // The activation traffic: bytes of one exchange, and how many times per step the tensor
    // all-reduce, the stage hand-off and the expert exchange happen.
    let serving_batch = w.serving_batch.unwrap_or(SERVING_SEQUENCES).max(1);
    let microbatches =
        (f64::from(w.global_batch) / (f64::from(dp) * f64::from(w.micro_batch.max(1)))).max(1.0);
    let (act_bytes, tp_calls, pp_calls, moe_calls) = if w.serving {
        // One decode step: each replica makes one token for each of its sequences, passing
        // every layer in turn (so a token meets all of the model's all-reduces and stage
        // boundaries one after another): two all-reduces per layer, dispatch and combine per
        // MoE layer. Replicas exchange nothing.
        (
            f64::from(serving_batch) * f64::from(w.hidden) * act,
            2.0 * f64::from(w.layers),
            f64::from(pp - 1),
            2.0 * moe_layers,
        )
    } else {
        // Per micro-batch: Megatron's two all-reduces forward and two backward per layer of a
        // stage; each stage boundary passes activations forward and their gradients back in
        // one exchange each way, as a send-recv within each pair does (1F1B sends the two
        // together); per MoE layer dispatch and combine forward, and both again backward.
        (
            f64::from(w.micro_batch) * f64::from(w.seq_len) * f64::from(w.hidden) * act,
            4.0 * (f64::from(w.layers) / f64::from(pp)) * microbatches,
            microbatches,
            4.0 * moe_layers / f64::from(pp) * microbatches,
        )
    };
    let expert_params = w.moe.map_or(0.0, |m| m.expert_params.clamp(0.0, w.params));
    // (name, operation, concurrent groups, bytes per call, calls per step)
    type Part<'g> = (String, CommKind, Op, &'g [Vec<u32>], f64, f64);
    let mut parts: Vec<Part> = Vec::new();
    let zero3 = !w.serving && w.zero == Some(3) && dp > 1;
    if !w.serving && dp > 1 {
        let trained = w.trained_params.unwrap_or(w.params - expert_params);
        let grad_bytes = trained / f64::from(tp * pp) * w.precision.exchange_bytes();
        // ZeRO-3 keeps 1/DP of the gradients: a reduce-scatter leaves each rank its share,
        // and the weights it updates are gathered again when next used.
        let (name, op) = if zero3 {
            ("data-parallel gradient reduce-scatter", Op::ReduceScatter)
        } else {
            ("data-parallel gradient all-reduce", Op::AllReduce)
        };
        parts.push((
            name.into(),
            CommKind::DataParallel,
            op,
            &dp_groups,
            grad_bytes,
            1.0,
        ));
    }
    if !w.serving && expert_params > 0.0 && dp / ep > 1 {
        // Each rank holds 1/EP of the experts; their replicas reduce among themselves.
        let grad_bytes = expert_params / f64::from(tp * pp * ep) * w.precision.exchange_bytes();
        parts.push((
            "expert gradient all-reduce".into(),
            CommKind::ExpertDataParallel,
            Op::AllReduce,
            &expert_dp_groups,
            grad_bytes,
            1.0,
        ));
    }
    if zero3 {
        // ZeRO-3 (FSDP's full shard) holds 1/DP of the weights: each micro-batch gathers
        // every layer's whole from the replicas before its forward pass and again before its
        // backward pass, freeing it after each (FSDP's default `reshard_after_forward`).
        let dense_bytes = w.frozen_bytes.map_or(
            (w.params - expert_params) * w.precision.exchange_bytes(),
            |frozen| frozen + w.trained_params.unwrap_or(0.0) * w.precision.exchange_bytes(),
        );
        parts.push((
            "ZeRO-3 weight all-gathers".into(),
            CommKind::WeightGather,
            Op::AllGather,
            &dp_groups,
            dense_bytes / f64::from(tp * pp),
            2.0 * microbatches,
        ));
        if expert_params > 0.0 && dp / ep > 1 {
            parts.push((
                "ZeRO-3 expert weight all-gathers".into(),
                CommKind::WeightGather,
                Op::AllGather,
                &expert_dp_groups,
                expert_params / f64::from(tp * pp * ep) * w.precision.exchange_bytes(),
                2.0 * microbatches,
            ));
        }
    }
    if tp > 1 {
        parts.push((
            "tensor-parallel all-reduces".into(),
            CommKind::TensorParallel,
            Op::AllReduce,
            &tp_groups,
            act_bytes,
            tp_calls,
        ));
    }
    if pp > 1 {
        // With tensor parallelism every rank sends only its 1/TP share (Megatron's sequence
        // parallelism, or its scatter-gather of pipeline tensors): the whole tensor crosses
        // once, not TP times.
        parts.push((
            "pipeline activations".into(),
            CommKind::Pipeline,
            Op::SendRecv,
            &pp_pairs,
            act_bytes / f64::from(tp),
            pp_calls,
        ));
    }
    if let Some(moe) = w.moe
        && ep > 1
    {
        // Each rank sends its tokens (its 1/TP share) once per chosen expert.
        parts.push((
            "MoE all-to-all".into(),
            CommKind::ExpertAllToAll,
            Op::AllToAll,
            &ep_groups,
            act_bytes / f64::from(tp) * f64::from(moe.top_k.max(1)),
            moe_calls,
        ));
    }
    let specs: Vec<GroupSpec> = parts
        .iter()
        .map(|(_, _, op, groups, bytes, _)| GroupSpec {
            groups,
            op: *op,
            bytes: *bytes,
        })
        .collect();
    let report = ideal.is_some();
    let times = evaluate_groups_with(fab, design, &specs, routing, report, plans, workspace)?;
    let ideal_times = match ideal {
        Some((ideal_fab, ideal_design)) => evaluate_groups(
            ideal_fab,
            ideal_design,
            &specs,
            Routing::Adaptive,
            false,
            workspace,
        )?,
        None => times.clone(),
    };

    let mut components = Vec::new();
    for (((name, kind, op, _, bytes, calls), real), ideal) in
        parts.iter().zip(times).zip(ideal_times)
    {
        let t = real.time_us;
        components.push(CommComponent {
            name: name.clone(),
            kind: *kind,
            op: *op,
            bytes_per_call: *bytes,
            calls_per_step: *calls,
            algorithm: real.algorithm,
            time_us_per_call: t,
            time_us_per_step: t * calls,
            ideal_us_per_step: ideal.time_us.min(t) * calls,
            bottleneck: real.bottleneck,
        });
    }
    let mut notes = Vec::new();
    if tp_crosses {
        notes.push(format!(
            "tensor parallelism of {tp} does not fit a scale-up domain of {}: its all-reduces \
             cross the network",
            crate::model::units::count_of(scale_up as usize, "GPU", "GPUs")
        ));
    }
    if used < total {
        notes.push(format!("{used} of {total} GPUs used"));
    }
    if w.serving {
        notes.push(format!(
            "serving: one decode step of {} per replica; replicas exchange nothing",
            crate::model::units::count_of(serving_batch as usize, "sequence", "sequences")
        ));
    }
    Ok(WorkloadResult {
        serving: w.serving,
        mapping: Mapping {
            tp,
            pp,
            dp,
            ep,
            gpus_used: used,
            scale_up_gpus: scale_up,
            tp_crosses_domains: tp_crosses,
        },
        // Folded from +0.0: an empty float sum is -0.0, which prints as "-0.0 µs".
        total_us: components.iter().fold(0.0, |t, c| t + c.time_us_per_step),
        ideal_total_us: components.iter().fold(0.0, |t, c| t + c.ideal_us_per_step),
        components,
        notes,
    })
}

#[cfg(test)]
mod tests {
    use super::fitted_layout;

    #[test]
    fn a_usual_layout_too_big_for_the_design_is_narrowed_to_it() {
        // TP 8 on 4 Macs: TP 4. On 6 GPUs: TP 4 (a power of two), PP 1. TP 8 × PP 4 on 16
        // GPUs: TP 8 kept, PP 2. A layout that fits, or no GPUs at all, stays as it is.
        assert_eq!(fitted_layout(8, 1, 4), Some((4, 1)));
        assert_eq!(fitted_layout(8, 1, 6), Some((4, 1)));
        assert_eq!(fitted_layout(8, 4, 16), Some((8, 2)));
        assert_eq!(fitted_layout(8, 1, 1), Some((1, 1)));
        assert_eq!(fitted_layout(2, 1, 4), None);
        assert_eq!(fitted_layout(8, 1, 0), None);
    }
}
