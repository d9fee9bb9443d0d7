//! The command line's clap definition: `Cli`, one `Command` variant per subcommand (each
//! subcommand's own arguments live in its file), and the value parsers and argument groups
//! several subcommands share.

use super::{
    bom, calibrate, catalog, check_cabling, compare, eval, export, generate, import, report, sweep,
    validate, workload,
};
use crate::analysis::collective::{self, AlgoChoice, CollectiveQuery, Op, Routing, parse_size};
use crate::io::export::ExportFormat;
use crate::io::link_colors::ColorMode;
use crate::model::{Bytes, Design, LibraryChoice, NcclBuffer, NcclRelease};
use clap::{Args, Parser, Subcommand};
use std::path::PathBuf;

#[derive(Debug, Parser)]
#[command(
    name = "railyard",
    version,
    about = "Design AI-cluster networks: draw or generate a GPU fabric, see bisection, cost and power.",
    long_about = None,
    after_help = "Without a command, railyard opens the designer window (with FILE, if given).\n\
                  Exit status: 0 success, 2 bad arguments or input, 1 the window could not open,\n\
                  3 check-cabling found faults."
)]
pub(super) struct Cli {
    /// A user parts catalog (RON) merged over the built-in one; its parts replace built-in
    /// parts with the same id.
    #[arg(long, global = true, value_name = "FILE")]
    pub(super) catalog: Option<PathBuf>,

    /// A design file to open in the designer.
    #[arg(value_name = "FILE")]
    pub(super) file: Option<PathBuf>,

    #[command(subcommand)]
    pub(super) command: Option<Command>,
}

#[derive(Debug, Subcommand)]
pub(super) enum Command {
    /// Write a design from a template.
    Generate(generate::GenerateArgs),
    /// Print a design's GPUs, bisection bandwidth, cost, power and checks.
    Eval(eval::EvalArgs),
    /// Collective time, algbw and busbw from 8 B to 8 GiB, as nccl-tests prints them.
    Sweep(sweep::SweepArgs),
    /// Write a design's bill of materials as CSV.
    Bom(bom::BomArgs),
    /// Compare designs side by side, with changes against a baseline.
    Compare(compare::CompareArgs),
    /// Draw a design as an SVG or PNG diagram, with a title block and a legend, or export
    /// it for other tools: a cable plan, NetBox, draw.io, Graphviz, containerlab, SimAI,
    /// htsim or ASTRA-sim.
    Export(export::ExportArgs),
    /// Write a Markdown report of a design (and a comparison with more designs), with its
    /// diagram as an SVG next to it.
    Report(report::ReportArgs),
    /// Communication time of one training step of a Llama or mixture-of-experts model on the
    /// design, next to what an ideal network would need, with the advice for that workload.
    Workload(workload::WorkloadArgs),
    /// Fit the design's technology efficiencies and latencies to an nccl-tests log and save
    /// the design with that calibration.
    Calibrate(calibrate::CalibrateArgs),
    /// Predict measured collective times and print predicted against measured, the error
    /// per row and the median: your own rows on your design, or (without a file) the public
    /// data sets shipped with railyard.
    Validate(validate::ValidateArgs),
    /// Compare what was cabled (`ibnetdiscover` output) with the design: missing, extra,
    /// swapped and miswired cables, the rails each breaks and what each costs.
    /// Exit status 3 when the fabric is not cabled as drawn.
    CheckCabling(check_cabling::CheckCablingArgs),
    /// Read a design from a draw.io file (our export round-trips), a Graphviz DOT file or
    /// a CSV edge list (device,device,technology,rate) and save it as a design file.
    Import(import::ImportArgs),
    /// List the parts catalog: id, category, model, price, power.
    Catalog(catalog::CatalogArgs),
}

/// The workload of `--model` (an id `parse_model` accepted) and `--serving`, in the model's
/// usual layout.
pub(super) fn chosen_workload(
    model: Option<&str>,
    serving: bool,
    efficiency: Option<f64>,
    weights: Option<collective::QuantizedWeights>,
    adapters: AdapterArgs,
) -> Option<collective::Workload> {
    let mut w = collective::Workload::named(model?)?;
    w.serving = serving;
    w.efficiency = efficiency;
    w.weights = weights;
    crate::analysis::job::with_adapters(w, adapters.finetune())
}

