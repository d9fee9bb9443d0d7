//! Where a device sits on the canvas: below `design` and `device`, which both hold one.

use serde::{Deserialize, Serialize};

/// A point on the canvas, in canvas units (not screen pixels).
#[derive(Debug, Clone, Copy, PartialEq, Default, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Pos {
    pub x: f32,
    pub y: f32,
}

impl Pos {
    pub const fn new(x: f32, y: f32) -> Self {
        Self { x, y }
    }
}
