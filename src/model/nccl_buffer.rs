//! The buffer NCCL gives each connection's Simple protocol (`NCCL_BUFFSIZE`). NCCL splits it
//! into `NCCL_STEPS` (8) steps, and a tree forwards one step at a time, so the buffer sets how
//! long a tree takes to fill its pipeline. NCCL's default is 4 MiB (`DEFAULT_BUFFSIZE`,
//! `src/init.cc`); AWS's EFA and Google's GPUDirect-TCPXO recipes set 8 MiB.

use super::units::Bytes;
use serde::{Deserialize, Serialize};
use std::fmt;

/// A Simple-protocol buffer size NCCL can run with.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(try_from = "u64", into = "u64")]
pub struct NcclBuffer(u64);

/// Why a buffer size is refused.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum BufferError {
    #[error(
        "an NCCL buffer of {0} is outside what railyard models: 64 KiB to 256 MiB (NCCL's \
         default is 4 MiB)"
    )]
    OutOfRange(Bytes),
    #[error(
        "an NCCL buffer of {0} does not split into NCCL's 8 steps of whole 16-byte units: use a \
         multiple of 128 bytes"
    )]
    Uneven(Bytes),
}

impl NcclBuffer {
    /// NCCL's default (`DEFAULT_BUFFSIZE`).
    pub const DEFAULT: NcclBuffer = NcclBuffer(4 << 20);
    const MIN: u64 = 64 << 10;
    const MAX: u64 = 256 << 20;
    /// The sizes the inspector offers, smallest first.
    pub const OFFERED: [NcclBuffer; 6] = [
        NcclBuffer(1 << 20),
        NcclBuffer(2 << 20),
        NcclBuffer(4 << 20),
        NcclBuffer(8 << 20),
        NcclBuffer(16 << 20),
        NcclBuffer(32 << 20),
    ];

    pub fn new(bytes: u64) -> Result<Self, BufferError> {
        if !(Self::MIN..=Self::MAX).contains(&bytes) {
            Err(BufferError::OutOfRange(Bytes(bytes)))
        } else if !bytes.is_multiple_of(128) {
            Err(BufferError::Uneven(Bytes(bytes)))
        } else {
            Ok(NcclBuffer(bytes))
        }
    }

    pub fn bytes(self) -> u64 {
        self.0
    }

    /// One of its `NCCL_STEPS` steps, bytes: what a tree forwards whole.
    pub fn step_bytes(self) -> f64 {
        self.0 as f64 / 8.0
    }
}

impl TryFrom<u64> for NcclBuffer {
    type Error = BufferError;
    fn try_from(bytes: u64) -> Result<Self, Self::Error> {
        NcclBuffer::new(bytes)
    }
}

impl From<NcclBuffer> for u64 {
    fn from(b: NcclBuffer) -> u64 {
        b.0
    }
}

impl fmt::Display for NcclBuffer {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        Bytes(self.0).fmt(f)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn buffers_split_into_eight_steps_and_odd_sizes_are_refused_with_the_reason() {
        assert_eq!(NcclBuffer::DEFAULT.step_bytes(), 524_288.0);
        let eight = NcclBuffer::new(8 << 20).unwrap();
        assert_eq!(
            (eight.to_string(), eight.step_bytes()),
            ("8 MiB".into(), 1_048_576.0)
        );
        assert_eq!(
            NcclBuffer::new(32 << 10),
            Err(BufferError::OutOfRange(Bytes(32 << 10)))
        );
        assert!(NcclBuffer::new(512 << 20).is_err());
        let odd = NcclBuffer::new((4 << 20) + 8).unwrap_err();
        assert!(odd.to_string().contains("multiple of 128 bytes"), "{odd}");
        // A file names the bytes; a bad number is refused as it loads.
        let back: NcclBuffer = ron::from_str("8388608").unwrap();
        assert_eq!(back, eight);
        assert!(ron::from_str::<NcclBuffer>("1000").is_err());
        assert!(NcclBuffer::OFFERED.contains(&NcclBuffer::DEFAULT));
    }
}
