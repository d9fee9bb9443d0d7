//! Switched fabrics: fat-tree (2 or 3 tiers), rail-optimized and rail-only, plus the rail
//! leaves that NVL72 racks share.

use super::builder::{
    BLOCK_GAP, Builder, RACK_GAP, SPACING, SwitchModel, num, numbered, row_y, spread,
};
use super::clos::{Layer, Split, Upper, div_ceil, pod_spine_down, three_tier, two_tier};
use super::parts::{
    NodeProfile, SwitchPlan, SwitchUse, Wire, check_gpu_total, choose_switch, infeasible,
    node_count,
};
use super::{GenerateError, TemplateSpec};
use crate::model::catalog::NetFamily;
use crate::model::units::count_of;
use crate::model::{
    Catalog, Design, DeviceId, GroupId, GroupKind, LengthClass, PartId, Pos, SwitchRole,
};
use std::ops::Range;

/// Default node and size for switched fabrics: a DGX H100 scalable unit.
pub(super) const DEFAULT_FABRIC_NODE: &str = "dgx-h100";
const DEFAULT_FABRIC_NODES: u32 = 32;

pub(super) fn switch_model(plan: &SwitchPlan) -> SwitchModel {
    SwitchModel {
        part: plan.part.clone(),
        breakout: plan.breakout,
        features: plan.features,
    }
}

/// x of a node in a row: `SPACING` apart, with extra room at rack and block boundaries.
pub(super) fn node_x(index: u32, rack: u32, block: u32) -> f32 {
    index as f32 * SPACING + rack as f32 * RACK_GAP + block as f32 * BLOCK_GAP
}

/// Text shared by the fabric notes: what was built from what.
pub(super) fn fabric_summary(node: &NodeProfile, nodes: u32, plan: &SwitchPlan) -> String {
    let nic = node
        .nic
        .as_ref()
        .map_or_else(String::new, |(id, _)| format!(" × `{id}`"));
    let summary = format!(
        "{nodes} × `{}` ({} GPUs), {} NICs{nic} per node; `{}` switches ({} ports at {}), {} links at {}.",
        node.part,
        node.gpu_total(nodes),
        node.nic_count,
        plan.part,
        plan.radix,
        plan.fabric_wire.rate,
        plan.node_wire.tech.label(),
        plan.node_wire.rate,
    );
    match &node.nic_note {
        Some(why) => format!("{summary} {why}"),
        None => summary,
    }
}

fn check_tiers(spec: &TemplateSpec, allowed: &[u8]) -> Result<(), GenerateError> {
    if allowed.contains(&spec.tiers) {
        return Ok(());
    }
    let list: Vec<String> = allowed.iter().map(u8::to_string).collect();
    Err(infeasible(format!(
        "`{}` builds {} tiers; got {}",
        spec.template.cli_name(),
        list.join(" or "),
        spec.tiers
    )))
}

fn resolve_fabric_node(
    spec: &TemplateSpec,
    catalog: &Catalog,
) -> Result<(NodeProfile, u32, SwitchPlan), GenerateError> {
    let node_id = spec
        .node
        .clone()
        .unwrap_or_else(|| PartId::new(DEFAULT_FABRIC_NODE));
    let node = NodeProfile::resolve(spec, catalog, &node_id)?;
    let nodes = node_count(spec, DEFAULT_FABRIC_NODES, 1)?;
    check_gpu_total(&node, nodes)?;
    let (nic_id, nic) = node.require_nic()?;
    let plan = choose_switch(spec, catalog, nic_id, nic, SwitchUse::Fabric)?;
    Ok((node, nodes, plan))
}

