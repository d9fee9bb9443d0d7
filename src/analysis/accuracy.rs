//! How far the model has been from published measurements of systems like the one drawn, at
//! sizes near the one asked: the line under a collective time that tells whoever puts it on a
//! slide how much to trust it. The validation sets (`railyard validate`) are predicted once;
//! a design then draws on the counted rows of every set whose system is of its kind (same
//! library, GPU architecture, path between GPUs inside a node, and network between nodes, or
//! the same number of GPUs when all sit in one NVLink domain), of the same collective with the
//! same algorithm choice, from half to twice the size. Rows that measured only a harness's
//! kernel launches (nccl-tests -g 8 at small sizes) say nothing of the collective and are left
//! out. A design of no measured kind gets no figure: its accuracy is unknown, and the line
//! says so.

use super::collective::efficiency::transport_of;
use super::collective::{CollectiveQuery, Library, Workspace, first_gpus_share_a_node};
use super::validate::{RowPrediction, median};
use crate::model::catalog::GpuArch;
use crate::model::{Bytes, Catalog, Design, DeviceId, DeviceKind, LinkTech, ScaleUp, Transport};
use serde::Serialize;
use std::collections::BTreeSet;

/// How GPUs inside one node (or NVLink domain) reach each other.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum InsideNode {
    NvSwitch,
    NvLinkBridge,
    PciePeerToPeer,
    /// PCIe without peer-to-peer: through host memory.
    PcieHostMemory,
    /// One GPU per node (or Apple silicon's unified memory): nothing crosses inside a node.
    None,
}

/// What kind of system a design is, as far as the collective model's accuracy goes.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct SystemClass {
    pub library: Library,
    pub arch: GpuArch,
    pub inside: InsideNode,
    /// The network between NVLink domains (technology and transport); None when every GPU
    /// sits in one domain.
    pub network: Option<(LinkTech, Transport)>,
    /// Every GPU of the design.
    pub gpus: u32,
    /// GPU nodes (or a rack's trays), for the label only.
    pub nodes: u32,
}

impl SystemClass {
    /// The design's kind; None when it mixes GPU architectures, paths inside nodes or network
    /// technologies (no measured system is such a mix), has a GPU the catalog lacks, or has
    /// none.
    pub fn of(design: &Design, catalog: &Catalog) -> Option<SystemClass> {
        let mut archs = Vec::new();
        let mut insides = Vec::new();
        let mut domains: BTreeSet<DeviceId> = BTreeSet::new();
        let mut node_ids: BTreeSet<DeviceId> = BTreeSet::new();
        let mut gpus = 0;
        for d in &design.devices {
            let DeviceKind::GpuNode(n) = &d.kind else {
                continue;
            };
            if n.gpu_count == 0 {
                continue;
            }
            let arch = catalog.gpu(&n.gpu)?.arch;
            if !archs.contains(&arch) {
                archs.push(arch);
            }
            let inside = match (&n.scale_up, n.gpu_count) {
                (_, 1) | (ScaleUp::UnifiedMemory, _) => InsideNode::None,
                (ScaleUp::NvSwitch { .. }, _) => InsideNode::NvSwitch,
                (ScaleUp::NvLinkBridgePairs { .. }, _) => InsideNode::NvLinkBridge,
                (ScaleUp::Pcie { peer_to_peer, .. }, _) => {
                    if *peer_to_peer {
                        InsideNode::PciePeerToPeer
                    } else {
                        InsideNode::PcieHostMemory
                    }
                }
            };
            if !insides.contains(&inside) {
                insides.push(inside);
            }
            domains.insert(n.domain.unwrap_or(d.id));
            node_ids.insert(d.id);
            gpus += n.gpu_count;
        }
        // A rack's trays share one NVLink domain: inside it, NVSwitch.
        if insides.len() > 1 && domains.len() == 1 {
            insides.retain(|&i| i != InsideNode::None);
        }
        let (&[arch], &[inside]) = (&archs[..], &insides[..]) else {
            return None;
        };
        let library = Library::of(design, catalog);
        let network = if domains.len() > 1 {
            let mut kinds: Vec<(LinkTech, Transport)> = Vec::new();
            for l in &design.links {
                let scale_out = !matches!(
                    l.tech,
                    LinkTech::NvLink | LinkTech::NvLinkBridge | LinkTech::Pcie
                );
                let at_node = node_ids.contains(&l.a.device) || node_ids.contains(&l.b.device);
                // The transport the library runs, not the one the link offers.
                let kind = (l.tech, transport_of(library, l.tech, l.transport));
                if scale_out && at_node && !kinds.contains(&kind) {
                    kinds.push(kind);
                }
            }
            let [kind] = kinds[..] else {
                return None;
            };
            Some(kind)
        } else {
            None
        };
        Some(SystemClass {
            library,
            arch,
            inside,
            network,
            gpus,
            nodes: node_ids.len() as u32,
        })
    }

