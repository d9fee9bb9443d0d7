//! Even spreading over every equal-cost next hop: adaptive routing, and uniform traffic.

use super::{INF, NetFlow, Router, Unreachable};
use crate::analysis::collective::fabric::{AdjGroup, ArcId, Vertex};

impl Router<'_> {
    pub(super) fn route_adaptive(
        &mut self,
        flows: &[NetFlow],
        loads: &mut [f64],
    ) -> Result<(), Unreachable> {
        let fab = self.fab;
        let mut order: Vec<u32> = (0..flows.len() as u32)
            .filter(|&i| {
                let f = &flows[i as usize];
                f.x != f.y && f.bytes != 0.0
            })
            .collect();
        for &i in &order {
            let f = &flows[i as usize];
            if fab.class[f.x as usize] == u32::MAX || fab.class[f.y as usize] == u32::MAX {
                return Err(Unreachable { from: f.x, to: f.y });
            }
        }
        let key = |i: &u32| {
            let f = &flows[*i as usize];
            (fab.class[f.x as usize], fab.class[f.y as usize])
        };
        order.sort_unstable_by_key(key);
        let mut hops = Vec::new();
        let mut interior: Vec<(ArcId, f64)> = Vec::new();
        let mut arrivals: Vec<Vertex> = Vec::new();
        let mut start = 0;
        while start < order.len() {
            let (cx, cy) = key(&order[start]);
            let mut end = start;
            while end < order.len() && key(&order[end]) == (cx, cy) {
                end += 1;
            }
            let group = &order[start..end];
            start = end;
            let qd = self.class_dist(cy);
            if cx == cy {
                // Twins: up to any shared neighbour, then down.
                for &i in group {
                    let f = &flows[i as usize];
                    let up = fab.neighbours(f.x);
                    if up.is_empty() {
                        return Err(Unreachable { from: f.x, to: f.y });
                    }
                    let share = f.bytes * f64::from(f.conns.max(1)) / up.len() as f64;
                    for a in up {
                        loads[a.out as usize] += share;
                    }
                    for a in fab.neighbours(f.y) {
                        loads[a.arc_in as usize] += share;
                    }
                }
                self.max_hops = self.max_hops.max(2);
                continue;
            }
            let d = qd[cx as usize];
            if d == INF {
                let f = &flows[group[0] as usize];
                return Err(Unreachable { from: f.x, to: f.y });
            }
            self.max_hops = self.max_hops.max(d);
            if d == 1 {
                for &i in group {
                    let f = &flows[i as usize];
                    self.next_hops(&qd, f.x, 1, f.y, cy, &mut hops);
                    let share = f.bytes * f64::from(f.conns.max(1)) / hops.len().max(1) as f64;
                    for a in &hops {
                        loads[a.out as usize] += share;
                    }
                }
                continue;
            }
            // One unit propagation for the class pair: interior arc weights and the share of
            // traffic arriving at each neighbour of the destination class.
            let x0 = flows[group[0] as usize].x;
            let y0 = flows[group[0] as usize].y;
            interior.clear();
            arrivals.clear();
            self.unit_propagation(&qd, x0, d, y0, cy, &mut interior, &mut arrivals);
            let mut total = 0.0;
            for &i in group {
                let f = &flows[i as usize];
                let bytes = f.bytes * f64::from(f.conns.max(1));
                total += bytes;
                self.next_hops(&qd, f.x, d, f.y, cy, &mut hops);
                let share = bytes / hops.len().max(1) as f64;
                for a in &hops {
                    loads[a.out as usize] += share;
                }
                let down = fab.neighbours(f.y);
                let mut j = 0;
                while j < down.len() {
                    let s = down[j].neighbour;
                    let mut e = j;
                    while e < down.len() && down[e].neighbour == s {
                        e += 1;
                    }
                    let frac = self.arrive[s as usize];
                    if frac > 0.0 {
                        let per = bytes * frac / (e - j) as f64;
                        for a in &down[j..e] {
                            loads[a.arc_in as usize] += per;
                        }
                    }
                    j = e;
                }
            }
            for &(arc, w) in &interior {
                loads[arc as usize] += total * w;
            }
            for &s in &arrivals {
                self.arrive[s as usize] = 0.0;
            }
        }
        Ok(())
    }

    /// Spreads one unit from `x0` (at distance `d` ≥ 2) towards the class of `y0`, stopping at
    /// distance 1. Fills `interior` with (arc, share) past the first hop and `self.arrive`
    /// (listed in `arrivals`) with the share reaching each distance-1 vertex.
    #[allow(clippy::too_many_arguments)]
    fn unit_propagation(
        &mut self,
        qd: &[u16],
        x0: Vertex,
        d: u16,
        y0: Vertex,
        cy: u32,
        interior: &mut Vec<(ArcId, f64)>,
        arrivals: &mut Vec<Vertex>,
    ) {
        let mut hops = Vec::new();
        self.next_hops(qd, x0, d, y0, cy, &mut hops);
        let k = hops.len().max(1) as f64;
        if self.buckets.len() < d as usize + 1 {
            self.buckets.resize(d as usize + 1, Vec::new());
        }
        let level0 = d - 1;
        for a in &hops {
            let v = a.neighbour as usize;
            if self.share_at[v] == 0.0 {
                self.buckets[level0 as usize].push(a.neighbour);
            }
            self.share_at[v] += 1.0 / k;
        }
        let mut level = level0;
        while level >= 2 {
            let bucket = std::mem::take(&mut self.buckets[level as usize]);
            for &v in &bucket {
                let t = std::mem::replace(&mut self.share_at[v as usize], 0.0);
                if t == 0.0 {
                    continue;
                }
                self.next_hops(qd, v, level, y0, cy, &mut hops);
                let share = t / hops.len().max(1) as f64;
                for a in &hops {
                    interior.push((a.out, share));
                    let u = a.neighbour as usize;
                    if self.share_at[u] == 0.0 {
                        self.buckets[level as usize - 1].push(a.neighbour);
                    }
                    self.share_at[u] += share;
                }
            }
            let mut bucket = bucket;
            bucket.clear();
            self.buckets[level as usize] = bucket;
            level -= 1;
        }
        let bucket = std::mem::take(&mut self.buckets[1]);
        for &s in &bucket {
            let t = std::mem::replace(&mut self.share_at[s as usize], 0.0);
            if t > 0.0 {
                if self.arrive[s as usize] == 0.0 {
                    arrivals.push(s);
                }
                self.arrive[s as usize] += t;
            }
        }
        let mut bucket = bucket;
        bucket.clear();
        self.buckets[1] = bucket;
    }

    /// Uniform traffic: every sender vertex X sends `w_X × v_Y × unit` to every receiver vertex
    /// Y ≠ X. Receivers are grouped by twin class and weights; each group is propagated once
    /// (exact for even splitting: twins with equal weights receive identical traffic).
    pub fn route_uniform(
        &mut self,
        senders: &[(Vertex, f64)],
        receivers: &[(Vertex, f64)],
        unit: f64,
        loads: &mut [f64],
    ) -> Result<(), Unreachable> {
        let fab = self.fab;
        // Weights per vertex, summed in input order, in dense tables (vertices are device
        // indices); the lists keep which vertices appear.
        let n = fab.transit.len();
        let (mut send_w, mut recv_w) = (vec![0.0f64; n], vec![0.0f64; n]);
        let (mut sends, mut recvs) = (vec![false; n], vec![false; n]);
        let (mut send_list, mut recv_list): (Vec<Vertex>, Vec<Vertex>) = (Vec::new(), Vec::new());
        for &(x, w) in senders {
            if !std::mem::replace(&mut sends[x as usize], true) {
                send_list.push(x);
            }
            send_w[x as usize] += w;
        }
        for &(y, v) in receivers {
            if !std::mem::replace(&mut recvs[y as usize], true) {
                recv_list.push(y);
            }
            recv_w[y as usize] += v;
        }
        send_list.sort_unstable();
        recv_list.sort_unstable();
        let senders: Vec<(Vertex, f64)> =
            send_list.iter().map(|&x| (x, send_w[x as usize])).collect();
        // Receivers by (class, own sending weight, receiving weight): each such set is
        // propagated once; sets in key order, members in vertex order.
        let mut keyed: Vec<((u32, u64, u64), Vertex)> = Vec::with_capacity(recv_list.len());
        for &y in &recv_list {
            let v = recv_w[y as usize];
            if v == 0.0 {
                continue;
            }
            let c = fab.class[y as usize];
            if c == u32::MAX {
                let from = senders.iter().find(|s| s.0 != y).map_or(y, |s| s.0);
                return Err(Unreachable { from, to: y });
            }
            let w = if sends[y as usize] {
                send_w[y as usize]
            } else {
                0.0
            };
            keyed.push(((c, w.to_bits(), v.to_bits()), y));
        }
        keyed.sort_unstable();
        let mut members: Vec<Vertex> = Vec::new();
        let mut next = 0;
        while next < keyed.len() {
            let key = keyed[next].0;
            members.clear();
            while next < keyed.len() && keyed[next].0 == key {
                members.push(keyed[next].1);
                next += 1;
            }
            let (cy, _, v_bits) = key;
            let v = f64::from_bits(v_bits);
            let k = members.len() as f64;
            let y0 = members[0];
            for &m in &members {
                self.member[m as usize] = true;
            }
            let qd = self.class_dist(cy);
            let mut max_level = 0u16;
            for &(x, w) in &senders {
                let own = if self.member[x as usize] { 1.0 } else { 0.0 };
                let inj = w * v * (k - own) * unit;
                if inj == 0.0 {
                    continue;
                }
                if fab.class[x as usize] == u32::MAX {
                    return Err(Unreachable { from: x, to: y0 });
                }
                let dx = if fab.class[x as usize] == cy {
                    if fab.neighbours(x).is_empty() { INF } else { 2 }
                } else {
                    qd[fab.class[x as usize] as usize]
                };
                if dx == INF || dx == 0 {
                    return Err(Unreachable { from: x, to: y0 });
                }
                if self.buckets.len() < dx as usize + 1 {
                    self.buckets.resize(dx as usize + 1, Vec::new());
                }
                if self.share_at[x as usize] == 0.0 {
                    self.buckets[dx as usize].push(x);
                }
                self.share_at[x as usize] += inj;
                max_level = max_level.max(dx);
            }
            self.max_hops = self.max_hops.max(max_level);
            let mut level = max_level;
            while level >= 2 {
                let bucket = std::mem::take(&mut self.buckets[level as usize]);
                for &x in &bucket {
                    let t = std::mem::replace(&mut self.share_at[x as usize], 0.0);
                    if t == 0.0 {
                        continue;
                    }
                    // The next hops, as `next_hops` lists them (level ≥ 2: every neighbour
                    // one step closer), without listing them.
                    let closer = |g: &&AdjGroup| qd[g.class as usize] == level - 1;
                    let groups = fab.adj_groups(x);
                    let count: u32 = groups.iter().filter(closer).map(|g| g.end - g.start).sum();
                    if count == 0 {
                        return Err(Unreachable { from: x, to: y0 });
                    }
                    let share = t / f64::from(count);
                    for g in groups.iter().filter(closer) {
                        for a in &fab.adj[g.start as usize..g.end as usize] {
                            loads[a.out as usize] += share;
                            let u = a.neighbour as usize;
                            if self.share_at[u] == 0.0 {
                                self.buckets[level as usize - 1].push(a.neighbour);
                            }
                            self.share_at[u] += share;
                        }
                    }
                }
                let mut bucket = bucket;
                bucket.clear();
                self.buckets[level as usize] = bucket;
                level -= 1;
            }
            if max_level >= 1 {
                // Last hop: every member takes an equal share of what reached each neighbour.
                for &y in &members {
                    let down = fab.neighbours(y);
                    let mut j = 0;
                    while j < down.len() {
                        let s = down[j].neighbour;
                        let mut e = j;
                        while e < down.len() && down[e].neighbour == s {
                            e += 1;
                        }
                        let t = self.share_at[s as usize];
                        if t > 0.0 {
                            let per = t / k / (e - j) as f64;
                            for a in &down[j..e] {
                                loads[a.arc_in as usize] += per;
                            }
                        }
                        j = e;
                    }
                }
                let bucket = std::mem::take(&mut self.buckets[1]);
                for &s in &bucket {
                    self.share_at[s as usize] = 0.0;
                }
                let mut bucket = bucket;
                bucket.clear();
                self.buckets[1] = bucket;
            }
            for &m in &members {
                self.member[m as usize] = false;
            }
        }
        Ok(())
    }
}
