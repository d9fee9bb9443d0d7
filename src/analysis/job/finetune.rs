//! Low-rank adapters on a frozen model (LoRA, QLoRA): what they train, what stays frozen and
//! in how many bytes, and what they cost in FLOPs and memory traffic.
//!
//! Sources: Hu et al. 2021 (LoRA, arXiv 2106.09685, §4): each adapted d_in × d_out matrix
//! gains B·A of rank r, r·(d_in + d_out) trained parameters, and the frozen matrix needs no
//! gradient of its own. Dettmers et al. 2023 (QLoRA, arXiv 2305.14314): adapters on every
//! linear layer of the blocks (§4), frozen weights in 4-bit NormalFloat with one 8-bit
//! absmax per 64 weights and one 32-bit constant per 256 of those (§3, double quantization:
//! 4 + 8/64 + 32/(64·256) = 4.127 bits a weight). bitsandbytes' `Linear4bit`, which PEFT puts
//! in place of each block's `nn.Linear`, leaves the embeddings and the output projection in
//! 16-bit; its `MatMul4Bit` (bitsandbytes/autograd/_functions.py at 012c6606) widens the
//! whole weight to 16-bit with `dequantize_4bit` before the forward product and again for the
//! backward one.

use super::model::{ModelSpec, Recompute};
use crate::model::job_spec::Finetune;

/// Bytes of one frozen weight in NF4 with double quantization: 4.127 bits.
pub const NF4_BYTES: f64 = (4.0 + 8.0 / 64.0 + 32.0 / (64.0 * 256.0)) / 8.0;
/// Bytes of one 16-bit weight.
const WIDE_BYTES: f64 = 2.0;
/// Bytes `dequantize_4bit` moves per weight each time it widens one: the NF4 weight read, the
/// 16-bit copy written (the product then reads that copy as it would a 16-bit weight).
pub const DEQUANT_BYTES: f64 = NF4_BYTES + WIDE_BYTES;

/// Trained adapter parameters of rank `rank` on every linear layer of the blocks: per layer
/// Q and O (h → h), K and V (h → kv width), and each MLP matrix (h ↔ ffn).
pub fn adapter_params(model: &ModelSpec, rank: u32) -> f64 {
    let h = f64::from(model.hidden);
    let kv = model.kv_width();
    let ffn = f64::from(model.ffn);
    let mlp = model.dense_mlp_params() / (h * ffn);
    let per_layer = 2.0 * (h + h) + 2.0 * (h + kv) + mlp * (h + ffn);
    f64::from(rank) * f64::from(model.layers) * per_layer
}

/// Parameters of the blocks' linear layers: what QLoRA quantizes (all but the embeddings and
/// the output projection).
pub fn block_linear_params(model: &ModelSpec) -> f64 {
    f64::from(model.layers) * (model.attention_params_per_layer() + model.dense_mlp_params())
}

/// What a training job's weights take, bytes, all GPUs together: the frozen model and the
/// parameters that train (with gradients and optimizer states of their own).
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct TrainedWeights {
    /// Frozen weights' bytes (0 when everything trains).
    pub frozen_bytes: f64,
    /// Parameters that train.
    pub trained_params: f64,
}

impl TrainedWeights {
    pub fn of(model: &ModelSpec, finetune: Finetune) -> TrainedWeights {
        match finetune {
            Finetune::Full => TrainedWeights {
                frozen_bytes: 0.0,
                trained_params: model.params(),
            },
            Finetune::Lora { rank } => TrainedWeights {
                frozen_bytes: model.params() * WIDE_BYTES,
                trained_params: adapter_params(model, rank),
            },
            Finetune::Qlora { rank } => {
                let blocks = block_linear_params(model);
                TrainedWeights {
                    frozen_bytes: blocks * NF4_BYTES + (model.params() - blocks) * WIDE_BYTES,
                    trained_params: adapter_params(model, rank),
                }
            }
        }
    }
}

/// FLOPs per token the GPUs execute for a step with adapters, recomputation included. The
/// forward pass is the model's; the backward pass carries the gradient through every frozen
/// matrix (as many FLOPs as its forward product) but computes no frozen weight's gradient,
/// and attention's score products (no weights) cost twice their forward, as in full
/// training; the adapters cost 6 FLOPs per parameter per token, as any trained weight does.
pub fn adapter_flops_per_token(model: &ModelSpec, rank: u32, recompute: Recompute) -> f64 {
    let forward = model.forward_flops_per_token();
    let attention = model.attention_flops_per_token();
    let recomputed = model.hardware_flops_per_token(recompute) - model.model_flops_per_token();
    2.0 * forward + attention + 6.0 * adapter_params(model, rank) + recomputed
}

/// Passes over the frozen weights per micro-batch: forward and backward, and the forward
/// again under full recomputation (selective recomputation redoes attention only).
pub fn weight_passes(recompute: Recompute) -> f64 {
    match recompute {
        Recompute::Full => 3.0,
        Recompute::None | Recompute::Selective => 2.0,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::analysis::job::named_model;

    #[test]
    fn llama_3_8b_adapters_by_hand() {
        // Llama 3 8B: 32 layers, h 4096, 8 key/value heads of 128 (kv width 1024), ffn 14336,
        // gated. Per layer and rank: Q and O 2·8192, K and V 2·5120, gate, up and down
        // 3·18432: 81,920; × 8 × 32 = 20,971,520, as PEFT prints for r = 8 on all seven
        // projections ("trainable params: 20,971,520 || all params: 8,051,232,768").
        let m = named_model("llama-8b").expect("built in");
        assert_eq!(adapter_params(&m, 8), 20_971_520.0);
        // QLoRA: 6,979,321,856 block weights at 4.127 bits, 1,050,673,152 embedding and
        // output weights at 16 bits.
        let blocks = block_linear_params(&m);
        assert_eq!(blocks, 6_979_321_856.0);
        let q = TrainedWeights::of(&m, Finetune::Qlora { rank: 8 });
        let by_hand = 6_979_321_856.0 * 4.126_953_125 / 8.0 + 1_050_673_152.0 * 2.0;
        assert!((q.frozen_bytes - by_hand).abs() < 1.0, "{}", q.frozen_bytes);
        assert_eq!(q.trained_params, 20_971_520.0);
    }

    #[test]
    fn nf4_with_double_quantization_is_4_127_bits() {
        assert!((NF4_BYTES * 8.0 - 4.127).abs() < 0.001);
        // QLoRA §3: the constants' 0.5 bits a weight (32/64) fall to 0.127 (8/64 + 32/16384).
        assert!((NF4_BYTES * 8.0 - 4.0 - 0.127).abs() < 0.0005);
    }

    #[test]
    fn adapters_skip_the_frozen_weight_gradients() {
        // Without recomputation, full training runs 3 forwards; adapters run 2 forwards and
        // attention's scores once more, plus 6 FLOPs per adapter parameter.
        let m = named_model("llama-8b").expect("built in");
        let full = m.model_flops_per_token();
        let lora = adapter_flops_per_token(&m, 8, Recompute::None);
        let by_hand = 2.0 * full / 3.0 + m.attention_flops_per_token() + 6.0 * 20_971_520.0;
        assert!((lora - by_hand).abs() / by_hand < 1e-12);
        // Full recomputation adds one layer forward, as in full training.
        let recomputed = adapter_flops_per_token(&m, 8, Recompute::Full) - lora;
        let expected = m.hardware_flops_per_token(Recompute::Full) - full;
        assert!((recomputed - expected).abs() / expected < 1e-9);
    }
}
