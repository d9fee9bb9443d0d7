//! The design under check with its catalog parts looked up once (by id, with the last lookup
//! remembered) and a device index, so every pass names devices and finds parts cheaply.

use super::reporting::list_with_more;
use super::{Finding, Severity, codes::*};
use crate::analysis::cost::FastMap;
use crate::analysis::graph::DeviceIndex;
use crate::model::catalog::{NicSpec, NodeSpec, SwitchSpec};
use crate::model::{Catalog, Design, Device, DeviceId, DeviceKind, Part, PartId, PartSpec};
use std::cell::RefCell;

/// The design, its catalog and what each device's parts are.
pub(super) struct CheckedDesign<'a> {
    pub(super) design: &'a Design,
    pub(super) catalog: &'a Catalog,
    /// Device id to its position in `design.devices`.
    pub(super) index: DeviceIndex,
    /// Catalog lookups by id, done once per distinct id.
    parts: RefCell<FastMap<&'a PartId, Option<&'a Part>>>,
    /// The last lookup: neighbouring devices mostly use the same parts.
    last_part: RefCell<Option<(&'a PartId, Option<&'a Part>)>>,
    /// Each device's parts, by position in `design.devices`.
    pub(super) device_parts: Vec<DeviceParts<'a>>,
}

/// A device's model part (node, switch, domain or host model) and its NIC parts.
pub(super) struct DeviceParts<'a> {
    pub(super) model: Option<&'a Part>,
    pub(super) nics: Vec<Option<&'a Part>>,
}

pub(super) fn as_node(part: &Part) -> Option<&NodeSpec> {
    match &part.spec {
        PartSpec::Node(spec) => Some(spec),
        _ => None,
    }
}

pub(super) fn as_nic(part: &Part) -> Option<&NicSpec> {
    match &part.spec {
        PartSpec::Nic(spec) => Some(spec),
        _ => None,
    }
}

pub(super) fn as_switch(part: &Part) -> Option<&SwitchSpec> {
    match &part.spec {
        PartSpec::Switch(spec) => Some(spec),
        _ => None,
    }
}

impl<'a> CheckedDesign<'a> {
    pub(super) fn new(design: &'a Design, catalog: &'a Catalog, out: &mut Vec<Finding>) -> Self {
        let index = DeviceIndex::with_repeats(design, |i| {
            let device = &design.devices[i];
            out.push(Finding {
                severity: Severity::Error,
                code: DUPLICATE_ID,
                message: format!(
                    "device id {} is used twice (one is `{}`)",
                    device.id, device.name
                ),
                devices: vec![device.id],
                links: vec![],
                suggestion: String::new(),
            });
        });
        let mut checked = CheckedDesign {
            design,
            catalog,
            index,
            parts: RefCell::new(FastMap::default()),
            last_part: RefCell::new(None),
            device_parts: Vec::new(),
        };
        checked.device_parts = design.devices.iter().map(|d| checked.resolve(d)).collect();
        checked
    }

    fn resolve(&self, device: &'a Device) -> DeviceParts<'a> {
        let (model, nics) = match &device.kind {
            DeviceKind::GpuNode(n) => (Some(&n.model), &n.nics[..]),
            DeviceKind::Host(h) => (h.model.as_ref(), &h.nics[..]),
            DeviceKind::Switch(s) => (Some(&s.model), &[][..]),
            DeviceKind::NvSwitchDomain(d) => (Some(&d.model), &[][..]),
        };
        DeviceParts {
            model: model.and_then(|m| self.part(m)),
            nics: nics.iter().map(|slot| self.part(&slot.part)).collect(),
        }
    }

    pub(super) fn part(&self, id: &'a PartId) -> Option<&'a Part> {
        if let Some((last, found)) = *self.last_part.borrow()
            && last == id
        {
            return found;
        }
        let found = *self
            .parts
            .borrow_mut()
            .entry(id)
            .or_insert_with(|| self.catalog.get(id));
        *self.last_part.borrow_mut() = Some((id, found));
        found
    }

    pub(super) fn node_spec(&self, id: &'a PartId) -> Option<&'a NodeSpec> {
        self.part(id).and_then(as_node)
    }

    pub(super) fn device(&self, id: DeviceId) -> Option<&'a Device> {
        self.index.get(id).map(|i| &self.design.devices[i])
    }

    pub(super) fn name(&self, id: DeviceId) -> String {
        match self.device(id) {
            Some(d) if !d.name.is_empty() => d.name.clone(),
            _ => id.to_string(),
        }
    }

    /// "a, b, c and 4 more".
    pub(super) fn names(&self, ids: &[DeviceId]) -> String {
        list_with_more(ids.iter().map(|&id| self.name(id)), ids.len())
    }
}
