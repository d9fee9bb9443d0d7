//! Live metrics of the active design: bisection, cost, power, checks, one collective, the
//! architect's advice and, when chosen, a training workload's communication per step.
//! Numbers come from the shared cost model (`railyard::analysis`), computed by the worker
//! off the UI thread; this panel only shows the newest finished result and reports clicks
//! and hovers as events (select these devices, highlight those links).

use super::layout_search::{LayoutSearch, SearchKey};
use crate::analysis::accuracy::Checked;
#[cfg(test)]
use crate::analysis::assess;
use crate::analysis::collective::{
    AlgoChoice, CollectiveQuery, CollectiveResult, MODELS, Op, Precision, QuantizedWeights,
    Recompute, Routing, Workload, WorkloadResult, fitted_layout, model_label, sweep_sizes,
};
use crate::analysis::finding::{Finding, Severity};
use crate::analysis::job::{JobError, JobOutcome};
use crate::analysis::{Assessment, Assessor, Question};
use crate::io::validation_sets::published;
use crate::model::job_spec::Finetune;
use crate::model::units::{Usd, cents_or_less, group_thousands, time_text, trim_number};
use crate::model::{Bytes, Catalog, Design, DeviceId, JobSpec, LinkId};
use egui::{Color32, ComboBox, RichText, Ui};
use std::collections::HashSet;
use std::sync::Arc;

use super::worker::Worker;

/// What the worker computes for one revision: the library's assessment.
pub type Analysis = Assessment;

/// A result is current when both the design revision and the question match.
pub type AnalysisKey = (u64, Question);

/// A job: the design at a revision and the question asked of it.
pub type AnalysisJob = (Arc<Design>, Question);

pub type AnalysisWorker = Worker<AnalysisKey, AnalysisJob, Analysis>;

/// The question the sidebar asks: its collective (none when the section is off), its
/// workload with the collective's routing (ECMP when it is off), and the what-if.
pub fn question(collective: Option<CollectiveQuery>, workload: Option<Workload>) -> Question {
    Question {
        workload_routing: collective.as_ref().map_or(Routing::Ecmp, |q| q.routing),
        collective,
        workload,
        whatif: true,
    }
}

pub fn spawn_worker(ctx: &egui::Context, catalog: Arc<Catalog>) -> std::io::Result<AnalysisWorker> {
    // Made on the worker's first job: predicting the published sets (to check each
    // collective against them) takes a moment the window should not wait for.
    let mut assessor: Option<Assessor> = None;
    Worker::spawn(
        "railyard-analysis",
        ctx.clone(),
        move |(design, question): AnalysisJob| {
            assessor
                .get_or_insert_with(|| Assessor::with_published(published()))
                .assess(&design, &catalog, &question)
        },
    )
}

/// The collective the sidebar evaluates; a UI preference, not part of the design.
#[derive(Debug, Clone, PartialEq, serde::Serialize, serde::Deserialize)]
#[serde(default)]
pub struct CollectiveSettings {
    pub enabled: bool,
    pub op: Op,
    pub bytes: u64,
    pub algorithm: AlgoChoice,
    pub adaptive_routing: bool,
}

/// The algorithm menu's text for each choice.
fn algo_choice_label(choice: AlgoChoice) -> &'static str {
    match choice {
        AlgoChoice::Auto => "auto (the library's pick)",
        AlgoChoice::Ring => "ring",
        AlgoChoice::Tree => "tree",
        AlgoChoice::Nvls => "NVLS",
        AlgoChoice::NvlsTree => "NVLS-tree",
        AlgoChoice::Sharp => "SHARP",
        AlgoChoice::Hierarchical => "hierarchical",
        AlgoChoice::Direct => "direct",
    }
}

impl Default for CollectiveSettings {
    fn default() -> Self {
        Self {
            enabled: true,
            op: Op::AllReduce,
            bytes: 1 << 30,
            algorithm: AlgoChoice::Auto,
            adaptive_routing: false,
        }
    }
}

impl CollectiveSettings {
    pub fn query(&self) -> Option<CollectiveQuery> {
        self.enabled.then(|| {
            let mut q = CollectiveQuery::new(self.op, Bytes(self.bytes));
            q.algorithm = self.algorithm;
            q.routing = self.routing();
            q
        })
    }

    pub fn routing(&self) -> Routing {
        if self.adaptive_routing {
            Routing::Adaptive
        } else {
            Routing::Ecmp
        }
    }
}

/// The workload the sidebar weighs the design against, as it edits it: the design's job
/// (`Design::job`), or, while the design has none, the last job chosen, ready to turn on.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct WorkloadSettings {
    pub enabled: bool,
    pub job: JobSpec,
}

impl WorkloadSettings {
    /// The settings shown for a design whose job is `job`; `last` fills them while it has none.
    pub fn of(job: Option<&JobSpec>, last: &JobSpec) -> Self {
        Self {
            enabled: job.is_some(),
            job: job.unwrap_or(last).clone(),
        }
    }

    /// The design's job these settings make: None with the workload off.
    pub fn design_job(&self) -> Option<JobSpec> {
        self.enabled.then(|| self.job.clone())
    }

    pub fn workload(&self) -> Option<Workload> {
        if !self.enabled {
            return None;
        }
        crate::analysis::job::workload_of_job(&self.job)
    }

