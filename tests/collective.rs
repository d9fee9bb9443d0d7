//! Collective-time model: numbers worked out by hand on small designs, and the properties the
//! model must keep everywhere (monotone in size, bounded by the hardware, degraded links and
//! ECMP collisions slow things down, degenerate designs give clear errors).

mod collective_fixtures;

use collective_fixtures as fx;
use railyard::analysis::collective::{
    AlgoChoice, Algorithm, CollectiveError, CollectiveQuery, Op, Protocol, Routing, Workload,
    advice, collective, parse_size, sweep, workload_step_comm,
};
use railyard::model::{
    Bandwidth, Bytes, Catalog, Design, LinkState, LinkTech, PartId, SwitchFeatures, SwitchRole,
    Transport,
};

const GIB: u64 = 1 << 30;

fn query(op: Op, bytes: u64) -> CollectiveQuery {
    CollectiveQuery::new(op, Bytes(bytes))
}

fn forced(op: Op, bytes: u64, algo: AlgoChoice, protocol: Protocol) -> CollectiveQuery {
    let mut q = query(op, bytes);
    q.algorithm = algo;
    q.protocol = Some(protocol);
    q
}

fn close(a: f64, b: f64, rel: f64) -> bool {
    (a - b).abs() <= rel * b.abs().max(1e-12)
}

#[test]
fn ring_all_reduce_on_a_100g_bus_by_hand() {
    // 4 GPUs, one 100 Gb/s InfiniBand port each, one switch. Ring all-reduce of S = 1 GiB:
    //   bandwidth: 2(n−1)/n × S / B, B = 100 Gb/s × 0.94 (InfiniBand efficiency) = 11.75 GB/s
    //              = 1.5 × 1,073,741,824 / 11.75e9 s = 137,073.42 µs
    //   latency (Simple): NCCL base 8.4 µs + 2(n−1) = 6 network steps × (NET ring Simple 14.0 µs
    //              + 0.13 µs QM8700 port-to-port + 0.01 µs for 2 m of cable) = 8.4 + 6 × 14.14
    let catalog = Catalog::builtin();
    let design = fx::ib_bus4();
    let r = collective(
        &design,
        &catalog,
        &forced(Op::AllReduce, GIB, AlgoChoice::Ring, Protocol::Simple),
    )
    .unwrap();
    let bandwidth = 1.5 * GIB as f64 / 11.75e9 * 1e6;
    let latency = 8.4 + 6.0 * (14.0 + 0.13 + 0.01);
    assert!(
        close(r.bandwidth_us, bandwidth, 1e-9),
        "{} vs {bandwidth}",
        r.bandwidth_us
    );
    assert!(
        close(r.latency_us, latency, 1e-9),
        "{} vs {latency}",
        r.latency_us
    );
    assert!(close(r.time_us, bandwidth + latency, 1e-9));
    // nccl-tests: algbw = S / t, busbw = algbw × 2(n−1)/n.
    let algbw = GIB as f64 / (r.time_us * 1e3);
    assert!(close(r.algbw_gbyte_s, algbw, 1e-12));
    assert!(close(r.busbw_gbyte_s, algbw * 1.5, 1e-12));
    assert_eq!(r.algorithm, Algorithm::Ring);
    assert_eq!(r.gpus, 4);
    // Every NIC link is equally busy; together they are the bottleneck.
    assert!(r.bottleneck[0].link.is_some());
    assert!(close(r.bottleneck[0].utilization, 1.0, 1e-9));
    assert_eq!(r.link_utilization.len(), 4);
}

/// One GPU per node: NCCL takes the tree's network column for every algorithm ("With ppn=1
/// latencies are fully exposed, use the Tree network latency", tuning.cc). The 100G bus of four
/// one-GPU servers, ring LL at 8 B: base 6.6 + 6 network steps × (NET tree LL 5.0 + 0.13 µs
/// QM8700 + 0.01 µs cable), where the ring's own column would give 2.7 a step. Eight GPUs per
/// node keep the ring's column.
#[test]
fn one_gpu_per_node_takes_the_tree_network_latency() {
    let catalog = Catalog::builtin();
    let r = collective(
        &fx::ib_bus4(),
        &catalog,
        &forced(Op::AllReduce, 8, AlgoChoice::Ring, Protocol::Ll),
    )
    .unwrap();
    let latency = 6.6 + 6.0 * (5.0 + 0.13 + 0.01);
    assert!(
        close(r.latency_us, latency, 1e-9),
        "{} vs {latency}",
        r.latency_us
    );
    // Two DGX H100 (8 per node) on rail leaves: 2 network steps at the ring's 2.7 plus the
    // path, 28 NVLink steps at the network overhead (1.0) NCCL floors them to.
    let two = collective(
        &fx::dgx_rail_leaves(2),
        &catalog,
        &forced(Op::AllReduce, 8, AlgoChoice::Ring, Protocol::Ll),
    )
    .unwrap();
    let path = (two.latency_us - 6.6 - 28.0 * 1.0) / 2.0 - 2.7;
    assert!(path > 0.0 && path < 1.0, "{path}");
}

#[test]
fn busbw_follows_nccl_tests_factors() {
    let catalog = Catalog::builtin();
    let design = fx::dgx_rail_leaves(2);
    for (op, factor) in [
        (Op::AllReduce, 2.0 * 15.0 / 16.0),
        (Op::AllGather, 15.0 / 16.0),
        (Op::ReduceScatter, 15.0 / 16.0),
        (Op::AllToAll, 15.0 / 16.0),
        (Op::Broadcast, 1.0),
        (Op::Reduce, 1.0),
        (Op::SendRecv, 1.0),
    ] {
        let r = collective(&design, &catalog, &query(op, 256 << 20)).unwrap();
        assert!(close(
            r.algbw_gbyte_s,
            (256u64 << 20) as f64 / (r.time_us * 1e3),
            1e-12
        ));
        assert!(
            close(r.busbw_gbyte_s, r.algbw_gbyte_s * factor, 1e-12),
            "{op}"
        );
    }
}

#[test]
fn pcie_box_without_peer_to_peer_goes_through_host_memory() {
    // 4× RTX 4090 on PCIe gen4 x16: 31.5 GB/s × 0.80 = 25.2 GB/s per direction per GPU.
    // Ring: 6 steps of S/4 through each GPU's link: 1.5 × S / 25.2e9. Without P2P NCCL's SHM
    // transport stages the data in host memory. One way it reaches 10.31 of PCIe 3.0 x16's
    // 15.754 GB/s line rate (nccl #384's broadcast), and a ring all-reduce uses every GPU's
    // link both ways at once, where SHM keeps 3.9 of those 10.31 GB/s (the same issue's
    // all-reduce): 31.5 × 10.31/15.754 × 3.9/10.31 = 31.5 × 3.9/15.754 = 7.798 GB/s.
    let catalog = Catalog::builtin();
    let q = forced(Op::AllReduce, GIB, AlgoChoice::Ring, Protocol::Simple);
    let p2p = collective(&fx::pcie_box(true), &catalog, &q).unwrap();
    let no_p2p = collective(&fx::pcie_box(false), &catalog, &q).unwrap();
    let expected = 1.5 * GIB as f64 / 25.2e9 * 1e6;
    assert!(
        close(p2p.bandwidth_us, expected, 1e-9),
        "{} vs {expected}",
        p2p.bandwidth_us
    );
    let through_host = 1.5 * GIB as f64 / (31.5e9 * 3.9 / 15.754) * 1e6;
    assert!(
        close(no_p2p.bandwidth_us, through_host, 1e-9),
        "{} vs {through_host}",
        no_p2p.bandwidth_us,
    );
    // LL128 is NVLink-only in NCCL: never chosen on a PCIe box.
    for s in [1u64 << 10, 1 << 20, 1 << 26] {
        let r = collective(&fx::pcie_box(true), &catalog, &query(Op::AllReduce, s)).unwrap();
        assert_ne!(r.protocol, Protocol::Ll128);
    }
}

/// NCCL 2.30.7's tuner enables LL128 across nodes only where the GPU reaches its NIC through a
/// PCIe switch they share (`ncclTopoTuneModel`: `typeInter <= PATH_PXB`, or PXN on Hopper):
/// a NIC without GPUDirect RDMA stands beyond one, and its communicators keep LL and Simple.
/// Inside one node LL128 stays on over NVLink whatever the NICs.
#[test]
fn ll128_crosses_the_network_only_beside_a_pcie_switch() {
    use railyard::model::DeviceKind;
    let catalog = Catalog::builtin();
    let without_gpudirect = |mut d: Design| {
        for dev in &mut d.devices {
            if let DeviceKind::GpuNode(n) = &mut dev.kind {
                for slot in &mut n.nics {
                    slot.gpudirect = false;
                }
            }
        }
        d
    };
    let ll128 = |d: &Design, algo: AlgoChoice| {
        collective(
            d,
            &catalog,
            &forced(Op::AllReduce, 1 << 24, algo, Protocol::Ll128),
        )
    };
    let beside = fx::dgx_rail_leaves(2);
    let beyond = without_gpudirect(fx::dgx_rail_leaves(2));
    for algo in [AlgoChoice::Ring, AlgoChoice::Tree] {
        assert_eq!(ll128(&beside, algo).unwrap().protocol, Protocol::Ll128);
        assert!(ll128(&beyond, algo).is_err(), "{algo:?}");
    }
    // The tuner's own pick never lands on it across those nodes, at any size.
    for s in [1u64 << 12, 1 << 18, 1 << 22, 1 << 26, 1 << 30] {
        let r = collective(&beyond, &catalog, &query(Op::AllReduce, s)).unwrap();
        assert_ne!(r.protocol, Protocol::Ll128, "{s} B");
    }
    // NCCL's socket transport takes host buffers only (`net_socket.cc`), so its path to the
    // network runs through the CPU as well: cables that carry TCP keep LL128 off too.
    let mut sockets = fx::dgx_rail_leaves(2);
    for link in &mut sockets.links {
        if link.tech == LinkTech::InfiniBand {
            link.tech = LinkTech::Ethernet;
            link.transport = Transport::Tcp;
        }
    }
    assert!(ll128(&sockets, AlgoChoice::Ring).is_err());
    assert_eq!(
        ll128(&beside, AlgoChoice::Ring).unwrap().protocol,
        Protocol::Ll128
    );
    // One node alone crosses no network: LL128 over NVLink stays.
    let one = without_gpudirect(fx::dgx_rail_leaves(1));
    assert_eq!(
        ll128(&one, AlgoChoice::Ring).unwrap().protocol,
        Protocol::Ll128
    );
}

#[test]
fn thunderbolt_ring_of_macs() {
    // TB4 at 40 Gb/s: 32 Gb/s PCIe tunnel (0.8) × 0.82 for IP over Thunderbolt = 26.24 Gb/s
    // = 3.28 GB/s. Ring of 4 Macs: 1.5 × S / 3.28e9.
    let catalog = Catalog::builtin();
    let macs = fx::mac_ring(4, LinkTech::Thunderbolt4, Transport::Tcp);
    let r = collective(
        &macs,
        &catalog,
        &forced(Op::AllReduce, GIB, AlgoChoice::Ring, Protocol::Simple),
    )
    .unwrap();
    assert!(
        close(r.bandwidth_us, 1.5 * GIB as f64 / 3.28e9 * 1e6, 1e-9),
        "{}",
        r.bandwidth_us
    );
    // A TCP stack on Thunderbolt costs far more per message than InfiniBand.
    let small = collective(&macs, &catalog, &query(Op::AllReduce, 8)).unwrap();
    let ib = collective(&fx::ib_bus4(), &catalog, &query(Op::AllReduce, 8)).unwrap();
    assert!(
        small.time_us > 10.0 * ib.time_us,
        "{} vs {}",
        small.time_us,
        ib.time_us
    );
    // Non-neighbours reach each other through the Macs in between.
    let a2a = collective(&macs, &catalog, &query(Op::AllToAll, 1 << 20)).unwrap();
    assert!(a2a.time_us.is_finite());
}

