//! Structural checks that decide whether a design can be used at all.
//!
//! These are not design advice (an oversubscribed leaf is a choice; `analysis` comments on
//! it). They catch what would make the rest of the program wrong or unbounded: ids that are
//! not unique, links to devices that do not exist, numbers that are not numbers, sizes no
//! real cluster has. A file that fails here is refused on load.
//!
//! Positions may be negative (the canvas extends around the origin) but must be finite.
//! Devices and links must be sorted by id because lookups are binary searches; the file
//! loader sorts them before validating, so only a design built in memory can fail that rule.

use super::design::{Design, DeviceId, GroupId, LinkId};
use super::device::{DeviceKind, ScaleUp};
use super::link::LinkState;
use super::units::Bandwidth;
use std::collections::{HashMap, HashSet};

/// Longest name (design, device, group) or part id, in bytes.
pub const MAX_NAME_BYTES: usize = 4096;
/// Longest free-text notes, in bytes.
pub const MAX_NOTES_BYTES: usize = 1024 * 1024;
/// GPUs in one node: more than any real chassis, small enough to rule out garbage.
pub const MAX_GPUS_PER_NODE: u32 = 1_000_000;
/// GPUs in the whole design (about 15 times the largest clusters built so far).
pub const MAX_GPUS: u64 = 2_000_000;
/// Devices (nodes, switches, hosts, domains) in the whole design.
pub const MAX_DEVICES: usize = 1_000_000;
/// Links in the whole design.
pub const MAX_LINKS: usize = 5_000_000;
/// Groups in the whole design.
pub const MAX_GROUPS: usize = 1_000_000;
/// Lanes or parallel cables in one link.
pub const MAX_LANES: u32 = 1024;
/// Scale-out NICs in one device.
pub const MAX_NICS_PER_DEVICE: usize = 1024;
/// Largest switch port breakout.
pub const MAX_BREAKOUT: u32 = 64;
/// Fastest lane a link may claim, per direction (100 Tb/s: far beyond any shipping part).
pub const MAX_LANE_GBIT_S: f64 = 100_000.0;
/// Fastest link, per direction: every lane at the fastest rate (102.4 Pb/s). The structural
/// metrics carry any link up to this without clamping.
pub const MAX_LINK_GBIT_S: f64 = MAX_LANE_GBIT_S * MAX_LANES as f64;
/// Canvas coordinates beyond this are garbage, not a layout (and lose f32 precision).
pub const MAX_COORDINATE: f32 = 1.0e9;
/// Validation stops listing problems after this many; a broken file usually has one cause.
pub const MAX_REPORTED: usize = 100;

#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub enum ValidationError {
    #[error("device id {0} is used more than once")]
    DuplicateDevice(DeviceId),
    #[error("link id {0} is used more than once")]
    DuplicateLink(LinkId),
    #[error("group id {0} is used more than once")]
    DuplicateGroup(GroupId),
    #[error("devices are not sorted by id")]
    DevicesUnsorted,
    #[error("links are not sorted by id")]
    LinksUnsorted,
    #[error("link {link} ends at device {device}, which does not exist")]
    DanglingLinkEnd { link: LinkId, device: DeviceId },
    #[error("link {link} connects device {device} to itself")]
    SelfLoop { link: LinkId, device: DeviceId },
    #[error(
        "link {link}: lane rate {gbit_s} Gb/s is not a positive number up to {MAX_LANE_GBIT_S}"
    )]
    BadRate { link: LinkId, gbit_s: f64 },
    #[error("link {link} has zero lanes")]
    ZeroLanes { link: LinkId },
    #[error("link {link} has {lanes} lanes, over the limit of {MAX_LANES}")]
    TooManyLanes { link: LinkId, lanes: u32 },
    #[error("link {link}: degraded fraction {fraction} is outside (0, 1]")]
    BadDegradedFraction { link: LinkId, fraction: f64 },
    #[error(
        "device {device}: position ({x}, {y}) is not a finite coordinate within ±{MAX_COORDINATE}"
    )]
    BadPosition { device: DeviceId, x: f32, y: f32 },
    #[error("device {device}: GPU count {count} is outside 1..={MAX_GPUS_PER_NODE}")]
    BadGpuCount { device: DeviceId, count: u32 },
    #[error(
        "device {device}: scale-up bandwidth {gbit_s} Gb/s is not a finite, non-negative number"
    )]
    BadScaleUpBandwidth { device: DeviceId, gbit_s: f64 },
    #[error("device {device} has {count} NICs, over the limit of {MAX_NICS_PER_DEVICE}")]
    TooManyNics { device: DeviceId, count: usize },
    #[error("switch {device}: breakout {breakout} is outside 1..={MAX_BREAKOUT}")]
    BadBreakout { device: DeviceId, breakout: u32 },
    #[error("device {device} belongs to domain {domain}, which does not exist")]
    MissingDomain { device: DeviceId, domain: DeviceId },
    #[error("device {device} belongs to domain {domain}, which is not an NVSwitch domain")]
    NotADomain { device: DeviceId, domain: DeviceId },
    #[error("device {device} is in group {group}, which does not exist")]
    MissingGroup { device: DeviceId, group: GroupId },
    #[error("group {group} has parent {parent}, which does not exist")]
    MissingParentGroup { group: GroupId, parent: GroupId },
    #[error("group {group} is its own ancestor")]
    GroupCycle { group: GroupId },
    #[error("{what} is {bytes} bytes long, over the limit of {limit}")]
    TooLong {
        what: String,
        bytes: usize,
        limit: usize,
    },
    #[error("the design has {count} devices, over the limit of {MAX_DEVICES}")]
    TooManyDevices { count: usize },
    #[error("the design has {count} links, over the limit of {MAX_LINKS}")]
    TooManyLinks { count: usize },
    #[error("the design has {count} groups, over the limit of {MAX_GROUPS}")]
    TooManyGroups { count: usize },
    #[error("the design has {count} GPUs, over the limit of {MAX_GPUS}")]
    TooManyGpus { count: u64 },
    #[error("{0}")]
    Calibration(String),
    #[error("and {0} more problems")]
    More(usize),
}

