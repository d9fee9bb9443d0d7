//! Published measurements as CSV (the columns of `assets/validation/measured.csv`: id, source,
//! hardware, gpus, ..., collective, bytes, algbw_GBps, busbw_GBps, time_us, notes) turned into
//! `MeasuredRow`s, and the list of systems that says which design stands for which rows.
//!
//! How rows are treated: a row whose hardware or notes say UNCERTAIN (the reporter did not
//! state the network, the GPU count was inferred) or SLOW (its reporter called the run slow)
//! is predicted and shown but does not count toward the summary, since no design can be drawn
//! for it with confidence. A forced `NCCL_ALGO` or `NCCL_PROTO` in the notes is forced in the
//! prediction too. A figure quoted for a range of sizes (`bytes='2-4 GiB'` in the notes, the
//! plateau of a sweep) is predicted at the range's largest size, where a sweep's busbw is
//! nearest its plateau; a busbw quoted as a range (`busbw_GBps='365-370'`) is taken at its
//! middle. A row with neither one size nor such a range cannot be predicted.

use crate::analysis::collective::{AlgoChoice, Op, Protocol};
use crate::analysis::nccl_tests::Harness;
use crate::analysis::validate::MeasuredRow;
use crate::model::{Bytes, NcclRelease};
use std::path::PathBuf;

