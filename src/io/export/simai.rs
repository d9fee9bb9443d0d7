//! The design as a SimAI topology file, the text file SimAI's ns-3 back end reads
//! (`SetupNetwork` in `astra-sim/network_frontend/ns3/common.h`) and
//! `astra-sim-alibabacloud/inputs/topo/gen_Topo_Template.py` writes:
//!
//! ```text
//! nodes gpus_per_server nvswitch_num switch_num links gpu_type
//! nvswitch ids... switch ids...
//! src dst bandwidth latency error_rate        (one line per link)
//! ```
//!
//! Ids as SimAI expects them: GPUs from 0 (server by server: GPU `g` is in server
//! `g / gpus_per_server`), then one NVSwitch per scale-up domain (a node with NVSwitch, or a
//! rack-scale domain such as NVL72 with its trays), then the switches (leaves, spines,
//! cores). `nodes` counts all three, as the script does. Each GPU links to its domain's
//! NVSwitch at the node's NVLink rate; a NIC link from a node to a switch becomes a link
//! from GPU `i` (rail `i`: NIC `i`, or NIC `i + k × GPUs` on a node with several NICs per
//! GPU) to that switch; switch-to-switch links are kept. Parallel links between the same two
//! ends become one at their summed rate: SimAI keys a link by its two ends (`nbr2if`), so a
//! second one would overwrite the first. Failed links are left out, degraded ones carry
//! their reduced rate. Hosts (CPU, storage) are left out: SimAI's endpoints are GPUs.
//!
//! Refused: a design without switches (SimAI's GPUs reach each other through them),
//! Thunderbolt links, GPUs not joined by NVSwitch (PCIe, bridges, unified memory), scale-up
//! domains of different sizes or GPUs of different types (the first line has one of each),
//! a node whose NICs cannot be given to its GPUs, links joining two nodes directly or a
//! network link ending on an NVSwitch domain.

use super::{ExportError, ExportFormat};
use crate::model::units::trim_number;
use crate::model::{Design, DeviceId, DeviceKind, GpuNode, Port, ScaleUp};
use std::collections::HashMap;
use std::fmt::Write as _;

/// The latency of a NIC or switch link: SimAI's default, `'latency': '0.0005ms'` in
/// `analysis_template` of gen_Topo_Template.py (0.5 µs).
pub const LINK_LATENCY: &str = "0.0005ms";
/// The latency of a GPU's NVLink to its NVSwitch: the script's `'nv_latency': '0.000025ms'`.
pub const NVLINK_LATENCY: &str = "0.000025ms";
/// The script's default `'error_rate': 0`: no packet loss.
pub const ERROR_RATE: &str = "0";

fn refuse(reason: impl Into<String>) -> ExportError {
    ExportError::Unsupported {
        format: ExportFormat::Simai,
        reason: reason.into(),
    }
}

/// SimAI's GPU type word: `H100` from `h100-sxm`. SimAI knows A100, A800, H100 and H800 and
/// reads any other word as no particular type.
fn gpu_type(node: &GpuNode) -> String {
    let word = node.gpu.0.split('-').next().unwrap_or_default();
    let word: String = word.chars().filter(|c| c.is_ascii_alphanumeric()).collect();
    if word.is_empty() {
        "NONE".to_string()
    } else {
        word.to_ascii_uppercase()
    }
}

