//! The bill of materials, and cost and power derived from it.
//!
//! Every figure (sidebar totals, cost shares, the CSV export, power) comes from `bom_lines`,
//! so the totals always agree with the itemised list.
//!
//! Counting rules:
//! - each GPU node: its node part; when the node part's price excludes GPUs (the generic
//!   `workstation`), also `gpu_count` × the node's GPU part;
//! - each NIC slot (on nodes and hosts): its NIC part;
//! - each NVSwitch domain: its domain part (the rack; its compute trays are nodes);
//! - each switch: its switch part; each host with a model: that part (category "other");
//! - each link whose `cable` names a part: that part, one per lane, or two per lane when the
//!   part is a transceiver (one at each end);
//! - other network links (InfiniBand, Ethernet, RoCE): per lane, one `dac-<N>g` in-rack or
//!   two `optic-<N>g` transceivers cross-rack, N being the smallest of 10, 25, 100, 200, 400,
//!   800 at or above the lane rate (above 800 the rate itself, rounded up, so a user catalog
//!   can supply e.g. `optic-1600g`). Ends whose ports share a transceiver cage (twin-port
//!   OSFP, a broken-out switch port) share its module (`optic_cages`), and a DAC with one
//!   end on such a cage is a leg of a splitter (`dac-100g-4x25g`, one per cage filled) where
//!   the catalog has one. Active optical
//!   cables (`aoc-<N>g`) are only used when a link names one; choosing them automatically
//!   could become a setting later. An Ethernet link with an RJ-45 end (a node's built-in
//!   10GBASE-T) is one `cat6a` per lane instead, with a `sfp-10gbase-t` module at each end
//!   that is a cage (`twisted_pair`);
//! - Thunderbolt links: `tb4` / `tb5` per lane; NVLink bridge links: `nvlink-bridge` per
//!   lane. A node whose scale-up is NVLink bridge pairs but that has no bridge link drawn
//!   gets its `gpu_count / 2` bridges counted from the node itself, so they are neither
//!   missed nor counted twice;
//! - NVLink and PCIe links (inside nodes and domains): no cable line.
//!
//! Ids missing from the catalog are left out of the BOM; `checks` reports them.

use super::optic_cages::{CagedOptics, OPTIC};
use super::twisted_pair::{RJ45_MODULE, TWISTED_PAIR, twisted_pair};
use crate::model::catalog::CableMedium;
use crate::model::{Catalog, Design, DeviceId, DeviceKind, LengthClass, Link, LinkTech, PartId};
use crate::model::{ScaleUp, Usd, Watts};
use serde::Serialize;
use std::collections::{HashMap, HashSet};
use std::hash::{BuildHasherDefault, Hash, Hasher};

/// Multiply-rotate hashing (the scheme of rustc's FxHash): several times faster than the
/// default SipHash on the short keys here (ids, ports, part names). A design is the user's
/// own data, so resistance to crafted collisions is not needed.
#[derive(Debug, Default, Clone, Copy)]
pub(crate) struct FastHasher(u64);

impl FastHasher {
    const SEED: u64 = 0x51_7c_c1_b7_27_22_0a_95;

    #[inline]
    fn add(&mut self, word: u64) {
        self.0 = (self.0.rotate_left(5) ^ word).wrapping_mul(Self::SEED);
    }
}

impl Hasher for FastHasher {
    fn write(&mut self, bytes: &[u8]) {
        let mut chunks = bytes.chunks_exact(8);
        for chunk in &mut chunks {
            let mut word = [0u8; 8];
            word.copy_from_slice(chunk);
            self.add(u64::from_le_bytes(word));
        }
        let rest = chunks.remainder();
        if !rest.is_empty() {
            let mut word = [0u8; 8];
            word[..rest.len()].copy_from_slice(rest);
            self.add(u64::from_le_bytes(word));
        }
    }
    fn write_u8(&mut self, n: u8) {
        self.add(u64::from(n));
    }
    fn write_u16(&mut self, n: u16) {
        self.add(u64::from(n));
    }
    fn write_u32(&mut self, n: u32) {
        self.add(u64::from(n));
    }
    fn write_u64(&mut self, n: u64) {
        self.add(n);
    }
    fn write_usize(&mut self, n: usize) {
        self.add(n as u64);
    }
    fn finish(&self) -> u64 {
        self.0
    }
}

