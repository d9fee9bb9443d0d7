//! `workload`'s job figures: a training step's time, MFU, memory, time and money, the layout
//! search, or serving's decode rate and time to first token.

use super::args::{
    finetune_of, parse_fraction, parse_non_negative, parse_positive, parse_pue, parse_weights,
};
use crate::analysis::collective::{
    Precision, QuantizedWeights, Routing, SERVING_SEQUENCES, Workload, fitted_layout,
};
use crate::analysis::job::economics::DEFAULT_AMORTISATION_YEARS;
use crate::analysis::job::{
    Economics, EconomicsInputs, JobError, ModelSpec, Recompute, SearchOptions, SearchResult,
    ServingJob, ServingResult, Site, TrainingJob, TrainingStep, economics, named_model,
    search_layouts, serving, training_step,
};
use crate::model::job_spec::Finetune;
use crate::model::units::{
    cents_or_less, count_of, group_thousands, significant, time_text, trim_number,
};
use crate::model::{Catalog, Design};
use anyhow::Context;
use clap::{Args, ValueEnum};
use serde::Serialize;
use std::path::Path;

#[derive(Debug, Clone, Args)]
pub(super) struct JobArgs {
    /// Sequences per training step over all replicas (default 512).
    #[arg(long, value_name = "N", value_parser = clap::value_parser!(u32).range(1..=100_000_000))]
    global_batch: Option<u32>,
    /// Sequences per micro-batch (1 unless the design's job says otherwise).
    #[arg(long, value_name = "N", value_parser = clap::value_parser!(u32).range(1..=65_536))]
    micro_batch: Option<u32>,
    /// Sequence length; the model's own when absent.
    #[arg(long, value_name = "N", value_parser = clap::value_parser!(u32).range(1..=10_000_000))]
    seq: Option<u32>,
    /// Activation recomputation: none, selective (attention's scores, as FlashAttention and
    /// Megatron's default do; the default) or full (every layer).
    #[arg(long, value_enum)]
    recompute: Option<RecomputeArg>,
    /// ZeRO / FSDP stage: 0 none, 1 optimizer states (the default), 2 and gradients, 3 and
    /// weights.
    #[arg(long, value_name = "0-3", value_parser = clap::value_parser!(u8).range(0..=3))]
    zero: Option<u8>,
    /// Fine-tune low-rank adapters of this rank on every linear layer of the blocks (LoRA),
    /// the rest of the model frozen in 16-bit: only the adapters have gradients and optimizer
    /// states, and only their gradients are all-reduced.
    #[arg(long, value_name = "RANK", conflicts_with_all = ["qlora", "serving"], value_parser = clap::value_parser!(u32).range(1..=1024))]
    lora: Option<u32>,
    /// As --lora, with the blocks' frozen weights in 4-bit NF4 (QLoRA, bitsandbytes): they
    /// take about a quarter of the memory and are widened to 16-bit on every pass.
    #[arg(long, value_name = "RANK", conflicts_with = "serving", value_parser = clap::value_parser!(u32).range(1..=1024))]
    qlora: Option<u32>,
    /// Tokens to train on (e.g. 15T, 300B, 2e12): adds the days and energy it takes.
    #[arg(long, value_name = "N", value_parser = parse_tokens)]
    tokens: Option<f64>,
    /// Search tensor, pipeline, data and expert sizes, micro-batch, recomputation and ZeRO
    /// stage for the fastest step that fits; prints the best few. With --serving: the
    /// tensor × pipeline split that decodes --sequences at once fastest.
    #[arg(long)]
    search: bool,
    /// With --serving --search: sequences decoded at once over the whole design (the users
    /// being served), shared out between the replicas of each layout.
    #[arg(long, value_name = "N", default_value_t = 64, requires = "search", value_parser = clap::value_parser!(u32).range(1..=1_000_000))]
    sequences: u32,
    /// With --serving: sequences each replica decodes at once (64 unless the design's job
    /// says otherwise).
    #[arg(long, value_name = "N", requires = "serving", value_parser = clap::value_parser!(u32).range(1..=1_000_000))]
    batch: Option<u32>,
    /// With --serving: prompt tokens per sequence (time to first token, and the key/value
    /// cache decode reads).
    #[arg(long, value_name = "N", default_value_t = 2048, requires = "serving", value_parser = clap::value_parser!(u32).range(1..=10_000_000))]
    prompt: u32,
    /// With --serving: weights quantized below --precision (int8, or int4 in AWQ/GPTQ groups
    /// of 128): decode reads and holds fewer bytes; the cache and activations stay in
    /// --precision.
    #[arg(long, value_name = "int8|int4", requires = "serving", value_parser = parse_weights)]
    weights: Option<QuantizedWeights>,
    /// With --serving: the share of the GPUs' peak memory bandwidth decode reaches, 0 to 1
    /// (your measurement); without it decode runs at the peak and its rates are upper bounds.
    #[arg(long, value_name = "F", requires = "serving", value_parser = parse_fraction)]
    memory_share: Option<f64>,
    /// Fraction of the GPUs' dense peak the kernels achieve, 0 to 1; the published figure
    /// for the GPU generation when absent (unknown for GPUs without one).
    #[arg(long, value_name = "F", value_parser = parse_fraction)]
    efficiency: Option<f64>,
    /// Virtual pipeline stages per GPU (the interleaved schedule); 1 is plain 1F1B.
    #[arg(long, value_name = "V", default_value_t = 1, value_parser = clap::value_parser!(u32).range(1..=1024))]
    interleave: u32,
    /// Reduce gradients after the backward pass instead of overlapping it.
    #[arg(long)]
    no_grad_overlap: bool,
    /// Power usage effectiveness of the facility [default: 1.58, Uptime Institute's 2023
    /// average; 1.0 where every machine is a desk machine (Mac Studio, DGX Spark, workstation)]
    #[arg(long, value_name = "R", value_parser = parse_pue)]
    pue: Option<f64>,
    /// Electricity price, USD per kWh [default: 0.08, the US industrial price; 0.16, the US
    /// residential price, where every machine is a desk machine]
    #[arg(long, value_name = "USD", value_parser = parse_non_negative)]
    usd_per_kwh: Option<f64>,
    /// Years the design's capital cost is written off over.
    #[arg(long, value_name = "Y", default_value_t = DEFAULT_AMORTISATION_YEARS, value_parser = parse_positive)]
    years: f64,
    /// Renting the design's GPUs instead, USD per GPU-hour (your cloud's quote, energy
    /// included): adds what the same job costs rented, beside what it costs owned.
    #[arg(long, value_name = "USD", value_parser = parse_positive)]
    rent: Option<f64>,
}

