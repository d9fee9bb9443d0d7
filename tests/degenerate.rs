//! Degenerate designs have defined results: no GPUs, one GPU, nodes with nothing between
//! them, separate islands, every link failed, links that carry next to nothing. The metrics
//! say "n/a" or "not connected" (a status, a `None` ratio or share) and every number is
//! finite: never NaN, never infinity, never a panic. The same holds for `railyard eval`,
//! whose JSON has `null` where a figure is undefined.

mod common;

use common::design::v1_end;
use railyard::analysis::bisection::BisectionStatus;
use railyard::analysis::checks::codes;
use railyard::analysis::collective::{CollectiveError, CollectiveQuery, Op, collective};
use railyard::analysis::{Metrics, evaluate};
use railyard::generate::{Template, TemplateSpec, generate};
use railyard::io::design_file::save_design;
use railyard::model::{
    Bandwidth, Bytes, Catalog, Design, Device, DeviceId, DeviceKind, Endpoint, GpuNode, Link,
    LinkState, LinkTech, NicSlot, PartId, Port, Pos, ScaleUp, Switch, SwitchFeatures, SwitchRole,
};
use std::path::Path;
use std::process::Command;

fn catalog() -> Catalog {
    Catalog::builtin()
}

fn mac_studio(design: &mut Design, name: &str) -> DeviceId {
    design.add_device(Device {
        id: DeviceId(0),
        name: name.into(),
        pos: Pos::default(),
        group: None,
        kind: DeviceKind::GpuNode(GpuNode {
            model: PartId::new("mac-studio-m3-ultra"),
            gpu: PartId::new("m3-ultra"),
            gpu_count: 1,
            scale_up: ScaleUp::UnifiedMemory,
            nics: vec![],
            domain: None,
        }),
    })
}

/// A DGX H100 with one 400G NDR NIC (port 0).
fn dgx(design: &mut Design, name: &str) -> DeviceId {
    design.add_device(Device {
        id: DeviceId(0),
        name: name.into(),
        pos: Pos::default(),
        group: None,
        kind: DeviceKind::GpuNode(GpuNode {
            model: PartId::new("dgx-h100"),
            gpu: PartId::new("h100-sxm"),
            gpu_count: 8,
            scale_up: ScaleUp::NvSwitch {
                generation: 4,
                per_gpu_gbit_s: Bandwidth::from_gbyte_s(450.0),
            },
            nics: vec![NicSlot {
                part: PartId::new("cx7-ndr-400"),
                gpudirect: true,
            }],
            domain: None,
        }),
    })
}

fn leaf(design: &mut Design, name: &str) -> DeviceId {
    design.add_device(Device {
        id: DeviceId(0),
        name: name.into(),
        pos: Pos::default(),
        group: None,
        kind: DeviceKind::Switch(Switch {
            model: PartId::new("qm9700"),
            role: SwitchRole::Leaf,
            breakout: 1,
            rail: None,
            features: SwitchFeatures::default(),
        }),
    })
}

fn ib(design: &mut Design, a: (DeviceId, u32), b: (DeviceId, u32), state: LinkState) {
    let tech = LinkTech::InfiniBand;
    let mut link = Link::new(
        v1_end(design, a, tech),
        v1_end(design, b, tech),
        tech,
        Bandwidth::from_gbit_s(400.0),
    );
    link.state = state;
    design.add_link(link);
}

/// Every figure a person sees is a finite number, a fraction within 0..=1, or absent.
fn assert_all_finite(m: &Metrics) {
    let b = &m.bisection;
    for (what, v) in [
        ("bisection", b.value.gbit_s()),
        ("full bisection", b.full.gbit_s()),
        ("cost", m.cost.total.0),
        ("node cost", m.cost.nodes.0),
        ("switch cost", m.cost.switches.0),
        ("NIC cost", m.cost.nics.0),
        ("cable cost", m.cost.cables_optics.0),
        ("NVSwitch cost", m.cost.nvswitch.0),
        ("other cost", m.cost.other.0),
        ("power", m.power.0),
    ] {
        assert!(v.is_finite() && v >= 0.0, "{what} = {v}");
    }
    for (what, share) in [
        ("bisection ratio", b.ratio),
        ("switch share", m.switch_cost_share),
        ("network share", m.network_cost_share),
    ] {
        if let Some(v) = share {
            assert!(v.is_finite() && (0.0..=1.0).contains(&v), "{what} = {v}");
        }
    }
    if !b.status.is_ok() {
        // Nothing was cut: a degenerate design has no bisection to speak of.
        assert_eq!(b.value.gbit_s(), 0.0, "{:?}", b.status);
        assert!(b.cut_links.is_empty(), "{:?}", b.status);
    }
}

