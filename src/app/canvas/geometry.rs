//! Where things are on the canvas: device sizes, the per-frame layout (device rectangles,
//! NVSwitch-domain containers, collapsed groups) and hit testing. Everything here is in
//! canvas units; a device's `pos` is its centre.

use crate::io::folding::{self, FoldScope, FoldedAs, Folding, NOT_FOLDED};
use crate::io::link_colors::{ColorMode, lane_look};
use crate::model::{Design, Device, DeviceId, DeviceKind, GroupId, Link, LinkId, Pos};
use egui::{Pos2, Rect, Vec2, pos2, vec2};
use std::collections::{BTreeSet, HashMap};

pub(super) const NODE_SIZE: Vec2 = vec2(100.0, 56.0);
pub(super) const SWITCH_SIZE: Vec2 = vec2(100.0, 44.0);
pub(super) const HOST_SIZE: Vec2 = vec2(90.0, 44.0);
/// A domain without members still needs something to click.
pub(super) const EMPTY_DOMAIN_SIZE: Vec2 = vec2(240.0, 160.0);
/// Room around a domain's members, and the band on top that carries its name.
pub(super) const DOMAIN_PAD: f32 = 14.0;
pub(super) const DOMAIN_HEADER: f32 = 26.0;
/// Port handle radius and its grab tolerance, in screen points.
pub(super) const HANDLE_RADIUS_PX: f32 = 5.0;
pub(super) const HANDLE_GRAB_PX: f32 = 9.0;
/// How close (beyond its half width) a click must be to pick a link, in screen points.
pub(super) const LINK_GRAB_PX: f32 = 4.0;

pub(super) fn to_pos2(p: Pos) -> Pos2 {
    pos2(p.x, p.y)
}

pub(super) fn device_size(kind: &DeviceKind) -> Vec2 {
    match kind {
        DeviceKind::GpuNode(_) => NODE_SIZE,
        DeviceKind::Switch(_) => SWITCH_SIZE,
        DeviceKind::Host(_) => HOST_SIZE,
        DeviceKind::NvSwitchDomain(_) => EMPTY_DOMAIN_SIZE,
    }
}

pub(super) fn is_domain(d: &Device) -> bool {
    matches!(d.kind, DeviceKind::NvSwitchDomain(_))
}

/// Index of a device in `design.devices`. Ids are usually dense (id = index), so try that
/// before the binary search.
pub(super) fn index_of(devices: &[Device], id: DeviceId) -> Option<usize> {
    let guess = id.0 as usize;
    if devices.get(guess).is_some_and(|d| d.id == id) {
        return Some(guess);
    }
    devices.binary_search_by_key(&id, |d| d.id).ok()
}

/// Where a port handle sits: the middle of the right edge.
pub(super) fn handle_center(rect: Rect) -> Pos2 {
    pos2(rect.right(), rect.center().y)
}

/// A group, or far out a row of devices outside any group, drawn as one block.
#[derive(Debug, Clone)]
pub(super) struct Block {
    pub what: FoldedAs,
    pub rect: Rect,
    pub devices: u32,
    pub gpus: u64,
}

impl Block {
    /// What the block says of itself: "pod-01: 192 devices, 1024 GPUs", or a row's caption
    /// with its GPUs if it has any ("core · 1024 × qm9700 in 5 rows").
    pub fn caption(&self, design: &Design) -> String {
        let gpus = if self.gpus > 0 {
            format!(", {} GPUs", self.gpus)
        } else {
            String::new()
        };
        match &self.what {
            FoldedAs::Group(g) => {
                let name = design.group(*g).map_or("group", |g| g.name.as_str());
                format!("{name}: {} devices{gpus}", self.devices)
            }
            FoldedAs::Row(caption) => format!("{caption}{gpus}"),
        }
    }
}

/// What the pointer is over.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Hit {
    /// The port handle of device i (a drag from here draws a link).
    Port(usize),
    Device(usize),
    Block(usize),
}

/// Which devices show their port handle.
#[derive(Debug, Clone, Copy)]
pub(super) enum Handles {
    None,
    Only(usize),
    All,
}

/// One frame's geometry, indexed like `design.devices`.
pub(super) struct Layout {
    pub rects: Vec<Rect>,
    pub blocks: Vec<Block>,
    /// Per device, its block or `NOT_FOLDED`; empty when nothing is collapsed.
    block_of: Vec<u32>,
    /// Per device, whether it is an NVSwitch domain (read per link, so kept apart from the
    /// devices themselves).
    domain: Vec<bool>,
    /// Every device's id is its index: a link's ends need no look-up.
    dense_ids: bool,
}

