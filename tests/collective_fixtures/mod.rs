//! Designs built in code for the collective-model tests and benchmarks, so that they depend
//! on neither the generator nor files on disk.
#![allow(dead_code)]

#[path = "../common/design.rs"]
mod design;
use design::v1_end;
use railyard::model::{
    Bandwidth, Design, Device, DeviceId, DeviceKind, GpuNode, Link, LinkTech, NicSlot, PartId,
    PcieVia, Pos, ScaleUp, Switch, SwitchFeatures, SwitchRole, Transport,
};

pub fn add(design: &mut Design, name: &str, kind: DeviceKind) -> DeviceId {
    design.add_device(Device {
        id: DeviceId(0),
        name: name.to_string(),
        pos: Pos::default(),
        group: None,
        kind,
    })
}

pub fn nic_slots(count: u32, part: &str, gpudirect: bool) -> Vec<NicSlot> {
    (0..count)
        .map(|_| NicSlot {
            part: PartId::new(part),
            gpudirect,
        })
        .collect()
}

/// A DGX H100: 8 GPUs on NVSwitch gen3 at 900 GB/s bidirectional (3,600 Gb/s per direction),
/// `nics` ConnectX-7 400G NICs.
pub fn dgx_h100(design: &mut Design, name: &str, nics: u32) -> DeviceId {
    add(
        design,
        name,
        DeviceKind::GpuNode(GpuNode {
            model: PartId::new("dgx-h100"),
            gpu: PartId::new("h100-sxm"),
            gpu_count: 8,
            scale_up: ScaleUp::NvSwitch {
                generation: 3,
                per_gpu_gbit_s: Bandwidth::from_gbit_s(3600.0),
            },
            nics: nic_slots(nics, "cx7-ndr-400", true),
            domain: None,
        }),
    )
}

pub fn switch(
    design: &mut Design,
    name: &str,
    model: &str,
    role: SwitchRole,
    features: SwitchFeatures,
) -> DeviceId {
    add(
        design,
        name,
        DeviceKind::Switch(Switch {
            model: PartId::new(model),
            role,
            breakout: 1,
            rail: None,
            features,
        }),
    )
}

pub fn ib_features() -> SwitchFeatures {
    SwitchFeatures {
        in_network_reduction: false,
        adaptive_routing: true,
        lossless: true,
    }
}

pub fn link(
    design: &mut Design,
    a: (DeviceId, u32),
    b: (DeviceId, u32),
    tech: LinkTech,
    gbit_s: f64,
) -> railyard::model::LinkId {
    let (a, b) = (v1_end(design, a, tech), v1_end(design, b, tech));
    design.add_link(Link::new(a, b, tech, Bandwidth::from_gbit_s(gbit_s)))
}

pub fn single_dgx() -> Design {
    let mut d = Design::new("1x DGX H100");
    dgx_h100(&mut d, "dgx-0", 0);
    d
}

/// `nodes` DGX H100 on a rail-optimized InfiniBand fabric: one leaf per rail, NIC i of every
/// node on leaf i.
pub fn dgx_rail_leaves(nodes: u32) -> Design {
    let mut d = Design::new("DGX H100 rail leaves");
    let ids: Vec<DeviceId> = (0..nodes)
        .map(|i| dgx_h100(&mut d, &format!("dgx-{i}"), 8))
        .collect();
    for r in 0..8 {
        let leaf = switch(
            &mut d,
            &format!("leaf-{r}"),
            "qm9700",
            SwitchRole::Leaf,
            ib_features(),
        );
        for (i, &n) in ids.iter().enumerate() {
            link(
                &mut d,
                (n, r),
                (leaf, i as u32),
                LinkTech::InfiniBand,
                400.0,
            );
        }
    }
    d
}

