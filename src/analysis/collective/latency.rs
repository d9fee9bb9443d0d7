//! NCCL's latency constants (src/graph/tuning.cc, v2.30.7, as listed in collectives.md, and
//! the tables of earlier releases): the tables and the figures read from them, nothing about
//! a plan (the per-algorithm sums built from them are `evaluate::step_latency`'s). All values
//! in µs.

use crate::model::catalog::GpuArch;
use crate::model::{LinkTech, NcclRelease};
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

    pub(crate) const fn index(self) -> usize {
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

/// NCCL's latency tables of one release (`src/graph/tuning.cc` at its tag):
/// baseLatencies[algo][proto] and hwLatencies[hw][algo][proto] for the algorithms modelled,
/// indexed by `TableAlgo` and `HopKind`. Only the latency tables follow the release; the
/// bandwidth caps, channel counts and efficiencies are the modelled release's throughout.
#[derive(Debug, PartialEq)]
pub(crate) struct LatencyTable {
    /// The first release these figures shipped in.
    pub from: NcclRelease,
    base: [[f64; 3]; 5],
    hw: [[[f64; 3]; 5]; 3],
    /// NVLSTree's network steps: 2·(nNodes − 1) before 2.19, 2·log2(nNodes) since.
    pub nvls_tree_linear: bool,
}

const fn algo_index(algo: TableAlgo) -> usize {
    match algo {
        TableAlgo::Tree => 0,
        TableAlgo::Ring => 1,
        TableAlgo::CollNetDirect => 2,
        TableAlgo::Nvls => 3,
        TableAlgo::NvlsTree => 4,
    }
}

impl LatencyTable {
    /// baseLatencies[algo][proto].
    pub(crate) fn base(&self, algo: TableAlgo, p: Protocol) -> f64 {
        self.base[algo_index(algo)][p.index()]
    }

    /// hwLatencies[hw][algo][proto].
    pub(crate) fn hop(&self, hop_kind: HopKind, algo: TableAlgo, p: Protocol) -> f64 {
        self.hw[hw_index(hop_kind)][algo_index(algo)][p.index()]
    }

    /// The tables `release` ran: the newest tabulated at or before it. None before 2.5: 2.3
    /// and 2.4 chose by size thresholds (`treeThreshold`), with no latency tables.
    pub(crate) fn of(release: NcclRelease) -> Option<&'static LatencyTable> {
        if release >= MODELLED.from {
            return Some(&MODELLED);
        }
        TABLES.iter().rev().find(|t| t.from <= release)
    }
}

const ZERO: [f64; 3] = [0.0; 3];

const fn hw_index(hop_kind: HopKind) -> usize {
    match hop_kind {
        HopKind::NvLink => 0,
        HopKind::Pci => 1,
        HopKind::Net => 2,
    }
}

/// Building a release's tables from the one before: what changed, cell by cell.
impl LatencyTable {
    const fn since(mut self, major: u16, minor: u16, patch: u16) -> Self {
        self.from = NcclRelease::new(major, minor, patch);
        self
    }

    const fn base_row(mut self, algo: TableAlgo, row: [f64; 3]) -> Self {
        self.base[algo_index(algo)] = row;
        self
    }

    const fn hop_row(mut self, hop_kind: HopKind, algo: TableAlgo, row: [f64; 3]) -> Self {
        self.hw[hw_index(hop_kind)][algo_index(algo)] = row;
        self
    }

    const fn hop_cell(mut self, hop_kind: HopKind, algo: TableAlgo, p: Protocol, v: f64) -> Self {
        self.hw[hw_index(hop_kind)][algo_index(algo)][p.index()] = v;
        self
    }

    const fn nvls_tree_log2(mut self) -> Self {
        self.nvls_tree_linear = false;
        self
    }
}

use HopKind::{Net, NvLink, Pci};
use Protocol::{Ll, Ll128, Simple};
use TableAlgo::{CollNetDirect as CollNet, Nvls as NvlsAlgo, NvlsTree as NvlsTreeAlgo, Ring, Tree};