    /// The kind of a collective on the design's first `gpus` GPUs: the design's, or where
    /// they are some of a multi-node design's, the one node's they sit in or the same network
    /// on fewer GPUs.
    pub fn of_run(
        design: &Design,
        catalog: &Catalog,
        gpus: u32,
        workspace: &Workspace,
    ) -> Option<SystemClass> {
        let class = SystemClass::of(design, catalog)?;
        if class.network.is_none() || gpus == 0 || gpus >= class.gpus {
            return Some(class);
        }
        Some(
            if first_gpus_share_a_node(design, catalog, gpus, workspace) {
                class.within_one_node(gpus)
            } else {
                class.on_fewer(gpus)
            },
        )
    }

    /// The kind of `gpus` of the design's GPUs that sit in one node: what that node alone
    /// is, with no network between them.
    pub fn within_one_node(&self, gpus: u32) -> SystemClass {
        SystemClass {
            network: None,
            gpus,
            nodes: 1,
            ..self.clone()
        }
    }

    /// The kind of `gpus` of the design's GPUs that span nodes: the same network, fewer GPUs.
    pub fn on_fewer(&self, gpus: u32) -> SystemClass {
        SystemClass {
            gpus,
            ..self.clone()
        }
    }

    /// "8 Ampere GPUs on NVSwitch in one node, NCCL"; "Volta GPUs, one per node, across
    /// Ethernet with TCP, NCCL".
    pub fn label(&self) -> String {
        let arch = match self.arch {
            GpuArch::Volta => "Volta",
            GpuArch::Turing => "Turing",
            GpuArch::Ampere => "Ampere",
            GpuArch::Ada => "Ada",
            GpuArch::Hopper => "Hopper",
            GpuArch::Blackwell => "Blackwell",
            GpuArch::AppleM2 => "Apple M2",
            GpuArch::AppleM3 => "Apple M3",
            GpuArch::AppleM4 => "Apple M4",
        };
        let inside = match self.inside {
            InsideNode::NvSwitch => " on NVSwitch",
            InsideNode::NvLinkBridge => " on NVLink bridges",
            InsideNode::PciePeerToPeer => " on PCIe (peer to peer)",
            InsideNode::PcieHostMemory => " on PCIe through host memory",
            InsideNode::None => "",
        };
        let gpus = match self.network {
            Some((tech, transport)) => {
                let per_node = if self.inside == InsideNode::None {
                    ", one per node,"
                } else {
                    ""
                };
                format!(
                    "{arch} GPUs{inside}{per_node} across {} with {}",
                    tech.label(),
                    transport.label()
                )
            }
            None => {
                let scope = if self.nodes > 1 {
                    "one NVLink domain"
                } else {
                    "one node"
                };
                format!("{} {arch} GPUs{inside} in {scope}", self.gpus)
            }
        };
        format!("{gpus}, {}", self.library.label())
    }