/// A fat-tree: top-of-rack leaves holding whole nodes (all of a node's NICs on one leaf),
/// spines above them, and for three tiers pods of spines under a core.
pub(super) fn fat_tree(spec: &TemplateSpec, catalog: &Catalog) -> Result<Design, GenerateError> {
    check_tiers(spec, &[2, 3])?;
    let (node, n, plan) = resolve_fabric_node(spec, catalog)?;
    let nics = node.nic_count;
    let radix = plan.radix;
    let endpoints = u64::from(n) * u64::from(nics);
    let model = switch_model(&plan);
    let mut b = Builder::new(format!(
        "fat-tree{}: {n} × {}{}",
        oversubscribed(spec),
        node.part,
        on_switches(&plan)
    ));
    let mut notes = vec![format!("Fat-tree. {}", fabric_summary(&node, n, &plan))];

    if endpoints <= u64::from(radix) {
        // One switch has no uplinks to thin: a ratio asked for cannot be built, and a design
        // named "2:1" that is non-blocking would mislead every table it appears in.
        if spec.oversubscription != 1.0 {
            return Err(infeasible(format!(
                "all {endpoints} NIC ports fit one {radix}-port `{}`, which has no uplinks to \
                 thin: --oversubscription {} ({}) applies once the NICs need leaves and spines \
                 (more than {radix} ports); leave it at 1, or add nodes",
                plan.part,
                spec.oversubscription,
                Split::ratio_label(spec.oversubscription)
            )));
        }
        notes.push(format!(
            "All {endpoints} NIC ports fit one {radix}-port switch, so no spine layer is built."
        ));
        single_switch(&mut b, &node, n, &plan, &model);
        notes.extend(plan.remarks.iter().cloned());
        return Ok(b.finish(notes.join(" "), catalog));
    }

    let split = Split::new(radix, spec.oversubscription)?;
    let ratio = Split::ratio_label(spec.oversubscription);
    // Whole nodes under a leaf while a node's NICs fit its down ports; else NICs in order.
    let whole = nics <= split.down;
    let most_per_leaf = if whole { split.down / nics } else { 0 };
    let leaf_count = if whole {
        div_ceil(u64::from(n), u64::from(most_per_leaf))
    } else {
        div_ceil(endpoints, u64::from(split.down))
    };
    // As few leaves as hold the nodes, shared out evenly: 16 nodes on four 2:1 leaves of room
    // for 5 go 4/4/4/4, each leaf's uplinks half its downlinks, not 5/5/5/1, whose lone node
    // has a leaf to itself and lifts the bisection to 62.5 %.
    let nodes_per_leaf = if whole {
        div_ceil(u64::from(n), leaf_count) as u32
    } else {
        0
    };
    // Racks hold what power and space allow. A leaf that serves no more nodes than a rack
    // holds stands on top of their rack, and the rack holds its nodes alone. Larger leaves'
    // nodes fill racks in order (a rack of 4 DGX under a 5-node leaf, not 4 and then 1);
    // with three tiers the racks restart at each pod, so that none straddles two.
    let per_rack = node.nodes_per_rack();
    let leaves_per_pod = u64::from(pod_spine_down(radix));
    let top_of_rack = whole && nodes_per_leaf <= per_rack;
    let pod_nodes = if whole && spec.tiers == 3 {
        (leaves_per_pod * u64::from(nodes_per_leaf)).min(u64::from(u32::MAX)) as u32
    } else {
        u32::MAX
    };
    let racks_per_pod = pod_nodes.div_ceil(per_rack);
    let rack_of = |i: u32| -> u32 {
        if top_of_rack {
            i / nodes_per_leaf
        } else {
            i / pod_nodes * racks_per_pod + i % pod_nodes / per_rack
        }
    };
    match spec.tiers {
        2 if leaf_count > u64::from(radix) => {
            return Err(infeasible(format!(
                "a 2-tier fat-tree of `{}` ({radix} ports) at {ratio} has at most {radix} leaves × {} down ports = {} NIC ports (radix²/2 = {} at 1:1); {n} × `{}` bring {endpoints}. Use --tiers 3 or a switch with more ports",
                plan.part,
                split.down,
                u64::from(radix) * u64::from(split.down),
                u64::from(radix) * u64::from(radix) / 2,
                node.part
            )));
        }
        3 if div_ceil(leaf_count, leaves_per_pod) > u64::from(radix) => {
            return Err(infeasible(format!(
                "a 3-tier fat-tree of `{}` ({radix} ports) at {ratio} holds at most {radix} pods × {leaves_per_pod} leaves × {} down ports = {} NIC ports; {n} × `{}` bring {endpoints}. Use a switch with more ports",
                plan.part,
                split.down,
                u64::from(radix) * leaves_per_pod * u64::from(split.down),
                node.part
            )));
        }
        _ => {}
    }
    let leaf_count = leaf_count as usize;
    let tiers = usize::from(spec.tiers);
    let pods: Vec<Range<usize>> = if tiers == 3 {
        chunks(leaf_count, leaves_per_pod as usize)
    } else {
        Vec::new()
    };
    let pod_groups: Vec<Option<GroupId>> = (0..pods.len())
        .map(|p| Some(b.group(numbered("pod", p, pods.len()), GroupKind::Pod, None)))
        .collect();
    let pod_of_leaf = |leaf: usize| leaf / (leaves_per_pod as usize).max(1);
    // The leaf holding endpoint e (NIC k of node i is endpoint i × nics + k).
    let leaf_of = |node_i: u32, nic: u32| -> usize {
        if whole {
            (node_i / nodes_per_leaf) as usize
        } else {
            ((u64::from(node_i) * u64::from(nics) + u64::from(nic)) / u64::from(split.down))
                as usize
        }
    };

    let racks = rack_of(n - 1) as usize + 1;
    let mut rack_groups: Vec<GroupId> = Vec::with_capacity(racks);
    for i in 0..n {
        if rack_of(i) as usize == rack_groups.len() {
            let parent = if tiers == 3 {
                pod_groups[pod_of_leaf(leaf_of(i, 0))]
            } else {
                None
            };
            let name = numbered("rack", rack_groups.len(), racks);
            rack_groups.push(b.group(name, GroupKind::Rack, parent));
        }
    }

    let y_nodes = row_y(tiers);
    let node_ids: Vec<DeviceId> = (0..n)
        .map(|i| {
            let rack = rack_of(i);
            let pod = if tiers == 3 {
                pod_of_leaf(leaf_of(i, 0)) as u32
            } else {
                0
            };
            b.device(
                numbered("node", i as usize, n as usize),
                Pos::new(node_x(i, rack, pod), y_nodes),
                Some(rack_groups[rack as usize]),
                node.device_kind(None),
            )
        })
        .collect();

    // Each leaf sits above the nodes it serves, in the rack of the first of them.
    let y_leaf = row_y(tiers - 1);
    // First and last node each leaf serves.
    let leaf_members: Vec<(u32, u32)> = (0..leaf_count as u64)
        .map(|j| {
            if whole {
                let per = u64::from(nodes_per_leaf);
                (j * per, ((j + 1) * per).min(u64::from(n)) - 1)
            } else {
                let down = u64::from(split.down);
                let nics = u64::from(nics);
                (
                    j * down / nics,
                    (((j + 1) * down).min(endpoints) - 1) / nics,
                )
            }
        })
        .map(|(a, z)| (a as u32, z as u32))
        .collect();
    // Each leaf stands in the rack that holds most of its nodes (the first of equals).
    let leaf_rack: Vec<u32> = leaf_members
        .iter()
        .map(|&(first, last)| {
            let mut best = (0, rack_of(first));
            let mut run = (0, rack_of(first));
            for i in first..=last {
                let rack = rack_of(i);
                if rack != run.1 {
                    run = (0, rack);
                }
                run.0 += 1;
                if run.0 > best.0 {
                    best = run;
                }
            }
            best.1
        })
        .collect();
    let leaves: Vec<DeviceId> = leaf_members
        .iter()
        .enumerate()
        .map(|(j, &(first, last))| {
            let (lo, hi) = (
                b.x_of(node_ids[first as usize]),
                b.x_of(node_ids[last as usize]),
            );
            let rack = leaf_rack[j] as usize;
            b.switch(
                numbered("leaf", j, leaf_count),
                Pos::new((lo + hi) / 2.0, y_leaf),
                Some(rack_groups[rack]),
                &model,
                SwitchRole::Leaf,
                None,
            )
        })
        .collect();

    let mut down = vec![0u32; leaf_count];
    for i in 0..n {
        for k in 0..nics {
            let j = leaf_of(i, k);
            let length = if leaf_rack[j] == rack_of(i) {
                LengthClass::InRack
            } else {
                LengthClass::CrossRack
            };
            b.link_to_switch(node_ids[i as usize], k, leaves[j], &plan.node_wire, length);
            down[j] += 1;
        }
    }
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
    notes.push(sizing_note(&down, &ups, &ratio, upper, pods.len()));
    // Three tiers where two hold every leaf: the core is bought for growth, and says so.
    if tiers == 3 && leaf_count <= radix as usize {
        notes.push(format!(
            "Two tiers would hold these {leaf_count} leaves (up to {radix} under `{}` spines): \
             the core tier here is for growth beyond them.",
            plan.part
        ));
    }
    notes.extend(plan.remarks.iter().cloned());
    Ok(b.finish(notes.join(" "), catalog))
}

