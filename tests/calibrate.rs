//! Calibration from the user's own nccl-tests output: the parser on real-format logs, the fit
//! against a log the model wrote with known efficiencies, and `railyard calibrate`.

use railyard::analysis::calibrate::{CalibrateError, CalibrationFit, FitOptions, fit_calibration};
use railyard::analysis::collective::{Algorithm, CollectiveQuery, Op, Protocol, sweep};
use railyard::analysis::nccl_tests::Harness;
use railyard::generate::{Template, TemplateSpec, generate};
use railyard::io::nccl_log::{NcclLogError, format_nccl_log, parse_nccl_log};
use railyard::io::{load_design, save_design};
use railyard::model::{
    Bytes, CalibratedProtocol, Calibration, Catalog, Design, DeviceKind, LinkTech, NcclRelease,
    PartId,
};
use std::path::Path;
use std::process::{Command, Output};

fn data(name: &str) -> String {
    let path = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests/data/nccl")
        .join(name);
    std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("{}: {e}", path.display()))
}

/// 1-based line of the first line containing `needle`.
fn line_of(text: &str, needle: &str) -> usize {
    text.lines()
        .position(|l| l.contains(needle))
        .map(|i| i + 1)
        .unwrap_or_else(|| panic!("no line with {needle:?}"))
}

#[test]
fn dgx_h100_log_field_by_field() {
    let text = data("dgx-h100-all-reduce.txt");
    let log = parse_nccl_log(&text).unwrap();
    assert_eq!(log.test.as_deref(), Some("all_reduce_perf"));
    assert_eq!(log.op, Some(Op::AllReduce));
    assert_eq!(log.ranks, Some(8));
    assert_eq!(log.rows.len(), 32);
    let first = &log.rows[0];
    assert_eq!(first.line, line_of(&text, "           8             2"));
    assert_eq!(first.bytes, Bytes(8));
    assert_eq!(first.count, 2);
    assert_eq!(first.dtype, "float");
    assert_eq!(first.redop.as_deref(), Some("sum"));
    assert_eq!(first.root, Some(-1));
    assert_eq!(first.out_of_place.time_us, 13.67);
    assert_eq!(first.out_of_place.algbw_gbyte_s, 0.0);
    assert_eq!(first.out_of_place.wrong, Some(0));
    let last = log.rows.last().unwrap();
    assert_eq!(last.bytes, Bytes(17_179_869_184));
    assert_eq!(last.count, 4_294_967_296);
    assert_eq!(last.out_of_place.time_us, 62648.0);
    assert_eq!(last.out_of_place.algbw_gbyte_s, 274.23);
    assert_eq!(last.out_of_place.busbw_gbyte_s, 479.90);
    assert_eq!(last.in_place.map(|m| m.busbw_gbyte_s), Some(479.90));
}

#[test]
fn the_header_says_how_the_test_drove_the_gpus() {
    // NVIDIA's DGX H100 sweep: eight processes, one GPU each.
    let log = parse_nccl_log(&data("dgx-h100-all-reduce.txt")).unwrap();
    assert_eq!(
        log.harness,
        Harness {
            gpus_per_thread: 1,
            cuda_graph: false
        }
    );
    // One process for eight GPUs, and a CUDA graph (nccl-tests -g 8 -G 10).
    let text = data("dgx-h100-all-reduce.txt")
        .replace("# nThread 1 nGpus 1 ", "# nThread 1 nGpus 8 ")
        .replace("graph: 0", "graph: 10");
    let log = parse_nccl_log(&text).unwrap();
    assert_eq!(
        log.harness,
        Harness {
            gpus_per_thread: 8,
            cuda_graph: true
        }
    );
    assert_eq!(log.harness.launch_floor_us(), 0.0);
    assert_eq!(log.ranks, Some(8));
}

/// A synthetic DGX H100 log (NVLink at 0.78, hop 0.9 µs) as one thread driving all 8 GPUs
/// prints it: nothing under 8 × 4.2 = 33.6 µs.
#[test]
fn rows_under_the_launch_floor_are_left_out_of_the_fit() {
    let catalog = Catalog::builtin();
    let design = single_dgx(&catalog);
    let mut truth = Calibration::default();
    truth.set(LinkTech::NvLink, Some(0.78), Some(0.9));
    let honest = parse_nccl_log(&log_of(&design, &catalog, truth)).unwrap();
    let mut floored = honest.clone();
    for r in &mut floored.rows {
        for m in std::iter::once(&mut r.out_of_place).chain(r.in_place.as_mut()) {
            m.time_us = m.time_us.max(33.6);
        }
    }
    // Taken for one process per GPU, the floor drags the fitted hop latency up: the small
    // rows' 33.6 µs = 6.6 + 14 × 1.93 µs.
    let naive = fit_calibration(&design, &catalog, &floored, &FitOptions::default()).unwrap();
    let pulled = naive.latency_us.expect("fitted").after;
    assert!(pulled > 1.8, "{pulled}");
    // Read as what it is (-g 8), the rows the model puts under 33.6 µs are left out and
    // said so; the efficiency still comes out of the large rows exactly.
    floored.harness.gpus_per_thread = 8;
    let fit = fit_calibration(&design, &catalog, &floored, &FitOptions::default()).unwrap();
    let left_out = honest.rows.len() - fit.rows.len();
    assert!(left_out >= 10, "{left_out}");
    assert!(
        fit.notes
            .iter()
            .any(|n| n.starts_with(&format!("{left_out} row(s) left out"))),
        "{:?}",
        fit.notes
    );
    assert!(fit.rows.iter().all(|r| r.measured_time_us > 33.6));
    let eff = fit.efficiency.expect("an efficiency is fitted");
    assert!((eff.after - 0.78).abs() < 0.002, "{eff:?}");
}

#[test]
fn two_node_log_with_markdown_and_nccl_info_noise() {
    let text = data("a3mega-16rank-all-reduce.md");
    let log = parse_nccl_log(&text).unwrap();
    // The test name comes from the mpirun command line, the ranks from the 16 Rank lines.
    assert_eq!(log.test.as_deref(), Some("all_reduce_perf"));
    assert_eq!(log.op, Some(Op::AllReduce));
    assert_eq!(log.ranks, Some(16));
    assert_eq!(log.rows.len(), 31);
    let row = log
        .rows
        .iter()
        .find(|r| r.bytes == Bytes(2_147_483_648))
        .unwrap();
    assert_eq!(row.line, line_of(&text, "  2147483648     536870912"));
    assert_eq!(row.count, 536_870_912);
    // Times over 10 ms are printed without decimals.
    assert_eq!(row.out_of_place.time_us, 12646.0);
    assert_eq!(row.out_of_place.algbw_gbyte_s, 169.81);
    assert_eq!(row.out_of_place.busbw_gbyte_s, 318.40);
    let ip = row.in_place.unwrap();
    assert_eq!(ip.time_us, 12641.0);
    assert_eq!(ip.busbw_gbyte_s, 318.52);
    // The faster half is what the fabric did: in-place here.
    assert_eq!(row.best().time_us, 12641.0);
    let r1k = log.rows.iter().find(|r| r.bytes == Bytes(1024)).unwrap();
    assert_eq!(r1k.best().time_us, 123.1);
}

