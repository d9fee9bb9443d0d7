//! A plan's latency by NCCL's model (and MLX's), with the design's calibrated intra-node hops.

use crate::analysis::collective::fabric::{Fabric, Resource};
use crate::analysis::collective::latency::{
    self as lat, HopKind, LatencyTable, Protocol, TableAlgo, hop_latency,
};
use crate::analysis::collective::plan::{Groups, Plan};
use crate::analysis::collective::{Algorithm, Library, Op};
use crate::model::{CalibratedProtocol, Calibration, Design, LinkTech};

/// Calibrated intra-node hop latencies of one plan (µs) per hop kind and protocol: for LL the
/// figure of `ll_hop_latency`, for LL128 and Simple a ring step's figure of that protocol.
/// None keeps NCCL's constants exactly.
#[derive(Debug, Clone, Copy, PartialEq, Default)]
pub(crate) struct IntraHops {
    /// Indexed by `Protocol::index`.
    pub nvlink: [Option<f64>; 3],
    pub pci: [Option<f64>; 3],
    /// LL128's rate as a share of Simple's over the plan's NVLink hops, where calibrated
    /// (`TechCalibration::ll128_share`); None keeps the line format's 120/128.
    pub ll128_share: Option<f64>,
}

/// A calibration's figure of one protocol on one technology: LL's own latency, or the
/// protocol's own where the calibration sets one.
fn calibrated(cal: &Calibration, tech: LinkTech, p: Protocol) -> Option<f64> {
    match p {
        Protocol::Ll => cal.latency_us(tech),
        Protocol::Ll128 => cal.protocol_latency_us(tech, CalibratedProtocol::Ll128),
        Protocol::Simple => cal.protocol_latency_us(tech, CalibratedProtocol::Simple),
    }
}

impl IntraHops {
    /// The fitted hop latencies a plan's intra-node steps take from the design's
    /// calibration. NVLink hops are NVSwitch ports (`NvLink`) or bridges (`NvLinkBridge`):
    /// the plan's loaded arcs tell which it crosses, and with both the slower one counts, as
    /// NCCL's `intra_hw` keeps the worst hop. Free when nothing intra-node is calibrated.
    pub(crate) fn of(fab: &Fabric, design: &Design, plan: &Plan) -> IntraHops {
        let Some(cal) = design.calibration.as_ref() else {
            return IntraHops::default();
        };
        let nvlink_techs = [LinkTech::NvLink, LinkTech::NvLinkBridge];
        let calibrated_nvlink = nvlink_techs.iter().any(|&t| {
            cal.ll128_share(t).is_some()
                || Protocol::ALL
                    .iter()
                    .any(|&p| calibrated(cal, t, p).is_some())
        });
        let mut hops = IntraHops {
            nvlink: [None; 3],
            pci: Protocol::ALL.map(|p| calibrated(cal, LinkTech::Pcie, p)),
            ll128_share: None,
        };
        if calibrated_nvlink {
            let (mut via_switch, mut via_bridge) = (false, false);
            for phase in &plan.phases {
                for (a, &load) in phase.loads.iter().enumerate() {
                    if load > 0.0 && fab.arc_nvlink[a] {
                        match fab.arc_resource(a) {
                            Resource::ScaleUp { .. } => via_switch = true,
                            Resource::Bridge { .. } => via_bridge = true,
                            _ => {}
                        }
                    }
                }
            }
            for p in Protocol::ALL {
                let (switch, bridge) = (
                    calibrated(cal, LinkTech::NvLink, p),
                    calibrated(cal, LinkTech::NvLinkBridge, p),
                );
                let builtin = builtin_hop(HopKind::NvLink, p);
                let used = [
                    (via_switch, switch.unwrap_or(builtin)),
                    (via_bridge, bridge.unwrap_or(builtin)),
                ];
                let calibrated_used =
                    (via_switch && switch.is_some()) || (via_bridge && bridge.is_some());
                hops.nvlink[p.index()] = calibrated_used.then(|| {
                    used.iter()
                        .filter(|(u, _)| *u)
                        .map(|&(_, l)| l)
                        .fold(f64::NEG_INFINITY, f64::max)
                });
            }
            // The slower hop sets LL128's rate, as the slower hop sets its step time.
            let (switch, bridge) = (
                cal.ll128_share(LinkTech::NvLink),
                cal.ll128_share(LinkTech::NvLinkBridge),
            );
            if (via_switch && switch.is_some()) || (via_bridge && bridge.is_some()) {
                let builtin = crate::analysis::collective::efficiency::LL128_PAYLOAD;
                hops.ll128_share = [(via_switch, switch), (via_bridge, bridge)]
                    .iter()
                    .filter(|(u, _)| *u)
                    .map(|&(_, s)| s.unwrap_or(builtin).min(builtin))
                    .reduce(f64::min);
            }
        }
        hops
    }