fn all_reduce(design: &Design) -> Result<f64, CollectiveError> {
    let r = collective(
        design,
        &catalog(),
        &CollectiveQuery::new(Op::AllReduce, Bytes(1 << 30)),
    )?;
    assert!(r.time_us.is_finite() && r.time_us > 0.0, "{r:#?}");
    assert!(r.busbw_gbyte_s.is_finite());
    Ok(r.time_us)
}

#[test]
fn an_empty_design_has_nothing_to_measure() {
    let design = Design::new("empty");
    let m = evaluate(&design, &catalog());
    assert_all_finite(&m);
    assert_eq!((m.gpus, m.nodes, m.switches, m.links), (0, 0, 0, 0));
    assert_eq!(m.bisection.status, BisectionStatus::NoGpus);
    assert_eq!(m.bisection.status.to_string(), "n/a: no GPUs");
    assert_eq!(m.bisection.value.gbit_s(), 0.0);
    assert_eq!(m.bisection.ratio, None);
    assert_eq!(m.cost.total.0, 0.0);
    assert_eq!(m.power.0, 0.0);
    // Nothing costs anything, so there is no share to speak of (not 0/0 = NaN).
    assert_eq!(m.switch_cost_share, None);
    assert_eq!(m.network_cost_share, None);
    assert!(m.checks.is_empty(), "{:?}", m.checks);
    assert_eq!(all_reduce(&design), Err(CollectiveError::NoGpus));
}

#[test]
fn one_gpu_is_a_single_unit() {
    let mut design = Design::new("one mac");
    mac_studio(&mut design, "mac");
    let m = evaluate(&design, &catalog());
    assert_all_finite(&m);
    assert_eq!(m.gpus, 1);
    assert_eq!(m.bisection.status, BisectionStatus::SingleUnit);
    assert_eq!(m.bisection.ratio, None);
    // The catalog's Mac Studio M3 Ultra: $11,699 and 250 W, GPU included; no network.
    assert_eq!(m.cost.total.0, 11_699.0);
    assert_eq!(m.power.0, 250.0);
    assert_eq!(m.switch_cost_share, Some(0.0));
    assert_eq!(m.network_cost_share, Some(0.0));
    assert_eq!(
        all_reduce(&design),
        Err(CollectiveError::TooFewGpus {
            available: 1,
            requested: 1
        })
    );
}

#[test]
fn one_nvl72_rack_is_a_single_unit() {
    let mut spec = TemplateSpec::new(Template::Nvl72);
    spec.nodes = Some(1);
    let design = generate(&spec, &catalog()).unwrap();
    let m = evaluate(&design, &catalog());
    assert_all_finite(&m);
    assert_eq!(m.gpus, 72);
    // The 18 trays share one NVLink domain, which no cut may split.
    assert_eq!(m.bisection.status, BisectionStatus::SingleUnit);
    assert_eq!(m.bisection.ratio, None);
    assert!(all_reduce(&design).is_ok());
}

#[test]
fn two_nodes_with_nothing_between_them_are_not_connected() {
    let mut design = Design::new("two alone");
    dgx(&mut design, "a");
    dgx(&mut design, "b");
    let m = evaluate(&design, &catalog());
    assert_all_finite(&m);
    assert_eq!(m.gpus, 16);
    assert_eq!(m.bisection.status, BisectionStatus::NoLinks);
    assert_eq!(
        m.bisection.status.to_string(),
        "not connected: no working links"
    );
    // No cable, so no injection to compare with: the ratio is undefined, not 0/0.
    assert_eq!(m.bisection.full.gbit_s(), 0.0);
    assert_eq!(m.bisection.ratio, None);
    assert!(m.checks.iter().any(|c| c.code == codes::GPU_ISOLATED));
    assert!(matches!(
        all_reduce(&design),
        Err(CollectiveError::NotConnected { .. })
    ));
}