/// MLX JACCL on four Macs with every pair cabled runs its mesh group (jaccl.cpp takes a valid
/// mesh first; mesh.cpp `MeshGroup::all_reduce`), not a ring: above 32 KiB a reduce-scatter
/// and an all-gather, each sending a quarter of the array over every link at once, so
/// 2 × S/4 per link against the two-way ring's 1.5 × S/2; up to 32 KiB one exchange of the
/// whole array with every peer, one message time where the ring takes six.
#[test]
fn jaccl_runs_its_mesh_where_every_pair_of_macs_is_cabled() {
    let catalog = Catalog::builtin();
    let mesh = fx::mac_mesh4(LinkTech::Thunderbolt5, Transport::Rdma);
    let ring = fx::mac_ring(4, LinkTech::Thunderbolt5, Transport::Rdma);
    // TB5: 80 Gb/s × 0.80 (PCIe tunnel) × 0.95 (RDMA headers) = 60.8 Gb/s = 7.6 GB/s.
    let link = 7.6e9;
    let big = |d: &Design| collective(d, &catalog, &query(Op::AllReduce, GIB)).unwrap();
    let (m, r) = (big(&mesh), big(&ring));
    assert_eq!(
        (m.algorithm, r.algorithm),
        (Algorithm::Mesh, Algorithm::BidirectionalRing)
    );
    let quarter = GIB as f64 / 4.0;
    assert!(
        close(m.bandwidth_us, 2.0 * quarter / link * 1e6, 1e-9),
        "{}",
        m.bandwidth_us
    );
    assert!(
        close(r.bandwidth_us, 1.5 * GIB as f64 / (2.0 * link) * 1e6, 1e-9),
        "{}",
        r.bandwidth_us
    );
    // Small: one message time on the mesh, six round the ring; the whole 16 KiB crosses
    // every link once.
    let small = |d: &Design| collective(d, &catalog, &query(Op::AllReduce, 16384)).unwrap();
    let (ms, rs) = (small(&mesh), small(&ring));
    assert_eq!(
        (ms.algorithm, rs.algorithm),
        (Algorithm::Direct, Algorithm::Ring)
    );
    assert!(
        close(rs.latency_us, 6.0 * ms.latency_us, 1e-9),
        "{} vs {}",
        rs.latency_us,
        ms.latency_us
    );
    assert!(
        close(ms.bandwidth_us, 16384.0 / link * 1e6, 1e-9),
        "{}",
        ms.bandwidth_us
    );
    // JACCL_RING (a forced ring) still runs the ring on the mesh.
    let forced_ring = collective(
        &mesh,
        &catalog,
        &forced(Op::AllReduce, GIB, AlgoChoice::Ring, Protocol::Simple),
    )
    .unwrap();
    assert_eq!(forced_ring.algorithm, Algorithm::Ring);
    // A diagonal down: no longer a mesh, so the ring again.
    let mut cut = mesh.clone();
    cut.links[4].state = LinkState::Failed;
    assert_eq!(big(&cut).algorithm, Algorithm::BidirectionalRing);
}

#[test]
fn all_to_all_across_two_dgx_is_rail_aligned() {
    // 16 GPUs; each sends S/16 to every other. Per GPU 8 × S/16 = S/2 leaves the node. With
    // PXN every byte for a rail-r GPU goes out through NIC r: NIC r carries 8 senders × one
    // rail-r peer × S/16 = S/2 at 400 Gb/s × 0.94 = 47 GB/s.
    let catalog = Catalog::builtin();
    let design = fx::dgx_rail_leaves(2);
    let mut q = forced(Op::AllToAll, GIB, AlgoChoice::Direct, Protocol::Simple);
    q.routing = Routing::Adaptive;
    let r = collective(&design, &catalog, &q).unwrap();
    let expected = 0.5 * GIB as f64 / 47e9 * 1e6;
    assert!(
        close(r.bandwidth_us, expected, 1e-9),
        "{} vs {expected}",
        r.bandwidth_us
    );
    // Rail-only (no spine): still connected thanks to NVLink forwarding.
    assert!(r.bottleneck.iter().any(|b| b.link.is_some()));
}

#[test]
fn time_is_monotone_in_size_and_within_the_physical_bound() {
    let catalog = Catalog::builtin();
    let designs: Vec<Design> = vec![
        fx::single_dgx(),
        fx::dgx_rail_leaves(2),
        fx::dgx_rail_leaves(3),
        fx::pcie_box(false),
        fx::mac_ring(4, LinkTech::Thunderbolt4, Transport::Tcp),
        fx::ib_bus4(),
        fx::two_leaf(3, 2, true),
    ];
    for design in &designs {
        for op in Op::ALL {
            for routing in [Routing::Ecmp, Routing::Adaptive] {
                let mut q = query(op, 0);
                q.routing = routing;
                let results = match sweep(design, &catalog, &q) {
                    // MLX on the Mac ring has no reduce-scatter, broadcast or reduce.
                    Err(CollectiveError::NotInLibrary { .. }) => continue,
                    r => r.unwrap_or_else(|e| panic!("{}: {op}: {e}", design.name)),
                };
                assert_eq!(results.len(), 31);
                assert_eq!(results[0].bytes, Bytes(8));
                assert_eq!(results[30].bytes, Bytes(8 * GIB));
                let mut last = 0.0;
                for r in &results {
                    assert!(r.time_us.is_finite() && r.time_us > 0.0);
                    assert!(r.busbw_gbyte_s.is_finite() && r.algbw_gbyte_s.is_finite());
                    assert!(
                        r.time_us >= last,
                        "{} {op}: time fell at {}",
                        design.name,
                        r.bytes
                    );
                    last = r.time_us;
                    assert!(
                        r.busbw_gbyte_s <= r.busbw_bound_gbyte_s * (1.0 + 1e-9),
                        "{} {op} {}: busbw {} over bound {} ({})",
                        design.name,
                        r.bytes,
                        r.busbw_gbyte_s,
                        r.busbw_bound_gbyte_s,
                        r.algorithm
                    );
                }
            }
        }
    }
}

#[test]
fn in_network_reduction_lifts_busbw_above_the_wire() {
    // H100 NVLink: 450 GB/s per direction. A ring cannot beat it; NVLS can.
    let catalog = Catalog::builtin();
    let design = fx::single_dgx();
    let ring = collective(
        &design,
        &catalog,
        &forced(Op::AllReduce, 8 * GIB, AlgoChoice::Ring, Protocol::Simple),
    )
    .unwrap();
    let nvls = collective(&design, &catalog, &query(Op::AllReduce, 8 * GIB)).unwrap();
    assert_eq!(nvls.algorithm, Algorithm::Nvls);
    assert!(ring.busbw_gbyte_s < 450.0 && ring.busbw_bound_gbyte_s == 450.0);
    assert!(nvls.busbw_gbyte_s > 450.0, "{}", nvls.busbw_gbyte_s);
}

#[test]
fn a_degraded_link_slows_everything_that_crosses_it() {
    let catalog = Catalog::builtin();
    let healthy = fx::dgx_rail_leaves(2);
    let mut degraded = healthy.clone();
    let victim = degraded.links[0].id;
    degraded.link_mut(victim).unwrap().state = LinkState::Degraded { fraction: 0.5 };
    let q = forced(Op::AllReduce, GIB, AlgoChoice::Ring, Protocol::Simple);
    let a = collective(&healthy, &catalog, &q).unwrap();
    let b = collective(&degraded, &catalog, &q).unwrap();
    // The ring on that rail now runs at half speed, and every ring waits for it.
    assert!(
        b.time_us > a.time_us * 1.5,
        "{} vs {}",
        b.time_us,
        a.time_us
    );
    assert_eq!(b.bottleneck[0].link, Some(victim));
    // A failed link is routed around when a path remains, else the result says so.
    let mut failed = healthy.clone();
    failed.link_mut(victim).unwrap().state = LinkState::Failed;
    let c = collective(&failed, &catalog, &query(Op::AllReduce, GIB));
    assert!(c.is_ok() || matches!(c, Err(CollectiveError::NotConnected { .. })));
}

#[test]
fn ecmp_collides_where_adaptive_routing_spreads() {
    // 3 + 3 one-GPU nodes on two leaves, interleaved, two spines. Send/recv ring: every flow
    // crosses leaves, 3 up from each leaf over 2 uplinks. Adaptive: 1.5 S per uplink;
    // ECMP puts at least 2 whole flows on one uplink.
    let catalog = Catalog::builtin();
    let design = fx::two_leaf(3, 2, true);
    let mut q = forced(Op::SendRecv, GIB, AlgoChoice::Direct, Protocol::Simple);
    q.routing = Routing::Adaptive;
    let adaptive = collective(&design, &catalog, &q).unwrap();
    q.routing = Routing::Ecmp;
    let ecmp = collective(&design, &catalog, &q).unwrap();
    assert!(
        close(
            adaptive.bandwidth_us,
            1.5 * GIB as f64 / 11.75e9 * 1e6,
            1e-9
        ),
        "{}",
        adaptive.bandwidth_us
    );
    assert!(ecmp.bandwidth_us >= 2.0 * GIB as f64 / 11.75e9 * 1e6 * (1.0 - 1e-9));
    assert!(ecmp.time_us > adaptive.time_us);
    // And ECMP is never faster than adaptive on the two-tier designs.
    for op in [Op::AllReduce, Op::AllToAll, Op::AllGather] {
        let mut q = query(op, GIB);
        q.routing = Routing::Adaptive;
        let a = collective(&design, &catalog, &q).unwrap();
        q.routing = Routing::Ecmp;
        let e = collective(&design, &catalog, &q).unwrap();
        assert!(e.time_us >= a.time_us * (1.0 - 1e-9), "{op}");
    }
}

/// A fat tree of 16 DGX H100 on QM9700s, which can route adaptively: the static routes it
/// runs until that is turned on collide, and the advice says so with both times (it once
/// said nothing because the switches were capable of what the model did not assume).
#[test]
fn switches_that_could_route_adaptively_are_told_to() {
    use railyard::generate::{Template, TemplateSpec, generate};
    use railyard::model::units::time_text;
    let catalog = Catalog::builtin();
    let mut spec = TemplateSpec::new(Template::FatTree);
    spec.nodes = Some(16);
    spec.node = Some(PartId::new("dgx-h100"));
    let design = generate(&spec, &catalog).expect("a fat tree");
    let mut q = query(Op::AllReduce, GIB);
    let ecmp = collective(&design, &catalog, &q).expect("static");
    q.routing = Routing::Adaptive;
    let adaptive = collective(&design, &catalog, &q).expect("adaptive");
    assert!(ecmp.time_us > adaptive.time_us * 1.05);
    let items = advice(&design, &catalog, None);
    let item = items
        .iter()
        .find(|a| a.code == "adaptive-routing-off")
        .unwrap_or_else(|| panic!("{items:#?}"));
    assert!(
        item.message.ends_with(&format!(
            "a 1 GiB all-reduce takes {} instead of {} with adaptive routing",
            time_text(ecmp.time_us),
            time_text(adaptive.time_us)
        )),
        "{}",
        item.message
    );
    assert!(items.iter().all(|a| a.code != "ecmp-elephants"));
}

/// Two workstations of four RTX 4090s, each on a 400 GbE NIC: the GPUs, with no peer-to-peer,
/// reach each other through host memory and set the pace, while the network link carries what
/// one GPU link does, 7.79 of its 46.3 GB/s (400 Gb/s × 1024/1106 for RoCE): 17 % busy. The advice
/// says a slower network would do. A DGX fabric, paced by its network, gets no such note.
#[test]
fn a_network_the_nodes_cannot_feed_is_called_so() {
    use railyard::generate::{Template, TemplateSpec, generate};
    let catalog = Catalog::builtin();
    let mut spec = TemplateSpec::new(Template::FatTree);
    spec.nodes = Some(2);
    spec.node = Some(PartId::new("workstation"));
    spec.gpu = Some(PartId::new("rtx-4090"));
    spec.nic = Some(PartId::new("cx7-400gbe"));
    let design = generate(&spec, &catalog).expect("two workstations");
    let result = collective(&design, &catalog, &query(Op::AllReduce, GIB)).expect("timed");
    let network = 400.0 / 8.0 * 1024.0 / 1106.0;
    let share = result.busbw_gbyte_s / network;
    assert!((share - 0.169).abs() < 0.005, "{share}");
    let items = advice(&design, &catalog, None);
    let item = items
        .iter()
        .find(|a| a.code == "network-outpaces-pcie")
        .unwrap_or_else(|| panic!("{items:#?}"));
    assert!(
        item.message
            .contains("while the busiest network link is 17 % busy"),
        "{}",
        item.message
    );
    let mut spec = TemplateSpec::new(Template::FatTree);
    spec.nodes = Some(16);
    spec.node = Some(PartId::new("dgx-h100"));
    let dgx = generate(&spec, &catalog).expect("a fat tree");
    assert!(
        advice(&dgx, &catalog, None)
            .iter()
            .all(|a| a.code != "network-outpaces-pcie")
    );
}

/// 128 DGX H100 in a fat tree under static routing: hashed flows queue on the uplinks, which
/// NCCL's tuner does not see (it knows its NICs and NVLink). `auto` is its pick, the same
/// algorithm adaptive routing gets, at the time that algorithm takes forced; a tree the
/// queues hurt less would be faster, and `why` says so. (The pick was once the fastest under
/// the queues, which NCCL cannot know.)
#[test]
fn the_tuner_does_not_see_the_queues_between_switches() {
    use railyard::generate::{Template, TemplateSpec, generate};
    let catalog = Catalog::builtin();
    let mut spec = TemplateSpec::new(Template::FatTree);
    spec.nodes = Some(128);
    spec.node = Some(PartId::new("dgx-h100"));
    let design = generate(&spec, &catalog).expect("a fat tree");
    let ecmp = collective(&design, &catalog, &query(Op::AllReduce, GIB)).expect("static");
    let mut q = query(Op::AllReduce, GIB);
    q.routing = Routing::Adaptive;
    let adaptive = collective(&design, &catalog, &q).expect("adaptive");
    assert_eq!(ecmp.algorithm, adaptive.algorithm);
    assert_eq!(ecmp.algorithm, Algorithm::NvlsTree);
    let mut q = query(Op::AllReduce, GIB);
    q.algorithm = AlgoChoice::NvlsTree;
    let nvls_tree = collective(&design, &catalog, &q).expect("nvls-tree forced");
    assert_eq!(ecmp.time_us, nvls_tree.time_us);
    q.algorithm = AlgoChoice::Tree;
    let tree = collective(&design, &catalog, &q).expect("tree forced");
    assert!(
        tree.time_us < ecmp.time_us * 0.95,
        "{} {}",
        tree.time_us,
        ecmp.time_us
    );
    assert!(
        ecmp.why
            .starts_with("NCCL's tuner ranks it blind to the queues between switches"),
        "{}",
        ecmp.why
    );
    // The advice names the faster algorithm and how to force it.
    let items = advice(&design, &catalog, None);
    let item = items
        .iter()
        .find(|a| a.code == "tuner-blind-to-queues")
        .unwrap_or_else(|| panic!("{items:#?}"));
    assert!(
        item.message.ends_with(&format!(
            "which make it take {}: tree/{} would take {} ({:+.0} %)",
            railyard::model::units::time_text(ecmp.time_us),
            tree.protocol.label(),
            railyard::model::units::time_text(tree.time_us),
            (tree.time_us / ecmp.time_us - 1.0) * 100.0
        )),
        "{}",
        item.message
    );
    assert!(
        item.suggestion.starts_with(&format!(
            "set NCCL_ALGO=Tree and NCCL_PROTO={}",
            tree.protocol.label()
        )),
        "{}",
        item.suggestion
    );
}