pub(crate) type FastMap<K, V> = HashMap<K, V, BuildHasherDefault<FastHasher>>;
pub(crate) type FastSet<K> = HashSet<K, BuildHasherDefault<FastHasher>>;

/// Sums quantities per key. Neighbouring devices and links mostly use the same parts, so a
/// run of equal keys is added up first and the map is touched once per run, not per item.
pub(crate) struct RunCounts<K> {
    map: FastMap<K, u64>,
    run: Option<(K, u64)>,
}

impl<K> Default for RunCounts<K> {
    fn default() -> Self {
        Self {
            map: FastMap::default(),
            run: None,
        }
    }
}

impl<K: Eq + Hash + Copy> RunCounts<K> {
    #[inline]
    pub(crate) fn add(&mut self, key: K, quantity: u64) {
        match &mut self.run {
            Some((k, n)) if *k == key => *n += quantity,
            run => {
                if let Some((k, n)) = run.replace((key, quantity)) {
                    *self.map.entry(k).or_default() += n;
                }
            }
        }
    }

    pub(crate) fn finish(mut self) -> FastMap<K, u64> {
        if let Some((k, n)) = self.run.take() {
            *self.map.entry(k).or_default() += n;
        }
        self.map
    }
}

/// `link_cable` for many links: the catalog lookup of a named cable (is it a transceiver?)
/// is done once per run of links naming the same part, not once per link.
pub(crate) struct LinkCables<'a, 'c> {
    catalog: &'c Catalog,
    last_named: Option<(&'a PartId, u64)>,
}

impl<'a, 'c> LinkCables<'a, 'c> {
    pub(crate) fn new(catalog: &'c Catalog) -> Self {
        Self {
            catalog,
            last_named: None,
        }
    }

    #[inline]
    pub(crate) fn need(&mut self, link: &'a Link) -> Option<CableNeed<'a>> {
        let catalog = self.catalog;
        let last = &mut self.last_named;
        cable_need(link, |named| match *last {
            Some((id, per_lane)) if id == named => per_lane,
            _ => {
                let per_lane = named_per_lane(catalog, named);
                *last = Some((named, per_lane));
                per_lane
            }
        })
    }
}

/// Where a BOM line is summed in the cost summary.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize)]
pub enum BomCategory {
    Nodes,
    Gpus,
    /// NVSwitch domains (NVL72 racks with their switch trays).
    NvSwitch,
    Nics,
    Switches,
    CablesOptics,
    Other,
}

impl BomCategory {
    pub const ALL: [BomCategory; 7] = [
        BomCategory::Nodes,
        BomCategory::Gpus,
        BomCategory::NvSwitch,
        BomCategory::Nics,
        BomCategory::Switches,
        BomCategory::CablesOptics,
        BomCategory::Other,
    ];

    /// A stable machine-readable key, used in exports.
    pub fn key(self) -> &'static str {
        match self {
            BomCategory::Nodes => "nodes",
            BomCategory::Gpus => "gpus",
            BomCategory::NvSwitch => "nvswitch",
            BomCategory::Nics => "nics",
            BomCategory::Switches => "switches",
            BomCategory::CablesOptics => "cables_optics",
            BomCategory::Other => "other",
        }
    }

    pub fn label(self) -> &'static str {
        match self {
            BomCategory::Nodes => "Nodes",
            BomCategory::Gpus => "GPUs",
            BomCategory::NvSwitch => "NVSwitch domains",
            BomCategory::Nics => "NICs",
            BomCategory::Switches => "Switches",
            BomCategory::CablesOptics => "Cables & optics",
            BomCategory::Other => "Other",
        }
    }
}

