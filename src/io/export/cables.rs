//! The cable plan (cut sheet) as CSV: one row per cable with both ends, what it carries,
//! the part the bill of materials counts for it, a length class and a printable label. A
//! link on derived optics has no cable part: its `part_model` says the fibre is not billed.
//! Optics the bill derives are per end (`a_transceiver`, `b_transceiver`): an end on a
//! twin-port or broken-out cage names the cage's module, which it shares with the cage's
//! other cables. Twisted pair into an SFP+ cage names the RJ-45 module there. A DAC that is
//! a splitter's leg names the splitter, which the leg that opens it counts and the others
//! share ("shares the splitter of l0"), one for every so many legs at a device. A cable
//! on a twin-port DAC counts the DAC on the cable that opens it and 0 on the one that shares
//! it ("shares the DAC of l0"), so the column adds up to the bill of materials.
//! RFC 4180 quoting by the `csv` crate, so names with commas or quotes open in a spreadsheet.

use super::ExportError;
use super::cabling::{Cable, TwinPort, cable_part, cables, splitter_leg_of, twin_port_of};
use crate::analysis::cost::CableChoice;
use crate::analysis::optic_cages::{OPTIC, end_transceiver};
use crate::analysis::twisted_pair::{RJ45_MODULE, twisted_pair};
use crate::model::catalog::CableMedium;
use crate::model::{Catalog, Design, DeviceId, LinkId, LinkState, PartId};
use std::collections::HashMap;

/// `part_model` of a link whose optics the bill derives: the fibre between them.
pub const FIBRE: &str = "fibre patch cord between the optics (not in the bill)";

pub const HEADER: [&str; 19] = [
    "cable",
    "label",
    "a_device",
    "a_port",
    "a_rack",
    "b_device",
    "b_port",
    "b_rack",
    "technology",
    "rate_gbit_s",
    "lanes",
    "total_gbit_s",
    "part",
    "part_model",
    "part_quantity",
    "length_class",
    "state",
    "a_transceiver",
    "b_transceiver",
];

/// Where `part`, then `part_model` and `part_quantity`, sit in `HEADER`.
const PART: usize = 12;

/// Writes the cable plan; returns the number of cables (rows below the header).
pub fn write_cable_plan<W: std::io::Write>(
    design: &Design,
    catalog: &Catalog,
    out: W,
) -> Result<usize, ExportError> {
    let cables = cables(design)?;
    let shares = twin_shares(design, catalog, &cables);
    let legs = splitter_legs(design, catalog, &cables);
    let mut writer = csv::Writer::from_writer(out);
    writer.write_record(HEADER)?;
    for cable in &cables {
        let mut record = row(design, cable, catalog);
        if let Some(share) = shares.get(&cable.link.id) {
            share.write_into(&mut record, catalog);
        }
        if let Some(&(splitters, opener)) = legs.get(&cable.link.id) {
            record[PART + 2] = splitters.to_string();
            if let Some(first) = opener {
                record[PART + 1] += &format!(", shares the splitter of {first}");
            }
        }
        writer.write_record(record)?;
    }
    writer.flush().map_err(csv::Error::from)?;
    Ok(cables.len())
}

/// A cable on a twin-port DAC (a DGX H100's twin cage to a QM9700's: `dac-800g`, 2 × 400G),
/// billed as the bill of materials bills it: one DAC for every `ways` cables between the same
/// two devices, the cable that opens it counting it and the next sharing it; a cable left
/// over (an odd count) gets a DAC of its own rate.
struct TwinShare {
    port: TwinPort,
    /// Twin DACs this cable opens (0 for one that shares a DAC opened before it).
    twins: u64,
    /// Lanes left over, on DACs of their own.
    singles: u64,
    /// The cable whose DAC this one shares.
    shares_with: Option<LinkId>,
}

impl TwinShare {
    fn write_into(&self, record: &mut [String; 19], catalog: &Catalog) {
        let model = |choice: CableChoice<'_>| {
            catalog
                .get(&choice.part_id())
                .map(|p| format!("{} {}", p.vendor, p.model))
                .unwrap_or_default()
        };
        let TwinPort { twin, single, ways } = self.port;
        let (part, model, quantity) = if self.twins == 0 && self.singles > 0 {
            (single, model(single), self.singles)
        } else {
            let mut note = match self.shares_with {
                Some(first) => format!(" (shares the DAC of {first})"),
                None => format!(" ({ways} cables per DAC)"),
            };
            // A cable of several lanes can fill twins and leave a lane over: both said.
            if self.singles > 0 {
                note += &format!(", and {} × {} of its own", self.singles, single.part_id());
            }
            (twin, model(twin) + &note, self.twins)
        };
        record[PART] = part.part_id().as_str().to_string();
        record[PART + 1] = model;
        record[PART + 2] = quantity.to_string();
    }
}

