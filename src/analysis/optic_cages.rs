//! Transceiver cages. Each end of an optical link takes a transceiver, but where ports share
//! a cage one module serves all of them: two 400G ports on a twin-port OSFP cage (the four
//! cages of a DGX H100 or B200 for its eight ConnectX-7, the 32 of a QM9700 for its 64
//! ports) take one 800G twin-port module, and an 800G switch port broken out to 2 × 400G
//! takes one 800G module with splitter fibre. A device's optical ends of one rate are packed
//! into as few cages as they fill, as a cabling plan plugs them: n ends need ⌈n / ports per
//! cage⌉ modules. A cage's module is `optic-<N>g` for the cage's whole rate; a catalog
//! without that part keeps one module per end. Copper is the same with one end: a DAC whose
//! one end shares a cage is a leg of a splitter (`dac-100g-4x25g`: a QSFP28 plug in a port
//! broken out to 4 × 25G, an SFP28 leg to each NIC), bought once per cage its legs fill. A DAC
//! with both ends in cages shared the same number of ways carries that many ports between
//! the same two devices (`dac-800g`: a DGX H100's twin-port cage to a QM9700's, 2 × 400G):
//! the links between two devices are packed into as few as they fill, as a cabling plan
//! plugs a cage's ports to the same cage at the far end; one left over keeps a DAC of its own.

use super::cost::{CableChoice, FastMap, cable_speed_grade};
use super::twisted_pair::{RJ45_MODULE, TWISTED_PAIR, twisted_pair};
use crate::model::catalog::CableMedium;
use crate::model::{Catalog, Design, Device, DeviceId, DeviceKind, Endpoint, Link, PartId, Port};

/// The prefix of the transceiver ids the bill of materials derives.
pub const OPTIC: &str = "optic";

/// Rates within a thousandth count as the same (a port's rate divided by its breakout).
fn same_rate(a_gbit_s: f64, b_gbit_s: f64) -> bool {
    (a_gbit_s - b_gbit_s).abs() <= 1e-3 * a_gbit_s.abs().max(b_gbit_s.abs())
}

/// A device's cages, read from the catalog once.
#[derive(Debug, Clone, Copy, PartialEq)]
enum Cages {
    /// Every port on a cage of its own (or a part the catalog lacks).
    Alone,
    /// A switch: lanes at its ports' rate (after breakout) share a cage `shared` ways.
    Switch { shared: u32, port_gbit_s: f64 },
    /// A node: its own NICs (a bit per slot in `own`) at their rate share a cage `shared` ways.
    Node {
        shared: u32,
        nic_gbit_s: f64,
        own: u64,
    },
}

impl Cages {
    fn of(device: &Device, catalog: &Catalog) -> Cages {
        match &device.kind {
            DeviceKind::Switch(sw) => {
                let Some(spec) = catalog.switch(&sw.model) else {
                    return Cages::Alone;
                };
                let breakout = sw.breakout.max(1);
                let shared = spec.ports_per_cage.max(1).saturating_mul(breakout);
                if shared <= 1 {
                    return Cages::Alone;
                }
                Cages::Switch {
                    shared,
                    port_gbit_s: spec.port_gbit_s.gbit_s() / f64::from(breakout),
                }
            }
            DeviceKind::GpuNode(node) => {
                let Some(spec) = catalog.node(&node.model) else {
                    return Cages::Alone;
                };
                let (Some(nic_part), Some(nic)) =
                    (&spec.nic, spec.nic.as_ref().and_then(|n| catalog.nic(n)))
                else {
                    return Cages::Alone;
                };
                if spec.nic_ports_per_cage <= 1 {
                    return Cages::Alone;
                }
                // The cages belong to the chassis: they hold the NICs in its own slots, its
                // own part or another of the same port rate (a DGX H100's ConnectX-7 run as
                // 400GbE for RoCE still plug into its twin-port cages).
                let fits_cage = |part: &crate::model::PartId| {
                    part == nic_part
                        || catalog.nic(part).is_some_and(|other| {
                            same_rate(other.port_gbit_s.gbit_s(), nic.port_gbit_s.gbit_s())
                        })
                };
                let own = node
                    .nics
                    .iter()
                    .take(spec.nic_count.min(64) as usize)
                    .enumerate()
                    .filter(|(_, slot)| fits_cage(&slot.part))
                    .fold(0u64, |bits, (k, _)| bits | 1 << k);
                Cages::Node {
                    shared: spec.nic_ports_per_cage,
                    nic_gbit_s: nic.port_gbit_s.gbit_s(),
                    own,
                }
            }
            _ => Cages::Alone,
        }
    }

