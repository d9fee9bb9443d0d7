//! Builds the fabric: the links' arcs (in two halves side by side on large designs), then the
//! GPU nodes' side and the routing graph, each from the lists the scratch kept.

use super::node_part::{NodeLists, NodePart};
use super::routing_graph::RoutingGraph;
use super::scratch::{Scratch, reuse};
use super::{ArcId, Fabric, FxBuild, Vertex, usable_bytes_per_s};
use crate::analysis::collective::efficiency as eff;
use crate::analysis::collective::{CollectiveError, Library};
use crate::model::{
    Catalog, Design, DeviceId, DeviceKind, LengthClass, Link, LinkId, LinkState, LinkTech, Port,
    Transport,
};
use std::collections::HashMap;

/// Device index by id: a dense table when ids are compact (the usual case), else a map.
pub(super) enum DeviceIndex {
    Dense(Vec<u32>),
    Sparse(HashMap<DeviceId, u32, FxBuild>),
}

impl DeviceIndex {
    fn new(design: &Design) -> Self {
        let n = design.devices.len();
        let max_id = design.devices.iter().map(|d| d.id.0).max().unwrap_or(0) as usize;
        if max_id <= 4 * n + 1024 {
            let mut table = vec![u32::MAX; max_id + 1];
            for (i, d) in design.devices.iter().enumerate() {
                table[d.id.0 as usize] = i as u32;
            }
            DeviceIndex::Dense(table)
        } else {
            DeviceIndex::Sparse(
                design
                    .devices
                    .iter()
                    .enumerate()
                    .map(|(i, d)| (d.id, i as u32))
                    .collect(),
            )
        }
    }

    pub(super) fn get(&self, id: DeviceId) -> Option<usize> {
        match self {
            DeviceIndex::Dense(t) => t
                .get(id.0 as usize)
                .copied()
                .filter(|&i| i != u32::MAX)
                .map(|i| i as usize),
            DeviceIndex::Sparse(m) => m.get(&id).map(|&i| i as usize),
        }
    }
}

/// A link end's slot when it is not on a NIC: above every NIC slot.
pub(super) const NOT_A_NIC: u32 = u32::MAX;

/// A routable link as one device sees it.
#[derive(Debug, Clone, Copy)]
pub(super) struct DevLink {
    /// The NIC slot the link is on at this device, or `NOT_A_NIC`.
    pub nic: u32,
    pub out: ArcId,
    pub arc_in: ArcId,
    pub far: Vertex,
}

/// Designs with at least this many links build the fabric's halves on two threads (when
/// there are two cores): below it a thread costs more than it saves.
const PARALLEL_LINKS: usize = 1 << 14;

/// Whether to build a design's fabric in two halves side by side: as `forced`, else by size.
fn split_build(links: usize, forced: Option<bool>) -> bool {
    forced.unwrap_or(links >= PARALLEL_LINKS)
}

/// Device flags for the link pass: a rack's NVSwitch domain, a switch without lossless
/// Ethernet.
const DOMAIN: u8 = 1;
const LOSSY_SWITCH: u8 = 2;
const SWITCH: u8 = 4;

/// The per-link lists for a run of links, to fill (a whole design's or half of it).
struct LinkFacts<'a> {
    /// Device index and NIC slot of each end (u32::MAX when an end is missing, and for the
    /// slot, `NOT_A_NIC` when the end is on another kind of port).
    ends: &'a mut [[u32; 4]],
    routable: &'a mut [bool],
    /// Two arcs per link: usable bytes per second and NVLink flag.
    usable: &'a mut [f64],
    nvlink: &'a mut [bool],
    line: &'a mut [f64],
    ids: &'a mut [LinkId],
    latency_us: &'a mut [f64],
}

