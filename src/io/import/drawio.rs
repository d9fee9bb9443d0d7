//! draw.io files: our own export read back exactly (the `<object>` data it records on each
//! cell: a device's kind, part and position, a link with its ports), and shapes and
//! connectors drawn in draw.io, read like a DOT file's nodes and edges (a shape's label is
//! the device's name, a `part` property its part, its place on the page its position; a
//! connector's label or `technology` and `rate` properties say what the link is). A shape
//! moved or renamed in draw.io moves or renames the device; a `part` changed there makes
//! the device anew from that part; a connector moved to another shape is linked anew on
//! free ports. Only the first page is read, and it must be uncompressed.

use super::ImportError;
use super::build::{Importer, NamedDevice, NamedLink};
use super::labels::{parse_link_label, parse_rate, parse_technology};
use super::line_column;
use crate::io::export::drawio::{
    DESIGN_ATTRIBUTE, GROUP_ATTRIBUTE, KIND_ATTRIBUTE, LINK_ATTRIBUTE, PART_ATTRIBUTE,
    POS_ATTRIBUTE, SOURCE_PORT_ATTRIBUTE, TARGET_PORT_ATTRIBUTE,
};
use crate::model::ports::parse_port_name;
use crate::model::{Catalog, Design, Device, DeviceId, DeviceKind, GroupId, Link, Pos};
use quick_xml::Reader;
use quick_xml::events::{BytesStart, Event};
use std::collections::{HashMap, HashSet};

/// One `mxCell` with the attributes of the `<object>` around it, if any.
#[derive(Debug, Default)]
struct Cell {
    attributes: HashMap<String, String>,
    /// x, y, width, height.
    geometry: Option<[f32; 4]>,
    line: usize,
}

impl Cell {
    fn get(&self, name: &str) -> Option<&str> {
        self.attributes.get(name).map(String::as_str)
    }

    fn id(&self) -> &str {
        self.get("id").unwrap_or_default()
    }

    fn is(&self, flag: &str) -> bool {
        self.get(flag) == Some("1")
    }

    /// The shape's text: the object's label or the cell's value, HTML tags dropped.
    fn label(&self) -> String {
        let text = self.get("label").or(self.get("value")).unwrap_or_default();
        if self.get("style").is_some_and(|s| s.contains("html=1")) {
            strip_html(text)
        } else {
            text.to_string()
        }
    }

    fn centre(&self) -> Option<Pos> {
        self.geometry
            .map(|[x, y, w, h]| Pos::new(x + w / 2.0, y + h / 2.0))
    }
}

fn strip_html(text: &str) -> String {
    let mut out = String::new();
    let mut in_tag = false;
    for c in text.replace("<br>", "\n").chars() {
        match c {
            '<' => in_tag = true,
            '>' => in_tag = false,
            c if !in_tag => out.push(c),
            _ => {}
        }
    }
    out.replace("&nbsp;", " ").trim().to_string()
}

fn attributes_of(
    element: &BytesStart<'_>,
    into: &mut HashMap<String, String>,
) -> Result<(), String> {
    for attribute in element.attributes() {
        let attribute = attribute.map_err(|e| e.to_string())?;
        let key = String::from_utf8_lossy(attribute.key.as_ref()).into_owned();
        let value = attribute
            .normalized_value(quick_xml::XmlVersion::Implicit1_0)
            .map_err(|e| e.to_string())?;
        into.insert(key, value.into_owned());
    }
    Ok(())
}

