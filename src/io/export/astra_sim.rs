//! The design as an ASTRA-sim analytical network (`network.yml`), the file
//! astra-network-analytical's `NetworkParser` reads: per dimension a `topology`, an
//! `npus_count`, a `bandwidth` and a `latency`.
//!
//! Dimension 1 is the scale-up domain (a node's NVSwitch, or a rack-scale NVL domain): a
//! `Switch` of its GPUs at each GPU's NVLink rate. Dimension 2 is the scale-out network: a
//! `Switch` of the domains, at each GPU's share of its node's network links. A single
//! domain has no second dimension. The analytical `Switch` is one non-blocking switch, so
//! oversubscription above the leaves is not in the file.
//!
//! Bandwidth is what astra-sim calls GB/s: `bw_GBps_to_Bpns` (common/NetworkFunction.cpp)
//! multiplies it by 2^30 bytes, so a design's Gb/s is divided by 8 (bytes) and by 2^30/10^9.
//!
//! Refused: designs that are not symmetric (domains of different sizes, different NVLink
//! rates, nodes with different network bandwidth per GPU), GPUs not joined by NVSwitch, no
//! network links, and designs without switches.

use super::{ExportError, ExportFormat};
use crate::model::{Design, DeviceId, DeviceKind, ScaleUp};
use std::collections::HashMap;
use std::fmt::Write as _;

/// Dimension 1's latency in ns: SimAI's NVLink default, `'nv_latency': '0.000025ms'` in
/// gen_Topo_Template.py (as the SimAI export uses).
pub const SCALE_UP_LATENCY_NS: f64 = 25.0;
/// Dimension 2's latency in ns: `latency: [ 500.0 ]` of astra-network-analytical's
/// input/Switch.yml, which is also SimAI's NIC default (`'latency': '0.0005ms'`).
pub const SCALE_OUT_LATENCY_NS: f64 = 500.0;

/// astra-sim's GB/s from Gb/s: bytes, then its 2^30-byte gigabyte.
pub fn astra_gbyte_s(gbit_s: f64) -> f64 {
    gbit_s / 8.0 * 1e9 / f64::from(1u32 << 30)
}

fn refuse(reason: impl Into<String>) -> ExportError {
    ExportError::Unsupported {
        format: ExportFormat::AstraSim,
        reason: reason.into(),
    }
}

/// The one value all have, or the refusal naming two that differ.
fn same(what: &str, values: &[(String, f64)]) -> Result<f64, ExportError> {
    let Some((first_name, first)) = values.first() else {
        return Err(refuse(format!("no {what}")));
    };
    match values.iter().find(|(_, v)| (v - first).abs() > 1e-9) {
        Some((name, v)) => Err(refuse(format!(
            "not symmetric: {what} is {first} at {first_name} and {v} at {name}"
        ))),
        None => Ok(*first),
    }
}

/// One dimension of the analytical network: NPUs, bandwidth (astra-sim's GB/s), latency ns.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Dimension {
    pub npus: f64,
    pub bandwidth: f64,
    pub latency_ns: f64,
}

/// The design's dimensions and the rates they come from.
pub struct Dimensions {
    pub dims: Vec<Dimension>,
    pub nvlink_gbit_s: f64,
    pub network_gbit_s: f64,
}

pub fn design_to_astra_sim(design: &Design) -> Result<String, ExportError> {
    let Dimensions {
        dims,
        nvlink_gbit_s,
        network_gbit_s,
    } = dimensions(design)?;
    let list = |f: &dyn Fn(&Dimension) -> String| dims.iter().map(f).collect::<Vec<_>>().join(", ");
    let mut out = String::new();
    // Writing to a String cannot fail; the results are ignored for that reason.
    let _ = writeln!(
        out,
        "# ASTRA-sim analytical network of \"{}\", written by railyard.",
        design.name.replace(['\n', '\r'], " ")
    );
    let _ = writeln!(
        out,
        "# Dimension 1: scale-up domain ({nvlink_gbit_s} Gb/s NVLink per GPU); dimension 2: the network ({network_gbit_s} Gb/s per GPU)."
    );
    let _ = writeln!(out, "topology: [ {} ]", list(&|_| "Switch".to_string()));
    let _ = writeln!(out, "npus_count: [ {} ]", list(&|d| format!("{}", d.npus)));
    let _ = writeln!(
        out,
        "bandwidth: [ {} ]  # GB/s of 2^30 bytes",
        list(&|d| format!("{:.3}", d.bandwidth))
    );
    let _ = writeln!(
        out,
        "latency: [ {} ]  # ns",
        list(&|d| format!("{:.1}", d.latency_ns))
    );
    Ok(out)
}

