//! Predicted against measured: each measured row of a system (an nccl-tests line, a published
//! figure) run through the collective model on the design that stands for that system, with
//! the error per row and the summary figures a reader checks a model by (the median error, the
//! worst row at and above 1 MiB and below it).
//!
//! The error of a row is `predicted time / measured time − 1`: +0.25 means the model is 25 %
//! slow, −0.2 that it is 20 % fast (its busbw 25 % high). A row that gives only a busbw is
//! compared by time all the same (time is size / algbw, so the ratio is measured busbw over
//! predicted busbw).

use super::collective::{
    AlgoChoice, CollectiveError, CollectiveQuery, Op, Protocol, Routing, collective,
};
use super::nccl_tests::Harness;
use crate::model::{Bytes, Catalog, Design, NcclRelease};
use serde::Serialize;

/// One measured figure.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct MeasuredRow {
    /// The row's id in its data set.
    pub id: String,
    pub op: Op,
    /// nccl-tests' size column.
    pub bytes: Bytes,
    /// The sizes the figure was quoted for, when a range (`bytes` is its top): "2-4 GiB".
    pub size_range: Option<String>,
    /// GPUs the measurement ran on; None = every GPU of the design.
    pub gpus: Option<u32>,
    pub time_us: Option<f64>,
    pub busbw_gbyte_s: Option<f64>,
    /// An algorithm or protocol the run forced (NCCL_ALGO, NCCL_PROTO).
    #[serde(serialize_with = "AlgoChoice::serialize_cli_name")]
    pub algorithm: AlgoChoice,
    pub protocol: Option<Protocol>,
    /// Why the row does not count toward the summary (its setup is not known well enough to
    /// draw, or its reporter called the run slow); None when it counts.
    pub excluded: Option<String>,
    /// How the test drove the GPUs (one thread for several, a CUDA graph).
    pub harness: Harness,
    /// The NCCL release the notes name ("NCCL 2.21.5"), if any.
    pub nccl: Option<NcclRelease>,
}

/// A row with the model's prediction.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct RowPrediction {
    pub row: MeasuredRow,
    pub predicted_time_us: f64,
    pub predicted_busbw_gbyte_s: f64,
    pub algorithm: &'static str,
    pub protocol: &'static str,
    /// The predicted time is the harness's kernel launches, not the collective's.
    pub launch_bound: bool,
    /// Predicted over measured time, minus one.
    pub error: f64,
}

impl RowPrediction {
    /// The measured time the error is against (a row that gave only a busbw has it as
    /// size over algbw).
    pub fn measured_time_us(&self) -> f64 {
        self.predicted_time_us / (1.0 + self.error)
    }

    /// The measured busbw: the predicted one, scaled by predicted over measured time.
    pub fn measured_busbw_gbyte_s(&self) -> f64 {
        self.predicted_busbw_gbyte_s * (1.0 + self.error)
    }
}

/// A row the model could not predict, and why.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct RowFailure {
    pub row: MeasuredRow,
    pub reason: String,
}

/// Summary figures over the rows that count.
#[derive(Debug, Clone, Copy, PartialEq, Serialize)]
pub struct ErrorSummary {
    pub rows: usize,
    /// Median of |error|.
    pub median_abs_error: Option<f64>,
    /// Largest |error| at sizes of 1 MiB and more, and below.
    pub max_abs_error_from_1mib: Option<f64>,
    pub max_abs_error_below_1mib: Option<f64>,
}

const MIB: u64 = 1 << 20;

/// Predicts every row on `design`.
pub fn predict_rows(
    design: &Design,
    catalog: &Catalog,
    rows: &[MeasuredRow],
) -> (Vec<RowPrediction>, Vec<RowFailure>) {
    let mut predicted = Vec::new();
    let mut failed = Vec::new();
    for row in rows {
        match predict_row(design, catalog, row) {
            Ok(p) => predicted.push(p),
            Err(reason) => failed.push(RowFailure {
                row: row.clone(),
                reason,
            }),
        }
    }
    (predicted, failed)
}

