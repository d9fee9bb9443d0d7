//! Scratch memory of the collective model, owned by the caller: the lists of fabrics no longer
//! needed and per-arc load buffers, for the next evaluations to fill again. The sidebar
//! evaluates the same design, give or take an edit, again and again, and fresh memory is slow
//! to fill (the kernel maps and zeroes every page on its first write: at 131,072 GPUs some
//! 18,000 pages per evaluation). Each caller keeps its own, so two evaluations in one process
//! never share memory unless their caller hands them the same workspace; what is in it never
//! changes a result, only how fast it comes.

use super::CollectiveError;
use super::fabric::{self, Fabric};
use crate::model::{Catalog, Design};
use std::sync::Mutex;

/// What evaluations keep for the next ones. `Default` is empty; the planning threads of one
/// evaluation share it, so it locks inside.
#[derive(Default)]
pub struct Workspace {
    fabric_lists: fabric::Scratch,
    load_buffers: Mutex<Vec<Vec<f64>>>,
    /// How the work is split; tests force each way to compare them.
    pub(crate) strategy: Strategy,
}

/// How an evaluation splits its work: by the fabric's size unless a test forces a way.
#[derive(Debug, Clone, Copy, Default)]
pub(crate) struct Strategy {
    /// Build the fabric in two halves side by side (None: by its size).
    pub build_in_halves: Option<bool>,
    /// Threads that plan the algorithms (None: by the fabric's size).
    pub plan_threads: Option<usize>,
    /// Add every transfer on its own instead of a node's transfers in one sweep (the same
    /// sums: tests check that they are).
    pub transfer_by_transfer: bool,
}

/// How many spare load buffers are kept between evaluations: about what two planning threads
/// hold at once.
const KEPT_BUFFERS: usize = 4;

/// `n` zeros, written out rather than taken as fresh zero pages (`vec![0.0; n]`): buffers that
/// are added into (`+=`) would otherwise fault twice per page, once to map the shared zero
/// page on the read and again to copy it on the write.
pub(crate) fn zeroed(n: usize) -> Vec<f64> {
    let mut v = Vec::with_capacity(n);
    v.resize(n, 0.0);
    v
}

impl Workspace {
    /// A workspace whose evaluations split their work as `strategy` says.
    #[cfg(test)]
    pub(crate) fn with_strategy(strategy: Strategy) -> Workspace {
        Workspace {
            strategy,
            ..Workspace::default()
        }
    }

    /// Builds the design's fabric into the lists kept here.
    pub(crate) fn build_fabric(
        &self,
        design: &Design,
        catalog: &Catalog,
    ) -> Result<Fabric, CollectiveError> {
        fabric::build(
            design,
            catalog,
            &self.fabric_lists,
            self.strategy.build_in_halves,
        )
    }

    /// Keeps the lists of a fabric no longer needed (it is left empty).
    pub(crate) fn keep_fabric(&self, fab: &mut Fabric) {
        self.fabric_lists.keep(fab);
    }

    /// `n` zeroed loads in a kept buffer when one fits (large enough, not far too large),
    /// else in fresh memory.
    pub(crate) fn zeroed_loads(&self, n: usize) -> Vec<f64> {
        let kept = self.load_buffers.lock().ok().and_then(|mut pool| {
            let fits = |v: &Vec<f64>| v.capacity() >= n && v.capacity() <= 2 * n + (1 << 16);
            let i = pool.iter().rposition(fits)?;
            Some(pool.remove(i))
        });
        match kept {
            Some(mut v) => {
                v.clear();
                v.resize(n, 0.0);
                v
            }
            None => zeroed(n),
        }
    }

    /// Keeps a load buffer for later evaluations; the oldest kept one goes when there are
    /// too many.
    pub(crate) fn keep_loads(&self, loads: Vec<f64>) {
        if loads.capacity() == 0 {
            return;
        }
        let evicted = self.load_buffers.lock().ok().and_then(|mut pool| {
            pool.push(loads);
            (pool.len() > KEPT_BUFFERS).then(|| pool.remove(0))
        });
        // Freed outside the lock.
        drop(evicted);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A buffer kept from an earlier evaluation, whatever it held, comes back as zeros of
    /// the length asked for, and never more than a handful are kept.
    #[test]
    fn kept_buffers_come_back_zeroed() {
        let workspace = Workspace::default();
        for _ in 0..2 * KEPT_BUFFERS {
            workspace.keep_loads(vec![7.0; 1000]);
        }
        assert_eq!(
            workspace.load_buffers.lock().map_or(0, |p| p.len()),
            KEPT_BUFFERS
        );
        for n in [900, 1000] {
            let v = workspace.zeroed_loads(n);
            assert_eq!(v.len(), n);
            assert!(v.iter().all(|&x| x == 0.0));
        }
    }
}
