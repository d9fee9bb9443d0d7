//! Wide fabrics made presentable. Templates lay every node, pod or scalable unit side by
//! side, so a large fabric is a strip many times wider than tall: at zoom to fit 256 nodes
//! were a band 20 pixels high, 8,192 nodes one line of pixels. Such a strip first has its
//! racks stood upright (`upright`). If it is still a strip, its outermost groups (pods,
//! scalable units) are rearranged, each keeping its inside as drawn: many of them into a
//! grid of about a screen's proportions under the devices outside every group (core
//! switches, shared spines); a few that share one such tier into two rows about it, the
//! upper row upside down, as three-tier Clos fabrics are often drawn.

use super::builder::{BLOCK_GAP, ROW_GAP, SPACING, spread};
use crate::model::{Design, DeviceKind, GroupId, Pos};
use std::collections::{BTreeMap, HashMap, HashSet};

/// Fewer outermost groups than this are mirrored about their shared tier, not put in a grid.
/// A grid of scalable units under shared spines sends every spine's links across the rows
/// above (a 256-node, 8-unit fabric became a stack drowned in them), so only fabrics of
/// many pods are gridded: there each pod keeps its own spines and only the core links cross.
const MIN_BLOCKS: usize = 16;
/// A layout wider than this many times its height is made presentable: the 32-node SuperPOD
/// unit (4,140 by 520) stands in rack columns, 16 nodes (1,980 by 520) stay a row.
const MAX_ASPECT: f32 = 6.0;
/// After its racks stand upright, a layout still wider than this many times its height has
/// its blocks rearranged.
const STRIP_ASPECT: f32 = 2.0 * TARGET_ASPECT;
/// A mirror wider than this many times its height has the inside of its blocks gridded
/// first. Gridding sends the lower rows' links across the rows above, so a moderately wide
/// mirror (a 512-node fat tree, 5.4 : 1) is left clean.
const MIRROR_MAX_ASPECT: f32 = 6.0;
/// The grid's proportions: a 16:10 screen.
const TARGET_ASPECT: f32 = 1.6;

/// An axis-aligned extent of device positions.
#[derive(Debug, Clone, Copy)]
struct Extent {
    min: (f32, f32),
    max: (f32, f32),
}

impl Extent {
    fn of(p: Pos) -> Self {
        Extent {
            min: (p.x, p.y),
            max: (p.x, p.y),
        }
    }

    fn add(&mut self, p: Pos) {
        self.min = (self.min.0.min(p.x), self.min.1.min(p.y));
        self.max = (self.max.0.max(p.x), self.max.1.max(p.y));
    }

    fn width(&self) -> f32 {
        self.max.0 - self.min.0
    }

    fn height(&self) -> f32 {
        self.max.1 - self.min.1
    }
}

/// Makes a wide design presentable (see the module notes); a design that is not a strip is
/// left as it is.
pub(super) fn wrap_wide(design: &mut Design) {
    let Some(all) = extent(design, None) else {
        return;
    };
    if all.width() <= MAX_ASPECT * all.height().max(ROW_GAP) {
        return;
    }
    super::upright::stand_racks_upright(design);
    arrange(design, None, true);
}

/// Rearranges the blocks inside `scope` (the whole design if `None`) if its devices make a
/// strip: many into a grid, a few into a mirror if `mirror_allowed`, after gridding the
/// inside of each block when the mirror alone would still be a strip. Blocks inside a
/// mirrored block are gridded however few (a pod of three units is no strip beside pods
/// of twenty), which keeps the block's own shared tier on top, where the mirror expects it.
fn arrange(design: &mut Design, scope: Option<GroupId>, mirror_allowed: bool) {
    let Some(all) = extent(design, scope) else {
        return;
    };
    if !is_strip(all) {
        return;
    }
    let blocks = blocks_in(design, scope);
    if blocks.len() >= MIN_BLOCKS || (!mirror_allowed && blocks.len() >= 2) {
        grid(design, scope, all, &blocks);
        return;
    }
    if blocks.len() < 2 {
        return;
    }
    let cells = Cells::of(&blocks);
    let mirrored = Extent {
        min: all.min,
        max: (
            all.min.0 + blocks.len().div_ceil(2) as f32 * cells.width,
            all.min.1 + 2.0 * cells.height() + ROW_GAP,
        ),
    };
    if mirrored.width() > MIRROR_MAX_ASPECT * mirrored.height() {
        for (g, _) in &blocks {
            arrange(design, Some(*g), false);
        }
    }
    let blocks = blocks_in(design, scope);
    mirror(design, scope, all, &blocks);
}