#[derive(Debug, Clone, Copy, ValueEnum)]
enum RecomputeArg {
    None,
    Selective,
    Full,
}

fn parse_tokens(text: &str) -> Result<f64, String> {
    let t = text.trim();
    let (number, scale) = match t.chars().last().map(|c| c.to_ascii_uppercase()) {
        Some('K') => (&t[..t.len() - 1], 1e3),
        Some('M') => (&t[..t.len() - 1], 1e6),
        Some('B' | 'G') => (&t[..t.len() - 1], 1e9),
        Some('T') => (&t[..t.len() - 1], 1e12),
        _ => (t, 1.0),
    };
    match number.parse::<f64>() {
        Ok(n) if n.is_finite() && n > 0.0 => Ok(n * scale),
        _ => Err(format!(
            "`{text}` is not a token count (a positive number, e.g. 15T, 300B, 2e12)"
        )),
    }
}

/// The model `--model` names: a built-in id or a RON model file.
pub(super) fn model_of(text: &str) -> anyhow::Result<ModelSpec> {
    if text.ends_with(".ron") || Path::new(text).is_file() {
        return Ok(crate::io::model_file::load_model(Path::new(text))?);
    }
    named_model(text).with_context(|| format!("no model `{text}`"))
}

/// What the command line chose: the job as the step model takes it.
pub(super) struct Chosen {
    pub training: TrainingJob,
    pub serving: Option<ServingJob>,
    /// Said when the model's usual layout did not fit the design's GPUs and was narrowed.
    pub fitted: Option<String>,
}