/// The 3:1 fat-tree preset: 256 node ports on 6 leaves, five with 48 down and 16 up (3:1) and
/// one with 16 down and 6 up (2.7:1). One finding names all six and their 5 × 16 + 6 = 86
/// uplinks (it once gave one warning per leaf, about rails a fat tree does not have).
#[test]
fn oversubscribed_leaves_are_one_finding() {
    let path = std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("presets")
        .join("dgx-h100-fat-tree-3to1.ron");
    let design = railyard::io::load_design(&path).expect("the 3:1 preset");
    let catalog = Catalog::builtin();
    let items = advice(&design, &catalog, None);
    let found: Vec<_> = items
        .iter()
        .filter(|a| a.code == "oversubscribed-uplinks")
        .collect();
    assert_eq!(found.len(), 1, "{items:#?}");
    let f = found[0];
    assert_eq!(f.devices.len(), 6);
    assert_eq!(f.links.len(), 86);
    assert!(
        f.message
            .starts_with("uplinks of 6 leaves are 2.7:1 to 3.0:1 oversubscribed"),
        "{}",
        f.message
    );
    assert!(!f.message.contains("rail"), "{}", f.message);
    assert_eq!(
        f.severity,
        railyard::analysis::collective::Severity::Warning
    );
}

/// A rail-optimized unit of 32 DGX at 2:1: each rail's 32 NICs sit on its one leaf, so NCCL's
/// rail-aligned collectives never climb the halved uplinks. The ratio is said, as information,
/// with what it does touch; at 128 nodes a rail spans three leaves and it is a warning again.
#[test]
fn oversubscribed_rail_leaves_of_one_unit_are_information() {
    use railyard::analysis::collective::Severity;
    use railyard::generate::{Template, TemplateSpec, generate};
    let catalog = Catalog::builtin();
    let unit = |nodes: u32| {
        let mut spec = TemplateSpec::new(Template::RailOptimized);
        spec.nodes = Some(nodes);
        spec.node = Some(PartId::new("dgx-h100"));
        spec.oversubscription = 2.0;
        let d = generate(&spec, &catalog).expect("a 2:1 rail-optimized fabric");
        advice(&d, &catalog, None)
            .into_iter()
            .find(|a| a.code == "oversubscribed-uplinks")
            .expect("the ratio is said")
    };
    let one = unit(32);
    assert_eq!(one.severity, Severity::Info);
    assert!(
        one.message.contains("12800 Gb/s down, 6400 Gb/s up"),
        "{}",
        one.message
    );
    assert!(one.message.contains("never climb them"), "{}", one.message);
    let three = unit(128);
    assert_eq!(three.severity, Severity::Warning);
}

#[test]
fn degenerate_designs_give_clear_errors() {
    let catalog = Catalog::builtin();
    let q = query(Op::AllReduce, 1 << 20);
    assert_eq!(
        collective(&Design::new("empty"), &catalog, &q),
        Err(CollectiveError::NoGpus)
    );
    let mut one = q.clone();
    one.gpus = Some(1);
    assert!(matches!(
        collective(&fx::single_dgx(), &catalog, &one),
        Err(CollectiveError::TooFewGpus { .. })
    ));
    let mut many = q.clone();
    many.gpus = Some(9);
    assert!(matches!(
        collective(&fx::single_dgx(), &catalog, &many),
        Err(CollectiveError::NotEnoughGpus { .. })
    ));
    // Two DGX with no cables between them.
    let mut apart = Design::new("apart");
    fx::dgx_h100(&mut apart, "a", 8);
    fx::dgx_h100(&mut apart, "b", 8);
    assert!(matches!(
        collective(&apart, &catalog, &q),
        Err(CollectiveError::NotConnected { .. })
    ));
    // A zero-rate cable carries nothing: not connected either.
    let mut zero = fx::mac_ring(2, LinkTech::Thunderbolt4, Transport::Tcp);
    for l in zero.links.iter_mut() {
        l.rate_gbit_s = railyard::model::Bandwidth::ZERO;
    }
    assert!(matches!(
        collective(&zero, &catalog, &q),
        Err(CollectiveError::NotConnected { .. })
    ));
    // Forcing an algorithm that does not apply says why.
    let mut nvls = q.clone();
    nvls.algorithm = AlgoChoice::Nvls;
    assert!(matches!(
        collective(&fx::pcie_box(true), &catalog, &nvls),
        Err(CollectiveError::AlgorithmUnavailable { .. })
    ));
    // First N GPUs: 8 of two nodes stays inside the first node (NVLink only).
    let mut first8 = q.clone();
    first8.gpus = Some(8);
    let r = collective(&fx::dgx_rail_leaves(2), &catalog, &first8).unwrap();
    assert_eq!(r.gpus, 8);
    assert!(r.link_utilization.is_empty());
}

#[test]
fn sizes_parse_as_binary_multiples() {
    assert_eq!(parse_size("8").unwrap(), Bytes(8));
    assert_eq!(parse_size("64K").unwrap(), Bytes(64 * 1024));
    assert_eq!(parse_size("1M").unwrap(), Bytes(1 << 20));
    assert_eq!(parse_size("8GiB").unwrap(), Bytes(8 << 30));
    assert_eq!(parse_size("1G").unwrap(), Bytes(1 << 30));
    for bad in ["-8", "1.5G", "lots", "", "99999999999999T"] {
        assert!(parse_size(bad).is_err(), "{bad}");
    }
    assert_eq!(Op::from_cli_name("all-reduce"), Some(Op::AllReduce));
    assert_eq!(
        AlgoChoice::from_cli_name("hierarchical"),
        Some(AlgoChoice::Hierarchical)
    );
    assert_eq!(Routing::from_cli_name("adaptive"), Some(Routing::Adaptive));
}

#[test]
fn multi_node_algorithms_are_weighed() {
    let catalog = Catalog::builtin();
    let design = fx::dgx_rail_leaves(4);
    let r = collective(&design, &catalog, &query(Op::AllReduce, GIB)).unwrap();
    let algos: Vec<Algorithm> = r.candidates.iter().map(|c| c.algorithm).collect();
    for a in [Algorithm::Ring, Algorithm::Tree, Algorithm::NvlsTree] {
        assert!(algos.contains(&a), "{a} missing");
    }
    // NCCL has no hierarchical all-reduce: it is costed only when forced.
    assert!(!algos.contains(&Algorithm::Hierarchical));
    // The chosen one is the fastest candidate.
    let best = r
        .candidates
        .iter()
        .map(|c| c.time_us)
        .fold(f64::INFINITY, f64::min);
    assert!(close(r.time_us, best, 1e-12));
    // Rail rings: each of the 8 rings crosses its own leaf; NIC links are the bottleneck, at
    // 8 × 47 GB/s = 376 GB/s of busbw at most.
    let ring = collective(
        &design,
        &catalog,
        &forced(Op::AllReduce, 8 * GIB, AlgoChoice::Ring, Protocol::Simple),
    )
    .unwrap();
    assert!(
        ring.busbw_gbyte_s < 376.0 && ring.busbw_gbyte_s > 0.9 * 376.0,
        "{}",
        ring.busbw_gbyte_s
    );
    assert_eq!(
        ring.bottleneck[0].kind,
        railyard::analysis::collective::ResourceKind::Link
    );
}

#[test]
fn sharp_needs_reducing_switches() {
    let catalog = Catalog::builtin();
    let mut design = fx::dgx_rail_leaves(4);
    design.sharp_enabled = true;
    let mut q = query(Op::AllReduce, GIB);
    q.algorithm = AlgoChoice::Sharp;
    assert!(matches!(
        collective(&design, &catalog, &q),
        Err(CollectiveError::AlgorithmUnavailable { .. })
    ));
    for d in design.devices.iter_mut() {
        if let railyard::model::DeviceKind::Switch(s) = &mut d.kind {
            s.features.in_network_reduction = true;
        }
    }
    // Switches that could reduce do not while SHARP is not set up, as NCCL leaves CollNet off:
    // forced, it is refused with how to set it up; under auto another algorithm wins.
    design.sharp_enabled = false;
    let Err(CollectiveError::AlgorithmUnavailable { reason, .. }) =
        collective(&design, &catalog, &q)
    else {
        panic!("SHARP without CollNet set up");
    };
    assert!(reason.contains("NCCL_COLLNET_ENABLE=1"), "{reason}");
    let auto = collective(&design, &catalog, &query(Op::AllReduce, GIB)).unwrap();
    assert_ne!(auto.algorithm, Algorithm::Sharp);
    design.sharp_enabled = true;
    let r = collective(&design, &catalog, &q).unwrap();
    assert_eq!(r.algorithm, Algorithm::Sharp);
    // Each NIC sends its share once and gets the result once: busbw beyond the ring's.
    let ring = collective(
        &design,
        &catalog,
        &forced(Op::AllReduce, GIB, AlgoChoice::Ring, Protocol::Simple),
    )
    .unwrap();
    assert!(r.busbw_gbyte_s > ring.busbw_gbyte_s);
    // SHARP ticked on switches whose model has none (a file edited by hand, from before the
    // inspector turned it off with the model): nothing reduces, and the checks say why.
    for d in design.devices.iter_mut() {
        if let railyard::model::DeviceKind::Switch(s) = &mut d.kind {
            s.model = railyard::model::PartId::new("sn5600");
        }
    }
    assert!(matches!(
        collective(&design, &catalog, &q),
        Err(CollectiveError::AlgorithmUnavailable { .. })
    ));
    let found = railyard::analysis::checks::checks(&design, &catalog);
    let unsupported: Vec<_> = found
        .iter()
        .filter(|f| f.code == railyard::analysis::checks::codes::FEATURE_UNSUPPORTED)
        .collect();
    assert!(!unsupported.is_empty(), "{found:#?}");
    assert!(
        unsupported[0]
            .message
            .ends_with("has in-network reduction (SHARP) ticked, which `sn5600` does not have: the analysis leaves it out"),
        "{}",
        unsupported[0].message
    );
}

/// The three-tier rail-optimized template with `nodes` DGX H100 (SHARP-capable switches).
fn three_tier_dgx_h100(nodes: u32) -> Design {
    use railyard::generate::{Template, TemplateSpec, generate};
    let mut spec = TemplateSpec::new(Template::RailOptimized);
    spec.nodes = Some(nodes);
    spec.node = Some(railyard::model::PartId::new("dgx-h100"));
    spec.tiers = 3;
    generate(&spec, &Catalog::builtin()).unwrap()
}

/// The same, with SHARP set up (NCCL_COLLNET_ENABLE=1): its switches reduce in the network.
fn three_tier_dgx_h100_with_sharp(nodes: u32) -> Design {
    let mut design = three_tier_dgx_h100(nodes);
    design.sharp_enabled = true;
    design
}

/// Concurrent groups spread their SHARP trees as the rails do: Llama 405B on the 2,048-GPU
/// three-tier template runs TP 8 × PP 16 × DP 16, so 128 data-parallel all-reduces of 16
/// GPUs (one per pipeline stage and tensor rank, 16 on each rail) run at once. With the
/// trees spread they run as on a network that never queues beyond the leaves; with one tree
/// per rail for all groups, the 16 groups of a rail shared one root's links: 2.16 s
/// against 0.135 s.
#[test]
fn concurrent_sharp_groups_spread_their_trees() {
    let design = three_tier_dgx_h100_with_sharp(256);
    let w = Workload::llama(405).unwrap();
    let r = workload_step_comm(&design, &Catalog::builtin(), &w, Routing::Ecmp).unwrap();
    assert_eq!((r.mapping.tp, r.mapping.pp, r.mapping.dp), (8, 16, 16));
    let dp = &r.components[0];
    assert_eq!(dp.name, "data-parallel gradient all-reduce");
    assert_eq!(dp.algorithm, Algorithm::Sharp);
    assert!(
        dp.time_us_per_step <= 1.01 * dp.ideal_us_per_step,
        "{} µs against {} µs on the ideal network",
        dp.time_us_per_step,
        dp.ideal_us_per_step
    );
}

