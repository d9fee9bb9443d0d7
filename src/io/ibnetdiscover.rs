//! What was cabled on a real InfiniBand fabric, read from the text `ibnetdiscover` prints (or
//! a `LocalPort|LocalGUID|RemotePort|RemoteGUID` table), as a list of observed cables; and
//! the reverse, a design written as `ibnetdiscover` would print it once it is cabled as drawn.
//!
//! `ibnetdiscover` lists every node (`Switch`, `Ca`, `Rt`) with a line per connected port:
//!
//! ```text
//! Switch  64 "S-0002c90300000100"   # "MF0;leaf-r0:QM9700/U1" enhanced port 0 lid 1 lmc 0
//! [1]     "H-0002c90300010000"[1](2c90300010001)   # "node-01 mlx5_0" lid 101 4xNDR
//! Ca      1 "H-0002c90300010000"    # "node-01 mlx5_0"
//! [1](2c90300010001)  "S-0002c90300000100"[1]  # lid 101 lmc 0 "MF0;leaf-r0:QM9700/U1" lid 1 4xNDR
//! ```
//!
//! so each cable shows twice, once from each end; it is kept once. Port numbers are the
//! physical ports as the fabric numbers them, from 1.
//!
//! The table form has a header line naming `|`-separated columns; `LocalPort`, `LocalGUID`,
//! `RemotePort` and `RemoteGUID` are needed, `LocalName`/`RemoteName` (or `...Desc`, the
//! node description) are read when present, other columns are ignored. It is what link
//! listings exported from fabric managers look like; without names, ends are known by GUID
//! only and need a mapping file.

pub use crate::analysis::as_built::observed::{ObservedCable, ObservedEnd};
use crate::model::{Bandwidth, Design, DeviceKind, LinkTech, Port};
use std::collections::HashSet;
use std::fmt::Write as _;
use thiserror::Error;

#[derive(Debug, Error, PartialEq)]
pub enum IbParseError {
    #[error("line {line}, column {column}: {message}")]
    Syntax {
        line: usize,
        column: usize,
        message: String,
    },
}

fn syntax(line: usize, column: usize, message: impl Into<String>) -> IbParseError {
    IbParseError::Syntax {
        line,
        column,
        message: message.into(),
    }
}

/// Reads either form: a line with `|` before any node header means the table form.
pub fn parse_observed(text: &str) -> Result<Vec<ObservedCable>, IbParseError> {
    let first = text
        .lines()
        .map(str::trim)
        .find(|l| !l.is_empty() && !l.starts_with('#'));
    match first {
        Some(l) if l.contains('|') => parse_table(text),
        _ => parse_ibnetdiscover(text),
    }
}

/// A GUID as railyard keys it: lower case, no `0x`, no leading zeros.
pub fn normalize_guid(text: &str) -> String {
    let t = text.trim().to_ascii_lowercase();
    let t = t.strip_prefix("0x").unwrap_or(&t);
    let t = t.trim_start_matches('0');
    if t.is_empty() { "0" } else { t }.to_string()
}

fn is_hex(text: &str) -> bool {
    let t = text.strip_prefix("0x").unwrap_or(text);
    !t.is_empty() && t.chars().all(|c| c.is_ascii_hexdigit())
}

/// A cursor over one line that knows its column, for errors that point at the text.
struct Cursor<'a> {
    line: usize,
    text: &'a str,
    at: usize,
}

impl<'a> Cursor<'a> {
    fn column(&self) -> usize {
        self.text[..self.at].chars().count() + 1
    }

    fn error(&self, message: impl Into<String>) -> IbParseError {
        syntax(self.line, self.column(), message)
    }

    fn skip_space(&mut self) {
        let rest = &self.text[self.at..];
        self.at += rest.len() - rest.trim_start().len();
    }

    fn eat(&mut self, c: char) -> bool {
        self.skip_space();
        if self.text[self.at..].starts_with(c) {
            self.at += c.len_utf8();
            true
        } else {
            false
        }
    }

    fn expect(&mut self, c: char, what: &str) -> Result<(), IbParseError> {
        if self.eat(c) {
            Ok(())
        } else {
            Err(self.error(format!("expected {what}")))
        }
    }

