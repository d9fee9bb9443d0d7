//! Edits to a design. The UI never mutates a design directly: it emits `Command`s, and applying
//! one returns its inverse, which is what the undo stack holds. A drag is one `MoveDevices`.

use super::calibration::Calibration;
use super::design::{Design, DeviceId, Group, GroupId, LinkId, Pos};
use super::device::{Device, DeviceKind};
use super::job_spec::JobSpec;
use super::library_choice::LibraryChoice;
use super::link::Link;
use super::nccl_buffer::NcclBuffer;
use super::nccl_release::NcclRelease;
use std::collections::HashSet;

#[derive(Debug, Clone, PartialEq)]
pub enum Command {
    /// Adds devices, links and groups with the ids they carry (fresh ids from the design's
    /// `next_*_id`, or the ids of items being restored by an undo).
    Insert {
        devices: Vec<Device>,
        links: Vec<Link>,
        groups: Vec<Group>,
    },
    /// Removes devices (and every link touching them), links and groups.
    Remove {
        devices: Vec<DeviceId>,
        links: Vec<LinkId>,
        groups: Vec<GroupId>,
    },
    /// Sets absolute positions.
    MoveDevices { moves: Vec<(DeviceId, Pos)> },
    /// Replaces a device's properties (its id stays).
    UpdateDevice(Box<Device>),
    /// Replaces a link's properties (its id stays).
    UpdateLink(Box<Link>),
    /// Replaces name and notes.
    SetMeta { name: String, notes: String },
    /// Replaces the whole design (a template run, a what-if applied to everything).
    ReplaceDesign(Box<Design>),
    /// Sets the fitted calibration, or clears it with None.
    SetCalibration(Option<Box<Calibration>>),
    /// Turns in-network reduction (SHARP, NCCL's CollNet) on or off for the design.
    SetSharpEnabled(bool),
    /// Chooses the collective library the design's jobs run.
    SetLibrary(LibraryChoice),
    /// Sets the NCCL release the design's jobs run; None runs the modelled one.
    SetNcclRelease(Option<NcclRelease>),
    /// Sets NCCL_BUFFSIZE for the design's jobs; None runs NCCL's default.
    SetNcclBuffer(Option<NcclBuffer>),
    /// Sets the job the design is for, or clears it with None.
    SetJob(Option<Box<JobSpec>>),
    /// Several commands as one undo step.
    Batch(Vec<Command>),
    /// A command under the name undo and the status bar show ("fail links"), where its own
    /// kind would only say "edit"; its inverse keeps the name.
    Named {
        label: &'static str,
        command: Box<Command>,
    },
}

#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub enum CommandError {
    #[error("no device {0}")]
    NoDevice(DeviceId),
    #[error("no link {0}")]
    NoLink(LinkId),
    #[error("id {0} is already taken")]
    DeviceIdTaken(DeviceId),
    #[error("id {0} is already taken")]
    LinkIdTaken(LinkId),
    #[error("a link cannot join {0} to itself")]
    SelfLoop(DeviceId),
    #[error("link {link} ends at {device}, which does not exist")]
    DanglingLink { link: LinkId, device: DeviceId },
}

