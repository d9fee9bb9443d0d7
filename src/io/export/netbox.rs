//! NetBox bulk-import CSVs: a folder with `devices.csv`, `interfaces.csv` and `cables.csv`,
//! to import in that order (Devices, Interfaces, Cables > Import). Column names are
//! NetBox's own import fields (dcim/forms/bulk_import.py: DeviceImportForm,
//! InterfaceImportForm, CableImportForm). Everything is `planned`: it is a design.
//!
//! What NetBox must already hold: the site (named as the design), the device roles (the
//! kind labels: `GPU node`, `leaf`, ...), the manufacturers and device types (the catalog's
//! vendor and model). Interfaces are listed because the device types' templates will not
//! have our port names; their type is `other` since a port's form factor (OSFP, QSFP...)
//! is not in the design. Cable lengths are left empty: the design has none.

use super::ExportError;
use super::cabling::{Cable, cable_part, cables, link_label, netbox_cable_type};
use crate::io::link_colors::tech_color;
use crate::model::{Catalog, Design};
use std::path::Path;

/// The three tables, as CSV bytes.
pub struct NetboxTables {
    pub devices: Vec<u8>,
    pub interfaces: Vec<u8>,
    pub cables: Vec<u8>,
    pub device_count: usize,
    pub cable_count: usize,
}

/// The file names inside the folder, in import order.
pub const FILES: [&str; 3] = ["devices.csv", "interfaces.csv", "cables.csv"];

pub fn netbox_tables(design: &Design, catalog: &Catalog) -> Result<NetboxTables, ExportError> {
    let cables = cables(design)?;
    Ok(NetboxTables {
        devices: devices_csv(design, catalog)?,
        interfaces: interfaces_csv(&cables)?,
        cables: cables_csv(design, &cables, catalog)?,
        device_count: design.devices.len(),
        cable_count: cables.len(),
    })
}

/// Writes the folder `dir` (made if missing) with the three files.
pub fn write_netbox_folder(
    design: &Design,
    catalog: &Catalog,
    dir: &Path,
) -> Result<NetboxTables, ExportError> {
    let tables = netbox_tables(design, catalog)?;
    let io = |path: &Path| {
        let path = path.to_path_buf();
        move |error| ExportError::Io { path, error }
    };
    std::fs::create_dir_all(dir).map_err(io(dir))?;
    for (name, bytes) in FILES
        .iter()
        .zip([&tables.devices, &tables.interfaces, &tables.cables])
    {
        let path = dir.join(name);
        crate::io::design_file::write_atomically(&path, bytes).map_err(io(&path))?;
    }
    Ok(tables)
}

fn csv_table<const N: usize>(
    header: [&str; N],
    rows: impl Iterator<Item = [String; N]>,
) -> Result<Vec<u8>, ExportError> {
    let mut writer = csv::Writer::from_writer(Vec::new());
    writer.write_record(header)?;
    for row in rows {
        writer.write_record(row)?;
    }
    writer
        .into_inner()
        .map_err(|e| ExportError::Csv(csv::Error::from(e.into_error())))
}

fn devices_csv(design: &Design, catalog: &Catalog) -> Result<Vec<u8>, ExportError> {
    let rows = design.devices.iter().map(|d| {
        let part = d.kind.model_part();
        // A part the catalog lacks keeps its id as the device type and no manufacturer:
        // NetBox then says which type is missing rather than importing a made-up one.
        let (manufacturer, device_type) = match part.and_then(|id| catalog.get(id)) {
            Some(p) => (p.vendor.clone(), p.model.clone()),
            None => (
                String::new(),
                part.map(|id| id.as_str().to_string()).unwrap_or_default(),
            ),
        };
        [
            d.name.clone(),
            d.kind.label().to_string(),
            manufacturer,
            device_type,
            "planned".to_string(),
            design.name.clone(),
        ]
    });
    csv_table(
        [
            "name",
            "role",
            "manufacturer",
            "device_type",
            "status",
            "site",
        ],
        rows,
    )
}

fn interfaces_csv(cables: &[Cable<'_>]) -> Result<Vec<u8>, ExportError> {
    let rows = cables.iter().flat_map(|c| {
        // NetBox's interface speed is in kb/s.
        let speed_kbit_s = (c.link.nominal_capacity().gbit_s() * 1e6).round();
        let speed = if speed_kbit_s.is_finite() && speed_kbit_s > 0.0 {
            format!("{speed_kbit_s:.0}")
        } else {
            String::new()
        };
        [&c.a, &c.b].map(|end| {
            [
                end.device.name.clone(),
                end.port_name.clone(),
                "other".to_string(),
                speed.clone(),
                link_label(c.link),
            ]
        })
    });
    csv_table(["device", "name", "type", "speed", "description"], rows)
}

fn cables_csv(
    design: &Design,
    cables: &[Cable<'_>],
    catalog: &Catalog,
) -> Result<Vec<u8>, ExportError> {
    let rows = cables.iter().map(|c| {
        let kind = cable_part(design, c.link, catalog)
            .map(|(choice, _)| netbox_cable_type(choice, catalog))
            .unwrap_or_default();
        // NetBox colours are six hex digits without `#`: the canvas colour of the technology.
        let color = tech_color(c.link.tech)
            .hex()
            .trim_start_matches('#')
            .to_string();
        [
            c.a.device.name.clone(),
            "dcim.interface".to_string(),
            c.a.port_name.clone(),
            c.b.device.name.clone(),
            "dcim.interface".to_string(),
            c.b.port_name.clone(),
            kind.to_string(),
            "planned".to_string(),
            c.label(),
            color,
            String::new(),
            String::new(),
        ]
    });
    csv_table(
        [
            "side_a_device",
            "side_a_type",
            "side_a_name",
            "side_b_device",
            "side_b_type",
            "side_b_name",
            "type",
            "status",
            "label",
            "color",
            "length",
            "length_unit",
        ],
        rows,
    )
}
