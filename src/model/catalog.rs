//! The parts catalog: specs, prices with date and source, power, and an estimate flag.
//!
//! The built-in catalog is `assets/catalog.ron`, compiled into the binary so the tool works
//! offline from one file; a user catalog can add parts or override built-in ones by id.

use super::units::{Bandwidth, Usd, Watts};
use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;
use std::fmt;

/// A catalog id such as `h100-sxm` or `qm9700`.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
#[serde(transparent)]
pub struct PartId(pub String);

impl PartId {
    pub fn new(id: impl Into<String>) -> Self {
        Self(id.into())
    }
    pub fn as_str(&self) -> &str {
        &self.0
    }
}

impl fmt::Display for PartId {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.0)
    }
}

impl From<&str> for PartId {
    fn from(s: &str) -> Self {
        Self(s.to_string())
    }
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Price {
    pub usd: Usd,
    /// When the price was read, ISO date or year-month.
    pub date: String,
    pub source: String,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Part {
    pub id: PartId,
    pub vendor: String,
    pub model: String,
    #[serde(default)]
    pub description: String,
    #[serde(default)]
    pub price: Option<Price>,
    /// Typical power draw of one unit.
    #[serde(default)]
    pub power_w: Watts,
    /// True when price or power is our estimate rather than a sourced figure.
    #[serde(default)]
    pub estimate: bool,
    pub spec: PartSpec,
}

impl Part {
    pub fn price_usd(&self) -> Usd {
        self.price.as_ref().map_or(Usd(0.0), |p| p.usd)
    }

    pub fn category(&self) -> PartCategory {
        self.spec.category()
    }
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
pub enum PartCategory {
    Gpu,
    Node,
    Domain,
    Nic,
    Switch,
    Cable,
}

impl PartCategory {
    pub fn label(self) -> &'static str {
        match self {
            PartCategory::Gpu => "GPU",
            PartCategory::Node => "node",
            PartCategory::Domain => "NVSwitch domain",
            PartCategory::Nic => "NIC",
            PartCategory::Switch => "switch",
            PartCategory::Cable => "cable/optic",
        }
    }
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub enum PartSpec {
    Gpu(GpuSpec),
    Node(NodeSpec),
    Domain(DomainSpec),
    Nic(NicSpec),
    Switch(SwitchSpec),
    Cable(CableSpec),
}

impl PartSpec {
    pub fn category(&self) -> PartCategory {
        match self {
            PartSpec::Gpu(_) => PartCategory::Gpu,
            PartSpec::Node(_) => PartCategory::Node,
            PartSpec::Domain(_) => PartCategory::Domain,
            PartSpec::Nic(_) => PartCategory::Nic,
            PartSpec::Switch(_) => PartCategory::Switch,
            PartSpec::Cable(_) => PartCategory::Cable,
        }
    }
}

/// GPU architecture: decides NCCL's tuning-table row and which features exist.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub enum GpuArch {
    Volta,
    Turing,
    Ampere,
    Ada,
    Hopper,
    Blackwell,
    AppleM2,
    AppleM3,
    AppleM4,
}

impl GpuArch {
    /// Apple silicon: a GPU inside its SoC, sharing unified memory, running MLX rather than
    /// CUDA.
    pub fn is_apple(self) -> bool {
        matches!(self, GpuArch::AppleM2 | GpuArch::AppleM3 | GpuArch::AppleM4)
    }
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct GpuSpec {
    pub arch: GpuArch,
    pub memory_gb: f64,
    /// NVLink bandwidth per GPU, per direction; None for cards without NVLink.
    #[serde(default)]
    pub nvlink_gbit_s: Option<Bandwidth>,
    /// NVLink generation (3 on A100, 4 on H100, 5 on B200).
    #[serde(default)]
    pub nvlink_generation: Option<u8>,
    /// Takes an NVLink bridge to one partner card.
    #[serde(default)]
    pub nvlink_bridge: bool,
    pub pcie_generation: u8,
    /// PCIe peer-to-peer between cards; GeForce cards have none.
    #[serde(default)]
    pub peer_to_peer: bool,
    /// Dense BF16 tensor throughput, for workload estimates.
    #[serde(default)]
    pub bf16_tflops: f64,
    /// Peak memory bandwidth (HBM, GDDR or unified memory), GB/s; None when unknown.
    #[serde(default)]
    pub memory_gbyte_s: Option<f64>,
    /// The fraction of its dense peak a training or prefill step's kernels reach on this GPU
    /// (0 to 1), where you have a measurement; None takes the published figure for its
    /// generation (unknown where there is none). The built-in catalog sets none: a user
    /// catalog gives one GPU its own while the others keep theirs.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub kernel_efficiency: Option<f64>,
    /// CUDA compute capability as NCCL counts it, major × 10 + minor (8.6 → 86), from
    /// NVIDIA's table (developer.nvidia.com/cuda-gpus); None takes its architecture's first
    /// (`GpuSpec::compute_capability`). Consumer Ampere (86) and Ada (89) differ from A100 (80)
    /// and H100 (90) in what NCCL enables by default.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cuda_compute_capability: Option<u16>,
    /// The memory a program gets where the card holds some back, in GiB: what nvidia-smi
    /// reports as `memory.total` (GDDR6 with ECC on, as on an L40S, keeps 1/16 for the check
    /// bits: 46,068 MiB of 48 GiB). None: all of `memory_gb`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub memory_usable_gib: Option<f64>,
}

impl GpuSpec {
    /// The memory jobs can fill, GiB: `memory_usable_gib` where the card holds some back,
    /// else `memory_gb`.
    pub fn memory_gib(&self) -> f64 {
        self.memory_usable_gib.unwrap_or(self.memory_gb)
    }

    /// The GPU's CUDA compute capability (major × 10 + minor): the catalog's, else its
    /// architecture's data-centre part's (Volta 70, Turing 75, Ampere 80, Ada 89, Hopper 90,
    /// Blackwell 100); None for GPUs that do not run CUDA.
    pub fn compute_capability(&self) -> Option<u16> {
        self.cuda_compute_capability.or(match self.arch {
            GpuArch::Volta => Some(70),
            GpuArch::Turing => Some(75),
            GpuArch::Ampere => Some(80),
            GpuArch::Ada => Some(89),
            GpuArch::Hopper => Some(90),
            GpuArch::Blackwell => Some(100),
            GpuArch::AppleM2 | GpuArch::AppleM3 | GpuArch::AppleM4 => None,
        })
    }
}

/// How a node's GPUs are joined inside it, by default.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub enum ScaleUpSpec {
    NvSwitch { generation: u8 },
    NvLinkBridgePairs,
    Pcie,
    UnifiedMemory,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct NodeSpec {
    /// Default GPU part, and whether the node's price already includes the GPUs.
    pub gpu: PartId,
    pub gpu_count: u32,
    /// A generic chassis (the `workstation`) takes any GPU and count: GPUs priced separately.
    #[serde(default)]
    pub any_gpu: bool,
    pub gpus_included_in_price: bool,
    pub scale_up: ScaleUpSpec,
    /// Default scale-out NICs (priced separately as NIC parts, unless built in).
    #[serde(default)]
    pub nic: Option<PartId>,
    /// The default NIC is built into the node and in its price (GB10's ConnectX-7 in the DGX
    /// Spark): the bill of materials and the price check leave it out.
    #[serde(default)]
    pub nic_included_in_price: bool,
    #[serde(default)]
    pub nic_count: u32,
    /// Default NICs behind one transceiver cage: 2 where two NICs share a twin-port OSFP
    /// cage (DGX H100's eight ConnectX-7 on four cages), so one twin-port module serves both.
    #[serde(default = "one")]
    pub nic_ports_per_cage: u32,
    /// Built-in Thunderbolt ports and their generation (4 or 5).
    #[serde(default)]
    pub thunderbolt_ports: u32,
    #[serde(default)]
    pub thunderbolt_generation: Option<u8>,
    /// Built-in Ethernet ports and their speed.
    #[serde(default)]
    pub builtin_ethernet_ports: u32,
    #[serde(default)]
    pub builtin_ethernet_gbit_s: Option<Bandwidth>,
    /// The built-in Ethernet is 10GBASE-T on RJ-45 jacks (a workstation board's, a Mac
    /// Studio's, a DGX Spark's), which take twisted pair, not a DAC or an optic.
    #[serde(default)]
    pub builtin_ethernet_rj45: bool,
    /// PCIe generation of the slots.
    pub pcie_generation: u8,
    /// Rack units the node takes.
    #[serde(default)]
    pub rack_units: u32,
    /// GPU slots of a generic chassis (`any_gpu`); a fixed model holds its `gpu_count`.
    /// None: unknown, and nothing is checked.
    #[serde(default)]
    pub gpu_slots: Option<u32>,
    /// What the power supplies deliver with their redundancy kept (4 of a 4+2 set), from a
    /// datasheet; None when no source gives it, and then nothing is checked.
    #[serde(default)]
    pub power_supply_w: Option<Watts>,
    /// Slots for add-in NICs; Some(0) for machines with none (Mac Studio, DGX Spark). None:
    /// unknown, and nothing is checked.
    #[serde(default)]
    pub nic_slots: Option<u32>,
    /// A machine made for a desk, run from a wall socket (a Mac Studio, a DGX Spark, a
    /// workstation): a design of only these is priced at home, not in a data centre.
    #[serde(default)]
    pub desk: bool,
}

impl NodeSpec {
    /// Whether the chassis takes a NIC of part `id`: any add-in card, and of the NICs built
    /// into a machine's board only its own.
    pub fn takes_nic(&self, id: &PartId, nic: &NicSpec) -> bool {
        !nic.builtin || self.nic.as_ref() == Some(id)
    }

    /// Whether `add_in` add-in NICs fit the chassis's slots (all do where it does not say how
    /// many it has).
    pub fn has_slots_for(&self, add_in: usize) -> bool {
        self.nic_slots.is_none_or(|slots| add_in <= slots as usize)
    }

    /// The most GPUs the chassis holds: a fixed model's own count, a generic chassis's slots.
    pub fn max_gpus(&self) -> Option<u32> {
        if self.any_gpu {
            self.gpu_slots
        } else {
            Some(self.gpu_count)
        }
    }
}

/// A rack-scale NVLink domain such as GB200 NVL72; its price and power cover the rack itself
/// (NVSwitch trays, power shelves, cabling) while its compute trays are nodes of their own.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct DomainSpec {
    pub member_node: PartId,
    pub members: u32,
    pub gpus: u32,
    pub nvswitch_trays: u32,
    pub nvlink_generation: u8,
    /// NVLink bandwidth per GPU, per direction.
    pub per_gpu_gbit_s: Bandwidth,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub enum NetFamily {
    InfiniBand,
    Ethernet,
    /// VPI parts run either.
    Both,
}

impl NetFamily {
    pub fn speaks_infiniband(self) -> bool {
        matches!(self, NetFamily::InfiniBand | NetFamily::Both)
    }
    pub fn speaks_ethernet(self) -> bool {
        matches!(self, NetFamily::Ethernet | NetFamily::Both)
    }
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct NicSpec {
    pub family: NetFamily,
    pub ports: u32,
    /// Rate of one port, per direction.
    pub port_gbit_s: Bandwidth,
    pub rdma: bool,
    pub pcie_generation: u8,
    /// PCIe lanes the NIC's host link has: 16 unless the part says otherwise (GB10's
    /// ConnectX-7 is two x4 endpoints behind one QSFP cage).
    #[serde(default = "x16")]
    pub pcie_lanes: u8,
    /// Part of one machine's board (GB10's ConnectX-7 in the DGX Spark), never an add-in
    /// card: no other node takes it, and no remedy offers it.
    #[serde(default)]
    pub builtin: bool,
}

fn x16() -> u8 {
    16
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct SwitchSpec {
    pub family: NetFamily,
    /// Physical ports before breakout.
    pub ports: u32,
    pub port_gbit_s: Bandwidth,
    /// Largest breakout per port (2 for 64×800G used as 128×400G).
    #[serde(default = "one")]
    pub max_breakout: u32,
    /// Ports behind one transceiver cage: 2 where two ports share a twin-port OSFP cage
    /// (QM9700's 64 × 400G on 32 cages), so one twin-port module serves both.
    #[serde(default = "one")]
    pub ports_per_cage: u32,
    #[serde(default)]
    pub in_network_reduction: bool,
    #[serde(default)]
    pub adaptive_routing: bool,
    /// Port-to-port latency.
    #[serde(default)]
    pub latency_ns: f64,
    #[serde(default)]
    pub rack_units: u32,
}

fn one() -> u32 {
    1
}

impl SwitchSpec {
    /// Total switching capacity in one direction.
    pub fn capacity(&self) -> Bandwidth {
        self.port_gbit_s * f64::from(self.ports)
    }
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub enum CableMedium {
    /// Passive copper, both ends included; in-rack.
    Dac,
    /// Active optical cable, both ends included.
    Aoc,
    /// One transceiver; an optical link takes two plus fibre.
    Transceiver,
    /// Twisted-pair copper with RJ-45 plugs (Cat6a for 10GBASE-T).
    TwistedPair,
    Thunderbolt,
    NvLinkBridge,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct CableSpec {
    pub medium: CableMedium,
    /// Speed the part is made for, per direction.
    pub speed_gbit_s: Bandwidth,
    pub max_length_m: f64,
    /// Families it serves (an OSFP 400G optic serves InfiniBand and Ethernet alike).
    pub family: NetFamily,
}

#[derive(Debug, thiserror::Error)]
pub enum CatalogError {
    #[error("{origin}:{line}:{column}: {message}")]
    Parse {
        origin: String,
        line: usize,
        column: usize,
        message: String,
    },
    #[error("{origin}: part `{id}` is listed twice")]
    Duplicate { origin: String, id: PartId },
    #[error("{origin}: part `{id}` refers to unknown part `{missing}`")]
    Dangling {
        origin: String,
        id: PartId,
        missing: PartId,
    },
    #[error("{origin}: part `{id}`: {message}")]
    Invalid {
        origin: String,
        id: PartId,
        message: String,
    },
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
struct CatalogFile {
    version: u32,
    parts: Vec<Part>,
}

/// `parts` as a catalog file (RON), which `--catalog` reads back: a user's starting point.
pub fn catalog_file_text(parts: &[&Part]) -> Result<String, ron::Error> {
    #[derive(Serialize)]
    struct Out<'a> {
        version: u32,
        parts: &'a [&'a Part],
    }
    let config = ron::ser::PrettyConfig::new()
        .depth_limit(3)
        .struct_names(false);
    let mut text = ron::ser::to_string_pretty(&Out { version: 1, parts }, config)?;
    text.push('\n');
    Ok(text)
}

/// The built-in catalog text, compiled in so the binary needs no install step.
pub const BUILTIN_CATALOG: &str = include_str!("../../assets/catalog.ron");

#[derive(Debug, Clone, PartialEq, Default)]
pub struct Catalog {
    parts: BTreeMap<PartId, Part>,
}

impl Catalog {
    /// The catalog shipped with railyard. Its validity is a test, so this cannot fail at run time.
    pub fn builtin() -> Catalog {
        match Catalog::parse(BUILTIN_CATALOG, "assets/catalog.ron") {
            Ok(c) => c,
            Err(e) => panic!("built-in catalog is broken (a bug): {e}"),
        }
    }

    /// Parses catalog text; `origin` names the file in errors.
    pub fn parse(text: &str, origin: &str) -> Result<Catalog, CatalogError> {
        let file: CatalogFile =
            ron::Options::default()
                .from_str(text)
                .map_err(|e| CatalogError::Parse {
                    origin: origin.to_string(),
                    line: e.span.start.line,
                    column: e.span.start.col,
                    message: e.code.to_string(),
                })?;
        let mut parts = BTreeMap::new();
        for part in file.parts {
            if parts.contains_key(&part.id) {
                return Err(CatalogError::Duplicate {
                    origin: origin.to_string(),
                    id: part.id,
                });
            }
            parts.insert(part.id.clone(), part);
        }
        let catalog = Catalog { parts };
        catalog.validate(origin)?;
        Ok(catalog)
    }

    /// Adds the parts of `user`, replacing built-in parts with the same id.
    pub fn merge(&mut self, user: Catalog) {
        self.parts.extend(user.parts);
    }

    /// Parses a user catalog and merges it over this one; references may point at either.
    pub fn merge_text(&mut self, text: &str, origin: &str) -> Result<(), CatalogError> {
        let file: CatalogFile =
            ron::Options::default()
                .from_str(text)
                .map_err(|e| CatalogError::Parse {
                    origin: origin.to_string(),
                    line: e.span.start.line,
                    column: e.span.start.col,
                    message: e.code.to_string(),
                })?;
        let mut merged = self.clone();
        for part in file.parts {
            merged.parts.insert(part.id.clone(), part);
        }
        merged.validate(origin)?;
        *self = merged;
        Ok(())
    }

    fn validate(&self, origin: &str) -> Result<(), CatalogError> {
        let dangling = |id: &PartId, missing: &PartId| CatalogError::Dangling {
            origin: origin.to_string(),
            id: id.clone(),
            missing: missing.clone(),
        };
        for part in self.parts.values() {
            let invalid = |message: &str| CatalogError::Invalid {
                origin: origin.to_string(),
                id: part.id.clone(),
                message: message.to_string(),
            };
            if !(part.power_w.0.is_finite() && part.power_w.0 >= 0.0) {
                return Err(invalid("power must be a finite, non-negative number"));
            }
            if let Some(price) = &part.price
                && !(price.usd.0.is_finite() && price.usd.0 >= 0.0)
            {
                return Err(invalid("price must be a finite, non-negative number"));
            }
            match &part.spec {
                PartSpec::Node(n) => {
                    if !matches!(self.get(&n.gpu).map(|p| &p.spec), Some(PartSpec::Gpu(_))) {
                        return Err(dangling(&part.id, &n.gpu));
                    }
                    if let Some(nic) = &n.nic
                        && !matches!(self.get(nic).map(|p| &p.spec), Some(PartSpec::Nic(_)))
                    {
                        return Err(dangling(&part.id, nic));
                    }
                    if n.nic_ports_per_cage == 0 {
                        return Err(invalid("a cage holds at least one NIC port"));
                    }
                }
                PartSpec::Domain(d) => {
                    if !matches!(
                        self.get(&d.member_node).map(|p| &p.spec),
                        Some(PartSpec::Node(_))
                    ) {
                        return Err(dangling(&part.id, &d.member_node));
                    }
                }
                PartSpec::Switch(s) => {
                    if s.ports == 0
                        || s.max_breakout == 0
                        || s.ports_per_cage == 0
                        || !s.port_gbit_s.is_finite_non_negative()
                    {
                        return Err(invalid(
                            "a switch needs ports, a breakout ≥ 1, ports per cage ≥ 1 and a speed",
                        ));
                    }
                }
                PartSpec::Nic(n) => {
                    if n.ports == 0 || !n.port_gbit_s.is_finite_non_negative() {
                        return Err(invalid("a NIC needs ports and a speed"));
                    }
                }
                PartSpec::Gpu(g) => {
                    if g.kernel_efficiency.is_some_and(|f| !(f > 0.0 && f <= 1.0)) {
                        return Err(invalid(
                            "kernel_efficiency is a fraction of the dense peak, above 0 and at most 1",
                        ));
                    }
                }
                PartSpec::Cable(_) => {}
            }
        }
        Ok(())
    }

    pub fn get(&self, id: &PartId) -> Option<&Part> {
        self.parts.get(id)
    }

    pub fn get_str(&self, id: &str) -> Option<&Part> {
        self.parts.get(&PartId::new(id))
    }

    /// Ids that contain `text` (case aside), sorted, at most `limit`: what a mistyped or
    /// shortened id ("mac-studio") probably meant.
    pub fn ids_like(&self, text: &str, limit: usize) -> Vec<&str> {
        let text = text.trim().to_ascii_lowercase();
        if text.is_empty() {
            return Vec::new();
        }
        let mut ids: Vec<&str> = self
            .parts
            .keys()
            .map(PartId::as_str)
            .filter(|id| id.to_ascii_lowercase().contains(&text))
            .collect();
        ids.sort_unstable();
        ids.truncate(limit);
        ids
    }

    pub fn parts(&self) -> impl Iterator<Item = &Part> {
        self.parts.values()
    }

    pub fn len(&self) -> usize {
        self.parts.len()
    }

    pub fn is_empty(&self) -> bool {
        self.parts.is_empty()
    }

    pub fn gpu(&self, id: &PartId) -> Option<&GpuSpec> {
        match &self.get(id)?.spec {
            PartSpec::Gpu(s) => Some(s),
            _ => None,
        }
    }

    pub fn node(&self, id: &PartId) -> Option<&NodeSpec> {
        match &self.get(id)?.spec {
            PartSpec::Node(s) => Some(s),
            _ => None,
        }
    }

    pub fn domain(&self, id: &PartId) -> Option<&DomainSpec> {
        match &self.get(id)?.spec {
            PartSpec::Domain(s) => Some(s),
            _ => None,
        }
    }

    pub fn nic(&self, id: &PartId) -> Option<&NicSpec> {
        match &self.get(id)?.spec {
            PartSpec::Nic(s) => Some(s),
            _ => None,
        }
    }

    pub fn switch(&self, id: &PartId) -> Option<&SwitchSpec> {
        match &self.get(id)?.spec {
            PartSpec::Switch(s) => Some(s),
            _ => None,
        }
    }

    pub fn cable(&self, id: &PartId) -> Option<&CableSpec> {
        match &self.get(id)?.spec {
            PartSpec::Cable(s) => Some(s),
            _ => None,
        }
    }
}