fn sizing_note(down: &[u32], ups: &[u32], ratio: &str, upper: Upper, pods: usize) -> String {
    let mut s = format!(
        "{} ({}: {ratio}), {}",
        count_of(down.len(), "leaf", "leaves"),
        leaf_ports(down, ups),
        count_of(upper.spines, "spine", "spines")
    );
    if pods > 0 {
        s.push_str(&format!(
            " in {}, {}",
            count_of(pods, "pod", "pods"),
            count_of(upper.cores, "core switch", "core switches")
        ));
    }
    s.push('.');
    s
}

/// The ports the leaves use, down to nodes and up to spines, as built: "48 ports down, 16
/// up" when every leaf is alike, else each kind with how many leaves have it ("5 with 48
/// ports down and 16 up, 1 with 16 down and 6 up"), in order of first appearance.
pub(super) fn leaf_ports(down: &[u32], ups: &[u32]) -> String {
    let mut kinds: Vec<((u32, u32), usize)> = Vec::new();
    for pair in down.iter().copied().zip(ups.iter().copied()) {
        match kinds.iter_mut().find(|(k, _)| *k == pair) {
            Some((_, n)) => *n += 1,
            None => kinds.push((pair, 1)),
        }
    }
    match &kinds[..] {
        [((d, u), _)] => format!("{d} ports down, {u} up"),
        _ => kinds
            .iter()
            .enumerate()
            .map(|(i, ((d, u), n))| {
                if i == 0 {
                    format!("{n} with {d} ports down and {u} up")
                } else {
                    format!("{n} with {d} down and {u} up")
                }
            })
            .collect::<Vec<_>>()
            .join(", "),
    }
}

