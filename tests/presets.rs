//! The shipped presets: each parses, round-trips through the file format, and is exactly
//! what the generator makes from its recipe below (so presets are reproducible:
//! `RAILYARD_BLESS=1 cargo test --test presets presets_match` rewrites them).

use railyard::generate::{Template, TemplateSpec, generate};
use railyard::io::design_file::design_to_string;
use railyard::io::parse_design;
use railyard::model::{Catalog, Design, PartId, Transport};
use std::path::{Path, PathBuf};

struct Preset {
    file: &'static str,
    name: &'static str,
    notes: &'static str,
    spec: TemplateSpec,
}

fn part(id: &str) -> Option<PartId> {
    Some(PartId::new(id))
}

fn recipes() -> Vec<Preset> {
    let mut out = Vec::new();

    let mut s = TemplateSpec::new(Template::Mesh);
    s.nodes = Some(4);
    s.node = part("mac-studio-m3-ultra");
    s.link = part("tb5");
    s.transport = Some(Transport::Rdma);
    out.push(Preset {
        file: "mac-studio-tb5-x4.ron",
        name: "4 × Mac Studio M3 Ultra, Thunderbolt 5 mesh",
        notes: "Four Mac Studio M3 Ultra in a full mesh of Thunderbolt 5 cables: 3 of each Mac's 5 TB5 ports, 6 cables, RDMA over TB5 (macOS 26.2 and later). No switch; every pair has its own 80 Gb/s link.",
        spec: s,
    });

    let mut s = TemplateSpec::new(Template::Chain);
    s.nodes = Some(2);
    s.node = part("workstation");
    s.gpu = part("rtx-4090");
    s.gpus_per_node = Some(4);
    s.nic = part("cx4lx-25gbe");
    s.nics_per_node = Some(1);
    s.link = part("dac-25g");
    out.push(Preset {
        file: "rtx4090-pair-25gbe.ron",
        name: "2 × workstation with 4 × RTX 4090, 25 GbE back to back",
        notes: "Two 4-GPU RTX 4090 workstations joined by one 25 GbE DAC between ConnectX-4 Lx NICs (RoCE). GeForce cards have no peer-to-peer and no GPUDirect RDMA, so GPU traffic crosses host memory both inside and between the boxes.",
        spec: s,
    });

    let mut s = TemplateSpec::new(Template::Chain);
    s.nodes = Some(2);
    s.node = part("dgx-spark");
    s.link = part("dac-200g");
    s.transport = Some(Transport::Rdma);
    out.push(Preset {
        file: "dgx-spark-pair.ron",
        name: "2 × DGX Spark, one QSFP cable",
        notes: "Two DGX Spark (GB10) back to back over one 200G QSFP DAC with RoCE, as NVIDIA's connect-two-sparks playbook cables them. The ConnectX-7 reaches the SoC over two PCIe Gen5 x4 functions of about 100 Gb/s each: NCCL gets the cable's 200 Gb/s only with both named in NCCL_IB_HCA, as drawn here. GB10 has no GPUDirect RDMA, but its host memory is the GPU's, so the NIC still crosses its PCIe links once.",
        spec: s,
    });

    let mut s = TemplateSpec::new(Template::Star);
    s.nodes = Some(4);
    s.node = part("hgx-h100");
    s.nic = part("cx7-400gbe");
    s.switch = part("sn5600");
    s.transport = Some(Transport::Rdma);
    out.push(Preset {
        file: "hgx-h100-x4-roce.ron",
        name: "4 × HGX H100 on 400G RoCE",
        notes: "Four HGX H100 servers, 8 ConnectX-7 400GbE NICs each, on one Spectrum-4 SN5600 split to 128 × 400G: 32 RoCEv2 links, PFC/ECN (lossless) on. One switch, so no oversubscription anywhere.",
        spec: s,
    });

    let mut s = TemplateSpec::new(Template::RailOptimized);
    s.nodes = Some(32);
    s.node = part("dgx-h100");
    s.switch = part("qm9700");
    out.push(Preset {
        file: "dgx-h100-superpod-su.ron",
        name: "DGX H100 SuperPOD scalable unit (32 nodes, rail-optimized NDR)",
        notes: "One scalable unit of 32 DGX H100 (256 GPUs): NIC k of every node on the rail-k QM9700 leaf (8 rail leaves, 32 ports down, 32 up), 4 spines joining all rails. Non-blocking NDR InfiniBand.",
        spec: s,
    });

    let mut s = TemplateSpec::new(Template::RailOnly);
    s.nodes = Some(32);
    s.node = part("dgx-h100");
    s.switch = part("qm9700");
    s.tiers = 1;
    out.push(Preset {
        file: "rail-only-1tier.ron",
        name: "Rail-only, one tier: 32 DGX H100",
        notes: "The same 32 DGX H100 as the SuperPOD unit, but rail-only: one QM9700 per rail and no spine. Traffic between rails crosses NVLink inside a node; compare cost and all-to-all time with the rail-optimized unit.",
        spec: s,
    });

    let mut s = TemplateSpec::new(Template::Nvl72);
    s.nodes = Some(8);
    s.switch = part("qm9700");
    out.push(Preset {
        file: "gb200-nvl72-pod.ron",
        name: "GB200 NVL72 pod: 8 racks, 576 GPUs",
        notes: "Eight GB200 NVL72 racks: each a 72-GPU NVLink domain of 18 compute trays. The trays' 4 NDR NICs go to rail leaves (one rack per leaf set, 32 leaves) under 9 QM9700 spines.",
        spec: s,
    });

    let mut s = TemplateSpec::new(Template::FatTree);
    s.nodes = Some(32);
    s.node = part("dgx-h100");
    s.switch = part("qm9700");
    s.oversubscription = 3.0;
    out.push(Preset {
        file: "dgx-h100-fat-tree-3to1.ron",
        name: "32 DGX H100, 2-tier fat-tree at 3:1",
        notes: "32 DGX H100 under top-of-rack QM9700 leaves with 48 ports down and 16 up (3:1; the sixth leaf takes the last 16 NICs with 6 up): 6 leaves, 2 spines instead of the 4 a non-blocking tree needs. Shows what oversubscription saves and costs.",
        spec: s,
    });

    let mut s = TemplateSpec::new(Template::Star);
    s.nodes = Some(4);
    s.node = part("workstation");
    s.gpu = part("rtx-4090");
    s.switch = part("crs317-16x10g");
    out.push(Preset {
        file: "workstation-star-10gbe.ron",
        name: "4 × RTX 4090 workstation on a 10 GbE switch",
        notes: "A homelab: four 4-GPU RTX 4090 workstations on their built-in 10 GbE ports and a 16-port MikroTik switch, plain TCP. The network, not the GPUs, sets the pace of any collective here.",
        spec: s,
    });

    out
}

