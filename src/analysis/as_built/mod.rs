//! As built against as drawn: the cables a fabric listing shows (`io::ibnetdiscover`, ends
//! resolved by `resolve`) set against the design's network links, as faults: missing (drawn,
//! not cabled), extra (cabled, not drawn), swapped (two drawn cables with their far ends
//! exchanged), a NIC on another rail's leaf, a cable moved to another port, and a cable where
//! drawn that trained below its drawn rate (the listing's `1xNDR` for a drawn 400 Gb/s: a
//! lane or a speed lost, one of bring-up's commonest faults). Each fault
//! names the rails it touches and what it costs alone (`cost`); the whole as-built design is
//! weighed too.

pub mod cost;
pub mod observed;
pub mod resolve;

pub use cost::{ALL_REDUCE_BYTES, Change, Delta, Figures};
pub use resolve::{BuiltCable, BuiltEnd, resolve};

use crate::analysis::collective::Workspace;
use crate::model::ports::port_name;
use crate::model::{
    Bandwidth, Catalog, Design, DeviceId, DeviceKind, Endpoint, Link, LinkId, LinkState, LinkTech,
    Port,
};
use serde::Serialize;
use std::collections::{BTreeSet, HashMap, HashSet};

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum FaultKind {
    /// Drawn, not cabled.
    Missing,
    /// Cabled, not drawn.
    Extra,
    /// Two drawn cables with their far ends exchanged.
    Swapped,
    /// A NIC cabled to a leaf of another rail than drawn.
    WrongRail,
    /// A cable with one end where drawn and the other on another port of the same rail.
    Moved,
    /// Cabled as drawn, but running below the drawn rate (fewer lanes or a slower speed).
    Slow,
}

impl FaultKind {
    pub fn label(self) -> &'static str {
        match self {
            FaultKind::Missing => "missing",
            FaultKind::Extra => "extra",
            FaultKind::Swapped => "swapped",
            FaultKind::WrongRail => "wrong rail",
            FaultKind::Moved => "moved",
            FaultKind::Slow => "slow",
        }
    }
}

/// One difference between the fabric and the design.
#[derive(Debug, Clone, Serialize)]
pub struct Fault {
    pub kind: FaultKind,
    /// One sentence for the table.
    pub summary: String,
    /// The drawn cables not found as drawn, labelled `leaf-r0:p3 <-> node-04:nic0`.
    pub drawn: Vec<String>,
    /// The cables found instead, as cabled.
    pub built: Vec<String>,
    /// Lines of the listing the built cables came from.
    pub lines: Vec<usize>,
    /// Rails it touches: of the leaves involved, or the NIC index on multi-NIC nodes.
    pub rails: Vec<u32>,
    /// Drawn links involved, for the canvas.
    pub links: Vec<LinkId>,
    /// Devices at the ends of the built cables, for the canvas (they exist only as built).
    pub devices: Vec<DeviceId>,
    /// This fault alone applied to the drawn design, against the drawn design; None when it
    /// cannot be modelled (an end the design does not have).
    pub cost: Option<Delta>,
    #[serde(skip)]
    pub change: Option<Change>,
}

/// The whole comparison.
#[derive(Debug, Clone, Serialize)]
pub struct CablingReport {
    /// Network cables drawn.
    pub drawn: usize,
    /// Cables found on the fabric.
    pub built: usize,
    /// Cables found exactly as drawn.
    pub matched: usize,
    pub faults: Vec<Fault>,
    pub as_drawn: Figures,
    /// Every fault that can be modelled applied at once.
    pub as_built: Figures,
}

impl CablingReport {
    pub fn is_clean(&self) -> bool {
        self.faults.is_empty()
    }
}

/// The network cables of the design: what a fabric listing can see.
pub fn drawn_cables(design: &Design) -> Vec<&Link> {
    design
        .links
        .iter()
        .filter(|l| l.tech.is_network())
        .collect()
}

type EndKey = (u32, Port);

fn key(e: Endpoint) -> EndKey {
    (e.device.0, e.port)
}

fn pair_key(a: EndKey, b: EndKey) -> (EndKey, EndKey) {
    if a <= b { (a, b) } else { (b, a) }
}

/// A cable whose one end is where it was drawn and whose other end is not.
struct Miswire<'a> {
    drawn: &'a Link,
    built: &'a BuiltCable,
    anchor: Endpoint,
    drawn_far: Endpoint,
    built_far: Endpoint,
}

