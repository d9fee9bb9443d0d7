//! One end of a link: whether its port carries the link's technology and speed, whether a
//! rail leaf is cabled to the right NIC, and how many ports it takes.

use super::ports::{PortAt, Usage, port_exists};
use super::reporting::Grouped;
use super::{Severity, codes::*};
use crate::model::catalog::NetFamily;
use crate::model::{Device, DeviceKind, Endpoint, LinkTech, Port};

fn thunderbolt_generation(tech: LinkTech) -> u8 {
    if tech == LinkTech::Thunderbolt5 { 5 } else { 4 }
}

/// Symmetric Thunderbolt rate per direction (TB5's 120 Gb/s boost is one-way only).
fn thunderbolt_gbit_s(generation: u8) -> f64 {
    if generation >= 5 { 80.0 } else { 40.0 }
}

/// Tolerance for comparing rates written as decimals.
fn faster(rate: f64, limit: f64) -> bool {
    rate > limit * (1.0 + 1e-9)
}

fn family_carries(family: NetFamily, tech: LinkTech) -> bool {
    if tech == LinkTech::InfiniBand {
        family.speaks_infiniband()
    } else {
        family.speaks_ethernet()
    }
}

fn family_label(family: NetFamily) -> &'static str {
    match family {
        NetFamily::InfiniBand => "InfiniBand-only",
        NetFamily::Ethernet => "Ethernet-only",
        NetFamily::Both => "InfiniBand/Ethernet",
    }
}

