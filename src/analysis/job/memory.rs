//! Memory one GPU needs for a training layout: weights, gradients and optimizer states
//! (sharded by ZeRO / FSDP stage), and the activations the pipeline schedule keeps.
//!
//! Sources: mixed-precision Adam keeps 16-bit weights and gradients (2 + 2 bytes per
//! parameter) and 12 bytes of FP32 master weights, momentum and variance (Rajbhandari et al.
//! 2020, "ZeRO", §3: K = 12); stage 1 shards the optimizer states over the data-parallel
//! ranks, stage 2 the gradients too, stage 3 the weights too. Activations per layer and
//! micro-batch with tensor and sequence parallelism of t (Korthikanti et al. 2022, arXiv
//! 2205.05198, Table 2, 16-bit): s·b·h·(34 + 5·a·s/h)/t bytes keeping everything,
//! s·b·h·34/t with selective recomputation, 2·s·b·h/t (the layer's input) with full
//! recomputation; under 1F1B the first stage holds the activations of as many micro-batches
//! as there are stages (its §4.3: L layers' worth in all).
//!
//! With adapters (LoRA, QLoRA) only the adapters have gradients and optimizer states, kept
//! as mixed-precision Adam keeps any trained weight; the frozen weights are held at their
//! own size and sharded as weights are. The activations are the same: every adapted matrix's
//! input is kept for its adapter's gradient, as full training keeps it for the matrix's.

use super::finetune::TrainedWeights;
use super::model::{ModelSpec, Recompute};
use crate::model::job_spec::Finetune;
use serde::Serialize;

/// Bytes per parameter of 16-bit weights, 16-bit gradients and FP32 Adam states.
const WEIGHT_BYTES: f64 = 2.0;
const GRAD_BYTES: f64 = 2.0;
const OPTIMIZER_BYTES: f64 = 12.0;

/// What a training layout puts on one GPU, bytes.
#[derive(Debug, Clone, Copy, PartialEq, Serialize)]
pub struct MemoryUse {
    pub weights: f64,
    pub gradients: f64,
    pub optimizer: f64,
    pub activations: f64,
}

impl MemoryUse {
    pub fn total(&self) -> f64 {
        self.weights + self.gradients + self.optimizer + self.activations
    }
}

/// The parallel layout memory depends on.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct MemoryLayout {
    pub tp: u32,
    pub pp: u32,
    pub dp: u32,
    pub ep: u32,
    pub micro_batch: u32,
    /// Micro-batches per step in each pipeline.
    pub micro_batches: u32,
    pub zero: u8,
    pub recompute: Recompute,
    /// Every weight trains, or adapters on a frozen dense model.
    pub finetune: Finetune,
}

/// Memory on the busiest GPU (a first pipeline stage) for `model` trained in `layout`.
pub fn training_memory(model: &ModelSpec, layout: &MemoryLayout) -> MemoryUse {
    let (tp, pp, dp, ep) = (
        f64::from(layout.tp.max(1)),
        f64::from(layout.pp.max(1)),
        f64::from(layout.dp.max(1)),
        f64::from(layout.ep.max(1)),
    );
    let experts = model.all_expert_params();
    let dense = model.params() - experts;
    // Expert weights are split over the expert-parallel ranks as well; their data-parallel
    // replicas are dp / ep.
    let dense_per_gpu = dense / (tp * pp);
    let expert_per_gpu = experts / (tp * pp * ep);
    let expert_dp = (dp / ep).max(1.0);
    let sharded = |bytes: f64, stage: u8, level: u8| {
        if stage >= level {
            bytes * dense_per_gpu / dp + bytes * expert_per_gpu / expert_dp
        } else {
            bytes * (dense_per_gpu + expert_per_gpu)
        }
    };
    let (s, b, h) = (
        f64::from(model.seq_len),
        f64::from(layout.micro_batch.max(1)),
        f64::from(model.hidden),
    );
    let a = f64::from(model.heads);
    let per_layer = match layout.recompute {
        Recompute::None => s * b * h * (34.0 + 5.0 * a * s / h) / tp,
        Recompute::Selective => s * b * h * 34.0 / tp,
        Recompute::Full => 2.0 * s * b * h / tp,
    };
    // The longest stage, when the layers do not split evenly.
    let layers_per_stage = f64::from(model.layers.div_ceil(layout.pp.max(1)));
    let in_flight = f64::from(layout.micro_batches.max(1)).min(pp);
    let mut activations = per_layer * layers_per_stage * in_flight;
    if layout.recompute == Recompute::Full {
        // The layer being recomputed holds its full activations for its backward pass.
        activations += s * b * h * (34.0 + 5.0 * a * s / h) / tp;
    }
    if !layout.finetune.is_full() {
        let trained = TrainedWeights::of(model, layout.finetune);
        let (frozen, adapters) = (
            trained.frozen_bytes / (tp * pp),
            trained.trained_params / (tp * pp),
        );
        let shard = |bytes: f64, level: u8| {
            if layout.zero >= level {
                bytes / dp
            } else {
                bytes
            }
        };
        return MemoryUse {
            weights: shard(frozen + WEIGHT_BYTES * adapters, 3),
            gradients: shard(GRAD_BYTES * adapters, 2),
            optimizer: shard(OPTIMIZER_BYTES * adapters, 1),
            activations,
        };
    }
    MemoryUse {
        weights: sharded(WEIGHT_BYTES, layout.zero, 3),
        gradients: sharded(GRAD_BYTES, layout.zero, 2),
        optimizer: sharded(OPTIMIZER_BYTES, layout.zero, 1),
        activations,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::analysis::job::model::gpt;

    #[test]
    fn zero_stages_by_hand() {
        // GPT 1.7B shape (l=24, h=2304): 12·l·h² + V·h = 1,528,823,808 + 117,964,800
        // = 1,646,788,608 parameters. TP 1, PP 1, DP 32.
        let m = gpt("gpt-1.7b", 24, 2304, 2048);
        let p = 1_646_788_608.0;
        assert_eq!(m.params(), p);
        let layout = |zero| MemoryLayout {
            tp: 1,
            pp: 1,
            dp: 32,
            ep: 1,
            micro_batch: 1,
            micro_batches: 16,
            zero,
            recompute: Recompute::Full,
            finetune: Finetune::Full,
        };
        let z1 = training_memory(&m, &layout(1));
        assert_eq!(z1.weights, 2.0 * p);
        assert_eq!(z1.gradients, 2.0 * p);
        assert_eq!(z1.optimizer, 12.0 * p / 32.0);
        let z3 = training_memory(&m, &layout(3));
        assert_eq!(z3.weights + z3.gradients + z3.optimizer, 16.0 * p / 32.0);
        // Full recomputation: 24 layer inputs of 2·s·h bytes, plus one layer's full set
        // s·h·(34 + 5·a·s/h) with a = 18 heads: 2048·2304·(34 + 5·18·2048/2304).
        let inputs = 24.0 * 2.0 * 2048.0 * 2304.0;
        let working = 2048.0 * 2304.0 * (34.0 + 5.0 * 18.0 * 2048.0 / 2304.0);
        assert!((z1.activations - (inputs + working)).abs() < 1.0);
    }
}
