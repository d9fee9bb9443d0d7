//! The GPU nodes' side of a fabric: nodes, GPUs, scale-up domains and their port arcs.

use super::build::{DevLink, DeviceIndex, runs_nccl_sockets};
use super::scratch::reuse;
use super::staged_why;
use super::{
    ABSENT_ARC, ArcId, Domain, Gpu, GpuInterconnect, Nic, Node, Resource, Vertex,
    usable_bytes_per_s,
};
use crate::analysis::collective::CollectiveError;
use crate::analysis::collective::efficiency as eff;
use crate::analysis::collective::latency::ArchRow;
use crate::model::catalog::PartSpec;
use crate::model::device::{pcie_bandwidth, pcie_x16_bandwidth};
use crate::model::{Catalog, Design, DeviceId, DeviceKind, PcieVia, ScaleUp};
use std::collections::HashMap;

/// The GPU nodes' side of the fabric: nodes, GPUs, scale-up domains, and the port arcs (GPU
/// scale-up and PCIe, NIC PCIe), numbered after the link arcs. Their usable capacity and
/// NVLink flag go straight onto the fabric's per-arc lists.
pub(super) struct NodePart {
    pub(super) nodes: Vec<Node>,
    pub(super) nics: Vec<Nic>,
    pub(super) other_access: Vec<(ArcId, ArcId, Vertex)>,
    pub(super) gpus: Vec<Gpu>,
    /// Why network data passes through host memory (`staged_why` bits over every NIC).
    pub(super) staged_why: u8,
    pub(super) domains: Vec<Domain>,
    pub(super) line: Vec<f64>,
    pub(super) resource: Vec<Resource>,
}

/// Kept lists for `NodePart::build` to fill again.
pub(super) struct NodeLists {
    pub(super) line: Vec<f64>,
    pub(super) resource: Vec<Resource>,
    pub(super) gpus: Vec<Gpu>,
    pub(super) nics: Vec<Nic>,
    pub(super) other_access: Vec<(ArcId, ArcId, Vertex)>,
}

