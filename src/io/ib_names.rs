//! The mapping file of `check-cabling --map`: fabric names or GUIDs to the design's device
//! names, for fabrics whose node descriptions are not the names drawn.
//!
//! One entry a line, comma-separated, `#` starts a comment:
//!
//! ```text
//! # fabric name or GUID,   railyard device [, NIC offset]
//! MF0;ib-sw-07:QM9700/U1,  leaf-r0
//! dgx-a01,                 node-01
//! dgx-a02 mlx5_4,          node-02, -2
//! 0x0002c90300010017,      node-03, 5
//! ```
//!
//! The first column is a node GUID (with `0x` or 16 hex digits), a whole node description
//! (`dgx-a02 mlx5_4`), or a host name (the description without its HCA, `dgx-a01`). The
//! offset is added to the HCA number of the description (`mlx5_4` is 4, none is 0) to give
//! the NIC: `dgx-a02 mlx5_4` with -2 is NIC 2; a GUID with 5 is NIC 5.

use super::ibnetdiscover::normalize_guid;
pub use crate::analysis::as_built::observed::{MappedName, NameMap};
use thiserror::Error;

#[derive(Debug, Error, PartialEq)]
pub enum NameMapError {
    #[error("line {line}, column {column}: {message}")]
    Syntax {
        line: usize,
        column: usize,
        message: String,
    },
}

/// Looks like a GUID rather than a host name.
fn is_guid(text: &str) -> bool {
    let hex = |t: &str| !t.is_empty() && t.chars().all(|c| c.is_ascii_hexdigit());
    match text.strip_prefix("0x") {
        Some(rest) => hex(rest),
        None => text.len() == 16 && hex(text),
    }
}

pub fn parse_name_map(text: &str) -> Result<NameMap, NameMapError> {
    let mut map = NameMap::default();
    for (i, raw) in text.lines().enumerate() {
        let line = i + 1;
        let content = raw.split('#').next().unwrap_or("");
        if content.trim().is_empty() {
            continue;
        }
        let mut column = 1;
        let mut cells = Vec::new();
        for part in content.split(',') {
            let lead = part.chars().count() - part.trim_start().chars().count();
            cells.push((column + lead, part.trim()));
            column += part.chars().count() + 1;
        }
        let error = |column: usize, message: String| NameMapError::Syntax {
            line,
            column,
            message,
        };
        if cells.len() < 2 || cells.len() > 3 {
            return Err(error(
                1,
                format!(
                    "{} fields: expected `fabric name or GUID, railyard device[, NIC offset]`",
                    cells.len()
                ),
            ));
        }
        let (key_column, key) = cells[0];
        let (device_column, device) = cells[1];
        if key.is_empty() {
            return Err(error(key_column, "an empty fabric name".into()));
        }
        if device.is_empty() {
            return Err(error(device_column, "an empty device name".into()));
        }
        let nic_offset = match cells.get(2) {
            Some((c, t)) if !t.is_empty() => t
                .trim_start_matches('+')
                .parse()
                .map_err(|_| error(*c, format!("`{t}` is not a whole number")))?,
            _ => 0,
        };
        let entry = MappedName {
            device: device.to_string(),
            nic_offset,
        };
        if is_guid(key) {
            map.by_guid.insert(normalize_guid(key), entry);
        } else {
            map.by_name.insert(key.to_string(), entry);
        }
    }
    Ok(map)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_guids_and_offsets() {
        let map = parse_name_map(
            "# a comment\nMF0;sw:QM9700/U1, leaf-r0\ndgx-a02 mlx5_4, node-02, -2\n0x0002c90300010017,node-03,+5\n",
        )
        .expect("parses");
        assert_eq!(map.by_name["MF0;sw:QM9700/U1"].device, "leaf-r0");
        assert_eq!(map.by_name["dgx-a02 mlx5_4"].nic_offset, -2);
        assert_eq!(map.by_guid["2c90300010017"].nic_offset, 5);
    }

    #[test]
    fn a_bad_offset_names_its_column() {
        let err = parse_name_map("\nnode, node-01, two\n").expect_err("refused");
        assert_eq!(
            err,
            NameMapError::Syntax {
                line: 2,
                column: 16,
                message: "`two` is not a whole number".into()
            }
        );
    }
}
