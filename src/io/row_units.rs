//! One unit per Compare row: "$1.35M  $0.05M", not "$1,346,176  $50,023"; "5.95 ms  1,970 ms",
//! not "5945.65 µs  1.97 s". A row's unit is the one its baseline value reads best in, so the
//! figure the others are measured against looks as it does everywhere else, and a slide
//! reader compares numbers rather than units. Axis ticks of the Compare chart read the same
//! way (`axis_text`).

use crate::analysis::compare::{ComparisonRow, Quantity};
use crate::model::Usd;
use crate::model::units::{group_thousands, significant, significant_padded, trim_number};

/// A unit a value is shown in: `prefix`, value ÷ `scale`, `suffix`; chosen for values of at
/// least `from`.
struct RowUnit {
    from: f64,
    scale: f64,
    prefix: &'static str,
    suffix: &'static str,
}

const fn unit(from: f64, scale: f64, prefix: &'static str, suffix: &'static str) -> RowUnit {
    RowUnit {
        from,
        scale,
        prefix,
        suffix,
    }
}

/// The units a quantity can be shown in, smallest first; empty where `Quantity::format`
/// already keeps one unit (counts, GB/s, percentages, cents).
fn units(quantity: Quantity) -> &'static [RowUnit] {
    // The thresholds are `Usd::compact`'s, `Watts`' and `Bandwidth`'s Display ones.
    const USD: [RowUnit; 4] = [
        unit(0.0, 1.0, "$", ""),
        unit(1e4, 1e3, "$", "K"),
        unit(1e6, 1e6, "$", "M"),
        unit(1e9, 1e9, "$", "B"),
    ];
    const WATTS: [RowUnit; 3] = [
        unit(0.0, 1.0, "", " W"),
        unit(1e3, 1e3, "", " kW"),
        unit(1e6, 1e6, "", " MW"),
    ];
    const MICROSECONDS: [RowUnit; 5] = [
        unit(0.0, 1.0, "", " µs"),
        unit(1e3, 1e3, "", " ms"),
        unit(1e6, 1e6, "", " s"),
        unit(60e6, 60e6, "", " min"),
        unit(3600e6, 3600e6, "", " h"),
    ];
    const GBIT_S: [RowUnit; 4] = [
        unit(0.0, 1e-3, "", " Mb/s"),
        unit(1.0, 1.0, "", " Gb/s"),
        unit(1e3, 1e3, "", " Tb/s"),
        unit(1e6, 1e6, "", " Pb/s"),
    ];
    match quantity {
        Quantity::Usd => &USD,
        Quantity::Watts => &WATTS,
        Quantity::Microseconds => &MICROSECONDS,
        Quantity::GbitS => &GBIT_S,
        Quantity::Count | Quantity::GbyteS | Quantity::Fraction | Quantity::UsdCents => &[],
    }
}

/// Three significant figures, or whole and grouped from a thousand up ("1,970"). With
/// `keep_zeros`, from 1 up the trailing zeros stay, so a row reads "41.0 kW  40.7 kW" and
/// "4.00 ms  5.82 ms", not "41 kW" beside "40.7 kW"; under 1 they go ("0.02 Tb/s"). Money
/// reads as `Usd::compact` does everywhere ("$50K").
fn number(x: f64, keep_zeros: bool) -> String {
    if x.abs() >= 1000.0 {
        group_thousands(x.round() as i64)
    } else if keep_zeros && x.abs() >= 1.0 {
        significant_padded(x, 3)
    } else {
        significant(x, 3)
    }
}

