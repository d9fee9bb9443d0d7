//! A design's calibration applied to its built fabric: fitted efficiencies and latencies in
//! place of the built-in ones.

use super::{Fabric, Resource};
use crate::analysis::collective::efficiency::{
    NVLINK, PCIE, ROCE_LOSSLESS, ROCE_LOSSY, library_link_efficiency, stack_latency_us,
    transport_of,
};
use crate::model::{Design, LinkTech, Transport};

/// The built-in efficiency of an internal port arc (a GPU's NVLink, a PCIe slot): NVLink's
/// depends on the GPU's generation, so it is read off the arc (usable over line rate); PCIe's
/// is the constant (its arcs may carry other shares, such as staging without GPUDirect).
fn port_efficiency(fab: &Fabric, a: usize, tech: LinkTech) -> f64 {
    match tech {
        LinkTech::NvLink | LinkTech::NvLinkBridge => {
            let line = fab.arc_line(a);
            if line > 0.0 {
                fab.arc_usable[a] / line
            } else {
                NVLINK
            }
        }
        _ => PCIE,
    }
}

/// The technology a fabric arc belongs to.
fn arc_tech(fab: &Fabric, design: &Design, a: usize) -> Option<LinkTech> {
    Some(match fab.arc_resource(a) {
        Resource::Link { index, .. } => design.links.get(index as usize)?.tech,
        Resource::ScaleUp { .. } => LinkTech::NvLink,
        Resource::Bridge { .. } => LinkTech::NvLinkBridge,
        Resource::GpuPcie { .. } | Resource::NicPcie { .. } => LinkTech::Pcie,
    })
}

/// Applies the design's calibration to a built fabric: every arc of a calibrated technology
/// gets its fitted efficiency in place of the built-in one (other shares, such as staging
/// without GPUDirect, stay), and every drawn network or Thunderbolt link of a technology with
/// a fitted latency gets it in place of its stack latency. A fitted NVLink, NVLink bridge or
/// PCIe latency is an intra-node hop latency instead, which the latency model takes per plan
/// (`evaluate::step_latency::IntraHops`), not a stack latency for drawn links of those technologies. A
/// design without calibration is left as built.
pub(crate) fn apply_calibration(fab: &mut Fabric, design: &Design) {
    let Some(cal) = design.calibration.as_ref().filter(|c| !c.techs.is_empty()) else {
        return;
    };
    for a in 0..fab.arc_count() {
        let Some(tech) = arc_tech(fab, design, a) else {
            continue;
        };
        let Some(fitted) = cal.efficiency(tech) else {
            continue;
        };
        let built = match fab.arc_resource(a) {
            Resource::Link { index, .. } => {
                let link = &design.links[index as usize];
                // Lossless or not only matters for RoCE; the ratio is what the arc carries.
                let lossless = usable_ratio_lossless(fab, a, link.tech, link.transport);
                library_link_efficiency(fab.library, link.tech, link.transport, lossless)
            }
            _ => port_efficiency(fab, a, tech),
        };
        fab.arc_usable[a] *= fitted / built;
    }
    for (i, link) in design.links.iter().enumerate() {
        if !(link.tech.is_network() || link.tech.is_thunderbolt()) {
            continue;
        }
        if let (Some(l), Some(slot)) = (cal.latency_us(link.tech), fab.link_latency_us.get_mut(i)) {
            *slot += l - stack_latency_us(
                link.tech,
                transport_of(fab.library, link.tech, link.transport),
            );
        }
    }
}

/// Whether the fabric built link arc `a` as lossless: its usable rate over its line rate
/// tells, since the two RoCE figures differ.
fn usable_ratio_lossless(fab: &Fabric, a: usize, tech: LinkTech, transport: Transport) -> bool {
    if !(tech.is_ethernet_family() && transport == Transport::Rdma) {
        return true;
    }
    let line = fab.arc_line(a);
    if line <= 0.0 {
        return true;
    }
    let ratio = fab.arc_usable[a] / line;
    (ratio - ROCE_LOSSLESS).abs() <= (ratio - ROCE_LOSSY).abs()
}
