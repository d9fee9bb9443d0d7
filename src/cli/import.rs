//! `railyard import IN -o OUT.ron [--format drawio|dot|csv]`: a design from a draw.io file,
//! a Graphviz DOT file or a CSV edge list, saved as a design file; prints what it read and
//! the placeholders it made for parts the catalog lacks.

use super::count_of;
use crate::io::import::{ImportFormat, import_file, placeholders};
use crate::io::save_design;
use crate::model::Catalog;
use anyhow::Context;
use clap::Args;
use std::path::PathBuf;

#[derive(Debug, Args)]
pub(super) struct ImportArgs {
    /// The file to read: .drawio or .xml (draw.io, uncompressed), .dot or .gv (Graphviz),
    /// .csv (an edge list: device,device,technology,rate).
    file: PathBuf,
    /// The design file to write (RON).
    #[arg(short, long, value_name = "OUT.ron")]
    output: PathBuf,
    /// drawio, dot or csv; by default the input's extension says.
    #[arg(long, value_name = "FORMAT", value_parser = parse_import_format)]
    format: Option<ImportFormat>,
}

fn parse_import_format(text: &str) -> Result<ImportFormat, String> {
    text.parse()
}

pub(super) fn run(args: &ImportArgs, catalog: &Catalog) -> anyhow::Result<()> {
    let design = import_file(&args.file, args.format, catalog)?;
    save_design(&args.output, &design)
        .with_context(|| format!("could not write {}", args.output.display()))?;
    let made_up = placeholders(&design, catalog);
    eprintln!(
        "railyard: imported {}: {}, {} into {}",
        args.file.display(),
        count_of(design.devices.len(), "device", "devices"),
        count_of(design.links.len(), "link", "links"),
        args.output.display()
    );
    if !made_up.is_empty() {
        let listed: Vec<String> = made_up
            .iter()
            .take(10)
            .map(|(name, part)| format!("{name} ({part})"))
            .collect();
        let more = made_up.len().saturating_sub(listed.len());
        eprintln!(
            "railyard: {} the catalog lacks: {}{}; choose their parts in the designer",
            count_of(made_up.len(), "placeholder", "placeholders"),
            listed.join(", "),
            if more > 0 {
                format!(" and {more} more")
            } else {
                String::new()
            }
        );
    }
    Ok(())
}
