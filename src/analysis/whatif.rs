//! What-if failures: which links a failed switch, rail or plane takes down, the healthy
//! variant of a design (every link back up), and the figures compared between the two.

use super::bisection::bisection;
use super::collective::{CollectiveQuery, Op, Workspace, collective_in};
use crate::model::{
    Bandwidth, Bytes, Catalog, Design, DeviceId, DeviceKind, GroupId, GroupKind, LinkId, LinkState,
};
use std::collections::BTreeSet;
use std::sync::Arc;

/// What to mark failed or degraded.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Scope {
    Link(LinkId),
    /// A device and so every link on it (for a switch: the whole box).
    Device(DeviceId),
    /// Every link of every switch serving this rail.
    Rail(u32),
    /// Every link of every switch in this plane group.
    Plane(GroupId),
}

/// The links a scope covers, in id order (empty when the scope names nothing).
pub fn links_in_scope(design: &Design, scope: Scope) -> Vec<LinkId> {
    let switches: BTreeSet<DeviceId> = match scope {
        Scope::Link(id) => {
            return design.link(id).map(|l| vec![l.id]).unwrap_or_default();
        }
        Scope::Device(id) => BTreeSet::from([id]),
        Scope::Rail(rail) => design
            .devices
            .iter()
            .filter(|d| matches!(&d.kind, DeviceKind::Switch(s) if s.rail == Some(rail)))
            .map(|d| d.id)
            .collect(),
        Scope::Plane(group) => design
            .devices
            .iter()
            .filter(|d| d.group == Some(group) && matches!(d.kind, DeviceKind::Switch(_)))
            .map(|d| d.id)
            .collect(),
    };
    design
        .links
        .iter()
        .filter(|l| switches.contains(&l.a.device) || switches.contains(&l.b.device))
        .map(|l| l.id)
        .collect()
}

/// The rails that switches serve, in order.
pub fn rails(design: &Design) -> Vec<u32> {
    let rails: BTreeSet<u32> = design
        .devices
        .iter()
        .filter_map(|d| match &d.kind {
            DeviceKind::Switch(s) => s.rail,
            _ => None,
        })
        .collect();
    rails.into_iter().collect()
}

/// Plane groups with at least one switch, as (id, name).
pub fn planes(design: &Design) -> Vec<(GroupId, String)> {
    let with_switches: BTreeSet<GroupId> = design
        .devices
        .iter()
        .filter(|d| matches!(d.kind, DeviceKind::Switch(_)))
        .filter_map(|d| d.group)
        .collect();
    design
        .groups
        .iter()
        .filter(|g| g.kind == GroupKind::Plane && with_switches.contains(&g.id))
        .map(|g| (g.id, g.name.clone()))
        .collect()
}

/// How many links are failed and how many degraded.
pub fn unhealthy_counts(design: &Design) -> (usize, usize) {
    design
        .links
        .iter()
        .fold((0, 0), |(failed, degraded), l| match l.state {
            LinkState::Up => (failed, degraded),
            LinkState::Failed => (failed + 1, degraded),
            LinkState::Degraded { .. } => (failed, degraded + 1),
        })
}

/// "what-if: 16 links failed, 2 degraded" when any link is down or slowed, for titles and
/// strips that a reader might take for the healthy design; None when all are up.
pub fn what_if_text(design: &Design) -> Option<String> {
    let (failed, degraded) = unhealthy_counts(design);
    let count = |n: usize| crate::model::units::count_of(n, "link", "links");
    match (failed, degraded) {
        (0, 0) => None,
        (f, 0) => Some(format!("what-if: {} failed", count(f))),
        (0, d) => Some(format!("what-if: {} degraded", count(d))),
        (f, d) => Some(format!("what-if: {} failed, {d} degraded", count(f))),
    }
}

/// The same design with every link up; None when it already is.
pub fn healthy(design: &Design) -> Option<Design> {
    if design.links.iter().all(|l| l.state == LinkState::Up) {
        return None;
    }
    let mut h = design.clone();
    for l in &mut h.links {
        l.state = LinkState::Up;
    }
    Some(h)
}

