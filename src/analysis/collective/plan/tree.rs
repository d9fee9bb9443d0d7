//! NCCL's double binary trees between domains, with chains inside them.

use super::loads::{LoadBuilder, SimpleEnd};
use super::ring::{all_nvswitch, nic_rings};
use super::{CHANNELS_PER_CONNECTION, Segment, key};
use crate::analysis::collective::CollectiveError;
use crate::analysis::collective::fabric::{ABSENT_ARC, Fabric};
use crate::analysis::collective::routing::NetFlow;

/// The most GPUs of one domain that head NVLS's channels (`NCCL_MAX_NVLS_ARITY` in
/// `src/include/device.h`; `ncclTopoCompute` caps the NVLS graph's channels at it): NVLSTree
/// crosses the network from at most this many of a domain's GPUs and NICs.
pub(crate) const NVLS_MAX_HEADS: usize = 32;

/// Parent position of 1-based position `p` in a balanced in-order binary tree over 1..=m.
fn tree_parent(p: u32, m: u32) -> Option<u32> {
    let mut q = p;
    loop {
        let low = q & q.wrapping_neg();
        let parent = (q | (low << 1)) & !low;
        if parent <= m {
            return Some(parent);
        }
        if (low << 1) > m {
            return None;
        }
        q = parent;
    }
}

/// Edges (parent, child) of NCCL-style double binary trees over `m` domains: the second tree
/// is the first shifted by one, so leaves of one are inner nodes of the other.
pub(crate) fn double_tree(m: u32) -> [Vec<(u32, u32)>; 2] {
    let mut trees = [Vec::new(), Vec::new()];
    if m < 2 {
        return trees;
    }
    for (t, tree) in trees.iter_mut().enumerate() {
        let shift = t as u32;
        let seg_of = |p: u32| (p - 1 + m - shift) % m;
        for i in 0..m {
            let p = (i + shift) % m + 1;
            if let Some(q) = tree_parent(p, m) {
                tree.push((seg_of(q), i));
            }
        }
    }
    trees
}

/// Inter-domain double binary trees, one set per channel (NIC), each tree carrying
/// `per_tree` bytes up and down every edge; intra-domain chains lead to the channel's head.
pub(super) fn trees(
    b: &mut LoadBuilder,
    fab: &Fabric,
    segs: &[Segment],
    total: f64,
    per_local_gpu: bool,
) -> Result<(), CollectiveError> {
    let m = segs.len() as u32;
    let edges = double_tree(m);
    let has_nics = fab.nodes.iter().any(|n| !fab.nics_of(n).is_empty());
    let mut heads: Vec<u32> = Vec::with_capacity(segs.len());
    let mut nics: Vec<Option<u32>> = Vec::with_capacity(segs.len());
    match per_local_gpu {
        false => {
            // Tree over domains per NIC; chains inside each domain.
            let k = segs
                .iter()
                .map(|s| nic_rings(fab, s.gpus))
                .min()
                .unwrap_or(1);
            let per = total / 2.0 / f64::from(k);
            // Per channel and domain, the position of the channel's head: the first GPU on
            // the channel's NIC, else the GPU beside that NIC, else the first GPU.
            let mut head_at = vec![0u32; k as usize * segs.len()];
            for (si, s) in segs.iter().enumerate() {
                let mut found = 0u64;
                for (p, &g) in s.gpus.iter().enumerate() {
                    if let Some(c) = fab.gpus[g as usize].nic.filter(|&c| c < k)
                        && found & (1 << c) == 0
                    {
                        found |= 1 << c;
                        head_at[c as usize * segs.len() + si] = p as u32;
                    }
                }
                let node = fab.node_of_gpu(s.gpus[0]);
                for c in (0..k).filter(|&c| found & (1 << c) == 0) {
                    let beside = fab.gpu_on_nic(node, c);
                    if let Some(p) = s.gpus.iter().position(|&g| g == beside) {
                        head_at[c as usize * segs.len() + si] = p as u32;
                    }
                }
            }
            let behind_switch: Vec<bool> = segs.iter().map(|s| all_nvswitch(fab, s.gpus)).collect();
            // Each channel's chain starts at its head and wraps around the domain's GPUs; both
            // trees run it (reduce up, broadcast down), so every chain edge is one switched
            // transfer each way. Behind a switch only the counts matter: every GPU is on two
            // edges of each chain, its ends on one.
            if per != 0.0 {
                for (si, s) in segs.iter().enumerate() {
                    let len = s.gpus.len();
                    if !behind_switch[si] || len < 2 {
                        continue;
                    }
                    b.switch_hops.ensure(fab);
                    for &g in s.gpus {
                        b.switch_hops.count_times(g, 2 * k);
                    }
                    for c in 0..k as usize {
                        let i = head_at[c * segs.len() + si] as usize;
                        b.switch_hops.uncount(s.gpus[i]);
                        b.switch_hops.uncount(s.gpus[(i + len - 1) % len]);
                    }
                }
            }
            for c in 0..k {
                heads.clear();
                for (si, s) in segs.iter().enumerate() {
                    let i = head_at[c as usize * segs.len() + si] as usize;
                    heads.push(s.gpus[i]);
                    if behind_switch[si] && per != 0.0 {
                        continue;
                    }
                    let mut chain = s.gpus[i..].iter().chain(&s.gpus[..i]).copied();
                    let Some(mut w0) = chain.next() else {
                        continue;
                    };
                    for w1 in chain {
                        b.intra(w1, w0, 2.0 * per);
                        b.intra(w0, w1, 2.0 * per);
                        w0 = w1;
                    }
                }
                nics.clear();
                nics.resize(segs.len(), has_nics.then_some(c));
                tree_edges(b, &edges, &heads, &nics, per, |t, e| {
                    key(u64::from(c), e as u64, 10 + t as u64)
                })?;
            }
            b.add_switch_hops(segs.iter().flat_map(|s| s.gpus), 2.0 * per);
        }
        true => {
            // One tree set per head, each over that GPU's own NIC (NVLS-tree): every GPU of
            // the domain up to NCCL's 32 (`NCCL_MAX_NVLS_ARITY`, the NVLS graph's channel
            // limit in `search.cc`), so an NVL72 rack's network tree runs on 32 of its 72 NICs.
            let g_count = segs[0].gpus.len().min(NVLS_MAX_HEADS);
            let per = total / g_count as f64 / 2.0;
            for l in 0..g_count {
                heads.clear();
                heads.extend(segs.iter().map(|s| s.gpus[l]));
                nics.clear();
                nics.extend(heads.iter().map(|&h| fab.gpus[h as usize].nic));
                tree_edges(b, &edges, &heads, &nics, per, |t, e| {
                    key(l as u64, e as u64, 20 + t as u64)
                })?;
            }
        }
    }
    Ok(())
}

