//! A transformer's shape, and what follows from it alone: parameters and FLOPs per token.
//!
//! Counting follows Narayanan et al. 2021 ("Efficient Large-Scale Language Model Training on
//! GPU Clusters Using Megatron-LM", arXiv 2104.04473, §5.1): every matrix multiply of an
//! m×k by k×n costs 2mkn FLOPs; attention's two score products cost 2·s·h each per token
//! (counted over the whole sequence, as the paper does); the backward pass costs twice the
//! forward; full activation recomputation repeats the layers' forward pass once (not the
//! vocabulary projection). For a GPT (FFN 4h, two MLP matrices, full heads) this is the paper's
//! 96·B·s·l·h²·(1 + s/(6h) + V/(16·l·h)) with recomputation and 72·…·(1 + s/(6h) + V/(12·l·h))
//! without. Norms, biases and the router's softmax are left out (under 0.1 % of the FLOPs).

use serde::{Deserialize, Serialize};

/// A dense or mixture-of-experts decoder-only transformer. A model file is this in RON:
/// `(name: "gpt-1t", layers: 128, hidden: 25600, ffn: 102400, heads: 160, kv_heads: 160,
/// vocab: 51200, seq_len: 2048)`, with optional `experts` and `top_k`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ModelSpec {
    pub name: String,
    pub layers: u32,
    pub hidden: u32,
    /// Width of the MLP (of each expert, in expert layers, unless `expert_ffn` is given).
    pub ffn: u32,
    pub heads: u32,
    /// Key/value heads (grouped-query attention); absent = as many as `heads`.
    #[serde(default)]
    pub kv_heads: Option<u32>,
    pub vocab: u32,
    pub seq_len: u32,
    /// Experts per MoE layer; absent for a dense model.
    #[serde(default)]
    pub experts: Option<u32>,
    /// Experts each token is routed to.
    #[serde(default)]
    pub top_k: Option<u32>,
    /// Layers with experts (the rest are dense); absent = all of them.
    #[serde(default)]
    pub moe_layers: Option<u32>,
    /// MLP width of one expert; absent = `ffn`.
    #[serde(default)]
    pub expert_ffn: Option<u32>,
    /// A gated MLP (SwiGLU, as in Llama and Mixtral) has three matrices; GPT's has two.
    #[serde(default)]
    pub gated_mlp: bool,
    /// The output projection shares the input embedding's matrix (GPT, Megatron's default).
    #[serde(default)]
    pub tied_embeddings: bool,
}

/// Defined beside the workload, whose communication it changes.
pub use crate::analysis::collective::Recompute;

impl ModelSpec {
    pub fn kv_heads(&self) -> u32 {
        self.kv_heads.unwrap_or(self.heads).max(1)
    }

    pub fn head_dim(&self) -> f64 {
        f64::from(self.hidden) / f64::from(self.heads.max(1))
    }

    /// Width of the key (or value) projection: key/value heads × head size.
    pub fn kv_width(&self) -> f64 {
        f64::from(self.kv_heads()) * self.head_dim()
    }

    fn mlp_matrices(&self) -> f64 {
        if self.gated_mlp { 3.0 } else { 2.0 }
    }

    pub fn moe_layers(&self) -> u32 {
        match self.experts {
            Some(e) if e > 1 => self.moe_layers.unwrap_or(self.layers).min(self.layers),
            _ => 0,
        }
    }

    pub fn dense_layers(&self) -> u32 {
        self.layers - self.moe_layers()
    }

    /// Parameters of one layer's attention: Q and O (h × h), K and V (h × kv width).
    pub fn attention_params_per_layer(&self) -> f64 {
        let h = f64::from(self.hidden);
        2.0 * h * h + 2.0 * h * self.kv_width()
    }

    pub fn dense_mlp_params(&self) -> f64 {
        self.mlp_matrices() * f64::from(self.hidden) * f64::from(self.ffn)
    }

    /// Parameters of one expert.
    pub fn expert_params(&self) -> f64 {
        self.mlp_matrices()
            * f64::from(self.hidden)
            * f64::from(self.expert_ffn.unwrap_or(self.ffn))
    }

