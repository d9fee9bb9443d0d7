//! The built-in parts catalog: it parses, holds every part the CLI, presets and templates name,
//! carries the real figures it claims, and user catalogs merge over it or fail with a location.

use railyard::model::catalog::{
    CableMedium, CatalogError, GpuArch, NetFamily, PartSpec, ScaleUpSpec,
};
use railyard::model::{Bandwidth, Catalog, PartCategory, PartId};

const GPUS: [&str; 18] = [
    "a100-sxm",
    "a100-pcie",
    "h100-sxm",
    "h100-pcie",
    "h200-sxm",
    "h20",
    "b200",
    "v100-sxm2",
    "rtx-2080ti",
    "rtx-3090",
    "rtx-4090",
    "rtx-5090",
    "rtx-6000-ada",
    "rtx-a6000",
    "rtx-pro-6000",
    "l40s",
    "m2-ultra",
    "m3-ultra",
];

const NODES: [&str; 10] = [
    "dgx-a100",
    "dgx-h100",
    "hgx-h200",
    "hgx-h20",
    "dgx-b200",
    "gb200-compute-tray",
    "workstation",
    "pcie-server-8gpu",
    "mac-studio-m2-ultra",
    "mac-studio-m3-ultra",
];

const NICS: [&str; 7] = [
    "cx6-hdr-200",
    "cx7-ndr-400",
    "cx8-xdr-800",
    "cx7-400gbe",
    "e810-100gbe",
    "cx4lx-25gbe",
    "x710-10gbe",
];

const SWITCHES: [&str; 7] = [
    "qm8700",
    "qm9700",
    "q3400",
    "sn5600",
    "tomahawk5-64x800",
    "crs504-4x100g",
    "crs317-16x10g",
];

/// Speeds for which `dac-<N>g`, `aoc-<N>g` and `optic-<N>g` must exist.
const CABLE_SPEEDS_GBIT: [u32; 6] = [10, 25, 100, 200, 400, 800];

fn builtin() -> Catalog {
    Catalog::builtin()
}

fn price(catalog: &Catalog, id: &str) -> f64 {
    catalog
        .get_str(id)
        .unwrap_or_else(|| panic!("missing {id}"))
        .price_usd()
        .0
}

fn power(catalog: &Catalog, id: &str) -> f64 {
    catalog
        .get_str(id)
        .unwrap_or_else(|| panic!("missing {id}"))
        .power_w
        .0
}

fn gpu_nvlink_gbyte_s(catalog: &Catalog, id: &str) -> Option<f64> {
    let gpu = catalog
        .gpu(&PartId::new(id))
        .unwrap_or_else(|| panic!("{id} is not a GPU"));
    gpu.nvlink_gbit_s.map(Bandwidth::gbyte_s)
}

fn assert_category(catalog: &Catalog, ids: &[&str], category: PartCategory) {
    for id in ids {
        let part = catalog
            .get_str(id)
            .unwrap_or_else(|| panic!("built-in catalog lacks `{id}`"));
        assert_eq!(part.category(), category, "`{id}` has the wrong category");
    }
}

#[test]
fn every_required_id_exists_with_its_category() {
    let c = builtin();
    assert_category(&c, &GPUS, PartCategory::Gpu);
    assert_category(&c, &NODES, PartCategory::Node);
    assert_category(&c, &["gb200-nvl72"], PartCategory::Domain);
    assert_category(&c, &NICS, PartCategory::Nic);
    assert_category(&c, &SWITCHES, PartCategory::Switch);
    assert_category(&c, &["tb4", "tb5", "nvlink-bridge"], PartCategory::Cable);
}