/// SHARP's trees spread over the fabric, one per rail, as its aggregation manager places
/// them: on the three-tier template every tree edge carries a rail's share (an eighth of the
/// message each way), exactly what each node's own cables carry, so no switch-to-switch link
/// is busier than a node's cable. With one root for all rails the eight trees met on the same
/// spine-to-core links, eight times as busy (23 ms instead of 4 at 1 GiB on 2,048 GPUs).
#[test]
fn sharp_trees_of_the_rails_take_separate_roots() {
    let catalog = Catalog::builtin();
    let design = three_tier_dgx_h100_with_sharp(256);
    let q = forced(Op::AllReduce, GIB, AlgoChoice::Sharp, Protocol::Simple);
    let r = collective(&design, &catalog, &q).unwrap();
    assert_eq!(r.algorithm, Algorithm::Sharp);
    let is_node = |id| {
        design
            .device(id)
            .is_some_and(|d| matches!(d.kind, railyard::model::DeviceKind::GpuNode(_)))
    };
    let (mut cables, mut between_switches) = (Vec::new(), Vec::new());
    for &(id, u) in &r.link_utilization {
        let link = design.links.iter().find(|l| l.id == id).unwrap();
        if is_node(link.a.device) || is_node(link.b.device) {
            cables.push(u);
        } else {
            between_switches.push(u);
        }
    }
    let cable = cables.iter().copied().fold(0.0, f64::max);
    assert_eq!(cables.len(), 256 * 8);
    assert!(cables.iter().all(|&u| u == cable), "{cables:?}");
    // Each rail's tree takes its 8 leaves' uplinks (a leaf per scalable unit) and, in each
    // of the 2 pods, at least one spine's link to the tree's core; no link carries two trees.
    assert!(
        between_switches.len() >= 8 * (8 + 2),
        "{}",
        between_switches.len()
    );
    assert!(
        between_switches.iter().all(|&u| u <= cable),
        "{cable} vs {:?}",
        between_switches.iter().copied().fold(0.0, f64::max)
    );
    // The nodes' NVLink ports (NVLS inside each node) are what limits it, not the network.
    assert_eq!(
        r.bottleneck[0].kind,
        railyard::analysis::collective::ResourceKind::NvLink
    );
}

#[test]
fn training_step_on_two_dgx() {
    let catalog = Catalog::builtin();
    let design = fx::dgx_rail_leaves(2);
    let w = Workload::llama(8).unwrap();
    let r = workload_step_comm(&design, &catalog, &w, Routing::Adaptive).unwrap();
    // tp = pp = 1, so 16 data-parallel replicas all-reduce 8e9 bf16 gradients = 16 GB.
    assert_eq!((r.mapping.tp, r.mapping.pp, r.mapping.dp), (1, 1, 16));
    assert_eq!(r.components.len(), 1);
    assert!(close(r.components[0].bytes_per_call, 16e9, 1e-12));
    // Rail leaves without spines already never queue beyond the first switch: ideal = real.
    assert!(close(r.ideal_total_us, r.total_us, 1e-12));
    // A 2:1 oversubscribed two-tier fabric is slower than its ideal.
    let r2 = workload_step_comm(&fx::two_leaf(4, 1, true), &catalog, &w, Routing::Ecmp).unwrap();
    assert!(
        r2.total_us > r2.ideal_total_us,
        "{} vs {}",
        r2.total_us,
        r2.ideal_total_us
    );
    // 70B with tp = 8 keeps tensor parallelism inside each node.
    let w70 = Workload::llama(70).unwrap();
    let r70 = workload_step_comm(&design, &catalog, &w70, Routing::Adaptive).unwrap();
    assert!(!r70.mapping.tp_crosses_domains);
    assert!(r70.components.iter().any(|c| c.name.contains("tensor")));
}

#[test]
fn pipeline_stages_pass_each_tensor_ranks_share() {
    let catalog = Catalog::builtin();
    let design = fx::dgx_rail_leaves(2);
    // Llama 70B as TP 8 × PP 2: one stage per node, so stage boundaries cross the network.
    let mut w = Workload::llama(70).unwrap();
    w.pp = 2;
    let r = workload_step_comm(&design, &catalog, &w, Routing::Adaptive).unwrap();
    assert_eq!((r.mapping.tp, r.mapping.pp, r.mapping.dp), (8, 2, 1));
    let pipe = r
        .components
        .iter()
        .find(|c| c.op == Op::SendRecv)
        .expect("a pipeline part");
    // One micro-batch's activations: 8,192 tokens × 8,192 hidden × 2 bytes = 128 MiB, split
    // over the 8 tensor ranks: 16 MiB per rank and boundary.
    assert_eq!(pipe.bytes_per_call, 16.0 * 1024.0 * 1024.0);
    // 512 micro-batches (DP 1), each one exchange: activations forward, gradients back.
    assert_eq!(pipe.calls_per_step, 512.0);
    // The 8 ranks send at once, each on its own rail's 400 Gb/s NIC (50 GB/s): at least
    // 16 MiB / 50 GB/s = 335.5 µs, and not much more at RDMA efficiency.
    let floor_us = pipe.bytes_per_call / 50e9 * 1e6;
    assert!(
        pipe.time_us_per_call >= floor_us && pipe.time_us_per_call <= 1.25 * floor_us,
        "{} µs against {floor_us} µs",
        pipe.time_us_per_call
    );
    assert!(close(
        pipe.time_us_per_step,
        pipe.time_us_per_call * 512.0,
        1e-12
    ));
}

#[test]
fn mixture_of_experts_exchanges_tokens_inside_each_node() {
    let catalog = Catalog::builtin();
    let design = fx::dgx_rail_leaves(2);
    let w = Workload::named("mixtral-8x7b").unwrap();
    let r = workload_step_comm(&design, &catalog, &w, Routing::Adaptive).unwrap();
    // 16 GPUs, no TP or PP: 16 replicas, and the 8 experts split over runs of 8 neighbours,
    // that is over each node's GPUs.
    let m = &r.mapping;
    assert_eq!((m.tp, m.pp, m.dp, m.ep), (1, 1, 16, 8));
    let part = |name: &str| {
        r.components
            .iter()
            .find(|c| c.name == name)
            .unwrap_or_else(|| panic!("no {name}"))
    };
    // Experts: 32 layers × 8 experts × 3 × 4,096 × 14,336 = 45.10e9 parameters; the other
    // 1.60e9 are shared by all 16 replicas.
    let expert_params = 32.0 * 8.0 * 3.0 * 4096.0 * 14336.0;
    let dense = part("data-parallel gradient all-reduce");
    assert!(close(
        dense.bytes_per_call,
        (46.7e9 - expert_params) * 2.0,
        1e-12
    ));
    // Each GPU holds one expert in 8 and reduces its gradients with the GPU holding the same
    // expert in the other node: 5.64e9 parameters × 2 bytes. An all-reduce of two ranks sends
    // all of it over each GPU's 400 Gb/s NIC: at least 11.27 GB / 50 GB/s = 225.5 ms.
    let experts = part("expert gradient all-reduce");
    assert!(close(
        experts.bytes_per_call,
        expert_params / 8.0 * 2.0,
        1e-12
    ));
    let floor_us = experts.bytes_per_call / 50e9 * 1e6;
    assert!(
        experts.time_us_per_call >= floor_us && experts.time_us_per_call <= 1.25 * floor_us,
        "{} µs against {floor_us} µs",
        experts.time_us_per_call
    );
    // Per micro-batch and layer: dispatch and combine, forward and backward, each of one
    // micro-batch's tokens twice (top 2): 8,192 × 4,096 × 2 bytes × 2 = 128 MiB per call,
    // 4 × 32 layers × 32 micro-batches (512 / 16) = 4,096 calls.
    let a2a = part("MoE all-to-all");
    assert_eq!(a2a.op, Op::AllToAll);
    assert_eq!(a2a.bytes_per_call, 128.0 * 1024.0 * 1024.0);
    assert_eq!(a2a.calls_per_step, 4096.0);
    // The two nodes' exchanges share nothing: each takes what one node's all-to-all takes alone.
    let mut q = query(Op::AllToAll, 128 << 20);
    q.gpus = Some(8);
    q.routing = Routing::Adaptive;
    let alone = collective(&design, &catalog, &q).unwrap();
    assert!(
        close(a2a.time_us_per_call, alone.time_us, 1e-9),
        "{} against {}",
        a2a.time_us_per_call,
        alone.time_us
    );
    // An expert-parallel size of 3 takes 15 replicas, five runs of 3; with 16 replicas asked
    // for, it is refused.
    let mut odd = w.clone();
    odd.moe.as_mut().unwrap().ep = Some(3);
    let r15 = workload_step_comm(&design, &catalog, &odd, Routing::Adaptive).unwrap();
    assert_eq!(
        (r15.mapping.dp, r15.mapping.ep, r15.mapping.gpus_used),
        (15, 3, 15)
    );
    odd.dp = Some(16);
    assert!(matches!(
        workload_step_comm(&design, &catalog, &odd, Routing::Adaptive),
        Err(CollectiveError::ExpertParallelism { ep: 3, dp: 16 })
    ));
    // DeepSeek-V3 as trained (16 stages, EP 64) needs 1,024 GPUs, and says so.
    let deepseek = Workload::named("deepseek-v3").unwrap();
    assert!(matches!(
        workload_step_comm(&design, &catalog, &deepseek, Routing::Adaptive),
        Err(CollectiveError::NotEnoughGpus {
            available: 16,
            requested: 1024
        })
    ));
}

#[test]
fn serving_replicas_time_one_decode_step() {
    let catalog = Catalog::builtin();
    let design = fx::dgx_rail_leaves(2);
    // Llama 70B served with TP 8: one replica per node, which exchange nothing.
    let mut w = Workload::llama(70).unwrap();
    w.serving = true;
    let r = workload_step_comm(&design, &catalog, &w, Routing::Adaptive).unwrap();
    assert!(r.serving);
    assert_eq!((r.mapping.tp, r.mapping.pp, r.mapping.dp), (8, 1, 2));
    // A token passes 80 layers of two all-reduces each, over the hidden states of the 64
    // sequences decoded at once: 64 × 8,192 × 2 bytes = 1 MiB per call, 160 calls.
    assert_eq!(r.components.len(), 1);
    let tp = &r.components[0];
    assert_eq!(tp.op, Op::AllReduce);
    assert_eq!(tp.bytes_per_call, 1024.0 * 1024.0);
    assert_eq!(tp.calls_per_step, 160.0);
    // Each node's all-reduce runs alone on its NVSwitch.
    let mut q = query(Op::AllReduce, 1 << 20);
    q.gpus = Some(8);
    q.routing = Routing::Adaptive;
    let alone = collective(&design, &catalog, &q).unwrap();
    assert!(close(tp.time_us_per_call, alone.time_us, 1e-9));
    assert!(close(r.total_us, 160.0 * alone.time_us, 1e-9));
    // The model fits one node, yet 400G InfiniBand joins the nodes.
    let found = advice(&design, &catalog, Some(&w));
    let replicate = found
        .iter()
        .find(|a| a.code == "replicate-before-distribute")
        .expect("replicate before you distribute");
    assert_eq!(replicate.links.len(), 16);
    // Llama 8B needs no tensor parallelism: nothing to exchange at all (and not -0).
    let mut small = Workload::llama(8).unwrap();
    small.serving = true;
    let r8 = workload_step_comm(&design, &catalog, &small, Routing::Adaptive).unwrap();
    assert!(r8.components.is_empty());
    assert!(r8.total_us == 0.0 && r8.total_us.is_sign_positive());
}

#[test]
fn a_plane_that_holds_every_node_together_is_a_single_point() {
    let catalog = Catalog::builtin();
    let mut d = fx::dgx_rail_leaves(2);
    let leaves: Vec<railyard::model::DeviceId> = d
        .devices
        .iter()
        .filter(|x| matches!(x.kind, railyard::model::DeviceKind::Switch(_)))
        .map(|x| x.id)
        .collect();
    assert_eq!(leaves.len(), 8);
    // Rails 0-3 in one plane, 4-7 in another: either plane alone still joins the two nodes.
    let a = d.add_group("A", railyard::model::GroupKind::Plane);
    let b = d.add_group("B", railyard::model::GroupKind::Plane);
    for (i, &id) in leaves.iter().enumerate() {
        d.device_mut(id).unwrap().group = Some(if i < 4 { a } else { b });
    }
    let single = |d: &Design| {
        advice(d, &catalog, None)
            .into_iter()
            .find(|x| x.code == "single-plane")
    };
    assert!(single(&d).is_none());
    // All eight rails in plane A: losing it cuts the nodes apart.
    for &id in &leaves {
        d.device_mut(id).unwrap().group = Some(a);
    }
    let found = single(&d).expect("plane A holds the fabric together");
    assert_eq!(found.devices, leaves);
    assert!(found.message.contains("plane A"), "{}", found.message);
}

