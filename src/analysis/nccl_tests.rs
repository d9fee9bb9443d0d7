//! nccl-tests results as data: the rows of a result table, which test ran, on how many ranks
//! and how it drove them, and which test binary measures which collective. `io::nccl_log`
//! turns the printed text into these; calibration and the designer read them.

use crate::analysis::collective::Op;
use crate::model::Bytes;
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
