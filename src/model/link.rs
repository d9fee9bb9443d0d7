//! Links between device ports.

use super::catalog::PartId;
use super::ids::{DeviceId, LinkId};
use super::ports::Port;
use super::units::Bandwidth;
use serde::{Deserialize, Serialize};

/// One end of a link: a device and the port it is plugged into, named by kind and index
/// (`ports.rs`), so edits elsewhere on the device never move it.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Endpoint {
    pub device: DeviceId,
    pub port: Port,
}

impl Endpoint {
    pub const fn new(device: DeviceId, port: Port) -> Self {
        Self { device, port }
    }
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
pub enum LinkTech {
    NvLink,
    NvLinkBridge,
    Pcie,
    Ethernet,
    RoceV2,
    InfiniBand,
    Thunderbolt4,
    Thunderbolt5,
}

impl LinkTech {
    pub const ALL: [LinkTech; 8] = [
        LinkTech::NvLink,
        LinkTech::NvLinkBridge,
        LinkTech::Pcie,
        LinkTech::Ethernet,
        LinkTech::RoceV2,
        LinkTech::InfiniBand,
        LinkTech::Thunderbolt4,
        LinkTech::Thunderbolt5,
    ];

    pub fn label(self) -> &'static str {
        match self {
            LinkTech::NvLink => "NVLink",
            LinkTech::NvLinkBridge => "NVLink bridge",
            LinkTech::Pcie => "PCIe",
            LinkTech::Ethernet => "Ethernet",
            LinkTech::RoceV2 => "RoCEv2",
            LinkTech::InfiniBand => "InfiniBand",
            LinkTech::Thunderbolt4 => "Thunderbolt 4",
            LinkTech::Thunderbolt5 => "Thunderbolt 5",
        }
    }

    /// Technologies that run over a switched scale-out network (and so need NICs and cables).
    pub fn is_network(self) -> bool {
        matches!(
            self,
            LinkTech::Ethernet | LinkTech::RoceV2 | LinkTech::InfiniBand
        )
    }

    pub fn is_thunderbolt(self) -> bool {
        matches!(self, LinkTech::Thunderbolt4 | LinkTech::Thunderbolt5)
    }

    /// The slowest and fastest rate per direction of one lane or cable that the
    /// technology's standards define: a link outside this range was mistyped.
    pub fn plausible_lane_rate(self) -> (Bandwidth, Bandwidth) {
        let (slowest, fastest) = match self {
            // One NVLink 1 link (20 GB/s) up to a GPU's whole NVLink 5 (900 GB/s), both per
            // direction: a lane here is one GPU's share.
            LinkTech::NvLink | LinkTech::NvLinkBridge => (160.0, 7200.0),
            // Gen1 ×1 (2.5 GT/s, 8b/10b) up to Gen6 ×16.
            LinkTech::Pcie => (2.0, super::device::pcie_x16_bandwidth(6).gbit_s()),
            // Fast Ethernet up to 1.6 TbE (IEEE 802.3dj); RoCE runs on the same ports.
            LinkTech::Ethernet | LinkTech::RoceV2 => (0.1, 1600.0),
            // SDR 1× (2.5 Gb/s) up to XDR 4× (800 Gb/s).
            LinkTech::InfiniBand => (2.5, 800.0),
            // A USB4 20 Gb/s fallback up to Thunderbolt 4's 40 Gb/s.
            LinkTech::Thunderbolt4 => (20.0, 40.0),
            // A Thunderbolt 4 cable's 40 Gb/s up to Bandwidth Boost's 120 Gb/s.
            LinkTech::Thunderbolt5 => (40.0, 120.0),
        };
        (
            Bandwidth::from_gbit_s(slowest),
            Bandwidth::from_gbit_s(fastest),
        )
    }

    /// Ethernet-family links carry IP; the transport field matters for them.
    pub fn is_ethernet_family(self) -> bool {
        matches!(self, LinkTech::Ethernet | LinkTech::RoceV2)
    }
}

/// The transport over an Ethernet or Thunderbolt link.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default, Serialize, Deserialize)]
pub enum Transport {
    #[default]
    Rdma,
    Tcp,
    /// AWS's Elastic Fabric Adapter over Ethernet: its SRD transport sprays packets over many
    /// paths and retransmits lost ones itself, so it needs no lossless (PFC) fabric, and it
    /// may deliver a message's bytes out of order (NCCL reaches it through aws-ofi-nccl).
    Efa,
}

impl Transport {
    pub fn label(self) -> &'static str {
        match self {
            Transport::Rdma => "RDMA",
            Transport::Tcp => "TCP",
            Transport::Efa => "EFA (SRD)",
        }
    }
}

/// Decides cable versus optics in the bill of materials.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default, Serialize, Deserialize)]
pub enum LengthClass {
    #[default]
    InRack,
    CrossRack,
}

#[derive(Debug, Clone, Copy, PartialEq, Default, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub enum LinkState {
    #[default]
    Up,
    /// Runs at this fraction of its rate (0 < fraction < 1).
    Degraded {
        fraction: f64,
    },
    Failed,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Link {
    pub id: LinkId,
    pub a: Endpoint,
    pub b: Endpoint,
    pub tech: LinkTech,
    /// Rate of one lane or cable, per direction.
    pub rate_gbit_s: Bandwidth,
    /// Lanes or parallel cables bundled into this link.
    #[serde(default = "one")]
    pub lanes: u32,
    #[serde(default)]
    pub transport: Transport,
    #[serde(default)]
    pub length: LengthClass,
    #[serde(default)]
    pub state: LinkState,
    /// A cable or optic chosen by hand; otherwise the BOM derives one from speed and length.
    #[serde(default)]
    pub cable: Option<PartId>,
}

fn one() -> u32 {
    1
}

impl Link {
    /// A healthy link of one lane, in-rack, RDMA transport.
    pub fn new(a: Endpoint, b: Endpoint, tech: LinkTech, rate: Bandwidth) -> Self {
        Self {
            id: LinkId(0),
            a,
            b,
            tech,
            rate_gbit_s: rate,
            lanes: 1,
            transport: if tech == LinkTech::Ethernet || tech.is_thunderbolt() {
                Transport::Tcp
            } else {
                Transport::Rdma
            },
            length: LengthClass::InRack,
            state: LinkState::Up,
            cable: None,
        }
    }

    pub fn with_lanes(mut self, lanes: u32) -> Self {
        self.lanes = lanes;
        self
    }

    pub fn with_length(mut self, length: LengthClass) -> Self {
        self.length = length;
        self
    }

    /// Line rate of the whole bundle per direction, ignoring faults.
    pub fn nominal_capacity(&self) -> Bandwidth {
        self.rate_gbit_s * f64::from(self.lanes)
    }

    /// What the link carries per direction now: degraded links at their fraction, failed at zero.
    pub fn capacity(&self) -> Bandwidth {
        match self.state {
            LinkState::Up => self.nominal_capacity(),
            LinkState::Degraded { fraction } => self.nominal_capacity() * fraction.clamp(0.0, 1.0),
            LinkState::Failed => Bandwidth::ZERO,
        }
    }

    pub fn other_end(&self, device: DeviceId) -> Option<Endpoint> {
        if self.a.device == device {
            Some(self.b)
        } else if self.b.device == device {
            Some(self.a)
        } else {
            None
        }
    }

    pub fn touches(&self, device: DeviceId) -> bool {
        self.a.device == device || self.b.device == device
    }
}
