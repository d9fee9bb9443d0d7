//! The model against public measurements (`railyard validate`, data in `assets/validation/`):
//! the page `docs/validation.md` is the command's own output, and the systems the model is
//! known to hold on stay within their figures. The issue's targets (median ≤ 10 % on every
//! public set) are not met yet for A100 at mid sizes, two-node RoCE and TCP systems; these bounds keep
//! what holds today from slipping and make any change to the model show in the page.

use std::process::Command;

fn railyard(args: &[&str]) -> String {
    let out = Command::new(env!("CARGO_BIN_EXE_railyard"))
        .args(args)
        .output()
        .expect("runs");
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8(out.stdout).expect("UTF-8")
}

/// `railyard validate --json` over the public sets.
fn public_report() -> serde_json::Value {
    serde_json::from_str(&railyard(&["validate", "--json"])).expect("JSON")
}

/// One part (`summary`, `refit`) of the system with id prefix `prefix`.
fn system_part(report: &serde_json::Value, prefix: &str, part: &str) -> serde_json::Value {
    report["systems"]
        .as_array()
        .expect("systems")
        .iter()
        .find(|s| s["prefix"] == prefix)
        .unwrap_or_else(|| panic!("{prefix}"))[part]
        .clone()
}

/// A number of a report part, NaN when absent (so every bound on it fails).
fn figure(part: &serde_json::Value, key: &str) -> f64 {
    part[key].as_f64().unwrap_or(f64::NAN)
}

/// `railyard validate ROWS --systems LIST --json` with `list` written beside the rows.
fn validate_with_systems(rows: &std::path::Path, list: &str) -> std::process::Output {
    let path = rows.with_file_name("systems.csv");
    std::fs::write(&path, list).expect("writes");
    Command::new(env!("CARGO_BIN_EXE_railyard"))
        .args(["validate", rows.to_str().expect("path"), "--systems"])
        .arg(&path)
        .arg("--json")
        .output()
        .expect("runs")
}

/// The JSON report of a run that succeeded.
fn report_of(out: &std::process::Output) -> serde_json::Value {
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    serde_json::from_slice(&out.stdout).expect("JSON")
}

/// The one-line reason of a run that was refused.
fn refusal_of(out: &std::process::Output) -> String {
    assert!(!out.status.success());
    String::from_utf8_lossy(&out.stderr).into_owned()
}

#[test]
fn the_validation_page_is_the_commands_output() {
    let page = std::fs::read_to_string(
        std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("docs/validation.md"),
    )
    .expect("docs/validation.md");
    assert!(
        page == railyard(&["validate", "--markdown"]),
        "docs/validation.md is stale: regenerate it with \
         `cargo run --release -- validate --markdown > docs/validation.md`"
    );
    // Each uncounted row says why under its table: a glitch of the run by its own figures,
    // a whole system by its reason.
    assert!(page.contains(
        "Not counted (DGXH100-03): it took 4.6× as long as the next size up (64 B in 14.92 µs)"
    ));
    assert!(page.contains(
        "Not counted (every row): the sweep looks trimmed by hand and its source file is not \
         pinned."
    ));
}