/// 2.5: Tree and Ring only (each tag's `src/graph/tuning.cc`, Tree, Ring, CollNet or
/// CollNetDirect, NVLS, NVLSTree; NVLink, PCI, NET).
const R2_5: LatencyTable = LatencyTable {
    from: NcclRelease::new(2, 5, 0),
    base: [[4.4, 4.4, 0.0], [3.6, 3.6, 8.4], ZERO, ZERO, ZERO],
    hw: [
        [[0.5, 1.9, 28.0], [0.4, 2.5, 5.7], ZERO, ZERO, ZERO],
        [[1.0, 1.9, 28.0], [1.0, 2.5, 5.7], ZERO, ZERO, ZERO],
        [[5.0, 7.5, 50.0], [0.9, 2.5, 6.6], ZERO, ZERO, ZERO],
    ],
    nvls_tree_linear: true,
};
/// 2.6: CollNet.
const R2_6: LatencyTable = R2_5
    .since(2, 6, 0)
    .base_row(CollNet, [4.4, 4.4, 0.0])
    .hop_row(NvLink, CollNet, [0.5, 1.9, 4.0])
    .hop_row(Pci, CollNet, [1.0, 1.9, 5.5])
    .hop_row(Net, CollNet, [5.0, 5.0, 10.7]);
const R2_7: LatencyTable = R2_6
    .since(2, 7, 0)
    .base_row(Ring, [3.6, 10.0, 8.4])
    .hop_row(NvLink, Tree, [0.52, 1.2, 28.0])
    .hop_row(NvLink, Ring, [0.47, 1.9, 3.4])
    .hop_row(NvLink, CollNet, [0.5, 1.2, 4.0])
    .hop_row(Net, Tree, [5.0, 8.5, 50.0])
    .hop_row(Net, Ring, [2.7, 4.0, 9.6]);
const R2_8: LatencyTable = R2_7
    .since(2, 8, 0)
    .hop_cell(NvLink, Tree, Ll128, 1.25)
    .hop_cell(Net, Tree, Simple, 28.0);
const R2_10: LatencyTable = R2_8
    .since(2, 10, 0)
    .hop_cell(NvLink, CollNet, Simple, 8.0)
    .hop_cell(Pci, CollNet, Simple, 8.0);
const R2_12: LatencyTable = R2_10.since(2, 12, 0).hop_cell(Net, Ring, Simple, 28.0);
/// 2.14: CollNet splits into Direct and Chain; Direct keeps only Simple.
const R2_14: LatencyTable = R2_12
    .since(2, 14, 0)
    .hop_row(NvLink, CollNet, [0.0, 0.0, 8.0])
    .hop_row(Pci, CollNet, [0.0, 0.0, 8.0])
    .hop_row(Net, CollNet, [0.0, 0.0, 10.7])
    .hop_cell(Net, Ring, Simple, 9.6);
/// 2.17: NVLS, a base latency.
const R2_17: LatencyTable = R2_14.since(2, 17, 0).base_row(NvlsAlgo, [0.0, 0.0, 40.0]);
/// 2.18.1: NVLSTree; higher base latencies.
const R2_18_1: LatencyTable = R2_17
    .since(2, 18, 1)
    .base_row(Tree, [6.8, 14.0, 0.0])
    .base_row(Ring, [6.6, 14.0, 8.4])
    .base_row(CollNet, [6.8, 14.0, 0.0])
    .base_row(NvlsAlgo, [0.0, 0.0, 23.0])
    .base_row(NvlsTreeAlgo, [0.0, 0.0, 23.0])
    .hop_cell(NvLink, Tree, Ll, 0.6)
    .hop_cell(NvLink, Ring, Ll, 0.6)
    .hop_cell(Net, Ring, Simple, 14.0)
    .hop_row(Net, NvlsAlgo, [0.0, 0.0, 18.0])
    .hop_row(Net, NvlsTreeAlgo, [0.0, 0.0, 19.0]);
const R2_18_3: LatencyTable = R2_18_1
    .since(2, 18, 3)
    .hop_cell(NvLink, Tree, Simple, 4.0)
    .hop_cell(Pci, Tree, Simple, 6.0)
    .hop_cell(Net, Tree, Simple, 14.0);
/// 2.19: NVLS's figure moves from the base to the NVLink hop; NVLSTree crosses the network
/// 2·log2(nodes) times.
const R2_19: LatencyTable = R2_18_3
    .since(2, 19, 0)
    .base_row(CollNet, ZERO)
    .base_row(NvlsAlgo, ZERO)
    .base_row(NvlsTreeAlgo, ZERO)
    .hop_row(NvLink, Tree, [0.6, 1.25, 28.0])
    .hop_row(NvLink, CollNet, [0.0, 0.0, 3.7])
    .hop_row(NvLink, NvlsAlgo, [0.0, 0.0, 23.0])
    .hop_row(NvLink, NvlsTreeAlgo, [0.0, 0.0, 23.0])
    .hop_cell(Pci, Tree, Simple, 28.0)
    .hop_row(Pci, CollNet, [0.0, 0.0, 3.7])
    .hop_cell(Net, Tree, Simple, 28.0)
    .hop_row(Net, CollNet, [0.0, 0.0, 31.0])
    .hop_row(Net, NvlsTreeAlgo, [0.0, 0.0, 14.0])
    .nvls_tree_log2();
