//! Which devices a picture draws folded into one block: the groups the user folded, or for an
//! overview of a large fabric every outermost group (a pod or scalable unit, its racks inside
//! it) and every row of devices left outside them (a core tier). The canvas and the SVG
//! overview fold alike; each gives the boxes it draws its devices in.

use super::device_rows::{Corners, foldable_rows, union};
use crate::model::{Design, GroupId};
use std::collections::HashMap;

/// Marks a device drawn on its own in `Folding::block_of`.
pub const NOT_FOLDED: u32 = u32::MAX;

/// What a block stands for.
#[derive(Debug, Clone, PartialEq)]
pub enum FoldedAs {
    Group(GroupId),
    /// A row outside any group (a core tier, or a row of a design without pods), with its
    /// caption: "core · 1024 × qm9700 in 5 rows".
    Row(String),
}

impl FoldedAs {
    /// The group, if the block is one.
    pub fn group(&self) -> Option<GroupId> {
        match self {
            FoldedAs::Group(g) => Some(*g),
            FoldedAs::Row(_) => None,
        }
    }
}

/// One block: what it stands for, the union of its members' boxes, and its tally.
#[derive(Debug, Clone, PartialEq)]
pub struct FoldBlock {
    pub what: FoldedAs,
    pub bounds: Corners,
    pub devices: u32,
    pub gpus: u64,
}

/// The blocks, and per device (indexed like `design.devices`) its block or `NOT_FOLDED`;
/// `block_of` is empty when nothing folds.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Folding {
    pub blocks: Vec<FoldBlock>,
    pub block_of: Vec<u32>,
}

/// What folds into what.
#[derive(Debug, Clone, Copy)]
pub enum FoldScope<'a> {
    /// The overview: every outermost group, and the rows left outside groups.
    Overview,
    /// These groups; a device folds into the outermost of them it is in.
    Groups(&'a std::collections::BTreeSet<GroupId>),
}

/// The folding of `design` under `scope`; `bounds(i)` is device i's box (`None`: drawn
/// nowhere, and left out of every block's box).
pub fn fold(
    design: &Design,
    bounds: impl Fn(usize) -> Option<Corners>,
    scope: FoldScope<'_>,
) -> Folding {
    let devices = &design.devices;
    let mut folding = Folding::default();
    let chosen = match scope {
        FoldScope::Overview => None,
        FoldScope::Groups(set) if set.is_empty() => return folding,
        FoldScope::Groups(set) => Some(set),
    };
    let grow = |folding: &mut Folding, b: u32, i: usize| {
        if folding.block_of.is_empty() {
            folding.block_of = vec![NOT_FOLDED; devices.len()];
        }
        folding.block_of[i] = b;
        let block = &mut folding.blocks[b as usize];
        if let Some(r) = bounds(i) {
            block.bounds = if block.devices == 0 {
                r
            } else {
                union(block.bounds, r)
            };
        }
        block.devices += 1;
        if let Some(n) = devices[i].kind.as_node() {
            block.gpus += u64::from(n.gpu_count);
        }
    };
    if !design.groups.is_empty() {
        let slot: HashMap<GroupId, usize> = design
            .groups
            .iter()
            .enumerate()
            .map(|(k, g)| (g.id, k))
            .collect();
        let folds = |k: usize| chosen.is_none_or(|set| set.contains(&design.groups[k].id));
        // The group each group folds into: the outermost folding one it is in, if any (at
        // most 16 levels: a parent cycle in a hand-edited file ends there).
        let root: Vec<Option<usize>> = (0..design.groups.len())
            .map(|mut k| {
                let mut folded_into = folds(k).then_some(k);
                for _ in 0..16 {
                    match design.groups[k].parent.and_then(|p| slot.get(&p)) {
                        Some(&parent) => {
                            k = parent;
                            if folds(k) {
                                folded_into = Some(k);
                            }
                        }
                        None => break,
                    }
                }
                folded_into
            })
            .collect();
        let mut block_of_group = vec![NOT_FOLDED; design.groups.len()];
        for (i, d) in devices.iter().enumerate() {
            let Some(k) = d.group.and_then(|g| slot.get(&g).and_then(|&k| root[k])) else {
                continue;
            };
            if block_of_group[k] == NOT_FOLDED {
                block_of_group[k] = folding.blocks.len() as u32;
                folding.blocks.push(FoldBlock {
                    what: FoldedAs::Group(design.groups[k].id),
                    bounds: ((0.0, 0.0), (0.0, 0.0)),
                    devices: 0,
                    gpus: 0,
                });
            }
            grow(&mut folding, block_of_group[k], i);
        }
    }
    if chosen.is_none() {
        // What lies outside every group folds by rows, each row one block with its count,
        // so that nothing is left as thousands of specks.
        for row in foldable_rows(design, &bounds) {
            let b = folding.blocks.len() as u32;
            folding.blocks.push(FoldBlock {
                what: FoldedAs::Row(row.caption()),
                bounds: row.bounds,
                devices: 0,
                gpus: 0,
            });
            for &i in &row.members {
                grow(&mut folding, b, i);
            }
        }
    }
    folding
}