/// The scale-up and (with several domains) scale-out dimensions, or the reason the design
/// is not the symmetric hierarchy the analytical network describes.
pub fn dimensions(design: &Design) -> Result<Dimensions, ExportError> {
    if !design.devices.iter().any(|d| d.kind.as_switch().is_some()) {
        return Err(refuse("no switches: no scale-out network"));
    }
    // Each node's network bandwidth: its network links to switches, at their current rate.
    let mut network_gbit_s: HashMap<DeviceId, f64> = HashMap::new();
    for link in design.links.iter().filter(|l| l.tech.is_network()) {
        let switch = |id: DeviceId| design.device(id).and_then(|d| d.kind.as_switch());
        for (node, other) in [
            (link.a.device, link.b.device),
            (link.b.device, link.a.device),
        ] {
            if switch(other).is_some() {
                *network_gbit_s.entry(node).or_default() += link.capacity().gbit_s();
            }
        }
    }
    let mut domain_gpus: Vec<(DeviceId, String, f64)> = Vec::new();
    let mut nvlink = Vec::new();
    let mut per_gpu_network = Vec::new();
    for d in &design.devices {
        let DeviceKind::GpuNode(node) = &d.kind else {
            continue;
        };
        let ScaleUp::NvSwitch { per_gpu_gbit_s, .. } = node.scale_up else {
            return Err(refuse(format!(
                "the GPUs of {} are not joined by NVSwitch: dimension 1 is a switch",
                d.name
            )));
        };
        if node.gpu_count == 0 {
            return Err(refuse(format!("{} has no GPUs", d.name)));
        }
        let gpus = f64::from(node.gpu_count);
        nvlink.push((d.name.clone(), per_gpu_gbit_s.gbit_s()));
        let network = network_gbit_s.get(&d.id).copied().unwrap_or(0.0);
        per_gpu_network.push((d.name.clone(), network / gpus));
        let key = node.domain.unwrap_or(d.id);
        match domain_gpus.iter_mut().find(|(k, _, _)| *k == key) {
            Some((_, _, n)) => *n += gpus,
            None => domain_gpus.push((key, d.name.clone(), gpus)),
        }
    }
    let sizes: Vec<(String, f64)> = domain_gpus
        .iter()
        .map(|(_, name, n)| (format!("the domain of {name}"), *n))
        .collect();
    let domain_size = same("the scale-up domain's GPU count", &sizes)?;
    let nvlink_gbit_s = same("the NVLink rate per GPU (Gb/s)", &nvlink)?;
    let network_gbit_s = same("the network bandwidth per GPU (Gb/s)", &per_gpu_network)?;
    if network_gbit_s <= 0.0 {
        return Err(refuse("no network links from the GPU nodes to switches"));
    }
    if domain_size < 2.0 {
        return Err(refuse("one GPU per scale-up domain: dimension 1 needs 2"));
    }

    let mut dims = vec![Dimension {
        npus: domain_size,
        bandwidth: astra_gbyte_s(nvlink_gbit_s),
        latency_ns: SCALE_UP_LATENCY_NS,
    }];
    if domain_gpus.len() > 1 {
        dims.push(Dimension {
            npus: domain_gpus.len() as f64,
            bandwidth: astra_gbyte_s(network_gbit_s),
            latency_ns: SCALE_OUT_LATENCY_NS,
        });
    }
    Ok(Dimensions {
        dims,
        nvlink_gbit_s,
        network_gbit_s,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn gbit_s_become_astra_gigabytes() {
        // 400 Gb/s = 50 × 10^9 B/s = 46.566 × 2^30 B/s.
        assert!((astra_gbyte_s(400.0) - 46.566_128_730_773_93).abs() < 1e-9);
    }
}
