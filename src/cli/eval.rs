//! `railyard eval FILE [--json]`: counts, bisection, cost, power, checks, the collective and
//! the advice, as a table or as JSON (`EvalReport` and the report types `workload` shares).

use super::args::{QueryArgs, parse_bytes, parse_non_negative, parse_pue};
use super::{count_of, load, write_stdout};
use crate::analysis::accuracy::Checked;
use crate::analysis::collective::{self, CollectiveError, CollectiveQuery, CollectiveResult};
use crate::analysis::finding::Finding;
use crate::analysis::job::economics::RunningCost;
use crate::analysis::{Assessor, Metrics, Question};
use crate::io::validation_sets::published;
use crate::model::units::{group_thousands, time_text, trim_number};
use crate::model::{Bytes, Catalog, Design};
use clap::Args;
use serde::Serialize;
use std::path::{Path, PathBuf};

#[derive(Debug, Args)]
pub(super) struct EvalArgs {
    /// The design file.
    file: PathBuf,
    /// One JSON object instead of a table.
    #[arg(long)]
    json: bool,
    /// Message size: a whole number of bytes with an optional K, M, G, T suffix
    /// (binary multiples): 8, 64K, 1M, 8GiB.
    #[arg(long, value_name = "SIZE", default_value = "1GiB", value_parser = parse_bytes, allow_negative_numbers = true)]
    bytes: Bytes,
    /// Power usage effectiveness for the electricity line [default: the site's: 1.58 in a
    /// data centre, 1.0 where every machine is a desk machine]
    #[arg(long, value_name = "R", value_parser = parse_pue)]
    pue: Option<f64>,
    /// Electricity price for the electricity line, USD per kWh [default: 0.08, the US
    /// industrial price; 0.16, the US residential price, where every machine is a desk machine]
    #[arg(long, value_name = "USD", value_parser = parse_non_negative)]
    usd_per_kwh: Option<f64>,
    #[command(flatten)]
    query: QueryArgs,
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
    /// The most busbw the links could carry for this operation at their full rates, before
    /// any library or protocol cost and without in-network reduction (a tree's or a switch's
    /// reduction can pass it).
    pub busbw_bound_gbyte_s: f64,
    /// The busiest resources, busiest first (at most five).
    pub bottleneck: Vec<BottleneckReport>,
    /// The collective library (`nccl`, `mlx-ring`, `mlx-jaccl`), what the model assumes of it,
    /// and why this algorithm and protocol.
    pub library: collective::Library,
    /// The NCCL release the design names, where it names one.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub nccl_release: Option<crate::model::NcclRelease>,
    /// "NCCL 2.21.5": the library with the release, for the table.
    #[serde(skip)]
    pub library_text: String,
    pub assumes: String,
    pub why: String,
    /// What else the time rests on: how the library runs this size here.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub notes: Vec<String>,
    /// The design's calibration, when it has one: what was fitted to which log (the time
    /// above is the calibrated model's).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub calibrated: Option<String>,
    /// How far the model was from published measurements of systems of this kind near this
    /// size (`against`), or `unchecked`; absent for a calibrated design.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub checked: Option<Checked>,
}

/// Resources listed in `bottleneck`.
const BOTTLENECK_ROWS: usize = 5;

impl CollectiveReport {
    pub fn new(r: &CollectiveResult, design: &Design) -> Self {
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
            busbw_bound_gbyte_s: r.busbw_bound_gbyte_s,
            bottleneck: BottleneckReport::rows(&r.bottleneck),
            library: r.library,
            nccl_release: r.nccl_release,
            library_text: r.library_text(),
            assumes: r.assumes.clone(),
            why: r.why.clone(),
            notes: r.notes.clone(),
            calibrated: design.calibration.as_ref().and_then(|c| c.summary()),
            checked: None,
        }
    }
}

