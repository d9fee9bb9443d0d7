//! The command line: the same binary opens the designer or runs one job and exits.
//!
//! ```text
//! railyard [FILE]                     open the designer (with FILE)
//! railyard generate TEMPLATE -o FILE  write a design from a template
//! railyard eval FILE [--json]         counts, bisection, cost, power, checks, collective, advice
//! railyard sweep FILE [--json]        collective time from 8 B to 8 GiB, as nccl-tests prints it
//! railyard bom FILE [-o FILE.csv] [--currency LABEL] [--discount FRACTION]
//!                                     bill of materials as CSV
//! railyard compare A B [...] [--markdown | --csv] [--bytes SIZE] [--baseline K]
//!                                     designs side by side, changes against a baseline
//! railyard export FILE -o FILE.svg|FILE.png [--color technology|rail|tier|heatmap] [--scale K]
//!                                     the diagram as SVG or PNG, with a title and a legend
//! railyard export FILE [-o OUT] --format cables|netbox|drawio|dot|containerlab
//!                                     cable plan CSV, NetBox import CSVs, draw.io, DOT, containerlab
//! railyard report FILE [MORE ...] -o FILE.md
//!                                     Markdown report (and its SVG diagram next to it)
//! railyard workload FILE [--model 8|70|405|ID] [--tp N] [--pp N] [--dp N] [--ep N] [--serving] [--json]
//!                                     a training step's communication against an ideal network
//! railyard calibrate FILE --from LOG -o OUT.ron [--json]
//! railyard validate [MEASURED.csv --design D.ron | --systems S.csv] [--json | --markdown]
//!                                     fit efficiencies and latencies to an nccl-tests log
//! railyard check-cabling FILE --from LISTING [--map NAMES.csv] [--json]
//!                                     the fabric as cabled (ibnetdiscover) against the design
//! railyard catalog [--json]           the parts catalog
//! ```
//!
//! Exit status: 0 on success; 2 on bad arguments or bad input (a file that does not load,
//! a template that cannot be built), with one line `railyard: <message>` on stderr;
//! 1 when the designer window cannot open; 3 when `check-cabling` finds the fabric not
//! cabled as drawn. The JSON written by `eval --json`,
//! `workload --json` and `catalog --json` is defined here (`EvalReport`, `WorkloadReport`,
//! `CatalogEntry`) and nowhere else.

use crate::analysis::checks::Severity;
use crate::analysis::collective::{
    self, AlgoChoice, CollectiveError, CollectiveQuery, CollectiveResult, Op, Routing, parse_size,
};
use crate::analysis::cost::bom_lines;
use crate::analysis::{Metrics, Question, assess};
use crate::generate::{Template, TemplateSpec, generate};
use crate::io::bom::{BomOptions, write_bom_csv};
use crate::io::design_file::{design_to_string, save_design, write_atomically};
use crate::io::export::ExportFormat;
use crate::io::link_colors::ColorMode;
use crate::io::load_design;
use crate::model::units::{group_thousands, time_text, trim_number};
use crate::model::validate::MAX_GPUS;
use crate::model::{Bytes, Catalog, Design, PartId, Transport};
use anyhow::{Context, bail};
use clap::builder::{PossibleValuesParser, TypedValueParser};
use clap::{Args, Parser, Subcommand, ValueEnum};
use serde::Serialize;
use std::io::Write as _;
use std::path::{Path, PathBuf};
use std::process::ExitCode;

mod calibrate;
mod check_cabling;
mod export;
mod job;
mod validate;

/// Most nodes `generate` accepts (for `nvl72`, racks count as 18 nodes each); with the
/// GPUs-per-node limit below, designs stay within `MAX_GPUS` (2,000,000).
pub const MAX_NODES: u32 = 262_144;
/// Most GPUs per node `generate` accepts.
pub const MAX_GPUS_PER_NODE: u32 = 64;

const EXIT_BAD_INPUT: u8 = 2;
const EXIT_DESIGNER_FAILED: u8 = 1;

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
struct Cli {
    /// A user parts catalog (RON) merged over the built-in one; its parts replace built-in
    /// parts with the same id.
    #[arg(long, global = true, value_name = "FILE")]
    catalog: Option<PathBuf>,

    /// A design file to open in the designer.
    #[arg(value_name = "FILE")]
    file: Option<PathBuf>,

    #[command(subcommand)]
    command: Option<Command>,
}

