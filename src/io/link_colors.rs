//! How links are coloured, shared by the canvas and the SVG/PNG exports so the two always
//! agree: by technology, by rail, by the switch tiers a link joins, or by load (heatmap).
//! Failed and degraded links have their own line pattern and are never drawn in the
//! heatmap's red. No UI imports: colours are plain RGB triples the canvas converts.

use crate::model::{
    Design, Device, DeviceKind, Link, LinkId, LinkState, LinkTech, Port, SwitchRole,
};
use std::collections::{BTreeMap, BTreeSet, HashMap};
use std::fmt;
use std::str::FromStr;

/// What a link's colour tells.
#[derive(
    Debug, Clone, Copy, PartialEq, Eq, Hash, Default, serde::Serialize, serde::Deserialize,
)]
pub enum ColorMode {
    #[default]
    Technology,
    /// One colour-blind-safe hue per rail: NIC i of a node and the rail-i leaf share it.
    Rail,
    /// By the switch tiers a link joins: node–leaf, leaf–spine, spine–core...
    Tier,
    /// By utilisation in the chosen collective, green → yellow → red.
    Heatmap,
}

impl ColorMode {
    pub const ALL: [ColorMode; 4] = [
        ColorMode::Technology,
        ColorMode::Rail,
        ColorMode::Tier,
        ColorMode::Heatmap,
    ];

    /// The word the command line takes and the legend's heading uses.
    pub fn name(self) -> &'static str {
        match self {
            ColorMode::Technology => "technology",
            ColorMode::Rail => "rail",
            ColorMode::Tier => "tier",
            ColorMode::Heatmap => "heatmap",
        }
    }
}

impl fmt::Display for ColorMode {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

impl FromStr for ColorMode {
    type Err = String;

    fn from_str(s: &str) -> Result<Self, Self::Err> {
        ColorMode::ALL
            .into_iter()
            .find(|m| m.name().eq_ignore_ascii_case(s.trim()))
            .ok_or_else(|| format!("`{s}` is not a colour mode: technology, rail, tier or heatmap"))
    }
}

/// A colour as 8-bit red, green, blue.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct Rgb(pub u8, pub u8, pub u8);

impl Rgb {
    /// `#rrggbb`, as SVG takes it.
    pub fn hex(self) -> String {
        format!("#{:02x}{:02x}{:02x}", self.0, self.1, self.2)
    }

    fn lerp(self, to: Rgb, t: f64) -> Rgb {
        let mix = |x: u8, y: u8| (f64::from(x) + (f64::from(y) - f64::from(x)) * t).round() as u8;
        Rgb(mix(self.0, to.0), mix(self.1, to.1), mix(self.2, to.2))
    }
}

/// What the diagram is drawn on: a few colours change so they stay visible.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Background {
    Light,
    Dark,
}

/// How a link's line is drawn.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Pattern {
    Solid,
    /// Long dashes: a failed link.
    Dashed,
    /// Short dots: a degraded link (it keeps its colour).
    Dotted,
}