    /// Chooses a model with its usual parallel layout.
    fn choose(&mut self, id: &str) {
        if let Some(w) = Workload::named(id) {
            self.job.tp = w.tp;
            self.job.pp = w.pp;
            self.job.micro_batch = w.micro_batch;
            self.job.ep = w.moe.and_then(|m| m.ep).unwrap_or(0);
            self.job.model = id.to_string();
        }
    }
}

/// What the sidebar shows: the inspector over the metrics with an adjustable split, or one of
/// them in the whole height (a 768-pixel laptop screen has room for little more than one).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, serde::Serialize, serde::Deserialize)]
pub enum SidebarView {
    #[default]
    Both,
    Inspector,
    Metrics,
}

impl SidebarView {
    pub fn shows_inspector(self) -> bool {
        self != SidebarView::Metrics
    }

    pub fn shows_metrics(self) -> bool {
        self != SidebarView::Inspector
    }
}

/// The tabs at the top of the sidebar that choose its view.
pub fn view_tabs_ui(ui: &mut Ui, view: &mut SidebarView) {
    ui.horizontal(|ui| {
        for (choice, label, hover) in [
            (
                SidebarView::Both,
                "Both",
                "The inspector above the metrics; drag the line between them",
            ),
            (
                SidebarView::Inspector,
                "Inspector",
                "The selection's properties and what-ifs in the whole height",
            ),
            (
                SidebarView::Metrics,
                "Metrics",
                "The design's metrics in the whole height",
            ),
        ] {
            ui.selectable_value(view, choice, label)
                .on_hover_text(hover);
        }
    });
}

/// What the sidebar asks of the app.
#[derive(Debug, Clone, PartialEq)]
pub enum SidebarEvent {
    Select {
        devices: Vec<DeviceId>,
        links: Vec<LinkId>,
    },
    /// Links to highlight on the canvas this frame (pointer over a figure or a check).
    Highlight(HashSet<LinkId>),
    /// The collective settings changed: recompute.
    SettingsChanged,
    /// Open the Plots window.
    OpenPlots,
    /// Search the workload's layouts on the design.
    SearchLayouts,
}

pub fn percent(x: f64) -> String {
    if x >= 0.1 {
        format!("{:.0}%", x * 100.0)
    } else {
        format!("{:.1}%", x * 100.0)
    }
}

fn severity_mark(severity: Severity) -> RichText {
    match severity {
        Severity::Error => RichText::new("error").color(Color32::from_rgb(230, 80, 70)),
        Severity::Warning => RichText::new("warning").color(Color32::from_rgb(230, 170, 40)),
        Severity::Info => RichText::new("note").color(Color32::from_rgb(110, 160, 230)),
    }
}

