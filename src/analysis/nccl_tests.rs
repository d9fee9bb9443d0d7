//! nccl-tests results as data: the rows of a result table, which test ran, on how many ranks
//! and how it drove them, and which test binary measures which collective. `io::nccl_log`
//! turns the printed text into these; calibration and the designer read them.

use crate::analysis::collective::Op;
use crate::model::Bytes;
use crate::model::catalog::GpuArch;
use serde::Serialize;

/// One half of a row: out-of-place or in-place.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Measurement {
    pub time_us: f64,
    pub algbw_gbyte_s: f64,
    pub busbw_gbyte_s: f64,
    /// Wrong elements found by validation; None when the log prints `N/A` (`-c 0`).
    pub wrong: Option<u64>,
}

/// One result row.
#[derive(Debug, Clone, PartialEq)]
pub struct NcclRow {
    /// 1-based line in the text.
    pub line: usize,
    /// nccl-tests' size column: the whole buffer.
    pub bytes: Bytes,
    pub count: u64,
    pub dtype: String,
    /// None for tests whose table has no redop column.
    pub redop: Option<String>,
    /// None for tests whose table has no root column.
    pub root: Option<i64>,
    pub out_of_place: Measurement,
    /// None when the table has only one half.
    pub in_place: Option<Measurement>,
}

impl NcclRow {
    /// The faster of the two halves: what the fabric can do at this size.
    pub fn best(&self) -> Measurement {
        match self.in_place {
            Some(ip) if ip.time_us < self.out_of_place.time_us => ip,
            _ => self.out_of_place,
        }
    }
}

/// A parsed log.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct NcclLog {
    /// The test's binary name, e.g. `all_reduce_perf`, when the log names it.
    pub test: Option<String>,
    /// The collective, when the test name maps to one railyard models.
    pub op: Option<Op>,
    /// Ranks taking part: the `#  Rank N` lines, else nThread × nGpus of the header.
    pub ranks: Option<u32>,
    /// How the test drove the GPUs, from the header (`nGpus`, `graph:`).
    pub harness: Harness,
    /// The NCCL release that ran, where the log prints it ("NCCL version 2.21.5+cuda12.3",
    /// or nccl-tests' "nccl-library=22105").
    pub nccl: Option<crate::model::NcclRelease>,
    /// The GPUs the `#  Rank` lines name ("NVIDIA A100-SXM4-80GB"), each once, in order.
    pub gpu_names: Vec<String>,
    pub rows: Vec<NcclRow>,
}

/// µs one host thread spends launching one GPU's kernel of an operation. On a DGX A100, ring
/// all-reduce of 8–128 B on one channel, one thread driving 4 to 8 GPUs, took 16.88, 20.8,
/// 25.2, 29.5 and 33.7 µs (nccl-tests #123): 4.2 µs per GPU with no intercept, where NCCL's
/// own figure for the kernel grows by only 1.2 µs per GPU (two LL steps of 0.6 µs).
pub const HOST_LAUNCH_PER_GPU_US: f64 = 4.2;

/// How nccl-tests drove the GPUs, where that shows in the times it prints.
///
/// One process may drive several GPUs (`-g N`). Its host thread then launches each GPU's
/// kernel of an operation in turn, and back-to-back operations go no faster than those
/// launches: NCCL's maintainers name "the CUDA latency overheads of single process jobs" and
/// recommend one process per GPU (nccl-tests #333). A CUDA graph (`-G`) replays the launches
/// without the host. Training jobs run one process per GPU, so the model's times are that
/// case; this only turns them into what such a test prints.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
pub struct Harness {
    /// GPUs one host thread drives (nccl-tests `-g`).
    pub gpus_per_thread: u32,
    /// The operations are replayed from a CUDA graph (nccl-tests `-G`).
    pub cuda_graph: bool,
}

impl Default for Harness {
    /// One process per GPU, launching as it goes: how training jobs run.
    fn default() -> Self {
        Harness {
            gpus_per_thread: 1,
            cuda_graph: false,
        }
    }
}

