//! `railyard generate TEMPLATE -o FILE`: builds a design from a template and writes it.

use super::{count_of, write_stdout};
use crate::analysis::checks::checks;
use crate::analysis::finding::{Finding, Severity};
use crate::generate::{Template, TemplateSpec, generate};
use crate::io::design_file::{design_to_string, save_design};
use crate::model::units::group_thousands;
use crate::model::validate::MAX_GPUS;
use crate::model::{Catalog, Design, PartId, Transport};
use anyhow::{Context, bail};
use clap::builder::{PossibleValuesParser, TypedValueParser};
use clap::{Args, ValueEnum};
use std::path::PathBuf;

/// Most nodes `generate` accepts (for `nvl72`, racks count as 18 nodes each); with the
/// GPUs-per-node limit below, designs stay within `MAX_GPUS` (2,000,000).
pub const MAX_NODES: u32 = 262_144;
/// Most GPUs per node `generate` accepts.
pub const MAX_GPUS_PER_NODE: u32 = 64;

#[derive(Debug, Clone, Copy, ValueEnum)]
enum TransportArg {
    Tcp,
    Rdma,
    /// AWS Elastic Fabric Adapter (SRD) over Ethernet.
    Efa,
}

#[derive(Debug, Args)]
pub(super) struct GenerateArgs {
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
    /// Transport over Ethernet and Thunderbolt links [default: InfiniBand where both ends
    /// speak it, RDMA (RoCEv2) on an Ethernet NIC that does RDMA, else TCP; over Thunderbolt
    /// TCP, and rdma for MLX's JACCL on Thunderbolt 5 where macOS has RDMA turned on]
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
        Ok(r) if r.is_finite() && (1.0..=1000.0).contains(&r) => Ok(r),
        _ => Err(format!(
            "`{text}` is not a ratio from 1 to 1000 (1 is non-blocking, 3 is 3:1; below 1 a \
             leaf would have more uplinks than downlinks)"
        )),
    }
}

fn part(id: &Option<String>) -> Option<PartId> {
    id.as_deref().map(PartId::new)
}

pub(super) fn run(args: &GenerateArgs, catalog: &Catalog) -> anyhow::Result<()> {
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
        TransportArg::Efa => Transport::Efa,
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
    // Which GPUs, so a chassis's default is never a surprise.
    let gpu_parts: std::collections::BTreeSet<&str> = design
        .devices
        .iter()
        .filter_map(|d| d.kind.as_node())
        .map(|n| n.gpu.as_str())
        .collect();
    let summary = format!(
        "{} ({}) in {}, {}, {}",
        count_of(design.gpu_count() as usize, "GPU", "GPUs"),
        gpu_parts.into_iter().collect::<Vec<_>>().join(", "),
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
    // A template filled with parts that do not go together (eight cards in a four-slot
    // chassis) still writes, but never silently.
    for line in check_errors(&design, catalog) {
        eprintln!("railyard: warning: {line}");
    }
    Ok(())
}

/// The design's failed checks, one line per kind with its first instance and how many more.
fn check_errors(design: &Design, catalog: &Catalog) -> Vec<String> {
    let errors: Vec<Finding> = checks(design, catalog)
        .into_iter()
        .filter(|f| f.severity == Severity::Error)
        .collect();
    let mut lines: Vec<String> = Vec::new();
    let mut seen: Vec<&str> = Vec::new();
    for f in &errors {
        if seen.contains(&f.code) {
            continue;
        }
        seen.push(f.code);
        let more = errors.iter().filter(|g| g.code == f.code).count() - 1;
        let more = if more > 0 {
            format!(" (and {more} more like it)")
        } else {
            String::new()
        };
        lines.push(format!("{}: {}{more}", f.code, f.message));
    }
    if !lines.is_empty() {
        lines.push(format!(
            "the design fails {}: `railyard eval` lists them; fix the parts or the counts",
            count_of(errors.len(), "check", "checks")
        ));
    }
    lines
}