#[test]
fn advice_names_devices_and_fixes() {
    let catalog = Catalog::builtin();
    // RoCE on a switch without PFC/ECN, GPUDirect off, one spine holding two leaves.
    let mut d = Design::new("advice");
    let spine = fx::switch(
        &mut d,
        "spine",
        "sn5600",
        SwitchRole::Spine,
        SwitchFeatures::default(),
    );
    let leaves = [
        fx::switch(
            &mut d,
            "leaf-a",
            "sn5600",
            SwitchRole::Leaf,
            SwitchFeatures::default(),
        ),
        fx::switch(
            &mut d,
            "leaf-b",
            "sn5600",
            SwitchRole::Leaf,
            SwitchFeatures::default(),
        ),
    ];
    for (i, &leaf) in leaves.iter().enumerate() {
        fx::link(
            &mut d,
            (leaf, 40),
            (spine, i as u32),
            LinkTech::RoceV2,
            400.0,
        );
        for k in 0..2u32 {
            let n = fx::dgx_h100(&mut d, &format!("n{i}{k}"), 1);
            if let Some(railyard::model::DeviceKind::GpuNode(node)) =
                d.device_mut(n).map(|x| &mut x.kind)
            {
                node.nics[0].gpudirect = k == 0;
            }
            fx::link(&mut d, (n, 0), (leaf, k), LinkTech::RoceV2, 400.0);
        }
    }
    let items = advice(&d, &catalog, None);
    let codes: Vec<&str> = items.iter().map(|a| a.code).collect();
    for code in [
        "roce-not-lossless",
        "gpudirect-off",
        "single-point-of-failure",
        "oversubscribed-uplinks",
    ] {
        assert!(codes.contains(&code), "{code} missing from {codes:?}");
    }
    let spof = items
        .iter()
        .find(|a| a.code == "single-point-of-failure")
        .unwrap();
    assert_eq!(spof.devices, vec![spine]);
    assert_eq!(
        spof.links,
        d.links_of(spine).map(|l| l.id).collect::<Vec<_>>()
    );
    assert!(!spof.suggestion.is_empty());
    // Thunderbolt and tensor parallelism across it.
    let macs = fx::mac_ring(4, LinkTech::Thunderbolt4, Transport::Tcp);
    let mut w = Workload::llama(70).unwrap();
    w.tp = 4;
    let items = advice(&macs, &catalog, Some(&w));
    let codes: Vec<&str> = items.iter().map(|a| a.code).collect();
    assert!(
        codes.contains(&"thunderbolt") && codes.contains(&"tp-across-slow-network"),
        "{codes:?}"
    );
    // Macs take no NICs: the remedy is RDMA over Thunderbolt 5, not InfiniBand.
    let slow = items
        .iter()
        .find(|a| a.code == "tp-across-slow-network")
        .unwrap();
    assert!(
        slow.suggestion.contains("Thunderbolt 5"),
        "{}",
        slow.suggestion
    );
    assert!(
        !slow.suggestion.contains("InfiniBand"),
        "{}",
        slow.suggestion
    );
    // Over Thunderbolt 5 with RDMA (JACCL) tensor parallelism across Macs is what they run.
    let rdma = fx::mac_ring(4, LinkTech::Thunderbolt5, Transport::Rdma);
    let items = advice(&rdma, &catalog, Some(&w));
    assert!(
        items.iter().all(|a| a.code != "tp-across-slow-network"),
        "{items:?}"
    );
    // Tensor parallelism of 8 on 4 Macs is a job the workload refuses, not one to advise on.
    w.tp = 8;
    let items = advice(&macs, &catalog, Some(&w));
    assert!(
        items.iter().all(|a| a.code != "tp-across-slow-network"),
        "{items:?}"
    );
    // A healthy rail fabric draws no warnings.
    assert!(
        advice(&fx::dgx_rail_leaves(2), &catalog, None)
            .iter()
            .all(|a| a.severity == railyard::analysis::collective::Severity::Info)
    );
}

/// Apple silicon runs MLX, not NCCL: on the 4 × Mac Studio Thunderbolt 5 mesh (RDMA) it is
/// JACCL's mesh group; with a diagonal unplugged, JACCL's ring, one way for small arrays and
/// both ways round above 32 KiB, Simple buffers only; over TCP it is the `ring` backend, both
/// ways only from 2 × 256 KiB per rank.
#[test]
fn a_mac_cluster_runs_mlx_rings_both_ways_for_large_arrays() {
    use railyard::analysis::collective::Library;
    let catalog = Catalog::builtin();
    let path =
        std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("presets/mac-studio-tb5-x4.ron");
    let mut design = railyard::io::load_design(&path).expect("the Mac preset");
    // TB5 at 80 Gb/s × 0.8 (PCIe tunnel) × 0.95 (RDMA headers); a message costs what JACCL's
    // all-reduce of 4 KiB measured between two Macs (25 µs) plus 2 m of cable (0.01 µs).
    let link = 80e9 / 8.0 * 0.8 * 0.95;
    let message_us = 25.0 + 0.01;
    // Every pair cabled: the mesh. A reduce-scatter and an all-gather, a quarter of 1 GiB
    // over every link each; small arrays in one exchange.
    let mesh = collective(&design, &catalog, &query(Op::AllReduce, GIB)).unwrap();
    assert_eq!(mesh.library, Library::MlxJaccl);
    assert_eq!(
        (mesh.algorithm, mesh.protocol),
        (Algorithm::Mesh, Protocol::Simple)
    );
    let expected = 2.0 * GIB as f64 / 4.0 / link * 1e6 + 2.0 * message_us;
    assert!(
        (mesh.time_us - expected).abs() < 0.01,
        "{} µs against {expected} µs",
        mesh.time_us
    );
    let tiny = collective(&design, &catalog, &query(Op::AllReduce, 4096)).unwrap();
    assert_eq!(tiny.algorithm, Algorithm::Direct);
    let expected = 4096.0 / link * 1e6 + message_us;
    assert!(
        (tiny.time_us - expected).abs() < 0.01,
        "{} µs against {expected} µs",
        tiny.time_us
    );
    // One diagonal unplugged: no longer a mesh, so JACCL's ring.
    let diagonal = design
        .links
        .iter()
        .position(|l| {
            let (a, b) = (
                l.a.device.0.min(l.b.device.0),
                l.a.device.0.max(l.b.device.0),
            );
            b - a == 2
        })
        .expect("a diagonal");
    design.links[diagonal].state = railyard::model::LinkState::Failed;
    let large = collective(&design, &catalog, &query(Op::AllReduce, GIB)).unwrap();
    assert_eq!(large.library, Library::MlxJaccl);
    assert_eq!(
        (large.algorithm, large.protocol),
        (Algorithm::BidirectionalRing, Protocol::Simple)
    );
    // Each direction of a ring link carries half of 2(n − 1)/n × 1 GiB, at TB5's 80 Gb/s ×
    // 0.8 (PCIe tunnel) × 0.95 (RDMA headers); six steps of 5 µs RDMA latency plus 2 m of cable
    // (0.01 µs) each.
    let bandwidth_us = 0.5 * 1.5 * GIB as f64 / link * 1e6;
    let latency_us = 6.0 * message_us;
    assert!(
        (large.time_us - (bandwidth_us + latency_us)).abs() < 0.01,
        "{} µs against {} µs",
        large.time_us,
        bandwidth_us + latency_us
    );
    let small = collective(&design, &catalog, &query(Op::AllReduce, 4096)).unwrap();
    assert_eq!(small.algorithm, Algorithm::Ring);
    // No reduce-scatter in MLX's backends: refused by name, not modelled as NCCL's.
    let rs = collective(&design, &catalog, &query(Op::ReduceScatter, GIB)).unwrap_err();
    assert_eq!(
        rs.to_string(),
        "MLX JACCL (RDMA) has no reduce-scatter here"
    );
    // Over TCP: the ring backend, one way below 2 MiB (4 ranks × 2 × 256 KiB).
    for link in &mut design.links {
        link.transport = railyard::model::Transport::Tcp;
    }
    let below = collective(&design, &catalog, &query(Op::AllReduce, (2 << 20) - 4096)).unwrap();
    let above = collective(&design, &catalog, &query(Op::AllReduce, 2 << 20)).unwrap();
    assert_eq!(below.library, Library::MlxRing);
    assert_eq!(below.algorithm, Algorithm::Ring);
    assert_eq!(above.algorithm, Algorithm::BidirectionalRing);
}

/// Four workstations on a 25 GbE star with one cable that came up at 10 Gb/s: that cable
/// paces the whole all-reduce and the advice names it (it once said nothing to change while
/// slow links ran full). The same star at one speed gets no such advice.
#[test]
fn a_slow_cable_among_fast_ones_is_named_when_it_paces_the_all_reduce() {
    use railyard::generate::{Template, TemplateSpec, generate};
    let catalog = Catalog::builtin();
    let mut spec = TemplateSpec::new(Template::Star);
    spec.nodes = Some(4);
    spec.node = Some(PartId::new("workstation"));
    spec.gpu = Some(PartId::new("rtx-4090"));
    spec.gpus_per_node = Some(4);
    spec.nic = Some(PartId::new("cx4lx-25gbe"));
    let mut d = generate(&spec, &catalog).expect("a 25 GbE star");
    assert!(d.links.iter().all(|l| l.rate_gbit_s.gbit_s() == 25.0));
    let uniform = advice(&d, &catalog, None);
    assert!(
        uniform.iter().all(|a| a.code != "slow-links-saturated"),
        "{uniform:#?}"
    );

    let slow = d.links[2].id;
    d.link_mut(slow).expect("link").rate_gbit_s = Bandwidth::from_gbit_s(10.0);
    let items = advice(&d, &catalog, None);
    let item = items
        .iter()
        .find(|a| a.code == "slow-links-saturated")
        .unwrap_or_else(|| panic!("{items:#?}"));
    assert_eq!(item.links, vec![slow]);
    let cable = d.link(slow).expect("link");
    assert_eq!(item.devices.len(), 2);
    assert!(item.devices.contains(&cable.a.device) && item.devices.contains(&cable.b.device));
    assert!(
        item.message.starts_with("1 link(s) at 10 Gb/s")
            && item.message.contains("other network links run at 25 Gb/s"),
        "{}",
        item.message
    );
    // Both ends have 25 Gb/s ports (the node's ConnectX-4 Lx, the switch's), so the cable
    // is what to change.
    assert!(
        item.suggestion
            .starts_with("the ports at both ends already run at 25 Gb/s"),
        "{}",
        item.suggestion
    );

    // The same node with a 10 GbE X710 in its slot: the NIC is the slow part, and the
    // remedy names the 25 GbE card the other nodes carry.
    let node = cable.a.device;
    let node = if d.device(node).is_some_and(|x| x.kind.as_node().is_some()) {
        node
    } else {
        cable.b.device
    };
    if let Some(railyard::model::DeviceKind::GpuNode(n)) = d.device_mut(node).map(|x| &mut x.kind) {
        n.nics[0].part = PartId::new("x710-10gbe");
    }
    let items = advice(&d, &catalog, None);
    let item = items
        .iter()
        .find(|a| a.code == "slow-links-saturated")
        .unwrap_or_else(|| panic!("{items:#?}"));
    assert_eq!(
        item.suggestion,
        "replace the `x710-10gbe` NICs (10 Gb/s) with `cx4lx-25gbe` (ConnectX-4 Lx EN 2x 25GbE (MCX4121A-ACAT))"
    );
}

/// The designer's preferences store the choice by variant name (as the sidebar's own copy
/// of the enum once did), and reports by the command line's name; both read back.
#[test]
fn algorithm_choices_keep_their_stored_names() {
    for choice in AlgoChoice::ALL {
        let stored = ron::to_string(&choice).unwrap();
        assert_eq!(stored, format!("{choice:?}"));
        assert_eq!(ron::from_str::<AlgoChoice>(&stored).unwrap(), choice);
        assert_eq!(AlgoChoice::from_cli_name(choice.cli_name()), Some(choice));
    }
}

/// The logical view's ring: 2 DGX H100 nodes rail-optimized are 16 GPUs, each node's 8 in a
/// row over NVSwitch, one InfiniBand hop out of each node, and 8 rail rings side by side
/// (one per NIC).
#[test]
fn the_ring_order_runs_through_each_node_then_crosses_on_a_rail() {
    use railyard::analysis::collective::logical::{RingHop, ScaleUpPath, ring_order};
    use railyard::generate::{Template, TemplateSpec, generate};
    let catalog = Catalog::builtin();
    let mut spec = TemplateSpec::new(Template::RailOptimized);
    spec.nodes = Some(2);
    let design = generate(&spec, &catalog).expect("generates");
    let ring = ring_order(&design, &catalog).expect("a ring");
    assert_eq!((ring.stops.len(), ring.hops.len(), ring.rings), (16, 16, 8));
    let nodes: Vec<_> = design
        .devices
        .iter()
        .filter(|d| d.kind.as_node().is_some())
        .map(|d| d.id)
        .collect();
    for (i, stop) in ring.stops.iter().enumerate() {
        assert_eq!(
            (stop.node, stop.gpu),
            (nodes[i / 8], (i % 8) as u32),
            "stop {i}"
        );
    }
    for (i, hop) in ring.hops.iter().enumerate() {
        let expected = if i % 8 == 7 {
            RingHop::Network(Some(LinkTech::InfiniBand))
        } else {
            RingHop::ScaleUp(ScaleUpPath::NvSwitch)
        };
        assert_eq!(*hop, expected, "hop {i}");
    }
}