/// The training (and serving) job of the arguments: `base` gives the built-in model's usual
/// layout, the flags override it. A usual layout larger than the design's `gpus` is
/// narrowed to fit them, and `fitted` says so; sizes the flags give are kept as given.
pub(super) fn chosen_job(
    model: ModelSpec,
    base: Option<&Workload>,
    layout: (Option<u32>, Option<u32>, Option<u32>, Option<u32>),
    precision: Precision,
    serving_mode: bool,
    a: &JobArgs,
    gpus: u64,
) -> Chosen {
    let (tp, pp, dp, ep) = layout;
    let mut model = model;
    // A built-in model keeps the sequence the sidebar and `compare` time it at.
    if let Some(seq) = a.seq.or(base.map(|w| w.seq_len)) {
        model.seq_len = seq;
    }
    let given = tp.is_some() || pp.is_some();
    let tp = tp.or(base.map(|w| w.tp)).unwrap_or(1);
    let pp = pp.or(base.map(|w| w.pp)).unwrap_or(1);
    let fit = fitted_layout(tp, pp, gpus).filter(|_| !given);
    let fitted = fit.map(|(fit_tp, fit_pp)| {
        format!(
            "layout TP {fit_tp} × PP {fit_pp}, fitted to the design's {gpus} GPUs: {}'s usual \
             TP {tp} × PP {pp} needs {} (--tp and --pp choose another)",
            model.name,
            u64::from(tp) * u64::from(pp)
        )
    });
    let (tp, pp) = fit.unwrap_or((tp, pp));
    let ep = ep.or(base.and_then(|w| w.moe.and_then(|m| m.ep)));
    let mut training = TrainingJob::new(model.clone(), tp, pp, a.global_batch.unwrap_or(512));
    training.dp = dp;
    training.ep = ep;
    training.micro_batch = a.micro_batch.unwrap_or(1);
    training.precision = precision;
    training.recompute = match a.recompute.unwrap_or(RecomputeArg::Selective) {
        RecomputeArg::None => Recompute::None,
        RecomputeArg::Selective => Recompute::Selective,
        RecomputeArg::Full => Recompute::Full,
    };
    training.zero = a.zero.unwrap_or(1);
    training.virtual_stages = a.interleave;
    training.overlap_grad_reduce = !a.no_grad_overlap;
    training.efficiency = a.efficiency;
    training.finetune = finetune_of(a.lora, a.qlora);
    let serving = serving_mode.then(|| ServingJob {
        model,
        tp,
        pp,
        ep: ep.unwrap_or(1),
        batch: a.batch.unwrap_or(SERVING_SEQUENCES),
        prompt: a.prompt,
        precision,
        efficiency: a.efficiency,
        weights: a.weights,
        memory_share: a.memory_share,
    });
    Chosen {
        training,
        serving,
        fitted,
    }
}

impl JobArgs {
    /// What the flags leave out, from the design's job.
    pub(super) fn fill_from(&mut self, job: &crate::model::JobSpec) {
        self.micro_batch = self.micro_batch.or(Some(job.micro_batch));
        self.recompute = self.recompute.or(job.recompute.map(|r| match r {
            Recompute::None => RecomputeArg::None,
            Recompute::Selective => RecomputeArg::Selective,
            Recompute::Full => RecomputeArg::Full,
        }));
        self.zero = self.zero.or(job.zero);
        // A serving job keeps what the sidebar last trained with, unused.
        if !job.serving && self.lora.is_none() && self.qlora.is_none() {
            match job.finetune {
                Finetune::Full => {}
                Finetune::Lora { rank } => self.lora = Some(rank),
                Finetune::Qlora { rank } => self.qlora = Some(rank),
            }
        }
        if job.serving {
            self.batch = self.batch.or(Some(job.serving_batch));
            self.weights = self.weights.or(job.weights);
            self.memory_share = self.memory_share.or(job.memory_share);
        }
        self.efficiency = self.efficiency.or(job.efficiency);
    }

