//! The command line, run as a user runs it: the built binary, its exit status, its output.
//!
//! The worked example is a star of 4 workstations with 2 RTX 4090 each, each on its
//! on-board 10 GbE port to one 16-port MikroTik switch with an in-rack 10G DAC:
//! 8 GPUs, 4 nodes, 1 switch, 4 links. Any balanced cut puts two nodes on each side, so
//! bisection is 2 × 10 Gb/s = 20 Gb/s, which is also full bisection (half the nodes at
//! their 10 Gb/s injection): ratio 1. Cost is 4 workstations + 8 GPUs + 1 switch + 4 DACs at
//! catalog prices; power likewise.

use railyard::model::Catalog;
use serde_json::Value;
use std::path::{Path, PathBuf};
use std::process::{Command, Output};

fn railyard(args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_railyard"))
        .args(args)
        .output()
        .expect("the railyard binary runs")
}

fn stdout(o: &Output) -> String {
    String::from_utf8_lossy(&o.stdout).into_owned()
}

fn stderr(o: &Output) -> String {
    String::from_utf8_lossy(&o.stderr).into_owned()
}

/// Exit status 2 and exactly one line `railyard: ...` on stderr; returns that line.
fn assert_refused(o: &Output) -> String {
    let err = stderr(o);
    assert_eq!(o.status.code(), Some(2), "stderr: {err}");
    assert_eq!(err.lines().count(), 1, "not one line: {err:?}");
    assert!(err.starts_with("railyard: "), "{err}");
    assert!(!err.contains("panicked"), "{err}");
    err.trim_end().to_string()
}

fn path_str(p: &Path) -> &str {
    p.to_str().expect("temporary paths are UTF-8")
}

const STAR_ARGS: &[&str] = &[
    "generate",
    "star",
    "--nodes",
    "4",
    "--node",
    "workstation",
    "--gpu",
    "rtx-4090",
    "--gpus-per-node",
    "2",
    "--switch",
    "crs317-16x10g",
];

/// Generates the worked-example star into `dir` and returns its path.
fn generate_star(dir: &Path) -> PathBuf {
    let path = dir.join("star.ron");
    let mut args = STAR_ARGS.to_vec();
    args.extend(["-o", path_str(&path)]);
    let o = railyard(&args);
    assert!(o.status.success(), "{}", stderr(&o));
    assert_eq!(
        stderr(&o).trim_end(),
        format!(
            "railyard: wrote {}: 8 GPUs (rtx-4090) in 4 nodes, 1 switch, 4 links",
            path.display()
        )
    );
    path
}

fn eval_json(file: &Path, extra: &[&str]) -> Value {
    let mut args = extra.to_vec();
    args.extend(["eval", path_str(file), "--json"]);
    let o = railyard(&args);
    assert!(o.status.success(), "{}", stderr(&o));
    serde_json::from_str(&stdout(&o)).expect("eval --json prints one JSON object")
}

/// `eval FILE --json` followed by `options` (collective options belong after the command).
fn eval_json_with(file: &Path, options: &[&str]) -> Value {
    let mut args = vec!["eval", path_str(file), "--json"];
    args.extend(options);
    let o = railyard(&args);
    assert!(o.status.success(), "{}", stderr(&o));
    serde_json::from_str(&stdout(&o)).expect("eval --json prints one JSON object")
}

fn price(catalog: &Catalog, id: &str) -> f64 {
    catalog.get_str(id).unwrap().price_usd().0
}

fn power(catalog: &Catalog, id: &str) -> f64 {
    catalog.get_str(id).unwrap().power_w.0
}

fn close(a: f64, b: f64) -> bool {
    (a - b).abs() < 1e-6 * b.abs().max(1.0)
}

#[test]
fn eval_reports_the_worked_star() {
    let dir = tempfile::tempdir().unwrap();
    let star = generate_star(dir.path());
    let j = eval_json(&star, &[]);
    let c = Catalog::builtin();

    assert_eq!(j["gpus"], 8); // 4 nodes × 2 GPUs
    assert_eq!(j["nodes"], 4);
    assert_eq!(j["switches"], 1);
    assert_eq!(j["links"], 4);
    assert_eq!(j["bisection_gbit_s"], 20.0);
    assert_eq!(j["bisection_ratio"], 1.0);

    let nodes = 4.0 * price(&c, "workstation") + 8.0 * price(&c, "rtx-4090");
    let switch = price(&c, "crs317-16x10g");
    // Each on-board 10GBASE-T port: a Cat6a lead into an RJ-45 module in the switch's cage.
    let cables = 4.0 * (price(&c, "cat6a") + price(&c, "sfp-10gbase-t"));
    let total = nodes + switch + cables;
    let cost = &j["cost_usd"];
    assert!(close(cost["total"].as_f64().unwrap(), total), "{cost}");
    assert!(close(cost["nodes"].as_f64().unwrap(), nodes), "{cost}");
    assert!(close(cost["switches"].as_f64().unwrap(), switch), "{cost}");
    assert_eq!(cost["nics"], 0.0); // on-board ports, no NIC parts
    assert!(
        close(cost["cables_optics"].as_f64().unwrap(), cables),
        "{cost}"
    );
    assert!(close(
        j["switch_cost_share"].as_f64().unwrap(),
        switch / total
    ));
    assert!(close(
        j["network_cost_share"].as_f64().unwrap(),
        (switch + cables) / total
    ));
    let watts = 4.0 * power(&c, "workstation")
        + 8.0 * power(&c, "rtx-4090")
        + power(&c, "crs317-16x10g")
        + 4.0 * (power(&c, "cat6a") + power(&c, "sfp-10gbase-t"));
    assert!(
        close(j["power_w"].as_f64().unwrap(), watts),
        "{}",
        j["power_w"]
    );
    assert!(
        j["checks"].as_array().unwrap().is_empty(),
        "{}",
        j["checks"]
    );
}

#[test]
fn eval_table_is_for_people() {
    let dir = tempfile::tempdir().unwrap();
    let star = generate_star(dir.path());
    let o = railyard(&["eval", path_str(&star)]);
    assert!(o.status.success());
    let text = stdout(&o);
    let row = |label: &str| {
        text.lines()
            .find(|l| l.starts_with(label))
            .unwrap_or_else(|| panic!("no `{label}` row in\n{text}"))
            .to_string()
    };
    assert!(row("GPUs").ends_with(" 8"));
    assert!(row("bisection").contains("20 Gb/s per direction, 100 % of full"));
    // The values start in one column.
    let column = |l: String| l.find("  ").map(|i| i + l[i..].find(|c| c != ' ').unwrap());
    assert_eq!(column(row("GPUs")), column(row("switch share")));
}

#[test]
fn bom_rows_add_up_to_the_eval_total() {
    let dir = tempfile::tempdir().unwrap();
    let star = generate_star(dir.path());
    let total = eval_json(&star, &[])["cost_usd"]["total"].as_f64().unwrap();
    let csv_path = dir.path().join("star.csv");
    let o = railyard(&["bom", path_str(&star), "-o", path_str(&csv_path)]);
    assert!(o.status.success(), "{}", stderr(&o));

    let mut reader = csv::Reader::from_path(&csv_path).unwrap();
    let headers = reader.headers().unwrap().clone();
    let col = |name: &str| headers.iter().position(|h| h == name).unwrap();
    let (part, quantity, extended) = (col("part_id"), col("quantity"), col("extended_price_usd"));
    let mut sum = 0.0;
    let mut quantities = Vec::new();
    for row in reader.records() {
        let row = row.unwrap();
        sum += row[extended].parse::<f64>().unwrap();
        quantities.push((row[part].to_string(), row[quantity].parse::<u64>().unwrap()));
    }
    assert!(
        (sum - total).abs() < 0.005,
        "CSV sums to {sum}, eval says {total}"
    );
    quantities.sort();
    assert_eq!(
        quantities,
        vec![
            ("cat6a".to_string(), 4),
            ("crs317-16x10g".to_string(), 1),
            ("rtx-4090".to_string(), 8),
            ("sfp-10gbase-t".to_string(), 4),
            ("workstation".to_string(), 4),
        ]
    );

    // Without -o, or with `-o -`, the same CSV goes to standard output.
    let o = railyard(&["bom", path_str(&star)]);
    assert!(o.status.success());
    assert_eq!(o.stdout, std::fs::read(&csv_path).unwrap());
    let o = railyard(&["bom", path_str(&star), "-o", "-"]);
    assert!(o.status.success());
    assert_eq!(o.stdout, std::fs::read(&csv_path).unwrap());
}

#[test]
fn a_user_catalog_overrides_built_in_prices() {
    let dir = tempfile::tempdir().unwrap();
    let star = generate_star(dir.path());
    let base = eval_json(&star, &[])["cost_usd"]["total"].as_f64().unwrap();
    let user = dir.path().join("mine.ron");
    std::fs::write(
        &user,
        r#"(version: 1, parts: [(
            id: "crs317-16x10g", vendor: "MikroTik", model: "CRS317 (our price)",
            price: Some((usd: 1000.0, date: "2026-01", source: "our quote")),
            power_w: 20.0,
            spec: Switch((family: Ethernet, ports: 16, port_gbit_s: 10.0)),
        )])"#,
    )
    .unwrap();
    let j = eval_json(&star, &["--catalog", path_str(&user)]);
    let listed = price(&Catalog::builtin(), "crs317-16x10g");
    assert!(close(
        j["cost_usd"]["total"].as_f64().unwrap(),
        base - listed + 1000.0
    ));
    assert_eq!(j["cost_usd"]["switches"], 1000.0);

    // A broken user catalog is refused, naming it.
    std::fs::write(&user, "(version: 1, parts: [(id: ").unwrap();
    let o = railyard(&["--catalog", path_str(&user), "catalog"]);
    assert!(assert_refused(&o).contains("mine.ron:1:"));
    // The designer reads it too: a broken one is refused before any window opens.
    let o = railyard(&["--catalog", path_str(&user)]);
    assert!(assert_refused(&o).contains("mine.ron:1:"));
}

/// `catalog --ron` writes a catalog file that reads back as the very catalog it came from
/// (every part, every figure), so a user can start their own from any part of it; `--part`
/// picks parts, and an unknown one is refused.
#[test]
fn catalog_ron_reads_back_as_the_same_parts() {
    let o = railyard(&["catalog", "--ron"]);
    assert!(o.status.success(), "{}", stderr(&o));
    let back = Catalog::parse(&stdout(&o), "stdout").expect("it reads back");
    assert_eq!(back, Catalog::builtin());
    let o = railyard(&["catalog", "--ron", "--part", "rtx-6000-ada"]);
    let one = Catalog::parse(&stdout(&o), "stdout").expect("it reads back");
    assert_eq!(one.parts().count(), 1);
    assert_eq!(
        one.get_str("rtx-6000-ada"),
        Catalog::builtin().get_str("rtx-6000-ada")
    );
    let o = railyard(&["catalog", "--part", "l40"]);
    assert!(assert_refused(&o).contains("unknown part `l40`"));
    // JSON carries each part's specification.
    let o = railyard(&["catalog", "--json", "--part", "rtx-6000-ada"]);
    let json: serde_json::Value = serde_json::from_str(&stdout(&o)).expect("JSON");
    assert_eq!(json[0]["spec"]["Gpu"]["memory_gb"], 48.0);
}

#[test]
fn generate_to_stdout_writes_a_loadable_design() {
    let o = railyard(&["generate", "ring", "--nodes", "3", "-o", "-"]);
    assert!(o.status.success(), "{}", stderr(&o));
    let design = railyard::io::parse_design(&stdout(&o), "stdout").unwrap();
    assert_eq!(design.node_count(), 3);
    // A ring of three closes: three links.
    assert_eq!(design.links.len(), 3);
}

#[test]
fn catalog_lists_every_part() {
    let builtin = Catalog::builtin();
    let o = railyard(&["catalog", "--json"]);
    assert!(o.status.success());
    let parts: Vec<Value> = serde_json::from_str(&stdout(&o)).unwrap();
    assert_eq!(parts.len(), builtin.len());
    let h100 = parts.iter().find(|p| p["id"] == "h100-sxm").unwrap();
    assert_eq!(h100["category"], "GPU");
    assert_eq!(
        h100["price_usd"].as_f64(),
        Some(price(&builtin, "h100-sxm"))
    );

    let o = railyard(&["catalog"]);
    let text = stdout(&o);
    let mut lines = text.lines();
    let header: Vec<&str> = lines.next().unwrap().split_whitespace().collect();
    assert_eq!(
        header,
        ["id", "category", "model", "price", "power", "estimate"]
    );
    assert_eq!(lines.count(), builtin.len());
}

#[test]
fn bad_arguments_exit_2_with_one_line() {
    let cases: &[&[&str]] = &[
        &["--no-such-flag"],
        &["generate", "star"],                 // no -o
        &["generate", "torus", "-o", "x.ron"], // no such template
        &["generate", "fat-tree", "--tiers", "4", "-o", "x.ron"],
        &["generate", "star", "--pcie-gen", "2", "-o", "x.ron"],
        &[
            "generate",
            "star",
            "--oversubscription",
            "NaN",
            "-o",
            "x.ron",
        ],
        &["eval"], // no file
        &["bom", "a.ron", "b.ron"],
    ];
    for args in cases {
        let o = railyard(args);
        let line = assert_refused(&o);
        assert!(line.ends_with("(see railyard --help)"), "{args:?}: {line}");
    }
}

#[test]
fn too_many_nodes_are_refused_with_the_limit() {
    let o = railyard(&["generate", "star", "--nodes", "5000000", "-o", "x.ron"]);
    assert!(assert_refused(&o).contains("over the limit of 262,144 nodes"));
    // 250,000 nodes pass the node limit, but at 64 GPUs each exceed 2,000,000 GPUs.
    let o = railyard(&[
        "generate",
        "star",
        "--nodes",
        "250000",
        "--gpus-per-node",
        "64",
        "-o",
        "x.ron",
    ]);
    assert_eq!(
        assert_refused(&o),
        "railyard: 250,000 nodes × 64 GPUs is 16,000,000 GPUs, over the limit of 2,000,000 per design"
    );
    assert!(!Path::new("x.ron").exists());
}

