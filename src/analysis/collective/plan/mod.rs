//! The algorithms as flows: each turns a group of GPUs into phases, and each phase into the
//! bytes every arc carries per byte of the collective's size. Routing happens here (through
//! `LoadBuilder`), so the bandwidth term later is only "most loaded arc / its capacity".
//!
//! One file an algorithm family (`ring`, `tree`, `nvls`, `sharp`, `all_to_all`; hierarchical
//! and send/recv are put together here from theirs), `loads` the builder they all add to.

mod all_to_all;
mod loads;
mod nvls;
mod ring;
mod sharp;
mod tree;

pub(crate) use loads::LoadBuilder;

use super::Library;
use super::channels::{DeviceChunking, RingChannels};
use super::efficiency::{self as eff, nvlink_efficiency};
use super::fabric::{ABSENT_ARC, Fabric, GpuInterconnect};
use super::latency::{self as lat, ArchRow, HopKind, LatencyTable};
use super::release::{self, nvls_refused};
use super::routing::{Router, TreeUse};
use super::tree_pipeline::{ChunkRule, TreePipeline};
use super::{Algorithm, CollectiveError, Op, Routing};
use all_to_all::{all_to_all, pxn_send};
use loads::PhaseLoads;
pub(crate) use nvls::all_nvls;
use nvls::{nvls_gpu_rate, nvls_loads};
pub(crate) use ring::nic_rings;
use ring::rings;
use sharp::sharp_trees;
use std::sync::Arc;
pub(crate) use tree::double_tree;
use tree::trees;

/// NCCL runs two channels per ring or tree on each NIC: two connections to hash.
const CHANNELS_PER_CONNECTION: u32 = 2;

#[derive(Debug, Clone)]
pub(crate) struct Phase {
    /// How many times the phase's traffic pattern repeats, back to back.
    pub repeat: f64,
    /// Bytes per arc per byte of the collective's size, for one repetition (shared when a
    /// phase repeats an earlier one's traffic).
    pub loads: Arc<Vec<f64>>,
    /// NVLS phases run the NVLink ports at NVLS efficiency.
    pub nvls: bool,
}

#[derive(Debug, Clone)]
pub(crate) struct Plan {
    pub algorithm: Algorithm,
    /// The library that runs it (its protocols and step latencies).
    pub library: super::Library,
    pub phases: Vec<Phase>,
    /// GPUs in each group.
    pub gpus: u32,
    /// Scale-up domains in the group and the largest number of GPUs one holds.
    pub domains: u32,
    pub max_domain_gpus: u32,
    /// Worst intra-domain hop (PCIe is worse than NVLink); None when no GPU talks inside a domain.
    pub intra_hop: Option<HopKind>,
    pub uses_net: bool,
    /// NCCL reaches the network through aws-ofi-nccl over EFA, which sets NCCL_PROTO=simple
    /// (`Fabric::efa`).
    pub efa: bool,
    /// The plan crosses the network from a GPU whose NIC lies beyond a PCIe switch they share
    /// (`Fabric::net_without_gdr`): NCCL 2.30.7's tuner enables LL128 only where the
    /// network graph's path is PXB or closer (PXN on Hopper and later, which still needs some
    /// GPU beside the NIC; `src/graph/tuning.cc`, `ncclTopoTuneModel`).
    pub no_net_ll128: bool,
    /// NCCL's release leaves LL128 off on these GPUs by default
    /// (`release::ll128_by_default`): consumer Ampere and Turing, and Ada before 2.27.
    pub gpus_without_ll128: bool,
    /// Stack, switch and propagation latency of the worst network path, µs.
    pub net_extra_us: f64,
    /// Per-GPU usable NVLink rate at NVLS efficiency (bytes/s) for the NVLS pipeline fill.
    pub nvls_rate: f64,
    /// NCCL's NVLS channels for that fill (`latency::nvls_channels`).
    pub nvls_channels: f64,
    /// The channels NCCL sets up for a ring or tree whose every hop is NVLink inside one
    /// domain, of which a small operation runs on fewer; None elsewhere (other libraries or
    /// algorithms, PCIe hops, networks).
    pub channels: Option<RingChannels>,
    /// How a release before 2.20 cuts a ring all-reduce's chunks on the GPU, rounding them up
    /// (`DeviceChunking`); None from 2.20, and where `channels` is None.
    pub device_chunking: Option<DeviceChunking>,
    /// A tree all-reduce's shape and rates for its Simple pipeline fill; None for other
    /// algorithms and libraries.
    pub tree_pipeline: Option<TreePipeline>,
    /// Seconds per byte of size spent copying GPU tensors to host memory and back before and
    /// after the collective (Gloo on discrete GPUs); zero where the library reads GPU memory.
    pub staging_s_per_byte: f64,
    /// NCCL's latency tables of the release that runs it.
    pub latency: &'static LatencyTable,
    /// Why this ring runs in place of the algorithm NCCL_ALGO forced, where the release
    /// falls back to its ring (`release::forced_falls_back_to_ring`).
    pub fallback: Option<String>,
    pub notes: Vec<String>,
}

