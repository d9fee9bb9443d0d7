//! RJ-45 ports. The built-in 10 GbE of a workstation board, a Mac Studio or a DGX Spark is
//! 10GBASE-T on an RJ-45 jack: a DAC or an optic does not plug into it. A link left to the
//! bill of materials (no cable named) with an RJ-45 end is twisted pair (`cat6a`), and each
//! end that is an SFP+ cage instead (a switch's or a NIC's port) takes a 10GBASE-T SFP+
//! module (`sfp-10gbase-t`) to accept it.

use crate::model::catalog::CableMedium;
use crate::model::{Catalog, Design, DeviceKind, Endpoint, Link, LinkTech, Port};

/// The twisted-pair cable the bill of materials counts for an RJ-45 link.
pub const TWISTED_PAIR: &str = "cat6a";
/// The module that puts an RJ-45 jack in an SFP+ cage.
pub const RJ45_MODULE: &str = "sfp-10gbase-t";

/// Whether `end` is an RJ-45 jack: a node's built-in Ethernet that the catalog says is
/// 10GBASE-T.
pub fn rj45_end(design: &Design, catalog: &Catalog, end: Endpoint) -> bool {
    if !matches!(end.port, Port::Ethernet(_)) {
        return false;
    }
    design
        .device(end.device)
        .and_then(|d| match &d.kind {
            DeviceKind::GpuNode(node) => catalog.node(&node.model),
            _ => None,
        })
        .is_some_and(|spec| spec.builtin_ethernet_rj45)
}

/// How the bill of materials cables an Ethernet link with an RJ-45 end: one twisted-pair
/// cable per lane, and an RJ-45 module per lane at each end that is a cage.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct TwistedPair {
    /// Ends a and b take an RJ-45 module.
    pub modules: [bool; 2],
}

impl TwistedPair {
    /// RJ-45 modules per lane: 0, 1 or 2.
    pub fn modules_per_lane(self) -> u64 {
        self.modules.iter().filter(|&&m| m).count() as u64
    }
}

/// The twisted-pair cabling of `link`, when no cable is named on it and an end is an RJ-45
/// jack; None otherwise (the link's cable is derived from its rate and length as before).
pub fn twisted_pair(design: &Design, catalog: &Catalog, link: &Link) -> Option<TwistedPair> {
    if link.cable.is_some() || !matches!(link.tech, LinkTech::Ethernet | LinkTech::RoceV2) {
        return None;
    }
    // Most links end on NICs and switch ports: only built-in Ethernet is looked up.
    if !matches!(link.a.port, Port::Ethernet(_)) && !matches!(link.b.port, Port::Ethernet(_)) {
        return None;
    }
    let rj45 = [link.a, link.b].map(|end| rj45_end(design, catalog, end));
    (rj45[0] || rj45[1]).then_some(TwistedPair {
        modules: [!rj45[0], !rj45[1]],
    })
}

/// Why a cable named on `link` does not plug into one of its ends: an SFP-style cable or
/// optic at an RJ-45 jack. None when it fits, or the catalog does not know the part.
pub fn named_cable_misfit(design: &Design, catalog: &Catalog, link: &Link) -> Option<String> {
    let named = link.cable.as_ref()?;
    let medium = catalog.cable(named)?.medium;
    if !matches!(
        medium,
        CableMedium::Dac | CableMedium::Aoc | CableMedium::Transceiver
    ) || named.as_str() == RJ45_MODULE
    {
        return None;
    }
    let end = [link.a, link.b]
        .into_iter()
        .find(|&end| rj45_end(design, catalog, end))?;
    let device = design.device(end.device).map_or("?", |d| d.name.as_str());
    Some(format!(
        "`{named}` is made for SFP/QSFP cages, and {device}'s built-in Ethernet is an RJ-45 jack: \
         use `{TWISTED_PAIR}`, or leave the cable automatic"
    ))
}
