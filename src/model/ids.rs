//! The ids of devices, links and groups: numbers of our own, stable across edits and saves,
//! printed with a letter (`d3`, `l7`, `g1`). Below `design`, `device` and `link`, which all
//! name them.

use serde::{Deserialize, Serialize};
use std::fmt;

macro_rules! id_type {
    ($name:ident, $prefix:literal) => {
        #[derive(
            Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize,
        )]
        #[serde(transparent)]
        pub struct $name(pub u32);

        impl fmt::Display for $name {
            fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                write!(f, concat!($prefix, "{}"), self.0)
            }
        }
    };
}

id_type!(DeviceId, "d");
id_type!(LinkId, "l");
id_type!(GroupId, "g");