/// The cells of the first page, and the page's name.
fn read_cells(text: &str, origin: &str) -> Result<(Vec<Cell>, Option<String>), ImportError> {
    let mut reader = Reader::from_str(text);
    reader.config_mut().check_end_names = true;
    let syntax = |offset: u64, message: String| {
        let (line, column) = line_column(text, usize::try_from(offset).unwrap_or(usize::MAX));
        ImportError::Syntax {
            origin: origin.to_string(),
            line,
            column,
            message,
        }
    };
    let mut cells: Vec<Cell> = Vec::new();
    let mut page_name = None;
    let mut in_diagram = false;
    let mut wrapper: Option<HashMap<String, String>> = None;
    let mut open_cell: Option<usize> = None;
    loop {
        let at = reader.buffer_position();
        let event = reader
            .read_event()
            .map_err(|e| syntax(reader.error_position(), e.to_string()))?;
        let line = line_column(text, usize::try_from(at).unwrap_or(usize::MAX)).0;
        match event {
            Event::Start(ref e) | Event::Empty(ref e) => {
                let is_empty = matches!(event, Event::Empty(_));
                match e.name().as_ref() {
                    b"diagram" => {
                        let mut attrs = HashMap::new();
                        attributes_of(e, &mut attrs).map_err(|m| syntax(at, m))?;
                        page_name = attrs.remove("name");
                        in_diagram = !is_empty;
                    }
                    b"object" | b"UserObject" => {
                        let mut attrs = HashMap::new();
                        attributes_of(e, &mut attrs).map_err(|m| syntax(at, m))?;
                        wrapper = Some(attrs);
                    }
                    b"mxCell" => {
                        let mut cell = Cell {
                            line,
                            ..Cell::default()
                        };
                        attributes_of(e, &mut cell.attributes).map_err(|m| syntax(at, m))?;
                        // The object gives the id, label and data; the cell's own
                        // attributes (source, target, style) win over data of that name.
                        if let Some(outer) = &wrapper {
                            for (key, value) in outer {
                                cell.attributes
                                    .entry(key.clone())
                                    .or_insert_with(|| value.clone());
                            }
                        }
                        if !is_empty {
                            open_cell = Some(cells.len());
                        }
                        cells.push(cell);
                    }
                    b"mxGeometry" => {
                        if let Some(i) = open_cell {
                            let mut attrs = HashMap::new();
                            attributes_of(e, &mut attrs).map_err(|m| syntax(at, m))?;
                            let number = |name: &str| -> Result<f32, ImportError> {
                                match attrs.get(name) {
                                    None => Ok(0.0),
                                    Some(v) => {
                                        v.parse::<f32>().ok().filter(|f| f.is_finite()).ok_or_else(
                                            || ImportError::Line {
                                                origin: origin.to_string(),
                                                line,
                                                message: format!(
                                                    "geometry {name}=\"{v}\" is not a number"
                                                ),
                                            },
                                        )
                                    }
                                }
                            };
                            if attrs.get("relative").map(String::as_str) != Some("1") {
                                cells[i].geometry = Some([
                                    number("x")?,
                                    number("y")?,
                                    number("width")?,
                                    number("height")?,
                                ]);
                            }
                        }
                    }
                    _ => {}
                }
            }
            Event::End(e) => match e.name().as_ref() {
                // Only the first page.
                b"diagram" if in_diagram => break,
                b"object" | b"UserObject" => wrapper = None,
                b"mxCell" => open_cell = None,
                _ => {}
            },
            Event::Text(t)
                if in_diagram && cells.is_empty() && !t.iter().all(u8::is_ascii_whitespace) =>
            {
                return Err(ImportError::Line {
                    origin: origin.to_string(),
                    line,
                    message: "the diagram is compressed: in draw.io turn off File > \
                              Properties > Compressed and save again"
                        .into(),
                });
            }
            Event::Eof => break,
            _ => {}
        }
    }
    Ok((cells, page_name))
}

fn parse_pos(text: &str) -> Option<Pos> {
    let (x, y) = text.split_once(',')?;
    let (x, y) = (x.trim().parse::<f32>().ok()?, y.trim().parse::<f32>().ok()?);
    (x.is_finite() && y.is_finite()).then_some(Pos::new(x, y))
}

/// `d12` → 12.
fn numbered_id(id: &str, prefix: char) -> Option<u32> {
    id.strip_prefix(prefix)?.parse().ok()
}