#[test]
fn old_layout_without_root_and_with_an_error_column() {
    let text = data("all-gather-old-format.txt");
    let log = parse_nccl_log(&text).unwrap();
    assert_eq!(log.op, Some(Op::AllGather));
    assert_eq!(log.ranks, Some(8), "nThread 1 × nGpus 8");
    assert_eq!(log.rows.len(), 3);
    let r = &log.rows[0];
    assert_eq!(r.bytes, Bytes(1_048_576));
    assert_eq!(r.count, 32_768);
    assert_eq!(r.redop.as_deref(), Some("none"));
    assert_eq!(r.root, None);
    assert_eq!(r.out_of_place.time_us, 25.10);
    assert_eq!(r.out_of_place.busbw_gbyte_s, 36.56);
    assert_eq!(r.out_of_place.wrong, None, "a max error, not a count");
    assert_eq!(r.in_place.unwrap().time_us, 24.90);
}

#[test]
fn bad_logs_name_the_line() {
    let text = data("dgx-h100-all-reduce.txt");
    // A letter in the time of the 1 MiB row.
    let broken = text.replacen("   27.37", "   27.3x", 1);
    let line = line_of(&broken, "27.3x");
    let column = broken.lines().nth(line - 1).unwrap().find("27.3x").unwrap() + 1;
    match parse_nccl_log(&broken) {
        Err(e @ NcclLogError::BadNumber { .. }) => {
            assert_eq!(
                e,
                NcclLogError::BadNumber {
                    line,
                    column,
                    what: "time",
                    found: "27.3x".into()
                }
            );
            assert!(
                e.to_string()
                    .starts_with(&format!("line {line}, column {column}:"))
            );
        }
        other => panic!("{other:?}"),
    }
    // A row cut short by a paste.
    let cut: String = text
        .lines()
        .map(|l| {
            if l.starts_with("     2097152") {
                "     2097152        524288     float     sum      -1    42.21"
            } else {
                l
            }
        })
        .collect::<Vec<_>>()
        .join("\n");
    assert_eq!(
        parse_nccl_log(&cut),
        Err(NcclLogError::Columns {
            line: line_of(&cut, "     2097152"),
            found: 6,
            expected: 13
        })
    );
    assert_eq!(
        parse_nccl_log("hello\n# nothing here\n"),
        Err(NcclLogError::NoRows)
    );
    // Two tests pasted together.
    let two = format!(
        "{}{}",
        format_nccl_log(Op::AllReduce, 8, &[(Bytes(1024), 20.0)]),
        format_nccl_log(Op::AllGather, 8, &[(Bytes(1024), 20.0)])
    );
    assert!(matches!(
        parse_nccl_log(&two),
        Err(NcclLogError::SeveralTests { .. })
    ));
}

/// 4 DGX H100 (32 GPUs) on a rail-optimized InfiniBand fabric, SHARP off: large all-reduces
/// are then limited by the InfiniBand rails (8 × 400G × 0.94 per node against NVLink's
/// 3,600G × 0.824 per GPU), so their efficiency is what a log pins down.
fn four_dgx(catalog: &Catalog) -> Design {
    let mut spec = TemplateSpec::new(Template::RailOptimized);
    spec.nodes = Some(4);
    spec.node = Some(PartId::new("dgx-h100"));
    let mut design = generate(&spec, catalog).expect("the template builds");
    for d in &mut design.devices {
        if let DeviceKind::Switch(s) = &mut d.kind {
            s.features.in_network_reduction = false;
        }
    }
    design
}

/// The log the model prints for `design` with IB at `efficiency` and `latency_us` per hop.
fn synthetic_log(design: &Design, catalog: &Catalog, efficiency: f64, latency_us: f64) -> String {
    let mut cal = Calibration::default();
    cal.set(LinkTech::InfiniBand, Some(efficiency), Some(latency_us));
    log_of(design, catalog, cal)
}

#[test]
fn fit_recovers_known_efficiency_and_latency_from_a_synthetic_log() {
    let catalog = Catalog::builtin();
    let design = four_dgx(&catalog);
    assert!(design.links.iter().any(|l| l.tech == LinkTech::InfiniBand));
    let text = synthetic_log(&design, &catalog, 0.70, 3.0);
    let log = parse_nccl_log(&text).unwrap();
    assert_eq!(log.ranks, Some(32));
    assert_eq!(log.rows.len(), 31);
    let fit = fit_calibration(
        &design,
        &catalog,
        &log,
        &FitOptions {
            source: "synthetic.txt".into(),
            fitted_at_unix_s: 1_700_000_000,
            ..FitOptions::default()
        },
    )
    .unwrap();
    let eff = fit.efficiency.expect("an efficiency is fitted");
    assert_eq!(eff.tech, LinkTech::InfiniBand);
    assert_eq!(eff.before, 0.94, "the built-in NDR figure");
    assert!((eff.after - 0.70).abs() < 0.002, "{eff:?}");
    let lat = fit.latency_us.expect("a latency is fitted");
    assert_eq!(lat.tech, LinkTech::InfiniBand);
    assert_eq!(lat.before, 0.0);
    assert!((lat.after - 3.0).abs() < 0.1, "{lat:?} {:?}", fit.notes);
    // Fitted, the model reproduces the log at large sizes.
    let worst = fit.max_error_from(64 << 20).unwrap();
    assert!(worst < 0.05, "worst {worst}");
    assert!(worst < 0.005, "a perfect log should fit closely: {worst}");
    // Before the fit it did not (IB at 0.94 instead of 0.70 is 25 % faster).
    let before_8g = fit.rows.last().unwrap();
    assert!(before_8g.before_time_us < 0.8 * before_8g.measured_time_us);
    assert_eq!(fit.calibration.source, "synthetic.txt");
    assert_eq!(fit.calibration.test, "all_reduce_perf");
    assert_eq!(fit.calibration.fitted_at_unix_s, 1_700_000_000);
    assert_eq!(fit.calibration.techs.len(), 1);
}

