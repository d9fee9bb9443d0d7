//! The collective-time model: how long an all-reduce, all-gather, all-to-all... takes on the
//! drawn fabric, in nccl-tests' terms (time, algbw, busbw), which algorithm NCCL's tuner would
//! pick, and which links hold it back.
//!
//! Time = latency + bandwidth. Latency follows NCCL's per-step constants by hop type and
//! protocol, plus the stack latency of the technologies on the path (TCP, Thunderbolt...).
//! Bandwidth is a link-load model on the drawn graph: an algorithm becomes flows, flows are
//! routed over shortest paths through the switches (ECMP hashing or adaptive spreading), the
//! load on every link direction is summed, and each phase takes as long as its most loaded
//! link needs at its usable capacity (line rate × a per-technology efficiency).

pub mod advice;
mod channels;
mod desk_advice;
pub mod efficiency;
mod evaluate;
pub(crate) use evaluate::calibrated_ring_step_us;
mod fabric;
mod helpers;
pub mod latency;
pub mod library;
mod load_ratio;
pub mod logical;
pub mod ops;
mod plan;
pub mod release;
mod routing;
mod tree_pipeline;
mod upgrade;
pub mod workload;
mod workspace;

/// Designs the unit tests of this module share.
#[cfg(test)]
mod test_designs {
    use crate::generate::{Template, TemplateSpec, generate};
    use crate::model::{Catalog, Design, PartId};

    /// A rail-optimized fabric from the template: `nodes` of part `node`, `tiers` switch tiers.
    pub(crate) fn rail_optimized(nodes: u32, node: &str, tiers: u8) -> Design {
        let mut spec = TemplateSpec::new(Template::RailOptimized);
        spec.nodes = Some(nodes);
        spec.node = Some(PartId::new(node));
        spec.tiers = tiers;
        generate(&spec, &Catalog::builtin()).expect("generate")
    }
}

pub use advice::{Finding, Severity, add_workload_advice, advice, advice_reusing};
pub use latency::Protocol;
pub use library::{Forced, InSwitchHardware, Library};
pub use ops::{Op, SizeError, parse_size};
pub use routing::Routing;
pub use workload::{CommComponent, CommFabrics, CommKind, Moe};
pub use workload::{
    MODELS, Mapping, Precision, QuantizedWeights, Recompute, SERVING_SEQUENCES, Workload,
    WorkloadResult, fitted_layout, model_label, workload_step_comm, workload_step_comm_in,
};
pub use workspace::Workspace;

use crate::model::{Bytes, Catalog, Design, DeviceId, LinkId, NcclRelease};
use serde::{Deserialize, Serialize};

/// Algorithms, as NCCL has them (plus the hierarchical scheme of frameworks).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum Algorithm {
    /// Rings embedded in the topology; across nodes one per NIC (rail).
    Ring,
    /// One ring run both ways round, half the data each way (MLX's ring backends).
    BidirectionalRing,
    /// NCCL's double binary tree across nodes, chains inside them.
    Tree,
    /// In-switch reduction on NVSwitch gen3+ (one NVLink domain).
    Nvls,
    /// NVLS inside each node, trees between nodes.
    NvlsTree,
    /// In-network reduction in the switches (SHARP; NCCL's CollNet).
    Sharp,
    /// Reduce-scatter inside nodes, all-reduce per rail between nodes, all-gather inside.
    Hierarchical,
    /// Direct pairwise exchange (all-to-all, send/recv; on MLX JACCL's full mesh, each
    /// rank's whole array to every peer).
    Direct,
    /// MLX JACCL's mesh for large arrays: a reduce-scatter, then an all-gather, each one
    /// direct exchange between every pair of ranks.
    Mesh,
}

impl Algorithm {
    pub const ALL: [Algorithm; 9] = [
        Algorithm::Ring,
        Algorithm::BidirectionalRing,
        Algorithm::Tree,
        Algorithm::Nvls,
        Algorithm::NvlsTree,
        Algorithm::Sharp,
        Algorithm::Hierarchical,
        Algorithm::Direct,
        Algorithm::Mesh,
    ];

    pub fn label(self) -> &'static str {
        match self {
            Algorithm::Ring => "ring",
            Algorithm::BidirectionalRing => "bidirectional-ring",
            Algorithm::Tree => "tree",
            Algorithm::Nvls => "nvls",
            Algorithm::NvlsTree => "nvls-tree",
            Algorithm::Sharp => "sharp",
            Algorithm::Hierarchical => "hierarchical",
            Algorithm::Direct => "direct",
            Algorithm::Mesh => "mesh",
        }
    }

    /// Reduces inside the fabric, so busbw may exceed the wire rate.
    pub fn reduces_in_network(self) -> bool {
        matches!(
            self,
            Algorithm::Nvls | Algorithm::NvlsTree | Algorithm::Sharp
        )
    }
}

