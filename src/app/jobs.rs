//! The one kind of background work in the designer: computations `Q -> R` on a thread of
//! their own, cached by key, each woken UI frame polling for what finished. A panic in a
//! computation ends that job with no result, never the thread or the window. The sidebar's
//! `Worker` (newest revision only), Compare, Plots, the layout search and Calibrate all run
//! on it. (Reading a large file when it is opened has a thread of its own: `opening`.)

use std::collections::{HashMap, HashSet};
use std::hash::Hash;
use std::sync::mpsc::{self, Receiver, Sender};
use std::sync::{Arc, Mutex};

/// Background computations `Q -> R` cached by key. It keeps a result per key (one per design
/// and size, say) and runs every job still wanted, in order.
pub struct Jobs<K, Q, R> {
    jobs: Sender<(K, Q)>,
    results: Receiver<(K, Option<Arc<R>>)>,
    /// Keys the UI still wants; the thread skips queued jobs for any other.
    wanted: Arc<Mutex<HashSet<K>>>,
    submitted: HashSet<K>,
    done: HashMap<K, Arc<R>>,
}

impl<K, Q, R> Jobs<K, Q, R>
where
    K: Clone + Eq + Hash + Send + 'static,
    Q: Send + 'static,
    R: Send + Sync + 'static,
{
    /// Starts the thread; `ctx` is woken after each result.
    pub fn spawn(
        name: &str,
        ctx: egui::Context,
        mut compute: impl FnMut(Q) -> R + Send + 'static,
    ) -> std::io::Result<Self> {
        let (job_tx, job_rx) = mpsc::channel::<(K, Q)>();
        let (result_tx, result_rx) = mpsc::channel();
        let wanted: Arc<Mutex<HashSet<K>>> = Arc::default();
        let still_wanted = Arc::clone(&wanted);
        std::thread::Builder::new()
            .name(name.to_string())
            .spawn(move || {
                // Ends when the UI side is dropped (the sender closes).
                while let Ok((key, query)) = job_rx.recv() {
                    let wanted = still_wanted
                        .lock()
                        .unwrap_or_else(|e| e.into_inner())
                        .contains(&key);
                    if !wanted {
                        continue;
                    }
                    // A panic in the analysis must not end the thread: report "no result".
                    let result =
                        std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| compute(query)))
                            .ok()
                            .map(Arc::new);
                    if result_tx.send((key, result)).is_err() {
                        return;
                    }
                    ctx.request_repaint();
                }
            })?;
        Ok(Self {
            jobs: job_tx,
            results: result_rx,
            wanted,
            submitted: HashSet::new(),
            done: HashMap::new(),
        })
    }

    /// Queues a job unless this key is already done or queued; `make` runs only if sent.
    pub fn request(&mut self, key: K, make: impl FnOnce() -> Q) {
        if self.submitted.contains(&key) {
            return;
        }
        self.wanted
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .insert(key.clone());
        // A send only fails if the thread died; then results just stop coming.
        let _ = self.jobs.send((key.clone(), make()));
        self.submitted.insert(key);
    }

    /// Takes finished results without blocking; true if any arrived.
    pub fn poll(&mut self) -> bool {
        let mut got = false;
        while let Ok((key, result)) = self.results.try_recv() {
            if !self.submitted.contains(&key) {
                continue; // Forgotten while it was computed.
            }
            match result {
                Some(result) => {
                    self.done.insert(key, result);
                    got = true;
                }
                // The computation panicked: forget the key, so nothing waits for it forever
                // (and it is not retried every frame either: `submitted` keeps it).
                None => {
                    self.wanted
                        .lock()
                        .unwrap_or_else(|e| e.into_inner())
                        .remove(&key);
                }
            }
        }
        got
    }

    pub fn get(&self, key: &K) -> Option<&Arc<R>> {
        self.done.get(key)
    }

    /// Queued or running and still wanted.
    pub fn is_pending(&self, key: &K) -> bool {
        !self.done.contains_key(key)
            && self.submitted.contains(key)
            && self
                .wanted
                .lock()
                .unwrap_or_else(|e| e.into_inner())
                .contains(key)
    }

    /// Forgets results and queued jobs whose key fails `keep` (stale revisions, closed tabs).
    pub fn retain(&mut self, keep: impl Fn(&K) -> bool) {
        self.done.retain(|k, _| keep(k));
        self.submitted.retain(|k| keep(k));
        self.wanted
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .retain(|k| keep(k));
    }
}
