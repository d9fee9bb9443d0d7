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
    // `hidden` goes unread without SEEN: any list as long will do.
    let (worst, _, bad) = worst_ratios::<false>(loads, usable, nvlink, nvlink, cap_of);
    (worst, bad)
}

/// `worst_ratio`, and with `SEEN` the same over the arcs not in `hidden` (the fabric as NCCL's
/// tuner sees it): one pass over the loads for both maxima. Without `SEEN` the second is 0 and
/// `hidden` unread; a constant, so that loop is the plain one. The lists are at least as
/// long as `loads`.
#[inline(always)]
pub(crate) fn worst_ratios<const SEEN: bool>(
    loads: &[f64],
    usable: &[f64],
    hidden: &[bool],
    nvlink: &[bool],
    cap_of: impl Fn(f64, bool) -> f64,
) -> (f64, f64, bool) {
    const L: usize = 4;
    // All in f64 selects (a flag of 1.0 for an arc without capacity) so that the lanes map
    // onto vector compares and blends.
    let mut worst = [0.0f64; L];
    let mut seen = [0.0f64; L];
    let mut bad = [0.0f64; L];
    let mut lane = |k: usize, load: f64, cap: f64, hide: bool| {
        let busy = load > 1e-15;
        let t = if busy { load / cap } else { 0.0 };
        worst[k] = if t > worst[k] { t } else { worst[k] };
        if SEEN {
            let shown = if hide { 0.0 } else { t };
            seen[k] = if shown > seen[k] { shown } else { seen[k] };
        }
        bad[k] = if busy & (cap.is_nan() | (cap < 1.0)) {
            1.0
        } else {
            bad[k]
        };
    };
    let whole = loads.len() / L * L;
    for (((l, u), h), v) in loads[..whole]
        .chunks_exact(L)
        .zip(usable[..whole].chunks_exact(L))
        .zip(hidden[..whole].chunks_exact(L))
        .zip(nvlink[..whole].chunks_exact(L))
    {
        for k in 0..L {
            lane(k, l[k], cap_of(u[k], v[k]), h[k]);
        }
    }
    for a in whole..loads.len() {
        lane(0, loads[a], cap_of(usable[a], nvlink[a]), hidden[a]);
    }
    let max = |lanes: &[f64; L]| lanes.iter().fold(0.0f64, |w, &t| if t > w { t } else { w });
    (max(&worst), max(&seen), bad.iter().any(|&b| b > 0.0))
}
