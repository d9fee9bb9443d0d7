//! The architect's rules: findings about the fabric that cost collective time or
//! availability, each naming the devices and links concerned and a suggested change.

use super::workload::{Workload, WorkloadResult};
use super::workspace::Workspace;
use super::{CollectiveQuery, CollectiveResult, Op, Routing, collective_in};
use crate::model::catalog::PartSpec;
use crate::model::units::time_text;
use crate::model::{
    Bytes, Catalog, Design, DeviceId, DeviceKind, GroupKind, LinkId, LinkState, LinkTech,
    SwitchRole, Transport,
};
use std::borrow::Cow;
use std::collections::HashMap;

pub use crate::analysis::finding::{Finding, Severity};

fn item(
    severity: Severity,
    code: &'static str,
    message: String,
    devices: Vec<DeviceId>,
    links: Vec<LinkId>,
    suggestion: &str,
) -> Finding {
    Finding {
        severity,
        code,
        message,
        devices,
        links,
        suggestion: suggestion.into(),
    }
}

fn working(l: &crate::model::Link) -> bool {
    l.state != LinkState::Failed && l.capacity().gbit_s() > 0.0
}

/// Findings for a design, optionally for a workload it is meant to run; most severe first.
pub fn advice(design: &Design, catalog: &Catalog, workload: Option<&Workload>) -> Vec<Finding> {
    advice_reusing(design, catalog, workload, None, &Workspace::default())
}

