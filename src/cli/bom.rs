//! `railyard bom FILE`: the bill of materials as CSV.

use super::{count_of, load};
use crate::analysis::cost::bom_lines;
use crate::io::bom::{BomOptions, write_bom_csv};
use crate::io::design_file::write_atomically;
use crate::model::Catalog;
use anyhow::Context;
use clap::Args;
use std::io::Write as _;
use std::path::PathBuf;

#[derive(Debug, Args)]
pub(super) struct BomArgs {
    /// The design file.
    file: PathBuf,
    /// Where to write the CSV; standard output when absent or `-`.
    #[arg(short, long, value_name = "FILE.csv")]
    output: Option<PathBuf>,
    /// Label for the price columns (`unit_price_eur`); prices are not converted.
    #[arg(long, value_name = "LABEL", default_value = "USD")]
    currency: String,
    /// Fraction taken off every list price: 0.15 for 15 % off.
    #[arg(long, value_name = "FRACTION", default_value_t = 0.0, value_parser = parse_discount, allow_negative_numbers = true)]
    discount: f64,
}

fn parse_discount(text: &str) -> Result<f64, String> {
    match text.parse::<f64>() {
        Ok(d) if (0.0..=1.0).contains(&d) => Ok(d),
        _ => Err(format!(
            "`{text}` is not a fraction between 0 and 1 (0.15 is 15 % off)"
        )),
    }
}

/// "20 %" for a discount of 0.2.
fn percent_off(discount: f64) -> String {
    format!("{} %", crate::model::units::trim_number(discount * 100.0))
}

pub(super) fn run(args: BomArgs, catalog: &Catalog) -> anyhow::Result<()> {
    let options = &BomOptions {
        currency_label: args.currency,
        discount: args.discount,
    };
    // `-o -` is standard output, as for `generate` and `export`.
    let output = args.output.as_deref().filter(|p| p.as_os_str() != "-");
    let file = &args.file;
    let design = load(file)?;
    let lines = bom_lines(&design, catalog);
    let mut csv = Vec::new();
    write_bom_csv(&lines, &mut csv, options).context("could not write the CSV")?;
    match output {
        None => {
            let mut out = std::io::stdout().lock();
            out.write_all(&csv)?;
            out.flush()?;
        }
        Some(path) => {
            write_atomically(path, &csv)
                .with_context(|| format!("could not write {}", path.display()))?;
            // The label is the user's: say when the figures are still the catalog's dollars.
            let basis = match (
                options.currency_label.eq_ignore_ascii_case("USD"),
                args.discount,
            ) {
                (true, 0.0) => String::new(),
                (true, d) => format!(" (list prices less {})", percent_off(d)),
                (false, 0.0) => " (the catalog's USD prices, not converted)".into(),
                (false, d) => format!(
                    " (the catalog's USD prices less {}, not converted)",
                    percent_off(d)
                ),
            };
            eprintln!(
                "railyard: wrote {}: {}, {} {} total{basis}",
                path.display(),
                count_of(lines.len(), "line", "lines"),
                money_text(crate::io::bom::bom_total(&lines, options).0),
                options.currency_label
            );
        }
    }
    Ok(())
}

/// A total as a terminal line reads it: thousands grouped, cents where a discount leaves
/// them ("857,031.20"), none on a whole amount ("1,008,272").
fn money_text(total: f64) -> String {
    let cents = (total * 100.0).round() as i64;
    let whole = crate::model::units::group_thousands(cents / 100);
    match cents % 100 {
        0 => whole,
        c => format!("{whole}.{:02}", c.abs()),
    }
}

#[cfg(test)]
mod tests {
    use super::money_text;

    #[test]
    fn totals_group_thousands_and_keep_cents() {
        assert_eq!(money_text(1_008_272.0), "1,008,272");
        assert_eq!(money_text(857_031.2), "857,031.20");
        assert_eq!(money_text(0.0), "0");
    }
}