    fn embedding_params(&self) -> f64 {
        let one = f64::from(self.vocab) * f64::from(self.hidden);
        if self.tied_embeddings { one } else { 2.0 * one }
    }

    /// Parameters held in experts, all layers together.
    pub fn all_expert_params(&self) -> f64 {
        f64::from(self.moe_layers()) * f64::from(self.experts.unwrap_or(0)) * self.expert_params()
    }

    /// Every parameter (matrices; norms and biases are under 0.1 %).
    pub fn params(&self) -> f64 {
        let layers = f64::from(self.layers);
        let router = f64::from(self.moe_layers())
            * f64::from(self.hidden)
            * f64::from(self.experts.unwrap_or(0));
        layers * self.attention_params_per_layer()
            + f64::from(self.dense_layers()) * self.dense_mlp_params()
            + self.all_expert_params()
            + router
            + self.embedding_params()
    }

    /// Parameters one token's forward pass multiplies by in the layers (its `top_k` experts).
    fn active_layer_params(&self) -> f64 {
        let top_k = f64::from(self.top_k.unwrap_or(1).max(1));
        f64::from(self.layers) * self.attention_params_per_layer()
            + f64::from(self.dense_layers()) * self.dense_mlp_params()
            + f64::from(self.moe_layers()) * top_k * self.expert_params()
    }

    /// Forward FLOPs per token in the layers at sequence length `seq`: matrices, then
    /// attention's two score products (2·s·h each).
    fn layer_forward_flops(&self, seq: f64) -> f64 {
        2.0 * self.active_layer_params()
            + 4.0 * seq * f64::from(self.hidden) * f64::from(self.layers)
    }

    /// Forward FLOPs of one decoded token whose key/value cache holds `context` tokens: the
    /// active weights' matrices, attention over the cache, the vocabulary projection.
    pub fn decode_flops(&self, context: u32) -> f64 {
        self.layer_forward_flops(f64::from(context)) + self.logit_flops()
    }

    /// Forward FLOPs per token of the vocabulary projection.
    fn logit_flops(&self) -> f64 {
        2.0 * f64::from(self.hidden) * f64::from(self.vocab)
    }

    /// Attention's score FLOPs per token over all layers (what selective recomputation
    /// repeats).
    fn attention_score_flops(&self, seq: f64) -> f64 {
        4.0 * seq * f64::from(self.hidden) * f64::from(self.layers)
    }

    /// Forward FLOPs per token at the model's sequence length: the layers and the vocabulary
    /// projection.
    pub fn forward_flops_per_token(&self) -> f64 {
        self.layer_forward_flops(f64::from(self.seq_len)) + self.logit_flops()
    }

    /// Of the forward FLOPs per token, attention's score products (no weights take part).
    pub fn attention_flops_per_token(&self) -> f64 {
        self.attention_score_flops(f64::from(self.seq_len))
    }

    /// Training FLOPs per token the model needs (forward and backward, no recomputation):
    /// the numerator of MFU.
    pub fn model_flops_per_token(&self) -> f64 {
        let seq = f64::from(self.seq_len);
        3.0 * (self.layer_forward_flops(seq) + self.logit_flops())
    }

    /// Training FLOPs per token the GPUs execute, recomputation included: the numerator of
    /// HFU.
    pub fn hardware_flops_per_token(&self, recompute: Recompute) -> f64 {
        let seq = f64::from(self.seq_len);
        self.model_flops_per_token()
            + match recompute {
                Recompute::None => 0.0,
                Recompute::Selective => self.attention_score_flops(seq),
                Recompute::Full => self.layer_forward_flops(seq),
            }
    }

    /// Forward FLOPs of a prompt of `tokens` (prefill), attention over the prompt itself.
    pub fn prefill_flops(&self, tokens: u32) -> f64 {
        let t = f64::from(tokens);
        // Causal attention over a prompt: token i attends to i tokens, t/2 on average.
        t * (self.layer_forward_flops(t / 2.0) + self.logit_flops())
    }

