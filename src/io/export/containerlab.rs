//! The design as a containerlab topology (`.clab.yml`), to stand the fabric up as
//! containers: switches as Nokia SR Linux (`nokia_srlinux`, whose image is public), GPU
//! nodes and hosts as `linux` containers (`alpine:latest`), one veth link per cable.
//!
//! Interface names come from the design's port numbers: SR Linux's `e1-N` is design port
//! N − 1; a Linux node's `ethN` is design port N − 1 too, as containerlab keeps `eth0` for
//! management. NVLink, NVLink bridges, PCIe and NVSwitch domains are not Ethernet and are
//! left out; InfiniBand and Thunderbolt links become Ethernet links (containerlab has no
//! InfiniBand; Thunderbolt networking carries IP). Containerlab links have no rate field, so
//! each link's technology and rate are in a comment above it.

use super::ExportError;
use super::cabling::{cables, link_label};
use crate::model::ports::v1_number;
use crate::model::{Catalog, Design, Device, DeviceId, DeviceKind, Port};
use std::collections::{HashMap, HashSet};
use std::fmt::Write as _;

/// The kind and image switches get, and those servers get.
pub const SWITCH_KIND: &str = "nokia_srlinux";
pub const SWITCH_IMAGE: &str = "ghcr.io/nokia/srlinux:latest";
pub const SERVER_KIND: &str = "linux";
pub const SERVER_IMAGE: &str = "alpine:latest";

/// A name containerlab accepts (it becomes part of a container name): letters, digits,
/// `-`, `_` and `.`, starting with a letter or digit; anything else becomes `-`.
pub fn sanitize_name(name: &str) -> String {
    let mapped: String = name
        .chars()
        .map(|c| {
            if c.is_ascii_alphanumeric() || matches!(c, '-' | '_' | '.') {
                c
            } else {
                '-'
            }
        })
        .collect();
    // One `-` for each run of replaced characters: `4 × RTX` is `4-RTX`, not `4---RTX`.
    let mut collapsed = String::with_capacity(mapped.len());
    for c in mapped.chars() {
        if !(c == '-' && collapsed.ends_with('-')) {
            collapsed.push(c);
        }
    }
    let trimmed = collapsed.trim_start_matches(|c: char| !c.is_ascii_alphanumeric());
    let trimmed = trimmed.trim_end_matches('-');
    if trimmed.is_empty() {
        "node".to_string()
    } else {
        trimmed.to_string()
    }
}

/// Each exported device's node name: sanitized, and made unique with `-2`, `-3`...
fn node_names(devices: &[&Device]) -> HashMap<DeviceId, String> {
    let mut taken: HashSet<String> = HashSet::new();
    let mut names = HashMap::new();
    for d in devices {
        let base = sanitize_name(&d.name);
        let mut name = base.clone();
        let mut k = 2;
        while !taken.insert(name.clone()) {
            name = format!("{base}-{k}");
            k += 1;
        }
        names.insert(d.id, name);
    }
    names
}

/// The interface name of design port `port` on a device of this kind.
pub fn interface_name(kind: &DeviceKind, port: u32) -> String {
    let n = u64::from(port) + 1;
    match kind {
        DeviceKind::Switch(_) => format!("e1-{n}"),
        _ => format!("eth{n}"),
    }
}

/// A YAML double-quoted string.
fn yaml_quote(text: &str) -> String {
    let mut out = String::from("\"");
    for c in text.chars() {
        match c {
            '"' => out.push_str("\\\""),
            '\\' => out.push_str("\\\\"),
            c if c.is_control() => {
                let _ = write!(out, "\\u{:04x}", u32::from(c));
            }
            c => out.push(c),
        }
    }
    out.push('"');
    out
}

/// Text safe inside a one-line YAML comment.
fn comment_text(text: &str) -> String {
    text.chars()
        .map(|c| if c.is_control() { ' ' } else { c })
        .collect()
}

