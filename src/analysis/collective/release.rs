//! What an NCCL release sets up beyond its latency tables (`latency::LatencyTable`): which
//! groups get NVLS, and what a forced algorithm it cannot run falls back to. Read from each
//! release's `src/transport/nvls.cc` (`ncclNvlsInit`) and `src/enqueue.cc`.

use super::latency::LatencyTable;
use crate::model::NcclRelease;

/// The releases a design can name in the inspector: the last patch of each release line from
/// 2.5 (the first with the tables modelled), and the patches within a line where the tables or
/// the NVLS rules changed (2.18.1 and 2.18.3, 2.28.3 to 2.28.9). Newest first.
pub const OFFERED: [NcclRelease; 30] = {
    const fn r(minor: u16, patch: u16) -> NcclRelease {
        NcclRelease::new(2, minor, patch)
    }
    [
        r(30, 7),
        r(29, 7),
        r(28, 9),
        r(28, 7),
        r(28, 3),
        r(27, 7),
        r(26, 6),
        r(25, 1),
        r(24, 3),
        r(23, 4),
        r(22, 3),
        r(21, 5),
        r(20, 5),
        r(19, 4),
        r(18, 6),
        r(18, 3),
        r(18, 1),
        r(17, 1),
        r(16, 5),
        r(15, 5),
        r(14, 3),
        r(13, 4),
        r(12, 12),
        r(11, 4),
        r(10, 3),
        r(9, 9),
        r(8, 4),
        r(7, 8),
        r(6, 4),
        r(5, 7),
    ]
};

/// What the model takes from `release`, for a report's heading.
pub fn release_note(release: NcclRelease) -> String {
    let modelled = NcclRelease::MODELLED;
    if LatencyTable::of(release).is_none() {
        format!(
            "NCCL {release} is older than the latency tables modelled (2.5 on): {modelled}'s \
             are used"
        )
    } else {
        format!(
            "NCCL {release}'s latency tables and LL128 rules (tuning.cc) and NVLS rules \
             (nvls.cc); bandwidth figures as in {modelled}"
        )
    }
}

/// The GPUs `release` enables LL128 on by default, for a note.
pub(crate) fn ll128_tested_on(release: NcclRelease) -> &'static str {
    if !release.before(2, 27, 0) {
        "sm70 and up"
    } else if !release.before(2, 25, 0) {
        "sm70, sm80, sm90, sm100 and sm120"
    } else {
        "sm70, sm80 and sm90"
    }
}

/// Whether `release`'s tuner enables LL128 by default on GPUs whose CUDA compute
/// capabilities (major × 10 + minor) run from `min` to `max` (`tuning.cc`,
/// `ncclTopoTuneModel`, "not tested and may cause silent data corruption" elsewhere):
/// - to 2.24 only on sm70, sm80 and sm90, all GPUs alike;
/// - 2.25 and 2.26 add sm100 and sm120;
/// - from 2.27 on every GPU from sm70, and on GPUs that differ from sm90 up.
///
/// So before 2.27 an RTX 3090 (sm86) or 2080 Ti (sm75) pair on an NVLink bridge runs LL and
/// Simple only.
pub(crate) fn ll128_by_default(release: NcclRelease, min: u16, max: u16) -> bool {
    if min < 70 {
        return false;
    }
    if !release.before(2, 27, 0) {
        return min == max || min >= 90;
    }
    let tested =
        matches!(min, 70 | 80 | 90) || (!release.before(2, 25, 0) && matches!(min, 100 | 120));
    min == max && tested
}

/// Why `release` sets no NVLS up for a group of `gpus_per_node` GPUs in each of `nodes`
/// NVSwitch domains, or None when it does. `ncclNvlsInit` counts the GPUs of the node's
/// topology, the communicator's own:
/// - before 2.17 there is no NVLS;
/// - 2.17 sets it up inside one node only, for 2 GPUs or more (`localRanks <= 1` returns);
/// - 2.18.1 to 2.28.6 need 3 GPUs or more (`gpuCount <= 2` returns);
/// - 2.20.x sets it up inside one node only (`nNodes > 1` returns), so no NVLSTree;
/// - 2.28.7 and later need 2 (`gpuCount < 2`).
pub(crate) fn nvls_refused(release: NcclRelease, gpus_per_node: u32, nodes: u32) -> Option<String> {
    if release.before(2, 17, 0) {
        return Some(format!("NCCL {release} has no NVLS (it came in 2.17)"));
    }
    let single_node_only =
        release.before(2, 18, 0) || (!release.before(2, 20, 0) && release.before(2, 21, 0));
    if nodes > 1 && single_node_only {
        return Some(format!(
            "NCCL {release} sets NVLS up inside one node only (transport/nvls.cc)"
        ));
    }
    let fewest = if release.before(2, 18, 0) || !release.before(2, 28, 7) {
        2
    } else {
        3
    };
    (gpus_per_node < fewest).then(|| {
        format!(
            "NCCL {release} sets NVLS up only for {fewest} or more GPUs in a node \
             (transport/nvls.cc); 2.28.7 and later for 2"
        )
    })
}