#[derive(Debug, thiserror::Error)]
pub enum MeasuredError {
    #[error("line {line}: {message}")]
    Row { line: usize, message: String },
    #[error("{0}")]
    Csv(#[from] csv::Error),
}

/// A measured row, or the reason a row of the file cannot be one.
pub type ParsedRow = Result<MeasuredRow, (String, String)>;

const COLUMNS: [&str; 6] = [
    "id",
    "collective",
    "bytes",
    "time_us",
    "busbw_GBps",
    "notes",
];

/// Parses the CSV. Rows with one size become `MeasuredRow`s; rows without (ranges, quotes
/// with no size) come back as (id, why) so the caller can list them.
pub fn parse_measured_csv(text: &str) -> Result<Vec<ParsedRow>, MeasuredError> {
    let mut reader = csv::ReaderBuilder::new()
        .flexible(false)
        .from_reader(text.as_bytes());
    let headers = reader.headers()?.clone();
    let column = |name: &str| headers.iter().position(|h| h == name);
    let mut at = std::collections::HashMap::new();
    for name in COLUMNS {
        let i = column(name).ok_or_else(|| MeasuredError::Row {
            line: 1,
            message: format!("no `{name}` column"),
        })?;
        at.insert(name, i);
    }
    let gpus_at = column("gpus");
    let mut out = Vec::new();
    for record in reader.records() {
        let record = record?;
        let line = record.position().map_or(0, |p| p.line() as usize);
        let get = |name: &str| record.get(at[name]).unwrap_or("").trim();
        let id = get("id").to_string();
        let notes = get("notes");
        let whole_row = record.iter().collect::<Vec<_>>().join(",");
        let op = op_of_name(get("collective")).ok_or_else(|| MeasuredError::Row {
            line,
            message: format!("`{}` is not a collective", get("collective")),
        })?;
        let (bytes, size_range) = match get("bytes").parse::<u64>() {
            Ok(bytes) => (bytes, None),
            Err(_) => match quoted_range(notes, "bytes=") {
                Some((_, top, text)) if top >= 1.0 => (top as u64, Some(text)),
                _ => {
                    out.push(Err((id, "no single size".to_string())));
                    continue;
                }
            },
        };
        let number = |name: &str| -> Result<Option<f64>, MeasuredError> {
            let text = get(name);
            if text.is_empty() {
                return Ok(None);
            }
            text.parse::<f64>()
                .map(Some)
                .map_err(|_| MeasuredError::Row {
                    line,
                    message: format!("`{text}` in {name} is not a number"),
                })
        };
        let gpus = gpus_at
            .and_then(|i| record.get(i))
            .map(str::trim)
            .filter(|t| !t.is_empty())
            .and_then(|t| t.parse::<u32>().ok());
        let time_us = number("time_us")?;
        let busbw_gbyte_s = number("busbw_GBps")?.or_else(|| {
            quoted_range(notes, "busbw_GBps=").map(|(low, high, _)| (low + high) / 2.0)
        });
        if size_range.is_some() && time_us.is_none() && busbw_gbyte_s.is_none() {
            out.push(Err((id, "no measured figure".to_string())));
            continue;
        }
        out.push(Ok(MeasuredRow {
            id,
            op,
            bytes: Bytes(bytes),
            gpus,
            time_us,
            busbw_gbyte_s,
            size_range,
            algorithm: forced_algorithm(notes),
            protocol: forced_protocol(notes),
            excluded: exclusion(&whole_row),
            harness: Harness::default(),
            nccl: named_release(&whole_row),
        }));
    }
    Ok(out)
}

/// nccl-tests' and the data sets' collective names (MLX's `all_sum` is an all-reduce); a
/// gloss after the name, as in "all_sum (all_reduce)", is ignored.
fn op_of_name(name: &str) -> Option<Op> {
    let name = name.split_whitespace().next().unwrap_or("");
    Some(match name {
        "all_reduce" | "all_sum" => Op::AllReduce,
        "all_gather" => Op::AllGather,
        "reduce_scatter" => Op::ReduceScatter,
        "alltoall" | "all_to_all" => Op::AllToAll,
        "broadcast" => Op::Broadcast,
        "reduce" => Op::Reduce,
        "sendrecv" => Op::SendRecv,
        _ => return None,
    })
}

/// A range quoted in the notes as `KEY='LOW-HIGH UNIT'` (`bytes='2-4 GiB'`,
/// `busbw_GBps='365-370'`): low and high in the unit's base (bytes for B, K/KiB, M/MiB and
/// G/GiB, the number itself without a unit) and the quoted text. Decimal units (GB) are
/// refused rather than guessed.
fn quoted_range(notes: &str, key: &str) -> Option<(f64, f64, String)> {
    let start = notes.find(&format!("{key}'"))? + key.len() + 1;
    let rest = &notes[start..];
    let text = &rest[..rest.find('\'')?];
    let (numbers, unit) = match text.split_once(' ') {
        Some((numbers, unit)) => (numbers, unit.trim()),
        None => (text, ""),
    };
    let scale = match unit {
        "" | "B" => 1.0,
        // nccl-tests' size suffixes (-b 2G) are binary, as are KiB, MiB and GiB.
        "K" | "KiB" => 1024.0,
        "M" | "MiB" => 1024.0 * 1024.0,
        "G" | "GiB" => 1024.0 * 1024.0 * 1024.0,
        _ => return None,
    };
    let (low, high) = numbers.split_once('-')?;
    let (low, high) = (
        low.trim().parse::<f64>().ok()?,
        high.trim().parse::<f64>().ok()?,
    );
    (low.is_finite() && high.is_finite() && 0.0 < low && low <= high)
        .then(|| (low * scale, high * scale, text.to_string()))
}

/// The value after `KEY=` in the notes, up to a separator.
fn setting<'a>(notes: &'a str, key: &str) -> Option<&'a str> {
    let start = notes.find(key)? + key.len();
    let rest = &notes[start..];
    let end = rest
        .find(|c: char| !(c.is_ascii_alphanumeric() || c == '_'))
        .unwrap_or(rest.len());
    Some(&rest[..end])
}

/// The release after "NCCL " in a row ("NCCL 2.21.5"), if the row names one.
fn named_release(row: &str) -> Option<NcclRelease> {
    row.match_indices("NCCL ").find_map(|(i, key)| {
        let rest = &row[i + key.len()..];
        let end = rest
            .find(|c: char| !(c.is_ascii_digit() || c == '.'))
            .unwrap_or(rest.len());
        rest[..end].trim_end_matches('.').parse().ok()
    })
}

