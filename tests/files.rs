//! Design files: every file in the bad-file corpus (`tests/bad_files/`) is refused with a
//! message naming the file (and line:column where the parser knows one), never a panic; a
//! saved design loads back identical; a failed save leaves the previous file as it was.

use proptest::prelude::*;
use railyard::generate::{Template, TemplateSpec, generate};
use railyard::io::design_file::{DesignFileError, design_to_string};
use railyard::io::{load_design, parse_design, save_design};
use railyard::model::validate::MAX_NAME_BYTES;
use railyard::model::{
    Bandwidth, Catalog, Design, Device, DeviceId, DeviceKind, Endpoint, GroupKind, Host, HostRole,
    LengthClass, Link, LinkState, LinkTech, NicSlot, PartId, Port, Pos, Transport,
};
use std::path::{Path, PathBuf};

fn corpus_dir() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/bad_files")
}

/// Where a corpus file's error must point: a line (the column is checked to lie on it).
enum Where {
    Line(usize),
    /// Structural errors found after parsing have no position; the message names the file.
    Nowhere,
}

/// Each corpus file, where its error is and words its message must contain.
const CORPUS: &[(&str, Where, &str)] = &[
    // `rate_gbit_s: ?` on line 14.
    ("malformed_syntax.ron", Where::Line(14), "expected a number"),
    ("future_version.ron", Where::Nowhere, "version 99 is newer"),
    // A typo'd field is refused rather than silently dropped.
    (
        "unknown_field.ron",
        Where::Line(14),
        "the link has no field `lane`",
    ),
    ("nan_rate.ron", Where::Nowhere, "lane rate NaN Gb/s"),
    // Lanes are unsigned: -2 fails as a number on line 14.
    (
        "negative_lanes.ron",
        Where::Line(14),
        "out of bounds (negative",
    ),
    ("zero_lanes.ron", Where::Nowhere, "link l0 has zero lanes"),
    (
        "dangling_link.ron",
        Where::Nowhere,
        "ends at device d9, which does not exist",
    ),
    (
        "duplicate_ids.ron",
        Where::Nowhere,
        "device id d0 is used more than once",
    ),
    (
        "self_loop.ron",
        Where::Nowhere,
        "link l0 connects device d0 to itself",
    ),
    (
        "degraded_fraction.ron",
        Where::Nowhere,
        "degraded fraction 1.5 is outside (0, 1]",
    ),
    ("zero_gpus.ron", Where::Nowhere, "GPU count 0 is outside"),
    (
        "absurd_gpus.ron",
        Where::Nowhere,
        "GPU count 3000000 is outside",
    ),
    (
        "infinite_position.ron",
        Where::Nowhere,
        "position (inf, 260)",
    ),
    (
        "not_a_domain.ron",
        Where::Nowhere,
        "domain d1, which is not an NVSwitch domain",
    ),
    (
        "missing_version.ron",
        Where::Line(16),
        "missing its `version`",
    ),
    // `version: "one"` on line 2.
    ("wrong_type.ron", Where::Line(2), "expected a whole number"),
    // Cut off after 300 bytes, inside line 9 (in the middle of `name`): said, not only the
    // field it reads as.
    ("truncated.ron", Where::Line(9), "it looks cut short"),
    ("empty.ron", Where::Line(1), "not a design file"),
    // A single word: some other file, whole.
    ("one_word.ron", Where::Line(1), "it should start with `(`"),
    // 1,000 nested lists on line 2, in the part a future-version file would skip.
    ("deep_nesting.ron", Where::Line(2), "nested too deeply"),
    // Invalid UTF-8 starts line 2.
    ("binary_garbage.ron", Where::Line(2), "not UTF-8"),
];

