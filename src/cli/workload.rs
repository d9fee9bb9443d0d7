//! `railyard workload FILE --model M`: a training step's (or a decode step's) communication
//! against an ideal network, with the job's figures (`job.rs`) and the advice.

use super::args::{
    parse_library, parse_model, parse_nccl_buffer, parse_nccl_release, parse_routing,
};
use super::eval::{AdviceReport, BottleneckReport, advice_lines};
use super::{count_of, job, load, write_stdout};
use crate::analysis::collective::{self, CollectiveError, Routing};
use crate::analysis::finding::Finding;
use crate::analysis::job::{
    JobOutcome, SERVING_LAYOUTS_SHOWN, ServingLayout, TrainingStep, search_serving,
};
use crate::analysis::metrics::Metrics;
use crate::analysis::{Question, assess};
use crate::model::units::{group_thousands, time_text, trim_number};
use crate::model::{Bytes, Catalog, Design, LibraryChoice, NcclBuffer, NcclRelease};
use anyhow::Context;
use clap::{Args, ValueEnum};
use serde::Serialize;
use std::path::{Path, PathBuf};

#[derive(Debug, Clone, Args)]
pub(super) struct WorkloadArgs {
    /// The design file.
    file: PathBuf,
    /// The model: a Llama 3 size in billions (8, 70, 405) or an id: llama-8b, llama-70b,
    /// llama-405b, mixtral-8x7b, deepseek-v3 (the last two mixtures of experts), or a model
    /// file of your own, FILE.ron (its layers, sizes and heads; the README shows one). Without it,
    /// the design's own job (the designer's workload, saved in the file), else Llama 70B; the
    /// flags given change the design's job.
    #[arg(long, value_name = "MODEL", value_parser = parse_model)]
    model: Option<String>,
    /// Tensor-parallel size (placed inside a scale-up domain first); the model's usual one
    /// when absent (Llama 1, 8, 8; Mixtral 1; DeepSeek-V3 1).
    #[arg(long, value_name = "N", value_parser = clap::value_parser!(u32).range(1..=65_536))]
    tp: Option<u32>,
    /// Pipeline stages; the model's usual number when absent (Llama 1, 1, 16; Mixtral 1;
    /// DeepSeek-V3 16).
    #[arg(long, value_name = "N", value_parser = clap::value_parser!(u32).range(1..=65_536))]
    pp: Option<u32>,
    /// Data-parallel replicas; as many as the GPUs allow when absent.
    #[arg(long, value_name = "N", value_parser = clap::value_parser!(u32).range(1..=1_000_000))]
    dp: Option<u32>,
    /// Expert-parallel size of a mixture of experts (a divisor of the data-parallel size);
    /// when absent, the model's usual one (DeepSeek-V3 64) or as many as it has experts.
    #[arg(long, value_name = "N", value_parser = clap::value_parser!(u32).range(1..=1_000_000))]
    ep: Option<u32>,
    /// Serving replicas instead of training: decode rate and time to first token.
    #[arg(long)]
    serving: bool,
    /// Numbers' precision (bf16 unless the design's job says otherwise).
    #[arg(long, value_enum)]
    precision: Option<PrecisionArg>,
    /// How flows spread over equal-cost paths: ecmp (hashed) or adaptive.
    #[arg(long, value_name = "ecmp|adaptive", default_value = "ecmp", value_parser = parse_routing)]
    routing: Routing,
    /// The collective library, over the design's own choice: auto (by node family), nccl,
    /// mlx-ring, mlx-jaccl or gloo.
    #[arg(long, value_name = "LIBRARY", value_parser = parse_library)]
    library: Option<LibraryChoice>,
    /// The NCCL release the jobs run (e.g. 2.21.5), over the design's own.
    #[arg(long, value_name = "RELEASE", value_parser = parse_nccl_release)]
    nccl: Option<NcclRelease>,
    /// NCCL_BUFFSIZE the jobs run with (e.g. 8M), over the design's own.
    #[arg(long, value_name = "SIZE", value_parser = parse_nccl_buffer)]
    nccl_buffsize: Option<NcclBuffer>,
    /// One JSON object instead of a table.
    #[arg(long)]
    json: bool,
    #[command(flatten)]
    job: job::JobArgs,
}