/// Compares the cables as built with the design and weighs each fault.
pub fn check_cabling(design: &Design, catalog: &Catalog, built: &[BuiltCable]) -> CablingReport {
    let drawn = drawn_cables(design);
    let drawn_keys: HashSet<_> = drawn.iter().map(|l| pair_key(key(l.a), key(l.b))).collect();
    let known = |c: &BuiltCable| match (&c.a, &c.b) {
        (BuiltEnd::Known(a), BuiltEnd::Known(b)) => Some((*a, *b)),
        _ => None,
    };
    let built_keys: HashSet<_> = built
        .iter()
        .filter_map(known)
        .map(|(a, b)| pair_key(key(a), key(b)))
        .collect();
    let missing: Vec<&Link> = drawn
        .iter()
        .copied()
        .filter(|l| !built_keys.contains(&pair_key(key(l.a), key(l.b))))
        .collect();
    let extra: Vec<&BuiltCable> = built
        .iter()
        .filter(|c| known(c).is_none_or(|(a, b)| !drawn_keys.contains(&pair_key(key(a), key(b)))))
        .collect();
    let matched = built.len() - extra.len();

    // Pair an extra cable with the missing one that shares an end, NIC ends first: the NIC
    // is what has a rail.
    let mut missing_at: HashMap<EndKey, usize> = HashMap::new();
    for (i, l) in missing.iter().enumerate() {
        missing_at.insert(key(l.a), i);
        missing_at.insert(key(l.b), i);
    }
    let mut used_missing = vec![false; missing.len()];
    let mut used_extra = vec![false; extra.len()];
    let mut miswires = Vec::new();
    for (ei, c) in extra.iter().enumerate() {
        let Some((a, b)) = known(c) else { continue };
        let mut ends = [(a, b), (b, a)];
        ends.sort_by_key(|(anchor, _)| anchor.port.nic().is_none());
        for (anchor, built_far) in ends {
            let Some(&mi) = missing_at.get(&key(anchor)) else {
                continue;
            };
            if used_missing[mi] {
                continue;
            }
            let l = missing[mi];
            let drawn_far = if key(l.a) == key(anchor) { l.b } else { l.a };
            used_missing[mi] = true;
            used_extra[ei] = true;
            miswires.push(Miswire {
                drawn: l,
                built: c,
                anchor,
                drawn_far,
                built_far,
            });
            break;
        }
    }

    let mut faults = Vec::new();
    let at_drawn_far: HashMap<EndKey, usize> = miswires
        .iter()
        .enumerate()
        .map(|(i, m)| (key(m.drawn_far), i))
        .collect();
    let mut paired = vec![false; miswires.len()];
    for i in 0..miswires.len() {
        if paired[i] {
            continue;
        }
        let m = &miswires[i];
        let swap = at_drawn_far
            .get(&key(m.built_far))
            .copied()
            .filter(|&j| j != i && !paired[j] && key(miswires[j].built_far) == key(m.drawn_far));
        if let Some(j) = swap {
            paired[i] = true;
            paired[j] = true;
            faults.push(swapped(design, m, &miswires[j]));
        } else {
            faults.push(misplaced(design, m));
        }
    }
    for (i, l) in missing.iter().enumerate() {
        if !used_missing[i] {
            faults.push(missing_fault(design, l));
        }
    }
    for (i, c) in extra.iter().enumerate() {
        if !used_extra[i] {
            faults.push(extra_fault(design, &drawn, c));
        }
    }
    // Cables where drawn that the listing shows running slower than drawn.
    let built_at: HashMap<_, &BuiltCable> = built
        .iter()
        .filter_map(|c| known(c).map(|(a, b)| (pair_key(key(a), key(b)), c)))
        .collect();
    for l in &drawn {
        let Some(c) = built_at.get(&pair_key(key(l.a), key(l.b))) else {
            continue;
        };
        if let Some(rate) = c.rate
            && rate.gbit_s() < l.nominal_capacity().gbit_s() * (1.0 - 1e-9)
        {
            faults.push(slow_fault(design, l, c, rate));
        }
    }

    let workspace = Workspace::default();
    let as_drawn = cost::figures(design, catalog, &workspace);
    for fault in &mut faults {
        fault.cost = fault.change.as_ref().map(|change| {
            cost::figures(&cost::apply(design, [change]), catalog, &workspace).minus(&as_drawn)
        });
    }
    let as_built = cost::figures(
        &cost::apply(design, faults.iter().filter_map(|f| f.change.as_ref())),
        catalog,
        &workspace,
    );
    CablingReport {
        drawn: drawn.len(),
        built: built.len(),
        matched,
        faults,
        as_drawn,
        as_built,
    }
}