#[derive(Debug, Subcommand)]
enum Command {
    /// Write a design from a template.
    Generate(GenerateArgs),
    /// Print a design's GPUs, bisection bandwidth, cost, power and checks.
    Eval {
        /// The design file.
        file: PathBuf,
        /// One JSON object instead of a table.
        #[arg(long)]
        json: bool,
        /// Message size: a whole number of bytes with an optional K, M, G, T suffix
        /// (binary multiples): 8, 64K, 1M, 8GiB.
        #[arg(long, value_name = "SIZE", default_value = "1GiB", value_parser = parse_bytes)]
        bytes: Bytes,
        #[command(flatten)]
        query: QueryArgs,
    },
    /// Collective time, algbw and busbw from 8 B to 8 GiB, as nccl-tests prints them.
    Sweep {
        /// The design file.
        file: PathBuf,
        /// A JSON array of rows instead of a table.
        #[arg(long)]
        json: bool,
        #[command(flatten)]
        query: QueryArgs,
    },
    /// Write a design's bill of materials as CSV.
    Bom {
        /// The design file.
        file: PathBuf,
        /// Where to write the CSV; standard output when absent.
        #[arg(short, long, value_name = "FILE.csv")]
        output: Option<PathBuf>,
        /// Label for the price columns (`unit_price_eur`); prices are not converted.
        #[arg(long, value_name = "LABEL", default_value = "USD")]
        currency: String,
        /// Fraction taken off every list price: 0.15 for 15 % off.
        #[arg(long, value_name = "FRACTION", default_value_t = 0.0, value_parser = parse_discount)]
        discount: f64,
    },
    /// Compare designs side by side, with changes against a baseline.
    Compare {
        /// Two or more design files; each becomes a column named after the file.
        #[arg(value_name = "FILE", num_args = 2.., required = true)]
        files: Vec<PathBuf>,
        /// A Markdown table.
        #[arg(long, conflicts_with = "csv")]
        markdown: bool,
        /// CSV with raw values and deltas (fractions).
        #[arg(long)]
        csv: bool,
        /// Message size of the collective rows (all-reduce, all-to-all).
        #[arg(long, value_name = "SIZE", default_value = "1GiB", value_parser = parse_bytes)]
        bytes: Bytes,
        /// Which file the changes are taken against, counting from 1.
        #[arg(long, value_name = "K", default_value_t = 1, value_parser = clap::value_parser!(u32).range(1..))]
        baseline: u32,
        /// Add rows for this model's communication per step (as `workload --model`, in its
        /// usual parallel layout) and its excess over an ideal network.
        #[arg(long, value_name = "MODEL", value_parser = parse_model)]
        model: Option<String>,
        /// With `--model`: serving replicas (one decode step) rather than training.
        #[arg(long, requires = "model")]
        serving: bool,
    },
    /// Draw a design as an SVG or PNG diagram, with a title block and a legend, or export
    /// it for other tools: a cable plan, NetBox, draw.io, Graphviz, containerlab, SimAI,
    /// htsim or ASTRA-sim.
    Export {
        /// The design file.
        file: PathBuf,
        /// The file to write; its extension names the format unless --format does: .svg,
        /// .png, .csv (the cable plan; the BOM is `railyard bom`), .drawio, .dot or .gv,
        /// .yml or .yaml (containerlab), .simai (SimAI), .topo (htsim), .astra.yml
        /// (ASTRA-sim). NetBox writes a folder. `-` is standard output. Without -o, the
        /// output goes next to the design file (needs --format).
        #[arg(short, long, value_name = "OUT")]
        output: Option<PathBuf>,
        /// svg, png, cables, netbox, drawio, dot, containerlab, simai, htsim or astra-sim.
        #[arg(long, value_name = "FORMAT", value_parser = parse_export_format)]
        format: Option<ExportFormat>,
        /// What link colours show: technology, rail, tier or heatmap (load in an all-reduce).
        #[arg(long, value_name = "MODE", default_value = "technology", value_parser = parse_color_mode)]
        color: ColorMode,
        /// The same as `--color heatmap`.
        #[arg(long, conflicts_with = "color")]
        heatmap: bool,
        /// Message size of the heatmap's all-reduce (default 1 GiB).
        #[arg(long, value_name = "SIZE", value_parser = parse_bytes)]
        bytes: Option<Bytes>,
        /// Pixels per diagram unit of a PNG, 1 to 4.
        #[arg(long, value_name = "K", value_parser = clap::value_parser!(u32).range(1..=4))]
        scale: Option<u32>,
    },
    /// Write a Markdown report of a design (and a comparison with more designs), with its
    /// diagram as an SVG next to it.
    Report {
        /// The design file, then any designs to compare it with.
        #[arg(value_name = "FILE", num_args = 1.., required = true)]
        files: Vec<PathBuf>,
        /// The Markdown file to write; the diagram goes next to it with `.svg` (`-` prints
        /// the report without a diagram).
        #[arg(short, long, value_name = "FILE.md")]
        output: PathBuf,
        /// Message size of the collectives.
        #[arg(long, value_name = "SIZE", default_value = "1GiB", value_parser = parse_bytes)]
        bytes: Bytes,
        /// Add a workload section for this model (as `workload --model`), in its usual
        /// parallel layout.
        #[arg(long, value_name = "MODEL", value_parser = parse_model)]
        model: Option<String>,
        /// With `--model`: serving replicas (one decode step) rather than training.
        #[arg(long, requires = "model")]
        serving: bool,
    },
    /// Communication time of one training step of a Llama or mixture-of-experts model on the
    /// design, next to what an ideal network would need, with the advice for that workload.
    Workload(WorkloadArgs),
    /// Fit the design's technology efficiencies and latencies to an nccl-tests log and save
    /// the design with that calibration.
    Calibrate {
        /// The design file.
        file: PathBuf,
        /// nccl-tests output as printed (all_reduce_perf and friends).
        #[arg(long, value_name = "LOG")]
        from: PathBuf,
        /// Where to write the calibrated design (`-` for standard output).
        #[arg(short, long, value_name = "OUT.ron")]
        output: PathBuf,
        /// The collective, when the log does not name its test.
        #[arg(long, value_name = "OP", value_parser = parse_op)]
        op: Option<Op>,
        /// Ranks of the run, when the log does not list them.
        #[arg(long, value_name = "N", value_parser = clap::value_parser!(u32).range(2..))]
        gpus: Option<u32>,
        /// Print the fit as JSON instead of a table.
        #[arg(long)]
        json: bool,
    },
    /// Predict measured collective times and print predicted against measured, the error
    /// per row and the median: your own rows on your design, or (without a file) the public
    /// data sets shipped with railyard.
    Validate {
        /// Measured rows as CSV (the columns of assets/validation/measured.csv).
        #[arg(value_name = "MEASURED.csv", requires = "on")]
        file: Option<PathBuf>,
        /// The design every row ran on.
        #[arg(long, value_name = "FILE.ron", group = "on")]
        design: Option<PathBuf>,
        /// Which design each row ran on: CSV of prefix (of the row ids), design, assumes.
        #[arg(long, value_name = "SYSTEMS.csv", group = "on")]
        systems: Option<PathBuf>,
        /// One JSON object instead of a table.
        #[arg(long, conflicts_with = "markdown")]
        json: bool,
        /// A Markdown page (what docs/validation.md is).
        #[arg(long)]
        markdown: bool,
        /// Training step times against Megatron-LM's published runs instead (the page
        /// docs/training-validation.md is its `--markdown` output).
        #[arg(long, conflicts_with_all = ["file", "design", "systems"])]
        training: bool,
    },
    /// Compare what was cabled (`ibnetdiscover` output) with the design: missing, extra,
    /// swapped and miswired cables, the rails each breaks and what each costs.
    /// Exit status 3 when the fabric is not cabled as drawn.
    CheckCabling(check_cabling::CheckCablingArgs),
    /// List the parts catalog: id, category, model, price, power.
    Catalog {
        /// A JSON array instead of a table.
        #[arg(long)]
        json: bool,
    },
}

#[derive(Debug, Args)]
struct WorkloadArgs {
    /// The design file.
    file: PathBuf,
    /// The model: a Llama 3 size in billions (8, 70, 405) or an id: llama-8b, llama-70b,
    /// llama-405b, mixtral-8x7b, deepseek-v3 (the last two mixtures of experts).
    #[arg(long, value_name = "MODEL", default_value = "70", value_parser = parse_model)]
    model: String,
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
    #[arg(long, value_enum, default_value = "bf16")]
    precision: PrecisionArg,
    /// How flows spread over equal-cost paths: ecmp (hashed) or adaptive.
    #[arg(long, value_name = "ecmp|adaptive", default_value = "ecmp", value_parser = parse_routing)]
    routing: Routing,
    /// One JSON object instead of a table.
    #[arg(long)]
    json: bool,
    #[command(flatten)]
    job: job::JobArgs,
}

#[derive(Debug, Clone, Copy, ValueEnum)]
enum PrecisionArg {
    Bf16,
    Fp16,
    Fp8,
    Fp32,
}

/// The workload of `--model` (an id `parse_model` accepted) and `--serving`, in the model's
/// usual layout.
fn chosen_workload(model: Option<&str>, serving: bool) -> Option<collective::Workload> {
    let mut w = collective::Workload::named(model?)?;
    w.serving = serving;
    Some(w)
}

/// A model id from `collective::MODELS`; a bare Llama size (`70`, `70B`) names its Llama.
fn parse_model(text: &str) -> Result<String, String> {
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
                "no model `{text}`; one of 8, 70, 405 (Llama) or {}",
                ids.join(", ")
            ))
        }
    }
}

/// Which collective to model, and how.
#[derive(Debug, Clone, Args)]
struct QueryArgs {
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
}

impl QueryArgs {
    fn query(&self, bytes: Bytes) -> CollectiveQuery {
        let mut q = CollectiveQuery::new(self.op, bytes);
        q.gpus = self.gpus;
        q.algorithm = self.algo;
        q.routing = self.routing;
        q
    }
}

fn parse_op(text: &str) -> Result<Op, String> {
    Op::from_cli_name(text).ok_or_else(|| {
        format!(
            "`{text}` is not a collective; one of all-reduce, all-gather, reduce-scatter, \
             all-to-all, broadcast, reduce, sendrecv"
        )
    })
}

fn parse_export_format(text: &str) -> Result<ExportFormat, String> {
    text.parse()
}

fn parse_color_mode(text: &str) -> Result<ColorMode, String> {
    text.parse()
}