    /// Whether the job searches layouts (`--search`).
    pub(super) fn searches(&self) -> bool {
        self.search
    }

    /// Serving's search: sequences decoded at once over the design (`--sequences`).
    pub(super) fn sequences(&self) -> u32 {
        self.sequences
    }
}

/// Puts the layout a search found into the job: its sizes, micro-batch, recomputation and
/// ZeRO stage.
pub(super) fn take_layout(job: &mut TrainingJob, found: &TrainingStep) {
    job.tp = found.tp;
    job.pp = found.pp;
    job.dp = Some(found.dp);
    job.ep = Some(found.ep);
    job.micro_batch = found.micro_batch;
    job.recompute = found.recompute;
    job.zero = found.zero;
}

/// The headline figures `workload --json` adds at its top level (null = unknown).
#[derive(Debug, Clone, Serialize)]
#[serde(untagged)]
pub enum JobFigures {
    Training {
        step_ms: Option<f64>,
        compute_ms: Option<f64>,
        exposed_comm_ms: Option<f64>,
        bubble_ms: Option<f64>,
        tokens_per_s: Option<f64>,
        mfu: Option<f64>,
        hfu: Option<f64>,
        ideal_step_ms: Option<f64>,
        memory_gib_per_gpu: f64,
        train_days: Option<f64>,
        usd_per_million_tokens: Option<f64>,
    },
    Serving {
        decode_tokens_per_s: Option<f64>,
        decode_tokens_per_s_per_replica: Option<f64>,
        decode_tokens_per_s_per_sequence: Option<f64>,
        ttft_ms: Option<f64>,
        memory_gib_per_gpu: f64,
        /// At the decode rate, an upper bound: what a million output tokens cost at least
        /// (null when decode is timed at the user's memory-bandwidth share).
        usd_per_million_tokens_at_least: Option<f64>,
        /// At the user's memory-bandwidth share (`--memory-share`): what a million output
        /// tokens cost (null at the decode bound).
        usd_per_million_tokens: Option<f64>,
    },
}

/// The job's whole result: figures, breakdown, assumptions.
#[derive(Debug, Clone, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum JobDetail {
    Training {
        step: Box<TrainingStep>,
        economics: Option<Economics>,
    },
    /// The layouts a search found, and what the fastest costs.
    Search {
        #[serde(flatten)]
        found: Box<SearchResult>,
        economics: Option<Economics>,
    },
    Serving(Box<ServingResult>),
}

