//! Fits the model to the user's own nccl-tests log: the efficiency of the technology that
//! limits large messages, and the hop latency of the network technology small messages
//! cross, or, when the measured path crosses no network link (one node, one NVSwitch
//! domain), the intra-node hop latency (NVLink, NVLink bridge or PCIe) of its steps.
//! Nothing else moves: no per-system fudge factor, only figures of technologies on the
//! measured path, so the fitted values carry to other designs built from the same parts.
//!
//! The efficiency is fitted by least squares in relative error. At large sizes the time is
//! latency + bandwidth, and the bandwidth term scales with 1 / efficiency of the bottleneck
//! technology, so one ratio per round recovers it; rounds repeat because NVLS' pipeline fill
//! and the tuner's choice also move with the rate. Large rows run for milliseconds,
//! averaged over many iterations: they are not noisy the way small ones are, so least
//! squares keeps what every row says.
//!
//! At small sizes the time grows by a known number of steps per µs of hop latency,
//! measured by evaluating the model twice, so each latency-bound row alone gives a hop
//! latency. The fit is their median weighted by slope / measured time, which minimises the
//! sum of |relative error|. One small row can be several times its neighbours (68 µs among
//! 13–20 µs in the public DGX H100 log): squares let it pull the fit by its size, a median
//! by one place at most, and unlike Huber or Tukey weights it needs no tuning constant. On
//! a noise-free log every row gives the same latency and the median is exact.
//!
//! One hop latency moves every protocol's steps alike, but the mid sizes' LL128 and the
//! large sizes' Simple steps can cost more or less than that: the public 8×A100 sweeps take
//! several times NCCL's constants there. With an intra-node hop fitted, each of those
//! protocols then gets a hop latency of its own, the weighted median of the ring and tree
//! rows that chose it (at least two, outside the small rows LL's fit uses), and the
//! efficiency comes from the rows still bandwidth-bound against their measured time. When
//! the small rows measured only the launches (nccl-tests -g 8), LL's hop latency comes the
//! same way from the mid-size rows that chose LL.
//!
//! LL128's rate bends the curve too: its kernels can move data well under the line format's
//! 120 of 128 bytes (the 8×A100 sweeps' 4–16 MiB rows rise 30–40 % slower than Simple's
//! rate would let them). With at least three LL128 rows spread over 4× in size, its hop
//! latency and its rate (a share of Simple's) are fitted together, by least squares in
//! relative error; both enter the time linearly, so one solve gives them.
//!
//! In a multi-node log the intra-node steps are not fitted: NCCL charges each of them at
//! least its network overhead there, which hides their hop latency from small sizes, and
//! the network hop is what the log pins down.

use super::collective::efficiency::{self, link_efficiency, stack_latency_us};
use super::collective::latency::{ArchRow, builtin_intra_hop_latency_us};
use super::collective::{
    Algorithm, CollectiveError, CollectiveQuery, CollectiveResult, Op, Protocol, ResourceKind,
    calibrated_ring_step_us, sweep_at,
};
use crate::analysis::nccl_tests::{Harness, NcclLog, gpu_arch_named, test_of_op};
use crate::model::catalog::{GpuArch, PartSpec};
use crate::model::{
    Bytes, CalibratedProtocol, Calibration, Catalog, Design, DeviceKind, Link, LinkTech,
    NcclRelease, ScaleUp, Transport,
};
use serde::Serialize;

/// A row counts as bandwidth-bound (for the efficiency) or latency-bound (for the latency)
/// when that term is at least this share of the model's time.
const DOMINANT_SHARE: f64 = 0.75;
/// Rounds of the alternating fit; each is one efficiency and one latency update.
const ROUNDS: usize = 6;
/// Efficiencies stay in this range whatever the log says.
const MIN_EFFICIENCY: f64 = 0.01;
/// How far a probe moves a hop latency (µs) to measure each row's slope. Small, so that the
/// tuner keeps its choice: a row near a crossover (NVLS against LL, say) that switched
/// algorithm under a 1 µs probe would report the other algorithm's slope.
const PROBE_US: f64 = 0.01;
/// µs of time per µs of hop latency under which a row does not depend on the hop.
const MIN_SLOPE: f64 = 1e-6;
/// A protocol's own hop latency is fitted only from at least this many rows that chose it:
/// one row would be matched exactly, whatever its noise.
const MIN_PROTOCOL_ROWS: usize = 2;
/// A latency-bound row measured this many times the fitted time, or this many times less,
/// is named in the notes: a hiccup the median fit does not follow, which the user may want
/// to measure again.
const OUTLIER_RATIO: f64 = 2.0;

/// What to fit, beyond the log itself.
#[derive(Debug, Clone, Default)]
pub struct FitOptions {
    /// The collective, when the log does not name it (or to override it).
    pub op: Option<Op>,
    /// Ranks, when the log does not list them (or to override it).
    pub gpus: Option<u32>,
    /// The log's name, for the calibration's provenance.
    pub source: String,
    /// When, for the provenance (seconds since the Unix epoch).
    pub fitted_at_unix_s: u64,
}

