//! Everything the sidebar, the command line and the tests show about a design, in one call.

use crate::analysis::bisection::{Bisection, bisection};
use crate::analysis::checks::checks;
use crate::analysis::cost::{CostSummary, bom_lines, cost_summary};
use crate::analysis::finding::Finding;
use crate::analysis::job::economics::{RunningCost, Site};
use crate::model::{Catalog, Design, Watts};
use serde::Serialize;

#[derive(Debug, Clone, Serialize)]
pub struct Metrics {
    pub gpus: u64,
    pub nodes: usize,
    pub switches: usize,
    pub links: usize,
    pub bisection: Bisection,
    pub cost: CostSummary,
    /// Switches / total cost; None when the design costs nothing.
    pub switch_cost_share: Option<f64>,
    /// (Switches + NICs + cables and optics) / total cost; None when it costs nothing.
    pub network_cost_share: Option<f64>,
    pub power: Watts,
    /// Electricity a month at full draw, at the site's PUE and price.
    pub running: RunningCost,
    pub checks: Vec<Finding>,
}

/// Structural metrics of a design: counts, bisection, cost and power (from the same BOM
/// lines as the CSV export) and the design checks.
pub fn evaluate(design: &Design, catalog: &Catalog) -> Metrics {
    let cost = cost_summary(&bom_lines(design, catalog));
    Metrics {
        gpus: design.gpu_count(),
        nodes: design.node_count(),
        switches: design.switch_count(),
        links: design.links.len(),
        bisection: bisection(design, catalog),
        switch_cost_share: cost.switch_cost_share(),
        network_cost_share: cost.network_cost_share(),
        power: cost.power_total,
        running: RunningCost::at_full_draw(cost.power_total.0, Site::of(design, catalog)),
        cost,
        checks: checks(design, catalog),
    }
}
