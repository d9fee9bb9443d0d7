//! How far the reading of a large design file has got, shared between the thread reading it
//! and the window showing it: bytes of the file read so far out of its size.

use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};

#[derive(Debug, Default)]
pub struct ReadProgress {
    total: AtomicU64,
    done: AtomicU64,
    /// How many times it moved: a test's proof that it moves in steps, not at the end only.
    steps: AtomicU64,
    /// The text is read and the design is being sorted and checked (the last second of a
    /// 65,536-GPU file).
    checking: AtomicBool,
}

impl ReadProgress {
    /// A read of `total` bytes begins.
    pub fn start(&self, total: u64) {
        self.total.store(total, Ordering::Relaxed);
        self.done.store(0, Ordering::Relaxed);
    }

    /// `bytes` more of the file are read.
    pub fn advance(&self, bytes: u64) {
        self.done.fetch_add(bytes, Ordering::Relaxed);
        self.steps.fetch_add(1, Ordering::Relaxed);
    }

    /// The text is read; what is left is sorting and checking the design.
    pub fn checking(&self) {
        self.checking.store(true, Ordering::Relaxed);
    }

    pub fn is_checking(&self) -> bool {
        self.checking.load(Ordering::Relaxed)
    }

    /// The read is over, whatever its outcome.
    pub fn finish(&self) {
        let total = self.total.load(Ordering::Relaxed);
        self.done.store(total, Ordering::Relaxed);
    }

    /// Share read so far, 0–1; None before the size is known.
    pub fn fraction(&self) -> Option<f32> {
        let total = self.total.load(Ordering::Relaxed);
        (total > 0)
            .then(|| (self.done.load(Ordering::Relaxed) as f64 / total as f64).min(1.0) as f32)
    }

    pub fn steps(&self) -> u64 {
        self.steps.load(Ordering::Relaxed)
    }
}
