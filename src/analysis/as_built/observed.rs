//! What was found cabled on a running fabric, as data: the listing parsers in `io` turn
//! text into these, and the comparison with the design reads them.

use crate::model::Bandwidth;
use std::collections::HashMap;

/// One end of an observed cable.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct ObservedEnd {
    /// Node GUID, lower-case hex without `0x` or leading zeros.
    pub guid: String,
    /// The node description (`node-01 mlx5_3`, `MF0;leaf-r0:QM9700/U1`); empty when unknown.
    pub description: String,
    /// Physical port number, from 1.
    pub port: u32,
    /// Known to be a switch (`S-` in ibnetdiscover); false for HCAs and unknown ends.
    pub switch: bool,
}

/// A cable seen on the fabric.
#[derive(Debug, Clone, PartialEq)]
pub struct ObservedCable {
    pub a: ObservedEnd,
    pub b: ObservedEnd,
    /// Line rate per direction when the listing gives it (`4xNDR` is 400 Gb/s).
    pub rate: Option<Bandwidth>,
    /// The input line it was read from (its first appearance), from 1.
    pub line: usize,
}

/// What one fabric name stands for in the design.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct MappedName {
    pub device: String,
    pub nic_offset: i64,
}

/// Fabric names and GUIDs to design devices.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct NameMap {
    pub by_guid: HashMap<String, MappedName>,
    pub by_name: HashMap<String, MappedName>,
}