    /// The label of a collective run on `gpus` of the design's GPUs: inside one domain the
    /// kind of that many GPUs ("2 Hopper GPUs on NVSwitch in one node"), as the rows drawn on
    /// are; across domains the share, since a few GPUs of many nodes may all sit in one.
    pub fn label_on(&self, gpus: u32) -> String {
        if gpus == 0 || gpus == self.gpus {
            return self.label();
        }
        match self.network {
            None => SystemClass {
                gpus,
                ..self.clone()
            }
            .label(),
            Some(_) => format!("{gpus} of {} {}", self.gpus, self.label()),
        }
    }

    /// Whether measurements of `other` on `other_gpus` GPUs speak for this kind of system on
    /// `gpus`: the same kind, and inside one domain the same number of GPUs (NCCL's rings and
    /// channels change with it; across domains the network's kind is what the measured pairs
    /// of nodes pin down).
    fn matches(&self, gpus: u32, other: &SystemClass, other_gpus: u32) -> bool {
        self.library == other.library
            && self.arch == other.arch
            && self.inside == other.inside
            && self.network == other.network
            && (self.network.is_some() || gpus == other_gpus)
    }
}

/// One published system's predicted rows.
#[derive(Debug, Clone)]
pub struct PublishedSet {
    /// The ids' prefix (`OCIA100-1N-`).
    pub prefix: String,
    pub class: SystemClass,
    pub rows: Vec<RowPrediction>,
}

/// Every published system with its class.
#[derive(Debug, Clone, Default)]
pub struct Published {
    pub sets: Vec<PublishedSet>,
}

/// What the published measurements near a query say of the model.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Evidence {
    /// The measured systems drawn on, by id prefix (without the trailing dash).
    pub systems: Vec<String>,
    pub rows: usize,
    /// The smallest and largest measured size among them.
    pub smallest: Bytes,
    pub largest: Bytes,
    /// Predicted / measured time − 1: the lowest, the median and the highest.
    pub lowest_error: f64,
    pub median_error: f64,
    pub highest_error: f64,
    /// The fewest and the most GPUs the measured runs had, and the GPUs of the collective they
    /// are held against: across nodes a pair of nodes speaks for a whole fabric, and says so.
    pub measured_gpus: (u32, u32),
    pub on_gpus: u32,
}

impl Evidence {
    /// "Published runs of its kind (8 Ampere GPUs on NVSwitch in one node, NCCL; OCIA100-1N
    /// and AZA100, 4 rows from 1 MiB to 2 MiB): the model's time was 17–53 % under the
    /// measured, median 39 % (railyard validate lists the rows)."
    pub fn text(&self, kind: &str) -> String {
        let span = if self.smallest == self.largest {
            format!("at {}", self.smallest)
        } else {
            format!("from {} to {}", self.smallest, self.largest)
        };
        let systems = match &self.systems[..] {
            [one] => one.clone(),
            [init @ .., last] => format!("{} and {last}", init.join(", ")),
            [] => String::new(),
        };
        let rows = if self.rows == 1 { "row" } else { "rows" };
        let scale = self
            .other_scale()
            .map_or_else(String::new, |gpus| format!(" on {gpus}"));
        format!(
            "Published runs of its kind ({kind}; {systems}{scale}, {} {rows} {span}): the \
             model's time was {} (railyard validate lists the rows).",
            self.rows,
            self.spread(" the measured")
        )
    }

    /// "Published runs of this kind: 17–53 % under measured, median 39 %": the sidebar's line,
    /// naming the runs' size where it is not the collective's ("…, on 16 GPUs: …").
    pub fn short_text(&self) -> String {
        let scale = self
            .other_scale()
            .map_or_else(String::new, |gpus| format!(", on {gpus}"));
        format!(
            "Published runs of this kind{scale}: {}",
            self.spread(" measured")
        )
    }

    /// "16 GPUs" or "16–64 GPUs" when the measured runs were not of the collective's size.
    fn other_scale(&self) -> Option<String> {
        let (fewest, most) = self.measured_gpus;
        if (fewest..=most).contains(&self.on_gpus) {
            return None;
        }
        Some(if fewest == most {
            format!("{fewest} GPUs")
        } else {
            format!("{fewest}–{most} GPUs")
        })
    }