    /// Lanes of `lane_gbit_s` on `port` that share its cage; a slower link in a faster port
    /// fills it alone.
    fn lanes_per_cage(self, port: Port, lane_gbit_s: f64) -> u32 {
        match (self, port) {
            (
                Cages::Switch {
                    shared,
                    port_gbit_s,
                },
                Port::Switch(_),
            ) if same_rate(port_gbit_s, lane_gbit_s) => shared,
            (
                Cages::Node {
                    shared,
                    nic_gbit_s,
                    own,
                },
                Port::Nic(k),
            ) if k < 64 && own & (1 << k) != 0 && same_rate(nic_gbit_s, lane_gbit_s) => shared,
            _ => 1,
        }
    }
}

/// How many lanes of `lane_gbit_s` share the cage of `port` on `device`: more than one only
/// where the catalog puts ports on shared cages, or a switch port is broken out, and the
/// link runs at the port's own rate.
pub fn lanes_per_cage(device: &Device, port: Port, lane_gbit_s: f64, catalog: &Catalog) -> u32 {
    Cages::of(device, catalog).lanes_per_cage(port, lane_gbit_s)
}

/// The module that fills a cage of `lanes` lanes at grade `gbit_s`, when the catalog has it.
fn cage_module(gbit_s: u64, lanes: u32, catalog: &Catalog) -> Option<u64> {
    let grade = cable_speed_grade(gbit_s as f64 * f64::from(lanes))?;
    let id = PartId(format!("{OPTIC}-{grade}g"));
    match catalog.cable(&id) {
        Some(spec) if spec.medium == CableMedium::Transceiver => Some(grade),
        _ => None,
    }
}

/// The transceiver `end` of `link` plugs into, when the bill of materials derives the link's
/// optics (`gbit_s` its grade): the cage's module where the end shares one, else the per-end
/// optic of the link's grade.
pub fn end_transceiver(
    design: &Design,
    catalog: &Catalog,
    link: &Link,
    end: Endpoint,
    gbit_s: u64,
) -> PartId {
    end_module(design, catalog, link, end, gbit_s).0
}

/// `end_transceiver`, and how many ports share its module (1: the end's own).
fn end_module(
    design: &Design,
    catalog: &Catalog,
    link: &Link,
    end: Endpoint,
    gbit_s: u64,
) -> (PartId, u32) {
    let shared = design.device(end.device).map_or(1, |d| {
        lanes_per_cage(d, end.port, link.rate_gbit_s.gbit_s(), catalog)
    });
    let module = (shared > 1)
        .then(|| cage_module(gbit_s, shared, catalog))
        .flatten();
    match module {
        Some(grade) => (PartId(format!("{OPTIC}-{grade}g")), shared),
        None => (PartId(format!("{OPTIC}-{gbit_s}g")), 1),
    }
}

/// The splitter DAC whose legs fill a cage of `legs` lanes at grade `gbit_s`, when the
/// catalog has it.
fn splitter(gbit_s: u64, legs: u32, catalog: &Catalog) -> Option<CableChoice<'static>> {
    let choice = CableChoice::Splitter {
        cage_gbit_s: cable_speed_grade(gbit_s as f64 * f64::from(legs))?,
        legs,
        lane_gbit_s: gbit_s,
    };
    match catalog.cable(&choice.part_id()) {
        Some(spec) if spec.medium == CableMedium::Dac => Some(choice),
        _ => None,
    }
}

/// Which end of a DAC holds a splitter, from how many lanes share each end's cage: end a
/// (true) or b with its legs, where exactly one end shares. Two shared ends (a twin-port cage
/// at each) keep a DAC of their own.
fn splitter_end(a_shared: u32, b_shared: u32) -> Option<(bool, u32)> {
    match (a_shared, b_shared) {
        (a, 1) if a > 1 => Some((true, a)),
        (1, b) if b > 1 => Some((false, b)),
        _ => None,
    }
}