    /// Bytes the element-wise kernels (norms, activations, dropout, softmax, residuals) move
    /// per token per layer in one pass, with 16-bit activations: the activations a layer
    /// keeps for its backward pass (Korthikanti et al. 2022, §4.1: s·b·h·(34 + 5·a·s/h)
    /// bytes per layer), each written once. Attention's score matrices (the 5·a·s/h part)
    /// are not materialised when they are recomputed (selective recomputation, and
    /// FlashAttention's fused kernel).
    pub fn elementwise_bytes_per_token_layer(&self, recompute: Recompute) -> f64 {
        let h = f64::from(self.hidden);
        let scores = 5.0 * f64::from(self.heads) * f64::from(self.seq_len) / h;
        match recompute {
            Recompute::Selective => 34.0 * h,
            Recompute::None | Recompute::Full => (34.0 + scores) * h,
        }
    }

    /// Passes over the element-wise activations per training step: forward writes them,
    /// backward reads them and writes their gradients, full recomputation writes them again.
    pub fn elementwise_passes(recompute: Recompute) -> f64 {
        match recompute {
            Recompute::Full => 4.0,
            Recompute::None | Recompute::Selective => 3.0,
        }
    }

    /// Bytes of the key/value cache per token of context, all layers.
    pub fn kv_bytes_per_token(&self, element_bytes: f64) -> f64 {
        2.0 * self.kv_width() * f64::from(self.layers) * element_bytes
    }

    /// Checks the shape makes sense; the reason when it does not.
    pub fn validate(&self) -> Result<(), String> {
        let positive = [
            ("layers", self.layers),
            ("hidden", self.hidden),
            ("ffn", self.ffn),
            ("heads", self.heads),
            ("vocab", self.vocab),
            ("seq_len", self.seq_len),
        ];
        if let Some((name, _)) = positive.iter().find(|(_, v)| *v == 0) {
            return Err(format!("{name} must be at least 1"));
        }
        if !self.hidden.is_multiple_of(self.heads) {
            return Err(format!(
                "hidden ({}) must be a multiple of heads ({})",
                self.hidden, self.heads
            ));
        }
        let kv = self.kv_heads();
        if kv > self.heads || !self.heads.is_multiple_of(kv) {
            return Err(format!(
                "kv_heads ({kv}) must divide heads ({})",
                self.heads
            ));
        }
        match (self.experts, self.top_k) {
            (Some(e), Some(k)) if k == 0 || k > e => {
                Err(format!("top_k ({k}) must be between 1 and experts ({e})"))
            }
            (Some(e), None) if e > 1 => Err("a model with experts needs top_k".into()),
            (None, Some(_)) => Err("top_k needs experts".into()),
            _ => Ok(()),
        }
    }
}

/// A Llama-shaped dense model (Llama 2 and 3): SwiGLU MLP, grouped-query attention, untied
/// embeddings.
#[allow(clippy::too_many_arguments)]
pub fn llama_shaped(
    name: &str,
    layers: u32,
    hidden: u32,
    ffn: u32,
    heads: u32,
    kv_heads: u32,
    vocab: u32,
    seq_len: u32,
) -> ModelSpec {
    ModelSpec {
        name: name.to_string(),
        layers,
        hidden,
        ffn,
        heads,
        kv_heads: Some(kv_heads),
        vocab,
        seq_len,
        experts: None,
        top_k: None,
        moe_layers: None,
        expert_ffn: None,
        gated_mlp: true,
        tied_embeddings: false,
    }
}

/// Built-in models: the Llama 3 family and two mixtures of experts from their papers and
/// released configurations, and Megatron's GPT shapes.
pub fn named_model(id: &str) -> Option<ModelSpec> {
    let spec = llama_shaped;
    // Llama 3 (Dubey et al. 2024, Table 3; released config.json): vocabulary 128,256,
    // 8 key/value heads, SwiGLU; trained at 8,192 tokens.
    Some(match id {
        "llama-8b" => spec(id, 32, 4096, 14336, 32, 8, 128_256, 8192),
        "llama-70b" => spec(id, 80, 8192, 28672, 64, 8, 128_256, 8192),
        "llama-405b" => spec(id, 126, 16384, 53248, 128, 8, 128_256, 8192),
        // Mixtral 8×7B (Jiang et al. 2024; config.json): 8 experts, top 2, in every layer.
        "mixtral-8x7b" => ModelSpec {
            experts: Some(8),
            top_k: Some(2),
            ..spec(id, 32, 4096, 14336, 32, 8, 32_000, 4096)
        },
        // DeepSeek-V3 (DeepSeek-AI 2024, config.json): 3 dense layers (FFN 18,432), then 58
        // with 256 routed experts of width 2,048, top 8. Approximations: its one shared expert
        // per layer is left out and its multi-head latent attention is counted as full
        // attention of 128 heads (the total comes out at 669B against the published 671B).
        "deepseek-v3" => ModelSpec {
            experts: Some(256),
            top_k: Some(8),
            moe_layers: Some(58),
            expert_ffn: Some(2048),
            ..spec(id, 61, 7168, 18432, 128, 128, 129_280, 4096)
        },
        _ => return None,
    })
}

