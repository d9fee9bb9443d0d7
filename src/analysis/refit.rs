//! How far calibration carries: a measured sweep fitted as a user's own nccl-tests log would
//! be (`calibrate`), and the fitted model held against the same rows. The uncalibrated
//! model's error says what railyard predicts for hardware nobody measured; this says what a
//! user gets back after fitting their log, at the sizes where the protocols change.

use super::calibrate::{FitOptions, fit_calibration};
use super::collective::{AlgoChoice, Op};
use super::nccl_tests::{Measurement, NcclLog, NcclRow, test_of_op};
use super::validate::RowPrediction;
use crate::model::{Catalog, Design};
use serde::Serialize;

/// A sweep is refitted only with at least this many sizes, reaching at least `SWEEP_TOP`:
/// fewer rows would be matched by the fit whatever they say.
const MIN_SWEEP_ROWS: usize = 8;
const SWEEP_TOP: u64 = 64 << 20;
/// The mid band the refit is judged on starts here (targets: within 15 % from 1 to 64 MiB,
/// within 5 % above).
const MID_FROM: u64 = 1 << 20;

/// One sweep's fit.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct RefitSummary {
    /// Rows the fit saw (rows under the harness's launch floor are left out by the fit).
    pub rows: usize,
    /// Worst |time error| from 1 MiB to below 64 MiB, before and after the fit.
    pub worst_mid_before: Option<f64>,
    pub worst_mid_after: Option<f64>,
    /// Worst |time error| at 64 MiB and above, before and after.
    pub worst_large_before: Option<f64>,
    pub worst_large_after: Option<f64>,
    /// "NVLink efficiency: 0.800 → 0.789", one per fitted value.
    pub fitted: Vec<String>,
}

/// Fits the design to a system's counted rows of its most measured collective when they form
/// one sweep (no forced algorithm or protocol, one GPU count, single sizes, up to at least
/// 64 MiB); None otherwise or when the fit cannot run.
pub fn refit_sweep(
    design: &Design,
    catalog: &Catalog,
    predictions: &[RowPrediction],
) -> Option<RefitSummary> {
    // A system may have measured several collectives: the one with the most counted rows,
    // all-reduce among equals (what calibration logs usually are).
    let counted = || predictions.iter().filter(|p| p.row.excluded.is_none());
    let op = counted().map(|p| p.row.op).max_by_key(|&op| {
        (
            counted().filter(|p| p.row.op == op).count(),
            op == Op::AllReduce,
        )
    })?;
    // A row predicted at no time cannot give back its measured time.
    let rows: Vec<&RowPrediction> = counted()
        .filter(|p| p.row.op == op && p.predicted_time_us > 0.0 && p.error > -1.0)
        .collect();
    let first = rows.first()?;
    let one_sweep = rows.iter().all(|p| {
        p.row.gpus == first.row.gpus
            && p.row.harness == first.row.harness
            && p.row.algorithm == AlgoChoice::Auto
            && p.row.protocol.is_none()
            && p.row.size_range.is_none()
    });
    let top = rows.iter().map(|p| p.row.bytes.0).max()?;
    if !one_sweep || rows.len() < MIN_SWEEP_ROWS || top < SWEEP_TOP {
        return None;
    }
    let gpus = first.row.gpus;
    let log_rows: Vec<NcclRow> = rows
        .iter()
        .enumerate()
        .map(|(i, p)| {
            // The prediction's error is against the measured time: invert it.
            let time_us = p.measured_time_us();
            let algbw = p.row.bytes.0 as f64 / time_us / 1e3;
            let busbw = p.measured_busbw_gbyte_s();
            NcclRow {
                line: i + 1,
                bytes: p.row.bytes,
                count: p.row.bytes.0 / 4,
                dtype: "float".into(),
                redop: None,
                root: None,
                out_of_place: Measurement {
                    time_us,
                    algbw_gbyte_s: algbw,
                    busbw_gbyte_s: busbw,
                    wrong: None,
                },
                in_place: None,
            }
        })
        .collect();
    let log = NcclLog {
        test: Some(test_of_op(first.row.op).to_string()),
        op: Some(first.row.op),
        ranks: gpus,
        harness: first.row.harness,
        // The design already runs the release the rows name (`validate` sets it).
        nccl: None,
        gpu_names: Vec::new(),
        rows: log_rows,
    };
    let options = FitOptions {
        op: Some(first.row.op),
        gpus,
        source: "the measured rows".into(),
        fitted_at_unix_s: 0,
    };
    let fit = fit_calibration(design, catalog, &log, &options).ok()?;
    let worst = |from: u64, to: u64, before: bool| {
        fit.rows
            .iter()
            .filter(|r| r.bytes.0 >= from && r.bytes.0 < to)
            .map(|r| {
                let t = if before {
                    r.before_time_us
                } else {
                    r.predicted_time_us
                };
                (t / r.measured_time_us - 1.0).abs()
            })
            .reduce(f64::max)
    };
    Some(RefitSummary {
        rows: fit.rows.len(),
        worst_mid_before: worst(MID_FROM, SWEEP_TOP, true),
        worst_mid_after: worst(MID_FROM, SWEEP_TOP, false),
        worst_large_before: worst(SWEEP_TOP, u64::MAX, true),
        worst_large_after: worst(SWEEP_TOP, u64::MAX, false),
        fitted: fit.fitted_lines("→", "µ"),
    })
}