impl Command {
    /// A short label for menus and the status bar ("Undo move").
    pub fn label(&self) -> &'static str {
        match self {
            Command::Insert { .. } => "add",
            Command::Remove { .. } => "delete",
            Command::MoveDevices { .. } => "move",
            Command::UpdateDevice(_) => "edit device",
            Command::UpdateLink(_) => "edit link",
            Command::SetMeta { .. } => "rename",
            Command::ReplaceDesign(_) => "replace design",
            Command::SetCalibration(_) => "calibrate",
            Command::SetSharpEnabled(_) => "in-network reduction",
            Command::SetLibrary(_) => "collective library",
            Command::SetNcclRelease(_) => "NCCL release",
            Command::SetNcclBuffer(_) => "NCCL buffer",
            Command::SetJob(_) => "workload",
            Command::Batch(_) => "edit",
            Command::Named { label, .. } => label,
        }
    }

    /// Applies the command and returns its inverse. On error the design is unchanged.
    pub fn apply(self, design: &mut Design) -> Result<Command, CommandError> {
        self.check(design)?;
        Ok(self.apply_checked(design))
    }

    /// Validates against the design without changing it.
    fn check(&self, design: &Design) -> Result<(), CommandError> {
        match self {
            Command::Insert { devices, links, .. } => {
                let mut new_ids = HashSet::new();
                for d in devices {
                    if design.device(d.id).is_some() || !new_ids.insert(d.id) {
                        return Err(CommandError::DeviceIdTaken(d.id));
                    }
                }
                let mut new_links = HashSet::new();
                for l in links {
                    if design.link(l.id).is_some() || !new_links.insert(l.id) {
                        return Err(CommandError::LinkIdTaken(l.id));
                    }
                    if l.a.device == l.b.device {
                        return Err(CommandError::SelfLoop(l.a.device));
                    }
                    for end in [l.a.device, l.b.device] {
                        if design.device(end).is_none() && !new_ids.contains(&end) {
                            return Err(CommandError::DanglingLink {
                                link: l.id,
                                device: end,
                            });
                        }
                    }
                }
                Ok(())
            }
            Command::Remove { devices, links, .. } => {
                for &d in devices {
                    design.device(d).ok_or(CommandError::NoDevice(d))?;
                }
                for &l in links {
                    design.link(l).ok_or(CommandError::NoLink(l))?;
                }
                Ok(())
            }
            Command::MoveDevices { moves } => {
                for (d, _) in moves {
                    design.device(*d).ok_or(CommandError::NoDevice(*d))?;
                }
                Ok(())
            }
            Command::UpdateDevice(d) => design
                .device(d.id)
                .map(|_| ())
                .ok_or(CommandError::NoDevice(d.id)),
            Command::UpdateLink(l) => {
                design.link(l.id).ok_or(CommandError::NoLink(l.id))?;
                if l.a.device == l.b.device {
                    return Err(CommandError::SelfLoop(l.a.device));
                }
                for end in [l.a.device, l.b.device] {
                    if design.device(end).is_none() {
                        return Err(CommandError::DanglingLink {
                            link: l.id,
                            device: end,
                        });
                    }
                }
                Ok(())
            }
            Command::SetMeta { .. }
            | Command::ReplaceDesign(_)
            | Command::SetCalibration(_)
            | Command::SetSharpEnabled(_)
            | Command::SetLibrary(_)
            | Command::SetNcclRelease(_)
            | Command::SetNcclBuffer(_)
            | Command::SetJob(_) => Ok(()),
            Command::Named { command, .. } => command.check(design),
            Command::Batch(commands) => {
                // Later commands may depend on earlier ones: check on a scratch copy only
                // when there is more than one, to keep the common case cheap.
                if commands.len() <= 1 {
                    return commands.iter().try_for_each(|c| c.check(design));
                }
                let mut scratch = design.clone();
                for c in commands {
                    c.check(&scratch)?;
                    c.clone().apply_checked(&mut scratch);
                }
                Ok(())
            }
        }
    }

    fn apply_checked(self, design: &mut Design) -> Command {
        match self {
            Command::Insert {
                devices,
                links,
                groups,
            } => {
                let mut added_groups = Vec::new();
                for g in groups {
                    if design.group(g.id).is_none() {
                        added_groups.push(g.id);
                        design.groups.push(g);
                    }
                }
                let inverse = Command::Remove {
                    devices: devices.iter().map(|d| d.id).collect(),
                    links: links.iter().map(|l| l.id).collect(),
                    groups: added_groups,
                };
                // Bulk inserts (paste, template) append and sort once instead of n inserts.
                design.devices.extend(devices);
                design.devices.sort_by_key(|d| d.id);
                design.links.extend(links);
                design.links.sort_by_key(|l| l.id);
                inverse
            }
            Command::Remove {
                devices,
                links,
                groups,
            } => {
                let mut removed_groups = Vec::new();
                design.groups.retain(|g| {
                    if groups.contains(&g.id) {
                        removed_groups.push(g.clone());
                        false
                    } else {
                        true
                    }
                });
                let doomed_devices: HashSet<DeviceId> = devices.into_iter().collect();
                let mut doomed_links: HashSet<LinkId> = links.into_iter().collect();
                for l in &design.links {
                    if doomed_devices.contains(&l.a.device) || doomed_devices.contains(&l.b.device)
                    {
                        doomed_links.insert(l.id);
                    }
                }
                let mut removed_devices = Vec::new();
                design.devices.retain(|d| {
                    if doomed_devices.contains(&d.id) {
                        removed_devices.push(d.clone());
                        false
                    } else {
                        true
                    }
                });
                let mut removed_links = Vec::new();
                design.links.retain(|l| {
                    if doomed_links.contains(&l.id) {
                        removed_links.push(l.clone());
                        false
                    } else {
                        true
                    }
                });
                // Nodes of a removed NVSwitch domain stay, but no longer point at it.
                let mut detached = Vec::new();
                for d in &mut design.devices {
                    let orphaned = matches!(&d.kind, DeviceKind::GpuNode(n)
                        if n.domain.is_some_and(|domain| doomed_devices.contains(&domain)));
                    if orphaned {
                        detached.push(Command::UpdateDevice(Box::new(d.clone())));
                        if let DeviceKind::GpuNode(n) = &mut d.kind {
                            n.domain = None;
                        }
                    }
                }
                let insert = Command::Insert {
                    devices: removed_devices,
                    links: removed_links,
                    groups: removed_groups,
                };
                if detached.is_empty() {
                    insert
                } else {
                    detached.insert(0, insert);
                    Command::Batch(detached)
                }
            }
            Command::MoveDevices { moves } => {
                let mut old = Vec::with_capacity(moves.len());
                for (id, pos) in moves {
                    if let Some(d) = design.device_mut(id) {
                        old.push((id, d.pos));
                        d.pos = pos;
                    }
                }
                Command::MoveDevices { moves: old }
            }
            Command::UpdateDevice(device) => {
                let old = design
                    .device_mut(device.id)
                    .map(|d| std::mem::replace(d, *device.clone()));
                match old {
                    Some(old) => Command::UpdateDevice(Box::new(old)),
                    None => Command::Batch(Vec::new()),
                }
            }
            Command::UpdateLink(link) => {
                let old = design
                    .link_mut(link.id)
                    .map(|l| std::mem::replace(l, *link.clone()));
                match old {
                    Some(old) => Command::UpdateLink(Box::new(old)),
                    None => Command::Batch(Vec::new()),
                }
            }
            Command::SetMeta { name, notes } => {
                let old_name = std::mem::replace(&mut design.name, name);
                let old_notes = std::mem::replace(&mut design.notes, notes);
                Command::SetMeta {
                    name: old_name,
                    notes: old_notes,
                }
            }
            Command::ReplaceDesign(new) => {
                let old = std::mem::replace(design, *new);
                Command::ReplaceDesign(Box::new(old))
            }
            Command::SetSharpEnabled(on) => {
                let was = std::mem::replace(&mut design.sharp_enabled, on);
                Command::SetSharpEnabled(was)
            }
            Command::SetLibrary(choice) => {
                let was = std::mem::replace(&mut design.library, choice);
                Command::SetLibrary(was)
            }
            Command::SetNcclRelease(release) => {
                let was = std::mem::replace(&mut design.nccl_release, release);
                Command::SetNcclRelease(was)
            }
            Command::SetNcclBuffer(buffer) => {
                let was = std::mem::replace(&mut design.nccl_buffer, buffer);
                Command::SetNcclBuffer(was)
            }
            Command::SetJob(job) => {
                let was = std::mem::replace(&mut design.job, job.map(|j| *j));
                Command::SetJob(was.map(Box::new))
            }
            Command::SetCalibration(new) => {
                let old = std::mem::replace(&mut design.calibration, new.map(|c| *c));
                Command::SetCalibration(old.map(Box::new))
            }
            Command::Batch(commands) => {
                let mut inverses: Vec<Command> = commands
                    .into_iter()
                    .map(|c| c.apply_checked(design))
                    .collect();
                inverses.reverse();
                Command::Batch(inverses)
            }
            Command::Named { label, command } => Command::Named {
                label,
                command: Box::new(command.apply_checked(design)),
            },
        }
    }
}

