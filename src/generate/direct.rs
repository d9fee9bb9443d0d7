//! Direct cables between nodes, no switch: ring, chain and full mesh, over Thunderbolt or
//! Ethernet DAC/AOC. The node's port count decides what is possible.

use super::builder::{Builder, SPACING};
use super::parts::{
    NodeProfile, check_gpu_total, default_direct_cable, infeasible, node_count, plan_direct,
};
use super::{GenerateError, Template, TemplateSpec};
use crate::model::units::count_of;
use crate::model::{
    Catalog, Design, DeviceId, GroupKind, LengthClass, LinkTech, PartId, Pos, Transport,
};

/// Direct-cable default: Mac Studios over Thunderbolt, the homelab classic.
const DEFAULT_DIRECT_NODE: &str = "mac-studio-m2-ultra";
const DEFAULT_DIRECT_NODES: u32 = 4;
const MAX_CABLES: u64 = 1_000_000;

pub(super) fn direct(spec: &TemplateSpec, catalog: &Catalog) -> Result<Design, GenerateError> {
    let node_id = spec
        .node
        .clone()
        .unwrap_or_else(|| PartId::new(DEFAULT_DIRECT_NODE));
    let node = NodeProfile::resolve(spec, catalog, &node_id)?;
    let n = node_count(spec, DEFAULT_DIRECT_NODES, 2)?;
    check_gpu_total(&node, n)?;
    let link_id = spec
        .link
        .clone()
        .unwrap_or_else(|| PartId::new(default_direct_cable(&node.spec)));
    let plan = plan_direct(catalog, &link_id, &node, spec.transport)?;

    let (shape, needed) = match spec.template {
        Template::Ring => ("ring", 2),
        Template::Chain => ("chain", if n > 2 { 2 } else { 1 }),
        _ => ("full mesh", n - 1),
    };
    if needed > plan.ports {
        return Err(infeasible(format!(
            "a {shape} of {n} needs {needed} {} ports per node; `{}` has {}",
            plan.port_kind, node.part, plan.ports
        )));
    }

    // Only a catalog with absurd port counts gets here; refuse rather than run out of memory.
    let cables = match spec.template {
        Template::Ring => u64::from(n),
        Template::Chain => u64::from(n) - 1,
        _ => u64::from(n) * u64::from(n - 1) / 2,
    };
    if cables > MAX_CABLES {
        return Err(infeasible(format!(
            "a {shape} of {n} is {cables} cables, more than railyard generates ({MAX_CABLES})"
        )));
    }

    let mut b = Builder::new(format!("{shape}: {n} × {}", node.part));
    let group = b.group("desk".to_string(), GroupKind::Rack, None);
    let positions = if spec.template == Template::Chain {
        (0..n)
            .map(|i| Pos::new(i as f32 * SPACING * 2.0, 0.0))
            .collect()
    } else {
        circle(n)
    };
    let nodes: Vec<DeviceId> = positions
        .into_iter()
        .enumerate()
        .map(|(i, pos)| {
            let id = b.device(
                super::builder::numbered("node", i, n as usize),
                pos,
                Some(group),
                node.device_kind(None),
            );
            b.skip_ports_to(id, plan.first_port);
            id
        })
        .collect();

    let n = n as usize;
    let pairs: Vec<(usize, usize)> = match spec.template {
        Template::Ring => (0..n).map(|i| (i, (i + 1) % n)).collect(),
        Template::Chain => (0..n - 1).map(|i| (i, i + 1)).collect(),
        _ => (0..n)
            .flat_map(|i| (i + 1..n).map(move |j| (i, j)))
            .collect(),
    };
    // A server's NICs are its rails: back to back, every one is cabled, shared out between
    // its neighbours (two 8-NIC servers: 8 cables, NIC k to NIC k). Other ports (Thunderbolt,
    // on-board Ethernet) take one cable per neighbour.
    let per_pair = if plan.port_kind == "NIC" {
        (plan.ports / needed.max(1)).max(1)
    } else {
        1
    };
    for &(i, j) in &pairs {
        for _ in 0..per_pair {
            b.link_next(nodes[i], nodes[j], &plan.wire, LengthClass::InRack);
        }
    }
    let used = needed * per_pair;
    // Thunderbolt 5 takes RDMA only where macOS turns it on: said, since JACCL then runs
    // several times faster than the TCP modelled by default.
    let tcp_on_tb5 =
        if plan.wire.tech == LinkTech::Thunderbolt5 && plan.wire.transport == Transport::Tcp {
            " The links carry TCP (IP over Thunderbolt: MLX's ring backend); with RDMA turned on \
         (macOS 26.2 or later, `rdma_ctl enable` in recovery) MLX's JACCL runs over them: \
         --transport rdma."
        } else {
            ""
        };
    let notes = format!(
        "{}: {n} × `{}` cabled directly with `{link_id}` ({} at {}), {}; {used} of each node's {} {} {} used.{tcp_on_tb5}",
        capitalize(shape),
        node.part,
        plan.wire.tech.label(),
        plan.wire.rate,
        count_of(pairs.len() * per_pair as usize, "cable", "cables"),
        plan.ports,
        plan.port_kind,
        if plan.ports == 1 { "port" } else { "ports" }
    );
    Ok(b.finish(notes, catalog))
}

/// Points on a circle wide enough that neighbours sit about two device widths apart.
fn circle(n: u32) -> Vec<Pos> {
    let radius = (f32::from(u16::try_from(n).unwrap_or(u16::MAX)) * SPACING * 2.0
        / std::f32::consts::TAU)
        .max(SPACING * 1.5);
    (0..n)
        .map(|i| {
            let angle = std::f32::consts::TAU * i as f32 / n as f32 - std::f32::consts::FRAC_PI_2;
            Pos::new(radius * angle.cos(), radius * angle.sin())
        })
        .collect()
}

fn capitalize(s: &str) -> String {
    let mut c = s.chars();
    match c.next() {
        Some(f) => f.to_uppercase().chain(c).collect(),
        None => String::new(),
    }
}
