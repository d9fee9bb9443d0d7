//! Observed cables onto the design's ports, by name: a switch described `MF0;leaf-r0:...`
//! is the device `leaf-r0` and its physical port N is `Switch(N-1)` (railyard counts switch
//! ports from 0, after breakout); an HCA described `node-01 mlx5_3` is NIC 3 of `node-01`.
//! A mapping file renames what the fabric calls things (`io::ib_names`).

use super::observed::{MappedName, NameMap, ObservedCable, ObservedEnd};
use crate::model::{Bandwidth, Design, DeviceKind, Endpoint, Port};
use std::collections::HashMap;

/// One end of a cable as built: a port of the design, or something the design does not have.
#[derive(Debug, Clone, PartialEq)]
pub enum BuiltEnd {
    Known(Endpoint),
    /// What the fabric calls it, for the report: `"ufm-01 mlx5_0" port 1`.
    Unknown(String),
}

/// A cable as built, its ends resolved where the design has them.
#[derive(Debug, Clone, PartialEq)]
pub struct BuiltCable {
    pub a: BuiltEnd,
    pub b: BuiltEnd,
    pub rate: Option<Bandwidth>,
    /// The line of the listing it came from.
    pub line: usize,
}

/// Each observed cable with its ends found in the design.
pub fn resolve(design: &Design, observed: &[ObservedCable], map: &NameMap) -> Vec<BuiltCable> {
    let by_name: HashMap<&str, &crate::model::Device> = design
        .devices
        .iter()
        .map(|d| (d.name.as_str(), d))
        .collect();
    let end = |e: &ObservedEnd| resolve_end(&by_name, e, map);
    observed
        .iter()
        .map(|c| BuiltCable {
            a: end(&c.a),
            b: end(&c.b),
            rate: c.rate,
            line: c.line,
        })
        .collect()
}

/// `node-01 mlx5_3` → (`node-01`, Some(3)); `MF0;leaf-r0:QM9700/U1` → (`leaf-r0`, None).
pub fn split_description(description: &str) -> (&str, Option<u32>) {
    let d = description.trim();
    if let Some((host, hca)) = d.rsplit_once(char::is_whitespace)
        && let Some((_, k)) = hca.rsplit_once('_')
        && let Ok(k) = k.parse()
    {
        return (host.trim_end(), Some(k));
    }
    // Mellanox switches describe themselves as `MF0;<name>:<model>/U1`.
    let d = d.split_once(';').map_or(d, |(_, rest)| rest);
    let d = d.split_once(':').map_or(d, |(name, _)| name);
    (d, None)
}

fn resolve_end(
    by_name: &HashMap<&str, &crate::model::Device>,
    e: &ObservedEnd,
    map: &NameMap,
) -> BuiltEnd {
    let (host, hca) = split_description(&e.description);
    let mapped = map
        .by_guid
        .get(&e.guid)
        .or_else(|| map.by_name.get(e.description.trim()))
        .or_else(|| map.by_name.get(host))
        .cloned()
        .unwrap_or(MappedName {
            device: host.to_string(),
            nic_offset: 0,
        });
    let unknown = || {
        let who = if e.description.is_empty() {
            format!("GUID 0x{}", e.guid)
        } else {
            format!("\"{}\"", e.description)
        };
        BuiltEnd::Unknown(format!("{who} port {}", e.port))
    };
    let Some(device) = by_name.get(mapped.device.as_str()) else {
        return unknown();
    };
    let port = match &device.kind {
        DeviceKind::Switch(_) => e.port.checked_sub(1).map(Port::Switch),
        DeviceKind::GpuNode(_) | DeviceKind::Host(_) => {
            // A multi-port HCA's port p (from 1) is the NIC after its first.
            let nic = i64::from(hca.unwrap_or(0)) + mapped.nic_offset + i64::from(e.port) - 1;
            u32::try_from(nic).ok().map(Port::Nic)
        }
        DeviceKind::NvSwitchDomain(_) => None,
    };
    match port {
        Some(port) => BuiltEnd::Known(Endpoint::new(device.id, port)),
        None => unknown(),
    }
}

#[cfg(test)]
mod tests {
    use super::split_description;

    #[test]
    fn descriptions_split_into_host_and_hca() {
        assert_eq!(split_description("node-01 mlx5_3"), ("node-01", Some(3)));
        assert_eq!(
            split_description("MF0;leaf-r0:QM9700/U1"),
            ("leaf-r0", None)
        );
        assert_eq!(split_description("spine-01"), ("spine-01", None));
    }
}