/// Megatron's GPT of the given width and depth: FFN 4h, head size 128 (as in Megatron-LM's
/// configurations), vocabulary 51,200, tied embeddings, sequence `seq_len`.
pub fn gpt(name: &str, layers: u32, hidden: u32, seq_len: u32) -> ModelSpec {
    ModelSpec {
        name: name.to_string(),
        layers,
        hidden,
        ffn: 4 * hidden,
        heads: (hidden / 128).max(1),
        kv_heads: None,
        vocab: 51_200,
        seq_len,
        experts: None,
        top_k: None,
        moe_layers: None,
        expert_ffn: None,
        gated_mlp: false,
        tied_embeddings: true,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn llama_3_parameter_counts_match_the_published_sizes() {
        // Meta's model cards: 8.03B, 70.6B, 405.9B (rounded as published).
        let b = |id| named_model(id).expect("built in").params() / 1e9;
        assert!((b("llama-8b") - 8.03).abs() < 0.01, "{}", b("llama-8b"));
        assert!((b("llama-70b") - 70.55).abs() < 0.1, "{}", b("llama-70b"));
        assert!(
            (b("llama-405b") - 405.85).abs() < 0.5,
            "{}",
            b("llama-405b")
        );
        // Mixtral: 46.7B in all, 12.9B active per token (its paper).
        let m = named_model("mixtral-8x7b").expect("built in");
        assert!(
            (m.params() / 1e9 - 46.7).abs() < 0.1,
            "{}",
            m.params() / 1e9
        );
    }

    #[test]
    fn gpt_flops_are_narayanans_formula() {
        // 1.7B row of Megatron's table: l=24, h=2304, s=2048, V=51200, recomputation on.
        let m = gpt("gpt-1.7b", 24, 2304, 2048);
        let (l, h, s, v) = (24.0, 2304.0_f64, 2048.0, 51200.0);
        let paper = 96.0 * s * l * h * h * (1.0 + s / (6.0 * h) + v / (16.0 * l * h));
        let ours = m.hardware_flops_per_token(Recompute::Full) * s;
        assert!((ours / paper - 1.0).abs() < 1e-12, "{ours} vs {paper}");
        let paper_no_recompute = 72.0 * s * l * h * h * (1.0 + s / (6.0 * h) + v / (12.0 * l * h));
        assert!((m.model_flops_per_token() * s / paper_no_recompute - 1.0).abs() < 1e-12);
    }

    #[test]
    fn a_small_dense_model_by_hand() {
        // 2 layers, h=4, FFN 8, 2 heads, V=10, s=6, GPT MLP, untied.
        let m = ModelSpec {
            tied_embeddings: false,
            ..gpt("tiny", 2, 4, 6)
        };
        let m = ModelSpec {
            heads: 2,
            ffn: 8,
            vocab: 10,
            ..m
        };
        // Per layer: attention 2·16 + 2·16 = 64, MLP 2·4·8 = 64 → 128; two layers 256;
        // embeddings 2·10·4 = 80: 336 parameters.
        assert_eq!(m.params(), 336.0);
        // Forward per token: 2·256 + attention 4·6·4·2 = 192 → 704, logits 2·4·10 = 80:
        // 784; training ×3 = 2,352; full recomputation adds 704.
        assert_eq!(m.model_flops_per_token(), 2352.0);
        assert_eq!(m.hardware_flops_per_token(Recompute::Full), 3056.0);
        assert_eq!(
            m.hardware_flops_per_token(Recompute::Selective),
            2352.0 + 192.0
        );
    }
}
