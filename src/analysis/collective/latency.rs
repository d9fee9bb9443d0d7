//! NCCL's latency constants (src/graph/tuning.cc, v2.30.7, as listed in collectives.md): the
//! tables and the figures read from them, nothing about a plan (the per-algorithm sums built
//! from them are `evaluate::step_latency`'s). All values in µs.

use crate::model::LinkTech;
use crate::model::catalog::GpuArch;
use serde::Serialize;

/// NCCL's protocols: LL (8-byte lines with flags), LL128, Simple.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize)]
pub enum Protocol {
    #[serde(rename = "LL")]
    Ll,
    #[serde(rename = "LL128")]
    Ll128,
    Simple,
}

impl Protocol {
    pub const ALL: [Protocol; 3] = [Protocol::Ll, Protocol::Ll128, Protocol::Simple];

    pub fn label(self) -> &'static str {
        match self {
            Protocol::Ll => "LL",
            Protocol::Ll128 => "LL128",
            Protocol::Simple => "Simple",
        }
    }

    pub(crate) fn index(self) -> usize {
        match self {
            Protocol::Ll => 0,
            Protocol::Ll128 => 1,
            Protocol::Simple => 2,
        }
    }
}

/// Kind of hop in NCCL's tables (its `hw` index).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub(crate) enum HopKind {
    NvLink,
    Pci,
    Net,
}

/// Algorithm columns of NCCL's tables.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum TableAlgo {
    Tree,
    Ring,
    CollNetDirect,
    Nvls,
    NvlsTree,
}

/// baseLatencies[algo][proto].
pub(crate) fn base_latency(algo: TableAlgo, p: Protocol) -> f64 {
    let row = match algo {
        TableAlgo::Tree => [6.8, 14.0, 8.4],
        TableAlgo::Ring => [6.6, 14.0, 8.4],
        TableAlgo::CollNetDirect | TableAlgo::Nvls | TableAlgo::NvlsTree => [0.0, 0.0, 0.0],
    };
    row[p.index()]
}

/// hwLatencies[hw][algo][proto].
pub(crate) fn hop_latency(hop_kind: HopKind, algo: TableAlgo, p: Protocol) -> f64 {
    let row = match (hop_kind, algo) {
        (HopKind::NvLink, TableAlgo::Tree) => [0.6, 1.25, 4.0],
        (HopKind::NvLink, TableAlgo::Ring) => [0.6, 1.9, 3.4],
        (HopKind::NvLink, TableAlgo::CollNetDirect) => [0.0, 0.0, 3.7],
        (HopKind::NvLink, TableAlgo::Nvls | TableAlgo::NvlsTree) => [0.0, 0.0, 25.0],
        (HopKind::Pci, TableAlgo::Tree) => [1.0, 1.9, 4.0],
        (HopKind::Pci, TableAlgo::Ring) => [1.0, 2.5, 5.7],
        (HopKind::Pci, TableAlgo::CollNetDirect) => [0.0, 0.0, 3.7],
        (HopKind::Pci, TableAlgo::Nvls | TableAlgo::NvlsTree) => [0.0, 0.0, 0.0],
        (HopKind::Net, TableAlgo::Tree) => [5.0, 8.5, 14.0],
        (HopKind::Net, TableAlgo::Ring) => [2.7, 4.0, 14.0],
        (HopKind::Net, TableAlgo::CollNetDirect) => [0.0, 0.0, 31.0],
        (HopKind::Net, TableAlgo::Nvls) => [0.0, 0.0, 18.0],
        (HopKind::Net, TableAlgo::NvlsTree) => [0.0, 0.0, 20.9],
    };
    row[p.index()]
}

/// NCCL's per-step latency of one intra-node hop with LL, the protocol small messages use:
/// 0.6 µs over NVLink (switch or bridge), 1.0 µs over PCIe. Tree and ring columns agree for
/// LL, so this is the one figure a hop's calibrated `latency_us` stands in for.
pub(crate) fn ll_hop_latency(hop_kind: HopKind) -> f64 {
    hop_latency(hop_kind, TableAlgo::Ring, Protocol::Ll)
}

/// The built-in intra-node hop latency (µs) a calibration of `tech` replaces: NCCL's LL
/// per-step constant of its hop kind. None for network technologies, whose calibrated
/// latency is a stack latency on top of NCCL's NET constants instead.
pub fn builtin_intra_hop_latency_us(tech: LinkTech) -> Option<f64> {
    match tech {
        LinkTech::NvLink | LinkTech::NvLinkBridge => Some(ll_hop_latency(HopKind::NvLink)),
        LinkTech::Pcie => Some(ll_hop_latency(HopKind::Pci)),
        _ => None,
    }
}

/// Per-step network overhead on x86 (NCCL_NET_OVERHEAD), tripled for Simple.
pub(crate) fn net_overhead(p: Protocol) -> f64 {
    if p == Protocol::Simple { 3.0 } else { 1.0 }
}