/// One distinct part in the bill of materials, with its quantity summed over the design.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct BomLine {
    pub category: BomCategory,
    pub part: PartId,
    pub vendor: String,
    pub model: String,
    pub description: String,
    pub quantity: u64,
    pub unit_price: Usd,
    pub extended_price: Usd,
    pub unit_power: Watts,
    pub total_power: Watts,
    /// Empty when the catalog has no price for the part.
    pub price_source: String,
    pub price_date: String,
    /// The catalog marks the figures as ours, or the part has no price at all (counted at $0).
    pub estimate: bool,
}

/// The cable or optic a link needs, before it is looked up in the catalog.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum CableChoice<'a> {
    /// Named on the link by hand.
    Named(&'a PartId),
    /// Derived from speed and length: `<prefix>-<gbit_s>g`.
    Derived { prefix: &'static str, gbit_s: u64 },
    /// A fixed id such as `tb5` or `nvlink-bridge`.
    Fixed(&'static str),
    /// A splitter DAC, `dac-<cage>g-<legs>x<lane>g`: one plug in a shared cage (a port broken
    /// out, a twin-port cage), a leg to each of `legs` ports.
    Splitter {
        cage_gbit_s: u64,
        legs: u32,
        lane_gbit_s: u64,
    },
}

impl CableChoice<'_> {
    pub fn part_id(self) -> PartId {
        match self {
            CableChoice::Named(id) => id.clone(),
            CableChoice::Derived { prefix, gbit_s } => PartId(format!("{prefix}-{gbit_s}g")),
            CableChoice::Fixed(id) => PartId::new(id),
            CableChoice::Splitter {
                cage_gbit_s,
                legs,
                lane_gbit_s,
            } => PartId(format!("dac-{cage_gbit_s}g-{legs}x{lane_gbit_s}g")),
        }
    }
}

/// A link's cabling: which part and how many.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct CableNeed<'a> {
    pub choice: CableChoice<'a>,
    pub quantity: u64,
}

/// Speed grades of the derived cable ids, in Gb/s per lane.
pub const CABLE_SPEED_GRADES: [u64; 6] = [10, 25, 100, 200, 400, 800];

/// The cable speed grade for a lane rate: the smallest grade at or above it, or the rate
/// itself rounded up beyond the largest grade. None for a rate that is not a positive number.
pub fn cable_speed_grade(rate_gbit_s: f64) -> Option<u64> {
    if !(rate_gbit_s.is_finite() && rate_gbit_s > 0.0) {
        return None;
    }
    let grade = CABLE_SPEED_GRADES
        .into_iter()
        .find(|&g| g as f64 >= rate_gbit_s)
        .unwrap_or(rate_gbit_s.ceil() as u64);
    Some(grade)
}

/// The cable or optics a link needs (see the module notes), or None when it needs none.
pub fn link_cable<'a>(link: &'a Link, catalog: &Catalog) -> Option<CableNeed<'a>> {
    cable_need(link, |named| named_per_lane(catalog, named))
}

/// Pieces per lane of a named cable part: two transceivers (one at each end), else one.
fn named_per_lane(catalog: &Catalog, named: &PartId) -> u64 {
    match catalog.cable(named) {
        Some(spec) if spec.medium == CableMedium::Transceiver => 2,
        _ => 1,
    }
}

/// `link_cable`, with the per-lane count of a named part supplied by the caller.
#[inline]
fn cable_need<'a>(
    link: &'a Link,
    named_per_lane: impl FnOnce(&'a PartId) -> u64,
) -> Option<CableNeed<'a>> {
    let lanes = u64::from(link.lanes);
    if let Some(named) = &link.cable {
        return Some(CableNeed {
            choice: CableChoice::Named(named),
            quantity: lanes * named_per_lane(named),
        });
    }
    let (choice, per_lane) = match link.tech {
        LinkTech::InfiniBand | LinkTech::Ethernet | LinkTech::RoceV2 => {
            let gbit_s = cable_speed_grade(link.rate_gbit_s.gbit_s())?;
            match link.length {
                LengthClass::InRack => (
                    CableChoice::Derived {
                        prefix: "dac",
                        gbit_s,
                    },
                    1,
                ),
                LengthClass::CrossRack => (
                    CableChoice::Derived {
                        prefix: OPTIC,
                        gbit_s,
                    },
                    2,
                ),
            }
        }
        LinkTech::Thunderbolt4 => (CableChoice::Fixed("tb4"), 1),
        LinkTech::Thunderbolt5 => (CableChoice::Fixed("tb5"), 1),
        LinkTech::NvLinkBridge => (CableChoice::Fixed(NVLINK_BRIDGE), 1),
        LinkTech::NvLink | LinkTech::Pcie => return None,
    };
    Some(CableNeed {
        choice,
        quantity: lanes * per_lane,
    })
}