/// Collective figures in a what-if comparison.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct CollectiveFigures {
    pub time_us: f64,
    pub busbw_gbyte_s: f64,
}

/// The figures a what-if compares: bisection, an all-reduce and an all-to-all of one size.
/// A collective that cannot run (the failure cut the GPUs apart) is None.
#[derive(Debug, Clone, PartialEq)]
pub struct Figures {
    pub bisection: Bandwidth,
    pub all_reduce: Option<CollectiveFigures>,
    pub all_to_all: Option<CollectiveFigures>,
}

/// Computes the figures, with the routing and algorithm of `base` (its op is replaced).
pub fn figures(design: &Design, catalog: &Catalog, base: &CollectiveQuery) -> Figures {
    figures_in(design, catalog, base, &Workspace::default())
}

/// `figures`, with the collective model's memory from `workspace`.
fn figures_in(
    design: &Design,
    catalog: &Catalog,
    base: &CollectiveQuery,
    workspace: &Workspace,
) -> Figures {
    let run = |op| {
        let mut q = base.clone();
        q.op = op;
        collective_in(design, catalog, &q, workspace)
            .ok()
            .map(|r| CollectiveFigures {
                time_us: r.time_us,
                busbw_gbyte_s: r.busbw_gbyte_s,
            })
    };
    Figures {
        bisection: bisection(design, catalog).value,
        all_reduce: run(Op::AllReduce),
        all_to_all: run(Op::AllToAll),
    }
}

/// The query used when the sidebar's collective is switched off.
pub fn default_query(bytes: Bytes) -> CollectiveQuery {
    CollectiveQuery::new(Op::AllReduce, bytes)
}

/// The current design against its healthy variant.
#[derive(Debug, Clone)]
pub struct WhatIfDelta {
    pub failed: usize,
    pub degraded: usize,
    pub current: Figures,
    pub healthy: Arc<Figures>,
}

/// The healthy variant last evaluated, kept by its owner between calls: failing one more link
/// changes the current design, not the healthy one, so its figures are reused.
#[derive(Default)]
pub struct HealthyCache {
    last: Option<(Design, CollectiveQuery, Arc<Figures>)>,
}