impl<'a> LinkFacts<'a> {
    fn split_at(self, mid: usize) -> (LinkFacts<'a>, LinkFacts<'a>) {
        let (ends, ends2) = self.ends.split_at_mut(mid);
        let (routable, routable2) = self.routable.split_at_mut(mid);
        let (usable, usable2) = self.usable.split_at_mut(2 * mid);
        let (nvlink, nvlink2) = self.nvlink.split_at_mut(2 * mid);
        let (line, line2) = self.line.split_at_mut(mid);
        let (ids, ids2) = self.ids.split_at_mut(mid);
        let (latency_us, latency_us2) = self.latency_us.split_at_mut(mid);
        (
            LinkFacts {
                ends,
                routable,
                usable,
                nvlink,
                line,
                ids,
                latency_us,
            },
            LinkFacts {
                ends: ends2,
                routable: routable2,
                usable: usable2,
                nvlink: nvlink2,
                line: line2,
                ids: ids2,
                latency_us: latency_us2,
            },
        )
    }

    /// Links usable for traffic: both ends exist, distinct, not failed, capacity > 0, and not
    /// attached to a rack domain device (NVLink inside a rack is modelled from the nodes).
    /// Returns whether an Ethernet link usable for traffic runs EFA (`Fabric::efa`).
    fn fill(
        self,
        links: &[Link],
        index_of: &DeviceIndex,
        dev_flags: &[u8],
        library: Library,
    ) -> bool {
        let mut efa = false;
        for (li, link) in links.iter().enumerate() {
            let ia = index_of.get(link.a.device);
            let ib = index_of.get(link.b.device);
            let cap = link.capacity().gbit_s();
            let mut lossless = true;
            if let (Some(ia), Some(ib)) = (ia, ib) {
                let (fa, fb) = (dev_flags[ia], dev_flags[ib]);
                lossless = (fa | fb) & LOSSY_SWITCH == 0;
                self.routable[li] =
                    ia != ib && cap.is_finite() && cap > 0.0 && (fa | fb) & DOMAIN == 0;
                let nic = |port: Port| port.nic().unwrap_or(NOT_A_NIC);
                self.ends[li] = [ia as u32, ib as u32, nic(link.a.port), nic(link.b.port)];
            }
            let e = eff::library_link_efficiency(library, link.tech, link.transport, lossless);
            let (usable, line) = if self.routable[li] {
                (usable_bytes_per_s(cap, e), usable_bytes_per_s(cap, 1.0))
            } else {
                (0.0, 0.0)
            };
            let is_nvlink = matches!(link.tech, LinkTech::NvLink | LinkTech::NvLinkBridge);
            self.usable[2 * li] = usable;
            self.usable[2 * li + 1] = usable;
            self.nvlink[2 * li] = is_nvlink;
            self.nvlink[2 * li + 1] = is_nvlink;
            self.line[li] = line;
            self.ids[li] = link.id;
            self.latency_us[li] = eff::stack_latency_us(
                link.tech,
                eff::transport_of(library, link.tech, link.transport),
            ) + eff::propagation_us(link.length == LengthClass::CrossRack);
            efa |= self.routable[li]
                && link.transport == Transport::Efa
                && link.tech.is_ethernet_family();
        }
        efa
    }
}