const NVLINK_BRIDGE: &str = "nvlink-bridge";

/// Nodes whose NVLink bridges are implied by their scale-up rather than drawn as links:
/// each with the number of bridges it needs.
pub fn implied_nvlink_bridges(design: &Design) -> impl Iterator<Item = (DeviceId, u64)> + '_ {
    let drawn: FastSet<DeviceId> = design
        .links
        .iter()
        .filter(|l| l.tech == LinkTech::NvLinkBridge)
        .flat_map(|l| [l.a.device, l.b.device])
        .collect();
    design.devices.iter().filter_map(move |d| match &d.kind {
        DeviceKind::GpuNode(n)
            if matches!(n.scale_up, ScaleUp::NvLinkBridgePairs { .. })
                && !drawn.contains(&d.id) =>
        {
            Some((d.id, u64::from(n.gpu_count / 2)))
        }
        _ => None,
    })
}

/// The bill of materials: one line per distinct part and category, sorted by category then id.
pub fn bom_lines(design: &Design, catalog: &Catalog) -> Vec<BomLine> {
    // Count with borrowed ids first; strings are built once per distinct part at the end.
    // One run counter per use, so that each sees long runs of the same part.
    let mut nodes: RunCounts<&PartId> = RunCounts::default();
    let mut gpus: RunCounts<&PartId> = RunCounts::default();
    let mut nics: RunCounts<&PartId> = RunCounts::default();
    let mut domains: RunCounts<&PartId> = RunCounts::default();
    let mut switches: RunCounts<&PartId> = RunCounts::default();
    let mut others: RunCounts<&PartId> = RunCounts::default();
    // For the last node model seen: whether its price leaves its GPUs out, and the NIC its
    // price includes.
    let mut last_model: Option<(&PartId, bool, Option<&PartId>)> = None;
    for device in &design.devices {
        match &device.kind {
            DeviceKind::GpuNode(node) => {
                nodes.add(&node.model, 1);
                let (gpus_billed, built_in) = match last_model {
                    Some((model, billed, nic)) if *model == node.model => (billed, nic),
                    _ => {
                        let spec = catalog.node(&node.model);
                        let billed = spec.is_some_and(|spec| !spec.gpus_included_in_price);
                        let nic = spec
                            .filter(|spec| spec.nic_included_in_price)
                            .and_then(|spec| spec.nic.as_ref());
                        last_model = Some((&node.model, billed, nic));
                        (billed, nic)
                    }
                };
                if gpus_billed && node.gpu_count > 0 {
                    gpus.add(&node.gpu, u64::from(node.gpu_count));
                }
                for nic in &node.nics {
                    if built_in != Some(&nic.part) {
                        nics.add(&nic.part, 1);
                    }
                }
            }
            DeviceKind::NvSwitchDomain(domain) => domains.add(&domain.model, 1),
            DeviceKind::Switch(switch) => switches.add(&switch.model, 1),
            DeviceKind::Host(host) => {
                if let Some(model) = &host.model {
                    others.add(model, 1);
                }
                for nic in &host.nics {
                    nics.add(&nic.part, 1);
                }
            }
        }
    }
    let counts: Vec<(BomCategory, &PartId, u64)> = [
        (BomCategory::Nodes, nodes),
        (BomCategory::Gpus, gpus),
        (BomCategory::Nics, nics),
        (BomCategory::NvSwitch, domains),
        (BomCategory::Switches, switches),
        (BomCategory::Other, others),
    ]
    .into_iter()
    .flat_map(|(category, counter)| {
        counter
            .finish()
            .into_iter()
            .map(move |(part, quantity)| (category, part, quantity))
    })
    .collect();

    let mut cables: RunCounts<CableChoice<'_>> = RunCounts::default();
    let mut needs = LinkCables::new(catalog);
    let mut optics = CagedOptics::new(design, catalog);
    for link in &design.links {
        if let Some(copper) = twisted_pair(design, catalog, link) {
            let lanes = u64::from(link.lanes);
            cables.add(CableChoice::Fixed(TWISTED_PAIR), lanes);
            cables.add(
                CableChoice::Fixed(RJ45_MODULE),
                lanes * copper.modules_per_lane(),
            );
            continue;
        }
        match needs.need(link) {
            Some(CableNeed {
                choice:
                    CableChoice::Derived {
                        prefix: OPTIC,
                        gbit_s,
                    },
                ..
            }) => optics.add_link(link, gbit_s, |gbit_s, lanes| {
                cables.add(
                    CableChoice::Derived {
                        prefix: OPTIC,
                        gbit_s,
                    },
                    lanes,
                );
            }),
            Some(CableNeed {
                choice:
                    CableChoice::Derived {
                        prefix: "dac",
                        gbit_s,
                    },
                ..
            }) => optics.add_dac(link, gbit_s, |gbit_s, lanes| {
                cables.add(
                    CableChoice::Derived {
                        prefix: "dac",
                        gbit_s,
                    },
                    lanes,
                );
            }),
            Some(need) => cables.add(need.choice, need.quantity),
            None => {}
        }
    }
    for (choice, quantity) in optics.finish() {
        cables.add(choice, quantity);
    }
    let bridges: u64 = implied_nvlink_bridges(design).map(|(_, n)| n).sum();
    if bridges > 0 {
        cables.add(CableChoice::Fixed(NVLINK_BRIDGE), bridges);
    }
    let cables = cables.finish();

    let cable_counts: Vec<(PartId, u64)> = cables
        .into_iter()
        .map(|(choice, quantity)| (choice.part_id(), quantity))
        .collect();

    let mut lines: Vec<BomLine> = counts
        .into_iter()
        .chain(
            cable_counts
                .iter()
                .map(|(part, quantity)| (BomCategory::CablesOptics, part, *quantity)),
        )
        .filter(|&(_, _, quantity)| quantity > 0)
        .filter_map(|(category, id, quantity)| {
            let part = catalog.get(id)?;
            let unit_price = part.price_usd();
            let unit_power = part.power_w;
            let multiplier = quantity as f64;
            Some(BomLine {
                category,
                part: id.clone(),
                vendor: part.vendor.clone(),
                model: part.model.clone(),
                description: part.description.clone(),
                quantity,
                unit_price,
                extended_price: unit_price * multiplier,
                unit_power,
                total_power: unit_power * multiplier,
                price_source: part
                    .price
                    .as_ref()
                    .map_or_else(String::new, |p| p.source.clone()),
                price_date: part
                    .price
                    .as_ref()
                    .map_or_else(String::new, |p| p.date.clone()),
                estimate: part.estimate || part.price.is_none(),
            })
        })
        .collect();
    lines.sort_by(|x, y| (x.category, &x.part).cmp(&(y.category, &y.part)));
    lines
}