/// What a plan over EFA says about its protocol.
const EFA_SIMPLE_NOTE: &str = "AWS EFA: aws-ofi-nccl sets NCCL_PROTO=simple where the adapter \
    does not deliver 128-byte writes in order (LL and LL128 need that order; the plugin exempts \
    p5en, which is not modelled apart), so every size runs NCCL's Simple protocol";

/// A run of the group's GPUs inside one scale-up domain.
pub(crate) struct Segment<'g> {
    pub gpus: &'g [u32],
}

pub(crate) fn segments<'g>(fab: &Fabric, group: &'g [u32]) -> Vec<Segment<'g>> {
    let mut out: Vec<Segment> = Vec::new();
    let mut start = 0;
    let mut last = u32::MAX;
    for (i, &g) in group.iter().enumerate() {
        let d = fab.domain_of_gpu(g);
        if i > 0 && d != last {
            out.push(Segment {
                gpus: &group[start..i],
            });
            start = i;
        }
        last = d;
    }
    if start < group.len() {
        out.push(Segment {
            gpus: &group[start..],
        });
    }
    out
}

fn key(a: u64, b: u64, c: u64) -> u64 {
    a.wrapping_mul(0x9e37_79b9_7f4a_7c15) ^ b.wrapping_mul(0xc2b2_ae3d_27d4_eb4f) ^ c
}

/// One GPU's send of `bytes` (per byte of size) to another: over the scale-up fabric inside
/// their domain, else through the network (`pxn_send`, flow key `k`).
fn send(
    b: &mut LoadBuilder,
    fab: &Fabric,
    from: u32,
    to: u32,
    bytes: f64,
    k: u64,
) -> Result<(), CollectiveError> {
    if fab.domain_of_gpu(from) == fab.domain_of_gpu(to) {
        b.intra(from, to, bytes);
        Ok(())
    } else {
        pxn_send(b, fab, from, to, bytes, k)
    }
}

/// The NVLS pipeline fill's inputs for a plan whose first group is `first` over `domains`
/// NVLink domains: the GPUs' NVLS rate and NCCL's NVLS channel count.
fn nvls_fill_inputs(fab: &Fabric, first: &[u32], domains: u32) -> (f64, f64) {
    (
        nvls_gpu_rate(fab, first),
        lat::nvls_channels(fab.node_of_gpu(first[0]).arch, domains),
    )
}

/// NCCL's ring channels on the group's GPUs when they talk over NVLink (an NVSwitch or
/// bridges), set by the slowest GPU's NVLink rate as NCCL counts it: the line rate at its
/// per-link figure (`efficiency::nvlink_efficiency`), whatever a calibration measured, for
/// NCCL's search never sees that.
fn nvlink_ring_channels(fab: &Fabric, group: &[u32]) -> Option<RingChannels> {
    let node = fab.node_of_gpu(*group.first()?);
    if !matches!(
        node.interconnect,
        GpuInterconnect::NvSwitch { .. } | GpuInterconnect::BridgePairs
    ) {
        return None;
    }
    let slowest = group
        .iter()
        .map(|&g| {
            let up = fab.gpus[g as usize].su_up;
            if up == ABSENT_ARC {
                0.0
            } else {
                fab.arc_line(up as usize)
            }
        })
        .fold(f64::INFINITY, f64::min);
    RingChannels::of(node.arch, slowest * nvlink_efficiency(node.arch) / 1e9)
}

