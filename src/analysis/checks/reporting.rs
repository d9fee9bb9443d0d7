//! How findings read: lists cut short after a few names, and problems that repeat on many
//! links of one device grouped into one finding for that device.

use super::checked::CheckedDesign;
use super::{Finding, Severity};
use crate::model::{DeviceId, LinkId};
use std::collections::BTreeMap;
use std::fmt::Write as _;

/// How many names or links a message lists before "and N more".
pub(super) const LIST_LIMIT: usize = 3;

pub(super) fn list_with_more(items: impl Iterator<Item = String>, count: usize) -> String {
    let shown: Vec<String> = items.take(LIST_LIMIT).collect();
    let mut text = shown.join(", ");
    if count > shown.len() {
        let _ = write!(text, " and {} more", count - shown.len());
    }
    text
}

/// Problems found on many links of one device, reported once per device and reason.
#[derive(Default)]
pub(super) struct Grouped {
    map: BTreeMap<GroupKey, (Severity, Vec<(LinkId, DeviceId)>)>,
}

/// The device a problem is reported at, the check code and the reason text.
type GroupKey = (DeviceId, &'static str, String);

impl Grouped {
    pub(super) fn add(
        &mut self,
        at: DeviceId,
        severity: Severity,
        code: &'static str,
        reason: String,
        link: LinkId,
        far: DeviceId,
    ) {
        self.map
            .entry((at, code, reason))
            .or_insert_with(|| (severity, Vec::new()))
            .1
            .push((link, far));
    }

    pub(super) fn finish(self, checked: &CheckedDesign<'_>, out: &mut Vec<Finding>) {
        for ((at, code, reason), (severity, links)) in self.map {
            let described = list_with_more(
                links
                    .iter()
                    .map(|&(link, far)| format!("{link} to {}", checked.name(far))),
                links.len(),
            );
            let mut devices: Vec<DeviceId> = links.iter().map(|&(_, far)| far).collect();
            devices.sort_unstable();
            devices.dedup();
            devices.retain(|&d| d != at);
            devices.insert(0, at);
            out.push(Finding {
                severity,
                code,
                message: format!("{}: {reason} ({described})", checked.name(at)),
                devices,
                links: links.into_iter().map(|(link, _)| link).collect(),
                suggestion: String::new(),
            });
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn long_lists_are_cut_short() {
        let items = ["a", "b", "c", "d", "e"].map(String::from);
        assert_eq!(
            list_with_more(items.iter().cloned(), 5),
            "a, b, c and 2 more"
        );
        assert_eq!(list_with_more(items[..2].iter().cloned(), 2), "a, b");
    }
}