fn forced_algorithm(notes: &str) -> AlgoChoice {
    setting(notes, "NCCL_ALGO=")
        .and_then(AlgoChoice::from_cli_name)
        .unwrap_or(AlgoChoice::Auto)
}

fn forced_protocol(notes: &str) -> Option<Protocol> {
    match setting(notes, "NCCL_PROTO=")?.to_ascii_lowercase().as_str() {
        "ll" => Some(Protocol::Ll),
        "ll128" => Some(Protocol::Ll128),
        "simple" => Some(Protocol::Simple),
        _ => None,
    }
}

/// Whether a row counts, from what its fields say (any field: the uncertainty may be in the
/// hardware, the network or the notes).
fn exclusion(row: &str) -> Option<String> {
    if row.contains("SLOW") {
        Some("its reporter called the run slow".into())
    } else if row.contains("UNCERTAIN") {
        Some("its setup is uncertain".into())
    } else {
        None
    }
}

/// A system of a validation set: the rows whose id starts with `prefix` ran on `design`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ValidationSystem {
    pub prefix: String,
    pub design: PathBuf,
    /// What the design assumes about the system, in a few words.
    pub assumes: String,
    /// Why none of the system's rows count (its setup is not known well enough), if so.
    pub not_counted: Option<String>,
    /// How its measurements drove the GPUs.
    pub harness: Harness,
    /// The NCCL release it ran, where the list says (else its rows' notes may).
    pub nccl: Option<NcclRelease>,
}

/// A set the systems list names without a design: its rows are shown as not predicted, with
/// why (a transport or library not modelled, a setup the source does not state).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct UndrawnSet {
    pub prefix: String,
    pub why: String,
}

/// The systems list: systems drawn as a design, and sets listed only to say why they are not.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct SystemsList {
    pub drawn: Vec<ValidationSystem>,
    pub undrawn: Vec<UndrawnSet>,
}

impl SystemsList {
    /// One system on `design` for every row.
    pub fn one(design: PathBuf) -> SystemsList {
        SystemsList {
            drawn: vec![ValidationSystem {
                prefix: String::new(),
                design,
                assumes: String::new(),
                not_counted: None,
                harness: Harness::default(),
                nccl: None,
            }],
            undrawn: Vec::new(),
        }
    }

    /// The system a row belongs to, by the longest prefix its id starts with: a drawn one, or
    /// (Err) the reason its set is not drawn. None when no entry names it.
    pub fn of(&self, id: &str) -> Option<Result<&ValidationSystem, &UndrawnSet>> {
        let drawn = system_of(&self.drawn, id);
        let undrawn = self
            .undrawn
            .iter()
            .filter(|u| id.starts_with(&u.prefix))
            .max_by_key(|u| u.prefix.len());
        match (drawn, undrawn) {
            (Some(d), Some(u)) if u.prefix.len() > d.prefix.len() => Some(Err(u)),
            (Some(d), _) => Some(Ok(d)),
            (None, Some(u)) => Some(Err(u)),
            (None, None) => None,
        }
    }
}

