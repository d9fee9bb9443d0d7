//! Parts: ids missing from the catalog, ids of the wrong kind, parts without a price, and
//! named cables that do not plug into their ends (an SFP cable at an RJ-45 jack, a QSFP28
//! cable between SFP28 ports) or cannot carry their link's rate, and Thunderbolt cables too
//! short for the run they are marked for.

use super::checked::CheckedDesign;
use super::reporting::list_with_more;
use super::{Finding, Severity, codes::*};
use crate::analysis::cost::{CableChoice, FastMap, LinkCables};
use crate::analysis::twisted_pair::named_cable_misfit;
use crate::model::catalog::CableMedium;
use crate::model::{
    Catalog, DeviceId, DeviceKind, LengthClass, Link, LinkId, LinkTech, PartCategory, PartId,
};

/// Metres a cable must reach to join two racks: a neighbour's top of rack is a few metres
/// away (the catalog's 400G DACs, for in-rack runs, reach 3 m).
const CROSS_RACK_M: f64 = 3.0;
use std::collections::{BTreeMap, BTreeSet};

#[derive(Default)]
struct Missing {
    devices: Vec<DeviceId>,
    links: Vec<LinkId>,
}

/// Unknown ids, ids of the wrong kind, and parts without a price.
pub(super) fn check_parts<'a>(checked: &CheckedDesign<'a>, out: &mut Vec<Finding>) {
    let catalog = checked.catalog;
    let mut missing: BTreeMap<PartId, Missing> = BTreeMap::new();
    let mut missing_cables: BTreeMap<PartId, Missing> = BTreeMap::new();
    let mut wrong_kind: BTreeMap<(PartId, PartCategory), Vec<DeviceId>> = BTreeMap::new();
    let mut unpriced: BTreeSet<&PartId> = BTreeSet::new();

    // `billed`: the BOM prices the part on its own (GPUs inside a node's price are not).
    let mut visit =
        |id: &'a PartId, expected: Option<PartCategory>, billed: bool, device| match checked
            .part(id)
        {
            None => {
                // A device and its NICs may name the same missing part (an imported
                // placeholder): the device is named once.
                let devices = &mut missing.entry(id.clone()).or_default().devices;
                if devices.last() != Some(&device) {
                    devices.push(device);
                }
            }
            Some(part) => {
                if let Some(expected) = expected
                    && part.category() != expected
                {
                    wrong_kind
                        .entry((id.clone(), expected))
                        .or_default()
                        .push(device);
                } else if billed && part.price.is_none() {
                    unpriced.insert(&part.id);
                }
            }
        };
    for device in &checked.design.devices {
        let mut built_in_nic: Option<&PartId> = None;
        let nics = match &device.kind {
            DeviceKind::GpuNode(n) => {
                let spec = checked.node_spec(&n.model);
                let gpus_billed = spec.is_some_and(|spec| !spec.gpus_included_in_price);
                built_in_nic = spec
                    .filter(|spec| spec.nic_included_in_price)
                    .and_then(|spec| spec.nic.as_ref());
                visit(&n.model, Some(PartCategory::Node), true, device.id);
                visit(&n.gpu, Some(PartCategory::Gpu), gpus_billed, device.id);
                &n.nics[..]
            }
            DeviceKind::NvSwitchDomain(d) => {
                visit(&d.model, Some(PartCategory::Domain), true, device.id);
                &[]
            }
            DeviceKind::Switch(s) => {
                visit(&s.model, Some(PartCategory::Switch), true, device.id);
                &[]
            }
            DeviceKind::Host(h) => {
                // A host's model may be any priced part (there is no host spec).
                if let Some(model) = &h.model {
                    visit(model, None, true, device.id);
                }
                &h.nics[..]
            }
        };
        for slot in nics {
            let billed = built_in_nic != Some(&slot.part);
            visit(&slot.part, Some(PartCategory::Nic), billed, device.id);
        }
    }

    // Derived cable ids repeat across thousands of links: look each distinct one up once.
    let mut known: FastMap<CableChoice<'_>, bool> = FastMap::default();
    let mut last_known: Option<(CableChoice<'_>, bool)> = None;
    let mut needs = LinkCables::new(catalog);
    let mut misfits: Vec<(LinkId, String, &'static str)> = Vec::new();
    let mut short: BTreeMap<PartId, (f64, Vec<LinkId>)> = BTreeMap::new();
    for link in &checked.design.links {
        let Some(need) = needs.need(link) else {
            continue;
        };
        // A passive Thunderbolt cable reaches a metre or two, not another rack.
        if matches!(link.tech, LinkTech::Thunderbolt4 | LinkTech::Thunderbolt5)
            && link.length == LengthClass::CrossRack
            && let Some(spec) = catalog.cable(&need.choice.part_id())
            && spec.max_length_m < CROSS_RACK_M
        {
            short
                .entry(need.choice.part_id())
                .or_insert((spec.max_length_m, Vec::new()))
                .1
                .push(link.id);
        }
        if let CableChoice::Named(id) = need.choice {
            match checked.part(id) {
                None => missing_cables
                    .entry(id.clone())
                    .or_default()
                    .links
                    .push(link.id),
                Some(part) if part.category() != PartCategory::Cable => {
                    missing_cables
                        .entry(id.clone())
                        .or_default()
                        .links
                        .push(link.id);
                }
                Some(part) => {
                    if part.price.is_none() {
                        unpriced.insert(&part.id);
                    }
                    if let Some(why) = named_cable_misfit(checked.design, catalog, link) {
                        misfits.push((
                            link.id,
                            why,
                            "set the link's cable to `cat6a` (or automatic) in the inspector",
                        ));
                    } else if let Some(why) = cable_rate_misfit(catalog, link) {
                        misfits.push((
                            link.id,
                            why,
                            "set the link's cable to automatic in the inspector, or name one of \
                             its rate",
                        ));
                    }
                }
            }
            continue;
        }
        let exists = match last_known {
            Some((choice, exists)) if choice == need.choice => exists,
            _ => {
                let exists = *known
                    .entry(need.choice)
                    .or_insert_with(|| catalog.get(&need.choice.part_id()).is_some());
                last_known = Some((need.choice, exists));
                exists
            }
        };
        if !exists {
            missing_cables
                .entry(need.choice.part_id())
                .or_default()
                .links
                .push(link.id);
        }
    }
    for choice in known.keys() {
        if let Some(part) = catalog.get(&choice.part_id())
            && part.price.is_none()
        {
            unpriced.insert(&part.id);
        }
    }

    for (id, users) in missing {
        out.push(Finding {
            severity: Severity::Error,
            code: UNKNOWN_PART,
            message: format!(
                "part `{id}` is not in the catalog (used by {}); its cost, power and specs are unknown{}",
                checked.names(&users.devices),
                imported_note(checked.design)
            ),
            devices: users.devices,
            links: users.links,
            suggestion: String::new(),
        });
    }
    for (id, users) in missing_cables {
        let what = match checked.catalog.get(&id) {
            Some(part) => format!(
                "`{id}` is a {}, not a cable or optic",
                part.category().label()
            ),
            None => format!("no cable or optic `{id}` in the catalog"),
        };
        out.push(Finding {
            severity: Severity::Warning,
            code: UNKNOWN_PART,
            message: format!(
                "{what} for {} link(s) ({}); the bill of materials leaves their cabling out",
                users.links.len(),
                list_with_more(
                    users.links.iter().map(ToString::to_string),
                    users.links.len()
                )
            ),
            devices: vec![],
            links: users.links,
            suggestion: String::new(),
        });
    }
    for (id, (reach_m, links)) in short {
        out.push(Finding {
            severity: Severity::Warning,
            code: CABLE_TOO_SHORT,
            message: format!(
                "{} marked across racks on `{id}`, which reaches {} m ({})",
                crate::model::units::count_of(links.len(), "Thunderbolt link", "Thunderbolt links"),
                crate::model::units::trim_number(reach_m),
                list_with_more(links.iter().map(ToString::to_string), links.len())
            ),
            devices: vec![],
            links,
            suggestion: "keep the machines side by side, or budget an active optical \
                         Thunderbolt cable, which the catalog does not price"
                .into(),
        });
    }
    for (link, why, fix) in misfits {
        out.push(Finding {
            severity: Severity::Warning,
            code: CONNECTOR_MISMATCH,
            message: format!("link {link}: {why}"),
            devices: vec![],
            links: vec![link],
            suggestion: fix.into(),
        });
    }
    for ((id, expected), devices) in wrong_kind {
        let actual = checked
            .catalog
            .get(&id)
            .map_or("unknown part", |p| p.category().label());
        out.push(Finding {
            severity: Severity::Error,
            code: WRONG_PART_KIND,
            message: format!(
                "`{id}` is a {actual} part but is used as a {} part by {}",
                expected.label(),
                checked.names(&devices)
            ),
            devices,
            links: vec![],
            suggestion: String::new(),
        });
    }
    for id in unpriced {
        out.push(Finding {
            severity: Severity::Info,
            code: UNPRICED_PART,
            message: format!("part `{id}` has no price in the catalog; the cost counts it at $0"),
            devices: vec![],
            links: vec![],
            suggestion: String::new(),
        });
    }
}

/// Where an imported design's placeholders came from, and what to do about them; nothing
/// for a design drawn in railyard.
fn imported_note(design: &crate::model::Design) -> String {
    match &design.imported_from {
        Some(file) => format!(
            "; a placeholder imported from {file}: choose its part in the inspector or add it to your catalog"
        ),
        None => String::new(),
    }
}

/// Why a DAC, AOC or optic named on `link` does not fit its rate: slower than the link, so
/// it cannot carry it, or made for four lanes or more of the link's (a QSFP28 100G DAC on
/// 25G SFP28 ports), whose plug the link's cages do not take. Splitters (`dac-100g-4x25g`)
/// are made for exactly that and pass; so does a part the catalog does not know.
fn cable_rate_misfit(catalog: &Catalog, link: &Link) -> Option<String> {
    let named = link.cable.as_ref()?;
    let spec = catalog.cable(named)?;
    if !matches!(
        spec.medium,
        CableMedium::Dac | CableMedium::Aoc | CableMedium::Transceiver
    ) || is_splitter(named)
    {
        return None;
    }
    let (cable, lane) = (spec.speed_gbit_s.gbit_s(), link.rate_gbit_s.gbit_s());
    let text = crate::model::units::trim_number;
    if cable < lane * (1.0 - 1e-9) {
        Some(format!(
            "`{named}` is made for {} Gb/s and the link runs {} Gb/s: it cannot carry it",
            text(cable),
            text(lane)
        ))
    } else if cable >= 4.0 * lane {
        Some(format!(
            "`{named}` is made for {} Gb/s ports (a multi-lane plug) and the link runs {} Gb/s: \
             its ports take a {} Gb/s cable, or a breakout cable from a {} Gb/s port",
            text(cable),
            text(lane),
            text(lane),
            text(cable)
        ))
    } else {
        None
    }
}

/// A splitter DAC's id, `dac-<cage>g-<legs>x<lane>g`.
fn is_splitter(id: &PartId) -> bool {
    id.as_str()
        .split('-')
        .any(|part| part.ends_with('g') && part.contains('x'))
}
