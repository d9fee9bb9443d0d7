//! nccl-tests results as data: the rows of a result table, which test ran and on how many
//! ranks, and which test binary measures which collective. `io::nccl_log` turns the printed
//! text into these; calibration and the designer read them.

use crate::analysis::collective::Op;
use crate::model::Bytes;

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
    pub rows: Vec<NcclRow>,
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
