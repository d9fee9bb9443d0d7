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

use crate::model::{
    Catalog, Design, DeviceKind, LibraryChoice, LinkTech, NcclBuffer, NcclRelease, Transport,
};
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

/// Which of NCCL's in-switch reductions the design's hardware offers, so that what the model
/// assumes names only those a reader can meet here.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct InSwitchHardware {
    /// Some NVSwitch domain whose switch and GPUs run NVLS.
    pub nvls: bool,
    /// Some switch whose part reduces in the network (SHARP).
    pub sharp: bool,
}

/// What the query forces of NCCL: the algorithm (NCCL_ALGO) and the protocol (NCCL_PROTO);
/// None where the tuner chooses.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct Forced {
    pub algorithm: Option<super::Algorithm>,
    pub protocol: Option<super::Protocol>,
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

    /// What the model assumes of the library, in a sentence a reader can check: for NCCL,
    /// the release too (`release` where the design names one, else the modelled one), and
    /// NVLS and in-network reduction only where `hardware` offers them.
    pub fn assumes(
        self,
        sharp_enabled: bool,
        release: Option<NcclRelease>,
        buffer: Option<NcclBuffer>,
        forced: Forced,
        hardware: InSwitchHardware,
    ) -> String {
        let nccl = || {
            let defaults = match release {
                Some(r) if r != NcclRelease::MODELLED => format!(
                    "NCCL {r} defaults (its latency tables, NVLS and LL128 rules; other figures as in \
                     {})",
                    NcclRelease::MODELLED
                ),
                _ => format!("NCCL {} defaults", NcclRelease::MODELLED),
            };
            match buffer {
                Some(b) if b != NcclBuffer::DEFAULT => format!("{defaults} but NCCL_BUFFSIZE {b}"),
                _ => defaults,
            }
        };
        // What the tuner is left to choose once NCCL_ALGO or NCCL_PROTO forces the rest.
        // The hierarchical scheme and direct exchanges are not NCCL_ALGO values.
        let algo = |a: super::Algorithm| match a {
            super::Algorithm::Hierarchical | super::Algorithm::Direct | super::Algorithm::Mesh => {
                format!("{a} forced")
            }
            _ => format!("{a} forced (NCCL_ALGO)"),
        };
        let choice = match (forced.algorithm, forced.protocol) {
            (None, None) => "the tuner's choice of algorithm and protocol".to_string(),
            (Some(a), None) => format!("{}, the tuner's choice of protocol", algo(a)),
            (None, Some(p)) => {
                format!(
                    "{} forced (NCCL_PROTO), the tuner's choice of algorithm",
                    p.label()
                )
            }
            (Some(a), Some(p)) => format!("{}, {} forced (NCCL_PROTO)", algo(a), p.label()),
        };
        let nvls = if hardware.nvls {
            ", NVLS where NVSwitch supports it"
        } else {
            ""
        };
        match (self, hardware.sharp && sharp_enabled) {
            (Library::Nccl, false) => {
                let collnet = if hardware.sharp {
                    ", no in-network reduction (CollNet off)"
                } else {
                    ""
                };
                format!("{}: {choice}{nvls}{collnet}; one process per GPU", nccl())
            }
            (Library::Nccl, true) => format!(
                "{} with CollNet set up: {choice}, SHARP in-network reduction where the switches \
                 support it{nvls}; one process per GPU",
                nccl()
            ),
            (Library::MlxRing, _) => "MLX ring backend: reduce-scatter and all-gather round one \
                 ring over TCP, both ways once the array holds 256 KiB per rank per direction"
                .into(),
            (Library::MlxJaccl, _) => "MLX JACCL backend: RDMA over Thunderbolt 5; on a full \
                 mesh (every pair cabled) each rank's array to every peer up to 32 KiB, a \
                 reduce-scatter then an all-gather between every pair above; otherwise a ring, \
                 both ways above 32 KiB"
                .into(),
            (Library::Gloo, _) => "PyTorch's Gloo backend: one-way rings for all-reduce and \
                 all-gather, a ring reduce-scatter then a gather for reduce, a binomial tree for \
                 broadcast, reduce-scatter run as a whole all-reduce; one TCP connection per \
                 peer driven by the CPU; GPU tensors copied to pinned host memory and back; one \
                 GPU per node"
                .into(),
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
        let nodes = Nodes::of(design, catalog);
        match self {
            Library::Nccl => nodes.first_apple.map(|d| {
                format!(
                    "NCCL runs on NVIDIA GPUs, and {} is Apple silicon: choose MLX, or Gloo for \
                     a mix",
                    design.device(d).map_or("a node", |d| d.name.as_str())
                )
            }),
            Library::MlxRing | Library::MlxJaccl => {
                if let Some(d) = nodes.first_other {
                    return Some(format!(
                        "MLX runs on Apple silicon, and {} is not: choose NCCL, or Gloo for a mix",
                        design.device(d).map_or("a node", |d| d.name.as_str())
                    ));
                }
                (self == Library::MlxJaccl && !Nodes::all_links_rdma_tb5(design)).then(|| {
                    "JACCL needs RDMA over Thunderbolt 5 (macOS 26.2 or later) on every link \
                     of the Macs: set the links to Thunderbolt 5 with RDMA, or choose the MLX \
                     ring"
                        .to_string()
                })
            }
            Library::Gloo => {
                let name = |d| design.device(d).map_or("a node", |d| d.name.as_str());
                // Said first where the mix is why Gloo was chosen: one node of the other
                // family (often dropped by mistake) takes the whole design off its library.
                let mix = match (nodes.first_apple, nodes.first_other) {
                    (Some(apple), Some(other)) => format!(
                        "{} is Apple silicon and {} is not, and only Gloo runs both: ",
                        name(apple),
                        name(other)
                    ),
                    _ => String::new(),
                };
                if let Some((d, gpus)) = nodes.first_multi_gpu {
                    return Some(format!(
                        "{mix}{} has {gpus} GPUs: Gloo's ranks in one node meet over loopback \
                         TCP, which the model does not cover (it models one GPU per node)",
                        name(d)
                    ));
                }
                Nodes::any_link(design, |l| l.tech == LinkTech::InfiniBand).then(|| {
                    "Gloo runs over TCP, and these nodes connect by InfiniBand: IP over \
                     InfiniBand is not modelled"
                        .to_string()
                })
            }
        }
    }

    /// The library by node family: MLX when every GPU is Apple silicon (JACCL when every
    /// link between those nodes is Thunderbolt 5 with RDMA, else the TCP ring), NCCL when
    /// none is, and Gloo for a mix: PyTorch's CPU backend is the one library both run.
    pub fn by_node_family(design: &Design, catalog: &Catalog) -> Library {
        let nodes = Nodes::of(design, catalog);
        match (nodes.first_apple, nodes.first_other) {
            (Some(_), Some(_)) => Library::Gloo,
            (Some(_), None) if Nodes::all_links_rdma_tb5(design) => Library::MlxJaccl,
            (Some(_), None) => Library::MlxRing,
            (None, _) => Library::Nccl,
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

    /// On a full mesh, the array size above which JACCL's all-reduce runs as a reduce-scatter
    /// then an all-gather rather than each rank's whole array to every peer
    /// (`MeshGroup::all_reduce`: `size_ > 2 && n_bytes > 32 * 1024`, MLX PR #3901). None
    /// where it never splits: two ranks, or a library without the mesh.
    pub(crate) fn mesh_splits_above(self, ranks: u32) -> Option<f64> {
        (self == Library::MlxJaccl && ranks > 2).then_some(32.0 * 1024.0)
    }
}

/// What the libraries ask of a design's GPU nodes, in one pass: the first Apple node, the
/// first other one, the first with several GPUs; nodes whose GPU the catalog lacks are left
/// out. Parts are looked up once per run of equal parts (a design's nodes mostly share one);
/// links are read only for MLX and Gloo.
struct Nodes {
    first_apple: Option<crate::model::DeviceId>,
    first_other: Option<crate::model::DeviceId>,
    first_multi_gpu: Option<(crate::model::DeviceId, u32)>,
}

impl Nodes {
    fn of(design: &Design, catalog: &Catalog) -> Nodes {
        let mut out = Nodes {
            first_apple: None,
            first_other: None,
            first_multi_gpu: None,
        };
        let mut last: Option<(&crate::model::PartId, Option<bool>)> = None;
        for d in &design.devices {
            let DeviceKind::GpuNode(n) = &d.kind else {
                continue;
            };
            if n.gpu_count == 0 {
                continue;
            }
            let apple = match last {
                Some((part, apple)) if *part == n.gpu => apple,
                _ => {
                    let apple = catalog.gpu(&n.gpu).map(|g| g.arch.is_apple());
                    last = Some((&n.gpu, apple));
                    apple
                }
            };
            // A GPU the catalog lacks is of no family: the unknown-part check names it, and
            // it must not turn a design of Macs into a "mix" that only Gloo runs.
            let Some(apple) = apple else {
                continue;
            };
            let first = if apple {
                &mut out.first_apple
            } else {
                &mut out.first_other
            };
            first.get_or_insert(d.id);
            if n.gpu_count > 1 && out.first_multi_gpu.is_none() {
                out.first_multi_gpu = Some((d.id, n.gpu_count));
            }
        }
        out
    }

    /// Whether any link at a GPU node satisfies `f`.
    fn any_link(design: &Design, f: impl Fn(&crate::model::Link) -> bool) -> bool {
        let is_node = |id| {
            design
                .device(id)
                .is_some_and(|d| matches!(&d.kind, DeviceKind::GpuNode(n) if n.gpu_count > 0))
        };
        design
            .links
            .iter()
            .filter(|l| is_node(l.a.device) || is_node(l.b.device))
            .any(f)
    }

    /// Every link at a GPU node is Thunderbolt 5 with RDMA.
    fn all_links_rdma_tb5(design: &Design) -> bool {
        !Nodes::any_link(design, |l| {
            !(l.tech == LinkTech::Thunderbolt5 && l.transport == Transport::Rdma)
        })
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

    #[test]
    fn a_mix_of_macs_and_nvidia_gpus_runs_gloo_under_auto() {
        let catalog = Catalog::builtin();
        let mut design = macs("tb5", Transport::Rdma);
        let Some(DeviceKind::GpuNode(node)) = design.devices.iter_mut().map(|d| &mut d.kind).next()
        else {
            panic!("a Mac first");
        };
        node.gpu = PartId::new("rtx-4090");
        assert_eq!(Library::of(&design, &catalog), Library::Gloo);
        assert_eq!(Library::Gloo.unavailable(&design, &catalog), None);
        let first = design.devices[0].name.clone();
        assert_eq!(
            Library::MlxJaccl.unavailable(&design, &catalog),
            Some(format!(
                "MLX runs on Apple silicon, and {first} is not: choose NCCL, or Gloo for a mix"
            ))
        );
        assert!(
            Library::Nccl
                .unavailable(&design, &catalog)
                .is_some_and(|why| why.starts_with("NCCL runs on NVIDIA GPUs, and ")),
        );
        // Two GPUs in that node: Gloo's model stops there, and says why.
        if let DeviceKind::GpuNode(node) = &mut design.devices[0].kind {
            node.gpu_count = 2;
        }
        // The mix that chose Gloo is named first: a stray node of the other family is why.
        let mac = design.devices[1].name.clone();
        assert_eq!(
            Library::Gloo.unavailable(&design, &catalog),
            Some(format!(
                "{mac} is Apple silicon and {first} is not, and only Gloo runs both: {first} \
                 has 2 GPUs: Gloo's ranks in one node meet over loopback TCP, which the model \
                 does not cover (it models one GPU per node)"
            ))
        );
    }

    #[test]
    fn a_gpu_the_catalog_lacks_leaves_macs_on_mlx() {
        let catalog = Catalog::builtin();
        let mut design = macs("tb5", Transport::Rdma);
        if let DeviceKind::GpuNode(node) = &mut design.devices[0].kind {
            node.gpu = PartId::new("m9-ultra");
        }
        assert_eq!(Library::of(&design, &catalog), Library::MlxJaccl);
    }
}