/// A log that names its NCCL release is fitted with that release's tables: the fitted figures
/// are the hardware's. Four DGX H100 on InfiniBand, written by the model as NCCL 2.21.5 with
/// IB at 0.70 and 3 µs a hop: NVLSTree crosses the network 2 log2(4) = 4 times at 2.21.5's
/// 14 µs where 2.30.7 puts 20.9, so it runs from 128 MiB where 2.30.7 keeps the tree.
#[test]
fn a_log_is_fitted_with_the_nccl_release_it_names() {
    let catalog = Catalog::builtin();
    let design = four_dgx(&catalog);
    let mut older = design.clone();
    older.nccl_release = Some(NcclRelease::new(2, 21, 5));
    let text = synthetic_log(&older, &catalog, 0.70, 3.0);
    // The release's tables move the log: some size runs over 1 % faster than 2.30.7 says.
    let modelled = parse_nccl_log(&synthetic_log(&design, &catalog, 0.70, 3.0)).unwrap();
    let logged = parse_nccl_log(&text).unwrap();
    assert!(
        modelled
            .rows
            .iter()
            .zip(&logged.rows)
            .any(|(m, l)| { l.out_of_place.time_us < 0.99 * m.out_of_place.time_us })
    );
    let named = format!("NCCL version 2.21.5+cuda12.3\n{text}");
    let log = parse_nccl_log(&named).unwrap();
    assert_eq!(log.nccl, Some(NcclRelease::new(2, 21, 5)));
    let fit = fit_calibration(&design, &catalog, &log, &FitOptions::default()).unwrap();
    let eff = fit.efficiency.expect("an efficiency is fitted");
    assert!((eff.after - 0.70).abs() < 0.002, "{eff:?}");
    let lat = fit.latency_us.expect("a latency is fitted");
    assert!((lat.after - 3.0).abs() < 0.1, "{lat:?} {:?}", fit.notes);
    assert!(fit.max_error_from(64 << 20).unwrap() < 0.005);
    assert!(
        fit.notes
            .iter()
            .any(|n| n.starts_with("fitted with NCCL 2.21.5's latency tables")),
        "{:?}",
        fit.notes
    );
    // The design keeps its own release: the fit changes the calibration only.
    assert_eq!(design.nccl_release, None);
}

#[test]
fn calibration_saves_with_the_design_and_old_files_load() {
    let catalog = Catalog::builtin();
    let mut design = four_dgx(&catalog);
    let dir = tempfile::tempdir().unwrap();
    let plain = dir.path().join("plain.ron");
    save_design(&plain, &design).unwrap();
    let text = std::fs::read_to_string(&plain).unwrap();
    assert!(!text.contains("calibration"), "no field when there is none");
    assert_eq!(load_design(&plain).unwrap().calibration, None);

    let mut cal = Calibration {
        source: "run.txt".into(),
        test: "all_reduce_perf".into(),
        fitted_at_unix_s: 42,
        techs: vec![],
    };
    cal.set(LinkTech::InfiniBand, Some(0.81), Some(2.5));
    design.calibration = Some(cal.clone());
    let path = dir.path().join("cal.ron");
    save_design(&path, &design).unwrap();
    let back = load_design(&path).unwrap();
    assert_eq!(back.calibration, Some(cal));
    assert_eq!(back, design);

    // A calibration out of range is refused on load, naming it.
    let bad = std::fs::read_to_string(&path)
        .unwrap()
        .replace("0.81", "1.81");
    let bad_path = dir.path().join("bad.ron");
    std::fs::write(&bad_path, bad).unwrap();
    let err = load_design(&bad_path).unwrap_err().to_string();
    assert!(err.contains("InfiniBand efficiency 1.81"), "{err}");
}

#[test]
fn calibrated_efficiency_changes_the_prediction() {
    let catalog = Catalog::builtin();
    let design = four_dgx(&catalog);
    let q = CollectiveQuery::new(Op::AllReduce, Bytes(8 << 30));
    let base = railyard::analysis::collective::collective(&design, &catalog, &q).unwrap();
    let mut slow = design.clone();
    let mut cal = Calibration::default();
    cal.set(LinkTech::InfiniBand, Some(0.47), None);
    slow.calibration = Some(cal);
    let r = railyard::analysis::collective::collective(&slow, &catalog, &q).unwrap();
    // IB limits 8 GiB across 4 nodes: half the efficiency, about twice the bandwidth time.
    let ratio = r.bandwidth_us / base.bandwidth_us;
    assert!((ratio - 2.0).abs() < 0.01, "{ratio}");
}

fn railyard(args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_railyard"))
        .args(args)
        .output()
        .expect("the railyard binary runs")
}

#[test]
fn cli_calibrate_end_to_end() {
    let catalog = Catalog::builtin();
    let design = four_dgx(&catalog);
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("four.ron");
    save_design(&file, &design).unwrap();
    let log = dir.path().join("measured.txt");
    std::fs::write(&log, synthetic_log(&design, &catalog, 0.80, 2.0)).unwrap();
    let out = dir.path().join("calibrated.ron");
    let o = railyard(&[
        "calibrate",
        file.to_str().unwrap(),
        "--from",
        log.to_str().unwrap(),
        "-o",
        out.to_str().unwrap(),
    ]);
    let stdout = String::from_utf8_lossy(&o.stdout);
    assert_eq!(
        o.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&o.stderr)
    );
    assert!(
        stdout.contains("InfiniBand efficiency: 0.940 -> 0.800"),
        "{stdout}"
    );
    assert!(
        stdout.contains("InfiniBand hop latency: 0.00 -> 2.00 us"),
        "{stdout}"
    );
    // One line per measured row after the header.
    assert_eq!(stdout.lines().filter(|l| !l.starts_with('#')).count(), 31);
    let saved = load_design(&out).unwrap();
    let cal = saved.calibration.expect("saved with the design");
    assert_eq!(cal.source, "measured.txt");
    assert!((cal.efficiency(LinkTech::InfiniBand).unwrap() - 0.80).abs() < 0.002);
    // `eval` of the calibrated design says its time is the calibrated model's, and from what;
    // the uncalibrated design's says nothing of the kind.
    let o = railyard(&["eval", out.to_str().unwrap()]);
    let text = String::from_utf8_lossy(&o.stdout);
    let line = text
        .lines()
        .find(|l| l.trim_start().starts_with("calibrated"))
        .unwrap_or_else(|| panic!("{text}"));
    assert!(
        line.contains("fitted to measured.txt: InfiniBand efficiency 0.80"),
        "{line}"
    );
    // `sweep` and `report` name the library and the calibration too.
    let o = railyard(&["sweep", out.to_str().unwrap()]);
    let text = String::from_utf8_lossy(&o.stdout);
    assert!(
        text.contains("\n# library: NCCL; the model assumes NCCL 2.30.7 defaults"),
        "{text}"
    );
    assert!(
        text.contains(
            "\n# fitted to measured.txt: InfiniBand efficiency 0.800, hop latency 2.00 µs\n"
        ),
        "{text}"
    );
    let o = railyard(&["workload", out.to_str().unwrap(), "--model", "8"]);
    let text = String::from_utf8_lossy(&o.stdout);
    assert!(
        text.contains("\nlibrary    NCCL 2.30.7 defaults: "),
        "{text}"
    );
    assert!(
        text.contains("\ncalibrated fitted to measured.txt: InfiniBand efficiency 0.800"),
        "{text}"
    );
    let o = railyard(&["workload", out.to_str().unwrap(), "--model", "8", "--json"]);
    let v: serde_json::Value = serde_json::from_slice(&o.stdout).unwrap();
    assert_eq!(v["library"], "nccl");
    assert!(v["calibrated"].as_str().is_some(), "{v}");
    let o = railyard(&["report", out.to_str().unwrap(), "-o", "-"]);
    let text = String::from_utf8_lossy(&o.stdout);
    assert!(
        text.contains("The times are the calibrated model's: fitted to measured.txt"),
        "{text}"
    );
    let o = railyard(&["eval", file.to_str().unwrap(), "--json"]);
    let v: serde_json::Value = serde_json::from_slice(&o.stdout).unwrap();
    assert!(v["collective"].get("calibrated").is_none(), "{v}");
    let o = railyard(&["eval", out.to_str().unwrap(), "--json"]);
    let v: serde_json::Value = serde_json::from_slice(&o.stdout).unwrap();
    assert!(
        v["collective"]["calibrated"]
            .as_str()
            .is_some_and(|c| c.ends_with("InfiniBand efficiency 0.800, hop latency 2.00 µs")),
        "{v}"
    );

    let o = railyard(&[
        "calibrate",
        file.to_str().unwrap(),
        "--from",
        log.to_str().unwrap(),
        "-o",
        out.to_str().unwrap(),
        "--json",
    ]);
    assert_eq!(o.status.code(), Some(0));
    let v: serde_json::Value = serde_json::from_slice(&o.stdout).unwrap();
    assert_eq!(v["op"], "all_reduce");
    assert_eq!(v["gpus"], 32);
    assert_eq!(v["efficiency"]["tech"], "InfiniBand");
    assert_eq!(v["rows"].as_array().unwrap().len(), 31);

    // A broken log: status 2, one line naming the file and the line.
    let bad = dir.path().join("bad.txt");
    std::fs::write(
        &bad,
        "# nThread 1 nGpus 8\n        1024     256  float  sum  -1  abc\n",
    )
    .unwrap();
    let o = railyard(&[
        "calibrate",
        file.to_str().unwrap(),
        "--from",
        bad.to_str().unwrap(),
        "-o",
        out.to_str().unwrap(),
    ]);
    let err = String::from_utf8_lossy(&o.stderr);
    assert_eq!(o.status.code(), Some(2), "{err}");
    assert_eq!(err.lines().count(), 1, "{err}");
    assert!(err.starts_with("railyard: "), "{err}");
    assert!(err.contains("bad.txt") && err.contains("line 2"), "{err}");
}

