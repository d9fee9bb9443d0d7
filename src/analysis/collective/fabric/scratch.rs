//! The largest lists of fabrics no longer needed, kept in the caller's workspace for the next
//! build to fill again.

use super::build::DevLink;
use super::{Adj, AdjGroup, ArcId, Fabric, Gpu, Nic, Resource, Vertex};
use crate::model::LinkId;

/// The largest lists of fabrics no longer needed, for the next build to fill again: the
/// sidebar builds the same design's fabric, give or take an edit, again and again, and
/// megabytes of fresh memory fault in page by page (whether freed memory stays mapped
/// depends on what else the allocator holds, so build times would swing with it).
pub(super) struct ReusableLists {
    pub(super) arc_usable: Vec<f64>,
    pub(super) arc_core: Vec<bool>,
    pub(super) arc_nvlink: Vec<bool>,
    pub(super) link_line: Vec<f64>,
    pub(super) link_ids: Vec<LinkId>,
    pub(super) link_latency_us: Vec<f64>,
    pub(super) port_line: Vec<f64>,
    pub(super) port_resource: Vec<Resource>,
    pub(super) gpus: Vec<Gpu>,
    pub(super) nics: Vec<Nic>,
    pub(super) other_access: Vec<(ArcId, ArcId, Vertex)>,
    pub(super) adj: Vec<Adj>,
    pub(super) groups: Vec<AdjGroup>,
    /// Build scratch: each link's ends, each device's links.
    pub(super) ends: Vec<[u32; 4]>,
    pub(super) dev_links: Vec<DevLink>,
}

impl ReusableLists {
    const NONE: ReusableLists = ReusableLists {
        arc_usable: Vec::new(),
        arc_core: Vec::new(),
        arc_nvlink: Vec::new(),
        link_line: Vec::new(),
        link_ids: Vec::new(),
        link_latency_us: Vec::new(),
        port_line: Vec::new(),
        port_resource: Vec::new(),
        gpus: Vec::new(),
        nics: Vec::new(),
        other_access: Vec::new(),
        adj: Vec::new(),
        groups: Vec::new(),
        ends: Vec::new(),
        dev_links: Vec::new(),
    };
}

/// The kept lists of one workspace, locked: a build takes them all, and a fabric gives its
/// own back when it is no longer needed.
#[derive(Default)]
pub(crate) struct Scratch {
    lists: std::sync::Mutex<ReusableLists>,
}

impl Default for ReusableLists {
    fn default() -> Self {
        ReusableLists::NONE
    }
}

impl Scratch {
    /// Takes every kept list (none left behind for a build running alongside).
    pub(super) fn take(&self) -> ReusableLists {
        self.lists
            .lock()
            .map(|mut kept| std::mem::replace(&mut *kept, ReusableLists::NONE))
            .unwrap_or(ReusableLists::NONE)
    }

    /// Keeps what `f` hands over (the latest lists replace those kept before).
    pub(super) fn give(&self, f: impl FnOnce(&mut ReusableLists)) {
        if let Ok(mut kept) = self.lists.lock() {
            f(&mut kept);
        }
    }
}

/// `list` emptied, with room for `n`: kept memory when it fits, fresh memory when the kept
/// list is far larger (a big design's lists are not held on to for a small one).
pub(super) fn reuse<T>(mut list: Vec<T>, n: usize) -> Vec<T> {
    if list.capacity() > 2 * n + 4096 {
        return Vec::with_capacity(n);
    }
    list.clear();
    list.reserve(n);
    list
}

impl Scratch {
    /// Keeps a fabric's lists for the next build (the fabric is left with empty ones).
    pub(crate) fn keep(&self, fab: &mut Fabric) {
        self.give(|k| {
            k.arc_usable = std::mem::take(&mut fab.arc_usable);
            k.arc_core = std::mem::take(&mut fab.arc_core);
            k.arc_nvlink = std::mem::take(&mut fab.arc_nvlink);
            k.link_line = std::mem::take(&mut fab.link_line);
            k.link_ids = std::mem::take(&mut fab.link_ids);
            k.link_latency_us = std::mem::take(&mut fab.link_latency_us);
            k.port_line = std::mem::take(&mut fab.port_line);
            k.port_resource = std::mem::take(&mut fab.port_resource);
            k.gpus = std::mem::take(&mut fab.gpus);
            k.nics = std::mem::take(&mut fab.nics);
            k.other_access = std::mem::take(&mut fab.other_access);
            k.adj = std::mem::take(&mut fab.adj);
            k.groups = std::mem::take(&mut fab.groups);
        });
    }
}