    /// "17–53 % under{measured}, median 39 %", or "from 26 % under to 34 % over{measured},
    /// median 8 % over" when the rows fall on both sides.
    fn spread(&self, measured: &str) -> String {
        let pct = |e: f64| format!("{:.0}", (e * 100.0).abs());
        let (low, high, median) = (
            pct(self.lowest_error),
            pct(self.highest_error),
            pct(self.median_error),
        );
        let side = |e: f64| if e < 0.0 { "under" } else { "over" };
        if self.lowest_error < 0.0 && self.highest_error > 0.0 {
            return format!(
                "from {low} % under to {high} % over{measured}, median {median} % {}",
                side(self.median_error)
            );
        }
        // All on one side: the nearer figure first.
        let (near, far) = if self.lowest_error >= 0.0 {
            (&low, &high)
        } else {
            (&high, &low)
        };
        let s = side(self.median_error);
        if near == far {
            format!("{near} % {s}{measured}")
        } else {
            format!("{near}–{far} % {s}{measured}, median {median} %")
        }
    }
}

/// The published rows that speak for a design of `class` whose collective `query` ran on
/// `gpus` GPUs, with their system's prefix: counted, the same collective, algorithm choice and
/// protocol, not under a harness's launch floor, from a system of the same kind. Every size.
fn speaking_rows<'a>(
    published: &'a Published,
    class: &'a SystemClass,
    query: &'a CollectiveQuery,
    gpus: u32,
) -> impl Iterator<Item = (&'a str, &'a RowPrediction, u32)> + 'a {
    // A few GPUs of a fabric of many nodes may all sit in one: no measured kind says which.
    let whole = class.network.is_none() || gpus == class.gpus;
    published
        .sets
        .iter()
        .filter(move |_| whole)
        .flat_map(|set| set.rows.iter().map(move |p| (set, p)))
        .filter(move |(set, p)| {
            let row = &p.row;
            row.excluded.is_none()
                && !p.launch_bound
                && row.op == query.op
                && row.algorithm == query.algorithm
                && row.protocol == query.protocol
                && class.matches(gpus, &set.class, row.gpus.unwrap_or(set.class.gpus))
        })
        .map(|(set, p)| (set.prefix.as_str(), p, p.row.gpus.unwrap_or(set.class.gpus)))
}

/// What the rows that speak for `query` (see `speaking_rows`) say from half to twice its
/// size. None when there is none.
pub fn evidence(
    published: &Published,
    class: &SystemClass,
    query: &CollectiveQuery,
    gpus: u32,
) -> Option<Evidence> {
    let near =
        |b: Bytes| b.0.saturating_mul(2) >= query.bytes.0 && b.0 <= query.bytes.0.saturating_mul(2);
    let mut systems: Vec<String> = Vec::new();
    let mut errors = Vec::new();
    let (mut smallest, mut largest) = (u64::MAX, 0);
    let (mut fewest, mut most) = (u32::MAX, 0);
    for (prefix, p, measured_gpus) in
        speaking_rows(published, class, query, gpus).filter(|(_, p, _)| near(p.row.bytes))
    {
        fewest = fewest.min(measured_gpus);
        most = most.max(measured_gpus);
        let system = prefix.trim_end_matches('-');
        if !systems.iter().any(|s| s == system) {
            systems.push(system.to_string());
        }
        errors.push(p.error);
        smallest = smallest.min(p.row.bytes.0);
        largest = largest.max(p.row.bytes.0);
    }
    errors.sort_by(f64::total_cmp);
    let median = median(&errors)?;
    Some(Evidence {
        systems,
        rows: errors.len(),
        smallest: Bytes(smallest),
        largest: Bytes(largest),
        lowest_error: errors[0],
        median_error: median,
        highest_error: errors[errors.len() - 1],
        measured_gpus: (fewest, most),
        on_gpus: gpus,
    })
}

