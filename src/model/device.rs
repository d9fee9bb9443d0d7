//! Devices: GPU nodes, NVSwitch domains, switches and plain hosts.

use super::catalog::PartId;
use super::ids::{DeviceId, GroupId};
use super::position::Pos;
use super::units::Bandwidth;
use serde::{Deserialize, Serialize};

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Device {
    pub id: DeviceId,
    pub name: String,
    pub pos: Pos,
    #[serde(default)]
    pub group: Option<GroupId>,
    pub kind: DeviceKind,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub enum DeviceKind {
    GpuNode(GpuNode),
    NvSwitchDomain(NvSwitchDomain),
    Switch(Switch),
    Host(Host),
}

impl DeviceKind {
    pub fn label(&self) -> &'static str {
        match self {
            DeviceKind::GpuNode(_) => "GPU node",
            DeviceKind::NvSwitchDomain(_) => "NVSwitch domain",
            DeviceKind::Switch(s) => s.role.label(),
            DeviceKind::Host(h) => match h.role {
                HostRole::Cpu => "CPU host",
                HostRole::Storage => "storage host",
            },
        }
    }

    /// The catalog part the device is built from, if it names one.
    pub fn model_part(&self) -> Option<&PartId> {
        match self {
            DeviceKind::GpuNode(n) => Some(&n.model),
            DeviceKind::Switch(s) => Some(&s.model),
            DeviceKind::NvSwitchDomain(d) => Some(&d.model),
            DeviceKind::Host(h) => h.model.as_ref(),
        }
    }

    pub fn as_node(&self) -> Option<&GpuNode> {
        match self {
            DeviceKind::GpuNode(n) => Some(n),
            _ => None,
        }
    }

    pub fn as_switch(&self) -> Option<&Switch> {
        match self {
            DeviceKind::Switch(s) => Some(s),
            _ => None,
        }
    }
}

/// A server, workstation or Mac with GPUs.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct GpuNode {
    /// Node part in the catalog (`dgx-h100`, `workstation`, `mac-studio-m2-ultra`, ...).
    pub model: PartId,
    /// GPU part in the catalog (`h100-sxm`, `rtx-4090`, ...).
    pub gpu: PartId,
    pub gpu_count: u32,
    /// How the GPUs inside this node talk to each other.
    pub scale_up: ScaleUp,
    /// Scale-out NICs; NIC i is port i of the node and, on a rail fabric, belongs to rail i.
    #[serde(default)]
    pub nics: Vec<NicSlot>,
    /// The rack-scale NVLink domain this node belongs to, if any.
    #[serde(default)]
    pub domain: Option<DeviceId>,
}

impl GpuNode {
    /// Its GPUs meet at the host bridge: they sit on the CPU's own root ports, and so do its
    /// NICs. A node of one GPU says nothing of its PCIe paths.
    pub fn gpus_meet_at_host_bridge(&self) -> bool {
        self.gpu_count > 1
            && matches!(
                self.scale_up,
                ScaleUp::Pcie {
                    via: PcieVia::HostBridge,
                    ..
                }
            )
    }
}

/// The intra-node fabric. Modelled, not assumed: a GeForce box is not a DGX.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub enum ScaleUp {
    /// Every GPU reaches every other at its full NVLink bandwidth through NVSwitch chips.
    /// NVLS in-switch reduction exists from generation 3 (Hopper) on.
    NvSwitch {
        generation: u8,
        per_gpu_gbit_s: Bandwidth,
    },
    /// GPUs joined in pairs by NVLink bridges; pairs talk to each other over PCIe.
    NvLinkBridgePairs {
        per_gpu_gbit_s: Bandwidth,
        pcie_generation: u8,
        peer_to_peer: bool,
    },
    /// GPUs on PCIe, through a PCIe switch or the host bridge. Without peer-to-peer (GeForce
    /// cards) traffic between GPUs bounces through host memory.
    Pcie {
        generation: u8,
        via: PcieVia,
        peer_to_peer: bool,
    },
    /// Apple silicon: one SoC, unified memory, no GPU-to-GPU traffic inside the node.
    UnifiedMemory,
}

impl ScaleUp {
    /// NVSwitch gen3 and later reduce inside the switch (NVLS).
    pub fn has_nvls(&self) -> bool {
        matches!(self, ScaleUp::NvSwitch { generation, .. } if *generation >= 3)
    }
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub enum PcieVia {
    Switch,
    HostBridge,
}

/// PCIe bandwidth of an x16 slot per direction, for a generation.
pub fn pcie_x16_bandwidth(generation: u8) -> Bandwidth {
    // 128b/130b coding from gen3 on: gen4 x16 is about 31.5 GB/s per direction.
    let gbyte_s = match generation {
        0..=2 => 8.0,
        3 => 15.75,
        4 => 31.5,
        5 => 63.0,
        _ => 126.0,
    };
    Bandwidth::from_gbyte_s(gbyte_s)
}

/// PCIe bandwidth per direction of a link `lanes` wide: lanes scale it linearly (an x4
/// link carries a quarter of x16's).
pub fn pcie_bandwidth(generation: u8, lanes: u8) -> Bandwidth {
    Bandwidth::from_gbit_s(pcie_x16_bandwidth(generation).gbit_s() * f64::from(lanes) / 16.0)
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct NicSlot {
    pub part: PartId,
    /// GPUDirect RDMA: off means network traffic crosses host memory.
    #[serde(default = "yes")]
    pub gpudirect: bool,
}

fn yes() -> bool {
    true
}

/// A rack-scale NVLink domain such as GB200 NVL72; its member nodes point at it.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct NvSwitchDomain {
    pub model: PartId,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
pub enum SwitchRole {
    Leaf,
    Spine,
    Core,
}

impl SwitchRole {
    pub fn label(self) -> &'static str {
        match self {
            SwitchRole::Leaf => "leaf",
            SwitchRole::Spine => "spine",
            SwitchRole::Core => "core",
        }
    }
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Switch {
    pub model: PartId,
    pub role: SwitchRole,
    /// Each physical port split into this many (64×800G as 128×400G is a breakout of 2).
    #[serde(default = "one")]
    pub breakout: u32,
    /// The rail a leaf serves on a rail-optimized or rail-only fabric.
    #[serde(default)]
    pub rail: Option<u32>,
    #[serde(default)]
    pub features: SwitchFeatures,
}

fn one() -> u32 {
    1
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct SwitchFeatures {
    /// SHARP-style in-network reduction.
    #[serde(default)]
    pub in_network_reduction: bool,
    #[serde(default)]
    pub adaptive_routing: bool,
    /// PFC/ECN configured: what RoCE needs to behave.
    #[serde(default)]
    pub lossless: bool,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub enum HostRole {
    Cpu,
    Storage,
}

/// A CPU or storage node: no GPUs, but it takes ports and appears in the BOM if priced.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Host {
    pub role: HostRole,
    #[serde(default)]
    pub model: Option<PartId>,
    #[serde(default)]
    pub nics: Vec<NicSlot>,
}
