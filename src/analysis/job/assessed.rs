//! The job figures the sidebar, `compare --model` and the report show beside a workload's
//! communication: the same step, in railyard's default framework settings (selective
//! recomputation, ZeRO-1, the published kernel efficiency unless the workload gives one, the
//! site's PUE and price, the default write-off period), reusing the communication the
//! assessment already timed.

use super::economics::{DEFAULT_AMORTISATION_YEARS, Economics, EconomicsInputs, Site, economics};
use super::finetune::TrainedWeights;
use super::serving::{ServingJob, ServingResult, serving};
use super::training::{TrainingJob, TrainingStep, training_step_with};
use super::{JobError, named_model};
use crate::analysis::collective::{Routing, SERVING_SEQUENCES, Workload, WorkloadResult};
use crate::model::job_spec::Finetune;
use crate::model::{Catalog, Design, JobSpec};
use serde::Serialize;

/// Prompt tokens per sequence the sidebar's serving figures assume.
pub const DEFAULT_PROMPT_TOKENS: u32 = 2048;

#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum JobOutcome {
    Training {
        step: Box<TrainingStep>,
        economics: Option<Economics>,
    },
    Serving(Box<ServingResult>),
}

impl JobOutcome {
    pub fn step_ms(&self) -> Option<f64> {
        match self {
            JobOutcome::Training { step, .. } => step.step_ms,
            JobOutcome::Serving(_) => None,
        }
    }

    /// Training's cost per token; serving's per output token at the decode bound (so a
    /// lower bound).
    pub fn usd_per_million_tokens(&self) -> Option<f64> {
        self.economics().map(|e| e.usd_per_million_tokens)
    }

    /// What the job's hours cost owned (None where its rate is unknown).
    pub fn economics(&self) -> Option<&Economics> {
        match self {
            JobOutcome::Training { economics, .. } => economics.as_ref(),
            JobOutcome::Serving(r) => r.economics.as_ref(),
        }
    }
}

/// The training job of a built-in workload in railyard's default framework settings, its
/// data-parallel size left to fill the GPUs; None for a model railyard does not know the
/// shape of. The layout search starts from it, so a layout it finds and the user pins shows
/// the figures the search found.
pub fn training_job_of_workload(w: &Workload) -> Option<TrainingJob> {
    let mut model = named_model(&w.name)?;
    model.seq_len = w.seq_len;
    let mut job = TrainingJob::new(model, w.tp, w.pp, w.global_batch);
    job.ep = w.moe.and_then(|m| m.ep);
    job.micro_batch = w.micro_batch;
    job.precision = w.precision;
    job.efficiency = w.efficiency;
    if let Some(recompute) = w.recompute {
        job.recompute = recompute;
    }
    if let Some(zero) = w.zero {
        job.zero = zero;
    }
    job.finetune = w.finetune;
    Some(job)
}

/// The workload of a design's job (`Design::job`): its built-in model in the job's layout,
/// precision and settings, with the parameters that train when only adapters do; None for a
/// model railyard does not know.
pub fn workload_of_job(job: &JobSpec) -> Option<Workload> {
    let mut w = Workload::named(&job.model)?;
    w.tp = job.tp.max(1);
    w.pp = job.pp.max(1);
    w.micro_batch = job.micro_batch.max(1);
    if let Some(moe) = &mut w.moe {
        moe.ep = (job.ep > 0).then_some(job.ep);
    }
    w.precision = job.precision;
    w.serving = job.serving;
    w.efficiency = job.efficiency;
    if job.serving {
        w.serving_batch = Some(job.serving_batch.max(1));
        w.weights = job.weights;
        w.memory_share = job.memory_share;
    } else {
        w.recompute = job.recompute;
        w.zero = job.zero;
        return with_adapters(w, job.finetune);
    }
    Some(w)
}

/// `w` training adapters on its frozen model (`finetune`), with the parameters that train and
/// the frozen weights' bytes from the model's shape; `w` itself when every weight trains or it
/// serves; None for a model railyard does not know the shape of.
pub fn with_adapters(mut w: Workload, finetune: Finetune) -> Option<Workload> {
    if finetune.is_full() || w.serving {
        return Some(w);
    }
    let weights = TrainedWeights::of(&named_model(&w.name)?, finetune);
    w.finetune = finetune;
    w.trained_params = Some(weights.trained_params);
    w.frozen_bytes = Some(weights.frozen_bytes);
    Some(w)
}

/// The job of a built-in workload `w` on the design, given its communication `comm`; None
/// for a model railyard does not know the shape of.
pub fn job_of_workload(
    design: &Design,
    catalog: &Catalog,
    w: &Workload,
    comm: &WorkloadResult,
    routing: Routing,
    (capital_usd, power_w): (f64, f64),
) -> Option<Result<JobOutcome, JobError>> {
    let mut model = named_model(&w.name)?;
    model.seq_len = w.seq_len;
    let ep = w.moe.and_then(|m| m.ep);
    if w.serving {
        let job = ServingJob {
            model,
            tp: w.tp,
            pp: w.pp,
            ep: ep.unwrap_or(1),
            batch: w.serving_batch.unwrap_or(SERVING_SEQUENCES),
            prompt: DEFAULT_PROMPT_TOKENS,
            precision: w.precision,
            efficiency: w.efficiency,
            weights: w.weights,
            memory_share: w.memory_share,
        };
        return Some(serving(design, catalog, &job, routing).map(|mut r| {
            r.economics = r.decode_tokens_per_s.map(|tokens_per_s| {
                default_economics(
                    tokens_per_s,
                    capital_usd,
                    power_w,
                    Site::of(design, catalog),
                )
            });
            JobOutcome::Serving(Box::new(r))
        }));
    }
    let mut job = training_job_of_workload(w)?;
    job.dp = Some(comm.mapping.dp);
    Some(
        training_step_with(comm.clone(), design, catalog, &job).map(|step| {
            let economics = step.tokens_per_s.map(|tokens_per_s| {
                default_economics(
                    tokens_per_s,
                    capital_usd,
                    power_w,
                    Site::of(design, catalog),
                )
            });
            JobOutcome::Training {
                step: Box::new(step),
                economics,
            }
        }),
    )
}

/// Money per token at the site's PUE and electricity price and the default write-off period.
fn default_economics(tokens_per_s: f64, capital_usd: f64, power_w: f64, site: Site) -> Economics {
    economics(&EconomicsInputs {
        tokens_per_s,
        tokens: None,
        capital_usd,
        power_w,
        pue: site.pue(),
        usd_per_kwh: site.usd_per_kwh(),
        amortisation_years: DEFAULT_AMORTISATION_YEARS,
        rent: None,
        energy_defaults: Some(site),
    })
}