/// `--lora RANK` / `--qlora RANK` beside `--model`: the model's training job fine-tunes
/// adapters, as `workload --lora/--qlora` does.
#[derive(Debug, Clone, Copy, clap::Args)]
pub(super) struct AdapterArgs {
    /// With `--model`: train low-rank adapters of this rank on every linear layer of the
    /// frozen model's blocks (LoRA), as `workload --lora` does.
    #[arg(long, value_name = "RANK", requires = "model", conflicts_with_all = ["qlora", "serving"], value_parser = clap::value_parser!(u32).range(1..=1024))]
    lora: Option<u32>,
    /// With `--model`: as --lora, with the blocks' frozen weights in 4-bit NF4 (QLoRA).
    #[arg(long, value_name = "RANK", requires = "model", conflicts_with = "serving", value_parser = clap::value_parser!(u32).range(1..=1024))]
    qlora: Option<u32>,
}

impl AdapterArgs {
    pub(super) fn finetune(self) -> crate::model::job_spec::Finetune {
        finetune_of(self.lora, self.qlora)
    }
}

/// What `--lora RANK` or `--qlora RANK` trains: adapters of that rank, or every weight.
pub(super) fn finetune_of(
    lora: Option<u32>,
    qlora: Option<u32>,
) -> crate::model::job_spec::Finetune {
    use crate::model::job_spec::Finetune;
    match (lora, qlora) {
        (Some(rank), _) => Finetune::Lora { rank },
        (None, Some(rank)) => Finetune::Qlora { rank },
        (None, None) => Finetune::Full,
    }
}

/// Quantized serving weights: `int8` or `int4`.
pub(super) fn parse_weights(text: &str) -> Result<collective::QuantizedWeights, String> {
    collective::QuantizedWeights::ALL
        .into_iter()
        .find(|q| q.label().eq_ignore_ascii_case(text.trim()))
        .ok_or_else(|| format!("`{text}` is not a weight format (int8 or int4)"))
}

/// A kernel efficiency: a fraction of the GPUs' dense peak, above 0 and at most 1.
pub(super) fn parse_fraction(text: &str) -> Result<f64, String> {
    match text.parse::<f64>() {
        Ok(f) if f > 0.0 && f <= 1.0 => Ok(f),
        _ => Err(format!("`{text}` is not a fraction above 0 and at most 1")),
    }
}

/// A model id from `collective::MODELS`; a bare Llama size (`70`, `70B`) names its Llama.
pub(super) fn parse_model(text: &str) -> Result<String, String> {
    if text.ends_with(".ron") {
        return Ok(text.to_string());
    }
    let lower = text.to_ascii_lowercase();
    let id = match lower.trim_end_matches('b').parse::<u32>() {
        Ok(b) => format!("llama-{b}b"),
        Err(_) => lower,
    };
    match collective::Workload::named(&id) {
        Some(_) => Ok(id),
        None => {
            let ids: Vec<&str> = collective::MODELS.iter().map(|(id, _)| *id).collect();
            Err(format!(
                "no model `{text}`; one of 8, 70, 405 (Llama) or {}, or a model file of your own \
                 (FILE.ron)",
                ids.join(", ")
            ))
        }
    }
}

/// Which collective to model, and how.
#[derive(Debug, Clone, Args)]
pub(super) struct QueryArgs {
    /// all-reduce, all-gather, reduce-scatter, all-to-all, broadcast, reduce or sendrecv.
    #[arg(long, value_name = "OP", default_value = "all-reduce", value_parser = parse_op)]
    op: Op,
    /// Run on the first N GPUs (node order); all GPUs when absent.
    #[arg(long, value_name = "N", value_parser = clap::value_parser!(u32).range(1..))]
    gpus: Option<u32>,
    /// auto (the fastest, as NCCL's tuner picks), ring, tree, nvls, nvls-tree, sharp,
    /// hierarchical or direct.
    #[arg(long, value_name = "ALGO", default_value = "auto", value_parser = parse_algo)]
    algo: AlgoChoice,
    /// How flows spread over equal-cost paths: ecmp (hashed) or adaptive.
    #[arg(long, value_name = "ecmp|adaptive", default_value = "ecmp", value_parser = parse_routing)]
    routing: Routing,
    /// The collective library, over the design's own choice: auto (by node family), nccl,
    /// mlx-ring, mlx-jaccl or gloo.
    #[arg(long, value_name = "LIBRARY", value_parser = parse_library)]
    library: Option<LibraryChoice>,
    /// The NCCL release the jobs run (e.g. 2.21.5), over the design's own: its latency
    /// tables, NVLS and LL128 rules; the model's other figures are 2.30.7's.
    #[arg(long, value_name = "RELEASE", value_parser = parse_nccl_release)]
    nccl: Option<NcclRelease>,
    /// NCCL_BUFFSIZE the jobs run with (e.g. 8M, as AWS's and Google's recipes set), over
    /// the design's own: a tree forwards one eighth of it at a time.
    #[arg(long, value_name = "SIZE", value_parser = parse_nccl_buffer)]
    nccl_buffsize: Option<NcclBuffer>,
}