impl std::fmt::Display for Algorithm {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.label())
    }
}

/// Which algorithm to use: the fastest (as NCCL's tuner picks) or a forced one. Serialised
/// by variant name (`NvlsTree`), as the designer's preferences store it; reports write
/// `cli_name` instead.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default, Serialize, Deserialize)]
pub enum AlgoChoice {
    #[default]
    Auto,
    Ring,
    Tree,
    /// NVLS in one domain, NVLS-tree across several.
    Nvls,
    NvlsTree,
    Sharp,
    Hierarchical,
    Direct,
}

impl AlgoChoice {
    pub const ALL: [AlgoChoice; 8] = [
        AlgoChoice::Auto,
        AlgoChoice::Ring,
        AlgoChoice::Tree,
        AlgoChoice::Nvls,
        AlgoChoice::NvlsTree,
        AlgoChoice::Sharp,
        AlgoChoice::Hierarchical,
        AlgoChoice::Direct,
    ];

    /// The command line's name (`nvls-tree`), which `from_cli_name` reads back.
    pub fn cli_name(self) -> &'static str {
        match self {
            AlgoChoice::Auto => "auto",
            AlgoChoice::Ring => "ring",
            AlgoChoice::Tree => "tree",
            AlgoChoice::Nvls => "nvls",
            AlgoChoice::NvlsTree => "nvls-tree",
            AlgoChoice::Sharp => "sharp",
            AlgoChoice::Hierarchical => "hierarchical",
            AlgoChoice::Direct => "direct",
        }
    }

    /// Serialises as `cli_name`, for reports that print the command line's names.
    pub fn serialize_cli_name<S: serde::Serializer>(
        choice: &AlgoChoice,
        serializer: S,
    ) -> Result<S::Ok, S::Error> {
        serializer.serialize_str(choice.cli_name())
    }

    pub fn from_cli_name(name: &str) -> Option<AlgoChoice> {
        Some(match name.to_ascii_lowercase().as_str() {
            "auto" => AlgoChoice::Auto,
            "ring" => AlgoChoice::Ring,
            "tree" => AlgoChoice::Tree,
            "nvls" => AlgoChoice::Nvls,
            "nvls-tree" | "nvlstree" => AlgoChoice::NvlsTree,
            "sharp" | "collnet" => AlgoChoice::Sharp,
            "hierarchical" | "hier" => AlgoChoice::Hierarchical,
            "direct" | "pairwise" => AlgoChoice::Direct,
            _ => return None,
        })
    }
}

/// What to compute.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct CollectiveQuery {
    pub op: Op,
    /// nccl-tests' size: the whole buffer (for all-gather and reduce-scatter, count × n).
    pub bytes: Bytes,
    /// The first N GPUs in node order; None = all.
    pub gpus: Option<u32>,
    pub algorithm: AlgoChoice,
    pub routing: Routing,
    /// None = the fastest protocol.
    pub protocol: Option<Protocol>,
}

impl CollectiveQuery {
    pub fn new(op: Op, bytes: Bytes) -> Self {
        CollectiveQuery {
            op,
            bytes,
            gpus: None,
            algorithm: AlgoChoice::Auto,
            routing: Routing::Ecmp,
            protocol: None,
        }
    }
}

/// Kind of resource a load belongs to.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum ResourceKind {
    /// A drawn link.
    Link,
    /// GPUs' NVLink ports inside a node or rack.
    NvLink,
    NvLinkBridge,
    GpuPcie,
    NicPcie,
}

/// How busy one resource is during the bandwidth part of the collective.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct LinkLoad {
    /// The drawn link, when the resource is one.
    pub link: Option<LinkId>,
    /// The node whose inside this is, for NVLink/PCIe resources.
    pub device: Option<DeviceId>,
    pub kind: ResourceKind,
    pub label: String,
    /// Busy time over the bandwidth term: 1.0 for the bottleneck.
    pub utilization: f64,
    /// Busy time over the whole collective time (latency included).
    pub time_share: f64,
}

/// One algorithm and protocol the tuner weighed.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Candidate {
    pub algorithm: Algorithm,
    pub protocol: Protocol,
    pub time_us: f64,
}

