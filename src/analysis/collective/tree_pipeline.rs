//! How long NCCL's trees take to fill their pipeline under the Simple protocol.
//!
//! Under Simple a tree moves each channel's share in chunks and forwards a chunk only once
//! the whole of it has arrived: the kernel runs the tree with `ProtoSimple<1, 1>`, one slice
//! of one step per chunk, and a receiver waits for the step's tail before it reduces and
//! sends on (NVIDIA/nccl v2.30.7 `src/device/all_reduce.h`: `runTreeSplit` for the tree, and
//! the network part of NVLSTree, whose heads reduce, send up and broadcast down the same way).
//! The first chunks therefore cross every hop of the tree, up the chain and the inter-node tree
//! to the root and down again, one whole chunk at a time before the rest can stream behind
//! them. LL and LL128 forward line by line and pay only their per-hop latency.
//!
//! NCCL's tuner leaves this out: it scales the tree's bandwidth by its `treeCorrectionFactor`,
//! which the model keeps in the bandwidth term (`latency::tree_correction`). The fill comes on
//! top, and only changes the time, never the pick.

use crate::model::NcclRelease;

/// How NCCL sizes the chunk a tree forwards whole (`enqueue.cc`, `calcCollChunking`).
#[derive(Debug, Clone, Copy, PartialEq)]
pub(crate) enum ChunkRule {
    /// The tree: one Simple step, NCCL_BUFFSIZE over `NCCL_STEPS` (512 KiB of the default 4
    /// MiB; chunkSteps is 1 off the ring). Releases up to 2.19 halve it while too few chunks
    /// per channel would fill NCCL's tree depth (ranks per node − 1 + log2 nodes,
    /// `connectTrees`); 2.20 dropped that.
    Tree {
        step: f64,
        halves_by_depth: bool,
        depth: f64,
    },
    /// NVLSTree: NCCL's NVLS chunk up to its tree maximum (`nvls.cc`, `ncclNvlsTuning`), cut
    /// to 64 KiB below 4 and to 32 KiB below 1 chunk per operation in flight (channels ×
    /// heads).
    NvlsTree { max_chunk: f64 },
}

/// A tree's shape and rates, as far as its pipeline fill needs them.
#[derive(Debug, Clone, Copy, PartialEq)]
pub(crate) struct TreePipeline {
    /// Channels the tree runs on: two per NIC across nodes (`CHANNELS_PER_CONNECTION`), the
    /// NVLink search's channels inside one node, NCCL's NVLS channels for NVLSTree.
    pub channels: f64,
    /// Heads each channel splits its share among, each forwarding its own chunk (NVLSTree:
    /// one per GPU and NIC of a node); 1 for the tree.
    pub heads: f64,
    /// Hops inside a domain a chunk crosses, up the chain and down again: 2 (g − 1) for the
    /// tree, none for NVLSTree (whose NVLS steps fill apart, `latency::nvls_fill_us`).
    pub intra_stages: f64,
    /// Network hops it crosses: up and down the inter-node tree, 2 ⌈log2 m⌉.
    pub net_stages: f64,
    /// What a wave of chunks, one per channel, moves over one intra-domain hop, bytes/s: the
    /// GPU's usable NVLink (or PCIe) rate, every channel's chunk crossing at once.
    pub intra_bytes_per_s: f64,
    /// What a wave moves over one network hop, bytes/s: the usable rate of a node's NICs
    /// together (the slowest node's), each channel's chunk on its own NIC.
    pub net_bytes_per_s: f64,
    pub chunk: ChunkRule,
}

impl TreePipeline {
    /// Whether `release` still halves tree chunks by depth.
    pub(crate) fn halves_chunks_in(release: NcclRelease) -> bool {
        release < NcclRelease::new(2, 20, 0)
    }