#[test]
fn cable_ids_follow_the_speed_pattern() {
    let c = builtin();
    for n in CABLE_SPEEDS_GBIT {
        for (prefix, medium) in [
            ("dac", CableMedium::Dac),
            ("aoc", CableMedium::Aoc),
            ("optic", CableMedium::Transceiver),
        ] {
            let id = format!("{prefix}-{n}g");
            let cable = c
                .cable(&PartId::new(id.as_str()))
                .unwrap_or_else(|| panic!("`{id}` missing or not a cable"));
            assert_eq!(cable.medium, medium, "{id}");
            assert_eq!(cable.speed_gbit_s.gbit_s(), f64::from(n), "{id}");
        }
        // In-rack copper is short; optics reach across the hall.
        let dac = c.cable(&PartId::new(format!("dac-{n}g"))).unwrap();
        assert!(
            dac.max_length_m <= 5.0,
            "dac-{n}g is {} m",
            dac.max_length_m
        );
    }
    let tb4 = c.cable(&PartId::new("tb4")).unwrap();
    let tb5 = c.cable(&PartId::new("tb5")).unwrap();
    assert_eq!(tb4.medium, CableMedium::Thunderbolt);
    assert_eq!(tb4.speed_gbit_s.gbit_s(), 40.0);
    assert_eq!(tb5.medium, CableMedium::Thunderbolt);
    assert_eq!(tb5.speed_gbit_s.gbit_s(), 80.0);
    assert_eq!(
        c.cable(&PartId::new("nvlink-bridge")).unwrap().medium,
        CableMedium::NvLinkBridge
    );
}

#[test]
fn nvlink_figures_per_direction() {
    let c = builtin();
    // NVLink per GPU per direction: 18 links x 25 GB/s on H100, half of the 900 GB/s bidirectional.
    assert_eq!(gpu_nvlink_gbyte_s(&c, "h100-sxm"), Some(450.0));
    assert_eq!(gpu_nvlink_gbyte_s(&c, "h200-sxm"), Some(450.0));
    assert_eq!(gpu_nvlink_gbyte_s(&c, "h20"), Some(450.0));
    assert_eq!(gpu_nvlink_gbyte_s(&c, "a100-sxm"), Some(300.0));
    assert_eq!(gpu_nvlink_gbyte_s(&c, "v100-sxm2"), Some(150.0));
    assert_eq!(gpu_nvlink_gbyte_s(&c, "b200"), Some(900.0));
    // The same figure in bits: 450 GB/s is 3.6 Tb/s.
    let h100 = c.gpu(&PartId::new("h100-sxm")).unwrap();
    assert_eq!(h100.nvlink_gbit_s.unwrap().gbit_s(), 3600.0);
    assert_eq!(h100.nvlink_generation, Some(4));

    // GeForce bridges: 3090 112.5 GB/s total, 2080 Ti ~50 GB/s total.
    assert_eq!(gpu_nvlink_gbyte_s(&c, "rtx-3090"), Some(56.25));
    assert_eq!(gpu_nvlink_gbyte_s(&c, "rtx-2080ti"), Some(25.0));
    for id in ["rtx-3090", "rtx-2080ti"] {
        let g = c.gpu(&PartId::new(id)).unwrap();
        assert!(g.nvlink_bridge, "{id} takes a bridge");
        assert!(!g.peer_to_peer, "{id} is GeForce: no P2P");
    }
    for id in ["a100-pcie", "h100-pcie", "rtx-a6000"] {
        let g = c.gpu(&PartId::new(id)).unwrap();
        assert!(g.nvlink_bridge && g.peer_to_peer, "{id}");
    }
    // RTX A6000: the 3090's bridge (112.5 GB/s in all), 48 GB at 768 GB/s, 154.8 TFLOPS BF16
    // dense (309.7 with sparsity, halved), compute capability 8.6.
    assert_eq!(gpu_nvlink_gbyte_s(&c, "rtx-a6000"), Some(56.25));
    let a6000 = c.gpu(&PartId::new("rtx-a6000")).unwrap();
    assert_eq!(
        (
            a6000.memory_gb,
            a6000.memory_gbyte_s,
            a6000.bf16_tflops,
            a6000.compute_capability()
        ),
        (48.0, Some(768.0), 154.8, Some(86))
    );
    for id in ["rtx-4090", "rtx-5090"] {
        let g = c.gpu(&PartId::new(id)).unwrap();
        assert_eq!(g.nvlink_gbit_s, None, "{id}");
        assert!(!g.nvlink_bridge && !g.peer_to_peer, "{id}");
    }
    for id in ["rtx-6000-ada", "rtx-pro-6000", "l40s"] {
        let g = c.gpu(&PartId::new(id)).unwrap();
        assert_eq!(g.nvlink_gbit_s, None, "{id}");
        assert!(g.peer_to_peer, "{id} is a professional card");
    }
    // L40S: the datasheet's 733 TFLOPS BF16 with sparsity, halved; 864 GB/s of GDDR6.
    let l40s = c.gpu(&PartId::new("l40s")).unwrap();
    assert_eq!(
        (l40s.bf16_tflops, l40s.memory_gbyte_s),
        (362.0, Some(864.0))
    );
    assert_eq!(
        c.gpu(&PartId::new("m2-ultra")).unwrap().arch,
        GpuArch::AppleM2
    );
    assert_eq!(
        c.gpu(&PartId::new("m3-ultra")).unwrap().arch,
        GpuArch::AppleM3
    );
    // Apple's Mac mini tech specs: every M4 Pro has 273 GB/s; the 40-core M4 Max 546 GB/s.
    let m4_pro = c.gpu(&PartId::new("m4-pro")).unwrap();
    assert_eq!(
        (m4_pro.arch, m4_pro.memory_gbyte_s, m4_pro.memory_gb),
        (GpuArch::AppleM4, Some(273.0), 64.0)
    );
    assert!(m4_pro.arch.is_apple() && m4_pro.compute_capability().is_none());
    assert_eq!(
        c.gpu(&PartId::new("m4-max")).unwrap().memory_gbyte_s,
        Some(546.0)
    );
}