/// One measured row next to the model.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct RowComparison {
    pub bytes: Bytes,
    /// 1-based line of the log.
    pub line: usize,
    pub measured_time_us: f64,
    pub measured_busbw_gbyte_s: f64,
    /// The model before the fit.
    pub before_time_us: f64,
    pub before_busbw_gbyte_s: f64,
    /// The model with the fitted calibration.
    pub predicted_time_us: f64,
    pub predicted_busbw_gbyte_s: f64,
    pub algorithm: Algorithm,
    pub protocol: Protocol,
    /// Whether the row fed the efficiency fit (bandwidth-bound) or the latency fit.
    pub bandwidth_bound: bool,
    pub latency_bound: bool,
}

impl RowComparison {
    /// predicted / measured − 1 for the time.
    pub fn time_error(&self) -> f64 {
        self.predicted_time_us / self.measured_time_us - 1.0
    }
}

/// A fitted value with what the model used before.
#[derive(Debug, Clone, Copy, PartialEq, Serialize)]
pub struct FittedValue {
    pub tech: LinkTech,
    pub before: f64,
    pub after: f64,
}

/// One protocol's fitted hop latency, with the figure the model used before.
#[derive(Debug, Clone, Copy, PartialEq, Serialize)]
pub struct ProtocolFit {
    pub protocol: CalibratedProtocol,
    pub value: FittedValue,
}

#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct CalibrationFit {
    pub op: Op,
    pub gpus: u32,
    /// The design's calibration with the fitted values set: what "Apply" saves.
    pub calibration: Calibration,
    /// Efficiency (share of line rate) of the technology limiting large sizes.
    pub efficiency: Option<FittedValue>,
    /// Hop latency (µs) of the network technology small sizes cross, or, with no network
    /// link on the measured path, of its intra-node hop (LL per-step latency, see
    /// `TechCalibration::latency_us`).
    pub latency_us: Option<FittedValue>,
    /// With an intra-node hop latency fitted: the hop latency of each protocol the log's
    /// mid and large sizes chose, fitted on its own (µs per ring step of that protocol).
    pub protocol_latencies_us: Vec<ProtocolFit>,
    /// With LL128's hop latency fitted from enough rows of spread sizes: LL128's rate as a
    /// share of Simple's (see `TechCalibration::ll128_share`), fitted with it.
    pub ll128_share: Option<FittedValue>,
    pub rows: Vec<RowComparison>,
    /// Why something was not fitted, and how well the fit holds.
    pub notes: Vec<String>,
}

impl CalibrationFit {
    /// One line per fitted value, "NVLink efficiency: 0.800 -> 0.789", with `arrow` between
    /// before and after and `micro` for µs (the CLI prints plain ASCII).
    pub fn fitted_lines(&self, arrow: &str, micro: &str) -> Vec<String> {
        let mut out = Vec::new();
        if let Some(e) = self.efficiency {
            out.push(format!(
                "{} efficiency: {:.3} {arrow} {:.3}",
                e.tech.label(),
                e.before,
                e.after
            ));
        }
        let latencies = self
            .latency_us
            .map(|l| (l, String::new()))
            .into_iter()
            .chain(
                self.protocol_latencies_us
                    .iter()
                    .map(|q| (q.value, format!("{} ", q.protocol.label()))),
            );
        for (l, protocol) in latencies {
            out.push(format!(
                "{} {protocol}hop latency: {:.2} {arrow} {:.2} {micro}s",
                l.tech.label(),
                l.before,
                l.after
            ));
        }
        if let Some(share) = self.ll128_share {
            out.push(format!(
                "{} LL128 rate (share of Simple's): {:.3} {arrow} {:.3}",
                share.tech.label(),
                share.before,
                share.after
            ));
        }
        out
    }

    /// The largest |time error| over rows of at least `min_bytes`.
    pub fn max_error_from(&self, min_bytes: u64) -> Option<f64> {
        self.rows
            .iter()
            .filter(|r| r.bytes.0 >= min_bytes)
            .map(|r| r.time_error().abs())
            .reduce(f64::max)
    }
}

#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub enum CalibrateError {
    #[error("the log does not say which collective it measured; name it (--op)")]
    UnknownOp,
    #[error("the log measured {log} ranks but the design has {design} GPUs")]
    TooManyRanks { log: u32, design: u64 },
    #[error("the log has no row with a positive size")]
    NoRows,
    #[error(
        "every row is under {floor_us:.1} µs, the time one host thread takes to launch the \
         kernels of its {gpus} GPUs (nccl-tests -g {gpus}): the log measures the launches, not \
         the fabric; run one process per GPU (mpirun or srun with -g 1), or larger sizes"
    )]
    AllLaunchBound { floor_us: f64, gpus: u32 },
    #[error("the model cannot run this collective on the design: {0}")]
    Collective(#[from] CollectiveError),
}

/// Whose latency the fit moves.
#[derive(Debug, Clone, Copy, PartialEq)]
enum LatencyTarget {
    /// The stack latency of hops over drawn links of a network or Thunderbolt technology.
    Network(LinkTech, Transport),
    /// The per-step latency of intra-node hops of NVLink, NVLink bridge or PCIe.
    IntraNode(LinkTech),
}

impl LatencyTarget {
    fn tech(self) -> LinkTech {
        match self {
            LatencyTarget::Network(t, _) | LatencyTarget::IntraNode(t) => t,
        }
    }

    /// The figure the model uses without a calibration of this technology.
    fn builtin(self) -> f64 {
        match self {
            LatencyTarget::Network(t, transport) => stack_latency_us(t, transport),
            LatencyTarget::IntraNode(t) => builtin_intra_hop_latency_us(t).unwrap_or(0.0),
        }
    }
}

