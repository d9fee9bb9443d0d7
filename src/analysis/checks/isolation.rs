//! Connectivity: GPU nodes that cannot reach the rest of the GPUs over working links.

use super::checked::CheckedDesign;
use super::{Finding, Severity, codes::*};
use crate::model::units::count_of;
use crate::model::{DeviceId, DeviceKind, LinkState};

/// Union-find over device indexes, with path halving and union by size.
struct Components {
    parent: Vec<usize>,
    size: Vec<usize>,
}

impl Components {
    fn new(n: usize) -> Self {
        Self {
            parent: (0..n).collect(),
            size: vec![1; n],
        }
    }

    fn find(&mut self, mut x: usize) -> usize {
        while self.parent[x] != x {
            self.parent[x] = self.parent[self.parent[x]];
            x = self.parent[x];
        }
        x
    }

    fn union(&mut self, a: usize, b: usize) {
        let (mut a, mut b) = (self.find(a), self.find(b));
        if a == b {
            return;
        }
        if self.size[a] < self.size[b] {
            std::mem::swap(&mut a, &mut b);
        }
        self.parent[b] = a;
        self.size[a] += self.size[b];
    }
}

/// GPU nodes that cannot reach the rest of the GPUs over working links. The largest island
/// of GPUs counts as the cluster; every other island is reported (all of them when no
/// island is the largest outright).
pub(super) fn check_isolation(checked: &CheckedDesign<'_>, out: &mut Vec<Finding>) {
    let design = checked.design;
    let mut components = Components::new(design.devices.len());
    for link in &design.links {
        if link.state == LinkState::Failed {
            continue;
        }
        if let (Some(a), Some(b)) = (
            checked.index.get(link.a.device),
            checked.index.get(link.b.device),
        ) {
            components.union(a, b);
        }
    }
    // NVL72 trays reach each other through their domain's NVLink even when not drawn.
    for (i, device) in design.devices.iter().enumerate() {
        if let DeviceKind::GpuNode(node) = &device.kind
            && let Some(domain) = node.domain
            && let Some(d) = checked.index.get(domain)
            && matches!(design.devices[d].kind, DeviceKind::NvSwitchDomain(_))
        {
            components.union(i, d);
        }
    }

    // Islands keyed by root, in order of first appearance so reports are stable.
    let mut islands: Vec<(u64, Vec<DeviceId>)> = Vec::new();
    let mut island_of_root = vec![usize::MAX; design.devices.len()];
    for (i, device) in design.devices.iter().enumerate() {
        let DeviceKind::GpuNode(node) = &device.kind else {
            continue;
        };
        if node.gpu_count == 0 {
            continue;
        }
        let root = components.find(i);
        if island_of_root[root] == usize::MAX {
            island_of_root[root] = islands.len();
            islands.push((0, Vec::new()));
        }
        let island = island_of_root[root];
        islands[island].0 += u64::from(node.gpu_count);
        islands[island].1.push(device.id);
    }
    if islands.len() < 2 {
        return;
    }
    let total: u64 = islands.iter().map(|(g, _)| g).sum();
    let largest = islands.iter().map(|(g, _)| *g).max().unwrap_or(0);
    let unique_largest = islands.iter().filter(|(g, _)| *g == largest).count() == 1;
    for (gpus, nodes) in islands {
        if unique_largest && gpus == largest {
            continue;
        }
        let gpus_text = |n: u64| count_of(n as usize, "GPU", "GPUs");
        let message = if nodes.len() == 1 {
            format!(
                "{} ({}) has no working path to any of the other {}",
                checked.name(nodes[0]),
                gpus_text(gpus),
                gpus_text(total - gpus)
            )
        } else {
            format!(
                "{} nodes ({}; {}) have no working path to the other {}",
                nodes.len(),
                checked.names(&nodes),
                gpus_text(gpus),
                gpus_text(total - gpus)
            )
        };
        out.push(Finding {
            severity: Severity::Error,
            code: GPU_ISOLATED,
            message,
            devices: nodes,
            links: vec![],
            suggestion: String::new(),
        });
    }
}