/// The metrics panel. `pending`: a newer revision is being computed (the figures are stale).
pub fn sidebar_ui(
    ui: &mut Ui,
    analysis: Option<&Analysis>,
    pending: bool,
    settings: &mut CollectiveSettings,
    workload: &mut WorkloadSettings,
    (search, revision): (&LayoutSearch, u64),
) -> Vec<SidebarEvent> {
    let mut events = Vec::new();
    ui.horizontal(|ui| {
        ui.heading("Metrics");
        if pending {
            ui.weak("recomputing…");
        }
        ui.with_layout(egui::Layout::right_to_left(egui::Align::Center), |ui| {
            if ui
                .link("Plots…")
                .on_hover_text("busbw and time against size, cost by category, link loads")
                .clicked()
            {
                events.push(SidebarEvent::OpenPlots);
            }
        });
    });
    let Some(analysis) = analysis else {
        ui.weak("computing…");
        return events;
    };
    let m = &analysis.metrics;
    let count = crate::model::units::count_of;
    ui.label(format!(
        "{} · {} · {} · {}",
        count(m.gpus as usize, "GPU", "GPUs"),
        count(m.nodes, "node", "nodes"),
        count(m.switches, "switch", "switches"),
        count(m.links, "link", "links"),
    ));
    ui.separator();

    // Bisection; hovering it shows the cut on the canvas.
    let b = &m.bisection;
    let bisection_text = match b.ratio {
        Some(ratio) if b.status.is_ok() => {
            format!("Bisection {} of {} ({})", b.value, b.full, percent(ratio))
        }
        _ if b.status.is_ok() => format!("Bisection {}", b.value),
        _ => format!("Bisection {}", b.status),
    };
    let r = ui
        .add(egui::Label::new(RichText::new(bisection_text).strong()).sense(egui::Sense::hover()))
        .on_hover_text(format!(
            "{} links cross the narrowest balanced cut; they are highlighted on the canvas. \
             Full: every link of one half's machines crossing it, as a non-blocking switch \
             gives; cabled directly, a full mesh of n machines reaches ⌈n/2⌉/(n−1) of that by \
             construction (67 % for 4), only a switch or more cables per pair more. {}{}",
            b.cut_links.len(),
            b.status,
            b.through_servers()
                .map(|t| format!(" Counted {t}."))
                .unwrap_or_default()
        ));
    if let Some(through) = b.through_servers() {
        ui.label(RichText::new(format!("Counted {through}")).small().weak());
    }
    if let Some(mesh) = &b.mesh_note {
        // "A full mesh of 4 machines reaches 67 % …": the note begins mid-sentence in `eval`.
        let mut text = mesh.clone();
        if let Some(first) = text.get(..1) {
            text.replace_range(..1, &first.to_uppercase());
        }
        ui.label(RichText::new(text).small().weak());
    }
    if r.hovered() {
        events.push(SidebarEvent::Highlight(
            b.cut_links.iter().copied().collect(),
        ));
    }
    if let Some(ratio) = b.ratio {
        ui.add(egui::ProgressBar::new(ratio.clamp(0.0, 1.0) as f32).desired_height(6.0));
    }
    ui.separator();
    if let Some(whatif) = &analysis.whatif {
        super::whatif::delta_ui(ui, whatif);
        ui.separator();
    }

    // Cost and power.
    let c = &m.cost;
    // Parts the catalog lacks are left out of the bill: the totals say so.
    let cost_gap = m.cost_gap();
    let incomplete = m.parts_unknown();
    let total = if cost_gap.is_some() {
        format!("Cost {} (incomplete)", c.total.compact())
    } else {
        format!("Cost {}", c.total.compact())
    };
    ui.label(RichText::new(total).strong())
        .on_hover_text(if let Some(gap) = &cost_gap {
            format!("{} exactly, and incomplete: {gap} (see Checks)", c.total)
        } else {
            format!("{} exactly", c.total)
        });
    egui::Grid::new("cost-lines").num_columns(2).show(ui, |ui| {
        for (label, value) in [
            ("nodes & GPUs", c.nodes),
            ("NVSwitch racks", c.nvswitch),
            ("switches", c.switches),
            ("NICs", c.nics),
            ("cables & optics", c.cables_optics),
            ("other", c.other),
        ] {
            if value.0 > 0.0 {
                ui.weak(label);
                ui.label(value.to_string());
                ui.end_row();
            }
        }
    });
    if let (Some(switches), Some(network)) = (m.switch_cost_share, m.network_cost_share) {
        ui.label(format!(
            "switches {} · network {} of cost",
            percent(switches),
            percent(network)
        ));
    }
    ui.label(if incomplete {
        format!("Power {} (incomplete)", m.power)
    } else {
        format!("Power {}", m.power)
    })
    .on_hover_text(format!("Electricity: {}", m.running.text()));
    ui.weak(format!(
        "electricity ≤ {} a month",
        crate::model::Usd(m.running.usd_per_month).compact()
    ))
    .on_hover_text(m.running.text());
    ui.separator();

    findings_ui(ui, ("Checks: all clear", "Checks"), &m.checks, &mut events);
    ui.separator();
    findings_ui(
        ui,
        ("Advice: nothing to change", "Advice"),
        &analysis.advice,
        &mut events,
    );
    ui.separator();
    collective_ui(ui, analysis, settings, &mut events);
    ui.separator();
    let routing = settings.routing();
    workload_ui(
        ui,
        analysis,
        workload,
        (search, revision, routing),
        &mut events,
    );
    events
}