/// Contiguous ranges of at most `size` covering 0..count.
pub(super) fn chunks(count: usize, size: usize) -> Vec<Range<usize>> {
    let size = size.max(1);
    (0..count.div_ceil(size))
        .map(|i| i * size..((i + 1) * size).min(count))
        .collect()
}

/// Every node port on one switch (the fabric degenerates to a star).
fn single_switch(
    b: &mut Builder,
    node: &NodeProfile,
    n: u32,
    plan: &SwitchPlan,
    model: &SwitchModel,
) {
    let per_rack = node.nodes_per_rack();
    let racks = n.div_ceil(per_rack) as usize;
    let groups: Vec<GroupId> = (0..racks)
        .map(|r| b.group(numbered("rack", r, racks), GroupKind::Rack, None))
        .collect();
    let nodes: Vec<DeviceId> = (0..n)
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
    let leaf = b.switch(
        "leaf-01".to_string(),
        Pos::new((lo + hi) / 2.0, row_y(0)),
        Some(groups[0]),
        model,
        SwitchRole::Leaf,
        None,
    );
    for (i, &id) in nodes.iter().enumerate() {
        let length = if (i as u32) < per_rack {
            LengthClass::InRack
        } else {
            LengthClass::CrossRack
        };
        for k in 0..node.nic_count {
            b.link_to_switch(id, k, leaf, &plan.node_wire, length);
        }
    }
}