/// Intra-node hop technologies a calibration can set a latency for.
const INTRA_TECHS: [LinkTech; 3] = [LinkTech::NvLink, LinkTech::NvLinkBridge, LinkTech::Pcie];

/// One measured point.
struct Point {
    bytes: Bytes,
    line: usize,
    time_us: f64,
    busbw: f64,
}

/// Fits a calibration of `design` to `log`.
pub fn fit_calibration(
    design: &Design,
    catalog: &Catalog,
    log: &NcclLog,
    options: &FitOptions,
) -> Result<CalibrationFit, CalibrateError> {
    let op = options.op.or(log.op).ok_or(CalibrateError::UnknownOp)?;
    // The log is fitted with the tables of the NCCL release that ran it, where it says: the
    // fitted figures are the hardware's, whatever release the design goes on to run.
    let mut notes = Vec::new();
    let with_release;
    let design = match log.nccl {
        Some(release) if design.nccl_release.unwrap_or(NcclRelease::MODELLED) != release => {
            notes.push(format!(
                "fitted with NCCL {release}'s latency tables, NVLS and LL128 rules, the release the \
                 log names; the design runs {}",
                design.nccl_release.unwrap_or(NcclRelease::MODELLED)
            ));
            let mut d = design.clone();
            d.nccl_release = Some(release);
            with_release = d;
            &with_release
        }
        _ => design,
    };
    let design_gpus: u64 = design
        .devices
        .iter()
        .map(|d| match &d.kind {
            DeviceKind::GpuNode(n) => u64::from(n.gpu_count),
            _ => 0,
        })
        .sum();
    let ranks = options.gpus.or(log.ranks);
    if let Some(r) = ranks
        && u64::from(r) > design_gpus
    {
        return Err(CalibrateError::TooManyRanks {
            log: r,
            design: design_gpus,
        });
    }
    // A log from other GPUs fits figures of other hardware: said, not refused, since a user
    // may mean to see how far apart they are.
    let design_archs: Vec<GpuArch> = design
        .devices
        .iter()
        .filter_map(|d| match &d.kind {
            DeviceKind::GpuNode(n) => match catalog.get(&n.gpu).map(|p| &p.spec) {
                Some(PartSpec::Gpu(g)) => Some(g.arch),
                _ => None,
            },
            _ => None,
        })
        .collect();
    for name in &log.gpu_names {
        if let Some(arch) = gpu_arch_named(name)
            && !design_archs.is_empty()
            && !design_archs.contains(&arch)
        {
            notes.push(format!(
                "the log ran on {name} ({arch:?}), not on the design's GPUs ({:?}): the fitted \
                 figures describe that hardware, and carry to this design only as far as the two \
                 share their links",
                design_archs[0]
            ));
        }
    }
    if let Some(r) = ranks
        && u64::from(r) < design_gpus
    {
        notes.push(format!(
            "the log has {r} ranks: fitted on the design's first {r} of {design_gpus} GPUs in \
             node order (as `--gpus {r}` evaluates them)"
        ));
    }
    let points: Vec<Point> = log
        .rows
        .iter()
        .filter(|r| r.bytes.0 > 0)
        .map(|r| {
            let m = r.best();
            Point {
                bytes: r.bytes,
                line: r.line,
                time_us: m.time_us,
                busbw: m.busbw_gbyte_s,
            }
        })
        .collect();
    if points.is_empty() {
        return Err(CalibrateError::NoRows);
    }
    let mut query = CollectiveQuery::new(op, Bytes(0));
    query.gpus = ranks.filter(|&r| u64::from(r) < design_gpus);
    let all_sizes: Vec<Bytes> = points.iter().map(|p| p.bytes).collect();
    let before = sweep_at(design, catalog, &query, &all_sizes)?;
    let (points, before, launch_bound) = without_launch_bound(points, before, &log.harness)?;
    if launch_bound > 0 {
        let h = log.harness;
        notes.push(format!(
            "{launch_bound} row(s) left out: the model's time there is under {:.1} µs, the time \
             one host thread takes to launch the kernels of its {} GPUs (nccl-tests -g {}), so \
             they measure the launches, not the fabric. One process per GPU (mpirun or srun \
             with -g 1) measures the fabric at every size.",
            h.launch_floor_us(),
            h.gpus_per_thread,
            h.gpus_per_thread
        ));
    }
    let sizes: Vec<Bytes> = points.iter().map(|p| p.bytes).collect();

    let mut trial = design.clone();
    let mut calibration = design.calibration.clone().unwrap_or_default();
    let predict = |d: &Design| sweep_at(d, catalog, &query, &sizes);
    let gpus = before[0].gpus;

    let largest = before
        .iter()
        .zip(&points)
        .max_by_key(|(_, p)| p.bytes.0)
        .map(|(r, _)| r)
        .expect("points is not empty");
    let bw_tech = bottleneck_tech(design, largest);
    let lat_link = latency_link(design, largest);

    let bandwidth_bound: Vec<bool> = before
        .iter()
        .map(|r| r.bandwidth_us >= DOMINANT_SHARE * r.time_us)
        .collect();
    let latency_bound: Vec<bool> = before
        .iter()
        .map(|r| r.latency_us >= DOMINANT_SHARE * r.time_us)
        .collect();

    let eff_before = bw_tech.map(|t| current_efficiency(design, catalog, t));
    let mut eff = eff_before;
    let set = |cal: &mut Calibration, tech: LinkTech, e: Option<f64>, l: Option<f64>| {
        let old = cal.tech(tech).cloned();
        cal.set(
            tech,
            e.or(old.as_ref().and_then(|o| o.efficiency)),
            l.or(old.and_then(|o| o.latency_us)),
        );
    };
    // The model now and with `tech`'s LL hop latency `l` moved by PROBE_US: each row's
    // slope per µs of that latency.
    let probe_ll = |trial: &Design, cal: &Calibration, tech: LinkTech, l: f64| {
        let now = predict(trial)?;
        let mut probe = trial.clone();
        let mut probe_cal = cal.clone();
        set(&mut probe_cal, tech, None, Some(l + PROBE_US));
        probe.calibration = Some(probe_cal);
        Ok::<_, CollectiveError>((now, predict(&probe)?))
    };
    let current_latency = |cal: &Calibration, target: LatencyTarget| {
        cal.latency_us(target.tech())
            .unwrap_or_else(|| target.builtin())
    };

    // With no network link on the path, the steps are intra-node: the hop technology whose
    // latency moves the small sizes' time most is the one they cross (a technology off the
    // path moves nothing, so none is fitted that the log did not measure). A log without
    // latency-bound rows (it starts large, or its small rows measured the launches) is
    // probed on every row: the protocols' own hop latencies may still be fitted.
    let any_latency_bound = latency_bound.iter().any(|&b| b);
    let lat_target = match lat_link {
        Some((tech, transport)) => Some(LatencyTarget::Network(tech, transport)),
        None => {
            let mut best: Option<(LatencyTarget, f64)> = None;
            for tech in INTRA_TECHS {
                let target = LatencyTarget::IntraNode(tech);
                let mut probe = design.clone();
                let mut probe_cal = calibration.clone();
                set(
                    &mut probe_cal,
                    tech,
                    None,
                    Some(current_latency(&calibration, target) + 1.0),
                );
                probe.calibration = Some(probe_cal);
                let up = predict(&probe)?;
                let moved: f64 = before
                    .iter()
                    .zip(&up)
                    .zip(&latency_bound)
                    .filter(|(_, b)| **b || !any_latency_bound)
                    .map(|((r, u), _)| (u.time_us - r.time_us) / r.time_us)
                    .sum();
                if moved > 1e-9 && best.is_none_or(|(_, m)| moved > m) {
                    best = Some((target, moved));
                }
            }
            best.map(|(t, _)| t)
        }
    };
    let lat_before = lat_target.map(|t| current_latency(&calibration, t));
    // With no network on the path, each protocol's intra-node hop latency is fitted too.
    let fits_protocols = matches!(lat_target, Some(LatencyTarget::IntraNode(_)));
    let mut lat = lat_before;

    match (bw_tech, bandwidth_bound.iter().any(|&b| b)) {
        (None, _) => notes.push("no bottleneck at the largest size: efficiency not fitted".into()),
        (Some(_), false) => notes.push(
            "no row is bandwidth-bound (the log stops at small sizes): efficiency not fitted"
                .into(),
        ),
        _ => {}
    }
    if !latency_bound.iter().any(|&b| b) {
        notes.push(if fits_protocols {
            "no row is latency-bound (the log starts at large sizes, or its small rows measure \
             the launches): the LL hop latency is fitted from the mid-size rows that chose LL, \
             where there are at least two"
                .into()
        } else {
            "no row is latency-bound (the log starts at large sizes, or its small rows measure \
             the launches): the hop latency of small sizes is not fitted"
                .into()
        });
    } else if lat_target.is_none() {
        notes.push(
            "neither a drawn network link nor an intra-node hop on the measured path changes \
             the time of small sizes: latency not fitted"
                .into(),
        );
    } else if let Some(LatencyTarget::IntraNode(tech)) = lat_target {
        notes.push(format!(
            "no network link on the measured path: the {} hop latency (LL per step, in place \
             of NCCL's constant) is fitted",
            tech.label()
        ));
    }

    if let (true, Some(LatencyTarget::IntraNode(tech))) = (fits_protocols, lat_target) {
        // A refit describes this log alone: protocol figures an earlier fit left are cleared,
        // and set again only where this log's rows give them.
        for q in CalibratedProtocol::ALL {
            calibration.set_protocol_latency(tech, q, None);
        }
        calibration.set_ll128_share(tech, None);
        trial.calibration = Some(calibration.clone());
    }
    let share_before = match lat_target {
        Some(LatencyTarget::IntraNode(tech)) => design
            .calibration
            .as_ref()
            .and_then(|c| c.ll128_share(tech))
            .unwrap_or(efficiency::LL128_PAYLOAD),
        _ => efficiency::LL128_PAYLOAD,
    };
    // LL's hop latency from mid-size LL rows, when no small row could give it.
    let mut ll_from_mid_rows = false;
    for _ in 0..ROUNDS {
        let mut moved = false;
        if let (Some(tech), Some(e)) = (bw_tech, eff)
            && bandwidth_bound.iter().any(|&b| b)
        {
            let now = predict(&trial)?;
            // With per-protocol hop latencies fitted, a row the model called bandwidth-bound
            // before the fit may be mostly latency once its protocol's steps cost what they
            // measure: only rows still bandwidth-bound against their measured time count.
            // LL128's rows, once they have a rate share of their own, measure that share.
            let share_fitted =
                lat_target.is_some_and(|t| calibration.ll128_share(t.tech()).is_some());
            let still_bound = |i: usize, r: &CollectiveResult, p: &Point| {
                bandwidth_bound[i]
                    && (!fits_protocols || r.bandwidth_us >= DOMINANT_SHARE * p.time_us)
                    && !(share_fitted && r.protocol == Protocol::Ll128)
            };
            if let Some(k) = bandwidth_ratio(&now, &points, still_bound) {
                let e_new = (e / k).clamp(MIN_EFFICIENCY, 1.0);
                moved |= (e_new - e).abs() > 1e-7;
                eff = Some(e_new);
                set(&mut calibration, tech, Some(e_new), None);
                trial.calibration = Some(calibration.clone());
            }
        }
        if let (Some(tech), Some(l)) = (lat_target.map(LatencyTarget::tech), lat)
            && latency_bound.iter().any(|&b| b)
        {
            let (now, up) = probe_ll(&trial, &calibration, tech, l)?;
            // Each small row alone pins the hop latency (the slope is the steps of that hop
            // on the path). With the protocols' own latencies fitted, LL's is what the LL
            // rows say: a small NVLS or Simple row moves with it but measures another cost.
            let estimates = latency_estimates(&now, &up, &points, l, |i, r| {
                latency_bound[i] && (!fits_protocols || r.protocol == Protocol::Ll)
            });
            if let Some(l_fit) = weighted_median(&estimates) {
                let l_new = l_fit.max(0.0);
                moved |= (l_new - l).abs() > 1e-6;
                lat = Some(l_new);
                set(&mut calibration, tech, None, Some(l_new));
                trial.calibration = Some(calibration.clone());
            } else {
                notes.push(format!(
                    "hop latency of {} does not change the time of small sizes: not fitted",
                    tech.label()
                ));
                lat = None;
            }
        }
        // One hop latency moves every protocol alike, but the steps of mid and large sizes
        // (LL128, Simple) can cost more or less than LL's: the curve bends there. Each
        // protocol's intra-node hop latency is fitted on its own from the ring and tree rows
        // that chose it, outside the small sizes LL's fit uses (at least two rows).
        if let (true, Some(LatencyTarget::IntraNode(tech))) = (fits_protocols, lat_target) {
            // Without a latency-bound row (the small rows measured the launches), LL's hop
            // latency comes from the mid-size rows that chose LL, as the other protocols'.
            if !any_latency_bound {
                let l = current_latency(&calibration, LatencyTarget::IntraNode(tech));
                let (now, up) = probe_ll(&trial, &calibration, tech, l)?;
                let estimates = latency_estimates(&now, &up, &points, l, |_, r| {
                    r.protocol == Protocol::Ll
                        && matches!(r.algorithm, Algorithm::Ring | Algorithm::Tree)
                });
                if estimates.len() >= MIN_PROTOCOL_ROWS
                    && let Some(l_fit) = weighted_median(&estimates)
                {
                    let l_new = l_fit.max(0.0);
                    moved |= (l_new - l).abs() > 1e-6;
                    lat = Some(l_new);
                    ll_from_mid_rows = true;
                    set(&mut calibration, tech, None, Some(l_new));
                    trial.calibration = Some(calibration.clone());
                }
            }
            for q in CalibratedProtocol::ALL {
                let l_q = protocol_latency(&calibration, tech, q);
                let now = predict(&trial)?;
                let mut probe = trial.clone();
                let mut probe_cal = calibration.clone();
                probe_cal.set_protocol_latency(tech, q, Some(l_q + PROBE_US));
                probe.calibration = Some(probe_cal);
                let up = predict(&probe)?;
                if q == CalibratedProtocol::Ll128 {
                    let share_old = calibration
                        .ll128_share(tech)
                        .unwrap_or(efficiency::LL128_PAYLOAD);
                    if let Some(fitted) =
                        fit_ll128_share(&now, &up, &points, &latency_bound, l_q, share_old)
                    {
                        moved |= (fitted.latency_us - l_q).abs() > 1e-6
                            || (fitted.share - share_old).abs() > 1e-7;
                        calibration.set_protocol_latency(tech, q, Some(fitted.latency_us));
                        calibration.set_ll128_share(tech, Some(fitted.share));
                        trial.calibration = Some(calibration.clone());
                        continue;
                    }
                }
                let estimates = latency_estimates(&now, &up, &points, l_q, |i, r| {
                    !latency_bound[i]
                        && Some(q) == calibrated_protocol(r.protocol)
                        && matches!(r.algorithm, Algorithm::Ring | Algorithm::Tree)
                });
                if estimates.len() < MIN_PROTOCOL_ROWS {
                    continue;
                }
                if let Some(l_fit) = weighted_median(&estimates) {
                    let l_new = l_fit.max(0.0);
                    moved |= (l_new - l_q).abs() > 1e-6;
                    calibration.set_protocol_latency(tech, q, Some(l_new));
                    trial.calibration = Some(calibration.clone());
                }
            }
        }
        if !moved {
            break;
        }
    }

    let after = predict(&trial)?;
    let rows: Vec<RowComparison> = points
        .iter()
        .zip(before.iter().zip(&after))
        .enumerate()
        .map(|(i, (p, (b, a)))| RowComparison {
            bytes: p.bytes,
            line: p.line,
            measured_time_us: p.time_us,
            measured_busbw_gbyte_s: p.busbw,
            before_time_us: b.time_us,
            before_busbw_gbyte_s: b.busbw_gbyte_s,
            predicted_time_us: a.time_us,
            predicted_busbw_gbyte_s: a.busbw_gbyte_s,
            algorithm: a.algorithm,
            protocol: a.protocol,
            bandwidth_bound: bandwidth_bound[i],
            latency_bound: latency_bound[i],
        })
        .collect();
    if let Some(worst) = rows
        .iter()
        .filter(|r| r.bandwidth_bound)
        .map(|r| r.time_error().abs())
        .reduce(f64::max)
        && worst > 0.05
    {
        notes.push(format!(
            "after the fit, bandwidth-bound rows still differ by up to {:.1} %: the measured \
             path may not match the drawn design (GPUs, NICs, algorithm)",
            worst * 100.0
        ));
    }
    if lat.is_some() {
        notes.extend(latency_outliers(&rows));
    }
    let protocol_latencies_us: Vec<ProtocolFit> = match lat_target {
        Some(LatencyTarget::IntraNode(tech)) => CalibratedProtocol::ALL
            .into_iter()
            .filter_map(|q| {
                let after = calibration.protocol_latency_us(tech, q)?;
                let before = design.calibration.as_ref().map_or_else(
                    || protocol_latency(&Calibration::default(), tech, q),
                    |c| protocol_latency(c, tech, q),
                );
                Some(ProtocolFit {
                    protocol: q,
                    value: FittedValue {
                        tech,
                        before,
                        after,
                    },
                })
            })
            .collect(),
        _ => Vec::new(),
    };
    let ll128_share = match lat_target {
        Some(LatencyTarget::IntraNode(tech)) => {
            calibration.ll128_share(tech).map(|after| FittedValue {
                tech,
                before: share_before,
                after,
            })
        }
        _ => None,
    };
    calibration.source = options.source.clone();
    calibration.test = log
        .test
        .clone()
        .unwrap_or_else(|| test_of_op(op).to_string());
    calibration.fitted_at_unix_s = options.fitted_at_unix_s;
    Ok(CalibrationFit {
        op,
        gpus,
        calibration,
        efficiency: bw_tech
            .zip(eff_before.zip(eff))
            .map(|(tech, (before, after))| FittedValue {
                tech,
                before,
                after,
            }),
        // Only a latency the small rows (or, without them, the mid-size LL rows) measured
        // is reported as fitted.
        latency_us: lat_target
            .filter(|_| any_latency_bound || ll_from_mid_rows)
            .map(LatencyTarget::tech)
            .zip(lat_before.zip(lat))
            .map(|(tech, (before, after))| FittedValue {
                tech,
                before,
                after,
            }),
        protocol_latencies_us,
        ll128_share,
        rows,
        notes,
    })
}