/// A training job mapped onto the drawn GPUs: its communication per step against an ideal
/// network, the answer to "is this network good enough for what I want to run".
fn workload_ui(
    ui: &mut Ui,
    analysis: &Analysis,
    settings: &mut WorkloadSettings,
    (search, revision, routing): (&LayoutSearch, u64, Routing),
    events: &mut Vec<SidebarEvent>,
) {
    let before = settings.clone();
    ui.checkbox(&mut settings.enabled, RichText::new("Workload").strong())
        .on_hover_text("Time one training step's communication (or a serving decode step's) against an ideal network");
    if settings.enabled {
        ComboBox::from_label("model")
            .selected_text(model_label(&settings.job.model))
            .show_ui(ui, |ui| {
                for (id, label) in MODELS {
                    if ui
                        .selectable_label(settings.job.model == id, label)
                        .clicked()
                        && settings.job.model != id
                    {
                        settings.choose(id);
                    }
                }
            });
        ui.horizontal_wrapped(|ui| {
            ui.label("tensor parallel");
            ui.add(egui::DragValue::new(&mut settings.job.tp).range(1..=64));
            ui.label("pipeline");
            ui.add(egui::DragValue::new(&mut settings.job.pp).range(1..=64));
        });
        if settings.job.serving {
            ui.horizontal_wrapped(|ui| {
                ui.label("sequences at once");
                ui.add(egui::DragValue::new(&mut settings.job.serving_batch).range(1..=4096))
                    .on_hover_text("Sequences each replica decodes together: 1 for one person chatting, tens to hundreds for a shared service. Few sequences leave each token's all-reduces exposed; many fill the memory with key/value cache");
            });
            weights_ui(ui, settings);
            memory_share_ui(ui, &mut settings.job.memory_share);
        }
        if !settings.job.serving {
            ui.horizontal_wrapped(|ui| {
                ui.label("micro-batch");
                ui.add(egui::DragValue::new(&mut settings.job.micro_batch).range(1..=64))
                    .on_hover_text("Sequences per micro-batch; the global batch must split into data-parallel replicas × micro-batches");
            });
            memory_settings_ui(ui, settings);
        }
        if Workload::named(&settings.job.model).is_some_and(|w| w.moe.is_some()) {
            ui.horizontal_wrapped(|ui| {
                ui.label("expert parallel");
                ui.add(
                    egui::DragValue::new(&mut settings.job.ep)
                        .range(0..=1024)
                        .custom_formatter(|n, _| {
                            if n < 1.0 {
                                "auto".into()
                            } else {
                                format!("{n:.0}")
                            }
                        }),
                )
                .on_hover_text(
                    "Replicas that share out the experts (a divisor of the data-parallel size); auto: as many as there are experts",
                );
            });
        }
        ui.horizontal_wrapped(|ui| {
            ComboBox::from_label("precision")
                .selected_text(settings.job.precision.label())
                .show_ui(ui, |ui| {
                    for p in [Precision::Bf16, Precision::Fp16, Precision::Fp8, Precision::Fp32] {
                        ui.selectable_value(&mut settings.job.precision, p, p.label());
                    }
                });
            ui.checkbox(&mut settings.job.serving, "serving").on_hover_text(
                "Inference replicas instead of training: time one decode step, and ask whether the replicas need a fabric at all",
            );
        });
        efficiency_ui(ui, &mut settings.job.efficiency);
        match &analysis.workload {
            Some(Ok(result)) => {
                // A layout that does not fit in memory never runs: its traffic is no figure
                // to show (the CLI refuses it); only why, and the search that finds one.
                let fits = !matches!(analysis.job, Some(Err(JobError::DoesNotFit { .. })));
                if fits {
                    workload_result_ui(ui, result, events);
                }
                match &analysis.job {
                    Some(Ok(job)) => job_ui(ui, job),
                    Some(Err(e)) => {
                        ui.colored_label(ui.visuals().warn_fg_color, e.to_string());
                    }
                    None => {}
                }
                if analysis.job.is_some()
                    && !settings.job.serving
                    && let Some(workload) = settings.workload()
                {
                    let now = SearchKey {
                        revision,
                        workload,
                        routing,
                    };
                    let (pinned, start) = search.ui(ui, &now);
                    if start {
                        events.push(SidebarEvent::SearchLayouts);
                    }
                    if let Some(layout) = pinned {
                        settings.job.tp = layout.tp;
                        settings.job.pp = layout.pp;
                        settings.job.ep = layout.ep;
                        settings.job.micro_batch = layout.micro_batch;
                        settings.job.recompute = Some(layout.recompute);
                        settings.job.zero = Some(layout.zero);
                    }
                }
            }
            Some(Err(_)) if analysis.metrics.gpus == 0 => {
                ui.weak("Add GPUs to see a training step.");
            }
            Some(Err(message)) => {
                ui.colored_label(ui.visuals().warn_fg_color, message.to_string());
                // A layout larger than the design: offer the one `workload` would narrow it to.
                let gpus = analysis.metrics.gpus;
                if let Some((tp, pp)) = fitted_layout(settings.job.tp, settings.job.pp, gpus)
                    && ui
                        .button(format!("Fit to {gpus} GPUs: TP {tp} × PP {pp}"))
                        .on_hover_text(
                            "Tensor parallelism to the largest power of two the GPUs hold, \
                             then pipeline stages to what is left",
                        )
                        .clicked()
                {
                    settings.job.tp = tp;
                    settings.job.pp = pp;
                }
            }
            None => {}
        }
    }
    if *settings != before {
        events.push(SidebarEvent::SettingsChanged);
    }
}

/// Serving's weight format: the precision's, or quantized (int8; int4 in groups of 128).
fn weights_ui(ui: &mut Ui, settings: &mut WorkloadSettings) {
    let as_precision = format!("{} (as precision)", settings.job.precision.label());
    let label = |w: Option<QuantizedWeights>| match w {
        Some(q) => q.label().to_string(),
        None => as_precision.clone(),
    };
    ComboBox::from_label("weights")
        .selected_text(label(settings.job.weights))
        .show_ui(ui, |ui| {
            ui.selectable_value(&mut settings.job.weights, None, label(None));
            for q in QuantizedWeights::ALL {
                ui.selectable_value(&mut settings.job.weights, Some(q), label(Some(q)));
            }
        })
        .response
        .on_hover_text("Quantized weights (int8; int4 in AWQ/GPTQ groups of 128, 4.25 bits each) are read and held in fewer bytes; the key/value cache and activations stay in the precision");
}

/// The kernels' efficiency: the published figure for the GPU generation, or the user's own
/// (the only way to a step time on GPUs without a published one).
fn efficiency_ui(ui: &mut Ui, efficiency: &mut Option<f64>) {
    own_fraction_ui(
        ui,
        efficiency,
        ("own kernel efficiency", " % of peak"),
        "The fraction of the GPUs' dense peak the step's kernels achieve. Off: the published figure for the GPU generation, and compute unknown where there is none",
        // Starts where MFU reports of large dense training runs sit (Llama 3: 38-43 %); the
        // user sets their own.
        STARTING_EFFICIENCY,
    );
}

/// Serving: the share of peak memory bandwidth decode reaches, as the user measured it.
fn memory_share_ui(ui: &mut Ui, share: &mut Option<f64>) {
    own_fraction_ui(
        ui,
        share,
        ("own memory-bandwidth share", " % of peak"),
        "The fraction of the GPUs' peak memory bandwidth decode reaches in your engine. Off: the peak, so the decode rate is an upper bound. Starts at 100 % when ticked: set your own",
        // The peak itself: ticking changes nothing until the user enters their figure.
        1.0,
    );
}