/// Every value of `row` as a person reads it, all in one unit; "—" where undefined.
pub fn row_texts(row: &ComparisonRow, baseline: usize) -> Vec<String> {
    let units = units(row.quantity);
    let defined = || row.values.iter().flatten().map(|v| v.abs());
    // The baseline's unit; without a baseline value, the smallest value's, so none reads
    // "0.00x".
    let reference = row
        .values
        .get(baseline)
        .copied()
        .flatten()
        .map(f64::abs)
        .filter(|v| *v > 0.0)
        .or_else(|| defined().filter(|v| *v > 0.0).reduce(f64::min));
    let chosen = reference.and_then(|r| units.iter().rev().find(|u| r >= u.from));
    row.values
        .iter()
        .enumerate()
        .map(|(col, value)| match (value, chosen) {
            (Some(v), Some(u)) => format!(
                "{}{}{}",
                u.prefix,
                number(v / u.scale, row.quantity != Quantity::Usd),
                u.suffix
            ),
            _ => row.value_text(col),
        })
        .collect()
}

/// A tick on the Compare chart's value axis; `value` is what the bar shows (`chart_value`:
/// fractions already in per cent).
pub fn axis_text(quantity: Quantity, value: f64) -> String {
    match quantity {
        Quantity::Usd | Quantity::UsdCents => Usd(value).compact(),
        Quantity::Fraction => format!("{} %", trim_number(value)),
        _ => quantity.format(value),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn row(quantity: Quantity, values: &[f64]) -> ComparisonRow {
        ComparisonRow {
            key: "test",
            label: "test".into(),
            quantity,
            values: values.iter().copied().map(Some).collect(),
            deltas: vec![None; values.len()],
        }
    }

    #[test]
    fn a_row_keeps_its_baselines_unit() {
        let times = row(Quantity::Microseconds, &[5945.65, 1_970_000.0]);
        assert_eq!(row_texts(&times, 0), ["5.95 ms", "1,970 ms"]);
        assert_eq!(row_texts(&times, 1), ["0.00595 s", "1.97 s"]);
        let cost = row(Quantity::Usd, &[11_200_000.0, 50_023.0]);
        assert_eq!(row_texts(&cost, 0), ["$11.2M", "$0.05M"]);
        assert_eq!(row_texts(&cost, 1), ["$11,200K", "$50K"]);
        let power = row(Quantity::Watts, &[90_288_000.0, 9420.0]);
        assert_eq!(row_texts(&power, 0), ["90.3 MW", "0.00942 MW"]);
        let bisection = row(Quantity::GbitS, &[6400.0, 20.0]);
        assert_eq!(row_texts(&bisection, 0), ["6.40 Tb/s", "0.02 Tb/s"]);
        // Trailing zeros stay from 1 up: 40,954.8 W beside 40,704.8 W, 4.0 ms beside 5.82.
        let power = row(Quantity::Watts, &[40_704.8, 40_954.8]);
        assert_eq!(row_texts(&power, 0), ["40.7 kW", "41.0 kW"]);
        let times = row(Quantity::Microseconds, &[5816.7, 4000.2]);
        assert_eq!(row_texts(&times, 0), ["5.82 ms", "4.00 ms"]);
        // The baseline reads as `Usd::compact` does everywhere else.
        assert_eq!(row_texts(&cost, 0)[0], Usd(11_200_000.0).compact());
    }

    #[test]
    fn undefined_values_and_plain_quantities() {
        let mut times = row(Quantity::Microseconds, &[0.0, 812.4, 43_920_000_000.0]);
        times.values.push(None);
        // No baseline value to go by: the smallest one's unit.
        assert_eq!(
            row_texts(&times, 0),
            ["0 µs", "812 µs", "43,920,000,000 µs", "—"]
        );
        assert_eq!(
            row_texts(&times, 2),
            ["0 h", "0.000000226 h", "12.2 h", "—"]
        );
        let gpus = row(Quantity::Count, &[32.0, 16_384.0]);
        assert_eq!(row_texts(&gpus, 0), ["32", "16,384"]);
    }

    #[test]
    fn chart_ticks_carry_units() {
        assert_eq!(axis_text(Quantity::Usd, 10_000_000.0), "$10M");
        assert_eq!(axis_text(Quantity::Watts, 40_960.0), "40.96 kW");
        assert_eq!(axis_text(Quantity::Fraction, 12.5), "12.5 %");
        assert_eq!(axis_text(Quantity::Microseconds, 500_000.0), "500 ms");
    }
}