/// LL128 rows (ring or tree, not latency-bound) a rate share is fitted from, and how far
/// apart their sizes must be: a latency and a rate are two unknowns, and rows of nearly one
/// size cannot tell them apart.
const MIN_SHARE_ROWS: usize = 3;
const MIN_SHARE_SPAN: f64 = 4.0;

/// LL128's own hop latency and rate share, fitted together.
struct Ll128Fit {
    latency_us: f64,
    share: f64,
}

/// Fits LL128's hop latency and rate share to the rows that chose it, from the model `now`
/// and with LL128's hop latency probed up (`up`), by least squares in relative error: each
/// row's time moves by its slope per µs of hop latency and by its bandwidth term in
/// proportion to 1 / share, so the fit is linear in (Δlatency, share_now / share − 1). None with too few rows, rows of too near a size, or a fit that
/// cannot be solved; the latency alone is then fitted as the other protocols' is.
fn fit_ll128_share(
    now: &[CollectiveResult],
    up: &[CollectiveResult],
    points: &[Point],
    latency_bound: &[bool],
    l_now: f64,
    share_now: f64,
) -> Option<Ll128Fit> {
    let chosen: Vec<usize> = (0..points.len())
        .filter(|&i| {
            !latency_bound[i]
                && now[i].protocol == Protocol::Ll128
                && matches!(now[i].algorithm, Algorithm::Ring | Algorithm::Tree)
        })
        .collect();
    let (lo, hi) = chosen
        .iter()
        .fold((f64::INFINITY, 0.0_f64), |(lo, hi), &i| {
            let b = points[i].bytes.0 as f64;
            (lo.min(b), hi.max(b))
        });
    if chosen.len() < MIN_SHARE_ROWS || hi < MIN_SHARE_SPAN * lo {
        return None;
    }
    // Σ over rows of (slope, bandwidth, residual) / measured, squared and crossed.
    let (mut ss, mut sb, mut bb, mut sr, mut br) = (0.0, 0.0, 0.0, 0.0, 0.0);
    for &i in &chosen {
        let m = points[i].time_us;
        let slope = (up[i].time_us - now[i].time_us) / PROBE_US / m;
        let bw = now[i].bandwidth_us / m;
        let r = (now[i].time_us - m) / m;
        ss += slope * slope;
        sb += slope * bw;
        bb += bw * bw;
        sr += slope * r;
        br += bw * r;
    }
    let det = ss * bb - sb * sb;
    if !(det.is_finite() && det > 1e-12 * ss * bb) || bb <= 0.0 {
        return None;
    }
    let mut dx = (-sr * bb + br * sb) / det;
    let mut dy = (-br * ss + sr * sb) / det;
    if l_now + dx < 0.0 {
        // The rows ask for a negative step: hold it at zero and fit the share alone.
        dx = -l_now;
        dy = -(br + sb * dx) / bb;
    }
    let share = share_now / (1.0 + dy);
    if !(share.is_finite() && share > 0.0) {
        return None;
    }
    Some(Ll128Fit {
        latency_us: (l_now + dx).max(0.0),
        share: share.clamp(MIN_EFFICIENCY, efficiency::LL128_PAYLOAD),
    })
}