/// One published measurement, as nccl-tests printed it (or its busbw taken at the same time).
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct MeasuredPoint {
    /// The system's prefix, without the trailing dash.
    pub system: String,
    pub bytes: Bytes,
    pub time_us: f64,
    pub busbw_gbyte_s: f64,
    /// The model's time on the design standing for that system, and its error
    /// (predicted / measured − 1).
    pub model_time_us: f64,
    pub error: f64,
}

/// Every published measurement that speaks for `query` on a design of `class` (see
/// `speaking_rows`), at every size: the dots a sweep's curve is drawn against.
pub fn measured_points(
    published: &Published,
    class: &SystemClass,
    query: &CollectiveQuery,
    gpus: u32,
) -> Vec<MeasuredPoint> {
    speaking_rows(published, class, query, gpus)
        .filter(|(_, p, _)| p.error > -1.0 && p.predicted_time_us > 0.0)
        .map(|(prefix, p, _)| MeasuredPoint {
            system: prefix.trim_end_matches('-').to_string(),
            bytes: p.row.bytes,
            time_us: p.measured_time_us(),
            busbw_gbyte_s: p.measured_busbw_gbyte_s(),
            model_time_us: p.predicted_time_us,
            error: p.error,
        })
        .collect()
}

/// A collective time checked against the published measurements.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Checked {
    /// The design's kind in words ("8 Ampere GPUs on NVSwitch in one node, NCCL"); None for a
    /// mix of kinds, which no published system is.
    pub kind: Option<String>,
    /// What the published runs of that kind near the size say; None when there is none.
    pub against: Option<Evidence>,
}

impl Checked {
    pub fn of(
        published: &Published,
        class: &SystemClass,
        query: &CollectiveQuery,
        gpus: u32,
    ) -> Checked {
        Checked {
            kind: Some(class.label_on(gpus)),
            against: evidence(published, class, query, gpus),
        }
    }

    /// A design of no single kind (or with a GPU the catalog lacks): nothing published
    /// speaks for it.
    pub fn mixed() -> Checked {
        Checked {
            kind: None,
            against: None,
        }
    }

    /// "3–6 % under measured, median 4 %", or "unknown (none near this size)": a column of
    /// designs side by side.
    pub fn verdict(&self) -> String {
        match &self.against {
            Some(e) => e.spread(" measured"),
            None => "unknown (none near this size)".into(),
        }
    }

    /// The sidebar's line (the full text on hover).
    pub fn short_text(&self) -> String {
        match &self.against {
            Some(e) => e.short_text(),
            None => "No counted published run of this kind near this size: accuracy unknown".into(),
        }
    }