#[test]
fn real_dgx_h100_log_fits_nvlink_within_5_percent_at_large_sizes() {
    let catalog = Catalog::builtin();
    let design = single_dgx(&catalog);
    let log = parse_nccl_log(&data("dgx-h100-all-reduce.txt")).unwrap();
    let fit = fit_calibration(&design, &catalog, &log, &FitOptions::default()).unwrap();
    assert_eq!(fit.gpus, 8);
    // One node: NVLink (through NVLS) limits large sizes; the measured 480 GB/s busbw at
    // 8 GiB is a little under what the built-in 0.824 (NCCL's 20.6 of 25 GB/s per Hopper
    // link) gives, so the fit lowers it.
    let eff = fit.efficiency.unwrap();
    assert_eq!(eff.tech, LinkTech::NvLink);
    assert_eq!(eff.before, 20.6 / 25.0);
    assert!(eff.after > 0.75 && eff.after < 0.824, "{eff:?}");
    let worst = fit.max_error_from(64 << 20).unwrap();
    assert!(worst < 0.05, "worst {worst}");

    // No network link on the path: the NVLink hop latency is fitted instead. Small sizes
    // run ring LL, 6.6 µs base + 14 steps × hop: 15.00 µs with NCCL's 0.6 µs, against a
    // measured 13.0–20.4 µs over the latency-bound rows (8 B–256 KiB), and one 68 µs
    // hiccup at 32 B. Below 768 KiB NCCL runs ring LL on fewer than its 24 channels, one
    // per 32 KiB (512 threads × 8 ranks × 8 B), each carrying 30 of the GPU's 370.8 GB/s:
    // at the fitted efficiency 450 × 0.794 × 30 / 370.8 = 28.9 GB/s, half of it LL data.
    // Every row has the same 14 steps, so the weights are 1 / measured time; sorted by the
    // latency each row gives, the rows up to 128 KiB's 0.666 µs hold 0.473 of the total
    // weight, and the 16 KiB row (17.93 µs, on one channel: 1.75 × 16 KiB / 14.46 GB/s =
    // 1.98 µs) takes it past half: the fit goes through that row, 17.93 = 6.6 + 14 × hop +
    // 1.98, hop = 0.6676 µs.
    let lat = fit.latency_us.expect("an intra-node latency is fitted");
    assert_eq!(lat.tech, LinkTech::NvLink);
    assert_eq!(lat.before, 0.6);
    assert!((lat.after - 0.6676).abs() < 0.0005, "{lat:?}");
    let row_16k = fit.rows.iter().find(|r| r.bytes == Bytes(16384)).unwrap();
    assert!(
        (row_16k.predicted_time_us - 17.93).abs() < 0.005,
        "{row_16k:?}"
    );
    let first = &fit.rows[0];
    assert!((first.before_time_us - 15.0).abs() < 0.001, "{first:?}");
    assert!((first.predicted_time_us - (6.6 + 14.0 * lat.after)).abs() < 0.01);
    // Least squares in relative error, the fit before, put the hop at 0.666 µs, 0.015 of it
    // from the 32 B row; the median does not move when that row is left out.
    let ls = least_squares_latency(&fit, 14.0);
    assert!((ls - 0.666).abs() < 0.001, "least squares {ls}");
    let hiccup = &fit.rows[2];
    assert_eq!(hiccup.bytes, Bytes(32));
    assert!(
        fit.notes
            .iter()
            .any(|n| n.starts_with(&format!("line {} (32 B): measured 68.14 µs", hiccup.line))),
        "{:?}",
        fit.notes
    );
    let mut without = log.clone();
    without.rows.remove(2);
    let refit = fit_calibration(&design, &catalog, &without, &FitOptions::default()).unwrap();
    let relat = refit.latency_us.unwrap().after;
    assert!((relat - lat.after).abs() < 1e-4, "{relat} {lat:?}");
    let ls_without = least_squares_latency(&refit, 14.0);
    assert!(
        (ls_without - 0.651).abs() < 0.001,
        "least squares {ls_without}"
    );
    // Median |time error| over the 14 rows up to 64 KiB: 9.0 % before, 4.6 % after: the
    // 16 KiB row exact, 128 B–64 KiB within 7 % but 64 B, and 8 B, 16 B (fitted 17–23 %
    // over), 4 KiB and 32 B (30 % and 77 % under) far off.
    let median = |time: &dyn Fn(&railyard::analysis::calibrate::RowComparison) -> f64| {
        let mut e: Vec<f64> = fit
            .rows
            .iter()
            .filter(|r| r.bytes.0 <= 64 << 10)
            .map(|r| (time(r) / r.measured_time_us - 1.0).abs())
            .collect();
        assert_eq!(e.len(), 14);
        e.sort_by(f64::total_cmp);
        (e[6] + e[7]) / 2.0
    };
    let before = median(&|r| r.before_time_us);
    let after = median(&|r| r.predicted_time_us);
    assert!((before - 0.0902).abs() < 0.001, "before {before}");
    assert!((after - 0.0464).abs() < 0.001, "after {after}");
    assert!(after < before);
    // The efficiency and the latency both belong to NVLink: one entry.
    assert_eq!(fit.calibration.techs.len(), 1);
}