fn parse_bytes(text: &str) -> Result<Bytes, String> {
    match parse_size(text) {
        Ok(Bytes(0)) => Err("the size must be at least 1 byte".into()),
        Ok(bytes) => Ok(bytes),
        Err(e) => Err(e.to_string()),
    }
}

fn parse_algo(text: &str) -> Result<AlgoChoice, String> {
    AlgoChoice::from_cli_name(text).ok_or_else(|| {
        format!(
            "`{text}` is not an algorithm; one of auto, ring, tree, nvls, nvls-tree, sharp, \
             hierarchical, direct"
        )
    })
}

fn parse_routing(text: &str) -> Result<Routing, String> {
    Routing::from_cli_name(text)
        .ok_or_else(|| format!("`{text}` is not a routing; one of ecmp, adaptive"))
}

#[derive(Debug, Clone, Copy, ValueEnum)]
enum TransportArg {
    Tcp,
    Rdma,
}

#[derive(Debug, Args)]
struct GenerateArgs {
    /// The topology template.
    #[arg(value_name = "TEMPLATE", value_parser = template_parser())]
    template: Template,
    /// Number of GPU nodes (for nvl72: racks).
    #[arg(long, value_name = "N", value_parser = parse_nodes)]
    nodes: Option<u32>,
    /// Node part id (`railyard catalog` lists them).
    #[arg(long, value_name = "ID")]
    node: Option<String>,
    /// GPU part id.
    #[arg(long, value_name = "ID")]
    gpu: Option<String>,
    /// GPUs in each node.
    #[arg(long, value_name = "N", value_parser = clap::value_parser!(u32).range(1..=i64::from(MAX_GPUS_PER_NODE)))]
    gpus_per_node: Option<u32>,
    /// PCIe generation of the GPU slots.
    #[arg(long = "pcie-gen", value_name = "3|4|5", value_parser = clap::value_parser!(u8).range(3..=5))]
    pcie_gen: Option<u8>,
    /// Join GPUs in pairs with NVLink bridges.
    #[arg(long)]
    nvlink_bridge: bool,
    /// NIC part id.
    #[arg(long, value_name = "ID")]
    nic: Option<String>,
    /// Scale-out NICs in each node (rails, on rail templates).
    #[arg(long, value_name = "K", value_parser = clap::value_parser!(u32).range(0..=64))]
    nics_per_node: Option<u32>,
    /// Transport over Ethernet and Thunderbolt links.
    #[arg(long, value_enum)]
    transport: Option<TransportArg>,
    /// Switch part id.
    #[arg(long, value_name = "ID")]
    switch: Option<String>,
    /// Cable or link part id for ring, chain and mesh (tb4, tb5, a DAC id...).
    #[arg(long, value_name = "ID")]
    link: Option<String>,
    /// Leaf downlink to uplink bandwidth ratio; 1 is non-blocking.
    #[arg(long, value_name = "R", default_value_t = 1.0, value_parser = parse_ratio)]
    oversubscription: f64,
    /// Switch tiers of a fat-tree.
    #[arg(long, value_name = "2|3", default_value_t = 2, value_parser = clap::value_parser!(u8).range(2..=3))]
    tiers: u8,
    /// The design file to write (`-` for standard output).
    #[arg(short, long, value_name = "FILE")]
    output: PathBuf,
}

fn template_parser() -> impl TypedValueParser<Value = Template> {
    PossibleValuesParser::new(Template::ALL.map(Template::cli_name)).try_map(|name| {
        Template::from_cli_name(&name).ok_or_else(|| format!("unknown template `{name}`"))
    })
}

fn parse_nodes(text: &str) -> Result<u32, String> {
    let n: u32 = text
        .parse()
        .map_err(|_| format!("`{text}` is not a whole number"))?;
    if n == 0 {
        return Err("at least one node is needed".into());
    }
    if n > MAX_NODES {
        return Err(format!(
            "over the limit of {} nodes per design",
            group_thousands(i64::from(MAX_NODES))
        ));
    }
    Ok(n)
}

fn parse_ratio(text: &str) -> Result<f64, String> {
    match text.parse::<f64>() {
        Ok(r) if r.is_finite() && r > 0.0 && r <= 1000.0 => Ok(r),
        _ => Err(format!("`{text}` is not a ratio between 0 and 1000")),
    }
}

/// Runs the command line and returns the process exit status.
/// Parses `args` (program name first) exactly as the binary does, without running anything:
/// for the fuzz target and tests. The error is clap's, as the binary would print it.
pub fn check_args<I, T>(args: I) -> Result<(), clap::Error>
where
    I: IntoIterator<Item = T>,
    T: Into<std::ffi::OsString> + Clone,
{
    Cli::try_parse_from(args).map(|_| ())
}

pub fn main() -> ExitCode {
    let cli = match Cli::try_parse() {
        Ok(cli) => cli,
        Err(e) => return clap_exit(&e),
    };
    if cli.command.is_none() {
        if cli.catalog.is_some() {
            eprintln!("railyard: note: the designer does not read --catalog yet; ignoring it");
        }
        return open_designer(cli.file);
    }
    match run(cli) {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) if is_broken_pipe(&e) => ExitCode::SUCCESS,
        Err(e) if e.is::<check_cabling::FaultsFound>() => {
            ExitCode::from(check_cabling::EXIT_FAULTS_FOUND)
        }
        Err(e) => {
            eprintln!("railyard: {}", one_line(&e));
            ExitCode::from(EXIT_BAD_INPUT)
        }
    }
}

#[cfg(feature = "gui")]
fn open_designer(file: Option<PathBuf>) -> ExitCode {
    match crate::app::run(file) {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("railyard: {}", one_line(&e));
            ExitCode::from(EXIT_DESIGNER_FAILED)
        }
    }
}

#[cfg(not(feature = "gui"))]
fn open_designer(_file: Option<PathBuf>) -> ExitCode {
    eprintln!(
        "railyard: this build has no designer window (built without the `gui` feature); \
         give a command (railyard --help lists them)"
    );
    ExitCode::from(EXIT_DESIGNER_FAILED)
}

/// Help and version go to stdout with status 0; usage errors become one line and status 2.
fn clap_exit(e: &clap::Error) -> ExitCode {
    use clap::error::ErrorKind;
    if matches!(
        e.kind(),
        ErrorKind::DisplayHelp
            | ErrorKind::DisplayVersion
            | ErrorKind::DisplayHelpOnMissingArgumentOrSubcommand
    ) {
        let _ = e.print();
        return if e.kind() == ErrorKind::DisplayHelpOnMissingArgumentOrSubcommand {
            ExitCode::from(EXIT_BAD_INPUT)
        } else {
            ExitCode::SUCCESS
        };
    }
    // clap's text is "error: <what>" then possibly indented detail lines, a blank line,
    // tips and usage; keep the first paragraph as one line.
    let text = e.render().to_string();
    let first_paragraph: Vec<&str> = text
        .lines()
        .skip_while(|l| l.trim().is_empty())
        .take_while(|l| !l.trim().is_empty())
        .map(str::trim)
        .collect();
    let message = first_paragraph.join(" ");
    let message = message.strip_prefix("error: ").unwrap_or(&message);
    eprintln!("railyard: {message} (see railyard --help)");
    ExitCode::from(EXIT_BAD_INPUT)
}