    /// The chunk one channel (and head) forwards whole, bytes, for an operation of `bytes`.
    pub(crate) fn chunk_bytes(&self, bytes: f64) -> f64 {
        match self.chunk {
            ChunkRule::Tree {
                step,
                halves_by_depth,
                depth,
            } => {
                let mut chunk = step;
                if halves_by_depth {
                    // NCCL divides integers here: chunks per channel, rounded down.
                    let per_channel_chunks = |c: f64| (bytes / (self.channels * c)).floor();
                    for (times_depth, floor) in [(8.0, 131_072.0), (4.0, 65_536.0), (1.0, 32_768.0)]
                    {
                        while per_channel_chunks(chunk) < depth * times_depth && chunk > floor {
                            chunk /= 2.0;
                        }
                    }
                }
                chunk
            }
            ChunkRule::NvlsTree { max_chunk } => {
                let in_flight = self.channels * self.heads;
                let mut chunk = max_chunk;
                if bytes < 4.0 * in_flight * chunk && chunk > 65_536.0 {
                    chunk = 65_536.0;
                }
                if bytes < in_flight * chunk && chunk > 32_768.0 {
                    chunk = 32_768.0;
                }
                chunk
            }
        }
    }

    /// µs the first wave of chunks (one per channel and head, or the whole operation when
    /// smaller) spends crossing the tree beyond the one hop whose pace the bandwidth term
    /// already counts. Each hop runs at its nominal rate: a slow link elsewhere in the fabric
    /// paces the bandwidth term, not every hop of the first wave.
    pub(crate) fn fill_us(&self, bytes: f64) -> f64 {
        if self.channels <= 0.0 || bytes <= 0.0 {
            return 0.0;
        }
        let wave = (self.chunk_bytes(bytes) * self.channels * self.heads.max(1.0)).min(bytes);
        let net = if self.net_stages > 0.0 && self.net_bytes_per_s > 0.0 {
            wave / self.net_bytes_per_s
        } else {
            0.0
        };
        let intra = if self.intra_stages > 0.0 && self.intra_bytes_per_s > 0.0 {
            wave / self.intra_bytes_per_s
        } else {
            0.0
        };
        let crossing = self.net_stages * net + self.intra_stages * intra;
        (crossing - net.max(intra)).max(0.0) * 1e6
    }