/// Checks `message` holds `name:LINE:COLUMN:` with that line and a column on it.
fn assert_position(message: &str, name: &str, text: &str, line: usize) {
    let rest = message
        .split_once(&format!("{name}:"))
        .unwrap_or_else(|| panic!("{name}: message does not name the file: {message}"))
        .1;
    let mut numbers = rest.splitn(3, ':');
    let got_line: usize = numbers.next().and_then(|n| n.parse().ok()).unwrap_or(0);
    let column: usize = numbers.next().and_then(|n| n.parse().ok()).unwrap_or(0);
    assert_eq!(got_line, line, "{name}: wrong line in {message}");
    let line_len = text.lines().nth(line - 1).map_or(0, |l| l.chars().count());
    assert!(
        column >= 1 && column <= line_len + 1,
        "{name}: column {column} is not on line {line} ({line_len} characters): {message}"
    );
}

#[test]
fn a_file_that_starts_wrong_is_not_called_cut_short() {
    let message = load_design(&corpus_dir().join("one_word.ron"))
        .unwrap_err()
        .to_string();
    assert!(message.contains("not a design file"), "{message}");
    assert!(!message.contains("cut short"), "{message}");
}

#[test]
fn every_bad_file_is_refused_with_a_useful_message() {
    for (name, place, words) in CORPUS {
        let path = corpus_dir().join(name);
        let error = match load_design(&path) {
            Ok(_) => panic!("{name} was accepted"),
            Err(e) => e,
        };
        let message = error.to_string();
        assert!(!message.contains('\n'), "{name}: not one line: {message}");
        // Plain words: no Rust type names or programmer's advice from the parser.
        for jargon in ["DesignFile", "`Device`", "`Link`", "serde", "struct"] {
            assert!(
                !message.contains(jargon),
                "{name}: `{jargon}` in: {message}"
            );
        }
        assert!(
            message.contains(words),
            "{name}: `{words}` not in: {message}"
        );
        let text = String::from_utf8_lossy(&std::fs::read(&path).unwrap()).into_owned();
        match place {
            Where::Line(line) => {
                assert!(
                    matches!(error, DesignFileError::Syntax { .. }),
                    "{name}: {error:?}"
                );
                assert_position(&message, name, &text, *line);
            }
            Where::Nowhere => assert!(
                message.starts_with(&format!("{}: ", path.display())),
                "{name}: {message}"
            ),
        }
    }
}

#[test]
fn the_corpus_list_and_the_folder_agree() {
    let mut on_disk: Vec<String> = std::fs::read_dir(corpus_dir())
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .collect();
    on_disk.sort();
    let mut listed: Vec<String> = CORPUS.iter().map(|(n, _, _)| n.to_string()).collect();
    listed.sort();
    assert_eq!(on_disk, listed);
}

/// The corpus files are one edit away from this file, which must load: each bad file fails
/// for its own reason and not because the base is broken.
#[test]
fn the_corpus_base_is_a_good_file() {
    let base = std::fs::read_to_string(corpus_dir().join("zero_lanes.ron"))
        .unwrap()
        .replace("lanes: 0", "lanes: 1");
    let design = parse_design(&base, "base.ron").unwrap();
    assert_eq!(design.devices.len(), 2);
    assert_eq!(design.links[0].nominal_capacity().gbit_s(), 10.0);
}

#[test]
fn a_ten_megabyte_name_is_refused() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("huge.ron");
    let name = "x".repeat(10 * 1024 * 1024);
    std::fs::write(
        &path,
        format!("(version: 1, design: (name: \"{name}\", devices: [], links: []))"),
    )
    .unwrap();
    let message = load_design(&path).unwrap_err().to_string();
    assert_eq!(
        message,
        format!(
            "{}: the design name is 10485760 bytes long, over the limit of {MAX_NAME_BYTES}",
            path.display()
        )
    );
}

#[test]
fn a_missing_file_names_the_path() {
    let message = load_design(Path::new("/nonexistent/railyard/x.ron"))
        .unwrap_err()
        .to_string();
    assert!(
        message.starts_with("/nonexistent/railyard/x.ron: "),
        "{message}"
    );
}

