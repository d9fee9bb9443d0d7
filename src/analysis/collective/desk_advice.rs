//! Advice for machines on a desk rather than in a data centre: Thunderbolt ports left idle
//! while the machines talk over slower Ethernet, and a workstation that draws more than a
//! household circuit carries.

use super::advice::{Finding, Severity};
use crate::model::units::count_of;
use crate::model::{Catalog, Design, DeviceId, DeviceKind};

/// Watts a 15 A, 120 V branch circuit carries continuously: 80 % of 1,800 W (US National
/// Electrical Code 210.20(A), continuous loads of 3 hours or more, as a training run is).
pub const HOUSEHOLD_CIRCUIT_W: f64 = 1_440.0;

/// The nodes' Thunderbolt ports unused while they reach each other over Ethernet slower than
/// Thunderbolt: a mesh of n needs n − 1 ports each and no switch.
pub fn idle_thunderbolt(design: &Design, catalog: &Catalog) -> Option<Finding> {
    let nodes: Vec<(DeviceId, u32, u8)> = design
        .devices
        .iter()
        .filter_map(|d| match &d.kind {
            DeviceKind::GpuNode(n) => {
                let spec = catalog.node(&n.model)?;
                Some((d.id, spec.thunderbolt_ports, spec.thunderbolt_generation?))
            }
            _ => None,
        })
        .collect();
    let n = u32::try_from(nodes.len()).ok()?;
    let node_count = design.node_count();
    // Every node has Thunderbolt and room for a full mesh.
    if n < 2 || nodes.len() != node_count || nodes.iter().any(|&(_, ports, _)| ports < n - 1) {
        return None;
    }
    if design.links.iter().any(|l| l.tech.is_thunderbolt()) {
        return None;
    }
    let generation = nodes.iter().map(|&(_, _, g)| g).min()?;
    let tb_gbit_s = if generation >= 5 { 80.0 } else { 40.0 };
    let ethernet: Vec<&crate::model::Link> = design
        .links
        .iter()
        .filter(|l| l.tech.is_ethernet_family() && l.rate_gbit_s.gbit_s() < tb_gbit_s)
        .collect();
    let fastest = ethernet
        .iter()
        .map(|l| l.rate_gbit_s.gbit_s())
        .fold(0.0, f64::max);
    if ethernet.is_empty() || fastest <= 0.0 {
        return None;
    }
    let rdma = if generation >= 5 {
        " and RDMA with macOS 26.2 or later (MLX's JACCL)"
    } else {
        ""
    };
    Some(Finding {
        severity: Severity::Info,
        code: "thunderbolt-unused",
        message: format!(
            "{} talk over {} Gb/s Ethernet while their Thunderbolt {generation} ports ({} Gb/s \
             each{rdma}) sit unused",
            count_of(nodes.len(), "machine", "machines"),
            crate::model::units::trim_number(fastest),
            crate::model::units::trim_number(tb_gbit_s),
        ),
        devices: nodes.iter().map(|&(id, _, _)| id).collect(),
        links: ethernet.iter().map(|l| l.id).collect(),
        suggestion: format!(
            "cable them to each other: a full mesh of {n} takes {} Thunderbolt ports on each \
             and no switch (railyard generate mesh --link tb{})",
            n - 1,
            if generation >= 5 { 5 } else { 4 }
        ),
    })
}

/// Machines made for a desk (a workstation; the catalog's `desk`) that draw more with their
/// GPUs and NICs than a household circuit carries continuously: in an office or at home, the
/// circuit is the limit. A rack server's circuit is the data centre's to size.
pub fn household_circuit(design: &Design, catalog: &Catalog) -> Option<Finding> {
    let mut over: Vec<DeviceId> = Vec::new();
    let mut worst_w: f64 = 0.0;
    for d in &design.devices {
        let DeviceKind::GpuNode(n) = &d.kind else {
            continue;
        };
        if !catalog.node(&n.model).is_some_and(|spec| spec.desk) {
            continue;
        }
        // As the supply check counts it: chassis, GPUs and NICs.
        let draw_w = crate::analysis::checks::device_draw(d, catalog).0;
        if draw_w > HOUSEHOLD_CIRCUIT_W {
            over.push(d.id);
            worst_w = worst_w.max(draw_w);
        }
    }
    if over.is_empty() {
        return None;
    }
    Some(Finding {
        severity: Severity::Info,
        code: "household-circuit",
        message: format!(
            "{} up to {} W with {} GPUs and NICs: more than a 15 A, 120 V circuit carries for \
             hours ({} W, 80 % of its rating)",
            if over.len() == 1 {
                "1 machine draws".to_string()
            } else {
                format!("{} machines each draw", over.len())
            },
            crate::model::units::group_thousands(worst_w.round() as i64),
            if over.len() == 1 { "its" } else { "their" },
            crate::model::units::group_thousands(HOUSEHOLD_CIRCUIT_W as i64),
        ),
        devices: over,
        links: vec![],
        suggestion: circuit_for(worst_w),
    })
}