/// Runs the job on the design: exit 2 with the reason where it cannot run. `timed` is the
/// step the assessment already worked out for the same job (the sidebar's), used as it is so
/// that the step and the advice printed beside it agree.
#[allow(clippy::too_many_arguments)]
pub(super) fn run_job(
    file: &Path,
    design: &Design,
    catalog: &Catalog,
    chosen: &Chosen,
    routing: Routing,
    a: &JobArgs,
    (capital_usd, power_w): (f64, f64),
    timed: Option<&TrainingStep>,
) -> anyhow::Result<(JobFigures, JobDetail)> {
    let name = &chosen.training.model.name;
    // Money at the command line's PUE, price and write-off, for training or serving; the
    // site's PUE and price where it gives neither.
    let site = Site::of(design, catalog);
    let priced = |tokens_per_s: f64, tokens: Option<f64>| {
        economics(&EconomicsInputs {
            tokens_per_s,
            tokens,
            capital_usd,
            power_w,
            pue: a.pue.unwrap_or(site.pue()),
            usd_per_kwh: a.usd_per_kwh.unwrap_or(site.usd_per_kwh()),
            amortisation_years: a.years,
            rent: a.rent.map(|usd| (usd, design.gpu_count())),
            energy_defaults: (a.pue.is_none() && a.usd_per_kwh.is_none()).then_some(site),
        })
    };
    if let Some(job) = &chosen.serving {
        let mut r = serving(design, catalog, job, routing)
            .map_err(|e| match e {
                // Serving holds the weights and every sequence's cache: say what shrinks them.
                JobError::DoesNotFit { .. } => anyhow::anyhow!(
                    "{e}; --search finds a layout that fits (or set --batch for fewer \
                     sequences, --prompt, --weights int8 or int4, --tp, --pp)"
                ),
                e => anyhow::Error::new(e),
            })
            .with_context(|| format!("{}: cannot serve {name}", file.display()))?;
        r.economics = r.decode_tokens_per_s.map(|t| priced(t, None));
        return Ok((
            JobFigures::Serving {
                decode_tokens_per_s: r.decode_tokens_per_s,
                decode_tokens_per_s_per_replica: r.decode_tokens_per_s_per_replica,
                decode_tokens_per_s_per_sequence: r.decode_tokens_per_s_per_sequence,
                ttft_ms: r.ttft_ms,
                memory_gib_per_gpu: r.memory_gib_per_gpu,
                usd_per_million_tokens_at_least: r
                    .economics
                    .filter(|_| r.memory_share.is_none())
                    .map(|e| e.usd_per_million_tokens),
                usd_per_million_tokens: r
                    .economics
                    .filter(|_| r.memory_share.is_some())
                    .map(|e| e.usd_per_million_tokens),
            },
            JobDetail::Serving(Box::new(r)),
        ));
    }
    let (step, detail) = if a.search {
        let found = search_layouts(
            design,
            catalog,
            &chosen.training,
            SearchOptions {
                keep: 5,
                routing,
                hold_memory_settings: false,
            },
            &mut |_| {},
        )
        .with_context(|| format!("{}: cannot train {name}", file.display()))?;
        (found.best[0].clone(), Some(found))
    } else if let Some(step) = timed {
        (step.clone(), None)
    } else {
        let step = training_step(design, catalog, &chosen.training, routing)
            .map_err(|e| match e {
                // The layout was the user's or the model's usual one: say what finds one.
                JobError::DoesNotFit { .. } => anyhow::anyhow!(
                    "{e}; --search finds a layout that fits (or set --tp, --pp, --zero, \
                     --recompute)"
                ),
                e => anyhow::Error::new(e),
            })
            .with_context(|| format!("{}: cannot train {name}", file.display()))?;
        (step, None)
    };
    let money = step.tokens_per_s.map(|t| priced(t, a.tokens));
    let figures = JobFigures::Training {
        step_ms: step.step_ms,
        compute_ms: step.compute_ms,
        exposed_comm_ms: step.exposed_comm_ms,
        bubble_ms: step.bubble_ms,
        tokens_per_s: step.tokens_per_s,
        mfu: step.mfu,
        hfu: step.hfu,
        ideal_step_ms: step.ideal_step_ms,
        memory_gib_per_gpu: step.memory_gib_per_gpu,
        train_days: money.and_then(|m| m.train_days),
        usd_per_million_tokens: money.map(|m| m.usd_per_million_tokens),
    };
    let detail = match detail {
        Some(found) => JobDetail::Search {
            found: Box::new(found),
            economics: money,
        },
        None => JobDetail::Training {
            step: Box::new(step),
            economics: money,
        },
    };
    Ok((figures, detail))
}

fn ms_text(ms: Option<f64>) -> String {
    ms.map_or_else(|| "unknown".into(), |ms| time_text(ms * 1e3))
}

fn pct_text(f: Option<f64>) -> String {
    f.map_or_else(|| "unknown".into(), |f| format!("{:.1} %", f * 100.0))
}