/// Collects problems up to `MAX_REPORTED`, then only counts them.
#[derive(Default)]
struct Problems {
    list: Vec<ValidationError>,
    more: usize,
}

impl Problems {
    fn push(&mut self, e: ValidationError) {
        if self.list.len() < MAX_REPORTED {
            self.list.push(e);
        } else {
            self.more += 1;
        }
    }

    fn check_len(&mut self, what: impl FnOnce() -> String, text: &str, limit: usize) {
        if text.len() > limit {
            self.push(ValidationError::TooLong {
                what: what(),
                bytes: text.len(),
                limit,
            });
        }
    }

    fn finish(mut self) -> Result<(), Vec<ValidationError>> {
        if self.list.is_empty() {
            return Ok(());
        }
        if self.more > 0 {
            self.list.push(ValidationError::More(self.more));
        }
        Err(self.list)
    }
}

/// Checks that a design is structurally sound; lists every problem found (up to a limit).
pub fn validate(design: &Design) -> Result<(), Vec<ValidationError>> {
    let mut p = Problems::default();

    // Size first: a design over the limits is refused without walking millions of items.
    if design.devices.len() > MAX_DEVICES {
        p.push(ValidationError::TooManyDevices {
            count: design.devices.len(),
        });
    }
    if design.links.len() > MAX_LINKS {
        p.push(ValidationError::TooManyLinks {
            count: design.links.len(),
        });
    }
    if design.groups.len() > MAX_GROUPS {
        p.push(ValidationError::TooManyGroups {
            count: design.groups.len(),
        });
    }
    if !p.list.is_empty() {
        return p.finish();
    }

    p.check_len(|| "the design name".into(), &design.name, MAX_NAME_BYTES);
    p.check_len(|| "the design notes".into(), &design.notes, MAX_NOTES_BYTES);

    check_groups(design, &mut p);
    check_devices(design, &mut p);
    check_links(design, &mut p);
    if let Some(c) = &design.calibration {
        c.problems()
            .into_iter()
            .for_each(|m| p.push(ValidationError::Calibration(m)));
    }
    p.finish()
}

fn check_groups(design: &Design, p: &mut Problems) {
    let mut parents: HashMap<GroupId, Option<GroupId>> = HashMap::new();
    for g in &design.groups {
        p.check_len(|| format!("group {} name", g.id), &g.name, MAX_NAME_BYTES);
        if parents.insert(g.id, g.parent).is_some() {
            p.push(ValidationError::DuplicateGroup(g.id));
        }
    }
    for g in &design.groups {
        if let Some(parent) = g.parent
            && !parents.contains_key(&parent)
        {
            p.push(ValidationError::MissingParentGroup {
                group: g.id,
                parent,
            });
        }
    }
    // Walking up from each group must end within as many steps as there are groups;
    // a longer walk means a cycle, which would hang anything that climbs the tree.
    let mut reported = HashSet::new();
    for g in &design.groups {
        let mut current = g.parent;
        let mut steps = 0;
        while let Some(id) = current {
            if id == g.id || steps > parents.len() {
                if reported.insert(g.id) {
                    p.push(ValidationError::GroupCycle { group: g.id });
                }
                break;
            }
            current = parents.get(&id).copied().flatten();
            steps += 1;
        }
    }
}