/// The twin-DAC share of every cable on one, in the plan's order.
fn twin_shares(
    design: &Design,
    catalog: &Catalog,
    cables: &[Cable<'_>],
) -> HashMap<LinkId, TwinShare> {
    // Twins of one part between the same two devices pair up, as the bill pairs them.
    type Key = (DeviceId, DeviceId, PartId);
    let on: Vec<_> = cables
        .iter()
        .filter_map(|c| {
            let port = twin_port_of(design, c.link, catalog)?;
            let (a, b) = (c.link.a.device, c.link.b.device);
            let key: Key = (a.min(b), a.max(b), port.twin.part_id());
            Some((c.link, key, port))
        })
        .collect();
    let mut total: HashMap<Key, u64> = HashMap::new();
    for (link, key, _) in &on {
        *total.entry(key.clone()).or_default() += u64::from(link.lanes);
    }
    let mut seen: HashMap<Key, (u64, Option<LinkId>)> = HashMap::new();
    let mut shares = HashMap::new();
    for (link, key, port) in on {
        let w = u64::from(port.ways);
        let limit = total[&key] / w * w;
        let (start, opener) = seen.get(&key).copied().unwrap_or((0, None));
        let end = start + u64::from(link.lanes);
        // A DAC counts on the cable that opens it.
        let twins = end.min(limit).div_ceil(w) - start.min(limit).div_ceil(w);
        let singles = end.saturating_sub(start.max(limit));
        let shares_with = (start < limit && start % w != 0)
            .then_some(opener)
            .flatten();
        let opener = if start < limit && start % w == 0 {
            Some(link.id)
        } else {
            opener
        };
        seen.insert(key, (end, opener));
        shares.insert(
            link.id,
            TwinShare {
                port,
                twins,
                singles,
                shares_with,
            },
        );
    }
    shares
}

/// The splitters a splitter's legs count, as the bill of materials counts them: one for
/// every `legs` legs at the same device's cages, on the leg that opens it, and 0 (with the
/// cable it shares with) on the others.
fn splitter_legs(
    design: &Design,
    catalog: &Catalog,
    cables: &[Cable<'_>],
) -> HashMap<LinkId, (u64, Option<LinkId>)> {
    let mut seen: HashMap<(DeviceId, PartId), (u64, Option<LinkId>)> = HashMap::new();
    let mut out = HashMap::new();
    for cable in cables {
        let link = cable.link;
        let Some((choice @ CableChoice::Splitter { legs, .. }, end)) =
            splitter_leg_of(design, link, catalog)
        else {
            continue;
        };
        let legs = u64::from(legs);
        let (start, opener) = seen
            .get(&(end.device, choice.part_id()))
            .copied()
            .unwrap_or((0, None));
        let end_count = start + u64::from(link.lanes);
        let splitters = end_count.div_ceil(legs) - start.div_ceil(legs);
        let shares_with = (start % legs != 0).then_some(opener).flatten();
        let opener = if start % legs == 0 {
            Some(link.id)
        } else {
            opener
        };
        seen.insert((end.device, choice.part_id()), (end_count, opener));
        out.insert(link.id, (splitters, shares_with));
    }
    out
}

fn row(design: &Design, cable: &Cable<'_>, catalog: &Catalog) -> [String; 19] {
    let link = cable.link;
    let need = cable_part(design, link, catalog);
    let (part, part_model, quantity, transceivers) = match need {
        // Derived optics are bought per end, and an end may share its cage's module.
        Some((CableChoice::Derived { prefix, gbit_s }, _)) if prefix == OPTIC => {
            let end = |e| {
                end_transceiver(design, catalog, link, e, gbit_s)
                    .as_str()
                    .to_string()
            };
            let ends = [end(link.a), end(link.b)];
            // The fibre between the two optics is no catalog part and not in the bill: said,
            // so that an empty cell does not read as a cable forgotten.
            (String::new(), FIBRE.to_string(), String::new(), ends)
        }
        // A splitter's leg: the splitter is bought once for the legs that share its cage.
        Some((choice @ CableChoice::Splitter { legs, .. }, _)) => {
            let id = choice.part_id();
            let model = catalog
                .get(&id)
                .map(|p| format!("{} {} (one leg of {legs})", p.vendor, p.model))
                .unwrap_or_default();
            (
                id.as_str().to_string(),
                model,
                String::new(),
                Default::default(),
            )
        }
        Some((choice, quantity)) => {
            let id = choice.part_id();
            // The model as the catalog names it; a part the catalog lacks keeps its id only.
            let model = catalog
                .get(&id)
                .map(|p| format!("{} {}", p.vendor, p.model))
                .unwrap_or_default();
            let transceivers = match catalog.cable(&id).map(|spec| spec.medium) {
                Some(CableMedium::Transceiver) => {
                    [id.as_str().to_string(), id.as_str().to_string()]
                }
                // Twisted pair into an SFP+ cage goes through an RJ-45 module.
                _ => match twisted_pair(design, catalog, link) {
                    Some(copper) => copper.modules.map(|m| {
                        if m {
                            RJ45_MODULE.to_string()
                        } else {
                            String::new()
                        }
                    }),
                    None => Default::default(),
                },
            };
            (
                id.as_str().to_string(),
                model,
                quantity.to_string(),
                transceivers,
            )
        }
        None => Default::default(),
    };
    let rack = |r: Option<&crate::model::Group>| r.map(|g| g.name.clone()).unwrap_or_default();
    let state = match link.state {
        LinkState::Up => "up".to_string(),
        LinkState::Degraded { fraction } => format!("degraded ({:.0} %)", fraction * 100.0),
        LinkState::Failed => "failed".to_string(),
    };
    [
        link.id.to_string(),
        cable.label(),
        cable.a.device.name.clone(),
        cable.a.port_name.clone(),
        rack(cable.a.rack),
        cable.b.device.name.clone(),
        cable.b.port_name.clone(),
        rack(cable.b.rack),
        link.tech.label().to_string(),
        link.rate_gbit_s.gbit_s().to_string(),
        link.lanes.to_string(),
        link.nominal_capacity().gbit_s().to_string(),
        part,
        part_model,
        quantity,
        cable.length_class().to_string(),
        state,
        transceivers[0].clone(),
        transceivers[1].clone(),
    ]
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_part_columns_are_where_twin_shares_write() {
        assert_eq!(
            HEADER[PART..PART + 3],
            ["part", "part_model", "part_quantity"]
        );
    }
}
