//! The evaluator's shortcuts (threads, pruning, latency floors, side-by-side scans) change no
//! answer.

use super::schedule::{latency_grows_with_size, make_plans};
use super::step_latency::latency_floor_us;
use super::*;
use crate::analysis::collective::plan::Groups;
use crate::analysis::collective::test_designs::rail_optimized;
use crate::analysis::collective::workspace::Strategy;
use crate::analysis::collective::{AlgoChoice, collective_in, sweep_sizes};

/// A workspace whose evaluations plan on `threads` threads whatever the fabric's size.
fn with_plan_threads(threads: usize) -> Workspace {
    Workspace::with_strategy(Strategy {
        plan_threads: Some(threads),
        ..Strategy::default()
    })
}

/// Planning on two threads gives what planning one after another does, bit for bit: the
/// same plans in the same order, the same costs, the same loads kept.
#[test]
fn threads_change_nothing() {
    let catalog = Catalog::builtin();
    let design = rail_optimized(64, "dgx-h100", 2);
    let fab = Workspace::default()
        .build_fabric(&design, &catalog)
        .expect("fabric");
    let all: Vec<u32> = (0..fab.gpus.len() as u32).collect();
    let half: Vec<u32> = (0..fab.gpus.len() as u32 / 2).collect();
    let summary = |threads: usize, groups: &[Vec<u32>], op: Op, routing: Routing, keep: Keep| {
        let workspace = with_plan_threads(threads);
        let plans = make_plans(
            &fab,
            &design,
            groups,
            op,
            AlgoChoice::Auto,
            routing,
            None,
            keep,
            None,
            &workspace,
        );
        let (plans, _, _) = plans.expect("plans");
        plans
            .iter()
            .map(|c| {
                let loads: Vec<Vec<u64>> = c
                    .plan
                    .phases
                    .iter()
                    .map(|p| p.loads.iter().map(|l| l.to_bits()).collect())
                    .collect();
                (
                    c.plan.algorithm,
                    c.seconds_per_byte.to_bits(),
                    c.plan.net_extra_us.to_bits(),
                    loads,
                )
            })
            .collect::<Vec<_>>()
    };
    let mut kept_somewhere = 0;
    for groups in [vec![all.clone()], vec![half.clone()]] {
        for op in [Op::AllReduce, Op::AllGather, Op::AllToAll] {
            for routing in [Routing::Ecmp, Routing::Adaptive] {
                for keep in [
                    Keep::All,
                    Keep::BestAt(1e3),
                    Keep::BestAt(1e9),
                    Keep::Nothing,
                ] {
                    let (mut one, mut two) = (
                        summary(1, &groups, op, routing, keep),
                        summary(2, &groups, op, routing, keep),
                    );
                    if let Keep::BestAt(_) = keep {
                        // Which plans stop early on two threads depends on which one
                        // finishes first (see `Prune`): only those may be missing on
                        // either side, and the chosen one (keeping loads) must not be.
                        let (a, b) = (one.clone(), two.clone());
                        for (side, other) in [(&mut one, &b), (&mut two, &a)] {
                            side.retain(|p| {
                                let both = other.iter().any(|q| q.0 == p.0);
                                assert!(
                                    both || matches!(
                                        p.0,
                                        Algorithm::Tree | Algorithm::NvlsTree | Algorithm::Sharp
                                    ),
                                    "{op} {keep:?}: {} costed on one side only",
                                    p.0
                                );
                                both
                            });
                        }
                    }
                    assert_eq!(one, two, "{op} {routing:?} {keep:?}");
                    if keep != Keep::Nothing {
                        kept_somewhere += one.iter().filter(|p| !p.3.is_empty()).count();
                    }
                    if let Keep::BestAt(_) = keep {
                        let kept = one.iter().filter(|p| !p.3.is_empty()).count();
                        assert_eq!(
                            kept, 1,
                            "{op} {keep:?}: exactly the chosen plan keeps loads"
                        );
                    }
                }
            }
        }
    }
    // Keep::All keeps every plan of every case; 12 of them were hierarchical before it left
    // NCCL's automatic choice.
    assert!(kept_somewhere > 8, "{kept_somewhere}");
    // All-reduce plans several algorithms (ring, tree, NVLS-tree): the threads had work to
    // share.
    assert_eq!(
        summary(1, &[all], Op::AllReduce, Routing::Ecmp, Keep::All).len(),
        3
    );
}

