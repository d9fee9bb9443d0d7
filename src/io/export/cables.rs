//! The cable plan (cut sheet) as CSV: one row per cable with both ends, what it carries,
//! the part the bill of materials counts for it, a length class and a printable label. A
//! link on derived optics has no cable part: its `part_model` says the fibre is not billed.
//! Optics the bill derives are per end (`a_transceiver`, `b_transceiver`): an end on a
//! twin-port or broken-out cage names the cage's module, which it shares with the cage's
//! other cables. Twisted pair into an SFP+ cage names the RJ-45 module there. A DAC that is
//! a splitter's leg names the splitter, with no quantity: its cage's legs share one.
//! RFC 4180 quoting by the `csv` crate, so names with commas or quotes open in a spreadsheet.

use super::ExportError;
use super::cabling::{Cable, cable_part, cables};
use crate::analysis::cost::CableChoice;
use crate::analysis::optic_cages::{OPTIC, end_transceiver};
use crate::analysis::twisted_pair::{RJ45_MODULE, twisted_pair};
use crate::model::catalog::CableMedium;
use crate::model::{Catalog, Design, LinkState};

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

/// Writes the cable plan; returns the number of cables (rows below the header).
pub fn write_cable_plan<W: std::io::Write>(
    design: &Design,
    catalog: &Catalog,
    out: W,
) -> Result<usize, ExportError> {
    let cables = cables(design)?;
    let mut writer = csv::Writer::from_writer(out);
    writer.write_record(HEADER)?;
    for cable in &cables {
        writer.write_record(row(design, cable, catalog))?;
    }
    writer.flush().map_err(csv::Error::from)?;
    Ok(cables.len())
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
