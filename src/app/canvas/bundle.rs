//! Link level of detail. Links whose two ends fall in the same two screen cells (a couple of
//! points square) would be drawn on top of one another, so each such bundle is drawn once:
//! parallel links between two devices at any zoom, and far out whole sheaves of links between
//! neighbouring devices or collapsed groups. At 8,192 DGX nodes (about 200,000 links) this
//! keeps a zoomed-out frame to a few thousand lines.

use super::geometry::Layout;
use crate::io::link_label::{LinkTally, tally_link};
use std::collections::{HashMap, HashSet};
use std::hash::{BuildHasherDefault, Hasher};

/// Side of a cell, in screen points: ends closer than this are one end on screen.
pub(super) const CELL_PX: f32 = 2.0;
/// Far out, where groups fold, a coarser cell: a row of a thousand core switches a few points
/// apart, each linked to every pod, would still be tens of thousands of lines that draw one
/// fan.
pub(super) const FAR_CELL_PX: f32 = 8.0;
/// Up to this many cell pairs, bundles are remembered in a bit set rather than a hash set.
const BIT_SET_MAX: u64 = 1 << 24;

/// Which bundles have been drawn this frame. Links that look different (another technology
/// or rate) are bundles of their own, so a 10 GbE link beside a 100 GbE one between the same
/// two devices still shows: each look drawn on a cell pair takes the next lane.
pub(super) struct Bundles {
    /// Per device (indexed like `design.devices`), the cell its link anchor lies in.
    cell_of: Vec<u32>,
    cells: u64,
    /// Per look seen this frame (in order), the cell pairs drawn in it.
    looks: Vec<(u64, Drawn)>,
    /// Lanes other than the first, by look (its place in `looks`) and cell pair: where the
    /// rest of a bundle drawn in a lane goes when one of them is drawn anyway (selected).
    lanes: HashMap<(usize, u64), usize, BuildHasherDefault<MixHasher>>,
}

enum Drawn {
    Bits(Vec<u64>),
    Set(HashSet<u64, BuildHasherDefault<MixHasher>>),
}

impl Bundles {
    /// `cell_px`: the side of a cell in screen points (`CELL_PX`, or `FAR_CELL_PX` far out).
    pub fn new(layout: &Layout, devices: usize, zoom: f32, cell_px: f32) -> Self {
        let cell = cell_px / zoom;
        let mut numbers: HashMap<u64, u32, BuildHasherDefault<MixHasher>> =
            HashMap::with_capacity_and_hasher(devices, Default::default());
        let cell_of = (0..devices)
            .map(|i| {
                let a = layout.anchor(i);
                let (x, y) = ((a.x / cell).floor() as i32, (a.y / cell).floor() as i32);
                let key = (u64::from(x as u32) << 32) | u64::from(y as u32);
                let next = numbers.len() as u32;
                *numbers.entry(key).or_insert(next)
            })
            .collect();
        let cells = numbers.len() as u64;
        Self {
            cell_of,
            cells,
            looks: Vec::new(),
            lanes: HashMap::default(),
        }
    }

    /// The unordered pair of cells devices `i` and `j` lie in, as one number.
    fn pair_key(&self, i: usize, j: usize) -> u64 {
        let (a, b) = (u64::from(self.cell_of[i]), u64::from(self.cell_of[j]));
        a.min(b) * self.cells + a.max(b)
    }

    /// If a link between devices `i` and `j` that looks like `look` is the first of its
    /// bundle (and so is drawn), the lane it takes: how many other looks were drawn between
    /// the same two cells before it (0 for the first). The bundle is marked drawn.
    pub fn first(&mut self, i: usize, j: usize, look: u64) -> Option<usize> {
        let key = self.pair_key(i, j);
        // Most fabrics have one look: its bundles take lane 0 with no search.
        let k = match self.looks.first() {
            Some((l, _)) if *l == look => 0,
            _ => match self.looks.iter().position(|(l, _)| *l == look) {
                Some(k) => k,
                None => {
                    self.looks.push((look, Drawn::new(self.cells)));
                    self.looks.len() - 1
                }
            },
        };
        if !self.looks[k].1.mark(key) {
            return None;
        }
        if self.looks.len() == 1 {
            return Some(0);
        }
        let lane = self
            .looks
            .iter()
            .enumerate()
            .filter(|&(other, (_, drawn))| other != k && drawn.has(key))
            .count();
        if lane > 0 {
            self.lanes.insert((k, key), lane);
        }
        Some(lane)
    }

