//! NVLS: the NVSwitch reduces, so each GPU's port carries its share once each way.

use super::loads::LoadBuilder;
use super::tree::NVLS_MAX_HEADS;
use crate::analysis::collective::Op;
use crate::analysis::collective::fabric::{ABSENT_ARC, Fabric, GpuInterconnect};
use crate::analysis::collective::latency::HopKind;

pub(crate) fn all_nvls(fab: &Fabric, group: &[u32]) -> bool {
    group.iter().all(|&g| {
        let n = fab.node_of_gpu(g);
        matches!(n.interconnect, GpuInterconnect::NvSwitch { nvls: true })
            && n.arch.nvls_efficiency() > 0.0
    })
}

pub(super) fn nvls_loads(b: &mut LoadBuilder, fab: &Fabric, seg: &[u32], op: Op) {
    let n = seg.len() as f64;
    // At most 32 GPUs of a domain are NVLS heads (`NCCL_MAX_NVLS_ARITY`); only heads reduce
    // (`connect.cc` gives the others no head rank), each its 1/heads of the data. We take the
    // first GPUs of the domain as the heads.
    let heads = seg.len().min(NVLS_MAX_HEADS);
    for (i, &g) in seg.iter().enumerate() {
        let share = if i < heads { 1.0 / heads as f64 } else { 0.0 };
        let (up, down) = match op {
            // The switch reads every GPU's data for the heads' reductions; a head stores its
            // share of the result, which the switch multicasts back to every GPU, and
            // receives its share of the reduction.
            Op::AllReduce => (1.0 + share, 1.0 + share),
            Op::ReduceScatter => (1.0, 1.0 / n),
            _ => (1.0 / n, 1.0),
        };
        let gpu = &fab.gpus[g as usize];
        b.add_arc(gpu.su_up, up);
        b.add_arc(gpu.su_down, down);
    }
    b.intra_hop = Some(HopKind::NvLink);
}

pub(super) fn nvls_gpu_rate(fab: &Fabric, group: &[u32]) -> f64 {
    group
        .iter()
        .map(|&g| {
            let gpu = &fab.gpus[g as usize];
            let node = fab.node_of_gpu(g);
            let up = if gpu.su_up == ABSENT_ARC {
                0.0
            } else {
                fab.arc_usable[gpu.su_up as usize]
            };
            up * node.arch.nvls_efficiency()
        })
        .fold(f64::INFINITY, f64::min)
}