pub fn design_to_containerlab(design: &Design, catalog: &Catalog) -> Result<String, ExportError> {
    let cables = cables(design)?;
    let devices: Vec<&Device> = design
        .devices
        .iter()
        .filter(|d| !matches!(d.kind, DeviceKind::NvSwitchDomain(_)))
        .collect();
    let names = node_names(&devices);
    let mut out = String::new();
    // Writing to a String cannot fail; the results are ignored for that reason.
    let _ = writeln!(
        out,
        "# containerlab topology of \"{}\", written by railyard.",
        comment_text(&design.name)
    );
    for line in [
        "# Switches are Nokia SR Linux (kind nokia_srlinux; interface e1-N is design port N-1);",
        "# GPU nodes and hosts are linux containers (interface ethN is design port N-1: eth0 is",
        "# containerlab's management interface). NVLink, NVLink bridges, PCIe and NVSwitch",
        "# domains are not Ethernet and are left out; InfiniBand and Thunderbolt links are",
        "# emulated as Ethernet. Containerlab links have no rate: each link's technology and rate",
        "# are in the comment above it.",
    ] {
        let _ = writeln!(out, "{line}");
    }
    let _ = writeln!(out, "name: {}", yaml_quote(&sanitize_name(&design.name)));
    let _ = writeln!(out, "topology:");
    let _ = writeln!(out, "  kinds:");
    let _ = writeln!(out, "    {SWITCH_KIND}:");
    let _ = writeln!(out, "      image: {}", yaml_quote(SWITCH_IMAGE));
    let _ = writeln!(out, "    {SERVER_KIND}:");
    let _ = writeln!(out, "      image: {}", yaml_quote(SERVER_IMAGE));
    let _ = writeln!(out, "  nodes:");
    for d in &devices {
        let kind = match d.kind {
            DeviceKind::Switch(_) => SWITCH_KIND,
            _ => SERVER_KIND,
        };
        let name = names.get(&d.id).map_or("", String::as_str);
        let _ = writeln!(out, "    {}:", yaml_quote(name));
        let _ = writeln!(out, "      kind: {kind}");
        let _ = writeln!(out, "      labels:");
        let _ = writeln!(
            out,
            "        railyard-id: {}",
            yaml_quote(&d.id.to_string())
        );
        let _ = writeln!(out, "        railyard-name: {}", yaml_quote(&d.name));
        let _ = writeln!(out, "        railyard-role: {}", yaml_quote(d.kind.label()));
    }
    // Both ends must be nodes of the lab: a network link drawn to an NVSwitch domain (which
    // `railyard eval` reports) has no container to land on.
    let ethernet: Vec<_> = cables
        .iter()
        .filter(|c| c.link.tech.is_network() || c.link.tech.is_thunderbolt())
        .filter(|c| names.contains_key(&c.a.device.id) && names.contains_key(&c.b.device.id))
        .collect();
    if ethernet.is_empty() {
        let _ = writeln!(out, "  links: []");
        return Ok(out);
    }
    let _ = writeln!(out, "  links:");
    for c in ethernet {
        let endpoint = |device: &Device, port: Port| {
            let node = names.get(&device.id).map_or("", String::as_str);
            // containerlab counts a device's interfaces as one list.
            let number = v1_number(catalog, device, port);
            yaml_quote(&format!("{node}:{}", interface_name(&device.kind, number)))
        };
        let _ = writeln!(
            out,
            "    # {}: {} ({})",
            c.link.id,
            comment_text(&link_label(c.link)),
            comment_text(&c.label())
        );
        let _ = writeln!(
            out,
            "    - endpoints: [{}, {}]",
            endpoint(c.a.device, c.a.port),
            endpoint(c.b.device, c.b.port)
        );
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_are_sanitized() {
        assert_eq!(sanitize_name("leaf 3 (rail 0)"), "leaf-3-rail-0");
        assert_eq!(sanitize_name("--x"), "x");
        assert_eq!(sanitize_name("ü"), "node");
        assert_eq!(sanitize_name("node-01"), "node-01");
    }

    #[test]
    fn yaml_quotes_escape() {
        assert_eq!(yaml_quote("a\"b\\c"), r#""a\"b\\c""#);
        assert_eq!(yaml_quote("x\ny"), r#""x\u000ay""#);
    }
}