fn predict_row(
    design: &Design,
    catalog: &Catalog,
    row: &MeasuredRow,
) -> Result<RowPrediction, String> {
    let mut q = CollectiveQuery::new(row.op, row.bytes);
    q.gpus = row.gpus;
    q.algorithm = row.algorithm;
    q.protocol = row.protocol;
    q.routing = Routing::Ecmp;
    let r = collective(design, catalog, &q).map_err(|e: CollectiveError| e.to_string())?;
    let time_us = row.harness.printed_time_us(r.time_us);
    // busbw is size over time times a factor: it scales inversely with the time.
    let busbw = r.busbw_gbyte_s * r.time_us / time_us;
    let measured_time = match (row.time_us, row.busbw_gbyte_s) {
        (Some(t), _) if t > 0.0 => t,
        (_, Some(b)) if b > 0.0 => time_us * busbw / b,
        _ => return Err("the row gives neither a time nor a bus bandwidth".into()),
    };
    Ok(RowPrediction {
        row: row.clone(),
        predicted_time_us: time_us,
        predicted_busbw_gbyte_s: busbw,
        algorithm: r.algorithm.label(),
        protocol: r.protocol.label(),
        launch_bound: row.harness.launch_bound(r.time_us),
        error: time_us / measured_time - 1.0,
    })
}

/// How much longer than the next larger size of its sweep a measured row may take before it
/// is set aside as a glitch of the run. A larger message cannot take less time under the same
/// algorithm, so a row well above its larger neighbour measured something else (a stall, a
/// timer hiccup); 25 % clears the run-to-run jitter of every sweep in the public sets (at most
/// 17 % between neighbours elsewhere).
pub const OUT_OF_ORDER: f64 = 1.25;

/// Sets aside (`excluded`) the rows of one system that took more than `OUT_OF_ORDER` times
/// as long as the next larger size of their sweep: the same run (ids that differ only in
/// their trailing number), collective, GPU count and forced algorithm and protocol, with a
/// measured time. Rows already set aside keep their reason.
pub fn set_aside_out_of_order(rows: &mut [MeasuredRow]) {
    // One sweep: the same run (its ids' stem, "DGXH100-" of "DGXH100-03"), collective, GPUs
    // and forced choices, compared by their names.
    let sweep: Vec<String> = rows
        .iter()
        .map(|r| {
            let stem = r.id.trim_end_matches(|c: char| c.is_ascii_digit());
            format!("{stem}{:?}", (r.op, r.gpus, r.algorithm, r.protocol))
        })
        .collect();
    let mut timed: Vec<usize> = (0..rows.len())
        .filter(|&i| rows[i].time_us.is_some_and(|t| t > 0.0))
        .collect();
    timed.sort_by(|&a, &b| {
        sweep[a]
            .cmp(&sweep[b])
            .then(rows[a].bytes.0.cmp(&rows[b].bytes.0))
    });
    let mut glitches = Vec::new();
    for w in timed.windows(2) {
        let (small, large) = (&rows[w[0]], &rows[w[1]]);
        if sweep[w[0]] != sweep[w[1]] || small.bytes.0 >= large.bytes.0 {
            continue;
        }
        let (ts, tl) = (small.time_us.unwrap_or(0.0), large.time_us.unwrap_or(0.0));
        if ts > OUT_OF_ORDER * tl {
            glitches.push((
                w[0],
                format!(
                    "it took {:.1}× as long as the next size up ({} B in {tl} µs), which a \
                     larger message cannot: a glitch of the run",
                    ts / tl,
                    large.bytes.0
                ),
            ));
        }
    }
    for (i, why) in glitches {
        if rows[i].excluded.is_none() {
            rows[i].excluded = Some(why);
        }
    }
}

