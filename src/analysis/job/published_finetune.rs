//! Published peak memory of LoRA and QLoRA fine-tuning runs the memory model is checked
//! against. Each row is a run its source measured, with the settings the source (or the
//! configuration file it ran, where it names one) states; nothing here was fitted to them.

use super::finetune::TrainedWeights;
use super::memory::{MemoryLayout, training_memory};
use super::model::{ModelSpec, Recompute, llama_shaped, named_model};
use super::published::median_and_worst;
use crate::model::job_spec::Finetune;
use serde::Serialize;

const GIB: f64 = 1024.0 * 1024.0 * 1024.0;

/// Llama 2 7B and 70B (meta-llama's config.json): untied embeddings, a 32,000-token
/// vocabulary, SwiGLU MLP; 70B has 8 key/value heads.
fn llama2(billions: u32, seq_len: u32) -> ModelSpec {
    let name = format!("llama2-{billions}b");
    match billions {
        7 => llama_shaped(&name, 32, 4096, 11008, 32, 32, 32_000, seq_len),
        _ => llama_shaped(&name, 80, 8192, 28672, 64, 8, 32_000, seq_len),
    }
}

/// The unit a source prints memory in.
#[derive(Debug, Clone, Copy, PartialEq, Serialize)]
pub enum MemoryUnit {
    /// 2^30 bytes (PyTorch's memory statistics, as these sources print them).
    GiB,
    /// 10^9 bytes.
    GB,
}

impl MemoryUnit {
    fn bytes(self) -> f64 {
        match self {
            MemoryUnit::GiB => GIB,
            MemoryUnit::GB => 1e9,
        }
    }

    fn label(self) -> &'static str {
        match self {
            MemoryUnit::GiB => "GiB",
            MemoryUnit::GB => "GB",
        }
    }
}

/// One published run: the model, how it trained, and the peak memory per GPU measured.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct PublishedFinetune {
    pub id: &'static str,
    pub source: &'static str,
    /// What ran, in the source's words where they matter.
    pub setup: &'static str,
    #[serde(skip)]
    pub model: ModelSpec,
    pub finetune: Finetune,
    /// GPUs the model's weights and adapters are sharded over (FSDP / ZeRO-3); 1 = none.
    pub sharded_over: u32,
    pub micro_batch: u32,
    pub recompute: Recompute,
    pub measured: f64,
    pub unit: MemoryUnit,
    /// What the figure counts: the tensors allocated, or what the allocator holds (its
    /// reserve included), or the whole process as the driver sees it.
    pub counts: &'static str,
}

const TORCHTUNE: &str = "pytorch/torchtune README at 30b8519, \"Memory and training speed\": \
     batch 2, a dataset packed to 2,048 tokens, activation checkpointing (the recipes' \
     configs at that commit), one RTX 4090";
const ANSWER_AI: &str = "AnswerDotAI/fsdp_qlora benchmarks_03_2024.md at 4cd69234: 2 × RTX \
     3090, FSDP full shard, rank 64, gradient checkpointing, batch 1 per GPU (the LoRA runs' \
     peak allocated memory from its note under their table)";
const PEFT_FSDP: &str = "huggingface/peft docs/source/accelerate/fsdp.md at 5d602fdb: 2 GPUs, \
     FSDP full shard without offload, rank 8 on all linear layers, packed 2,048 tokens, \
     batch 2 per GPU, gradient checkpointing";
const PEFT_ZERO3: &str = "huggingface/peft docs/source/accelerate/deepspeed.md at 5d602fdb: \
     2 GPUs, DeepSpeed ZeRO-3 without offload, rank 8 on all linear layers, packed 2,048 \
     tokens, batch 2 per GPU, gradient checkpointing";

