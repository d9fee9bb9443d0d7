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
//! railyard import IN -o OUT.ron [--format drawio|dot|csv]
//!                                     a design from draw.io, Graphviz DOT or a CSV edge list
//! railyard catalog [--json]           the parts catalog
//! ```
//!
//! Exit status: 0 on success; 2 on bad arguments or bad input (a file that does not load,
//! a template that cannot be built), with one line `railyard: <message>` on stderr;
//! 1 when the designer window cannot open; 3 when `check-cabling` finds the fabric not
//! cabled as drawn. The JSON written by `eval --json`,
//! `workload --json` and `catalog --json` is defined in `eval.rs`, `workload.rs` and
//! `catalog.rs` (`EvalReport`, `WorkloadReport`, `CatalogEntry`) and nowhere else.
//!
//! This file parses (`args.rs` holds the clap definition), dispatches each `Command` to its
//! subcommand's file and turns errors into the exit status. A new subcommand is one file
//! with its `…Args` and `run`, one `Command` variant and one arm of `run` below.

use crate::io::load_design;
use crate::model::{Catalog, Design};
use anyhow::{Context, bail};
use args::{Cli, Command};
use clap::Parser;
use std::io::Write as _;
use std::path::{Path, PathBuf};
use std::process::ExitCode;

mod args;
mod bom;
mod calibrate;
mod catalog;
mod check_cabling;
mod compare;
mod diagram;
mod eval;
mod export;
mod generate;
mod import;
mod job;
mod report;
mod sweep;
mod validate;
mod workload;

pub use catalog::CatalogEntry;
pub use eval::{
    AdviceReport, BottleneckReport, CheckReport, CollectiveReport, CostReport, EvalReport,
};
pub use generate::{MAX_GPUS_PER_NODE, MAX_NODES};
pub use sweep::SweepRow;
pub use workload::{StepPartReport, WorkloadReport};

const EXIT_BAD_INPUT: u8 = 2;
const EXIT_DESIGNER_FAILED: u8 = 1;

/// Parses `args` (program name first) exactly as the binary does, without running anything:
/// for the fuzz target and tests. The error is clap's, as the binary would print it.
pub fn check_args<I, T>(args: I) -> Result<(), clap::Error>
where
    I: IntoIterator<Item = T>,
    T: Into<std::ffi::OsString> + Clone,
{
    Cli::try_parse_from(args).map(|_| ())
}

/// Runs the command line and returns the process exit status.
pub fn main() -> ExitCode {
    let cli = match Cli::try_parse() {
        Ok(cli) => cli,
        Err(e) => return clap_exit(&e),
    };
    if cli.command.is_none() {
        // A bad user catalog stops here, with its line and column, before a window opens.
        let catalog = match load_catalog(cli.catalog.as_deref()) {
            Ok(catalog) => catalog,
            Err(e) => {
                eprintln!("railyard: {}", one_line(&e));
                return ExitCode::from(EXIT_BAD_INPUT);
            }
        };
        let name = cli.catalog.as_deref().map(|p| {
            p.file_name().map_or_else(
                || p.display().to_string(),
                |n| n.to_string_lossy().into_owned(),
            )
        });
        return open_designer(cli.file, catalog, name);
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
fn open_designer(
    file: Option<PathBuf>,
    catalog: Catalog,
    user_catalog: Option<String>,
) -> ExitCode {
    match crate::app::run(file, catalog, user_catalog) {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("railyard: {}", one_line(&e));
            ExitCode::from(EXIT_DESIGNER_FAILED)
        }
    }
}

#[cfg(not(feature = "gui"))]
fn open_designer(
    _file: Option<PathBuf>,
    _catalog: Catalog,
    _user_catalog: Option<String>,
) -> ExitCode {
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

use crate::model::units::count_of;

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
    let Some(command) = cli.command else {
        return Ok(());
    };
    match command {
        Command::Generate(args) => generate::run(&args, &catalog),
        Command::Eval(args) => eval::run(&args, &catalog),
        Command::Sweep(args) => sweep::run(&args, &catalog),
        Command::Bom(args) => bom::run(args, &catalog),
        Command::Compare(args) => compare::run(&args, &catalog),
        Command::Export(args) => export::run(args, &catalog),
        Command::Report(args) => report::run(&args, &catalog),
        Command::Workload(args) => workload::run(&args, &catalog),
        Command::Calibrate(args) => calibrate::run(&args, &catalog),
        Command::Validate(args) => validate::run(&args, &catalog),
        Command::CheckCabling(args) => check_cabling::run(&args, &catalog),
        Command::Import(args) => import::run(&args, &catalog),
        Command::Catalog(args) => catalog::run(&args, &catalog),
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

fn load(file: &Path) -> anyhow::Result<Design> {
    Ok(load_design(file)?)
}