impl Pattern {
    /// Dash and gap lengths in line-width-independent units, or none for a solid line.
    pub fn dash_gap(self) -> Option<(f32, f32)> {
        match self {
            Pattern::Solid => None,
            Pattern::Dashed => Some((8.0, 6.0)),
            Pattern::Dotted => Some((2.5, 3.5)),
        }
    }
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct LinkStyle {
    pub color: Rgb,
    pub pattern: Pattern,
}

/// The colour of a link technology.
pub fn tech_color(tech: LinkTech) -> Rgb {
    match tech {
        LinkTech::NvLink => Rgb(118, 185, 0),
        LinkTech::NvLinkBridge => Rgb(175, 180, 43),
        LinkTech::Pcie => Rgb(161, 127, 100),
        LinkTech::Ethernet => Rgb(66, 133, 244),
        LinkTech::RoceV2 => Rgb(0, 188, 212),
        LinkTech::InfiniBand => Rgb(171, 71, 188),
        LinkTech::Thunderbolt4 => Rgb(120, 144, 156),
        LinkTech::Thunderbolt5 => Rgb(240, 98, 146),
    }
}

/// Utilisation 0..1 as green → yellow → red; outside 0..1 it is clamped, not-a-number is red.
pub fn heat_color(utilisation: f64) -> Rgb {
    let u = if utilisation.is_finite() {
        utilisation.clamp(0.0, 1.0)
    } else {
        1.0
    };
    let (green, yellow, red) = (Rgb(67, 160, 71), Rgb(253, 216, 53), Rgb(229, 57, 53));
    if u < 0.5 {
        green.lerp(yellow, u * 2.0)
    } else {
        yellow.lerp(red, (u - 0.5) * 2.0)
    }
}

/// Failed links: grey, dashed. Grey is in no palette, so it cannot be read as a load.
pub const FAILED: Rgb = Rgb(117, 117, 117);

/// Degraded links under the heatmap: blue, outside its green-yellow-red, so a slowed link is
/// never read as a hot one (its load is on its card). Other views keep the link's colour.
pub const DEGRADED_UNDER_HEAT: Rgb = Rgb(30, 136, 229);

/// Links that carry nothing in a heatmap, and links without a rail in the rail view.
pub fn neutral(bg: Background) -> Rgb {
    match bg {
        Background::Light => Rgb(189, 189, 189),
        Background::Dark => Rgb(97, 97, 97),
    }
}

/// How many rails get a hue of their own; rail k and k + 8 share one.
pub const RAIL_HUES: u32 = 8;

/// Okabe and Ito's eight colours, which stay apart under every common colour-vision
/// deficiency; their black turns white on a dark canvas.
pub fn rail_color(rail: u32, bg: Background) -> Rgb {
    const HUES: [Rgb; 7] = [
        Rgb(230, 159, 0),   // orange
        Rgb(86, 180, 233),  // sky blue
        Rgb(0, 158, 115),   // bluish green
        Rgb(240, 228, 66),  // yellow
        Rgb(0, 114, 178),   // blue
        Rgb(213, 94, 0),    // vermillion
        Rgb(204, 121, 167), // reddish purple
    ];
    match HUES.get((rail % RAIL_HUES) as usize) {
        Some(&c) => c,
        None => match bg {
            Background::Light => Rgb(0, 0, 0),
            Background::Dark => Rgb(255, 255, 255),
        },
    }
}

/// The rail a link belongs to: the rail of the leaf it lands on, or else the NIC of a GPU
/// node it starts from (NIC i is port i and rail i). Scale-up links and links between
/// switches without a rail have none.
pub fn rail_of(a: &Device, port_a: Port, b: &Device, port_b: Port, tech: LinkTech) -> Option<u32> {
    let leaf_rail = |d: &Device| d.kind.as_switch().and_then(|s| s.rail);
    let nic_rail = |d: &Device, port: Port| match (&d.kind, port.nic()) {
        (DeviceKind::GpuNode(n), Some(slot))
            if tech.is_network() && (slot as usize) < n.nics.len() =>
        {
            Some(slot)
        }
        _ => None,
    };
    leaf_rail(a)
        .or_else(|| leaf_rail(b))
        .or_else(|| nic_rail(a, port_a))
        .or_else(|| nic_rail(b, port_b))
}

/// What sets links between the same two devices apart into lanes side by side: technology
/// and rate, and under rail colours the rail too, so a cable bundle that carries several
/// rails (a fat tree's eight NICs on one leaf) shows each rail in its colour instead of one
/// rail for all. The canvas and the exported diagram lay lanes out by it alike.
pub fn lane_look(link: &Link, a: &Device, b: &Device, mode: ColorMode) -> u64 {
    let rate = (link.nominal_capacity().gbit_s().max(0.0) as u64) & ((1 << 40) - 1);
    let look = (link.tech as u64) << 48 | rate;
    match mode {
        ColorMode::Rail => {
            let rail = rail_of(a, link.a.port, b, link.b.port, link.tech)
                .map_or(0, |r| (u64::from(r) + 1) & 0xFF);
            look | rail << 40
        }
        _ => look,
    }
}

/// How many links of `design` run between the two devices `link` joins in its lane (itself
/// included): the links one drawn line stands for, on the canvas and in the diagram.
pub fn links_in_lane(design: &Design, link: &Link, mode: ColorMode) -> usize {
    let look = |l: &Link| {
        let a = design.device(l.a.device)?;
        let b = design.device(l.b.device)?;
        Some(lane_look(l, a, b, mode))
    };
    let Some(mine) = look(link) else {
        return 0;
    };
    design
        .links
        .iter()
        .filter(|l| l.touches(link.a.device) && l.touches(link.b.device))
        .filter(|l| look(l) == Some(mine))
        .count()
}

/// Which tiers a link joins.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum TierPair {
    /// NVLink, bridges and PCIe inside a node or an NVSwitch domain.
    ScaleUp,
    /// Cables straight between nodes or hosts.
    Direct,
    NodeLeaf,
    LeafSpine,
    SpineCore,
    /// Anything else: a node on a spine, two switches of one tier...
    OtherSwitch,
}