/// Whether `release` runs its ring when NCCL_ALGO forces an algorithm it cannot run: 2.19 to
/// 2.23 keep the ring's bandwidth aside and pick it as a backup (enqueue.cc, `backupAlgo`);
/// the releases before and after refuse with "no algorithm/protocol available".
pub(crate) fn forced_falls_back_to_ring(release: NcclRelease) -> bool {
    !release.before(2, 19, 0) && release.before(2, 24, 0)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn nvls_groups_by_release() {
        let r = |m, n, p| NcclRelease::new(m, n, p);
        // nccl #1259 forced NVLS on 2 of a node's H100s under 2.20.5: not set up.
        assert!(nvls_refused(r(2, 20, 5), 2, 1).is_some());
        assert!(nvls_refused(r(2, 20, 5), 8, 1).is_none());
        // 2.20.x: one node only; 2.19 and 2.21 join nodes with NVLSTree.
        assert!(nvls_refused(r(2, 20, 5), 8, 2).is_some());
        assert!(nvls_refused(r(2, 19, 3), 8, 2).is_none());
        assert!(nvls_refused(r(2, 21, 5), 8, 2).is_none());
        // 2 GPUs: 2.17 yes, 2.18.1 to 2.28.6 no, 2.28.7 on yes.
        assert!(nvls_refused(r(2, 17, 1), 2, 1).is_none());
        assert!(nvls_refused(r(2, 28, 3), 2, 1).is_some());
        assert!(nvls_refused(r(2, 28, 7), 2, 1).is_none());
        assert!(nvls_refused(NcclRelease::MODELLED, 2, 1).is_none());
        assert!(nvls_refused(r(2, 16, 5), 8, 1).is_some());
        assert!(nvls_refused(r(2, 17, 1), 8, 2).is_some());
    }

    #[test]
    fn ll128_by_release_and_gpu() {
        let r = |m, n, p| NcclRelease::new(m, n, p);
        // 2.21.5 (PyTorch 2.5's): A100, H100, V100 yes; RTX 3090 (86), 2080 Ti (75), L40S
        // (89), B200 (100) no.
        for cc in [70, 80, 90] {
            assert!(ll128_by_default(r(2, 21, 5), cc, cc), "sm{cc}");
        }
        for cc in [75, 86, 89, 100, 120] {
            assert!(!ll128_by_default(r(2, 21, 5), cc, cc), "sm{cc}");
        }
        // 2.25 adds Blackwell's 100 and 120 (not GB10's 121).
        assert!(ll128_by_default(r(2, 25, 1), 100, 100));
        assert!(ll128_by_default(r(2, 26, 6), 120, 120));
        assert!(!ll128_by_default(r(2, 26, 6), 121, 121));
        assert!(!ll128_by_default(r(2, 26, 6), 86, 86));
        // 2.27 on: any GPU from sm70; mixed ones only from sm90.
        assert!(ll128_by_default(r(2, 27, 3), 86, 86));
        assert!(ll128_by_default(NcclRelease::MODELLED, 89, 89));
        assert!(!ll128_by_default(NcclRelease::MODELLED, 80, 90));
        assert!(ll128_by_default(NcclRelease::MODELLED, 90, 100));
        assert!(!ll128_by_default(r(2, 21, 5), 80, 90));
        assert!(!ll128_by_default(NcclRelease::MODELLED, 61, 61));
    }

    #[test]
    fn the_offered_releases_run_newest_first_from_the_modelled_one() {
        assert_eq!(OFFERED[0], NcclRelease::MODELLED);
        assert!(OFFERED.windows(2).all(|w| w[0] > w[1]));
        assert!(OFFERED.iter().all(|&r| LatencyTable::of(r).is_some()));
    }

    #[test]
    fn only_2_19_to_2_23_fall_back_to_the_ring() {
        let r = |m, n, p| NcclRelease::new(m, n, p);
        assert!(!forced_falls_back_to_ring(r(2, 18, 6)));
        assert!(forced_falls_back_to_ring(r(2, 19, 1)));
        assert!(forced_falls_back_to_ring(r(2, 23, 4)));
        assert!(!forced_falls_back_to_ring(r(2, 24, 3)));
        assert!(!forced_falls_back_to_ring(NcclRelease::MODELLED));
    }
}