/// Builds the fabric into the lists `scratch` kept, in two halves side by side when
/// `in_halves` says so (None: by the design's size). Errors name unknown parts; nothing here
/// panics on user data.
pub(crate) fn build(
    design: &Design,
    catalog: &Catalog,
    scratch: &Scratch,
    in_halves: Option<bool>,
) -> Result<Fabric, CollectiveError> {
    let library = Library::of(design, catalog);
    if let Some(reason) = library.unavailable(design, catalog) {
        return Err(CollectiveError::LibraryUnavailable { library, reason });
    }
    let n_dev = design.devices.len();
    let index_of = DeviceIndex::new(design);
    let mut kept = scratch.take();
    // Large designs build in halves side by side: the calling thread and a kept helper.
    let halves = crate::analysis::collective::helpers::pool()
        .filter(|_| split_build(design.links.len(), in_halves));
    let is_switch = |i: usize| matches!(design.devices[i].kind, DeviceKind::Switch(_));

    let n_links = design.links.len();
    let (mut gpu_total, mut nic_total, mut node_total) = (0usize, 0usize, 0usize);
    for d in &design.devices {
        if let DeviceKind::GpuNode(n) = &d.kind {
            gpu_total += n.gpu_count as usize;
            nic_total += n.nics.len();
            node_total += 1;
        }
    }
    let arc_estimate = n_links * 2 + gpu_total * 4 + nic_total * 2;
    let port_estimate = arc_estimate - 2 * n_links;
    let mut switch_latency_us = vec![0.0; n_dev];
    let mut last_model: Option<(&crate::model::PartId, f64)> = None;
    for (i, d) in design.devices.iter().enumerate() {
        if let DeviceKind::Switch(s) = &d.kind {
            let latency = match last_model {
                Some((m, v)) if *m == s.model => v,
                _ => {
                    let v = catalog
                        .switch(&s.model)
                        .map(|spec| spec.latency_ns / 1000.0)
                        .filter(|v| v.is_finite() && *v > 0.0)
                        .unwrap_or(f64::NAN);
                    last_model = Some((&s.model, v));
                    v
                }
            };
            switch_latency_us[i] = latency;
        }
    }
    // Per device: what the link loop needs to know, without touching the devices again.
    let dev_flags: Vec<u8> = design
        .devices
        .iter()
        .map(|d| match &d.kind {
            DeviceKind::NvSwitchDomain(_) => DOMAIN,
            DeviceKind::Switch(s) if !s.features.lossless => LOSSY_SWITCH | SWITCH,
            DeviceKind::Switch(_) => SWITCH,
            _ => 0,
        })
        .collect();
    let mut ends = reuse(std::mem::take(&mut kept.ends), n_links);
    ends.resize(n_links, [u32::MAX; 4]);
    let mut routable = vec![false; n_links];
    let mut arc_usable = reuse(std::mem::take(&mut kept.arc_usable), arc_estimate);
    let mut arc_nvlink = reuse(std::mem::take(&mut kept.arc_nvlink), arc_estimate);
    let kept_core = std::mem::take(&mut kept.arc_core);
    arc_usable.resize(2 * n_links, 0.0);
    arc_nvlink.resize(2 * n_links, false);
    let mut link_line = reuse(std::mem::take(&mut kept.link_line), n_links);
    link_line.resize(n_links, 0.0);
    let mut link_ids = reuse(std::mem::take(&mut kept.link_ids), n_links);
    link_ids.resize(n_links, LinkId(0));
    let mut link_latency_us = reuse(std::mem::take(&mut kept.link_latency_us), n_links);
    link_latency_us.resize(n_links, 0.0);
    let efa = {
        let facts = LinkFacts {
            ends: &mut ends,
            routable: &mut routable,
            usable: &mut arc_usable,
            nvlink: &mut arc_nvlink,
            line: &mut link_line,
            ids: &mut link_ids,
            latency_us: &mut link_latency_us,
        };
        let fill = |links: &[Link], out: LinkFacts| out.fill(links, &index_of, &dev_flags, library);
        if let Some(pool) = halves {
            // Each half of the links fills its own part of the lists.
            let mid = n_links / 2;
            let (front, back) = facts.split_at(mid);
            let (first, second) = design.links.split_at(mid);
            let mut efa_back = false;
            let efa_front = pool.in_place_scope(|scope| {
                scope.spawn(|_| efa_back = fill(second, back));
                fill(first, front)
            });
            efa_front || efa_back
        } else {
            fill(&design.links, facts)
        }
    };
    // A switch whose model gives no latency takes its technology's, from its first link.
    if switch_latency_us.iter().any(|v| v.is_nan()) {
        for (&[ia, ib, ..], link) in ends.iter().zip(&design.links) {
            if ia == u32::MAX {
                continue;
            }
            for i in [ia as usize, ib as usize] {
                if switch_latency_us[i].is_nan() {
                    switch_latency_us[i] = eff::default_switch_latency_us(link.tech);
                }
            }
        }
    }
    for v in switch_latency_us.iter_mut() {
        if v.is_nan() {
            *v = 0.5;
        }
    }
    // Per device: routable links (port, arc out, arc in, far end), in link order.
    let mut dl_start = vec![0u32; n_dev + 1];
    for (li, &[ia, ib, ..]) in ends.iter().enumerate() {
        if routable[li] {
            dl_start[ia as usize + 1] += 1;
            dl_start[ib as usize + 1] += 1;
        }
    }
    for i in 0..n_dev {
        dl_start[i + 1] += dl_start[i];
    }
    let mut fill = dl_start.clone();
    let mut dev_links = reuse(
        std::mem::take(&mut kept.dev_links),
        dl_start[n_dev] as usize,
    );
    dev_links.resize(
        dl_start[n_dev] as usize,
        DevLink {
            nic: NOT_A_NIC,
            out: 0,
            arc_in: 0,
            far: 0,
        },
    );
    for (li, &[ia, ib, pa, pb]) in ends.iter().enumerate() {
        if !routable[li] {
            continue;
        }
        let (fwd, back) = (2 * li as u32, 2 * li as u32 + 1);
        dev_links[fill[ia as usize] as usize] = DevLink {
            nic: pa,
            out: fwd,
            arc_in: back,
            far: ib,
        };
        fill[ia as usize] += 1;
        dev_links[fill[ib as usize] as usize] = DevLink {
            nic: pb,
            out: back,
            arc_in: fwd,
            far: ia,
        };
        fill[ib as usize] += 1;
    }
    drop(fill);
    let links_of = |i: usize| &dev_links[dl_start[i] as usize..dl_start[i + 1] as usize];
    // Transit: switches, and GPU nodes cabled only to other GPU nodes or hosts (a Thunderbolt
    // ring of Macs forwards at the IP layer). Nodes on switches never forward: NCCL does not
    // route through a third server.
    let mut transit = vec![false; n_dev];
    for (i, d) in design.devices.iter().enumerate() {
        transit[i] = match &d.kind {
            DeviceKind::Switch(_) => true,
            DeviceKind::GpuNode(_) => {
                let links = links_of(i);
                !links.is_empty() && links.iter().all(|l| !is_switch(l.far as usize))
            }
            _ => false,
        };
    }
    let node_part = |arcs: (&mut Vec<f64>, &mut Vec<bool>), lists| {
        NodePart::build(
            design,
            catalog,
            &index_of,
            &links_of,
            arcs,
            (node_total, gpu_total, nic_total, port_estimate),
            lists,
        )
    };
    let node_lists = NodeLists {
        line: std::mem::take(&mut kept.port_line),
        resource: std::mem::take(&mut kept.port_resource),
        gpus: std::mem::take(&mut kept.gpus),
        nics: std::mem::take(&mut kept.nics),
        other_access: std::mem::take(&mut kept.other_access),
    };
    let mut graph = RoutingGraph::with_capacity(
        n_dev,
        dev_links.len(),
        (
            std::mem::take(&mut kept.adj),
            std::mem::take(&mut kept.groups),
        ),
    );
    let fill_graph = |graph: &mut RoutingGraph| graph.fill(design, catalog, &transit, &links_of);
    // The GPU nodes' side and the routing graph do not depend on each other. The node side
    // stays on the calling thread: it allocates the nodes' own lists, and memory one thread
    // allocates and another frees tends to go back to the system, to fault in anew next time.
    let node_part = if let Some(pool) = halves {
        pool.in_place_scope(|scope| {
            scope.spawn(|_| fill_graph(&mut graph));
            node_part((&mut arc_usable, &mut arc_nvlink), node_lists)
        })
    } else {
        fill_graph(&mut graph);
        node_part((&mut arc_usable, &mut arc_nvlink), node_lists)
    };
    let NodePart {
        nodes,
        nics,
        other_access,
        gpus,
        staged_why,
        domains,
        line: port_line,
        resource: port_resource,
    } = node_part?;
    let RoutingGraph {
        adj_start,
        adj,
        grp_start,
        groups,
        class,
        class_count,
        class_adj_start,
        class_adj,
        in_network,
        is_node,
    } = std::mem::take(&mut graph);
    let mut fab = Fabric {
        library,
        nccl: design
            .nccl_release
            .unwrap_or(crate::model::NcclRelease::MODELLED),
        nccl_buffer: design
            .nccl_buffer
            .unwrap_or(crate::model::NcclBuffer::DEFAULT),
        in_network,
        is_node,
        arc_usable,
        link_line,
        port_line,
        port_resource,
        arc_nvlink,
        gpus,
        nodes,
        nics,
        other_access,
        domains,
        transit,
        adj_start,
        adj,
        grp_start,
        groups,
        class,
        class_count,
        class_adj_start,
        class_adj,
        switch_latency_us,
        link_latency_us,
        device_ids: design.devices.iter().map(|d| d.id).collect(),
        link_ids,
        efa,
        net_without_gdr: design
            .devices
            .iter()
            .filter_map(|d| d.kind.as_node())
            .any(|n| n.nics.iter().any(|s| !s.gpudirect))
            || staged_why != 0
            || (library == Library::Nccl && design.links.iter().any(runs_nccl_sockets)),
        staged_why,
        fastest_socket_gbit_s: if library == Library::Nccl {
            design
                .links
                .iter()
                .filter(|l| l.tech.is_ethernet_family() && runs_nccl_sockets(l))
                // One flow rides one cable of a bundle.
                .map(|l| l.rate_gbit_s.gbit_s())
                .fold(0.0, f64::max)
        } else {
            0.0
        },
        arc_core: Vec::new(),
    };
    // Links between two switches: NCCL's tuner knows its NICs and NVLink, not the fabric
    // behind the first switch, so it ranks algorithms as if these never queued.
    let core: Vec<usize> = ends
        .iter()
        .enumerate()
        .filter(|&(li, &[ia, ib, ..])| {
            routable[li]
                && ia != u32::MAX
                && dev_flags[ia as usize] & dev_flags[ib as usize] & SWITCH != 0
        })
        .map(|(li, _)| li)
        .collect();
    scratch.give(|k| {
        k.ends = ends;
        k.dev_links = dev_links;
    });
    super::calibration::apply_calibration(&mut fab, design);
    if !core.is_empty() {
        let mut arc_core = reuse(kept_core, fab.arc_usable.len());
        arc_core.resize(fab.arc_usable.len(), false);
        for li in core {
            arc_core[2 * li] = true;
            arc_core[2 * li + 1] = true;
        }
        fab.arc_core = arc_core;
    }
    Ok(fab)
}