/// The error and its causes on one line, skipping a cause the message already quotes
/// (file errors name their I/O cause themselves).
fn one_line(e: &anyhow::Error) -> String {
    let mut text = String::new();
    for cause in e.chain() {
        let part = cause.to_string();
        if text.contains(&part) {
            continue;
        }
        if !text.is_empty() {
            text.push_str(": ");
        }
        text.push_str(&part);
    }
    text.replace(['\n', '\r'], " ")
}

/// "1 switch", "24 switches".
fn count_of(n: usize, one: &str, many: &str) -> String {
    format!(
        "{} {}",
        group_thousands(n as i64),
        if n == 1 { one } else { many }
    )
}

fn is_broken_pipe(e: &anyhow::Error) -> bool {
    e.chain().any(|cause| {
        cause
            .downcast_ref::<std::io::Error>()
            .is_some_and(|io| io.kind() == std::io::ErrorKind::BrokenPipe)
    })
}

fn run(cli: Cli) -> anyhow::Result<()> {
    if let Some(file) = &cli.file {
        bail!(
            "give a design FILE or a command, not both (got {} and a command)",
            file.display()
        );
    }
    let catalog = load_catalog(cli.catalog.as_deref())?;
    match cli.command {
        None => Ok(()),
        Some(Command::Generate(args)) => run_generate(&args, &catalog),
        Some(Command::Eval {
            file,
            json,
            bytes,
            query,
        }) => run_eval(&file, json, &query.query(bytes), &catalog),
        Some(Command::Sweep { file, json, query }) => {
            run_sweep(&file, json, &query.query(Bytes(1 << 30)), &catalog)
        }
        Some(Command::Bom {
            file,
            output,
            currency,
            discount,
        }) => {
            let options = BomOptions {
                currency_label: currency,
                discount,
            };
            run_bom(&file, output.as_deref(), &options, &catalog)
        }
        Some(Command::Compare {
            files,
            markdown,
            csv,
            bytes,
            baseline,
            model,
            serving,
        }) => {
            let workload = chosen_workload(model.as_deref(), serving);
            let format = if markdown {
                TableFormat::Markdown
            } else if csv {
                TableFormat::Csv
            } else {
                TableFormat::Text
            };
            run_compare(&files, format, bytes, baseline, workload.as_ref(), &catalog)
        }
        Some(Command::Export {
            file,
            output,
            format,
            color,
            heatmap,
            bytes,
            scale,
        }) => {
            let mode = if heatmap { ColorMode::Heatmap } else { color };
            let (format, output) = export::resolve(&file, output, format)?;
            if matches!(format, ExportFormat::Svg | ExportFormat::Png) {
                run_export(&file, &output, mode, bytes, scale, &catalog)
            } else if mode != ColorMode::Technology || bytes.is_some() || scale.is_some() {
                bail!("--color, --heatmap, --bytes and --scale are for SVG and PNG")
            } else {
                export::run(&file, &output, format, &catalog)
            }
        }
        Some(Command::Report {
            files,
            output,
            bytes,
            model,
            serving,
        }) => {
            let workload = chosen_workload(model.as_deref(), serving);
            run_report(&files, &output, bytes, workload.as_ref(), &catalog)
        }
        Some(Command::Catalog { json }) => run_catalog(json, &catalog),
        Some(Command::Validate {
            file,
            design,
            systems,
            json,
            markdown,
            training,
        }) => {
            if training {
                return validate::run_training(json, markdown, &catalog);
            }
            let format = if json {
                validate::Format::Json
            } else if markdown {
                validate::Format::Markdown
            } else {
                validate::Format::Text
            };
            let source = match &file {
                Some(f) => validate::file_source(f, design.as_ref(), systems.as_ref()),
                None => validate::Source::Public,
            };
            validate::run(source, format, &catalog)
        }
        Some(Command::Workload(args)) => run_workload(&args, &catalog),
        Some(Command::CheckCabling(args)) => check_cabling::run(&args, &catalog),
        Some(Command::Calibrate {
            file,
            from,
            output,
            op,
            gpus,
            json,
        }) => calibrate::run(&file, &from, &output, op, gpus, json, &catalog),
    }
}

fn load_catalog(user: Option<&Path>) -> anyhow::Result<Catalog> {
    let mut catalog = Catalog::builtin();
    if let Some(path) = user {
        let text = std::fs::read_to_string(path)
            .with_context(|| format!("could not read catalog {}", path.display()))?;
        catalog.merge_text(&text, &path.display().to_string())?;
    }
    Ok(catalog)
}

fn write_stdout(text: &str) -> anyhow::Result<()> {
    let mut out = std::io::stdout().lock();
    out.write_all(text.as_bytes())?;
    out.flush()?;
    Ok(())
}

fn part(id: &Option<String>) -> Option<PartId> {
    id.as_deref().map(PartId::new)
}

fn run_generate(args: &GenerateArgs, catalog: &Catalog) -> anyhow::Result<()> {
    let mut spec = TemplateSpec::new(args.template);
    spec.nodes = args.nodes;
    spec.node = part(&args.node);
    spec.gpu = part(&args.gpu);
    spec.gpus_per_node = args.gpus_per_node;
    spec.pcie_generation = args.pcie_gen;
    spec.nvlink_bridge = args.nvlink_bridge;
    spec.nic = part(&args.nic);
    spec.nics_per_node = args.nics_per_node;
    spec.transport = args.transport.map(|t| match t {
        TransportArg::Tcp => Transport::Tcp,
        TransportArg::Rdma => Transport::Rdma,
    });
    spec.switch = part(&args.switch);
    spec.link = part(&args.link);
    spec.oversubscription = args.oversubscription;
    spec.tiers = args.tiers;

    // Refuse a design over the GPU limit before building it, not after.
    if let (Some(nodes), Some(per_node)) = (args.nodes, args.gpus_per_node) {
        let gpus = u64::from(nodes) * u64::from(per_node);
        if gpus > MAX_GPUS {
            bail!(
                "{} nodes × {per_node} GPUs is {} GPUs, over the limit of {} per design",
                group_thousands(i64::from(nodes)),
                group_thousands(gpus as i64),
                group_thousands(MAX_GPUS as i64)
            );
        }
    }

    let design = generate(&spec, catalog)
        .with_context(|| format!("cannot build `{}`", args.template.cli_name()))?;
    let summary = format!(
        "{} in {}, {}, {}",
        count_of(design.gpu_count() as usize, "GPU", "GPUs"),
        count_of(design.node_count(), "node", "nodes"),
        count_of(design.switch_count(), "switch", "switches"),
        count_of(design.links.len(), "link", "links"),
    );
    if args.output.as_os_str() == "-" {
        // The same refusal as `save_design`: never print a design that would not load.
        if let Err(errors) = crate::model::validate::validate(&design) {
            let list: Vec<String> = errors.iter().map(ToString::to_string).collect();
            bail!(
                "the generated design is invalid (a bug): {}",
                list.join("; ")
            );
        }
        write_stdout(&design_to_string(&design)?)?;
    } else {
        save_design(&args.output, &design)?;
        eprintln!("railyard: wrote {}: {summary}", args.output.display());
    }
    Ok(())
}

fn load(file: &Path) -> anyhow::Result<Design> {
    Ok(load_design(file)?)
}

/// Cost in US dollars by category, as `eval --json` prints it.
#[derive(Debug, Clone, Serialize)]
pub struct CostReport {
    pub total: f64,
    /// Nodes, and GPUs bought separately.
    pub nodes: f64,
    pub switches: f64,
    pub nics: f64,
    pub cables_optics: f64,
    /// NVSwitch domain racks (NVL72 and the like).
    pub nvswitch: f64,
    pub other: f64,
}