#[test]
fn a_template_that_cannot_be_built_says_why() {
    let o = railyard(&["generate", "star", "--node", "no-such-node", "-o", "-"]);
    let line = assert_refused(&o);
    assert!(line.contains("cannot build `star`"), "{line}");
    assert!(line.contains("no-such-node"), "{line}");
}

#[test]
fn help_and_version_succeed() {
    let o = railyard(&["--help"]);
    assert_eq!(o.status.code(), Some(0));
    assert!(stdout(&o).contains("generate"));
    let o = railyard(&["--version"]);
    assert_eq!(o.status.code(), Some(0));
    assert_eq!(
        stdout(&o).trim(),
        format!("railyard {}", env!("CARGO_PKG_VERSION"))
    );
}

#[test]
fn a_missing_file_exits_2() {
    let o = railyard(&["eval", "/nonexistent/design.ron"]);
    let line = assert_refused(&o);
    assert_eq!(
        line,
        "railyard: /nonexistent/design.ron: no such file or folder"
    );
    let o = railyard(&["bom", "/nonexistent/design.ron"]);
    assert_refused(&o);
}

#[test]
fn a_malformed_file_exits_2_with_its_position() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("broken.ron");
    // The stray `@` is on line 3, column 11.
    std::fs::write(&path, "(\n  version: 1,\n  design: @,\n)\n").unwrap();
    for command in ["eval", "bom"] {
        let o = railyard(&[command, path_str(&path)]);
        let line = assert_refused(&o);
        let expected = format!("railyard: {}:3:", path.display());
        assert!(line.starts_with(&expected), "{line}");
        let column: usize = line[expected.len()..]
            .split(':')
            .next()
            .unwrap()
            .parse()
            .unwrap();
        // ron points at the value or at the blank before it.
        assert!((10..=11).contains(&column), "{line}");
    }
}

#[test]
fn a_structurally_broken_file_exits_2() {
    let bad = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/bad_files/self_loop.ron");
    let o = railyard(&["eval", path_str(&bad), "--json"]);
    let line = assert_refused(&o);
    assert!(
        line.ends_with("self_loop.ron: link l0 connects device d0 to itself"),
        "{line}"
    );
    assert!(o.stdout.is_empty());
}

/// Two workstations with 2 RTX 4090 each on one 10 GbE switch: 4 GPUs.
fn generate_pair(dir: &Path) -> PathBuf {
    let path = dir.join("pair.ron");
    let o = railyard(&[
        "generate",
        "star",
        "--nodes",
        "2",
        "--node",
        "workstation",
        "--gpu",
        "rtx-4090",
        "--gpus-per-node",
        "2",
        "--switch",
        "crs317-16x10g",
        "-o",
        path_str(&path),
    ]);
    assert!(o.status.success(), "{}", stderr(&o));
    path
}

fn f64_of(v: &Value) -> f64 {
    v.as_f64().unwrap_or_else(|| panic!("not a number: {v}"))
}

#[test]
fn eval_json_has_the_collective_in_nccl_tests_terms() {
    let dir = tempfile::tempdir().unwrap();
    let pair = generate_pair(dir.path());
    let j = eval_json(&pair, &[]);
    let c = &j["collective"];
    assert_eq!(c["op"], "all-reduce");
    assert_eq!(c["bytes"], 1u64 << 30); // default 1 GiB
    // 2 nodes × 2 GPUs.
    assert_eq!(c["gpus"], 4);
    assert_eq!(j["gpus"], 4);
    let (algbw, busbw, time_us) = (
        f64_of(&c["algbw_gbyte_s"]),
        f64_of(&c["busbw_gbyte_s"]),
        f64_of(&c["time_us"]),
    );
    // algbw = size / time: 2^30 B over time_us µs, in GB/s (10^9 B/s).
    assert!(close(algbw, 1073741824.0 / (time_us * 1e3)), "{c}");
    // busbw = algbw × 2(n−1)/n with n = 4: × 1.5.
    assert!(close(busbw, algbw * 1.5), "{c}");
    // The whole buffer crosses each node's 10 Gb/s (1.25 GB/s) port at least once each way,
    // as TCP at 1448 of every 1538 bytes on the wire: algbw stays below 1.177 GB/s.
    assert!(algbw > 0.0 && algbw <= 1.25 * 1448.0 / 1538.0, "{c}");
    let bottleneck = c["bottleneck"].as_array().unwrap();
    assert!(!bottleneck.is_empty());
    let busy: Vec<f64> = bottleneck
        .iter()
        .map(|b| f64_of(&b["utilization"]))
        .collect();
    assert!(busy[0] > 0.0 && busy[0] <= 1.0 + 1e-9, "{busy:?}");
    assert!(
        busy.windows(2).all(|w| w[0] >= w[1]),
        "busiest first: {busy:?}"
    );
    assert!(bottleneck[0]["link"].as_str().is_some());
    assert!(j["advice"].is_array());
    assert!(j.get("collective_error").is_none());

    // all-gather of 64 KiB: busbw = algbw × (n−1)/n = × 0.75.
    let j = eval_json_with(&pair, &["--op", "all-gather", "--bytes", "64K"]);
    let c = &j["collective"];
    assert_eq!(c["op"], "all-gather");
    assert_eq!(c["bytes"], 65536);
    assert!(close(
        f64_of(&c["busbw_gbyte_s"]),
        f64_of(&c["algbw_gbyte_s"]) * 0.75
    ));

    // Only the first 2 GPUs (one node): n = 2, × 1.
    let j = eval_json_with(&pair, &["--gpus", "2", "--bytes", "8GiB"]);
    let c = &j["collective"];
    assert_eq!(c["gpus"], 2);
    assert_eq!(c["bytes"], 8u64 << 30);
    assert!(close(
        f64_of(&c["busbw_gbyte_s"]),
        f64_of(&c["algbw_gbyte_s"])
    ));
}

#[test]
fn a_single_gpu_has_no_collective_but_still_evaluates() {
    let dir = tempfile::tempdir().unwrap();
    let one = dir.path().join("one.ron");
    let o = railyard(&[
        "generate",
        "single",
        "--node",
        "workstation",
        "--gpu",
        "rtx-4090",
        "--gpus-per-node",
        "1",
        "-o",
        path_str(&one),
    ]);
    assert!(o.status.success(), "{}", stderr(&o));
    let j = eval_json(&one, &[]);
    assert!(j["collective"].is_null());
    assert!(
        j["collective_error"]
            .as_str()
            .unwrap()
            .contains("at least 2 GPUs")
    );
    assert_eq!(j["gpus"], 1);

    // The table says so too, and sweep, having nothing to print, refuses.
    let o = railyard(&["eval", path_str(&one)]);
    assert!(o.status.success());
    assert!(stdout(&o).contains("at least 2 GPUs"));
    let o = railyard(&["sweep", path_str(&one)]);
    assert!(assert_refused(&o).contains("at least 2 GPUs"));
}

#[test]
fn eval_table_shows_the_collective_and_advice() {
    let dir = tempfile::tempdir().unwrap();
    let pair = generate_pair(dir.path());
    let o = railyard(&["eval", path_str(&pair)]);
    assert!(o.status.success());
    let text = stdout(&o);
    let collective = text
        .lines()
        .find(|l| l.starts_with("collective"))
        .unwrap_or_else(|| panic!("no collective row in\n{text}"));
    assert!(
        collective.contains("all-reduce of 1 GiB on 4 GPUs"),
        "{collective}"
    );
    for label in ["  time", "  algbw", "  busbw", "advice"] {
        assert!(
            text.lines().any(|l| l.starts_with(label)),
            "{label}\n{text}"
        );
    }
}

#[test]
fn sweep_runs_from_8_bytes_to_8_gib() {
    let dir = tempfile::tempdir().unwrap();
    let pair = generate_pair(dir.path());
    let o = railyard(&["sweep", path_str(&pair)]);
    assert!(o.status.success(), "{}", stderr(&o));
    let text = stdout(&o);
    let rows: Vec<Vec<&str>> = text
        .lines()
        .filter(|l| !l.starts_with('#'))
        .map(|l| l.split_whitespace().collect())
        .collect();
    assert_eq!(rows.len(), 31, "{text}");
    for (k, row) in (3..=33).zip(&rows) {
        let size: u64 = row[0].parse().unwrap();
        assert_eq!(size, 1u64 << k);
        // count of float32 elements
        assert_eq!(row[1].parse::<u64>().unwrap(), size / 4);
        let (algbw, busbw): (f64, f64) = (row[3].parse().unwrap(), row[4].parse().unwrap());
        // Printed with 2 decimals: busbw = 1.5 × algbw to within rounding.
        assert!((busbw - 1.5 * algbw).abs() <= 0.011, "{row:?}");
    }

    let o = railyard(&["sweep", path_str(&pair), "--json", "--op", "all-to-all"]);
    assert!(o.status.success(), "{}", stderr(&o));
    let report: Value = serde_json::from_str(&stdout(&o)).unwrap();
    // What every row assumes, once, as `eval --json` gives it for one size.
    assert_eq!(report["op"], "all-to-all");
    assert_eq!(report["gpus"], 4);
    assert_eq!(report["library"], "nccl");
    assert!(
        report["assumes"]
            .as_str()
            .is_some_and(|a| a.contains("one process per GPU")),
        "{report}"
    );
    let rows = report["rows"].as_array().expect("rows");
    assert_eq!(rows.len(), 31);
    assert_eq!(rows[0]["bytes"], 8);
    assert_eq!(rows[30]["bytes"], 8u64 << 30);
    for row in rows {
        assert!(row["why"].as_str().is_some_and(|w| !w.is_empty()), "{row}");
        // all-to-all: × (n−1)/n = 0.75
        assert!(close(
            f64_of(&row["busbw_gbyte_s"]),
            0.75 * f64_of(&row["algbw_gbyte_s"])
        ));
        // nccl-tests prints one rank's count for all-to-all: 8 GiB / 4 bytes / 4 ranks.
        let bytes = row["bytes"].as_u64().unwrap();
        assert_eq!(row["count"].as_u64().unwrap(), bytes / 4 / 4);
    }
    assert_eq!(rows[30]["count"], 536_870_912);
}

#[test]
fn bad_collective_options_exit_2_with_one_line() {
    let dir = tempfile::tempdir().unwrap();
    let pair = generate_pair(dir.path());
    let file = path_str(&pair);
    let cases: &[&[&str]] = &[
        &["eval", file, "--json", "--bytes", "1.5M"],
        &["eval", file, "--bytes", "-3"],
        &["eval", file, "--bytes", "0"],
        &["eval", file, "--bytes", "99999999999T"],
        &["eval", file, "--op", "all-shuffle"],
        &["eval", file, "--algo", "butterfly"],
        &["eval", file, "--routing", "random"],
        &["eval", file, "--gpus", "0"],
        &["sweep", file, "--op", "gather"],
        &["sweep", file, "--bytes", "8"], // sweep has no --bytes
    ];
    for args in cases {
        let o = railyard(args);
        let line = assert_refused(&o);
        assert!(line.ends_with("(see railyard --help)"), "{args:?}: {line}");
        assert!(o.stdout.is_empty(), "{args:?}");
    }
}

fn preset(name: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("presets")
        .join(name)
}

/// A preset with SHARP set up (`sharp_enabled: true`, which NCCL and railyard leave off), in
/// `dir`: its switches that can reduce in the network then do.
fn preset_with_sharp(dir: &Path, name: &str) -> PathBuf {
    let text = std::fs::read_to_string(preset(name)).expect("the preset");
    let text = text.replacen("design: (", "design: (\n    sharp_enabled: true,", 1);
    let path = dir.join(name);
    std::fs::write(&path, text).expect("writes");
    path
}

/// Reads a BOM CSV: (part id, quantity, extended price) per row, from the named price column.
fn read_bom(path: &Path, extended_column: &str) -> Vec<(String, u64, f64)> {
    let mut reader = csv::Reader::from_path(path).unwrap();
    let headers = reader.headers().unwrap().clone();
    let col = |name: &str| {
        headers
            .iter()
            .position(|h| h == name)
            .unwrap_or_else(|| panic!("no {name} column in {headers:?}"))
    };
    let (part, quantity, extended) = (col("part_id"), col("quantity"), col(extended_column));
    reader
        .records()
        .map(|row| {
            let row = row.unwrap();
            (
                row[part].to_string(),
                row[quantity].parse().unwrap(),
                row[extended].parse().unwrap(),
            )
        })
        .collect()
}