/// A design that uses every kind of value the format has: each enum, options, groups with
/// parents, text that needs escaping, negative positions, a degraded link.
fn everything() -> Design {
    let catalog = Catalog::builtin();
    let mut spec = TemplateSpec::new(Template::Nvl72);
    spec.nodes = Some(1);
    let mut d = generate(&spec, &catalog).unwrap();
    d.name = "all \"kinds\" — of\nthings\\".into();
    d.notes = "tab\there, unicode ✓, a ) and a ] and a //".into();
    let rack = d.add_group("rack \"A\"", GroupKind::Rack);
    let pod = d.add_group("pod", GroupKind::Pod);
    d.groups.iter_mut().find(|g| g.id == rack).unwrap().parent = Some(pod);
    let storage = d.add_device(Device {
        id: DeviceId(0),
        name: "nas".into(),
        pos: Pos::new(-1234.5, -0.25),
        group: Some(rack),
        kind: DeviceKind::Host(Host {
            role: HostRole::Storage,
            model: None,
            nics: vec![NicSlot {
                part: PartId::new("cx7-400gbe"),
                gpudirect: false,
            }],
        }),
    });
    let first = d.devices[0].id;
    let mut link = Link::new(
        Endpoint::new(storage, Port::Nic(0)),
        Endpoint::new(first, Port::Nic(7)),
        LinkTech::RoceV2,
        Bandwidth::from_gbit_s(400.0),
    )
    .with_lanes(2)
    .with_length(LengthClass::CrossRack);
    link.state = LinkState::Degraded { fraction: 0.75 };
    link.transport = Transport::Tcp;
    link.cable = Some(PartId::new("aoc-400g"));
    d.add_link(link);
    d.library = railyard::model::LibraryChoice::MlxRing;
    d
}

#[test]
fn save_then_load_is_the_identity() {
    let catalog = Catalog::builtin();
    let dir = tempfile::tempdir().unwrap();
    let mut designs = vec![everything(), Design::new("empty")];
    for template in [
        Template::Star,
        Template::FatTree,
        Template::Ring,
        Template::Single,
    ] {
        designs.push(generate(&TemplateSpec::new(template), &catalog).unwrap());
    }
    for (i, design) in designs.iter().enumerate() {
        let path = dir.path().join(format!("d{i}.ron"));
        save_design(&path, design).unwrap();
        let loaded = load_design(&path).unwrap();
        assert_eq!(&loaded, design, "design {i} ({})", design.name);
        // And the text is stable: saving what was loaded writes the same bytes.
        assert_eq!(
            design_to_string(&loaded).unwrap(),
            std::fs::read_to_string(&path).unwrap()
        );
    }
}

/// Names of the files in a folder, for checking that no temporary file was left behind.
fn listing(dir: &Path) -> Vec<String> {
    let mut names: Vec<String> = std::fs::read_dir(dir)
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .collect();
    names.sort();
    names
}

#[test]
fn a_failed_save_keeps_the_previous_file() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("design.ron");
    let good = everything();
    save_design(&path, &good).unwrap();
    let before = std::fs::read(&path).unwrap();

    // A design that would not load again is refused, and the file stays as it was.
    let mut broken = good.clone();
    let first = broken.devices[0].id;
    broken.links[0].b = Endpoint::new(first, Port::Nic(1));
    broken.links[0].a = Endpoint::new(first, Port::Nic(0));
    let e = save_design(&path, &broken).unwrap_err();
    assert!(matches!(e, DesignFileError::Validation { .. }), "{e:?}");
    assert!(e.to_string().contains("to itself"), "{e}");
    assert_eq!(std::fs::read(&path).unwrap(), before);

    // The rename fails when the target is a folder holding a file; the folder and its file
    // survive, and the temporary file is cleaned up.
    let folder = dir.path().join("taken.ron");
    std::fs::create_dir(&folder).unwrap();
    std::fs::write(folder.join("keep"), b"kept").unwrap();
    let e = save_design(&folder, &good).unwrap_err();
    assert!(matches!(e, DesignFileError::Write { .. }), "{e:?}");
    assert_eq!(std::fs::read(folder.join("keep")).unwrap(), b"kept");
    assert_eq!(listing(dir.path()), vec!["design.ron", "taken.ron"]);
    assert_eq!(load_design(&path).unwrap(), good);
}

