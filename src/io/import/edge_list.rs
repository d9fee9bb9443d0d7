//! A CSV edge list: one link a row, `device,device,technology,rate` (`leaf-1,spine-1,
//! InfiniBand,400G`), with an optional header row and `#` comments. Devices are created
//! from the names (`build.rs` gives them parts or placeholders and places them by tier).

use super::build::{Importer, NamedLink};
use super::labels::{parse_rate, parse_technology};
use super::{ImportError, line_column};
use crate::model::{Catalog, Design};

const COLUMNS: [&str; 4] = ["device", "device", "technology", "rate"];

pub fn edge_list_to_design(
    text: &str,
    origin: &str,
    catalog: &Catalog,
) -> Result<Design, ImportError> {
    let mut reader = csv::ReaderBuilder::new()
        .has_headers(false)
        .flexible(true)
        .comment(Some(b'#'))
        .trim(csv::Trim::All)
        .from_reader(text.as_bytes());
    let title = std::path::Path::new(origin)
        .file_stem()
        .map_or(origin.to_string(), |s| s.to_string_lossy().into_owned());
    let mut importer = Importer::new(catalog, origin, Design::new(title));
    let line_error = |line: usize, message: String| ImportError::Line {
        origin: origin.to_string(),
        line,
        message,
    };
    for (row, record) in reader.records().enumerate() {
        let record = record.map_err(|e| {
            let line = e.position().map_or(0, |p| line_at(text, p));
            line_error(line, e.to_string())
        })?;
        let line = record.position().map_or(row + 1, |p| line_at(text, p));
        if record.iter().all(str::is_empty) {
            continue;
        }
        if record.len() < COLUMNS.len() {
            return Err(line_error(
                line,
                format!(
                    "{} fields where an edge needs 4: {}",
                    record.len(),
                    COLUMNS.join(",")
                ),
            ));
        }
        let field = |i: usize| record.get(i).unwrap_or_default();
        let tech = parse_technology(field(2));
        let rate = parse_rate(field(3));
        // A first row that is neither a technology nor a rate is a header.
        if row == 0 && tech.is_err() && rate.is_err() {
            continue;
        }
        let tech = tech.map_err(|e| line_error(line, format!("field 3 (technology): {e}")))?;
        let (lanes, rate) = rate.map_err(|e| line_error(line, format!("field 4 (rate): {e}")))?;
        for (i, name) in [field(0), field(1)].into_iter().enumerate() {
            if name.is_empty() {
                return Err(line_error(line, format!("field {}: no device name", i + 1)));
            }
        }
        importer.link(NamedLink {
            a: field(0).to_string(),
            b: field(1).to_string(),
            tech,
            rate,
            lanes,
            line,
        });
    }
    importer.finish()
}

/// The line a record starts on. The csv crate's position is where it began reading, before
/// the blank and comment lines it passes over, so those are skipped here too.
fn line_at(text: &str, position: &csv::Position) -> usize {
    let start = usize::try_from(position.byte()).unwrap_or(usize::MAX);
    let (mut line, _) = line_column(text, start);
    let rest = text
        .get(text.floor_char_boundary(start)..)
        .unwrap_or_default();
    for skipped in rest.lines() {
        let trimmed = skipped.trim();
        if !(trimmed.is_empty() || trimmed.starts_with('#')) {
            break;
        }
        line += 1;
    }
    line
}