#[test]
fn bom_discount_and_currency_apply_to_every_row() {
    let dir = tempfile::tempdir().unwrap();
    let design = preset("hgx-h100-x4-roce.ron");
    let total = f64_of(&eval_json(&design, &[])["cost_usd"]["total"]);
    assert!(total > 0.0);

    let list = dir.path().join("list.csv");
    let o = railyard(&["bom", path_str(&design), "-o", path_str(&list)]);
    assert!(o.status.success(), "{}", stderr(&o));
    let rows = read_bom(&list, "extended_price_usd");
    // One row per distinct part.
    let mut parts: Vec<&str> = rows.iter().map(|(p, _, _)| p.as_str()).collect();
    parts.sort_unstable();
    parts.dedup();
    assert_eq!(parts.len(), rows.len(), "{rows:?}");
    assert!(
        rows.len() >= 4,
        "nodes, NICs, switches and cables at least: {rows:?}"
    );
    let sum: f64 = rows.iter().map(|(_, _, x)| x).sum();
    assert!((sum - total).abs() < 0.005, "CSV {sum}, eval {total}");

    // 15 % off, labelled EUR: every row's price is 0.85 × list; each unit price is rounded to
    // the cent, so the sum is within half a cent per unit of 0.85 × total.
    let cut = dir.path().join("cut.csv");
    let o = railyard(&[
        "bom",
        path_str(&design),
        "-o",
        path_str(&cut),
        "--currency",
        "EUR",
        "--discount",
        "0.15",
    ]);
    assert!(o.status.success(), "{}", stderr(&o));
    // The label is not a conversion, and the message says so; the total reads as an amount.
    assert!(
        stderr(&o)
            .split(" EUR total")
            .next()
            .and_then(|head| head.rsplit(' ').next())
            .is_some_and(|amount| amount.contains(',')),
        "{}",
        stderr(&o)
    );
    assert!(
        stderr(&o).ends_with(" EUR total (the catalog's USD prices less 15 %, not converted)\n"),
        "{}",
        stderr(&o)
    );
    let discounted = read_bom(&cut, "extended_price_eur");
    assert_eq!(discounted.len(), rows.len());
    let units: u64 = discounted.iter().map(|(_, q, _)| q).sum();
    let sum: f64 = discounted.iter().map(|(_, _, x)| x).sum();
    assert!(
        (sum - 0.85 * total).abs() <= 0.005 * units as f64 + 1e-6,
        "CSV {sum}, expected {}",
        0.85 * total
    );
    for ((part, q, list_price), (part2, q2, cut_price)) in rows.iter().zip(&discounted) {
        assert_eq!((part, q), (part2, q2));
        assert!((cut_price - 0.85 * list_price).abs() <= 0.005 * *q as f64 + 1e-6);
    }

    // A full discount makes everything free.
    let free = dir.path().join("free.csv");
    let o = railyard(&[
        "bom",
        path_str(&design),
        "-o",
        path_str(&free),
        "--discount",
        "1",
    ]);
    assert!(o.status.success());
    assert!(
        read_bom(&free, "extended_price_usd")
            .iter()
            .all(|r| r.2 == 0.0)
    );

    for bad in ["1.5", "-0.1", "NaN", "15%"] {
        let option = format!("--discount={bad}");
        let o = railyard(&["bom", path_str(&design), &option]);
        assert!(assert_refused(&o).contains("fraction"), "{bad}");
    }
}

/// One row of `compare --csv`: key, raw values per scenario, deltas per scenario.
type CompareRow = (String, Vec<Option<f64>>, Vec<Option<f64>>);

fn compare_csv(args: &[&str]) -> Vec<CompareRow> {
    let mut all = vec!["compare"];
    all.extend(args);
    all.push("--csv");
    let o = railyard(&all);
    assert!(o.status.success(), "{}", stderr(&o));
    let text = stdout(&o);
    let mut reader = csv::Reader::from_reader(text.as_bytes());
    let scenarios = (reader.headers().unwrap().len() - 3) / 2;
    let number = |s: &str| (!s.is_empty()).then(|| s.parse::<f64>().unwrap());
    reader
        .records()
        .map(|r| {
            let r = r.unwrap();
            let values = (0..scenarios).map(|i| number(&r[3 + i])).collect();
            let deltas = (0..scenarios)
                .map(|i| number(&r[3 + scenarios + i]))
                .collect();
            (r[0].to_string(), values, deltas)
        })
        .collect()
}

/// `--routing adaptive` times every design as `eval --routing adaptive` does: on the 3:1 fat
/// tree the collisions of static routing go (16.92 → 9.06 ms, as its advice says), on the
/// rail-optimized unit nothing changes (no flow crosses a spine).
#[test]
fn compare_and_report_take_the_routing() {
    let tree = preset("dgx-h100-fat-tree-3to1.ron");
    let su = preset("dgx-h100-superpod-su.ron");
    let time = |rows: &[CompareRow], col: usize| {
        rows.iter().find(|r| r.0 == "all_reduce_time_us").unwrap().1[col].unwrap()
    };
    let hashed = compare_csv(&[path_str(&tree), path_str(&su)]);
    let adaptive = compare_csv(&[path_str(&tree), path_str(&su), "--routing", "adaptive"]);
    for (col, file) in [tree.as_path(), su.as_path()].into_iter().enumerate() {
        for (rows, routing) in [(&hashed, "ecmp"), (&adaptive, "adaptive")] {
            let e = eval_json_with(file, &["--routing", routing]);
            assert!(close(time(rows, col), f64_of(&e["collective"]["time_us"])));
        }
    }
    assert!((time(&hashed, 0) / 1000.0 - 16.92).abs() < 0.005);
    assert!((time(&adaptive, 0) / 1000.0 - 9.06).abs() < 0.005);
    assert!(close(time(&hashed, 1), time(&adaptive, 1)));
    let o = railyard(&[
        "compare",
        path_str(&tree),
        path_str(&su),
        "--routing",
        "adaptive",
    ]);
    assert!(
        stdout(&o).contains("under adaptive routing"),
        "{}",
        stdout(&o)
    );

    let o = railyard(&[
        "report",
        path_str(&tree),
        "--model",
        "8",
        "--routing",
        "adaptive",
        "-o",
        "-",
    ]);
    assert!(o.status.success(), "{}", stderr(&o));
    assert!(stdout(&o).contains("adaptive routing."), "{}", stdout(&o));
}

#[test]
fn compare_shows_what_eval_says_for_each_design() {
    let a = preset("rtx4090-pair-25gbe.ron");
    let b = preset("hgx-h100-x4-roce.ron");
    let rows = compare_csv(&[path_str(&a), path_str(&b), "--bytes", "64M"]);
    let keys: Vec<&str> = rows.iter().map(|r| r.0.as_str()).collect();
    assert_eq!(
        keys,
        [
            "gpus",
            "switches",
            "links",
            "bisection_gbit_s",
            "bisection_ratio",
            "total_cost_usd",
            "cost_per_gpu_usd",
            "switch_cost_share",
            "network_cost_share",
            "power_w",
            "all_reduce_time_us",
            "all_reduce_busbw_gbyte_s",
            "all_to_all_time_us",
            "check_errors",
            "advice_items",
        ]
    );
    let row = |key: &str| rows.iter().find(|r| r.0 == key).unwrap();
    for (col, file) in [a.as_path(), b.as_path()].into_iter().enumerate() {
        let e = eval_json_with(file, &["--bytes", "64M"]);
        let a2a = eval_json_with(file, &["--bytes", "64M", "--op", "all-to-all"]);
        let total = f64_of(&e["cost_usd"]["total"]);
        let gpus = f64_of(&e["gpus"]);
        let expected = [
            ("gpus", gpus),
            ("switches", f64_of(&e["switches"])),
            ("links", f64_of(&e["links"])),
            ("bisection_gbit_s", f64_of(&e["bisection_gbit_s"])),
            ("bisection_ratio", f64_of(&e["bisection_ratio"])),
            ("total_cost_usd", total),
            ("cost_per_gpu_usd", total / gpus),
            ("switch_cost_share", f64_of(&e["switch_cost_share"])),
            ("network_cost_share", f64_of(&e["network_cost_share"])),
            ("power_w", f64_of(&e["power_w"])),
            ("all_reduce_time_us", f64_of(&e["collective"]["time_us"])),
            (
                "all_reduce_busbw_gbyte_s",
                f64_of(&e["collective"]["busbw_gbyte_s"]),
            ),
            ("all_to_all_time_us", f64_of(&a2a["collective"]["time_us"])),
            (
                "check_errors",
                e["checks"]
                    .as_array()
                    .unwrap()
                    .iter()
                    .filter(|c| c["severity"] == "error")
                    .count() as f64,
            ),
            ("advice_items", e["advice"].as_array().unwrap().len() as f64),
        ];
        for (key, want) in expected {
            let got = row(key).1[col].unwrap_or_else(|| panic!("{key} undefined"));
            assert!(
                close(got, want),
                "{key} of {}: {got} vs eval {want}",
                file.display()
            );
        }
    }
    // Deltas against the first file: none for it, (b − a) / a for the second, and b − a
    // (points) for the shares and ratios.
    let fractions = ["bisection_ratio", "switch_cost_share", "network_cost_share"];
    for (key, values, deltas) in &rows {
        assert_eq!(deltas[0], None, "{key}");
        if let (Some(x), Some(y)) = (values[0], values[1]) {
            if fractions.contains(&key.as_str()) {
                assert!(close(deltas[1].unwrap(), y - x), "{key}");
            } else if x != 0.0 {
                assert!(close(deltas[1].unwrap(), (y - x) / x), "{key}");
            }
        }
    }
    // 8 GPUs against 32: +300 %.
    assert_eq!(row("gpus").1, [Some(8.0), Some(32.0)]);
    assert_eq!(row("gpus").2, [None, Some(3.0)]);

    // The second file as baseline: the first one's GPU delta is (8 − 32) / 32.
    let rows = compare_csv(&[path_str(&a), path_str(&b), "--baseline", "2"]);
    assert_eq!(rows[0].2, [Some(-0.75), None]);
}

#[test]
fn compare_weighs_each_design_against_a_workload() {
    // Llama 70B on the rail-optimized SuperPOD unit and on the 3:1 fat-tree: a row of each
    // design's communication per step, as `workload` computes it, and its excess over the
    // ideal network; the advice count includes the workload's findings.
    let (a, b) = (
        preset("dgx-h100-superpod-su.ron"),
        preset("dgx-h100-fat-tree-3to1.ron"),
    );
    let rows = compare_csv(&[path_str(&a), path_str(&b), "--model", "70"]);
    let row = |key: &str| {
        rows.iter()
            .find(|r| r.0 == key)
            .unwrap_or_else(|| panic!("no row {key}"))
            .clone()
    };
    let step = row("workload_step_us");
    let over = row("workload_over_ideal");
    for (i, file) in [&a, &b].into_iter().enumerate() {
        let w = workload_json(file, &["--model", "70"]);
        let (total, ideal) = (f64_of(&w["total_us"]), f64_of(&w["ideal_total_us"]));
        assert!(close(step.1[i].expect("a step time"), total));
        assert!(close(over.1[i].expect("an excess"), total / ideal - 1.0));
        let advice = row("advice_items").1[i].expect("a count");
        assert_eq!(advice, w["advice"].as_array().map_or(0, Vec::len) as f64);
    }
    // The oversubscribed fabric's step is slower than the non-blocking one's.
    assert!(step.2[1].is_some_and(|d| d > 0.0), "{step:?}");
    // Without a model, no workload rows; serving without a model is refused.
    let plain = compare_csv(&[path_str(&a), path_str(&b)]);
    assert!(!plain.iter().any(|r| r.0.starts_with("workload")));
    assert_refused(&railyard(&[
        "compare",
        path_str(&a),
        path_str(&b),
        "--serving",
    ]));
}

/// With a workload, the note on different GPU counts says the step is still one job: the
/// same global batch on each design's GPUs.
#[test]
fn compare_says_a_step_is_the_same_job_on_different_gpu_counts() {
    let a = preset("rtx4090-pair-25gbe.ron");
    let b = preset("hgx-h100-x4-roce.ron");
    let text = stdout(&railyard(&[
        "compare",
        path_str(&a),
        path_str(&b),
        "--model",
        "8",
    ]));
    assert!(
        text.contains(
            "so the collective times are of different collectives; a workload's step is the \
             same job, its global batch, on each design's GPUs"
        ),
        "{text}"
    );
}

#[test]
fn compare_as_markdown() {
    let a = preset("rtx4090-pair-25gbe.ron");
    let b = preset("hgx-h100-x4-roce.ron");
    let o = railyard(&["compare", path_str(&a), path_str(&b), "--markdown"]);
    assert!(o.status.success(), "{}", stderr(&o));
    let text = stdout(&o);
    let lines: Vec<&str> = text.lines().collect();
    assert_eq!(
        lines[0],
        "| Figure | rtx4090-pair-25gbe (baseline) | hgx-h100-x4-roce |"
    );
    assert_eq!(lines.len(), 2 + 15 + 10, "{text}");
    assert_eq!(lines[2], "| GPUs | 8 | 32 (+300.0 %) |");
    assert_eq!(lines[3], "| Switches | 0 | 1 |");
    assert!(
        lines[..17]
            .iter()
            .all(|l| l.starts_with('|') && l.ends_with('|'))
    );
    // Under the table: which library and algorithm each all-reduce time is, and how far the
    // model was from published runs of each kind (neither was measured); and that 8 GPUs
    // against 32 time different collectives.
    assert_eq!(
        lines[17..],
        [
            "",
            "All-reduce runs as: rtx4090-pair-25gbe: NCCL, tree/Simple; hgx-h100-x4-roce: NCCL, \
             ring/Simple. Against published runs of each kind: rtx4090-pair-25gbe: unknown \
             (none near this size); hgx-h100-x4-roce: unknown (none near this size)",
            "",
            "The scenarios have different GPU counts (rtx4090-pair-25gbe 8, hgx-h100-x4-roce \
             32): each collective runs on all of its own GPUs, so the collective times are of \
             different collectives",
            "",
            // Each scenario's advice, named: a count in the table would not say what it is.
            "Advice, rtx4090-pair-25gbe: info: 2 node(s) have GPUs without PCIe peer-to-peer \
             (GeForce cards), so without GPUDirect RDMA: network traffic bounces through host \
             memory",
            "",
            "Advice, rtx4090-pair-25gbe: info: 2 machines each draw up to 2,359 W with their \
             GPUs and NICs: more than a 15 A, 120 V circuit carries for hours (1,440 W, 80 % of \
             its rating)",
            "",
            "Collective times: each design's library with its defaults (eval says which), under \
             static routing, modelled as a hash of each connection (--routing adaptive \
             for adaptive routing)"
        ]
    );
    // Eight A100s at 1 GiB: OCI's and Azure's rows from 512 MiB to 2 GiB took 3–6 % longer
    // than the model's time.
    let a100 = Path::new(env!("CARGO_MANIFEST_DIR")).join("assets/validation/hgx-a100.ron");
    let text = stdout(&railyard(&["compare", path_str(&a100), path_str(&b)]));
    assert!(
        text.contains(
            "Against published runs of each kind: hgx-a100: 3–6 % under measured, median 4 %; \
             hgx-h100-x4-roce: unknown (none near this size)"
        ),
        "{text}"
    );

    let refused: &[&[&str]] = &[
        &["compare", path_str(&a)],
        &["compare", path_str(&a), path_str(&b), "--baseline", "3"],
        &["compare", path_str(&a), path_str(&b), "--baseline", "0"],
        &["compare", path_str(&a), path_str(&b), "--markdown", "--csv"],
        &["compare", path_str(&a), "/nonexistent/b.ron"],
    ];
    for args in refused {
        assert_refused(&railyard(args));
    }
}