impl Harness {
    /// The time under which no operation completes: its kernel launches, one per GPU the
    /// thread drives. Zero when a CUDA graph replays them.
    pub fn launch_floor_us(&self) -> f64 {
        if self.cuda_graph {
            0.0
        } else {
            f64::from(self.gpus_per_thread) * HOST_LAUNCH_PER_GPU_US
        }
    }

    /// Whether an operation the model times at `model_us` waits on the launches instead.
    pub fn launch_bound(&self, model_us: f64) -> bool {
        model_us < self.launch_floor_us()
    }

    /// The time the test prints for an operation the model times at `model_us`.
    pub fn printed_time_us(&self, model_us: f64) -> f64 {
        model_us.max(self.launch_floor_us())
    }
}

/// The architecture of a GPU as nvidia-smi and nccl-tests name it ("NVIDIA A100-SXM4-80GB",
/// "NVIDIA H100 80GB HBM3", "NVIDIA GB10"), from its model number; None for names it does
/// not know.
pub fn gpu_arch_named(name: &str) -> Option<GpuArch> {
    let upper = name.to_uppercase().replace(['-', '_'], " ");
    let words: Vec<&str> = upper.split_whitespace().collect();
    let has = |w: &str| words.contains(&w);
    let starts = |p: &str| words.iter().any(|x| x.starts_with(p));
    // Longest model numbers first: "H200" before "H20", "GB10" before "GB100"'s prefix.
    if [
        "B100", "B200", "B300", "GB200", "GB300", "GB10", "5090", "5080",
    ]
    .iter()
    .any(|w| has(w))
        || upper.contains("BLACKWELL")
    {
        Some(GpuArch::Blackwell)
    } else if ["H100", "H200", "H800", "H20", "GH200"]
        .iter()
        .any(|w| has(w))
    {
        Some(GpuArch::Hopper)
    } else if ["L4", "L40", "L40S", "4090", "4080", "4070"]
        .iter()
        .any(|w| has(w))
        || upper.contains(" ADA")
    {
        Some(GpuArch::Ada)
    } else if ["A100", "A800", "A10", "A30", "A40", "A6000", "3090", "3080"]
        .iter()
        .any(|w| has(w))
    {
        Some(GpuArch::Ampere)
    } else if has("T4") || starts("208") || (has("TITAN") && has("RTX")) {
        Some(GpuArch::Turing)
    } else if has("V100") {
        Some(GpuArch::Volta)
    } else {
        None
    }
}

/// The collective a test binary measures, for the tests railyard models.
pub fn op_of_test(test: &str) -> Option<Op> {
    let name = test.strip_suffix("_perf").unwrap_or(test);
    match name {
        "all_reduce" | "all_gather" | "reduce_scatter" | "alltoall" | "broadcast" | "reduce"
        | "sendrecv" => Op::from_cli_name(name),
        _ => None,
    }
}

/// The nccl-tests binary for a collective.
pub fn test_of_op(op: Op) -> &'static str {
    match op {
        Op::AllReduce => "all_reduce_perf",
        Op::AllGather => "all_gather_perf",
        Op::ReduceScatter => "reduce_scatter_perf",
        Op::AllToAll => "alltoall_perf",
        Op::Broadcast => "broadcast_perf",
        Op::Reduce => "reduce_perf",
        Op::SendRecv => "sendrecv_perf",
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn gpus_are_placed_by_their_model_number() {
        for (name, arch) in [
            ("NVIDIA A100-SXM4-80GB", GpuArch::Ampere),
            ("NVIDIA H100 80GB HBM3", GpuArch::Hopper),
            ("NVIDIA H200", GpuArch::Hopper),
            ("NVIDIA H20", GpuArch::Hopper),
            ("NVIDIA GB10", GpuArch::Blackwell),
            ("NVIDIA B200", GpuArch::Blackwell),
            ("Tesla V100-SXM2-16GB", GpuArch::Volta),
            ("NVIDIA GeForce RTX 2080 Ti", GpuArch::Turing),
            ("NVIDIA GeForce RTX 4090", GpuArch::Ada),
        ] {
            assert_eq!(gpu_arch_named(name), Some(arch), "{name}");
        }
        assert_eq!(gpu_arch_named("synthetic"), None);
    }
}