/// Measured bandwidth time over modelled, by least squares in relative error over the rows
/// `keep` names: the efficiency scales by its inverse. None without such a row.
/// The points whose time the model (`before`, one result per point) says is the fabric's,
/// not the host's: under the launch floor of the log's harness the test prints the launches
/// (`Harness`). Errors when none is left. Returns the points kept, their results and how
/// many were left out.
fn without_launch_bound(
    points: Vec<Point>,
    before: Vec<CollectiveResult>,
    harness: &Harness,
) -> Result<(Vec<Point>, Vec<CollectiveResult>, usize), CalibrateError> {
    let total = points.len();
    let (kept, model): (Vec<Point>, Vec<CollectiveResult>) = points
        .into_iter()
        .zip(before)
        .filter(|(_, r)| !harness.launch_bound(r.time_us))
        .unzip();
    if kept.is_empty() {
        return Err(CalibrateError::AllLaunchBound {
            floor_us: harness.launch_floor_us(),
            gpus: harness.gpus_per_thread,
        });
    }
    let left_out = total - kept.len();
    Ok((kept, model, left_out))
}

fn bandwidth_ratio(
    now: &[CollectiveResult],
    points: &[Point],
    keep: impl Fn(usize, &CollectiveResult, &Point) -> bool,
) -> Option<f64> {
    let (mut num, mut den) = (0.0, 0.0);
    for (i, (r, p)) in now.iter().zip(points).enumerate() {
        if keep(i, r, p) {
            let w = 1.0 / (p.time_us * p.time_us);
            num += w * r.bandwidth_us * (p.time_us - r.latency_us);
            den += w * r.bandwidth_us * r.bandwidth_us;
        }
    }
    (den > 0.0 && num > 0.0).then(|| num / den)
}