/// The logical view's trees: 4 DGX H100 nodes rail-optimized are 4 domains of 8 GPUs, each
/// chained over NVSwitch, and NCCL's double binary tree over them. By hand, in-order
/// positions 1..4 (domain i at i + 1 in tree 0, at (i + 1) mod 4 + 1 in tree 1): 4 is the
/// root, 2 its child, 1 and 3 the leaves under 2. Tree 0: 3 → 1 → {0, 2}; tree 1: 2 → 0 →
/// {1, 3}. A leaf of tree 0 (domain 0) is inner in tree 1. One pair of trees per NIC: 8.
#[test]
fn the_double_trees_put_each_leaf_of_one_inside_the_other() {
    use railyard::analysis::collective::logical::{ScaleUpPath, double_trees, in_switch_groups};
    use railyard::generate::{Template, TemplateSpec, generate};
    let catalog = Catalog::builtin();
    let mut spec = TemplateSpec::new(Template::RailOptimized);
    spec.nodes = Some(4);
    let design = generate(&spec, &catalog).expect("generates");
    let trees = double_trees(&design, &catalog).expect("trees");
    assert_eq!(trees.domains.len(), 4);
    assert_eq!(trees.channels, 8);
    for d in &trees.domains {
        assert_eq!((d.nodes.len(), d.gpus), (1, 8));
        assert_eq!(d.chain, Some(ScaleUpPath::NvSwitch));
        assert_eq!(d.network, Some(LinkTech::InfiniBand));
    }
    let sorted = |mut e: Vec<(u32, u32)>| {
        e.sort_unstable();
        e
    };
    assert_eq!(sorted(trees.edges[0].clone()), [(1, 0), (1, 2), (3, 1)]);
    assert_eq!(sorted(trees.edges[1].clone()), [(0, 1), (0, 3), (2, 0)]);
    // In-switch reduction: each DGX H100's NVSwitch runs NVLS over its 8 GPUs; the
    // template's Quantum-2 switches can reduce with SHARP, which the design leaves off.
    let groups = in_switch_groups(&design, &catalog).expect("groups");
    assert_eq!(groups.nvls.len(), 4);
    assert!(
        groups
            .nvls
            .iter()
            .all(|(nodes, gpus)| nodes.len() == 1 && *gpus == 8)
    );
    assert!(!groups.sharp_enabled);
    let switches = design
        .devices
        .iter()
        .filter(|d| matches!(d.kind, railyard::model::DeviceKind::Switch(_)))
        .count();
    assert_eq!(groups.sharp_switches.len(), switches);
}

/// Four Macs in a Thunderbolt 5 mesh: one GPU each, so every hop of the one ring crosses a
/// Thunderbolt cable.
#[test]
fn a_mac_ring_crosses_thunderbolt_at_every_hop() {
    use railyard::analysis::collective::logical::{RingHop, ring_order};
    let catalog = Catalog::builtin();
    let text = std::fs::read_to_string(
        std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("presets/mac-studio-tb5-x4.ron"),
    )
    .expect("preset");
    let design = railyard::io::parse_design(&text, "mac preset").expect("parses");
    let ring = ring_order(&design, &catalog).expect("a ring");
    assert_eq!((ring.stops.len(), ring.rings), (4, 1));
    assert!(
        ring.hops
            .iter()
            .all(|h| *h == RingHop::Network(Some(LinkTech::Thunderbolt5))),
        "{:?}",
        ring.hops
    );
}

#[test]
fn two_nics_per_gpu_each_carry_a_ring() {
    // OCI's BM.GPU4.8 as drawn in the validation set: 8 A100 and 16 × 100 GbE RoCE NICs per
    // node, NIC i beside GPU i/2, two nodes rail-optimized. A forced ring runs one ring per
    // NIC, entering each node at the GPU beside its NIC, so the NICs are the bottleneck and
    // busbw is theirs: 16 × 12.5 GB/s × 1024/1106 (lossless RoCE) = 185 GB/s, less the latency
    // share at 8 GiB. (Every odd NIC's ring had entered at GPU 0, whose PCIe capped busbw
    // at 45 GB/s.)
    let catalog = Catalog::builtin();
    let path = std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("assets/validation/hgx-a100-2node-roce.ron");
    let design = railyard::io::load_design(&path).expect("the OCI validation design");
    let r = collective(
        &design,
        &catalog,
        &forced(Op::AllReduce, 8 * GIB, AlgoChoice::Ring, Protocol::Simple),
    )
    .unwrap();
    let nic_busbw = 16.0 * 12.5 * 1024.0 / 1106.0;
    assert!(
        r.busbw_gbyte_s <= nic_busbw && r.busbw_gbyte_s >= 0.99 * nic_busbw,
        "{}",
        r.busbw_gbyte_s
    );
    assert!(r.bottleneck[0].link.is_some(), "{:?}", r.bottleneck[0]);
}

/// A workstation star (on-board 10 GbE to one switch) where two of the workstations also
/// get a 100 GbE NIC cabled straight to each other: the NICs' cable leads to a server that
/// does not forward, so traffic to the others leaves by the on-board port. It once said
/// "not connected: no working path from node-02 to node-03" while the checks were clear.
#[test]
fn a_nic_cabled_to_one_server_leaves_the_rest_to_the_onboard_port() {
    use railyard::model::{Endpoint, Link, NicSlot, Port};
    let catalog = Catalog::builtin();
    let star = railyard::io::design_file::load_design(std::path::Path::new(
        "presets/workstation-star-10gbe.ron",
    ))
    .expect("the preset loads");
    let q = query(Op::AllReduce, GIB);
    let alone = collective(&star, &catalog, &q).expect("the star is connected");

    let mut mixed = star.clone();
    let (a, b) = (mixed.devices[0].id, mixed.devices[1].id);
    for id in [a, b] {
        let Some(railyard::model::DeviceKind::GpuNode(node)) =
            mixed.device_mut(id).map(|d| &mut d.kind)
        else {
            panic!("a workstation");
        };
        node.nics.push(NicSlot {
            part: PartId::new("e810-100gbe"),
            gpudirect: false,
        });
    }
    mixed.add_link(Link::new(
        Endpoint::new(a, Port::Nic(0)),
        Endpoint::new(b, Port::Nic(0)),
        LinkTech::Ethernet,
        Bandwidth::from_gbit_s(100.0),
    ));
    let with_nics = collective(&mixed, &catalog, &q).expect("still connected");
    // A cable more cannot slow it down: the 10 GbE ports to the switch still bound it.
    assert!(
        with_nics.time_us <= alone.time_us * (1.0 + 1e-9),
        "{} µs against {} µs",
        with_nics.time_us,
        alone.time_us
    );
}

/// Four PCs with one RTX 4090 each on a 10 GbE switch, running PyTorch's Gloo backend (what
/// Windows has instead of NCCL). Worked by hand:
///   message time L = 20 µs (a kernel socket send and receive) + 0.01 µs (2 m of cable; the
///     model charges the path's worst link) + 2 µs (the CRS317's port-to-port estimate)
///     = 22.01 µs;
///   link rate 10 Gb/s × 0.88 (Gloo's measured TCP share) = 1.1 GB/s;
///   staging: the tensor to pinned host memory and back over PCIe 4.0 x16,
///     2 × S / (31.5 GB/s × 0.8).
#[test]
fn gloo_runs_rings_over_tcp_and_stages_gpu_tensors_through_host_memory() {
    use railyard::analysis::collective::Library;
    use railyard::model::LibraryChoice;
    let catalog = Catalog::builtin();
    let mut design = four_pcs_on_a_star("x710-10gbe");
    assert_eq!(
        collective(&design, &catalog, &query(Op::AllReduce, GIB))
            .unwrap()
            .library,
        Library::Nccl
    );
    design.library = LibraryChoice::Gloo;
    let s = GIB as f64;
    let l = 20.0 + 0.01 + 2.0;
    let wire = 10e9 / 8.0 * 0.88;
    let staging_us = 2.0 * s / (31.5e9 * 0.8) * 1e6;
    let expect = |op: Op, on_wire: f64, messages: f64| {
        let r = collective(&design, &catalog, &query(op, GIB)).unwrap();
        assert_eq!((r.library, r.protocol), (Library::Gloo, Protocol::Simple));
        let want = on_wire * s / wire * 1e6 + staging_us + messages * l;
        assert!(
            close(r.time_us, want, 1e-9),
            "{op:?}: {} µs against {want} µs",
            r.time_us
        );
        r
    };
    // All-reduce: a one-way ring, 2(n − 1)/n of S on each link; 2n message times (two
    // segments in flight over (n − 1)·2 + 2 iterations in each half).
    let ar = expect(Op::AllReduce, 1.5, 8.0);
    assert_eq!(ar.algorithm, Algorithm::Ring);
    assert!(close(ar.time_us, 1_464_193.40 + 85_217.61 + 176.08, 1e-8));
    // Reduce-scatter runs as a whole all-reduce (ProcessGroupGloo), so it takes as long.
    let rs = expect(Op::ReduceScatter, 1.5, 8.0);
    assert!(close(rs.time_us, ar.time_us, 1e-12));
    // All-gather: (n − 1)/n of S per link, n − 1 message times.
    expect(Op::AllGather, 0.75, 3.0);
    // Broadcast: a binomial tree, two rounds of the whole buffer from the root.
    let bc = expect(Op::Broadcast, 2.0, 2.0);
    assert_eq!(bc.algorithm, Algorithm::Tree);
    // Reduce (reduce.cc): a ring reduce-scatter, 3/4 of S on each link, then the three
    // others' quarters into the root's link, 3/4 of S again; n + 1 message times.
    let reduce = expect(Op::Reduce, 0.75 + 0.75, 5.0);
    assert_eq!(reduce.algorithm, Algorithm::Ring);
    // No algorithm of another library: refused by name.
    let mut q = query(Op::AllReduce, GIB);
    q.algorithm = AlgoChoice::Nvls;
    let nvls = collective(&design, &catalog, &q).unwrap_err();
    assert_eq!(
        nvls.to_string(),
        "Gloo (PyTorch, TCP) has no all-reduce here with the nvls algorithm"
    );
}

/// Macs under Gloo (PyTorch on Apple silicon): one memory, nothing to stage; the TB5 links'
/// RDMA is not Gloo's, which runs IP over Thunderbolt (0.8 × 0.82 of 80 Gb/s, 150 µs a
/// message).
#[test]
fn gloo_on_macs_copies_nothing_and_runs_ip_over_thunderbolt() {
    use railyard::model::LibraryChoice;
    let catalog = Catalog::builtin();
    let path =
        std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("presets/mac-studio-tb5-x4.ron");
    let mut design = railyard::io::load_design(&path).expect("the Mac preset");
    design.library = LibraryChoice::Gloo;
    let r = collective(&design, &catalog, &query(Op::AllReduce, GIB)).unwrap();
    let want = 1.5 * GIB as f64 / (80e9 / 8.0 * 0.8 * 0.82) * 1e6 + 8.0 * (150.0 + 0.01);
    assert!(close(r.time_us, want, 1e-9), "{} against {want}", r.time_us);
}

/// A chosen library that cannot run the design is refused with the reason, everywhere the
/// collective shows.
#[test]
fn a_library_that_cannot_run_the_design_says_why() {
    use railyard::model::LibraryChoice;
    let catalog = Catalog::builtin();
    let mac_path =
        std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("presets/mac-studio-tb5-x4.ron");
    let mut macs = railyard::io::load_design(&mac_path).expect("the Mac preset");
    macs.library = LibraryChoice::Nccl;
    let e = collective(&macs, &catalog, &query(Op::AllReduce, GIB)).unwrap_err();
    assert!(
        e.to_string()
            .starts_with("NCCL cannot run this design: NCCL runs on NVIDIA GPUs, and "),
        "{e}"
    );
    // JACCL on Thunderbolt 5 without RDMA.
    macs.library = LibraryChoice::MlxJaccl;
    for link in &mut macs.links {
        link.transport = Transport::Tcp;
    }
    let e = collective(&macs, &catalog, &query(Op::AllReduce, GIB)).unwrap_err();
    assert!(
        e.to_string()
            .contains("JACCL needs RDMA over Thunderbolt 5"),
        "{e}"
    );
    // MLX on NVIDIA GPUs; Gloo with four GPUs in a node.
    let mut bus = fx::ib_bus4();
    bus.library = LibraryChoice::MlxRing;
    let e = collective(&bus, &catalog, &query(Op::AllReduce, GIB)).unwrap_err();
    assert!(e.to_string().contains("MLX runs on Apple silicon"), "{e}");
    bus.library = LibraryChoice::Gloo;
    let e = collective(&bus, &catalog, &query(Op::AllReduce, GIB)).unwrap_err();
    assert!(
        e.to_string().contains("IP over InfiniBand is not modelled"),
        "{e}"
    );
    let path =
        std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("presets/rtx4090-pair-25gbe.ron");
    let mut pair = railyard::io::load_design(&path).expect("the 4090 preset");
    pair.library = LibraryChoice::Gloo;
    let e = collective(&pair, &catalog, &query(Op::AllReduce, GIB)).unwrap_err();
    assert!(
        e.to_string()
            .contains("has 4 GPUs: Gloo's ranks in one node"),
        "{e}"
    );
}

/// GPUDirect RDMA is the NIC reaching GPU memory as a PCIe peer: the RTX 4090 pair (GeForce,
/// no peer-to-peer) is told its traffic bounces through host memory because of its cards,
/// not told to enable what the cards lack; the same NICs on H100s are told to enable it.
#[test]
fn geforce_nodes_are_not_told_to_enable_gpudirect() {
    let catalog = Catalog::builtin();
    let pair = railyard::io::design_file::load_design(std::path::Path::new(
        "presets/rtx4090-pair-25gbe.ron",
    ))
    .expect("the preset loads");
    let items = advice(&pair, &catalog, None);
    let codes: Vec<&str> = items.iter().map(|a| a.code).collect();
    assert!(!codes.contains(&"gpudirect-off"), "{codes:?}");
    let info = items
        .iter()
        .find(|a| a.code == "gpudirect-unsupported")
        .unwrap_or_else(|| panic!("{codes:?}"));
    assert_eq!(
        info.severity,
        railyard::analysis::collective::Severity::Info
    );
    assert_eq!(info.devices.len(), 2, "both boxes");
    assert!(info.message.contains("GeForce"), "{}", info.message);
    // Ticking GPUDirect on their NICs changes nothing: the cards still have none.
    let mut ticked = pair.clone();
    for d in &mut ticked.devices {
        if let railyard::model::DeviceKind::GpuNode(n) = &mut d.kind {
            for slot in &mut n.nics {
                slot.gpudirect = true;
            }
        }
    }
    let codes: Vec<&str> = advice(&ticked, &catalog, None)
        .iter()
        .map(|a| a.code)
        .collect();
    assert!(codes.contains(&"gpudirect-unsupported"), "{codes:?}");

    let mut h100s = pair.clone();
    for d in &mut h100s.devices {
        if let railyard::model::DeviceKind::GpuNode(n) = &mut d.kind {
            n.gpu = PartId::new("h100-pcie");
        }
    }
    let codes: Vec<&str> = advice(&h100s, &catalog, None)
        .iter()
        .map(|a| a.code)
        .collect();
    assert!(codes.contains(&"gpudirect-off"), "{codes:?}");
    assert!(!codes.contains(&"gpudirect-unsupported"), "{codes:?}");
}

