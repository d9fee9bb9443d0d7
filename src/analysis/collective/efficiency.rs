//! Usable capacity of a link: line rate × an efficiency per technology. These are properties
//! of the technology, never of one system, so the model carries to hardware it has not seen.

use super::Library;
use super::latency::ArchRow;
use crate::model::{LinkTech, Transport};

/// Share of the NVLink line rate that data gets on Hopper: NCCL's own per-link figure
/// (`src/graph/topo.h`, SM90: 20.6 GB/s of NVLink 4's 25 GB/s per direction), which agrees
/// with what NCCL's maintainers report for H100 rings, ~370 of 450 GB/s per direction (nccl
/// #1455, nccl-tests #212); the rest is packet headers and flow control. Drawn NVLink links
/// take it; a node's own NVLink ports take their generation's (`nvlink_efficiency`).
pub const NVLINK: f64 = 20.6 / 25.0;

/// Share of the NVLink line rate that data gets, per GPU generation: NCCL's per-link figures
/// (`src/graph/topo.h`: SM70 and SM80 20.0 GB/s, SM90 20.6, SM100 40.1) over the link's rate
/// per direction (NVLink 2, 3 and 4: 25 GB/s; NVLink 5: 50 GB/s).
pub(crate) fn nvlink_efficiency(arch: ArchRow) -> f64 {
    match arch {
        ArchRow::Volta | ArchRow::Ampere => 20.0 / 25.0,
        ArchRow::Hopper => NVLINK,
        ArchRow::Blackwell => 40.1 / 50.0,
    }
}
/// PCIe TLP headers, DLLPs and flow-control credits: about 80 % of the x16 rate reaches a peer.
pub const PCIE: f64 = 0.80;
/// InfiniBand NDR moves 46–48 GB/s of 50 in practice (nccl-tests #290, #267).
pub const INFINIBAND: f64 = 0.94;
/// RDMA over lossless Ethernet: FEC lives inside the line rate; each packet carries the
/// RoCE path MTU's payload in that plus 82 bytes of line time (preamble and start 8, MAC
/// header 14, IPv4 20, UDP 8, BTH 12, ICRC 4, FCS 4, inter-frame gap 12). On Ethernet's
/// standard 1500-byte MTU the NIC's RoCE MTU is 1024: 1024/1106, 92.6 %. Jumbo frames let it
/// reach 4096 (4096/4178, 98 %: the 2–3 % of hardware.md §7), a setting this does not assume.
pub const ROCE_LOSSLESS: f64 = ROCE_PAYLOAD_BYTES / (ROCE_PAYLOAD_BYTES + ROCE_OVERHEAD_BYTES);
/// The RoCE path MTU on 1500-byte Ethernet (the largest IB MTU that fits).
const ROCE_PAYLOAD_BYTES: f64 = 1024.0;
/// Line time of a RoCEv2 packet beyond its payload.
const ROCE_OVERHEAD_BYTES: f64 = 8.0 + 14.0 + 20.0 + 8.0 + 12.0 + 4.0 + 4.0 + 12.0;
/// RoCE without PFC/ECN drops under incast and falls back to go-back-N retransmission.
/// Our estimate; the advice flags such fabrics.
pub const ROCE_LOSSY: f64 = 0.75;
/// AWS EFA: SRD recovers lost packets itself, spraying them over many paths (Shalev et al.,
/// "A Cloud-Optimized Transport Protocol for Elastic and Scalable HPC", IEEE Micro 2020), so
/// it never falls back to go-back-N and needs no PFC; its Ethernet/IP/UDP headers cost what
/// RoCE's do. Lossless RoCE's figure, whatever the switches' PFC setting.
pub const EFA: f64 = ROCE_LOSSLESS;
/// TCP payload per byte on the wire of Ethernet at the standard 1500-byte MTU: each frame
/// carries 1500 − 52 bytes of data (IPv4 20 + TCP 20 + the 12-byte timestamp option Linux
/// sends by default, RFC 7323) in 1500 + 38 bytes of line time (preamble and start 8, MAC
/// header 14, FCS 4, inter-frame gap 12; IEEE 802.3). 1448/1538: 94 %, what NCCL's sockets
/// reach on 10 GbE (9.4 of 10 Gb/s, see `docs/validation.md`). Above that a single TCP flow's
/// rate, which depends on the host's CPU, may bind first (`SOCKET_FLOW_GBIT_S`).
pub const TCP: f64 = TCP_PAYLOAD_BYTES / TCP_WIRE_BYTES;
/// Standard Ethernet MTU, less IPv4, TCP and TCP timestamp headers.
const TCP_PAYLOAD_BYTES: f64 = 1500.0 - 20.0 - 20.0 - 12.0;
/// The MTU plus Ethernet preamble, MAC header, FCS and inter-frame gap.
const TCP_WIRE_BYTES: f64 = 1500.0 + 8.0 + 14.0 + 4.0 + 12.0;
/// The slowest single TCP flow published under NCCL, Gb/s: one ring on one socket with its
/// own thread, 2.06 GB/s on a 2018 cloud VM's 32 Gb/s network (NVIDIA/nccl #209, NCCL 2.3.7).
/// NCCL's socket transport puts each channel's traffic on one socket, progressed by the
/// rank's one proxy thread (`net_socket.cc`: no helper threads or extra sockets by default
/// outside AWS and GCP), and its bandwidth is the slowest socket's rate × the sockets (the
/// maintainer, nccl-tests #83). Above this rate the host may bind before the wire; not
/// modelled (a flow's rate depends on the CPU: 4–6 GB/s all-reduce on 100 Gb/s TCP in
/// nccl #450), so the plans say so.
pub const SOCKET_FLOW_GBIT_S: f64 = 2.06 * 8.0;
/// What one message through NCCL's sockets costs on top of NCCL's network constants, µs
/// (`stack_latency_us`).
pub const SOCKET_MESSAGE_US: f64 = 20.0;
/// Gloo's single TCP connection per peer, measured on Gloo itself at two line rates: 110 of
/// 125 MB/s on 1 GbE (pytorch/gloo #21, its maintainer) and 1.11 GB/s of 1.25 on 10 GbE
/// (point-to-point, discuss.pytorch.org/t/194008): 0.88 and 0.89. Above 10 GbE one core's
/// copying can bind first (gloo `docs/latency.md`: 10 Gb/s at 100 % CPU without TSO); that
/// is not modelled, and `Library::Gloo`'s notes say so.
pub const GLOO_TCP: f64 = 0.88;
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

