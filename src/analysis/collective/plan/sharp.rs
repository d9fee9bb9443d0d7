//! SHARP: NICs send their share to the switches, which reduce along one tree per rail.

use super::Segment;
use super::loads::{LoadBuilder, unreachable_error};
use crate::analysis::collective::fabric::{ABSENT_ARC, ArcId, Fabric, Vertex};
use crate::analysis::collective::routing::{TreeSlot, TreeUse};
use crate::analysis::collective::{Algorithm, CollectiveError, Op};
use std::collections::HashSet;

/// SHARP: every NIC sends its share to its leaf once; the switches reduce along one tree per
/// rail and send the result back down. Each tree edge carries the share once each way; the
/// trees of the rails, and of the concurrent groups (this is the `group`th), go where the
/// fewest earlier trees of the plan are (`Router::aggregation_tree`), as an aggregation manager
/// spreads the trees of the communicators it serves.
pub(super) fn sharp_trees(
    b: &mut LoadBuilder,
    fab: &Fabric,
    segs: &[Segment],
    group: u32,
    used: &mut TreeUse,
) -> Result<(), CollectiveError> {
    let g = segs[0].gpus.len() as f64;
    let rails = segs
        .iter()
        .map(|s| fab.nics_of(fab.node_of_gpu(s.gpus[0])).len())
        .min()
        .unwrap_or(0);
    if rails == 0 {
        return Err(CollectiveError::AlgorithmUnavailable {
            algorithm: Algorithm::Sharp,
            op: Op::AllReduce,
            reason: "in-network reduction needs NICs on switches".into(),
        });
    }
    for r in 0..rails as u32 {
        let mut leaves: Vec<Vertex> = Vec::new();
        for s in segs {
            let served = || {
                s.gpus
                    .iter()
                    .copied()
                    .filter(|&x| fab.gpus[x as usize].nic == Some(r))
            };
            let share = served().count() as f64 / g;
            let node = fab.gpus[s.gpus[0] as usize].node;
            let Some((out, arc_in, x)) = b.attachment(node, Some(r)) else {
                return Err(CollectiveError::AlgorithmUnavailable {
                    algorithm: Algorithm::Sharp,
                    op: Op::AllReduce,
                    reason: "a NIC is not cabled to a switch".into(),
                });
            };
            if out == ABSENT_ARC {
                return Err(CollectiveError::AlgorithmUnavailable {
                    algorithm: Algorithm::Sharp,
                    op: Op::AllReduce,
                    reason: "nodes are cabled to each other, not to reducing switches".into(),
                });
            }
            b.add_arc(out, share);
            b.add_arc(arc_in, share);
            let nic = &fab.nics_of(&fab.nodes[node as usize])[r as usize];
            b.add_arc(nic.pcie_up, share);
            b.add_arc(nic.pcie_down, share);
            for x in served() {
                b.add_arc(fab.gpus[x as usize].pcie_up, 1.0 / g);
                b.add_arc(fab.gpus[x as usize].pcie_down, 1.0 / g);
            }
            leaves.push(x);
        }
        let served_share = segs[0]
            .gpus
            .iter()
            .filter(|&&x| fab.gpus[x as usize].nic == Some(r))
            .count() as f64
            / g;
        if served_share == 0.0 {
            // No GPU of the group on this rail: no tree to place.
            continue;
        }
        let slot = TreeSlot {
            rail: r,
            rails: rails as u32,
            group,
        };
        let edges = b.router_tree(&leaves, slot, used)?;
        for (up, down) in edges {
            b.add_arc(up, served_share);
            b.add_arc(down, served_share);
        }
    }
    b.uses_net = true;
    Ok(())
}

impl LoadBuilder<'_, '_> {
    /// SHARP tree `tree` of `trees` over the switches the nodes' NICs reach (`leaves`).
    fn router_tree(
        &mut self,
        leaves: &[Vertex],
        slot: TreeSlot,
        used: &mut TreeUse,
    ) -> Result<Vec<(ArcId, ArcId)>, CollectiveError> {
        let fab = self.fab;
        // Many nodes share a leaf switch; a leaf's path to the root is the same each time, so
        // each one is walked once, in order of first appearance (which keeps the errors and
        // the edge order of walking them all).
        let mut seen: HashSet<Vertex> = HashSet::with_capacity(leaves.len().min(1 << 12));
        let unique: Vec<Vertex> = leaves.iter().copied().filter(|&l| seen.insert(l)).collect();
        if unique.len() <= 1 {
            return match leaves.first() {
                Some(&l) if !fab.in_network[l as usize] => {
                    Err(CollectiveError::AlgorithmUnavailable {
                        algorithm: Algorithm::Sharp,
                        op: Op::AllReduce,
                        reason: format!(
                            "switch {} does not reduce in the network",
                            fab.device_ids[l as usize]
                        ),
                    })
                }
                _ => Ok(Vec::new()),
            };
        }
        self.router
            .aggregation_tree(&unique, &fab.in_network, slot, used)
            .map_err(|e| match e {
                Ok(u) => unreachable_error(fab, u),
                Err(reason) => CollectiveError::AlgorithmUnavailable {
                    algorithm: Algorithm::Sharp,
                    op: Op::AllReduce,
                    reason,
                },
            })
    }
}