/// The tree's pipeline over `m` domains of up to `g` GPUs: two channels per NIC across nodes,
/// the NVLink search's channels inside one node (none over PCIe alone, where NCCL's search is
/// not modelled); a wave of chunks crosses an NVLink or PCIe hop at the GPU's usable rate on
/// that link, a network hop at the combined rate of the node's NICs.
fn tree_pipeline(
    fab: &Fabric,
    first: &[u32],
    m: u32,
    g: u32,
    intra_hop: Option<HopKind>,
) -> Option<TreePipeline> {
    let nvlink = nvlink_ring_channels(fab, first);
    let channels = if m > 1 {
        f64::from(CHANNELS_PER_CONNECTION * nic_rings(fab, first))
    } else {
        f64::from(nvlink?.comm)
    };
    let intra_bytes_per_s = match intra_hop {
        Some(HopKind::NvLink) => nvlink.map_or(0.0, |ch| ch.gpu_gbyte_s * 1e9),
        Some(HopKind::Pci) => first
            .iter()
            .map(|&gpu| {
                let up = fab.gpus[gpu as usize].pcie_up;
                if up == ABSENT_ARC {
                    0.0
                } else {
                    fab.arc_usable[up as usize]
                }
            })
            .fold(f64::INFINITY, f64::min),
        _ => 0.0,
    };
    Some(TreePipeline {
        channels,
        heads: 1.0,
        intra_stages: 2.0 * f64::from(g.saturating_sub(1)),
        net_stages: net_stages(m),
        intra_bytes_per_s: if intra_bytes_per_s.is_finite() {
            intra_bytes_per_s
        } else {
            0.0
        },
        net_bytes_per_s: if m > 1 {
            node_nic_rate(fab, first)
        } else {
            0.0
        },
        chunk: ChunkRule::Tree {
            step: fab.nccl_buffer.step_bytes(),
            halves_by_depth: TreePipeline::halves_chunks_in(fab.nccl),
            depth: f64::from(g.saturating_sub(1)) + f64::from(m.max(1)).log2().floor(),
        },
    })
}

/// NVLSTree's network tree over `m` nodes of `g` GPUs: every GPU with a NIC heads its share
/// on each of NCCL's NVLS channels. Its chunk is NCCL's NVLS chunk up to the tree maximum
/// (`nvls.cc`, `ncclNvlsTuning`): 128 KiB, 64 KiB from 4 nodes; on Blackwell 64 KiB, the
/// tuning for NICs that share the GPUs' PCIe switches as on HGX and DGX B200 (800G NICs'
/// 256 KiB from 4 nodes is not modelled).
fn nvls_tree_pipeline(fab: &Fabric, first: &[u32], m: u32, g: u32, channels: f64) -> TreePipeline {
    let max_chunk = match (fab.node_of_gpu(first[0]).arch, m) {
        (ArchRow::Blackwell, _) | (_, 4..) => 65_536.0,
        _ => 131_072.0,
    };
    TreePipeline {
        channels,
        heads: f64::from(
            g.min(nic_rings(fab, first))
                .min(tree::NVLS_MAX_HEADS as u32)
                .max(1),
        ),
        intra_stages: 0.0,
        net_stages: net_stages(m),
        intra_bytes_per_s: 0.0,
        net_bytes_per_s: node_nic_rate(fab, first),
        chunk: ChunkRule::NvlsTree { max_chunk },
    }
}

/// Network hops a chunk crosses up and down NCCL's tree over `m` domains: 2 ⌈log2 m⌉.
fn net_stages(m: u32) -> f64 {
    2.0 * f64::from(m.max(1)).log2().ceil()
}

/// What the NICs of the group's slowest node move together, bytes/s (their access links'
/// usable rates out of the node); zero without NICs.
fn node_nic_rate(fab: &Fabric, group: &[u32]) -> f64 {
    let mut slowest = f64::INFINITY;
    let mut last = u32::MAX;
    for &g in group {
        let node = fab.gpus[g as usize].node;
        if node == last {
            continue;
        }
        last = node;
        let rate: f64 = fab
            .nics_of(&fab.nodes[node as usize])
            .iter()
            .filter_map(|nic| nic.access.map(|(out, _, _)| fab.arc_usable[out as usize]))
            .sum();
        slowest = slowest.min(rate);
    }
    if slowest.is_finite() { slowest } else { 0.0 }
}

fn equal_segments(segs: &[Segment]) -> bool {
    segs.windows(2).all(|w| w[0].gpus.len() == w[1].gpus.len())
}

/// Concurrent, congruent groups of GPUs (one group for a plain collective; the TP or DP groups
/// of a training step), with what every algorithm asks of them worked out once.
pub(crate) struct Groups<'g> {
    pub groups: &'g [Vec<u32>],
    /// Per group: its runs of GPUs by scale-up domain.
    pub segs: Vec<Vec<Segment<'g>>>,
    /// Every GPU of every group sits behind an NVSwitch that reduces (NVLS).
    pub all_nvls: bool,
}