/// The answer says what it was asked to force and what it left uncosted. On the SuperPOD SU
/// with SHARP set up, a 1 GiB all-reduce runs SHARP (3.93 ms); tree and NVLS-tree are
/// left uncosted once slower, and the line says so rather than naming ring (7.20 ms) as the
/// runner-up when each of them, forced, takes about 6.2 ms. Forced, the assumptions name
/// NCCL_ALGO instead of the tuner's choice, and NVLS across domains says it runs as
/// NVLS-tree.
#[test]
fn the_answer_names_what_was_forced_and_what_was_left_uncosted() {
    use railyard::analysis::collective::AlgoChoice;
    let catalog = Catalog::builtin();
    let mut su = railyard::io::design_file::load_design(std::path::Path::new(
        "presets/dgx-h100-superpod-su.ron",
    ))
    .expect("the preset loads");
    su.sharp_enabled = true;
    let at = |choice: AlgoChoice| {
        let mut q = query(Op::AllReduce, GIB);
        q.algorithm = choice;
        collective(&su, &catalog, &q).expect("runs")
    };
    let auto = at(AlgoChoice::Auto);
    assert_eq!(auto.algorithm, Algorithm::Sharp);
    assert!(
        auto.why
            .contains("(tree and nvls-tree left uncosted: slower at this size); next costed ring"),
        "{}",
        auto.why
    );
    assert!(
        auto.assumes
            .contains("the tuner's choice of algorithm and protocol")
    );
    let (tree, nvls_tree, ring) = (
        at(AlgoChoice::Tree),
        at(AlgoChoice::NvlsTree),
        at(AlgoChoice::Ring),
    );
    for stopped in [&tree, &nvls_tree] {
        assert!(stopped.time_us > auto.time_us && stopped.time_us < ring.time_us);
    }
    assert!(
        tree.assumes
            .contains("tree forced (NCCL_ALGO), the tuner's choice of protocol"),
        "{}",
        tree.assumes
    );
    let nvls = at(AlgoChoice::Nvls);
    assert_eq!(nvls.algorithm, Algorithm::NvlsTree);
    assert!(
        nvls.why
            .starts_with("NVLS across 32 NVLink domains runs as nvls-tree"),
        "{}",
        nvls.why
    );
}

/// Errors name switches as the design does: forcing SHARP on the RoCE preset (SHARP set up,
/// Spectrum switches that do not reduce) says "switch-01 does not reduce", not "d4".
#[test]
fn a_refusal_names_the_switch_as_the_design_does() {
    use railyard::analysis::collective::{AlgoChoice, CollectiveError};
    let catalog = Catalog::builtin();
    let mut roce = railyard::io::design_file::load_design(std::path::Path::new(
        "presets/hgx-h100-x4-roce.ron",
    ))
    .expect("the preset loads");
    roce.sharp_enabled = true;
    let mut q = query(Op::AllReduce, GIB);
    q.algorithm = AlgoChoice::Sharp;
    let e = collective(&roce, &catalog, &q).expect_err("Spectrum does not reduce");
    assert!(
        matches!(e, CollectiveError::AlgorithmUnavailable { .. }),
        "{e:?}"
    );
    assert_eq!(
        e.to_string(),
        "sharp is not available for all-reduce: switch-01 does not reduce in the network"
    );
    // Where the name does not say "switch", the word stays.
    let switch = roce
        .devices
        .iter_mut()
        .find(|d| d.name == "switch-01")
        .expect("named");
    switch.name = "tor-a".into();
    let e = collective(&roce, &catalog, &q).expect_err("still does not reduce");
    assert!(
        e.to_string()
            .ends_with("switch tor-a does not reduce in the network"),
        "{e}"
    );
}

/// Two DGX Sparks over one 200G QSFP cable. With both of the ConnectX-7's PCIe Gen5 x4
/// functions in use the cable binds: 200 Gb/s × 1024/1106 (RoCE's 1024-byte packets) = 23.1 GB/s busbw for a 16 GiB
/// all-gather, against 23.74 GB/s measured with both HCAs named (NVIDIA/dgx-spark-playbooks
/// #103, NCCL 2.28.9, MTU 9000). With one function its x4 link binds: 15.75 GB/s × 0.80 =
/// 12.6 GB/s, against 98 Gb/s = 12.25 GB/s measured on one HCA (a GX10 pair, tonyd2wild
/// PR #35). Neither figure was fitted: the rates are PCIe's and RoCE's.
#[test]
fn a_dgx_spark_pair_is_bound_by_its_cable_or_by_one_pcie_function() {
    let mut catalog = Catalog::builtin();
    let pair =
        railyard::io::design_file::load_design(std::path::Path::new("presets/dgx-spark-pair.ron"))
            .expect("the preset loads");
    let q = query(Op::AllGather, 16 * GIB);
    let both = collective(&pair, &catalog, &q).expect("runs");
    // A 16 GiB operation's latency costs under 0.01 %.
    assert!(
        (both.busbw_gbyte_s / (200.0 * 1024.0 / 1106.0 / 8.0) - 1.0).abs() < 1e-4,
        "{}",
        both.busbw_gbyte_s
    );
    assert!((both.busbw_gbyte_s / 23.74 - 1.0).abs() < 0.05);

    catalog
        .merge_text(
            r#"(version: 1, parts: [(id: "cx7-gb10-one-function", vendor: "Test",
                model: "GB10 ConnectX-7, one PCIe function",
                spec: Nic((family: Ethernet, ports: 1, port_gbit_s: 200.0, rdma: true,
                           pcie_generation: 5, pcie_lanes: 4)))])"#,
            "one function",
        )
        .expect("a NIC with four lanes");
    let mut one = pair.clone();
    for d in &mut one.devices {
        if let railyard::model::DeviceKind::GpuNode(n) = &mut d.kind {
            n.nics[0].part = PartId::new("cx7-gb10-one-function");
        }
    }
    let one = collective(&one, &catalog, &q).expect("runs");
    assert!(
        (one.busbw_gbyte_s / (63.0 / 4.0 * 0.80) - 1.0).abs() < 1e-4,
        "{}",
        one.busbw_gbyte_s
    );
    assert!((one.busbw_gbyte_s / (98.0 / 8.0) - 1.0).abs() < 0.05);
}

/// Four 8-NIC nodes on a rail-optimized template: 8 rail leaves and a spine, each a 128-port
/// SN5600 (64 × 800G split in two) using 8 of its ports. All 32 NIC ports fit one of them, so
/// the advice says one switch would do, and what it saves: 9 − 1 switches at the catalog's
/// price. The rail-only template gets the same finding (its 8 rails hold 4 ports each); the
/// star the helper drew, with its one switch, and a design whose 32 node ports outgrow one
/// QM9700 (64 ports, 2 tiers at 16 nodes × 8), get none.
#[test]
fn a_few_nodes_on_tiers_of_switches_are_told_one_switch_would_do() {
    use railyard::generate::{Template, TemplateSpec, generate};
    let catalog = Catalog::builtin();
    let build = |template: Template, nodes: u32, nic: &str, transport: Option<Transport>| {
        let mut spec = TemplateSpec::new(template);
        spec.nodes = Some(nodes);
        spec.node = Some(PartId::from("hgx-h100"));
        spec.nic = Some(PartId::from(nic));
        spec.nics_per_node = Some(8);
        spec.transport = transport;
        generate(&spec, &catalog).expect("generates")
    };
    let found = |d: &Design| {
        advice(d, &catalog, None)
            .into_iter()
            .find(|f| f.code == "one-switch-would-do")
    };
    let sn5600 = catalog
        .get(&PartId::from("sn5600"))
        .expect("in the catalog")
        .price_usd()
        .0;

    let rail = build(
        Template::RailOptimized,
        4,
        "cx7-400gbe",
        Some(Transport::Rdma),
    );
    let f = found(&rail).expect("one switch would do");
    assert_eq!(f.devices.len(), 9);
    assert!(
        f.message.starts_with(
            "9 switches connect 32 node and host ports, which one `sn5600` (128 ports as configured) holds"
        ),
        "{}",
        f.message
    );
    assert!(
        f.message.contains("without the 32 cables between switches"),
        "{}",
        f.message
    );
    let saved = railyard::model::Usd(8.0 * sn5600).compact();
    assert!(
        f.message.ends_with(&format!("{saved} less in switches")),
        "{}",
        f.message
    );

    let rail_only = build(Template::RailOnly, 4, "cx7-400gbe", Some(Transport::Rdma));
    let f = found(&rail_only).expect("one switch would do for the rails too");
    assert!(
        f.message.starts_with("8 switches connect 32"),
        "{}",
        f.message
    );

    let star = build(Template::Star, 4, "cx7-400gbe", Some(Transport::Rdma));
    assert!(found(&star).is_none());
    let wide = build(Template::RailOptimized, 16, "cx7-ndr-400", None);
    assert!(
        found(&wide).is_none(),
        "128 ports do not fit a 64-port QM9700"
    );
}

/// NVLSTree crosses the network from at most 32 GPUs of a domain: NCCL caps the NVLS graph's
/// channels, its heads, at NCCL_MAX_NVLS_ARITY (`search.cc`, `device.h`). Two NVL72 racks,
/// a NIC per GPU: the all-reduce's network tree runs on 32 NICs a rack and leaves 40 idle,
/// where every one of the 72 used to carry a share. And NVLS runs all-gather only up to 32
/// GPUs a domain (`enqueue.cc`): forced on a rack of 72 it is refused.
#[test]
fn nvls_tree_heads_a_domain_from_at_most_32_gpus() {
    use railyard::generate::{Template, TemplateSpec, generate};
    let catalog = Catalog::builtin();
    let mut spec = TemplateSpec::new(Template::Nvl72);
    spec.nodes = Some(2);
    let design = generate(&spec, &catalog).expect("two racks");
    let r = collective(&design, &catalog, &query(Op::AllReduce, GIB)).expect("an all-reduce");
    assert_eq!(r.algorithm, Algorithm::NvlsTree);
    let network: Vec<_> = design
        .links
        .iter()
        .filter(|l| l.tech != LinkTech::NvLink)
        .collect();
    assert_eq!(network.len(), 144);
    let busy = network
        .iter()
        .filter(|l| {
            r.link_utilization
                .iter()
                .any(|&(id, u)| id == l.id && u > 0.0)
        })
        .count();
    assert_eq!(busy, 64);
    let rack: Design = generate(
        &TemplateSpec {
            nodes: Some(1),
            ..spec
        },
        &catalog,
    )
    .expect("one rack");
    let forced = forced(
        Op::AllGather,
        GIB,
        AlgoChoice::from_cli_name("nvls").expect("an algorithm"),
        Protocol::Simple,
    );
    let e = collective(&rack, &catalog, &forced).expect_err("refused");
    assert!(
        e.to_string().contains("only up to 32 GPUs in a domain"),
        "{e}"
    );
    // Inside the rack only those 32 heads reduce, each 1/32 of the data on top of the 1 that
    // every GPU's port carries each way: their ports set the pace, as on a domain of 32
    // GPUs, all heads. The rate per byte is the same on 72 GPUs as on 32 (1 + 1/32 each
    // way), where 1 + 1/72 would make 72 GPUs 1.7 % faster.
    let nvls = |gpus: u32| {
        let mut q = query(Op::AllReduce, GIB);
        q.algorithm = AlgoChoice::from_cli_name("nvls").expect("an algorithm");
        q.gpus = Some(gpus);
        collective(&rack, &catalog, &q).expect("an all-reduce")
    };
    let (all, heads) = (nvls(72), nvls(32));
    assert!(
        close(all.bandwidth_us, heads.bandwidth_us, 1e-9),
        "{} vs {}",
        all.bandwidth_us,
        heads.bandwidth_us
    );
    // Fewer GPUs are fewer heads, each with a larger share.
    let ratio = nvls(16).bandwidth_us / heads.bandwidth_us;
    assert!(
        close(ratio, (1.0 + 1.0 / 16.0) / (1.0 + 1.0 / 32.0), 1e-9),
        "{ratio}"
    );
}