/// The published runs.
pub fn published_finetunes() -> Vec<PublishedFinetune> {
    let llama31_8b = || {
        let mut m = named_model("llama-8b").expect("built in");
        m.seq_len = 2048;
        m
    };
    // `measured`: the figure, its unit, and what it counts.
    let row = |id, source, setup, model, finetune, sharded_over, micro_batch, measured| {
        let (measured, unit, counts) = measured;
        PublishedFinetune {
            id,
            source,
            setup,
            model,
            finetune,
            sharded_over,
            micro_batch,
            recompute: Recompute::Full,
            measured,
            unit,
            counts,
        }
    };
    use Finetune::{Lora, Qlora};
    use MemoryUnit::{GB, GiB};
    vec![
        row(
            "TT-8B-LORA",
            TORCHTUNE,
            "Llama 3.1 8B, LoRA (config: rank 8 on Q and V)",
            llama31_8b(),
            Lora { rank: 8 },
            1,
            2,
            (16.2, GiB, "peak memory"),
        ),
        row(
            "TT-8B-QLORA",
            TORCHTUNE,
            "Llama 3.1 8B, QLoRA (config: rank 8 on every linear layer of the blocks)",
            llama31_8b(),
            Qlora { rank: 8 },
            1,
            2,
            (7.4, GiB, "peak memory"),
        ),
        row(
            "AAI-7B-QLORA-512",
            ANSWER_AI,
            "Llama 2 7B, QLoRA, 512 tokens (adapters on Q, K, V and the MLP, not O; pure bf16)",
            llama2(7, 512),
            Qlora { rank: 64 },
            2,
            1,
            (4.98, GiB, "peak reserved"),
        ),
        row(
            "AAI-7B-QLORA-2048",
            ANSWER_AI,
            "Llama 2 7B, QLoRA, 2,048 tokens (adapters on Q, K, V and the MLP, not O; pure bf16)",
            llama2(7, 2048),
            Qlora { rank: 64 },
            2,
            1,
            (5.21, GiB, "peak reserved"),
        ),
        row(
            "AAI-7B-LORA-512",
            ANSWER_AI,
            "Llama 2 7B, LoRA, 512 tokens (adapters on Q, K, V and the MLP, not O; pure bf16)",
            llama2(7, 512),
            Lora { rank: 64 },
            2,
            1,
            (8.28, GiB, "peak allocated"),
        ),
        row(
            "AAI-7B-LORA-2048",
            ANSWER_AI,
            "Llama 2 7B, LoRA, 2,048 tokens (adapters on Q, K, V and the MLP, not O; pure bf16)",
            llama2(7, 2048),
            Lora { rank: 64 },
            2,
            1,
            (9.16, GiB, "peak allocated"),
        ),
        row(
            "PEFT-70B-QLORA-FSDP",
            PEFT_FSDP,
            "Llama 2 70B, QLoRA",
            llama2(70, 2048),
            Qlora { rank: 8 },
            2,
            2,
            (35.6, GB, "memory used"),
        ),
        row(
            "PEFT-70B-QLORA-ZERO3",
            PEFT_ZERO3,
            "Llama 2 70B, QLoRA",
            llama2(70, 2048),
            Qlora { rank: 8 },
            2,
            2,
            (36.6, GB, "memory used"),
        ),
    ]
}

/// A published run against the memory model.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct FinetuneCheck {
    pub run: PublishedFinetune,
    /// Trained adapter parameters (railyard adapts every linear layer of the blocks).
    pub trained_params: f64,
    /// Predicted peak per GPU, in the run's unit.
    pub predicted: f64,
    /// Predicted / measured − 1.
    pub error: f64,
}

/// Each run's memory as `workload` works it out: data parallelism over the GPUs with weights
/// sharded (ZeRO-3) where the run shards them, full recomputation, the step one micro-batch.
pub fn check_finetunes() -> Vec<FinetuneCheck> {
    published_finetunes()
        .into_iter()
        .map(|run| {
            let memory = training_memory(
                &run.model,
                &MemoryLayout {
                    tp: 1,
                    pp: 1,
                    dp: run.sharded_over,
                    ep: 1,
                    micro_batch: run.micro_batch,
                    micro_batches: 1,
                    zero: if run.sharded_over > 1 { 3 } else { 0 },
                    recompute: run.recompute,
                    finetune: run.finetune,
                },
            );
            let predicted = memory.total() / run.unit.bytes();
            FinetuneCheck {
                trained_params: TrainedWeights::of(&run.model, run.finetune).trained_params,
                error: predicted / run.measured - 1.0,
                predicted,
                run,
            }
        })
        .collect()
}

/// The checks as a section of the training validation page.
pub fn finetune_markdown(checks: &[FinetuneCheck]) -> String {
    let mut out = String::from(
        "\n# Fine-tuning memory against published runs\n\n\
         Published: the peak memory per GPU of LoRA and QLoRA runs, each with its settings \
         (sources in the table).\n\n\
         Predicted: `railyard workload --lora/--qlora RANK` memory for the same model, rank, \
         sequence, batch per GPU and sharding (FSDP full shard and ZeRO-3 as ZeRO stage 3), \
         full recomputation (gradient checkpointing). railyard puts adapters on every linear \
         layer of the blocks and keeps them in mixed precision (16 bytes a parameter with \
         Adam's states); some runs adapt fewer layers or keep the adapters' states in 16-bit, \
         which the setup column says. railyard counts the tensors a step allocates: a figure \
         of what the allocator reserves (or the driver sees) holds more. Tensors railyard \
         leaves out: the layers FSDP gathers whole, the 16-bit copy of a 4-bit layer being \
         multiplied, and the vocabulary's logits and their gradient (Wijmans et al. 2025, \
         \"Cut Your Losses in Large-Vocabulary Language Models\": for small models the loss \
         can take more memory than the rest). Nothing was fitted to these rows.\n\n\
         | run | setup | railyard's adapters (M) | measured | counts | predicted | error | source |\n\
         |---|---|---:|---:|---|---:|---:|---|\n",
    );
    for c in checks {
        out.push_str(&format!(
            "| {} | {}; {} | {:.1} | {:.2} {unit} | {} | {:.2} {unit} | {:+.0} % | {} |\n",
            c.run.id,
            c.run.setup,
            if c.run.sharded_over > 1 {
                format!("sharded over {} GPUs", c.run.sharded_over)
            } else {
                "one GPU".into()
            },
            c.trained_params / 1e6,
            c.run.measured,
            c.run.counts,
            c.predicted,
            c.error * 100.0,
            c.run.source,
            unit = c.run.unit.label(),
        ));
    }
    let (median, worst) = median_and_worst(checks.iter().map(|c| c.error));
    out.push_str(&format!(
        "\nMedian |error| {:.0} %, worst {:.0} %.\n",
        median * 100.0,
        worst * 100.0
    ));
    out
}