impl NodePart {
    pub(super) fn build<'d>(
        design: &'d Design,
        catalog: &Catalog,
        index_of: &DeviceIndex,
        links_of: &(dyn Fn(usize) -> &'d [DevLink] + Sync),
        (usable, nvlink): (&mut Vec<f64>, &mut Vec<bool>),
        (node_total, gpu_total, nic_total, port_estimate): (usize, usize, usize, usize),
        kept: NodeLists,
    ) -> Result<NodePart, CollectiveError> {
        let mut line = reuse(kept.line, port_estimate);
        let mut resource = reuse(kept.resource, port_estimate);
        // Scale-up domains: rack domains by device, every other node on its own.
        let mut domains: Vec<Domain> = Vec::new();
        let mut rack_domain: HashMap<DeviceId, u32> = HashMap::new();
        let mut nodes: Vec<Node> = Vec::with_capacity(node_total);
        let mut staged = 0u8;
        let mut nics = reuse(kept.nics, nic_total);
        let mut other_access = reuse(kept.other_access, nic_total);
        let mut gpus = reuse(kept.gpus, gpu_total);
        // Consecutive nodes usually share parts: remember the last lookups.
        let mut last_gpu: Option<(&crate::model::PartId, &crate::model::catalog::GpuSpec)> = None;
        let mut last_nic: Option<(&crate::model::PartId, Option<(u8, u8)>)> = None;
        for (i, d) in design.devices.iter().enumerate() {
            let DeviceKind::GpuNode(n) = &d.kind else {
                continue;
            };
            let gpu_spec = match last_gpu {
                Some((id, spec)) if *id == n.gpu => spec,
                _ => {
                    let spec = catalog
                        .gpu(&n.gpu)
                        .ok_or_else(|| CollectiveError::UnknownPart {
                            part: n.gpu.to_string(),
                            device: d.id,
                        })?;
                    last_gpu = Some((&n.gpu, spec));
                    spec
                }
            };
            let arch = ArchRow::of(gpu_spec.arch);
            let node_index = nodes.len() as u32;
            let rack = n.domain.and_then(|dom| {
                let di = index_of.get(dom)?;
                match &design.devices[di].kind {
                    DeviceKind::NvSwitchDomain(nd) => {
                        Some((dom, catalog.domain(&nd.model).cloned()))
                    }
                    _ => None,
                }
            });
            let domain = match &rack {
                Some((dom, _)) => *rack_domain.entry(*dom).or_insert_with(|| {
                    domains.push(Domain::default());
                    domains.len() as u32 - 1
                }),
                None => {
                    domains.push(Domain::default());
                    domains.len() as u32 - 1
                }
            };
            let members = &mut domains[domain as usize];
            members.nodes += 1;
            members.gpus += n.gpu_count;

            let gpu_pcie_gen = gpu_spec.pcie_generation;
            let (intra, p2p, su_gbit_s, su_tech_nvlink) = match (&rack, &n.scale_up) {
                (Some((_, spec)), scale_up) => {
                    let per_gpu = spec
                        .as_ref()
                        .map(|s| s.per_gpu_gbit_s.gbit_s())
                        .or(match scale_up {
                            ScaleUp::NvSwitch { per_gpu_gbit_s, .. } => {
                                Some(per_gpu_gbit_s.gbit_s())
                            }
                            _ => None,
                        })
                        .unwrap_or(0.0);
                    let generation = spec.as_ref().map_or(5, |s| s.nvlink_generation);
                    (
                        GpuInterconnect::NvSwitch {
                            nvls: generation >= 4,
                        },
                        true,
                        per_gpu,
                        true,
                    )
                }
                (
                    None,
                    ScaleUp::NvSwitch {
                        generation,
                        per_gpu_gbit_s,
                    },
                ) => (
                    GpuInterconnect::NvSwitch {
                        nvls: *generation >= 3,
                    },
                    true,
                    per_gpu_gbit_s.gbit_s(),
                    true,
                ),
                (
                    None,
                    ScaleUp::NvLinkBridgePairs {
                        per_gpu_gbit_s,
                        peer_to_peer,
                        ..
                    },
                ) => (
                    GpuInterconnect::BridgePairs,
                    *peer_to_peer,
                    per_gpu_gbit_s.gbit_s(),
                    true,
                ),
                (None, ScaleUp::Pcie { peer_to_peer, .. }) => {
                    (GpuInterconnect::Pcie, *peer_to_peer, 0.0, false)
                }
                (None, ScaleUp::UnifiedMemory) => (GpuInterconnect::Unified, true, 0.0, false),
            };
            let node_pcie_gen = match &n.scale_up {
                ScaleUp::Pcie { generation, .. } => *generation,
                ScaleUp::NvLinkBridgePairs {
                    pcie_generation, ..
                } => *pcie_generation,
                _ => gpu_pcie_gen,
            };
            let pcie_gen = gpu_pcie_gen.min(node_pcie_gen.max(1));
            let gpu_pcie = usable_bytes_per_s(pcie_x16_bandwidth(pcie_gen).gbit_s(), eff::PCIE);
            let su = usable_bytes_per_s(su_gbit_s, eff::nvlink_efficiency(arch));
            // Every NVLink arc of the node is a GPU's scale-up port: its line rate is this.
            let su_line = usable_bytes_per_s(su_gbit_s, 1.0);

            let first_gpu = gpus.len() as u32;
            let k = n.nics.len() as u32;
            let mut push = |cap: f64, what: Resource, nvl: bool| {
                let rate = if nvl { su_line } else { cap / eff::PCIE };
                usable.push(cap);
                line.push(rate);
                resource.push(what);
                nvlink.push(nvl);
                usable.len() as ArcId - 1
            };
            for local in 0..n.gpu_count {
                let (su_up, su_down) = match intra {
                    GpuInterconnect::NvSwitch { .. } => (
                        push(
                            su,
                            Resource::ScaleUp {
                                node: node_index,
                                gpu: local,
                                up: true,
                            },
                            su_tech_nvlink,
                        ),
                        push(
                            su,
                            Resource::ScaleUp {
                                node: node_index,
                                gpu: local,
                                up: false,
                            },
                            su_tech_nvlink,
                        ),
                    ),
                    GpuInterconnect::BridgePairs if (local ^ 1) < n.gpu_count => (
                        push(
                            su,
                            Resource::Bridge {
                                node: node_index,
                                from: local,
                            },
                            true,
                        ),
                        ABSENT_ARC,
                    ),
                    _ => (ABSENT_ARC, ABSENT_ARC),
                };
                let (pcie_up, pcie_down) = if intra == GpuInterconnect::Unified {
                    (ABSENT_ARC, ABSENT_ARC)
                } else {
                    (
                        push(
                            gpu_pcie,
                            Resource::GpuPcie {
                                node: node_index,
                                gpu: local,
                                up: true,
                            },
                            false,
                        ),
                        push(
                            gpu_pcie,
                            Resource::GpuPcie {
                                node: node_index,
                                gpu: local,
                                up: false,
                            },
                            false,
                        ),
                    )
                };
                let nic = if k == 0 {
                    None
                } else {
                    Some((u64::from(local) * u64::from(k) / u64::from(n.gpu_count.max(1))) as u32)
                };
                gpus.push(Gpu {
                    node: node_index,
                    local,
                    su_up,
                    su_down,
                    pcie_up,
                    pcie_down,
                    nic,
                });
            }

            let links = links_of(i);
            let first_nic = nics.len() as u32;
            // Whether NCCL lets a NIC reach this node's GPU memory by default: the GPU must be
            // a PCIe peer, and the NIC no farther than a PCIe switch they share (paths.cc,
            // `ncclTopoCheckGdr`: NCCL_NET_GDR_LEVEL defaults to PXB). GPUs that meet at the
            // host bridge leave the path crossing it (PHB); on a node of one GPU the NIC
            // slot's setting stands.
            let at_host_bridge = n.gpus_meet_at_host_bridge();
            let peer = gpu_spec.peer_to_peer;
            let gdr_reach = peer && !at_host_bridge;
            for (ni, slot) in n.nics.iter().enumerate() {
                let part_pcie = match last_nic {
                    Some((id, g)) if *id == slot.part => g,
                    _ => {
                        let g = match catalog.get(&slot.part).map(|p| &p.spec) {
                            Some(PartSpec::Nic(spec)) => {
                                Some((spec.pcie_generation, spec.pcie_lanes))
                            }
                            _ => None,
                        };
                        last_nic = Some((&slot.part, g));
                        g
                    }
                };
                let (nic_gen, nic_lanes) = part_pcie.unwrap_or((node_pcie_gen, 16));
                let cable = links.iter().find(|l| l.nic == ni as u32);
                let access = cable.map(|l| (l.out, l.arc_in, l.far));
                let on_sockets = cable.is_some_and(|l| sockets_on(design, l));
                let why = staged_why::of(peer, !slot.gpudirect, at_host_bridge, on_sockets);
                // Staged data crosses the link a GPU and its NIC share into the host twice each
                // way (GPU to memory and memory to NIC, and back): where PCIe switches hold
                // them (GPUs behind a switch, NVSwitch boards). GPUs on the CPU's own root
                // ports (at the host bridge, a workstation's bridged pairs, a node of one GPU)
                // share none: the NIC's own link carries it once, as with GPUDirect.
                let shares_uplink = n.gpu_count > 1
                    && matches!(
                        n.scale_up,
                        ScaleUp::NvSwitch { .. }
                            | ScaleUp::Pcie {
                                via: PcieVia::Switch,
                                ..
                            }
                    );
                let share = if why != 0 && shares_uplink {
                    eff::NO_GPUDIRECT_PCIE_SHARE
                } else {
                    1.0
                };
                let cap = usable_bytes_per_s(
                    pcie_bandwidth(nic_gen.min(node_pcie_gen.max(1)).max(1), nic_lanes).gbit_s(),
                    eff::PCIE * share,
                );
                let rate = cap / (eff::PCIE * share);
                for up in [true, false] {
                    usable.push(cap);
                    line.push(rate);
                    resource.push(Resource::NicPcie {
                        node: node_index,
                        nic: ni as u32,
                        up,
                    });
                    nvlink.push(false);
                }
                let up = usable.len() as ArcId - 2;
                if access.is_some() {
                    staged |= why;
                }
                nics.push(Nic {
                    pcie_up: up,
                    pcie_down: up + 1,
                    access,
                    host_staged: why != 0,
                });
            }
            let nic_ports = k;
            let first_other = other_access.len() as u32;
            other_access.extend(
                links
                    .iter()
                    .filter(|l| l.nic >= nic_ports)
                    .map(|l| (l.out, l.arc_in, l.far)),
            );
            let mut other_links = links.iter().filter(|l| l.nic >= nic_ports).peekable();
            let other_host_staged = match other_links.peek() {
                Some(_) => {
                    let sockets = other_links.any(|l| sockets_on(design, l));
                    // The board's own ports have no GPUDirect setting of their own.
                    let why = staged_why::of(peer, false, at_host_bridge, sockets);
                    staged |= why;
                    why != 0
                }
                None => !gdr_reach || nics[first_nic as usize..].iter().any(|n| n.host_staged),
            };
            if other_access.len() as u32 == first_other {
                other_access.extend(links.iter().map(|l| (l.out, l.arc_in, l.far)));
            }
            nodes.push(Node {
                device: d.id,
                vertex: i as Vertex,
                first_gpu,
                gpu_count: n.gpu_count,
                interconnect: intra,
                p2p,
                domain,
                nics: first_nic..nics.len() as u32,
                other_access: first_other..other_access.len() as u32,
                other_host_staged,
                arch,
                compute_capability: gpu_spec.compute_capability().unwrap_or(0),
            });
        }
        Ok(NodePart {
            nodes,
            nics,
            other_access,
            gpus,
            staged_why: staged,
            domains,
            line,
            resource,
        })
    }
}

/// Whether the design link a device's link end stands for runs NCCL's sockets.
fn sockets_on(design: &Design, l: &DevLink) -> bool {
    runs_nccl_sockets(&design.links[(l.out / 2) as usize])
}