/// Parses the systems list: CSV with columns prefix, design (a path relative to the list;
/// empty for a set listed only to say, in not_counted, why it is not drawn),
/// assumes and, optionally, not_counted (why the system's rows do not count),
/// gpus_per_thread (nccl-tests `-g`, 1 when empty), cuda_graph (`yes` for nccl-tests `-G`)
/// and nccl (the NCCL release the system ran, e.g. 2.21.5).
pub fn parse_systems_csv(text: &str) -> Result<SystemsList, MeasuredError> {
    let mut reader = csv::ReaderBuilder::new()
        .flexible(true)
        .from_reader(text.as_bytes());
    let mut out = SystemsList::default();
    for record in reader.records() {
        let record = record?;
        let line = record.position().map_or(0, |p| p.line() as usize);
        let field = |i: usize| record.get(i).map(str::trim).unwrap_or("");
        if field(0).is_empty() {
            return Err(MeasuredError::Row {
                line,
                message: "a system needs a prefix".into(),
            });
        }
        if field(1).is_empty() {
            if field(3).is_empty() {
                return Err(MeasuredError::Row {
                    line,
                    message: "a system needs a design, or (in not_counted) why it has none".into(),
                });
            }
            out.undrawn.push(UndrawnSet {
                prefix: field(0).to_string(),
                why: field(3).to_string(),
            });
            continue;
        }
        let gpus_per_thread = match field(4) {
            "" => 1,
            g => g
                .parse::<u32>()
                .ok()
                .filter(|&g| g > 0)
                .ok_or_else(|| MeasuredError::Row {
                    line,
                    message: format!("gpus_per_thread must be a whole number of GPUs, not {g:?}"),
                })?,
        };
        let cuda_graph = match field(5) {
            "" | "no" => false,
            "yes" => true,
            other => {
                return Err(MeasuredError::Row {
                    line,
                    message: format!("cuda_graph is yes or no, not {other:?}"),
                });
            }
        };
        let nccl = match field(6) {
            "" => None,
            text => Some(
                text.parse::<NcclRelease>()
                    .map_err(|e| MeasuredError::Row {
                        line,
                        message: e.to_string(),
                    })?,
            ),
        };
        out.drawn.push(ValidationSystem {
            prefix: field(0).to_string(),
            design: PathBuf::from(field(1)),
            assumes: field(2).to_string(),
            not_counted: Some(field(3)).filter(|t| !t.is_empty()).map(str::to_string),
            harness: Harness {
                gpus_per_thread,
                cuda_graph,
            },
            nccl,
        });
    }
    Ok(out)
}

/// The system whose prefix is the longest that `id` starts with.
fn system_of<'a>(systems: &'a [ValidationSystem], id: &str) -> Option<&'a ValidationSystem> {
    systems
        .iter()
        .filter(|s| id.starts_with(&s.prefix))
        .max_by_key(|s| s.prefix.len())
}

#[cfg(test)]
mod tests {
    use super::*;

    const HEADER: &str = "id,source,hardware,gpus,nodes,gpus_per_node,intra_link,inter_link,\
                          nic_gbps_per_gpu,collective,bytes,algbw_GBps,busbw_GBps,time_us,notes\n";

    #[test]
    fn rows_keep_their_figures_settings_and_standing() {
        // C-1 is uncertain in its hardware and slow in its notes: slow is said first.
        let text = format!(
            "{HEADER}\
             A-1,src,8x H100,8,1,8,NVLink,none,,all_reduce,1048576,38.31,67.04,27.37,out-of-place\n\
             A-2,src,8x H100,8,1,8,NVLink,none,,all_reduce,,,,,\"NCCL_ALGO=RING; bytes='2-4 GiB'\"\n\
             B-1,src,2 nodes,16,2,8,NVLink,IB,,broadcast,8,0.0,0.0,45.82,\"NCCL_ALGO=Ring PROTO=Simple\"\n\
             C-1,src,EFA - UNCERTAIN,16,2,8,NVLink,EFA,,all_reduce,1073741824,,57.17,,\"NCCL_PROTO=LL128, reported as SLOW\"\n"
        );
        let rows = parse_measured_csv(&text).expect("parses");
        assert_eq!(rows.len(), 4);
        let a = rows[0].as_ref().expect("a row");
        assert_eq!(
            (a.op, a.bytes, a.gpus),
            (Op::AllReduce, Bytes(1 << 20), Some(8))
        );
        assert_eq!((a.time_us, a.busbw_gbyte_s), (Some(27.37), Some(67.04)));
        assert_eq!(
            (a.algorithm, a.protocol, &a.excluded),
            (AlgoChoice::Auto, None, &None)
        );
        // A range of sizes with no figure at all: nothing to compare.
        assert_eq!(
            rows[1],
            Err(("A-2".to_string(), "no measured figure".to_string()))
        );
        let b = rows[2].as_ref().expect("a row");
        assert_eq!(
            (b.op, b.algorithm, b.protocol),
            (Op::Broadcast, AlgoChoice::Ring, None)
        );
        let c = rows[3].as_ref().expect("a row");
        assert_eq!(c.protocol, Some(Protocol::Ll128));
        assert_eq!(c.time_us, None);
        assert_eq!(
            c.excluded.as_deref(),
            Some("its reporter called the run slow")
        );
    }

