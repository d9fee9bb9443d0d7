//! Building test designs: link ends named from the port numbers tests were written with.

use railyard::model::ports::port_from_v1_number;
use railyard::model::{Catalog, Design, DeviceId, Endpoint, LinkTech, Port};
use std::sync::OnceLock;

/// The end at port `number` of `device` as version-1 files numbered a device's ports (a
/// node's NICs, then its built-in ports; a switch's ports), named with the built-in catalog
/// as loading such a file does. A device not in the design keeps the number as a NIC slot.
pub fn v1_end(design: &Design, (device, number): (DeviceId, u32), tech: LinkTech) -> Endpoint {
    static CATALOG: OnceLock<Catalog> = OnceLock::new();
    let catalog = CATALOG.get_or_init(Catalog::builtin);
    let port = design.device(device).map_or(Port::Nic(number), |d| {
        port_from_v1_number(catalog, d, number, tech)
    });
    Endpoint::new(device, port)
}