/// Load buffers pass from one evaluation to the next: results do not depend on what ran
/// before.
#[test]
fn earlier_evaluations_leave_no_trace() {
    let catalog = Catalog::builtin();
    let design = rail_optimized(16, "dgx-h100", 2);
    let all_reduce = CollectiveQuery::new(Op::AllReduce, Bytes(1 << 30));
    let workspace = Workspace::default();
    let first = collective_in(&design, &catalog, &all_reduce, &workspace).expect("first");
    assert!(first.time_us > 0.0 && !first.bottleneck.is_empty());
    for op in [Op::AllToAll, Op::AllGather, Op::AllReduce] {
        let q = CollectiveQuery::new(op, Bytes(1 << 20));
        let sweep = Evaluator::new(&design, &catalog, &q, Keep::All, &workspace).expect("sweep");
        for size in sweep_sizes() {
            sweep.result_at(size);
        }
    }
    let again = collective_in(&design, &catalog, &all_reduce, &workspace).expect("again");
    assert_eq!(first, again);
}

/// Leaving ring and hierarchical uncosted when their latency alone loses changes no
/// answer: one size's result is the sweep's (every algorithm costed) at that size, bar
/// the list of candidates, on one thread and on two.
#[test]
fn latency_floor_leaves_out_only_losers() {
    let catalog = Catalog::builtin();
    // Hopper nodes on switches that reduce in the network; Ampere nodes (no NVLS) on
    // switches that do not, where rings win the large sizes.
    let mut plain = rail_optimized(8, "dgx-a100", 2);
    for d in &mut plain.devices {
        if let crate::model::DeviceKind::Switch(s) = &mut d.kind {
            s.features.in_network_reduction = false;
        }
    }
    let (mut left_out, mut costed, mut ring_won) = (0, 0, 0);
    for (threads, design) in [1, 2]
        .into_iter()
        .flat_map(|t| [(t, rail_optimized(64, "dgx-h100", 2)), (t, plain.clone())])
    {
        let workspace = with_plan_threads(threads);
        for (op, protocol) in [
            (Op::AllReduce, None),
            (Op::AllReduce, Some(Protocol::Ll)),
            (Op::AllGather, None),
        ] {
            for bytes in [8u64, 1 << 16, 1 << 20, 1 << 26, 1 << 30, 1 << 33] {
                let mut q = CollectiveQuery::new(op, Bytes(bytes));
                q.protocol = protocol;
                let one = collective_in(&design, &catalog, &q, &workspace).expect("one");
                let all = Evaluator::new(&design, &catalog, &q, Keep::All, &workspace)
                    .expect("all")
                    .result_at(Bytes(bytes));
                for c in &one.candidates {
                    assert!(all.candidates.contains(c), "{c:?}");
                }
                ring_won += usize::from(one.algorithm == Algorithm::Ring);
                if one
                    .candidates
                    .iter()
                    .any(|c| c.algorithm == Algorithm::Ring)
                {
                    costed += 1;
                } else {
                    left_out += 1;
                    // Every ring candidate was slower than the answer.
                    let rings = all
                        .candidates
                        .iter()
                        .filter(|c| c.algorithm == Algorithm::Ring);
                    assert!(rings.clone().count() > 0);
                    assert!(rings.clone().all(|c| c.time_us > one.time_us));
                }
                // The floor is under every costed ring and hierarchical plan's latency.
                if threads == 1 && bytes == 8 {
                    let fab = workspace.build_fabric(&design, &catalog).expect("fabric");
                    let groups = [(0..fab.gpus.len() as u32).collect::<Vec<u32>>()];
                    let gs = Groups::new(&fab, &groups);
                    let (plans, _, _) = make_plans(
                        &fab,
                        &design,
                        &groups,
                        op,
                        AlgoChoice::Auto,
                        Routing::Ecmp,
                        protocol,
                        Keep::Nothing,
                        None,
                        &workspace,
                    )
                    .expect("plans");
                    for c in plans
                        .iter()
                        .filter(|c| latency_grows_with_size(c.plan.algorithm))
                    {
                        for p in protocols_for(&c.plan) {
                            let floor = latency_floor_us(
                                c.plan.algorithm,
                                op,
                                Some(p),
                                &gs,
                                groups[0].len() as u32,
                                fab.library,
                                fab.latency_table(),
                            );
                            let latency = latency_us(&c.plan, &c.intra_hops, op, p, 0.0);
                            assert!(floor > 0.0 && floor <= latency, "{floor} {latency}");
                        }
                    }
                }
                // What was costed differs, and so does the runner-up named in `why`.
                let bare = |r: &CollectiveResult| CollectiveResult {
                    candidates: Vec::new(),
                    why: String::new(),
                    ..r.clone()
                };
                assert_eq!(bare(&one), bare(&all), "{op:?} {bytes} B");
            }
        }
    }
    // Both cases came up: small sizes rule the ring out, the largest do not.
    assert!(left_out > 0 && costed > 0, "{left_out} {costed}");
    assert!(ring_won > 0);
}

