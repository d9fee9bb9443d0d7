//! Line-rate bounds on busbw, from the hardware alone.

use crate::analysis::collective::Op;
use crate::analysis::collective::fabric::{ABSENT_ARC, Fabric, GpuInterconnect};
use crate::analysis::collective::plan::segments;

/// Line-rate bounds on busbw (GB/s): point-to-point algorithms, and in-network reduction.
/// Per GPU: t ≥ factor × S / (its egress line rate) is nccl-tests' own reasoning. Across
/// domains: each domain must also push its share through its network ports.
pub(super) fn busbw_bounds(fab: &Fabric, group: &[u32], op: Op) -> (f64, f64) {
    let n = group.len() as f64;
    let node_net_line = |node: usize| -> f64 {
        let nd = &fab.nodes[node];
        let nic: f64 = fab
            .nics_of(nd)
            .iter()
            .filter_map(|x| x.access)
            .map(|(out, _, _)| fab.arc_line(out as usize))
            .sum();
        if nic > 0.0 {
            nic
        } else {
            fab.other_access_of(nd)
                .iter()
                .map(|(out, _, _)| fab.arc_line(*out as usize))
                .sum()
        }
    };
    let segs = segments(fab, group);
    // Per node of the group, worked out once.
    let mut net_line = vec![f64::NAN; fab.nodes.len()];
    let mut last = u32::MAX;
    for &g in group {
        let node = fab.gpus[g as usize].node;
        if node != last {
            net_line[node as usize] = node_net_line(node as usize);
            last = node;
        }
    }
    let mut gpu_bound = f64::INFINITY;
    for &g in group {
        let gpu = &fab.gpus[g as usize];
        let node = &fab.nodes[gpu.node as usize];
        let mut line = 0.0;
        if gpu.su_up != ABSENT_ARC {
            line += fab.arc_line(gpu.su_up as usize);
        }
        if matches!(
            node.interconnect,
            GpuInterconnect::Pcie | GpuInterconnect::BridgePairs
        ) && gpu.pcie_up != ABSENT_ARC
        {
            line += fab.arc_line(gpu.pcie_up as usize);
        }
        if segs.len() > 1 || node.interconnect == GpuInterconnect::Unified {
            line += net_line[gpu.node as usize] / f64::from(node.gpu_count.max(1));
        }
        gpu_bound = gpu_bound.min(line);
    }
    let factor = op.busbw_factor(group.len() as u32);
    let mut p2p = gpu_bound;
    let mut in_net = factor * gpu_bound;
    if segs.len() > 1 {
        let m = segs.len() as f64;
        for s in &segs {
            // Each node of the domain once (its GPUs are consecutive).
            let mut l = 0.0;
            let mut last = u32::MAX;
            for &g in s.gpus {
                let nd = fab.gpus[g as usize].node;
                if nd != last {
                    l += net_line[nd as usize];
                    last = nd;
                }
            }
            let gs = s.gpus.len() as f64;
            let dom = match op {
                Op::AllReduce => factor / (2.0 * (m - 1.0) / m) * l,
                Op::AllGather | Op::ReduceScatter => factor / ((m - 1.0) / m) * l,
                Op::AllToAll => (n - 1.0) * l / (gs * (n - gs)).max(1.0),
                Op::Broadcast | Op::Reduce | Op::SendRecv => l,
            };
            p2p = p2p.min(dom);
            in_net = in_net.min(factor * l);
        }
    }
    (p2p / 1e9, in_net / 1e9)
}