/// What each row `keep` names says of a hop latency now at `l`: l + (measured − model) /
/// slope, where the slope is the time added per µs of hop latency (`up` is the model with
/// the latency `PROBE_US` higher); rows the hop does not slow say nothing. Weighted by slope /
/// measured time for `weighted_median`.
fn latency_estimates(
    now: &[CollectiveResult],
    up: &[CollectiveResult],
    points: &[Point],
    l: f64,
    keep: impl Fn(usize, &CollectiveResult) -> bool,
) -> Vec<(f64, f64)> {
    now.iter()
        .zip(up)
        .zip(points)
        .enumerate()
        .filter(|(i, ((r, _), _))| keep(*i, r))
        .map(|(_, ((r, u), p))| ((u.time_us - r.time_us) / PROBE_US, p.time_us, r.time_us))
        .filter(|&(slope, _, _)| slope > MIN_SLOPE)
        .map(|(slope, measured, model)| (l + (measured - model) / slope, slope / measured))
        .collect()
}

/// The hop latency a protocol's steps take on an intra-node technology now: its own
/// calibrated figure, or NCCL's ring figure moved as far as the LL figure moved.
fn protocol_latency(cal: &Calibration, tech: LinkTech, q: CalibratedProtocol) -> f64 {
    let protocol = match q {
        CalibratedProtocol::Ll128 => Protocol::Ll128,
        CalibratedProtocol::Simple => Protocol::Simple,
    };
    // Only intra-node technologies are fitted per protocol (`LatencyTarget::IntraNode`).
    calibrated_ring_step_us(cal, tech, protocol).unwrap_or(0.0)
}