/// A checkbox for a fraction the user may give (else None), and its percentage.
fn own_fraction_ui(
    ui: &mut Ui,
    value: &mut Option<f64>,
    (label, suffix): (&str, &str),
    hover: &str,
    start: f64,
) {
    ui.horizontal_wrapped(|ui| {
        let mut own = value.is_some();
        ui.checkbox(&mut own, label).on_hover_text(hover);
        match (own, value.as_mut()) {
            (true, Some(fraction)) => {
                let mut percent = *fraction * 100.0;
                // Written back only when edited: a round trip through percent need not
                // give back the same float, and a changed setting re-runs the analysis.
                if ui
                    .add(
                        egui::DragValue::new(&mut percent)
                            .range(1.0..=100.0)
                            .speed(0.5)
                            .max_decimals(1)
                            .suffix(suffix),
                    )
                    .changed()
                {
                    *fraction = percent / 100.0;
                }
            }
            (true, None) => *value = Some(start),
            (false, _) => *value = None,
        }
    });
}

/// Training's recomputation and ZeRO stage: what trades compute for memory, as
/// `workload --recompute --zero` sets them.
fn memory_settings_ui(ui: &mut Ui, settings: &mut WorkloadSettings) {
    let recompute = settings.job.recompute.unwrap_or(Recompute::Selective);
    let zero = settings.job.zero.unwrap_or(1);
    ui.horizontal_wrapped(|ui| {
        ComboBox::from_label("recompute")
            .width(80.0)
            .selected_text(recompute.label())
            .show_ui(ui, |ui| {
                for r in [Recompute::None, Recompute::Selective, Recompute::Full] {
                    if ui.selectable_label(recompute == r, r.label()).clicked() {
                        settings.job.recompute = Some(r);
                    }
                }
            })
            .response
            .on_hover_text("Activations computed again in the backward pass to save memory: selective recomputes attention's scores (Megatron's default); full runs each layer's forward again, with its tensor-parallel all-reduces");
        ComboBox::from_label("ZeRO")
            .width(36.0)
            .selected_text(zero.to_string())
            .show_ui(ui, |ui| {
                for z in [1, 2, 3] {
                    if ui.selectable_label(zero == z, z.to_string()).clicked() {
                        settings.job.zero = Some(z);
                    }
                }
            })
            .response
            .on_hover_text("Optimizer state (1), and gradients (2), and weights (3, FSDP's full shard: every layer's weights gathered from the replicas twice per micro-batch) sharded over the data-parallel replicas");
    });
    finetune_ui(ui, &mut settings.job.finetune);
}

/// What trains: every weight, or adapters of a rank on the frozen model (LoRA; QLoRA with
/// the blocks' weights in 4-bit), as `workload --lora/--qlora RANK` sets it.
fn finetune_ui(ui: &mut Ui, finetune: &mut Finetune) {
    // A rank the user set survives switching between LoRA and QLoRA; 16 to start with.
    let rank = finetune.rank().unwrap_or(16);
    ui.horizontal_wrapped(|ui| {
        ComboBox::from_label("trains")
            .width(80.0)
            .selected_text(match finetune {
                Finetune::Full => "every weight",
                Finetune::Lora { .. } => "LoRA",
                Finetune::Qlora { .. } => "QLoRA",
            })
            .show_ui(ui, |ui| {
                for (choice, label) in [
                    (Finetune::Full, "every weight"),
                    (Finetune::Lora { rank }, "LoRA"),
                    (Finetune::Qlora { rank }, "QLoRA"),
                ] {
                    let same = std::mem::discriminant(finetune) == std::mem::discriminant(&choice);
                    if ui.selectable_label(same, label).clicked() {
                        *finetune = choice;
                    }
                }
            })
            .response
            .on_hover_text("Every weight trains, or low-rank adapters on every linear layer of the frozen model's blocks: only they have gradients and optimizer states. QLoRA holds the blocks' frozen weights in 4-bit NF4 (bitsandbytes) and widens them to 16-bit on every pass");
        if let Finetune::Lora { rank } | Finetune::Qlora { rank } = finetune {
            ui.label("rank");
            ui.add(egui::DragValue::new(rank).range(Finetune::RANKS))
                .on_hover_text("The adapters' rank r: each adapted matrix gains r × (inputs + outputs) trained weights");
        }
    });
}

/// Where "own kernel efficiency" starts when first ticked.
const STARTING_EFFICIENCY: f64 = 0.40;