/// Without GPUDirect RDMA, network data is staged in host memory: where a GPU and its NIC
/// share a PCIe switch, the switch's link to the host carries it twice each way (GPU to
/// memory and memory to NIC, NIC to memory and memory to GPU).
pub const NO_GPUDIRECT_PCIE_SHARE: f64 = 0.5;
/// Without PCIe peer-to-peer (GeForce cards) NCCL uses its SHM transport: the sender's kernel
/// writes into a host-memory buffer and the receiver's kernel reads it from there
/// (`src/transport/shm.cc`, v2.30.7: `NCCL_SHM_LOCALITY` defaults to the receiver's side, no
/// copy engine). Each byte crosses the sender's PCIe link up and the receiver's down once, so
/// traffic in one direction runs at the PCIe rate; but when a GPU's link carries SHM traffic
/// both ways at once, the CPU's root complex handles it badly: measured on 2 GPUs, PCIe 3.0
/// x16, one channel, all-reduce 3.9 GB/s (per direction) against broadcast 10.31 GB/s
/// (NVIDIA/nccl #384, NCCL 2.4.8; the maintainer: "some CPUs do not handle bidirectional
/// traffic well"). This is that ratio: the share of the one-way rate each direction keeps.
pub const SHM_BIDIRECTIONAL_SHARE: f64 = 3.9 / 10.31;
/// One way, SHM moves less than peer-to-peer over the same link: the bytes land in host
/// memory and the receiver's kernel pulls them across its PCIe link again. The same
/// measurement's broadcast, 10.31 GB/s, is this share of PCIe 3.0 x16's 15.75 GB/s per
/// direction (8 GT/s × 16 lanes × 128/130).
pub const SHM_ONE_WAY: f64 = 10.31 / 15.754;
/// Link load of one SHM byte, in peer-to-peer bytes: the links' usable rate is set for
/// peer-to-peer (`PCIE`), and SHM reaches `SHM_ONE_WAY` of the line rate instead.
pub const SHM_LOAD_PER_BYTE: f64 = PCIE / SHM_ONE_WAY;

