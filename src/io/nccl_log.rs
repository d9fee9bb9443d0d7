//! nccl-tests output as printed (`all_reduce_perf` and friends) turned into the data of
//! `analysis::nccl_tests`: the result table, which test ran and on how many ranks. Noise around the table (mpirun, `NCCL INFO` lines, a shell
//! prompt) is skipped; a row that starts like a result but does not parse is an error with its
//! line and column, so a truncated paste is not silently half-read.

use crate::analysis::collective::Op;
pub use crate::analysis::nccl_tests::{Measurement, NcclLog, NcclRow, op_of_test, test_of_op};
use crate::model::{Bytes, NcclRelease};
use std::fmt::Write as _;

#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub enum NcclLogError {
    #[error("line {line}, column {column}: {what} `{found}` is not a number")]
    BadNumber {
        line: usize,
        column: usize,
        what: &'static str,
        found: String,
    },
    #[error("line {line}: {found} columns in a result row, expected {expected}")]
    Columns {
        line: usize,
        found: usize,
        expected: usize,
    },
    #[error("line {line}: result row of {found} columns and no table header to read it by")]
    NoLayout { line: usize, found: usize },
    #[error(
        "line {line}: a second test ({second}) after {first}; calibrate from one test at a time"
    )]
    SeveralTests {
        line: usize,
        first: String,
        second: String,
    },
    #[error("no result rows: this is not nccl-tests output")]
    NoRows,
}

/// Column layout of the table: leading columns, then 1 or 2 halves of
/// (time, algbw, busbw, #wrong).
#[derive(Debug, Clone, Copy, PartialEq)]
struct Layout {
    lead: usize,
    has_redop: bool,
    has_root: bool,
    halves: usize,
}

impl Layout {
    fn columns(self) -> usize {
        self.lead + 4 * self.halves
    }

    /// From the header line's words (`size count type redop root time ...`).
    fn from_header(words: &[&str]) -> Option<Layout> {
        let lead = words.iter().position(|w| *w == "time")?;
        if words.first().is_none_or(|w| *w != "size") {
            return None;
        }
        let halves = words.iter().filter(|w| **w == "time").count().clamp(1, 2);
        Some(Layout {
            lead,
            has_redop: words[..lead].contains(&"redop"),
            has_root: words[..lead].contains(&"root"),
            halves,
        })
    }

    /// Without a header, from the column count: size, count and type always lead; a fourth
    /// and fifth column are redop and root.
    fn guess(columns: usize) -> Option<Layout> {
        let (lead, halves) = match columns {
            11..=13 => (columns - 8, 2),
            7..=9 => (columns - 4, 1),
            _ => return None,
        };
        Some(Layout {
            lead,
            has_redop: lead >= 4,
            has_root: lead >= 5,
            halves,
        })
    }
}

/// The NCCL release a line prints: NCCL's own "NCCL version 2.21.5+cuda12.3" (NCCL_DEBUG=
/// VERSION or INFO), or nccl-tests' header "nccl-library=22105", NCCL_VERSION_CODE, which is
/// major·10000 + minor·100 + patch since 2.9 and major·1000 + minor·100 + patch before.
fn release_in(line: &str) -> Option<NcclRelease> {
    if let Some(i) = line.find("NCCL version ") {
        let rest = &line[i + "NCCL version ".len()..];
        return rest.split_whitespace().next()?.parse().ok();
    }
    let i = line.find("nccl-library=")?;
    let digits: String = line[i + "nccl-library=".len()..]
        .chars()
        .take_while(char::is_ascii_digit)
        .collect();
    let code: u32 = digits.parse().ok()?;
    let (major, minor, patch) = if code >= 20900 {
        (code / 10000, code / 100 % 100, code % 100)
    } else {
        (code / 1000, code / 100 % 10, code % 100)
    };
    (major == 2).then(|| NcclRelease::new(2, minor as u16, patch as u16))
}

