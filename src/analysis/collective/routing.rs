//! Routing flows over the fabric's switches and summing the load on every arc.
//!
//! Paths are shortest paths in hops. `Adaptive` splits traffic evenly over the equal-cost next
//! hops at every switch (what adaptive routing and packet spraying approach). `Ecmp` hashes
//! each connection, with a fixed seed, onto one next hop per switch, so a few elephant flows
//! can land on the same uplink.
//!
//! Speed comes from the twin classes of the fabric: distances are computed on the quotient
//! graph, and under adaptive routing all flows between the same pair of classes share one
//! unit propagation (their split ratios are identical past the first hop). Uniform all-to-all
//! traffic is propagated once per class of destinations instead of once per destination. Both
//! shortcuts are exact, not approximations: twins have identical neighbourhoods.

use super::fabric::{Adj, AdjGroup, ArcId, Fabric, FxBuild, Vx};
use serde::{Deserialize, Serialize};
use std::collections::HashMap;
use std::rc::Rc;

/// How flows are spread over equal-cost paths.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Routing {
    /// Each connection hashed onto one path (fixed seed): elephant-flow collisions show.
    #[default]
    Ecmp,
    /// Traffic spread over all equal-cost paths.
    Adaptive,
}

impl Routing {
    pub fn cli_name(self) -> &'static str {
        match self {
            Routing::Ecmp => "ecmp",
            Routing::Adaptive => "adaptive",
        }
    }

    pub fn from_cli_name(name: &str) -> Option<Routing> {
        match name.to_ascii_lowercase().as_str() {
            "ecmp" => Some(Routing::Ecmp),
            "adaptive" | "ar" | "spray" => Some(Routing::Adaptive),
            _ => None,
        }
    }
}

const INF: u16 = u16::MAX;
const ECMP_SEED: u64 = 0x5241_494c_5941_5244; // "RAILYARD"

fn mix(mut z: u64) -> u64 {
    z = z.wrapping_add(0x9e37_79b9_7f4a_7c15);
    z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
    z ^ (z >> 31)
}

fn ecmp_hash(key: u64, conn: u32, vertex: Vx) -> u64 {
    mix(ECMP_SEED ^ mix(key ^ mix(u64::from(conn) << 32 | u64::from(vertex))))
}

/// `n` zeros, written out rather than taken as fresh zero pages (`vec![0.0; n]`): buffers that
/// are added into (`+=`) would otherwise fault twice per page, once to map the shared zero
/// page on the read and again to copy it on the write.
pub(crate) fn zeroed(n: usize) -> Vec<f64> {
    let mut v = Vec::with_capacity(n);
    v.resize(n, 0.0);
    v
}

/// Which SHARP tree to build: rail `rail` of `rails` of the `group`th concurrent group.
#[derive(Debug, Clone, Copy)]
pub(crate) struct TreeSlot {
    pub rail: u32,
    pub rails: u32,
    pub group: u32,
}

/// How a SHARP tree's links overlap the plan's earlier trees: the most of them on any one of
/// its links, then the sum over its links (smaller is better).
type Overlap = (u32, u32);

/// How many of one plan's SHARP trees each arc carries, so that the next tree goes where the
/// fewest are.
#[derive(Debug, Default)]
pub(crate) struct TreeUse {
    arcs: HashMap<ArcId, u32, FxBuild>,
}

/// Traffic between two attachment vertices of the routing graph.
#[derive(Debug, Clone, Copy)]
pub(crate) struct NetFlow {
    pub x: Vx,
    pub y: Vx,
    /// Bytes per connection (per byte of the collective's size).
    pub bytes: f64,
    /// Connections (NCCL channels, queue pairs) the bytes are split over; each is hashed.
    pub conns: u32,
    pub key: u64,
}

/// Two devices with no path between them.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Unreachable {
    pub from: Vx,
    pub to: Vx,
}

/// Per-arc load buffers that earlier evaluations no longer need, oldest first, for the next
/// ones: the sidebar evaluates the same fabric, give or take an edit, again and again, and
/// fresh memory is slow to fill (the kernel maps and zeroes every page on its first write:
/// at 131,072 GPUs some 18,000 pages per evaluation).
static SPARE_LOADS: std::sync::Mutex<Vec<Vec<f64>>> = std::sync::Mutex::new(Vec::new());

/// How many spare buffers are kept between evaluations: about what two planning threads
/// hold at once.
const KEPT_BUFFERS: usize = 4;