fn check_devices(design: &Design, p: &mut Problems) {
    let group_ids: HashSet<GroupId> = design.groups.iter().map(|g| g.id).collect();
    let mut gpus: u64 = 0;
    for (i, d) in design.devices.iter().enumerate() {
        if let Some(prev) = i.checked_sub(1).map(|j| &design.devices[j]) {
            if prev.id == d.id {
                p.push(ValidationError::DuplicateDevice(d.id));
            } else if prev.id > d.id {
                p.push(ValidationError::DevicesUnsorted);
            }
        }
        p.check_len(|| format!("device {} name", d.id), &d.name, MAX_NAME_BYTES);
        let pos_ok = |v: f32| v.is_finite() && v.abs() <= MAX_COORDINATE;
        if !(pos_ok(d.pos.x) && pos_ok(d.pos.y)) {
            p.push(ValidationError::BadPosition {
                device: d.id,
                x: d.pos.x,
                y: d.pos.y,
            });
        }
        if let Some(group) = d.group
            && !group_ids.contains(&group)
        {
            p.push(ValidationError::MissingGroup {
                device: d.id,
                group,
            });
        }
        match &d.kind {
            DeviceKind::GpuNode(n) => {
                p.check_len(
                    || format!("device {} model id", d.id),
                    n.model.as_str(),
                    MAX_NAME_BYTES,
                );
                p.check_len(
                    || format!("device {} GPU id", d.id),
                    n.gpu.as_str(),
                    MAX_NAME_BYTES,
                );
                if n.gpu_count == 0 || n.gpu_count > MAX_GPUS_PER_NODE {
                    p.push(ValidationError::BadGpuCount {
                        device: d.id,
                        count: n.gpu_count,
                    });
                }
                gpus += u64::from(n.gpu_count);
                let scale_up_rate = match &n.scale_up {
                    ScaleUp::NvSwitch { per_gpu_gbit_s, .. }
                    | ScaleUp::NvLinkBridgePairs { per_gpu_gbit_s, .. } => Some(*per_gpu_gbit_s),
                    ScaleUp::Pcie { .. } | ScaleUp::UnifiedMemory => None,
                };
                if let Some(rate) = scale_up_rate
                    && !rate.is_finite_non_negative()
                {
                    p.push(ValidationError::BadScaleUpBandwidth {
                        device: d.id,
                        gbit_s: rate.gbit_s(),
                    });
                }
                check_nics(d.id, &n.nics, p);
                if let Some(domain) = n.domain {
                    match design.device(domain).map(|dev| &dev.kind) {
                        Some(DeviceKind::NvSwitchDomain(_)) => {}
                        Some(_) => p.push(ValidationError::NotADomain {
                            device: d.id,
                            domain,
                        }),
                        None => p.push(ValidationError::MissingDomain {
                            device: d.id,
                            domain,
                        }),
                    }
                }
            }
            DeviceKind::NvSwitchDomain(dom) => p.check_len(
                || format!("device {} model id", d.id),
                dom.model.as_str(),
                MAX_NAME_BYTES,
            ),
            DeviceKind::Switch(s) => {
                p.check_len(
                    || format!("device {} model id", d.id),
                    s.model.as_str(),
                    MAX_NAME_BYTES,
                );
                if s.breakout == 0 || s.breakout > MAX_BREAKOUT {
                    p.push(ValidationError::BadBreakout {
                        device: d.id,
                        breakout: s.breakout,
                    });
                }
            }
            DeviceKind::Host(h) => {
                if let Some(model) = &h.model {
                    p.check_len(
                        || format!("device {} model id", d.id),
                        model.as_str(),
                        MAX_NAME_BYTES,
                    );
                }
                check_nics(d.id, &h.nics, p);
            }
        }
    }
    if gpus > MAX_GPUS {
        p.push(ValidationError::TooManyGpus { count: gpus });
    }
}

fn check_nics(device: DeviceId, nics: &[super::device::NicSlot], p: &mut Problems) {
    if nics.len() > MAX_NICS_PER_DEVICE {
        p.push(ValidationError::TooManyNics {
            device,
            count: nics.len(),
        });
        return;
    }
    for nic in nics {
        p.check_len(
            || format!("device {device} NIC id"),
            nic.part.as_str(),
            MAX_NAME_BYTES,
        );
    }
}