#[test]
fn two_islands_are_not_connected() {
    // a–b and c–d, each pair joined by one 400G link: half of 4 × 400 = 800 Gb/s would be
    // full bisection, and nothing joins the islands.
    let mut design = Design::new("islands");
    let ids: Vec<DeviceId> = ["a", "b", "c", "d"]
        .into_iter()
        .map(|n| dgx(&mut design, n))
        .collect();
    ib(&mut design, (ids[0], 0), (ids[1], 0), LinkState::Up);
    ib(&mut design, (ids[2], 0), (ids[3], 0), LinkState::Up);
    let m = evaluate(&design, &catalog());
    assert_all_finite(&m);
    assert_eq!(
        m.bisection.status,
        BisectionStatus::NotConnected { islands: 2 }
    );
    assert_eq!(
        m.bisection.status.to_string(),
        "not connected: the GPUs form 2 separate islands"
    );
    assert_eq!(m.bisection.value.gbit_s(), 0.0);
    assert_eq!(m.bisection.full.gbit_s(), 800.0);
    assert_eq!(m.bisection.ratio, Some(0.0));
    assert!(m.checks.iter().any(|c| c.code == codes::GPU_ISOLATED));
    let err = all_reduce(&design).expect_err("two islands");
    assert!(matches!(err, CollectiveError::NotConnected { .. }));
    // It names the devices as the design does, not by their ids (d0 … d3).
    let text = err.to_string();
    assert!(
        text.starts_with("not connected: no working path from "),
        "{text}"
    );
    let named =
        |n: &str| text.contains(&format!(" {n} to ")) || text.ends_with(&format!(" to {n}"));
    assert!(
        ["a", "b", "c", "d"].iter().filter(|n| named(n)).count() == 2,
        "{text}"
    );
    assert!(!text.contains(" d0") && !text.contains(" d1"), "{text}");
}

#[test]
fn every_link_failed_leaves_nothing_working() {
    // Two nodes on a leaf, both cables failed: the fabric was built for half of 2 × 400 =
    // 400 Gb/s and now carries nothing.
    let mut design = Design::new("all failed");
    let a = dgx(&mut design, "a");
    let b = dgx(&mut design, "b");
    let s = leaf(&mut design, "leaf");
    ib(&mut design, (a, 0), (s, 0), LinkState::Failed);
    ib(&mut design, (b, 0), (s, 1), LinkState::Failed);
    let m = evaluate(&design, &catalog());
    assert_all_finite(&m);
    assert_eq!(m.bisection.status, BisectionStatus::NoLinks);
    assert_eq!(m.bisection.value.gbit_s(), 0.0);
    assert_eq!(m.bisection.full.gbit_s(), 400.0);
    assert_eq!(m.bisection.ratio, Some(0.0));
    // The failed cables are still bought: cost counts them, and every share is a fraction.
    assert!(m.cost.cables_optics.0 > 0.0);
    assert!(m.checks.iter().any(|c| c.code == codes::GPU_ISOLATED));
    assert!(all_reduce(&design).is_err());
}

#[test]
fn links_that_carry_next_to_nothing_count_as_none() {
    let design = whisper();
    assert_eq!(railyard::model::validate::validate(&design), Ok(()));
    let m = evaluate(&design, &catalog());
    assert_all_finite(&m);
    assert_eq!(m.bisection.status, BisectionStatus::NoLinks);
    assert_eq!(m.bisection.value.gbit_s(), 0.0);
    // The collective must not divide by next to nothing: it refuses.
    assert!(matches!(
        all_reduce(&design),
        Err(CollectiveError::ZeroCapacity { .. })
    ));
}

/// Two nodes on a leaf whose cables carry next to nothing: one degraded to a trillionth
/// (400 Gb/s × 1e-12 = 0.4 mb/s, below the 1 Mb/s resolution of the max-flow), the other
/// at a lane rate of the smallest positive double.
fn whisper() -> Design {
    let mut design = Design::new("whisper");
    let a = dgx(&mut design, "a");
    let b = dgx(&mut design, "b");
    let s = leaf(&mut design, "leaf");
    ib(
        &mut design,
        (a, 0),
        (s, 0),
        LinkState::Degraded { fraction: 1e-12 },
    );
    let tiny = Link::new(
        Endpoint::new(b, Port::Nic(0)),
        Endpoint::new(s, Port::Switch(1)),
        LinkTech::InfiniBand,
        Bandwidth::from_gbit_s(f64::MIN_POSITIVE),
    );
    design.add_link(tiny);
    design
}