/// `n` zeroed loads in a kept buffer when one fits (large enough, not far too large), else
/// in fresh memory.
fn pooled_zeroed(n: usize) -> Vec<f64> {
    let kept = SPARE_LOADS.lock().ok().and_then(|mut pool| {
        let fits = |v: &Vec<f64>| v.capacity() >= n && v.capacity() <= 2 * n + (1 << 16);
        let i = pool.iter().rposition(fits)?;
        Some(pool.remove(i))
    });
    match kept {
        Some(mut v) => {
            v.clear();
            v.resize(n, 0.0);
            v
        }
        None => zeroed(n),
    }
}

/// Keeps a load buffer for later evaluations; the oldest kept one goes when there are too
/// many.
pub(crate) fn keep_for_later(loads: Vec<f64>) {
    if loads.capacity() == 0 {
        return;
    }
    let evicted = SPARE_LOADS.lock().ok().and_then(|mut pool| {
        pool.push(loads);
        (pool.len() > KEPT_BUFFERS).then(|| pool.remove(0))
    });
    // Freed outside the lock.
    drop(evicted);
}

pub(crate) struct Router<'f> {
    fab: &'f Fabric,
    /// Per class: hop distances from every class to it, once worked out.
    qdist: Vec<Option<Rc<Vec<u16>>>>,
    acc: Vec<f64>,
    arrive: Vec<f64>,
    member: Vec<bool>,
    buckets: Vec<Vec<Vx>>,
    /// Next hops already listed, for vertices with many neighbour classes (a core switch
    /// facing every pod): (vertex, destination class) → where its entries start in
    /// `hop_entries`, and how many there are.
    hop_memo: HashMap<u64, (u32, u32), FxBuild>,
    hop_entries: Vec<Adj>,
    /// Vertices with at most this many neighbour classes are scanned, not kept.
    scan_groups: usize,
    /// Per-arc load buffers of finished plans, for the next plans (zeroed when taken, so a
    /// buffer that goes on to the kept ones is not zeroed twice).
    spare_loads: Vec<Vec<f64>>,
    /// Largest number of switch-to-switch hops any routed flow took.
    pub max_hops: u16,
    /// When set, the plan under way may stop early (see `Prune`, `start_plan`)...
    pub prune: Option<super::algorithms::Prune>,
    /// ...and this tells that it did.
    pub pruned: bool,
    /// The fastest time `stop_early` last scanned the arcs for (as bits), so that it scans
    /// again only when another plan has done better since.
    prune_seen: u64,
    /// A floor under the phase's worst load over usable rate, known without a scan (the
    /// plan raises it as it learns; see `stop_early`).
    pub floor_worst: f64,
}

impl Drop for Router<'_> {
    fn drop(&mut self) {
        for loads in self.spare_loads.drain(..) {
            keep_for_later(loads);
        }
    }
}

impl<'f> Router<'f> {
    pub fn new(fab: &'f Fabric) -> Self {
        let n = fab.transit.len();
        Router {
            fab,
            qdist: vec![None; fab.class_count as usize],
            acc: vec![0.0; n],
            arrive: vec![0.0; n],
            member: vec![false; n],
            buckets: Vec::new(),
            hop_memo: HashMap::default(),
            hop_entries: Vec::new(),
            scan_groups: 6,
            spare_loads: Vec::new(),
            max_hops: 0,
            prune: None,
            pruned: false,
            prune_seen: f64::INFINITY.to_bits(),
            floor_worst: 0.0,
        }
    }

    /// A zeroed per-arc load buffer (reused: fresh memory is slow to touch at scale).
    pub fn take_loads(&mut self) -> Vec<f64> {
        let n = self.fab.arc_count();
        match self.spare_loads.pop() {
            Some(mut v) if v.len() == n => {
                v.fill(0.0);
                v
            }
            _ => pooled_zeroed(n),
        }
    }

    /// Hands back a load buffer no plan needs any more.
    pub fn recycle_loads(&mut self, loads: Vec<f64>) {
        self.spare_loads.push(loads);
    }

