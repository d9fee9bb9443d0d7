//! The design model: devices, links, groups, the parts catalog and typed units.
//! No UI imports here: the window, the command line and the tests all build on this.

pub mod bulk_wiring;
pub mod calibration;
pub mod catalog;
pub mod command;
pub mod design;
pub mod device;
pub mod factory;
pub mod ids;
pub mod job_spec;
pub mod library_choice;
pub mod link;
pub mod nccl_buffer;
pub mod nccl_release;
pub mod port_edits;
pub mod ports;
pub mod position;
pub mod units;
pub mod validate;

pub use calibration::{CalibratedProtocol, Calibration, TechCalibration};
pub use catalog::{Catalog, Part, PartCategory, PartId, PartSpec};
pub use design::{Design, DeviceId, Group, GroupId, GroupKind, LinkId, Pos};
pub use device::{
    Device, DeviceKind, GpuNode, Host, HostRole, NicSlot, NvSwitchDomain, PcieVia, ScaleUp, Switch,
    SwitchFeatures, SwitchRole,
};
pub use job_spec::JobSpec;
pub use library_choice::LibraryChoice;
pub use link::{Endpoint, LengthClass, Link, LinkState, LinkTech, Transport};
pub use nccl_buffer::NcclBuffer;
pub use nccl_release::NcclRelease;
pub use ports::Port;
pub use units::{Bandwidth, Bytes, Usd, Watts};