#[test]
fn switch_capacities() {
    let c = builtin();
    let qm9700 = c.switch(&PartId::new("qm9700")).unwrap();
    // 64 ports x 400 Gb/s = 25.6 Tb/s one way; 128 x 200G after breakout.
    assert_eq!(qm9700.capacity().gbit_s(), 25_600.0);
    assert_eq!(qm9700.ports * qm9700.max_breakout, 128);
    assert_eq!(
        qm9700.port_gbit_s.gbit_s() / f64::from(qm9700.max_breakout),
        200.0
    );
    assert!(qm9700.in_network_reduction && qm9700.adaptive_routing);
    assert_eq!(qm9700.family, NetFamily::InfiniBand);

    // 40 x 200G HDR = 8 Tb/s; 144 x 800G XDR = 115.2 Tb/s; 64 x 800G Ethernet = 51.2 Tb/s.
    assert_eq!(
        c.switch(&PartId::new("qm8700"))
            .unwrap()
            .capacity()
            .gbit_s(),
        8_000.0
    );
    assert_eq!(
        c.switch(&PartId::new("q3400")).unwrap().capacity().gbit_s(),
        115_200.0
    );
    for id in ["sn5600", "tomahawk5-64x800"] {
        let s = c.switch(&PartId::new(id)).unwrap();
        assert_eq!(s.capacity().gbit_s(), 51_200.0, "{id}");
        assert_eq!(s.family, NetFamily::Ethernet, "{id}");
        assert_eq!(s.ports * s.max_breakout, 256, "{id}: 256 x 200G");
    }
    assert_eq!(power(&c, "tomahawk5-64x800"), 913.0);
    // Homelab: 16 x 10G = 160 Gb/s; 4 x 100G = 400 Gb/s.
    assert_eq!(
        c.switch(&PartId::new("crs317-16x10g"))
            .unwrap()
            .capacity()
            .gbit_s(),
        160.0
    );
    assert_eq!(
        c.switch(&PartId::new("crs504-4x100g"))
            .unwrap()
            .capacity()
            .gbit_s(),
        400.0
    );
    assert_eq!(price(&c, "crs317-16x10g"), 399.0);
    assert!(
        c.get_str("crs504-4x100g").unwrap().estimate,
        "no public CRS504 price"
    );
    // InfiniBand cut-through beats Ethernet ASICs, which beat the MikroTik by far.
    let latency = |id: &str| c.switch(&PartId::new(id)).unwrap().latency_ns;
    assert!(latency("qm9700") < latency("sn5600"));
    assert!(latency("sn5600") < latency("crs317-16x10g"));
}