fn is_strip(e: Extent) -> bool {
    e.width() > STRIP_ASPECT * e.height().max(ROW_GAP)
}

/// Where devices sit in the tree of groups.
struct Tree(HashMap<GroupId, Option<GroupId>>);

impl Tree {
    fn new(design: &Design) -> Self {
        Tree(design.groups.iter().map(|g| (g.id, g.parent)).collect())
    }

    /// Where a device in group `g` sits relative to `scope`: `None` outside it,
    /// `Some(None)` in it directly, `Some(Some(b))` inside its sub-block `b`.
    fn place(&self, scope: Option<GroupId>, g: Option<GroupId>) -> Option<Option<GroupId>> {
        let (mut child, mut at) = (None, g);
        // Bounded: a file's parent links could form a loop.
        for _ in 0..64 {
            if at == scope {
                return Some(child);
            }
            let here = at?;
            child = Some(here);
            at = self.0.get(&here).copied().flatten();
        }
        None
    }
}

/// Where each device sits relative to `scope` (see `Tree::place`), a block that holds no
/// node or host (a rail's spines grouped on their own) counted as shared: such switches join
/// the blocks rather than stand for one.
fn places(design: &Design, scope: Option<GroupId>) -> Vec<Option<Option<GroupId>>> {
    let tree = Tree::new(design);
    let mut places: Vec<_> = design
        .devices
        .iter()
        .map(|d| tree.place(scope, d.group))
        .collect();
    let with_nodes: HashSet<GroupId> = design
        .devices
        .iter()
        .zip(&places)
        .filter_map(|(d, place)| match place {
            Some(Some(b)) if matches!(d.kind, DeviceKind::GpuNode(_) | DeviceKind::Host(_)) => {
                Some(*b)
            }
            _ => None,
        })
        .collect();
    for place in &mut places {
        if let Some(Some(b)) = place
            && !with_nodes.contains(b)
        {
            *place = Some(None);
        }
    }
    places
}

fn extent(design: &Design, scope: Option<GroupId>) -> Option<Extent> {
    let tree = Tree::new(design);
    let mut all: Option<Extent> = None;
    for d in &design.devices {
        if tree.place(scope, d.group).is_none() {
            continue;
        }
        match &mut all {
            Some(e) => e.add(d.pos),
            None => all = Some(Extent::of(d.pos)),
        }
    }
    all
}

/// The blocks directly inside `scope` with the extent of their devices, left to right.
fn blocks_in(design: &Design, scope: Option<GroupId>) -> Vec<(GroupId, Extent)> {
    let mut blocks: BTreeMap<GroupId, Extent> = BTreeMap::new();
    for (d, place) in design.devices.iter().zip(places(design, scope)) {
        if let Some(Some(b)) = place {
            blocks
                .entry(b)
                .and_modify(|e| e.add(d.pos))
                .or_insert_with(|| Extent::of(d.pos));
        }
    }
    let mut order: Vec<(GroupId, Extent)> = blocks.into_iter().collect();
    order.sort_by(|a, b| a.1.min.0.total_cmp(&b.1.min.0));
    order
}

/// The devices directly in `scope` (outside all its blocks), by tier (rows by y, top
/// first), each tier left to right.
fn shared_tiers(design: &Design, scope: Option<GroupId>) -> Vec<(f32, Vec<usize>)> {
    let mut tiers: BTreeMap<u32, Vec<usize>> = BTreeMap::new();
    for (i, (d, place)) in design.devices.iter().zip(places(design, scope)).enumerate() {
        if place == Some(None) {
            tiers.entry(d.pos.y.to_bits()).or_default().push(i);
        }
    }
    let mut tiers: Vec<(f32, Vec<usize>)> = tiers
        .into_iter()
        .map(|(y, members)| (f32::from_bits(y), members))
        .collect();
    tiers.sort_by(|a, b| a.0.total_cmp(&b.0));
    for (_, members) in &mut tiers {
        members.sort_by(|&a, &b| design.devices[a].pos.x.total_cmp(&design.devices[b].pos.x));
    }
    tiers
}

/// Lays the shared tiers from `y` down over [left, right], a tier wider than that broken
/// into lines half a tier apart. Returns the y of the last line.
fn lay_tiers(
    design: &mut Design,
    tiers: &[(f32, Vec<usize>)],
    (left, right): (f32, f32),
    mut y: f32,
) -> f32 {
    let per_line = (((right - left) / SPACING) as usize + 1).max(1);
    let mut last = y;
    for (_, members) in tiers {
        for line in members.chunks(per_line) {
            let xs = spread(line.len(), left, right);
            for (&i, x) in line.iter().zip(xs) {
                design.devices[i].pos = Pos::new(x.round(), y);
            }
            last = y;
            y += ROW_GAP / 2.0;
        }
        y += ROW_GAP / 2.0;
    }
    last
}

