//! Design checks: wiring that cannot work (ports over capacity, speed mismatches,
//! incompatible ends, dangling or reused ports), GPUs cut off from the rest, rail
//! misalignment, parts missing from the catalog, GPUs beyond a chassis' slots, power beyond
//! its supply and link rates no technology offers.
//!
//! A few passes over devices and links with dense indexes (device and port tables rather
//! than hash maps), and messages formatted only for the checks that fire, so a design of
//! 131,072 GPUs is checked in milliseconds. Problems that repeat on many links of one device are
//! reported once for that device, listing the links, so a miswired fabric gives a readable
//! list rather than thousands of lines.
//!
//! One pass a file: `parts` (catalog ids, kinds, prices), `devices` (breakouts, NVSwitch
//! domains), `links` (ids, ends, self-loops, reused ports), `link_ends` (what each end
//! carries: family, speed, rails, port counts), `ports` (what a link end plugs into and how
//! many ports each device uses), `isolation` (GPUs cut off), `chassis` (GPUs and power a
//! node's chassis holds), `rates` (link rates outside their technology's range) and
//! `uncabled` (NICs nothing is cabled to), `down` (links marked failed or degraded).
//! `checked` holds the design with its catalog parts
//! looked up once; `reporting` phrases and groups the findings.

use crate::model::{Catalog, Design};
use chassis::check_chassis;
use checked::CheckedDesign;
use devices::check_devices;
use down::check_links_down;
use isolation::check_isolation;
use links::check_links;
use parts::check_parts;
use rates::check_rates;
use uncabled::check_uncabled_nics;

mod chassis;
mod checked;
mod devices;
mod down;
mod isolation;
mod link_ends;
mod links;
mod parts;
mod ports;
mod rates;
mod reporting;
mod uncabled;

pub use crate::analysis::finding::{Finding, Severity};
pub(crate) use chassis::device_draw;

/// The stable check codes.
pub mod codes {
    pub const PORTS_OVER_CAPACITY: &str = "ports-over-capacity";
    pub const SPEED_MISMATCH: &str = "speed-mismatch";
    pub const GPU_ISOLATED: &str = "gpu-isolated";
    pub const RAIL_MISALIGNED: &str = "rail-misaligned";
    pub const UNKNOWN_PART: &str = "unknown-part";
    pub const WRONG_PART_KIND: &str = "wrong-part-kind";
    pub const UNPRICED_PART: &str = "unpriced-part";
    pub const DANGLING_LINK: &str = "dangling-link";
    pub const SELF_LOOP: &str = "self-loop";
    pub const PORT_REUSED: &str = "port-reused";
    pub const INCOMPATIBLE_LINK: &str = "incompatible-link";
    pub const INVALID_LINK: &str = "invalid-link";
    pub const DUPLICATE_ID: &str = "duplicate-id";
    pub const DANGLING_DOMAIN: &str = "dangling-domain";
    pub const DOMAIN_OVER_CAPACITY: &str = "domain-over-capacity";
    pub const BREAKOUT_UNSUPPORTED: &str = "breakout-unsupported";
    pub const FEATURE_UNSUPPORTED: &str = "feature-unsupported";
    pub const IMPLAUSIBLE_RATE: &str = "implausible-rate";
    pub const GPUS_OVER_SLOTS: &str = "gpus-over-slots";
    pub const POWER_OVER_SUPPLY: &str = "power-over-supply";
    pub const NICS_OVER_SLOTS: &str = "nics-over-slots";
    pub const NIC_UNCABLED: &str = "nic-uncabled";
    pub const CONNECTOR_MISMATCH: &str = "connector-mismatch";
    pub const CABLE_TOO_SHORT: &str = "cable-too-short";
    pub const LINKS_DOWN: &str = "links-down";
}

/// Runs every check. Sorted by severity (errors first), then code; stable within a code.
pub fn checks(design: &Design, catalog: &Catalog) -> Vec<Finding> {
    let mut out = Vec::new();
    let checked = CheckedDesign::new(design, catalog, &mut out);
    check_parts(&checked, &mut out);
    check_devices(&checked, &mut out);
    check_chassis(&checked, &mut out);
    check_links(&checked, &mut out);
    check_rates(&checked, &mut out);
    check_isolation(&checked, &mut out);
    check_uncabled_nics(&checked, &mut out);
    check_links_down(&checked, &mut out);
    out.sort_by(|x, y| x.severity.cmp(&y.severity).then(x.code.cmp(y.code)));
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn errors_sort_before_warnings_before_information() {
        assert!(Severity::Error < Severity::Warning && Severity::Warning < Severity::Info);
    }
}
