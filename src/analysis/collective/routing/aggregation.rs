//! SHARP aggregation trees: a root nearest to the leaves, spread over the fabric tree by tree.

use super::ecmp::ecmp_hash;
use super::{INF, Router, Unreachable};
use crate::analysis::collective::fabric::{Adj, ArcId, FxBuild, Vertex};
use std::collections::HashMap;
use std::rc::Rc;

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

impl Router<'_> {
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
        leaves: &[Vertex],
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
        let mut nearest: Vec<Vertex> = Vec::new();
        let mut best_worst = INF;
        for v in 0..fab.transit.len() as Vertex {
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
        leaves: &[Vertex],
        reduces: &[bool],
        root: Vertex,
        tree: u64,
        used: &TreeUse,
    ) -> Result<Vec<(ArcId, ArcId)>, Result<Unreachable, String>> {
        let fab = self.fab;
        // Each switch's parent in this tree and the cost of its way to the root, once chosen.
        let mut parent_of: HashMap<Vertex, (Overlap, Adj), FxBuild> = HashMap::default();
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
                    edges.push((a.out, a.arc_in));
                }
                v = a.neighbour;
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
        v: Vertex,
        dv: u16,
        (root, croot, qd): (Vertex, u32, &Rc<Vec<u16>>),
        reduces: &[bool],
        tree: u64,
        used: &TreeUse,
        parent_of: &mut HashMap<Vertex, (Overlap, Adj), FxBuild>,
    ) -> Result<Overlap, ()> {
        if dv == 0 {
            return Ok((0, 0));
        }
        if let Some(&(cost, _)) = parent_of.get(&v) {
            return Ok(cost);
        }
        let mut hops = Vec::new();
        self.next_hops(qd, v, dv, root, croot, &mut hops);
        hops.retain(|a| reduces[a.neighbour as usize]);
        let from = (ecmp_hash(tree, 0, v) % hops.len().max(1) as u64) as usize;
        let mut best: Option<(Overlap, Adj)> = None;
        for i in 0..hops.len() {
            let a = hops[(from + i) % hops.len()];
            let Ok(above) = self.choose_parent(
                a.neighbour,
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