impl<'g> Groups<'g> {
    pub fn new(fab: &Fabric, groups: &'g [Vec<u32>]) -> Self {
        Groups {
            groups,
            segs: groups.iter().map(|g| segments(fab, g)).collect(),
            all_nvls: groups.iter().all(|gr| all_nvls(fab, gr)),
        }
    }

    /// Each group with its domain runs.
    fn each(&self) -> impl Iterator<Item = (&'g [u32], &[Segment<'g>])> {
        self.groups
            .iter()
            .map(Vec::as_slice)
            .zip(self.segs.iter().map(Vec::as_slice))
    }
}

/// The plan of `algorithm` for `op` over the groups, or why it does not apply.
pub(crate) fn plan<'f>(
    fab: &'f Fabric,
    router: &mut Router<'f>,
    gs: &Groups,
    op: Op,
    algorithm: Algorithm,
    routing: Routing,
) -> Result<Plan, CollectiveError> {
    let groups = gs.groups;
    let unavailable = |reason: &str| CollectiveError::AlgorithmUnavailable {
        algorithm,
        op,
        reason: reason.to_string(),
    };
    let Some(first) = groups.first() else {
        return Err(CollectiveError::NoGpus);
    };
    let segs0 = &gs.segs[0];
    let m = segs0.len() as u32;
    let n = first.len() as u32;
    let max_g = segs0.iter().map(|s| s.gpus.len() as u32).max().unwrap_or(0);
    let nf = f64::from(n);
    let g = f64::from(max_g);
    let mf = f64::from(m);
    let mut phases: Vec<Phase> = Vec::new();
    let mut notes = Vec::new();
    let mut nvls_rate = 0.0;
    let mut nvls_channels = 0.0;
    let mut intra_hop = None;
    let mut uses_net = false;
    let mut net_extra = 0.0f64;
    let mut push = |res: PhaseLoads, repeat: f64, nvls: bool, phases: &mut Vec<Phase>| {
        let (loads, hop_kind, net, extra) = res;
        intra_hop = match (intra_hop, hop_kind) {
            (Some(HopKind::Pci), _) | (_, Some(HopKind::Pci)) => Some(HopKind::Pci),
            (Some(a), _) => Some(a),
            (None, b) => b,
        };
        uses_net |= net;
        net_extra = net_extra.max(extra);
        phases.push(Phase {
            repeat,
            loads,
            nvls,
        });
    };
    let all_groups_nvls = gs.all_nvls;
    let gloo = fab.library == Library::Gloo;
    // PyTorch's Gloo group runs a reduce-scatter as a whole all-reduce and keeps its part
    // (ProcessGroupGloo.cpp, `_reduce_scatter_base`).
    let whole_all_reduce = op == Op::AllReduce || (gloo && op == Op::ReduceScatter);
    match (op, algorithm) {
        (Op::AllReduce | Op::AllGather | Op::ReduceScatter, Algorithm::Ring)
        | (Op::AllReduce | Op::AllGather, Algorithm::BidirectionalRing) => {
            let steps = if whole_all_reduce {
                2.0 * (nf - 1.0)
            } else {
                nf - 1.0
            };
            let mut b = LoadBuilder::new(fab, router, routing);
            for (group, segs) in gs.each() {
                if algorithm == Algorithm::BidirectionalRing {
                    // Half of every chunk goes clockwise, half counter-clockwise, on the same
                    // neighbours: each direction of a ring link carries half a one-way ring's.
                    rings(&mut b, fab, group, segs, 0.5 / nf, true, false)?;
                    rings(&mut b, fab, group, segs, 0.5 / nf, true, true)?;
                } else {
                    rings(&mut b, fab, group, segs, 1.0 / nf, true, false)?;
                }
            }
            push(b.finish()?, steps, false, &mut phases);
        }
        (Op::Reduce, Algorithm::Ring) if gloo => {
            // Gloo's reduce (reduce.cc): a ring reduce-scatter, two segments in flight, then
            // every rank sends its reduced chunk to the root.
            let mut b = LoadBuilder::new(fab, router, routing);
            for (group, segs) in gs.each() {
                rings(&mut b, fab, group, segs, 1.0 / nf, true, false)?;
            }
            push(b.finish()?, nf - 1.0, false, &mut phases);
            let mut b = LoadBuilder::new(fab, router, routing);
            for group in groups {
                let root = group[0];
                for (i, &g) in group.iter().enumerate().skip(1) {
                    send(
                        &mut b,
                        fab,
                        g,
                        root,
                        1.0 / nf,
                        key(i as u64, u64::from(g), 41),
                    )?;
                }
            }
            push(b.finish()?, 1.0, false, &mut phases);
        }
        (Op::Broadcast | Op::Reduce, Algorithm::Ring) => {
            let mut b = LoadBuilder::new(fab, router, routing);
            for (group, segs) in gs.each() {
                rings(&mut b, fab, group, segs, 1.0, false, op == Op::Reduce)?;
            }
            push(b.finish()?, 1.0, false, &mut phases);
        }
        (Op::Broadcast, Algorithm::Tree) if gloo => {
            // Gloo's binomial tree (broadcast.cc): ⌈log2 n⌉ rounds, each sending the whole
            // buffer, the root sending in every round. Its uplink is the busiest: a chain's
            // loads (one send per GPU) repeated once per round.
            let mut b = LoadBuilder::new(fab, router, routing);
            for (group, segs) in gs.each() {
                rings(&mut b, fab, group, segs, 1.0, false, false)?;
            }
            push(b.finish()?, nf.log2().ceil(), false, &mut phases);
        }
        (Op::AllReduce, Algorithm::Tree) => {
            let mut b = LoadBuilder::new(fab, router, routing);
            for (group, segs) in gs.each() {
                if segs.len() == 1 {
                    for w in group.windows(2) {
                        b.intra(w[1], w[0], 1.0);
                        b.intra(w[0], w[1], 1.0);
                    }
                } else {
                    trees(&mut b, fab, segs, 1.0, false)?;
                }
            }
            push(b.finish()?, 1.0, false, &mut phases);
        }
        (Op::AllReduce | Op::AllGather | Op::ReduceScatter, Algorithm::Nvls) => {
            if m != 1 {
                return Err(unavailable(
                    "NVLS reduces inside one NVSwitch domain; across domains use NVLS-tree",
                ));
            }
            if !all_groups_nvls {
                return Err(unavailable(
                    "needs NVSwitch generation 3 or later (Hopper, Blackwell)",
                ));
            }
            if let Some(reason) = nvls_refused(fab.nccl, max_g, m) {
                return Err(unavailable(&reason));
            }
            // enqueue.cc (`topoGetAlgoInfo`) skips NVLS for everything but all-reduce where a
            // node holds more ranks than NVLS's 32 heads.
            if op != Op::AllReduce && max_g as usize > tree::NVLS_MAX_HEADS {
                return Err(unavailable(&format!(
                    "NCCL runs NVLS {} only up to {} GPUs in a domain (NCCL_MAX_NVLS_ARITY); \
                     this one has {max_g}",
                    op.cli_name(),
                    tree::NVLS_MAX_HEADS
                )));
            }
            let mut b = LoadBuilder::new(fab, router, routing);
            for group in groups {
                nvls_loads(&mut b, fab, group, op);
            }
            (nvls_rate, nvls_channels) = nvls_fill_inputs(fab, first, m);
            push(b.finish()?, 1.0, true, &mut phases);
        }
        (Op::AllReduce, Algorithm::NvlsTree) => {
            if m < 2 {
                return Err(unavailable(
                    "NVLS-tree joins several NVSwitch domains; one domain uses NVLS",
                ));
            }
            if !all_groups_nvls || !equal_segments(segs0) {
                return Err(unavailable(
                    "needs NVSwitch gen3+ in every node, each with the same number of GPUs",
                ));
            }
            if let Some(reason) = nvls_refused(fab.nccl, max_g, m) {
                return Err(unavailable(&reason));
            }
            let mut b = LoadBuilder::new(fab, router, routing);
            for (_, segs) in gs.each() {
                for s in segs {
                    nvls_loads(&mut b, fab, s.gpus, Op::AllReduce);
                }
                trees(&mut b, fab, segs, 1.0, true)?;
            }
            (nvls_rate, nvls_channels) = nvls_fill_inputs(fab, first, m);
            push(b.finish()?, 1.0, true, &mut phases);
        }
        (Op::AllReduce, Algorithm::Sharp) => {
            if m < 2 {
                return Err(unavailable(
                    "in-network reduction needs GPUs in several nodes",
                ));
            }
            if !equal_segments(segs0) {
                return Err(unavailable("needs the same number of GPUs in every node"));
            }
            let mut b = LoadBuilder::new(fab, router, routing);
            let mut used = TreeUse::default();
            for (gi, (_, segs)) in gs.each().enumerate() {
                for s in segs {
                    if all_groups_nvls {
                        nvls_loads(&mut b, fab, s.gpus, Op::AllReduce);
                    } else {
                        // Reduce-scatter then all-gather inside the node, by ring.
                        let k = s.gpus.len();
                        for i in 0..k {
                            b.intra(s.gpus[i], s.gpus[(i + 1) % k], 2.0 * (g - 1.0) / g);
                        }
                    }
                }
                sharp_trees(&mut b, fab, segs, gi as u32, &mut used)?;
            }
            if all_groups_nvls {
                (nvls_rate, nvls_channels) = nvls_fill_inputs(fab, first, m);
            }
            push(b.finish()?, 1.0, all_groups_nvls, &mut phases);
        }
        (Op::AllReduce, Algorithm::Hierarchical) => {
            if m < 2 || max_g < 2 {
                return Err(unavailable("needs several nodes with several GPUs each"));
            }
            if !equal_segments(segs0) {
                return Err(unavailable("needs the same number of GPUs in every node"));
            }
            // GpuInterconnect-domain reduce-scatter by ring (the same traffic again for the all-gather).
            let mut b = LoadBuilder::new(fab, router, routing);
            for (_, segs) in gs.each() {
                for s in segs {
                    let k = s.gpus.len();
                    for i in 0..k {
                        b.intra(s.gpus[i], s.gpus[(i + 1) % k], 1.0 / g);
                    }
                }
            }
            let intra = b.finish()?;
            let intra_copy = intra.clone();
            push(intra, g - 1.0, false, &mut phases);
            // One inter-domain ring per local GPU index, on that GPU's NIC.
            let mut b = LoadBuilder::new(fab, router, routing);
            for (_, segs) in gs.each() {
                for l in 0..max_g as usize {
                    for i in 0..segs.len() {
                        let (a, c) = (segs[i].gpus[l], segs[(i + 1) % segs.len()].gpus[l]);
                        let (na, nc) = (fab.gpus[a as usize].nic, fab.gpus[c as usize].nic);
                        b.inter(
                            a,
                            c,
                            na,
                            nc,
                            1.0 / (g * mf),
                            CHANNELS_PER_CONNECTION,
                            key(l as u64, i as u64, 30),
                        )?;
                    }
                }
            }
            push(b.finish()?, 2.0 * (mf - 1.0), false, &mut phases);
            push(intra_copy, g - 1.0, false, &mut phases);
        }
        // MLX JACCL's mesh group (mesh.cpp, `MeshGroup::all_reduce`): on three or more ranks
        // above 32 KiB a reduce-scatter then an all-gather, each rank sending 1/n of the array
        // to every peer at once; its all-gather sends each rank's part to every peer.
        (Op::AllReduce, Algorithm::Mesh) | (Op::AllGather, Algorithm::Direct)
            if fab.library == Library::MlxJaccl =>
        {
            let mut b = LoadBuilder::new(fab, router, routing);
            for (group, segs) in gs.each() {
                all_to_all(&mut b, fab, group, segs, routing, &mut notes)?;
            }
            let exchanges = if op == Op::AllReduce { 2.0 } else { 1.0 };
            push(b.finish()?, exchanges, false, &mut phases);
        }
        // Below 32 KiB, or on two ranks, every rank's whole array to every peer in one exchange
        // (`MeshImpl::all_reduce`).
        (Op::AllReduce, Algorithm::Direct) if fab.library == Library::MlxJaccl => {
            let mut b = LoadBuilder::new(fab, router, routing);
            for group in groups {
                for (i, &from) in group.iter().enumerate() {
                    for &to in group.iter().filter(|&&to| to != from) {
                        send(&mut b, fab, from, to, 1.0, key(i as u64, u64::from(to), 42))?;
                    }
                }
            }
            push(b.finish()?, 1.0, false, &mut phases);
        }
        (Op::AllToAll, Algorithm::Direct) => {
            let mut b = LoadBuilder::new(fab, router, routing);
            for (group, segs) in gs.each() {
                all_to_all(&mut b, fab, group, segs, routing, &mut notes)?;
            }
            push(b.finish()?, 1.0, false, &mut phases);
        }
        (Op::SendRecv, Algorithm::Direct) => {
            let mut b = LoadBuilder::new(fab, router, routing);
            for group in groups {
                for i in 0..group.len() {
                    let (a, c) = (group[i], group[(i + 1) % group.len()]);
                    send(&mut b, fab, a, c, 1.0, key(i as u64, u64::from(a), 40))?;
                }
            }
            push(b.finish()?, 1.0, false, &mut phases);
        }
        _ => {
            return Err(unavailable(&format!(
                "{} has no {} variant",
                op.cli_name(),
                algorithm.label()
            )));
        }
    }
    let staging_s_per_byte = if gloo {
        notes.push(
            "Gloo: one TCP connection per peer, 88 % of an Ethernet line rate (measured at 1 \
             and 10 GbE; IP over Thunderbolt at its own measured share); above 10 GbE one \
             core's copying may bind first, which is not modelled"
                .to_string(),
        );
        gloo_staging_s_per_byte(fab, groups)
    } else {
        0.0
    };
    if uses_net && fab.library == Library::Nccl && fab.fastest_socket_gbit_s > 0.0 {
        notes.push(socket_note(fab.fastest_socket_gbit_s));
    }
    if uses_net && fab.library == Library::Nccl && fab.staged_why != 0 {
        notes.push(staging_note(fab.staged_why));
    }
    let shm_inside = intra_hop == Some(HopKind::Pci)
        && groups.iter().flatten().any(|&g| {
            let node = fab.node_of_gpu(g);
            !node.p2p && node.gpu_count > 1
        });
    if fab.library == Library::Nccl && (shm_inside || (uses_net && fab.staged_why != 0)) {
        notes.push(SHM_RATES_NOTE.to_string());
    }
    let efa = fab.efa && uses_net && fab.library == Library::Nccl;
    if efa {
        notes.push(EFA_SIMPLE_NOTE.to_string());
    }
    let gpus_without_ll128 = fab.library == Library::Nccl && {
        let (min, max) = compute_capabilities(fab, groups);
        let off = !release::ll128_by_default(fab.nccl, min, max);
        // Said where LL128 would otherwise run: rings and trees over NVLink or the network.
        if off
            && matches!(algorithm, Algorithm::Ring | Algorithm::Tree)
            && intra_hop != Some(HopKind::Pci)
        {
            notes.push(if min == max {
                format!(
                    "NCCL {} enables LL128 by default only on GPUs it was tested on ({}): LL \
                     and Simple here (sm{min})",
                    fab.nccl,
                    release::ll128_tested_on(fab.nccl)
                )
            } else {
                format!(
                    "NCCL {} leaves LL128 off where the GPUs differ (sm{min} with sm{max}; \
                     from 2.27 only below sm90): LL and Simple here",
                    fab.nccl
                )
            });
        }
        off
    };
    notes.dedup();
    let channels = (fab.library == Library::Nccl
        && matches!(algorithm, Algorithm::Ring | Algorithm::Tree)
        && m == 1
        && intra_hop == Some(HopKind::NvLink))
    .then(|| nvlink_ring_channels(fab, first))
    .flatten();
    let device_chunking = (algorithm == Algorithm::Ring
        && channels.is_some()
        && fab.nccl.before(2, 20, 0))
    .then(|| DeviceChunking {
        simple_chunk_bytes: fab.nccl_buffer.step_bytes() * 4.0,
    });
    let tree_pipeline = match (fab.library, algorithm) {
        (Library::Nccl, Algorithm::Tree) => tree_pipeline(fab, first, m, max_g, intra_hop),
        (Library::Nccl, Algorithm::NvlsTree) => {
            Some(nvls_tree_pipeline(fab, first, m, max_g, nvls_channels))
        }
        _ => None,
    };
    Ok(Plan {
        algorithm,
        library: fab.library,
        phases,
        gpus: n,
        domains: m,
        max_domain_gpus: max_g,
        intra_hop,
        uses_net,
        efa,
        no_net_ll128: uses_net && fab.library == Library::Nccl && fab.net_without_gdr,
        gpus_without_ll128,
        net_extra_us: net_extra,
        nvls_rate,
        nvls_channels,
        channels,
        device_chunking,
        tree_pipeline,
        staging_s_per_byte,
        latency: fab.latency_table(),
        fallback: None,
        notes,
    })
}