/// `advice`, reusing a collective the caller has already computed for the design (the
/// sidebar's and `eval`'s) where a rule asks for the same one, and the caller's workspace
/// for the others.
pub fn advice_reusing(
    design: &Design,
    catalog: &Catalog,
    workload: Option<&Workload>,
    known: Option<(&CollectiveQuery, &CollectiveResult)>,
    workspace: &Workspace,
) -> Vec<Finding> {
    let run = |q: &CollectiveQuery| match known {
        Some((kq, kr)) if kq == q => Ok(Cow::Borrowed(kr)),
        _ => collective_in(design, catalog, q, workspace).map(Cow::Owned),
    };
    // A 1 GiB all-reduce under ECMP: two rules read it, so it runs once.
    let ecmp_all_reduce = CollectiveQuery::new(Op::AllReduce, Bytes(1 << 30));
    let ecmp_result = std::cell::OnceCell::new();
    let ecmp_all_reduce = || ecmp_result.get_or_init(|| run(&ecmp_all_reduce));
    let mut out = Vec::new();
    let library = super::Library::of(design, catalog);
    let kind_of = |id: DeviceId| design.device(id).map(|d| &d.kind);
    let name = |id: DeviceId| {
        design
            .device(id)
            .map_or_else(|| id.to_string(), |d| d.name.clone())
    };
    let is_switch = |id: DeviceId| matches!(kind_of(id), Some(DeviceKind::Switch(_)));
    let is_node = |id: DeviceId| matches!(kind_of(id), Some(DeviceKind::GpuNode(_)));
    let links_of = links_by_device(design);
    let nodes: Vec<DeviceId> = design
        .devices
        .iter()
        .filter(|d| is_node(d.id))
        .map(|d| d.id)
        .collect();
    let scale_up = design
        .devices
        .iter()
        .filter_map(|d| d.kind.as_node())
        .map(|n| n.gpu_count)
        .max()
        .unwrap_or(0);

    // Network links between different nodes' ports, by technology.
    let net_links: Vec<&crate::model::Link> = design
        .links
        .iter()
        .filter(|l| {
            working(l) && (is_node(l.a.device) || is_node(l.b.device)) && l.a.device != l.b.device
        })
        .collect();

    // Tensor parallelism across nodes over a slow network (a job the GPUs can hold: one
    // asking for more GPUs than there are is refused by the workload, not advised on).
    if let Some(w) = workload
        && w.tp > scale_up
        && nodes.len() > 1
        && u64::from(w.tp) <= design.gpu_count()
    {
        let slow: Vec<&crate::model::Link> = net_links
            .iter()
            .copied()
            .filter(|l| match l.tech {
                LinkTech::InfiniBand => false,
                LinkTech::RoceV2 | LinkTech::Ethernet => match l.transport {
                    Transport::Tcp => true,
                    Transport::Rdma => !lossless_ends(design, l.a.device, l.b.device),
                    // SRD recovers losses itself: no PFC needed.
                    Transport::Efa => false,
                },
                // RDMA over Thunderbolt 5 (JACCL) is what Mac clusters run tensor
                // parallelism over; TCP over Thunderbolt is not.
                LinkTech::Thunderbolt5 => l.transport != Transport::Rdma,
                _ => true,
            })
            .collect();
        if !slow.is_empty() {
            // Macs take no NICs: their way to a fast network is RDMA over Thunderbolt 5.
            let remedy = if matches!(
                slow[0].tech,
                LinkTech::Thunderbolt4 | LinkTech::Thunderbolt5
            ) {
                "keep tensor parallelism inside a machine and use pipeline or data parallelism across machines, or join Thunderbolt 5 machines with RDMA (MLX's JACCL backend, macOS 26.2 and later)"
            } else {
                "keep tensor parallelism inside a node (tp ≤ GPUs per node) and use pipeline or data parallelism across nodes, or move to InfiniBand or lossless RoCE"
            };
            out.push(item(
                Severity::Error,
                "tp-across-slow-network",
                format!(
                    "tensor parallelism of {} spans nodes of {} GPUs over {}: its per-layer all-reduces will stall every step",
                    w.tp,
                    scale_up,
                    slow[0].tech.label()
                ),
                nodes.clone(),
                slow.iter().map(|l| l.id).collect(),
                remedy,
            ));
        }
    }

    // RDMA the library leaves unused: Gloo runs TCP over every link.
    let rdma_links: Vec<&&crate::model::Link> = net_links
        .iter()
        .filter(|l| {
            library == super::Library::Gloo
                && (l.tech == LinkTech::InfiniBand
                    || (l.transport == Transport::Rdma
                        && (l.tech.is_ethernet_family() || l.tech == LinkTech::Thunderbolt5))
                    || (l.transport == Transport::Efa && l.tech.is_ethernet_family()))
        })
        .collect();
    if !rdma_links.is_empty() {
        let rdma_unused: Vec<LinkId> = rdma_links.iter().map(|l| l.id).collect();
        let mut devs: Vec<DeviceId> = rdma_links
            .iter()
            .flat_map(|l| [l.a.device, l.b.device])
            .collect();
        devs.sort_unstable();
        devs.dedup();
        out.push(item(
            Severity::Info,
            "rdma-unused",
            format!(
                "{} link(s) offer RDMA that Gloo does not use: it runs TCP, a socket exchange per message",
                rdma_unused.len()
            ),
            devs,
            rdma_unused,
            "where the framework allows, use a library that runs RDMA: NCCL on NVIDIA GPUs, MLX's JACCL on Macs over Thunderbolt 5",
        ));
    }

    // Thunderbolt beyond prototyping.
    let tb: Vec<&crate::model::Link> = net_links
        .iter()
        .copied()
        .filter(|l| l.tech.is_thunderbolt())
        .collect();
    if !tb.is_empty() {
        // Serving replicas exchange nothing: only tensor and expert splits cross the links.
        let heavy = workload.is_some_and(|w| {
            w.tp > scale_up || w.moe.is_some() || (!w.serving && w.dp.unwrap_or(2) > 1)
        });
        let serving = workload.is_some_and(|w| w.serving);
        // A job whose tensor parallelism stays inside each node sends its gradients, not its
        // activations, over Thunderbolt.
        let tp_stays_inside = workload.is_some_and(|w| w.tp <= scale_up && w.moe.is_none());
        let mut devs: Vec<DeviceId> = tb.iter().flat_map(|l| [l.a.device, l.b.device]).collect();
        devs.sort_unstable();
        devs.dedup();
        // What each link carries under the library: its usable rate, and whether a message
        // costs a TCP exchange or an RDMA write.
        let usable: Vec<f64> = tb
            .iter()
            .map(|l| {
                (l.capacity().gbit_s()
                    * super::efficiency::library_link_efficiency(
                        library,
                        l.tech,
                        l.transport,
                        true,
                    ))
                .round()
            })
            .collect();
        let (lo, hi) = usable
            .iter()
            .fold((f64::INFINITY, 0.0_f64), |(lo, hi), &u| {
                (lo.min(u), hi.max(u))
            });
        let rate = if lo == hi {
            format!("~{hi} Gb/s")
        } else {
            format!("~{lo}–{hi} Gb/s")
        };
        let over_tcp = tb.iter().any(|l| {
            super::efficiency::transport_of(library, l.tech, l.transport) == Transport::Tcp
        });
        // MLX's documentation: JACCL's latency is what tensor parallelism across Macs needs.
        let per_message = if tp_stays_inside {
            if over_tcp {
                "a TCP exchange of tens to hundreds of µs per message"
            } else {
                "about 25 µs per message over RDMA (MLX's all-reduce; the link alone 3 to 9 µs)"
            }
        } else if over_tcp {
            "a TCP exchange of tens to hundreds of µs per message: fine for pipeline stages and \
             data parallelism with large batches, too slow for tensor parallelism, which moves \
             every layer's activations"
        } else {
            "about 25 µs per message over RDMA (MLX's all-reduce), an order of magnitude under TCP: \
             low enough for tensor parallelism, but every layer's activations still cross at \
             that rate"
        };
        // Macs have no slot for a faster NIC: their remedy is where the traffic goes.
        let macs = library.is_mlx();
        out.push(item(
            if heavy { Severity::Warning } else { Severity::Info },
            "thunderbolt",
            format!(
                "{} Thunderbolt link(s): {rate} usable, {per_message}",
                tb.len(),
            ),
            devs.clone(),
            tb.iter().map(|l| l.id).collect(),
            if macs && tp_stays_inside && serving {
                "replicas that each fit one Mac exchange nothing over Thunderbolt: only a model split across Macs (tensor or pipeline) uses these links"
            } else if macs && tp_stays_inside {
                "data parallelism sends each step's whole gradient at that rate: a larger global batch per step spreads that transfer over more tokens"
            } else if macs {
                "keep tensor parallelism inside as few Macs as the model's memory allows; across the rest run pipeline stages or data parallelism"
            } else {
                "use Thunderbolt for prototypes or pipeline stages; for data-parallel training move to 100G+ Ethernet with RDMA or InfiniBand"
            },
        ));
        // RDMA over Thunderbolt exists on Thunderbolt 5 only (macOS 26.2, MLX's JACCL): TCP
        // over TB5 leaves microseconds per message on the table; TB4 has no RDMA at all.
        let tb5_tcp: Vec<LinkId> = tb
            .iter()
            .filter(|l| l.tech == LinkTech::Thunderbolt5 && l.transport == Transport::Tcp)
            .map(|l| l.id)
            .collect();
        let tb4: Vec<LinkId> = tb
            .iter()
            .filter(|l| l.tech == LinkTech::Thunderbolt4)
            .map(|l| l.id)
            .collect();
        if !tb5_tcp.is_empty() {
            out.push(item(
                Severity::Info,
                "thunderbolt5-rdma",
                format!(
                    "{} Thunderbolt 5 link(s) carry TCP: MLX's ring backend pays a socket exchange per ring step",
                    tb5_tcp.len()
                ),
                devs.clone(),
                tb5_tcp,
                "on macOS 26.2 or later enable RDMA over Thunderbolt 5 (rdma_ctl enable in recovery) and use MLX's JACCL backend: about 25 µs per message (MLX's all-reduce) instead of a ~300 µs TCP exchange",
            ));
        } else if !tb4.is_empty() && tb4.len() == tb.len() {
            // Macs whose own ports are Thunderbolt 5 need only TB5 cables, not other Macs.
            let tb5_ports = devs.iter().all(|&id| {
                design
                    .device(id)
                    .and_then(|d| d.kind.as_node())
                    .and_then(|n| catalog.node(&n.model))
                    .is_some_and(|spec| spec.thunderbolt_generation == Some(5))
            });
            out.push(item(
                Severity::Info,
                "thunderbolt4-no-rdma",
                format!(
                    "{} Thunderbolt 4 link(s): no RDMA over Thunderbolt 4, so collectives run over TCP",
                    tb4.len()
                ),
                devs,
                tb4,
                if tb5_ports {
                    "these Macs' ports are Thunderbolt 5: TB5 cables and macOS 26.2 or later allow RDMA (MLX's JACCL backend)"
                } else {
                    "Thunderbolt 5 ports (M3 Ultra, M4 Pro/Max) with macOS 26.2 or later allow RDMA (MLX's JACCL backend)"
                },
            ));
        }
    }
    // Machines on a desk: Thunderbolt left idle, a workstation past a household circuit.
    out.extend(super::desk_advice::idle_thunderbolt(design, catalog));
    out.extend(super::desk_advice::household_circuit(design, catalog));

    // RoCE without lossless configuration.
    let lossy: Vec<&crate::model::Link> = design
        .links
        .iter()
        .filter(|l| {
            working(l)
                && matches!(l.tech, LinkTech::RoceV2 | LinkTech::Ethernet)
                && l.transport == Transport::Rdma
        })
        .filter(|l| !lossless_ends(design, l.a.device, l.b.device))
        .collect();
    if !lossy.is_empty() {
        let mut sw: Vec<DeviceId> = lossy
            .iter()
            .flat_map(|l| [l.a.device, l.b.device])
            .filter(|&d| matches!(kind_of(d), Some(DeviceKind::Switch(s)) if !s.features.lossless))
            .collect();
        sw.sort_unstable();
        sw.dedup();
        out.push(item(
            Severity::Warning,
            "roce-not-lossless",
            format!(
                "RoCE over {} switch(es) without PFC/ECN ({}): drops under incast trigger go-back-N retransmission",
                sw.len(),
                sw.iter().take(3).map(|&d| name(d)).collect::<Vec<_>>().join(", ")
            ),
            sw,
            lossy.iter().map(|l| l.id).collect(),
            "configure PFC and ECN (lossless class for RDMA) on these switches, or use InfiniBand",
        ));
    }

    // Oversubscribed leaves: one finding for all of them (a 3:1 fabric has dozens).
    let mut oversubscribed: Vec<(DeviceId, f64, f64, Vec<LinkId>)> = Vec::new();
    for (d, links) in design.devices.iter().zip(&links_of) {
        let DeviceKind::Switch(s) = &d.kind else {
            continue;
        };
        if s.role != SwitchRole::Leaf {
            continue;
        }
        let (mut down, mut up) = (0.0, 0.0);
        let mut ups = Vec::new();
        for l in links.iter().filter(|l| working(l)) {
            let Some(other) = l.other_end(d.id) else {
                continue;
            };
            if is_switch(other.device) {
                up += l.capacity().gbit_s();
                ups.push(l.id);
            } else if is_node(other.device) {
                down += l.capacity().gbit_s();
            }
        }
        if up > 0.0 && down > up * 1.01 {
            oversubscribed.push((d.id, down, up, ups));
        }
    }
    if let Some(&(first, down, up, _)) = oversubscribed.first() {
        let ratio = |&(_, down, up, _): &(DeviceId, f64, f64, Vec<LinkId>)| down / up;
        let (least, most) = oversubscribed
            .iter()
            .map(ratio)
            .fold((f64::INFINITY, 0.0f64), |(lo, hi), r| {
                (lo.min(r), hi.max(r))
            });
        let message = if oversubscribed.len() == 1 {
            format!(
                "uplinks of {} are {:.1}:1 oversubscribed ({} Gb/s down, {} Gb/s up): traffic between leaves queues there",
                name(first),
                down / up,
                down.round(),
                up.round()
            )
        } else {
            let span = if most - least < 0.05 {
                format!("{most:.1}:1")
            } else {
                format!("{least:.1}:1 to {most:.1}:1")
            };
            format!(
                "uplinks of {} leaves are {span} oversubscribed (node-facing capacity over uplink capacity), such as {} ({} Gb/s down, {} Gb/s up): traffic between leaves queues there",
                oversubscribed.len(),
                name(first),
                down.round(),
                up.round()
            )
        };
        // Each rail on one leaf of its own (a rail-optimized fabric of one scalable unit):
        // NCCL keeps collectives on the rails (PXN moves data to the right rail over NVLink
        // first), so only traffic between rails climbs those uplinks.
        let mut rails: Vec<Option<u32>> = design
            .devices
            .iter()
            .filter_map(|d| d.kind.as_switch())
            .filter(|s| s.role == SwitchRole::Leaf)
            .map(|s| s.rail)
            .collect();
        let leaf_count = rails.len();
        rails.sort_unstable();
        rails.dedup();
        let one_leaf_per_rail =
            leaf_count > 0 && rails.len() == leaf_count && rails.iter().all(Option::is_some);
        if one_leaf_per_rail {
            out.push(item(
                Severity::Info,
                "oversubscribed-uplinks",
                format!(
                    "{message}; but each rail's NICs all sit on its one leaf, so NCCL's \
                     collectives (rail-aligned, PXN between rails) never climb them: the ratio \
                     shows only in traffic between rails (storage, other jobs on the fabric, \
                     all-to-all without PXN)"
                ),
                oversubscribed.iter().map(|o| o.0).collect(),
                oversubscribed
                    .iter()
                    .flat_map(|o| o.3.iter().copied())
                    .collect(),
                "keep 1:1 if traffic between rails matters here; once a rail needs more than one \
                 leaf, collectives cross the spines too",
            ));
        } else {
            out.push(item(
                Severity::Warning,
                "oversubscribed-uplinks",
                message,
                oversubscribed.iter().map(|o| o.0).collect(),
                oversubscribed.iter().flat_map(|o| o.3.iter().copied()).collect(),
                "add uplinks or spines until uplink capacity matches the node-facing ports (1:1 for training)",
            ));
        }
    }

    // GPUDirect off. Only NCCL reads GPU memory from the NIC: MLX and Gloo run on the CPU
    // and go through host memory whatever the NIC offers.
    // GPUDirect RDMA is the NIC reaching GPU memory as a PCIe peer: cards whose driver turns
    // peer-to-peer off (GeForce) have none to enable, so they are told so, not to enable it.
    let nccl = library.is_nccl();
    let mut no_gdr: Vec<DeviceId> = Vec::new();
    let mut cannot_gdr: Vec<DeviceId> = Vec::new();
    let mut gdr_past_level: Vec<DeviceId> = Vec::new();
    for d in &design.devices {
        let Some(n) = d.kind.as_node() else { continue };
        let peer_capable = match catalog.get(&n.gpu).map(|p| &p.spec) {
            Some(PartSpec::Gpu(g)) => g.peer_to_peer,
            _ => true,
        };
        // A GPU that is no PCIe peer has no GPUDirect RDMA, whatever its NICs say.
        if !peer_capable && !n.nics.is_empty() {
            cannot_gdr.push(d.id);
            continue;
        }
        if n.nics.iter().all(|s| s.gpudirect) {
            // GPUs that meet at the host bridge leave their NICs on the CPU's root ports too,
            // past NCCL_NET_GDR_LEVEL's default (PXB): NCCL does not use GPUDirect there.
            if n.gpus_meet_at_host_bridge() && peer_capable && !n.nics.is_empty() {
                gdr_past_level.push(d.id);
            }
            continue;
        }
        if peer_capable {
            no_gdr.push(d.id);
        } else {
            cannot_gdr.push(d.id);
        }
    }
    if nccl && !no_gdr.is_empty() {
        out.push(item(
            Severity::Warning,
            "gpudirect-off",
            format!(
                "GPUDirect RDMA is off on {} node(s): network traffic bounces through host memory",
                no_gdr.len()
            ),
            no_gdr,
            Vec::new(),
            "enable GPUDirect RDMA (nvidia-peermem, NIC and GPU under one PCIe switch)",
        ));
    }
    if nccl && !gdr_past_level.is_empty() {
        out.push(item(
            Severity::Info,
            "gpudirect-past-level",
            format!(
                "{} node(s) have GPUs and NICs that meet only at the host bridge: NCCL uses \
                 GPUDirect RDMA only as far as a PCIe switch they share (NCCL_NET_GDR_LEVEL \
                 defaults to PXB), so network traffic bounces through host memory",
                gdr_past_level.len()
            ),
            gdr_past_level,
            Vec::new(),
            "NCCL_NET_GDR_LEVEL=PHB lets NCCL use it across the host bridge (measure it: some \
             CPUs pass peer traffic slowly); servers with a PCIe switch per GPU and NIC pair do \
             not need it",
        ));
    }
    if nccl && !cannot_gdr.is_empty() {
        out.push(item(
            Severity::Info,
            "gpudirect-unsupported",
            format!(
                "{} node(s) have GPUs without PCIe peer-to-peer (GeForce cards), so without \
                 GPUDirect RDMA: network traffic bounces through host memory",
                cannot_gdr.len()
            ),
            cannot_gdr,
            Vec::new(),
            "expected with these cards; data-center and professional GPUs let the NIC read and \
             write their memory directly",
        ));
    }

    // Single spine or plane whose loss cuts the fabric.
    out.extend(single_points(design, &links_of));

    // Tiers of switches where one switch would connect every port.
    out.extend(one_switch_would_do(design, catalog));

    // ECMP with few elephant flows.
    let multipath = design.devices.iter().zip(&links_of).any(|(d, links)| {
        matches!(&d.kind, DeviceKind::Switch(s) if s.role == SwitchRole::Leaf)
            && links
                .iter()
                .filter(|l| working(l) && l.other_end(d.id).is_some_and(|o| is_switch(o.device)))
                .count()
                >= 2
    });
    let all_adaptive = design
        .devices
        .iter()
        .all(|d| !matches!(&d.kind, DeviceKind::Switch(s) if !s.features.adaptive_routing));
    if multipath {
        let mut q = CollectiveQuery::new(Op::AllReduce, Bytes(1 << 30));
        q.routing = Routing::Adaptive;
        let adaptive = run(&q);
        if let (Ok(e), Ok(a)) = (ecmp_all_reduce(), adaptive)
            && e.time_us > a.time_us * 1.05
        {
            let links: Vec<LinkId> = e.bottleneck.iter().filter_map(|b| b.link).take(4).collect();
            let mut devs: Vec<DeviceId> = links
                .iter()
                .filter_map(|&l| design.link(l))
                .flat_map(|l| [l.a.device, l.b.device])
                .filter(|&d| is_switch(d))
                .collect();
            devs.sort_unstable();
            devs.dedup();
            // Switches that can route adaptively do so only when it is turned on (the subnet
            // manager's AR mode on InfiniBand, RoCE adaptive routing on Spectrum-X): the
            // static routes railyard times by default are what they run until then.
            let (code, remedy) = if all_adaptive {
                (
                    "adaptive-routing-off",
                    "the switches support adaptive routing: turn it on (the subnet manager's AR mode on InfiniBand, adaptive routing on Spectrum-X Ethernet), and time the design with it (--routing adaptive, or the sidebar's routing)",
                )
            } else {
                (
                    "ecmp-elephants",
                    "enable adaptive routing or packet spraying on the switches",
                )
            };
            out.push(item(
                Severity::Warning,
                code,
                format!(
                    "static routing puts a few large collective flows on the same uplinks (modelled as a hash of each connection): a 1 GiB all-reduce takes {} instead of {} with adaptive routing",
                    time_text(e.time_us),
                    time_text(a.time_us)
                ),
                devs,
                links,
                remedy,
            ));
        }
    }

    // NCCL's tuner picks blind to the queues between switches: where they make another
    // algorithm run the 1 GiB all-reduce at least 10 % faster, say which and how to force it.
    if library.is_nccl()
        && let Ok(e) = ecmp_all_reduce()
        && e.unseen_queueing > 1.001
        && let Some(faster) = e
            .candidates
            .iter()
            .filter(|c| c.time_us < e.time_us * 0.9)
            .filter(|c| nccl_algo_name(c.algorithm).is_some())
            .min_by(|a, b| a.time_us.total_cmp(&b.time_us))
        && let Some(algo) = nccl_algo_name(faster.algorithm)
    {
        let links: Vec<LinkId> = e.bottleneck.iter().filter_map(|b| b.link).take(4).collect();
        let remedy = format!(
            "set NCCL_ALGO={algo} and NCCL_PROTO={} for this fabric's large all-reduces (and \
             time it with the sidebar's algorithm or eval --algo), or spread the flows so that \
             the pick runs at its rate",
            faster.protocol.label()
        );
        out.push(item(
            Severity::Warning,
            "tuner-blind-to-queues",
            format!(
                "NCCL's tuner picks {}/{} for a 1 GiB all-reduce without seeing the queues \
                 between switches, which make it take {}: {}/{} would take {} ({:+.0} %)",
                e.algorithm,
                e.protocol.label(),
                time_text(e.time_us),
                faster.algorithm,
                faster.protocol.label(),
                time_text(faster.time_us),
                (faster.time_us / e.time_us - 1.0) * 100.0
            ),
            Vec::new(),
            links,
            &remedy,
        ));
    }

    // Mixed speeds: a few slow cables pace a collective the rest of the fabric could run
    // faster. Only links the default all-reduce keeps at least 90 % busy count.
    let fastest_gbit_s = net_links
        .iter()
        .filter(|l| l.tech.is_network())
        .map(|l| l.rate_gbit_s.gbit_s())
        .fold(0.0, f64::max);
    if fastest_gbit_s > 0.0
        && let Ok(result) = ecmp_all_reduce()
    {
        let slow: Vec<&crate::model::Link> = result
            .bottleneck
            .iter()
            .filter(|b| b.utilization >= 0.9)
            .filter_map(|b| b.link.and_then(|id| design.link(id)))
            .filter(|l| l.tech.is_network() && l.rate_gbit_s.gbit_s() < fastest_gbit_s)
            .collect();
        if let Some(first) = slow.first() {
            let mut devices: Vec<DeviceId> =
                slow.iter().flat_map(|l| [l.a.device, l.b.device]).collect();
            devices.sort_unstable();
            devices.dedup();
            let rate = first.rate_gbit_s;
            out.push(item(
                Severity::Warning,
                "slow-links-saturated",
                format!(
                    "{} link(s) at {rate}, such as {} – {}, are the busiest of a 1 GiB all-reduce ({}) while other network links run at {}: they set its pace",
                    slow.len(),
                    name(first.a.device),
                    name(first.b.device),
                    time_text(result.time_us),
                    crate::model::Bandwidth::from_gbit_s(fastest_gbit_s),
                ),
                devices,
                slow.iter().map(|l| l.id).collect(),
                &super::upgrade::upgrade_remedy(
                    design,
                    catalog,
                    &slow,
                    crate::model::Bandwidth::from_gbit_s(fastest_gbit_s),
                ),
            ));
        }
    }

    // A network the nodes cannot feed: the all-reduce waits on the GPUs' PCIe links while
    // the network links idle half the time or more, so a slower network would do as well.
    if let Ok(result) = ecmp_all_reduce()
        && let Some(first) = result.bottleneck.first()
        && first.kind == super::ResourceKind::GpuPcie
        && first.utilization >= 0.99
    {
        let busiest_network = result
            .link_utilization
            .iter()
            .filter(|(id, _)| design.link(*id).is_some_and(|l| l.tech.is_network()))
            .map(|&(_, u)| u)
            .fold(0.0_f64, f64::max);
        if busiest_network > 0.0 && busiest_network <= 0.5 {
            out.push(item(
                Severity::Info,
                "network-outpaces-pcie",
                format!(
                    "a 1 GiB all-reduce ({}) waits on the GPUs' PCIe links inside the nodes, \
                     while the busiest network link is {:.0} % busy: a network of half the \
                     rate would take the same time",
                    time_text(result.time_us),
                    busiest_network * 100.0
                ),
                first.device.into_iter().collect(),
                Vec::new(),
                "spend on the nodes before the network: GPUs joined by NVLink or NVSwitch, or \
                 PCIe switches that keep GPU-to-GPU traffic off the host; or price a slower \
                 network (railyard compare)",
            ));
        }
    }

    // Replicated serving on an expensive fabric.
    if let Some(w) = workload
        && w.serving
    {
        let fits = design
            .devices
            .iter()
            .filter_map(|d| d.kind.as_node())
            .all(|n| {
                catalog.gpu(&n.gpu).is_some_and(|g| {
                    g.memory_gb * 1e9 * f64::from(n.gpu_count) * 0.8 >= w.weight_bytes()
                })
            });
        let fast: Vec<LinkId> = net_links
            .iter()
            .filter(|l| {
                matches!(l.tech, LinkTech::InfiniBand | LinkTech::RoceV2)
                    && l.capacity().gbit_s() >= 200.0
            })
            .map(|l| l.id)
            .collect();
        if fits && !fast.is_empty() && nodes.len() > 1 {
            out.push(item(
                Severity::Warning,
                "replicate-before-distribute",
                format!(
                    "{} fits in one node, so serving replicas need no GPU fabric, yet {} drawn",
                    w.name,
                    crate::model::units::count_of(fast.len(), "fast link is", "fast links are")
                ),
                nodes.clone(),
                fast,
                "replicate before you distribute: serve one replica per node behind a load balancer on ordinary Ethernet",
            ));
        }
    }

    out.sort_by(|a, b| a.severity.cmp(&b.severity).then(a.code.cmp(b.code)));
    out
}