/// The log the model prints for `design` with `calibration`.
fn log_of(design: &Design, catalog: &Catalog, calibration: Calibration) -> String {
    log_with_hiccup(design, catalog, calibration, Bytes(0), 1.0)
}

/// The same, with the row of `at` bytes taking `factor` times as long.
fn log_with_hiccup(
    design: &Design,
    catalog: &Catalog,
    calibration: Calibration,
    at: Bytes,
    factor: f64,
) -> String {
    let mut truth = design.clone();
    truth.calibration = Some(calibration);
    let results = sweep(
        &truth,
        catalog,
        &CollectiveQuery::new(Op::AllReduce, Bytes(0)),
    )
    .unwrap();
    let rows: Vec<(Bytes, f64)> = results
        .iter()
        .map(|r| {
            (
                r.bytes,
                r.time_us * if r.bytes == at { factor } else { 1.0 },
            )
        })
        .collect();
    format_nccl_log(Op::AllReduce, results[0].gpus, &rows)
}

/// The hop latency plain least squares in relative error (the fit before it took the
/// median) puts through the latency-bound ring LL rows. Each of them runs over `steps` hops
/// here, so its time is linear in the hop latency with slope `steps`, and one step from the
/// fitted model lands on the least-squares optimum. (A latency-bound NVLS row, 2 MiB on a
/// DGX H100, does not depend on the hop.)
fn least_squares_latency(fit: &CalibrationFit, steps: f64) -> f64 {
    let (mut num, mut den) = (0.0, 0.0);
    let ring_ll = |r: &&railyard::analysis::calibrate::RowComparison| {
        (r.algorithm, r.protocol) == (Algorithm::Ring, Protocol::Ll)
    };
    for r in fit.rows.iter().filter(|r| r.latency_bound).filter(ring_ll) {
        let w = 1.0 / (r.measured_time_us * r.measured_time_us);
        num += w * steps * (r.measured_time_us - r.predicted_time_us);
        den += w * steps * steps;
    }
    fit.latency_us.unwrap().after + num / den
}

/// One DGX H100: eight GPUs on NVSwitch, nothing drawn between them.
fn single_dgx(catalog: &Catalog) -> Design {
    let mut spec = TemplateSpec::new(Template::Single);
    spec.node = Some(PartId::new("dgx-h100"));
    generate(&spec, catalog).unwrap()
}

#[test]
fn fit_recovers_a_known_nvlink_hop_latency_from_a_synthetic_single_node_log() {
    let catalog = Catalog::builtin();
    let design = single_dgx(&catalog);
    let mut truth = Calibration::default();
    truth.set(LinkTech::NvLink, Some(0.78), Some(0.9));
    let log = parse_nccl_log(&log_of(&design, &catalog, truth)).unwrap();
    assert_eq!(log.ranks, Some(8));
    // 8 B: ring LL, 6.6 µs base + 2 × 7 steps × 0.9 µs.
    assert_eq!(log.rows[0].bytes, Bytes(8));
    assert_eq!(log.rows[0].best().time_us, 19.2);
    let fit = fit_calibration(&design, &catalog, &log, &FitOptions::default()).unwrap();
    let lat = fit.latency_us.expect("a latency is fitted");
    assert_eq!(lat.tech, LinkTech::NvLink);
    assert_eq!(lat.before, 0.6, "NCCL's LL NVLink constant");
    // The log prints times to 0.01 µs, so 14 steps pin the hop to about 0.001 µs.
    assert!((lat.after - 0.9).abs() < 0.005, "{lat:?} {:?}", fit.notes);
    let eff = fit.efficiency.expect("an efficiency is fitted");
    assert_eq!(eff.tech, LinkTech::NvLink);
    assert!((eff.after - 0.78).abs() < 0.002, "{eff:?}");
    let worst = fit.max_error_from(0).unwrap();
    assert!(worst < 0.01, "a perfect log fits at every size: {worst}");
    assert_eq!(fit.calibration.techs.len(), 1);
}

#[test]
fn fit_recovers_a_known_pcie_hop_latency_on_a_workstation() {
    let catalog = Catalog::builtin();
    let mut spec = TemplateSpec::new(Template::Single);
    spec.node = Some(PartId::new("workstation"));
    spec.gpu = Some(PartId::new("rtx-4090"));
    spec.gpus_per_node = Some(4);
    let design = generate(&spec, &catalog).unwrap();
    let mut truth = Calibration::default();
    truth.set(LinkTech::Pcie, None, Some(1.8));
    let log = parse_nccl_log(&log_of(&design, &catalog, truth)).unwrap();
    // 8 B: ring LL, 6.6 µs base + 2 × 3 steps × 1.8 µs.
    assert_eq!(log.rows[0].best().time_us, 17.4);
    let fit = fit_calibration(&design, &catalog, &log, &FitOptions::default()).unwrap();
    let lat = fit.latency_us.expect("a latency is fitted");
    // The GPUs talk over PCIe, not NVLink: PCIe is the hop fitted.
    assert_eq!(lat.tech, LinkTech::Pcie);
    assert_eq!(lat.before, 1.0, "NCCL's LL PCIe constant");
    assert!((lat.after - 1.8).abs() < 0.01, "{lat:?} {:?}", fit.notes);
    assert!(fit.calibration.latency_us(LinkTech::NvLink).is_none());
}

#[test]
fn an_intra_node_latency_moves_single_node_steps_only() {
    let catalog = Catalog::builtin();
    let q = CollectiveQuery::new(Op::AllReduce, Bytes(8));
    let mut spec = TemplateSpec::new(Template::Single);
    spec.node = Some(PartId::new("dgx-h100"));
    let single = generate(&spec, &catalog).unwrap();
    let base = railyard::analysis::collective::collective(&single, &catalog, &q).unwrap();
    assert!((base.latency_us - 15.0).abs() < 1e-9, "{}", base.latency_us);
    let mut cal = Calibration::default();
    cal.set(LinkTech::NvLink, None, Some(0.4));
    let mut fast = single.clone();
    fast.calibration = Some(cal.clone());
    let r = railyard::analysis::collective::collective(&fast, &catalog, &q).unwrap();
    // 6.6 + 14 × 0.4.
    assert!((r.latency_us - 12.2).abs() < 1e-9, "{}", r.latency_us);
    // A PCIe or bridge latency is not on this path and changes nothing.
    let mut other = single.clone();
    let mut off_path = Calibration::default();
    off_path.set(LinkTech::Pcie, None, Some(5.0));
    off_path.set(LinkTech::NvLinkBridge, None, Some(5.0));
    other.calibration = Some(off_path);
    let r = railyard::analysis::collective::collective(&other, &catalog, &q).unwrap();
    assert_eq!(r.latency_us, base.latency_us);
    // Across nodes NCCL charges each intra-node LL step at least its 1 µs network overhead,
    // so an NVLink hop under that changes nothing there.
    let four = four_dgx(&catalog);
    let base = railyard::analysis::collective::collective(&four, &catalog, &q).unwrap();
    let mut four_cal = four.clone();
    four_cal.calibration = Some(cal);
    let r = railyard::analysis::collective::collective(&four_cal, &catalog, &q).unwrap();
    assert_eq!(r.latency_us, base.latency_us);
}

