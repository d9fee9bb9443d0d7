//! One node, and a star of nodes on one switch.

use super::builder::{Builder, numbered, row_y};
use super::fabric::{DEFAULT_FABRIC_NODE, node_x, switch_model};
use super::parts::{
    NodeProfile, SwitchUse, check_gpu_total, choose_switch, infeasible, node_count, plan_switch,
};
use super::{GenerateError, TemplateSpec};
use crate::model::catalog::{NetFamily, NicSpec};
use crate::model::{Catalog, Design, GroupId, GroupKind, LengthClass, PartId, Pos, SwitchRole};

/// A star's default: a workstation, with its four RTX 4090s.
const DEFAULT_STAR_NODE: &str = "workstation";
const DEFAULT_STAR_NODES: u32 = 4;

pub(super) fn single(spec: &TemplateSpec, catalog: &Catalog) -> Result<Design, GenerateError> {
    if spec.nodes.is_some_and(|n| n != 1) {
        return Err(infeasible(
            "`single` is one node; for more use star, fat-tree or a direct-cable template",
        ));
    }
    let node_id = spec
        .node
        .clone()
        .unwrap_or_else(|| PartId::new(DEFAULT_FABRIC_NODE));
    let node = NodeProfile::resolve(spec, catalog, &node_id)?;
    let mut b = Builder::new(format!("single: {}", node.part));
    let rack = b.group("rack-01".to_string(), GroupKind::Rack, None);
    b.device(
        "node-01".to_string(),
        Pos::new(0.0, 0.0),
        Some(rack),
        node.device_kind(None),
    );
    let notes = format!(
        "One `{}` with {} × `{}`: only the scale-up inside the node.",
        node.part, node.gpu_count, node.gpu
    );
    Ok(b.finish(notes, catalog))
}

/// N nodes on one switch. Every NIC of every node gets a switch port; a node without NICs
/// uses its first built-in Ethernet port.
pub(super) fn star(spec: &TemplateSpec, catalog: &Catalog) -> Result<Design, GenerateError> {
    let node_id = spec
        .node
        .clone()
        .unwrap_or_else(|| PartId::new(DEFAULT_STAR_NODE));
    let node = NodeProfile::resolve(spec, catalog, &node_id)?;
    let n = node_count(spec, DEFAULT_STAR_NODES, 1)?;
    check_gpu_total(&node, n)?;

    // The node's network ports: its NICs, or else one on-board Ethernet port, which sits
    // after the NICs and the Thunderbolt ports in the port numbering.
    let (port_id, port_spec, node_ports): (PartId, NicSpec, Vec<u32>) = match &node.nic {
        Some((id, nic)) => (id.clone(), nic.clone(), (0..node.nic_count).collect()),
        None => {
            let speed = node
                .spec
                .builtin_ethernet_gbit_s
                .filter(|_| node.spec.builtin_ethernet_ports > 0)
                .ok_or_else(|| {
                    infeasible(format!(
                        "`{}` has no NIC and no built-in Ethernet to reach a switch; choose a NIC (--nic on the command line)",
                        node.part
                    ))
                })?;
            let builtin = NicSpec {
                family: NetFamily::Ethernet,
                ports: node.spec.builtin_ethernet_ports,
                port_gbit_s: speed,
                rdma: false,
                pcie_generation: node.spec.pcie_generation,
                pcie_lanes: 16,
                builtin: true,
            };
            (
                node.part.clone(),
                builtin,
                vec![node.spec.thunderbolt_ports],
            )
        }
    };
    let needed = u64::from(n) * node_ports.len() as u64;
    let plan = match &spec.switch {
        Some(id) => plan_switch(catalog, id, &port_id, &port_spec, spec.transport)?,
        None => choose_switch(
            spec,
            catalog,
            &port_id,
            &port_spec,
            SwitchUse::Single {
                ports: u32::try_from(needed).unwrap_or(u32::MAX),
            },
        )?,
    };
    if needed > u64::from(plan.radix) {
        return Err(infeasible(format!(
            "a star of {n} nodes with {} network port{} each needs {needed} switch ports; `{}` has {}. Use fat-tree, or a switch with more ports",
            node_ports.len(),
            if node_ports.len() == 1 { "" } else { "s" },
            plan.part,
            plan.radix
        )));
    }

    let model = switch_model(&plan);
    let mut b = Builder::new(format!(
        "star: {n} × {} with {} × {}",
        node.part, node.gpu_count, node.gpu
    ));
    let per_rack = node.nodes_per_rack();
    let racks = n.div_ceil(per_rack) as usize;
    let groups: Vec<GroupId> = (0..racks)
        .map(|r| b.group(numbered("rack", r, racks), GroupKind::Rack, None))
        .collect();
    let nodes: Vec<_> = (0..n)
        .map(|i| {
            let rack = i / per_rack;
            b.device(
                numbered("node", i as usize, n as usize),
                Pos::new(node_x(i, rack, 0), row_y(1)),
                Some(groups[rack as usize]),
                node.device_kind(None),
            )
        })
        .collect();
    let (lo, hi) = b.x_extent(&nodes);
    let switch = b.switch(
        "switch-01".to_string(),
        Pos::new((lo + hi) / 2.0, row_y(0)),
        Some(groups[0]),
        &model,
        SwitchRole::Leaf,
        None,
    );
    for (i, &id) in nodes.iter().enumerate() {
        let length = if (i as u32) < per_rack {
            LengthClass::InRack
        } else {
            LengthClass::CrossRack
        };
        for &port in &node_ports {
            b.link_to_switch(id, port, switch, &plan.node_wire, length);
        }
    }
    let mut notes = vec![format!(
        "Star: {n} × `{}` ({} × `{}` each) on one `{}`, {needed} of its {} ports used, {} at {}.",
        node.part,
        node.gpu_count,
        node.gpu,
        plan.part,
        plan.radix,
        plan.node_wire.tech.label(),
        plan.node_wire.rate
    )];
    notes.extend(node.nic_note.iter().cloned());
    notes.extend(plan.remarks.iter().cloned());
    Ok(b.finish(notes.join(" "), catalog))
}
