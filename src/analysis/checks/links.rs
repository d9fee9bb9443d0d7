//! The pass over links: repeated ids, dangling ends, impossible values, self-loops and
//! reused ports, then each end's checks (`link_ends`) and the port counts (`ports`).

use super::checked::CheckedDesign;
use super::link_ends::check_end;
use super::ports::{PortOwners, Usage, port_of, report_usage};
use super::reporting::Grouped;
use super::{Finding, Severity, codes::*};
use crate::model::{DeviceId, LinkId, LinkState, LinkTech, Transport};

pub(super) fn check_links(checked: &CheckedDesign<'_>, out: &mut Vec<Finding>) {
    let design = checked.design;
    let mut grouped = Grouped::default();
    let mut usage: Vec<Usage> = vec![Usage::default(); design.devices.len()];
    let mut port_owner = PortOwners::new(checked);

    // Links are kept in id order, so sorting the ids is nearly free and shows repeats.
    let mut ids: Vec<LinkId> = design.links.iter().map(|l| l.id).collect();
    ids.sort_unstable();
    let mut repeated: Vec<LinkId> = ids
        .windows(2)
        .filter(|pair| pair[0] == pair[1])
        .map(|pair| pair[0])
        .collect();
    repeated.dedup();
    for id in repeated {
        out.push(link_check(
            checked,
            id,
            &[],
            DUPLICATE_ID,
            format!("link id {id} is used by more than one link"),
        ));
    }

    for link in &design.links {
        let (Some(ia), Some(ib)) = (
            checked.index.get(link.a.device),
            checked.index.get(link.b.device),
        ) else {
            let missing: Vec<String> = [link.a.device, link.b.device]
                .into_iter()
                .filter(|d| checked.device(*d).is_none())
                .map(|d| d.to_string())
                .collect();
            out.push(link_check(
                checked,
                link.id,
                &[link.a.device, link.b.device],
                DANGLING_LINK,
                format!(
                    "link {} ends on device {}, which does not exist",
                    link.id,
                    missing.join(" and ")
                ),
            ));
            continue;
        };
        let rate = link.rate_gbit_s.gbit_s();
        let degraded_ok = match link.state {
            LinkState::Degraded { fraction } => fraction > 0.0 && fraction < 1.0,
            LinkState::Up | LinkState::Failed => true,
        };
        if !(rate.is_finite() && rate > 0.0) || link.lanes == 0 || !degraded_ok {
            out.push(link_check(
                checked,
                link.id,
                &[link.a.device, link.b.device],
                INVALID_LINK,
                format!(
                    "link {} between {} and {} needs a positive rate, at least one lane and a degraded fraction between 0 and 1",
                    link.id,
                    checked.name(link.a.device),
                    checked.name(link.b.device)
                ),
            ));
            continue;
        }
        // An NVLink bridge joins two GPUs inside one node, so it may start and end there.
        let self_loop = if link.tech == LinkTech::NvLinkBridge {
            link.a == link.b
        } else {
            link.a.device == link.b.device
        };
        if self_loop {
            out.push(link_check(
                checked,
                link.id,
                &[link.a.device],
                SELF_LOOP,
                format!(
                    "link {} ({}) starts and ends on {}",
                    link.id,
                    link.tech.label(),
                    checked.name(link.a.device)
                ),
            ));
            continue;
        }

        // Port numbers only mean physical ports for cabled links; NVLink and PCIe have
        // their own lanes inside the box.
        let cabled = link.tech.is_network() || link.tech.is_thunderbolt();
        if cabled {
            for (end, at) in [(link.a, ia), (link.b, ib)] {
                if let Some(first) = port_owner.claim(at, end, link.id) {
                    out.push(Finding {
                        severity: Severity::Error,
                        code: PORT_REUSED,
                        message: format!(
                            "{} {} carries both link {first} and link {}",
                            checked.name(end.device),
                            end.port,
                            link.id
                        ),
                        devices: vec![end.device],
                        links: vec![first, link.id],
                        suggestion: String::new(),
                    });
                }
            }
        }

        // Apple's RDMA over Thunderbolt needs Thunderbolt 5 (macOS 26.2): a Thunderbolt 4
        // link runs TCP whatever it is marked, and the model times it so.
        if link.tech == LinkTech::Thunderbolt4 && link.transport != Transport::Tcp {
            out.push(Finding {
                severity: Severity::Warning,
                suggestion: "set the link to TCP, or cable Thunderbolt 5 ports for RDMA".into(),
                ..link_check(
                    checked,
                    link.id,
                    &[link.a.device, link.b.device],
                    INCOMPATIBLE_LINK,
                    format!(
                        "link {} between {} and {} is Thunderbolt 4 marked {}: RDMA over \
                         Thunderbolt needs Thunderbolt 5 and macOS 26.2, so it is timed as TCP",
                        link.id,
                        checked.name(link.a.device),
                        checked.name(link.b.device),
                        link.transport.label()
                    ),
                )
            });
        }

        let device_a = &design.devices[ia];
        let device_b = &design.devices[ib];
        for (end, device, slot, far) in [
            (link.a, device_a, ia, device_b),
            (link.b, device_b, ib, device_a),
        ] {
            let port = port_of(slot, end.port, checked);
            check_end(
                link,
                end,
                device,
                &port,
                far,
                rate,
                &mut usage[slot],
                &mut grouped,
            );
        }
    }
    grouped.finish(checked, out);
    report_usage(checked, &usage, out);
}

pub(super) fn link_check(
    checked: &CheckedDesign<'_>,
    link: LinkId,
    devices: &[DeviceId],
    code: &'static str,
    message: String,
) -> Finding {
    let mut devices: Vec<DeviceId> = devices
        .iter()
        .copied()
        .filter(|d| checked.device(*d).is_some())
        .collect();
    devices.dedup();
    Finding {
        severity: Severity::Error,
        code,
        message,
        devices,
        links: vec![link],
        suggestion: String::new(),
    }
}
