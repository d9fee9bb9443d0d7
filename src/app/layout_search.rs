//! The sidebar's layout search: the fastest tensor, pipeline, data and expert parallel
//! layouts (with micro-batch, recomputation and ZeRO stage) of the workload's model on the
//! design, as `workload --search` searches them, found off the UI thread with its progress
//! shown, each with a Use button that pins all of it into the workload settings, so a pinned
//! layout shows the figures the search found.

use super::jobs::Jobs;
use crate::analysis::collective::{Recompute, Routing, Workload};
use crate::analysis::job::{
    SearchOptions, SearchResult, TrainingStep, search_layouts, training_job_of_workload,
};
use crate::model::units::time_text;
use crate::model::{Catalog, Design};
use egui::Ui;
use std::sync::Arc;
use std::sync::atomic::{AtomicU32, Ordering};

/// How many of the fastest layouts the sidebar lists.
const LAYOUTS_SHOWN: usize = 5;

/// What a search was asked: the design's fabric revision (its job's edits aside: pinning a
/// layout keeps the list), the workload (whose own layout does not matter: the search
/// replaces it) and the routing.
#[derive(Debug, Clone, PartialEq)]
pub struct SearchKey {
    pub revision: u64,
    pub workload: Workload,
    pub routing: Routing,
}

impl SearchKey {
    /// Equal but for the parallel layout, recomputation and ZeRO stage, which are what the
    /// search chooses.
    fn same_question(&self, other: &SearchKey) -> bool {
        let strip = |w: &Workload| {
            let mut w = w.clone();
            (w.tp, w.pp, w.dp, w.micro_batch) = (1, 1, None, 1);
            (w.recompute, w.zero) = (None, None);
            if let Some(moe) = &mut w.moe {
                moe.ep = None;
            }
            w
        };
        self.revision == other.revision
            && self.routing == other.routing
            && strip(&self.workload) == strip(&other.workload)
    }
}

type Query = (Arc<Design>, SearchKey, Arc<AtomicU32>);
type Outcome = Result<SearchResult, String>;

/// One design's search: the one running (with its progress in thousandths) and the last one
/// finished.
#[derive(Default)]
pub struct LayoutSearch {
    jobs: Option<Jobs<u64, Query, Outcome>>,
    tickets: u64,
    running: Option<(u64, SearchKey, Arc<AtomicU32>)>,
    finished: Option<(SearchKey, Arc<Outcome>)>,
}

/// A layout the user chose from the list.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct PinnedLayout {
    pub tp: u32,
    pub pp: u32,
    /// 0 for a dense model.
    pub ep: u32,
    pub micro_batch: u32,
    pub recompute: Recompute,
    pub zero: u8,
}

impl LayoutSearch {
    /// Starts a search of `key`'s workload on the design, unless one is running.
    pub fn start(
        &mut self,
        ctx: &egui::Context,
        catalog: Arc<Catalog>,
        design: Arc<Design>,
        key: SearchKey,
    ) -> std::io::Result<()> {
        if self.running.is_some() {
            return Ok(());
        }
        if self.jobs.is_none() {
            self.jobs = Some(Jobs::spawn(
                "layout-search",
                ctx.clone(),
                move |(design, key, progress): Query| search(&design, &catalog, &key, &progress),
            )?);
        }
        let Some(jobs) = &mut self.jobs else {
            return Ok(());
        };
        self.tickets += 1;
        let ticket = self.tickets;
        let progress = Arc::new(AtomicU32::new(0));
        let shared = Arc::clone(&progress);
        let asked = key.clone();
        jobs.request(ticket, move || (design, asked, shared));
        self.running = Some((ticket, key, progress));
        Ok(())
    }

    /// Takes a finished search without blocking.
    pub fn poll(&mut self) {
        let Some(jobs) = &mut self.jobs else {
            return;
        };
        jobs.poll();
        let Some((ticket, _, _)) = &self.running else {
            return;
        };
        if jobs.is_pending(ticket) {
            return;
        }
        if let Some((ticket, key, _)) = self.running.take() {
            let outcome = jobs.get(&ticket).map(Arc::clone).unwrap_or_else(|| {
                Arc::new(Err("the search stopped on an internal error".to_string()))
            });
            jobs.retain(|_| false);
            self.finished = Some((key, outcome));
        }
    }