/// The calibration's name of a protocol that has a hop latency of its own.
fn calibrated_protocol(p: Protocol) -> Option<CalibratedProtocol> {
    match p {
        Protocol::Ll => None,
        Protocol::Ll128 => Some(CalibratedProtocol::Ll128),
        Protocol::Simple => Some(CalibratedProtocol::Simple),
    }
}

/// The weighted median of `(value, weight)` pairs: the value with half the weight on
/// either side, which minimises Σ weight × |value − x|. When the halves split exactly
/// between two values (equal weights, an even count) it is their mean, as for a plain
/// median. `None` without a finite value of positive weight.
fn weighted_median(points: &[(f64, f64)]) -> Option<f64> {
    let mut sorted: Vec<(f64, f64)> = points
        .iter()
        .copied()
        .filter(|&(v, w)| v.is_finite() && w.is_finite() && w > 0.0)
        .collect();
    sorted.sort_by(|a, b| a.0.total_cmp(&b.0));
    let total: f64 = sorted.iter().map(|&(_, w)| w).sum();
    let half = total / 2.0;
    let mut below = 0.0;
    for (i, &(v, w)) in sorted.iter().enumerate() {
        below += w;
        let past = below - half;
        if past.abs() <= 1e-12 * total {
            return Some(sorted.get(i + 1).map_or(v, |&(next, _)| (v + next) / 2.0));
        }
        if past > 0.0 {
            return Some(v);
        }
    }
    None
}