/// A `*_perf` word in a line (a command line or the "test starting" banner).
fn test_name_in(line: &str) -> Option<String> {
    line.split(|c: char| c.is_whitespace() || c == '/' || c == ':' || c == '=')
        .find(|w| w.ends_with("_perf") && w.len() > 5)
        .map(|w| w.to_string())
}

/// Words of a line with their 1-based character column.
fn words_with_columns(line: &str) -> Vec<(usize, &str)> {
    let mut out = Vec::new();
    let mut start: Option<usize> = None;
    for (i, c) in line.char_indices() {
        match (c.is_whitespace(), start) {
            (false, None) => start = Some(i),
            (true, Some(s)) => {
                out.push((s, &line[s..i]));
                start = None;
            }
            _ => {}
        }
    }
    if let Some(s) = start {
        out.push((s, &line[s..]));
    }
    out.into_iter()
        .map(|(byte, w)| (line[..byte].chars().count() + 1, w))
        .collect()
}

/// Reads nccl-tests output.
pub fn parse_nccl_log(text: &str) -> Result<NcclLog, NcclLogError> {
    let mut log = NcclLog::default();
    let mut layout: Option<Layout> = None;
    let mut rank_ids: std::collections::BTreeSet<u32> = Default::default();
    let mut threads_gpus: Option<u32> = None;
    for (index, raw) in text.lines().enumerate() {
        let line_no = index + 1;
        let line = raw.trim_end();
        let trimmed = line.trim_start();
        if log.nccl.is_none() {
            log.nccl = release_in(line);
        }
        if let Some(comment) = trimmed.strip_prefix('#') {
            let words: Vec<&str> = comment.split_whitespace().collect();
            if let Some(l) = Layout::from_header(&words) {
                layout = Some(l);
            } else if words.first() == Some(&"Rank") {
                if let Some(r) = words.get(1).and_then(|w| w.parse::<u32>().ok()) {
                    rank_ids.insert(r);
                }
                // "... device  0 [0x07] NVIDIA A100-SXM4-80GB": the GPU after the bus id.
                if let Some((_, gpu)) = comment.split_once(']') {
                    let gpu = gpu.trim();
                    if !gpu.is_empty() && !log.gpu_names.iter().any(|g| g == gpu) {
                        log.gpu_names.push(gpu.to_string());
                    }
                }
            } else if words.first() == Some(&"nThread") {
                let value = |key: &str| {
                    words
                        .iter()
                        .position(|w| *w == key)
                        .and_then(|i| words.get(i + 1))
                        .and_then(|v| v.parse::<u32>().ok())
                };
                if let (Some(t), Some(g)) = (value("nThread"), value("nGpus")) {
                    threads_gpus = Some(t.saturating_mul(g));
                    log.harness.gpus_per_thread = g.max(1);
                }
                if let Some(graph) = value("graph:") {
                    log.harness.cuda_graph = graph > 0;
                }
            }
            if comment.contains("test starting")
                && let Some(name) = test_name_in(comment)
            {
                note_test(&mut log, name, line_no)?;
            }
            continue;
        }
        let words = words_with_columns(trimmed);
        let lead_col = line.len() - trimmed.len();
        // A result row starts with two integers (size, count); anything else is noise.
        let is_row = words.len() >= 2
            && words[0].1.parse::<u64>().is_ok()
            && words[1].1.parse::<u64>().is_ok();
        if !is_row {
            if log.rows.is_empty()
                && log.test.is_none()
                && let Some(name) = test_name_in(trimmed)
            {
                note_test(&mut log, name, line_no)?;
            }
            continue;
        }
        let lay = match layout.or_else(|| Layout::guess(words.len())) {
            Some(l) => l,
            None => {
                return Err(NcclLogError::NoLayout {
                    line: line_no,
                    found: words.len(),
                });
            }
        };
        if words.len() != lay.columns() {
            return Err(NcclLogError::Columns {
                line: line_no,
                found: words.len(),
                expected: lay.columns(),
            });
        }
        let num = |i: usize, what: &'static str| -> Result<f64, NcclLogError> {
            let (col, w) = words[i];
            match w.parse::<f64>() {
                Ok(v) if v.is_finite() && v >= 0.0 => Ok(v),
                _ => Err(NcclLogError::BadNumber {
                    line: line_no,
                    column: col + lead_col,
                    what,
                    found: w.to_string(),
                }),
            }
        };
        let int = |i: usize, what: &'static str| -> Result<u64, NcclLogError> {
            let (col, w) = words[i];
            w.parse::<u64>().map_err(|_| NcclLogError::BadNumber {
                line: line_no,
                column: col + lead_col,
                what,
                found: w.to_string(),
            })
        };
        let half = |start: usize| -> Result<Measurement, NcclLogError> {
            // Older versions print a maximum error (a float such as 2e-07) in this column.
            let w = words[start + 3].1;
            let wrong = match w.parse::<u64>() {
                Ok(n) => Some(n),
                Err(_) if matches!(w, "N/A" | "n/a" | "-") || w.parse::<f64>().is_ok() => None,
                Err(_) => Some(int(start + 3, "#wrong")?),
            };
            Ok(Measurement {
                time_us: num(start, "time")?,
                algbw_gbyte_s: num(start + 1, "algbw")?,
                busbw_gbyte_s: num(start + 2, "busbw")?,
                wrong,
            })
        };
        let redop = lay.has_redop.then(|| words[3].1.to_string());
        let root = if lay.has_root {
            let (col, w) = words[4];
            Some(w.parse::<i64>().map_err(|_| NcclLogError::BadNumber {
                line: line_no,
                column: col + lead_col,
                what: "root",
                found: w.to_string(),
            })?)
        } else {
            None
        };
        let out_of_place = half(lay.lead)?;
        if out_of_place.time_us <= 0.0 {
            return Err(NcclLogError::BadNumber {
                line: line_no,
                column: words[lay.lead].0 + lead_col,
                what: "time (must be positive)",
                found: words[lay.lead].1.to_string(),
            });
        }
        let in_place = if lay.halves == 2 {
            Some(half(lay.lead + 4)?).filter(|m| m.time_us > 0.0)
        } else {
            None
        };
        log.rows.push(NcclRow {
            line: line_no,
            bytes: Bytes(int(0, "size")?),
            count: int(1, "count")?,
            dtype: words[2].1.to_string(),
            redop,
            root,
            out_of_place,
            in_place,
        });
    }
    if log.rows.is_empty() {
        return Err(NcclLogError::NoRows);
    }
    log.ranks = if rank_ids.is_empty() {
        threads_gpus
    } else {
        Some(rank_ids.len() as u32)
    };
    Ok(log)
}