fn workload_result_ui(ui: &mut Ui, r: &WorkloadResult, events: &mut Vec<SidebarEvent>) {
    let m = &r.mapping;
    ui.label(format!("{} on {} GPUs", m.layout(), m.gpus_used));
    let extra = if r.ideal_total_us > 0.0 {
        format!(
            " (never queuing: {}, +{} from contention)",
            time_text(r.ideal_total_us),
            percent(r.total_us / r.ideal_total_us - 1.0)
        )
    } else {
        String::new()
    };
    ui.label(
        RichText::new(format!(
            "Communication per {}: {}{extra}",
            if r.serving { "decode step" } else { "step" },
            time_text(r.total_us)
        ))
        .strong(),
    );
    // Wrapped rows rather than a grid: three columns do not fit a laptop's sidebar.
    for (i, c) in r.components.iter().enumerate() {
        ui.push_id(("workload-part", i), |ui| {
            ui.horizontal_wrapped(|ui| {
                let name = ui.add(
                    egui::Label::new(RichText::new(&c.name).weak()).sense(egui::Sense::hover()),
                );
                if let Some(top) = c.bottleneck.first() {
                    if name.hovered() {
                        events.push(SidebarEvent::Highlight(
                            c.bottleneck.iter().filter_map(|b| b.link).collect(),
                        ));
                    }
                    name.on_hover_text(format!(
                        "busiest: {} at {}",
                        top.label,
                        percent(top.utilization)
                    ));
                }
                ui.label(time_text(c.time_us_per_step));
                ui.weak(format!(
                    "{}, ideal {}",
                    c.algorithm,
                    time_text(c.ideal_us_per_step)
                ));
            });
        });
    }
    for note in &r.notes {
        ui.weak(note);
    }
}

/// A figure, or "unknown" where the model has no basis for it.
fn or_unknown(value: Option<f64>, text: impl Fn(f64) -> String) -> String {
    value.map_or_else(|| "unknown".into(), text)
}

/// The workload as a job: step time and where it goes, MFU, memory and cost per token; or
/// serving's decode rate and time to first token. Hovering shows what the figures assume.
fn job_ui(ui: &mut Ui, job: &JobOutcome) {
    let ms = |v: Option<f64>| or_unknown(v, |ms| time_text(ms * 1e3));
    ui.separator();
    let assumes = match job {
        JobOutcome::Training { step, economics } => {
            ui.label(RichText::new(format!("Step {}", ms(step.step_ms))).strong())
                .on_hover_text("The whole training step: compute, pipeline bubble and the communication not hidden behind compute");
            ui.weak(format!(
                "compute {} · bubble {} · exposed communication {}",
                ms(step.compute_ms),
                ms(step.bubble_ms),
                ms(step.exposed_comm_ms)
            ));
            if let Some(note) = step.bubble_note() {
                ui.weak(format!("Note: {note}"));
            }
            ui.label(format!(
                "MFU {} · {} tokens/s · lost to contention {}",
                or_unknown(step.mfu, percent),
                or_unknown(step.tokens_per_s, |t| group_thousands(t.round() as i64)),
                or_unknown(step.network_share, percent),
            ))
            .on_hover_text("The share of the step lost to queueing in the fabric: against the same step on a fabric that never queues. The communication itself is the exposed part above");
            ui.label(format!(
                "Memory {:.0} of {:.0} GiB per GPU ({:.1} free)",
                step.memory_gib_per_gpu,
                step.gpu_memory_gib,
                step.gpu_memory_gib - step.memory_gib_per_gpu
            ))
            .on_hover_text("Weights, gradients, optimizer state and activations. The runtime (a CUDA context and NCCL's buffers, or Metal's and MLX's on a Mac) and the allocator's fragmentation also take memory and are not modelled: a layout with little free may not run");
            if let Some(e) = economics {
                ui.label(format!(
                    "${} per million tokens",
                    cents_or_less(e.usd_per_million_tokens)
                ))
                .on_hover_text(format!(
                    "Capital written off over {} years of training without a break, plus energy at PUE {} and ${}/kWh{} ({} an hour)",
                    e.amortisation_years,
                    e.pue,
                    e.usd_per_kwh,
                    e.energy_basis(),
                    Usd(e.usd_per_hour).compact()
                ));
            }
            &step.assumes
        }
        JobOutcome::Serving(r) => {
            let (sign, why) = match r.memory_share {
                None => (
                    "≤",
                    "An upper bound: weights and key/value cache read at the GPUs' peak memory bandwidth, plus the communication per token".to_string(),
                ),
                Some(f) => (
                    "≈",
                    format!(
                        "Weights and key/value cache read at {:.0} % of the GPUs' peak memory bandwidth (your figure), plus the communication per token",
                        f * 100.0
                    ),
                ),
            };
            ui.label(
                RichText::new(format!(
                    "Decode {sign} {} tokens/s",
                    or_unknown(r.decode_tokens_per_s, |t| group_thousands(t.round() as i64))
                ))
                .strong(),
            )
            .on_hover_text(why);
            ui.weak(format!(
                "{} of {}, {} per replica, {} per sequence · first token {}",
                crate::model::units::count_of(r.replicas as usize, "replica", "replicas"),
                r.layout,
                or_unknown(r.decode_tokens_per_s_per_replica, |t| format!("{t:.1}")),
                or_unknown(r.decode_tokens_per_s_per_sequence, |t| format!("{t:.1}")),
                ms(r.ttft_ms)
            ));
            ui.label(format!(
                "Memory {:.1} of {} GiB per GPU",
                r.memory_gib_per_gpu,
                trim_number(r.usable_memory_gib)
            ))
            .on_hover_text(format!(
                "A serving engine takes {:.0} % of each GPU's {} GiB ({})",
                r.usable_memory_gib / r.gpu_memory_gib * 100.0,
                trim_number(r.gpu_memory_gib),
                r.memory_budget_explained
            ));
            if let Some(e) = r.economics {
                let (at_least, basis) = match r.memory_share {
                    None => ("≥ ", "At the decode bound, so at least this"),
                    Some(_) => ("", "At your memory-bandwidth share"),
                };
                ui.label(format!(
                    "{at_least}${} per million output tokens",
                    cents_or_less(e.usd_per_million_tokens)
                ))
                .on_hover_text(format!(
                    "{basis}: capital written off over {} years of serving without a break, plus energy at PUE {} and ${}/kWh{} ({} an hour)",
                    e.amortisation_years,
                    e.pue,
                    e.usd_per_kwh,
                    e.energy_basis(),
                    Usd(e.usd_per_hour).compact()
                ));
            }
            &r.assumes
        }
    };
    ui.weak("assumes …").on_hover_text(assumes.join("\n"));
}