/// A workload part this much slower than on the ideal network is worth a warning.
const CONGESTED: f64 = 1.2;

/// Adds to `advice` the findings of a computed workload: each part that takes markedly longer
/// than on an ideal network, with the drawn links it loads most (and their switches), then
/// sorts as `advice` does.
pub fn add_workload_advice(advice: &mut Vec<Finding>, design: &Design, result: &WorkloadResult) {
    for part in &result.components {
        if part.time_us_per_step <= part.ideal_us_per_step * CONGESTED {
            continue;
        }
        let busiest: Vec<&super::LinkLoad> = part
            .bottleneck
            .iter()
            .filter(|b| b.link.is_some())
            .take(4)
            .collect();
        let links: Vec<LinkId> = busiest.iter().filter_map(|b| b.link).collect();
        let mut devices: Vec<DeviceId> = links
            .iter()
            .filter_map(|&l| design.link(l))
            .flat_map(|l| [l.a.device, l.b.device])
            .filter(|&d| {
                matches!(
                    design.device(d).map(|x| &x.kind),
                    Some(DeviceKind::Switch(_))
                )
            })
            .collect();
        devices.sort_unstable();
        devices.dedup();
        let at = busiest.first().map_or_else(String::new, |b| {
            format!(
                "; busiest link {} at {:.0} %",
                b.label,
                b.utilization * 100.0
            )
        });
        advice.push(item(
            Severity::Warning,
            "workload-congestion",
            format!(
                "{}: {} per step against {} on an ideal network{at}",
                part.name,
                time_text(part.time_us_per_step),
                time_text(part.ideal_us_per_step)
            ),
            devices,
            links,
            "spread this traffic: adaptive routing or packet spraying, more uplinks, or a placement that keeps these groups under fewer switches",
        ));
    }
    advice.sort_by(|a, b| a.severity.cmp(&b.severity).then(a.code.cmp(b.code)));
}