/// The splitter a link's derived DAC (grade `gbit_s`) is a leg of, and the end whose cage
/// holds it, where the catalog has it (`splitter_end`).
pub fn dac_splitter(
    design: &Design,
    catalog: &Catalog,
    link: &Link,
    gbit_s: u64,
) -> Option<(CableChoice<'static>, Endpoint)> {
    let lane_gbit_s = link.rate_gbit_s.gbit_s();
    let shared = |end: Endpoint| {
        design
            .device(end.device)
            .map_or(1, |d| lanes_per_cage(d, end.port, lane_gbit_s, catalog))
    };
    let (at_a, legs) = splitter_end(shared(link.a), shared(link.b))?;
    let end = if at_a { link.a } else { link.b };
    splitter(gbit_s, legs, catalog).map(|choice| (choice, end))
}

/// The twin-port DAC a link's derived DAC (grade `gbit_s`) is one port of, where both ends
/// sit in cages shared the same number of ways and the catalog has it (`dac-800g` between a
/// DGX H100 and a QM9700). A pair of devices with an odd link count keeps one DAC of its own
/// in the bill of materials; a cable plan names the twin for each.
pub fn dac_twin(
    design: &Design,
    catalog: &Catalog,
    link: &Link,
    gbit_s: u64,
) -> Option<CableChoice<'static>> {
    dac_twin_ways(design, catalog, link, gbit_s).map(|(twin, _)| twin)
}

/// `dac_twin`, with the ports one twin DAC carries (2 for `dac-800g`'s 2 × 400G).
pub fn dac_twin_ways(
    design: &Design,
    catalog: &Catalog,
    link: &Link,
    gbit_s: u64,
) -> Option<(CableChoice<'static>, u32)> {
    let lane_gbit_s = link.rate_gbit_s.gbit_s();
    let ways = |end: Endpoint| {
        design
            .device(end.device)
            .map_or(1, |d| lanes_per_cage(d, end.port, lane_gbit_s, catalog))
    };
    let (a, b) = (ways(link.a), ways(link.b));
    if a <= 1 || a != b {
        return None;
    }
    twin_dac(gbit_s, a, catalog).map(|grade| {
        let twin = CableChoice::Derived {
            prefix: "dac",
            gbit_s: grade,
        };
        (twin, a)
    })
}

/// Counts the derived optics of a design's links, end by end, filling shared cages, and the
/// splitter DACs whose legs fill them.
pub(crate) struct CagedOptics<'d, 'c> {
    design: &'d Design,
    catalog: &'c Catalog,
    /// Each device's cages by id, built at the first optical link; empty when ids are too
    /// sparse for a table (then each end is looked up).
    table: Option<Vec<Cages>>,
    /// Ends on shared cages by device id, beside `table`: ((lane grade, lanes per cage),
    /// lanes) of the first kind the device has.
    first: Vec<Option<((u64, u32), u64)>>,
    /// Other ends on shared cages: (device, lane grade, lanes per cage) → lanes.
    cages: FastMap<(DeviceId, u64, u32), u64>,
    /// Splitter legs by the device whose cage holds them: (device, lane grade, legs) → lanes.
    legs: FastMap<(DeviceId, u64, u32), u64>,
    /// Whether the catalog has the splitter of (lane grade, legs), looked up once each.
    splitters: FastMap<(u64, u32), Option<CableChoice<'static>>>,
    /// Lanes between two devices whose ends share cages the same number of ways at both ends:
    /// (lower device, higher device, lane grade, ways) → lanes.
    twins: FastMap<(DeviceId, DeviceId, u64, u32), u64>,
}

impl<'d, 'c> CagedOptics<'d, 'c> {
    pub(crate) fn new(design: &'d Design, catalog: &'c Catalog) -> Self {
        Self {
            design,
            catalog,
            table: None,
            first: Vec::new(),
            cages: FastMap::default(),
            legs: FastMap::default(),
            splitters: FastMap::default(),
            twins: FastMap::default(),
        }
    }