/// One end of a link as SimAI sees it.
enum End<'a> {
    Node(DeviceId, &'a GpuNode, Port),
    Switch(u32),
    Host,
    Domain(&'a str),
}

pub fn design_to_simai(design: &Design) -> Result<String, ExportError> {
    let nodes: Vec<(DeviceId, &str, &GpuNode)> = design
        .devices
        .iter()
        .filter_map(|d| d.kind.as_node().map(|n| (d.id, d.name.as_str(), n)))
        .collect();
    if nodes.is_empty() {
        return Err(refuse("no GPU nodes"));
    }
    let mut switches: Vec<(&crate::model::Device, crate::model::SwitchRole)> = design
        .devices
        .iter()
        .filter_map(|d| d.kind.as_switch().map(|s| (d, s.role)))
        .collect();
    if switches.is_empty() {
        return Err(refuse(
            "no switches: SimAI's GPUs reach each other through switches",
        ));
    }
    switches.sort_by_key(|(d, role)| (*role, d.id));
    if let Some(link) = design.links.iter().find(|l| l.tech.is_thunderbolt()) {
        return Err(refuse(format!(
            "link {} is Thunderbolt: SimAI models NICs on switches",
            link.id
        )));
    }

    // Scale-up domains in the order their first node appears; a node outside a rack-scale
    // domain is its own (one NVSwitch per server, as the script's default has it).
    let mut domains: Vec<(DeviceId, Vec<usize>)> = Vec::new();
    let mut nvlink_gbit_s: Vec<f64> = Vec::with_capacity(nodes.len());
    for (i, (id, name, node)) in nodes.iter().enumerate() {
        let ScaleUp::NvSwitch { per_gpu_gbit_s, .. } = node.scale_up else {
            return Err(refuse(format!(
                "the GPUs of {name} are not joined by NVSwitch: SimAI gives each server one"
            )));
        };
        nvlink_gbit_s.push(per_gpu_gbit_s.gbit_s());
        let key = node.domain.unwrap_or(*id);
        match domains.iter_mut().find(|(k, _)| *k == key) {
            Some((_, members)) => members.push(i),
            None => domains.push((key, vec![i])),
        }
    }
    let gpus_in =
        |members: &[usize]| -> u32 { members.iter().map(|&i| nodes[i].2.gpu_count).sum() };
    let gpus_per_server = gpus_in(&domains[0].1);
    if let Some((_, other)) = domains.iter().find(|(_, m)| gpus_in(m) != gpus_per_server) {
        return Err(refuse(format!(
            "scale-up domains of {gpus_per_server} and {} GPUs: SimAI takes one GPUs-per-server count",
            gpus_in(other)
        )));
    }
    if gpus_per_server == 0 {
        return Err(refuse("nodes without GPUs"));
    }
    let gpu_word = gpu_type(nodes[0].2);
    if let Some((_, name, node)) = nodes.iter().find(|(_, _, n)| gpu_type(n) != gpu_word) {
        return Err(refuse(format!(
            "{name} has {} GPUs and others {gpu_word}: SimAI takes one GPU type",
            gpu_type(node)
        )));
    }

    // GPU ids domain by domain, so that GPU g is in server g / gpus_per_server.
    let mut first_gpu: HashMap<DeviceId, u32> = HashMap::new();
    let mut gpu_domain: Vec<(u32, f64)> = Vec::new();
    for (d, (_, members)) in domains.iter().enumerate() {
        for &i in members {
            let (id, _, node) = nodes[i];
            first_gpu.insert(id, gpu_domain.len() as u32);
            for _ in 0..node.gpu_count {
                gpu_domain.push((d as u32, nvlink_gbit_s[i]));
            }
        }
    }
    let gpu_count = gpu_domain.len() as u32;
    let nvswitch_count = domains.len() as u32;
    let first_switch = gpu_count + nvswitch_count;
    let switch_ids: HashMap<DeviceId, u32> = switches
        .iter()
        .enumerate()
        .map(|(k, (d, _))| (d.id, first_switch + k as u32))
        .collect();

    // Network links, merged by their two ends; a GPU end first.
    let mut merged: Vec<(u32, u32, f64)> = Vec::new();
    let mut at: HashMap<(u32, u32), usize> = HashMap::new();
    for link in &design.links {
        if !link.tech.is_network() {
            // NVLink, bridges and PCIe: the scale-up above models them.
            continue;
        }
        let rate = link.capacity().gbit_s();
        if rate <= 0.0 {
            continue;
        }
        let end = |device: DeviceId, port: Port| -> Result<End<'_>, ExportError> {
            let d = design.device(device).ok_or(ExportError::MissingDevice {
                link: link.id,
                device: device.0,
            })?;
            Ok(match &d.kind {
                DeviceKind::GpuNode(n) => End::Node(d.id, n, port),
                DeviceKind::Switch(_) => End::Switch(switch_ids.get(&d.id).copied().unwrap_or(0)),
                DeviceKind::Host(_) => End::Host,
                DeviceKind::NvSwitchDomain(_) => End::Domain(&d.name),
            })
        };
        let gpu_of = |id: DeviceId, node: &GpuNode, port: Port| -> Result<u32, ExportError> {
            let name = design.device(id).map_or("", |d| d.name.as_str());
            let nics = node.nics.len() as u32;
            let Some(slot) = port.nic().filter(|&slot| slot < nics) else {
                return Err(refuse(format!(
                    "link {} leaves {name} from its {port}, not a NIC: SimAI gives each GPU a NIC",
                    link.id
                )));
            };
            if node.gpu_count == 0 || !nics.is_multiple_of(node.gpu_count) {
                return Err(refuse(format!(
                    "{name} has {nics} NICs for {} GPUs: SimAI needs each GPU to have its NICs (NIC i on GPU i)",
                    node.gpu_count
                )));
            }
            Ok(first_gpu.get(&id).copied().unwrap_or(0) + slot % node.gpu_count)
        };
        let pair = match (
            end(link.a.device, link.a.port)?,
            end(link.b.device, link.b.port)?,
        ) {
            (End::Host, _) | (_, End::Host) => continue,
            (End::Domain(name), _) | (_, End::Domain(name)) => {
                return Err(refuse(format!(
                    "network link {} ends on the NVSwitch domain {name}, not on a tray's NIC",
                    link.id
                )));
            }
            (End::Node(..), End::Node(..)) => {
                return Err(refuse(format!(
                    "link {} joins two nodes directly: SimAI's GPUs reach each other through switches",
                    link.id
                )));
            }
            (End::Node(id, node, port), End::Switch(s))
            | (End::Switch(s), End::Node(id, node, port)) => (gpu_of(id, node, port)?, s),
            (End::Switch(x), End::Switch(y)) => (x.min(y), x.max(y)),
        };
        match at.get(&pair) {
            Some(&k) => merged[k].2 += rate,
            None => {
                at.insert(pair, merged.len());
                merged.push((pair.0, pair.1, rate));
            }
        }
    }

    let mut by_gpu: Vec<Vec<usize>> = vec![Vec::new(); gpu_count as usize];
    let mut between_switches = Vec::new();
    for (k, &(a, _, _)) in merged.iter().enumerate() {
        match by_gpu.get_mut(a as usize) {
            Some(list) => list.push(k),
            None => between_switches.push(k),
        }
    }
    let link_count = gpu_count as usize + merged.len();
    let mut out = String::new();
    // Writing to a String cannot fail; the results are ignored for that reason.
    let _ = writeln!(
        out,
        "{} {gpus_per_server} {nvswitch_count} {} {link_count} {gpu_word}",
        first_switch + switches.len() as u32,
        switches.len()
    );
    let ids: Vec<String> = (gpu_count..first_switch + switches.len() as u32)
        .map(|i| i.to_string())
        .collect();
    let _ = writeln!(out, "{}", ids.join(" "));
    let line = |out: &mut String, a: u32, b: u32, gbit_s: f64, latency: &str| {
        let _ = writeln!(
            out,
            "{a} {b} {}Gbps {latency} {ERROR_RATE}",
            trim_number(gbit_s)
        );
    };
    for (g, &(domain, nvlink)) in gpu_domain.iter().enumerate() {
        line(
            &mut out,
            g as u32,
            gpu_count + domain,
            nvlink,
            NVLINK_LATENCY,
        );
        for &k in &by_gpu[g] {
            let (a, b, rate) = merged[k];
            line(&mut out, a, b, rate, LINK_LATENCY);
        }
    }
    for k in between_switches {
        let (a, b, rate) = merged[k];
        line(&mut out, a, b, rate, LINK_LATENCY);
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::PartId;

    #[test]
    fn gpu_types_are_simai_words() {
        let node = |gpu: &str| GpuNode {
            model: PartId("x".into()),
            gpu: PartId(gpu.into()),
            gpu_count: 8,
            scale_up: ScaleUp::UnifiedMemory,
            nics: Vec::new(),
            domain: None,
        };
        assert_eq!(gpu_type(&node("h100-sxm")), "H100");
        assert_eq!(gpu_type(&node("a800")), "A800");
        assert_eq!(gpu_type(&node("-")), "NONE");
    }
}