/// The lowest and highest CUDA compute capability among the groups' GPUs, as NCCL's tuner
/// takes them (`minCompCap`, `maxCompCap`).
fn compute_capabilities(fab: &Fabric, groups: &[Vec<u32>]) -> (u16, u16) {
    groups
        .iter()
        .flatten()
        .map(|&g| fab.node_of_gpu(g).compute_capability)
        .fold((u16::MAX, 0), |(lo, hi), c| (lo.min(c), hi.max(c)))
}

/// ProcessGroupGloo copies a GPU tensor into pinned host memory, runs the collective on the
/// CPU and copies the result back (ProcessGroupGloo.cpp: `pinnedLike`, then a stream
/// synchronize before the CPU collective): two whole-tensor copies across the GPU's PCIe link
/// at its usable rate, the slowest GPU setting the pace. Apple silicon shares one memory and
/// copies nothing.
fn gloo_staging_s_per_byte(fab: &Fabric, groups: &[Vec<u32>]) -> f64 {
    groups
        .iter()
        .flatten()
        .filter(|&&g| fab.node_of_gpu(g).interconnect != GpuInterconnect::Unified)
        .map(|&g| {
            let up = fab.arc_usable[fab.gpus[g as usize].pcie_up as usize];
            let down = fab.arc_usable[fab.gpus[g as usize].pcie_down as usize];
            1.0 / up.max(1.0) + 1.0 / down.max(1.0)
        })
        .fold(0.0, f64::max)
}

