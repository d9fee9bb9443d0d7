//! The short line above a device's name, on the canvas and in exported diagrams: what the
//! box is ("8× H100", "leaf · rail 3"), as the catalog names its parts.

use crate::model::{Catalog, Device, DeviceKind, HostRole, PartId, ScaleUp};

/// First label line of a device: "8× H100", "leaf · rail 3", "storage".
pub fn device_title(catalog: &Catalog, d: &Device) -> String {
    match &d.kind {
        DeviceKind::GpuNode(n) => format!("{}× {}", n.gpu_count, short_gpu_name(catalog, &n.gpu)),
        DeviceKind::Switch(s) => match s.rail {
            Some(r) => format!("{} · rail {r}", s.role.label()),
            None => s.role.label().to_string(),
        },
        DeviceKind::Host(h) => match h.role {
            HostRole::Cpu => "CPU host".to_string(),
            HostRole::Storage => "storage".to_string(),
        },
        DeviceKind::NvSwitchDomain(dom) => dom.model.to_string(),
    }
}

/// The line above a device's name in an exported diagram, longest first, for the box to take
/// the first that fits: the canvas's, with the switch's model before it, since a slide has no
/// inspector to ask ("spine · qm9700", then "spine").
/// A node of several GPUs says how they meet ("4× RTX 3090 · NVLink pairs"), which no link
/// on the drawing shows.
pub fn diagram_titles(catalog: &Catalog, d: &Device) -> Vec<String> {
    let title = device_title(catalog, d);
    match &d.kind {
        DeviceKind::Switch(s) => vec![format!("{title} · {}", s.model), title],
        DeviceKind::GpuNode(n) if n.gpu_count > 1 => {
            let inside = match &n.scale_up {
                ScaleUp::NvSwitch { .. } => "NVSwitch",
                ScaleUp::NvLinkBridgePairs { .. } => "NVLink pairs",
                ScaleUp::Pcie {
                    peer_to_peer: false,
                    ..
                } => "PCIe, no P2P",
                ScaleUp::Pcie { .. } => "PCIe",
                ScaleUp::UnifiedMemory => return vec![title],
            };
            vec![format!("{title} · {inside}"), title]
        }
        _ => vec![title],
    }
}

/// A short GPU name from the catalog's model string: the first word with a digit, the
/// all-capitals words before it and a suffix after it. "H100 SXM5 80GB" → "H100",
/// "GeForce RTX 4090" → "RTX 4090", "Blackwell GPU in GB200" → "GB200", "M2 Ultra" → "M2 Ultra".
pub fn short_gpu_name(catalog: &Catalog, gpu: &PartId) -> String {
    let Some(part) = catalog.get(gpu) else {
        return gpu.to_string();
    };
    let words: Vec<&str> = part
        .model
        .split(|c: char| c.is_whitespace() || c == '(' || c == ',')
        .filter(|w| !w.is_empty() && !matches!(*w, "NVIDIA" | "GeForce" | "Apple"))
        .collect();
    let Some(k) = words
        .iter()
        .position(|w| w.chars().any(|c| c.is_ascii_digit()))
    else {
        return gpu.to_string();
    };
    let mut start = k;
    while start > 0 && words[start - 1].chars().all(|c| c.is_ascii_uppercase()) {
        start -= 1;
    }
    let mut end = k + 1;
    if words
        .get(end)
        .is_some_and(|w| matches!(*w, "Ultra" | "Max" | "Pro" | "Ti" | "Super" | "Ada"))
    {
        end += 1;
    }
    words[start..end].join(" ")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn gpu_names_are_short() {
        let c = Catalog::builtin();
        assert_eq!(short_gpu_name(&c, &PartId::new("h100-sxm")), "H100");
        assert_eq!(short_gpu_name(&c, &PartId::new("rtx-4090")), "RTX 4090");
        assert_eq!(short_gpu_name(&c, &PartId::new("m2-ultra")), "M2 Ultra");
        assert_eq!(short_gpu_name(&c, &PartId::new("gb200")), "GB200");
        assert_eq!(
            short_gpu_name(&c, &PartId::new("rtx-pro-6000")),
            "RTX PRO 6000"
        );
        assert_eq!(
            short_gpu_name(&c, &PartId::new("rtx-6000-ada")),
            "RTX 6000 Ada"
        );
        assert_eq!(short_gpu_name(&c, &PartId::new("v100-sxm2")), "V100");
        assert_eq!(short_gpu_name(&c, &PartId::new("nope")), "nope");
    }
}