/// The transport a library actually runs over a link: Gloo has only TCP (its ibverbs
/// transport is not what PyTorch builds) and MLX's ring backend is TCP sockets (`ring.cpp`),
/// whatever the link offers; Thunderbolt 4 carries no RDMA (Apple's RDMA over Thunderbolt
/// needs Thunderbolt 5 and macOS 26.2), so a TB4 link marked RDMA runs TCP, and the checks
/// say so.
pub fn transport_of(library: Library, tech: LinkTech, transport: Transport) -> Transport {
    match library {
        Library::Gloo | Library::MlxRing => Transport::Tcp,
        _ if tech == LinkTech::Thunderbolt4 => Transport::Tcp,
        Library::Nccl | Library::MlxJaccl => transport,
    }
}

/// Usable share of a link's line rate under `library` (Gloo's own TCP figure on Ethernet).
pub fn library_link_efficiency(
    library: Library,
    tech: LinkTech,
    transport: Transport,
    lossless: bool,
) -> f64 {
    let transport = transport_of(library, tech, transport);
    if library == Library::Gloo && tech.is_ethernet_family() {
        return GLOO_TCP;
    }
    link_efficiency(tech, transport, lossless)
}

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
            Transport::Efa => EFA,
        },
        LinkTech::Thunderbolt4 | LinkTech::Thunderbolt5 => {
            THUNDERBOLT_TUNNEL
                * match transport {
                    Transport::Tcp => THUNDERBOLT_IP,
                    // EFA is an Ethernet adapter: on a Thunderbolt link it stands for RDMA.
                    Transport::Rdma | Transport::Efa => THUNDERBOLT_RDMA,
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
        // RoCE end to end 2–10 µs against InfiniBand's 1–5 µs (hardware.md §7). EFA
        // publishes no one-way latency of its own: RoCE's figure.
        (LinkTech::RoceV2 | LinkTech::Ethernet, Transport::Rdma | Transport::Efa) => 1.0,
        // A kernel socket send and receive: our estimate, between published 8-byte runs of
        // NCCL's sockets, about 5 µs a message on bare metal (two L40S servers, 13.2 µs for a
        // two-step all-reduce) and 35–40 µs on cloud VMs (nccl-tests #82: 45.8 µs for a
        // one-step broadcast).
        (LinkTech::RoceV2 | LinkTech::Ethernet, Transport::Tcp) => SOCKET_MESSAGE_US,
        // ~300 µs per exchange over TCP in Mac clusters before RDMA: half of it one way.
        (LinkTech::Thunderbolt4 | LinkTech::Thunderbolt5, Transport::Tcp) => 150.0,
        // RDMA over TB5 as MLX's JACCL pays it: an all-reduce of 4 KiB between two Mac minis
        // (M4 Pro, macOS 26.3) took 25.5 µs, one message each way at once
        // (hotwa/mlx-jaccl-cluster README at 0d78a206), MLX's dispatch to its CPU
        // communication stream and back included; the link alone is 3 to 9 µs (NetworkChuck,
        // exo users): an order of magnitude under the TCP ring's ~300 µs exchange, as
        // MLX's documentation says of the two.
        (LinkTech::Thunderbolt4 | LinkTech::Thunderbolt5, Transport::Rdma | Transport::Efa) => {
            JACCL_MESSAGE_US
        }
    }
}

/// What a message costs MLX's JACCL over RDMA on Thunderbolt 5, one way, µs
/// (`stack_latency_us`).
pub const JACCL_MESSAGE_US: f64 = 25.0;

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