/// One design check, as `eval --json` prints it.
#[derive(Debug, Clone, Serialize)]
pub struct CheckReport {
    /// `error`, `warning` or `info`.
    pub severity: &'static str,
    pub code: &'static str,
    pub message: String,
}

/// One busy resource of a collective, as `eval --json` prints it.
#[derive(Debug, Clone, Serialize)]
pub struct BottleneckReport {
    /// What the resource is: a drawn link (`l3 node-1 – leaf-0`) or a node's NVLink/PCIe.
    pub link: String,
    /// The drawn link's id (`l3`); null for resources inside a node.
    pub link_id: Option<String>,
    /// Busy time over the bandwidth part of the collective: 1 for the bottleneck.
    pub utilization: f64,
}

/// The modelled collective, as `eval --json` prints it.
#[derive(Debug, Clone, Serialize)]
pub struct CollectiveReport {
    /// `all-reduce`, `all-gather`, ...
    pub op: &'static str,
    /// nccl-tests' size: the whole buffer.
    pub bytes: u64,
    pub gpus: u32,
    /// `ring`, `tree`, `nvls`, `nvls-tree`, `sharp`, `hierarchical` or `direct`.
    pub algorithm: &'static str,
    /// `LL`, `LL128` or `Simple`.
    pub protocol: &'static str,
    pub routing: &'static str,
    pub time_us: f64,
    pub latency_us: f64,
    /// nccl-tests' algbw and busbw, in GB/s (bytes).
    pub algbw_gbyte_s: f64,
    pub busbw_gbyte_s: f64,
    /// The busiest resources, busiest first (at most five).
    pub bottleneck: Vec<BottleneckReport>,
    /// The collective library (`nccl`, `mlx-ring`, `mlx-jaccl`), what the model assumes of it,
    /// and why this algorithm and protocol.
    pub library: collective::Library,
    pub assumes: &'static str,
    pub why: String,
}

/// Resources listed in `bottleneck`.
const BOTTLENECK_ROWS: usize = 5;

impl CollectiveReport {
    pub fn new(r: &CollectiveResult) -> Self {
        CollectiveReport {
            op: r.op.cli_name(),
            bytes: r.bytes.0,
            gpus: r.gpus,
            algorithm: r.algorithm.label(),
            protocol: r.protocol.label(),
            routing: r.routing.cli_name(),
            time_us: r.time_us,
            latency_us: r.latency_us,
            algbw_gbyte_s: r.algbw_gbyte_s,
            busbw_gbyte_s: r.busbw_gbyte_s,
            bottleneck: BottleneckReport::rows(&r.bottleneck),
            library: r.library,
            assumes: r.assumes,
            why: r.why.clone(),
        }
    }
}

impl BottleneckReport {
    /// The busiest resources, at most `BOTTLENECK_ROWS` of them.
    fn rows(loads: &[collective::LinkLoad]) -> Vec<BottleneckReport> {
        loads
            .iter()
            .take(BOTTLENECK_ROWS)
            .map(|load| BottleneckReport {
                link: load.label.replace(['\n', '\r'], " "),
                link_id: load.link.map(|id| id.to_string()),
                utilization: load.utilization,
            })
            .collect()
    }
}

/// One advice item, as `eval --json` prints it.
#[derive(Debug, Clone, Serialize)]
pub struct AdviceReport {
    /// `critical`, `warning` or `info`.
    pub severity: &'static str,
    pub code: String,
    pub message: String,
    /// Ids of the devices concerned (`d3`).
    pub devices: Vec<String>,
    /// Ids of the links concerned (`l7`).
    pub links: Vec<String>,
    pub suggestion: String,
}

impl AdviceReport {
    pub fn new(a: &collective::Advice) -> Self {
        use collective::Severity as S;
        AdviceReport {
            severity: match a.severity {
                S::Critical => "critical",
                S::Warning => "warning",
                S::Info => "info",
            },
            code: a.code.clone(),
            message: a.message.replace(['\n', '\r'], " "),
            devices: a.devices.iter().map(ToString::to_string).collect(),
            links: a.links.iter().map(ToString::to_string).collect(),
            suggestion: a.suggestion.replace(['\n', '\r'], " "),
        }
    }
}

/// What `eval --json` prints: the one place the JSON contract is defined.
#[derive(Debug, Clone, Serialize)]
pub struct EvalReport {
    pub file: String,
    pub name: String,
    pub gpus: u64,
    pub nodes: usize,
    pub switches: usize,
    pub links: usize,
    /// Least max-flow between balanced halves, one direction, Gb/s.
    pub bisection_gbit_s: f64,
    /// What full bisection would be: half the GPUs at their scale-out injection, Gb/s.
    pub full_bisection_gbit_s: f64,
    /// `bisection_gbit_s / full_bisection_gbit_s`; null when undefined.
    pub bisection_ratio: Option<f64>,
    /// `ok`, `no-gpus`, `single-unit`, `no-links` or `not-connected`.
    pub bisection_status: &'static str,
    pub cost_usd: CostReport,
    /// Fractions 0–1 of the total cost; null when the total is zero.
    pub switch_cost_share: Option<f64>,
    pub network_cost_share: Option<f64>,
    pub power_w: f64,
    pub checks: Vec<CheckReport>,
    /// The modelled collective; null when it cannot run (see `collective_error`).
    pub collective: Option<CollectiveReport>,
    /// Why there is no collective (fewer than 2 GPUs, not connected...); absent otherwise.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub collective_error: Option<String>,
    /// The architect's findings, most severe first.
    pub advice: Vec<AdviceReport>,
}

fn severity_name(s: Severity) -> &'static str {
    match s {
        Severity::Error => "error",
        Severity::Warning => "warning",
        Severity::Info => "info",
    }
}

impl EvalReport {
    pub fn new(
        file: &Path,
        design: &Design,
        m: &Metrics,
        collective: &Result<CollectiveResult, CollectiveError>,
        advice: &[collective::Advice],
    ) -> Self {
        use crate::analysis::bisection::BisectionStatus;
        EvalReport {
            file: file.display().to_string(),
            name: design.name.clone(),
            gpus: m.gpus,
            nodes: m.nodes,
            switches: m.switches,
            links: m.links,
            bisection_gbit_s: m.bisection.value.gbit_s(),
            full_bisection_gbit_s: m.bisection.full.gbit_s(),
            bisection_ratio: m.bisection.ratio,
            bisection_status: match m.bisection.status {
                BisectionStatus::Ok { .. } => "ok",
                BisectionStatus::NoGpus => "no-gpus",
                BisectionStatus::SingleUnit => "single-unit",
                BisectionStatus::NoLinks => "no-links",
                BisectionStatus::NotConnected { .. } => "not-connected",
            },
            cost_usd: CostReport {
                total: m.cost.total.0,
                nodes: m.cost.nodes.0,
                switches: m.cost.switches.0,
                nics: m.cost.nics.0,
                cables_optics: m.cost.cables_optics.0,
                nvswitch: m.cost.nvswitch.0,
                other: m.cost.other.0,
            },
            switch_cost_share: m.switch_cost_share,
            network_cost_share: m.network_cost_share,
            power_w: m.power.0,
            checks: m
                .checks
                .iter()
                .map(|c| CheckReport {
                    severity: severity_name(c.severity),
                    code: c.code,
                    message: c.message.replace(['\n', '\r'], " "),
                })
                .collect(),
            collective: collective.as_ref().ok().map(CollectiveReport::new),
            collective_error: collective
                .as_ref()
                .err()
                .map(|e| e.to_string().replace(['\n', '\r'], " ")),
            advice: advice.iter().map(AdviceReport::new).collect(),
        }
    }

