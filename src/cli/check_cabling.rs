//! `railyard check-cabling FILE --from LISTING [--map NAMES.csv] [--json]`: the fabric as
//! cabled (an `ibnetdiscover` dump or a `LocalPort|LocalGUID|RemotePort|RemoteGUID` table)
//! against the design, fault by fault, with the rails each breaks and what each costs.
//! Exit status 0 when the fabric is cabled as drawn, 3 when faults were found, 2 on bad input.

use super::{load, write_stdout};
use crate::analysis::as_built::{CablingReport, Delta, Fault, check_cabling, resolve};
use crate::io::ib_names::{NameMap, parse_name_map};
use crate::io::ibnetdiscover::parse_observed;
use crate::model::units::time_text;
use crate::model::{Bandwidth, Catalog};
use anyhow::Context;
use clap::Args;
use std::fmt::Write as _;
use std::path::{Path, PathBuf};

/// Exit status when the fabric differs from the design.
pub(super) const EXIT_FAULTS_FOUND: u8 = 3;

/// Not an error in the input: the report is printed, and the exit status says faults exist.
#[derive(Debug, thiserror::Error)]
#[error("the fabric is not cabled as drawn")]
pub(super) struct FaultsFound;

#[derive(Debug, Args)]
pub(super) struct CheckCablingArgs {
    /// The design file.
    file: PathBuf,
    /// What was cabled: `ibnetdiscover` output, or a table with a
    /// LocalPort|LocalGUID|RemotePort|RemoteGUID header.
    #[arg(long, value_name = "LISTING")]
    from: PathBuf,
    /// Fabric names or GUIDs to design device names, one `name,device[,nic offset]` a line,
    /// for fabrics whose node descriptions are not the names drawn.
    #[arg(long, value_name = "NAMES.csv")]
    map: Option<PathBuf>,
    /// One JSON object instead of a table.
    #[arg(long)]
    json: bool,
}

pub(super) fn run(args: &CheckCablingArgs, catalog: &Catalog) -> anyhow::Result<()> {
    let design = load(&args.file)?;
    let read = |path: &Path| {
        std::fs::read_to_string(path).with_context(|| format!("could not read {}", path.display()))
    };
    let observed =
        parse_observed(&read(&args.from)?).with_context(|| args.from.display().to_string())?;
    let map = match &args.map {
        Some(path) => parse_name_map(&read(path)?).with_context(|| path.display().to_string())?,
        None => NameMap::default(),
    };
    let report = check_cabling(&design, catalog, &resolve(&design, &observed, &map));
    if args.json {
        write_stdout(&(serde_json::to_string_pretty(&report)? + "\n"))?;
    } else {
        let title = format!("{} ({})", design.name, args.file.display());
        write_stdout(&report_table(
            &report,
            &title,
            &args.from.display().to_string(),
        ))?;
    }
    if report.is_clean() {
        Ok(())
    } else {
        Err(FaultsFound.into())
    }
}

/// The report as the terminal shows it (and `docs/check-cabling.md` quotes it).
pub fn report_table(report: &CablingReport, design: &str, listing: &str) -> String {
    let mut out = String::new();
    let _ = writeln!(out, "design      {design}");
    let _ = writeln!(
        out,
        "as built    {listing}: {} cables, {} as drawn ({} drawn)",
        report.built, report.matched, report.drawn
    );
    let figures = |f: &crate::analysis::as_built::Figures| {
        let time = match (f.all_reduce_us, &f.all_reduce_error) {
            (Some(us), _) => time_text(us),
            (None, why) => format!("cannot run ({})", why.as_deref().unwrap_or("unknown")),
        };
        format!(
            "bisection {}, all-reduce of 1 GiB {time}",
            Bandwidth::from_gbit_s(f.bisection_gbit_s)
        )
    };
    let _ = writeln!(out, "as drawn    {}", figures(&report.as_drawn));
    let whole = report.as_built.minus(&report.as_drawn);
    let _ = writeln!(
        out,
        "as built    {} ({})",
        figures(&report.as_built),
        delta_text(Some(&whole))
    );
    if report.is_clean() {
        out.push_str("\nno faults: the fabric is cabled as drawn\n");
        return out;
    }
    let _ = writeln!(out, "\n{} faults", report.faults.len());
    for (i, fault) in report.faults.iter().enumerate() {
        fault_lines(&mut out, i + 1, fault);
    }
    out
}

fn fault_lines(out: &mut String, number: usize, fault: &Fault) {
    let rails = match fault.rails.as_slice() {
        [] => String::new(),
        [r] => format!(", rail {r}"),
        rs => format!(
            ", rails {}",
            rs.iter().map(u32::to_string).collect::<Vec<_>>().join(", ")
        ),
    };
    let _ = writeln!(out, "\n{number}. {}{rails}", fault.kind.label());
    let _ = writeln!(out, "   {}", fault.summary);
    for cable in &fault.drawn {
        let _ = writeln!(out, "   drawn   {cable}");
    }
    for (cable, line) in fault.built.iter().zip(&fault.lines) {
        let _ = writeln!(out, "   cabled  {cable}  (line {line})");
    }
    let _ = writeln!(out, "   cost    {}", delta_text(fault.cost.as_ref()));
}

/// `bisection −400 Gb/s, all-reduce +0.31 ms`.
fn delta_text(delta: Option<&Delta>) -> String {
    let Some(d) = delta else {
        return "not modelled".to_string();
    };
    let sign = |x: f64| if x < 0.0 { "−" } else { "+" };
    let bisection = if d.bisection_gbit_s.abs() < 1e-9 {
        "bisection unchanged".to_string()
    } else {
        format!(
            "bisection {}{}",
            sign(d.bisection_gbit_s),
            Bandwidth::from_gbit_s(d.bisection_gbit_s.abs())
        )
    };
    let time = match d.all_reduce_us {
        Some(t) if t.abs() < 0.05 => "all-reduce unchanged".to_string(),
        Some(t) => format!("all-reduce {}{}", sign(t), time_text(t.abs())),
        None => format!(
            "all-reduce cannot run ({})",
            d.all_reduce_error
                .as_deref()
                .unwrap_or("not on the drawn design either")
        ),
    };
    format!("{bisection}, {time}")
}
