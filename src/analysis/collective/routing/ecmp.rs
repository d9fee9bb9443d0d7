//! ECMP: each connection hashed, with a fixed seed, onto one next hop per switch.

use super::{INF, NetFlow, Router, Unreachable};
use crate::analysis::collective::fabric::{Adj, Vertex};
use std::rc::Rc;

const ECMP_SEED: u64 = 0x5241_494c_5941_5244; // "RAILYARD"

fn mix(mut z: u64) -> u64 {
    z = z.wrapping_add(0x9e37_79b9_7f4a_7c15);
    z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
    z ^ (z >> 31)
}

pub(super) fn ecmp_hash(key: u64, conn: u32, vertex: Vertex) -> u64 {
    mix(ECMP_SEED ^ mix(key ^ mix(u64::from(conn) << 32 | u64::from(vertex))))
}

impl Router<'_> {
    /// The `pick`-th next-hop entry (modulo their number) of `v` towards `y`, in the order
    /// `next_hops` lists them; None when there is none. Vertices with few neighbour classes
    /// are scanned in place; the others' lists are kept (`hop_memo`), as scanning dozens of
    /// classes at every hop through a core switch cost more than the rest of the walk.
    #[inline]
    fn pick_hop(
        &mut self,
        qd: &[u16],
        v: Vertex,
        dv: u16,
        y: Vertex,
        cy: u32,
        pick: u64,
    ) -> Option<Adj> {
        let fab = self.fab;
        let groups = fab.adj_groups(v);
        if dv > 1 && groups.len() > self.scan_groups {
            let key = (u64::from(cy) << 32) | u64::from(v);
            let (start, count) = match self.hop_memo.get(&key) {
                Some(&span) => span,
                None => {
                    let start = self.hop_entries.len();
                    let want = dv - 1;
                    for g in groups.iter().filter(|g| qd[g.class as usize] == want) {
                        self.hop_entries
                            .extend_from_slice(&fab.adj[g.start as usize..g.end as usize]);
                    }
                    let span = (start as u32, (self.hop_entries.len() - start) as u32);
                    self.hop_memo.insert(key, span);
                    span
                }
            };
            if count == 0 {
                return None;
            }
            return Some(self.hop_entries[(start + (pick % u64::from(count)) as u32) as usize]);
        }
        if dv == 1 {
            // The links to y itself: a run of y's class group, which is sorted by neighbour.
            let g = groups.iter().find(|g| g.class == cy)?;
            let entries = &fab.adj[g.start as usize..g.end as usize];
            let first = entries.partition_point(|a| a.neighbour < y);
            let count = entries[first..].partition_point(|a| a.neighbour == y);
            if count == 0 {
                return None;
            }
            return Some(entries[first + (pick % count as u64) as usize]);
        }
        let want = dv - 1;
        let count: u32 = groups
            .iter()
            .filter(|g| qd[g.class as usize] == want)
            .map(|g| g.end - g.start)
            .sum();
        if count == 0 {
            return None;
        }
        let mut i = (pick % u64::from(count)) as u32;
        for g in groups.iter().filter(|g| qd[g.class as usize] == want) {
            let len = g.end - g.start;
            if i < len {
                return Some(fab.adj[(g.start + i) as usize]);
            }
            i -= len;
        }
        None
    }

    pub(super) fn route_ecmp(
        &mut self,
        flows: &[NetFlow],
        loads: &mut [f64],
    ) -> Result<(), Unreachable> {
        let mut start = 0;
        while start < flows.len() {
            let bits = flows[start].bytes.to_bits();
            let run = flows[start..]
                .iter()
                .take_while(|f| f.bytes.to_bits() == bits)
                .count();
            self.route_ecmp_run(&flows[start..start + run], loads)?;
            if self.pruned {
                return Ok(());
            }
            start += run;
        }
        Ok(())
    }

    /// Routes flows that carry the same bytes per connection, as if one after another. Their
    /// connections are walked several at a time, a hop each in turn, so that the memory reads
    /// of one walk overlap those of the others (one walk alone waits on each of its reads).
    /// Each arc still receives the same value the same number of times, so its sum is the
    /// same to the last bit; an unreachable pair is reported for the first such flow in order.
    fn route_ecmp_run(&mut self, flows: &[NetFlow], loads: &mut [f64]) -> Result<(), Unreachable> {
        /// One connection of one flow on its way.
        struct Walk {
            v: Vertex,
            dv: u16,
            y: Vertex,
            cy: u32,
            key: u64,
            conn: u32,
            flow: usize,
            qd: Rc<Vec<u16>>,
        }
        const LANES: usize = 8;
        let fab = self.fab;
        let bytes = match flows.first() {
            Some(f) if f.bytes != 0.0 => f.bytes,
            _ => return Ok(()),
        };
        let mut lanes: Vec<Walk> = Vec::with_capacity(LANES);
        let (mut next_flow, mut next_conn) = (0usize, 0u32);
        let mut failed: Option<usize> = None;
        let mut rounds = 0u32;
        loop {
            // Now and then, see whether another plan has since made this one pointless.
            rounds = rounds.wrapping_add(1);
            if rounds.is_multiple_of(1024) && self.stop_early(None) {
                return Ok(());
            }
            // Start walks in flow and connection order; none after a failure.
            while lanes.len() < LANES && failed.is_none() && next_flow < flows.len() {
                let i = next_flow;
                let f = &flows[i];
                let conn = next_conn;
                next_conn += 1;
                if next_conn >= f.conns.max(1) || f.x == f.y {
                    (next_flow, next_conn) = (next_flow + 1, 0);
                }
                if f.x == f.y {
                    continue;
                }
                let cy = fab.class[f.y as usize];
                if cy == u32::MAX || fab.class[f.x as usize] == u32::MAX {
                    failed = Some(i);
                    break;
                }
                let qd = self.class_dist(cy);
                let dv = self.dist(&qd, f.y, cy, f.x);
                if dv == INF {
                    failed = Some(i);
                    break;
                }
                self.max_hops = self.max_hops.max(dv);
                if dv > 0 {
                    lanes.push(Walk {
                        v: f.x,
                        dv,
                        y: f.y,
                        cy,
                        key: f.key,
                        conn,
                        flow: i,
                        qd,
                    });
                }
            }
            if lanes.is_empty() {
                break;
            }
            // One hop for every walk under way.
            let mut k = 0;
            while k < lanes.len() {
                let w = &mut lanes[k];
                let hash = ecmp_hash(w.key, w.conn, w.v);
                match self.pick_hop(&w.qd, w.v, w.dv, w.y, w.cy, hash) {
                    Some(pick) => {
                        loads[pick.out as usize] += bytes;
                        w.v = pick.neighbour;
                        w.dv -= 1;
                    }
                    None => {
                        failed = Some(failed.map_or(w.flow, |f| f.min(w.flow)));
                        w.dv = 0;
                    }
                }
                if w.dv == 0 {
                    lanes.swap_remove(k);
                } else {
                    k += 1;
                }
            }
        }
        match failed {
            Some(i) => Err(Unreachable {
                from: flows[i].x,
                to: flows[i].y,
            }),
            None => Ok(()),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::analysis::collective::test_designs::rail_optimized;
    use crate::analysis::collective::workspace::Workspace;
    use crate::model::Catalog;

    /// ECMP one connection after another, the plain way (every hop lists its next hops in
    /// full): the reference for `route_ecmp`.
    fn one_by_one(
        router: &mut Router,
        flows: &[NetFlow],
        loads: &mut [f64],
    ) -> Result<(), Unreachable> {
        let fab = router.fab;
        for f in flows {
            if f.x == f.y || f.bytes == 0.0 {
                continue;
            }
            let cy = fab.class[f.y as usize];
            if cy == u32::MAX || fab.class[f.x as usize] == u32::MAX {
                return Err(Unreachable { from: f.x, to: f.y });
            }
            let qd = router.class_dist(cy);
            let mut hops = Vec::new();
            for conn in 0..f.conns.max(1) {
                let (mut v, mut dv) = (f.x, router.dist(&qd, f.y, cy, f.x));
                if dv == INF {
                    return Err(Unreachable { from: f.x, to: f.y });
                }
                router.max_hops = router.max_hops.max(dv);
                while dv > 0 {
                    router.next_hops(&qd, v, dv, f.y, cy, &mut hops);
                    if hops.is_empty() {
                        return Err(Unreachable { from: f.x, to: f.y });
                    }
                    let hash = ecmp_hash(f.key, conn, v);
                    let pick = hops[(hash % hops.len() as u64) as usize];
                    loads[pick.out as usize] += f.bytes;
                    (v, dv) = (pick.neighbour, dv - 1);
                }
            }
        }
        Ok(())
    }

    /// Walking connections side by side gives the same loads, bit for bit, the same longest
    /// path and the same first unreachable pair as walking them one after another.
    #[test]
    fn ecmp_walks_side_by_side_change_nothing() {
        let catalog = Catalog::builtin();
        let design = rail_optimized(512, "dgx-h100", 3);
        let workspace = Workspace::default();
        let fab = workspace.build_fabric(&design, &catalog).expect("fabric");
        let switches: Vec<Vertex> = (0..fab.transit.len() as Vertex)
            .filter(|&v| fab.transit[v as usize])
            .collect();
        assert!(switches.len() > 100);
        // Flows between random switches; bytes in runs of equal values and odd ones between,
        // one to four connections, some flows to themselves or of zero bytes.
        let mut state = 0x1234_5678u64;
        let mut next = |n: usize| {
            state = mix(state);
            (state % n as u64) as usize
        };
        let mut flows = Vec::new();
        for i in 0..4000 {
            let x = switches[next(switches.len())];
            let y = if i % 97 == 0 {
                x
            } else {
                switches[next(switches.len())]
            };
            let bytes = match i / 300 % 4 {
                0 | 2 => 0.25,
                1 => 1.0 / (1 + next(7)) as f64,
                _ if i % 50 == 0 => 0.0,
                _ => 3.0,
            };
            flows.push(NetFlow {
                x,
                y,
                bytes,
                conns: 1 + next(4) as u32,
                key: next(1 << 30) as u64,
            });
        }
        type Route = dyn Fn(&mut Router, &[NetFlow], &mut [f64]) -> Result<(), Unreachable>;
        let run = |f: &Route, flows: &[NetFlow]| {
            let mut router = Router::new(&fab, &workspace);
            let mut loads = vec![0.5; fab.arc_count()];
            let outcome = f(&mut router, flows, &mut loads).map_err(|u| (u.from, u.to));
            let bits: Vec<u64> = loads.iter().map(|l| l.to_bits()).collect();
            (outcome, router.max_hops, bits)
        };
        let side_by_side = |r: &mut Router, f: &[NetFlow], l: &mut [f64]| r.route_ecmp(f, l);
        // Every switch's next hops kept, not only wide ones': the same picks again.
        let side_by_side_kept = |r: &mut Router, f: &[NetFlow], l: &mut [f64]| {
            r.scan_groups = 0;
            let outcome = r.route_ecmp(f, l);
            assert!(r.hop_memo.len() > 100);
            outcome
        };
        let reference = run(&one_by_one, &flows);
        assert!(reference.0.is_ok() && reference.1 >= 4, "crosses the core");
        assert_eq!(run(&side_by_side, &flows), reference);
        assert_eq!(run(&side_by_side_kept, &flows), reference);

        // Unreachable ends (a GPU node is no switch) part-way through: the first one counts.
        let node = fab.nodes[0].vertex;
        let node2 = fab.nodes[1].vertex;
        flows[1500].y = node;
        flows[1503].x = node2;
        let reference = run(&one_by_one, &flows).0;
        assert_eq!(reference, Err((flows[1500].x, node)));
        assert_eq!(run(&side_by_side, &flows).0, reference);
        assert_eq!(run(&side_by_side_kept, &flows).0, reference);
    }
}
