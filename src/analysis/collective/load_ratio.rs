//! The worst load-to-capacity ratio over a fabric's arcs: the bandwidth term of a phase, and
//! the floor that lets a plan stop early.

/// The largest `load / cap` over arcs with load (NaN ratios never win, as with `f64::max`),
/// and whether such an arc has under a byte per second. Independent lanes, without
/// branches, let the loop vectorise; a maximum is exact whatever the order.
#[inline(always)]
pub(crate) fn worst_ratio(
    loads: &[f64],
    usable: &[f64],
    nvlink: &[bool],
    cap_of: impl Fn(f64, bool) -> f64,
) -> (f64, bool) {
    const L: usize = 4;
    // All in f64 selects (a flag of 1.0 for an arc without capacity) so that the lanes map
    // onto vector compares and blends.
    let mut worst = [0.0f64; L];
    let mut bad = [0.0f64; L];
    let whole = loads.len() / L * L;
    for ((l, u), v) in loads[..whole]
        .chunks_exact(L)
        .zip(usable[..whole].chunks_exact(L))
        .zip(nvlink[..whole].chunks_exact(L))
    {
        for k in 0..L {
            let cap = cap_of(u[k], v[k]);
            let busy = l[k] > 1e-15;
            let t = if busy { l[k] / cap } else { 0.0 };
            worst[k] = if t > worst[k] { t } else { worst[k] };
            bad[k] = if busy & (cap.is_nan() | (cap < 1.0)) {
                1.0
            } else {
                bad[k]
            };
        }
    }
    for a in whole..loads.len() {
        let cap = cap_of(usable[a], nvlink[a]);
        let busy = loads[a] > 1e-15;
        let t = if busy { loads[a] / cap } else { 0.0 };
        worst[0] = if t > worst[0] { t } else { worst[0] };
        bad[0] = if busy & (cap.is_nan() | (cap < 1.0)) {
            1.0
        } else {
            bad[0]
        };
    }
    let w = worst.iter().fold(0.0f64, |w, &t| if t > w { t } else { w });
    (w, bad.iter().any(|&b| b > 0.0))
}
