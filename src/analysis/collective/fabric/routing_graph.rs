//! The routing graph over a fabric's transit devices, its twin classes and their quotient graph.

use super::build::DevLink;
use super::scratch::reuse;
use super::{Adj, AdjGroup, FxBuild, Vertex};
use crate::model::{Catalog, Design, DeviceKind};
use std::collections::HashMap;

/// The routing graph over transit devices, with its twin classes and their quotient graph.
#[derive(Default)]
pub(super) struct RoutingGraph {
    pub(super) adj_start: Vec<u32>,
    pub(super) adj: Vec<Adj>,
    pub(super) grp_start: Vec<u32>,
    pub(super) groups: Vec<AdjGroup>,
    pub(super) class: Vec<u32>,
    pub(super) class_count: u32,
    pub(super) class_adj_start: Vec<u32>,
    pub(super) class_adj: Vec<u32>,
    pub(super) in_network: Vec<bool>,
    pub(super) is_node: Vec<bool>,
}

impl RoutingGraph {
    /// Empty lists with room for a design of `n_dev` devices and `link_ends` routable link
    /// ends (`adj` and `groups` are kept lists to fill again), made on the calling thread,
    /// which will free them too.
    pub(super) fn with_capacity(
        n_dev: usize,
        link_ends: usize,
        (adj, groups): (Vec<Adj>, Vec<AdjGroup>),
    ) -> RoutingGraph {
        RoutingGraph {
            adj_start: Vec::with_capacity(n_dev + 1),
            adj: reuse(adj, link_ends),
            grp_start: Vec::with_capacity(n_dev + 1),
            groups: reuse(groups, link_ends),
            class: Vec::with_capacity(n_dev),
            class_count: 0,
            class_adj_start: Vec::with_capacity(n_dev + 1),
            class_adj: Vec::new(),
            in_network: Vec::with_capacity(n_dev),
            is_node: Vec::with_capacity(n_dev),
        }
    }

    /// Fills the lists (empty, made by `with_capacity` for this design).
    pub(super) fn fill<'d>(
        &mut self,
        design: &'d Design,
        catalog: &Catalog,
        transit: &[bool],
        links_of: &(dyn Fn(usize) -> &'d [DevLink] + Sync),
    ) {
        let RoutingGraph {
            mut adj_start,
            mut adj,
            mut grp_start,
            mut groups,
            mut class,
            mut class_adj_start,
            mut class_adj,
            mut in_network,
            mut is_node,
            ..
        } = std::mem::take(self);
        let n_dev = design.devices.len();
        // Routing graph over transit devices: each one's transit neighbours, in link order.
        for i in 0..n_dev {
            adj_start.push(adj.len() as u32);
            if transit[i] {
                adj.extend(
                    links_of(i)
                        .iter()
                        .filter(|l| transit[l.far as usize])
                        .map(|l| Adj {
                            neighbour: l.far,
                            out: l.out,
                            arc_in: l.arc_in,
                        }),
                );
            }
        }
        adj_start.push(adj.len() as u32);
        let span = |i: usize| adj_start[i] as usize..adj_start[i + 1] as usize;

        // Twin classes: identical multisets of transit neighbours, numbered by first appearance.
        class.resize(n_dev, u32::MAX);
        let mut keys: HashMap<Vec<Vertex>, u32, FxBuild> = HashMap::default();
        let mut key: Vec<Vertex> = Vec::new();
        for i in 0..n_dev {
            if !transit[i] {
                continue;
            }
            key.clear();
            key.extend(adj[span(i)].iter().map(|a| a.neighbour));
            key.sort();
            let next = keys.len() as u32;
            class[i] = match keys.get(&key) {
                Some(&c) => c,
                None => {
                    keys.insert(key.clone(), next);
                    next
                }
            };
        }
        let class_count = keys.len() as u32;
        drop(keys);

        // Each adjacency sorted by (neighbour class, neighbour), in runs of one class.
        let mut class_rep = vec![u32::MAX; class_count as usize];
        let mut keyed: Vec<(u64, Adj)> = Vec::new();
        for i in 0..n_dev {
            grp_start.push(groups.len() as u32);
            let range = span(i);
            let base = range.start as u32;
            let list = &mut adj[range];
            sort_adjacency(list, &class, &mut keyed);
            let mut j = 0;
            while j < list.len() {
                let c = class[list[j].neighbour as usize];
                let s = j;
                while j < list.len() && class[list[j].neighbour as usize] == c {
                    j += 1;
                }
                groups.push(AdjGroup {
                    class: c,
                    start: base + s as u32,
                    end: base + j as u32,
                });
            }
            if transit[i] && class_rep[class[i] as usize] == u32::MAX {
                class_rep[class[i] as usize] = i as u32;
            }
        }
        grp_start.push(groups.len() as u32);

        for &rep in &class_rep {
            class_adj_start.push(class_adj.len() as u32);
            let (s, e) = (
                grp_start[rep as usize] as usize,
                grp_start[rep as usize + 1] as usize,
            );
            class_adj.extend(groups[s..e].iter().map(|g| g.class));
        }
        class_adj_start.push(class_adj.len() as u32);
        // SHARP set on a switch whose model has none (a file edited by hand) reduces nothing:
        // the checks say so.
        in_network.extend(design.devices.iter().map(|d| {
            matches!(&d.kind, DeviceKind::Switch(s) if s.features.in_network_reduction
                && catalog.switch(&s.model).is_none_or(|spec| spec.in_network_reduction))
        }));
        is_node.extend(
            design
                .devices
                .iter()
                .map(|d| matches!(d.kind, DeviceKind::GpuNode(_))),
        );
        *self = RoutingGraph {
            adj_start,
            adj,
            grp_start,
            groups,
            class,
            class_count,
            class_adj_start,
            class_adj,
            in_network,
            is_node,
        };
    }
}

/// Sorts an adjacency by (neighbour class, neighbour) exactly as `sort_unstable_by_key` does
/// (the order of parallel links decides ECMP's picks), faster where that order is plain: an
/// already sorted list stays as it is, and without parallel links any sort gives the one
/// order there is.
fn sort_adjacency(list: &mut [Adj], class: &[u32], keyed: &mut Vec<(u64, Adj)>) {
    let key = |a: &Adj| (u64::from(class[a.neighbour as usize]) << 32) | u64::from(a.neighbour);
    if list.is_sorted_by_key(key) {
        return;
    }
    keyed.clear();
    keyed.extend(list.iter().map(|a| (key(a), *a)));
    // The stable sort merges already sorted runs (links to leaves, then to cores...) in one
    // pass; with distinct keys its order is the only one.
    keyed.sort_by_key(|k| k.0);
    if keyed.windows(2).all(|w| w[0].0 != w[1].0) {
        for (slot, (_, a)) in list.iter_mut().zip(keyed.iter()) {
            *slot = *a;
        }
    } else {
        list.sort_unstable_by_key(|a| (class[a.neighbour as usize], a.neighbour));
    }
}