/// What an SVG holds, read with a real XML parser (which refuses a malformed document).
#[derive(Debug, Default)]
struct SvgSummary {
    /// `data-id` of every element with class `device`, in document order.
    devices: Vec<String>,
    /// (`data-id`, `stroke`) of every element with class `link`.
    links: Vec<(String, String)>,
    /// The text of every `<text>` element, entities resolved.
    texts: Vec<String>,
}

fn read_svg(text: &str) -> SvgSummary {
    use quick_xml::XmlVersion;
    use quick_xml::events::Event;
    let mut reader = quick_xml::Reader::from_str(text);
    reader.config_mut().check_end_names = true;
    let mut summary = SvgSummary::default();
    let mut depth = 0usize;
    let mut root_seen = false;
    let mut in_text: Option<String> = None;
    loop {
        let event = reader
            .read_event()
            .unwrap_or_else(|e| panic!("malformed SVG at byte {}: {e}", reader.buffer_position()));
        let element = match &event {
            Event::Start(e) | Event::Empty(e) => Some(e.clone()),
            _ => None,
        };
        if let Some(e) = element {
            if depth == 0 {
                assert!(!root_seen, "more than one root element");
                assert_eq!(e.name().as_ref(), b"svg");
                root_seen = true;
            }
            let attr = |name: &str| {
                e.try_get_attribute(name).unwrap().map(|a| {
                    a.normalized_value(XmlVersion::Implicit1_0)
                        .unwrap()
                        .into_owned()
                })
            };
            match attr("class").as_deref() {
                Some("device") => summary.devices.push(attr("data-id").unwrap()),
                Some("link") => summary
                    .links
                    .push((attr("data-id").unwrap(), attr("stroke").unwrap())),
                _ => {}
            }
            if e.name().as_ref() == b"text" && matches!(event, Event::Start(_)) {
                in_text = Some(String::new());
            }
        }
        match event {
            Event::Start(_) => depth += 1,
            Event::End(e) => {
                depth -= 1;
                if e.name().as_ref() == b"text" {
                    summary.texts.push(in_text.take().unwrap());
                }
            }
            Event::Text(t) => {
                if let Some(s) = in_text.as_mut() {
                    s.push_str(&t.decode().unwrap());
                }
            }
            Event::GeneralRef(r) => {
                if let Some(s) = in_text.as_mut() {
                    let name = r.decode().unwrap();
                    s.push_str(match name.as_ref() {
                        "amp" => "&",
                        "lt" => "<",
                        "gt" => ">",
                        "quot" => "\"",
                        "apos" => "'",
                        other => panic!("unknown entity {other}"),
                    });
                }
            }
            Event::Eof => break,
            _ => {}
        }
    }
    assert!(root_seen && depth == 0, "unbalanced document");
    summary
}