    fn cages(&mut self, device: DeviceId) -> Cages {
        let (design, catalog) = (self.design, self.catalog);
        let first = &mut self.first;
        let table = self.table.get_or_insert_with(|| {
            let top = design.devices.last().map_or(0, |d| d.id.0 as usize);
            if top > 4 * design.devices.len() + 1024 {
                return Vec::new();
            }
            let mut table = vec![Cages::Alone; top + 1];
            for d in &design.devices {
                table[d.id.0 as usize] = Cages::of(d, catalog);
            }
            *first = vec![None; table.len()];
            table
        });
        match table.get(device.0 as usize) {
            Some(&cages) => cages,
            None if table.is_empty() => design
                .device(device)
                .map_or(Cages::Alone, |d| Cages::of(d, catalog)),
            None => Cages::Alone,
        }
    }

    /// Both ends of `link`, whose optics are derived at grade `gbit_s`: an end on its own
    /// cage is counted at once through `loose`, an end on a shared cage waits for `finish`.
    pub(crate) fn add_link(&mut self, link: &Link, gbit_s: u64, mut loose: impl FnMut(u64, u64)) {
        let lanes = u64::from(link.lanes);
        let lane_gbit_s = link.rate_gbit_s.gbit_s();
        for end in [link.a, link.b] {
            match self.cages(end.device).lanes_per_cage(end.port, lane_gbit_s) {
                shared if shared > 1 => self.add_caged((end.device, gbit_s, shared), lanes),
                _ => loose(gbit_s, lanes),
            }
        }
    }

    /// A link whose DAC is derived at grade `gbit_s`: a splitter's leg where exactly one end
    /// shares a cage (counted at `finish`), else its own DAC per lane through `loose`.
    pub(crate) fn add_dac(&mut self, link: &Link, gbit_s: u64, mut loose: impl FnMut(u64, u64)) {
        let lanes = u64::from(link.lanes);
        let lane_gbit_s = link.rate_gbit_s.gbit_s();
        let a = self
            .cages(link.a.device)
            .lanes_per_cage(link.a.port, lane_gbit_s);
        let b = self
            .cages(link.b.device)
            .lanes_per_cage(link.b.port, lane_gbit_s);
        let Some((at_a, legs)) = splitter_end(a, b) else {
            if a > 1 && a == b && twin_dac(gbit_s, a, self.catalog).is_some() {
                let (lo, hi) = if link.a.device <= link.b.device {
                    (link.a.device, link.b.device)
                } else {
                    (link.b.device, link.a.device)
                };
                *self.twins.entry((lo, hi, gbit_s, a)).or_default() += lanes;
                return;
            }
            return loose(gbit_s, lanes);
        };
        let device = if at_a { link.a.device } else { link.b.device };
        let catalog = self.catalog;
        let known = *self
            .splitters
            .entry((gbit_s, legs))
            .or_insert_with(|| splitter(gbit_s, legs, catalog));
        match known {
            Some(_) => *self.legs.entry((device, gbit_s, legs)).or_default() += lanes,
            None => loose(gbit_s, lanes),
        }
    }

    fn add_caged(&mut self, (device, gbit_s, shared): (DeviceId, u64, u32), lanes: u64) {
        let kind = (gbit_s, shared);
        match self.first.get_mut(device.0 as usize) {
            Some(slot @ None) => *slot = Some((kind, lanes)),
            Some(Some((k, n))) if *k == kind => *n += lanes,
            _ => *self.cages.entry((device, gbit_s, shared)).or_default() += lanes,
        }
    }

    /// The modules of the shared cages, as (grade, count): a cage module per cage filled, or
    /// one module per end when the catalog lacks the cage's module; then the splitters, one
    /// per cage their legs fill.
    pub(crate) fn finish(self) -> impl Iterator<Item = (CableChoice<'static>, u64)> {
        let catalog = self.catalog;
        let splitters = self.splitters;
        // Whole cages' worth between two devices on twin DACs, the rest on DACs of their own.
        let twins = self
            .twins
            .into_iter()
            .flat_map(move |((_, _, gbit_s, ways), lanes)| {
                let whole = lanes / u64::from(ways);
                let rest = lanes % u64::from(ways);
                let twin = twin_dac(gbit_s, ways, catalog).map(|grade| {
                    (
                        CableChoice::Derived {
                            prefix: "dac",
                            gbit_s: grade,
                        },
                        whole,
                    )
                });
                let single = (
                    CableChoice::Derived {
                        prefix: "dac",
                        gbit_s,
                    },
                    rest,
                );
                twin.into_iter().chain([single]).filter(|(_, n)| *n > 0)
            });
        let legs = self
            .legs
            .into_iter()
            .filter_map(move |((_, gbit_s, legs), lanes)| {
                let choice = splitters.get(&(gbit_s, legs)).copied().flatten()?;
                Some((choice, lanes.div_ceil(u64::from(legs))))
            });
        self.first
            .into_iter()
            .flatten()
            .chain(
                self.cages
                    .into_iter()
                    .map(|((_, gbit_s, shared), lanes)| ((gbit_s, shared), lanes)),
            )
            .map(
                move |((gbit_s, shared), lanes)| match cage_module(gbit_s, shared, catalog) {
                    Some(grade) => (grade, lanes.div_ceil(u64::from(shared))),
                    None => (gbit_s, lanes),
                },
            )
            .map(|(gbit_s, count)| {
                (
                    CableChoice::Derived {
                        prefix: OPTIC,
                        gbit_s,
                    },
                    count,
                )
            })
            .chain(legs)
            .chain(twins)
    }
}