impl TierPair {
    pub fn label(self) -> &'static str {
        match self {
            TierPair::ScaleUp => "scale-up (NVLink, PCIe)",
            TierPair::Direct => "node to node",
            TierPair::NodeLeaf => "node to leaf",
            TierPair::LeafSpine => "leaf to spine",
            TierPair::SpineCore => "spine to core",
            TierPair::OtherSwitch => "other switch links",
        }
    }

    /// Okabe–Ito hues again, ordered so neighbouring tiers differ most.
    pub fn color(self) -> Rgb {
        match self {
            TierPair::ScaleUp => Rgb(204, 121, 167),
            TierPair::Direct => Rgb(0, 158, 115),
            TierPair::NodeLeaf => Rgb(86, 180, 233),
            TierPair::LeafSpine => Rgb(230, 159, 0),
            TierPair::SpineCore => Rgb(213, 94, 0),
            TierPair::OtherSwitch => Rgb(0, 114, 178),
        }
    }
}

/// A device's tier: nodes and hosts 0, leaves 1, spines 2, cores 3; an NVSwitch domain,
/// which encloses nodes rather than sitting above them, has none.
pub fn device_tier(d: &Device) -> Option<u8> {
    match &d.kind {
        DeviceKind::Switch(s) => Some(match s.role {
            SwitchRole::Leaf => 1,
            SwitchRole::Spine => 2,
            SwitchRole::Core => 3,
        }),
        DeviceKind::NvSwitchDomain(_) => None,
        DeviceKind::GpuNode(_) | DeviceKind::Host(_) => Some(0),
    }
}

/// The tiers a link joins, by [`device_tier`].
pub fn tier_of(a: &Device, b: &Device, tech: LinkTech) -> TierPair {
    if matches!(
        tech,
        LinkTech::NvLink | LinkTech::NvLinkBridge | LinkTech::Pcie
    ) {
        return TierPair::ScaleUp;
    }
    match (device_tier(a), device_tier(b)) {
        (Some(x), Some(y)) => match (x.min(y), x.max(y)) {
            (0, 0) => TierPair::Direct,
            (0, 1) => TierPair::NodeLeaf,
            (1, 2) => TierPair::LeafSpine,
            (2, 3) => TierPair::SpineCore,
            _ => TierPair::OtherSwitch,
        },
        _ => TierPair::ScaleUp,
    }
}