fn build(p: &Preset, catalog: &Catalog) -> Design {
    let mut d = generate(&p.spec, catalog).unwrap_or_else(|e| panic!("{}: {e}", p.file));
    d.name = p.name.to_string();
    d.notes = format!("{}\n\nGenerated: {}", p.notes, d.notes);
    d
}

fn presets_dir() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("presets")
}

#[test]
fn every_preset_parses_and_round_trips() {
    let mut files: Vec<PathBuf> = std::fs::read_dir(presets_dir())
        .expect("presets/ exists")
        .filter_map(|e| e.ok().map(|e| e.path()))
        .filter(|p| p.extension().is_some_and(|x| x == "ron"))
        .collect();
    files.sort();
    assert!(files.len() >= 6, "only {} presets", files.len());
    for path in files {
        let origin = path.display().to_string();
        let text = std::fs::read_to_string(&path).expect("readable");
        let design = parse_design(&text, &origin).unwrap_or_else(|e| panic!("{e}"));
        assert!(
            !design.name.is_empty() && !design.notes.is_empty(),
            "{origin}"
        );
        assert!(!design.devices.is_empty(), "{origin}");
        let again = design_to_string(&design).expect("encodes");
        let reparsed = parse_design(&again, &origin).expect("re-parses");
        assert_eq!(reparsed, design, "{origin} does not round-trip");
    }
}

/// With `RAILYARD_BLESS=1` set, rewrites the presets from their recipes instead.
#[test]
fn presets_match_their_recipes() {
    let catalog = Catalog::builtin();
    let bless = std::env::var_os("RAILYARD_BLESS").is_some_and(|v| v == "1");
    for p in recipes() {
        let path = presets_dir().join(p.file);
        if bless {
            let text = design_to_string(&build(&p, &catalog)).expect("encodes");
            railyard::io::design_file::write_atomically(&path, text.as_bytes()).expect("writes");
            continue;
        }
        let text =
            std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
        let on_disk = parse_design(&text, p.file).expect("parses");
        assert_eq!(
            on_disk,
            build(&p, &catalog),
            "{} is stale: rewrite it with `RAILYARD_BLESS=1 cargo test --test presets presets_match`",
            p.file
        );
    }
}

#[test]
fn preset_contents_are_what_their_notes_say() {
    let catalog = Catalog::builtin();
    let by_file = |f: &str| {
        let p = recipes().into_iter().find(|p| p.file == f).expect("recipe");
        build(&p, &catalog)
    };
    // Mesh of 4: 4 × 3 / 2 = 6 cables.
    let mac = by_file("mac-studio-tb5-x4.ron");
    assert_eq!((mac.node_count(), mac.links.len()), (4, 6));
    // 32 × 8 = 256 GPUs; 8 leaves + 4 spines; 256 + 256 links.
    let su = by_file("dgx-h100-superpod-su.ron");
    assert_eq!(
        (su.gpu_count(), su.switch_count(), su.links.len()),
        (256, 12, 512)
    );
    // 8 racks × 72 = 576 GPUs; 32 leaves (8 sets × 4 rails) with 18 uplinks each = 576 / 64
    // → 9 spines.
    let pod = by_file("gb200-nvl72-pod.ron");
    assert_eq!((pod.gpu_count(), pod.switch_count()), (576, 41));
    let rail_only = by_file("rail-only-1tier.ron");
    assert_eq!((rail_only.switch_count(), rail_only.links.len()), (8, 256));
}