    /// Characters up to (not including) `end`, which is consumed.
    fn until(&mut self, end: char, what: &str) -> Result<&'a str, IbParseError> {
        let rest = &self.text[self.at..];
        let Some(n) = rest.find(end) else {
            return Err(self.error(format!("{what} is not closed with `{end}`")));
        };
        self.at += n + end.len_utf8();
        Ok(&rest[..n])
    }

    fn number(&mut self, what: &str) -> Result<u32, IbParseError> {
        self.skip_space();
        let rest = &self.text[self.at..];
        let n = rest.len() - rest.trim_start_matches(|c: char| c.is_ascii_digit()).len();
        let value = rest[..n]
            .parse()
            .map_err(|_| self.error(format!("expected {what}")))?;
        self.at += n;
        Ok(value)
    }

    /// `"S-0002c9..."`: the node type letter and its GUID.
    fn node_ref(&mut self) -> Result<(bool, String), IbParseError> {
        self.expect('"', "a quoted node GUID such as \"S-0002c90300000100\"")?;
        let start = self.column();
        let inner = self.until('"', "the node GUID")?;
        let (kind, guid) = inner
            .split_once('-')
            .filter(|(k, g)| matches!(*k, "S" | "H" | "R") && is_hex(g))
            .ok_or_else(|| {
                syntax(
                    self.line,
                    start,
                    format!("`{inner}` is not S-, H- or R-GUID"),
                )
            })?;
        Ok((kind == "S", normalize_guid(guid)))
    }

    /// An optional `(port GUID)`, skipped.
    fn skip_port_guid(&mut self) -> Result<(), IbParseError> {
        if self.eat('(') {
            self.until(')', "the port GUID")?;
        }
        Ok(())
    }

    fn rest(&self) -> &'a str {
        &self.text[self.at..]
    }
}

/// The node whose port lines follow.
struct Current {
    guid: String,
    description: String,
    switch: bool,
}

fn parse_ibnetdiscover(text: &str) -> Result<Vec<ObservedCable>, IbParseError> {
    let mut current: Option<Current> = None;
    let mut seen = HashSet::new();
    let mut cables = Vec::new();
    for (i, raw) in text.lines().enumerate() {
        let line = i + 1;
        let trimmed = raw.trim();
        if trimmed.is_empty() || trimmed.starts_with('#') || is_attribute(trimmed) {
            continue;
        }
        let mut c = Cursor {
            line,
            text: raw,
            at: 0,
        };
        c.skip_space();
        let word: String = c
            .rest()
            .chars()
            .take_while(|ch| ch.is_ascii_alphabetic())
            .collect();
        if matches!(word.as_str(), "Switch" | "Ca" | "Rt") {
            c.at += word.len();
            c.number("the number of ports")?;
            let (switch, guid) = c.node_ref()?;
            current = Some(Current {
                guid,
                description: first_quoted(c.rest()).unwrap_or_default(),
                switch,
            });
            continue;
        }
        if !c.rest().starts_with('[') {
            return Err(c.error(format!(
                "expected a node (Switch, Ca, Rt) or a port line `[N]`, not `{}`",
                trimmed.chars().take(24).collect::<String>()
            )));
        }
        let Some(node) = &current else {
            return Err(c.error("a port line before any Switch or Ca line"));
        };
        c.expect('[', "`[`")?;
        let local_port = c.number("a port number")?;
        c.expect(']', "`]`")?;
        c.skip_port_guid()?;
        let (remote_switch, remote_guid) = c.node_ref()?;
        c.expect('[', "the remote port `[N]`")?;
        let remote_port = c.number("the remote port number")?;
        c.expect(']', "`]`")?;
        c.skip_port_guid()?;
        let comment = c.rest().trim_start().strip_prefix('#').unwrap_or("");
        let a = ObservedEnd {
            guid: node.guid.clone(),
            description: node.description.clone(),
            port: local_port,
            switch: node.switch,
        };
        let b = ObservedEnd {
            guid: remote_guid,
            description: first_quoted(comment).unwrap_or_default(),
            port: remote_port,
            switch: remote_switch,
        };
        let rate = comment.split_whitespace().last().and_then(ib_rate);
        push_once(&mut seen, &mut cables, a, b, rate, line);
    }
    Ok(cables)
}

/// `vendid=0x2c9`, `switchguid=...`: node attributes the listing prints before a node.
fn is_attribute(line: &str) -> bool {
    line.split_once('=')
        .is_some_and(|(k, _)| !k.is_empty() && k.chars().all(|c| c.is_ascii_alphanumeric()))
}

fn first_quoted(text: &str) -> Option<String> {
    let (_, rest) = text.split_once('"')?;
    let (inner, _) = rest.split_once('"')?;
    Some(inner.to_string())
}

/// A port on the fabric: node GUID and port number.
type PortKey = (String, u32);

/// Each cable once, whichever end lists it first.
fn push_once(
    seen: &mut HashSet<(PortKey, PortKey)>,
    cables: &mut Vec<ObservedCable>,
    a: ObservedEnd,
    b: ObservedEnd,
    rate: Option<Bandwidth>,
    line: usize,
) {
    let ka = (a.guid.clone(), a.port);
    let kb = (b.guid.clone(), b.port);
    let key = if ka <= kb { (ka, kb) } else { (kb, ka) };
    if seen.insert(key) {
        cables.push(ObservedCable { a, b, rate, line });
    }
}

