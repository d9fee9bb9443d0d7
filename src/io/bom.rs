//! The bill of materials as CSV (RFC 4180, UTF-8), from the same lines as the cost summary.
//!
//! Prices are rounded to cents per unit and the extended price is that unit price times the
//! quantity, so every row multiplies out and the rows add up to `bom_total` exactly as printed.

use crate::analysis::cost::BomLine;
use crate::model::Usd;

#[derive(Debug, Clone, PartialEq)]
pub struct BomOptions {
    /// Goes into the price column headers (`unit_price_usd`). A label only: catalog prices
    /// are US dollars and are not converted.
    pub currency_label: String,
    /// Fraction taken off every price (0.15 for 15 % off list). Clamped to 0..=1; a value
    /// that is not a number counts as no discount.
    pub discount: f64,
}

impl Default for BomOptions {
    fn default() -> Self {
        Self {
            currency_label: "USD".to_string(),
            discount: 0.0,
        }
    }
}

impl BomOptions {
    fn price_factor(&self) -> f64 {
        let discount = if self.discount.is_nan() {
            0.0
        } else {
            self.discount.clamp(0.0, 1.0)
        };
        1.0 - discount
    }

    /// Lower-case letters and digits of the label, so headers stay plain identifiers.
    fn header_suffix(&self) -> String {
        let suffix: String = self
            .currency_label
            .chars()
            .filter(char::is_ascii_alphanumeric)
            .map(|c| c.to_ascii_lowercase())
            .collect();
        if suffix.is_empty() {
            String::new()
        } else {
            format!("_{suffix}")
        }
    }
}

/// Unit and extended price of a line after discount, in whole cents.
fn line_cents(line: &BomLine, options: &BomOptions) -> (i64, i64) {
    let unit = (line.unit_price.0 * options.price_factor() * 100.0).round() as i64;
    let quantity = i64::try_from(line.quantity).unwrap_or(i64::MAX);
    (unit, unit.saturating_mul(quantity))
}

fn cents_text(cents: i64) -> String {
    let sign = if cents < 0 { "-" } else { "" };
    let abs = cents.unsigned_abs();
    format!("{sign}{}.{:02}", abs / 100, abs % 100)
}

/// The total of the extended prices as written by `write_bom_csv` with these options.
pub fn bom_total(lines: &[BomLine], options: &BomOptions) -> Usd {
    let cents: i64 = lines
        .iter()
        .map(|line| line_cents(line, options).1)
        .fold(0i64, i64::saturating_add);
    Usd(cents as f64 / 100.0)
}

pub fn write_bom_csv<W: std::io::Write>(
    lines: &[BomLine],
    out: W,
    options: &BomOptions,
) -> Result<(), csv::Error> {
    let mut writer = csv::Writer::from_writer(out);
    let suffix = options.header_suffix();
    writer.write_record([
        "category".to_string(),
        "part_id".to_string(),
        "vendor".to_string(),
        "model".to_string(),
        "description".to_string(),
        "quantity".to_string(),
        format!("unit_price{suffix}"),
        format!("extended_price{suffix}"),
        "unit_power_w".to_string(),
        "total_power_w".to_string(),
        "price_source".to_string(),
        "price_date".to_string(),
        "estimate".to_string(),
    ])?;
    for line in lines {
        let (unit, extended) = line_cents(line, options);
        writer.write_record([
            line.category.key(),
            line.part.as_str(),
            &line.vendor,
            &line.model,
            &line.description,
            &line.quantity.to_string(),
            &cents_text(unit),
            &cents_text(extended),
            &format!("{:.2}", line.unit_power.0),
            &format!("{:.2}", line.total_power.0),
            &line.price_source,
            &line.price_date,
            if line.estimate { "true" } else { "false" },
        ])?;
    }
    writer.flush()?;
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn cents_print_with_two_decimals() {
        assert_eq!(cents_text(123_456), "1234.56");
        assert_eq!(cents_text(5), "0.05");
        assert_eq!(cents_text(0), "0.00");
        assert_eq!(cents_text(-250), "-2.50");
    }

    #[test]
    fn currency_label_becomes_a_plain_suffix() {
        let label = |l: &str| {
            BomOptions {
                currency_label: l.to_string(),
                ..BomOptions::default()
            }
            .header_suffix()
        };
        assert_eq!(label("USD"), "_usd");
        assert_eq!(label("€ EUR"), "_eur");
        assert_eq!(label(""), "");
    }

    #[test]
    fn discount_is_clamped() {
        let factor = |d: f64| {
            BomOptions {
                discount: d,
                ..BomOptions::default()
            }
            .price_factor()
        };
        assert_eq!(factor(0.25), 0.75);
        assert_eq!(factor(-1.0), 1.0);
        assert_eq!(factor(2.0), 0.0);
        assert_eq!(factor(f64::NAN), 1.0);
    }
}