    /// The line a collective time carries.
    pub fn text(&self) -> String {
        match (&self.kind, &self.against) {
            (Some(kind), Some(e)) => e.text(kind),
            (Some(kind), None) => format!(
                "No counted published run of its kind ({kind}) near this size: how far the \
                 model is off here is unknown (railyard validate lists what has been measured, \
                 and why a run is not counted)."
            ),
            _ => "No published run of a system like this one, which mixes GPU architectures, \
                  paths inside nodes or networks, or has a GPU the catalog lacks: how far the \
                  model is off here is unknown (railyard validate lists what has been \
                  measured)."
                .into(),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::analysis::collective::{AlgoChoice, Op};
    use crate::analysis::validate::MeasuredRow;

    const MIB: u64 = 1 << 20;

    fn class(arch: GpuArch, network: Option<(LinkTech, Transport)>, gpus: u32) -> SystemClass {
        SystemClass {
            library: Library::Nccl,
            arch,
            inside: InsideNode::NvSwitch,
            network,
            gpus,
            nodes: 1,
        }
    }

    /// A predicted row: `error` is predicted / measured − 1.
    fn row(op: Op, bytes: u64, error: f64) -> RowPrediction {
        let measured = 100.0;
        RowPrediction {
            row: MeasuredRow {
                id: format!("X-{bytes}"),
                op,
                bytes: Bytes(bytes),
                size_range: None,
                gpus: None,
                time_us: Some(measured),
                busbw_gbyte_s: None,
                algorithm: AlgoChoice::Auto,
                protocol: None,
                excluded: None,
                harness: Default::default(),
                nccl: None,
            },
            predicted_time_us: measured * (1.0 + error),
            predicted_busbw_gbyte_s: 1.0,
            algorithm: "ring",
            protocol: "Simple",
            launch_bound: false,
            error,
        }
    }

    fn evidence_text(lowest: f64, median: f64, highest: f64, rows: usize) -> String {
        Evidence {
            systems: vec!["OCIA100-1N".into(), "AZA100".into()],
            rows,
            smallest: Bytes(MIB),
            largest: Bytes(2 * MIB),
            lowest_error: lowest,
            median_error: median,
            highest_error: highest,
            measured_gpus: (8, 8),
            on_gpus: 8,
        }
        .text("8 Ampere GPUs on NVSwitch in one node, NCCL")
    }

    #[test]
    fn the_line_says_how_far_and_which_way() {
        assert_eq!(
            evidence_text(-0.532, -0.393, -0.171, 4),
            "Published runs of its kind (8 Ampere GPUs on NVSwitch in one node, NCCL; \
             OCIA100-1N and AZA100, 4 rows from 1 MiB to 2 MiB): the model's time was 17–53 % \
             under the measured, median 39 % (railyard validate lists the rows)."
        );
        assert!(
            evidence_text(-0.26, 0.08, 0.34, 4).contains(
                "was from 26 % under to 34 % over the measured, median 8 % over (railyard"
            )
        );
        // Rows that round to one figure give it once.
        assert!(evidence_text(0.031, 0.032, 0.034, 2).contains("was 3 % over the measured ("));
    }

    #[test]
    fn a_kind_reads_as_what_was_drawn() {
        let tcp = Some((LinkTech::Ethernet, Transport::Tcp));
        let mut pair = class(GpuArch::Volta, tcp, 2);
        pair.inside = InsideNode::None;
        assert_eq!(
            pair.label(),
            "Volta GPUs, one per node, across Ethernet with TCP, NCCL"
        );
        let mut rack = class(GpuArch::Blackwell, None, 72);
        rack.nodes = 18;
        assert_eq!(
            rack.label(),
            "72 Blackwell GPUs on NVSwitch in one NVLink domain, NCCL"
        );
        assert_eq!(
            Checked::mixed().text(),
            "No published run of a system like this one, which mixes GPU architectures, paths \
             inside nodes or networks, or has a GPU the catalog lacks: how far the model is off \
             here is unknown (railyard validate lists what has been measured)."
        );
    }

    #[test]
    fn only_rows_that_speak_for_the_query_count() {
        let a100 = class(GpuArch::Ampere, None, 8);
        let mut rows = vec![
            row(Op::AllReduce, MIB, -0.5),
            row(Op::AllReduce, 2 * MIB, -0.2),
            // Four times the size: outside half to twice.
            row(Op::AllReduce, 4 * MIB, 0.1),
            // Another collective.
            row(Op::AllGather, MIB, 0.3),
        ];
        // Under the harness's launch floor: it timed the launches.
        let mut floor = row(Op::AllReduce, MIB / 2, -0.4);
        floor.launch_bound = true;
        // Not counted.
        let mut slow = row(Op::AllReduce, MIB, -0.9);
        slow.row.excluded = Some("its reporter called the run slow".into());
        // 2 of the 8 GPUs: inside one node the count must match.
        let mut two = row(Op::AllReduce, MIB, 0.4);
        two.row.gpus = Some(2);
        // A forced algorithm.
        let mut forced = row(Op::AllReduce, MIB, 0.6);
        forced.row.algorithm = AlgoChoice::Tree;
        rows.extend([floor, slow, two, forced]);
        let published = Published {
            sets: vec![PublishedSet {
                prefix: "X-".into(),
                class: a100.clone(),
                rows,
            }],
        };
        let query = CollectiveQuery::new(Op::AllReduce, Bytes(MIB));
        let e = evidence(&published, &a100, &query, 8).expect("two rows");
        assert_eq!(e.systems, vec!["X".to_string()]);
        assert_eq!(
            (e.rows, e.smallest, e.largest),
            (2, Bytes(MIB), Bytes(2 * MIB))
        );
        assert_eq!((e.lowest_error, e.highest_error), (-0.5, -0.2));
        assert!((e.median_error + 0.35).abs() < 1e-12);
        // On 2 GPUs only the 2-GPU row speaks.
        let e2 = evidence(&published, &a100, &query, 2).expect("one row");
        assert_eq!((e2.rows, e2.median_error), (1, 0.4));
        // Another architecture, or across a network, is another kind of system.
        let h100 = class(GpuArch::Hopper, None, 8);
        assert_eq!(evidence(&published, &h100, &query, 8), None);
        let ib = class(
            GpuArch::Ampere,
            Some((LinkTech::InfiniBand, Transport::Rdma)),
            16,
        );
        assert_eq!(evidence(&published, &ib, &query, 16), None);
        assert_eq!(
            Checked::of(&published, &h100, &query, 8).short_text(),
            "No counted published run of this kind near this size: accuracy unknown"
        );
    }

    #[test]
    fn a_subgroup_is_labelled_by_its_own_gpus() {
        // Two of a DGX's eight: the kind drawn on is two GPUs' (`matches`), so is the label.
        let dgx = class(GpuArch::Hopper, None, 8);
        assert_eq!(
            dgx.label_on(2),
            "2 Hopper GPUs on NVSwitch in one node, NCCL"
        );
        assert_eq!(
            dgx.label_on(8),
            "8 Hopper GPUs on NVSwitch in one node, NCCL"
        );
        let ib = class(
            GpuArch::Hopper,
            Some((LinkTech::InfiniBand, Transport::Rdma)),
            16,
        );
        assert_eq!(
            ib.label_on(8),
            "8 of 16 Hopper GPUs on NVSwitch across InfiniBand with RDMA, NCCL"
        );
        let query = CollectiveQuery::new(Op::AllReduce, Bytes(MIB));
        let checked = Checked::of(&Published::default(), &dgx, &query, 2);
        assert_eq!(
            checked.kind.as_deref(),
            Some("2 Hopper GPUs on NVSwitch in one node, NCCL")
        );
    }

    #[test]
    fn across_nodes_the_network_not_the_count_matches() {
        let tcp = Some((LinkTech::Ethernet, Transport::Tcp));
        let measured_pair = class(GpuArch::Volta, tcp, 2);
        let published = Published {
            sets: vec![PublishedSet {
                prefix: "NC209-".into(),
                class: measured_pair.clone(),
                rows: vec![row(Op::AllReduce, 1 << 30, 0.34)],
            }],
        };
        let query = CollectiveQuery::new(Op::AllReduce, Bytes(1 << 30));
        let sixteen = class(GpuArch::Volta, tcp, 16);
        let e = evidence(&published, &sixteen, &query, 16).expect("the pair speaks");
        // A pair speaks for sixteen, and the line says the runs were two GPUs.
        assert_eq!(e.measured_gpus, (2, 2));
        assert_eq!(
            e.short_text(),
            "Published runs of this kind, on 2 GPUs: 34 % over measured"
        );
        assert!(
            e.text("Volta GPUs, one per node, across Ethernet with TCP, NCCL")
                .contains("; NC209 on 2 GPUs, 1 row at 1 GiB): the model's time was 34 % over"),
            "{}",
            e.text("k")
        );
        // Held against a pair, the pair's runs need no such word.
        let pair = evidence(&published, &measured_pair, &query, 2).expect("the pair");
        assert_eq!(
            pair.short_text(),
            "Published runs of this kind: 34 % over measured"
        );
        let rdma = class(
            GpuArch::Volta,
            Some((LinkTech::Ethernet, Transport::Rdma)),
            16,
        );
        assert_eq!(evidence(&published, &rdma, &query, 16), None);
    }
}