/// The summary over rows that count.
pub fn summarize(predictions: &[RowPrediction]) -> ErrorSummary {
    let counted: Vec<&RowPrediction> = predictions
        .iter()
        .filter(|p| p.row.excluded.is_none())
        .collect();
    let mut errors: Vec<f64> = counted.iter().map(|p| p.error.abs()).collect();
    errors.sort_by(f64::total_cmp);
    let max_of = |large: bool| {
        counted
            .iter()
            .filter(|p| (p.row.bytes.0 >= MIB) == large)
            .map(|p| p.error.abs())
            .reduce(f64::max)
    };
    ErrorSummary {
        rows: counted.len(),
        median_abs_error: median(&errors),
        max_abs_error_from_1mib: max_of(true),
        max_abs_error_below_1mib: max_of(false),
    }
}

/// Median of sorted values: the middle one, or the mean of the two middle ones.
pub(crate) fn median(sorted: &[f64]) -> Option<f64> {
    let n = sorted.len();
    match n {
        0 => None,
        _ if n % 2 == 1 => Some(sorted[n / 2]),
        _ => Some((sorted[n / 2 - 1] + sorted[n / 2]) / 2.0),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn prediction(bytes: u64, error: f64, excluded: bool) -> RowPrediction {
        RowPrediction {
            row: MeasuredRow {
                id: format!("r{bytes}"),
                op: Op::AllReduce,
                bytes: Bytes(bytes),
                size_range: None,
                gpus: None,
                time_us: Some(100.0),
                busbw_gbyte_s: None,
                algorithm: AlgoChoice::Auto,
                protocol: None,
                excluded: excluded.then(|| "uncertain".to_string()),
                harness: Harness::default(),
                nccl: None,
            },
            predicted_time_us: 100.0 * (1.0 + error),
            predicted_busbw_gbyte_s: 1.0,
            algorithm: "ring",
            protocol: "LL",
            launch_bound: false,
            error,
        }
    }

    #[test]
    fn a_row_slower_than_the_next_size_up_is_set_aside() {
        let row = |bytes: u64, time: f64| {
            let mut r = prediction(bytes, 0.0, false).row;
            r.time_us = Some(time);
            r
        };
        let mut rows = vec![
            row(256, 11.0),
            row(64, 10.0),
            // 14 µs against 256 B's 11: 1.27× the larger size, set aside.
            row(128, 14.0),
            // 12 µs against 11 would be 1.09×: jitter, kept.
            row(512, 12.0),
            row(1024, 13.0),
        ];
        // Another sweep (two GPUs) is not compared with this one, nor another run of the
        // same collective (ids of another stem): 20 µs at 64 B beside this run's 14 at 128.
        let mut other = row(2048, 1.0);
        other.gpus = Some(2);
        rows.push(other);
        let mut second_run = row(64, 20.0);
        second_run.id = "k-64".into();
        rows.push(second_run);
        // A row already set aside keeps its reason.
        let mut slow = row(32, 100.0);
        slow.excluded = Some("its reporter called the run slow".into());
        rows.push(slow);
        set_aside_out_of_order(&mut rows);
        let set_aside: Vec<(u64, &str)> = rows
            .iter()
            .filter_map(|r| Some((r.bytes.0, r.excluded.as_deref()?)))
            .collect();
        assert_eq!(
            set_aside,
            vec![
                (
                    128,
                    "it took 1.3× as long as the next size up (256 B in 11 µs), which a larger \
                     message cannot: a glitch of the run"
                ),
                (32, "its reporter called the run slow"),
            ]
        );
    }

    #[test]
    fn the_summary_counts_only_rows_that_count() {
        let p = [
            prediction(8, 0.30, false),
            prediction(1024, -0.10, false),
            prediction(MIB, 0.05, false),
            prediction(8 * MIB, -0.20, false),
            prediction(16 * MIB, 5.0, true),
        ];
        let s = summarize(&p);
        assert_eq!(s.rows, 4);
        // |errors| 0.05, 0.10, 0.20, 0.30: the median is (0.10 + 0.20) / 2.
        assert!((s.median_abs_error.expect("rows") - 0.15).abs() < 1e-12);
        assert_eq!(s.max_abs_error_from_1mib, Some(0.20));
        assert_eq!(s.max_abs_error_below_1mib, Some(0.30));
        assert_eq!(summarize(&[]).median_abs_error, None);
    }
}