/// The undo and redo stacks of one open design, and a revision number that changes with
/// every edit (the analysis worker keys its results on it).
#[derive(Debug, Clone, Default)]
pub struct History {
    undo: Vec<(Command, &'static str)>,
    redo: Vec<(Command, &'static str)>,
    revision: u64,
}

impl History {
    /// Applies a command as one undo step.
    pub fn apply(&mut self, design: &mut Design, command: Command) -> Result<(), CommandError> {
        let label = command.label();
        let inverse = command.apply(design)?;
        self.undo.push((inverse, label));
        self.redo.clear();
        self.revision += 1;
        Ok(())
    }

    /// Undoes the last step; returns its label, or None when there is nothing to undo.
    pub fn undo(&mut self, design: &mut Design) -> Option<&'static str> {
        let (command, label) = self.undo.pop()?;
        match command.apply(design) {
            Ok(inverse) => {
                self.redo.push((inverse, label));
                self.revision += 1;
                Some(label)
            }
            // An inverse always applies to the state it was made from; if not, drop history
            // rather than corrupt the design.
            Err(_) => {
                self.undo.clear();
                self.redo.clear();
                None
            }
        }
    }

    pub fn redo(&mut self, design: &mut Design) -> Option<&'static str> {
        let (command, label) = self.redo.pop()?;
        match command.apply(design) {
            Ok(inverse) => {
                self.undo.push((inverse, label));
                self.revision += 1;
                Some(label)
            }
            Err(_) => {
                self.undo.clear();
                self.redo.clear();
                None
            }
        }
    }