/// Colours links for one mode. Built once per drawing; `style` is then cheap per link.
pub struct LinkPainter<'a> {
    pub mode: ColorMode,
    pub background: Background,
    /// Utilisation 0..1 by link, for the heatmap; links not listed carry nothing.
    pub heat: Option<&'a HashMap<LinkId, f64>>,
}

impl LinkPainter<'_> {
    /// The colour from the mode, before the link's state is considered.
    pub fn base_color(&self, link: &Link, a: &Device, b: &Device) -> Rgb {
        match self.mode {
            ColorMode::Technology => tech_color(link.tech),
            ColorMode::Rail => rail_of(a, link.a.port, b, link.b.port, link.tech)
                .map_or(neutral(self.background), |r| rail_color(r, self.background)),
            ColorMode::Tier => tier_of(a, b, link.tech).color(),
            ColorMode::Heatmap => self
                .heat
                .and_then(|h| h.get(&link.id))
                .map_or(neutral(self.background), |&u| heat_color(u)),
        }
    }

    /// Colour and pattern: a failed link is grey and dashed, a degraded one dotted (and
    /// blue under the heatmap).
    pub fn style(&self, link: &Link, a: &Device, b: &Device) -> LinkStyle {
        match link.state {
            LinkState::Failed => LinkStyle {
                color: FAILED,
                pattern: Pattern::Dashed,
            },
            LinkState::Degraded { .. } => LinkStyle {
                color: match self.mode {
                    ColorMode::Heatmap => DEGRADED_UNDER_HEAT,
                    _ => self.base_color(link, a, b),
                },
                pattern: Pattern::Dotted,
            },
            LinkState::Up => LinkStyle {
                color: self.base_color(link, a, b),
                pattern: Pattern::Solid,
            },
        }
    }
}

/// One line of a legend: a sample of the line and what it means.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct LegendEntry {
    pub label: String,
    pub color: Rgb,
    pub pattern: Pattern,
}

/// What the colours of a drawing mean, listing only what the design has.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Legend {
    pub heading: String,
    pub entries: Vec<LegendEntry>,
    /// The heatmap's scale (0 % green … 100 % red) goes above the entries.
    pub heat_scale: bool,
}

/// Stops of the heatmap scale, for a gradient: utilisation and its colour.
pub fn heat_stops() -> [(f64, Rgb); 3] {
    [0.0, 0.5, 1.0].map(|u| (u, heat_color(u)))
}

/// What a drawing's links showed, gathered link by link while drawing, for its legend.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct LegendTally {
    /// Bit i: `LinkTech::ALL[i]` was drawn.
    techs: u16,
    /// Bit r: rail r (below 64) was drawn; higher rails in `more_rails`.
    rails: u64,
    more_rails: BTreeSet<u32>,
    railless: bool,
    tiers: BTreeSet<TierPair>,
    degraded: bool,
    failed: bool,
}

impl LegendTally {
    /// Notes what `link` (from `a` to `b`) shows in `mode`.
    pub fn add(&mut self, mode: ColorMode, link: &Link, a: &Device, b: &Device) {
        match mode {
            ColorMode::Technology => {
                if let Some(i) = LinkTech::ALL.iter().position(|&t| t == link.tech) {
                    self.techs |= 1 << i;
                }
            }
            ColorMode::Rail => match rail_of(a, link.a.port, b, link.b.port, link.tech) {
                Some(r) if r < 64 => self.rails |= 1 << r,
                Some(r) => {
                    self.more_rails.insert(r);
                }
                None => self.railless = true,
            },
            ColorMode::Tier => {
                self.tiers.insert(tier_of(a, b, link.tech));
            }
            ColorMode::Heatmap => {}
        }
        match link.state {
            LinkState::Up => {}
            LinkState::Degraded { .. } => self.degraded = true,
            LinkState::Failed => self.failed = true,
        }
    }

