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

/// How a ring all-reduce's chunks were cut before NCCL 2.20: on the GPU, each loop in
/// nChannels × nRanks chunks of one size, that size rounded up to a grain of the protocol's
/// threads (NVIDIA/nccl v2.19.4 `src/device/all_reduce.h`, `runRing`; v2.18 has it in
/// `src/collectives/device/all_reduce.h`):
/// - LL and LL128: `min(chunk, divUp(left, nChannels·nRanks·minChunk)·minChunk)`, where
///   `minChunk` is the threads × `calcBytePerGrain` (LL 512 threads × 8 bytes = 4 KiB; LL128
///   640 threads × 60 bytes, halved: 19,200 bytes);
/// - Simple: `min(chunk, divUp(left, nChannels·nRanks))` rounded up to (threads − one warp) ×
///   8 bytes (544 − 32 threads: 4 KiB).
///
/// Chunks are laid out channel after channel, so at a mid size the last ones hold nothing
/// while every step of the ring waits on a full one. 2.20 moved the split to the host
/// (`ncclCollCbdPart`), which shares the last loop out evenly.
#[derive(Debug, Clone, Copy, PartialEq)]
pub(crate) struct DeviceChunking {
    /// Simple's largest chunk: NCCL_BUFFSIZE / NCCL_STEPS × ALLREDUCE_CHUNKSTEPS (4 of 8).
    pub simple_chunk_bytes: f64,
}

/// Threads a channel runs each protocol on (`NCCL_LL_MAX_NTHREADS`, `NCCL_LL128_MAX_NTHREADS`,
/// `NCCL_SIMPLE_MAX_NTHREADS`; the kernel runs Simple with one warp more for synchronisation,
/// `enqueue.cc`).
const LL_THREADS: f64 = 512.0;
const LL128_THREADS: f64 = 640.0;
const SIMPLE_THREADS: f64 = 512.0;

/// LL's largest chunk: its 512 KiB buffer over 8 steps, half of each line data (32 KiB).
const LL_CHUNK_BYTES: f64 = 32_768.0;
/// LL128's: its 4,915,200-byte buffer over 8 steps, 120 of each 128 bytes data.
const LL128_CHUNK_BYTES: f64 = 576_000.0;

impl DeviceChunking {
    /// The bytes a channel's ring steps carry, summed over the loops, over an even split of
    /// `bytes` on the `channels` and `ranks`: 1 where chunks come out even, 1.32 for 8 MiB
    /// under LL128 on 24 channels and 8 ranks (chunks of 57,600 bytes for 43,690 each).
    pub(crate) fn rounding(&self, p: Protocol, channels: u32, ranks: u32, bytes: f64) -> f64 {
        let cut = f64::from(channels.max(1)) * f64::from(ranks.max(1));
        if bytes.is_nan() || bytes <= 0.0 {
            return 1.0;
        }
        // Simple rounds to (its threads with the sync warp − one warp) × 8 bytes:
        // (544 − 32) × 8, the channel's 512 threads × 8.
        let (chunk, grain) = match p {
            Protocol::Ll => (LL_CHUNK_BYTES, LL_THREADS * 8.0),
            Protocol::Ll128 => (LL128_CHUNK_BYTES, LL128_THREADS * 60.0 / 2.0),
            Protocol::Simple => (self.simple_chunk_bytes, SIMPLE_THREADS * 8.0),
        };
        let loop_bytes = cut * chunk;
        let full_loops = ((bytes / loop_bytes).ceil() - 1.0).max(0.0);
        let left = bytes - full_loops * loop_bytes;
        let last = match p {
            Protocol::Simple => ((left / cut).ceil().min(chunk) / grain).ceil() * grain,
            _ => chunk.min((left / (cut * grain)).ceil() * grain),
        };
        (full_loops * chunk + last) * cut / bytes
    }
}

/// Threads per channel and the bytes each must hold before NCCL drops a channel
/// (`maxThreads`, `threadThresholds`: LL 512 threads and 8 bytes, times the ranks on a ring;
/// LL128 640 and 8; Simple 512 and 64, on NVLink where the ring carries more than PCI_BW).
fn threads_and_threshold(algorithm: Algorithm, p: Protocol, ranks: u32) -> (f64, f64) {
    match p {
        Protocol::Ll if algorithm == Algorithm::Ring => (LL_THREADS, 8.0 * f64::from(ranks.max(1))),
        Protocol::Ll => (LL_THREADS, 8.0),
        Protocol::Ll128 => (LL128_THREADS, 8.0),
        Protocol::Simple => (SIMPLE_THREADS, 64.0),
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
    fn nccl_before_2_20_rounds_a_rings_chunks_up() {
        let cut = DeviceChunking {
            simple_chunk_bytes: 2.0 * 1_048_576.0,
        };
        let mib = 1_048_576.0;
        // LL128, 24 channels, 8 ranks: a grain of 19,200 bytes, 3,686,400 per round of chunks.
        // 8 MiB takes 3 grains a chunk, 57,600 bytes, where 8 MiB / 192 is 43,690.7.
        let ll128 = |m: f64| cut.rounding(Protocol::Ll128, 24, 8, m * mib);
        assert!((ll128(8.0) - 57_600.0 * 192.0 / (8.0 * mib)).abs() < 1e-12);
        assert!((ll128(8.0) - 1.318).abs() < 1e-3);
        // 16 and 32 MiB: 5 and 10 grains (96,000 and 192,000 bytes), ×1.099.
        assert!((ll128(16.0) - 96_000.0 * 192.0 / (16.0 * mib)).abs() < 1e-12);
        assert!((ll128(32.0) - 192_000.0 * 192.0 / (32.0 * mib)).abs() < 1e-12);
        // 128 MiB: one loop of full 576,000-byte chunks (110.6 MB), then 23.6 MB left in 7
        // grains (134,400 bytes): (576,000 + 134,400) × 192 / 128 MiB.
        assert!((ll128(128.0) - 710_400.0 * 192.0 / (128.0 * mib)).abs() < 1e-12);
        // Simple rounds to 4 KiB only: 32 MiB is 174,763 bytes a chunk, cut at 176,128.
        let simple = cut.rounding(Protocol::Simple, 24, 8, 32.0 * mib);
        assert!((simple - 176_128.0 * 192.0 / (32.0 * mib)).abs() < 1e-12);
        // LL, 1 MiB: two 4 KiB grains for 5,461 bytes, ×1.5; an even fit is exactly 1.
        assert!((cut.rounding(Protocol::Ll, 24, 8, mib) - 1.5).abs() < 1e-12);
        assert!((cut.rounding(Protocol::Ll, 16, 8, 0.5 * mib) - 1.0).abs() < 1e-12);
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
