//! Which collective library the design's jobs run. `Auto` lets the analysis choose by node
//! family (NCCL on NVIDIA GPUs, MLX on Apple silicon, Gloo for a mix); a user who runs
//! something else sets it: PyTorch's Gloo backend (Windows has no NCCL; Macs without MLX),
//! or MLX's TCP ring on Thunderbolt 5 before macOS 26.2 brought RDMA.

use serde::{Deserialize, Serialize};

#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default, Serialize, Deserialize)]
pub enum LibraryChoice {
    /// By node family: NCCL on NVIDIA GPUs; MLX on Apple silicon (JACCL where every link is
    /// Thunderbolt 5 with RDMA, else the TCP ring); Gloo for a mix of the two.
    #[default]
    Auto,
    Nccl,
    MlxRing,
    MlxJaccl,
    /// PyTorch's `gloo` process group: rings over TCP run by the CPU.
    Gloo,
}

impl LibraryChoice {
    pub const ALL: [LibraryChoice; 5] = [
        LibraryChoice::Auto,
        LibraryChoice::Nccl,
        LibraryChoice::MlxRing,
        LibraryChoice::MlxJaccl,
        LibraryChoice::Gloo,
    ];

    pub fn is_auto(&self) -> bool {
        *self == LibraryChoice::Auto
    }

    /// The name a menu or the command line shows.
    pub fn label(self) -> &'static str {
        match self {
            LibraryChoice::Auto => "auto (by node family)",
            LibraryChoice::Nccl => "NCCL",
            LibraryChoice::MlxRing => "MLX ring (TCP)",
            LibraryChoice::MlxJaccl => "MLX JACCL (RDMA)",
            LibraryChoice::Gloo => "Gloo (PyTorch, TCP)",
        }
    }

    /// The command line's spelling (`--library`).
    pub fn key(self) -> &'static str {
        match self {
            LibraryChoice::Auto => "auto",
            LibraryChoice::Nccl => "nccl",
            LibraryChoice::MlxRing => "mlx-ring",
            LibraryChoice::MlxJaccl => "mlx-jaccl",
            LibraryChoice::Gloo => "gloo",
        }
    }

    pub fn from_key(key: &str) -> Option<LibraryChoice> {
        Self::ALL.into_iter().find(|c| c.key() == key)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn keys_round_trip_and_auto_is_the_default() {
        for c in LibraryChoice::ALL {
            assert_eq!(LibraryChoice::from_key(c.key()), Some(c));
        }
        assert_eq!(LibraryChoice::from_key("mpi"), None);
        assert!(LibraryChoice::default().is_auto());
    }
}