/// Lanes and speed per lane: `4xNDR` is 4 × 100 Gb/s.
fn ib_rate(text: &str) -> Option<Bandwidth> {
    let (width, speed) = text.split_once('x')?;
    let lanes: f64 = width.parse().ok()?;
    let per_lane = SPEEDS.iter().find(|(name, _)| *name == speed)?.1;
    Some(Bandwidth::from_gbit_s(lanes * per_lane))
}

/// InfiniBand speed names and their data rate per lane in Gb/s, as `4xNDR` is 400 Gb/s.
const SPEEDS: [(&str, f64); 9] = [
    ("SDR", 2.5),
    ("DDR", 5.0),
    ("QDR", 10.0),
    ("FDR10", 10.0),
    ("FDR", 14.0),
    ("EDR", 25.0),
    ("HDR", 50.0),
    ("NDR", 100.0),
    ("XDR", 200.0),
];

fn parse_table(text: &str) -> Result<Vec<ObservedCable>, IbParseError> {
    let mut columns: Option<TableColumns> = None;
    let mut seen = HashSet::new();
    let mut cables = Vec::new();
    for (i, raw) in text.lines().enumerate() {
        let line = i + 1;
        if raw.trim().is_empty() || raw.trim_start().starts_with('#') {
            continue;
        }
        let cells = cells_of(raw);
        let Some(cols) = &columns else {
            columns = Some(TableColumns::from_header(&cells, line)?);
            continue;
        };
        if cells.len() < cols.needed {
            let end = raw.chars().count() + 1;
            return Err(syntax(
                line,
                end,
                format!("{} cells, the header has {}", cells.len(), cols.needed),
            ));
        }
        let cell = |k: usize| cells[k];
        let port = |k: usize| -> Result<u32, IbParseError> {
            let (column, text) = cell(k);
            text.parse()
                .map_err(|_| syntax(line, column, format!("`{text}` is not a port number")))
        };
        let guid = |k: usize| -> Result<String, IbParseError> {
            let (column, text) = cell(k);
            if is_hex(text) {
                Ok(normalize_guid(text))
            } else {
                Err(syntax(line, column, format!("`{text}` is not a GUID")))
            }
        };
        let name = |k: Option<usize>| k.map(|k| cell(k).1.to_string()).unwrap_or_default();
        let a = ObservedEnd {
            guid: guid(cols.local_guid)?,
            description: name(cols.local_name),
            port: port(cols.local_port)?,
            switch: false,
        };
        let b = ObservedEnd {
            guid: guid(cols.remote_guid)?,
            description: name(cols.remote_name),
            port: port(cols.remote_port)?,
            switch: false,
        };
        push_once(&mut seen, &mut cables, a, b, None, line);
    }
    Ok(cables)
}

/// Cells of a `|` row with the column each starts at, trimmed.
fn cells_of(raw: &str) -> Vec<(usize, &str)> {
    let mut out = Vec::new();
    let mut start = 0;
    for part in raw.split('|') {
        let lead = part.len() - part.trim_start().len();
        out.push((raw[..start + lead].chars().count() + 1, part.trim()));
        start += part.len() + 1;
    }
    out
}

struct TableColumns {
    local_port: usize,
    local_guid: usize,
    remote_port: usize,
    remote_guid: usize,
    local_name: Option<usize>,
    remote_name: Option<usize>,
    needed: usize,
}

impl TableColumns {
    fn from_header(cells: &[(usize, &str)], line: usize) -> Result<Self, IbParseError> {
        let find = |names: &[&str]| {
            cells
                .iter()
                .position(|(_, c)| names.iter().any(|n| c.eq_ignore_ascii_case(n)))
        };
        let need = |name: &str| {
            find(&[name]).ok_or_else(|| {
                syntax(
                    line,
                    1,
                    format!("the header has no `{name}` column (expected LocalPort|LocalGUID|RemotePort|RemoteGUID)"),
                )
            })
        };
        let local_port = need("LocalPort")?;
        let local_guid = need("LocalGUID")?;
        let remote_port = need("RemotePort")?;
        let remote_guid = need("RemoteGUID")?;
        let local_name = find(&["LocalName", "LocalDesc", "LocalNodeDesc"]);
        let remote_name = find(&["RemoteName", "RemoteDesc", "RemoteNodeDesc"]);
        let needed = [local_port, local_guid, remote_port, remote_guid]
            .into_iter()
            .chain(local_name)
            .chain(remote_name)
            .max()
            .unwrap_or(0)
            + 1;
        Ok(TableColumns {
            local_port,
            local_guid,
            remote_port,
            remote_guid,
            local_name,
            remote_name,
            needed,
        })
    }
}

