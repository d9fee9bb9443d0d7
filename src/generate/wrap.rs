//! Wide fabrics wrapped into rows. Templates lay every pod or scalable unit side by side, so
//! a large fabric is a strip many times wider than tall: at zoom to fit 8,192 nodes were one
//! line of pixels. When the outermost groups make such a strip, they are laid out in a grid
//! of about a screen's proportions instead, each keeping its inside as drawn, and the
//! devices outside every group (core switches, shared spines) spread over the grid's width
//! above it, each tier in its own row as before.

use super::builder::{BLOCK_GAP, ROW_GAP, SPACING, spread};
use crate::model::{Design, GroupId, Pos};
use std::collections::{BTreeMap, HashMap};

/// Fewer outermost groups than this stay in one row. Wrapping rows of scalable units under
/// shared spines sends every spine's links across the rows above (a 256-node, 8-unit
/// fabric became a stack drowned in them), so only fabrics of many pods are wrapped: there
/// each pod keeps its own spines and only the core links cross.
const MIN_BLOCKS: usize = 16;
/// A layout wider than this many times its height is wrapped.
const MAX_ASPECT: f32 = 12.0;
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

/// Wraps the outermost groups of a wide design into a grid (see the module notes); a design
/// that is not such a strip is left as it is.
pub(super) fn wrap_wide(design: &mut Design) {
    let parent: HashMap<GroupId, Option<GroupId>> =
        design.groups.iter().map(|g| (g.id, g.parent)).collect();
    let root_of = |mut g: GroupId| {
        for _ in 0..16 {
            match parent.get(&g).copied().flatten() {
                Some(p) => g = p,
                None => break,
            }
        }
        g
    };
    let mut blocks: BTreeMap<GroupId, Extent> = BTreeMap::new();
    let mut all: Option<Extent> = None;
    for d in &design.devices {
        match &mut all {
            Some(e) => e.add(d.pos),
            None => all = Some(Extent::of(d.pos)),
        }
        if let Some(g) = d.group {
            blocks
                .entry(root_of(g))
                .and_modify(|e| e.add(d.pos))
                .or_insert_with(|| Extent::of(d.pos));
        }
    }
    let Some(all) = all else { return };
    if blocks.len() < MIN_BLOCKS || all.width() <= MAX_ASPECT * all.height().max(ROW_GAP) {
        return;
    }
    // Blocks in the order they stood, left to right.
    let mut order: Vec<(GroupId, Extent)> = blocks.into_iter().collect();
    order.sort_by(|a, b| a.1.min.0.total_cmp(&b.1.min.0));
    // Blocks keep their tiers level with one another (a rack without its leaf leaves the
    // leaf's row empty): each grid row spans the blocks' tiers from the topmost to the lowest.
    let cell_w = order.iter().map(|(_, e)| e.width()).fold(0.0, f32::max) + BLOCK_GAP;
    let blocks_top = order
        .iter()
        .map(|(_, e)| e.min.1)
        .fold(f32::INFINITY, f32::min);
    let blocks_bottom = order
        .iter()
        .map(|(_, e)| e.max.1)
        .fold(f32::NEG_INFINITY, f32::max);
    let cell_h = blocks_bottom - blocks_top + ROW_GAP;
    let n = order.len();
    let columns =
        ((TARGET_ASPECT * n as f32 * cell_h / cell_w).sqrt().round() as usize).clamp(1, n);
    let grid_right = all.min.0 + columns as f32 * cell_w - BLOCK_GAP;
    // The ungrouped devices keep their tiers (rows by y), above the grid, in their old order;
    // a tier wider than the grid breaks into lines half a tier apart.
    let mut tiers: BTreeMap<u32, Vec<usize>> = BTreeMap::new();
    for (i, d) in design.devices.iter().enumerate() {
        if d.group.is_none() {
            tiers.entry(d.pos.y.to_bits()).or_default().push(i);
        }
    }
    let mut tiers: Vec<(f32, Vec<usize>)> = tiers
        .into_iter()
        .map(|(y, members)| (f32::from_bits(y), members))
        .collect();
    tiers.sort_by(|a, b| a.0.total_cmp(&b.0));
    let per_line = (((grid_right - all.min.0) / SPACING) as usize + 1).max(1);
    let mut y = tiers.first().map_or(all.min.1, |t| t.0);
    for (_, members) in &mut tiers {
        members.sort_by(|&a, &b| design.devices[a].pos.x.total_cmp(&design.devices[b].pos.x));
        for line in members.chunks(per_line) {
            let xs = spread(line.len(), all.min.0, grid_right);
            for (&i, x) in line.iter().zip(xs) {
                design.devices[i].pos = Pos::new(x.round(), y);
            }
            y += ROW_GAP / 2.0;
        }
        y += ROW_GAP / 2.0;
    }
    let grid_top = if tiers.is_empty() { all.min.1 } else { y };
    let shift: HashMap<GroupId, (f32, f32)> = order
        .iter()
        .enumerate()
        .map(|(k, (g, e))| {
            let (col, row) = ((k % columns) as f32, (k / columns) as f32);
            let dx = all.min.0 + col * cell_w - e.min.0;
            let dy = grid_top + row * cell_h - blocks_top;
            (*g, (dx.round(), dy.round()))
        })
        .collect();
    for d in &mut design.devices {
        if let Some(&(dx, dy)) = d.group.map(root_of).and_then(|g| shift.get(&g)) {
            d.pos = Pos::new(d.pos.x + dx, d.pos.y + dy);
        }
    }
}
