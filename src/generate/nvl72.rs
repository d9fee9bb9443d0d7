//! GB200 NVL72 racks: one NVSwitch domain per rack with its compute trays, and the trays'
//! NICs on a rail fabric.

use super::builder::{BLOCK_GAP, Builder, SPACING, numbered, row_y};
use super::clos::{Layer, Split, div_ceil, pod_spine_down, three_tier, two_tier};
use super::fabric::{RailBlocks, chunks, fabric_summary, leaf_ports, switch_model};
use super::parts::{
    NodeProfile, SwitchUse, check_gpu_total, choose_switch, infeasible, node_count,
};
use super::{GenerateError, TemplateSpec};
use crate::model::catalog::DomainSpec;
use crate::model::units::count_of;
use crate::model::{
    Catalog, Design, DeviceId, DeviceKind, GroupId, GroupKind, LengthClass, NvSwitchDomain, PartId,
    PartSpec, Pos,
};

const DEFAULT_DOMAIN: &str = "gb200-nvl72";
/// Compute trays drawn in rows of this many inside a rack.
const TRAYS_PER_ROW: u32 = 9;
const MAX_RACKS: u32 = super::parts::MAX_NODES / 18;

fn domain_spec(catalog: &Catalog, id: &PartId) -> Result<DomainSpec, GenerateError> {
    let part = catalog
        .get(id)
        .ok_or_else(|| GenerateError::unknown_part(catalog, id))?;
    match &part.spec {
        PartSpec::Domain(d) => Ok(d.clone()),
        _ => Err(GenerateError::WrongKind {
            id: id.clone(),
            expected: "rack-scale NVLink domain (such as gb200-nvl72)",
        }),
    }
}

