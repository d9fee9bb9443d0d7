//! All-to-all and point-to-point sends: PXN across domains, aggregated uniform traffic at scale.

use super::loads::LoadBuilder;
use super::{Segment, key};
use crate::analysis::collective::fabric::{Fabric, GpuInterconnect, Vertex};
use crate::analysis::collective::latency::HopKind;
use crate::analysis::collective::{CollectiveError, Routing};

/// Above this many GPU-pair connections, all-to-all is routed as aggregated uniform traffic.
const EXPLICIT_ALL_TO_ALL_LIMIT: u64 = 1 << 18;

/// All-to-all: every GPU sends S/n to every other. Across domains with NVLink inside, NCCL's
/// PXN first moves data over NVLink to the GPU on the destination's rail, so network traffic
/// stays rail-aligned (and a rail-only fabric with no spine still works).
pub(super) fn all_to_all(
    b: &mut LoadBuilder,
    fab: &Fabric,
    group: &[u32],
    segs: &[Segment],
    routing: Routing,
    notes: &mut Vec<String>,
) -> Result<(), CollectiveError> {
    let n = group.len();
    let per = 1.0 / n as f64;
    for s in segs {
        let nvswitch = s.gpus.iter().all(|&g| {
            matches!(
                fab.node_of_gpu(g).interconnect,
                GpuInterconnect::NvSwitch { .. }
            )
        });
        if nvswitch && s.gpus.len() > 1 && b.sweeps() {
            // Through the switch every pair costs the sender's port up and the receiver's
            // port down: the same additions as pair by pair, in one sweep.
            b.note_intra_hop(Some(HopKind::NvLink));
            let others = s.gpus.len() as u32 - 1;
            for &g in s.gpus {
                let gpu = &fab.gpus[g as usize];
                b.add_times(gpu.su_up, per, others);
                b.add_times(gpu.su_down, per, others);
            }
        } else {
            for &g in s.gpus {
                for &h in s.gpus {
                    b.intra(g, h, per);
                }
            }
        }
    }
    if segs.len() < 2 {
        return Ok(());
    }
    let pxn = |node: u32| pxn(fab, node);
    let remote_pairs: u64 = segs
        .iter()
        .map(|s| s.gpus.len() as u64 * (n - s.gpus.len()) as u64)
        .sum();
    let single_node_domains = fab.domains.iter().all(|d| d.nodes == 1);
    let aggregated = remote_pairs > EXPLICIT_ALL_TO_ALL_LIMIT && single_node_domains;
    if !aggregated {
        for (si, s) in segs.iter().enumerate() {
            for &g in s.gpus {
                for (ti, t) in segs.iter().enumerate() {
                    if si == ti {
                        continue;
                    }
                    for &h in t.gpus {
                        pxn_send(b, fab, g, h, per, key(u64::from(g), u64::from(h), 50))?;
                    }
                }
            }
        }
        return Ok(());
    }
    if routing == Routing::Ecmp {
        notes.push(format!(
            "{remote_pairs} connections: ECMP hashing of this many flows is even to within a few per cent, so they are spread evenly"
        ));
    }
    // Aggregated: per node, GPUs in the group (a run of it) and per rail the GPUs each NIC
    // serves.
    let mut node_gpus: Vec<(u32, &[u32])> = Vec::new();
    let mut start = 0;
    for i in 1..=group.len() {
        if i == group.len()
            || fab.gpus[group[i] as usize].node != fab.gpus[group[start] as usize].node
        {
            node_gpus.push((fab.gpus[group[start] as usize].node, &group[start..i]));
            start = i;
        }
    }
    let rails = node_gpus
        .iter()
        .map(|(nd, _)| fab.nics_of(&fab.nodes[*nd as usize]).len())
        .max()
        .unwrap_or(0)
        .max(1);
    let all_pxn = node_gpus.iter().all(|(nd, _)| pxn(*nd));
    let on_rail = |h: u32, r: usize| fab.gpus[h as usize].nic.map_or(r == 0, |x| x as usize == r);
    // Per node and rail: GPUs of the group the rail's NIC serves.
    let mut rail_count = vec![0.0f64; node_gpus.len() * rails];
    for (i, (_, list)) in node_gpus.iter().enumerate() {
        let counts = &mut rail_count[i * rails..(i + 1) * rails];
        for (r, slot) in counts.iter_mut().enumerate() {
            *slot = list.iter().filter(|&&h| on_rail(h, r)).count() as f64;
        }
    }
    let count_rail = |i: usize, r: usize| rail_count[i * rails + r];
    let total_rail: Vec<f64> = (0..rails)
        .map(|r| (0..node_gpus.len()).map(|i| count_rail(i, r)).sum())
        .collect();
    let rail_groups: Vec<Vec<usize>> = if all_pxn {
        (0..rails).map(|r| vec![r]).collect()
    } else {
        vec![(0..rails).collect()]
    };
    let mut senders: Vec<(Vertex, f64)> = Vec::new();
    let mut receivers: Vec<(Vertex, f64)> = Vec::new();
    let mut proxies: Vec<u32> = Vec::new();
    for rails_here in &rail_groups {
        senders.clear();
        receivers.clear();
        for (i, &(nd, list)) in node_gpus.iter().enumerate() {
            let node = &fab.nodes[nd as usize];
            for &r in rails_here {
                let nic = (!fab.nics_of(node).is_empty()).then_some(r as u32);
                let Some((out, arc_in, x)) = b.attachment(nd, nic) else {
                    return Err(CollectiveError::NotConnected {
                        from: node.device,
                        to: fab.nodes[node_gpus
                            .iter()
                            .find(|(o, _)| *o != nd)
                            .map_or(nd, |(o, _)| *o)
                            as usize]
                            .device,
                        names: None,
                    });
                };
                let send_gpus = if all_pxn {
                    list.len() as f64
                } else {
                    count_rail(i, r)
                };
                let recv_gpus = count_rail(i, r);
                // Bytes leaving through this NIC and arriving at it.
                let out_bytes = if all_pxn {
                    send_gpus * (total_rail[r] - recv_gpus) * per
                } else {
                    send_gpus * (n - list.len()) as f64 * per
                };
                let in_bytes = recv_gpus * (n - list.len()) as f64 * per;
                b.add_arc(out, out_bytes);
                b.add_arc(arc_in, in_bytes);
                if let Some(nic) = nic.and_then(|i| fab.nics_of(node).get(i as usize)) {
                    b.add_arc(nic.pcie_up, out_bytes);
                    b.add_arc(nic.pcie_down, in_bytes);
                }
                senders.push((x, send_gpus));
                receivers.push((x, recv_gpus));
            }
            // GPU PCIe and the PXN hop over NVLink.
            let remote = (n - list.len()) as f64 * per;
            if all_pxn {
                // The GPU of this node on each rail (PXN forwards through it).
                proxies.clear();
                proxies.extend(rails_here.iter().map(|&r| fab.gpu_on_nic(node, r as u32)));
            }
            if all_pxn
                && b.sweeps()
                && let ([r], [p]) = (rails_here.as_slice(), proxies.as_slice())
                && *p != u32::MAX
            {
                // One rail, forwarded through its GPU p: every other GPU of the node sends
                // `to_rail` over NVLink to p, which sends it all out over PCIe. The same
                // additions per arc, in the same order, as GPU by GPU below.
                let to_rail = (total_rail[*r] - count_rail(i, *r)) * per;
                if to_rail != 0.0 {
                    let mut hops = 0;
                    for &g in list.iter().filter(|&&g| g != *p) {
                        b.add(fab.gpus[g as usize].su_up, to_rail);
                        hops += 1;
                    }
                    if hops > 0 {
                        b.note_intra_hop(Some(HopKind::NvLink));
                    }
                    let proxy = &fab.gpus[*p as usize];
                    b.add_times(proxy.su_down, to_rail, hops);
                    b.add_times(proxy.pcie_up, to_rail, list.len() as u32);
                }
                for &g in list.iter().filter(|&&g| on_rail(g, *r)) {
                    b.add_arc(fab.gpus[g as usize].pcie_down, remote);
                }
                continue;
            }
            for &g in list {
                let gpu = &fab.gpus[g as usize];
                if all_pxn {
                    for (j, &r) in rails_here.iter().enumerate() {
                        let to_rail = (total_rail[r] - count_rail(i, r)) * per;
                        let p = if proxies[j] == u32::MAX {
                            g
                        } else {
                            proxies[j]
                        };
                        b.intra(g, p, to_rail);
                        b.add_arc(fab.gpus[p as usize].pcie_up, to_rail);
                        if on_rail(g, r) {
                            b.add_arc(gpu.pcie_down, remote);
                        }
                    }
                } else if b.staged_at(g, gpu.nic) {
                    b.gpu_net(g, remote, remote, true);
                } else {
                    b.add_arc(gpu.pcie_up, remote);
                    b.add_arc(gpu.pcie_down, remote);
                }
            }
        }
        b.uniform(&senders, &receivers, per)?;
    }
    Ok(())
}