/// Before 2.27 NCCL's tuner enables LL128 by default only on the GPUs NVIDIA tested it on
/// (sm70, sm80, sm90; from 2.25 sm100 and sm120; `tuning.cc`): two RTX 2080 Ti (sm75) on an
/// NVLink bridge run LL and Simple under PyTorch 2.5's NCCL 2.21.5, and LL128 too from 2.27,
/// where every GPU from sm70 gets it. The eval says which.
#[test]
fn ll128_runs_only_on_the_gpus_its_release_was_tested_on() {
    use railyard::model::NcclRelease;
    let catalog = Catalog::builtin();
    let path = std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("assets/validation/rtx2080ti-pair-nvlink.ron");
    let mut design = railyard::io::load_design(&path).expect("the 2080 Ti pair");
    let ring_ll128 = forced(Op::AllReduce, 1 << 22, AlgoChoice::Ring, Protocol::Ll128);
    design.nccl_release = Some(NcclRelease::new(2, 21, 5));
    let e = collective(&design, &catalog, &ring_ll128).expect_err("no LL128 on sm75");
    assert!(e.to_string().contains("LL128"), "{e}");
    let r = collective(&design, &catalog, &query(Op::AllReduce, 1 << 22)).unwrap();
    assert_ne!(r.protocol, Protocol::Ll128);
    assert!(
        r.notes
            .iter()
            .any(|n| n.contains("NCCL 2.21.5 enables LL128 by default only on GPUs it was tested on (sm70, sm80 and sm90)")),
        "{:?}",
        r.notes
    );
    design.nccl_release = Some(NcclRelease::new(2, 27, 7));
    let r = collective(&design, &catalog, &ring_ll128).expect("LL128 from 2.27");
    assert_eq!(r.protocol, Protocol::Ll128);
    assert!(!r.notes.iter().any(|n| n.contains("enables LL128")));
    // A100s with an H100 (sm80 with sm90) even under 2.30.7: GPUs that differ get it only
    // from sm90 up.
    let path = std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("assets/validation/hgx-a100-2node-roce.ron");
    let mut mixed = railyard::io::load_design(&path).expect("the OCI pair");
    if let Some(n) = mixed.devices.iter_mut().find_map(|d| match &mut d.kind {
        railyard::model::DeviceKind::GpuNode(n) => Some(n),
        _ => None,
    }) {
        n.gpu = railyard::model::PartId::new("h100-sxm");
    }
    let r = collective(&mixed, &catalog, &query(Op::AllReduce, 1 << 20)).unwrap();
    assert_ne!(r.protocol, Protocol::Ll128);
    assert!(
        r.notes
            .iter()
            .any(|n| n.contains("leaves LL128 off where the GPUs differ (sm80 with sm90")),
        "{:?}",
        r.notes
    );
}

/// NCCL's socket transport moves TCP, whose payload at Ethernet's standard 1500-byte MTU is
/// 1448 bytes (IPv4 20, TCP 20 and its timestamp option 12) per 1538 on the wire (preamble 8,
/// MAC header 14, FCS 4, gap 12). Four PCs, one RTX 4090 each, on a 10 GbE star: a ring
/// all-reduce puts 2(n − 1)/n = 1.5 of the buffer on each link, so at 1 GiB the wire alone
/// takes 1.5 × 2^30 B / (1.25 GB/s × 1448/1538) = 1.368 s. On 100 GbE cards the plan says a
/// single TCP flow, not the wire, may bind (the slowest published, 16.5 Gb/s, nccl #209).
#[test]
fn nccl_sockets_carry_tcp_at_its_1500_byte_frame_share_and_say_when_a_flow_may_bind() {
    let catalog = Catalog::builtin();
    let star = four_pcs_on_a_star;
    let ten = collective(&star("x710-10gbe"), &catalog, &query(Op::AllReduce, GIB)).unwrap();
    let wire_s = 1.5 * GIB as f64 / (10e9 / 8.0 * 1448.0 / 1538.0);
    assert!(
        ten.time_us > wire_s * 1e6 && close(ten.time_us, wire_s * 1e6, 1e-3),
        "{} µs against the wire's {} µs",
        ten.time_us,
        wire_s * 1e6
    );
    let said = |notes: &[String], what: &str| notes.iter().any(|n| n.contains(what));
    assert!(
        said(&ten.notes, "TCP carries 94 % of the line rate"),
        "{:?}",
        ten.notes
    );
    assert!(!said(&ten.notes, "proxy thread"), "{:?}", ten.notes);
    let hundred = collective(&star("e810-100gbe"), &catalog, &query(Op::AllReduce, GIB)).unwrap();
    assert!(
        said(
            &hundred.notes,
            "a flow has been measured as slow as 16.5 Gb/s"
        ) && said(&hundred.notes, "at 100 Gb/s the host's CPU may bind"),
        "{:?}",
        hundred.notes
    );
}

/// Without GPUDirect RDMA NCCL stages network data in host memory (net.cc maps the buffers
/// there): the sending GPU's kernel writes into it and the receiving GPU's kernel reads from
/// it, so each GPU's PCIe link carries the data as SHM traffic does. Two servers, one L40S
/// each (PCIe 4.0 x16, 31.5 GB/s a direction), 400 GbE RDMA NICs with GPUDirect off: each GPU
/// sends and receives the whole buffer through host memory at once, so its link moves
/// 31.5 GB/s × SHM's one-way share (10.31/15.754) × the share each direction keeps when both
/// run (3.9/10.31) = 31.5 × 3.9/15.754 = 7.80 GB/s: the busbw of a 2-rank all-reduce.
/// Measured on such servers (two R760xa, L40S, 200 GbE): 7.99 GB/s.
#[test]
fn network_data_without_gpudirect_crosses_each_gpus_pcie_link_as_host_memory_traffic() {
    use railyard::generate::{Template, TemplateSpec, generate};
    use railyard::model::{DeviceKind, PcieVia, ScaleUp};
    let catalog = Catalog::builtin();
    let servers = |gpus: u32| {
        let mut spec = TemplateSpec::new(Template::Star);
        spec.nodes = Some(2);
        spec.node = Some(PartId::new("pcie-server-8gpu"));
        spec.gpus_per_node = Some(gpus);
        spec.nic = Some(PartId::new("cx7-400gbe"));
        spec.transport = Some(Transport::Rdma);
        generate(&spec, &catalog).expect("two L40S servers")
    };
    let set_gpudirect = |design: &mut railyard::model::Design, on: bool| {
        for d in &mut design.devices {
            if let DeviceKind::GpuNode(n) = &mut d.kind {
                for slot in &mut n.nics {
                    slot.gpudirect = on;
                }
            }
        }
    };
    let said = |notes: &[String], what: &str| notes.iter().any(|n| n.contains(what));
    let mut off = servers(1);
    set_gpudirect(&mut off, false);
    let r = collective(&off, &catalog, &query(Op::AllReduce, GIB)).unwrap();
    let staged = 31.5 * 3.9 / 15.754;
    assert!(
        r.busbw_gbyte_s < staged && close(r.busbw_gbyte_s, staged, 2e-3),
        "{} GB/s against {staged}",
        r.busbw_gbyte_s
    );
    assert!(
        said(&r.notes, "no GPUDirect RDMA (a NIC has it turned off)")
            && said(
                &r.notes,
                "host-memory (SHM) rates are a PCIe 3.0 host's of 2019"
            ),
        "{:?}",
        r.notes
    );
    // With it on, the NIC reads GPU memory itself: the PCIe link's peer-to-peer rate,
    // 31.5 × 0.8 = 25.2 GB/s, is the bound, and nothing is said of host memory.
    let mut on = servers(1);
    set_gpudirect(&mut on, true);
    let r = collective(&on, &catalog, &query(Op::AllReduce, GIB)).unwrap();
    assert!(r.busbw_gbyte_s > 20.0, "{} GB/s", r.busbw_gbyte_s);
    assert!(
        !said(&r.notes, "GPUDirect") && !said(&r.notes, "SHM"),
        "{:?}",
        r.notes
    );
    // Two GPUs that meet at the host bridge sit on the CPU's root ports, and so does the NIC:
    // NCCL's default NCCL_NET_GDR_LEVEL (PXB, a shared PCIe switch) leaves GPUDirect off
    // whatever the NIC offers. Behind a PCIe switch it stays on.
    let mut bridge = servers(2);
    set_gpudirect(&mut bridge, true);
    let r = collective(&bridge, &catalog, &query(Op::AllReduce, GIB)).unwrap();
    assert!(
        said(&r.notes, "GPUs and NICs meet only at the host bridge"),
        "{:?}",
        r.notes
    );
    let past_level = |design: &railyard::model::Design| {
        advice(design, &catalog, None)
            .iter()
            .any(|f| f.code == "gpudirect-past-level")
    };
    assert!(past_level(&bridge));
    for d in &mut bridge.devices {
        if let DeviceKind::GpuNode(n) = &mut d.kind
            && let ScaleUp::Pcie { via, .. } = &mut n.scale_up
        {
            *via = PcieVia::Switch;
        }
    }
    let r = collective(&bridge, &catalog, &query(Op::AllReduce, GIB)).unwrap();
    assert!(!said(&r.notes, "GPUDirect"), "{:?}", r.notes);
    assert!(!past_level(&bridge));
}

/// Four PCs, one RTX 4090 each, a `nic` card in each, on a star switch, over TCP.
fn four_pcs_on_a_star(nic: &str) -> railyard::model::Design {
    use railyard::generate::{Template, TemplateSpec, generate};
    let mut spec = TemplateSpec::new(Template::Star);
    spec.nodes = Some(4);
    spec.node = Some(PartId::new("workstation"));
    spec.gpu = Some(PartId::new("rtx-4090"));
    spec.gpus_per_node = Some(1);
    spec.nic = Some(PartId::new(nic));
    spec.transport = Some(Transport::Tcp);
    generate(&spec, &Catalog::builtin()).expect("four PCs on a star")
}

/// What the model assumes names only what the hardware offers: NVLS on NVSwitch boards whose
/// switches run it, in-network reduction (and CollNet being off) where a switch could reduce.
/// Two RTX 4090s over 25 GbE have neither; the RoCE preset's Spectrum switches do not reduce;
/// the SuperPOD SU's Quantum-2 switches do, and the line follows the design's setting.
#[test]
fn the_assumptions_name_only_what_the_hardware_offers() {
    let catalog = Catalog::builtin();
    let assumes = |file: &str, sharp: bool| {
        let mut d = railyard::io::design_file::load_design(std::path::Path::new(file))
            .expect("the preset loads");
        d.sharp_enabled = sharp;
        collective(&d, &catalog, &query(Op::AllReduce, GIB))
            .expect("runs")
            .assumes
    };
    let pair = assumes("presets/rtx4090-pair-25gbe.ron", false);
    assert!(
        pair.ends_with(": the tuner's choice of algorithm and protocol; one process per GPU"),
        "{pair}"
    );
    // Set up or not, no switch of the pair's reduces: nothing is said of it.
    assert_eq!(assumes("presets/rtx4090-pair-25gbe.ron", true), pair);
    let roce = assumes("presets/hgx-h100-x4-roce.ron", false);
    assert!(
        roce.ends_with(
            ": the tuner's choice of algorithm and protocol, NVLS where NVSwitch supports it; \
             one process per GPU"
        ),
        "{roce}"
    );
    let su = assumes("presets/dgx-h100-superpod-su.ron", false);
    assert!(
        su.ends_with(
            "NVLS where NVSwitch supports it, no in-network reduction (CollNet off); one \
             process per GPU"
        ),
        "{su}"
    );
    let su_sharp = assumes("presets/dgx-h100-superpod-su.ron", true);
    assert!(
        su_sharp.contains(
            "with CollNet set up: the tuner's choice of algorithm and protocol, SHARP \
             in-network reduction where the switches support it, NVLS where NVSwitch \
             supports it"
        ),
        "{su_sharp}"
    );
}

/// Two Mac minis (M4 Pro) on one Thunderbolt 5 cable, RDMA, MLX's JACCL: an all-reduce of
/// 4 MiB took 625 µs (6.71 GB/s) and of 64 MiB 8.45 ms (7.94 GB/s) in the hotwa/mlx-jaccl-cluster
/// README (0d78a206; macOS 26.3). Neither size set a constant (the message cost comes from
/// its 4 KiB row; the rate from TB5's 80 Gb/s, its PCIe tunnel and RDMA's headers): the
/// model stays within 10 % of both. Its 256 KiB row (144 µs) the model puts at 60 µs: what
/// the chunk in flight costs there is not modelled.
#[test]
fn two_m4_pro_mac_minis_over_jaccl_match_a_published_run_at_large_sizes() {
    use railyard::generate::{Template, TemplateSpec, generate};
    let catalog = Catalog::builtin();
    let mut spec = TemplateSpec::new(Template::Mesh);
    spec.nodes = Some(2);
    spec.node = Some(PartId::new("mac-mini-m4-pro"));
    spec.transport = Some(Transport::Rdma);
    let design = generate(&spec, &catalog).expect("two Mac minis");
    for (bytes, measured_us) in [
        (4u64 << 20, 4_194_304.0 / 6.71e3),
        (64 << 20, 67_108_864.0 / 7.94e3),
    ] {
        let r = collective(&design, &catalog, &query(Op::AllReduce, bytes)).unwrap();
        assert_eq!(r.library, railyard::analysis::collective::Library::MlxJaccl);
        assert!(
            close(r.time_us, measured_us, 0.10),
            "{bytes} B: {} µs against {measured_us} µs measured",
            r.time_us
        );
    }
    // 4 KiB: the message cost itself, 25 µs, and 4 KiB at the link's rate.
    let tiny = collective(&design, &catalog, &query(Op::AllReduce, 4096)).unwrap();
    assert!(close(tiny.time_us, 25.5, 0.02), "{} µs", tiny.time_us);
}