    /// Hop distances from every class to class `c`, by BFS on the quotient graph.
    fn class_dist(&mut self, c: u32) -> Rc<Vec<u16>> {
        if let Some(Some(d)) = self.qdist.get(c as usize) {
            return Rc::clone(d);
        }
        let fab = self.fab;
        let mut dist = vec![INF; fab.class_count as usize];
        dist[c as usize] = 0;
        let mut frontier = vec![c];
        let mut next = Vec::new();
        let mut level = 0u16;
        while !frontier.is_empty() && level < INF - 2 {
            level += 1;
            for &k in &frontier {
                for &nb in fab.class_neighbours(k) {
                    if dist[nb as usize] == INF {
                        dist[nb as usize] = level;
                        next.push(nb);
                    }
                }
            }
            std::mem::swap(&mut frontier, &mut next);
            next.clear();
        }
        let rc = Rc::new(dist);
        self.qdist[c as usize] = Some(Rc::clone(&rc));
        rc
    }

    /// Hop distance from transit vertex `v` to `y` (class `cy`).
    fn dist(&self, qd: &[u16], y: Vx, cy: u32, v: Vx) -> u16 {
        if v == y {
            return 0;
        }
        let cv = self.fab.class[v as usize];
        if cv == u32::MAX {
            return INF;
        }
        if cv == cy {
            // A twin of y reaches it through any shared neighbour.
            if self.fab.neighbours(v).is_empty() {
                INF
            } else {
                2
            }
        } else {
            qd[cv as usize]
        }
    }

    /// Next-hop entries of `v` (at distance `dv` ≥ 1) towards `y`.
    fn next_hops(&self, qd: &[u16], v: Vx, dv: u16, y: Vx, cy: u32, out: &mut Vec<Adj>) {
        out.clear();
        let fab = self.fab;
        for g in fab.adj_groups(v) {
            let entries = &fab.adj[g.start as usize..g.end as usize];
            if dv == 1 {
                if g.class == cy {
                    out.extend(entries.iter().filter(|a| a.nbr == y));
                }
            } else if qd[g.class as usize] == dv - 1 {
                out.extend_from_slice(entries);
            }
        }
    }

