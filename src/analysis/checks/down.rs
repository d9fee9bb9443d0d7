//! Links marked failed or degraded (a what-if, or a fabric as found): one note that says how
//! many and names the devices left with none working, so a failed spine reads as a failed
//! spine rather than as a shortage of uplinks.

use super::checked::CheckedDesign;
use super::{Finding, Severity, codes::LINKS_DOWN};
use crate::model::units::count_of;
use crate::model::{DeviceId, LinkState};

/// Devices named in the note at most; the rest are counted.
const NAMED: usize = 4;

pub(super) fn check_links_down(checked: &CheckedDesign<'_>, out: &mut Vec<Finding>) {
    let design = checked.design;
    let (mut failed, mut degraded) = (0usize, 0usize);
    let mut down_links = Vec::new();
    // Per device index: (links, failed links).
    let mut ends = vec![(0u32, 0u32); design.devices.len()];
    for link in &design.links {
        let is_failed = link.state == LinkState::Failed;
        match link.state {
            LinkState::Up => {}
            LinkState::Failed => failed += 1,
            LinkState::Degraded { .. } => degraded += 1,
        }
        if link.state != LinkState::Up {
            down_links.push(link.id);
        }
        for end in [link.a.device, link.b.device] {
            if let Some(i) = checked.index.get(end) {
                ends[i].0 += 1;
                ends[i].1 += u32::from(is_failed);
            }
        }
    }
    if down_links.is_empty() {
        return;
    }
    let cut_off: Vec<(DeviceId, u32)> = design
        .devices
        .iter()
        .zip(&ends)
        .filter(|(_, (all, dead))| *all > 0 && all == dead)
        .map(|(d, (all, _))| (d.id, *all))
        .collect();
    let mut message = match (failed, degraded) {
        (f, 0) => format!("{} failed", count_of(f, "link", "links")),
        (0, d) => format!("{} degraded", count_of(d, "link", "links")),
        (f, d) => format!("{} failed and {d} degraded", count_of(f, "link", "links")),
    };
    if !cut_off.is_empty() {
        let named: Vec<String> = cut_off
            .iter()
            .take(NAMED)
            .map(|&(id, n)| format!("{} (all {n})", checked.name(id)))
            .collect();
        let more = cut_off.len().saturating_sub(NAMED);
        message.push_str(&format!(
            ": {}{} no working link left",
            named.join(", "),
            if more > 0 {
                format!(" and {more} more have")
            } else if cut_off.len() == 1 {
                " has".to_string()
            } else {
                " have".to_string()
            }
        ));
    }
    message.push_str(
        "; every figure is the design without them (failed) or at their share (degraded)",
    );
    out.push(Finding {
        severity: Severity::Info,
        code: LINKS_DOWN,
        message,
        devices: cut_off.iter().map(|&(id, _)| id).collect(),
        links: down_links,
        suggestion: String::new(),
    });
}