#[test]
fn mac_studios_and_workstation() {
    let c = builtin();
    let m2 = c.node(&PartId::new("mac-studio-m2-ultra")).unwrap();
    assert_eq!(m2.thunderbolt_ports, 6);
    assert_eq!(m2.thunderbolt_generation, Some(4));
    assert_eq!(m2.builtin_ethernet_ports, 1);
    assert_eq!(
        m2.builtin_ethernet_gbit_s.map(Bandwidth::gbit_s),
        Some(10.0)
    );
    assert_eq!(m2.scale_up, ScaleUpSpec::UnifiedMemory);
    assert!(m2.gpus_included_in_price);
    assert_eq!(price(&c, "mac-studio-m2-ultra"), 6999.0);

    let m3 = c.node(&PartId::new("mac-studio-m3-ultra")).unwrap();
    assert_eq!(m3.thunderbolt_ports, 5, "the 5 RDMA-capable TB5 ports");
    assert_eq!(m3.thunderbolt_generation, Some(5));
    assert_eq!(m3.gpu.as_str(), "m3-ultra");

    let ws = c.node(&PartId::new("workstation")).unwrap();
    assert!(ws.any_gpu);
    assert!(!ws.gpus_included_in_price);
    assert_eq!((ws.gpu.as_str(), ws.gpu_count), ("rtx-4090", 4));
    assert_eq!(ws.scale_up, ScaleUpSpec::Pcie);
    assert_eq!(ws.pcie_generation, 4);
}

#[test]
fn nodes_reference_real_gpus_and_nics() {
    let c = builtin();
    let mut nodes = 0;
    for part in c.parts() {
        if let PartSpec::Node(n) = &part.spec {
            nodes += 1;
            assert!(
                c.gpu(&n.gpu).is_some(),
                "{}: GPU `{}` unknown",
                part.id,
                n.gpu
            );
            assert!(n.gpu_count > 0, "{}", part.id);
            if let Some(nic) = &n.nic {
                assert!(c.nic(nic).is_some(), "{}: NIC `{nic}` unknown", part.id);
                assert!(n.nic_count > 0, "{}", part.id);
            }
        }
    }
    assert!(nodes >= NODES.len());

    let expect = |id: &str, gpu: &str, count: u32, nic: &str, nics: u32, nvswitch: u8| {
        let n = c.node(&PartId::new(id)).unwrap();
        assert_eq!((n.gpu.as_str(), n.gpu_count), (gpu, count), "{id}");
        assert_eq!(n.nic.as_ref().map(PartId::as_str), Some(nic), "{id}");
        assert_eq!(n.nic_count, nics, "{id}");
        assert_eq!(
            n.scale_up,
            ScaleUpSpec::NvSwitch {
                generation: nvswitch
            },
            "{id}"
        );
        assert!(n.gpus_included_in_price, "{id}");
    };
    expect("dgx-a100", "a100-sxm", 8, "cx6-hdr-200", 8, 2);
    expect("dgx-h100", "h100-sxm", 8, "cx7-ndr-400", 8, 3);
    expect("hgx-h200", "h200-sxm", 8, "cx7-ndr-400", 8, 3);
    expect("hgx-h20", "h20", 8, "cx7-ndr-400", 8, 3);
    expect("dgx-b200", "b200", 8, "cx7-ndr-400", 8, 4);
    expect("gb200-compute-tray", "gb200", 4, "cx7-ndr-400", 4, 4);
}