    #[test]
    fn a_figure_quoted_for_a_range_of_sizes_is_taken_at_its_top() {
        // nccl #1455: NVLS busbw on 5 GPUs "~420" and ring "365-370", both for 2-4 GiB.
        let text = format!(
            "{HEADER}\
             N-5,src,H100,5,1,5,NVLink,none,,all_reduce,,258,420,,\"NCCL_ALGO=NVLS; bytes='2-4 GiB'\"\n\
             R-8,src,H100,8,1,8,NVLink,none,,all_reduce,,,,,\"NCCL_ALGO=RING; bytes='2-4 GiB'; busbw_GBps='365-370'\"\n\
             X-1,src,H100,8,1,8,NVLink,none,,all_reduce,,,,,\"bytes='large'\"\n"
        );
        let rows = parse_measured_csv(&text).expect("parses");
        let n = rows[0].as_ref().expect("a row");
        assert_eq!(n.bytes, Bytes(4 << 30));
        assert_eq!(n.size_range.as_deref(), Some("2-4 GiB"));
        assert_eq!((n.busbw_gbyte_s, n.gpus), (Some(420.0), Some(5)));
        let r = rows[1].as_ref().expect("a row");
        assert_eq!(r.busbw_gbyte_s, Some(367.5));
        assert_eq!(r.algorithm, AlgoChoice::Ring);
        assert_eq!(
            rows[2],
            Err(("X-1".to_string(), "no single size".to_string()))
        );
        assert_eq!(quoted_range("bytes='4-2 GiB'", "bytes="), None);
        assert_eq!(quoted_range("bytes='1-2 PiB'", "bytes="), None);
        assert_eq!(quoted_range("bytes='1-2 GB'", "bytes="), None);
        assert_eq!(
            quoted_range("bytes='64-128 K'", "bytes="),
            Some((65536.0, 131072.0, "64-128 K".to_string()))
        );
    }

    #[test]
    fn a_bad_number_names_its_line() {
        let text = format!("{HEADER}A-1,s,h,8,1,8,x,none,,all_reduce,8,0,0,fast,\n");
        let e = parse_measured_csv(&text).expect_err("refused");
        assert_eq!(e.to_string(), "line 2: `fast` in time_us is not a number");
    }

    #[test]
    fn the_longest_prefix_names_the_system() {
        let list = parse_systems_csv(
            "prefix,design,assumes,not_counted\nOCIA100-,a.ron,one\nOCIA100-2N-,b.ron,two nodes\n\
             OCIA100-2N-X,,,its network is not stated\n",
        )
        .expect("parses");
        let assumes = |id: &str| match list.of(id) {
            Some(Ok(s)) => Some(s.assumes.clone()),
            Some(Err(u)) => Some(format!("not drawn: {}", u.why)),
            None => None,
        };
        assert_eq!(assumes("OCIA100-2N-07").as_deref(), Some("two nodes"));
        assert_eq!(assumes("OCIA100-1N-07").as_deref(), Some("one"));
        // A set listed without a design, under a drawn system's prefix, keeps its reason.
        assert_eq!(
            assumes("OCIA100-2N-X1").as_deref(),
            Some("not drawn: its network is not stated")
        );
        assert_eq!(assumes("DGX-1"), None);
        // Without a design a set must say why.
        let e = parse_systems_csv("prefix,design,assumes\nA-,,x\n").expect_err("refused");
        assert!(e.to_string().contains("why it has none"), "{e}");
    }
}
