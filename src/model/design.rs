//! The design: devices, links and groups with stable ids of our own, and canvas positions,
//! so that a file reopens exactly as it was drawn.

use super::calibration::Calibration;
use super::device::{Device, DeviceKind};
pub use super::ids::{DeviceId, GroupId, LinkId};
use super::job_spec::JobSpec;
use super::library_choice::LibraryChoice;
use super::link::Link;
use super::nccl_buffer::NcclBuffer;
use super::nccl_release::NcclRelease;
pub use super::position::Pos;
use serde::{Deserialize, Serialize};

#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub enum GroupKind {
    Rack,
    Pod,
    ScalableUnit,
    /// One plane of a multi-plane fabric (all of a rail's switches, say).
    Plane,
}

/// Racks, pods, scalable units: a way to name, collapse and reason about a set of devices.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Group {
    pub id: GroupId,
    pub name: String,
    pub kind: GroupKind,
    #[serde(default)]
    pub parent: Option<GroupId>,
}

/// Everything the user drew. Devices and links are kept sorted by id (ids only grow), so
/// lookups are binary searches and the file order is stable for diffs.
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Design {
    pub name: String,
    #[serde(default)]
    pub notes: String,
    #[serde(default)]
    pub groups: Vec<Group>,
    #[serde(default)]
    pub devices: Vec<Device>,
    #[serde(default)]
    pub links: Vec<Link>,
    /// Efficiencies and latencies fitted to the user's own measurements (`Calibrate…`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub calibration: Option<Calibration>,
    /// In-network reduction is set up: the SHARP plugin installed and NCCL_COLLNET_ENABLE=1.
    /// NCCL leaves CollNet off by default (init.cc: collnetEnable = 0), so switches that could
    /// reduce in the network do not until this is on; files without it load with it off.
    #[serde(default, skip_serializing_if = "is_false")]
    pub sharp_enabled: bool,
    /// The collective library the jobs run; files without it choose by node family.
    #[serde(default, skip_serializing_if = "LibraryChoice::is_auto")]
    pub library: LibraryChoice,
    /// The NCCL release the jobs run, where it is not the one the model's constants come
    /// from (`NcclRelease::MODELLED`); files without it run that one.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub nccl_release: Option<NcclRelease>,
    /// NCCL_BUFFSIZE, where the jobs set it (AWS's and Google's cloud recipes set 8 MiB);
    /// files without it run NCCL's default, 4 MiB.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub nccl_buffer: Option<NcclBuffer>,
    /// The file this design was imported from (draw.io, DOT, an edge list), so the checks
    /// can say where a placeholder part came from; absent for designs drawn in railyard.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub imported_from: Option<String>,
    /// The job the design is for (the sidebar's workload); files without it have none.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub job: Option<JobSpec>,
}

fn is_false(b: &bool) -> bool {
    !*b
}

impl Design {
    pub fn new(name: impl Into<String>) -> Self {
        Self {
            name: name.into(),
            ..Self::default()
        }
    }

    pub fn device(&self, id: DeviceId) -> Option<&Device> {
        self.devices
            .binary_search_by_key(&id, |d| d.id)
            .ok()
            .map(|i| &self.devices[i])
    }

    pub fn device_mut(&mut self, id: DeviceId) -> Option<&mut Device> {
        match self.devices.binary_search_by_key(&id, |d| d.id) {
            Ok(i) => Some(&mut self.devices[i]),
            Err(_) => None,
        }
    }

    pub fn link(&self, id: LinkId) -> Option<&Link> {
        self.links
            .binary_search_by_key(&id, |l| l.id)
            .ok()
            .map(|i| &self.links[i])
    }

    pub fn link_mut(&mut self, id: LinkId) -> Option<&mut Link> {
        match self.links.binary_search_by_key(&id, |l| l.id) {
            Ok(i) => Some(&mut self.links[i]),
            Err(_) => None,
        }
    }

    pub fn group(&self, id: GroupId) -> Option<&Group> {
        self.groups.iter().find(|g| g.id == id)
    }

    pub fn next_device_id(&self) -> DeviceId {
        DeviceId(self.devices.last().map_or(0, |d| d.id.0 + 1))
    }

    pub fn next_link_id(&self) -> LinkId {
        LinkId(self.links.last().map_or(0, |l| l.id.0 + 1))
    }

    pub fn next_group_id(&self) -> GroupId {
        GroupId(self.groups.iter().map(|g| g.id.0 + 1).max().unwrap_or(0))
    }

    /// Inserts keeping id order; replaces a device with the same id.
    pub fn insert_device(&mut self, device: Device) {
        match self.devices.binary_search_by_key(&device.id, |d| d.id) {
            Ok(i) => self.devices[i] = device,
            Err(i) => self.devices.insert(i, device),
        }
    }

    pub fn insert_link(&mut self, link: Link) {
        match self.links.binary_search_by_key(&link.id, |l| l.id) {
            Ok(i) => self.links[i] = link,
            Err(i) => self.links.insert(i, link),
        }
    }

    pub fn remove_device(&mut self, id: DeviceId) -> Option<Device> {
        let i = self.devices.binary_search_by_key(&id, |d| d.id).ok()?;
        Some(self.devices.remove(i))
    }

    pub fn remove_link(&mut self, id: LinkId) -> Option<Link> {
        let i = self.links.binary_search_by_key(&id, |l| l.id).ok()?;
        Some(self.links.remove(i))
    }

    /// Adds a device with the next free id and returns that id.
    pub fn add_device(&mut self, mut device: Device) -> DeviceId {
        device.id = self.next_device_id();
        let id = device.id;
        self.devices.push(device);
        id
    }

    /// Adds a link with the next free id and returns that id.
    pub fn add_link(&mut self, mut link: Link) -> LinkId {
        link.id = self.next_link_id();
        let id = link.id;
        self.links.push(link);
        id
    }

    pub fn add_group(&mut self, name: impl Into<String>, kind: GroupKind) -> GroupId {
        let id = self.next_group_id();
        self.groups.push(Group {
            id,
            name: name.into(),
            kind,
            parent: None,
        });
        id
    }

    /// Links touching a device.
    pub fn links_of(&self, id: DeviceId) -> impl Iterator<Item = &Link> {
        self.links
            .iter()
            .filter(move |l| l.a.device == id || l.b.device == id)
    }

    pub fn gpu_count(&self) -> u64 {
        self.devices
            .iter()
            .map(|d| match &d.kind {
                DeviceKind::GpuNode(n) => u64::from(n.gpu_count),
                _ => 0,
            })
            .sum()
    }

    pub fn node_count(&self) -> usize {
        self.devices
            .iter()
            .filter(|d| matches!(d.kind, DeviceKind::GpuNode(_)))
            .count()
    }

    pub fn switch_count(&self) -> usize {
        self.devices
            .iter()
            .filter(|d| matches!(d.kind, DeviceKind::Switch(_)))
            .count()
    }
}