#[test]
fn node_prices_exclude_their_scale_out_nics() {
    let c = builtin();
    // Reseller prices with NICs: DGX H100 $329,736 (2024-03-20), DGX B200 $379,273 (2024-12-17).
    // Node + 8 NICs at the catalog's NIC price must give the sourced system price back.
    let nic = price(&c, "cx7-ndr-400");
    assert!((price(&c, "dgx-h100") + 8.0 * nic - 329_736.0).abs() < 1.0);
    assert!((price(&c, "dgx-b200") + 8.0 * nic - 379_273.0).abs() < 1.0);
    // Power likewise: 10.2 kW max with NICs.
    let nic_w = power(&c, "cx7-ndr-400");
    assert!((power(&c, "dgx-h100") + 8.0 * nic_w - 10_200.0).abs() < 1e-9);
    for id in [
        "dgx-a100",
        "dgx-h100",
        "hgx-h200",
        "dgx-b200",
        "gb200-compute-tray",
    ] {
        assert!(
            c.get_str(id).unwrap().estimate,
            "{id}: derived price must be flagged"
        );
    }
}

#[test]
fn nvl72_rack_adds_up() {
    let c = builtin();
    let d = c.domain(&PartId::new("gb200-nvl72")).unwrap();
    assert_eq!(d.member_node.as_str(), "gb200-compute-tray");
    assert_eq!(
        (d.members, d.gpus, d.nvswitch_trays, d.nvlink_generation),
        (18, 72, 9, 5)
    );
    assert_eq!(d.per_gpu_gbit_s.gbyte_s(), 900.0);
    // 72 GPUs x 900 GB/s each way = 64.8 TB/s one way, 129.6 TB/s both: NVIDIA's "130 TB/s".
    assert_eq!(
        d.per_gpu_gbit_s.gbyte_s() * f64::from(d.gpus) * 2.0,
        129_600.0
    );
    let tray = c.node(&d.member_node).unwrap();
    assert_eq!(tray.gpu_count * d.members, d.gpus);

    // One rack: rack parts + 18 trays + 4 NICs per tray = the ~$3M estimate and ~120 kW.
    let nics = f64::from(d.members * tray.nic_count);
    let rack_usd = price(&c, "gb200-nvl72")
        + 18.0 * price(&c, "gb200-compute-tray")
        + nics * price(&c, "cx7-ndr-400");
    assert!(
        (rack_usd - 3_000_000.0).abs() < 1.0,
        "rack totals ${rack_usd}"
    );
    let rack_w = power(&c, "gb200-nvl72")
        + 18.0 * power(&c, "gb200-compute-tray")
        + nics * power(&c, "cx7-ndr-400");
    assert!((rack_w - 120_000.0).abs() < 1e-6, "rack draws {rack_w} W");
}

#[test]
fn nic_families_and_rdma() {
    let c = builtin();
    let nic = |id: &str| c.nic(&PartId::new(id)).unwrap();
    assert_eq!(nic("cx7-ndr-400").family, NetFamily::InfiniBand);
    assert_eq!(nic("cx7-ndr-400").port_gbit_s.gbyte_s(), 50.0);
    assert_eq!(nic("cx7-400gbe").family, NetFamily::Ethernet);
    assert!(nic("cx7-400gbe").rdma);
    assert!(nic("e810-100gbe").rdma, "E810 does RoCEv2");
    assert!(!nic("x710-10gbe").rdma, "X710 has no RDMA");
    assert_eq!(nic("cx8-xdr-800").port_gbit_s.gbit_s(), 800.0);
    assert!(nic("cx6-hdr-200").family.speaks_infiniband());
}

