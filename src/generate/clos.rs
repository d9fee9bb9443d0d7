//! The switch layers above the leaves: spines for two tiers, pods of spines plus a core for
//! three. Uplinks are dealt round-robin over the layer above, so every upper switch takes
//! within one link of the same load and a leaf with at least as many uplinks as there are
//! spines reaches every spine.

use super::GenerateError;
use super::builder::{Builder, SwitchModel, numbered, spread};
use super::parts::{Wire, infeasible};
use crate::model::{DeviceId, GroupId, LengthClass, Pos, SwitchRole};
use std::ops::Range;

/// A leaf's ports split into down (to nodes) and up (to spines) by the oversubscription
/// ratio r = down : up bandwidth. down = radix × r / (r + 1), rounded.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) struct Split {
    pub down: u32,
    pub up: u32,
}

impl Split {
    pub fn new(radix: u32, ratio: f64) -> Result<Split, GenerateError> {
        if !(ratio.is_finite() && ratio > 0.0) {
            return Err(infeasible(format!(
                "oversubscription must be a positive number (1 is non-blocking); got {ratio}"
            )));
        }
        if ratio < 1.0 {
            return Err(infeasible(format!(
                "oversubscription {ratio} would give a leaf more uplinks than downlinks: \
                 spines for bandwidth its nodes cannot send. 1 is non-blocking, the most a \
                 fat-tree uses"
            )));
        }
        if radix < 2 {
            return Err(infeasible(format!(
                "a leaf needs at least 2 ports to have both down- and uplinks; this one has {radix}"
            )));
        }
        let down = (f64::from(radix) * ratio / (ratio + 1.0)).round() as u32;
        let down = down.clamp(1, radix - 1);
        Ok(Split {
            down,
            up: radix - down,
        })
    }

    /// Uplinks for a leaf using `down_used` of its down ports: in proportion, rounded up, so
    /// a part-filled leaf keeps the ratio without buying spines for empty ports.
    pub fn uplinks_for(self, down_used: u32) -> u32 {
        let up = u64::from(down_used) * u64::from(self.up);
        up.div_ceil(u64::from(self.down)) as u32
    }

    /// "3:1", "1:1", "1.5:1".
    pub fn ratio_label(ratio: f64) -> String {
        format!("{}:1", crate::model::units::trim_number(ratio))
    }
}

pub(super) fn div_ceil(a: u64, b: u64) -> u64 {
    a.div_ceil(b.max(1))
}

/// One tier's switches and the wire between tiers.
pub(super) struct Layer<'a> {
    pub model: &'a SwitchModel,
    pub radix: u32,
    pub wire: &'a Wire,
}

/// Enough switches above `lower` to land every uplink (`ups[i]` from `lower[i]`), each
/// taking at most `capacity` of them, laid at height `y` over `span` (default: the lower
/// switches' span).
/// Returns the new switches and how many links each took.
#[allow(clippy::too_many_arguments)]
pub(super) fn stack(
    b: &mut Builder,
    lower: &[DeviceId],
    ups: &[u32],
    capacity: u32,
    layer: &Layer<'_>,
    role: SwitchRole,
    prefix: &str,
    (y, span): (f32, Option<(f32, f32)>),
    group: Option<GroupId>,
) -> (Vec<DeviceId>, Vec<u32>) {
    let total: u64 = ups.iter().map(|&u| u64::from(u)).sum();
    let count = div_ceil(total, u64::from(capacity)) as usize;
    if count == 0 {
        return (Vec::new(), Vec::new());
    }
    let (lo, hi) = span.unwrap_or_else(|| b.x_extent(lower));
    let xs = spread(count, lo, hi);
    let uppers: Vec<DeviceId> = xs
        .iter()
        .enumerate()
        .map(|(i, &x)| {
            b.switch(
                numbered(prefix, i, count),
                Pos::new(x, y),
                group,
                layer.model,
                role,
                None,
            )
        })
        .collect();
    let mut load = vec![0u32; count];
    let mut next = 0usize;
    for (&leaf, &n) in lower.iter().zip(ups) {
        for _ in 0..n {
            let j = next % count;
            b.link_next(leaf, uppers[j], layer.wire, LengthClass::CrossRack);
            load[j] += 1;
            next += 1;
        }
    }
    (uppers, load)
}

/// Sizes of the layers built above the leaves.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub(super) struct Upper {
    pub spines: usize,
    pub cores: usize,
}

/// Two tiers: one spine layer over all `leaves`. The caller has checked leaves ≤ radix.
pub(super) fn two_tier(
    b: &mut Builder,
    leaves: &[DeviceId],
    ups: &[u32],
    layer: &Layer<'_>,
    prefix: &str,
    row: (f32, Option<(f32, f32)>),
    group: Option<GroupId>,
) -> Upper {
    let (spines, _) = stack(
        b,
        leaves,
        ups,
        layer.radix,
        layer,
        SwitchRole::Spine,
        prefix,
        row,
        group,
    );
    Upper {
        spines: spines.len(),
        cores: 0,
    }
}

/// A pod spine gives half its ports to the pod's leaves and half to the core, so the
/// layers above the leaves are non-blocking; the leaves alone carry the oversubscription.
pub(super) fn pod_spine_down(radix: u32) -> u32 {
    (radix / 2).max(1)
}

/// Three tiers: per pod (a range of `leaves`), spines sized for the pod's uplinks; a core
/// layer above all pod spines. The caller has checked pods ≤ radix and each pod's leaves ≤
/// `pod_spine_down(radix)`.
#[allow(clippy::too_many_arguments)]
pub(super) fn three_tier(
    b: &mut Builder,
    leaves: &[DeviceId],
    ups: &[u32],
    pods: &[Range<usize>],
    pod_groups: &[Option<GroupId>],
    layer: &Layer<'_>,
    spine_y: f32,
    core_y: f32,
) -> Upper {
    let down = pod_spine_down(layer.radix);
    let up = layer.radix - down;
    let mut spines = Vec::new();
    let mut spine_ups = Vec::new();
    for (p, range) in pods.iter().enumerate() {
        let prefix = format!("spine-p{}", super::builder::num(p, pods.len()));
        let (pod_spines, load) = stack(
            b,
            &leaves[range.clone()],
            &ups[range.clone()],
            down,
            layer,
            SwitchRole::Spine,
            &prefix,
            (spine_y, None),
            pod_groups.get(p).copied().flatten(),
        );
        for (s, l) in pod_spines.into_iter().zip(load) {
            spines.push(s);
            spine_ups.push(Split { down, up }.uplinks_for(l));
        }
    }
    let (cores, _) = stack(
        b,
        &spines,
        &spine_ups,
        layer.radix,
        layer,
        SwitchRole::Core,
        "core",
        (core_y, None),
        None,
    );
    Upper {
        spines: spines.len(),
        cores: cores.len(),
    }
}