#[derive(Debug, Clone, Copy, PartialEq, ValueEnum)]
enum PrecisionArg {
    Bf16,
    Fp16,
    Fp8,
    Fp32,
}

/// One part of a training step's communication, as `workload --json` prints it.
#[derive(Debug, Clone, Serialize)]
pub struct StepPartReport {
    pub name: String,
    pub op: &'static str,
    pub bytes_per_call: f64,
    pub calls_per_step: f64,
    pub algorithm: &'static str,
    pub time_us_per_call: f64,
    pub time_us_per_step: f64,
    /// The same traffic on a network that never queues beyond the first switch.
    pub ideal_us_per_step: f64,
    /// Its busiest resources, busiest first (at most five).
    pub bottleneck: Vec<BottleneckReport>,
}

/// What `workload --json` prints.
#[derive(Debug, Clone, Serialize)]
pub struct WorkloadReport {
    pub file: String,
    pub model: String,
    pub params: f64,
    /// Serving replicas (a step is one decode step) rather than training.
    pub serving: bool,
    pub precision: &'static str,
    /// Serving's quantized weight format (int8, int4), when the weights are not in `precision`.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub weights: Option<&'static str>,
    /// Training adapters on a frozen model ("LoRA r 16"); absent when every weight trains.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub finetune: Option<String>,
    pub routing: &'static str,
    pub mapping: collective::Mapping,
    /// The collective library the communication runs on, and what the model assumes of it.
    pub library: collective::Library,
    pub assumes: String,
    /// The design's calibration, when it has one: the times are the calibrated model's.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub calibrated: Option<String>,
    pub components: Vec<StepPartReport>,
    pub total_us: f64,
    pub ideal_total_us: f64,
    pub notes: Vec<String>,
    pub advice: Vec<AdviceReport>,
    /// The job's headline figures (step time, MFU, ... or decode rate), at the top level.
    #[serde(flatten, skip_serializing_if = "Option::is_none")]
    pub figures: Option<job::JobFigures>,
    /// The job's breakdown and what it assumes.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub job: Option<job::JobDetail>,
    /// `--serving --search`: the fastest layouts, best first (the job above is the first).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub serving_layouts: Option<Vec<ServingLayoutReport>>,
}

/// One layout of a serving search, as `workload --json` prints it.
#[derive(Debug, Clone, Serialize)]
pub struct ServingLayoutReport {
    pub tp: u32,
    pub pp: u32,
    pub replicas: u32,
    /// Sequences each replica decodes at once.
    pub batch: u32,
    pub decode_tokens_per_s_per_sequence: Option<f64>,
    pub decode_tokens_per_s: Option<f64>,
    pub memory_gib_per_gpu: f64,
}

impl ServingLayoutReport {
    fn new(l: &ServingLayout) -> Self {
        ServingLayoutReport {
            tp: l.tp,
            pp: l.pp,
            replicas: l.result.replicas,
            batch: l.batch,
            decode_tokens_per_s_per_sequence: l.result.decode_tokens_per_s_per_sequence,
            decode_tokens_per_s: l.result.decode_tokens_per_s,
            memory_gib_per_gpu: l.result.memory_gib_per_gpu,
        }
    }
}

/// The serving search's best layouts, one line each.
fn serving_layouts_table(layouts: &[ServingLayoutReport], sequences: u32) -> String {
    let mut out = format!(
        "search     {} at once over the design, fastest per sequence first (the figures above are the first's):\n",
        count_of(sequences as usize, "sequence", "sequences")
    );
    let rate = |t: Option<f64>| t.map_or_else(|| "unknown".into(), |t| format!("{t:.1}"));
    for l in layouts {
        out.push_str(&format!(
            "  TP {} × PP {}  {} of {} sequences: {} tokens/s per sequence, {} in all, {:.1} GiB per GPU\n",
            l.tp,
            l.pp,
            count_of(l.replicas as usize, "replica", "replicas"),
            l.batch,
            rate(l.decode_tokens_per_s_per_sequence),
            l.decode_tokens_per_s
                .map_or_else(|| "unknown".into(), |t| group_thousands(t.round() as i64)),
            l.memory_gib_per_gpu
        ));
    }
    out
}

