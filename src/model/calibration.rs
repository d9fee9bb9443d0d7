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
    /// NCCL's ring and tree constants for LL128 and Simple on that hop move by the same
    /// difference (floored at 0) unless the protocol has a figure of its own below; NVLS and
    /// CollNet keep NCCL's. Multi-node plans still charge at least NCCL's network overhead
    /// per intra-node step, as NCCL does. NCCL's choice of algorithm and protocol is still
    /// made with its own constants: a calibration changes step times, not the choice.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub latency_us: Option<f64>,
    /// For NVLink, NVLink bridge and PCIe only: the per-step latency of one intra-node hop
    /// of a ring with the LL128 protocol (µs, ≥ 0), in place of NCCL's constant moved by the
    /// LL difference. Every algorithm's LL128 column moves by this protocol's own
    /// difference. A log shows it where LL128 is chosen (mid sizes); it lets a fit bend
    /// the curve there instead of moving every protocol alike.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub ll128_latency_us: Option<f64>,
    /// As `ll128_latency_us`, for the Simple protocol (large sizes' steps).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub simple_latency_us: Option<f64>,
    /// For NVLink and NVLink bridge only: the rate LL128 moves data at, as a share of what
    /// Simple moves over the same links (0 < s ≤ 1), in place of its line format's 120 of
    /// every 128 bytes. A log shows it where LL128 is chosen: the kernels' own throughput
    /// can hold LL128 well under its line format's share (8×A100 sweeps: about half).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub ll128_share: Option<f64>,
}

impl TechCalibration {
    /// An entry that sets nothing: every figure stays built in.
    fn empty(tech: LinkTech) -> TechCalibration {
        TechCalibration {
            tech,
            efficiency: None,
            latency_us: None,
            ll128_latency_us: None,
            simple_latency_us: None,
            ll128_share: None,
        }
    }
}

/// The protocols whose hop latency a calibration can set on its own, besides LL's
/// (`TechCalibration::latency_us`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize)]
pub enum CalibratedProtocol {
    Ll128,
    Simple,
}

impl CalibratedProtocol {
    pub const ALL: [CalibratedProtocol; 2] =
        [CalibratedProtocol::Ll128, CalibratedProtocol::Simple];