    /// NCCL's per-step constant for `hop_kind`, moved by the calibrated hop latency: the
    /// ring and tree columns of a protocol shift by the µs that protocol's figure moved,
    /// since a hop's signalling delay adds to both algorithms' synchronisation cost alike;
    /// a protocol the calibration does not set moves with LL. NVLS and CollNet columns keep
    /// NCCL's figures.
    /// Floored at zero. Network hops are not intra-node and keep NCCL's figure.
    /// The modelled release's tables; `hop_latency_in` takes a release's.
    pub(crate) fn hop_latency(&self, hop_kind: HopKind, algo: TableAlgo, p: Protocol) -> f64 {
        self.hop_latency_in(&lat::MODELLED, hop_kind, algo, p)
    }

    /// `hop_latency` in a release's tables: a calibrated figure still sets a ring step's
    /// latency exactly, and the other columns move by as much from that release's figures.
    pub(crate) fn hop_latency_in(
        &self,
        table: &LatencyTable,
        hop_kind: HopKind,
        algo: TableAlgo,
        p: Protocol,
    ) -> f64 {
        let base = table.hop(hop_kind, algo, p);
        let fitted = match hop_kind {
            HopKind::NvLink => &self.nvlink,
            HopKind::Pci => &self.pci,
            HopKind::Net => return base,
        };
        // A calibrated figure is a ring or tree step's: NVLS and CollNet steps are multicast
        // and in-network operations whose cost it does not measure, and keep NCCL's.
        if !matches!(algo, TableAlgo::Ring | TableAlgo::Tree) {
            return base;
        }
        let ring = |p: Protocol| table.hop(hop_kind, TableAlgo::Ring, p);
        let shift = match (fitted[p.index()], fitted[Protocol::Ll.index()]) {
            (Some(own), _) => own - ring(p),
            (None, Some(ll)) => ll - ring(Protocol::Ll),
            (None, None) => return base,
        };
        (base + shift).max(0.0)
    }
}

/// The per-step latency of a ring step of `p` over the intra-node technology `tech` under
/// `cal`: the protocol's own calibrated figure, or NCCL's moved as far as LL's moved (what
/// `IntraHops::hop_latency` charges a plan crossing only that technology). None for network
/// technologies.
pub(crate) fn calibrated_ring_step_us(
    cal: &Calibration,
    tech: LinkTech,
    p: Protocol,
) -> Option<f64> {
    let figures = Protocol::ALL.map(|q| calibrated(cal, tech, q));
    let (hop_kind, hops) = match tech {
        // A protocol's own figure is a ring step's, exactly.
        LinkTech::NvLink | LinkTech::NvLinkBridge | LinkTech::Pcie
            if figures[p.index()].is_some() =>
        {
            return figures[p.index()];
        }
        LinkTech::NvLink | LinkTech::NvLinkBridge => (
            HopKind::NvLink,
            IntraHops {
                nvlink: figures,
                pci: [None; 3],
                ll128_share: None,
            },
        ),
        LinkTech::Pcie => (
            HopKind::Pci,
            IntraHops {
                nvlink: [None; 3],
                pci: figures,
                ll128_share: None,
            },
        ),
        _ => return None,
    };
    Some(hops.hop_latency(hop_kind, TableAlgo::Ring, p))
}

/// NCCL's per-step figure of a ring step of `p` over `hop_kind`: what a calibrated figure
/// of that protocol replaces.
fn builtin_hop(hop_kind: HopKind, p: Protocol) -> f64 {
    hop_latency(hop_kind, TableAlgo::Ring, p)
}