#[test]
fn a_network_of_only_switches_has_no_gpus_to_bisect() {
    let mut design = Design::new("switches");
    let a = leaf(&mut design, "a");
    let b = leaf(&mut design, "b");
    ib(&mut design, (a, 0), (b, 0), LinkState::Up);
    let m = evaluate(&design, &catalog());
    assert_all_finite(&m);
    assert_eq!(m.bisection.status, BisectionStatus::NoGpus);
    assert_eq!(m.bisection.ratio, None);
    let share = m.switch_cost_share.expect("the switches cost something");
    assert!(share > 0.5, "{share}");
    assert_eq!(all_reduce(&design), Err(CollectiveError::NoGpus));
}

#[test]
fn the_largest_numbers_the_validator_allows_stay_finite() {
    // Two nodes of a million GPUs each (the per-node and design limits), joined by a link of
    // 1024 lanes at 100 Tb/s: sums that would overflow naive integer code.
    let mut design = Design::new("limits");
    let a = dgx(&mut design, "a");
    let b = dgx(&mut design, "b");
    for id in [a, b] {
        if let Some(DeviceKind::GpuNode(n)) = design.device_mut(id).map(|d| &mut d.kind) {
            n.gpu_count = railyard::model::validate::MAX_GPUS_PER_NODE;
        }
    }
    let mut link = Link::new(
        Endpoint::new(a, Port::Nic(0)),
        Endpoint::new(b, Port::Nic(0)),
        LinkTech::InfiniBand,
        Bandwidth::from_gbit_s(railyard::model::validate::MAX_LANE_GBIT_S),
    );
    link.lanes = 8;
    design.add_link(link.clone());
    assert_eq!(railyard::model::validate::validate(&design), Ok(()));
    let m = evaluate(&design, &catalog());
    assert_all_finite(&m);
    assert_eq!(m.gpus, 2_000_000);
    assert!(m.bisection.status.is_ok());
    // One link of 8 lanes × 100,000 Gb/s joins the two halves.
    assert_eq!(m.bisection.value.gbit_s(), 800_000.0);
    assert_eq!(m.bisection.ratio, Some(1.0));

    // At 1024 lanes (102.4 Pb/s, the validator's largest link) the max-flow still holds the
    // exact figure, and the one link still carries all the injection.
    let id = design.links[0].id;
    design.link_mut(id).unwrap().lanes = railyard::model::validate::MAX_LANES;
    assert_eq!(railyard::model::validate::validate(&design), Ok(()));
    let m = evaluate(&design, &catalog());
    assert_all_finite(&m);
    assert_eq!(m.bisection.value.gbit_s(), 102_400_000.0);
    assert_eq!(m.bisection.ratio, Some(1.0));
}

// ------------------------------------------------------------------ the command line

fn railyard(args: &[&str]) -> std::process::Output {
    Command::new(env!("CARGO_BIN_EXE_railyard"))
        .args(args)
        .output()
        .expect("run railyard")
}