fn step_lines(s: &TrainingStep, out: &mut String) {
    out.push_str(&format!(
        "step       {} ({} on {} GPUs, {}): compute {}, bubble {}, exposed communication {}\n",
        ms_text(s.step_ms),
        s.layout,
        s.gpus_used,
        count_of(s.micro_batches as usize, "micro-batch", "micro-batches"),
        ms_text(s.compute_ms),
        ms_text(s.bubble_ms),
        ms_text(s.exposed_comm_ms),
    ));
    for p in &s.exposed {
        out.push_str(&format!("  {:<30} {}\n", p.name, time_text(p.ms * 1e3)));
    }
    if let Some(note) = s.bubble_note() {
        out.push_str(&format!("  note: {note}\n"));
    }
    out.push_str(&format!(
        "ideal      {} on a fabric that never queues (contention's share of the step {})\n",
        ms_text(s.ideal_step_ms),
        pct_text(s.network_share)
    ));
    out.push_str(&format!(
        "throughput {} tokens/s, MFU {}, HFU {} of {} per {}\n",
        s.tokens_per_s
            .map_or_else(|| "unknown".into(), |t| group_thousands(t.round() as i64)),
        pct_text(s.mfu),
        pct_text(s.hfu),
        s.peak_tflops
            .map_or_else(|| "an unknown peak".into(), |p| format!("{p:.0} TFLOP/s")),
        s.gpu
    ));
    out.push_str(&format!(
        "memory     {:.1} of {:.0} GiB per GPU (weights {:.1}, gradients {:.1}, optimizer {:.1}, activations {:.1}; {:.1} free for what is not modelled)\n",
        s.memory_gib_per_gpu,
        s.gpu_memory_gib,
        s.memory.weights / GIB,
        s.memory.gradients / GIB,
        s.memory.optimizer / GIB,
        s.memory.activations / GIB,
        s.gpu_memory_gib - s.memory_gib_per_gpu,
    ));
}

const GIB: f64 = 1024.0 * 1024.0 * 1024.0;

/// What the same job costs on rented GPUs (`--rent`), beside owning them.
fn rented_line(e: &Economics, at_least: &str, out: &mut String) {
    let Some(r) = e.rented else {
        return;
    };
    let total = r
        .usd_total
        .map(|usd| format!(", {} in all", crate::model::Usd(usd)))
        .unwrap_or_default();
    // Owning's hour counts capital and energy only (no colocation, staff or support).
    let pays_off = match r.break_even_use {
        Some(u) => format!(
            "; owning costs less only if the GPUs are busy over {:.0} % of the hours",
            u * 100.0
        ),
        None => "; renting costs less even with the owned GPUs busy every hour".to_string(),
    };
    out.push_str(&format!(
        "rented     {at_least}${} per million tokens at ${} per GPU-hour ({} GPUs, ${:.0} an \
         hour against ${:.0} owned: capital and energy, no colocation or staff){total}{pays_off}\n",
        cents_or_less(r.usd_per_million_tokens),
        trim_number(r.usd_per_gpu_hour),
        group_thousands(i64::try_from(r.gpus).unwrap_or(i64::MAX)),
        r.usd_per_hour,
        e.usd_per_hour
    ));
}

/// What a training job's tokens cost: days and energy when a token count was given, the
/// price per million tokens owned and rented.
fn money_lines(e: &Economics, out: &mut String) {
    if let Some(days) = e.train_days {
        out.push_str(&format!(
            "training   {days:.1} days, {} at PUE {}\n",
            energy_text(e.energy_mwh.unwrap_or(0.0)),
            e.pue
        ));
    }
    out.push_str(&format!(
        "cost       ${} per million tokens (capital over {} years of training without a \
         break, energy at PUE {} and ${}/kWh{})\n",
        cents_or_less(e.usd_per_million_tokens),
        e.amortisation_years,
        e.pue,
        e.usd_per_kwh,
        e.energy_basis()
    ));
    rented_line(e, "", out);
}

