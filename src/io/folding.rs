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
    // Per block, whether a member with a box has been seen (its bounds are real).
    let mut boxed: Vec<bool> = Vec::new();
    let mut grow = |folding: &mut Folding, b: u32, i: usize| {
        if folding.block_of.is_empty() {
            folding.block_of = vec![NOT_FOLDED; devices.len()];
        }
        folding.block_of[i] = b;
        let block = &mut folding.blocks[b as usize];
        if boxed.len() <= b as usize {
            boxed.resize(b as usize + 1, false);
        }
        if let Some(r) = bounds(i) {
            block.bounds = if boxed[b as usize] {
                union(block.bounds, r)
            } else {
                r
            };
            boxed[b as usize] = true;
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

#[cfg(test)]
mod tests {
    use super::*;
    use crate::generate::{Template, TemplateSpec, generate};
    use crate::model::Catalog;

    /// A block's box is its drawn members' boxes only: a member drawn nowhere (here the
    /// first one) neither counts towards it nor drags it to the origin.
    #[test]
    fn a_block_spans_only_the_members_that_are_drawn() {
        let mut spec = TemplateSpec::new(Template::RailOptimized);
        spec.nodes = Some(32);
        let design = generate(&spec, &Catalog::builtin()).expect("a unit");
        let first_in_unit = design
            .devices
            .iter()
            .position(|d| d.group.is_some())
            .expect("a grouped device");
        let box_of = |i: usize| {
            let p = design.devices[i].pos;
            ((p.x - 50.0, p.y - 20.0), (p.x + 50.0, p.y + 20.0))
        };
        let folding = fold(
            &design,
            |i| (i != first_in_unit).then(|| box_of(i)),
            FoldScope::Overview,
        );
        let unit = folding
            .blocks
            .iter()
            .find(|b| b.what.group().is_some())
            .expect("the unit's block");
        let members: Vec<usize> = (0..design.devices.len())
            .filter(|&i| {
                i != first_in_unit && folding.block_of[i] == folding.block_of[first_in_unit]
            })
            .collect();
        let expected = members
            .iter()
            .map(|&i| box_of(i))
            .reduce(union)
            .expect("members");
        // The unit lies below the origin (y from 240): a box grown from (0, 0) would not.
        assert_eq!(unit.bounds, expected);
        // Every device of the unit is in it, the one drawn nowhere too.
        assert_eq!(unit.devices as usize, members.len() + 1);
    }

    /// Folding chosen groups folds nothing else: no rows, and no groups when none is chosen.
    #[test]
    fn chosen_groups_fold_alone() {
        let mut spec = TemplateSpec::new(Template::RailOptimized);
        spec.nodes = Some(256);
        spec.tiers = 3;
        let design = generate(&spec, &Catalog::builtin()).expect("two pods");
        let boxes = crate::io::device_rows::boxes_at_positions(&design);
        let none = fold(&design, &boxes, FoldScope::Groups(&Default::default()));
        assert!(none.blocks.is_empty() && none.block_of.is_empty());
        let pod = design.groups[0].id;
        let one = fold(&design, &boxes, FoldScope::Groups(&[pod].into()));
        assert_eq!(one.blocks.len(), 1);
        assert_eq!(one.blocks[0].what, FoldedAs::Group(pod));
        // A pod of 128 DGX: their 32 leaves and 32 spines with them, 1,024 GPUs.
        assert_eq!((one.blocks[0].devices, one.blocks[0].gpus), (192, 1024));
        let all = fold(&design, &boxes, FoldScope::Overview);
        // Both pods, and the 32 core switches as a row.
        assert_eq!(all.blocks.len(), 3);
        assert_eq!(
            all.blocks[2].what,
            FoldedAs::Row("core · 32 × qm9700".into())
        );
    }
}