/// Blocks keep their tiers level with one another (a rack without its leaf leaves the
/// leaf's row empty): a cell spans the blocks' tiers from the topmost to the lowest.
struct Cells {
    width: f32,
    top: f32,
    bottom: f32,
}

impl Cells {
    fn of(blocks: &[(GroupId, Extent)]) -> Self {
        Cells {
            width: blocks.iter().map(|(_, e)| e.width()).fold(0.0, f32::max) + BLOCK_GAP,
            top: blocks
                .iter()
                .map(|(_, e)| e.min.1)
                .fold(f32::INFINITY, f32::min),
            bottom: blocks
                .iter()
                .map(|(_, e)| e.max.1)
                .fold(f32::NEG_INFINITY, f32::max),
        }
    }

    fn height(&self) -> f32 {
        self.bottom - self.top + ROW_GAP
    }
}

/// How a block moves: flipped upside down about the cells' top tier if `flip`, then
/// shifted by (dx, dy).
#[derive(Clone, Copy)]
struct Move {
    dx: f32,
    dy: f32,
    flip: bool,
}

fn move_blocks(
    design: &mut Design,
    scope: Option<GroupId>,
    cells: &Cells,
    moves: &HashMap<GroupId, Move>,
) {
    let places = places(design, scope);
    for (d, place) in design.devices.iter_mut().zip(places) {
        if let Some(Some(b)) = place
            && let Some(m) = moves.get(&b)
        {
            let y = if m.flip {
                2.0 * cells.top - d.pos.y
            } else {
                d.pos.y
            };
            d.pos = Pos::new((d.pos.x + m.dx).round(), (y + m.dy).round());
        }
    }
}

/// Many blocks: a grid of about a screen's proportions under the shared tiers.
fn grid(design: &mut Design, scope: Option<GroupId>, all: Extent, order: &[(GroupId, Extent)]) {
    let cells = Cells::of(order);
    let n = order.len();
    let columns = ((TARGET_ASPECT * n as f32 * cells.height() / cells.width)
        .sqrt()
        .round() as usize)
        .clamp(1, n);
    let grid_right = all.min.0 + columns as f32 * cells.width - BLOCK_GAP;
    let tiers = shared_tiers(design, scope);
    let y = tiers.first().map_or(all.min.1, |t| t.0);
    let grid_top = if tiers.is_empty() {
        cells.top
    } else {
        lay_tiers(design, &tiers, (all.min.0, grid_right), y) + ROW_GAP
    };
    let moves = order
        .iter()
        .enumerate()
        .map(|(k, (g, e))| {
            let (col, row) = ((k % columns) as f32, (k / columns) as f32);
            let m = Move {
                dx: all.min.0 + col * cells.width - e.min.0,
                dy: grid_top + row * cells.height() - cells.top,
                flip: false,
            };
            (*g, m)
        })
        .collect();
    move_blocks(design, scope, &cells, &moves);
}

/// A few blocks under one shared tier (pods under a core, units under spines): that tier in
/// the middle, half the blocks above it drawn upside down and half below, so every link
/// runs from a block to the middle without crossing another block. Other shapes (several
/// shared tiers, or none) are left as they are.
fn mirror(design: &mut Design, scope: Option<GroupId>, all: Extent, order: &[(GroupId, Extent)]) {
    let tiers = shared_tiers(design, scope);
    let cells = Cells::of(order);
    if tiers.len() != 1 || tiers[0].0 >= cells.top {
        return;
    }
    let columns = order.len().div_ceil(2);
    let grid_right = all.min.0 + columns as f32 * cells.width - BLOCK_GAP;
    // The upper half's (flipped) top tiers stand a tier above the middle, so that their
    // lowest devices reach up to where the design began; the lower half's a tier below the
    // middle's last line.
    let middle = all.min.1 + cells.bottom - cells.top + ROW_GAP;
    let last_line = lay_tiers(design, &tiers, (all.min.0, grid_right), middle);
    let moves = order
        .iter()
        .enumerate()
        .map(|(k, (g, e))| {
            let (col, upper) = ((k % columns) as f32, k < columns);
            let top = if upper {
                middle - ROW_GAP
            } else {
                last_line + ROW_GAP
            };
            let m = Move {
                dx: all.min.0 + col * cells.width - e.min.0,
                dy: top - cells.top,
                flip: upper,
            };
            (*g, m)
        })
        .collect();
    move_blocks(design, scope, &cells, &moves);
}