/// MLX's step latency: a ring takes 2(n − 1) steps for an all-reduce and n − 1 for an
/// all-gather, each one message over the worst network path (its stack, switch and cable
/// latency); JACCL's mesh takes two (a reduce-scatter, then an all-gather, each sent to every
/// peer at once); a direct exchange takes one.
fn mlx_latency_us(plan: &Plan, op: Op) -> f64 {
    let n = f64::from(plan.gpus);
    let steps = match (plan.algorithm, op) {
        (Algorithm::Ring | Algorithm::BidirectionalRing, Op::AllReduce) => 2.0 * (n - 1.0),
        (Algorithm::Ring | Algorithm::BidirectionalRing, _) => n - 1.0,
        (Algorithm::Mesh, _) => 2.0,
        _ => 1.0,
    };
    steps * plan.net_extra_us
}

/// Gloo's step latency, each step one message over the worst network path. Its rings keep
/// two segments in flight (allreduce.cc: sends posted on iterations 0 and 1 are awaited on 2
/// and 3), so a wait covers two iterations: an all-reduce's reduce-scatter and all-gather
/// each run (n − 1)·k + 2 iterations with k ≥ 2 segments per rank, 2n message times for small
/// buffers, and larger segments hide it behind their transfer. All-gather (allgather.cc): two
/// halves per rank over 2(n − 1) iterations, n − 1 message times. Reduce: a reduce-scatter's
/// n, then a gather to the root. Broadcast: ⌈log2 n⌉ binomial rounds. All-to-all posts every
/// exchange at once: one.
fn gloo_latency_us(plan: &Plan, op: Op) -> f64 {
    let n = f64::from(plan.gpus);
    let steps = match (plan.algorithm, op) {
        (Algorithm::Ring, Op::AllReduce | Op::ReduceScatter) => 2.0 * n,
        // reduce.cc: the reduce-scatter's 2n iterations, then one gather to the root.
        (Algorithm::Ring, Op::Reduce) => n + 1.0,
        (Algorithm::Ring, _) => n - 1.0,
        (Algorithm::Tree, _) => n.log2().ceil(),
        _ => 1.0,
    };
    steps * plan.net_extra_us
}

/// A floor under any time of `algorithm` on groups of `n` GPUs across several domains: its
/// latency with the cheapest protocol allowed, with no network path latency of its own
/// (`net_extra_us` is never negative) and intra-domain steps at the network floor (across
/// domains `latency_us` never charges less).
pub(super) fn latency_floor_us(
    algorithm: Algorithm,
    op: Op,
    forced: Option<Protocol>,
    gs: &Groups,
    n: u32,
    library: Library,
    latency: &'static LatencyTable,
) -> f64 {
    let segs = &gs.segs[0];
    let skeleton = Plan {
        algorithm,
        library,
        phases: Vec::new(),
        gpus: n,
        domains: segs.len() as u32,
        max_domain_gpus: segs.iter().map(|s| s.gpus.len() as u32).max().unwrap_or(0),
        intra_hop: None,
        uses_net: false,
        // A floor over every protocol stays a floor where EFA allows only Simple.
        efa: false,
        no_net_ll128: false,
        gpus_without_ll128: false,
        net_extra_us: 0.0,
        nvls_rate: 0.0,
        nvls_channels: 0.0,
        channels: None,
        device_chunking: None,
        tree_pipeline: None,
        staging_s_per_byte: 0.0,
        latency,
        fallback: None,
        notes: Vec::new(),
    };
    let hops = IntraHops::default();
    Protocol::ALL
        .into_iter()
        .filter(|p| forced.is_none_or(|f| f == *p))
        .map(|p| latency_us(&skeleton, &hops, op, p, 0.0))
        .fold(f64::INFINITY, f64::min)
}