/// The DAC whose two plugs each fill a cage of `ways` ports at lane grade `gbit_s`
/// (`dac-800g` for 2 × 400G), when the catalog has it as copper: its grade.
fn twin_dac(gbit_s: u64, ways: u32, catalog: &Catalog) -> Option<u64> {
    let grade = cable_speed_grade(gbit_s as f64 * f64::from(ways))?;
    match catalog.cable(&PartId(format!("dac-{grade}g"))) {
        Some(spec) if spec.medium == CableMedium::Dac => Some(grade),
        _ => None,
    }
}

/// What the bill of materials counts for `link` when no cable is named on it, in words: the
/// cable, or each end's transceiver ("per lane: optic-800g at node-01 (a cage shared by 2
/// ports), optic-400g at leaf-01"), or twisted pair and the RJ-45 modules it needs; None for
/// a link without one (NVLink, PCIe).
pub fn automatic_parts_text(design: &Design, catalog: &Catalog, link: &Link) -> Option<String> {
    let mut automatic = link.clone();
    automatic.cable = None;
    let per_lane = if link.lanes > 1 { "per lane: " } else { "" };
    let name = |end: Endpoint| design.device(end.device).map_or("?", |d| d.name.as_str());
    if let Some(copper) = twisted_pair(design, catalog, &automatic) {
        let modules = [link.a, link.b]
            .into_iter()
            .zip(copper.modules)
            .filter(|&(_, module)| module)
            .map(|(end, _)| format!(", {RJ45_MODULE} at {} (RJ-45 in its SFP+ cage)", name(end)));
        return Some(format!(
            "{per_lane}{TWISTED_PAIR}{}",
            modules.collect::<String>()
        ));
    }
    let need = super::cost::link_cable(&automatic, catalog)?;
    if let CableChoice::Derived {
        prefix: "dac",
        gbit_s,
    } = need.choice
        && let Some((splitter, end)) = dac_splitter(design, catalog, link, gbit_s)
    {
        let CableChoice::Splitter { legs, .. } = splitter else {
            return None;
        };
        return Some(format!(
            "{per_lane}a leg of {} at {} (a splitter shared by {legs} ports)",
            splitter.part_id(),
            name(end)
        ));
    }
    if let CableChoice::Derived {
        prefix: "dac",
        gbit_s,
    } = need.choice
        && let Some(twin) = dac_twin(design, catalog, link, gbit_s)
    {
        return Some(format!(
            "{per_lane}one port of {} between {} and {} (a shared cage at each end: a pair \
             of links between them shares one)",
            twin.part_id(),
            name(link.a),
            name(link.b)
        ));
    }
    let CableChoice::Derived {
        prefix: OPTIC,
        gbit_s,
    } = need.choice
    else {
        return Some(format!("{} × {}", need.quantity, need.choice.part_id()));
    };
    let end = |end: Endpoint| {
        let (part, shared) = end_module(design, catalog, link, end, gbit_s);
        if design.device(end.device).is_none() {
            return part.as_str().to_string();
        }
        let name = name(end);
        if shared > 1 {
            format!("{part} at {name} (a cage shared by {shared} ports)")
        } else {
            format!("{part} at {name}")
        }
    };
    Some(format!("{per_lane}{}, {}", end(link.a), end(link.b)))
}