fn lossless_ends(design: &Design, a: DeviceId, b: DeviceId) -> bool {
    [a, b]
        .iter()
        .all(|&d| match design.device(d).map(|x| &x.kind) {
            Some(DeviceKind::Switch(s)) => s.features.lossless,
            _ => true,
        })
}

/// Each device's links (as `Design::links_of` lists them), by the device's place in
/// `design.devices`: one pass over the links instead of one per device asked about, which at
/// tens of thousands of switches and links took most of the advice's time.
fn links_by_device(design: &Design) -> Vec<Vec<&crate::model::Link>> {
    let mut out = vec![Vec::new(); design.devices.len()];
    let place = |id: DeviceId| design.devices.binary_search_by_key(&id, |d| d.id).ok();
    for l in &design.links {
        if let Some(i) = place(l.a.device) {
            out[i].push(l);
        }
        if l.b.device != l.a.device
            && let Some(i) = place(l.b.device)
        {
            out[i].push(l);
        }
    }
    out
}

/// Two or more switches whose endpoints (node and host ports) all fit on one switch of the
/// model that already serves them, at the breakout it already runs: that one switch connects
/// every pair of ports in one hop, so the other switches and the cables between switches buy
/// nothing (a rail-optimized template filled with a handful of nodes does this).
fn one_switch_would_do(design: &Design, catalog: &Catalog) -> Option<Finding> {
    let switch_of = |id: DeviceId| match design.device(id).map(|d| &d.kind) {
        Some(DeviceKind::Switch(s)) => Some(s),
        _ => None,
    };
    let switches: Vec<DeviceId> = design
        .devices
        .iter()
        .filter(|d| matches!(d.kind, DeviceKind::Switch(_)))
        .map(|d| d.id)
        .collect();
    if switches.len() < 2 {
        return None;
    }
    // Ports between a switch and anything else, by switch; cables between switches.
    let mut endpoint_ports: HashMap<DeviceId, u32> = HashMap::new();
    let mut between = 0usize;
    for l in &design.links {
        match (switch_of(l.a.device), switch_of(l.b.device)) {
            (Some(_), Some(_)) => between += 1,
            (Some(_), None) => *endpoint_ports.entry(l.a.device).or_default() += 1,
            (None, Some(_)) => *endpoint_ports.entry(l.b.device).or_default() += 1,
            (None, None) => {}
        }
    }
    let endpoints: u32 = endpoint_ports.values().sum();
    // Switches joined to no other are separate fabrics (storage, management), unless they
    // are the rails of one rail-only fabric.
    let rails = switches
        .iter()
        .all(|&id| switch_of(id).is_some_and(|s| s.rail.is_some()));
    if endpoints == 0 || (between == 0 && !rails) {
        return None;
    }
    // The largest of the switches that serve endpoints, as configured.
    let (model, ports) = endpoint_ports
        .keys()
        .filter_map(|&id| {
            let s = switch_of(id)?;
            let spec = catalog.switch(&s.model)?;
            Some((s.model.clone(), spec.ports * s.breakout.max(1)))
        })
        .max_by_key(|(_, ports)| *ports)?;
    if endpoints > ports {
        return None;
    }
    let price = |id: DeviceId| {
        switch_of(id)
            .and_then(|s| catalog.get(&s.model))
            .map_or(0.0, |p| p.price_usd().0)
    };
    let kept = catalog.get(&model).map_or(0.0, |p| p.price_usd().0);
    let saved = switches.iter().map(|&id| price(id)).sum::<f64>() - kept;
    let saving = if saved > 0.0 {
        format!(", {} less in switches", crate::model::Usd(saved).compact())
    } else {
        String::new()
    };
    let cables = if between > 0 {
        format!(", without the {between} cables between switches")
    } else {
        String::new()
    };
    Some(item(
        Severity::Warning,
        "one-switch-would-do",
        format!(
            "{} switches connect {endpoints} node and host ports, which one `{model}` ({ports} \
             ports as configured) holds: one switch puts every port one hop from every \
             other{cables}{saving}",
            switches.len(),
        ),
        switches,
        Vec::new(),
        "cable every port to one switch (the star template), unless the cluster is to grow past \
         one switch's ports soon",
    ))
}

