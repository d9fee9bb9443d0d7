//! The whole assessment of a design in one call: metrics, the collective and the heat it puts
//! on each link, the checks (inside the metrics), the architect's advice, a workload's
//! communication per step, and the what-if comparison against the healthy design. The
//! designer's sidebar, `eval`, `workload`, `compare` and `report` all ask this one function, so
//! they cannot string the parts together differently.

use super::accuracy::{Checked, Published, SystemClass};
use super::collective::{
    self, CollectiveError, CollectiveQuery, CollectiveResult, Op, Routing, Workload,
    WorkloadResult, Workspace, add_workload_advice, advice_reusing, workload_step_comm_in,
};
use super::finding::Finding;
use super::job::{JobError, JobOutcome, add_job_advice, job_of_workload};
use super::whatif::{CollectiveFigures, Figures, HealthyCache, WhatIfDelta, default_query, delta};
use super::{Metrics, evaluate};
use crate::model::{Bytes, Catalog, Design, LinkId};
use std::collections::HashMap;

/// What the caller wants to know of a design, beyond its metrics and advice.
#[derive(Debug, Clone, PartialEq)]
pub struct Question {
    /// The collective to model; None when the caller shows none.
    pub collective: Option<CollectiveQuery>,
    /// A training or serving workload to weigh against the design.
    pub workload: Option<Workload>,
    /// How the workload's flows spread over equal-cost paths.
    pub workload_routing: Routing,
    /// Compare against the healthy design when links are failed or degraded.
    pub whatif: bool,
}

impl Question {
    /// Metrics and advice only.
    pub fn metrics_only() -> Self {
        Question {
            collective: None,
            workload: None,
            workload_routing: Routing::Ecmp,
            whatif: false,
        }
    }

    /// One collective, and metrics and advice.
    pub fn collective(query: CollectiveQuery) -> Self {
        Question {
            collective: Some(query),
            ..Question::metrics_only()
        }
    }

    /// An all-reduce of `bytes` as NCCL's tuner picks it, and a workload's step with ECMP
    /// routing when one is given: what the report and the comparison weigh.
    pub fn all_reduce_and_workload(bytes: Bytes, workload: Option<Workload>) -> Self {
        Question {
            collective: Some(CollectiveQuery::new(Op::AllReduce, bytes)),
            workload,
            ..Question::metrics_only()
        }
    }

    /// The same question with the collective's and the workload's flows spread by `routing`.
    pub fn routed(mut self, routing: Routing) -> Self {
        if let Some(q) = &mut self.collective {
            q.routing = routing;
        }
        self.workload_routing = routing;
        self
    }
}

/// Everything known of one design for one question.
#[derive(Debug, Clone)]
pub struct Assessment {
    pub metrics: Metrics,
    /// None when no collective was asked for.
    pub collective: Option<Result<CollectiveResult, CollectiveError>>,
    /// Utilisation of each drawn link during the collective (1.0 = the bottleneck).
    pub heat: HashMap<LinkId, f64>,
    /// The architect's findings (for the workload, if any), most severe first.
    pub advice: Vec<Finding>,
    /// None when no workload was asked for.
    pub workload: Option<Result<WorkloadResult, CollectiveError>>,
    /// The workload as a job (step time, MFU, cost per token, or serving rates); None when
    /// no workload was asked for, its communication failed, or its model has no known shape.
    pub job: Option<Result<JobOutcome, JobError>>,
    /// Against the healthy design, when asked and links are failed or degraded.
    pub whatif: Option<WhatIfDelta>,
    /// What the design's calibration sets (`Calibration::summary`): its times are the
    /// calibrated model's. None without one.
    pub calibrated: Option<String>,
    /// How far the model was from published measurements of systems of this kind near the
    /// collective's size; None when no collective ran or the caller gave no published sets.
    pub checked: Option<Checked>,
}

/// Assesses a design once. Callers that assess revision after revision keep an `Assessor`,
/// which remembers the healthy design's figures between calls.
pub fn assess(design: &Design, catalog: &Catalog, question: &Question) -> Assessment {
    Assessor::default().assess(design, catalog, question)
}

/// Assesses designs one after another, keeping what carries over from one to the next: the
/// healthy design's figures, and the collective model's memory.
#[derive(Default)]
pub struct Assessor {
    healthy: HealthyCache,
    workspace: Workspace,
    published: Option<&'static Published>,
}

impl Assessor {
    /// An assessor that also checks each collective against the published measurements.
    pub fn with_published(published: &'static Published) -> Self {
        Assessor {
            published: Some(published),
            ..Assessor::default()
        }
    }

