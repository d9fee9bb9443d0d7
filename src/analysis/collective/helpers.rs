//! Threads that share large evaluations with the calling thread.

use std::sync::OnceLock;

/// Kept helper threads, one fewer than the cores: the calling thread works too, and an idle
/// pool thread spins for a while before it sleeps, so a spare one would take a core from the
/// caller. None on one core, or where threads cannot be started (then all runs in place).
pub(crate) fn pool() -> Option<&'static rayon::ThreadPool> {
    static POOL: OnceLock<Option<rayon::ThreadPool>> = OnceLock::new();
    POOL.get_or_init(|| {
        let cores = std::thread::available_parallelism().map_or(1, |n| n.get());
        if cores < 2 {
            return None;
        }
        rayon::ThreadPoolBuilder::new()
            .num_threads(cores - 1)
            .thread_name(|i| format!("railyard-helper-{i}"))
            .build()
            .ok()
    })
    .as_ref()
}