fn note_test(log: &mut NcclLog, name: String, line: usize) -> Result<(), NcclLogError> {
    match &log.test {
        Some(first) if *first != name && !log.rows.is_empty() => Err(NcclLogError::SeveralTests {
            line,
            first: first.clone(),
            second: name,
        }),
        _ => {
            log.op = op_of_test(&name);
            log.test = Some(name);
            Ok(())
        }
    }
}

/// Time as nccl-tests prints it: fewer decimals as it grows, in a 7-wide column.
fn time_field(us: f64) -> String {
    if us < 100.0 {
        format!("{us:7.2}")
    } else if us < 10_000.0 {
        format!("{us:7.1}")
    } else {
        format!("{us:7.0}")
    }
}

/// Writes a table in nccl-tests' layout (float sum, both halves equal) for sizes and times,
/// on `ranks` ranks, one process each: what a perfect run of the model would print. Used to test the parser
/// and the fit against a known answer, and to show a prediction in the user's format.
pub fn format_nccl_log(op: Op, ranks: u32, rows: &[(Bytes, f64)]) -> String {
    let test = test_of_op(op);
    let mut s = String::new();
    let _ = writeln!(s, "# Collective test starting: {test}");
    let _ = writeln!(
        s,
        "# nThread 1 nGpus 1 minBytes {} maxBytes {} step: 2(factor) warmup iters: 5 iters: 20 agg iters: 1 validation: 1 graph: 0",
        rows.first().map_or(0, |r| r.0.0),
        rows.last().map_or(0, |r| r.0.0)
    );
    let _ = writeln!(s, "#\n# Using devices");
    for r in 0..ranks {
        let _ = writeln!(
            s,
            "#  Rank {r:2} Group  0 Pid {pid:6} on    model device {r:2} [0x00] synthetic",
            pid = 1000 + r
        );
    }
    let _ = writeln!(s, "#");
    let _ = writeln!(
        s,
        "#                                                              out-of-place                       in-place          "
    );
    let _ = writeln!(
        s,
        "#       size         count      type   redop    root     time   algbw   busbw #wrong     time   algbw   busbw #wrong"
    );
    let _ = writeln!(
        s,
        "#        (B)    (elements)                               (us)  (GB/s)  (GB/s)            (us)  (GB/s)  (GB/s)       "
    );
    let (redop, root) = match op {
        Op::AllReduce | Op::ReduceScatter => ("sum", -1),
        Op::Reduce => ("sum", 0),
        Op::Broadcast => ("none", 0),
        Op::AllGather | Op::AllToAll | Op::SendRecv => ("none", -1),
    };
    for &(bytes, time_us) in rows {
        let algbw = bytes.0 as f64 / (time_us * 1e-6) / 1e9;
        let busbw = algbw * op.busbw_factor(ranks);
        let half = format!("{}  {algbw:6.2}  {busbw:6.2}  {:5}", time_field(time_us), 0);
        let _ = writeln!(
            s,
            "{:>12}  {:>12}  {:>8}  {:>6}  {:>6}  {half}  {half}",
            bytes.0,
            bytes.0 / 4,
            "float",
            redop,
            root
        );
    }
    let _ = writeln!(s, "# Out of bounds values : 0 OK");
    s
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn words_carry_their_columns() {
        let w = words_with_columns("ab  cd e");
        assert_eq!(w, vec![(1, "ab"), (5, "cd"), (8, "e")]);
    }

    #[test]
    fn the_release_shows_as_nccl_or_nccl_tests_print_it() {
        let r = |m, p| Some(NcclRelease::new(2, m, p));
        assert_eq!(release_in("NCCL version 2.21.5+cuda12.3"), r(21, 5));
        assert_eq!(
            release_in("node1:123:123 [0] NCCL INFO NCCL version 2.18.5+cuda12.2"),
            r(18, 5)
        );
        // nccl-tests 2.13+: NCCL_VERSION_CODE, 10000·major + 100·minor + patch since 2.9.
        assert_eq!(
            release_in("# nccl-tests version 2.13.9 nccl-headers=21805 nccl-library=21805"),
            r(18, 5)
        );
        // Before 2.9: 1000·major + 100·minor + patch (2.8.4 = 2804).
        assert_eq!(release_in("# nccl-library=2804"), r(8, 4));
        assert_eq!(
            release_in("#  Rank  0 Group  0 Pid 1 on host device 0"),
            None
        );
    }

    #[test]
    fn guess_layouts_by_column_count() {
        assert_eq!(Layout::guess(13).map(|l| (l.lead, l.halves)), Some((5, 2)));
        assert_eq!(Layout::guess(12).map(|l| (l.lead, l.halves)), Some((4, 2)));
        assert_eq!(Layout::guess(8).map(|l| (l.lead, l.halves)), Some((4, 1)));
        assert_eq!(Layout::guess(10), None);
    }

    #[test]
    fn test_names_map_to_ops() {
        assert_eq!(op_of_test("all_reduce_perf"), Some(Op::AllReduce));
        assert_eq!(op_of_test("alltoall_perf"), Some(Op::AllToAll));
        assert_eq!(op_of_test("sendrecv_perf"), Some(Op::SendRecv));
        assert_eq!(op_of_test("hypercube_perf"), None);
        for op in Op::ALL {
            assert_eq!(op_of_test(test_of_op(op)), Some(op));
        }
    }

    #[test]
    fn time_column_precision() {
        assert_eq!(time_field(13.674), "  13.67");
        assert_eq!(time_field(135.84), "  135.8");
        assert_eq!(time_field(12645.6), "  12646");
    }
}