/// Whether a node forwards network traffic over NVLink to the GPU on the destination's rail
/// (NCCL's PXN): NVSwitch inside and NICs to forward to.
fn pxn(fab: &Fabric, node: u32) -> bool {
    let nd = &fab.nodes[node as usize];
    matches!(nd.interconnect, GpuInterconnect::NvSwitch { .. }) && !fab.nics_of(nd).is_empty()
}

/// The GPU of g's node served by NIC `rail`, where PXN applies; g itself otherwise.
fn pxn_proxy(fab: &Fabric, g: u32, rail: Option<u32>) -> u32 {
    let gpu = &fab.gpus[g as usize];
    let node = &fab.nodes[gpu.node as usize];
    match rail {
        Some(r) if pxn(fab, gpu.node) && (r as usize) < fab.nics_of(node).len() => {
            fab.gpu_on_nic(node, r)
        }
        _ => g,
    }
}

/// A point-to-point transfer between domains: over NVLink to the sender-side GPU on the
/// receiver's rail, then rail-aligned through the network.
pub(super) fn pxn_send(
    b: &mut LoadBuilder,
    fab: &Fabric,
    g: u32,
    h: u32,
    bytes: f64,
    k: u64,
) -> Result<(), CollectiveError> {
    let rail = fab.gpus[h as usize].nic;
    let from = pxn_proxy(fab, g, rail);
    b.intra(g, from, bytes);
    let out_nic = if pxn(fab, fab.gpus[g as usize].node) {
        rail
    } else {
        fab.gpus[g as usize].nic
    };
    b.inter(from, h, out_nic, rail, bytes, 1, k)
}
