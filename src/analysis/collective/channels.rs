//! How many channels NCCL runs a ring or tree operation on, and what share of the GPU's
//! bandwidth they reach. NCCL sets its channels up from a topology search, then runs a small
//! operation on fewer of them: each must carry enough bytes per thread. Those few channels
//! move the operation at their own rate, not the GPU's, so from 32 KiB to 256 KiB an 8-GPU
//! ring's bandwidth term holds where the tuner's formula (all channels) would shrink it.
//! Sources: NVIDIA/nccl v2.30.7 `src/graph/search.cc` (speed arrays, `ncclTopoCompute`,
//! `ncclTopoDupChannels`), `src/graph/connect.cc` (`ncclTopoPostset` doubles the channels),
//! `src/graph/tuning.cc` (threads and thread thresholds), `src/enqueue.cc`
//! (`topoGetAlgoInfo`: fewer channels for small sizes).

use super::Algorithm;
use super::latency::{ArchRow, Protocol};

/// Per-channel speeds the ring search tries inside a node, fastest first, GB/s
/// (`speedArrayIntra`, `sm90SpeedArrayIntra`, `sm100SpeedArrayIntra`).
const SPEEDS_PRE_HOPPER: &[f64] = &[
    40.0, 30.0, 20.0, 18.0, 15.0, 12.0, 10.0, 9.0, 7.0, 6.0, 5.0, 4.0, 3.0,
];
const SPEEDS_HOPPER: &[f64] = &[
    60.0, 50.0, 40.0, 30.0, 24.0, 20.0, 15.0, 12.0, 11.0, 6.0, 3.0,
];
const SPEEDS_BLACKWELL: &[f64] = &[
    90.0, 80.0, 70.0, 60.0, 50.0, 45.0, 40.0, 30.0, 24.0, 20.0, 19.0, 18.0,
];
/// The ring graph's channel limit (`ringGraph->maxChannels = MAXCHANNELS / 2`) and the
/// communicator's (`MAXCHANNELS`).
const GRAPH_MAX_CHANNELS: u32 = 16;
const MAX_CHANNELS: u32 = 32;

/// The channels NCCL sets up for rings and trees inside one NVLink node.
#[derive(Debug, Clone, Copy, PartialEq)]
pub(crate) struct RingChannels {
    /// Channels of the communicator (`comm->nChannels`).
    pub comm: u32,
    /// What one channel carries, GB/s (the search graph's `bwIntra`).
    pub speed_gbyte_s: f64,
    /// The GPU's usable NVLink bandwidth per direction, GB/s.
    pub gpu_gbyte_s: f64,
}

impl RingChannels {
    /// NCCL's search on GPUs with `gpu_gbyte_s` of NVLink each (per direction, after link
    /// overhead: its per-link figures are the same usable rates): the fastest speed the GPU
    /// can carry, as many channels of it as fit; channels of 25 GB/s or more are split in two
    /// (on Hopper and later only down to 50 GB/s when there are more than 4); and the
    /// communicator runs each graph channel twice. None without bandwidth.
    pub(crate) fn of(arch: ArchRow, gpu_gbyte_s: f64) -> Option<RingChannels> {
        if !(gpu_gbyte_s.is_finite() && gpu_gbyte_s > 0.0) {
            return None;
        }
        let speeds = match arch {
            ArchRow::Volta | ArchRow::Ampere => SPEEDS_PRE_HOPPER,
            ArchRow::Hopper => SPEEDS_HOPPER,
            ArchRow::Blackwell => SPEEDS_BLACKWELL,
        };
        let slowest = speeds[speeds.len() - 1];
        let mut speed = speeds
            .iter()
            .copied()
            .find(|&v| v <= gpu_gbyte_s)
            .unwrap_or(slowest);
        let mut graph = ((gpu_gbyte_s / speed).floor() as u32).clamp(1, GRAPH_MAX_CHANNELS);
        let hopper_or_later = matches!(arch, ArchRow::Hopper | ArchRow::Blackwell);
        let keep = speed < 25.0 || (hopper_or_later && speed < 50.0 && graph > 4);
        if !keep {
            let doubled = (graph * 2).min(GRAPH_MAX_CHANNELS);
            speed /= f64::from(doubled.div_ceil(graph));
            graph = doubled;
        }
        Some(RingChannels {
            comm: (graph * 2).min(MAX_CHANNELS),
            speed_gbyte_s: speed,
            gpu_gbyte_s,
        })
    }

    /// Channels an operation of `bytes` runs on: NCCL drops channels while a channel would
    /// hold less than its threads × the protocol's bytes-per-thread threshold.
    pub(crate) fn in_use(&self, algorithm: Algorithm, p: Protocol, ranks: u32, bytes: f64) -> u32 {
        let (threads, threshold) = threads_and_threshold(algorithm, p, ranks);
        let fit = (bytes / (threads * threshold)).floor();
        if fit >= f64::from(self.comm) {
            self.comm
        } else {
            (fit as u32).max(1)
        }
    }