/// The job's lines of the `workload` table.
pub(super) fn job_table(detail: &JobDetail) -> String {
    let mut out = String::new();
    let assumes = match detail {
        JobDetail::Training { step, economics } => {
            step_lines(step, &mut out);
            if let Some(e) = economics {
                money_lines(e, &mut out);
            }
            &step.assumes
        }
        JobDetail::Search { found, economics } => {
            out.push_str(&format!(
                "search     {} layouts tried, {} refused{}\n",
                found.tried,
                found.refused,
                found
                    .example_refusal
                    .as_ref()
                    .map(|r| format!(" (e.g. {r})"))
                    .unwrap_or_default()
            ));
            for (i, (s, why)) in found.best.iter().zip(&found.why).enumerate() {
                out.push_str(&format!(
                    "  {}. {}  {}: MFU {} — {why}\n",
                    i + 1,
                    ms_text(s.step_ms),
                    s.settings_text(),
                    pct_text(s.mfu),
                ));
            }
            // The fastest in full, as a job of that layout prints it.
            step_lines(&found.best[0], &mut out);
            if let Some(e) = economics {
                money_lines(e, &mut out);
            }
            &found.best[0].assumes
        }
        JobDetail::Serving(r) => {
            out.push_str(&format!(
                "serving    {} of {} ({} each): {}{} tokens/s in all, {} per replica, {} per sequence\n",
                count_of(r.replicas as usize, "replica", "replicas"),
                r.layout,
                count_of(r.gpus_per_replica as usize, "GPU", "GPUs"),
                // Decode at the peak memory bandwidth is a bound no engine reaches.
                if r.memory_share.is_none() { "at most " } else { "" },
                r.decode_tokens_per_s
                    .map_or_else(|| "unknown".into(), |t| group_thousands(t.round() as i64)),
                r.decode_tokens_per_s_per_replica
                    .map_or_else(|| "unknown".into(), |t| format!("{t:.1}")),
                r.decode_tokens_per_s_per_sequence
                    .map_or_else(|| "unknown".into(), |t| format!("{t:.1}")),
            ));
            out.push_str(&format!(
                "decode     {} per token step ({} of it communication), first token after {}\n",
                ms_text(r.decode_step_ms),
                time_text(r.decode_comm_ms * 1e3),
                ms_text(r.ttft_ms)
            ));
            out.push_str(&format!(
                "memory     {:.1} of {} GiB per GPU ({:.0} % of {} GiB, {})\n",
                r.memory_gib_per_gpu,
                trim_number(r.usable_memory_gib),
                r.usable_memory_gib / r.gpu_memory_gib * 100.0,
                trim_number(r.gpu_memory_gib),
                r.memory_budget_source
            ));
            if let Some(e) = &r.economics {
                let at_least = if r.memory_share.is_none() { "≥ " } else { "" };
                let rate = r.decode_basis();
                out.push_str(&format!(
                    "cost       {at_least}${} per million output tokens ({rate}; capital \
                     over {} years serving without a break, energy at PUE {} and ${}/kWh{})\n",
                    cents_or_less(e.usd_per_million_tokens),
                    e.amortisation_years,
                    e.pue,
                    e.usd_per_kwh,
                    e.energy_basis()
                ));
                rented_line(e, at_least, &mut out);
            }
            &r.assumes
        }
    };
    for a in assumes {
        out.push_str(&format!("  assumes: {a}\n"));
    }
    out
}

/// Energy as a person reads it: "41.7 MWh", "940 GWh".
fn energy_text(mwh: f64) -> String {
    if mwh >= 1000.0 {
        format!("{} GWh", significant(mwh / 1000.0, 3))
    } else {
        format!("{} MWh", significant(mwh, 3))
    }
}

#[cfg(test)]
mod tests {
    use super::energy_text;

    #[test]
    fn energy_reads_in_mwh_then_gwh() {
        // 1e12 tokens at 1e6/s on 150 kW: 277.8 h × 150 kW = 41.67 MWh.
        assert_eq!(energy_text(41.667), "41.7 MWh");
        // 65,536 H100s for 274.7 days at PUE 1.58: 940,492 MWh.
        assert_eq!(energy_text(940_492.0), "940 GWh");
    }
}