/// Spines and cores whose loss disconnects GPU nodes, and planes likewise.
fn single_points(design: &Design, links_of: &[Vec<&crate::model::Link>]) -> Vec<Finding> {
    let index: HashMap<DeviceId, usize> = design
        .devices
        .iter()
        .enumerate()
        .map(|(i, d)| (d.id, i))
        .collect();
    let n = design.devices.len();
    let is_node: Vec<bool> = design
        .devices
        .iter()
        .map(|d| matches!(d.kind, DeviceKind::GpuNode(_)))
        .collect();
    let edges: Vec<(usize, usize)> = design
        .links
        .iter()
        .filter(|l| working(l))
        .filter_map(|l| Some((*index.get(&l.a.device)?, *index.get(&l.b.device)?)))
        .filter(|(a, b)| a != b)
        .collect();
    let components = |removed: &dyn Fn(usize) -> bool| -> usize {
        let mut parent: Vec<usize> = (0..n).collect();
        fn find(p: &mut [usize], mut x: usize) -> usize {
            while p[x] != x {
                p[x] = p[p[x]];
                x = p[x];
            }
            x
        }
        for &(a, b) in &edges {
            if removed(a) || removed(b) {
                continue;
            }
            let (ra, rb) = (find(&mut parent, a), find(&mut parent, b));
            if ra != rb {
                parent[ra] = rb;
            }
        }
        let mut roots: Vec<usize> = (0..n)
            .filter(|&i| is_node[i] && !removed(i))
            .map(|i| find(&mut parent, i))
            .collect();
        roots.sort_unstable();
        roots.dedup();
        roots.len()
    };
    let base = components(&|_| false);
    let mut out = Vec::new();
    let cut = articulation_points(n, &edges);
    for (i, d) in design.devices.iter().enumerate() {
        let DeviceKind::Switch(s) = &d.kind else {
            continue;
        };
        if !matches!(s.role, SwitchRole::Spine | SwitchRole::Core) || !cut[i] {
            continue;
        }
        if components(&|x| x == i) > base {
            out.push(item(
                Severity::Error,
                "single-point-of-failure",
                format!("losing {} ({}) cuts GPU nodes off from each other", d.name, s.role.label()),
                vec![d.id],
                links_of[i].iter().map(|l| l.id).collect(),
                "add a second spine (and uplinks to it from every leaf) so that no single switch holds the fabric together",
            ));
        }
    }
    for g in design.groups.iter().filter(|g| g.kind == GroupKind::Plane) {
        let members: Vec<usize> = design
            .devices
            .iter()
            .enumerate()
            .filter(|(_, d)| d.group == Some(g.id) && matches!(d.kind, DeviceKind::Switch(_)))
            .map(|(i, _)| i)
            .collect();
        let mut member = vec![false; n];
        for &i in &members {
            member[i] = true;
        }
        if !members.is_empty() && components(&|x| member[x]) > base {
            out.push(item(
                Severity::Error,
                "single-plane",
                format!("losing plane {} cuts GPU nodes off from each other", g.name),
                members.iter().map(|&i| design.devices[i].id).collect(),
                Vec::new(),
                "connect every node to at least two planes",
            ));
        }
    }
    out
}