/// Rail leaves over blocks of nodes: block `s` gets one leaf per rail, and NIC k of each
/// of its nodes goes to the rail-k leaf. Leaves come back block-major (block, rail), with
/// the number of node links each took.
pub(super) struct RailBlocks<'a> {
    pub nodes: &'a [DeviceId],
    pub rails: u32,
    pub block: u32,
    pub model: &'a SwitchModel,
    pub wire: &'a Wire,
    pub y: f32,
    /// Per block: the group its leaves join and the length of its node links.
    pub groups: &'a [Option<GroupId>],
    pub lengths: &'a [LengthClass],
}

impl RailBlocks<'_> {
    pub fn build(&self, b: &mut Builder) -> (Vec<DeviceId>, Vec<u32>) {
        let blocks = chunks(self.nodes.len(), self.block as usize);
        let mut leaves = Vec::with_capacity(blocks.len() * self.rails as usize);
        let mut down = Vec::with_capacity(leaves.capacity());
        for (s, range) in blocks.iter().enumerate() {
            let members = &self.nodes[range.clone()];
            let (lo, hi) = b.x_extent(members);
            let xs = spread(self.rails as usize, lo, hi);
            let first = leaves.len();
            for (k, &x) in xs.iter().enumerate() {
                let name = if blocks.len() == 1 {
                    format!("leaf-r{k}")
                } else {
                    format!("leaf-su{}-r{k}", num(s, blocks.len()))
                };
                leaves.push(b.switch(
                    name,
                    Pos::new(x, self.y),
                    self.groups.get(s).copied().flatten(),
                    self.model,
                    SwitchRole::Leaf,
                    Some(k as u32),
                ));
                down.push(members.len() as u32);
            }
            let length = self
                .lengths
                .get(s)
                .copied()
                .unwrap_or(LengthClass::CrossRack);
            for &node in members {
                for k in 0..self.rails {
                    b.link_to_switch(node, k, leaves[first + k as usize], self.wire, length);
                }
            }
        }
        (leaves, down)
    }
}

/// Scalable units of nodes with their racks, groups and positions, for the rail templates.
struct UnitLayout {
    nodes: Vec<DeviceId>,
    /// Per unit: the group its leaves join and the length of node-to-leaf links.
    leaf_groups: Vec<Option<GroupId>>,
    lengths: Vec<LengthClass>,
}

/// Lays out `n` nodes in units of `unit` nodes, each unit in racks, units in pods of
/// `units_per_pod` (if any); a unit that fits one rack takes its leaves into that rack.
fn lay_out_units(
    b: &mut Builder,
    node: &NodeProfile,
    n: u32,
    unit: u32,
    pod_groups: &[Option<GroupId>],
    units_per_pod: usize,
    y: f32,
) -> UnitLayout {
    let per_rack = node.nodes_per_rack();
    let units = chunks(n as usize, unit as usize);
    let total_racks: usize = units
        .iter()
        .map(|r| (r.len() as u32).div_ceil(per_rack) as usize)
        .sum();
    let mut nodes = Vec::with_capacity(n as usize);
    let mut leaf_groups = Vec::with_capacity(units.len());
    let mut lengths = Vec::with_capacity(units.len());
    let mut rack_index = 0usize;
    for (s, range) in units.iter().enumerate() {
        let parent = pod_groups.get(s / units_per_pod.max(1)).copied().flatten();
        let racks_here = (range.len() as u32).div_ceil(per_rack) as usize;
        let one_rack = racks_here == 1;
        let su_group = if one_rack && units.len() == 1 {
            parent
        } else {
            Some(b.group(
                numbered("su", s, units.len()),
                GroupKind::ScalableUnit,
                parent,
            ))
        };
        let racks: Vec<GroupId> = (0..racks_here)
            .map(|r| {
                b.group(
                    numbered("rack", rack_index + r, total_racks),
                    GroupKind::Rack,
                    su_group,
                )
            })
            .collect();
        for (local, i) in range.clone().enumerate() {
            let rack = local as u32 / per_rack;
            let x = node_x(i as u32, (rack_index + rack as usize) as u32, s as u32);
            nodes.push(b.device(
                numbered("node", i, n as usize),
                Pos::new(x, y),
                Some(racks[rack as usize]),
                node.device_kind(None),
            ));
        }
        rack_index += racks_here;
        if one_rack {
            leaf_groups.push(Some(racks[0]));
            lengths.push(LengthClass::InRack);
        } else {
            leaf_groups.push(su_group);
            lengths.push(LengthClass::CrossRack);
        }
    }
    UnitLayout {
        nodes,
        leaf_groups,
        lengths,
    }
}