#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct CollectiveResult {
    pub op: Op,
    pub bytes: Bytes,
    pub gpus: u32,
    pub algorithm: Algorithm,
    pub protocol: Protocol,
    pub routing: Routing,
    pub time_us: f64,
    pub latency_us: f64,
    pub bandwidth_us: f64,
    pub algbw_gbyte_s: f64,
    pub busbw_gbyte_s: f64,
    /// What the hardware can carry at line rate for this collective without in-network
    /// reduction (per GPU and across every node's network ports).
    pub busbw_bound_gbyte_s: f64,
    /// The most utilised resources, busiest first.
    pub bottleneck: Vec<LinkLoad>,
    /// Every drawn link that carries traffic, for the canvas heatmap.
    pub link_utilization: Vec<(LinkId, f64)>,
    /// Busiest internal resource (NVLink, PCIe) per GPU node.
    pub device_utilization: Vec<(DeviceId, f64)>,
    /// The algorithms and protocols costed. For one size (`collective`), ring and
    /// hierarchical are left out when their latency alone exceeds the answer's time, and tree,
    /// NVLS-tree and SHARP when their loads part-way already make them slower than an
    /// algorithm costed before them; a sweep costs every algorithm.
    pub candidates: Vec<Candidate>,
    pub notes: Vec<String>,
    /// The collective library that runs it, and what the model assumes of it.
    pub library: Library,
    /// The NCCL release the design names, where it names one (NCCL only).
    pub nccl_release: Option<NcclRelease>,
    pub assumes: String,
    /// Why this algorithm and protocol: the fastest of those costed, and the runner-up.
    pub why: String,
    /// How many times longer the answer's bandwidth term is for queues between switches,
    /// which NCCL's tuner does not see when it picks (1 where there are none).
    pub unseen_queueing: f64,
}

impl CollectiveResult {
    /// "NCCL", or "NCCL 2.21.5" where the design names a release other than the modelled one;
    /// the other libraries by name.
    pub fn library_text(&self) -> String {
        match self.nccl_release {
            Some(r) if self.library.is_nccl() && r != NcclRelease::MODELLED => {
                format!("{} {r}", self.library.label())
            }
            _ => self.library.label().to_string(),
        }
    }

    /// "nvls-tree/Simple" under NCCL; the algorithm alone under MLX and Gloo, which move
    /// plain buffers and have no protocols to name.
    pub fn algorithm_text(&self) -> String {
        if self.library.is_nccl() {
            format!("{}/{}", self.algorithm, self.protocol.label())
        } else {
            self.algorithm.to_string()
        }
    }

    /// "all-reduce of 1 GiB on 256 GPUs (NCCL, nvls-tree/Simple)": what was timed, by which
    /// library and algorithm, for captions that show its time or its loads.
    pub fn summary(&self) -> String {
        format!(
            "{} of {} on {} GPUs ({}, {})",
            self.op,
            self.bytes,
            crate::model::units::group_thousands(i64::from(self.gpus)),
            self.library_text(),
            self.algorithm_text()
        )
    }
}

#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub enum CollectiveError {
    #[error("the design has no GPUs")]
    NoGpus,
    #[error("a collective needs at least 2 GPUs; {available} available, {requested} requested")]
    TooFewGpus { available: u64, requested: u64 },
    #[error("{requested} GPUs requested but the design has {available}")]
    NotEnoughGpus { available: u64, requested: u64 },
    #[error("not connected: no working path from {}", path_ends(*from, *to, names.as_ref()))]
    NotConnected {
        from: DeviceId,
        to: DeviceId,
        /// The two devices' names, once the design they are in has named them
        /// (`with_names`); their ids until then.
        names: Option<(String, String)>,
    },
    #[error("device {device} uses unknown GPU part `{part}`")]
    UnknownPart { part: String, device: DeviceId },
    #[error("{algorithm} is not available for {op}: {reason}")]
    AlgorithmUnavailable {
        algorithm: Algorithm,
        op: Op,
        reason: String,
    },
    /// A plan stopped early because it was already slower than one costed (never reported:
    /// the answer lists the algorithm as left uncosted).
    #[error("{algorithm} is slower at this size than an algorithm already costed")]
    StoppedEarly { algorithm: Algorithm },
    #[error("{resource} has no capacity but must carry traffic")]
    ZeroCapacity { resource: String },
    #[error("expert parallelism of {ep} does not divide data parallelism of {dp}")]
    ExpertParallelism { ep: u32, dp: u32 },
    #[error("{library} cannot run this design: {reason}", library = library.label())]
    LibraryUnavailable { library: Library, reason: String },
    #[error("{library} has no {op} here{what}", library = library.label(), what = if forced.is_empty() { String::new() } else { format!(" with the {forced} algorithm") })]
    NotInLibrary {
        library: Library,
        op: Op,
        /// The algorithm asked for, or empty under auto.
        forced: String,
    },
}

/// "node-03 to node-07", or by ids where the names are not known.
fn path_ends(from: DeviceId, to: DeviceId, names: Option<&(String, String)>) -> String {
    match names {
        Some((a, b)) => format!("{a} to {b}"),
        None => format!("{from} to {to}"),
    }
}