const MAX_FINDINGS_SHOWN: usize = 200;

/// One finding (a check or an advice item): its mark and message; hovering shows `about`
/// and highlights its links on the canvas, clicking selects its devices and links.
/// The checks (wiring that cannot work) or the architect's advice (what to change): each
/// finding names what it is about (hover to see it on the canvas, click to select it).
fn findings_ui(
    ui: &mut Ui,
    (empty_title, title): (&str, &str),
    findings: &[Finding],
    events: &mut Vec<SidebarEvent>,
) {
    let header = if findings.is_empty() {
        empty_title.to_string()
    } else {
        format!("{title} ({})", findings.len())
    };
    egui::CollapsingHeader::new(header)
        .id_salt(title)
        .default_open(true)
        .show(ui, |ui| {
            // A broken 100,000-link design can have thousands; the first ones tell the story.
            for (i, finding) in findings.iter().take(MAX_FINDINGS_SHOWN).enumerate() {
                ui.push_id(i, |ui| finding_ui(ui, finding, events));
            }
            if findings.len() > MAX_FINDINGS_SHOWN {
                ui.weak(format!("and {} more", findings.len() - MAX_FINDINGS_SHOWN));
            }
        });
}

fn finding_ui(ui: &mut Ui, finding: &Finding, events: &mut Vec<SidebarEvent>) {
    let about = finding.code;
    let (devices, links) = (&finding.devices, &finding.links);
    ui.horizontal_wrapped(|ui| {
        ui.label(severity_mark(finding.severity));
        let r = ui
            .add(egui::Label::new(&finding.message).sense(egui::Sense::click()))
            .on_hover_text(format!(
                "{about} — click to select the {} devices and {} links concerned",
                devices.len(),
                links.len()
            ));
        if r.hovered() && !links.is_empty() {
            events.push(SidebarEvent::Highlight(links.iter().copied().collect()));
        }
        if r.clicked() {
            events.push(SidebarEvent::Select {
                devices: devices.clone(),
                links: links.clone(),
            });
        }
    });
    // The change advised is the point of an advice item: shown, not left to a hover.
    if !finding.suggestion.is_empty() {
        ui.indent(("suggestion", finding.code), |ui| {
            ui.add(
                egui::Label::new(RichText::new(format!("→ {}", finding.suggestion)).weak()).wrap(),
            );
        });
    }
}

fn collective_ui(
    ui: &mut Ui,
    analysis: &Analysis,
    settings: &mut CollectiveSettings,
    events: &mut Vec<SidebarEvent>,
) {
    let before = settings.clone();
    ui.horizontal(|ui| {
        ui.checkbox(&mut settings.enabled, "");
        ui.label(RichText::new("Collective").strong());
    });
    if settings.enabled {
        ComboBox::from_label("operation")
            .selected_text(settings.op.cli_name())
            .show_ui(ui, |ui| {
                for op in Op::ALL {
                    ui.selectable_value(&mut settings.op, op, op.cli_name());
                }
            });
        ComboBox::from_label("size")
            .selected_text(Bytes(settings.bytes).to_string())
            .height(300.0)
            .show_ui(ui, |ui| {
                for size in sweep_sizes() {
                    ui.selectable_value(&mut settings.bytes, size.0, size.to_string());
                }
            });
        ComboBox::from_label("algorithm")
            .selected_text(algo_choice_label(settings.algorithm))
            .show_ui(ui, |ui| {
                for a in AlgoChoice::ALL {
                    ui.selectable_value(&mut settings.algorithm, a, algo_choice_label(a));
                }
            });
        ui.checkbox(
            &mut settings.adaptive_routing,
            "adaptive routing (else ECMP)",
        );
        match &analysis.collective {
            Some(Ok(result)) => collective_result_ui(
                ui,
                result,
                (analysis.calibrated.as_deref(), analysis.checked.as_ref()),
                events,
            ),
            Some(Err(_)) if analysis.metrics.gpus == 0 => {
                ui.weak("Add GPUs to see collective times.");
            }
            Some(Err(message)) => {
                ui.colored_label(ui.visuals().warn_fg_color, message.to_string());
            }
            None => {}
        }
    }
    if *settings != before {
        events.push(SidebarEvent::SettingsChanged);
    }
}