/// Rail-optimized: per scalable unit one leaf per rail (NIC k of every node on rail k),
/// half their ports down at 1:1; spines above joining all leaves of all rails (and for
/// three tiers, pods of units under a core).
pub(super) fn rail_optimized(
    spec: &TemplateSpec,
    catalog: &Catalog,
) -> Result<Design, GenerateError> {
    check_tiers(spec, &[2, 3])?;
    let (node, n, plan) = resolve_fabric_node(spec, catalog)?;
    let rails = node.nic_count;
    let radix = plan.radix;
    let split = Split::new(radix, spec.oversubscription)?;
    let ratio = Split::ratio_label(spec.oversubscription);
    let units = div_ceil(u64::from(n), u64::from(split.down));
    let leaf_count = units * u64::from(rails);
    let spine_down = u64::from(pod_spine_down(radix));
    // A pod holds whole units when a unit's rail leaves fit a pod spine's down ports.
    let (units_per_pod, leaves_per_pod) = if u64::from(rails) <= spine_down {
        let upp = spine_down / u64::from(rails);
        (upp, upp * u64::from(rails))
    } else {
        (1, spine_down)
    };
    match spec.tiers {
        2 if leaf_count > u64::from(radix) => {
            let max_units = u64::from(radix) / u64::from(rails);
            return Err(infeasible(format!(
                "a 2-tier rail-optimized fabric of `{}` ({radix} ports) at {ratio} reaches at most {radix} leaves: {max_units} scalable units of {} nodes = {} nodes with {rails} rails; {n} nodes need {units} units ({leaf_count} leaves). Use --tiers 3 or a switch with more ports",
                plan.part,
                split.down,
                max_units * u64::from(split.down)
            )));
        }
        3 if div_ceil(leaf_count, leaves_per_pod) > u64::from(radix) => {
            return Err(infeasible(format!(
                "a 3-tier rail-optimized fabric of `{}` ({radix} ports) at {ratio} holds at most {radix} pods × {leaves_per_pod} leaves × {} nodes per leaf = {} NIC ports; {n} nodes × {rails} rails bring {}. Use a switch with more ports",
                plan.part,
                split.down,
                u64::from(radix) * leaves_per_pod * u64::from(split.down),
                u64::from(n) * u64::from(rails)
            )));
        }
        _ => {}
    }
    let model = switch_model(&plan);
    let mut b = Builder::new(format!(
        "rail-optimized{}: {n} × {}{}",
        oversubscribed(spec),
        node.part,
        on_switches(&plan)
    ));
    let mut notes = vec![format!(
        "Rail-optimized: NIC k of every node on rail k. {}",
        fabric_summary(&node, n, &plan)
    )];
    let single_leaf = leaf_count == 1;
    let tiers = if single_leaf {
        1
    } else {
        usize::from(spec.tiers)
    };
    let pods: Vec<Range<usize>> = if tiers == 3 {
        chunks(leaf_count as usize, leaves_per_pod as usize)
    } else {
        Vec::new()
    };
    let pod_groups: Vec<Option<GroupId>> = (0..pods.len())
        .map(|p| Some(b.group(numbered("pod", p, pods.len()), GroupKind::Pod, None)))
        .collect();
    let layout = lay_out_units(
        &mut b,
        &node,
        n,
        split.down,
        &pod_groups,
        units_per_pod as usize,
        row_y(tiers),
    );
    let (leaves, down) = RailBlocks {
        nodes: &layout.nodes,
        rails,
        block: split.down,
        model: &model,
        wire: &plan.node_wire,
        y: row_y(tiers - 1),
        groups: &layout.leaf_groups,
        lengths: &layout.lengths,
    }
    .build(&mut b);
    if single_leaf {
        notes.push("One rail and one scalable unit: a single leaf, no spines.".to_string());
    } else {
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
            "{units} scalable unit{} of up to {} nodes, {rails} rail leaves each; {}",
            if units == 1 { "" } else { "s" },
            split.down,
            sizing_note(&down, &ups, &ratio, upper, pods.len())
        ));
        // A unit smaller than a leaf's down ports leaves each rail leaf part-used: said, so
        // that a bill of half-empty leaves is not taken for the least the nodes need.
        if units == 1 && n < split.down {
            let used = down[0] + ups[0];
            notes.push(format!(
                "Each rail leaf uses {used} of its {radix} ports for {n} nodes ({} free, room \
                 for {} more nodes per rail); for these nodes alone a fat tree of the same \
                 switches (`generate fat-tree`) needs fewer of them.",
                radix - used,
                split.down - n
            ));
        }
    }
    notes.extend(plan.remarks.iter().cloned());
    Ok(b.finish(notes.join(" "), catalog))
}