/// Notes naming the latency-bound rows the median fit left far off.
fn latency_outliers(rows: &[RowComparison]) -> Vec<String> {
    rows.iter()
        .filter(|r| r.latency_bound && r.predicted_time_us > 0.0)
        .filter_map(|r| {
            let ratio = r.measured_time_us / r.predicted_time_us;
            (ratio.max(1.0 / ratio) >= OUTLIER_RATIO).then(|| {
                format!(
                    "line {} ({}): measured {:.2} µs, {:.1}× the {:.2} µs fitted; taken as a \
                     noisy row, which the median latency fit does not follow",
                    r.line, r.bytes, r.measured_time_us, ratio, r.predicted_time_us
                )
            })
        })
        .collect()
}

/// The technology of the busiest resource.
fn bottleneck_tech(design: &Design, r: &CollectiveResult) -> Option<LinkTech> {
    let top = r.bottleneck.first()?;
    Some(match top.kind {
        ResourceKind::Link => design.link(top.link?)?.tech,
        ResourceKind::NvLink => LinkTech::NvLink,
        ResourceKind::NvLinkBridge => LinkTech::NvLinkBridge,
        ResourceKind::GpuPcie | ResourceKind::NicPcie => LinkTech::Pcie,
    })
}

/// The drawn link technology (and a transport) carrying the most traffic, among network and
/// Thunderbolt links: the hops whose stack latency small messages pay.
fn latency_link(design: &Design, r: &CollectiveResult) -> Option<(LinkTech, Transport)> {
    let mut best: Option<(&Link, f64)> = None;
    for &(id, util) in &r.link_utilization {
        let Some(link) = design.link(id) else {
            continue;
        };
        if !(link.tech.is_network() || link.tech.is_thunderbolt()) || util <= 0.0 {
            continue;
        }
        if best.is_none_or(|(_, u)| util > u) {
            best = Some((link, util));
        }
    }
    best.map(|(l, _)| (l.tech, l.transport))
}

/// The efficiency the model uses now for a technology: the calibration's, else the built-in
/// figure: for NVLink that of the first node's GPU generation with NVLink ports (what its
/// scale-up arcs carry), else that of the design's first link of that technology.
fn current_efficiency(design: &Design, catalog: &Catalog, tech: LinkTech) -> f64 {
    if let Some(e) = design.calibration.as_ref().and_then(|c| c.efficiency(tech)) {
        return e;
    }
    if matches!(tech, LinkTech::NvLink | LinkTech::NvLinkBridge) {
        let arch = design.devices.iter().find_map(|d| match &d.kind {
            DeviceKind::GpuNode(n)
                if matches!(
                    n.scale_up,
                    ScaleUp::NvSwitch { .. } | ScaleUp::NvLinkBridgePairs { .. }
                ) =>
            {
                catalog.gpu(&n.gpu).map(|g| ArchRow::of(g.arch))
            }
            _ => None,
        });
        return arch.map_or(efficiency::NVLINK, efficiency::nvlink_efficiency);
    }
    match design.links.iter().find(|l| l.tech == tech) {
        Some(link) => link_efficiency(link.tech, link.transport, lossless(design, link)),
        None => efficiency::PCIE,
    }
}

/// RoCE counts as lossless unless an end is a switch without PFC/ECN (as the fabric does).
fn lossless(design: &Design, link: &Link) -> bool {
    [link.a.device, link.b.device].iter().all(|&id| {
        !matches!(design.device(id).map(|d| &d.kind),
            Some(DeviceKind::Switch(s)) if !s.features.lossless)
    })
}

#[cfg(test)]
mod tests {
    use super::weighted_median;

    #[test]
    fn weighted_median_splits_the_weight_in_half() {
        // Equal weights: the plain median, the mean of the middle two for an even count.
        assert_eq!(
            weighted_median(&[(5.0, 1.0), (1.0, 1.0), (100.0, 1.0)]),
            Some(5.0)
        );
        assert_eq!(
            weighted_median(&[(1.0, 1.0), (2.0, 1.0), (3.0, 1.0), (10.0, 1.0)]),
            Some(2.5)
        );
        // 3 of 5 on the smallest value.
        assert_eq!(
            weighted_median(&[(3.0, 1.0), (1.0, 3.0), (2.0, 1.0)]),
            Some(1.0)
        );
        // A far value moves it by one place at most, however far: 1.55 of 3.1 is reached at 2.
        assert_eq!(
            weighted_median(&[(1.0, 1.0), (2.0, 1.0), (3.0, 1.0), (1e9, 0.1)]),
            Some(2.0)
        );
        // Values without a finite value or a positive weight count for nothing.
        assert_eq!(
            weighted_median(&[(f64::NAN, 5.0), (7.0, 1.0), (9.0, 0.0)]),
            Some(7.0)
        );
        assert_eq!(weighted_median(&[(1.0, 0.0)]), None);
        assert_eq!(weighted_median(&[]), None);
    }
}