pub fn drawio_to_design(
    text: &str,
    origin: &str,
    catalog: &Catalog,
) -> Result<Design, ImportError> {
    let (cells, page_name) = read_cells(text, origin)?;
    let line_error = |line: usize, message: String| ImportError::Line {
        origin: origin.to_string(),
        line,
        message,
    };
    let mut design = match cells
        .iter()
        .find_map(|c| Some((c, c.get(DESIGN_ATTRIBUTE)?)))
    {
        Some((cell, ron_text)) => ron::from_str::<Design>(ron_text)
            .map_err(|e| line_error(cell.line, format!("{DESIGN_ATTRIBUTE}: {e}")))?,
        None => Design::new(page_name.unwrap_or_else(|| {
            std::path::Path::new(origin)
                .file_stem()
                .map_or(origin.to_string(), |s| s.to_string_lossy().into_owned())
        })),
    };
    let edge_ids: HashSet<&str> = cells
        .iter()
        .filter(|c| c.is("edge"))
        .map(Cell::id)
        .collect();
    let vertices: Vec<&Cell> = cells
        .iter()
        .filter(|c| {
            c.is("vertex")
                && !c.get("parent").is_some_and(|p| edge_ids.contains(p))
                && !c
                    .get("style")
                    .is_some_and(|s| s.starts_with("text;") || s.contains("edgeLabel"))
        })
        .collect();

    // Devices our export recorded, with their own ids.
    let mut recorded: HashMap<&str, DeviceId> = HashMap::new();
    let mut plain: Vec<&Cell> = Vec::new();
    for cell in &vertices {
        match recorded_device(cell).map_err(|m| line_error(cell.line, m))? {
            Some(device) if design.device(device.id).is_none() => {
                recorded.insert(cell.id(), device.id);
                design.insert_device(device);
            }
            _ => plain.push(cell),
        }
    }
    // A tray whose domain was deleted in draw.io stands alone.
    let ids: HashSet<DeviceId> = design.devices.iter().map(|d| d.id).collect();
    for d in &mut design.devices {
        if let DeviceKind::GpuNode(n) = &mut d.kind
            && n.domain.is_some_and(|domain| !ids.contains(&domain))
        {
            n.domain = None;
        }
    }

    let mut named_links: Vec<NamedLink> = Vec::new();
    for cell in cells.iter().filter(|c| c.is("edge")) {
        let (Some(source), Some(target)) = (cell.get("source"), cell.get("target")) else {
            return Err(line_error(
                cell.line,
                format!(
                    "connector `{}` is not attached to a shape at both ends",
                    cell.id()
                ),
            ));
        };
        let recorded_link = match cell.get(LINK_ATTRIBUTE) {
            Some(ron_text) => Some(
                ron::from_str::<Link>(ron_text)
                    .map_err(|e| line_error(cell.line, format!("{LINK_ATTRIBUTE}: {e}")))?,
            ),
            None => None,
        };
        let ends = (recorded.get(source), recorded.get(target));
        if let (Some(mut link), (Some(&a), Some(&b))) = (recorded_link.clone(), ends)
            && link.a.device == a
            && link.b.device == b
            && design.link(link.id).is_none()
        {
            for (end, attribute) in [
                (&mut link.a, SOURCE_PORT_ATTRIBUTE),
                (&mut link.b, TARGET_PORT_ATTRIBUTE),
            ] {
                if let Some(port) = cell.get(attribute).and_then(parse_port_name) {
                    end.port = port;
                }
            }
            design.insert_link(link);
            continue;
        }
        let (tech, lanes, rate) = match recorded_link {
            Some(link) => (link.tech, link.lanes, link.rate_gbit_s),
            None => link_kind(cell).map_err(|m| line_error(cell.line, m))?,
        };
        named_links.push(NamedLink {
            a: source.to_string(),
            b: target.to_string(),
            tech,
            rate,
            lanes,
            line: cell.line,
        });
    }

    let known: HashSet<&str> = vertices.iter().map(|c| c.id()).collect();
    let mut importer = Importer::new(catalog, origin, design);
    for (key, id) in &recorded {
        importer.recorded(key, *id);
    }
    for cell in plain {
        let label = cell.label();
        importer.device(NamedDevice {
            key: cell.id().to_string(),
            name: if label.is_empty() {
                cell.id().to_string()
            } else {
                label
            },
            part: cell.get(PART_ATTRIBUTE).map(str::to_string),
            pos: cell.centre(),
            tier: cell
                .get("tier")
                .and_then(|t| t.parse().ok())
                .filter(|t| *t <= 3),
            line: cell.line,
        });
    }
    for link in named_links {
        for end in [&link.a, &link.b] {
            if !known.contains(end.as_str()) {
                return Err(line_error(
                    link.line,
                    format!("a connector ends at `{end}`, which is not a shape"),
                ));
            }
        }
        importer.link(link);
    }
    importer.finish()
}

/// The device our export recorded on a shape, or `None` for a shape drawn in draw.io (or
/// one whose `part` was changed there, which is made anew from that part).
fn recorded_device(cell: &Cell) -> Result<Option<Device>, String> {
    let (Some(kind_text), Some(number)) = (cell.get(KIND_ATTRIBUTE), numbered_id(cell.id(), 'd'))
    else {
        return Ok(None);
    };
    let kind: DeviceKind =
        ron::from_str(kind_text).map_err(|e| format!("{KIND_ATTRIBUTE}: {e}"))?;
    let part = cell.get(PART_ATTRIBUTE);
    if part.is_some() && part != kind.model_part().map(|p| p.as_str()) {
        return Ok(None);
    }
    let recorded = cell.get(POS_ATTRIBUTE).and_then(parse_pos);
    let centre = cell.centre();
    // A domain's shape encloses its trays, so only the recorded position says where it
    // is; another shape is where its centre is, unless it has not moved (the recorded
    // position is exact, the centre off by rounding).
    let pos = match (recorded, centre) {
        (Some(r), _) if matches!(kind, DeviceKind::NvSwitchDomain(_)) => r,
        (Some(r), Some(c)) if (r.x - c.x).abs() < 0.01 && (r.y - c.y).abs() < 0.01 => r,
        (_, Some(c)) => c,
        (Some(r), None) => r,
        (None, None) => Pos::default(),
    };
    let group = cell
        .get(GROUP_ATTRIBUTE)
        .and_then(|g| g.parse().ok())
        .map(GroupId);
    Ok(Some(Device {
        id: DeviceId(number),
        name: cell.label(),
        pos,
        group,
        kind,
    }))
}

/// A connector drawn in draw.io: `technology` and `rate` properties, else its label.
fn link_kind(
    cell: &Cell,
) -> Result<(crate::model::LinkTech, u32, crate::model::Bandwidth), String> {
    if let (Some(tech), Some(rate)) = (cell.get("technology"), cell.get("rate")) {
        let tech = parse_technology(tech)?;
        let (lanes, rate) = parse_rate(rate)?;
        return Ok((tech, lanes, rate));
    }
    let label = cell.label();
    if label.is_empty() {
        return Err(format!(
            "connector `{}` says no technology and rate: label it like `InfiniBand 400 Gb/s`",
            cell.id()
        ));
    }
    parse_link_label(&label)
}