impl BottleneckReport {
    /// The busiest resources, at most `BOTTLENECK_ROWS` of them.
    pub(super) fn rows(loads: &[collective::LinkLoad]) -> Vec<BottleneckReport> {
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
    pub code: &'static str,
    pub message: String,
    /// Ids of the devices concerned (`d3`).
    pub devices: Vec<String>,
    /// Ids of the links concerned (`l7`).
    pub links: Vec<String>,
    pub suggestion: String,
}

impl AdviceReport {
    pub fn new(a: &Finding) -> Self {
        AdviceReport {
            severity: a.severity.advice_label(),
            code: a.code,
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
    /// Where the bisection crosses between groups of switches only inside the servers (a
    /// rail-only fabric), what it says; null where the network joins every switch.
    pub bisection_through_servers: Option<String>,
    /// For a full direct mesh, why its bisection is below full by construction.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub bisection_mesh: Option<String>,
    pub cost_usd: CostReport,
    /// What the cost total leaves out (parts missing from the catalog or without a price);
    /// null when it is whole.
    pub cost_incomplete: Option<String>,
    /// Parts missing from the catalog are not counted in the power either.
    pub power_incomplete: bool,
    /// Fractions 0–1 of the total cost; null when the total is zero.
    pub switch_cost_share: Option<f64>,
    pub network_cost_share: Option<f64>,
    pub power_w: f64,
    /// Electricity a month at full draw, at the site's PUE and price (a home's for desk
    /// machines, a data centre's otherwise).
    pub running: RunningCost,
    pub checks: Vec<CheckReport>,
    /// The modelled collective; null when it cannot run (see `collective_error`).
    pub collective: Option<CollectiveReport>,
    /// Why there is no collective (fewer than 2 GPUs, not connected...); absent otherwise.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub collective_error: Option<String>,
    /// The architect's findings, most severe first.
    pub advice: Vec<AdviceReport>,
}

impl EvalReport {
    pub fn new(
        file: &Path,
        design: &Design,
        m: &Metrics,
        collective: &Result<CollectiveResult, CollectiveError>,
        advice: &[Finding],
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
            bisection_through_servers: m.bisection.through_servers(),
            bisection_mesh: m.bisection.mesh_note.clone(),
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
            cost_incomplete: m.cost_gap(),
            power_incomplete: m.parts_unknown(),
            switch_cost_share: m.switch_cost_share,
            network_cost_share: m.network_cost_share,
            power_w: m.power.0,
            running: m.running,
            checks: m
                .checks
                .iter()
                .map(|c| CheckReport {
                    severity: c.severity.check_label(),
                    code: c.code,
                    message: c.message.replace(['\n', '\r'], " "),
                })
                .collect(),
            collective: collective
                .as_ref()
                .ok()
                .map(|r| CollectiveReport::new(r, design)),
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
        if let Some(through) = &self.bisection_through_servers {
            rows.push(("  counted".into(), through.clone()));
        }
        if let Some(mesh) = &self.bisection_mesh {
            rows.push(("  mesh".into(), mesh.clone()));
        }
        // What the bill leaves out, the totals say.
        let cost_gap = self
            .cost_incomplete
            .as_ref()
            .map_or(String::new(), |gap| format!(" (incomplete: {gap})"));
        rows.push((
            "cost".into(),
            format!("{}{cost_gap}", Usd(self.cost_usd.total).headline()),
        ));
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
        let power_gap = if self.power_incomplete {
            " (incomplete: parts missing from the catalog are not counted)"
        } else {
            ""
        };
        rows.push((
            "power".into(),
            format!("{}{power_gap}", Watts(self.power_w)),
        ));
        rows.push(("  electricity".into(), self.running.text()));
        match (&self.collective, &self.collective_error) {
            (Some(c), _) => {
                // MLX and Gloo have no protocols: name one only where NCCL runs.
                let how = if c.library.is_nccl() {
                    format!("{} ({}, {} routing)", c.algorithm, c.protocol, c.routing)
                } else {
                    format!("{} ({} routing)", c.algorithm, c.routing)
                };
                rows.push((
                    "collective".into(),
                    format!(
                        "{} of {} on {} GPUs: {how}",
                        c.op,
                        Bytes(c.bytes),
                        group_thousands(i64::from(c.gpus)),
                    ),
                ));
                rows.push(("  library".into(), c.library_text.clone()));
                rows.push(("  assumes".into(), c.assumes.to_string()));
                rows.push(("  why".into(), c.why.clone()));
                for note in &c.notes {
                    rows.push(("  note".into(), note.clone()));
                }
                if let Some(cal) = &c.calibrated {
                    rows.push(("  calibrated".into(), cal.clone()));
                }
                if let Some(checked) = &c.checked {
                    rows.push(("  checked".into(), checked.text()));
                }
                rows.push(("  time".into(), time_text(c.time_us)));
                rows.push(("  algbw".into(), format!("{} GB/s", fixed(c.algbw_gbyte_s))));
                let bound = c.busbw_bound_gbyte_s;
                rows.push((
                    "  busbw".into(),
                    if bound.is_finite() && bound > 0.0 {
                        format!(
                            "{} GB/s (line-rate bound {} GB/s)",
                            fixed(c.busbw_gbyte_s),
                            fixed(bound)
                        )
                    } else {
                        format!("{} GB/s", fixed(c.busbw_gbyte_s))
                    },
                ));
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
pub(super) fn advice_lines(advice: &[AdviceReport], width: usize) -> String {
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
    let a = Assessor::with_published(published()).assess(
        design,
        catalog,
        &Question::collective(query.clone()),
    );
    let result = a.collective.expect("the question asks for a collective");
    let mut report = EvalReport::new(file, design, &a.metrics, &result, &a.advice);
    if let Some(c) = &mut report.collective {
        c.checked = a.checked;
    }
    report
}

pub(super) fn run(args: &EvalArgs, catalog: &Catalog) -> anyhow::Result<()> {
    let (file, json, query) = (&args.file, args.json, &args.query.query(args.bytes));
    let design = args.query.design_for_run(load(file)?);
    let mut report = eval_report(file, &design, query, catalog);
    if args.pue.is_some() || args.usd_per_kwh.is_some() {
        report.running = RunningCost::at_full_draw_given(
            report.power_w,
            report.running.site,
            args.pue,
            args.usd_per_kwh,
        );
    }
    if json {
        let mut text = serde_json::to_string_pretty(&report)?;
        text.push('\n');
        write_stdout(&text)
    } else {
        write_stdout(&report.to_table())
    }
}