#[test]
fn every_price_names_its_date_and_source() {
    let c = builtin();
    for part in c.parts() {
        if let Some(p) = &part.price {
            assert!(!p.date.trim().is_empty(), "{}: price without date", part.id);
            assert!(
                !p.source.trim().is_empty(),
                "{}: price without source",
                part.id
            );
            assert!(p.usd.0 > 0.0, "{}", part.id);
        } else {
            // Only parts built into a priced system have no price of their own (the Apple
            // SoC GPUs come with the Mac, GB10 and its ConnectX-7 with the DGX Spark), and a
            // part no public price was found for, which says so (its cost shows as
            // incomplete, not as a guess).
            let apple_soc = c.gpu(&part.id).is_some_and(|g| g.arch.is_apple());
            let built_in = apple_soc || matches!(part.id.as_str(), "gb10" | "cx7-gb10");
            assert!(
                built_in || part.description.contains("No public price found"),
                "{} has no price",
                part.id
            );
        }
        assert!(
            !part.vendor.is_empty() && !part.model.is_empty(),
            "{}",
            part.id
        );
        if part.estimate {
            assert!(
                !part.description.is_empty(),
                "{}: say why it is an estimate",
                part.id
            );
        }
    }
}

const USER_CATALOG: &str = r#"
// A user's own quotes: a cheaper QM9700 and a switch the built-in list lacks.
(
    version: 1,
    parts: [
        (
            id: "qm9700",
            vendor: "NVIDIA",
            model: "Quantum-2 QM9700 (our quote)",
            price: Some((usd: 30000.0, date: "2026-05", source: "reseller quote")),
            power_w: 747.0,
            spec: Switch((family: InfiniBand, ports: 64, port_gbit_s: 400.0, max_breakout: 2, in_network_reduction: true, adaptive_routing: true, latency_ns: 150.0, rack_units: 1)),
        ),
        (
            id: "sn2010",
            vendor: "NVIDIA (Mellanox)",
            model: "Spectrum SN2010",
            price: Some((usd: 4000.0, date: "2026-05", source: "used, eBay")),
            spec: Switch((family: Ethernet, ports: 18, port_gbit_s: 25.0)),
        ),
    ],
)
"#;

#[test]
fn user_catalog_overrides_and_adds() {
    let mut c = builtin();
    let before = c.len();
    c.merge_text(USER_CATALOG, "user.ron")
        .expect("user catalog merges");
    assert_eq!(c.len(), before + 1, "one override, one addition");
    assert_eq!(price(&c, "qm9700"), 30_000.0);
    assert_eq!(power(&c, "qm9700"), 747.0);
    assert!(!c.get_str("qm9700").unwrap().estimate);
    let sn2010 = c.switch(&PartId::new("sn2010")).unwrap();
    assert_eq!(sn2010.capacity().gbit_s(), 450.0);
    assert_eq!(sn2010.max_breakout, 1, "breakout defaults to 1");
    // Built-in parts the user did not touch are still there.
    assert_eq!(price(&c, "crs317-16x10g"), 399.0);
}

#[test]
fn user_part_may_refer_to_builtin_parts() {
    let mut c = builtin();
    let text = r#"(version: 1, parts: [(
        id: "dgx-h100-rail4", vendor: "NVIDIA", model: "DGX H100, 4 rails",
        spec: Node((gpu: "h100-sxm", gpu_count: 8, gpus_included_in_price: true,
                    scale_up: NvSwitch(generation: 3), nic: Some("cx7-ndr-400"), nic_count: 4,
                    pcie_generation: 5)),
    )])"#;
    c.merge_text(text, "user.ron")
        .expect("refers to built-in GPU and NIC");
    assert_eq!(c.node(&PartId::new("dgx-h100-rail4")).unwrap().nic_count, 4);

    let dangling = r#"(version: 1, parts: [(
        id: "mystery-node", vendor: "X", model: "Y",
        spec: Node((gpu: "no-such-gpu", gpu_count: 1, gpus_included_in_price: true,
                    scale_up: Pcie, pcie_generation: 4)),
    )])"#;
    let before = c.clone();
    match c.merge_text(dangling, "user.ron") {
        Err(CatalogError::Dangling { id, missing, .. }) => {
            assert_eq!(
                (id.as_str(), missing.as_str()),
                ("mystery-node", "no-such-gpu")
            );
        }
        other => panic!("expected a dangling reference, got {other:?}"),
    }
    assert_eq!(c, before, "a refused merge leaves the catalog untouched");
}