    /// The legend: one entry for each colour drawn, then the failed and degraded patterns.
    pub fn legend(&self, mode: ColorMode, bg: Background) -> Legend {
        let solid = |label: String, color: Rgb| LegendEntry {
            label,
            color,
            pattern: Pattern::Solid,
        };
        let mut entries = Vec::new();
        match mode {
            ColorMode::Technology => {
                for (i, t) in LinkTech::ALL.iter().enumerate() {
                    if self.techs & (1 << i) != 0 {
                        entries.push(solid(t.label().to_string(), tech_color(*t)));
                    }
                }
            }
            ColorMode::Rail => {
                // Rails that share a hue share a line: "rails 0, 8".
                let mut by_hue: BTreeMap<u32, Vec<u32>> = BTreeMap::new();
                let rails = (0..64u32)
                    .filter(|r| self.rails & (1 << r) != 0)
                    .chain(self.more_rails.iter().copied());
                for r in rails {
                    by_hue.entry(r % RAIL_HUES).or_default().push(r);
                }
                for rails in by_hue.values() {
                    let names: Vec<String> = rails.iter().map(u32::to_string).collect();
                    let label = match names.as_slice() {
                        [one] => format!("rail {one}"),
                        _ => format!("rails {}", names.join(", ")),
                    };
                    entries.push(solid(label, rail_color(rails[0], bg)));
                }
                if self.railless {
                    entries.push(solid("no rail".to_string(), neutral(bg)));
                }
            }
            ColorMode::Tier => {
                entries.extend(
                    self.tiers
                        .iter()
                        .map(|t| solid(t.label().to_string(), t.color())),
                );
            }
            ColorMode::Heatmap => entries.push(solid("idle".to_string(), neutral(bg))),
        }
        if self.degraded {
            entries.push(match mode {
                ColorMode::Heatmap => LegendEntry {
                    label: "degraded (its load on hover)".to_string(),
                    color: DEGRADED_UNDER_HEAT,
                    pattern: Pattern::Dotted,
                },
                _ => LegendEntry {
                    label: "degraded (dotted)".to_string(),
                    color: FAILED,
                    pattern: Pattern::Dotted,
                },
            });
        }
        if self.failed {
            entries.push(LegendEntry {
                label: "failed".to_string(),
                color: FAILED,
                pattern: Pattern::Dashed,
            });
        }
        let heading = match mode {
            ColorMode::Technology => "Links by technology",
            ColorMode::Rail => "Links by rail",
            ColorMode::Tier => "Links by tier",
            ColorMode::Heatmap => "Links by load (time busy)",
        };
        Legend {
            heading: heading.to_string(),
            entries,
            heat_scale: mode == ColorMode::Heatmap,
        }
    }
}

/// Whether any link of `design` is on a rail (see [`rail_of`]); stops at the first.
pub fn design_has_rails(design: &Design) -> bool {
    design.links.iter().any(|link| {
        match (design.device(link.a.device), design.device(link.b.device)) {
            (Some(a), Some(b)) => rail_of(a, link.a.port, b, link.b.port, link.tech).is_some(),
            _ => false,
        }
    })
}

/// The mode a drawing of `design` uses when `asked` is chosen: rail colours on a design with
/// no rails (a Thunderbolt mesh, a fabric of direct cables) would be one grey, so it is drawn
/// by technology, and its legend says why ([`Legend::drawn_for`]).
pub fn drawn_mode(asked: ColorMode, design: &Design) -> ColorMode {
    if asked == ColorMode::Rail && !design_has_rails(design) {
        ColorMode::Technology
    } else {
        asked
    }
}

impl Legend {
    /// The legend of a drawing in `drawn` mode when `asked` was chosen: its heading says
    /// that the design has no rails to colour.
    pub fn drawn_for(mut self, asked: ColorMode, drawn: ColorMode) -> Legend {
        if asked == ColorMode::Rail && drawn == ColorMode::Technology {
            self.heading = "Links by technology (this design has no rails)".to_string();
        }
        self
    }
}