#[test]
fn saving_under_a_regular_file_fails_cleanly() {
    // Tests may run as root, where permissions do not stop a write; a parent that is a
    // regular file stops everyone.
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("plain");
    std::fs::write(&file, b"not a folder").unwrap();
    let e = save_design(&file.join("design.ron"), &everything()).unwrap_err();
    assert!(matches!(e, DesignFileError::Write { .. }), "{e:?}");
    assert!(e.to_string().starts_with("could not save "), "{e}");
    assert_eq!(std::fs::read(&file).unwrap(), b"not a folder");
    assert_eq!(listing(dir.path()), vec!["plain"]);
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(256))]

    /// Any text at all gives a design or an error, never a panic.
    #[test]
    fn arbitrary_text_never_panics(text in "\\PC{0,200}") {
        let _ = parse_design(&text, "fuzz.ron");
    }

    /// A good file with a slice cut out or a character replaced: loads or is refused,
    /// never a panic, and a refusal is one line naming the file.
    #[test]
    fn damaged_files_never_panic(
        cut_at in 0usize..4000,
        cut_len in 0usize..40,
        replacement in prop::sample::select(vec!["", "(", ")", "[", "]", ",", ":", "\"", "-1", "NaN", "9999999999", "Some(", "r#\""]),
    ) {
        let text = design_to_string(&everything()).unwrap();
        let start = text.char_indices().map(|(i, _)| i).find(|&i| i >= cut_at % text.len()).unwrap_or(0);
        let end = text.char_indices().map(|(i, _)| i).find(|&i| i >= start + cut_len).unwrap_or(text.len());
        let damaged = format!("{}{}{}", &text[..start], replacement, &text[end..]);
        if let Err(e) = parse_design(&damaged, "damaged.ron") {
            let message = e.to_string();
            prop_assert!(message.starts_with("damaged.ron"), "{}", message);
            prop_assert!(!message.contains('\n'), "{}", message);
        }
    }
}

/// The tree that carries old files through migrations keeps everything a design holds:
/// every enum variant, option and string survives tree → text → typed design.
#[test]
fn the_migration_tree_is_lossless_for_a_whole_design() {
    use railyard::io::ron_tree;
    let design = everything();
    let text = design_to_string(&design).unwrap();
    let tree = ron_tree::parse(&text).unwrap();
    let printed = ron_tree::print(&tree);
    assert_ne!(
        printed, text,
        "the tree prints compactly, not the same text"
    );
    assert_eq!(parse_design(&printed, "printed.ron").unwrap(), design);
    assert_eq!(ron_tree::parse(&printed).unwrap(), tree);
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(256))]

    /// The tree parser sees only old files, but those are data from anyone too.
    #[test]
    fn the_tree_parser_never_panics(text in "[-+()\\[\\]{}:,\"'#!/*a-z0-9 .\\\\\n]{0,120}") {
        if let Ok(doc) = railyard::io::ron_tree::parse(&text) {
            let printed = railyard::io::ron_tree::print(&doc);
            prop_assert_eq!(railyard::io::ron_tree::parse(&printed).unwrap(), doc);
        }
    }
}

/// Version 1 numbered a device's ports as one list; version 2 names them. Three presets as
/// version 1 wrote them load as exactly the designs the presets now hold, and save back to
/// the same text: nothing is lost, and each number became the port it meant.
#[test]
fn version_1_files_load_with_each_port_named() {
    for name in [
        "mac-studio-tb5-x4",
        "workstation-star-10gbe",
        "gb200-nvl72-pod",
    ] {
        let v1 = std::fs::read_to_string(format!("tests/data/v1/{name}.ron")).expect("v1 file");
        assert!(v1.contains("version: 1,"), "{name} is a version-1 file");
        let current = std::fs::read_to_string(format!("presets/{name}.ron")).expect("preset");
        let migrated = parse_design(&v1, name).expect("migrates");
        assert_eq!(
            migrated,
            parse_design(&current, name).expect("loads"),
            "{name}"
        );
        assert_eq!(
            design_to_string(&migrated).expect("saves"),
            current,
            "{name}"
        );
    }
    let port = |name: &str, link: usize| {
        let text = std::fs::read_to_string(format!("tests/data/v1/{name}.ron")).expect("v1");
        let d = parse_design(&text, name).expect("migrates");
        (d.links[link].a.port, d.links[link].b.port)
    };
    // A Mac has no NIC: its port 2 was its third Thunderbolt port.
    assert_eq!(
        port("mac-studio-tb5-x4", 2),
        (Port::Thunderbolt(2), Port::Thunderbolt(0))
    );
    // A workstation without a NIC: port 0 was its on-board 10GbE port; switch ports stay.
    assert_eq!(
        port("workstation-star-10gbe", 1),
        (Port::Ethernet(0), Port::Switch(1))
    );
}