/// The page's figure is the command's `--svg`, and it draws every predicted row: one circle
/// on the time panel per row, and on the error panel a circle, or a triangle for a row
/// beyond ±100 % (none now: NVLS forced on two GPUs was +350 % until the model ran the NCCL
/// release the rows name; the plot's own tests draw a triangle).
#[test]
fn the_validation_figure_is_the_commands_output_and_draws_every_row() {
    let figure = std::fs::read_to_string(
        std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("docs/validation.svg"),
    )
    .expect("docs/validation.svg");
    assert!(
        figure == railyard(&["validate", "--svg"]),
        "docs/validation.svg is stale: regenerate it with \
         `cargo run --release -- validate --svg > docs/validation.svg`"
    );
    let report = public_report();
    let rows: usize = report["systems"]
        .as_array()
        .expect("systems")
        .iter()
        .map(|s| s["rows"].as_array().map_or(0, Vec::len))
        .sum();
    assert!(rows > 300, "{rows}");
    assert_eq!(figure.matches(r#"class="row""#).count(), rows);
    let off_scale = figure.matches(r#"class="off-scale""#).count();
    assert_eq!(figure.matches(r#"class="error""#).count() + off_scale, rows);
    assert_eq!(off_scale, 0, "every row within ±100 %");
    assert!(figure.contains(r#"data-label="NC1259-* (2 counted)""#));
    let page = std::fs::read_to_string(
        std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("docs/validation.md"),
    )
    .expect("docs/validation.md");
    assert!(page.contains("](validation.svg)"));
}

#[test]
fn the_public_sets_stay_within_their_figures() {
    let report = public_report();
    let system = |prefix: &str| system_part(&report, prefix, "summary");
    // DGX H100 (NVIDIA's sample sweep): where the model was first built; every row at or above
    // 1 MiB within 15 % (7 % today). Two of its 32 rows took longer than the next size up (32
    // B: 68.1 µs against 64 B's 14.9; 4 KiB: 23.6 against 8 KiB's 17.4) and are set aside as
    // glitches of the run; the other rows below 1 MiB are within 16 % (15 % at 16 B).
    let dgx = system("DGXH100-");
    assert_eq!(figure(&dgx, "rows"), 30.0);
    assert!(figure(&dgx, "median_abs_error") <= 0.10, "{dgx}");
    assert!(figure(&dgx, "max_abs_error_from_1mib") <= 0.15, "{dgx}");
    assert!(figure(&dgx, "max_abs_error_below_1mib") <= 0.16, "{dgx}");
    // From 32 KiB to 256 KiB NCCL runs ring LL on one channel per 32 KiB (512 threads × 8
    // ranks × 8 B), each 30 GB/s, half of it LL data: the bandwidth term stays 1.75 × 32 KiB
    // / 15 GB/s = 3.82 µs on top of 6.6 + 14 × 0.6 = 15.0 µs, where all 24 channels would
    // have taken 0.4–3.3 µs (LL's 141 GB/s); measured 19.3–20.4 µs.
    for row in system_part(&report, "DGXH100-", "rows")
        .as_array()
        .expect("rows")
    {
        let bytes = figure(&row["row"], "bytes");
        if (32768.0..=262_144.0).contains(&bytes) {
            assert!(
                (figure(row, "predicted_time_us") - (15.0 + 1.75 * 32768.0 / 15e3)).abs() < 1e-3,
                "{row}"
            );
        }
    }
    // Azure ND H100 v5, a second source for the same node.
    let azure = system("AZ-H100-");
    assert!(figure(&azure, "median_abs_error") <= 0.10, "{azure}");
    // Two RTX 2080 Ti without peer-to-peer (NCCL's SHM transport through host memory):
    // all-reduce runs both ways over each GPU's link, broadcast and reduce one way; every row
    // at or above 1 MiB within 10 % (8 % today).
    let shm = system("AUTODL2080TI-");
    assert_eq!(figure(&shm, "rows"), 84.0);
    assert!(figure(&shm, "median_abs_error") <= 0.10, "{shm}");
    assert!(figure(&shm, "max_abs_error_from_1mib") <= 0.10, "{shm}");
    // Two RTX 2080 Ti joined by an NVLink bridge, both driven by one process (-g 2): 7.2 µs
    // measured, under the 2 × 4.2 µs launch floor (+17 %; this desktop CPU launches faster).
    let bridge = system("NT44-2080TI-NVL-");
    assert_eq!(figure(&bridge, "rows"), 4.0);
    assert!(
        figure(&bridge, "max_abs_error_below_1mib") <= 0.20,
        "{bridge}"
    );
    // OCI's A100 node, one process driving all 8 GPUs (nccl-tests -g 8): up to 32 KiB the
    // test prints its kernel launches (32 µs), which the launch floor predicts.
    let oci = system("OCIA100-1N-");
    assert_eq!(figure(&oci, "rows"), 28.0);
    assert!(figure(&oci, "median_abs_error") <= 0.10, "{oci}");
    // OCI's two-node run is shown but not counted (its own notes call it noisy).
    let oci_two = system("OCIA100-2N-");
    assert_eq!(figure(&oci_two, "rows"), 0.0);
    // NVLS by GPU count (nccl #1455): busbw quoted for 2-4 GiB on 5 to 8 H100s, 420 to 480
    // GB/s, and ring's 365-370; each within 5 % (2 % today).
    let nvls = system("NC1455-");
    assert_eq!(figure(&nvls, "rows"), 5.0);
    assert!(figure(&nvls, "max_abs_error_from_1mib") <= 0.05, "{nvls}");
    // Two nodes of 8 H20 with NVLSTree forced (nccl #1244, NCCL 2.21.5, as its rows say):
    // 46-48 µs measured against 53.3 µs in 2.21.5's tables, 25 µs of NVLS and twice its 14
    // µs network step (2.30's 20.9 would give 67 µs, +45 %).
    let h20 = system("NC1244-C");
    assert_eq!(figure(&h20, "rows"), 8.0);
    assert!(figure(&h20, "max_abs_error_below_1mib") <= 0.16, "{h20}");
    // NVLS forced on 2 H100s under a CUDA graph (nccl #1259, prebuilt NCCL 2.20.5): that
    // release sets NVLS up only for 3 or more GPUs and runs its ring in its place, ring LL
    // 6.6 + 2 × 0.6 = 7.8 µs against 5.6 and 6.0 µs measured (+40 %, +31 %).
    let nvls2 = system_part(&report, "NC1259-", "rows");
    for row in nvls2.as_array().expect("rows") {
        assert_eq!(row["algorithm"], "ring", "{row}");
        assert_eq!(row["protocol"], "LL", "{row}");
        // Plus the bytes on one of NCCL's channels, 30 GB/s of which LL carries half: a ring
        // of two moves each byte once, 8.5 ns for 128 B and 34 ns for 512 B.
        let bytes = figure(&row["row"], "bytes");
        assert!(
            (figure(row, "predicted_time_us") - (7.8 + bytes / 15e3)).abs() < 1e-3,
            "{row}"
        );
    }
    // Two AWS pairs over EFA (shown, not counted: their tables print no NCCL version).
    // aws-ofi-nccl leaves NCCL only its Simple protocol there, so two p5.48xlarge take NCCL's
    // NVLSTree/Simple latency at small sizes, 25 + 2 × (20.9 + 1.61) = 70.02 µs against 65-75
    // µs measured up to 8 KiB; from 4 GiB the 8 × 400 Gb/s of EFA per node pace it (-7 to -11
    // % today). The p4de pair's rows from 128 MiB to 2 GiB ride its four 100 Gb/s cards
    // (within 10 %). From 1 MiB its tree's pipeline fill (each 1 MiB chunk of the recipe's 8 MiB
    // NCCL_BUFFSIZE forwarded whole across 16 hops) brings it within 33 % (-27 % at 1 MiB,
    // +33 % at 8 MiB); without it, 1-64 MiB took 1.3-2.4 times the model. The p5 pair's
    // 1-64 MiB still take 1.4-1.7 times the model, whose NVLSTree chunks (32-128 KiB) fill
    // little (README, AWS EFA).
    let aws = |prefix: &str, within: &dyn Fn(f64) -> Option<f64>| {
        let rows = system_part(&report, prefix, "rows");
        let rows = rows.as_array().expect("rows");
        assert!(!rows.is_empty(), "{prefix}");
        for row in rows {
            assert_eq!(row["protocol"], "Simple", "{row}");
            let bytes = figure(&row["row"], "bytes");
            if let Some(bound) = within(bytes) {
                let error = figure(row, "predicted_time_us") / figure(&row["row"], "time_us") - 1.0;
                assert!(error.abs() <= bound, "{row}");
            }
        }
    };
    aws("AWSP5-", &|bytes| {
        if bytes <= 8192.0 {
            Some(0.15)
        } else if bytes >= 4294967296.0 {
            Some(0.12)
        } else {
            None
        }
    });
    aws("AWSP4DE-", &|bytes| {
        if bytes >= 134217728.0 {
            Some(0.10)
        } else if bytes >= 1048576.0 {
            Some(0.33)
        } else {
            None
        }
    });
    // One GB200 NVL72 rack (CoreWeave's example, NCCL 2.25.1): with NVLS across all 72 GPUs
    // the model is 19-40 % fast from 512 MiB to 8 GiB (README, where the model is still
    // fast); counted, and held where it stands.
    let nvl72 = system("CWNVL72-");
    assert_eq!(figure(&nvl72, "rows"), 5.0);
    assert!(figure(&nvl72, "max_abs_error_from_1mib") <= 0.41, "{nvl72}");
    // Two H100 PCIe joined by NVLink bridges (nccl #1161, shown, not counted): measured at
    // half the model's 247 GB/s busbw (README, where the model is still fast), held there.
    let bridged = system_part(&report, "NC1161-", "rows");
    let bridged = bridged.as_array().expect("rows");
    assert_eq!(bridged.len(), 3);
    for row in bridged {
        let error = figure(row, "predicted_time_us") / figure(&row["row"], "time_us") - 1.0;
        assert!((-0.54..=-0.52).contains(&error), "{row}");
        assert!(
            (figure(row, "predicted_busbw_gbyte_s") - 247.0).abs() < 1.0,
            "{row}"
        );
    }
    // NCCL 2.4.2's socket regression (nccl #209) is shown, not counted.
    assert_eq!(figure(&system("NC209-242-"), "rows"), 0.0);
    // Everything that counts: the issue's median target (8 % today). Not every row is within
    // its 25 % / 35 % bound yet: A100 at 512 KiB–16 MiB under one thread (up to 53 %), ring
    // LL on two H100s under a CUDA graph (40 %), a whole NVL72 rack at 512 MiB–2 GiB (40 %).
    let all = &report["summary"];
    assert!(figure(all, "rows") >= 200.0, "{all}");
    assert!(figure(all, "median_abs_error") <= 0.10, "{all}");
    assert!(figure(all, "max_abs_error_below_1mib") <= 0.45, "{all}");
}

/// Each public sweep, fitted as a user's own log would be (`calibrate`), then held against
/// its rows: the calibration targets, within 15 % from 1 to 64 MiB and 5 % above. The 8×A100
/// sweeps miss 5 % above 64 MiB on one row each whose measured busbw steps against its
/// neighbours (tests/calibrate.rs says why no fit can pass it); they stay within 11 %.
/// Azure's H100 sweep misses 15 % on two rows of the 42–45 µs plateau its one-thread harness
/// (-g 8) shows from 64 KiB up, above the 33.6 µs launch floor the model takes from a DGX A100
/// host (nccl-tests #123): 2 MiB in 44.8 µs, where NCCL 2.18.5, which the sweep names, puts
/// 23 µs on NVLS (2.30 puts 25) and the model's 37.1 µs kernel sits 16 % under; and 1 MiB in
/// 42.0 µs, which NCCL 2.18's rounded LL chunks (×1.5) lift out of the floor to 34.5 µs, 18 %
/// under. No fitted figure moves a host's launches.
#[test]
fn the_public_sweeps_refit_within_the_calibration_targets() {
    let report = public_report();
    let refit = |prefix: &str| system_part(&report, prefix, "refit");
    for (prefix, mid_bound, large_bound) in [
        ("DGXH100-", 0.15, 0.05),
        ("AZ-H100-", 0.18, 0.05),
        ("AUTODL2080TI-", 0.15, 0.05),
        ("OCIA100-1N-", 0.15, 0.11),
        ("AZA100-", 0.15, 0.11),
    ] {
        let f = refit(prefix);
        assert!(figure(&f, "worst_mid_after") < mid_bound, "{prefix} {f}");
        assert!(
            figure(&f, "worst_large_after") < large_bound,
            "{prefix} {f}"
        );
    }
    // Before the fit the A100 sweeps were 36 % (Azure) and 53 % (OCI) off from 1 to 64 MiB.
    assert!(figure(&refit("AZA100-"), "worst_mid_before") > 0.30);
    assert!(figure(&refit("OCIA100-1N-"), "worst_mid_before") > 0.50);
    // A handful of quoted figures is no sweep: nothing to fit.
    assert!(refit("NC1455-").is_null());
}

#[test]
fn your_own_rows_on_your_design() {
    let dir = tempfile::tempdir().expect("temp dir");
    let rows = dir.path().join("mine.csv");
    // Two rows of NVIDIA's DGX H100 sample sweep (dgxc-benchmarking): 8 B and 8 GiB.
    std::fs::write(
        &rows,
        "id,collective,bytes,time_us,busbw_GBps,notes\n\
         mine-1,all_reduce,8,13.67,0.00,\n\
         mine-2,all_reduce,8589934592,31307,480.16,\n",
    )
    .expect("writes");
    let design =
        std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("assets/validation/dgx-h100.ron");
    let out = railyard(&[
        "validate",
        rows.to_str().expect("path"),
        "--design",
        design.to_str().expect("path"),
        "--json",
    ]);
    let report: serde_json::Value = serde_json::from_str(&out).expect("JSON");
    let predicted = report["systems"][0]["rows"].as_array().expect("rows");
    assert_eq!(predicted.len(), 2);
    // 8 B: ring LL, 6.6 + 14 × 0.6 = 15.0 µs by NCCL's constants, +10 % on 13.67 µs.
    let small = &predicted[0];
    assert_eq!(small["algorithm"], "ring");
    assert!(
        (small["predicted_time_us"].as_f64().expect("time") - 15.0).abs() < 0.1,
        "{small}"
    );
    // 8 GiB: NVLS, within 5 % of the measured 31.3 ms.
    let large = &predicted[1];
    assert_eq!(large["algorithm"], "nvls");
    assert!(
        large["error"].as_f64().expect("error").abs() < 0.05,
        "{large}"
    );
    // The page names the design's kind; only the public sets stand beside designs' times.
    let page = railyard(&[
        "validate",
        rows.to_str().expect("path"),
        "--design",
        design.to_str().expect("path"),
        "--markdown",
    ]);
    assert!(
        page.contains("\nKind: 8 Hopper GPUs on NVSwitch in one node, NCCL.\n"),
        "{page}"
    );
    assert!(!page.contains("draw on"), "{page}");
    let no_design = Command::new(env!("CARGO_BIN_EXE_railyard"))
        .args(["validate", rows.to_str().expect("path")])
        .output()
        .expect("runs");
    assert_eq!(no_design.status.code(), Some(2));
}

#[test]
fn a_systems_list_says_how_the_test_drove_the_gpus() {
    let dir = tempfile::tempdir().expect("temp dir");
    // OCI's A100 node (nccl-tests -g 8): 64 B in 32.01 µs and 8 MiB in 185.8 µs.
    let rows = dir.path().join("oci.csv");
    std::fs::write(
        &rows,
        "id,collective,bytes,time_us,busbw_GBps,notes\n\
         oci-1,all_reduce,64,32.01,,\n\
         oci-2,all_reduce,8388608,185.8,,\n",
    )
    .expect("writes");
    let design =
        std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("assets/validation/hgx-a100.ron");
    let run = |gpus_per_thread: &str| -> serde_json::Value {
        report_of(&validate_with_systems(
            &rows,
            &format!(
                "prefix,design,assumes,not_counted,gpus_per_thread\n\
                 oci-,{},8 A100,,{gpus_per_thread}\n",
                design.display()
            ),
        ))
    };
    let time = |r: &serde_json::Value, i: usize| {
        r["systems"][0]["rows"][i]["predicted_time_us"]
            .as_f64()
            .expect("time")
    };
    // One process per GPU: ring LL on 8 A100s, 6.6 + 14 × 0.6 = 15.0 µs.
    let one = run("1");
    assert!((time(&one, 0) - 15.0).abs() < 0.05, "{one}");
    assert_eq!(one["systems"][0]["rows"][0]["launch_bound"], false);
    // One thread for all 8: the test prints its 8 launches, 8 × 4.2 = 33.6 µs, +5 % on the
    // measured 32.01 µs. 8 MiB takes longer than the launches and keeps the model's time.
    let eight = run("8");
    assert!((time(&eight, 0) - 33.6).abs() < 1e-9, "{eight}");
    assert_eq!(eight["systems"][0]["rows"][0]["launch_bound"], true);
    assert!((time(&eight, 1) - time(&one, 1)).abs() < 1e-9);
    assert!(time(&one, 1) > 33.6);
    // A value that is not a number of GPUs is refused with its line.
    let err = refusal_of(&validate_with_systems(
        &rows,
        &format!(
            "prefix,design,assumes,not_counted,gpus_per_thread\noci-,{},,,eight\n",
            design.display()
        ),
    ));
    assert!(
        err.contains("line 2") && err.contains("gpus_per_thread"),
        "{err}"
    );
}

#[test]
fn a_systems_list_names_the_nccl_release_its_rows_ran() {
    let dir = tempfile::tempdir().expect("temp dir");
    // nccl #1244's two H20 nodes, NVLSTree forced, 8 B in 47.6 µs.
    let rows = dir.path().join("h20.csv");
    std::fs::write(
        &rows,
        "id,collective,bytes,time_us,busbw_GBps,notes\nh20-1,all_reduce,8,47.60,,NCCL_ALGO=NVLSTree\n",
    )
    .expect("writes");
    let design = std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("assets/validation/hgx-h20-2node-ib.ron");
    let run = |release: &str| -> serde_json::Value {
        report_of(&validate_with_systems(
            &rows,
            &format!(
                "prefix,design,assumes,not_counted,gpus_per_thread,cuda_graph,nccl\n\
                 h20-,{},2 x 8 H20,,,,{release}\n",
                design.display()
            ),
        ))
    };
    let time = |r: &serde_json::Value| {
        r["systems"][0]["rows"][0]["predicted_time_us"]
            .as_f64()
            .expect("time")
    };
    // NVLSTree on two nodes crosses the network twice: 2.21.5's step is 14 µs, the modelled
    // 2.30.7's 20.9, so the two differ by exactly 2 × 6.9 µs.
    let old = run("2.21.5");
    let new = run("");
    assert_eq!(old["systems"][0]["nccl"], "2.21.5");
    assert!(new["systems"][0]["nccl"].is_null());
    assert!((time(&new) - time(&old) - 13.8).abs() < 1e-9, "{old} {new}");
    // 2.20.x set NVLS up inside one node only: NVLSTree cannot run, and the ring runs instead.
    let ring = run("2.20.5");
    assert_eq!(ring["systems"][0]["rows"][0]["algorithm"], "ring", "{ring}");
    // A release that is not one is refused with its line.
    let err = refusal_of(&validate_with_systems(
        &rows,
        &format!(
            "prefix,design,assumes,not_counted,gpus_per_thread,cuda_graph,nccl\n\
             h20-,{},,,,,latest\n",
            design.display()
        ),
    ));
    assert!(
        err.contains("line 2") && err.contains("NCCL release"),
        "{err}"
    );
}

#[test]
fn the_text_report_says_its_errors_are_of_time_even_where_rows_show_bandwidth() {
    let text = railyard(&["validate"]);
    assert!(
        text.starts_with(
            "error = predicted time / measured time − 1 (negative: the model is faster; rows \
             quoted in GB/s are compared by the time they imply)"
        ),
        "{}",
        &text[..text.len().min(300)]
    );
    // Azure's rows are quoted in GB/s: the model's higher bandwidth at 64 KiB is a shorter
    // time, so a negative error.
    let row = text
        .lines()
        .find(|l| l.trim_start().starts_with("AZ-H100-07 "))
        .expect("the Azure 64 KiB row");
    assert!(row.contains("GB/s") && row.contains(" -"), "{row}");
}

/// Every published system is of a kind a design can be matched to: a set the checker could not
/// class would silently stop speaking for the systems like it.
#[test]
fn every_public_system_is_classed_for_the_check() {
    use railyard::analysis::accuracy::{InsideNode, SystemClass};
    use railyard::io::validation_sets::{public_rows, published};
    use railyard::model::{Catalog, LinkTech, Transport};
    let catalog = Catalog::builtin();
    let grouped = public_rows().expect("the public sets read");
    let checked = published();
    assert_eq!(checked.sets.len(), grouped.systems.len());
    let class_of = |prefix: &str| -> SystemClass {
        let s = grouped
            .systems
            .iter()
            .find(|s| s.system.prefix == prefix)
            .expect("a public system");
        SystemClass::of(&s.design, &catalog).expect("a class")
    };
    // Eight A100s behind NVSwitch in one node; two V100 VMs on TCP; two RTX 2080 Ti without
    // peer-to-peer; a GB200 NVL72 rack's 72 GPUs in one NVLink domain.
    let a100 = class_of("OCIA100-1N-");
    assert_eq!(
        (a100.inside, a100.network, a100.gpus),
        (InsideNode::NvSwitch, None, 8)
    );
    let tcp = class_of("NC209-");
    assert_eq!(
        (tcp.inside, tcp.network, tcp.gpus),
        (
            InsideNode::None,
            Some((LinkTech::Ethernet, Transport::Tcp)),
            2
        )
    );
    assert_eq!(class_of("AUTODL2080TI-").inside, InsideNode::PcieHostMemory);
    let rack = class_of("CWNVL72-");
    assert_eq!(
        (rack.inside, rack.network, rack.gpus),
        (InsideNode::NvSwitch, None, 72)
    );
}

/// Every public row is predicted on a design or set aside with its reason: the systems list
/// names each set it does not draw and says why, so none falls through as merely unlisted.
#[test]
fn every_public_row_is_predicted_or_set_aside_with_its_reason() {
    use railyard::io::validation_sets::public_rows;
    let grouped = public_rows().expect("the public sets read");
    assert!(grouped.unmatched.is_empty(), "{:?}", grouped.unmatched);
    // 31 + 3 + 4 + 2 + 3 + 11 + 1 + 1 + 2 rows of the nine sets listed without a design.
    assert_eq!(grouped.undrawn.len(), 58);
    let why = |id: &str| {
        grouped
            .undrawn
            .iter()
            .find(|(row, _)| row == id)
            .map(|(_, why)| why.as_str())
            .unwrap_or_else(|| panic!("{id} is set aside"))
    };
    assert!(why("A3MEGA-01").contains("TCPXO"));
    assert!(why("NC527-2N").contains("slow"));
    assert!(why("MLX1784-MPI").contains("MPI"));
    // The set's drawn sibling is still predicted.
    assert!(
        grouped
            .systems
            .iter()
            .any(|s| s.system.prefix == "MLX1784-RING")
    );
    // The text report says why, set by set.
    let text = railyard(&["validate"]);
    assert!(
        text.contains("skipped 4 row(s) of NC527-*: its reporter called the runs slow"),
        "{text}"
    );
    assert!(!text.contains("no system lists them"), "{text}");
}