/// Which groups are drawn folded, each as one block.
#[derive(Debug, Clone, Copy)]
pub(super) enum Fold<'a> {
    Nothing,
    /// Far out: every outermost group (a pod or scalable unit, its racks inside it).
    Outermost,
    /// The groups the user folded; a device folds into the outermost of them it is in.
    Chosen(&'a BTreeSet<GroupId>),
}

impl Layout {
    /// `moving`: devices drawn displaced by an offset (a drag in progress).
    /// `fold`: which groups are drawn as one block each.
    pub fn build(design: &Design, moving: Option<(&[DeviceId], Vec2)>, fold: Fold) -> Layout {
        let devices = &design.devices;
        let mut rects: Vec<Rect> = devices
            .iter()
            .map(|d| {
                if is_domain(d) {
                    Rect::NOTHING
                } else {
                    Rect::from_center_size(to_pos2(d.pos), device_size(&d.kind))
                }
            })
            .collect();
        let mut domain_offset: Vec<(usize, Vec2)> = Vec::new();
        if let Some((ids, offset)) = moving {
            for &id in ids {
                if let Some(i) = index_of(devices, id) {
                    if is_domain(&devices[i]) {
                        domain_offset.push((i, offset));
                    } else {
                        rects[i] = rects[i].translate(offset);
                    }
                }
            }
        }
        // A domain's container wraps its members; without members it sits at its own pos.
        for (i, d) in devices.iter().enumerate() {
            if let DeviceKind::GpuNode(n) = &d.kind
                && let Some(domain) = n.domain
                && let Some(j) = index_of(devices, domain)
                && is_domain(&devices[j])
            {
                rects[j] = rects[j].union(rects[i]);
            }
        }
        for (i, d) in devices.iter().enumerate() {
            if !is_domain(d) {
                continue;
            }
            rects[i] = if rects[i].is_positive() {
                let r = rects[i].expand(DOMAIN_PAD);
                Rect::from_min_max(pos2(r.min.x, r.min.y - DOMAIN_HEADER), r.max)
            } else {
                let offset = domain_offset
                    .iter()
                    .find(|(j, _)| *j == i)
                    .map_or(Vec2::ZERO, |(_, o)| *o);
                Rect::from_center_size(to_pos2(d.pos) + offset, EMPTY_DOMAIN_SIZE)
            };
        }

        let scope = match fold {
            Fold::Nothing => None,
            Fold::Outermost => Some(FoldScope::Overview),
            Fold::Chosen(chosen) => Some(FoldScope::Groups(chosen)),
        };
        let folding = scope.map_or_else(Folding::default, |scope| {
            folding::fold(
                design,
                |i| {
                    let r = rects[i];
                    r.is_positive()
                        .then_some(((r.min.x, r.min.y), (r.max.x, r.max.y)))
                },
                scope,
            )
        });
        let blocks = folding
            .blocks
            .into_iter()
            .map(|b| Block {
                what: b.what,
                rect: Rect::from_min_max(
                    pos2(b.bounds.0.0, b.bounds.0.1),
                    pos2(b.bounds.1.0, b.bounds.1.1),
                ),
                devices: b.devices,
                gpus: b.gpus,
            })
            .collect();
        let block_of = folding.block_of;
        Layout {
            rects,
            blocks,
            block_of,
            domain: devices.iter().map(is_domain).collect(),
            dense_ids: devices
                .iter()
                .enumerate()
                .all(|(i, d)| d.id.0 as usize == i),
        }
    }

    pub fn is_collapsed(&self) -> bool {
        !self.block_of.is_empty()
    }

    /// The block device i is drawn in, if it is collapsed into one.
    pub fn block_of(&self, i: usize) -> Option<usize> {
        match self.block_of.get(i) {
            Some(&b) if b != NOT_FOLDED => Some(b as usize),
            _ => None,
        }
    }

    /// Where links attach to device i: its centre, or its block's.
    pub fn anchor(&self, i: usize) -> Pos2 {
        self.owner_anchor(self.owner(i))
    }

    /// What device i is drawn as: itself (its index) or its block (the device count plus
    /// the block's index). Links between the same two owners are drawn between the same
    /// two points.
    pub fn owner(&self, i: usize) -> usize {
        match self.block_of(i) {
            Some(b) => self.rects.len() + b,
            None => i,
        }
    }

