//! The plans' shortcuts against the plain sums, and a tree's loads worked out by hand.

use super::*;
use crate::analysis::collective::test_designs::rail_optimized;
use crate::analysis::collective::workspace::{Strategy, Workspace};
use crate::model::{Catalog, DeviceKind, LinkState};

/// All-to-all loads with the per-node sweeps and transfer by transfer, bit for bit.
fn sweeps_match_transfers(design: &crate::model::Design, gpus: u32) {
    let catalog = Catalog::builtin();
    let workspace = Workspace::default();
    let fab = workspace.build_fabric(design, &catalog).expect("fabric");
    let groups = vec![(0..gpus).collect::<Vec<u32>>()];
    let gs = Groups::new(&fab, &groups);
    let loads = |transfer_by_transfer: bool| {
        let workspace = Workspace::with_strategy(Strategy {
            transfer_by_transfer,
            ..Strategy::default()
        });
        let mut router = Router::new(&fab, &workspace);
        let plan = plan(
            &fab,
            &mut router,
            &gs,
            Op::AllToAll,
            Algorithm::Direct,
            Routing::Ecmp,
        );
        let plan = plan.expect("all-to-all plan");
        assert_eq!(plan.phases.len(), 1);
        (
            plan.phases[0].loads.as_ref().clone(),
            plan.intra_hop,
            plan.uses_net,
        )
    };
    let (fast, slow) = (loads(false), loads(true));
    assert_eq!((fast.1, fast.2), (slow.1, slow.2));
    assert_eq!(fast.0.len(), slow.0.len());
    let differ = fast
        .0
        .iter()
        .zip(&slow.0)
        .filter(|(a, b)| a.to_bits() != b.to_bits())
        .count();
    assert_eq!(differ, 0, "{differ} arcs differ");
    // The aggregated path ran: NVLink ports and network arcs both carry traffic.
    assert!(fast.0.iter().filter(|&&l| l > 0.0).count() > gpus as usize);
}

/// The design with its first GPU node holding 4 of its 8 GPUs (on NICs 0, 2, 4, 6).
fn first_node_cut_to_four_gpus(mut design: crate::model::Design) -> crate::model::Design {
    let first = design
        .devices
        .iter_mut()
        .find_map(|d| match &mut d.kind {
            DeviceKind::GpuNode(n) => Some(n),
            _ => None,
        })
        .expect("a GPU node");
    first.gpu_count = 4;
    design
}

#[test]
fn all_to_all_sweeps_equal_transfers_on_a_symmetric_fabric() {
    // 1,024 GPUs: 1,040,384 remote pairs, past the explicit limit, so aggregated.
    sweeps_match_transfers(&rail_optimized(128, "dgx-h100", 2), 1024);
}

#[test]
fn all_to_all_sweeps_equal_transfers_on_an_irregular_fabric() {
    // The first node holds 4 GPUs (on NICs 0, 2, 4, 6: rails without a GPU there take
    // the GPU-by-GPU path), part of the last node is left out of the group, and one
    // leaf loses an uplink.
    let mut design = first_node_cut_to_four_gpus(rail_optimized(128, "dgx-h100", 2));
    let uplink = design
        .links
        .iter()
        .position(|l| {
            [l.a.device, l.b.device].iter().all(|&d| {
                design
                    .device(d)
                    .is_some_and(|d| matches!(d.kind, DeviceKind::Switch(_)))
            })
        })
        .expect("a switch-to-switch link");
    design.links[uplink].state = LinkState::Failed;
    sweeps_match_transfers(&design, 1017);
}

#[test]
fn tree_chains_load_each_nvlink_port_by_its_place_in_the_chains() {
    // Four DGX H100 nodes, the first cut to 4 GPUs (on NICs 0, 2, 4, 6). Eight channels
    // (one per NIC), each carrying 1/16 of the size each way per tree edge; inside a node
    // a channel's chain runs from its head (the first GPU on its NIC, else the GPU beside
    // the NIC) around to the GPU before it, and every chain edge is a transfer each way of
    // twice that: 1/8. A full node's GPU heads one chain and ends one, so it is on
    // 2·8 − 2 = 14 edges: 1.75 up and down. In the cut node each GPU sits beside two NICs
    // (NIC i by GPU i·4/8), so it heads two chains and ends two: 16 − 4 = 12 edges, 1.5.
    let design = first_node_cut_to_four_gpus(rail_optimized(4, "dgx-h100", 2));
    let catalog = Catalog::builtin();
    let workspace = Workspace::default();
    let fab = workspace.build_fabric(&design, &catalog).expect("fabric");
    assert_eq!(fab.gpus.len(), 28);
    let groups = vec![(0..28).collect::<Vec<u32>>()];
    let gs = Groups::new(&fab, &groups);
    let mut router = Router::new(&fab, &workspace);
    let plan = plan(
        &fab,
        &mut router,
        &gs,
        Op::AllReduce,
        Algorithm::Tree,
        Routing::Ecmp,
    )
    .expect("tree plan");
    let loads = &plan.phases[0].loads;
    let expected = |g: usize| if g < 4 { 1.5 } else { 1.75 };
    for (g, gpu) in fab.gpus.iter().enumerate() {
        assert_eq!(loads[gpu.su_up as usize], expected(g), "GPU {g} up");
        assert_eq!(loads[gpu.su_down as usize], expected(g), "GPU {g} down");
    }
    assert_eq!(plan.intra_hop, Some(HopKind::NvLink));
}