/// Both directions of every edge of the double tree between the domains' `heads` (GPUs, with
/// the NIC each uses), `per` bytes each way, connection keys from `key_of(tree, edge)`.
fn tree_edges(
    b: &mut LoadBuilder,
    edges: &[Vec<(u32, u32)>; 2],
    heads: &[u32],
    nics: &[Option<u32>],
    per: f64,
    key_of: impl Fn(usize, usize) -> u64,
) -> Result<(), CollectiveError> {
    let fab = b.fab;
    // Where every head meets the network, when that does not depend on the peer (NICs cabled
    // to switches, the usual case): then each domain's arcs carry `per` once per incident
    // edge and direction, added here in one sweep over the domains rather than edge by edge
    // (the same additions, so the same sums), and only the flows between switches are queued.
    let ends: Option<Vec<SimpleEnd>> = heads
        .iter()
        .zip(nics)
        .map(|(&h, &nic)| b.simple_end(h, nic))
        .collect();
    let Some(ends) = ends.filter(|_| per != 0.0) else {
        for (t, tree) in edges.iter().enumerate() {
            for (e, &(p, ch)) in tree.iter().enumerate() {
                let (hp, hc) = (heads[p as usize], heads[ch as usize]);
                let (np, nc) = (nics[p as usize], nics[ch as usize]);
                let kk = key_of(t, e);
                b.inter(hc, hp, nc, np, per, CHANNELS_PER_CONNECTION, kk)?;
                b.inter(hp, hc, np, nc, per, CHANNELS_PER_CONNECTION, kk ^ 1)?;
            }
        }
        return Ok(());
    };
    let mut degree = vec![0u32; heads.len()];
    for &(p, ch) in edges.iter().flatten() {
        degree[p as usize] += 1;
        degree[ch as usize] += 1;
    }
    // The nodes' ends of the tree edges also give a floor under the plan's worst ratio (see
    // `Router::stop_early`) that often rules it out long before its flows are routed.
    let want_floor = b.floor_wanted();
    let mut worst = b.router.floor_worst;
    for ((&h, end), &deg) in heads.iter().zip(&ends).zip(&degree) {
        if deg == 0 {
            continue;
        }
        b.uses_net = true;
        let gpu = &fab.gpus[h as usize];
        for arc in [
            gpu.pcie_up,
            gpu.pcie_down,
            end.nic_up,
            end.nic_down,
            end.out,
            end.arc_in,
        ] {
            b.add_times(arc, per, deg);
            // (The floor is on the plan's rank: arcs NCCL's tuner does not see stay out.)
            if want_floor && arc != ABSENT_ARC && fab.tuner_sees(arc as usize) {
                worst = worst.max(b.loads[arc as usize] / fab.arc_usable[arc as usize]);
            }
        }
        b.access_latency(end.out);
        b.access_latency(end.arc_in);
        b.note_switch(end.attach);
    }
    if want_floor {
        b.router.floor_worst = worst;
        if b.router.stop_early(None) {
            return Err(b.stopped());
        }
    }
    let conns = CHANNELS_PER_CONNECTION;
    for (t, tree) in edges.iter().enumerate() {
        for (e, &(p, ch)) in tree.iter().enumerate() {
            let (xp, xc) = (ends[p as usize].attach, ends[ch as usize].attach);
            if xp != xc {
                let kk = key_of(t, e);
                b.flows.push(NetFlow {
                    x: xc,
                    y: xp,
                    bytes: per / f64::from(conns),
                    conns,
                    key: kk,
                });
                b.flows.push(NetFlow {
                    x: xp,
                    y: xc,
                    bytes: per / f64::from(conns),
                    conns,
                    key: kk ^ 1,
                });
            }
        }
    }
    Ok(())
}
