//! Stopping a plan early: once its loads so far make it slower than a plan already costed.

use super::Router;
use crate::analysis::collective::load_ratio::{worst_ratio, worst_ratios};
use crate::analysis::collective::{Algorithm, Op};
use std::sync::Arc;

/// Lets a plan stop early (before or while routing its flows) once it cannot be the tuner's
/// choice at the wanted size: the fastest time found so far (µs as `f64` bits, shared by the planning
/// threads; infinity until a plan is costed) and the µs that each unit of the phase's worst
/// load-to-capacity ratio costs at that size at the least (the most favourable protocol).
/// Only for plans of one phase run once (tree, NVLS-tree, SHARP).
pub(crate) struct Prune {
    pub best_us_bits: Arc<std::sync::atomic::AtomicU64>,
    pub us_per_worst: f64,
    pub algorithm: Algorithm,
    pub op: Op,
}

impl Prune {
    /// The fastest time costed so far (µs) and its bits, once there is one.
    pub fn best_us(&self) -> Option<(f64, u64)> {
        let bits = self.best_us_bits.load(std::sync::atomic::Ordering::Relaxed);
        let best = f64::from_bits(bits);
        best.is_finite().then_some((best, bits))
    }
}

impl Router<'_> {
    /// Readies the router for the next plan, which may stop early as `prune` allows.
    pub fn start_plan(&mut self, prune: Option<Prune>) {
        self.prune = prune;
        self.pruned = false;
        self.prune_seen = f64::INFINITY.to_bits();
        self.floor_worst = 0.0;
    }

    /// Whether the plan under way is sure to be slower than the fastest plan costed so far;
    /// if so, marks it `pruned`. Loads only grow as it goes on and a phase's capacity on an
    /// arc is at most its usable rate (NVLS runs NVLink below it), so the largest load over
    /// usable rate on any arcs now bounds the phase's worst ratio from below; latency, never
    /// negative, is left out. Compares `floor_worst` first; with the phase's `loads` so far,
    /// also scans them, when the fastest time has changed since the last scan.
    pub fn stop_early(&mut self, loads: Option<&[f64]>) -> bool {
        let Some((prune, (best_us, bits))) = self
            .prune
            .as_ref()
            .and_then(|p| p.best_us().map(|best| (p, best)))
        else {
            return false;
        };
        if self.floor_worst * prune.us_per_worst > best_us {
            self.pruned = true;
            return true;
        }
        let Some(loads) = loads.filter(|_| bits != self.prune_seen) else {
            return false;
        };
        self.prune_seen = bits;
        let n = loads.len();
        // Plans are ranked as NCCL's tuner ranks them, on the fabric as it sees it.
        let worst = if self.fab.arc_core.is_empty() {
            worst_ratio(
                loads,
                &self.fab.arc_usable[..n],
                &self.fab.arc_nvlink[..n],
                |usable, _| usable,
            )
            .0
        } else {
            worst_ratios::<true>(
                loads,
                &self.fab.arc_usable[..n],
                &self.fab.arc_core[..n],
                &self.fab.arc_nvlink[..n],
                |usable, _| usable,
            )
            .1
        };
        self.pruned = worst * prune.us_per_worst > best_us;
        self.pruned
    }
}
