//! The design as an htsim fat-tree topology (`.topo`), the file
//! `FatTreeTopology::load` reads (csg-htsim, `sim/datacenter/fat_tree_topology.cpp`): a
//! header (`Nodes`, `Tiers`, `Podsize`) and per tier `Downlink_speed_Gbps`, `Radix_Down`,
//! `Radix_Up`, `Oversubscribed`, `Bundle`, `Downlink_Latency_ns` and `Switch_Latency_ns`.
//! Queue sizes are left to htsim's command line, which the loader falls back to.
//!
//! Tier 0 is the leaves, tier 1 the spines, tier 2 the cores. An htsim host has one port, so
//! each NIC cabled to a leaf is one host: a server with 8 rail NICs is 8 hosts. htsim wires
//! its own fat tree from these counts, so the file says how many links of what speed each
//! tier has, not which switch each cable lands on. Only a design that is such a fat tree is
//! written: 2 or 3 tiers of switches, every switch of a tier with the same number of links
//! down and up at one whole Gb/s speed, the same number of parallel cables between any two
//! switches that are joined, and counts that pass the loader's own checks
//! (`set_custom_params`). Anything else is refused with the reason. Link states are not
//! exported: htsim models the fabric healthy.

use super::{ExportError, ExportFormat};
use crate::model::{Design, DeviceId, DeviceKind, SwitchRole};
use std::collections::{BTreeMap, HashMap};
use std::fmt::Write as _;

/// Each link's propagation delay: `Downlink_Latency_ns 1000` as in htsim's own example
/// topologies (`sim/datacenter/topologies/leaf_spine_tiny.topo`, `fat_tree_1024.topo`).
pub const DOWNLINK_LATENCY_NS: u32 = 1000;
/// Each switch's forwarding delay: `Switch_Latency_ns 0` in the same examples.
pub const SWITCH_LATENCY_NS: u32 = 0;

fn refuse(reason: impl Into<String>) -> ExportError {
    ExportError::Unsupported {
        format: ExportFormat::Htsim,
        reason: reason.into(),
    }
}

/// What a tier looks like once every switch in it has been checked to be alike.
#[derive(Debug, Default, Clone, Copy, PartialEq, Eq)]
struct Tier {
    switches: u64,
    /// Links down from each switch (to hosts for tier 0).
    radix_down: u64,
    /// Links up from each switch; 0 at the top.
    radix_up: u64,
    /// The speed of the links below this tier, in Gb/s.
    downlink_gbit_s: u64,
    /// Parallel cables between a switch and each switch below it joined to it; 1 at tier 0.
    bundle: u64,
}

fn role_tier(role: SwitchRole) -> usize {
    match role {
        SwitchRole::Leaf => 0,
        SwitchRole::Spine => 1,
        SwitchRole::Core => 2,
    }
}

const TIER_NAMES: [&str; 3] = ["leaves", "spines", "cores"];

/// The one value every switch of a tier has, or the refusal naming two that differ.
fn same(tier: usize, what: &str, values: &[u64]) -> Result<u64, ExportError> {
    let first = values.first().copied().unwrap_or(0);
    match values.iter().find(|&&v| v != first) {
        Some(other) => Err(refuse(format!(
            "{} have different {what} ({first} and {other})",
            TIER_NAMES[tier]
        ))),
        None => Ok(first),
    }
}

/// A whole number of Gb/s, as the loader's `stoi` reads it.
fn whole_gbit_s(gbit_s: f64) -> Option<u64> {
    (gbit_s.fract() == 0.0 && (1.0..1e12).contains(&gbit_s)).then_some(gbit_s as u64)
}

/// Parallel-link counts of every joined (upper, lower) pair, per upper switch.
type Bundles = HashMap<(DeviceId, DeviceId), u64>;