#[test]
fn export_draws_every_device_and_link_once() {
    let dir = tempfile::tempdir().unwrap();
    let star = generate_star(dir.path());
    // A name that breaks naive XML.
    let mut design = railyard::io::load_design(&star).unwrap();
    // Every character XML escapes, short enough to fit a node's box whole.
    design.devices[0].name = r#"<G&"c">'A'"#.to_string();
    railyard::io::save_design(&star, &design).unwrap();

    let svg = dir.path().join("star.svg");
    let o = railyard(&["export", path_str(&star), "-o", path_str(&svg)]);
    assert!(o.status.success(), "{}", stderr(&o));
    let s = read_svg(&std::fs::read_to_string(&svg).unwrap());
    // 4 nodes and 1 switch; 4 links, each coloured by technology (Ethernet blue).
    let mut want_devices: Vec<String> = design.devices.iter().map(|d| d.id.to_string()).collect();
    let mut got_devices = s.devices.clone();
    want_devices.sort();
    got_devices.sort();
    assert_eq!(got_devices, want_devices);
    assert_eq!(s.devices.len(), 5);
    let mut link_ids: Vec<&str> = s.links.iter().map(|(id, _)| id.as_str()).collect();
    link_ids.sort_unstable();
    assert_eq!(link_ids, ["l0", "l1", "l2", "l3"]);
    assert!(
        s.links.iter().all(|(_, stroke)| stroke == "#4285f4"),
        "{:?}",
        s.links
    );
    assert!(
        s.texts.iter().any(|t| t == r#"<G&"c">'A'"#),
        "{:?}",
        s.texts
    );

    // The heatmap: every node sends the same all-reduce load over its one 10 GbE link, so
    // all four links carry equal load and share one colour, not the technology's blue.
    let o = railyard(&["export", path_str(&star), "-o", "-", "--heatmap"]);
    assert!(o.status.success(), "{}", stderr(&o));
    let heat = read_svg(&stdout(&o));
    assert_eq!(heat.links.len(), 4);
    assert!(
        heat.links
            .iter()
            .all(|(_, c)| c == &heat.links[0].1 && c != "#4285f4")
    );

    // An NVL72 pod: racks enclose their trays; still one element per device and per link.
    let pod = preset("gb200-nvl72-pod.ron");
    let o = railyard(&["export", path_str(&pod), "-o", "-"]);
    assert!(o.status.success());
    let design = railyard::io::load_design(&pod).unwrap();
    let s = read_svg(&stdout(&o));
    assert_eq!(s.devices.len(), design.devices.len());
    assert_eq!(s.links.len(), design.links.len());

    // --bytes sizes the heatmap's all-reduce, so it needs --heatmap.
    let o = railyard(&["export", path_str(&star), "-o", "-", "--bytes", "1M"]);
    assert_refused(&o);
}

/// `$12,345` for 12345.4, as a person reads a dollar figure.
fn dollars(x: f64) -> String {
    let digits = (x.round() as i64).to_string();
    let mut out = String::new();
    for (i, c) in digits.chars().enumerate() {
        if i > 0 && (digits.len() - i).is_multiple_of(3) {
            out.push(',');
        }
        out.push(c);
    }
    format!("${out}")
}

/// A Markdown report's section headings, in order.
fn sections(text: &str) -> Vec<&str> {
    text.lines().filter(|l| l.starts_with("## ")).collect()
}

#[test]
fn report_has_every_section_with_evals_numbers() {
    let dir = tempfile::tempdir().unwrap();
    let pair = generate_pair(dir.path());
    let other = preset("rtx4090-pair-25gbe.ron");
    let md = dir.path().join("r.md");
    let o = railyard(&[
        "report",
        path_str(&pair),
        path_str(&other),
        "-o",
        path_str(&md),
    ]);
    assert!(o.status.success(), "{}", stderr(&o));
    let text = std::fs::read_to_string(&md).unwrap();
    // The first design with the comparison, then the second design's own sections.
    let own = [
        "## Summary",
        "## Metrics",
        "## Collective",
        "## Advice",
        "## Bill of materials",
    ];
    let mut expected = own.to_vec();
    expected.extend(["## Comparison", "## Diagram"]);
    expected.extend(own);
    expected.push("## Diagram");
    assert_eq!(sections(&text), expected);
    // Each category's cost says how much of it the catalog marks as estimated: the 25 GbE
    // pair's GPUs are priced at launch MSRP (sourced), its workstation chassis are our own.
    assert!(
        text.contains("| GPUs | 1 | 8 | $12,792 | — | 3.6 kW |"),
        "{text}"
    );
    assert!(
        text.contains("| Nodes | 1 | 2 | $12,000 | $12,000 | 1.1 kW |"),
        "{text}"
    );
    let (first, second) = text
        .split_once("\n---\n\n")
        .expect("a rule between designs");
    assert!(
        first.starts_with("# star: 2 × workstation with 2 × rtx-4090\n"),
        "{first}"
    );
    assert!(
        second.starts_with("# 2 × workstation with 4 × RTX 4090, 25 GbE back to back\n"),
        "{second}"
    );

    let e = eval_json(&pair, &[]);
    let has = |line: &str| {
        assert!(
            text.lines().any(|l| l == line),
            "no line `{line}` in\n{text}"
        )
    };
    has("| GPUs | 4 |");
    has("| Nodes | 2 |");
    has("| Switches | 1 |");
    has("| Links | 2 |");
    // One 10 GbE link per side of the cut.
    assert_eq!(e["bisection_gbit_s"], 10.0);
    has("| Bisection (per direction) | 10 Gb/s |");
    let total = f64_of(&e["cost_usd"]["total"]);
    has(&format!("| Total cost | {} |", dollars(total)));
    has(&format!("| Cost per GPU | {} |", dollars(total / 4.0)));
    let c = &e["collective"];
    // The time in the unit a person reads it in (1.47 s, not 1465409.48 µs).
    has(&format!(
        "| {} | {:.2} | {:.2} |",
        railyard::model::units::time_text(f64_of(&c["time_us"])),
        f64_of(&c["algbw_gbyte_s"]),
        f64_of(&c["busbw_gbyte_s"])
    ));
    // BOM: 5 parts (workstation, GPU, switch, Cat6a, RJ-45 module), 2 + 4 + 1 + 2 + 2 = 11
    // units.
    assert!(
        text.lines()
            .any(|l| l.starts_with(&format!("| **Total** | 5 | 11 | **{}** |", dollars(total)))),
        "{text}"
    );
    // The comparison is the one `compare --markdown` prints, without the advice it lists
    // under the table: the report gives each design's advice in its own section.
    let o = railyard(&["compare", path_str(&pair), path_str(&other), "--markdown"]);
    let compared = stdout(&o);
    assert!(compared.contains("\nAdvice, "), "{compared}");
    let without_advice = compared.replace(
        &compared
            .split("\n\n")
            .filter(|p| p.starts_with("Advice, "))
            .map(|p| format!("{p}\n\n"))
            .collect::<String>(),
        "",
    );
    assert!(text.contains(&without_advice), "{without_advice}");
    assert!(!text.contains("Advice, "));

    // The diagram sits next to the report and is linked from it.
    has("![Diagram of star: 2 × workstation with 2 × rtx-4090](r.svg)");
    let svg = read_svg(&std::fs::read_to_string(dir.path().join("r.svg")).unwrap());
    assert_eq!(svg.devices.len(), 3);
    assert_eq!(svg.links.len(), 2);
    // The second design's diagram too, numbered: two workstations on one cable.
    has("![Diagram of 2 × workstation with 4 × RTX 4090, 25 GbE back to back](r-2.svg)");
    let svg = read_svg(&std::fs::read_to_string(dir.path().join("r-2.svg")).unwrap());
    assert_eq!((svg.devices.len(), svg.links.len()), (2, 1));

    // One design: no comparison.
    let o = railyard(&["report", path_str(&pair), "-o", "-"]);
    assert!(o.status.success());
    let text = stdout(&o);
    assert!(text.contains("## Collective") && !text.contains("## Comparison"));
    assert!(!text.contains("## Diagram"));

    assert_refused(&railyard(&["report", path_str(&pair)])); // no -o
    assert_refused(&railyard(&["report", "/nonexistent.ron", "-o", "-"]));

    // The notes' paragraphs stay paragraphs, the parts they name in backticks code spans:
    // the Mac mesh's two.
    let mac = preset("mac-studio-tb5-x4.ron");
    let text = stdout(&railyard(&["report", path_str(&mac), "-o", "-"]));
    assert!(
        text.contains(
            "every pair has its own 80 Gb/s link.\n\nGenerated: Full mesh: 4 × `mac-studio-m3-ultra`"
        ),
        "{text}"
    );
}

#[test]
fn report_weighs_the_design_against_a_workload() {
    // The 3:1 fat-tree preset and Llama 8B: the report's workload section gives what the
    // workload command computes (ECMP routing), and its advice flags the congested part.
    // SHARP set up, so the gradient all-reduce reduces in the switches.
    let dir = tempfile::tempdir().expect("temp dir");
    let file = preset_with_sharp(dir.path(), "dgx-h100-fat-tree-3to1.ron");
    let o = railyard(&["report", path_str(&file), "--model", "8", "-o", "-"]);
    assert!(o.status.success(), "{}", stderr(&o));
    let text = stdout(&o);
    assert_eq!(
        sections(&text),
        [
            "## Summary",
            "## Metrics",
            "## Collective",
            "## Workload",
            "## Advice",
            "## Bill of materials"
        ]
    );
    let w = workload_json(&file, &["--model", "8"]);
    let time = railyard::model::units::time_text;
    assert!(
        text.contains(&format!(
            "TP 1 × PP 1 × DP 256 on 256 GPUs. Communication per step: {} ({} on a fabric that never queues).",
            time(f64_of(&w["total_us"])),
            time(f64_of(&w["ideal_total_us"]))
        )),
        "{text}"
    );
    let part = &w["components"][0];
    assert!(
        text.lines().any(|l| l.starts_with(&format!(
            "| data-parallel gradient all-reduce | {} | {} | 1 × 14.9 GiB | sharp | {} (100 %) |",
            time(f64_of(&part["time_us_per_step"])),
            time(f64_of(&part["ideal_us_per_step"])),
            part["bottleneck"][0]["link"].as_str().unwrap_or_default()
        ))),
        "{text}"
    );
    assert!(text.contains("`workload-congestion`: data-parallel gradient all-reduce: "));
    // Serving needs a model to serve.
    assert_refused(&railyard(&[
        "report",
        path_str(&file),
        "--serving",
        "-o",
        "-",
    ]));
}

#[test]
fn a_disconnected_design_has_no_collective_but_exits_0() {
    let dir = tempfile::tempdir().unwrap();
    let pair = generate_pair(dir.path());
    let mut design = railyard::io::load_design(&pair).unwrap();
    for link in &mut design.links {
        link.state = railyard::model::LinkState::Failed;
    }
    railyard::io::save_design(&pair, &design).unwrap();
    let j = eval_json(&pair, &[]);
    assert!(j["collective"].is_null());
    assert!(
        j["collective_error"]
            .as_str()
            .unwrap()
            .starts_with("not connected")
    );
    // Only the first node's 2 GPUs: they do not need the failed links.
    let j = eval_json_with(&pair, &["--gpus", "2"]);
    assert_eq!(j["collective"]["gpus"], 2);
}

#[test]
fn check_args_parses_like_the_binary_without_running() {
    use railyard::cli::check_args;
    assert!(check_args(["railyard", "eval", "no-such-file.ron", "--bytes", "64K"]).is_ok());
    let error =
        check_args(["railyard", "eval", "x.ron", "--bytes", "12Q"]).expect_err("12Q is no size");
    assert!(
        error.render().to_string().contains("12Q"),
        "{}",
        error.render()
    );
    assert!(check_args(["railyard", "generate", "torus", "-o", "-"]).is_err());
}

fn workload_json(file: &Path, options: &[&str]) -> Value {
    let mut args = vec!["workload", path_str(file), "--json"];
    args.extend(options);
    let o = railyard(&args);
    assert!(o.status.success(), "{}", stderr(&o));
    serde_json::from_str(&stdout(&o)).expect("workload --json prints one JSON object")
}

#[test]
fn workload_maps_llama_70b_onto_four_hgx_nodes() {
    // 4 × HGX H100 (8 GPUs on NVSwitch each): Llama 70B takes TP 8 inside each node, no
    // pipeline, and DP 4 across nodes. Per step: one all-reduce of the TP shard's gradients,
    // 70.6e9 / 8 parameters × 2 bytes = 17.65 GB, over 4 GPUs (one per node) in each of
    // 8 concurrent groups; and per layer and micro-batch four TP all-reduces of one
    // micro-batch's activations, 8192 tokens × 8192 × 2 bytes = 128 MiB, that is
    // 4 × 80 layers × 512 / 4 micro-batches = 40,960 calls.
    let design = preset("hgx-h100-x4-roce.ron");
    let w = workload_json(&design, &[]);
    assert_eq!(w["model"], "llama-70b");
    let m = &w["mapping"];
    assert_eq!(
        (&m["tp"], &m["pp"], &m["dp"], &m["gpus_used"]),
        (
            &Value::from(8),
            &Value::from(1),
            &Value::from(4),
            &Value::from(32)
        )
    );
    assert_eq!(m["tp_crosses_domains"], false);
    let parts = w["components"].as_array().expect("components");
    assert_eq!(parts.len(), 2);
    let (dp, tp) = (&parts[0], &parts[1]);
    assert_eq!(dp["op"], "all-reduce");
    assert!(close(f64_of(&dp["bytes_per_call"]), 17.65e9));
    assert_eq!(f64_of(&dp["calls_per_step"]), 1.0);
    assert_eq!(f64_of(&tp["bytes_per_call"]), 134_217_728.0);
    assert_eq!(f64_of(&tp["calls_per_step"]), 40_960.0);
    // The 4 TP groups sit in separate nodes and share nothing, so one call takes what one
    // node's 8-GPU all-reduce of 128 MiB takes on its own.
    let one_node = eval_json_with(&design, &["--gpus", "8", "--bytes", "128M"]);
    assert_eq!(
        f64_of(&tp["time_us_per_call"]),
        f64_of(&one_node["collective"]["time_us"])
    );
    assert_eq!(tp["algorithm"], one_node["collective"]["algorithm"]);
    for part in parts {
        assert!(close(
            f64_of(&part["time_us_per_step"]),
            f64_of(&part["time_us_per_call"]) * f64_of(&part["calls_per_step"])
        ));
        assert!(f64_of(&part["ideal_us_per_step"]) <= f64_of(&part["time_us_per_step"]));
    }
    let sum: f64 = parts.iter().map(|p| f64_of(&p["time_us_per_step"])).sum();
    assert!(close(f64_of(&w["total_us"]), sum));
}

#[test]
fn workload_shows_what_an_oversubscribed_fabric_costs() {
    // The 3:1 fat-tree preset: the DP gradient all-reduce of Llama 8B (SHARP, one tree per
    // rail) crosses the oversubscribed uplinks, where the last leaf has 6 uplinks for the 8
    // rails' trees, so it takes longer than on the ideal network (85 ms against 57), and the
    // advice names the leaves.
    let dir = tempfile::tempdir().expect("temp dir");
    let w = workload_json(
        &preset_with_sharp(dir.path(), "dgx-h100-fat-tree-3to1.ron"),
        &["--model", "8", "--routing", "adaptive"],
    );
    let part = &w["components"][0];
    assert_eq!(part["name"], "data-parallel gradient all-reduce");
    let (real, ideal) = (
        f64_of(&part["time_us_per_step"]),
        f64_of(&part["ideal_us_per_step"]),
    );
    assert_eq!(part["algorithm"], "sharp");
    assert!(real > 1.4 * ideal, "{real} against {ideal}");
    let advice = w["advice"].as_array().expect("advice");
    assert!(advice.iter().any(|a| a["code"] == "oversubscribed-uplinks"));
    // The part itself is flagged, with the links it loads most: leaf-to-spine uplinks, at
    // the top of the part's own bottleneck list.
    let congested = advice
        .iter()
        .find(|a| a["code"] == "workload-congestion")
        .expect("the slow part is flagged");
    assert!(
        congested["message"]
            .as_str()
            .is_some_and(|m| m.starts_with("data-parallel gradient all-reduce: ")),
        "{congested}"
    );
    let busiest = part["bottleneck"].as_array().expect("bottleneck");
    assert_eq!(f64_of(&busiest[0]["utilization"]), 1.0);
    let links = congested["links"].as_array().expect("links");
    assert!(!links.is_empty());
    for link in links {
        let row = busiest
            .iter()
            .find(|b| b["link_id"] == *link)
            .unwrap_or_else(|| panic!("{link} not among {busiest:?}"));
        let label = row["link"].as_str().unwrap_or_default();
        assert!(label.contains("leaf") && label.contains("spine"), "{label}");
    }
}

#[test]
fn workload_places_deepseek_experts_across_or_inside_nodes() {
    // DeepSeek-V3 as trained: no TP, 16 pipeline stages, 64-way expert parallelism, on the
    // 1,024-GPU rail-optimized template: PP 16 × DP 64, all 64 replicas sharing out the 256
    // experts, so each token's 8 experts are mostly in other nodes.
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("r1k.ron");
    let o = railyard(&[
        "generate",
        "rail-optimized",
        "--nodes",
        "128",
        "-o",
        path_str(&file),
    ]);
    assert!(o.status.success(), "{}", stderr(&o));
    let w = workload_json(&file, &["--model", "deepseek-v3"]);
    let m = &w["mapping"];
    assert_eq!(
        (&m["tp"], &m["pp"], &m["dp"], &m["ep"]),
        (
            &Value::from(1),
            &Value::from(16),
            &Value::from(64),
            &Value::from(64)
        )
    );
    let part = |w: &Value, name: &str| {
        w["components"]
            .as_array()
            .expect("components")
            .iter()
            .find(|c| c["name"] == name)
            .unwrap_or_else(|| panic!("no {name} in {w}"))
            .clone()
    };
    // Shared parameters: 671e9 less 58 MoE layers × 256 experts × 3 × 7,168 × 2,048, per
    // stage, in bf16. Every expert has one holder among the 64 replicas: no expert gradients
    // to reduce.
    let experts = 58.0 * 256.0 * 3.0 * 7168.0 * 2048.0;
    let dense = part(&w, "data-parallel gradient all-reduce");
    assert!(close(
        f64_of(&dense["bytes_per_call"]),
        (671e9 - experts) / 16.0 * 2.0
    ));
    assert!(
        !w["components"]
            .as_array()
            .expect("components")
            .iter()
            .any(|c| c["name"] == "expert gradient all-reduce")
    );
    // One micro-batch's tokens to 8 experts: 8,192 × 7,168 × 2 bytes × 8 = 896 MiB, four
    // times per MoE layer of a stage and micro-batch: 4 × 58/16 × 8 = 116 calls.
    let far = part(&w, "MoE all-to-all");
    assert_eq!(f64_of(&far["bytes_per_call"]), 939_524_096.0);
    assert!(close(f64_of(&far["calls_per_step"]), 116.0));
    // Pipeline: each stage boundary exchanges one micro-batch's activations (112 MiB) per
    // micro-batch, 512 / 64 = 8 times.
    let pipe = part(&w, "pipeline activations");
    assert_eq!(f64_of(&pipe["bytes_per_call"]), 117_440_512.0);
    assert_eq!(f64_of(&pipe["calls_per_step"]), 8.0);

    // Expert parallelism of 8 keeps each exchange inside a node's NVSwitch; the replicas of
    // each expert (64 / 8 = 8 of them) then reduce its gradients across nodes.
    // 32 experts per GPU do not fit an H100 beside the activations of selective
    // recomputation (the job is refused with the shortfall); full recomputation fits.
    let o = railyard(&[
        "workload",
        path_str(&file),
        "--model",
        "deepseek-v3",
        "--ep",
        "8",
    ]);
    assert_eq!(o.status.code(), Some(2));
    assert!(stderr(&o).contains("GiB short"), "{}", stderr(&o));
    let w8 = workload_json(
        &file,
        &["--model", "deepseek-v3", "--ep", "8", "--recompute", "full"],
    );
    assert_eq!(w8["mapping"]["ep"], 8);
    let near = part(&w8, "MoE all-to-all");
    assert_eq!(near["bytes_per_call"], far["bytes_per_call"]);
    let (near_us, far_us) = (
        f64_of(&near["time_us_per_call"]),
        f64_of(&far["time_us_per_call"]),
    );
    // 7/8 of 896 MiB over a 450 GB/s NVLink port against 63/64 of it over a 50 GB/s NIC.
    assert!(4.0 * near_us < far_us, "{near_us} µs against {far_us} µs");
    let expert_grads = part(&w8, "expert gradient all-reduce");
    assert!(close(
        f64_of(&expert_grads["bytes_per_call"]),
        experts / (16.0 * 8.0) * 2.0
    ));

    // Stage hand-offs go from one stage's 8 nodes to the next stage's: hashed by ECMP, some
    // share spine uplinks, and the advice says so; spread adaptively they take the ideal time.
    let codes = |w: &Value| -> Vec<String> {
        w["advice"]
            .as_array()
            .expect("advice")
            .iter()
            .map(|a| format!("{} {}", a["code"], a["message"]))
            .collect()
    };
    let ecmp = codes(&w);
    assert!(
        ecmp.iter()
            .any(|c| c.contains("workload-congestion") && c.contains("pipeline activations: ")),
        "{ecmp:?}"
    );
    let spread = workload_json(&file, &["--model", "deepseek-v3", "--routing", "adaptive"]);
    let pipe = part(&spread, "pipeline activations");
    assert_eq!(pipe["time_us_per_step"], pipe["ideal_us_per_step"]);
    assert!(
        !codes(&spread)
            .iter()
            .any(|c| c.contains("workload-congestion"))
    );
}

#[test]
fn workload_names_tensor_parallelism_over_thunderbolt() {
    let o = railyard(&[
        "workload",
        path_str(&preset("mac-studio-tb5-x4.ron")),
        "--model",
        "8",
        "--tp",
        "4",
    ]);
    assert!(o.status.success(), "{}", stderr(&o));
    let out = stdout(&o);
    assert!(out.contains("TP 4 × PP 1 × DP 1 on 4 GPUs"), "{out}");
    // RDMA over Thunderbolt 5 (JACCL) is what Mac clusters run tensor parallelism over: not
    // the slow network the advice warns of (TCP over Thunderbolt is; tests/collective.rs).
    assert!(!out.contains("tp-across-slow-network"), "{out}");
    // Refused in one line: more GPUs than drawn, a model that is not offered, expert
    // parallelism for a dense model, and sizes whose product passes 2^32 (not wrapped).
    let macs = preset("mac-studio-tb5-x4.ron");
    // Llama 8B at TP 1 sends gradients, not activations, over the Thunderbolt mesh: the advice
    // speaks of those, not of where tensor parallelism belongs.
    let o = railyard(&[
        "workload",
        path_str(&preset("mac-studio-tb5-x4.ron")),
        "--model",
        "8",
    ]);
    let out = stdout(&o);
    assert!(
        out.contains("data parallelism sends each step's whole gradient at that rate")
            && !out.contains("keep tensor parallelism inside"),
        "{out}"
    );
    // The model's usual layout (TP 8) is narrowed to the 4 Macs, and the output says so;
    // sizes given on the command line are kept, and refused when they do not fit.
    let o = railyard(&["workload", path_str(&macs)]);
    assert!(o.status.success(), "{}", stderr(&o));
    assert!(
        stdout(&o).contains("layout TP 4 × PP 1, fitted to the design's 4 GPUs"),
        "{}",
        stdout(&o)
    );
    let refusals: &[(&[&str], &str)] = &[
        (&["--tp", "8"], "8 GPUs requested but the design has 4"),
        (&["--model", "13"], "one of 8, 70, 405"),
        (&["--model", "8", "--ep", "2"], "llama-8b has no experts"),
        (
            &["--tp", "65536", "--pp", "65536"],
            "4294967296 GPUs requested but the design has 4",
        ),
    ];
    for (options, why) in refusals {
        let mut args = vec!["workload", path_str(&macs)];
        args.extend_from_slice(options);
        let o = railyard(&args);
        assert!(assert_refused(&o).contains(why), "{options:?}");
    }
}

/// `compare --model` runs a model's usual layout narrowed to a design with fewer GPUs, as
/// `workload` does (Llama 70B's TP 8 on 4 Macs: TP 4), and says so; its communication is the
/// figure `workload` gives. A layout that does not fit in memory shows no communication (two
/// 4090 boxes cannot hold Llama 70B at TP 8), only why.
#[test]
fn compare_fits_a_models_layout_to_each_design_as_workload_does() {
    let macs = preset("mac-studio-tb5-x4.ron");
    let pair = preset("rtx4090-pair-25gbe.ron");
    let o = railyard(&[
        "compare",
        path_str(&macs),
        path_str(&pair),
        "--model",
        "70",
        "--csv",
    ]);
    assert!(o.status.success(), "{}", stderr(&o));
    let csv = stdout(&o);
    let row = csv
        .lines()
        .find(|l| l.starts_with("workload_step_us,"))
        .expect("communication row");
    let cells: Vec<&str> = row.split(',').collect();
    let o = railyard(&["workload", path_str(&macs), "--model", "70", "--json"]);
    assert!(o.status.success(), "{}", stderr(&o));
    let json: serde_json::Value = serde_json::from_str(&stdout(&o)).expect("JSON");
    let by_workload = json["total_us"].as_f64().expect("total_us");
    let by_compare: f64 = cells[3].parse().expect("the Macs' figure");
    assert!((by_compare / by_workload - 1.0).abs() < 1e-9, "{row}");
    assert_eq!(
        cells[4], "",
        "no figure for a layout that does not fit: {row}"
    );
    let o = railyard(&["compare", path_str(&macs), path_str(&pair), "--model", "70"]);
    let text = stdout(&o);
    assert!(
        text.contains(
            "Layout: mac-studio-tb5-x4: llama-70b runs TP 4 × PP 1, fitted to the design's 4 GPUs (the \
             usual TP 8 × PP 1 needs 8)"
        ),
        "{text}"
    );
    assert!(
        text.contains("rtx4090-pair-25gbe: does not fit: needs 152.7 GiB per GPU"),
        "{text}"
    );
}

#[test]
fn workload_serving_asks_whether_the_replicas_need_a_fabric() {
    // Llama 70B served with TP 8 on 4 HGX nodes: one replica per node, joined by 400G RoCE
    // that serving replicas do not need.
    let o = railyard(&[
        "workload",
        path_str(&preset("hgx-h100-x4-roce.ron")),
        "--serving",
    ]);
    assert!(o.status.success(), "{}", stderr(&o));
    let out = stdout(&o);
    assert!(out.contains("llama-70b in bf16, serving"), "{out}");
    assert!(out.contains("TP 8 × PP 1 × DP 4 on 32 GPUs"), "{out}");
    assert!(out.contains("per step   "), "{out}");
    assert!(out.contains("160 × 1 MiB per step"), "{out}");
    assert!(out.contains("replicate-before-distribute"), "{out}");
    // Decode at the GPUs' peak memory bandwidth is a bound, and the rate says so.
    assert!(out.contains("(8 GPUs each): at most "), "{out}");
    let w = workload_json(&preset("hgx-h100-x4-roce.ron"), &["--serving"]);
    assert_eq!(w["serving"], true);
    assert!(w.get("weights").is_none());
    // Quantized weights are a serving option, said in the header and the JSON.
    let q = workload_json(
        &preset("hgx-h100-x4-roce.ron"),
        &["--serving", "--weights", "int4"],
    );
    assert_eq!(q["weights"], "int4");
    // FP8 multiplies in 8 bits but all-reduces 16-bit activations: the same bytes as bf16.
    let fp8 = workload_json(
        &preset("hgx-h100-x4-roce.ron"),
        &["--serving", "--precision", "fp8"],
    );
    assert_eq!(
        fp8["components"][0]["bytes_per_call"],
        w["components"][0]["bytes_per_call"]
    );
    let o = railyard(&[
        "workload",
        path_str(&preset("hgx-h100-x4-roce.ron")),
        "--weights",
        "int4",
    ]);
    assert!(assert_refused(&o).contains("--serving"));
    let o = railyard(&[
        "workload",
        path_str(&preset("hgx-h100-x4-roce.ron")),
        "--serving",
        "--weights",
        "int3",
    ]);
    assert!(assert_refused(&o).contains("int8 or int4"));
}

/// `--library` models one run with another collective library than the design's: the Mac
/// preset under Gloo runs one-way rings over IP on Thunderbolt (2(n − 1)/n × 1 GiB at 80 Gb/s
/// × 0.8 × 0.82, plus 8 message times of 150.01 µs), and NCCL on Macs is refused with why.
#[test]
fn eval_library_flag_models_another_library_for_one_run() {
    let mac = preset("mac-studio-tb5-x4.ron");
    let j = eval_json_with(&mac, &["--library", "gloo"]);
    let c = &j["collective"];
    assert_eq!(c["library"], "gloo");
    assert_eq!(c["algorithm"], "ring");
    let want = 1.5 * (1u64 << 30) as f64 / (10e9 * 0.8 * 0.82) * 1e6 + 8.0 * 150.01;
    let got = f64_of(&c["time_us"]);
    assert!((got - want).abs() < 0.01, "{got} against {want}");
    // The six Thunderbolt 5 cables offer RDMA that Gloo leaves unused, and the advice says so.
    let advice = j["advice"].as_array().expect("advice");
    let unused = advice
        .iter()
        .find(|a| a["code"] == "rdma-unused")
        .expect("rdma-unused advice");
    assert_eq!(unused["links"].as_array().map(Vec::len), Some(6));
    // The file itself still chooses by node family, which runs that RDMA.
    let own = eval_json(&mac, &[]);
    assert_eq!(own["collective"]["library"], "mlx-jaccl");
    assert!(
        own["advice"]
            .as_array()
            .expect("advice")
            .iter()
            .all(|a| a["code"] != "rdma-unused")
    );
    let o = railyard(&["eval", path_str(&mac), "--library", "nccl"]);
    assert!(o.status.success(), "{}", stderr(&o));
    assert!(
        stdout(&o).contains("NCCL cannot run this design: NCCL runs on NVIDIA GPUs"),
        "{}",
        stdout(&o)
    );
}

/// `--nccl` runs one NCCL release for one run. NVLS forced on 2 of a DGX H100's GPUs, as
/// nccl #1259 did under 2.20.5: 2.30.7 sets NVLS up for 2 GPUs (25 µs on NVLink); 2.20.5
/// does not and runs its ring instead (ring LL, 6.6 + 2 × 0.6 = 7.8 µs); 2.28.3 does not
/// either and refuses, as 2.24 to 2.28.6 do.
#[test]
fn eval_nccl_flag_runs_another_release_for_one_run() {
    let dgx = Path::new(env!("CARGO_MANIFEST_DIR")).join("assets/validation/dgx-h100.ron");
    let forced = ["--gpus", "2", "--algo", "nvls", "--bytes", "128"];
    let with = |release: Option<&str>| {
        let mut options = forced.to_vec();
        if let Some(r) = release {
            options.extend(["--nccl", r]);
        }
        eval_json_with(&dgx, &options)
    };
    let modelled = with(None);
    let c = &modelled["collective"];
    assert_eq!(c["algorithm"], "nvls");
    assert!(c.get("nccl_release").is_none(), "{c}");
    assert!(
        c["assumes"]
            .as_str()
            .unwrap()
            .starts_with("NCCL 2.30.7 defaults")
    );
    assert!((f64_of(&c["latency_us"]) - 25.0).abs() < 0.01, "{c}");
    let older = with(Some("2.20.5"));
    let c = &older["collective"];
    assert_eq!(
        (c["algorithm"].as_str(), c["protocol"].as_str()),
        (Some("ring"), Some("LL"))
    );
    assert_eq!(c["nccl_release"], "2.20.5");
    assert!((f64_of(&c["latency_us"]) - 7.8).abs() < 1e-9, "{c}");
    assert!(
        c["why"].as_str().unwrap().starts_with(
            "the forced nvls cannot run (NCCL 2.20.5 sets NVLS up only for 3 or more GPUs"
        ),
        "{c}"
    );
    let refused = with(Some("2.28.3"));
    assert!(refused["collective"].is_null(), "{refused}");
    let mut args = vec!["eval", dgx.to_str().unwrap()];
    args.extend(forced);
    args.extend(["--nccl", "2.28.3"]);
    let text = stdout(&railyard(&args));
    assert!(
        text.contains(
            "nvls is not available for all-reduce: NCCL 2.28.3 sets NVLS up only for 3 or more GPUs"
        ),
        "{text}"
    );
    // The table names the release beside the library.
    args.truncate(args.len() - 1);
    args.push("2.20.5");
    let text = stdout(&railyard(&args));
    assert!(
        text.contains("\n  library          NCCL 2.20.5\n"),
        "{text}"
    );
    // SHARP forced where it is not set up: refused by 2.30.7, backed by the ring in 2.21.5.
    let sharp = ["--algo", "sharp", "--bytes", "1M"];
    assert!(eval_json_with(&dgx, &sharp)["collective"].is_null());
    let mut options = sharp.to_vec();
    options.extend(["--nccl", "2.21.5"]);
    let c = &eval_json_with(&dgx, &options)["collective"];
    assert_eq!(c["algorithm"], "ring", "{c}");
    assert!(
        c["why"]
            .as_str()
            .unwrap()
            .starts_with("the forced sharp cannot run (in-network reduction is not set up"),
        "{c}"
    );
    // A release that is not one is refused with the reason.
    let err = assert_refused(&railyard(&[
        "eval",
        dgx.to_str().unwrap(),
        "--nccl",
        "2.21",
    ]));
    assert!(err.contains("`2.21` is not an NCCL release"), "{err}");
}

#[test]
fn workload_too_big_for_the_design_says_where_its_gpu_count_came_from() {
    // Llama 70B's usual layout is TP 8, PP 1: eight GPUs, and the Mac preset has four. Alone
    // it is narrowed to fit; with a size given (--pp 1) the rest of it is kept as it is.
    let o = railyard(&[
        "workload",
        path_str(&preset("mac-studio-tb5-x4.ron")),
        "--pp",
        "1",
    ]);
    assert!(!o.status.success());
    let err = stderr(&o);
    assert!(
        err.contains(
            "cannot model llama-70b: 8 GPUs requested but the design has 4: tensor parallel 8 \
             × pipeline 1 of llama-70b"
        ) && err.contains("pass --tp and --pp that fit 4 GPUs"),
        "{err}"
    );
    // Following the advice works.
    let w = workload_json(&preset("mac-studio-tb5-x4.ron"), &["--tp", "4"]);
    assert_eq!(w["model"], "llama-70b");
}

#[test]
fn eval_says_cost_and_power_are_incomplete_when_a_part_is_missing_from_the_catalog() {
    let text = std::fs::read_to_string(preset("mac-studio-tb5-x4.ron")).expect("the preset");
    let known = railyard(&["eval", path_str(&preset("mac-studio-tb5-x4.ron"))]);
    assert!(!stdout(&known).contains("incomplete"), "{}", stdout(&known));
    let dir = tempfile::tempdir().expect("temp dir");
    let file = dir.path().join("typo.ron");
    std::fs::write(
        &file,
        text.replacen(
            r#"model: "mac-studio-m3-ultra""#,
            r#"model: "mac-studio-m9""#,
            1,
        ),
    )
    .expect("writes");
    let o = railyard(&["eval", path_str(&file)]);
    let out = stdout(&o);
    let line = |label: &str| {
        out.lines()
            .find(|l| l.starts_with(label))
            .unwrap_or_else(|| panic!("no {label} line in {out}"))
            .to_string()
    };
    for label in ["cost ", "power "] {
        assert!(
            line(label).ends_with("(incomplete: parts missing from the catalog are not counted)"),
            "{}",
            line(label)
        );
    }
}

#[test]
fn mlx_results_name_no_nccl_protocol_and_say_what_they_assume() {
    let mac = preset("mac-studio-tb5-x4.ron");
    let eval = stdout(&railyard(&["eval", path_str(&mac)]));
    assert!(
        eval.contains("all-reduce of 1 GiB on 4 GPUs: mesh (ecmp routing)"),
        "{eval}"
    );
    assert!(
        eval.contains(
            "  assumes          MLX JACCL backend: RDMA over Thunderbolt 5; on a full mesh \
             (every pair cabled) each rank's array to every peer up to 32 KiB, a \
             reduce-scatter then an all-gather between every pair above; otherwise a ring, \
             both ways above 32 KiB"
        ),
        "{eval}"
    );
    assert!(!eval.contains("Simple"), "{eval}");
    let sweep = stdout(&railyard(&["sweep", path_str(&mac)]));
    let rows: Vec<&str> = sweep.lines().filter(|l| !l.starts_with('#')).collect();
    assert!(!rows.is_empty());
    assert!(
        rows.iter()
            .all(|r| r.ends_with(" direct") || r.ends_with(" mesh")),
        "{sweep}"
    );
    // NCCL keeps its protocol.
    let star = stdout(&railyard(&[
        "eval",
        path_str(&preset("workstation-star-10gbe.ron")),
    ]));
    assert!(
        star.contains("all-reduce of 1 GiB on 16 GPUs: ring (Simple, ecmp routing)"),
        "{star}"
    );
}

#[test]
fn a_heatmap_export_names_the_collective_its_loads_come_from() {
    let dir = tempfile::tempdir().expect("temp dir");
    let svg = dir.path().join("heat.svg");
    let su = preset("dgx-h100-superpod-su.ron");
    let run = |bytes: &str| {
        let o = railyard(&[
            "export",
            path_str(&su),
            "-o",
            path_str(&svg),
            "--heatmap",
            "--bytes",
            bytes,
        ]);
        assert!(o.status.success(), "{}", stderr(&o));
        std::fs::read_to_string(&svg).expect("the SVG")
    };
    let large = run("1GiB");
    assert!(
        large.contains(
            "links coloured by load in the all-reduce of 1 GiB on 256 GPUs (NCCL, nvls-tree/Simple)"
        ),
        "{}",
        &large[..large.len().min(2000)]
    );
    let small = run("8");
    assert!(small.contains("links coloured by load in the all-reduce of 8 B on 256 GPUs (NCCL, "));
    assert_ne!(small, large);
}

#[test]
fn negative_numbers_get_their_reason_not_a_parser_complaint() {
    let star = preset("workstation-star-10gbe.ron");
    let cases: &[(&[&str], &str)] = &[
        (
            &["eval", path_str(&star), "--bytes", "-5"],
            "`-5` is not a size",
        ),
        (
            &["bom", path_str(&star), "--discount", "-0.1"],
            "`-0.1` is not a fraction between 0 and 1",
        ),
        (
            &["generate", "fat-tree", "-o", "-", "--oversubscription", "0"],
            "`0` is not a ratio from 1 to 1000",
        ),
        (
            &[
                "generate",
                "fat-tree",
                "-o",
                "-",
                "--oversubscription",
                "0.5",
            ],
            "below 1 a leaf would have more uplinks than downlinks",
        ),
    ];
    for (args, reason) in cases {
        let err = assert_refused(&railyard(args));
        assert!(err.contains(reason), "{err}");
    }
}

/// NCCL ranks algorithms as if on all its channels, then runs a small operation on fewer: one
/// per 32 KiB for ring LL on 8 ranks. `eval` times it on those and says so.
#[test]
fn eval_says_a_small_operation_runs_on_fewer_channels() {
    let dgx = Path::new(env!("CARGO_MANIFEST_DIR")).join("assets/validation/dgx-h100.ron");
    let small = eval_json_with(&dgx, &["--bytes", "64K"]);
    let c = &small["collective"];
    assert_eq!(
        (c["algorithm"].as_str(), c["protocol"].as_str()),
        (Some("ring"), Some("LL"))
    );
    // 6.6 + 14 × 0.6 µs, and 1.75 × 64 KiB on 2 channels of 30 GB/s, half of it LL data:
    // 114,688 B / 30 GB/s = 3.82 µs (all 24 would have reached LL's 141 GB/s: 0.81 µs).
    assert!((f64_of(&c["latency_us"]) - 15.0).abs() < 1e-9, "{c}");
    assert!(
        (f64_of(&c["time_us"]) - (15.0 + 114_688.0 / 30e3)).abs() < 1e-6,
        "{c}"
    );
    let notes = c["notes"].as_array().expect("notes");
    assert!(
        notes.iter().any(|n| n
            .as_str()
            .unwrap()
            .starts_with("NCCL runs this size on 2 of its 24 channels, 30 GB/s each")),
        "{notes:?}"
    );
    assert!(
        c["why"].as_str().unwrap().starts_with(
            "NCCL's tuner ranks it first as if on all 24 of its channels, then runs this size on 2"
        ),
        "{c}"
    );
    // From 768 KiB all 24 run: no note.
    let large = eval_json_with(&dgx, &["--bytes", "1M"]);
    assert!(large["collective"].get("notes").is_none(), "{large}");
}

#[test]
fn nccl_runs_only_simple_over_efa_and_srd_needs_no_pfc() {
    let efa = Path::new(env!("CARGO_MANIFEST_DIR")).join("assets/validation/aws-p5-2node-efa.ron");
    let small = eval_json_with(&efa, &["--bytes", "8"]);
    let c = &small["collective"];
    assert_eq!(
        (c["algorithm"].as_str(), c["protocol"].as_str()),
        (Some("nvls-tree"), Some("Simple"))
    );
    // NCCL's NVLSTree/Simple: 25 µs inside the node, then up and down the 2-node tree, each
    // a NET step of 20.9 µs plus the path's 1.0 µs stack, 0.01 µs of in-rack cable and the
    // rail leaf's 0.6 µs: 25 + 2 × 22.51 = 70.02 µs (and NVLS' pipeline fill of 8 B, 25 ps).
    assert!((f64_of(&c["latency_us"]) - 70.02).abs() < 1e-4, "{c}");
    let says_efa = |c: &Value| {
        c["notes"].as_array().is_some_and(|notes| {
            notes.iter().any(|n| {
                n.as_str()
                    .unwrap()
                    .starts_with("AWS EFA: aws-ofi-nccl sets NCCL_PROTO=simple")
            })
        })
    };
    assert!(says_efa(c), "{c}");

    // The same cables as RDMA (RoCE): LL runs at 8 B, and nothing is said of EFA.
    let dir = tempfile::tempdir().unwrap();
    let text = std::fs::read_to_string(&efa).unwrap();
    assert_eq!(text.matches("transport: Efa").count(), 32);
    let roce = dir.path().join("roce.ron");
    std::fs::write(&roce, text.replace("transport: Efa", "transport: Rdma")).unwrap();
    let c = &eval_json_with(&roce, &["--bytes", "8"])["collective"];
    assert_eq!(c["protocol"].as_str(), Some("LL"), "{c}");
    assert!(!says_efa(c), "{c}");

    // The rail leaves have no PFC. SRD does not need it: a ring all-reduce of 16 GiB (which
    // the rails pace) over EFA takes what RoCE takes on lossless leaves, while RoCE on these
    // leaves falls back to go-back-N (75 % of the line rate against 92 %).
    let lossless = dir.path().join("roce-lossless.ron");
    let roce_text = std::fs::read_to_string(&roce).unwrap();
    assert_eq!(roce_text.matches("lossless: false").count(), 9);
    std::fs::write(
        &lossless,
        roce_text.replace("lossless: false", "lossless: true"),
    )
    .unwrap();
    let time = |f: &Path| {
        let ring = eval_json_with(f, &["--bytes", "16G", "--algo", "ring"]);
        f64_of(&ring["collective"]["time_us"])
    };
    let (over_efa, over_lossless, over_lossy) = (time(&efa), time(&lossless), time(&roce));
    assert!(
        (over_efa / over_lossless - 1.0).abs() < 1e-12,
        "{over_efa} {over_lossless}"
    );
    // The rails carry nearly all of the time: it scales by RoCE's 1024/1106 (1024-byte
    // packets on 1500-byte Ethernet) over lossy RoCE's 0.75.
    assert!(
        (over_lossy / over_efa - 1024.0 / 1106.0 / 0.75).abs() < 0.005,
        "{over_lossy} {over_efa}"
    );
    // The report says it under its collective too.
    let md = dir.path().join("efa.md");
    let o = railyard(&["report", path_str(&efa), "-o", path_str(&md)]);
    assert!(o.status.success(), "{}", stderr(&o));
    let report = std::fs::read_to_string(&md).unwrap();
    assert!(
        report.contains("\n- AWS EFA: aws-ofi-nccl sets NCCL\\_PROTO=simple"),
        "{report}"
    );
}

#[test]
fn a_tree_under_simple_fills_its_pipeline_one_chunk_at_a_time() {
    // Two p4de (8 A100 each, four 100 Gb/s EFA cards): NCCL's tree runs Simple on 8 channels
    // (two per card). A chunk crosses 7 NVLink hops up the chain, one network hop up the tree,
    // one down and 7 NVLink hops down the other chain. The design runs AWS's recipe with 8 MiB
    // buffers; first NCCL's default 4 MiB.
    let p4de =
        Path::new(env!("CARGO_MANIFEST_DIR")).join("assets/validation/aws-p4de-2node-efa.ron");
    let with = |bytes: &str, buffer: &str, extra: &[&str]| {
        let mut args = vec!["--bytes", bytes, "--nccl-buffsize", buffer];
        args.extend_from_slice(extra);
        eval_json_with(&p4de, &args)["collective"].clone()
    };
    let at = |bytes: &str, extra: &[&str]| with(bytes, "4M", extra);
    let latency = |c: &Value| f64_of(&c["latency_us"]);
    let tiny = at("8", &[]);
    let mid = at("16M", &[]);
    for c in [&tiny, &mid] {
        assert_eq!(
            (c["algorithm"].as_str(), c["protocol"].as_str()),
            (Some("tree"), Some("Simple")),
            "{c}"
        );
    }
    // 16 MiB: a wave is 8 channels × 512 KiB = 4 MiB. A network hop moves it at the cards'
    // 4 × 100 Gb/s × 1024/1106 (RoCE's packets) = 46.29 GB/s in 90.60 µs, an NVLink hop at
    // the A100's 12 × 20 GB/s in 17.48 µs; the bandwidth term already paces one network hop,
    // so the fill is 90.60 + 14 × 17.48 = 335.3 µs on top of the latency 8 B pays (whose fill
    // is ~1 ns).
    let fill = latency(&mid) - latency(&tiny);
    assert!((fill - 335.3).abs() < 0.1, "{fill}");
    let notes = mid["notes"].to_string();
    assert!(
        notes.contains("512 KiB chunks whole") && notes.contains("all 16 hops"),
        "{notes}"
    );
    // The tuner ranks without it: the pick stands, and `why` says the tuner leaves it out.
    assert!(
        mid["why"]
            .as_str()
            .unwrap()
            .starts_with("NCCL's tuner ranks it without its tree's 335 µs pipeline fill"),
        "{mid}"
    );
    // 1 MiB is less than a wave: all of it crosses, 22.65 + 14 × 4.37 = 83.8 µs.
    let fill = latency(&at("1M", &[])) - latency(&tiny);
    assert!((fill - 83.8).abs() < 0.1, "{fill}");
    // NCCL 2.19 still shrank tree chunks by depth (8): at 16 MiB to 64 KiB, a wave of 512 KiB,
    // 11.33 + 14 × 2.18 = 41.9 µs. (Its tuner picks the ring at 16 MiB: the tree is forced.)
    let old = |bytes: &str| at(bytes, &["--nccl", "2.19.3", "--algo", "tree"]);
    let (tiny_219, mid_219) = (old("8"), old("16M"));
    assert_eq!(mid_219["algorithm"].as_str(), Some("tree"), "{mid_219}");
    let fill = latency(&mid_219) - latency(&tiny_219);
    assert!((fill - 41.9).abs() < 0.1, "{fill}");
    assert!(
        mid_219["notes"].to_string().contains("64 KiB chunks"),
        "{mid_219}"
    );

    // AWS's recipe sets NCCL_BUFFSIZE=8388608 (the design's own): 1 MiB chunks, an 8 MiB wave,
    // 181.2 + 14 × 34.95 = 670.5 µs, and `assumes` names the setting. A buffer NCCL cannot
    // split into 8 steps of whole 16-byte units is refused with the reason.
    let eight = eval_json_with(&p4de, &["--bytes", "16M"])["collective"].clone();
    let fill = latency(&eight) - latency(&with("8", "8M", &[]));
    assert!((fill - 670.5).abs() < 0.1, "{fill}");
    assert!(
        eight["notes"].to_string().contains("1 MiB chunks whole"),
        "{eight}"
    );
    assert!(
        eight["assumes"]
            .as_str()
            .unwrap()
            .starts_with("NCCL 2.30.7 defaults but NCCL_BUFFSIZE 8 MiB:"),
        "{eight}"
    );
    let o = railyard(&["eval", path_str(&p4de), "--nccl-buffsize", "4194308"]);
    assert_eq!(o.status.code(), Some(2));
    assert!(
        stderr(&o).contains("multiple of 128 bytes"),
        "{}",
        stderr(&o)
    );

    // NVLSTree's heads forward whole chunks over the network too: on two p5 at 64 MiB, NCCL's
    // 128 KiB NVLS chunk (8 heads × 16 channels in flight, 64 MiB = 4 × 128 × 128 KiB).
    let p5 = Path::new(env!("CARGO_MANIFEST_DIR")).join("assets/validation/aws-p5-2node-efa.ron");
    let c = &eval_json_with(&p5, &["--bytes", "64M"])["collective"];
    assert_eq!(c["algorithm"].as_str(), Some("nvls-tree"), "{c}");
    let notes = c["notes"].to_string();
    assert!(
        notes.contains("NVLSTree's heads forward their 128 KiB chunks whole")
            && notes.contains("the tree's 2 node-to-node hops, up and down"),
        "{notes}"
    );
}

#[test]
fn eval_says_how_far_the_model_was_from_published_runs_of_its_kind() {
    // Eight A100s behind NVSwitch, all-reduce of 1 MiB. The counted published rows of that kind
    // from 512 KiB to 2 MiB, outside the -g 8 launch floor: OCI's 1 and 2 MiB (measured 76.71
    // and 112.40 µs) against the model's 35.92 and 56.85 µs (15.0 µs of latency, the rest LL's
    // bandwidth), −53.2 and −49.4 %; Azure's (50.66 and 68.55 µs) ran NCCL 2.18.5, whose GPU
    // code rounds LL's chunks up to 4 KiB grains (2 grains for 1 MiB's 5,461 bytes a chunk, 3
    // for 2 MiB's 10,923): 15.0 + 1.5 × 20.92 = 46.38 and 15.0 + 1.125 × 41.84 = 62.07 µs,
    // −8.4 and −9.4 %. Median (−49.4 − 9.4) / 2 = −29.4 %.
    let a100 = Path::new(env!("CARGO_MANIFEST_DIR")).join("assets/validation/hgx-a100.ron");
    let table = stdout(&railyard(&["eval", path_str(&a100), "--bytes", "1M"]));
    assert!(
        table.contains(
            "Published runs of its kind (8 Ampere GPUs on NVSwitch in one node, NCCL; \
             OCIA100-1N and AZA100, 4 rows from 1 MiB to 2 MiB): the model's time was 8–53 % \
             under the measured, median 29 % (railyard validate lists the rows)."
        ),
        "{table}"
    );
    let json = eval_json_with(&a100, &["--bytes", "1M"]);
    let against = &json["collective"]["checked"]["against"];
    assert_eq!(against["rows"], 4, "{json}");
    assert!((f64_of(&against["lowest_error"]) - (35.92 / 76.71 - 1.0)).abs() < 1e-3);
    assert!((f64_of(&against["median_error"]) + 0.294).abs() < 1e-3);
    assert!((f64_of(&against["highest_error"]) - (46.38 / 50.66 - 1.0)).abs() < 1e-3);
    // Four H100 servers on RoCE: nothing of that kind was measured, and it says so.
    let roce = Path::new(env!("CARGO_MANIFEST_DIR")).join("presets/hgx-h100-x4-roce.ron");
    let json = eval_json_with(&roce, &["--bytes", "1G"]);
    let checked = &json["collective"]["checked"];
    assert!(checked["against"].is_null(), "{json}");
    assert_eq!(
        checked["kind"],
        "Hopper GPUs on NVSwitch across RoCEv2 with RDMA, NCCL"
    );
    // A calibrated design answers to its own log: no published line.
    let dir = tempfile::tempdir().unwrap();
    let log = dir.path().join("a.log");
    std::fs::write(
        &log,
        "# nThread 1 nGpus 1 minBytes 1048576 maxBytes 1073741824 step: 4(factor)\n\
         #  Rank  0 Group  0 Pid 1 on host device  0 [0x00] NVIDIA A100-SXM4-80GB\n\
         #       size         count      type   redop    root     time   algbw   busbw #wrong\n\
         #        (B)    (elements)                               (us)  (GB/s)  (GB/s)\n\
         67108864  16777216  float  sum  -1  620.0  108.24  189.42  0\n\
         268435456  67108864  float  sum  -1  2200.0  122.02  213.53  0\n\
         1073741824  268435456  float  sum  -1  8300.0  129.37  226.39  0\n",
    )
    .unwrap();
    let fitted = dir.path().join("fitted.ron");
    let o = railyard(&[
        "calibrate",
        path_str(&a100),
        "--from",
        path_str(&log),
        "--op",
        "all-reduce",
        "--gpus",
        "8",
        "-o",
        path_str(&fitted),
    ]);
    assert!(o.status.success(), "{}", stderr(&o));
    let json = eval_json_with(&fitted, &["--bytes", "1G"]);
    assert!(json["collective"].get("checked").is_none(), "{json}");
}

/// Some GPUs of a multi-node design: the first 8 of the SuperPOD unit are one DGX H100, which
/// crosses no network, and the published single-node runs speak for it (DGXH100's 1 GiB row:
/// 4.03 ms measured, the model 3.91); the first 16 span two nodes over InfiniBand, as
/// NT309-D1's 16 GPUs did.
#[test]
fn a_collective_on_one_node_of_a_fabric_is_checked_against_single_nodes() {
    let su = Path::new(env!("CARGO_MANIFEST_DIR")).join("presets/dgx-h100-superpod-su.ron");
    let one = eval_json_with(&su, &["--bytes", "1G", "--gpus", "8"]);
    let checked = &one["collective"]["checked"];
    assert_eq!(
        checked["kind"], "8 Hopper GPUs on NVSwitch in one node, NCCL",
        "{checked}"
    );
    let systems = checked["against"]["systems"].to_string();
    assert!(systems.contains("DGXH100"), "{systems}");
    let two = eval_json_with(&su, &["--bytes", "1G", "--gpus", "16"]);
    let checked = &two["collective"]["checked"];
    assert_eq!(
        checked["kind"], "Hopper GPUs on NVSwitch across InfiniBand with RDMA, NCCL",
        "{checked}"
    );
    assert_eq!(checked["against"]["systems"][0], "NT309-D1", "{checked}");
    assert_eq!(checked["against"]["on_gpus"], 16);
}

#[test]
fn sweep_lists_the_published_runs_of_its_kind_under_the_table() {
    // OCI's 1 MiB row took 76.71 µs where the model gives the A100 node 35.92: −53 %. Rows
    // under the -g 8 launch floor (up to 512 KiB) measured the launches and are not listed.
    let a100 = Path::new(env!("CARGO_MANIFEST_DIR")).join("assets/validation/hgx-a100.ron");
    let table = stdout(&railyard(&["sweep", path_str(&a100)]));
    assert!(
        table.contains("#     1048576  OCIA100-1N              76.71        35.92    -53%\n"),
        "{table}"
    );
    assert!(!table.contains("#      524288  OCIA100-1N"), "{table}");
    assert_eq!(table.matches("  AZA100  ").count(), 14, "{table}");
    let roce = Path::new(env!("CARGO_MANIFEST_DIR")).join("presets/hgx-h100-x4-roce.ron");
    let table = stdout(&railyard(&["sweep", path_str(&roce)]));
    assert!(table.ends_with(
        "(railyard validate lists what has been measured, and why a run is not counted).\n"
    ));
}

/// Eight cards in a four-slot workstation: `generate` writes the design but warns, once per
/// kind of failed check; `compare` counts the errors (8 nodes × 2: slots and power supply)
/// and says why its job figures are unknown, until `--efficiency` gives the kernels' rate.
#[test]
fn a_generated_design_that_fails_its_checks_is_flagged_in_generate_and_compare() {
    let dir = tempfile::tempdir().unwrap();
    let crammed = dir.path().join("crammed.ron");
    let o = railyard(&[
        "generate",
        "star",
        "--nodes",
        "8",
        "--node",
        "workstation",
        "--gpu",
        "rtx-pro-6000",
        "--gpus-per-node",
        "8",
        "--nic",
        "e810-100gbe",
        "-o",
        path_str(&crammed),
    ]);
    assert!(o.status.success(), "{}", stderr(&o));
    let err = stderr(&o);
    assert!(
        err.contains(
            "warning: gpus-over-slots: node-01 holds 8 GPUs; `workstation` takes 4 (and 7 more like it)"
        ),
        "{err}"
    );
    assert!(err.contains("the design fails 16 checks"), "{err}");

    let h100 = preset("hgx-h100-x4-roce.ron");
    let args = [path_str(&h100), path_str(&crammed), "--model", "8"];
    let rows = compare_csv(&args);
    let row = |key: &str| rows.iter().find(|r| r.0 == key).unwrap().1.clone();
    assert_eq!(row("check_errors"), [Some(0.0), Some(16.0)]);
    // The RTX PRO 6000 has no published kernel efficiency: its step is a dash, and why.
    assert!(row("step_us")[0].is_some());
    assert_eq!(row("step_us")[1], None);
    let o = railyard(&["compare", args[0], args[1], args[2], args[3]]);
    let text = stdout(&o);
    assert!(
        text.contains(
            "Unknown (—): crammed: no published kernel efficiency for rtx-pro-6000 at bf16"
        ),
        "{text}"
    );
    // One efficiency for every design: both steps timed, the H100's slower than at its
    // published 47 % since 40 % is asked.
    let mut with = args.to_vec();
    with.extend(["--efficiency", "0.4"]);
    let at_40 = compare_csv(&with);
    let step = |rows: &[CompareRow]| rows.iter().find(|r| r.0 == "step_us").unwrap().1.clone();
    let (published, forty) = (step(&rows), step(&at_40));
    assert!(forty[1].is_some(), "{forty:?}");
    assert!(forty[0].unwrap() > published[0].unwrap());
    assert_refused(&railyard(&[
        "compare",
        args[0],
        args[1],
        "--efficiency",
        "0.4",
    ]));
    assert_refused(&railyard(&[
        "compare",
        args[0],
        args[1],
        "--model",
        "8",
        "--efficiency",
        "1.5",
    ]));
}

/// One box has no cut to measure: `compare` shows its bisection as unknown and says why,
/// where it once printed 0 Gb/s (−100 %), which read as a loss.
#[test]
fn compare_leaves_a_single_boxs_bisection_unknown() {
    let dir = tempfile::tempdir().unwrap();
    let single = dir.path().join("single.ron");
    let o = railyard(&[
        "generate",
        "single",
        "--node",
        "dgx-h100",
        "-o",
        path_str(&single),
    ]);
    assert!(o.status.success(), "{}", stderr(&o));
    let b = preset("hgx-h100-x4-roce.ron");
    let rows = compare_csv(&[path_str(&single), path_str(&b)]);
    let bisection = rows.iter().find(|r| r.0 == "bisection_gbit_s").unwrap();
    assert_eq!(bisection.1, [None, Some(6400.0)]);
    let text = stdout(&railyard(&["compare", path_str(&single), path_str(&b)]));
    assert!(
        text.contains("Bisection (—): single has no cut to measure"),
        "{text}"
    );
}

/// A stage hand-off is one send-recv that moves activations forward and gradients back: its
/// line says the bytes cross each way, the all-reduces' lines do not. Llama 70B at TP 8 × PP
/// 2 on 4 HGX: 8,192 tokens × 8,192 × 2 bytes / 8 = 16 MiB, 512 / (2 replicas × 1) = 256
/// micro-batches.
#[test]
fn pipeline_hand_offs_say_their_bytes_cross_each_way() {
    let o = railyard(&[
        "workload",
        path_str(&preset("hgx-h100-x4-roce.ron")),
        "--model",
        "70",
        "--pp",
        "2",
    ]);
    assert!(o.status.success(), "{}", stderr(&o));
    let out = stdout(&o);
    let line = |name: &str| {
        out.lines()
            .find(|l| l.trim_start().starts_with(name) && l.contains("ideal"))
            .unwrap_or_else(|| panic!("{name} in {out}"))
            .to_string()
    };
    assert!(line("pipeline activations").contains("256 × 16 MiB each way per step, direct"));
    assert!(!line("tensor-parallel all-reduces").contains("each way"));
}

/// `--serving --search` times the split that serves `--sequences` fastest and lists the best
/// few after it; the job's figures are the first's.
#[test]
fn a_serving_search_times_the_fastest_split_and_lists_the_rest() {
    let file = preset("hgx-h100-x4-roce.ron");
    let w = workload_json(
        &file,
        &[
            "--serving",
            "--search",
            "--sequences",
            "64",
            "--model",
            "70",
        ],
    );
    let layouts = w["serving_layouts"].as_array().expect("layouts");
    assert!(layouts.len() > 1 && layouts.len() <= 5);
    let first = &layouts[0];
    assert_eq!(
        f64_of(&first["decode_tokens_per_s_per_sequence"]),
        f64_of(&w["decode_tokens_per_s_per_sequence"])
    );
    assert_eq!(w["mapping"]["tp"], first["tp"]);
    assert_eq!(w["mapping"]["pp"], first["pp"]);
    let rates: Vec<f64> = layouts
        .iter()
        .map(|l| f64_of(&l["decode_tokens_per_s_per_sequence"]))
        .collect();
    assert!(rates.windows(2).all(|r| r[0] >= r[1]), "{rates:?}");
    // --sequences belongs to a search.
    let o = railyard(&["workload", path_str(&file), "--serving", "--sequences", "8"]);
    assert!(assert_refused(&o).contains("--search"));
}

/// `report --overview` draws each design as the overview (units and racks as blocks), as
/// `export --overview` does; without it the diagram has every device.
#[test]
fn report_draws_overviews_on_request() {
    let dir = tempfile::tempdir().unwrap();
    let su = preset("dgx-h100-superpod-su.ron");
    let md = dir.path().join("su.md");
    for (overview, blocks) in [(false, false), (true, true)] {
        let mut args = vec!["report", path_str(&su), "-o", path_str(&md)];
        if overview {
            args.push("--overview");
        }
        let o = railyard(&args);
        assert!(o.status.success(), "{}", stderr(&o));
        let svg = std::fs::read_to_string(dir.path().join("su.svg")).unwrap();
        assert_eq!(
            svg.contains(r#"<g class="block""#),
            blocks,
            "--overview {overview}"
        );
        assert_eq!(svg.contains("(overview)</title>"), blocks);
    }
}

/// `compare --rent` prices each design's training tokens on rented GPUs and says how busy the
/// owned GPUs must be for owning to cost less: the same figures `workload --rent` gives for
/// each design alone. At $2.5 a GPU-hour four HGX H100 pay off above 41 % of the hours; at
/// $1 renting costs less even at full use, so the share is unknown (—) and a note says why.
#[test]
fn compare_prices_renting_as_workload_does() {
    let (a, b) = (
        preset("hgx-h100-x4-roce.ron"),
        preset("dgx-h100-superpod-su.ron"),
    );
    let rows = compare_csv(&[path_str(&a), path_str(&b), "--model", "8", "--rent", "2.5"]);
    let row = |key: &str| {
        rows.iter()
            .find(|r| r.0 == key)
            .unwrap_or_else(|| panic!("no row {key}"))
            .clone()
    };
    let (rented, pays) = (
        row("rented_usd_per_million_tokens"),
        row("owning_pays_above_use"),
    );
    for (i, file) in [&a, &b].into_iter().enumerate() {
        let w = workload_json(file, &["--model", "8", "--rent", "2.5"]);
        let r = &w["job"]["training"]["economics"]["rented"];
        assert!(close(
            rented.1[i].expect("a rented price"),
            f64_of(&r["usd_per_million_tokens"])
        ));
        assert!(close(
            pays.1[i].expect("a share"),
            f64_of(&r["break_even_use"])
        ));
    }
    assert!((pays.1[0].unwrap() - 0.41).abs() < 0.005, "{pays:?}");
    let o = railyard(&[
        "compare",
        path_str(&a),
        path_str(&b),
        "--model",
        "8",
        "--rent",
        "1",
    ]);
    assert!(o.status.success(), "{}", stderr(&o));
    let text = stdout(&o);
    assert!(
        text.contains("owning never costs less on hgx-h100-x4-roce, dgx-h100-superpod-su (—)"),
        "{text}"
    );
    // Without --rent no rental rows; with --serving it is refused.
    let plain = compare_csv(&[path_str(&a), path_str(&b), "--model", "8"]);
    assert!(!plain.iter().any(|r| r.0.starts_with("rented")));
    assert_refused(&railyard(&[
        "compare",
        path_str(&a),
        path_str(&b),
        "--model",
        "8",
        "--serving",
        "--rent",
        "2",
    ]));
}

/// `eval --usd-per-kwh` and `--pue` price the electricity line at the user's rates, as
/// `workload` takes them: the 4090 pair (desk machines: PUE 1, $0.16/kWh by default) at
/// $0.35/kWh costs 0.35/0.16 of the default month for the same kWh; at PUE 1.5 the kWh grow
/// by half. A PUE under 1 is refused with the reason.
#[test]
fn eval_prices_electricity_at_the_rates_given() {
    let pair = preset("rtx4090-pair-25gbe.ron");
    let running = |options: &[&str]| eval_json_with(&pair, options)["running"].clone();
    let default = running(&[]);
    let dear = running(&["--usd-per-kwh", "0.35"]);
    let kwh = f64_of(&default["kwh_per_month"]);
    assert!(close(f64_of(&dear["kwh_per_month"]), kwh));
    assert!(close(f64_of(&dear["usd_per_month"]), kwh * 0.35));
    assert!(close(f64_of(&default["usd_per_month"]), kwh * 0.16));
    assert_eq!(dear["given"], true);
    let overhead = running(&["--pue", "1.5"]);
    assert!(close(f64_of(&overhead["kwh_per_month"]), kwh * 1.5));
    let o = railyard(&["eval", path_str(&pair), "--usd-per-kwh", "0.35"]);
    assert!(
        stdout(&o).contains("at PUE 1 and $0.35/kWh; as given)"),
        "{}",
        stdout(&o)
    );
    assert_refused(&railyard(&["eval", path_str(&pair), "--pue", "0.5"]));
}