/// Rows of NCCL's per-architecture tables.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum ArchRow {
    Volta,
    Ampere,
    Hopper,
    Blackwell,
}

impl ArchRow {
    /// Apple GPUs do not run NCCL; Ampere-era constants stand in for their ring library.
    pub(crate) fn of(arch: GpuArch) -> ArchRow {
        match arch {
            GpuArch::Volta | GpuArch::Turing => ArchRow::Volta,
            GpuArch::Ampere | GpuArch::Ada | GpuArch::AppleM2 | GpuArch::AppleM3 => ArchRow::Ampere,
            GpuArch::Hopper => ArchRow::Hopper,
            GpuArch::Blackwell => ArchRow::Blackwell,
        }
    }

    /// The older of two rows: a mixed design runs at its weakest GPU.
    pub(crate) fn min(self, other: ArchRow) -> ArchRow {
        let rank = |r: ArchRow| match r {
            ArchRow::Volta => 0,
            ArchRow::Ampere => 1,
            ArchRow::Hopper => 2,
            ArchRow::Blackwell => 3,
        };
        if rank(self) <= rank(other) {
            self
        } else {
            other
        }
    }

    /// NVLS reduction efficiency (nvlsEfficiency); zero where there is no NVLS.
    pub(crate) fn nvls_efficiency(self) -> f64 {
        match self {
            ArchRow::Hopper => 0.85,
            ArchRow::Blackwell => 0.74,
            ArchRow::Volta | ArchRow::Ampere => 0.0,
        }
    }
}

/// LL's bus-bandwidth ceiling in GB/s (llMaxBws). One domain: the GPU row. Several: NCCL
/// indexes by CPU vendor; we assume Intel x86 (row 0), the common host of these servers.
pub(crate) fn ll_max_busbw_gbyte_s(row: ArchRow, domains: u32) -> f64 {
    match domains {
        0 | 1 => match row {
            ArchRow::Volta => 39.0,
            ArchRow::Ampere => 87.7,
            ArchRow::Hopper => 141.0,
            ArchRow::Blackwell => 282.0,
        },
        2 => 39.0,
        _ => 20.4,
    }
}

/// treeCorrectionFactor[proto][log2(bytes/64)], 64 B .. 256 MB.
const TREE_CORRECTION: [[f64; 24]; 3] = [
    [
        1.0, 1.0, 1.0, 1.0, 0.9, 0.8, 0.7, 0.7, 0.7, 0.7, 0.6, 0.5, 0.4, 0.4, 0.5, 0.6, 0.7, 0.8,
        0.9, 1.0, 1.0, 1.0, 1.0, 1.0,
    ],
    [
        1.0, 1.0, 1.0, 1.0, 1.0, 0.9, 0.8, 0.8, 0.8, 0.7, 0.6, 0.6, 0.6, 0.6, 0.6, 0.6, 0.8, 0.9,
        0.9, 0.9, 0.9, 1.0, 1.0, 1.0,
    ],
    [
        0.9, 0.9, 0.9, 0.9, 0.9, 0.9, 0.9, 0.8, 0.7, 0.6, 0.6, 0.5, 0.5, 0.5, 0.5, 0.6, 0.7, 0.8,
        0.7, 0.7, 0.8, 0.9, 0.9, 0.9,
    ],
];

/// NCCL's tree all-reduce bandwidth correction. NCCL steps it per power of two; we
/// interpolate in log2(size) between bucket centres, which keeps time non-decreasing in size
/// (no neighbouring factors differ by 2× or more).
pub(crate) fn tree_correction(p: Protocol, bytes: f64) -> f64 {
    let table = &TREE_CORRECTION[p.index()];
    let x = (bytes.max(1.0) / 64.0).log2() - 0.5;
    if x <= 0.0 {
        return table[0];
    }
    let last = table.len() - 1;
    if x >= last as f64 {
        return table[last];
    }
    let i = x.floor() as usize;
    let t = x - i as f64;
    table[i] * (1.0 - t) + table[i + 1] * t
}

/// NCCL_STEPS: slots in flight per channel.
pub(crate) const NCCL_STEPS: f64 = 8.0;
/// NCCL_NVLS_CHUNKSIZE default, bytes.
pub(crate) const NVLS_CHUNK_BYTES: f64 = 131_072.0;

/// NCCL's NVLS channels (`src/transport/nvls.cc`, v2.30.7, `ncclNvlsTuning`): 16 on Hopper
/// (NVLS_NCHANNELS_SM90); on Blackwell 24 inside one NVLink domain (NVLS_NCHANNELS_SM100_NVL)
/// and 32 across nodes (NVLS_NCHANNELS_SM100), which its multi-node tuning keeps for two
/// nodes and lowers to 24 for more on 400G-class NICs (`ncclNvlsTreeSm100Tuning`, nicBw ≥ 48
/// GB/s; every Blackwell system ships such NICs, so we assume them; 256 KiB chunks on 800G
/// NICs are not modelled).
pub(crate) fn nvls_channels(row: ArchRow, domains: u32) -> f64 {
    match (row, domains) {
        (ArchRow::Blackwell, 0 | 1) => 24.0,
        (ArchRow::Blackwell, 2) => 32.0,
        (ArchRow::Blackwell, _) => 24.0,
        _ => 16.0,
    }
}