/// Plans that stop early (tree, NVLS-tree, SHARP, once their loads so far make them slower
/// than a plan already costed) change nothing but the list of candidates: the answer is
/// the one of costing every plan, on one thread and on two, and every candidate left out
/// was slower than it. SHARP, planned first, wins the large sizes on a three-tier
/// rail-optimized fabric and on a 3:1 oversubscribed fat-tree, so the others stop there;
/// without it, tree is planned first and NVLS-tree, a little faster, must not stop.
#[test]
fn plans_stop_early_only_when_slower() {
    let catalog = Catalog::builtin();
    // SHARP set up on the first two (NCCL leaves it off unless told).
    let mut fat_tree = crate::io::design_file::parse_design(
        include_str!("../../../../presets/dgx-h100-fat-tree-3to1.ron"),
        "dgx-h100-fat-tree-3to1.ron",
    )
    .expect("preset");
    fat_tree.sharp_enabled = true;
    let mut with_sharp = rail_optimized(64, "dgx-h100", 3);
    with_sharp.sharp_enabled = true;
    let mut plain = rail_optimized(64, "dgx-h100", 3);
    for d in &mut plain.devices {
        if let crate::model::DeviceKind::Switch(s) = &mut d.kind {
            s.features.in_network_reduction = false;
        }
    }
    let designs = [with_sharp, fat_tree, plain];
    let (mut stopped, mut answers) = (0, 0);
    for (threads, design) in [1, 2]
        .into_iter()
        .flat_map(|t| designs.iter().map(move |d| (t, d)))
    {
        let workspace = with_plan_threads(threads);
        for protocol in [None, Some(Protocol::Simple), Some(Protocol::Ll)] {
            for bytes in [1u64 << 16, 1 << 22, 1 << 26, 1 << 30, 1 << 33] {
                let mut q = CollectiveQuery::new(Op::AllReduce, Bytes(bytes));
                q.protocol = protocol;
                let one = collective_in(design, &catalog, &q, &workspace).expect("one");
                let all = Evaluator::new(design, &catalog, &q, Keep::All, &workspace)
                    .expect("all")
                    .result_at(Bytes(bytes));
                // What was costed differs, and so does the runner-up named in `why`.
                let bare = |r: &CollectiveResult| CollectiveResult {
                    candidates: Vec::new(),
                    why: String::new(),
                    ..r.clone()
                };
                assert!(
                    bare(&one) == bare(&all),
                    "{protocol:?} {bytes} B: {} {} µs, costing all: {} {} µs",
                    one.algorithm,
                    one.time_us,
                    all.algorithm,
                    all.time_us
                );
                answers += usize::from(threads == 1);
                for c in &all.candidates {
                    if one.candidates.contains(c) {
                        continue;
                    }
                    assert!(c.time_us > one.time_us, "{c:?} left out of {one:?}");
                    // On one thread the order, so which plans stop, is fixed.
                    if threads == 1
                        && matches!(
                            c.algorithm,
                            Algorithm::Tree | Algorithm::NvlsTree | Algorithm::Sharp
                        )
                    {
                        stopped += 1;
                    }
                }
            }
        }
    }
    assert!(stopped >= answers / 4, "{stopped} of {answers}");
}

/// The bottleneck report scans links and ports side by side on large fabrics: the same
/// report as one scan, for one-phase plans and hierarchical's three phases.
#[test]
fn bottleneck_scans_side_by_side_report_what_one_scan_does() {
    let catalog = Catalog::builtin();
    let mut design = rail_optimized(32, "dgx-a100", 2);
    design.links[5].state = crate::model::LinkState::Degraded { fraction: 0.25 };
    for algorithm in [AlgoChoice::Auto, AlgoChoice::Tree, AlgoChoice::Hierarchical] {
        let mut q = CollectiveQuery::new(Op::AllReduce, Bytes(1 << 30));
        q.algorithm = algorithm;
        let report = |threads: usize| {
            let workspace = with_plan_threads(threads);
            let r = collective_in(&design, &catalog, &q, &workspace);
            r.expect("result")
        };
        let (one, two) = (report(1), report(2));
        assert!(!one.bottleneck.is_empty() && !one.link_utilization.is_empty());
        assert_eq!(one.bottleneck, two.bottleneck, "{algorithm:?}");
        assert_eq!(one.link_utilization, two.link_utilization, "{algorithm:?}");
        assert_eq!(
            one.device_utilization, two.device_utilization,
            "{algorithm:?}"
        );
    }
}