    /// The lane of the bundle of links between `i` and `j` that look like `look`, as its
    /// first link took it (0 when none has).
    pub fn lane(&self, i: usize, j: usize, look: u64) -> usize {
        let key = self.pair_key(i, j);
        self.looks
            .iter()
            .position(|(l, _)| *l == look)
            .and_then(|k| self.lanes.get(&(k, key)).copied())
            .unwrap_or(0)
    }
}

impl Drawn {
    fn new(cells: u64) -> Self {
        if cells * cells <= BIT_SET_MAX {
            Drawn::Bits(vec![0; (cells * cells).div_ceil(64) as usize])
        } else {
            Drawn::Set(HashSet::default())
        }
    }

    /// Marks a cell pair drawn; whether it was not yet.
    fn mark(&mut self, key: u64) -> bool {
        match self {
            Drawn::Bits(bits) => {
                let (word, bit) = ((key / 64) as usize, 1u64 << (key % 64));
                let first = bits[word] & bit == 0;
                bits[word] |= bit;
                first
            }
            Drawn::Set(set) => set.insert(key),
        }
    }

    fn has(&self, key: u64) -> bool {
        match self {
            Drawn::Bits(bits) => bits[(key / 64) as usize] & (1u64 << (key % 64)) != 0,
            Drawn::Set(set) => set.contains(&key),
        }
    }
}

/// How many links join each pair of owners (devices, or the folded groups they are drawn in;
/// `Layout::owner`) in either direction, for the count shown on a bundle of parallel links.
#[derive(Default)]
pub(super) struct ParallelLinks {
    /// Per owner pair: how many links, and their capacities.
    counts: HashMap<u64, LinkTally, BuildHasherDefault<MixHasher>>,
}

impl ParallelLinks {
    /// A link of `gbit_s` (rate × lanes) between owners `i` and `j`.
    pub fn add(&mut self, i: usize, j: usize, gbit_s: f64) {
        let (a, b) = (i.min(j) as u64, i.max(j) as u64);
        tally_link(self.counts.entry((a << 32) | b).or_default(), gbit_s);
    }

    /// How many owner pairs have links.
    pub fn pairs(&self) -> usize {
        self.counts.len()
    }

    /// The owner pairs joined by at least `min` links, with their counts and tallies.
    pub fn bundles(&self, min: u32) -> impl Iterator<Item = (usize, usize, u32, LinkTally)> + '_ {
        self.counts
            .iter()
            .filter(move |(_, t)| t.links >= min)
            .map(|(key, &t)| {
                (
                    (key >> 32) as usize,
                    (key & 0xffff_ffff) as usize,
                    t.links,
                    t,
                )
            })
    }
}

/// A fast hasher for the integer keys above (SipHash, the default, cost a third of a frame
/// at 200,000 links); no defence against chosen keys is needed for canvas cells.
#[derive(Default)]
struct MixHasher(u64);

impl Hasher for MixHasher {
    fn write(&mut self, bytes: &[u8]) {
        for &b in bytes {
            self.write_u64(u64::from(b));
        }
    }

    fn write_u64(&mut self, x: u64) {
        // splitmix64's finaliser over the running state.
        let mut z = (self.0 ^ x).wrapping_add(0x9e37_79b9_7f4a_7c15);
        z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
        self.0 = z ^ (z >> 31);
    }