fn rate_ok(rate: Bandwidth) -> bool {
    let g = rate.gbit_s();
    g.is_finite() && g > 0.0 && g <= MAX_LANE_GBIT_S
}

fn check_links(design: &Design, p: &mut Problems) {
    for (i, l) in design.links.iter().enumerate() {
        if let Some(prev) = i.checked_sub(1).map(|j| &design.links[j]) {
            if prev.id == l.id {
                p.push(ValidationError::DuplicateLink(l.id));
            } else if prev.id > l.id {
                p.push(ValidationError::LinksUnsorted);
            }
        }
        for end in [l.a, l.b] {
            if design.device(end.device).is_none() {
                p.push(ValidationError::DanglingLinkEnd {
                    link: l.id,
                    device: end.device,
                });
            }
        }
        if l.a.device == l.b.device {
            p.push(ValidationError::SelfLoop {
                link: l.id,
                device: l.a.device,
            });
        }
        if !rate_ok(l.rate_gbit_s) {
            p.push(ValidationError::BadRate {
                link: l.id,
                gbit_s: l.rate_gbit_s.gbit_s(),
            });
        }
        if l.lanes == 0 {
            p.push(ValidationError::ZeroLanes { link: l.id });
        } else if l.lanes > MAX_LANES {
            p.push(ValidationError::TooManyLanes {
                link: l.id,
                lanes: l.lanes,
            });
        }
        if let LinkState::Degraded { fraction } = l.state
            && !(fraction > 0.0 && fraction <= 1.0)
        {
            p.push(ValidationError::BadDegradedFraction {
                link: l.id,
                fraction,
            });
        }
        if let Some(cable) = &l.cable {
            p.check_len(
                || format!("link {} cable id", l.id),
                cable.as_str(),
                MAX_NAME_BYTES,
            );
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::{
        Device, Endpoint, GpuNode, GroupKind, Link, LinkTech, NvSwitchDomain, PartId, Port, Pos,
        Switch, SwitchFeatures, SwitchRole,
    };

    fn node(id: u32, gpus: u32) -> Device {
        Device {
            id: DeviceId(id),
            name: format!("node{id}"),
            pos: Pos::new(id as f32 * 10.0, -5.0),
            group: None,
            kind: DeviceKind::GpuNode(GpuNode {
                model: PartId::new("dgx-h100"),
                gpu: PartId::new("h100-sxm"),
                gpu_count: gpus,
                scale_up: ScaleUp::NvSwitch {
                    generation: 4,
                    per_gpu_gbit_s: Bandwidth::from_gbyte_s(450.0),
                },
                nics: vec![],
                domain: None,
            }),
        }
    }

    fn switch(id: u32) -> Device {
        Device {
            id: DeviceId(id),
            name: format!("leaf{id}"),
            pos: Pos::default(),
            group: None,
            kind: DeviceKind::Switch(Switch {
                model: PartId::new("qm9700"),
                role: SwitchRole::Leaf,
                breakout: 1,
                rail: None,
                features: SwitchFeatures::default(),
            }),
        }
    }

    fn link(id: u32, a: u32, b: u32) -> Link {
        let mut l = Link::new(
            Endpoint::new(DeviceId(a), Port::Nic(0)),
            Endpoint::new(DeviceId(b), Port::Switch(0)),
            LinkTech::InfiniBand,
            Bandwidth::from_gbit_s(400.0),
        );
        l.id = LinkId(id);
        l
    }

    /// Two nodes on one leaf: the smallest sound design.
    fn sound() -> Design {
        let mut d = Design::new("two nodes");
        d.devices = vec![node(0, 8), node(1, 8), switch(2)];
        d.links = vec![link(0, 0, 2), link(1, 1, 2)];
        d
    }

    #[test]
    fn a_sound_design_passes() {
        assert_eq!(validate(&sound()), Ok(()));
        assert_eq!(validate(&Design::new("empty")), Ok(()));
    }

    #[test]
    fn duplicate_and_unsorted_ids_are_found() {
        let mut d = sound();
        d.devices[1].id = DeviceId(0);
        d.links.swap(0, 1);
        let errors = validate(&d).unwrap_err();
        assert!(errors.contains(&ValidationError::DuplicateDevice(DeviceId(0))));
        assert!(errors.contains(&ValidationError::LinksUnsorted));
    }

    #[test]
    fn dangling_ends_and_self_loops_are_found() {
        let mut d = sound();
        d.links.push(link(2, 0, 9));
        d.links.push(link(3, 1, 1));
        let errors = validate(&d).unwrap_err();
        assert_eq!(
            errors,
            vec![
                ValidationError::DanglingLinkEnd {
                    link: LinkId(2),
                    device: DeviceId(9)
                },
                ValidationError::SelfLoop {
                    link: LinkId(3),
                    device: DeviceId(1)
                },
            ]
        );
    }

    #[test]
    fn bad_numbers_are_found() {
        let mut d = sound();
        d.links[0].rate_gbit_s = Bandwidth::from_gbit_s(f64::NAN);
        d.links[1].lanes = 0;
        d.devices[0].pos.x = f32::INFINITY;
        d.devices[1].pos.x = -300.0; // negative is a fine canvas position
        let errors = validate(&d).unwrap_err();
        assert_eq!(errors.len(), 3, "{errors:?}");
        assert!(matches!(errors[0], ValidationError::BadPosition { .. }));
        assert!(matches!(errors[1], ValidationError::BadRate { .. }));
        assert_eq!(errors[2], ValidationError::ZeroLanes { link: LinkId(1) });
    }

    #[test]
    fn degraded_fraction_must_be_in_zero_one() {
        for (fraction, ok) in [
            (0.5, true),
            (1.0, true),
            (0.0, false),
            (1.5, false),
            (-0.1, false),
        ] {
            let mut d = sound();
            d.links[0].state = LinkState::Degraded { fraction };
            assert_eq!(validate(&d).is_ok(), ok, "fraction {fraction}");
        }
    }

    #[test]
    fn gpu_counts_are_bounded() {
        let mut d = sound();
        if let DeviceKind::GpuNode(n) = &mut d.devices[0].kind {
            n.gpu_count = 0;
        }
        assert_eq!(
            validate(&d),
            Err(vec![ValidationError::BadGpuCount {
                device: DeviceId(0),
                count: 0
            }])
        );
        // Two nodes at the per-node limit make exactly the design-wide limit: allowed.
        let mut d = sound();
        for dev in &mut d.devices[..2] {
            if let DeviceKind::GpuNode(n) = &mut dev.kind {
                n.gpu_count = MAX_GPUS_PER_NODE;
            }
        }
        assert_eq!(validate(&d), Ok(()));
        let mut d = sound();
        d.devices.push(node(3, MAX_GPUS_PER_NODE));
        d.devices.push(node(4, MAX_GPUS_PER_NODE));
        d.devices.push(node(5, 1));
        assert_eq!(
            validate(&d),
            Err(vec![ValidationError::TooManyGpus { count: 2_000_017 }])
        );
    }

    #[test]
    fn domain_must_be_a_domain_device() {
        let mut d = sound();
        d.devices.push(Device {
            id: DeviceId(3),
            name: "rack".into(),
            pos: Pos::default(),
            group: None,
            kind: DeviceKind::NvSwitchDomain(NvSwitchDomain {
                model: PartId::new("gb200-nvl72"),
            }),
        });
        let set_domain = |d: &mut Design, target: u32| {
            if let DeviceKind::GpuNode(n) = &mut d.devices[0].kind {
                n.domain = Some(DeviceId(target));
            }
        };
        set_domain(&mut d, 3);
        assert_eq!(validate(&d), Ok(()));
        set_domain(&mut d, 2);
        assert_eq!(
            validate(&d),
            Err(vec![ValidationError::NotADomain {
                device: DeviceId(0),
                domain: DeviceId(2)
            }])
        );
        set_domain(&mut d, 7);
        assert_eq!(
            validate(&d),
            Err(vec![ValidationError::MissingDomain {
                device: DeviceId(0),
                domain: DeviceId(7)
            }])
        );
    }

    #[test]
    fn long_names_and_group_cycles_are_found() {
        let mut d = sound();
        d.devices[2].name = "x".repeat(MAX_NAME_BYTES + 1);
        let a = d.add_group("a", GroupKind::Rack);
        let b = d.add_group("b", GroupKind::Pod);
        d.groups[0].parent = Some(b);
        d.groups[1].parent = Some(a);
        let errors = validate(&d).unwrap_err();
        assert_eq!(
            errors,
            vec![
                ValidationError::GroupCycle { group: a },
                ValidationError::GroupCycle { group: b },
                ValidationError::TooLong {
                    what: "device d2 name".into(),
                    bytes: 4097,
                    limit: 4096
                },
            ]
        );
    }

    #[test]
    fn reports_are_capped() {
        let mut d = sound();
        for i in 2..300 {
            d.links.push(link(i, 0, 0));
        }
        let errors = validate(&d).unwrap_err();
        assert_eq!(errors.len(), MAX_REPORTED + 1);
        assert_eq!(
            errors[MAX_REPORTED],
            ValidationError::More(298 - MAX_REPORTED)
        );
    }
}
