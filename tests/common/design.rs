//! Building test designs: link ends named from the port numbers tests were written with.

use railyard::io::load_design;
use railyard::model::ports::port_from_v1_number;
use railyard::model::{
    Bandwidth, Catalog, Design, Device, DeviceId, DeviceKind, Endpoint, Link, LinkTech, PartId,
    Port, Pos, Switch, SwitchFeatures, SwitchRole,
};
use std::path::{Path, PathBuf};
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

/// Every preset shipped in `presets/`, by file name, loaded.
pub fn presets() -> Vec<(String, Design)> {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("presets");
    let mut files: Vec<PathBuf> = std::fs::read_dir(&dir)
        .expect("the presets folder")
        .map(|e| e.expect("an entry").path())
        .filter(|p| p.extension().is_some_and(|e| e == "ron"))
        .collect();
    files.sort();
    assert!(files.len() >= 8, "{files:?}");
    files
        .into_iter()
        .map(|p| {
            let name = p
                .file_name()
                .expect("a name")
                .to_string_lossy()
                .into_owned();
            (name, load_design(&p).expect("a preset loads"))
        })
        .collect()
}

/// One preset by file name.
pub fn preset(name: &str) -> Design {
    presets()
        .into_iter()
        .find(|(n, _)| n == name)
        .map(|(_, d)| d)
        .expect("the preset")
}

/// A leaf switch of catalog part `model`, on `rail` if any, at the origin (its id is given
/// when it is added to a design).
pub fn switch(name: &str, model: &str, rail: Option<u32>) -> Device {
    Device {
        id: DeviceId(0),
        name: name.to_string(),
        pos: Pos::default(),
        group: None,
        kind: DeviceKind::Switch(Switch {
            model: PartId::new(model),
            role: SwitchRole::Leaf,
            breakout: 1,
            rail,
            features: SwitchFeatures::default(),
        }),
    }
}

/// A link of `tech` at `gbit_s` from port `pa` of `a` to port `pb` of `b`.
pub fn link(a: DeviceId, pa: Port, b: DeviceId, pb: Port, tech: LinkTech, gbit_s: f64) -> Link {
    Link::new(
        Endpoint::new(a, pa),
        Endpoint::new(b, pb),
        tech,
        Bandwidth::from_gbit_s(gbit_s),
    )
}
