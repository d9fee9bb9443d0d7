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
    match job {
        JobOutcome::Training { step, .. } => {
            advice.extend(training_waits(
                design,
                step.compute_ms,
                &step.exposed,
                &step.comm,
                step.mfu,
            ));
            advice.extend(little_headroom(
                design,
                step.memory_gib_per_gpu,
                step.gpu_memory_gib,
            ));
            thunderbolt_in_the_step(advice, step);
        }
        JobOutcome::Serving(r) => {
            advice.extend(decode_waits(design, r.decode_step_ms, r.decode_comm_ms));
        }
    }
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

/// The network rules warn of Thunderbolt under any training that sends gradients across it,
/// not knowing the step. Where the step is known, its own figure decides: a step that waits
/// on communication longer than it computes is already warned of (`communication-bound`);
/// otherwise the Thunderbolt finding is a note that says how much of the step is exposed.
fn thunderbolt_in_the_step(advice: &mut [Finding], step: &super::training::TrainingStep) {
    let (Some(compute_ms), Some(step_ms), Some(exposed_ms)) =
        (step.compute_ms, step.step_ms, step.exposed_comm_ms)
    else {
        return;
    };
    let Some(finding) = advice.iter_mut().find(|f| f.code == "thunderbolt") else {
        return;
    };
    if exposed_ms > compute_ms || step_ms <= 0.0 {
        return;
    }
    finding.severity = Severity::Info;
    finding.message.push_str(&format!(
        "; this job's step leaves {} of communication exposed, {} of its {}",
        time_text(exposed_ms * 1e3),
        share_text(exposed_ms / step_ms),
        time_text(step_ms * 1e3),
    ));
}

/// A share as a percentage with the digits a small one needs ("0.01 %", "4.2 %", "37 %").
fn share_text(share: f64) -> String {
    let percent = share * 100.0;
    if percent >= 10.0 {
        format!("{percent:.0} %")
    } else if percent >= 1.0 {
        format!("{percent:.1} %")
    } else if percent >= 0.01 {
        format!("{percent:.2} %")
    } else {
        "under 0.01 %".to_string()
    }
}

/// What PyTorch's caching allocator held beyond the tensors it had allocated, at the peak of
/// published runs: Answer.AI's Llama 2 7B LoRA on 2 × RTX 3090 (AnswerDotAI/fsdp_qlora
/// benchmarks_03_2024.md at 4cd69234) reserved 10.22 GiB for 9.16 allocated and 10.24 for
/// 8.28, 11.6 % and 23.7 % more. The smaller is the floor taken here.
const ALLOCATOR_RESERVE_SHARE: f64 = 10.22 / 9.16 - 1.0;
/// The other run's share, quoted beside the floor.
const ALLOCATOR_RESERVE_SHARE_HIGH: f64 = 10.24 / 8.28 - 1.0;

/// A training layout whose free memory is less than the allocator's reserve over the
/// modelled tensors alone (before the CUDA context and NCCL's buffers, which the model
/// leaves out too): it fits on paper and may not run. Not said of unified memory, whose
/// budget is the system's and not PyTorch's CUDA allocator's.
fn little_headroom(design: &Design, need_gib: f64, have_gib: f64) -> Option<Finding> {
    let free = have_gib - need_gib;
    let reserve = short_of_reserve(design, need_gib, have_gib)?;
    Some(Finding {
        severity: Severity::Warning,
        code: "little-memory-headroom",
        message: format!(
            "the layout leaves {free:.1} of {have_gib:.0} GiB per GPU free, less than \
             PyTorch's allocator held beyond its tensors in published runs ({:.0} to {:.0} %: \
             {reserve:.1} GiB here), before the CUDA context and NCCL's buffers: it may run \
             out of memory",
            ALLOCATOR_RESERVE_SHARE * 100.0,
            ALLOCATOR_RESERVE_SHARE_HIGH * 100.0
        ),
        devices: nodes(design),
        links: Vec::new(),
        suggestion: "a layout with room to spare: a smaller micro-batch, full recomputation, a \
                     higher ZeRO stage or more GPUs per replica; `workload --search` (the \
                     sidebar's Find the fastest layout) shows each layout's free memory"
            .into(),
    })
}

/// The allocator's reserve over `need_gib` of tensors (GiB), when the `have_gib` a GPU holds
/// leaves less than it free; None when the layout has room, or on unified memory.
pub(super) fn short_of_reserve(design: &Design, need_gib: f64, have_gib: f64) -> Option<f64> {
    let reserve = need_gib * ALLOCATOR_RESERVE_SHARE;
    let free = have_gib - need_gib;
    (!all_unified_memory(design) && free < reserve).then_some(reserve)
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
             JACCL: about 25 µs per message, not a ~300 µs TCP exchange) and every pair of Macs cabled \
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

#[cfg(test)]
mod tests {
    use super::*;
    use crate::generate::{Template, TemplateSpec, generate};
    use crate::model::{Catalog, PartId};

    fn two(node: &str) -> Design {
        // Two nodes: Macs chained over their Thunderbolt, servers on one switch (a star).
        let template = if node.starts_with("mac") {
            Template::Chain
        } else {
            Template::Star
        };
        let mut spec = TemplateSpec::new(template);
        spec.nodes = Some(2);
        spec.node = Some(PartId::new(node));
        generate(&spec, &Catalog::builtin()).expect("two nodes")
    }

    #[test]
    fn a_layout_with_less_free_than_the_allocators_reserve_is_warned_of() {
        let dgx = two("dgx-h100");
        // 78.7 of 80 GiB: 1.3 free against 78.7 × 10.22 / 9.16 − 78.7 = 9.1 GiB.
        let finding = little_headroom(&dgx, 78.7, 80.0).expect("a warning");
        assert_eq!(finding.severity, Severity::Warning);
        assert!(
            finding
                .message
                .starts_with("the layout leaves 1.3 of 80 GiB per GPU free")
                && finding.message.contains("9.1 GiB here"),
            "{}",
            finding.message
        );
        // 70 of 80: 10 free against 8.1.
        assert!(little_headroom(&dgx, 70.0, 80.0).is_none());
        // Macs: unified memory is the system's budget, not PyTorch's allocator's.
        assert!(little_headroom(&two("mac-studio-m3-ultra"), 500.0, 512.0).is_none());
    }
}