    pub fn is_running(&self) -> bool {
        self.running.is_some()
    }

    /// A search was asked for: it runs or has finished.
    pub fn was_started(&self) -> bool {
        self.running.is_some() || self.finished.is_some()
    }

    /// The sidebar's part: a button, the progress while it runs, then the layouts found for
    /// the question now asked (a search of an older revision or another model is not shown).
    /// Returns the layout the user pinned, and whether a search was asked for.
    pub fn ui(&self, ui: &mut Ui, now: &SearchKey) -> (Option<PinnedLayout>, bool) {
        let mut pinned = None;
        let mut start = false;
        if let Some((_, key, progress)) = &self.running {
            let done = progress.load(Ordering::Relaxed) as f32 / 1000.0;
            ui.add(
                egui::ProgressBar::new(done).text(format!("Searching layouts of {}… {:.0} %", key.workload.name, done * 100.0)),
            );
            ui.ctx()
                .request_repaint_after(std::time::Duration::from_millis(100));
        } else if ui
            .button("Find the fastest layout")
            .on_hover_text(
                "Try tensor, pipeline, data and expert parallel sizes, micro-batches, recomputation (none, selective, full) and ZeRO stages 1 and 2 of this model on this design, as `railyard workload --search` does",
            )
            .clicked()
        {
            start = true;
        }
        let Some((key, outcome)) = &self.finished else {
            return (pinned, start);
        };
        if !key.same_question(now) {
            return (pinned, start);
        }
        match outcome.as_ref() {
            Err(message) => {
                ui.colored_label(ui.visuals().warn_fg_color, message);
            }
            Ok(found) => {
                ui.weak(format!(
                    "{} settings tried, {} refused; the fastest {}:",
                    found.tried,
                    found.refused,
                    found.best.len()
                ));
                // Each row wraps within the sidebar: at full size the figures and their Use
                // button need not fit one line.
                for (step, why) in found.best.iter().zip(&found.why) {
                    ui.horizontal_wrapped(|ui| {
                        if let Some(layout) = layout_row(ui, step, why, &now.workload) {
                            pinned = Some(layout);
                        }
                    });
                }
            }
        }
        (pinned, start)
    }
}

/// One found layout as a row: its shape, step and MFU, why (on hover); and Use unless it is
/// the one in use.
fn layout_row(ui: &mut Ui, step: &TrainingStep, why: &str, now: &Workload) -> Option<PinnedLayout> {
    let layout = PinnedLayout {
        tp: step.tp,
        pp: step.pp,
        ep: if now.moe.is_some() { step.ep } else { 0 },
        micro_batch: step.micro_batch,
        recompute: step.recompute,
        zero: step.zero,
    };
    let in_use = now.tp == layout.tp
        && now.pp == layout.pp
        && now.micro_batch == layout.micro_batch
        && now.moe.is_none_or(|m| m.ep == Some(layout.ep))
        && training_job_of_workload(now)
            .is_some_and(|j| j.recompute == layout.recompute && j.zero == layout.zero);
    let figures = match (step.step_ms, step.mfu) {
        (Some(ms), Some(mfu)) => format!("{}, MFU {:.1} %", time_text(ms * 1e3), mfu * 100.0),
        _ => "step time unknown".to_string(),
    };
    let label = format!("{}: {figures}", step.settings_text());
    // Full-size text: these are the figures a meeting reads off the screen.
    ui.label(label).on_hover_text(why);
    if in_use {
        ui.weak("in use");
        return None;
    }
    ui.button("Use")
        .on_hover_text("Set the workload's layout to this one")
        .clicked()
        .then_some(layout)
}

/// The search itself, on the job thread.
fn search(design: &Design, catalog: &Catalog, key: &SearchKey, progress: &AtomicU32) -> Outcome {
    let job = training_job_of_workload(&key.workload)
        .ok_or_else(|| format!("railyard does not know the shape of {}", key.workload.name))?;
    search_layouts(
        design,
        catalog,
        &job,
        SearchOptions {
            keep: LAYOUTS_SHOWN,
            routing: key.routing,
            hold_memory_settings: false,
        },
        &mut |done| progress.store((done.clamp(0.0, 1.0) * 1000.0) as u32, Ordering::Relaxed),
    )
    .map_err(|e| format!("No layout found: {e}"))
}