    /// The same facts for a person: aligned labels, units.
    pub fn to_table(&self) -> String {
        use crate::model::{Bandwidth, Usd, Watts};
        let usd = |x: f64| Usd(x).to_string();
        let percent =
            |x: Option<f64>| x.map_or("—".to_string(), |f| format!("{:.1} %", f * 100.0));
        let mut rows: Vec<(String, String)> = vec![
            ("design".into(), format!("{} ({})", self.name, self.file)),
            ("GPUs".into(), group_thousands(self.gpus as i64)),
            ("nodes".into(), group_thousands(self.nodes as i64)),
            ("switches".into(), group_thousands(self.switches as i64)),
            ("links".into(), group_thousands(self.links as i64)),
        ];
        let bisection = match (self.bisection_status, self.bisection_ratio) {
            ("ok", Some(ratio)) => format!(
                "{} per direction, {} % of full ({})",
                Bandwidth::from_gbit_s(self.bisection_gbit_s),
                trim_number(ratio * 100.0),
                Bandwidth::from_gbit_s(self.full_bisection_gbit_s)
            ),
            ("ok", None) => format!(
                "{} per direction",
                Bandwidth::from_gbit_s(self.bisection_gbit_s)
            ),
            (status, _) => format!("— ({})", status.replace('-', " ")),
        };
        rows.push(("bisection".into(), bisection));
        rows.push(("cost".into(), usd(self.cost_usd.total)));
        let c = &self.cost_usd;
        for (label, value, always) in [
            ("  nodes & GPUs", c.nodes, true),
            ("  switches", c.switches, true),
            ("  NICs", c.nics, true),
            ("  cables & optics", c.cables_optics, true),
            ("  NVSwitch domains", c.nvswitch, false),
            ("  other", c.other, false),
        ] {
            if always || value != 0.0 {
                rows.push((label.into(), usd(value)));
            }
        }
        rows.push(("switch share".into(), percent(self.switch_cost_share)));
        rows.push(("network share".into(), percent(self.network_cost_share)));
        rows.push(("power".into(), Watts(self.power_w).to_string()));
        match (&self.collective, &self.collective_error) {
            (Some(c), _) => {
                rows.push((
                    "collective".into(),
                    format!(
                        "{} of {} on {} GPUs: {} ({}, {})",
                        c.op,
                        Bytes(c.bytes),
                        group_thousands(i64::from(c.gpus)),
                        c.algorithm,
                        c.protocol,
                        c.routing
                    ),
                ));
                rows.push(("  library".into(), c.library.label().to_string()));
                rows.push(("  why".into(), c.why.clone()));
                rows.push(("  time".into(), format!("{} µs", fixed(c.time_us))));
                rows.push(("  algbw".into(), format!("{} GB/s", fixed(c.algbw_gbyte_s))));
                rows.push(("  busbw".into(), format!("{} GB/s", fixed(c.busbw_gbyte_s))));
                if let Some(top) = c.bottleneck.first() {
                    rows.push((
                        "  bottleneck".into(),
                        format!("{} ({:.0} % busy)", top.link, top.utilization * 100.0),
                    ));
                }
            }
            (None, error) => rows.push((
                "collective".into(),
                format!("— ({})", error.as_deref().unwrap_or("not modelled")),
            )),
        }
        let count = |sev: &str| self.checks.iter().filter(|c| c.severity == sev).count();
        rows.push((
            "checks".into(),
            format!(
                "{}, {}, {}",
                count_of(count("error"), "error", "errors"),
                count_of(count("warning"), "warning", "warnings"),
                count_of(count("info"), "note", "notes")
            ),
        ));

        let width = rows
            .iter()
            .map(|(l, _)| l.chars().count())
            .max()
            .unwrap_or(0);
        let mut out = String::new();
        for (label, value) in &rows {
            out.push_str(&format!("{label:<width$}  {value}\n"));
        }
        for check in &self.checks {
            out.push_str(&format!(
                "  {:<7}  {}: {}\n",
                check.severity, check.code, check.message
            ));
        }
        out.push_str(&advice_lines(&self.advice, width));
        out
    }
}

/// The advice rows of a table whose labels are `width` wide: a count, then each item with
/// its suggestion below it.
fn advice_lines(advice: &[AdviceReport], width: usize) -> String {
    let count = if advice.is_empty() {
        "none".to_string()
    } else {
        count_of(advice.len(), "item", "items")
    };
    let mut out = format!("{:<width$}  {count}\n", "advice");
    for a in advice {
        out.push_str(&format!(
            "  {:<8}  {}: {}\n            → {}\n",
            a.severity, a.code, a.message, a.suggestion
        ));
    }
    out
}

/// A figure with two decimals below 100 and none above, as nccl-tests' columns read.
fn fixed(x: f64) -> String {
    if x.abs() >= 100.0 {
        format!("{x:.0}")
    } else {
        format!("{x:.2}")
    }
}

/// Everything `eval` prints, from one design file.
fn eval_report(
    file: &Path,
    design: &Design,
    query: &CollectiveQuery,
    catalog: &Catalog,
) -> EvalReport {
    let a = assess(design, catalog, &Question::collective(query.clone()));
    let result = a.collective.expect("the question asks for a collective");
    EvalReport::new(file, design, &a.metrics, &result, &a.advice)
}

fn run_eval(
    file: &Path,
    json: bool,
    query: &CollectiveQuery,
    catalog: &Catalog,
) -> anyhow::Result<()> {
    let design = load(file)?;
    let report = eval_report(file, &design, query, catalog);
    if json {
        let mut text = serde_json::to_string_pretty(&report)?;
        text.push('\n');
        write_stdout(&text)
    } else {
        write_stdout(&report.to_table())
    }
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
    pub routing: &'static str,
    pub mapping: collective::Mapping,
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
}

impl WorkloadReport {
    fn new(
        file: &Path,
        w: &collective::Workload,
        routing: Routing,
        r: collective::WorkloadResult,
        advice: &[collective::Advice],
    ) -> Self {
        WorkloadReport {
            file: file.display().to_string(),
            model: w.name.clone(),
            params: w.params,
            serving: w.serving,
            precision: w.precision.label(),
            routing: routing.cli_name(),
            mapping: r.mapping,
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
        }
    }

