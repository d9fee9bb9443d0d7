//! Link rates no technology offers: an NVLink at 10 Gb/s or an Ethernet link at 3 Tb/s was
//! mistyped. The plausible range is the technology's own (`LinkTech::plausible_lane_rate`).

use super::checked::CheckedDesign;
use super::reporting::list_with_more;
use super::{Finding, Severity, codes::*};
use crate::model::{Bandwidth, DeviceId, LinkId, LinkTech};
use std::collections::BTreeMap;

/// One finding per technology and rate, listing its links, so a mistyped template of
/// thousands of links reads as one line.
pub(super) fn check_rates(checked: &CheckedDesign<'_>, out: &mut Vec<Finding>) {
    // Keyed by the rate's bits so that equal rates group; f64 is not Ord.
    let mut odd: BTreeMap<(LinkTech, u64), (Vec<LinkId>, Vec<DeviceId>)> = BTreeMap::new();
    for link in &checked.design.links {
        let rate = link.rate_gbit_s.gbit_s();
        let (slowest, fastest) = link.tech.plausible_lane_rate();
        // Non-positive and non-finite rates are `invalid-link`'s business.
        let plausible = rate >= slowest.gbit_s() && rate <= fastest.gbit_s();
        if plausible || !(rate.is_finite() && rate > 0.0) {
            continue;
        }
        let (links, devices) = odd.entry((link.tech, rate.to_bits())).or_default();
        links.push(link.id);
        devices.extend([link.a.device, link.b.device]);
    }
    for ((tech, bits), (links, mut devices)) in odd {
        devices.sort_unstable();
        devices.dedup();
        devices.retain(|&d| checked.device(d).is_some());
        let (slowest, fastest) = tech.plausible_lane_rate();
        let rate = Bandwidth::from_gbit_s(f64::from_bits(bits));
        let count = links.len();
        out.push(Finding {
            severity: Severity::Warning,
            code: IMPLAUSIBLE_RATE,
            message: format!(
                "{} {} link{} at {rate} a lane ({}): {} runs at {slowest} to {fastest}",
                count,
                tech.label(),
                if count == 1 { "" } else { "s" },
                list_with_more(links.iter().map(|l| l.to_string()), count),
                tech.label(),
            ),
            devices,
            links,
            suggestion: String::new(),
        });
    }
}

#[cfg(test)]
mod tests {
    use crate::analysis::checks::{checks, codes::IMPLAUSIBLE_RATE};
    use crate::model::factory::{default_link, device_from_part};
    use crate::model::{Bandwidth, Catalog, Design, DeviceId, LinkTech, PartId, Pos};

    /// Two workstations joined by their on-board 10GbE ports, at `rate_gbit_s` as `tech`.
    fn pair_at(tech: LinkTech, rate_gbit_s: f64) -> Design {
        let catalog = Catalog::builtin();
        let mut design = Design::new("pair");
        let ids: Vec<DeviceId> = (0..2)
            .map(|i| {
                let id = design.next_device_id();
                let part = PartId::new("workstation");
                let d = device_from_part(&catalog, &part, id, format!("ws-{i}"), Pos::default())
                    .expect("builtin part");
                design.insert_device(d);
                id
            })
            .collect();
        let mut link = default_link(&design, &catalog, ids[0], ids[1]).expect("10GbE");
        link.tech = tech;
        link.rate_gbit_s = Bandwidth::from_gbit_s(rate_gbit_s);
        design.insert_link(link);
        design
    }

    fn rate_findings(design: &Design) -> Vec<String> {
        checks(design, &Catalog::builtin())
            .into_iter()
            .filter(|c| c.code == IMPLAUSIBLE_RATE)
            .map(|c| c.message)
            .collect()
    }

    #[test]
    fn an_ethernet_link_at_3_tbit_s_is_implausible() {
        // 1.6 TbE is the fastest Ethernet standard; 3,000 Gb/s is nearly twice it.
        assert_eq!(
            rate_findings(&pair_at(LinkTech::Ethernet, 3000.0)),
            ["1 Ethernet link at 3 Tb/s a lane (l0): Ethernet runs at 100 Mb/s to 1.6 Tb/s"]
        );
    }

    #[test]
    fn an_nvlink_at_10_gbit_s_is_implausible() {
        // One NVLink 1 link already carries 20 GB/s = 160 Gb/s a direction.
        assert_eq!(
            rate_findings(&pair_at(LinkTech::NvLink, 10.0)),
            ["1 NVLink link at 10 Gb/s a lane (l0): NVLink runs at 160 Gb/s to 7.2 Tb/s"]
        );
    }

    #[test]
    fn standard_rates_pass() {
        for (tech, rate) in [
            (LinkTech::Ethernet, 10.0),
            (LinkTech::Ethernet, 1600.0),
            (LinkTech::InfiniBand, 400.0),
            (LinkTech::NvLink, 3600.0),
            (LinkTech::Thunderbolt5, 80.0),
            (LinkTech::Pcie, 252.0),
        ] {
            assert!(
                rate_findings(&pair_at(tech, rate)).is_empty(),
                "{tech:?} at {rate}"
            );
        }
    }
}
