//! The collective library a design's GPUs run. It decides which algorithms and protocols a
//! collective can use and what a step costs: NCCL on NVIDIA GPUs; on Apple silicon MLX's
//! distributed backends, which run the collective on the CPU over TCP (`ring`) or RDMA over
//! Thunderbolt 5 (`jaccl`); PyTorch's Gloo backend where the user runs it. MLX and Gloo have
//! no LL/LL128 protocols and none of NCCL's per-step constants. The design chooses
//! (`Design::library`); under auto, the node family does.
//!
//! Sources: ml-explore/mlx `mlx/distributed/ring/ring.cpp` and `jaccl/` at 846d1762 (v0.32);
//! pytorch/gloo `gloo/allreduce.cc`, `broadcast.cc`, `alltoall.cc`, `transport/tcp/` at
//! cc441984; pytorch `torch/csrc/distributed/c10d/ProcessGroupGloo.cpp` at c194358a.

use crate::model::catalog::GpuArch;
use crate::model::{Catalog, Design, DeviceKind, LibraryChoice, LinkTech, Transport};
use serde::Serialize;

#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum Library {
    /// NVIDIA's NCCL with its defaults (tuning tables of v2.30; CollNet only where the design
    /// sets it up; NVLS where NVSwitch supports it).
    Nccl,
    /// MLX's `ring` backend: TCP over Thunderbolt or Ethernet IP, one ring (both directions
    /// for large arrays).
    MlxRing,
    /// MLX's JACCL backend: RDMA over Thunderbolt 5 (macOS 26.2 and later).
    MlxJaccl,
    /// PyTorch's `gloo` process group: the CPU runs rings over one TCP connection per peer;
    /// GPU tensors are staged through pinned host memory.
    Gloo,
}