/// Rail-only: one switch per rail and no spine, as long as a rail fits one switch. Beyond
/// that we keep the rails apart and give each rail its own two-tier Clos (rail leaves with
/// rail spines); traffic between rails still crosses inside the node, over NVLink.
/// `--tiers 1` forbids the rail spines and refuses instead.
pub(super) fn rail_only(spec: &TemplateSpec, catalog: &Catalog) -> Result<Design, GenerateError> {
    check_tiers(spec, &[1, 2])?;
    let (node, n, plan) = resolve_fabric_node(spec, catalog)?;
    let rails = node.nic_count;
    let radix = plan.radix;
    let model = switch_model(&plan);
    let mut b = Builder::new(format!(
        "rail-only{}: {n} × {}{}",
        oversubscribed(spec),
        node.part,
        on_switches(&plan)
    ));
    let mut notes = vec![format!(
        "Rail-only: NIC k of every node on the rail-k switch, no spine; traffic between rails crosses inside the node. {}",
        fabric_summary(&node, n, &plan)
    )];

    if n <= radix {
        let layout = lay_out_units(&mut b, &node, n, n, &[], 1, row_y(1));
        RailBlocks {
            nodes: &layout.nodes,
            rails,
            block: n,
            model: &model,
            wire: &plan.node_wire,
            y: row_y(0),
            groups: &layout.leaf_groups,
            lengths: &layout.lengths,
        }
        .build(&mut b);
        notes.push(format!(
            "{rails} rail switches, {n} of {radix} ports used on each."
        ));
        notes.extend(plan.remarks.iter().cloned());
        return Ok(b.finish(notes.join(" "), catalog));
    }
    if spec.tiers == 1 {
        return Err(infeasible(format!(
            "rail-only with one tier puts a whole rail on one switch: {n} nodes need {n} ports per rail, but `{}` has {radix}. Use --tiers 2 for per-rail spines, or rail-optimized",
            plan.part
        )));
    }
    let split = Split::new(radix, spec.oversubscription)?;
    let ratio = Split::ratio_label(spec.oversubscription);
    let per_rail = div_ceil(u64::from(n), u64::from(split.down));
    if per_rail > u64::from(radix) {
        return Err(infeasible(format!(
            "rail-only with per-rail spines of `{}` ({radix} ports) at {ratio} holds {radix} leaves × {} nodes = {} nodes per rail; {n} nodes need {per_rail} leaves per rail. Use rail-optimized with --tiers 3, or a switch with more ports",
            plan.part,
            split.down,
            u64::from(radix) * u64::from(split.down)
        )));
    }
    let layout = lay_out_units(&mut b, &node, n, split.down, &[], 1, row_y(2));
    let (leaves, down) = RailBlocks {
        nodes: &layout.nodes,
        rails,
        block: split.down,
        model: &model,
        wire: &plan.node_wire,
        y: row_y(1),
        groups: &layout.leaf_groups,
        lengths: &layout.lengths,
    }
    .build(&mut b);
    let layer = Layer {
        model: &model,
        radix,
        wire: &plan.fabric_wire,
    };
    let mut spines = 0;
    let all_ups: Vec<u32> = down.iter().map(|&d| split.uplinks_for(d)).collect();
    let (lo, hi) = b.x_extent(&leaves);
    for k in 0..rails as usize {
        let rail_leaves: Vec<DeviceId> = leaves
            .iter()
            .skip(k)
            .step_by(rails as usize)
            .copied()
            .collect();
        let ups: Vec<u32> = down
            .iter()
            .skip(k)
            .step_by(rails as usize)
            .map(|&d| split.uplinks_for(d))
            .collect();
        let plane = b.group(format!("rail-{k}"), GroupKind::Plane, None);
        // Rails share the leaves' span, so each rail's spines take their own slice of it.
        let slice = (hi - lo) / rails as f32;
        let span = (lo + slice * k as f32, lo + slice * (k + 1) as f32);
        let upper = two_tier(
            &mut b,
            &rail_leaves,
            &ups,
            &layer,
            &format!("spine-r{k}"),
            (row_y(0), Some(span)),
            Some(plane),
        );
        spines += upper.spines;
    }
    notes.push(format!(
        "A rail needs {per_rail} leaves, so each rail is its own 2-tier Clos: {} leaves ({}: {ratio}), {spines} rail spines in all.",
        leaves.len(),
        leaf_ports(&down, &all_ups)
    ));
    notes.push(rail_radix_note(catalog, &plan, n));
    notes.extend(plan.remarks.iter().cloned());
    Ok(b.finish(notes.join(" "), catalog))
}

