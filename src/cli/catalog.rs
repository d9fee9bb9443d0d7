//! `railyard catalog [--json | --ron] [--part ID]`: the parts catalog as a table, JSON
//! (`CatalogEntry`) or a catalog file to start one's own from.

use super::write_stdout;
use crate::model::Catalog;
use clap::Args;
use serde::Serialize;

#[derive(Debug, Args)]
pub(super) struct CatalogArgs {
    /// A JSON array instead of a table, each part with its specification.
    #[arg(long)]
    json: bool,
    /// The parts as a catalog file (RON) that `--catalog` reads: copy a part, change its id
    /// and figures, and add it to your own catalog.
    #[arg(long, conflicts_with = "json")]
    ron: bool,
    /// Only this part (repeat for more); an id the catalog lacks is refused.
    #[arg(long = "part", value_name = "ID")]
    parts: Vec<String>,
}

/// One part, as `catalog --json` prints it.
#[derive(Debug, Clone, Serialize)]
pub struct CatalogEntry {
    pub id: String,
    pub category: &'static str,
    pub vendor: String,
    pub model: String,
    /// Null when the catalog has no price.
    pub price_usd: Option<f64>,
    pub price_date: Option<String>,
    pub power_w: f64,
    /// Price or power is an estimate rather than a sourced figure.
    pub estimate: bool,
    /// What the part is: a GPU's memory and peak, a switch's ports and rate, ...
    pub spec: crate::model::PartSpec,
}

pub(super) fn run(args: &CatalogArgs, catalog: &Catalog) -> anyhow::Result<()> {
    let json = args.json;
    for id in &args.parts {
        if catalog.get(&crate::model::PartId::new(id)).is_none() {
            anyhow::bail!("unknown part `{id}` (`railyard catalog` lists the parts)");
        }
    }
    let chosen: Vec<&crate::model::Part> = catalog
        .parts()
        .filter(|p| args.parts.is_empty() || args.parts.iter().any(|id| p.id.as_str() == id))
        .collect();
    if args.ron {
        return write_stdout(&crate::model::catalog::catalog_file_text(&chosen)?);
    }
    let entries: Vec<CatalogEntry> = chosen
        .into_iter()
        .map(|p| CatalogEntry {
            id: p.id.to_string(),
            category: p.category().label(),
            vendor: p.vendor.clone(),
            model: p.model.clone(),
            price_usd: p.price.as_ref().map(|price| price.usd.0),
            price_date: p.price.as_ref().map(|price| price.date.clone()),
            power_w: p.power_w.0,
            estimate: p.estimate,
            spec: p.spec.clone(),
        })
        .collect();
    if json {
        let mut text = serde_json::to_string_pretty(&entries)?;
        text.push('\n');
        return write_stdout(&text);
    }
    let header = ["id", "category", "model", "price", "power", "estimate"];
    let rows: Vec<[String; 6]> = entries
        .iter()
        .map(|e| {
            [
                e.id.clone(),
                e.category.to_string(),
                format!("{} {}", e.vendor, e.model),
                e.price_usd
                    .map_or("—".into(), |p| crate::model::Usd(p).to_string()),
                crate::model::Watts(e.power_w).to_string(),
                if e.estimate { "yes" } else { "" }.to_string(),
            ]
        })
        .collect();
    let mut widths = header.map(str::len);
    for row in &rows {
        for (w, cell) in widths.iter_mut().zip(row) {
            *w = (*w).max(cell.chars().count());
        }
    }
    let mut out = String::new();
    let mut push_row = |cells: &[&str]| {
        let line: Vec<String> = cells
            .iter()
            .zip(widths)
            .enumerate()
            .map(|(i, (cell, w))| {
                // Price and power read better right-aligned.
                if i == 3 || i == 4 {
                    format!("{cell:>w$}")
                } else {
                    format!("{cell:<w$}")
                }
            })
            .collect();
        out.push_str(line.join("  ").trim_end());
        out.push('\n');
    };
    push_row(&header);
    for row in &rows {
        let cells: Vec<&str> = row.iter().map(String::as_str).collect();
        push_row(&cells);
    }
    write_stdout(&out)
}