    pub fn can_undo(&self) -> bool {
        !self.undo.is_empty()
    }

    pub fn can_redo(&self) -> bool {
        !self.redo.is_empty()
    }

    pub fn undo_label(&self) -> Option<&'static str> {
        self.undo.last().map(|(_, l)| *l)
    }

    pub fn redo_label(&self) -> Option<&'static str> {
        self.redo.last().map(|(_, l)| *l)
    }

    pub fn revision(&self) -> u64 {
        self.revision
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::catalog::PartId;
    use crate::model::device::{Switch, SwitchFeatures, SwitchRole};
    use crate::model::link::{Endpoint, LinkTech};
    use crate::model::ports::Port;
    use crate::model::units::Bandwidth;

    fn switch(id: u32, x: f32) -> Device {
        Device {
            id: DeviceId(id),
            name: format!("sw{id}"),
            pos: Pos::new(x, 0.0),
            group: None,
            kind: DeviceKind::Switch(Switch {
                model: PartId::new("qm9700"),
                role: SwitchRole::Leaf,
                breakout: 1,
                rail: None,
                features: SwitchFeatures::default(),
            }),
        }
    }

    fn link(id: u32, a: u32, b: u32) -> Link {
        let mut l = Link::new(
            Endpoint::new(DeviceId(a), Port::Nic(0)),
            Endpoint::new(DeviceId(b), Port::Switch(0)),
            LinkTech::InfiniBand,
            Bandwidth::from_gbit_s(400.0),
        );
        l.id = LinkId(id);
        l
    }

    fn two_switches() -> Design {
        let mut d = Design::new("t");
        d.insert_device(switch(0, 0.0));
        d.insert_device(switch(1, 100.0));
        d.insert_link(link(0, 0, 1));
        d
    }

    #[test]
    fn remove_device_takes_its_links_and_undo_restores_both() {
        let mut design = two_switches();
        let before = design.clone();
        let mut history = History::default();
        history
            .apply(
                &mut design,
                Command::Remove {
                    devices: vec![DeviceId(0)],
                    links: vec![],
                    groups: vec![],
                },
            )
            .unwrap();
        assert_eq!(design.devices.len(), 1);
        assert!(design.links.is_empty());
        assert_eq!(history.undo(&mut design), Some("delete"));
        assert_eq!(design, before);
        history.redo(&mut design);
        assert_eq!(design.devices.len(), 1);
        assert_eq!(history.revision(), 3);
    }

    #[test]
    fn a_drag_is_one_step() {
        let mut design = two_switches();
        let mut history = History::default();
        history
            .apply(
                &mut design,
                Command::MoveDevices {
                    moves: vec![
                        (DeviceId(0), Pos::new(50.0, 20.0)),
                        (DeviceId(1), Pos::new(150.0, 20.0)),
                    ],
                },
            )
            .unwrap();
        assert_eq!(
            design.device(DeviceId(1)).unwrap().pos,
            Pos::new(150.0, 20.0)
        );
        history.undo(&mut design);
        assert_eq!(design.device(DeviceId(0)).unwrap().pos, Pos::new(0.0, 0.0));
        assert_eq!(
            design.device(DeviceId(1)).unwrap().pos,
            Pos::new(100.0, 0.0)
        );
        assert!(!history.can_undo());
    }

    #[test]
    fn bad_commands_change_nothing() {
        let mut design = two_switches();
        let before = design.clone();
        let dangling = Command::Insert {
            devices: vec![],
            links: vec![link(5, 0, 9)],
            groups: vec![],
        };
        assert_eq!(
            dangling.apply(&mut design),
            Err(CommandError::DanglingLink {
                link: LinkId(5),
                device: DeviceId(9)
            })
        );
        let taken = Command::Insert {
            devices: vec![switch(1, 0.0)],
            links: vec![],
            groups: vec![],
        };
        assert!(taken.apply(&mut design).is_err());
        let batch = Command::Batch(vec![
            Command::MoveDevices {
                moves: vec![(DeviceId(0), Pos::new(9.0, 9.0))],
            },
            Command::Remove {
                devices: vec![DeviceId(42)],
                links: vec![],
                groups: vec![],
            },
        ]);
        assert!(batch.apply(&mut design).is_err());
        assert_eq!(design, before);
    }

    #[test]
    fn batch_inverse_runs_in_reverse_order() {
        let mut design = two_switches();
        let before = design.clone();
        let batch = Command::Batch(vec![
            Command::Insert {
                devices: vec![switch(2, 200.0)],
                links: vec![],
                groups: vec![],
            },
            Command::Insert {
                devices: vec![],
                links: vec![link(1, 1, 2)],
                groups: vec![],
            },
        ]);
        let inverse = batch.apply(&mut design).unwrap();
        assert_eq!(design.links.len(), 2);
        inverse.apply(&mut design).unwrap();
        assert_eq!(design, before);
    }

    #[test]
    fn a_named_step_undoes_and_redoes_under_its_name() {
        let mut design = two_switches();
        let before = design.clone();
        let mut history = History::default();
        let named = Command::Named {
            label: "fail links",
            command: Box::new(Command::Insert {
                devices: vec![switch(2, 200.0)],
                links: vec![],
                groups: vec![],
            }),
        };
        history.apply(&mut design, named).unwrap();
        assert_eq!(design.devices.len(), 3);
        assert_eq!(history.undo(&mut design), Some("fail links"));
        assert_eq!(design, before);
        assert_eq!(history.redo(&mut design), Some("fail links"));
        assert_eq!(design.devices.len(), 3);
        // A named step that cannot apply leaves the design as it was.
        let dangling = Command::Named {
            label: "fail links",
            command: Box::new(Command::Insert {
                devices: vec![],
                links: vec![link(9, 1, 42)],
                groups: vec![],
            }),
        };
        let now = design.clone();
        assert!(dangling.apply(&mut design).is_err());
        assert_eq!(design, now);
    }

    #[test]
    fn set_calibration_undoes_to_the_previous_one() {
        use crate::model::LinkTech;
        let mut design = two_switches();
        let mut first = Calibration::default();
        first.set(LinkTech::InfiniBand, Some(0.7), None);
        let mut second = Calibration::default();
        second.set(LinkTech::InfiniBand, Some(0.9), Some(2.0));
        Command::SetCalibration(Some(Box::new(first.clone())))
            .apply(&mut design)
            .unwrap();
        let undo = Command::SetCalibration(Some(Box::new(second.clone())))
            .apply(&mut design)
            .unwrap();
        assert_eq!(design.calibration.as_ref(), Some(&second));
        undo.apply(&mut design).unwrap();
        assert_eq!(design.calibration, Some(first));
        let undo_clear = Command::SetCalibration(None).apply(&mut design).unwrap();
        assert_eq!(design.calibration, None);
        undo_clear.apply(&mut design).unwrap();
        assert_eq!(
            design
                .calibration
                .and_then(|c| c.efficiency(LinkTech::InfiniBand)),
            Some(0.7)
        );
    }

    #[test]
    fn the_nccl_release_is_set_undone_and_saved_only_when_named() {
        use crate::model::NcclRelease;
        let mut design = two_switches();
        let plain = ron::ser::to_string(&design).unwrap();
        assert!(!plain.contains("nccl_release"), "{plain}");
        let release = NcclRelease::new(2, 21, 5);
        let undo = Command::SetNcclRelease(Some(release))
            .apply(&mut design)
            .unwrap();
        assert_eq!(undo.label(), "NCCL release");
        let text = ron::ser::to_string(&design).unwrap();
        assert!(text.contains(r#"nccl_release:Some("2.21.5")"#), "{text}");
        let back: Design = ron::from_str(&text).unwrap();
        assert_eq!(back.nccl_release, Some(release));
        undo.apply(&mut design).unwrap();
        assert_eq!(design.nccl_release, None);
    }

    #[test]
    fn the_nccl_buffer_is_set_undone_and_saved_only_when_named() {
        use crate::model::NcclBuffer;
        let mut design = two_switches();
        assert!(
            !ron::ser::to_string(&design)
                .unwrap()
                .contains("nccl_buffer")
        );
        let eight = NcclBuffer::new(8 << 20).unwrap();
        let undo = Command::SetNcclBuffer(Some(eight))
            .apply(&mut design)
            .unwrap();
        assert_eq!(undo.label(), "NCCL buffer");
        let text = ron::ser::to_string(&design).unwrap();
        assert!(text.contains("nccl_buffer:Some(8388608)"), "{text}");
        let back: Design = ron::from_str(&text).unwrap();
        assert_eq!(back.nccl_buffer, Some(eight));
        // A size NCCL cannot split into its steps does not load.
        let bad = text.replace("8388608", "1000");
        assert!(ron::from_str::<Design>(&bad).is_err());
        undo.apply(&mut design).unwrap();
        assert_eq!(design.nccl_buffer, None);
    }

    /// The job rides in the file: set, saved, read back, undone; a design without one writes
    /// nothing of it, so files from before load and save unchanged.
    #[test]
    fn the_job_is_set_undone_and_saved_only_when_there_is_one() {
        use crate::model::JobSpec;
        use crate::model::job_spec::Recompute;
        let mut design = two_switches();
        assert!(!ron::ser::to_string(&design).unwrap().contains("job"));
        let job = JobSpec {
            model: "llama-8b".into(),
            tp: 2,
            recompute: Some(Recompute::Full),
            ..JobSpec::default()
        };
        let undo = Command::SetJob(Some(Box::new(job.clone())))
            .apply(&mut design)
            .unwrap();
        assert_eq!(undo.label(), "workload");
        let text = ron::ser::to_string(&design).unwrap();
        let back: Design = ron::from_str(&text).unwrap();
        assert_eq!(back.job, Some(job));
        undo.apply(&mut design).unwrap();
        assert_eq!(design.job, None);
    }
}
