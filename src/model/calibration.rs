//! A calibration: per-technology efficiency and latency fitted to the user's own nccl-tests
//! measurements, saved with the design. It replaces the built-in figures for the technologies
//! it names and leaves the rest of the model alone, so a calibrated design still follows the
//! same physics; only the numbers a measurement pinned down differ.

use super::link::LinkTech;
use serde::{Deserialize, Serialize};

/// Fitted values for one technology. A `None` keeps the built-in figure.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct TechCalibration {
    pub tech: LinkTech,
    /// Share of the line rate data gets (0 < e ≤ 1), for every link and port of this
    /// technology, whatever its transport.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub efficiency: Option<f64>,
    /// Latency of one hop of this technology (µs, ≥ 0), in place of the built-in figure.
    ///
    /// For a network or Thunderbolt technology: the stack latency of a hop over a drawn link,
    /// added to NCCL's per-step NET constants (built in: 0 for InfiniBand, 1 for RoCE, 20 for
    /// TCP, ...; see `efficiency::stack_latency_us`).
    ///
    /// For NVLink, NVLink bridge and PCIe: the per-step latency of one intra-node hop with
    /// the LL protocol, in place of NCCL's constant (0.6 µs over NVLink, 1.0 µs over PCIe).
    /// NCCL's constants for LL128 and Simple and for every algorithm on that hop move by the
    /// same difference (floored at 0): a slower or faster hop adds to or takes from each
    /// protocol's own synchronisation cost alike. Multi-node plans still charge at least
    /// NCCL's network overhead per intra-node step, as NCCL does.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub latency_us: Option<f64>,
}

/// Where a calibration came from and what it sets.
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Calibration {
    /// The measurement's file name (or "pasted text").
    #[serde(default)]
    pub source: String,
    /// The nccl-tests binary that produced it, e.g. `all_reduce_perf`.
    #[serde(default)]
    pub test: String,
    /// When it was fitted, seconds since the Unix epoch (UTC).
    #[serde(default)]
    pub fitted_at_unix_s: u64,
    #[serde(default)]
    pub techs: Vec<TechCalibration>,
}

impl Calibration {
    pub fn tech(&self, tech: LinkTech) -> Option<&TechCalibration> {
        self.techs.iter().find(|t| t.tech == tech)
    }

    /// The fitted efficiency of a technology, when set and usable.
    pub fn efficiency(&self, tech: LinkTech) -> Option<f64> {
        self.tech(tech)
            .and_then(|t| t.efficiency)
            .filter(|e| e.is_finite() && *e > 0.0 && *e <= 1.0)
    }

    /// The fitted hop latency of a technology (µs), when set and usable.
    pub fn latency_us(&self, tech: LinkTech) -> Option<f64> {
        self.tech(tech)
            .and_then(|t| t.latency_us)
            .filter(|l| l.is_finite() && *l >= 0.0)
    }

    /// Sets (or with None clears) one technology's values, keeping the list sorted.
    pub fn set(&mut self, tech: LinkTech, efficiency: Option<f64>, latency_us: Option<f64>) {
        self.techs.retain(|t| t.tech != tech);
        if efficiency.is_some() || latency_us.is_some() {
            self.techs.push(TechCalibration {
                tech,
                efficiency,
                latency_us,
            });
            self.techs.sort_by_key(|t| t.tech);
        }
    }

    /// Problems that would make the model wrong: values out of range, a technology twice.
    pub fn problems(&self) -> Vec<String> {
        let mut out = Vec::new();
        for (i, t) in self.techs.iter().enumerate() {
            if self.techs[..i].iter().any(|o| o.tech == t.tech) {
                out.push(format!("calibration lists {} twice", t.tech.label()));
            }
            if let Some(e) = t.efficiency
                && !(e.is_finite() && e > 0.0 && e <= 1.0)
            {
                out.push(format!(
                    "calibration: {} efficiency {e} is not in (0, 1]",
                    t.tech.label()
                ));
            }
            if let Some(l) = t.latency_us
                && !(l.is_finite() && l >= 0.0)
            {
                out.push(format!(
                    "calibration: {} latency {l} µs is not a non-negative number",
                    t.tech.label()
                ));
            }
        }
        out
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn set_replaces_and_clears() {
        let mut c = Calibration::default();
        c.set(LinkTech::InfiniBand, Some(0.7), None);
        c.set(LinkTech::NvLink, Some(0.8), Some(1.0));
        c.set(LinkTech::InfiniBand, Some(0.9), Some(2.0));
        assert_eq!(c.techs.len(), 2);
        assert_eq!(c.techs[0].tech, LinkTech::NvLink);
        assert_eq!(c.efficiency(LinkTech::InfiniBand), Some(0.9));
        assert_eq!(c.latency_us(LinkTech::InfiniBand), Some(2.0));
        c.set(LinkTech::InfiniBand, None, None);
        assert_eq!(c.efficiency(LinkTech::InfiniBand), None);
        assert_eq!(c.techs.len(), 1);
    }

    #[test]
    fn out_of_range_values_are_problems_and_ignored() {
        let mut c = Calibration::default();
        c.set(LinkTech::Pcie, Some(1.5), Some(-1.0));
        assert_eq!(c.problems().len(), 2);
        assert_eq!(c.efficiency(LinkTech::Pcie), None);
        assert_eq!(c.latency_us(LinkTech::Pcie), None);
    }
}