/// Totals by category, all from the same BOM lines.
#[derive(Debug, Clone, Copy, PartialEq, Default, Serialize)]
pub struct CostSummary {
    pub total: Usd,
    /// Node and GPU lines.
    pub nodes: Usd,
    pub switches: Usd,
    pub nics: Usd,
    pub cables_optics: Usd,
    pub nvswitch: Usd,
    pub other: Usd,
    pub power_total: Watts,
}

impl CostSummary {
    /// Switches as a fraction of the total; None when nothing costs anything.
    pub fn switch_cost_share(&self) -> Option<f64> {
        share(self.switches, self.total)
    }

    /// Switches, NICs, cables and optics as a fraction of the total; None for a zero total.
    pub fn network_cost_share(&self) -> Option<f64> {
        share(self.switches + self.nics + self.cables_optics, self.total)
    }
}

fn share(part: Usd, total: Usd) -> Option<f64> {
    (total.0 > 0.0 && total.0.is_finite()).then(|| part.0 / total.0)
}

pub fn cost_summary(lines: &[BomLine]) -> CostSummary {
    let mut summary = CostSummary::default();
    for line in lines {
        let price = line.extended_price;
        summary.total += price;
        summary.power_total += line.total_power;
        match line.category {
            BomCategory::Nodes | BomCategory::Gpus => summary.nodes += price,
            BomCategory::NvSwitch => summary.nvswitch += price,
            BomCategory::Nics => summary.nics += price,
            BomCategory::Switches => summary.switches += price,
            BomCategory::CablesOptics => summary.cables_optics += price,
            BomCategory::Other => summary.other += price,
        }
    }
    summary
}