/// `spec.nodes` counts racks here; `spec.node` names the domain part.
pub(super) fn nvl72(spec: &TemplateSpec, catalog: &Catalog) -> Result<Design, GenerateError> {
    let domain_id = spec
        .node
        .clone()
        .unwrap_or_else(|| PartId::new(DEFAULT_DOMAIN));
    let domain = domain_spec(catalog, &domain_id)?;
    let racks = node_count(spec, 1, 1)?;
    if racks > MAX_RACKS {
        return Err(infeasible(format!(
            "{racks} racks is more than railyard generates ({MAX_RACKS})"
        )));
    }
    if domain.members == 0 {
        return Err(infeasible(format!("`{domain_id}` lists no member trays")));
    }
    let tray = NodeProfile::resolve(spec, catalog, &domain.member_node)?;
    let (nic_id, nic) = tray.require_nic()?;
    let plan = choose_switch(spec, catalog, nic_id, nic, SwitchUse::Fabric)?;
    let members = domain.members;
    let trays = racks
        .checked_mul(members)
        .filter(|&t| t <= super::parts::MAX_NODES)
        .ok_or_else(|| {
            infeasible(format!(
                "{racks} racks of {members} trays is more than railyard generates ({} nodes)",
                super::parts::MAX_NODES
            ))
        })?;
    check_gpu_total(&tray, trays)?;
    let rails = tray.nic_count;
    let radix = plan.radix;

    // One set of rail leaves takes every tray if the trays fit a switch: no spines then.
    // Otherwise leaves split down/up and spines join the rack sets.
    let one_set = trays <= radix;
    let split = if one_set {
        None
    } else {
        Some(Split::new(radix, spec.oversubscription)?)
    };
    // Trays per set of rail leaves: whole racks when a rack's trays fit the down ports.
    let block = match split {
        None => trays,
        Some(s) if s.down >= members => s.down / members * members,
        Some(s) => s.down,
    };
    let sets = div_ceil(u64::from(trays), u64::from(block));
    let leaf_count = sets * u64::from(rails);
    let spine_down = u64::from(pod_spine_down(radix));
    let (sets_per_pod, leaves_per_pod) = if u64::from(rails) <= spine_down {
        let spp = spine_down / u64::from(rails);
        (spp, spp * u64::from(rails))
    } else {
        (1, spine_down)
    };
    let tiers = if one_set {
        1
    } else {
        match spec.tiers {
            2 if leaf_count > u64::from(radix) => {
                return Err(infeasible(format!(
                    "{racks} NVL72 racks on `{}` ({radix} ports) need {leaf_count} rail leaves, more than a 2-tier spine of {radix} ports reaches. Use --tiers 3 or a switch with more ports",
                    plan.part
                )));
            }
            3 if div_ceil(leaf_count, leaves_per_pod) > u64::from(radix) => {
                return Err(infeasible(format!(
                    "{racks} NVL72 racks on `{}` ({radix} ports) need more than {radix} pods of {leaves_per_pod} leaves. Use a switch with more ports",
                    plan.part
                )));
            }
            2 | 3 => usize::from(spec.tiers),
            t => {
                return Err(infeasible(format!(
                    "`nvl72` builds 2 or 3 tiers above the racks; got {t}"
                )));
            }
        }
    };

    let model = switch_model(&plan);
    let mut b = Builder::new(format!("nvl72: {racks} × {domain_id}"));
    let pods = if tiers == 3 {
        chunks(leaf_count as usize, leaves_per_pod as usize)
    } else {
        Vec::new()
    };
    let pod_groups: Vec<Option<GroupId>> = (0..pods.len())
        .map(|p| Some(b.group(numbered("pod", p, pods.len()), GroupKind::Pod, None)))
        .collect();
    let set_groups: Vec<Option<GroupId>> = if sets > 1 {
        (0..sets as usize)
            .map(|s| {
                let parent = pod_groups.get(s / sets_per_pod as usize).copied().flatten();
                Some(b.group(
                    numbered("su", s, sets as usize),
                    GroupKind::ScalableUnit,
                    parent,
                ))
            })
            .collect()
    } else {
        vec![None]
    };

    // Each rack: trays in rows of nine, the NVSwitch domain drawn below them.
    let y_trays = row_y(tiers);
    let rack_width = TRAYS_PER_ROW as f32 * SPACING + BLOCK_GAP;
    let tray_rows = members.div_ceil(TRAYS_PER_ROW);
    let mut tray_ids: Vec<DeviceId> = Vec::with_capacity(trays as usize);
    for r in 0..racks {
        let set = (r * members / block) as usize;
        let x0 = r as f32 * rack_width + set as f32 * BLOCK_GAP;
        let rack = b.group(
            numbered("rack", r as usize, racks as usize),
            GroupKind::Rack,
            set_groups.get(set).copied().flatten(),
        );
        let domain_pos = Pos::new(
            x0 + (TRAYS_PER_ROW - 1) as f32 * SPACING / 2.0,
            y_trays + tray_rows as f32 * SPACING,
        );
        let dom = b.device(
            format!("nvl72-{}", super::builder::num(r as usize, racks as usize)),
            domain_pos,
            Some(rack),
            DeviceKind::NvSwitchDomain(NvSwitchDomain {
                model: domain_id.clone(),
            }),
        );
        for t in 0..members {
            let pos = Pos::new(
                x0 + (t % TRAYS_PER_ROW) as f32 * SPACING,
                y_trays + (t / TRAYS_PER_ROW) as f32 * SPACING * 0.8,
            );
            tray_ids.push(b.device(
                format!(
                    "tray-{}-{}",
                    super::builder::num(r as usize, racks as usize),
                    super::builder::num(t as usize, members as usize)
                ),
                pos,
                Some(rack),
                tray.device_kind(Some(dom)),
            ));
        }
    }

    // The racks are full, so rail leaves stand in network racks: node links cross racks.
    let lengths = vec![LengthClass::CrossRack; sets as usize];
    let (leaves, down) = RailBlocks {
        nodes: &tray_ids,
        rails,
        block,
        model: &model,
        wire: &plan.node_wire,
        y: row_y(tiers - 1),
        groups: &set_groups,
        lengths: &lengths,
    }
    .build(&mut b);

    let mut notes = vec![format!(
        "{racks} × `{domain_id}`: each rack one NVLink domain of {} GPUs over {members} trays; the trays' NICs on a rail fabric. {}",
        domain.gpus,
        fabric_summary(&tray, trays, &plan)
    )];
    match split {
        None => notes.push(format!(
            "All {trays} trays fit one switch per rail: {rails} rail leaves, no spines."
        )),
        Some(split) => {
            let ups: Vec<u32> = down.iter().map(|&d| split.uplinks_for(d)).collect();
            let layer = Layer {
                model: &model,
                radix,
                wire: &plan.fabric_wire,
            };
            let upper = if tiers == 2 {
                two_tier(
                    &mut b,
                    &leaves,
                    &ups,
                    &layer,
                    "spine",
                    (row_y(0), None),
                    None,
                )
            } else {
                three_tier(
                    &mut b,
                    &leaves,
                    &ups,
                    &pods,
                    &pod_groups,
                    &layer,
                    row_y(1),
                    row_y(0),
                )
            };
            notes.push(format!(
                "{sets} rack sets of up to {block} trays, {} ({}), {}{}.",
                count_of(leaves.len(), "rail leaf", "rail leaves"),
                leaf_ports(&down, &ups),
                count_of(upper.spines, "spine", "spines"),
                if upper.cores > 0 {
                    format!(
                        ", {}",
                        count_of(upper.cores, "core switch", "core switches")
                    )
                } else {
                    String::new()
                }
            ));
        }
    }
    notes.extend(tray.nic_note.iter().cloned());
    notes.extend(plan.remarks.iter().cloned());
    Ok(b.finish(notes.join(" "), catalog))
}