pub fn design_to_htsim(design: &Design) -> Result<String, ExportError> {
    let tier_of: HashMap<DeviceId, usize> = design
        .devices
        .iter()
        .filter_map(|d| d.kind.as_switch().map(|s| (d.id, role_tier(s.role))))
        .collect();
    let count = |t: usize| tier_of.values().filter(|&&x| x == t).count() as u64;
    let tiers = match (count(0), count(1), count(2)) {
        (0, _, _) => return Err(refuse("no leaves: htsim's hosts hang off tier-0 switches")),
        (1, 0, 0) => return Err(refuse("a single switch: no tiers")),
        (_, 0, 0) => {
            return Err(refuse(
                "leaves without spines: one tier, and htsim's fat tree has 2 or 3",
            ));
        }
        (_, 0, _) => return Err(refuse("cores without spines between them and the leaves")),
        (_, _, 0) => 2,
        _ => 3,
    };

    // Per switch: links down and up, their speeds; per joined pair: parallel cables.
    let mut down: BTreeMap<DeviceId, u64> = tier_of.keys().map(|&id| (id, 0)).collect();
    let mut up = down.clone();
    let mut speeds: [Vec<u64>; 3] = Default::default();
    let mut bundles: Bundles = HashMap::new();
    let mut hosts = 0u64;
    for link in &design.links {
        if !(link.tech.is_network() || link.tech.is_thunderbolt()) {
            continue;
        }
        let kind = |id: DeviceId| {
            design
                .device(id)
                .map(|d| &d.kind)
                .ok_or(ExportError::MissingDevice {
                    link: link.id,
                    device: id.0,
                })
        };
        let (a, b) = (link.a.device, link.b.device);
        let (ka, kb) = (kind(a)?, kind(b)?);
        let gbit_s = whole_gbit_s(link.nominal_capacity().gbit_s()).ok_or_else(|| {
            refuse(format!(
                "link {} runs at {} Gb/s: htsim takes whole Gb/s",
                link.id,
                link.nominal_capacity().gbit_s()
            ))
        })?;
        let lower_upper = match (tier_of.get(&a), tier_of.get(&b)) {
            (None, None) => {
                return Err(refuse(format!(
                    "link {} joins two nodes directly: htsim's hosts reach each other through switches",
                    link.id
                )));
            }
            (Some(&t), None) | (None, Some(&t)) => {
                let is_nvl = |k: &DeviceKind| matches!(k, DeviceKind::NvSwitchDomain(_));
                if is_nvl(ka) || is_nvl(kb) {
                    return Err(refuse(format!(
                        "network link {} ends on an NVSwitch domain, not on a host's NIC",
                        link.id
                    )));
                }
                if t != 0 {
                    return Err(refuse(format!(
                        "link {} joins a host to one of the {}: htsim's hosts hang off leaves",
                        link.id, TIER_NAMES[t]
                    )));
                }
                let leaf = if tier_of.contains_key(&a) { a } else { b };
                hosts += 1;
                *down.entry(leaf).or_default() += 1;
                speeds[0].push(gbit_s);
                continue;
            }
            (Some(&ta), Some(&tb)) if ta + 1 == tb => (a, b, tb),
            (Some(&ta), Some(&tb)) if tb + 1 == ta => (b, a, ta),
            (Some(&ta), Some(&tb)) => {
                return Err(refuse(format!(
                    "link {} joins {} to {}: a fat tree joins neighbouring tiers only",
                    link.id, TIER_NAMES[ta], TIER_NAMES[tb]
                )));
            }
        };
        let (lower, upper, upper_tier) = lower_upper;
        *up.entry(lower).or_default() += 1;
        *down.entry(upper).or_default() += 1;
        speeds[upper_tier].push(gbit_s);
        *bundles.entry((upper, lower)).or_default() += 1;
    }

    let mut t = [Tier::default(); 3];
    for (tier, slot) in t.iter_mut().enumerate().take(tiers) {
        let ids: Vec<DeviceId> = down
            .keys()
            .copied()
            .filter(|id| tier_of.get(id) == Some(&tier))
            .collect();
        let downs: Vec<u64> = ids.iter().map(|id| down[id]).collect();
        let ups: Vec<u64> = ids.iter().map(|id| up[id]).collect();
        let what_down = if tier == 0 {
            "host links"
        } else {
            "downlink counts"
        };
        slot.switches = ids.len() as u64;
        slot.radix_down = same(tier, what_down, &downs)?;
        slot.radix_up = same(tier, "uplink counts", &ups)?;
        slot.downlink_gbit_s = same(tier, "downlink speeds in Gb/s", &speeds[tier])?;
        let pairs: Vec<u64> = bundles
            .iter()
            .filter(|((u, _), _)| tier_of.get(u) == Some(&tier))
            .map(|(_, &n)| n)
            .collect();
        slot.bundle = if tier == 0 {
            1
        } else {
            same(tier, "cable counts to each switch below", &pairs)?
        };
        if slot.radix_down == 0 {
            return Err(refuse(format!("{} without links down", TIER_NAMES[tier])));
        }
    }
    if t[tiers - 1].radix_up != 0 {
        return Err(refuse("the top tier has uplinks"));
    }
    // The ratios below divide by these.
    if let Some(tier) = (0..tiers - 1).find(|&k| t[k].radix_up == 0) {
        return Err(refuse(format!("{} without uplinks", TIER_NAMES[tier])));
    }

    // Pods: 2 tiers are one pod; with 3, the leaves and spines joined to each other.
    let pods = if tiers == 2 {
        1
    } else {
        pod_count(&tier_of, &bundles)
    };
    // A 3-tier design has leaves and spines, so at least one pod; 0 only guards the division.
    let podsize = hosts.checked_div(pods).unwrap_or(0);
    let oversub0 = t[0].radix_down / t[0].radix_up;
    if t[0].radix_down % t[0].radix_up != 0 {
        return Err(refuse(format!(
            "leaves have {} links down and {} up: htsim's Oversubscribed is a whole ratio of the two",
            t[0].radix_down, t[0].radix_up
        )));
    }
    let oversub1 = if tiers == 3 {
        let num = t[1].radix_down * t[1].downlink_gbit_s;
        let den = t[1].radix_up * t[2].downlink_gbit_s;
        if num % den != 0 {
            return Err(refuse(format!(
                "spines have {num} Gb/s down and {den} up: htsim's Oversubscribed is a whole ratio"
            )));
        }
        num / den
    } else {
        1
    };
    check_loader(&t, tiers, hosts, pods, podsize, oversub0, oversub1)?;

    let mut out = String::new();
    // Writing to a String cannot fail; the results are ignored for that reason.
    let _ = writeln!(
        out,
        "# htsim fat tree of \"{}\", written by railyard: {} hosts (one per NIC cabled to a leaf).",
        design.name.replace(['\n', '\r'], " "),
        hosts
    );
    let _ = writeln!(out, "Nodes {hosts}");
    let _ = writeln!(out, "Tiers {tiers}");
    let _ = writeln!(out, "Podsize {podsize}");
    for (tier, slot) in t.iter().enumerate().take(tiers) {
        let _ = writeln!(out);
        let _ = writeln!(out, "# {}: {} switches", TIER_NAMES[tier], slot.switches);
        let _ = writeln!(out, "Tier {tier}");
        let _ = writeln!(out, "Downlink_speed_Gbps {}", slot.downlink_gbit_s);
        let _ = writeln!(out, "Radix_Down {}", slot.radix_down);
        if tier + 1 < tiers {
            let _ = writeln!(out, "Radix_Up {}", slot.radix_up);
            let oversub = if tier == 0 { oversub0 } else { oversub1 };
            let _ = writeln!(out, "Oversubscribed {oversub}");
        }
        if tier > 0 {
            let _ = writeln!(out, "Bundle {}", slot.bundle);
        }
        let _ = writeln!(out, "Downlink_Latency_ns {DOWNLINK_LATENCY_NS}");
        let _ = writeln!(out, "Switch_Latency_ns {SWITCH_LATENCY_NS}");
    }
    Ok(out)
}