/// Latency by NCCL's model: base + steps × per-step latency by hop type (intra-node hops as
/// calibrated, see `IntraHops`), plus our stack and switch latency on network steps. MLX has
/// none of NCCL's constants: each ring step is one send and receive over the network path.
/// `bytes` only sizes NVLS' pipeline fill (`nvls_fill_us`).
pub(super) fn latency_us(plan: &Plan, hops: &IntraHops, op: Op, p: Protocol, bytes: f64) -> f64 {
    match plan.library {
        Library::MlxRing | Library::MlxJaccl => return mlx_latency_us(plan, op),
        Library::Gloo => return gloo_latency_us(plan, op),
        Library::Nccl => {}
    }
    let n = f64::from(plan.gpus);
    let m = f64::from(plan.domains);
    let g = f64::from(plan.max_domain_gpus);
    let multi = plan.domains > 1;
    let table = plan.latency;
    let intra = |algo: TableAlgo| -> f64 {
        let l = plan.intra_hop.map_or(0.0, |hop_kind| {
            hops.hop_latency_in(table, hop_kind, algo, p)
        });
        if multi {
            l.max(lat::net_overhead(p))
        } else {
            l
        }
    };
    // "With ppn=1 latencies are fully exposed, use the Tree network latency" (tuning.cc,
    // `ncclTopoTuneModel`, 2.25.1 to 2.30.7): one GPU per node takes the tree's network
    // column whatever the algorithm.
    let one_per_node = multi && plan.max_domain_gpus == 1;
    let inter = |algo: TableAlgo| {
        let column = if one_per_node { TableAlgo::Tree } else { algo };
        table.hop(HopKind::Net, column, p) + plan.net_extra_us
    };
    let fill = if plan.nvls_rate > 0.0 {
        lat::nvls_fill_us(plan.nvls_rate, plan.nvls_channels, bytes)
    } else {
        0.0
    };
    match plan.algorithm {
        Algorithm::Ring | Algorithm::BidirectionalRing => {
            let (steps, inter_steps) = match op {
                Op::AllReduce => (2.0 * (n - 1.0), if multi { 2.0 * (m - 1.0) } else { 0.0 }),
                _ => (n - 1.0, if multi { m - 1.0 } else { 0.0 }),
            };
            table.base(TableAlgo::Ring, p)
                + (steps - inter_steps) * intra(TableAlgo::Ring)
                + inter_steps * inter(TableAlgo::Ring)
        }
        Algorithm::Tree => {
            if multi {
                table.base(TableAlgo::Tree, p)
                    + 2.0
                        * ((g - 1.0) * intra(TableAlgo::Tree)
                            + log2_ceil(plan.domains) * inter(TableAlgo::Tree))
            } else {
                table.base(TableAlgo::Tree, p) + 2.0 * (n - 1.0) * intra(TableAlgo::Tree)
            }
        }
        Algorithm::Nvls => {
            table.base(TableAlgo::Nvls, p)
                + hops.hop_latency_in(table, HopKind::NvLink, TableAlgo::Nvls, p)
                + fill
        }
        Algorithm::NvlsTree => {
            let net_steps = if table.nvls_tree_linear {
                2.0 * (m - 1.0)
            } else {
                2.0 * log2_ceil(plan.domains)
            };
            table.base(TableAlgo::NvlsTree, p)
                + hops.hop_latency_in(table, HopKind::NvLink, TableAlgo::NvlsTree, p)
                + net_steps * inter(TableAlgo::NvlsTree)
                + fill
        }
        Algorithm::Sharp => {
            let intra_hop = plan.intra_hop.unwrap_or(HopKind::NvLink);
            table.base(TableAlgo::CollNetDirect, p)
                + 2.0
                    * ((g - 1.0).min(1.0)
                        * hops.hop_latency_in(table, intra_hop, TableAlgo::CollNetDirect, p)
                        + (g - 1.0) * 0.4)
                + inter(TableAlgo::CollNetDirect)
                + fill
        }
        Algorithm::Hierarchical => {
            table.base(TableAlgo::Ring, p)
                + 2.0 * (g - 1.0) * intra(TableAlgo::Ring)
                + 2.0 * (m - 1.0) * inter(TableAlgo::Ring)
        }
        // The mesh is MLX's: NCCL never plans it.
        Algorithm::Direct | Algorithm::Mesh => {
            let hop = if plan.uses_net {
                inter(TableAlgo::Ring)
            } else {
                intra(TableAlgo::Ring)
            };
            let base = table.base(TableAlgo::Ring, p) + hop;
            if op == Op::AllToAll {
                let local = (g - 1.0).max(0.0) * intra(TableAlgo::Ring);
                let remote = (n - g).max(0.0) * lat::net_overhead(p);
                base + (local + remote) / lat::P2P_IN_FLIGHT
            } else {
                base
            }
        }
    }
}