/// Four one-GPU servers, each with one 100 Gb/s InfiniBand NIC, on one switch: a bus whose
/// every port carries 100 Gb/s.
pub fn ib_bus4() -> Design {
    let mut d = Design::new("4 GPUs on a 100G switch");
    let sw = switch(&mut d, "sw", "qm8700", SwitchRole::Leaf, ib_features());
    for i in 0..4 {
        let n = add(
            &mut d,
            &format!("node-{i}"),
            DeviceKind::GpuNode(GpuNode {
                model: PartId::new("workstation"),
                gpu: PartId::new("a100-pcie"),
                gpu_count: 1,
                scale_up: ScaleUp::Pcie {
                    generation: 4,
                    via: PcieVia::HostBridge,
                    peer_to_peer: true,
                },
                nics: nic_slots(1, "cx6-hdr-200", true),
                domain: None,
            }),
        );
        link(&mut d, (n, 0), (sw, i), LinkTech::InfiniBand, 100.0);
    }
    d
}

/// A workstation with four RTX 4090 on PCIe gen4.
pub fn pcie_box(peer_to_peer: bool) -> Design {
    let mut d = Design::new("4x RTX 4090");
    add(
        &mut d,
        "box",
        DeviceKind::GpuNode(GpuNode {
            model: PartId::new("workstation"),
            gpu: PartId::new("rtx-4090"),
            gpu_count: 4,
            scale_up: ScaleUp::Pcie {
                generation: 4,
                via: PcieVia::HostBridge,
                peer_to_peer,
            },
            nics: Vec::new(),
            domain: None,
        }),
    );
    d
}

/// Mac Studios in a Thunderbolt 4 ring (port 0 to the next Mac's port 1), IP over TB.
pub fn mac_ring(n: u32, tech: LinkTech, transport: Transport) -> Design {
    let mut d = Design::new("Mac ring");
    let macs: Vec<DeviceId> = (0..n)
        .map(|i| {
            add(
                &mut d,
                &format!("mac-{i}"),
                DeviceKind::GpuNode(GpuNode {
                    model: PartId::new("mac-studio-m2-ultra"),
                    gpu: PartId::new("m2-ultra"),
                    gpu_count: 1,
                    scale_up: ScaleUp::UnifiedMemory,
                    nics: Vec::new(),
                    domain: None,
                }),
            )
        })
        .collect();
    let rate = if tech == LinkTech::Thunderbolt5 {
        80.0
    } else {
        40.0
    };
    for i in 0..n as usize {
        let id = link(
            &mut d,
            (macs[i], 0),
            (macs[(i + 1) % n as usize], 1),
            tech,
            rate,
        );
        if let Some(l) = d.link_mut(id) {
            l.transport = transport;
        }
    }
    d
}

/// `mac_ring` of 4 with its two diagonals cabled too: every pair of Macs joined directly.
pub fn mac_mesh4(tech: LinkTech, transport: Transport) -> Design {
    let mut d = mac_ring(4, tech, transport);
    let macs: Vec<DeviceId> = d.devices.iter().map(|dev| dev.id).collect();
    let rate = d.links[0].rate_gbit_s;
    for (a, b) in [(0, 2), (1, 3)] {
        let id = link(&mut d, (macs[a], 2), (macs[b], 2), tech, rate.gbit_s());
        if let Some(l) = d.link_mut(id) {
            l.transport = transport;
        }
    }
    d
}

/// Two leaves of `per_leaf` one-GPU nodes (one 100G NIC each) and `spines` spines, one link
/// from each leaf to each spine. Node order alternates leaves when `interleave`.
pub fn two_leaf(per_leaf: u32, spines: u32, interleave: bool) -> Design {
    let mut d = Design::new("two leaves");
    let leaves = [
        switch(
            &mut d,
            "leaf-0",
            "qm8700",
            SwitchRole::Leaf,
            SwitchFeatures::default(),
        ),
        switch(
            &mut d,
            "leaf-1",
            "qm8700",
            SwitchRole::Leaf,
            SwitchFeatures::default(),
        ),
    ];
    let sp: Vec<DeviceId> = (0..spines)
        .map(|i| {
            switch(
                &mut d,
                &format!("spine-{i}"),
                "qm8700",
                SwitchRole::Spine,
                SwitchFeatures::default(),
            )
        })
        .collect();
    for (li, &leaf) in leaves.iter().enumerate() {
        for (si, &s) in sp.iter().enumerate() {
            link(
                &mut d,
                (leaf, 100 + si as u32),
                (s, li as u32),
                LinkTech::InfiniBand,
                100.0,
            );
        }
    }
    for i in 0..2 * per_leaf {
        let (leaf, port) = if interleave {
            (leaves[(i % 2) as usize], i / 2)
        } else {
            (leaves[(i / per_leaf) as usize], i % per_leaf)
        };
        let n = add(
            &mut d,
            &format!("node-{i}"),
            DeviceKind::GpuNode(GpuNode {
                model: PartId::new("workstation"),
                gpu: PartId::new("a100-pcie"),
                gpu_count: 1,
                scale_up: ScaleUp::Pcie {
                    generation: 4,
                    via: PcieVia::HostBridge,
                    peer_to_peer: true,
                },
                nics: nic_slots(1, "cx6-hdr-200", true),
                domain: None,
            }),
        );
        link(&mut d, (n, 0), (leaf, port), LinkTech::InfiniBand, 100.0);
    }
    d
}