#[test]
fn fit_recovers_a_known_nvlink_bridge_hop_latency() {
    let catalog = Catalog::builtin();
    let mut spec = TemplateSpec::new(Template::Single);
    spec.node = Some(PartId::new("workstation"));
    spec.gpu = Some(PartId::new("rtx-3090"));
    spec.gpus_per_node = Some(2);
    spec.nvlink_bridge = true;
    let design = generate(&spec, &catalog).unwrap();
    let mut truth = Calibration::default();
    truth.set(LinkTech::NvLinkBridge, None, Some(1.2));
    let log = parse_nccl_log(&log_of(&design, &catalog, truth)).unwrap();
    // 8 B: ring LL, 6.6 µs base + 2 × 1 step × 1.2 µs over the bridge.
    assert_eq!(log.rows[0].best().time_us, 9.0);
    let fit = fit_calibration(&design, &catalog, &log, &FitOptions::default()).unwrap();
    let lat = fit.latency_us.expect("a latency is fitted");
    assert_eq!(lat.tech, LinkTech::NvLinkBridge);
    assert_eq!(lat.before, 0.6);
    assert!((lat.after - 1.2).abs() < 0.01, "{lat:?} {:?}", fit.notes);
}

#[test]
fn one_slow_row_does_not_move_the_fitted_latency() {
    let catalog = Catalog::builtin();
    let design = single_dgx(&catalog);
    let mut truth = Calibration::default();
    truth.set(LinkTech::NvLink, Some(0.78), Some(0.9));
    // 32 B takes 5 × 19.204 = 96.02 µs, as a hiccup would (6.6 + 14 × 0.9, and 32 B on one
    // channel: 1.75 × 32 B / 15 GB/s = 3.7 ns).
    let text = log_with_hiccup(&design, &catalog, truth, Bytes(32), 5.0);
    let log = parse_nccl_log(&text).unwrap();
    assert_eq!(log.rows[2].bytes, Bytes(32));
    assert_eq!(log.rows[2].best().time_us, 96.02);
    let fit = fit_calibration(&design, &catalog, &log, &FitOptions::default()).unwrap();
    // Rows are printed to 0.01 µs over 14 steps: 0.0004 µs at most from the other rows.
    let lat = fit.latency_us.unwrap();
    assert!((lat.after - 0.9).abs() < 0.001, "{lat:?} {:?}", fit.notes);
    let eff = fit.efficiency.unwrap();
    assert!((eff.after - 0.78).abs() < 0.002, "{eff:?}");
    // Least squares would have followed the row: it is 76.8 µs over at weight 1/96², against
    // 16 rows of about 20 µs at 1/20² each, so it moves the latency by about
    // 14 × 76.8 / 96² / (14² × 16 / 20²) ≈ 0.016 µs, far beyond the 0.001 above.
    let ls = least_squares_latency(&fit, 14.0);
    assert!((ls - 0.915).abs() < 0.002, "least squares {ls}");
    let slow = &fit.rows[2];
    assert!(slow.latency_bound);
    assert!(
        fit.notes
            .iter()
            .any(|n| n.starts_with(&format!("line {} (32 B): measured 96.02 µs", slow.line))),
        "{:?}",
        fit.notes
    );
}

/// Rows of a public CSV (columns of assets/validation/measured.csv) whose id starts with
/// `prefix`, as an 8-rank all-reduce nccl-tests log: time where the row gives it, else from
/// its busbw. `gpus_per_thread` is the run's nccl-tests `-g` (its header's nGpus).
fn public_log(path: &str, prefix: &str, gpus_per_thread: u32) -> String {
    let mut reader = csv::ReaderBuilder::new()
        .comment(Some(b'#'))
        .from_path(Path::new(env!("CARGO_MANIFEST_DIR")).join(path))
        .unwrap();
    let headers = reader.headers().unwrap().clone();
    let col = |name: &str| headers.iter().position(|h| h == name).unwrap();
    let (id, bytes, busbw, time) = (col("id"), col("bytes"), col("busbw_GBps"), col("time_us"));
    let rows: Vec<(Bytes, f64)> = reader
        .records()
        .map(|r| r.unwrap())
        .filter(|r| r[id].starts_with(prefix))
        .map(|r| {
            let b: u64 = r[bytes].trim().parse().unwrap();
            let t = match r[time].trim().parse::<f64>() {
                Ok(t) => t,
                // busbw = size × 2(n − 1)/n / time, n = 8.
                Err(_) => b as f64 * 1.75 / r[busbw].trim().parse::<f64>().unwrap() / 1e3,
            };
            (Bytes(b), t)
        })
        .collect();
    assert!(rows.len() >= 24, "{prefix}: {} rows", rows.len());
    format_nccl_log(Op::AllReduce, 8, &rows).replace(
        "# nThread 1 nGpus 1 ",
        &format!("# nThread 1 nGpus {gpus_per_thread} "),
    )
}

/// The largest |time error| of the fitted model over rows from `from` to below `to` bytes.
fn worst_between(fit: &CalibrationFit, from: u64, to: u64) -> f64 {
    fit.rows
        .iter()
        .filter(|r| r.bytes.0 >= from && r.bytes.0 < to)
        .map(|r| r.time_error().abs())
        .reduce(f64::max)
        .unwrap()
}

/// After fitting a public 8×H100 log (DGX H100, Azure ND H100 v5), the model reproduces it
/// within 5 % at ≥ 64 MiB and within 15 % from 1 MiB to 64 MiB (the targets).
#[test]
fn public_h100_sweeps_refit_within_the_targets() {
    let catalog = Catalog::builtin();
    let design = single_dgx(&catalog);
    // NVIDIA's sweep ran one process per GPU; Azure's guide runs all_reduce_perf -g 8.
    for (prefix, g) in [("DGXH100-", 1), ("AZ-H100-", 8)] {
        let text = public_log("tests/data/measured-h100-allreduce.csv", prefix, g);
        let log = parse_nccl_log(&text).unwrap();
        let fit = fit_calibration(&design, &catalog, &log, &FitOptions::default()).unwrap();
        let large = fit.max_error_from(64 << 20).unwrap();
        let mid = worst_between(&fit, 1 << 20, 64 << 20);
        assert!(large < 0.05, "{prefix} ≥ 64 MiB: {large}");
        assert!(mid < 0.15, "{prefix} 1–64 MiB: {mid}");
        // 16 MiB alone runs ring LL128 (NVLS 2–8 and ≥ 32 MiB): one row is too few to give
        // LL128 a hop latency of its own.
        assert!(fit.protocol_latencies_us.is_empty(), "{prefix}");
    }
}

fn hgx_a100() -> Design {
    load_design(&Path::new(env!("CARGO_MANIFEST_DIR")).join("assets/validation/hgx-a100.ron"))
        .unwrap()
}