fn name(design: &Design, e: Endpoint) -> String {
    let device = design.device(e.device).map_or("?", |d| d.name.as_str());
    format!("{device}:{}", port_name(e.port))
}

fn built_end(design: &Design, e: &BuiltEnd) -> String {
    match e {
        BuiltEnd::Known(e) => name(design, *e),
        BuiltEnd::Unknown(text) => text.clone(),
    }
}

fn label(design: &Design, a: Endpoint, b: Endpoint) -> String {
    format!("{} <-> {}", name(design, a), name(design, b))
}

/// The rail an end is on: its leaf's rail, or NIC k of a node with several NICs (rail k).
fn rail_of(design: &Design, e: Endpoint) -> Option<u32> {
    match &design.device(e.device)?.kind {
        DeviceKind::Switch(s) => s.rail,
        DeviceKind::GpuNode(n) if n.nics.len() > 1 => e.port.nic(),
        _ => None,
    }
}

/// A link's rail: its leaf's, else its NIC's.
fn link_rail(design: &Design, a: Endpoint, b: Endpoint) -> Option<u32> {
    let switch_rail = |e: Endpoint| {
        design
            .device(e.device)
            .and_then(|d| d.kind.as_switch())
            .and_then(|s| s.rail)
    };
    switch_rail(a)
        .or(switch_rail(b))
        .or_else(|| rail_of(design, a).or_else(|| rail_of(design, b)))
}

fn rail_text(rail: Option<u32>) -> String {
    rail.map(|r| format!(" (rail {r})")).unwrap_or_default()
}

/// The drawn link with its far end moved to where it was cabled.
fn rewired(m: &Miswire) -> Link {
    let mut link = m.drawn.clone();
    if key(link.a) == key(m.anchor) {
        link.b = m.built_far;
    } else {
        link.a = m.built_far;
    }
    link
}

fn devices(ends: &[Endpoint]) -> Vec<DeviceId> {
    let set: BTreeSet<DeviceId> = ends.iter().map(|e| e.device).collect();
    set.into_iter().collect()
}

fn misplaced(design: &Design, m: &Miswire) -> Fault {
    let drawn_rail = rail_of(design, m.drawn_far).or(rail_of(design, m.anchor));
    let built_rail = rail_of(design, m.built_far);
    let wrong_rail = matches!((drawn_rail, built_rail), (Some(d), Some(b)) if d != b);
    let (kind, summary, rails) = if wrong_rail {
        let (d, b) = (drawn_rail.unwrap_or(0), built_rail.unwrap_or(0));
        let summary = format!(
            "{} (rail {d}) is cabled to {}, on rail {b}, not to {}: rail {d} loses a member and rail {b} gains one",
            name(design, m.anchor),
            name(design, m.built_far),
            name(design, m.drawn_far),
        );
        (FaultKind::WrongRail, summary, vec![d, b])
    } else {
        let summary = format!(
            "{} is cabled to {}, not to {}",
            name(design, m.anchor),
            name(design, m.built_far),
            name(design, m.drawn_far),
        );
        (FaultKind::Moved, summary, drawn_rail.into_iter().collect())
    };
    Fault {
        kind,
        summary,
        drawn: vec![label(design, m.drawn.a, m.drawn.b)],
        built: vec![label(design, m.anchor, m.built_far)],
        lines: vec![m.built.line],
        rails,
        links: vec![m.drawn.id],
        devices: devices(&[m.anchor, m.drawn_far, m.built_far]),
        cost: None,
        change: Some(Change {
            remove: vec![m.drawn.id],
            add: vec![rewired(m)],
        }),
    }
}

