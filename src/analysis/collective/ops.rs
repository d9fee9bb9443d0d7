//! The operations, their nccl-tests bus-bandwidth factors, and message sizes as typed on the
//! command line.

use crate::model::Bytes;
use serde::{Deserialize, Serialize};

/// A collective operation, as nccl-tests names them.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Op {
    AllReduce,
    AllGather,
    ReduceScatter,
    AllToAll,
    Broadcast,
    Reduce,
    SendRecv,
}

impl Op {
    pub const ALL: [Op; 7] = [
        Op::AllReduce,
        Op::AllGather,
        Op::ReduceScatter,
        Op::AllToAll,
        Op::Broadcast,
        Op::Reduce,
        Op::SendRecv,
    ];

    pub fn cli_name(self) -> &'static str {
        match self {
            Op::AllReduce => "all-reduce",
            Op::AllGather => "all-gather",
            Op::ReduceScatter => "reduce-scatter",
            Op::AllToAll => "all-to-all",
            Op::Broadcast => "broadcast",
            Op::Reduce => "reduce",
            Op::SendRecv => "send-recv",
        }
    }

    /// Accepts `all-reduce`, `allreduce`, `all_reduce` (any case) and the like.
    pub fn from_cli_name(name: &str) -> Option<Op> {
        let squashed: String = name
            .chars()
            .filter(|c| !matches!(c, '-' | '_' | ' '))
            .flat_map(char::to_lowercase)
            .collect();
        let op = match squashed.as_str() {
            "allreduce" | "ar" => Op::AllReduce,
            "allgather" | "ag" => Op::AllGather,
            "reducescatter" | "rs" => Op::ReduceScatter,
            "alltoall" | "a2a" => Op::AllToAll,
            "broadcast" | "bcast" => Op::Broadcast,
            "reduce" => Op::Reduce,
            "sendrecv" | "p2p" => Op::SendRecv,
            _ => return None,
        };
        Some(op)
    }

    /// nccl-tests' busbw = algbw × factor (doc/PERFORMANCE.md).
    pub fn busbw_factor(self, n: u32) -> f64 {
        let n = f64::from(n.max(1));
        match self {
            Op::AllReduce => 2.0 * (n - 1.0) / n,
            Op::AllGather | Op::ReduceScatter | Op::AllToAll => (n - 1.0) / n,
            Op::Broadcast | Op::Reduce | Op::SendRecv => 1.0,
        }
    }
}

impl std::fmt::Display for Op {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.cli_name())
    }
}

#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum SizeError {
    #[error("empty size")]
    Empty,
    #[error(
        "`{0}` is not a size: write a whole number with an optional K, M, G or T suffix (binary multiples), e.g. 64K or 8GiB"
    )]
    Invalid(String),
    #[error("`{0}` is too large")]
    Overflow(String),
}

/// Parses `8`, `64K`, `1M`, `8GiB`, `1G`: binary multiples, as nccl-tests' `-b`/`-e` take them.
/// Suffixes K/M/G/T, optionally followed by `B` or `iB`, in any case. No sign, no fraction.
pub fn parse_size(s: &str) -> Result<Bytes, SizeError> {
    let t = s.trim();
    if t.is_empty() {
        return Err(SizeError::Empty);
    }
    let digits_end = t.find(|c: char| !c.is_ascii_digit()).unwrap_or(t.len());
    if digits_end == 0 {
        return Err(SizeError::Invalid(s.to_string()));
    }
    let number: u64 = t[..digits_end]
        .parse()
        .map_err(|_| SizeError::Overflow(s.to_string()))?;
    let suffix = t[digits_end..].trim().to_ascii_lowercase();
    let shift = match suffix.as_str() {
        "" | "b" => 0,
        "k" | "kb" | "kib" => 10,
        "m" | "mb" | "mib" => 20,
        "g" | "gb" | "gib" => 30,
        "t" | "tb" | "tib" => 40,
        _ => return Err(SizeError::Invalid(s.to_string())),
    };
    number
        .checked_mul(1u64 << shift)
        .map(Bytes)
        .ok_or_else(|| SizeError::Overflow(s.to_string()))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sizes_are_binary_multiples() {
        assert_eq!(parse_size("8"), Ok(Bytes(8)));
        assert_eq!(parse_size("64K"), Ok(Bytes(65_536)));
        assert_eq!(parse_size("1M"), Ok(Bytes(1_048_576)));
        assert_eq!(parse_size("8GiB"), Ok(Bytes(8_589_934_592)));
        assert_eq!(parse_size("1G"), Ok(Bytes(1_073_741_824)));
        assert_eq!(parse_size("2kb"), Ok(Bytes(2048)));
    }

    #[test]
    fn bad_sizes_are_refused() {
        assert!(matches!(parse_size("-1"), Err(SizeError::Invalid(_))));
        assert!(matches!(parse_size("1.5M"), Err(SizeError::Invalid(_))));
        assert!(matches!(parse_size("abc"), Err(SizeError::Invalid(_))));
        assert!(matches!(parse_size("12Q"), Err(SizeError::Invalid(_))));
        assert_eq!(parse_size(""), Err(SizeError::Empty));
        // 2^24 TiB = 2^64 bytes does not fit.
        assert!(matches!(
            parse_size("16777216T"),
            Err(SizeError::Overflow(_))
        ));
        assert!(matches!(
            parse_size("99999999999999999999999"),
            Err(SizeError::Overflow(_))
        ));
    }

    #[test]
    fn op_names() {
        assert_eq!(Op::from_cli_name("allreduce"), Some(Op::AllReduce));
        assert_eq!(Op::from_cli_name("All_Gather"), Some(Op::AllGather));
        assert_eq!(Op::from_cli_name("all-to-all"), Some(Op::AllToAll));
        assert_eq!(Op::from_cli_name("gather"), None);
        for op in Op::ALL {
            assert_eq!(Op::from_cli_name(op.cli_name()), Some(op));
        }
        assert_eq!(Op::AllReduce.busbw_factor(8), 1.75);
        assert_eq!(Op::AllGather.busbw_factor(4), 0.75);
        assert_eq!(Op::Broadcast.busbw_factor(8), 1.0);
    }
}