/// On 8×A100 (OCI BM.GPU4.8, public sweep in assets/validation/measured.csv) the steps of
/// mid sizes cost several times NCCL's constants and LL128 moves data slower than its line
/// format allows: one hop latency for all protocols left 4–16 MiB 31–46 % fast. LL's hop
/// latency from the 1–2 MiB rows, LL128's latency and rate share, and Simple's latency
/// bend the curve.
#[test]
fn an_a100_sweep_fits_each_protocol_its_own_hop_latency() {
    let catalog = Catalog::builtin();
    let design = hgx_a100();
    // OCI's tutorial runs all_reduce_perf -g 8.
    let text = public_log("assets/validation/measured.csv", "OCIA100-1N-", 8);
    let log = parse_nccl_log(&text).unwrap();
    let fit = fit_calibration(&design, &catalog, &log, &FitOptions::default()).unwrap();
    let before = fit
        .rows
        .iter()
        .filter(|r| r.bytes.0 >= 4 << 20 && r.bytes.0 <= 16 << 20)
        .map(|r| r.before_time_us / r.measured_time_us - 1.0)
        .reduce(f64::min)
        .unwrap();
    assert!(before < -0.30, "before the fit: {before}");
    // LL128 (4–16 MiB) and Simple (≥ 32 MiB) each get a hop latency well above NCCL's.
    let own = |q: CalibratedProtocol| {
        fit.protocol_latencies_us
            .iter()
            .find(|f| f.protocol == q)
            .unwrap_or_else(|| panic!("{q:?} fitted: {:?}", fit.protocol_latencies_us))
            .value
    };
    let (ll128, simple) = (
        own(CalibratedProtocol::Ll128),
        own(CalibratedProtocol::Simple),
    );
    assert_eq!((ll128.before, simple.before), (1.9, 3.4));
    assert!(
        ll128.after > 5.0 && simple.after > 5.0,
        "{ll128:?} {simple:?}"
    );
    // Three LL128 rows over 4× in size: its rate share is fitted with its latency, below the
    // line format's 120/128.
    let share = fit.ll128_share.expect("LL128's share is fitted");
    assert_eq!(share.before, 120.0 / 128.0);
    assert!(share.after < 0.9 && share.after > 0.5, "{share:?}");
    // Simple's weighted median goes through the 32 MiB row.
    let row = fit.rows.iter().find(|r| r.bytes.0 == 32 << 20).unwrap();
    assert!((row.predicted_time_us - 398.20).abs() < 0.05, "{row:?}");
    assert!(worst_between(&fit, 1 << 20, 64 << 20) < 0.15);

    // Up to 512 KiB the model's times are under the launch floor of one thread driving 8
    // GPUs (8 × 4.2 = 33.6 µs): those 14 rows measure the launches and are left out. LL's
    // hop latency then comes from the two rows above the floor that chose LL (1 and 2 MiB):
    // their weighted median is the 1 MiB row's, 0.6 + (76.71 − 35.92) / 14 = 3.51 µs.
    let ll = fit.latency_us.expect("LL's hop latency from 1 and 2 MiB");
    assert!((ll.after - 3.513).abs() < 0.01, "{ll:?}");
    assert!(fit.rows.iter().all(|r| r.bytes.0 > 512 << 10));
    assert!(
        fit.notes
            .iter()
            .any(|n| n.starts_with("14 row(s) left out")),
        "{:?}",
        fit.notes
    );
    let mut calibrated = design.clone();
    calibrated.calibration = Some(fit.calibration.clone());
    let mut small = log.clone();
    small.rows.retain(|r| r.bytes.0 <= 512 << 10);
    let err = fit_calibration(&design, &catalog, &small, &FitOptions::default()).unwrap_err();
    assert!(
        matches!(err, CalibrateError::AllLaunchBound { floor_us, gpus: 8 } if (floor_us - 33.6).abs() < 1e-9),
        "{err}"
    );
    // The same small rows taken as one process per GPU: a refit keeps no LL128 or Simple
    // figure from the first fit, nor LL128's share, since nothing there measured them.
    let mut small = parse_nccl_log(&public_log(
        "assets/validation/measured.csv",
        "OCIA100-1N-",
        1,
    ))
    .unwrap();
    small.rows.retain(|r| r.bytes.0 <= 512 << 10);
    let refit = fit_calibration(&calibrated, &catalog, &small, &FitOptions::default()).unwrap();
    assert!(refit.protocol_latencies_us.is_empty());
    assert!(refit.ll128_share.is_none());
    assert_eq!(refit.calibration.ll128_share(LinkTech::NvLink), None);
    for q in [CalibratedProtocol::Ll128, CalibratedProtocol::Simple] {
        assert_eq!(
            refit.calibration.protocol_latency_us(LinkTech::NvLink, q),
            None
        );
    }
}

/// Both public 8×A100 sweeps (OCI BM.GPU4.8, Azure ND A100 v4; both all_reduce_perf -g 8)
/// refit within 15 % from 1 to 64 MiB, and within 5 % at ≥ 64 MiB but for one row each,
/// where the measured busbw steps against the sweep: OCI's 64 MiB runs at 199 GB/s, as fast
/// as its 128 MiB (197) and above its 32 MiB (147); Azure's 128 MiB at 174 GB/s, barely
/// above its 64 MiB (167) and far under its 256 MiB (214). No time affine in size (a step
/// latency plus a rate) passes within 5 % of both neighbours and of such a row: for Azure,
/// 64 and 256 MiB within 5 % need a rate of 5.2–8.0 µs/MiB past 128 MiB and 8.5–11.7 before
/// it. Those rows stay within 11 %.
#[test]
fn public_a100_sweeps_refit_within_the_targets_but_one_stepped_row() {
    let catalog = Catalog::builtin();
    let design = hgx_a100();
    for (prefix, stepped) in [("OCIA100-1N-", 64u64 << 20), ("AZA100-", 128 << 20)] {
        let text = public_log("assets/validation/measured.csv", prefix, 8);
        let log = parse_nccl_log(&text).unwrap();
        let fit = fit_calibration(&design, &catalog, &log, &FitOptions::default()).unwrap();
        let mid = worst_between(&fit, 1 << 20, 64 << 20);
        assert!(mid < 0.15, "{prefix} 1–64 MiB: {mid}");
        for r in fit.rows.iter().filter(|r| r.bytes.0 >= 64 << 20) {
            let bound = if r.bytes.0 == stepped { 0.11 } else { 0.05 };
            assert!(r.time_error().abs() < bound, "{prefix} {r:?}");
        }
        assert!(fit.ll128_share.is_some(), "{prefix}");
    }
}