    fn to_table(&self) -> String {
        let r = self;
        let m = &r.mapping;
        let mut out = format!(
            "workload   {} in {}, {}, {} routing\n",
            self.model,
            self.precision,
            if self.serving { "serving" } else { "training" },
            self.routing
        );
        out.push_str(&format!(
            "mapping    {} on {} (largest scale-up domain {})\n",
            m.layout(),
            count_of(m.gpus_used as usize, "GPU", "GPUs"),
            count_of(m.scale_up_gpus as usize, "GPU", "GPUs")
        ));
        let extra = if r.ideal_total_us > 0.0 {
            format!(
                " (ideal network {}, +{:.0} %)",
                time_text(r.ideal_total_us),
                (r.total_us / r.ideal_total_us - 1.0) * 100.0
            )
        } else {
            String::new()
        };
        out.push_str(&format!(
            "{}{} of communication{extra}\n",
            // A decode step makes one token per sequence.
            if self.serving {
                "per token  "
            } else {
                "per step   "
            },
            time_text(r.total_us)
        ));
        let width = r.components.iter().map(|c| c.name.len()).max().unwrap_or(0);
        for c in &r.components {
            out.push_str(&format!(
                "  {:<width$}  {:>10}  ideal {:>10}  {} × {} per step, {}\n",
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

fn run_workload(args: &WorkloadArgs, catalog: &Catalog) -> anyhow::Result<()> {
    let design = load(&args.file)?;
    let base = collective::Workload::named(&args.model);
    let model = job::model_of(&args.model)?;
    if model.experts.is_none() && args.ep.is_some_and(|ep| ep > 1) {
        anyhow::bail!(
            "{} has no experts: --ep applies to mixture-of-experts models",
            model.name
        );
    }
    let precision = match args.precision {
        PrecisionArg::Bf16 => collective::Precision::Bf16,
        PrecisionArg::Fp16 => collective::Precision::Fp16,
        PrecisionArg::Fp8 => collective::Precision::Fp8,
        PrecisionArg::Fp32 => collective::Precision::Fp32,
    };
    let chosen = job::chosen_job(
        model,
        base.as_ref(),
        (args.tp, args.pp, args.dp, args.ep),
        precision,
        args.serving,
        &args.job,
    );
    // The communication the job model stands on, as the sidebar shows it: a built-in
    // model keeps its published parameter counts (the sidebar, `compare` and `report` use
    // them); the layout and batch are the command line's.
    let mut w = chosen.training.comm_workload();
    if let Some(base) = &base {
        w.params = base.params;
        if let (Some(moe), Some(base_moe)) = (&mut w.moe, &base.moe) {
            moe.expert_params = base_moe.expert_params;
        }
    }
    w.serving = args.serving;
    if let Some(s) = &chosen.serving {
        w.serving_batch = Some(s.batch);
    }
    let question = Question {
        workload: Some(w),
        workload_routing: args.routing,
        ..Question::metrics_only()
    };
    let a = assess(&design, catalog, &question);
    let w = question.workload.expect("the question has a workload");
    let result = a
        .workload
        .expect("the question asks for a workload")
        .with_context(|| format!("{}: cannot model {}", args.file.display(), w.name))?;
    let (figures, detail) = job::run_job(
        &args.file,
        &design,
        catalog,
        &chosen,
        args.routing,
        &args.job,
        (a.metrics.cost.total.0, a.metrics.power.0),
    )?;
    let advice = a.advice;
    let mut report = WorkloadReport::new(&args.file, &w, args.routing, result, &advice);
    report.figures = Some(figures);
    report.job = Some(detail);
    if args.json {
        let mut text = serde_json::to_string_pretty(&report)?;
        text.push('\n');
        write_stdout(&text)
    } else {
        let mut table = report.to_table();
        if let Some(job) = &report.job {
            table.push_str(&job::job_table(job));
        }
        write_stdout(&table)
    }
}

/// One row of `sweep --json`.
#[derive(Debug, Clone, Serialize)]
pub struct SweepRow {
    pub bytes: u64,
    /// Elements of 4 bytes (float32), as nccl-tests counts them.
    pub count: u64,
    pub time_us: f64,
    pub algbw_gbyte_s: f64,
    pub busbw_gbyte_s: f64,
    pub algorithm: &'static str,
    pub protocol: &'static str,
}

fn run_sweep(
    file: &Path,
    json: bool,
    query: &CollectiveQuery,
    catalog: &Catalog,
) -> anyhow::Result<()> {
    let design = load(file)?;
    let results = collective::sweep(&design, catalog, query)
        .with_context(|| format!("{}: cannot model {}", file.display(), query.op.cli_name()))?;
    let rows: Vec<SweepRow> = results
        .iter()
        .map(|r| SweepRow {
            bytes: r.bytes.0,
            count: r.bytes.0 / 4,
            time_us: r.time_us,
            algbw_gbyte_s: r.algbw_gbyte_s,
            busbw_gbyte_s: r.busbw_gbyte_s,
            algorithm: r.algorithm.label(),
            protocol: r.protocol.label(),
        })
        .collect();
    if json {
        let mut text = serde_json::to_string_pretty(&rows)?;
        text.push('\n');
        return write_stdout(&text);
    }
    let gpus = results.first().map_or(0, |r| r.gpus);
    let mut out = format!(
        "# {} on {} GPUs of {} ({} routing)\n",
        query.op.cli_name(),
        group_thousands(i64::from(gpus)),
        design.name,
        query.routing.cli_name()
    );
    out.push_str(&format!(
        "#{:>11} {:>11} {:>12} {:>9} {:>9}  {}\n",
        "size (B)", "count", "time (us)", "algbw", "busbw", "algorithm"
    ));
    out.push_str(&format!(
        "#{:>11} {:>11} {:>12} {:>9} {:>9}\n",
        "", "(elements)", "", "(GB/s)", "(GB/s)"
    ));
    for row in &rows {
        out.push_str(&format!(
            "{:>12} {:>11} {:>12.2} {:>9.2} {:>9.2}  {} {}\n",
            row.bytes,
            row.count,
            row.time_us,
            row.algbw_gbyte_s,
            row.busbw_gbyte_s,
            row.algorithm,
            row.protocol
        ));
    }
    write_stdout(&out)
}

fn parse_discount(text: &str) -> Result<f64, String> {
    match text.parse::<f64>() {
        Ok(d) if (0.0..=1.0).contains(&d) => Ok(d),
        _ => Err(format!(
            "`{text}` is not a fraction between 0 and 1 (0.15 is 15 % off)"
        )),
    }
}

fn run_bom(
    file: &Path,
    output: Option<&Path>,
    options: &BomOptions,
    catalog: &Catalog,
) -> anyhow::Result<()> {
    let design = load(file)?;
    let lines = bom_lines(&design, catalog);
    let mut csv = Vec::new();
    write_bom_csv(&lines, &mut csv, options).context("could not write the CSV")?;
    match output {
        None => {
            let mut out = std::io::stdout().lock();
            out.write_all(&csv)?;
            out.flush()?;
        }
        Some(path) => {
            write_atomically(path, &csv)
                .with_context(|| format!("could not write {}", path.display()))?;
            eprintln!(
                "railyard: wrote {}: {}, {} {} total",
                path.display(),
                count_of(lines.len(), "line", "lines"),
                crate::io::bom::bom_total(&lines, options).0,
                options.currency_label
            );
        }
    }
    Ok(())
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum TableFormat {
    Text,
    Markdown,
    Csv,
}

/// A scenario's name: the file name without `.ron`.
fn scenario_name(file: &Path) -> String {
    file.file_stem().map_or_else(
        || file.display().to_string(),
        |s| s.to_string_lossy().into_owned(),
    )
}

/// Loads the files as (scenario name, design) and compares them.
fn comparison(
    files: &[PathBuf],
    bytes: Bytes,
    baseline: usize,
    workload: Option<&collective::Workload>,
    catalog: &Catalog,
) -> anyhow::Result<crate::analysis::compare::Comparison> {
    if baseline >= files.len() {
        bail!(
            "--baseline {} but only {} given",
            baseline + 1,
            count_of(files.len(), "file", "files")
        );
    }
    let designs = files
        .iter()
        .map(|f| Ok((scenario_name(f), load(f)?)))
        .collect::<anyhow::Result<Vec<_>>>()?;
    Ok(crate::analysis::compare::compare_with(
        &designs, catalog, bytes, baseline, workload,
    ))
}

fn run_compare(
    files: &[PathBuf],
    format: TableFormat,
    bytes: Bytes,
    baseline: u32,
    workload: Option<&collective::Workload>,
    catalog: &Catalog,
) -> anyhow::Result<()> {
    use crate::io::report::{render_csv, render_markdown, render_text};
    let baseline = usize::try_from(baseline.saturating_sub(1)).unwrap_or(usize::MAX);
    let c = comparison(files, bytes, baseline, workload, catalog)?;
    let text = match format {
        TableFormat::Text => render_text(&c),
        TableFormat::Markdown => render_markdown(&c),
        TableFormat::Csv => render_csv(&c).context("could not write the CSV")?,
    };
    write_stdout(&text)
}

/// The design's SVG; with `heatmap_bytes`, links coloured by an all-reduce of that size.
fn design_svg(
    file: &Path,
    design: &Design,
    heatmap_bytes: Option<Bytes>,
    catalog: &Catalog,
) -> anyhow::Result<String> {
    design_svg_in(file, design, ColorMode::Technology, heatmap_bytes, catalog)
}

/// The design's SVG with links coloured by `mode`; a heatmap runs an all-reduce of
/// `heatmap_bytes` (1 GiB if not given).
fn design_svg_in(
    file: &Path,
    design: &Design,
    mode: ColorMode,
    heatmap_bytes: Option<Bytes>,
    catalog: &Catalog,
) -> anyhow::Result<String> {
    use crate::io::svg::{LinkColors, design_to_svg};
    let heatmap_bytes = match (mode, heatmap_bytes) {
        (ColorMode::Heatmap, bytes) => Some(bytes.unwrap_or(Bytes(1 << 30))),
        (_, None) => None,
        (_, Some(_)) => {
            bail!("--bytes sizes the heatmap's all-reduce: give it with --color heatmap")
        }
    };
    Ok(match heatmap_bytes {
        None => design_to_svg(
            design,
            match mode {
                ColorMode::Rail => LinkColors::Rail,
                ColorMode::Tier => LinkColors::Tier,
                _ => LinkColors::Technology,
            },
        ),
        Some(bytes) => {
            let q = CollectiveQuery::new(Op::AllReduce, bytes);
            let result = collective::collective(design, catalog, &q).with_context(|| {
                format!("{}: no heatmap, the all-reduce cannot run", file.display())
            })?;
            design_to_svg(design, LinkColors::Heatmap(&result.link_utilization))
        }
    })
}

fn run_export(
    file: &Path,
    output: &Path,
    mode: ColorMode,
    heatmap_bytes: Option<Bytes>,
    scale: Option<u32>,
    catalog: &Catalog,
) -> anyhow::Result<()> {
    let png = output
        .extension()
        .is_some_and(|e| e.eq_ignore_ascii_case("png"));
    if scale.is_some() && !png {
        bail!("--scale is for a PNG: give -o FILE.png");
    }
    let design = load(file)?;
    let svg = design_svg_in(file, &design, mode, heatmap_bytes, catalog)?;
    if output.as_os_str() == "-" {
        return write_stdout(&svg);
    }
    let bytes = if png {
        crate::io::raster::svg_to_png(&svg, scale.unwrap_or(1))
            .with_context(|| format!("could not draw {}", output.display()))?
    } else {
        svg.into_bytes()
    };
    write_atomically(output, &bytes)
        .with_context(|| format!("could not write {}", output.display()))?;
    eprintln!(
        "railyard: wrote {}: {}, {}",
        output.display(),
        count_of(design.devices.len(), "device", "devices"),
        count_of(design.links.len(), "link", "links")
    );
    Ok(())
}

fn run_report(
    files: &[PathBuf],
    output: &Path,
    bytes: Bytes,
    workload: Option<&collective::Workload>,
    catalog: &Catalog,
) -> anyhow::Result<()> {
    let Some(file) = files.first() else {
        bail!("give at least one design file");
    };
    let design = load(file)?;
    let comparison = if files.len() > 1 {
        Some(comparison(files, bytes, 0, workload, catalog)?)
    } else {
        None
    };
    let to_stdout = output.as_os_str() == "-";
    let diagram_path = output.with_extension("svg");
    let diagram_name = diagram_path
        .file_name()
        .map(|n| n.to_string_lossy().into_owned());
    let report = crate::io::report::design_report(
        &file.display().to_string(),
        &design,
        catalog,
        bytes,
        workload,
        comparison.as_ref(),
        if to_stdout {
            None
        } else {
            diagram_name.as_deref()
        },
    );
    if to_stdout {
        return write_stdout(&report);
    }
    let svg = design_svg(file, &design, None, catalog)?;
    write_atomically(&diagram_path, svg.as_bytes())
        .with_context(|| format!("could not write {}", diagram_path.display()))?;
    write_atomically(output, report.as_bytes())
        .with_context(|| format!("could not write {}", output.display()))?;
    eprintln!(
        "railyard: wrote {} and {}",
        output.display(),
        diagram_path.display()
    );
    Ok(())
}

/// One part, as `catalog --json` prints it.
#[derive(Debug, Clone, Serialize)]
pub struct CatalogEntry {
    pub id: String,
    pub category: &'static str,
    pub vendor: String,
    pub model: String,
    /// Null when the catalog has no price.
    pub price_usd: Option<f64>,
    pub price_date: Option<String>,
    pub power_w: f64,
    /// Price or power is an estimate rather than a sourced figure.
    pub estimate: bool,
}

fn run_catalog(json: bool, catalog: &Catalog) -> anyhow::Result<()> {
    let entries: Vec<CatalogEntry> = catalog
        .parts()
        .map(|p| CatalogEntry {
            id: p.id.to_string(),
            category: p.category().label(),
            vendor: p.vendor.clone(),
            model: p.model.clone(),
            price_usd: p.price.as_ref().map(|price| price.usd.0),
            price_date: p.price.as_ref().map(|price| price.date.clone()),
            power_w: p.power_w.0,
            estimate: p.estimate,
        })
        .collect();
    if json {
        let mut text = serde_json::to_string_pretty(&entries)?;
        text.push('\n');
        return write_stdout(&text);
    }
    let header = ["id", "category", "model", "price", "power", "estimate"];
    let rows: Vec<[String; 6]> = entries
        .iter()
        .map(|e| {
            [
                e.id.clone(),
                e.category.to_string(),
                format!("{} {}", e.vendor, e.model),
                e.price_usd
                    .map_or("—".into(), |p| crate::model::Usd(p).to_string()),
                crate::model::Watts(e.power_w).to_string(),
                if e.estimate { "yes" } else { "" }.to_string(),
            ]
        })
        .collect();
    let mut widths = header.map(str::len);
    for row in &rows {
        for (w, cell) in widths.iter_mut().zip(row) {
            *w = (*w).max(cell.chars().count());
        }
    }
    let mut out = String::new();
    let mut push_row = |cells: &[&str]| {
        let line: Vec<String> = cells
            .iter()
            .zip(widths)
            .enumerate()
            .map(|(i, (cell, w))| {
                // Price and power read better right-aligned.
                if i == 3 || i == 4 {
                    format!("{cell:>w$}")
                } else {
                    format!("{cell:<w$}")
                }
            })
            .collect();
        out.push_str(line.join("  ").trim_end());
        out.push('\n');
    };
    push_row(&header);
    for row in &rows {
        let cells: Vec<&str> = row.iter().map(String::as_str).collect();
        push_row(&cells);
    }
    write_stdout(&out)
}
