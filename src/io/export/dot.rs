//! The design as Graphviz DOT: an undirected graph with one `rank=same` subgraph per tier
//! (GPU nodes and hosts, leaves, spines, cores, by `link_colors::device_tier`), devices
//! labelled and filled as on the canvas, links labelled with technology and rate in the
//! canvas's technology colours. Written by hand: petgraph's `Dot` has no subgraphs.
//! Every identifier is a quoted string, so any device name is safe.

use super::cabling::{link_label, technology_painter};
use crate::io::link_colors::{Pattern, device_tier};
use crate::io::svg::fill;
use crate::model::{Design, Device};
use std::fmt::Write as _;

/// The name of a tier's subgraph and what it holds.
pub fn tier_name(tier: u8) -> &'static str {
    match tier {
        0 => "nodes",
        1 => "leaves",
        2 => "spines",
        _ => "cores",
    }
}

/// A DOT quoted string: `"` and `\` escaped, line breaks as DOT's `\n`.
pub fn quote(text: &str) -> String {
    let mut out = String::with_capacity(text.len() + 2);
    out.push('"');
    for c in text.chars() {
        match c {
            '"' => out.push_str("\\\""),
            '\\' => out.push_str("\\\\"),
            '\n' => out.push_str("\\n"),
            '\r' => {}
            c => out.push(c),
        }
    }
    out.push('"');
    out
}

fn node_statement(out: &mut String, indent: &str, d: &Device) {
    let _ = writeln!(
        out,
        "{indent}{} [label={}, fillcolor={}];",
        quote(&d.id.to_string()),
        quote(&d.name),
        quote(fill(&d.kind))
    );
}

pub fn design_to_dot(design: &Design) -> String {
    let mut out = String::new();
    // Writing to a String cannot fail; the results are ignored for that reason.
    let _ = writeln!(out, "graph {} {{", quote(&design.name));
    let _ = writeln!(
        out,
        "  graph [label={}, labelloc=t, rankdir=TB];",
        quote(&design.name)
    );
    let _ = writeln!(
        out,
        "  node [shape=box, style=\"rounded,filled\", fontcolor=\"#ffffff\", color=\"#263238\"];"
    );
    let _ = writeln!(out, "  edge [fontsize=9];");
    // Cores first, so the picture reads top-down from the core to the GPUs.
    for tier in (0..=3u8).rev() {
        let members: Vec<&Device> = design
            .devices
            .iter()
            .filter(|d| device_tier(d) == Some(tier))
            .collect();
        if members.is_empty() {
            continue;
        }
        let _ = writeln!(out, "  subgraph {} {{", quote(tier_name(tier)));
        let _ = writeln!(out, "    rank=same;");
        for d in members {
            node_statement(&mut out, "    ", d);
        }
        let _ = writeln!(out, "  }}");
    }
    // NVSwitch domains hold nodes rather than sit in a tier.
    for d in design.devices.iter().filter(|d| device_tier(d).is_none()) {
        node_statement(&mut out, "  ", d);
    }
    let painter = technology_painter();
    for link in &design.links {
        let (Some(a), Some(b)) = (design.device(link.a.device), design.device(link.b.device))
        else {
            continue;
        };
        // DOT ranks an edge's first end above its second: the higher tier goes first.
        let (upper, lower) = if device_tier(b) > device_tier(a) {
            (b, a)
        } else {
            (a, b)
        };
        let style = painter.style(link, a, b);
        let dashed = if style.pattern == Pattern::Solid {
            ""
        } else {
            ", style=dashed"
        };
        let _ = writeln!(
            out,
            "  {} -- {} [id={}, label={}, color={}{dashed}];",
            quote(&upper.id.to_string()),
            quote(&lower.id.to_string()),
            quote(&link.id.to_string()),
            quote(&link_label(link)),
            quote(&style.color.hex())
        );
    }
    out.push_str("}\n");
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn quoting_escapes_quotes_and_backslashes() {
        assert_eq!(quote(r#"a "b" \c"#), r#""a \"b\" \\c""#);
        assert_eq!(quote("two\nlines"), r#""two\nlines""#);
    }
}