#[test]
fn syntax_error_reports_line_and_column() {
    // Line 5 lacks the comma after `vendor: "V"`, so the parser meets `model` on line 6,
    // which starts after 8 spaces: column 9.
    let bad = "(\n    version: 1,\n    parts: [\n      (id: \"x\",\n        vendor: \"V\"\n        model: \"M\",\n";
    let mut c = builtin();
    match c.merge_text(bad, "user.ron") {
        Err(e @ CatalogError::Parse { line, column, .. }) => {
            assert_eq!((line, column), (6, 9), "{e}");
            assert!(e.to_string().starts_with("user.ron:6:9: "), "{e}");
        }
        other => panic!("expected a parse error, got {other:?}"),
    }
    // The standalone parser reports the same place.
    match Catalog::parse(bad, "bad.ron") {
        Err(CatalogError::Parse { line, column, .. }) => assert_eq!((line, column), (6, 9)),
        other => panic!("expected a parse error, got {other:?}"),
    }
}

fn one_switch_with_price(usd: &str) -> String {
    format!(
        r#"(version: 1, parts: [(
            id: "bad-switch", vendor: "X", model: "Y",
            price: Some((usd: {usd}, date: "2026", source: "test")),
            spec: Switch((family: Ethernet, ports: 8, port_gbit_s: 10.0)),
        )])"#
    )
}

#[test]
fn nan_or_negative_price_is_refused() {
    for usd in ["NaN", "-5.0", "inf"] {
        let text = one_switch_with_price(usd);
        let mut c = builtin();
        let before = c.len();
        match c.merge_text(&text, "user.ron") {
            Err(CatalogError::Invalid { id, message, .. }) => {
                assert_eq!(id.as_str(), "bad-switch");
                assert!(message.contains("price"), "{message}");
            }
            other => panic!("price {usd}: expected refusal, got {other:?}"),
        }
        assert_eq!(c.len(), before);
        assert!(matches!(
            Catalog::parse(&text, "user.ron"),
            Err(CatalogError::Invalid { .. })
        ));
    }
    // The same part with a sane price is accepted, so the refusal is about the number.
    assert!(Catalog::parse(&one_switch_with_price("120.0"), "user.ron").is_ok());
}

#[test]
fn negative_power_is_refused() {
    let text = r#"(version: 1, parts: [(
        id: "heater", vendor: "X", model: "Y", power_w: -1.0,
        spec: Nic((family: Ethernet, ports: 1, port_gbit_s: 10.0, rdma: false, pcie_generation: 3)),
    )])"#;
    assert!(matches!(
        Catalog::parse(text, "user.ron"),
        Err(CatalogError::Invalid { .. })
    ));
}

#[test]
fn h20_carries_its_published_figures() {
    // The H20 keeps the H100's NVLink and gains memory, but its compute is cut to 148 TFLOPS
    // FP16/BF16 dense (willitrunai.com/gpus/h20-96gb); Reuters (Jan 2024) reported $12,000-15,000
    // per card and 1.4 million yuan for an 8-card server (at 7.19 CNY/USD: $194,715).
    let c = builtin();
    let h20 = c.gpu(&PartId::new("h20")).unwrap();
    assert_eq!(h20.arch, GpuArch::Hopper);
    assert_eq!(h20.memory_gb, 96.0);
    assert_eq!(h20.bf16_tflops, 148.0);
    assert_eq!(h20.memory_gbyte_s, Some(4000.0));
    assert_eq!(power(&c, "h20"), 400.0);
    assert_eq!(price(&c, "h20"), 12_000.0);
    assert!((price(&c, "hgx-h20") - 1_400_000.0 / 7.19).abs() < 1.0);
    // 9.8 kW for the HGX H100 server, less 8 × (700 − 400) W.
    assert_eq!(power(&c, "hgx-h20"), power(&c, "hgx-h100") - 8.0 * 300.0);
    assert!(c.get_str("hgx-h20").unwrap().estimate);
}