/// Articulation points of an undirected graph (iterative Tarjan).
fn articulation_points(n: usize, edges: &[(usize, usize)]) -> Vec<bool> {
    let mut adj: Vec<Vec<usize>> = vec![Vec::new(); n];
    for &(a, b) in edges {
        adj[a].push(b);
        adj[b].push(a);
    }
    let mut disc = vec![usize::MAX; n];
    let mut low = vec![0; n];
    let mut cut = vec![false; n];
    let mut time = 0;
    for root in 0..n {
        if disc[root] != usize::MAX {
            continue;
        }
        disc[root] = time;
        low[root] = time;
        time += 1;
        let mut root_children = 0;
        // (vertex, parent, next neighbour index)
        let mut stack: Vec<(usize, usize, usize)> = vec![(root, usize::MAX, 0)];
        while let Some(&mut (v, parent, ref mut i)) = stack.last_mut() {
            if *i < adj[v].len() {
                let u = adj[v][*i];
                *i += 1;
                if disc[u] == usize::MAX {
                    disc[u] = time;
                    low[u] = time;
                    time += 1;
                    if v == root {
                        root_children += 1;
                    }
                    stack.push((u, v, 0));
                } else if u != parent {
                    low[v] = low[v].min(disc[u]);
                }
            } else {
                stack.pop();
                if let Some(&(p, _, _)) = stack.last() {
                    low[p] = low[p].min(low[v]);
                    if p != root && low[v] >= disc[p] {
                        cut[p] = true;
                    }
                }
            }
        }
        cut[root] = root_children > 1;
    }
    cut
}

/// NCCL_ALGO's name for an algorithm NCCL's tuner chooses among; None for those it does not
/// name so (SHARP is CollNet, set up apart; hierarchical and direct are not NCCL_ALGO values).
fn nccl_algo_name(algorithm: super::Algorithm) -> Option<&'static str> {
    use super::Algorithm;
    match algorithm {
        Algorithm::Ring => Some("Ring"),
        Algorithm::Tree => Some("Tree"),
        Algorithm::Nvls => Some("NVLS"),
        Algorithm::NvlsTree => Some("NVLSTree"),
        _ => None,
    }
}
