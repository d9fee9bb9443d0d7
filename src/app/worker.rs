//! Analysis off the UI thread, following one stream of revisions. The UI submits a job keyed
//! by the design's revision (and what it asks); a background `Jobs` thread computes it,
//! skipping jobs that a newer one has already superseded, and wakes the UI with
//! `request_repaint` when a result is ready. The UI only ever polls, so no frame waits, and an
//! idle window asks for no repaints at all. A job that panics yields no result; the last good
//! one stays shown.

use super::jobs::Jobs;
use std::sync::Arc;

/// A background computation `Q -> R` whose results are tagged with a key `K` (a revision).
pub struct Worker<K, Q, R> {
    /// Jobs by ticket, one ticket per submitted key: the key need not hash.
    jobs: Jobs<u64, Q, R>,
    tickets: u64,
    requested: Option<(u64, K)>,
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
        compute: impl FnMut(Q) -> R + Send + 'static,
    ) -> std::io::Result<Self> {
        let jobs = Jobs::spawn(name, ctx, compute)?;
        Ok(Self {
            jobs,
            tickets: 0,
            requested: None,
            latest: None,
        })
    }

    /// Submits a job unless one with this key was already submitted. `make` is only called
    /// when the job is really sent, so an unchanged design costs nothing per frame. Older
    /// jobs still queued are dropped: only the newest revision matters.
    pub fn submit_if_new(&mut self, key: K, make: impl FnOnce() -> Q) {
        if self.requested.as_ref().is_some_and(|(_, k)| *k == key) {
            return;
        }
        self.tickets += 1;
        let ticket = self.tickets;
        self.jobs.retain(|&t| t == ticket);
        self.jobs.request(ticket, make);
        self.requested = Some((ticket, key));
    }

    /// Takes finished results without blocking; returns true if a new one arrived.
    pub fn poll(&mut self) -> bool {
        if !self.jobs.poll() {
            return false;
        }
        let Some((ticket, key)) = &self.requested else {
            return false;
        };
        match self.jobs.get(ticket) {
            Some(result) => {
                self.latest = Some((key.clone(), Arc::clone(result)));
                true
            }
            None => false,
        }
    }

    /// The newest finished result and its key.
    pub fn latest(&self) -> Option<(&K, &Arc<R>)> {
        self.latest.as_ref().map(|(k, r)| (k, r))
    }

    /// A newer job than the shown result is still being computed.
    pub fn is_pending(&self) -> bool {
        self.requested
            .as_ref()
            .is_some_and(|(ticket, _)| self.jobs.is_pending(ticket))
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
    fn a_panicking_job_keeps_the_last_result_and_ends() {
        let ctx = egui::Context::default();
        let mut worker: Worker<u64, u64, u64> = Worker::spawn("test", ctx, |n| {
            assert_ne!(n, 2, "job 2 fails");
            n * 10
        })
        .expect("thread");
        worker.submit_if_new(1, || 1);
        assert!(wait_for(&mut worker));
        worker.submit_if_new(2, || 2);
        assert!(wait_for(&mut worker), "a failed job is not pending forever");
        let (key, value) = worker.latest().expect("the last good result");
        assert_eq!((*key, **value), (1, 10));
        // The thread survived: the next job runs.
        worker.submit_if_new(3, || 3);
        assert!(wait_for(&mut worker));
        let (key, value) = worker.latest().expect("a result");
        assert_eq!((*key, **value), (3, 30));
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
