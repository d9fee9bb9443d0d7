//! The history of the design file format: one step per version, each rewriting an older
//! file's design into the next layout. `design_file.rs` runs them in order on load.

use super::design_file::{Migration, ron_options};
use super::ron_tree::{self, Document, Tree};
use crate::model::ports::port_from_v1_number;
use crate::model::{Catalog, Device, LinkTech, Port};
use std::collections::HashMap;

/// Every step, oldest first; the last one reaches `CURRENT_VERSION`.
pub const MIGRATIONS: &[Migration] = &[Migration {
    from: 1,
    migrate: name_ports,
}];

/// Version 2 names a link end's port by kind and index (`Nic(3)`, `Thunderbolt(0)`,
/// `Switch(12)`, `NvLink`) where version 1 gave its place in the device's list of ports,
/// so that adding a NIC no longer moved the links on the built-in ports after it. The
/// place is read as version 1 read it, with the built-in catalog for how many Thunderbolt
/// ports a model has; for a model only a user catalog knows, the link's technology decides
/// between Thunderbolt and on-board Ethernet.
fn name_ports(design: &mut Tree) -> Result<(), String> {
    let devices: Vec<Device> = match design.field("devices") {
        Some(tree) => {
            let text = ron_tree::print(&Document {
                attributes: Vec::new(),
                value: tree.clone(),
            });
            ron_options().from_str(&text).map_err(|e| {
                format!(
                    "reading its devices: {}",
                    super::plain_error::plain(&e.code)
                )
            })?
        }
        None => Vec::new(),
    };
    let by_id: HashMap<u32, &Device> = devices.iter().map(|d| (d.id.0, d)).collect();
    let catalog = Catalog::builtin();
    let Some(links) = design.field_mut("links").and_then(Tree::items_mut) else {
        return Ok(());
    };
    for (i, link) in links.iter_mut().enumerate() {
        let tech: LinkTech = match link.field("tech") {
            Some(Tree::Ident(name)) => ron::from_str(name)
                .map_err(|_| format!("link {i} has an unknown technology `{name}`"))?,
            _ => return Err(format!("link {i} has no technology")),
        };
        for side in ["a", "b"] {
            let end = link
                .field_mut(side)
                .ok_or_else(|| format!("link {i} has no end `{side}`"))?;
            let number = |field: &str| match end.field(field) {
                Some(Tree::Number(n)) => n
                    .parse::<u32>()
                    .map_err(|_| format!("link {i} end {side}: `{field}` is not a whole number")),
                _ => Err(format!("link {i} end {side} has no `{field}`")),
            };
            let (device, port) = (number("device")?, number("port")?);
            let named = match by_id.get(&device) {
                Some(d) => port_from_v1_number(&catalog, d, port, tech),
                // A link to a device that is not there loads, and the checks report it.
                None => Port::Nic(port),
            };
            end.set_field("port", port_tree(named));
        }
    }
    Ok(())
}

fn port_tree(port: Port) -> Tree {
    let indexed =
        |name: &str, k: u32| Tree::Tuple(Some(name.to_string()), vec![Tree::Number(k.to_string())]);
    match port {
        Port::Nic(k) => indexed("Nic", k),
        Port::Thunderbolt(k) => indexed("Thunderbolt", k),
        Port::Ethernet(k) => indexed("Ethernet", k),
        Port::Switch(k) => indexed("Switch", k),
        Port::Slot(k) => indexed("Slot", k),
        Port::Gpu(k) => indexed("Gpu", k),
        Port::NvLink => Tree::Ident("NvLink".to_string()),
    }
}

/// Where a version-1 file goes wrong, with its line and column: the migration works on an
/// untyped tree that has no positions, so an old file with a wrong field would otherwise be
/// refused without saying where. None when the file reads as version 1.
pub(super) fn locate_v1_error(text: &str) -> Option<ron::error::SpannedError> {
    ron_options().from_str::<v1::File>(text).err()
}

/// Version 1's layout, typed: the current one but for a port, which was a number.
mod v1 {
    use crate::model::{
        Bandwidth, Calibration, Device, Group, LengthClass, LinkId, LinkState, LinkTech, PartId,
        Transport,
    };
    use serde::Deserialize;

    #[derive(Deserialize)]
    #[serde(deny_unknown_fields)]
    #[allow(dead_code)] // Read only for the errors it gives.
    pub struct File {
        version: u32,
        design: Design,
    }

    #[derive(Deserialize)]
    #[serde(deny_unknown_fields)]
    #[allow(dead_code)]
    struct Design {
        name: String,
        #[serde(default)]
        notes: String,
        #[serde(default)]
        groups: Vec<Group>,
        #[serde(default)]
        devices: Vec<Device>,
        #[serde(default)]
        links: Vec<Link>,
        #[serde(default)]
        calibration: Option<Calibration>,
        #[serde(default)]
        sharp_enabled: bool,
    }

    #[derive(Deserialize)]
    #[serde(deny_unknown_fields)]
    #[allow(dead_code)]
    struct Link {
        id: LinkId,
        a: End,
        b: End,
        tech: LinkTech,
        rate_gbit_s: Bandwidth,
        #[serde(default)]
        lanes: u32,
        #[serde(default)]
        transport: Transport,
        #[serde(default)]
        length: LengthClass,
        #[serde(default)]
        state: LinkState,
        #[serde(default)]
        cable: Option<PartId>,
    }

    #[derive(Deserialize)]
    #[serde(deny_unknown_fields)]
    #[allow(dead_code)]
    struct End {
        device: u32,
        port: u32,
    }
}