/// Where host-memory (SHM) rates come from, and how far newer hosts are from them.
const SHM_RATES_NOTE: &str = "host-memory (SHM) rates are a PCIe 3.0 host's of 2019 (nccl #384: \
     65 % of the line one way, a quarter of it each way when both run, 3.9 of 15.75 GB/s), \
     scaled to each link's PCIe generation; newer CPUs take both directions better, up to \
     about twice that share on PCIe 5.0 hosts (8 RTX 5090: 28 GB/s busbw, nccl #1639), so \
     times through host memory may be shorter here";

/// Why NCCL stages network data in host memory here, and what that costs.
fn staging_note(why: u8) -> String {
    use super::fabric::staged_why as w;
    let reasons: Vec<&str> = [
        (w::NIC_SETTING, "a NIC has it turned off"),
        (
            w::NO_PEER_GPU,
            "these GPUs, like GeForce cards, are no PCIe peers: no NIC reaches their memory",
        ),
        (
            w::HOST_BRIDGE,
            "GPUs and NICs meet only at the host bridge, past NCCL_NET_GDR_LEVEL's default \
             (PXB: a PCIe switch they share; paths.cc)",
        ),
        (w::SOCKETS, "NCCL's sockets take host buffers only"),
    ]
    .iter()
    .filter(|(bit, _)| why & bit != 0)
    .map(|(_, text)| *text)
    .collect();
    format!(
        "no GPUDirect RDMA ({}): NCCL stages network data in host memory, so each GPU's PCIe \
         link carries it as host-memory (SHM) traffic, and LL128 stays off across the network",
        reasons.join("; ")
    )
}