/// `ceil(log2(m))` for m ≥ 1.
pub(crate) fn log2_ceil(m: u32) -> f64 {
    if m <= 1 {
        0.0
    } else {
        f64::from(32 - (m - 1).leading_zeros())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::analysis::collective::latency::builtin_intra_hop_latency_us;

    #[test]
    fn a_calibrated_hop_shifts_every_protocol_of_its_kind_alike() {
        let hops = IntraHops {
            nvlink: [Some(0.9), None, None],
            pci: [Some(0.0), None, None],
            ll128_share: None,
        };
        let close = |a: f64, b: f64| (a - b).abs() < 1e-12;
        // NVLink: LL 0.6 → 0.9, so Simple 3.4 → 3.7.
        assert!(close(
            hops.hop_latency(HopKind::NvLink, TableAlgo::Ring, Protocol::Ll),
            0.9
        ));
        assert!(close(
            hops.hop_latency(HopKind::NvLink, TableAlgo::Ring, Protocol::Simple),
            3.7
        ));
        // NVLS is a multicast through the switch, not a ring step: NCCL's 25 stays.
        assert!(close(
            hops.hop_latency(HopKind::NvLink, TableAlgo::Nvls, Protocol::Simple),
            25.0
        ));
        // PCIe: LL 1.0 → 0, Tree LL128 1.9 → 0.9; columns NCCL leaves at 0 stay at 0.
        assert!(close(
            hops.hop_latency(HopKind::Pci, TableAlgo::Ring, Protocol::Ll),
            0.0
        ));
        assert!(close(
            hops.hop_latency(HopKind::Pci, TableAlgo::Tree, Protocol::Ll128),
            0.9
        ));
        assert!(close(
            hops.hop_latency(HopKind::Pci, TableAlgo::Nvls, Protocol::Simple),
            0.0
        ));
        // The network is not an intra-node hop.
        assert_eq!(
            hops.hop_latency(HopKind::Net, TableAlgo::Ring, Protocol::Ll),
            2.7
        );
        // Uncalibrated: NCCL's figures exactly.
        let none = IntraHops::default();
        assert_eq!(
            none.hop_latency(HopKind::NvLink, TableAlgo::Tree, Protocol::Ll128),
            1.25
        );
        assert_eq!(
            builtin_intra_hop_latency_us(LinkTech::NvLinkBridge),
            Some(0.6)
        );
        assert_eq!(builtin_intra_hop_latency_us(LinkTech::Pcie), Some(1.0));
        assert_eq!(builtin_intra_hop_latency_us(LinkTech::InfiniBand), None);
    }

    #[test]
    fn a_protocol_of_its_own_moves_its_columns_only() {
        // NVLink: LL 0.6 → 0.9 (+0.3); LL128 set on its own, ring 1.9 → 7.0 (+5.1).
        let hops = IntraHops {
            nvlink: [Some(0.9), Some(7.0), None],
            pci: [None; 3],
            ll128_share: None,
        };
        let close = |a: f64, b: f64| (a - b).abs() < 1e-12;
        assert!(close(
            hops.hop_latency(HopKind::NvLink, TableAlgo::Ring, Protocol::Ll128),
            7.0
        ));
        // Tree LL128 1.25 + 5.1.
        assert!(close(
            hops.hop_latency(HopKind::NvLink, TableAlgo::Tree, Protocol::Ll128),
            6.35
        ));
        // Simple has no figure of its own: it moves with LL, ring 3.4 + 0.3.
        assert!(close(
            hops.hop_latency(HopKind::NvLink, TableAlgo::Ring, Protocol::Simple),
            3.7
        ));
        // Only a protocol figure, no LL one: the other protocols keep NCCL's constants.
        let only_simple = IntraHops {
            nvlink: [None, None, Some(1.4)],
            pci: [None; 3],
            ll128_share: None,
        };
        assert!(close(
            only_simple.hop_latency(HopKind::NvLink, TableAlgo::Ring, Protocol::Simple),
            1.4
        ));
        // NVLS is not a ring step: it keeps NCCL's 25.
        assert!(close(
            only_simple.hop_latency(HopKind::NvLink, TableAlgo::Nvls, Protocol::Simple),
            25.0
        ));
        // Tree Simple 4.0 − 2.0.
        assert!(close(
            only_simple.hop_latency(HopKind::NvLink, TableAlgo::Tree, Protocol::Simple),
            2.0
        ));
        assert!(close(
            only_simple.hop_latency(HopKind::NvLink, TableAlgo::Ring, Protocol::Ll),
            0.6
        ));
    }

    #[test]
    fn log2_ceil_values() {
        assert_eq!(log2_ceil(1), 0.0);
        assert_eq!(log2_ceil(2), 1.0);
        assert_eq!(log2_ceil(3), 2.0);
        assert_eq!(log2_ceil(8), 3.0);
        assert_eq!(log2_ceil(9), 4.0);
    }
}