/// Switches / total, None when the total is zero.
pub fn switch_cost_share(summary: &CostSummary) -> Option<f64> {
    summary.switch_cost_share()
}

/// (Switches + NICs + cables and optics) / total, None when the total is zero.
pub fn network_cost_share(summary: &CostSummary) -> Option<f64> {
    summary.network_cost_share()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::{Bandwidth, Endpoint, Port};

    #[test]
    fn speed_grades_round_up() {
        assert_eq!(cable_speed_grade(1.0), Some(10));
        assert_eq!(cable_speed_grade(10.0), Some(10));
        assert_eq!(cable_speed_grade(25.0), Some(25));
        assert_eq!(cable_speed_grade(50.0), Some(100));
        assert_eq!(cable_speed_grade(200.0), Some(200));
        assert_eq!(cable_speed_grade(400.1), Some(800));
        assert_eq!(cable_speed_grade(1600.0), Some(1600));
        assert_eq!(cable_speed_grade(0.0), None);
        assert_eq!(cable_speed_grade(f64::NAN), None);
        assert_eq!(cable_speed_grade(f64::INFINITY), None);
    }

    fn two_ends(tech: LinkTech, gbit_s: f64) -> Link {
        Link::new(
            Endpoint::new(DeviceId(0), Port::Nic(0)),
            Endpoint::new(DeviceId(1), Port::Switch(0)),
            tech,
            Bandwidth::from_gbit_s(gbit_s),
        )
    }

    #[test]
    fn cabling_per_link() {
        let catalog = Catalog::default();
        let dac = two_ends(LinkTech::InfiniBand, 400.0).with_lanes(2);
        let need = link_cable(&dac, &catalog).expect("a DAC");
        assert_eq!(need.choice.part_id().as_str(), "dac-400g");
        assert_eq!(need.quantity, 2);

        let optics = two_ends(LinkTech::RoceV2, 100.0)
            .with_lanes(3)
            .with_length(LengthClass::CrossRack);
        let need = link_cable(&optics, &catalog).expect("optics");
        assert_eq!(need.choice.part_id().as_str(), "optic-100g");
        assert_eq!(need.quantity, 6);

        let tb = two_ends(LinkTech::Thunderbolt4, 40.0);
        assert_eq!(
            link_cable(&tb, &catalog).map(|n| n.choice.part_id()),
            Some(PartId::new("tb4"))
        );
        assert!(link_cable(&two_ends(LinkTech::NvLink, 3600.0), &catalog).is_none());
        assert!(link_cable(&two_ends(LinkTech::Pcie, 256.0), &catalog).is_none());
        // A rate that is not a number has no cable to derive; the checks report the link.
        assert!(link_cable(&two_ends(LinkTech::Ethernet, f64::NAN), &catalog).is_none());
    }

    #[test]
    fn fast_hasher_separates_nearby_keys() {
        let mut set: FastSet<(u32, u32)> = FastSet::default();
        for device in 0..200 {
            for port in 0..200 {
                set.insert((device, port));
            }
        }
        assert_eq!(set.len(), 40_000);
        assert!(set.contains(&(199, 7)) && !set.contains(&(200, 0)));
    }
}
