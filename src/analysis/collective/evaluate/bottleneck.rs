//! The bottleneck report: the busiest resources of a costed plan, every busy link's
//! utilization and every node's busiest internal resource.

use super::Costed;
use super::schedule::plan_threads;
use crate::analysis::collective::fabric::{self, Fabric, Resource};
use crate::analysis::collective::helpers;
use crate::analysis::collective::workspace::Strategy;
use crate::analysis::collective::workspace::zeroed;
use crate::analysis::collective::{LinkLoad, ResourceKind};
use crate::model::{Design, DeviceId, LinkId};

/// The busiest resources of a costed plan (the eight busiest, busiest first), every busy
/// link's utilization and every node's busiest internal resource.
#[allow(clippy::type_complexity)]
pub(super) fn bottleneck(
    fab: &Fabric,
    design: &Design,
    c: &Costed,
    (bandwidth_us, time_us): (f64, f64),
    strategy: &Strategy,
) -> (Vec<LinkLoad>, Vec<(LinkId, f64)>, Vec<(DeviceId, f64)>) {
    if c.seconds_per_byte <= 0.0 {
        return (Vec::new(), Vec::new(), Vec::new());
    }
    // Busiest direction per drawn link; busiest port per node and kind of internal resource.
    const KINDS: usize = 4;
    let mut per_link = zeroed(design.links.len());
    let mut per_node = zeroed(fab.nodes.len() * KINDS);
    // Links' arcs come first, then the nodes' ports: two runs to scan side by side.
    let (link_arcs, port_arcs) = (0..2 * per_link.len(), 2 * per_link.len()..fab.arc_count());
    let scan = |arcs: std::ops::Range<usize>, per_link: &mut [f64], per_node: &mut [f64]| {
        c.for_each_busy(fab, arcs, |a, busy| {
            let u = busy / c.seconds_per_byte;
            let slot = match fab.arc_resource(a) {
                Resource::Link { index, .. } => &mut per_link[index as usize],
                Resource::ScaleUp { node, .. } => &mut per_node[node as usize * KINDS],
                Resource::Bridge { node, .. } => &mut per_node[node as usize * KINDS + 1],
                Resource::GpuPcie { node, .. } => &mut per_node[node as usize * KINDS + 2],
                Resource::NicPcie { node, .. } => &mut per_node[node as usize * KINDS + 3],
            };
            *slot = slot.max(u);
        })
    };
    match helpers::pool().filter(|_| plan_threads(fab, strategy) > 1) {
        Some(pool) => pool.in_place_scope(|scope| {
            scope.spawn(|_| scan(port_arcs, &mut [], &mut per_node));
            scan(link_arcs, &mut per_link, &mut []);
        }),
        None => scan(0..fab.arc_count(), &mut per_link, &mut per_node),
    }
    let share = if time_us > 0.0 {
        bandwidth_us / time_us
    } else {
        0.0
    };
    let busy_links = per_link.iter().filter(|u| **u > 0.0).count();
    let mut links: Vec<(LinkId, f64)> = Vec::with_capacity(busy_links);
    // The eight busiest resources (utilization, kind, index), busiest first and ties in
    // kind and index order, kept as they come rather than by sorting every busy one
    // (hundreds of thousands at scale).
    let order = |a: &(f64, u8, u32), b: &(f64, u8, u32)| {
        b.0.total_cmp(&a.0).then(a.1.cmp(&b.1)).then(a.2.cmp(&b.2))
    };
    const TOP: usize = 8;
    let mut all: Vec<(f64, u8, u32)> = Vec::with_capacity(TOP + 1);
    let mut offer = |e: (f64, u8, u32)| {
        if all.len() == TOP && all.last().is_some_and(|w| order(&e, w).is_ge()) {
            return;
        }
        let at = all.partition_point(|x| order(x, &e).is_lt());
        all.insert(at, e);
        all.truncate(TOP);
    };
    for (i, &u) in per_link.iter().enumerate() {
        if u > 0.0 {
            links.push((fab.link_ids[i], u));
            offer((u, 0u8, i as u32));
        }
    }
    let devices: Vec<(DeviceId, f64)> = per_node
        .chunks(KINDS)
        .enumerate()
        .map(|(i, k)| (fab.nodes[i].device, k.iter().copied().fold(0.0, f64::max)))
        .filter(|(_, u)| *u > 0.0)
        .collect();
    for (i, &u) in per_node.iter().enumerate() {
        if u > 0.0 {
            offer((u, 1 + (i % KINDS) as u8, (i / KINDS) as u32));
        }
    }
    let loads: Vec<LinkLoad> = all
        .iter()
        .map(|&(u, kind, idx)| {
            let (link, device, rk, label) = describe(fab, design, kind, idx);
            LinkLoad {
                link,
                device,
                kind: rk,
                label,
                utilization: u,
                time_share: u * share,
            }
        })
        .collect();
    (loads, links, devices)
}

/// A resource of `bottleneck`'s kind and index: its link or node, kind and label.
fn describe(
    fab: &Fabric,
    design: &Design,
    kind: u8,
    idx: u32,
) -> (Option<LinkId>, Option<DeviceId>, ResourceKind, String) {
    let name = |id: DeviceId| {
        design
            .device(id)
            .map_or_else(|| id.to_string(), |d| d.name.clone())
    };
    match kind {
        0 => {
            let l = &design.links[idx as usize];
            let label = format!("{} {} – {}", l.id, name(l.a.device), name(l.b.device));
            (Some(l.id), None, ResourceKind::Link, label)
        }
        _ => {
            let node = fab.nodes[idx as usize].device;
            let (rk, what) = match kind {
                1 => (ResourceKind::NvLink, "NVLink ports"),
                2 => (ResourceKind::NvLinkBridge, "NVLink bridges"),
                // NCCL's SHM transport: GPU traffic staged in host memory (efficiency.rs).
                3 if !fab.nodes[idx as usize].p2p => (
                    ResourceKind::GpuPcie,
                    "GPU PCIe links (through host memory, no peer-to-peer)",
                ),
                3 => (ResourceKind::GpuPcie, "GPU PCIe links"),
                _ => (ResourceKind::NicPcie, "NIC PCIe slots"),
            };
            (None, Some(node), rk, format!("{} {}", name(node), what))
        }
    }
}

pub(super) fn resource_label(fab: &Fabric, design: &Design, r: Resource) -> String {
    let node_name = |node: u32| {
        let id = fab.nodes[node as usize].device;
        design
            .device(id)
            .map_or_else(|| id.to_string(), |d| d.name.clone())
    };
    match r {
        Resource::Link { index, .. } => format!("link {}", fabric::link_id(design, index)),
        Resource::ScaleUp { node, gpu, .. } => format!("{} NVLink of GPU {gpu}", node_name(node)),
        Resource::Bridge { node, from } => {
            format!("{} NVLink bridge of GPU {from}", node_name(node))
        }
        // Without peer-to-peer NCCL's SHM transport stages GPU traffic in host memory, and a
        // link used both ways at once runs slower than one way (efficiency.rs).
        Resource::GpuPcie { node, gpu, .. } if !fab.nodes[node as usize].p2p => format!(
            "{} PCIe of GPU {gpu} (through host memory, no peer-to-peer)",
            node_name(node)
        ),
        Resource::GpuPcie { node, gpu, .. } => format!("{} PCIe of GPU {gpu}", node_name(node)),
        Resource::NicPcie { node, nic, .. } => {
            format!("{} PCIe slot of NIC {nic}", node_name(node))
        }
    }
}