/// Compatibility, speed, rail and port counting for one end of a healthy-looking link.
#[allow(clippy::too_many_arguments)]
pub(super) fn check_end(
    link: &crate::model::Link,
    end: Endpoint,
    device: &Device,
    port: &PortAt<'_>,
    far: &Device,
    rate: f64,
    usage: &mut Usage,
    grouped: &mut Grouped,
) {
    let tech = link.tech;
    let lanes = u64::from(link.lanes);
    let at = end.device;
    let mut flag = |severity, code, reason: String| {
        grouped.add(at, severity, code, reason, link.id, far.id);
    };
    let rate_text = crate::model::Bandwidth::from_gbit_s(rate);

    if tech.is_network() {
        match port {
            PortAt::Nic { slot, part, spec } => {
                let Some(nic) = spec else { return };
                if !family_carries(nic.family, tech) {
                    flag(
                        Severity::Error,
                        INCOMPATIBLE_LINK,
                        format!(
                            "NIC {slot} (`{part}`) is {} but carries a {} link",
                            family_label(nic.family),
                            tech.label()
                        ),
                    );
                }
                if faster(rate, nic.port_gbit_s.gbit_s()) {
                    flag(
                        Severity::Error,
                        SPEED_MISMATCH,
                        format!(
                            "NIC {slot} (`{part}`) runs at most {} per port but its link is set to {rate_text}",
                            nic.port_gbit_s
                        ),
                    );
                }
                if lanes > u64::from(nic.ports) {
                    flag(
                        Severity::Error,
                        PORTS_OVER_CAPACITY,
                        format!(
                            "NIC {slot} (`{part}`) has {} port(s) but its link bundles {lanes} cables",
                            nic.ports
                        ),
                    );
                }
                if let DeviceKind::Switch(sw) = &far.kind
                    && let Some(rail) = sw.rail
                    && rail != *slot
                {
                    // Reported at the leaf so a miswired rail reads as one line per leaf.
                    grouped.add(
                        far.id,
                        Severity::Warning,
                        RAIL_MISALIGNED,
                        format!("serves rail {rail} but is cabled to NIC {slot} (rail {slot}) of its nodes"),
                        link.id,
                        at,
                    );
                }
            }
            PortAt::Builtin { port, spec } => {
                let Some(node) = spec else { return };
                let Port::Ethernet(index) = *port else {
                    flag(
                        Severity::Error,
                        INCOMPATIBLE_LINK,
                        format!("its {port} cannot carry {}", tech.label()),
                    );
                    return;
                };
                if tech == LinkTech::InfiniBand {
                    flag(
                        Severity::Error,
                        INCOMPATIBLE_LINK,
                        format!(
                            "its {port} is on-board Ethernet but carries InfiniBand; InfiniBand needs a NIC"
                        ),
                    );
                    return;
                }
                if node.builtin_ethernet_ports == 0 {
                    flag(
                        Severity::Error,
                        INCOMPATIBLE_LINK,
                        format!("a link is on its {port} but it has no on-board Ethernet port"),
                    );
                    return;
                }
                if !port_exists(*port, index, node.builtin_ethernet_ports, &mut flag) {
                    return;
                }
                usage.builtin_ethernet_lanes += lanes;
                if let Some(speed) = node.builtin_ethernet_gbit_s
                    && faster(rate, speed.gbit_s())
                {
                    flag(
                        Severity::Error,
                        SPEED_MISMATCH,
                        format!(
                            "its built-in Ethernet runs at most {speed} but a link on it is set to {rate_text}"
                        ),
                    );
                }
            }
            PortAt::Switch { switch, spec } => {
                usage.switch_lanes += lanes;
                usage.highest_switch_port = usage.highest_switch_port.max(Some(end.port.index()));
                let Some(spec) = spec else { return };
                if !family_carries(spec.family, tech) {
                    flag(
                        Severity::Error,
                        INCOMPATIBLE_LINK,
                        format!(
                            "`{}` is {} but carries {} links",
                            switch.model,
                            family_label(spec.family),
                            tech.label()
                        ),
                    );
                }
                let per_port = spec.port_gbit_s / f64::from(switch.breakout.max(1));
                if faster(rate, per_port.gbit_s()) {
                    flag(
                        Severity::Error,
                        SPEED_MISMATCH,
                        format!(
                            "its ports run at most {per_port} (breakout {}) but links are set to {rate_text}",
                            switch.breakout
                        ),
                    );
                }
            }
            PortAt::Domain => flag(
                Severity::Error,
                INCOMPATIBLE_LINK,
                format!(
                    "an NVSwitch domain has no {} ports; cable its compute trays instead",
                    tech.label()
                ),
            ),
            PortAt::Missing(why) => flag(Severity::Error, PORTS_OVER_CAPACITY, why.clone()),
        }
    } else if tech.is_thunderbolt() {
        match port {
            PortAt::Nic { slot, .. } => flag(
                Severity::Error,
                INCOMPATIBLE_LINK,
                format!(
                    "NIC {slot} carries a {} link, which goes on a Thunderbolt port",
                    tech.label()
                ),
            ),
            PortAt::Builtin { port, spec } => {
                let Some(node) = spec else { return };
                if node.thunderbolt_ports == 0 {
                    flag(
                        Severity::Error,
                        INCOMPATIBLE_LINK,
                        format!("it has no Thunderbolt ports for a {} link", tech.label()),
                    );
                    return;
                }
                let Port::Thunderbolt(index) = *port else {
                    flag(
                        Severity::Error,
                        INCOMPATIBLE_LINK,
                        format!("its {port} cannot carry {}", tech.label()),
                    );
                    return;
                };
                if !port_exists(*port, index, node.thunderbolt_ports, &mut flag) {
                    return;
                }
                usage.thunderbolt_lanes += lanes;
                let machine = node.thunderbolt_generation.unwrap_or(4);
                let wanted = thunderbolt_generation(tech);
                if wanted > machine {
                    flag(
                        Severity::Error,
                        SPEED_MISMATCH,
                        format!(
                            "it has Thunderbolt {machine} ports but a {} link",
                            tech.label()
                        ),
                    );
                } else if faster(rate, thunderbolt_gbit_s(wanted)) {
                    flag(
                        Severity::Error,
                        SPEED_MISMATCH,
                        format!(
                            "{} runs at most {} but a link is set to {rate_text}",
                            tech.label(),
                            crate::model::Bandwidth::from_gbit_s(thunderbolt_gbit_s(wanted))
                        ),
                    );
                }
            }
            PortAt::Switch { .. } | PortAt::Domain => flag(
                Severity::Error,
                INCOMPATIBLE_LINK,
                format!("it has no Thunderbolt ports for a {} link", tech.label()),
            ),
            PortAt::Missing(why) => flag(Severity::Error, PORTS_OVER_CAPACITY, why.clone()),
        }
    } else if matches!(tech, LinkTech::NvLink | LinkTech::NvLinkBridge) {
        let what = match &device.kind {
            DeviceKind::Switch(_) => Some("a network switch"),
            DeviceKind::Host(_) => Some("a CPU or storage host"),
            DeviceKind::GpuNode(_) | DeviceKind::NvSwitchDomain(_) => None,
        };
        if let Some(what) = what {
            flag(
                Severity::Error,
                INCOMPATIBLE_LINK,
                format!("it is {what} and cannot carry {}", tech.label()),
            );
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn rates_compare_with_a_tolerance() {
        assert!(!faster(400.0, 400.0));
        assert!(!faster(100.0 * 4.0, 400.0));
        assert!(faster(400.1, 400.0));
        assert_eq!(
            thunderbolt_gbit_s(thunderbolt_generation(LinkTech::Thunderbolt5)),
            80.0
        );
        assert_eq!(
            thunderbolt_gbit_s(thunderbolt_generation(LinkTech::Thunderbolt4)),
            40.0
        );
    }
}