fn collective_result_ui(
    ui: &mut Ui,
    r: &CollectiveResult,
    (calibrated, checked): (Option<&str>, Option<&Checked>),
    events: &mut Vec<SidebarEvent>,
) {
    ui.label(
        RichText::new(format!(
            "{} of {} on {} GPUs: {}",
            r.op,
            r.bytes,
            r.gpus,
            time_text(r.time_us)
        ))
        .strong(),
    );
    ui.label(format!(
        "{}, {}: latency {} + bandwidth {}",
        r.library_text(),
        r.algorithm_text().replace('/', " / "),
        time_text(r.latency_us),
        time_text(r.bandwidth_us)
    ))
    .on_hover_text(format!("{}.\nAssumes {}.", r.why, r.assumes));
    if let Some(cal) = calibrated {
        // The times are the calibrated model's: say so where they show, not only on hover.
        // "fitted to a.log: NVLink efficiency …": the log's name shows, the figures on hover.
        let head = cal.split(": ").next().unwrap_or(cal);
        let label = if head == "calibrated" {
            head.to_string()
        } else {
            format!("calibrated: {head}")
        };
        ui.weak(label).on_hover_text(cal);
    }
    if let Some(checked) = checked {
        // How far the model was from measurements of systems like this one, where it shows.
        ui.weak(checked.short_text()).on_hover_text(checked.text());
    }
    ui.label(format!(
        "busbw {:.1} GB/s (line-rate bound {:.1} GB/s), algbw {:.1} GB/s",
        r.busbw_gbyte_s, r.busbw_bound_gbyte_s, r.algbw_gbyte_s
    ))
    .on_hover_text(
        "busbw: the bus bandwidth nccl-tests prints (algbw × its factor for the operation: \
         2(n−1)/n for an all-reduce), so sizes and GPU counts compare.\n\
         Line-rate bound: the most busbw the links could carry for this operation at their \
         full rates, every port of every node sending at once, before any library or \
         protocol cost and without in-network reduction. An algorithm that uses fewer links \
         (a ring over 2 of a node's 3 cables) stays further below it.\n\
         algbw: bytes / time.",
    );
    let bottleneck_links: Vec<LinkId> = r
        .bottleneck
        .iter()
        .filter(|l| l.utilization >= 0.999)
        .filter_map(|l| l.link)
        .collect();
    if let Some(top) = r.bottleneck.first() {
        let text = format!("Bottleneck: {}", top.label);
        let resp = ui
            .add(egui::Label::new(RichText::new(text).underline()).sense(egui::Sense::click()))
            .on_hover_text("Click to select the bottleneck links");
        if resp.hovered() {
            events.push(SidebarEvent::Highlight(
                bottleneck_links.iter().copied().collect(),
            ));
        }
        if resp.clicked() {
            events.push(SidebarEvent::Select {
                devices: Vec::new(),
                links: bottleneck_links.clone(),
            });
        }
    }
    egui::CollapsingHeader::new("busiest resources")
        .id_salt("busiest")
        .show(ui, |ui| {
            for (i, load) in r.bottleneck.iter().take(8).enumerate() {
                ui.push_id(i, |ui| {
                    ui.horizontal(|ui| {
                        ui.add(
                            egui::ProgressBar::new(load.utilization.clamp(0.0, 1.0) as f32)
                                .desired_width(60.0)
                                .text(percent(load.utilization)),
                        );
                        // Cut to the sidebar's width (the whole name on hover): a long link
                        // name must not widen the panel, or every line below it would clip
                        // instead of wrapping.
                        ui.add(egui::Label::new(&load.label).truncate())
                            .on_hover_text(&load.label);
                    });
                });
            }
        });
    for note in &r.notes {
        ui.weak(note);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The sidebar's analysis adds the workload's own findings to the design's advice: on the
    /// 3:1 fat-tree preset, Llama 8B's gradient all-reduce queues on the leaves' uplinks.
    #[test]
    fn analysis_flags_a_congested_workload_part() {
        let catalog = Catalog::builtin();
        let preset = super::super::presets::PRESETS
            .iter()
            .find(|p| p.file == "dgx-h100-fat-tree-3to1.ron")
            .expect("the 3:1 fat-tree preset");
        let design = crate::io::parse_design(preset.text, preset.file).expect("a design");
        let mut query = CollectiveQuery::new(Op::AllReduce, crate::model::Bytes(1 << 30));
        query.routing = Routing::Adaptive;
        let analyse =
            |workload| assess(&design, &catalog, &question(Some(query.clone()), workload));
        let congested = |a: &Analysis| {
            a.advice
                .iter()
                .find(|x| x.code == "workload-congestion")
                .cloned()
        };
        assert!(congested(&analyse(None)).is_none());
        let analysis = analyse(Workload::llama(8));
        let found = congested(&analysis).expect("the gradient all-reduce is flagged");
        let Some(Ok(step)) = &analysis.workload else {
            panic!("a training step: {:?}", analysis.workload);
        };
        let part = &step.components[0];
        assert!(part.time_us_per_step > 1.2 * part.ideal_us_per_step);
        assert!(found.message.starts_with(&part.name), "{}", found.message);
        let busiest: Vec<LinkId> = part
            .bottleneck
            .iter()
            .filter_map(|b| b.link)
            .take(4)
            .collect();
        assert_eq!(found.links, busiest);
        // Advice stays most severe first.
        assert!(
            analysis
                .advice
                .windows(2)
                .all(|w| w[0].severity <= w[1].severity)
        );
    }
}
