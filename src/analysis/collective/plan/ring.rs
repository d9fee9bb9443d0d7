//! Rings: one per NIC across domains (rail rings), entering each domain on its NIC's GPU.

use super::loads::LoadBuilder;
use super::{CHANNELS_PER_CONNECTION, Segment, key};
use crate::analysis::collective::CollectiveError;
use crate::analysis::collective::fabric::{Fabric, GpuInterconnect};

/// Rings over the group: one per NIC when the group spans domains (rail rings), entering each
/// domain at a GPU served by that NIC. `per_hop` bytes per ring-hop in total over all rings.
/// `cyclic` false gives the broadcast chain; `reverse` the reduce chain.
#[allow(clippy::too_many_arguments)]
pub(crate) fn rings(
    b: &mut LoadBuilder,
    fab: &Fabric,
    group: &[u32],
    segs: &[Segment],
    per_hop: f64,
    cyclic: bool,
    reverse: bool,
) -> Result<(), CollectiveError> {
    let ring_count = if segs.len() <= 1 {
        1
    } else {
        nic_rings(fab, group)
    };
    let bytes = per_hop / f64::from(ring_count.max(1));
    let any_nics = fab.nodes.iter().any(|nd| !fab.nics_of(nd).is_empty());
    let behind_switch: Vec<bool> = segs.iter().map(|s| all_nvswitch(fab, s.gpus)).collect();
    let mut seq: Vec<u32> = Vec::with_capacity(group.len());
    if behind_switch.contains(&true) {
        b.switch_hops.ensure(fab);
    }
    for r in 0..ring_count.max(1) {
        seq.clear();
        for s in segs {
            let start = if segs.len() > 1 {
                let entry = fab.gpu_on_nic(fab.node_of_gpu(s.gpus[0]), r);
                s.gpus.iter().position(|&g| g == entry).unwrap_or(0)
            } else {
                0
            };
            seq.extend(s.gpus[start..].iter().chain(&s.gpus[..start]));
        }
        let n = seq.len();
        let hops = if cyclic { n } else { n.saturating_sub(1) };
        let nic = (ring_count > 1 || any_nics).then_some(r);
        // Hop i leaves seq[i]; inside a domain's run the next GPU is in the same domain, and
        // only the hop out of a run's last GPU may cross to another domain.
        let mut i = 0;
        for (s, &switch) in segs.iter().zip(&behind_switch) {
            let len = s.gpus.len();
            for j in 0..len {
                if i >= hops {
                    break;
                }
                let (mut a, mut c) = (seq[i], seq[if i + 1 == n { 0 } else { i + 1 }]);
                if reverse {
                    std::mem::swap(&mut a, &mut c);
                }
                let inside = j + 1 < len;
                if inside && switch && a != c && bytes != 0.0 {
                    b.switch_hops.count_switched(a, c);
                } else if inside || fab.domain_of_gpu(a) == fab.domain_of_gpu(c) {
                    if bytes == 0.0 || !b.switch_hops.count(fab, a, c) {
                        b.intra(a, c, bytes);
                    }
                } else {
                    let nic_a = nic.filter(|_| !fab.nics_of(fab.node_of_gpu(a)).is_empty());
                    let nic_c = nic.filter(|_| !fab.nics_of(fab.node_of_gpu(c)).is_empty());
                    b.inter(
                        a,
                        c,
                        nic_a,
                        nic_c,
                        bytes,
                        CHANNELS_PER_CONNECTION,
                        key(u64::from(r), i as u64, 1),
                    )?;
                }
                i += 1;
            }
        }
    }
    b.add_switch_hops(group, bytes);
    Ok(())
}

/// Whether every GPU of a domain's run sits behind an NVSwitch.
pub(super) fn all_nvswitch(fab: &Fabric, gpus: &[u32]) -> bool {
    gpus.iter().all(|&g| {
        matches!(
            fab.node_of_gpu(g).interconnect,
            GpuInterconnect::NvSwitch { .. }
        )
    })
}

/// Rings across domains: one per NIC of the node with fewest NICs (at least one).
pub(crate) fn nic_rings(fab: &Fabric, group: &[u32]) -> u32 {
    let mut k = u32::MAX;
    let mut last = u32::MAX;
    for &g in group {
        let node = fab.gpus[g as usize].node;
        if node != last {
            k = k.min(fab.nics_of(&fab.nodes[node as usize]).len() as u32);
            last = node;
        }
    }
    k.clamp(1, 64)
}