const R2_21: LatencyTable = R2_19
    .since(2, 21, 0)
    .hop_cell(NvLink, NvlsAlgo, Simple, 25.0)
    .hop_cell(NvLink, NvlsTreeAlgo, Simple, 25.0);
const R2_23: LatencyTable = R2_21
    .since(2, 23, 0)
    .base_row(Tree, [6.8, 14.0, 8.4])
    .hop_cell(NvLink, Tree, Simple, 4.0)
    .hop_cell(Pci, Tree, Simple, 4.0)
    .hop_cell(Net, Tree, Simple, 14.0);

/// Every change of the modelled columns from 2.5.6 to 2.28.7, oldest first.
const TABLES: [LatencyTable; 13] = [
    R2_5, R2_6, R2_7, R2_8, R2_10, R2_12, R2_14, R2_17, R2_18_1, R2_18_3, R2_19, R2_21, R2_23,
];

/// 2.28.9 to 2.30.7: NVLSTree's network step at 20.9. The modelled release's tables.
pub(crate) const MODELLED: LatencyTable =
    R2_23
        .since(2, 28, 9)
        .hop_cell(Net, NvlsTreeAlgo, Simple, 20.9);

/// hwLatencies[hw][algo][proto] of the modelled release.
pub(crate) fn hop_latency(hop_kind: HopKind, algo: TableAlgo, p: Protocol) -> f64 {
    MODELLED.hop(hop_kind, algo, p)
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
            GpuArch::Ampere
            | GpuArch::Ada
            | GpuArch::AppleM2
            | GpuArch::AppleM3
            | GpuArch::AppleM4 => ArchRow::Ampere,
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
/// p2p channels, each running up to `NCCL_MAX_DEV_WORK_P2P_PER_BATCH` (8, `device.h`) of
/// them at once (`enqueue.cc`). We charge each peer's per-step overhead divided by that many
/// in flight: one channel's worth, which leaves the spread over several channels out.
pub(crate) const P2P_IN_FLIGHT: f64 = 8.0;

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn each_release_gets_the_tables_it_shipped() {
        let of = |m, n, p| LatencyTable::of(NcclRelease::new(m, n, p)).expect("tabulated");
        let nvls = |t: &LatencyTable| t.hop(HopKind::NvLink, TableAlgo::Nvls, Protocol::Simple);
        let net_tree =
            |t: &LatencyTable| t.hop(HopKind::Net, TableAlgo::NvlsTree, Protocol::Simple);
        // 2.21.5 (nccl #1244's H20 run): NVLS 25 µs on NVLink, NVLSTree's network step 14 µs,
        // tree Simple 28 µs a hop with no base.
        let t = of(2, 21, 5);
        assert_eq!((nvls(t), net_tree(t)), (25.0, 14.0));
        assert_eq!(
            t.hop(HopKind::NvLink, TableAlgo::Tree, Protocol::Simple),
            28.0
        );
        assert_eq!(t.base(TableAlgo::Tree, Protocol::Simple), 0.0);
        // 2.18.5 (Azure's sweeps): NVLS's 23 µs is a base latency, NVLSTree's step 19 µs.
        let t = of(2, 18, 5);
        assert_eq!(t.base(TableAlgo::Nvls, Protocol::Simple), 23.0);
        assert_eq!((nvls(t), net_tree(t)), (0.0, 19.0));
        assert!(t.nvls_tree_linear);
        // 20.9 µs came in 2.28.9; 2.28.7 still has 14.
        assert_eq!(net_tree(of(2, 28, 7)), 14.0);
        assert_eq!(of(2, 28, 9), &MODELLED);
        assert_eq!(of(2, 30, 7), &MODELLED);
        assert_eq!(net_tree(&MODELLED), 20.9);
        // 2.9.9: ring LL 3.6 µs base and 0.47 µs an NVLink hop.
        let t = of(2, 9, 9);
        assert_eq!(t.base(TableAlgo::Ring, Protocol::Ll), 3.6);
        assert_eq!(t.hop(HopKind::NvLink, TableAlgo::Ring, Protocol::Ll), 0.47);
        // 2.4.2 predates the tables.
        assert!(LatencyTable::of(NcclRelease::new(2, 4, 2)).is_none());
        // The tables run in release order.
        assert!(TABLES.windows(2).all(|w| w[0].from < w[1].from));
        assert!(TABLES[TABLES.len() - 1].from < MODELLED.from);
    }

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
