//! Findings about the job as a whole: a step that spends longer waiting on communication than
//! computing, whatever the fabric's contention (a slow link queues nothing, yet paces the
//! step). The network rules in `collective::advice` cannot see this: they know no compute.

use super::JobOutcome;
use crate::analysis::collective::{CommKind, WorkloadResult};
use crate::analysis::finding::{Finding, Severity};
use crate::model::units::time_text;
use crate::model::{Design, DeviceId, DeviceKind, LinkId, ScaleUp};

/// Adds the job's findings to `advice`, then sorts it as the advice is sorted (most severe
/// first, then by code).
pub fn add_job_advice(advice: &mut Vec<Finding>, design: &Design, job: &JobOutcome) {
    let finding = match job {
        JobOutcome::Training { step, .. } => {
            training_waits(design, step.compute_ms, &step.exposed, &step.comm, step.mfu)
        }
        JobOutcome::Serving(r) => decode_waits(design, r.decode_step_ms, r.decode_comm_ms),
    };
    advice.extend(finding);
    advice.sort_by(|a, b| a.severity.cmp(&b.severity).then(a.code.cmp(b.code)));
}

/// The step's exposed communication beyond its compute: the largest part named, with the
/// links it loads most and what shrinks it.
fn training_waits(
    design: &Design,
    compute_ms: Option<f64>,
    exposed: &[super::training::StepPart],
    comm: &WorkloadResult,
    mfu: Option<f64>,
) -> Option<Finding> {
    let compute_ms = compute_ms?;
    let waiting: f64 = exposed.iter().map(|p| p.ms).sum();
    if waiting <= compute_ms {
        return None;
    }
    let largest = exposed.iter().max_by(|a, b| a.ms.total_cmp(&b.ms))?;
    let kind = largest.kind;
    let part = comm.components.iter().find(|c| c.kind == kind);
    let links: Vec<LinkId> = part
        .map(|c| c.bottleneck.iter().filter_map(|b| b.link).take(4).collect())
        .unwrap_or_default();
    let busiest = part
        .and_then(|c| c.bottleneck.first())
        .map_or_else(String::new, |b| format!("; busiest: {}", b.label));
    let mfu = mfu.map_or_else(String::new, |m| format!(", MFU {:.0} %", m * 100.0));
    let suggestion = match kind {
        CommKind::TensorParallel if comm.mapping.tp_crosses_domains => {
            "keep each tensor-parallel group inside one node or NVLink domain, with pipeline \
             stages across them; `workload --search` (the sidebar's Find the fastest layout) \
             tries the layouts that fit"
        }
        CommKind::TensorParallel if on_nvswitch(design) => {
            "fewer GPUs per tensor-parallel group, with pipeline stages or more replicas \
             instead (the GPUs already share NVSwitch); `workload --search` (the sidebar's Find \
             the fastest layout) tries the layouts that fit"
        }
        CommKind::TensorParallel => {
            "fewer GPUs per tensor-parallel group, with pipeline stages instead, or GPUs joined \
             by NVLink (data-center GPUs on NVSwitch; GeForce cards since the RTX 40 series have \
             no NVLink); `workload --search` (the sidebar's Find the fastest layout) tries the \
             layouts that fit"
        }
        CommKind::ExpertAllToAll => {
            "keep expert parallelism inside NVLink domains, or more network bandwidth per GPU; \
             `workload --search` tries the layouts that fit"
        }
        CommKind::Pipeline => {
            "fewer pipeline stages across nodes, or more network bandwidth per GPU"
        }
        CommKind::WeightGather => {
            "ZeRO 1 or 2 where the weights fit in each GPU (ZeRO-3 gathers every layer's \
             weights twice per micro-batch), larger micro-batches (fewer gathers per token), or \
             faster links between the replicas (NVLink, or x16 slots on PCIe)"
        }
        _ => {
            "more network bandwidth per GPU (NICs per node), a larger global batch per step, \
             or fewer data-parallel replicas; `workload --search` tries the layouts that fit"
        }
    };
    Some(Finding {
        severity: Severity::Warning,
        code: "communication-bound",
        message: format!(
            "the step waits on communication longer than it computes: {} exposed against {} \
             of compute{mfu}; most of it {} ({}){busiest}",
            time_text(waiting * 1e3),
            time_text(compute_ms * 1e3),
            largest.name,
            time_text(largest.ms * 1e3),
        ),
        devices: nodes(design),
        links,
        suggestion: suggestion.into(),
    })
}

/// A decode step whose all-reduces take longer than reading the weights and cache.
fn decode_waits(design: &Design, step_ms: Option<f64>, comm_ms: f64) -> Option<Finding> {
    let step_ms = step_ms?;
    let reading_ms = step_ms - comm_ms;
    if comm_ms <= reading_ms {
        return None;
    }
    Some(Finding {
        severity: Severity::Warning,
        code: "communication-bound",
        message: format!(
            "each decode step waits on its all-reduces longer than it reads memory: {} of \
             communication against {} of weights and cache",
            time_text(comm_ms * 1e3),
            time_text(reading_ms * 1e3),
        ),
        devices: nodes(design),
        links: Vec::new(),
        suggestion: if on_nvswitch(design) {
            "fewer GPUs per replica (less tensor parallelism, more replicas) where the model \
             fits, with quantized weights if it would not (--weights, or the sidebar's weights); \
             the GPUs already share NVSwitch; `workload --serving --search` tries the splits"
        } else if all_unified_memory(design) {
            "fewer Macs per replica where the model fits, with quantized weights if it would \
             not (--weights, or the sidebar's weights), or Thunderbolt 5 with RDMA (MLX's \
             JACCL: a few µs per message, not a TCP exchange) and every pair of Macs cabled \
             (JACCL's mesh: one message per all-reduce); `workload --serving --search` tries \
             the splits"
        } else {
            "fewer GPUs per replica (less tensor parallelism, more replicas) where the model \
             fits, with quantized weights if it would not (--weights, or the sidebar's weights), \
             or GPUs joined by NVLink (data-center GPUs on NVSwitch; GeForce cards since the \
             RTX 40 series have no NVLink); `workload --serving --search` tries the splits"
        }
        .into(),
    })
}

/// The design has GPU nodes and every one's scale-up is of the kind `is`.
fn every_node(design: &Design, is: impl Fn(&ScaleUp) -> bool) -> bool {
    let mut nodes = design
        .devices
        .iter()
        .filter_map(|d| d.kind.as_node())
        .peekable();
    nodes.peek().is_some() && nodes.all(|n| is(&n.scale_up))
}

/// Every GPU node's GPUs share NVSwitch: NVLink is no remedy to offer.
fn on_nvswitch(design: &Design) -> bool {
    every_node(design, |s| matches!(s, ScaleUp::NvSwitch { .. }))
}

/// Every GPU node is Apple silicon (unified memory): NVLink is no remedy to offer.
fn all_unified_memory(design: &Design) -> bool {
    every_node(design, |s| matches!(s, ScaleUp::UnifiedMemory))
}

fn nodes(design: &Design) -> Vec<DeviceId> {
    design
        .devices
        .iter()
        .filter(|d| matches!(d.kind, DeviceKind::GpuNode(_)))
        .map(|d| d.id)
        .collect()
}