    pub fn label(self) -> &'static str {
        match self {
            CalibratedProtocol::Ll128 => "LL128",
            CalibratedProtocol::Simple => "Simple",
        }
    }
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

    /// The fitted hop latency of one protocol on an intra-node technology (µs), when set
    /// and usable.
    pub fn protocol_latency_us(&self, tech: LinkTech, protocol: CalibratedProtocol) -> Option<f64> {
        self.tech(tech)
            .and_then(|t| match protocol {
                CalibratedProtocol::Ll128 => t.ll128_latency_us,
                CalibratedProtocol::Simple => t.simple_latency_us,
            })
            .filter(|l| l.is_finite() && *l >= 0.0)
    }

    /// The fitted LL128 rate share of a technology (see `TechCalibration::ll128_share`),
    /// when set and usable.
    pub fn ll128_share(&self, tech: LinkTech) -> Option<f64> {
        self.tech(tech)
            .and_then(|t| t.ll128_share)
            .filter(|s| s.is_finite() && *s > 0.0 && *s <= 1.0)
    }

    /// Sets (or with None clears) one technology's LL128 rate share.
    pub fn set_ll128_share(&mut self, tech: LinkTech, share: Option<f64>) {
        let mut t = self
            .tech(tech)
            .cloned()
            .unwrap_or_else(|| TechCalibration::empty(tech));
        t.ll128_share = share;
        self.put(t);
    }

    /// Sets (or with None clears) one technology's efficiency and LL latency, keeping the
    /// list sorted; its per-protocol figures stay.
    pub fn set(&mut self, tech: LinkTech, efficiency: Option<f64>, latency_us: Option<f64>) {
        let old = self.tech(tech).cloned();
        self.put(TechCalibration {
            tech,
            efficiency,
            latency_us,
            ll128_latency_us: old.as_ref().and_then(|o| o.ll128_latency_us),
            simple_latency_us: old.as_ref().and_then(|o| o.simple_latency_us),
            ll128_share: old.and_then(|o| o.ll128_share),
        });
    }

    /// Sets (or with None clears) one protocol's hop latency of a technology.
    pub fn set_protocol_latency(
        &mut self,
        tech: LinkTech,
        protocol: CalibratedProtocol,
        latency_us: Option<f64>,
    ) {
        let mut t = self
            .tech(tech)
            .cloned()
            .unwrap_or_else(|| TechCalibration::empty(tech));
        match protocol {
            CalibratedProtocol::Ll128 => t.ll128_latency_us = latency_us,
            CalibratedProtocol::Simple => t.simple_latency_us = latency_us,
        }
        self.put(t);
    }

    /// Replaces a technology's entry, dropping it when it sets nothing.
    fn put(&mut self, t: TechCalibration) {
        self.techs.retain(|o| o.tech != t.tech);
        if t.efficiency.is_some()
            || t.latency_us.is_some()
            || t.ll128_latency_us.is_some()
            || t.simple_latency_us.is_some()
            || t.ll128_share.is_some()
        {
            self.techs.push(t);
            self.techs.sort_by_key(|t| t.tech);
        }
    }

    /// What the calibration sets, in one line a reader can check against the fit: "fitted
    /// to a.log: NVLink efficiency 0.765, hop latency 1.65 µs, LL128 hop 2.40 µs, …". None
    /// when it sets nothing.
    pub fn summary(&self) -> Option<String> {
        let techs: Vec<String> = self
            .techs
            .iter()
            .filter_map(|t| {
                let mut parts = Vec::new();
                if let Some(e) = t.efficiency {
                    parts.push(format!("efficiency {e:.3}"));
                }
                for (what, l) in [
                    ("hop latency", t.latency_us),
                    ("LL128 hop", t.ll128_latency_us),
                    ("Simple hop", t.simple_latency_us),
                ] {
                    if let Some(l) = l {
                        parts.push(format!("{what} {l:.2} µs"));
                    }
                }
                if let Some(share) = t.ll128_share {
                    parts.push(format!("LL128 rate {share:.3} of Simple's"));
                }
                (!parts.is_empty()).then(|| format!("{} {}", t.tech.label(), parts.join(", ")))
            })
            .collect();
        if techs.is_empty() {
            return None;
        }
        let from = if self.source.is_empty() {
            "calibrated".to_string()
        } else {
            format!("fitted to {}", self.source)
        };
        Some(format!("{from}: {}", techs.join("; ")))
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
            if let Some(s) = t.ll128_share
                && !(s.is_finite() && s > 0.0 && s <= 1.0)
            {
                out.push(format!(
                    "calibration: {} LL128 share {s} is not in (0, 1]",
                    t.tech.label()
                ));
            }
            for (what, l) in [
                ("latency", t.latency_us),
                ("LL128 latency", t.ll128_latency_us),
                ("Simple latency", t.simple_latency_us),
            ] {
                if let Some(l) = l
                    && !(l.is_finite() && l >= 0.0)
                {
                    out.push(format!(
                        "calibration: {} {what} {l} µs is not a non-negative number",
                        t.tech.label()
                    ));
                }
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
    fn a_protocol_latency_survives_setting_the_ll_figures_and_keeps_the_entry() {
        let mut c = Calibration::default();
        c.set_protocol_latency(LinkTech::NvLink, CalibratedProtocol::Ll128, Some(7.0));
        assert_eq!(c.techs.len(), 1);
        c.set(LinkTech::NvLink, Some(0.8), Some(1.5));
        assert_eq!(
            c.protocol_latency_us(LinkTech::NvLink, CalibratedProtocol::Ll128),
            Some(7.0)
        );
        assert_eq!(
            c.protocol_latency_us(LinkTech::NvLink, CalibratedProtocol::Simple),
            None
        );
        // Clearing the LL figures keeps the entry while a protocol latency is set.
        c.set(LinkTech::NvLink, None, None);
        assert_eq!(c.techs.len(), 1);
        c.set_protocol_latency(LinkTech::NvLink, CalibratedProtocol::Ll128, None);
        assert!(c.techs.is_empty());
        c.set_protocol_latency(LinkTech::Pcie, CalibratedProtocol::Simple, Some(-2.0));
        assert_eq!(c.problems().len(), 1);
        assert_eq!(
            c.protocol_latency_us(LinkTech::Pcie, CalibratedProtocol::Simple),
            None
        );
    }

    #[test]
    fn the_summary_names_every_fitted_figure() {
        let mut c = Calibration::default();
        assert_eq!(c.summary(), None);
        c.set(LinkTech::NvLink, Some(0.765), Some(1.65));
        c.set_protocol_latency(LinkTech::NvLink, CalibratedProtocol::Ll128, Some(2.4));
        c.set_ll128_share(LinkTech::NvLink, Some(0.57));
        c.set(LinkTech::InfiniBand, Some(0.9), None);
        c.source = "a.log".into();
        assert_eq!(
            c.summary().as_deref(),
            Some(
                "fitted to a.log: NVLink efficiency 0.765, hop latency 1.65 µs, LL128 hop \
                 2.40 µs, LL128 rate 0.570 of Simple's; InfiniBand efficiency 0.900"
            )
        );
    }

    #[test]
    fn an_ll128_share_keeps_the_entry_and_is_checked() {
        let mut c = Calibration::default();
        c.set_ll128_share(LinkTech::NvLink, Some(0.55));
        c.set(LinkTech::NvLink, Some(0.8), None);
        assert_eq!(c.ll128_share(LinkTech::NvLink), Some(0.55));
        c.set(LinkTech::NvLink, None, None);
        assert_eq!(c.techs.len(), 1);
        c.set_ll128_share(LinkTech::NvLink, None);
        assert!(c.techs.is_empty());
        c.set_ll128_share(LinkTech::NvLink, Some(1.2));
        assert_eq!(c.problems().len(), 1);
        assert_eq!(c.ll128_share(LinkTech::NvLink), None);
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
