//! A design under construction: devices, groups and links with per-device port counters,
//! plus the canvas layout rules every template shares.

use super::parts::Wire;
use crate::model::ports::port_from_v1_number;
use crate::model::{
    Catalog, Design, Device, DeviceId, DeviceKind, Endpoint, Group, GroupId, GroupKind,
    LengthClass, Link, LinkId, Port, Pos, Switch, SwitchFeatures, SwitchRole,
};
use std::collections::HashMap;

/// Horizontal distance between neighbouring devices on the canvas.
pub(crate) const SPACING: f32 = 120.0;
/// Extra space between racks, and between scalable units or pods.
pub(super) const RACK_GAP: f32 = 60.0;
pub(super) const BLOCK_GAP: f32 = 240.0;
/// Vertical distance between tiers (core, spine, leaf, nodes).
pub(super) const ROW_GAP: f32 = 260.0;

pub(super) struct Builder {
    design: Design,
    /// Next free port number of each device, indexed by device id (ids are dense from 0).
    next_port: Vec<u32>,
    /// The port numbers of each link's two ends, by link position. Templates count a
    /// device's ports as one list (NICs, then built-in ports), as version-1 files did;
    /// `finish` names each number's port with the catalog, as loading such a file does.
    numbers: Vec<[u32; 2]>,
}

impl Builder {
    pub fn new(name: impl Into<String>) -> Self {
        Self {
            design: Design::new(name),
            next_port: Vec::new(),
            numbers: Vec::new(),
        }
    }

    /// Adds a group; ids are dense, so no search for the next one.
    pub fn group(&mut self, name: String, kind: GroupKind, parent: Option<GroupId>) -> GroupId {
        let id = GroupId(self.design.groups.len() as u32);
        self.design.groups.push(Group {
            id,
            name,
            kind,
            parent,
        });
        id
    }

    pub fn device(
        &mut self,
        name: String,
        pos: Pos,
        group: Option<GroupId>,
        kind: DeviceKind,
    ) -> DeviceId {
        let id = self.design.add_device(Device {
            id: DeviceId(0),
            name,
            // Whole canvas units keep files tidy; -0.0 + 0.0 is 0.0.
            pos: Pos::new(pos.x.round() + 0.0, pos.y.round() + 0.0),
            group,
            kind,
        });
        self.next_port.push(0);
        id
    }

    #[allow(clippy::too_many_arguments)]
    pub fn switch(
        &mut self,
        name: String,
        pos: Pos,
        group: Option<GroupId>,
        sw: &SwitchModel,
        role: SwitchRole,
        rail: Option<u32>,
    ) -> DeviceId {
        self.device(
            name,
            pos,
            group,
            DeviceKind::Switch(Switch {
                model: sw.part.clone(),
                role,
                breakout: sw.breakout,
                rail,
                features: sw.features,
            }),
        )
    }

    /// The next unused port of a device; ports are handed out once each.
    pub fn take_port(&mut self, device: DeviceId) -> u32 {
        let slot = &mut self.next_port[device.0 as usize];
        let port = *slot;
        *slot += 1;
        port
    }

    /// Makes the counter of a device start at `port` (a node's built-in ports follow its NICs).
    pub fn skip_ports_to(&mut self, device: DeviceId, port: u32) {
        let slot = &mut self.next_port[device.0 as usize];
        *slot = (*slot).max(port);
    }

    /// Links port number `pa` of `a` to port number `pb` of `b`.
    fn link(
        &mut self,
        (a, pa): (DeviceId, u32),
        (b, pb): (DeviceId, u32),
        wire: &Wire,
        length: LengthClass,
    ) -> LinkId {
        // The ports are named in `finish`, once every device is known.
        let unnamed = Port::Nic(0);
        let mut link = Link::new(
            Endpoint::new(a, unnamed),
            Endpoint::new(b, unnamed),
            wire.tech,
            wire.rate,
        )
        .with_length(length);
        link.transport = wire.transport;
        link.cable = wire.cable.clone();
        self.numbers.push([pa, pb]);
        self.design.add_link(link)
    }

