//! Written reports: the comparison table as Markdown, CSV or aligned text. No UI imports.

use crate::analysis::compare::Comparison;

/// `|` would end a Markdown table cell; line breaks would end the row.
fn md_cell(text: &str) -> String {
    text.replace('|', "\\|").replace(['\n', '\r'], " ")
}

fn heading(c: &Comparison, col: usize) -> String {
    let name = c.scenarios.get(col).map_or("", String::as_str);
    if col == c.baseline && c.scenarios.len() > 1 {
        format!("{name} (baseline)")
    } else {
        name.to_string()
    }
}

/// A cell: the value, and its change against the baseline in brackets.
fn cell(c: &Comparison, row: usize, col: usize) -> String {
    let r = &c.rows[row];
    let delta = r.delta_text(col);
    if delta.is_empty() {
        r.value_text(col)
    } else {
        format!("{} ({delta})", r.value_text(col))
    }
}

/// A GitHub-flavoured Markdown table: figures down, scenarios across, numbers right-aligned.
pub fn render_markdown(c: &Comparison) -> String {
    let mut out = String::from("| Figure |");
    for col in 0..c.scenarios.len() {
        out.push_str(&format!(" {} |", md_cell(&heading(c, col))));
    }
    out.push_str("\n|:--|");
    out.push_str(&"--:|".repeat(c.scenarios.len()));
    out.push('\n');
    for (i, row) in c.rows.iter().enumerate() {
        out.push_str(&format!("| {} |", md_cell(&row.label)));
        for col in 0..c.scenarios.len() {
            out.push_str(&format!(" {} |", md_cell(&cell(c, i, col))));
        }
        out.push('\n');
    }
    out
}

/// CSV for spreadsheets: `key,label,quantity`, one raw value column per scenario, then one
/// `delta <scenario>` column per scenario (a fraction; empty for the baseline and where
/// undefined). Raw values are unrounded, so they equal `eval --json`'s.
pub fn render_csv(c: &Comparison) -> Result<String, csv::Error> {
    let mut writer = csv::Writer::from_writer(Vec::new());
    let mut header = vec!["key".to_string(), "label".into(), "quantity".into()];
    header.extend(c.scenarios.iter().cloned());
    header.extend(c.scenarios.iter().map(|s| format!("delta {s}")));
    writer.write_record(&header)?;
    let number = |x: Option<f64>| x.map_or_else(String::new, |v| v.to_string());
    for row in &c.rows {
        let quantity = serde_json::to_value(row.quantity)
            .ok()
            .and_then(|v| v.as_str().map(str::to_string))
            .unwrap_or_default();
        let mut record = vec![row.key.to_string(), row.label.clone(), quantity];
        record.extend(row.values.iter().map(|&v| number(v)));
        record.extend(row.deltas.iter().map(|&d| number(d)));
        writer.write_record(&record)?;
    }
    let bytes = writer.into_inner().map_err(|e| e.into_error())?;
    Ok(String::from_utf8_lossy(&bytes).into_owned())
}

/// Aligned columns for a terminal.
pub fn render_text(c: &Comparison) -> String {
    let mut table: Vec<Vec<String>> = Vec::with_capacity(c.rows.len() + 1);
    let mut head = vec![String::new()];
    head.extend((0..c.scenarios.len()).map(|col| heading(c, col)));
    table.push(head);
    for (i, row) in c.rows.iter().enumerate() {
        let mut line = vec![row.label.clone()];
        line.extend((0..c.scenarios.len()).map(|col| cell(c, i, col)));
        table.push(line);
    }
    let columns = c.scenarios.len() + 1;
    let widths: Vec<usize> = (0..columns)
        .map(|col| {
            table
                .iter()
                .map(|line| line[col].chars().count())
                .max()
                .unwrap_or(0)
        })
        .collect();
    let mut out = String::new();
    for line in &table {
        let cells: Vec<String> = line
            .iter()
            .zip(&widths)
            .enumerate()
            .map(|(col, (text, &w))| {
                let pad = w.saturating_sub(text.chars().count());
                if col == 0 {
                    format!("{text}{}", " ".repeat(pad))
                } else {
                    format!("{}{text}", " ".repeat(pad))
                }
            })
            .collect();
        out.push_str(cells.join("  ").trim_end());
        out.push('\n');
    }
    out
}