impl WorkloadReport {
    fn new(
        file: &Path,
        (design, catalog): (&Design, &Catalog),
        w: &collective::Workload,
        routing: Routing,
        r: collective::WorkloadResult,
        advice: &[Finding],
        in_switch: collective::InSwitchHardware,
    ) -> Self {
        let library = collective::Library::of(design, catalog);
        WorkloadReport {
            file: file.display().to_string(),
            model: w.name.clone(),
            params: w.params,
            serving: w.serving,
            precision: w.precision.label(),
            weights: w.weights.filter(|_| w.serving).map(|q| q.label()),
            finetune: (!w.serving && !w.finetune.is_full()).then(|| w.finetune.label()),
            routing: routing.cli_name(),
            mapping: r.mapping,
            library,
            assumes: library.assumes(
                design.sharp_enabled,
                design.nccl_release,
                design.nccl_buffer,
                collective::Forced::default(),
                in_switch,
            ),
            calibrated: design.calibration.as_ref().and_then(|c| c.summary()),
            components: r
                .components
                .into_iter()
                .map(|c| StepPartReport {
                    name: c.name,
                    op: c.op.cli_name(),
                    bytes_per_call: c.bytes_per_call,
                    calls_per_step: c.calls_per_step,
                    algorithm: c.algorithm.label(),
                    time_us_per_call: c.time_us_per_call,
                    time_us_per_step: c.time_us_per_step,
                    ideal_us_per_step: c.ideal_us_per_step,
                    bottleneck: BottleneckReport::rows(&c.bottleneck),
                })
                .collect(),
            total_us: r.total_us,
            ideal_total_us: r.ideal_total_us,
            notes: r.notes,
            advice: advice.iter().map(AdviceReport::new).collect(),
            figures: None,
            job: None,
            serving_layouts: None,
        }
    }

    fn to_table(&self) -> String {
        let r = self;
        let m = &r.mapping;
        let mut out = format!(
            "workload   {} in {}{}, {}, {} routing\n",
            self.model,
            self.precision,
            self.weights
                .map(|q| format!(" with {q} weights"))
                .unwrap_or_default(),
            match (&self.finetune, self.serving) {
                (_, true) => "serving".to_string(),
                (Some(adapters), false) => format!("training {adapters} adapters"),
                (None, false) => "training".to_string(),
            },
            self.routing
        );
        out.push_str(&format!(
            "mapping    {} on {} (largest scale-up domain {})\n",
            m.layout(),
            count_of(m.gpus_used as usize, "GPU", "GPUs"),
            count_of(m.scale_up_gpus as usize, "GPU", "GPUs")
        ));
        // The assumptions open with the library's name ("NCCL 2.30.7 defaults: …").
        out.push_str(&format!("library    {}\n", self.assumes));
        if let Some(cal) = &self.calibrated {
            out.push_str(&format!("calibrated {cal}\n"));
        }
        let extra = if r.ideal_total_us > 0.0 {
            format!(
                " ({} on a fabric that never queues: +{:.0} % from contention)",
                time_text(r.ideal_total_us),
                (r.total_us / r.ideal_total_us - 1.0) * 100.0
            )
        } else {
            String::new()
        };
        // Serving's step is one decode step: a token for each sequence of the batch.
        out.push_str(&format!(
            "per step   {} of communication{extra}\n",
            time_text(r.total_us)
        ));
        let width = r.components.iter().map(|c| c.name.len()).max().unwrap_or(0);
        for c in &r.components {
            // A send-recv between stages moves activations one way and their gradients the
            // other in one exchange: its bytes cross each way.
            let each_way = if c.op == collective::Op::SendRecv.cli_name() {
                " each way"
            } else {
                ""
            };
            out.push_str(&format!(
                "  {:<width$}  {:>10}  ideal {:>10}  {} × {}{each_way} per step, {}\n",
                c.name,
                time_text(c.time_us_per_step),
                time_text(c.ideal_us_per_step),
                trim_number(c.calls_per_step),
                Bytes(c.bytes_per_call.round() as u64),
                c.algorithm,
            ));
        }
        for note in &r.notes {
            out.push_str(&format!("  note: {note}\n"));
        }
        out.push_str(&advice_lines(&self.advice, 9));
        out
    }
}