impl Library {
    pub fn label(self) -> &'static str {
        match self {
            Library::Nccl => "NCCL",
            Library::MlxRing => "MLX ring (TCP)",
            Library::MlxJaccl => "MLX JACCL (RDMA)",
            Library::Gloo => "Gloo (PyTorch, TCP)",
        }
    }

    /// What the model assumes of the library, in a sentence a reader can check.
    pub fn assumes(self, sharp_enabled: bool) -> &'static str {
        match (self, sharp_enabled) {
            (Library::Nccl, false) => {
                "NCCL defaults: the tuner's choice of algorithm and protocol, NVLS where \
                 NVSwitch supports it, no in-network reduction (CollNet off); one process per \
                 GPU"
            }
            (Library::Nccl, true) => {
                "NCCL defaults with CollNet set up: SHARP in-network reduction where the \
                 switches support it, NVLS where NVSwitch supports it; one process per GPU"
            }
            (Library::MlxRing, _) => {
                "MLX ring backend: reduce-scatter and all-gather round one ring over TCP, both \
                 ways once the array holds 256 KiB per rank per direction"
            }
            (Library::MlxJaccl, _) => {
                "MLX JACCL backend: RDMA over Thunderbolt 5, a ring both ways above 32 KiB"
            }
            (Library::Gloo, _) => {
                "PyTorch's Gloo backend: one-way rings for all-reduce and all-gather, a binomial \
                 tree for broadcast, reduce-scatter run as a whole all-reduce; one TCP \
                 connection per peer driven by the CPU; GPU tensors copied to pinned host \
                 memory and back; one GPU per node"
            }
        }
    }

    pub fn is_mlx(self) -> bool {
        matches!(self, Library::MlxRing | Library::MlxJaccl)
    }

    /// NCCL's protocols, algorithms and constants apply; the other libraries move plain
    /// buffers with a step per message.
    pub fn is_nccl(self) -> bool {
        self == Library::Nccl
    }

    /// The library of a design: the one it chooses, or under auto its node family's.
    pub fn of(design: &Design, catalog: &Catalog) -> Library {
        Library::chosen(design.library).unwrap_or_else(|| Library::by_node_family(design, catalog))
    }

    /// The library a choice names; None for auto.
    pub fn chosen(choice: LibraryChoice) -> Option<Library> {
        match choice {
            LibraryChoice::Auto => None,
            LibraryChoice::Nccl => Some(Library::Nccl),
            LibraryChoice::MlxRing => Some(Library::MlxRing),
            LibraryChoice::MlxJaccl => Some(Library::MlxJaccl),
            LibraryChoice::Gloo => Some(Library::Gloo),
        }
    }

    /// Why this library cannot run the design's collectives, or None when it can (or the
    /// design has no GPUs to judge by): NCCL needs NVIDIA GPUs, MLX Apple silicon, JACCL
    /// RDMA over Thunderbolt 5 on every link of a node; the Gloo model covers one GPU per
    /// node on TCP (ranks in one node meet over loopback, and IP over InfiniBand, neither of
    /// which it models).
    pub fn unavailable(self, design: &Design, catalog: &Catalog) -> Option<String> {
        let nodes: Vec<_> = design
            .devices
            .iter()
            .filter_map(|d| match &d.kind {
                DeviceKind::GpuNode(n) if n.gpu_count > 0 => Some((d, n)),
                _ => None,
            })
            .collect();
        let apple = |part| {
            catalog
                .gpu(part)
                .is_some_and(|g| matches!(g.arch, GpuArch::AppleM2 | GpuArch::AppleM3))
        };
        let node_links = || {
            design.links.iter().filter(|l| {
                nodes
                    .iter()
                    .any(|(d, _)| l.a.device == d.id || l.b.device == d.id)
            })
        };
        match self {
            Library::Nccl => nodes.iter().find(|(_, n)| apple(&n.gpu)).map(|(d, _)| {
                format!(
                    "NCCL runs on NVIDIA GPUs, and {} is Apple silicon: choose MLX or Gloo",
                    d.name
                )
            }),
            Library::MlxRing | Library::MlxJaccl => {
                if let Some((d, _)) = nodes.iter().find(|(_, n)| !apple(&n.gpu)) {
                    return Some(format!(
                        "MLX runs on Apple silicon, and {} is not: choose NCCL or Gloo",
                        d.name
                    ));
                }
                let rdma_tb5 = |l: &&crate::model::Link| {
                    l.tech == LinkTech::Thunderbolt5 && l.transport == Transport::Rdma
                };
                (self == Library::MlxJaccl && !node_links().all(|l| rdma_tb5(&l))).then(|| {
                    "JACCL needs RDMA over Thunderbolt 5 (macOS 26.2 or later) on every link \
                     of the Macs: set the links to Thunderbolt 5 with RDMA, or choose the MLX \
                     ring"
                        .to_string()
                })
            }
            Library::Gloo => {
                if let Some((d, n)) = nodes.iter().find(|(_, n)| n.gpu_count > 1) {
                    return Some(format!(
                        "{} has {} GPUs: Gloo's ranks in one node meet over loopback TCP, \
                         which the model does not cover (it models one GPU per node)",
                        d.name, n.gpu_count
                    ));
                }
                node_links()
                    .any(|l| l.tech == LinkTech::InfiniBand)
                    .then(|| {
                        "Gloo runs over TCP, and these nodes connect by InfiniBand: IP over \
                         InfiniBand is not modelled"
                            .to_string()
                    })
            }
        }
    }

    /// The library by node family: MLX when every GPU is Apple silicon (JACCL when every
    /// link between those nodes is Thunderbolt 5 with RDMA, else the TCP ring), NCCL otherwise.
    pub fn by_node_family(design: &Design, catalog: &Catalog) -> Library {
        let mut any_gpu = false;
        for d in &design.devices {
            if let DeviceKind::GpuNode(n) = &d.kind
                && n.gpu_count > 0
            {
                any_gpu = true;
                let apple = catalog
                    .gpu(&n.gpu)
                    .is_some_and(|g| matches!(g.arch, GpuArch::AppleM2 | GpuArch::AppleM3));
                if !apple {
                    return Library::Nccl;
                }
            }
        }
        if !any_gpu {
            return Library::Nccl;
        }
        let is_node = |id| {
            design
                .device(id)
                .is_some_and(|d| matches!(d.kind, DeviceKind::GpuNode(_)))
        };
        let rdma_tb5 = design
            .links
            .iter()
            .filter(|l| is_node(l.a.device) || is_node(l.b.device))
            .all(|l| l.tech == LinkTech::Thunderbolt5 && l.transport == Transport::Rdma);
        if rdma_tb5 {
            Library::MlxJaccl
        } else {
            Library::MlxRing
        }
    }

    /// The array size from which the ring runs both ways round (each direction carrying
    /// half). MLX ring (`RingGroup::all_reduce`): `n_reduces = min(#sockets, nbytes / (size ×
    /// 256 KiB))` parts, even parts clockwise and odd ones counter-clockwise, so two parts,
    /// one each way, from 2 × 256 KiB per rank. JACCL ring: both ways above 32 KiB.
    /// NCCL and Gloo: never (their rings run one way; Gloo's sends to rank − 1).
    pub(crate) fn both_ways_from_bytes(self, ranks: u32) -> Option<f64> {
        match self {
            Library::Nccl => None,
            Library::MlxRing => Some(2.0 * f64::from(ranks) * 256.0 * 1024.0),
            Library::MlxJaccl => Some(32.0 * 1024.0),
            Library::Gloo => None,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::generate::{Template, TemplateSpec, generate};
    use crate::model::PartId;

    fn macs(link: &str, transport: Transport) -> Design {
        let mut spec = TemplateSpec::new(Template::Mesh);
        spec.nodes = Some(4);
        spec.node = Some(PartId::new("mac-studio-m3-ultra"));
        spec.link = Some(PartId::new(link));
        let mut design = generate(&spec, &Catalog::builtin()).expect("a Mac mesh");
        // Set by hand: the generator refuses RDMA over Thunderbolt 4, a file need not.
        for l in &mut design.links {
            l.transport = transport;
        }
        design
    }

    #[test]
    fn apple_silicon_runs_mlx_and_rdma_over_tb5_runs_jaccl() {
        let catalog = Catalog::builtin();
        assert_eq!(
            Library::of(&macs("tb5", Transport::Rdma), &catalog),
            Library::MlxJaccl
        );
        assert_eq!(
            Library::of(&macs("tb5", Transport::Tcp), &catalog),
            Library::MlxRing
        );
        // Thunderbolt 4 has no RDMA: the TCP ring whatever the file says.
        assert_eq!(
            Library::of(&macs("tb4", Transport::Rdma), &catalog),
            Library::MlxRing
        );
        let mut spec = TemplateSpec::new(Template::Single);
        spec.node = Some(PartId::new("dgx-h100"));
        let dgx = generate(&spec, &catalog).expect("a DGX");
        assert_eq!(Library::of(&dgx, &catalog), Library::Nccl);
    }

    #[test]
    fn the_mlx_ring_turns_both_ways_at_256_kib_per_rank_and_direction() {
        // 4 ranks: two parts of 4 × 256 KiB each from 2 MiB.
        assert_eq!(Library::MlxRing.both_ways_from_bytes(4), Some(2_097_152.0));
        assert_eq!(Library::MlxJaccl.both_ways_from_bytes(4), Some(32_768.0));
        assert_eq!(Library::Nccl.both_ways_from_bytes(4), None);
    }
}
