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
//!
//! `ecmp` hashes connections, `adaptive` spreads them (and uniform traffic), `aggregation`
//! places SHARP trees, `prune` lets a plan stop once it cannot win.

mod adaptive;
mod aggregation;
mod ecmp;
mod prune;

pub(crate) use aggregation::{TreeSlot, TreeUse};
pub(crate) use prune::Prune;

use super::fabric::{Adj, Fabric, FxBuild, Vertex};
use super::workspace::Workspace;
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

/// Traffic between two attachment vertices of the routing graph.
#[derive(Debug, Clone, Copy)]
pub(crate) struct NetFlow {
    pub x: Vertex,
    pub y: Vertex,
    /// Bytes per connection (per byte of the collective's size).
    pub bytes: f64,
    /// Connections (NCCL channels, queue pairs) the bytes are split over; each is hashed.
    pub conns: u32,
    pub key: u64,
}

/// Two devices with no path between them.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Unreachable {
    pub from: Vertex,
    pub to: Vertex,
}

pub(crate) struct Router<'f> {
    fab: &'f Fabric,
    /// Where load buffers come from and go back to, and how the work is split.
    pub workspace: &'f Workspace,
    /// Per class: hop distances from every class to it, once worked out.
    class_distances: Vec<Option<Rc<Vec<u16>>>>,
    share_at: Vec<f64>,
    arrive: Vec<f64>,
    member: Vec<bool>,
    buckets: Vec<Vec<Vertex>>,
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
    pub prune: Option<Prune>,
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
            self.workspace.keep_loads(loads);
        }
    }
}

impl<'f> Router<'f> {
    pub fn new(fab: &'f Fabric, workspace: &'f Workspace) -> Self {
        let n = fab.transit.len();
        Router {
            fab,
            workspace,
            class_distances: vec![None; fab.class_count as usize],
            share_at: vec![0.0; n],
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
            _ => self.workspace.zeroed_loads(n),
        }
    }

    /// Hands back a load buffer no plan needs any more.
    pub fn recycle_loads(&mut self, loads: Vec<f64>) {
        self.spare_loads.push(loads);
    }

    /// Hop distances from every class to class `c`, by BFS on the quotient graph.
    fn class_dist(&mut self, c: u32) -> Rc<Vec<u16>> {
        if let Some(Some(d)) = self.class_distances.get(c as usize) {
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
        self.class_distances[c as usize] = Some(Rc::clone(&rc));
        rc
    }

    /// Hop distance from transit vertex `v` to `y` (class `cy`).
    fn dist(&self, qd: &[u16], y: Vertex, cy: u32, v: Vertex) -> u16 {
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
    fn next_hops(&self, qd: &[u16], v: Vertex, dv: u16, y: Vertex, cy: u32, out: &mut Vec<Adj>) {
        out.clear();
        let fab = self.fab;
        for g in fab.adj_groups(v) {
            let entries = &fab.adj[g.start as usize..g.end as usize];
            if dv == 1 {
                if g.class == cy {
                    out.extend(entries.iter().filter(|a| a.neighbour == y));
                }
            } else if qd[g.class as usize] == dv - 1 {
                out.extend_from_slice(entries);
            }
        }
    }

    /// Routes flows and adds their bytes to `loads`.
    pub fn route(
        &mut self,
        flows: &[NetFlow],
        routing: Routing,
        loads: &mut [f64],
    ) -> Result<(), Unreachable> {
        match routing {
            Routing::Adaptive => self.route_adaptive(flows, loads),
            Routing::Ecmp => self.route_ecmp(flows, loads),
        }
    }
}
