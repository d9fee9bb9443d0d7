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
            "railyard: wrote {}: 8 GPUs in 4 nodes, 1 switch, 4 links",
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
    let cables = 4.0 * price(&c, "dac-10g");
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
        + 4.0 * power(&c, "dac-10g");
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
            ("crs317-16x10g".to_string(), 1),
            ("dac-10g".to_string(), 4),
            ("rtx-4090".to_string(), 8),
            ("workstation".to_string(), 4),
        ]
    );

    // Without -o the same CSV goes to standard output.
    let o = railyard(&["bom", path_str(&star)]);
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
        "railyard: /nonexistent/design.ron: No such file or directory (os error 2)"
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
