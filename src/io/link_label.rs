//! How a picture labels a link or a bundle of parallel links: "8 × 400G", as network
//! people write cables. The canvas and the SVG export write the same labels.

/// Up to this many linked pairs in a picture, single links carry their rate as well as
/// bundles (a homelab's or a node's few cables); beyond it only bundles do, or the labels
/// would cover the links.
const SINGLE_LINK_LABELS_MAX: usize = 48;

/// Up to this many labelled bundles, a label whose middle is taken may sit a third of the
/// way along its bundle instead (a few bundles fanning into one switch); in a denser sheaf
/// that would only fill the gaps with more labels.
const FANNED_BUNDLES_MAX: usize = 16;

/// The links joining one pair in a picture: how many, their capacity each (rate × lanes,
/// Gb/s; NaN once they differ) and together.
#[derive(Debug, Clone, Copy, Default, PartialEq)]
pub struct LinkTally {
    pub links: u32,
    pub gbit_s: f64,
    pub total_gbit_s: f64,
}

/// Counts one link of `gbit_s` (rate × lanes) into a pair's tally.
pub fn tally_link(tally: &mut LinkTally, gbit_s: f64) {
    if tally.links == 0 {
        tally.gbit_s = gbit_s;
    } else if tally.gbit_s != gbit_s {
        tally.gbit_s = f64::NAN;
    }
    tally.links += 1;
    tally.total_gbit_s += gbit_s;
}

/// The fewest links a pair needs to be labelled in a picture of `pairs` linked pairs: one on
/// a small design, else two (a bundle).
pub fn min_labelled(pairs: usize) -> u32 {
    if pairs <= SINGLE_LINK_LABELS_MAX {
        1
    } else {
        2
    }
}

/// Sorts the pairs to label into the order they claim room: bundles before single links
/// (their counts matter more), then by the pair, so labels that would overlap give way the
/// same way every time.
pub fn sort_for_labels<K: Ord + Copy, T>(labelled: &mut [(K, K, u32, T)]) {
    labelled.sort_by_key(|&(a, b, n, _)| (std::cmp::Reverse(n.min(2)), a, b));
}

/// Where along its line (0 at one end, 1 at the other) a label may sit, first choice first,
/// when `labelled` labels are placed.
pub fn label_spots(labelled: usize) -> &'static [f32] {
    if labelled <= FANNED_BUNDLES_MAX {
        &[0.5, 0.3, 0.7]
    } else {
        &[0.5]
    }
}

/// Whether the straight line from `p` to `q` passes through the box `(x0, y0, x1, y1)`
/// (Liang–Barsky clipping). A label where another line crosses reads as that line's too, so
/// a small drawing moves it along its own line instead.
pub fn segment_meets_box(
    p: (f32, f32),
    q: (f32, f32),
    (x0, y0, x1, y1): (f32, f32, f32, f32),
) -> bool {
    let (dx, dy) = (q.0 - p.0, q.1 - p.1);
    let (mut t0, mut t1) = (0.0_f32, 1.0_f32);
    for (step, room) in [
        (-dx, p.0 - x0),
        (dx, x1 - p.0),
        (-dy, p.1 - y0),
        (dy, y1 - p.1),
    ] {
        if step == 0.0 {
            if room < 0.0 {
                return false;
            }
            continue;
        }
        let t = room / step;
        if step < 0.0 {
            t0 = t0.max(t);
        } else {
            t1 = t1.min(t);
        }
        if t0 > t1 {
            return false;
        }
    }
    true
}

/// A link's label: "8 × 400G" for a bundle of one capacity, "3 links, 1.2T" when they
/// differ, "400G" for one link: how network people write cables (G for Gb/s, T for Tb/s).
pub fn link_label(tally: &LinkTally) -> String {
    match (tally.links, rate_text(tally.gbit_s)) {
        (1, Some(r)) => r,
        (n, Some(r)) => format!("{n} × {r}"),
        (n, None) => match rate_text(tally.total_gbit_s) {
            Some(total) => format!("{n} links, {total}"),
            None => format!("{n} links"),
        },
    }
}

/// "400G", "1.6T", "500M"; None without a positive rate.
fn rate_text(gbit_s: f64) -> Option<String> {
    if !gbit_s.is_finite() || gbit_s <= 0.0 {
        None
    } else if gbit_s >= 1000.0 {
        Some(format!(
            "{}T",
            crate::model::units::trim_number(gbit_s / 1000.0)
        ))
    } else if gbit_s >= 1.0 {
        Some(format!("{}G", crate::model::units::trim_number(gbit_s)))
    } else {
        Some(format!(
            "{}M",
            crate::model::units::trim_number(gbit_s * 1000.0)
        ))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_line_meets_a_box_it_crosses_and_not_one_beside_it() {
        let label = (255.0, 304.0, 285.0, 320.0);
        // The horizontal line through the middle of a square mesh crosses the vertical's label.
        assert!(segment_meets_box((90.0, 312.0), (450.0, 312.0), label));
        // A diagonal far from it does not; nor a line that stops short.
        assert!(!segment_meets_box((270.0, 130.0), (90.0, 312.0), label));
        assert!(!segment_meets_box((90.0, 312.0), (250.0, 312.0), label));
        // A vertical line through it, drawn either way.
        assert!(segment_meets_box((270.0, 480.0), (270.0, 130.0), label));
    }

    #[test]
    fn link_labels_read_as_cables_are_written() {
        let label = |rates: &[f64]| {
            let mut tally = LinkTally::default();
            for &r in rates {
                tally_link(&mut tally, r);
            }
            link_label(&tally)
        };
        assert_eq!(label(&[400.0; 8]), "8 × 400G");
        assert_eq!(label(&[1600.0]), "1.6T");
        assert_eq!(label(&[25.0]), "25G");
        assert_eq!(label(&[0.5, 0.5]), "2 × 500M");
        // A bundle of mixed rates gives its total: 400 + 400 + 200 + 200 = 1.2 Tb/s.
        assert_eq!(label(&[400.0, 200.0, 400.0, 200.0]), "4 links, 1.2T");
    }
}