/// NVLS moves fixed 128 KiB chunks through NCCL_STEPS slots on each of its `channels`, and
/// the multicast results only stream once that pipeline is full: NCCL_STEPS × chunk at one
/// channel's share of the GPU's NVLS rate. NCCL's tuner table leaves this out; the 8×H100
/// sweeps show it (their time at ≥ 64 MiB sits ~80 µs above size / peak rate). A pipeline
/// never holds more than its channel's data, so a message smaller than NCCL_STEPS chunks per
/// channel pays only for its own share (`bytes` ÷ channels).
pub(crate) fn nvls_fill_us(per_gpu_nvls_bytes_per_s: f64, channels: f64, bytes: f64) -> f64 {
    if per_gpu_nvls_bytes_per_s <= 0.0 || channels <= 0.0 {
        return 0.0;
    }
    let per_channel = per_gpu_nvls_bytes_per_s / channels;
    let in_flight = (NCCL_STEPS * NVLS_CHUNK_BYTES).min(bytes.max(0.0) / channels);
    in_flight / per_channel * 1e6
}

/// A grouped send/recv (all-to-all) issues one operation per peer; NCCL spreads them over its
/// p2p channels. We charge each peer's per-step overhead divided by this many in flight
/// (our estimate).
pub(crate) const P2P_IN_FLIGHT: f64 = 8.0;

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn tree_correction_keeps_time_monotone() {
        for p in Protocol::ALL {
            let mut last = 0.0;
            let mut s = 8.0_f64;
            while s < 1e10 {
                let t = s / tree_correction(p, s);
                assert!(t >= last, "{p:?} at {s}");
                last = t;
                s *= 1.05;
            }
        }
    }

    #[test]
    fn nvls_fill_on_h100() {
        // 450 GB/s × 0.82 × 0.85 = 313.65 GB/s; 16 channels → 19.6 GB/s; 1 MiB in flight.
        let rate = 450e9 * 0.82 * 0.85;
        let fill = nvls_fill_us(rate, 16.0, 1024.0 * 1024.0 * 1024.0);
        assert!((fill - 8.0 * 131_072.0 / (rate / 16.0) * 1e6).abs() < 1e-9);
        assert!((fill - 53.49).abs() < 0.01, "{fill}");
        // 16 MiB is exactly 1 MiB per channel: full. 128 B is 8 B per channel: 0.4 ns.
        assert!((nvls_fill_us(rate, 16.0, 16.0 * 1024.0 * 1024.0) - fill).abs() < 1e-9);
        let tiny = nvls_fill_us(rate, 16.0, 128.0);
        assert!((tiny - 8.0 / (rate / 16.0) * 1e6).abs() < 1e-12, "{tiny}");
        assert!(tiny < 0.001);
    }

    #[test]
    fn blackwell_fills_more_nvls_channels_than_hopper() {
        assert_eq!(nvls_channels(ArchRow::Hopper, 1), 16.0);
        assert_eq!(nvls_channels(ArchRow::Hopper, 4), 16.0);
        assert_eq!(nvls_channels(ArchRow::Blackwell, 1), 24.0);
        assert_eq!(nvls_channels(ArchRow::Blackwell, 2), 32.0);
        assert_eq!(nvls_channels(ArchRow::Blackwell, 8), 24.0);
        // B200: 900 GB/s × 0.802 (40.1 of 50 GB/s per link) × 0.74 (NVLS efficiency) =
        // 534.1 GB/s; 24 channels each hold 1 MiB in flight: 24 MiB at that rate, 47.1 µs,
        // half as much again as 16 channels would take. Below 24 MiB each channel holds its
        // share only, and the fill is the message at the GPU's rate whatever the channels.
        let rate = 900e9 * (40.1 / 50.0) * 0.74;
        let fill = nvls_fill_us(rate, 24.0, 1024.0 * 1024.0 * 1024.0);
        assert!((fill - 47.12).abs() < 0.01, "{fill}");
        let sixteen = nvls_fill_us(rate, 16.0, 1024.0 * 1024.0 * 1024.0);
        assert!((fill / sixteen - 1.5).abs() < 1e-12);
        let eight_mib = 8.0 * 1024.0 * 1024.0;
        assert!(
            (nvls_fill_us(rate, 24.0, eight_mib) - nvls_fill_us(rate, 16.0, eight_mib)).abs()
                < 1e-9
        );
    }
}