    /// Links a node's fixed port to the next free port of a switch.
    pub fn link_to_switch(
        &mut self,
        node: DeviceId,
        node_port: u32,
        switch: DeviceId,
        wire: &Wire,
        length: LengthClass,
    ) -> LinkId {
        let port = self.take_port(switch);
        self.link((node, node_port), (switch, port), wire, length)
    }

    /// Links the next free ports of two devices.
    pub fn link_next(
        &mut self,
        a: DeviceId,
        b: DeviceId,
        wire: &Wire,
        length: LengthClass,
    ) -> LinkId {
        let pa = self.take_port(a);
        let pb = self.take_port(b);
        self.link((a, pa), (b, pb), wire, length)
    }

    pub fn x_of(&self, device: DeviceId) -> f32 {
        self.design.devices[device.0 as usize].pos.x
    }

    /// Leftmost and rightmost x of some devices.
    pub fn x_extent(&self, devices: &[DeviceId]) -> (f32, f32) {
        devices.iter().fold((f32::MAX, f32::MIN), |(lo, hi), d| {
            let x = self.x_of(*d);
            (lo.min(x), hi.max(x))
        })
    }

    /// Finishes: names each link end's port, pushes apart devices of one row that ended up
    /// closer than `SPACING` (rows are laid out independently, so a crowded row can
    /// overlap), wraps a wide strip of pods into rows (`wrap`), then returns the design.
    pub fn finish(mut self, notes: String, catalog: &Catalog) -> Design {
        for (link, [pa, pb]) in self.design.links.iter_mut().zip(&self.numbers) {
            for (end, number) in [(&mut link.a, *pa), (&mut link.b, *pb)] {
                // Links are only made between devices this builder added, by id = position.
                let device = &self.design.devices[end.device.0 as usize];
                end.port = port_from_v1_number(catalog, device, number, link.tech);
            }
        }
        let mut rows: HashMap<u32, Vec<usize>> = HashMap::new();
        for (i, d) in self.design.devices.iter().enumerate() {
            rows.entry(d.pos.y.to_bits()).or_default().push(i);
        }
        for mut row in rows.into_values() {
            row.sort_by(|a, b| {
                let (xa, xb) = (self.design.devices[*a].pos.x, self.design.devices[*b].pos.x);
                xa.total_cmp(&xb)
            });
            let mut last = f32::MIN;
            for i in row {
                let pos = &mut self.design.devices[i].pos;
                if pos.x < last + SPACING {
                    pos.x = last + SPACING;
                }
                last = pos.x;
            }
        }
        super::wrap::wrap_wide(&mut self.design);
        self.design.notes = notes;
        self.design
    }
}

/// A switch model as placed: part, breakout and features (shared by every switch of a tier).
#[derive(Debug, Clone)]
pub(super) struct SwitchModel {
    pub part: crate::model::PartId,
    pub breakout: u32,
    pub features: SwitchFeatures,
}

/// `n` centres over the devices spanning [lo, hi]: the span (plus half a device each side)
/// cut into `n` equal slots, one device in the middle of each; never closer than `SPACING`.
pub(crate) fn spread(n: usize, lo: f32, hi: f32) -> Vec<f32> {
    if n == 0 {
        return Vec::new();
    }
    let mid = (lo + hi) / 2.0;
    let slot = ((hi - lo + SPACING) / n as f32).max(SPACING);
    let start = mid - slot * n as f32 / 2.0 + slot / 2.0;
    (0..n).map(|i| start + slot * i as f32).collect()
}

/// Zero-padded 1-based numbers sized to the largest: "node-07" among 32, "node-00123".
pub(super) fn numbered(prefix: &str, index: usize, count: usize) -> String {
    let width = count.max(1).to_string().len().max(2);
    format!("{prefix}-{:0width$}", index + 1)
}

/// Digits-only variant for compound names ("leaf-su03-r5").
pub(super) fn num(index: usize, count: usize) -> String {
    let width = count.max(1).to_string().len();
    format!("{:0width$}", index + 1)
}

/// Y of a tier when `switch_rows` rows of switches sit above the nodes: row 0 is the top.
pub(crate) fn row_y(row: usize) -> f32 {
    row as f32 * ROW_GAP
}