/// None when every link is up. `query`: the collective shown (its size, algorithm and
/// routing), or 1 GiB with NCCL's choice when none is. `current`: the current design's
/// figures when the caller has them already, else computed here, with the collective model's
/// memory from `workspace`.
pub fn delta(
    design: &Design,
    catalog: &Catalog,
    query: Option<&CollectiveQuery>,
    current: Option<Figures>,
    cache: &mut HealthyCache,
    workspace: &Workspace,
) -> Option<WhatIfDelta> {
    let healthy_design = healthy(design)?;
    let query = query
        .cloned()
        .unwrap_or_else(|| default_query(Bytes(1 << 30)));
    let healthy_figures = match &cache.last {
        Some((d, q, f)) if *q == query && *d == healthy_design => Arc::clone(f),
        _ => {
            let f = Arc::new(figures_in(&healthy_design, catalog, &query, workspace));
            cache.last = Some((healthy_design, query.clone(), Arc::clone(&f)));
            f
        }
    };
    let (failed, degraded) = unhealthy_counts(design);
    Some(WhatIfDelta {
        failed,
        degraded,
        current: current.unwrap_or_else(|| figures_in(design, catalog, &query, workspace)),
        healthy: healthy_figures,
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::generate::{Template, TemplateSpec, generate};

    fn rail_optimized() -> Design {
        let mut spec = TemplateSpec::new(Template::RailOptimized);
        spec.nodes = Some(4);
        spec.node = Some(crate::model::PartId::new("dgx-h100"));
        generate(&spec, &Catalog::builtin()).expect("a rail-optimized fabric")
    }

    fn fail(design: &Design, links: &[LinkId]) -> Design {
        let mut d = design.clone();
        for l in &mut d.links {
            if links.contains(&l.id) {
                l.state = LinkState::Failed;
            }
        }
        d
    }

    /// The words that name a what-if in the exported diagram's title block and presentation
    /// mode's strip.
    #[test]
    fn a_what_if_is_counted_in_words() {
        let d = rail_optimized();
        assert_eq!(what_if_text(&d), None);
        let rail0 = links_in_scope(&d, Scope::Rail(0));
        let mut down = fail(&d, &rail0);
        let failed = rail0.len();
        assert_eq!(
            what_if_text(&down).as_deref(),
            Some(format!("what-if: {failed} links failed").as_str())
        );
        // Made slow instead of down: both counts.
        let first = rail0[0];
        down.link_mut(first).expect("a link").state = LinkState::Degraded { fraction: 0.5 };
        assert_eq!(
            what_if_text(&down).as_deref(),
            Some(format!("what-if: {} links failed, 1 degraded", failed - 1).as_str())
        );
    }

    #[test]
    fn losing_one_rail_costs_one_eighth_of_the_bisection_and_the_job_still_runs() {
        let catalog = Catalog::builtin();
        let design = rail_optimized();
        // A DGX H100 has 8 NICs: 8 rails, each with its own leaf (4 nodes fit one leaf).
        assert_eq!(rails(&design), (0..8).collect::<Vec<_>>());
        let rail3 = links_in_scope(&design, Scope::Rail(3));
        // Each of the 4 nodes' NIC 3 goes to rail 3's leaf, plus that leaf's uplinks.
        let node_links = rail3
            .iter()
            .filter_map(|&id| design.link(id))
            .filter(|l| {
                [l.a.device, l.b.device]
                    .iter()
                    .any(|&d| design.device(d).is_some_and(|d| d.kind.as_node().is_some()))
            })
            .count();
        assert_eq!(node_links, 4);

        let healthy_b = bisection(&design, &catalog).value.gbit_s();
        // 16 GPUs on one side, one 400G NIC each.
        assert_eq!(healthy_b, 6400.0);
        let failed = fail(&design, &rail3);
        let failed_b = bisection(&failed, &catalog).value.gbit_s();
        // Rail 3 carried 1/8 of every node's scale-out bandwidth: 6400 × 7/8.
        assert_eq!(failed_b, 5600.0);

        // The job still runs, on all 32 GPUs, somewhat slower.
        let q = default_query(Bytes(1 << 30));
        let before = figures(&design, &catalog, &q);
        let after = figures(&failed, &catalog, &q);
        let (b, a) = (
            before.all_reduce.expect("runs healthy"),
            after.all_reduce.expect("still runs with a rail down"),
        );
        assert!(a.time_us > b.time_us, "{a:?} vs {b:?}");
        assert!(after.all_to_all.is_some());
        assert_eq!(healthy(&failed).as_ref(), Some(&design));
        assert_eq!(healthy(&design), None);
        assert_eq!(unhealthy_counts(&failed), (rail3.len(), 0));
    }

    #[test]
    fn scopes_pick_the_links_they_name() {
        let design = rail_optimized();
        let link = design.links[0].id;
        assert_eq!(links_in_scope(&design, Scope::Link(link)), vec![link]);
        assert!(links_in_scope(&design, Scope::Link(LinkId(u32::MAX))).is_empty());
        let leaf = design
            .devices
            .iter()
            .find(|d| matches!(&d.kind, DeviceKind::Switch(s) if s.rail == Some(0)))
            .expect("rail 0's leaf");
        let of_leaf = links_in_scope(&design, Scope::Device(leaf.id));
        assert_eq!(of_leaf.len(), design.links_of(leaf.id).count());
        // Rail 0 covers exactly its leaf's links here (one leaf per rail).
        assert_eq!(links_in_scope(&design, Scope::Rail(0)), of_leaf);
        assert!(links_in_scope(&design, Scope::Rail(99)).is_empty());
    }
}