/// A log the model wrote with known LL128 figures on an HGX A100 (ring LL128 at 4, 8 and
/// 16 MiB): the fit recovers LL128's hop latency and rate share, and LL's and Simple's.
#[test]
fn fit_recovers_a_known_ll128_share_from_a_synthetic_log() {
    let catalog = Catalog::builtin();
    let design = hgx_a100();
    let mut truth = Calibration::default();
    truth.set(LinkTech::NvLink, Some(0.78), Some(1.2));
    truth.set_protocol_latency(LinkTech::NvLink, CalibratedProtocol::Ll128, Some(4.0));
    truth.set_protocol_latency(LinkTech::NvLink, CalibratedProtocol::Simple, Some(9.0));
    truth.set_ll128_share(LinkTech::NvLink, Some(0.6));
    let log = parse_nccl_log(&log_of(&design, &catalog, truth)).unwrap();
    let fit = fit_calibration(&design, &catalog, &log, &FitOptions::default()).unwrap();
    let ll128_rows = fit
        .rows
        .iter()
        .filter(|r| r.protocol == Protocol::Ll128)
        .count();
    assert!(ll128_rows >= 3, "{:?}", fit.rows);
    let share = fit.ll128_share.expect("LL128's share is fitted");
    assert!((share.after - 0.6).abs() < 0.005, "{share:?}");
    let ll128 = fit
        .protocol_latencies_us
        .iter()
        .find(|f| f.protocol == CalibratedProtocol::Ll128)
        .unwrap()
        .value;
    assert!((ll128.after - 4.0).abs() < 0.05, "{ll128:?}");
    assert!((fit.latency_us.unwrap().after - 1.2).abs() < 0.005);
    assert!((fit.efficiency.unwrap().after - 0.78).abs() < 0.002);
    let worst = fit.max_error_from(0).unwrap();
    assert!(worst < 0.01, "a perfect log fits at every size: {worst}");
}

/// NCCL's tuner ranks by its own constants: a calibrated hop latency slows ring LL's steps
/// but does not make NCCL switch to NVLS. One DGX H100 at 1 KiB: NCCL's table gives ring LL
/// 6.6 + 14 × 0.6 = 15.0 µs against NVLS's 25 µs, so ring LL runs; with the NVLink hop
/// calibrated to 3 µs it takes 6.6 + 14 × 3 = 48.6 µs (plus 0.013 µs of bandwidth), and the
/// answer says the NVLS it did not pick would be faster.
#[test]
fn a_calibrated_hop_changes_the_time_not_the_choice() {
    let catalog = Catalog::builtin();
    let mut design = single_dgx(&catalog);
    let mut cal = Calibration::default();
    cal.set(LinkTech::NvLink, None, Some(3.0));
    design.calibration = Some(cal);
    let r = railyard::analysis::collective::collective(
        &design,
        &catalog,
        &CollectiveQuery::new(Op::AllReduce, Bytes(1024)),
    )
    .unwrap();
    assert_eq!((r.algorithm, r.protocol), (Algorithm::Ring, Protocol::Ll));
    // 6.6 + 14 × 3.0 µs, and 1 KiB on one of NCCL's channels (30 GB/s, half of it LL data):
    // 1.75 × 1024 B / 15 GB/s = 0.12 µs.
    assert!((r.time_us - 48.72).abs() < 0.01, "{}", r.time_us);
    assert!(r.why.starts_with("NCCL's tuner picks it"), "{}", r.why);
    assert!(
        r.why.contains("nvls/Simple would take 25.0 µs"),
        "{}",
        r.why
    );
}

/// The sidebar's assessment carries what the calibration sets, so the times it shows say
/// they are the calibrated model's ("calibrated", with the fitted figures on hover).
#[test]
fn an_assessment_names_the_calibration_its_times_use() {
    use railyard::analysis::assess::{Question, assess};
    let catalog = Catalog::builtin();
    let mut design = hgx_a100();
    let q = Question::collective(CollectiveQuery::new(Op::AllReduce, Bytes(8 << 20)));
    assert_eq!(assess(&design, &catalog, &q).calibrated, None);
    let mut cal = Calibration::default();
    cal.set_ll128_share(LinkTech::NvLink, Some(0.57));
    cal.source = "azure.log".into();
    design.calibration = Some(cal);
    assert_eq!(
        assess(&design, &catalog, &q).calibrated.as_deref(),
        Some("fitted to azure.log: NVLink LL128 rate 0.570 of Simple's")
    );
}

/// A log says which GPUs ran it: fitted onto a design of other GPUs, the fit says so (an
/// A100 log on an H100 design), and a log of fewer ranks than the design says which GPUs
/// it was held against. The DGX H100 sample names H100s and runs on all 8: neither note.
#[test]
fn a_fit_says_when_the_log_ran_on_other_gpus_or_fewer_of_them() {
    let catalog = Catalog::builtin();
    let design = single_dgx(&catalog);
    let rank = |r: u32, gpu: &str| {
        format!("#  Rank {r:2} Group  0 Pid 1 on h device {r:2} [0x0{r}] {gpu}\n")
    };
    let log_on = |gpu: &str| {
        let mut text = String::from(
            "# Collective test starting: all_reduce_perf\n# nThread 1 nGpus 1 minBytes 1073741824 maxBytes 2147483648 step: 2(factor) \
             warmup iters: 5 iters: 20 agg iters: 1 validation: 1 graph: 0\n#\n# Using devices\n",
        );
        for r in 0..2 {
            text.push_str(&rank(r, gpu));
        }
        text.push_str(
            "#\n#       size         count      type   redop    root     time   algbw   busbw \
             #wrong     time   algbw   busbw #wrong\n\
             #        (B)    (elements)                               (us)  (GB/s)  (GB/s)            \
             (us)  (GB/s)  (GB/s)\n\
             1073741824     268435456     float     sum      -1   5000.0  214.75  214.75      0   \
             5000.0  214.75  214.75      0\n\
             2147483648     536870912     float     sum      -1  10000.0  214.75  214.75      0  \
             10000.0  214.75  214.75      0\n",
        );
        parse_nccl_log(&text).unwrap()
    };
    let a100 = log_on("NVIDIA A100-SXM4-80GB");
    assert_eq!(a100.gpu_names, ["NVIDIA A100-SXM4-80GB"]);
    let fit = fit_calibration(&design, &catalog, &a100, &FitOptions::default()).unwrap();
    let said = |start: &str| fit.notes.iter().any(|n| n.starts_with(start));
    assert!(
        said("the log ran on NVIDIA A100-SXM4-80GB (Ampere), not on the design's GPUs (Hopper)"),
        "{:?}",
        fit.notes
    );
    assert!(
        said("the log has 2 ranks: fitted on the design's first 2 of 8 GPUs"),
        "{:?}",
        fit.notes
    );
    let h100 = log_on("NVIDIA H100 80GB HBM3");
    let fit = fit_calibration(&design, &catalog, &h100, &FitOptions::default()).unwrap();
    assert!(!fit.notes.iter().any(|n| n.starts_with("the log ran on")));

    let sample = parse_nccl_log(&data("dgx-h100-all-reduce.txt")).unwrap();
    let fit = fit_calibration(&design, &catalog, &sample, &FitOptions::default()).unwrap();
    assert!(
        !fit.notes
            .iter()
            .any(|n| n.starts_with("the log ran on") || n.starts_with("the log has")),
        "{:?}",
        fit.notes
    );
}
