//! What one GPU computes: its dense peak per precision (from the catalog's datasheet figure)
//! and the fraction of it a training framework's kernels achieve, with where that fraction
//! was measured. Without a published measurement for a GPU generation the fraction is
//! unknown, and so is every time that needs it, unless the user gives one.

use crate::analysis::collective::Precision;
use crate::model::catalog::{GpuArch, GpuSpec};
use serde::Serialize;

/// Dense tensor throughput of `gpu` at `precision`, TFLOP/s; None where the GPU has no such
/// unit (FP8 before Ada/Hopper; FP32 is not a training precision here).
pub fn peak_tflops(gpu: &GpuSpec, precision: Precision) -> Option<f64> {
    if gpu.bf16_tflops <= 0.0 {
        return None;
    }
    match precision {
        // The catalog's BF16 figure; FP16 tensor throughput is the same on every generation
        // that has both (Volta and Turing have FP16 only, which the catalog already uses).
        Precision::Bf16 | Precision::Fp16 => Some(gpu.bf16_tflops),
        // FP8 tensor cores run at twice the BF16 rate (H100, H200, B200, Ada and Blackwell
        // datasheets: e.g. H100 SXM 989 → 1,979 TFLOPS dense).
        Precision::Fp8 => match gpu.arch {
            GpuArch::Ada | GpuArch::Hopper | GpuArch::Blackwell => Some(2.0 * gpu.bf16_tflops),
            _ => None,
        },
        Precision::Fp32 => None,
    }
}

/// A fraction of peak that kernels achieve, and the measurement it comes from.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Efficiency {
    pub fraction: f64,
    pub source: String,
}

/// The kernels' efficiency on `gpu` at `precision`: the catalog's own figure for the GPU
/// where it gives one (a user's measurement), else the published one for its generation.
pub fn gpu_efficiency(gpu: &GpuSpec, precision: Precision) -> Option<Efficiency> {
    match gpu.kernel_efficiency {
        Some(fraction) => Some(Efficiency {
            fraction,
            source: "the catalog's kernel_efficiency for this GPU".into(),
        }),
        None => {
            // Each published figure was measured on one chip: V100 (compute capability 7.0),
            // A100 (8.0), H100 (9.0). A chip of the same generation with other SMs, as
            // GeForce and workstation Ampere (8.6) have, has no published figure.
            let measured_on = match gpu.arch {
                GpuArch::Volta => 70,
                GpuArch::Ampere => 80,
                GpuArch::Hopper => 90,
                _ => return None,
            };
            if gpu.compute_capability() != Some(measured_on) {
                return None;
            }
            default_efficiency(gpu.arch, precision)
        }
    }
}

/// The published fraction of dense peak that Megatron-LM's kernels reach on a GPU generation
/// at a precision, where one is known. Each figure is a whole-run measurement that includes
/// its own communication and pipeline bubble, so the kernels alone ran at least this fast:
/// taken as the compute rate, the model's own communication and bubble come on top.
pub fn default_efficiency(arch: GpuArch, precision: Precision) -> Option<Efficiency> {
    let (fraction, source) = match (arch, precision) {
        (GpuArch::Volta, Precision::Fp16 | Precision::Bf16) => (
            0.48,
            "Megatron-LM v1.0 (NVIDIA ADLR, 2020): 62.4 TFLOP/s, 48 % of a V100's peak, \
             one GPU of a DGX-2H, 1.2B model end to end",
        ),
        (GpuArch::Ampere, Precision::Bf16 | Precision::Fp16) => (
            0.57,
            "Korthikanti et al. 2022 (Megatron-LM README): 530B and 1T GPT on A100 80GB, \
             data-parallel size 1, 57.0 % hardware FLOPs utilisation",
        ),
        (GpuArch::Hopper, Precision::Bf16 | Precision::Fp16) => (
            0.47,
            "Megatron-Core (Megatron-LM README): up to 47 % MFU on H100 clusters, \
             models 2B to 462B",
        ),
        _ => return None,
    };
    Some(Efficiency {
        fraction,
        source: source.to_string(),
    })
}

/// How to give a GPU without a published figure its kernel efficiency, and what published
/// runs reached, so that a guess starts from measurements: the figures are
/// `default_efficiency`'s own.
pub fn how_to_set_efficiency() -> String {
    let published: Vec<String> = [
        (GpuArch::Volta, "V100"),
        (GpuArch::Ampere, "A100"),
        (GpuArch::Hopper, "H100"),
    ]
    .iter()
    .filter_map(|&(arch, chip)| {
        default_efficiency(arch, Precision::Bf16)
            .map(|e| format!("{:.0} % on {chip}", e.fraction * 100.0))
    })
    .collect();
    format!(
        "set one: --efficiency, the workload's kernel efficiency in the sidebar, or \
         kernel_efficiency on the GPU in your own catalog, --catalog FILE; Megatron-LM's \
         published runs reached these shares of peak: {}; a step you have timed gives your own",
        published.join(", ")
    )
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::{Catalog, PartId};

    fn gpu(id: &str) -> GpuSpec {
        Catalog::builtin()
            .gpu(&PartId::new(id))
            .cloned()
            .expect("in the catalog")
    }

    #[test]
    fn the_hint_for_an_unknown_efficiency_quotes_the_published_runs() {
        let hint = how_to_set_efficiency();
        assert!(
            hint.contains("48 % on V100, 57 % on A100, 47 % on H100"),
            "{hint}"
        );
    }

    #[test]
    fn a_published_efficiency_holds_for_the_chip_it_was_measured_on() {
        // Megatron's A100 figure: the A100 (8.0) has it, the RTX 3090 (8.6) does not.
        assert_eq!(
            gpu_efficiency(&gpu("a100-sxm"), Precision::Bf16).map(|e| e.fraction),
            Some(0.57)
        );
        assert_eq!(gpu_efficiency(&gpu("rtx-3090"), Precision::Bf16), None);
        assert_eq!(
            gpu_efficiency(&gpu("h100-sxm"), Precision::Bf16).map(|e| e.fraction),
            Some(0.47)
        );
        assert_eq!(gpu_efficiency(&gpu("rtx-4090"), Precision::Bf16), None);
    }
}