    /// How many links join the two owners link `k` is drawn between in its lane (itself
    /// included): the links its one line stands for. Under `mode`, links that look different
    /// (another technology, rate or rail) run in lanes of their own.
    pub fn links_alongside(&self, design: &Design, k: usize, mode: ColorMode) -> usize {
        let lane = |l: &Link| {
            let (a, b) = self.link_ends(&design.devices, l)?;
            let look = lane_look(l, &design.devices[a], &design.devices[b], mode);
            let (a, b) = (self.owner(a), self.owner(b));
            Some((a.min(b), a.max(b), look))
        };
        let Some(mine) = design.links.get(k).and_then(lane) else {
            return 0;
        };
        design
            .links
            .iter()
            .filter(|l| lane(l) == Some(mine))
            .count()
    }

    /// Where links attach to an owner (see `owner`).
    pub fn owner_anchor(&self, owner: usize) -> Pos2 {
        self.owner_rect(owner).center()
    }

    /// The box links to device i attach to: its own, or its block's.
    pub fn drawn_rect(&self, i: usize) -> Rect {
        self.owner_rect(self.owner(i))
    }

    fn owner_rect(&self, owner: usize) -> Rect {
        match owner.checked_sub(self.rects.len()) {
            Some(b) => self.blocks[b].rect,
            None => self.rects[owner],
        }
    }

    /// Whether device i is an NVSwitch domain.
    pub fn is_domain(&self, i: usize) -> bool {
        self.domain[i]
    }

    /// The two ends of a link, or None if an end is missing.
    pub fn link_ends(&self, devices: &[Device], link: &Link) -> Option<(usize, usize)> {
        if self.dense_ids {
            let (a, b) = (link.a.device.0 as usize, link.b.device.0 as usize);
            return (a < devices.len() && b < devices.len()).then_some((a, b));
        }
        Some((
            index_of(devices, link.a.device)?,
            index_of(devices, link.b.device)?,
        ))
    }

    /// The topmost device, handle or block under `p`. Members are above their domain.
    pub fn hit(&self, design: &Design, p: Pos2, zoom: f32, handles: Handles) -> Option<Hit> {
        let grab = HANDLE_GRAB_PX / zoom;
        let near_handle = |i: usize| handle_center(self.rects[i]).distance(p) <= grab;
        if let Handles::Only(i) = handles
            && i < self.rects.len()
            && self.block_of(i).is_none()
            && near_handle(i)
        {
            return Some(Hit::Port(i));
        }
        let all_handles = matches!(handles, Handles::All);
        let devices = &design.devices;
        for pass_domains in [false, true] {
            for i in (0..devices.len()).rev() {
                if is_domain(&devices[i]) != pass_domains || self.block_of(i).is_some() {
                    continue;
                }
                if all_handles && near_handle(i) {
                    return Some(Hit::Port(i));
                }
                if self.rects[i].contains(p) {
                    return Some(Hit::Device(i));
                }
            }
            if !pass_domains {
                // Collapsed groups sit above domains but below single devices.
                if let Some(b) = self.blocks.iter().rposition(|b| b.rect.contains(p)) {
                    return Some(Hit::Block(b));
                }
            }
        }
        None
    }

    /// The link nearest to `p` within grabbing distance, where it was drawn: in its lane, or
    /// as a stub if it left a crowded view.
    pub fn hit_link(
        &self,
        design: &Design,
        p: Pos2,
        zoom: f32,
        width_px: impl Fn(&Link) -> f32,
        lanes: &[DrawnLane],
        stubs: Option<Stubs>,
    ) -> Option<usize> {
        let mut best: Option<(usize, f32)> = None;
        // A link drawn in a lane beside its bundle's line is found where it was drawn.
        let offset: HashMap<LinkId, (Pos2, Pos2)> =
            lanes.iter().map(|l| (l.link, (l.a, l.b))).collect();
        for (k, link) in design.links.iter().enumerate() {
            let drawn_beside = if offset.is_empty() {
                None
            } else {
                offset.get(&link.id).copied()
            };
            let Some((ia, ib)) = self.link_ends(&design.devices, link) else {
                continue;
            };
            let (a, b) = drawn_beside.unwrap_or_else(|| (self.anchor(ia), self.anchor(ib)));
            // A stub starts where its line does, in its lane if it has one.
            let (a, b) = match stubs {
                Some(s) => s.drawn(
                    Rect::from_center_size(a, self.drawn_rect(ia).size()),
                    Rect::from_center_size(b, self.drawn_rect(ib).size()),
                ),
                None => (a, b),
            };
            let reach = (width_px(link) / 2.0 + LINK_GRAB_PX) / zoom;
            let d = distance_to_segment(p, a, b);
            if d <= reach && best.is_none_or(|(_, bd)| d < bd) {
                best = Some((k, d));
            }
        }
        best.map(|(k, _)| k)
    }