/// What NCCL's socket transport assumes: TCP at its 1500-byte-frame share of the line, and,
/// on links whose TCP rate passes the slowest single flow published under NCCL, that the
/// host may bind first.
fn socket_note(fastest_gbit_s: f64) -> String {
    let tcp_gbit_s = fastest_gbit_s * eff::TCP;
    let base = format!(
        "NCCL's sockets: TCP carries {:.0} % of the line rate (1500-byte frames, IPv4 and TCP \
         headers), and a message costs {:.0} µs (our estimate: published runs range from about \
         5 µs on bare metal to 40 µs on cloud VMs)",
        eff::TCP * 100.0,
        eff::SOCKET_MESSAGE_US
    );
    if tcp_gbit_s <= eff::SOCKET_FLOW_GBIT_S {
        return base;
    }
    format!(
        "{base}; each channel's traffic is one TCP flow, all driven by the rank's one proxy \
         thread (net_socket.cc), and a flow has been measured as slow as {:.1} Gb/s (NVIDIA/nccl \
         #209): at {} Gb/s the host's CPU may bind before the wire, which is not modelled \
         (NCCL_SOCKET_NTHREADS and NCCL_NSOCKS_PERTHREAD add flows)",
        eff::SOCKET_FLOW_GBIT_S,
        crate::model::units::trim_number(fastest_gbit_s)
    )
}

#[cfg(test)]
mod tests;
