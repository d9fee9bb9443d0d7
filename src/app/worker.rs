//! Analysis off the UI thread. The UI submits a job keyed by the design's revision; a
//! background thread computes it, skipping jobs that a newer one has already superseded,
//! and wakes the UI with `request_repaint` when a result is ready. The UI only ever polls,
//! so no frame waits, and an idle window asks for no repaints at all.

use std::sync::Arc;
use std::sync::mpsc::{self, Receiver, Sender, TryRecvError};

/// A background computation `Q -> R` whose results are tagged with a key `K` (a revision).
pub struct Worker<K, Q, R> {
    jobs: Sender<(K, Q)>,
    results: Receiver<(K, Arc<R>)>,
    requested: Option<K>,
    latest: Option<(K, Arc<R>)>,
}

impl<K, Q, R> Worker<K, Q, R>
where
    K: Clone + PartialEq + Send + 'static,
    Q: Send + 'static,
    R: Send + Sync + 'static,
{
    /// Starts the thread. `compute` runs on it; `ctx` is woken after each result.
    pub fn spawn(
        name: &str,
        ctx: egui::Context,
        mut compute: impl FnMut(Q) -> R + Send + 'static,
    ) -> std::io::Result<Self> {
        let (job_tx, job_rx) = mpsc::channel::<(K, Q)>();
        let (result_tx, result_rx) = mpsc::channel();
        std::thread::Builder::new()
            .name(name.to_string())
            .spawn(move || {
                // Ends when the UI side is dropped (the sender closes).
                while let Ok(mut job) = job_rx.recv() {
                    // Only the newest waiting job matters: older revisions are already stale.
                    loop {
                        match job_rx.try_recv() {
                            Ok(newer) => job = newer,
                            Err(TryRecvError::Empty) => break,
                            Err(TryRecvError::Disconnected) => return,
                        }
                    }
                    let (key, query) = job;
                    let result = Arc::new(compute(query));
                    if result_tx.send((key, result)).is_err() {
                        return;
                    }
                    ctx.request_repaint();
                }
            })?;
        Ok(Self {
            jobs: job_tx,
            results: result_rx,
            requested: None,
            latest: None,
        })
    }

    /// Submits a job unless one with this key was already submitted. `make` is only called
    /// when the job is really sent, so an unchanged design costs nothing per frame.
    pub fn submit_if_new(&mut self, key: K, make: impl FnOnce() -> Q) {
        if self.requested.as_ref() == Some(&key) {
            return;
        }
        // A send only fails if the thread died; then results just stop coming.
        let _ = self.jobs.send((key.clone(), make()));
        self.requested = Some(key);
    }

    /// Takes finished results without blocking; returns true if a new one arrived.
    pub fn poll(&mut self) -> bool {
        let mut got = false;
        while let Ok(result) = self.results.try_recv() {
            self.latest = Some(result);
            got = true;
        }
        got
    }

    /// The newest finished result and its key.
    pub fn latest(&self) -> Option<(&K, &Arc<R>)> {
        self.latest.as_ref().map(|(k, r)| (k, r))
    }

    /// A newer job than the shown result is still being computed.
    pub fn is_pending(&self) -> bool {
        match (&self.requested, &self.latest) {
            (None, _) => false,
            (Some(_), None) => true,
            (Some(req), Some((done, _))) => req != done,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Runs one egui pass, discarding the font texture upload it produces.
    fn run_frame(ctx: &egui::Context, input: egui::RawInput, ui_fn: impl FnMut(&mut egui::Ui)) {
        let mut output = ctx.run_ui(input, ui_fn);
        output.textures_delta.clear();
    }
    use std::time::{Duration, Instant};

    fn wait_for<K, Q, R>(worker: &mut Worker<K, Q, R>) -> bool
    where
        K: Clone + PartialEq + Send + 'static,
        Q: Send + 'static,
        R: Send + Sync + 'static,
    {
        let start = Instant::now();
        while start.elapsed() < Duration::from_secs(10) {
            worker.poll();
            if !worker.is_pending() {
                return true;
            }
            std::thread::sleep(Duration::from_millis(2));
        }
        false
    }

    #[test]
    fn result_follows_the_newest_job() {
        let ctx = egui::Context::default();
        let mut worker: Worker<u64, u64, u64> = Worker::spawn("test", ctx, |n| {
            std::thread::sleep(Duration::from_millis(5));
            n * n
        })
        .expect("thread");
        assert!(!worker.is_pending());
        for revision in 1..=5u64 {
            worker.submit_if_new(revision, || revision + 10);
        }
        assert!(wait_for(&mut worker));
        let (key, value) = worker.latest().expect("a result");
        assert_eq!(*key, 5);
        assert_eq!(**value, 15 * 15);
    }

    #[test]
    fn same_key_is_not_recomputed() {
        let ctx = egui::Context::default();
        let calls = Arc::new(std::sync::atomic::AtomicU32::new(0));
        let counter = calls.clone();
        let mut worker: Worker<u64, (), u32> = Worker::spawn("test", ctx, move |()| {
            counter.fetch_add(1, std::sync::atomic::Ordering::SeqCst) + 1
        })
        .expect("thread");
        worker.submit_if_new(1, || ());
        assert!(wait_for(&mut worker));
        worker.submit_if_new(1, || panic!("must not rebuild the job for the same key"));
        assert!(!worker.is_pending());
        assert_eq!(calls.load(std::sync::atomic::Ordering::SeqCst), 1);
    }

    #[test]
    fn a_result_wakes_the_ui() {
        let ctx = egui::Context::default();
        // Settle the context so that no repaint is pending before the job.
        for _ in 0..10 {
            if !ctx.has_requested_repaint() {
                break;
            }
            run_frame(&ctx, egui::RawInput::default(), |_| {});
        }
        assert!(
            !ctx.has_requested_repaint(),
            "an idle context asks for nothing"
        );
        let mut worker: Worker<u64, (), ()> =
            Worker::spawn("test", ctx.clone(), |()| ()).expect("thread");
        worker.submit_if_new(1, || ());
        assert!(wait_for(&mut worker));
        assert!(ctx.has_requested_repaint());
    }
}