    /// Bounding box of everything drawn, or None for an empty design.
    pub fn bounds(&self) -> Option<Rect> {
        let r = self
            .rects
            .iter()
            .fold(Rect::NOTHING, |acc, r| acc.union(*r));
        r.is_positive().then_some(r)
    }
}

/// Links leading out of `view` drawn as stubs `length` long (canvas units).
#[derive(Debug, Clone, Copy, PartialEq)]
pub(super) struct Stubs {
    pub view: Rect,
    pub length: f32,
}

impl Stubs {
    /// Where the line between the centres of boxes `a` and `b` was drawn: whole, unless
    /// exactly one end is in the view, then its stub from that end.
    pub fn drawn(self, a: Rect, b: Rect) -> (Pos2, Pos2) {
        match (
            self.view.contains(a.center()),
            self.view.contains(b.center()),
        ) {
            (true, false) => (a.center(), stub_end(a, b.center(), self.length)),
            (false, true) => (b.center(), stub_end(b, a.center(), self.length)),
            _ => (a.center(), b.center()),
        }
    }
}

/// The end of a stub from the centre of box `inside` towards `outside`, reaching `length`
/// past the box's edge (the whole line if shorter): a stub hidden under its own device
/// would say nothing.
pub(super) fn stub_end(inside: Rect, outside: Pos2, length: f32) -> Pos2 {
    let from = inside.center();
    let along = outside - from;
    let half = inside.size() / 2.0;
    let to_edge = (half.x / along.x.abs()).min(half.y / along.y.abs()) * along.length();
    let reach = if to_edge.is_finite() { to_edge } else { 0.0 } + length;
    from + along * (reach / along.length().max(reach))
}

/// A link drawn in a lane beside the line between its ends (another technology or rate
/// between the same two devices), where it was drawn, in canvas units.
#[derive(Debug, Clone, Copy, PartialEq)]
pub(super) struct DrawnLane {
    pub link: LinkId,
    pub a: Pos2,
    pub b: Pos2,
}

pub(super) fn distance_to_segment(p: Pos2, a: Pos2, b: Pos2) -> f32 {
    let ab = b - a;
    let len2 = ab.length_sq();
    if len2 <= f32::EPSILON {
        return p.distance(a);
    }
    let t = ((p - a).dot(ab) / len2).clamp(0.0, 1.0);
    p.distance(a + ab * t)
}

