//! NICs nothing is cabled to: bought and powered, they carry no traffic. Deleting a rail's
//! leaf leaves its NIC on every node uncabled, and the GPUs of that rail then reach the
//! network through other rails' NICs, so this is the check that says a rail is missing.

use super::checked::CheckedDesign;
use super::reporting::list_with_more;
use super::{Finding, Severity, codes::*};
use crate::model::{DeviceId, DeviceKind, Port};
use std::collections::BTreeMap;

/// A lone GPU server with NICs and no links: its GPUs need no network to talk, so the NICs'
/// price and power are in the design for nothing it models. Said once, as information: the
/// server may still be meant for a network not drawn yet.
fn lone_server_nics(checked: &CheckedDesign<'_>, out: &mut Vec<Finding>) {
    let design = checked.design;
    let mut nodes = design
        .devices
        .iter()
        .zip(&checked.device_parts)
        .filter(|(d, _)| matches!(d.kind, DeviceKind::GpuNode(_)));
    let (Some((device, parts)), None) = (nodes.next(), nodes.next()) else {
        return;
    };
    if !design.links.is_empty() {
        return;
    }
    // Only NICs the bill counts: not one built into the board, nor one the node's price
    // already includes.
    let included = parts.model.and_then(|m| match &m.spec {
        crate::model::catalog::PartSpec::Node(n) if n.nic_included_in_price => n.nic.as_ref(),
        _ => None,
    });
    let billed: Vec<&crate::model::catalog::Part> = parts
        .nics
        .iter()
        .flatten()
        .copied()
        .filter(|p| Some(&p.id) != included)
        .filter(|p| !matches!(&p.spec, crate::model::catalog::PartSpec::Nic(n) if n.builtin))
        .collect();
    if billed.is_empty() {
        return;
    }
    let usd: f64 = billed.iter().map(|p| p.price_usd().0).sum();
    let count = billed.len();
    out.push(Finding {
        severity: Severity::Info,
        code: NIC_UNCABLED,
        message: format!(
            "{} on {} {} cabled to nothing ({} in the cost): one server's GPUs talk inside it",
            crate::model::units::count_of(count, "NIC", "NICs"),
            checked.name(device.id),
            if count == 1 { "is" } else { "are" },
            crate::model::units::Usd(usd).compact()
        ),
        devices: vec![device.id],
        links: vec![],
        suggestion: "remove them in the inspector to price the server alone, or draw the \
                     network they are for"
            .into(),
    });
}

/// One finding per NIC slot (a rail on a rail-optimized node) left uncabled, listing the GPU
/// nodes it is uncabled on. Links that failed still count as cabled: they are drawn. A design
/// that cables no NIC at all gets no finding when it has no network for them to be missing
/// from (one node, or nodes not networked yet); when its nodes meet through other ports (a
/// board's own Ethernet), the NICs are bought for nothing and each slot is said.
pub(super) fn check_uncabled_nics(checked: &CheckedDesign<'_>, out: &mut Vec<Finding>) {
    let design = checked.design;
    let mut cabled: Vec<Vec<bool>> = design
        .devices
        .iter()
        .map(|d| match &d.kind {
            DeviceKind::GpuNode(node) => vec![false; node.nics.len()],
            _ => Vec::new(),
        })
        .collect();
    let mut any_cabled = false;
    let mut networked_otherwise = false;
    for link in &design.links {
        for end in [link.a, link.b] {
            match (end.port, checked.index.get(end.device)) {
                (Port::Nic(k), Some(i)) => {
                    if let Some(slot) = cabled[i].get_mut(k as usize) {
                        *slot = true;
                        any_cabled = true;
                    }
                }
                (Port::Ethernet(_), Some(i)) if !cabled[i].is_empty() => {
                    networked_otherwise |= link.tech.is_network();
                }
                _ => {}
            }
        }
    }
    if !any_cabled && !networked_otherwise {
        lone_server_nics(checked, out);
        return;
    }
    // NIC slot → the nodes it is uncabled on, in design order.
    let mut uncabled: BTreeMap<usize, Vec<DeviceId>> = BTreeMap::new();
    for (device, slots) in design.devices.iter().zip(&cabled) {
        for (k, _) in slots.iter().enumerate().filter(|(_, c)| !**c) {
            uncabled.entry(k).or_default().push(device.id);
        }
    }
    for (k, nodes) in uncabled {
        let part = nodes
            .first()
            .and_then(|&id| checked.device(id))
            .and_then(|d| match &d.kind {
                DeviceKind::GpuNode(node) => node.nics.get(k).map(|s| s.part.to_string()),
                _ => None,
            })
            .unwrap_or_default();
        let count = nodes.len();
        let on = if count == 1 {
            checked.name(nodes[0])
        } else {
            format!(
                "{count} GPU nodes ({})",
                list_with_more(nodes.iter().map(|&id| checked.name(id)), count)
            )
        };
        let (why, suggestion) = if any_cabled {
            ("and on a rail-optimized design its rail is missing", "")
        } else {
            (
                "while the nodes meet through their own Ethernet ports",
                "cable the NICs instead (with a cable of their rate), or remove them in the \
                 inspector",
            )
        };
        out.push(Finding {
            severity: Severity::Warning,
            code: NIC_UNCABLED,
            message: format!(
                "NIC {k} ({part}) has no link on {on}: it is bought and powered but carries \
                 nothing, {why}"
            ),
            devices: nodes,
            links: vec![],
            suggestion: suggestion.into(),
        });
    }
}
