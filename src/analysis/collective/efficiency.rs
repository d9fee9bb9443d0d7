//! Usable capacity of a link: line rate × an efficiency per technology. These are properties
//! of the technology, never of one system, so the model carries to hardware it has not seen.

use super::fabric::{Fabric, Resource};
use crate::model::{Design, LinkTech, Transport};

/// Share of the NVLink line rate that data gets: NCCL maintainers report ~370 GB/s of H100's
/// 450 GB/s per direction for ring algorithms (nccl #1455, nccl-tests #212); the rest is
/// packet headers and flow control.
pub const NVLINK: f64 = 0.82;
/// PCIe TLP headers, DLLPs and flow-control credits: about 80 % of the x16 rate reaches a peer.
pub const PCIE: f64 = 0.80;
/// InfiniBand NDR moves 46–48 GB/s of 50 in practice (nccl-tests #290, #267).
pub const INFINIBAND: f64 = 0.94;
/// RDMA over lossless Ethernet: FEC lives inside the line rate, Eth/IP/UDP/BTH headers cost
/// 2–3 % at 4 KB MTU (hardware.md §7); congestion control takes a little more.
pub const ROCE_LOSSLESS: f64 = 0.92;
/// RoCE without PFC/ECN drops under incast and falls back to go-back-N retransmission.
/// Our estimate; the advice flags such fabrics.
pub const ROCE_LOSSY: f64 = 0.75;
/// NCCL's socket transport over a kernel TCP stack: copies and interrupts. Our estimate.
pub const TCP: f64 = 0.70;
/// Thunderbolt carries data in its PCIe tunnel: 32 of 40 Gb/s on TB4, 64 of 80 on TB5.
pub const THUNDERBOLT_TUNNEL: f64 = 0.80;
/// IP over Thunderbolt: 16.4 Gb/s measured on a 20 Gb/s link (hardware.md §7).
pub const THUNDERBOLT_IP: f64 = 0.82;
/// RDMA over Thunderbolt 5 (macOS 26.2): protocol headers only. Our estimate.
pub const THUNDERBOLT_RDMA: f64 = 0.95;

/// Protocol overhead on top: LL sends a 4-byte flag with every 4 bytes of data; LL128 keeps
/// 120 of every 128 bytes; Simple moves plain data.
pub const LL_PAYLOAD: f64 = 0.5;
pub const LL128_PAYLOAD: f64 = 120.0 / 128.0;

/// Without GPUDirect RDMA, network data is staged in host memory: it crosses the NIC's root
/// port once into memory and once out of it, so the NIC's PCIe path carries it twice.
pub const NO_GPUDIRECT_PCIE_SHARE: f64 = 0.5;
/// Without PCIe peer-to-peer (GeForce cards), GPU-to-GPU traffic is written to a host buffer
/// and read back by the peer through the same root complex: half the rate.
pub const NO_P2P_SHARE: f64 = 0.5;

/// Usable share of a link's line rate. `lossless` only matters for RoCE.
pub fn link_efficiency(tech: LinkTech, transport: Transport, lossless: bool) -> f64 {
    match tech {
        LinkTech::NvLink | LinkTech::NvLinkBridge => NVLINK,
        LinkTech::Pcie => PCIE,
        LinkTech::InfiniBand => INFINIBAND,
        LinkTech::RoceV2 | LinkTech::Ethernet => match transport {
            Transport::Tcp => TCP,
            Transport::Rdma if lossless => ROCE_LOSSLESS,
            Transport::Rdma => ROCE_LOSSY,
        },
        LinkTech::Thunderbolt4 | LinkTech::Thunderbolt5 => {
            THUNDERBOLT_TUNNEL
                * match transport {
                    Transport::Tcp => THUNDERBOLT_IP,
                    Transport::Rdma => THUNDERBOLT_RDMA,
                }
        }
    }
}