/// Pods of a 3-tier design: groups of leaves and spines joined by leaf-spine cables.
fn pod_count(tier_of: &HashMap<DeviceId, usize>, bundles: &Bundles) -> u64 {
    let mut parent: HashMap<DeviceId, DeviceId> = tier_of
        .iter()
        .filter(|(_, t)| **t < 2)
        .map(|(&id, _)| (id, id))
        .collect();
    fn root(parent: &HashMap<DeviceId, DeviceId>, mut id: DeviceId) -> DeviceId {
        while let Some(&p) = parent.get(&id) {
            if p == id {
                break;
            }
            id = p;
        }
        id
    }
    for &(upper, lower) in bundles.keys() {
        if tier_of.get(&upper) == Some(&1) {
            let (a, b) = (root(&parent, upper), root(&parent, lower));
            parent.insert(a, b);
        }
    }
    let roots: std::collections::HashSet<DeviceId> =
        parent.keys().map(|&id| root(&parent, id)).collect();
    roots.len() as u64
}

/// The loader's own arithmetic (`set_custom_params`): what it would derive from the file
/// must be the design's counts, or htsim would build a different fabric or exit.
fn check_loader(
    t: &[Tier; 3],
    tiers: usize,
    hosts: u64,
    pods: u64,
    podsize: u64,
    oversub0: u64,
    oversub1: u64,
) -> Result<(), ExportError> {
    if pods == 0 || !hosts.is_multiple_of(pods) || !podsize.is_multiple_of(t[0].radix_down) {
        return Err(refuse(format!(
            "{hosts} hosts in {pods} pods do not fill whole leaves of {}",
            t[0].radix_down
        )));
    }
    if podsize / t[0].radix_down * pods != t[0].switches {
        return Err(refuse("some leaves have no hosts"));
    }
    let tor_uplinks = hosts * t[0].downlink_gbit_s / (t[1].downlink_gbit_s * oversub0);
    if tor_uplinks != t[0].switches * t[0].radix_up {
        return Err(refuse(format!(
            "leaf links run at {} Gb/s down and {} up: htsim's Oversubscribed counts links, so both tiers need one speed",
            t[0].downlink_gbit_s, t[1].downlink_gbit_s
        )));
    }
    let aggs_per_pod = tor_uplinks / (pods * t[1].radix_down);
    if aggs_per_pod * pods != t[1].switches || aggs_per_pod * t[1].bundle != t[0].radix_up {
        return Err(refuse(
            "not every leaf reaches every spine of its pod with the same cables",
        ));
    }
    if tiers == 3 {
        let agg_uplinks = tor_uplinks * t[1].downlink_gbit_s / (t[2].downlink_gbit_s * oversub1);
        let cores = agg_uplinks / t[2].radix_down;
        if cores != t[2].switches
            || !cores.is_multiple_of(aggs_per_pod)
            || cores * t[2].bundle / aggs_per_pod != t[1].radix_up
        {
            return Err(refuse(
                "the cores are not wired as htsim's fat tree wires them (each spine to cores/spines-per-pod cores)",
            ));
        }
    }
    Ok(())
}