    /// Hops a chunk crosses.
    pub(crate) fn hops(&self) -> f64 {
        self.intra_stages + self.net_stages
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Two nodes of 8 A100s, four 100 Gb/s NICs each (p4de): 8 channels, chains of 7 NVLink
    /// hops each way, one network hop each way, 12 NVLinks of 20 GB/s each per GPU.
    fn p4de(halves: bool) -> TreePipeline {
        TreePipeline {
            channels: 8.0,
            heads: 1.0,
            intra_stages: 14.0,
            net_stages: 2.0,
            intra_bytes_per_s: 240e9,
            net_bytes_per_s: 46e9,
            chunk: ChunkRule::Tree {
                step: 524_288.0,
                halves_by_depth: halves,
                depth: 8.0,
            },
        }
    }

    #[test]
    fn a_wave_of_half_mebibyte_chunks_crosses_sixteen_hops() {
        // Four 100 Gb/s NICs at 92 %: 46 GB/s per node and direction.
        let t = p4de(false);
        assert_eq!(t.chunk_bytes(16.0 * 1024.0 * 1024.0), 524_288.0);
        // 16 MiB: a wave is 8 × 512 KiB = 4 MiB. One network hop at 46 GB/s takes 91.18 µs,
        // one NVLink hop at 240 GB/s 17.48 µs; the wave crosses 2 + 14 of them, and the
        // bandwidth term already counts one network hop: 91.18 + 14 × 17.48 = 335.9 µs.
        let wave = 4.0 * 1024.0 * 1024.0;
        let want = (wave / 46e9 + 14.0 * wave / 240e9) * 1e6;
        let got = t.fill_us(16.0 * 1024.0 * 1024.0);
        assert!(
            (got - want).abs() < 1e-9 && (got - 335.9).abs() < 0.1,
            "{got}"
        );
        // 1 MiB is smaller than a wave: the whole operation crosses, 22.80 + 14 × 4.37.
        let got = t.fill_us(1024.0 * 1024.0);
        assert!((got - 84.0).abs() < 0.1, "{got}");
        // Larger sizes keep the same wave: the fill stops growing.
        assert_eq!(t.fill_us(1e9), t.fill_us(64.0 * 1024.0 * 1024.0));
    }

    #[test]
    fn releases_before_2_20_shrink_the_chunk_by_depth() {
        assert!(TreePipeline::halves_chunks_in(NcclRelease::new(2, 19, 3)));
        assert!(!TreePipeline::halves_chunks_in(NcclRelease::new(2, 20, 3)));
        let t = p4de(true);
        // 16 MiB on 8 channels: 2 MiB each. 512 KiB gives 4 chunks, under 8 × depth 8 = 64:
        // halve to 256 KiB (8), then 128 KiB (16), which is the first floor; 16 < 4 × 8 = 32,
        // so halve to 64 KiB (32 chunks), the second floor; 32 ≥ depth 8: stop.
        assert_eq!(t.chunk_bytes(16.0 * 1024.0 * 1024.0), 65_536.0);
        // 1 GiB: 128 MiB a channel, 256 chunks of 512 KiB ≥ 64: kept.
        assert_eq!(t.chunk_bytes(1024.0 * 1024.0 * 1024.0), 524_288.0);
        // Tiny sizes stop at 32 KiB.
        assert_eq!(t.chunk_bytes(4096.0), 32_768.0);
    }

    #[test]
    fn nvls_tree_heads_forward_chunks_cut_for_small_sizes() {
        // Two p5 (8 H100 each, one 400 Gb/s EFA device per GPU): 16 NVLS channels, 8 heads,
        // one network hop up and one down; a node's 8 NICs move 8 × 46 GB/s.
        let t = TreePipeline {
            channels: 16.0,
            heads: 8.0,
            intra_stages: 0.0,
            net_stages: 2.0,
            intra_bytes_per_s: 0.0,
            net_bytes_per_s: 8.0 * 46e9,
            chunk: ChunkRule::NvlsTree {
                max_chunk: 131_072.0,
            },
        };
        let spb = 1.0 / (8.0 * 46e9);
        let mib = 1024.0 * 1024.0;
        // 128 operations in flight: 128 KiB from 4 × 128 × 128 KiB = 64 MiB, 64 KiB from
        // 128 × 64 KiB = 8 MiB, 32 KiB below.
        assert_eq!(t.chunk_bytes(64.0 * mib), 131_072.0);
        assert_eq!(t.chunk_bytes(63.0 * mib), 65_536.0);
        assert_eq!(t.chunk_bytes(8.0 * mib), 65_536.0);
        assert_eq!(t.chunk_bytes(7.0 * mib), 32_768.0);
        // A wave at 64 MiB is 128 × 128 KiB = 16 MiB of the size; the bandwidth term paces one
        // of its two network hops: 16 MiB / 368 GB/s = 45.59 µs.
        let got = t.fill_us(64.0 * mib);
        assert!((got - 16.0 * mib * spb * 1e6).abs() < 1e-9, "{got}");
        assert!((got - 45.59).abs() < 0.01, "{got}");
        // 16 MiB: 64 KiB chunks, an 8 MiB wave, 22.8 µs; 1 MiB is all one wave, 2.85 µs.
        assert!((t.fill_us(16.0 * mib) - 22.80).abs() < 0.01);
        assert!((t.fill_us(mib) - 2.85).abs() < 0.01);
    }

    #[test]
    fn one_node_pays_its_chain_and_nothing_without_channels() {
        // 8 GPUs in one node: 14 NVLink hops, no network; one hop is in the bandwidth term.
        let t = TreePipeline {
            channels: 24.0,
            heads: 1.0,
            intra_stages: 14.0,
            net_stages: 0.0,
            intra_bytes_per_s: 240e9,
            net_bytes_per_s: 0.0,
            chunk: ChunkRule::Tree {
                step: 524_288.0,
                halves_by_depth: false,
                depth: 7.0,
            },
        };
        let s = 1024.0 * 1024.0;
        let got = t.fill_us(s);
        assert!((got - 13.0 * s / 240e9 * 1e6).abs() < 1e-9, "{got}");
        let none = TreePipeline { channels: 0.0, ..t };
        assert_eq!(none.fill_us(s), 0.0);
    }
}