/// A rail-optimized fat-tree of DGX H100 nodes on 64-port NDR switches: scalable units of
/// 32 nodes with one leaf per rail; leaves of a rail in a pod (up to 32 units) share 32
/// spines; with more than one pod, spines of a rail reach a core layer of that rail.
pub fn rail_optimized(gpus: u32) -> Design {
    let nodes = gpus / 8;
    let per_leaf = 32.min(nodes);
    let units = nodes.div_ceil(per_leaf);
    let units_per_pod = 32u32;
    let pods = units.div_ceil(units_per_pod);
    let mut d = Design::new(format!("rail-optimized {gpus} GPUs"));
    let node_ids: Vec<DeviceId> = (0..nodes)
        .map(|i| dgx_h100(&mut d, &format!("dgx-{i}"), 8))
        .collect();
    let f = ib_features();
    for rail in 0..8u32 {
        // Cores of this rail: 8 groups of 32 when there are several pods.
        let spines_per_pod = 32u32.min(units.max(1)).max(1);
        let core_groups = if pods > 1 {
            8u32.min(spines_per_pod)
        } else {
            0
        };
        let cores: Vec<Vec<DeviceId>> = (0..core_groups)
            .map(|g| {
                (0..32)
                    .map(|c| {
                        switch(
                            &mut d,
                            &format!("core-r{rail}-g{g}-{c}"),
                            "qm9700",
                            SwitchRole::Core,
                            f,
                        )
                    })
                    .collect()
            })
            .collect();
        let mut core_port = vec![vec![0u32; 32]; core_groups as usize];
        for pod in 0..pods {
            let first_unit = pod * units_per_pod;
            let pod_units = (units - first_unit).min(units_per_pod);
            let spines: Vec<DeviceId> = if units > 1 {
                (0..spines_per_pod)
                    .map(|s| {
                        switch(
                            &mut d,
                            &format!("spine-r{rail}-p{pod}-{s}"),
                            "qm9700",
                            SwitchRole::Spine,
                            f,
                        )
                    })
                    .collect()
            } else {
                Vec::new()
            };
            for u in 0..pod_units {
                let unit = first_unit + u;
                let leaf = switch(
                    &mut d,
                    &format!("leaf-r{rail}-u{unit}"),
                    "qm9700",
                    SwitchRole::Leaf,
                    f,
                );
                for k in 0..per_leaf {
                    let node = unit * per_leaf + k;
                    if node < nodes {
                        link(
                            &mut d,
                            (node_ids[node as usize], rail),
                            (leaf, k),
                            LinkTech::InfiniBand,
                            400.0,
                        );
                    }
                }
                // 32 uplinks spread over the pod's spines.
                if !spines.is_empty() {
                    for up in 0..32u32 {
                        let s = spines[(up % spines.len() as u32) as usize];
                        link(
                            &mut d,
                            (leaf, 32 + up),
                            (s, u + (up / spines.len() as u32) * pod_units),
                            LinkTech::InfiniBand,
                            400.0,
                        );
                    }
                }
            }
            for (si, &s) in spines.iter().enumerate() {
                if core_groups == 0 {
                    continue;
                }
                let g = si as u32 % core_groups;
                for c in 0..32usize {
                    let port = core_port[g as usize][c];
                    core_port[g as usize][c] += 1;
                    link(
                        &mut d,
                        (s, 32 + c as u32),
                        (cores[g as usize][c], port),
                        LinkTech::InfiniBand,
                        400.0,
                    );
                }
            }
        }
    }
    d
}