/// `eval --json` on a saved design: exit 0, no NaN or infinity anywhere, every figure a
/// number, and undefined ones `null`.
fn eval_json(dir: &Path, design: &Design) -> serde_json::Value {
    let file = dir.join(format!("{}.ron", design.name.replace(' ', "-")));
    save_design(&file, design).unwrap();
    let out = railyard(&["eval", "--json", file.to_str().unwrap()]);
    let stdout = String::from_utf8(out.stdout).unwrap();
    assert!(
        out.status.success(),
        "{}: {}",
        design.name,
        String::from_utf8_lossy(&out.stderr)
    );
    assert!(!has_non_number(&stdout), "{}: {stdout}", design.name);
    let json: serde_json::Value = serde_json::from_str(&stdout).unwrap();
    for field in [
        "gpus",
        "bisection_gbit_s",
        "full_bisection_gbit_s",
        "power_w",
    ] {
        assert!(
            json[field].is_number(),
            "{}: {field} = {}",
            design.name,
            json[field]
        );
    }
    for (field, value) in json["cost_usd"].as_object().unwrap() {
        assert!(value.is_number(), "{}: cost {field} = {value}", design.name);
    }
    // The collective is there with numbers, or null with the reason beside it.
    let collective = &json["collective"];
    if collective.is_null() {
        let why = json["collective_error"].as_str().unwrap_or_default();
        assert!(
            !why.is_empty(),
            "{}: no collective and no reason",
            design.name
        );
    } else {
        for field in ["time_us", "latency_us", "algbw_gbyte_s", "busbw_gbyte_s"] {
            assert!(
                collective[field].is_number(),
                "{}: collective {field} = {}",
                design.name,
                collective[field]
            );
        }
        for row in collective["bottleneck"].as_array().unwrap() {
            assert!(row["utilization"].is_number(), "{}: {row}", design.name);
        }
    }
    // The table prints the same design without NaN, inf or a panic.
    let table = railyard(&["eval", file.to_str().unwrap()]);
    assert!(table.status.success());
    let text = String::from_utf8(table.stdout).unwrap();
    assert!(!has_non_number(&text), "{text}");
    json
}

/// Whether the text holds a NaN or an infinity as Rust prints them (`NaN`, `inf`, `-inf`),
/// as a word of its own: "info" or "infiniband" are fine.
fn has_non_number(text: &str) -> bool {
    text.split(|c: char| !(c.is_alphanumeric() || c == '-'))
        .any(|word| {
            matches!(
                word.trim_start_matches('-'),
                "NaN" | "nan" | "inf" | "infinity"
            )
        })
}

#[test]
fn eval_json_prints_null_for_what_is_undefined() {
    let dir = tempfile::tempdir().unwrap();

    let json = eval_json(dir.path(), &Design::new("empty"));
    assert_eq!(json["gpus"], 0);
    assert_eq!(json["bisection_status"], "no-gpus");
    assert!(json["bisection_ratio"].is_null());
    assert!(json["switch_cost_share"].is_null());
    assert!(json["network_cost_share"].is_null());
    assert_eq!(json["cost_usd"]["total"], 0.0);

    let mut one = Design::new("one mac");
    mac_studio(&mut one, "mac");
    let json = eval_json(dir.path(), &one);
    assert_eq!(json["bisection_status"], "single-unit");
    assert!(json["bisection_ratio"].is_null());
    assert_eq!(json["cost_usd"]["total"], 11_699.0);
    assert_eq!(json["switch_cost_share"], 0.0);

    let mut alone = Design::new("two alone");
    dgx(&mut alone, "a");
    dgx(&mut alone, "b");
    let json = eval_json(dir.path(), &alone);
    assert_eq!(json["bisection_status"], "no-links");
    assert!(json["bisection_ratio"].is_null());

    let mut islands = Design::new("islands");
    let ids: Vec<DeviceId> = ["a", "b", "c", "d"]
        .into_iter()
        .map(|n| dgx(&mut islands, n))
        .collect();
    ib(&mut islands, (ids[0], 0), (ids[1], 0), LinkState::Up);
    ib(&mut islands, (ids[2], 0), (ids[3], 0), LinkState::Up);
    let json = eval_json(dir.path(), &islands);
    assert_eq!(json["bisection_status"], "not-connected");
    assert_eq!(json["bisection_ratio"], 0.0);
    assert_eq!(json["full_bisection_gbit_s"], 800.0);

    let mut failed = Design::new("all failed");
    let a = dgx(&mut failed, "a");
    let b = dgx(&mut failed, "b");
    let s = leaf(&mut failed, "leaf");
    ib(&mut failed, (a, 0), (s, 0), LinkState::Failed);
    ib(&mut failed, (b, 0), (s, 1), LinkState::Failed);
    let json = eval_json(dir.path(), &failed);
    assert_eq!(json["bisection_status"], "no-links");
    assert_eq!(json["bisection_ratio"], 0.0);
    assert_eq!(json["bisection_gbit_s"], 0.0);
    assert!(json["collective"].is_null());

    let json = eval_json(dir.path(), &whisper());
    assert_eq!(json["bisection_status"], "no-links");
    assert!(json["collective"].is_null());
}