/// The legend of all of `design` drawn in `mode`.
pub fn legend(design: &Design, mode: ColorMode, bg: Background) -> Legend {
    let mut tally = LegendTally::default();
    for link in &design.links {
        if let (Some(a), Some(b)) = (design.device(link.a.device), design.device(link.b.device)) {
            tally.add(mode, link, a, b);
        }
    }
    let mut legend = tally.legend(mode, bg);
    // An empty box would read as a legend gone missing.
    if design.links.is_empty() && !legend.heat_scale {
        legend.heading = if design.node_count() == 1 {
            "No links: the GPUs meet inside the node".into()
        } else {
            "No links drawn".into()
        };
    }
    legend
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::{DeviceId, Endpoint, PartId, Pos};
    use crate::model::{GpuNode, NicSlot, ScaleUp, Switch, SwitchFeatures};

    fn node(id: u32, nics: usize) -> Device {
        let nic = NicSlot {
            part: PartId::new("cx7-ndr-400"),
            gpudirect: true,
        };
        Device {
            id: DeviceId(id),
            name: format!("node-{id}"),
            pos: Pos::default(),
            group: None,
            kind: DeviceKind::GpuNode(GpuNode {
                model: PartId::new("dgx-h100"),
                gpu: PartId::new("h100-sxm"),
                gpu_count: 8,
                scale_up: ScaleUp::UnifiedMemory,
                nics: vec![nic; nics],
                domain: None,
            }),
        }
    }

    fn switch(id: u32, role: SwitchRole, rail: Option<u32>) -> Device {
        Device {
            id: DeviceId(id),
            name: format!("sw-{id}"),
            pos: Pos::default(),
            group: None,
            kind: DeviceKind::Switch(Switch {
                model: PartId::new("qm9700"),
                role,
                breakout: 1,
                rail,
                features: SwitchFeatures::default(),
            }),
        }
    }

    #[test]
    fn modes_parse_from_their_names() {
        assert_eq!("rail".parse::<ColorMode>(), Ok(ColorMode::Rail));
        assert_eq!(" Heatmap ".parse::<ColorMode>(), Ok(ColorMode::Heatmap));
        assert!("rainbow".parse::<ColorMode>().is_err());
    }

    #[test]
    fn rails_come_from_the_leaf_then_the_nic() {
        let (n, leaf5, spine) = (
            node(0, 8),
            switch(1, SwitchRole::Leaf, Some(5)),
            switch(2, SwitchRole::Spine, None),
        );
        let ib = LinkTech::InfiniBand;
        // The leaf's rail wins over the NIC's port number.
        let (nic, sw) = (Port::Nic, Port::Switch);
        assert_eq!(rail_of(&n, nic(3), &leaf5, sw(0), ib), Some(5));
        // A leaf's uplink belongs to its rail too.
        assert_eq!(rail_of(&spine, sw(0), &leaf5, sw(40), ib), Some(5));
        // NIC 6 on a switch without a rail is rail 6; NIC 8 is past the node's 8 NICs and
        // an on-board port is no rail.
        assert_eq!(rail_of(&n, nic(6), &spine, sw(0), ib), Some(6));
        assert_eq!(rail_of(&spine, sw(0), &n, nic(8), ib), None);
        assert_eq!(rail_of(&spine, sw(0), &n, Port::Ethernet(0), ib), None);
        // Scale-up between two nodes has no rail whatever the port.
        assert_eq!(
            rail_of(&n, nic(1), &node(3, 8), nic(1), LinkTech::NvLink),
            None
        );
    }

    #[test]
    fn eight_rails_get_eight_hues_then_repeat() {
        let hues: BTreeSet<Rgb> = (0..8).map(|r| rail_color(r, Background::Light)).collect();
        assert_eq!(hues.len(), 8);
        assert!(!hues.contains(&neutral(Background::Light)));
        assert!(!hues.contains(&FAILED));
        assert_eq!(
            rail_color(9, Background::Dark),
            rail_color(1, Background::Dark)
        );
        assert_eq!(rail_color(7, Background::Light), Rgb(0, 0, 0));
        assert_eq!(rail_color(7, Background::Dark), Rgb(255, 255, 255));
    }

    #[test]
    fn tiers_by_roles() {
        let (n, leaf, spine, core) = (
            node(0, 8),
            switch(1, SwitchRole::Leaf, None),
            switch(2, SwitchRole::Spine, None),
            switch(3, SwitchRole::Core, None),
        );
        let ib = LinkTech::InfiniBand;
        assert_eq!(tier_of(&n, &leaf, ib), TierPair::NodeLeaf);
        assert_eq!(tier_of(&spine, &leaf, ib), TierPair::LeafSpine);
        assert_eq!(tier_of(&spine, &core, ib), TierPair::SpineCore);
        assert_eq!(tier_of(&n, &spine, ib), TierPair::OtherSwitch);
        assert_eq!(
            tier_of(&n, &node(4, 1), LinkTech::Ethernet),
            TierPair::Direct
        );
        assert_eq!(
            tier_of(&n, &node(4, 1), LinkTech::NvLink),
            TierPair::ScaleUp
        );
    }

    #[test]
    fn failed_is_grey_dashed_and_degraded_dotted_never_in_heat_red() {
        let (n, leaf) = (node(0, 8), switch(1, SwitchRole::Leaf, Some(2)));
        let heat = HashMap::from([(LinkId(0), 1.0)]);
        let painter = LinkPainter {
            mode: ColorMode::Heatmap,
            background: Background::Dark,
            heat: Some(&heat),
        };
        let mut link = Link::new(
            Endpoint::new(DeviceId(0), Port::Nic(2)),
            Endpoint::new(DeviceId(1), Port::Switch(0)),
            LinkTech::InfiniBand,
            crate::model::Bandwidth::from_gbit_s(400.0),
        );
        assert_eq!(painter.style(&link, &n, &leaf).color, Rgb(229, 57, 53));
        link.state = LinkState::Failed;
        let failed = painter.style(&link, &n, &leaf);
        assert_eq!((failed.color, failed.pattern), (FAILED, Pattern::Dashed));
        link.state = LinkState::Degraded { fraction: 0.5 };
        let degraded = painter.style(&link, &n, &leaf);
        // 100 % busy and degraded: blue and dotted under the heatmap, not its red.
        assert_eq!(
            (degraded.color, degraded.pattern),
            (DEGRADED_UNDER_HEAT, Pattern::Dotted)
        );
        // Other views keep the link's own colour: rail 2's green, dotted.
        let rails = LinkPainter {
            mode: ColorMode::Rail,
            ..painter
        };
        assert_eq!(rails.base_color(&link, &n, &leaf), Rgb(0, 158, 115));
        assert_eq!(
            rails.style(&link, &n, &leaf).color,
            Rgb(0, 158, 115),
            "degraded keeps its rail colour"
        );
    }

    #[test]
    fn heat_runs_green_yellow_red() {
        assert_eq!(heat_color(0.0), Rgb(67, 160, 71));
        assert_eq!(heat_color(0.5), Rgb(253, 216, 53));
        assert_eq!(heat_color(1.0), Rgb(229, 57, 53));
        assert_eq!(heat_color(7.0), heat_color(1.0));
        assert_eq!(heat_color(f64::NAN), heat_color(1.0));
    }

    #[test]
    fn a_line_stands_for_the_links_of_its_lane_only() {
        let mut design = Design {
            name: "t".to_string(),
            ..Default::default()
        };
        design.devices = vec![
            node(0, 4),
            switch(1, SwitchRole::Leaf, None),
            switch(2, SwitchRole::Spine, None),
        ];
        let ib = |id: u32, a: (u32, Port), b: (u32, Port), gbit_s: f64| {
            let mut l = Link::new(
                Endpoint::new(DeviceId(a.0), a.1),
                Endpoint::new(DeviceId(b.0), b.1),
                LinkTech::InfiniBand,
                crate::model::Bandwidth::from_gbit_s(gbit_s),
            );
            l.id = LinkId(id);
            l
        };
        // Four NICs to one leaf, the last at 200G; the leaf up to a spine.
        let (nic, sw) = (Port::Nic, Port::Switch);
        design.links = vec![
            ib(0, (0, nic(0)), (1, sw(0)), 400.0),
            ib(1, (0, nic(1)), (1, sw(1)), 400.0),
            ib(2, (0, nic(2)), (1, sw(2)), 400.0),
            ib(3, (0, nic(3)), (1, sw(3)), 200.0),
            ib(4, (1, sw(40)), (2, sw(0)), 400.0),
        ];
        let count = |k: usize, mode| links_in_lane(&design, &design.links[k], mode);
        // By technology the three 400G cables share a line and the 200G one has its own.
        assert_eq!(
            (
                count(0, ColorMode::Technology),
                count(3, ColorMode::Technology)
            ),
            (3, 1)
        );
        assert_eq!(count(4, ColorMode::Technology), 1);
        // By rail each NIC's cable is a lane of its own.
        assert_eq!(count(0, ColorMode::Rail), 1);
        assert_eq!(count(1, ColorMode::Heatmap), 3);
    }

    #[test]
    fn the_rail_legend_lists_each_rail_present_and_the_railless() {
        let mut design = Design {
            name: "t".to_string(),
            ..Default::default()
        };
        design.devices = vec![
            node(0, 10),
            switch(1, SwitchRole::Leaf, None),
            switch(2, SwitchRole::Spine, None),
        ];
        let ib = |id: u32, a: (u32, Port), b: (u32, Port)| {
            let mut l = Link::new(
                Endpoint::new(DeviceId(a.0), a.1),
                Endpoint::new(DeviceId(b.0), b.1),
                LinkTech::InfiniBand,
                crate::model::Bandwidth::from_gbit_s(400.0),
            );
            l.id = LinkId(id);
            l
        };
        // NICs 0, 8 and 9 to the leaf; the leaf (no rail) to the spine, failed.
        let (nic, sw) = (Port::Nic, Port::Switch);
        let mut uplink = ib(3, (1, sw(40)), (2, sw(0)));
        uplink.state = LinkState::Failed;
        design.links = vec![
            ib(0, (0, nic(0)), (1, sw(0))),
            ib(1, (0, nic(8)), (1, sw(1))),
            ib(2, (0, nic(9)), (1, sw(2))),
            uplink,
        ];
        let legend = legend(&design, ColorMode::Rail, Background::Light);
        let labels: Vec<&str> = legend.entries.iter().map(|e| e.label.as_str()).collect();
        assert_eq!(labels, ["rails 0, 8", "rail 9", "no rail", "failed"]);
        assert_eq!(legend.entries[1].color, rail_color(1, Background::Light));
        assert!(!legend.heat_scale);
        assert_eq!(drawn_mode(ColorMode::Rail, &design), ColorMode::Rail);

        // Without the NIC links only the spine uplink is left: no rails, so rail colours
        // are drawn by technology, and the legend says so.
        design.links.drain(..3);
        assert_eq!(drawn_mode(ColorMode::Rail, &design), ColorMode::Technology);
        assert_eq!(drawn_mode(ColorMode::Tier, &design), ColorMode::Tier);
        let legend = super::legend(&design, ColorMode::Technology, Background::Light)
            .drawn_for(ColorMode::Rail, ColorMode::Technology);
        assert_eq!(
            legend.heading,
            "Links by technology (this design has no rails)"
        );
        let labels: Vec<&str> = legend.entries.iter().map(|e| e.label.as_str()).collect();
        assert_eq!(labels, [LinkTech::InfiniBand.label(), "failed"]);
    }
}
