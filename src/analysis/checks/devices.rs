//! Devices: switch breakouts and features, and NVSwitch domain membership and capacity.

use super::checked::CheckedDesign;
use super::{Finding, Severity, codes::*};
use crate::analysis::cost::FastMap;
use crate::model::{DeviceId, DeviceKind};

/// Switch breakouts and NVSwitch domain membership.
pub(super) fn check_devices(checked: &CheckedDesign<'_>, out: &mut Vec<Finding>) {
    let mut members: FastMap<DeviceId, Vec<DeviceId>> = FastMap::default();
    for device in &checked.design.devices {
        match &device.kind {
            DeviceKind::Switch(switch) => {
                let spec = checked.catalog.switch(&switch.model);
                // Features set on a model that lacks them (a file edited by hand): SHARP then
                // reduces nothing, and adaptive routing is the query's to choose.
                if let Some(spec) = spec {
                    let mut lacking = Vec::new();
                    if switch.features.in_network_reduction && !spec.in_network_reduction {
                        lacking.push("in-network reduction (SHARP)");
                    }
                    if switch.features.adaptive_routing && !spec.adaptive_routing {
                        lacking.push("adaptive routing");
                    }
                    if !lacking.is_empty() {
                        out.push(Finding {
                            severity: Severity::Warning,
                            code: FEATURE_UNSUPPORTED,
                            message: format!(
                                "{} has {} ticked, which `{}` does not have: the analysis leaves it \
                                 out",
                                checked.name(device.id),
                                lacking.join(" and "),
                                switch.model
                            ),
                            devices: vec![device.id],
                            links: vec![],
                            suggestion: "untick it in the inspector, or choose a switch model \
                                         that has it"
                                .to_string(),
                        });
                    }
                }
                let max = spec.map(|s| s.max_breakout);
                let bad = switch.breakout == 0 || max.is_some_and(|m| switch.breakout > m);
                if bad {
                    out.push(Finding {
                        severity: Severity::Error,
                        code: BREAKOUT_UNSUPPORTED,
                        message: format!(
                            "{}: breakout {} is not possible on `{}` (1 to {})",
                            checked.name(device.id),
                            switch.breakout,
                            switch.model,
                            max.unwrap_or(1)
                        ),
                        devices: vec![device.id],
                        links: vec![],
                        suggestion: String::new(),
                    });
                }
            }
            DeviceKind::GpuNode(node) => {
                let Some(domain_id) = node.domain else {
                    continue;
                };
                match checked.device(domain_id).map(|d| &d.kind) {
                    Some(DeviceKind::NvSwitchDomain(_)) => {
                        members.entry(domain_id).or_default().push(device.id);
                    }
                    _ => out.push(Finding {
                        severity: Severity::Error,
                        code: DANGLING_DOMAIN,
                        message: format!(
                            "{} belongs to NVSwitch domain {domain_id}, which does not exist or is not an NVSwitch domain",
                            checked.name(device.id)
                        ),
                        devices: vec![device.id],
                        links: vec![],
                        suggestion: String::new(),
                    }),
                }
            }
            DeviceKind::NvSwitchDomain(_) | DeviceKind::Host(_) => {}
        }
    }
    let mut domains: Vec<_> = members.into_iter().collect();
    domains.sort_by_key(|(id, _)| *id);
    for (domain_id, trays) in domains {
        let Some(DeviceKind::NvSwitchDomain(domain)) = checked.device(domain_id).map(|d| &d.kind)
        else {
            continue;
        };
        let Some(spec) = checked.catalog.domain(&domain.model) else {
            continue;
        };
        if trays.len() > spec.members as usize {
            let mut devices = vec![domain_id];
            devices.extend(&trays);
            out.push(Finding {
                severity: Severity::Error,
                code: DOMAIN_OVER_CAPACITY,
                message: format!(
                    "{} holds {} compute trays; `{}` takes {}",
                    checked.name(domain_id),
                    trays.len(),
                    domain.model,
                    spec.members
                ),
                devices,
                links: vec![],
                suggestion: String::new(),
            });
        }
    }
}