/// The smallest branch circuit that carries `draw_w` continuously, at 80 % of its rating
/// (NEC 210.20(A)): 20 A at 120 V (1,920 W), 20 A at 240 V (3,840 W; a European 230 V, 16 A
/// circuit carries 3,680 W), 30 A at 240 V (5,760 W); beyond that, more than one.
fn circuit_for(draw_w: f64) -> String {
    let cap = " or cap the GPUs' power (nvidia-smi -pl)";
    if draw_w <= 0.8 * 20.0 * 120.0 {
        format!("give each its own 20 A, 120 V circuit (1,920 W at 80 %),{cap}")
    } else if draw_w <= 3_680.0 {
        format!(
            "give each its own 240 V, 20 A circuit (3,840 W at 80 %; in Europe a 230 V, 16 A \
             one),{cap}"
        )
    } else if draw_w <= 0.8 * 20.0 * 240.0 {
        format!("give each its own 240 V, 20 A circuit (3,840 W at 80 %),{cap}")
    } else if draw_w <= 0.8 * 30.0 * 240.0 {
        format!("give each its own 240 V, 30 A circuit (5,760 W at 80 %),{cap}")
    } else {
        format!(
            "one 240 V, 30 A circuit carries 5,760 W at 80 %: spread each machine's power \
             supplies over two circuits,{cap}"
        )
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn preset(name: &str) -> Design {
        let path = std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
            .join("presets")
            .join(name);
        let text = std::fs::read_to_string(path).expect("the preset");
        crate::io::design_file::parse_design(&text, name).expect("it parses")
    }

    #[test]
    fn four_workstations_of_four_4090s_each_outdraw_a_household_circuit() {
        // 550 W host + 4 × 450 W = 2,350 W each, over 1,440 W.
        let f = household_circuit(&preset("workstation-star-10gbe.ron"), &Catalog::builtin())
            .expect("flagged");
        assert_eq!(f.devices.len(), 4);
        assert!(
            f.message.starts_with("4 machines each draw up to 2,350 W"),
            "{}",
            f.message
        );
        // A DGX is data-centre gear: not flagged.
        assert!(
            household_circuit(&preset("dgx-h100-superpod-su.ron"), &Catalog::builtin()).is_none()
        );
        // Nor is a 4U PCIe server of eight L40S, which draws 4,250 W in a rack.
        use crate::generate::{Template, TemplateSpec, generate};
        let mut spec = TemplateSpec::new(Template::Star);
        spec.node = Some(crate::model::PartId::new("pcie-server-8gpu"));
        let servers = generate(&spec, &Catalog::builtin()).expect("a star of PCIe servers");
        assert!(household_circuit(&servers, &Catalog::builtin()).is_none());
    }

    #[test]
    fn the_circuit_named_carries_the_draw_at_80_percent() {
        // 2,350 W: over 20 A at 120 V (1,920 W), under a European 16 A at 230 V (3,680 W).
        assert!(circuit_for(2_350.0).contains("240 V, 20 A circuit (3,840 W at 80 %; in Europe"));
        // 3,700 W: over the European circuit, under 20 A at 240 V.
        let c = circuit_for(3_700.0);
        assert!(c.contains("240 V, 20 A") && !c.contains("Europe"), "{c}");
        // An 8-GPU PCIe server, 1,200 W + 8 × 350 W + NICs = 4,040 W: 30 A at 240 V (5,760 W).
        assert!(circuit_for(4_040.0).contains("240 V, 30 A circuit (5,760 W at 80 %)"));
        assert!(circuit_for(6_000.0).contains("over two circuits"));
    }

    #[test]
    fn macs_on_10_gbe_are_told_their_thunderbolt_is_idle() {
        use crate::generate::{Template, TemplateSpec, generate};
        let catalog = Catalog::builtin();
        let mut spec = TemplateSpec::new(Template::Star);
        spec.nodes = Some(4);
        spec.node = Some(crate::model::PartId::new("mac-studio-m3-ultra"));
        let star = generate(&spec, &catalog).expect("a star of Macs");
        let f = idle_thunderbolt(&star, &catalog).expect("flagged");
        assert_eq!(
            f.message,
            "4 machines talk over 10 Gb/s Ethernet while their Thunderbolt 5 ports (80 Gb/s \
             each and RDMA with macOS 26.2 or later (MLX's JACCL)) sit unused"
        );
        assert!(
            f.suggestion
                .contains("a full mesh of 4 takes 3 Thunderbolt ports")
        );
        // Cabled over Thunderbolt already: nothing to say.
        assert!(idle_thunderbolt(&preset("mac-studio-tb5-x4.ron"), &catalog).is_none());
    }
}