/// Rail-only saves spines only while a rail fits one switch. Past that it builds about what
/// rail-optimized does; the note says so and names the smallest catalog switch of the same
/// family whose ports at the rail's rate hold all `nodes` of a rail.
fn rail_radix_note(catalog: &Catalog, plan: &SwitchPlan, nodes: u32) -> String {
    let rate = plan.node_wire.rate.gbit_s();
    let family = catalog.switch(&plan.part).map(|s| s.family);
    let wider = catalog
        .parts()
        .filter_map(|p| match &p.spec {
            crate::model::catalog::PartSpec::Switch(s) => Some((&p.id, s)),
            _ => None,
        })
        .filter(|(_, s)| Some(s.family) == family || s.family == NetFamily::Both)
        .filter_map(|(id, s)| {
            let port = s.port_gbit_s.gbit_s();
            // Ports at the rail's rate: whole ports, or ports broken out down to it.
            let per_port = (port / rate).round();
            let fits = port >= rate
                && (per_port <= f64::from(s.max_breakout.max(1)))
                && (port / per_port - rate).abs() < 1e-6 * rate;
            let ports = f64::from(s.ports) * per_port;
            (fits && ports >= f64::from(nodes)).then_some((id, ports as u32))
        })
        .min_by_key(|&(_, ports)| ports);
    let why = format!(
        "Past one switch per rail, each rail is a Clos of its own, about the switches \
         rail-optimized builds: rail-only saves spines while a rail's {nodes} nodes fit one \
         switch"
    );
    match wider {
        Some((id, ports)) => format!("{why}, as on `{id}` ({ports} ports at {rate} Gb/s)."),
        None => format!("{why}; the catalog has no switch with {nodes} ports at {rate} Gb/s."),
    }
}

/// " 2:1" in a design's name when its fabric is oversubscribed, so that two designs of the
/// same nodes read apart on a slide; nothing at 1:1.
/// The switches and network in a generated fabric's name, so that two options of the same
/// nodes read apart in a report ("… on sn5600 (RoCEv2)", "… on qm9700 (InfiniBand)").
fn on_switches(plan: &SwitchPlan) -> String {
    format!(" on {} ({})", plan.part, plan.node_wire.tech.label())
}

fn oversubscribed(spec: &TemplateSpec) -> String {
    if spec.oversubscription > 1.0 {
        format!(" {}", Split::ratio_label(spec.oversubscription))
    } else {
        String::new()
    }
}