pub(super) fn run(args: &WorkloadArgs, catalog: &Catalog) -> anyhow::Result<()> {
    let mut design = load(&args.file)?;
    // The design's own job answers when no model is named: the question the designer asked.
    let (args, from_design) = with_design_job(args, design.job.as_ref());
    let args = &args;
    let model_id = args.model.clone().unwrap_or_else(|| "llama-70b".into());
    if let Some(choice) = args.library {
        design.library = choice;
    }
    if args.nccl.is_some() {
        design.nccl_release = args.nccl;
    }
    if args.nccl_buffsize.is_some() {
        design.nccl_buffer = args.nccl_buffsize;
    }
    let base = collective::Workload::named(&model_id);
    let model = job::model_of(&model_id)?;
    if model.experts.is_none() && args.ep.is_some_and(|ep| ep > 1) {
        anyhow::bail!(
            "{} has no experts: --ep applies to mixture-of-experts models",
            model.name
        );
    }
    let precision = match args.precision.unwrap_or(PrecisionArg::Bf16) {
        PrecisionArg::Bf16 => collective::Precision::Bf16,
        PrecisionArg::Fp16 => collective::Precision::Fp16,
        PrecisionArg::Fp8 => collective::Precision::Fp8,
        PrecisionArg::Fp32 => collective::Precision::Fp32,
    };
    let mut chosen = job::chosen_job(
        model,
        base.as_ref(),
        (args.tp, args.pp, args.dp, args.ep),
        precision,
        args.serving,
        &args.job,
        design.gpu_count(),
    );
    let run_job = |chosen: &job::Chosen, metrics: &Metrics, timed: Option<&TrainingStep>| {
        job::run_job(
            &args.file,
            &design,
            catalog,
            chosen,
            args.routing,
            &args.job,
            (metrics.cost.total.0, metrics.power.0),
            timed,
        )
    };
    // A search runs first: the communication, the mapping and the advice below then describe
    // the layout it found, not the one it started from (which may not even fit).
    // Serving's search picks the split that serves the sequences fastest; the job below then
    // times that layout, and its ranking is listed after it.
    let serving_layouts = match &mut chosen.serving {
        Some(serving) if args.job.searches() => {
            let ranked = search_serving(
                &design,
                catalog,
                serving,
                args.job.sequences(),
                args.routing,
            )
            .with_context(|| {
                format!(
                    "{}: cannot serve {} in any layout",
                    args.file.display(),
                    serving.model.name
                )
            })?;
            let best = &ranked[0];
            (serving.tp, serving.pp, serving.batch) = (best.tp, best.pp, best.batch);
            (chosen.training.tp, chosen.training.pp) = (best.tp, best.pp);
            Some(ranked)
        }
        _ => None,
    };
    let searched = if args.job.searches() && chosen.serving.is_none() {
        let found = run_job(
            &chosen,
            &assess(&design, catalog, &Question::metrics_only()).metrics,
            None,
        )?;
        if let job::JobDetail::Search { found: s, .. } = &found.1 {
            job::take_layout(&mut chosen.training, &s.best[0]);
        }
        Some(found)
    } else {
        None
    };
    // The communication the job model stands on, as the sidebar shows it (a built-in model
    // with its published parameter counts); the layout and batch are the command line's.
    let mut w = chosen.training.comm_workload();
    w.serving = args.serving;
    if let Some(s) = &chosen.serving {
        w.serving_batch = Some(s.batch);
        w.weights = s.weights;
        w.memory_share = s.memory_share;
    }
    let question = Question {
        workload: Some(w),
        workload_routing: args.routing,
        ..Question::metrics_only()
    };
    let a = assess(&design, catalog, &question);
    let w = question.workload.expect("the question has a workload");
    let (tp, pp) = (chosen.training.tp, chosen.training.pp);
    let result = a
        .workload
        .expect("the question asks for a workload")
        .map_err(|e| match e {
            // Name where the count came from: the defaults are the model's usual layout.
            CollectiveError::NotEnoughGpus { available, .. } => anyhow::anyhow!(
                "{e}: tensor parallel {tp} × pipeline {pp} of {} (the model's usual layout \
                 unless --tp/--pp say otherwise); pass --tp and --pp that fit {available} GPUs, \
                 or a smaller --model",
                w.name
            ),
            e => anyhow::Error::new(e),
        })
        .with_context(|| format!("{}: cannot model {}", args.file.display(), w.name))?;
    let (figures, detail) = match searched {
        Some(found) => found,
        // The assessment's own step where it timed one (a built-in model that fits): the
        // sidebar's figures, which its advice quotes.
        None => {
            let timed = match &a.job {
                Some(Ok(JobOutcome::Training { step, .. })) => Some(step.as_ref()),
                _ => None,
            };
            run_job(&chosen, &a.metrics, timed)?
        }
    };
    let advice = a.advice;
    let in_switch = collective::logical::in_switch_hardware(&design, catalog)
        .with_context(|| format!("{}: cannot model {}", args.file.display(), w.name))?;
    let mut report = WorkloadReport::new(
        &args.file,
        (&design, catalog),
        &w,
        args.routing,
        result,
        &advice,
        in_switch,
    );
    report.figures = Some(figures);
    report.job = Some(detail);
    // A search chose its own layout: the narrowed default it started from is not the one run.
    if let Some(fitted) = chosen.fitted.take().filter(|_| !args.job.searches()) {
        report.notes.insert(0, fitted);
    }
    if let Some(job) = from_design {
        report.notes.insert(
            0,
            format!(
                "the design's own job, as saved in its file: {} {}, TP {} × PP {} \
                 (--model asks another)",
                job.model,
                if job.serving { "serving" } else { "training" },
                job.tp,
                job.pp
            ),
        );
    }
    report.serving_layouts = serving_layouts.map(|ranked| {
        ranked
            .into_iter()
            .take(SERVING_LAYOUTS_SHOWN)
            .map(|l| ServingLayoutReport::new(&l))
            .collect()
    });
    if args.json {
        let mut text = serde_json::to_string_pretty(&report)?;
        text.push('\n');
        write_stdout(&text)
    } else {
        let mut table = report.to_table();
        if let Some(job) = &report.job {
            table.push_str(&job::job_table(job));
        }
        if let Some(layouts) = &report.serving_layouts {
            table.push_str(&serving_layouts_table(layouts, args.job.sequences()));
        }
        write_stdout(&table)
    }
}

/// The arguments with the design's job filling what they leave out, when they name no model;
/// with the job they took, to say so.
fn with_design_job(
    args: &WorkloadArgs,
    job: Option<&crate::model::JobSpec>,
) -> (WorkloadArgs, Option<crate::model::JobSpec>) {
    let mut filled = args.clone();
    let Some(job) = job.filter(|_| args.model.is_none()) else {
        return (filled, None);
    };
    filled.model = Some(job.model.clone());
    filled.tp = args.tp.or(Some(job.tp));
    filled.pp = args.pp.or(Some(job.pp));
    filled.ep = args.ep.or((job.ep > 0).then_some(job.ep));
    filled.serving = args.serving || job.serving;
    filled.precision = args.precision.or(Some(match job.precision {
        collective::Precision::Bf16 => PrecisionArg::Bf16,
        collective::Precision::Fp16 => PrecisionArg::Fp16,
        collective::Precision::Fp8 => PrecisionArg::Fp8,
        collective::Precision::Fp32 => PrecisionArg::Fp32,
    }));
    filled.job.fill_from(job);
    (filled, Some(job.clone()))
}
