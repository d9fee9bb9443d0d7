//! The job a design is for: the model it trains or serves and how (parallel layout,
//! precision, recomputation), saved in the design file so that the designer, `workload`,
//! `compare` and `report` ask the same question of it and nothing of it is lost between
//! sessions or machines. The arithmetic on these lives in `analysis`.

use serde::{Deserialize, Serialize};

/// Numbers' precision in the job's arithmetic and exchanges.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Precision {
    Fp32,
    Bf16,
    Fp16,
    Fp8,
}

/// Weights stored in fewer bits than the activations, as served models often are: the
/// weights are read (and held) at this size and widened to the activations' precision in the
/// kernel, so decode reads fewer bytes while the key/value cache, the all-reduces and the
/// prefill's arithmetic keep the activations' precision.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum QuantizedWeights {
    /// 8-bit integers with one scale per output channel (LLM.int8(), SmoothQuant, vLLM's
    /// W8A16): the scales add under 0.1 % to the bytes, left out.
    Int8,
    /// 4-bit integers in groups of 128 weights, each group with a 16-bit scale and a 16-bit
    /// zero point (AWQ and GPTQ's default `group_size=128`): 4 + 32/128 = 4.25 bits a weight.
    Int4,
}

/// How much of the forward pass is computed again in the backward pass to save memory
/// (Korthikanti et al. 2022, arXiv 2205.05198).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize, Default)]
#[serde(rename_all = "snake_case")]
pub enum Recompute {
    /// Every activation is kept.
    #[default]
    None,
    /// Attention's scores, softmax and weighted sum are recomputed (their activations are
    /// the ones that grow with the sequence).
    Selective,
    /// Each layer's forward pass runs again; only its input is kept.
    Full,
}

/// What a training job trains: every weight, or low-rank adapters (LoRA, Hu et al. 2021) on
/// every linear layer of the frozen blocks, as QLoRA found it needs to match full
/// fine-tuning (Dettmers et al. 2023, arXiv 2305.14314, §4). QLoRA holds the frozen
/// blocks' weights in 4-bit NF4.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize, Default)]
#[serde(rename_all = "snake_case")]
pub enum Finetune {
    /// Every weight trains (pre-training, or full fine-tuning).
    #[default]
    Full,
    /// Adapters of this rank on 16-bit frozen weights.
    Lora { rank: u32 },
    /// Adapters of this rank on frozen weights in NF4 with double quantization.
    Qlora { rank: u32 },
}

impl Finetune {
    /// Ranks accepted (LoRA's paper tried 1 to 64 and QLoRA ran 64; far larger ranks train
    /// as many weights as the model has).
    pub const RANKS: std::ops::RangeInclusive<u32> = 1..=1024;

    pub fn is_full(&self) -> bool {
        *self == Finetune::Full
    }

    /// The adapters' rank; None for full training.
    pub fn rank(self) -> Option<u32> {
        match self {
            Finetune::Full => None,
            Finetune::Lora { rank } | Finetune::Qlora { rank } => Some(rank),
        }
    }

    /// "full", "LoRA r 16", "QLoRA r 64".
    pub fn label(self) -> String {
        match self {
            Finetune::Full => "full".into(),
            Finetune::Lora { rank } => format!("LoRA r {rank}"),
            Finetune::Qlora { rank } => format!("QLoRA r {rank}"),
        }
    }
}

/// The job as the designer's sidebar sets it: a built-in model by id and how it runs.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(default)]
pub struct JobSpec {
    /// A built-in model id (`llama-70b`).
    pub model: String,
    pub tp: u32,
    pub pp: u32,
    /// Expert-parallel size of a mixture of experts; 0 = as many as it has experts.
    pub ep: u32,
    /// Sequences per micro-batch of a training step.
    pub micro_batch: u32,
    pub precision: Precision,
    /// Serving replicas (one decode step) rather than training.
    pub serving: bool,
    /// The kernels' fraction of the GPUs' dense peak, as the user sets it; None = the
    /// published figure for the GPU generation (unknown where there is none).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub efficiency: Option<f64>,
    /// Serving: sequences each replica decodes at once (one person chatting is 1).
    pub serving_batch: u32,
    /// Serving: weights quantized below the precision; None = in the precision.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub weights: Option<QuantizedWeights>,
    /// Serving: the share of peak memory bandwidth decode reaches; None = the peak.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub memory_share: Option<f64>,
    /// Training: recomputation and ZeRO stage; None = railyard's defaults (selective, 1).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub recompute: Option<Recompute>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub zero: Option<u8>,
    /// Training: every weight, or adapters on a frozen model; files without it train every
    /// weight.
    #[serde(skip_serializing_if = "Finetune::is_full")]
    pub finetune: Finetune,
}

/// Sequences a serving replica decodes at once unless the job says otherwise: a shared
/// service's batch (vLLM's scheduler runs tens to hundreds).
pub const SERVING_SEQUENCES: u32 = 64;

impl Default for JobSpec {
    /// Llama 3 70B training in its usual layout (TP 8), bf16.
    fn default() -> Self {
        Self {
            model: "llama-70b".into(),
            tp: 8,
            pp: 1,
            ep: 0,
            micro_batch: 1,
            precision: Precision::Bf16,
            serving: false,
            efficiency: None,
            serving_batch: SERVING_SEQUENCES,
            weights: None,
            memory_share: None,
            recompute: None,
            zero: None,
            finetune: Finetune::Full,
        }
    }
}

#[cfg(test)]
mod finetune_tests {
    use super::*;

    #[test]
    fn adapters_are_saved_and_files_without_them_train_every_weight() {
        let job = JobSpec {
            model: "llama-8b".into(),
            finetune: Finetune::Qlora { rank: 64 },
            ..JobSpec::default()
        };
        let text = ron::ser::to_string(&job).expect("serializes");
        assert!(text.contains("finetune:qlora(rank:64)"), "{text}");
        let back: JobSpec = ron::from_str(&text).expect("reads");
        assert_eq!(back, job);
        // A job saved before adapters existed.
        let old: JobSpec = ron::from_str("(model: \"llama-70b\", tp: 8)").expect("reads");
        assert_eq!(old.finetune, Finetune::Full);
        assert!(
            !ron::ser::to_string(&JobSpec::default())
                .expect("serializes")
                .contains("finetune")
        );
    }
}
