//! How a picture labels a link or a bundle of parallel links: "8 × 400G", as network
//! people write cables. The canvas and the SVG export write the same labels.

/// Up to this many linked pairs in a picture, single links carry their rate as well as
/// bundles (a homelab's or a node's few cables); beyond it only bundles do, or the labels
/// would cover the links.
pub const SINGLE_LINK_LABELS_MAX: usize = 48;

/// Up to this many labelled bundles, a label whose middle is taken may sit a third of the
/// way along its bundle instead (a few bundles fanning into one switch); in a denser sheaf
/// that would only fill the gaps with more labels.
pub const FANNED_BUNDLES_MAX: usize = 16;

/// A link's label: "8 × 400G" for a bundle of one capacity, "×3" when they differ, "400G"
/// for one link: how network people write cables (G for Gb/s, T for Tb/s).
pub fn link_label(count: u32, gbit_s: f64) -> String {
    let rate = if !gbit_s.is_finite() || gbit_s <= 0.0 {
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
    };
    match (count, rate) {
        (1, Some(r)) => r,
        (n, Some(r)) => format!("{n} × {r}"),
        (n, None) => format!("×{n}"),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn link_labels_read_as_cables_are_written() {
        assert_eq!(link_label(8, 400.0), "8 × 400G");
        assert_eq!(link_label(1, 1600.0), "1.6T");
        assert_eq!(link_label(1, 25.0), "25G");
        assert_eq!(link_label(2, 0.5), "2 × 500M");
        assert_eq!(link_label(3, f64::NAN), "×3");
    }
}