/// Extra one-way latency of the software stack and technology of a network path, in µs, on
/// top of NCCL's NET constants (which were tuned on InfiniBand).
pub fn stack_latency_us(tech: LinkTech, transport: Transport) -> f64 {
    match (tech, transport) {
        (LinkTech::InfiniBand, _) => 0.0,
        (LinkTech::NvLink | LinkTech::NvLinkBridge | LinkTech::Pcie, _) => 0.0,
        // RoCE end to end 2–10 µs against InfiniBand's 1–5 µs (hardware.md §7).
        (LinkTech::RoceV2 | LinkTech::Ethernet, Transport::Rdma) => 1.0,
        // A kernel socket send and receive: our estimate.
        (LinkTech::RoceV2 | LinkTech::Ethernet, Transport::Tcp) => 20.0,
        // ~300 µs per exchange over TCP in Mac clusters before RDMA: half of it one way.
        (LinkTech::Thunderbolt4 | LinkTech::Thunderbolt5, Transport::Tcp) => 150.0,
        // RDMA over TB5: "single-digit µs" (exo), ~3 µs (NetworkChuck).
        (LinkTech::Thunderbolt4 | LinkTech::Thunderbolt5, Transport::Rdma) => 5.0,
    }
}

/// Switch port-to-port latency when the catalog gives none, in µs.
pub fn default_switch_latency_us(tech: LinkTech) -> f64 {
    match tech {
        LinkTech::InfiniBand => 0.15,
        _ => 0.5,
    }
}

/// Propagation: 5 ns per metre; 2 m inside a rack, 30 m across racks (our typical lengths).
pub fn propagation_us(cross_rack: bool) -> f64 {
    let metres = if cross_rack { 30.0 } else { 2.0 };
    metres * 0.005
}

/// The built-in efficiency of a technology's internal ports (a GPU's NVLink, a PCIe slot),
/// which the fabric builds from the constants above.
fn port_efficiency(tech: LinkTech) -> f64 {
    match tech {
        LinkTech::NvLink | LinkTech::NvLinkBridge => NVLINK,
        _ => PCIE,
    }
}

/// The technology a fabric arc belongs to.
fn arc_tech(fab: &Fabric, design: &Design, a: usize) -> Option<LinkTech> {
    Some(match fab.arc_resource(a) {
        Resource::Link { index, .. } => design.links.get(index as usize)?.tech,
        Resource::ScaleUp { .. } => LinkTech::NvLink,
        Resource::Bridge { .. } => LinkTech::NvLinkBridge,
        Resource::GpuPcie { .. } | Resource::NicPcie { .. } => LinkTech::Pcie,
    })
}

/// Applies the design's calibration to a built fabric: every arc of a calibrated technology
/// gets its fitted efficiency in place of the built-in one (other shares, such as staging
/// without GPUDirect, stay), and every drawn network or Thunderbolt link of a technology with
/// a fitted latency gets it in place of its stack latency. A fitted NVLink, NVLink bridge or
/// PCIe latency is an intra-node hop latency instead, which the latency model takes per plan
/// (`latency::IntraHops`), not a stack latency for drawn links of those technologies. A
/// design without calibration is left as built.
pub(crate) fn apply_calibration(fab: &mut Fabric, design: &Design) {
    let Some(cal) = design.calibration.as_ref().filter(|c| !c.techs.is_empty()) else {
        return;
    };
    for a in 0..fab.arc_count() {
        let Some(tech) = arc_tech(fab, design, a) else {
            continue;
        };
        let Some(fitted) = cal.efficiency(tech) else {
            continue;
        };
        let built = match fab.arc_resource(a) {
            Resource::Link { index, .. } => {
                let link = &design.links[index as usize];
                // Lossless or not only matters for RoCE; the ratio is what the arc carries.
                let lossless = usable_ratio_lossless(fab, a, link.tech, link.transport);
                link_efficiency(link.tech, link.transport, lossless)
            }
            _ => port_efficiency(tech),
        };
        fab.arc_usable[a] *= fitted / built;
    }
    for (i, link) in design.links.iter().enumerate() {
        if !(link.tech.is_network() || link.tech.is_thunderbolt()) {
            continue;
        }
        if let (Some(l), Some(slot)) = (cal.latency_us(link.tech), fab.link_latency_us.get_mut(i)) {
            *slot += l - stack_latency_us(link.tech, link.transport);
        }
    }
}

/// Whether the fabric built link arc `a` as lossless: its usable rate over its line rate
/// tells, since the two RoCE figures differ.
fn usable_ratio_lossless(fab: &Fabric, a: usize, tech: LinkTech, transport: Transport) -> bool {
    if !(tech.is_ethernet_family() && transport == Transport::Rdma) {
        return true;
    }
    let line = fab.arc_line(a);
    if line <= 0.0 {
        return true;
    }
    let ratio = fab.arc_usable[a] / line;
    (ratio - ROCE_LOSSLESS).abs() <= (ratio - ROCE_LOSSY).abs()
}