/// The part of segment a–b inside `rect` (Liang–Barsky), so that a dashed line only lays
/// dashes where they can be seen.
pub(super) fn clip_segment(a: Pos2, b: Pos2, rect: Rect) -> Option<(Pos2, Pos2)> {
    let d = b - a;
    let (mut t0, mut t1) = (0.0f32, 1.0f32);
    for (p, q) in [
        (-d.x, a.x - rect.min.x),
        (d.x, rect.max.x - a.x),
        (-d.y, a.y - rect.min.y),
        (d.y, rect.max.y - a.y),
    ] {
        if p == 0.0 {
            if q < 0.0 {
                return None;
            }
        } else {
            let t = q / p;
            if p < 0.0 {
                t0 = t0.max(t);
            } else {
                t1 = t1.min(t);
            }
        }
    }
    (t0 <= t1).then(|| (a + d * t0, a + d * t1))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn segment_distance_and_clipping() {
        let (a, b) = (pos2(0.0, 0.0), pos2(10.0, 0.0));
        assert_eq!(distance_to_segment(pos2(5.0, 3.0), a, b), 3.0);
        assert_eq!(distance_to_segment(pos2(13.0, 4.0), a, b), 5.0);
        let r = Rect::from_min_max(pos2(2.0, -1.0), pos2(4.0, 1.0));
        assert_eq!(
            clip_segment(a, b, r),
            Some((pos2(2.0, 0.0), pos2(4.0, 0.0)))
        );
        assert_eq!(clip_segment(pos2(0.0, 5.0), pos2(10.0, 5.0), r), None);
    }

    /// A pod of two racks, a switch in each rack and one outside: what folds into what.
    #[test]
    fn a_device_folds_into_the_outermost_folded_group_it_is_in() {
        use crate::model::factory::device_from_part;
        use crate::model::{Catalog, Group, GroupKind, PartId};
        let catalog = Catalog::builtin();
        let (pod, rack_a, rack_b) = (GroupId(1), GroupId(2), GroupId(3));
        let mut d = Design::new("t");
        for (id, name, kind, parent) in [
            (pod, "pod", GroupKind::Pod, None),
            (rack_a, "rack-a", GroupKind::Rack, Some(pod)),
            (rack_b, "rack-b", GroupKind::Rack, Some(pod)),
        ] {
            d.groups.push(Group {
                id,
                name: name.into(),
                kind,
                parent,
            });
        }
        for (k, group) in [Some(rack_a), Some(rack_b), None].into_iter().enumerate() {
            let mut dev = device_from_part(
                &catalog,
                &PartId::new("qm9700"),
                DeviceId(k as u32),
                format!("s{k}"),
                Pos::new(k as f32 * 300.0, 0.0),
            )
            .unwrap();
            dev.group = group;
            d.insert_device(dev);
        }
        let blocks_of = |fold: Fold| {
            let l = Layout::build(&d, None, fold);
            let groups: Vec<Option<GroupId>> = (0..3)
                .map(|i| l.block_of(i).and_then(|b| l.blocks[b].what.group()))
                .collect();
            (groups, (0..3).map(|i| l.owner(i)).collect::<Vec<_>>())
        };
        assert_eq!(blocks_of(Fold::Nothing).0, [None, None, None]);
        let (groups, owners) = blocks_of(Fold::Chosen(&BTreeSet::from([rack_a])));
        assert_eq!(groups, [Some(rack_a), None, None]);
        // Three devices and one block: the block's owner number follows the devices'.
        assert_eq!(owners, [3, 1, 2]);
        let both = BTreeSet::from([rack_a, pod]);
        assert_eq!(
            blocks_of(Fold::Chosen(&both)).0,
            [Some(pod), Some(pod), None]
        );
        assert_eq!(blocks_of(Fold::Outermost).0, [Some(pod), Some(pod), None]);
        assert_eq!(
            blocks_of(Fold::Chosen(&BTreeSet::new())).0,
            [None, None, None]
        );
    }

    /// Far out, switches outside every pod fold by rows: two core switches side by side are
    /// one block with their count; a leaf alone in its row stays itself; nothing folds
    /// nearer in.
    #[test]
    fn far_out_a_row_outside_pods_is_one_block() {
        use crate::model::factory::device_from_part;
        use crate::model::{Catalog, PartId, SwitchRole};
        let catalog = Catalog::builtin();
        let mut d = Design::new("t");
        let places = [
            (0.0, 0.0, SwitchRole::Core),
            (300.0, 0.0, SwitchRole::Core),
            (0.0, 600.0, SwitchRole::Leaf),
        ];
        for (k, (x, y, role)) in places.into_iter().enumerate() {
            let mut dev = device_from_part(
                &catalog,
                &PartId::new("qm9700"),
                DeviceId(k as u32),
                format!("core-{k}"),
                Pos::new(x, y),
            )
            .unwrap();
            if let DeviceKind::Switch(s) = &mut dev.kind {
                s.role = role;
            }
            d.insert_device(dev);
        }
        let far = Layout::build(&d, None, Fold::Outermost);
        assert_eq!(far.blocks.len(), 1);
        let block = &far.blocks[0];
        assert_eq!(block.what, FoldedAs::Row("core · 2 × qm9700".into()));
        assert_eq!(block.devices, 2);
        // The block spans both switches' boxes (100 × 44 each, centred at x = 0 and 300).
        assert_eq!(
            block.rect,
            Rect::from_min_max(pos2(-50.0, -22.0), pos2(350.0, 22.0))
        );
        assert_eq!(
            (0..3).map(|i| far.block_of(i)).collect::<Vec<_>>(),
            [Some(0), Some(0), None]
        );
        let near = Layout::build(&d, None, Fold::Chosen(&BTreeSet::new()));
        assert!(near.blocks.is_empty() && !near.is_collapsed());
    }
}