    /// The share of the GPU's bandwidth an operation of `bytes` reaches on the channels it
    /// runs on (1 when they fill the GPU).
    pub(crate) fn share(&self, algorithm: Algorithm, p: Protocol, ranks: u32, bytes: f64) -> f64 {
        let channels = f64::from(self.in_use(algorithm, p, ranks, bytes));
        (channels * self.speed_gbyte_s / self.gpu_gbyte_s).min(1.0)
    }
}

/// Threads per channel and the bytes each must hold before NCCL drops a channel
/// (`maxThreads`, `threadThresholds`: LL 512 threads and 8 bytes, times the ranks on a ring;
/// LL128 640 and 8; Simple 512 and 64, on NVLink where the ring carries more than PCI_BW).
fn threads_and_threshold(algorithm: Algorithm, p: Protocol, ranks: u32) -> (f64, f64) {
    match p {
        Protocol::Ll if algorithm == Algorithm::Ring => (512.0, 8.0 * f64::from(ranks.max(1))),
        Protocol::Ll => (512.0, 8.0),
        Protocol::Ll128 => (640.0, 8.0),
        Protocol::Simple => (512.0, 64.0),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_search_gives_24_channels_on_a100_and_h100_and_32_on_b200() {
        // A100: 12 NVLinks at 20 GB/s = 240. 40 GB/s fits 6 times, split to 12 of 20, run
        // twice: 24.
        let a100 = RingChannels::of(ArchRow::Ampere, 240.0).unwrap();
        assert_eq!((a100.comm, a100.speed_gbyte_s), (24, 20.0));
        // H100: 18 × 20.6 = 370.8. 60 fits 6 times, split (60 ≥ 50) to 12 of 30: 24.
        let h100 = RingChannels::of(ArchRow::Hopper, 370.8).unwrap();
        assert_eq!((h100.comm, h100.speed_gbyte_s), (24, 30.0));
        // B200: 18 × 40.1 = 721.8. 90 fits 8 times, split to 16 of 45: 32.
        let b200 = RingChannels::of(ArchRow::Blackwell, 721.8).unwrap();
        assert_eq!((b200.comm, b200.speed_gbyte_s), (32, 45.0));
        // Two RTX 2080 Ti on a 2-link bridge: 40 GB/s, one channel split in two, run twice.
        let bridge = RingChannels::of(ArchRow::Volta, 40.0).unwrap();
        assert_eq!((bridge.comm, bridge.speed_gbyte_s), (4, 20.0));
        // Under 25 GB/s a channel is not split: 12 GB/s is one channel, run twice.
        let slow = RingChannels::of(ArchRow::Ampere, 12.0).unwrap();
        assert_eq!((slow.comm, slow.speed_gbyte_s), (2, 12.0));
        assert!(RingChannels::of(ArchRow::Hopper, 0.0).is_none());
    }

    #[test]
    fn small_operations_run_on_fewer_channels() {
        let h100 = RingChannels::of(ArchRow::Hopper, 370.8).unwrap();
        // Ring LL on 8 ranks: 512 threads × 64 bytes = 32 KiB per channel.
        let ll = |bytes: f64| h100.in_use(Algorithm::Ring, Protocol::Ll, 8, bytes);
        assert_eq!(ll(8.0), 1);
        assert_eq!(ll(65536.0), 2);
        assert_eq!(ll(262_144.0), 8);
        assert_eq!(ll(524_288.0), 16);
        assert_eq!(ll(786_432.0), 24);
        assert_eq!(ll(1_048_576.0), 24);
        // Two ranks hold 16 bytes a thread: 8 KiB per channel.
        assert_eq!(h100.in_use(Algorithm::Ring, Protocol::Ll, 2, 65536.0), 8);
        // Simple: 512 × 64 = 32 KiB whatever the ranks; LL128 640 × 8 = 5 KiB.
        assert_eq!(
            h100.in_use(Algorithm::Ring, Protocol::Simple, 8, 65536.0),
            2
        );
        assert_eq!(
            h100.in_use(Algorithm::Tree, Protocol::Ll128, 8, 51_200.0),
            10
        );
        // One channel of 30 GB/s is 30/370.8 of the GPU; 13 of them fill it.
        let share = h100.share(Algorithm::Ring, Protocol::Ll, 8, 32768.0);
        assert!((share - 30.0 / 370.8).abs() < 1e-12, "{share}");
        assert_eq!(
            h100.share(Algorithm::Ring, Protocol::Ll, 8, 13.0 * 32768.0),
            1.0
        );
    }
}