fn swapped(design: &Design, x: &Miswire, y: &Miswire) -> Fault {
    let rails: BTreeSet<u32> = [x.drawn_far, x.built_far, x.anchor, y.anchor]
        .into_iter()
        .filter_map(|e| rail_of(design, e))
        .collect();
    let summary = format!(
        "{} and {} are swapped: {} goes to {}{} and {} to {}{}",
        label(design, x.drawn.a, x.drawn.b),
        label(design, y.drawn.a, y.drawn.b),
        name(design, x.anchor),
        name(design, x.built_far),
        rail_text(rail_of(design, x.built_far)),
        name(design, y.anchor),
        name(design, y.built_far),
        rail_text(rail_of(design, y.built_far)),
    );
    Fault {
        kind: FaultKind::Swapped,
        summary,
        drawn: vec![
            label(design, x.drawn.a, x.drawn.b),
            label(design, y.drawn.a, y.drawn.b),
        ],
        built: vec![
            label(design, x.anchor, x.built_far),
            label(design, y.anchor, y.built_far),
        ],
        lines: vec![x.built.line, y.built.line],
        rails: rails.into_iter().collect(),
        links: vec![x.drawn.id, y.drawn.id],
        devices: devices(&[x.anchor, x.built_far, y.anchor, y.built_far]),
        cost: None,
        change: Some(Change {
            remove: vec![x.drawn.id, y.drawn.id],
            add: vec![rewired(x), rewired(y)],
        }),
    }
}

fn slow_fault(design: &Design, l: &Link, c: &BuiltCable, rate: Bandwidth) -> Fault {
    let rail = link_rail(design, l.a, l.b);
    let drawn = l.nominal_capacity();
    let fraction = rate.gbit_s() / drawn.gbit_s();
    let summary = format!(
        "{} runs at {rate}, drawn at {drawn}: it trained with fewer lanes or at a slower speed \
         ({:.0} % of its rate{}); reseat or replace the cable, or check both ports' speed",
        label(design, l.a, l.b),
        fraction * 100.0,
        rail.map(|r| format!(", on rail {r}")).unwrap_or_default()
    );
    let mut slowed = l.clone();
    slowed.state = LinkState::Degraded { fraction };
    Fault {
        kind: FaultKind::Slow,
        summary,
        drawn: vec![label(design, l.a, l.b)],
        built: vec![format!("{} at {rate}", label(design, l.a, l.b))],
        lines: vec![c.line],
        rails: rail.into_iter().collect(),
        links: vec![l.id],
        devices: devices(&[l.a, l.b]),
        cost: None,
        change: Some(Change {
            remove: vec![l.id],
            add: vec![slowed],
        }),
    }
}

fn missing_fault(design: &Design, l: &Link) -> Fault {
    let rail = link_rail(design, l.a, l.b);
    let summary = format!(
        "{} is drawn but not cabled{}",
        label(design, l.a, l.b),
        rail.map(|r| format!(": rail {r} is one cable short"))
            .unwrap_or_default()
    );
    Fault {
        kind: FaultKind::Missing,
        summary,
        drawn: vec![label(design, l.a, l.b)],
        built: Vec::new(),
        lines: Vec::new(),
        rails: rail.into_iter().collect(),
        links: vec![l.id],
        devices: devices(&[l.a, l.b]),
        cost: None,
        change: Some(Change {
            remove: vec![l.id],
            add: Vec::new(),
        }),
    }
}

fn extra_fault(design: &Design, drawn: &[&Link], c: &BuiltCable) -> Fault {
    let text = format!(
        "{} <-> {}",
        built_end(design, &c.a),
        built_end(design, &c.b)
    );
    let known: Vec<Endpoint> = [&c.a, &c.b]
        .into_iter()
        .filter_map(|e| match e {
            BuiltEnd::Known(e) => Some(*e),
            BuiltEnd::Unknown(_) => None,
        })
        .collect();
    let rails: BTreeSet<u32> = known.iter().filter_map(|e| rail_of(design, *e)).collect();
    let (change, note) = match known[..] {
        [a, b] => {
            // Like the drawn cables of the same devices, else an InfiniBand cable at the
            // listed rate: what the fabric listing shows.
            let template = drawn
                .iter()
                .find(|l| l.touches(a.device) || l.touches(b.device))
                .map(|l| (*l).clone())
                .or_else(|| {
                    c.rate
                        .map(|rate| Link::new(a, b, LinkTech::InfiniBand, rate))
                });
            let change = template.map(|mut link| {
                link.a = a;
                link.b = b;
                Change {
                    remove: Vec::new(),
                    add: vec![link],
                }
            });
            (change, "")
        }
        _ => (None, ": an end the design does not have"),
    };
    Fault {
        kind: FaultKind::Extra,
        summary: format!("{text} is cabled but not drawn{note}"),
        drawn: Vec::new(),
        built: vec![text],
        lines: vec![c.line],
        rails: rails.into_iter().collect(),
        links: Vec::new(),
        devices: devices(&known),
        cost: None,
        change,
    }
}