impl CollectiveError {
    /// The error with the devices it mentions named as in `design`: people read "node-03",
    /// not the id "d3".
    pub fn with_names(self, design: &Design) -> Self {
        match self {
            CollectiveError::NotConnected { from, to, .. } => {
                let name = |id: DeviceId| {
                    design
                        .device(id)
                        .map_or_else(|| id.to_string(), |d| d.name.clone())
                };
                CollectiveError::NotConnected {
                    from,
                    to,
                    names: Some((name(from), name(to))),
                }
            }
            CollectiveError::AlgorithmUnavailable {
                algorithm,
                op,
                reason,
            } => CollectiveError::AlgorithmUnavailable {
                algorithm,
                op,
                reason: switches_named(&reason, design),
            },
            other => other,
        }
    }
}

/// `reason` with each "switch d7" (the planners name switches by id, having no names) read
/// "switch spine-02", or "switch-01" alone, as `design` names it.
fn switches_named(reason: &str, design: &Design) -> String {
    const MARK: &str = "switch d";
    let mut out = String::with_capacity(reason.len());
    let mut rest = reason;
    while let Some(at) = rest.find(MARK) {
        let after = &rest[at + MARK.len()..];
        let digits = after.bytes().take_while(u8::is_ascii_digit).count();
        let name = after[..digits]
            .parse::<u32>()
            .ok()
            .and_then(|n| design.device(DeviceId(n)))
            .map(|d| d.name.as_str());
        out.push_str(&rest[..at]);
        match name {
            // "switch switch-01" says it twice.
            Some(name) if name.to_lowercase().contains("switch") => out.push_str(name),
            Some(name) => {
                out.push_str("switch ");
                out.push_str(name);
            }
            None => out.push_str(&rest[at..at + MARK.len() + digits]),
        }
        rest = &after[digits..];
    }
    out.push_str(rest);
    out
}

/// Time, bandwidth and bottleneck of one collective on the design.
pub fn collective(
    design: &Design,
    catalog: &Catalog,
    q: &CollectiveQuery,
) -> Result<CollectiveResult, CollectiveError> {
    collective_in(design, catalog, q, &Workspace::default())
}

/// `collective`, filling the memory `workspace` kept from earlier evaluations (and keeping
/// this one's for the next): for callers that evaluate again and again.
pub fn collective_in(
    design: &Design,
    catalog: &Catalog,
    q: &CollectiveQuery,
    workspace: &Workspace,
) -> Result<CollectiveResult, CollectiveError> {
    let keep = evaluate::Keep::BestAt(q.bytes.0 as f64);
    let ev = evaluate::Evaluator::new(design, catalog, q, keep, workspace)
        .map_err(|e| e.with_names(design))?;
    Ok(ev.result_at(q.bytes))
}

/// Whether a collective on the design's first `gpus` GPUs (as `collective` takes them) has
/// them all in one node: then it crosses no network, whatever the design's fabric.
pub fn first_gpus_share_a_node(
    design: &Design,
    catalog: &Catalog,
    gpus: u32,
    workspace: &Workspace,
) -> bool {
    let Ok(mut fab) = workspace.build_fabric(design, catalog) else {
        return false;
    };
    let first = fab.gpus.iter().take(gpus as usize);
    let one = fab.gpus.len() >= gpus as usize
        && first
            .clone()
            .all(|g| fab.gpus.first().is_some_and(|f| f.node == g.node));
    workspace.keep_fabric(&mut fab);
    one
}

/// The sizes of a sweep: 8 B to 8 GiB, doubling.
pub fn sweep_sizes() -> Vec<Bytes> {
    (3..=33).map(|k| Bytes(1u64 << k)).collect()
}

/// nccl-tests-style sweep from 8 B to 8 GiB (×2 steps); `q.bytes` is ignored. The flows are
/// routed once: loads scale with size.
pub fn sweep(
    design: &Design,
    catalog: &Catalog,
    q: &CollectiveQuery,
) -> Result<Vec<CollectiveResult>, CollectiveError> {
    let workspace = Workspace::default();
    let ev = evaluate::Evaluator::new(design, catalog, q, evaluate::Keep::All, &workspace)
        .map_err(|e| e.with_names(design))?;
    Ok(sweep_sizes().into_iter().map(|s| ev.result_at(s)).collect())
}

/// A sweep like `sweep`'s at the given sizes; `q.bytes` is ignored.
pub fn sweep_at(
    design: &Design,
    catalog: &Catalog,
    q: &CollectiveQuery,
    sizes: &[Bytes],
) -> Result<Vec<CollectiveResult>, CollectiveError> {
    let keep = match sizes {
        [one] => evaluate::Keep::BestAt(one.0 as f64),
        _ => evaluate::Keep::All,
    };
    let workspace = Workspace::default();
    let ev = evaluate::Evaluator::new(design, catalog, q, keep, &workspace)
        .map_err(|e| e.with_names(design))?;
    Ok(sizes.iter().map(|&s| ev.result_at(s)).collect())
}
