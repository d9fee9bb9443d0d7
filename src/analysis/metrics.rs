//! Everything the sidebar, the command line and the tests show about a design, in one call.

use crate::analysis::bisection::{Bisection, bisection};
use crate::analysis::checks::checks;
use crate::analysis::checks::codes::UNKNOWN_PART;
use crate::analysis::cost::{CostSummary, bom_lines, cost_summary};
use crate::analysis::finding::Finding;
use crate::analysis::job::economics::{RunningCost, Site};
use crate::model::{Catalog, Design, PartId, Watts};
use serde::Serialize;
use std::collections::BTreeSet;

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
    /// Parts on the bill the catalog gives no price, counted at $0: the cost leaves them out.
    pub unpriced_parts: Vec<PartId>,
    pub checks: Vec<Finding>,
}

impl Metrics {
    /// Parts missing from the catalog are left out of the bill, cost and power alike.
    pub fn parts_unknown(&self) -> bool {
        self.checks.iter().any(|f| f.code == UNKNOWN_PART)
    }

    /// What the cost total leaves out, or None when it is whole: parts missing from the
    /// catalog, and parts the catalog gives no price (a chassis whose price is not public).
    pub fn cost_gap(&self) -> Option<String> {
        let mut gaps = Vec::new();
        if self.parts_unknown() {
            gaps.push("parts missing from the catalog are not counted".to_string());
        }
        if !self.unpriced_parts.is_empty() {
            let names: Vec<String> = self
                .unpriced_parts
                .iter()
                .map(|p| format!("`{p}`"))
                .collect();
            gaps.push(format!(
                "{} {} no price in the catalog (counted at $0)",
                names.join(", "),
                if names.len() == 1 { "has" } else { "have" }
            ));
        }
        (!gaps.is_empty()).then(|| gaps.join("; "))
    }
}

/// Structural metrics of a design: counts, bisection, cost and power (from the same BOM
/// lines as the CSV export) and the design checks.
pub fn evaluate(design: &Design, catalog: &Catalog) -> Metrics {
    let lines = bom_lines(design, catalog);
    let cost = cost_summary(&lines);
    let unpriced_parts: BTreeSet<PartId> = lines
        .iter()
        .filter(|l| l.price_source.is_empty() && l.quantity > 0)
        .map(|l| l.part.clone())
        .collect();
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
        unpriced_parts: unpriced_parts.into_iter().collect(),
        checks: checks(design, catalog),
    }
}
