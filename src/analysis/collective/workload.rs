//! Training workloads on top of the collective model: tensor, pipeline and data parallelism
//! (and MoE expert exchange) mapped onto the drawn GPUs, with the communication time of one
//! training step next to what an ideal network would need.

use super::evaluate::{GroupSpec, evaluate_groups};
use super::fabric;
use super::{Algorithm, CollectiveError, Op, Routing};
use crate::model::{Catalog, Design};
use serde::{Deserialize, Serialize};

#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Precision {
    Fp32,
    Bf16,
    Fp8,
}

impl Precision {
    pub fn label(self) -> &'static str {
        match self {
            Precision::Fp32 => "fp32",
            Precision::Bf16 => "bf16",
            Precision::Fp8 => "fp8",
        }
    }

    pub fn bytes(self) -> f64 {
        match self {
            Precision::Fp32 => 4.0,
            Precision::Bf16 => 2.0,
            Precision::Fp8 => 1.0,
        }
    }
}

/// Mixture-of-experts layers: tokens go to `top_k` of `experts` experts by all-to-all.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub struct Moe {
    pub experts: u32,
    pub top_k: u32,
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
    /// Inference replicas rather than training (for the advice).
    #[serde(default)]
    pub serving: bool,
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
        Some(Workload {
            name: format!("llama-{billions}b"),
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
            moe: None,
            serving: false,
        })
    }

    /// Bytes of the model's weights.
    pub fn weight_bytes(&self) -> f64 {
        self.params * self.precision.bytes()
    }
}

/// How the parallel dimensions landed on the GPUs.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Mapping {
    pub tp: u32,
    pub pp: u32,
    pub dp: u32,
    pub gpus_used: u32,
    /// Largest scale-up domain (GPUs joined by NVLink or PCIe inside a node or rack).
    pub scale_up_gpus: u32,
    pub tp_crosses_domains: bool,
}

#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct CommComponent {
    pub name: String,
    pub op: super::Op,
    pub bytes_per_call: f64,
    pub calls_per_step: f64,
    pub algorithm: Algorithm,
    pub time_us_per_call: f64,
    pub time_us_per_step: f64,
    /// The same traffic on a fabric that never queues beyond the first switch.
    pub ideal_us_per_step: f64,
}

#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct WorkloadResult {
    pub mapping: Mapping,
    pub components: Vec<CommComponent>,
    pub total_us: f64,
    pub ideal_total_us: f64,
    pub notes: Vec<String>,
}

/// Communication time of one training step of `w` on the design.
pub fn training_step_comm(
    design: &Design,
    catalog: &Catalog,
    w: &Workload,
    routing: Routing,
) -> Result<WorkloadResult, CollectiveError> {
    let fab = fabric::build(design, catalog)?;
    let total = fab.gpus.len() as u32;
    if total == 0 {
        return Err(CollectiveError::NoGpus);
    }
    let tp = w.tp.max(1);
    let pp = w.pp.max(1);
    // In u64: sizes come from the user and their product can pass u32.
    let replica = u64::from(tp) * u64::from(pp);
    let dp = w.dp.map_or(u64::from(total) / replica, u64::from).max(1);
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
    let rank = |t: u32, p: u32, d: u32| t + p * tp + d * tp * pp;
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

    let act = w.precision.bytes();
    let token_bytes = f64::from(w.micro_batch) * f64::from(w.seq_len) * f64::from(w.hidden) * act;
    let microbatches =
        (f64::from(w.global_batch) / (f64::from(dp) * f64::from(w.micro_batch.max(1)))).max(1.0);
    let layers_per_stage = f64::from(w.layers) / f64::from(pp);
    // (name, operation, concurrent groups, bytes per call, calls per step)
    type Part<'g> = (String, Op, &'g [Vec<u32>], f64, f64);
    let mut parts: Vec<Part> = Vec::new();
    if dp > 1 {
        let grad_bytes = w.params / f64::from(tp * pp) * w.precision.bytes();
        parts.push((
            "data-parallel gradient all-reduce".into(),
            Op::AllReduce,
            &dp_groups,
            grad_bytes,
            1.0,
        ));
    }
    if tp > 1 {
        // Megatron: two all-reduces forward and two backward per layer.
        parts.push((
            "tensor-parallel all-reduces".into(),
            Op::AllReduce,
            &tp_groups,
            token_bytes,
            4.0 * layers_per_stage * microbatches,
        ));
    }
    if pp > 1 {
        parts.push((
            "pipeline activations".into(),
            Op::SendRecv,
            &pp_pairs,
            token_bytes,
            2.0 * microbatches,
        ));
    }
    if let Some(moe) = w.moe
        && dp > 1
    {
        let bytes = token_bytes * f64::from(moe.top_k.max(1));
        parts.push((
            "MoE all-to-all".into(),
            Op::AllToAll,
            &dp_groups,
            bytes,
            4.0 * layers_per_stage * microbatches,
        ));
    }
    let specs: Vec<GroupSpec> = parts
        .iter()
        .map(|(_, op, groups, bytes, _)| GroupSpec {
            groups,
            op: *op,
            bytes: *bytes,
        })
        .collect();
    let times = evaluate_groups(design, catalog, &specs, routing)?;
    // The ideal network: the same GPUs, NICs and cables to the first switch, but a fabric
    // beyond them that never queues (switch-to-switch links without limit, adaptive routing).
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
    let ideal_times = evaluate_groups(&ideal_design, catalog, &specs, Routing::Adaptive)?;

    let mut components = Vec::new();
    for (((name, op, _, bytes, calls), (t, algorithm)), (ideal, _)) in
        parts.iter().zip(times).zip(ideal_times)
    {
        components.push(CommComponent {
            name: name.clone(),
            op: *op,
            bytes_per_call: *bytes,
            calls_per_step: *calls,
            algorithm,
            time_us_per_call: t,
            time_us_per_step: t * calls,
            ideal_us_per_step: ideal.min(t) * calls,
        });
    }
    let mut notes = Vec::new();
    if tp_crosses {
        notes.push(format!("tensor parallelism of {tp} does not fit a scale-up domain of {scale_up} GPUs: its all-reduces cross the network"));
    }
    if used < total {
        notes.push(format!("{used} of {total} GPUs used"));
    }
    Ok(WorkloadResult {
        mapping: Mapping {
            tp,
            pp,
            dp,
            gpus_used: used,
            scale_up_gpus: scale_up,
            tp_crosses_domains: tp_crosses,
        },
        total_us: components.iter().map(|c| c.time_us_per_step).sum(),
        ideal_total_us: components.iter().map(|c| c.ideal_us_per_step).sum(),
        components,
        notes,
    })
}