/// A working network link NCCL drives through its socket transport (TCP over Ethernet or
/// Thunderbolt IP), which has no GPUDirect RDMA (`Fabric::net_without_gdr`).
pub(super) fn runs_nccl_sockets(link: &Link) -> bool {
    let network = link.tech.is_ethernet_family()
        || matches!(link.tech, LinkTech::Thunderbolt4 | LinkTech::Thunderbolt5);
    network
        && link.state != LinkState::Failed
        && eff::transport_of(Library::Nccl, link.tech, link.transport) == Transport::Tcp
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::analysis::collective::test_designs::rail_optimized;
    use crate::generate::{Template, TemplateSpec, generate};
    use crate::model::{LinkState, PartId};

    /// Everything a build produces, as text (floats to the last bit), to compare builds.
    fn fingerprint(fab: &Fabric) -> String {
        let ports = (
            &fab.arc_usable,
            &fab.link_line,
            &fab.port_line,
            &fab.port_resource,
            &fab.arc_nvlink,
            &fab.gpus,
            &fab.nodes,
            &fab.domains,
            &fab.switch_latency_us,
            &fab.link_latency_us,
            &fab.device_ids,
            &fab.link_ids,
        );
        let graph = (
            &fab.transit,
            &fab.is_node,
            &fab.in_network,
            &fab.adj_start,
            &fab.adj,
            &fab.grp_start,
            &fab.groups,
            &fab.class,
            fab.class_count,
            &fab.class_adj_start,
            &fab.class_adj,
        );
        let nodes = (&fab.nics, &fab.other_access);
        format!("{ports:?}\n{graph:?}\n{nodes:?}")
    }

    /// A build in one piece or in halves, into the lists `scratch` kept, which get the
    /// fabric's lists back.
    fn build_in(halves: bool, design: &Design, catalog: &Catalog, scratch: &Scratch) -> String {
        let mut fab = build(design, catalog, scratch, Some(halves)).expect("fabric");
        let text = fingerprint(&fab);
        scratch.keep(&mut fab);
        text
    }

    /// A rail-optimized design with the irregular cases the link pass handles: a failed and a
    /// degraded link, a link whose far device is missing, a switch model the catalog lacks
    /// (its latency comes from its first link) and a lossy switch.
    fn irregular() -> Design {
        let mut d = rail_optimized(16, "dgx-h100", 2);
        d.links[3].state = LinkState::Failed;
        d.links[7].state = LinkState::Degraded { fraction: 0.5 };
        let last = d.links.len() - 1;
        d.links[last].b.device = DeviceId(u32::MAX / 2);
        let mut switches = d.devices.iter_mut().filter_map(|dev| match &mut dev.kind {
            DeviceKind::Switch(s) => Some(s),
            _ => None,
        });
        if let Some(s) = switches.next() {
            s.model = PartId::new("no-such-switch");
        }
        if let Some(s) = switches.next() {
            s.features.lossless = false;
        }
        d
    }

    #[test]
    fn halves_build_what_one_piece_builds() {
        let catalog = Catalog::builtin();
        let mut rack = TemplateSpec::new(Template::Nvl72);
        rack.nodes = Some(2);
        let mut tb_ring = TemplateSpec::new(Template::Ring);
        tb_ring.nodes = Some(4);
        tb_ring.node = Some(PartId::new("mac-studio-m3-ultra"));
        let designs = [
            ("rail-optimized", rail_optimized(64, "dgx-h100", 2)),
            ("irregular", irregular()),
            ("nvl72 racks", generate(&rack, &catalog).expect("nvl72")),
            (
                "thunderbolt ring",
                generate(&tb_ring, &catalog).expect("ring"),
            ),
        ];
        for (name, design) in &designs {
            let scratch = Scratch::default();
            let whole = build_in(false, design, &catalog, &scratch);
            let halves = build_in(true, design, &catalog, &scratch);
            assert!(whole == halves, "{name}: the halves build another fabric");
            // Again, now into the lists the builds above left behind.
            assert!(
                build_in(true, design, &catalog, &scratch) == whole,
                "{name}: kept lists"
            );
        }
    }

    #[test]
    fn a_switch_without_catalog_latency_takes_its_first_links() {
        let design = irregular();
        let catalog = Catalog::builtin();
        let fab = build(&design, &catalog, &Scratch::default(), None).expect("fabric");
        let unknown = design
            .devices
            .iter()
            .position(|d| matches!(&d.kind, DeviceKind::Switch(s) if s.model.as_str() == "no-such-switch"))
            .expect("renamed switch");
        let first_link = design
            .links
            .iter()
            .find(|l| {
                l.a.device == design.devices[unknown].id || l.b.device == design.devices[unknown].id
            })
            .expect("a link");
        assert_eq!(
            fab.switch_latency_us[unknown],
            eff::default_switch_latency_us(first_link.tech)
        );
    }

    #[test]
    fn a_small_design_does_not_hold_a_large_designs_lists() {
        let catalog = Catalog::builtin();
        let large = rail_optimized(128, "dgx-h100", 2);
        let small = rail_optimized(2, "dgx-h100", 2);
        let scratch = Scratch::default();
        let mut big = build(&large, &catalog, &scratch, None).expect("large");
        let big_arcs = big.arc_count();
        scratch.keep(&mut big);
        let fab = build(&small, &catalog, &scratch, None).expect("small");
        let n = fab.arc_count();
        assert!(big_arcs > 2 * n + 4096, "{big_arcs} arcs against {n}");
        assert!(fab.arc_usable.capacity() <= 2 * n + 4096);
        assert!(fab.port_resource.capacity() <= 2 * n + 4096);
        assert!(fab.adj.capacity() <= 2 * fab.adj.len().max(1) + 4096);
    }
}