/// The design as `ibnetdiscover` would list it once cabled as drawn: its InfiniBand links
/// between switch ports and NIC ports, switches as `MF0;NAME:MODEL/U1`, NIC k of a node as
/// the HCA `NAME mlx5_K`, and GUIDs made up from device ids. For samples and tests: a real
/// fabric's dump is what `check-cabling` reads.
pub fn design_as_ibnetdiscover(design: &Design) -> String {
    let ib: Vec<_> = design
        .links
        .iter()
        .filter(|l| l.tech == LinkTech::InfiniBand)
        .collect();
    let mut out = String::from("#\n# Topology file: written by railyard from the design\n#\n");
    let switch_guid = |id: u32| format!("0002c903{:08x}", 0x100 * u64::from(id));
    let hca_guid = |id: u32, nic: u32| {
        format!(
            "0002c903{:08x}",
            0x100 * u64::from(id) + 0x10 + u64::from(nic)
        )
    };
    let describe = |device: &crate::model::Device, port: Port| match (&device.kind, port) {
        (DeviceKind::Switch(s), _) => (
            format!("S-{}", switch_guid(device.id.0)),
            format!("MF0;{}:{}/U1", device.name, s.model.0),
        ),
        (_, p) => (
            format!("H-{}", hca_guid(device.id.0, p.index())),
            format!("{} mlx5_{}", device.name, p.index()),
        ),
    };
    let ib_port = |port: Port| match port {
        Port::Switch(k) => k + 1,
        _ => 1,
    };
    for device in &design.devices {
        // Every (port, far end) of this device, in port order.
        let mut ports: Vec<_> = ib
            .iter()
            .filter_map(|l| {
                if l.a.device == device.id {
                    Some((l.a.port, l.b, l.rate_gbit_s))
                } else if l.b.device == device.id {
                    Some((l.b.port, l.a, l.rate_gbit_s))
                } else {
                    None
                }
            })
            .collect();
        ports.sort_by_key(|(p, _, _)| p.dense_key());
        let far = |end: crate::model::Endpoint| {
            design
                .device(end.device)
                .map(|d| describe(d, end.port))
                .unwrap_or_default()
        };
        if device.kind.as_switch().is_some() {
            if ports.is_empty() {
                continue;
            }
            let (id, name) = describe(device, Port::Switch(0));
            let _ = writeln!(out, "\nswitchguid=0x{}", &id[2..]);
            let _ = writeln!(
                out,
                "Switch\t{} \"{id}\"\t\t# \"{name}\" enhanced port 0 lid {} lmc 0",
                ports.len(),
                device.id.0 + 1
            );
            for (port, end, rate) in &ports {
                let (fid, fname) = far(*end);
                let _ = writeln!(
                    out,
                    "[{}]\t\"{fid}\"[{}]\t\t# \"{fname}\" lid {} {}",
                    ib_port(*port),
                    ib_port(end.port),
                    end.device.0 + 1,
                    rate_name(*rate)
                );
            }
        } else {
            for (port, end, rate) in &ports {
                let (id, name) = describe(device, *port);
                let (fid, fname) = far(*end);
                let _ = writeln!(out, "\ncaguid=0x{}", &id[2..]);
                let _ = writeln!(out, "Ca\t1 \"{id}\"\t\t# \"{name}\"");
                let _ = writeln!(
                    out,
                    "[1]\t\"{fid}\"[{}]\t\t# lid {} lmc 0 \"{fname}\" lid {} {}",
                    ib_port(end.port),
                    device.id.0 + 1,
                    end.device.0 + 1,
                    rate_name(*rate)
                );
            }
        }
    }
    out
}

/// `4xNDR` for 400 Gb/s; the speed that gives the rate over 4 lanes, else 1 lane.
fn rate_name(rate: Bandwidth) -> String {
    for lanes in [4.0, 1.0, 2.0, 8.0, 12.0] {
        if let Some((name, _)) = SPEEDS
            .iter()
            .rev()
            .find(|(_, per_lane)| (per_lane * lanes - rate.gbit_s()).abs() < 1e-9)
        {
            return format!("{lanes}x{name}");
        }
    }
    "4xNDR".to_string()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn speeds_read_as_rates() {
        assert_eq!(ib_rate("4xNDR"), Some(Bandwidth::from_gbit_s(400.0)));
        assert_eq!(ib_rate("4xHDR"), Some(Bandwidth::from_gbit_s(200.0)));
        assert_eq!(ib_rate("4xFDR10"), Some(Bandwidth::from_gbit_s(40.0)));
        assert_eq!(rate_name(Bandwidth::from_gbit_s(400.0)), "4xNDR");
        assert_eq!(normalize_guid("0x0002C903"), "2c903");
    }
}