impl QueryArgs {
    /// The design as this run models it: with `--library`, that library; with `--nccl`,
    /// that release.
    pub(super) fn design_for_run(&self, mut design: Design) -> Design {
        if let Some(choice) = self.library {
            design.library = choice;
        }
        if self.nccl.is_some() {
            design.nccl_release = self.nccl;
        }
        if self.nccl_buffsize.is_some() {
            design.nccl_buffer = self.nccl_buffsize;
        }
        design
    }

    pub(super) fn query(&self, bytes: Bytes) -> CollectiveQuery {
        let mut q = CollectiveQuery::new(self.op, bytes);
        q.gpus = self.gpus;
        q.algorithm = self.algo;
        q.routing = self.routing;
        q
    }
}

pub(super) fn parse_op(text: &str) -> Result<Op, String> {
    Op::from_cli_name(text).ok_or_else(|| {
        format!(
            "`{text}` is not a collective; one of all-reduce, all-gather, reduce-scatter, \
             all-to-all, broadcast, reduce, sendrecv"
        )
    })
}

pub(super) fn parse_export_format(text: &str) -> Result<ExportFormat, String> {
    text.parse()
}

pub(super) fn parse_color_mode(text: &str) -> Result<ColorMode, String> {
    text.parse()
}

pub(super) fn parse_bytes(text: &str) -> Result<Bytes, String> {
    match parse_size(text) {
        Ok(Bytes(0)) => Err("the size must be at least 1 byte".into()),
        Ok(bytes) => Ok(bytes),
        Err(e) => Err(e.to_string()),
    }
}

pub(super) fn parse_algo(text: &str) -> Result<AlgoChoice, String> {
    AlgoChoice::from_cli_name(text).ok_or_else(|| {
        format!(
            "`{text}` is not an algorithm; one of auto, ring, tree, nvls, nvls-tree, sharp, \
             hierarchical, direct"
        )
    })
}

pub(super) fn parse_nccl_release(text: &str) -> Result<NcclRelease, String> {
    text.parse()
        .map_err(|e: crate::model::nccl_release::ReleaseError| e.to_string())
}

pub(super) fn parse_nccl_buffer(text: &str) -> Result<NcclBuffer, String> {
    let bytes = parse_size(text).map_err(|e| e.to_string())?;
    NcclBuffer::new(bytes.0).map_err(|e| e.to_string())
}

pub(super) fn parse_library(text: &str) -> Result<LibraryChoice, String> {
    LibraryChoice::from_key(text).ok_or_else(|| {
        format!("`{text}` is not a library; one of auto, nccl, mlx-ring, mlx-jaccl, gloo")
    })
}

pub(super) fn parse_routing(text: &str) -> Result<Routing, String> {
    Routing::from_cli_name(text)
        .ok_or_else(|| format!("`{text}` is not a routing; one of ecmp, adaptive"))
}

/// A number above 0 (a price, a period).
pub(super) fn parse_positive(text: &str) -> Result<f64, String> {
    match text.parse::<f64>() {
        Ok(f) if f.is_finite() && f > 0.0 => Ok(f),
        _ => Err(format!("`{text}` must be a number above 0")),
    }
}

/// A power usage effectiveness: 1 to 5.
pub(super) fn parse_pue(text: &str) -> Result<f64, String> {
    match text.parse::<f64>() {
        Ok(f) if (1.0..=5.0).contains(&f) => Ok(f),
        _ => Err(format!("`{text}` is not a PUE (1 to 5)")),
    }
}

/// A number of at least 0 (a price).
pub(super) fn parse_non_negative(text: &str) -> Result<f64, String> {
    match text.parse::<f64>() {
        Ok(f) if f.is_finite() && f >= 0.0 => Ok(f),
        _ => Err(format!("`{text}` must be a number of at least 0")),
    }
}