    /// The `pick`-th next-hop entry (modulo their number) of `v` towards `y`, in the order
    /// `next_hops` lists them; None when there is none. Vertices with few neighbour classes
    /// are scanned in place; the others' lists are kept (`hop_memo`), as scanning dozens of
    /// classes at every hop through a core switch cost more than the rest of the walk.
    #[inline]
    fn pick_hop(&mut self, qd: &[u16], v: Vx, dv: u16, y: Vx, cy: u32, pick: u64) -> Option<Adj> {
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
            let first = entries.partition_point(|a| a.nbr < y);
            let count = entries[first..].partition_point(|a| a.nbr == y);
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

    /// Readies the router for the next plan, which may stop early as `prune` allows.
    pub fn start_plan(&mut self, prune: Option<super::algorithms::Prune>) {
        self.prune = prune;
        self.pruned = false;
        self.prune_seen = f64::INFINITY.to_bits();
        self.floor_worst = 0.0;
    }

    /// Whether the plan under way is sure to be slower than the fastest plan costed so far;
    /// if so, marks it `pruned`. Loads only grow as it goes on and a phase's capacity on an
    /// arc is at most its usable rate (NVLS runs NVLink below it), so the largest load over
    /// usable rate on any arcs now bounds the phase's worst ratio from below; latency, never
    /// negative, is left out. Compares `floor_worst` first; with the phase's `loads` so far,
    /// also scans them, when the fastest time has changed since the last scan.
    pub fn stop_early(&mut self, loads: Option<&[f64]>) -> bool {
        let Some((prune, (best_us, bits))) = self
            .prune
            .as_ref()
            .and_then(|p| p.best_us().map(|best| (p, best)))
        else {
            return false;
        };
        if self.floor_worst * prune.us_per_worst > best_us {
            self.pruned = true;
            return true;
        }
        let Some(loads) = loads.filter(|_| bits != self.prune_seen) else {
            return false;
        };
        self.prune_seen = bits;
        let n = loads.len();
        let (worst, _) = super::evaluate::worst_ratio(
            loads,
            &self.fab.arc_usable[..n],
            &self.fab.arc_nvlink[..n],
            |usable, _| usable,
        );
        self.pruned = worst * prune.us_per_worst > best_us;
        self.pruned
    }

    /// Routes flows and adds their bytes to `loads`.
    pub fn route(
        &mut self,
        flows: &[NetFlow],
        adaptive: bool,
        loads: &mut [f64],
    ) -> Result<(), Unreachable> {
        if adaptive {
            self.route_adaptive(flows, loads)
        } else {
            self.route_ecmp(flows, loads)
        }
    }

    fn route_ecmp(&mut self, flows: &[NetFlow], loads: &mut [f64]) -> Result<(), Unreachable> {
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
            v: Vx,
            dv: u16,
            y: Vx,
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
                        w.v = pick.nbr;
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

    fn route_adaptive(&mut self, flows: &[NetFlow], loads: &mut [f64]) -> Result<(), Unreachable> {
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
        let mut arrivals: Vec<Vx> = Vec::new();
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
                        loads[a.inn as usize] += share;
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
                    let s = down[j].nbr;
                    let mut e = j;
                    while e < down.len() && down[e].nbr == s {
                        e += 1;
                    }
                    let frac = self.arrive[s as usize];
                    if frac > 0.0 {
                        let per = bytes * frac / (e - j) as f64;
                        for a in &down[j..e] {
                            loads[a.inn as usize] += per;
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
        x0: Vx,
        d: u16,
        y0: Vx,
        cy: u32,
        interior: &mut Vec<(ArcId, f64)>,
        arrivals: &mut Vec<Vx>,
    ) {
        let mut hops = Vec::new();
        self.next_hops(qd, x0, d, y0, cy, &mut hops);
        let k = hops.len().max(1) as f64;
        if self.buckets.len() < d as usize + 1 {
            self.buckets.resize(d as usize + 1, Vec::new());
        }
        let level0 = d - 1;
        for a in &hops {
            let v = a.nbr as usize;
            if self.acc[v] == 0.0 {
                self.buckets[level0 as usize].push(a.nbr);
            }
            self.acc[v] += 1.0 / k;
        }
        let mut level = level0;
        while level >= 2 {
            let bucket = std::mem::take(&mut self.buckets[level as usize]);
            for &v in &bucket {
                let t = std::mem::replace(&mut self.acc[v as usize], 0.0);
                if t == 0.0 {
                    continue;
                }
                self.next_hops(qd, v, level, y0, cy, &mut hops);
                let share = t / hops.len().max(1) as f64;
                for a in &hops {
                    interior.push((a.out, share));
                    let u = a.nbr as usize;
                    if self.acc[u] == 0.0 {
                        self.buckets[level as usize - 1].push(a.nbr);
                    }
                    self.acc[u] += share;
                }
            }
            let mut bucket = bucket;
            bucket.clear();
            self.buckets[level as usize] = bucket;
            level -= 1;
        }
        let bucket = std::mem::take(&mut self.buckets[1]);
        for &s in &bucket {
            let t = std::mem::replace(&mut self.acc[s as usize], 0.0);
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
        senders: &[(Vx, f64)],
        receivers: &[(Vx, f64)],
        unit: f64,
        loads: &mut [f64],
    ) -> Result<(), Unreachable> {
        let fab = self.fab;
        // Weights per vertex, summed in input order, in dense tables (vertices are device
        // indices); the lists keep which vertices appear.
        let n = fab.transit.len();
        let (mut send_w, mut recv_w) = (vec![0.0f64; n], vec![0.0f64; n]);
        let (mut sends, mut recvs) = (vec![false; n], vec![false; n]);
        let (mut send_list, mut recv_list): (Vec<Vx>, Vec<Vx>) = (Vec::new(), Vec::new());
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
        let senders: Vec<(Vx, f64)> = send_list.iter().map(|&x| (x, send_w[x as usize])).collect();
        // Receivers by (class, own sending weight, receiving weight): each such set is
        // propagated once; sets in key order, members in vertex order.
        let mut keyed: Vec<((u32, u64, u64), Vx)> = Vec::with_capacity(recv_list.len());
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
        let mut members: Vec<Vx> = Vec::new();
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
                if self.acc[x as usize] == 0.0 {
                    self.buckets[dx as usize].push(x);
                }
                self.acc[x as usize] += inj;
                max_level = max_level.max(dx);
            }
            self.max_hops = self.max_hops.max(max_level);
            let mut level = max_level;
            while level >= 2 {
                let bucket = std::mem::take(&mut self.buckets[level as usize]);
                for &x in &bucket {
                    let t = std::mem::replace(&mut self.acc[x as usize], 0.0);
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
                            let u = a.nbr as usize;
                            if self.acc[u] == 0.0 {
                                self.buckets[level as usize - 1].push(a.nbr);
                            }
                            self.acc[u] += share;
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
                        let s = down[j].nbr;
                        let mut e = j;
                        while e < down.len() && down[e].nbr == s {
                            e += 1;
                        }
                        let t = self.acc[s as usize];
                        if t > 0.0 {
                            let per = t / k / (e - j) as f64;
                            for a in &down[j..e] {
                                loads[a.inn as usize] += per;
                            }
                        }
                        j = e;
                    }
                }
                let bucket = std::mem::take(&mut self.buckets[1]);
                for &s in &bucket {
                    self.acc[s as usize] = 0.0;
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

    /// The SHARP reduction tree of `slot` (a rail of a group): a reducing switch nearest (in
    /// worst case) to all `leaves` (distinct) becomes the root; each leaf's path to it joins
    /// the tree. Returns the tree's arcs (towards the root, away from it). Every switch on the
    /// tree must reduce.
    ///
    /// Like SHARP's aggregation manager, the trees of a plan spread over the fabric: each
    /// takes the equally near root whose tree shares the fewest links with the earlier trees
    /// (looking from a place that spaces a group's rails evenly through them), and at each
    /// switch the equally short parent link that the fewest earlier trees use (one per switch
    /// and tree, so the paths still form a tree). One root for all would make every rail's
    /// tree, and every concurrent group's, meet on the same top-tier links.
    pub fn aggregation_tree(
        &mut self,
        leaves: &[Vx],
        reduces: &[bool],
        slot: TreeSlot,
        used: &mut TreeUse,
    ) -> Result<Vec<(ArcId, ArcId)>, Result<Unreachable, String>> {
        let fab = self.fab;
        let mut classes: Vec<u32> = leaves.iter().map(|&l| fab.class[l as usize]).collect();
        classes.sort_unstable();
        classes.dedup();
        if classes.contains(&u32::MAX) {
            return Err(Err("a NIC is not cabled to a switch".into()));
        }
        let tables: Vec<(u32, Rc<Vec<u16>>)> =
            classes.iter().map(|&c| (c, self.class_dist(c))).collect();
        let mut nearest: Vec<Vx> = Vec::new();
        let mut best_worst = INF;
        for v in 0..fab.transit.len() as Vx {
            if !reduces[v as usize] || !fab.transit[v as usize] {
                continue;
            }
            let cv = fab.class[v as usize];
            let mut worst = 0u16;
            for (c, qd) in &tables {
                let d = if cv == *c {
                    if leaves
                        .iter()
                        .all(|&l| l == v || fab.class[l as usize] != *c)
                    {
                        0
                    } else {
                        2
                    }
                } else {
                    qd[cv as usize]
                };
                worst = worst.max(d);
            }
            if worst < best_worst {
                best_worst = worst;
                nearest.clear();
            }
            if worst == best_worst && worst != INF {
                nearest.push(v);
            }
        }
        if nearest.is_empty() {
            return Err(Err(
                "no switch that reduces in the network reaches every node".into(),
            ));
        }
        // One hash key per tree: a single group's trees are keyed by their rail alone.
        let tree = u64::from(slot.group) * u64::from(slot.rails) + u64::from(slot.rail);
        let spaced = u64::from(slot.rail) * nearest.len() as u64 / u64::from(slot.rails.max(1));
        let from = (spaced % nearest.len() as u64) as usize;
        // In turn from `from`: the first root whose tree shares no arc with the plan's earlier
        // trees, else the one whose busiest arc carries the fewest of them (then the fewest in
        // all).
        let mut best: Option<(Overlap, Vec<(ArcId, ArcId)>)> = None;
        for i in 0..nearest.len() {
            let root = nearest[(from + i) % nearest.len()];
            let edges = match self.tree_to(leaves, reduces, root, tree, used) {
                Ok(edges) => edges,
                Err(e) if i == 0 => return Err(e),
                Err(_) => continue,
            };
            let shared = || {
                edges
                    .iter()
                    .map(|(out, _)| used.arcs.get(out).copied().unwrap_or(0))
            };
            let cost = (shared().max().unwrap_or(0), shared().sum::<u32>());
            if best.as_ref().is_none_or(|(c, _)| cost < *c) {
                best = Some((cost, edges));
            }
            if cost.0 == 0 {
                break;
            }
        }
        let edges = best.map(|(_, edges)| edges).unwrap_or_default();
        for (out, _) in &edges {
            *used.arcs.entry(*out).or_insert(0) += 1;
        }
        Ok(edges)
    }

    /// The tree of key `tree` from `leaves` to `root` (a reducing switch at the same worst
    /// distance from them as any): at each switch the equally short parent link whose way on
    /// to the root crosses the fewest earlier trees at its busiest (then in all), looking
    /// from a place hashed from the tree and the switch.
    fn tree_to(
        &mut self,
        leaves: &[Vx],
        reduces: &[bool],
        root: Vx,
        tree: u64,
        used: &TreeUse,
    ) -> Result<Vec<(ArcId, ArcId)>, Result<Unreachable, String>> {
        let fab = self.fab;
        // Each switch's parent in this tree and the cost of its way to the root, once chosen.
        let mut parent_of: HashMap<Vx, (Overlap, Adj), FxBuild> = HashMap::default();
        let croot = fab.class[root as usize];
        let qd = self.class_dist(croot);
        let mut seen: std::collections::HashSet<ArcId> = std::collections::HashSet::new();
        let mut edges = Vec::new();
        for &leaf in leaves {
            if !reduces[leaf as usize] {
                return Err(Err(format!(
                    "switch {} does not reduce in the network",
                    fab.device_ids[leaf as usize]
                )));
            }
            let mut v = leaf;
            let mut dv = self.dist(&qd, root, croot, v);
            if dv == INF {
                return Err(Ok(Unreachable {
                    from: leaf,
                    to: root,
                }));
            }
            self.max_hops = self.max_hops.max(dv);
            while dv > 0 {
                self.choose_parent(v, dv, (root, croot, &qd), reduces, tree, used, &mut parent_of)
                    .map_err(|()| {
                        Err(format!(
                            "the path from switch {} to the reduction root crosses a switch that does not reduce",
                            fab.device_ids[leaf as usize]
                        ))
                    })?;
                let a = parent_of[&v].1;
                if seen.insert(a.out) {
                    edges.push((a.out, a.inn));
                }
                v = a.nbr;
                dv -= 1;
            }
        }
        Ok(edges)
    }

    /// Picks switch `v`'s parent (`dv` hops from the root) for `tree_to`, and those of the
    /// switches above it, into `parent_of`; fails when no equally short way to the root
    /// crosses only reducing switches.
    #[allow(clippy::too_many_arguments)]
    fn choose_parent(
        &mut self,
        v: Vx,
        dv: u16,
        (root, croot, qd): (Vx, u32, &Rc<Vec<u16>>),
        reduces: &[bool],
        tree: u64,
        used: &TreeUse,
        parent_of: &mut HashMap<Vx, (Overlap, Adj), FxBuild>,
    ) -> Result<Overlap, ()> {
        if dv == 0 {
            return Ok((0, 0));
        }
        if let Some(&(cost, _)) = parent_of.get(&v) {
            return Ok(cost);
        }
        let mut hops = Vec::new();
        self.next_hops(qd, v, dv, root, croot, &mut hops);
        hops.retain(|a| reduces[a.nbr as usize]);
        let from = (ecmp_hash(tree, 0, v) % hops.len().max(1) as u64) as usize;
        let mut best: Option<(Overlap, Adj)> = None;
        for i in 0..hops.len() {
            let a = hops[(from + i) % hops.len()];
            let Ok(above) = self.choose_parent(
                a.nbr,
                dv - 1,
                (root, croot, qd),
                reduces,
                tree,
                used,
                parent_of,
            ) else {
                continue;
            };
            let here = used.arcs.get(&a.out).copied().unwrap_or(0);
            let cost = (here.max(above.0), here + above.1);
            if best.is_none_or(|(c, _)| cost < c) {
                best = Some((cost, a));
            }
        }
        let (cost, a) = best.ok_or(())?;
        parent_of.insert(v, (cost, a));
        Ok(cost)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::analysis::collective::fabric;
    use crate::analysis::collective::test_designs::rail_optimized;
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
                    (v, dv) = (pick.nbr, dv - 1);
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
        let fab = fabric::build(&design, &catalog).expect("fabric");
        let switches: Vec<Vx> = (0..fab.transit.len() as Vx)
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
            let mut router = Router::new(&fab);
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

    /// A buffer kept from an earlier evaluation, whatever it held, comes back as zeros of
    /// the length asked for.
    #[test]
    fn kept_buffers_come_back_zeroed() {
        for _ in 0..2 * KEPT_BUFFERS {
            keep_for_later(vec![7.0; 1000]);
        }
        for n in [900, 1000] {
            let v = pooled_zeroed(n);
            assert_eq!(v.len(), n);
            assert!(v.iter().all(|&x| x == 0.0));
        }
        // Never more than a handful kept, whatever other tests add meanwhile.
        assert!(SPARE_LOADS.lock().map_or(0, |p| p.len()) <= KEPT_BUFFERS);
    }
}
