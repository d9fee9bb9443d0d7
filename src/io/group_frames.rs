//! The frames drawn around pods and scalable units, each with a caption ("su-03 · 32 nodes,
//! 256 GPUs"), so a large fabric can be explained from its own picture. The canvas and the
//! SVG export draw the same frames; each gives the boxes it draws its devices in.

use crate::model::{Design, DeviceKind, GroupId, GroupKind};
use std::collections::HashMap;

/// Room between a frame and the boxes inside it, in design units: a unit's frame sits inside
/// its pod's, and both inside the gaps templates leave between blocks (240) and tiers (260).
const UNIT_MARGIN: f32 = 24.0;
const POD_MARGIN: f32 = 56.0;

/// One frame: the group, its caption, and its rectangle (min and max corners, design units).
#[derive(Debug, Clone, PartialEq)]
pub struct GroupFrame {
    pub group: GroupId,
    /// A pod's frame (else a scalable unit's).
    pub pod: bool,
    pub caption: String,
    pub min: (f32, f32),
    pub max: (f32, f32),
}

/// A pod's or unit's box and tally while the devices are read.
struct Tally {
    min: (f32, f32),
    max: (f32, f32),
    nodes: u32,
    gpus: u64,
    switches: u32,
}

/// The frames of the pods and scalable units that hold a device `bounds` gives a box for
/// (`None`: not drawn on its own, e.g. folded away), pods first. `bounds(i)` is device i's
/// box as (min, max) corners.
pub fn group_frames(
    design: &Design,
    bounds: impl Fn(usize) -> Option<((f32, f32), (f32, f32))>,
) -> Vec<GroupFrame> {
    let framed = |kind: GroupKind| matches!(kind, GroupKind::Pod | GroupKind::ScalableUnit);
    let groups: HashMap<GroupId, (GroupKind, Option<GroupId>)> = design
        .groups
        .iter()
        .map(|g| (g.id, (g.kind, g.parent)))
        .collect();
    let mut tallies: HashMap<GroupId, Tally> = HashMap::new();
    for (i, d) in design.devices.iter().enumerate() {
        let Some(((x0, y0), (x1, y1))) = bounds(i) else {
            continue;
        };
        let mut at = d.group;
        // Bounded: a file's parent links could form a loop.
        for _ in 0..16 {
            let Some(g) = at else { break };
            let Some(&(kind, parent)) = groups.get(&g) else {
                break;
            };
            if framed(kind) {
                let t = tallies.entry(g).or_insert(Tally {
                    min: (x0, y0),
                    max: (x1, y1),
                    nodes: 0,
                    gpus: 0,
                    switches: 0,
                });
                t.min = (t.min.0.min(x0), t.min.1.min(y0));
                t.max = (t.max.0.max(x1), t.max.1.max(y1));
                match &d.kind {
                    DeviceKind::GpuNode(n) => {
                        t.nodes += 1;
                        t.gpus += u64::from(n.gpu_count);
                    }
                    DeviceKind::Switch(_) => t.switches += 1,
                    _ => {}
                }
            }
            at = parent;
        }
    }
    let mut frames: Vec<(bool, GroupFrame)> = design
        .groups
        .iter()
        .filter_map(|g| {
            let t = tallies.get(&g.id)?;
            let margin = match g.kind {
                GroupKind::Pod => POD_MARGIN,
                _ => UNIT_MARGIN,
            };
            let what = match (t.nodes, t.switches) {
                (0, s) => format!("{s} switches"),
                (n, _) => format!("{n} nodes, {} GPUs", t.gpus),
            };
            Some((
                g.kind == GroupKind::Pod,
                GroupFrame {
                    group: g.id,
                    pod: g.kind == GroupKind::Pod,
                    caption: format!("{} · {what}", g.name),
                    min: (t.min.0 - margin, t.min.1 - margin),
                    max: (t.max.0 + margin, t.max.1 + margin),
                },
            ))
        })
        .collect();
    // Pods first, so their frames lie under their units'.
    frames.sort_by_key(|(pod, _)| !*pod);
    frames.into_iter().map(|(_, f)| f).collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::generate::{Template, TemplateSpec, generate};
    use crate::model::Catalog;

    #[test]
    fn each_unit_of_a_fabric_has_a_frame_inside_its_pod() {
        let catalog = Catalog::builtin();
        let mut spec = TemplateSpec::new(Template::RailOptimized);
        spec.nodes = Some(256);
        spec.tiers = 3;
        let design = generate(&spec, &catalog).expect("generates");
        let frames = group_frames(&design, |i| {
            let p = design.devices[i].pos;
            Some(((p.x - 50.0, p.y - 28.0), (p.x + 50.0, p.y + 28.0)))
        });
        // 2 pods of 4 units of 32 DGX H100 (256 GPUs each); pods first.
        assert_eq!(frames.len(), 10);
        assert!(
            frames[0]
                .caption
                .starts_with("pod-01 · 128 nodes, 1024 GPUs")
        );
        let unit = frames
            .iter()
            .find(|f| f.caption.starts_with("su-01 "))
            .expect("su-01");
        assert_eq!(unit.caption, "su-01 · 32 nodes, 256 GPUs");
        let pod = &frames[0];
        assert!(
            pod.min.0 < unit.min.0 && pod.min.1 < unit.min.1,
            "{pod:?} {unit:?}"
        );
        // Nothing drawn, no frames.
        assert!(group_frames(&design, |_| None).is_empty());
    }
}