/// The bug that gave ports their names: adding a 100 GbE NIC to a workstation moved its
/// 10 GbE link onto the new NIC (port 0 became the NIC). Now the link stays on the on-board
/// port and the design reads as before: same checks, same cable plan row.
#[test]
fn adding_a_nic_keeps_every_link_on_its_port() {
    use railyard::analysis::checks::checks;
    use railyard::io::export::cables::write_cable_plan;
    use railyard::model::command::Command;
    use railyard::model::{Catalog, DeviceKind, NicSlot, PartId};

    let catalog = Catalog::builtin();
    let mut design = load_design(Path::new("presets/workstation-star-10gbe.ron")).expect("preset");
    let before_links = design.links.clone();
    let before_checks = checks(&design, &catalog);
    let mut plan_before = Vec::new();
    write_cable_plan(&design, &catalog, &mut plan_before).expect("plan");

    let node = design.devices[0].clone();
    let mut with_nic = node.clone();
    let DeviceKind::GpuNode(n) = &mut with_nic.kind else {
        panic!("a workstation node")
    };
    assert!(n.nics.is_empty());
    n.nics.push(NicSlot {
        part: PartId::new("e810-100gbe"),
        gpudirect: true,
    });
    Command::UpdateDevice(Box::new(with_nic))
        .apply(&mut design)
        .expect("applies");

    assert_eq!(design.links, before_links);
    assert_eq!(design.links[0].a.port, Port::Ethernet(0));
    // The checks are as before, but for the new card, which nothing is cabled to yet.
    let (idle, rest): (Vec<_>, Vec<_>) = checks(&design, &catalog)
        .into_iter()
        .partition(|f| f.code == "nic-uncabled");
    assert_eq!(rest, before_checks);
    assert_eq!(idle.len(), 1, "{idle:?}");
    assert!(
        idle[0]
            .message
            .starts_with("NIC 0 (e810-100gbe) has no link on node-01"),
        "{}",
        idle[0].message
    );
    let mut plan_after = Vec::new();
    write_cable_plan(&design, &catalog, &mut plan_after).expect("plan");
    assert_eq!(
        String::from_utf8(plan_after).expect("utf-8"),
        String::from_utf8(plan_before).expect("utf-8")
    );
}

/// A large file (read in pieces on several threads) with a mistake deep in its links is
/// refused with the mistake's own line, as a small file is.
#[test]
fn a_mistake_deep_in_a_large_file_is_reported_at_its_line() {
    let mut spec = TemplateSpec::new(Template::RailOptimized);
    spec.nodes = Some(1024);
    spec.tiers = 3;
    let design = generate(&spec, &Catalog::builtin()).unwrap();
    let text = design_to_string(&design).unwrap();
    assert!(text.len() > 4 << 20, "{} bytes", text.len());
    // The 20,000th link's rate, made unreadable.
    let line = text
        .lines()
        .enumerate()
        .filter(|(_, l)| l.trim_start().starts_with("rate_gbit_s:"))
        .nth(20_000)
        .map(|(k, _)| k)
        .expect("that many links");
    let broken: Vec<String> = text
        .lines()
        .enumerate()
        .map(|(k, l)| {
            if k == line {
                "        rate_gbit_s: ?,".to_string()
            } else {
                l.to_string()
            }
        })
        .collect();
    match parse_design(&broken.join("\n"), "big.ron") {
        Err(DesignFileError::Syntax { line: at, .. }) => assert_eq!(at, line + 1),
        other => panic!("{other:?}"),
    }
}