    pub fn assess(
        &mut self,
        design: &Design,
        catalog: &Catalog,
        question: &Question,
    ) -> Assessment {
        let metrics = evaluate(design, catalog);
        let collective = question
            .collective
            .as_ref()
            .map(|q| collective::collective_in(design, catalog, q, &self.workspace));
        let heat = match &collective {
            Some(Ok(result)) => result.link_utilization.iter().copied().collect(),
            _ => HashMap::new(),
        };
        let known = question
            .collective
            .as_ref()
            .zip(collective.as_ref().and_then(|c| c.as_ref().ok()));
        let mut advice = advice_reusing(
            design,
            catalog,
            question.workload.as_ref(),
            known,
            &self.workspace,
        );
        let workload = question.workload.as_ref().map(|w| {
            let routing = question.workload_routing;
            workload_step_comm_in(design, catalog, w, routing, &self.workspace)
        });
        if let Some(Ok(step)) = &workload {
            add_workload_advice(&mut advice, design, step);
        }
        let job = question
            .workload
            .as_ref()
            .zip(workload.as_ref().and_then(|w| w.as_ref().ok()))
            .and_then(|(w, comm)| {
                job_of_workload(
                    design,
                    catalog,
                    w,
                    comm,
                    question.workload_routing,
                    (metrics.cost.total.0, metrics.power.0),
                )
            });
        if let Some(Ok(job)) = &job {
            add_job_advice(&mut advice, design, job);
        }
        // As the step counts it (the job above scaled its own copy): full recomputation
        // repeats the forward's exchanges. Only full changes them, so a workload that names no
        // recomputation (railyard's default, selective) keeps its exchanges as they are.
        let workload = match (question.workload.as_ref(), workload) {
            (Some(w), Some(Ok(comm))) if !w.serving => {
                Some(Ok(w.recompute.unwrap_or_default().communication(comm)))
            }
            (_, other) => other,
        };
        let whatif = if question.whatif {
            let current = current_figures(&metrics, question.collective.as_ref(), known, |q| {
                collective::collective_in(design, catalog, q, &self.workspace).ok()
            });
            delta(
                design,
                catalog,
                question.collective.as_ref(),
                current,
                &mut self.healthy,
                &self.workspace,
            )
        } else {
            None
        };
        // A calibrated design's times answer to its own log, which the sidebar names.
        let checked = self
            .published
            .zip(known)
            .filter(|_| design.calibration.is_none())
            .map(|(published, (query, result))| {
                SystemClass::of_run(design, catalog, result.gpus, &self.workspace)
                    .map_or_else(Checked::mixed, |class| {
                        Checked::of(published, &class, query, result.gpus)
                    })
            });
        Assessment {
            metrics,
            collective,
            heat,
            advice,
            workload,
            job,
            whatif,
            calibrated: design.calibration.as_ref().and_then(|c| c.summary()),
            checked,
        }
    }
}

/// The current design's what-if figures from what the assessment has computed already: its
/// bisection from the metrics and, when the collective asked for is an all-reduce, that
/// result; the all-to-all with the same settings is run by `run`.
fn current_figures(
    metrics: &Metrics,
    query: Option<&CollectiveQuery>,
    known: Option<(&CollectiveQuery, &CollectiveResult)>,
    run: impl Fn(&CollectiveQuery) -> Option<CollectiveResult>,
) -> Option<Figures> {
    let base = query
        .cloned()
        .unwrap_or_else(|| default_query(Bytes(1 << 30)));
    let with_op = |op| {
        let mut q = base.clone();
        q.op = op;
        q
    };
    let all_reduce_query = with_op(Op::AllReduce);
    let all_reduce = match known {
        Some((kq, kr)) if *kq == all_reduce_query => Some(kr.clone()),
        // The collective asked for failed: the all-reduce it is cannot run either.
        _ if query == Some(&all_reduce_query) => None,
        _ => run(&all_reduce_query),
    };
    let figures_of = |r: &CollectiveResult| CollectiveFigures {
        time_us: r.time_us,
        busbw_gbyte_s: r.busbw_gbyte_s,
    };
    Some(Figures {
        bisection: metrics.bisection.value,
        all_reduce: all_reduce.as_ref().map(figures_of),
        all_to_all: run(&with_op(Op::AllToAll)).as_ref().map(figures_of),
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::analysis::whatif::figures;
    use crate::generate::{Template, TemplateSpec, generate};
    use crate::model::{LinkState, PartId};

    fn rail_optimized(nodes: u32) -> Design {
        let mut spec = TemplateSpec::new(Template::RailOptimized);
        spec.nodes = Some(nodes);
        spec.node = Some(PartId::new("dgx-h100"));
        generate(&spec, &Catalog::builtin()).expect("a rail-optimized fabric")
    }

    #[test]
    fn the_what_if_reuses_the_assessment_and_matches_a_fresh_evaluation() {
        let catalog = Catalog::builtin();
        let mut design = rail_optimized(4);
        // One NIC link of the first node down: that node's rail 0 is cut off.
        let first_nic_link = design
            .links
            .iter()
            .position(|l| l.tech.is_network())
            .expect("a scale-out link");
        design.links[first_nic_link].state = LinkState::Failed;
        let question = Question {
            whatif: true,
            ..Question::collective(CollectiveQuery::new(Op::AllReduce, Bytes(1 << 30)))
        };
        let a = assess(&design, &catalog, &question);
        let whatif = a.whatif.expect("a failed link gives a what-if");
        assert_eq!(whatif.failed, 1);
        // The figures reused from the assessment are the ones a fresh evaluation gives.
        let query = question.collective.as_ref().expect("a query");
        assert_eq!(whatif.current, figures(&design, &catalog, query));
        let fresh_all_reduce = a.collective.expect("asked").expect("runs");
        assert_eq!(
            whatif.current.all_reduce.map(|f| f.time_us),
            Some(fresh_all_reduce.time_us)
        );
        // Without failures there is nothing to compare.
        design.links[first_nic_link].state = LinkState::Up;
        assert!(assess(&design, &catalog, &question).whatif.is_none());
    }

    #[test]
    fn advice_and_workload_come_from_the_same_question() {
        let catalog = Catalog::builtin();
        let design = rail_optimized(2);
        let question = Question::all_reduce_and_workload(Bytes(1 << 30), Workload::llama(8));
        let a = assess(&design, &catalog, &question);
        let step = a.workload.expect("asked").expect("Llama 8B fits 16 GPUs");
        // 16 H100s: a TP-8 all-reduce in each node and a DP all-reduce across the two.
        assert_eq!(step.mapping.gpus_used, 16);
        assert!(a.collective.expect("asked").is_ok());
        assert!(a.whatif.is_none());
        assert_eq!(
            a.metrics.gpus, 16,
            "two DGX H100 nodes of 8 GPUs each, as generated"
        );
    }
}