    fn finish(&self) -> u64 {
        self.0
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::app::canvas::geometry::Fold;
    use crate::model::factory::device_from_part;
    use crate::model::{Catalog, Design, DeviceId, PartId, Pos};

    fn design(positions: &[(f32, f32)]) -> Design {
        let catalog = Catalog::builtin();
        let mut d = Design::new("t");
        for (k, &(x, y)) in positions.iter().enumerate() {
            let dev = device_from_part(
                &catalog,
                &PartId::new("qm9700"),
                DeviceId(k as u32),
                format!("s{k}"),
                Pos::new(x, y),
            )
            .unwrap();
            d.insert_device(dev);
        }
        d
    }

    #[test]
    fn parallel_links_are_one_bundle_and_near_ends_merge_only_far_out() {
        // Switches 0 and 1 far apart, switch 2 120 units right of switch 0.
        let d = design(&[(0.0, 0.0), (0.0, 1000.0), (120.0, 0.0)]);
        let layout = Layout::build(&d, None, Fold::Nothing);
        // At zoom 1 (cells of 2 units): a second link 0–1 (either way round) is the same
        // bundle, 2–1 is another.
        let mut near = Bundles::new(&layout, 3, 1.0, CELL_PX);
        assert_eq!(near.first(0, 1, 400), Some(0));
        assert_eq!(near.first(1, 0, 400), None);
        assert_eq!(near.first(2, 1, 400), Some(0));
        // At zoom 0.005 (cells of 400 units) switches 0 and 2 share a cell: 2–1 joins 0–1.
        let mut far = Bundles::new(&layout, 3, 0.005, CELL_PX);
        assert_eq!(far.first(0, 1, 400), Some(0));
        assert_eq!(far.first(2, 1, 400), None);
    }

    #[test]
    fn a_link_that_looks_different_is_a_bundle_of_its_own_in_the_next_lane() {
        let d = design(&[(0.0, 0.0), (0.0, 1000.0), (120.0, 0.0)]);
        let layout = Layout::build(&d, None, Fold::Nothing);
        let mut bundles = Bundles::new(&layout, 3, 1.0, CELL_PX);
        // A 10G link first between 0 and 1, then a 100G one: lanes 0 and 1; more of either
        // join their bundle.
        assert_eq!(bundles.first(0, 1, 10), Some(0));
        assert_eq!(bundles.first(1, 0, 100), Some(1));
        assert_eq!(bundles.first(0, 1, 100), None);
        assert_eq!(bundles.first(0, 1, 10), None);
        // Between 2 and 1 only 100G: its first lane.
        assert_eq!(bundles.first(2, 1, 100), Some(0));
        // The rest of a bundle is in the lane its first link took.
        assert_eq!(bundles.lane(1, 0, 100), 1);
        assert_eq!(bundles.lane(0, 1, 10), 0);
        assert_eq!(bundles.lane(2, 1, 100), 0);
    }

    #[test]
    fn parallel_links_are_counted_per_device_pair_either_way_round() {
        let mut parallel = ParallelLinks::default();
        for (i, j) in [(0, 1), (1, 0), (0, 1), (2, 1), (0, 2)] {
            parallel.add(i, j, 400.0);
        }
        let bundles: Vec<_> = parallel
            .bundles(2)
            .map(|(i, j, n, t)| (i, j, n, t.gbit_s))
            .collect();
        assert_eq!(bundles, [(0, 1, 3, 400.0)]);
        assert_eq!(parallel.pairs(), 3);
        // A 100G link beside them makes the bundle mixed.
        parallel.add(1, 0, 100.0);
        let (_, _, n, tally) = parallel.bundles(2).next().expect("the bundle");
        assert_eq!(n, 4);
        assert!(tally.gbit_s.is_nan());
        assert_eq!(tally.total_gbit_s, 1300.0);
    }

    #[test]
    fn many_cells_fall_back_to_a_hash_set() {
        // 5,000 devices 120 apart at zoom 1: 25 million cell pairs, over the bit set's limit.
        let positions: Vec<(f32, f32)> = (0..5000).map(|k| (k as f32 * 120.0, 0.0)).collect();
        let d = design(&positions);
        let layout = Layout::build(&d, None, Fold::Nothing);
        let mut bundles = Bundles::new(&layout, positions.len(), 1.0, CELL_PX);
        assert_eq!(bundles.first(4999, 0, 400), Some(0));
        assert!(matches!(bundles.looks[0].1, Drawn::Set(_)));
        assert_eq!(bundles.first(0, 4999, 400), None);
        assert_eq!(bundles.first(4998, 0, 400), Some(0));
    }
}
